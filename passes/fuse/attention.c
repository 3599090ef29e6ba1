/* passes/fuse/attention.c — scaled dot-product attention -> one o2c.Attention node (flash-style kernel).
 *
 * Pattern (anchored at each Softmax over the last axis):
 *   MatMul(Q, Kᵀ) → [Mul|Div by scalar constants]* → [Add(mask)] → [Cast f32→f32] → Softmax(-1)
 *                 → [Where(IsNaN(·), 0, ·)] → [Cast f32→f32] → MatMul(·, V)
 *                                                 or → Transpose(last two) → MatMul(V_cf, ·)
 * with the head split/merge around it absorbed into per-tensor strides:
 *   Q, Kᵀ, V are walked back through single-use Mul/Div(scalar) (folded into `scale`), no-op
 *   Casts, Transposes and view ops (Reshape/Squeeze/Unsqueeze/Flatten), so the kernel reads the
 *   tensors before the head-split Transpose (e.g. [B, N, H·d] out of the projection MatMul);
 *   the output is walked forward through single-use Transposes, views and no-op Casts, so the
 *   kernel writes the tensor after the head-merge Transpose/Reshape ([B, N, H·d]).
 * Forms met in the exports (models/README.md, SD_EXPORTS.md):
 *   - SDPA (torch >= 2.1): 4-D [B, h, N, d], Q and Kᵀ each multiplied by sqrt(scale);
 *   - legacy 3-D [B·h, N, d]: Mul(scale) on the scores, Add(zeros) (baddbmm, dropped), Cast;
 *     the head merge into B·h is a Reshape after a Transpose, so those Transposes stay;
 *   - dynamo SDPA (opset 18+): 4-D, Q and Kᵀ each multiplied by sqrt(scale) (folded constant),
 *     Kᵀ built by Reshape([B·h, N, d]) → Transpose(0,2,1) → Reshape([B, h, d, N]): the walks
 *     keep each logical axis's stride in the memory of the value reached, remapped through
 *     every Transpose (remap_strides), so views between Transposes no longer stop them;
 *     with a mask, Where(IsNaN(P), 0, P) after the Softmax (nan_guard: absorbed; the kernels
 *     then write 0 for a fully masked row, attribute zero_rows; also the opset-23 Attention
 *     expansion's guard Where(IsInf(ReduceMax(bias)), 0, P), run-time masks included);
 *   - CompVis/ldm VAE AttnBlock (original SD checkpoints, older diffusers AttentionBlock):
 *     q, k, v channels-first [B, C, N] out of 1x1 convs; bmm(Transpose(q), k) · C^-½, softmax on
 *     the last axis, then bmm(v, Transpose(P)): the probabilities are the RIGHT operand, and
 *     Q, K, V and the output have the head dim strided by N (token stride 1). The kernels take a
 *     stride for the head dim too (codegen/lower_attention.c), so no transpose is launched
 *     (see pt_form for the algebra);
 *   - causal mask (CLIP): a folded constant [N, N] added to the scores; when it is exactly
 *     causal (0 on/below the diagonal, -inf or <= -1e30 above) it becomes causal=1 and no mask
 *     input; any other additive mask (constant or not, broadcastable to [.., N, S]) is input 3.
 * Not handled (left unfused, noted in --stats): a scale multiplied after the mask, two masks,
 * operands of different ranks, value head dim != query head dim, the probabilities transposed
 * by another permutation or used as the right operand without the transpose (that contracts
 * over the query axis), a masked-row guard that tests another tensor than the mask added, a
 * merged B·h axis that a Transpose splits with B > 1 (the walk stops there and that Transpose
 * stays). (The opset-23 Attention op arrives expanded by passes/expand/attention.c.)
 * Legality: every value the fused node no longer materializes is single-use and not a graph
 * output (fuse_chain_ok). Matching never mutates: all matches are collected, then rewritten.
 * Output attributes: see codegen/lower_attention.c (dims, q/k/v/o/m_strides, scale, causal).
 */
#include "passes/fuse/fuse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PASS "attention"
#define ATT_MAX_NODES 64 /* nodes absorbed by one match (the SD forms need about 20) */

