/* onnx2cl.c — the command-line compiler: ONNX model -> C file + weights (+ executable).
 *
 *   onnx2cl MODEL.onnx -o OUT.c   [options]   writes OUT.c, OUT.h and OUT.weights
 *   onnx2cl MODEL.onnx -o OUT     [options]   writes OUT.c, OUT.h, OUT.weights and compiles ./OUT
 *   onnx2cl MODEL.onnx -o OUT.o2d [options]   writes OUT.o2d (descriptor file) and OUT.weights
 *
 * Every output is written to a temporary file and renamed into place only when complete; any
 * error exits with status 1 (2 for usage errors) and leaves no partial file behind; a fatal signal
 * (fatal_signals) stops the C compiler's process group, cleans up the same way and exits 128+N.
 * With -o OUT the set OUT, OUT.c, OUT.h, OUT.weights is replaced all or nothing.
 * The runtime library and header are found beside the installed binary (PREFIX/bin ->
 * PREFIX/<libdir>/onnx2cl, PREFIX/include) or, when run from the build tree, in the
 * build and source trees; no environment variable is needed.
 */
#include "codegen/codegen.h"
#include "runtime/onnx2cl_rt.h"
#include "frontend/onnx_load.h"
#include "passes/passes.h"
#include "driver/info.h"
#include "frontend/safetensors.h"
#include "frontend/namemap.h"
#include "driver/ckpt_source.h"
#include "store.h" /* o2s_component_from_name (--add-component) */

#include <ctype.h>
#include <signal.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SHAPES 64

void ir_tmp_remove_all_signal_safe(void);

static volatile pid_t cc_child; /* the running C compiler (its own process group), stopped on a signal */

/* The signals whose default action ends the process: each one ends a run with the cleanup below. */
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
enum { N_FATAL_SIGNALS = sizeof fatal_signals / sizeof *fatal_signals };

/* A fatal signal: stop the C compiler and what it started (its process group: cc1, as, ld;
 * SIGTERM so that they remove their own temporaries, SIGKILL after 2 s), remove every temporary
 * and not-yet-committed output, exit 128+signal. Only async-signal-safe calls. */
static void on_signal(int sig)
{
    const pid_t cc = cc_child;
    if (cc > 0) {
        kill(-cc, SIGTERM);
        const struct timespec tick = {0, 10 * 1000 * 1000};
        for (int i = 0; i < 200 && waitpid(cc, NULL, WNOHANG) == 0; i++) nanosleep(&tick, NULL);
        kill(-cc, SIGKILL); /* the rest of the group (the pgid lives while a member does) */
        waitpid(cc, NULL, 0);
    }
    ir_tmp_remove_all_signal_safe();
    _exit(128 + sig);
}

/* on_signal for every fatal signal, except one the parent left ignored (nohup's SIGHUP, a
 * background job's SIGINT): that one stays ignored. The handler blocks the others while it runs. */
static void install_signal_handlers(void)
{
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    for (int i = 0; i < N_FATAL_SIGNALS; i++)
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(fatal_signals[i], &sa, NULL);
}

/* Canonical form of a path that may not exist yet: realpath(dirname) + "/" + basename. */
static char *canonical(const char *p)
{
    char *r = realpath(p, NULL);
    if (r) return r;
    const char *slash = strrchr(p, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - p) + (slash == p) : 1, slash ? p : ".");
    char *d = realpath(dir, NULL);
    if (!d) return strdup(p);
    size_t n = strlen(d) + strlen(p) + 2;
    char *c = malloc(n);
    snprintf(c, n, "%s/%s", d, slash ? slash + 1 : p);
    free(d);
    return c;
}

/* Fails (usage error) if two of the named paths are the same file. */
static void check_distinct(const char *const *paths, const char *const *what, int n)
{
    char *c[8];
    for (int i = 0; i < n; i++) c[i] = canonical(paths[i]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(c[i], c[j]) == 0)
                ir_usage_die("%s '%s' would overwrite the %s '%s'", what[i], paths[i], what[j], paths[j]);
    for (int i = 0; i < n; i++) free(c[i]);
}

/* Fails (usage error) if one of the n output paths names a file the loaded model reads: an
 * external data file (onnx_external_file) or a --bind file. Called after onnx_load, before
 * anything is written: the model's weights must never be replaced by an output. */
static void check_not_inputs(const char *const *paths, const char *const *what, int n,
                             const struct pass_options *opt)
{
    for (int i = 0; i < n; i++) {
        char *c = canonical(paths[i]);
        const char *ext;
        for (size_t k = 0; (ext = onnx_external_file(k)) != NULL; k++)
            if (strcmp(c, ext) == 0)
                ir_usage_die("%s '%s' would overwrite the model's external data file '%s'",
                             what[i], paths[i], ext);
        for (int b = 0; b < opt->nbinds; b++) {
            char *bc = canonical(opt->binds[b].file);
            const bool same = strcmp(c, bc) == 0;
            free(bc);
            if (same)
                ir_usage_die("%s '%s' would overwrite the --bind file '%s'", what[i], paths[i],
                             opt->binds[b].file);
        }
        free(c);
    }
}

