/* scatter.cl — scatter family (ops.def "scatter"): ScatterElements / Scatter, ScatterND,
 * TensorScatter, ReverseSequence, MaxUnpool.
 * Instantiated per element type T. Pure movements (and scatters with reduction "none") use the
 * unsigned type of the element's size (u8/u16/u32/u64; codegen/lower_scatter.c); reductions use
 * the real dtype (f16 through vload_half/vstore_half_rte, computed in float). Each kernel exists
 * for int64 (suffix _l) and int32 (suffix _i) indices, e.g. scatter_el_l_f32.
 *
 * Copy-then-update: the lowering first copies data into y (ka_strided_copy), then:
 *   scatter_el(y, ind, upd, ncol, rank, axis, A, d0..d7, ys0..ys7, red)
 *     updates/ind have dims d (right-aligned to 8, `rank` used, axis counted from the left of
 *     those), y strides ys (aligned likewise), A = y's dim on axis. ONE WORK-ITEM PER COLUMN
 *     (every coordinate but the axis one; ncol columns) walks the axis serially in order:
 *     y[c with c_axis = ind[c]] = f(y[..], upd[c]). Two updates can only collide inside one
 *     column, so reductions over duplicate indices apply in row-major order (as the ONNX
 *     reference) with no race; "none" with duplicates: the last one wins.
 *   scatter_nd(y, ind, upd, R, N, K, xd0..xd7, xs0..xs7, red)
 *     ind = [N, K] index tuples into the first K dims of y (dims xd, strides xs), upd = [N, R]
 *     slices of R elements. ONE WORK-ITEM PER SLICE POSITION r < R walks the N tuples serially
 *     in order (slices start at multiples of R, so different r never collide): correctness
 *     first; with element indices (R = 1) this is one serial work-item.
 *   red: 0 none (store), 1 add, 2 mul, 3 max, 4 min (max/min propagate NaN like
 *     numpy.maximum/minimum; bool: add = or, mul = and).
 *   tscatter(past, upd, wi, y, n, M, S, sa, s0, circ, has_wi)  TensorScatter-24, one work-item
 *     per output element (a gather: no race): y viewed [outer, M, sa], upd [outer, S, sa],
 *     batch b = i / s0, w = has_wi ? wi[b] : 0, j = s - w (circular: mod M, into [0, M));
 *     y = 0 <= j < S ? upd[outer, j, :] : past.
 *   revseq(x, lens, y, n, T, st, B, sb)  ReverseSequence-10: time axis dim T stride st, batch
 *     axis dim B stride sb; L = lens[b]; y[.., t, ..] = x[.., t < L ? L-1-t : t, ..].
 *   unpool_init(y, win, ny, nw); unpool_claim(ind, win, n, ninf);
 *   unpool_write(x, ind, win, y, n, ninf, rank, d0..d7, os0..os7)  MaxUnpool: y = 0, win = -1;
 *     then each input element i claims win[ind[i]] with atomic_max, and the element that won
 *     (the LAST one in order, as the ONNX reference) writes x[i] at the flat index ind[i] of
 *     the inferred shape d (right-aligned), re-strided to the output strides os (output_shape
 *     may be larger: the inferred block sits at the origin). win is an int scratch buffer.
 * RUN-TIME OUT-OF-RANGE INDICES ARE SKIPPED (no write), never clamped: ScatterElements and
 * ScatterND wrap a negative index once (+dim), then an index still outside [0, dim) drops that
 * update (ScatterND: the whole tuple's slice); TensorScatter drops positions outside [0, M) in
 * linear mode; MaxUnpool drops indices outside [0, numel(inferred)). ReverseSequence CLAMPS
 * sequence_lens into [0, T] (it only permutes inside one sequence, so no write leaves y).
 * The spec makes all of these errors; kernels cannot raise, and constant indices are checked at
 * compile time (codegen/lower_scatter.c). No work-item ever writes outside y.
 * gws may be rounded up: every kernel exits for i >= its count.
 */
