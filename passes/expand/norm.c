/* expand_norm.c — small ONNX function ops as primitive ops (their spec function bodies):
 *   RMSNormalization-23   Y = Cast(X_s / sqrt(ReduceMean(X_s^2, axes >= axis) + eps), T) * scale,
 *                         X_s = X in stash_type (1 = float32; 0/absent = X's type)
 *   Swish-24              Y = X * Sigmoid(alpha * X)
 *   Shrink-9              Y = X < -lambd ? X + bias : X > lambd ? X - bias : 0
 *   LpNormalization-1/22  Y = X / ReduceLp(X, axis, keepdims), 0 where the norm is 0 (p = 1 or 2)
 *   MeanVarianceNormalization-9/13
 *                         Y = (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), over `axes` (default 0,2,3),
 *                         the variance computed as E[d^2], d = (X - x0) - E[X - x0], x0 the
 *                         set's first element (no cancellation; a constant set gives 0);
 *                         float16 in float32 (1e-9 would round to 0)
 *   LRN-1/13              Y = X / (bias + alpha/size * sum_{c' in window(c)} X[c']^2)^beta; the
 *                         window sum is an AveragePool (count_include_pad) over the channel axis
 *                         of X^2 viewed as [N,1,C,prod(spatial)], times size.
 * Assumes: inputs' dims known (expand.h). Guarantees: the spec's result up to float rounding;
 * unsupported attribute values are fatal, named.
 */
#include "passes/expand/expand.h"

#include <math.h>

#include "ref/ref_util.h"

static void need_float(struct ex_ctx *e, uint32_t x, const char *what)
{
    enum ir_dtype t = ex_v(e, x)->dtype;
    if (!ref_is_float(t))
        ex_fatal(e, "%s of dtype %s is not supported (float32, float16, bfloat16, float64)", what, ir_dtype_name(t));
}

/* Axis attribute value a normalized into [0, rank). */
static int64_t norm_axis(struct ex_ctx *e, int64_t a, int rank)
{
    if (a < -rank || a >= rank) ex_fatal(e, "axis=%lld is out of range for rank %d", (long long)a, rank);
    return a < 0 ? a + rank : a;
}

void expand_rms_normalization(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0), scale = ex_in(e, 1);
    need_float(e, x, "X");
    int rank = ex_v(e, x)->rank;
    enum ir_dtype t = ex_v(e, x)->dtype;
    int64_t axis = norm_axis(e, ex_attr_int(e, "axis", -1), rank);
    float eps = ex_attr_float(e, "epsilon", 1e-5f);
    int64_t stash = ex_attr_int(e, "stash_type", 1);
    enum ir_dtype st = stash == 0 ? t : (enum ir_dtype)stash;
    if (st != IR_F32 && st != IR_F64 && st != IR_F16)
        ex_fatal(e, "stash_type=%lld is not supported (1 float, 10 float16, 11 double)", (long long)stash);
    int64_t axes[IR_MAX_RANK];
    int n = 0;
    for (int64_t a = axis; a < rank; a++) axes[n++] = a;
    uint32_t xs = ex_cast(e, x, st);
    uint32_t ms = ex_reduce(e, IR_OP_REDUCE_MEAN, ex_op2(e, IR_OP_MUL, xs, xs), n, axes, true);
    uint32_t rms = ex_op1(e, IR_OP_SQRT, ex_op2(e, IR_OP_ADD, ms, ex_scalar(e, st, eps)));
    uint32_t normed = ex_op2(e, IR_OP_MUL, xs, ex_op1(e, IR_OP_RECIPROCAL, rms));
    ex_output(e, 0, ex_op2(e, IR_OP_MUL, ex_cast(e, normed, t), scale));
}

void expand_swish(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0);
    need_float(e, x, "X");
    double alpha = ex_attr_float(e, "alpha", 1.0f);
    enum ir_dtype t = ex_v(e, x)->dtype;
    uint32_t ax = alpha == 1.0 ? x : ex_op2(e, IR_OP_MUL, x, ex_scalar(e, t, alpha));
    ex_output(e, 0, ex_op2(e, IR_OP_MUL, x, ex_op1(e, IR_OP_SIGMOID, ax)));
}

void expand_shrink(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0);
    enum ir_dtype t = ex_v(e, x)->dtype;
    if (!ref_is_float(t) && !ref_is_int(t)) ex_fatal(e, "X of dtype %s is not supported", ir_dtype_name(t));
    double lambd = ex_attr_float(e, "lambd", 0.5f), bias = ex_attr_float(e, "bias", 0.0f);
    uint32_t lo = ex_op2(e, IR_OP_LESS, x, ex_scalar(e, t, -lambd));
    uint32_t hi = ex_op2(e, IR_OP_GREATER, x, ex_scalar(e, t, lambd));
    uint32_t b = ex_scalar(e, t, bias);
    uint32_t y = ex_op3(e, IR_OP_WHERE, hi, ex_op2(e, IR_OP_SUB, x, b), ex_scalar(e, t, 0.0));
    ex_output(e, 0, ex_op3(e, IR_OP_WHERE, lo, ex_op2(e, IR_OP_ADD, x, b), y));
}

