/* main.c — o2r_main, the command-line interface of a generated per-model executable.
 *
 * What: parses --input/--output/--output-dir/--weights/--device/--bench/--profile/--verbose/
 * --help, reads and checks the input tensors, runs the model (optionally timed or profiled),
 * writes or summarizes the outputs. See o2r_usage for the text users see.
 * Assumes: desc is the model's static descriptor; outputs fit in host memory.
 * Guarantees: never exits; returns 0 (success), 1 (runtime error: bad file, OpenCL failure) or
 * 2 (usage error); every message goes to stderr prefixed with the program name; output files
 * are written only after every run succeeded, each atomically.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "tensor_internal.h"

/* Parsed command line. */
struct cli {
    const char **in_files;  /* [n_inputs] file per model input (NULL = not given) */
    const char **out_files; /* [n_outputs] --output file per model output (NULL = none) */
    const char *output_dir; /* --output-dir */
    const char *weights;    /* --weights */
    const char *device;     /* --device */
    const char *kernels;    /* --kernels cpu|gpu|auto (NULL = $ONNX2CL_KERNELS or auto) */
    long bench;             /* --bench N (0 = off) */
    int profile;            /* --profile */
    int verbose;            /* --verbose */
    double tune;            /* --tune [SECONDS]: time budget (0 = no tuning) */
};

/* Prints the usage text, with the model's inputs and outputs. */
static void o2r_usage(const struct o2r_model_desc *d, const char *prog, FILE *f)
{
    char shp[256];
    fprintf(f,
            "usage: %s --input NAME=FILE ... [--output NAME=FILE.npy ...] [--output-dir DIR]\n"
            "          [--weights PATH] [--device SPEC] [--kernels cpu|gpu|auto] [--bench N]\n"
            "          [--profile] [--verbose] [--tune [SECONDS]] | --list-devices | --help\n"
            "Runs model '%s' once through OpenCL.\n"
            "  --input NAME=FILE   model input NAME from FILE (.npy, or ONNX TensorProto .pb);\n"
            "                      every input exactly once; dtype and shape must match exactly\n"
            "  --output NAME=FILE  write output NAME to FILE (.npy, atomic)\n"
            "  --output-dir DIR    write every output as DIR/NAME.npy ('/' in names -> '_'; DIR is\n"
            "                      created, and removed again if the run fails)\n"
            "                      (with neither, a summary of each output is printed)\n"
            "  --weights PATH      weights file (default: this executable's path + \".weights\")\n"
            "  --device SPEC       OpenCL device: index N, or a substring of \"platform/device\"\n"
            "                      (default: $ONNX2CL_DEVICE, else the first GPU, else the first)\n"
            "  --kernels MODE      kernel variants: cpu, gpu or auto (default: $ONNX2CL_KERNELS,\n"
            "                      else auto = gpu variants on GPU devices, cpu variants otherwise)\n"
            "  --list-devices      list the OpenCL devices (type, memory, limits) and exit\n"
            "  --bench N           one warm-up run, then N timed runs (median and min)\n"
            "  --profile           print per-kernel device times of the (last) run\n"
            "  --verbose           print the device, the kernel variants and tiles chosen and the\n"
            "                      init time split to stderr\n"
            "  --tune [SECONDS]    first time the tile candidates of the gpu class's GEMM /\n"
            "                      convolution / MatMul kernels on this device (within SECONDS,\n"
            "                      default 60) and write the winners to the tuning file in the\n"
            "                      cache folder, which later starts read; inputs not given are\n"
            "                      pseudo-random (then only tuning is done)\n"
            "  --help              this text\n"
            "Environment: ONNX2CL_CACHE_DIR (program binary cache), ONNX2CL_CACHE=auto|always|off\n"
            "(auto: off on PoCL, which caches builds itself), ONNX2CL_NO_CACHE=1 (= off),\n"
            "ONNX2CL_CACHE_LOG=1, ONNX2CL_DEVICE, ONNX2CL_KERNELS, ONNX2CL_MAX_ALLOC=BYTES (largest\n"
            "device allocation, K/M/G suffix; below the device's limit it splits more),\n"
            "ONNX2CL_GLOBAL_MEM=BYTES (pretend the device has less memory; for tests),\n"
            "ONNX2CL_WEIGHTS_UPLOAD=auto|map|copy (auto: the mapped weights file is the device\n"
            "memory on CPU devices, copied elsewhere; copy where the file may be rewritten in\n"
            "place while running), ONNX2CL_WEIGHTS_VERIFY=auto|always (auto: the weights\n"
            "checksum is checked once per file version, stamped in the cache folder),\n"
            "ONNX2CL_TUNE_CANDIDATES=\"TM,TN,TK,RM,RN;...\" (the tile sets --tune tries).\n"
            "Exit status: 0 ok, 1 runtime error, 2 usage error.\n",
            prog, d->name);
    fprintf(f, "inputs:\n");
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        o2r_shape_str(d->inputs[i].rank, d->inputs[i].dims, shp, sizeof shp);
        fprintf(f, "  %s: %s %s\n", d->inputs[i].name, o2r_dtype_name(d->inputs[i].dtype), shp);
    }
    fprintf(f, "outputs:\n");
    for (uint32_t i = 0; i < d->n_outputs; i++) {
        o2r_shape_str(d->outputs[i].rank, d->outputs[i].dims, shp, sizeof shp);
        fprintf(f, "  %s: %s %s\n", d->outputs[i].name, o2r_dtype_name(d->outputs[i].dtype),
                shp);
    }
    struct o2r_memory mem;
    o2r_desc_memory(d, &mem);
    int wl = mem.largest_weight_bytes >= mem.largest_arena_bytes;
    int32_t lb = wl ? mem.largest_weight : mem.largest_arena;
    fprintf(f, "device memory (as compiled; split into allocations no larger than the device's\n"
               "CL_DEVICE_MAX_MEM_ALLOC_SIZE at init):\n"
               "  weights_bytes: %llu (%.2f MiB)\n  arena_bytes: %llu (%.2f MiB)\n"
               "  scratch_bytes: %llu\n  device_bytes_peak: %llu (%.2f MiB)\n",
            (unsigned long long)mem.weights_bytes, (double)mem.weights_bytes / 1048576.0,
            (unsigned long long)mem.arena_bytes, (double)mem.arena_bytes / 1048576.0,
            (unsigned long long)mem.scratch_bytes, (unsigned long long)mem.peak_bytes,
            (double)mem.peak_bytes / 1048576.0);
    if (lb >= 0)
        fprintf(f, "  largest_tensor_bytes: %llu (%s '%s'; one allocation must hold it)\n",
                (unsigned long long)d->buffers[lb].size, wl ? "weight" : "activation",
                d->buffers[lb].name ? d->buffers[lb].name : "?");
}

