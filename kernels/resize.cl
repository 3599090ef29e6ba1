/* resize.cl — Resize-10/11/13/18/19 and Upsample-9 (ops.def "resize"): nearest (all
 * nearest_mode values), linear and cubic (N-D, separable), every
 * coordinate_transformation_mode, tf_crop_and_resize extrapolation, cubic exclude_outside.
 * Instantiated per real element type (nearest: any type; linear/cubic: float types).
 *
 * Layout: x viewed as [B, i0, i1, i2, i3], y as [B, o0, o1, o2, o3] (the lowering merges leading
 * axes that are not resized into B and pads with size-1 axes). Axis k is "active" when bit k of
 * `active` is set (resized, or tf_crop_and_resize); inactive axes copy their coordinate.
 * Per active axis the source coordinate of output coordinate c is (ONNX Resize-19 text,
 * in float; ow = scale * in as a float, p0/p1 per mode):
 *   ctm 0 half_pixel            (c + 0.5) / scale - 0.5
 *   ctm 1 half_pixel_symmetric  p0 + (c + 0.5) / scale - 0.5      (p0 = offset from the host)
 *   ctm 2 pytorch_half_pixel    ow > 1 ? (c + 0.5) / scale - 0.5 : -0.5
 *   ctm 3 align_corners         ow == 1 ? 0 : c * (in - 1) / (ow - 1)
 *   ctm 4 asymmetric            c / scale
 *   ctm 5 tf_crop_and_resize    roi p0..p1: ow == 1 ? (p1 - p0) * (in - 1) / 2 : c * (p1 - p0) *
 *                               (in - 1) / (ow - 1), plus p0 * (in - 1); outside [0, in - 1]
 *                               the output element is `extrap`;
 *   ctm 6 tf_half_pixel_for_nn  (c + 0.5) / scale                  (Resize-11 only).
 * Taps (indices clamped into [0, in), i.e. edge padding as in the reference):
 *   nearest: one tap; integer x -> x, else by nm: 0 round_prefer_floor, 1 round_prefer_ceil,
 *            2 floor, 3 ceil;
 *   linear:  floor(x), floor(x)+1 with weights 1-r, r (r = x - floor(x));
 *   cubic:   floor(x)-1 .. floor(x)+2 with the Keys coefficients of cubic_a; exclude_outside:
 *            taps outside [0, in) get weight 0 and the rest is renormalized.
 * Kernels (one work-item per output element; i >= n exits):
 *   resize_nearest / resize_linear / resize_cubic(x, y, n, in0..in3, out0..out3,
 *     scale0..3, ow0..3, p00..p03, p10..p13, active, ctm, nm, extrap, cubic_a, excl)
 *   resize_aa(x, y, n, in, out, inner, scale, ow, p0, p1, ctm, mode, cubic_a, excl, extrap,
 *     start, ntaps, asc): antialias=1 (Resize-18) linear (mode 1) / cubic (mode 2), ONE axis
 *     of x viewed as [outer, in, inner] -> y [outer, out, inner] (the lowering runs one pass per
 *     resized axis). The filter is stretched by 1/asc (asc = min(scale, 1)): with r = x -
 *     floor(x) (r = 1 for an integral x) and b = x - r, taps b+start+k (k < ntaps; start =
 *     floor(-1/asc)+1 linear, floor(-2/asc)+1 cubic, ntaps = 2 - 2*start, from the host) weigh
 *     f((start + k - r) * asc), f = max(0, 1-|t|) or the Keys cubic, divided by the sum of the
 *     weights (exclude_outside: of the taps inside [0, in), the others weigh 0), as
 *     onnx/reference/ops/op_resize.py.
 * Element-type block: see unary.cl.
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

#ifndef O2C_KA_RESIZE_HELPERS
#define O2C_KA_RESIZE_HELPERS
/* Source coordinate of output coordinate c on one axis (see the banner); *out_of_range is set
 * for tf_crop_and_resize outside the input. */
