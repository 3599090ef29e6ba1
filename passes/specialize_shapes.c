/* specialize_shapes.c — binds graph-input dims from --shape flags.
 *
 * Every graph input ends with concrete dims: a --shape binding must match the input's rank and
 * agree with its static dims; a symbolic dim left unbound stops compilation with a message
 * naming the input, the dim and the flag that binds it. Unknown --shape names are errors too.
 * Exporters that write "dynamic" as dim_value -1 get a symbolic dim from the importer; one that
 * writes 0 is ambiguous with a genuinely empty input, so a 0 dim of a graph input is bound by
 * --shape when given (any value) and otherwise stays 0 (an empty tensor).
 * --bind NAME=FILE first turns input NAME into a constant (its value fixed at compile time; it
 * leaves the graph's inputs); a bad binding (unknown input, wrong dtype or shape, --shape for the
 * same input) is a usage error naming the flag, the file and the input.
 */
#include "passes.h"

#include <stdio.h>
#include <string.h>

static void input_desc(const struct ir_graph *g, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t k = 0; k < g->ninputs && o < cap; k++) {
        char d[256];
        const struct ir_value *v = &g->values[g->inputs[k]];
        o += (size_t)snprintf(buf + o, cap - o, "%s%s %s%s", k ? ", " : "", v->name,
                              ir_dtype_name(v->dtype), ir_dims_str(v, d, sizeof d));
    }
}

/* --bind: graph input b->input becomes a constant holding b's value (see passes.h). */
static void bind_value(struct ir_graph *g, const struct pass_options *opt, const struct pass_value_binding *b)
{
    char list[4096], d1[256];
    uint32_t v = ir_value_find(g, b->input);
    if (v == IR_NONE || !g->values[v].is_input) {
        input_desc(g, list, sizeof list);
        ir_usage_die("--bind %s=%s: the model has no input named '%s' (inputs: %s)", b->input, b->file,
                     b->input, list[0] ? list : "none");
    }
    for (int s = 0; s < opt->nshapes; s++)
        if (strcmp(opt->shapes[s].input, b->input) == 0)
            ir_usage_die("--bind %s and --shape %s: the bound value's shape is the input's shape; give "
                         "only --bind", b->input, b->input);
    struct ir_value *x = &g->values[v];
    if (b->dtype != x->dtype)
        ir_usage_die("--bind %s=%s: the file holds %s, but input '%s' is %s", b->input, b->file,
                     ir_dtype_name(b->dtype), b->input, ir_dtype_name(x->dtype));
    if (x->rank >= 0) {
        bool ok = x->rank == b->rank;
        for (int k = 0; ok && k < b->rank; k++) ok = x->dim_param[k] || x->dims[k] == b->dims[k];
        if (!ok) {
            char d2[256];
            struct ir_value f = {.rank = b->rank, .dims_known = true};
            memcpy(f.dims, b->dims, sizeof f.dims);
            ir_usage_die("--bind %s=%s: the file's shape %s does not fit input '%s' %s", b->input, b->file,
                         ir_dims_str(&f, d1, sizeof d1), b->input, ir_dims_str(x, d2, sizeof d2));
        }
    }
    x->rank = b->rank;
    for (int k = 0; k < b->rank; k++) x->dims[k] = b->dims[k], x->dim_param[k] = NULL;
    x->dims_known = true;
    void *p = ir_alloc(g, b->nbytes ? b->nbytes : 1);
    if (b->nbytes) memcpy(p, b->data, b->nbytes);
    x->data = p;
    x->nbytes = b->nbytes;
    x->is_input = false;
    x->is_initializer = true;
    x->shape_dep = true; /* a --bind value belongs to the build, not to the weights file */
    uint32_t o = 0;
    for (uint32_t k = 0; k < g->ninputs; k++)
        if (g->inputs[k] != v) g->inputs[o++] = g->inputs[k];
    g->ninputs = o;
}

bool pass_specialize_shapes(struct ir_graph *g, const struct pass_options *opt)
{
    bool changed = false;
    char list[4096];
    for (int b = 0; b < opt->nbinds; b++) {
        bind_value(g, opt, &opt->binds[b]);
        changed = true;
    }
    for (int b = 0; b < opt->nshapes; b++) {
        const struct pass_shape_binding *sb = &opt->shapes[b];
        uint32_t v = ir_value_find(g, sb->input);
        if (v == IR_NONE || !g->values[v].is_input) {
            input_desc(g, list, sizeof list);
            ir_usage_die("--shape %s=...: the model has no input named '%s' (inputs: %s)", sb->input,
                   sb->input, list);
        }
        struct ir_value *val = &g->values[v];
        if (val->rank >= 0 && val->rank != sb->rank)
            ir_usage_die("--shape %s: %d dims given, but input '%s' has rank %d", sb->input, sb->rank,
                   sb->input, val->rank);
        for (int k = 0; k < sb->rank; k++) {
            if (sb->dims[k] < 0) ir_usage_die("--shape %s: dim %d is negative", sb->input, k);
            /* a static 0 may be an exporter's "dynamic": --shape rebinds it (else it stays empty) */
            if (val->rank >= 0 && !val->dim_param[k] && val->dims[k] != 0 && val->dims[k] != sb->dims[k])
                ir_usage_die("--shape %s: dim %d is %lld, but the model fixes it to %lld", sb->input, k,
                       (long long)sb->dims[k], (long long)val->dims[k]);
            val->dims[k] = sb->dims[k];
            val->dim_param[k] = NULL;
        }
        val->rank = sb->rank;
        val->dims_known = true;
        changed = true;
    }
    for (uint32_t k = 0; k < g->ninputs; k++) {
        struct ir_value *val = &g->values[g->inputs[k]];
        if (val->rank < 0)
            ir_fatal(g, "input '%s' has no shape in the model: give it with --shape %s=d0,d1,...",
                     val->name, val->name);
        for (int d = 0; d < val->rank; d++)
            if (val->dim_param[d]) {
                char ex[256];
                size_t o = 0;
                for (int j = 0; j < val->rank && o < sizeof ex; j++)
                    o += (size_t)snprintf(ex + o, sizeof ex - o, "%s%s", j ? "," : "",
                                          val->dim_param[j] ? "N" : "");
                char dims[256];
                ir_fatal(g,
                         "input '%s' %s: dim %d ('%s') is symbolic; bind it with --shape %s=<%d "
                         "comma-separated dims>",
                         val->name, ir_dims_str(val, dims, sizeof dims), d, val->dim_param[d],
                         val->name, val->rank);
            }
        if (val->dtype == IR_UNDEFINED || val->dtype == IR_STRING)
            ir_fatal(g, "input '%s': element type %s is not supported", val->name,
                     ir_dtype_name(val->dtype));
        int64_t n;
        if (!ir_dims_numel(val->dims, val->rank, &n))
            ir_fatal(g, "input '%s': element count overflows", val->name);
        val->dims_known = true;
    }
    return changed;
}
