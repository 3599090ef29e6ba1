/* reduce.cl — Reduce* (ONNX -18), ArgMax/ArgMin (-13), CumSum (-14); also GlobalAverage/MaxPool.
 *
 * Layout: X dense, viewed as [outer, R, inner]; one output per (o, i) (nout = outer*inner,
 * output index = o*inner + i, dense), reducing x[o, 0..R-1, i] (stride inner). Reductions over
 * several non-adjacent axes are run by the lowering as several passes through scratch buffers.
 *
 * reduce_<op>_{seq,wg}(X, Y, R, inner, pre, post, scale, nout), op in sum, max, min, prod, lse:
 *   acc = op over j of pre(x[o, j, i]);  y = post(acc)
 *   pre:  0 x, 1 |x|, 2 x*x                 post: 0 acc, 1 acc/scale, 2 sqrt(acc), 3 log(acc)
 *   (Mean passes the element count as scale: exact in float up to 2^24, so f64 means are exact)
 *   lse (float types only): acc = max + log(sum exp(x - max)) (stable), pre/post unused.
 *   max/min propagate NaN. Accumulation: float for f32, double for f64, T for integer types
 *   (wraps like T).
 * argmax/argmin_{seq,wg}(X, Yidx(long), R, inner, last, nout): index of the first (last when
 *   last != 0) extreme element, NaN as onnxruntime does: ignored, except that a NaN at index 0
 *   is the result (see rd_arg_better).
 * cumsum(X, Y, R, inner, exclusive, reverse, nlines): running sums along R, one work-item per
 *   line (gws[0] = nlines = outer*inner); Y has X's shape.
 * _seq: one work-item per output, gws[0] = nout.  _wg: one work-group of exactly RD_LWS items per
 * output, gws[0] = nout*RD_LWS, lws[0] = RD_LWS, strided loads + __local tree reduction.
 */
#ifndef RD_LWS
#define RD_LWS 128
#endif

#ifndef O2C_REDUCE_DEFS
#define O2C_REDUCE_DEFS
#define RD_CAT3(a, b) a##_##b
#define RD_CAT(a, b) RD_CAT3(a, b)
#define RD_ISF_f32 1
#define RD_ISF_f64 1
#define RD_ACC_f32 float
#define RD_ACC_f64 double
#endif

#if RD_CAT(RD_ISF, TS)
#define RD_FLOAT 1
#define ACC RD_CAT(RD_ACC, TS)
#define RD_ISNAN(x) isnan(x)
#else
#define RD_FLOAT 0
#define ACC T
#define RD_ISNAN(x) false
#endif

static ACC KN(rd_pre)(ACC v, int pre)
{
    if (pre == 1) return v < (ACC)0 ? -v : v;
    if (pre == 2) return v * v;
    return v;
}

static ACC KN(rd_post)(ACC v, int post, float scale)
{
#if RD_FLOAT
    if (post == 1) return v / (ACC)scale;
    if (post == 2) return sqrt(v);
    if (post == 3) return log(v);
#endif
    return v;
}

static ACC KN(rd_sum)(ACC a, ACC b) { return a + b; }
static ACC KN(rd_prod)(ACC a, ACC b) { return a * b; }
static ACC KN(rd_max)(ACC a, ACC b)
{
    if (RD_ISNAN(a)) return a;
    return (b > a || RD_ISNAN(b)) ? b : a;
}
static ACC KN(rd_min)(ACC a, ACC b)
{
    if (RD_ISNAN(a)) return a;
    return (b < a || RD_ISNAN(b)) ? b : a;
}

