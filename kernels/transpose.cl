/* transpose.cl — the generic strided copy behind Transpose, DepthToSpace, SpaceToDepth, Slice,
 * Split, Concat, Expand and Tile (their lowerings describe each as one or more strided copies).
 * Instantiated per element SIZE: T = uchar/ushort/uint/ulong for 1/2/4/8-byte types.
 *
 *   copy_strided(x, y, n, rank, xoff, yoff, d0..d7, xs0..xs7, ys0..ys7)
 *     iteration space: dims d (right-aligned: d[8-rank..7] used), n = prod(d) elements;
 *     element i at coordinates c:  y[yoff + sum c_k*ys_k] = x[xoff + sum c_k*xs_k].
 *     Strides may be 0 (broadcast: Expand/Tile) or negative (Slice with negative steps).
 *     One work-item per element (gws may be rounded up; i >= n exits). Every y element of the
 *     iteration space must be distinct (the lowerings guarantee it).
 *   copy_contig(x, y, n, xoff, yoff): y[yoff + i] = x[xoff + i] (collapsed to one run).
 */
__kernel void KN(copy_strided)(__global const T *x, __global T *y, int n, int rank, int xoff,
                               int yoff, int d0, int d1, int d2, int d3, int d4, int d5, int d6,
                               int d7, int xs0, int xs1, int xs2, int xs3, int xs4, int xs5,
                               int xs6, int xs7, int ys0, int ys1, int ys2, int ys3, int ys4,
                               int ys5, int ys6, int ys7)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    const int d[8] = {d0, d1, d2, d3, d4, d5, d6, d7};
    const int xs[8] = {xs0, xs1, xs2, xs3, xs4, xs5, xs6, xs7};
    const int ys[8] = {ys0, ys1, ys2, ys3, ys4, ys5, ys6, ys7};
    int r = i, ox = xoff, oy = yoff;
    for (int k = 7; k >= 8 - rank; --k) {
        const int c = r % d[k];
        r /= d[k];
        ox += c * xs[k];
        oy += c * ys[k];
    }
    y[oy] = x[ox];
}

__kernel void KN(copy_contig)(__global const T *x, __global T *y, int n, int xoff, int yoff)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    y[yoff + i] = x[xoff + i];
}
