/* gnorm.cl — o2c.GroupNorm (fused GroupNorm + optional SiLU), see passes/fuse/gnorm.c.
 *
 * Layout: X, Y [N, C, S] dense (S = product of the spatial dims), G groups of CPG = C/G
 * consecutive channels; group (n, g) is the contiguous run of R = CPG*S elements starting at
 * (n*C + g*CPG)*S. Gamma/Beta: [C] (per_group == 0) or [G] (per_group == 1).
 *   y[n,c,s] = act((x[n,c,s] - mean) * rsqrt(var + eps) * gamma[a] + beta[a]),  a = c or g,
 *   act: 0 identity, 1 silu (v * sigmoid(v) = v / (1 + exp(-v))).
 * gnorm: ONE launch, one work-group of exactly GN_LWS items per (n, g):
 *   gws[0] = N*G*GN_LWS, lws[0] = GN_LWS. The work-group reads its group twice for the
 *   statistics and a third time to write the normalized, scaled, activated result, channel by
 *   channel (so the affine parameters are loaded once per channel and the inner loop has no
 *   division); planes smaller than GN_LWS (tiny models, low resolutions) use one flat loop
 *   instead. The work-item partial sums run over R/GN_LWS elements, then a __local tree.
 * NUMERICS RULE (this kernel, and every other variant of GroupNorm / LayerNorm /
 * InstanceNorm, e.g. GPU work-group kernels, must follow it; kernels/norm.cl does the same):
 *   - shift: x0 = the group's first element; statistics are taken on x - x0 (exact when x and
 *     x0 are within a factor 2, Sterbenz), m = sum(x - x0) / R is the mean's offset from x0;
 *   - variance from squared deviations: var = sum(((x - x0) - m)^2) / R (two-pass). A variant
 *     that reduces in one pass merges per-item (count, mean offset, M2) partials with Chan's
 *     formula, still on shifted values. Never E[x^2] - E[x]^2, never an unshifted float sum;
 *   - output: ((x - x0) - m) * (gamma * rsqrt(var + eps)) + beta. Never x * sc + (beta - mean
 *     * sc), and never fold x0 + m into one float mean: both cancel when |mean| >> std (0.05
 *     absolute error at mean 1000, std 1e-3, eps 1e-6 — the bug of issue 13).
 *   Guarantees the tests assert (tests/fusion_norm/graphs/gnx_*, lnx_*): an all-constant group
 *   gives exactly beta (x - x0 == 0, so m == 0 and the product is 0), and groups with a large
 *   mean and a tiny variance match a float64 reference within 1e-4 + 1e-3 |ref|.
 *   Why one launch and not stats + apply kernels (CPU class; GPU class: gnorm_part/gnorm_apply
 *   below when a group is large): on PoCL a work-group is a loop on one core,
 *   __local memory is ordinary cache, and N*G work-groups (32+ for SD) already fill the cores;
 *   a second launch would add its latency and a scratch buffer for nothing. Groups of any size
 *   work (the loops stride by GN_LWS; indices are int: the lowering checks numel < 2^31).
 */
#ifndef GN_LWS
#define GN_LWS 128
#endif
#ifndef GN_GLWS
#define GN_GLWS 256
#endif

