/* lower_conv.c — Conv-11 and ConvTranspose-11 -> kernels/conv.cl (direct convolution, one
 * work-item per output element).
 *
 * Conv now goes through fconv_emit (codegen/lower_fconv.c, kernels/fconv.cl) with an empty
 * epilogue: its register-tiled fconv_v kernels (constant weights) run SD's convs at ~15-20x
 * conv_oc4 on PoCL, and fconv_oc4w4 (run-time weights) at ~2x. The text below describes the
 * ConvTranspose path and the conv / conv_oc4 kernels still in kernels/conv.cl.
 *
 * Conv whose output channels per group are a multiple of 4 uses conv_oc4 (4 channels per
 * work-item: 3-4x faster on PoCL for SD-sized layers), otherwise the scalar kernel.
 * Geometry (pads from pads/auto_pad, strides, dilations, group, ConvTranspose output_padding /
 * output_shape) comes from ref_conv_geom / ref_convt_geom, the same code shape inference and the
 * reference use, so the three always agree. 1-D and 2-D convolutions are passed to the kernel
 * as 3-D ones with unit leading spatial dims.
 * Conv with no input channels (C_in = 0, non-empty output): the bias broadcast, or zeros
 * (conv_no_channels; passes/fuse leaves such convs unfused, so o2c.Conv never has C_in = 0).
 * Assumes: shape inference ran; weights in ONNX layout (Conv [OC, C/group, k...], ConvTranspose
 * [C, OC/group, k...]); optional bias [OC]. float32 only for now.
 * Guarantees: fatal (ir_fatal_node) for other dtypes, more than 3 spatial dims, or tensors of
 * >= 2^31 elements.
 */
#include "codegen/lower_fconv.h"
#include "codegen/lower_ka.h"
#include "ref/ref_util.h"

#include <stdio.h>

static void need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "%s: tensor '%s' has %lld elements; the kernels index with 32-bit "
                      "ints (at most 2^31-1 elements)",
                      ir_op_name(n->op), g->values[v].name, (long long)e);
}

/* Conv with no input channels (C_in = 0, so the sum over c and the kernel window is empty):
 * y[n, oc, p] = bias[oc], or 0 without a bias (onnxruntime's result); a broadcast copy of the
 * bias over [N, OC, positions] or a fill, no conv kernel (their K = C/group * kernel is 0). */
static void conv_no_channels(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t b = ir_input(n, 2), y = n->outputs[0];
    const struct ir_value *yv = &g->values[y];
    if (yv->dtype != IR_F32)
        ir_fatal_node(g, n, "Conv on %s is not supported yet (float32 only)",
                      ir_dtype_name(yv->dtype));
    if (b == IR_NONE) {
        ka_fill(cg, g, node, y, 0);
        return;
    }
    const int64_t N = yv->dims[0], OC = yv->dims[1], cnt = ka_numel(g, node, y);
    if (cnt == 0) return;
    const int64_t P = cnt / (N * OC);
    const int64_t dims[3] = {N, OC, P}, xs[3] = {0, 1, 0}, ys[3] = {OC * P, P, 1};
    ka_strided_copy(cg, g, node, b, y, 3, dims, xs, 0, ys, 0);
}

bool lower_conv(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (n->op != IR_OP_CONV && n->op != IR_OP_CONV_TRANSPOSE) return false;
    const bool tr = n->op == IR_OP_CONV_TRANSPOSE;
    if (!tr) {
        if (g->values[n->inputs[0]].rank >= 3 && g->values[n->inputs[0]].dims[1] == 0) {
            conv_no_channels(cg, g, node);
            return true;
        }
        /* Conv: the fused-conv kernels with an empty epilogue (fconv_oc4w4: 2x conv_oc4) */
        fconv_emit(cg, g, node, 0, IR_NONE, 1.0f);
        return true;
    }
    uint32_t x = n->inputs[0], w = n->inputs[1], b = ir_input(n, 2), y = n->outputs[0];
    enum ir_dtype t = g->values[y].dtype;
    if (t != IR_F32)
        ir_fatal_node(g, n, "%s on %s is not supported yet (float32 only)", ir_op_name(n->op),
                      ir_dtype_name(t));
    need_i32(g, n, x);
    need_i32(g, n, w);
    need_i32(g, n, y);
    const struct ir_value *xv = &g->values[x], *wv = &g->values[w], *yv = &g->values[y];
    int rank = xv->rank;
    if (rank < 3 || rank > 5)
        ir_fatal_node(g, n, "%s with %d spatial dims is not supported (1 to 3)", ir_op_name(n->op),
                      rank - 2);
    struct ref_conv_geom geo;
    if (tr) ref_convt_geom(g, n, xv->dims, rank, wv->dims, &geo);
    else ref_conv_geom(g, n, xv->dims, rank, wv->dims + 2, false, &geo);
    const int64_t group = tr ? geo.group : ir_attr_int(n, "group", 1);
    const int64_t C = xv->dims[1], OC = yv->dims[1];
    if (group <= 0 || C % group || OC % group)
        ir_fatal_node(g, n, "%s: group=%lld does not divide C_in=%lld and C_out=%lld",
                      ir_op_name(n->op), (long long)group, (long long)C, (long long)OC);
    /* spatial params padded to 3-D: index 0 = D, 1 = H, 2 = W */
    int64_t in[3], out[3], k[3], s[3], d[3], p[3];
    conv_geom_3d(xv, yv, wv, rank, &geo, in, out, k, s, d, p);
    int64_t total = ir_numel(g, y);
    if (total == 0) return true;
    const char *sfx = cg_use(cg, "conv", t);
    char kname[64];
    /* Conv with output channels in blocks of 4 per group: 4 channels per work-item */
    bool oc4 = !tr && (OC / group) % 4 == 0;
    snprintf(kname, sizeof kname, "%s_%s", tr ? "conv_transpose" : oc4 ? "conv_oc4" : "conv", sfx);
    size_t gws[1] = {(size_t)(oc4 ? total / 4 : total)};
    cg_launch(cg, node, kname, 1, gws, NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, w);
    cg_arg_buf(cg, b != IR_NONE ? b : w); /* dummy when has_bias == 0: never read */
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, C);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, in[i]);
    cg_arg_i32(cg, OC);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, out[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, k[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, s[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, p[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, d[i]);
    cg_arg_i32(cg, C / group);
    cg_arg_i32(cg, OC / group);
    cg_arg_i32(cg, b != IR_NONE);
    cg_arg_i32(cg, oc4 ? total / 4 : total);
    return true;
}
