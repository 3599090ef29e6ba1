/* lower_topk.c — TopK-1/10/11 (ops.def family "topk") -> kernels/topk.cl.
 * k is a constant input (infer_node refuses a run-time k: it decides the output shape); axis
 * (default -1), largest (default 1); sorted is honoured by always sorting (the spec leaves the
 * order of sorted=0 unspecified). One launch over every input element (rank by counting, see the
 * kernel's banner). Element types: float32, float64 (device with fp64) and the integer types;
 * float16 / bfloat16 models reach here as float32 (passes/promote_f16.c); bool is refused by name.
 */
#include "lower_ka.h"

#include <stdio.h>

bool lower_topk(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], v = n->outputs[0], ix = n->noutputs > 1 ? n->outputs[1] : IR_NONE;
    const struct ir_value *xv = &g->values[x];
    const enum ir_dtype t = xv->dtype;
    if (t == IR_BOOL || t == IR_F16 || t == IR_BF16)
        ir_fatal_node(g, n, "TopK on %s is not supported by the OpenCL kernels", ir_dtype_name(t));
    if (ix == IR_NONE || v == IR_NONE)
        ir_fatal_node(g, n, "TopK without its Values or Indices output is not supported");
    int64_t axis = ir_attr_int(n, "axis", -1);
    if (axis < 0) axis += xv->rank;
    IR_ASSERT(axis >= 0 && axis < xv->rank);
    int64_t R = xv->dims[axis], inner = 1, K = g->values[v].dims[axis];
    for (int64_t d = axis + 1; d < xv->rank; d++) inner *= xv->dims[d];
    const int64_t cnt = ka_numel(g, node, x);
    if (cnt == 0 || K == 0) return true;
    const char *sfx = cg_use(cg, "topk", t);
    char kname[64];
    snprintf(kname, sizeof kname, "topk_%s", sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, v);
    cg_arg_buf(cg, ix);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, inner);
    cg_arg_i32(cg, K);
    cg_arg_i32(cg, ir_attr_int(n, "largest", 1) != 0);
    cg_arg_i32(cg, cnt);
    return true;
}
