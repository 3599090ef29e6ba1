/* tune.c — tile parameters of the GPU-class GEMM / conv / MatMul kernel instances, chosen per
 * device at init, and `--tune`, which measures them (docs/tuning.md).
 *
 * What: o2r_tiles_check (the rules of kernels/gemm_gpu.cl), o2r_tunable_kernel_name; at init
 * o2r_tune_validate_desc, o2r_tune_choose (tuning file -> built-in vendor default -> compiled
 * default, per tunable launch), o2r_tune_source (the MACRO(...) instance lines of the program);
 * o2r_model_print_tuning (--verbose); o2r_model_tune (times candidates, checks each against the
 * default's output, writes the tuning file).
 * Assumes: the descriptor's tunables were written by codegen/sched_{gemm,conv}.c (one per tile
 * launch of the gpu class; struct o2r_tunable in onnx2cl_rt.h); the tuning file lives in the
 * program-cache folder (o2r_cache_dir).
 * Guarantees: nothing read from a tuning file is used before it is checked: the file needs the
 * right header, version, model, entry count and checksum, else it is ignored as a whole with ONE
 * warning on stderr naming it and the reason; an entry whose tiles break a rule of
 * o2r_tiles_check, the device's limits (work-group size, local memory) or the instance's (TM a
 * multiple of its weight panel rows) is ignored with a warning naming the file, line and rule.
 * The split-K slice count and every buffer stay as compiled: only kernel names, gws/lws and the
 * Kc argument change. The file is written atomically (temporary file + rename) inside the cache
 * folder, under a name made of the model's name (restricted to [A-Za-z0-9_.-]) and hash.
 */
#include <math.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "rt_internal.h"

#define TUNE_FORMAT 1                 /* tuning file format version */
#define TUNE_MAX_FILE (4u << 20)      /* larger files are refused */
#define TUNE_REPS 5                   /* timed runs per candidate (median) */
#define TUNE_LOCAL_MAX 32768          /* __local bytes: the portable floor (docs/kernel_variants.md) */

/* ---- rules ---------------------------------------------------------------------------------- */

const char *o2r_tiles_check(const struct o2r_tiles *t)
{
    if (t->tm < 1 || t->tn < 1 || t->tk < 4 || t->rm < 1 || t->rn < 1)
        return "sizes must be >= 1, TK >= 4";
    if (t->tm > 1024 || t->tn > 1024 || t->tk > 1024 || t->rm > 1024 || t->rn > 1024)
        return "sizes must be <= 1024";
    if (t->tm % t->rm || t->tn % t->rn)
        return "TM % RM and TN % RN must be 0";
    if (t->tk % 4 || t->tn % 16 || t->tm % 16)
        return "TK % 4, TN % 16 and TM % 16 must be 0";
    const int nt = (t->tm / t->rm) * (t->tn / t->rn);
    if (nt > 256)
        return "(TM/RM)*(TN/RN) work-items must be <= 256";
    if ((t->tm * t->tk) % (4 * nt) || (t->tn * t->tk) % (4 * nt))
        return "TM*TK and TN*TK must be multiples of 4*(TM/RM)*(TN/RN)";
    if (nt % t->tn)
        return "(TM/RM)*(TN/RN) must be a multiple of TN";
    if ((size_t)t->tk * (size_t)(t->tm + t->tn + 2) * 4 > TUNE_LOCAL_MAX)
        return "__local tiles exceed 32 KiB";
    return NULL;
}

char *o2r_tunable_kernel_name(const struct o2r_tunable *t, const struct o2r_tiles *s, char *buf,
                              size_t cap)
{
    snprintf(buf, cap, "%s_%dx%dx%d_r%dx%d%s", t->kbase ? t->kbase : "?", (int)s->tm, (int)s->tn,
             (int)s->tk, (int)s->rm, (int)s->rn, t->ksuffix ? t->ksuffix : "");
    return buf;
}

/* Work-items per group and __local bytes of tiles s. */
static int tiles_nt(const struct o2r_tiles *s)
{
    return (s->tm / s->rm) * (s->tn / s->rn);
}
static uint64_t tiles_local(const struct o2r_tiles *s)
{
    return (uint64_t)s->tk * (uint64_t)(s->tm + s->tn + 2) * 4;
}

/* Why valid tiles s cannot run instance t on this device (NULL: they can). */
static const char *tiles_unfit(const struct o2r_ctx *ctx, const struct o2r_tunable *t,
                               const struct o2r_tiles *s)
{
    const char *bad = o2r_tiles_check(s);
    if (bad)
        return bad;
    if (t->row_mult > 1 && s->tm % (int32_t)t->row_mult)
        return "TM must be a multiple of the weight panel's rows";
    if (ctx->info.max_wg_size && (uint64_t)tiles_nt(s) > ctx->info.max_wg_size)
        return "more work-items than the device's CL_DEVICE_MAX_WORK_GROUP_SIZE";
    if (ctx->info.local_mem && tiles_local(s) > ctx->info.local_mem)
        return "more __local memory than the device's CL_DEVICE_LOCAL_MEM_SIZE";
    return NULL;
}

static int tiles_eq(const struct o2r_tiles *a, const struct o2r_tiles *b)
{
    return a->tm == b->tm && a->tn == b->tn && a->tk == b->tk && a->rm == b->rm && a->rn == b->rn;
}

static const char *family_name(uint32_t f)
{
    return f == O2R_TUNE_GEMM ? "gemm" : f == O2R_TUNE_CONV ? "conv" : "matmul";
}

/* The candidates --tune times (each checked by o2r_tiles_check; the device and instance filter
 * them further): the compiled default first, then tile shapes around it. */
static const struct o2r_tiles k_candidates[] = {
    {64, 64, 16, 4, 4},   /* 256 work-items, 16 accumulators each (the compiled default) */
    {32, 32, 16, 4, 4},   /* 64 work-items: small problems, small devices */
    {32, 32, 32, 2, 2},   /* 256 work-items, 4 accumulators: latency-bound shapes */
    {64, 64, 32, 4, 4},   /* half the barriers per k */
    {64, 64, 16, 8, 4},   /* 128 work-items, 32 accumulators */
    {128, 64, 16, 8, 4},  /* tall tiles: fewer reloads of B */
    {64, 128, 16, 4, 8},  /* wide tiles: fewer reloads of A */
    {128, 128, 16, 8, 8}, /* 64 accumulators: least __local traffic per fma */
};
#define N_CANDIDATES (sizeof k_candidates / sizeof k_candidates[0])

/* Built-in defaults per vendor (used when no tuning-file entry applies). None of these has been
 * measured on the vendor's hardware yet: they are educated guesses from the architectures,
 * stated per row; `--tune` on the device replaces them. */
struct vendor_default {
    const char *key;        /* vendor key (vendor_of) */
    struct o2r_tiles tiles; /* every family */
};
static const struct vendor_default k_vendor[] = {
    /* NVIDIA (Ampere/Hopper): 256 work-items, 4x4 blocks, 8.3 KiB __local: ~4 groups per SM,
     * the design point of kernels/gemm_gpu.cl (guess; no NVIDIA measurement yet) */
    {"nvidia", {64, 64, 16, 4, 4}},
    /* AMD (GCN/RDNA, wave64, 64 KiB LDS, 256 work-items max): 4 waves per group (guess) */
    {"amd", {64, 64, 16, 4, 4}},
    /* Intel (Gen9..Xe, SIMD8-32, 128 GRF): 128 work-items with 32 accumulators each (guess) */
    {"intel", {64, 64, 16, 8, 4}},
    /* Qualcomm Adreno (wave 64-128, slow and small local memory): 64 work-items, 4 KiB
     * __local per group (guess) */
    {"adreno", {32, 32, 16, 4, 4}},
    /* CPU devices run the gpu class only for testing (PoCL, oclgrind): the compiled default,
     * so the tests cover it */
    {"cpu", {64, 64, 16, 4, 4}},
};

