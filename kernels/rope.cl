/* rope.cl — o2c.Rope (passes/fuse/rope.c, codegen/lower_rope.c): rotary position embedding
 *   y = x*cos + rot(x)*sin,  rot(x)[e0] = -x[e1], rot(x)[e1] = x[e0]
 * for each pair (e0, e1) of a row of x's last axis (D = 2*nh elements):
 *   inter = 1 (interleaved): (2i, 2i+1)      inter = 0: (i, i + nh)      i in [0, nh).
 * Layout: x and y dense [rows, D] (row-major); cos/sin read at
 *   sum_k rc_k * cs_k + e * csd   (rc = the row's coordinates over the collapsed row dims
 *   d0..d5, right-aligned, rank of them used; strides in elements, 0 on broadcast axes; csd = 0
 *   when cos has one element along D) — graph-computed tables such as [1,S,1,D] against
 *   x [B,S,H,D] are read in place, never expanded.
 * Kernels (codegen/lower_rope.c picks one per class):
 *   rope       (gpu class) one work-item per pair (gws = rows*nh rounded up; items past npairs
 *              exit): adjacent items read adjacent pairs, so loads coalesce;
 *   rope_rows  (cpu class) one work-item per row, the cos/sin offsets decoded once per row, a
 *              loop over its pairs with float2 (interleaved) / float4 (halves, nh % 4 == 0) loads
 *              where cos/sin are contiguous along D (csd = ssd = 1), scalar otherwise.
 * Instantiated for float32 only (T = float; the pass fuses float32 RoPEs).
 */
#ifndef ROPE_DECODE
/* cos/sin offsets co, so of row r: its coordinates over the collapsed row dims d0..d5
 * (right-aligned, `rank` of them), innermost first; no private arrays (dynamically indexed
 * ones spill to memory on GPUs and defeat PoCL's vectorizer). */
#define ROPE_STEP(k, r, co, so)                                                                \
    if (rank > 5 - k) {                                                                         \
        const int q = r % d##k;                                                                 \
        r /= d##k;                                                                              \
        co += q * cs##k;                                                                        \
        so += q * ss##k;                                                                        \
    }
#define ROPE_DECODE(r, co, so)                                                                 \
    ROPE_STEP(5, r, co, so) ROPE_STEP(4, r, co, so) ROPE_STEP(3, r, co, so)                     \
    ROPE_STEP(2, r, co, so) ROPE_STEP(1, r, co, so) ROPE_STEP(0, r, co, so)
#endif
__kernel void KN(rope)(__global const T *x, __global const T *c, __global const T *s,
                       __global T *y, int npairs, int nh, int inter, int rank, int d0,
                       int d1, int d2, int d3, int d4, int d5, int cs0, int cs1, int cs2, int cs3,
                       int cs4, int cs5, int ss0, int ss1, int ss2, int ss3, int ss4, int ss5,
                       int csd, int ssd)
{
    const int p = (int)get_global_id(0);
    if (p >= npairs) return;
    const int row = p / nh, i = p - row * nh;
    int r = row, co = 0, so = 0;
    ROPE_DECODE(r, co, so);
    const int e0 = inter ? 2 * i : i;
    const int e1 = inter ? 2 * i + 1 : i + nh;
    const int xo = row * 2 * nh;
    const T x0 = x[xo + e0], x1 = x[xo + e1];
    y[xo + e0] = x0 * c[co + e0 * csd] - x1 * s[so + e0 * ssd];
    y[xo + e1] = x1 * c[co + e1 * csd] + x0 * s[so + e1 * ssd];
}

/* The cpu-class form (banner): one work-item per row. */
__kernel void KN(rope_rows)(__global const T *x, __global const T *c, __global const T *s,
                            __global T *y, int rows, int nh, int inter, int rank, int d0, int d1,
                            int d2, int d3, int d4, int d5, int cs0, int cs1, int cs2, int cs3,
                            int cs4, int cs5, int ss0, int ss1, int ss2, int ss3, int ss4,
                            int ss5, int csd, int ssd)
{
    const int row = (int)get_global_id(0);
    if (row >= rows) return;
    int r = row, co = 0, so = 0;
    ROPE_DECODE(r, co, so);
    __global const T *xr = x + row * 2 * nh;
    __global T *yr = y + row * 2 * nh;
    __global const T *cr = c + co, *sr = s + so;
    if (inter && csd == 1 && ssd == 1) {
        for (int i = 0; i < nh; i++) {
            const float2 xv = vload2(i, xr);
            vstore2(xv * vload2(i, cr) + (float2)(-xv.y, xv.x) * vload2(i, sr), i, yr);
        }
    } else if (!inter && csd == 1 && ssd == 1 && nh % 4 == 0) {
        for (int i = 0; i < nh / 4; i++) {
            const float4 x0 = vload4(i, xr), x1 = vload4(i, xr + nh);
            vstore4(x0 * vload4(i, cr) - x1 * vload4(i, sr), i, yr);
            vstore4(x1 * vload4(i, cr + nh) + x0 * vload4(i, sr + nh), i, yr + nh);
        }
    } else {
        const int step = inter ? 2 : 1, other = inter ? 1 : nh;
        for (int i = 0; i < nh; i++) {
            const int e0 = i * step, e1 = e0 + other;
            const T x0 = xr[e0], x1 = xr[e1];
            yr[e0] = x0 * cr[e0 * csd] - x1 * sr[e0 * ssd];
            yr[e1] = x1 * cr[e1 * csd] + x0 * sr[e1 * ssd];
        }
    }
}
