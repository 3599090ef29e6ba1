/* ref_scatter.c — shape rules and reference CPU implementations of the scatter family
 * (ops.def family "scatter"): ScatterElements-11/13/16/18, Scatter-9/10 (= ScatterElements
 * without reduction), ScatterND-11/13/16/18, TensorScatter-24, ReverseSequence-10,
 * MaxUnpool-9/11/22.
 *
 * Assumes: inputs shaped (infer_node calls ref_scatter_infer for these ops); for evaluation every
 * input is constant (constant folding / kernel-test oracle).
 * Guarantees:
 *   - the output starts as a copy of data (past_cache, input; zeros for MaxUnpool) and the
 *     updates are applied strictly in row-major order of the updates / indices, so a reduction
 *     over duplicate indices (and "none" with duplicates: the last write wins) matches the
 *     ONNX reference implementation (onnx/reference/ops) bit for bit on the same dtype;
 *   - every index out of range (after wrapping a negative one once) is a fatal user error naming
 *     the index, as the spec makes it an error; ReverseSequence sequence_lens outside [0, T] and
 *     TensorScatter write positions outside the cache in linear mode are fatal too;
 *   - reductions: add, mul, max, min computed in double for float types (then rounded once to
 *     the dtype), in int64 with two's-complement wrap for integers; max/min propagate NaN as
 *     numpy.maximum/minimum do; bool: add = or, mul = and (numpy bool arithmetic).
 */
#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

static const struct ir_value *val(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    uint32_t v = ir_input(n, k);
    return v == IR_NONE ? NULL : &g->values[v];
}

static const char *dims_s(const struct ir_value *v, char *buf, size_t cap)
{
    return ir_dims_str(v, buf, cap);
}

int ref_scatter_reduction(const struct ir_graph *g, const struct ir_node *n)
{
    const char *r = ir_attr_string(n, "reduction", "none");
    static const char *names[] = {"none", "add", "mul", "max", "min"};
    for (int k = 0; k < 5; k++)
        if (strcmp(r, names[k]) == 0) {
            if (k >= 3 && g->opset < 18)
                ir_fatal_node(g, n, "%s: reduction='%s' needs opset 18 (model opset %lld)",
                              ir_op_name(n->op), r, (long long)g->opset);
            if (k >= 1 && g->opset < 16)
                ir_fatal_node(g, n, "%s: reduction='%s' needs opset 16 (model opset %lld)",
                              ir_op_name(n->op), r, (long long)g->opset);
            return k;
        }
    ir_fatal_node(g, n, "%s: reduction='%s' is not supported (none, add, mul, max, min)",
                  ir_op_name(n->op), r);
}

/* MaxUnpool geometry: kernel/stride/pads per spatial dim and the inferred output dims
 * (N, C, (in-1)*stride - pad_begin - pad_end + kernel). Fatal on missing/invalid attributes. */
void ref_maxunpool_geom(const struct ir_graph *g, const struct ir_node *n, const int64_t *xdims,
                        int rank, int64_t *inferred)
{
    const int nsp = rank - 2;
    size_t nk = 0, ns = 0, np = 0;
    const int64_t *ks = ir_attr_ints(n, "kernel_shape", &nk);
    const int64_t *st = ir_attr_ints(n, "strides", &ns);
    const int64_t *pads = ir_attr_ints(n, "pads", &np);
    if (!ks) ir_fatal_node(g, n, "MaxUnpool: attribute kernel_shape is required");
    if ((int)nk != nsp)
        ir_fatal_node(g, n, "MaxUnpool: kernel_shape has %zu entries, input has %d spatial dims",
                      nk, nsp);
    if (st && (int)ns != nsp)
        ir_fatal_node(g, n, "MaxUnpool: strides has %zu entries, input has %d spatial dims", ns,
                      nsp);
    if (pads && (int)np != 2 * nsp)
        ir_fatal_node(g, n, "MaxUnpool: pads has %zu entries, expected %d", np, 2 * nsp);
    inferred[0] = xdims[0];
    inferred[1] = xdims[1];
    for (int k = 0; k < nsp; k++) {
        int64_t kk = ks[k], s = st ? st[k] : 1, pb = pads ? pads[k] : 0,
                pe = pads ? pads[nsp + k] : 0;
        if (kk < 1) ir_fatal_node(g, n, "MaxUnpool: kernel_shape[%d]=%lld < 1", k, (long long)kk);
        if (s < 1) ir_fatal_node(g, n, "MaxUnpool: strides[%d]=%lld < 1", k, (long long)s);
        if (pb < 0 || pe < 0)
            ir_fatal_node(g, n, "MaxUnpool: pads (%lld, %lld) on spatial dim %d are negative",
                          (long long)pb, (long long)pe, k);
        int64_t d = (xdims[2 + k] - 1) * s - pb - pe + kk;
        if (xdims[2 + k] < 1 || d < 1)
            ir_fatal_node(g, n, "MaxUnpool: spatial dim %d (input %lld) gives output size %lld",
                          k, (long long)xdims[2 + k], (long long)d);
        inferred[2 + k] = d;
    }
}