/* Case-insensitive substring test. */
static int has_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && (hay[i] | 32) == (needle[i] | 32))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* The built-in vendor key of the context's device ("" when none matches). */
static const char *vendor_of(const struct o2r_ctx *ctx)
{
    const struct o2r_device_info *in = &ctx->info;
    if (in->type & CL_DEVICE_TYPE_CPU)
        return "cpu";
    const char *s[3] = {in->vendor, in->platform, in->name};
    for (int i = 0; i < 3; i++) {
        if (has_ci(s[i], "nvidia"))
            return "nvidia";
        if (has_ci(s[i], "advanced micro devices") || has_ci(s[i], "amd"))
            return "amd";
        if (has_ci(s[i], "intel"))
            return "intel";
        if (has_ci(s[i], "qualcomm") || has_ci(s[i], "adreno"))
            return "adreno";
    }
    return "";
}

/* ---- descriptor checks ---------------------------------------------------------------------- */

/* 1 if s is a C identifier (ident = 1) or a run of identifier characters (ident = 0), <= 64. */
static int name_ok(const char *s, int ident)
{
    if (!s || strlen(s) > 64 || (ident && !*s))
        return 0;
    for (const char *p = s; *p; p++) {
        int c = (unsigned char)*p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (c >= '0' && c <= '9' && !(ident && p == s));
        if (!ok)
            return 0;
    }
    return 1;
}

/* The geometry rule: launch l of tunable t with tiles s (kernel name set by the caller). */
static void apply_geometry(const struct o2r_tunable *t, const struct o2r_tiles *s,
                           struct o2r_launch *l)
{
    l->lws[0] = (uint64_t)(s->tn / s->rn);
    l->lws[1] = (uint64_t)(s->tm / s->rm);
    l->lws[2] = 1;
    l->gws[0] = (uint64_t)((t->cols + s->tn - 1) / s->tn) * l->lws[0];
    l->gws[1] = (uint64_t)((t->rows + s->tm - 1) / s->tm) * l->lws[1];
    l->gws[2] = (uint64_t)t->z;
}

/* Kc of tunable t with tiles s: ceil(ceil(k / z) / TK) * TK. */
static int32_t tiles_kc(const struct o2r_tunable *t, const struct o2r_tiles *s)
{
    int64_t c = (t->k + t->z - 1) / t->z;
    return (int32_t)((c + s->tk - 1) / s->tk * s->tk);
}

o2r_status o2r_tune_validate_desc(struct o2r_ctx *ctx, const struct o2r_model_desc *d)
{
    const char *mn = d->name ? d->name : "?";
    if (d->n_tunables && !d->tunables) {
        o2r_set_error(ctx, "model '%s': descriptor has %u tunables and no array", mn,
                      (unsigned)d->n_tunables);
        return O2R_ERR_ARG;
    }
    const int64_t lim = ((int64_t)1 << 31) - 1;
    for (uint32_t i = 0; i < d->n_tunables; i++) {
        const struct o2r_tunable *t = &d->tunables[i];
        const char *bad = NULL;
        char want[200], have[200];
        if (t->family < O2R_TUNE_GEMM || t->family > O2R_TUNE_MATMUL)
            bad = "unknown family";
        else if (t->launch >= d->n_launches || t->span < 1 || t->span > 2 ||
                 t->span > d->n_launches - t->launch || d->launches[t->launch].work_dim != 3)
            bad = "launch index, span or work_dim";
        else if (t->rows < 1 || t->rows > lim || t->cols < 1 || t->cols > lim || t->k < 1 ||
                 t->k > lim || t->z < 1 || t->z > 65535)
            bad = "rows, cols, k or z out of range";
        else if (!name_ok(t->macro, 1) || !name_ok(t->kbase, 1) || !name_ok(t->ksuffix, 0) ||
                 !t->margs || strlen(t->margs) > 64 ||
                 strspn(t->margs, "0123456789, -f") != strlen(t->margs)) /* f: f16/f32 */
            bad = "macro, kernel name parts or macro arguments";
        else if (t->row_mult < 1 || t->row_mult > 64 || o2r_tiles_check(&t->tiles) ||
                 t->tiles.tm % (int32_t)t->row_mult)
            bad = "default tiles";
        if (!bad) {
            const struct o2r_launch *l = &d->launches[t->launch];
            struct o2r_launch g = *l;
            apply_geometry(t, &t->tiles, &g);
            o2r_tunable_kernel_name(t, &t->tiles, want, sizeof want);
            snprintf(have, sizeof have, "%s", l->kernel ? l->kernel : "");
            if (strcmp(want, have) != 0 || memcmp(g.gws, l->gws, sizeof g.gws) != 0 ||
                memcmp(g.lws, l->lws, sizeof g.lws) != 0)
                bad = "launch kernel name or geometry differs from the default tiles'";
            else if (t->n_out < 1 || t->out_arg > l->nargs || t->n_out > l->nargs - t->out_arg ||
                     (t->kc_arg >= 0 && (uint32_t)t->kc_arg >= l->nargs) || t->kc_arg < -1)
                bad = "argument indices";
            for (uint32_t j = 0; !bad && j < t->n_out; j++)
                if (d->args[l->first_arg + t->out_arg + j].kind != O2R_ARG_BUF)
                    bad = "an output argument is not a buffer";
            if (!bad && t->kc_arg >= 0 &&
                (d->args[l->first_arg + (uint32_t)t->kc_arg].kind != O2R_ARG_I32 ||
                 d->args[l->first_arg + (uint32_t)t->kc_arg].u.i32 != tiles_kc(t, &t->tiles)))
                bad = "the Kc argument";
        }
        if (bad) {
            o2r_set_error(ctx, "model '%s': tunable %u (launch %u) is inconsistent: %s", mn,
                          (unsigned)i, (unsigned)t->launch, bad);
            return O2R_ERR_ARG;
        }
    }
    return O2R_OK;
}

/* ---- the tuning file ------------------------------------------------------------------------ */

/* One parsed entry line. */
struct tune_entry {
    char platform[256], device[256], driver[256], vendor[256]; /* device it was measured on */
    char key[256];                                           /* tunable key (tune_key) */
    struct o2r_tiles tiles;                                  /* the winner */
    double best_us, default_us;                              /* its time, the default's */
    uint32_t line;                                           /* line number in the file */
};

/* A parsed tuning file. */
struct tune_file {
    struct tune_entry *e; /* entries in file order */
    uint32_t n;
};

/* Where a tunable's tiles came from. */
enum tune_level {
    LVL_PINNED,   /* $ONNX2CL_GG_TILES at compile time */
    LVL_EXACT,    /* file entry of this platform + device + driver */
    LVL_DEVICE,   /* file entry of this platform + device, another driver */
    LVL_VENDOR,   /* file entry of another device of the same vendor */
    LVL_BUILTIN,  /* built-in vendor default */
    LVL_COMPILED, /* the compiled default */
};

/* The choice for one tunable of a model. */
struct o2r_tune_choice {
    struct o2r_tiles tiles; /* chosen tiles */
    int level;              /* enum tune_level */
    uint32_t line;          /* file line of the entry (file levels) */
    char name[160];         /* kernel name of the instance */
};

/* Per-model tuning state (struct o2r_model.tune). */
struct o2r_tune_state {
    struct o2r_tune_choice *c; /* [desc->n_tunables] */
    char path[4200];           /* the tuning file's path ("" if no cache folder) */
    int file_read;             /* 1: a valid file was read */
    uint32_t file_entries;     /* its entries */
    const char *vendor;        /* built-in vendor key of the device ("" none) */
    int tune_mode;             /* 1: o2r_model_tune's model (defaults + every candidate) */
    struct o2r_tiles cand[32]; /* tune mode: the candidates (k_candidates or
                                  $ONNX2CL_TUNE_CANDIDATES) */
    uint32_t ncand;
};

/* dst = src with tabs, CR and LF as spaces (fields of the tab-separated file), <= cap - 1. */
static void field_clean(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++)
        dst[i] = src[i] == '\t' || src[i] == '\n' || src[i] == '\r' ? ' ' : src[i];
    dst[i] = 0;
}

/* The file key of tunable t: "<family>:<rows>x<cols>x<k>z<z>:<kbase><ksuffix>". */
static void tune_key(const struct o2r_tunable *t, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s:%lldx%lldx%lldz%lld:%s%s", family_name(t->family),
             (long long)t->rows, (long long)t->cols, (long long)t->k, (long long)t->z, t->kbase,
             t->ksuffix);
}

