/* cast.cl — Cast-13 / CastLike-15 (ops.def "cast"): y[i] = (U)x[i], x of type T, dense, n elems.
 * Kernels cast_to_<u>(x, y, n), one per destination suffix u in
 *   f32 f16 (stored as half via vstore_half_rte: round to nearest even) f64 (only where the
 *   device has cl_khr_fp64) i8 u8 i16 u16 i32 u32 i64 u64 b;
 * full kernel name: cast_to_<u>_<T suffix>, e.g. cast_to_i64_f32 converts float -> long.
 * Semantics: float -> integer truncates toward zero into int64 (convert_long_sat: beyond int64
 * saturates, NaN -> 0), then wraps to the destination like numpy's astype (ONNX leaves out-of-
 * range values undefined); integer -> integer wraps (C conversion, as numpy);
 * -> bool is (x != 0) (NaN -> true); bool -> number is 0/1; f16 sources are read with
 * vload_half. Element-type block: see unary.cl. bfloat16 (a promoted model's boundary):
 * cast_bf16_to_f32_u16 (bits as ushort -> float, exact) and cast_to_bf16_f32 (round to nearest
 * even, NaN stays NaN).
 */
#if O2C_TID == O2C_ID_f64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if O2C_TID == O2C_ID_f16
#define KA_CT float
#define KA_LD(p, i) vload_half((i), (p))
#define KA_ST(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define KA_CT T
#define KA_LD(p, i) ((p)[(i)])
#define KA_ST(p, i, v) ((p)[(i)] = (T)(v))
#endif
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if O2C_T_FLOAT
/* truncate toward zero into a long (saturating, NaN -> 0), then wrap like numpy's astype */
#define KA_TOI(U, v) ((U)convert_long_sat(v))
#define KA_TOU64(v) ((v) < (KA_CT)0 ? (ulong)convert_long_sat(v) : convert_ulong_sat(v))
#else
#define KA_TOU64(v) ((ulong)(v))
#define KA_TOI(U, v) ((U)(v))
#endif
#define KA_CAST(sfx, U, EXPR)                                                     \
    __kernel void KN(cast_to_##sfx)(__global const T *x, __global U *y, int n)     \
    {                                                                             \
        const int i = (int)get_global_id(0);                                      \
        if (i >= n) return;                                                       \
        const KA_CT v = KA_LD(x, i);                                              \
        y[i] = EXPR;                                                              \
    }
KA_CAST(f32, float, (float)v)
#ifdef cl_khr_fp64
KA_CAST(f64, double, (double)v)
#endif
KA_CAST(i8, char, KA_TOI(char, v))
KA_CAST(u8, uchar, KA_TOI(uchar, v))
KA_CAST(i16, short, KA_TOI(short, v))
KA_CAST(u16, ushort, KA_TOI(ushort, v))
KA_CAST(i32, int, KA_TOI(int, v))
KA_CAST(u32, uint, KA_TOI(uint, v))
KA_CAST(i64, long, KA_TOI(long, v))
KA_CAST(u64, ulong, KA_TOU64(v))
KA_CAST(b, uchar, (uchar)(v != (KA_CT)0 ? 1 : 0))
__kernel void KN(cast_to_f16)(__global const T *x, __global half *y, int n)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    vstore_half_rte((float)KA_LD(x, i), i, y);
}
#if O2C_TID == O2C_ID_u16
/* bfloat16 (the high half of a float32, as ushort bits) -> float32: exact */
__kernel void KN(cast_bf16_to_f32)(__global const ushort *x, __global float *y, int n)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    y[i] = as_float((uint)x[i] << 16);
}
#endif
#if O2C_TID == O2C_ID_f32
/* float32 -> bfloat16 bits: round to nearest even (as ONNX Cast and ml_dtypes); NaN stays a quiet
 * NaN with its sign; overflow rounds to inf */
__kernel void KN(cast_to_bf16)(__global const float *x, __global ushort *y, int n)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    const uint u = as_uint(x[i]);
    y[i] = isnan(x[i]) ? (ushort)((u >> 16) | 0x40u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#endif
#undef KA_CAST
#undef KA_TOI
#undef KA_TOU64
#undef KA_CT
#undef KA_LD
#undef KA_ST
