/* lower_resize.c — Resize-10/11/13/18/19 and Upsample-7/9 (ops.def family "resize") ->
 * kernels/resize.cl.
 *
 * Inputs: Resize >= 11: X, roi, scales, sizes; Resize-10 and Upsample-9: X, scales (Upsample-7:
 * scales attribute). scales/sizes/roi must be constants (read here); an empty tensor counts as
 * absent. Per axis (ONNX Resize-19 text, as the reference implementation): scale = the given
 * scale, or out/in for sizes (keep_aspect_ratio_policy not_larger / not_smaller: the min / max
 * over `axes`, same for every axis); the output dims are the inferred ones. Axes with scale 1,
 * unchanged size and default roi are copied; the leading run of such axes is merged into one
 * batch axis and at most 4 axes may remain (fatal otherwise). Legacy forms (Resize-10,
 * Upsample) use asymmetric coordinates and nearest = floor.
 * Modes: nearest (any element type; every nearest_mode), linear and cubic (float32/64/16;
 * cubic_coeff_a, exclude_outside), every coordinate_transformation_mode incl.
 * tf_crop_and_resize (roi, extrapolation_value) and Resize-11's tf_half_pixel_for_nn.
 * antialias=1 (Resize-18) with linear/cubic and some resized axis downscaled: one resize_aa pass
 * per resized axis, in axis order, through scratch buffers (the filter is stretched by
 * 1/min(scale, 1), so its tap count depends on the scale; see kernels/resize.cl). Ignored for
 * nearest, as the spec says (it names linear and cubic only).
 * Refused (fatal, located, naming the attribute): run-time scales/sizes/roi, unknown attribute
 * values, integer linear/cubic, antialias filters wider than 2^21 taps.
 */
#include "lower_ka.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int pick(const struct ir_graph *g, const struct ir_node *n, const char *attr,
                const char *dflt, const char *const *names, int count)
{
    const char *s = ir_attr_string(n, attr, dflt);
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    ir_fatal_node(g, n, "%s: %s='%s' is not supported", ir_op_name(n->op), attr, s);
}

/* A constant input usable as a parameter, IR_NONE if absent or empty; fatal if run-time. */
static uint32_t const_param(const struct ir_graph *g, const struct ir_node *n, uint32_t v,
                            const char *what)
{
    if (v == IR_NONE) return IR_NONE;
    if (!ir_is_const(g, v)) {
        if (g->values[v].dims_known && ir_numel(g, v) == 0) return IR_NONE;
        ir_fatal_node(g, n, "Resize with run-time %s is not supported ('%s' is computed at run "
                      "time)", what, g->values[v].name);
    }
    return ir_numel(g, v) == 0 ? IR_NONE : v;
}

/* The per-node parameters of the antialias passes. */
struct resize_aa_params {
    int mode;      /* 1 linear, 2 cubic */
    int ctm;       /* coordinate_transformation_mode index (kernels/resize.cl) */
    float cubic_a; /* cubic_coeff_a */
    int excl;      /* exclude_outside */
    float extrap;  /* extrapolation_value (tf_crop_and_resize) */
};

