/* fuse_gemm_epilogue.c — a linear and the elementwise ops after it become one o2c.Gemm whose
 * store applies bias, activation and residual (gemm_epilogue).
 *
 * Patterns (y = the linear's output; every intermediate single-use and not a graph output):
 *   Add(y, b[N])                          -> o2c.Gemm(x, W, b)
 *   Mul(y [+ b], s) / Div(y [+ b], s), s a constant scalar
 *                                         -> weights and bias scaled by s (1/s) at compile time
 *   act(y [+ b] [* s])                    -> o2c.Gemm{activation}: Relu (1), Mul(z, Sigmoid(z))
 *                                            = SiLU (2; z used by exactly the Sigmoid and the
 *                                            Mul), Gelu approximate=none (3) / tanh (4),
 *                                            Mul(z, Sigmoid(Mul(z, 1.702))) = quick GELU (7,
 *                                            CLIP; z used by exactly the two Muls)
 *   Add(act(y [+ b]), r), r of y's dims   -> o2c.Gemm(x, W, b, r) (residual, after activation)
 *   o2c.Gemm with several outputs (batched_linear): Add(y_s, b_s[N_s]) on any output s
 *                                         -> bias block s of the fused bias (no act/residual)
 * The linear is MatMul/Gemm with a constant weight (fuse_linear_match: Gemm alpha/beta/C/transB
 * folded at compile time) or an o2c.Gemm without activation/residual. A bias is a float32
 * constant with N elements whose dims are all 1 but the last (= N), so it broadcasts as [N].
 * Linears with none of these epilogues are also rewritten to o2c.Gemm when
 * PLAIN_LINEARS_TO_FGEMM is set (kernels/fgemm.cl is faster than matmul.cl on PoCL).
 * Matching collects all patterns on the unchanged graph (each node claimed once), then rewrites.
 * Assumes shape inference ran; float32 only. Guarantees: output value ids are kept.
 */
#include "passes/fuse/fuse.h"
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef PLAIN_LINEARS_TO_FGEMM
#define PLAIN_LINEARS_TO_FGEMM 1
#endif
#define EP_MAX_OUT 8  /* outputs of an o2c.Gemm (kernels/fgemm.cl) */
#define EP_MAX_NODES 16

/* Consumers of every value (CSR over live nodes, one entry per input slot). */
struct uses {
    uint32_t *start; /* [nvalues + 1] */
    uint32_t *node;  /* consumer node ids */
};

static void uses_build(struct ir_graph *g, struct uses *u)
{
    u->start = ir_alloc(g, sizeof(uint32_t) * (g->nvalues + 1));
    uint32_t total = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead) continue;
        for (uint32_t k = 0; k < g->nodes[i].ninputs; k++)
            if (g->nodes[i].inputs[k] != IR_NONE) u->start[g->nodes[i].inputs[k] + 1]++, total++;
    }
    for (uint32_t v = 0; v < g->nvalues; v++) u->start[v + 1] += u->start[v];
    u->node = ir_alloc(g, sizeof(uint32_t) * (total ? total : 1));
    uint32_t *fill = ir_alloc(g, sizeof(uint32_t) * (g->nvalues ? g->nvalues : 1));
    for (uint32_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead) continue;
        for (uint32_t k = 0; k < g->nodes[i].ninputs; k++) {
            uint32_t v = g->nodes[i].inputs[k];
            if (v != IR_NONE) u->node[u->start[v] + fill[v]++] = i;
        }
    }
}

/* The only consumer of v if v is used exactly once (and is not a graph output), else IR_NONE. */
static uint32_t sole_user(const struct ir_graph *g, const struct uses *u, uint32_t v)
{
    if (g->values[v].is_output || g->values[v].nuses != 1 || u->start[v + 1] - u->start[v] != 1)
        return IR_NONE;
    return u->node[u->start[v]];
}

/* If node a is Add(v, c) / Add(c, v) with c a float32 constant broadcasting as [N] onto v,
 * returns c, else IR_NONE. */
static uint32_t bias_of(const struct ir_graph *g, uint32_t a, uint32_t v, int64_t N)
{
    const struct ir_node *n = &g->nodes[a];
    if (n->op != IR_OP_ADD || n->ninputs != 2) return IR_NONE;
    uint32_t c = n->inputs[0] == v ? n->inputs[1] : (n->inputs[1] == v ? n->inputs[0] : IR_NONE);
    if (c == IR_NONE || c == v || !ir_is_const(g, c)) return IR_NONE;
    const struct ir_value *cv = &g->values[c], *vv = &g->values[v];
    if (cv->dtype != IR_F32 || cv->rank < 1 || cv->rank > vv->rank || ir_numel(g, c) != N ||
        cv->dims[cv->rank - 1] != N)
        return IR_NONE;
    return c;
}

