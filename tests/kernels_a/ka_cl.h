/* ka_cl.h — a minimal OpenCL driver for the standalone kernel tests of tests/kernels_a.
 *
 * Builds kernels/prelude.cl followed by kernels/<family>.cl instantiated per element type
 * (the same "#define T / #define TS" text codegen emits) straight from the source tree, and
 * runs single kernels on the first OpenCL device ($ONNX2CL_DEVICE substring picks another).
 * Test-only: every failure prints the CL call and error and exits 1.
 */
#ifndef KA_CL_H
#define KA_CL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

/* One (family, OpenCL type, suffix) instantiation. */
struct ka_inst {
    const char *family; /* kernels/<family>.cl */
    const char *ctype;  /* "float" */
    const char *suffix; /* "f32" */
};

/* Creates the context and builds the program from the instantiations (fatal on error). */
void ka_init(const struct ka_inst *insts, int n);
void ka_shutdown(void);
/* Device buffer of `bytes` bytes initialized from host (host may be NULL). */
cl_mem ka_buf(size_t bytes, const void *host);
void ka_read(cl_mem b, size_t bytes, void *host);
/* Argument descriptors for ka_run. */
enum ka_arg_kind { KA_BUF, KA_I32, KA_I64, KA_F32 };
struct ka_arg {
    enum ka_arg_kind kind; /* which field */
    cl_mem buf;            /* KA_BUF */
    int64_t i;             /* KA_I32 / KA_I64 */
    float f;               /* KA_F32 */
};
#define KB(b) ((struct ka_arg){KA_BUF, (b), 0, 0.0f})
#define KI(v) ((struct ka_arg){KA_I32, NULL, (v), 0.0f})
#define KL(v) ((struct ka_arg){KA_I64, NULL, (v), 0.0f})
#define KF(v) ((struct ka_arg){KA_F32, NULL, 0, (v)})
/* Runs kernel `name` over gws work-items (1-D, driver-chosen lws) and waits. */
void ka_run(const char *name, size_t gws, const struct ka_arg *args, int nargs);
/* Same with work_dim dims, gws/lws arrays (lws NULL = driver's choice). */
void ka_run_nd(const char *name, unsigned dims, const size_t *gws, const size_t *lws,
               const struct ka_arg *args, int nargs);

/* Test bookkeeping: ka_check records a failure with a message; ka_failures counts them. */
extern int ka_failures;
void ka_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* |got - want| <= atol + rtol * |want| over n floats (NaN must match NaN); reports the worst. */
int ka_close_f32(const char *what, const float *got, const float *want, size_t n, double atol,
                 double rtol);

#endif
