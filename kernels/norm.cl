/* norm.cl — InstanceNormalization-6, GroupNormalization-18/21, LayerNormalization-17 (output 0),
 * BatchNormalization-15 (inference form).
 *
 * o2c.RMSNorm (center = 0, below).
 *
 * Row kernels: X, Y dense, viewed as [rows, R] with contiguous rows. Per row: mean and biased
 *   variance in float by the NUMERICS RULE of kernels/gnorm.cl (shifted by the row's first
 *   element x0, two passes: m = mean - x0, then the squared deviations), then
 *     y[r, j] = ((x[r, j] - x0) - m) * rsqrt(var + eps) * scale[a] + bias[a]
 *   (a constant row gives exactly bias; no cancellation when |mean| >> std)
 *   with the affine index a = (r % rmod) * rmul + (j / jdiv) % jmod, which expresses
 *     InstanceNorm      rows = N*C, R = S:          a = r % C            (rmod C, rmul 1, jdiv R, jmod 1)
 *     GroupNorm (-21)   rows = N*G, R = (C/G)*S:    a = (r%G)*(C/G) + (j/S)%(C/G)
 *     GroupNorm (-18)   per-group scale:            a = r % G            (rmod G, rmul 1, jdiv R, jmod 1)
 *     LayerNorm         rows = prod(dims[:axis]):   a = j % numel(scale) (rmod 1, rmul 0, jdiv 1)
 *   has_bias == 0: no bias (the pointer is not read).
 *   center == 0 (RMSNorm, o2c.RMSNorm): no mean subtraction and no shift, x0 = m = 0:
 *     y[r, j] = x[r, j] * rsqrt(mean_j(x[r, j]²) + eps) * scale[a] + bias[a]
 *   has_stats == 1: also Mean[r] and InvStd[r] = 1/sqrt(var + eps) as float32 (the
 *   LayerNormalization Mean / InvStdDev outputs, stash_type float32; otherwise those pointers
 *   are not read). rows: the row count.
 * norm_rows_short (CPU class, codegen/lower_norm.c): ONE work-item per row, any lws
 *   (gws[0] = rows rounded up to lws; items past the last row exit: no barriers, no __local).
 *   Each pass reads the row with vload4 (any R: a scalar tail; rows need only float alignment)
 *   into float4 accumulators; the parameters are read with vload4 where they run along the row
 *   (jdiv == 1, jmod >= R: LayerNorm / RMSNorm), else once per segment of jdiv elements that
 *   share one (Instance / GroupNorm). On PoCL 4-15x faster than a work-group per row with a
 *   __local tree (barriers are costly there) at every R measured, 16 to 4M (README Passes).
 * norm_rows_team (GPU class): a TEAM of tw consecutive work-items per row (tw a power of 2 in
 *   [32, NM_GLWS], chosen by the lowering from R) and NM_GLWS / tw rows per work-group:
 *   gws[0] = ceil(rows / (NM_GLWS / tw)) * NM_GLWS, lws[0] = NM_GLWS. Short rows (LayerNorm over
 *   320..1280 channels for 4096 tokens) then keep every lane busy and the barriers amortized over
 *   several rows; the team reads its row with consecutive items (coalesced). Items of a missing
 *   last row (row >= rows) take part in every barrier and touch no memory. For center == 0 the
 *   first pass adds nothing; its team sum still runs so that every item takes the same
 *   barriers. Same values as norm_rows_short up to the order of the float additions.
 * batchnorm: one work-item per element of X [N, C, S] (gws[0] = N*C*S):
 *     y = (x - mean[c]) * rsqrt(var[c] + eps) * scale[c] + bias[c]
 */
#ifndef NM_GLWS
#define NM_GLWS 256
#endif

#ifndef O2C_NORM_HELPERS
#define O2C_NORM_HELPERS
/* Sum over each team of tw consecutive items (tw a power of 2 dividing the work-group size;
 * tw = the work-group size: a work-group sum); every item of the team gets its team's result.
 * Every item of the work-group must call it. */
