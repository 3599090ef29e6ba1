/* ref_elementwise.c — reference unary, binary (numpy broadcasting), variadic, Where, Clip,
 * Cast and CastLike.
 *
 * Assumes: output dtype/dims set by infer_node; inputs constant.
 * Guarantees (ONNX semantics, matching onnxruntime where the spec is loose):
 *   - float math in double, rounded once to the output type (f16/bf16 RNE);
 *   - Min/Max/Relu/Clip propagate NaN; Round is half-to-even;
 *   - integer Add/Sub/Mul wrap, Div truncates toward zero, Mod follows the divisor's sign
 *     (fmod=0) or the dividend's (fmod=1); uint64 compares/divides as unsigned;
 *     integer division by zero is a fatal user error; float Mod fmod=0 is numpy.mod (a zero
 *     result takes the divisor's sign, x mod 0 is NaN);
 *   - Pow keeps the dtype of the base; integer exponents by repeated squaring (integer base)
 *     or |x|**e with x's sign for odd e (float base); integer base with a float exponent:
 *     integral e by repeated squaring, else pow truncated (saturating to int64, then wrapping);
 *   - Cast: float -> int truncates toward zero (then wraps to the width), -> bool is x != 0,
 *     f32 -> f16 RNE with subnormals and overflow to inf; BitCast copies the bytes;
 *   - BitwiseNot/And/Or/Xor and BitShift on integer types only (BitShift-28 rules for shift
 *     counts < 0 or >= the width, arithmetic right shift of signed types).
 * Returns false for op/dtype combinations the spec does not define (e.g. Sqrt of int).
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

/* ---- unary ------------------------------------------------------------------------------------ */

static double softplus(double x)
{
    return x > 30 ? x : log1p(exp(x));
}

/* Float unary math; *ok = false if the op has no float form here. */
static double unary_f(const struct ir_node *n, double x, bool *ok)
{
    switch (n->op) {
    case IR_OP_ABS: return fabs(x);
    case IR_OP_NEG: return -x;
    case IR_OP_EXP: return exp(x);
    case IR_OP_LOG: return log(x);
    case IR_OP_SQRT: return sqrt(x);
    case IR_OP_RECIPROCAL: return 1.0 / x;
    case IR_OP_SIGMOID: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case IR_OP_TANH: return tanh(x);
    case IR_OP_SIN: return sin(x);
    case IR_OP_COS: return cos(x);
    case IR_OP_TAN: return tan(x);
    case IR_OP_ASIN: return asin(x);
    case IR_OP_ACOS: return acos(x);
    case IR_OP_ATAN: return atan(x);
    case IR_OP_SINH: return sinh(x);
    case IR_OP_COSH: return cosh(x);
    case IR_OP_ASINH: return asinh(x);
    case IR_OP_ACOSH: return acosh(x);
    case IR_OP_ATANH: return atanh(x);
    case IR_OP_ERF: return erf(x);
    case IR_OP_RELU: return x < 0 ? 0.0 : x;
    case IR_OP_FLOOR: return floor(x);
    case IR_OP_CEIL: return ceil(x);
    case IR_OP_ROUND: return nearbyint(x); /* default rounding mode: half to even */
    case IR_OP_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
    case IR_OP_SOFTPLUS: return softplus(x);
    case IR_OP_SOFTSIGN: return x / (1.0 + fabs(x));
    case IR_OP_ELU: {
        double a = ir_attr_float(n, "alpha", 1.0f);
        return x < 0 ? a * (exp(x) - 1.0) : x;
    }
    case IR_OP_SELU: {
        double a = ir_attr_float(n, "alpha", 1.67326319217681884765625f);
        double gm = ir_attr_float(n, "gamma", 1.05070102214813232421875f);
        return x <= 0 ? gm * (a * exp(x) - a) : gm * x;
    }
    case IR_OP_CELU: {
        double a = ir_attr_float(n, "alpha", 1.0f);
        return fmax(0.0, x) + fmin(0.0, a * (exp(x / a) - 1.0));
    }
    case IR_OP_LEAKY_RELU: {
        double a = ir_attr_float(n, "alpha", 0.01f);
        return x < 0 ? a * x : x;
    }
    case IR_OP_THRESHOLDED_RELU: {
        double a = ir_attr_float(n, "alpha", 1.0f);
        return x > a ? x : 0.0;
    }
    case IR_OP_HARD_SIGMOID: {
        double a = ir_attr_float(n, "alpha", 0.2f), b = ir_attr_float(n, "beta", 0.5f);
        return isnan(x) ? x : fmax(0.0, fmin(1.0, a * x + b)); /* NaN propagates (spec) */
    }
    case IR_OP_HARD_SWISH: return isnan(x) ? x : x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    case IR_OP_MISH: return x * tanh(softplus(x));
    case IR_OP_GELU: {
        const char *ap = ir_attr_string(n, "approximate", "none");
        if (!strcmp(ap, "tanh"))
            return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    }
    default: *ok = false; return 0;
    }
}

