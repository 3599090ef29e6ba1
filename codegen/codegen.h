/* codegen.h — turns an optimized IR graph into a runnable model description, and writes it
 * as one deterministic C file plus a weights file.
 *
 * cg_build():  lowers every live node (lower_<family>() from lower.h), maps values to device
 *              buffers (views alias, constants -> weights region, activations -> arena slots
 *              from the liveness-based memory plan), and assembles the OpenCL source from the
 *              embedded kernels/<family>.cl files (prelude + each (family, dtype) used, once).
 * cg_write_c():       the generated C file (banner, desc tables, <name>_init/_run/_free, main()).
 * cg_write_weights(): the weights file (format in runtime/onnx2cl_rt.h), atomically.
 * cg_write_h():       the model's header (prototypes + I/O macros), atomically.
 * The in-memory descriptor is also what tests run directly through the runtime.
 */
#ifndef ONNX2CL_CODEGEN_H
#define ONNX2CL_CODEGEN_H

#include "../ir/ir.h"
#include <stdio.h>

struct o2r_model_desc;
struct cg_ctx; /* the lowering context is also the built model (codegen/cg_internal.h) */

/* Options for code generation. */
struct cg_options {
    const char *name;          /* model name: API prefix (C identifier) */
    const char *command_line;  /* written into the banner */
    bool with_main;            /* emit main() calling o2r_main */
    bool embed_weights;        /* (reserved) */
    enum ir_dtype weights_dtype; /* repacked GEMM/conv/embedding weights stored as IR_F16 (half,
                                    onnx2cl --weights-dtype f16) or IR_F32 (also for 0) */
};

/* Lowers and plans g (after passes_run). Fatal (ir_fatal_node) for a node no kernel handles. */
struct cg_ctx *cg_build(struct ir_graph *g, const struct cg_options *opt);
/* Frees what cg_build allocated outside the graph arena; call before ir_graph_free(g). */
void cg_free(struct cg_ctx *m);
/* The descriptor (valid while g lives). */
const struct o2r_model_desc *cg_desc(const struct cg_ctx *m);
/* The same descriptor without making its weights_checksum (0 unless cg_desc or the weights file
 * made it): the checksum reads every weight, running each lazy transform (checkpoint conversions,
 * GEMM/conv panels); --info needs sizes and launches only. */
const struct o2r_model_desc *cg_desc_plan(const struct cg_ctx *m);
/* Sets the descriptor's weights checksum to sum without reading the weights (onnx2cl
 * --reuse-weights: the checksum of an existing weights file of the same layout). */
void cg_set_checksum(struct cg_ctx *m, uint64_t sum);
/* Weights payload (weights_bytes bytes) in host memory. */
const void *cg_weights_payload(const struct cg_ctx *m);
/* Writes the weights file / the C file atomically; fatal on I/O error. */
void cg_write_weights(const struct cg_ctx *m, const char *path);
void cg_write_c(const struct cg_ctx *m, const char *path, const struct cg_options *opt);
/* Writes the descriptor as a descriptor file (.o2d, runtime/onnx2cl_rt.h) atomically; fatal on
 * I/O error. Run by onnx2cl-run or loaded with o2r_desc_read: no C compiler needed. */
void cg_write_desc(const struct cg_ctx *m, const char *path);
/* Writes the model's header atomically (fatal on I/O error): include guard, #include
 * "onnx2cl_rt.h", the prototypes of <name>_init/_run/_free/_desc and, per input/output i,
 * NAME_INPUTi_NAME (string), _DTYPE (enum o2r_dtype constant), _RANK, _SHAPE ({d0, ...}),
 * _NUMEL, _BYTES, with NAME = opt->name in upper case; NAME_NUM_INPUTS / NAME_NUM_OUTPUTS. */
void cg_write_h(const struct cg_ctx *m, const char *path, const struct cg_options *opt);
/* Kernel launches per inference under kernel class cls (CG_VARIANT_CPU / CG_VARIANT_GPU, lower.h):
 * launches shared by every class plus that class's own variants. */
uint32_t cg_launch_count(const struct cg_ctx *m, unsigned cls);
/* Weights region size of this build with its repacked weights (cg_weight_const: GEMM/conv
 * panels, embedding tables) stored as `dtype` (IR_F32 or IR_F16) and every other weight as
 * compiled, with the same O2R_ALIGN padding: exactly the weights_bytes of the same compilation
 * with --weights-dtype f32 / f16. */
uint64_t cg_weights_bytes_as(const struct cg_ctx *m, enum ir_dtype dtype);
/* Statistics for --stats. */
void cg_print_stats(const struct cg_ctx *m, FILE *f);

#endif
