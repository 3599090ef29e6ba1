/* normalize.c — rewrites older-opset attribute forms into the one IR form of ir/ir.h.
 *
 * Runs on each node right after import (attributes copied, inputs wired, g->opset known). The
 * rewrites, with the opsets that use the attribute form (an attribute form met at a newer opset is
 * converted the same way; an attribute AND the matching input together are an error):
 *
 *   Reduce{Mean,Sum,Max,Min,Prod,L1,L2,SumSquare,LogSum,LogSumExp}
 *        attribute `axes` (opset < 18; ReduceSum < 13) -> input 1, int64 [n]. A missing or empty
 *        `axes` attribute leaves input 1 absent (= reduce over all axes; noop_with_empty_axes is
 *        not set, so its default 0 keeps that meaning). `keepdims` stays an attribute.
 *   Split      attribute `split` (< 13) -> input 1, int64 [n] (empty -> absent = equal parts);
 *              `num_outputs` (18) stays an attribute.
 *   Squeeze    attribute `axes` (< 13) -> input 1, int64 [n] (empty -> absent = all 1-dims).
 *   Unsqueeze  attribute `axes` (< 13) -> input 1, int64 [n].
 *   Reshape    attribute `shape` (Reshape-1, < 5) -> input 1, int64 [n].
 *   Pad        attributes `pads` (`paddings` in Pad-1) and `value` (< 11) -> input 1 (int64 [2r])
 *              and input 2 (scalar); `mode` stays. Input 2 is added only if `value` was given
 *              (absent = 0, Pad-11 semantics). Its dtype is the data input's dtype when that is
 *              already known and floating (f16/f64), else float32 (Pad < 11 only accepts
 *              floating types, and the IR reader must cast a float32 pad value to x's dtype).
 *   Slice      attributes `starts`, `ends`, `axes` (< 10) -> inputs 1, 2, 3 (int64 [n]); missing
 *              `axes` leaves input 3 absent.
 *   Clip       attributes `min`, `max` (< 11) -> inputs 1, 2: scalars of the data input's dtype
 *              when already known and floating (f16/f64), else float32 (same note as Pad). A
 *              missing bound leaves its input absent (no bound).
 *   Upsample (7, 9) and Resize-10
 *              -> op RESIZE with inputs (x, roi absent, scales); Upsample-7's `scales` attribute
 *              becomes a float32 [n] constant. Attributes: `mode` kept ("bilinear" of old exports
 *              -> "linear"), coordinate_transformation_mode = "asymmetric", nearest_mode =
 *              "floor" (their semantics). op_type keeps the file's name for messages.
 *   Resize-11+ keep their inputs; a constant roi or scales with zero elements (the exporters'
 *              "empty" placeholder) becomes an absent input.
 *   Softmax, LogSoftmax, Hardmax
 *              opset < 13: int attribute `_flatten` = 1 and `axis` defaulted to 1 (coerce to 2-D
 *              at axis); >= 13: `_flatten` = 0 and `axis` defaulted to -1. `axis` is always set.
 *   GroupNormalization-18..20 (scale, bias of shape [G], one value per group)
 *              -> the -21 form (shape [C], one value per channel) when scale and bias are
 *              constants and C (dim 1 of x) is known at import time (x is a graph input with a
 *              static dim 1, or graph.value_info gives it): new constants with
 *              scale_c[c] = scale_g[c / (C/G)]. Otherwise the node gets the int attribute
 *              `_per_group` = 1: scale/bias stay [G] and later stages read them per group
 *              (passes/infer.c, ref/ref_norm.c and codegen/lower_norm.c handle the flag). From
 *              opset 21 nothing changes.
 *   Add/Sub/Mul/Div/Pow/And/Or/Xor/Equal/Greater/Less (opset < 7): `broadcast` and `axis` are
 *              removed. broadcast=1 with `axis` (B aligned with A at axis) is accepted only when
 *              it equals numpy broadcasting: both ranks known at import (graph inputs or
 *              constants) and axis == rank(A) - rank(B); otherwise fatal "not supported".
 *              Without `axis`, legacy broadcast is suffix-aligned, the same as numpy's.
 *   PRelu (< 7) a slope of shape [C] (C > 1) is per channel (axis 1): it becomes a constant of
 *              shape [C, 1, ..., 1] (rank(X) - 1 dims) so numpy broadcasting (PRelu-7) matches;
 *              fatal if the slope is not constant or rank(X) is unknown at import.
 *   BatchNormalization  `spatial` (< 9) removed; spatial=0 (per-element statistics) is fatal.
 *   Concat     missing `axis` at opset < 4 -> axis = 1 (Concat-1 default); fatal from opset 4.
 *   Cast       Cast-1's string `to` ("FLOAT", "INT64", ...) -> the int TensorProto type.
 *   Dropout and everything else: unchanged.
 *
 * Guarantees: removed attributes are gone from the node; new constants are named
 * "<node or op_type>.<attribute>" (made unique) and flagged is_initializer; input use counts are
 * kept exact.
 */
