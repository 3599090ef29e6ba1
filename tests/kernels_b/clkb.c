/* clkb.c — see clkb.h. Assumes ONNX2CL_SOURCE_DIR (compile definition) points at the source
 * tree holding kernels/. */
#include "clkb.h"
#include "test_device.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_context g_ctx;
static cl_command_queue g_q;
static cl_device_id g_dev;

#define CK(call)                                                                          \
    do {                                                                                  \
        cl_int e_ = (call);                                                               \
        if (e_ != CL_SUCCESS) {                                                           \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, e_);     \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

void kb_init(void)
{
    if (g_ctx) return;
    g_dev = test_cl_device(); /* $ONNX2CL_DEVICE, as the runtime chooses */
    cl_int e;
    g_ctx = clCreateContext(NULL, 1, &g_dev, NULL, NULL, &e);
    CK(e);
    g_q = clCreateCommandQueue(g_ctx, g_dev, 0, &e);
    CK(e);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) exit(1);
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

cl_program kb_program(const char *family, const char *ctype, const char *suffix)
{
    kb_init();
    char path[1024], defs[256];
    size_t l1, l2;
    snprintf(path, sizeof path, "%s/kernels/prelude.cl", ONNX2CL_SOURCE_DIR);
    char *pre = read_file(path, &l1);
    snprintf(path, sizeof path, "%s/kernels/%s.cl", ONNX2CL_SOURCE_DIR, family);
    char *fam = read_file(path, &l2);
    snprintf(defs, sizeof defs, "\n#define T %s\n#define TS %s\n", ctype, suffix);
    const char *srcs[4] = {pre, defs, fam, "\n#undef T\n#undef TS\n"};
    cl_int e;
    cl_program p = clCreateProgramWithSource(g_ctx, 4, srcs, NULL, &e);
    CK(e);
    e = clBuildProgram(p, 1, &g_dev, "-cl-std=CL1.2", NULL, NULL);
    if (e != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(p, g_dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = malloc(n + 1);
        clGetProgramBuildInfo(p, g_dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        log[n] = 0;
        fprintf(stderr, "build of %s (%s) failed: %d\n%s\n", family, suffix, e, log);
        exit(1);
    }
    if (getenv("KB_BUILD_LOG")) {
        size_t n = 0;
        clGetProgramBuildInfo(p, g_dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = malloc(n + 1);
        clGetProgramBuildInfo(p, g_dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        log[n] = 0;
        fprintf(stderr, "build log of %s (%s):\n%s\n", family, suffix, log);
        free(log);
    }
    free(pre);
    free(fam);
    return p;
}

cl_mem kb_buf(const void *host, size_t bytes)
{
    cl_int e;
    if (bytes == 0) bytes = 4;
    cl_mem m = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              (void *)host, &e);
    CK(e);
    return m;
}

void kb_read(cl_mem m, void *host, size_t bytes)
{
    CK(clEnqueueReadBuffer(g_q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
}

void kb_run(cl_program p, const char *name, unsigned dim, const size_t *gws, const size_t *lws,
            int nargs, const struct kb_arg *args)
{
    cl_int e;
    cl_kernel k = clCreateKernel(p, name, &e);
    if (e != CL_SUCCESS) {
        fprintf(stderr, "no kernel %s: %d\n", name, e);
        exit(1);
    }
    for (int i = 0; i < nargs; i++) {
        const struct kb_arg *a = &args[i];
        switch (a->kind) {
        case 0: CK(clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &a->m)); break;
        case 1: CK(clSetKernelArg(k, (cl_uint)i, sizeof(int), &a->i)); break;
        case 2: CK(clSetKernelArg(k, (cl_uint)i, sizeof(float), &a->f)); break;
        default: CK(clSetKernelArg(k, (cl_uint)i, sizeof(long long), &a->l)); break;
        }
    }
    CK(clEnqueueNDRangeKernel(g_q, k, dim, NULL, gws, lws, 0, NULL, NULL));
    CK(clFinish(g_q));
    clReleaseKernel(k);
}

void kb_fill(float *x, size_t n, float lo, float hi, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = lo + (hi - lo) * (float)((s >> 8) & 0xffffff) / 16777216.0f;
    }
}

int kb_check(const char *what, const float *got, const double *want, size_t n, double atol,
             double rtol)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const double g = got[i], w = want[i];
        bool ok;
        if (isnan(w) || isnan(g)) ok = isnan(w) && isnan(g);
        else if (isinf(w)) ok = g == w;
        else ok = fabs(g - w) <= atol + rtol * fabs(w);
        if (!ok) {
            if (bad < 5) fprintf(stderr, "%s: [%zu] got %.7g want %.7g\n", what, i, g, w);
            bad++;
        }
    }
    if (bad) fprintf(stderr, "%s: %d/%zu mismatches (atol %g rtol %g)\n", what, bad, n, atol, rtol);
    else printf("ok   %s (%zu values)\n", what, n);
    return bad;
}