#if O2C_TID == O2C_ID_f64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if O2C_TID == O2C_ID_f16
#define SC_CT float
#define SC_LD(p, i) vload_half((i), (p))
#define SC_ST(p, i, v) vstore_half_rte((v), (i), (p))
#define SC_CP(y, o, u, i) SC_ST(y, o, SC_LD(u, i))
#else
#define SC_CT T
#define SC_LD(p, i) ((p)[(i)])
#define SC_ST(p, i, v) ((p)[(i)] = (T)(v))
#define SC_CP(y, o, u, i) ((y)[(o)] = (u)[(i)])
#endif

#ifndef O2C_SCATTER_IDX
#define O2C_SCATTER_IDX
/* Wraps a negative index once; -1 if still outside [0, dim) (the update is skipped). */
static inline int sc_idx(long v, int dim)
{
    if (v < 0) v += dim;
    return v < 0 || v >= dim ? -1 : (int)v;
}
#endif

/* y[o] = f(y[o], u[i]) for reduction red (see banner). */
static inline void KN(sc_apply)(__global T *y, int o, __global const T *u, int i, int red)
{
    if (red == 0) {
        SC_CP(y, o, u, i);
        return;
    }
    const SC_CT a = SC_LD(y, o), b = SC_LD(u, i);
#if O2C_TID == O2C_ID_b
    SC_ST(y, o, (red == 1 || red == 3) ? (a | b) : (a & b));
#else
    SC_CT v;
    if (red == 1) v = a + b;
    else if (red == 2) v = a * b;
    else if (red == 3) v = (a != a || a > b) ? a : b;
    else v = (a != a || a < b) ? a : b;
    SC_ST(y, o, v);
#endif
}

