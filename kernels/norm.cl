/* norm.cl — InstanceNormalization-6, GroupNormalization-18/21, LayerNormalization-17 (output 0),
 * BatchNormalization-15 (inference form).
 *
 * o2c.RMSNorm (center = 0, below).
 *
 * norm_rows: X, Y dense, viewed as [rows, R] with contiguous rows. Per row: mean and biased
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
 *   (the first pass then adds nothing; its team sum still runs so that every item takes the
 *   same barriers).
 *   One work-group of exactly NM_LWS items per row: gws[0] = rows*NM_LWS, lws[0] = NM_LWS.
 * norm_rows_stats: the same, and Mean[r], InvStd[r] = 1/sqrt(var + eps) as float32 (the
 *   LayerNormalization Mean / InvStdDev outputs, stash_type float32).
 * norm_rows_team (GPU class): the same rows, statistics and outputs as norm_rows /
 *   norm_rows_stats, but a TEAM of tw consecutive work-items per row (tw a power of 2 in
 *   [32, NM_GLWS], chosen by the lowering from R) and NM_GLWS / tw rows per work-group:
 *   gws[0] = ceil(rows / (NM_GLWS / tw)) * NM_GLWS, lws[0] = NM_GLWS. Short rows (LayerNorm over
 *   320..1280 channels for 4096 tokens) then keep every lane busy and the barriers amortized over
 *   several rows; the team reads its row with consecutive items (coalesced). Items of a missing
 *   last row (row >= rows) take part in every barrier and touch no memory. has_stats == 1: also
 *   writes Mean[row] / InvStd[row] (otherwise those pointers are not read). Same NUMERICS RULE,
 *   same values as norm_rows up to the order of the float additions.
 * batchnorm: one work-item per element of X [N, C, S] (gws[0] = N*C*S):
 *     y = (x - mean[c]) * rsqrt(var[c] + eps) * scale[c] + bias[c]
 */
#ifndef NM_LWS
#define NM_LWS 128
#endif
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

/* Shared body of norm_rows / norm_rows_stats / norm_rows_team: row `row` (n = R, or 0 for a
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

__kernel void KN(norm_rows)(__global const T *X, __global const T *Scale,
                            __global const T *Bias, __global T *Y, int R, float eps, int rmod,
                            int rmul, int jdiv, int jmod, int has_bias, int center)
{
    __local float s[NM_LWS];
    float mean, inv;
    KN(nm_rows_body)(X, Scale, Bias, Y, R, eps, rmod, rmul, jdiv, jmod, has_bias, center, s,
                     (int)get_group_id(0), R, NM_LWS, &mean, &inv);
}

/* norm_rows that also stores each row's mean and inverse standard deviation (float32,
 * LayerNormalization outputs 1 and 2). */
__kernel void KN(norm_rows_stats)(__global const T *X, __global const T *Scale,
                                  __global const T *Bias, __global T *Y, int R, float eps,
                                  int rmod, int rmul, int jdiv, int jmod, int has_bias,
                                  int center, __global float *Mean, __global float *InvStd)
{
    __local float s[NM_LWS];
    float mean, inv;
    KN(nm_rows_body)(X, Scale, Bias, Y, R, eps, rmod, rmul, jdiv, jmod, has_bias, center, s,
                     (int)get_group_id(0), R, NM_LWS, &mean, &inv);
    if (get_local_id(0) == 0) {
        Mean[get_group_id(0)] = mean;
        InvStd[get_group_id(0)] = inv;
    }
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
