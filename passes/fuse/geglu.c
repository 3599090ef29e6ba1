/* geglu.c — GEGLU feed-forwards into the GEMM epilogue: the projection o2c.Gemm, the chunk into
 * two halves, the GELU of the gate and the product become one o2c.Gemm{activation 5|6} whose
 * store writes hidden * GELU(gate) (kernels/fgemm.cl, kernels/gemm_gpu.cl GG_FGEGLU_DEFINE).
 *
 * Pattern (after gemm_epilogue; z = the o2c.Gemm's single output [.., 2F], no activation, no
 * residual; every intermediate single-use and not a graph output):
 *   h, g = Split(z, axis=-1, two outputs of F) | Slice(z, [0, F), axis -1), Slice(z, [F, 2F))
 *   y    = Mul(h, Gelu(g)) | Mul(Gelu(g), h)           (g either half; Gelu erf or tanh)
 * Algebra: z = x W + b with W = [Wh | Wg], b = [bh | bg]: y = (x Wh + bh) * GELU(x Wg + bg).
 * Result: o2c.Gemm(x, W', b') {activation 5 (GELU erf) / 6 (GELU tanh)} -> y, where W' [K, 2 F16]
 * (F16 = F rounded up to 16) holds the columns in pair order, 16 hidden then the 16 gate
 * columns of the same outputs: W'[:, 32q + j] = Wh[:, 16q + j], W'[:, 32q + 16 + j] =
 * Wg[:, 16q + j] (zero beyond F), b' the same, so a 16-column weight panel pair (2q, 2q+1)
 * makes output columns 16q .. 16q+15 (ops.def o2c.Gemm). W' depends on the weights only.
 * Assumes: shape inference ran; float32. Matching never mutates; each match is rewritten
 * before the next o2c.Gemm is looked at (matches never share nodes).
 */
#include "passes/fuse/fuse.h"

#include <stdlib.h>
#include <string.h>

#define PASS "geglu"

/* One match. */
struct gg_match {
    uint32_t gemm;    /* the projection o2c.Gemm */
    uint32_t old[5];  /* nodes replaced: gemm, chunk node(s), Gelu, Mul */
    int nold;         /* entries of old */
    uint32_t out;     /* y [.., F] */
    int gate_half;    /* 0: the gate is the first half, 1: the second (diffusers) */
    int act;          /* 5 GELU erf, 6 GELU tanh */
    int64_t F;        /* output width */
};

static bool match(const struct ir_graph *g, uint32_t gi, struct gg_match *m)
{
    const struct ir_node *gn = &g->nodes[gi];
    if (gn->noutputs != 1 || ir_attr_int(gn, "activation", 0) != 0 || ir_input(gn, 3) != IR_NONE)
        return false;
    uint32_t z = gn->outputs[0];
    const struct ir_value *zv = &g->values[z];
    if (zv->rank < 1 || zv->dims[zv->rank - 1] % 2) return false;
    int64_t F = zv->dims[zv->rank - 1] / 2;
    uint32_t h[2], chunk[2];
    int nc;
    if (F < 1 || !fuse_halves(g, z, F, true, h, chunk, &nc)) return false;
    /* the gate goes through Gelu, the other half straight into the Mul */
    for (int gh = 0; gh < 2; gh++) {
        uint32_t ge = fuse_sole_user(g, h[gh]);
        if (ge == IR_NONE || g->nodes[ge].op != IR_OP_GELU) continue;
        uint32_t mul = fuse_sole_user(g, g->nodes[ge].outputs[0]);
        if (mul == IR_NONE || g->nodes[mul].op != IR_OP_MUL ||
            fuse_other_input(&g->nodes[mul], g->nodes[ge].outputs[0]) != h[1 - gh] ||
            fuse_sole_user(g, h[1 - gh]) != mul)
            continue;
        const struct ir_value *yv = &g->values[g->nodes[mul].outputs[0]];
        if (!fuse_same_shape(yv, &g->values[h[0]])) continue;
        const char *ap = ir_attr_string(&g->nodes[ge], "approximate", "none");
        int act = strcmp(ap, "none") == 0 ? 5 : (strcmp(ap, "tanh") == 0 ? 6 : 0);
        if (!act) {
            fuse_note(PASS, false, "Gelu approximate is neither none nor tanh");
            return false;
        }
        if (zv->dtype != IR_F32) {
            fuse_note(PASS, false, "not float32");
            return false;
        }
        memset(m, 0, sizeof *m);
        m->gemm = gi;
        m->old[m->nold++] = gi;
        for (int k = 0; k < nc; k++) m->old[m->nold++] = chunk[k];
        m->old[m->nold++] = ge;
        m->old[m->nold++] = mul;
        m->out = g->nodes[mul].outputs[0];
        m->gate_half = gh;
        m->act = act;
        m->F = F;
        return true;
    }
    return false;
}

