/* fuse_conv_epilogue.c — Conv with the elementwise ops after it -> one o2c.Conv (one kernel:
 * codegen/lower_fconv.c + kernels/fconv.cl, the epilogue applied in the store).
 *
 * Chain recognized after a float32 Conv (1 to 3 spatial dims), each step optional, in order:
 *   1. Add(y, b)    b a constant with OC elements broadcasting per output channel ([OC,1,..],
 *                   [1,OC,1,..]), only if the Conv had no bias        -> bias input
 *   2. Relu(y)                                                          -> activation=2
 *      Sigmoid(y), Mul(y, Sigmoid(y)) (SiLU; y read by those two only)  -> activation=1
 *   3. Add(y, r)    r of y's shape, or broadcasting to it per (n, c) / per position: r's dims
 *                   right-aligned to [N, OC, spatial] are each equal to y's or 1, with the
 *                   spatial dims all equal or all 1 (SD: the shortcut [N,C,H,W], the time
 *                   embedding [N,C,1,1])                                -> residual input
 *   4. Div(y, d)    d a constant scalar (SD: output_scale_factor)        -> output_divisor=d
 * Result: o2c.Conv(x, w, [bias], [residual]) {the Conv's attributes, activation (0 none, 1 silu,
 *   2 relu), output_divisor (float, 1 = none)}:
 *   y = (act(conv(x, w) + bias) + residual) / output_divisor.
 * A Conv with nothing to absorb is left alone. Every intermediate must be single-use and not a
 * graph output (fuse_chain_ok; the SiLU input is checked to be read by its two nodes only).
 * Assumes: shape inference ran. Matching never mutates; matches are collected, then rewritten.
 */
#include "passes/fuse/fuse.h"

#include <stdlib.h>
#include <string.h>

#define PASS "conv_epilogue"

/* b: a float32 constant with OC elements broadcasting per channel against y [N, OC, ...]. */
static bool per_channel_const(const struct ir_graph *g, uint32_t b, const struct ir_value *y)
{
    const struct ir_value *bv = &g->values[b];
    if (!ir_is_const(g, b) || bv->dtype != IR_F32 || bv->rank > y->rank) return false;
    for (int k = 0; k < bv->rank; k++) {
        int yk = y->rank - bv->rank + k;
        if (bv->dims[k] != 1 && yk != 1) return false;
    }
    return ir_numel(g, b) == y->dims[1];
}

/* r broadcasts to y [N, OC, spatial] as the residual kernel supports (see the banner). */
bool fconv_residual_ok(const struct ir_value *r, const struct ir_value *y);
bool fconv_residual_ok(const struct ir_value *r, const struct ir_value *y)
{
    if (r->dtype != IR_F32 || r->rank > y->rank || !r->dims_known) return false;
    int off = y->rank - r->rank;
    bool sp_all_eq = true, sp_all_one = true;
    for (int k = 2; k < y->rank; k++) {
        int64_t d = k - off >= 0 ? r->dims[k - off] : 1;
        sp_all_eq &= d == y->dims[k];
        sp_all_one &= d == 1;
    }
    if (!sp_all_eq && !sp_all_one) return false;
    for (int k = 0; k < 2; k++) {
        int64_t d = k - off >= 0 ? r->dims[k - off] : 1;
        if (d != 1 && d != y->dims[k]) return false;
    }
    return true;
}

/* One match, collected before any rewrite. */
struct ce_match {
    uint32_t old[8];  /* nodes replaced, chain order (the Conv first) */
    int nold;         /* entries of old */
    uint32_t bias;    /* bias value or IR_NONE */
    uint32_t res;     /* residual value or IR_NONE */
    uint32_t out;     /* value the fused node computes */
    int act;          /* 0 none, 1 silu, 2 relu */
    float div;        /* output divisor (1 = none) */
};

