/* expand_loss.c — the ONNX loss function ops as primitive ops (their spec function bodies):
 *   NegativeLogLikelihoodLoss-12/13/22 (input x[N,C,d1..dk], target[N,d1..dk] int32/int64,
 *   optional weight[C]; attributes reduction = none | sum | mean (default mean), ignore_index):
 *     m      = (target == ignore_index)                     (all false without ignore_index)
 *     t      = Where(m, 0, target)        ignored targets may be out of [0, C): never gathered
 *     l      = Where(m, 0, -GatherElements(x, Unsqueeze(t, 1), axis 1)), squeezed to [N,d1..dk]
 *     w      = Where(m, 0, Gather(weight, t))     with weight
 *            = Where(m, 0, 1)                     without weight, with ignore_index
 *     loss   = l * w                              (l without either)
 *     none: loss;  sum: ReduceSum(loss);
 *     mean: ReduceSum(loss) / ReduceSum(w) when w exists (0/0 = NaN when every target is
 *           ignored, as the spec function and the reference give), ReduceMean(loss) otherwise.
 *   SoftmaxCrossEntropyLoss-12/13 (same inputs and attributes, outputs loss and optional log_prob):
 *     log_prob = LogSoftmax(x, axis 1);  loss = NegativeLogLikelihoodLoss(log_prob, target, weight).
 * float16 is computed in float32 (LogSoftmax and ReduceSum have no float16 kernels) and the
 * results cast back to float16.
 * Assumes: inputs' dims known (expand.h); x of rank >= 2 and target of x's dims less axis 1.
 * Guarantees: the spec's result up to float rounding; a bad reduction value, dtype or shape is a
 * fatal error naming it. A target outside [0, C) that is not ignore_index is undefined by the spec
 * (the gather kernels decide what is read).
 */
#include "passes/expand/expand.h"

#include <string.h>

#include "ref/ref_util.h"

/* Checks the composite's inputs x[N,C,d1..dk] (float16/32/64), target[N,d1..dk] (int32/int64)
 * and optional weight[C] (x's dtype); fatal, naming what is wrong, otherwise. Returns the dtype
 * the loss is computed in: x's dtype, float32 for float16. */
static enum ir_dtype check_inputs(struct ex_ctx *e)
{
    const struct ir_value *xv = ex_v(e, ex_in(e, 0));
    enum ir_dtype t = xv->dtype;
    int rank = xv->rank;
    if (!ref_is_float(t))
        ex_fatal(e, "input of dtype %s is not supported (float32, float16, bfloat16, float64)", ir_dtype_name(t));
    if (rank < 2) ex_fatal(e, "input must have rank >= 2 ([N, C, d1, ...]), not %d", rank);
    const struct ir_value *tv = ex_v(e, ex_in(e, 1));
    if (tv->dtype != IR_I64 && tv->dtype != IR_I32)
        ex_fatal(e, "target of dtype %s is not supported (int32, int64)", ir_dtype_name(tv->dtype));
    bool shape_ok = tv->rank == rank - 1 && tv->dims[0] == xv->dims[0];
    for (int k = 2; shape_ok && k < rank; k++) shape_ok = tv->dims[k - 1] == xv->dims[k];
    if (!shape_ok) ex_fatal(e, "target must have the input's dims without axis 1 ([N, d1, ...])");
    if (ex_in(e, 2) != IR_NONE) {
        const struct ir_value *wv = ex_v(e, ex_in(e, 2));
        if (wv->rank != 1 || wv->dims[0] != xv->dims[1] || wv->dtype != t)
            ex_fatal(e, "weight must be a [C=%lld] tensor of the input's dtype", (long long)xv->dims[1]);
    }
    return t == IR_F16 ? IR_F32 : t;
}

/* Loss of log-probabilities lp[N,C,d..] of dtype t (float32/float64) against the composite's
 * target and weight (inputs 1 and 2, checked by check_inputs) under its attributes
 * (NegativeLogLikelihoodLoss-13 semantics, see the banner); returns the loss value, dtype t. */
