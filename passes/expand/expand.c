/* expand.c — expand_node() and the ex_* subgraph builder of passes/expand/expand.h.
 *
 * Assumes: called from pass_infer_fold's sweep on a live IR_F_FUNCTION node whose inputs all have
 * known dims. Guarantees: each node made is inferred and, when its inputs are constant, folded at
 * once (infer_fold_node), so later builder calls see concrete dims and constants; new nodes carry
 * the composite's onnx_index and a name "<composite>/<Op>_<n>" so any error names the ONNX node;
 * the composite is erased and each present output value keeps its id and name (it becomes the
 * output of an Identity that pass_remove_identity removes later).
 */
#include "passes/expand/expand.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ref/ref_util.h"

uint32_t ex_in(const struct ex_ctx *e, uint32_t k)
{
    const struct ir_node *n = &e->g->nodes[e->node];
    return k < n->ninputs ? n->inputs[k] : IR_NONE;
}

bool ex_has_output(const struct ex_ctx *e, uint32_t k)
{
    const struct ir_node *n = &e->g->nodes[e->node];
    return k < n->noutputs && n->outputs[k] != IR_NONE;
}

const struct ir_node *ex_self(const struct ex_ctx *e) { return &e->g->nodes[e->node]; }

const struct ir_value *ex_v(const struct ex_ctx *e, uint32_t v) { return &e->g->values[v]; }

int64_t ex_attr_int(const struct ex_ctx *e, const char *name, int64_t dflt)
{
    return ir_attr_int(ex_self(e), name, dflt);
}

float ex_attr_float(const struct ex_ctx *e, const char *name, float dflt)
{
    return ir_attr_float(ex_self(e), name, dflt);
}

const char *ex_attr_string(const struct ex_ctx *e, const char *name, const char *dflt)
{
    return ir_attr_string(ex_self(e), name, dflt);
}

void ex_fatal(const struct ex_ctx *e, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ir_fatal_node(e->g, ex_self(e), "%s", msg);
}

/* A value name "<base>/<what>_<n>" not used yet. */
static const char *fresh_name(struct ex_ctx *e, const char *what)
{
    for (;;) {
        const char *s = ir_sprintf(e->g, "%s/%s_%u", e->base, what, e->count++);
        if (ir_value_find(e->g, s) == IR_NONE) return s;
    }
}

uint32_t ex_begin(struct ex_ctx *e, enum ir_op op, const uint32_t *ins, uint32_t nin, uint32_t nout)
{
    struct ir_graph *g = e->g;
    uint32_t outs[16];
    IR_ASSERT(nout >= 1 && nout <= 16);
    const char *name = fresh_name(e, ir_op_name(op));
    for (uint32_t k = 0; k < nout; k++)
        outs[k] = ir_value_add(g, k ? ir_sprintf(g, "%s:%u", name, k) : name, IR_UNDEFINED, -1, NULL);
    uint32_t id = ir_node_add(g, op, name, ir_op_name(op), ins, nin, outs, nout);
    g->nodes[id].onnx_index = g->nodes[e->node].onnx_index;
    return id;
}

uint32_t ex_end(struct ex_ctx *e, uint32_t id)
{
    uint32_t out = e->g->nodes[id].outputs[0];
    infer_fold_node(e->g, id);
    return out;
}

uint32_t ex_out(const struct ex_ctx *e, uint32_t id, uint32_t k)
{
    const struct ir_node *n = &e->g->nodes[id];
    IR_ASSERT(k < n->noutputs);
    return n->outputs[k];
}

uint32_t ex_op1(struct ex_ctx *e, enum ir_op op, uint32_t a)
{
    return ex_end(e, ex_begin(e, op, &a, 1, 1));
}

uint32_t ex_op2(struct ex_ctx *e, enum ir_op op, uint32_t a, uint32_t b)
{
    uint32_t in[2] = {a, b};
    return ex_end(e, ex_begin(e, op, in, 2, 1));
}

uint32_t ex_op3(struct ex_ctx *e, enum ir_op op, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t in[3] = {a, b, c};
    return ex_end(e, ex_begin(e, op, in, 3, 1));
}

uint32_t ex_const(struct ex_ctx *e, enum ir_dtype t, int rank, const int64_t *dims, const void *data)
{
    int64_t numel = 1;
    for (int k = 0; k < rank; k++) numel *= dims[k];
    size_t nb = (size_t)numel * ir_dtype_size(t);
    void *p = ir_alloc(e->g, nb ? nb : 1);
    if (nb) memcpy(p, data, nb);
    uint32_t v = ir_const_add(e->g, fresh_name(e, "const"), t, rank, dims, p, nb);
    e->g->values[v].is_initializer = true;
    return v;
}

uint32_t ex_scalar(struct ex_ctx *e, enum ir_dtype t, double v)
{
    uint64_t buf = 0;
    ref_set_f(&buf, t, 0, v);
    return ex_const(e, t, 0, NULL, &buf);
}

uint32_t ex_ints(struct ex_ctx *e, int n, const int64_t *v)
{
    int64_t d = n;
    return ex_const(e, IR_I64, 1, &d, v);
}

uint32_t ex_cast(struct ex_ctx *e, uint32_t x, enum ir_dtype to)
{
    if (e->g->values[x].dtype == to) return x;
    uint32_t id = ex_begin(e, IR_OP_CAST, &x, 1, 1);
    ir_attr_set_int(e->g, id, "to", to);
    return ex_end(e, id);
}

