/* tensor_internal.h — small tensor helpers shared by tensor_io.c and main.c (not installed).
 * Assumes: onnx2cl_rt.h types. Guarantees: output always NUL-terminated when cap > 0.
 */
#ifndef ONNX2CL_TENSOR_INTERNAL_H
#define ONNX2CL_TENSOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Formats dims as "[1,4,64,64]" ("[]" for a scalar) into buf. */
void o2r_shape_str(int32_t rank, const int64_t *dims, char *buf, size_t cap);

#endif
