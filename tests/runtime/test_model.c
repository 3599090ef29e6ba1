/* test_model.c — end-to-end tests of the OpenCL runtime with a hand-written model descriptor.
 *
 * What: a two-launch model (t = a*x + b; y = t*c + x, with a and c in the weights region, x, t,
 * y in the arena at non-zero sub-buffer offsets, arguments of every kind: BUF, I32, I64, F32,
 * LOCAL; one launch with an explicit local size) is initialized and run on the default OpenCL
 * device (PoCL in CI). Checked: output values against a host computation (tolerance: abs 1e-5
 * + rel 1e-5, both required to fail; the kernels use plain float mul/add), the program binary
 * cache (miss + file written on first init, hit on the second, a corrupt entry is rebuilt and
 * rewritten, an unusable cache folder is not an error), weights files (wrong checksum, wrong
 * model hash, corrupt payload, truncated, bad magic, missing -> the right status and message),
 * build failures (build log + options in the message), enqueue failures (CL error name + node),
 * injected CL and allocation failures (clean error, no crash), device selection, profiling
 * output and the o2r_main CLI (inputs/outputs, name checks, --output-dir, --bench, default
 * weights path, exit codes), run-time checks (o2r_launch.check), allocation splitting under $ONNX2CL_MAX_ALLOC (chunk counts, values,
 * bad values, a tensor over the limit, a need over $ONNX2CL_GLOBAL_MEM).
 * Assumes: an OpenCL device; RT_TEST_DATA unused; writes only under a mkdtemp folder and the
 * test executable's own "<exe>.weights".
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx2cl_rt.h"
#include "rt_internal.h"
#include "rt_test.h"

#define N 1000
#define HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char k_source[] =
    "__kernel void axpb(__global const float *x, __global const float *a, __global float *t,\n"
    "                   float b, int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) t[i] = a[i] * x[i] + b;\n"
    "}\n"
    "__kernel void mul_add(__global const float *t, __global const float *c,\n"
    "                      __global const float *x, __global float *y, long n,\n"
    "                      __local float *scratch) {\n"
    "    size_t i = get_global_id(0), l = get_local_id(0);\n"
    "    scratch[l] = i < n ? t[i] * c[i] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (i < n) y[i] = scratch[l] + x[i];\n"
    "}\n";

/* buffers: 0 x (arena 0), 1 t (arena 4096), 2 y (arena 8192), 3 a (weights 0), 4 c (weights 4096) */
static const struct o2r_buffer k_buffers[] = {
    {0, N * 4, O2R_SPACE_ARENA, "x", 0},    {4096, N * 4, O2R_SPACE_ARENA, "t", 0},
    {8192, N * 4, O2R_SPACE_ARENA, "y", 0}, {0, N * 4, O2R_SPACE_WEIGHTS, "a", 0},
    {4096, N * 4, O2R_SPACE_WEIGHTS, "c", 0},
};
static struct o2r_arg k_args[] = {
    {O2R_ARG_BUF, {.buf = 0}}, {O2R_ARG_BUF, {.buf = 3}}, {O2R_ARG_BUF, {.buf = 1}},
    {O2R_ARG_F32, {.f32 = 0.5f}}, {O2R_ARG_I32, {.i32 = N}},
    {O2R_ARG_BUF, {.buf = 1}}, {O2R_ARG_BUF, {.buf = 4}}, {O2R_ARG_BUF, {.buf = 0}},
    {O2R_ARG_BUF, {.buf = 2}}, {O2R_ARG_I64, {.i64 = N}}, {O2R_ARG_LOCAL, {.local_bytes = 8 * 4}},
};
static struct o2r_launch k_launches[] = {
    {"axpb", 1, {N, 0, 0}, {0, 0, 0}, 0, 5, "n1_mul_add_b", "Mul", 0, NULL},
    {"mul_add", 1, {N, 0, 0}, {8, 0, 0}, 5, 6, "n2_mul_add_x", "Add", 0, NULL},
};
static const struct o2r_io k_inputs[] = {{"x", O2R_F32, 1, {N}, 0, N * 4}};
static const struct o2r_io k_outputs[] = {
    {"y/out", O2R_F32, 2, {10, N / 10}, 2, N * 4},
    {"t", O2R_F32, 1, {N}, 1, N * 4},
};
static const struct o2r_stored k_stored[] = {
    {3, "float32 [1000] tensor", "n1_mul_add_b"}, {4, "float32 [1000] tensor", "n2_mul_add_x"},
};
static struct o2r_model_desc g_desc = {
    O2R_ABI_VERSION, "tiny", HASH, k_source, sizeof k_source - 1, "-cl-mad-enable -DUNUSED=1",
    8192 + N * 4, 4096 + N * 4, 0 /* checksum, set in main */,
    5, k_buffers, 11, k_args, 2, k_launches, 1, k_inputs, 2, k_outputs, 0, NULL, 0, NULL, O2R_F32,
    4096 + N * 4, NULL, 2, k_stored, 0, NULL,
};

static char g_tmp[256];     /* temporary folder */
static char g_wpath[512];   /* good weights file */
static float g_x[N];        /* input */
static float g_payload[2048]; /* weights payload: a at 0, c at 4096 bytes */

static void expected(float *y, float *t)
{
    const float *a = g_payload, *c = g_payload + 1024;
    for (int i = 0; i < N; i++) {
        t[i] = a[i] * g_x[i] + 0.5f;
        y[i] = t[i] * c[i] + g_x[i];
    }
}

static int close_enough(const float *got, const float *want, int n)
{
    for (int i = 0; i < n; i++) {
        float d = fabsf(got[i] - want[i]);
        if (!(d <= 1e-5f || d <= 1e-5f * fabsf(want[i]))) {
            fprintf(stderr, "  [%d] got %g want %g\n", i, got[i], want[i]);
            return 0;
        }
    }
    return 1;
}

/* Writes a weights file with the given header fields and payload length. */
static void write_weights(const char *path, const char *magic, uint32_t version, uint64_t payload,
                          uint64_t checksum, const char *hash, size_t write_payload, int flip)
{
    unsigned char hdr[O2R_WEIGHTS_HEADER];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, magic, 8);
    memcpy(hdr + 8, &version, 4);
    memcpy(hdr + 16, &payload, 8);
    memcpy(hdr + 24, &checksum, 8);
    memcpy(hdr + 32, hash, strlen(hash) < 64 ? strlen(hash) : 64);
    uint32_t wdt = O2R_F32;
    uint64_t layout = o2r_desc_layout_hash(&g_desc);
    memcpy(hdr + 12, &wdt, 4);
    memcpy(hdr + 96, &layout, 8);
    FILE *f = fopen(path, "wb");
    fwrite(hdr, 1, sizeof hdr, f);
    unsigned char *p = malloc(write_payload + 1);
    memcpy(p, g_payload, write_payload);
    if (flip && write_payload)
        p[write_payload / 2] ^= 1;
    fwrite(p, 1, write_payload, f);
    free(p);
    fclose(f);
}

/* ctx + init + run + free; returns the first failing status, message in msg. */
static o2r_status full_run(const struct o2r_model_desc *d, const char *wpath, char *msg,
                           size_t cap, int *hit, float *y, float *t)
{
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    o2r_status st = o2r_ctx_create(NULL, &ctx);
    msg[0] = 0;
    if (st != O2R_OK) {
        snprintf(msg, cap, "%s", o2r_ctx_last_error(NULL));
        return st;
    }
    st = o2r_model_init(ctx, d, wpath, &m);
    if (st == O2R_OK) {
        if (hit)
            *hit = o2r_model_cache_hit(m);
        const void *ins[1] = {g_x};
        void *outs[2] = {y, t};
        st = o2r_model_run(m, ins, outs);
    }
    if (st != O2R_OK)
        snprintf(msg, cap, "%s", o2r_ctx_last_error(ctx));
    o2r_model_free(m);
    o2r_ctx_free(ctx);
    return st;
}

