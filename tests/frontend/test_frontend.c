/* test_frontend.c — unit tests of frontend/ (ONNX loading into the IR).
 *
 * Usage: test_frontend GROUP MODELS_DIR WORK_DIR ONNX_TESTDATA_DIR
 *        test_frontend dump FILE            (prints the imported IR; for debugging)
 * Groups:
 *   sha256     FIPS 180-4 test vectors.
 *   forms      every TensorProto data form -> exact bytes in the IR; Constant value_* forms;
 *              TENSOR attributes; shadowed inputs; symbolic / missing dims; provenance.
 *   normalize  attribute forms of older opsets -> the IR form (committed models + ONNX backend
 *              test models of opsets 6..13), asserting inputs, constant values and attributes.
 *   external   external data: good cases (values, offsets, length-less, a 5 GiB sparse file
 *              with the tensor past 4 GiB) and refused ones (.., absolute, symlink out, past the
 *              end, overrun, length mismatch, missing file).
 *   bad        malformed / unsupported models: each must exit with status 1 (never a signal)
 *              and print the expected message. Zero-length, truncated and garbage files are
 *              made here in WORK_DIR from a real model.
 *   backend    loads every model of the ONNX backend test data in a child process: each must
 *              load and pass ir_verify, or fail with a located message and exit status 1 —
 *              never crash.
 * Bad cases run onnx_load() in a forked child whose stderr is captured.
 */
#include "frontend/onnx_load.h"
#include "runtime/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
static const char *models_dir, *work_dir, *testdata_dir;

#define CHECK(c)                                                                           \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);          \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* "dir/name" in one of 8 rotating static buffers; a path that does not fit ends the test
 * (a truncated path would test another file). */
static char *path_in(const char *dir, const char *name)
{
    static char buf[8][4096];
    static int k;
    char *p = buf[k++ & 7];
    int n = snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof buf[0]) {
        fprintf(stderr, "test_frontend: path %s/%s is longer than %zu bytes\n", dir, name,
                sizeof buf[0] - 1);
        exit(1);
    }
    return p;
}

/* ---- helpers over the IR ------------------------------------------------------------------------ */

static const struct ir_node *node_named(const struct ir_graph *g, const char *name)
{
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (!g->nodes[i].dead && strcmp(g->nodes[i].name, name) == 0) return &g->nodes[i];
    fprintf(stderr, "no node named '%s'\n", name);
    failures++;
    return NULL;
}

static const struct ir_node *node_op(const struct ir_graph *g, enum ir_op op)
{
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (!g->nodes[i].dead && g->nodes[i].op == op) return &g->nodes[i];
    fprintf(stderr, "no node with op %s\n", ir_op_name(op));
    failures++;
    return NULL;
}

static const struct ir_value *val(const struct ir_graph *g, const char *name)
{
    uint32_t v = ir_value_find(g, name);
    if (v == IR_NONE) {
        fprintf(stderr, "no value named '%s'\n", name);
        failures++;
        static struct ir_value dummy;
        return &dummy;
    }
    return &g->values[v];
}

/* Constant int64 vector equality. */
static bool const_i64_is(const struct ir_graph *g, uint32_t v, const int64_t *want, int n)
{
    if (v == IR_NONE || !ir_is_const(g, v)) return false;
    const struct ir_value *x = &g->values[v];
    if (x->dtype != IR_I64 || x->rank != 1 || x->dims[0] != n || x->nbytes != (size_t)n * 8)
        return false;
    return n == 0 || memcmp(x->data, want, (size_t)n * 8) == 0;
}

static bool const_f32_scalar_is(const struct ir_graph *g, uint32_t v, float want)
{
    if (v == IR_NONE || !ir_is_const(g, v)) return false;
    const struct ir_value *x = &g->values[v];
    float f;
    if (x->dtype != IR_F32 || x->rank != 0 || x->nbytes != 4) return false;
    memcpy(&f, x->data, 4);
    return f == want;
}

static bool attr_str_is(const struct ir_node *n, const char *name, const char *want)
{
    const char *s = ir_attr_string(n, name, NULL);
    return s && strcmp(s, want) == 0;
}

/* Recomputes use counts from scratch and compares with the loader's. */
static void check_uses(const struct ir_graph *g)
{
    for (uint32_t v = 0; v < g->nvalues; v++) {
        uint32_t uses = 0;
        for (uint32_t i = 0; i < g->nnodes; i++)
            for (uint32_t k = 0; k < g->nodes[i].ninputs; k++) uses += g->nodes[i].inputs[k] == v;
        for (uint32_t k = 0; k < g->noutputs; k++) uses += g->outputs[k] == v;
        if (uses != g->values[v].nuses) {
            fprintf(stderr, "value '%s': nuses %u, counted %u\n", g->values[v].name,
                    g->values[v].nuses, uses);
            failures++;
        }
    }
    CHECK(ir_verify(g, "onnx_load"));
}