/* The tuning file path of desc: <cache folder>/<name>-<16 hex of the model hash>.tune. */
static int tune_path(const struct o2r_model_desc *d, int create, char *buf, size_t cap)
{
    char dir[4096], nm[80], hash[17];
    if (!o2r_cache_dir(dir, sizeof dir, create) && (create || !dir[0]))
        return 0;
    size_t k = 0;
    for (const char *s = d->name; s && *s && k + 1 < sizeof nm; s++) {
        int c = (unsigned char)*s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || (c == '.' && k > 0);
        nm[k++] = ok ? (char)c : '_';
    }
    nm[k] = 0;
    if (!k)
        snprintf(nm, sizeof nm, "model");
    snprintf(hash, sizeof hash, "%.16s", d->model_hash ? d->model_hash : "");
    for (size_t i = 0; i < 16; i++)
        if (!((hash[i] >= '0' && hash[i] <= '9') || (hash[i] >= 'a' && hash[i] <= 'f')))
            hash[i] = '0';
    hash[16] = 0;
    int n = snprintf(buf, cap, "%s/%s-%s.tune", dir, nm, hash);
    return n > 0 && (size_t)n < cap;
}

/* Splits line s (NUL-terminated, modified) at tabs into at most max fields; returns the count
 * (max + 1 when there are more). */
static int split_tabs(char *s, char **f, int max)
{
    int n = 0;
    for (;;) {
        if (n == max)
            return max + 1;
        f[n++] = s;
        char *t = strchr(s, '\t');
        if (!t)
            return n;
        *t = 0;
        s = t + 1;
    }
}

/* Parses a decimal int in [lo, hi] (the whole string). */
static int parse_int(const char *s, long lo, long hi, int32_t *out)
{
    char *end = NULL;
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
        return 0;
    long v = strtol(s, &end, 10);
    if (!end || *end || v < lo || v > hi)
        return 0;
    *out = (int32_t)v;
    return 1;
}

/* Parses a non-negative finite decimal time (the whole string). */
static int parse_time(const char *s, double *out)
{
    char *end = NULL;
    if (!*s || strlen(s) > 32 || strspn(s, "0123456789.") != strlen(s))
        return 0;
    double v = strtod(s, &end);
    if (!end || *end || !(v >= 0) || v > 1e12)
        return 0;
    *out = v;
    return 1;
}

/* FNV-1a 64 as 16 lower-case hex digits. */
static void hex64(const void *p, size_t n, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)o2r_fnv1a64(p, n, O2R_FNV_SEED));
}

/* Reads and checks the tuning file of desc at path into *tf. Returns 1 on success, 0 when there
 * is no file (silently), -1 when it is ignored (why says why). */
static int tune_file_read(const char *path, const struct o2r_model_desc *d, struct tune_file *tf,
                          char *why, size_t wcap)
{
    memset(tf, 0, sizeof *tf);
    int odd = 0;
    FILE *f = o2r_fopen_regular(path, &odd); /* a FIFO there must not hang the start */
    if (!f && odd) {
        snprintf(why, wcap, "not a regular file");
        return -1;
    }
    if (!f)
        return 0;
    char *buf = NULL;
    int ret = -1;
    uint64_t size = 0;
    int reg = o2r_file_regular_size(f, &size);
    if (reg != 1) {
        snprintf(why, wcap, "not a regular file");
        goto done;
    }
    if (size > TUNE_MAX_FILE) {
        snprintf(why, wcap, "%llu bytes, larger than the %u-byte limit", (unsigned long long)size,
                 TUNE_MAX_FILE);
        goto done;
    }
    buf = o2r_malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != size) {
        snprintf(why, wcap, "cannot be read");
        goto done;
    }
    buf[size] = 0;
    if (strlen(buf) != size) {
        snprintf(why, wcap, "holds a NUL byte (binary or corrupt)");
        goto done;
    }
    /* the end line: "end\t<n>\t<checksum of every byte before it>\n", last in the file */
    if (size < 2 || buf[size - 1] != '\n') {
        snprintf(why, wcap, "truncated (does not end with a complete line)");
        goto done;
    }
    buf[size - 1] = 0;
    char *last = strrchr(buf, '\n');
    char *endl = last ? last + 1 : buf;
    char *ef[4];
    int32_t n_decl = 0;
    char sum[17];
    if (strncmp(endl, "end\t", 4) != 0 || split_tabs(endl, ef, 3) != 3 ||
        !parse_int(ef[1], 0, 1000000, &n_decl) || strlen(ef[2]) != 16) {
        snprintf(why, wcap, "truncated (no end line)");
        goto done;
    }
    hex64(buf, (size_t)(endl - buf), sum);
    if (strcmp(sum, ef[2]) != 0) {
        snprintf(why, wcap, "corrupt (checksum %s, the end line says %s)", sum, ef[2]);
        goto done;
    }
    if (last)
        *last = 0;
    else
        buf[0] = 0;
    tf->e = o2r_calloc((size_t)n_decl + 1, sizeof *tf->e);
    if (!tf->e) {
        snprintf(why, wcap, "out of host memory");
        goto done;
    }
    uint32_t lineno = 0;
    char *s = buf;
    while (s) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        char *fl[16];
        int nf = split_tabs(s, fl, 15);
        if (lineno == 1) {
            int32_t v = 0;
            if (nf != 2 || strcmp(fl[0], "onnx2cl-tune") != 0) {
                snprintf(why, wcap, "not an onnx2cl tuning file (first line)");
                goto done;
            }
            if (!parse_int(fl[1], 0, 1000000, &v) || v != TUNE_FORMAT) {
                snprintf(why, wcap, "format version '%.16s', this runtime reads version %d",
                         fl[1], TUNE_FORMAT);
                goto done;
            }
        } else if (lineno == 2) {
            if (nf != 3 || strcmp(fl[0], "model") != 0) {
                snprintf(why, wcap, "line 2 is not the model line");
                goto done;
            }
            if (strcmp(fl[1], d->name) != 0 || strcmp(fl[2], d->model_hash) != 0) {
                snprintf(why, wcap, "written for model '%.64s' (hash %.16s...), not '%s' (hash "
                         "%.16s...)", fl[1], fl[2], d->name, d->model_hash);
                goto done;
            }
        } else {
            struct tune_entry *e = &tf->e[tf->n];
            if (nf != 13 || strcmp(fl[0], "e") != 0 || tf->n >= (uint32_t)n_decl) {
                snprintf(why, wcap, "line %u is not an entry line (or more entries than the end "
                         "line's %d)", (unsigned)lineno, (int)n_decl);
                goto done;
            }
            int32_t v[5];
            for (int k = 0; k < 5; k++)
                if (!parse_int(fl[6 + k], 0, 100000, &v[k])) {
                    snprintf(why, wcap, "line %u: tile value '%.16s' is not a number", (unsigned)lineno,
                             fl[6 + k]);
                    goto done;
                }
            if (!parse_time(fl[11], &e->best_us) || !parse_time(fl[12], &e->default_us) ||
                strlen(fl[5]) >= sizeof e->key || !*fl[5]) {
                snprintf(why, wcap, "line %u: bad key or times", (unsigned)lineno);
                goto done;
            }
            snprintf(e->platform, sizeof e->platform, "%s", fl[1]);
            snprintf(e->device, sizeof e->device, "%s", fl[2]);
            snprintf(e->driver, sizeof e->driver, "%s", fl[3]);
            snprintf(e->vendor, sizeof e->vendor, "%s", fl[4]);
            snprintf(e->key, sizeof e->key, "%s", fl[5]);
            e->tiles = (struct o2r_tiles){v[0], v[1], v[2], v[3], v[4]};
            e->line = lineno;
            tf->n++;
        }
        s = nl ? nl + 1 : NULL;
    }
    if (lineno < 2) {
        snprintf(why, wcap, "truncated (no model line)");
        goto done;
    }
    if (tf->n != (uint32_t)n_decl) {
        snprintf(why, wcap, "%u entries, the end line says %d (truncated?)", (unsigned)tf->n,
                 (int)n_decl);
        goto done;
    }
    ret = 1;
