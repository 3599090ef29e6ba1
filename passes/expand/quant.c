/* expand_quant.c — integer and quantized-linear MatMul/Conv as primitive ops, following the ONNX
 * reference (onnx/reference/ops/op_{matmul,conv}_integer.py, op_qlinear_{matmul,conv}.py):
 *   MatMulInteger-10   Y(int32) = (A - a_zp) @ (B - b_zp)
 *   ConvInteger-10     Y(int32) = Conv(X - x_zp, W - w_zp)            (padding reads X - x_zp = 0)
 *   QLinearMatMul-10/21 Y = saturate(rint(C * (a_scale * b_scale / y_scale) + y_zp)),
 *                      C = (a - a_zp) @ (b - b_zp) in int32
 *   QLinearConv-10     Y = saturate(rint(C * (x_scale * w_scale / y_scale) + y_zp)),
 *                      C = Conv(x - x_zp, w - w_zp) + B in int32
 * The integer products run on the float32 MatMul/Conv (the device kernels are float32 only):
 * inputs minus zero points are cast to float32 (exact), and the sums are exact as long as every
 * partial sum stays at most 2^24 in magnitude. The bound is checked at compile time from the
 * shapes and the operand ranges (the dtype's range, or the actual range of a constant operand or
 * zero point): |a - a_zp| <= ba, |b - b_zp| <= bb, so a sum over K terms is exact when
 * K * ba * bb <= 2^24. Longer sums are split into K-chunks (MatMul: slices of A's last and B's
 * second-to-last axis; Conv: input-channel slices of every group) whose float results are cast
 * to int32 and added in int32, so the result is exact for any K. One Conv input channel whose
 * kernel window alone can exceed 2^24 is a fatal error.
 * Zero points / scales: per tensor (scalar or [1]); MatMulInteger a_zp per row ([M] or
 * [..., M, 1]) and b_zp per column ([N] or [..., 1, N]); QLinearMatMul a_scale/a_zp per row ([M])
 * and b_scale/b_zp per column ([N]); ConvInteger/QLinearConv w_zp/w_scale per output channel [M].
 * The requantization multiplier is computed in float32 (the scales cast to float32), rint is
 * round-half-to-even, saturation to the output type's range (uint8 / int8).
 * Assumes: inputs' dims known (expand.h). Guarantees: exact int32 results for the *Integer ops;
 * other input dtypes, zero-point/scale shapes and oversized kernel windows are fatal, named.
 */
#include "passes/expand/expand.h"

#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

#define EXACT_LIMIT 16777216.0 /* 2^24: float32 holds every integer of at most this magnitude */

/* Fatal unless value v is int8 or uint8. */
static void need_q8(struct ex_ctx *e, uint32_t v, const char *what)
{
    enum ir_dtype t = ex_v(e, v)->dtype;
    if (t != IR_I8 && t != IR_U8)
        ex_fatal(e, "%s of dtype %s is not supported (int8, uint8)", what, ir_dtype_name(t));
}

static int64_t numel_of(struct ex_ctx *e, uint32_t v)
{
    const struct ir_value *x = ex_v(e, v);
    int64_t n = 1;
    for (int k = 0; k < x->rank; k++) n *= x->dims[k];
    return n;
}

/* Range [lo, hi] of value v's elements: the actual range when v is a constant, its dtype's range
 * otherwise; [0, 0] when v is absent. */
static void value_range(struct ex_ctx *e, uint32_t v, double *lo, double *hi)
{
    *lo = *hi = 0.0;
    if (v == IR_NONE) return;
    ir_const_materialize(e->g, v); /* a lazy constant: its values are read below */
    const struct ir_value *x = ex_v(e, v);
    if (x->data) {
        int64_t n = numel_of(e, v);
        for (int64_t i = 0; i < n; i++) {
            double d = ref_get_f(x->data, x->dtype, i);
            if (i == 0 || d < *lo) *lo = d;
            if (i == 0 || d > *hi) *hi = d;
        }
        return;
    }
    if (x->dtype == IR_I8) *lo = -128.0, *hi = 127.0;
    else *lo = 0.0, *hi = 255.0;
}

