/* ref_movement.c — reference data-movement and shape ops: views (Identity, Dropout, Reshape,
 * Squeeze, Unsqueeze, Flatten), Transpose, Concat, Split, Slice, Gather, GatherElements,
 * GatherND, Expand, Tile, Pad (constant/reflect/edge/wrap), Trilu, DepthToSpace (DCR/CRD),
 * SpaceToDepth (DCR/CRD), Shape, Size, Constant.
 *
 * Assumes: outputs shaped by infer_node (the geometry helpers of ref_util.c are reused here);
 * inputs constant (Shape/Size read dims only).
 * Guarantees: byte-exact copies for every dtype; out-of-range gather indices are fatal user
 * errors naming the index and the axis size.
 */
#include <string.h>

#include "ref/ref_util.h"

static const struct ir_value *inp(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    uint32_t v = ir_input(n, k);
    return v == IR_NONE ? NULL : &g->values[v];
}

static const struct ir_value *outv(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    uint32_t v = k < n->noutputs ? n->outputs[k] : IR_NONE;
    return v == IR_NONE ? NULL : &g->values[v];
}

/* Copies the whole input 0 into output k (views). */
static void copy_view(struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    uint32_t ov = n->outputs[k];
    void *o = ref_alloc_out(g, ov);
    const struct ir_value *x = inp(g, n, 0);
    IR_ASSERT(g->values[ov].nbytes == x->nbytes);
    memcpy(o, x->data, x->nbytes);
}

static int64_t fix_index(const struct ir_graph *g, const struct ir_node *n, int64_t idx,
                         int64_t size, int axis)
{
    if (idx < -size || idx >= size)
        ir_fatal_node(g, n, "index %lld out of range [%lld, %lld) on axis %d", (long long)idx,
                      (long long)-size, (long long)size, axis);
    return idx < 0 ? idx + size : idx;
}

static bool eval_transpose(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    size_t np;
    const int64_t *perm = ir_attr_ints(n, "perm", &np);
    int64_t st[IR_MAX_RANK];
    ref_strides(x->dims, x->rank, st);
    struct ref_iter it;
    const struct ir_value *none[1] = {NULL};
    ref_iter_init(&it, &g->values[ov], none, 1);
    for (int k = 0; k < x->rank; k++) it.st[0][k] = st[perm ? perm[k] : x->rank - 1 - k];
    size_t es = ir_dtype_size(x->dtype);
    int64_t cnt = ref_numel_v(x);
    void *o = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) ref_copy_elem(o, i, x->data, it.off[0], es);
    return true;
}

static bool eval_concat(struct ir_graph *g, const struct ir_node *n)
{
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), o->rank, false, "axis");
    size_t es = ir_dtype_size(o->dtype);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= o->dims[k];
    for (int k = axis + 1; k < o->rank; k++) inner *= o->dims[k];
    char *out = ref_alloc_out(g, ov);
    int64_t orow = o->dims[axis] * inner, pos = 0;
    for (uint32_t j = 0; j < n->ninputs; j++) {
        const struct ir_value *x = inp(g, n, j);
        if (!x) continue;
        int64_t row = x->dims[axis] * inner;
        for (int64_t b = 0; b < outer; b++)
            memcpy(out + (size_t)(b * orow + pos) * es, (const char *)x->data + (size_t)(b * row) * es,
                   (size_t)row * es);
        pos += row;
    }
    return true;
}

static bool eval_split(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis");
    size_t es = ir_dtype_size(x->dtype);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    for (int k = axis + 1; k < x->rank; k++) inner *= x->dims[k];
    int64_t xrow = x->dims[axis] * inner, pos = 0;
    const char *src = x->data;
    for (uint32_t j = 0; j < n->noutputs; j++) {
        const struct ir_value *o = outv(g, n, j);
        if (!o) {
            /* absent output: skip its chunk (sizes from the shared helper) */
            int64_t sizes[256];
            ref_split_sizes(g, n, x->dims[axis], sizes);
            pos += sizes[j] * inner;
            continue;
        }
        int64_t row = o->dims[axis] * inner;
        char *out = ref_alloc_out(g, n->outputs[j]);
        for (int64_t b = 0; b < outer; b++)
            memcpy(out + (size_t)(b * row) * es, src + (size_t)(b * xrow + pos) * es, (size_t)row * es);
        pos += row;
    }
    return true;
}

