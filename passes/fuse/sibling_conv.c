/* sibling_conv.c — convolutions that read the same input with the same geometry become one
 * o2c.Conv with concatenated weights writing several outputs (sibling_conv).
 *
 * Pattern (one group per input value x, all convs found before anything is rewritten):
 *   Conv_i(x, W_i, [b_i]) | o2c.Conv_i(x, W_i, [b_i]){act, div}   i = 1..n, n >= 2
 *   -> o2c.Conv(x, [W_1; W_2; ...; W_n], [b_1; ...; b_n]){act, div} writing n outputs
 * (output channel ranges [off_i, off_i + OC_i) go to the i-th original output value, so
 * consumers keep reading their value ids: no Slice, no copy kernels). Members must share the
 * resolved geometry (kernel dims, strides, dilations, begin/end pads after auto_pad, group = 1,
 * 1-D or 2-D), have float32 constant weights (and constant biases, zeros for members without
 * one when another has one), the same activation and output divisor (conv_epilogue runs
 * first; a member whose epilogue differs from the others' is left as it was, with a reason),
 * and no residual. Groups larger than SC_MAX_SPLITS are cut into balanced chunks (a lone
 * leftover member stays as it was).
 * Typical: the q/k/v 1x1 convs of a CompVis/ldm AttnBlock (VAE mid block): 3 launches reading
 * the GroupNorm output -> 1 (cpu class: 6 -> 2 with the input re-layout launches).
 *
 * DESIGN. Two ways were weighed:
 *  (a) lower 1x1 / stride 1 / pad 0 siblings to the batched GEMM of batched_linear
 *      (kernels/fgemm.cl, gemm_gpu.cl GG_FGEMM): those kernels compute Y[M, N] = A[M, K] W[K, N]
 *      with A row-major activations and split the N (weight) columns across outputs. For an
 *      NCHW conv the activations are X[n] = [C, P], i.e. A would have to be X[n]ᵀ (K-major
 *      rows), and the split dim (output channels) would be the row dim of the result in NCHW:
 *      it needs a transposed-A loader, a transposed store and a batch over n in both kernel
 *      classes — a new GEMM variant, not a reuse — and covers only pointwise convs.
 *  (b) a multi-output store in the existing conv kernels (chosen): the conv kernels already
 *      compute all OC channels of an [N, OC, P] output from one packed weight; only the store
 *      changes: channel oc goes to split s = #{o_k <= oc} at channel oc - o_s of Y_s
 *      (kernels/fconv.cl fc_split, gemm_gpu.cl gg_conv_store; four output buffers and three
 *      offsets per launch, a single output passes o_k = OC). Every path of both kernel classes
 *      keeps working (cpu fconv_v direct/im2col, its fallbacks, gpu implicit GEMM with
 *      split-K reduce), any kernel size falls out for free (3x3 siblings too), batch > 1 and
 *      odd per-member channel counts need nothing special (the split is per channel, not per
 *      OCB panel), and the weight stays one stored tensor with its own layout-hash entry (the
 *      concatenated [sum OC_i, C, k...] constant, packed as any conv weight).
 *  The cost of (b): one integer compare chain per stored channel (outside the MAC loops).
 * Assumes shape inference ran (dims known) and float32 data in host byte order.
 * Guarantees: weights and biases are new constants (the originals are left to DCE); nothing
 * else changes. Every conv that shares its input with another conv is noted: applied once per
 * merged group, or rejected with the reason it was left alone.
 */
#include "passes/fuse/fuse.h"
#include "ref/ref_util.h"

#include <stdlib.h>
#include <string.h>

#define PASS "sibling_conv"
#define SC_MAX_SPLITS 4 /* outputs one o2c.Conv may write (codegen/sched_gemm.h) */

/* One candidate conv with everything that must match its siblings'. */
struct sc_conv {
    uint32_t node;              /* the Conv / o2c.Conv */
    uint32_t x, w, b, y;        /* input, weight [OC, C, k...], bias or IR_NONE, output */
    int64_t oc;                 /* output channels */
    struct ref_conv_geom geo;   /* resolved geometry */
    int64_t act;                /* o2c.Conv activation (0 for a plain Conv) */
    float div;                  /* o2c.Conv output_divisor (1 for a plain Conv) */
};

