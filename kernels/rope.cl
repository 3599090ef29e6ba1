/* rope.cl — o2c.Rope (passes/fuse/rope.c, codegen/lower_rope.c): rotary position embedding
 *   y = x*cos + rot(x)*sin,  rot(x)[e0] = -x[e1], rot(x)[e1] = x[e0]
 * for each pair (e0, e1) of a row of x's last axis (D = 2*nh elements):
 *   inter = 1 (interleaved): (2i, 2i+1)      inter = 0: (i, i + nh)      i in [0, nh).
 * Layout: x and y dense [rows, D] (row-major); cos/sin read at
 *   sum_k rc_k * cs_k + e * csd   (rc = the row's coordinates over the collapsed row dims
 *   d0..d5, right-aligned, rank of them used; strides in elements, 0 on broadcast axes; csd = 0
 *   when cos has one element along D) — graph-computed tables such as [1,S,1,D] against
 *   x [B,S,H,D] are read in place, never expanded.
 * One work-item per pair (gws = rows*nh, rounded up; items past npairs exit): adjacent items
 * read adjacent pairs, so loads coalesce on GPUs, and PoCL vectorizes across the work-group.
 * Serves both kernel classes (an elementwise-shaped op: nothing to tile).
 */
__kernel void KN(rope)(__global const T *x, __global const T *c, __global const T *s,
                       __global T *y, int npairs, int nh, int inter, int rank, int d0,
                       int d1, int d2, int d3, int d4, int d5, int cs0, int cs1, int cs2, int cs3,
                       int cs4, int cs5, int ss0, int ss1, int ss2, int ss3, int ss4, int ss5,
                       int csd, int ssd)
{
    const int p = (int)get_global_id(0);
    if (p >= npairs) return;
    const int row = p / nh, i = p - row * nh;
    const int d[6] = {d0, d1, d2, d3, d4, d5};
    const int cs[6] = {cs0, cs1, cs2, cs3, cs4, cs5};
    const int ss[6] = {ss0, ss1, ss2, ss3, ss4, ss5};
    int r = row, co = 0, so = 0;
    for (int k = 5; k >= 6 - rank; --k) {
        const int q = r % d[k];
        r /= d[k];
        co += q * cs[k];
        so += q * ss[k];
    }
    const int e0 = inter ? 2 * i : i;
    const int e1 = inter ? 2 * i + 1 : i + nh;
    const int xo = row * 2 * nh;
    const T x0 = x[xo + e0], x1 = x[xo + e1];
    y[xo + e0] = x0 * c[co + e0 * csd] - x1 * s[so + e0 * ssd];
    y[xo + e1] = x1 * c[co + e1 * csd] + x0 * s[so + e1 * ssd];
}
