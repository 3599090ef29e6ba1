/* rmsnorm.c — decomposed RMSNorm -> o2c.RMSNorm (one kernel launch: the norm_rows kernels of
 * kernels/norm.cl without the mean subtraction, codegen/lower_norm.c).
 *
 * Patterns (x float32 of rank r; one ReduceMean over the trailing axes a..r-1, axes a constant
 * input, keepdims=1):
 *   q = Pow(x, 2) | Mul(x, x)      ms = ReduceMean(q, axes)     e = Add(ms, eps)    s = Sqrt(e)
 *   n = Div(x, s)                                        (Div form)
 *     | Mul(x, Div(1, s)) | Mul(x, Reciprocal(s))        (reciprocal forms; Mul in either order)
 *   then optionally [Cast(n, float32)] [Mul(n, γ)] [Cast(., float32)] (γ in either order)
 * Exports that make them: T5 and diffusers' RMSNorm by TorchScript (rsqrt as Div(1, Sqrt), x an
 * upcast Cast(h, float32)), the dynamo exporter (Reciprocal(Sqrt)), the expansion of
 * RMSNormalization-23 (passes/expand/norm.c: Mul(x, x), Reciprocal, Mul by scale).
 * A float32 -> float32 Cast making x is absorbed when only the pattern reads it; x itself may
 * have other readers (it stays materialized).
 * Result: o2c.RMSNorm(x, γ) {axis=a, epsilon=eps}; γ absent -> constant ones of the normalized
 * dims. γ must broadcast as a trailing suffix of x's normalized dims (fuse_suffix_param).
 * Runs after layernorm: a LayerNorm's tail ReduceMean(Pow(d, 2)) .. Div(d, s) with d = x - mean
 * has this shape too and must become a LayerNormalization, not an RMSNorm of d.
 * Assumes: shape inference ran. Matching never mutates; a match is rewritten before the next
 * ReduceMean is looked at.
 */
#include "passes/fuse/fuse.h"

#include <string.h>

#define PASS "rmsnorm"

/* One match. */
struct rms_match {
    uint32_t old[12]; /* nodes replaced, in data-flow order */
    int nold;         /* entries of old */
    uint32_t x;       /* input */
    uint32_t gamma;   /* scale or IR_NONE */
    uint32_t out;     /* value computed */
    int axis;         /* first normalized axis */
    float eps;        /* epsilon */
};

/* Node id of the float32 -> float32 Cast reading v as its only reader, else IR_NONE. */
static uint32_t noop_cast_user(const struct ir_graph *g, uint32_t v)
{
    uint32_t c = fuse_sole_user(g, v);
    if (c == IR_NONE || g->nodes[c].op != IR_OP_CAST) return IR_NONE;
    if (g->values[g->nodes[c].outputs[0]].dtype != IR_F32) return IR_NONE;
    return c;
}

/* The value s (= sqrt(mean(x²) + eps)) divides x: returns the node computing x / s (Div(x, s),
 * or the Mul of x by Div(1, s) / Reciprocal(s), whose reciprocal node goes to *rec); IR_NONE
 * if none of the forms. */
static uint32_t divides_x(const struct ir_graph *g, uint32_t s, uint32_t x, uint32_t *rec)
{
    *rec = IR_NONE;
    uint32_t u = fuse_sole_user(g, s);
    if (u == IR_NONE) return IR_NONE;
    const struct ir_node *un = &g->nodes[u];
    double one;
    if (un->op == IR_OP_DIV && un->inputs[1] == s && un->inputs[0] == x) return u;
    bool recip = un->op == IR_OP_RECIPROCAL ||
                 (un->op == IR_OP_DIV && un->inputs[1] == s &&
                  fuse_const_scalar(g, un->inputs[0], &one) && one == 1.0);
    if (!recip) return IR_NONE;
    uint32_t mul = fuse_sole_user(g, un->outputs[0]);
    if (mul == IR_NONE || g->nodes[mul].op != IR_OP_MUL ||
        fuse_other_input(&g->nodes[mul], un->outputs[0]) != x)
        return IR_NONE;
    *rec = u;
    return mul;
}

