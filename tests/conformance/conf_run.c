/* conf_run.c — o2c_conf: ONNX backend conformance through the real path (onnx2cl -> cc -> run).
 *
 *   o2c_conf run ONNX2CL TEST_DIR WORK_DIR LISTS_DIR TEST_ID
 *       One backend test folder (model.onnx, test_data_set_N/{input,output}_K.pb): compiles the
 *       model with ONNX2CL into an executable in WORK_DIR, runs it on every data set (inputs given
 *       as the .pb files, by graph input name) and compares every output with output_K.pb:
 *       dtype, shape and values (tolerances below). Writes WORK_DIR/result.txt (one line, read
 *       by `report`) and prints the verdict. TEST_ID is "<source>/<kind>/<test>" (e.g.
 *       deb/node/test_add); LISTS_DIR holds exclusions.txt and known_failures.txt.
 *   o2c_conf report RESULTS_DIR LISTS_DIR OUT.md
 *       Reads every result.txt under RESULTS_DIR and writes the per-operator table (docs/
 *       operators.md): opsets covered, tests passed / failed / known failures / excluded with
 *       the reasons, and the totals. Prints the totals. Never hand-edit the generated file.
 *
 * Lists (one entry a line: a test name, then its reason; '#' starts a comment). A name matches a
 * test folder of that name in every source, or only one when written as TEST_ID:
 *   exclusions.txt      genuinely unsupported by design (string/sequence/optional types, training
 *                       mode, data-dependent output shapes, ops outside ir/ops.def, ...): the
 *                       test is not compiled; ctest reports it as skipped (exit 77).
 *   binds.txt           tests whose listed graph inputs decide a shape or control flow (e.g. TopK's
 *                       k): entry "NAME INPUT[,INPUT...] reason"; those inputs are fixed at compile
 *                       time with onnx2cl --bind from each data set's .pb (the model is recompiled
 *                       per data set) and are not fed to the executable.
 *   known_failures.txt  real bugs that are not fixed yet, each with an issue-style note: the test
 *                       runs; a failure exits 0 with "KNOWN FAILURE", a pass exits 1 ("now passes:
 *                       remove it from known_failures.txt") so the list cannot go stale.
 *
 * Verdicts: PASS; COMPILE_ERROR (onnx2cl exit status 1, its first message line is kept);
 * CRASH (onnx2cl, cc or the executable killed by a signal, or onnx2cl usage error 2);
 * RUN_ERROR (the executable exited non-zero); WRONG (dtype/shape/value mismatch); TIMEOUT.
 *
 * Tolerances (the one place they are stated): an element passes when
 *   |got - exp| <= ATOL + RTOL * |exp|, NaN only matches NaN, +-Inf only matches itself:
 *   float32  ATOL 1e-5  RTOL 1e-3     (the backend runner's rtol; 1e-5 abs for values near 0)
 *   float64  ATOL 1e-5  RTOL 1e-3
 *   float16  ATOL 1e-3  RTOL 4e-3     (half has 11 significant bits: 1 ulp is ~9.8e-4 relative)
 *   bfloat16 ATOL 1e-2  RTOL 1.6e-2   (8 significant bits: 1 ulp is ~7.8e-3 relative; 2 ulps)
 *   integers and bool: exact.
 * A test folder may hold `tolerance.txt` ("ATOL RTOL", e.g. "0 0" for bit-exact tests among
 * tests/conformance/extra) that overrides the float tolerances, or `expected_error.txt` (lines
 * of text): then onnx2cl must reject the model with exit status 1 and a message containing every
 * line (op, attribute, node name...), else the verdict is WRONG (accepted) or CRASH.
 *
 * Symbolic or missing input dims are bound with --shape from data set 0 (and the model is
 * recompiled for a data set whose input shapes differ). Each child runs under a time limit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx/onnx.pb-c.h"
#include "onnx2cl_rt.h"

#define MAX_IO 64
#define MAX_OPS 64
#define CHILD_TIMEOUT_S 300

/* ---------------------------------------------------------------------------------------- */
/* small helpers */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "o2c_conf: out of memory\n");
        exit(3);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0) {
        fclose(f);
        return NULL;
    }
    unsigned char *b = xmalloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return NULL;
    }
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* mkdir -p */
static void mkdir_p(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

/* Replaces tabs/newlines so a message fits one field of result.txt. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

/* ---------------------------------------------------------------------------------------- */
/* exclusion / known-failure lists */

/* One list entry. */
struct entry {
    char *name;   /* test name or TEST_ID */
    char *reason; /* the rest of the line */
};

/* A parsed list file. */
struct list {
    struct entry *e; /* entries */
    int n;           /* number of entries */
};

static void list_load(const char *path, struct list *l)
{
    l->e = NULL;
    l->n = 0;
    size_t len;
    char *buf = (char *)slurp(path, &len);
    if (!buf) {
        fprintf(stderr, "o2c_conf: cannot read %s\n", path);
        exit(3);
    }
    int cap = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        while (*line == ' ' || *line == '\t') line++;
        if (!*line || *line == '#') continue;
        char *sp = line + strcspn(line, " \t");
        char *reason = sp;
        if (*sp) {
            *sp = 0;
            reason = sp + 1;
            while (*reason == ' ' || *reason == '\t') reason++;
        }
        if (!*reason) {
            fprintf(stderr, "o2c_conf: %s: entry '%s' has no reason\n", path, line);
            exit(3);
        }
        if (l->n == cap) {
            cap = cap ? cap * 2 : 256;
            l->e = realloc(l->e, (size_t)cap * sizeof *l->e);
        }
        l->e[l->n].name = line;
        l->e[l->n].reason = reason;
        l->n++;
    }
}

