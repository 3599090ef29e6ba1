/* verify.c — ir_verify (structural invariants) and ir_dump (textual IR for --dump-after).
 *
 * ir_verify checks: every live node's inputs are produced earlier (or are graph inputs /
 * constants), each value has at most one live producer, use counts match, input arity is within
 * ops.def bounds, and constants' byte sizes match their dims and dtype.
 */
#include "ir.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

bool ir_verify(const struct ir_graph *g, const char *after_pass)
{
    bool ok = true;
    const char *when = after_pass ? after_pass : "?";
    uint32_t *uses = calloc(g->nvalues ? g->nvalues : 1, sizeof *uses);
    uint32_t *prod = malloc(sizeof *prod * (g->nvalues ? g->nvalues : 1));
    if (!uses || !prod) ir_die("out of memory");
    for (uint32_t v = 0; v < g->nvalues; v++) prod[v] = IR_NONE;
#define BAD(...)                                                      \
    do {                                                              \
        fprintf(stderr, "verify (after %s): ", when);                 \
        fprintf(stderr, __VA_ARGS__);                                 \
        fputc('\n', stderr);                                          \
        ok = false;                                                   \
    } while (0)
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        if (n->op < IR_OP_COUNT && n->op != IR_OP_UNKNOWN) {
            int mx = ir_op_max_inputs(n->op);
            if ((int)n->ninputs > mx)
                BAD("node #%u '%s' (%s): %u inputs, at most %d allowed", i, n->name,
                    ir_op_name(n->op), n->ninputs, mx);
        }
        for (uint32_t k = 0; k < n->ninputs; k++) {
            uint32_t v = n->inputs[k];
            if (v == IR_NONE) continue;
            if (v >= g->nvalues) {
                BAD("node #%u '%s': input %u out of range", i, n->name, k);
                continue;
            }
            uses[v]++;
            const struct ir_value *val = &g->values[v];
            if (!val->data && !val->lazy && !val->is_input && prod[v] == IR_NONE)
                BAD("node #%u '%s' (%s): input '%s' is not produced before it", i, n->name,
                    ir_op_name(n->op), val->name);
        }
        for (uint32_t k = 0; k < n->noutputs; k++) {
            uint32_t v = n->outputs[k];
            if (v == IR_NONE) continue;
            if (prod[v] != IR_NONE)
                BAD("value '%s' has two producers (#%u and #%u)", g->values[v].name, prod[v], i);
            prod[v] = i;
            if (g->values[v].producer != i)
                BAD("value '%s': producer field %u, actual %u", g->values[v].name,
                    g->values[v].producer, i);
        }
    }
    for (uint32_t k = 0; k < g->noutputs; k++) {
        uint32_t v = g->outputs[k];
        uses[v]++;
        const struct ir_value *val = &g->values[v];
        if (prod[v] == IR_NONE && !val->data && !val->lazy && !val->is_input)
            BAD("graph output '%s' is never computed", val->name);
    }
    for (uint32_t v = 0; v < g->nvalues; v++) {
        const struct ir_value *val = &g->values[v];
        if (uses[v] != val->nuses && (uses[v] || prod[v] != IR_NONE))
            BAD("value '%s': nuses %u, counted %u", val->name, val->nuses, uses[v]);
        if ((val->data || val->lazy) && val->dims_known && val->dtype != IR_STRING) {
            int64_t n;
            if (!ir_dims_numel(val->dims, val->rank, &n) ||
                (uint64_t)n * ir_dtype_size(val->dtype) != val->nbytes)
                BAD("constant '%s': %zu bytes do not match its dims and dtype %s", val->name,
                    val->nbytes, ir_dtype_name(val->dtype));
        }
    }
#undef BAD
    free(uses);
    free(prod);
    return ok;
}

static void dump_value(const struct ir_graph *g, uint32_t v, FILE *f)
{
    if (v == IR_NONE) {
        fputs("_", f);
        return;
    }
    const struct ir_value *val = &g->values[v];
    char buf[128];
    fprintf(f, "%%%s:%s%s%s", val->name, ir_dtype_name(val->dtype), ir_dims_str(val, buf, sizeof buf),
            val->data || val->lazy ? "(const)" : "");
}

void ir_dump(const struct ir_graph *g, void *file)
{
    FILE *f = file;
    fprintf(f, "graph '%s' opset %" PRId64 "\n", g->graph_name ? g->graph_name : "", g->opset);
    for (uint32_t k = 0; k < g->ninputs; k++) {
        fputs("  input ", f);
        dump_value(g, g->inputs[k], f);
        fputc('\n', f);
    }
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        fputs("  ", f);
        for (uint32_t k = 0; k < n->noutputs; k++) {
            if (k) fputs(", ", f);
            dump_value(g, n->outputs[k], f);
        }
        fprintf(f, " = %s(", n->op < IR_OP_COUNT ? ir_op_name(n->op) : n->op_type);
        for (uint32_t k = 0; k < n->ninputs; k++) {
            if (k) fputs(", ", f);
            dump_value(g, n->inputs[k], f);
        }
        fputc(')', f);
        if (n->nattrs) {
            fputs(" {", f);
            for (uint32_t a = 0; a < n->nattrs; a++) {
                const struct ir_attr *at = &n->attrs[a];
                fprintf(f, "%s%s=", a ? ", " : "", at->name);
                switch (at->type) {
                case IR_ATTR_INT: fprintf(f, "%" PRId64, at->i); break;
                case IR_ATTR_FLOAT: fprintf(f, "%g", at->f); break;
                case IR_ATTR_STRING: fprintf(f, "\"%s\"", at->s); break;
                case IR_ATTR_INTS:
                    fputc('[', f);
                    for (size_t j = 0; j < at->n; j++) fprintf(f, "%s%" PRId64, j ? "," : "", at->ints[j]);
                    fputc(']', f);
                    break;
                case IR_ATTR_FLOATS:
                    fputc('[', f);
                    for (size_t j = 0; j < at->n; j++) fprintf(f, "%s%g", j ? "," : "", at->floats[j]);
                    fputc(']', f);
                    break;
                case IR_ATTR_TENSOR: fprintf(f, "tensor"); break;
                default: fprintf(f, "..."); break;
                }
            }
            fputc('}', f);
        }
        fprintf(f, "  # %s #%d\n", n->name, (int)n->onnx_index);
    }
    for (uint32_t k = 0; k < g->noutputs; k++) {
        fputs("  output ", f);
        dump_value(g, g->outputs[k], f);
        fputc('\n', f);
    }
}
