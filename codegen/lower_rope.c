/* lower_rope.c — o2c.Rope (ops.def family "rope", passes/fuse/rope.c) -> kernels/rope.cl.
 *
 * One launch, one work-item per pair of x's last axis, for both kernel classes (an elementwise
 * op: one kernel is coalesced on GPUs and vectorized across work-items by PoCL). cos/sin are
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
    for (int k = 0; k < rank; k++) dims[k] = xv->dims[k];
    ka_bcast_strides(g, node, n->inputs[1], rank, dims, s[1]);
    ka_bcast_strides(g, node, n->inputs[2], rank, dims, s[2]);
    const int64_t csd = s[1][rank - 1], ssd = s[2][rank - 1];
    ka_dense_strides(rank - 1, dims, s[0]);
    const int r = ka_collapse(rank - 1, dims, 3, s);
    if (r > KA_EW_RANK)
        ir_fatal_node(g, n, "o2c.Rope: cos/sin broadcasting needs %d non-mergeable row axes (the "
                      "kernel handles %d)", r, KA_EW_RANK);
    char kname[64];
    snprintf(kname, sizeof kname, "rope_%s", cg_use(cg, "rope", IR_F32));
    ka_launch(cg, node, kname, cnt / 2);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, n->inputs[1]);
    cg_arg_buf(cg, n->inputs[2]);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt / 2);
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
    return true;
}
