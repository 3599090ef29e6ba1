/* ref_reduce.c — reference Reduce* (Mean, Sum, Max, Min, Prod, L1, L2, SumSquare, LogSum,
 * LogSumExp), ArgMax/ArgMin, CumSum and TopK.
 *
 * Assumes: axes from the normalized IR (input 1, via ref_reduce_axes); outputs shaped by
 * infer_node.
 * Guarantees: float accumulation in double (LogSumExp max-shifted); ReduceMax/Min propagate NaN;
 * reductions over an empty set give the ONNX-18 identities (0 for sums, 1 for Prod, -inf / +inf
 * (or the dtype's min / max) for Max / Min, -inf for LogSum(Exp)); integer sums wrap in int64 and
 * are narrowed on store. ArgMax/ArgMin honour keepdims and select_last_index; CumSum honours
 * exclusive and reverse. TopK: lines ordered largest (or smallest) first, NaN above every
 * number, ties by lower index (onnxruntime's order), by a stable merge sort.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_util.h"

static void int_limits(enum ir_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case IR_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case IR_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case IR_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case IR_U8: *lo = 0; *hi = UINT8_MAX; break;
    case IR_U16: *lo = 0; *hi = UINT16_MAX; break;
    case IR_U32: *lo = 0; *hi = UINT32_MAX; break;
    case IR_U64: *lo = 0; *hi = -1; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

static bool eval_reduce(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = &g->values[n->inputs[0]];
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    enum ir_dtype t = x->dtype;
    bool mask[IR_MAX_RANK];
    if (!ref_reduce_axes(g, n, x->rank, mask)) {
        void *out = ref_alloc_out(g, ov);
        memcpy(out, x->data, x->nbytes);
        return true;
    }
    if (t == IR_BOOL) return false;
    bool flt = ref_is_float(t), uns = ref_is_unsigned(t);
    /* output strides over the input's axes (0 on reduced axes) */
    int64_t ost[IR_MAX_RANK], s = 1, count = 1;
    for (int k = x->rank - 1; k >= 0; k--) {
        if (mask[k]) {
            ost[k] = 0;
            count *= x->dims[k];
        } else {
            ost[k] = s;
            s *= x->dims[k];
        }
    }
    int64_t on = ref_numel_v(o), xn = ref_numel_v(x);
    double *af = ref_tmp(sizeof(double) * (size_t)(on ? on : 1));
    double *mx = NULL;
    int64_t *ai = ref_tmp(sizeof(int64_t) * (size_t)(on ? on : 1));
    int64_t lo, hi;
    int_limits(t, &lo, &hi);
    enum ir_op op = n->op;
    for (int64_t j = 0; j < on; j++) {
        switch (op) {
        case IR_OP_REDUCE_PROD: af[j] = 1; ai[j] = 1; break;
        case IR_OP_REDUCE_MAX: af[j] = -INFINITY; ai[j] = lo; break;
        case IR_OP_REDUCE_MIN: af[j] = INFINITY; ai[j] = hi; break;
        default: af[j] = 0; ai[j] = 0; break;
        }
    }
    struct ref_iter it;
    const struct ir_value *none[1] = {NULL};
    if (op == IR_OP_REDUCE_LOG_SUM_EXP) {
        mx = ref_tmp(sizeof(double) * (size_t)(on ? on : 1));
        for (int64_t j = 0; j < on; j++) mx[j] = -INFINITY;
        ref_iter_init(&it, x, none, 1);
        memcpy(it.st[0], ost, sizeof ost);
        for (int64_t i = 0; i < xn; i++, ref_iter_next(&it)) {
            double v = ref_get_f(x->data, t, i);
            if (v > mx[it.off[0]]) mx[it.off[0]] = v;
        }
        for (int64_t j = 0; j < on; j++)
            if (isinf(mx[j])) mx[j] = 0;
    }
    ref_iter_init(&it, x, none, 1);
    memcpy(it.st[0], ost, sizeof ost);
    for (int64_t i = 0; i < xn; i++, ref_iter_next(&it)) {
        int64_t j = it.off[0];
        if (flt || op == IR_OP_REDUCE_LOG_SUM || op == IR_OP_REDUCE_LOG_SUM_EXP ||
            op == IR_OP_REDUCE_L2) {
            double v = ref_get_f(x->data, t, i);
            switch (op) {
            case IR_OP_REDUCE_MAX: if (isnan(v) || v > af[j]) af[j] = v; break;
            case IR_OP_REDUCE_MIN: if (isnan(v) || v < af[j]) af[j] = v; break;
            case IR_OP_REDUCE_PROD: af[j] *= v; break;
            case IR_OP_REDUCE_L1: af[j] += fabs(v); break;
            case IR_OP_REDUCE_L2:
            case IR_OP_REDUCE_SUM_SQUARE: af[j] += v * v; break;
            case IR_OP_REDUCE_LOG_SUM_EXP: af[j] += exp(v - mx[j]); break;
            default: af[j] += v; break;
            }
        } else {
            int64_t v = ref_get_i(x->data, t, i);
            uint64_t a = (uint64_t)ai[j], b = (uint64_t)v;
            switch (op) {
            case IR_OP_REDUCE_MAX: if (uns ? b > a : v > ai[j]) ai[j] = v; break;
            case IR_OP_REDUCE_MIN: if (uns ? b < a : v < ai[j]) ai[j] = v; break;
            case IR_OP_REDUCE_PROD: ai[j] = (int64_t)(a * b); break;
            case IR_OP_REDUCE_L1: ai[j] = (int64_t)(a + (uint64_t)(v < 0 && !uns ? -v : v)); break;
            case IR_OP_REDUCE_SUM_SQUARE: ai[j] = (int64_t)(a + b * b); break;
            default: ai[j] = (int64_t)(a + b); break;
            }
        }
    }
    void *out = ref_alloc_out(g, ov);
    for (int64_t j = 0; j < on; j++) {
        if (flt || op == IR_OP_REDUCE_LOG_SUM || op == IR_OP_REDUCE_LOG_SUM_EXP ||
            op == IR_OP_REDUCE_L2) {
            double r = af[j];
            switch (op) {
            case IR_OP_REDUCE_MEAN: r = count ? r / (double)count : NAN; break;
            case IR_OP_REDUCE_L2: r = sqrt(r); break;
            case IR_OP_REDUCE_LOG_SUM: r = log(r); break;
            case IR_OP_REDUCE_LOG_SUM_EXP: r = log(r) + mx[j]; break;
            default: break;
            }
            ref_set_f(out, o->dtype, j, r);
        } else {
            int64_t r = ai[j];
            if (op == IR_OP_REDUCE_MEAN && count)
                r = uns ? (int64_t)((uint64_t)r / (uint64_t)count) : r / count;
            ref_set_i(out, o->dtype, j, r);
        }
    }
    free(af);
    free(ai);
    free(mx);
    return true;
}

