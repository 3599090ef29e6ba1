/* gather.cl — Gather-13, GatherElements-13, GatherND-13 (ops.def "gather").
 * Instantiated per element SIZE of the data (T = uchar/ushort/uint/ulong); each kernel exists
 * for int64 (suffix _l) and int32 (suffix _i) indices, e.g. gather_l_u32.
 * Run-time indices: negative ones are wrapped (+dim) as the spec says; an index still out of
 * [0, dim) cannot raise an error inside a kernel, so it is CLAMPED into range (documented
 * deviation: the spec makes it an error; constant indices are checked at compile time).
 *
 *   gather(x, ind, y, n, A, I, K): x viewed as [O, A, I] (A = gathered axis), ind has K
 *     elements, y = [O, K, I]:  y[(o*K + k)*I + j] = x[(o*A + ind[k])*I + j].
 *   gather_el(x, ind, y, n, rank, A, axis, d0..d7, xs0..xs7): y and ind have dims d
 *     (right-aligned, rank used, axis counted from the left of those rank dims), x strides xs
 *     (aligned likewise); y[c] = x[c with c_axis replaced by ind[c]] (A = x dim on axis).
 *   gather_nd(x, ind, y, n, N, R, K, xb, xd0..xd7, xs0..xs7): batch-collapsed form:
 *     ind = [B, N, K], x = [B, xd0..xd(K-1), R] (batch stride xb, indexed-dim strides xs),
 *     y = [B, N, R]:  y[(b*N + m)*R + r] = x[b*xb + sum_j ind[b,m,j]*xs_j + r].
 * One work-item per output element (gws may be rounded up; i >= n exits).
 */
#ifndef O2C_KA_GATHER_IDX
#define O2C_KA_GATHER_IDX
/* Wraps a negative index once and clamps into [0, dim). */
static inline int ka_gidx(long v, int dim)
{
    if (v < 0) v += dim;
    return v < 0 ? 0 : (v >= dim ? dim - 1 : (int)v);
}
/* Source index of output element i of gather (x viewed [O, A, I], ind of K elements):
 * (o*A + ind[k])*I + j for i = (o*K + k)*I + j. */
#define KA_GATHER_SRC(i, ind, A, I, K)                                                        \
    (((i) / (I) / (K) * (A) + ka_gidx((long)(ind)[(i) / (I) % (K)], (A))) * (I) + (i) % (I))
/* gather from a float table stored as IEEE half (onnx2cl --weights-dtype f16: embeddings),
 * float output: as gather below, read with vload_half. */
#define KA_GATHER_H2F(IS, IT)                                                                 \
    __kernel void gather_h2f_##IS(__global const half *x, __global const IT *ind,             \
                                  __global float *y, int n, int A, int I, int K)              \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i < n) y[i] = vload_half(KA_GATHER_SRC(i, ind, A, I, K), x);                      \
    }
KA_GATHER_H2F(l, long)
KA_GATHER_H2F(i, int)
#endif

#define KA_GATHER(IS, IT)                                                                     \
    __kernel void KN(gather_##IS)(__global const T *x, __global const IT *ind, __global T *y, \
                                  int n, int A, int I, int K)                                 \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i < n) y[i] = x[KA_GATHER_SRC(i, ind, A, I, K)];                                  \
    }                                                                                         \
    __kernel void KN(gather_el_##IS)(__global const T *x, __global const IT *ind,             \
                                     __global T *y, int n, int rank, int A, int axis, int d0, \
                                     int d1, int d2, int d3, int d4, int d5, int d6, int d7,  \
                                     int xs0, int xs1, int xs2, int xs3, int xs4, int xs5,    \
                                     int xs6, int xs7)                                        \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const int d[8] = {d0, d1, d2, d3, d4, d5, d6, d7};                                    \
        const int xs[8] = {xs0, xs1, xs2, xs3, xs4, xs5, xs6, xs7};                           \
        const int ax = 8 - rank + axis;                                                       \
        int r = i, ox = 0;                                                                    \
        for (int k = 7; k >= 8 - rank; --k) {                                                 \
            const int c = r % d[k];                                                           \
            r /= d[k];                                                                        \
            ox += (k == ax ? ka_gidx((long)ind[i], A) : c) * xs[k];                           \
        }                                                                                     \
        y[i] = x[ox];                                                                         \
    }                                                                                         \
    __kernel void KN(gather_nd_##IS)(__global const T *x, __global const IT *ind,             \
                                     __global T *y, int n, int N, int R, int K, int xb,       \
                                     int xd0, int xd1, int xd2, int xd3, int xd4, int xd5,    \
                                     int xd6, int xd7, int xs0, int xs1, int xs2, int xs3,    \
                                     int xs4, int xs5, int xs6, int xs7)                      \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const int xd[8] = {xd0, xd1, xd2, xd3, xd4, xd5, xd6, xd7};                           \
        const int xs[8] = {xs0, xs1, xs2, xs3, xs4, xs5, xs6, xs7};                           \
        const int r = i % R;                                                                  \
        const int t = i / R;                                                                  \
        const int m = t % N;                                                                  \
        const int b = t / N;                                                                  \
        __global const IT *row = ind + (b * N + m) * K;                                       \
        int ox = b * xb + r;                                                                  \
        for (int j = 0; j < K; ++j) ox += ka_gidx((long)row[j], xd[j]) * xs[j];               \
        y[i] = x[ox];                                                                         \
    }
KA_GATHER(l, long)
KA_GATHER(i, int)
#undef KA_GATHER