static uint32_t nll_loss(struct ex_ctx *e, uint32_t lp, enum ir_dtype t)
{
    uint32_t target = ex_in(e, 1), weight = ex_in(e, 2);
    const char *red = ex_attr_string(e, "reduction", "mean");
    int reduction = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : !strcmp(red, "mean") ? 2 : -1;
    if (reduction < 0) ex_fatal(e, "reduction='%s' is not supported (none, sum, mean)", red);
    bool has_ii = ir_attr_find(ex_self(e), "ignore_index") != NULL;
    int64_t ii = ex_attr_int(e, "ignore_index", 0);
    const struct ir_value *tv = ex_v(e, target);
    int trank = tv->rank;
    int64_t tdims[IR_MAX_RANK];
    for (int k = 0; k < trank; k++) tdims[k] = tv->dims[k];

    uint32_t tgt = ex_cast(e, target, IR_I64);
    uint32_t zero = ex_scalar(e, t, 0.0);
    uint32_t mask = IR_NONE, safe = tgt;
    if (has_ii) {
        mask = ex_op2(e, IR_OP_EQUAL, tgt, ex_scalar(e, IR_I64, (double)ii));
        safe = ex_op3(e, IR_OP_WHERE, mask, ex_scalar(e, IR_I64, 0.0), tgt);
    }
    int64_t one_axis = 1;
    uint32_t gin[2] = {lp, ex_unsqueeze(e, safe, 1, &one_axis)};
    uint32_t picked = ex_begin(e, IR_OP_GATHER_ELEMENTS, gin, 2, 1);
    ir_attr_set_int(e->g, picked, "axis", 1);
    uint32_t loss = ex_op1(e, IR_OP_NEG, ex_reshape(e, ex_end(e, picked), trank, tdims));
    uint32_t w = IR_NONE;
    if (weight != IR_NONE) w = ex_gather(e, ex_cast(e, weight, t), safe, 0);
    if (has_ii) {
        loss = ex_op3(e, IR_OP_WHERE, mask, zero, loss);
        w = ex_op3(e, IR_OP_WHERE, mask, zero, w != IR_NONE ? w : ex_scalar(e, t, 1.0));
    }
    if (w != IR_NONE) loss = ex_op2(e, IR_OP_MUL, loss, w);
    if (reduction == 0) return loss;
    if (reduction == 1) return ex_reduce(e, IR_OP_REDUCE_SUM, loss, 0, NULL, false);
    if (w == IR_NONE) return ex_reduce(e, IR_OP_REDUCE_MEAN, loss, 0, NULL, false);
    return ex_op2(e, IR_OP_DIV, ex_reduce(e, IR_OP_REDUCE_SUM, loss, 0, NULL, false),
                  ex_reduce(e, IR_OP_REDUCE_SUM, w, 0, NULL, false));
}

void expand_negative_log_likelihood_loss(struct ex_ctx *e)
{
    enum ir_dtype ct = check_inputs(e);
    uint32_t x = ex_in(e, 0);
    enum ir_dtype t = ex_v(e, x)->dtype;
    ex_output(e, 0, ex_cast(e, nll_loss(e, ex_cast(e, x, ct), ct), t));
}

void expand_softmax_cross_entropy_loss(struct ex_ctx *e)
{
    enum ir_dtype ct = check_inputs(e);
    uint32_t x = ex_in(e, 0);
    enum ir_dtype t = ex_v(e, x)->dtype;
    uint32_t lp = ex_softmax(e, IR_OP_LOG_SOFTMAX, ex_cast(e, x, ct), 1);
    ex_output(e, 0, ex_cast(e, nll_loss(e, lp, ct), t));
    if (ex_has_output(e, 1)) ex_output(e, 1, ex_cast(e, lp, t));
}
