/* ref.c — ref_eval(): dispatch of a node to the reference implementation of its op family.
 *
 * Assumes: shape inference ran (outputs have dtype and dims); inputs are constants, except the
 * input of Shape and Size, whose dims alone decide the result.
 * Guarantees: returns false without touching the graph when an input or output dtype is not
 * numeric/bool (strings, ...) or an input is not constant; otherwise fills every present output.
 */
#include "ref/ref_quant.h"
#include "ref/ref_util.h"

bool ref_eval(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    bool dims_only = n->op == IR_OP_SHAPE || n->op == IR_OP_SIZE;
    for (uint32_t k = 0; k < n->ninputs; k++) {
        uint32_t v = n->inputs[k];
        if (v == IR_NONE) continue;
        if (!dims_only && !g->values[v].data) return false;
        if (!dims_only && !ref_is_supported(g->values[v].dtype)) return false;
        if (dims_only && !g->values[v].dims_known) return false;
    }
    for (uint32_t k = 0; k < n->noutputs; k++) {
        uint32_t v = n->outputs[k];
        if (v == IR_NONE) continue;
        IR_ASSERT(g->values[v].dims_known);
        if (!ref_is_supported(g->values[v].dtype)) return false;
    }
    if (ir_op_flags(n->op) & IR_F_ELEMWISE) return ref_eval_elementwise(g, node);
    switch (n->op) {
    case IR_OP_RESIZE:
    case IR_OP_UPSAMPLE:
        return ref_eval_resize(g, node);
    case IR_OP_CONSTANT_OF_SHAPE:
    case IR_OP_RANGE:
    case IR_OP_EYE_LIKE:
        return ref_eval_fill(g, node);
    case IR_OP_MATMUL:
    case IR_OP_GEMM:
    case IR_OP_CONV:
    case IR_OP_CONV_TRANSPOSE:
    case IR_OP_MAX_POOL:
    case IR_OP_AVERAGE_POOL:
    case IR_OP_GLOBAL_AVERAGE_POOL:
    case IR_OP_GLOBAL_MAX_POOL:
    case IR_OP_LP_POOL:
        return ref_eval_linalg(g, node);
    case IR_OP_GRID_SAMPLE:
        return ref_eval_gridsample(g, node);
    case IR_OP_ROI_ALIGN:
        return ref_eval_roialign(g, node);
    case IR_OP_DET:
        return ref_eval_det(g, node);
    case IR_OP_SCATTER_ELEMENTS:
    case IR_OP_SCATTER:
    case IR_OP_SCATTER_ND:
    case IR_OP_TENSOR_SCATTER:
    case IR_OP_REVERSE_SEQUENCE:
    case IR_OP_MAX_UNPOOL:
        return ref_eval_scatter(g, node);
    case IR_OP_QUANTIZE_LINEAR:
    case IR_OP_DEQUANTIZE_LINEAR:
    case IR_OP_DYNAMIC_QUANTIZE_LINEAR:
        return ref_eval_quant(g, node);
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX:
    case IR_OP_HARDMAX:
    case IR_OP_INSTANCE_NORMALIZATION:
    case IR_OP_GROUP_NORMALIZATION:
    case IR_OP_LAYER_NORMALIZATION:
    case IR_OP_BATCH_NORMALIZATION:
        return ref_eval_norm(g, node);
    default:
        break;
    }
    if (ir_op_flags(n->op) & IR_F_REDUCTION || n->op == IR_OP_CUM_SUM || n->op == IR_OP_TOP_K)
        return ref_eval_reduce(g, node);
    return ref_eval_movement(g, node);
}
