/* expose.c — --expose NAME[,NAME...] | all: intermediate values kept as extra graph outputs.
 *
 * For finding where a compiled model first departs from a reference (tools/first_mismatch.py):
 * each named value becomes a graph output after the model's own outputs, in the order given
 * ("all": every output of every node of the model's main graph that a node reads, in file order;
 * unread optional outputs such as LayerNormalization's Mean are left out). A graph output
 * is never swallowed by a fusion (fuse_chain_ok, fuse_sole_user and the passes' use counts refuse
 * it), so fusions that would hide an exposed value step aside for it only; every other fusion
 * still applies. Values that constant folding turns into constants are still written (from the
 * weights). Runs right after specialize_shapes, before folding and expansion, so the names are
 * the file's. Values inside If/Loop/Scan bodies cannot be named (they are copied per use).
 * Errors (usage, exit 2): a name that is not a value of the main graph, a graph input or
 * initializer named (nothing to compute), a name given twice.
 */
#include "passes.h"

#include <string.h>

/* Makes value v a graph output (no-op when it already is one). */
static void expose_value(struct ir_graph *g, uint32_t v)
{
    struct ir_value *x = &g->values[v];
    if (x->is_output) return;
    x->is_output = true;
    x->nuses++;
    uint32_t *outs = ir_alloc(g, (g->noutputs + 2) * sizeof *outs);
    memcpy(outs, g->outputs, g->noutputs * sizeof *outs);
    outs[g->noutputs++] = v;
    g->outputs = outs;
}

bool pass_expose(struct ir_graph *g, const char *names)
{
    if (!names) return false;
    if (strcmp(names, "all") == 0) {
        uint32_t nn = g->nnodes;
        for (uint32_t i = 0; i < nn; i++) {
            const struct ir_node *n = &g->nodes[i];
            if (n->dead) continue;
            for (uint32_t k = 0; k < n->noutputs; k++)
                if (n->outputs[k] != IR_NONE && g->values[n->outputs[k]].nuses) expose_value(g, n->outputs[k]);
        }
        return true;
    }
    const char *p = names;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *nm = ir_strndup(g, p, len);
        uint32_t v = len ? ir_value_find(g, nm) : IR_NONE;
        if (v == IR_NONE)
            ir_usage_die("--expose %s: the model has no value named '%s' (values inside If/Loop/Scan "
                         "bodies cannot be exposed)", names, nm);
        const struct ir_value *x = &g->values[v];
        if (x->producer == IR_NONE)
            ir_usage_die("--expose %s: '%s' is a graph %s, not computed by a node", names, nm,
                         x->is_input ? "input" : "constant (initializer or Constant)");
        for (const char *q = names; q < p;) {
            const char *qe = strchr(q, ',');
            size_t ql = (size_t)(qe - q);
            if (ql == len && strncmp(q, p, len) == 0) ir_usage_die("--expose %s: '%s' is given twice", names, nm);
            q = qe + 1;
        }
        if (!x->is_output) expose_value(g, v);
        p += len + (e ? 1 : 0);
    }
    return true;
}
