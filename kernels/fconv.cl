/* fconv.cl — o2c.Conv: direct convolution (as kernels/conv.cl) with a fused epilogue applied in
 * the store (see passes/fuse/conv_epilogue.c):
 *   y = (act(conv(x, w) + bias[oc]) + res[n*rn + oc*rc + p*rp]) / div
 *   act: 0 identity, 1 silu (v / (1 + exp(-v))), 2 relu; has_bias / has_res / has_div == 0 skip
 *   that step (the pointer is then not read). p = position in the output plane (od, oh, ow
 *   flattened); rn/rc/rp are the residual's element strides over (n, oc, p), 0 where it
 *   broadcasts (exact shape: OC*P, P, 1; SD's time embedding [N,OC,1,1]: OC, 1, 0).
 *
 * Layout: NC[D]HW dense row-major; 1-D and 2-D convolutions run as 3-D ones (unit leading dims).
 *   X [N, C, D, H, W]   Wt [OC, C/group, KD, KH, KW]   Y [N, OC, OD, OH, OW]
 * Output splits (o2c.Conv with several outputs, passes/fuse/sibling_conv.c): every kernel takes
 *   four output buffers Y, Y1, Y2, Y3 and channel offsets o1 <= o2 <= o3 <= OC; output channel
 *   oc belongs to split s = (oc >= o1) + (oc >= o2) + (oc >= o3), which is the dense tensor
 *   Y_s [N, o_{s+1} - o_s, OD, OH, OW] at channel oc - o_s (o_0 = 0, o_4 = OC). A single output
 *   passes o1 = o2 = o3 = OC (every channel in Y; Y1..Y3 are placeholders, never accessed).
 * fconv: one work-item per output element (gws[0] = N*OC*OD*OH*OW, ow fastest).
 * fconv_oc4: 4 consecutive output channels of one position per work-item (cout_g % 4 == 0;
 *   gws[0] = total / 4; work-item gid = (n*(OC/4) + cb)*P + p), each input load feeds 4 FMAs.
 * fconv_oc4w4: see below. fconv_v (register-tiled, repacked constant weights): see the section
 *   at the end; the fastest on CPUs (codegen/lower_fconv.c picks it where it applies).
 * Accumulation in float. Indices fit in int (the lowering checks numel < 2^31).
 */

#ifndef O2C_FCONV_SPLIT
#define O2C_FCONV_SPLIT
/* Split s of output channel oc (see the banner) and the element offset of (n, oc, p = 0) in
 * that split's tensor of P positions per channel. */
static inline int fc_split(int n, int oc, int P, int OC, int o1, int o2, int o3, int *off)
{
    const int s = (oc >= o1) + (oc >= o2) + (oc >= o3);
    const int lo = s == 0 ? 0 : s == 1 ? o1 : s == 2 ? o2 : o3;
    const int hi = s == 0 ? o1 : s == 1 ? o2 : s == 2 ? o3 : OC;
    *off = (n * (hi - lo) + (oc - lo)) * P;
    return s;
}
/* Output buffer of split s. */
#define FC_YSEL(s, Y, Y1, Y2, Y3) ((s) == 0 ? (Y) : (s) == 1 ? (Y1) : (s) == 2 ? (Y2) : (Y3))
#endif

/* The epilogue of one output value. */
static inline float KN(fc_epi)(float v, int act, int has_res, __global const T *Res, int ridx,
                               int has_div, float div)
{
    if (act == 1) v = v / (1.0f + exp(-v));
    else if (act == 2) v = fmax(v, 0.0f);
    if (has_res) v += (float)Res[ridx];
    if (has_div) v = v / div;
    return v;
}

