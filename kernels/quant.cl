/* quant.cl — linear quantization (ops.def family "quant"): QuantizeLinear, DequantizeLinear
 * (ONNX 10..25: per-tensor, per-axis, blocked) and DynamicQuantizeLinear-11 (uint8).
 *
 * T is the quantized (integer) type: int8 uint8 int16 uint16 (and int32 for dequantize).
 * One work-item per element of x (dense, n < 2^31 elements; gws may be rounded up, i >= n exits).
 * Scale / zero-point index of element i (ref/ref_quant.h, struct ref_quant_geom): with
 * i = (o * d + c) * inner + r,  k = o * so + (c / block) * sa + r * si  (all strides 0:
 * per-tensor; sa = 1: per-axis; so = sd * inner, sa = inner, si = 1: blocked).
 *
 *   quantize_<xs>_<ss>(x, scale, zp, y, n, d, inner, block, so, sa, si, has_zp, hdiv)
 *       xs, ss in {f32, f16} (x and scale types, half read with vload_half):
 *       y = clamp(rint(x / scale[k]) + zp[k], QMIN, QMAX) in float (rint: half to even;
 *       NaN -> QMIN; has_zp = 0: zero point 0 and zp is not read); hdiv = 1: the division is
 *       float16's (operands and quotient rounded to float16: precision=float16, or x and scale
 *       both float16).
 *   dequantize_<ss>_<ys>(x, scale, zp, y, n, d, inner, block, so, sa, si, has_zp)
 *       ys in {f32, f16} (output type, half stored with vstore_half_rte):
 *       y = (float)(x - zp[k]) * scale[k].
 *   dql_minmax(x, part, n, chunk) / dql_params(part, nparts, scale, zp) /
 *   dql_quant(x, scale, zp, y, n)   (T = uchar only): DynamicQuantizeLinear in three launches:
 *       per-chunk min/max of x (NaN propagates) -> part[2p], part[2p+1]; one work-item folds
 *       the parts: lo = min(0, min x), hi = max(0, max x), scale = (hi == lo ? 1 : hi - lo) /
 *       255, zp = rint(clamp(-lo / scale, 0, 255)); then y = clamp(rint(x / scale) + zp, 0, 255).
 * All arithmetic is float32, exactly as ref/ref_quant.c (correctly rounded division on the
 * device, as the other families assume).
 */
#if O2C_TID == O2C_ID_u8
#define KA_QMIN 0.0f
#define KA_QMAX 255.0f
#elif O2C_TID == O2C_ID_i8
#define KA_QMIN -128.0f
#define KA_QMAX 127.0f
#elif O2C_TID == O2C_ID_u16
#define KA_QMIN 0.0f
#define KA_QMAX 65535.0f
#elif O2C_TID == O2C_ID_i16
#define KA_QMIN -32768.0f
#define KA_QMAX 32767.0f
#endif

/* v rounded to the nearest float16 (RNE) and back: float16 arithmetic emulated exactly (a float
 * quotient of two float16 values rounded to float16 is the float16 quotient, 24 >= 2*11+2). */
static inline float KN(qa_rh)(float v)
{
    ushort h;
    vstore_half_rte(v, 0, (__private half *)&h);
    return vload_half(0, (__private const half *)&h);
}

static inline int KN(qa_sidx)(int i, int d, int inner, int block, int so, int sa, int si)
{
    const int r = i % inner, t = i / inner;
    return (t / d) * so + ((t % d) / block) * sa + r * si;
}

#define KA_LDF(p, i) ((p)[(i)])
#define KA_LDH(p, i) vload_half((i), (p))
#define KA_STF(p, i, v) ((p)[(i)] = (v))
#define KA_STH(p, i, v) vstore_half_rte((v), (i), (p))