static bool eval_slice(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK], od[IR_MAX_RANK], st[IR_MAX_RANK];
    ref_slice_params(g, n, x->dims, x->rank, start, step, od);
    ref_strides(x->dims, x->rank, st);
    struct ref_iter it;
    const struct ir_value *none[1] = {NULL};
    ref_iter_init(&it, &g->values[ov], none, 1);
    for (int k = 0; k < x->rank; k++) {
        it.st[0][k] = step[k] * st[k];
        it.off[0] += start[k] * st[k];
    }
    size_t es = ir_dtype_size(x->dtype);
    int64_t cnt = ref_numel_v(&g->values[ov]);
    void *o = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) ref_copy_elem(o, i, x->data, it.off[0], es);
    return true;
}

static bool eval_gather(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *ix = inp(g, n, 1);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    size_t es = ir_dtype_size(x->dtype);
    char *out = ref_alloc_out(g, ov);
    const char *src = x->data;
    if (n->op == IR_OP_GATHER) {
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis");
        int64_t outer = 1, inner = 1, ax = x->dims[axis], ni = ref_numel_v(ix);
        for (int k = 0; k < axis; k++) outer *= x->dims[k];
        for (int k = axis + 1; k < x->rank; k++) inner *= x->dims[k];
        for (int64_t b = 0; b < outer; b++)
            for (int64_t j = 0; j < ni; j++) {
                int64_t id = fix_index(g, n, ref_get_i(ix->data, ix->dtype, j), ax, axis);
                memcpy(out + (size_t)((b * ni + j) * inner) * es,
                       src + (size_t)((b * ax + id) * inner) * es, (size_t)inner * es);
            }
        return true;
    }
    if (n->op == IR_OP_GATHER_ELEMENTS) {
        int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), x->rank, false, "axis");
        int64_t st[IR_MAX_RANK];
        ref_strides(x->dims, x->rank, st);
        struct ref_iter it;
        const struct ir_value *none[1] = {NULL};
        ref_iter_init(&it, o, none, 1);
        int64_t cnt = ref_numel_v(o);
        for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
            int64_t off = 0;
            for (int k = 0; k < x->rank; k++) {
                int64_t c = it.idx[k];
                if (k == axis) c = fix_index(g, n, ref_get_i(ix->data, ix->dtype, i), x->dims[k], k);
                else if (c >= x->dims[k])
                    ir_fatal_node(g, n, "indices dim %d (%lld) exceeds data dim %lld", k,
                                  (long long)ix->dims[k], (long long)x->dims[k]);
                off += c * st[k];
            }
            ref_copy_elem(out, i, src, off, es);
        }
        return true;
    }
    /* GatherND */
    int bd = (int)ir_attr_int(n, "batch_dims", 0);
    int64_t last = ix->dims[ix->rank - 1], nb = 1, per = 1, slice = 1, xb = 1;
    for (int k = 0; k < bd; k++) nb *= ix->dims[k];
    for (int k = bd; k < ix->rank - 1; k++) per *= ix->dims[k];
    for (int64_t k = bd + last; k < x->rank; k++) slice *= x->dims[k];
    for (int k = bd; k < x->rank; k++) xb *= x->dims[k];
    int64_t st[IR_MAX_RANK];
    ref_strides(x->dims + bd, x->rank - bd, st);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t j = 0; j < per; j++) {
            int64_t off = 0;
            for (int64_t q = 0; q < last; q++) {
                int64_t id = ref_get_i(ix->data, ix->dtype, (b * per + j) * last + q);
                off += fix_index(g, n, id, x->dims[bd + q], (int)(bd + q)) * st[q];
            }
            memcpy(out + (size_t)((b * per + j) * slice) * es, src + (size_t)(b * xb + off) * es,
                   (size_t)slice * es);
        }
    return true;
}

static bool eval_expand(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    const struct ir_value *ins[1] = {x};
    struct ref_iter it;
    ref_iter_init(&it, &g->values[ov], ins, 1);
    size_t es = ir_dtype_size(x->dtype);
    int64_t cnt = ref_numel_v(&g->values[ov]);
    void *o = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) ref_copy_elem(o, i, x->data, it.off[0], es);
    return true;
}