int ref_scatter_infer(const struct ir_graph *g, const struct ir_node *n, int64_t *out,
                      enum ir_dtype *dtype)
{
    const struct ir_value *x = val(g, n, 0), *ix = val(g, n, 1), *u = val(g, n, 2);
    char b1[200], b2[200], b3[200];
    const int r = x->rank;
    *dtype = x->dtype;
    memcpy(out, x->dims, sizeof(int64_t) * (size_t)(r > 0 ? r : 0));
    switch (n->op) {
    case IR_OP_SCATTER:
    case IR_OP_SCATTER_ELEMENTS: {
        if (r < 1) ir_fatal_node(g, n, "%s: data '%s' must have rank >= 1", n->op_type, x->name);
        if (ix->dtype != IR_I64 && ix->dtype != IR_I32)
            ir_fatal_node(g, n, "%s: indices '%s' must be int32/int64, got %s", n->op_type,
                          ix->name, ir_dtype_name(ix->dtype));
        if (u->dtype != x->dtype)
            ir_fatal_node(g, n, "%s: updates '%s' (%s) and data '%s' (%s) differ in type",
                          n->op_type, u->name, ir_dtype_name(u->dtype), x->name,
                          ir_dtype_name(x->dtype));
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), r, false, "axis");
        if (n->op == IR_OP_SCATTER_ELEMENTS) ref_scatter_reduction(g, n);
        else if (ir_attr_find(n, "reduction"))
            ir_fatal_node(g, n, "Scatter: attribute reduction is not part of Scatter-9/10");
        bool ok = ix->rank == r && u->rank == r;
        for (int k = 0; ok && k < r; k++)
            ok = u->dims[k] == ix->dims[k] && (k == axis || ix->dims[k] <= x->dims[k]);
        if (!ok)
            ir_fatal_node(g, n, "%s: indices '%s' %s and updates '%s' %s must have equal dims of "
                          "data '%s' %s's rank, at most data's off axis %d", n->op_type,
                          ix->name, dims_s(ix, b1, sizeof b1), u->name, dims_s(u, b2, sizeof b2),
                          x->name, dims_s(x, b3, sizeof b3), axis);
        return r;
    }
    case IR_OP_SCATTER_ND: {
        ref_scatter_reduction(g, n);
        if (ix->dtype != IR_I64 && ix->dtype != IR_I32)
            ir_fatal_node(g, n, "ScatterND: indices '%s' must be int64, got %s", ix->name,
                          ir_dtype_name(ix->dtype));
        if (u->dtype != x->dtype)
            ir_fatal_node(g, n, "ScatterND: updates '%s' (%s) and data '%s' (%s) differ in type",
                          u->name, ir_dtype_name(u->dtype), x->name, ir_dtype_name(x->dtype));
        const int q = ix->rank;
        const int64_t K = q >= 1 ? ix->dims[q - 1] : 0;
        if (r < 1 || q < 1 || K < 1 || K > r)
            ir_fatal_node(g, n, "ScatterND: indices '%s' %s do not index data '%s' %s (need rank "
                          ">= 1 and 1 <= indices.shape[-1] <= rank(data))", ix->name,
                          dims_s(ix, b1, sizeof b1), x->name, dims_s(x, b2, sizeof b2));
        bool ok = u->rank == q - 1 + r - (int)K;
        for (int k = 0; ok && k < q - 1; k++) ok = u->dims[k] == ix->dims[k];
        for (int k = (int)K; ok && k < r; k++) ok = u->dims[q - 1 + k - K] == x->dims[k];
        if (!ok)
            ir_fatal_node(g, n, "ScatterND: updates '%s' %s must have shape indices.shape[:-1] ++ "
                          "data.shape[%lld:] (indices %s, data %s)", u->name,
                          dims_s(u, b1, sizeof b1), (long long)K, dims_s(ix, b2, sizeof b2),
                          dims_s(x, b3, sizeof b3));
        return r;
    }
    case IR_OP_TENSOR_SCATTER: {
        const char *mode = ir_attr_string(n, "mode", "linear");
        if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
            ir_fatal_node(g, n, "TensorScatter: mode='%s' is not supported (linear, circular)",
                          mode);
        u = ix; /* inputs: past_cache, update, write_indices */
        const struct ir_value *wi = val(g, n, 2);
        if (r < 2)
            ir_fatal_node(g, n, "TensorScatter: past_cache '%s' must have rank >= 2", x->name);
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", -2), r, false, "axis");
        if (axis == 0)
            ir_fatal_node(g, n, "TensorScatter: axis=%lld is the batch axis (must be >= 1)",
                          (long long)ir_attr_int(n, "axis", -2));
        if (u->dtype != x->dtype)
            ir_fatal_node(g, n, "TensorScatter: update '%s' (%s) and past_cache '%s' (%s) differ "
                          "in type", u->name, ir_dtype_name(u->dtype), x->name,
                          ir_dtype_name(x->dtype));
        bool ok = u->rank == r;
        for (int k = 0; ok && k < r; k++)
            ok = k == axis ? u->dims[k] <= x->dims[k] : u->dims[k] == x->dims[k];
        if (!ok)
            ir_fatal_node(g, n, "TensorScatter: update '%s' %s must match past_cache '%s' %s "
                          "except on axis %d (where it may be shorter)", u->name,
                          dims_s(u, b1, sizeof b1), x->name, dims_s(x, b2, sizeof b2), axis);
        if (wi && (wi->rank != 1 || wi->dims[0] != x->dims[0] ||
                   (wi->dtype != IR_I64 && wi->dtype != IR_I32)))
            ir_fatal_node(g, n, "TensorScatter: write_indices '%s' %s %s must be int64 [%lld]",
                          wi->name, ir_dtype_name(wi->dtype), dims_s(wi, b1, sizeof b1),
                          (long long)x->dims[0]);
        return r;
    }
    case IR_OP_REVERSE_SEQUENCE: {
        const int64_t ba = ir_attr_int(n, "batch_axis", 1), ta = ir_attr_int(n, "time_axis", 0);
        if (r < 2)
            ir_fatal_node(g, n, "ReverseSequence: input '%s' must have rank >= 2", x->name);
        if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
            ir_fatal_node(g, n, "ReverseSequence: batch_axis=%lld, time_axis=%lld must be 0 and "
                          "1 in some order", (long long)ba, (long long)ta);
        if (ix->rank != 1 || ix->dims[0] != x->dims[ba] ||
            (ix->dtype != IR_I64 && ix->dtype != IR_I32))
            ir_fatal_node(g, n, "ReverseSequence: sequence_lens '%s' %s %s must be int64 [%lld]",
                          ix->name, ir_dtype_name(ix->dtype), dims_s(ix, b1, sizeof b1),
                          (long long)x->dims[ba]);
        return r;
    }
    case IR_OP_MAX_UNPOOL: {
        if (r < 3)
            ir_fatal_node(g, n, "MaxUnpool: X '%s' must have rank >= 3 (N, C, spatial...)",
                          x->name);
        bool ok = ix->rank == r && ix->dtype == IR_I64;
        for (int k = 0; ok && k < r; k++) ok = ix->dims[k] == x->dims[k];
        if (!ok)
            ir_fatal_node(g, n, "MaxUnpool: indices '%s' %s %s must be int64 with the dims of X "
                          "'%s' %s", ix->name, ir_dtype_name(ix->dtype),
                          dims_s(ix, b1, sizeof b1), x->name, dims_s(x, b2, sizeof b2));
        ref_maxunpool_geom(g, n, x->dims, r, out);
        if (u) {
            int64_t os[IR_MAX_RANK];
            int no = ref_const_ints(g, n, 2, os, IR_MAX_RANK, "output_shape");
            ok = no == r && os[0] == out[0] && os[1] == out[1];
            for (int k = 2; ok && k < r; k++) ok = os[k] >= out[k];
            if (!ok)
                ir_fatal_node(g, n, "MaxUnpool: output_shape '%s' must have %d entries, keep N=%lld "
                              "C=%lld and be at least the inferred spatial size", u->name, r,
                              (long long)out[0], (long long)out[1]);
            memcpy(out, os, sizeof(int64_t) * (size_t)r);
        }
        return r;
    }
    default:
        break;
    }
    ir_fatal_node(g, n, "internal: %s is not a scatter-family op", ir_op_name(n->op));
}

