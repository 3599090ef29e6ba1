/* cache.c — builds a model's OpenCL program, through an on-disk program-binary cache.
 *
 * What: o2r_program_get. Cache folder: $ONNX2CL_CACHE_DIR, else $XDG_CACHE_HOME/onnx2cl, else
 * $HOME/.cache/onnx2cl ($ONNX2CL_NO_CACHE=1 or $ONNX2CL_CACHE=off disables the cache; on PoCL
 * it is off unless $ONNX2CL_CACHE=always, since PoCL caches builds itself: see
 * platform_caches_builds). Key: two FNV-1a 64 hashes with
 * different seeds (128 bits) over length-prefixed (kernel source, build options, device name,
 * device version, driver version, platform version, runtime version + ABI). File:
 * <dir>/<32 hex>.clbin = "O2CLBIN2" + u64 binary size + u64 FNV-1a 64 of the blob + the
 * CL_PROGRAM_BINARIES blob (little-endian host order). The checksum is verified before the blob
 * reaches the driver: drivers trust their binaries (PoCL crashes or asserts on a corrupted one),
 * so a damaged cache file must never get that far ("O2CLBIN1" files, without checksum, are
 * rebuilt).
 * $ONNX2CL_CACHE_LOG=1 prints "onnx2cl: cache hit|miss|store|..." lines to stderr.
 * Progress (issue 11 item 4): a build from source (first start on a device + driver, or a
 * changed model) prints one line before it starts ("building the OpenCL program ...: first
 * start, cached afterwards") and one with its time when it took 1 s or more, on stderr: it is the
 * step that takes seconds to minutes (PoCL: ~45 s for the tiny UNet on a loaded 2-core machine).
 * Assumes: one device per context.
 * Guarantees: a cache that is missing, unwritable, truncated or rejected by the driver never
 * causes an error: the program is rebuilt from source and the entry rewritten (atomically:
 * temporary file in the same folder + rename). A source build failure reports the CL error,
 * the build options and the build log.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define CACHE_MAGIC "O2CLBIN2"
#define CACHE_HEADER 24 /* magic, size, checksum */

/* True if $ONNX2CL_CACHE_LOG is set to something other than "" / "0". */
static int cache_log_on(void)
{
    const char *s = getenv("ONNX2CL_CACHE_LOG");
    return s && *s && strcmp(s, "0") != 0;
}

/* Folds one length-prefixed field into both hashes. */
static void key_add(uint64_t h[2], const void *data, size_t n)
{
    uint64_t len = n;
    h[0] = o2r_fnv1a64(&len, sizeof len, h[0]);
    h[1] = o2r_fnv1a64(&len, sizeof len, h[1]);
    h[0] = o2r_fnv1a64(data, n, h[0]);
    h[1] = o2r_fnv1a64(data, n, h[1]);
}

int o2r_cache_dir(char *buf, size_t cap, int create)
{
    if (!cap)
        return 0;
    buf[0] = 0;
    const char *d = getenv("ONNX2CL_CACHE_DIR");
    int n;
    if (d && *d)
        n = snprintf(buf, cap, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d)
        n = snprintf(buf, cap, "%s/onnx2cl", d);
    else if ((d = getenv("HOME")) && *d)
        n = snprintf(buf, cap, "%s/.cache/onnx2cl", d);
    else
        return 0;
    if (n <= 0 || (size_t)n >= cap) {
        buf[0] = 0;
        return 0;
    }
    if (create && o2r_path_make_dirs(buf, NULL, 0) != O2R_OK)
        return 0;
    return o2r_path_is_dir(buf); /* buf holds the path either way */
}

/* True when the platform keeps every program built from source in a persistent cache of its
 * own, keyed by source + options + device: PoCL, unless its kernel cache is switched off
 * ($POCL_KERNEL_CACHE=0). There our binary cache only costs: CL_PROGRAM_BINARIES makes PoCL
 * compile every kernel of the program for a generic work-group size (kernels of the other class
 * included), and a start from that binary still compiles each kernel again for its launch's
 * work-group size unless PoCL's cache has it. Measured (tiny UNet, --kernels cpu, 2-core
 * machine, cold caches): first start 37.3 s with the binary stored, 17.2 s without (program
 * build 1.2 s, the rest first-launch compiles); warm start 0.07 s vs 0.15 s. */
