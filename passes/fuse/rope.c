/* rope.c — rotary position embeddings (RoPE) -> o2c.Rope (one kernel launch, kernels/rope.cl,
 * codegen/lower_rope.c) instead of the chunk / Neg / Concat / Mul / Add chain (4-5 launches).
 *
 * Patterns (X float32 [.., D], D even; cos, sin any values broadcasting to X's dims; "view" =
 * a chain of zero or more reshape-like nodes (Reshape, Squeeze, Unsqueeze, Flatten: the flat
 * element order is kept), every intermediate single-use and not a graph output):
 *   interleaved pairs (diffusers apply_rotary_emb, use_real_unbind_dim=-1: Flux; TorchScript
 *   and dynamo exports; RotaryEmbedding-23 interleaved=1 as passes/expand/seq.c writes it):
 *     z = view(X) of dims [.., D/2, 2]
 *     a, b = Split(z, axis -1, [1, 1]) | Slice(z, [0,1), axis -1), Slice(z, [1,2), axis -1)
 *     r = view(Concat(view(Neg(view(b))), view(a), axis -1))      of X's dims
 *   halves (rotate_half: HF LLaMA / SD3-style cat(-x2, x1); RotaryEmbedding-23 interleaved=0):
 *     a, b = Split(X, axis -1, [D/2, D/2]) | Slice(X, [0, D/2)), Slice(X, [D/2, D))
 *     r = Concat(view(Neg(view(b))), view(a), axis -1)             (views keep a's/b's dims)
 *   then  Y = Add(Mul(X, cos), Mul(r, sin))                        (Add and Muls in any order)
 * Algebra: pair (e0, e1) of each row of X's last axis — (2i, 2i+1) interleaved, (i, i + D/2)
 * halves; the Concat on the last axis puts -b first and a second, so
 *   interleaved: Concat(-b[.., i, 1], a[.., i, 1]) flattened = (-x[2i+1], x[2i]) at (2i, 2i+1)
 *   halves:      Concat(-x[D/2:], x[:D/2])                 = (-x[i+D/2], x[i]) at (i, i+D/2)
 * i.e. r[e0] = -x[e1], r[e1] = x[e0] = rot(x) of o2c.Rope (ops.def), and
 *   Y = x*cos + r*sin = o2c.Rope(X, cos, sin){interleaved}   (the views only rename dims).
 * Rejected (reported): the Neg on the first half (a rotation by -90 degrees: rot(x) = (x1, -x0)
 * is not the kernel's), the negated half second in the Concat, a Concat on another axis, an
 * intermediate read twice or a graph output, X not float32, shapes that do not give x's.
 * The cos/sin operands are read as they are (graph-computed in Flux, shared by every q/k of
 * the model): nothing about their values is assumed.
 * Runs before elementwise (which would absorb the Mul/Add) and attention (which reads the
 * rotated q/k). Assumes: shape inference ran. Matching never mutates; each match is rewritten
 * before the next Neg is looked at (matches never share nodes: each owns its Neg).
 */
#include "passes/fuse/fuse.h"

#include <string.h>

#define PASS "rope"
#define MAX_OLD 32

/* One match. */
struct rope_match {
    uint32_t old[MAX_OLD];   /* nodes replaced */
    int nold;                /* entries of old */
    uint32_t inner[MAX_OLD]; /* single-use intermediates (fuse_chain_ok) */
    int ninner;              /* entries of inner */
    uint32_t x, cos, sin;    /* operands */
    uint32_t out;            /* Y */
    bool interleaved;        /* pairs (2i, 2i+1); else halves (i, i + D/2) */
};

static void add_old(struct rope_match *m, uint32_t node)
{
    IR_ASSERT(m->nold < MAX_OLD);
    m->old[m->nold++] = node;
}

static void add_inner(struct rope_match *m, uint32_t v)
{
    IR_ASSERT(m->ninner < MAX_OLD);
    m->inner[m->ninner++] = v;
}

/* A reshape-like node with one output (the flat element order is kept). */
static bool is_view(const struct ir_graph *g, uint32_t node)
{
    return node != IR_NONE && (ir_op_flags(g->nodes[node].op) & IR_F_VIEW) &&
           g->nodes[node].noutputs == 1;
}

/* Walks back from v through views (at most 4) and returns the value they start from; the view
 * nodes go to m->old and their outputs (v included) to m->inner. */