#include "frontend_internal.h"
#include "../ref/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- node editing helpers (import time: producer/use counts kept by hand) ---------------------- */

/* Sets input slot k of node nid to v (growing the input array with absent slots as needed). */
static void set_input(struct ir_graph *g, uint32_t nid, uint32_t k, uint32_t v)
{
    struct ir_node *n = &g->nodes[nid];
    if (k >= n->ninputs) {
        uint32_t *ins = ir_alloc(g, (k + 1) * sizeof *ins);
        for (uint32_t i = 0; i <= k; i++) ins[i] = i < n->ninputs ? n->inputs[i] : IR_NONE;
        n->inputs = ins;
        n->ninputs = k + 1;
    }
    uint32_t old = n->inputs[k];
    if (old != IR_NONE) g->values[old].nuses--;
    n->inputs[k] = v;
    if (v != IR_NONE) g->values[v].nuses++;
}

/* Removes attribute `name` if present. */
static void attr_remove(struct ir_graph *g, uint32_t nid, const char *name)
{
    struct ir_node *n = &g->nodes[nid];
    for (uint32_t i = 0; i < n->nattrs; i++) {
        if (strcmp(n->attrs[i].name, name) != 0) continue;
        memmove(&n->attrs[i], &n->attrs[i + 1], (n->nattrs - i - 1) * sizeof *n->attrs);
        n->nattrs--;
        return;
    }
}

/* Replaces or appends attribute a (a.name must be arena memory). */
static void attr_put(struct ir_graph *g, uint32_t nid, struct ir_attr a)
{
    struct ir_node *n = &g->nodes[nid];
    for (uint32_t i = 0; i < n->nattrs; i++)
        if (strcmp(n->attrs[i].name, a.name) == 0) {
            n->attrs[i] = a;
            return;
        }
    struct ir_attr *na = ir_alloc(g, (n->nattrs + 1) * sizeof *na);
    if (n->nattrs) memcpy(na, n->attrs, n->nattrs * sizeof *na);
    na[n->nattrs] = a;
    n->attrs = na;
    n->nattrs++;
}

static void attr_put_int(struct ir_graph *g, uint32_t nid, const char *name, int64_t v)
{
    struct ir_attr a = {.name = ir_strdup(g, name), .type = IR_ATTR_INT, .i = v, .tensor = IR_NONE};
    attr_put(g, nid, a);
}

static void attr_put_string(struct ir_graph *g, uint32_t nid, const char *name, const char *s)
{
    struct ir_attr a = {.name = ir_strdup(g, name), .type = IR_ATTR_STRING, .s = ir_strdup(g, s),
                        .s_len = strlen(s), .tensor = IR_NONE};
    attr_put(g, nid, a);
}

/* Base name for constants made from node attributes. */
static const char *const_base(struct ir_graph *g, uint32_t nid, const char *what)
{
    const struct ir_node *n = &g->nodes[nid];
    return ir_sprintf(g, "%s.%s", *n->name ? n->name : n->op_type, what);
}

/* If INTS attribute `name` exists: removes it and, when it is non-empty or !empty_is_absent,
 * puts its values as an int64 [n] constant into input slot k. Returns true if it existed. */