/* antialias=1: one resize_aa pass per active axis k (in order), x -> scratch -> ... -> y. */
static void emit_antialias(struct cg_ctx *cg, struct ir_graph *g, uint32_t node,
                           const struct resize_aa_params *p, const bool *active, const double *scale,
                           const double *r0, const double *r1)
{
    const uint32_t x = g->nodes[node].inputs[0], y = g->nodes[node].outputs[0];
    const int r = g->values[x].rank;
    const enum ir_dtype dt = g->values[x].dtype;
    int64_t cur[IR_MAX_RANK], od[IR_MAX_RANK];
    int last = -1;
    for (int k = 0; k < r; k++) {
        cur[k] = g->values[x].dims[k];
        od[k] = g->values[y].dims[k];
        if (active[k]) last = k;
    }
    const char *sfx = cg_use(cg, "resize", dt);
    char kname[64];
    snprintf(kname, sizeof kname, "resize_aa_%s", sfx);
    uint32_t src = x;
    for (int k = 0; k <= last; k++) {
        if (!active[k]) continue;
        const int64_t in = cur[k], out = od[k];
        int64_t outer = 1, inner = 1;
        for (int j = 0; j < k; j++) outer *= cur[j];
        for (int j = k + 1; j < r; j++) inner *= cur[j];
        const int64_t cnt = outer * out * inner;
        if (outer * in * inner >= ((int64_t)1 << 31) || cnt >= ((int64_t)1 << 31))
            ir_fatal_node(g, &g->nodes[node], "Resize: an antialias pass over axis %d has >= "
                          "2^31 elements (the kernel indexes with 32-bit ints)", k);
        const double asc = scale[k] < 1.0 ? scale[k] : 1.0;
        if (1.0 / asc > (double)(1 << 20))
            ir_fatal_node(g, &g->nodes[node], "Resize: antialias=1 with scale %g on axis %d: "
                          "the filter would have more than 2^21 taps", scale[k], k);
        const int64_t start = (int64_t)floor((p->mode == 1 ? -1.0 : -2.0) / asc) + 1;
        const double ow = scale[k] * (double)in;
        double p0 = 0.0, p1 = 0.0;
        if (p->ctm == 1) p0 = ((double)in / 2.0) * (1.0 - (double)out / ow);
        if (p->ctm == 5) p0 = r0[k], p1 = r1[k];
        const uint32_t dst = k == last ? y : cg_temp(cg, node, dt, cnt);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, src);
        cg_arg_buf(cg, dst);
        cg_arg_i32(cg, cnt);
        cg_arg_i32(cg, in);
        cg_arg_i32(cg, out);
        cg_arg_i32(cg, inner);
        cg_arg_f32(cg, (float)scale[k]);
        cg_arg_f32(cg, (float)ow);
        cg_arg_f32(cg, (float)p0);
        cg_arg_f32(cg, (float)p1);
        cg_arg_i32(cg, p->ctm);
        cg_arg_i32(cg, p->mode);
        cg_arg_f32(cg, p->cubic_a);
        cg_arg_i32(cg, p->excl);
        cg_arg_f32(cg, p->extrap);
        cg_arg_i32(cg, start);
        cg_arg_i32(cg, 2 - 2 * start);
        cg_arg_f32(cg, (float)asc);
        cur[k] = out;
        src = dst;
    }
}

/* Source index of output coordinate c on one axis for mode nearest, computed with the float
 * formulas of kernels/resize.cl (ka_rs_coord, ka_rs_taps; the arguments as the kernel gets them);
 * -1 for tf_crop_and_resize (not handled here). */
static int64_t nn_source(int ctm, int nm, int64_t c, int64_t in, float scale, float ow, float p0)
{
    const float fc = (float)c;
    float x;
    switch (ctm) {
    case 0: x = (fc + 0.5f) / scale - 0.5f; break;
    case 1: x = p0 + (fc + 0.5f) / scale - 0.5f; break;
    case 2: x = ow == 1.0f ? -0.5f : (fc + 0.5f) / scale - 0.5f; break;
    case 3: x = ow == 1.0f ? 0.0f : fc * (float)(in - 1) / (ow - 1.0f); break;
    case 4: x = fc / scale; break;
    case 6: x = (fc + 0.5f) / scale; break;
    default: return -1;
    }
    const float fl = floorf(x), r = x - fl;
    int64_t t = (int64_t)fl;
    if (r != 0.0f) {
        if (nm == 0) t = r <= 0.5f ? t : t + 1;
        else if (nm == 1) t = r < 0.5f ? t : t + 1;
        else if (nm == 3) t = t + 1;
    }
    return t < 0 ? 0 : (t >= in ? in - 1 : t);
}

/* Integer upscale factor of axis k for mode nearest: f >= 1 when out = f * in and output
 * coordinate c reads input c / f for every c (so resize_nn_up may replace resize_nearest), else
 * 0. An inactive axis has factor 1. */
