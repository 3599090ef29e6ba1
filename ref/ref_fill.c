/* ref_fill.c — reference ConstantOfShape (value attribute tensor, default float32 0), Range
 * (start + i * delta, computed in double for floats / int64 for ints) and EyeLike (ones on the
 * k-th diagonal).
 *
 * Assumes: outputs shaped by infer_node (Range length, ConstantOfShape dims).
 * Guarantees: every element written; attr value of ConstantOfShape must hold one element.
 */
#include <string.h>

#include "ref/ref_util.h"

bool ref_eval_fill(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = g->values[ov].dtype;
    int64_t cnt = ref_numel_v(&g->values[ov]);
    size_t es = ir_dtype_size(t);
    if (n->op == IR_OP_CONSTANT_OF_SHAPE) {
        const struct ir_attr *a = ir_attr_find(n, "value");
        char val[16] = {0};
        if (a && a->type == IR_ATTR_TENSOR) {
            const struct ir_value *c = &g->values[a->tensor];
            if (c->nbytes != es)
                ir_fatal_node(g, n, "ConstantOfShape value '%s' must hold exactly one element",
                              c->name);
            memcpy(val, c->data, es);
        }
        char *o = ref_alloc_out(g, ov);
        for (int64_t i = 0; i < cnt; i++) memcpy(o + (size_t)i * es, val, es);
        return true;
    }
    const struct ir_value *x = &g->values[n->inputs[0]];
    void *o = ref_alloc_out(g, ov);
    if (n->op == IR_OP_RANGE) {
        const struct ir_value *d = &g->values[n->inputs[2]];
        if (ref_is_float(t)) {
            double s = ref_get_f(x->data, x->dtype, 0), de = ref_get_f(d->data, d->dtype, 0);
            for (int64_t i = 0; i < cnt; i++) ref_set_f(o, t, i, s + (double)i * de);
        } else {
            int64_t s = ref_get_i(x->data, x->dtype, 0), de = ref_get_i(d->data, d->dtype, 0);
            for (int64_t i = 0; i < cnt; i++) ref_set_i(o, t, i, s + i * de);
        }
        return true;
    }
    /* EyeLike */
    int64_t k = ir_attr_int(n, "k", 0), cols = g->values[ov].dims[1];
    for (int64_t i = 0; i < cnt; i++) ref_set_i(o, t, i, (i % cols) - (i / cols) == k);
    return true;
}
