/* fconv.cl — o2c.Conv: direct convolution (as kernels/conv.cl) with a fused epilogue applied in
 * the store (see passes/fuse_conv_epilogue.c):
 *   y = (act(conv(x, w) + bias[oc]) + res[n*rn + oc*rc + p*rp]) / div
 *   act: 0 identity, 1 silu (v / (1 + exp(-v))), 2 relu; has_bias / has_res / has_div == 0 skip
 *   that step (the pointer is then not read). p = position in the output plane (od, oh, ow
 *   flattened); rn/rc/rp are the residual's element strides over (n, oc, p), 0 where it
 *   broadcasts (exact shape: OC*P, P, 1; SD's time embedding [N,OC,1,1]: OC, 1, 0).
 *
 * Layout: NC[D]HW dense row-major; 1-D and 2-D convolutions run as 3-D ones (unit leading dims).
 *   X [N, C, D, H, W]   Wt [OC, C/group, KD, KH, KW]   Y [N, OC, OD, OH, OW]
 * fconv: one work-item per output element (gws[0] = N*OC*OD*OH*OW, ow fastest).
 * fconv_oc4: 4 consecutive output channels of one position per work-item (cout_g % 4 == 0;
 *   gws[0] = total / 4; work-item gid = (n*(OC/4) + cb)*P + p), each input load feeds 4 FMAs.
 * Accumulation in float. Indices fit in int (the lowering checks numel < 2^31).
 */

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
                        __global const T *Res, __global T *Y, int C, int D, int H, int W, int OC,
                        int OD, int OH, int OW, int KD, int KH, int KW, int sd, int sh, int sw,
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
    Y[gid] = (T)KN(fc_epi)(acc, act, has_res, Res, n * rn + oc * rc + p * rp, has_div, div);
}

__kernel void KN(fconv_oc4)(__global const T *X, __global const T *Wt, __global const T *Bias,
                            __global const T *Res, __global T *Y, int C, int D, int H, int W,
                            int OC, int OD, int OH, int OW, int KD, int KH, int KW, int sd,
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
    __global T *y = Y + (n * OC + oc0) * P + p;
    const int r = n * rn + oc0 * rc + p * rp;
    y[0] = (T)KN(fc_epi)(a0, act, has_res, Res, r, has_div, div);
    y[P] = (T)KN(fc_epi)(a1, act, has_res, Res, r + rc, has_div, div);
    y[2 * P] = (T)KN(fc_epi)(a2, act, has_res, Res, r + 2 * rc, has_div, div);
    y[3 * P] = (T)KN(fc_epi)(a3, act, has_res, Res, r + 3 * rc, has_div, div);
}

/* fconv_oc4w4: 4 consecutive output channels x 4 consecutive output columns per work-item
 * (cout_g % 4 == 0), float4 accumulators over the columns: each (ci, kd, kh, kw) step loads 4
 * input values and 4 weights for 16 multiply-adds (conv_oc4: 1 input, 4 weights, 4 FMAs).
 * Work-item gid = ((n*(OC/4) + cb)*OD*OH + (od*OH + oh))*OWB + owb, OWB = ceil(OW/4); columns
 * past OW (the last block) are computed from zero padding and not stored.
 * gws[0] = N*(OC/4)*OD*OH*OWB. */
__kernel void KN(fconv_oc4w4)(__global const T *X, __global const T *Wt, __global const T *Bias,
                              __global const T *Res, __global T *Y, int C, int D, int H, int W,
                              int OC, int OD, int OH, int OW, int KD, int KH, int KW, int sd,
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
        __global T *y = Y + (n * OC + oc) * P + pbase;
        const int r = n * rn + oc * rc + pbase * rp;
        for (int i = 0; i < 4 && ow0 + i < OW; i++)
            y[i] = (T)KN(fc_epi)(acc[j][i], act, has_res, Res, r + i * rp, has_div, div);
    }
}
