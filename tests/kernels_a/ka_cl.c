/* ka_cl.c — see ka_cl.h. */
#include "ka_cl.h"
#include "test_device.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_context g_ctx;
static cl_command_queue g_q;
static cl_program g_prog;
static cl_device_id g_dev;
int ka_failures;

#define CK(call)                                                                     \
    do {                                                                             \
        cl_int _e = (call);                                                          \
        if (_e != CL_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, _e); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) exit(1);
    s[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return s;
}

void ka_init(const struct ka_inst *insts, int n)
{
    g_dev = test_cl_device(); /* $ONNX2CL_DEVICE, as the runtime chooses */
    cl_int e;
    g_ctx = clCreateContext(NULL, 1, &g_dev, NULL, NULL, &e);
    CK(e);
    g_q = clCreateCommandQueue(g_ctx, g_dev, 0, &e);
    CK(e);
    size_t cap = 1 << 20, len = 0;
    char *src = malloc(cap);
    size_t l;
    char path[4096];
    snprintf(path, sizeof path, "%s/kernels/prelude.cl", KA_SOURCE_DIR);
    char *p = slurp(path, &l);
    memcpy(src, p, l);
    len = l;
    free(p);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/kernels/%s.cl", KA_SOURCE_DIR, insts[i].family);
        p = slurp(path, &l);
        char hdr[256];
        int hn = snprintf(hdr, sizeof hdr, "\n#define T %s\n#define TS %s\n", insts[i].ctype,
                          insts[i].suffix);
        while (len + l + (size_t)hn + 64 > cap) src = realloc(src, cap *= 2);
        memcpy(src + len, hdr, (size_t)hn);
        len += (size_t)hn;
        memcpy(src + len, p, l);
        len += l;
        memcpy(src + len, "\n#undef T\n#undef TS\n", 20);
        len += 20;
        free(p);
    }
    src[len] = 0;
    const char *srcs[1] = {src};
    g_prog = clCreateProgramWithSource(g_ctx, 1, srcs, &len, &e);
    CK(e);
    e = clBuildProgram(g_prog, 1, &g_dev, "-cl-std=CL1.2", NULL, NULL);
    if (e != CL_SUCCESS) {
        size_t logn = 0;
        clGetProgramBuildInfo(g_prog, g_dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &logn);
        char *log = malloc(logn + 1);
        clGetProgramBuildInfo(g_prog, g_dev, CL_PROGRAM_BUILD_LOG, logn, log, NULL);
        log[logn] = 0;
        fprintf(stderr, "build failed (%d):\n%s\n", e, log);
        exit(1);
    }
    free(src);
}

void ka_shutdown(void)
{
    clReleaseProgram(g_prog);
    clReleaseCommandQueue(g_q);
    clReleaseContext(g_ctx);
}

cl_mem ka_buf(size_t bytes, const void *host)
{
    cl_int e;
    if (bytes == 0) bytes = 4;
    cl_mem b = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              (void *)host, &e);
    CK(e);
    return b;
}

void ka_read(cl_mem b, size_t bytes, void *host)
{
    CK(clEnqueueReadBuffer(g_q, b, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
}

void ka_run(const char *name, size_t gws, const struct ka_arg *args, int nargs)
{
    ka_run_nd(name, 1, &gws, NULL, args, nargs);
}

void ka_run_nd(const char *name, unsigned dims, const size_t *gws, const size_t *lws,
               const struct ka_arg *args, int nargs)
{
    cl_int e;
    cl_kernel k = clCreateKernel(g_prog, name, &e);
    if (e != CL_SUCCESS) {
        fprintf(stderr, "clCreateKernel(%s) failed: %d\n", name, e);
        exit(1);
    }
    for (int i = 0; i < nargs; i++) {
        switch (args[i].kind) {
        case KA_BUF: CK(clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &args[i].buf)); break;
        case KA_I32: {
            cl_int v = (cl_int)args[i].i;
            CK(clSetKernelArg(k, (cl_uint)i, sizeof v, &v));
            break;
        }
        case KA_I64: {
            cl_long v = (cl_long)args[i].i;
            CK(clSetKernelArg(k, (cl_uint)i, sizeof v, &v));
            break;
        }
        case KA_F32: CK(clSetKernelArg(k, (cl_uint)i, sizeof(float), &args[i].f)); break;
        }
    }
    CK(clEnqueueNDRangeKernel(g_q, k, dims, NULL, gws, lws, 0, NULL, NULL));
    CK(clFinish(g_q));
    clReleaseKernel(k);
}

void ka_check(int ok, const char *fmt, ...)
{
    if (ok) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    ka_failures++;
}

int ka_close_f32(const char *what, const float *got, const float *want, size_t n, double atol,
                 double rtol)
{
    size_t bad = 0, worst = 0;
    double worst_excess = -1;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        int ok;
        if (isnan(w) || isnan(g)) ok = isnan(w) && isnan(g);
        else if (isinf(w) || isinf(g)) ok = g == w;
        else ok = fabs(g - w) <= atol + rtol * fabs(w);
        if (!ok) {
            double ex = isfinite(g - w) ? fabs(g - w) - (atol + rtol * fabs(w)) : INFINITY;
            if (ex > worst_excess || bad == 0) worst_excess = ex, worst = i;
            bad++;
        }
    }
    if (bad)
        ka_check(0, "%s: %zu of %zu elements differ; worst [%zu] got %.9g want %.9g (atol %g rtol %g)",
                 what, bad, n, worst, got[worst], want[worst], atol, rtol);
    return bad == 0;
}
