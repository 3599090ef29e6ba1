/* trilu.cl — Trilu-14 (ops.def "trilu"). Instantiated per element SIZE (uchar..ulong).
 *   trilu(x, y, n, R, C, upper, k): x, y dense [..., R, C]; element (r, j) of each matrix is
 *   kept when upper ? j - r >= k : j - r <= k, else 0. One work-item per element.
 */
__kernel void KN(trilu)(__global const T *x, __global T *y, int n, int R, int C, int upper,
                        int k)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    const int j = i % C;
    const int r = (i / C) % R;
    const int keep = upper ? (j - r >= k) : (j - r <= k);
    y[i] = keep ? x[i] : (T)0;
}
