/* where.cl — Where(cond, x, y) with numpy broadcasting over three inputs (ops.def "where").
 * Instantiated per element SIZE (T = uchar/ushort/uint/ulong for 1/2/4/8-byte types: selection
 * never looks at the value), cond is bool (uchar 0/1, any non-zero = true).
 *   where(c, x, y, out, n)                       c, x, y, out dense with n elements;
 *   where_bc(c, x, y, out, n, rank, d0..d5, sc0..sc5, sx0..sx5, sy0..sy5)
 *       out dense with dims d (right-aligned, d[6-rank..5] used); each input read at the sum
 *       of coordinate * stride (0 on broadcast axes). One work-item per output element.
 */
__kernel void KN(where)(__global const uchar *c, __global const T *x, __global const T *y,
                        __global T *out, int n)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    out[i] = c[i] ? x[i] : y[i];
}

__kernel void KN(where_bc)(__global const uchar *c, __global const T *x, __global const T *y,
                           __global T *out, int n, int rank, int d0, int d1, int d2, int d3,
                           int d4, int d5, int sc0, int sc1, int sc2, int sc3, int sc4, int sc5,
                           int sx0, int sx1, int sx2, int sx3, int sx4, int sx5, int sy0,
                           int sy1, int sy2, int sy3, int sy4, int sy5)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    const int d[6] = {d0, d1, d2, d3, d4, d5};
    const int sc[6] = {sc0, sc1, sc2, sc3, sc4, sc5};
    const int sx[6] = {sx0, sx1, sx2, sx3, sx4, sx5};
    const int sy[6] = {sy0, sy1, sy2, sy3, sy4, sy5};
    int r = i, oc = 0, ox = 0, oy = 0;
    for (int k = 5; k >= 6 - rank; --k) {
        const int q = r % d[k];
        r /= d[k];
        oc += q * sc[k];
        ox += q * sx[k];
        oy += q * sy[k];
    }
    out[i] = c[oc] ? x[ox] : y[oy];
}
