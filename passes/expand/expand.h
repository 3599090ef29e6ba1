/* expand.h — function ops: ONNX ops that onnx2cl runs as a subgraph of primitive ops.
 *
 * Many ONNX ops are defined by the spec as a function of other ops (Attention, RMSNormalization,
 * SoftmaxCrossEntropyLoss, Swish, ...). ops.def lists them with flag IR_F_FUNCTION and family
 * "none". pass_infer_fold (passes/infer_fold.c) meets them in its topological sweep with every
 * input shape known and calls expand_node(): the op's expand_<name>() builds the equivalent
 * subgraph through the ex_* builder below, each new node inferred (and constant-folded) as it is
 * made, so the expansion may read any shape or constant it needs. The composite node is then
 * erased and each of its outputs becomes Identity(expansion result) under its original name.
 * The fusion passes see only primitives (e.g. passes/fuse/attention.c re-fuses an expanded
 * Attention into the flash kernel).
 *
 * Rules for expand_<name>() (one file per op group: passes/expand/<group>.c):
 *   - Read the composite's attributes and inputs first (ex_in, ex_attr_*): pointers into
 *     g->nodes / g->values are invalidated by every ex_* call that makes a node or value.
 *   - Anything unsupported: ex_fatal(e, ...) naming the attribute and value (the message names the
 *     composite node and the opset).
 *   - Set every present output with ex_output(e, k, v); absent outputs may be skipped.
 */
#ifndef ONNX2CL_EXPAND_H
#define ONNX2CL_EXPAND_H

#include "passes/passes.h"

struct cf_map;

/* State of one expansion. */
struct ex_ctx {
    struct ir_graph *g;  /* the graph */
    uint32_t node;       /* id of the composite node being expanded */
    const char *base;    /* prefix for new node/value names ("<node name or op_type>") */
    uint32_t count;      /* nodes made so far (name suffixes) */
    uint32_t outs[16];   /* ex_output results per output slot (IR_NONE = not set) */
    const struct cf_map *scope; /* control flow inside a subgraph copy: template -> actual values
                                 * of the enclosing bodies (passes/expand/control.c), else NULL */
};

/* Expands node `node` (an IR_F_FUNCTION op with every input's dims known) in place; see above. */
void expand_node(struct ir_graph *g, uint32_t node);
/* The same for a node copied out of a subgraph template: `scope` maps the enclosing bodies'
 * template values to their copies (nested control flow resolves its bodies through it). */
void expand_node_scoped(struct ir_graph *g, uint32_t node, const struct cf_map *scope);

