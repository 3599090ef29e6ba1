/* test_build_ahead.c — building kernels ahead of the first run (runtime/build_ahead.c,
 * $ONNX2CL_BUILD_AHEAD; issue 24 item 2).
 *
 * What: a hand-written five-launch model (a 3-D launch with a local size and code that takes a
 * while to compile, a 1-D launch with a local size over a "large" grid of 131072 work-items, a
 * clamped gather and a 2-D transpose without a local size, a 3-D launch with __local memory)
 * runs in child processes of this executable, each with its own fresh or
 * shared $POCL_CACHE_DIR:
 *   off (cold cache)  -> the reference outputs, no warm-up launch, no progress line;
 *   on (cold cache)   -> bit-identical outputs, 5 warm-up launches, the "building its 5 kernels
 *                        ahead" line; on PoCL the same compiled kernel specializations as off
 *                        (same local sizes, offsets and grid classes: nothing compiled twice);
 *   on (warm cache)   -> bit-identical outputs, no progress line;
 *   auto              -> on exactly for a CPU device of PoCL;
 * and in this process a bad $ONNX2CL_BUILD_AHEAD value fails o2r_model_init with O2R_ERR_ARG.
 * Assumes: an OpenCL device (PoCL in CI), /bin/sh and find; writes only under a mkdtemp folder.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx2cl_rt.h"
#include "rt_internal.h"
#include "rt_test.h"

#define N 131072 /* >= 65535: the first launch's grid is "large" for PoCL */
#define R 256
#define C 512 /* R * C == N */
#define HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char k_source[] =
    /* pre3: code that takes PoCL a while to compile (the progress line's 100 ms test watches the
     * first warm-up launch, a single work-group of 128 items), its value multiplied by 0 */
    "#define T1 u = sin(u) * 0.5f + cos(u * 1.5f);\n"
    "#define T8 T1 T1 T1 T1 T1 T1 T1 T1\n"
    "__kernel void pre3(__global const float *x, __global float *h) {\n"
    "    size_t p = (get_global_id(2) * get_global_size(1) + get_global_id(1)) *\n"
    "               get_global_size(0) + get_global_id(0);\n"
    "    float u = x[p];\n"
    "    T8 T8 T8 T8\n"
    "    h[p] = x[p] * 0.75f + u * 0.0f;\n"
    "}\n"
    "__kernel void scale(__global const float *x, __global const float *w, __global float *y,\n"
    "                    float b) {\n"
    "    int i = get_global_id(0);\n"
    "    y[i] = x[i] * w[i & 1023] + b;\n"
    "}\n"
    "__kernel void gath(__global const float *y, __global const int *idx, __global float *g,\n"
    "                   int n) {\n"
    "    int i = get_global_id(0);\n"
    "    g[i] = y[clamp(idx[i], 0, n - 1)];\n"
    "}\n"
    "__kernel void tr2d(__global const float *g, __global float *t, int rows, int cols) {\n"
    "    int c = get_global_id(0), r = get_global_id(1);\n"
    "    t[c * rows + r] = g[r * cols + c];\n"
    "}\n"
    "__kernel void add3(__global const float *t, __global float *o, __local float *s) {\n"
    "    size_t i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);\n"
    "    size_t l = get_local_id(0) + get_local_size(0) * (get_local_id(1) +\n"
    "               get_local_size(1) * get_local_id(2));\n"
    "    size_t p = (k * get_global_size(1) + j) * get_global_size(0) + i;\n"
    "    s[l] = t[p] * 2.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    o[p] = s[l] + 1.0f;\n"
    "}\n";