static void usage(FILE *f)
{
    fputs("usage: onnx2cl MODEL.onnx -o OUT[.c] [options]\n"
          "  -o OUT.c               write OUT.c, OUT.h (API header) and OUT.weights\n"
          "  -o OUT                 also compile the executable OUT (with OUT.c, OUT.h, OUT.weights beside it)\n"
          "  -o OUT.o2d             write the descriptor file OUT.o2d and OUT.weights instead of C: run by\n"
          "                         onnx2cl-run OUT.o2d or loaded by onnx2cl-sd, no C compiler needed\n"
          "  --shape NAME=D0,D1,..  bind the dims of graph input NAME (needed for symbolic dims)\n"
          "  --bind NAME=FILE.npy   fix graph input NAME to FILE's value at compile time (it is no\n"
          "                         longer an input; control flow and shapes computed from it fold)\n"
          "  --expose NAME[,NAME..] keep intermediate values NAME (or 'all') as extra outputs\n"
          "  --name ID              C API prefix (default: from the output file name)\n"
          "  --stats                print pass statistics, kernel launches, arena and weights sizes\n"
          "  --stats-json FILE      write the same statistics as JSON (kernel_launches, arena_bytes,\n"
          "                         weights_bytes, device_bytes_peak, passes[{name, applied, rejected, reasons}])\n"
          "  --dump-after=PASS      print the IR after PASS (import, specialize_shapes, expose, infer_fold,\n"
          "                         promote_f16, remove_identity, dce, a fusion pass, all)\n"
          "  --no-fuse=NAME[,NAME]  disable fusion passes by name ('all' disables every fusion)\n"
          "  --verify               run the IR verifier after every pass\n"
          "  --no-main              do not emit main() (library use)\n"
          "  --cc CC                C compiler command for the executable, split at spaces\n"
          "                         (\"ccache gcc\"; default: $CC or the build's)\n"
          "  --weights-from FILE    take initializer values from FILE.safetensors (by name; F32,\n"
          "                         F16, BF16, F64 into float32 initializers, F32, F16 into float16\n"
          "                         ones); tensors that match no initializer or differ in shape or\n"
          "                         dtype are listed and refused\n"
          "  --name-map FILE        with --weights-from CKPT: FILE.namemap names each initializer's\n"
          "                         canonical checkpoint key(s) and transform (docs/engine.md); CKPT\n"
          "                         holds one component's canonical keys (diffusers save_pretrained);\n"
          "                         every mapped initializer must be there with fitting dims; it\n"
          "                         also fills the placeholders of a weight-free graph (models/arch)\n"
          "  --name-map-from CKPT   recover the model's name map by value matching its initializers\n"
          "                         (as is or 2-D transposed) with CKPT's tensors; written to\n"
          "                         --name-map-out FILE, or OUT.namemap beside -o OUT (then compiles)\n"
          "  --name-map-out FILE    where --name-map-from writes the name map\n"
          "  --component NAME       the checkpoint component (unet, vae, text_encoder,\n"
          "                         text_encoder_2) for --name-map-from (default: CKPT's folder\n"
          "                         name) and for --weights-from CKPT --name-map (default: the\n"
          "                         name map's component column)\n"
          "                         With --name-map, CKPT may be anything the checkpoint store\n"
          "                         reads: an LDM single file (A1111/civitai), a diffusers folder,\n"
          "                         one component's .safetensors (docs/engine.md)\n"
          "  --variant V            diffusers folder: read the *.V.safetensors files (fp16)\n"
          "  --ema                  LDM single file: the UNet from its EMA copy (model_ema.*)\n"
          "  --add-component NAME=FILE  with --weights-from CKPT: FILE.safetensors as CKPT's component\n"
          "                         NAME (vae, text_encoder, ...), added or replacing CKPT's own\n"
          "  --lora FILE[:SCALE]    with --name-map: merge the LoRA FILE (kohya lora_unet_/lora_te_,\n"
          "                         diffusers/PEFT lora_A/lora_B, LoCon) into the checkpoint's\n"
          "                         weights with strength SCALE (default 1); repeatable\n"
          "  --weights-only         with -o OUT.weights: write only the weights file, for the\n"
          "                         builds of the same structure and flags, any --shape (a\n"
          "                         fine-tune's values, or --weights-from); the executable refuses\n"
          "                         it when the weights layouts differ, naming the tensor\n"
          "  --reuse-weights FILE   with -o OUT.o2d or OUT.c: write no weights file; the build runs\n"
          "                         with FILE.weights, written by a build of the same structure,\n"
          "                         flags and weights (any --shape): its layout, storage and size are\n"
          "                         checked and its checksum goes into the build (a new image size in\n"
          "                         seconds: no weight is read or written); run it with --weights FILE\n"
          "                         (the default is OUT.weights beside OUT)\n"
          "  --weights-dtype f16|f32  storage of the GEMM/conv/embedding weights in the weights file\n"
          "                         and on the device: f16 = IEEE half (read with vload_half, float32\n"
          "                         arithmetic), f32 = float32 (default: f16 for float16 models, else f32)\n"
          "  --info                 print inputs/outputs, op histogram, parameters, FLOPs, weights\n"
          "                         bytes (float32 and float16 storage), arena bytes, peak device\n"
          "                         memory and kernel launches for the --shape bindings; writes\n"
          "                         nothing (no -o); with --stats-json FILE it prints nothing and\n"
          "                         writes those figures to FILE (no weight is read either way)\n"
          "  --list-devices         list the OpenCL devices the generated programs can use and exit\n"
          "  --version, --help\n",
          f);
}

/* Whether everything written to stdout arrived (a full disk or closed pipe is an error, not a
 * silent exit 0); says so on stderr when not. */
static bool stdout_ok(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return true;
    fprintf(stderr, "onnx2cl: writing to standard output failed: %s\n", strerror(errno));
    return false;
}

static void usage_error(const char *fmt, const char *arg)
{
    fputs("onnx2cl: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(run 'onnx2cl --help' for usage)\n", stderr);
    exit(2);
}

/* Sets *slot to v for option flag, which takes one value: refused when given twice (the
 * first value would otherwise be dropped silently). */
static void set_once(const char **slot, const char *flag, const char *v)
{
    if (*slot) {
        char both[2 * PATH_MAX + 128];
        snprintf(both, sizeof both, "%s given twice ('%.*s', then '%.*s'): give it once", flag,
                 PATH_MAX, *slot, PATH_MAX, v);
        usage_error("%s", both);
    }
    *slot = v;
}

