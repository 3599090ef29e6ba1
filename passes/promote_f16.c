/* promote_f16.c — float16 nodes of the float32-only kernel families computed in float32.
 *
 * The matmul, conv, softmax, reduce, norm and pool kernels have no float16 variant. A node of
 * these families with a float16 input becomes
 *     y16 = Cast(op(Cast(a16 -> f32), Cast(b16 -> f32), ...) -> f16)
 * (every float16 input cast up, every float16 output cast back; other outputs, e.g. ArgMax
 * indices, unchanged).
 * Constant inputs (weights) fold to float32 constants, so their casts cost nothing at run time
 * (the weights file holds them as float32: twice the bytes of the float16 model). Accumulating in
 * float32 is at least as accurate as float16 accumulation; the final Cast rounds to nearest even
 * as ONNX Cast does. float64 is never demoted (it would silently lose precision): MatMul/Gemm
 * run it natively; the other families refuse it with a located error in codegen.
 * Runs after infer_fold (every dim known); new nodes are inferred and folded as they are made.
 * The output value keeps its id and name (it becomes the Cast's output).
 */
#include "passes.h"

#include <string.h>

static bool promotable(const struct ir_graph *g, const struct ir_node *n)
{
    static const char *const families[] = {"matmul", "conv", "softmax", "reduce", "norm", "pool"};
    const char *fam = ir_op_family(n->op);
    bool fam_ok = false;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) fam_ok |= strcmp(fam, families[i]) == 0;
    if (!fam_ok) return false;
    for (uint32_t k = 0; k < n->ninputs; k++)
        if (n->inputs[k] != IR_NONE && g->values[n->inputs[k]].dtype == IR_F16) return true;
    return false;
}

static uint32_t add_cast(struct ir_graph *g, uint32_t in, uint32_t out, enum ir_dtype to, const char *name,
                         int32_t onnx_index)
{
    if (out == IR_NONE) out = ir_value_add(g, ir_sprintf(g, "%s", name), IR_UNDEFINED, -1, NULL);
    uint32_t id = ir_node_add(g, IR_OP_CAST, name, "Cast", &in, 1, &out, 1);
    ir_attr_set_int(g, id, "to", to);
    g->nodes[id].onnx_index = onnx_index;
    infer_fold_node(g, id);
    return out;
}

/* A value/node name from `base` not used yet. */
static const char *fresh(struct ir_graph *g, const char *base)
{
    const char *s = base;
    for (unsigned k = 1; ir_value_find(g, s) != IR_NONE; k++) s = ir_sprintf(g, "%s_%u", base, k);
    return s;
}

bool pass_promote_f16(struct ir_graph *g)
{
    bool changed = false;
    uint32_t nn = g->nnodes;
    for (uint32_t i = 0; i < nn; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead || !promotable(g, n)) continue;
        const char *base = *n->name ? n->name : n->op_type;
        int32_t idx = n->onnx_index;
        uint32_t nin = n->ninputs, nout = n->noutputs;
        for (uint32_t k = 0; k < nin; k++) {
            uint32_t v = g->nodes[i].inputs[k];
            if (v == IR_NONE || g->values[v].dtype != IR_F16) continue;
            uint32_t c = add_cast(g, v, IR_NONE, IR_F32, fresh(g, ir_sprintf(g, "%s/in%u_f32", base, k)), idx);
            g->values[v].nuses--;
            g->values[c].nuses++;
            g->nodes[i].inputs[k] = c;
        }
        uint32_t back[16], y16[16];
        uint32_t nback = 0;
        for (uint32_t k = 0; k < nout && nback < 16; k++) {
            uint32_t y = g->nodes[i].outputs[k];
            if (y == IR_NONE || g->values[y].dtype != IR_F16) continue;
            uint32_t y32 = ir_value_add(g, fresh(g, ir_sprintf(g, "%s/out%u_f32", base, k)), IR_UNDEFINED, -1, NULL);
            g->nodes[i].outputs[k] = y32;
            g->values[y32].producer = i;
            g->values[y].producer = IR_NONE;
            back[nback] = y32;
            y16[nback++] = y;
        }
        infer_node(g, i);
        for (uint32_t k = 0; k < nback; k++)
            add_cast(g, back[k], y16[k], IR_F16, fresh(g, ir_sprintf(g, "%s/out_f16", base)), idx);
        changed = true;
    }
    if (changed) {
        ir_toposort(g);
        ir_recount(g);
    }
    return changed;
}
