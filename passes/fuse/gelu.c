/* fuse_gelu.c — GELU decompositions -> the Gelu op (one unary kernel; kernels/unary.cl computes
 * it with its erf approximation, no erf() call).
 *
 * Patterns (float32; commutative operands matched in either order):
 *   erf form   x * 0.5 * (1 + erf(x / sqrt(2)))            -> Gelu(x) {approximate="none"}
 *              x / sqrt(2) written Div(x, 1.41421..) or Mul(x, 0.70710..)
 *   tanh form  0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *                                                          -> Gelu(x) {approximate="tanh"}
 *              x^3 written Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x)
 *   the final products in any of the exporters' orders, with a = 1 + erf(..) / 1 + tanh(..):
 *              Mul(Mul(x, a), 0.5),  Mul(Mul(x, 0.5), a),  Mul(x, Mul(a, 0.5))
 * Constants must match to a relative 1e-6 (float rounding of the exact values) or be the exact
 * values rounded to float16 (float16 exports).
 * GEGLU (x * gelu(gate) after a Split/Slice) becomes Mul(x, Gelu(gate)); fusing that Mul is left
 * to the elementwise pass.
 * Assumes: shape inference ran. Matching never mutates; matches are collected, then rewritten.
 */
#include "passes/fuse/fuse.h"
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PASS "gelu"

/* v is a constant scalar-like value equal to want within a relative 1e-6, or equal to want
 * rounded to float16 (a float16 export, made float32 by promote_f16: its 1/sqrt(2) is
 * 0.70703125; the fused Gelu then uses the exact constant, a relative difference <= 5e-4 in the
 * erf/tanh argument, inside float16's own rounding). */
static bool is_const(const struct ir_graph *g, uint32_t v, double want)
{
    double c;
    if (v == IR_NONE || !fuse_const_scalar(g, v, &c)) return false;
    return fabs(c - want) <= 1e-6 * fabs(want) || c == (double)ref_f16_to_f32(ref_f32_to_f16((float)want));
}

/* If node n (live, of op) has a constant input equal to want, returns its other input. */
static uint32_t with_const(const struct ir_graph *g, uint32_t n, enum ir_op op, double want)
{
    if (n == IR_NONE || g->nodes[n].dead || g->nodes[n].op != op) return IR_NONE;
    const struct ir_node *nd = &g->nodes[n];
    if (is_const(g, nd->inputs[1], want)) return nd->inputs[0];
    if (op != IR_OP_DIV && op != IR_OP_SUB && op != IR_OP_POW && is_const(g, nd->inputs[0], want))
        return nd->inputs[1];
    return IR_NONE;
}

/* One match. */
struct gelu_match {
    uint32_t old[12]; /* nodes replaced */
    int nold;         /* entries of old */
    uint32_t inner[12]; /* intermediates (must be single-use, not outputs) */
    int ninner;       /* entries of inner */
    uint32_t x;       /* GELU input */
    uint32_t out;     /* value computed */
    bool tanh_form;   /* approximate="tanh" */
};

static void add_node(const struct ir_graph *g, struct gelu_match *m, uint32_t n, bool inner_out)
{
    m->old[m->nold++] = n;
    if (inner_out) m->inner[m->ninner++] = g->nodes[n].outputs[0];
}

/* From a = 1 + f(x) (value) on: the three orders of x * 0.5 * a. */
static bool match_tail(const struct ir_graph *g, struct gelu_match *m, uint32_t a)
{
    uint32_t x = m->x;
    uint32_t m1 = fuse_sole_user(g, a);
    if (m1 == IR_NONE || g->nodes[m1].op != IR_OP_MUL) return false;
    uint32_t p = fuse_other_input(&g->nodes[m1], a);
    if (p == IR_NONE) return false;
    uint32_t o1 = g->nodes[m1].outputs[0];
    if (p == x || is_const(g, p, 0.5)) {
        /* Mul(Mul(x, a), 0.5)  or  Mul(x, Mul(a, 0.5)) */
        uint32_t m2 = fuse_sole_user(g, o1);
        if (m2 == IR_NONE || g->nodes[m2].op != IR_OP_MUL) return false;
        uint32_t q = fuse_other_input(&g->nodes[m2], o1);
        if (!(p == x ? is_const(g, q, 0.5) : q == x)) return false;
        add_node(g, m, m1, true);
        add_node(g, m, m2, false);
        m->out = g->nodes[m2].outputs[0];
        return true;
    }
    /* Mul(Mul(x, 0.5), a) */
    uint32_t h = fuse_producer(g, p, IR_OP_MUL);
    if (h == IR_NONE || with_const(g, h, IR_OP_MUL, 0.5) != x) return false;
    add_node(g, m, h, true);
    add_node(g, m, m1, false);
    m->out = o1;
    return true;
}

/* 1 + v: the Add reading v with a constant 1; returns its output or IR_NONE. */
static uint32_t plus_one(const struct ir_graph *g, struct gelu_match *m, uint32_t v)
{
    uint32_t a = fuse_sole_user(g, v);
    if (a == IR_NONE || with_const(g, a, IR_OP_ADD, 1.0) != v) return IR_NONE;
    add_node(g, m, a, true);
    return g->nodes[a].outputs[0];
}

