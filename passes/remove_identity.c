/* remove_identity.c — Identity, inference-mode Dropout and same-type Casts forward their input.
 *
 * Identity(x) -> x;  Dropout(x, ratio, training_mode=false) -> x (the optional mask output, if
 * present, becomes a constant all-true tensor of the same name); Cast(x, to=T) and CastLike(x, y)
 * with x already of type T -> x (ONNX Cast to the input's own type is the identity; exporters
 * write many float32 -> float32 Casts, e.g. `.float()` on float32 tensors: 13 launches of the
 * tiny Flux transformer were such copies). Runs after promote_f16, whose rounding Casts through
 * float16 have a float16 value between them and are not same-type.
 * Then Concat(Cast(a0, to=T), ..., Cast(ak, to=T)) with every ai of one type S and every Cast
 * read only by that Concat -> Cast(Concat(a0, ..., ak), to=T): a conversion is elementwise, so
 * it commutes with concatenation; k+1 Cast launches become one (the dynamo export of Flux computes
 * its rotary frequencies in float64 and concatenates their float32 casts: 3 launches saved). Nodes whose output is a graph output are
 * kept (codegen makes them views), so graph output names never change.
 * First, Cast(V(Gather(x, i_k)), to=T) for k = 1..n, n >= 2 Gathers of the same x (V: zero or
 * more views, Reshape/Unsqueeze/..., each value on the way read only once) -> V(Gather(Cast(x,
 * to=T), i_k)): a conversion commutes with gathering and reshaping; n Cast launches become one
 * (the dynamo Flux export selects the 3 position-id columns and casts each to float64: 3 -> 1).
 * The values on the way take type T, so the Casts are same-type Casts, forwarded below.
 */
#include "passes.h"

#include <string.h>

/* The value v finally forwards to (fwd chains are acyclic: an Identity reads an earlier value). */
static uint32_t forwarded(uint32_t *fwd, uint32_t v)
{
    uint32_t r = v;
    while (fwd[r] != r) r = fwd[r];
    while (fwd[v] != r) { /* path compression */
        uint32_t next = fwd[v];
        fwd[v] = r;
        v = next;
    }
    return r;
}

/* Concat(Cast(a_i, to=T) ...) -> Cast(Concat(a_i ...), to=T) (see the banner). The Concat node
 * keeps its id and attributes and writes a new value of the source type; nodes are appended, so
 * the caller re-sorts. Returns whether anything changed. */
static bool hoist_casts_over_concat(struct ir_graph *g)
{
    bool changed = false;
    const uint32_t nn = g->nnodes;
    for (uint32_t i = 0; i < nn; i++) {
        const struct ir_node *c = &g->nodes[i];
        if (c->dead || c->op != IR_OP_CONCAT || c->ninputs < 2 || c->noutputs != 1) continue;
        const uint32_t y = c->outputs[0];
        enum ir_dtype src = IR_UNDEFINED;
        bool ok = g->values[y].dims_known;
        for (uint32_t k = 0; ok && k < c->ninputs; k++) {
            const uint32_t v = c->inputs[k];
            const uint32_t p = v == IR_NONE ? IR_NONE : g->values[v].producer;
            ok = p != IR_NONE && g->nodes[p].op == IR_OP_CAST && g->values[v].nuses == 1 &&
                 !g->values[v].is_output && g->values[v].dtype == g->values[y].dtype;
            if (!ok) break;
            const enum ir_dtype t = g->values[g->nodes[p].inputs[0]].dtype;
            ok = (k == 0 || t == src) && t != g->values[y].dtype && t != IR_UNDEFINED;
            src = t;
        }
        if (!ok) continue;
        const uint32_t u = ir_value_add(g, ir_name_unique(g, ir_sprintf(g, "%s/uncast",
                                        g->values[y].name)), src, g->values[y].rank,
                                        g->values[y].dims);
        g->values[u].dims_known = true;
        for (uint32_t k = 0; k < g->nodes[i].ninputs; k++) {
            const uint32_t p = g->values[g->nodes[i].inputs[k]].producer;
            g->nodes[i].inputs[k] = g->nodes[p].inputs[0];
            ir_node_erase(g, p);
        }
        g->nodes[i].outputs[0] = u;
        g->values[u].producer = i;
        g->values[y].producer = IR_NONE;
        const uint32_t id = ir_node_add(g, IR_OP_CAST, ir_sprintf(g, "%s/cast", g->nodes[i].name),
                                        "Cast", &u, 1, &y, 1);
        ir_attr_set_int(g, id, "to", (int64_t)g->values[y].dtype);
        changed = true;
    }
    if (changed) {
        ir_recount(g);
        ir_toposort(g);
    }
    return changed;
}

/* The Cast at the end of the single-use view chain from y (see the banner), or IR_NONE. */
static uint32_t cast_after_views(const struct ir_graph *g, const uint32_t *reader, uint32_t y)
{
    for (;;) {
        if (g->values[y].nuses != 1 || g->values[y].is_output) return IR_NONE;
        const struct ir_node *n = &g->nodes[reader[y]];
        if (n->op == IR_OP_CAST) return reader[y];
        if (!(ir_op_flags(n->op) & IR_F_VIEW) || n->inputs[0] != y || n->noutputs < 1 ||
            n->outputs[0] == IR_NONE)
            return IR_NONE;
        y = n->outputs[0];
    }
}

/* Cast(V(Gather(x, i_k)), T) -> V(Gather(Cast(x, T), i_k)) for >= 2 Gathers of one x (banner):
 * the Gathers read one new Cast; the values up to the old Casts take type T, the old Casts are
 * left for the forwarding sweep. Returns whether anything changed (the graph is re-sorted). */