/* Reason for TEST_ID ("src/kind/name") in the list, or NULL. */
static const char *list_find(const struct list *l, const char *test_id)
{
    const char *base = strrchr(test_id, '/');
    base = base ? base + 1 : test_id;
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->e[i].name, test_id) == 0 || strcmp(l->e[i].name, base) == 0) return l->e[i].reason;
    return NULL;
}

static void lists_load(const char *dir, struct list *excl, struct list *known)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/exclusions.txt", dir);
    list_load(p, excl);
    snprintf(p, sizeof p, "%s/known_failures.txt", dir);
    list_load(p, known);
}

/* Whether graph input `name` is in the comma-separated input list that starts binds.txt's
 * reason `entry` (NULL entry: no binds). */
static bool bound_input(const char *entry, const char *name)
{
    if (!entry) return false;
    size_t len = strcspn(entry, " \t"), n = strlen(name);
    for (const char *p = entry; p < entry + len;) {
        size_t w = strcspn(p, ", \t");
        if (w == n && strncmp(p, name, n) == 0) return true;
        p += w + 1;
    }
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* model inspection (protobuf-c bindings of onnx.proto; test-only) */

/* One graph input or output. */
struct io {
    char *name;                /* value name */
    int elem_type;             /* TensorProto.DataType, 0 for non-tensor types */
    bool symbolic;             /* some dim is a dim_param or absent (or no shape at all) */
};

/* What the runner needs to know about a model. */
struct model_info {
    struct io in[MAX_IO];      /* graph inputs that are not initializers */
    int n_in;                  /* their number */
    struct io out[MAX_IO];     /* graph outputs */
    int n_out;                 /* their number */
    char *ops[MAX_OPS];        /* distinct "Op" or "domain:Op" in node order (not Constant) */
    int n_ops;                 /* their number */
    int opset;                 /* default-domain opset */
    bool all_plain_types;      /* every io is a tensor of float32/16/64, int*, uint*, bool */
};

static void io_from(const Onnx__ValueInfoProto *vi, struct io *io)
{
    io->name = xstrdup(vi->name ? vi->name : "");
    io->elem_type = 0;
    io->symbolic = true;
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return;
    const Onnx__TypeProto__Tensor *t = vi->type->tensor_type;
    io->elem_type = t->has_elem_type ? t->elem_type : 0;
    if (!t->shape) return;
    io->symbolic = false;
    for (size_t k = 0; k < t->shape->n_dim; k++)
        if (t->shape->dim[k]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            io->symbolic = true;
}

static bool plain_type(int et)
{
    switch (et) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 10: case 11: case 12: case 13:
        return true;
    default:
        return false;
    }
}

static bool model_inspect(const char *path, struct model_info *mi, char *err, size_t errcap)
{
    memset(mi, 0, sizeof *mi);
    size_t len;
    unsigned char *buf = slurp(path, &len);
    if (!buf) {
        snprintf(err, errcap, "%s: cannot read", path);
        return false;
    }
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    if (!m || !m->graph) {
        snprintf(err, errcap, "%s: not a valid ONNX model", path);
        if (m) onnx__model_proto__free_unpacked(m, NULL);
        return false;
    }
    const Onnx__GraphProto *g = m->graph;
    mi->all_plain_types = true;
    for (size_t i = 0; i < g->n_input && mi->n_in < MAX_IO; i++) {
        bool init = false;
        for (size_t j = 0; j < g->n_initializer; j++)
            if (g->initializer[j]->name && strcmp(g->initializer[j]->name, g->input[i]->name) == 0) init = true;
        if (init) continue;
        io_from(g->input[i], &mi->in[mi->n_in]);
        if (!plain_type(mi->in[mi->n_in].elem_type)) mi->all_plain_types = false;
        mi->n_in++;
    }
    for (size_t i = 0; i < g->n_output && mi->n_out < MAX_IO; i++) {
        io_from(g->output[i], &mi->out[mi->n_out]);
        if (!plain_type(mi->out[mi->n_out].elem_type)) mi->all_plain_types = false;
        mi->n_out++;
    }
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        char op[256];
        if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx") != 0)
            snprintf(op, sizeof op, "%s:%s", nd->domain, nd->op_type);
        else
            snprintf(op, sizeof op, "%s", nd->op_type);
        if (strcmp(op, "Constant") == 0 && g->n_node > 1) continue;
        bool seen = false;
        for (int k = 0; k < mi->n_ops; k++)
            if (strcmp(mi->ops[k], op) == 0) seen = true;
        if (!seen && mi->n_ops < MAX_OPS) mi->ops[mi->n_ops++] = xstrdup(op);
    }
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *d = m->opset_import[i]->domain;
        if (!d || !*d || strcmp(d, "ai.onnx") == 0) mi->opset = (int)m->opset_import[i]->version;
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* children */

enum child_status { CHILD_OK, CHILD_EXIT, CHILD_SIGNAL, CHILD_TIMEOUT, CHILD_EXEC };

/* Runs argv with stdout+stderr appended to log; returns how it ended (*code: exit code/signal). */
static enum child_status run_child(char *const argv[], const char *log, int *code)
{
    pid_t pid = fork();
    if (pid < 0) {
        *code = errno;
        return CHILD_EXEC;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setpgid(0, 0);
        alarm(CHILD_TIMEOUT_S); /* the alarm survives exec: SIGALRM kills the child */
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            *code = errno;
            return CHILD_EXEC;
        }
    if (WIFSIGNALED(st)) {
        *code = WTERMSIG(st);
        return *code == SIGALRM ? CHILD_TIMEOUT : CHILD_SIGNAL;
    }
    *code = WEXITSTATUS(st);
    if (*code == 127) return CHILD_EXEC;
    return *code == 0 ? CHILD_OK : CHILD_EXIT;
}

/* First line of log that looks like an error message (else its first line), into out. */
static void log_message(const char *log, char *out, size_t cap)
{
    size_t len;
    char *b = (char *)slurp(log, &len);
    out[0] = 0;
    if (!b) return;
    char *pick = NULL;
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        if (!pick) pick = line;
        if (strstr(line, "error") || strstr(line, "unsupported") || strstr(line, "not supported") ||
            strstr(line, "Assertion") || strstr(line, "internal")) {
            pick = line;
            break;
        }
    }
    if (pick) snprintf(out, cap, "%s", pick);
    free(b);
    one_line(out);
}