static bool ints_attr_to_input(struct ir_graph *g, uint32_t nid, const char *name, uint32_t k,
                               bool empty_is_absent)
{
    const struct ir_node *n = &g->nodes[nid];
    const struct ir_attr *a = ir_attr_find(n, name);
    if (!a) return false;
    if (a->type != IR_ATTR_INTS)
        ir_fatal_node(g, n, "attribute '%s' must be a list of ints", name);
    if (ir_input(n, k) != IR_NONE)
        ir_fatal_node(g, n, "'%s' is given both as an attribute and as input %u", name, k);
    size_t cnt = a->n;
    const int64_t *vals = a->ints;
    attr_remove(g, nid, name);
    if (cnt == 0 && empty_is_absent) return true;
    int64_t dims[1] = {(int64_t)cnt};
    uint32_t v = fe_const_new(g, const_base(g, nid, name), IR_I64, 1, dims, vals,
                              cnt * sizeof(int64_t));
    set_input(g, nid, k, v);
    return true;
}

/* Scalar constant of dtype dt (F32, F16 or F64) holding x. */
static uint32_t float_scalar(struct ir_graph *g, uint32_t nid, const char *what, enum ir_dtype dt,
                             float x)
{
    const char *base = const_base(g, nid, what);
    if (dt == IR_F64) {
        double d = x;
        return fe_const_new(g, base, IR_F64, 0, NULL, &d, sizeof d);
    }
    if (dt == IR_F16) {
        uint16_t h = ref_f32_to_f16(x); /* portable: clang 14 and MSVC have no _Float16 on x86 */
        return fe_const_new(g, base, IR_F16, 0, NULL, &h, sizeof h);
    }
    return fe_const_new(g, base, IR_F32, 0, NULL, &x, sizeof x);
}

/* dtype for scalar attributes turned into inputs: x's dtype if known floating, else f32. */
static enum ir_dtype float_dtype_of_input0(const struct ir_graph *g, const struct ir_node *n)
{
    uint32_t x = ir_input(n, 0);
    if (x == IR_NONE) return IR_F32;
    enum ir_dtype dt = g->values[x].dtype;
    return (dt == IR_F16 || dt == IR_F64) ? dt : IR_F32;
}

/* FLOAT attribute `name` (if present) -> scalar input k. */
static void float_attr_to_input(struct ir_graph *g, uint32_t nid, const char *name, uint32_t k)
{
    const struct ir_node *n = &g->nodes[nid];
    const struct ir_attr *a = ir_attr_find(n, name);
    if (!a) return;
    if (a->type != IR_ATTR_FLOAT) ir_fatal_node(g, n, "attribute '%s' must be a float", name);
    if (ir_input(n, k) != IR_NONE)
        ir_fatal_node(g, n, "'%s' is given both as an attribute and as input %u", name, k);
    float x = a->f;
    enum ir_dtype dt = float_dtype_of_input0(g, n);
    attr_remove(g, nid, name);
    set_input(g, nid, k, float_scalar(g, nid, name, dt, x));
}

/* Static dim `axis` of value v at import time, -1 if unknown (value dims or value_info hint). */
static int64_t static_dim(const struct fe_ctx *c, uint32_t v, int axis)
{
    const struct ir_value *x = &c->g->values[v];
    if (x->rank > axis && !x->dim_param[axis] && x->dims[axis] >= 0) return x->dims[axis];
    for (size_t i = 0; i < c->nhints; i++)
        if (strcmp(c->hints[i].name, x->name) == 0)
            return c->hints[i].rank > axis ? c->hints[i].dims[axis] : -1;
    return -1;
}

/* ---- per-op rewrites ---------------------------------------------------------------------------- */

