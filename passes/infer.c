/* infer.c — shape and dtype inference of one node (infer_node, passes/passes.h).
 *
 * Assumes: the normalized IR of ir/ir.h (axes/pads/splits/scales are constant inputs; Softmax
 * family carries "_flatten"); every present input has known dims (checked here, with a message
 * naming the --shape flag); inputs whose *values* determine a shape (Reshape shape, Expand shape,
 * Slice parameters, Pad pads, Resize scales/sizes, Range, ConstantOfShape, Tile repeats, Split
 * sizes, Squeeze/Unsqueeze/Reduce axes, CumSum-free) are constants by the time the pipeline
 * calls this (shape chains are folded first, in topological order).
 * Guarantees: every present output gets dtype, rank, dims and dims_known = true, following the
 * ONNX spec of each op in ops.def; inconsistent inputs are fatal (ir_fatal_node) with the
 * values and dims named. Geometry shared with the reference ops lives in ref/ref_util.c.
 */
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref/ref_quant.h"
#include "ref/ref_util.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static const char *dstr(const struct ir_value *v, char *buf, size_t cap)
{
    return ir_dims_str(v, buf, cap);
}

static void dims_to_str(const int64_t *d, int r, char *buf, size_t cap)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, cap - o, "[");
    for (int k = 0; k < r && o < cap; k++)
        o += (size_t)snprintf(buf + o, cap - o, k ? ",%lld" : "%lld", (long long)d[k]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

/* Sets output k of n (if present) to dtype/rank/dims; fatal on a negative dim. */
static void set_out(struct ir_graph *g, const struct ir_node *n, uint32_t k, enum ir_dtype t,
                    int rank, const int64_t *dims)
{
    uint32_t o = k < n->noutputs ? n->outputs[k] : IR_NONE;
    if (o == IR_NONE) return;
    if (rank > IR_MAX_RANK)
        ir_fatal_node(g, n, "output '%s' would have rank %d > %d (unsupported)", g->values[o].name,
                      rank, IR_MAX_RANK);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0) {
            char buf[200];
            dims_to_str(dims, rank, buf, sizeof buf);
            ir_fatal_node(g, n, "output '%s' would have a negative dim: %s", g->values[o].name,
                          buf);
        }
    /* byte size must fit in int64 (and so size_t): later passes compute numel * dtype size */
    int64_t numel;
    size_t esz = ir_dtype_size(t);
    if (!ir_dims_numel(dims, rank, &numel) || (esz && numel > INT64_MAX / (int64_t)esz)) {
        char buf[200];
        dims_to_str(dims, rank, buf, sizeof buf);
        ir_fatal_node(g, n, "output '%s' %s would be too large (size overflows 64 bits)",
                      g->values[o].name, buf);
    }
    struct ir_value *v = &g->values[o];
    v->dtype = t;
    v->rank = rank;
    for (int i = 0; i < IR_MAX_RANK; i++) {
        v->dims[i] = i < rank ? dims[i] : 0;
        v->dim_param[i] = NULL;
    }
    v->dims_known = true;
}

static void set_like(struct ir_graph *g, const struct ir_node *n, uint32_t k,
                     const struct ir_value *x, enum ir_dtype t)
{
    if (!x) return;
    int64_t d[IR_MAX_RANK];
    memcpy(d, x->dims, sizeof d);
    set_out(g, n, k, t, x->rank, d);
}

static const struct ir_value *in_v(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    uint32_t v = ir_input(n, k);
    return v == IR_NONE ? NULL : &g->values[v];
}

static const struct ir_value *req(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    const struct ir_value *v = in_v(g, n, k);
    if (!v) ir_fatal_node(g, n, "required input %u is missing", k);
    return v;
}

/* Broadcast all present inputs in [first, last); fatal naming both operands on mismatch. */
static void bcast_inputs(const struct ir_graph *g, const struct ir_node *n, uint32_t first,
                         uint32_t last, int64_t *out, int *rout)
{
    *rout = 0;
    const struct ir_value *prev = NULL;
    for (uint32_t k = first; k < last && k < n->ninputs; k++) {
        const struct ir_value *v = in_v(g, n, k);
        if (!v) continue;
        if (!prev) {
            memcpy(out, v->dims, sizeof(int64_t) * (size_t)v->rank);
            *rout = v->rank;
        } else {
            int64_t tmp[IR_MAX_RANK];
            int rt;
            if (!ref_bcast_dims(out, *rout, v->dims, v->rank, tmp, &rt)) {
                char b1[200], b2[200];
                dims_to_str(out, *rout, b1, sizeof b1);
                ir_fatal_node(g, n, "cannot broadcast %s (inputs before %u) with '%s' %s", b1, k,
                              v->name, dstr(v, b2, sizeof b2));
            }
            memcpy(out, tmp, sizeof tmp);
            *rout = rt;
        }
        prev = v;
    }
}

static void need_rank(const struct ir_graph *g, const struct ir_node *n, const struct ir_value *v,
                      int lo, int hi)
{
    if (v->rank < lo || v->rank > hi) {
        char b[200];
        ir_fatal_node(g, n, "input '%s' has rank %d %s; expected rank %d..%d", v->name, v->rank,
                      dstr(v, b, sizeof b), lo, hi);
    }
}

static int64_t scalar_i(const struct ir_graph *g, const struct ir_node *n, uint32_t k,
                        const char *what)
{
    int64_t v[1];
    const struct ir_value *x = req(g, n, k);
    if (ref_numel_v(x) != 1)
        ir_fatal_node(g, n, "%s input '%s' must have one element", what, x->name);
    ref_const_ints(g, n, k, v, 1, what);
    return v[0];
}

