/* fuse.h — shared helpers of the fusion passes (passes/fuse/).
 *
 * Matching never mutates the graph: a matcher collects the nodes of a pattern, checks legality
 * with fuse_chain_ok(), and only then rewrites through fuse_replace(). Every pattern found is
 * reported with fuse_note() (applied, or rejected with the reason) for --stats / --stats-json.
 */
#ifndef ONNX2CL_FUSE_H
#define ONNX2CL_FUSE_H

#include "passes/passes.h"

/* Records one pattern occurrence of pass `pass`: applied, or rejected for `reason`. */
void fuse_note(const char *pass, bool applied, const char *reason);

/* Node id producing value v if that node is live and of op `op` (IR_OP_UNKNOWN = any op);
 * IR_NONE otherwise (graph input, constant, other op). */
uint32_t fuse_producer(const struct ir_graph *g, uint32_t v, enum ir_op op);

/* Legality of fusing a chain: every value in `inner` (the intermediates the fused node will no
 * longer materialize) has exactly one use and is not a graph output. On failure *why names the
 * first offending value's problem (static string). */
bool fuse_chain_ok(const struct ir_graph *g, const uint32_t *inner, int ninner, const char **why);

/* The live nodes reading value v: fills out[0..max) and returns how many there are. */
int fuse_users(const struct ir_graph *g, uint32_t v, uint32_t *out, int max);
/* The only live node reading v, or IR_NONE (v absent, read more than once, or a graph output). */
uint32_t fuse_sole_user(const struct ir_graph *g, uint32_t v);
/* The other input of two-input node n (the one that is not v); IR_NONE if both or neither are v. */
uint32_t fuse_other_input(const struct ir_node *n, uint32_t v);
/* Same rank and dims. */
bool fuse_same_shape(const struct ir_value *a, const struct ir_value *b);

/* If v is a scalar-like constant (every element equal), stores it in *out and returns true. */
bool fuse_const_scalar(const struct ir_graph *g, uint32_t v, double *out);

/* First reduced axis a if ReduceMean node r reduces exactly the trailing axes a..rank-1 (axes a
 * constant input) with keepdims=1; -1 otherwise. */
int fuse_trailing_axes(const struct ir_graph *g, const struct ir_node *r);
/* The first normalized axis of a row-norm pattern (layernorm, rmsnorm) whose statistic is
 * ReduceMean node r over x: fuse_trailing_axes(r) when x is float32; else -1, the rejection
 * noted for `pass`. */
int fuse_norm_axis(const struct ir_graph *g, const char *pass, const struct ir_node *r, uint32_t x);
/* Value p is float32 and broadcasts as a trailing suffix of x's dims[axis:] (leading 1s
 * allowed): the scale/bias shapes the norm_rows kernels take. */
bool fuse_suffix_param(const struct ir_graph *g, uint32_t p, const struct ir_value *x, int axis);
/* The scale/bias operand p when `node` is op(v, p) or op(p, v) (Mul for a scale, Add for a bias)
 * with p a fuse_suffix_param of x's dims[axis:] and an output of x's shape; else IR_NONE
 * (node IR_NONE included). */
uint32_t fuse_norm_param(const struct ir_graph *g, uint32_t node, enum ir_op op, uint32_t v,
                         const struct ir_value *x, int axis);
/* The two halves of z [.., 2F] along its last axis (h[0] first, h[1] second) as cut by one of
 * z's readers: a Split into two outputs of F, or two Slices (constant parameters, step 1) taking
 * [0, F) and [F, 2F); the chunk nodes go to nodes[0..*nn). exclusive: those must be z's only
 * readers and z no graph output (z is then an intermediate of the fusion). */
bool fuse_halves(const struct ir_graph *g, uint32_t z, int64_t F, bool exclusive, uint32_t h[2],
                 uint32_t nodes[2], int *nn);
/* A new float32 constant named `name` of dims[0..rank) with every element `fill`. */
uint32_t fuse_const_fill(struct ir_graph *g, const char *name, int rank, const int64_t *dims,
                         float fill);

/* Replaces the nodes `old[0..nold)` by one new node of op `op` with `inputs`, computing the
 * existing value `output` (and `extra_outputs`), so consumers need no rewiring. The new node is
 * named after the last old node and keeps the old nodes' onnx indices in fused_from.
 * Returns the new node id. The caller runs ir_toposort() after the pass (the pipeline does). */
uint32_t fuse_replace(struct ir_graph *g, enum ir_op op, const uint32_t *old, int nold,
                      const uint32_t *inputs, uint32_t ninputs, const uint32_t *outputs,
                      uint32_t noutputs);