/* One operand of the kernel: the value read/written and its (b, h, token, d) strides. */
struct att_operand {
    uint32_t v;      /* value id the kernel reads (or writes, for the output) */
    int64_t st[4];   /* element strides of the logical axes b, h, token, d (0 = broadcast) */
    double scale;    /* scalar factor folded from Mul/Div nodes on the way */
};

/* One recognized attention, collected before any rewrite. */
struct att_match {
    uint32_t nodes[ATT_MAX_NODES]; /* nodes the fused node replaces (Softmax last) */
    int nnodes;
    uint32_t inner[ATT_MAX_NODES]; /* values no longer materialized */
    int ninner;
    struct att_operand q, k, v, o; /* kernel operands */
    uint32_t mask;                 /* additive mask value or IR_NONE */
    int64_t mst[4];                /* mask strides (b, h, n, s) */
    int64_t dims[5];               /* B, H, N, S, D */
    double scale;                  /* total score scale */
    bool causal;                   /* mask recognized as exactly causal */
    bool zero_rows;                /* a guard after the Softmax was absorbed: rows whose
                                      probabilities are not finite give 0 (attribute zero_rows) */
    uint32_t guard_bias;           /* the bias the opset-23 guard tests, or IR_NONE */
};

static bool add_node(struct att_match *m, uint32_t n)
{
    if (m->nnodes >= ATT_MAX_NODES) return false;
    m->nodes[m->nnodes++] = n;
    return true;
}

static bool add_inner(struct att_match *m, uint32_t v)
{
    if (m->ninner >= ATT_MAX_NODES) return false;
    m->inner[m->ninner++] = v;
    return true;
}

/* Row-major strides of value v. */
static void dense_strides(const struct ir_graph *g, uint32_t v, int64_t *st)
{
    const struct ir_value *val = &g->values[v];
    int64_t s = 1;
    for (int k = val->rank - 1; k >= 0; k--) {
        st[k] = s;
        s *= val->dims[k];
    }
}

/* Strides of the logical axes at positions ax[] (-1 = absent) of value v's dense layout;
 * axes of extent 1 in `ext` get stride 0 so broadcasting over b/h reads the one copy. */
static void axis_strides(const struct ir_graph *g, uint32_t v, const int *ax, const int64_t *ext,
                         int64_t *out)
{
    int64_t st[IR_MAX_RANK];
    dense_strides(g, v, st);
    for (int a = 0; a < 4; a++) out[a] = (ax[a] < 0 || ext[a] == 1) ? 0 : st[ax[a]];
}

static bool same_dims(const struct ir_graph *g, uint32_t a, uint32_t b)
{
    const struct ir_value *x = &g->values[a], *y = &g->values[b];
    if (x->rank != y->rank) return false;
    for (int k = 0; k < x->rank; k++)
        if (x->dims[k] != y->dims[k]) return false;
    return true;
}

/* A Cast that changes nothing (float32 -> float32). */
static bool noop_cast(const struct ir_graph *g, const struct ir_node *n)
{
    return n->op == IR_OP_CAST && ir_attr_int(n, "to", 0) == IR_F32 &&
           g->values[n->inputs[0]].dtype == IR_F32;
}

/* Transpose permutation of node n into perm (default: reversed axes). */
static void transpose_perm(const struct ir_graph *g, const struct ir_node *n, int *perm)
{
    int r = g->values[n->inputs[0]].rank;
    size_t cnt = 0;
    const int64_t *p = ir_attr_ints(n, "perm", &cnt);
    for (int k = 0; k < r; k++) perm[k] = (p && cnt == (size_t)r) ? (int)p[k] : r - 1 - k;
}

/* If node n is x * c, c * x or x / c with c a scalar constant and the output shaped as x,
 * stores x and the factor (c or 1/c) and returns true. */
static bool scalar_scale(const struct ir_graph *g, const struct ir_node *n, uint32_t *x,
                         double *f)
{
    double c;
    if (n->op == IR_OP_MUL) {
        for (int s = 0; s < 2; s++)
            if (fuse_const_scalar(g, n->inputs[1 - s], &c) && same_dims(g, n->inputs[s], n->outputs[0])) {
                *x = n->inputs[s];
                *f = c;
                return true;
            }
    } else if (n->op == IR_OP_DIV) {
        if (fuse_const_scalar(g, n->inputs[1], &c) && c != 0 && same_dims(g, n->inputs[0], n->outputs[0])) {
            *x = n->inputs[0];
            *f = 1.0 / c;
            return true;
        }
    }
    return false;
}