__kernel void KN(fconv)(__global const T *X, __global const T *Wt, __global const T *Bias,
                        __global const T *Res, __global T *Y, __global T *Y1, __global T *Y2,
                        __global T *Y3, int C, int D, int H, int W, int OC, int o1, int o2,
                        int o3, int OD, int OH, int OW, int KD, int KH, int KW, int sd, int sh, int sw,
                        int pd, int ph, int pw, int dd, int dh, int dw, int cin_g, int cout_g,
                        int has_bias, int act, int has_res, int rn, int rc, int rp, int has_div,
                        float div, int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    const int ow = gid % OW;
    int t = gid / OW;
    const int oh = t % OH;
    t /= OH;
    const int od = t % OD;
    t /= OD;
    const int oc = t % OC;
    const int n = t / OC;
    const int g = oc / cout_g;
    float acc = has_bias ? (float)Bias[oc] : 0.0f;
    const int id0 = od * sd - pd, ih0 = oh * sh - ph, iw0 = ow * sw - pw;
    const int HW = H * W, KHW = KH * KW;
    for (int ci = 0; ci < cin_g; ci++) {
        const __global T *xc = X + (n * C + g * cin_g + ci) * D * HW;
        const __global T *wc = Wt + (oc * cin_g + ci) * KD * KHW;
        for (int kd = 0; kd < KD; kd++) {
            const int id = id0 + kd * dd;
            if (id < 0 || id >= D) continue;
            for (int kh = 0; kh < KH; kh++) {
                const int ih = ih0 + kh * dh;
                if (ih < 0 || ih >= H) continue;
                const __global T *xr = xc + id * HW + ih * W;
                const __global T *wr = wc + kd * KHW + kh * KW;
                for (int kw = 0; kw < KW; kw++) {
                    const int iw = iw0 + kw * dw;
                    if (iw >= 0 && iw < W) acc += (float)xr[iw] * (float)wr[kw];
                }
            }
        }
    }
    const int P = OD * OH * OW, p = gid % P;
    int yo;
    const int ys = fc_split(n, oc, P, OC, o1, o2, o3, &yo);
    FC_YSEL(ys, Y, Y1, Y2, Y3)[yo + p] =
        (T)KN(fc_epi)(acc, act, has_res, Res, n * rn + oc * rc + p * rp, has_div, div);
}

__kernel void KN(fconv_oc4)(__global const T *X, __global const T *Wt, __global const T *Bias,
                            __global const T *Res, __global T *Y, __global T *Y1,
                            __global T *Y2, __global T *Y3, int C, int D, int H, int W,
                            int OC, int o1, int o2, int o3, int OD, int OH, int OW, int KD, int KH, int KW, int sd,
                            int sh, int sw, int pd, int ph, int pw, int dd, int dh, int dw,
                            int cin_g, int cout_g, int has_bias, int act, int has_res, int rn,
                            int rc, int rp, int has_div, float div, int total4)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total4) return;
    const int ow = gid % OW;
    int t = gid / OW;
    const int oh = t % OH;
    t /= OH;
    const int od = t % OD;
    t /= OD;
    const int OC4 = OC / 4;
    const int oc0 = (t % OC4) * 4;
    const int n = t / OC4;
    const int g = oc0 / cout_g;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    if (has_bias) {
        a0 = (float)Bias[oc0];
        a1 = (float)Bias[oc0 + 1];
        a2 = (float)Bias[oc0 + 2];
        a3 = (float)Bias[oc0 + 3];
    }
    const int id0 = od * sd - pd, ih0 = oh * sh - ph, iw0 = ow * sw - pw;
    const int HW = H * W, KHW = KH * KW, KSZ = KD * KHW;
    const int wstride = cin_g * KSZ;
    for (int ci = 0; ci < cin_g; ci++) {
        const __global T *xc = X + (n * C + g * cin_g + ci) * D * HW;
        const __global T *wc = Wt + (oc0 * cin_g + ci) * KSZ;
        for (int kd = 0; kd < KD; kd++) {
            const int id = id0 + kd * dd;
            if (id < 0 || id >= D) continue;
            for (int kh = 0; kh < KH; kh++) {
                const int ih = ih0 + kh * dh;
                if (ih < 0 || ih >= H) continue;
                const __global T *xr = xc + id * HW + ih * W;
                const __global T *wr = wc + kd * KHW + kh * KW;
                for (int kw = 0; kw < KW; kw++) {
                    const int iw = iw0 + kw * dw;
                    if (iw < 0 || iw >= W) continue;
                    const float xv = (float)xr[iw];
                    a0 += xv * (float)wr[kw];
                    a1 += xv * (float)wr[wstride + kw];
                    a2 += xv * (float)wr[2 * wstride + kw];
                    a3 += xv * (float)wr[3 * wstride + kw];
                }
            }
        }
    }
    const int P = OD * OH * OW;
    const int p = gid % P;
    const int r = n * rn + oc0 * rc + p * rp;
    const float a[4] = {a0, a1, a2, a3};
    for (int j = 0; j < 4; j++) {
        int yo;
        const int ys = fc_split(n, oc0 + j, P, OC, o1, o2, o3, &yo);
        FC_YSEL(ys, Y, Y1, Y2, Y3)[yo + p] =
            (T)KN(fc_epi)(a[j], act, has_res, Res, r + j * rc, has_div, div);
    }
}

