/* ref_norm.c — reference Softmax, LogSoftmax, Hardmax (opset < 13 "_flatten"=1 2-D coercion
 * at axis, default axis 1; opset >= 13 one axis, default -1), InstanceNormalization,
 * GroupNormalization (-21 per-channel scale/bias, or per-group when the importer sets
 * "_per_group"=1), LayerNormalization (optional Mean / InvStdDev outputs, scale/bias broadcast
 * over the normalized dims) and BatchNormalization (inference form).
 *
 * Assumes: NC... layout; outputs shaped by infer_node; float dtypes only.
 * Guarantees: statistics in double (two-pass mean then variance, biased variance as the spec's
 * reference); softmax max-shifted.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_util.h"

static const struct ir_value *inp(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    uint32_t v = ir_input(n, k);
    return v == IR_NONE ? NULL : &g->values[v];
}

static bool eval_softmax(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    bool flat = ir_attr_int(n, "_flatten", 0) != 0;
    int rank = x->rank ? x->rank : 1;
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", flat ? 1 : -1), x->rank ? x->rank : 1,
                        false, "axis");
    int64_t outer = 1, ax = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    if (flat) {
        for (int k = axis; k < rank && x->rank; k++) ax *= x->dims[k];
    } else {
        ax = x->rank ? x->dims[axis] : 1;
        for (int k = axis + 1; k < x->rank; k++) inner *= x->dims[k];
    }
    void *out = ref_alloc_out(g, ov);
    for (int64_t b = 0; b < outer; b++)
        for (int64_t i = 0; i < inner; i++) {
            double mx = -INFINITY, sum = 0;
            int64_t arg = 0;
            for (int64_t a = 0; a < ax; a++) {
                double v = ref_get_f(x->data, t, (b * ax + a) * inner + i);
                if (a == 0 || v > mx) {
                    mx = v;
                    arg = a;
                }
            }
            if (n->op == IR_OP_HARDMAX) {
                for (int64_t a = 0; a < ax; a++)
                    ref_set_f(out, t, (b * ax + a) * inner + i, a == arg ? 1.0 : 0.0);
                continue;
            }
            if (isinf(mx) && mx < 0) mx = 0;
            for (int64_t a = 0; a < ax; a++)
                sum += exp(ref_get_f(x->data, t, (b * ax + a) * inner + i) - mx);
            for (int64_t a = 0; a < ax; a++) {
                int64_t p = (b * ax + a) * inner + i;
                double v = ref_get_f(x->data, t, p) - mx;
                ref_set_f(out, t, p, n->op == IR_OP_LOG_SOFTMAX ? v - log(sum) : exp(v) / sum);
            }
        }
    return true;
}

/* Mean and biased variance of `cnt` consecutive elements starting at element base. */
static void moments(const void *p, enum ir_dtype t, int64_t base, int64_t cnt, double *mean,
                    double *var)
{
    double s = 0, q = 0;
    for (int64_t i = 0; i < cnt; i++) s += ref_get_f(p, t, base + i);
    *mean = cnt ? s / (double)cnt : 0;
    for (int64_t i = 0; i < cnt; i++) {
        double d = ref_get_f(p, t, base + i) - *mean;
        q += d * d;
    }
    *var = cnt ? q / (double)cnt : 0;
}

static bool eval_group_norm(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *sc = inp(g, n, 1), *bi = inp(g, n, 2);
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    double eps = ir_attr_float(n, "epsilon", 1e-5f);
    int64_t N = x->dims[0], C = x->dims[1], sp = 1;
    for (int k = 2; k < x->rank; k++) sp *= x->dims[k];
    int64_t G = n->op == IR_OP_GROUP_NORMALIZATION ? ir_attr_int(n, "num_groups", 1) : C;
    bool per_group = n->op == IR_OP_GROUP_NORMALIZATION && ir_attr_int(n, "_per_group", 0);
    int64_t Cg = C / G;
    void *out = ref_alloc_out(g, ov);
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t gi = 0; gi < G; gi++) {
            int64_t base = (nn * C + gi * Cg) * sp;
            double mean, var;
            moments(x->data, t, base, Cg * sp, &mean, &var);
            double inv = 1.0 / sqrt(var + eps);
            for (int64_t c = 0; c < Cg; c++) {
                int64_t ch = per_group ? gi : gi * Cg + c;
                double s = ref_get_f(sc->data, sc->dtype, ch), b = ref_get_f(bi->data, bi->dtype, ch);
                for (int64_t i = 0; i < sp; i++) {
                    int64_t p = base + c * sp + i;
                    ref_set_f(out, t, p, (ref_get_f(x->data, t, p) - mean) * inv * s + b);
                }
            }
        }
    return true;
}

