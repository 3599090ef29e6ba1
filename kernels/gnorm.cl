/* gnorm.cl — o2c.GroupNorm (fused GroupNorm + optional SiLU), see passes/fuse/gnorm.c.
 *
 * Layout: X, Y [N, C, S] dense (S = product of the spatial dims), G groups of CPG = C/G
 * consecutive channels; group (n, g) is the contiguous run of R = CPG*S elements starting at
 * (n*C + g*CPG)*S. Gamma/Beta: [C] (per_group == 0) or [G] (per_group == 1).
 *   y[n,c,s] = act((x[n,c,s] - mean) * rsqrt(var + eps) * gamma[a] + beta[a]),  a = c or g,
 *   act: 0 identity, 1 silu (v * sigmoid(v) = v / (1 + exp(-v))).
 * gnorm (GPU class, groups small enough for one work-group): ONE launch, one work-group of
 *   exactly GN_LWS items per (n, g): gws[0] = N*G*GN_LWS, lws[0] = GN_LWS. The work-group reads
 *   its group twice for the statistics and a third time to write the normalized, scaled,
 *   activated result, channel by channel (so the affine parameters are loaded once per channel
 *   and the inner loop has no division); planes smaller than GN_LWS (tiny models, low
 *   resolutions) use one flat loop instead. The work-item partial sums run over R/GN_LWS
 *   elements, then a __local tree. Larger groups on GPUs: gnorm_part / gnorm_apply below.
 *   The CPU class runs gnorm_rows (below) instead.
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
 *   Groups of any size work (the loops stride by GN_LWS; indices are int: the lowering checks
 *   numel < 2^31). float32 only (codegen/lower_gnorm.c): the CPU kernels read float vectors.
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

/* ---- CPU class: one work-item per group (or per part of a group), contiguous vector loops ----
 * gnorm_rows:   one work-item per group r < rows (gws[0] = rows rounded up to lws, any lws;
 *               items past the last group exit: no barriers, no __local). Statistics in ONE
 *               read of the group: it is cut into chunks of GN_CHUNK elements (L1-resident);
 *               per chunk two passes on values shifted by the group's first element x0
 *               (mc = sum(x - x0) / len, qc = sum(((x - x0) - mc)^2), the second pass from
 *               L1), merged into the running (n, m, q) with Chan's formula (NUMERICS RULE).
 *               Then one pass writes ((x - x0) - m) * (gamma * rsqrt(q / R + eps)) + beta
 *               (+ SiLU) channel segment by channel segment. float8 loads (vload8: rows need
 *               only float alignment) and a scalar tail per chunk / segment.
 * gnorm_rows_part / gnorm_rows_apply: the same for groups cut into P parts of `span`
 *               elements (span a multiple of GN_CHUNK, the last part shorter, none empty), one
 *               work-item per (r, p), gws[0] = rows*P rounded up to lws, when there are too few
 *               groups to occupy the cores (codegen/lower_gnorm.c). gnorm_rows_part writes the
 *               part's Chan partial Part[2*(r*P + p)] = mp, [.. + 1] = qp (mean offset from x0,
 *               M2); gnorm_rows_apply merges the P partials of its group left to right (every
 *               item of a group gets bit-identical m and q) and writes its part.
 * Why not the work-group kernel gnorm on CPUs: PoCL runs a work-group as a loop over its items
 * between barriers, so each of gnorm's 128 items walks the whole group with a stride of 128
 * elements (every cache line fetched up to 16 times, 4 MiB groups at VAE 512x512 do not stay in
 * cache): [1,128,512,512] 32 groups + SiLU took 1.1-1.6 s, gnorm_rows 43-66 ms (README Passes).
 * One item per group already fills the cores at SD shapes (32+ groups) and reads the group
 * from cache in its second pass when it fits; with fewer groups the split adds items. */
#ifndef GN_CHUNK
#define GN_CHUNK 2048
#endif

#ifndef O2C_GNORM_ROWS_HELPERS
#define O2C_GNORM_ROWS_HELPERS
static float gn_hsum8(float8 v)
{
    const float4 s = v.lo + v.hi;
    return (s.x + s.y) + (s.z + s.w);
}

/* Chan statistics of x[0 .. len) on values shifted by x0: *m = mean(x - x0), *q = the sum of
 * squared deviations from it. Chunk by chunk (two passes each, the second from L1), chunks
 * merged left to right: n = na + nb, d = mb - ma, m = ma + d nb / n, q = qa + qb + d^2 na nb / n.
 * A constant x (x == x0 everywhere) gives m = 0 and q = 0 exactly. */