static int count_clbin(const char *dir, off_t *size)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s'/*.clbin 2>/dev/null | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    if (size) {
        snprintf(cmd, sizeof cmd, "stat -c %%s '%s'/*.clbin 2>/dev/null | head -1", dir);
        p = popen(cmd, "r");
        long long s = 0;
        if (p) {
            if (fscanf(p, "%lld", &s) != 1)
                s = -1;
            pclose(p);
        }
        *size = (off_t)s;
    }
    return n;
}

static void test_run_and_cache(void)
{
    char dir[512], msg[O2R_ERR_CAP], cmd[700];
    float y[N], t[N], ey[N], et[N];
    int hit = -1;
    expected(ey, et);
    snprintf(dir, sizeof dir, "%s/cache", g_tmp);
    setenv("ONNX2CL_CACHE_DIR", dir, 1);
    setenv("ONNX2CL_CACHE", "always", 1); /* PoCL caches builds itself: auto stores nothing */
    memset(y, 0, sizeof y);
    o2r_status st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK, "first run: %s", msg);
    CHECK(hit == 0, "first init should miss the cache");
    CHECK(close_enough(y, ey, N) && close_enough(t, et, N), "values (first run)");
    off_t size1 = 0;
    CHECK(count_clbin(dir, &size1) == 1 && size1 > 16, "cache file not written (%lld bytes)",
          (long long)size1);
    memset(y, 0, sizeof y);
    st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 1, "second init should hit the cache: %s", msg);
    CHECK(close_enough(y, ey, N) && close_enough(t, et, N), "values (cached program)");
    /* corrupt the cache entry: rebuilt from source, rewritten */
    snprintf(cmd, sizeof cmd, "for f in '%s'/*.clbin; do head -c 40 \"$f\" > \"$f.x\"; "
             "printf garbage >> \"$f.x\"; mv \"$f.x\" \"$f\"; done", dir);
    CHECK(system(cmd) == 0, "corrupting the cache");
    st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 0, "corrupt cache entry should be rebuilt: %s", msg);
    off_t size2 = 0;
    /* (PoCL binaries differ in size between builds, so only check it is no longer the
     * 47-byte corrupt file) */
    CHECK(count_clbin(dir, &size2) == 1 && size2 > 100, "entry not rewritten (%lld bytes)",
          (long long)size2);
    st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 1, "rewritten entry should hit: %s", msg);
    /* damage the blob in place, same size (a disk error, a partial overwrite): the checksum
     * must catch it before the driver sees it (PoCL segfaults or asserts on such a binary) */
    snprintf(cmd, sizeof cmd, "for f in '%s'/*.clbin; do head -c 512 /dev/zero | tr '\\0' '\\245' | "
             "dd of=\"$f\" bs=1 seek=40 conv=notrunc status=none; done", dir);
    CHECK(system(cmd) == 0, "damaging the cache");
    off_t size3 = 0;
    CHECK(count_clbin(dir, &size3) == 1 && size3 == size2, "damage changed the size");
    memset(y, 0, sizeof y);
    st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 0, "damaged cache entry should be rebuilt: %s", msg);
    CHECK(close_enough(y, ey, N) && close_enough(t, et, N), "values (after a damaged entry)");
    st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 1, "entry rewritten after damage should hit: %s", msg);
    /* different build options -> different key */
    struct o2r_model_desc d2 = g_desc;
    d2.build_options = "-cl-mad-enable -DUNUSED=2";
    st = full_run(&d2, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 0 && count_clbin(dir, NULL) == 2, "options not in key");
    /* unusable cache folder: no error */
    setenv("ONNX2CL_CACHE_DIR", "/dev/null/cache", 1);
    st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 0, "unusable cache dir: %s", msg);
    CHECK(close_enough(y, ey, N), "values (no cache)");
    /* default (auto): on PoCL, whose kernel cache keeps every build, no binary is stored or read
     * (storing one costs PoCL a compile of every kernel); elsewhere the binary cache is used */
    char dir2[600];
    snprintf(dir2, sizeof dir2, "%s/cache_auto", g_tmp);
    setenv("ONNX2CL_CACHE_DIR", dir2, 1);
    unsetenv("ONNX2CL_CACHE");
    st = full_run(&g_desc, g_wpath, msg, sizeof msg, &hit, y, t);
    CHECK(st == O2R_OK && hit == 0, "auto cache mode: %s", msg);
    CHECK(close_enough(y, ey, N), "values (auto cache mode)");
    struct o2r_ctx *c = NULL;
    CHECK(o2r_ctx_create(NULL, &c) == O2R_OK, "context");
    const char *dev = c ? o2r_ctx_device_name(c) : "";
    const int pocl = strstr(dev, "Portable Computing Language") != NULL;
    CHECK(count_clbin(dir2, NULL) == (pocl ? 0 : 1), "auto cache mode on %s stored %d binaries",
          dev, count_clbin(dir2, NULL));
    o2r_ctx_free(c);
    setenv("ONNX2CL_CACHE", "always", 1);
    setenv("ONNX2CL_CACHE_DIR", dir, 1);
}