/* Lists the model's inputs or outputs on stderr after an error about a name. */
static void list_ios(const struct o2r_io *ios, uint32_t n, const char *what)
{
    char shp[256];
    fprintf(stderr, "model %s:\n", what);
    for (uint32_t i = 0; i < n; i++) {
        o2r_shape_str(ios[i].rank, ios[i].dims, shp, sizeof shp);
        fprintf(stderr, "  %s: %s %s\n", ios[i].name, o2r_dtype_name(ios[i].dtype), shp);
    }
}

/* Matches "--flag VALUE" or "--flag=VALUE"; 1 = matched (*val set, NULL if missing). */
static int opt_value(int argc, char **argv, int *i, const char *flag, const char **val)
{
    size_t n = strlen(flag);
    if (strncmp(argv[*i], flag, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *val = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != 0)
        return 0;
    *val = *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

/* Finds the io named `name` (length len); -1 if none. */
static int find_io(const struct o2r_io *ios, uint32_t n, const char *name, size_t len)
{
    for (uint32_t i = 0; i < n; i++)
        if (strlen(ios[i].name) == len && strncmp(ios[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

/* Parses argv into c. Returns 0 ok, 2 usage error, 3 = --help or --list-devices done, 4 =
 * --list-devices found no usable device (exit 1). */
static int parse_cli(const struct o2r_model_desc *d, int argc, char **argv, struct cli *c,
                     const char *prog)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o2r_usage(d, prog, stdout);
            return 3;
        } else if (strcmp(a, "--list-devices") == 0) {
            return o2r_list_devices(stdout) == O2R_OK ? 3 : 4;
        } else if (strcmp(a, "--profile") == 0) {
            c->profile = 1;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            c->verbose = 1;
        } else if (strcmp(a, "--tune") == 0 || strncmp(a, "--tune=", 7) == 0) {
            /* optional budget: --tune=S, or --tune S when the next word is a number */
            const char *tv = a[6] == '=' ? a + 7 : NULL;
            if (c->tune > 0) {
                fprintf(stderr, "%s: --tune given twice (give it once)\n", prog);
                return 2;
            }
            if (!tv && i + 1 < argc && ((argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') ||
                                        argv[i + 1][0] == '.'))
                tv = argv[++i];
            c->tune = 60;
            if (tv) {
                char *end = NULL;
                c->tune = strtod(tv, &end);
                if (!*tv || !end || *end || !(c->tune > 0) || c->tune > 86400) {
                    fprintf(stderr, "%s: --tune expects a time budget in seconds (0 < S <= "
                            "86400), got '%s'\n", prog, tv);
                    return 2;
                }
            }
        } else if (opt_value(argc, argv, &i, "--input", &v) ||
                   opt_value(argc, argv, &i, "--output", &v)) {
            int is_in = strncmp(a, "--input", 7) == 0;
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v || !eq[1]) {
                fprintf(stderr, "%s: %s expects NAME=FILE, got '%s'\n", prog,
                        is_in ? "--input" : "--output", v ? v : "");
                return 2;
            }
            const struct o2r_io *ios = is_in ? d->inputs : d->outputs;
            uint32_t n = is_in ? d->n_inputs : d->n_outputs;
            int k = find_io(ios, n, v, (size_t)(eq - v));
            if (k < 0) {
                fprintf(stderr, "%s: model '%s' has no %s named '%.*s'\n", prog, d->name,
                        is_in ? "input" : "output", (int)(eq - v), v);
                list_ios(ios, n, is_in ? "inputs" : "outputs");
                return 2;
            }
            const char **slot = is_in ? &c->in_files[k] : &c->out_files[k];
            if (*slot) {
                fprintf(stderr, "%s: %s '%s' given twice\n", prog, is_in ? "input" : "output",
                        ios[k].name);
                return 2;
            }
            *slot = eq + 1;
        } else if (opt_value(argc, argv, &i, "--output-dir", &v) ||
                   opt_value(argc, argv, &i, "--weights", &v) ||
                   opt_value(argc, argv, &i, "--device", &v) ||
                   opt_value(argc, argv, &i, "--kernels", &v) ||
                   opt_value(argc, argv, &i, "--bench", &v)) {
            if (!v || !*v) {
                fprintf(stderr, "%s: %.*s needs a value\n", prog, (int)strcspn(a, "="), a);
                return 2;
            }
            /* single-valued: a second one is refused, never silently the last */
            char nb[32];
            snprintf(nb, sizeof nb, "%ld", c->bench);
            const char *had = strncmp(a, "--output-dir", 12) == 0 ? c->output_dir
                              : strncmp(a, "--weights", 9) == 0   ? c->weights
                              : strncmp(a, "--device", 8) == 0    ? c->device
                              : strncmp(a, "--kernels", 9) == 0   ? c->kernels
                              : c->bench ? nb : NULL;
            if (had) {
                fprintf(stderr, "%s: %.*s given twice ('%s', then '%s'): give it once\n", prog,
                        (int)strcspn(a, "="), a, had, v);
                return 2;
            }
            if (strncmp(a, "--output-dir", 12) == 0) {
                c->output_dir = v;
            } else if (strncmp(a, "--weights", 9) == 0) {
                c->weights = v;
            } else if (strncmp(a, "--device", 8) == 0) {
                c->device = v;
            } else if (strncmp(a, "--kernels", 9) == 0) {
                if (strcmp(v, "cpu") && strcmp(v, "gpu") && strcmp(v, "auto")) {
                    fprintf(stderr, "%s: --kernels expects cpu, gpu or auto, got '%s'\n", prog, v);
                    return 2;
                }
                c->kernels = v;
            } else {
                char *end = NULL;
                c->bench = strtol(v, &end, 10);
                if (!end || *end || c->bench < 1 || c->bench > 1000000) {
                    fprintf(stderr, "%s: --bench expects a run count >= 1, got '%s'\n", prog, v);
                    return 2;
                }
            }
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (see --help)\n", prog, a);
            return 2;
        }
    }
    int missing = 0, outputs = c->output_dir != NULL;
    for (uint32_t k = 0; k < d->n_outputs; k++)
        outputs |= c->out_files[k] != NULL;
    for (uint32_t k = 0; k < d->n_inputs; k++)
        if (!c->in_files[k] && c->tune > 0 && !outputs) {
            continue; /* tuning alone: pseudo-random input */
        } else if (!c->in_files[k]) {
            char shp[256];
            o2r_shape_str(d->inputs[k].rank, d->inputs[k].dims, shp, sizeof shp);
            fprintf(stderr, "%s: missing --input %s=FILE (%s %s)\n", prog, d->inputs[k].name,
                    o2r_dtype_name(d->inputs[k].dtype), shp);
            missing = 1;
        }
    return missing ? 2 : 0;
}

/* Half (IEEE binary16 bits) to float, for output summaries. */
static float half_to_float(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m | 1024), e - 25);
    return s ? -v : v;
}

/* Element i of a host buffer of dtype as double. */
static double elem_as_double(const void *p, int32_t dtype, uint64_t i)
{
    switch (dtype) {
    case O2R_F32: return ((const float *)p)[i];
    case O2R_F64: return ((const double *)p)[i];
    case O2R_F16: return half_to_float(((const uint16_t *)p)[i]);
    case O2R_BF16: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    case O2R_U8: case O2R_BOOL: return ((const uint8_t *)p)[i];
    case O2R_I8: return ((const int8_t *)p)[i];
    case O2R_U16: return ((const uint16_t *)p)[i];
    case O2R_I16: return ((const int16_t *)p)[i];
    case O2R_I32: return ((const int32_t *)p)[i];
    case O2R_U32: return ((const uint32_t *)p)[i];
    case O2R_I64: return (double)((const int64_t *)p)[i];
    case O2R_U64: return (double)((const uint64_t *)p)[i];
    default: return 0;
    }
}

/* Prints name, shape, first values and mean/min/max of one output. */
static void print_summary(const struct o2r_io *io, const void *data)
{
    char shp[256];
    size_t es = o2r_dtype_size(io->dtype);
    uint64_t n = es ? io->nbytes / es : 0;
    o2r_shape_str(io->rank, io->dims, shp, sizeof shp);
    printf("%s: %s %s\n  values:", io->name, o2r_dtype_name(io->dtype), shp);
    for (uint64_t i = 0; i < n && i < 8; i++)
        printf(" %.6g", elem_as_double(data, io->dtype, i));
    printf("%s\n", n > 8 ? " ..." : "");
    if (n == 0) {
        printf("  (empty)\n");
        return;
    }
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    uint64_t nan = 0;
    for (uint64_t i = 0; i < n; i++) {
        double v = elem_as_double(data, io->dtype, i);
        if (isnan(v)) {
            nan++;
            continue;
        }
        sum += v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    printf("  mean %.6g  min %.6g  max %.6g", n > nan ? sum / (double)(n - nan) : NAN,
           mn, mx);
    if (nan)
        printf("  (%llu NaN)", (unsigned long long)nan);
    printf("\n");
}

/* 1 if the folder that would hold file path exists ("." for a bare name). */
static int parent_is_dir(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *cut = NULL;
    for (char *p = dir; *p; p++)
        if (*p == '/' || *p == '\\')
            cut = p;
    if (!cut)
        return 1;
    if (cut == dir)
        cut[1] = 0; /* "/name": the root */
    else
        *cut = 0;
    return o2r_path_is_dir(dir);
}

/* Default weights path: the executable's path + ".weights" (or its extension replaced). */
static char *default_weights(const char *argv0)
{
    char exe[4096];
    if (o2r_exe_path(exe, sizeof exe) == 0) {
        if (!argv0)
            return NULL;
        snprintf(exe, sizeof exe, "%s", argv0);
    }
    char *p = o2r_malloc(strlen(exe) + 16);
    if (!p)
        return NULL;
    sprintf(p, "%s.weights", exe);
    if (!o2r_path_exists(p)) {
        const char *slash = strrchr(exe, '/');
        char *dot = strrchr(exe, '.');
        if (dot && (!slash || dot > slash)) {
            *dot = 0;
            char alt[4200];
            snprintf(alt, sizeof alt, "%s.weights", exe);
            if (o2r_path_exists(alt))
                strcpy(p, alt);
        }
    }
    return p;
}

/* Output file name for --output-dir: DIR/NAME.npy, with unsafe characters replaced by '_'. */
static void sanitize_name(const char *name, uint32_t idx, char *out, size_t cap)
{
    size_t k = 0;
    for (const char *s = name; *s && k + 1 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                 (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
        out[k++] = ok ? (char)ch : '_';
    }
    out[k] = 0;
    if (k == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
        snprintf(out, cap, "output_%u", (unsigned)idx);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The default weights file: dflt (o2r_main_ex) or default_weights(argv0). */
static char *pick_weights(const char *dflt, const char *argv0)
{
    return dflt ? o2r_strdup(dflt) : default_weights(argv0);
}

static int main_impl(const struct o2r_model_desc *desc, const char *dflt_weights,
                     const char *prog_name, int argc, char **argv)
{
    const char *prog = prog_name ? prog_name : argc > 0 && argv[0] ? argv[0] : "onnx2cl-model";
    const char *slash = strrchr(prog, '/');
    if (slash)
        prog = slash + 1;
    int rc = 1;
    struct cli c;
    struct o2r_tensor *ins = NULL;
    const void **in_ptrs = NULL;
    void **out_ptrs = NULL;
    char *weights = NULL;
    double *times = NULL;
    char (*out_names)[512] = NULL;
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    char err[1024];
    memset(&c, 0, sizeof c);
    if (!desc) {
        fprintf(stderr, "%s: no model descriptor\n", prog);
        return 1;
    }
    c.in_files = o2r_calloc(desc->n_inputs, sizeof *c.in_files);
    c.out_files = o2r_calloc(desc->n_outputs, sizeof *c.out_files);
    ins = o2r_calloc(desc->n_inputs, sizeof *ins);
    in_ptrs = o2r_calloc(desc->n_inputs, sizeof *in_ptrs);
    out_ptrs = o2r_calloc(desc->n_outputs, sizeof *out_ptrs);
    out_names = o2r_calloc(desc->n_outputs, sizeof *out_names);
    if (!c.in_files || !c.out_files || !ins || !in_ptrs || !out_ptrs || !out_names) {
        fprintf(stderr, "%s: out of host memory\n", prog);
        goto cleanup;
    }
    int pr = parse_cli(desc, argc, argv, &c, prog);
    if (pr == 3 || pr == 4) {
        rc = pr == 3 ? 0 : 1;
        goto cleanup;
    }
    if (pr != 0) {
        rc = 2;
        goto cleanup;
    }
    /* output-dir file names, checked for collisions before any work */
    if (c.output_dir) {
        for (uint32_t i = 0; i < desc->n_outputs; i++) {
            char base[400];
            sanitize_name(desc->outputs[i].name, i, base, sizeof base);
            snprintf(out_names[i], sizeof out_names[i], "%s/%s.npy", c.output_dir, base);
            for (uint32_t j = 0; j < i; j++)
                if (strcmp(out_names[i], out_names[j]) == 0) {
                    fprintf(stderr, "%s: outputs '%s' and '%s' would both be written to %s; use "
                            "--output NAME=FILE for them\n", prog, desc->outputs[j].name,
                            desc->outputs[i].name, out_names[i]);
                    rc = 2;
                    goto cleanup;
                }
        }
    }
    /* --output files: no two outputs may target the same file */
    for (uint32_t i = 0; i < desc->n_outputs; i++)
        for (uint32_t j = 0; j < desc->n_outputs; j++) {
            const char *a = c.out_files[i];
            const char *b = j < i ? c.out_files[j] : NULL;
            const char *d = c.output_dir ? out_names[j] : NULL;
            if (a && ((b && strcmp(a, b) == 0) || (d && strcmp(a, d) == 0 && i != j))) {
                fprintf(stderr, "%s: outputs '%s' and '%s' would both be written to %s\n", prog,
                        desc->outputs[j].name, desc->outputs[i].name, a);
                rc = 2;
                goto cleanup;
            }
        }
    /* output paths: never a device node, FIFO, socket or symbolic link (checked again at write) */
    if (c.output_dir && o2r_path_check_output_dir(c.output_dir, err, sizeof err) != O2R_OK) {
        fprintf(stderr, "%s: --output-dir %s\n", prog, err);
        rc = 2;
        goto cleanup;
    }
    /* ... and never a file this run needs: the weights file, this executable, an input file */
    char *dw = c.weights ? NULL : pick_weights(dflt_weights, argc > 0 ? argv[0] : NULL);
    const char *wpath = c.weights ? c.weights : dw;
    char exe[4096];
    const int have_exe = o2r_exe_path(exe, sizeof exe) != 0;
    for (uint32_t i = 0; i < desc->n_outputs; i++)
        for (int q = 0; q < 2; q++) {
            const char *w = q == 0 ? c.out_files[i] : c.output_dir ? out_names[i] : NULL;
            const char *clash = NULL;
            if (!w)
                continue;
            if (o2r_path_check_output(w, err, sizeof err) != O2R_OK)
                clash = err;
            else if (q == 0 && !parent_is_dir(w))
                clash = "its folder does not exist (--output does not create folders; "
                        "--output-dir does)";
            else if (wpath && o2r_path_same_file(w, wpath))
                clash = "is this model's weights file";
            else if (have_exe && o2r_path_same_file(w, exe))
                clash = "is this executable";
            for (uint32_t k = 0; !clash && k < desc->n_inputs; k++)
                if (c.in_files[k] && o2r_path_same_file(w, c.in_files[k]))
                    clash = "is an input file of this run";
            if (clash) {
                fprintf(stderr, "%s: output '%s': %s%s%s\n", prog, desc->outputs[i].name,
                        clash == err ? "" : w, clash == err ? "" : ": ", clash);
                o2r_free(dw);
                rc = 2;
                goto cleanup;
            }
        }
    o2r_free(dw);
    /* inputs: read and check before touching the device */
    int all_inputs = 1;
    for (uint32_t i = 0; i < desc->n_inputs; i++) {
        const struct o2r_io *io = &desc->inputs[i];
        if (!c.in_files[i]) { /* --tune alone: o2r_model_tune makes it up */
            all_inputs = 0;
            continue;
        }
        if (o2r_tensor_read(c.in_files[i], &ins[i], err, sizeof err) != O2R_OK) {
            fprintf(stderr, "%s: input '%s': %s\n", prog, io->name, err);
            goto cleanup;
        }
        int same = ins[i].dtype == io->dtype && ins[i].rank == io->rank;
        for (int k = 0; same && k < io->rank; k++)
            same = ins[i].dims[k] == io->dims[k];
        if (!same) {
            char want[256], got[256];
            o2r_shape_str(io->rank, io->dims, want, sizeof want);
            o2r_shape_str(ins[i].rank, ins[i].dims, got, sizeof got);
            fprintf(stderr, "%s: input '%s': %s holds %s %s, the model expects %s %s\n", prog,
                    io->name, c.in_files[i], o2r_dtype_name(ins[i].dtype), got,
                    o2r_dtype_name(io->dtype), want);
            goto cleanup;
        }
        in_ptrs[i] = ins[i].data;
    }
    for (uint32_t i = 0; i < desc->n_outputs; i++) {
        out_ptrs[i] = o2r_malloc((size_t)desc->outputs[i].nbytes);
        if (!out_ptrs[i]) {
            fprintf(stderr, "%s: out of host memory for output '%s'\n", prog,
                    desc->outputs[i].name);
            goto cleanup;
        }
    }
    double t0 = o2r_now_ms();
    if (o2r_ctx_create(c.device, &ctx) != O2R_OK) {
        fprintf(stderr, "%s: %s\n", prog, o2r_ctx_last_error(NULL));
        goto cleanup;
    }
    if (c.kernels && o2r_ctx_set_kernels(ctx, c.kernels) != O2R_OK) {
        fprintf(stderr, "%s: %s\n", prog, o2r_ctx_last_error(ctx));
        goto cleanup;
    }
    double t1 = o2r_now_ms();
    if (c.verbose)
        fprintf(stderr, "%s: device %s (context %.1f ms)\n", prog, o2r_ctx_device_name(ctx),
                t1 - t0);
    if (!c.weights && desc->weights_bytes > 0) {
        weights = pick_weights(dflt_weights, argc > 0 ? argv[0] : NULL);
        if (!weights) {
            fprintf(stderr, "%s: cannot determine the default weights path; use --weights\n",
                    prog);
            goto cleanup;
        }
    }
    if (c.tune > 0) {
        if (o2r_model_tune(ctx, desc, c.weights ? c.weights : weights,
                           (const void *const *)in_ptrs, c.tune, stderr) != O2R_OK) {
            fprintf(stderr, "%s: --tune: %s\n", prog, o2r_ctx_last_error(ctx));
            goto cleanup;
        }
        if (!all_inputs) { /* tuning only */
            rc = 0;
            goto cleanup;
        }
        t1 = o2r_now_ms();
    }
    if (o2r_model_init(ctx, desc, c.weights ? c.weights : weights, &m) != O2R_OK) {
        fprintf(stderr, "%s: %s\n", prog, o2r_ctx_last_error(ctx));
        goto cleanup;
    }
    if (c.verbose) {
        double bms, wms;
        o2r_model_timing(m, &bms, &wms);
        fprintf(stderr, "%s: init %.1f ms (program %s %.1f ms, weights %.1f ms%s)\n", prog,
                o2r_now_ms() - t1, o2r_model_cache_hit(m) ? "from cache" : "build", bms, wms,
                o2r_model_weights_stamped(m) ? "; checksum checked at an earlier start, file "
                "unchanged since" : "");
        o2r_model_print_variants(m, stderr);
        o2r_model_print_tuning(m, stderr);
        const struct o2r_mem_plan *mp = o2r_model_mem_plan(m);
        char mapped[96] = "";
        if (o2r_model_mapped_chunks(m))
            snprintf(mapped, sizeof mapped, " (%u of them the mapped weights file, not copied)",
                     (unsigned)o2r_model_mapped_chunks(m));
        fprintf(stderr, "%s: device memory: weights %llu bytes in %u allocation(s)%s, arena %llu "
                "bytes in %u allocation(s)%s; allocation limit %llu bytes; %u buffer(s) of "
                "%llu bytes only other kernel classes use: not allocated\n", prog,
                (unsigned long long)mp->weights_bytes, (unsigned)mp->n_weight_chunks, mapped,
                (unsigned long long)mp->arena_bytes, (unsigned)mp->n_arena_chunks,
                mp->arena_replaced ? " (placed again to fit the limit)" : "",
                (unsigned long long)mp->limit, (unsigned)mp->n_unused,
                (unsigned long long)mp->unused_bytes);
    }
    if (c.profile && o2r_model_set_profiling(m, 1) != O2R_OK) {
        fprintf(stderr, "%s: %s\n", prog, o2r_ctx_last_error(ctx));
        goto cleanup;
    }
    long runs = c.bench ? c.bench + 1 : 1;
    if (c.bench) {
        times = o2r_calloc((size_t)c.bench, sizeof *times);
        if (!times) {
            fprintf(stderr, "%s: out of host memory\n", prog);
            goto cleanup;
        }
    }
    for (long r = 0; r < runs; r++) {
        double s = o2r_now_ms();
        if (o2r_model_run(m, (const void *const *)in_ptrs, (void *const *)out_ptrs) != O2R_OK) {
            fprintf(stderr, "%s: %s\n", prog, o2r_ctx_last_error(ctx));
            goto cleanup;
        }
        if (c.bench && r > 0)
            times[r - 1] = o2r_now_ms() - s;
    }
    if (c.bench) {
        qsort(times, (size_t)c.bench, sizeof *times, cmp_double);
        double med = c.bench % 2 ? times[c.bench / 2]
                                 : 0.5 * (times[c.bench / 2 - 1] + times[c.bench / 2]);
        printf("median %.3f ms, min %.3f ms over %ld runs\n", med, times[0], c.bench);
    }
    if (c.profile)
        o2r_model_print_profile(m, stdout);
    fflush(stdout); /* the timings are out before any teardown (a driver crash there kept them) */
    /* outputs, only after every run succeeded */
    size_t made_dirs = 0; /* --output-dir folders this run created: removed again on failure */
    if (c.output_dir) {
        if (o2r_path_check_output_dir(c.output_dir, err, sizeof err) != O2R_OK ||
            o2r_path_make_dirs_new(c.output_dir, &made_dirs, err, sizeof err) != O2R_OK) {
            fprintf(stderr, "%s: --output-dir %s\n", prog, err);
            goto cleanup;
        }
    }
    for (uint32_t i = 0; i < desc->n_outputs; i++) {
        const struct o2r_io *io = &desc->outputs[i];
        struct o2r_tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = io->dtype;
        t.rank = io->rank;
        memcpy(t.dims, io->dims, sizeof t.dims);
        t.data = out_ptrs[i];
        t.nbytes = io->nbytes;
        for (int pass = 0; pass < 2; pass++) {
            const char *path = pass == 0 ? c.out_files[i] : c.output_dir ? out_names[i] : NULL;
            if (path && o2r_tensor_write_npy(path, &t, err, sizeof err) != O2R_OK) {
                fprintf(stderr, "%s: output '%s': %s\n", prog, io->name, err);
                /* all or nothing: remove the outputs this run already wrote */
                for (uint32_t j = 0; j <= i; j++)
                    for (int q = 0; q < 2; q++) {
                        const char *w = q == 0 ? c.out_files[j] : c.output_dir ? out_names[j] : NULL;
                        if (w && (j < i || q < pass)) remove(w);
                    }
                if (c.output_dir)
                    o2r_path_remove_new_dirs(c.output_dir, made_dirs);
                goto cleanup;
            }
        }
        if (!c.output_dir) {
            int any = 0;
            for (uint32_t j = 0; j < desc->n_outputs; j++)
                any |= c.out_files[j] != NULL;
            if (!any)
                print_summary(io, out_ptrs[i]);
        }
    }
    rc = 0;
cleanup:
    o2r_model_free(m);
    o2r_ctx_free(ctx);
    for (uint32_t i = 0; ins && i < desc->n_inputs; i++)
        o2r_tensor_free(&ins[i]);
    for (uint32_t i = 0; out_ptrs && i < desc->n_outputs; i++)
        o2r_free(out_ptrs[i]);
    o2r_free(ins);
    o2r_free(in_ptrs);
    o2r_free(out_ptrs);
    o2r_free(out_names);
    o2r_free(c.in_files);
    o2r_free(c.out_files);
    o2r_free(weights);
    o2r_free(times);
    return rc;
}

int o2r_main(const struct o2r_model_desc *desc, int argc, char **argv)
{
    return o2r_main_ex(desc, NULL, NULL, argc, argv);
}

int o2r_main_ex(const struct o2r_model_desc *desc, const char *default_weights_path,
                const char *prog_name, int argc, char **argv)
{
    int rc = main_impl(desc, default_weights_path, prog_name, argc, argv);
    /* what went to stdout (summaries, --bench, --profile, --help, --list-devices) must have
     * arrived: a full disk or closed pipe is an error, not a silent exit 0 */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        const char *prog = prog_name ? prog_name : argc > 0 && argv[0] ? argv[0] : "onnx2cl-model";
        const char *slash = strrchr(prog, '/');
        fprintf(stderr, "%s: writing to standard output failed: %s\n", slash ? slash + 1 : prog,
                strerror(errno));
        rc = 1;
    }
    return rc;
}