static uint32_t back_views(const struct ir_graph *g, uint32_t v, struct rope_match *m)
{
    for (int k = 0; k < 4; k++) {
        uint32_t p = fuse_producer(g, v, IR_OP_UNKNOWN);
        if (!is_view(g, p)) break;
        add_old(m, p);
        add_inner(m, v);
        v = g->nodes[p].inputs[0];
    }
    return v;
}

/* Walks forward from v through views that are its sole reader (at most 4); returns the last
 * value (v itself if none). Views to m->old, their inputs to m->inner. */
static uint32_t fwd_views(const struct ir_graph *g, uint32_t v, struct rope_match *m)
{
    for (int k = 0; k < 4; k++) {
        uint32_t u = fuse_sole_user(g, v);
        if (!is_view(g, u) || g->nodes[u].inputs[0] != v) break;
        add_old(m, u);
        add_inner(m, v);
        v = g->nodes[u].outputs[0];
    }
    return v;
}

/* The node and output index making value v when it is a Split output or a Slice output. */
static uint32_t chunk_of(const struct ir_graph *g, uint32_t v)
{
    uint32_t p = fuse_producer(g, v, IR_OP_UNKNOWN);
    if (p == IR_NONE) return IR_NONE;
    enum ir_op op = g->nodes[p].op;
    return op == IR_OP_SPLIT || op == IR_OP_SLICE ? p : IR_NONE;
}

static bool reject(const char *why)
{
    fuse_note(PASS, false, why);
    return false;
}

/* dims of v == dims of x except the last, which is `last`. */
static bool dims_but_last(const struct ir_value *v, const struct ir_value *x, int64_t last)
{
    if (v->rank != x->rank) return false;
    for (int k = 0; k < x->rank - 1; k++)
        if (v->dims[k] != x->dims[k]) return false;
    return v->dims[v->rank - 1] == last;
}

