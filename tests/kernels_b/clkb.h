/* clkb.h — a tiny OpenCL driver for the standalone kernel tests of the compute families
 * (matmul, conv, pool, softmax, norm, reduce).
 *
 * Builds kernels/prelude.cl + kernels/<family>.cl, read from the source tree, with
 * "#define T <ctype>" / "#define TS <suffix>" prepended (exactly what codegen does for one
 * (family, dtype) instance), and runs single kernels on the first OpenCL device (PoCL here).
 * Every OpenCL error aborts the test with the call and code. Test-only code: not part of the
 * compiler.
 */
#ifndef CLKB_H
#define CLKB_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

/* One kernel argument. */
struct kb_arg {
    int kind;     /* 0 buffer, 1 int, 2 float, 3 long */
    cl_mem m;     /* buffer (kind 0) */
    int i;        /* int (kind 1) */
    float f;      /* float (kind 2) */
    long long l;  /* long (kind 3) */
};
#define KB_B(x) ((struct kb_arg){.kind = 0, .m = (x)})
#define KB_I(x) ((struct kb_arg){.kind = 1, .i = (int)(x)})
#define KB_F(x) ((struct kb_arg){.kind = 2, .f = (float)(x)})

/* Creates the context/queue once. */
void kb_init(void);
/* Program of prelude + family instantiated for (ctype, suffix), e.g. ("float", "f32"). */
cl_program kb_program(const char *family, const char *ctype, const char *suffix);
/* Device buffer holding a copy of host data (bytes). */
cl_mem kb_buf(const void *host, size_t bytes);
/* Reads a buffer back. */
void kb_read(cl_mem m, void *host, size_t bytes);
/* Runs kernel `name` of p with the given args; lws may be NULL. Blocks until done. */
void kb_run(cl_program p, const char *name, unsigned dim, const size_t *gws, const size_t *lws,
            int nargs, const struct kb_arg *args);

/* Deterministic pseudo-random floats in [lo, hi). */
void kb_fill(float *x, size_t n, float lo, float hi, uint32_t seed);
/* Compares got vs want: |g - w| <= atol + rtol*|w| for all i (NaN must match NaN). Prints the
 * first mismatches; returns the number of failures. */
int kb_check(const char *what, const float *got, const double *want, size_t n, double atol,
             double rtol);

#endif
