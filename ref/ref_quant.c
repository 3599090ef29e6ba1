/* ref_quant.c — reference QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the
 * shape/type rules shared with inference and lowering (ref/ref_quant.h), plus BitCast's type rule.
 *
 * Assumes: inputs constant (evaluation), dims known; outputs typed by infer_node.
 * Guarantees (ONNX QuantizeLinear/DequantizeLinear 10..25, DynamicQuantizeLinear 11; the
 * kernels in kernels/quant.cl compute the same float32 expressions):
 *   QuantizeLinear:   y = clamp(rint(x / scale) + zero_point, qmin, qmax), rint = round half
 *                     to even, NaN -> qmin (numpy reference: NaN cast to int32 then clipped);
 *                     x / scale in float32, or in float16 (operands and quotient rounded to
 *                     float16) for precision=float16 or x and scale both float16 (numpy's type
 *                     promotion in the ONNX reference);
 *   DequantizeLinear: y = (float)(x - zero_point) * scale in float32, rounded once to the
 *                     output type (float16: RNE);
 *   DynamicQuantizeLinear (uint8): lo = min(0, min x), hi = max(0, max x),
 *                     scale = (hi == lo ? 1 : hi - lo) / 255, zp = rint(clamp(0 - lo / scale,
 *                     0, 255)), y = clamp(rint(x / scale) + zp, 0, 255) (onnx reference).
 *   saturate only concerns float8 outputs, which are refused: any value is accepted.
 */
#include "ref/ref_quant.h"

#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

static bool is_qtype(enum ir_dtype t)
{
    return t == IR_U8 || t == IR_I8 || t == IR_U16 || t == IR_I16;
}

static bool is_ftype(enum ir_dtype t)
{
    return t == IR_F32 || t == IR_F16;
}

/* "int4 (22)" style name for messages: dtypes the IR has no name for keep their number. */
static const char *tname(const struct ir_graph *g, int64_t t)
{
    static const char *const onnx_names[] = {
        [16] = "bfloat16",     [17] = "float8e4m3fn", [18] = "float8e4m3fnuz",
        [19] = "float8e5m2",   [20] = "float8e5m2fnuz", [21] = "uint4",
        [22] = "int4",         [23] = "float4e2m1",   [24] = "float8e8m0",
        [25] = "uint2",        [26] = "int2",         [14] = "complex64",
        [15] = "complex128",
    };
    const char *s = ir_dtype_name((enum ir_dtype)t);
    if (strcmp(s, "undefined") == 0 && t >= 0 && t < (int64_t)(sizeof onnx_names / sizeof *onnx_names) &&
        onnx_names[t])
        s = onnx_names[t];
    return ir_sprintf((struct ir_graph *)g, "%s (%lld)", s, (long long)t);
}

void ref_quant_range(enum ir_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case IR_U8: *lo = 0, *hi = 255; return;
    case IR_I8: *lo = -128, *hi = 127; return;
    case IR_U16: *lo = 0, *hi = 65535; return;
    case IR_I16: *lo = -32768, *hi = 32767; return;
    default: *lo = INT32_MIN, *hi = INT32_MAX; return;
    }
}

bool ref_quant_half_div(const struct ir_graph *g, const struct ir_node *n)
{
    const int64_t prec = ir_attr_int(n, "precision", 0);
    if (prec) return prec == IR_F16;
    return g->values[n->inputs[0]].dtype == IR_F16 && g->values[n->inputs[1]].dtype == IR_F16;
}

/* v rounded to float16 (RNE) and back. */
static float round_h(float v)
{
    return ref_f16_to_f32(ref_f32_to_f16(v));
}