static int64_t nn_factor(const struct ir_graph *g, uint32_t node, int k, bool active, double scale,
                         int ctm, int nm)
{
    const struct ir_node *n = &g->nodes[node];
    const int64_t in = g->values[n->inputs[0]].dims[k], out = g->values[n->outputs[0]].dims[k];
    if (!active) return 1;
    if (in <= 0 || out % in != 0 || ctm == 5) return 0;
    const int64_t f = out / in;
    const double ow = scale * (double)in;
    const double p0 = ctm == 1 ? ((double)in / 2.0) * (1.0 - (double)out / ow) : 0.0;
    for (int64_t c = 0; c < out; c++)
        if (nn_source(ctm, nm, c, in, (float)scale, (float)ow, (float)p0) != c / f) return 0;
    return f;
}

/* Nearest upsampling of the last two axes by integer factors (cpu class, kernels/resize.cl
 * resize_nn_up): true if emitted. Only for mode nearest with every active axis among the last
 * two and nn_factor() > 0 on both. */
static bool emit_nn_up(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, const bool *active,
                       const double *scale, int ctm, int nm)
{
    const struct ir_node *n = &g->nodes[node];
    const struct ir_value *xv = &g->values[n->inputs[0]];
    const int r = xv->rank;
    if (r < 1) return false;
    for (int k = 0; k < r - 2; k++)
        if (active[k]) return false;
    const int64_t fw = nn_factor(g, node, r - 1, active[r - 1], scale[r - 1], ctm, nm);
    const int64_t fh = r >= 2 ? nn_factor(g, node, r - 2, active[r - 2], scale[r - 2], ctm, nm) : 1;
    if (fw == 0 || fh == 0) return false;
    const int64_t W = xv->dims[r - 1], rows = ir_numel(g, n->inputs[0]) / W;
    const char *sfx = cg_use(cg, "resize", ka_size_type(g, node, xv->dtype));
    char kname[64];
    snprintf(kname, sizeof kname, "resize_nn_up_%s", sfx);
    size_t lws[1] = {rows >= 256 ? 8 : 1}, gws[1] = {((size_t)rows + lws[0] - 1) / lws[0] * lws[0]};
    cg_launch(cg, node, kname, 1, gws, lws);
    cg_arg_buf(cg, n->inputs[0]);
    cg_arg_buf(cg, n->outputs[0]);
    cg_arg_i32(cg, rows);
    cg_arg_i32(cg, W);
    cg_arg_i32(cg, fh);
    cg_arg_i32(cg, fw);
    return true;
}

