/* lower_where.c — Where-16 (ops.def family "where") -> kernels/where.cl, instantiated per
 * element size of x/y. One launch over the output shape: the same-shape kernel when cond, x
 * and y all have the output's dims, else where_bc with the collapsed broadcast iteration space.
 * cond must be bool; x and y share one element type.
 */
#include "lower_ka.h"

#include <stdio.h>

static bool same_dims(const struct ir_value *a, const struct ir_value *b)
{
    if (a->rank != b->rank) return false;
    for (int k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

bool lower_where(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t c = n->inputs[0], x = n->inputs[1], yv = n->inputs[2], out = n->outputs[0];
    if (g->values[c].dtype != IR_BOOL)
        ir_fatal_node(g, n, "Where: condition has element type %s (must be bool)",
                      ir_dtype_name(g->values[c].dtype));
    if (g->values[x].dtype != g->values[yv].dtype)
        ir_fatal_node(g, n, "Where: X is %s but Y is %s", ir_dtype_name(g->values[x].dtype),
                      ir_dtype_name(g->values[yv].dtype));
    const int64_t cnt = ka_numel(g, node, out);
    if (cnt == 0) return true;
    const char *sfx = cg_use(cg, "where", ka_size_type(g, node, g->values[x].dtype));
    const struct ir_value *ov = &g->values[out];
    char kname[64];
    if (same_dims(&g->values[c], ov) && same_dims(&g->values[x], ov) &&
        same_dims(&g->values[yv], ov)) {
        snprintf(kname, sizeof kname, "where_%s", sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, c);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, yv);
        cg_arg_buf(cg, out);
        cg_arg_i32(cg, cnt);
        return true;
    }
    int64_t dims[IR_MAX_RANK * 2];
    int64_t s[4][IR_MAX_RANK * 2];
    const int rank = ov->rank;
    for (int k = 0; k < rank; k++) dims[k] = ov->dims[k];
    ka_bcast_strides(g, node, c, rank, dims, s[0]);
    ka_bcast_strides(g, node, x, rank, dims, s[1]);
    ka_bcast_strides(g, node, yv, rank, dims, s[2]);
    ka_dense_strides(rank, dims, s[3]);
    const int r = ka_collapse(rank, dims, 4, s);
    if (r > KA_EW_RANK)
        ir_fatal_node(g, n, "Where: broadcasting needs %d non-mergeable axes (the kernels "
                      "handle %d)", r, KA_EW_RANK);
    snprintf(kname, sizeof kname, "where_bc_%s", sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, c);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, yv);
    cg_arg_buf(cg, out);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, r);
    for (int which = 0; which < 4; which++)
        for (int k = 0; k < KA_EW_RANK; k++) {
            const int j = k - (KA_EW_RANK - r);
            int64_t v = which == 0 ? (j >= 0 ? dims[j] : 1) : (j >= 0 ? s[which - 1][j] : 0);
            cg_arg_i32(cg, v);
        }
    return true;
}