/* fconv_oc4w4: 4 consecutive output channels x 4 consecutive output columns per work-item
 * (cout_g % 4 == 0), float4 accumulators over the columns: each (ci, kd, kh, kw) step loads 4
 * input values and 4 weights for 16 multiply-adds (conv_oc4: 1 input, 4 weights, 4 FMAs).
 * Work-item gid = ((n*(OC/4) + cb)*OD*OH + (od*OH + oh))*OWB + owb, OWB = ceil(OW/4); columns
 * past OW (the last block) are computed from zero padding and not stored.
 * gws[0] = N*(OC/4)*OD*OH*OWB. */
__kernel void KN(fconv_oc4w4)(__global const T *X, __global const T *Wt, __global const T *Bias,
                              __global const T *Res, __global T *Y, __global T *Y1,
                              __global T *Y2, __global T *Y3, int C, int D, int H, int W,
                              int OC, int o1, int o2, int o3, int OD, int OH, int OW, int KD, int KH, int KW, int sd,
                              int sh, int sw, int pd, int ph, int pw, int dd, int dh, int dw,
                              int cin_g, int cout_g, int has_bias, int act, int has_res, int rn,
                              int rc, int rp, int has_div, float div, int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    const int OWB = (OW + 3) / 4;
    const int owb = gid % OWB;
    int t = gid / OWB;
    const int oh = t % OH;
    t /= OH;
    const int od = t % OD;
    t /= OD;
    const int OC4 = OC / 4;
    const int oc0 = (t % OC4) * 4;
    const int n = t / OC4;
    const int g = oc0 / cout_g;
    const int ow0 = owb * 4;
    float4 a0 = (float4)(0.0f), a1 = (float4)(0.0f), a2 = (float4)(0.0f), a3 = (float4)(0.0f);
    if (has_bias) {
        a0 = (float4)((float)Bias[oc0]);
        a1 = (float4)((float)Bias[oc0 + 1]);
        a2 = (float4)((float)Bias[oc0 + 2]);
        a3 = (float4)((float)Bias[oc0 + 3]);
    }
    const int id0 = od * sd - pd, ih0 = oh * sh - ph, iw0 = ow0 * sw - pw;
    const int HW = H * W, KHW = KH * KW, KSZ = KD * KHW;
    const int wstride = cin_g * KSZ;
    for (int ci = 0; ci < cin_g; ci++) {
        const __global T *xc = X + (n * C + g * cin_g + ci) * D * HW;
        const __global T *wc = Wt + (oc0 * cin_g + ci) * KSZ;
        for (int kd = 0; kd < KD; kd++) {
            const int id = id0 + kd * dd;
            if (id < 0 || id >= D) continue;
            for (int kh = 0; kh < KH; kh++) {
                const int ih = ih0 + kh * dh;
                if (ih < 0 || ih >= H) continue;
                const __global T *xr = xc + id * HW + ih * W;
                const __global T *wr = wc + kd * KHW + kh * KW;
                for (int kw = 0; kw < KW; kw++) {
                    const int c0 = iw0 + kw * dw;
                    const int c1 = c0 + sw, c2 = c0 + 2 * sw, c3 = c0 + 3 * sw;
                    const float4 xv = (float4)(c0 >= 0 && c0 < W ? (float)xr[c0] : 0.0f,
                                               c1 >= 0 && c1 < W ? (float)xr[c1] : 0.0f,
                                               c2 >= 0 && c2 < W ? (float)xr[c2] : 0.0f,
                                               c3 >= 0 && c3 < W ? (float)xr[c3] : 0.0f);
                    a0 += xv * (float)wr[kw];
                    a1 += xv * (float)wr[wstride + kw];
                    a2 += xv * (float)wr[2 * wstride + kw];
                    a3 += xv * (float)wr[3 * wstride + kw];
                }
            }
        }
    }
    const int P = OD * OH * OW;
    const int pbase = (od * OH + oh) * OW + ow0;
    float acc[4][4];
    vstore4(a0, 0, acc[0]);
    vstore4(a1, 0, acc[1]);
    vstore4(a2, 0, acc[2]);
    vstore4(a3, 0, acc[3]);
    for (int j = 0; j < 4; j++) {
        const int oc = oc0 + j;
        int yo;
        const int ys = fc_split(n, oc, P, OC, o1, o2, o3, &yo);
        __global T *y = FC_YSEL(ys, Y, Y1, Y2, Y3) + yo + pbase;
        const int r = n * rn + oc * rc + pbase * rp;
        for (int i = 0; i < 4 && ow0 + i < OW; i++)
            y[i] = (T)KN(fc_epi)(acc[j][i], act, has_res, Res, r + i * rp, has_div, div);
    }
}