static bool eval_arg(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = &g->values[n->inputs[0]];
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (t == IR_BOOL) return false;
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis");
    bool last = ir_attr_int(n, "select_last_index", 0) != 0, ismax = n->op == IR_OP_ARG_MAX;
    int64_t outer = 1, inner = 1, ax = x->dims[axis];
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    for (int k = axis + 1; k < x->rank; k++) inner *= x->dims[k];
    int64_t *out = ref_alloc_out(g, ov);
    bool flt = ref_is_float(t), uns = ref_is_unsigned(t);
    for (int64_t b = 0; b < outer; b++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t best = 0;
            for (int64_t a = 1; a < ax; a++) {
                int64_t p = (b * ax + a) * inner + i, q = (b * ax + best) * inner + i;
                int cmp;
                if (flt) {
                    double u = ref_get_f(x->data, t, p), v = ref_get_f(x->data, t, q);
                    cmp = u > v ? 1 : u < v ? -1 : 0;
                } else if (uns) {
                    uint64_t u = (uint64_t)ref_get_i(x->data, t, p), v = (uint64_t)ref_get_i(x->data, t, q);
                    cmp = u > v ? 1 : u < v ? -1 : 0;
                } else {
                    int64_t u = ref_get_i(x->data, t, p), v = ref_get_i(x->data, t, q);
                    cmp = u > v ? 1 : u < v ? -1 : 0;
                }
                if (!ismax) cmp = -cmp;
                if (cmp > 0 || (cmp == 0 && last)) best = a;
            }
            out[b * inner + i] = best;
        }
    return true;
}

static bool eval_cumsum(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = &g->values[n->inputs[0]], *av = &g->values[n->inputs[1]];
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (t == IR_BOOL) return false;
    int axis = ref_axis(g, n, ref_get_i(av->data, av->dtype, 0), x->rank, false, "axis");
    bool excl = ir_attr_int(n, "exclusive", 0) != 0, rev = ir_attr_int(n, "reverse", 0) != 0;
    int64_t outer = 1, inner = 1, ax = x->dims[axis];
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    for (int k = axis + 1; k < x->rank; k++) inner *= x->dims[k];
    void *out = ref_alloc_out(g, ov);
    bool flt = ref_is_float(t);
    for (int64_t b = 0; b < outer; b++)
        for (int64_t i = 0; i < inner; i++) {
            double sf = 0;
            int64_t si = 0;
            for (int64_t s = 0; s < ax; s++) {
                int64_t a = rev ? ax - 1 - s : s, p = (b * ax + a) * inner + i;
                if (flt) {
                    double v = ref_get_f(x->data, t, p);
                    if (!excl) sf += v;
                    ref_set_f(out, t, p, sf);
                    if (excl) sf += v;
                } else {
                    int64_t v = ref_get_i(x->data, t, p);
                    if (!excl) si = (int64_t)((uint64_t)si + (uint64_t)v);
                    ref_set_i(out, t, p, si);
                    if (excl) si = (int64_t)((uint64_t)si + (uint64_t)v);
                }
            }
        }
    return true;
}