/* One matched pattern. */
struct ep {
    uint32_t base;                 /* the linear / o2c.Gemm node */
    struct fuse_linear lin;        /* the linear (when base is MatMul/Gemm) */
    bool is_lin;                   /* base is MatMul/Gemm (else o2c.Gemm) */
    uint32_t old[EP_MAX_NODES];    /* nodes replaced, base first */
    int nold;
    uint32_t bias[EP_MAX_OUT];     /* Add bias per output (IR_NONE = none) */
    uint32_t out[EP_MAX_OUT];      /* final output value per output */
    int64_t width[EP_MAX_OUT];     /* N_s */
    uint32_t nout;
    double scale;                  /* Mul/Div by a constant scalar after the bias (1 = none) */
    int act;                       /* activation code */
    uint32_t res;                  /* residual or IR_NONE */
};

static bool claim(bool *claimed, const struct ep *e)
{
    for (int i = 0; i < e->nold; i++)
        if (claimed[e->old[i]]) return false;
    for (int i = 0; i < e->nold; i++) claimed[e->old[i]] = true;
    return true;
}

/* Single-output chain after value y (width N): bias, activation, residual. */
static void match_chain(const struct ir_graph *g, const struct uses *u, struct ep *e, uint32_t y,
                        int64_t N)
{
    uint32_t cur = y, nx;
    uint32_t c;
    /* bias */
    if ((nx = sole_user(g, u, cur)) != IR_NONE && (c = bias_of(g, nx, cur, N)) != IR_NONE) {
        e->bias[0] = c;
        e->old[e->nold++] = nx;
        cur = g->nodes[nx].outputs[0];
    }
    /* scale: (x W + b) * s = x (W s) + b s, folded into the constants */
    double sv;
    if ((nx = sole_user(g, u, cur)) != IR_NONE &&
        (g->nodes[nx].op == IR_OP_MUL || g->nodes[nx].op == IR_OP_DIV) &&
        g->nodes[nx].ninputs == 2) {
        const struct ir_node *a = &g->nodes[nx];
        uint32_t other = a->inputs[0] == cur ? a->inputs[1] : a->inputs[0];
        bool ok = other != cur && (a->op == IR_OP_MUL || a->inputs[0] == cur) &&
                  g->values[other].dtype == IR_F32 && ir_numel(g, other) == 1 &&
                  g->values[other].rank <= g->values[cur].rank &&
                  fuse_const_scalar(g, other, &sv) && sv != 0.0 && isfinite(sv);
        if (ok) {
            e->scale = a->op == IR_OP_MUL ? sv : 1.0 / sv;
            e->old[e->nold++] = nx;
            cur = a->outputs[0];
        }
    }
    /* activation */
    if ((nx = sole_user(g, u, cur)) != IR_NONE) {
        const struct ir_node *a = &g->nodes[nx];
        if (a->op == IR_OP_RELU) e->act = 1;
        if (a->op == IR_OP_GELU) {
            const char *ap = ir_attr_string(a, "approximate", "none");
            e->act = strcmp(ap, "none") == 0 ? 3 : (strcmp(ap, "tanh") == 0 ? 4 : 0);
        }
        if (e->act) {
            e->old[e->nold++] = nx;
            cur = a->outputs[0];
        }
    } else if (!g->values[cur].is_output && g->values[cur].nuses == 2 &&
               u->start[cur + 1] - u->start[cur] == 2) {
        uint32_t n0 = u->node[u->start[cur]], n1 = u->node[u->start[cur] + 1];
        uint32_t sig = g->nodes[n0].op == IR_OP_SIGMOID ? n0 : (g->nodes[n1].op == IR_OP_SIGMOID ? n1 : IR_NONE);
        uint32_t mul = sig == n0 ? n1 : n0;
        if (sig != IR_NONE && g->nodes[mul].op == IR_OP_MUL) {
            uint32_t s = g->nodes[sig].outputs[0];
            const struct ir_node *m = &g->nodes[mul];
            if (sole_user(g, u, s) == mul &&
                ((m->inputs[0] == cur && m->inputs[1] == s) || (m->inputs[0] == s && m->inputs[1] == cur))) {
                e->act = 2;
                e->old[e->nold++] = sig;
                e->old[e->nold++] = mul;
                cur = m->outputs[0];
            }
        } else if (g->nodes[n0].op == IR_OP_MUL && g->nodes[n1].op == IR_OP_MUL) {
            /* quick GELU (CLIP): Mul(z, Sigmoid(Mul(z, 1.702))) -> activation 7 */
            for (int k = 0; k < 2 && !e->act; k++) {
                uint32_t a = k ? n1 : n0, m = k ? n0 : n1;
                double c;
                uint32_t other = fuse_other_input(&g->nodes[a], cur);
                /* 1.702 to 1e-6, or rounded to float16 (a float16 export: 1.7021484375) */
                if (other == IR_NONE || !fuse_const_scalar(g, other, &c) || ir_numel(g, other) != 1 ||
                    (fabs(c - 1.702) > 1e-6 * 1.702 && c != (double)ref_f16_to_f32(ref_f32_to_f16(1.702f))))
                    continue;
                uint32_t sg = sole_user(g, u, g->nodes[a].outputs[0]);
                if (sg == IR_NONE || g->nodes[sg].op != IR_OP_SIGMOID) continue;
                uint32_t s = g->nodes[sg].outputs[0];
                if (sole_user(g, u, s) != m || fuse_other_input(&g->nodes[m], cur) != s) continue;
                e->act = 7;
                e->old[e->nold++] = a;
                e->old[e->nold++] = sg;
                e->old[e->nold++] = m;
                cur = g->nodes[m].outputs[0];
            }
        }
    }
    /* residual */
    if ((nx = sole_user(g, u, cur)) != IR_NONE && g->nodes[nx].op == IR_OP_ADD &&
        g->nodes[nx].ninputs == 2) {
        const struct ir_node *a = &g->nodes[nx];
        uint32_t r = a->inputs[0] == cur ? a->inputs[1] : a->inputs[0];
        const struct ir_value *rv = &g->values[r], *cv = &g->values[cur];
        bool same = r != cur && rv->dtype == IR_F32 && rv->rank == cv->rank && rv->dims_known;
        for (int k = 0; same && k < rv->rank; k++) same = rv->dims[k] == cv->dims[k];
        if (same) {
            e->res = r;
            e->old[e->nold++] = nx;
            cur = a->outputs[0];
        }
    }
    e->out[0] = cur;
}