/* ---- fconv_v: register-tiled direct convolution for CPUs (PoCL) -----------------------------
 * One work-item computes OCB output channels x NV*16 consecutive output columns of one output
 * row, in NV*OCB float16 accumulators: each (ci, kh, kw) tap loads NV float16 input vectors and
 * OCB weights (broadcast) for NV*OCB vector multiply-adds; loops kh, ci, kw (outer to inner).
 *   Xt: the input re-laid-out per column tile (codegen/lower_fconv.c, fconv_tile):
 *       [N][H][OWT][Ctot][XT], one run of XT = SW*XTP floats per (row, tile, channel) holding
 *       the input columns the tile reads (ow0*SW - pw + c for c < (16*NV-1)*SW + (KW-1)*DW + 1,
 *       zeros outside the row) split by phase: column c at (c % SW)*XTP + c / SW, so every
 *       tap's 16 strided columns are one contiguous float16 load. A work-item streams through
 *       contiguous memory (one run of cin*XT floats per kernel row kh), and the work-item of
 *       the next output row reuses KH-1 of its KH runs from cache.
 *   Wk: weights repacked at compile time to panels [OCtot/SPB][KH][cin_g][KW][SPB] (zero-padded
 *       where OC is not a multiple of SPB; then group == 1), SPB = 8 for OCB 16 (one work-item
 *       reads two consecutive panels: the 8-channel form the weights file stores serves the
 *       16-channel kernels without a rearrangement at load), else SPB = OCB.
 *       Stored as float (WS = f32) or IEEE half (WS = f16, onnx2cl --weights-dtype f16: read with
 *       vload_half, accumulated in float like the f32 form).
 * Rows (H) are not padded: taps outside [0, H) are skipped.
 * The im2col form (fconv_im2col) runs the 1x1 specialization on one row of the flattened
 * output plane, with the KH*KW taps as extra input channels.
 * KH, KW, SW, DW, OCB, NV, WS are compile-time constants of each specialization (FCONV_V_DEFINE);
 * OCB in {4, 8, 12, 16}, NV in {1, 2}. The accumulators are named variables (FV_DECL): PoCL
 * does not unroll constant-trip loops over private arrays, which then live on the stack (7x
 * slower).
 * Launch: gws = {OH, OWT, N*OCBLK} (OWT = ceil(OW / (16*NV)), OCBLK = ceil(OC / OCB)),
 * lws = {1, 1, 1} (each work-item is a large explicitly vectorized tile). */
