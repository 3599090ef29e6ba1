/* conv_bench.c — convolution micro-benchmark through the real compile path.
 *
 * For each shape of a fixed table (Stable Diffusion UNet / VAE convs, MTCNN O-Net convs), builds
 * a one-node graph Conv(x, w, bias) with x a run-time input and w / bias initializers, compiles
 * it with passes_run + cg_build (so the lowering in codegen/lower_conv.c + lower_fconv.c picks
 * the kernel exactly as for a real model), runs it on the OpenCL device through the runtime, and
 * prints the median and best wall time of o2r_model_run (input upload + launch + output read
 * back; the upload/readback is a memcpy on PoCL, small next to these convs) and GFLOP/s
 * (2 * N * OC * OH * OW * C/group * KH * KW flops).
 * Every run's output is spot-checked on 256 pseudo-random elements against a direct double
 * summation (|a - e| <= 1e-3 + 1e-3 |e|); a mismatch makes the benchmark exit 1.
 *
 * Usage: conv_bench [--runs N] [--filter SUBSTR] [--json FILE] [--smoke] [--profile] [--list]
 *   --runs N       timed runs per shape after one warm-up run (default 3)
 *   --filter S     only shapes whose name contains S (repeatable: any match)
 *   --smoke        only the small shapes (the ctest smoke run)
 *   --profile      per-launch OpenCL event times (runtime's profile table) after each shape
 *   --json FILE    appends one JSON object per shape: {"name","gflop","median_ms","best_ms",
 *                  "gflops_median","gflops_best","gflops_per_cpu_s","variant"}
 *   GFLOP/cpu-s uses the process's CPU time (user + system, median run): on a loaded machine it
 *   shows kernel efficiency better than wall time.
 * Environment: ONNX2CL_FCONV selects a kernel variant in the lowering (see lower_fconv.c); it is
 * recorded as "variant".
 * Not a ctest test (it takes minutes on 2 cores); tests/perf_conv/CMakeLists.txt registers a
 * quick smoke run on small shapes only (label perf).
 */
#include "codegen/codegen.h"
#include "onnx2cl_rt.h"
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* One benchmark shape: a 2-D convolution. */
struct shape {
    const char *name; /* label, e.g. "unet.320x64x64.3x3" */
    int n, c, h, w;   /* input [n, c, h, w] */
    int oc, k;        /* output channels, square kernel size */
    int stride, pad;  /* symmetric stride and padding */
    int group;        /* Conv group */
    int smoke;        /* 1 = part of the quick smoke set */
};

static const struct shape shapes[] = {
    {"unet.320x64x64.3x3", 1, 320, 64, 64, 320, 3, 1, 1, 1, 0},
    {"unet.640x32x32.3x3", 1, 640, 32, 32, 640, 3, 1, 1, 1, 0},
    {"unet.1280x16x16.3x3", 1, 1280, 16, 16, 1280, 3, 1, 1, 1, 0},
    {"unet.1280x8x8.3x3", 1, 1280, 8, 8, 1280, 3, 1, 1, 1, 0},
    {"unet.320to640x32x32.3x3", 1, 320, 32, 32, 640, 3, 1, 1, 1, 0},
    {"unet.4to320x64x64.3x3", 1, 4, 64, 64, 320, 3, 1, 1, 1, 0},
    {"unet.down320x64x64.3x3s2", 1, 320, 64, 64, 320, 3, 2, 1, 1, 0},
    {"unet.down640x32x32.3x3s2", 1, 640, 32, 32, 640, 3, 2, 1, 1, 0},
    {"unet.proj320x64x64.1x1", 1, 320, 64, 64, 320, 1, 1, 0, 1, 0},
    {"unet.short320to640x32x32.1x1", 1, 320, 32, 32, 640, 1, 1, 0, 1, 0},
    {"unet.proj1280x16x16.1x1", 1, 1280, 16, 16, 1280, 1, 1, 0, 1, 0},
    {"vae.512x64x64.3x3", 1, 512, 64, 64, 512, 3, 1, 1, 1, 0},
    {"vae.128x256x256.3x3", 1, 128, 256, 256, 128, 3, 1, 1, 1, 0},
    {"taesd.64x512x512.3x3", 1, 64, 512, 512, 64, 3, 1, 1, 1, 0},
    {"taesd.64x64x64.3x3", 1, 64, 64, 64, 64, 3, 1, 1, 1, 0},
    {"vae.512x16x512.3x3", 1, 512, 16, 512, 512, 3, 1, 1, 1, 0},
    {"vae.256x16x512.3x3", 1, 256, 16, 512, 256, 3, 1, 1, 1, 0},
    {"vae.128x32x512.3x3", 1, 128, 32, 512, 128, 3, 1, 1, 1, 0},
    {"vae.128to3x64x512.3x3", 1, 128, 64, 512, 3, 3, 1, 1, 1, 0},
    {"mtcnn.onet.conv1.b16", 16, 3, 48, 48, 32, 3, 1, 0, 1, 1},
    {"mtcnn.onet.conv2.b16", 16, 32, 23, 23, 64, 3, 1, 0, 1, 1},
    {"mtcnn.onet.conv3.b16", 16, 64, 10, 10, 64, 3, 1, 0, 1, 1},
    {"mtcnn.onet.conv4.b16", 16, 64, 4, 4, 128, 2, 1, 0, 1, 1},
    {"odd.13to18x19x21.3x3g1", 2, 13, 19, 21, 18, 3, 1, 1, 1, 1},
};

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 40) / 16777216.0 * 2.0 - 1.0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds (user + system) of this process, all threads (PoCL's workers included). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Direct value of output element (n, o, i, j). */
static double ref_at(const struct shape *s, const float *x, const float *w, const float *b,
                     int oh, int ow, int64_t idx)
{
    int j = (int)(idx % ow), i = (int)(idx / ow % oh), o = (int)(idx / ((int64_t)ow * oh) % s->oc);
    int n = (int)(idx / ((int64_t)ow * oh * s->oc));
    int cg = s->c / s->group, og = s->oc / s->group, g = o / og;
    double acc = b[o];
    for (int ci = 0; ci < cg; ci++)
        for (int kh = 0; kh < s->k; kh++)
            for (int kw = 0; kw < s->k; kw++) {
                int ih = i * s->stride - s->pad + kh, iw = j * s->stride - s->pad + kw;
                if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w) continue;
                acc += (double)x[(((int64_t)n * s->c + g * cg + ci) * s->h + ih) * s->w + iw] *
                       w[(((int64_t)o * cg + ci) * s->k + kh) * s->k + kw];
            }
    return acc;
}

