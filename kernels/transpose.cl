/* transpose.cl — the generic strided copy behind Transpose, DepthToSpace, SpaceToDepth, Slice,
 * Split, Concat, Expand and Tile (their lowerings describe each as one or more strided copies).
 * Instantiated per element SIZE: T = uchar/ushort/uint/ulong for 1/2/4/8-byte types.
 *
 *   copy_strided(x, y, nitems, inner, nch, xoff, yoff, d0..d6, xs0..xs7, ys0..ys7)
 *     iteration space: dims [d0, .., d6, inner] (collapsed by the lowering, padded with leading
 *     1s); element at coordinates c:  y[yoff + sum c_k*ys_k] = x[xoff + sum c_k*xs_k].
 *     Strides may be 0 (broadcast: Expand/Tile) or negative (Slice with negative steps).
 *     Each work-item copies KA_CH consecutive elements of one row of the innermost axis
 *     (nch = ceil(inner / KA_CH) chunks per row, nitems = nch * rows; items >= nitems exit):
 *     outer coordinates are decomposed once per chunk (per-element div/mod was ~15x slower on
 *     PoCL). Every y element of the iteration space must be distinct (lowerings guarantee it).
 *   copy_contig(x, y, n, xoff, yoff): y[yoff + i] = x[xoff + i] (collapsed to one run).
 */
#ifndef KA_CH
#define KA_CH 256
#endif
__kernel void KN(copy_strided)(__global const T *x, __global T *y, int nitems, int inner, int nch,
                               int xoff, int yoff, int d0, int d1, int d2, int d3, int d4, int d5,
                               int d6, int xs0, int xs1, int xs2, int xs3, int xs4, int xs5,
                               int xs6, int xs7, int ys0, int ys1, int ys2, int ys3, int ys4,
                               int ys5, int ys6, int ys7)
{
    const int id = (int)get_global_id(0);
    if (id >= nitems) return;
    int r = id / nch;
    const int j0 = (id - r * nch) * KA_CH;
    const int j1 = min(inner, j0 + KA_CH);
    int ox = xoff, oy = yoff, c;
    c = r % d6; r /= d6; ox += c * xs6; oy += c * ys6;
    c = r % d5; r /= d5; ox += c * xs5; oy += c * ys5;
    c = r % d4; r /= d4; ox += c * xs4; oy += c * ys4;
    c = r % d3; r /= d3; ox += c * xs3; oy += c * ys3;
    c = r % d2; r /= d2; ox += c * xs2; oy += c * ys2;
    c = r % d1; r /= d1; ox += c * xs1; oy += c * ys1;
    ox += r * xs0;
    oy += r * ys0;
    for (int j = j0; j < j1; j++) y[oy + j * ys7] = x[ox + j * xs7];
}

__kernel void KN(copy_contig)(__global const T *x, __global T *y, int n, int xoff, int yoff)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    y[yoff + i] = x[xoff + i];
}