static void test_weights_errors(void)
{
    char path[600], msg[O2R_ERR_CAP];
    float y[N], t[N];
    uint64_t ck = g_desc.weights_checksum, pl = g_desc.weights_bytes;
    static const struct {
        const char *what, *magic, *hash;
        uint32_t version;
        int wrong_ck, flip, short_payload, tiny;
        o2r_status want;
        const char *expect;
    } cases[] = {
        {"checksum", O2R_WEIGHTS_MAGIC, HASH, O2R_WEIGHTS_VERSION, 1, 0, 0, 0, O2R_ERR_FORMAT,
         "is corrupt: payload checksum"},
        {"corrupt", O2R_WEIGHTS_MAGIC, HASH, O2R_WEIGHTS_VERSION, 0, 1, 0, 0, O2R_ERR_FORMAT, "is corrupt"},
        {"truncated", O2R_WEIGHTS_MAGIC, HASH, O2R_WEIGHTS_VERSION, 0, 0, 1, 0, O2R_ERR_FORMAT, "truncated"},
        {"magic", "NOTWTS!", HASH, O2R_WEIGHTS_VERSION, 0, 0, 0, 0, O2R_ERR_FORMAT, "bad magic"},
        {"version", O2R_WEIGHTS_MAGIC, HASH, 7, 0, 0, 0, 0, O2R_ERR_FORMAT, "version 7"},
        {"version1", O2R_WEIGHTS_MAGIC, HASH, 1, 0, 0, 0, 0, O2R_ERR_FORMAT, "format version 1"},
        {"version2", O2R_WEIGHTS_MAGIC, HASH, 2, 0, 0, 0, 0, O2R_ERR_FORMAT,
         "format version 2, this runtime reads version 3, whose files serve every --shape build"},
        {"tiny", O2R_WEIGHTS_MAGIC, HASH, O2R_WEIGHTS_VERSION, 0, 0, 0, 1, O2R_ERR_FORMAT, "shorter than"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/bad_%s.weights", g_tmp, cases[i].what);
        write_weights(path, cases[i].magic, cases[i].version, pl, cases[i].wrong_ck ? ck ^ 1 : ck,
                      cases[i].hash, cases[i].short_payload ? (size_t)pl - 100 : (size_t)pl,
                      cases[i].flip);
        if (cases[i].tiny)
            CHECK(truncate(path, 100) == 0, "truncate");
        o2r_status st = full_run(&g_desc, path, msg, sizeof msg, NULL, y, t);
        CHECK(st == cases[i].want && strstr(msg, cases[i].expect) && strstr(msg, path),
              "weights %s: status %d, '%s'", cases[i].what, st, msg);
    }
    /* weights layout hash (header offset 96): equal to the model's -> accepted whatever the
     * model hash and the desc's checksum (a fine-tune's weights, another --shape build);
     * another layout hash -> refused */
    {
        float ey[N], et[N];
        expected(ey, et);
        struct o2r_model_desc d2 = g_desc;
        d2.weights_checksum ^= 0x55; /* the build was compiled with other weight values */
        d2.model_hash = "beef";
        for (int k = 0; k < 2; k++) {
            uint64_t lh = k == 0 ? o2r_desc_layout_hash(&d2) : 0x1234;
            snprintf(path, sizeof path, "%s/layout_hash_%d.weights", g_tmp, k);
            write_weights(path, O2R_WEIGHTS_MAGIC, O2R_WEIGHTS_VERSION, pl, ck, "feedface",
                          (size_t)pl, 0);
            FILE *f = fopen(path, "r+b");
            CHECK(f && fseek(f, 96, SEEK_SET) == 0 && fwrite(&lh, 8, 1, f) == 1, "patch %s", path);
            if (f)
                fclose(f);
            memset(y, 0, sizeof y);
            o2r_status st = full_run(&d2, path, msg, sizeof msg, NULL, y, t);
            if (k == 0)
                CHECK(st == O2R_OK && close_enough(y, ey, N), "same layout hash: %d '%s'", st, msg);
            else
                CHECK(st == O2R_ERR_MISMATCH && strstr(msg, "does not fit model 'tiny'") &&
                          strstr(msg, "weights layout hash is 0000000000001234"),
                      "other layout hash: '%s'", msg);
        }
        /* names, nodes, values, kernels and activation shapes are not part of the layout hash;
         * a tensor's layout string, offset or size and the storage dtype are */
        struct o2r_buffer b2[5];
        struct o2r_stored s2[2];
        memcpy(b2, k_buffers, sizeof b2);
        memcpy(s2, k_stored, sizeof s2);
        b2[3].name = "renamed";
        s2[1].node = "other node";
        d2.buffers = b2;
        d2.stored = s2;
        d2.arena_bytes += 4096;
        CHECK(o2r_desc_layout_hash(&d2) == o2r_desc_layout_hash(&g_desc), "names, node and arena "
              "are not part of the layout hash");
        s2[1].layout = "float32 [1000] panels";
        CHECK(o2r_desc_layout_hash(&d2) != o2r_desc_layout_hash(&g_desc), "layout kind");
        s2[1].layout = k_stored[1].layout;
        b2[4].offset += 512;
        CHECK(o2r_desc_layout_hash(&d2) != o2r_desc_layout_hash(&g_desc), "offset");
        b2[4].offset -= 512;
        d2.weights_dtype = O2R_F16;
        CHECK(o2r_desc_layout_hash(&d2) != o2r_desc_layout_hash(&g_desc), "storage dtype");
        /* layout trailer: names the first stored tensor where the layouts differ; malformed ones
         * (a count past the end, names without a final NUL, another version or magic) only lose
         * the hint */
        static const struct {
            const char *magic;
            uint32_t ver, n;
            int bad_names;
            const char *want;
        } tr[] = {
            {O2R_WEIGHTS_TRAILER_MAGIC, 2, 2, 0, "they first differ at stored tensor 1: 'c' (node "
                                                 "'n2_mul_add_x') is float32 [1000] tensor at payload "
                                                 "offset 4096 here, the file has 'cc' (node 'other'), "
                                                 "float16 [999] fconv_v8"},
            {O2R_WEIGHTS_TRAILER_MAGIC, 2, 1, 0, "the first 1 stored tensors agree, then the file "
                                                 "has 1 tensors and model 'tiny' 2"},
            {O2R_WEIGHTS_TRAILER_MAGIC, 2, 0x7fffffff, 0, NULL},
            {O2R_WEIGHTS_TRAILER_MAGIC, 2, 2, 1, NULL},
            {O2R_WEIGHTS_TRAILER_MAGIC, 1, 2, 0, NULL},
            {"NOTBLD!", 2, 2, 0, NULL},
        };
        for (size_t k = 0; k < sizeof tr / sizeof tr[0]; k++) {
            snprintf(path, sizeof path, "%s/trailer_%zu.weights", g_tmp, k);
            write_weights(path, O2R_WEIGHTS_MAGIC, O2R_WEIGHTS_VERSION, pl, ck, HASH, (size_t)pl, 0);
            FILE *f = fopen(path, "r+b");
            uint64_t lh = 0x1234, hs[2] = {o2r_stored_hash(&g_desc, 0), 99};
            static const char names2[] = "a\0n1_mul_add_b\0float32 [1000] tensor\0"
                                         "cc\0other\0float16 [999] fconv_v8";
            static const char names1[] = "a\0n1_mul_add_b\0float32 [1000] tensor";
            const char *names = tr[k].n == 1 ? names1 : names2;
            const size_t names_size = tr[k].n == 1 ? sizeof names1 : sizeof names2;
            uint32_t ver = tr[k].ver, n = tr[k].n;
            uint64_t nb = tr[k].bad_names ? names_size - 1 : names_size;
            int ok = f && fseek(f, 96, SEEK_SET) == 0 && fwrite(&lh, 8, 1, f) == 1 &&
                     fseek(f, 0, SEEK_END) == 0 && fwrite(tr[k].magic, 1, 8, f) == 8 &&
                     fwrite(&ver, 4, 1, f) == 1 && fwrite(&n, 4, 1, f) == 1 &&
                     fwrite(&nb, 8, 1, f) == 1 &&
                     fwrite(hs, 8, tr[k].n == 1 ? 1 : 2, f) == (tr[k].n == 1 ? 1u : 2u) &&
                     fwrite(names, 1, (size_t)nb, f) == (size_t)nb;
            CHECK(ok, "trailer %zu: write", k);
            if (f)
                fclose(f);
            o2r_status st = full_run(&g_desc, path, msg, sizeof msg, NULL, y, t);
            CHECK(st == O2R_ERR_MISMATCH && strstr(msg, "weights layout hash is 0000000000001234") &&
                      (tr[k].want ? strstr(msg, tr[k].want) != NULL
                                  : strstr(msg, "differ at") == NULL && strstr(msg, "agree") == NULL),
                  "trailer %zu: %d '%s'", k, st, msg);
        }
    }
    o2r_status st = full_run(&g_desc, "/nonexistent/w.weights", msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_IO && strstr(msg, "/nonexistent/w.weights"), "missing: %s", msg);
    st = full_run(&g_desc, NULL, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_ARG && strstr(msg, "needs a weights file"), "NULL path: %s", msg);
}

/* Reference for o2r_repack_conv: element (o, ci, kh, kw) of an ONNX conv weight w [OC, cin, KH,
 * KW] at its place in the direct (flat = 0) or flat form with ocb channels per panel. */
static int64_t conv_index(int64_t o, int64_t ci, int64_t kh, int64_t kw, int64_t cin, int64_t KH,
                          int64_t KW, int64_t ocb, int flat)
{
    return (flat ? (((o / ocb) * cin + ci) * KH + kh) * KW + kw
                 : (((o / ocb) * KH + kh) * cin + ci) * KW + kw) * ocb + o % ocb;
}

/* o2r_repack_conv (runtime/repack.c) against conv_index on odd sizes, both element sizes, a
 * padded channel count; then on the device: a build whose weight 'a' is rearranged at load
 * (flat form of a 40x5x5x1 "conv") and whose 'c' is one of the build's constants (const_data,
 * not in the weights file, which then holds 'a' only). */
static void test_repack_and_consts(void)
{
    static const struct {
        int64_t oc, cin, kh, kw;
        uint32_t es, so, to, flat;
    } cs[] = {
        {32, 3, 3, 2, 4, 8, 16, 0}, {32, 3, 3, 2, 2, 8, 16, 1}, {36, 5, 1, 3, 4, 8, 8, 1},
        {48, 2, 3, 3, 2, 8, 16, 1}, {20, 7, 2, 1, 4, 4, 4, 1},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        const struct o2r_repack r = {0, O2R_REPACK_CONV, cs[c].es, cs[c].so, cs[c].to, cs[c].flat,
                                     cs[c].oc, cs[c].cin, cs[c].kh, cs[c].kw};
        const int64_t k = cs[c].cin * cs[c].kh * cs[c].kw;
        const int64_t padded = (cs[c].oc + cs[c].so - 1) / cs[c].so * cs[c].so;
        unsigned char *src = calloc((size_t)(padded * k), 4), *dst = malloc((size_t)(padded * k * 4));
        unsigned char *want = calloc((size_t)(padded * k), 4);
        int ok = src && dst && want;
        for (int64_t o = 0; ok && o < cs[c].oc; o++)
            for (int64_t ci = 0; ci < cs[c].cin; ci++)
                for (int64_t kh = 0; kh < cs[c].kh; kh++)
                    for (int64_t kw = 0; kw < cs[c].kw; kw++) {
                        uint32_t v = (uint32_t)(((o * 31 + ci) * 7 + kh) * 5 + kw + 1);
                        int64_t si = conv_index(o, ci, kh, kw, cs[c].cin, cs[c].kh, cs[c].kw,
                                                cs[c].so, 0);
                        int64_t ti = conv_index(o, ci, kh, kw, cs[c].cin, cs[c].kh, cs[c].kw,
                                                cs[c].to, (int)cs[c].flat);
                        memcpy(src + si * cs[c].es, &v, cs[c].es);
                        memcpy(want + ti * cs[c].es, &v, cs[c].es);
                    }
        if (ok) {
            memset(dst, 0xab, (size_t)(padded * k * 4));
            o2r_repack_conv(&r, src, dst);
            ok = memcmp(dst, want, (size_t)(padded * k) * cs[c].es) == 0;
        }
        CHECK(ok, "o2r_repack_conv case %zu", c);
        free(src);
        free(dst);
        free(want);
    }
    /* device: 'a' (buffer 3) rearranged at load, 'c' (buffer 4) in const_data */
    struct o2r_buffer b2[5];
    memcpy(b2, k_buffers, sizeof b2);
    const struct o2r_repack rp = {3, O2R_REPACK_CONV, 4, 8, 8, 1, 40, 5, 5, 1};
    struct o2r_model_desc d = g_desc;
    d.buffers = b2;
    d.weights_file_bytes = 4096;
    d.const_data = (const unsigned char *)(g_payload + 1024);
    d.n_stored = 1;
    d.n_repacks = 1;
    d.repacks = &rp;
    char path[600], msg[O2R_ERR_CAP];
    snprintf(path, sizeof path, "%s/file_part.weights", g_tmp);
    unsigned char hdr[O2R_WEIGHTS_HEADER] = {0};
    uint32_t ver = O2R_WEIGHTS_VERSION, wdt = O2R_F32;
    uint64_t pl = 4096, ck = o2r_weights_checksum(g_payload, 4096), lh = o2r_desc_layout_hash(&d);
    memcpy(hdr, O2R_WEIGHTS_MAGIC, 8);
    memcpy(hdr + 8, &ver, 4);
    memcpy(hdr + 12, &wdt, 4);
    memcpy(hdr + 16, &pl, 8);
    memcpy(hdr + 24, &ck, 8);
    memcpy(hdr + 96, &lh, 8);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(hdr, 1, sizeof hdr, f) == sizeof hdr && fwrite(g_payload, 1, 4096, f) == 4096,
          "write %s", path);
    if (f)
        fclose(f);
    float y[N], t[N], ey[N], et[N], a2[1000];
    o2r_repack_conv(&rp, g_payload, a2);
    for (int i = 0; i < N; i++) {
        et[i] = a2[i] * g_x[i] + 0.5f;
        ey[i] = et[i] * g_payload[1024 + i] + g_x[i];
    }
    o2r_status st = full_run(&d, path, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_OK && close_enough(y, ey, N) && close_enough(t, et, N),
          "repacked weight and build constants: %d '%s'", st, msg);
    /* the same with the weights split over allocations (the const part in its own chunk) */
    setenv("ONNX2CL_MAX_ALLOC", "4K", 1);
    st = full_run(&d, path, msg, sizeof msg, NULL, y, t);
    unsetenv("ONNX2CL_MAX_ALLOC");
    CHECK(st == O2R_OK && close_enough(y, ey, N), "split: %d '%s'", st, msg);
    /* a repack that does not fit its buffer is refused before anything is read */
    struct o2r_repack bad = rp;
    bad.cin = 6;
    d.repacks = &bad;
    st = full_run(&d, path, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_ARG && strstr(msg, "repack 0 (buffer 3)"), "bad repack: %d '%s'", st, msg);
}

