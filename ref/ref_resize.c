/* ref_resize.c — reference Resize (opset 10..19) and Upsample (7, 9).
 *
 * Follows the ONNX reference implementation (onnx/reference/ops/op_resize.py): separable, one
 * axis at a time in double; per output coordinate y the source coordinate x is given by
 * coordinate_transformation_mode (half_pixel, half_pixel_symmetric, pytorch_half_pixel,
 * align_corners, asymmetric, tf_crop_and_resize with roi + extrapolation_value, and Resize-11's
 * tf_half_pixel_for_nn), with
 * output_width = scale * input_width (not rounded) as the spec writes it; then
 *   nearest: floor(x) or floor(x)+1 by nearest_mode (round_prefer_floor (default),
 *            round_prefer_ceil, floor, ceil); an integral x picks x;
 *   linear:  2 taps [1-r, r]; cubic: 4 taps (cubic_coeff_a, default -0.75), exclude_outside;
 * neighbours outside the input are clamped (edge padding). Axes whose scale is 1 with an
 * unchanged size (and default roi) are copied. Integer outputs are rounded half-to-even and
 * saturated.
 * antialias=1 (Resize-18, linear/cubic; ignored for nearest): the filter is stretched by
 * 1/min(scale, 1): taps base+start .. base+start+n-1 (start = floor(-1/sc)+1 linear,
 * floor(-2/sc)+1 cubic; n = 2 - 2*start), weight f((start + k - r) * sc) with f the triangle
 * max(0, 1-|t|) or the Keys cubic of cubic_coeff_a, normalized by their sum (before
 * exclude_outside renormalizes), as onnx/reference/ops/op_resize.py.
 * Opset < 11 Resize and Upsample: asymmetric coordinates, nearest = floor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_util.h"

enum { CT_HALF, CT_HALF_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_CROP, CT_TF_NN };
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL };

static int parse(const struct ir_graph *g, const struct ir_node *n, const char *attr,
                 const char *dflt, const char *const *names, int count)
{
    const char *s = ir_attr_string(n, attr, dflt);
    for (int i = 0; i < count; i++)
        if (!strcmp(s, names[i])) return i;
    ir_fatal_node(g, n, "unsupported %s '%s'", attr, s);
}

/* Antialias filter value at offset t (already scaled): triangle (linear) or Keys cubic. */
static double aa_filter(int mode, double t, double A)
{
    t = fabs(t);
    if (mode == 1) return t < 1 ? 1 - t : 0;
    if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
    if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    return 0;
}

static void cubic_coeffs(double r, double A, double *c)
{
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
    c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
}