/* A copy of the first (rows of) columns of src [rows, 2F] (row length 2F; rows = 1 for a bias)
 * in pair order into a new [rows, 2 F16] constant (see the banner); gate_half says which half
 * of src is the gate. */
static void pair_rows(const float *s, float *d, int64_t rows, int64_t F, int gate_half)
{
    const int64_t F16 = (F + 15) / 16 * 16, ld = 2 * F16;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < F; c++) {
            const int64_t at = r * ld + (c / 16) * 32 + c % 16;
            d[at] = s[r * 2 * F + (1 - gate_half) * F + c];  /* hidden */
            d[at + 16] = s[r * 2 * F + gate_half * F + c];   /* gate */
        }
}

/* ir_lazy fill of a pair-ordered weight: src[0] float32 [rows, 2F], p = {rows, F, gate_half}. */
static void fill_pairs(const struct ir_graph *g, const struct ir_lazy *l, void *dst)
{
    void *owned;
    const float *s = ir_const_bytes(g, l->src[0], &owned);
    pair_rows(s, dst, l->p[0], l->p[1], (int)l->p[2]);
    free(owned);
}

static uint32_t pair_order(struct ir_graph *g, uint32_t src, int64_t rows, int64_t F,
                           int gate_half, const char *name)
{
    const int64_t F16 = (F + 15) / 16 * 16, ld = 2 * F16;
    IR_ASSERT(g->values[src].dtype == IR_F32);
    if (rows == 1) {
        float *d = ir_alloc(g, sizeof(float) * (size_t)ld); /* zeroed */
        void *owned;
        pair_rows(ir_const_bytes(g, src, &owned), d, 1, F, gate_half);
        free(owned);
        return ir_const_add(g, name, IR_F32, 1, &ld, d, sizeof(float) * (size_t)ld);
    }
    const int64_t dims[2] = {rows, ld};
    const struct ir_lazy fill = {.fill = fill_pairs, .src = {src, IR_NONE, IR_NONE, IR_NONE},
                                 .p = {rows, F, gate_half}};
    return ir_lazy_add(g, name, IR_F32, 2, dims, sizeof(float) * (size_t)(rows * ld), &fill);
}

static void rewrite(struct ir_graph *g, const struct gg_match *m)
{
    const struct ir_node *gn = &g->nodes[m->gemm];
    uint32_t x = gn->inputs[0], w = gn->inputs[1], b = ir_input(gn, 2);
    const char *base = g->values[m->out].name;
    int64_t K = g->values[w].dims[0];
    uint32_t ins[3] = {x, pair_order(g, w, K, m->F, m->gate_half, ir_sprintf(g, "%s/o2c_geglu_w", base)),
                       IR_NONE};
    if (b != IR_NONE) ins[2] = pair_order(g, b, 1, m->F, m->gate_half, ir_sprintf(g, "%s/o2c_geglu_b", base));
    uint32_t id = fuse_replace(g, IR_OP_FUSED_GEMM, m->old, m->nold, ins, b != IR_NONE ? 3 : 2,
                               &m->out, 1);
    ir_attr_set_int(g, id, "activation", m->act);
    fuse_note(PASS, true, NULL);
}

bool pass_fuse_geglu(struct ir_graph *g)
{
    uint32_t nn = g->nnodes, nm = 0;
    for (uint32_t i = 0; i < nn; i++) {
        struct gg_match m;
        if (g->nodes[i].dead || g->nodes[i].op != IR_OP_FUSED_GEMM || !match(g, i, &m)) continue;
        rewrite(g, &m);
        nm++;
    }
    return nm > 0;
}