done:
    if (ret != 1) {
        o2r_free(tf->e);
        memset(tf, 0, sizeof *tf);
    }
    o2r_free(buf);
    fclose(f);
    return ret;
}

/* The device's identity as written in entries. */
struct dev_id {
    char platform[256], device[256], driver[256], vendor[256];
};
static void dev_id_of(const struct o2r_ctx *ctx, struct dev_id *id)
{
    field_clean(id->platform, sizeof id->platform, ctx->info.platform);
    field_clean(id->device, sizeof id->device, ctx->info.name);
    field_clean(id->driver, sizeof id->driver, ctx->info.driver);
    field_clean(id->vendor, sizeof id->vendor, ctx->info.vendor);
}

/* ---- choosing at init ----------------------------------------------------------------------- */

void o2r_tune_free(struct o2r_model *m)
{
    if (m && m->tune) {
        o2r_free(m->tune->c);
        o2r_free(m->tune);
        m->tune = NULL;
    }
}

/* Sets launch and Kc argument of tunable i of m to choice c (tiles and name filled). */
static void apply_choice(struct o2r_model *m, uint32_t i)
{
    const struct o2r_tunable *t = &m->desc->tunables[i];
    struct o2r_tune_choice *c = &m->tune->c[i];
    struct o2r_launch *l = &m->launches[t->launch];
    o2r_tunable_kernel_name(t, &c->tiles, c->name, sizeof c->name);
    l->kernel = c->name;
    apply_geometry(t, &c->tiles, l);
    if (t->kc_arg >= 0)
        m->args[l->first_arg + (uint32_t)t->kc_arg].u.i32 = tiles_kc(t, &c->tiles);
}

/* The candidates of --tune into ts: $ONNX2CL_TUNE_CANDIDATES ("TM,TN,TK,RM,RN;..." up to 31
 * sets, each valid by o2r_tiles_check) or k_candidates. O2R_ERR_ARG naming a bad set. */
static o2r_status read_candidates(struct o2r_ctx *ctx, struct o2r_tune_state *ts)
{
    const char *env = getenv("ONNX2CL_TUNE_CANDIDATES");
    ts->ncand = 0;
    if (!env || !*env) {
        for (size_t k = 0; k < N_CANDIDATES; k++)
            ts->cand[ts->ncand++] = k_candidates[k];
        return O2R_OK;
    }
    const char *p = env;
    while (*p) {
        int v[5], used = 0;
        const char *bad = NULL;
        if (ts->ncand == 31) /* bit 31 of a tune mode means "no candidate" */
            bad = "more than 31 sets";
        else if (sscanf(p, "%d,%d,%d,%d,%d%n", &v[0], &v[1], &v[2], &v[3], &v[4], &used) != 5 ||
                 (p[used] && p[used] != ';'))
            bad = "expected TM,TN,TK,RM,RN sets separated by ';'";
        if (!bad) {
            struct o2r_tiles t = {v[0], v[1], v[2], v[3], v[4]};
            bad = o2r_tiles_check(&t);
            ts->cand[ts->ncand++] = t;
        }
        if (bad) {
            o2r_set_error(ctx, "$ONNX2CL_TUNE_CANDIDATES='%s': at '%.40s': %s", env, p, bad);
            return O2R_ERR_ARG;
        }
        p += used;
        if (*p == ';')
            p++;
    }
    return O2R_OK;
}

o2r_status o2r_tune_choose(struct o2r_model *m, uint32_t tune_mode)
{
    const struct o2r_model_desc *d = m->desc;
    struct o2r_ctx *ctx = m->ctx;
    if (!d->n_tunables)
        return O2R_OK;
    struct o2r_tune_state *ts = o2r_calloc(1, sizeof *ts);
    if (ts)
        ts->c = o2r_calloc(d->n_tunables, sizeof *ts->c);
    if (!ts || !ts->c) {
        o2r_free(ts);
        o2r_set_error(ctx, "out of host memory choosing the tiles of model '%s'", d->name);
        return O2R_ERR_NOMEM;
    }
    m->tune = ts;
    ts->tune_mode = tune_mode;
    ts->vendor = vendor_of(ctx);
    if (tune_mode) {
        o2r_status st = read_candidates(ctx, ts);
        if (st != O2R_OK)
            return st;
        uint32_t kept = 0; /* only the candidates tune_mode names (the others did not build) */
        for (uint32_t k = 0; k < ts->ncand; k++)
            if (tune_mode & (1u << k))
                ts->cand[kept++] = ts->cand[k];
        ts->ncand = kept;
    }
    int any = 0;
    for (uint32_t i = 0; i < d->n_tunables; i++)
        any |= o2r_launch_selected(&d->launches[d->tunables[i].launch], m->kclass) &&
               !d->tunables[i].pinned;
    struct tune_file tf = {0};
    char why[512];
    if (any && !tune_mode && tune_path(d, 0, ts->path, sizeof ts->path)) {
        int r = tune_file_read(ts->path, d, &tf, why, sizeof why);
        if (r < 0)
            fprintf(stderr, "onnx2cl: warning: ignoring tuning file %s: %s\n", ts->path, why);
        ts->file_read = r == 1;
        ts->file_entries = tf.n;
    }
    struct dev_id id;
    dev_id_of(ctx, &id);
    const struct vendor_default *vd = NULL;
    for (size_t v = 0; v < sizeof k_vendor / sizeof k_vendor[0]; v++)
        if (strcmp(k_vendor[v].key, ts->vendor) == 0)
            vd = &k_vendor[v];
    /* each unusable entry is reported once */
    uint8_t *warned = tf.n ? o2r_calloc(tf.n, 1) : NULL;
    for (uint32_t i = 0; i < d->n_tunables; i++) {
        const struct o2r_tunable *t = &d->tunables[i];
        struct o2r_tune_choice *c = &ts->c[i];
        c->tiles = t->tiles;
        c->level = t->pinned ? LVL_PINNED : LVL_COMPILED;
        if (!t->pinned && !tune_mode) {
            char key[256];
            tune_key(t, key, sizeof key);
            for (uint32_t e = 0; e < tf.n; e++) {
                const struct tune_entry *en = &tf.e[e];
                if (strcmp(en->key, key) != 0)
                    continue;
                int lvl = strcmp(en->platform, id.platform) == 0 &&
                                  strcmp(en->device, id.device) == 0
                              ? (strcmp(en->driver, id.driver) == 0 ? LVL_EXACT : LVL_DEVICE)
                          : strcmp(en->vendor, id.vendor) == 0 ? LVL_VENDOR : -1;
                if (lvl < 0 || lvl >= c->level)
                    continue;
                const char *bad = tiles_unfit(ctx, t, &en->tiles);
                if (bad) {
                    if (warned && !warned[e])
                        fprintf(stderr, "onnx2cl: warning: tuning file %s line %u: ignoring "
                                "tiles %dx%dx%d r%dx%d for %s: %s\n", ts->path,
                                (unsigned)en->line, (int)en->tiles.tm, (int)en->tiles.tn,
                                (int)en->tiles.tk, (int)en->tiles.rm, (int)en->tiles.rn, key, bad);
                    if (warned)
                        warned[e] = 1;
                    continue;
                }
                c->tiles = en->tiles;
                c->level = lvl;
                c->line = en->line;
            }
            if (c->level == LVL_COMPILED && vd && !tiles_unfit(ctx, t, &vd->tiles)) {
                c->tiles = vd->tiles;
                c->level = LVL_BUILTIN;
            }
        }
        apply_choice(m, i);
    }
    o2r_free(warned);
    o2r_free(tf.e);
    return O2R_OK;
}

