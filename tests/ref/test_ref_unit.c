/* test_ref_unit.c — hand-built single-node graphs checking infer_node + ref_eval on the cases
 * the ONNX backend data does not pin down (or that matter most to onnx2cl): Slice with negative
 * steps and INT64_MIN/MAX ends, Expand rank growth, Reshape 0/-1/allowzero, f16 conversion bit
 * patterns, NaN propagation, Softmax before/after opset 13, Gemm 1-D bias, Resize nearest
 * asymmetric floor, GroupNorm (-21 and per-group), Split num_outputs, Round half-even, integer
 * Div/Mod/Pow, Gelu, Cast, Conv SAME_UPPER geometry, and the messages of user errors (checked
 * in a forked child, which must exit 1 with the expected text on stderr).
 * Expected values are computed independently in this file (closed forms / direct loops) or are
 * known constants (IEEE bit patterns). Float tolerance: |got - want| <= 1e-6 + 1e-5 * |want|.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "passes/passes.h"
#include "ref/ref_util.h"

static int failures;
static struct ir_graph *G;

#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);         \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static bool near(double got, double want)
{
    if (isnan(want)) return isnan(got);
    return fabs(got - want) <= 1e-6 + 1e-5 * fabs(want);
}

static void fresh(void)
{
    if (G) ir_graph_free(G);
    G = ir_graph_new("unit.onnx");
    G->opset = 21;
}

static uint32_t cnst(enum ir_dtype t, int rank, const int64_t *dims, const void *data)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= dims[k];
    size_t bytes = (size_t)n * ir_dtype_size(t);
    void *p = ir_alloc(G, bytes ? bytes : 1);
    if (bytes) memcpy(p, data, bytes);
    static int id;
    char name[32];
    snprintf(name, sizeof name, "c%d", id++);
    return ir_const_add(G, name, t, rank, dims, p, bytes);
}

static uint32_t i64s(int n, const int64_t *v)
{
    int64_t d[1] = {n};
    return cnst(IR_I64, 1, d, v);
}

/* Adds a node with nout fresh outputs (ids in outs). */
static uint32_t node(enum ir_op op, const uint32_t *ins, uint32_t nin, uint32_t nout, uint32_t *outs)
{
    static int id;
    for (uint32_t k = 0; k < nout; k++) {
        char name[32];
        snprintf(name, sizeof name, "y%d", id++);
        outs[k] = ir_value_add(G, name, IR_UNDEFINED, -1, NULL);
    }
    return ir_node_add(G, op, "n", ir_op_name(op), ins, nin, outs, nout);
}

static void run(uint32_t nd)
{
    infer_node(G, nd);
    bool ok = ref_eval(G, nd);
    CHECK(ok);
}

static const struct ir_value *V(uint32_t v) { return &G->values[v]; }

static bool dims_are(uint32_t v, int rank, const int64_t *d)
{
    const struct ir_value *x = V(v);
    if (!x->dims_known || x->rank != rank) return false;
    for (int k = 0; k < rank; k++)
        if (x->dims[k] != d[k]) return false;
    return true;
}