/* Tile and Pad: each output coordinate maps to an input coordinate (or to the pad value). */
static int64_t reflect(int64_t i, int64_t d)
{
    if (d == 1) return 0;
    int64_t p = 2 * (d - 1);
    i %= p;
    if (i < 0) i += p;
    return i >= d ? p - i : i;
}

static bool eval_tile_pad(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    int rank = x->rank;
    int64_t pb[IR_MAX_RANK] = {0}, pe[IR_MAX_RANK] = {0}, st[IR_MAX_RANK];
    int mode = 0; /* 0 tile, 1 constant, 2 reflect, 3 edge, 4 wrap */
    if (n->op == IR_OP_PAD) {
        ref_pad_amounts(g, n, rank, pb, pe);
        const char *m = ir_attr_string(n, "mode", "constant");
        if (!strcmp(m, "constant")) mode = 1;
        else if (!strcmp(m, "reflect")) mode = 2;
        else if (!strcmp(m, "edge")) mode = 3;
        else if (!strcmp(m, "wrap")) mode = 4;
        else ir_fatal_node(g, n, "unsupported Pad mode '%s' (constant, reflect, edge, wrap)", m);
        for (int k = 0; k < rank; k++)
            if (mode > 1 && x->dims[k] == 0 && o->dims[k] > 0)
                ir_fatal_node(g, n, "Pad mode '%s' cannot pad an empty axis %d", m, k);
    }
    ref_strides(x->dims, rank, st);
    size_t es = ir_dtype_size(x->dtype);
    char *out = ref_alloc_out(g, ov);
    /* constant pad value, converted to the data dtype */
    char padval[16] = {0};
    const struct ir_value *cv = n->op == IR_OP_PAD ? inp(g, n, 2) : NULL;
    if (cv && cv->nbytes) {
        if (cv->dtype == x->dtype) memcpy(padval, cv->data, es);
        else ref_set_f(padval, x->dtype, 0, ref_get_f(cv->data, cv->dtype, 0));
    }
    struct ref_iter it;
    const struct ir_value *none[1] = {NULL};
    ref_iter_init(&it, o, none, 1);
    int64_t cnt = ref_numel_v(o);
    for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
        int64_t off = 0;
        bool pad = false;
        for (int k = 0; k < rank; k++) {
            int64_t c = it.idx[k] - pb[k], d = x->dims[k];
            if (mode == 0) c = it.idx[k] % d;
            else if (c < 0 || c >= d) {
                if (mode == 1) pad = true;
                else if (mode == 2) c = reflect(c, d);
                else if (mode == 3) c = c < 0 ? 0 : d - 1;
                else c = ((c % d) + d) % d;
            }
            off += c * st[k];
        }
        if (pad) memcpy(out + (size_t)i * es, padval, es);
        else ref_copy_elem(out, i, x->data, off, es);
    }
    return true;
}

static bool eval_trilu(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *kv = inp(g, n, 1);
    uint32_t ov = n->outputs[0];
    int64_t k = 0;
    if (kv) {
        if (ref_numel_v(kv) != 1) ir_fatal_node(g, n, "Trilu k must be a scalar");
        k = ref_get_i(kv->data, kv->dtype, 0);
    }
    bool upper = ir_attr_int(n, "upper", 1) != 0;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t cnt = ref_numel_v(x);
    size_t es = ir_dtype_size(x->dtype);
    char *out = ref_alloc_out(g, ov);
    memcpy(out, x->data, x->nbytes);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t c = i % cols, r = (i / cols) % rows;
        bool keep = upper ? (c - r >= k) : (c - r <= k);
        if (!keep) memset(out + (size_t)i * es, 0, es);
    }
    return true;
}

static bool eval_d2s(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    int64_t b = ir_attr_int(n, "blocksize", 1);
    size_t es = ir_dtype_size(x->dtype);
    bool crd = !strcmp(ir_attr_string(n, "mode", "DCR"), "CRD");
    int64_t N = o->dims[0], C = o->dims[1], H = o->dims[2], W = o->dims[3];
    int64_t xC = x->dims[1], xH = x->dims[2], xW = x->dims[3];
    char *out = ref_alloc_out(g, ov);
    int64_t i = 0;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++, i++) {
                    int64_t src;
                    if (n->op == IR_OP_DEPTH_TO_SPACE) {
                        int64_t bh = h % b, bw = w % b;
                        int64_t ic = crd ? c * b * b + bh * b + bw : (bh * b + bw) * C + c;
                        src = ((nn * xC + ic) * xH + h / b) * xW + w / b;
                    } else {
                        /* DCR: c = (bh*b + bw)*xC + ic; CRD: c = ic*b*b + bh*b + bw */
                        int64_t blk = crd ? c % (b * b) : c / xC, ic = crd ? c / (b * b) : c % xC;
                        int64_t bh = blk / b, bw = blk % b;
                        src = ((nn * xC + ic) * xH + h * b + bh) * xW + w * b + bw;
                    }
                    ref_copy_elem(out, i, x->data, src, es);
                }
    return true;
}