/* ---- child-process runs --------------------------------------------------------------------------- */

/* Runs onnx_load(path) in a child. Returns its exit status (or 1000 + signal), stderr in msg. */
static int run_child(const char *path, char *msg, size_t cap)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        struct ir_graph *g = onnx_load(path);
        bool ok = ir_verify(g, "onnx_load");
        ir_graph_free(g);
        _exit(ok ? 0 : 3);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t r;
    char sink[4096];
    while ((r = read(fds[0], len + 1 < cap ? msg + len : sink,
                     len + 1 < cap ? cap - 1 - len : sizeof sink)) > 0)
        if (len + 1 < cap) len += (size_t)r;
    msg[len] = 0;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) return 1000 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

/* The load must fail with exit status 1 and a message containing `want` (and the path). */
static void expect_fail(const char *path, const char *want)
{
    char msg[8192];
    int rc = run_child(path, msg, sizeof msg);
    if (rc != 1 || !strstr(msg, want) || !strstr(msg, path)) {
        fprintf(stderr, "FAIL %s: exit %d (want 1), message:\n  %s  (want '%s')\n", path, rc, msg,
                want);
        failures++;
    } else {
        printf("ok   %s -> %s", path, msg);
    }
}

/* ---- groups ----------------------------------------------------------------------------------------- */

static void test_sha256(void)
{
    static const struct { const char *in; const char *hex; } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        /* 55..120 bytes: every padding path (one or two tail blocks); digests from hashlib */
        {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabc",
         "595615dbe4f0f407ae397d08b4c2cb870cb9b0e11937416f950c5160acf9c005"},
        {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcd",
         "784f623b787495078e93ff28a25b581df0584055a7e71d8cd90c454716b92f51"},
        {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk",
         "5ca3e1ef5207490eac01a795e5cc94d59582a5118bf9534665c8668d87aa647c"},
        {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl",
         "2fcd5a0d60e4c941381fcc4e00a4bf8be422c3ddfafb93c809e8d1e2bfffae8e"},
        {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm",
         "1b3cd1877ab2f2f19f7be001722554f336cb799df0329de0bb4c118dc6abc06d"},
        {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmno",
         "faef67da856d6fd9c8d12f9ed0a4fefd3cf0ce085ab43e2907418d457e3c354b"},
        {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnop",
         "c9512b08619c19fbb503c7da6b46ef20301e5f7a7a5f43989182398536f5c5c8"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        uint8_t d[32];
        char hex[65];
        o2r_sha256(v[i].in, strlen(v[i].in), d);
        for (int k = 0; k < 32; k++) sprintf(hex + 2 * k, "%02x", d[k]);
        if (strcmp(hex, v[i].hex) != 0) {
            fprintf(stderr, "sha256('%s') = %s, want %s\n", v[i].in, hex, v[i].hex);
            failures++;
        }
    }
    /* one million 'a' (FIPS 180-2 appendix B.3) */
    size_t n = 1000000;
    char *a = malloc(n);
    memset(a, 'a', n);
    uint8_t d[32];
    char hex[65];
    o2r_sha256(a, n, d);
    for (int k = 0; k < 32; k++) sprintf(hex + 2 * k, "%02x", d[k]);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
    /* the same streamed in pieces of 0..130 bytes (partial blocks, block-sized and longer) */
    struct o2r_sha256 s;
    uint8_t d2[32];
    o2r_sha256_init(&s);
    for (size_t i = 0, k = 0; i < n; i += k) {
        k = (i * 7 + 3) % 131 < n - i ? (i * 7 + 3) % 131 : n - i;
        o2r_sha256_update(&s, a + i, k);
    }
    o2r_sha256_final(&s, d2);
    free(a);
    CHECK(memcmp(d, d2, 32) == 0);
}