const char *o2r_tune_reset_compiled(struct o2r_model *m)
{
    const struct o2r_model_desc *d = m->desc;
    struct o2r_tune_state *ts = m->tune;
    if (!ts || ts->tune_mode)
        return NULL;
    int file = 0, builtin = 0;
    for (uint32_t i = 0; i < d->n_tunables; i++) {
        struct o2r_tune_choice *c = &ts->c[i];
        if (c->level == LVL_PINNED || c->level == LVL_COMPILED)
            continue;
        file |= c->level != LVL_BUILTIN;
        builtin |= c->level == LVL_BUILTIN;
        c->tiles = d->tunables[i].tiles;
        c->level = LVL_COMPILED;
        apply_choice(m, i);
    }
    return file && builtin ? "the tuning file's entries and the built-in vendor default"
           : file          ? "the tuning file's entries"
           : builtin       ? "the built-in vendor default"
                           : NULL;
}

const char *o2r_tune_file_path(const struct o2r_model *m)
{
    return m->tune && m->tune->file_read ? m->tune->path : "";
}

/* Appends "MACRO(NAME, TM, TN, TK, RM, RN<margs>)\n" for tunable t with tiles s to the growing
 * text *buf (length *len, capacity *cap) unless NAME is already defined in it. 0 on no memory. */
static int add_line(const struct o2r_tunable *t, const struct o2r_tiles *s, char **buf,
                    size_t *len, size_t *cap)
{
    char name[160], line[400], probe[170];
    o2r_tunable_kernel_name(t, s, name, sizeof name);
    snprintf(probe, sizeof probe, "(%s,", name);
    if (*buf && strstr(*buf, probe))
        return 1;
    int n = snprintf(line, sizeof line, "%s(%s, %d, %d, %d, %d, %d%s)\n", t->macro, name,
                     (int)s->tm, (int)s->tn, (int)s->tk, (int)s->rm, (int)s->rn, t->margs);
    if (n <= 0 || (size_t)n >= sizeof line)
        return 1; /* cannot happen: validated lengths */
    if (*len + (size_t)n + 1 > *cap) {
        size_t nc = *cap ? *cap * 2 : 4096;
        while (*len + (size_t)n + 1 > nc)
            nc *= 2;
        char *p = o2r_malloc(nc);
        if (!p)
            return 0;
        if (*buf)
            memcpy(p, *buf, *len + 1);
        o2r_free(*buf);
        *buf = p;
        *cap = nc;
    }
    memcpy(*buf + *len, line, (size_t)n + 1);
    *len += (size_t)n;
    return 1;
}

char *o2r_tune_source(const struct o2r_model *m, size_t *len)
{
    const struct o2r_model_desc *d = m->desc;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    if (!m->tune)
        return NULL;
    for (uint32_t i = 0; i < d->n_tunables; i++) {
        const struct o2r_tunable *t = &d->tunables[i];
        if (!o2r_launch_selected(&d->launches[t->launch], m->kclass))
            continue;
        if (!add_line(t, &m->tune->c[i].tiles, &buf, len, &cap))
            goto nomem;
        for (uint32_t k = 0; m->tune->tune_mode && !t->pinned && k < m->tune->ncand; k++)
            if (!tiles_unfit(m->ctx, t, &m->tune->cand[k]) &&
                !add_line(t, &m->tune->cand[k], &buf, len, &cap))
                goto nomem;
    }
    if (!buf) { /* nothing selected: an empty text */
        buf = o2r_malloc(1);
        if (buf)
            buf[0] = 0;
    }
    return buf;
nomem:
    o2r_free(buf);
    *len = (size_t)-1;
    return NULL;
}

void o2r_model_print_tuning(const struct o2r_model *m, void *fp)
{
    FILE *f = fp ? fp : stderr;
    if (!m || !m->tune)
        return;
    const struct o2r_model_desc *d = m->desc;
    const struct o2r_tune_state *ts = m->tune;
    uint32_t count[LVL_COMPILED + 1] = {0}, nsel = 0;
    for (uint32_t i = 0; i < d->n_tunables; i++)
        if (o2r_launch_selected(&d->launches[d->tunables[i].launch], m->kclass)) {
            count[ts->c[i].level]++;
            nsel++;
        }
    if (!nsel)
        return;
    if (ts->file_read)
        fprintf(f, "tuning: file %s (%u entries)\n", ts->path, (unsigned)ts->file_entries);
    else
        fprintf(f, "tuning: no tuning file%s%s%s\n", ts->path[0] ? " (looked for " : "",
                ts->path, ts->path[0] ? ")" : " (no cache folder)");
    struct dev_id id;
    dev_id_of(m->ctx, &id);
    fprintf(f, "tuning: device key: platform \"%s\", device \"%s\", driver \"%s\", vendor \"%s\"\n",
            id.platform, id.device, id.driver, id.vendor);
    if (count[LVL_BUILTIN])
        fprintf(f, "tuning: built-in default for vendor %s\n", ts->vendor);
    static const char *lvl_name[] = {"pinned at compile time ($ONNX2CL_GG_TILES)",
                                     "file entry for this device and driver",
                                     "file entry for this device, another driver",
                                     "file entry for another device of this vendor",
                                     "built-in default for vendor", "compiled default"};
    for (uint32_t i = 0; i < d->n_tunables; i++) {
        const struct o2r_tunable *t = &d->tunables[i];
        if (!o2r_launch_selected(&d->launches[t->launch], m->kclass))
            continue;
        char key[256];
        tune_key(t, key, sizeof key);
        int seen = 0;
        for (uint32_t j = 0; j < i && !seen; j++) {
            char k2[256];
            tune_key(&d->tunables[j], k2, sizeof k2);
            seen = strcmp(key, k2) == 0 &&
                   o2r_launch_selected(&d->launches[d->tunables[j].launch], m->kclass);
        }
        if (seen)
            continue;
        const struct o2r_tune_choice *c = &ts->c[i];
        fprintf(f, "tuning:   %-44s %dx%dx%d r%dx%d (%s", key, (int)c->tiles.tm, (int)c->tiles.tn,
                (int)c->tiles.tk, (int)c->tiles.rm, (int)c->tiles.rn, lvl_name[c->level]);
        if (c->level == LVL_BUILTIN)
            fprintf(f, " %s", ts->vendor);
        if (c->level >= LVL_EXACT && c->level <= LVL_VENDOR)
            fprintf(f, ": entry %s line %u", key, (unsigned)c->line);
        fprintf(f, ") kernel %s\n", c->name);
    }
}

/* ---- --tune --------------------------------------------------------------------------------- */

/* One distinct (family, shape) being tuned. */
struct tune_job {
    uint32_t tunable;        /* first tunable with this key */
    char key[256];           /* tune_key */
    int done;                /* 1: measured (at least the default) */
    int skip;                /* 1: the tuning file has it for this device + driver already */
    struct o2r_tiles best;   /* fastest accepted */
    double best_us, def_us;  /* medians (us) */
};

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Device time of an event in microseconds (0 if unknown). */
static double event_us(cl_event e)
{
    cl_ulong t0 = 0, t1 = 0;
    if (!e || clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) !=
                  CL_SUCCESS ||
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS ||
        t1 < t0)
        return 0;
    return (double)(t1 - t0) / 1e3;
}

/* Runs the span of tunable t once with tiles s on kernel k (the launches after the first as
 * compiled); *us = device time of the span (events), when us is not NULL. */
static o2r_status run_span(struct o2r_model *m, const struct o2r_tunable *t,
                           const struct o2r_tiles *s, cl_kernel k, double *us)
{
    struct o2r_launch l = m->launches[t->launch];
    char name[160];
    l.kernel = o2r_tunable_kernel_name(t, s, name, sizeof name);
    apply_geometry(t, s, &l);
    struct o2r_arg *kc = t->kc_arg >= 0 ? &m->args[l.first_arg + (uint32_t)t->kc_arg] : NULL;
    int32_t saved = kc ? kc->u.i32 : 0;
    if (kc)
        kc->u.i32 = tiles_kc(t, s);
    cl_event ev[2] = {NULL, NULL};
    o2r_status st = o2r_launch_enqueue(m, t->launch, &l, k, us ? &ev[0] : NULL);
    if (kc)
        kc->u.i32 = saved;
    for (uint32_t j = 1; st == O2R_OK && j < t->span; j++) {
        const struct o2r_launch *lj = &m->launches[t->launch + j];
        st = o2r_launch_enqueue(m, t->launch + j, lj, m->kernels[m->launch_kernel[t->launch + j]],
                                us ? &ev[1] : NULL);
    }
    cl_int e = clFinish(m->ctx->queue);
    if (st == O2R_OK && e != CL_SUCCESS) {
        o2r_set_error(m->ctx, "clFinish(after %s): %s", name, o2r_cl_error_name(e));
        st = O2R_ERR_CL;
    }
    if (us)
        *us = event_us(ev[0]) + event_us(ev[1]);
    for (int i = 0; i < 2; i++)
        if (ev[i])
            clReleaseEvent(ev[i]);
    return st;
}