static void norm_resize_legacy(struct ir_graph *g, uint32_t nid)
{
    struct ir_node *n = &g->nodes[nid];
    if (n->op == IR_OP_UPSAMPLE) {
        const struct ir_attr *sc = ir_attr_find(n, "scales");
        uint32_t scales = ir_input(n, 1);
        if (sc) {
            if (sc->type != IR_ATTR_FLOATS)
                ir_fatal_node(g, n, "attribute 'scales' must be a list of floats");
            if (scales != IR_NONE)
                ir_fatal_node(g, n, "'scales' is given both as an attribute and as input 1");
            int64_t dims[1] = {(int64_t)sc->n};
            scales = fe_const_new(g, const_base(g, nid, "scales"), IR_F32, 1, dims, sc->floats,
                                  sc->n * sizeof(float));
            g->values[scales].nuses++; /* the use set_input below takes over */
            attr_remove(g, nid, "scales");
        } else if (scales == IR_NONE) {
            ir_fatal_node(g, n, "Upsample needs scales (attribute or input 1)");
        } else {
            g->values[scales].nuses++;
        }
        /* Drop the old slot-1 use, then rewire to (x, absent, scales). */
        n = &g->nodes[nid];
        set_input(g, nid, 1, IR_NONE);
        set_input(g, nid, 2, scales);
        g->values[scales].nuses--;
        g->nodes[nid].op = IR_OP_RESIZE;
    } else { /* Resize-10: (X, scales) */
        uint32_t scales = ir_input(n, 1);
        if (scales == IR_NONE) ir_fatal_node(g, n, "Resize-10 needs input 1 (scales)");
        if (n->ninputs > 2) ir_fatal_node(g, n, "Resize-10 takes 2 inputs, has %u", n->ninputs);
        g->values[scales].nuses++;
        set_input(g, nid, 1, IR_NONE);
        set_input(g, nid, 2, scales);
        g->values[scales].nuses--;
    }
    n = &g->nodes[nid];
    const char *mode = ir_attr_string(n, "mode", "nearest");
    if (strcmp(mode, "bilinear") == 0) mode = "linear";
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
        ir_fatal_node(g, n, "unsupported mode '%s' (nearest or linear)", mode);
    attr_put_string(g, nid, "mode", mode);
    attr_put_string(g, nid, "coordinate_transformation_mode", "asymmetric");
    attr_put_string(g, nid, "nearest_mode", "floor");
}

/* Resize-11+: constant empty roi/scales -> absent. */
static void norm_resize_empty_inputs(struct ir_graph *g, uint32_t nid)
{
    for (uint32_t k = 1; k <= 2; k++) {
        uint32_t v = ir_input(&g->nodes[nid], k);
        if (v != IR_NONE && ir_is_const(g, v) && g->values[v].nbytes == 0)
            set_input(g, nid, k, IR_NONE);
    }
}

static void norm_group_norm_18(struct fe_ctx *c, uint32_t nid)
{
    struct ir_graph *g = c->g;
    const struct ir_node *n = &g->nodes[nid];
    uint32_t x = ir_input(n, 0), s = ir_input(n, 1), b = ir_input(n, 2);
    int64_t G = ir_attr_int(n, "num_groups", -1);
    if (G <= 0) ir_fatal_node(g, n, "num_groups must be given and positive (got %lld)", (long long)G);
    int64_t C = x != IR_NONE ? static_dim(c, x, 1) : -1;
    bool ok = C > 0 && s != IR_NONE && b != IR_NONE && ir_is_const(g, s) && ir_is_const(g, b);
    if (ok) {
        for (int j = 0; j < 2; j++) {
            const struct ir_value *p = &g->values[j ? b : s];
            int64_t ne;
            if (p->rank != 1 || !ir_dims_numel(p->dims, 1, &ne) || ne != G)
                ir_fatal_node(g, n, "%s must have shape [num_groups=%lld] at opset %lld",
                              j ? "bias" : "scale", (long long)G, (long long)g->opset);
        }
        if (C % G != 0)
            ir_fatal_node(g, n, "num_groups=%lld does not divide C=%lld", (long long)G,
                          (long long)C);
    }
    if (!ok) {
        attr_put_int(g, nid, "_per_group", 1);
        return;
    }
    for (uint32_t k = 1; k <= 2; k++) {
        uint32_t p = g->nodes[nid].inputs[k];
        const struct ir_value *pv = &g->values[p];
        size_t esz = ir_dtype_size(pv->dtype);
        enum ir_dtype dt = pv->dtype;
        const uint8_t *src = pv->data;
        uint8_t *dst = malloc((size_t)C * esz);
        if (!dst) ir_die("out of memory");
        for (int64_t ch = 0; ch < C; ch++)
            memcpy(dst + (size_t)ch * esz, src + (size_t)(ch / (C / G)) * esz, esz);
        int64_t dims[1] = {C};
        uint32_t v = fe_const_new(g, const_base(g, nid, k == 1 ? "scale" : "bias"), dt, 1, dims,
                                  dst, (size_t)C * esz);
        free(dst);
        set_input(g, nid, k, v);
    }
}

