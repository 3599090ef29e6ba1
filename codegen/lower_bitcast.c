/* lower_bitcast.c — BitCast-26 (ops.def family "bitcast"): no kernel, the output shares the
 * input's device buffer.
 *
 * Assumes: inference checked that input and output element types have the same size
 * (ref_bitcast_dtype), so the output's bytes are exactly the input's bytes, read as another
 * type (little-endian on every OpenCL device onnx2cl targets, as ONNX requires).
 * Guarantees: no launch; the memory plan keeps the shared buffer alive for both values.
 * BitCast is not an IR view (IR_F_VIEW) because passes that walk through views (e.g. the
 * attention fusion) assume the element type does not change.
 */
#include "lower.h"

#include "ref/ref_quant.h"

bool lower_bitcast(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (n->op != IR_OP_BIT_CAST) return false;
    ref_bitcast_dtype(g, n); /* fatal for a size mismatch or an unsupported type */
    cg_alias(cg, n->outputs[0], n->inputs[0]);
    return true;
}