static bool eval_constant(struct ir_graph *g, const struct ir_node *n)
{
    uint32_t ov = n->outputs[0];
    const struct ir_attr *a = ir_attr_find(n, "value");
    if (a && a->type == IR_ATTR_TENSOR) {
        const struct ir_value *c = &g->values[a->tensor];
        void *o = ref_alloc_out(g, ov);
        memcpy(o, c->data, g->values[ov].nbytes);
        return true;
    }
    void *o = ref_alloc_out(g, ov);
    size_t cnt;
    if ((a = ir_attr_find(n, "value_float"))) {
        ((float *)o)[0] = a->f;
    } else if ((a = ir_attr_find(n, "value_int"))) {
        ((int64_t *)o)[0] = a->i;
    } else if ((a = ir_attr_find(n, "value_floats"))) {
        const float *f = ir_attr_floats(n, "value_floats", &cnt);
        if (cnt) memcpy(o, f, cnt * sizeof *f);
    } else if ((a = ir_attr_find(n, "value_ints"))) {
        const int64_t *v = ir_attr_ints(n, "value_ints", &cnt);
        if (cnt) memcpy(o, v, cnt * sizeof *v);
    } else {
        return false;
    }
    return true;
}

bool ref_eval_movement(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    switch (n->op) {
    case IR_OP_IDENTITY:
    case IR_OP_RESHAPE:
    case IR_OP_SQUEEZE:
    case IR_OP_UNSQUEEZE:
    case IR_OP_FLATTEN:
        copy_view(g, n, 0);
        return true;
    case IR_OP_DROPOUT: {
        const struct ir_value *tm = inp(g, n, 2);
        if (tm && ref_get_i(tm->data, tm->dtype, 0))
            ir_fatal_node(g, n, "Dropout with training_mode=true is not supported (inference only)");
        copy_view(g, n, 0);
        if (outv(g, n, 1)) {
            uint8_t *m = ref_alloc_out(g, n->outputs[1]);
            memset(m, 1, g->values[n->outputs[1]].nbytes);
        }
        return true;
    }
    case IR_OP_TRANSPOSE: return eval_transpose(g, n);
    case IR_OP_CONCAT: return eval_concat(g, n);
    case IR_OP_SPLIT: return eval_split(g, n);
    case IR_OP_SLICE: return eval_slice(g, n);
    case IR_OP_GATHER:
    case IR_OP_GATHER_ELEMENTS:
    case IR_OP_GATHER_ND: return eval_gather(g, n);
    case IR_OP_EXPAND: return eval_expand(g, n);
    case IR_OP_TILE:
    case IR_OP_PAD: return eval_tile_pad(g, n);
    case IR_OP_TRILU: return eval_trilu(g, n);
    case IR_OP_DEPTH_TO_SPACE:
    case IR_OP_SPACE_TO_DEPTH: return eval_d2s(g, n);
    case IR_OP_SHAPE: {
        const struct ir_value *x = inp(g, n, 0);
        int64_t s = ir_attr_int(n, "start", 0);
        if (s < 0) s += x->rank;
        if (s < 0) s = 0;
        int64_t *o = ref_alloc_out(g, n->outputs[0]);
        int64_t cnt = g->values[n->outputs[0]].dims[0];
        for (int64_t i = 0; i < cnt; i++) o[i] = x->dims[s + i];
        return true;
    }
    case IR_OP_SIZE: {
        int64_t *o = ref_alloc_out(g, n->outputs[0]);
        o[0] = ref_numel_v(inp(g, n, 0));
        return true;
    }
    case IR_OP_CONSTANT: return eval_constant(g, n);
    default: return false;
    }
}