#ifndef O2C_FCONV_V
#define O2C_FCONV_V

/* The 16 accumulators of one column vector (OCB <= 16 used; the rest are dead code). */
#define FV_DECL(a) float16 a##0 = 0.0f, a##1 = 0.0f, a##2 = 0.0f, a##3 = 0.0f, a##4 = 0.0f,       \
    a##5 = 0.0f, a##6 = 0.0f, a##7 = 0.0f, a##8 = 0.0f, a##9 = 0.0f, a##10 = 0.0f, a##11 = 0.0f,  \
    a##12 = 0.0f, a##13 = 0.0f, a##14 = 0.0f, a##15 = 0.0f
/* acc_j += xv * w[j] for j < OCB (OCB a multiple of 4), weight j at FV_WI(j): in the panel
 * at w for j < SPB, in the next panel (fv_pst elements on, a variable of the caller) for the
 * rest (OCB 16, SPB 8). The weights are stored as WS: f32: scalar loads; f16: the OCB halves
 * are read at once (vload_half4/8: scalar vload_half per weight made the VAE decoder 3x slower
 * on PoCL) and taken lane by lane. */
#define FV_WI(j) ((j) < SPB ? (j) : fv_pst + (j) - SPB)
#define FV_WPRE_f32(w, OCB) (void)0
#define FV_W_f32(w, j, s) ((w)[FV_WI(j)])
#define FV_WPRE_f16(w, OCB)                                                                     \
    const float16 fv_wv =                                                                       \
        (OCB) > 12  ? (float16)(vload_half8(0, w), vload_half8(0, (w) + fv_pst))                \
        : (OCB) > 8 ? (float16)(vload_half8(0, w), vload_half4(2, w), (float4)(0.0f))           \
        : (OCB) > 4 ? (float16)(vload_half8(0, w), (float8)(0.0f))                              \
                    : (float16)(vload_half4(0, w), (float4)(0.0f), (float8)(0.0f))
#define FV_W_f16(w, j, s) (fv_wv.s)
#define FV_FMA(a, xv, w, OCB, WS)                                                               \
    do {                                                                                        \
        FV_WPRE_##WS(w, OCB);                                                                   \
        a##0 = fma((xv), (float16)(FV_W_##WS(w, 0, s0)), a##0);                                 \
        a##1 = fma((xv), (float16)(FV_W_##WS(w, 1, s1)), a##1);                                 \
        a##2 = fma((xv), (float16)(FV_W_##WS(w, 2, s2)), a##2);                                 \
        a##3 = fma((xv), (float16)(FV_W_##WS(w, 3, s3)), a##3);                                 \
        if ((OCB) > 4) {                                                                        \
            a##4 = fma((xv), (float16)(FV_W_##WS(w, 4, s4)), a##4);                             \
            a##5 = fma((xv), (float16)(FV_W_##WS(w, 5, s5)), a##5);                             \
            a##6 = fma((xv), (float16)(FV_W_##WS(w, 6, s6)), a##6);                             \
            a##7 = fma((xv), (float16)(FV_W_##WS(w, 7, s7)), a##7);                             \
        }                                                                                       \
        if ((OCB) > 8) {                                                                        \
            a##8 = fma((xv), (float16)(FV_W_##WS(w, 8, s8)), a##8);                             \
            a##9 = fma((xv), (float16)(FV_W_##WS(w, 9, s9)), a##9);                             \
            a##10 = fma((xv), (float16)(FV_W_##WS(w, 10, sa)), a##10);                          \
            a##11 = fma((xv), (float16)(FV_W_##WS(w, 11, sb)), a##11);                          \
        }                                                                                       \
        if ((OCB) > 12) {                                                                       \
            a##12 = fma((xv), (float16)(FV_W_##WS(w, 12, sc)), a##12);                          \
            a##13 = fma((xv), (float16)(FV_W_##WS(w, 13, sd)), a##13);                          \
            a##14 = fma((xv), (float16)(FV_W_##WS(w, 14, se)), a##14);                          \
            a##15 = fma((xv), (float16)(FV_W_##WS(w, 15, sf)), a##15);                          \
        }                                                                                       \
    } while (0)