static void infer_matmul(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *a = req(g, n, 0), *b = req(g, n, 1);
    char b1[200], b2[200];
    if (a->rank < 1 || b->rank < 1)
        ir_fatal_node(g, n, "MatMul operands must have rank >= 1: '%s' %s, '%s' %s", a->name,
                      dstr(a, b1, sizeof b1), b->name, dstr(b, b2, sizeof b2));
    int64_t ad[IR_MAX_RANK + 1], bd[IR_MAX_RANK + 1];
    int ar = a->rank, br = b->rank;
    memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ar);
    memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
    bool a1 = ar == 1, b1d = br == 1;
    if (a1) { ad[1] = ad[0]; ad[0] = 1; ar = 2; }
    if (b1d) { bd[1] = 1; br = 2; }
    if (ad[ar - 1] != bd[br - 2])
        ir_fatal_node(g, n, "MatMul inner dims differ: '%s' %s (K=%lld) vs '%s' %s (K=%lld)",
                      a->name, dstr(a, b1, sizeof b1), (long long)ad[ar - 1], b->name,
                      dstr(b, b2, sizeof b2), (long long)bd[br - 2]);
    int64_t batch[IR_MAX_RANK];
    int rb;
    if (!ref_bcast_dims(ad, ar - 2, bd, br - 2, batch, &rb))
        ir_fatal_node(g, n, "MatMul batch dims do not broadcast: '%s' %s vs '%s' %s", a->name,
                      dstr(a, b1, sizeof b1), b->name, dstr(b, b2, sizeof b2));
    int64_t out[IR_MAX_RANK + 2];
    int r = 0;
    for (int k = 0; k < rb; k++) out[r++] = batch[k];
    if (!a1) out[r++] = ad[ar - 2];
    if (!b1d) out[r++] = bd[br - 1];
    set_out(g, n, 0, a->dtype, r, out);
}

static void infer_gemm(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *a = req(g, n, 0), *b = req(g, n, 1), *c = in_v(g, n, 2);
    need_rank(g, n, a, 2, 2);
    need_rank(g, n, b, 2, 2);
    int ta = (int)ir_attr_int(n, "transA", 0), tb = (int)ir_attr_int(n, "transB", 0);
    int64_t m = ta ? a->dims[1] : a->dims[0], ka = ta ? a->dims[0] : a->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0], nn = tb ? b->dims[0] : b->dims[1];
    char b1[200], b2[200];
    if (ka != kb)
        ir_fatal_node(g, n, "Gemm inner dims differ: A '%s' %s transA=%d, B '%s' %s transB=%d",
                      a->name, dstr(a, b1, sizeof b1), ta, b->name, dstr(b, b2, sizeof b2), tb);
    int64_t out[2] = {m, nn};
    if (c) {
        int64_t t[IR_MAX_RANK];
        int rt;
        if (c->rank > 2 || !ref_bcast_dims(out, 2, c->dims, c->rank, t, &rt) || t[0] != m ||
            t[1] != nn)
            ir_fatal_node(g, n, "Gemm C '%s' %s does not broadcast to [%lld,%lld]", c->name,
                          dstr(c, b1, sizeof b1), (long long)m, (long long)nn);
    }
    set_out(g, n, 0, a->dtype, 2, out);
}

static void infer_conv(struct ir_graph *g, const struct ir_node *n, bool transpose)
{
    const struct ir_value *x = req(g, n, 0), *w = req(g, n, 1), *b = in_v(g, n, 2);
    char b1[200], b2[200];
    if (w->rank != x->rank)
        ir_fatal_node(g, n, "weight '%s' %s has rank %d but input '%s' %s has rank %d", w->name,
                      dstr(w, b1, sizeof b1), w->rank, x->name, dstr(x, b2, sizeof b2), x->rank);
    need_rank(g, n, x, 3, 5);
    struct ref_conv_geom geo;
    int64_t out[IR_MAX_RANK];
    out[0] = x->dims[0];
    if (!transpose) {
        ref_conv_geom(g, n, x->dims, x->rank, w->dims + 2, false, &geo);
        int64_t grp = geo.group;
        if (grp <= 0 || x->dims[1] % grp)
            ir_fatal_node(g, n, "group=%lld does not divide C_in=%lld of '%s'", (long long)grp,
                          (long long)x->dims[1], x->name);
        if (w->dims[1] * grp != x->dims[1])
            ir_fatal_node(g, n,
                          "weight '%s' %s expects C_in/group=%lld but input '%s' %s has C_in=%lld "
                          "with group=%lld",
                          w->name, dstr(w, b1, sizeof b1), (long long)w->dims[1], x->name,
                          dstr(x, b2, sizeof b2), (long long)x->dims[1], (long long)grp);
        if (w->dims[0] % grp)
            ir_fatal_node(g, n, "group=%lld does not divide C_out=%lld of weight '%s'",
                          (long long)grp, (long long)w->dims[0], w->name);
        out[1] = w->dims[0];
    } else {
        ref_convt_geom(g, n, x->dims, x->rank, w->dims, &geo);
        int64_t grp = geo.group;
        if (grp <= 0 || x->dims[1] % grp)
            ir_fatal_node(g, n, "group=%lld does not divide C_in=%lld of '%s'", (long long)grp,
                          (long long)x->dims[1], x->name);
        if (w->dims[0] != x->dims[1])
            ir_fatal_node(g, n, "weight '%s' %s has %lld input channels but '%s' %s has %lld",
                          w->name, dstr(w, b1, sizeof b1), (long long)w->dims[0], x->name,
                          dstr(x, b2, sizeof b2), (long long)x->dims[1]);
        out[1] = w->dims[1] * grp;
    }
    if (b && (b->rank != 1 || b->dims[0] != out[1]))
        ir_fatal_node(g, n, "bias '%s' %s must have shape [%lld]", b->name, dstr(b, b1, sizeof b1),
                      (long long)out[1]);
    for (int i = 0; i < geo.nsp; i++) out[2 + i] = geo.out[i];
    set_out(g, n, 0, x->dtype, x->rank, out);
}

static void infer_pool(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = req(g, n, 0);
    need_rank(g, n, x, 3, IR_MAX_RANK);
    struct ref_conv_geom geo;
    ref_conv_geom(g, n, x->dims, x->rank, NULL, true, &geo);
    int64_t out[IR_MAX_RANK];
    out[0] = x->dims[0];
    out[1] = x->dims[1];
    for (int i = 0; i < geo.nsp; i++) out[2 + i] = geo.out[i];
    set_out(g, n, 0, x->dtype, x->rank, out);
    set_out(g, n, 1, IR_I64, x->rank, out); /* MaxPool Indices */
}

