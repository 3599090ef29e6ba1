/* harness.h — single-node kernel tests through the real compile path.
 *
 * A test describes one ONNX node (op, inputs with dtype/dims/data, attributes). kt_run():
 *   expected: the same node with every input constant, folded by the reference CPU
 *             implementation (ref/ via the infer_fold pass);
 *   actual:   the node with run-time inputs (and constant ones where marked), compiled by
 *             passes_run + cg_build, run on the OpenCL device through the runtime;
 * and compares every output: floats with |a - e| <= atol + rtol * |e| (NaN/Inf must match),
 * integers and bools exactly. Prints the max abs/rel error and returns 0 on pass, 1 on fail.
 */
#ifndef ONNX2CL_KT_HARNESS_H
#define ONNX2CL_KT_HARNESS_H

#include "ir/ir.h"

struct kt_case;

/* New case for ONNX op `op_type` at `opset`. */
struct kt_case *kt_new(const char *op_type, int64_t opset);
/* Adds an input. data NULL = deterministic pseudo-random values (floats in [-1, 1), ints in
 * [0, 4)); data is copied. constant = the input is an initializer in the compiled graph. */
void kt_input(struct kt_case *c, enum ir_dtype dtype, int rank, const int64_t *dims,
              const void *data, bool constant);
/* Adds an absent optional input slot. */
void kt_input_absent(struct kt_case *c);
void kt_attr_int(struct kt_case *c, const char *name, int64_t v);
void kt_attr_float(struct kt_case *c, const char *name, float v);
void kt_attr_ints(struct kt_case *c, const char *name, const int64_t *v, size_t n);
void kt_attr_string(struct kt_case *c, const char *name, const char *s);
/* Number of outputs the node has (default 1). */
void kt_outputs(struct kt_case *c, int n);
/* Compiles, runs, compares; frees the case. Returns 0 if every output matches. */
int kt_run(struct kt_case *c, const char *label, double atol, double rtol);

#endif