/* Fusion passes (one per file, passes/fuse/<name>.c). Each returns true if it changed the graph.
 * FUSION_PASSES lists them in pipeline order: F("name", function). A pass is added here by the
 * commit that adds its file. Planned order: layernorm, rmsnorm, gelu, gnorm, attention, batched_linear,
 * epilogue, geglu, elementwise. */
/* One declaration per pass; one "F(...) \\" line each in FUSION_PASSES, in pipeline order. */
bool pass_fuse_layernorm(struct ir_graph *g); /* fuse_layernorm.c: decomposed LN -> LayerNormalization */
bool pass_fuse_rmsnorm(struct ir_graph *g); /* rmsnorm.c: decomposed RMSNorm -> o2c.RMSNorm */
bool pass_fuse_rope(struct ir_graph *g); /* rope.c: RoPE chunk/Neg/Concat/Mul/Add -> o2c.Rope */
bool pass_fuse_gelu(struct ir_graph *g); /* fuse_gelu.c: erf/tanh GELU decompositions -> Gelu */
bool pass_fuse_gnorm(struct ir_graph *g); /* fuse_gnorm.c: GroupNorm forms (+SiLU) -> o2c.GroupNorm */
bool pass_fuse_conv_epilogue(struct ir_graph *g); /* Conv + bias/act/residual/div -> o2c.Conv */
bool pass_fuse_sibling_conv(struct ir_graph *g); /* shared-input convs -> one o2c.Conv, n outputs */
bool pass_fuse_attention(struct ir_graph *g); /* fuse_attention.c: QKᵀ→scale→[mask]→Softmax→V -> o2c.Attention */
/* batched_linear + gemm_epilogue (passes/fuse/batched_linear.c, fuse_gemm_epilogue.c) */
bool pass_fuse_batched_linear(struct ir_graph *g); /* shared-input linears -> one o2c.Gemm */
bool pass_fuse_gemm_epilogue(struct ir_graph *g);  /* linear + bias/act/residual -> o2c.Gemm */
bool pass_fuse_geglu(struct ir_graph *g);         /* o2c.Gemm + chunk + Gelu + Mul -> o2c.Gemm */
bool pass_fuse_elementwise(struct ir_graph *g);    /* elementwise chains -> o2c.Elementwise */
/* A MatMul(x, W) or Gemm(x, B, C){transA=0} with a constant 2-D float32 weight, as the linear
 * y = x * Wkn + bias that an o2c.Gemm computes. */
struct fuse_linear {
    uint32_t node;  /* the MatMul/Gemm node */
    uint32_t x;     /* input [.., K] */
    uint32_t w;     /* constant weight value as in the file ([K,N], or [N,K] when trans_w) */
    uint32_t y;     /* output value [.., N] */
    uint32_t c;     /* Gemm C (constant, N or 1 elements) or IR_NONE */
    bool trans_w;   /* Gemm transB=1 */
    float alpha;    /* Gemm alpha (1 for MatMul), folded into the weight */
    float beta;     /* Gemm beta, folded into the bias */
    int64_t K, N;   /* inner and output width */
};
/* Fills *l if node is such a linear; else false with *why set (static string). An empty inner
 * dim (K = 0) is no linear: lower_matmul.c writes its beta * C / zeros. */
bool fuse_linear_match(const struct ir_graph *g, uint32_t node, struct fuse_linear *l,
                       const char **why);
/* Writes alpha * W as [K, N] into dst (row length ld) at columns col0 .. col0+N-1. */
void fuse_linear_write_w(const struct ir_graph *g, const struct fuse_linear *l, float *dst,
                         int64_t ld, int64_t col0);
/* Adds beta * C (broadcast to [N]) into dst[0..N); false (nothing added) without C. */
bool fuse_linear_add_bias(const struct ir_graph *g, const struct fuse_linear *l, float *dst);

#define FUSION_PASSES(F)                                                                      \
    F("layernorm", pass_fuse_layernorm)                                                       \
    F("rmsnorm", pass_fuse_rmsnorm)                                                           \
    F("rope", pass_fuse_rope)                                                                 \
    F("gelu", pass_fuse_gelu)                                                                 \
    F("gnorm", pass_fuse_gnorm)                                                               \
    F("attention", pass_fuse_attention)                                                       \
    F("batched_linear", pass_fuse_batched_linear)                                             \
    F("gemm_epilogue", pass_fuse_gemm_epilogue)                                               \
    F("geglu", pass_fuse_geglu)                                                               \
    F("conv_epilogue", pass_fuse_conv_epilogue)                                               \
    F("sibling_conv", pass_fuse_sibling_conv)                                                 \
    F("elementwise", pass_fuse_elementwise)                                                   \
    /* end of FUSION_PASSES */
#endif
