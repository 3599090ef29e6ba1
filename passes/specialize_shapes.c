/* specialize_shapes.c — binds graph-input dims from --shape flags.
 *
 * Every graph input ends with concrete dims: a --shape binding must match the input's rank and
 * agree with its static dims; a symbolic dim left unbound stops compilation with a message
 * naming the input, the dim and the flag that binds it. Unknown --shape names are errors too.
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

bool pass_specialize_shapes(struct ir_graph *g, const struct pass_options *opt)
{
    bool changed = false;
    char list[4096];
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
            if (val->rank >= 0 && !val->dim_param[k] && val->dims[k] != sb->dims[k])
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
