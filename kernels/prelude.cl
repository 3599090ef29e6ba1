/* prelude.cl — emitted once at the top of every generated model's OpenCL program.
 *
 * Each kernel family file (kernels/<family>.cl) is then included once per element type it is
 * used with, between "#define T <ctype>" / "#define TS <suffix>" and their #undef, so kernel
 * and helper names must go through KN(): KN(add) -> add_f32 when TS is f32.
 * Suffixes: f32 float, f64 double, f16 half, i8 char, u8 uchar, i16 short, u16 ushort,
 * i32 int, u32 uint, i64 long, u64 ulong, b (bool, stored as uchar 0/1).
 * Index convention: every tensor is dense, row-major (C order); sizes and strides are passed as
 * int kernel arguments (elements, not bytes) unless a family says otherwise.
 */
#define KN3(a, b) a##_##b
#define KN2(a, b) KN3(a, b)
#define KN(name) KN2(name, TS)
#ifndef O2C_MAX_RANK
#define O2C_MAX_RANK 6
#endif
/* Element-type ids: O2C_TID is the id of the current instance's T (from TS); O2C_T_FLOAT is true
 * for f32/f64/f16. Families use them to select per-type code with #if. */
#ifndef O2C_KA_TYPEIDS
#define O2C_KA_TYPEIDS
#define O2C_ID_f32 1
#define O2C_ID_f64 2
#define O2C_ID_f16 3
#define O2C_ID_i8 4
#define O2C_ID_u8 5
#define O2C_ID_i16 6
#define O2C_ID_u16 7
#define O2C_ID_i32 8
#define O2C_ID_u32 9
#define O2C_ID_i64 10
#define O2C_ID_u64 11
#define O2C_ID_b 12
#define O2C_TID KN2(O2C_ID, TS)
#define O2C_T_FLOAT (O2C_TID <= 3)
#endif
#ifndef O2C_KA_ERF
#define O2C_KA_ERF
/* erf(x) for float without calling erf() (very slow on PoCL): a rational approximation
 * (Eigen generic_fast_erf_float), max abs/rel error <= 4.5e-7 against C erf() (tests/kernels_a). */
static inline float ka_erf_f(float a)
{
    const float x = clamp(a, -4.0f, 4.0f);
    const float x2 = x * x;
    float p = -2.72614225801306e-10f;
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 + -2.10102402082508e-06f;
    p = p * x2 + -5.69250639462346e-05f;
    p = p * x2 + -7.34990630326855e-04f;
    p = p * x2 + -2.95459980854025e-03f;
    p = p * x2 + -1.60960333262415e-02f;
    p = p * x;
    float q = -1.45660718464996e-05f;
    q = q * x2 + -2.13374055278905e-04f;
    q = q * x2 + -1.68282697438203e-03f;
    q = q * x2 + -7.37332916720468e-03f;
    q = q * x2 + -1.42647390514189e-02f;
    return isnan(a) ? a : p / q;
}
#endif
#ifndef O2C_WEIGHT_STORAGE
#define O2C_WEIGHT_STORAGE
/* Weight storage (onnx2cl --weights-dtype, docs/kernel_variants.md "Weight layouts"): kernels
 * reading packed constant weights take a storage suffix WS, f32 (float) or f16 (IEEE half, read
 * with vload_half/vload_halfN: core OpenCL 1.2, no cl_khr_fp16 needed; arithmetic stays float).
 * O2C_WT(WS) is the element type of the weight pointer; O2C_WLOAD<N>(WS, i, p) returns the N
 * weights p[i*N .. i*N+N-1] as float / floatN (N = 1 reads p[i]). */
#define O2C_WT_f32 float
#define O2C_WT_f16 half
#define O2C_WT(WS) O2C_WT_##WS
#define O2C_WLOAD1_f32(i, p) ((p)[i])
#define O2C_WLOAD1_f16(i, p) vload_half(i, p)
#define O2C_WLOAD4_f32(i, p) vload4(i, p)
#define O2C_WLOAD4_f16(i, p) vload_half4(i, p)
#define O2C_WLOAD16_f32(i, p) vload16(i, p)
#define O2C_WLOAD16_f16(i, p) vload_half16(i, p)
#define O2C_WLOAD1(WS, i, p) O2C_WLOAD1_##WS(i, p)
#define O2C_WLOAD4(WS, i, p) O2C_WLOAD4_##WS(i, p)
#define O2C_WLOAD16(WS, i, p) O2C_WLOAD16_##WS(i, p)
#endif