/* ---- reading the composite ---------------------------------------------------------------- */
/* Input k of the composite, IR_NONE if absent or beyond its inputs. */
uint32_t ex_in(const struct ex_ctx *e, uint32_t k);
/* Whether output k of the composite is present (consumed or a graph output). */
bool ex_has_output(const struct ex_ctx *e, uint32_t k);
/* The composite node (pointer valid until the next node/value is made). */
const struct ir_node *ex_self(const struct ex_ctx *e);
/* Value v (pointer valid until the next node/value is made). */
const struct ir_value *ex_v(const struct ex_ctx *e, uint32_t v);
int64_t ex_attr_int(const struct ex_ctx *e, const char *name, int64_t dflt);
float ex_attr_float(const struct ex_ctx *e, const char *name, float dflt);
const char *ex_attr_string(const struct ex_ctx *e, const char *name, const char *dflt);
/* Fatal error located at the composite node. */
void ex_fatal(const struct ex_ctx *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* ---- building ------------------------------------------------------------------------------ */
/* Makes node `op` over ins[nin] (IR_NONE = absent) with nout fresh outputs; not yet inferred,
 * so attributes can be set (ir_attr_set_*(e->g, id, ...)). Returns the node id. */
uint32_t ex_begin(struct ex_ctx *e, enum ir_op op, const uint32_t *ins, uint32_t nin, uint32_t nout);
/* Infers (and constant-folds) node id; returns its output 0. Outputs k > 0: ex_out. */
uint32_t ex_end(struct ex_ctx *e, uint32_t id);
/* Output k of a node made by ex_begin (valid before or after ex_end). */
uint32_t ex_out(const struct ex_ctx *e, uint32_t id, uint32_t k);
/* One-call forms for attribute-free ops. */
uint32_t ex_op1(struct ex_ctx *e, enum ir_op op, uint32_t a);
uint32_t ex_op2(struct ex_ctx *e, enum ir_op op, uint32_t a, uint32_t b);
uint32_t ex_op3(struct ex_ctx *e, enum ir_op op, uint32_t a, uint32_t b, uint32_t c);
/* A constant of dtype/rank/dims; data copied. */
uint32_t ex_const(struct ex_ctx *e, enum ir_dtype t, int rank, const int64_t *dims, const void *data);
/* A rank-0 constant of dtype t holding v (floats rounded to nearest even, ints truncated). */
uint32_t ex_scalar(struct ex_ctx *e, enum ir_dtype t, double v);
/* An int64 [n] constant. */
uint32_t ex_ints(struct ex_ctx *e, int n, const int64_t *v);
/* Common ops in the normalized IR form (axes etc. as constant inputs). */
uint32_t ex_cast(struct ex_ctx *e, uint32_t x, enum ir_dtype to);
uint32_t ex_reshape(struct ex_ctx *e, uint32_t x, int rank, const int64_t *dims);
uint32_t ex_transpose(struct ex_ctx *e, uint32_t x, int rank, const int64_t *perm);
uint32_t ex_unsqueeze(struct ex_ctx *e, uint32_t x, int n, const int64_t *axes);
uint32_t ex_softmax(struct ex_ctx *e, enum ir_op op, uint32_t x, int64_t axis); /* Softmax/LogSoftmax, opset-13 meaning */
uint32_t ex_reduce(struct ex_ctx *e, enum ir_op op, uint32_t x, int naxes, const int64_t *axes,
                   bool keepdims); /* naxes 0 = every axis */
uint32_t ex_slice(struct ex_ctx *e, uint32_t x, int64_t axis, int64_t start, int64_t end, int64_t step);
uint32_t ex_concat(struct ex_ctx *e, int n, const uint32_t *ins, int64_t axis);
uint32_t ex_gather(struct ex_ctx *e, uint32_t x, uint32_t idx, int64_t axis);
/* Output k of the composite := v (as Identity(v) under the output's original name). */
void ex_output(struct ex_ctx *e, uint32_t k, uint32_t v);

/* ---- the expansions (passes/expand/<group>.c) ------------------------------------------------ */
#define EXPAND_OPS(X) \
    X(ATTENTION, attention) \
    X(RMS_NORMALIZATION, rms_normalization) \
    X(SWISH, swish) \
    X(SHRINK, shrink) \
    X(LP_NORMALIZATION, lp_normalization) \
    X(MEAN_VARIANCE_NORMALIZATION, mean_variance_normalization) \
    X(LRN, lrn) \
    X(DEFORM_CONV, deform_conv) \
    X(IF, if) \
    X(LOOP, loop) \
    X(SCAN, scan) \
    X(ROTARY_EMBEDDING, rotary_embedding) \
    X(SWIGLU, swiglu) \
    X(CAUSAL_CONV_WITH_STATE, causal_conv_with_state) \
    X(LINEAR_ATTENTION, linear_attention) \
    X(RNN, rnn) \
    X(GRU, gru) \
    X(LSTM, lstm) \
    X(EINSUM, einsum) \
    X(NEGATIVE_LOG_LIKELIHOOD_LOSS, negative_log_likelihood_loss) \
    X(SOFTMAX_CROSS_ENTROPY_LOSS, softmax_cross_entropy_loss) \
    X(MATMUL_INTEGER, matmul_integer) \
    X(CONV_INTEGER, conv_integer) \
    X(QLINEAR_MATMUL, qlinear_matmul) \
    X(QLINEAR_CONV, qlinear_conv) \
    X(DFT, dft) \
    X(STFT, stft)
#define X(id, fn) void expand_##fn(struct ex_ctx *e);
EXPAND_OPS(X)
#undef X

#endif