static int platform_caches_builds(const struct o2r_ctx *ctx)
{
    if (strncmp(ctx->device_name, "Portable Computing Language", 27) != 0)
        return 0;
    const char *kc = getenv("POCL_KERNEL_CACHE");
    return !(kc && strcmp(kc, "0") == 0);
}

/* Resolves the program cache folder into buf (creating it); 0 if caching is off, impossible or
 * left to the platform ($ONNX2CL_CACHE=auto|always|off, default auto: off where
 * platform_caches_builds; $ONNX2CL_NO_CACHE=1 is the same as off). *platform_cache is set when
 * the platform's own cache is used instead. */
static int cache_dir(const struct o2r_ctx *ctx, char *buf, size_t cap, int *platform_cache)
{
    const char *no = getenv("ONNX2CL_NO_CACHE"), *mode = getenv("ONNX2CL_CACHE");
    *platform_cache = 0;
    if ((no && *no && strcmp(no, "0") != 0) || (mode && strcmp(mode, "off") == 0))
        return 0;
    if (!(mode && strcmp(mode, "always") == 0) && platform_caches_builds(ctx)) {
        *platform_cache = 1;
        return 0;
    }
    return o2r_cache_dir(buf, cap, 1);
}

/* Reads a cache entry; returns an o2r_malloc'ed binary or NULL (missing, malformed, or its
 * checksum differs: *corrupt set, so the caller can say why it rebuilds). */
static unsigned char *cache_read(const char *path, size_t *size, int *corrupt)
{
    *corrupt = 0;
    int odd = 0;
    FILE *f = o2r_fopen_regular(path, &odd); /* a FIFO there must not hang the start */
    if (!f) {
        *corrupt = odd;
        return NULL;
    }
    unsigned char *bin = NULL;
    char magic[8];
    uint64_t n = 0, fsize = 0, sum = 0;
    if (o2r_file_regular_size(f, &fsize) != 1 || fread(magic, 1, 8, f) != 8 ||
        memcmp(magic, CACHE_MAGIC, 8) != 0 || fread(&n, sizeof n, 1, f) != 1 || n == 0 ||
        fsize < CACHE_HEADER || n != fsize - CACHE_HEADER || fread(&sum, sizeof sum, 1, f) != 1 ||
        n > SIZE_MAX) {
        *corrupt = fsize > 0;
        goto done;
    }
    bin = o2r_malloc((size_t)n);
    if (bin && (fread(bin, 1, (size_t)n, f) != n ||
                o2r_fnv1a64(bin, (size_t)n, O2R_FNV_SEED) != sum)) {
        o2r_free(bin);
        bin = NULL;
        *corrupt = 1;
    }
    *size = (size_t)n;
done:
    fclose(f);
    return bin;
}

/* Stores the program's binary at path (tmp + rename); failures are only logged. */
static void cache_store(cl_program prog, const char *path)
{
    size_t size = 0;
    unsigned char *bin = NULL;
    char tmp[4200];
    const char *why = NULL;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0) {
        why = "no program binary";
        goto done;
    }
    bin = o2r_malloc(size);
    if (!bin) {
        why = "out of host memory";
        goto done;
    }
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS) {
        why = "clGetProgramInfo(CL_PROGRAM_BINARIES) failed";
        goto done;
    }
    FILE *f = o2r_tmp_create(path, tmp, sizeof tmp);
    if (!f) {
        why = strerror(errno);
        goto done;
    }
    uint64_t n = size, sum = o2r_fnv1a64(bin, size, O2R_FNV_SEED);
    int ok = fwrite(CACHE_MAGIC, 1, 8, f) == 8 && fwrite(&n, sizeof n, 1, f) == 1 &&
             fwrite(&sum, sizeof sum, 1, f) == 1 && fwrite(bin, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || o2r_rename_replace(tmp, path) != 0) {
        why = "write/rename failed";
        remove(tmp);
        goto done;
    }
done:
    if (cache_log_on())
        fprintf(stderr, "onnx2cl: cache %s: %s%s%s\n", why ? "store failed" : "store", path,
                why ? ": " : "", why ? why : "");
    o2r_free(bin);
}