static bool hoist_casts_over_gathers(struct ir_graph *g)
{
    const uint32_t nn = g->nnodes, nv = g->nvalues;
    uint32_t *reader = ir_alloc(g, sizeof *reader * (nv ? nv : 1)); /* of single-use values */
    uint32_t *cand = ir_alloc(g, sizeof *cand * (nn ? nn : 1));     /* candidate Gathers */
    int64_t *to = ir_alloc(g, sizeof *to * (nn ? nn : 1));          /* their Casts' type */
    for (uint32_t i = 0; i < nn; i++)
        for (uint32_t k = 0; !g->nodes[i].dead && k < g->nodes[i].ninputs; k++)
            if (g->nodes[i].inputs[k] != IR_NONE) reader[g->nodes[i].inputs[k]] = i;
    uint32_t nc = 0;
    for (uint32_t i = 0; i < nn; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead || n->op != IR_OP_GATHER || n->noutputs != 1) continue;
        const uint32_t y = n->outputs[0], ci = cast_after_views(g, reader, y);
        if (ci == IR_NONE || ir_is_const(g, n->inputs[0])) continue;
        const struct ir_node *c = &g->nodes[ci];
        if (c->noutputs != 1 || c->outputs[0] == IR_NONE) continue;
        const int64_t t = ir_attr_int(c, "to", -1);
        if (t == (int64_t)g->values[y].dtype || t != (int64_t)g->values[c->outputs[0]].dtype)
            continue;
        to[nc] = t;
        cand[nc++] = i;
    }
    bool changed = false;
    for (uint32_t a = 0; a < nc; a++) {
        if (cand[a] == IR_NONE) continue;
        const uint32_t x = g->nodes[cand[a]].inputs[0];
        uint32_t n = 0;
        for (uint32_t b = a; b < nc; b++)
            n += cand[b] != IR_NONE && g->nodes[cand[b]].inputs[0] == x && to[b] == to[a];
        if (n < 2) continue;
        const struct ir_value *xv = &g->values[x];
        const uint32_t xc = ir_value_add(g, ir_name_unique(g, ir_sprintf(g, "%s/cast", xv->name)),
                                         (enum ir_dtype)to[a], xv->rank, xv->dims);
        g->values[xc].dims_known = g->values[x].dims_known;
        const uint32_t id = ir_node_add(g, IR_OP_CAST, g->values[xc].name, "Cast", &x, 1, &xc, 1);
        ir_attr_set_int(g, id, "to", to[a]);
        for (uint32_t b = a; b < nc; b++)
            if (cand[b] != IR_NONE && g->nodes[cand[b]].inputs[0] == x && to[b] == to[a]) {
                g->nodes[cand[b]].inputs[0] = xc;
                for (uint32_t v = g->nodes[cand[b]].outputs[0];; v = g->nodes[reader[v]].outputs[0]) {
                    g->values[v].dtype = (enum ir_dtype)to[a];
                    if (g->nodes[reader[v]].op == IR_OP_CAST) break;
                }
                cand[b] = IR_NONE;
            }
        changed = true;
    }
    if (changed) {
        ir_recount(g);
        ir_toposort(g);
    }
    return changed;
}

bool pass_remove_identity(struct ir_graph *g)
{
    bool changed = hoist_casts_over_gathers(g);
    /* Readers are rewired in one sweep at the end (through fwd), not per Identity: rewiring per
     * node made the pass quadratic (3 s on a 65k-node unrolled graph). */
    uint32_t *fwd = ir_alloc(g, sizeof(uint32_t) * ((size_t)g->nvalues + 1));
    for (uint32_t v = 0; v < g->nvalues; v++) fwd[v] = v;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        const bool same_cast = (n->op == IR_OP_CAST || n->op == IR_OP_CAST_LIKE) &&
                               n->noutputs == 1 && n->outputs[0] != IR_NONE &&
                               g->values[n->inputs[0]].dtype == g->values[n->outputs[0]].dtype &&
                               (n->op == IR_OP_CAST_LIKE ||
                                ir_attr_int(n, "to", -1) == (int64_t)g->values[n->inputs[0]].dtype);
        if (n->op != IR_OP_IDENTITY && n->op != IR_OP_DROPOUT && !same_cast) continue;
        if (n->op == IR_OP_DROPOUT) {
            uint32_t tm = ir_input(n, 2);
            if (tm != IR_NONE && (!ir_is_const(g, tm) || ir_const_i64(g, tm, 0) != 0))
                ir_fatal_node(g, n, "Dropout with training_mode=true is not supported (inference only)");
            if (n->noutputs > 1 && n->outputs[1] != IR_NONE) {
                /* The mask of an inference Dropout is all true: the mask value itself becomes a
                 * constant (keeping its name, which may be a graph output's). */
                uint32_t m = n->outputs[1];
                int64_t cnt = ir_numel(g, n->inputs[0]);
                void *ones = ir_alloc(g, (size_t)cnt);
                memset(ones, 1, (size_t)cnt);
                struct ir_value *mv = &g->values[m];
                mv->data = ones;
                mv->nbytes = (size_t)cnt;
                mv->dtype = IR_BOOL;
                mv->producer = IR_NONE;
                n->outputs[1] = IR_NONE;
                changed = true;
            }
        }
        uint32_t out = n->outputs[0], in = n->inputs[0];
        if (g->values[out].is_output) continue;
        fwd[out] = in;
        ir_node_erase(g, i);
        changed = true;
    }
    if (!changed) return hoist_casts_over_concat(g);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE) n->inputs[k] = forwarded(fwd, n->inputs[k]);
    }
    ir_recount(g);
    hoist_casts_over_concat(g); /* after the rewiring: it adds values fwd does not cover */
    return true;
}