/* Builds and inserts the o2c.Gemm of pattern e. */
static void rewrite(struct ir_graph *g, const struct ep *e)
{
    uint32_t x, w, oldbias = IR_NONE;
    int64_t K, N = 0;
    for (uint32_t s = 0; s < e->nout; s++) N += e->width[s];
    if (e->is_lin) {
        x = e->lin.x;
        K = e->lin.K;
        if (!e->lin.trans_w && e->lin.alpha == 1.0f && e->scale == 1.0) {
            w = e->lin.w;
        } else {
            float *wd = ir_alloc(g, sizeof(float) * (size_t)(K * N));
            fuse_linear_write_w(g, &e->lin, wd, N, 0);
            if (e->scale != 1.0)
                for (int64_t i = 0; i < K * N; i++) wd[i] = (float)(wd[i] * e->scale);
            const int64_t dims[2] = {K, N};
            w = ir_const_add(g, ir_sprintf(g, "%s/o2c_w", g->values[e->lin.y].name), IR_F32, 2,
                             dims, wd, sizeof(float) * (size_t)(K * N));
        }
    } else {
        const struct ir_node *b = &g->nodes[e->base];
        x = b->inputs[0];
        w = b->inputs[1];
        oldbias = ir_input(b, 2);
        K = g->values[w].dims[0];
        if (e->scale != 1.0) {
            float *wd = ir_alloc(g, sizeof(float) * (size_t)(K * N));
            void *owned;
            const float *ws = ir_const_bytes(g, w, &owned); /* o2c.Gemm weights: float32 */
            IR_ASSERT(g->values[w].dtype == IR_F32);
            for (int64_t i = 0; i < K * N; i++) wd[i] = (float)((double)ws[i] * e->scale);
            free(owned);
            const int64_t dims[2] = {K, N};
            w = ir_const_add(g, ir_sprintf(g, "%s/o2c_w", g->values[e->out[0]].name), IR_F32, 2,
                             dims, wd, sizeof(float) * (size_t)(K * N));
        }
    }
    (void)K;
    bool any = oldbias != IR_NONE || (e->is_lin && e->lin.c != IR_NONE);
    for (uint32_t s = 0; s < e->nout; s++) any |= e->bias[s] != IR_NONE;
    uint32_t bid = IR_NONE;
    if (any) {
        float *bd = ir_alloc(g, sizeof(float) * (size_t)N);
        if (oldbias != IR_NONE)
            for (int64_t j = 0; j < N; j++) bd[j] = (float)ir_const_f64(g, oldbias, j);
        if (e->is_lin) fuse_linear_add_bias(g, &e->lin, bd);
        int64_t off = 0;
        for (uint32_t s = 0; s < e->nout; s++) {
            if (e->bias[s] != IR_NONE)
                for (int64_t j = 0; j < e->width[s]; j++)
                    bd[off + j] += (float)ir_const_f64(g, e->bias[s], j);
            off += e->width[s];
        }
        if (e->scale != 1.0)
            for (int64_t j = 0; j < N; j++) bd[j] = (float)(bd[j] * e->scale);
        bid = ir_const_add(g, ir_sprintf(g, "%s/o2c_bias", g->values[e->out[0]].name), IR_F32, 1,
                           &N, bd, sizeof(float) * (size_t)N);
    }
    const uint32_t ins[4] = {x, w, bid, e->res};
    uint32_t nin = e->res != IR_NONE ? 4 : (bid != IR_NONE ? 3 : 2);
    uint32_t id = fuse_replace(g, IR_OP_FUSED_GEMM, e->old, e->nold, ins, nin, e->out, e->nout);
    ir_attr_set_int(g, id, "activation", e->act);
}