void ref_quant_geom(const struct ir_graph *g, const struct ir_node *n, struct ref_quant_geom *q)
{
    const struct ir_value *x = &g->values[n->inputs[0]];
    const struct ir_value *s = &g->values[n->inputs[1]];
    const uint32_t zid = ir_input(n, 2);
    const struct ir_value *z = zid == IR_NONE ? NULL : &g->values[zid];
    const char *op = ir_op_name(n->op);
    char b1[200], b2[200];
    const int64_t block = ir_attr_int(n, "block_size", 0);
    const int64_t xn = ref_numel_v(x), sn = ref_numel_v(s);
    if (block < 0)
        ir_fatal_node(g, n, "%s: block_size=%lld must be >= 0", op, (long long)block);
    memset(q, 0, sizeof *q);
    q->block = 1;
    if (block == 0 && sn == 1 && s->rank <= 1) {
        /* per-tensor */
        q->outer = xn;
        q->d = 1;
        q->inner = 1;
    } else {
        if (x->rank == 0)
            ir_fatal_node(g, n, "%s: scale '%s' %s has several elements but x '%s' is a scalar",
                          op, s->name, ir_dims_str(s, b1, sizeof b1), x->name);
        const int axis = ref_axis(g, n, ir_attr_int(n, "axis", 1), x->rank, false, "axis");
        q->outer = 1;
        q->inner = 1;
        for (int k = 0; k < axis; k++) q->outer *= x->dims[k];
        for (int k = axis + 1; k < x->rank; k++) q->inner *= x->dims[k];
        q->d = x->dims[axis];
        if (block == 0) {
            if (s->rank != 1 || s->dims[0] != q->d)
                ir_fatal_node(g, n, "%s: scale '%s' %s must be a scalar or 1-D of x's dim %lld at "
                              "axis=%d (x '%s' %s); a scale of x's rank needs block_size > 0", op,
                              s->name, ir_dims_str(s, b1, sizeof b1), (long long)q->d, axis,
                              x->name, ir_dims_str(x, b2, sizeof b2));
            q->s_axis = 1;
        } else {
            bool ok = s->rank == x->rank;
            for (int k = 0; ok && k < x->rank; k++)
                ok = k == axis ? s->dims[k] == (x->dims[k] + block - 1) / block
                               : s->dims[k] == x->dims[k];
            if (!ok)
                ir_fatal_node(g, n, "%s: blocked scale '%s' %s must equal x's dims %s except "
                              "ceil(%lld / block_size=%lld) at axis=%d", op, s->name,
                              ir_dims_str(s, b1, sizeof b1), ir_dims_str(x, b2, sizeof b2),
                              (long long)q->d, (long long)block, axis);
            q->block = block;
            q->s_inner = 1;
            q->s_axis = q->inner;
            q->s_outer = s->dims[axis] * q->inner;
        }
        if (q->d == 0) q->d = 1; /* empty x: no element is indexed */
        if (q->inner == 0) q->inner = 1;
    }
    if (z) {
        bool ok = ref_numel_v(z) == sn;
        if (ok && !(q->s_outer == 0 && q->s_axis == 0 && q->s_inner == 0)) {
            ok = z->rank == s->rank;
            for (int k = 0; ok && k < s->rank; k++) ok = z->dims[k] == s->dims[k];
        }
        if (!ok)
            ir_fatal_node(g, n, "%s: zero point '%s' %s must have the shape of scale '%s' %s", op,
                          z->name, ir_dims_str(z, b1, sizeof b1), s->name,
                          ir_dims_str(s, b2, sizeof b2));
    }
}

enum ir_dtype ref_quant_out_dtype(const struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = &g->values[n->inputs[0]];
    const struct ir_value *s = &g->values[n->inputs[1]];
    const uint32_t zid = ir_input(n, 2);
    const struct ir_value *z = zid == IR_NONE ? NULL : &g->values[zid];
    const char *op = ir_op_name(n->op);
    const int64_t odt = ir_attr_int(n, "output_dtype", 0);
    if (!is_ftype(s->dtype))
        ir_fatal_node(g, n, "%s: scale '%s' has element type %s (float32 and float16 are "
                      "supported)", op, s->name, tname(g, s->dtype));
    if (n->op == IR_OP_QUANTIZE_LINEAR) {
        if (!is_ftype(x->dtype))
            ir_fatal_node(g, n, "QuantizeLinear: x '%s' has element type %s (float32 and float16 "
                          "are supported)", x->name, tname(g, x->dtype));
        const int64_t prec = ir_attr_int(n, "precision", 0);
        if (prec != 0 && prec != IR_F32 && prec != IR_F16)
            ir_fatal_node(g, n, "QuantizeLinear: precision=%s is not supported (float32, float16)",
                          tname(g, prec));
        int64_t t = z ? (int64_t)z->dtype : odt ? odt : IR_U8;
        if (z && odt && odt != (int64_t)z->dtype)
            ir_fatal_node(g, n, "QuantizeLinear: output_dtype=%s differs from the zero point's "
                          "type %s", tname(g, odt), tname(g, z->dtype));
        if (!is_qtype((enum ir_dtype)t))
            ir_fatal_node(g, n, "QuantizeLinear: output type %s is not supported (int8, uint8, "
                          "int16, uint16)", tname(g, t));
        return (enum ir_dtype)t;
    }
    /* DequantizeLinear */
    if (!is_qtype(x->dtype) && x->dtype != IR_I32)
        ir_fatal_node(g, n, "DequantizeLinear: x '%s' has element type %s (int8, uint8, int16, "
                      "uint16, int32 are supported)", x->name, tname(g, x->dtype));
    if (z && z->dtype != x->dtype)
        ir_fatal_node(g, n, "DequantizeLinear: zero point '%s' is %s but x '%s' is %s", z->name,
                      tname(g, z->dtype), x->name, tname(g, x->dtype));
    const int64_t t = odt ? odt : (int64_t)s->dtype;
    if (!is_ftype((enum ir_dtype)t))
        ir_fatal_node(g, n, "DequantizeLinear: output_dtype=%s is not supported (float32, "
                      "float16)", tname(g, t));
    return (enum ir_dtype)t;
}