static inline float ka_rs_coord(int ctm, int c, int in, float scale, float ow, float p0,
                                float p1, int *out_of_range)
{
    const float fc = (float)c;
    float x;
    switch (ctm) {
    case 0: x = (fc + 0.5f) / scale - 0.5f; break;
    case 1: x = p0 + (fc + 0.5f) / scale - 0.5f; break;
    case 2: x = ow == 1.0f ? -0.5f : (fc + 0.5f) / scale - 0.5f; break;
    case 3: x = ow == 1.0f ? 0.0f : fc * (float)(in - 1) / (ow - 1.0f); break;
    case 4: x = fc / scale; break;
    case 6: x = (fc + 0.5f) / scale; break;
    default:
        x = ow == 1.0f ? (p1 - p0) * (float)(in - 1) / 2.0f
                       : fc * (p1 - p0) * (float)(in - 1) / (ow - 1.0f);
        x += p0 * (float)(in - 1);
        if (x < 0.0f || x > (float)(in - 1)) *out_of_range = 1;
        break;
    }
    return x;
}
static inline int ka_rs_clampi(int v, int in) { return v < 0 ? 0 : (v >= in ? in - 1 : v); }
/* Keys cubic convolution weights for fractional position r (ONNX Resize reference). */
static inline void ka_rs_cubic(float r, float A, float *w)
{
    const float r1 = r + 1.0f, s = 1.0f - r, s1 = s + 1.0f;
    w[0] = ((A * r1 - 5.0f * A) * r1 + 8.0f * A) * r1 - 4.0f * A;
    w[1] = ((A + 2.0f) * r - (A + 3.0f)) * r * r + 1.0f;
    w[2] = ((A + 2.0f) * s - (A + 3.0f)) * s * s + 1.0f;
    w[3] = ((A * s1 - 5.0f * A) * s1 + 8.0f * A) * s1 - 4.0f * A;
}
/* Antialias filter value at (scaled) offset t: triangle (mode 1) or Keys cubic (mode 2). */
static inline float ka_rs_aa_filter(int mode, float t, float A)
{
    t = fabs(t);
    if (mode == 1) return t < 1.0f ? 1.0f - t : 0.0f;
    if (t <= 1.0f) return ((A + 2.0f) * t - (A + 3.0f)) * t * t + 1.0f;
    if (t < 2.0f) return ((A * t - 5.0f * A) * t + 8.0f * A) * t - 4.0f * A;
    return 0.0f;
}

/* Taps of one axis for output coordinate c; mode 0 nearest, 1 linear, 2 cubic. Returns the
 * tap count and fills idx/w. */
static inline int ka_rs_taps(int mode, int active, int ctm, int nm, int c, int in, float scale,
                             float ow, float p0, float p1, float cubic_a, int excl, int *idx,
                             float *w, int *oor)
{
    if (!active) {
        idx[0] = c;
        w[0] = 1.0f;
        return 1;
    }
    const float x = ka_rs_coord(ctm, c, in, scale, ow, p0, p1, oor);
    const float fl = floor(x);
    const int i0 = (int)fl;
    const float r = x - fl;
    if (mode == 0) {
        int t = i0;
        if (r != 0.0f) {
            if (nm == 0) t = r <= 0.5f ? i0 : i0 + 1;
            else if (nm == 1) t = r < 0.5f ? i0 : i0 + 1;
            else if (nm == 2) t = i0;
            else t = i0 + 1;
        }
        idx[0] = ka_rs_clampi(t, in);
        w[0] = 1.0f;
        return 1;
    }
    if (mode == 1) {
        idx[0] = ka_rs_clampi(i0, in);
        idx[1] = ka_rs_clampi(i0 + 1, in);
        w[0] = 1.0f - r;
        w[1] = r;
        return 2;
    }
    ka_rs_cubic(r, cubic_a, w);
    float sum = 0.0f;
    for (int t = 0; t < 4; t++) {
        const int j = i0 - 1 + t;
        if (excl && (j < 0 || j >= in)) w[t] = 0.0f;
        sum += w[t];
        idx[t] = ka_rs_clampi(j, in);
    }
    if (excl && sum != 0.0f)
        for (int t = 0; t < 4; t++) w[t] /= sum;
    return 4;
}
#endif