/* INIT: identity of the combine (for max/min the first element is used instead). */
#define RD_DEF(NAME, INIT)                                                                     \
    __kernel void KN(reduce_##NAME##_seq)(__global const T *X, __global T *Y, int R, int inner, \
                                          int pre, int post, float scale, int nout)            \
    {                                                                                          \
        const int o = (int)get_global_id(0);                                                   \
        if (o >= nout) return;                                                                 \
        const __global T *x = X + (o / inner) * R * inner + o % inner;                         \
        ACC acc = KN(rd_pre)((ACC)x[0], pre);                                                  \
        for (int j = 1; j < R; j++) acc = KN(rd_##NAME)(acc, KN(rd_pre)((ACC)x[j * inner], pre)); \
        Y[o] = (T)KN(rd_post)(acc, post, scale);                                               \
    }                                                                                          \
    __kernel void KN(reduce_##NAME##_wg)(__global const T *X, __global T *Y, int R, int inner,  \
                                         int pre, int post, float scale, int nout)             \
    {                                                                                          \
        __local ACC s[RD_LWS];                                                                 \
        const int o = (int)get_group_id(0);                                                    \
        const int lid = (int)get_local_id(0);                                                  \
        const __global T *x = X + (o / inner) * R * inner + o % inner;                         \
        ACC acc = (lid < R) ? KN(rd_pre)((ACC)x[lid * inner], pre) : (ACC)(INIT);              \
        for (int j = lid + RD_LWS; j < R; j += RD_LWS)                                         \
            acc = KN(rd_##NAME)(acc, KN(rd_pre)((ACC)x[j * inner], pre));                     \
        s[lid] = acc;                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        for (int off = RD_LWS / 2; off > 0; off >>= 1) {                                       \
            if (lid < off && lid + off < R) s[lid] = KN(rd_##NAME)(s[lid], s[lid + off]);      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        }                                                                                      \
        if (lid == 0) Y[o] = (T)KN(rd_post)(s[0], post, scale);                                \
    }

RD_DEF(sum, 0)
RD_DEF(prod, 1)
RD_DEF(max, 0)
RD_DEF(min, 0)
#undef RD_DEF

#if RD_FLOAT
__kernel void KN(reduce_lse_seq)(__global const T *X, __global T *Y, int R, int inner, int pre,
                                 int post, float scale, int nout)
{
    const int o = (int)get_global_id(0);
    if (o >= nout) return;
    const __global T *x = X + (o / inner) * R * inner + o % inner;
    ACC m = (ACC)x[0];
    for (int j = 1; j < R; j++) m = KN(rd_max)(m, (ACC)x[j * inner]);
    ACC s = 0;
    for (int j = 0; j < R; j++) s += exp((ACC)x[j * inner] - m);
    Y[o] = (T)(m + log(s));
}

__kernel void KN(reduce_lse_wg)(__global const T *X, __global T *Y, int R, int inner, int pre,
                                int post, float scale, int nout)
{
    __local ACC s[RD_LWS];
    const int o = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    const __global T *x = X + (o / inner) * R * inner + o % inner;
    ACC m = (ACC)(-INFINITY);
    for (int j = lid; j < R; j += RD_LWS) m = KN(rd_max)(m, (ACC)x[j * inner]);
    s[lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = RD_LWS / 2; off > 0; off >>= 1) {
        if (lid < off) s[lid] = KN(rd_max)(s[lid], s[lid + off]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    ACC acc = 0;
    for (int j = lid; j < R; j += RD_LWS) acc += exp((ACC)x[j * inner] - m);
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = RD_LWS / 2; off > 0; off >>= 1) {
        if (lid < off) s[lid] += s[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) Y[o] = (T)(m + log(s[0]));
}
#endif

/* Is (v, i) a better arg-extreme than (bv, bi)? bi < 0 = nothing yet. onnxruntime semantics
 * (a sequential scan "v > best"): a NaN at index 0 wins (it sticks as the running best), any
 * other NaN never wins; ties go to the smaller index, or the larger with select_last_index. */
static bool KN(rd_arg_better)(T v, int i, T bv, int bi, int ismax, int last)
{
    if (i < 0) return false;
    if (bi < 0) return true;
    const bool vn = RD_ISNAN(v), bn = RD_ISNAN(bv);
    if (vn || bn) {
        if (vn && i == 0) return true;
        if (bn && bi == 0) return false;
        return !vn; /* a non-NaN beats a NaN that is not at index 0 */
    }
    if (v == bv) return last ? i > bi : i < bi;
    return ismax ? v > bv : v < bv;
}

#define RD_ARG_DEF(NAME, ISMAX)                                                                \
    __kernel void KN(NAME##_seq)(__global const T *X, __global long *Y, int R, int inner,      \
                                 int last, int nout)                                           \
    {                                                                                          \
        const int o = (int)get_global_id(0);                                                   \
        if (o >= nout) return;                                                                 \
        const __global T *x = X + (o / inner) * R * inner + o % inner;                         \
        T bv = x[0];                                                                           \
        int bi = 0;                                                                            \
        for (int j = 1; j < R; j++) {                                                          \
            const T v = x[j * inner];                                                          \
            if (KN(rd_arg_better)(v, j, bv, bi, ISMAX, last)) {                                \
                bv = v;                                                                        \
                bi = j;                                                                        \
            }                                                                                  \
        }                                                                                      \
        Y[o] = (long)bi;                                                                       \
    }                                                                                          \
    __kernel void KN(NAME##_wg)(__global const T *X, __global long *Y, int R, int inner,       \
                                int last, int nout)                                            \
    {                                                                                          \
        __local T sv[RD_LWS];                                                                  \
        __local int si[RD_LWS];                                                                \
        const int o = (int)get_group_id(0);                                                    \
        const int lid = (int)get_local_id(0);                                                  \
        const __global T *x = X + (o / inner) * R * inner + o % inner;                         \
        T bv = (T)0;                                                                           \
        int bi = -1;                                                                           \
        for (int j = lid; j < R; j += RD_LWS) {                                                \
            const T v = x[j * inner];                                                          \
            if (KN(rd_arg_better)(v, j, bv, bi, ISMAX, last)) {                                \
                bv = v;                                                                        \
                bi = j;                                                                        \
            }                                                                                  \
        }                                                                                      \
        sv[lid] = bv;                                                                          \
        si[lid] = bi;                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        for (int off = RD_LWS / 2; off > 0; off >>= 1) {                                       \
            if (lid < off &&                                                                   \
                KN(rd_arg_better)(sv[lid + off], si[lid + off], sv[lid], si[lid], ISMAX, last)) { \
                sv[lid] = sv[lid + off];                                                       \
                si[lid] = si[lid + off];                                                       \
            }                                                                                  \
            barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        }                                                                                      \
        if (lid == 0) Y[o] = (long)si[0];                                                      \
    }

RD_ARG_DEF(argmax, 1)
RD_ARG_DEF(argmin, 0)
#undef RD_ARG_DEF

__kernel void KN(cumsum)(__global const T *X, __global T *Y, int R, int inner, int exclusive,
                         int reverse, int nlines)
{
    const int o = (int)get_global_id(0);
    if (o >= nlines) return;
    const int base = (o / inner) * R * inner + o % inner;
    const __global T *x = X + base;
    __global T *y = Y + base;
    ACC acc = 0;
    for (int t = 0; t < R; t++) {
        const int j = reverse ? R - 1 - t : t;
        const ACC v = (ACC)x[j * inner];
        if (exclusive) {
            y[j * inner] = (T)acc;
            acc += v;
        } else {
            acc += v;
            y[j * inner] = (T)acc;
        }
    }
}

#undef RD_FLOAT
#undef ACC
#undef RD_ISNAN
