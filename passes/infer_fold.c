/* infer_fold.c — shape inference and constant folding in one topological sweep.
 *
 * For each live node in order: infer its output dtypes and dims (infer_node); then, if every
 * present input is constant (or the op only needs input shapes: Shape, Size — also when made
 * inside an expansion, e.g. an If branch copy, so shape-only If conditions there fold), evaluate it on
 * the host with the reference implementation (ref_eval) and erase the node, its outputs now
 * being constants. Folded outputs larger than FOLD_MAX_BYTES are left to run on the device
 * (e.g. a huge Expand of zeros), unless every consumer is itself foldable shape arithmetic.
 * Provenance of folded constants (ir_value.shape_dep / weight_dep; the weights file holds only
 * constants whose bytes do not depend on --shape, codegen/codegen.c): Shape/Size of a run-time
 * value is shape-dependent, other folds inherit their inputs' bits (views, Expand and Tile of a
 * weight only the weight's: their bytes follow from it and the output dims, which the weights
 * layout hash covers). A node that would
 * mix a weight with shape-dependent data (e.g. CLIP's position embedding, Gather(table,
 * Slice(position_ids, 0, seq))) is not folded unless it is shape arithmetic: it runs on the
 * device, so the weights file keeps the table whatever the sequence length.
 * Parameters (ops.def IR_F_PARAMS: Resize scales, Reshape shape, Pad pads, Slice starts, ...)
 * must be constants once shapes are bound, so before a node is inferred the producers of a
 * parameter that is not constant yet are evaluated regardless of that rule and of the size
 * limit's "keep on the device" (fold_param): e.g. `Concat([1., 1.], Shape(T)[2:] / Shape(X)[2:])
 * -> Resize scales`, where the float initializer [1, 1] met shape-dependent data. Such a
 * constant belongs to the build (shape_dep), never to the weights file.
 * Requires: graph inputs specialized (pass_specialize_shapes). Guarantees: every live value
 * has concrete dims.
 */
#include "passes.h"
#include "../ref/ref.h"
#include "passes/expand/expand.h"

#include <stdint.h>
#include <string.h>

#define FOLD_MAX_BYTES (64u << 20)

