/* lower_transpose.c — Transpose-13, DepthToSpace-13 (DCR, CRD), SpaceToDepth (DCR, CRD) (ops.def
 * family "transpose") as one strided copy each (kernels/transpose.cl, per element size):
 *   Transpose:     y[c] = x[c permuted]; perm attribute (default: reversed axes);
 *   DepthToSpace:  x [N,C,H,W] viewed DCR [N,b,b,C/b²,H,W] perm (0,3,4,1,5,2), or
 *                  CRD [N,C/b²,b,b,H,W] perm (0,1,4,2,5,3) -> y [N,C/b²,H*b,W*b];
 *   SpaceToDepth:  x viewed [N,C,H/b,b,W/b,b] perm DCR (0,3,5,1,2,4) or CRD (0,1,3,5,2,4)
 *                  -> y [N,C*b²,H/b,W/b] (mode: opset 26+, default DCR).
 * Axes contiguous in both x and y are merged before launch (e.g. [0,2,3,1] of NCHW is a 3-axis
 * copy). Fatal (located) on a bad perm, blocksize or mode.
 */
#include "lower_ka.h"

#include <string.h>

/* y (dense, dims xv[perm[k]]) = x viewed as dense dims xv, permuted. */
static void permuted_copy(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t x,
                          uint32_t y, int rank, const int64_t *xv, const int64_t *perm)
{
    int64_t xsd[IR_MAX_RANK * 2], yd[IR_MAX_RANK * 2], xs[IR_MAX_RANK * 2], ys[IR_MAX_RANK * 2];
    ka_dense_strides(rank, xv, xsd);
    for (int k = 0; k < rank; k++) {
        yd[k] = xv[perm[k]];
        xs[k] = xsd[perm[k]];
    }
    ka_dense_strides(rank, yd, ys);
    ka_strided_copy(cg, g, node, x, y, rank, yd, xs, 0, ys, 0);
}

bool lower_transpose(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x];
    ka_numel(g, node, x);
    ka_numel(g, node, y);
    if (n->op == IR_OP_TRANSPOSE) {
        const int r = xv->rank;
        int64_t perm[IR_MAX_RANK];
        size_t np = 0;
        const int64_t *p = ir_attr_ints(n, "perm", &np);
        if (p && (int)np != r)
            ir_fatal_node(g, n, "Transpose: perm has %zu entries for a rank-%d input", np, r);
        bool seen[IR_MAX_RANK] = {false};
        for (int k = 0; k < r; k++) {
            perm[k] = p ? p[k] : r - 1 - k;
            if (perm[k] < 0 || perm[k] >= r || seen[perm[k]])
                ir_fatal_node(g, n, "Transpose: perm is not a permutation of 0..%d (entry %d = %lld)",
                              r - 1, k, (long long)perm[k]);
            seen[perm[k]] = true;
        }
        permuted_copy(cg, g, node, x, y, r, xv->dims, perm);
        return true;
    }
    const int64_t b = ir_attr_int(n, "blocksize", 0);
    if (xv->rank != 4)
        ir_fatal_node(g, n, "%s: input must be 4-D (is rank %d)", ir_op_name(n->op), xv->rank);
    const int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    if (b < 1) ir_fatal_node(g, n, "%s: blocksize=%lld (must be >= 1)", ir_op_name(n->op), (long long)b);
    if (n->op == IR_OP_DEPTH_TO_SPACE) {
        if (C % (b * b) != 0)
            ir_fatal_node(g, n, "DepthToSpace: blocksize=%lld: C=%lld is not a multiple of %lld",
                          (long long)b, (long long)C, (long long)(b * b));
        const char *mode = ir_attr_string(n, "mode", "DCR");
        if (strcmp(mode, "DCR") == 0) {
            const int64_t v[6] = {N, b, b, C / (b * b), H, W}, perm[6] = {0, 3, 4, 1, 5, 2};
            permuted_copy(cg, g, node, x, y, 6, v, perm);
        } else if (strcmp(mode, "CRD") == 0) {
            const int64_t v[6] = {N, C / (b * b), b, b, H, W}, perm[6] = {0, 1, 4, 2, 5, 3};
            permuted_copy(cg, g, node, x, y, 6, v, perm);
        } else {
            ir_fatal_node(g, n, "DepthToSpace: mode='%s' is not supported (DCR, CRD)", mode);
        }
        return true;
    }
    if (n->op == IR_OP_SPACE_TO_DEPTH) {
        if (H % b != 0 || W % b != 0)
            ir_fatal_node(g, n, "SpaceToDepth: blocksize=%lld does not divide H=%lld, W=%lld",
                          (long long)b, (long long)H, (long long)W);
        const char *mode = ir_attr_string(n, "mode", "DCR");
        const int64_t v[6] = {N, C, H / b, b, W / b, b};
        const int64_t dcr[6] = {0, 3, 5, 1, 2, 4}, crd[6] = {0, 1, 3, 5, 2, 4};
        if (strcmp(mode, "DCR") == 0)
            permuted_copy(cg, g, node, x, y, 6, v, dcr);
        else if (strcmp(mode, "CRD") == 0)
            permuted_copy(cg, g, node, x, y, 6, v, crd);
        else
            ir_fatal_node(g, n, "SpaceToDepth: mode='%s' is not supported (DCR, CRD)", mode);
        return true;
    }
    return false;
}
