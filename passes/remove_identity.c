/* remove_identity.c — Identity and inference-mode Dropout forward their input.
 *
 * Identity(x) -> x;  Dropout(x, ratio, training_mode=false) -> x (the optional mask output, if
 * present, becomes a constant all-true tensor of the same name). Nodes whose output is a graph output are
 * kept (codegen makes them views), so graph output names never change.
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

bool pass_remove_identity(struct ir_graph *g)
{
    bool changed = false;
    /* Readers are rewired in one sweep at the end (through fwd), not per Identity: rewiring per
     * node made the pass quadratic (3 s on a 65k-node unrolled graph). */
    uint32_t *fwd = ir_alloc(g, sizeof(uint32_t) * ((size_t)g->nvalues + 1));
    for (uint32_t v = 0; v < g->nvalues; v++) fwd[v] = v;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead || (n->op != IR_OP_IDENTITY && n->op != IR_OP_DROPOUT)) continue;
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
    if (!changed) return false;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE) n->inputs[k] = forwarded(fwd, n->inputs[k]);
    }
    ir_recount(g);
    return changed;
}