/* The distinct output buffers of tunable t (desc buffer indices) into out (<= 8); count. */
static uint32_t out_buffers(const struct o2r_model *m, const struct o2r_tunable *t, int32_t *out)
{
    const struct o2r_launch *l = &m->desc->launches[t->launch];
    uint32_t n = 0;
    for (uint32_t j = 0; j < t->n_out && n < 8; j++) {
        int32_t b = m->desc->args[l->first_arg + t->out_arg + j].u.buf;
        int dup = 0;
        for (uint32_t q = 0; q < n; q++)
            dup |= out[q] == b;
        if (!dup)
            out[n++] = b;
    }
    return n;
}

/* Reads the output buffers of t into host (float32 arrays, one after another). */
static o2r_status read_outputs(struct o2r_model *m, const int32_t *bufs, uint32_t nb,
                               float *host)
{
    size_t off = 0;
    for (uint32_t q = 0; q < nb; q++) {
        size_t n = (size_t)m->desc->buffers[bufs[q]].size;
        cl_int e = clEnqueueReadBuffer(m->ctx->queue, m->bufs[bufs[q]], CL_TRUE, 0, n,
                                       (char *)host + off, 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            o2r_set_error(m->ctx, "clEnqueueReadBuffer(tuning output of %s): %s",
                          m->desc->buffers[bufs[q]].name ? m->desc->buffers[bufs[q]].name : "?",
                          o2r_cl_error_name(e));
            return O2R_ERR_CL;
        }
        off += n;
    }
    return O2R_OK;
}

/* Whether got matches ref (n floats): |got - ref| <= 1e-4 * max|ref| + 1e-3 * |ref|, NaN where
 * ref is NaN. On a mismatch, a description in why. */
static int outputs_match(const float *got, const float *ref, size_t n, char *why, size_t cap)
{
    double mx = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs((double)ref[i]) > mx)
            mx = fabs((double)ref[i]);
    for (size_t i = 0; i < n; i++) {
        double r = ref[i], g = got[i];
        int bad = isnan(r) ? !isnan(g) : isinf(r) ? g != r : !(fabs(g - r) <= 1e-4 * mx + 1e-3 * fabs(r));
        if (bad) {
            snprintf(why, cap, "output element %zu is %.9g, the default's %.9g", i, g, r);
            return 0;
        }
    }
    return 1;
}

/* Fills host input i of desc: float32/float64 pseudo-random in [-1, 1), other types zero. */
static void fill_input(const struct o2r_io *io, void *p, uint32_t seed)
{
    memset(p, 0, (size_t)io->nbytes);
    uint64_t s = 0x9e3779b97f4a7c15ull ^ seed;
    if (io->dtype == O2R_F32 || io->dtype == O2R_F64) {
        size_t n = (size_t)(io->nbytes / o2r_dtype_size(io->dtype));
        for (size_t i = 0; i < n; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            double v = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
            if (io->dtype == O2R_F32)
                ((float *)p)[i] = (float)v;
            else
                ((double *)p)[i] = v;
        }
    }
}

/* Appends one entry line to buf (length *len, capacity cap); 0 when it does not fit. */
static int put_entry(char *buf, size_t *len, size_t cap, const char *platform, const char *device,
                     const char *driver, const char *vendor, const char *key,
                     const struct o2r_tiles *t, double best_us, double default_us)
{
    int n = snprintf(buf + *len, cap - *len, "e\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\n",
                     platform, device, driver, vendor, key, (int)t->tm, (int)t->tn, (int)t->tk,
                     (int)t->rm, (int)t->rn, best_us, default_us);
    if (n < 0 || (size_t)n >= cap - *len)
        return 0;
    *len += (size_t)n;
    return 1;
}

/* Writes the tuning file: the entries of `old` that jobs do not replace, then one per job. */
static o2r_status tune_file_write(struct o2r_model *m, const char *path,
                                  const struct tune_file *old, const struct tune_job *jobs,
                                  uint32_t njobs, FILE *log)
{
    struct dev_id id;
    dev_id_of(m->ctx, &id);
    size_t cap = 4096 + strlen(m->desc->name) + strlen(m->desc->model_hash) +
                 (size_t)(old->n + njobs) * 1400, len = 0;
    char *buf = o2r_malloc(cap);
    if (!buf) {
        o2r_set_error(m->ctx, "out of host memory writing the tuning file %s", path);
        return O2R_ERR_NOMEM;
    }
    uint32_t n = 0;
    len += (size_t)snprintf(buf + len, cap - len, "onnx2cl-tune\t%d\nmodel\t%s\t%s\n", TUNE_FORMAT,
                            m->desc->name, m->desc->model_hash);
    for (uint32_t e = 0; e < old->n; e++) {
        const struct tune_entry *en = &old->e[e];
        int replaced = 0;
        for (uint32_t j = 0; j < njobs && !replaced; j++)
            replaced = jobs[j].done && strcmp(jobs[j].key, en->key) == 0 &&
                       strcmp(en->platform, id.platform) == 0 &&
                       strcmp(en->device, id.device) == 0 && strcmp(en->driver, id.driver) == 0;
        if (replaced)
            continue;
        if (!put_entry(buf, &len, cap, en->platform, en->device, en->driver, en->vendor, en->key,
                       &en->tiles, en->best_us, en->default_us))
            goto toolong;
        n++;
    }
    for (uint32_t j = 0; j < njobs; j++) {
        const struct tune_job *jb = &jobs[j];
        if (!jb->done)
            continue;
        if (!put_entry(buf, &len, cap, id.platform, id.device, id.driver, id.vendor, jb->key,
                       &jb->best, jb->best_us, jb->def_us))
            goto toolong;
        n++;
    }
    char sum[17];
    hex64(buf, len, sum);
    int ne = snprintf(buf + len, cap - len, "end\t%u\t%s\n", (unsigned)n, sum);
    if (ne < 0 || (size_t)ne >= cap - len)
        goto toolong;
    len += (size_t)ne;
    o2r_status st = O2R_OK;
    char tmp[4300], err[512];
    FILE *f = NULL;
    if (o2r_path_check_output(path, err, sizeof err) != O2R_OK) {
        o2r_set_error(m->ctx, "cannot write the tuning file: %s", err);
        st = O2R_ERR_IO;
        goto done;
    }
    f = o2r_tmp_create(path, tmp, sizeof tmp);
    if (!f) {
        o2r_set_error(m->ctx, "cannot create a temporary file beside the tuning file %s", path);
        st = O2R_ERR_IO;
        goto done;
    }
    int ok = fwrite(buf, 1, len, f) == len;
    ok = o2r_file_sync_close(f) == 0 && ok;
    if (!ok || o2r_path_check_output(path, err, sizeof err) != O2R_OK ||
        o2r_rename_replace(tmp, path) != 0) {
        remove(tmp);
        o2r_set_error(m->ctx, "cannot write the tuning file %s", path);
        st = O2R_ERR_IO;
        goto done;
    }
    fprintf(log, "tune: wrote %s (%u entries)\n", path, (unsigned)n);
done:
    o2r_free(buf);
    return st;
toolong: /* cannot happen: fields are bounded; never write a cut file */
    o2r_free(buf);
    o2r_set_error(m->ctx, "internal error: the tuning file %s outgrew its buffer", path);
    return O2R_ERR_IO;
}

/* Tunes job jb (its tunable's launch span is next in the model's run; its inputs are in place).
 * Leaves the default's outputs in the buffers. */