/* Runs fn in a child; it must exit with status 1 and print `want` on stderr. */
static void expect_fatal(void (*fn)(void), const char *want)
{
    int fds[2];
    if (pipe(fds)) abort();
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    char buf[4096];
    size_t len = 0;
    ssize_t r;
    while ((r = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)r;
    buf[len] = 0;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(buf, want);
    if (!ok) {
        fprintf(stderr, "expected a fatal error containing \"%s\", got status %d and: %s\n", want,
                WIFEXITED(st) ? WEXITSTATUS(st) : -1, buf);
        failures++;
    }
}

/* ---- cases ------------------------------------------------------------------------------------ */

static void test_slice(void)
{
    fresh();
    int64_t x[10], d10[1] = {10};
    for (int i = 0; i < 10; i++) x[i] = i;
    uint32_t xv = cnst(IR_I64, 1, d10, x), o;
    struct {
        int64_t s, e, st;
        int n;
        int64_t want[10];
    } cases[] = {
        {-1, INT64_MIN, -1, 10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
        {20, INT64_MIN, -3, 4, {9, 6, 3, 0}},
        {0, INT64_MAX, 3, 4, {0, 3, 6, 9}},
        {INT64_MIN, 3, 1, 3, {0, 1, 2}},
        {5, 5, 1, 0, {0}},
        {-100, INT64_MAX, -1, 0, {0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint32_t in[5] = {xv, i64s(1, &cases[c].s), i64s(1, &cases[c].e), i64s(1, (int64_t[]){0}),
                          i64s(1, &cases[c].st)};
        run(node(IR_OP_SLICE, in, 5, 1, &o));
        CHECK(V(o)->rank == 1 && V(o)->dims[0] == cases[c].n);
        for (int i = 0; i < cases[c].n; i++) CHECK(((const int64_t *)V(o)->data)[i] == cases[c].want[i]);
    }
    /* 2-D, axes=[-1], start -2 end -10 step -1 on [2,5] -> columns 3,2,1,0 */
    float m[10];
    for (int i = 0; i < 10; i++) m[i] = (float)i;
    uint32_t mv = cnst(IR_F32, 2, (int64_t[]){2, 5}, m);
    uint32_t in[5] = {mv, i64s(1, (int64_t[]){-2}), i64s(1, (int64_t[]){-10}),
                      i64s(1, (int64_t[]){-1}), i64s(1, (int64_t[]){-1})};
    run(node(IR_OP_SLICE, in, 5, 1, &o));
    CHECK(dims_are(o, 2, (int64_t[]){2, 4}));
    const float *r = V(o)->data;
    CHECK(r[0] == 3 && r[3] == 0 && r[4] == 8 && r[7] == 5);
}

static void test_expand_reshape(void)
{
    fresh();
    float x[3] = {1, 2, 3};
    uint32_t xv = cnst(IR_F32, 2, (int64_t[]){3, 1}, x), o;
    uint32_t in[2] = {xv, i64s(3, (int64_t[]){2, 1, 6})};
    run(node(IR_OP_EXPAND, in, 2, 1, &o));
    CHECK(dims_are(o, 3, (int64_t[]){2, 3, 6}));
    const float *r = V(o)->data;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 6; j++) CHECK(r[(b * 3 + i) * 6 + j] == x[i]);

    float y[24];
    for (int i = 0; i < 24; i++) y[i] = (float)i;
    uint32_t yv = cnst(IR_F32, 3, (int64_t[]){2, 3, 4}, y);
    uint32_t a[2] = {yv, i64s(2, (int64_t[]){0, -1})};
    run(node(IR_OP_RESHAPE, a, 2, 1, &o));
    CHECK(dims_are(o, 2, (int64_t[]){2, 12}));
    CHECK(((const float *)V(o)->data)[23] == 23);
    uint32_t b2[2] = {yv, i64s(3, (int64_t[]){-1, 0, 2})};
    run(node(IR_OP_RESHAPE, b2, 2, 1, &o));
    CHECK(dims_are(o, 3, (int64_t[]){4, 3, 2}));
    /* allowzero=1: a 0 in shape is a real 0 */
    uint32_t ev = cnst(IR_F32, 2, (int64_t[]){0, 3}, NULL);
    uint32_t c2[2] = {ev, i64s(2, (int64_t[]){3, 0})};
    uint32_t nd = node(IR_OP_RESHAPE, c2, 2, 1, &o);
    ir_attr_set_int(G, nd, "allowzero", 1);
    run(nd);
    CHECK(dims_are(o, 2, (int64_t[]){3, 0}));
    /* allowzero=0: 0 copies the input dim */
    uint32_t c3[2] = {ev, i64s(3, (int64_t[]){0, 1, 3})};
    run(node(IR_OP_RESHAPE, c3, 2, 1, &o));
    CHECK(dims_are(o, 3, (int64_t[]){0, 1, 3}));
}

static void test_f16(void)
{
    struct {
        float f;
        uint16_t h;
    } cases[] = {
        {65504.0f, 0x7bff}, {65519.0f, 0x7bff}, {65520.0f, 0x7c00}, {65536.0f, 0x7c00},
        {1e-8f, 0x0000},    {-1e-8f, 0x8000},   {6e-8f, 0x0001},    {2.9802322e-8f, 0x0000},
        {1.0f, 0x3c00},     {-2.0f, 0xc000},    {INFINITY, 0x7c00}, {-INFINITY, 0xfc00},
        {6.1035156e-5f, 0x0400}, {1.0009765625f, 0x3c01}, {1.00048828125f, 0x3c00},
        {1.00146484375f, 0x3c02}, {-0.0f, 0x8000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = ref_f32_to_f16(cases[i].f);
        if (h != cases[i].h) {
            fprintf(stderr, "f32_to_f16(%g) = 0x%04x, want 0x%04x\n", cases[i].f, h, cases[i].h);
            failures++;
        }
    }
    CHECK((ref_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (ref_f32_to_f16(NAN) & 0x3ff) != 0);
    /* every non-NaN half survives f16 -> f32 -> f16 */
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = ref_f16_to_f32((uint16_t)h);
        if (isnan(f)) continue;
        if (ref_f32_to_f16(f) != h) {
            fprintf(stderr, "round trip of 0x%04x gave 0x%04x\n", h, ref_f32_to_f16(f));
            failures++;
            break;
        }
    }
    CHECK(ref_f16_to_f32(0x0001) == 5.9604644775390625e-8f);
    CHECK(ref_f16_to_f32(0x7bff) == 65504.0f);
    /* Cast node f32 -> f16 */
    fresh();
    float x[4] = {65504.0f, 65520.0f, 1e-8f, NAN};
    uint32_t xv = cnst(IR_F32, 1, (int64_t[]){4}, x), o;
    uint32_t nd = node(IR_OP_CAST, &xv, 1, 1, &o);
    ir_attr_set_int(G, nd, "to", IR_F16);
    run(nd);
    const uint16_t *r = V(o)->data;
    CHECK(V(o)->dtype == IR_F16 && r[0] == 0x7bff && r[1] == 0x7c00 && r[2] == 0 &&
          (r[3] & 0x7c00) == 0x7c00 && (r[3] & 0x3ff));
}

static void test_nan(void)
{
    fresh();
    float a[3] = {1, NAN, 5}, b[3] = {NAN, 2, 3};
    uint32_t av = cnst(IR_F32, 1, (int64_t[]){3}, a), bv = cnst(IR_F32, 1, (int64_t[]){3}, b), o;
    uint32_t in[2] = {av, bv};
    run(node(IR_OP_MAX, in, 2, 1, &o));
    const float *r = V(o)->data;
    CHECK(isnan(r[0]) && isnan(r[1]) && r[2] == 5);
    run(node(IR_OP_MIN, in, 2, 1, &o));
    r = V(o)->data;
    CHECK(isnan(r[0]) && isnan(r[1]) && r[2] == 3);
    uint32_t ri[1] = {av};
    run(node(IR_OP_REDUCE_MAX, ri, 1, 1, &o));
    CHECK(V(o)->rank == 1 && V(o)->dims[0] == 1 && isnan(((const float *)V(o)->data)[0]));
    run(node(IR_OP_RELU, &av, 1, 1, &o));
    r = V(o)->data;
    CHECK(r[0] == 1 && isnan(r[1]) && r[2] == 5);
}

static void test_softmax(void)
{
    fresh();
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)(0.1 * i + sin(i));
    uint32_t xv = cnst(IR_F32, 3, (int64_t[]){2, 3, 4}, x), o1, o2;
    uint32_t n1 = node(IR_OP_SOFTMAX, &xv, 1, 1, &o1);
    ir_attr_set_int(G, n1, "axis", 1);
    ir_attr_set_int(G, n1, "_flatten", 1);
    run(n1);
    uint32_t n2 = node(IR_OP_SOFTMAX, &xv, 1, 1, &o2);
    ir_attr_set_int(G, n2, "axis", 1);
    run(n2);
    const float *r1 = V(o1)->data, *r2 = V(o2)->data;
    for (int b = 0; b < 2; b++) {
        double s = 0;
        for (int i = 0; i < 12; i++) s += exp(x[b * 12 + i]);
        for (int i = 0; i < 12; i++) CHECK(near(r1[b * 12 + i], exp(x[b * 12 + i]) / s));
        for (int k = 0; k < 4; k++) {
            double s2 = 0;
            for (int c = 0; c < 3; c++) s2 += exp(x[(b * 3 + c) * 4 + k]);
            for (int c = 0; c < 3; c++)
                CHECK(near(r2[(b * 3 + c) * 4 + k], exp(x[(b * 3 + c) * 4 + k]) / s2));
        }
    }
}

static void test_gemm(void)
{
    fresh();
    /* A stored [K=3, M=2] (transA), B stored [N=2, K=3] (transB), C 1-D [N] */
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, -1, 2, 0.5f, 3, -2}, c[2] = {10, 20};
    uint32_t in[3] = {cnst(IR_F32, 2, (int64_t[]){3, 2}, a), cnst(IR_F32, 2, (int64_t[]){2, 3}, b),
                      cnst(IR_F32, 1, (int64_t[]){2}, c)};
    uint32_t o, nd = node(IR_OP_GEMM, in, 3, 1, &o);
    ir_attr_set_int(G, nd, "transA", 1);
    ir_attr_set_int(G, nd, "transB", 1);
    ir_attr_set_float(G, nd, "alpha", 0.5f);
    ir_attr_set_float(G, nd, "beta", 2.0f);
    run(nd);
    CHECK(dims_are(o, 2, (int64_t[]){2, 2}));
    const float *r = V(o)->data;
    for (int m = 0; m < 2; m++)
        for (int n = 0; n < 2; n++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += a[k * 2 + m] * b[n * 3 + k];
            CHECK(near(r[m * 2 + n], 0.5 * s + 2.0 * c[n]));
        }
}

static void test_resize(void)
{
    fresh();
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    float sc[4] = {1, 1, 3, 3};
    uint32_t in[3] = {cnst(IR_F32, 4, (int64_t[]){1, 1, 4, 4}, x), IR_NONE,
                      cnst(IR_F32, 1, (int64_t[]){4}, sc)};
    uint32_t o, nd = node(IR_OP_RESIZE, in, 3, 1, &o);
    ir_attr_set_string(G, nd, "mode", "nearest");
    ir_attr_set_string(G, nd, "coordinate_transformation_mode", "asymmetric");
    ir_attr_set_string(G, nd, "nearest_mode", "floor");
    run(nd);
    CHECK(dims_are(o, 4, (int64_t[]){1, 1, 12, 12}));
    const float *r = V(o)->data;
    for (int y = 0; y < 12; y++)
        for (int xx = 0; xx < 12; xx++) CHECK(r[y * 12 + xx] == x[(y / 3) * 4 + xx / 3]);
}

static void test_group_norm(void)
{
    for (int per_group = 0; per_group < 2; per_group++) {
        fresh();
        enum { N = 2, C = 4, S = 3, GR = 2 };
        float x[N * C * S], sc[C] = {1, 2, -1, 0.5f}, bi[C] = {0, 1, 2, 3};
        for (int i = 0; i < N * C * S; i++) x[i] = (float)(cos(i) * 3 + i * 0.1);
        int ns = per_group ? GR : C;
        uint32_t in[3] = {cnst(IR_F32, 3, (int64_t[]){N, C, S}, x),
                          cnst(IR_F32, 1, (int64_t[]){ns}, sc), cnst(IR_F32, 1, (int64_t[]){ns}, bi)};
        uint32_t o, nd = node(IR_OP_GROUP_NORMALIZATION, in, 3, 1, &o);
        ir_attr_set_int(G, nd, "num_groups", GR);
        ir_attr_set_float(G, nd, "epsilon", 1e-3f);
        if (per_group) ir_attr_set_int(G, nd, "_per_group", 1);
        run(nd);
        const float *r = V(o)->data;
        for (int n = 0; n < N; n++)
            for (int g = 0; g < GR; g++) {
                const float *p = x + (n * C + g * 2) * S;
                double m = 0, v = 0;
                for (int i = 0; i < 2 * S; i++) m += p[i];
                m /= 2 * S;
                for (int i = 0; i < 2 * S; i++) v += (p[i] - m) * (p[i] - m);
                v /= 2 * S;
                for (int i = 0; i < 2 * S; i++) {
                    int ch = per_group ? g : g * 2 + i / S;
                    double want = (p[i] - m) / sqrt(v + 1e-3f) * sc[ch] + bi[ch];
                    CHECK(near(r[(n * C + g * 2) * S + i], want));
                }
            }
    }
}

static void test_split(void)
{
    fresh();
    float x[7] = {0, 1, 2, 3, 4, 5, 6};
    uint32_t xv = cnst(IR_F32, 1, (int64_t[]){7}, x), o[3];
    uint32_t nd = node(IR_OP_SPLIT, &xv, 1, 3, o);
    ir_attr_set_int(G, nd, "num_outputs", 3);
    run(nd);
    CHECK(V(o[0])->dims[0] == 3 && V(o[1])->dims[0] == 3 && V(o[2])->dims[0] == 1);
    CHECK(((const float *)V(o[1])->data)[0] == 3 && ((const float *)V(o[2])->data)[0] == 6);
    uint32_t in[2] = {xv, i64s(2, (int64_t[]){2, 5})}, p[2];
    run(node(IR_OP_SPLIT, in, 2, 2, p));
    CHECK(V(p[1])->dims[0] == 5 && ((const float *)V(p[1])->data)[0] == 2);
}

static void test_numerics(void)
{
    fresh();
    float x[6] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f};
    uint32_t xv = cnst(IR_F32, 1, (int64_t[]){6}, x), o;
    run(node(IR_OP_ROUND, &xv, 1, 1, &o));
    const float *r = V(o)->data;
    CHECK(r[0] == 0 && r[1] == 2 && r[2] == 2 && r[3] == 0 && signbit(r[3]) && r[4] == -2 && r[5] == 2);

    int32_t a[4] = {-7, 7, -7, 7}, b[4] = {2, -2, -2, 2};
    uint32_t in[2] = {cnst(IR_I32, 1, (int64_t[]){4}, a), cnst(IR_I32, 1, (int64_t[]){4}, b)};
    run(node(IR_OP_DIV, in, 2, 1, &o));
    const int32_t *ri = V(o)->data;
    CHECK(ri[0] == -3 && ri[1] == -3 && ri[2] == 3 && ri[3] == 3);
    run(node(IR_OP_MOD, in, 2, 1, &o));
    ri = V(o)->data;
    CHECK(ri[0] == 1 && ri[1] == -1 && ri[2] == -1 && ri[3] == 1);
    uint32_t nd = node(IR_OP_MOD, in, 2, 1, &o);
    ir_attr_set_int(G, nd, "fmod", 1);
    run(nd);
    ri = V(o)->data;
    CHECK(ri[0] == -1 && ri[1] == 1 && ri[2] == -1 && ri[3] == 1);
    int64_t pa[3] = {2, 3, -2}, pb[3] = {3, 2, 3};
    uint32_t pin[2] = {cnst(IR_I64, 1, (int64_t[]){3}, pa), cnst(IR_I64, 1, (int64_t[]){3}, pb)};
    run(node(IR_OP_POW, pin, 2, 1, &o));
    const int64_t *rp = V(o)->data;
    CHECK(V(o)->dtype == IR_I64 && rp[0] == 8 && rp[1] == 9 && rp[2] == -8);

    float gx[2] = {1.0f, -0.5f};
    uint32_t gv = cnst(IR_F32, 1, (int64_t[]){2}, gx);
    run(node(IR_OP_GELU, &gv, 1, 1, &o));
    CHECK(near(((const float *)V(o)->data)[0], 0.8413447460685429));
    CHECK(near(((const float *)V(o)->data)[1], -0.15426876936299344));
    nd = node(IR_OP_GELU, &gv, 1, 1, &o);
    ir_attr_set_string(G, nd, "approximate", "tanh");
    run(nd);
    CHECK(near(((const float *)V(o)->data)[0], 0.8411919906082768));

    float cx[5] = {-1.7f, 1.7f, 2.5f, 0.0f, NAN};
    uint32_t cv = cnst(IR_F32, 1, (int64_t[]){5}, cx);
    nd = node(IR_OP_CAST, &cv, 1, 1, &o);
    ir_attr_set_int(G, nd, "to", IR_I32);
    run(nd);
    ri = V(o)->data;
    CHECK(ri[0] == -1 && ri[1] == 1 && ri[2] == 2 && ri[3] == 0);
    nd = node(IR_OP_CAST, &cv, 1, 1, &o);
    ir_attr_set_int(G, nd, "to", IR_BOOL);
    run(nd);
    const uint8_t *rb = V(o)->data;
    CHECK(rb[0] == 1 && rb[3] == 0 && rb[4] == 1);
    uint32_t bo;
    nd = node(IR_OP_CAST, &o, 1, 1, &bo);
    ir_attr_set_int(G, nd, "to", IR_F32);
    run(nd);
    r = V(bo)->data;
    CHECK(r[0] == 1.0f && r[3] == 0.0f);
}

static void test_shapes(void)
{
    fresh();
    /* Conv SAME_UPPER stride 2: 5x5 -> 3x3, pads (1,1) */
    float x[25], w[9];
    for (int i = 0; i < 25; i++) x[i] = (float)i;
    for (int i = 0; i < 9; i++) w[i] = 1;
    uint32_t in[2] = {cnst(IR_F32, 4, (int64_t[]){1, 1, 5, 5}, x),
                      cnst(IR_F32, 4, (int64_t[]){1, 1, 3, 3}, w)};
    uint32_t o, nd = node(IR_OP_CONV, in, 2, 1, &o);
    ir_attr_set_string(G, nd, "auto_pad", "SAME_UPPER");
    ir_attr_set_ints(G, nd, "strides", (int64_t[]){2, 2}, 2);
    run(nd);
    CHECK(dims_are(o, 4, (int64_t[]){1, 1, 3, 3}));
    /* centre output (1,1) sums input rows 1..3, cols 1..3 */
    double s = 0;
    for (int i = 1; i <= 3; i++)
        for (int j = 1; j <= 3; j++) s += x[i * 5 + j];
    CHECK(near(((const float *)V(o)->data)[4], s));
    CHECK(near(((const float *)V(o)->data)[0], x[0] + x[1] + x[5] + x[6]));

    /* Squeeze without axes drops every 1 */
    uint32_t sv = cnst(IR_F32, 4, (int64_t[]){1, 3, 1, 2}, x);
    run(node(IR_OP_SQUEEZE, &sv, 1, 1, &o));
    CHECK(dims_are(o, 2, (int64_t[]){3, 2}));
    uint32_t un[2] = {o, i64s(2, (int64_t[]){-1, 0})};
    run(node(IR_OP_UNSQUEEZE, un, 2, 1, &o));
    CHECK(dims_are(o, 4, (int64_t[]){1, 3, 2, 1}));
    /* MatMul 1-D x batched */
    uint32_t mm[2] = {cnst(IR_F32, 1, (int64_t[]){3}, x), cnst(IR_F32, 3, (int64_t[]){2, 3, 4}, x)};
    run(node(IR_OP_MATMUL, mm, 2, 1, &o));
    CHECK(dims_are(o, 2, (int64_t[]){2, 4}));
    /* out[1][2] = sum_k a[k] * b[1][k][2] */
    CHECK(near(((const float *)V(o)->data)[6], 0 * x[12 + 2] + 1 * x[12 + 6] + 2 * x[12 + 10]));
    /* Shape with start/end, Concat negative axis */
    uint32_t shv = cnst(IR_F32, 3, (int64_t[]){2, 3, 4}, x);
    nd = node(IR_OP_SHAPE, &shv, 1, 1, &o);
    ir_attr_set_int(G, nd, "start", -2);
    run(nd);
    CHECK(dims_are(o, 1, (int64_t[]){2}) && ((const int64_t *)V(o)->data)[0] == 3);
    uint32_t cc[2] = {shv, shv};
    nd = node(IR_OP_CONCAT, cc, 2, 1, &o);
    ir_attr_set_int(G, nd, "axis", -1);
    run(nd);
    CHECK(dims_are(o, 3, (int64_t[]){2, 3, 8}));
    /* ArgMax keepdims=0 select_last_index */
    float am[6] = {1, 3, 3, 0, 0, -1};
    uint32_t av = cnst(IR_F32, 2, (int64_t[]){2, 3}, am);
    nd = node(IR_OP_ARG_MAX, &av, 1, 1, &o);
    ir_attr_set_int(G, nd, "axis", 1);
    ir_attr_set_int(G, nd, "keepdims", 0);
    ir_attr_set_int(G, nd, "select_last_index", 1);
    run(nd);
    CHECK(dims_are(o, 1, (int64_t[]){2}) && ((const int64_t *)V(o)->data)[0] == 2 &&
          ((const int64_t *)V(o)->data)[1] == 1);
}

/* ---- user errors (run in a child) ----------------------------------------------------------- */

static void bad_broadcast(void)
{
    fresh();
    float x[12] = {0};
    uint32_t in[2] = {cnst(IR_F32, 2, (int64_t[]){2, 3}, x), cnst(IR_F32, 1, (int64_t[]){4}, x)}, o;
    infer_node(G, node(IR_OP_ADD, in, 2, 1, &o));
}

static void bad_group(void)
{
    fresh();
    float x[64] = {0};
    uint32_t in[2] = {cnst(IR_F32, 4, (int64_t[]){1, 3, 2, 2}, x),
                      cnst(IR_F32, 4, (int64_t[]){2, 1, 1, 1}, x)}, o;
    uint32_t nd = node(IR_OP_CONV, in, 2, 1, &o);
    ir_attr_set_int(G, nd, "group", 2);
    infer_node(G, nd);
}

static void bad_reshape(void)
{
    fresh();
    float x[24] = {0};
    uint32_t in[2] = {cnst(IR_F32, 3, (int64_t[]){2, 3, 4}, x), i64s(2, (int64_t[]){5, -1})}, o;
    infer_node(G, node(IR_OP_RESHAPE, in, 2, 1, &o));
}

static void bad_unknown(void)
{
    fresh();
    uint32_t xv = ir_value_add(G, "x", IR_F32, -1, NULL), o;
    infer_node(G, node(IR_OP_RELU, &xv, 1, 1, &o));
}

static void bad_split(void)
{
    fresh();
    float x[5] = {0};
    uint32_t xv = cnst(IR_F32, 1, (int64_t[]){5}, x), o[4];
    uint32_t nd = node(IR_OP_SPLIT, &xv, 1, 4, o);
    ir_attr_set_int(G, nd, "num_outputs", 4);
    infer_node(G, nd);
}

static void bad_gather(void)
{
    fresh();
    float x[3] = {0};
    int64_t ix[1] = {3};
    uint32_t in[2] = {cnst(IR_F32, 1, (int64_t[]){3}, x), cnst(IR_I64, 1, (int64_t[]){1}, ix)}, o;
    uint32_t nd = node(IR_OP_GATHER, in, 2, 1, &o);
    infer_node(G, nd);
    ref_eval(G, nd);
}

int main(void)
{
    test_slice();
    test_expand_reshape();
    test_f16();
    test_nan();
    test_softmax();
    test_gemm();
    test_resize();
    test_group_norm();
    test_split();
    test_numerics();
    test_shapes();
    expect_fatal(bad_broadcast, "cannot broadcast [2,3]");
    expect_fatal(bad_group, "group=2 does not divide C_in=3");
    expect_fatal(bad_reshape, "cannot reshape");
    expect_fatal(bad_unknown, "dims of 'x' unknown: bind them with --shape x=...");
    expect_fatal(bad_split, "cannot split an axis of 5 into num_outputs=4");
    expect_fatal(bad_gather, "index 3 out of range [-3, 3)");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ref unit tests passed\n");
    return 0;
}