static void test_build_and_launch_errors(void)
{
    char msg[O2R_ERR_CAP];
    float y[N], t[N];
    struct o2r_model_desc d = g_desc;
    static const char bad_src[] = "__kernel void axpb(__global float *x) { x[0] = undeclared_var; }\n";
    d.kernel_source = bad_src;
    d.kernel_source_len = sizeof bad_src - 1;
    o2r_status st = full_run(&d, g_wpath, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_CL && strstr(msg, "CL_BUILD_PROGRAM_FAILURE") &&
              strstr(msg, "-cl-mad-enable -DUNUSED=1") && strstr(msg, "build log") &&
              strstr(msg, "undeclared_var"), "build failure: %s", msg);
    /* kernel name missing from the program */
    struct o2r_launch ls[2];
    memcpy(ls, k_launches, sizeof ls);
    ls[1].kernel = "no_such_kernel";
    d = g_desc;
    d.launches = ls;
    st = full_run(&d, g_wpath, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_CL && strstr(msg, "clCreateKernel(no_such_kernel, node 'n2_mul_add_x')") &&
              strstr(msg, "CL_INVALID_KERNEL_NAME"), "missing kernel: %s", msg);
    /* local size larger than any device allows */
    memcpy(ls, k_launches, sizeof ls);
    ls[1].gws[0] = 1 << 20;
    ls[1].lws[0] = 1 << 20;
    d.launches = ls;
    st = full_run(&d, g_wpath, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_CL &&
              strstr(msg, "clEnqueueNDRangeKernel(mul_add, node 'n2_mul_add_x'): CL_INVALID_"),
          "bad work-group: %s", msg);
    /* descriptor validation */
    struct o2r_buffer bs[5];
    memcpy(bs, k_buffers, sizeof bs);
    bs[1].offset = 100;
    d = g_desc;
    d.buffers = bs;
    st = full_run(&d, g_wpath, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_ARG && strstr(msg, "buffer 1"), "unaligned buffer: %s", msg);
    d = g_desc;
    d.abi_version = 99;
    st = full_run(&d, g_wpath, msg, sizeof msg, NULL, y, t);
    CHECK(st == O2R_ERR_ARG && strstr(msg, "ABI 99"), "abi: %s", msg);
}

