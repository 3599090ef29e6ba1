/* fuse_batched_linear.c — linears that share their input become one o2c.Gemm (batched_linear).
 *
 * Pattern (one group per input value x, all consumers found before anything is rewritten):
 *   MatMul(x, W_i) | Gemm(x, B_i, C_i){transA=0}  for i = 1..n, n >= 2, every weight constant
 *   -> o2c.Gemm(x, [W_1 | W_2 | ... | W_n], [b_1 | ... | b_n]) writing n outputs
 * (column split i = [off_i, off_i + N_i) goes to the i-th original output value, so consumers
 * keep reading their value ids: no copy kernels). Gemm's alpha is folded into its weight block,
 * beta * C into its bias block (C must be a constant of N or 1 elements, rank <= 2 with a
 * leading 1); transB is resolved by storing the block as [K, N_i]. Members without a bias get
 * zeros when some member has one. Groups larger than FG_MAX_SPLITS are cut into balanced
 * chunks (a lone leftover member stays as it was).
 * Typical: Q/K/V projections of self-attention (3 -> 1), K/V of cross-attention over the text
 * context, the time_emb_proj Gemms of every ResNet block reading SiLU(temb).
 * Assumes shape inference ran (dims known) and float32 data in host byte order.
 * Guarantees: weights are new constants (the originals are left to DCE); nothing else changes.
 * Also defines the linear-matching helpers declared in fuse.h (shared with gemm_epilogue).
 */
#include "passes/fuse/fuse.h"

#include <stdlib.h>
#include <string.h>

#define FG_MAX_SPLITS 8 /* outputs one o2c.Gemm may write (kernels/fgemm.cl) */

bool fuse_linear_match(const struct ir_graph *g, uint32_t node, struct fuse_linear *l,
                       const char **why)
{
    const struct ir_node *n = &g->nodes[node];
    memset(l, 0, sizeof *l);
    l->node = node;
    l->c = IR_NONE;
    l->alpha = 1.0f;
    l->beta = 1.0f;
    if (n->dead || (n->op != IR_OP_MATMUL && n->op != IR_OP_GEMM)) {
        *why = "not a MatMul/Gemm";
        return false;
    }
    if (n->ninputs < 2 || n->noutputs < 1) {
        *why = "malformed node";
        return false;
    }
    l->x = n->inputs[0];
    l->w = n->inputs[1];
    l->y = n->outputs[0];
    const struct ir_value *xv = &g->values[l->x], *wv = &g->values[l->w], *yv = &g->values[l->y];
    if (!ir_is_const(g, l->w) || wv->rank != 2) {
        *why = "weight is not a 2-D constant";
        return false;
    }
    if (xv->dtype != IR_F32 || wv->dtype != IR_F32 || yv->dtype != IR_F32 || !xv->dims_known ||
        !yv->dims_known || xv->rank < 1) {
        *why = "not float32 with known dims";
        return false;
    }
    if (n->op == IR_OP_MATMUL) {
        l->K = wv->dims[0];
        l->N = wv->dims[1];
        if (xv->dims[xv->rank - 1] != l->K) {
            *why = "inner dims differ";
            return false;
        }
        if (l->K == 0) {
            *why = "empty inner dim (K = 0)";
            return false;
        }
        return true;
    }
    if (ir_attr_int(n, "transA", 0) != 0 || xv->rank != 2) {
        *why = "Gemm with transA or non-2-D A";
        return false;
    }
    l->trans_w = ir_attr_int(n, "transB", 0) != 0;
    l->K = l->trans_w ? wv->dims[1] : wv->dims[0];
    l->N = l->trans_w ? wv->dims[0] : wv->dims[1];
    l->alpha = ir_attr_float(n, "alpha", 1.0f);
    l->beta = ir_attr_float(n, "beta", 1.0f);
    if (xv->dims[1] != l->K) {
        *why = "inner dims differ";
        return false;
    }
    if (l->K == 0) {
        *why = "empty inner dim (K = 0)";
        return false;
    }
    uint32_t c = ir_input(n, 2);
    if (c != IR_NONE && l->beta != 0.0f) {
        const struct ir_value *cv = &g->values[c];
        int64_t cn = ir_is_const(g, c) ? ir_numel(g, c) : -1;
        if (cv->dtype != IR_F32 || (cn != 1 && cn != l->N) ||
            (cv->rank == 2 && cv->dims[0] != 1 && cn != 1) || cv->rank > 2) {
            *why = "Gemm C is not a constant [N] bias";
            return false;
        }
        l->c = c;
    }
    return true;
}

void fuse_linear_write_w(const struct ir_graph *g, const struct fuse_linear *l, float *dst,
                         int64_t ld, int64_t col0)
{
    void *owned;
    const float *w = ir_const_bytes(g, l->w, &owned);
    for (int64_t k = 0; k < l->K; k++)
        for (int64_t j = 0; j < l->N; j++) {
            float v = l->trans_w ? w[j * l->K + k] : w[k * l->N + j];
            dst[k * ld + col0 + j] = l->alpha == 1.0f ? v : l->alpha * v;
        }
    free(owned);
}