#define KA_RESIZE(name, MODE)                                                                 \
    __kernel void KN(name)(__global const T *x, __global T *y, int n, int in0, int in1,       \
                           int in2, int in3, int out0, int out1, int out2, int out3,          \
                           float sc0, float sc1, float sc2, float sc3, float ow0, float ow1,  \
                           float ow2, float ow3, float pa0, float pa1, float pa2, float pa3,  \
                           float pb0, float pb1, float pb2, float pb3, int active, int ctm,   \
                           int nm, float extrap, float cubic_a, int excl)                     \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const int ind[4] = {in0, in1, in2, in3};                                              \
        const int outd[4] = {out0, out1, out2, out3};                                         \
        const float sc[4] = {sc0, sc1, sc2, sc3};                                             \
        const float ow[4] = {ow0, ow1, ow2, ow3};                                             \
        const float pa[4] = {pa0, pa1, pa2, pa3};                                             \
        const float pb[4] = {pb0, pb1, pb2, pb3};                                             \
        int idx[4][4];                                                                        \
        float w[4][4];                                                                        \
        int nt[4];                                                                            \
        int r = i, oor = 0;                                                                   \
        for (int k = 3; k >= 0; --k) {                                                        \
            const int c = r % outd[k];                                                        \
            r /= outd[k];                                                                     \
            nt[k] = ka_rs_taps(MODE, (active >> k) & 1, ctm, nm, c, ind[k], sc[k], ow[k],     \
                               pa[k], pb[k], cubic_a, excl, idx[k], w[k], &oor);              \
        }                                                                                     \
        if (oor) {                                                                            \
            KA_ST(y, i, (KA_CT)extrap);                                                       \
            return;                                                                           \
        }                                                                                     \
        const int s3 = 1, s2 = in3, s1 = in2 * in3, s0 = in1 * in2 * in3;                     \
        const int base = r * in0 * s0;                                                        \
        KA_RESIZE_BODY                                                                        \
    }

#if O2C_T_FLOAT
#define KA_ACC float
#if O2C_TID == O2C_ID_f64
#undef KA_ACC
#define KA_ACC double
#endif
#define KA_RESIZE_BODY                                                                        \
    KA_ACC acc = 0;                                                                           \
    for (int t0 = 0; t0 < nt[0]; t0++)                                                        \
        for (int t1 = 0; t1 < nt[1]; t1++)                                                    \
            for (int t2 = 0; t2 < nt[2]; t2++) {                                              \
                const float w012 = w[0][t0] * w[1][t1] * w[2][t2];                            \
                const int o012 = base + idx[0][t0] * s0 + idx[1][t1] * s1 + idx[2][t2] * s2;  \
                for (int t3 = 0; t3 < nt[3]; t3++)                                            \
                    acc += (KA_ACC)(w012 * w[3][t3]) * (KA_ACC)KA_LD(x, o012 + idx[3][t3] * s3); \
            }                                                                                 \
    KA_ST(y, i, (KA_CT)acc);
KA_RESIZE(resize_linear, 1)
KA_RESIZE(resize_cubic, 2)
#undef KA_RESIZE_BODY

