/* lower_softmax.c — Softmax / LogSoftmax / Hardmax -> kernels/softmax.cl.
 *
 * IR form (ir/ir.h): "_flatten"=1 marks the opset < 13 semantics: the input is coerced to 2-D
 * [prod(dims[:axis]), prod(dims[axis:])] and normalized over the second dim (default axis 1);
 * "_flatten"=0 (opset 13+) normalizes along dims[axis] alone (default axis -1). Both become the
 * kernel's [outer, R, inner] view: flatten -> inner = 1, R = prod(dims[axis:]).
 * Kernel variants (lower.h: cg_variant): the CPU variant uses one work-group per row
 * (softmax_wg, lws 128) for long rows and one work-item per row (softmax_seq) for short ones;
 * the GPU variant always reduces a row across a work-group (a row per work-item leaves a GPU's
 * lanes idle and its loads uncoalesced). When both pick the work-group kernel, one launch
 * serves every class.
 * Assumes: shape inference ran. float32 and float64 (statistics in double, cl_khr_fp64).
 * Guarantees: fatal (ir_fatal_node) for other dtypes, a bad axis, or >= 2^31 elements.
 */
#include "codegen/lower.h"

#include <stdio.h>

/* Work-group size of softmax_wg (SM_LWS in kernels/softmax.cl). */
#define SOFTMAX_LWS 128

/* One launch of node's (Log/Hard)Softmax: a work-group per row (wg) or a work-item per row. */
static void launch_softmax(struct cg_ctx *cg, uint32_t node, int mode, enum ir_dtype t,
                           uint32_t x, uint32_t y, int64_t R, int64_t inner, int64_t rows, bool wg)
{
    const char *sfx = cg_use(cg, "softmax", t);
    char kname[64];
    if (wg && mode == 2) snprintf(kname, sizeof kname, "hardmax_wg_%s", sfx);
    else snprintf(kname, sizeof kname, "softmax_%s_%s", wg ? "wg" : "seq", sfx);
    size_t gws[1] = {(size_t)(rows * (wg ? SOFTMAX_LWS : 1))}, lws[1] = {SOFTMAX_LWS};
    cg_launch(cg, node, kname, 1, gws, wg ? lws : NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, inner);
    if (!(wg && mode == 2)) cg_arg_i32(cg, mode);
    if (!wg) cg_arg_i32(cg, rows);
}

bool lower_softmax(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    int mode;
    switch (n->op) {
    case IR_OP_SOFTMAX: mode = 0; break;
    case IR_OP_LOG_SOFTMAX: mode = 1; break;
    case IR_OP_HARDMAX: mode = 2; break;
    default: return false;
    }
    uint32_t x = n->inputs[0], y = n->outputs[0];
    enum ir_dtype t = g->values[y].dtype;
    if (t != IR_F32 && t != IR_F64)
        ir_fatal_node(g, n, "%s on %s is not supported yet (float32, float64)", ir_op_name(n->op),
                      ir_dtype_name(t));
    const struct ir_value *xv = &g->values[x];
    int64_t total = ir_numel(g, x);
    if (total >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "%s: tensor '%s' has %lld elements; the kernels index with 32-bit "
                      "ints (at most 2^31-1 elements)",
                      ir_op_name(n->op), xv->name, (long long)total);
    bool flatten = ir_attr_int(n, "_flatten", 0) != 0;
    int rank = xv->rank;
    int64_t axis = ir_attr_int(n, "axis", flatten ? 1 : -1);
    int64_t outer = 1, R = 1, inner = 1;
    if (rank > 0) {
        if (axis < -rank || axis >= rank)
            ir_fatal_node(g, n, "%s axis=%lld is out of range for rank %d", ir_op_name(n->op),
                          (long long)axis, rank);
        if (axis < 0) axis += rank;
        for (int k = 0; k < axis; k++) outer *= xv->dims[k];
        if (flatten) {
            for (int k = (int)axis; k < rank; k++) R *= xv->dims[k];
        } else {
            R = xv->dims[axis];
            for (int k = (int)axis + 1; k < rank; k++) inner *= xv->dims[k];
        }
    }
    if (total == 0) return true;
    int64_t rows = outer * inner;
    bool wg_cpu = R >= 512 || (R >= 64 && rows < 256);
    if (wg_cpu) {
        launch_softmax(cg, node, mode, t, x, y, R, inner, rows, true);
    } else {
        cg_variant(cg, CG_VARIANT_CPU);
        launch_softmax(cg, node, mode, t, x, y, R, inner, rows, false);
        cg_variant(cg, CG_VARIANT_GPU);
        launch_softmax(cg, node, mode, t, x, y, R, inner, rows, true);
    }
    return true;
}