enum ir_dtype ref_bitcast_dtype(const struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_attr *a = ir_attr_find(n, "to");
    if (!a || a->type != IR_ATTR_INT) ir_fatal_node(g, n, "BitCast: missing int attribute 'to'");
    const enum ir_dtype src = g->values[n->inputs[0]].dtype, dst = (enum ir_dtype)a->i;
    if (!ref_is_supported(dst) || dst == IR_BF16)
        ir_fatal_node(g, n, "BitCast: to=%s is not supported", tname(g, a->i));
    if (!ref_is_supported(src) || src == IR_BF16)
        ir_fatal_node(g, n, "BitCast: input element type %s is not supported", tname(g, src));
    if (ir_dtype_size(src) != ir_dtype_size(dst))
        ir_fatal_node(g, n, "BitCast: to=%s has %zu-byte elements but the input (%s) has %zu",
                      tname(g, dst), ir_dtype_size(dst), tname(g, src), ir_dtype_size(src));
    return dst;
}

/* ---- evaluation --------------------------------------------------------------------------- */

static bool eval_quantize(struct ir_graph *g, const struct ir_node *n)
{
    struct ref_quant_geom q;
    ref_quant_geom(g, n, &q);
    const struct ir_value *x = &g->values[n->inputs[0]], *s = &g->values[n->inputs[1]];
    const uint32_t zid = ir_input(n, 2);
    const struct ir_value *z = zid == IR_NONE ? NULL : &g->values[zid];
    const uint32_t ov = n->outputs[0];
    const enum ir_dtype ot = g->values[ov].dtype;
    int64_t lo, hi;
    ref_quant_range(ot, &lo, &hi);
    const bool hdiv = ref_quant_half_div(g, n);
    const int64_t cnt = ref_numel_v(x);
    void *out = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++) {
        const int64_t k = ref_quant_sidx(&q, i);
        const float a = (float)ref_get_f(x->data, x->dtype, i);
        const float b = (float)ref_get_f(s->data, s->dtype, k);
        float v = rintf(hdiv ? round_h(round_h(a) / round_h(b)) : a / b);
        if (z) v += (float)ref_get_i(z->data, z->dtype, k);
        v = isnan(v) ? (float)lo : fminf(fmaxf(v, (float)lo), (float)hi);
        ref_set_i(out, ot, i, (int64_t)v);
    }
    return true;
}

static bool eval_dequantize(struct ir_graph *g, const struct ir_node *n)
{
    struct ref_quant_geom q;
    ref_quant_geom(g, n, &q);
    const struct ir_value *x = &g->values[n->inputs[0]], *s = &g->values[n->inputs[1]];
    const uint32_t zid = ir_input(n, 2);
    const struct ir_value *z = zid == IR_NONE ? NULL : &g->values[zid];
    const uint32_t ov = n->outputs[0];
    const enum ir_dtype ot = g->values[ov].dtype;
    const int64_t cnt = ref_numel_v(x);
    void *out = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++) {
        const int64_t k = ref_quant_sidx(&q, i);
        int64_t v = ref_get_i(x->data, x->dtype, i);
        if (z) v -= ref_get_i(z->data, z->dtype, k);
        const float r = (float)v * (float)ref_get_f(s->data, s->dtype, k);
        ref_set_f(out, ot, i, r);
    }
    return true;
}

static bool eval_dynamic(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = &g->values[n->inputs[0]];
    if (x->dtype != IR_F32) return false;
    const float *xp = x->data;
    const int64_t cnt = ref_numel_v(x);
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < cnt; i++) {
        /* min/max propagate NaN (numpy) */
        if (xp[i] < mn || isnan(xp[i])) mn = isnan(mn) ? mn : xp[i];
        if (xp[i] > mx || isnan(xp[i])) mx = isnan(mx) ? mx : xp[i];
    }
    const float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    const float zp = rintf(fminf(fmaxf(0.0f - mn / scale, 0.0f), 255.0f));
    uint8_t *y = n->outputs[0] != IR_NONE ? ref_alloc_out(g, n->outputs[0]) : NULL;
    for (int64_t i = 0; y && i < cnt; i++) {
        const float v = rintf(xp[i] / scale) + zp;
        y[i] = (uint8_t)(isnan(v) ? 0.0f : fminf(fmaxf(v, 0.0f), 255.0f));
    }
    if (n->noutputs > 1 && n->outputs[1] != IR_NONE)
        *(float *)ref_alloc_out(g, n->outputs[1]) = scale;
    if (n->noutputs > 2 && n->outputs[2] != IR_NONE)
        *(uint8_t *)ref_alloc_out(g, n->outputs[2]) = (uint8_t)zp;
    return true;
}

bool ref_eval_quant(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    switch (n->op) {
    case IR_OP_QUANTIZE_LINEAR: return eval_quantize(g, n);
    case IR_OP_DEQUANTIZE_LINEAR: return eval_dequantize(g, n);
    case IR_OP_DYNAMIC_QUANTIZE_LINEAR: return eval_dynamic(g, n);
    default: return false;
    }
}