/* Re-expresses the strides st[] of the logical axes (extents ext[]), given as element strides
 * in the dense memory of a tensor with dims `from`, in the dense memory of a tensor with dims
 * `to`, where dim k of `from` is dim map[k] of `to` (a Transpose seen from either side).
 * A logical axis of extent e > 1 and stride s must step inside one dim k of `from`:
 * s = m·DS_from[k] with (e-1)·m < from[k]; it then steps m·DS_to[map[k]] in `to`.
 * Returns false (st unchanged) when an axis spans several dims (e.g. B·h merged, B > 1). */
static bool remap_strides(const int64_t *from, const int64_t *to, int rank, const int *map,
                          const int64_t *ext, int64_t *st)
{
    int64_t dsf[IR_MAX_RANK], dst[IR_MAX_RANK], out[4], s = 1;
    for (int k = rank - 1; k >= 0; k--) dsf[k] = s, s *= from[k];
    s = 1;
    for (int k = rank - 1; k >= 0; k--) dst[k] = s, s *= to[k];
    for (int a = 0; a < 4; a++) {
        out[a] = 0;
        if (ext[a] == 1 || st[a] == 0) continue;
        int k = -1;
        for (int j = 0; j < rank && k < 0; j++)
            if (st[a] % dsf[j] == 0 && (ext[a] - 1) * (st[a] / dsf[j]) < from[j]) k = j;
        if (k < 0) return false;
        out[a] = st[a] / dsf[k] * dst[map[k]];
    }
    memcpy(st, out, sizeof out);
    return true;
}

/* Walks operand X (a MatMul input whose logical axes b, h, token, d sit at positions ax[],
 * extents ext[]) back through single-use scalar Mul/Div, no-op Cast, Transpose and views,
 * keeping the axes' strides in the dense memory of the value reached:
 *   view (Reshape/Squeeze/Unsqueeze/Flatten): same memory, strides unchanged;
 *   y = Transpose(x, perm): y's dim j is x's dim perm[j] (remap_strides).
 * This covers the head split [B,N,h·d] → Reshape → Transpose(0,2,1,3) and the dynamo Kᵀ built
 * by Reshape([B·h,N,d]) → Transpose(0,2,1) → Reshape([B,h,d,N]) (B = 1, or any B when the
 * merged axis is not crossed), and Transpose(0,1,3,2). */
static bool walk_back(const struct ir_graph *g, uint32_t x, const int *ax, const int64_t *ext,
                      struct att_match *m, struct att_operand *op)
{
    uint32_t cur = x;
    axis_strides(g, x, ax, ext, op->st);
    op->scale = 1.0;
    for (;;) {
        const struct ir_value *cv = &g->values[cur];
        if (cv->nuses != 1 || cv->is_output || cv->dtype != IR_F32) break;
        uint32_t p = fuse_producer(g, cur, IR_OP_UNKNOWN);
        if (p == IR_NONE) break;
        const struct ir_node *n = &g->nodes[p];
        uint32_t next;
        double f;
        if (scalar_scale(g, n, &next, &f)) {
            op->scale *= f;
        } else if (noop_cast(g, n)) {
            next = n->inputs[0];
        } else if (n->op == IR_OP_TRANSPOSE) {
            int perm[IR_MAX_RANK];
            transpose_perm(g, n, perm);
            next = n->inputs[0];
            if (!remap_strides(cv->dims, g->values[next].dims, cv->rank, perm, ext, op->st))
                break;
        } else if ((ir_op_flags(n->op) & IR_F_VIEW) && n->noutputs == 1) {
            next = n->inputs[0];
        } else {
            break;
        }
        if (!add_node(m, p) || !add_inner(m, cur)) return false;
        cur = next;
    }
    op->v = cur;
    return true;
}

/* The one consumer of a single-use value (IR_NONE if none is live). */
static uint32_t sole_consumer(const struct ir_graph *g, const uint32_t *cons, uint32_t v)
{
    if (g->values[v].nuses != 1 || g->values[v].is_output) return IR_NONE;
    return cons[v];
}