#define SC_KERNELS(IS, IT)                                                                    \
    __kernel void KN(scatter_el_##IS)(__global T *y, __global const IT *ind,                  \
                                      __global const T *upd, int ncol, int rank, int axis,    \
                                      int A, int d0, int d1, int d2, int d3, int d4, int d5,  \
                                      int d6, int d7, int ys0, int ys1, int ys2, int ys3,     \
                                      int ys4, int ys5, int ys6, int ys7, int red)            \
    {                                                                                         \
        const int c = (int)get_global_id(0);                                                  \
        if (c >= ncol) return;                                                                \
        const int d[8] = {d0, d1, d2, d3, d4, d5, d6, d7};                                    \
        const int ys[8] = {ys0, ys1, ys2, ys3, ys4, ys5, ys6, ys7};                           \
        const int ax = 8 - rank + axis;                                                       \
        int rem = c, ob = 0, ub = 0, us = 1, usax = 1;                                        \
        for (int k = 7; k >= 8 - rank; --k) {                                                 \
            if (k == ax) {                                                                    \
                usax = us;                                                                    \
            } else {                                                                          \
                const int co = rem % d[k];                                                    \
                rem /= d[k];                                                                  \
                ob += co * ys[k];                                                             \
                ub += co * us;                                                                \
            }                                                                                 \
            us *= d[k];                                                                       \
        }                                                                                     \
        for (int j = 0; j < d[ax]; ++j) {                                                     \
            const int ui = ub + j * usax;                                                     \
            const int a = sc_idx((long)ind[ui], A);                                           \
            if (a >= 0) KN(sc_apply)(y, ob + a * ys[ax], upd, ui, red);                       \
        }                                                                                     \
    }                                                                                         \
    __kernel void KN(scatter_nd_##IS)(__global T *y, __global const IT *ind,                  \
                                      __global const T *upd, int R, int N, int K, int xd0,    \
                                      int xd1, int xd2, int xd3, int xd4, int xd5, int xd6,   \
                                      int xd7, int xs0, int xs1, int xs2, int xs3, int xs4,   \
                                      int xs5, int xs6, int xs7, int red)                     \
    {                                                                                         \
        const int r = (int)get_global_id(0);                                                  \
        if (r >= R) return;                                                                   \
        const int xd[8] = {xd0, xd1, xd2, xd3, xd4, xd5, xd6, xd7};                           \
        const int xs[8] = {xs0, xs1, xs2, xs3, xs4, xs5, xs6, xs7};                           \
        for (int m = 0; m < N; ++m) {                                                         \
            int off = 0;                                                                      \
            int ok = 1;                                                                       \
            for (int j = 0; j < K; ++j) {                                                     \
                const int a = sc_idx((long)ind[m * K + j], xd[j]);                            \
                ok = ok && a >= 0;                                                            \
                off += a * xs[j];                                                             \
            }                                                                                 \
            if (ok) KN(sc_apply)(y, off + r, upd, m * R + r, red);                            \
        }                                                                                     \
    }                                                                                         \
    __kernel void KN(tscatter_##IS)(__global const T *past, __global const T *upd,            \
                                    __global const IT *wi, __global T *y, int n, int M,       \
                                    int S, int sa, int s0, int circ, int has_wi)              \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const int inner = i % sa;                                                             \
        const int t = i / sa;                                                                 \
        const int s = t % M;                                                                  \
        const int outer = t / M;                                                              \
        const long w = has_wi ? (long)wi[i / s0] : 0;                                         \
        long j = (long)s - w;                                                                 \
        if (circ) j = ((j % M) + M) % M;                                                      \
        if (j >= 0 && j < S) SC_CP(y, i, upd, (outer * S + (int)j) * sa + inner);              \
        else SC_CP(y, i, past, i);                                                            \
    }                                                                                         \
    __kernel void KN(revseq_##IS)(__global const T *x, __global const IT *lens,               \
                                  __global T *y, int n, int T_, int st, int B, int sb)        \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const int t = (i / st) % T_;                                                          \
        const int b = (i / sb) % B;                                                           \
        const long lv = (long)lens[b];                                                        \
        const int L = lv < 0 ? 0 : (lv > T_ ? T_ : (int)lv);                                  \
        SC_CP(y, i, x, t < L ? i + (L - 1 - 2 * t) * st : i);                                 \
    }                                                                                         \
    __kernel void KN(unpool_claim_##IS)(__global const IT *ind, volatile __global int *win,   \
                                        int n, int ninf)                                      \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const long id = (long)ind[i];                                                         \
        if (id >= 0 && id < ninf) atomic_max(&win[id], i);                                    \
    }                                                                                         \
    __kernel void KN(unpool_write_##IS)(__global const T *x, __global const IT *ind,          \
                                        __global const int *win, __global T *y, int n,        \
                                        int ninf, int rank, int d0, int d1, int d2, int d3,   \
                                        int d4, int d5, int d6, int d7, int os0, int os1,     \
                                        int os2, int os3, int os4, int os5, int os6, int os7) \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const long id = (long)ind[i];                                                         \
        if (id < 0 || id >= ninf || win[id] != i) return;                                     \
        const int d[8] = {d0, d1, d2, d3, d4, d5, d6, d7};                                    \
        const int os[8] = {os0, os1, os2, os3, os4, os5, os6, os7};                           \
        int rem = (int)id, off = 0;                                                           \
        for (int k = 7; k >= 8 - rank; --k) {                                                 \
            off += (rem % d[k]) * os[k];                                                      \
            rem /= d[k];                                                                      \
        }                                                                                     \
        SC_CP(y, off, x, i);                                                                  \
    }
SC_KERNELS(l, long)
SC_KERNELS(i, int)
#undef SC_KERNELS

__kernel void KN(unpool_init)(__global T *y, __global int *win, int ny, int nw)
{
    const int i = (int)get_global_id(0);
    if (i < ny) SC_ST(y, i, (SC_CT)0);
    if (i < nw) win[i] = -1;
}
#undef SC_CT
#undef SC_LD
#undef SC_ST
#undef SC_CP