/* PRelu-6: a slope of shape [C] (C > 1) applies per channel (axis 1), which numpy broadcasting
 * (PRelu-7+) spells [C, 1, ..., 1] (rank(x) - 1 dims). */
static void norm_prelu_6(struct ir_graph *g, uint32_t nid)
{
    const struct ir_node *n = &g->nodes[nid];
    uint32_t x = ir_input(n, 0), s = ir_input(n, 1);
    if (x == IR_NONE || s == IR_NONE) return;
    const struct ir_value *sv = &g->values[s];
    if (sv->rank != 1 || !sv->dims_known || sv->dims[0] <= 1) return; /* scalar-like: same */
    int rx = g->values[x].rank;
    if (!ir_is_const(g, s) || rx < 2)
        ir_fatal_node(g, n,
                      "PRelu (opset %lld) with a per-channel slope [%lld] needs a constant slope "
                      "and the rank of X known at import",
                      (long long)g->opset, (long long)sv->dims[0]);
    int64_t dims[IR_MAX_RANK];
    dims[0] = sv->dims[0];
    for (int k = 1; k < rx - 1; k++) dims[k] = 1;
    uint32_t v = fe_const_new(g, const_base(g, nid, "slope"), sv->dtype, rx - 1, dims, sv->data,
                              sv->nbytes);
    set_input(g, nid, 1, v);
}