static void test_forms(void)
{
    const char *p = path_in(models_dir, "forms.onnx");
    struct ir_graph *g = onnx_load(p);
    CHECK(g->opset == 17);
    CHECK(strcmp(g->producer, "make_models.py") == 0);
    CHECK(g->ninputs == 1); /* "shadow" is an initializer: a constant, not an input */
    const struct ir_value *x = &g->values[g->inputs[0]];
    CHECK(strcmp(x->name, "x") == 0 && x->is_input && x->dtype == IR_F32 && x->rank == 3);
    CHECK(x->dim_param[0] && strcmp(x->dim_param[0], "batch") == 0);
    CHECK(x->dim_param[1] && strcmp(x->dim_param[1], "?x[1]") == 0);
    CHECK(!x->dim_param[2] && x->dims[2] == 4 && !x->dims_known);
    CHECK(ir_is_const(g, ir_value_find(g, "shadow")) && !val(g, "shadow")->is_input);

    struct { const char *name; enum ir_dtype dt; int n; const char *bytes; size_t nb; } want[] = {
        {"i8", IR_I8, 3, "\x80\x00\x7f", 3},
        {"u8", IR_U8, 2, "\x00\xff", 2},
        {"i16", IR_I16, 2, "\x00\x80\xff\x7f", 4},
        {"u16", IR_U16, 2, "\x00\x00\xff\xff", 4},
        {"b", IR_BOOL, 3, "\x01\x00\x01", 3},
        {"f16", IR_F16, 2, "\x00\x3c\x00\xc0", 4},
        {"i32", IR_I32, 2, "\xfb\xff\xff\xff\x07\x00\x00\x00", 8},
        {"u32", IR_U32, 1, "\x00\x28\x6b\xee", 4},
        {"u64", IR_U64, 1, "\x05\x00\x00\x00\x00\x00\x00\x80", 8},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const struct ir_value *v = val(g, want[i].name);
        if (v->dtype != want[i].dt || v->nbytes != want[i].nb || !v->data ||
            memcmp(v->data, want[i].bytes, want[i].nb) != 0 || v->rank != 1 ||
            v->dims[0] != want[i].n || !v->is_initializer) {
            fprintf(stderr, "initializer '%s' wrong\n", want[i].name);
            failures++;
        }
    }
    const struct ir_value *f32 = val(g, "f32");
    CHECK(f32->dtype == IR_F32 && f32->rank == 2 && f32->nbytes == 16);
    CHECK(ir_const_f64(g, ir_value_find(g, "f32"), 2) == 3.25);
    CHECK(ir_const_i64(g, ir_value_find(g, "i64"), 0) == -(1LL << 40));
    CHECK(ir_const_f64(g, ir_value_find(g, "f64"), 0) == 0.1);
    CHECK(ir_const_f64(g, ir_value_find(g, "raw"), 1) == 8.0);
    const struct ir_value *e = val(g, "empty");
    CHECK(e->data && e->nbytes == 0 && e->rank == 2 && e->dims[0] == 0 && e->dims[1] == 3);

    /* Constant nodes are gone; their outputs are constants under the same names. */
    for (uint32_t i = 0; i < g->nnodes; i++) CHECK(strcmp(g->nodes[i].op_type, "Constant") != 0);
    CHECK(g->nnodes == 2);
    const struct ir_value *cf = val(g, "c_float");
    CHECK(cf->dtype == IR_F32 && cf->rank == 0 && ir_const_f64(g, ir_value_find(g, "c_float"), 0) == 2.5);
    CHECK(cf->is_output);
    int64_t w[3] = {4, 5, 6};
    CHECK(const_i64_is(g, ir_value_find(g, "c_ints"), w, 3));
    CHECK(val(g, "c_int")->rank == 0 && ir_const_i64(g, ir_value_find(g, "c_int"), 0) == -3);
    CHECK(val(g, "c_floats")->rank == 1 && ir_const_f64(g, ir_value_find(g, "c_floats"), 1) == 2.0);
    int64_t w2[2] = {9, 10};
    CHECK(const_i64_is(g, ir_value_find(g, "c_tensor"), w2, 2));

    /* TENSOR attribute -> constant value id; provenance. */
    const struct ir_node *cos = node_named(g, "cos");
    if (cos) {
        const struct ir_attr *a = ir_attr_find(cos, "value");
        CHECK(a && a->type == IR_ATTR_TENSOR && ir_is_const(g, a->tensor));
        if (a) CHECK(ir_const_f64(g, a->tensor, 0) == 0.5);
        CHECK(cos->onnx_index == 5 && strcmp(cos->op_type, "ConstantOfShape") == 0);
        CHECK(cos->op == IR_OP_CONSTANT_OF_SHAPE);
    }
    const struct ir_node *add = node_named(g, "add");
    if (add) CHECK(add->onnx_index == 6 && add->inputs[1] == ir_value_find(g, "shadow"));
    CHECK(g->noutputs == 3);

    /* model hash = SHA-256 of the file */
    FILE *f = fopen(p, "rb");
    CHECK(f != NULL);
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = malloc((size_t)n);
        CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
        uint8_t d[32];
        o2r_sha256(buf, (size_t)n, d);
        free(buf);
        CHECK(memcmp(d, g->model_hash, 32) == 0);
        /* and against the system's sha256sum, when present */
        char cmd[4200], out[80] = {0};
        snprintf(cmd, sizeof cmd, "sha256sum '%s' 2>/dev/null", p);
        FILE *pp = popen(cmd, "r");
        if (pp && fgets(out, sizeof out, pp) && strlen(out) >= 64) {
            char hex[65];
            for (int k = 0; k < 32; k++) sprintf(hex + 2 * k, "%02x", d[k]);
            CHECK(strncmp(out, hex, 64) == 0);
        }
        if (pp) pclose(pp);
    }
    check_uses(g);
    ir_graph_free(g);
}