/* ---------------------------------------------------------------------------------------- */
/* comparison */

static double f16_to_double(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0) v = ldexp(m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp(m + 1024, e - 25);
    return s ? -v : v;
}

static bool is_float(int dt) { return dt == O2R_F32 || dt == O2R_F64 || dt == O2R_F16 || dt == O2R_BF16; }

static double elem_f(const struct o2r_tensor *t, uint64_t i)
{
    switch (t->dtype) {
    case O2R_F32: return ((const float *)t->data)[i];
    case O2R_F64: return ((const double *)t->data)[i];
    case O2R_F16: return f16_to_double(((const uint16_t *)t->data)[i]);
    case O2R_BF16: { /* the high half of a float32 */
        uint32_t u = (uint32_t)((const uint16_t *)t->data)[i] << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    default: return NAN;
    }
}

/* Integer/bool element as a 64-bit pattern (u64 values above INT64_MAX compare bitwise). */
static int64_t elem_i(const struct o2r_tensor *t, uint64_t i)
{
    switch (t->dtype) {
    case O2R_U8: case O2R_BOOL: return ((const uint8_t *)t->data)[i];
    case O2R_I8: return ((const int8_t *)t->data)[i];
    case O2R_U16: return ((const uint16_t *)t->data)[i];
    case O2R_I16: return ((const int16_t *)t->data)[i];
    case O2R_I32: return ((const int32_t *)t->data)[i];
    case O2R_U32: return ((const uint32_t *)t->data)[i];
    case O2R_I64: case O2R_U64: return ((const int64_t *)t->data)[i];
    default: return 0;
    }
}

static void tolerance_for(int dt, double *atol, double *rtol)
{
    switch (dt) {
    case O2R_F32: *atol = 1e-5; *rtol = 1e-3; break;
    case O2R_F64: *atol = 1e-5; *rtol = 1e-3; break;
    case O2R_F16: *atol = 1e-3; *rtol = 4e-3; break;
    case O2R_BF16: *atol = 1e-2; *rtol = 1.6e-2; break; /* 8 significant bits: 1 ulp ~ 7.8e-3 relative */
    default: *atol = 0; *rtol = 0; break;
    }
}

static void shape_str(const struct o2r_tensor *t, char *s, size_t cap)
{
    size_t o = 0;
    o += (size_t)snprintf(s + o, cap - o, "[");
    for (int k = 0; k < t->rank && o < cap; k++)
        o += (size_t)snprintf(s + o, cap - o, "%s%lld", k ? "," : "", (long long)t->dims[k]);
    if (o < cap) snprintf(s + o, cap - o, "]");
}

/* Compares got with exp; on mismatch writes a one-line description into msg. */
static bool compare(const struct o2r_tensor *got, const struct o2r_tensor *exp, double atol_ovr,
                    double rtol_ovr, char *msg, size_t cap)
{
    char sg[128], se[128];
    shape_str(got, sg, sizeof sg);
    shape_str(exp, se, sizeof se);
    if (got->dtype != exp->dtype) {
        snprintf(msg, cap, "dtype %s %s, expected %s %s", o2r_dtype_name(got->dtype), sg,
                 o2r_dtype_name(exp->dtype), se);
        return false;
    }
    bool same = got->rank == exp->rank;
    for (int k = 0; same && k < got->rank; k++) same = got->dims[k] == exp->dims[k];
    if (!same) {
        snprintf(msg, cap, "shape %s, expected %s", sg, se);
        return false;
    }
    size_t es = o2r_dtype_size(got->dtype);
    uint64_t n = es ? exp->nbytes / es : 0, nbad = 0, first = 0;
    double atol, rtol, maxabs = 0;
    tolerance_for(got->dtype, &atol, &rtol);
    if (atol_ovr >= 0 && is_float(got->dtype)) {
        atol = atol_ovr;
        rtol = rtol_ovr;
    }
    for (uint64_t i = 0; i < n; i++) {
        bool ok;
        if (is_float(got->dtype)) {
            double x = elem_f(got, i), y = elem_f(exp, i);
            if (isnan(x) || isnan(y)) ok = isnan(x) && isnan(y);
            else if (isinf(x) || isinf(y)) ok = x == y;
            else {
                double d = fabs(x - y);
                ok = d <= atol + rtol * fabs(y);
                if (d > maxabs) maxabs = d;
            }
        } else {
            ok = elem_i(got, i) == elem_i(exp, i);
        }
        if (!ok && nbad++ == 0) first = i;
    }
    if (!nbad) return true;
    if (is_float(got->dtype))
        snprintf(msg, cap, "%s %s: %llu of %llu elements off (atol %g rtol %g), max abs err %.3g; first [%llu] got %.9g expected %.9g",
                 o2r_dtype_name(got->dtype), sg, (unsigned long long)nbad, (unsigned long long)n, atol, rtol,
                 maxabs, (unsigned long long)first, elem_f(got, first), elem_f(exp, first));
    else
        snprintf(msg, cap, "%s %s: %llu of %llu elements differ; first [%llu] got %lld expected %lld",
                 o2r_dtype_name(got->dtype), sg, (unsigned long long)nbad, (unsigned long long)n,
                 (unsigned long long)first, (long long)elem_i(got, first), (long long)elem_i(exp, first));
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* run mode */

/* The verdict of one test. */
struct verdict {
    const char *status;  /* PASS, COMPILE_ERROR, CRASH, RUN_ERROR, WRONG, TIMEOUT, EXCLUDED, ERROR */
    char msg[1024];      /* first error line / mismatch description */
};

static int count_sets(const char *test_dir)
{
    int n = 0;
    char p[4096];
    for (;;) {
        snprintf(p, sizeof p, "%s/test_data_set_%d", test_dir, n);
        if (!exists(p)) return n;
        n++;
    }
}

/* Shape flags for the symbolic inputs, from data set `ds`; returns false on unreadable input. */
static bool shape_flags(const char *test_dir, int ds, const struct model_info *mi, const char *binds,
                        char flags[][512], int *nflags, char *msg, size_t cap)
{
    *nflags = 0;
    for (int i = 0; i < mi->n_in; i++) {
        if (bound_input(binds, mi->in[i].name)) {
            snprintf(flags[(*nflags)++], 512, "\001%s=%s/test_data_set_%d/input_%d.pb", mi->in[i].name,
                     test_dir, ds, i); /* \001: a --bind flag */
            continue;
        }
        if (!mi->in[i].symbolic) continue;
        char p[4096], err[512];
        snprintf(p, sizeof p, "%s/test_data_set_%d/input_%d.pb", test_dir, ds, i);
        struct o2r_tensor t;
        if (o2r_tensor_read(p, &t, err, sizeof err) != O2R_OK) {
            snprintf(msg, cap, "cannot read input %s to bind its shape: %s", p, err);
            return false;
        }
        size_t o = (size_t)snprintf(flags[*nflags], 512, "%s=", mi->in[i].name);
        for (int k = 0; k < t.rank && o < 500; k++)
            o += (size_t)snprintf(flags[*nflags] + o, 512 - o, "%s%lld", k ? "," : "", (long long)t.dims[k]);
        o2r_tensor_free(&t);
        (*nflags)++;
    }
    return true;
}

static void compile_model(const char *onnx2cl, const char *test_dir, const char *work,
                          char flags[][512], int nflags, struct verdict *v)
{
    char model[4096], exe[4096], log[4096];
    snprintf(model, sizeof model, "%s/model.onnx", test_dir);
    snprintf(exe, sizeof exe, "%s/m", work);
    snprintf(log, sizeof log, "%s/compile.log", work);
    unlink(log);
    char *argv[8 + 2 * MAX_IO];
    int a = 0;
    argv[a++] = (char *)onnx2cl;
    argv[a++] = model;
    argv[a++] = "-o";
    argv[a++] = exe;
    for (int i = 0; i < nflags; i++) {
        argv[a++] = flags[i][0] == '\001' ? "--bind" : "--shape";
        argv[a++] = flags[i] + (flags[i][0] == '\001');
    }
    argv[a] = NULL;
    int code;
    enum child_status cs = run_child(argv, log, &code);
    char line[900];
    log_message(log, line, sizeof line);
    switch (cs) {
    case CHILD_OK: v->status = "PASS"; break;
    case CHILD_EXIT:
        v->status = code == 1 ? "COMPILE_ERROR" : "CRASH";
        snprintf(v->msg, sizeof v->msg, "%sonnx2cl: %s", code == 1 ? "" : "usage error from ", line);
        break;
    case CHILD_SIGNAL:
        v->status = "CRASH";
        snprintf(v->msg, sizeof v->msg, "onnx2cl killed by signal %d (%s): %s", code, strsignal(code), line);
        break;
    case CHILD_TIMEOUT:
        v->status = "TIMEOUT";
        snprintf(v->msg, sizeof v->msg, "onnx2cl ran over %d s", CHILD_TIMEOUT_S);
        break;
    case CHILD_EXEC:
        v->status = "ERROR";
        snprintf(v->msg, sizeof v->msg, "cannot run %s: %s", onnx2cl, line);
        break;
    }
}

/* Runs data set ds and compares its outputs. */
static void run_set(const char *test_dir, const char *work, int ds, const struct model_info *mi,
                    const char *binds, double atol_ovr, double rtol_ovr, struct verdict *v)
{
    char exe[4096], log[4096], outdir[4096];
    snprintf(exe, sizeof exe, "%s/m", work);
    snprintf(log, sizeof log, "%s/run_%d.log", work, ds);
    snprintf(outdir, sizeof outdir, "%s/out_%d", work, ds);
    mkdir(outdir, 0755);
    unlink(log);
    static char inargs[MAX_IO][4600];
    char *argv[8 + 2 * MAX_IO];
    int a = 0;
    argv[a++] = exe;
    for (int i = 0; i < mi->n_in; i++) {
        if (bound_input(binds, mi->in[i].name)) continue; /* compiled in by --bind */
        snprintf(inargs[i], sizeof inargs[i], "%s=%s/test_data_set_%d/input_%d.pb", mi->in[i].name, test_dir, ds, i);
        argv[a++] = "--input";
        argv[a++] = inargs[i];
    }
    argv[a++] = "--output-dir";
    argv[a++] = outdir;
    argv[a] = NULL;
    int code;
    enum child_status cs = run_child(argv, log, &code);
    char line[900];
    log_message(log, line, sizeof line);
    if (cs == CHILD_SIGNAL) {
        v->status = "CRASH";
        snprintf(v->msg, sizeof v->msg, "data set %d: executable killed by signal %d (%s): %s", ds, code,
                 strsignal(code), line);
        return;
    }
    if (cs == CHILD_TIMEOUT) {
        v->status = "TIMEOUT";
        snprintf(v->msg, sizeof v->msg, "data set %d: executable ran over %d s", ds, CHILD_TIMEOUT_S);
        return;
    }
    if (cs != CHILD_OK) {
        v->status = "RUN_ERROR";
        snprintf(v->msg, sizeof v->msg, "data set %d: exit %d: %s", ds, code, line);
        return;
    }
    for (int k = 0; k < mi->n_out; k++) {
        char got_p[4600], exp_p[4600], err[512], name[1024], why[900];
        snprintf(name, sizeof name, "%s", mi->out[k].name);
        for (char *c = name; *c; c++)
            if (*c == '/') *c = '_';
        snprintf(got_p, sizeof got_p, "%s/%s.npy", outdir, name);
        snprintf(exp_p, sizeof exp_p, "%s/test_data_set_%d/output_%d.pb", test_dir, ds, k);
        struct o2r_tensor got, exp;
        if (o2r_tensor_read(exp_p, &exp, err, sizeof err) != O2R_OK) {
            v->status = "ERROR";
            snprintf(v->msg, sizeof v->msg, "expected output unreadable: %s", err);
            return;
        }
        if (o2r_tensor_read(got_p, &got, err, sizeof err) != O2R_OK) {
            o2r_tensor_free(&exp);
            v->status = "RUN_ERROR";
            snprintf(v->msg, sizeof v->msg, "data set %d: output '%s' not written: %s", ds, mi->out[k].name, err);
            return;
        }
        bool ok = compare(&got, &exp, atol_ovr, rtol_ovr, why, sizeof why);
        o2r_tensor_free(&got);
        o2r_tensor_free(&exp);
        if (!ok) {
            v->status = "WRONG";
            snprintf(v->msg, sizeof v->msg, "data set %d output '%s': %s", ds, mi->out[k].name, why);
            return;
        }
    }
    v->status = "PASS";
}

static int cmd_run(const char *onnx2cl, const char *test_dir, const char *work, const char *lists,
                   const char *test_id)
{
    struct list excl, known, bindl;
    lists_load(lists, &excl, &known);
    char bp[4096];
    snprintf(bp, sizeof bp, "%s/binds.txt", lists);
    list_load(bp, &bindl);
    const char *binds = list_find(&bindl, test_id);
    struct model_info mi;
    struct verdict v = {.status = "PASS", .msg = ""};
    char model[4096], err[512];
    snprintf(model, sizeof model, "%s/model.onnx", test_dir);
    mkdir_p(work);
    const char *ex = list_find(&excl, test_id);
    const char *kf = list_find(&known, test_id);
    bool inspected = model_inspect(model, &mi, err, sizeof err);
    if (!inspected) {
        v.status = "ERROR";
        snprintf(v.msg, sizeof v.msg, "%s", err);
    } else if (ex) {
        v.status = "EXCLUDED";
        snprintf(v.msg, sizeof v.msg, "%s", ex);
    } else {
        char ep[4096];
        snprintf(ep, sizeof ep, "%s/expected_error.txt", test_dir);
        size_t elen;
        char *expect = (char *)slurp(ep, &elen);
        int nsets = expect ? 0 : count_sets(test_dir);
        double atol_ovr = -1, rtol_ovr = -1;
        char tp[4096];
        snprintf(tp, sizeof tp, "%s/tolerance.txt", test_dir);
        FILE *tf = fopen(tp, "r");
        if (tf) {
            if (fscanf(tf, "%lf %lf", &atol_ovr, &rtol_ovr) != 2) atol_ovr = rtol_ovr = -1;
            fclose(tf);
        }
        static char flags[MAX_IO][512], prev[MAX_IO][512];
        int nflags = 0, nprev = -1;
        if (expect) {
            static char none[1][512];
            compile_model(onnx2cl, test_dir, work, none, 0, &v);
            if (strcmp(v.status, "COMPILE_ERROR") == 0) {
                char lp[4096], *log;
                size_t llen;
                snprintf(lp, sizeof lp, "%s/compile.log", work);
                log = (char *)slurp(lp, &llen);
                v.status = "PASS";
                for (char *line = strtok(expect, "\n"); line; line = strtok(NULL, "\n"))
                    if (*line && (!log || !strstr(log, line))) {
                        v.status = "WRONG";
                        snprintf(v.msg, sizeof v.msg, "compile error lacks '%s': %s", line, log ? log : "");
                        break;
                    }
                if (strcmp(v.status, "PASS") == 0) snprintf(v.msg, sizeof v.msg, "rejected as expected");
                free(log);
            } else if (strcmp(v.status, "PASS") == 0) {
                v.status = "WRONG";
                snprintf(v.msg, sizeof v.msg, "onnx2cl accepted a model it must reject");
            }
            free(expect);
        } else if (nsets == 0) {
            v.status = "ERROR";
            snprintf(v.msg, sizeof v.msg, "no test_data_set_0 in %s", test_dir);
        }
        for (int ds = 0; ds < nsets && strcmp(v.status, "PASS") == 0; ds++) {
            if (!shape_flags(test_dir, ds, &mi, binds, flags, &nflags, v.msg, sizeof v.msg)) {
                v.status = "ERROR";
                break;
            }
            bool same = nflags == nprev;
            for (int i = 0; same && i < nflags; i++) same = strcmp(flags[i], prev[i]) == 0;
            if (!same) {
                compile_model(onnx2cl, test_dir, work, flags, nflags, &v);
                if (strcmp(v.status, "PASS") != 0) break;
                memcpy(prev, flags, sizeof flags);
                nprev = nflags;
            }
            run_set(test_dir, work, ds, &mi, binds, atol_ovr, rtol_ovr, &v);
        }
    }
    one_line(v.msg);
    /* result.txt: id, status, opset, plain-types flag, ops, message, known-failure note */
    char rp[4096];
    snprintf(rp, sizeof rp, "%s/result.txt", work);
    FILE *rf = fopen(rp, "w");
    if (rf) {
        fprintf(rf, "%s\t%s\t%d\t%d\t", test_id, v.status, inspected ? mi.opset : 0,
                inspected ? (int)mi.all_plain_types : 0);
        for (int k = 0; inspected && k < mi.n_ops; k++) fprintf(rf, "%s%s", k ? "," : "", mi.ops[k]);
        fprintf(rf, "\t%s\t%s\n", v.msg, kf ? kf : "");
        fclose(rf);
    }
    bool pass = strcmp(v.status, "PASS") == 0;
    if (strcmp(v.status, "EXCLUDED") == 0) {
        printf("%s: EXCLUDED (%s)\n", test_id, v.msg);
        return 77;
    }
    if (kf) {
        if (pass) {
            printf("%s: PASS, but it is listed in known_failures.txt (%s): remove it from the list\n", test_id, kf);
            return 1;
        }
        printf("%s: KNOWN FAILURE %s: %s\n  note: %s\n", test_id, v.status, v.msg, kf);
        return 0;
    }
    printf("%s: %s%s%s\n", test_id, v.status, !pass && v.msg[0] ? ": " : "", pass ? "" : v.msg);
    if (!pass) printf("  (logs in %s)\n", work);
    else if (v.msg[0]) printf("  %s\n", v.msg);
    return pass ? 0 : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* report mode */

/* One parsed result.txt. */
struct result {
    char *id;      /* TEST_ID */
    char *status;  /* verdict */
    int opset;     /* default-domain opset of the model */
    int plain;     /* all io tensors of plain dtypes */
    char *ops;     /* comma-separated op list */
    char *msg;     /* message */
    char *known;   /* known-failure note, "" if none */
};

static struct result *results;
static int n_results, cap_results;

static void collect(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (strncmp(e->d_name, "out_", 4) != 0) collect(p);
            continue;
        }
        if (strcmp(e->d_name, "result.txt") != 0) continue;
        size_t len;
        char *b = (char *)slurp(p, &len);
        if (!b) continue;
        char *f[7] = {0};
        int nf = 0;
        char *s = b;
        b[strcspn(b, "\n")] = 0;
        while (nf < 7) {
            f[nf++] = s;
            char *t = strchr(s, '\t');
            if (!t) break;
            *t = 0;
            s = t + 1;
        }
        if (nf < 6) continue;
        if (n_results == cap_results) {
            cap_results = cap_results ? cap_results * 2 : 1024;
            results = realloc(results, (size_t)cap_results * sizeof *results);
        }
        struct result *r = &results[n_results++];
        r->id = f[0];
        r->status = f[1];
        r->opset = atoi(f[2]);
        r->plain = atoi(f[3]);
        r->ops = f[4];
        r->msg = f[5];
        r->known = nf > 6 ? f[6] : "";
    }
    closedir(d);
}

static int cmp_result(const void *a, const void *b)
{
    return strcmp(((const struct result *)a)->id, ((const struct result *)b)->id);
}

/* Per-operator aggregate. */
struct opstat {
    char name[128];     /* op type ("domain:Op" outside the default domain) */
    int pass;           /* tests using it that passed */
    int fail;           /* failed (not in known_failures.txt) */
    int known;          /* failed, listed in known_failures.txt */
    int excl;           /* excluded */
    uint64_t opsets_ok; /* bit v: a passing test with model opset v */
    uint64_t opsets_all;/* bit v: any test with model opset v */
};

static struct opstat ops[512];
static int n_opstats;

static struct opstat *opstat_get(const char *name)
{
    for (int i = 0; i < n_opstats; i++)
        if (strcmp(ops[i].name, name) == 0) return &ops[i];
    if (n_opstats == 512) return NULL;
    struct opstat *o = &ops[n_opstats++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    return o;
}

static int cmp_opstat(const void *a, const void *b)
{
    return strcmp(((const struct opstat *)a)->name, ((const struct opstat *)b)->name);
}

static void print_opsets(FILE *f, uint64_t bits)
{
    bool first = true;
    for (int v = 1; v < 64; v++)
        if (bits >> v & 1) {
            fprintf(f, "%s%d", first ? "" : ", ", v);
            first = false;
        }
    if (first) fprintf(f, "-");
}

/* Markdown-safe copy (| and ` escaped), truncated. */
static void md(FILE *f, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '`') fputc('\'', f);
        else fputc(*s, f);
    }
    if (*s) fputs("...", f);
}