static void infer_reshape(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = req(g, n, 0), *s = req(g, n, 1);
    int64_t sh[IR_MAX_RANK];
    if (s->rank != 1)
        ir_fatal_node(g, n, "shape input '%s' must be 1-D, got rank %d", s->name, s->rank);
    int r = ref_const_ints(g, n, 1, sh, IR_MAX_RANK, "shape");
    bool allowzero = ir_attr_int(n, "allowzero", 0) != 0;
    int64_t total = ref_numel_v(x), prod = 1;
    int neg = -1;
    char b1[200], b2[200];
    dims_to_str(sh, r, b2, sizeof b2);
    for (int k = 0; k < r; k++) {
        if (sh[k] == 0 && !allowzero) {
            if (k >= x->rank)
                ir_fatal_node(g, n, "shape %s copies dim %d (0) but '%s' %s has rank %d", b2, k,
                              x->name, dstr(x, b1, sizeof b1), x->rank);
            sh[k] = x->dims[k];
        }
        if (sh[k] == -1) {
            if (neg >= 0) ir_fatal_node(g, n, "shape %s has more than one -1", b2);
            neg = k;
            continue;
        }
        if (sh[k] < 0) ir_fatal_node(g, n, "shape %s has a negative dim %lld", b2, (long long)sh[k]);
        if (__builtin_mul_overflow(prod, sh[k], &prod))
            ir_fatal_node(g, n, "shape %s: element count overflows 64 bits", b2);
    }
    if (neg >= 0) {
        if (prod == 0 || total % prod)
            ir_fatal_node(g, n, "cannot reshape '%s' %s (%lld elements) to %s", x->name,
                          dstr(x, b1, sizeof b1), (long long)total, b2);
        sh[neg] = total / prod;
    } else if (prod != total) {
        ir_fatal_node(g, n, "cannot reshape '%s' %s (%lld elements) to %s (%lld elements)",
                      x->name, dstr(x, b1, sizeof b1), (long long)total, b2, (long long)prod);
    }
    set_out(g, n, 0, x->dtype, r, sh);
}

static void infer_squeeze(struct ir_graph *g, const struct ir_node *n, bool un)
{
    const struct ir_value *x = req(g, n, 0);
    int64_t axes[IR_MAX_RANK];
    int na = 0;
    char b1[200];
    if (ir_input(n, 1) != IR_NONE) {
        na = ref_const_ints(g, n, 1, axes, IR_MAX_RANK, "axes");
    } else {
        size_t c;
        const int64_t *a = ir_attr_ints(n, "axes", &c);
        if (a) {
            if (c > IR_MAX_RANK) ir_fatal_node(g, n, "too many axes (%zu)", c);
            memcpy(axes, a, c * sizeof *a);
            na = (int)c;
        }
    }
    int64_t out[IR_MAX_RANK];
    int r = 0;
    if (!un) {
        bool drop[IR_MAX_RANK] = {false};
        if (na == 0) {
            for (int k = 0; k < x->rank; k++) drop[k] = x->dims[k] == 1;
        } else {
            for (int i = 0; i < na; i++) {
                int a = ref_axis(g, n, axes[i], x->rank, false, "axes entry");
                if (x->dims[a] != 1)
                    ir_fatal_node(g, n, "cannot squeeze axis %d of '%s' %s: dim is %lld, not 1", a,
                                  x->name, dstr(x, b1, sizeof b1), (long long)x->dims[a]);
                drop[a] = true;
            }
        }
        for (int k = 0; k < x->rank; k++)
            if (!drop[k]) out[r++] = x->dims[k];
    } else {
        if (na == 0) ir_fatal_node(g, n, "Unsqueeze needs axes");
        int ro = x->rank + na;
        if (ro > IR_MAX_RANK) ir_fatal_node(g, n, "Unsqueeze result rank %d > %d", ro, IR_MAX_RANK);
        bool ins[IR_MAX_RANK] = {false};
        for (int i = 0; i < na; i++) {
            int a = ref_axis(g, n, axes[i], ro, false, "axes entry");
            if (ins[a]) ir_fatal_node(g, n, "axis %d repeated in Unsqueeze axes", a);
            ins[a] = true;
        }
        int src = 0;
        for (int k = 0; k < ro; k++) out[r++] = ins[k] ? 1 : x->dims[src++];
    }
    set_out(g, n, 0, x->dtype, r, out);
}

static void infer_concat(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x0 = req(g, n, 0);
    if (!ir_attr_find(n, "axis")) ir_fatal_node(g, n, "missing attribute axis");
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), x0->rank, false, "axis");
    int64_t out[IR_MAX_RANK];
    memcpy(out, x0->dims, sizeof out);
    out[axis] = 0;
    char b1[200], b2[200];
    for (uint32_t k = 0; k < n->ninputs; k++) {
        const struct ir_value *v = in_v(g, n, k);
        if (!v) continue;
        if (v->rank != x0->rank || v->dtype != x0->dtype)
            ir_fatal_node(g, n, "input '%s' %s %s does not match '%s' %s %s", v->name,
                          ir_dtype_name(v->dtype), dstr(v, b1, sizeof b1), x0->name,
                          ir_dtype_name(x0->dtype), dstr(x0, b2, sizeof b2));
        for (int d = 0; d < v->rank; d++)
            if (d != axis && v->dims[d] != x0->dims[d])
                ir_fatal_node(g, n, "input '%s' %s differs from '%s' %s off the concat axis %d",
                              v->name, dstr(v, b1, sizeof b1), x0->name, dstr(x0, b2, sizeof b2),
                              axis);
        out[axis] += v->dims[axis];
    }
    set_out(g, n, 0, x0->dtype, x0->rank, out);
}

