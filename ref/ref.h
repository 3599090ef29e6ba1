/* ref.h — reference CPU implementations of every ONNX op in ops.def.
 *
 * Used for constant folding (passes/fold_constants.c) and as the oracle of kernel tests.
 * Straightforward loops in double/int64 accumulation where it matters; clarity over speed.
 * Semantics: the ONNX spec, in the normalized IR form documented in ir/ir.h (attribute forms
 * of axes/splits/pads/... already turned into constant inputs by the importer).
 */
#ifndef ONNX2CL_REF_H
#define ONNX2CL_REF_H

#include "../ir/ir.h"

/* Evaluates node `node` of g on the host.
 * Requires: every present input has constant data (value.data != NULL); every output already
 * has dtype and concrete dims (shape inference ran).
 * Effect: allocates each output's data in the graph arena and sets value.data / value.nbytes.
 * Returns false (changing nothing) if this op/dtype combination has no reference
 * implementation; user errors in the data (e.g. a Gather index out of range) are fatal via
 * ir_fatal_node(). */
bool ref_eval(struct ir_graph *g, uint32_t node);

/* Float16 <-> float32 conversion (IEEE 754 binary16, round-to-nearest-even, subnormals,
 * overflow to inf, NaN kept). */
float ref_f16_to_f32(uint16_t h);
uint16_t ref_f32_to_f16(float f);

#endif