static bool match_erf(const struct ir_graph *g, uint32_t erf, struct gelu_match *m)
{
    memset(m, 0, sizeof *m);
    uint32_t t = g->nodes[erf].inputs[0];
    uint32_t pt = g->values[t].producer;
    if (pt == IR_NONE || g->nodes[pt].dead) return false;
    uint32_t x = with_const(g, pt, IR_OP_DIV, 1.4142135623730951);
    if (x == IR_NONE) x = with_const(g, pt, IR_OP_MUL, 0.7071067811865476);
    if (x == IR_NONE) return false;
    m->x = x;
    add_node(g, m, pt, true);
    add_node(g, m, erf, true);
    uint32_t a = plus_one(g, m, g->nodes[erf].outputs[0]);
    return a != IR_NONE && match_tail(g, m, a);
}

/* x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x): node q computing it; returns x. */
static uint32_t match_cube(const struct ir_graph *g, uint32_t q, struct gelu_match *m)
{
    const struct ir_node *qn = &g->nodes[q];
    if (qn->op == IR_OP_POW) {
        if (!is_const(g, qn->inputs[1], 3.0)) return IR_NONE;
        add_node(g, m, q, true);
        return qn->inputs[0];
    }
    if (qn->op != IR_OP_MUL) return IR_NONE;
    for (int k = 0; k < 2; k++) {
        uint32_t sq = fuse_producer(g, qn->inputs[k], IR_OP_MUL);
        uint32_t x = qn->inputs[1 - k];
        if (sq == IR_NONE) continue;
        const struct ir_node *sn = &g->nodes[sq];
        if (sn->inputs[0] == x && sn->inputs[1] == x) {
            add_node(g, m, sq, true);
            add_node(g, m, q, true);
            return x;
        }
    }
    return IR_NONE;
}

static bool match_tanh(const struct ir_graph *g, uint32_t th, struct gelu_match *m)
{
    memset(m, 0, sizeof *m);
    m->tanh_form = true;
    uint32_t pu = g->values[g->nodes[th].inputs[0]].producer;
    if (pu == IR_NONE || g->nodes[pu].dead) return false;
    uint32_t v = with_const(g, pu, IR_OP_MUL, 0.7978845608028654); /* sqrt(2/pi) */
    uint32_t pv = fuse_producer(g, v, IR_OP_ADD);
    if (pv == IR_NONE) return false;
    for (int k = 0; k < 2; k++) {
        uint32_t pw = fuse_producer(g, g->nodes[pv].inputs[k], IR_OP_MUL);
        uint32_t xc = g->nodes[pv].inputs[1 - k];
        if (pw == IR_NONE) continue;
        uint32_t q = with_const(g, pw, IR_OP_MUL, 0.044715);
        uint32_t pq = q == IR_NONE ? IR_NONE : g->values[q].producer;
        if (pq == IR_NONE || g->nodes[pq].dead) continue;
        m->nold = m->ninner = 0;
        if (match_cube(g, pq, m) != xc) continue;
        m->x = xc;
        add_node(g, m, pw, true);
        add_node(g, m, pv, true);
        add_node(g, m, pu, true);
        add_node(g, m, th, true);
        uint32_t a = plus_one(g, m, g->nodes[th].outputs[0]);
        return a != IR_NONE && match_tail(g, m, a);
    }
    return false;
}

bool pass_fuse_gelu(struct ir_graph *g)
{
    uint32_t nn = g->nnodes, cap = 16, nm = 0;
    struct gelu_match *ms = malloc(sizeof *ms * cap);
    bool *claimed = calloc(nn ? nn : 1, 1);
    if (!ms || !claimed) ir_die("out of memory");
    for (uint32_t i = 0; i < nn; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead || (n->op != IR_OP_ERF && n->op != IR_OP_TANH)) continue;
        struct gelu_match m;
        bool ok = n->op == IR_OP_ERF ? match_erf(g, i, &m) : match_tanh(g, i, &m);
        if (!ok) continue;
        if (g->values[m.x].dtype != IR_F32) {
            fuse_note(PASS, false, "not float32");
            continue;
        }
        const char *why;
        if (!fuse_chain_ok(g, m.inner, m.ninner, &why)) {
            fuse_note(PASS, false, why);
            continue;
        }
        bool clash = false;
        for (int k = 0; k < m.nold; k++) clash |= claimed[m.old[k]];
        if (clash) continue;
        for (int k = 0; k < m.nold; k++) claimed[m.old[k]] = true;
        if (nm == cap) {
            cap *= 2;
            ms = realloc(ms, sizeof *ms * cap);
            if (!ms) ir_die("out of memory");
        }
        ms[nm++] = m;
    }
    for (uint32_t k = 0; k < nm; k++) {
        uint32_t id = fuse_replace(g, IR_OP_GELU, ms[k].old, ms[k].nold, &ms[k].x, 1, &ms[k].out, 1);
        ir_attr_set_string(g, id, "approximate", ms[k].tanh_form ? "tanh" : "none");
        fuse_note(PASS, true, NULL);
    }
    free(ms);
    free(claimed);
    return nm > 0;
}