static void infer_gather(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = req(g, n, 0), *ix = req(g, n, 1);
    if (!ref_is_int(ix->dtype))
        ir_fatal_node(g, n, "indices '%s' must be int32/int64, got %s", ix->name,
                      ir_dtype_name(ix->dtype));
    char b1[200], b2[200];
    int64_t out[IR_MAX_RANK + IR_MAX_RANK];
    int r = 0;
    if (n->op == IR_OP_GATHER) {
        if (x->rank < 1) ir_fatal_node(g, n, "data '%s' must have rank >= 1", x->name);
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis");
        for (int k = 0; k < axis; k++) out[r++] = x->dims[k];
        for (int k = 0; k < ix->rank; k++) out[r++] = ix->dims[k];
        for (int k = axis + 1; k < x->rank; k++) out[r++] = x->dims[k];
    } else if (n->op == IR_OP_GATHER_ELEMENTS) {
        if (ix->rank != x->rank)
            ir_fatal_node(g, n, "indices '%s' %s must have the rank of data '%s' %s", ix->name,
                          dstr(ix, b1, sizeof b1), x->name, dstr(x, b2, sizeof b2));
        ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis");
        for (int k = 0; k < ix->rank; k++) out[r++] = ix->dims[k];
    } else {
        int64_t bd = ir_attr_int(n, "batch_dims", 0);
        if (ix->rank < 1) ir_fatal_node(g, n, "indices '%s' must have rank >= 1", ix->name);
        int64_t last = ix->dims[ix->rank - 1];
        if (bd < 0 || bd >= ix->rank || bd >= x->rank || last < 1 || bd + last > x->rank)
            ir_fatal_node(g, n, "GatherND batch_dims=%lld with indices '%s' %s and data '%s' %s",
                          (long long)bd, ix->name, dstr(ix, b1, sizeof b1), x->name,
                          dstr(x, b2, sizeof b2));
        for (int k = 0; k < bd; k++)
            if (ix->dims[k] != x->dims[k])
                ir_fatal_node(g, n, "GatherND batch dim %d differs: indices %s, data %s", k,
                              dstr(ix, b1, sizeof b1), dstr(x, b2, sizeof b2));
        for (int k = 0; k < ix->rank - 1; k++) out[r++] = ix->dims[k];
        for (int64_t k = bd + last; k < x->rank; k++) out[r++] = x->dims[k];
    }
    set_out(g, n, 0, x->dtype, r, out);
}

static void infer_split(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = req(g, n, 0);
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis");
    int64_t sizes[256];
    if (n->noutputs > 256) ir_fatal_node(g, n, "too many outputs (%u)", n->noutputs);
    ref_split_sizes(g, n, x->dims[axis], sizes);
    for (uint32_t k = 0; k < n->noutputs; k++) {
        int64_t d[IR_MAX_RANK];
        memcpy(d, x->dims, sizeof d);
        d[axis] = sizes[k];
        set_out(g, n, k, x->dtype, x->rank, d);
    }
}

static void infer_resize(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = req(g, n, 0);
    double sc[IR_MAX_RANK];
    int64_t out[IR_MAX_RANK];
    ref_resize_params(g, n, x->dims, x->rank, sc, out);
    set_out(g, n, 0, x->dtype, x->rank, out);
}

