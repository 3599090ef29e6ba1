/* dce.c — dead-code elimination: erases nodes none of whose outputs reach a graph output. */
#include "passes.h"

#include <stdlib.h>

bool pass_dce(struct ir_graph *g)
{
    bool *live = calloc(g->nvalues ? g->nvalues : 1, 1);
    if (!live) ir_die("out of memory");
    for (uint32_t k = 0; k < g->noutputs; k++) live[g->outputs[k]] = true;
    bool changed = false;
    for (uint32_t i = g->nnodes; i-- > 0;) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        bool used = false;
        for (uint32_t k = 0; k < n->noutputs; k++)
            if (n->outputs[k] != IR_NONE && live[n->outputs[k]]) used = true;
        if (!used) {
            ir_node_erase(g, i);
            changed = true;
            continue;
        }
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE) live[n->inputs[k]] = true;
    }
    free(live);
    ir_recount(g);
    return changed;
}
