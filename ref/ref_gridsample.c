/* ref_gridsample.c — reference GridSample-16/20/22 (2-D spatial and N-D volumetric forms).
 *
 * Follows the ONNX reference evaluator (onnx/reference/ops/op_grid_sample.py) step by step:
 *   1. grid component r-1-i (grid[..., 0] is x = the last spatial axis) is denormalized to a
 *      pixel coordinate of spatial axis i in float32, as numpy does:
 *        align_corners=1: (g + 1) / 2 * (L - 1)      align_corners=0: ((g + 1) * L - 1) / 2
 *   2. nearest: the coordinate is rounded half to even (np.rint);
 *   3. a coordinate outside [lo, hi] (lo/hi = -0.5 / L-0.5, or 0 / L-1 with align_corners) is
 *      clamped to [0, L-1] (padding border) or reflected into [lo, hi] (padding reflection);
 *   4. taps: nearest one (the coordinate truncated to int), linear floor(x) and floor(x)+1 with
 *      weights (1-t, t), cubic floor(x)-1 .. floor(x)+2 with Keys weights (alpha = -0.75) of
 *      t = x - floor(x); a tap index outside [0, L) reads 0 (zeros), the clamped index
 *      (border) or the reflected index (reflection);
 *   5. y = sum over the tap combinations of prod(axis weights) * X[taps] (the nested 1-D
 *      interpolations of the reference, expanded).
 * Assumes: X [N, C, D1..Dr], grid [N, O1..Or, r] (checked by infer_node), float dtypes.
 * Guarantees: float32 coordinate arithmetic as the reference; weights and sums in double.
 * Attribute values outside the spec are fatal (ref_gridsample_attrs).
 */
#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

void ref_gridsample_attrs(const struct ir_graph *g, const struct ir_node *n, int *mode,
                          int *padding, int *align_corners)
{
    const char *m = ir_attr_string(n, "mode", g->opset >= 20 ? "linear" : "bilinear");
    if (!strcmp(m, "linear") || !strcmp(m, "bilinear")) *mode = 0;
    else if (!strcmp(m, "nearest")) *mode = 1;
    else if (!strcmp(m, "cubic") || !strcmp(m, "bicubic")) *mode = 2;
    else
        ir_fatal_node(g, n, "GridSample mode='%s' is not supported (linear/bilinear, nearest, "
                      "cubic/bicubic)", m);
    const char *p = ir_attr_string(n, "padding_mode", "zeros");
    if (!strcmp(p, "zeros")) *padding = 0;
    else if (!strcmp(p, "border")) *padding = 1;
    else if (!strcmp(p, "reflection")) *padding = 2;
    else
        ir_fatal_node(g, n, "GridSample padding_mode='%s' is not supported (zeros, border, "
                      "reflection)", p);
    int64_t ac = ir_attr_int(n, "align_corners", 0);
    if (ac != 0 && ac != 1)
        ir_fatal_node(g, n, "GridSample align_corners=%lld is not supported (0 or 1)",
                      (long long)ac);
    *align_corners = (int)ac;
}