/* Largest |x - zp| over the ranges of x and zp. */
static double diff_bound(struct ex_ctx *e, uint32_t x, uint32_t zp)
{
    double xl, xh, zl, zh;
    value_range(e, x, &xl, &xh);
    value_range(e, zp, &zl, &zh);
    return fmax(fabs(xh - zl), fabs(zh - xl));
}

/* float32(x) - float32(zp), zp first reshaped to `rank` dims `zd` when zd != NULL. */
static uint32_t centered(struct ex_ctx *e, uint32_t x, uint32_t zp, int rank, const int64_t *zd)
{
    uint32_t xf = ex_cast(e, x, IR_F32);
    if (zp == IR_NONE) return xf;
    uint32_t zf = ex_cast(e, zp, IR_F32);
    if (zd) zf = ex_reshape(e, zf, rank, zd);
    return ex_op2(e, IR_OP_SUB, xf, zf);
}

/* Reshape of a "per row" 1-D parameter p of a matrix operand with `rows` rows to [rows, 1];
 * p unchanged when absent, of one element, or of rank != 1. Fatal when a 1-D p has neither 1
 * nor `rows` elements. */
static uint32_t per_row(struct ex_ctx *e, uint32_t p, int64_t rows, const char *what)
{
    if (p == IR_NONE) return p;
    const struct ir_value *v = ex_v(e, p);
    if (v->rank != 1 || v->dims[0] == 1) return p;
    if (v->dims[0] != rows)
        ex_fatal(e, "%s has %lld elements; per-row quantization needs %lld (the rows of the matrix)",
                 what, (long long)v->dims[0], (long long)rows);
    int64_t d[2] = {rows, 1};
    return ex_reshape(e, p, 2, d);
}

/* Fatal unless the 1-D-or-scalar parameter p has 1 element or `cols` (rank <= 1). */
static void check_per_col(struct ex_ctx *e, uint32_t p, int64_t cols, const char *what)
{
    if (p == IR_NONE) return;
    const struct ir_value *v = ex_v(e, p);
    int64_t n = numel_of(e, p);
    if (v->rank <= 1 && (n == 1 || n == cols)) return;
    if (v->rank > 1) return; /* N-D: plain broadcasting (MatMulInteger [..., 1, N]) */
    ex_fatal(e, "%s has %lld elements; per-column quantization needs 1 or %lld", what,
             (long long)n, (long long)cols);
}

/* Exact int32 af @ bf for float32 operands holding integers, |af| <= ba, |bf| <= bb, split into
 * K-chunks whose sums are exact (see banner). */
static uint32_t exact_matmul(struct ex_ctx *e, uint32_t af, uint32_t bf, double ba, double bb)
{
    int ra = ex_v(e, af)->rank, rb = ex_v(e, bf)->rank;
    int64_t K = ex_v(e, af)->dims[ra - 1];
    double per = ba * bb;
    int64_t kc = per > 0 ? (int64_t)floor(EXACT_LIMIT / per) : K;
    if (kc >= K) return ex_cast(e, ex_op2(e, IR_OP_MATMUL, af, bf), IR_I32);
    uint32_t sum = IR_NONE;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
        int64_t k1 = k0 + kc < K ? k0 + kc : K;
        uint32_t as = ex_slice(e, af, ra - 1, k0, k1, 1);
        uint32_t bs = ex_slice(e, bf, rb >= 2 ? rb - 2 : 0, k0, k1, 1);
        uint32_t part = ex_cast(e, ex_op2(e, IR_OP_MATMUL, as, bs), IR_I32);
        sum = sum == IR_NONE ? part : ex_op2(e, IR_OP_ADD, sum, part);
    }
    return sum;
}