static void parse_shape(const char *arg, struct pass_shape_binding *b)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) usage_error("--shape %s: expected NAME=D0,D1,...", arg);
    b->input = strndup(arg, (size_t)(eq - arg));
    b->rank = 0;
    const char *p = eq + 1;
    if (!*p) return; /* scalar */
    for (;;) {
        if (b->rank >= IR_MAX_RANK) usage_error("--shape %s: too many dims", arg);
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0) usage_error("--shape %s: dims must be non-negative integers", arg);
        b->dims[b->rank++] = v;
        if (*end == 0) break;
        if (*end != ',' && *end != 'x')
            usage_error(*end == '.' || *end == 'e' || *end == 'E'
                            ? "--shape %s: dims must be non-negative integers"
                            : "--shape %s: dims are separated by ',' (or 'x', as in 1x77)", arg);
        p = end + 1;
    }
}

/* --bind NAME=FILE: reads FILE (.npy or TensorProto .pb) now; an unreadable file is a usage
 * error naming it. The value's fit to the input is checked by pass_specialize_shapes. */
static void parse_bind(const char *arg, struct pass_value_binding *b)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) usage_error("--bind %s: expected NAME=FILE.npy", arg);
    b->input = strndup(arg, (size_t)(eq - arg));
    b->file = eq + 1;
    struct o2r_tensor t;
    char err[1024];
    if (o2r_tensor_read(b->file, &t, err, sizeof err) != O2R_OK) {
        fprintf(stderr, "onnx2cl: --bind %s: %s\n(run 'onnx2cl --help' for usage)\n", arg, err);
        exit(2);
    }
    if (t.rank > IR_MAX_RANK) usage_error("--bind %s: more dims than onnx2cl supports", arg);
    b->dtype = (enum ir_dtype)t.dtype;
    b->rank = t.rank;
    for (int k = 0; k < t.rank; k++) b->dims[k] = t.dims[k];
    b->data = t.data; /* kept until exit */
    b->nbytes = (size_t)t.nbytes;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static char *c_identifier(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (ends_with(base, ".c")) n -= 2;
    else if (ends_with(base, ".o2d")) n -= 4;
    char *id = malloc(n + 3);
    size_t o = 0;
    /* a C identifier that is not reserved: no leading digit or underscore */
    if (n == 0 || isdigit((unsigned char)base[0]) || !isalnum((unsigned char)base[0])) id[o++] = 'm';
    for (size_t i = 0; i < n; i++) id[o++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
    id[o] = 0;
    return id;
}

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Finds the runtime header folder and static library (install layout first, then build tree). */
static void find_runtime(char *inc, char *lib, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        char *up = strrchr(exe, '/');
        if (up) {
            *up = 0; /* prefix */
            if ((size_t)snprintf(inc, cap, "%s/%s", exe, ONNX2CL_INSTALL_RT_INCLUDE) >= cap ||
                (size_t)snprintf(lib, cap, "%s/%s", exe, ONNX2CL_INSTALL_RT_LIB) >= cap)
                ir_die("installation path too long: %s", exe);
            char h[2 * PATH_MAX + 32];
            snprintf(h, sizeof h, "%s/onnx2cl_rt.h", inc);
            if (file_exists(h) && file_exists(lib)) return;
        }
    }
    snprintf(inc, cap, "%s", ONNX2CL_BUILD_RT_INCLUDE);
    snprintf(lib, cap, "%s", ONNX2CL_BUILD_RT_LIB);
    if (!file_exists(lib))
        ir_die("cannot find the runtime library (looked beside the onnx2cl binary and at %s)", lib);
}

/* Just before a rename into place: the output must still be missing or a regular file. */
static void check_still_regular(const char *path)
{
    char err[1024];
    if (o2r_path_check_output(path, err, sizeof err) != O2R_OK) ir_die("%s", err);
}