static bool match(const struct ir_graph *g, uint32_t r, struct rms_match *m)
{
    const struct ir_node *rn = &g->nodes[r];
    uint32_t q = rn->inputs[0];
    uint32_t sq = fuse_producer(g, q, IR_OP_UNKNOWN);
    if (sq == IR_NONE || fuse_sole_user(g, q) != r) return false;
    const struct ir_node *sn = &g->nodes[sq];
    uint32_t x = sn->inputs[0];
    double c;
    bool is_sq = (sn->op == IR_OP_POW && fuse_const_scalar(g, sn->inputs[1], &c) && c == 2.0) ||
                 (sn->op == IR_OP_MUL && sn->inputs[1] == x);
    if (!is_sq) return false;
    uint32_t add = fuse_sole_user(g, rn->outputs[0]);
    if (add == IR_NONE || g->nodes[add].op != IR_OP_ADD) return false;
    double eps;
    uint32_t ep = fuse_other_input(&g->nodes[add], rn->outputs[0]);
    if (ep == IR_NONE || !fuse_const_scalar(g, ep, &eps)) return false;
    uint32_t sqrt_n = fuse_sole_user(g, g->nodes[add].outputs[0]);
    if (sqrt_n == IR_NONE || g->nodes[sqrt_n].op != IR_OP_SQRT) return false;
    uint32_t rec;
    uint32_t nd = divides_x(g, g->nodes[sqrt_n].outputs[0], x, &rec);
    if (nd == IR_NONE) return false;
    /* the whole RMS form is here: from now on a mismatch is a reported rejection */
    const struct ir_value *xv = &g->values[x];
    int axis = fuse_norm_axis(g, PASS, rn, x);
    if (axis < 0) return false;
    uint32_t out = g->nodes[nd].outputs[0];
    if (!fuse_same_shape(&g->values[out], xv)) {
        fuse_note(PASS, false, "the division broadcasts x to another shape");
        return false;
    }
    memset(m, 0, sizeof *m);
    m->gamma = IR_NONE;
    m->axis = axis;
    m->eps = (float)eps;
    m->x = x;
    /* x made by a float32 -> float32 Cast that only this pattern reads: absorb the Cast */
    uint32_t reads = (sn->op == IR_OP_MUL ? 2u : 1u) + 1u;
    uint32_t cx = fuse_producer(g, x, IR_OP_CAST);
    if (cx != IR_NONE && g->values[g->nodes[cx].inputs[0]].dtype == IR_F32 &&
        xv->nuses == reads && !xv->is_output) {
        m->old[m->nold++] = cx;
        m->x = g->nodes[cx].inputs[0];
    }
    uint32_t chain[] = {sq, r, add, sqrt_n};
    for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++) m->old[m->nold++] = chain[k];
    if (rec != IR_NONE) m->old[m->nold++] = rec;
    m->old[m->nold++] = nd;
    m->out = out;
    /* optional [Cast] * γ [Cast] (outputs keep x's shape; γ broadcasts as a suffix) */
    uint32_t un = noop_cast_user(g, m->out);
    if (un != IR_NONE) {
        m->old[m->nold++] = un;
        m->out = g->nodes[un].outputs[0];
    }
    un = fuse_sole_user(g, m->out);
    uint32_t p = fuse_norm_param(g, un, IR_OP_MUL, m->out, xv, axis);
    if (p != IR_NONE) {
        m->old[m->nold++] = un;
        m->gamma = p;
        m->out = g->nodes[un].outputs[0];
        un = noop_cast_user(g, m->out);
        if (un != IR_NONE) {
            m->old[m->nold++] = un;
            m->out = g->nodes[un].outputs[0];
        }
    }
    return true;
}

static void rewrite(struct ir_graph *g, const struct rms_match *m)
{
    uint32_t gamma = m->gamma;
    if (gamma == IR_NONE) {
        const struct ir_value *xv = &g->values[m->x];
        const char *base = g->nodes[m->old[m->nold - 1]].name;
        gamma = fuse_const_fill(g, ir_sprintf(g, "%s/o2c_rms_scale", base), xv->rank - m->axis,
                                xv->dims + m->axis, 1.0f);
    }
    uint32_t in[2] = {m->x, gamma};
    uint32_t id = fuse_replace(g, IR_OP_FUSED_RMS_NORM, m->old, m->nold, in, 2, &m->out, 1);
    ir_attr_set_int(g, id, "axis", m->axis);
    ir_attr_set_float(g, id, "epsilon", m->eps);
    fuse_note(PASS, true, NULL);
}

bool pass_fuse_rmsnorm(struct ir_graph *g)
{
    /* matches never share nodes (each owns its ReduceMean's chain and at most the Cast that
     * only it reads), so each is rewritten as soon as it is found */
    uint32_t nn = g->nnodes, nm = 0;
    for (uint32_t i = 0; i < nn; i++) {
        struct rms_match m;
        if (g->nodes[i].dead || g->nodes[i].op != IR_OP_REDUCE_MEAN || !match(g, i, &m)) continue;
        rewrite(g, &m);
        nm++;
    }
    return nm > 0;
}
