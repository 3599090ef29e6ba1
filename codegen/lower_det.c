/* lower_det.c — Det-11/22 (ops.def family "det") -> kernels/det.cl, one work-item per matrix.
 *
 * X [..., M, M] float32 -> Y [...]; the leading dims are folded into one batch B. The LU
 * factorization works in a cg_temp scratch copy of X (B*M*M floats, live during the node).
 * Assumes: shape inference ran (square last two dims checked there).
 * Guarantees: fatal (ir_fatal_node) on other dtypes or tensors of >= 2^31 elements.
 */
#include "codegen/lower.h"
#include "ref/ref_util.h"

#include <stdio.h>

bool lower_det(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const enum ir_dtype t = g->values[x].dtype;
    if (t != IR_F32)
        ir_fatal_node(g, n, "Det on %s is not supported yet (float32 only)", ir_dtype_name(t));
    const int64_t numel = ir_numel(g, x), B = ir_numel(g, y);
    const int64_t M = g->values[x].dims[g->values[x].rank - 1];
    if (numel >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "Det: input '%s' has %lld elements; the kernel indexes with 32-bit "
                      "ints (at most 2^31-1)", g->values[x].name, (long long)numel);
    if (B == 0) return true;
    /* cg_temp may move g->values: no pointer into it is held past this point */
    const uint32_t scratch = cg_temp(cg, node, IR_F32, numel > 0 ? numel : 1);
    const char *sfx = cg_use(cg, "det", IR_F32);
    char kname[64];
    snprintf(kname, sizeof kname, "det_%s", sfx);
    size_t gws[1] = {(size_t)B};
    cg_launch(cg, node, kname, 1, gws, NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_buf(cg, scratch);
    cg_arg_i32(cg, M);
    cg_arg_i32(cg, B);
    return true;
}