static int compile_executable(const char *cc, const char *c_path, const char *exe_path)
{
    char inc[2 * PATH_MAX], lib[2 * PATH_MAX];
    find_runtime(inc, lib, sizeof inc);
    /* the fatal signals are blocked from the temporary's creation until it is registered and
     * cc_child names the compiler: on_signal then removes the one and stops the other */
    sigset_t fatal, old_mask;
    sigemptyset(&fatal);
    for (int i = 0; i < N_FATAL_SIGNALS; i++) sigaddset(&fatal, fatal_signals[i]);
    sigprocmask(SIG_BLOCK, &fatal, &old_mask);
    size_t n = strlen(exe_path) + 16;
    char *tmp = malloc(n);
    snprintf(tmp, n, "%s.tmpXXXXXX", exe_path);
    int fd = mkstemp(tmp);
    if (fd < 0) ir_die("%s: cannot create a temporary file beside it: %s", exe_path, strerror(errno));
    close(fd);
    ir_tmp_register(tmp);
    char incflag[2 * PATH_MAX + 4];
    snprintf(incflag, sizeof incflag, "-I%s", inc);
    const char *san = ONNX2CL_SANITIZE_FLAGS;
    /* CC / --cc may hold a command with arguments ("ccache gcc", "gcc -m64"): split at spaces
     * and tabs like make does (no quoting); at most 32 words */
    enum { MAX_CC_WORDS = 32 };
    const char *argv[MAX_CC_WORDS + 16];
    char *ccw = strdup(cc);
    if (!ccw) ir_die("%s", "out of memory");
    int a = 0;
    for (char *save = NULL, *w = strtok_r(ccw, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (a == MAX_CC_WORDS) ir_die("C compiler command '%s': more than %d words", cc, MAX_CC_WORDS);
        argv[a++] = w;
    }
    if (a == 0) ir_die("C compiler command '%s' is empty", cc);
    argv[a++] = "-O2";
    argv[a++] = "-std=c11";
    argv[a++] = incflag;
    if (san[0]) argv[a++] = san;
    argv[a++] = c_path;
    argv[a++] = lib;
    argv[a++] = "-lOpenCL";
    argv[a++] = "-lm";
    argv[a++] = "-o";
    argv[a++] = tmp;
    argv[a] = NULL;
    /* the compiler runs in its own process group, which on_signal stops as a whole */
    pid_t pid = fork();
    if (pid < 0) ir_die("fork failed: %s", strerror(errno));
    if (pid > 0) {
        setpgid(pid, pid);
        cc_child = pid;
    }
    if (pid == 0) {
        setpgid(0, 0);
        struct sigaction dfl = {0}, cur;
        dfl.sa_handler = SIG_DFL;
        for (int i = 0; i < N_FATAL_SIGNALS; i++)
            if (sigaction(fatal_signals[i], NULL, &cur) == 0 && cur.sa_handler == on_signal)
                sigaction(fatal_signals[i], &dfl, NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "onnx2cl: cannot run the C compiler '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    cc_child = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        ir_die("%s: the C compiler '%s' failed on %s (see its messages above)", exe_path, cc, c_path);
    chmod(tmp, 0755);
    check_still_regular(exe_path);
    if (rename(tmp, exe_path) != 0) ir_die("%s: cannot rename into place: %s", exe_path, strerror(errno));
    ir_tmp_unregister(tmp);
    free(tmp);
    free(ccw);
    return 0;
}

/* The one file a --weights-only or --info --stats-json run writes: not the model or the
 * --weights-from file, a writable place (flag names it in the error); then the signal handlers that
 * remove it when interrupted. */
static void check_one_output(const char *model, const char *out, const char *what, const char *flag,
                             const char *weights_from)
{
    const char *paths[3] = {model, out, weights_from};
    const char *whats[3] = {"model", what, "--weights-from file"};
    char err[1024];
    check_distinct(paths, whats, weights_from ? 3 : 2);
    if (o2r_path_check_output(out, err, sizeof err) != O2R_OK) ir_usage_die("%s: %s", flag, err);
    install_signal_handlers();
}

/* --reuse-weights FILE: FILE's header (runtime/onnx2cl_rt.h, "Weights file layout") must carry m's
 * weights layout hash, storage dtype and payload size; its checksum becomes m's (so the descriptor
 * is the one a build writing FILE would give). Fatal, naming FILE and what differs, otherwise. */
static void reuse_weights_file(struct cg_ctx *m, const char *path)
{
    const struct o2r_model_desc *d = cg_desc_plan(m);
    unsigned char h[104];
    struct stat st;
    if (stat(path, &st) != 0) ir_usage_die("--reuse-weights %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) ir_usage_die("--reuse-weights %s: not a regular file (a weights file)", path);
    FILE *f = fopen(path, "rb");
    if (!f) ir_usage_die("--reuse-weights %s: %s", path, strerror(errno));
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    uint32_t ver, dt;
    uint64_t payload, sum, layout;
    memcpy(&ver, h + 8, 4);
    memcpy(&dt, h + 12, 4);
    memcpy(&payload, h + 16, 8);
    memcpy(&sum, h + 24, 8);
    memcpy(&layout, h + 96, 8);
    if (n != sizeof h || memcmp(h, O2R_WEIGHTS_MAGIC, 8) != 0 || ver != O2R_WEIGHTS_VERSION)
        ir_usage_die("--reuse-weights %s: not an onnx2cl weights file of format %u", path,
                     (unsigned)O2R_WEIGHTS_VERSION);
    const uint64_t want = o2r_desc_layout_hash(d);
    if (layout != want || dt != (uint32_t)d->weights_dtype || payload != d->weights_file_bytes)
        ir_usage_die("--reuse-weights %s: written by another build (weights layout %016" PRIx64 ", %s storage, "
                     "%" PRIu64 " bytes; this build: %016" PRIx64 ", %s, %" PRIu64 " bytes): rebuild without "
                     "--reuse-weights", path, layout, dt == O2R_F16 ? "f16" : "f32", payload, want,
                     d->weights_dtype == O2R_F16 ? "f16" : "f32", (uint64_t)d->weights_file_bytes);
    if ((uint64_t)st.st_size < O2R_WEIGHTS_HEADER + payload)
        ir_usage_die("--reuse-weights %s: truncated (%" PRIu64 " bytes; its header and %" PRIu64 " bytes of "
                     "weights need %" PRIu64 "): rebuild without --reuse-weights", path, (uint64_t)st.st_size,
                     payload, (uint64_t)O2R_WEIGHTS_HEADER + payload);
    cg_set_checksum(m, sum);
}

/* --stats-json: machine-readable statistics, written atomically. */
static void write_stats_json(const char *path, const struct ir_graph *g, const struct cg_ctx *m,
                             double compile_s)
{
    const struct o2r_model_desc *d = cg_desc_plan(m); /* nothing here needs the weights checksum */
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    snprintf(tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) ir_die("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
    ir_tmp_register(tmp);
    FILE *f = fdopen(fd, "w");
    uint32_t live = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) live += !g->nodes[i].dead;
    struct o2r_memory mem;
    o2r_desc_memory(d, &mem);
    fprintf(f, "{\n  \"kernel_launches\": %u,\n  \"kernel_launches_gpu\": %u,\n  \"arena_bytes\": %" PRIu64 ",\n  \"weights_bytes\": %" PRIu64
               ",\n  \"weights_dtype\": \"%s\",\n  \"weights_bytes_f32\": %" PRIu64 ",\n  \"weights_bytes_f16\": %" PRIu64
               ",\n  \"device_bytes_peak\": %" PRIu64 ",\n  \"nodes_after\": %u,\n  \"compile_seconds\": %.3f,\n  \"passes\": ",
            cg_launch_count(m, 1 /* CG_VARIANT_CPU */), cg_launch_count(m, 2 /* CG_VARIANT_GPU */),
            d->arena_bytes, d->weights_bytes, d->weights_dtype == O2R_F16 ? "f16" : "f32",
            cg_weights_bytes_as(m, IR_F32), cg_weights_bytes_as(m, IR_F16), mem.peak_bytes, live,
            compile_s);
    fuse_stats_json(f);
    fputs("\n}\n", f);
    if (fclose(f) != 0) ir_die("%s: write failed", path);
    check_still_regular(path);
    if (rename(tmp, path) != 0) ir_die("%s: cannot rename into place: %s", path, strerror(errno));
    ir_tmp_unregister(tmp);
    free(tmp);
}

/* The weights storage dtype: --weights-dtype when given (wd: IR_F16 / IR_F32), else IR_F16 for a
 * float16 model (its float initializers hold more float16 than float32 elements, as an SD fp16
 * export: storing its weights as half loses nothing), else IR_F32. g as imported (before
 * promote_f16 makes every float16 constant float32). */
static enum ir_dtype weights_dtype(const struct ir_graph *g, enum ir_dtype wd)
{
    if (wd != IR_UNDEFINED) return wd;
    uint64_t h = 0, f = 0;
    for (uint32_t v = 0; v < g->nvalues; v++) {
        const struct ir_value *val = &g->values[v];
        if (!val->is_initializer || !val->data) continue;
        if (val->dtype == IR_F16) h += (uint64_t)(val->nbytes / 2);
        else if (val->dtype == IR_F32) f += (uint64_t)(val->nbytes / 4);
    }
    return h > f ? IR_F16 : IR_F32;
}

/* --weights-from: initializer values from a safetensors file (NULL: none), by initializer name,
 * or through the name map name_map (NULL: none) by canonical key; then every placeholder of a
 * weight-free graph must have been given a value. */
static void apply_weights_from(struct ir_graph *g, const char *model, const char *file,
                               const char *name_map, const char *component,
                               const struct ckpt_options *co)
{
    if (!file) {
        nm_check_filled(g, model, "no --weights-from CKPT --name-map FILE gave its value");
        return;
    }
    if (name_map) {
        struct nm_map m;
        struct nm_source src;
        struct nm_result r;
        nm_load(g, name_map, &m);
        for (size_t i = 0; i < m.n && !component; i++) component = m.lines[i].component;
        if (!component) component = "unet"; /* a map of "-" lines only: nothing to look up */
        if (!ckpt_source_open(g, file, component, co, &src)) nm_source_safetensors(g, file, &src);
        nm_apply(g, &m, &src, &r);
        /* the tensors came from --add-component's file when one replaced this component */
        const char *from = file;
        int ci = o2s_component_from_name(component);
        if (co && ci >= 0 && ci < 8 && co->add_component[ci]) from = co->add_component[ci];
        if (r.unused)
            fprintf(stderr, "onnx2cl: note: %u of %zu tensors of %s are not used by the name map "
                    "%s (e.g. '%s'%s%s%s)\n", r.unused, src.n, from, name_map,
                    r.first_unused[0], r.first_unused[1] ? ", '" : "",
                    r.first_unused[1] ? r.first_unused[1] : "", r.first_unused[1] ? "'" : "");
        char how[PATH_MAX + 64];
        snprintf(how, sizeof how, "the name map %.*s has no line for it", PATH_MAX, name_map);
        nm_check_filled(g, model, how);
        return;
    }
    struct st_result r;
    st_apply(g, file, &r);
    if (r.kept)
        fprintf(stderr, "onnx2cl: note: %u of %u initializers are not in %s and keep the model's "
                "values (e.g. '%s')\n", r.kept, r.initializers, file,
                r.first_kept ? r.first_kept : "?");
    char how[PATH_MAX + 64];
    snprintf(how, sizeof how, "%.*s has no tensor of that name (give --name-map FILE)", PATH_MAX,
             file);
    nm_check_filled(g, model, how);
}

/* The diffusers component a checkpoint path's folder names (".../unet/x.safetensors" -> "unet"),
 * or NULL. */
static const char *component_of(const char *ckpt)
{
    static const char *known[] = {"unet", "vae", "text_encoder", "text_encoder_2"};
    static char buf[64];
    const char *slash = strrchr(ckpt, '/');
    if (!slash) return NULL;
    const char *b = slash;
    while (b > ckpt && b[-1] != '/') b--;
    size_t n = (size_t)(slash - b);
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strlen(known[i]) == n && strncmp(b, known[i], n) == 0) {
            snprintf(buf, sizeof buf, "%s", known[i]);
            return buf;
        }
    return NULL;
}

/* --name-map-from: writes the recovered name map of g (as imported) to out_path. */
static void recover_name_map(struct ir_graph *g, const char *ckpt, const char *component,
                             const char *out_path)
{
    struct nm_source src;
    nm_source_safetensors(g, ckpt, &src);
    uint32_t missed = 0;
    uint32_t matched = nm_recover(g, &src, component, out_path, &missed);
    fprintf(stderr, "onnx2cl: wrote %s: %u initializers matched tensors of %s%s", out_path, matched,
            ckpt, missed ? "" : "\n");
    if (missed)
        fprintf(stderr, "; %u float initializers matched none (kept from the graph: '-')\n",
                missed);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, *name = NULL, *cc = NULL, *stats_json = NULL;
    static struct pass_shape_binding shapes[MAX_SHAPES];
    static struct pass_value_binding binds[MAX_SHAPES];
    struct pass_options opt = {0};
    bool with_main = true, info = false, weights_only = false;
    const char *reuse_weights = NULL;
    const char *weights_from = NULL, *wdtype_arg = NULL;
    const char *name_map = NULL, *name_map_from = NULL, *name_map_out = NULL, *component = NULL;
    enum ir_dtype wdtype = IR_UNDEFINED; /* --weights-dtype (IR_UNDEFINED: by the model) */
    static struct ckpt_lora loras[MAX_SHAPES];
    struct ckpt_options ckpt_opt = {.loras = loras};
    opt.shapes = shapes;
    opt.binds = binds;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (usage_error("%s needs a value", a), ""))
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("onnx2cl %s\n", ONNX2CL_VERSION);
            return 0;
        } else if (strcmp(a, "--weights-from") == 0 || strncmp(a, "--weights-from=", 15) == 0) {
            set_once(&weights_from, "--weights-from", a[14] == '=' ? a + 15 : NEXT());
        } else if (strcmp(a, "--name-map") == 0 || strncmp(a, "--name-map=", 11) == 0) {
            set_once(&name_map, "--name-map", a[10] == '=' ? a + 11 : NEXT());
        } else if (strcmp(a, "--name-map-from") == 0 || strncmp(a, "--name-map-from=", 16) == 0) {
            set_once(&name_map_from, "--name-map-from", a[15] == '=' ? a + 16 : NEXT());
        } else if (strcmp(a, "--name-map-out") == 0 || strncmp(a, "--name-map-out=", 15) == 0) {
            set_once(&name_map_out, "--name-map-out", a[14] == '=' ? a + 15 : NEXT());
        } else if (strcmp(a, "--component") == 0 || strncmp(a, "--component=", 12) == 0) {
            set_once(&component, "--component", a[11] == '=' ? a + 12 : NEXT());
        } else if (strcmp(a, "--variant") == 0 || strncmp(a, "--variant=", 10) == 0) {
            set_once(&ckpt_opt.variant, "--variant", a[9] == '=' ? a + 10 : NEXT());
            if (!*ckpt_opt.variant || strpbrk(ckpt_opt.variant, "/\\"))
                usage_error("--variant '%s': expected a file variant such as fp16",
                            ckpt_opt.variant);
        } else if (strcmp(a, "--ema") == 0) {
            ckpt_opt.use_ema = true;
        } else if (strcmp(a, "--add-component") == 0 || strncmp(a, "--add-component=", 16) == 0) {
            const char *v = a[15] == '=' ? a + 16 : NEXT();
            const char *eq = strchr(v, '=');
            char name[32];
            int c = -1;
            if (eq && (size_t)(eq - v) < sizeof name) {
                memcpy(name, v, (size_t)(eq - v));
                name[eq - v] = 0;
                c = o2s_component_from_name(name);
            }
            if (c < 0 || c >= 8 || !eq[1])
                usage_error("--add-component '%s': expected NAME=FILE (NAME: vae, text_encoder, text_encoder_2, "
                            "text_encoder_3, transformer, unet)", v);
            if (ckpt_opt.add_component[c]) usage_error("--add-component %s given twice", name);
            ckpt_opt.add_component[c] = eq + 1;
        } else if (strcmp(a, "--lora") == 0 || strncmp(a, "--lora=", 7) == 0) {
            const char *v = a[6] == '=' ? a + 7 : NEXT();
            if (ckpt_opt.nloras >= MAX_SHAPES) usage_error("too many --lora flags (%s)", v);
            ckpt_lora_parse(v, &loras[ckpt_opt.nloras++]);
        } else if (strcmp(a, "--weights-dtype") == 0 || strncmp(a, "--weights-dtype=", 16) == 0) {
            const char *v = a[15] == '=' ? a + 16 : NEXT();
            set_once(&wdtype_arg, "--weights-dtype", v);
            if (strcmp(v, "f16") == 0) wdtype = IR_F16;
            else if (strcmp(v, "f32") == 0) wdtype = IR_F32;
            else usage_error("--weights-dtype %s: expected f16 (IEEE half) or f32 (float32)", v);
        } else if (strcmp(a, "--info") == 0) {
            info = true;
        } else if (strcmp(a, "--weights-only") == 0) {
            weights_only = true;
        } else if (strcmp(a, "--reuse-weights") == 0) {
            set_once(&reuse_weights, "--reuse-weights", NEXT());
        } else if (strcmp(a, "--list-devices") == 0) {
            if (argc != 2) usage_error("%s", "--list-devices takes no other arguments");
            int rc = o2r_list_devices(stdout) == O2R_OK ? 0 : 1;
            return stdout_ok() ? rc : 1;
        } else if (strcmp(a, "-o") == 0) {
            set_once(&out, "-o", NEXT());
        } else if (strcmp(a, "--shape") == 0 || strncmp(a, "--shape=", 8) == 0) {
            const char *v = a[7] == '=' ? a + 8 : NEXT();
            if (opt.nshapes >= MAX_SHAPES) usage_error("too many --shape flags (%s)", v);
            parse_shape(v, &shapes[opt.nshapes++]);
        } else if (strcmp(a, "--bind") == 0 || strncmp(a, "--bind=", 7) == 0) {
            const char *v = a[6] == '=' ? a + 7 : NEXT();
            if (opt.nbinds >= MAX_SHAPES) usage_error("too many --bind flags (%s)", v);
            parse_bind(v, &binds[opt.nbinds++]);
        } else if (strcmp(a, "--expose") == 0 || strncmp(a, "--expose=", 9) == 0) {
            set_once(&opt.expose, "--expose", a[8] == '=' ? a + 9 : NEXT());
            if (!*opt.expose) usage_error("%s", "--expose needs NAME[,NAME...] or all");
        } else if (strcmp(a, "--name") == 0) {
            set_once(&name, "--name", NEXT());
        } else if (strcmp(a, "--cc") == 0) {
            set_once(&cc, "--cc", NEXT());
            if (!cc[strspn(cc, " \t")]) usage_error("--cc '%s': expected a C compiler command", cc);
        } else if (strcmp(a, "--stats") == 0) {
            opt.stats = true;
        } else if (strcmp(a, "--stats-json") == 0) {
            set_once(&stats_json, "--stats-json", NEXT());
        } else if (strncmp(a, "--stats-json=", 13) == 0) {
            set_once(&stats_json, "--stats-json", a + 13);
        } else if (strcmp(a, "--verify") == 0) {
            opt.verify = true;
        } else if (strncmp(a, "--dump-after=", 13) == 0) {
            set_once(&opt.dump_after, "--dump-after", a + 13);
        } else if (strcmp(a, "--dump-after") == 0) {
            set_once(&opt.dump_after, "--dump-after", NEXT());
        } else if (strncmp(a, "--no-fuse=", 10) == 0) {
            set_once(&opt.no_fuse, "--no-fuse", a + 10);
        } else if (strcmp(a, "--no-main") == 0) {
            with_main = false;
        } else if (a[0] == '-' && a[1]) {
            usage_error("unknown option '%s'", a);
        } else if (!model) {
            model = a;
        } else {
            usage_error("more than one model given ('%s')", a);
        }
#undef NEXT
    }
    if (!model) usage_error("%s", "no model given");
    if (info && out)
        usage_error("%s", "--info writes nothing but its figures (--stats-json FILE): drop -o");
    if (reuse_weights && (info || weights_only || !out || !(ends_with(out, ".o2d") || ends_with(out, ".c"))))
        usage_error("%s", "--reuse-weights FILE: with -o OUT.o2d or -o OUT.c (a build that reads FILE instead "
                    "of writing OUT.weights; not with --info or --weights-only)");
    if (weights_only && (info || stats_json || !out || !ends_with(out, ".weights")))
        usage_error("%s", "--weights-only writes one weights file: give -o OUT.weights (and no "
                    "--info or --stats-json)");
    if (name_map && !weights_from)
        usage_error("%s", "--name-map needs --weights-from CKPT.safetensors (the checkpoint whose "
                    "canonical keys it names)");
    if (name_map_out && !name_map_from)
        usage_error("%s", "--name-map-out goes with --name-map-from CKPT");
    if (component && !name_map_from && !name_map)
        usage_error("%s", "--component goes with --name-map-from CKPT or --weights-from CKPT "
                    "--name-map FILE");
    if ((ckpt_opt.variant || ckpt_opt.use_ema || ckpt_opt.nloras) && !name_map)
        usage_error("%s", "--variant, --ema and --lora go with --weights-from CKPT --name-map FILE "
                    "(the checkpoint store)");
    if (name_map_from && (weights_from || info || weights_only))
        usage_error("%s", "--name-map-from matches the model's own initializer values: give it "
                    "without --weights-from, --info or --weights-only");
    if (name_map_from && !name_map_out && !out)
        usage_error("%s", "--name-map-from needs --name-map-out FILE or -o OUT (written beside it "
                    "as OUT.namemap)");
    if (name_map_from && !component && !(component = component_of(name_map_from)))
        usage_error("--name-map-from %s: give --component NAME (unet, vae, text_encoder, ...): "
                    "the file's folder does not name one", name_map_from);
    if (!out && !info && name_map_from) {
        onnx_allow_placeholders(false);
        struct ir_graph *g = onnx_load(model);
        recover_name_map(g, name_map_from, component, name_map_out);
        ir_graph_free(g);
        return 0;
    }
    if (!out && !info) usage_error("%s", "no output given (-o OUT.c or -o OUT)");
    onnx_allow_placeholders(weights_from != NULL);
    if (out && !weights_only && ends_with(out, ".weights"))
        usage_error("-o %s names a weights file: add --weights-only to write only the weights, or "
                    "give -o OUT.c or -o OUT (an executable)", out);
    if (out && !with_main && !weights_only && !ends_with(out, ".c") && !ends_with(out, ".o2d"))
        usage_error("-o %s builds an executable, which needs main(): drop --no-main, or give "
                    "-o OUT.c", out);
    for (int i = 0; i < opt.nshapes; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(shapes[i].input, shapes[j].input) == 0)
                usage_error("--shape %s given twice", shapes[i].input);
    for (int i = 0; i < opt.nbinds; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(binds[i].input, binds[j].input) == 0) usage_error("--bind %s given twice", binds[i].input);
    if (weights_only) {
        check_one_output(model, out, "weights output", "-o", weights_from);
        struct ir_graph *g = onnx_load(model);
        {
            const char *o1[1] = {out}, *w1[1] = {"weights output"};
            check_not_inputs(o1, w1, 1, &opt);
        }
        apply_weights_from(g, model, weights_from, name_map, component, &ckpt_opt);
        const enum ir_dtype wd = weights_dtype(g, wdtype);
        passes_run(g, &opt);
        struct cg_options cgo = {.name = "weights", .command_line = "", .with_main = false,
                                 .weights_dtype = wd};
        struct cg_ctx *m = cg_build(g, &cgo);
        cg_write_weights(m, out);
        fprintf(stderr, "onnx2cl: wrote %s (%" PRIu64 " bytes of weights, weights layout %016"
                PRIx64 "): it loads into every build of the same structure and flags, whatever "
                "its --shape\n", out, cg_desc(m)->weights_file_bytes,
                o2r_desc_layout_hash(cg_desc(m)));
        cg_free(m);
        ir_graph_free(g);
        return 0;
    }
    if (info) {
        if (stats_json) check_one_output(model, stats_json, "--stats-json file", "--stats-json", weights_from);
        struct ir_graph *g = onnx_load(model);
        apply_weights_from(g, model, weights_from, name_map, component, &ckpt_opt);
        struct info_imported imp;
        info_count_imported(g, &imp);
        const enum ir_dtype wd = weights_dtype(g, wdtype);
        passes_run(g, &opt);
        uint64_t flops = info_flops(g);
        struct cg_options cgo = {.name = "info", .command_line = "", .with_main = false,
                                 .weights_dtype = wd};
        struct cg_ctx *m = cg_build(g, &cgo);
        if (stats_json) { /* the figures as JSON, nothing printed */
            write_stats_json(stats_json, g, m, 0.0);
            info_imported_free(&imp);
            cg_free(m);
            ir_graph_free(g);
            return 0;
        }
        info_print(stdout, g, &imp, flops, m);
        info_imported_free(&imp);
        cg_free(m);
        ir_graph_free(g);
        return stdout_ok() ? 0 : 1;
    }

    const bool o2d = ends_with(out, ".o2d"); /* a descriptor file instead of C (no .h) */
    bool exe = !o2d && !ends_with(out, ".c");
    size_t olen = strlen(out);
    char *c_path = malloc(olen + 3), *w_path = malloc(olen + 10), *h_path = malloc(olen + 3);
    if (exe) {
        snprintf(c_path, olen + 3, "%s.c", out);
        snprintf(w_path, olen + 10, "%s.weights", out);
        snprintf(h_path, olen + 3, "%s.h", out);
    } else {
        const int ext = o2d ? 4 : 2;
        snprintf(c_path, olen + 3, "%s", out);
        snprintf(w_path, olen + 10, "%.*s.weights", (int)(olen - ext), out);
        snprintf(h_path, olen + 3, "%.*s.h", (int)(olen - ext), out);
    }
    {
        const char *paths[6] = {model, c_path, w_path, h_path, exe ? out : c_path, stats_json ? stats_json : w_path};
        const char *what[6] = {"model", o2d ? "descriptor output" : "C output", "weights output",
                               "header output", "executable", "--stats-json file"};
        int np = 4 + (exe ? 1 : 0) - (o2d ? 1 : 0); /* o2d: no header */
        if (stats_json) {
            paths[np] = stats_json;
            what[np] = what[5];
            np++;
        }
        check_distinct(paths, what, np);
        if (weights_from) { /* an input: no output may overwrite it */
            const char *wp[2] = {weights_from, NULL};
            const char *ww[2] = {"--weights-from file", NULL};
            for (int i = 1; i < np; i++) {
                wp[1] = paths[i];
                ww[1] = what[i];
                check_distinct(wp, ww, 2);
            }
        }
        for (int i = 1; i < np; i++) {
            char err[1024];
            if (o2r_path_check_output(paths[i], err, sizeof err) != O2R_OK)
                ir_usage_die("%s: %s", what[i], err);
        }
    }
    install_signal_handlers();
    char *id = name ? strdup(name) : c_identifier(out);
    for (const char *p = id; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_') || isdigit((unsigned char)id[0]))
            usage_error("--name %s: not a C identifier", id);
    /* the generated symbols are <name>_...: "o2r" and "o2r_*" would collide with the runtime's */
    if (strcmp(id, "o2r") == 0 || strncmp(id, "o2r_", 4) == 0)
        ir_usage_die("model name '%s'%s: the prefix o2r is the runtime's (its functions are "
                     "o2r_*); choose another %s", id, name ? "" : " (from the -o file name)",
                     name ? "--name" : "-o name or give --name");

    /* Banner command line. */
    size_t cl = 1;
    for (int i = 0; i < argc; i++) cl += strlen(argv[i]) + 1;
    char *cmdline = malloc(cl);
    cmdline[0] = 0;
    for (int i = 0; i < argc; i++) {
        if (i) strcat(cmdline, " ");
        strcat(cmdline, i == 0 ? "onnx2cl" : argv[i]);
    }

    double t0 = now_s();
    struct ir_graph *g = onnx_load(model);
    ir_memtrace("onnx_load");
    {
        const char *outs[5] = {c_path, w_path, h_path}, *what[5] = {"C output", "weights output",
                                                                     "header output"};
        int no = o2d ? 2 : 3;
        if (exe) outs[no] = out, what[no++] = "executable";
        if (stats_json) outs[no] = stats_json, what[no++] = "--stats-json file";
        check_not_inputs(outs, what, no, &opt);
    }
    if (name_map_from) {
        char *nm_path = NULL;
        if (!name_map_out) { /* OUT.namemap beside the output */
            size_t n = strlen(c_path);
            nm_path = malloc(n + 16);
            snprintf(nm_path, n + 16, "%.*s.namemap", (int)(n - (o2d ? 4 : 2)), c_path);
        }
        recover_name_map(g, name_map_from, component, name_map_out ? name_map_out : nm_path);
        free(nm_path);
    }
    apply_weights_from(g, model, weights_from, name_map, component, &ckpt_opt);
    ir_memtrace("weights_from");
    const enum ir_dtype wd = weights_dtype(g, wdtype);
    double t1 = now_s();
    passes_run(g, &opt);
    double t2 = now_s();
    struct cg_options cgo = {.name = id, .command_line = cmdline, .with_main = with_main,
                             .weights_dtype = wd};
    struct cg_ctx *m = cg_build(g, &cgo);
    ir_memtrace("cg_build");
    double t3 = now_s();
    /* Until the whole job succeeds, every output written so far is removed on any error or
     * interrupt: a failed run leaves none of its outputs behind. The set is all-or-nothing: from
     * the first output replaced on, a previous build's executable goes too (it would outlive the
     * weights file it reads). */
    if (exe) ir_tmp_register(out);
    if (reuse_weights) {
        reuse_weights_file(m, reuse_weights);
    } else {
        cg_write_weights(m, w_path);
        ir_memtrace("write_weights");
        ir_tmp_register(w_path);
    }
    if (o2d) {
        cg_write_desc(m, c_path);
        ir_tmp_register(c_path);
    } else {
        cg_write_c(m, c_path, &cgo);
        ir_tmp_register(c_path);
        cg_write_h(m, h_path, &cgo);
        ir_tmp_register(h_path);
    }
    double t4 = now_s();
    if (opt.stats) {
        fuse_stats_print(stderr);
        cg_print_stats(m, stderr);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "time: load %.2f s, passes %.2f s, codegen %.2f s, write %.2f s; peak RSS %.1f MiB\n",
                t1 - t0, t2 - t1, t3 - t2, t4 - t3, ru.ru_maxrss / 1024.0);
    }
    if (stats_json) {
        write_stats_json(stats_json, g, m, t4 - t0);
        ir_tmp_register(stats_json);
    }
    if (exe) {
        if (!cc) cc = getenv("CC");
        if (!cc || !cc[strspn(cc, " \t")]) cc = ONNX2CL_C_COMPILER; /* unset, empty or blank */
        double t5 = now_s();
        compile_executable(cc, c_path, out);
        if (opt.stats) fprintf(stderr, "time: C compile %.2f s\n", now_s() - t5);
    }
    if (exe) ir_tmp_unregister(out);
    ir_tmp_unregister(w_path);
    ir_tmp_unregister(c_path);
    ir_tmp_unregister(h_path);
    if (stats_json) ir_tmp_unregister(stats_json);
    cg_free(m);
    ir_graph_free(g);
    free(c_path);
    free(w_path);
    free(h_path);
    free(id);
    free(cmdline);
    return 0;
}