static void test_fault_injection(void)
{
    static const char *fns[] = {"clCreateContext",   "clCreateCommandQueue",
                                "clCreateProgramWithSource", "clBuildProgram",
                                "clCreateKernel",    "clCreateBuffer",
                                "clCreateSubBuffer", "clEnqueueNDRangeKernel"};
    char msg[O2R_ERR_CAP], spec[64];
    float y[N], t[N], ey[N], et[N];
    expected(ey, et);
    setenv("ONNX2CL_NO_CACHE", "1", 1);
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        int failures = 0;
        for (int n = 1; n <= 6; n++) {
            snprintf(spec, sizeof spec, "%s:%d", fns[f], n);
            setenv("ONNX2CL_FAIL_CL", spec, 1);
            o2r_fault_reset();
            o2r_status st = full_run(&g_desc, g_wpath, msg, sizeof msg, NULL, y, t);
            unsetenv("ONNX2CL_FAIL_CL");
            if (st == O2R_OK) {
                CHECK(close_enough(y, ey, N), "%s: wrong values", spec);
                continue;
            }
            failures++;
            CHECK(st == O2R_ERR_CL && strstr(msg, fns[f]) &&
                      (strstr(msg, "CL_OUT_OF_RESOURCES") || strstr(msg, "CL_BUILD_PROGRAM_FAILURE")),
                  "%s: status %d '%s'", spec, st, msg);
        }
        CHECK(failures >= 1, "%s: injection never fired", fns[f]);
    }
    /* host allocation failures: every allocation in ctx/init/run, one at a time */
    int n, fired = 0;
    for (n = 1; n < 200; n++) {
        char v[16];
        snprintf(v, sizeof v, "%d", n);
        setenv("ONNX2CL_FAIL_ALLOC", v, 1);
        o2r_fault_reset();
        o2r_status st = full_run(&g_desc, g_wpath, msg, sizeof msg, NULL, y, t);
        unsetenv("ONNX2CL_FAIL_ALLOC");
        if (st == O2R_OK) {
            CHECK(close_enough(y, ey, N), "alloc %d: wrong values", n);
            break;
        }
        fired++;
        CHECK(st == O2R_ERR_NOMEM && strstr(msg, "out of host memory"), "alloc %d: %d '%s'", n,
              st, msg);
    }
    CHECK(fired >= 5 && n < 200, "allocation injection: %d failures before success", fired);
    o2r_fault_reset();
    unsetenv("ONNX2CL_NO_CACHE");
}

