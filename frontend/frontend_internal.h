/* frontend_internal.h — shared between the files of frontend/ only (never included elsewhere:
 * it names protobuf-c types, which must not leave this module).
 *
 *   onnx_load.c  file reading, hashing, ModelProto -> IR (values, nodes, attributes)
 *   tensor.c     TensorProto -> constant value (all data forms, external data, checks)
 *   normalize.c  older-opset attribute forms -> the one IR form of ir/ir.h
 */
#ifndef ONNX2CL_FRONTEND_INTERNAL_H
#define ONNX2CL_FRONTEND_INTERNAL_H

#include <stdint.h>
#include <stddef.h>

#include "../ir/ir.h"
#include "onnx/onnx.pb-c.h"

/* A static shape read from graph.value_info (used only as a hint by normalization). */
struct fe_shape_hint {
    const char *name;          /* value name */
    int rank;                  /* number of dims */
    int64_t dims[IR_MAX_RANK]; /* dims, -1 where symbolic or unknown */
};

/* Names visible inside a subgraph being imported (If/Loop/Scan bodies): ONNX names -> value
 * ids. Values made inside get the name "<prefix><onnx name>" (made unique) so sibling bodies may
 * reuse names. Lookups walk to the parent scopes, then the main graph. */
struct fe_scope {
    struct fe_scope *parent;       /* enclosing scope, NULL = the main graph */
    const char *prefix;            /* prefix of value names made in this scope */
    const char **names;            /* ONNX names defined here */
    uint32_t *vids;                /* their value ids */
    uint32_t n, cap;               /* entries used / allocated */
};

/* State of one import. */
struct fe_ctx {
    struct ir_graph *g;            /* graph being built */
    const char *model_dir_real;    /* realpath() of the model's folder (external data root) */
    struct fe_shape_hint *hints;   /* graph.value_info shapes */
    size_t nhints;                 /* entries in hints */
    const struct ir_node *where;   /* node whose tensor is being converted (messages), or NULL */
    struct fe_scope *scope;        /* innermost subgraph scope, NULL at the main graph */
    const Onnx__ModelProto *model; /* the model (opset lookups while importing subgraphs) */
};

/* User error about a tensor: located at ctx->where's node when set, else at the model. */
void fe_tensor_fatal(const struct fe_ctx *c, const char *tensor, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* Converts a TensorProto into constant data in the IR's dense little-endian form.
 * Sets *dtype, *rank, dims[], *data (arena copy, pointer into a mapped external file, or a large
 * raw_data buffer taken over from t — then cleared in t so freeing the message skips it; never
 * NULL, even for 0 elements) and *nbytes. `name` is used in messages. Fatal on: string/complex/
 * unsupported dtypes, segments, negative dims, rank > IR_MAX_RANK, element-count overflow, data
 * size not matching dims, external data problems (see tensor.c). */
void fe_tensor_data(struct fe_ctx *c, Onnx__TensorProto *t, const char *name,
                    enum ir_dtype *dtype, int *rank, int64_t dims[IR_MAX_RANK],
                    const void **data, size_t *nbytes);

/* Normalizes node `node` (just added, attributes copied) into the IR form of ir/ir.h for the
 * graph's opset. May change the node's op, inputs and attributes and add constant values. */
void fe_normalize_node(struct fe_ctx *c, uint32_t node);

/* Adds a fresh constant value (name made unique from `base`) whose data is copied into the arena. */
uint32_t fe_const_new(struct ir_graph *g, const char *base, enum ir_dtype dtype, int rank,
                      const int64_t *dims, const void *data, size_t nbytes);

#endif