static bool eval_unary(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    enum ir_dtype t = x->dtype;
    uint32_t ov = n->outputs[0];
    enum ir_dtype ot = g->values[ov].dtype;
    int64_t cnt = ref_numel_v(x);
    const void *xp = x->data;
    if (n->op == IR_OP_GELU) {
        const char *ap = ir_attr_string(n, "approximate", "none");
        if (strcmp(ap, "none") && strcmp(ap, "tanh"))
            ir_fatal_node(g, n, "unsupported Gelu approximate='%s' (none, tanh)", ap);
    }
    if (n->op == IR_OP_NOT) {
        if (t != IR_BOOL) return false;
        void *o = ref_alloc_out(g, ov);
        for (int64_t i = 0; i < cnt; i++) ref_set_i(o, IR_BOOL, i, !ref_get_i(xp, t, i));
        return true;
    }
    if (n->op == IR_OP_ISNAN || n->op == IR_OP_ISINF) {
        if (!ref_is_float(t)) return false;
        bool neg = ir_attr_int(n, "detect_negative", 1), pos = ir_attr_int(n, "detect_positive", 1);
        void *o = ref_alloc_out(g, ov);
        for (int64_t i = 0; i < cnt; i++) {
            double v = ref_get_f(xp, t, i);
            bool r = n->op == IR_OP_ISNAN ? isnan(v) : (isinf(v) && ((v > 0 && pos) || (v < 0 && neg)));
            ref_set_i(o, IR_BOOL, i, r);
        }
        return true;
    }
    if (ref_is_float(t)) {
        bool ok = true;
        unary_f(n, 0.0, &ok);
        if (!ok) return false;
        void *o = ref_alloc_out(g, ov);
        for (int64_t i = 0; i < cnt; i++) ref_set_f(o, ot, i, unary_f(n, ref_get_f(xp, t, i), &ok));
        return true;
    }
    if (!ref_is_int(t)) return false;
    bool uns = ref_is_unsigned(t);
    switch (n->op) {
    case IR_OP_ABS:
    case IR_OP_NEG:
    case IR_OP_SIGN:
    case IR_OP_RELU:
    case IR_OP_FLOOR:
    case IR_OP_CEIL:
    case IR_OP_ROUND:
    case IR_OP_BITWISE_NOT:
        break;
    default: return false;
    }
    void *o = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t v = ref_get_i(xp, t, i), r = v;
        switch (n->op) {
        case IR_OP_ABS: r = uns ? v : (v < 0 ? (int64_t)(0 - (uint64_t)v) : v); break;
        case IR_OP_NEG: r = (int64_t)(0 - (uint64_t)v); break;
        case IR_OP_SIGN: r = uns ? (v != 0) : (v > 0) - (v < 0); break;
        case IR_OP_RELU: r = (!uns && v < 0) ? 0 : v; break;
        case IR_OP_BITWISE_NOT: r = ~v; break; /* wraps to the width on store */
        default: break;
        }
        ref_set_i(o, ot, i, r);
    }
    return true;
}

/* ---- binary ----------------------------------------------------------------------------------- */

static double binary_f(const struct ir_node *n, double a, double b, bool fmod_attr)
{
    switch (n->op) {
    case IR_OP_ADD: return a + b;
    case IR_OP_SUB: return a - b;
    case IR_OP_MUL: return a * b;
    case IR_OP_DIV: return a / b;
    case IR_OP_POW: return pow(a, b);
    case IR_OP_MOD: {
        /* fmod=0: numpy.mod (zero takes b's sign; NaN for b == 0, a = ±inf, NaN in) */
        double r = fmod(a, b);
        if (fmod_attr) return r;
        if (r == 0) return copysign(0.0, b);
        if ((r < 0) != (b < 0)) r += b;
        return r;
    }
    case IR_OP_PRELU: return a < 0 ? a * b : a;
    case IR_OP_MIN: return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
    case IR_OP_MAX: return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
    case IR_OP_SUM:
    case IR_OP_MEAN: return a + b;
    case IR_OP_EQUAL: return a == b;
    case IR_OP_GREATER: return a > b;
    case IR_OP_GREATER_OR_EQUAL: return a >= b;
    case IR_OP_LESS: return a < b;
    case IR_OP_LESS_OR_EQUAL: return a <= b;
    default: IR_ASSERT(!"binary_f: op"); return 0;
    }
}