static void test_device_and_profile(void)
{
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    char spec[64];
    CHECK(o2r_ctx_create("999", &ctx) == O2R_ERR_NODEVICE && !ctx &&
              strstr(o2r_ctx_last_error(NULL), "available devices"), "index 999: %s",
          o2r_ctx_last_error(NULL));
    CHECK(o2r_ctx_create("no-such-device-name", &ctx) == O2R_ERR_NODEVICE, "bad name");
    CHECK(o2r_ctx_create("0", &ctx) == O2R_OK, "index 0: %s", o2r_ctx_last_error(NULL));
    if (!ctx)
        return;
    /* substring of the device part, upper-cased: matches case-insensitively */
    const char *name = o2r_ctx_device_name(ctx);
    const char *dev = strstr(name, " / ");
    snprintf(spec, sizeof spec, "%.6s", dev ? dev + 3 : name);
    for (char *p = spec; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    struct o2r_ctx *c2 = NULL;
    CHECK(o2r_ctx_create(spec, &c2) == O2R_OK, "spec '%s' for '%s': %s", spec, name,
          o2r_ctx_last_error(NULL));
    o2r_ctx_free(c2);
    setenv("ONNX2CL_DEVICE", "999", 1);
    CHECK(o2r_ctx_create(NULL, &c2) == O2R_ERR_NODEVICE &&
              strstr(o2r_ctx_last_error(NULL), "$ONNX2CL_DEVICE"), "env: %s",
          o2r_ctx_last_error(NULL));
    unsetenv("ONNX2CL_DEVICE");
    CHECK(o2r_model_init(ctx, &g_desc, g_wpath, &m) == O2R_OK, "%s", o2r_ctx_last_error(ctx));
    if (!m)
        goto done;
    float y[N], t[N];
    const void *ins[1] = {g_x};
    void *outs[2] = {y, t};
    CHECK(o2r_model_set_profiling(m, 1) == O2R_OK, "profiling");
    CHECK(o2r_model_run(m, ins, outs) == O2R_OK, "%s", o2r_ctx_last_error(ctx));
    CHECK(o2r_model_run(m, ins, outs) == O2R_OK, "%s", o2r_ctx_last_error(ctx));
    char path[600];
    snprintf(path, sizeof path, "%s/profile.txt", g_tmp);
    FILE *f = fopen(path, "w+");
    o2r_model_print_profile(m, f);
    rewind(f);
    char text[8192] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    CHECK(strstr(text, "2 launches") && strstr(text, "Mul") && strstr(text, "Add") &&
              strstr(text, "n1_mul_add_b") && strstr(text, "n2_mul_add_x") &&
              strstr(text, "total"), "profile text:\n%s", text);
    /* NULL input pointer -> O2R_ERR_ARG naming the input */
    const void *nul[1] = {NULL};
    CHECK(o2r_model_run(m, nul, outs) == O2R_ERR_ARG && strstr(o2r_ctx_last_error(ctx), "'x'"),
          "NULL input: %s", o2r_ctx_last_error(ctx));
done:
    o2r_model_free(m);
    o2r_ctx_free(ctx);
}

/* A model without weights (weights_bytes 0, no file), plus a launch with gws 0 (skipped). */
static void test_no_weights(void)
{
    static const struct o2r_buffer bufs[] = {{0, N * 4, O2R_SPACE_ARENA, NULL, 0},
                                             {4608, N * 4, O2R_SPACE_ARENA, NULL, 0}};
    static const struct o2r_arg args[] = {
        {O2R_ARG_BUF, {.buf = 0}}, {O2R_ARG_BUF, {.buf = 0}}, {O2R_ARG_BUF, {.buf = 1}},
        {O2R_ARG_F32, {.f32 = -1.0f}}, {O2R_ARG_I32, {.i32 = N}},
    };
    static const struct o2r_launch launches[] = {
        {"axpb", 1, {N, 0, 0}, {0, 0, 0}, 0, 5, "sq", "Mul", 0, NULL},
        {"axpb", 2, {N, 0, 0}, {0, 0, 0}, 0, 5, "empty", "Mul", 0, NULL}, /* gws[1] == 0: skipped */
    };
    static const struct o2r_io ins[] = {{"x", O2R_F32, 1, {N}, 0, N * 4}};
    static const struct o2r_io outs[] = {{"t", O2R_F32, 1, {N}, 1, N * 4}};
    struct o2r_model_desc d = {
        O2R_ABI_VERSION, "noweights", HASH, k_source, sizeof k_source - 1, "", 4608 + N * 4, 0,
        0, 2, bufs, 5, args, 2, launches, 1, ins, 1, outs, 0, NULL, 0, NULL, O2R_F32,
        0, NULL, 0, NULL, 0, NULL,
    };
    char msg[O2R_ERR_CAP];
    float t[N], want[N];
    for (int i = 0; i < N; i++)
        want[i] = g_x[i] * g_x[i] - 1.0f;
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    CHECK(o2r_ctx_create(NULL, &ctx) == O2R_OK, "%s", o2r_ctx_last_error(NULL));
    if (!ctx)
        return;
    o2r_status st = o2r_model_init(ctx, &d, NULL, &m);
    snprintf(msg, sizeof msg, "%s", o2r_ctx_last_error(ctx));
    CHECK(st == O2R_OK, "init without weights: %s", msg);
    if (m) {
        const void *in[1] = {g_x};
        void *out[1] = {t};
        CHECK(o2r_model_run(m, in, out) == O2R_OK, "%s", o2r_ctx_last_error(ctx));
        CHECK(close_enough(t, want, N), "values (no weights)");
    }
    o2r_model_free(m);
    o2r_ctx_free(ctx);
}

/* Run-time checks (o2r_launch.check): the model squares x into t, then a check reads the bool
 * input 'c' and stops the run when it is 0 (fail_if 0), then y = t*t - 1. c = 1: the run gives
 * y; c = 0: O2R_ERR_UNSUPPORTED with the check's message as the last error. A malformed check
 * (a kernel name as well, one argument, fail_if 2) is refused at init (O2R_ERR_ARG). */
static void test_checks(void)
{
    static const struct o2r_buffer bufs[] = {{0, N * 4, O2R_SPACE_ARENA, "x", 0},
                                             {4608, 1, O2R_SPACE_ARENA, "c", 0},
                                             {5120, N * 4, O2R_SPACE_ARENA, "t", 0},
                                             {9728, N * 4, O2R_SPACE_ARENA, "y", 0}};
    static struct o2r_arg args[] = {
        {O2R_ARG_BUF, {.buf = 0}}, {O2R_ARG_BUF, {.buf = 0}}, {O2R_ARG_BUF, {.buf = 2}},
        {O2R_ARG_F32, {.f32 = 0.0f}}, {O2R_ARG_I32, {.i32 = N}},
        {O2R_ARG_BUF, {.buf = 1}}, {O2R_ARG_I32, {.i32 = 0}},
        {O2R_ARG_BUF, {.buf = 2}}, {O2R_ARG_BUF, {.buf = 2}}, {O2R_ARG_BUF, {.buf = 3}},
        {O2R_ARG_F32, {.f32 = -1.0f}}, {O2R_ARG_I32, {.i32 = N}},
    };
    static struct o2r_launch launches[] = {
        {"axpb", 1, {N, 0, 0}, {0, 0, 0}, 0, 5, "sq", "Mul", 0, NULL},
        {NULL, 1, {1, 1, 1}, {1, 1, 1}, 5, 2, "if0", "If", 0, "node 'if0' (If, #0): no fit"},
        {"axpb", 1, {N, 0, 0}, {0, 0, 0}, 7, 5, "sq2", "Mul", 0, NULL},
    };
    static const struct o2r_io ins[] = {{"x", O2R_F32, 1, {N}, 0, N * 4},
                                        {"c", O2R_BOOL, 0, {0}, 1, 1}};
    static const struct o2r_io outs[] = {{"y", O2R_F32, 1, {N}, 3, N * 4}};
    struct o2r_model_desc d = {
        O2R_ABI_VERSION, "checks", HASH, k_source, sizeof k_source - 1, "", 9728 + N * 4, 0,
        0, 4, bufs, 12, args, 3, launches, 2, ins, 1, outs, 0, NULL, 0, NULL, O2R_F32,
        0, NULL, 0, NULL, 0, NULL,
    };
    float y[N], want[N];
    for (int i = 0; i < N; i++)
        want[i] = g_x[i] * g_x[i] * g_x[i] * g_x[i] - 1.0f;
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    CHECK(o2r_ctx_create(NULL, &ctx) == O2R_OK, "%s", o2r_ctx_last_error(NULL));
    if (!ctx)
        return;
    CHECK(o2r_model_init(ctx, &d, NULL, &m) == O2R_OK, "init with a check: %s",
          o2r_ctx_last_error(ctx));
    if (m) {
        const unsigned char yes = 1, no = 0;
        const void *in_yes[2] = {g_x, &yes}, *in_no[2] = {g_x, &no};
        void *out[1] = {y};
        CHECK(o2r_model_run(m, in_yes, out) == O2R_OK, "c = 1: %s", o2r_ctx_last_error(ctx));
        CHECK(close_enough(y, want, N), "values after a check that passes");
        o2r_status st = o2r_model_run(m, in_no, out);
        CHECK(st == O2R_ERR_UNSUPPORTED &&
                  strcmp(o2r_ctx_last_error(ctx), "model 'checks': node 'if0' (If, #0): no fit") == 0,
              "c = 0: status %d, '%s'", (int)st, o2r_ctx_last_error(ctx));
        CHECK(o2r_model_run(m, in_yes, out) == O2R_OK && close_enough(y, want, N),
              "a run after a failed check: %s", o2r_ctx_last_error(ctx));
    }
    o2r_model_free(m);
    m = NULL;
    /* malformed checks are refused at init */
    for (int bad = 0; bad < 3; bad++) {
        launches[1].kernel = bad == 0 ? "axpb" : NULL;
        launches[1].nargs = bad == 1 ? 1 : 2;
        args[6].u.i32 = bad == 2 ? 2 : 0;
        o2r_status st = o2r_model_init(ctx, &d, NULL, &m);
        CHECK(st == O2R_ERR_ARG && strstr(o2r_ctx_last_error(ctx), "invalid run-time check") &&
                  strstr(o2r_ctx_last_error(ctx), "'if0'"),
              "malformed check %d: status %d, '%s'", bad, (int)st, o2r_ctx_last_error(ctx));
        o2r_model_free(m);
        m = NULL;
    }
    launches[1].kernel = NULL;
    launches[1].nargs = 2;
    args[6].u.i32 = 0;
    o2r_ctx_free(ctx);
}

/* Kernel variants: a descriptor with a shared source segment, a CPU-only and a GPU-only one, and
 * one launch per class writing the same output with a different factor (2x for cpu, 3x for gpu)
 * so the values show which class ran. The class comes from o2r_ctx_set_kernels, else
 * $ONNX2CL_KERNELS, else the device type (PoCL: CPU). A segment of the other class is never
 * compiled: the GPU-only segment of the second descriptor does not compile at all. */
static void test_variants(void)
{
    static const char common[] = "#define SCALE(k) (x[i] * (k))\n";
    static const char cpu_src[] =
        "__kernel void scale_cpu(__global const float *x, __global float *y, int n) {\n"
        "    int i = get_global_id(0); if (i < n) y[i] = SCALE(2.0f); }\n";
    static const char gpu_src[] =
        "__kernel void scale_gpu(__global const float *x, __global float *y, int n) {\n"
        "    int i = get_global_id(0); if (i < n) y[i] = SCALE(3.0f); }\n";
    static const char broken[] = "#error the GPU-only segment must not be compiled for cpu\n";
    static const struct o2r_source srcs[] = {
        {common, sizeof common - 1, 0},
        {cpu_src, sizeof cpu_src - 1, O2R_VARIANT_CPU},
        {gpu_src, sizeof gpu_src - 1, O2R_VARIANT_GPU},
    };
    static const struct o2r_source srcs_broken[] = {
        {common, sizeof common - 1, 0},
        {cpu_src, sizeof cpu_src - 1, O2R_VARIANT_CPU},
        {broken, sizeof broken - 1, O2R_VARIANT_GPU},
    };
    static const struct o2r_buffer bufs[] = {{0, N * 4, O2R_SPACE_ARENA, "x", 0},
                                             {4608, N * 4, O2R_SPACE_ARENA, "y", 0}};
    static const struct o2r_arg args[] = {
        {O2R_ARG_BUF, {.buf = 0}}, {O2R_ARG_BUF, {.buf = 1}}, {O2R_ARG_I32, {.i32 = N}},
    };
    static const struct o2r_launch launches[] = {
        {"scale_cpu", 1, {N, 0, 0}, {0, 0, 0}, 0, 3, "s", "Mul", O2R_VARIANT_CPU, NULL},
        {"scale_gpu", 1, {N, 0, 0}, {0, 0, 0}, 0, 3, "s", "Mul", O2R_VARIANT_GPU, NULL},
    };
    static const struct o2r_io ins[] = {{"x", O2R_F32, 1, {N}, 0, N * 4}};
    static const struct o2r_io outs[] = {{"y", O2R_F32, 1, {N}, 1, N * 4}};
    struct o2r_model_desc d = {
        O2R_ABI_VERSION, "variants", HASH, NULL, 0, "", 4608 + N * 4, 0,
        0, 2, bufs, 3, args, 2, launches, 1, ins, 1, outs, 3, srcs, 0, NULL, O2R_F32,
        0, NULL, 0, NULL, 0, NULL,
    };
    struct o2r_model_desc d_broken = d;
    d_broken.n_launches = 1; /* the CPU launch only */
    d_broken.sources = srcs_broken;
    static const struct {
        const char *env, *api; /* $ONNX2CL_KERNELS, o2r_ctx_set_kernels argument */
        float factor;          /* expected y / x */
        uint32_t cls;
    } cases[] = {
        {NULL, NULL, 2.0f, O2R_VARIANT_CPU},   /* auto on PoCL: CPU device */
        {"gpu", NULL, 3.0f, O2R_VARIANT_GPU},  /* env forces the GPU variants */
        {"gpu", "cpu", 2.0f, O2R_VARIANT_CPU}, /* the API (--kernels) beats the env */
        {NULL, "gpu", 3.0f, O2R_VARIANT_GPU},
        {"cpu", "auto", 2.0f, O2R_VARIANT_CPU},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (cases[c].env)
            setenv("ONNX2CL_KERNELS", cases[c].env, 1);
        else
            unsetenv("ONNX2CL_KERNELS");
        struct o2r_ctx *ctx = NULL;
        struct o2r_model *m = NULL;
        CHECK(o2r_ctx_create(NULL, &ctx) == O2R_OK, "%s", o2r_ctx_last_error(NULL));
        if (!ctx)
            continue;
        if (cases[c].api)
            CHECK(o2r_ctx_set_kernels(ctx, cases[c].api) == O2R_OK, "set_kernels %s",
                  cases[c].api);
        const char *why = NULL;
        CHECK(o2r_ctx_kernel_class(ctx, &why) == cases[c].cls, "case %zu: class %u (%s)", c,
              (unsigned)o2r_ctx_kernel_class(ctx, NULL), why);
        CHECK(o2r_model_init(ctx, &d, NULL, &m) == O2R_OK, "case %zu init: %s", c,
              o2r_ctx_last_error(ctx));
        if (m) {
            float y[N], want[N];
            for (int i = 0; i < N; i++)
                want[i] = g_x[i] * cases[c].factor;
            const void *in[1] = {g_x};
            void *out[1] = {y};
            CHECK(o2r_model_run(m, in, out) == O2R_OK, "%s", o2r_ctx_last_error(ctx));
            CHECK(close_enough(y, want, N), "case %zu: values show the wrong variant ran (y/x = "
                  "%g, want %g)", c, g_x[1] ? y[1] / g_x[1] : 0.0, (double)cases[c].factor);
        }
        o2r_model_free(m);
        m = NULL;
        if (cases[c].cls == O2R_VARIANT_CPU) {
            CHECK(o2r_model_init(ctx, &d_broken, NULL, &m) == O2R_OK,
                  "case %zu: the GPU-only segment was compiled for the cpu class: %s", c,
                  o2r_ctx_last_error(ctx));
            o2r_model_free(m);
            m = NULL;
        }
        CHECK(o2r_ctx_set_kernels(ctx, "fast") == O2R_ERR_ARG &&
                  strstr(o2r_ctx_last_error(ctx), "'fast'") != NULL,
              "a bad mode is refused by name: %s", o2r_ctx_last_error(ctx));
        o2r_ctx_free(ctx);
    }
    setenv("ONNX2CL_KERNELS", "turbo", 1);
    struct o2r_ctx *bad = NULL;
    CHECK(o2r_ctx_create(NULL, &bad) != O2R_OK && !bad &&
              strstr(o2r_ctx_last_error(NULL), "ONNX2CL_KERNELS='turbo'") != NULL,
          "bad $ONNX2CL_KERNELS refused by name: %s", o2r_ctx_last_error(NULL));
    o2r_ctx_free(bad);
    unsetenv("ONNX2CL_KERNELS");
}

/* Runs o2r_main with a NULL-terminated argument list. */
static int run_main(const char *first, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, first);
    argv[argc++] = (char *)"tiny";
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    return o2r_main(&g_desc, argc, argv);
}