#ifndef O2C_GNORM_HELPERS
#define O2C_GNORM_HELPERS
/* Sum over a work-group of n items (GN_LWS or GN_GLWS); every item gets the result. */
static float gn_wg_sum(__local float *s, float v, int n)
{
    const int lid = (int)get_local_id(0);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = n / 2; off > 0; off >>= 1) {
        if (lid < off) s[lid] += s[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
#endif

__kernel void KN(gnorm)(__global const T *X, __global const T *Gamma, __global const T *Beta,
                        __global T *Y, int C, int S, int G, float eps, int per_group, int act)
{
    __local float s[GN_LWS];
    const int wg = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    const int g = wg % G;
    const int n = wg / G;
    const int cpg = C / G;
    const int R = cpg * S;
    const int base = (n * C + g * cpg) * S;
    const __global T *x = X + base;
    __global T *y = Y + base;
    const float x0 = (float)x[0]; /* shift (NUMERICS RULE above) */
    float sum = 0.0f;
    for (int j = lid; j < R; j += GN_LWS) sum += (float)x[j] - x0;
    const float m = gn_wg_sum(s, sum, GN_LWS) / (float)R; /* mean - x0 */
    float sq = 0.0f;
    for (int j = lid; j < R; j += GN_LWS) {
        const float d = ((float)x[j] - x0) - m;
        sq += d * d;
    }
    const float inv = rsqrt(gn_wg_sum(s, sq, GN_LWS) / (float)R + eps);
    if (S < GN_LWS) {
        /* small planes (S < GN_LWS): one flat loop over the group, so no work-item idles; the
         * division j / S is then cheaper than cpg mostly-idle channel loops */
        for (int j = lid; j < R; j += GN_LWS) {
            const int a = per_group ? g : g * cpg + j / S;
            const float sc = inv * (float)Gamma[a];
            float v = (((float)x[j] - x0) - m) * sc + (float)Beta[a];
            if (act == 1) v = v / (1.0f + exp(-v));
            y[j] = (T)v;
        }
        return;
    }
    for (int c = 0; c < cpg; c++) {
        const int a = per_group ? g : g * cpg + c;
        const float sc = inv * (float)Gamma[a];
        const float b = (float)Beta[a];
        const __global T *xc = x + c * S;
        __global T *yc = y + c * S;
        if (act == 1) {
            for (int j = lid; j < S; j += GN_LWS) {
                const float v = (((float)xc[j] - x0) - m) * sc + b;
                yc[j] = (T)(v / (1.0f + exp(-v)));
            }
        } else {
            for (int j = lid; j < S; j += GN_LWS) yc[j] = (T)((((float)xc[j] - x0) - m) * sc + b);
        }
    }
}

/* ---- GPU class: statistics split over several work-groups per group (two launches) ----------
 * For groups too large for one work-group to stream alone on a GPU (SD UNet 64x64: 32 groups of
 * 40960; VAE 512x512: 32 groups of 4M elements, while a GPU wants 1000+ work-groups), each group
 * (row r of R = CPG*S elements) is cut into P <= GN_GLWS parts of `span` elements (the last one
 * shorter; none empty): part p = [p*span, min(R, (p+1)*span)).
 *   gnorm_part:  one work-group of GN_GLWS items per (r, p): gws[0] = rows*P*GN_GLWS. Two passes
 *                over the part on values shifted by the GROUP's first element x0 (NUMERICS RULE):
 *                mp = sum(x - x0) / cnt, q = sum(((x - x0) - mp)^2); writes
 *                Part[2*(r*P + p)] = mp, Part[2*(r*P + p) + 1] = q (float32).
 *   gnorm_apply: the same geometry; every work-group of group r merges the P partials with
 *                Chan's formula in one fixed tree order (so all of them get bit-identical m and
 *                var), then writes ((x - x0) - m) * (gamma * rsqrt(var + eps)) + beta (+ SiLU)
 *                over its part, channel segment by channel segment (no per-element division)
 *                unless S < GN_GLWS (flat loop, as in gnorm).
 * A constant group gives mp = 0 and q = 0 in every part, so the merge gives m = 0, var = 0 and
 * the output is exactly beta. Coalesced: consecutive items read consecutive elements. Local
 * memory: 4 KiB. The two passes of gnorm_part read the part twice (the second from cache). */
__kernel void KN(gnorm_part)(__global const T *X, __global float *Part, int R, int P, int span)
{
    __local float s[GN_GLWS];
    const int wg = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    const int r = wg / P, p = wg % P;
    const __global T *x = X + r * R;
    const float x0 = (float)x[0]; /* shift by the group's first element (NUMERICS RULE) */
    const int j0 = p * span, j1 = min(R, j0 + span);
    const float cnt = (float)max(j1 - j0, 1);
    float sum = 0.0f;
    for (int j = j0 + lid; j < j1; j += GN_GLWS) sum += (float)x[j] - x0;
    const float mp = gn_wg_sum(s, sum, GN_GLWS) / cnt;
    float sq = 0.0f;
    for (int j = j0 + lid; j < j1; j += GN_GLWS) {
        const float d = ((float)x[j] - x0) - mp;
        sq += d * d;
    }
    const float q = gn_wg_sum(s, sq, GN_GLWS);
    if (lid == 0) {
        Part[2 * wg] = mp;
        Part[2 * wg + 1] = q;
    }
}

__kernel void KN(gnorm_apply)(__global const T *X, __global const float *Part,
                              __global const T *Gamma, __global const T *Beta, __global T *Y,
                              int C, int S, int G, int P, int span, float eps, int per_group,
                              int act)
{
    __local float lm[GN_GLWS], lq[GN_GLWS], ln[GN_GLWS];
    const int wg = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    const int r = wg / P, p = wg % P;
    const int g = r % G;
    const int cpg = C / G;
    const int R = cpg * S;
    /* the group's partials (P <= GN_GLWS), empty slots count 0 */
    lm[lid] = lid < P ? Part[2 * (r * P + lid)] : 0.0f;
    lq[lid] = lid < P ? Part[2 * (r * P + lid) + 1] : 0.0f;
    ln[lid] = lid < P ? (float)max(min(span, R - lid * span), 0) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Chan: n = na + nb, d = mb - ma, m = ma + d nb / n, q = qa + qb + d^2 na nb / n */
    for (int off = GN_GLWS / 2; off > 0; off >>= 1) {
        if (lid < off && ln[lid + off] > 0.0f) {
            const float na = ln[lid], nb = ln[lid + off], n = na + nb;
            const float d = lm[lid + off] - lm[lid];
            lm[lid] += d * (nb / n);
            lq[lid] += lq[lid + off] + d * d * (na * (nb / n));
            ln[lid] = n;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float m = lm[0];                        /* mean - x0 */
    const float inv = rsqrt(lq[0] / (float)R + eps);
    const __global T *x = X + r * R;
    __global T *y = Y + r * R;
    const float x0 = (float)x[0];
    const int j0 = p * span, j1 = min(R, j0 + span);
    if (S < GN_GLWS) {
        for (int j = j0 + lid; j < j1; j += GN_GLWS) {
            const int a = per_group ? g : g * cpg + j / S;
            float v = (((float)x[j] - x0) - m) * (inv * (float)Gamma[a]) + (float)Beta[a];
            if (act == 1) v = v / (1.0f + exp(-v));
            y[j] = (T)v;
        }
        return;
    }
    for (int c = j0 / S; c * S < j1; c++) {
        const int a = per_group ? g : g * cpg + c;
        const float sc = inv * (float)Gamma[a];
        const float b = (float)Beta[a];
        const int e = min(j1, (c + 1) * S);
        if (act == 1) {
            for (int j = max(j0, c * S) + lid; j < e; j += GN_GLWS) {
                const float v = (((float)x[j] - x0) - m) * sc + b;
                y[j] = (T)(v / (1.0f + exp(-v)));
            }
        } else {
            for (int j = max(j0, c * S) + lid; j < e; j += GN_GLWS)
                y[j] = (T)((((float)x[j] - x0) - m) * sc + b);
        }
    }
}
