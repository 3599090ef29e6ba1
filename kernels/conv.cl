/* conv.cl — direct convolution (ONNX Conv-11) and transposed convolution (ConvTranspose-11).
 *
 * Layout: NC[D]HW, dense row-major. 1-D and 2-D convolutions are run as 3-D ones with unit
 * leading spatial dims (D = KD = 1, stride/dilation 1, pad 0), so one kernel covers all ranks.
 *   X [N, C,  D,  H,  W ]      W (Conv)          [OC, C/group, KD, KH, KW]
 *   Y [N, OC, OD, OH, OW]      W (ConvTranspose) [C, OC/group, KD, KH, KW]
 *   bias [OC] (optional: has_bias == 0 -> the bias pointer is never read)
 *
 * conv: one work-item per output element (gws[0] = N*OC*OD*OH*OW, ow fastest):
 *   y[n,oc,od,oh,ow] = bias[oc] + sum_{ci<cin_g, kd, kh, kw}
 *        x[n, g*cin_g+ci, od*sd-pd+kd*dd, oh*sh-ph+kh*dh, ow*sw-pw+kw*dw] * w[oc, ci, kd, kh, kw]
 *   with g = oc / cout_g; taps outside the input read zero (padding).
 * conv_oc4: the same sum for 4 consecutive output channels per work-item (cout_g % 4 == 0).
 * conv_transpose: one work-item per output element, gather form of the scatter definition:
 *   y[n,oc,o*] = bias[oc] + sum_{ci<cin_g, k*} x[n, g*cin_g+ci, i*] * w[g*cin_g+ci, oc%cout_g, k*]
 *   over taps where o + p - k*d = i*s has an integer solution i in [0, in).
 * Accumulation in float. Indices fit in int (the lowering checks numel < 2^31).
 */

__kernel void KN(conv)(__global const T *X, __global const T *Wt, __global const T *Bias,
                       __global T *Y, int C, int D, int H, int W, int OC, int OD, int OH, int OW,
                       int KD, int KH, int KW, int sd, int sh, int sw, int pd, int ph, int pw,
                       int dd, int dh, int dw, int cin_g, int cout_g, int has_bias, int total)
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
    Y[gid] = (T)acc;
}

/* conv_oc4: as conv, but one work-item computes 4 consecutive output channels oc0..oc0+3 of
 * one output position (requires cout_g % 4 == 0; gws[0] = total / 4), so each input load
 * feeds 4 multiply-adds. Output index of the work-item: position p = ow + OW*(oh + OH*od),
 * channel block cb, image n: gid = (n*(OC/4) + cb)*(OD*OH*OW) + p. */
__kernel void KN(conv_oc4)(__global const T *X, __global const T *Wt, __global const T *Bias,
                           __global T *Y, int C, int D, int H, int W, int OC, int OD, int OH,
                           int OW, int KD, int KH, int KW, int sd, int sh, int sw, int pd, int ph,
                           int pw, int dd, int dh, int dw, int cin_g, int cout_g, int has_bias,
                           int total4)
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
    const int wstride = cin_g * KSZ; /* between consecutive output channels */
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
    y[0] = (T)a0;
    y[P] = (T)a1;
    y[2 * P] = (T)a2;
    y[3 * P] = (T)a3;
}

__kernel void KN(conv_transpose)(__global const T *X, __global const T *Wt,
                                 __global const T *Bias, __global T *Y, int C, int D, int H,
                                 int W, int OC, int OD, int OH, int OW, int KD, int KH, int KW,
                                 int sd, int sh, int sw, int pd, int ph, int pw, int dd, int dh,
                                 int dw, int cin_g, int cout_g, int has_bias, int total)
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
    const int ocg = oc % cout_g;
    float acc = has_bias ? (float)Bias[oc] : 0.0f;
    const int HW = H * W, KHW = KH * KW;
    for (int kd = 0; kd < KD; kd++) {
        const int vd = od + pd - kd * dd;
        if (vd < 0 || vd % sd != 0) continue;
        const int id = vd / sd;
        if (id >= D) continue;
        for (int kh = 0; kh < KH; kh++) {
            const int vh = oh + ph - kh * dh;
            if (vh < 0 || vh % sh != 0) continue;
            const int ih = vh / sh;
            if (ih >= H) continue;
            for (int kw = 0; kw < KW; kw++) {
                const int vw = ow + pw - kw * dw;
                if (vw < 0 || vw % sw != 0) continue;
                const int iw = vw / sw;
                if (iw >= W) continue;
                const int xoff = id * HW + ih * W + iw;
                const int woff = kd * KHW + kh * KW + kw;
                for (int ci = 0; ci < cin_g; ci++) {
                    const int c = g * cin_g + ci;
                    acc += (float)X[(n * C + c) * D * HW + xoff] *
                           (float)Wt[(c * cout_g + ocg) * KD * KHW + woff];
                }
            }
        }
    }
    Y[gid] = (T)acc;
}