/* Walks the attention output forward through single-use Transposes, views and no-op Casts,
 * keeping the strides in the dense memory of the value reached (as walk_back, mirrored:
 * y = Transpose(x, perm): x's dim perm[j] is y's dim j). */
static bool walk_forward(const struct ir_graph *g, const uint32_t *cons, uint32_t o,
                         const int *ax, const int64_t *ext, struct att_match *m,
                         struct att_operand *op)
{
    uint32_t cur = o;
    axis_strides(g, o, ax, ext, op->st);
    op->scale = 1.0;
    for (;;) {
        uint32_t c = sole_consumer(g, cons, cur);
        if (c == IR_NONE) break;
        const struct ir_node *n = &g->nodes[c];
        if (n->noutputs != 1 || n->inputs[0] != cur) break;
        uint32_t next = n->outputs[0];
        if (noop_cast(g, n)) {
        } else if (n->op == IR_OP_TRANSPOSE) {
            int perm[IR_MAX_RANK], inv[IR_MAX_RANK];
            transpose_perm(g, n, perm);
            for (int j = 0; j < g->values[cur].rank; j++) inv[perm[j]] = j;
            if (!remap_strides(g->values[cur].dims, g->values[next].dims, g->values[cur].rank,
                               inv, ext, op->st))
                break;
        } else if (ir_op_flags(n->op) & IR_F_VIEW) {
        } else {
            break;
        }
        if (!add_node(m, c) || !add_inner(m, cur)) return false;
        cur = next;
    }
    op->v = cur;
    return true;
}

/* A constant mask [.., N, N] that is 0 on/below the diagonal and -inf (or <= -1e30) above,
 * in every leading slice. */
static bool mask_is_causal(const struct ir_graph *g, uint32_t mask, int64_t n, int64_t s)
{
    const struct ir_value *mv = &g->values[mask];
    if (!ir_is_const(g, mask) || n != s || mv->rank < 2) return false;
    if (mv->dims[mv->rank - 2] != n || mv->dims[mv->rank - 1] != s) return false;
    int64_t total = ir_numel(g, mask);
    for (int64_t e = 0; e < total; e++) {
        int64_t j = e % s, i = (e / s) % n;
        double x = ir_const_f64(g, mask, e);
        if (j <= i ? x != 0.0 : !(x <= -1e30)) return false;
    }
    return true;
}

/* The opset-23 guard of nan_guard's comment: p's sole consumer is
 * Where(IsInf(ReduceMax(bias, [-1], keepdims 1), detect_positive 0), 0, p). */
static bool inf_guard(const struct ir_graph *g, const uint32_t *cons, uint32_t p,
                      struct att_match *m)
{
    const uint32_t wh = sole_consumer(g, cons, p);
    if (wh == IR_NONE) return false;
    const struct ir_node *w = &g->nodes[wh];
    double z;
    if (w->op != IR_OP_WHERE || w->inputs[2] != p || !fuse_const_scalar(g, w->inputs[1], &z) ||
        z != 0.0 || !same_dims(g, w->outputs[0], p) || g->values[w->outputs[0]].dtype != IR_F32)
        return false;
    const uint32_t cond = w->inputs[0], isi = sole_consumer(g, cons, cond) == wh
                                                  ? g->values[cond].producer : IR_NONE;
    if (isi == IR_NONE || g->nodes[isi].op != IR_OP_ISINF ||
        ir_attr_int(&g->nodes[isi], "detect_positive", 1) != 0)
        return false;
    const uint32_t mx = g->nodes[isi].inputs[0], rmi = g->values[mx].producer;
    if (rmi == IR_NONE || sole_consumer(g, cons, mx) != isi) return false;
    const struct ir_node *rm = &g->nodes[rmi];
    const uint32_t bias = rm->inputs[0], ax = ir_input(rm, 1);
    const int rb = g->values[bias].rank;
    if (rm->op != IR_OP_REDUCE_MAX || ir_attr_int(rm, "keepdims", 1) != 1 || ax == IR_NONE ||
        !ir_is_const(g, ax) || ir_numel(g, ax) != 1 || rb < 1 ||
        (ir_const_i64(g, ax, 0) != -1 && ir_const_i64(g, ax, 0) != rb - 1))
        return false;
    m->zero_rows = true;
    m->guard_bias = bias;
    return add_node(m, rmi) && add_inner(m, mx) && add_node(m, isi) && add_inner(m, cond) &&
           add_node(m, wh);
}

