/* info.h — `onnx2cl --info` (driver/info.c): model facts and the device memory it needs. */
#ifndef ONNX2CL_INFO_H
#define ONNX2CL_INFO_H

#include <stdint.h>
#include <stdio.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

/* One row of the op histogram. */
struct info_op {
    const char *op;  /* ONNX op_type (points into the graph) */
    uint32_t count;  /* nodes */
};

/* Facts about the graph as imported, before any pass. */
struct info_imported {
    struct info_op *ops;   /* histogram, most frequent first (malloc) */
    uint32_t nops;         /* rows */
    uint32_t nodes;        /* live nodes */
    uint32_t initializers; /* initializer tensors (not Constant-node / attribute tensors) */
    uint64_t parameters;   /* their elements */
};

/* Records the histogram and parameters of g right after onnx_load (g unchanged). */
void info_count_imported(const struct ir_graph *g, struct info_imported *out);
void info_imported_free(struct info_imported *x);
/* FLOPs per inference of the optimized graph (definition in info.c's banner). */
uint64_t info_flops(const struct ir_graph *g);
/* Prints the --info report of the built model m to f. */
void info_print(FILE *f, const struct ir_graph *g, const struct info_imported *imp,
                uint64_t flops, const struct cg_ctx *m);

#endif
