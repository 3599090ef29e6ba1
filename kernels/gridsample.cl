/* gridsample.cl — GridSample-16/20/22 (linear / nearest / cubic; zeros / border / reflection
 * padding; align_corners 0/1), 1 to 3 spatial dims.
 *
 * Layout: X [N, C, D, H, W] dense row-major (1-D/2-D inputs run as 3-D with unit leading
 * spatial dims), grid [N, OD, OH, OW, nsp] with component 0 = x (W axis), 1 = y (H), 2 = z (D),
 * Y [N, C, OD, OH, OW]. One work-item per (n, od, oh, ow) output position (gws[0] = N*OD*OH*OW,
 * ow fastest); it computes the taps once and loops over the C channels.
 * Per axis of length L (the ONNX reference evaluator, onnx/reference/ops/op_grid_sample.py):
 *   x = align ? (g + 1) / 2 * (L - 1) : ((g + 1) * L - 1) / 2   (float32, no contraction)
 *   nearest: x = rint(x) (half to even); then outside [lo, hi] (-0.5 / L-0.5, or 0 / L-1 with
 *   align_corners) x is clamped to [0, L-1] (border) or reflected into [lo, hi] (reflection).
 *   Taps: nearest (int)x; linear floor(x) + {0, 1} with weights (1-t, t); cubic floor(x) +
 *   {-1, 0, 1, 2} with Keys weights (alpha -0.75) of t = x - floor(x). A tap outside [0, L)
 *   reads 0 (zeros), the clamped index (border) or the reflected index (reflection).
 *   Axes that the input does not have (nsp < 3) get one tap of weight 1 at index 0.
 * y = sum over tap combinations (at most 4^3) of the product of axis weights * X[tap].
 * mode: 0 linear, 1 nearest, 2 cubic; padding: 0 zeros, 1 border, 2 reflection.
 */

/* Reflects x into [lo, hi] by mirroring at the nearer border repeatedly. */
float KN(gs_reflect)(float x, float lo, float hi)
{
    const float rng = hi - lo;
    if (!(rng > 0.0f)) return lo;
    if (x < lo) {
        const float dx = lo - x, k = floor(dx / rng), r = dx - k * rng;
        return fmod(k, 2.0f) == 0.0f ? lo + r : hi - r;
    }
    if (x > hi) {
        const float dx = x - hi, k = floor(dx / rng), r = dx - k * rng;
        return fmod(k, 2.0f) == 0.0f ? hi - r : lo + r;
    }
    return x;
}

/* Taps of one axis of length L at normalized coordinate gn: idx[] (-1 = reads zero), w[];
 * returns the count (1, 2 or 4). */
int KN(gs_taps)(float gn, int L, int mode, int padding, int align, int *idx, float *w)
{
#pragma OPENCL FP_CONTRACT OFF
    const float xf = align ? (gn + 1.0f) * 0.5f * (float)(L - 1)
                           : ((gn + 1.0f) * (float)L - 1.0f) * 0.5f;
    const float lo = align ? 0.0f : -0.5f, hi = align ? (float)(L - 1) : (float)L - 0.5f;
    float x = mode == 1 ? rint(xf) : xf;
    if (x < lo || x > hi) {
        if (padding == 1) x = clamp(x, 0.0f, (float)(L - 1));
        else if (padding == 2) x = KN(gs_reflect)(x, lo, hi);
    }
    if (!(x >= -1e9f)) x = -1e9f; /* far outside (and NaN): every tap out of range */
    if (x > 1e9f) x = 1e9f;
    int cnt, base;
    if (mode == 1) {
        cnt = 1;
        base = (int)x;
        w[0] = 1.0f;
    } else {
        const float f = floor(x), t = x - f;
        base = (int)f;
        if (mode == 0) {
            cnt = 2;
            w[0] = 1.0f - t;
            w[1] = t;
        } else {
            const float a = -0.75f;
            float u = t + 1.0f;
            cnt = 4;
            base -= 1;
            w[0] = ((a * u - 5.0f * a) * u + 8.0f * a) * u - 4.0f * a;
            u = t;
            w[1] = ((a + 2.0f) * u - (a + 3.0f)) * u * u + 1.0f;
            u = 1.0f - t;
            w[2] = ((a + 2.0f) * u - (a + 3.0f)) * u * u + 1.0f;
            u = 2.0f - t;
            w[3] = ((a * u - 5.0f * a) * u + 8.0f * a) * u - 4.0f * a;
        }
    }
    for (int k = 0; k < cnt; k++) {
        int i = base + k;
        if (i < 0 || i >= L) {
            if (padding == 0) i = -1;
            else if (padding == 1) i = i < 0 ? 0 : L - 1;
            else i = clamp((int)KN(gs_reflect)((float)i, lo, hi), 0, L - 1);
        }
        idx[k] = i;
    }
    return cnt;
}

__kernel void KN(gridsample)(__global const T *X, __global const T *G, __global T *Y, int C,
                             int D, int H, int W, int nsp, int mode, int padding, int align,
                             int opos, int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    const int n = gid / opos, o = gid % opos;
    const __global T *g = G + (long)gid * nsp;
    int idx[3][4];
    float w[3][4];
    int cnt[3];
    const int len[3] = {D, H, W};
    for (int a = 0; a < 3; a++) {
        const int comp = 2 - a; /* axis D <- z (2), H <- y (1), W <- x (0) */
        if (comp >= nsp) {
            cnt[a] = 1;
            idx[a][0] = 0;
            w[a][0] = 1.0f;
        } else {
            cnt[a] = KN(gs_taps)((float)g[comp], len[a], mode, padding, align, idx[a], w[a]);
        }
    }
    int off[64];
    float wt[64];
    int nt = 0;
    for (int a = 0; a < cnt[0]; a++) {
        if (idx[0][a] < 0) continue;
        for (int b = 0; b < cnt[1]; b++) {
            if (idx[1][b] < 0) continue;
            for (int c = 0; c < cnt[2]; c++) {
                if (idx[2][c] < 0) continue;
                off[nt] = (idx[0][a] * H + idx[1][b]) * W + idx[2][c];
                wt[nt] = w[0][a] * w[1][b] * w[2][c];
                nt++;
            }
        }
    }
    const int isz = D * H * W;
    for (int c = 0; c < C; c++) {
        const __global T *x = X + (long)(n * C + c) * isz;
        float acc = 0.0f;
        for (int k = 0; k < nt; k++) acc += wt[k] * (float)x[off[k]];
        Y[(long)(n * C + c) * opos + o] = (T)acc;
    }
}