#ifdef KA_QMIN
#define KA_QUANT(xs, XT, LDX, ss, ST, LDS)                                                    \
    __kernel void KN(quantize_##xs##_##ss)(__global const XT *x, __global const ST *scale,    \
                                           __global const T *zp, __global T *y, int n, int d, \
                                           int inner, int block, int so, int sa, int si,       \
                                           int has_zp, int hdiv)                               \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const int k = KN(qa_sidx)(i, d, inner, block, so, sa, si);                            \
        const float a = LDX(x, i), b = LDS(scale, k);                                         \
        float v = rint(hdiv ? KN(qa_rh)(KN(qa_rh)(a) / KN(qa_rh)(b)) : a / b);                \
        if (has_zp) v += (float)zp[k];                                                        \
        v = isnan(v) ? KA_QMIN : fmin(fmax(v, KA_QMIN), KA_QMAX);                             \
        y[i] = (T)v;                                                                          \
    }
KA_QUANT(f32, float, KA_LDF, f32, float, KA_LDF)
KA_QUANT(f32, float, KA_LDF, f16, half, KA_LDH)
KA_QUANT(f16, half, KA_LDH, f32, float, KA_LDF)
KA_QUANT(f16, half, KA_LDH, f16, half, KA_LDH)
#undef KA_QUANT
#endif

#define KA_DEQUANT(ss, ST, LDS, ys, YT, STY)                                                  \
    __kernel void KN(dequantize_##ss##_##ys)(__global const T *x, __global const ST *scale,   \
                                             __global const T *zp, __global YT *y, int n,      \
                                             int d, int inner, int block, int so, int sa,      \
                                             int si, int has_zp)                               \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const int k = KN(qa_sidx)(i, d, inner, block, so, sa, si);                            \
        long v = (long)x[i];                                                                  \
        if (has_zp) v -= (long)zp[k];                                                         \
        STY(y, i, (float)v * LDS(scale, k));                                                  \
    }
KA_DEQUANT(f32, float, KA_LDF, f32, float, KA_STF)
KA_DEQUANT(f32, float, KA_LDF, f16, half, KA_STH)
KA_DEQUANT(f16, half, KA_LDH, f32, float, KA_STF)
KA_DEQUANT(f16, half, KA_LDH, f16, half, KA_STH)
#undef KA_DEQUANT

#if O2C_TID == O2C_ID_u8
/* NaN-propagating min / max (numpy np.min / np.max) */
#define KA_MINN(a, v) (((v) < (a) || isnan(v)) && !isnan(a) ? (v) : (a))
#define KA_MAXN(a, v) (((v) > (a) || isnan(v)) && !isnan(a) ? (v) : (a))
__kernel void KN(dql_minmax)(__global const float *x, __global float *part, int n, int chunk)
{
    const int p = (int)get_global_id(0);
    const int j0 = p * chunk;
    if (j0 >= n) return;
    const int j1 = min(n, j0 + chunk);
    float lo = x[j0], hi = x[j0];
    for (int j = j0 + 1; j < j1; j++) {
        const float v = x[j];
        lo = KA_MINN(lo, v);
        hi = KA_MAXN(hi, v);
    }
    part[2 * p] = lo;
    part[2 * p + 1] = hi;
}
__kernel void KN(dql_params)(__global const float *part, int nparts, __global float *scale,
                             __global uchar *zp)
{
    if (get_global_id(0) != 0) return;
    float lo = 0.0f, hi = 0.0f;
    for (int p = 0; p < nparts; p++) {
        lo = KA_MINN(lo, part[2 * p]);
        hi = KA_MAXN(hi, part[2 * p + 1]);
    }
    const float s = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    const float z = rint(fmin(fmax(0.0f - lo / s, 0.0f), 255.0f));
    scale[0] = s;
    zp[0] = (uchar)z;
}
__kernel void KN(dql_quant)(__global const float *x, __global const float *scale,
                            __global const uchar *zp, __global uchar *y, int n)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    const float v = rint(x[i] / scale[0]) + (float)zp[0];
    y[i] = (uchar)(isnan(v) ? 0.0f : fmin(fmax(v, 0.0f), 255.0f));
}
#undef KA_MINN
#undef KA_MAXN
#endif

#undef KA_LDF
#undef KA_LDH
#undef KA_STF
#undef KA_STH
#ifdef KA_QMIN
#undef KA_QMIN
#undef KA_QMAX
#endif