/* TopK order: whether element p comes before element q (p < q in index). Largest first: greater
 * values first, NaN greater than every number; smallest first: the reverse order of values.
 * Equal values (NaN equal to NaN) keep index order (lower index first), as onnxruntime. */
static bool topk_before(const void *x, enum ir_dtype t, int64_t p, int64_t q, bool largest)
{
    int cmp;
    if (ref_is_float(t)) {
        double u = ref_get_f(x, t, p), v = ref_get_f(x, t, q);
        bool nu = isnan(u), nv = isnan(v);
        cmp = nu || nv ? (int)nu - (int)nv : (u > v) - (u < v);
    } else if (ref_is_unsigned(t)) {
        uint64_t u = (uint64_t)ref_get_i(x, t, p), v = (uint64_t)ref_get_i(x, t, q);
        cmp = (u > v) - (u < v);
    } else {
        int64_t u = ref_get_i(x, t, p), v = ref_get_i(x, t, q);
        cmp = (u > v) - (u < v);
    }
    if (!largest) cmp = -cmp;
    return cmp > 0 || (cmp == 0 && p < q);
}

/* TopK-1/10/11 (k a constant input after import): the k first elements of every line along
 * `axis` in topk_before order (sorted=0 gives the same order, which the spec allows), by a
 * stable merge sort of the line's element offsets. */
static bool eval_topk(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = &g->values[n->inputs[0]];
    enum ir_dtype t = x->dtype;
    if (t == IR_BOOL) return false;
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", -1), x->rank, false, "axis");
    bool largest = ir_attr_int(n, "largest", 1) != 0;
    uint32_t vo = n->outputs[0], io = n->noutputs > 1 ? n->outputs[1] : IR_NONE;
    int64_t k = g->values[vo].dims[axis];
    int64_t outer = 1, inner = 1, ax = x->dims[axis];
    for (int d = 0; d < axis; d++) outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    void *vals = ref_alloc_out(g, vo);
    int64_t *idx = io != IR_NONE ? ref_alloc_out(g, io) : NULL;
    int64_t *a = ir_alloc(g, (size_t)(ax ? ax : 1) * sizeof *a), *b = ir_alloc(g, (size_t)(ax ? ax : 1) * sizeof *b);
    size_t es = ir_dtype_size(t);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * ax * inner + i;
            for (int64_t j = 0; j < ax; j++) a[j] = base + j * inner;
            for (int64_t w = 1; w < ax; w *= 2) { /* bottom-up merge sort, a -> b -> a */
                for (int64_t lo = 0; lo < ax; lo += 2 * w) {
                    int64_t mid = lo + w < ax ? lo + w : ax, hi = lo + 2 * w < ax ? lo + 2 * w : ax;
                    int64_t p = lo, q = mid, r = lo;
                    while (p < mid && q < hi) b[r++] = topk_before(x->data, t, a[q], a[p], largest) ? a[q++] : a[p++];
                    while (p < mid) b[r++] = a[p++];
                    while (q < hi) b[r++] = a[q++];
                }
                int64_t *tmp = a;
                a = b;
                b = tmp;
            }
            for (int64_t j = 0; j < k; j++) {
                int64_t dst = (o * k + j) * inner + i;
                memcpy((char *)vals + dst * es, (const char *)x->data + a[j] * es, es);
                if (idx) idx[dst] = (a[j] - base) / inner;
            }
        }
    return true;
}

bool ref_eval_reduce(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    switch (n->op) {
    case IR_OP_ARG_MAX:
    case IR_OP_ARG_MIN: return eval_arg(g, n);
    case IR_OP_CUM_SUM: return eval_cumsum(g, n);
    case IR_OP_TOP_K: return eval_topk(g, n);
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MAX:
    case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD:
    case IR_OP_REDUCE_L1:
    case IR_OP_REDUCE_L2:
    case IR_OP_REDUCE_SUM_SQUARE:
    case IR_OP_REDUCE_LOG_SUM:
    case IR_OP_REDUCE_LOG_SUM_EXP: return eval_reduce(g, n);
    default: return false;
    }
}