/* Large raw_data buffers are taken over from the message, small ones copied: same values. */
static void test_big_raw(void)
{
    struct ir_graph *g = onnx_load(path_in(models_dir, "big_raw.onnx"));
    uint32_t b = ir_value_find(g, "bigw"), s = ir_value_find(g, "smallw");
    CHECK(ir_is_const(g, b) && g->values[b].nbytes == 65536);
    CHECK(ir_is_const(g, s) && g->values[s].nbytes == 65532);
    bool ok = true;
    for (int i = 0; i < 16384; i++) ok &= ir_const_f64(g, b, i) == i;
    for (int i = 0; i < 16383; i++) ok &= ir_const_f64(g, s, i) == i;
    CHECK(ok);
    CHECK(((uintptr_t)g->values[b].data & 15) == 0);
    check_uses(g);
    ir_graph_free(g);
}

/* Nodes out of order in the file are sorted; a Constant may be read before its node. */
static void test_unsorted(void)
{
    struct ir_graph *g = onnx_load(path_in(models_dir, "unsorted.onnx"));
    CHECK(g->nnodes == 2);
    if (g->nnodes == 2) {
        CHECK(strcmp(g->nodes[0].name, "relu") == 0 && g->nodes[0].onnx_index == 1);
        CHECK(strcmp(g->nodes[1].name, "add") == 0 && g->nodes[1].onnx_index == 0);
    }
    uint32_t c = ir_value_find(g, "c");
    CHECK(ir_is_const(g, c) && ir_const_f64(g, c, 0) == 1.0 && g->values[c].rank == 0);
    check_uses(g);
    ir_graph_free(g);
}

static struct ir_graph *load_backend(const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s/model.onnx", testdata_dir, rel);
    return onnx_load(p);
}