static o2r_status tune_job(struct o2r_model *m, struct tune_job *jb, uint32_t idx, uint32_t njobs,
                           double deadline, FILE *log)
{
    const struct o2r_tunable *t = &m->desc->tunables[jb->tunable];
    int32_t bufs[8];
    uint32_t nb = out_buffers(m, t, bufs);
    size_t bytes = 0;
    for (uint32_t q = 0; q < nb; q++)
        bytes += (size_t)m->desc->buffers[bufs[q]].size;
    float *ref = o2r_malloc(bytes + 4), *got = o2r_malloc(bytes + 4);
    o2r_status st = O2R_OK;
    if (!ref || !got) {
        o2r_set_error(m->ctx, "out of host memory tuning %s", jb->key);
        st = O2R_ERR_NOMEM;
        goto done;
    }
    cl_kernel kdef = m->kernels[m->launch_kernel[t->launch]];
    int measured = 0;
    for (uint32_t c = 0; c < m->tune->ncand + 1; c++) {
        /* candidate 0: the compiled default (the reference); then the list without it */
        const struct o2r_tiles *s = c == 0 ? &t->tiles : &m->tune->cand[c - 1];
        if (c > 0 && (tiles_eq(s, &t->tiles) || tiles_unfit(m->ctx, t, s)))
            continue;
        if (c > 0 && o2r_now_ms() > deadline)
            break;
        char name[160], why[256];
        o2r_tunable_kernel_name(t, s, name, sizeof name);
        cl_int e = CL_SUCCESS;
        cl_kernel k = c == 0 ? kdef : clCreateKernel(m->program, name, &e);
        double times[TUNE_REPS], us = 0;
        int reps = 0;
        why[0] = 0;
        if (e != CL_SUCCESS || !k) {
            snprintf(why, sizeof why, "clCreateKernel: %s", o2r_cl_error_name(e));
        } else {
            size_t wg = 0;
            if (clGetKernelWorkGroupInfo(k, m->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg,
                                         &wg, NULL) == CL_SUCCESS &&
                wg < (size_t)tiles_nt(s))
                snprintf(why, sizeof why, "the compiled kernel allows %zu work-items per group, "
                         "it needs %d", wg, tiles_nt(s));
            else if (run_span(m, t, s, k, NULL) != O2R_OK) /* warm-up and the output check */
                snprintf(why, sizeof why, "%s", o2r_ctx_last_error(m->ctx));
            else if (read_outputs(m, bufs, nb, c == 0 ? ref : got) != O2R_OK)
                st = O2R_ERR_CL;
            else if (c > 0)
                outputs_match(got, ref, bytes / 4, why, sizeof why);
            while (st == O2R_OK && !why[0] && reps < TUNE_REPS &&
                   (reps == 0 || o2r_now_ms() < deadline)) {
                if (run_span(m, t, s, k, &us) != O2R_OK) {
                    snprintf(why, sizeof why, "%s", o2r_ctx_last_error(m->ctx));
                    break;
                }
                times[reps++] = us;
            }
        }
        if (k && c > 0)
            clReleaseKernel(k);
        if (st != O2R_OK)
            goto done;
        if (why[0] || reps == 0) {
            if (c == 0) { /* the default itself failed: the run cannot go on */
                o2r_set_error(m->ctx, "tuning %s: the default kernel %s failed: %s", jb->key,
                              name, why);
                st = O2R_ERR_CL;
                goto done;
            }
            fprintf(log, "tune:   %dx%dx%d r%dx%d rejected: %s\n", (int)s->tm, (int)s->tn,
                    (int)s->tk, (int)s->rm, (int)s->rn, why);
            continue;
        }
        qsort(times, (size_t)reps, sizeof times[0], cmp_dbl);
        double med = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
        measured++;
        if (c == 0) {
            jb->def_us = jb->best_us = med;
            jb->best = *s;
            jb->done = 1;
        } else if (med < jb->best_us) {
            jb->best_us = med;
            jb->best = *s;
        }
    }
    fprintf(log, "tune: %u/%u %s: %d candidates timed; default %dx%dx%d r%dx%d %.1f us, best "
            "%dx%dx%d r%dx%d %.1f us (%.2fx)%s\n", (unsigned)idx, (unsigned)njobs, jb->key,
            measured, (int)t->tiles.tm, (int)t->tiles.tn, (int)t->tiles.tk, (int)t->tiles.rm,
            (int)t->tiles.rn, jb->def_us, (int)jb->best.tm, (int)jb->best.tn, (int)jb->best.tk,
            (int)jb->best.rm, (int)jb->best.rn, jb->best_us,
            jb->best_us > 0 ? jb->def_us / jb->best_us : 1.0,
            o2r_now_ms() > deadline ? " (time budget used up)" : "");
    /* the default's outputs again, for the launches that follow */
    st = run_span(m, t, &t->tiles, kdef, NULL);
done:
    o2r_free(ref);
    o2r_free(got);
    return st;
}

/* The program with every candidate failed to build (a driver may refuse an instance, e.g. one
 * whose register block it cannot allocate): builds the model once per candidate to find the
 * ones that do not build, reports each on log, and returns the model with the others (none:
 * the defaults alone). A failure of the defaults' own build, or any other error, is returned
 * with its message. Costs one program build + weights load per candidate, on this path only. */
static o2r_status init_without_failing_candidates(struct o2r_ctx *ctx,
                                                  const struct o2r_model_desc *desc,
                                                  const char *weights_path, FILE *log,
                                                  struct o2r_model **out)
{
    struct o2r_tune_state *tmp = o2r_calloc(1, sizeof *tmp);
    if (!tmp) {
        o2r_set_error(ctx, "out of host memory tuning model '%s'", desc->name);
        return O2R_ERR_NOMEM;
    }
    o2r_status st = read_candidates(ctx, tmp);
    char first[300];
    o2r_err_first_line(ctx, first, sizeof first);
    fprintf(log, "tune: model '%s': the program with every candidate did not build (%s); "
            "building the defaults alone, then once per candidate, to leave out the ones that do "
            "not\n", desc->name, first);
    /* the defaults alone first: if they do not build, no candidate is to blame */
    if (st == O2R_OK) {
        struct o2r_model *m0 = NULL;
        st = o2r_model_init_mode(ctx, desc, weights_path, 1u << 31, &m0);
        o2r_model_free(m0);
    }
    uint32_t ok = 0;
    for (uint32_t k = 0; st == O2R_OK && k < tmp->ncand; k++) {
        struct o2r_model *m1 = NULL;
        st = o2r_model_init_mode(ctx, desc, weights_path, 1u << k, &m1);
        const struct o2r_tiles *c = &tmp->cand[k];
        if (st == O2R_OK) {
            ok |= 1u << k;
            o2r_model_free(m1);
        } else if (o2r_err_is_build(ctx, st)) {
            fprintf(log, "tune:   %dx%dx%d r%dx%d left out: it does not build on this device\n",
                    (int)c->tm, (int)c->tn, (int)c->tk, (int)c->rm, (int)c->rn);
            st = O2R_OK;
        }
    }
    o2r_free(tmp);
    if (st != O2R_OK)
        return st;
    /* no candidate builds: tune_mode still needs a non-zero value (defaults only) */
    return o2r_model_init_mode(ctx, desc, weights_path, ok ? ok : 1u << 31, out);
}

