/* clip.cl — Clip-13 (ops.def "clip"): y[i] = min(max(x[i], lo), hi), x and y dense, n elements.
 *   clip(x, lo, hi, y, n, has_lo, has_hi): lo/hi are one-element buffers read only when
 *   has_lo/has_hi != 0 (the lowering passes x itself as a placeholder otherwise).
 * Order as in the spec: max with lo first, then min with hi (lo > hi gives hi everywhere);
 * NaN in x propagates. Element-type block: see unary.cl.
 */
#if O2C_TID == O2C_ID_f64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if O2C_TID == O2C_ID_f16
#define KA_CT float
#define KA_LD(p, i) vload_half((i), (p))
#define KA_ST(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define KA_CT T
#define KA_LD(p, i) ((p)[(i)])
#define KA_ST(p, i, v) ((p)[(i)] = (T)(v))
#endif

__kernel void KN(clip)(__global const T *x, __global const T *lo, __global const T *hi,
                       __global T *y, int n, int has_lo, int has_hi)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    KA_CT v = KA_LD(x, i);
    if (has_lo) {
        const KA_CT l = KA_LD(lo, 0);
        v = v < l ? l : v;
    }
    if (has_hi) {
        const KA_CT h = KA_LD(hi, 0);
        v = v > h ? h : v;
    }
    KA_ST(y, i, v);
}
#undef KA_CT
#undef KA_LD
#undef KA_ST