static void test_normalize(void)
{
    struct ir_graph *g;
    const struct ir_node *n;

    /* ReduceMean-13 without axes: input 1 absent, keepdims kept. */
    g = load_backend("node/test_reduce_mean_default_axes_keepdims_example");
    n = node_op(g, IR_OP_REDUCE_MEAN);
    if (n) CHECK(n->ninputs == 1 && ir_attr_int(n, "keepdims", -1) == 1 && !ir_attr_find(n, "axes"));
    check_uses(g);
    ir_graph_free(g);
    /* ReduceMean-13 axes=[1] attribute -> input 1 */
    g = load_backend("node/test_reduce_mean_do_not_keepdims_example");
    n = node_op(g, IR_OP_REDUCE_MEAN);
    int64_t one[1] = {1};
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), one, 1) && !ir_attr_find(n, "axes") &&
                 ir_attr_int(n, "keepdims", -1) == 0);
    check_uses(g);
    ir_graph_free(g);
    /* ReduceMean-6 (pytorch) */
    g = load_backend("pytorch-operator/test_operator_reduced_mean");
    n = node_op(g, IR_OP_REDUCE_MEAN);
    if (n) CHECK(ir_is_const(g, ir_input(n, 1)) && !ir_attr_find(n, "axes"));
    ir_graph_free(g);

    /* Split-13: split is already an input (a graph input here) */
    g = load_backend("node/test_split_variable_parts_1d");
    n = node_op(g, IR_OP_SPLIT);
    if (n) CHECK(n->ninputs == 2 && g->values[n->inputs[1]].is_input && n->noutputs == 2);
    ir_graph_free(g);
    /* Split-6 split=[2,1] attribute -> input 1 */
    g = load_backend("pytorch-operator/test_operator_chunk");
    n = node_op(g, IR_OP_SPLIT);
    int64_t s21[2] = {2, 1};
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), s21, 2) && !ir_attr_find(n, "split") &&
                 ir_attr_int(n, "axis", -1) == 0);
    check_uses(g);
    ir_graph_free(g);

    /* Softmax: _flatten by opset, axis always set */
    g = load_backend("node/test_softmax_axis_0");
    n = node_op(g, IR_OP_SOFTMAX);
    if (n) CHECK(ir_attr_int(n, "_flatten", -1) == 0 && ir_attr_int(n, "axis", 99) == 0);
    ir_graph_free(g);
    g = load_backend("node/test_softmax_default_axis");
    n = node_op(g, IR_OP_SOFTMAX);
    if (n) CHECK(ir_attr_int(n, "_flatten", -1) == 0 && ir_attr_int(n, "axis", 99) == -1);
    ir_graph_free(g);
    g = load_backend("pytorch-converted/test_Softmax");
    n = node_op(g, IR_OP_SOFTMAX);
    if (n) CHECK(ir_attr_int(n, "_flatten", -1) == 1 && ir_attr_int(n, "axis", 99) == 1);
    ir_graph_free(g);

    /* Constant-13: no node, output is the constant */
    g = load_backend("node/test_constant");
    CHECK(g->nnodes == 0 && g->noutputs == 1 && ir_is_const(g, g->outputs[0]));
    CHECK(strcmp(g->values[g->outputs[0]].name, "values") == 0 &&
          g->values[g->outputs[0]].nbytes == 5 * 5 * 4);
    ir_graph_free(g);

    /* Squeeze-13 axes input; Squeeze/Unsqueeze-6 attributes */
    g = load_backend("node/test_squeeze");
    n = node_op(g, IR_OP_SQUEEZE);
    if (n) CHECK(n->ninputs == 2 && g->values[n->inputs[1]].is_input);
    ir_graph_free(g);
    g = load_backend("pytorch-converted/test_AvgPool1d");
    int64_t three[1] = {3};
    n = node_op(g, IR_OP_SQUEEZE);
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), three, 1) && n->nattrs == 0);
    n = node_op(g, IR_OP_UNSQUEEZE);
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), three, 1) && n->nattrs == 0);
    check_uses(g);
    ir_graph_free(g);
    g = load_backend("node/test_unsqueeze_axis_3");
    n = node_op(g, IR_OP_UNSQUEEZE);
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), three, 1));
    ir_graph_free(g);

    /* Clip-6 min/max -> f32 scalar inputs */
    g = load_backend("pytorch-operator/test_operator_clip");
    n = node_op(g, IR_OP_CLIP);
    if (n) CHECK(const_f32_scalar_is(g, ir_input(n, 1), -0.5f) &&
                 const_f32_scalar_is(g, ir_input(n, 2), 0.5f) && n->nattrs == 0);
    ir_graph_free(g);
    /* Pad-2 pads/value -> inputs 1, 2; mode stays */
    g = load_backend("pytorch-converted/test_ConstantPad2d");
    n = node_op(g, IR_OP_PAD);
    int64_t pads[8] = {0, 0, 3, 1, 0, 0, 4, 2};
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), pads, 8) &&
                 const_f32_scalar_is(g, ir_input(n, 2), 2.0f) && attr_str_is(n, "mode", "constant") &&
                 n->nattrs == 1);
    check_uses(g);
    ir_graph_free(g);
    /* Slice-6 attributes -> inputs 1..3 */
    g = load_backend("pytorch-operator/test_operator_index");
    n = node_op(g, IR_OP_SLICE);
    int64_t zero[1] = {0};
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), zero, 1) && const_i64_is(g, ir_input(n, 2), one, 1) &&
                 const_i64_is(g, ir_input(n, 3), zero, 1) && n->nattrs == 0);
    ir_graph_free(g);
    /* Upsample-9 (X, scales input) -> Resize(X, -, scales) */
    g = load_backend("node/test_upsample_nearest");
    n = node_op(g, IR_OP_RESIZE);
    if (n) {
        CHECK(n->ninputs == 3 && n->inputs[1] == IR_NONE && n->inputs[2] == ir_value_find(g, "scales"));
        CHECK(attr_str_is(n, "mode", "nearest") &&
              attr_str_is(n, "coordinate_transformation_mode", "asymmetric") &&
              attr_str_is(n, "nearest_mode", "floor") && strcmp(n->op_type, "Upsample") == 0);
    }
    check_uses(g);
    ir_graph_free(g);
    /* Resize-13 with an empty roi: roi becomes absent */
    g = load_backend("node/test_resize_upsample_scales_nearest");
    n = node_op(g, IR_OP_RESIZE);
    if (n) CHECK(n->ninputs >= 3 && ir_input(n, 2) != IR_NONE);
    ir_graph_free(g);

    /* legacy broadcast (opset 6) that equals numpy broadcasting: accepted, attributes dropped */
    g = load_backend("pytorch-operator/test_operator_add_size1_broadcast");
    n = node_op(g, IR_OP_ADD);
    if (n) CHECK(n->nattrs == 0);
    ir_graph_free(g);

    /* PRelu-6 per-channel slope [3] on x [2,3,4] -> [3,1] */
    g = load_backend("pytorch-converted/test_PReLU_1d_multiparam");
    n = node_op(g, IR_OP_PRELU);
    if (n) {
        const struct ir_value *sl = &g->values[n->inputs[1]];
        CHECK(ir_is_const(g, n->inputs[1]) && sl->rank == 2 && sl->dims[0] == 3 && sl->dims[1] == 1);
    }
    check_uses(g);
    ir_graph_free(g);

    /* committed models */
    g = onnx_load(path_in(models_dir, "upsample7.onnx"));
    n = node_op(g, IR_OP_RESIZE);
    if (n) {
        uint32_t s = ir_input(n, 2);
        CHECK(n->ninputs == 3 && n->inputs[1] == IR_NONE && ir_is_const(g, s) &&
              g->values[s].dtype == IR_F32 && g->values[s].dims[0] == 4 &&
              ir_const_f64(g, s, 3) == 2.0 && !ir_attr_find(n, "scales"));
        CHECK(attr_str_is(n, "coordinate_transformation_mode", "asymmetric"));
    }
    check_uses(g);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "resize10.onnx"));
    n = node_op(g, IR_OP_RESIZE);
    if (n) CHECK(n->ninputs == 3 && n->inputs[1] == IR_NONE && n->inputs[2] == ir_value_find(g, "sc") &&
                 attr_str_is(n, "mode", "linear") && attr_str_is(n, "nearest_mode", "floor") &&
                 attr_str_is(n, "coordinate_transformation_mode", "asymmetric"));
    check_uses(g);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "slice9.onnx"));
    n = node_named(g, "sl");
    int64_t st[2] = {0, 1}, en[2] = {2, 3}, ax[2] = {0, 1};
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), st, 2) && const_i64_is(g, ir_input(n, 2), en, 2) &&
                 const_i64_is(g, ir_input(n, 3), ax, 2) && n->ninputs == 4);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "squeeze11.onnx"));
    int64_t zero1[1] = {0}, s13[2] = {1, 3};
    n = node_named(g, "sq");
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), zero1, 1));
    n = node_named(g, "us");
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), zero1, 1));
    n = node_named(g, "rsum");
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), one, 1) && ir_attr_int(n, "keepdims", -1) == 1);
    n = node_named(g, "rmean");
    if (n) CHECK(n->ninputs == 1 && ir_attr_int(n, "keepdims", -1) == 0);
    n = node_named(g, "split");
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), s13, 2) && ir_attr_int(n, "axis", -1) == 2);
    n = node_named(g, "soft");
    if (n) CHECK(ir_attr_int(n, "_flatten", -1) == 1 && ir_attr_int(n, "axis", 99) == 1);
    check_uses(g);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "pad2_clip6.onnx"));
    n = node_named(g, "pad");
    int64_t p4[4] = {0, 1, 0, 1};
    if (n) CHECK(const_i64_is(g, ir_input(n, 1), p4, 4) && const_f32_scalar_is(g, ir_input(n, 2), 1.5f));
    n = node_named(g, "clip");
    if (n) CHECK(n->ninputs == 2 && const_f32_scalar_is(g, ir_input(n, 1), 0.0f));
    check_uses(g);
    ir_graph_free(g);

    /* GroupNormalization-18: static C -> per-channel constants; dynamic -> _per_group=1 */
    g = onnx_load(path_in(models_dir, "gn18_static.onnx"));
    n = node_op(g, IR_OP_GROUP_NORMALIZATION);
    if (n) {
        uint32_t s = ir_input(n, 1), b = ir_input(n, 2);
        CHECK(ir_is_const(g, s) && g->values[s].dims[0] == 4 && ir_is_const(g, b));
        if (ir_is_const(g, s) && ir_is_const(g, b) && g->values[s].nbytes == 16) {
            const double ws[4] = {1, 1, 2, 2}, wb[4] = {0.5, 0.5, -0.5, -0.5};
            for (int i = 0; i < 4; i++)
                CHECK(ir_const_f64(g, s, i) == ws[i] && ir_const_f64(g, b, i) == wb[i]);
        }
        CHECK(ir_attr_int(n, "_per_group", 0) == 0);
    }
    check_uses(g);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "gn18_hint.onnx"));
    n = node_op(g, IR_OP_GROUP_NORMALIZATION);
    if (n) {
        uint32_t s = ir_input(n, 1);
        CHECK(ir_is_const(g, s) && g->values[s].dims[0] == 4 && ir_const_f64(g, s, 2) == 2.0 &&
              !ir_attr_find(n, "_per_group"));
    }
    check_uses(g);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "gn18_dynamic.onnx"));
    n = node_op(g, IR_OP_GROUP_NORMALIZATION);
    if (n) CHECK(ir_attr_int(n, "_per_group", 0) == 1 && n->inputs[1] == ir_value_find(g, "s"));
    ir_graph_free(g);
}