void expand_lp_normalization(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0);
    need_float(e, x, "input");
    int64_t axis = norm_axis(e, ex_attr_int(e, "axis", -1), ex_v(e, x)->rank);
    int64_t p = ex_attr_int(e, "p", 2);
    if (p != 1 && p != 2) ex_fatal(e, "p=%lld is not supported (1 or 2)", (long long)p);
    uint32_t norm = ex_reduce(e, p == 1 ? IR_OP_REDUCE_L1 : IR_OP_REDUCE_L2, x, 1, &axis, true);
    enum ir_dtype t = ex_v(e, x)->dtype;
    uint32_t zero = ex_scalar(e, t, 0.0);
    uint32_t q = ex_op2(e, IR_OP_DIV, x, norm);
    ex_output(e, 0, ex_op3(e, IR_OP_WHERE, ex_op2(e, IR_OP_EQUAL, norm, zero), zero, q));
}

void expand_mean_variance_normalization(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0);
    need_float(e, x, "X");
    int rank = ex_v(e, x)->rank;
    enum ir_dtype t = ex_v(e, x)->dtype;
    size_t na = 0;
    const int64_t *a = ir_attr_ints(ex_self(e), "axes", &na);
    int64_t axes[IR_MAX_RANK] = {0, 2, 3};
    int n = 3;
    if (a) {
        if (na > IR_MAX_RANK) ex_fatal(e, "axes has %zu entries", na);
        n = (int)na;
        for (int i = 0; i < n; i++) axes[i] = a[i];
    }
    for (int i = 0; i < n; i++) axes[i] = norm_axis(e, axes[i], rank);
    /* float16 runs in float32: 1e-9 is 0 in float16, so a constant set would give 0/0 */
    const bool half = t == IR_F16;
    if (half) {
        x = ex_cast(e, x, IR_F32);
        t = IR_F32;
    }
    /* E[X^2] - E[X]^2 as the spec writes it cancels (NaN for a constant set, 1e7 off at mean
     * 250 / std 0.01): the same variance from shifted deviations instead (NUMERICS RULE of
     * kernels/gnorm.cl): x0 = each set's first element, d = (X - x0) - E[X - x0] */
    uint32_t x0 = x;
    for (int i = 0; i < n; i++) x0 = ex_slice(e, x0, axes[i], 0, 1, 1);
    uint32_t xs = ex_op2(e, IR_OP_SUB, x, x0);
    uint32_t d = ex_op2(e, IR_OP_SUB, xs, ex_reduce(e, IR_OP_REDUCE_MEAN, xs, n, axes, true));
    uint32_t var = ex_reduce(e, IR_OP_REDUCE_MEAN, ex_op2(e, IR_OP_MUL, d, d), n, axes, true);
    uint32_t sd = ex_op2(e, IR_OP_ADD, ex_op1(e, IR_OP_SQRT, var), ex_scalar(e, t, 1e-9));
    uint32_t y = ex_op2(e, IR_OP_DIV, d, sd);
    ex_output(e, 0, half ? ex_cast(e, y, IR_F16) : y);
}

void expand_lrn(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0);
    need_float(e, x, "X");
    const struct ir_value *xv = ex_v(e, x);
    int rank = xv->rank;
    enum ir_dtype t = xv->dtype;
    if (rank < 3) ex_fatal(e, "X must have rank >= 3 (N, C, spatial...), not %d", rank);
    int64_t size = ex_attr_int(e, "size", 0);
    if (size <= 0) ex_fatal(e, "size=%lld must be a positive integer", (long long)size);
    double alpha = ex_attr_float(e, "alpha", 1e-4f), beta = ex_attr_float(e, "beta", 0.75f);
    double bias = ex_attr_float(e, "bias", 1.0f);
    int64_t n = xv->dims[0], c = xv->dims[1], sp = 1;
    for (int i = 2; i < rank; i++) sp *= xv->dims[i];
    int64_t xdims[IR_MAX_RANK];
    for (int i = 0; i < rank; i++) xdims[i] = xv->dims[i];
    int64_t view[4] = {n, 1, c, sp};
    uint32_t sq = ex_reshape(e, ex_op2(e, IR_OP_MUL, x, x), 4, view);
    uint32_t pool = ex_begin(e, IR_OP_AVERAGE_POOL, &sq, 1, 1);
    int64_t ks[2] = {size, 1}, pads[4] = {(size - 1) / 2, 0, size - 1 - (size - 1) / 2, 0};
    ir_attr_set_ints(e->g, pool, "kernel_shape", ks, 2);
    ir_attr_set_ints(e->g, pool, "pads", pads, 4);
    ir_attr_set_int(e->g, pool, "count_include_pad", 1);
    uint32_t avg = ex_reshape(e, ex_end(e, pool), rank, xdims); /* window sum / size */
    uint32_t base = ex_op2(e, IR_OP_ADD, ex_scalar(e, t, bias), ex_op2(e, IR_OP_MUL, avg, ex_scalar(e, t, alpha)));
    ex_output(e, 0, ex_op2(e, IR_OP_DIV, x, ex_op2(e, IR_OP_POW, base, ex_scalar(e, t, beta))));
}