static struct o2r_ctx *ctx;
static int profile; /* --profile: per-launch OpenCL event times of the last run */

/* Benchmarks one shape; returns 0 on success, 1 on a mismatch or error. */
static int bench(const struct shape *s, int runs, FILE *json)
{
    const int oh = (s->h + 2 * s->pad - s->k) / s->stride + 1;
    const int ow = (s->w + 2 * s->pad - s->k) / s->stride + 1;
    const int64_t xn = (int64_t)s->n * s->c * s->h * s->w;
    const int64_t wn = (int64_t)s->oc * (s->c / s->group) * s->k * s->k;
    const int64_t yn = (int64_t)s->n * s->oc * oh * ow;
    const double gflop = 2.0 * yn * (s->c / s->group) * s->k * s->k * 1e-9;

    struct ir_graph *g = ir_graph_new(s->name);
    g->opset = 17;
    float *x = malloc(sizeof(float) * xn);
    float *wt = ir_alloc(g, sizeof(float) * wn), *bias = ir_alloc(g, sizeof(float) * s->oc);
    for (int64_t i = 0; i < xn; i++) x[i] = frand();
    const float wscale = 1.0f / sqrtf((float)(s->c / s->group) * s->k * s->k);
    for (int64_t i = 0; i < wn; i++) wt[i] = frand() * wscale;
    for (int i = 0; i < s->oc; i++) bias[i] = frand();
    const int64_t xd[4] = {s->n, s->c, s->h, s->w}, wd[4] = {s->oc, s->c / s->group, s->k, s->k};
    const int64_t bd[1] = {s->oc};
    uint32_t ins[3];
    g->inputs = ir_alloc(g, sizeof(uint32_t));
    ins[0] = ir_value_add(g, "x", IR_F32, 4, xd);
    g->values[ins[0]].is_input = true;
    g->inputs[g->ninputs++] = ins[0];
    ins[1] = ir_const_add(g, "w", IR_F32, 4, wd, wt, sizeof(float) * wn);
    ins[2] = ir_const_add(g, "b", IR_F32, 1, bd, bias, sizeof(float) * s->oc);
    uint32_t out = ir_value_add(g, "y", IR_UNDEFINED, -1, NULL);
    uint32_t nd = ir_node_add(g, ir_op_lookup("Conv"), "conv", "Conv", ins, 3, &out, 1);
    const int64_t st[2] = {s->stride, s->stride}, pads[4] = {s->pad, s->pad, s->pad, s->pad};
    ir_attr_set_ints(g, nd, "strides", st, 2);
    ir_attr_set_ints(g, nd, "pads", pads, 4);
    ir_attr_set_int(g, nd, "group", s->group);
    g->outputs = ir_alloc(g, sizeof(uint32_t));
    g->outputs[g->noutputs++] = out;
    g->values[out].is_output = true;
    g->values[out].nuses++;
    struct pass_options po = {0};
    passes_run(g, &po);
    struct cg_options co = {.name = "bench", .with_main = false};
    struct cg_ctx *m = cg_build(g, &co);
    const struct o2r_model_desc *d = cg_desc(m);
    char wpath[] = "/tmp/o2c_convbench_XXXXXX";
    int fd = mkstemp(wpath);
    if (fd < 0) return 1;
    close(fd);
    cg_write_weights(m, wpath);
    struct o2r_model *rm = NULL;
    double t0 = now_s();
    if (o2r_model_init(ctx, d, wpath, &rm) != O2R_OK) {
        fprintf(stderr, "%s: init: %s\n", s->name, o2r_ctx_last_error(ctx));
        unlink(wpath);
        return 1;
    }
    double tinit = now_s() - t0;
    if (profile) o2r_model_set_profiling(rm, 1);
    unlink(wpath);
    float *y = malloc(sizeof(float) * yn);
    const void *inp[1] = {x};
    void *outp[1] = {y};
    double *t = malloc(sizeof(double) * (runs + 1)), *tc = malloc(sizeof(double) * (runs + 1));
    int bad = 0;
    for (int r = 0; r <= runs && !bad; r++) {
        memset(y, 0xff, sizeof(float) * yn);
        t0 = now_s();
        double c0 = cpu_s();
        if (o2r_model_run(rm, inp, outp) != O2R_OK) {
            fprintf(stderr, "%s: run: %s\n", s->name, o2r_ctx_last_error(ctx));
            bad = 1;
            break;
        }
        t[r] = now_s() - t0;
        tc[r] = cpu_s() - c0;
        uint64_t hs = 0x9e3779b97f4a7c15ull ^ (uint64_t)r;
        for (int q = 0; q < 256 && !bad; q++) {
            hs ^= hs << 13;
            hs ^= hs >> 7;
            hs ^= hs << 17;
            int64_t idx = (int64_t)(hs % (uint64_t)yn);
            if (q == 0) idx = 0;
            if (q == 1) idx = yn - 1;
            double e = ref_at(s, x, wt, bias, oh, ow, idx);
            if (!(fabs(y[idx] - e) <= 1e-3 + 1e-3 * fabs(e))) {
                fprintf(stderr, "%s: MISMATCH at %lld: got %.7g expected %.7g\n", s->name,
                        (long long)idx, y[idx], e);
                bad = 1;
            }
        }
    }
    if (!bad) {
        qsort(t + 1, runs, sizeof(double), cmp_d);
        qsort(tc + 1, runs, sizeof(double), cmp_d);
        double med = t[1 + runs / 2], best = t[1], cmed = tc[1 + runs / 2];
        const char *var = getenv("ONNX2CL_FCONV");
        printf("%-30s %8.3f GFLOP  init %6.2fs  median %9.2f ms  best %9.2f ms  %7.2f GFLOP/s "
               "(best %7.2f)  %6.2f GFLOP/cpu-s\n", s->name, gflop, tinit, med * 1e3, best * 1e3,
               gflop / med, gflop / best, gflop / cmed);
        fflush(stdout);
        if (json)
            fprintf(json, "{\"name\": \"%s\", \"gflop\": %.4f, \"median_ms\": %.3f, "
                    "\"best_ms\": %.3f, \"gflops_median\": %.3f, \"gflops_best\": %.3f, "
                    "\"gflops_per_cpu_s\": %.3f, \"variant\": \"%s\"}\n", s->name, gflop, med * 1e3,
                    best * 1e3, gflop / med, gflop / best, gflop / cmed, var ? var : "default");
    }
    if (profile && !bad) o2r_model_print_profile(rm, stdout);
    free(t);
    free(tc);
    free(x);
    free(y);
    o2r_model_free(rm);
    cg_free(m);
    ir_graph_free(g);
    return bad;
}

int main(int argc, char **argv)
{
    int runs = 3, nfilt = 0, smoke = 0;
    const char *filt[16];
    FILE *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc && nfilt < 16) filt[nfilt++] = argv[++i];
        else if (!strcmp(argv[i], "--smoke")) smoke = 1;
        else if (!strcmp(argv[i], "--profile")) profile = 1;
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json = fopen(argv[++i], "a");
            if (!json) {
                perror(argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--list")) {
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) puts(shapes[k].name);
            return 0;
        } else {
            fprintf(stderr, "usage: %s [--runs N] [--filter SUBSTR]... [--smoke] [--json FILE] "
                    "[--profile] [--list]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "cannot create an OpenCL context: %s\n", o2r_ctx_last_error(NULL));
        return 1;
    }
    int bad = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const struct shape *s = &shapes[k];
        if (smoke && !s->smoke) continue;
        bool any = nfilt == 0;
        for (int f = 0; f < nfilt; f++) any |= strstr(s->name, filt[f]) != NULL;
        if (!any) continue;
        bad |= bench(s, runs, json);
    }
    if (json) fclose(json);
    o2r_ctx_free(ctx);
    return bad;
}
