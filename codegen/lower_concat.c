/* lower_concat.c — Concat-13 (ops.def family "concat"): one strided copy per non-empty input
 * into its slab of the output: with the output viewed as [outer, A, inner] (A = output dim on
 * `axis`, negative axis counted from the end), input k [outer, a_k, inner] lands at offset
 * (a_0 + .. + a_{k-1}) * inner. Inputs must share y's element type.
 * In place: when outer is 1 each slab is one contiguous run of y, and an input that codegen
 * accepts (codegen.c banner "offset views": slab offset a multiple of 512 bytes, input written
 * by a kernel, not a graph input/output, not placed elsewhere already) is written there by its
 * producer: no launch for it. Every other input keeps its copy.
 * Not done (issue 11 item 2, batch > 1): with outer > 1 an input is `outer` runs of a_k * inner
 * elements at stride A * inner in y, not one sub-buffer (SD UNets under classifier-free
 * guidance, batch 2: every up-block skip Concat). It would take producers that store at a row
 * stride: the conv kernels' multi-output store (passes/fuse/sibling_conv.c; kernels/fconv.cl,
 * gemm_gpu.cl write each member's channel range into its own tensor) generalized to a channel
 * offset and a channel total of a bigger tensor, so a Conv producing input k writes channels
 * [a_0 + .. + a_{k-1}, + a_k) of y directly; the views' lifetime rules (codegen.c) apply
 * unchanged, and inputs made by other kernels (GroupNorm, elementwise) keep their copies.
 */
#include "lower_ka.h"

bool lower_concat(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t y = n->outputs[0];
    const struct ir_value *yv = &g->values[y];
    const int r = yv->rank;
    int64_t axis = ir_attr_int(n, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        ir_fatal_node(g, n, "Concat: axis=%lld out of range for rank %d",
                      (long long)ir_attr_int(n, "axis", 0), r);
    ka_numel(g, node, y);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= yv->dims[k];
    for (int k = (int)axis + 1; k < r; k++) inner *= yv->dims[k];
    const int64_t A = yv->dims[axis];
    int64_t off = 0;
    for (uint32_t i = 0; i < n->ninputs; i++) {
        const uint32_t x = n->inputs[i];
        if (x == IR_NONE) continue;
        const struct ir_value *xv = &g->values[x];
        if (xv->dtype != yv->dtype)
            ir_fatal_node(g, n, "Concat: input %u is %s, output is %s", i,
                          ir_dtype_name(xv->dtype), ir_dtype_name(yv->dtype));
        if (xv->rank != r)
            ir_fatal_node(g, n, "Concat: input %u has rank %d, output %d", i, xv->rank, r);
        const int64_t a = xv->dims[axis];
        const int64_t dims[3] = {outer, a, inner};
        const int64_t xs[3] = {a * inner, inner, 1};
        const int64_t ys[3] = {A * inner, inner, 1};
        ka_move(cg, g, node, x, y, 3, dims, xs, 0, ys, off * inner, KA_X_IN_Y);
        off += a;
    }
    if (off != A) ir_fatal_node(g, n, "Concat: inputs add up to %lld along axis %lld, output has %lld",
                                (long long)off, (long long)axis, (long long)A);
    return true;
}