/* out[o] = f(out[o], upd[i]) for reduction red (0 none, 1 add, 2 mul, 3 max, 4 min). */
static void apply(void *out, int64_t o, const void *upd, int64_t i, enum ir_dtype t, int red)
{
    if (red == 0) {
        ref_copy_elem(out, o, upd, i, ir_dtype_size(t));
        return;
    }
    if (ref_is_float(t)) {
        double a = ref_get_f(out, t, o), b = ref_get_f(upd, t, i), v;
        switch (red) {
        case 1: v = a + b; break;
        case 2: v = a * b; break;
        case 3: v = isnan(a) || a > b ? a : b; break;
        default: v = isnan(a) || a < b ? a : b; break;
        }
        ref_set_f(out, t, o, v);
        return;
    }
    if (t == IR_BOOL) {
        int64_t a = ref_get_i(out, t, o), b = ref_get_i(upd, t, i);
        ref_set_i(out, t, o, red == 1 || red == 3 ? (a | b) : (a & b));
        return;
    }
    int64_t a = ref_get_i(out, t, o), b = ref_get_i(upd, t, i), v;
    bool uns = ref_is_unsigned(t);
    switch (red) {
    case 1: v = (int64_t)((uint64_t)a + (uint64_t)b); break;
    case 2: v = (int64_t)((uint64_t)a * (uint64_t)b); break;
    case 3: v = uns ? ((uint64_t)a > (uint64_t)b ? a : b) : (a > b ? a : b); break;
    default: v = uns ? ((uint64_t)a < (uint64_t)b ? a : b) : (a < b ? a : b); break;
    }
    ref_set_i(out, t, o, v);
}