/* Copies a committed model into dir (made if needed). */
static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    CHECK(a && b);
    if (!a || !b) {
        if (a) fclose(a);
        if (b) fclose(b);
        return;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) CHECK(fwrite(buf, 1, n, b) == n);
    fclose(a);
    fclose(b);
}

static void test_external(void)
{
    struct ir_graph *g = onnx_load(path_in(models_dir, "ext_ok.onnx"));
    uint32_t w = ir_value_find(g, "W");
    CHECK(ir_is_const(g, w) && g->values[w].nbytes == 24);
    for (int i = 0; i < 6; i++) CHECK(ir_const_f64(g, w, i) == i + 1);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "ext_offset4.onnx"));
    w = ir_value_find(g, "W");
    CHECK(ir_const_f64(g, w, 0) == 2 && ir_const_f64(g, w, 1) == 3 && g->values[w].nbytes == 8);
    ir_graph_free(g);
    g = onnx_load(path_in(models_dir, "ext_noloc_len.onnx"));
    w = ir_value_find(g, "W");
    CHECK(ir_const_f64(g, w, 0) == 5 && ir_const_f64(g, w, 1) == 6);
    ir_graph_free(g);

    expect_fail(path_in(models_dir, "ext_dotdot.onnx"), "contains '..'");
    expect_fail(path_in(models_dir, "ext_abs.onnx"), "is an absolute path");
    expect_fail(path_in(models_dir, "ext_past_end.onnx"), "offset 4096 is past the end");
    expect_fail(path_in(models_dir, "ext_overrun.onnx"), "offset 16 + length 24 exceeds");
    expect_fail(path_in(models_dir, "ext_len_mismatch.onnx"), "length 20 does not match");
    expect_fail(path_in(models_dir, "ext_missing.onnx"), "external data file 'missing.bin' not found");

    /* symlink out of the model's folder: WORK/ext/link.bin -> WORK/outside.bin */
    char dir[4096], link[4200], outside[4200], model[4200];
    snprintf(dir, sizeof dir, "%s/ext", work_dir);
    mkdir(work_dir, 0755);
    mkdir(dir, 0755);
    snprintf(outside, sizeof outside, "%s/outside.bin", work_dir);
    snprintf(link, sizeof link, "%s/link.bin", dir);
    snprintf(model, sizeof model, "%s/ext_link.onnx", dir);
    copy_file(path_in(models_dir, "weights.bin"), outside);
    copy_file(path_in(models_dir, "ext_link.onnx"), model);
    unlink(link);
    CHECK(symlink("../outside.bin", link) == 0);
    expect_fail(model, "outside the model's folder");
    /* a symlink that stays inside is fine */
    unlink(link);
    copy_file(path_in(models_dir, "weights.bin"), path_in(dir, "weights.bin"));
    CHECK(symlink("weights.bin", link) == 0);
    g = onnx_load(model);
    CHECK(ir_const_f64(g, ir_value_find(g, "W"), 5) == 6);
    ir_graph_free(g);

    /* 64-bit offsets: a sparse 5 GiB + 16 byte file with the tensor at 5 GiB */
    snprintf(model, sizeof model, "%s/ext_big.onnx", dir);
    copy_file(path_in(models_dir, "ext_big.onnx"), model);
    char big[4200];
    snprintf(big, sizeof big, "%s/big.bin", dir);
    int fd = open(big, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) {
        const float vals[4] = {1.25f, -2.5f, 3.75f, 1e30f};
        off_t off = (off_t)5 << 30;
        CHECK(pwrite(fd, vals, sizeof vals, off) == (ssize_t)sizeof vals);
        close(fd);
        g = onnx_load(model);
        uint32_t v = ir_value_find(g, "W");
        CHECK(g->values[v].nbytes == 16);
        for (int i = 0; i < 4; i++) CHECK(ir_const_f64(g, v, i) == (double)vals[i]);
        ir_graph_free(g);
        unlink(big);
    }
}