static int64_t ipow(int64_t a, int64_t b)
{
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a;
    while (b) {
        if (b & 1) r *= base;
        base *= base;
        b >>= 1;
    }
    return (int64_t)r;
}

/* ipow with the exponent's bits b read as a uint64 when uns (never negative then). */
static int64_t ipow_u(int64_t a, int64_t b, bool uns)
{
    if (!uns || b >= 0) return ipow(a, b);
    uint64_t r = 1, base = (uint64_t)a, e = (uint64_t)b;
    while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    return (int64_t)r;
}

/* x ** e for an integer exponent (uns: e holds uint64 bits): |x| ** e with the sign of x for
 * odd e, so parity survives exponents beyond double's integer range (as kernels/binary.cl). */
static double pow_f_int(double x, int64_t e, bool uns)
{
    double m = pow(fabs(x), uns ? (double)(uint64_t)e : (double)e);
    return ((e & 1) && signbit(x)) ? -m : m;
}

/* Truncation toward zero into int64, saturating, NaN -> 0 (Cast's float -> int first step). */
static int64_t sat_i64(double v)
{
    if (isnan(v)) return 0;
    if (v >= 0x1p63) return INT64_MAX;
    if (v < -0x1p63) return INT64_MIN;
    return (int64_t)v;
}

/* BitShift-11/28 of a (element type t, sign/zero-extended in int64) by b: a shift count that is
 * negative or >= the width of t gives 0, or -1 for a right shift of a negative signed a;
 * a left shift discards the bits past the width (wraps on store); signed right shifts are
 * arithmetic. */
static int64_t bit_shift(int64_t a, int64_t b, enum ir_dtype t, bool left)
{
    const bool uns = ref_is_unsigned(t);
    const uint64_t w = 8 * ir_dtype_size(t);
    if (uns ? (uint64_t)b >= w : (b < 0 || (uint64_t)b >= w))
        return (!left && !uns && a < 0) ? -1 : 0;
    if (left) return (int64_t)((uint64_t)a << b);
    return uns ? (int64_t)((uint64_t)a >> b) : (a < 0 ? ~(~a >> b) : a >> b);
}