/* Wraps a negative index once; fatal if outside [0, dim). */
static int64_t fix_idx(const struct ir_graph *g, const struct ir_node *n, int64_t v, int64_t dim,
                       int axis)
{
    if (v < -dim || v >= dim)
        ir_fatal_node(g, n, "%s: index %lld out of range [-%lld, %lld) on axis %d",
                      ir_op_name(n->op), (long long)v, (long long)dim, (long long)dim, axis);
    return v < 0 ? v + dim : v;
}

bool ref_eval_scatter(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const struct ir_value *x = val(g, n, 0), *ix = val(g, n, 1), *u = val(g, n, 2);
    const uint32_t ov = n->outputs[0];
    const enum ir_dtype t = x->dtype;
    const size_t es = ir_dtype_size(t);
    char *out = ref_alloc_out(g, ov);
    const struct ir_value *o = &g->values[ov];
    const int r = x->rank;
    int64_t xs[IR_MAX_RANK];
    ref_strides(x->dims, r, xs);
    if (n->op != IR_OP_MAX_UNPOOL) memcpy(out, x->data, x->nbytes);
    switch (n->op) {
    case IR_OP_SCATTER:
    case IR_OP_SCATTER_ELEMENTS: {
        const int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), r, false, "axis");
        const int red = n->op == IR_OP_SCATTER ? 0 : ref_scatter_reduction(g, n);
        struct ref_iter it;
        const struct ir_value *none[1] = {NULL};
        ref_iter_init(&it, u, none, 1);
        const int64_t cnt = ref_numel_v(u);
        for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
            int64_t off = 0;
            for (int k = 0; k < r; k++) {
                int64_t c = it.idx[k];
                if (k == axis) c = fix_idx(g, n, ref_get_i(ix->data, ix->dtype, i), x->dims[k], k);
                off += c * xs[k];
            }
            apply(out, off, u->data, i, t, red);
        }
        return true;
    }
    case IR_OP_SCATTER_ND: {
        const int red = ref_scatter_reduction(g, n);
        const int64_t K = ix->dims[ix->rank - 1];
        const int64_t rows = ref_numel_v(ix) / K;
        int64_t slice = 1;
        for (int k = (int)K; k < r; k++) slice *= x->dims[k];
        for (int64_t m = 0; m < rows; m++) {
            int64_t off = 0;
            for (int64_t j = 0; j < K; j++)
                off += fix_idx(g, n, ref_get_i(ix->data, ix->dtype, m * K + j), x->dims[j],
                               (int)j) * xs[j];
            for (int64_t e = 0; e < slice; e++) apply(out, off + e, u->data, m * slice + e, t, red);
        }
        return true;
    }
    case IR_OP_TENSOR_SCATTER: {
        const struct ir_value *up = ix, *wi = u;
        const int axis = ref_axis(g, n, ir_attr_int(n, "axis", -2), r, false, "axis");
        const bool circ = strcmp(ir_attr_string(n, "mode", "linear"), "circular") == 0;
        const int64_t M = x->dims[axis], S = up->dims[axis];
        int64_t outer = 1, inner = 1, per_b = 1;
        for (int k = 0; k < axis; k++) outer *= x->dims[k];
        for (int k = 1; k < axis; k++) per_b *= x->dims[k];
        for (int k = axis + 1; k < r; k++) inner *= x->dims[k];
        for (int64_t p = 0; p < outer; p++) {
            const int64_t b = p / per_b;
            const int64_t w = wi ? ref_get_i(wi->data, wi->dtype, b) : 0;
            for (int64_t j = 0; j < S; j++) {
                int64_t c = w + j;
                if (circ) c = ((c % M) + M) % M;
                if (c < 0 || c >= M)
                    ir_fatal_node(g, n, "TensorScatter: write index %lld + %lld is outside the "
                                  "cache length %lld (mode linear)", (long long)w, (long long)j,
                                  (long long)M);
                memcpy(out + (size_t)((p * M + c) * inner) * es,
                       (const char *)up->data + (size_t)((p * S + j) * inner) * es,
                       (size_t)inner * es);
            }
        }
        return true;
    }
    case IR_OP_REVERSE_SEQUENCE: {
        const int ba = (int)ir_attr_int(n, "batch_axis", 1), ta = (int)ir_attr_int(n, "time_axis", 0);
        const int64_t T = x->dims[ta];
        struct ref_iter it;
        const struct ir_value *none[1] = {NULL};
        ref_iter_init(&it, x, none, 1);
        const int64_t cnt = ref_numel_v(x);
        for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
            const int64_t L = ref_get_i(ix->data, ix->dtype, it.idx[ba]);
            if (L < 0 || L > T)
                ir_fatal_node(g, n, "ReverseSequence: sequence_lens[%lld]=%lld outside [0, %lld]",
                              (long long)it.idx[ba], (long long)L, (long long)T);
            const int64_t tt = it.idx[ta];
            const int64_t src = tt < L ? i + (L - 1 - 2 * tt) * xs[ta] : i;
            ref_copy_elem(out, i, x->data, src, es);
        }
        return true;
    }
    case IR_OP_MAX_UNPOOL: {
        int64_t inf[IR_MAX_RANK], ist[IR_MAX_RANK], os[IR_MAX_RANK];
        ref_maxunpool_geom(g, n, x->dims, r, inf);
        ref_strides(inf, r, ist);
        ref_strides(o->dims, r, os);
        int64_t ninf = 1;
        for (int k = 0; k < r; k++) ninf *= inf[k];
        const int64_t cnt = ref_numel_v(x);
        for (int64_t i = 0; i < cnt; i++) {
            const int64_t id = ref_get_i(ix->data, ix->dtype, i);
            if (id < 0 || id >= ninf)
                ir_fatal_node(g, n, "MaxUnpool: index %lld (element %lld) out of range [0, %lld)",
                              (long long)id, (long long)i, (long long)ninf);
            int64_t off = 0;
            for (int k = 0; k < r; k++) off += (id / ist[k] % inf[k]) * os[k];
            ref_copy_elem(out, off, x->data, i, es);
        }
        return true;
    }
    default:
        return false;
    }
}