/* buffers: 0 x, 1 idx, 2 y, 3 g, 4 t, 5 o, 6 h (arena), 7 w (weights) */
#define B (N * 4)
static const struct o2r_buffer k_buffers[] = {
    {0, B, O2R_SPACE_ARENA, "x", 0},         {1 * B, B, O2R_SPACE_ARENA, "idx", 0},
    {2 * B, B, O2R_SPACE_ARENA, "y", 0},     {3 * B, B, O2R_SPACE_ARENA, "g", 0},
    {4 * B, B, O2R_SPACE_ARENA, "t", 0},     {5 * B, B, O2R_SPACE_ARENA, "o", 0},
    {6 * B, B, O2R_SPACE_ARENA, "h", 0},     {0, 4096, O2R_SPACE_WEIGHTS, "w", 0},
};
static const struct o2r_arg k_args[] = {
    {O2R_ARG_BUF, {.buf = 0}}, {O2R_ARG_BUF, {.buf = 6}},
    {O2R_ARG_BUF, {.buf = 6}}, {O2R_ARG_BUF, {.buf = 7}}, {O2R_ARG_BUF, {.buf = 2}},
    {O2R_ARG_F32, {.f32 = 0.25f}},
    {O2R_ARG_BUF, {.buf = 2}}, {O2R_ARG_BUF, {.buf = 1}}, {O2R_ARG_BUF, {.buf = 3}},
    {O2R_ARG_I32, {.i32 = N}},
    {O2R_ARG_BUF, {.buf = 3}}, {O2R_ARG_BUF, {.buf = 4}}, {O2R_ARG_I32, {.i32 = R}},
    {O2R_ARG_I32, {.i32 = C}},
    {O2R_ARG_BUF, {.buf = 4}}, {O2R_ARG_BUF, {.buf = 5}}, {O2R_ARG_LOCAL, {.local_bytes = 128 * 4}},
};
static const struct o2r_launch k_launches[] = {
    {"pre3", 3, {64, 64, 32}, {8, 8, 2}, 0, 2, "n_pre", "Mul", 0, NULL},
    {"scale", 1, {N, 0, 0}, {64, 0, 0}, 2, 4, "n_scale", "Mul", 0, NULL},
    {"gath", 1, {N, 0, 0}, {0, 0, 0}, 6, 4, "n_gather", "Gather", 0, NULL},
    {"tr2d", 2, {C, R, 0}, {0, 0, 0}, 10, 4, "n_transpose", "Transpose", 0, NULL},
    {"add3", 3, {64, 64, 32}, {8, 8, 2}, 14, 3, "n_add", "Add", 0, NULL},
};
static const struct o2r_io k_inputs[] = {
    {"x", O2R_F32, 1, {N}, 0, B}, {"idx", O2R_I32, 1, {N}, 1, B},
};
static const struct o2r_io k_outputs[] = {
    {"o", O2R_F32, 1, {N}, 5, B}, {"g", O2R_F32, 1, {N}, 3, B},
};
static const struct o2r_stored k_stored[] = {{7, "float32 [1024] tensor", "n_scale"}};
static struct o2r_model_desc g_desc = {
    O2R_ABI_VERSION, "ahead", HASH, k_source, sizeof k_source - 1, "",
    7 * B, 4096, 0 /* checksum, set in main */,
    8, k_buffers, 17, k_args, 5, k_launches, 2, k_inputs, 2, k_outputs, 0, NULL, 0, NULL, O2R_F32,
    4096, NULL, 1, k_stored, 0, NULL,
};

static float g_w[1024];
static char g_tmp[256], g_wpath[512];

static void write_weights(const char *path)
{
    unsigned char hdr[O2R_WEIGHTS_HEADER];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, O2R_WEIGHTS_MAGIC, 8);
    uint32_t version = O2R_WEIGHTS_VERSION, wdt = O2R_F32;
    uint64_t payload = sizeof g_w, checksum = g_desc.weights_checksum;
    uint64_t layout = o2r_desc_layout_hash(&g_desc);
    memcpy(hdr + 8, &version, 4);
    memcpy(hdr + 12, &wdt, 4);
    memcpy(hdr + 16, &payload, 8);
    memcpy(hdr + 24, &checksum, 8);
    memcpy(hdr + 32, HASH, 64);
    memcpy(hdr + 96, &layout, 8);
    FILE *f = fopen(path, "wb");
    fwrite(hdr, 1, sizeof hdr, f);
    fwrite(g_w, 1, sizeof g_w, f);
    fclose(f);
}

/* The child: init + run, outputs to `out` (raw), "ahead=N pocl_cpu=P" on stdout. */
static int child(const char *out)
{
    static float x[N], o[N], g[N];
    static int32_t idx[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)((i * 37) % 1001) / 7.0f - 50.0f;
        idx[i] = (int32_t)((i * 7919) % (N + 100)) - 50; /* some out of range: clamped */
    }
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "ctx: %s\n", o2r_ctx_last_error(NULL));
        return 2;
    }
    o2r_status st = o2r_model_init(ctx, &g_desc, g_wpath, &m);
    const void *ins[2] = {x, idx};
    void *outs[2] = {o, g};
    if (st == O2R_OK)
        st = o2r_model_run(m, ins, outs);
    if (st != O2R_OK) {
        fprintf(stderr, "model: %s\n", o2r_ctx_last_error(ctx));
        return 3;
    }
    struct o2r_device_info info;
    o2r_ctx_device_info(ctx, &info);
    printf("ahead=%u pocl_cpu=%d\n", (unsigned)o2r_model_ahead_count(m),
           strncmp(info.platform, "Portable Computing Language", 27) == 0 &&
               (info.type & CL_DEVICE_TYPE_CPU) != 0);
    o2r_model_free(m);
    o2r_ctx_free(ctx);
    FILE *f = fopen(out, "wb");
    int ok = f && fwrite(o, sizeof o, 1, f) == 1 && fwrite(g, sizeof g, 1, f) == 1;
    if (f)
        fclose(f);
    return ok ? 0 : 4;
}

struct result {
    int rc;
    unsigned ahead;
    int pocl_cpu;
    int building; /* the progress line was printed */
};

