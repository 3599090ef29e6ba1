/* harness.c — single-node kernel tests: reference (ref/) vs OpenCL (codegen + runtime).
 * See harness.h. The OpenCL context is created once per process and reused. */
#include "harness.h"

#include "codegen/codegen.h"
#include "onnx2cl_rt.h"
#include "passes/passes.h"
#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KT_MAX_IN 16
#define KT_MAX_ATTR 16

struct kt_in {
    bool present;
    enum ir_dtype dtype;
    int rank;
    int64_t dims[IR_MAX_RANK];
    void *data;
    size_t nbytes;
    bool constant;
};

struct kt_attr {
    const char *name;
    int type; /* 0 int, 1 float, 2 ints, 3 string */
    int64_t i;
    float f;
    int64_t *ints;
    size_t n;
    const char *s;
};

struct kt_case {
    const char *op_type;
    int64_t opset;
    struct kt_in in[KT_MAX_IN];
    int nin;
    struct kt_attr attr[KT_MAX_ATTR];
    int nattr;
    int nout;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

struct kt_case *kt_new(const char *op_type, int64_t opset)
{
    struct kt_case *c = calloc(1, sizeof *c);
    c->op_type = op_type;
    c->opset = opset;
    c->nout = 1;
    return c;
}

void kt_input(struct kt_case *c, enum ir_dtype dtype, int rank, const int64_t *dims,
              const void *data, bool constant)
{
    IR_ASSERT(c->nin < KT_MAX_IN);
    struct kt_in *in = &c->in[c->nin++];
    in->present = true;
    in->dtype = dtype;
    in->rank = rank;
    int64_t n = 1;
    for (int k = 0; k < rank; k++) {
        in->dims[k] = dims[k];
        n *= dims[k];
    }
    size_t es = ir_dtype_size(dtype);
    in->nbytes = (size_t)n * es;
    in->data = malloc(in->nbytes ? in->nbytes : 1);
    in->constant = constant;
    if (data) {
        memcpy(in->data, data, in->nbytes);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double r = (rng() / 4294967296.0) * 2.0 - 1.0; /* [-1, 1) */
        int64_t iv = rng() % 4;
        char *p = (char *)in->data + (size_t)i * es;
        switch (dtype) {
        case IR_F32: { float f = (float)r; memcpy(p, &f, 4); break; }
        case IR_F64: memcpy(p, &r, 8); break;
        case IR_I64: memcpy(p, &iv, 8); break;
        case IR_I32: { int32_t x = (int32_t)iv; memcpy(p, &x, 4); break; }
        case IR_BOOL: *p = (char)(iv & 1); break;
        default: memset(p, (int)iv, es); break;
        }
    }
}

void kt_input_absent(struct kt_case *c)
{
    IR_ASSERT(c->nin < KT_MAX_IN);
    c->in[c->nin++].present = false;
}

static struct kt_attr *new_attr(struct kt_case *c, const char *name, int type)
{
    IR_ASSERT(c->nattr < KT_MAX_ATTR);
    struct kt_attr *a = &c->attr[c->nattr++];
    a->name = name;
    a->type = type;
    return a;
}

void kt_attr_int(struct kt_case *c, const char *name, int64_t v) { new_attr(c, name, 0)->i = v; }
void kt_attr_float(struct kt_case *c, const char *name, float v) { new_attr(c, name, 1)->f = v; }
void kt_attr_string(struct kt_case *c, const char *name, const char *s) { new_attr(c, name, 3)->s = s; }
void kt_attr_ints(struct kt_case *c, const char *name, const int64_t *v, size_t n)
{
    struct kt_attr *a = new_attr(c, name, 2);
    a->ints = malloc(sizeof(int64_t) * (n ? n : 1));
    if (n) memcpy(a->ints, v, sizeof(int64_t) * n);
    a->n = n;
}
void kt_outputs(struct kt_case *c, int n) { c->nout = n; }

/* Builds the one-node graph; all_const makes every input an initializer. */
static struct ir_graph *build(const struct kt_case *c, bool all_const)
{
    struct ir_graph *g = ir_graph_new(c->op_type);
    g->opset = c->opset;
    uint32_t ins[KT_MAX_IN], outs[8];
    g->inputs = ir_alloc(g, sizeof(uint32_t) * KT_MAX_IN);
    for (int i = 0; i < c->nin; i++) {
        const struct kt_in *in = &c->in[i];
        if (!in->present) {
            ins[i] = IR_NONE;
            continue;
        }
        char name[32];
        snprintf(name, sizeof name, "in%d", i);
        if (all_const || in->constant) {
            void *d = ir_alloc(g, in->nbytes);
            memcpy(d, in->data, in->nbytes);
            ins[i] = ir_const_add(g, name, in->dtype, in->rank, in->dims, d, in->nbytes);
        } else {
            ins[i] = ir_value_add(g, name, in->dtype, in->rank, in->dims);
            g->values[ins[i]].is_input = true;
            g->inputs[g->ninputs++] = ins[i];
        }
    }
    g->outputs = ir_alloc(g, sizeof(uint32_t) * 8);
    for (int k = 0; k < c->nout; k++) {
        char name[32];
        snprintf(name, sizeof name, "out%d", k);
        outs[k] = ir_value_add(g, name, IR_UNDEFINED, -1, NULL);
    }
    enum ir_op op = ir_op_lookup(c->op_type);
    IR_ASSERT(op != IR_OP_UNKNOWN);
    uint32_t n = ir_node_add(g, op, "node", c->op_type, ins, (uint32_t)c->nin, outs, (uint32_t)c->nout);
    g->nodes[n].onnx_index = 0;
    for (int a = 0; a < c->nattr; a++) {
        const struct kt_attr *at = &c->attr[a];
        switch (at->type) {
        case 0: ir_attr_set_int(g, n, at->name, at->i); break;
        case 1: ir_attr_set_float(g, n, at->name, at->f); break;
        case 2: ir_attr_set_ints(g, n, at->name, at->ints, at->n); break;
        case 3: ir_attr_set_string(g, n, at->name, at->s); break;
        }
    }
    for (int k = 0; k < c->nout; k++) {
        g->outputs[g->noutputs++] = outs[k];
        g->values[outs[k]].is_output = true;
        g->values[outs[k]].nuses++;
    }
    return g;
}

static struct o2r_ctx *shared_ctx;

static double elem(const void *p, enum ir_dtype t, int64_t i)
{
    switch (t) {
    case IR_F32: return ((const float *)p)[i];
    case IR_F64: return ((const double *)p)[i];
    case IR_I64: return (double)((const int64_t *)p)[i];
    case IR_I32: return ((const int32_t *)p)[i];
    case IR_I16: return ((const int16_t *)p)[i];
    case IR_U16: return ((const uint16_t *)p)[i];
    case IR_I8: return ((const int8_t *)p)[i];
    case IR_U8: case IR_BOOL: return ((const uint8_t *)p)[i];
    case IR_U32: return ((const uint32_t *)p)[i];
    case IR_U64: return (double)((const uint64_t *)p)[i];
    case IR_F16: return ref_f16_to_f32(((const uint16_t *)p)[i]);
    case IR_BF16: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    default: return NAN;
    }
}

int kt_run(struct kt_case *c, const char *label, double atol, double rtol)
{
    int fail = 0;
    /* expected */
    struct ir_graph *ge = build(c, true);
    struct pass_options po = {0};
    po.verify = true;
    passes_run(ge, &po);
    /* actual */
    struct ir_graph *ga = build(c, false);
    passes_run(ga, &po);
    struct cg_options co = {.name = "kt", .with_main = false};
    struct cg_ctx *m = cg_build(ga, &co);
    const struct o2r_model_desc *d = cg_desc(m);
    char wpath[] = "/tmp/o2c_kt_XXXXXX";
    int fd = mkstemp(wpath);
    IR_ASSERT(fd >= 0);
    close(fd);
    cg_write_weights(m, wpath);
    if (!shared_ctx && o2r_ctx_create(NULL, &shared_ctx) != O2R_OK) {
        fprintf(stderr, "%s: cannot create an OpenCL context\n", label);
        return 1;
    }
    struct o2r_model *rm = NULL;
    if (o2r_model_init(shared_ctx, d, wpath, &rm) != O2R_OK) {
        fprintf(stderr, "FAIL %s: init: %s\n", label, o2r_ctx_last_error(shared_ctx));
        unlink(wpath);
        return 1;
    }
    unlink(wpath);
    const void *inp[KT_MAX_IN];
    int k = 0;
    for (int i = 0; i < c->nin; i++)
        if (c->in[i].present && !c->in[i].constant) inp[k++] = c->in[i].data;
    void *outp[8];
    for (uint32_t o = 0; o < d->n_outputs; o++) outp[o] = calloc(1, d->outputs[o].nbytes + 1);
    if (o2r_model_run(rm, inp, outp) != O2R_OK) {
        fprintf(stderr, "FAIL %s: run: %s\n", label, o2r_ctx_last_error(shared_ctx));
        fail = 1;
    }
    for (uint32_t o = 0; o < d->n_outputs && !fail; o++) {
        uint32_t ev = ge->outputs[o];
        const struct ir_value *e = &ge->values[ev];
        if (!e->data) {
            fprintf(stderr, "FAIL %s: no reference value for output %u (ref_eval missing?)\n", label, o);
            fail = 1;
            break;
        }
        if (e->nbytes != d->outputs[o].nbytes || e->rank != d->outputs[o].rank) {
            fprintf(stderr, "FAIL %s: output %u: size/rank differ (ref %zu bytes rank %d, ocl %llu bytes rank %d)\n",
                    label, o, e->nbytes, e->rank, (unsigned long long)d->outputs[o].nbytes,
                    d->outputs[o].rank);
            fail = 1;
            break;
        }
        int64_t n = ir_numel(ge, ev);
        double maxabs = 0, maxrel = 0;
        int64_t bad = -1;
        bool is_float = e->dtype == IR_F32 || e->dtype == IR_F64 || e->dtype == IR_F16 ||
                        e->dtype == IR_BF16;
        for (int64_t i = 0; i < n; i++) {
            double x = elem(outp[o], e->dtype, i), y = elem(e->data, e->dtype, i);
            bool ok;
            if (is_float) {
                if (isnan(y) || isnan(x)) ok = isnan(x) && isnan(y);
                else if (isinf(y) || isinf(x)) ok = x == y;
                else {
                    double ad = fabs(x - y);
                    ok = ad <= atol + rtol * fabs(y);
                    if (ad > maxabs) maxabs = ad;
                    if (fabs(y) > 1e-6 && ad / fabs(y) > maxrel) maxrel = ad / fabs(y);
                }
            } else {
                ok = x == y;
            }
            if (!ok && bad < 0) bad = i;
        }
        if (bad >= 0) {
            fprintf(stderr, "FAIL %s: output %u element %lld: got %.9g, expected %.9g (max abs err %.3g, max rel %.3g; atol %g rtol %g)\n",
                    label, o, (long long)bad, elem(outp[o], e->dtype, bad), elem(e->data, e->dtype, bad),
                    maxabs, maxrel, atol, rtol);
            fail = 1;
        } else {
            printf("ok   %s: output %u, %lld elements, max abs err %.3g, max rel err %.3g (atol %g, rtol %g)\n",
                   label, o, (long long)n, maxabs, maxrel, atol, rtol);
        }
    }
    for (uint32_t o = 0; o < d->n_outputs; o++) free(outp[o]);
    o2r_model_free(rm);
    cg_free(m);
    ir_graph_free(ge);
    ir_graph_free(ga);
    for (int i = 0; i < c->nin; i++) free(c->in[i].data);
    for (int a = 0; a < c->nattr; a++) free(c->attr[a].ints);
    free(c);
    return fail;
}
