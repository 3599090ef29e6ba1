/* lower_trilu.c — Trilu-14 (ops.def family "trilu") -> kernels/trilu.cl (per element size).
 * upper attribute (default 1), k = optional constant input (default 0; read here, clamped to
 * +-(R+C), which keeps the result). x is [..., R, C] (rank >= 2). Fatal (located) on a run-time
 * k or rank < 2.
 */
#include "lower_ka.h"

#include <stdio.h>

bool lower_trilu(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0], kv = ir_input(n, 1);
    const struct ir_value *xv = &g->values[x];
    if (xv->rank < 2) ir_fatal_node(g, n, "Trilu: input rank %d < 2", xv->rank);
    int64_t k = 0;
    if (kv != IR_NONE) {
        if (!ir_is_const(g, kv))
            ir_fatal_node(g, n, "Trilu: k is computed at run time (only a constant k is supported)");
        if (ir_numel(g, kv) != 1) ir_fatal_node(g, n, "Trilu: k must have one element");
        k = ir_const_i64(g, kv, 0);
    }
    const int64_t R = xv->dims[xv->rank - 2], C = xv->dims[xv->rank - 1];
    if (k > R + C) k = R + C;
    if (k < -(R + C)) k = -(R + C);
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    const char *sfx = cg_use(cg, "trilu", ka_size_type(g, node, xv->dtype));
    char kname[64];
    snprintf(kname, sizeof kname, "trilu_%s", sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, C);
    cg_arg_i32(cg, ir_attr_int(n, "upper", 1) != 0);
    cg_arg_i32(cg, k);
    return true;
}