/* Fills *c for node i if it is a conv this pass can merge; else *why says why not. */
static bool candidate(const struct ir_graph *g, uint32_t i, struct sc_conv *c, const char **why)
{
    const struct ir_node *n = &g->nodes[i];
    memset(c, 0, sizeof *c);
    c->node = i;
    c->x = n->inputs[0];
    c->w = n->inputs[1];
    c->b = ir_input(n, 2);
    c->y = n->outputs[0];
    c->div = 1.0f;
    const struct ir_value *xv = &g->values[c->x], *wv = &g->values[c->w], *yv = &g->values[c->y];
    if (n->noutputs != 1 || xv->dtype != IR_F32 || yv->dtype != IR_F32 || !xv->dims_known ||
        !yv->dims_known) {
        *why = "not float32 with known dims";
        return false;
    }
    if (xv->rank != 3 && xv->rank != 4) {
        *why = "not a 1-D or 2-D conv";
        return false;
    }
    if (!ir_is_const(g, c->w) || wv->dtype != IR_F32 || wv->rank != xv->rank) {
        *why = "weight is not a float32 constant";
        return false;
    }
    if (c->b != IR_NONE && (!ir_is_const(g, c->b) ||
                            g->values[c->b].dtype != IR_F32 || ir_numel(g, c->b) != wv->dims[0])) {
        *why = "bias is not a float32 constant of OC elements";
        return false;
    }
    if (ir_input(n, 3) != IR_NONE) {
        *why = "conv with a residual epilogue";
        return false;
    }
    ref_conv_geom(g, n, xv->dims, xv->rank, wv->dims + 2, false, &c->geo);
    if (ir_attr_int(n, "group", 1) != 1 || wv->dims[1] != xv->dims[1]) {
        *why = "grouped conv";
        return false;
    }
    if (xv->dims[1] == 0) {
        *why = "no input channels (C = 0)";
        return false;
    }
    c->oc = wv->dims[0];
    if (n->op == IR_OP_FUSED_CONV) {
        c->act = ir_attr_int(n, "activation", 0);
        c->div = ir_attr_float(n, "output_divisor", 1.0f);
    }
    return true;
}

/* Same geometry and epilogue: the two can share one launch. */
static bool compatible(const struct sc_conv *a, const struct sc_conv *b)
{
    const struct ref_conv_geom *p = &a->geo, *q = &b->geo;
    if (p->nsp != q->nsp || a->act != b->act || a->div != b->div) return false;
    for (int k = 0; k < p->nsp; k++)
        if (p->k[k] != q->k[k] || p->s[k] != q->s[k] || p->d[k] != q->d[k] ||
            p->pb[k] != q->pb[k] || p->pe[k] != q->pe[k] || p->out[k] != q->out[k])
            return false;
    return true;
}