/* accumulator j of vector v (j, v compile-time after unrolling by the caller's macro) */
#define FV_STORE_ALL(F)                                                                          \
    F(0, a0, b0) F(1, a1, b1) F(2, a2, b2) F(3, a3, b3) F(4, a4, b4) F(5, a5, b5) F(6, a6, b6)    \
    F(7, a7, b7) F(8, a8, b8) F(9, a9, b9) F(10, a10, b10) F(11, a11, b11) F(12, a12, b12)        \
    F(13, a13, b13) F(14, a14, b14) F(15, a15, b15)

/* The epilogue and store of 16 columns c0.. of output channel oc (row y, residual base r). */
static inline void fconv_v_store(float16 a, __global float *restrict y,
                                 __global const float *restrict Res, int r, int c0, int OW,
                                 float bv, int act, int has_res, int rp, int has_div, float div)
{
    if (c0 >= OW) return;
    a += bv;
    if (act == 1) a = a / (1.0f + exp(-a));
    else if (act == 2) a = fmax(a, 0.0f);
    if (c0 + 16 <= OW) {
        if (has_res) a += rp ? vload16(0, Res + r + c0) : (float16)(Res[r]);
        if (has_div) a = a / div;
        vstore16(a, 0, y + c0);
        return;
    }
    float tmp[16];
    vstore16(a, 0, tmp);
    for (int i = 0; i < 16 && c0 + i < OW; i++) {
        float e = tmp[i];
        if (has_res) e += Res[r + (c0 + i) * rp];
        if (has_div) e = e / div;
        y[c0 + i] = e;
    }
}

/* The body of every fconv_v specialization, one function per weight storage WS (f32, or f16
 * read with vload_half: onnx2cl --weights-dtype f16). */
#define FV_ST(j, A, B)                                                                           \
    if ((j) < OCB && oc0 + (j) < OC) {                                                           \
        const int oc = oc0 + (j);                                                                \
        const float bv = has_bias ? Bias[oc] : 0.0f;                                             \
        int yo;                                                                                  \
        const int ys = fc_split(n, oc, P, OC, o1, o2, o3, &yo);                                  \
        __global float *y = FC_YSEL(ys, Y, Y1, Y2, Y3) + (size_t)yo + oh * OW;                   \
        const int r = n * rn + oc * rc + oh * OW * rp;                                           \
        fconv_v_store(A, y, Res, r, ow0, OW, bv, act, has_res, rp, has_div, div);                \
        if (NV > 1) fconv_v_store(B, y, Res, r, ow0 + 16, OW, bv, act, has_res, rp, has_div, div); \
    }