/* (A - a_zp) @ (B - b_zp) in int32 for the int8/uint8 A, B; a_zp per row, b_zp per column. */
static uint32_t int_matmul(struct ex_ctx *e, uint32_t a, uint32_t azp, uint32_t b, uint32_t bzp,
                           const char *aname, const char *bname)
{
    need_q8(e, a, aname);
    need_q8(e, b, bname);
    if (azp != IR_NONE) need_q8(e, azp, "the zero point of A");
    if (bzp != IR_NONE) need_q8(e, bzp, "the zero point of B");
    int ra = ex_v(e, a)->rank, rb = ex_v(e, b)->rank;
    if (ra < 1 || rb < 1) ex_fatal(e, "%s and %s must have rank >= 1", aname, bname);
    int64_t m = ra >= 2 ? ex_v(e, a)->dims[ra - 2] : 1, n = rb >= 2 ? ex_v(e, b)->dims[rb - 1] : 1;
    double ba = diff_bound(e, a, azp), bb = diff_bound(e, b, bzp);
    azp = per_row(e, azp, m, "the zero point of A");
    check_per_col(e, bzp, n, "the zero point of B");
    uint32_t af = centered(e, a, azp, 0, NULL), bf = centered(e, b, bzp, 0, NULL);
    return exact_matmul(e, af, bf, ba, bb);
}

void expand_matmul_integer(struct ex_ctx *e)
{
    uint32_t a = ex_in(e, 0), b = ex_in(e, 1), azp = ex_in(e, 2), bzp = ex_in(e, 3);
    ex_output(e, 0, int_matmul(e, a, azp, b, bzp, "A", "B"));
}

/* y = saturate(rint(c_i32 * mult + zp)) as zp's dtype (default `dflt`), mult a float32 value. */
static uint32_t requantize(struct ex_ctx *e, uint32_t c, uint32_t mult, uint32_t zp, enum ir_dtype dflt)
{
    enum ir_dtype t = zp != IR_NONE ? ex_v(e, zp)->dtype : dflt;
    uint32_t d = ex_op2(e, IR_OP_MUL, ex_cast(e, c, IR_F32), mult);
    if (zp != IR_NONE) d = ex_op2(e, IR_OP_ADD, d, ex_cast(e, zp, IR_F32));
    d = ex_op1(e, IR_OP_ROUND, d);
    double lo = t == IR_I8 ? -128.0 : 0.0, hi = t == IR_I8 ? 127.0 : 255.0;
    d = ex_op3(e, IR_OP_CLIP, d, ex_scalar(e, IR_F32, lo), ex_scalar(e, IR_F32, hi));
    return ex_cast(e, d, t);
}

/* Fatal unless scale s is a float tensor. */
static void need_scale(struct ex_ctx *e, uint32_t s, const char *what)
{
    if (s == IR_NONE) ex_fatal(e, "input %s is required", what);
    enum ir_dtype t = ex_v(e, s)->dtype;
    if (t != IR_F32 && t != IR_F16 && t != IR_F64)
        ex_fatal(e, "%s of dtype %s is not supported (float32, float16, float64)", what, ir_dtype_name(t));
}

/* Fatal unless p (if present) has exactly one element. */
static void need_scalar(struct ex_ctx *e, uint32_t p, const char *what)
{
    if (p != IR_NONE && numel_of(e, p) != 1)
        ex_fatal(e, "%s must be a scalar (per-tensor); it has %lld elements", what, (long long)numel_of(e, p));
}

void expand_qlinear_matmul(struct ex_ctx *e)
{
    uint32_t a = ex_in(e, 0), as = ex_in(e, 1), azp = ex_in(e, 2), b = ex_in(e, 3), bs = ex_in(e, 4);
    uint32_t bzp = ex_in(e, 5), ys = ex_in(e, 6), yzp = ex_in(e, 7);
    need_scale(e, as, "a_scale");
    need_scale(e, bs, "b_scale");
    need_scale(e, ys, "y_scale");
    need_scalar(e, ys, "y_scale");
    need_scalar(e, yzp, "y_zero_point");
    if (yzp != IR_NONE) need_q8(e, yzp, "y_zero_point");
    int ra = ex_v(e, a)->rank, rb = ex_v(e, b)->rank;
    int64_t m = ra >= 2 ? ex_v(e, a)->dims[ra - 2] : 1, n = rb >= 2 ? ex_v(e, b)->dims[rb - 1] : 1;
    if (ex_v(e, as)->rank > 1 || ex_v(e, bs)->rank > 1)
        ex_fatal(e, "a_scale / b_scale must be scalars or 1-D (per row of a / per column of b)");
    check_per_col(e, bs, n, "b_scale");
    uint32_t c = int_matmul(e, a, azp, b, bzp, "a", "b");
    uint32_t mult = ex_op2(e, IR_OP_MUL, per_row(e, ex_cast(e, as, IR_F32), m, "a_scale"),
                           ex_cast(e, bs, IR_F32));
    mult = ex_op2(e, IR_OP_DIV, mult, ex_cast(e, ys, IR_F32));
    ex_output(e, 0, requantize(e, c, mult, yzp, ex_v(e, a)->dtype));
}

