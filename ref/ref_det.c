/* ref_det.c — reference Det-11/22: determinants of a batch of square matrices.
 *
 * X [..., M, M] -> Y [...]: LU factorization with partial pivoting (largest |pivot| in the
 * column, first one on ties) per matrix; det = (-1)^swaps * prod(U diagonal). M = 0 gives 1
 * (the empty product, as numpy.linalg.det). A zero pivot column gives 0.
 * Assumes: shapes checked by infer_node; float dtypes (the spec allows float types only).
 * Guarantees: arithmetic in double on a temporary copy, rounded once to the output dtype.
 */
#include <math.h>
#include <stdlib.h>

#include "ref/ref_util.h"

bool ref_eval_det(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const struct ir_value *x = &g->values[n->inputs[0]];
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    const int64_t M = x->dims[x->rank - 1];
    const int64_t B = ref_numel_v(&g->values[ov]);
    void *out = ref_alloc_out(g, ov);
    double *a = ref_tmp(sizeof(double) * (size_t)(M * M > 0 ? M * M : 1));
    for (int64_t b = 0; b < B; b++) {
        for (int64_t i = 0; i < M * M; i++) a[i] = ref_get_f(x->data, t, b * M * M + i);
        double det = 1;
        for (int64_t k = 0; k < M; k++) {
            int64_t p = k;
            for (int64_t i = k + 1; i < M; i++)
                if (fabs(a[i * M + k]) > fabs(a[p * M + k])) p = i;
            if (a[p * M + k] == 0) {
                det = 0;
                break;
            }
            if (p != k) {
                for (int64_t j = 0; j < M; j++) {
                    double s = a[k * M + j];
                    a[k * M + j] = a[p * M + j];
                    a[p * M + j] = s;
                }
                det = -det;
            }
            double piv = a[k * M + k];
            det *= piv;
            for (int64_t i = k + 1; i < M; i++) {
                double f = a[i * M + k] / piv;
                for (int64_t j = k + 1; j < M; j++) a[i * M + j] -= f * a[k * M + j];
            }
        }
        ref_set_f(out, t, b, det);
    }
    free(a);
    return true;
}