__kernel void KN(resize_aa)(__global const T *x, __global T *y, int n, int in, int out,
                            int inner, float scale, float ow, float p0, float p1, int ctm,
                            int mode, float cubic_a, int excl, float extrap, int start,
                            int ntaps, float asc)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    const int ii = i % inner, c = (i / inner) % out, b = i / (inner * out);
    int oor = 0;
    const float xo = ka_rs_coord(ctm, c, in, scale, ow, p0, p1, &oor);
    if (oor) {
        KA_ST(y, i, (KA_CT)extrap);
        return;
    }
    const float fl = floor(xo);
    const float r = xo == fl ? 1.0f : xo - fl;
    const int j0 = (int)fl - (xo == fl ? 1 : 0) + start;
    const int xb = b * in * inner + ii;
    KA_ACC acc = 0, wsum = 0;
    for (int k = 0; k < ntaps; k++) {
        const int j = j0 + k;
        if (excl && (j < 0 || j >= in)) continue;
        const float w = ka_rs_aa_filter(mode, ((float)(start + k) - r) * asc, cubic_a);
        wsum += (KA_ACC)w;
        acc += (KA_ACC)w * (KA_ACC)KA_LD(x, xb + ka_rs_clampi(j, in) * inner);
    }
    KA_ST(y, i, (KA_CT)(wsum != 0 ? acc / wsum : (KA_ACC)0));
}
#undef KA_ACC
#endif
#define KA_RESIZE_BODY                                                                        \
    KA_ST(y, i, KA_LD(x, base + idx[0][0] * s0 + idx[1][0] * s1 + idx[2][0] * s2 + idx[3][0] * s3));
KA_RESIZE(resize_nearest, 0)

/* resize_nn_up (cpu class; instantiated for the unsigned type of the element size: u8, u16,
 * u32, u64, a bit copy): nearest upsampling of the last two axes by integer factors, x viewed
 * as [rows, W] (rows = B*H), y as [rows*fh, W*fw]:
 *   y[r*fh + i, w*fw + j] = x[r, w]   (i < fh, j < fw)
 * which is what resize_nearest computes when every output coordinate's source index is c / f
 * (the lowering checks that on the host with the same float formulas, codegen/lower_resize.c).
 * One work-item per input row (gws[0] = rows rounded up to lws; items past the last row exit):
 * it reads the row once and writes its fh output rows; fw == 2 (the SD / VAE / TAESD 2x
 * upsample) with 4-element loads and 8-element stores, fw == 1 with 8-element copies, other
 * factors element by element. Rows need only element alignment (vloadn / vstoren). */
#if O2C_TID == O2C_ID_u8
#define RN_V4 uchar4
#define RN_V8 uchar8
#elif O2C_TID == O2C_ID_u16
#define RN_V4 ushort4
#define RN_V8 ushort8
#elif O2C_TID == O2C_ID_u32
#define RN_V4 uint4
#define RN_V8 uint8
#elif O2C_TID == O2C_ID_u64
#define RN_V4 ulong4
#define RN_V8 ulong8
#endif
#ifdef RN_V4
__kernel void KN(resize_nn_up)(__global const T *x, __global T *y, int rows, int W, int fh,
                               int fw)
{
    const int r = (int)get_global_id(0);
    if (r >= rows) return;
    const int OW = W * fw;
    const __global T *xr = x + r * W;
    __global T *yr = y + r * fh * OW;
    if (fw == 2) {
        const int w4 = W >> 2;
        for (int q = 0; q < w4; q++) {
            const RN_V4 v = vload4(q, xr);
            const RN_V8 o = (RN_V8)(v.x, v.x, v.y, v.y, v.z, v.z, v.w, v.w);
            for (int i = 0; i < fh; i++) vstore8(o, q, yr + i * OW);
        }
        for (int w = w4 * 4; w < W; w++)
            for (int i = 0; i < fh; i++) yr[i * OW + 2 * w] = yr[i * OW + 2 * w + 1] = xr[w];
    } else if (fw == 1) {
        const int w8 = W >> 3;
        for (int q = 0; q < w8; q++) {
            const RN_V8 v = vload8(q, xr);
            for (int i = 0; i < fh; i++) vstore8(v, q, yr + i * OW);
        }
        for (int w = w8 * 8; w < W; w++)
            for (int i = 0; i < fh; i++) yr[i * OW + w] = xr[w];
    } else {
        for (int w = 0; w < W; w++) {
            const T v = xr[w];
            for (int i = 0; i < fh; i++)
                for (int j = 0; j < fw; j++) yr[i * OW + w * fw + j] = v;
        }
    }
}
#undef RN_V4
#undef RN_V8
#endif
#undef KA_RESIZE_BODY
#undef KA_RESIZE
#undef KA_CT
#undef KA_LD
#undef KA_ST