/* Integer binary op on int64 (uint64 bit patterns when uns). */
static int64_t binary_i(const struct ir_graph *g, const struct ir_node *n, int64_t a, int64_t b,
                        bool uns, bool fmod_attr)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (n->op) {
    case IR_OP_ADD:
    case IR_OP_SUM:
    case IR_OP_MEAN: return (int64_t)(ua + ub);
    case IR_OP_SUB: return (int64_t)(ua - ub);
    case IR_OP_MUL: return (int64_t)(ua * ub);
    case IR_OP_DIV:
        if (b == 0) ir_fatal_node(g, n, "integer division by zero");
        if (uns) return (int64_t)(ua / ub);
        if (a == INT64_MIN && b == -1) return INT64_MIN;
        return a / b;
    case IR_OP_MOD: {
        if (b == 0) ir_fatal_node(g, n, "integer modulo by zero");
        if (uns) return (int64_t)(ua % ub);
        if (b == -1) return 0;
        int64_t r = a % b;
        if (!fmod_attr && r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    case IR_OP_PRELU: return (!uns && a < 0) ? (int64_t)(ua * ub) : a;
    case IR_OP_MIN: return uns ? (ua < ub ? a : b) : (a < b ? a : b);
    case IR_OP_MAX: return uns ? (ua > ub ? a : b) : (a > b ? a : b);
    case IR_OP_EQUAL: return a == b;
    case IR_OP_GREATER: return uns ? ua > ub : a > b;
    case IR_OP_GREATER_OR_EQUAL: return uns ? ua >= ub : a >= b;
    case IR_OP_LESS: return uns ? ua < ub : a < b;
    case IR_OP_LESS_OR_EQUAL: return uns ? ua <= ub : a <= b;
    case IR_OP_AND: return (a != 0) & (b != 0);
    case IR_OP_OR: return (a != 0) | (b != 0);
    case IR_OP_XOR: return (a != 0) ^ (b != 0);
    case IR_OP_BITWISE_AND: return a & b;
    case IR_OP_BITWISE_OR: return a | b;
    case IR_OP_BITWISE_XOR: return a ^ b;
    default: IR_ASSERT(!"binary_i: op"); return 0;
    }
}

static bool eval_binary(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *a = inp(g, n, 0), *b = inp(g, n, 1);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    enum ir_dtype ta = a->dtype, tb = b->dtype, to = o->dtype;
    bool logic = n->op == IR_OP_AND || n->op == IR_OP_OR || n->op == IR_OP_XOR;
    if (logic && (ta != IR_BOOL || tb != IR_BOOL)) return false;
    if (n->op != IR_OP_POW && n->op != IR_OP_PRELU && ta != tb) return false;
    if (ta == IR_BOOL && !logic && n->op != IR_OP_EQUAL) return false;
    const bool bits = n->op == IR_OP_BITWISE_AND || n->op == IR_OP_BITWISE_OR ||
                      n->op == IR_OP_BITWISE_XOR || n->op == IR_OP_BIT_SHIFT;
    if (bits && !ref_is_int(ta)) return false;
    bool left = false;
    if (n->op == IR_OP_BIT_SHIFT) {
        const char *dir = ir_attr_string(n, "direction", "");
        left = strcmp(dir, "LEFT") == 0;
        if (!left && strcmp(dir, "RIGHT") != 0)
            ir_fatal_node(g, n, "BitShift: direction='%s' is not supported (LEFT, RIGHT)", dir);
    }
    bool fmod_attr = ir_attr_int(n, "fmod", 0) != 0;
    const struct ir_value *ins[2] = {a, b};
    struct ref_iter it;
    ref_iter_init(&it, o, ins, 2);
    int64_t cnt = ref_numel_v(o);
    void *out = ref_alloc_out(g, ov);
    const void *ap = a->data, *bp = b->data;
    bool flt = ref_is_float(ta);
    bool uns = ref_is_unsigned(ta);
    if (n->op == IR_OP_POW && (!flt || ta != tb)) {
        for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
            if (flt) {
                double x = ref_get_f(ap, ta, it.off[0]);
                double r = ref_is_float(tb) ? pow(x, ref_get_f(bp, tb, it.off[1]))
                                            : pow_f_int(x, ref_get_i(bp, tb, it.off[1]),
                                                        tb == IR_U64);
                ref_set_f(out, to, i, r);
            } else {
                int64_t x = ref_get_i(ap, ta, it.off[0]), r;
                if (ref_is_float(tb)) {
                    double e = ref_get_f(bp, tb, it.off[1]);
                    r = (e == floor(e) && fabs(e) < 0x1p63) ? ipow_u(x, (int64_t)e, false)
                                                           : sat_i64(pow((double)x, e));
                } else {
                    r = ipow_u(x, ref_get_i(bp, tb, it.off[1]), tb == IR_U64);
                }
                ref_set_i(out, to, i, r);
            }
        }
        return true;
    }
    for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
        if (flt) {
            double r = binary_f(n, ref_get_f(ap, ta, it.off[0]), ref_get_f(bp, tb, it.off[1]),
                                fmod_attr);
            ref_set_f(out, to, i, r);
        } else if (n->op == IR_OP_BIT_SHIFT) {
            ref_set_i(out, to, i, bit_shift(ref_get_i(ap, ta, it.off[0]),
                                            ref_get_i(bp, tb, it.off[1]), ta, left));
        } else {
            int64_t r = binary_i(g, n, ref_get_i(ap, ta, it.off[0]), ref_get_i(bp, tb, it.off[1]),
                                 uns, fmod_attr);
            ref_set_i(out, to, i, r);
        }
    }
    return true;
}

/* Min/Max/Sum/Mean over any number of inputs, accumulated in double / int64. */
static bool eval_variadic(struct ir_graph *g, const struct ir_node *n)
{
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    enum ir_dtype t = o->dtype;
    if (t == IR_BOOL) return false;
    bool flt = ref_is_float(t), uns = ref_is_unsigned(t);
    int64_t cnt = ref_numel_v(o);
    double *af = flt ? ref_tmp(sizeof(double) * (size_t)cnt) : NULL;
    int64_t *ai = flt ? NULL : ref_tmp(sizeof(int64_t) * (size_t)cnt);
    uint32_t nin = 0;
    for (uint32_t k = 0; k < n->ninputs; k++) {
        const struct ir_value *x = inp(g, n, k);
        if (!x) continue;
        if (x->dtype != t) {
            free(af);
            free(ai);
            return false;
        }
        const struct ir_value *ins[1] = {x};
        struct ref_iter it;
        ref_iter_init(&it, o, ins, 1);
        for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
            if (flt) {
                double v = ref_get_f(x->data, t, it.off[0]);
                af[i] = nin == 0 ? v : binary_f(n, af[i], v, false);
            } else {
                int64_t v = ref_get_i(x->data, t, it.off[0]);
                ai[i] = nin == 0 ? v : binary_i(g, n, ai[i], v, uns, false);
            }
        }
        nin++;
    }
    void *out = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++) {
        if (flt)
            ref_set_f(out, t, i, n->op == IR_OP_MEAN ? af[i] / nin : af[i]);
        else
            ref_set_i(out, t, i, n->op == IR_OP_MEAN ? ai[i] / (int64_t)nin : ai[i]);
    }
    free(af);
    free(ai);
    return true;
}