static bool eval_layer_norm(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *sc = inp(g, n, 1), *bi = inp(g, n, 2);
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", -1), x->rank, false, "axis");
    double eps = ir_attr_float(n, "epsilon", 1e-5f);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    for (int k = axis; k < x->rank; k++) inner *= x->dims[k];
    int ir = x->rank - axis;
    struct ir_value iv; /* the normalized sub-shape, for broadcasting scale / bias */
    memset(&iv, 0, sizeof iv);
    iv.rank = ir;
    memcpy(iv.dims, x->dims + axis, sizeof(int64_t) * (size_t)ir);
    const struct ir_value *ins[2] = {sc, bi};
    void *out = ref_alloc_out(g, n->outputs[0]);
    uint32_t mv = n->noutputs > 1 ? n->outputs[1] : IR_NONE;
    uint32_t sv = n->noutputs > 2 ? n->outputs[2] : IR_NONE;
    void *mo = mv != IR_NONE ? ref_alloc_out(g, mv) : NULL;
    void *so = sv != IR_NONE ? ref_alloc_out(g, sv) : NULL;
    for (int64_t b = 0; b < outer; b++) {
        double mean, var;
        moments(x->data, t, b * inner, inner, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        if (mo) ref_set_f(mo, g->values[mv].dtype, b, mean);
        if (so) ref_set_f(so, g->values[sv].dtype, b, inv);
        struct ref_iter it;
        ref_iter_init(&it, &iv, ins, 2);
        for (int64_t i = 0; i < inner; i++, ref_iter_next(&it)) {
            int64_t p = b * inner + i;
            double y = (ref_get_f(x->data, t, p) - mean) * inv * ref_get_f(sc->data, sc->dtype, it.off[0]);
            if (bi) y += ref_get_f(bi->data, bi->dtype, it.off[1]);
            ref_set_f(out, t, p, y);
        }
    }
    return true;
}

static bool eval_batch_norm(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *sc = inp(g, n, 1), *bi = inp(g, n, 2),
                          *mu = inp(g, n, 3), *va = inp(g, n, 4);
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    if (ir_attr_int(n, "training_mode", 0) || n->noutputs > 1)
        ir_fatal_node(g, n, "BatchNormalization in training mode is not supported (inference only)");
    double eps = ir_attr_float(n, "epsilon", 1e-5f);
    int64_t N = x->dims[0], C = x->dims[1], sp = 1;
    for (int k = 2; k < x->rank; k++) sp *= x->dims[k];
    void *out = ref_alloc_out(g, n->outputs[0]);
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++) {
            double s = ref_get_f(sc->data, sc->dtype, c), b = ref_get_f(bi->data, bi->dtype, c);
            double m = ref_get_f(mu->data, mu->dtype, c), v = ref_get_f(va->data, va->dtype, c);
            double inv = 1.0 / sqrt(v + eps);
            for (int64_t i = 0; i < sp; i++) {
                int64_t p = (nn * C + c) * sp + i;
                ref_set_f(out, t, p, (ref_get_f(x->data, t, p) - m) * inv * s + b);
            }
        }
    return true;
}

bool ref_eval_norm(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    switch (n->op) {
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX:
    case IR_OP_HARDMAX: return eval_softmax(g, n);
    case IR_OP_INSTANCE_NORMALIZATION:
    case IR_OP_GROUP_NORMALIZATION: return eval_group_norm(g, n);
    case IR_OP_LAYER_NORMALIZATION: return eval_layer_norm(g, n);
    case IR_OP_BATCH_NORMALIZATION: return eval_batch_norm(g, n);
    default: return false;
    }
}
