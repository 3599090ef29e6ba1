/* fuse.h — shared helpers of the fusion passes (passes/fuse_*.c).
 *
 * Matching never mutates the graph: a matcher collects the nodes of a pattern, checks legality
 * with fuse_chain_ok(), and only then rewrites through fuse_replace(). Every pattern found is
 * reported with fuse_note() (applied, or rejected with the reason) for --stats / --stats-json.
 */
#ifndef ONNX2CL_FUSE_H
#define ONNX2CL_FUSE_H

#include "passes.h"

/* Records one pattern occurrence of pass `pass`: applied, or rejected for `reason`. */
void fuse_note(const char *pass, bool applied, const char *reason);

/* Node id producing value v if that node is live and of op `op` (IR_OP_UNKNOWN = any op);
 * IR_NONE otherwise (graph input, constant, other op). */
uint32_t fuse_producer(const struct ir_graph *g, uint32_t v, enum ir_op op);

/* Legality of fusing a chain: every value in `inner` (the intermediates the fused node will no
 * longer materialize) has exactly one use and is not a graph output. On failure *why names the
 * first offending value's problem (static string). */
bool fuse_chain_ok(const struct ir_graph *g, const uint32_t *inner, int ninner, const char **why);

/* If v is a scalar-like constant (every element equal), stores it in *out and returns true. */
bool fuse_const_scalar(const struct ir_graph *g, uint32_t v, double *out);

/* Replaces the nodes `old[0..nold)` by one new node of op `op` with `inputs`, computing the
 * existing value `output` (and `extra_outputs`), so consumers need no rewiring. The new node is
 * named after the last old node and keeps the old nodes' onnx indices in fused_from.
 * Returns the new node id. The caller runs ir_toposort() after the pass (the pipeline does). */
uint32_t fuse_replace(struct ir_graph *g, enum ir_op op, const uint32_t *old, int nold,
                      const uint32_t *inputs, uint32_t ninputs, const uint32_t *outputs,
                      uint32_t noutputs);

/* Fusion passes (one per file, passes/fuse_<name>.c). Each returns true if it changed the graph.
 * FUSION_PASSES lists them in pipeline order: F("name", function). A pass is added here by the
 * commit that adds its file. Planned order: layernorm, gelu, gnorm, attention, batched_linear,
 * epilogue, elementwise. */
/* One declaration per pass; one "F(...) \\" line each in FUSION_PASSES, in pipeline order. */
bool pass_fuse_gnorm(struct ir_graph *g); /* fuse_gnorm.c: GroupNorm forms (+SiLU) -> o2c.GroupNorm */

#define FUSION_PASSES(F)                                                                      \
    F("gnorm", pass_fuse_gnorm)                                                               \
    /* end of FUSION_PASSES */
#endif