bool lower_resize(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *yv = &g->values[y];
    const int r = xv->rank;
    const bool legacy = n->op == IR_OP_UPSAMPLE || (g->opset < 11 && n->ninputs == 2);
    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear"};
    int mode = pick(g, n, "mode", "nearest", modes, n->op == IR_OP_UPSAMPLE ? 4 : 3);
    if (mode == 3) mode = 1;
    static const char *const cts[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                      "align_corners", "asymmetric", "tf_crop_and_resize",
                                      "tf_half_pixel_for_nn"};
    const int ctm = legacy ? 4 : pick(g, n, "coordinate_transformation_mode", "half_pixel", cts,
                                      g->opset == 11 ? 7 : 6);
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const int nm = legacy ? 2 : pick(g, n, "nearest_mode", "round_prefer_floor", nms, 4);
    const float cubic_a = ir_attr_float(n, "cubic_coeff_a", -0.75f);
    const int excl = ir_attr_int(n, "exclude_outside", 0) != 0;
    const float extrap = ir_attr_float(n, "extrapolation_value", 0.0f);
    const bool antialias = ir_attr_int(n, "antialias", 0) != 0;
    const enum ir_dtype dt = xv->dtype;
    if (mode != 0 && !(dt == IR_F32 || dt == IR_F64 || dt == IR_F16))
        ir_fatal_node(g, n, "%s: mode=%s with element type %s is not supported (float types only)",
                      ir_op_name(n->op), modes[mode], ir_dtype_name(dt));
    if (yv->rank != r) ir_fatal_node(g, n, "%s: output rank %d != input rank %d", ir_op_name(n->op), yv->rank, r);

    /* axes */
    int axes[IR_MAX_RANK];
    size_t na = 0;
    const int64_t *axes_attr = legacy ? NULL : ir_attr_ints(n, "axes", &na);
    if (axes_attr) {
        if ((int)na > r) ir_fatal_node(g, n, "Resize: axes has %zu entries for rank %d", na, r);
        for (size_t i = 0; i < na; i++) {
            int64_t a = axes_attr[i] < 0 ? axes_attr[i] + r : axes_attr[i];
            if (a < 0 || a >= r)
                ir_fatal_node(g, n, "Resize: axes[%zu]=%lld out of range for rank %d", i,
                              (long long)axes_attr[i], r);
            axes[i] = (int)a;
        }
    } else {
        na = (size_t)r;
        for (int i = 0; i < r; i++) axes[i] = i;
    }

    /* scales */
    double scale[IR_MAX_RANK];
    for (int k = 0; k < r; k++) scale[k] = 1.0;
    const uint32_t sv = const_param(g, n, legacy ? ir_input(n, 1) : ir_input(n, 2), "scales");
    const uint32_t zv = legacy ? IR_NONE : const_param(g, n, ir_input(n, 3), "sizes");
    if (sv != IR_NONE) {
        if (ir_numel(g, sv) != (int64_t)na)
            ir_fatal_node(g, n, "%s: scales has %lld entries, expected %zu", ir_op_name(n->op),
                          (long long)ir_numel(g, sv), na);
        for (size_t i = 0; i < na; i++) {
            const double s = ir_const_f64(g, sv, (int64_t)i);
            if (!(s > 0)) ir_fatal_node(g, n, "%s: scales[%zu]=%g (must be > 0)", ir_op_name(n->op), i, s);
            scale[axes[i]] = s;
        }
    } else if (zv != IR_NONE) {
        if (ir_numel(g, zv) != (int64_t)na)
            ir_fatal_node(g, n, "Resize: sizes has %lld entries, expected %zu",
                          (long long)ir_numel(g, zv), na);
        static const char *const pols[] = {"stretch", "not_larger", "not_smaller"};
        const int pol = pick(g, n, "keep_aspect_ratio_policy", "stretch", pols, 3);
        double agg = pol == 1 ? INFINITY : -INFINITY;
        for (size_t i = 0; i < na; i++) {
            const int a = axes[i];
            if (xv->dims[a] == 0) {
                /* an empty axis stays empty (scale 1); any other size has no scale (onnxruntime
                 * refuses it too) */
                if (ir_const_i64(g, zv, (int64_t)i) != 0)
                    ir_fatal_node(g, n, "Resize: sizes[%zu]=%lld for the empty axis %d", i,
                                  (long long)ir_const_i64(g, zv, (int64_t)i), a);
                scale[a] = 1.0;
                continue;
            }
            const double s = (double)ir_const_i64(g, zv, (int64_t)i) / (double)xv->dims[a];
            scale[a] = s;
            if (pol == 1 && s < agg) agg = s;
            if (pol == 2 && s > agg) agg = s;
        }
        if (pol != 0)
            for (size_t i = 0; i < na; i++) scale[axes[i]] = agg;
    } else if (n->op == IR_OP_UPSAMPLE) {
        size_t fc = 0;
        const float *fs = ir_attr_floats(n, "scales", &fc);
        if (!fs || (int)fc != r)
            ir_fatal_node(g, n, "Upsample: needs %d scales (input or attribute)", r);
        for (int k = 0; k < r; k++) scale[k] = fs[k];
    } else {
        ir_fatal_node(g, n, "Resize: one of scales or sizes must be given");
    }

    /* roi (tf_crop_and_resize only) */
    double r0[IR_MAX_RANK], r1[IR_MAX_RANK];
    for (int k = 0; k < r; k++) r0[k] = 0.0, r1[k] = 1.0;
    if (ctm == 5) {
        const uint32_t rv = const_param(g, n, ir_input(n, 1), "roi");
        if (rv == IR_NONE) ir_fatal_node(g, n, "Resize: tf_crop_and_resize needs a roi input");
        if (ir_numel(g, rv) != 2 * (int64_t)na)
            ir_fatal_node(g, n, "Resize: roi has %lld entries, expected %zu",
                          (long long)ir_numel(g, rv), 2 * na);
        for (size_t i = 0; i < na; i++) {
            r0[axes[i]] = ir_const_f64(g, rv, (int64_t)i);
            r1[axes[i]] = ir_const_f64(g, rv, (int64_t)(na + i));
        }
    }

    /* active axes */
    bool active[IR_MAX_RANK], aa = false;
    int first = r;
    for (int k = 0; k < r; k++) {
        const bool roi_default = fabs(r0[k]) < 1e-9 && fabs(r1[k] - 1.0) < 1e-9;
        active[k] = !(fabs(scale[k] - 1.0) <= 1e-9 && xv->dims[k] == yv->dims[k] &&
                      (ctm != 5 || roi_default));
        if (!active[k] && xv->dims[k] != yv->dims[k])
            ir_fatal_node(g, n, "Resize: axis %d has scale 1 but sizes %lld -> %lld", k,
                          (long long)xv->dims[k], (long long)yv->dims[k]);
        if (active[k] && first == r) first = k;
        if (active[k] && antialias && mode != 0 && scale[k] < 1.0) aa = true;
    }
    ka_numel(g, node, x);
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    if (ir_numel(g, x) == 0) ir_fatal_node(g, n, "Resize: empty input with a non-empty output");
    if (aa) {
        const struct resize_aa_params ax = {mode, ctm, cubic_a, excl, extrap};
        emit_antialias(cg, g, node, &ax, active, scale, r0, r1);
        return true;
    }
    if (mode == 0) { /* integer nearest upsampling: the cpu class's row kernel */
        cg_variant(cg, CG_VARIANT_CPU);
        if (emit_nn_up(cg, g, node, active, scale, ctm, nm)) cg_variant(cg, CG_VARIANT_GPU);
        else cg_variant(cg, CG_VARIANT_ALL);
    }
    if (first == r) first = r - 1 < 0 ? 0 : r - 1;
    if (r - first > 4)
        ir_fatal_node(g, n, "Resize: %d trailing axes would be resized (axis %d on); the kernel "
                      "handles 4", r - first, first);
    /* kernel axes: 4 slots, right-aligned; leading axes merged into the batch */
    int64_t in4[4], out4[4];
    double sc4[4], ow4[4], pa4[4], pb4[4];
    int act = 0;
    for (int s = 0; s < 4; s++) {
        const int k = first + s - (4 - (r - first));
        if (k < first || k < 0) {
            in4[s] = out4[s] = 1;
            sc4[s] = ow4[s] = 1.0;
            pa4[s] = pb4[s] = 0.0;
            continue;
        }
        in4[s] = xv->dims[k];
        out4[s] = yv->dims[k];
        sc4[s] = scale[k];
        ow4[s] = scale[k] * (double)xv->dims[k];
        pa4[s] = 0.0;
        pb4[s] = 0.0;
        if (ctm == 1) pa4[s] = ((double)xv->dims[k] / 2.0) * (1.0 - (double)yv->dims[k] / ow4[s]);
        if (ctm == 5) pa4[s] = r0[k], pb4[s] = r1[k];
        if (active[k]) act |= 1 << s;
    }
    static const char *const kn[] = {"resize_nearest", "resize_linear", "resize_cubic"};
    const char *sfx = cg_use(cg, "resize", dt);
    char kname[64];
    snprintf(kname, sizeof kname, "%s_%s", kn[mode], sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    for (int s = 0; s < 4; s++) cg_arg_i32(cg, in4[s]);
    for (int s = 0; s < 4; s++) cg_arg_i32(cg, out4[s]);
    for (int s = 0; s < 4; s++) cg_arg_f32(cg, (float)sc4[s]);
    for (int s = 0; s < 4; s++) cg_arg_f32(cg, (float)ow4[s]);
    for (int s = 0; s < 4; s++) cg_arg_f32(cg, (float)pa4[s]);
    for (int s = 0; s < 4; s++) cg_arg_f32(cg, (float)pb4[s]);
    cg_arg_i32(cg, act);
    cg_arg_i32(cg, ctm);
    cg_arg_i32(cg, nm);
    cg_arg_f32(cg, extrap);
    cg_arg_f32(cg, cubic_a);
    cg_arg_i32(cg, excl);
    return true;
}