/* Init + run under $ONNX2CL_MAX_ALLOC / $ONNX2CL_GLOBAL_MEM (NULL = unset); the chunk counts of
 * the plan in *nw / *na. */
static o2r_status split_run(const char *max_alloc, const char *global_mem, char *msg, size_t cap,
                            uint32_t *nw, uint32_t *na, float *y, float *t)
{
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    if (max_alloc)
        setenv("ONNX2CL_MAX_ALLOC", max_alloc, 1);
    if (global_mem)
        setenv("ONNX2CL_GLOBAL_MEM", global_mem, 1);
    o2r_status st = o2r_ctx_create(NULL, &ctx);
    msg[0] = 0;
    *nw = *na = 0;
    if (st == O2R_OK)
        st = o2r_model_init(ctx, &g_desc, g_wpath, &m);
    if (st == O2R_OK) {
        *nw = o2r_model_mem_plan(m)->n_weight_chunks;
        *na = o2r_model_mem_plan(m)->n_arena_chunks;
        const void *ins[1] = {g_x};
        void *outs[2] = {y, t};
        st = o2r_model_run(m, ins, outs);
    }
    if (st != O2R_OK)
        snprintf(msg, cap, "%s", ctx ? o2r_ctx_last_error(ctx) : o2r_ctx_last_error(NULL));
    o2r_model_free(m);
    o2r_ctx_free(ctx);
    unsetenv("ONNX2CL_MAX_ALLOC");
    unsetenv("ONNX2CL_GLOBAL_MEM");
    return st;
}

/* Allocation splitting: the model split under a lowered limit gives the same values; bad limits,
 * a tensor over the limit and a need over the device memory are clear init errors. */
static void test_split(void)
{
    char msg[O2R_ERR_CAP];
    float y[N], t[N], ey[N], et[N];
    uint32_t nw, na;
    expected(ey, et);
    /* buffers of 4000 bytes at 0/4096(/8192): 4K puts each in its own chunk, 8K pairs them */
    static const struct { const char *limit; uint32_t nw, na; } ok[] = {
        {NULL, 1, 1}, {"4K", 2, 3}, {"4000", 2, 3}, {"8k", 1, 2}, {"12192", 1, 1}, {"1G", 1, 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        memset(y, 0, sizeof y);
        memset(t, 0, sizeof t);
        o2r_status st = split_run(ok[i].limit, NULL, msg, sizeof msg, &nw, &na, y, t);
        CHECK(st == O2R_OK, "MAX_ALLOC=%s: %s", ok[i].limit ? ok[i].limit : "(unset)", msg);
        CHECK(nw == ok[i].nw && na == ok[i].na, "MAX_ALLOC=%s: %u weights + %u arena chunks, "
              "want %u + %u", ok[i].limit ? ok[i].limit : "(unset)", nw, na, ok[i].nw, ok[i].na);
        CHECK(close_enough(y, ey, N) && close_enough(t, et, N), "MAX_ALLOC=%s: values",
              ok[i].limit ? ok[i].limit : "(unset)");
    }
    static const char *bad[] = {"", "0", "12Q", "1.5G", "-1", "4KB", " 4K", "4K ", "+4K", "0x10",
                                "99999999999999999999", "17179869184G", "K"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "$ONNX2CL_MAX_ALLOC='%s'", bad[i]);
        o2r_status st = split_run(bad[i], NULL, msg, sizeof msg, &nw, &na, y, t);
        CHECK(st == O2R_ERR_ARG && strstr(msg, want) && strstr(msg, "not a byte count"),
              "MAX_ALLOC='%s': status %d '%s'", bad[i], st, msg);
        snprintf(want, sizeof want, "$ONNX2CL_GLOBAL_MEM='%s'", bad[i]);
        st = split_run(NULL, bad[i], msg, sizeof msg, &nw, &na, y, t);
        CHECK(st == O2R_ERR_ARG && strstr(msg, want), "GLOBAL_MEM='%s': status %d '%s'", bad[i],
              st, msg);
    }
    /* a tensor over the limit: named, with its size and the limit */
    o2r_status st = split_run("2K", NULL, msg, sizeof msg, &nw, &na, y, t);
    CHECK(st == O2R_ERR_NODEVICE && strstr(msg, "tensor 'x' is 4000 bytes") &&
              strstr(msg, "2048-byte limit") && strstr(msg, "$ONNX2CL_MAX_ALLOC"),
          "tensor over the limit: status %d '%s'", st, msg);
    /* total need (weights 8096 + arena 12192 bytes) over the device memory */
    st = split_run(NULL, "16K", msg, sizeof msg, &nw, &na, y, t);
    CHECK(st == O2R_ERR_NODEVICE && strstr(msg, "needs 20288 bytes") &&
              strstr(msg, "weights 8096 + arena 12192 + scratch 0 bytes") &&
              strstr(msg, "16384 bytes") && strstr(msg, "ONNX2CL_GLOBAL_MEM"),
          "need over the device memory: status %d '%s'", st, msg);
    st = split_run(NULL, "20288", msg, sizeof msg, &nw, &na, y, t);
    CHECK(st == O2R_OK, "need == device memory fits: %s", msg);
    /* the split need counts the chunks as allocated: 4K gives weights 8000 + arena 12000 */
    st = split_run("4K", "20000", msg, sizeof msg, &nw, &na, y, t);
    CHECK(st == O2R_OK && nw == 2 && na == 3, "split need 20000: %s", msg);
    st = split_run("4K", "19999", msg, sizeof msg, &nw, &na, y, t);
    CHECK(st == O2R_ERR_NODEVICE && strstr(msg, "needs 20000 bytes"), "split need: '%s'", msg);
}

