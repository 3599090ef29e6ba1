/* det.cl — Det-11/22: determinant of each square matrix of a batch.
 *
 * Layout: X [B, M, M] dense row-major (leading dims folded into B), Y [B], scratch A [B, M, M]
 * (float, a copy the factorization overwrites). One work-item per matrix (gws[0] = B): LU
 * factorization with partial pivoting (largest |pivot| in the column, the first on ties), det =
 * (-1)^swaps * prod(pivots); a zero pivot column gives 0; M = 0 gives 1. Arithmetic in float.
 */

__kernel void KN(det)(__global const T *X, __global T *Y, __global float *A, int M, int B)
{
    const int b = (int)get_global_id(0);
    if (b >= B) return;
    const long mm = (long)M * M;
    __global float *a = A + b * mm;
    const __global T *x = X + b * mm;
    for (long i = 0; i < mm; i++) a[i] = (float)x[i];
    float det = 1.0f;
    for (int k = 0; k < M; k++) {
        int p = k;
        float best = fabs(a[(long)k * M + k]);
        for (int i = k + 1; i < M; i++) {
            const float v = fabs(a[(long)i * M + k]);
            if (v > best) {
                best = v;
                p = i;
            }
        }
        if (a[(long)p * M + k] == 0.0f) {
            det = 0.0f;
            break;
        }
        if (p != k) {
            for (int j = 0; j < M; j++) {
                const float s = a[(long)k * M + j];
                a[(long)k * M + j] = a[(long)p * M + j];
                a[(long)p * M + j] = s;
            }
            det = -det;
        }
        const float piv = a[(long)k * M + k];
        det *= piv;
        for (int i = k + 1; i < M; i++) {
            const float f = a[(long)i * M + k] / piv;
            for (int j = k + 1; j < M; j++) a[(long)i * M + j] -= f * a[(long)k * M + j];
        }
    }
    Y[b] = (T)det;
}