bool ref_eval_resize(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const struct ir_value *x = &g->values[n->inputs[0]];
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype, ot = g->values[ov].dtype;
    if (t == IR_BOOL) return false;
    int rank = x->rank;
    bool legacy = n->op == IR_OP_UPSAMPLE || (g->opset < 11 && n->ninputs == 2);
    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear"};
    int mode = parse(g, n, "mode", "nearest", modes, 4);
    if (mode == 3) mode = 1;
    static const char *const cts[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                      "align_corners", "asymmetric", "tf_crop_and_resize",
                                      "tf_half_pixel_for_nn"};
    int ct = legacy ? CT_ASYM : parse(g, n, "coordinate_transformation_mode", "half_pixel", cts, 7);
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int nm = legacy ? NM_FLOOR : parse(g, n, "nearest_mode", "round_prefer_floor", nms, 4);
    const bool aa = mode != 0 && ir_attr_int(n, "antialias", 0) != 0;
    double A = ir_attr_float(n, "cubic_coeff_a", -0.75f);
    bool excl = ir_attr_int(n, "exclude_outside", 0) != 0;
    double extrap = ir_attr_float(n, "extrapolation_value", 0.0f);

    double scales[IR_MAX_RANK];
    int64_t od[IR_MAX_RANK];
    ref_resize_params(g, n, x->dims, rank, scales, od);
    /* roi per axis (start, end), default [0, 1] */
    double r0[IR_MAX_RANK], r1[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        r0[k] = 0;
        r1[k] = 1;
    }
    bool have_roi = false;
    uint32_t rv = legacy ? IR_NONE : ir_input(n, 1);
    if (rv != IR_NONE && g->values[rv].nbytes) {
        const struct ir_value *roi = &g->values[rv];
        int64_t cnt = ref_numel_v(roi);
        size_t na;
        const int64_t *axes = ir_attr_ints(n, "axes", &na);
        if (!axes) na = (size_t)rank;
        if (cnt != 2 * (int64_t)na)
            ir_fatal_node(g, n, "roi '%s' has %lld entries, expected %zu", roi->name,
                          (long long)cnt, 2 * na);
        for (size_t i = 0; i < na; i++) {
            int a = axes ? ref_axis(g, n, axes[i], rank, false, "axes entry") : (int)i;
            r0[a] = ref_get_f(roi->data, roi->dtype, (int64_t)i);
            r1[a] = ref_get_f(roi->data, roi->dtype, (int64_t)(na + i));
        }
        have_roi = ct == CT_TF_CROP;
    }
    if (ct == CT_TF_CROP && !have_roi)
        ir_fatal_node(g, n, "tf_crop_and_resize needs a roi input");

    int64_t cur_dims[IR_MAX_RANK], total = ref_numel_v(x);
    memcpy(cur_dims, x->dims, sizeof(int64_t) * (size_t)rank);
    double *cur = ref_tmp(sizeof(double) * (size_t)(total ? total : 1));
    for (int64_t i = 0; i < total; i++) cur[i] = ref_get_f(x->data, t, i);

    for (int a = 0; a < rank; a++) {
        double s = scales[a];
        int64_t in = cur_dims[a], out = od[a];
        bool roi_default = !have_roi || (fabs(r0[a]) < 1e-9 && fabs(r1[a] - 1) < 1e-9);
        if (fabs(s - 1.0) <= 1e-9 && out == in && roi_default) continue;
        int taps = mode == 0 ? 2 : mode == 1 ? 2 : 4;
        double asc = s < 1 ? s : 1; /* antialias: filter stretched by 1/asc */
        int64_t astart = (int64_t)floor((mode == 1 ? -1.0 : -2.0) / asc) + 1;
        if (aa) {
            if (1 / asc > (double)(1 << 20))
                ir_fatal_node(g, n, "antialias=1 with scale %g on axis %d: the filter would have "
                              "more than 2^21 taps", s, a);
            taps = (int)(2 - 2 * astart);
        }
        double *cf = ref_tmp(sizeof(double) * (size_t)(out * taps + 1));
        int64_t *ix = ref_tmp(sizeof(int64_t) * (size_t)(out * taps + 1));
        bool *ex = ref_tmp((size_t)out + 1);
        double ow = s * (double)in;
        for (int64_t y = 0; y < out; y++) {
            double xo, yy = (double)y;
            switch (ct) {
            case CT_ALIGN: xo = ow == 1 ? 0.0 : yy * (double)(in - 1) / (ow - 1); break;
            case CT_ASYM: xo = yy / s; break;
            case CT_TF_NN: xo = (yy + 0.5) / s; break; /* Resize-11 only */
            case CT_TF_CROP:
                xo = ow == 1 ? (r1[a] - r0[a]) * (double)(in - 1) / 2
                             : yy * (r1[a] - r0[a]) * (double)(in - 1) / (ow - 1);
                xo += r0[a] * (double)(in - 1);
                ex[y] = xo < 0 || xo > (double)(in - 1);
                break;
            case CT_PYTORCH: xo = ow == 1 ? -0.5 : (yy + 0.5) / s - 0.5; break;
            case CT_HALF_SYM: {
                double adj = (double)out / ow, center = (double)in / 2;
                xo = center * (1 - adj) + (yy + 0.5) / s - 0.5;
                break;
            }
            default: xo = (yy + 0.5) / s - 0.5; break;
            }
            double fl = floor(xo);
            double r = xo == fl ? 1.0 : xo - fl;
            int64_t base = (int64_t)fl;
            double *c = cf + y * taps;
            int64_t *id = ix + y * taps;
            if (xo == fl) base -= 1; /* integral x: window [x-1, x] / [x-2 .. x+1] */
            if (aa) {
                double sum = 0;
                for (int j = 0; j < taps; j++) {
                    c[j] = aa_filter(mode, ((double)(astart + j) - r) * asc, A);
                    sum += c[j];
                    id[j] = base + astart + j;
                }
                for (int j = 0; j < taps; j++) c[j] /= sum;
            } else if (mode == 0) {
                if (xo == fl) {
                    c[0] = 0;
                    c[1] = 1;
                } else {
                    bool right;
                    switch (nm) {
                    case NM_ROUND_FLOOR: right = r > 0.5; break;
                    case NM_ROUND_CEIL: right = r >= 0.5; break;
                    case NM_FLOOR: right = false; break;
                    default: right = true; break;
                    }
                    c[0] = right ? 0 : 1;
                    c[1] = right ? 1 : 0;
                }
                id[0] = base;
                id[1] = base + 1;
            } else if (mode == 1) {
                c[0] = 1 - r;
                c[1] = r;
                id[0] = base;
                id[1] = base + 1;
            } else {
                cubic_coeffs(r, A, c);
                for (int j = 0; j < 4; j++) id[j] = base - 1 + j;
            }
            if (excl) {
                double sum = 0;
                for (int j = 0; j < taps; j++) {
                    if (id[j] < 0 || id[j] >= in) c[j] = 0;
                    sum += c[j];
                }
                if (sum != 0)
                    for (int j = 0; j < taps; j++) c[j] /= sum;
            }
            for (int j = 0; j < taps; j++) id[j] = id[j] < 0 ? 0 : id[j] >= in ? in - 1 : id[j];
        }
        int64_t outer = 1, inner = 1;
        for (int k = 0; k < a; k++) outer *= cur_dims[k];
        for (int k = a + 1; k < rank; k++) inner *= cur_dims[k];
        double *nx = ref_tmp(sizeof(double) * (size_t)(outer * out * inner + 1));
        for (int64_t b = 0; b < outer; b++)
            for (int64_t y = 0; y < out; y++)
                for (int64_t i = 0; i < inner; i++) {
                    double v = 0;
                    if (ct == CT_TF_CROP && ex[y]) {
                        v = extrap;
                    } else if (in > 0) {
                        for (int j = 0; j < taps; j++) {
                            double w = cf[y * taps + j];
                            if (w != 0) v += w * cur[(b * in + ix[y * taps + j]) * inner + i];
                        }
                    }
                    nx[(b * out + y) * inner + i] = v;
                }
        free(cur);
        free(cf);
        free(ix);
        free(ex);
        cur = nx;
        cur_dims[a] = out;
    }
    void *o = ref_alloc_out(g, ov);
    int64_t on = ref_numel_v(&g->values[ov]);
    for (int64_t i = 0; i < on; i++) {
        double v = cur[i];
        if (!ref_is_float(ot)) {
            double lo = ref_is_unsigned(ot) ? 0 : -pow(2.0, 8.0 * (double)ir_dtype_size(ot) - 1);
            double hi = ref_is_unsigned(ot) ? pow(2.0, 8.0 * (double)ir_dtype_size(ot)) - 1
                                            : pow(2.0, 8.0 * (double)ir_dtype_size(ot) - 1) - 1;
            v = nearbyint(v);
            v = v < lo ? lo : v > hi ? hi : v;
        }
        ref_set_f(o, ot, i, v);
    }
    free(cur);
    return true;
}
