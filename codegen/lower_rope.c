/* lower_rope.c — o2c.Rope (ops.def family "rope", passes/fuse/rope.c) -> kernels/rope.cl.
 *
 * One launch. Kernel variants (lower.h: cg_variant): the cpu class runs rope_rows, one
 * work-item per row of x's last axis with float2 / float4 loads along it (PoCL vectorizes
 * explicit vectors, not the per-pair index math: on a [1,1024,8,128] x, 0.53 ms vs 9.2 ms for
 * the per-pair kernel on the same PoCL device); the gpu class runs rope, one work-item per pair,
 * adjacent work-items on adjacent pairs (coalesced). cos/sin are
 * read through broadcast strides: x's leading (row) dims are collapsed together with the cos/sin
 * strides over them (ka_collapse: size-1 axes dropped, axes merged where all three are
 * contiguous), the last axis is passed apart (stride 1, or 0 where cos/sin have one element
 * along it). Assumes float32 (the pass checks). Fatal (located) for an odd last axis, cos/sin
 * that do not broadcast to x, more than 6 row axes left after collapsing, >= 2^31 elements.
 */
#include "lower_ka.h"

#include <stdio.h>

bool lower_rope(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x];
    const int64_t cnt = ka_numel(g, node, y);
    const int rank = xv->rank;
    const int64_t D = rank >= 1 ? xv->dims[rank - 1] : 0;
    if (xv->dtype != IR_F32 || D % 2 || D < 2)
        ir_fatal_node(g, n, "o2c.Rope: x must be float32 with an even last axis (got %s, %lld)",
                      ir_dtype_name(xv->dtype), (long long)D);
    if (cnt == 0) return true;
    /* operands: 0 = x rows (dense, in rows), 1 = cos, 2 = sin over x's dims */
    int64_t dims[IR_MAX_RANK * 2], s[3][IR_MAX_RANK * 2];
    for (int k = 0; k < rank; k++)
        dims[k] = xv->dims[k];
    ka_bcast_strides(g, node, n->inputs[1], rank, dims, s[1]);
    ka_bcast_strides(g, node, n->inputs[2], rank, dims, s[2]);
    const int64_t csd = s[1][rank - 1], ssd = s[2][rank - 1];
    ka_dense_strides(rank - 1, dims, s[0]);
    const int r = ka_collapse(rank - 1, dims, 3, s);
    if (r > KA_EW_RANK)
        ir_fatal_node(g, n,
                      "o2c.Rope: cos/sin broadcasting needs %d non-mergeable row axes (the "
                      "kernel handles %d)",
                      r, KA_EW_RANK);
    /* the cpu class: one work-item per row (rope_rows); the gpu class: one per pair (rope) */
    for (int v = 0; v < 2; v++) {
        cg_variant(cg, v == 0 ? CG_VARIANT_CPU : CG_VARIANT_GPU);
        char kname[64];
        snprintf(kname, sizeof kname, "%s_%s", v == 0 ? "rope_rows" : "rope",
                 cg_use(cg, "rope", IR_F32));
        const int64_t items = v == 0 ? cnt / D : cnt / 2;
        ka_launch(cg, node, kname, items);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, n->inputs[1]);
        cg_arg_buf(cg, n->inputs[2]);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, items);
        cg_arg_i32(cg, D / 2);
        cg_arg_i32(cg, ir_attr_int(n, "interleaved", 1) ? 1 : 0);
        cg_arg_i32(cg, r);
        for (int which = 0; which < 3; which++)
            for (int k = 0; k < KA_EW_RANK; k++) {
                const int j = k - (KA_EW_RANK - r);
                cg_arg_i32(cg, which == 0 ? (j >= 0 ? dims[j] : 1) : (j >= 0 ? s[which][j] : 0));
            }
        cg_arg_i32(cg, csd);
        cg_arg_i32(cg, ssd);
    }
    return true;
}
