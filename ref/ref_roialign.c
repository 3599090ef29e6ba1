/* ref_roialign.c — reference RoiAlign-10/16 (mode avg/max, output_half_pixel/half_pixel).
 *
 * Follows the ONNX reference evaluator (onnx/reference/ops/op_roi_align.py, = onnxruntime):
 * per roi r (x1, y1, x2, y2 scaled by spatial_scale, minus 0.5 with half_pixel), bins of
 * roi_h / oh by roi_w / ow (output_half_pixel forces roi sizes >= 1), each sampled on a
 * gh x gw grid (sampling_ratio, or ceil(roi size / output size) when 0) at bin-relative
 * (i + 0.5) / g positions. A sample with y < -1 or y > H (x likewise) contributes 0; otherwise it
 * is clamped at 0 and bilinearly interpolated (at the last row/column the low index is used
 * twice). avg: sum of samples / (gh * gw); max: max over samples of the largest of the four
 * weighted corner terms w_k * X[corner_k] (the reference's and onnxruntime's definition).
 * Assumes: X [N, C, H, W], rois [R, 4], batch_indices [R] (checked by infer_node).
 * Guarantees: a batch index outside [0, N) is fatal (constant folding); arithmetic in double.
 */
#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

void ref_roialign_attrs(const struct ir_graph *g, const struct ir_node *n, int *mode,
                        int *half_pixel, int64_t *sampling_ratio, float *spatial_scale)
{
    const char *m = ir_attr_string(n, "mode", "avg");
    if (!strcmp(m, "avg")) *mode = 0;
    else if (!strcmp(m, "max")) *mode = 1;
    else ir_fatal_node(g, n, "RoiAlign mode='%s' is not supported (avg, max)", m);
    const char *ct = ir_attr_string(n, "coordinate_transformation_mode",
                                    g->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (!strcmp(ct, "half_pixel")) *half_pixel = 1;
    else if (!strcmp(ct, "output_half_pixel")) *half_pixel = 0;
    else
        ir_fatal_node(g, n, "RoiAlign coordinate_transformation_mode='%s' is not supported "
                      "(half_pixel, output_half_pixel)", ct);
    *sampling_ratio = ir_attr_int(n, "sampling_ratio", 0);
    if (*sampling_ratio < 0)
        ir_fatal_node(g, n, "RoiAlign sampling_ratio=%lld must be >= 0",
                      (long long)*sampling_ratio);
    *spatial_scale = ir_attr_float(n, "spatial_scale", 1.0f);
}

bool ref_eval_roialign(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const struct ir_value *x = &g->values[n->inputs[0]], *ro = &g->values[n->inputs[1]],
                          *bi = &g->values[n->inputs[2]];
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t) || !ref_is_float(ro->dtype) || !ref_is_int(bi->dtype)) return false;
    int mode, half;
    int64_t sr;
    float scale;
    ref_roialign_attrs(g, n, &mode, &half, &sr, &scale);
    const int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    const int64_t R = o->dims[0], OH = o->dims[2], OW = o->dims[3];
    void *out = ref_alloc_out(g, ov);
    const double off = half ? 0.5 : 0.0;
    for (int64_t r = 0; r < R; r++) {
        int64_t b = ref_get_i(bi->data, bi->dtype, r);
        if (b < 0 || b >= N)
            ir_fatal_node(g, n, "RoiAlign batch_indices[%lld]=%lld is outside [0, %lld)",
                          (long long)r, (long long)b, (long long)N);
        double x1 = ref_get_f(ro->data, ro->dtype, r * 4 + 0) * scale - off;
        double y1 = ref_get_f(ro->data, ro->dtype, r * 4 + 1) * scale - off;
        double x2 = ref_get_f(ro->data, ro->dtype, r * 4 + 2) * scale - off;
        double y2 = ref_get_f(ro->data, ro->dtype, r * 4 + 3) * scale - off;
        double rw = x2 - x1, rh = y2 - y1;
        if (!half) {
            rw = rw > 1.0 ? rw : 1.0;
            rh = rh > 1.0 ? rh : 1.0;
        }
        double bh = rh / (double)OH, bw = rw / (double)OW;
        double ghd = sr > 0 ? (double)sr : ceil(rh / (double)OH);
        double gwd = sr > 0 ? (double)sr : ceil(rw / (double)OW);
        if (!(ghd <= 65536.0 && gwd <= 65536.0)) /* also NaN / inf roi sizes */
            ir_fatal_node(g, n, "RoiAlign roi %lld needs a %g x %g sampling grid per bin (at most "
                          "65536 each)", (long long)r, ghd, gwd);
        int64_t gh = ghd > 0 ? (int64_t)ghd : 0, gw = gwd > 0 ? (int64_t)gwd : 0;
        double count = (double)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t c = 0; c < C; c++) {
            const int64_t xb = (b * C + c) * H * W;
            for (int64_t ph = 0; ph < OH; ph++)
                for (int64_t pw = 0; pw < OW; pw++) {
                    double acc = 0;
                    bool first = true;
                    for (int64_t iy = 0; iy < gh; iy++) {
                        double y = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double xx = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double v = 0, yy = y;
                            if (yy >= -1.0 && yy <= (double)H && xx >= -1.0 && xx <= (double)W) {
                                if (yy < 0) yy = 0;
                                if (xx < 0) xx = 0;
                                int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;
                                if (yl >= H - 1) {
                                    yh = yl = H - 1;
                                    yy = (double)yl;
                                } else {
                                    yh = yl + 1;
                                }
                                if (xl >= W - 1) {
                                    xh = xl = W - 1;
                                    xx = (double)xl;
                                } else {
                                    xh = xl + 1;
                                }
                                double ly = yy - (double)yl, lx = xx - (double)xl;
                                double hy = 1 - ly, hx = 1 - lx;
                                double t1 = hy * hx * ref_get_f(x->data, t, xb + yl * W + xl);
                                double t2 = hy * lx * ref_get_f(x->data, t, xb + yl * W + xh);
                                double t3 = ly * hx * ref_get_f(x->data, t, xb + yh * W + xl);
                                double t4 = ly * lx * ref_get_f(x->data, t, xb + yh * W + xh);
                                if (mode == 0) {
                                    v = t1 + t2 + t3 + t4;
                                } else {
                                    v = t1 > t2 ? t1 : t2;
                                    v = v > t3 ? v : t3;
                                    v = v > t4 ? v : t4;
                                }
                            }
                            if (mode == 0) acc += v;
                            else if (first || v > acc) acc = v;
                            first = false;
                        }
                    }
                    if (mode == 0) acc /= count;
                    ref_set_f(out, t, ((r * C + c) * OH + ph) * OW + pw, acc);
                }
        }
    }
    return true;
}