static float nm_team_sum(__local float *s, float v, int tw)
{
    const int lid = (int)get_local_id(0);
    const int t = lid & (tw - 1);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = tw / 2; off > 0; off >>= 1) {
        if (t < off) s[lid] += s[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = s[lid - t];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
#endif

/* Body of norm_rows_team: row `row` (n = R, or 0 for a
 * missing row whose items only take the barriers) reduced by the team of tw items that holds
 * this work-item; returns the row's mean and 1/sqrt(var+eps). */
static void KN(nm_rows_body)(__global const T *X, __global const T *Scale,
                             __global const T *Bias, __global T *Y, int R, float eps, int rmod,
                             int rmul, int jdiv, int jmod, int has_bias, int center,
                             __local float *s, int row, int n, int tw, float *mean_out,
                             float *inv_out)
{
    const int t = (int)get_local_id(0) & (tw - 1);
    const __global T *x = X + (n ? row : 0) * R;
    __global T *y = Y + (n ? row : 0) * R;
    const float x0 = n && center ? (float)x[0] : 0.0f; /* shift (NUMERICS RULE of gnorm.cl) */
    float sum = 0.0f;
    for (int j = t; center && j < n; j += tw) sum += (float)x[j] - x0;
    const float m = nm_team_sum(s, sum, tw) / (float)R; /* mean - x0 */
    float sq = 0.0f;
    for (int j = t; j < n; j += tw) {
        const float d = ((float)x[j] - x0) - m;
        sq += d * d;
    }
    const float inv = rsqrt(nm_team_sum(s, sq, tw) / (float)R + eps);
    const int abase = (row % rmod) * rmul;
    for (int j = t; j < n; j += tw) {
        const int a = abase + (j / jdiv) % jmod;
        float v = (((float)x[j] - x0) - m) * inv * (float)Scale[a];
        if (has_bias) v += (float)Bias[a];
        y[j] = (T)v;
    }
    *mean_out = x0 + m;
    *inv_out = inv;
}

__kernel void KN(norm_rows_team)(__global const T *X, __global const T *Scale,
                                 __global const T *Bias, __global T *Y, int R, float eps,
                                 int rmod, int rmul, int jdiv, int jmod, int has_bias,
                                 int center, int rows, int tw, int has_stats, __global float *Mean,
                                 __global float *InvStd)
{
    __local float s[NM_GLWS];
    const int lid = (int)get_local_id(0);
    const int row = (int)get_group_id(0) * (NM_GLWS / tw) + lid / tw;
    const int n = row < rows ? R : 0; /* a missing row: no memory, barriers only */
    float mean, inv;
    KN(nm_rows_body)(X, Scale, Bias, Y, R, eps, rmod, rmul, jdiv, jmod, has_bias, center, s, row,
                     n, tw, &mean, &inv);
    if (has_stats && (lid & (tw - 1)) == 0 && n) {
        Mean[row] = mean;
        InvStd[row] = inv;
    }
}

/* Sum of the four lanes of a float4 accumulator. */
#ifndef O2C_NORM_HSUM4
#define O2C_NORM_HSUM4
static float nm_hsum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }
#endif

__kernel void KN(norm_rows_short)(__global const T *X, __global const T *Scale,
                                  __global const T *Bias, __global T *Y, int R, float eps,
                                  int rmod, int rmul, int jdiv, int jmod, int has_bias,
                                  int center, int rows, int has_stats, __global float *Mean,
                                  __global float *InvStd)
{
    const int row = (int)get_global_id(0);
    if (row >= rows) return;
    const __global T *x = X + row * R;
    __global T *y = Y + row * R;
    const int R4 = R >> 2;
    const float x0 = center ? (float)x[0] : 0.0f; /* shift (NUMERICS RULE of gnorm.cl) */
    float m = 0.0f;                               /* mean - x0 */
    if (center) {
        float4 s4 = (float4)(0.0f);
        for (int q = 0; q < R4; q++) s4 += vload4(q, x) - x0;
        float sum = nm_hsum4(s4);
        for (int j = R4 * 4; j < R; j++) sum += (float)x[j] - x0;
        m = sum / (float)R;
    }
    float4 q4 = (float4)(0.0f);
    for (int q = 0; q < R4; q++) {
        const float4 d = (vload4(q, x) - x0) - m;
        q4 += d * d;
    }
    float sq = nm_hsum4(q4);
    for (int j = R4 * 4; j < R; j++) {
        const float d = ((float)x[j] - x0) - m;
        sq += d * d;
    }
    const float inv = rsqrt(sq / (float)R + eps);
    const int abase = (row % rmod) * rmul;
    if (jdiv == 1 && jmod >= R) { /* parameters along the row: a = abase + j */
        const __global T *sc = Scale + abase, *bi = Bias + abase;
        for (int q = 0; q < R4; q++) {
            float4 v = ((vload4(q, x) - x0) - m) * inv * vload4(q, sc);
            if (has_bias) v += vload4(q, bi);
            vstore4(v, q, y);
        }
        for (int j = R4 * 4; j < R; j++) {
            float v = (((float)x[j] - x0) - m) * inv * (float)sc[j];
            if (has_bias) v += (float)bi[j];
            y[j] = (T)v;
        }
    } else { /* segments of jdiv elements with one parameter each (Instance/GroupNorm) */
        for (int c0 = 0; c0 < R; c0 += jdiv) {
            const int a = abase + (c0 / jdiv) % jmod, len = min(jdiv, R - c0);
            const float g = inv * (float)Scale[a], b = has_bias ? (float)Bias[a] : 0.0f;
            const __global T *xs = x + c0;
            __global T *ys = y + c0;
            for (int q = 0; q < (len >> 2); q++)
                vstore4(((vload4(q, xs) - x0) - m) * g + b, q, ys);
            for (int j = len & ~3; j < len; j++) ys[j] = (T)((((float)xs[j] - x0) - m) * g + b);
        }
    }
    if (has_stats) {
        Mean[row] = x0 + m;
        InvStd[row] = inv;
    }
}

__kernel void KN(batchnorm)(__global const T *X, __global const T *Scale, __global const T *Bias,
                            __global const T *Mean, __global const T *Var, __global T *Y, int C,
                            int S, float eps, int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    const int c = (gid / S) % C;
    const float v = ((float)X[gid] - (float)Mean[c]) * rsqrt((float)Var[c] + eps) *
                        (float)Scale[c] +
                    (float)Bias[c];
    Y[gid] = (T)v;
}
