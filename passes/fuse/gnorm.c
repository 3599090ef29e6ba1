/* fuse_gnorm.c — GroupNorm fusion: both export forms of GroupNorm (+ an optional SiLU) become
 * one o2c.GroupNorm node (one kernel, codegen/lower_gnorm.c + kernels/gnorm.cl).
 *
 * Forms recognized (x [N, C, ...] float32, G groups):
 *   (a) torch's TorchScript export: Reshape(x, [N, G, -1]) -> InstanceNormalization(scale all 1,
 *       bias all 0) -> Reshape(back to x's shape) -> [Mul(γ)] -> [Add(β)], γ/β broadcasting per
 *       channel (shape [C,1,..], [1,C,1,..] or a scalar; any operand order).
 *   (b) the GroupNormalization op (IR form: per-channel [C] scale/bias, or "_per_group"=1 with
 *       per-group [G] scale/bias, see ir/ir.h).
 * Then a following SiLU on the result y — Sigmoid(y) and Mul(y, Sigmoid(y)) with y read by
 * exactly those two nodes — is folded in as activation=1.
 * Output node: o2c.GroupNorm(x, gamma, beta) {num_groups, epsilon, activation (0 none, 1 silu),
 * per_group (1: gamma/beta have G elements, else C)}. Missing γ/β become constant ones/zeros [C].
 * Assumes: shape inference ran (every value has concrete dims). Matching never mutates; all
 * matches are collected first, then rewritten (they never share nodes).
 * Guarantees: the fused node computes exactly the replaced value (same value id); every pattern
 * seen is reported with fuse_note("gnorm", ...).
 */
#include "passes/fuse/fuse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PASS "gnorm"

/* True if p (a value) broadcasts against x [N, C, ...] per channel only: after right-aligning,
 * every dim is 1 except possibly the one over x's dim 1, which is C; and p has at most x's rank. */
static bool per_channel(const struct ir_graph *g, uint32_t p, const struct ir_value *x)
{
    const struct ir_value *pv = &g->values[p];
    if (pv->rank > x->rank || pv->dtype != IR_F32) return false;
    for (int k = 0; k < pv->rank; k++) {
        int xk = x->rank - pv->rank + k;
        if (pv->dims[k] != 1 && !(xk == 1 && pv->dims[k] == x->dims[1])) return false;
    }
    /* a broadcast scalar is expanded to [C] at rewrite time: it must be a constant */
    return ir_numel(g, p) == x->dims[1] || ir_is_const(g, p);
}

/* True if constant v has every element equal to `want`. */
static bool const_all(const struct ir_graph *g, uint32_t v, double want)
{
    double c;
    return fuse_const_scalar(g, v, &c) && c == want;
}

/* One match, collected before any rewrite. */
struct gn_match {
    uint32_t old[8];   /* nodes replaced, in chain order */
    int nold;          /* entries of old */
    uint32_t x;        /* input value */
    uint32_t gamma;    /* γ value (IR_NONE: make ones) */
    uint32_t beta;     /* β value (IR_NONE: make zeros) */
    uint32_t out;      /* value the fused node computes */
    int64_t groups;    /* G */
    float eps;         /* epsilon */
    int per_group;     /* γ/β per group ([G]) instead of per channel */
    int act;           /* 0 none, 1 silu */
};

/* Extends m with a following SiLU: y = m->out; Sigmoid(y) -> s; Mul(y, s) (either order), y
 * read by exactly those two nodes and not a graph output, s read only by the Mul. */
static void match_silu(const struct ir_graph *g, struct gn_match *m)
{
    uint32_t y = m->out;
    const struct ir_value *yv = &g->values[y];
    if (yv->is_output || yv->nuses != 2) return;
    uint32_t u[2];
    if (fuse_users(g, y, u, 2) != 2) return;
    uint32_t sig = IR_NONE, mul = IR_NONE;
    for (int k = 0; k < 2; k++) {
        if (g->nodes[u[k]].op == IR_OP_SIGMOID) sig = u[k];
        else if (g->nodes[u[k]].op == IR_OP_MUL) mul = u[k];
    }
    if (sig == IR_NONE || mul == IR_NONE) return;
    uint32_t s = g->nodes[sig].outputs[0];
    if (fuse_other_input(&g->nodes[mul], y) != s) return;
    const char *why;
    if (!fuse_chain_ok(g, &s, 1, &why)) {
        fuse_note(PASS, false, "SiLU after GroupNorm: its Sigmoid output has other uses");
        return;
    }
    m->old[m->nold++] = sig;
    m->old[m->nold++] = mul;
    m->out = g->nodes[mul].outputs[0];
    m->act = 1;
}

