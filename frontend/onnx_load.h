/* onnx_load.h — the ONNX importer: ModelProto file -> struct ir_graph.
 *
 * The only public entry of frontend/. No protobuf type leaves this module: names, attributes,
 * dims and tensor data are copied into the graph's arena (or, for external data, point into a
 * read-only mmap of the data file that stays mapped for the life of the process).
 */
#ifndef ONNX2CL_FRONTEND_ONNX_LOAD_H
#define ONNX2CL_FRONTEND_ONNX_LOAD_H

#include "../ir/ir.h"

/* The newest default-domain (ai.onnx) opset onnx2cl knows (every op of ops.def at its forms up to
 * this version; onnx 1.23's operator sets). A model importing a newer one is refused by name. */
#define ONNX2CL_NEWEST_OPSET 28

/* Loads the ONNX model at `path` into a new graph.
 *
 * Result: nodes in file order (topologically sorted if the file was not), graph inputs in file
 * order without the ones that are also initializers (those become constants: an initializer is
 * the default value of an input of the same name, and onnx2cl compiles it in), graph outputs by
 * name, constants for initializers and Constant nodes (no Constant node remains), g->opset = the
 * default-domain ("" / "ai.onnx") opset, g->model_hash = SHA-256 of the file bytes. Attribute
 * forms of older opsets are normalized into the IR form of ir/ir.h (see frontend/normalize.c).
 *
 * Errors (all fatal through ir_die / ir_fatal / ir_fatal_node, exit status 1, never a crash):
 * unreadable or non-ONNX file ("<path>: not a valid ONNX model (...)"), unsupported domain,
 * operator, dtype, attribute (subgraphs), string or sparse tensors, bad tensor data sizes, negative
 * or overflowing dims, external data outside the model's folder / missing / out of bounds, values
 * used but never produced, values produced twice. */
struct ir_graph *onnx_load(const char *path);

/* As onnx_load, from `size` bytes in memory (not retained). `path` names the model in messages
 * and its folder is the root for external data; the file itself is not read. Used by the
 * fuzzer (tests/fuzz). */
struct ir_graph *onnx_load_buffer(const char *path, const void *bytes, size_t size);

/* The realpath() of the i-th external data file the models loaded so far read their tensors
 * from (each stays mapped for the life of the process), or NULL when i is past the last one.
 * The driver checks that no output path names one of them before it writes anything. */
const char *onnx_external_file(size_t i);

/* The external-data location that marks an initializer of a weight-free graph (models/arch/):
 * its dims and dtype are in the graph, its values come from a checkpoint through a name map. */
#define ONNX_PLACEHOLDER_LOCATION "weights.placeholder"

/* Whether onnx_load* accept placeholder initializers (default false: a model holding one is
 * refused naming the first, with the flags that give its values). When allowed, each one's data
 * points at read-only zeros that onnx_is_placeholder() recognises; the caller must replace every
 * one (frontend/namemap.h: nm_apply, nm_check_filled) before running passes. */
void onnx_allow_placeholders(bool allow);
/* Whether data is (inside) the bytes of a placeholder initializer loaded so far. */
bool onnx_is_placeholder(const void *data);

/* For fuzzing only: after an ir_set_fatal_hook() hook has longjmp'ed out of onnx_load*(), frees
 * the half-built graph and the unpacked protobuf message. No-op when no load is in flight. */
void onnx_load_abandon(void);

#endif
