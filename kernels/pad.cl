/* pad.cl — Pad-18/19/21 (ops.def "pad"), modes constant, reflect, edge, wrap.
 * Instantiated per element SIZE (T = uchar/ushort/uint/ulong).
 *   pad(x, cval, y, n, rank, mode, has_cval, d0..d7, xd0..xd7, pb0..pb7)
 *     y dense with dims d, x dense with dims xd (both right-aligned, rank used), pb = pads at
 *     the beginning of each axis (negative = crop). Output coordinate c maps to input
 *     coordinate c - pb; outside [0, xd):
 *       mode 0 constant: the element is cval[0] (has_cval != 0) or 0;
 *       mode 1 reflect:  mirrored without repeating the edge (numpy "reflect"; xd == 1 -> 0);
 *       mode 2 edge:     clamped;
 *       mode 3 wrap:     modulo xd.
 * One work-item per output element (gws may be rounded up; i >= n exits).
 */
__kernel void KN(pad)(__global const T *x, __global const T *cval, __global T *y, int n,
                      int rank, int mode, int has_cval, int d0, int d1, int d2, int d3, int d4,
                      int d5, int d6, int d7, int xd0, int xd1, int xd2, int xd3, int xd4,
                      int xd5, int xd6, int xd7, int pb0, int pb1, int pb2, int pb3, int pb4,
                      int pb5, int pb6, int pb7)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    const int d[8] = {d0, d1, d2, d3, d4, d5, d6, d7};
    const int xd[8] = {xd0, xd1, xd2, xd3, xd4, xd5, xd6, xd7};
    const int pb[8] = {pb0, pb1, pb2, pb3, pb4, pb5, pb6, pb7};
    int r = i, ox = 0, xstride = 1;
    for (int k = 7; k >= 8 - rank; --k) {
        const int c = r % d[k];
        r /= d[k];
        int s = c - pb[k];
        const int m = xd[k];
        if (s < 0 || s >= m) {
            if (mode == 0) {
                y[i] = has_cval ? cval[0] : (T)0;
                return;
            } else if (mode == 1) {
                if (m == 1) {
                    s = 0;
                } else {
                    const int p = 2 * (m - 1);
                    s %= p;
                    if (s < 0) s += p;
                    if (s >= m) s = p - s;
                }
            } else if (mode == 2) {
                s = s < 0 ? 0 : m - 1;
            } else {
                s %= m;
                if (s < 0) s += m;
            }
        }
        ox += s * xstride;
        xstride *= m;
    }
    y[i] = x[ox];
}