static bool match(const struct ir_graph *g, uint32_t neg, struct rope_match *m)
{
    memset(m, 0, sizeof *m);
    /* the negated value, back to the chunk that cut it */
    uint32_t nb = g->nodes[neg].outputs[0];
    uint32_t hb = back_views(g, g->nodes[neg].inputs[0], m);
    uint32_t cb = chunk_of(g, hb);
    if (cb == IR_NONE) return false;
    uint32_t z = g->nodes[cb].inputs[0];
    const struct ir_value *hv = &g->values[hb], *zv = &g->values[z];
    if (hv->rank < 1 || zv->rank != hv->rank) return false;
    int64_t F = hv->dims[hv->rank - 1];
    uint32_t h[2], chunk[2];
    int nc;
    if (F < 1 || !fuse_halves(g, z, F, false, h, chunk, &nc) || (h[0] != hb && h[1] != hb))
        return false;
    /* forward to the Concat, and its other operand back to the other half */
    add_old(m, neg);
    uint32_t nv = fwd_views(g, nb, m);
    uint32_t cat = fuse_sole_user(g, nv);
    if (cat == IR_NONE || g->nodes[cat].op != IR_OP_CONCAT || g->nodes[cat].ninputs != 2)
        return false;
    const struct ir_node *cn = &g->nodes[cat];
    int pos_b = cn->inputs[0] == nv ? 0 : 1;
    uint32_t ha = back_views(g, cn->inputs[1 - pos_b], m);
    int half_b = h[1] == hb ? 1 : 0;
    if (ha != h[1 - half_b]) return false;
    /* a rotation-like chunk/Neg/Concat: from here on, mismatches are reported */
    if (half_b != 1) return reject("Neg of the first half (rotation by -90 degrees)");
    if (pos_b != 0) return reject("the negated half is second in the Concat");
    const struct ir_value *cv = &g->values[cn->inputs[0]];
    int64_t cax = ir_attr_int(cn, "axis", 0);
    if (cax < 0) cax += cv->rank;
    if (cax != cv->rank - 1) return reject("Concat not on the last axis");
    add_old(m, cat);
    uint32_t rv = fwd_views(g, cn->outputs[0], m);
    /* the tail: Add(Mul(X, cos), Mul(r, sin)) */
    uint32_t m2 = fuse_sole_user(g, rv);
    if (m2 == IR_NONE) return reject("rot(x) is read twice or is a graph output");
    if (g->nodes[m2].op != IR_OP_MUL) return reject("rot(x) is not multiplied");
    uint32_t sin = fuse_other_input(&g->nodes[m2], rv);
    uint32_t add = fuse_sole_user(g, g->nodes[m2].outputs[0]);
    if (sin == IR_NONE || add == IR_NONE || g->nodes[add].op != IR_OP_ADD)
        return reject("no Add of x*cos and rot(x)*sin");
    uint32_t m1 =
        fuse_producer(g, fuse_other_input(&g->nodes[add], g->nodes[m2].outputs[0]), IR_OP_MUL);
    if (m1 == IR_NONE) return reject("no Add of x*cos and rot(x)*sin");
    /* X: the Mul operand the chunked value is (halves) or is a view of (interleaved) */
    const struct ir_node *m1n = &g->nodes[m1];
    uint32_t zviews[4], v = z;
    int nzv = 0, xi = -1;
    for (;;) {
        for (int k = 0; k < 2 && xi < 0; k++)
            if (m1n->inputs[k] == v) xi = k;
        uint32_t p = fuse_producer(g, v, IR_OP_UNKNOWN);
        if (xi >= 0 || nzv == 4 || !is_view(g, p)) break;
        zviews[nzv++] = p;
        v = g->nodes[p].inputs[0];
    }
    if (xi < 0) return reject("the Mul by cos does not read the rotated x");
    m->x = m1n->inputs[xi];
    m->cos = m1n->inputs[1 - xi];
    m->sin = sin;
    m->out = g->nodes[add].outputs[0];
    m->interleaved = m->x != z;
    const struct ir_value *xv = &g->values[m->x];
    if (xv->dtype != IR_F32) return reject("not float32");
    int64_t D = xv->rank >= 1 ? xv->dims[xv->rank - 1] : 0;
    if (D < 2 || D % 2) return reject("odd last axis");
    if (m->interleaved) {
        /* z = view(X) as [.., D/2, 2]; its chunks [.., D/2, 1]; the Concat operands [.., 1] */
        if (F != 1 || zv->dims[zv->rank - 1] != 2 || ir_numel(g, z) != ir_numel(g, m->x) ||
            zv->rank < 2 || zv->dims[zv->rank - 2] != D / 2 || cv->dims[cv->rank - 1] != 1)
            return reject("the pairs are not the last axis of x");
        for (int k = 0; k < nzv; k++) {
            add_old(m, zviews[k]);
            if (k > 0) add_inner(m, g->nodes[zviews[k]].outputs[0]); /* z itself: below */
        }
        if (zv->is_output || zv->nuses != (uint32_t)nc)
            return reject("an intermediate has more than one use");
    } else if (F != D / 2 || !dims_but_last(cv, xv, F) ||
               !dims_but_last(&g->values[cn->inputs[1]], xv, F)) {
        return reject("the halves are not those of x's last axis");
    }
    for (int k = 0; k < nc; k++)
        add_old(m, chunk[k]);
    add_inner(m, h[0]);
    add_inner(m, h[1]);
    add_inner(m, nb);
    add_inner(m, cn->outputs[0]);
    add_inner(m, g->nodes[m2].outputs[0]);
    add_inner(m, m1n->outputs[0]);
    add_old(m, m1);
    add_old(m, m2);
    add_old(m, add);
    const struct ir_value *ov = &g->values[m->out];
    if (!fuse_same_shape(&g->values[rv], xv) || !fuse_same_shape(ov, xv) ||
        !fuse_same_shape(&g->values[m1n->outputs[0]], xv) ||
        !fuse_same_shape(&g->values[g->nodes[m2].outputs[0]], xv))
        return reject("cos/sin broadcast x to another shape");
    const char *why;
    if (!fuse_chain_ok(g, m->inner, m->ninner, &why)) return reject(why);
    return true;
}

static void rewrite(struct ir_graph *g, const struct rope_match *m)
{
    uint32_t in[3] = {m->x, m->cos, m->sin};
    uint32_t id = fuse_replace(g, IR_OP_FUSED_ROPE, m->old, m->nold, in, 3, &m->out, 1);
    ir_attr_set_int(g, id, "interleaved", m->interleaved ? 1 : 0);
    fuse_note(PASS, true, NULL);
}

bool pass_fuse_rope(struct ir_graph *g)
{
    uint32_t nn = g->nnodes, nm = 0;
    for (uint32_t i = 0; i < nn; i++) {
        struct rope_match m;
        if (g->nodes[i].dead || g->nodes[i].op != IR_OP_NEG || !match(g, i, &m)) continue;
        rewrite(g, &m);
        nm++;
    }
    return nm > 0;
}