/* The fully-masked-row guards after the Softmax -> p with the kernel's zero_rows flag:
 *   dynamo SDPA:  Where(IsNaN(p), 0, p): zeroes the rows whose scores are all -inf (fully
 *                 masked: exp(-inf - -inf) = NaN) and rows with NaN/inf scores;
 *   ONNX Attention-23 expansion (passes/expand/attention.c):
 *                 Where(IsInf(ReduceMax(bias, axes=[-1], keepdims=1), detect_positive=0), 0, p):
 *                 zeroes the rows whose bias is all -inf; m->guard_bias = bias, which match_at
 *                 requires to be the mask it finds.
 * The kernels with zero_rows write 0 for a row whose softmax sum l is not > 0 (0 when every
 * key is masked, NaN when a score is NaN), so the fused node equals the dynamo guard exactly
 * and the opset-23 one on every row without NaN scores (where the unguarded spec gives NaN
 * too). If softmax output p feeds exactly these nodes, adds them (Where last) and their inner
 * values to m, sets m->zero_rows and returns true; p itself (two uses in the IsNaN form, both
 * absorbed) is not listed as an inner value (fuse_chain_ok wants single uses). */
static bool nan_guard(const struct ir_graph *g, const uint32_t *cons, uint32_t p,
                      struct att_match *m)
{
    const struct ir_value *pv = &g->values[p];
    if (pv->nuses == 1 && !pv->is_output) return inf_guard(g, cons, p, m);
    if (pv->nuses != 2 || pv->is_output) return false;
    uint32_t isn = IR_NONE, wh = IR_NONE;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++) {
            if (n->inputs[k] != p) continue;
            if (n->op == IR_OP_ISNAN) isn = i;
            else if (n->op == IR_OP_WHERE && k == 2) wh = i;
            else return false;
        }
    }
    if (isn == IR_NONE || wh == IR_NONE) return false;
    const struct ir_node *w = &g->nodes[wh];
    uint32_t cond = g->nodes[isn].outputs[0];
    double z;
    if (w->inputs[0] != cond || sole_consumer(g, cons, cond) != wh ||
        !fuse_const_scalar(g, w->inputs[1], &z) || z != 0.0 ||
        !same_dims(g, w->outputs[0], p) || g->values[w->outputs[0]].dtype != IR_F32)
        return false;
    m->zero_rows = true;
    return add_node(m, isn) && add_inner(m, cond) && add_node(m, wh);
}

/* MatMul(V_cf, Transpose(P, perm = swap of the last two axes)) -> attention output, channels-first
 *   with P [.., N, S] = Softmax over the last axis (keys), V_cf [.., D, S], Pᵀ [.., S, N]:
 *   O_cf[.., c, i] = Σ_j V_cf[.., c, j] · Pᵀ[.., j, i]
 *                  = Σ_j P[.., i, j] · V[.., j, c] = O[.., i, c]
 *   with V[.., j, c] = V_cf[.., c, j]: the usual P·V with V and O read/written transposed, i.e.
 *   token on the last axis (stride 1 when dense) and head dim c on axis r-2 (stride N or S).
 * Only a swap of the last two axes makes the contraction run over the keys j: another
 * permutation, or P used without the Transpose (MatMul(V, P) contracts over the query axis i),
 * is a different function and is rejected. Node tr is the Transpose consuming P (single use).
 * Adds tr and its output to m; returns the MatMul or IR_NONE with *why set. */
