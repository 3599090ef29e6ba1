/* passes.h — the optimization pipeline over struct ir_graph.
 *
 * Each pass is `bool pass_<name>(struct ir_graph *g)`, returning "changed", one pass per file.
 * The ordered table lives in passes/pipeline.c; ir_verify() runs after every pass in tests and
 * debug builds (--verify), and --dump-after=NAME prints the IR after pass NAME.
 */
#ifndef ONNX2CL_PASSES_H
#define ONNX2CL_PASSES_H

#include "../ir/ir.h"
#include <stdio.h>

/* A user binding of a symbolic dim: --shape NAME=d0,d1,... binds every dim of input NAME. */
struct pass_shape_binding {
    const char *input;           /* graph input name */
    int rank;                    /* number of dims given */
    int64_t dims[IR_MAX_RANK];   /* dims */
};

/* A graph input fixed at compile time: --bind NAME=FILE.npy. The input becomes a constant with
 * this value (dtype must equal the input's, rank and static dims must agree; symbolic dims take
 * the file's), so everything computed from it folds, and it is no longer an input of the
 * generated code. */
struct pass_value_binding {
    const char *input;           /* graph input name */
    const char *file;            /* where the value came from (messages) */
    enum ir_dtype dtype;         /* element type of data */
    int rank;                    /* number of dims */
    int64_t dims[IR_MAX_RANK];   /* dims */
    const void *data;            /* little-endian, C order; copied into the graph */
    size_t nbytes;               /* bytes of data */
};

/* Options of the pipeline (from the command line). */
struct pass_options {
    const struct pass_shape_binding *shapes; /* --shape bindings */
    int nshapes;
    const struct pass_value_binding *binds; /* --bind values */
    int nbinds;
    const char *expose;      /* --expose NAME[,NAME...] | all: values kept as extra graph outputs */
    const char *dump_after;  /* --dump-after=PASS (NULL = none, "all" = every pass) */
    bool verify;             /* run ir_verify after each pass */
    bool stats;              /* --stats: node counts per pass to stderr */
    const char *no_fuse;     /* --no-fuse=NAME[,NAME] ("all" disables every fusion) */
};

/* Runs the whole pipeline; user errors are fatal (ir_fatal*). */
void passes_run(struct ir_graph *g, const struct pass_options *opt);

/* Shape inference of one node: sets dtype, rank and dims of every output from its inputs
 * (reading constant inputs where the op needs their values, e.g. Reshape's shape).
 * Requires every input to have known dims. Fatal (ir_fatal_node) on inconsistent input:
 * incompatible broadcast, bad axis, Reshape to an impossible size, ...  Spec: ONNX operators at
 * the model's opset, in the normalized IR form of ir/ir.h. */
void infer_node(struct ir_graph *g, uint32_t node);
/* infer_node, then constant folding when every input is constant (the node is erased, its
 * outputs become constants). Returns true if it folded. */
bool infer_fold_node(struct ir_graph *g, uint32_t node);

/* Fusion statistics (passes/fuse/fuse.c): text for --stats, a JSON array for --stats-json. */
void fuse_stats_print(FILE *f);
void fuse_stats_json(FILE *f);

/* Individual passes (in pipeline order). */
bool pass_specialize_shapes(struct ir_graph *g, const struct pass_options *opt);
/* --expose NAME[,NAME...] | all (passes/expose.c): the named values become extra graph outputs,
 * after the model's own, in the order given; usage error (exit 2) for unknown names. */
bool pass_expose(struct ir_graph *g, const char *names);
bool pass_infer_fold(struct ir_graph *g);     /* shape inference + constant folding, one sweep */
bool pass_promote_f16(struct ir_graph *g);     /* float16 MatMul/Gemm/Conv run in float32 */
bool pass_remove_identity(struct ir_graph *g);
bool pass_dce(struct ir_graph *g);

#endif