bool fuse_linear_add_bias(const struct ir_graph *g, const struct fuse_linear *l, float *dst)
{
    if (l->c == IR_NONE) return false;
    void *owned;
    const float *c = ir_const_bytes(g, l->c, &owned);
    const bool scalar = ir_numel(g, l->c) == 1;
    for (int64_t j = 0; j < l->N; j++) dst[j] += l->beta * c[scalar ? 0 : j];
    free(owned);
    return true;
}

/* ir_lazy fill of a batched weight [K, N]: ctx = the group's linears, p = {count, N}. */
static void fill_batched(const struct ir_graph *g, const struct ir_lazy *l, void *dst)
{
    const struct fuse_linear *mem = l->ctx;
    int64_t off = 0;
    for (int64_t i = 0; i < l->p[0]; i++) {
        fuse_linear_write_w(g, &mem[i], dst, l->p[1], off);
        off += mem[i].N;
    }
}

/* Rewrites one group of linears (all reading the same x) into one o2c.Gemm; the concatenated
 * weight is lazy (made when written: fill_batched). */
static void rewrite_group(struct ir_graph *g, const struct fuse_linear *mem, int cnt)
{
    int64_t K = mem[0].K, N = 0;
    bool any_bias = false;
    for (int i = 0; i < cnt; i++) {
        N += mem[i].N;
        any_bias |= mem[i].c != IR_NONE;
    }
    float *b = any_bias ? ir_alloc(g, sizeof(float) * (size_t)N) : NULL;
    struct fuse_linear *keep = ir_alloc(g, sizeof *keep * (size_t)cnt);
    memcpy(keep, mem, sizeof *keep * (size_t)cnt);
    int64_t off = 0;
    uint32_t old[FG_MAX_SPLITS], outs[FG_MAX_SPLITS];
    for (int i = 0; i < cnt; i++) {
        if (b) fuse_linear_add_bias(g, &mem[i], b + off);
        off += mem[i].N;
        old[i] = mem[i].node;
        outs[i] = mem[i].y;
    }
    const int64_t wd[2] = {K, N};
    const struct ir_lazy fill = {.fill = fill_batched, .src = {IR_NONE, IR_NONE, IR_NONE, IR_NONE},
                                 .p = {cnt, N}, .ctx = keep};
    uint32_t wid = ir_lazy_add(g, ir_sprintf(g, "%s/o2c_batched_w", g->values[mem[0].y].name),
                               IR_F32, 2, wd, sizeof(float) * (size_t)(K * N), &fill);
    uint32_t bid = IR_NONE;
    if (b)
        bid = ir_const_add(g, ir_sprintf(g, "%s/o2c_batched_b", g->values[mem[0].y].name),
                           IR_F32, 1, &N, b, sizeof(float) * (size_t)N);
    const uint32_t ins[3] = {mem[0].x, wid, bid};
    uint32_t id = fuse_replace(g, IR_OP_FUSED_GEMM, old, cnt, ins, b ? 3 : 2, outs, (uint32_t)cnt);
    ir_attr_set_int(g, id, "activation", 0);
    fuse_note("batched_linear", true, NULL);
}

bool pass_fuse_batched_linear(struct ir_graph *g)
{
    /* collect every linear with a constant weight, then group by input value */
    const uint32_t nn = g->nnodes;
    struct fuse_linear *cand = ir_alloc(g, sizeof(*cand) * (nn ? nn : 1));
    uint32_t ncand = 0;
    for (uint32_t i = 0; i < nn; i++) {
        const char *why;
        if (g->nodes[i].dead) continue;
        if (fuse_linear_match(g, i, &cand[ncand], &why)) ncand++;
    }
    bool *done = ir_alloc(g, ncand ? ncand : 1);
    struct fuse_linear *grp = ir_alloc(g, sizeof(*grp) * (ncand ? ncand : 1));
    bool changed = false;
    for (uint32_t i = 0; i < ncand; i++) {
        if (done[i]) continue;
        int cnt = 0;
        for (uint32_t j = i; j < ncand; j++)
            if (!done[j] && cand[j].x == cand[i].x && cand[j].K == cand[i].K) {
                grp[cnt++] = cand[j];
                done[j] = true;
            }
        if (cnt < 2) continue;
        /* every member must also be legal to merge: outputs are kept, so only the shapes
         * matter (same x => same M) */
        int nchunks = (cnt + FG_MAX_SPLITS - 1) / FG_MAX_SPLITS;
        int per = (cnt + nchunks - 1) / nchunks;
        for (int s = 0; s < cnt; s += per) {
            int c = cnt - s < per ? cnt - s : per;
            if (c < 2) {
                fuse_note("batched_linear", false, "leftover single linear of a large group");
                continue;
            }
            rewrite_group(g, grp + s, c);
            changed = true;
        }
    }
    return changed;
}