static uint32_t pt_form(const struct ir_graph *g, const uint32_t *cons, uint32_t tr,
                        struct att_match *m, const char **why)
{
    const struct ir_node *t = &g->nodes[tr];
    int perm[IR_MAX_RANK], r = g->values[t->inputs[0]].rank;
    transpose_perm(g, t, perm);
    for (int k = 0; k < r; k++)
        if (perm[k] != (k == r - 2 ? r - 1 : k == r - 1 ? r - 2 : k)) {
            *why = "softmax output transposed other than by a swap of its last two axes";
            return IR_NONE;
        }
    uint32_t pt = t->outputs[0], c = sole_consumer(g, cons, pt);
    if (c == IR_NONE || g->nodes[c].op != IR_OP_MATMUL || g->nodes[c].inputs[1] != pt ||
        g->nodes[c].inputs[0] == pt) {
        *why = "transposed softmax output does not feed MatMul(V, P^T) as its right operand";
        return IR_NONE;
    }
    if (!add_node(m, tr) || !add_inner(m, pt)) {
        *why = "too many nodes in the pattern";
        return IR_NONE;
    }
    return c;
}

/* Recognizes the attention anchored at Softmax node sm; fills m. On failure sets *why. */
static bool match_at(const struct ir_graph *g, const uint32_t *cons, uint32_t sm,
                     struct att_match *m, const char **why)
{
    const struct ir_node *smn = &g->nodes[sm];
    const struct ir_value *sv = &g->values[smn->outputs[0]];
    int r = sv->rank;
    memset(m, 0, sizeof *m);
    m->mask = IR_NONE;
    m->guard_bias = IR_NONE;
    *why = "too many nodes in the pattern";
    if (sv->dtype != IR_F32 || r < 2 || r > 4) {
        *why = "Softmax is not float32 of rank 2..4";
        return false;
    }
    int64_t axis = ir_attr_int(smn, "axis", -1);
    if (axis != -1 && axis != r - 1) {
        *why = "Softmax is not over the last axis";
        return false;
    }
    /* forward: [Where(IsNaN(P), 0, P)] -> [Cast] -> MatMul(P, V) */
    uint32_t pv = smn->outputs[0], mm2 = IR_NONE;
    bool ptf = false; /* P is MatMul's right operand through Transpose(last two): pt_form */
    bool guard = nan_guard(g, cons, pv, m);
    if (guard) pv = g->nodes[m->nodes[m->nnodes - 1]].outputs[0];
    else if (!add_inner(m, pv)) return false;
    for (;;) {
        uint32_t c = sole_consumer(g, cons, pv);
        if (c == IR_NONE) {
            *why = "softmax output is used more than once or is a graph output";
            return false;
        }
        const struct ir_node *n = &g->nodes[c];
        if (noop_cast(g, n)) {
            if (!add_node(m, c) || !add_inner(m, n->outputs[0])) return false;
            pv = n->outputs[0];
            continue;
        }
        if (n->op == IR_OP_MATMUL && n->inputs[0] == pv) mm2 = c;
        else if (n->op == IR_OP_MATMUL) {
            *why = "softmax output is MatMul's right operand without a transpose (contracts over "
                   "the query axis)";
            return false;
        } else if (n->op == IR_OP_TRANSPOSE) {
            mm2 = pt_form(g, cons, c, m, why);
            if (mm2 == IR_NONE) return false;
            ptf = true;
        }
        break;
    }
    if (mm2 == IR_NONE) {
        *why = "softmax output does not feed MatMul(P, V)";
        return false;
    }
    /* backward: scores chain down to MatMul(Q, Kᵀ) */
    double scale = 1.0;
    bool late_scale = false; /* a scale found between the Softmax and a (later) mask */
    uint32_t cur = smn->inputs[0], mm1 = IR_NONE;
    for (;;) {
        uint32_t p = fuse_producer(g, cur, IR_OP_UNKNOWN);
        if (p == IR_NONE) {
            *why = "scores are not computed by MatMul(Q, K^T)";
            return false;
        }
        const struct ir_node *n = &g->nodes[p];
        if (!add_inner(m, cur)) return false;
        if (n->op == IR_OP_MATMUL) {
            mm1 = p;
            break;
        }
        if (!add_node(m, p)) return false;
        uint32_t next;
        double f;
        if (scalar_scale(g, n, &next, &f)) {
            if (m->mask == IR_NONE && f != 1.0) late_scale = true; /* nearer the Softmax */
            scale *= f;
        } else if (noop_cast(g, n)) {
            next = n->inputs[0];
        } else if (n->op == IR_OP_ADD) {
            /* the scores side: a computed input shaped as the sum; if both are, the one made
             * by MatMul / a scalar scale / a Cast (the rest of the chain), else input 0 */
            int side = -1, cands = 0;
            for (int s = 0; s < 2; s++)
                if (!ir_is_const(g, n->inputs[s]) && same_dims(g, n->inputs[s], cur)) {
                    cands++;
                    if (side < 0) side = s;
                }
            if (cands == 2) {
                uint32_t p1 = fuse_producer(g, n->inputs[1], IR_OP_UNKNOWN);
                uint32_t p0 = fuse_producer(g, n->inputs[0], IR_OP_UNKNOWN);
                bool chain1 = p1 != IR_NONE && (g->nodes[p1].op == IR_OP_MATMUL ||
                                                g->nodes[p1].op == IR_OP_MUL ||
                                                g->nodes[p1].op == IR_OP_DIV ||
                                                g->nodes[p1].op == IR_OP_CAST);
                bool chain0 = p0 != IR_NONE && g->nodes[p0].op == IR_OP_MATMUL;
                side = chain1 && !chain0 ? 1 : 0;
            }
            if (side < 0) {
                *why = "scores Add has no recognizable scores input";
                return false;
            }
            next = n->inputs[side];
            uint32_t mk = n->inputs[1 - side];
            double z;
            if (fuse_const_scalar(g, mk, &z) && z == 0.0) {
                /* Add(zeros) of baddbmm(beta=0): dropped */
            } else if (m->mask != IR_NONE) {
                *why = "two additive masks";
                return false;
            } else if (late_scale) {
                *why = "scale applied after the mask";
                return false;
            } else if (g->values[mk].dtype != IR_F32) {
                *why = "mask is not float32";
                return false;
            } else {
                m->mask = mk;
            }
        } else if (n->op == IR_OP_MUL || n->op == IR_OP_DIV) {
            *why = "scores scaled by a factor that is not a scalar constant";
            return false;
        } else {
            *why = "unsupported op between MatMul(Q, K^T) and Softmax";
            return false;
        }
        cur = next;
    }
    const struct ir_node *n1 = &g->nodes[mm1], *n2 = &g->nodes[mm2];
    uint32_t qx = n1->inputs[0], ktx = n1->inputs[1], ox = n2->outputs[0];
    uint32_t vx = ptf ? n2->inputs[0] : n2->inputs[1];
    const uint32_t ops4[4] = {qx, ktx, vx, ox};
    for (int i = 0; i < 4; i++)
        if (g->values[ops4[i]].rank != r || g->values[ops4[i]].dtype != IR_F32) {
            *why = "Q, K^T, V and output are not float32 of the scores' rank";
            return false;
        }
    const struct ir_value *sc = &g->values[n1->outputs[0]];
    int64_t N = sc->dims[r - 2], S = sc->dims[r - 1], D = g->values[qx].dims[r - 1];
    int64_t B = r == 4 ? sc->dims[0] : (r == 3 ? sc->dims[0] : 1), H = r == 4 ? sc->dims[1] : 1;
    if (g->values[vx].dims[ptf ? r - 2 : r - 1] != D) {
        *why = "value head dim differs from query head dim";
        return false;
    }
    if (B == 0 || H == 0 || N == 0 || S == 0 || D == 0) {
        /* the strides of an empty axis say nothing; MatMul / Softmax handle empty dims */
        *why = "an empty dim (batch, heads, queries, keys or head dim 0)";
        return false;
    }
    /* logical axis positions (b, h, token, d) in each MatMul operand; in the pt_form V_cf and
     * the output are channels-first: token on the last axis, d on the one before */
    int bq = r == 4 ? 0 : (r == 3 ? 0 : -1), hq = r == 4 ? 1 : -1;
    const int axq[4] = {bq, hq, r - 2, r - 1}, axk[4] = {bq, hq, r - 1, r - 2};
    const int *axv = ptf ? axk : axq;
    int64_t ext[4];
    const uint32_t opv[3] = {qx, ktx, vx};
    const int *opax[3] = {axq, axk, axv};
    struct att_operand *opd[3] = {&m->q, &m->k, &m->v};
    for (int i = 0; i < 3; i++) {
        for (int a = 0; a < 4; a++) ext[a] = opax[i][a] < 0 ? 1 : g->values[opv[i]].dims[opax[i][a]];
        if ((ext[0] != 1 && ext[0] != B) || (ext[1] != 1 && ext[1] != H)) {
            *why = "operand batch dims do not match the scores";
            return false;
        }
        if (!walk_back(g, opv[i], opax[i], ext, m, opd[i])) return false;
    }
    if (m->v.scale != 1.0) { /* a scale on V is not foldable into the scores */
        *why = "V operand is scaled";
        return false;
    }
    for (int a = 0; a < 4; a++) ext[a] = axv[a] < 0 ? 1 : g->values[ox].dims[axv[a]];
    if (!walk_forward(g, cons, ox, axv, ext, m, &m->o)) return false;
    /* any head-dim stride is fine: the kernels take it (channels-first heads have d stride N) */
    if (m->guard_bias != IR_NONE && m->guard_bias != m->mask) {
        *why = "the masked-row guard after the Softmax tests another tensor than the mask";
        return false;
    }
    if (m->mask != IR_NONE) {
        if (mask_is_causal(g, m->mask, N, S)) {
            m->causal = true;
            m->mask = IR_NONE;
        } else {
            const struct ir_value *mv = &g->values[m->mask];
            int64_t mst[IR_MAX_RANK];
            dense_strides(g, m->mask, mst);
            const int axs[4] = {bq, hq, r - 2, r - 1};
            for (int a = 0; a < 4; a++) {
                int k = axs[a] < 0 ? -1 : axs[a] - (r - mv->rank);
                m->mst[a] = (k < 0 || mv->dims[k] == 1) ? 0 : mst[k];
            }
        }
    }
    if (!add_node(m, mm1) || !add_node(m, mm2) || !add_node(m, sm)) return false;
    if (!fuse_chain_ok(g, m->inner, m->ninner, why)) return false;
    m->scale = scale * m->q.scale * m->k.scale;
    m->dims[0] = B, m->dims[1] = H, m->dims[2] = N, m->dims[3] = S, m->dims[4] = D;
    return true;
}