#define FCONV_V_BODY(WS)                                                                        \
static inline void fconv_v_body_##WS(__global const float *restrict Xt,                         \
                                __global const O2C_WT(WS) *restrict Wk,                         \
                                __global const float *restrict Bias,                            \
                                __global const float *restrict Res, __global float *restrict Y, \
                                __global float *Y1, __global float *Y2, __global float *Y3,     \
                                int cin, int Ctot, int H, int XT, int OH, int OW, int sh, int ph, \
                                int dh, int OC, int o1, int o2, int o3, int cout_g, int has_bias, int act, int has_res, \
                                int rn, int rc, int rp, int has_div, float div, const int KH,   \
                                const int KW, const int SW, const int DW, const int OCB,        \
                                const int NV)                                                   \
{                                                                                               \
    const int oh = (int)get_global_id(0), owt = (int)get_global_id(1);                          \
    const int OCBLK = (OC + OCB - 1) / OCB;                                                     \
    const int t = (int)get_global_id(2);                                                        \
    const int ob = t % OCBLK, n = t / OCBLK;                                                    \
    const int oc0 = ob * OCB;                                                                   \
    const int g = oc0 / cout_g;                                                                 \
    const int ow0 = owt * 16 * NV;                                                              \
    FV_DECL(a);                                                                                 \
    FV_DECL(b);                                                                                 \
    const int OWT = (OW + 16 * NV - 1) / (16 * NV);                                             \
    const int xplane = OWT * Ctot * XT; /* one input row ih of every tile and channel */        \
    const int XTP = XT / SW;              /* columns per phase */                               \
    __global const float *xb = Xt + (size_t)n * H * xplane + (owt * Ctot + g * cin) * XT;       \
    __global const O2C_WT(WS) *wb = Wk + (size_t)ob * KH * cin * KW * OCB;                      \
    const int SPB = OCB == 16 ? 8 : OCB;  /* channels per stored panel */                        \
    const int fv_pst = KH * cin * KW * SPB; /* elements from one panel to the next */            \
    const int ih0 = oh * sh - ph;                                                               \
    for (int kh = 0; kh < KH; kh++) {                                                           \
        const int ih = ih0 + kh * dh;                                                           \
        if (ih < 0 || ih >= H) continue;                                                        \
        __global const float *xr = xb + ih * xplane;                                            \
        __global const O2C_WT(WS) *wr = wb + kh * cin * KW * SPB;                               \
        for (int ci = 0; ci < cin; ci++, xr += XT, wr += KW * SPB) {                            \
            for (int kw = 0; kw < KW; kw++) {                                                   \
                /* column kw*DW + SW*i of the tile is in phase (kw*DW) % SW */                  \
                __global const float *xk = xr + (kw * DW) % SW * XTP + (kw * DW) / SW;          \
                const float16 x0 = vload16(0, xk);                                              \
                FV_FMA(a, x0, wr + kw * SPB, OCB, WS);                                          \
                if (NV > 1) {                                                                   \
                    const float16 x1 = vload16(0, xk + 16);                                     \
                    FV_FMA(b, x1, wr + kw * SPB, OCB, WS);                                      \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    const int P = OH * OW;                                                                      \
    FV_STORE_ALL(FV_ST)                                                                         \
}
FCONV_V_BODY(f32)
FCONV_V_BODY(f16)

/* One specialization: FCONV_V_DEFINE(fconv_v_k3x3_s1_d1_o8_v2, 3, 3, 1, 1, 8, 2, f32). */
#define FCONV_V_DEFINE(NAME, KH, KW, SW, DW, OCB, NV, WS)                                        \
    __kernel __attribute__((reqd_work_group_size(1, 1, 1))) void NAME(                            \
        __global const float *restrict Xt, __global const O2C_WT(WS) *restrict Wk,              \
        __global const float *restrict Bias, __global const float *restrict Res,                \
        __global float *restrict Y, __global float *Y1, __global float *Y2, __global float *Y3,  \
        int cin, int Ctot, int H, int XT, int OH, int OW, int sh, int ph, int dh, int OC, int o1, \
        int o2, int o3, int cout_g, int has_bias, int act, int has_res, int rn, int rc, \
        int rp, int has_div, float div)                                                         \
    {                                                                                            \
        fconv_v_body_##WS(Xt, Wk, Bias, Res, Y, Y1, Y2, Y3, cin, Ctot, H, XT, OH, OW, sh, ph, dh, \
                          OC, o1, o2, o3, cout_g,                                               \
                     has_bias, act, has_res, rn, rc, rp, has_div, div, KH, KW, SW, DW, OCB, NV); \
    }

/* The tiled input of fconv_v: for i < XT0 (the columns a tile reads), source column
 * s = owt*TS + i - pw of X[n][c][ih] (0 outside [0, W)) goes to
 * Xt[n][ih][owt][c][(i % SW)*XTP + i / SW] (phase split for strides; XT = SW*XTP; slots with
 * i >= XT0 are zero). TS = input columns between tiles (16*NV*SW). One work-item copies one
 * run (float16 loads where a stride-1 run lies inside the row). gws = {Ctot, N*H*OWT}. */
__kernel void fconv_tile(__global const float *restrict X, __global float *restrict Xt, int Ctot,
                         int H, int W, int OWT, int XT0, int TS, int pw, int SW, int XTP)
{
    const int c = (int)get_global_id(0), r = (int)get_global_id(1);
    const int owt = r % OWT, nh = r / OWT, ih = nh % H, n = nh / H;
    const int s0 = owt * TS - pw;
    __global const float *src = X + (((size_t)n * Ctot + c) * H + ih) * W;
    __global float *dst = Xt + ((size_t)r * Ctot + c) * SW * XTP;
    if (SW == 1) {
        int i = 0;
        if (s0 >= 0 && s0 + XT0 <= W)
            for (; i + 16 <= XT0; i += 16) vstore16(vload16(0, src + s0 + i), 0, dst + i);
        for (; i < XTP; i++) {
            const int s = s0 + i;
            dst[i] = i < XT0 && s >= 0 && s < W ? src[s] : 0.0f;
        }
        return;
    }
    for (int ph = 0; ph < SW; ph++)
        for (int j = 0; j < XTP; j++) {
            const int i = j * SW + ph, s = s0 + i;
            dst[ph * XTP + j] = i < XT0 && s >= 0 && s < W ? src[s] : 0.0f;
        }
}

/* The im2col input of fconv_v: Xc[n][pt][k][i] = X[n][c][ih][iw] for position p = pt*TL + i of
 * the flattened output plane (oh = p / OW, ow = p % OW) and tap k = (c*KH + kh)*KW + kw (KORD 0,
 * grouped convs: a group's taps contiguous) or k = (kh*Ctot + c)*KW + kw (KORD 1: the order of
 * fconv_v's direct-form weights, so both forms read one stored weight layout), with
 * ih = oh*sh - ph + kh*dh, iw = ow*sw - pw + kw*dw; 0 outside the input or for p >= P.
 * gws = {Ctot, N*PT}; one work-item writes the KH*KW runs of TL floats of one channel. */
__kernel void fconv_im2col(__global const float *restrict X, __global float *restrict Xc, int Ctot,
                           int H, int W, int OW, int P, int PT, int TL, int KH, int KW, int sh,
                           int sw, int ph, int pw, int dh, int dw, int kord)
{
    const int c = (int)get_global_id(0), r = (int)get_global_id(1);
    const int KK = KH * KW;
    const int pt = r % PT, n = r / PT;
    __global const float *src = X + ((size_t)n * Ctot + c) * H * W;
    /* run (kh, kw) of this channel starts at dst + (kh * rs + kw) * TL */
    const int rs = kord ? Ctot * KW : KW;
    __global float *dst = Xc + (size_t)r * Ctot * KK * TL + (size_t)(kord ? c * KW : c * KK) * TL;
    int p = pt * TL, oh = p / OW, ow = p % OW;
    for (int i = 0; i < TL; i++, p++) {
        const int ih0 = oh * sh - ph, iw0 = ow * sw - pw;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = ih0 + kh * dh;
            const bool rok = p < P && ih >= 0 && ih < H;
            for (int kw = 0; kw < KW; kw++) {
                const int iw = iw0 + kw * dw;
                dst[(size_t)(kh * rs + kw) * TL + i] = rok && iw >= 0 && iw < W ? src[ih * W + iw] : 0.0f;
            }
        }
        if (++ow == OW) {
            ow = 0;
            oh++;
        }
    }
}

#endif