static int cmd_report(const char *root, const char *lists, const char *out)
{
    struct list excl, known;
    lists_load(lists, &excl, &known);
    collect(root);
    if (n_results == 0) {
        fprintf(stderr, "o2c_conf report: no result.txt under %s (run `ctest -L conformance` first)\n", root);
        return 1;
    }
    qsort(results, (size_t)n_results, sizeof *results, cmp_result);
    /* The lists as they are now decide (a result may predate a list edit). */
    for (int i = 0; i < n_results; i++) {
        struct result *r = &results[i];
        const char *e = list_find(&excl, r->id), *k = list_find(&known, r->id);
        if (e && strcmp(r->status, "PASS") != 0) {
            r->status = "EXCLUDED";
            r->msg = (char *)e;
        } else if (!e && strcmp(r->status, "EXCLUDED") == 0) {
            r->status = "NOT_RUN";
            r->msg = "excluded when it ran, no longer listed: run it again";
        }
        r->known = k ? (char *)k : "";
    }
    /* Exclusion reasons of plain-dtype tests, by category (first match of the reason text). The
     * last category is the only one that is not out of scope by design: an op not implemented. */
    static const struct {
        const char *label;  /* row label */
        const char *keys[4]; /* substrings of the reason */
    } cats[] = {
        {"an input given at run time decides a shape, axis or trip count", {"shape-deciding", "given at run time", "trip count"}},
        {"data-dependent output shape (NonZero, Unique, NonMaxSuppression, ...)", {"data-dependent"}},
        {"random ops (no fixed expected value)", {"random op"}},
        {"training mode / training, preview and ml domains", {"training", "domain"}},
        {"sequence / optional / map / string / bfloat16 / float8 values inside the graph",
         {"sequence", "string", "bfloat16", "float8"}},
        {"op not implemented (not in ir/ops.def)", {"not in ir/ops.def"}},
    };
    enum { NCAT = sizeof cats / sizeof cats[0] };
    int cat_count[NCAT + 1] = {0};
    int tot = 0, pass = 0, fail = 0, kn = 0, ex = 0, plain_tot = 0, plain_pass = 0, plain_ex = 0;
    for (int i = 0; i < n_results; i++) {
        struct result *r = &results[i];
        bool is_pass = strcmp(r->status, "PASS") == 0, is_ex = strcmp(r->status, "EXCLUDED") == 0;
        bool is_known = !is_pass && !is_ex && r->known[0];
        tot++;
        pass += is_pass;
        ex += is_ex;
        kn += is_known;
        fail += !is_pass && !is_ex && !is_known;
        if (r->plain) {
            plain_tot++;
            plain_pass += is_pass;
            plain_ex += is_ex;
            if (is_ex) {
                int c = NCAT;
                for (int j = 0; j < NCAT && c == NCAT; j++)
                    for (int q = 0; q < 4 && cats[j].keys[q]; q++)
                        if (r->msg && strstr(r->msg, cats[j].keys[q])) {
                            c = j;
                            break;
                        }
                cat_count[c]++;
            }
        }
        char ops_copy[4096];
        snprintf(ops_copy, sizeof ops_copy, "%s", r->ops);
        for (char *op = strtok(ops_copy, ","); op; op = strtok(NULL, ",")) {
            struct opstat *o = opstat_get(op);
            if (!o) continue;
            o->pass += is_pass;
            o->excl += is_ex;
            o->known += is_known;
            o->fail += !is_pass && !is_ex && !is_known;
            if (r->opset > 0 && r->opset < 64) {
                o->opsets_all |= 1ull << r->opset;
                if (is_pass) o->opsets_ok |= 1ull << r->opset;
            }
        }
    }
    qsort(ops, (size_t)n_opstats, sizeof *ops, cmp_opstat);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "o2c_conf report: cannot write %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    fprintf(f, "<!-- Generated by `o2c_conf report` (tests/conformance/conf_run.c) from a run of\n"
               "     `ctest -L conformance`; see tests/conformance/README.md. Do not edit by hand. -->\n"
               "# ONNX operator coverage\n\n"
               "Every ONNX backend test folder (Debian libonnx-testdata = `deb/`, the newest `onnx` wheel's\n"
               "generated data = `whl/`, and `extra/` = tests/conformance/extra) is compiled with onnx2cl,\n"
               "built, run on the OpenCL device and compared with its expected outputs (dtype, shape,\n"
               "values; tolerances in tests/conformance/conf_run.c).\n\n");
    fprintf(f, "## Totals\n\n");
    fprintf(f, "| | tests |\n|---|---:|\n| total | %d |\n| passed | %d |\n| failed | %d |\n"
               "| known failures (tests/conformance/known_failures.txt) | %d |\n"
               "| excluded (tests/conformance/exclusions.txt) | %d |\n\n",
            tot, pass, fail, kn, ex);
    int run_plain = plain_tot - plain_ex;
    fprintf(f, "Tests whose inputs and outputs are all float32/float16/float64/integer/bool tensors: %d;\n"
               "%d excluded; %d passed = %.1f%% of those run, %.1f%% of all of them.\n\n",
            plain_tot, plain_ex, plain_pass, run_plain ? 100.0 * plain_pass / run_plain : 0.0,
            plain_tot ? 100.0 * plain_pass / plain_tot : 0.0);
    fprintf(f, "Why those %d were excluded:\n\n| reason | tests |\n|---|---:|\n", plain_ex);
    int by_design = 0;
    for (int j = 0; j < NCAT; j++) {
        fprintf(f, "| %s | %d |\n", cats[j].label, cat_count[j]);
        if (j < NCAT - 1) by_design += cat_count[j];
    }
    if (cat_count[NCAT]) fprintf(f, "| other | %d |\n", cat_count[NCAT]);
    int in_scope = plain_tot - by_design;
    fprintf(f, "\nLeaving out the categories a static compiler cannot or should not run (all rows but \"op not\n"
               "implemented\"), %d plain-dtype tests are in scope: %d passed = **%.1f%%**.\n\n",
            in_scope, plain_pass, in_scope ? 100.0 * plain_pass / in_scope : 0.0);
    fprintf(f, "## Per operator\n\n"
               "A test counts for every operator its model uses (expanded function tests count for the ops\n"
               "they expand into). Opsets: the models' default-domain opset imports (passing tests; in\n"
               "parentheses, those of tests that did not pass).\n\n"
               "| op | opsets passing | passed | failed | known failures | excluded |\n|---|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < n_opstats; i++) {
        struct opstat *o = &ops[i];
        fprintf(f, "| %s | ", o->name);
        print_opsets(f, o->opsets_ok);
        uint64_t rest = o->opsets_all & ~o->opsets_ok;
        if (rest) {
            fprintf(f, " (");
            print_opsets(f, rest);
            fprintf(f, ")");
        }
        fprintf(f, " | %d | %d | %d | %d |\n", o->pass, o->fail, o->known, o->excl);
    }
    fprintf(f, "\n## Tests that did not pass\n\n| test | ops | verdict | message |\n|---|---|---|---|\n");
    for (int i = 0; i < n_results; i++) {
        struct result *r = &results[i];
        if (strcmp(r->status, "PASS") == 0 || strcmp(r->status, "EXCLUDED") == 0) continue;
        fprintf(f, "| %s | %s | %s%s | ", r->id, r->ops, r->status, r->known[0] ? " (known)" : "");
        md(f, r->msg, 300);
        if (r->known[0]) {
            fprintf(f, " — note: ");
            md(f, r->known, 300);
        }
        fprintf(f, " |\n");
    }
    fprintf(f, "\n## Excluded tests\n\n| test | ops | reason |\n|---|---|---|\n");
    for (int i = 0; i < n_results; i++) {
        struct result *r = &results[i];
        if (strcmp(r->status, "EXCLUDED") != 0) continue;
        fprintf(f, "| %s | %s | ", r->id, r->ops);
        md(f, r->msg, 300);
        fprintf(f, " |\n");
    }
    fclose(f);
    if (rename(tmp, out) != 0) {
        fprintf(stderr, "o2c_conf report: cannot rename %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    printf("conformance: %d tests: %d passed, %d failed, %d known failures, %d excluded; "
           "plain-dtype tests: %d/%d passed (%.1f%% of those run, %d excluded)\n",
           tot, pass, fail, kn, ex, plain_pass, plain_tot, run_plain ? 100.0 * plain_pass / run_plain : 0.0,
           plain_ex);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "run") == 0) return cmd_run(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (argc == 5 && strcmp(argv[1], "report") == 0) return cmd_report(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: o2c_conf run ONNX2CL TEST_DIR WORK_DIR LISTS_DIR TEST_ID\n"
                    "       o2c_conf report RESULTS_DIR LISTS_DIR OUT.md\n");
    return 2;
}