bool pass_fuse_attention(struct ir_graph *g)
{
    uint32_t *cons = calloc(g->nvalues ? g->nvalues : 1, sizeof *cons);
    IR_ASSERT(cons);
    for (uint32_t v = 0; v < g->nvalues; v++) cons[v] = IR_NONE;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE) cons[n->inputs[k]] = i;
    }
    struct att_match *ms = NULL;
    int nm = 0, cap = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead || g->nodes[i].op != IR_OP_SOFTMAX) continue;
        if (nm == cap) {
            cap = cap ? cap * 2 : 8;
            ms = realloc(ms, sizeof *ms * (size_t)cap);
            IR_ASSERT(ms);
        }
        const char *why = NULL;
        if (match_at(g, cons, i, &ms[nm], &why)) nm++;
        else fuse_note(PASS, false, why);
    }
    for (int i = 0; i < nm; i++) {
        struct att_match *m = &ms[i];
        uint32_t ins[4] = {m->q.v, m->k.v, m->v.v, m->mask};
        uint32_t id = fuse_replace(g, IR_OP_FUSED_ATTENTION, m->nodes, m->nnodes, ins,
                                   m->mask != IR_NONE ? 4 : 3, &m->o.v, 1);
        ir_attr_set_ints(g, id, "dims", m->dims, 5);
        ir_attr_set_ints(g, id, "q_strides", m->q.st, 4);
        ir_attr_set_ints(g, id, "k_strides", m->k.st, 4);
        ir_attr_set_ints(g, id, "v_strides", m->v.st, 4);
        ir_attr_set_ints(g, id, "o_strides", m->o.st, 4);
        if (m->mask != IR_NONE) ir_attr_set_ints(g, id, "m_strides", m->mst, 4);
        ir_attr_set_float(g, id, "scale", (float)m->scale);
        ir_attr_set_int(g, id, "causal", m->causal);
        if (m->zero_rows) ir_attr_set_int(g, id, "zero_rows", 1);
        fuse_note(PASS, true, NULL);
    }
    free(ms);
    free(cons);
    return nm > 0;
}