/* Tries to create + build the program from a cached binary; NULL if anything fails. */
static cl_program program_from_binary(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                                      const unsigned char *bin, size_t size)
{
    cl_int e, bst = CL_SUCCESS;
    cl_program p = NULL;
    e = o2r_fault_cl("clCreateProgramWithBinary");
    if (e == CL_SUCCESS)
        p = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &size, &bin, &bst, &e);
    if (e != CL_SUCCESS || bst != CL_SUCCESS || !p)
        goto fail;
    e = o2r_fault_cl("clBuildProgram");
    if (e == CL_SUCCESS)
        e = clBuildProgram(p, 1, &ctx->device, desc->build_options ? desc->build_options : "",
                           NULL, NULL);
    if (e != CL_SUCCESS)
        goto fail;
    return p;
fail:
    if (p)
        clReleaseProgram(p);
    return NULL;
}

o2r_status o2r_program_get(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                           const char *src, size_t src_len, cl_program *out, int *cache_hit)
{
    char dir[4096] = "", path[4200] = "";
    const char *opts = desc->build_options ? desc->build_options : "";
    const char *mode = getenv("ONNX2CL_CACHE");
    if (mode && *mode && strcmp(mode, "auto") != 0 && strcmp(mode, "always") != 0 &&
        strcmp(mode, "off") != 0) {
        o2r_set_error(ctx, "$ONNX2CL_CACHE=%s: expected auto, always or off", mode);
        return O2R_ERR_ARG;
    }
    int platform_cache = 0;
    int use_cache = cache_dir(ctx, dir, sizeof dir, &platform_cache);
    if (platform_cache && cache_log_on())
        fprintf(stderr, "onnx2cl: cache off on this platform: it keeps every build in its own "
                "kernel cache (ONNX2CL_CACHE=always stores program binaries here too)\n");
    cl_program p = NULL;
    cl_int e;
    *out = NULL;
    *cache_hit = 0;
    if (use_cache) {
        uint64_t h[2] = {O2R_FNV_SEED, 0x9e3779b97f4a7c15ull};
        char ver[64];
        snprintf(ver, sizeof ver, "onnx2cl_rt %s abi %d", ONNX2CL_VERSION, O2R_ABI_VERSION);
        key_add(h, src, src_len);
        key_add(h, opts, strlen(opts));
        key_add(h, ctx->device_name, strlen(ctx->device_name));
        key_add(h, ctx->device_version, strlen(ctx->device_version));
        key_add(h, ctx->driver_version, strlen(ctx->driver_version));
        key_add(h, ctx->platform_version, strlen(ctx->platform_version));
        key_add(h, ver, strlen(ver));
        snprintf(path, sizeof path, "%s/%016llx%016llx.clbin", dir, (unsigned long long)h[0],
                 (unsigned long long)h[1]);
        size_t size = 0;
        int corrupt = 0;
        unsigned char *bin = cache_read(path, &size, &corrupt);
        if (corrupt)
            fprintf(stderr, "onnx2cl: warning: ignoring program cache file %s: damaged (bad header "
                    "or checksum); rebuilding it\n", path);
        if (bin) {
            p = program_from_binary(ctx, desc, bin, size);
            o2r_free(bin);
            if (p) {
                if (cache_log_on())
                    fprintf(stderr, "onnx2cl: cache hit: %s\n", path);
                *cache_hit = 1;
                *out = p;
                return O2R_OK;
            }
            if (cache_log_on())
                fprintf(stderr, "onnx2cl: cache rejected (rebuilding): %s\n", path);
        } else if (cache_log_on()) {
            fprintf(stderr, "onnx2cl: cache miss: %s\n", path);
        }
    }
    /* Where the platform caches builds itself we cannot tell a first start from a warm one
     * before the build: only the time is reported (below, when >= 1 s). */
    if (!platform_cache) {
        /* why there is no cache, when there is none (the user may have asked for one) */
        const char *no = getenv("ONNX2CL_NO_CACHE");
        char why[4200];
        if (use_cache)
            snprintf(why, sizeof why, "cached afterwards");
        else if ((no && *no && strcmp(no, "0") != 0) || (mode && strcmp(mode, "off") == 0))
            snprintf(why, sizeof why, "program cache off: %s", mode && strcmp(mode, "off") == 0
                                                                 ? "ONNX2CL_CACHE=off"
                                                                 : "ONNX2CL_NO_CACHE is set");
        else if (!dir[0])
            snprintf(why, sizeof why, "program cache off: no cache folder (set ONNX2CL_CACHE_DIR, "
                     "XDG_CACHE_HOME or HOME)");
        else
            snprintf(why, sizeof why, "program cache off: the cache folder %s is not a folder "
                     "this process can create or use", dir);
        fprintf(stderr, "onnx2cl: model '%s': building the OpenCL program for %s (%zu KiB of "
                "kernel source; not in the program cache yet: %s)\n", desc->name,
                ctx->device_name, src_len >> 10, why);
    }
    const double t0 = o2r_now_ms();
    e = o2r_fault_cl("clCreateProgramWithSource");
    if (e == CL_SUCCESS) {
        const char *srcs[1] = {src};
        p = clCreateProgramWithSource(ctx->context, 1, srcs, &src_len, &e);
    }
    if (e != CL_SUCCESS || !p) {
        o2r_set_error(ctx, "clCreateProgramWithSource(model '%s'): %s", desc->name,
                      o2r_cl_error_name(e));
        return O2R_ERR_CL;
    }
    e = o2r_fault_cl("clBuildProgram");
    /* test hook: $ONNX2CL_FAIL_BUILD_IF=TEXT fails a source build whose source contains TEXT
     * (e.g. one tuning candidate's kernel name), as a driver's compiler error would */
    const char *fail_if = getenv("ONNX2CL_FAIL_BUILD_IF");
    if (e == CL_SUCCESS && fail_if && *fail_if && strstr(src, fail_if))
        e = CL_BUILD_PROGRAM_FAILURE;
    if (e == CL_SUCCESS) {
        /* -w: the generated kernels' warnings (unused variables, ...) mean nothing to a user, and
         * PoCL's clang prints them to stderr ("127 warnings generated."); errors still fill the
         * build log. $ONNX2CL_CL_WARNINGS=1 keeps them (kernel work). Not part of the cache key. */
        const char *wv = getenv("ONNX2CL_CL_WARNINGS");
        char *bopts = NULL;
        if (!(wv && *wv && strcmp(wv, "0") != 0) && (bopts = o2r_malloc(strlen(opts) + 4)) != NULL)
            snprintf(bopts, strlen(opts) + 4, "%s%s-w", opts, *opts ? " " : "");
        e = clBuildProgram(p, 1, &ctx->device, bopts ? bopts : opts, NULL, NULL);
        o2r_free(bopts);
    }
    const double build_s = (o2r_now_ms() - t0) / 1000.0;
    if (e == CL_SUCCESS && build_s >= 1.0)
        fprintf(stderr, "onnx2cl: model '%s': OpenCL program built in %.1f s%s\n", desc->name,
                build_s, platform_cache ? " (the platform compiles each kernel at its first "
                                          "launch and caches it)" : "");
    if (e != CL_SUCCESS) {
        size_t n = (size_t)snprintf(ctx->err, sizeof ctx->err,
                                    "clBuildProgram(model '%s', device %s, options '%s'): %s\n"
                                    "build log:\n",
                                    desc->name, ctx->device_name, opts, o2r_cl_error_name(e));
        if (n < sizeof ctx->err - 1) {
            size_t room = sizeof ctx->err - n - 1, logn = 0;
            if (clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, room, ctx->err + n,
                                      &logn) != CL_SUCCESS) {
                /* log larger than the room: fetch it whole and keep the head */
                char *log = logn ? o2r_malloc(logn + 1) : NULL;
                if (log && clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, logn, log,
                                                 NULL) == CL_SUCCESS) {
                    log[logn] = 0;
                    snprintf(ctx->err + n, room + 1, "%s", log);
                } else {
                    snprintf(ctx->err + n, room + 1, "(build log unavailable)");
                }
                o2r_free(log);
            }
            ctx->err[sizeof ctx->err - 1] = 0;
        }
        clReleaseProgram(p);
        return O2R_ERR_CL;
    }
    if (use_cache)
        cache_store(p, path);
    *out = p;
    return O2R_OK;
}