/* Conv attributes of the composite, copied before any node is made. */
struct conv_attrs {
    const char *auto_pad;
    int64_t group;
    int64_t v[4][2 * IR_MAX_RANK]; /* dilations, kernel_shape, pads, strides */
    size_t n[4];                   /* their counts (0 = absent) */
};

static const char *const conv_ints[4] = {"dilations", "kernel_shape", "pads", "strides"};

static void read_conv_attrs(struct ex_ctx *e, struct conv_attrs *ca)
{
    ca->auto_pad = ex_attr_string(e, "auto_pad", NULL);
    ca->group = ex_attr_int(e, "group", 1);
    for (int k = 0; k < 4; k++) {
        size_t cnt = 0;
        const int64_t *p = ir_attr_ints(ex_self(e), conv_ints[k], &cnt);
        if (cnt > 2 * IR_MAX_RANK) ex_fatal(e, "attribute %s has %zu entries", conv_ints[k], cnt);
        ca->n[k] = p ? cnt : 0;
        if (p) memcpy(ca->v[k], p, cnt * sizeof *p);
    }
}

/* Float32 Conv(x, w) with the composite's attributes and group `group`. */
static uint32_t conv_f32(struct ex_ctx *e, const struct conv_attrs *ca, uint32_t x, uint32_t w, int64_t group)
{
    uint32_t in[2] = {x, w};
    uint32_t id = ex_begin(e, IR_OP_CONV, in, 2, 1);
    if (ca->auto_pad) ir_attr_set_string(e->g, id, "auto_pad", ca->auto_pad);
    ir_attr_set_int(e->g, id, "group", group);
    for (int k = 0; k < 4; k++)
        if (ca->n[k]) ir_attr_set_ints(e->g, id, conv_ints[k], ca->v[k], ca->n[k]);
    return ex_end(e, id);
}

/* Exact int32 Conv(x - x_zp, w - w_zp) (w_zp per output channel) with input-channel chunking. */
static uint32_t int_conv(struct ex_ctx *e, const struct conv_attrs *ca, uint32_t x, uint32_t xzp,
                         uint32_t w, uint32_t wzp)
{
    need_q8(e, x, "x");
    need_q8(e, w, "w");
    if (xzp != IR_NONE) need_q8(e, xzp, "x_zero_point");
    if (wzp != IR_NONE) need_q8(e, wzp, "w_zero_point");
    need_scalar(e, xzp, "x_zero_point");
    int rank = ex_v(e, x)->rank;
    if (rank < 3 || ex_v(e, w)->rank != rank)
        ex_fatal(e, "x (rank %d) and w (rank %d) must have the same rank >= 3", rank, ex_v(e, w)->rank);
    int64_t wd[IR_MAX_RANK];
    memcpy(wd, ex_v(e, w)->dims, sizeof wd);
    int64_t cin = ex_v(e, x)->dims[1], m = wd[0], cg = wd[1], ks = 1, group = ca->group;
    for (int k = 2; k < rank; k++) ks *= wd[k];
    if (group < 1 || cg * group != cin || m % group)
        ex_fatal(e, "group=%lld does not match x's %lld channels and w [%lld, %lld, ...]",
                 (long long)group, (long long)cin, (long long)m, (long long)cg);
    double bound = diff_bound(e, x, xzp) * diff_bound(e, w, wzp) * (double)ks;
    int64_t zd[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) zd[k] = 1;
    if (wzp != IR_NONE) {
        int64_t nz = numel_of(e, wzp);
        if (ex_v(e, wzp)->rank > 1 || (nz != 1 && nz != m))
            ex_fatal(e, "w_zero_point must be a scalar or 1-D [M=%lld] (per output channel)", (long long)m);
        zd[0] = nz;
    }
    uint32_t xf = centered(e, x, xzp, 0, NULL);
    uint32_t wf = centered(e, w, wzp, rank, wzp != IR_NONE ? zd : NULL);
    int64_t cc = bound > 0 ? (int64_t)floor(EXACT_LIMIT / bound) : cg;
    if (cc < 1)
        ex_fatal(e, "a kernel window of %lld elements per input channel can sum past 2^24 (the "
                 "float32 products would not be exact)", (long long)ks);
    if (cc >= cg) return ex_cast(e, conv_f32(e, ca, xf, wf, group), IR_I32);
    uint32_t sum = IR_NONE;
    for (int64_t c0 = 0; c0 < cg; c0 += cc) {
        int64_t c1 = c0 + cc < cg ? c0 + cc : cg;
        uint32_t xs;
        if (group == 1) {
            xs = ex_slice(e, xf, 1, c0, c1, 1);
        } else {
            int64_t cnt = group * (c1 - c0);
            int64_t *idx = ir_alloc(e->g, (size_t)cnt * sizeof *idx);
            for (int64_t gi = 0; gi < group; gi++)
                for (int64_t c = c0; c < c1; c++) idx[gi * (c1 - c0) + (c - c0)] = gi * cg + c;
            xs = ex_gather(e, xf, ex_ints(e, (int)cnt, idx), 1);
        }
        uint32_t ws = ex_slice(e, wf, 1, c0, c1, 1);
        uint32_t part = ex_cast(e, conv_f32(e, ca, xs, ws, group), IR_I32);
        sum = sum == IR_NONE ? part : ex_op2(e, IR_OP_ADD, sum, part);
    }
    return sum;
}

