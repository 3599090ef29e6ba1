/* norm.cl — InstanceNormalization-6, GroupNormalization-18/21, LayerNormalization-17 (output 0),
 * BatchNormalization-15 (inference form).
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
 *   One work-group of exactly NM_LWS items per row: gws[0] = rows*NM_LWS, lws[0] = NM_LWS.
 * norm_rows_stats: the same, and Mean[r], InvStd[r] = 1/sqrt(var + eps) as float32 (the
 *   LayerNormalization Mean / InvStdDev outputs, stash_type float32).
 * batchnorm: one work-item per element of X [N, C, S] (gws[0] = N*C*S):
 *     y = (x - mean[c]) * rsqrt(var[c] + eps) * scale[c] + bias[c]
 */
#ifndef NM_LWS
#define NM_LWS 128
#endif

#ifndef O2C_NORM_HELPERS
#define O2C_NORM_HELPERS
/* Sum over a work-group of NM_LWS items; every item gets the result. */
static float nm_wg_sum(__local float *s, float v)
{
    const int lid = (int)get_local_id(0);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = NM_LWS / 2; off > 0; off >>= 1) {
        if (lid < off) s[lid] += s[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
#endif

/* Shared body of norm_rows / norm_rows_stats; writes the row's mean and 1/sqrt(var+eps). */
static void KN(nm_rows_body)(__global const T *X, __global const T *Scale,
                             __global const T *Bias, __global T *Y, int R, float eps, int rmod,
                             int rmul, int jdiv, int jmod, int has_bias, __local float *s,
                             float *mean_out, float *inv_out)
{
    const int row = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    const __global T *x = X + row * R;
    __global T *y = Y + row * R;
    const float x0 = (float)x[0]; /* shift (NUMERICS RULE of kernels/gnorm.cl) */
    float sum = 0.0f;
    for (int j = lid; j < R; j += NM_LWS) sum += (float)x[j] - x0;
    const float m = nm_wg_sum(s, sum) / (float)R; /* mean - x0 */
    float sq = 0.0f;
    for (int j = lid; j < R; j += NM_LWS) {
        const float d = ((float)x[j] - x0) - m;
        sq += d * d;
    }
    const float var = nm_wg_sum(s, sq) / (float)R;
    const float inv = rsqrt(var + eps);
    const int abase = (row % rmod) * rmul;
    for (int j = lid; j < R; j += NM_LWS) {
        const int a = abase + (j / jdiv) % jmod;
        float v = (((float)x[j] - x0) - m) * inv * (float)Scale[a];
        if (has_bias) v += (float)Bias[a];
        y[j] = (T)v;
    }
    const float mean = x0 + m;
    *mean_out = mean;
    *inv_out = inv;
}

__kernel void KN(norm_rows)(__global const T *X, __global const T *Scale,
                            __global const T *Bias, __global T *Y, int R, float eps, int rmod,
                            int rmul, int jdiv, int jmod, int has_bias)
{
    __local float s[NM_LWS];
    float mean, inv;
    KN(nm_rows_body)(X, Scale, Bias, Y, R, eps, rmod, rmul, jdiv, jmod, has_bias, s, &mean, &inv);
}

/* norm_rows that also stores each row's mean and inverse standard deviation (float32,
 * LayerNormalization outputs 1 and 2). */
__kernel void KN(norm_rows_stats)(__global const T *X, __global const T *Scale,
                                  __global const T *Bias, __global T *Y, int R, float eps,
                                  int rmod, int rmul, int jdiv, int jmod, int has_bias,
                                  __global float *Mean, __global float *InvStd)
{
    __local float s[NM_LWS];
    float mean, inv;
    KN(nm_rows_body)(X, Scale, Bias, Y, R, eps, rmod, rmul, jdiv, jmod, has_bias, s, &mean, &inv);
    if (get_local_id(0) == 0) {
        Mean[get_group_id(0)] = mean;
        InvStd[get_group_id(0)] = inv;
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
