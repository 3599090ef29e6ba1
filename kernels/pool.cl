/* pool.cl — MaxPool-12 / AveragePool-19 / LpPool-18 windows (Global*Pool are lowered to
 * reduce.cl).
 *
 * Layout: planes of NC[D]HW, dense row-major; 1-D/2-D pools run as 3-D ones with unit leading
 * dims. X [P, D, H, W] (P = N*C planes), Y [P, OD, OH, OW]. One work-item per output element
 * (gws[0] = P*OD*OH*OW, ow fastest). Window taps along each axis: i = o*s - pb + k*d, k < K.
 * mode 0: max over in-bounds taps (padding never wins; NaN propagates).
 * mode 1: average over in-bounds taps (count_include_pad = 0).
 * mode 2: average, divisor counts the taps inside [-pb, size + pe) (count_include_pad = 1,
 *         as ONNX/onnxruntime: taps past the end padding, possible with ceil_mode, are not
 *         counted).
 * The output size (ceil_mode) is decided by shape inference; the kernel only clips windows.
 * Accumulation in float.
 *
 * pool_max_idx: MaxPool with its Indices output I (int64, same dims as Y): the max as mode 0 and
 * the flat index into X of the first tap that holds it (ties: the first tap in window order; the
 * first NaN once one is met; all taps -inf: the first in-bounds tap), X counted as
 * p*D*H*W + (id*H + ih)*W + iw (so = 0, row major) or p*D*H*W + iw*H + ih (so = 1, column
 * major; 2-D pools only, id = 0 there).
 */

/* Output element gid -> its plane (n*C + c, returned) and window origin (*id0, *ih0, *iw0):
 * Y is [planes, OD, OH, OW], origin = out * stride - leading pad per axis. */
static int KN(pool_origin)(int gid, int OD, int OH, int OW, int sd, int sh, int sw, int pd, int ph,
                           int pw, int *id0, int *ih0, int *iw0)
{
    const int ow = gid % OW;
    int t = gid / OW;
    const int oh = t % OH;
    t /= OH;
    *id0 = (t % OD) * sd - pd;
    *ih0 = oh * sh - ph;
    *iw0 = ow * sw - pw;
    return t / OD;
}

__kernel void KN(pool)(__global const T *X, __global T *Y, int D, int H, int W, int OD, int OH,
                       int OW, int KD, int KH, int KW, int sd, int sh, int sw, int pd, int ph,
                       int pw, int ed, int eh, int ew, int dd, int dh, int dw, int mode,
                       int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    int id0, ih0, iw0;
    const int p = KN(pool_origin)(gid, OD, OH, OW, sd, sh, sw, pd, ph, pw, &id0, &ih0, &iw0);
    const __global T *x = X + p * D * H * W;
    float acc = mode == 0 ? -INFINITY : 0.0f;
    int cnt = 0, cnt_pad_d = 0, cnt_pad_h = 0, cnt_pad_w = 0;
    for (int kd = 0; kd < KD; kd++) {
        const int id = id0 + kd * dd;
        if (id < D + ed) cnt_pad_d++;
        if (id < 0 || id >= D) continue;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = ih0 + kh * dh;
            if (ih < 0 || ih >= H) continue;
            const __global T *xr = x + (id * H + ih) * W;
            for (int kw = 0; kw < KW; kw++) {
                const int iw = iw0 + kw * dw;
                if (iw < 0 || iw >= W) continue;
                const float v = (float)xr[iw];
                if (mode == 0) {
                    if (v > acc || isnan(v)) acc = isnan(acc) ? acc : v;
                } else {
                    acc += v;
                }
                cnt++;
            }
        }
    }
    if (mode == 2) {
        for (int kh = 0; kh < KH; kh++)
            if (ih0 + kh * dh < H + eh) cnt_pad_h++;
        for (int kw = 0; kw < KW; kw++)
            if (iw0 + kw * dw < W + ew) cnt_pad_w++;
        acc /= (float)(cnt_pad_d * cnt_pad_h * cnt_pad_w);
    } else if (mode == 1) {
        acc /= (float)cnt;
    }
    Y[gid] = (T)acc;
}

__kernel void KN(pool_max_idx)(__global const T *X, __global T *Y, __global long *I, int D, int H,
                               int W, int OD, int OH, int OW, int KD, int KH, int KW, int sd,
                               int sh, int sw, int pd, int ph, int pw, int dd, int dh, int dw,
                               int so, int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    int id0, ih0, iw0;
    const int p = KN(pool_origin)(gid, OD, OH, OW, sd, sh, sw, pd, ph, pw, &id0, &ih0, &iw0);
    const __global T *x = X + p * D * H * W;
    float acc = -INFINITY;
    int best = -1;
    for (int kd = 0; kd < KD; kd++) {
        const int id = id0 + kd * dd;
        if (id < 0 || id >= D) continue;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = ih0 + kh * dh;
            if (ih < 0 || ih >= H) continue;
            const __global T *xr = x + (id * H + ih) * W;
            for (int kw = 0; kw < KW; kw++) {
                const int iw = iw0 + kw * dw;
                if (iw < 0 || iw >= W) continue;
                const float v = (float)xr[iw];
                if (!isnan(acc) && (best < 0 || v > acc || isnan(v))) {
                    acc = v;
                    best = so ? iw * H + ih : (id * H + ih) * W + iw;
                }
            }
        }
    }
    Y[gid] = (T)acc;
    I[gid] = (long)p * D * H * W + (best < 0 ? 0 : best);
}

/* pool_lp: LpPool-2/11/18, y = (sum over in-bounds taps of |x|^p)^(1/p), integer p > 0 (padding
 * taps are zeros and add nothing). Layout and tap geometry as KN(pool). */
__kernel void KN(pool_lp)(__global const T *X, __global T *Y, int D, int H, int W, int OD, int OH,
                          int OW, int KD, int KH, int KW, int sd, int sh, int sw, int pd, int ph,
                          int pw, int dd, int dh, int dw, int p, int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    int id0, ih0, iw0;
    const int pl = KN(pool_origin)(gid, OD, OH, OW, sd, sh, sw, pd, ph, pw, &id0, &ih0, &iw0);
    const __global T *x = X + pl * D * H * W;
    float acc = 0.0f;
    for (int kd = 0; kd < KD; kd++) {
        const int id = id0 + kd * dd;
        if (id < 0 || id >= D) continue;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = ih0 + kh * dh;
            if (ih < 0 || ih >= H) continue;
            const __global T *xr = x + (id * H + ih) * W;
            for (int kw = 0; kw < KW; kw++) {
                const int iw = iw0 + kw * dw;
                if (iw < 0 || iw >= W) continue;
                acc += pown(fabs((float)xr[iw]), p);
            }
        }
    }
    Y[gid] = (T)(p == 1 ? acc : p == 2 ? sqrt(acc) : rootn(acc, p));
}