static bool eval_where(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *c = inp(g, n, 0), *x = inp(g, n, 1), *y = inp(g, n, 2);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    if (x->dtype != y->dtype || x->dtype != o->dtype) return false;
    const struct ir_value *ins[3] = {c, x, y};
    struct ref_iter it;
    ref_iter_init(&it, o, ins, 3);
    int64_t cnt = ref_numel_v(o);
    size_t es = ir_dtype_size(o->dtype);
    void *out = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < cnt; i++, ref_iter_next(&it)) {
        if (ref_get_i(c->data, c->dtype, it.off[0]))
            ref_copy_elem(out, i, x->data, it.off[1], es);
        else
            ref_copy_elem(out, i, y->data, it.off[2], es);
    }
    return true;
}

static bool eval_clip(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *lo = inp(g, n, 1), *hi = inp(g, n, 2);
    enum ir_dtype t = x->dtype;
    uint32_t ov = n->outputs[0];
    if (t == IR_BOOL) return false;
    if ((lo && ref_numel_v(lo) != 1) || (hi && ref_numel_v(hi) != 1))
        ir_fatal_node(g, n, "Clip min/max must be scalars");
    int64_t cnt = ref_numel_v(x);
    void *out = ref_alloc_out(g, ov);
    if (ref_is_float(t)) {
        double l = lo ? ref_get_f(lo->data, lo->dtype, 0) : -INFINITY;
        double h = hi ? ref_get_f(hi->data, hi->dtype, 0) : INFINITY;
        for (int64_t i = 0; i < cnt; i++) {
            double v = ref_get_f(x->data, t, i);
            if (v < l) v = l;
            if (v > h) v = h;
            ref_set_f(out, t, i, v);
        }
        return true;
    }
    bool uns = ref_is_unsigned(t);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t v = ref_get_i(x->data, t, i);
        if (lo) {
            int64_t l = ref_get_i(lo->data, lo->dtype, 0);
            if (uns ? (uint64_t)v < (uint64_t)l : v < l) v = l;
        }
        if (hi) {
            int64_t h = ref_get_i(hi->data, hi->dtype, 0);
            if (uns ? (uint64_t)v > (uint64_t)h : v > h) v = h;
        }
        ref_set_i(out, t, i, v);
    }
    return true;
}

/* BitCast-26: the output holds the input's bytes (same element size, checked by inference). */
static bool eval_bitcast(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    if (ir_dtype_size(x->dtype) != ir_dtype_size(g->values[ov].dtype)) return false;
    void *out = ref_alloc_out(g, ov);
    memcpy(out, x->data, g->values[ov].nbytes);
    return true;
}

static bool eval_cast(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    enum ir_dtype ts = x->dtype, td = g->values[ov].dtype;
    int64_t cnt = ref_numel_v(x);
    void *out = ref_alloc_out(g, ov);
    if (ts == td) {
        memcpy(out, x->data, g->values[ov].nbytes);
        return true;
    }
    for (int64_t i = 0; i < cnt; i++) {
        if (ref_is_float(ts) || ts == IR_U64)
            ref_set_f(out, td, i, ref_get_f(x->data, ts, i));
        else
            ref_set_i(out, td, i, ref_get_i(x->data, ts, i));
    }
    return true;
}

bool ref_eval_elementwise(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    switch (n->op) {
    case IR_OP_WHERE: return eval_where(g, n);
    case IR_OP_CLIP: return eval_clip(g, n);
    case IR_OP_CAST:
    case IR_OP_CAST_LIKE: return eval_cast(g, n);
    case IR_OP_BIT_CAST: return eval_bitcast(g, n);
    case IR_OP_MIN:
    case IR_OP_MAX:
    case IR_OP_SUM:
    case IR_OP_MEAN: return eval_variadic(g, n);
    default: break;
    }
    if (n->ninputs == 1) return eval_unary(g, n);
    if (n->ninputs == 2) return eval_binary(g, n);
    return false;
}