static void test_bad(void)
{
    mkdir(work_dir, 0755);
    /* zero-length, garbage, truncated (from a real model), directory */
    char *empty = path_in(work_dir, "empty.onnx");
    FILE *f = fopen(empty, "wb");
    CHECK(f != NULL);
    if (f) fclose(f);
    expect_fail(empty, "not a valid ONNX model");
    char *garbage = path_in(work_dir, "garbage.onnx");
    f = fopen(garbage, "wb");
    if (f) {
        fputs("this is not a protobuf\n\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", f);
        fclose(f);
    }
    expect_fail(garbage, "not a valid ONNX model");
    /* truncations at many points of a real model: each must fail cleanly or load */
    char src[4096];
    snprintf(src, sizeof src, "%s/node/test_conv_with_strides_padding/model.onnx", testdata_dir);
    FILE *in = fopen(src, "rb");
    CHECK(in != NULL);
    if (in) {
        static char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf, in);
        fclose(in);
        char *tr = path_in(work_dir, "truncated.onnx");
        int bad = 0;
        for (size_t cut = 1; cut < n; cut += (cut < 64 ? 1 : 7)) {
            f = fopen(tr, "wb");
            fwrite(buf, 1, cut, f);
            fclose(f);
            char msg[4096];
            int rc = run_child(tr, msg, sizeof msg);
            if (rc != 1 || !strstr(msg, tr)) {
                fprintf(stderr, "truncated at %zu: exit %d: %s\n", cut, rc, msg);
                bad++;
            }
        }
        CHECK(bad == 0);
        f = fopen(tr, "wb");
        fwrite(buf, 1, n / 2, f);
        fclose(f);
        expect_fail(tr, "not a valid ONNX model");
    }
    /* deterministic byte mutations of a model using many features: load or fail cleanly */
    FILE *fm = fopen(path_in(models_dir, "forms.onnx"), "rb");
    CHECK(fm != NULL);
    if (fm) {
        static unsigned char orig[1 << 16], mut[1 << 16];
        size_t n = fread(orig, 1, sizeof orig, fm);
        fclose(fm);
        uint32_t seed = 12345;
        int bad = 0, loaded = 0;
        char *mp = path_in(work_dir, "mutated.onnx");
        for (int it = 0; it < 400; it++) {
            memcpy(mut, orig, n);
            int flips = 1 + it % 4;
            for (int k = 0; k < flips; k++) {
                seed = seed * 1664525u + 1013904223u;
                size_t pos = (seed >> 8) % n;
                seed = seed * 1664525u + 1013904223u;
                mut[pos] = (unsigned char)(seed >> 24);
            }
            f = fopen(mp, "wb");
            fwrite(mut, 1, n, f);
            fclose(f);
            char msg[4096];
            int rc = run_child(mp, msg, sizeof msg);
            if (rc == 0) loaded++;
            else if (rc != 1 || !strstr(msg, mp)) {
                fprintf(stderr, "mutation %d: exit %d: %s\n", it, rc, msg);
                bad++;
            }
        }
        printf("mutations: %d loaded, %d refused cleanly\n", loaded, 400 - loaded - bad);
        CHECK(bad == 0);
    }
    expect_fail(work_dir, "is a directory");
    expect_fail(path_in(work_dir, "does_not_exist.onnx"), "cannot open");

    expect_fail(path_in(models_dir, "bad_domain.onnx"),
                "node 'fg' (FastGelu, #0): unsupported domain 'com.microsoft' (opset 1)");
    expect_fail(path_in(models_dir, "bad_op.onnx"),
                "node 'nso' (NoSuchOp, #0): unsupported operator 'NoSuchOp' (domain 'ai.onnx', opset 17)");
    expect_fail(path_in(models_dir, "bad_output.onnx"), "graph output 'y' is not produced by any node");
    expect_fail(path_in(models_dir, "bad_input.onnx"), "node 'r' (Relu, #0): input 'q' is not produced");
    expect_fail(path_in(models_dir, "bad_twice.onnx"), "node 'r2' (Relu, #1): output 'y' is already produced");
    expect_fail(path_in(models_dir, "bad_string.onnx"), "tensor 's': string tensors are not supported");
    expect_fail(path_in(models_dir, "bad_const_string.onnx"), "string tensors are not supported");
    expect_fail(path_in(models_dir, "bad_negdim.onnx"), "tensor 'neg': negative dim -1 at axis 1");
    expect_fail(path_in(models_dir, "bad_overflow.onnx"), "tensor 'huge': element count overflows");
    expect_fail(path_in(models_dir, "bad_rawsize.onnx"), "tensor 'short': raw_data holds 8 bytes");
    expect_fail(path_in(models_dir, "bad_subgraph.onnx"),
                "node 'withgraph' (Relu, #0): attribute 'then_branch' holds a subgraph");
    expect_fail(path_in(models_dir, "bad_sparse.onnx"), "sparse tensors are not supported");
    expect_fail(path_in(models_dir, "bad_cycle.onnx"), "cycle");
}