void expand_conv_integer(struct ex_ctx *e)
{
    struct conv_attrs ca;
    read_conv_attrs(e, &ca);
    uint32_t x = ex_in(e, 0), w = ex_in(e, 1), xzp = ex_in(e, 2), wzp = ex_in(e, 3);
    ex_output(e, 0, int_conv(e, &ca, x, xzp, w, wzp));
}

void expand_qlinear_conv(struct ex_ctx *e)
{
    struct conv_attrs ca;
    read_conv_attrs(e, &ca);
    uint32_t x = ex_in(e, 0), xs = ex_in(e, 1), xzp = ex_in(e, 2), w = ex_in(e, 3), ws = ex_in(e, 4);
    uint32_t wzp = ex_in(e, 5), ys = ex_in(e, 6), yzp = ex_in(e, 7), bias = ex_in(e, 8);
    need_scale(e, xs, "x_scale");
    need_scale(e, ws, "w_scale");
    need_scale(e, ys, "y_scale");
    need_scalar(e, xs, "x_scale");
    need_scalar(e, ys, "y_scale");
    need_scalar(e, yzp, "y_zero_point");
    if (yzp != IR_NONE) need_q8(e, yzp, "y_zero_point");
    int rank = ex_v(e, x)->rank;
    int64_t m = ex_v(e, w)->dims[0];
    int64_t nws = numel_of(e, ws);
    if (ex_v(e, ws)->rank > 1 || (nws != 1 && nws != m))
        ex_fatal(e, "w_scale must be a scalar or 1-D [M=%lld] (per output channel)", (long long)m);
    if (bias != IR_NONE) {
        if (ex_v(e, bias)->dtype != IR_I32 || ex_v(e, bias)->rank != 1 || ex_v(e, bias)->dims[0] != m)
            ex_fatal(e, "B must be int32 [M=%lld]", (long long)m);
    }
    uint32_t c = int_conv(e, &ca, x, xzp, w, wzp);
    int64_t cd[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) cd[k] = 1;
    cd[1] = m;
    if (bias != IR_NONE) c = ex_op2(e, IR_OP_ADD, c, ex_reshape(e, bias, rank, cd));
    uint32_t wsf = ex_cast(e, ws, IR_F32);
    if (nws != 1) wsf = ex_reshape(e, wsf, rank, cd);
    uint32_t mult = ex_op2(e, IR_OP_MUL, ex_cast(e, xs, IR_F32), wsf);
    mult = ex_op2(e, IR_OP_DIV, mult, ex_cast(e, ys, IR_F32));
    ex_output(e, 0, requantize(e, c, mult, yzp, ex_v(e, x)->dtype));
}