o2r_status o2r_model_tune(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                          const char *weights_path, const void *const *inputs, double seconds,
                          void *logp)
{
    FILE *log = logp ? logp : stderr;
    const double t0 = o2r_now_ms();
    if (!ctx || !desc)
        return O2R_ERR_ARG;
    struct o2r_model *m = NULL;
    struct tune_job *jobs = NULL;
    void **gen = NULL;
    const void **in = NULL;
    struct tune_file old = {0};
    char path[4200];
    o2r_status st = O2R_OK;
    ctx->err[0] = 0;
    if (desc->abi_version != O2R_ABI_VERSION || (desc->n_tunables && !desc->tunables) ||
        (desc->n_launches && !desc->launches))
        return o2r_model_init(ctx, desc, weights_path, &m); /* fails with its message */
    for (uint32_t i = 0; i < desc->n_tunables; i++)
        if (desc->tunables[i].launch >= desc->n_launches)
            return o2r_tune_validate_desc(ctx, desc);
    /* the distinct keys, in launch order */
    uint32_t njobs = 0;
    jobs = o2r_calloc(desc->n_tunables + 1, sizeof *jobs);
    gen = o2r_calloc(desc->n_inputs + 1, sizeof *gen);
    in = o2r_calloc(desc->n_inputs + 1, sizeof *in);
    if (!jobs || !gen || !in) {
        o2r_set_error(ctx, "out of host memory tuning model '%s'", desc->name);
        st = O2R_ERR_NOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < desc->n_tunables; i++) {
        const struct o2r_tunable *t = &desc->tunables[i];
        if (t->pinned || !o2r_launch_selected(&desc->launches[t->launch], ctx->kclass))
            continue;
        char key[256];
        tune_key(t, key, sizeof key);
        int seen = 0;
        for (uint32_t j = 0; j < njobs && !seen; j++)
            seen = strcmp(jobs[j].key, key) == 0;
        if (seen)
            continue;
        jobs[njobs].tunable = i;
        snprintf(jobs[njobs].key, sizeof jobs[njobs].key, "%s", key);
        njobs++;
    }
    if (!njobs) {
        fprintf(log, "tune: model '%s' has no tunable kernels in the %s class (the gpu class's "
                "GEMM / convolution / MatMul instances are tuned%s); no tuning file written\n",
                desc->name, ctx->kclass == O2R_VARIANT_GPU ? "gpu" : "cpu",
                desc->n_tunables ? "; tiles pinned by $ONNX2CL_GG_TILES are not" : "");
        goto done;
    }
    st = o2r_model_init_mode(ctx, desc, weights_path, O2R_TUNE_ALL, &m);
    if (o2r_err_is_build(ctx, st))
        st = init_without_failing_candidates(ctx, desc, weights_path, log, &m);
    if (st != O2R_OK)
        goto done;
    if (!tune_path(desc, 1, path, sizeof path)) {
        char cd[4096];
        o2r_cache_dir(cd, sizeof cd, 0);
        o2r_set_error(ctx, "no usable cache folder for the tuning file: %s%s (the folder is "
                      "$ONNX2CL_CACHE_DIR, else $XDG_CACHE_HOME/onnx2cl, else "
                      "$HOME/.cache/onnx2cl)", cd[0] ? cd : "none of those variables is set",
                      cd[0] ? " is not a folder and cannot be created as one" : "");
        st = O2R_ERR_IO;
        goto done;
    }
    /* the folder must take the file: checked before the budget is spent */
    {
        char tmp[4300];
        FILE *tf = o2r_tmp_create(path, tmp, sizeof tmp);
        if (!tf) {
            o2r_set_error(ctx, "cannot write the tuning file %s: %s (its cache folder must be "
                          "writable; see docs/tuning.md)", path, strerror(errno));
            st = O2R_ERR_IO;
            goto done;
        }
        fclose(tf);
        remove(tmp);
    }
    /* shapes the file already has for this device and driver are skipped, so that repeated
     * short --tune runs cover the model; when every shape has one, all are tuned again */
    char why_old[512];
    const int old_r = tune_file_read(path, desc, &old, why_old, sizeof why_old);
    {
        struct dev_id id;
        dev_id_of(ctx, &id);
        uint32_t nskip = 0;
        for (uint32_t j = 0; j < njobs; j++)
            for (uint32_t e = 0; e < old.n && !jobs[j].skip; e++)
                if (strcmp(old.e[e].key, jobs[j].key) == 0 &&
                    strcmp(old.e[e].platform, id.platform) == 0 &&
                    strcmp(old.e[e].device, id.device) == 0 &&
                    strcmp(old.e[e].driver, id.driver) == 0) {
                    jobs[j].skip = 1;
                    nskip++;
                }
        if (nskip == njobs) {
            for (uint32_t j = 0; j < njobs; j++)
                jobs[j].skip = 0;
            fprintf(log, "tune: every shape has an entry for this device and driver in %s: "
                    "tuning them all again\n", path);
        }
        if (nskip && nskip < njobs) {
            fprintf(log, "tune: %u of %u shapes already tuned for this device and driver in %s "
                    "are skipped (remove the file to tune them again)\n", (unsigned)nskip,
                    (unsigned)njobs, path);
        }
    }
    uint32_t ntodo_all = 0;
    for (uint32_t j = 0; j < njobs; j++)
        ntodo_all += !jobs[j].skip;
    fprintf(log, "tune: model '%s' on %s: %u shapes, the default and up to %u candidate%s each, "
            "budget %g s (program build%s %.1f s, not counted)\n", desc->name,
            ctx->device_name, (unsigned)ntodo_all, (unsigned)m->tune->ncand,
            m->tune->ncand == 1 ? "" : "s", seconds,
            m->tune->ncand ? " with the candidates" : "", (o2r_now_ms() - t0) / 1000.0);
    const double deadline = o2r_now_ms() + seconds * 1000.0;
    for (uint32_t i = 0; i < desc->n_inputs; i++) {
        in[i] = inputs ? inputs[i] : NULL;
        if (!in[i] && desc->inputs[i].nbytes) {
            gen[i] = o2r_malloc((size_t)desc->inputs[i].nbytes);
            if (!gen[i]) {
                o2r_set_error(ctx, "out of host memory for tuning input '%s'",
                              desc->inputs[i].name);
                st = O2R_ERR_NOMEM;
                goto done;
            }
            fill_input(&desc->inputs[i], gen[i], i);
            in[i] = gen[i];
        }
    }
    /* one run, launch by launch; at the first launch of each key, its candidates */
    st = o2r_model_upload_inputs(m, in);
    uint32_t done_jobs = 0;
    for (uint32_t li = 0; st == O2R_OK && li < desc->n_launches; li++) {
        if (!o2r_launch_selected(&desc->launches[li], m->kclass))
            continue;
        int tuned = 0;
        for (uint32_t j = 0; j < njobs && !tuned; j++) {
            struct tune_job *jb = &jobs[j];
            if (desc->tunables[jb->tunable].launch != li || jb->done || jb->skip)
                continue;
            if (o2r_now_ms() > deadline)
                break;
            st = tune_job(m, jb, ++done_jobs, ntodo_all, deadline, log);
            tuned = 1;
            li += desc->tunables[jb->tunable].span - 1; /* the span ran in tune_job */
        }
        if (!tuned && st == O2R_OK && !m->launches[li].check) { /* checks: not when tuning */
            const struct o2r_launch *l = &m->launches[li];
            st = o2r_launch_enqueue(m, li, l, m->kernels[m->launch_kernel[li]], NULL);
        }
        if (o2r_now_ms() > deadline && done_jobs < njobs)
            break;
    }
    cl_int e = clFinish(ctx->queue);
    if (st == O2R_OK && e != CL_SUCCESS) {
        o2r_set_error(ctx, "clFinish(tuning run of model '%s'): %s", desc->name,
                      o2r_cl_error_name(e));
        st = O2R_ERR_CL;
    }
    if (st != O2R_OK)
        goto done;
    uint32_t ndone = 0, ntodo = 0;
    for (uint32_t j = 0; j < njobs; j++) {
        ndone += jobs[j].done != 0;
        ntodo += !jobs[j].skip;
    }
    if (ndone < ntodo)
        fprintf(log, "tune: the %.0f s budget ran out after %u of %u shapes; the others keep "
                "their current tiles (run --tune again to continue)\n", seconds,
                (unsigned)ndone, (unsigned)ntodo);
    if (!ndone)
        goto done;
    if (old_r < 0)
        fprintf(stderr, "onnx2cl: warning: replacing tuning file %s: %s\n", path, why_old);
    st = tune_file_write(m, path, &old, jobs, njobs, log);
    fprintf(log, "tune: done in %.1f s\n", (o2r_now_ms() - t0) / 1000.0);
done:
    for (uint32_t i = 0; gen && i < desc->n_inputs; i++)
        o2r_free(gen[i]);
    o2r_free(gen);
    o2r_free(in);
    o2r_free(jobs);
    o2r_free(old.e);
    o2r_model_free(m);
    return st;
}