/* Reflects x into [lo, hi] by repeated mirroring at the nearer border (reference _gs_reflect). */
static double gs_reflect(double x, double lo, double hi)
{
    double rng = hi - lo;
    if (!(rng > 0)) return lo;
    if (x < lo) {
        double dx = lo - x, k = floor(dx / rng), r = dx - k * rng;
        return fmod(k, 2.0) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi, k = floor(dx / rng), r = dx - k * rng;
        return fmod(k, 2.0) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* Keys cubic convolution weights (alpha = -0.75) of the taps at -1, 0, 1, 2 for fraction t. */
static void gs_cubic(double t, double *w)
{
    const double a = -0.75;
    double x = t + 1;
    w[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    x = t;
    w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 1 - t;
    w[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 2 - t;
    w[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* Taps of one axis of length L for normalized coordinate gn: indices (-1 = reads zero) and
 * weights; returns the tap count (1, 2 or 4). */
static int gs_axis_taps(float gn, int64_t L, int mode, int padding, int align, int64_t *idx,
                        double *w)
{
    float xf = align ? (gn + 1.0f) / 2.0f * (float)(L - 1) : ((gn + 1.0f) * (float)L - 1.0f) / 2.0f;
    double lo = align ? 0.0 : -0.5, hi = align ? (double)L - 1 : (double)L - 0.5;
    double x = mode == 1 ? (double)rintf(xf) : (double)xf;
    if (x < lo || x > hi) {
        if (padding == 1) x = x < 0 ? 0 : x > (double)(L - 1) ? (double)(L - 1) : x;
        else if (padding == 2) x = (double)(float)gs_reflect(x, lo, hi);
    }
    if (!(x >= -1e9)) x = -1e9; /* far outside (and NaN): every tap out of range, no overflow */
    if (x > 1e9) x = 1e9;
    int cnt;
    int64_t base;
    if (mode == 1) {
        cnt = 1;
        base = (int64_t)x;
        w[0] = 1;
    } else {
        double f = floor(x), t = x - f;
        base = (int64_t)f;
        if (mode == 0) {
            cnt = 2;
            w[0] = 1 - t;
            w[1] = t;
        } else {
            cnt = 4;
            base -= 1;
            gs_cubic(t, w);
        }
    }
    for (int k = 0; k < cnt; k++) {
        int64_t i = base + k;
        if (i < 0 || i >= L) {
            if (padding == 0) i = -1;
            else if (padding == 1) i = i < 0 ? 0 : L - 1;
            else i = (int64_t)gs_reflect((double)i, lo, hi);
            if (i >= L) i = L - 1; /* only reachable through float rounding */
            if (i < -1) i = 0;
        }
        idx[k] = i;
    }
    return cnt;
}

bool ref_eval_gridsample(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const struct ir_value *x = &g->values[n->inputs[0]], *gr = &g->values[n->inputs[1]];
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t) || !ref_is_float(gr->dtype)) return false;
    int mode, padding, align;
    ref_gridsample_attrs(g, n, &mode, &padding, &align);
    int r = x->rank - 2;
    int64_t N = x->dims[0], C = x->dims[1], isz = 1, osz = 1;
    for (int i = 0; i < r; i++) {
        isz *= x->dims[2 + i];
        osz *= gr->dims[1 + i];
    }
    int64_t istr[IR_MAX_RANK];
    ref_strides(x->dims + 2, r, istr);
    void *out = ref_alloc_out(g, ov);
    int64_t idx[IR_MAX_RANK][4];
    double w[IR_MAX_RANK][4];
    int cnt[IR_MAX_RANK];
    for (int64_t b = 0; b < N; b++)
        for (int64_t o = 0; o < osz; o++) {
            int64_t gbase = (b * osz + o) * r;
            int64_t ncomb = 1;
            for (int i = 0; i < r; i++) {
                float gn = (float)ref_get_f(gr->data, gr->dtype, gbase + (r - 1 - i));
                cnt[i] = gs_axis_taps(gn, x->dims[2 + i], mode, padding, align, idx[i], w[i]);
                ncomb *= cnt[i];
            }
            for (int64_t c = 0; c < C; c++) {
                const int64_t xbase = (b * C + c) * isz;
                double acc = 0;
                for (int64_t q = 0; q < ncomb; q++) {
                    int64_t rem = q, off = 0;
                    double wt = 1;
                    bool zero = false;
                    for (int i = r - 1; i >= 0; i--) {
                        int k = (int)(rem % cnt[i]);
                        rem /= cnt[i];
                        if (idx[i][k] < 0) zero = true;
                        off += idx[i][k] * istr[i];
                        wt *= w[i][k];
                    }
                    if (!zero) acc += wt * ref_get_f(x->data, t, xbase + off);
                }
                ref_set_f(out, t, (b * C + c) * osz + o, acc);
            }
        }
    return true;
}