/* Rewrites one group of compatible convs (all reading the same x) into one o2c.Conv. */
static void rewrite_group(struct ir_graph *g, const struct sc_conv *mem, int cnt)
{
    const struct ir_value *w0 = &g->values[mem[0].w];
    const int64_t per = ir_numel(g, mem[0].w) / mem[0].oc; /* C * k... floats per channel */
    int64_t OC = 0;
    bool any_bias = false, shape_dep = false;
    for (int i = 0; i < cnt; i++) {
        OC += mem[i].oc;
        any_bias |= mem[i].b != IR_NONE;
        shape_dep |= g->values[mem[i].w].shape_dep;
        if (mem[i].b != IR_NONE) shape_dep |= g->values[mem[i].b].shape_dep;
    }
    float *w = ir_alloc(g, sizeof(float) * (size_t)(OC * per));
    float *b = any_bias ? ir_alloc(g, sizeof(float) * (size_t)OC) : NULL; /* zeroed */
    uint32_t old[SC_MAX_SPLITS], outs[SC_MAX_SPLITS];
    int64_t off = 0;
    for (int i = 0; i < cnt; i++) {
        void *owned;
        memcpy(w + off * per, ir_const_bytes(g, mem[i].w, &owned),
               sizeof(float) * (size_t)(mem[i].oc * per));
        free(owned);
        if (mem[i].b != IR_NONE) {
            memcpy(b + off, ir_const_bytes(g, mem[i].b, &owned), sizeof(float) * (size_t)mem[i].oc);
            free(owned);
        }
        off += mem[i].oc;
        old[i] = mem[i].node;
        outs[i] = mem[i].y;
    }
    int64_t wd[IR_MAX_RANK];
    memcpy(wd, w0->dims, sizeof(int64_t) * (size_t)w0->rank);
    wd[0] = OC;
    const char *base = g->values[mem[0].y].name;
    uint32_t wid = ir_const_add(g, ir_sprintf(g, "%s/o2c_sibling_w", base), IR_F32, w0->rank, wd,
                                w, sizeof(float) * (size_t)(OC * per));
    g->values[wid].shape_dep = shape_dep;
    uint32_t bid = IR_NONE;
    if (b) {
        bid = ir_const_add(g, ir_sprintf(g, "%s/o2c_sibling_b", base), IR_F32, 1, &OC, b,
                           sizeof(float) * (size_t)OC);
        g->values[bid].shape_dep = shape_dep;
    }
    /* the first member's Conv attributes (the geometry is the same for all) */
    const struct ir_node *n0 = &g->nodes[mem[0].node];
    const uint32_t nattrs = n0->nattrs;
    struct ir_attr *attrs = ir_alloc(g, sizeof *attrs * (nattrs ? nattrs : 1));
    if (nattrs) memcpy(attrs, n0->attrs, sizeof *attrs * nattrs);
    const uint32_t ins[3] = {mem[0].x, wid, bid};
    uint32_t id = fuse_replace(g, IR_OP_FUSED_CONV, old, cnt, ins, b ? 3 : 2, outs, (uint32_t)cnt);
    g->nodes[id].attrs = attrs;
    g->nodes[id].nattrs = nattrs;
    ir_attr_set_int(g, id, "activation", mem[0].act);
    ir_attr_set_float(g, id, "output_divisor", mem[0].div);
    fuse_note(PASS, true, NULL);
}

bool pass_fuse_sibling_conv(struct ir_graph *g)
{
    const uint32_t nn = g->nnodes;
    /* every live conv, then group by input value */
    uint32_t *convs = ir_alloc(g, sizeof(uint32_t) * (nn ? nn : 1));
    uint32_t nconv = 0;
    for (uint32_t i = 0; i < nn; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (!n->dead && (n->op == IR_OP_CONV || n->op == IR_OP_FUSED_CONV) && n->ninputs >= 2)
            convs[nconv++] = i;
    }
    bool *done = ir_alloc(g, nconv ? nconv : 1);
    struct sc_conv *ok = ir_alloc(g, sizeof(*ok) * (nconv ? nconv : 1));
    bool *used = ir_alloc(g, nconv ? nconv : 1);
    bool changed = false;
    for (uint32_t i = 0; i < nconv; i++) {
        if (done[i]) continue;
        const uint32_t x = g->nodes[convs[i]].inputs[0];
        uint32_t sib = 0, nok = 0;
        for (uint32_t j = i; j < nconv; j++)
            if (!done[j] && g->nodes[convs[j]].inputs[0] == x) sib++;
        if (sib < 2) {
            done[i] = true;
            continue;
        }
        for (uint32_t j = i; j < nconv; j++) {
            if (done[j] || g->nodes[convs[j]].inputs[0] != x) continue;
            done[j] = true;
            const char *why;
            if (candidate(g, convs[j], &ok[nok], &why)) nok++;
            else fuse_note(PASS, false, why);
        }
        /* classes of compatible candidates, in node order */
        memset(used, 0, nok ? nok : 1);
        struct sc_conv grp[64];
        for (uint32_t a = 0; a < nok; a++) {
            if (used[a]) continue;
            int cnt = 0;
            for (uint32_t c = a; c < nok && cnt < 64; c++)
                if (!used[c] && compatible(&ok[a], &ok[c])) {
                    used[c] = true;
                    grp[cnt++] = ok[c];
                }
            if (cnt < 2) {
                fuse_note(PASS, false, "no sibling with the same geometry and epilogue");
                continue;
            }
            const int nchunks = (cnt + SC_MAX_SPLITS - 1) / SC_MAX_SPLITS;
            const int per = (cnt + nchunks - 1) / nchunks;
            for (int s = 0; s < cnt; s += per) {
                const int c = cnt - s < per ? cnt - s : per;
                if (c < 2) {
                    fuse_note(PASS, false, "leftover single conv of a large group");
                    continue;
                }
                rewrite_group(g, grp + s, c);
                changed = true;
            }
        }
    }
    return changed;
}