/* Every backend test model loads or fails cleanly (exit 1, message naming the file). */
static void test_backend(void)
{
    static const char *subs[] = {"node", "simple", "pytorch-converted", "pytorch-operator"};
    int loaded = 0, refused = 0;
    for (size_t s = 0; s < 4; s++) {
        char d[4096];
        snprintf(d, sizeof d, "%s/%s", testdata_dir, subs[s]);
        DIR *dir = opendir(d);
        if (!dir) continue;
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (e->d_name[0] == '.') continue;
            char p[4400], msg[4096];
            snprintf(p, sizeof p, "%s/%s/model.onnx", d, e->d_name);
            if (access(p, R_OK) != 0) continue;
            int rc = run_child(p, msg, sizeof msg);
            if (rc == 0) {
                loaded++;
            } else if (rc == 1 && strncmp(msg, p, strlen(p)) == 0) {
                refused++;
            } else {
                fprintf(stderr, "FAIL %s: exit %d: %s\n", p, rc, msg);
                failures++;
            }
        }
        closedir(dir);
    }
    printf("backend models: %d loaded, %d refused with a located message\n", loaded, refused);
    CHECK(loaded > 700);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "dump") == 0) {
        struct ir_graph *g = onnx_load(argv[2]);
        ir_dump(g, stdout);
        ir_graph_free(g);
        return 0;
    }
    if (argc != 5) {
        fprintf(stderr, "usage: %s GROUP MODELS_DIR WORK_DIR ONNX_TESTDATA_DIR\n", argv[0]);
        return 2;
    }
    models_dir = argv[2];
    work_dir = argv[3];
    testdata_dir = argv[4];
    const char *grp = argv[1];
    if (strcmp(grp, "sha256") == 0) test_sha256();
    else if (strcmp(grp, "forms") == 0) {
        test_forms();
        test_unsorted();
        test_big_raw();
    }
    else if (strcmp(grp, "normalize") == 0) test_normalize();
    else if (strcmp(grp, "external") == 0) test_external();
    else if (strcmp(grp, "bad") == 0) test_bad();
    else if (strcmp(grp, "backend") == 0) test_backend();
    else {
        fprintf(stderr, "unknown group '%s'\n", grp);
        return 2;
    }
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("all checks passed\n");
    return failures ? 1 : 0;
}
