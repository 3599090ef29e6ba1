/* lower_roialign.c — RoiAlign-10/16 (ops.def family "roialign") -> kernels/roialign.cl.
 *
 * X [N, C, H, W] and rois [R, 4] float32, batch_indices [R] int64 (run-time inputs allowed);
 * attributes normalized by ref_roialign_attrs (ref/ref_roialign.c, the kernel's oracle): mode
 * avg/max, coordinate_transformation_mode half_pixel/output_half_pixel (default by opset),
 * sampling_ratio >= 0, spatial_scale, output_height/output_width (shape inference).
 * Assumes: shape inference ran (Y [R, C, output_height, output_width]).
 * Guarantees: fatal (ir_fatal_node) on other dtypes, unsupported attribute values, an empty X
 * with rois present, or tensors of >= 2^31 elements.
 */
#include "codegen/lower.h"
#include "ref/ref_util.h"

#include <stdio.h>

bool lower_roialign(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], ro = n->inputs[1], bi = n->inputs[2], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *rv = &g->values[ro], *bv = &g->values[bi];
    if (xv->dtype != IR_F32 || rv->dtype != IR_F32 || bv->dtype != IR_I64)
        ir_fatal_node(g, n, "RoiAlign on X %s, rois %s, batch_indices %s is not supported yet "
                      "(float32, float32, int64)", ir_dtype_name(xv->dtype),
                      ir_dtype_name(rv->dtype), ir_dtype_name(bv->dtype));
    int mode, half;
    int64_t sr;
    float scale;
    ref_roialign_attrs(g, n, &mode, &half, &sr, &scale);
    if (sr > 65536)
        ir_fatal_node(g, n, "RoiAlign sampling_ratio=%lld is not supported (at most 65536)",
                      (long long)sr);
    const uint32_t vs[2] = {x, y};
    for (int k = 0; k < 2; k++)
        if (ir_numel(g, vs[k]) >= ((int64_t)1 << 31))
            ir_fatal_node(g, n, "RoiAlign: tensor '%s' has %lld elements; the kernel indexes "
                          "with 32-bit ints (at most 2^31-1)",
                          g->values[vs[k]].name, (long long)ir_numel(g, vs[k]));
    const struct ir_value *yv = &g->values[y];
    const int64_t total = ir_numel(g, y);
    if (total == 0) return true;
    if (ir_numel(g, x) == 0)
        ir_fatal_node(g, n, "RoiAlign on an empty input '%s' with rois is not supported",
                      xv->name);
    const char *sfx = cg_use(cg, "roialign", IR_F32);
    char kname[64];
    snprintf(kname, sizeof kname, "roialign_%s", sfx);
    size_t gws[1] = {(size_t)total};
    cg_launch(cg, node, kname, 1, gws, NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, ro);
    cg_arg_buf(cg, bi);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, xv->dims[0]);
    cg_arg_i32(cg, xv->dims[1]);
    cg_arg_i32(cg, xv->dims[2]);
    cg_arg_i32(cg, xv->dims[3]);
    cg_arg_i32(cg, yv->dims[2]);
    cg_arg_i32(cg, yv->dims[3]);
    cg_arg_i32(cg, sr);
    cg_arg_f32(cg, scale);
    cg_arg_i32(cg, half);
    cg_arg_i32(cg, mode);
    cg_arg_i32(cg, total);
    return true;
}