static void test_cli(void)
{
    char xin[600], xbad[600], yout[600], odir[600], arg_in[700], arg_out[700], arg_w[700],
        err[512], exe[512], exe_w[600];
    float ey[N], et[N];
    expected(ey, et);
    snprintf(xin, sizeof xin, "%s/x.npy", g_tmp);
    snprintf(xbad, sizeof xbad, "%s/xbad.npy", g_tmp);
    snprintf(yout, sizeof yout, "%s/y.npy", g_tmp);
    snprintf(odir, sizeof odir, "%s/outs", g_tmp);
    struct o2r_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = O2R_F32;
    t.rank = 1;
    t.dims[0] = N;
    t.data = g_x;
    t.nbytes = sizeof g_x;
    CHECK(o2r_tensor_write_npy(xin, &t, err, sizeof err) == O2R_OK, "%s", err);
    t.rank = 2;
    t.dims[0] = 10;
    t.dims[1] = N / 10;
    CHECK(o2r_tensor_write_npy(xbad, &t, err, sizeof err) == O2R_OK, "%s", err);
    snprintf(arg_in, sizeof arg_in, "x=%s", xin);
    snprintf(arg_out, sizeof arg_out, "y/out=%s", yout);
    snprintf(arg_w, sizeof arg_w, "--weights=%s", g_wpath);

    CHECK(run_main("--input", arg_in, "--output", arg_out, arg_w, NULL) == 0, "basic");
    struct o2r_tensor r;
    CHECK(o2r_tensor_read(yout, &r, err, sizeof err) == O2R_OK && r.rank == 2 &&
              r.dims[0] == 10 && r.dims[1] == N / 10 && close_enough(r.data, ey, N),
          "output file: %s", err);
    o2r_tensor_free(&r);
    CHECK(run_main("--input", arg_in, "--output-dir", odir, arg_w, "--bench", "3", "--profile",
                   "--verbose", NULL) == 0, "output-dir + bench");
    char p1[700], p2[700];
    snprintf(p1, sizeof p1, "%s/y_out.npy", odir);
    snprintf(p2, sizeof p2, "%s/t.npy", odir);
    CHECK(o2r_tensor_read(p1, &r, err, sizeof err) == O2R_OK && close_enough(r.data, ey, N),
          "%s", err);
    o2r_tensor_free(&r);
    CHECK(o2r_tensor_read(p2, &r, err, sizeof err) == O2R_OK && close_enough(r.data, et, N),
          "%s", err);
    o2r_tensor_free(&r);
    CHECK(run_main("--input", arg_in, arg_w, NULL) == 0, "summary");
    CHECK(run_main("--help", NULL) == 0, "--help");
    /* usage errors: exit 2 */
    CHECK(run_main(arg_w, NULL) == 2, "missing input");
    CHECK(run_main("--input", "nope=x.npy", arg_w, NULL) == 2, "unknown input");
    CHECK(run_main("--input", arg_in, "--input", arg_in, arg_w, NULL) == 2, "duplicate input");
    CHECK(run_main("--input", arg_in, "--output", "zz=a.npy", arg_w, NULL) == 2, "unknown output");
    CHECK(run_main("--input", arg_in, "--bench", "0", arg_w, NULL) == 2, "bench 0");
    CHECK(run_main("--input", arg_in, "--frobnicate", arg_w, NULL) == 2, "unknown flag");
    CHECK(run_main("--input", arg_in, "--device", NULL) == 2, "flag without value");
    /* runtime errors: exit 1, no output written */
    char arg_bad[700], yout2[600], arg_out2[700];
    snprintf(arg_bad, sizeof arg_bad, "x=%s", xbad);
    snprintf(yout2, sizeof yout2, "%s/never.npy", g_tmp);
    snprintf(arg_out2, sizeof arg_out2, "y/out=%s", yout2);
    CHECK(run_main("--input", arg_bad, "--output", arg_out2, arg_w, NULL) == 1, "wrong shape");
    CHECK(run_main("--input", arg_in, "--output", arg_out2, "--weights", "/nonexistent", NULL) == 1,
          "missing weights");
    CHECK(run_main("--input", arg_in, "--output", arg_out2, arg_w, "--device", "999", NULL) == 1,
          "bad device");
    CHECK(access(yout2, F_OK) != 0, "output written after a failure");
    /* default weights path: <this executable>.weights */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        snprintf(exe_w, sizeof exe_w, "%s.weights", exe);
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", g_wpath, exe_w);
        CHECK(system(cmd) == 0, "copy weights beside the executable");
        CHECK(run_main("--input", arg_in, "--output", arg_out, NULL) == 0, "default weights");
        unlink(exe_w);
        CHECK(run_main("--input", arg_in, "--output", arg_out, NULL) == 1, "no default weights");
    }
}

int main(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/o2r_model_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    for (int i = 0; i < N; i++)
        g_x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (int i = 0; i < 2048; i++)
        g_payload[i] = (float)((i * 13) % 29) / 7.0f - 2.0f;
    g_desc.weights_checksum = o2r_weights_checksum(g_payload, (size_t)g_desc.weights_bytes);
    snprintf(g_wpath, sizeof g_wpath, "%s/tiny.weights", g_tmp);
    write_weights(g_wpath, O2R_WEIGHTS_MAGIC, O2R_WEIGHTS_VERSION, g_desc.weights_bytes,
                  g_desc.weights_checksum, HASH, (size_t)g_desc.weights_bytes, 0);
    unsetenv("ONNX2CL_DEVICE");
    test_run_and_cache();
    test_weights_errors();
    test_repack_and_consts();
    test_build_and_launch_errors();
    test_device_and_profile();
    test_fault_injection();
    test_no_weights();
    test_checks();
    test_variants();
    test_split();
    test_cli();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", g_tmp);
    return rt_test_done("test_model");
}