static void infer_reduce(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = req(g, n, 0);
    bool mask[IR_MAX_RANK];
    bool keep = ir_attr_int(n, "keepdims", 1) != 0;
    enum ir_dtype t = x->dtype;
    if (n->op == IR_OP_ARG_MAX || n->op == IR_OP_ARG_MIN) {
        for (int k = 0; k < x->rank; k++) mask[k] = false;
        if (x->rank < 1) ir_fatal_node(g, n, "input '%s' must have rank >= 1", x->name);
        mask[ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis")] = true;
        t = IR_I64;
    } else if (!ref_reduce_axes(g, n, x->rank, mask)) {
        set_like(g, n, 0, x, t);
        return;
    }
    int64_t out[IR_MAX_RANK];
    int r = 0;
    for (int k = 0; k < x->rank; k++) {
        if (!mask[k])
            out[r++] = x->dims[k];
        else if (keep)
            out[r++] = 1;
    }
    set_out(g, n, 0, t, r, out);
}

static void infer_constant(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_attr *a = ir_attr_find(n, "value");
    if (a && a->type == IR_ATTR_TENSOR) {
        const struct ir_value *c = &g->values[a->tensor];
        int64_t d[IR_MAX_RANK];
        memcpy(d, c->dims, sizeof d);
        set_out(g, n, 0, c->dtype, c->rank, d);
        return;
    }
    size_t cnt = 0;
    int64_t d[1] = {0};
    if (ir_attr_find(n, "value_float")) { set_out(g, n, 0, IR_F32, 0, d); return; }
    if (ir_attr_find(n, "value_int")) { set_out(g, n, 0, IR_I64, 0, d); return; }
    if (ir_attr_floats(n, "value_floats", &cnt) || ir_attr_find(n, "value_floats")) {
        d[0] = (int64_t)cnt;
        set_out(g, n, 0, IR_F32, 1, d);
        return;
    }
    if (ir_attr_ints(n, "value_ints", &cnt) || ir_attr_find(n, "value_ints")) {
        d[0] = (int64_t)cnt;
        set_out(g, n, 0, IR_I64, 1, d);
        return;
    }
    ir_fatal_node(g, n, "Constant without a supported value attribute (value, value_float, "
                        "value_int, value_floats, value_ints)");
}

/* ---- entry point ------------------------------------------------------------------------------ */

void infer_node(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    for (uint32_t k = 0; k < n->ninputs; k++) {
        uint32_t v = n->inputs[k];
        if (v == IR_NONE) continue;
        const struct ir_value *val = &g->values[v];
        if (!val->dims_known || val->rank < 0)
            ir_fatal_node(g, n, "dims of '%s' unknown: bind them with --shape %s=...", val->name,
                          val->name);
    }
    const struct ir_value *x = n->ninputs ? in_v(g, n, 0) : NULL;
    int64_t out[IR_MAX_RANK + IR_MAX_RANK];
    int r;
    char b1[200], b2[200];
    unsigned flags = ir_op_flags(n->op);

    switch (n->op) {
    case IR_OP_ISNAN:
    case IR_OP_ISINF:
        set_like(g, n, 0, req(g, n, 0), IR_BOOL);
        return;
    case IR_OP_NOT:
        set_like(g, n, 0, req(g, n, 0), IR_BOOL);
        return;
    case IR_OP_EQUAL:
    case IR_OP_GREATER:
    case IR_OP_GREATER_OR_EQUAL:
    case IR_OP_LESS:
    case IR_OP_LESS_OR_EQUAL:
    case IR_OP_AND:
    case IR_OP_OR:
    case IR_OP_XOR:
        bcast_inputs(g, n, 0, n->ninputs, out, &r);
        set_out(g, n, 0, IR_BOOL, r, out);
        return;
    case IR_OP_ADD:
    case IR_OP_SUB:
    case IR_OP_MUL:
    case IR_OP_DIV:
    case IR_OP_POW:
    case IR_OP_MOD:
    case IR_OP_PRELU:
    case IR_OP_MIN:
    case IR_OP_MAX:
    case IR_OP_SUM:
    case IR_OP_MEAN:
    case IR_OP_BITWISE_AND:
    case IR_OP_BITWISE_OR:
    case IR_OP_BITWISE_XOR:
    case IR_OP_BIT_SHIFT:
        bcast_inputs(g, n, 0, n->ninputs, out, &r);
        set_out(g, n, 0, req(g, n, 0)->dtype, r, out);
        return;
    case IR_OP_WHERE:
        if (req(g, n, 1)->dtype != req(g, n, 2)->dtype)
            ir_fatal_node(g, n, "Where branches differ in dtype: %s vs %s",
                          ir_dtype_name(in_v(g, n, 1)->dtype), ir_dtype_name(in_v(g, n, 2)->dtype));
        bcast_inputs(g, n, 0, 3, out, &r);
        set_out(g, n, 0, in_v(g, n, 1)->dtype, r, out);
        return;
    case IR_OP_CLIP:
        set_like(g, n, 0, req(g, n, 0), x->dtype);
        return;
    case IR_OP_CAST: {
        const struct ir_attr *a = ir_attr_find(n, "to");
        if (!a) ir_fatal_node(g, n, "missing attribute 'to'");
        enum ir_dtype t = (enum ir_dtype)a->i;
        if (!ref_is_supported(t))
            ir_fatal_node(g, n, "Cast to=%lld (%s) is not supported", (long long)a->i,
                          ir_dtype_name(t));
        set_like(g, n, 0, req(g, n, 0), t);
        return;
    }
    case IR_OP_CAST_LIKE:
        set_like(g, n, 0, req(g, n, 0), req(g, n, 1)->dtype);
        return;
    case IR_OP_BIT_CAST:
        set_like(g, n, 0, req(g, n, 0), ref_bitcast_dtype(g, n));
        return;
    case IR_OP_FUSED_CHECK: { /* y = x; the run stops when cond == fail_if (ops.def) */
        const struct ir_value *c = req(g, n, 1);
        if (c->dtype != IR_BOOL || ref_numel_v(c) != 1)
            ir_fatal_node(g, n, "the condition must be one bool");
        set_like(g, n, 0, req(g, n, 0), req(g, n, 0)->dtype);
        return;
    }
    case IR_OP_QUANTIZE_LINEAR:
    case IR_OP_DEQUANTIZE_LINEAR: {
        struct ref_quant_geom qg;
        ref_quant_geom(g, n, &qg); /* checks scale / zero-point shapes against x */
        set_like(g, n, 0, req(g, n, 0), ref_quant_out_dtype(g, n));
        return;
    }
    case IR_OP_DYNAMIC_QUANTIZE_LINEAR:
        if (req(g, n, 0)->dtype != IR_F32)
            ir_fatal_node(g, n, "DynamicQuantizeLinear: input '%s' is %s (float32 only)", x->name,
                          ir_dtype_name(x->dtype));
        set_like(g, n, 0, x, IR_U8);
        set_out(g, n, 1, IR_F32, 0, out);
        set_out(g, n, 2, IR_U8, 0, out);
        return;
    case IR_OP_IDENTITY:
        set_like(g, n, 0, req(g, n, 0), x->dtype);
        return;
    case IR_OP_DROPOUT:
        set_like(g, n, 0, req(g, n, 0), x->dtype);
        set_like(g, n, 1, x, IR_BOOL);
        return;
    case IR_OP_RESHAPE:
        infer_reshape(g, n);
        return;
    case IR_OP_SQUEEZE:
        infer_squeeze(g, n, false);
        return;
    case IR_OP_UNSQUEEZE:
        infer_squeeze(g, n, true);
        return;
    case IR_OP_FLATTEN: {
        req(g, n, 0);
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", 1), x->rank, true, "axis");
        out[0] = out[1] = 1;
        for (int k = 0; k < x->rank; k++) out[k < axis ? 0 : 1] *= x->dims[k];
        set_out(g, n, 0, x->dtype, 2, out);
        return;
    }
    case IR_OP_TRANSPOSE: {
        req(g, n, 0);
        size_t np;
        const int64_t *perm = ir_attr_ints(n, "perm", &np);
        bool seen[IR_MAX_RANK] = {false};
        if (perm && (int)np != x->rank)
            ir_fatal_node(g, n, "perm has %zu entries but '%s' has rank %d", np, x->name, x->rank);
        for (int k = 0; k < x->rank; k++) {
            int64_t p = perm ? perm[k] : x->rank - 1 - k;
            if (p < 0 || p >= x->rank || seen[p])
                ir_fatal_node(g, n, "perm is not a permutation of 0..%d (entry %d = %lld)",
                              x->rank - 1, k, (long long)p);
            seen[p] = true;
            out[k] = x->dims[p];
        }
        set_out(g, n, 0, x->dtype, x->rank, out);
        return;
    }
    case IR_OP_CONCAT:
        infer_concat(g, n);
        return;
    case IR_OP_SPLIT:
        infer_split(g, n);
        return;
    case IR_OP_SLICE: {
        req(g, n, 0);
        int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK];
        ref_slice_params(g, n, x->dims, x->rank, st, sp, out);
        set_out(g, n, 0, x->dtype, x->rank, out);
        return;
    }
    case IR_OP_GATHER:
    case IR_OP_GATHER_ELEMENTS:
    case IR_OP_GATHER_ND:
        infer_gather(g, n);
        return;
    case IR_OP_SCATTER_ELEMENTS:
    case IR_OP_SCATTER:
    case IR_OP_SCATTER_ND:
    case IR_OP_TENSOR_SCATTER:
    case IR_OP_REVERSE_SEQUENCE:
    case IR_OP_MAX_UNPOOL: {
        /* scatter family: checks and dims in ref/ref_scatter.c (shared with the reference) */
        for (uint32_t k = 0; k < (uint32_t)ir_op_min_inputs(n->op); k++) req(g, n, k);
        enum ir_dtype t;
        r = ref_scatter_infer(g, n, out, &t);
        set_out(g, n, 0, t, r, out);
        return;
    }
    case IR_OP_EXPAND: {
        req(g, n, 0);
        const struct ir_value *s = req(g, n, 1);
        if (s->rank != 1)
            ir_fatal_node(g, n, "shape input '%s' must be 1-D, got rank %d", s->name, s->rank);
        int64_t sh[IR_MAX_RANK];
        int rs = ref_const_ints(g, n, 1, sh, IR_MAX_RANK, "shape");
        if (!ref_bcast_dims(x->dims, x->rank, sh, rs, out, &r)) {
            dims_to_str(sh, rs, b2, sizeof b2);
            ir_fatal_node(g, n, "cannot expand '%s' %s to shape %s", x->name,
                          dstr(x, b1, sizeof b1), b2);
        }
        set_out(g, n, 0, x->dtype, r, out);
        return;
    }
    case IR_OP_TILE: {
        req(g, n, 0);
        int64_t rep[IR_MAX_RANK];
        int nr = ref_const_ints(g, n, 1, rep, IR_MAX_RANK, "repeats");
        if (nr != x->rank)
            ir_fatal_node(g, n, "repeats has %d entries but '%s' has rank %d", nr, x->name,
                          x->rank);
        for (int k = 0; k < x->rank; k++) {
            if (rep[k] < 0) ir_fatal_node(g, n, "repeats[%d]=%lld < 0", k, (long long)rep[k]);
            out[k] = x->dims[k] * rep[k];
        }
        set_out(g, n, 0, x->dtype, x->rank, out);
        return;
    }
    case IR_OP_PAD: {
        req(g, n, 0);
        int64_t pb[IR_MAX_RANK], pe[IR_MAX_RANK];
        ref_pad_amounts(g, n, x->rank, pb, pe);
        for (int k = 0; k < x->rank; k++)
            if (__builtin_add_overflow(x->dims[k], pb[k], &out[k]) ||
                __builtin_add_overflow(out[k], pe[k], &out[k]))
                ir_fatal_node(g, n, "pads %lld, %lld on axis %d overflow the dim %lld",
                              (long long)pb[k], (long long)pe[k], k, (long long)x->dims[k]);
        set_out(g, n, 0, x->dtype, x->rank, out);
        return;
    }
    case IR_OP_RESIZE:
    case IR_OP_UPSAMPLE:
        infer_resize(g, n);
        return;
    case IR_OP_TRILU:
        need_rank(g, n, req(g, n, 0), 2, IR_MAX_RANK);
        set_like(g, n, 0, x, x->dtype);
        return;
    case IR_OP_DEPTH_TO_SPACE:
    case IR_OP_SPACE_TO_DEPTH: {
        need_rank(g, n, req(g, n, 0), 4, 4);
        int64_t b = ir_attr_int(n, "blocksize", 0);
        if (b <= 0) ir_fatal_node(g, n, "blocksize=%lld must be > 0", (long long)b);
        const char *mode = ir_attr_string(n, "mode", "DCR");
        if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
            ir_fatal_node(g, n, "%s: mode='%s' is not supported (DCR, CRD)", ir_op_name(n->op),
                          mode);
        memcpy(out, x->dims, sizeof(int64_t) * 4);
        if (n->op == IR_OP_DEPTH_TO_SPACE) {
            if (x->dims[1] % (b * b))
                ir_fatal_node(g, n, "C=%lld of '%s' is not a multiple of blocksize^2=%lld",
                              (long long)x->dims[1], x->name, (long long)(b * b));
            out[1] /= b * b;
            out[2] *= b;
            out[3] *= b;
        } else {
            if (x->dims[2] % b || x->dims[3] % b)
                ir_fatal_node(g, n, "H, W of '%s' %s are not multiples of blocksize=%lld",
                              x->name, dstr(x, b1, sizeof b1), (long long)b);
            out[1] *= b * b;
            out[2] /= b;
            out[3] /= b;
        }
        set_out(g, n, 0, x->dtype, 4, out);
        return;
    }
    case IR_OP_SHAPE: {
        req(g, n, 0);
        int64_t s = ir_attr_int(n, "start", 0), e = ir_attr_int(n, "end", x->rank);
        if (s < 0) s += x->rank;
        if (e < 0) e += x->rank;
        s = s < 0 ? 0 : s > x->rank ? x->rank : s;
        e = e < 0 ? 0 : e > x->rank ? x->rank : e;
        out[0] = e > s ? e - s : 0;
        set_out(g, n, 0, IR_I64, 1, out);
        return;
    }
    case IR_OP_SIZE:
        req(g, n, 0);
        set_out(g, n, 0, IR_I64, 0, out);
        return;
    case IR_OP_CONSTANT:
        infer_constant(g, n);
        return;
    case IR_OP_CONSTANT_OF_SHAPE: {
        const struct ir_value *s = req(g, n, 0);
        if (s->rank != 1)
            ir_fatal_node(g, n, "shape input '%s' must be 1-D, got rank %d", s->name, s->rank);
        r = ref_const_ints(g, n, 0, out, IR_MAX_RANK, "shape");
        enum ir_dtype t = IR_F32;
        const struct ir_attr *a = ir_attr_find(n, "value");
        if (a && a->type == IR_ATTR_TENSOR) t = g->values[a->tensor].dtype;
        set_out(g, n, 0, t, r, out);
        return;
    }
    case IR_OP_RANGE: {
        const struct ir_value *s = req(g, n, 0);
        for (uint32_t k = 0; k < 3; k++) {
            const struct ir_value *v = req(g, n, k);
            if (!v->data)
                ir_fatal_node(g, n,
                              "Range input '%s' must be constant once shapes are bound (its "
                              "length depends on run-time values)",
                              v->name);
            if (ref_numel_v(v) != 1)
                ir_fatal_node(g, n, "Range input '%s' %s must be a scalar", v->name,
                              dstr(v, b1, sizeof b1));
        }
        int64_t cnt;
        if (ref_is_float(s->dtype)) {
            double st = ir_const_f64(g, n->inputs[0], 0), li = ir_const_f64(g, n->inputs[1], 0),
                   de = ir_const_f64(g, n->inputs[2], 0);
            if (de == 0) ir_fatal_node(g, n, "Range delta is 0");
            double c = ceil((li - st) / de);
            if (!(c < 9.2e18)) /* also NaN and inf */
                ir_fatal_node(g, n, "Range(%g, %g, %g) has no finite element count", st, li, de);
            cnt = c > 0 ? (int64_t)c : 0;
        } else {
            int64_t st = ir_const_i64(g, n->inputs[0], 0), li = ir_const_i64(g, n->inputs[1], 0),
                    de = ir_const_i64(g, n->inputs[2], 0);
            if (de == 0) ir_fatal_node(g, n, "Range delta is 0");
            __int128 diff = (__int128)li - st, d = de; /* no int64 overflow */
            __int128 c = d > 0 ? (diff > 0 ? (diff + d - 1) / d : 0)
                               : (diff < 0 ? (-diff + (-d) - 1) / (-d) : 0);
            if (c > INT64_MAX)
                ir_fatal_node(g, n, "Range(%lld, %lld, %lld): element count overflows int64",
                              (long long)st, (long long)li, (long long)de);
            cnt = (int64_t)c;
        }
        out[0] = cnt;
        set_out(g, n, 0, s->dtype, 1, out);
        return;
    }
    case IR_OP_EYE_LIKE: {
        need_rank(g, n, req(g, n, 0), 2, 2);
        enum ir_dtype t = (enum ir_dtype)ir_attr_int(n, "dtype", x->dtype);
        set_like(g, n, 0, x, t);
        return;
    }
    case IR_OP_MATMUL:
        infer_matmul(g, n);
        return;
    case IR_OP_GEMM:
        infer_gemm(g, n);
        return;
    case IR_OP_CONV:
        infer_conv(g, n, false);
        return;
    case IR_OP_CONV_TRANSPOSE:
        infer_conv(g, n, true);
        return;
    case IR_OP_MAX_POOL:
    case IR_OP_AVERAGE_POOL:
    case IR_OP_LP_POOL:
        infer_pool(g, n);
        return;
    case IR_OP_GRID_SAMPLE: {
        /* GridSample-16/20/22: X [N, C, D1..Dr], grid [N, O1..Or, r] -> Y [N, C, O1..Or] */
        need_rank(g, n, req(g, n, 0), 3, IR_MAX_RANK);
        const struct ir_value *gr = req(g, n, 1);
        int rsp = x->rank - 2;
        if (gr->rank != x->rank || gr->dims[gr->rank - 1] != rsp || gr->dims[0] != x->dims[0])
            ir_fatal_node(g, n, "grid '%s' %s must be [N, O1..O%d, %d] for X '%s' %s", gr->name,
                          dstr(gr, b1, sizeof b1), rsp, rsp, x->name, dstr(x, b2, sizeof b2));
        out[0] = x->dims[0];
        out[1] = x->dims[1];
        for (int k = 0; k < rsp; k++) out[2 + k] = gr->dims[1 + k];
        set_out(g, n, 0, x->dtype, x->rank, out);
        return;
    }
    case IR_OP_ROI_ALIGN: {
        /* RoiAlign-10/16: X [N, C, H, W], rois [R, 4], batch_indices [R] -> Y [R, C, oh, ow] */
        need_rank(g, n, req(g, n, 0), 4, 4);
        const struct ir_value *ro = req(g, n, 1), *bi = req(g, n, 2);
        if (ro->rank != 2 || ro->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != ro->dims[0])
            ir_fatal_node(g, n, "rois '%s' %s must be [R, 4] and batch_indices '%s' %s [R]",
                          ro->name, dstr(ro, b1, sizeof b1), bi->name, dstr(bi, b2, sizeof b2));
        int64_t oh = ir_attr_int(n, "output_height", 1), ow = ir_attr_int(n, "output_width", 1);
        if (oh <= 0 || ow <= 0)
            ir_fatal_node(g, n, "RoiAlign output_height=%lld, output_width=%lld must be > 0",
                          (long long)oh, (long long)ow);
        out[0] = ro->dims[0];
        out[1] = x->dims[1];
        out[2] = oh;
        out[3] = ow;
        set_out(g, n, 0, x->dtype, 4, out);
        return;
    }
    case IR_OP_DET:
        /* Det-11/22: X [..., M, M] -> Y [...] */
        need_rank(g, n, req(g, n, 0), 2, IR_MAX_RANK);
        if (x->dims[x->rank - 1] != x->dims[x->rank - 2])
            ir_fatal_node(g, n, "Det input '%s' %s: the last two dims must be equal (square "
                          "matrices)", x->name, dstr(x, b1, sizeof b1));
        set_out(g, n, 0, x->dtype, x->rank - 2, x->dims);
        return;
    case IR_OP_GLOBAL_AVERAGE_POOL:
    case IR_OP_GLOBAL_MAX_POOL:
        need_rank(g, n, req(g, n, 0), 3, IR_MAX_RANK);
        memcpy(out, x->dims, sizeof(int64_t) * (size_t)x->rank);
        for (int k = 2; k < x->rank; k++) out[k] = 1;
        set_out(g, n, 0, x->dtype, x->rank, out);
        return;
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX:
    case IR_OP_HARDMAX: {
        req(g, n, 0);
        int64_t dflt = ir_attr_int(n, "_flatten", 0) ? 1 : -1;
        if (x->rank > 0)
            ref_axis(g, n, ir_attr_int(n, "axis", dflt), x->rank, false, "axis");
        set_like(g, n, 0, x, x->dtype);
        return;
    }
    case IR_OP_INSTANCE_NORMALIZATION:
    case IR_OP_GROUP_NORMALIZATION: {
        need_rank(g, n, req(g, n, 0), 3, IR_MAX_RANK);
        const struct ir_value *sc = req(g, n, 1), *bi = req(g, n, 2);
        int64_t c = x->dims[1];
        int64_t want = c;
        if (n->op == IR_OP_GROUP_NORMALIZATION) {
            const struct ir_attr *ng = ir_attr_find(n, "num_groups");
            if (!ng) ir_fatal_node(g, n, "missing attribute num_groups");
            if (ng->i <= 0 || c % ng->i)
                ir_fatal_node(g, n, "num_groups=%lld does not divide C=%lld of '%s'",
                              (long long)ng->i, (long long)c, x->name);
            if (ir_attr_int(n, "_per_group", 0)) want = ng->i;
        }
        if (ref_numel_v(sc) != want || ref_numel_v(bi) != want)
            ir_fatal_node(g, n, "scale '%s' %s and bias '%s' %s must have %lld elements",
                          sc->name, dstr(sc, b1, sizeof b1), bi->name, dstr(bi, b2, sizeof b2),
                          (long long)want);
        set_like(g, n, 0, x, x->dtype);
        return;
    }
    case IR_OP_LAYER_NORMALIZATION: {
        req(g, n, 0);
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", -1), x->rank, false, "axis");
        const struct ir_value *sc = req(g, n, 1);
        int64_t inner = 1;
        for (int k = axis; k < x->rank; k++) inner *= x->dims[k];
        if (ref_numel_v(sc) != inner && sc->rank > x->rank - axis)
            ir_fatal_node(g, n, "scale '%s' %s does not broadcast to the normalized dims of '%s' %s",
                          sc->name, dstr(sc, b1, sizeof b1), x->name, dstr(x, b2, sizeof b2));
        set_like(g, n, 0, x, x->dtype);
        memcpy(out, x->dims, sizeof(int64_t) * (size_t)x->rank);
        for (int k = axis; k < x->rank; k++) out[k] = 1;
        enum ir_dtype st = (enum ir_dtype)ir_attr_int(n, "stash_type", 1);
        set_out(g, n, 1, st, x->rank, out);
        set_out(g, n, 2, st, x->rank, out);
        return;
    }
    case IR_OP_BATCH_NORMALIZATION: {
        need_rank(g, n, req(g, n, 0), 2, IR_MAX_RANK);
        for (uint32_t k = 1; k < 5; k++) {
            const struct ir_value *p = req(g, n, k);
            if (ref_numel_v(p) != x->dims[1])
                ir_fatal_node(g, n, "input %u '%s' %s must have C=%lld elements", k, p->name,
                              dstr(p, b1, sizeof b1), (long long)x->dims[1]);
        }
        set_like(g, n, 0, x, x->dtype);
        for (uint32_t k = 1; k < n->noutputs; k++) set_like(g, n, k, in_v(g, n, k + 2), x->dtype);
        return;
    }
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MAX:
    case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD:
    case IR_OP_REDUCE_L1:
    case IR_OP_REDUCE_L2:
    case IR_OP_REDUCE_SUM_SQUARE:
    case IR_OP_REDUCE_LOG_SUM:
    case IR_OP_REDUCE_LOG_SUM_EXP:
    case IR_OP_ARG_MAX:
    case IR_OP_ARG_MIN:
        req(g, n, 0);
        infer_reduce(g, n);
        return;
    case IR_OP_TOP_K: { /* TopK-11: Values (X's dtype) and Indices (int64), axis dim -> k */
        req(g, n, 0);
        if (x->rank < 1) ir_fatal_node(g, n, "input '%s' must have rank >= 1", x->name);
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", -1), x->rank, false, "axis");
        const struct ir_value *kv = req(g, n, 1);
        if (!kv->data)
            ir_fatal_node(g, n, "k ('%s') is computed at run time; it decides the output shape, so "
                                "onnx2cl needs it constant%s%s%s",
                          kv->name, kv->is_input ? " (fix it with --bind " : "", kv->is_input ? kv->name : "",
                          kv->is_input ? "=VALUE.npy)" : "");
        int64_t k = scalar_i(g, n, 1, "k");
        if (k < 0 || k > x->dims[axis])
            ir_fatal_node(g, n, "k=%lld is outside [0, %lld] (the size of axis %d of '%s')", (long long)k,
                          (long long)x->dims[axis], axis, x->name);
        memcpy(out, x->dims, sizeof(int64_t) * (size_t)x->rank);
        out[axis] = k;
        set_out(g, n, 0, x->dtype, x->rank, out);
        set_out(g, n, 1, IR_I64, x->rank, out);
        return;
    }
    case IR_OP_CUM_SUM:
        req(g, n, 0);
        ref_axis(g, n, scalar_i(g, n, 1, "axis"), x->rank, false, "axis");
        set_like(g, n, 0, x, x->dtype);
        return;
    default:
        break;
    }
    if ((flags & IR_F_ELEMWISE) && n->ninputs == 1 && x) {
        set_like(g, n, 0, x, x->dtype); /* unary math: same dtype and dims */
        return;
    }
    ir_fatal_node(g, n, "no shape inference for op %s", ir_op_name(n->op));
}
