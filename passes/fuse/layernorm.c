/* fuse_layernorm.c — decomposed LayerNorm -> the LayerNormalization op (one kernel launch:
 * norm_rows in kernels/norm.cl, two-pass fp32 statistics).
 *
 * Pattern (float32; x of rank r, axes = the trailing axes a..r-1 given as a constant input,
 * keepdims=1, the same axes in both ReduceMeans):
 *   m  = ReduceMean(x, axes)      d = Sub(x, m)        q = Pow(d, 2) | Mul(d, d)
 *   v  = ReduceMean(q, axes)      e = Add(v, eps)      s = Sqrt(e)      n = Div(d, s)
 *   [Mul(n, γ)] [Add(., β)]       (Mul/Add operands in either order)
 * Result: LayerNormalization(x, γ, [β]) {axis=a, epsilon=eps}; γ absent -> constant ones of the
 * normalized dims (or of β's shape). γ and β must broadcast as a trailing suffix of x's
 * normalized dims (what lower_norm supports); a constant scalar γ/β next to a vector one is
 * expanded.
 * Assumes: shape inference ran. Matching never mutates; matches are collected, then rewritten.
 */
#include "passes/fuse/fuse.h"

#include <stdlib.h>
#include <string.h>

#define PASS "layernorm"

/* One match. */
struct ln_match {
    uint32_t old[12];  /* nodes replaced */
    int nold;          /* entries of old */
    uint32_t x;        /* input */
    uint32_t gamma;    /* scale or IR_NONE */
    uint32_t beta;     /* bias or IR_NONE */
    uint32_t out;      /* value computed */
    int axis;          /* first normalized axis */
    float eps;         /* epsilon */
};

static bool match(const struct ir_graph *g, uint32_t r1, struct ln_match *m)
{
    const struct ir_node *rn = &g->nodes[r1];
    uint32_t x = rn->inputs[0], mv = rn->outputs[0];
    const struct ir_value *xv = &g->values[x];
    uint32_t sub = fuse_sole_user(g, mv);
    if (sub == IR_NONE || g->nodes[sub].op != IR_OP_SUB || g->nodes[sub].inputs[0] != x ||
        g->nodes[sub].inputs[1] != mv)
        return false;
    int axis = fuse_norm_axis(g, PASS, rn, x);
    if (axis < 0) return false;
    uint32_t d = g->nodes[sub].outputs[0];
    if (g->values[d].is_output || !fuse_same_shape(&g->values[d], xv)) return false;
    uint32_t u[3];
    int nu = fuse_users(g, d, u, 3);
    if (nu != 2) return false;
    uint32_t sq = IR_NONE, dv = IR_NONE;
    for (int k = 0; k < 2; k++) {
        const struct ir_node *un = &g->nodes[u[k]];
        double c;
        if (un->op == IR_OP_DIV && un->inputs[0] == d) dv = u[k];
        else if (un->op == IR_OP_POW && un->inputs[0] == d && fuse_const_scalar(g, un->inputs[1], &c) && c == 2.0)
            sq = u[k];
        else if (un->op == IR_OP_MUL && un->inputs[0] == d && un->inputs[1] == d)
            sq = u[k];
    }
    if (sq == IR_NONE || dv == IR_NONE) return false;
    /* d: read by the square (1 or 2 slots) and the Div only */
    if (g->values[d].nuses != (g->nodes[sq].op == IR_OP_MUL ? 3u : 2u)) return false;
    uint32_t r2 = fuse_sole_user(g, g->nodes[sq].outputs[0]);
    if (r2 == IR_NONE || g->nodes[r2].op != IR_OP_REDUCE_MEAN || fuse_trailing_axes(g, &g->nodes[r2]) != axis)
        return false;
    uint32_t add = fuse_sole_user(g, g->nodes[r2].outputs[0]);
    if (add == IR_NONE || g->nodes[add].op != IR_OP_ADD) return false;
    double eps;
    uint32_t ep = fuse_other_input(&g->nodes[add], g->nodes[r2].outputs[0]);
    if (ep == IR_NONE || !fuse_const_scalar(g, ep, &eps)) return false;
    uint32_t sqrt_n = fuse_sole_user(g, g->nodes[add].outputs[0]);
    if (sqrt_n == IR_NONE || g->nodes[sqrt_n].op != IR_OP_SQRT) return false;
    uint32_t s = g->nodes[sqrt_n].outputs[0];
    if (fuse_sole_user(g, s) != dv || g->nodes[dv].inputs[1] != s) return false;
    memset(m, 0, sizeof *m);
    uint32_t chain[] = {r1, sub, sq, r2, add, sqrt_n, dv};
    for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++) m->old[m->nold++] = chain[k];
    m->x = x;
    m->axis = axis;
    m->eps = (float)eps;
    m->gamma = m->beta = IR_NONE;
    m->out = g->nodes[dv].outputs[0];
    /* optional * γ, + β (outputs keep x's shape; parameters broadcast as a suffix) */
    uint32_t un = fuse_sole_user(g, m->out);
    uint32_t p = fuse_norm_param(g, un, IR_OP_MUL, m->out, xv, axis);
    if (p != IR_NONE) {
        m->old[m->nold++] = un;
        m->gamma = p;
        m->out = g->nodes[un].outputs[0];
        un = fuse_sole_user(g, m->out);
    }
    p = fuse_norm_param(g, un, IR_OP_ADD, m->out, xv, axis);
    if (p != IR_NONE) {
        m->old[m->nold++] = un;
        m->beta = p;
        m->out = g->nodes[un].outputs[0];
    }
    /* lower_norm needs γ and β of the same element count: expand a constant scalar one */
    if (m->gamma != IR_NONE && m->beta != IR_NONE &&
        ir_numel(g, m->gamma) != ir_numel(g, m->beta)) {
        bool gs = ir_numel(g, m->gamma) == 1 && ir_is_const(g, m->gamma);
        bool bs = ir_numel(g, m->beta) == 1 && ir_is_const(g, m->beta);
        if (!gs && !bs) {
            fuse_note(PASS, false, "scale and bias of different shapes");
            return false;
        }
    }
    return true;
}