uint32_t ex_reshape(struct ex_ctx *e, uint32_t x, int rank, const int64_t *dims)
{
    return ex_op2(e, IR_OP_RESHAPE, x, ex_ints(e, rank, dims));
}

uint32_t ex_transpose(struct ex_ctx *e, uint32_t x, int rank, const int64_t *perm)
{
    bool ident = true;
    for (int k = 0; k < rank; k++) ident &= perm[k] == k;
    if (ident) return x;
    uint32_t id = ex_begin(e, IR_OP_TRANSPOSE, &x, 1, 1);
    ir_attr_set_ints(e->g, id, "perm", perm, (size_t)rank);
    return ex_end(e, id);
}

uint32_t ex_unsqueeze(struct ex_ctx *e, uint32_t x, int n, const int64_t *axes)
{
    return ex_op2(e, IR_OP_UNSQUEEZE, x, ex_ints(e, n, axes));
}

uint32_t ex_softmax(struct ex_ctx *e, enum ir_op op, uint32_t x, int64_t axis)
{
    uint32_t id = ex_begin(e, op, &x, 1, 1);
    ir_attr_set_int(e->g, id, "axis", axis);
    ir_attr_set_int(e->g, id, "_flatten", 0);
    return ex_end(e, id);
}

uint32_t ex_reduce(struct ex_ctx *e, enum ir_op op, uint32_t x, int naxes, const int64_t *axes,
                   bool keepdims)
{
    uint32_t in[2] = {x, naxes ? ex_ints(e, naxes, axes) : IR_NONE};
    uint32_t id = ex_begin(e, op, in, naxes ? 2 : 1, 1);
    ir_attr_set_int(e->g, id, "keepdims", keepdims);
    return ex_end(e, id);
}

uint32_t ex_slice(struct ex_ctx *e, uint32_t x, int64_t axis, int64_t start, int64_t end, int64_t step)
{
    uint32_t in[5] = {x, ex_ints(e, 1, &start), ex_ints(e, 1, &end), ex_ints(e, 1, &axis),
                      ex_ints(e, 1, &step)};
    return ex_end(e, ex_begin(e, IR_OP_SLICE, in, 5, 1));
}

uint32_t ex_concat(struct ex_ctx *e, int n, const uint32_t *ins, int64_t axis)
{
    if (n == 1) return ins[0];
    uint32_t id = ex_begin(e, IR_OP_CONCAT, ins, (uint32_t)n, 1);
    ir_attr_set_int(e->g, id, "axis", axis);
    return ex_end(e, id);
}

uint32_t ex_gather(struct ex_ctx *e, uint32_t x, uint32_t idx, int64_t axis)
{
    uint32_t in[2] = {x, idx};
    uint32_t id = ex_begin(e, IR_OP_GATHER, in, 2, 1);
    ir_attr_set_int(e->g, id, "axis", axis);
    return ex_end(e, id);
}

void ex_output(struct ex_ctx *e, uint32_t k, uint32_t v)
{
    IR_ASSERT(k < 16);
    e->outs[k] = v;
}

void expand_node(struct ir_graph *g, uint32_t node)
{
    expand_node_scoped(g, node, NULL);
}

void expand_node_scoped(struct ir_graph *g, uint32_t node, const struct cf_map *scope)
{
    struct ex_ctx e = {.g = g, .node = node, .scope = scope};
    const struct ir_node *n = &g->nodes[node];
    e.base = n->name && n->name[0] ? n->name : n->op_type;
    uint32_t nout = n->noutputs;
    if (nout > 16) ir_fatal_node(g, n, "%u outputs (at most 16 supported)", nout);
    for (uint32_t k = 0; k < 16; k++) e.outs[k] = IR_NONE;
    switch (n->op) {
#define X(id, fn)         \
    case IR_OP_##id:      \
        expand_##fn(&e);  \
        break;
        EXPAND_OPS(X)
#undef X
    default:
        ir_fatal_node(g, n, "internal error: op %s has no expansion", ir_op_name(n->op));
    }
    /* Replace the composite: its outputs keep their ids (names), now made by Identity nodes. */
    uint32_t outs[16];
    n = &g->nodes[node];
    for (uint32_t k = 0; k < nout; k++) outs[k] = n->outputs[k];
    int32_t onnx_index = n->onnx_index;
    const char *name = n->name;
    ir_node_erase(g, node);
    for (uint32_t k = 0; k < nout; k++) {
        if (outs[k] == IR_NONE) continue;
        if (e.outs[k] == IR_NONE) {
            if (g->values[outs[k]].nuses == 0 && !g->values[outs[k]].is_output) continue;
            ir_fatal_node(g, &g->nodes[node], "output %u ('%s') is not supported by this expansion",
                          k, g->values[outs[k]].name);
        }
        g->values[outs[k]].producer = IR_NONE;
        uint32_t id = ir_node_add(g, IR_OP_IDENTITY, ir_sprintf(g, "%s/out_%u", name, k), "Identity",
                                  &e.outs[k], 1, &outs[k], 1);
        g->nodes[id].onnx_index = onnx_index;
        infer_fold_node(g, id);
    }
}