/* Form (a), anchored at an InstanceNormalization node. Returns true and fills m on a match;
 * notes the rejection reason otherwise (patterns that do not start like GroupNorm are silent). */
static bool match_instnorm(const struct ir_graph *g, uint32_t in_node, struct gn_match *m)
{
    const struct ir_node *in = &g->nodes[in_node];
    uint32_t r1 = fuse_producer(g, in->inputs[0], IR_OP_RESHAPE);
    if (r1 == IR_NONE) return false;
    uint32_t x = g->nodes[r1].inputs[0];
    const struct ir_value *xv = &g->values[x], *rv = &g->values[in->inputs[0]];
    if (!xv->dims_known || xv->rank < 2 || rv->rank != 3 || rv->dims[0] != xv->dims[0])
        return false;
    int64_t G = rv->dims[1], C = xv->dims[1];
    if (G <= 0 || C % G != 0) return false;
    uint32_t r2 = fuse_sole_user(g, in->outputs[0]);
    if (r2 == IR_NONE || g->nodes[r2].op != IR_OP_RESHAPE ||
        !fuse_same_shape(&g->values[g->nodes[r2].outputs[0]], xv)) {
        fuse_note(PASS, false, "InstanceNormalization not reshaped back to the input shape");
        return false;
    }
    if (xv->dtype != IR_F32) {
        fuse_note(PASS, false, "not float32");
        return false;
    }
    if (!const_all(g, in->inputs[1], 1.0) || !const_all(g, in->inputs[2], 0.0)) {
        fuse_note(PASS, false, "InstanceNormalization scale/bias not constant ones/zeros");
        return false;
    }
    memset(m, 0, sizeof *m);
    m->old[m->nold++] = r1;
    m->old[m->nold++] = in_node;
    m->old[m->nold++] = r2;
    m->x = x;
    m->gamma = m->beta = IR_NONE;
    m->groups = G;
    m->eps = ir_attr_float(in, "epsilon", 1e-5f);
    m->out = g->nodes[r2].outputs[0];
    uint32_t inner[4] = {g->nodes[r1].outputs[0], in->outputs[0]};
    int ninner = 2;
    /* optional * γ */
    uint32_t u = fuse_sole_user(g, m->out);
    if (u != IR_NONE && g->nodes[u].op == IR_OP_MUL) {
        uint32_t p = fuse_other_input(&g->nodes[u], m->out);
        if (p != IR_NONE && per_channel(g, p, xv) &&
            fuse_same_shape(&g->values[g->nodes[u].outputs[0]], xv)) {
            inner[ninner++] = m->out;
            m->old[m->nold++] = u;
            m->gamma = p;
            m->out = g->nodes[u].outputs[0];
            u = fuse_sole_user(g, m->out);
        }
    }
    /* optional + β */
    if (u != IR_NONE && g->nodes[u].op == IR_OP_ADD) {
        uint32_t p = fuse_other_input(&g->nodes[u], m->out);
        if (p != IR_NONE && per_channel(g, p, xv) &&
            fuse_same_shape(&g->values[g->nodes[u].outputs[0]], xv)) {
            inner[ninner++] = m->out;
            m->old[m->nold++] = u;
            m->beta = p;
            m->out = g->nodes[u].outputs[0];
        }
    }
    const char *why;
    if (!fuse_chain_ok(g, inner, ninner, &why)) {
        fuse_note(PASS, false, why);
        return false;
    }
    return true;
}