bool pass_fuse_gemm_epilogue(struct ir_graph *g)
{
    struct uses u;
    uses_build(g, &u);
    bool *claimed = ir_alloc(g, g->nnodes ? g->nnodes : 1);
    struct ep *eps = ir_alloc(g, sizeof(struct ep) * (g->nnodes ? g->nnodes : 1));
    uint32_t neps = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead || claimed[i]) continue;
        struct ep e;
        memset(&e, 0, sizeof e);
        e.base = i;
        e.res = IR_NONE;
        e.scale = 1.0;
        e.old[e.nold++] = i;
        for (int s = 0; s < EP_MAX_OUT; s++) e.bias[s] = IR_NONE;
        const char *why;
        if (fuse_linear_match(g, i, &e.lin, &why)) {
            e.is_lin = true;
            e.nout = 1;
            e.width[0] = e.lin.N;
            match_chain(g, &u, &e, e.lin.y, e.lin.N);
        } else if (n->op == IR_OP_FUSED_GEMM && ir_attr_int(n, "activation", 0) == 0 &&
                   ir_input(n, 3) == IR_NONE && n->noutputs <= EP_MAX_OUT) {
            e.nout = n->noutputs;
            for (uint32_t s = 0; s < n->noutputs; s++) {
                const struct ir_value *yv = &g->values[n->outputs[s]];
                e.width[s] = yv->dims[yv->rank - 1];
                e.out[s] = n->outputs[s];
            }
            if (n->noutputs == 1) {
                match_chain(g, &u, &e, n->outputs[0], e.width[0]);
            } else {
                for (uint32_t s = 0; s < n->noutputs; s++) {
                    uint32_t nx = sole_user(g, &u, n->outputs[s]), c;
                    if (nx != IR_NONE && (c = bias_of(g, nx, n->outputs[s], e.width[s])) != IR_NONE) {
                        e.bias[s] = c;
                        e.old[e.nold++] = nx;
                        e.out[s] = g->nodes[nx].outputs[0];
                    }
                }
            }
            if (e.nold == 1) continue; /* already an o2c.Gemm, nothing to absorb */
        } else {
            continue;
        }
        if (e.nold == 1 && !PLAIN_LINEARS_TO_FGEMM) continue;
        if (!claim(claimed, &e)) {
            fuse_note("gemm_epilogue", false, "nodes already claimed by another pattern");
            continue;
        }
        eps[neps++] = e;
    }
    for (uint32_t i = 0; i < neps; i++) {
        rewrite(g, &eps[i]);
        fuse_note("gemm_epilogue", true, NULL);
    }
    return neps > 0;
}