static bool match(const struct ir_graph *g, uint32_t conv, struct ce_match *m)
{
    const struct ir_node *c = &g->nodes[conv];
    const struct ir_value *yv = &g->values[c->outputs[0]];
    if (yv->dtype != IR_F32 || !yv->dims_known || yv->rank < 3 || yv->rank > 5) return false;
    /* no input channels: the output is the bias alone, written by lower_conv.c (no kernel) */
    if (g->values[c->inputs[0]].rank < 2 || g->values[c->inputs[0]].dims[1] == 0) return false;
    memset(m, 0, sizeof *m);
    m->old[m->nold++] = conv;
    m->bias = ir_input(c, 2);
    m->res = IR_NONE;
    m->out = c->outputs[0];
    m->div = 1.0f;
    int step = 0; /* next step allowed (1..4) */
    for (;;) {
        uint32_t y = m->out;
        const struct ir_value *cur = &g->values[y];
        if (cur->is_output) break;
        /* SiLU: y read by a Sigmoid and by a Mul of y and that Sigmoid's output */
        if (step < 2 && cur->nuses == 2) {
            uint32_t u[2];
            if (fuse_users(g, y, u, 2) != 2) break;
            uint32_t sig = g->nodes[u[0]].op == IR_OP_SIGMOID ? u[0] : u[1];
            uint32_t mul = sig == u[0] ? u[1] : u[0];
            if (g->nodes[sig].op != IR_OP_SIGMOID || g->nodes[mul].op != IR_OP_MUL) break;
            uint32_t s = g->nodes[sig].outputs[0];
            if (fuse_other_input(&g->nodes[mul], y) != s) break;
            const char *why;
            if (!fuse_chain_ok(g, &s, 1, &why)) {
                fuse_note(PASS, false, "SiLU after Conv: its Sigmoid output has other uses");
                break;
            }
            m->old[m->nold++] = sig;
            m->old[m->nold++] = mul;
            m->out = g->nodes[mul].outputs[0];
            m->act = 1;
            step = 2;
            continue;
        }
        uint32_t u = fuse_sole_user(g, y);
        if (u == IR_NONE) break;
        const struct ir_node *un = &g->nodes[u];
        if (un->op == IR_OP_ADD) {
            uint32_t p = fuse_other_input(un, y);
            if (p == IR_NONE || !fuse_same_shape(&g->values[un->outputs[0]], yv)) break;
            if (step < 1 && m->bias == IR_NONE && per_channel_const(g, p, yv)) {
                m->bias = p;
                step = 1;
            } else if (step < 3 && fconv_residual_ok(&g->values[p], yv)) {
                m->res = p;
                step = 3;
            } else {
                if (step < 3) fuse_note(PASS, false, "Add after Conv broadcasts unsupported");
                break;
            }
        } else if (un->op == IR_OP_RELU && step < 2) {
            m->act = 2;
            step = 2;
        } else if (un->op == IR_OP_DIV && step < 4 && un->inputs[0] == y) {
            double d;
            if (!fuse_const_scalar(g, un->inputs[1], &d) || d == 0.0) break;
            if (!fuse_same_shape(&g->values[un->outputs[0]], yv)) break;
            m->div = (float)d;
            step = 4;
        } else {
            break;
        }
        m->old[m->nold++] = u;
        m->out = un->outputs[0];
        if (step == 4) break;
    }
    return m->nold > 1;
}

static void rewrite(struct ir_graph *g, const struct ce_match *m)
{
    const struct ir_node *c = &g->nodes[m->old[0]];
    uint32_t in[4] = {c->inputs[0], c->inputs[1], m->bias, m->res};
    uint32_t nattrs = c->nattrs;
    struct ir_attr *attrs = ir_alloc(g, sizeof *attrs * (nattrs ? nattrs : 1));
    if (nattrs) memcpy(attrs, c->attrs, sizeof *attrs * nattrs);
    uint32_t nin = m->res != IR_NONE ? 4 : m->bias != IR_NONE ? 3 : 2;
    uint32_t id = fuse_replace(g, IR_OP_FUSED_CONV, m->old, m->nold, in, nin, &m->out, 1);
    g->nodes[id].attrs = attrs;
    g->nodes[id].nattrs = nattrs;
    ir_attr_set_int(g, id, "activation", m->act);
    ir_attr_set_float(g, id, "output_divisor", m->div);
    fuse_note(PASS, true, NULL);
}

bool pass_fuse_conv_epilogue(struct ir_graph *g)
{
    uint32_t nn = g->nnodes, cap = 16, nm = 0;
    struct ce_match *ms = malloc(sizeof *ms * cap);
    bool *claimed = calloc(nn ? nn : 1, 1);
    if (!ms || !claimed) ir_die("out of memory");
    for (uint32_t i = 0; i < nn; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead || n->op != IR_OP_CONV || claimed[i]) continue;
        struct ce_match m;
        if (!match(g, i, &m)) continue;
        /* Add(conv_a, conv_b): both Convs may claim the Add; a node belongs to one match only
         * (the first; the other Conv then stays plain and is its residual) */
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
    for (uint32_t k = 0; k < nm; k++) rewrite(g, &ms[k]);
    free(ms);
    free(claimed);
    return nm > 0;
}
