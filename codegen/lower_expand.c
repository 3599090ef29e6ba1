/* lower_expand.c — Expand-13 and Tile-13 (ops.def family "expand") as one strided copy:
 *   Expand: y[c] = x[c broadcast] (x's strides 0 on broadcast axes; the output dims are the
 *           inferred broadcast of x and the shape input);
 *   Tile:   repeats r_k (constant input, read here): the iteration space is the 2r axes
 *           [r_0, d_0, r_1, d_1, ...] with x strides [0, xs_0, 0, xs_1, ...] and y strides
 *           [d_0*ys_0, ys_0, ...].
 * Fatal (located) on run-time repeats or a repeat count that disagrees with the output.
 */
#include "lower_ka.h"

bool lower_expand(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *yv = &g->values[y];
    if (xv->dtype != yv->dtype)
        ir_fatal_node(g, n, "%s: output type %s differs from input %s", ir_op_name(n->op),
                      ir_dtype_name(yv->dtype), ir_dtype_name(xv->dtype));
    ka_numel(g, node, x);
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    const int r = yv->rank;
    if (n->op == IR_OP_EXPAND) {
        int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
        ka_bcast_strides(g, node, x, r, yv->dims, xs);
        ka_dense_strides(r, yv->dims, ys);
        ka_strided_copy(cg, g, node, x, y, r, yv->dims, xs, 0, ys, 0);
        return true;
    }
    const uint32_t rep = n->inputs[1];
    if (!ir_is_const(g, rep))
        ir_fatal_node(g, n, "Tile: repeats are computed at run time (only constant repeats are "
                      "supported)");
    if (ir_numel(g, rep) != xv->rank || r != xv->rank)
        ir_fatal_node(g, n, "Tile: %lld repeats for a rank-%d input", (long long)ir_numel(g, rep),
                      xv->rank);
    int64_t xsd[IR_MAX_RANK], ysd[IR_MAX_RANK];
    ka_dense_strides(r, xv->dims, xsd);
    ka_dense_strides(r, yv->dims, ysd);
    int64_t dims[IR_MAX_RANK * 2], xs[IR_MAX_RANK * 2], ys[IR_MAX_RANK * 2];
    for (int k = 0; k < r; k++) {
        const int64_t t = ir_const_i64(g, rep, k);
        if (t < 0 || t * xv->dims[k] != yv->dims[k])
            ir_fatal_node(g, n, "Tile: repeats[%d]=%lld does not match the output dim %lld", k,
                          (long long)t, (long long)yv->dims[k]);
        dims[2 * k] = t;
        dims[2 * k + 1] = xv->dims[k];
        xs[2 * k] = 0;
        xs[2 * k + 1] = xsd[k];
        ys[2 * k] = xv->dims[k] * ysd[k];
        ys[2 * k + 1] = ysd[k];
    }
    ka_strided_copy(cg, g, node, x, y, 2 * r, dims, xs, 0, ys, 0);
    return true;
}