static void rewrite(struct ir_graph *g, const struct ln_match *m)
{
    const char *base = g->nodes[m->old[m->nold - 1]].name;
    uint32_t gamma = m->gamma, beta = m->beta;
    const struct ir_value *xv = &g->values[m->x];
    int64_t ndims[IR_MAX_RANK];
    int nr = xv->rank - m->axis;
    memcpy(ndims, xv->dims + m->axis, sizeof(int64_t) * (size_t)nr);
    if (gamma == IR_NONE) {
        if (beta != IR_NONE) {
            int64_t bd[IR_MAX_RANK];
            int br = g->values[beta].rank;
            memcpy(bd, g->values[beta].dims, sizeof(int64_t) * (size_t)br);
            gamma = fuse_const_fill(g, ir_sprintf(g, "%s/o2c_ln_scale", base), br, bd, 1.0f);
        } else {
            gamma = fuse_const_fill(g, ir_sprintf(g, "%s/o2c_ln_scale", base), nr, ndims, 1.0f);
        }
    } else if (beta != IR_NONE && ir_numel(g, gamma) != ir_numel(g, beta)) {
        /* one of them is a constant scalar: expand it to the other's shape */
        bool gs = ir_numel(g, gamma) == 1;
        uint32_t big = gs ? beta : gamma, small = gs ? gamma : beta;
        int64_t bd[IR_MAX_RANK];
        int br = g->values[big].rank;
        memcpy(bd, g->values[big].dims, sizeof(int64_t) * (size_t)br);
        uint32_t e = fuse_const_fill(g, ir_sprintf(g, "%s/o2c_ln_%s", base, gs ? "scale" : "bias"), br,
                                bd, (float)ir_const_f64(g, small, 0));
        if (gs) gamma = e;
        else beta = e;
    }
    uint32_t in[3] = {m->x, gamma, beta};
    uint32_t id = fuse_replace(g, IR_OP_LAYER_NORMALIZATION, m->old, m->nold, in,
                               beta != IR_NONE ? 3 : 2, &m->out, 1);
    ir_attr_set_int(g, id, "axis", m->axis);
    ir_attr_set_float(g, id, "epsilon", m->eps);
    fuse_note(PASS, true, NULL);
}

bool pass_fuse_layernorm(struct ir_graph *g)
{
    uint32_t nn = g->nnodes, cap = 16, nm = 0;
    struct ln_match *ms = malloc(sizeof *ms * cap);
    if (!ms) ir_die("out of memory");
    for (uint32_t i = 0; i < nn; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead || n->op != IR_OP_REDUCE_MEAN) continue;
        struct ln_match m;
        if (!match(g, i, &m)) continue;
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