/* Form (b): a GroupNormalization node. */
static bool match_groupnorm(const struct ir_graph *g, uint32_t node, struct gn_match *m)
{
    const struct ir_node *n = &g->nodes[node];
    const struct ir_value *xv = &g->values[n->inputs[0]];
    if (xv->dtype != IR_F32) {
        fuse_note(PASS, false, "not float32");
        return false;
    }
    if (xv->rank < 2) {
        fuse_note(PASS, false, "GroupNormalization input of rank < 2");
        return false;
    }
    int64_t G = ir_attr_int(n, "num_groups", 0), C = xv->dims[1];
    if (G <= 0 || C % G != 0) {
        fuse_note(PASS, false, "GroupNormalization num_groups does not divide C");
        return false;
    }
    memset(m, 0, sizeof *m);
    m->old[m->nold++] = node;
    m->x = n->inputs[0];
    m->gamma = n->inputs[1];
    m->beta = n->inputs[2];
    m->per_group = ir_attr_int(n, "_per_group", 0) != 0;
    int64_t want = m->per_group ? G : C;
    if (ir_numel(g, m->gamma) != want || ir_numel(g, m->beta) != want) {
        fuse_note(PASS, false, "GroupNormalization scale/bias of unexpected size");
        return false;
    }
    m->groups = G;
    m->eps = ir_attr_float(n, "epsilon", 1e-5f);
    m->out = n->outputs[0];
    for (uint32_t k = 1; k < n->noutputs; k++)
        if (n->outputs[k] != IR_NONE && g->values[n->outputs[k]].nuses) return false;
    return true;
}

/* A constant float32 vector [C] filled with v. */
static uint32_t const_fill(struct ir_graph *g, const char *name, int64_t C, float v)
{
    float *d = ir_alloc(g, sizeof(float) * (size_t)C);
    for (int64_t i = 0; i < C; i++) d[i] = v;
    return ir_const_add(g, name, IR_F32, 1, &C, d, sizeof(float) * (size_t)C);
}

static void rewrite(struct ir_graph *g, const struct gn_match *m)
{
    int64_t C = g->values[m->x].dims[1];
    const char *base = g->nodes[m->old[m->nold - 1]].name;
    uint32_t gamma = m->gamma, beta = m->beta;
    /* absent -> ones / zeros; a broadcast constant scalar (numel 1, C > 1) -> filled [C] */
    if (gamma == IR_NONE) gamma = const_fill(g, ir_sprintf(g, "%s/o2c_gn_gamma", base), C, 1.0f);
    else if (!m->per_group && ir_numel(g, gamma) != C)
        gamma = const_fill(g, ir_sprintf(g, "%s/o2c_gn_gamma", base), C,
                           (float)ir_const_f64(g, gamma, 0));
    if (beta == IR_NONE) beta = const_fill(g, ir_sprintf(g, "%s/o2c_gn_beta", base), C, 0.0f);
    else if (!m->per_group && ir_numel(g, beta) != C)
        beta = const_fill(g, ir_sprintf(g, "%s/o2c_gn_beta", base), C,
                          (float)ir_const_f64(g, beta, 0));
    uint32_t in[3] = {m->x, gamma, beta};
    uint32_t id = fuse_replace(g, IR_OP_FUSED_GROUP_NORM, m->old, m->nold, in, 3, &m->out, 1);
    ir_attr_set_int(g, id, "num_groups", m->groups);
    ir_attr_set_float(g, id, "epsilon", m->eps);
    ir_attr_set_int(g, id, "activation", m->act);
    ir_attr_set_int(g, id, "per_group", m->per_group);
    fuse_note(PASS, true, NULL);
}

bool pass_fuse_gnorm(struct ir_graph *g)
{
    uint32_t nn = g->nnodes, cap = 16, nm = 0;
    struct gn_match *ms = malloc(sizeof *ms * cap);
    if (!ms) ir_die("out of memory");
    for (uint32_t i = 0; i < nn; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        struct gn_match m;
        bool ok = false;
        if (n->op == IR_OP_INSTANCE_NORMALIZATION) ok = match_instnorm(g, i, &m);
        else if (n->op == IR_OP_GROUP_NORMALIZATION) ok = match_groupnorm(g, i, &m);
        if (!ok) continue;
        match_silu(g, &m);
        if (nm == cap) {
            cap *= 2;
            ms = realloc(ms, sizeof *ms * cap);
            if (!ms) ir_die("out of memory");
        }
        ms[nm++] = m;
    }
    for (uint32_t k = 0; k < nm; k++) rewrite(g, &ms[k]);
    free(ms);
    return nm > 0;
}