static void gn_rows_stats(const __global float *x, int len, float x0, float *m_out,
                          float *q_out)
{
    float n = 0.0f, m = 0.0f, q = 0.0f;
    for (int c0 = 0; c0 < len; c0 += GN_CHUNK) {
        const int cl = min(GN_CHUNK, len - c0), c8 = cl >> 3;
        const __global float *xc = x + c0;
        float8 s8 = (float8)(0.0f);
        for (int i = 0; i < c8; i++) s8 += vload8(i, xc) - x0;
        float s = gn_hsum8(s8);
        for (int j = c8 * 8; j < cl; j++) s += xc[j] - x0;
        const float nb = (float)cl, mb = s / nb;
        float8 q8 = (float8)(0.0f);
        for (int i = 0; i < c8; i++) {
            const float8 d = (vload8(i, xc) - x0) - mb;
            q8 += d * d;
        }
        float qb = gn_hsum8(q8);
        for (int j = c8 * 8; j < cl; j++) {
            const float d = (xc[j] - x0) - mb;
            qb += d * d;
        }
        const float nn = n + nb, d = mb - m;
        m += d * (nb / nn);
        q += qb + d * d * (n * (nb / nn));
        n = nn;
    }
    *m_out = m;
    *q_out = q;
}

/* y[j] = act(((x[j] - x0) - m) * sc + b) for j in [0, len). */
static void gn_rows_seg(const __global float *x, __global float *y, int len, float x0, float m,
                        float sc, float b, int act)
{
    const int l8 = len >> 3;
    if (act == 1) {
        for (int i = 0; i < l8; i++) {
            const float8 v = ((vload8(i, x) - x0) - m) * sc + b;
            vstore8(v / (1.0f + exp(-v)), i, y);
        }
        for (int j = l8 * 8; j < len; j++) {
            const float v = ((x[j] - x0) - m) * sc + b;
            y[j] = v / (1.0f + exp(-v));
        }
    } else {
        for (int i = 0; i < l8; i++) vstore8(((vload8(i, x) - x0) - m) * sc + b, i, y);
        for (int j = l8 * 8; j < len; j++) y[j] = ((x[j] - x0) - m) * sc + b;
    }
}

/* Writes elements [j0, j1) of group r (channel segments of S elements; see gnorm_rows). */
static void gn_rows_apply_range(const __global float *x, __global float *y,
                                const __global float *Gamma, const __global float *Beta, int g,
                                int cpg, int S, int j0, int j1, float x0, float m, float inv,
                                int per_group, int act)
{
    for (int c = j0 / S; c * S < j1; c++) {
        const int a = per_group ? g : g * cpg + c;
        const int s0 = max(j0, c * S), s1 = min(j1, (c + 1) * S);
        gn_rows_seg(x + s0, y + s0, s1 - s0, x0, m, inv * Gamma[a], Beta[a], act);
    }
}
#endif

__kernel void KN(gnorm_rows)(__global const T *X, __global const T *Gamma,
                             __global const T *Beta, __global T *Y, int C, int S, int G,
                             float eps, int per_group, int act, int rows)
{
    const int r = (int)get_global_id(0);
    if (r >= rows) return;
    const int cpg = C / G, R = cpg * S;
    const __global float *x = X + r * R;
    __global float *y = Y + r * R;
    const float x0 = x[0]; /* shift (NUMERICS RULE) */
    float m, q;
    gn_rows_stats(x, R, x0, &m, &q);
    gn_rows_apply_range(x, y, Gamma, Beta, r % G, cpg, S, 0, R, x0, m, rsqrt(q / (float)R + eps),
                        per_group, act);
}

__kernel void KN(gnorm_rows_part)(__global const T *X, __global float *Part, int R, int P,
                                  int span, int items)
{
    const int i = (int)get_global_id(0);
    if (i >= items) return;
    const int r = i / P, p = i % P;
    const __global float *x = X + r * R;
    const int j0 = p * span, j1 = min(R, j0 + span);
    float m, q;
    gn_rows_stats(x + j0, j1 - j0, x[0], &m, &q);
    Part[2 * i] = m;
    Part[2 * i + 1] = q;
}

__kernel void KN(gnorm_rows_apply)(__global const T *X, __global const float *Part,
                                   __global const T *Gamma, __global const T *Beta,
                                   __global T *Y, int C, int S, int G, int P, int span,
                                   float eps, int per_group, int act, int items)
{
    const int i = (int)get_global_id(0);
    if (i >= items) return;
    const int r = i / P, p = i % P;
    const int cpg = C / G, R = cpg * S;
    float n = 0.0f, m = 0.0f, q = 0.0f;
    for (int k = 0; k < P; k++) { /* Chan, left to right (see gn_rows_stats) */
        const float nb = (float)min(span, R - k * span), nn = n + nb;
        const float d = Part[2 * (r * P + k)] - m;
        m += d * (nb / nn);
        q += Part[2 * (r * P + k) + 1] + d * d * (n * (nb / nn));
        n = nn;
    }
    const __global float *x = X + r * R;
    const int j0 = p * span, j1 = min(R, j0 + span);
    gn_rows_apply_range(x, Y + r * R, Gamma, Beta, r % G, cpg, S, j0, j1, x[0], m,
                        rsqrt(q / (float)R + eps), per_group, act);
}