void fe_normalize_node(struct fe_ctx *c, uint32_t nid)
{
    struct ir_graph *g = c->g;
    const struct ir_node *n = &g->nodes[nid];
    int64_t opset = g->opset;
    switch (n->op) {
    case IR_OP_REDUCE_MEAN: case IR_OP_REDUCE_SUM: case IR_OP_REDUCE_MAX: case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD: case IR_OP_REDUCE_L1: case IR_OP_REDUCE_L2:
    case IR_OP_REDUCE_SUM_SQUARE: case IR_OP_REDUCE_LOG_SUM: case IR_OP_REDUCE_LOG_SUM_EXP:
        ints_attr_to_input(g, nid, "axes", 1, true);
        break;
    case IR_OP_SPLIT:
        ints_attr_to_input(g, nid, "split", 1, true);
        break;
    case IR_OP_SQUEEZE:
        ints_attr_to_input(g, nid, "axes", 1, true);
        break;
    case IR_OP_UNSQUEEZE:
        ints_attr_to_input(g, nid, "axes", 1, false);
        break;
    case IR_OP_RESHAPE:
        ints_attr_to_input(g, nid, "shape", 1, false);
        break;
    case IR_OP_PAD:
        if (!ints_attr_to_input(g, nid, "pads", 1, false))
            ints_attr_to_input(g, nid, "paddings", 1, false);
        float_attr_to_input(g, nid, "value", 2);
        break;
    case IR_OP_TOP_K: { /* TopK-1: k attribute -> int64 [1] input 1 (TopK-10's form) */
        const struct ir_attr *a = ir_attr_find(n, "k");
        if (!a) break;
        if (a->type != IR_ATTR_INT) ir_fatal_node(g, n, "attribute 'k' must be an int");
        if (ir_input(n, 1) != IR_NONE) ir_fatal_node(g, n, "'k' is given both as an attribute and as input 1");
        int64_t k = a->i, dims[1] = {1};
        attr_remove(g, nid, "k");
        set_input(g, nid, 1, fe_const_new(g, const_base(g, nid, "k"), IR_I64, 1, dims, &k, sizeof k));
        break;
    }
    case IR_OP_SLICE:
        ints_attr_to_input(g, nid, "starts", 1, false);
        ints_attr_to_input(g, nid, "ends", 2, false);
        ints_attr_to_input(g, nid, "axes", 3, true);
        break;
    case IR_OP_CLIP:
        float_attr_to_input(g, nid, "min", 1);
        float_attr_to_input(g, nid, "max", 2);
        break;
    case IR_OP_UPSAMPLE:
        norm_resize_legacy(g, nid);
        break;
    case IR_OP_RESIZE:
        if (opset < 11) norm_resize_legacy(g, nid);
        else norm_resize_empty_inputs(g, nid);
        break;
    case IR_OP_SOFTMAX: case IR_OP_LOG_SOFTMAX: case IR_OP_HARDMAX: {
        bool old = opset < 13;
        int64_t axis = ir_attr_int(n, "axis", old ? 1 : -1);
        attr_put_int(g, nid, "axis", axis);
        attr_put_int(g, nid, "_flatten", old ? 1 : 0);
        break;
    }
    case IR_OP_GROUP_NORMALIZATION:
        if (opset < 21) norm_group_norm_18(c, nid);
        break;
    case IR_OP_ADD: case IR_OP_SUB: case IR_OP_MUL: case IR_OP_DIV: case IR_OP_POW:
    case IR_OP_AND: case IR_OP_OR: case IR_OP_XOR: case IR_OP_EQUAL: case IR_OP_GREATER:
    case IR_OP_LESS:
        if (ir_attr_int(n, "broadcast", 0) != 0 && ir_attr_find(n, "axis")) {
            /* Legacy: B's dims align with A's starting at `axis`. That is numpy broadcasting
             * exactly when axis == rank(A) - rank(B); anything else is refused. */
            uint32_t a = ir_input(n, 0), b = ir_input(n, 1);
            int ra = a != IR_NONE ? g->values[a].rank : -1;
            int rb = b != IR_NONE ? g->values[b].rank : -1;
            int64_t axis = ir_attr_int(n, "axis", 0);
            if (axis < 0) axis += ra;
            if (ra < 0 || rb < 0 || axis != ra - rb)
                ir_fatal_node(g, n,
                              "legacy broadcasting with broadcast=1, axis=%lld (opset < 7) is "
                              "only supported when axis == rank(A) - rank(B) and both ranks are "
                              "known at import",
                              (long long)ir_attr_int(n, "axis", 0));
            attr_remove(g, nid, "axis");
        }
        attr_remove(g, nid, "broadcast");
        break;
    case IR_OP_PRELU:
        if (opset < 7) norm_prelu_6(g, nid);
        break;
    case IR_OP_BATCH_NORMALIZATION:
        if (ir_attr_int(n, "spatial", 1) == 0)
            ir_fatal_node(g, n, "spatial=0 (per-element statistics, opset < 9) is not supported");
        attr_remove(g, nid, "spatial");
        break;
    case IR_OP_CONCAT:
        if (!ir_attr_find(n, "axis")) {
            if (opset >= 4) ir_fatal_node(g, n, "missing attribute 'axis'");
            attr_put_int(g, nid, "axis", 1); /* Concat-1 default */
        }
        break;
    case IR_OP_CAST: {
        const struct ir_attr *to = ir_attr_find(n, "to");
        if (to && to->type == IR_ATTR_STRING) { /* Cast-1: "to" is a type name */
            static const char *names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16",
                                          "INT16", "INT32", "INT64", "STRING", "BOOL",
                                          "FLOAT16", "DOUBLE", "UINT32", "UINT64"};
            int64_t t = -1;
            for (size_t k = 1; k < sizeof names / sizeof *names; k++)
                if (strcmp(to->s, names[k]) == 0) t = (int64_t)k;
            if (t < 0) ir_fatal_node(g, n, "unknown Cast type name to='%s'", to->s);
            attr_put_int(g, nid, "to", t);
        }
        break;
    }
    default:
        break;
    }
}