/* Runs the child with $ONNX2CL_BUILD_AHEAD=mode (NULL: unset) and $POCL_CACHE_DIR=g_tmp/cache. */
static struct result run_child(const char *exe, const char *mode, const char *cache,
                               const char *tag)
{
    char cmd[2048], path[600];
    struct result r = {-1, 0, -1, 0};
    snprintf(cmd, sizeof cmd,
             "%s%s%s POCL_CACHE_DIR='%s/%s' ONNX2CL_CACHE_DIR='%s/o2c' '%s' child '%s/%s.out' "
             "'%s' > '%s/%s.stdout' 2> '%s/%s.stderr'",
             mode ? "ONNX2CL_BUILD_AHEAD='" : "env -u ONNX2CL_BUILD_AHEAD", mode ? mode : "",
             mode ? "'" : "", g_tmp, cache, g_tmp, exe, g_tmp, tag, g_wpath, g_tmp, tag, g_tmp,
             tag);
    r.rc = system(cmd);
    snprintf(path, sizeof path, "%s/%s.stdout", g_tmp, tag);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "ahead=%u pocl_cpu=%d", &r.ahead, &r.pocl_cpu) != 2)
            r.pocl_cpu = -1;
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/%s.stderr", g_tmp, tag);
    f = fopen(path, "r");
    if (f) {
        char line[1024];
        while (fgets(line, sizeof line, f)) {
            r.building |= strstr(line, "kernels ahead of the first run") != NULL;
            if (r.rc)
                fputs(line, stderr);
        }
        fclose(f);
    }
    return r;
}

static int same_file(const char *a, const char *b)
{
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/%s", g_tmp, a);
    snprintf(pb, sizeof pb, "%s/%s", g_tmp, b);
    FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        same = ca == cb;
        if (ca == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* The compiled kernel specializations in PoCL cache folder `cache` (kernel/local-size-flags
 * paths, sorted), into buf. */
static void pocl_kernels(const char *cache, char *buf, size_t cap)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd,
             "cd '%s/%s' 2>/dev/null && find . -name '*.so' | sed 's|^\\./[^/]*/[^/]*/||' | sort",
             g_tmp, cache);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    buf[0] = 0;
    if (!p)
        return;
    n = fread(buf, 1, cap - 1, p);
    buf[n] = 0;
    pclose(p);
}

int main(int argc, char **argv)
{
    for (int i = 0; i < 1024; i++)
        g_w[i] = (float)(i % 13) * 0.5f - 3.0f;
    g_desc.weights_checksum = o2r_weights_checksum(g_w, sizeof g_w);
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        snprintf(g_wpath, sizeof g_wpath, "%s", argv[3]);
        return child(argv[2]);
    }
    snprintf(g_tmp, sizeof g_tmp, "/tmp/o2c_build_ahead_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(g_wpath, sizeof g_wpath, "%s/ahead.weights", g_tmp);
    write_weights(g_wpath);

    struct result off = run_child(argv[0], "off", "pocl_off", "off");
    CHECK(off.rc == 0, "off: child exit %d", off.rc);
    CHECK(off.ahead == 0, "off: %u warm-up launches", off.ahead);
    CHECK(!off.building, "off: progress line printed");

    struct result on = run_child(argv[0], "on", "pocl_on", "on");
    CHECK(on.rc == 0, "on: child exit %d", on.rc);
    CHECK(on.ahead == 5, "on: %u warm-up launches, want 5", on.ahead);
    CHECK(same_file("off.out", "on.out"), "on: outputs differ from off's");
    if (on.pocl_cpu == 1) {
        static char koff[8192], kon[8192];
        pocl_kernels("pocl_off", koff, sizeof koff);
        pocl_kernels("pocl_on", kon, sizeof kon);
        CHECK(on.building, "on, cold PoCL cache: no progress line");
        CHECK(koff[0] && strcmp(koff, kon) == 0,
              "PoCL compiled other specializations with build ahead:\n--- off\n%s--- on\n%s", koff,
              kon);
    }

    struct result warm = run_child(argv[0], "1", "pocl_on", "warm");
    CHECK(warm.rc == 0, "warm: child exit %d", warm.rc);
    CHECK(warm.ahead == 5, "warm: %u warm-up launches, want 5", warm.ahead);
    CHECK(!warm.building, "warm cache: progress line printed");
    CHECK(same_file("off.out", "warm.out"), "warm: outputs differ from off's");

    struct result au = run_child(argv[0], NULL, "pocl_on", "auto");
    CHECK(au.rc == 0, "auto: child exit %d", au.rc);
    CHECK((au.ahead == 5) == (au.pocl_cpu == 1), "auto: %u warm-up launches, PoCL CPU %d",
          au.ahead, au.pocl_cpu);
    CHECK(same_file("off.out", "auto.out"), "auto: outputs differ from off's");

    /* a bad value is refused at init, naming the variable */
    setenv("ONNX2CL_BUILD_AHEAD", "sometimes", 1);
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    if (o2r_ctx_create(NULL, &ctx) == O2R_OK) {
        o2r_status st = o2r_model_init(ctx, &g_desc, g_wpath, &m);
        CHECK(st == O2R_ERR_ARG && strstr(o2r_ctx_last_error(ctx), "ONNX2CL_BUILD_AHEAD"),
              "bad value: status %d, '%s'", (int)st, o2r_ctx_last_error(ctx));
        o2r_model_free(m);
        o2r_ctx_free(ctx);
    }
    unsetenv("ONNX2CL_BUILD_AHEAD");

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_tmp);
    return rt_test_done("runtime.build_ahead");
}
