/* safetensors.h — initializer values from a safetensors file (`onnx2cl --weights-from`).
 * Format, checks and conversions: frontend/safetensors.c. */
#ifndef ONNX2CL_FRONTEND_SAFETENSORS_H
#define ONNX2CL_FRONTEND_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* What st_apply did. */
struct st_result {
    uint32_t applied;       /* initializers whose data now comes from the file */
    uint32_t initializers;  /* initializers of the model */
    uint32_t kept;          /* initializers the file does not name (they keep the ONNX values) */
    const char *first_kept; /* the first of those (NULL if none) */
};

/* Replaces the data of g's initializers (ir_value.is_param) by the same-named tensors of the
 * safetensors file at path. Every tensor of the file must match an initializer by name and dims
 * (and by dtype, or be a float dtype filling a float32 initializer, or F32/F16 filling a float16
 * one); otherwise nothing is replaced and the process exits with status 1 listing the tensors
 * that do not fit. A malformed file (header length, JSON, dtype, shape, offsets outside the data
 * region, a byte count that does not match shape x dtype) exits 1 naming the file and tensor.
 * Call after onnx_load, before passes_run. Returns the number of initializers replaced; res (may
 * be NULL) receives the counts. The file stays mapped for the life of the process. */
uint32_t st_apply(struct ir_graph *g, const char *path, struct st_result *res);
/* As st_apply, over size bytes in memory (which must outlive g's use of the initializers). */
uint32_t st_apply_buffer(struct ir_graph *g, const char *path, const void *bytes, size_t size,
                         struct st_result *res);

#endif