/* Shape / Size need only the input's dims. */
static bool fold_shape_op(struct ir_graph *g, uint32_t i)
{
    struct ir_node *n = &g->nodes[i];
    const struct ir_value *x = &g->values[n->inputs[0]];
    uint32_t out = n->outputs[0];
    if (n->op == IR_OP_SIZE) {
        int64_t *d = ir_alloc(g, 8);
        *d = ir_numel(g, n->inputs[0]);
        struct ir_value *o = &g->values[out];
        o->dtype = IR_I64;
        o->rank = 0;
        o->dims_known = true;
        o->data = d;
        o->nbytes = 8;
        return true;
    }
    int64_t r = x->rank;
    int64_t start = ir_attr_int(n, "start", 0), end = ir_attr_int(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    if (start < 0) start = 0;
    if (start > r) start = r;
    if (end < 0) end = 0;
    if (end > r) end = r;
    int64_t len = end > start ? end - start : 0;
    int64_t *d = ir_alloc(g, (size_t)(len ? len : 1) * 8);
    for (int64_t k = 0; k < len; k++) d[k] = x->dims[start + k];
    struct ir_value *o = &g->values[out];
    o->dtype = IR_I64;
    o->rank = 1;
    o->dims[0] = len;
    o->dims_known = true;
    o->data = d;
    o->nbytes = (size_t)len * 8;
    return true;
}

/* Evaluates node i on the host (ref_eval) and erases it, its outputs now constants with the
 * provenance bits sdep / wdep (see the banner). False, changing nothing, when ref_eval declines. */
static bool eval_erase(struct ir_graph *g, uint32_t i, bool sdep, bool wdep)
{
    if (!ref_eval(g, i)) return false;
    const struct ir_node *n = &g->nodes[i];
    for (uint32_t k = 0; k < n->noutputs; k++)
        if (n->outputs[k] != IR_NONE) {
            g->values[n->outputs[k]].producer = IR_NONE;
            g->values[n->outputs[k]].shape_dep = sdep;
            g->values[n->outputs[k]].weight_dep = wdep;
        }
    ir_node_erase(g, i);
    return true;
}

bool infer_fold_node(struct ir_graph *g, uint32_t i)
{
    struct ir_node *n;
    infer_node(g, i);
    n = &g->nodes[i];
    if (n->op == IR_OP_SHAPE || n->op == IR_OP_SIZE) { /* only dims needed: folds in any scope */
        const bool run_time = !ir_is_const(g, n->inputs[0]);
        fold_shape_op(g, i);
        g->values[g->nodes[i].outputs[0]].shape_dep = run_time;
        ir_node_erase(g, i);
        return true;
    }
    if (ir_op_flags(n->op) & IR_F_NOFOLD) return false;
    bool all_const = true;
    for (uint32_t k = 0; k < n->ninputs; k++)
        if (n->inputs[k] != IR_NONE && !ir_is_const(g, n->inputs[k])) all_const = false;
    if (!all_const) return false;
    size_t out_bytes = 0;
    for (uint32_t k = 0; k < n->noutputs; k++) {
        uint32_t o = n->outputs[k];
        if (o == IR_NONE) continue;
        size_t b;
        if (__builtin_mul_overflow((size_t)ir_numel(g, o), ir_dtype_size(g->values[o].dtype), &b) ||
            __builtin_add_overflow(out_bytes, b, &out_bytes))
            out_bytes = SIZE_MAX;
    }
    if (out_bytes > FOLD_MAX_BYTES) return false;
    /* provenance (see the banner): the bytes of a view / Expand / Tile follow from its data */
    const bool data_only = (ir_op_flags(n->op) & IR_F_VIEW) || n->op == IR_OP_EXPAND ||
                           n->op == IR_OP_TILE;
    bool sdep = false, wdep = false;
    for (uint32_t k = 0; k < n->ninputs; k++)
        if (n->inputs[k] != IR_NONE) {
            sdep |= g->values[n->inputs[k]].shape_dep;
            wdep |= ir_weight_dep(&g->values[n->inputs[k]]);
        }
    if (data_only && ir_weight_dep(&g->values[n->inputs[0]])) { /* a weight, reshaped / tiled */
        sdep = g->values[n->inputs[0]].shape_dep;
        wdep = true;
    }
    if (sdep && wdep && !(ir_op_flags(n->op) & IR_F_SHAPEOP)) return false;
    for (uint32_t k = 0; k < n->ninputs; k++) /* the reference ops read data */
        if (n->inputs[k] != IR_NONE) ir_const_materialize(g, n->inputs[k]);
    return eval_erase(g, i, sdep, wdep);
}

/* Evaluates the producers of value v (a parameter some node needs as a constant) on the host,
 * depth first, so that v becomes a constant of the build (shape_dep: its bytes may mix weights
 * with shape-dependent data). Returns false, changing nothing more, when some ancestor is a
 * run-time value (graph input, NOFOLD op, an expansion) or a result exceeds FOLD_MAX_BYTES;
 * the node needing v then reports v as not constant. depth bounds the recursion. */
static bool fold_param(struct ir_graph *g, uint32_t v, int depth)
{
    if (ir_is_const(g, v)) return true;
    const uint32_t p = g->values[v].producer;
    if (p == IR_NONE || depth > 256) return false;
    struct ir_node *n = &g->nodes[p];
    if (n->dead || (ir_op_flags(n->op) & (IR_F_NOFOLD | IR_F_FUNCTION))) return false;
    for (uint32_t k = 0; k < n->ninputs; k++)
        if (n->inputs[k] != IR_NONE && !fold_param(g, n->inputs[k], depth + 1)) return false;
    n = &g->nodes[p];
    bool wdep = false;
    for (uint32_t k = 0; k < n->noutputs; k++) {
        const uint32_t o = n->outputs[k];
        if (o != IR_NONE && (uint64_t)ir_numel(g, o) * ir_dtype_size(g->values[o].dtype) > FOLD_MAX_BYTES)
            return false;
    }
    for (uint32_t k = 0; k < n->ninputs; k++)
        if (n->inputs[k] != IR_NONE) wdep |= ir_weight_dep(&g->values[n->inputs[k]]);
    return eval_erase(g, p, true, wdep);
}

/* Makes the parameters of node i (ops.def IR_F_PARAMS) constants where their producers allow. */
static void fold_params(struct ir_graph *g, uint32_t i)
{
    const unsigned fl = ir_op_flags(g->nodes[i].op);
    if (!(fl & IR_F_PARAMS)) return;
    for (uint32_t k = (fl & IR_F_SHAPEOP) ? 0 : 1; k < g->nodes[i].ninputs; k++) {
        const uint32_t v = g->nodes[i].inputs[k];
        if (v != IR_NONE && !ir_is_const(g, v)) fold_param(g, v, 0);
    }
}

bool pass_infer_fold(struct ir_graph *g)
{
    bool changed = false, expanded = false;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++) {
            uint32_t v = n->inputs[k];
            if (v != IR_NONE && !g->values[v].dims_known) {
                char d[256];
                ir_fatal_node(g, n, "dims of input '%s' %s are unknown (bind graph inputs with --shape NAME=d0,d1,...)",
                              g->values[v].name, ir_dims_str(&g->values[v], d, sizeof d));
            }
        }
        if (ir_op_flags(n->op) & IR_F_FUNCTION) {
            expand_node(g, i);
            expanded = changed = true;
            continue;
        }
        fold_params(g, i);
        changed |= infer_fold_node(g, i);
    }
    if (expanded) ir_toposort(g);
    ir_recount(g);
    return changed;
}
