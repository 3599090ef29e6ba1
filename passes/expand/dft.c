/* expand_dft.c — DFT-17/19/20 and STFT-17 as a MatMul with a constant DFT matrix, following the
 * ONNX reference (onnx/reference/ops/op_dft.py, op_stft.py):
 *   DFT: x [..., N, c] (c = 1 real, c = 2 complex), transform axis a, length L (dft_length, default
 *     N, or 2(N-1) for inverse onesided), n < min(N, L) used (numpy's n= truncation/zero padding):
 *     forward  X[k] = sum_n x[n] e^{-2 pi i kn/L},       k < L (onesided: L/2 + 1), c_out = 2
 *     inverse  x[k] = 1/L sum_n X[n] e^{+2 pi i kn/L},   k < L, c_out = 2
 *     inverse onesided (irfft): y[k] = 1/L sum_{n <= L/2} w_n (Re X[n] cos - Im X[n] sin)(2 pi kn/L),
 *       w_n = 1 for n = 0 and n = L/2 (L even), else 2 (imaginary parts of those bins drop out);
 *       c_out = 1.
 *   Each is real-linear in (Re, Im), so with axis a moved next to the last one and the tensor
 *   viewed as [B, N*c], Y = X @ W for a constant W [N*c, L_out*c_out] built at compile time in
 *   double precision (angles reduced mod L first; multiples of a quarter turn exact) and stored as
 *   float32; then back to [..., L_out, c_out] and axis a restored. Computed in float32 (float16 /
 *   float64 inputs cast there and back).
 *   STFT: frames [batch, F, fl, c] = Gather(signal, axis 1, idx[f, j] = f*step + j),
 *     F = 1 + (len - fl) / step; times window [fl] (when given); then the forward DFT of length fl
 *     over the frame axis (onesided by default).
 * Assumes: inputs' dims known (expand.h); axis (opset 20), dft_length, frame_step, frame_length
 * must be constants (they decide the output shape); a runtime one is fatal, named.
 * Guarantees: the reference's result up to float32 rounding; unsupported values are fatal, named.
 */
#include "passes/expand/expand.h"

#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

#define MAX_MATRIX ((int64_t)1 << 26) /* DFT matrix elements (256 MiB of float32) */

/* Integer value of the scalar (or one-element) constant input v; fatal when v is not constant. */
static int64_t const_int(struct ex_ctx *e, uint32_t v, const char *what)
{
    const struct ir_value *x = ex_v(e, v);
    int64_t n = 1;
    for (int k = 0; k < x->rank; k++) n *= x->dims[k];
    if (!ref_is_int(x->dtype) || n != 1)
        ex_fatal(e, "%s must be an integer scalar (dtype %s, %lld elements)", what,
                 ir_dtype_name(x->dtype), (long long)n);
    if (!x->data)
        ex_fatal(e, "%s '%s' is given at run time; it decides the %s and must be a constant (an "
                 "initializer or Constant)", what, x->name,
                 strcmp(what, "axis") == 0 ? "transform axis" : "output shape");
    return ref_get_i(x->data, x->dtype, 0);
}

/* cos and sin of 2 pi r / L for 0 <= r < L, exact at multiples of a quarter turn. */
static void trig(int64_t r, int64_t L, double *c, double *s)
{
    if ((4 * r) % L == 0) {
        static const double cq[4] = {1, 0, -1, 0}, sq[4] = {0, 1, 0, -1};
        int q = (int)(4 * r / L);
        *c = cq[q];
        *s = sq[q];
        return;
    }
    double th = 2.0 * M_PI * (double)r / (double)L;
    *c = cos(th);
    *s = sin(th);
}

/* The float32 DFT (see banner) of xf [..., N, cin] over `axis` (in [0, rank-2)), length L;
 * returns [..., L_out, c_out] with the transform axis back at `axis`. */
static uint32_t dft_core(struct ex_ctx *e, uint32_t xf, int axis, int64_t L, bool inverse, bool onesided)
{
    const struct ir_value *xv = ex_v(e, xf);
    int rank = xv->rank;
    int64_t dims[IR_MAX_RANK];
    memcpy(dims, xv->dims, sizeof dims);
    int64_t N = dims[axis], cin = dims[rank - 1];
    if (cin != 1 && cin != 2)
        ex_fatal(e, "the last dim of the input is %lld (1 for real, 2 for complex)", (long long)cin);
    bool irfft = inverse && onesided;
    int64_t lout = onesided && !inverse ? L / 2 + 1 : L, cout = irfft ? 1 : 2;
    int64_t nused = irfft ? L / 2 + 1 : L;
    if (nused > N) nused = N;
    int64_t rows = N * cin, cols = lout * cout;
    if (rows * cols > MAX_MATRIX)
        ex_fatal(e, "a DFT of %lld -> %lld points needs a %lld x %lld matrix (at most %lld elements)",
                 (long long)N, (long long)lout, (long long)rows, (long long)cols, (long long)MAX_MATRIX);
    float *w = ir_alloc(e->g, (size_t)(rows * cols) * sizeof *w);
    memset(w, 0, (size_t)(rows * cols) * sizeof *w);
    double sc = inverse ? 1.0 / (double)L : 1.0;
    for (int64_t n = 0; n < nused; n++) {
        double wn = irfft && n != 0 && !(L % 2 == 0 && n == L / 2) ? 2.0 : 1.0;
        for (int64_t k = 0; k < lout; k++) {
            double c, s;
            trig((k * n) % L, L, &c, &s);
            if (!inverse) s = -s; /* e^{-i theta} */
            c *= sc * wn;
            s *= sc * wn;
            float *re = &w[(n * cin) * cols + k * cout];
            /* (xr + i xi)(c + i s) = (xr c - xi s) + i (xr s + xi c) */
            re[0] = (float)c;
            if (cout == 2) re[1] = (float)s;
            if (cin == 2) {
                float *im = re + cols;
                im[0] = (float)-s;
                if (cout == 2) im[1] = (float)c;
            }
        }
    }
    /* move axis next to the last one: perm = others..., axis, last */
    int64_t perm[IR_MAX_RANK], inv[IR_MAX_RANK], od[IR_MAX_RANK];
    int j = 0;
    int64_t batch = 1;
    for (int k = 0; k < rank - 1; k++)
        if (k != axis) {
            od[j] = dims[k];
            batch *= dims[k];
            perm[j++] = k;
        }
    perm[j++] = axis;
    perm[j++] = rank - 1;
    for (int k = 0; k < rank; k++) inv[perm[k]] = k;
    uint32_t t = ex_transpose(e, xf, rank, perm);
    int64_t flat[2] = {batch, rows}, wd[2] = {rows, cols};
    uint32_t y = ex_op2(e, IR_OP_MATMUL, ex_reshape(e, t, 2, flat), ex_const(e, IR_F32, 2, wd, w));
    od[rank - 2] = lout;
    od[rank - 1] = cout;
    y = ex_reshape(e, y, rank, od);
    return ex_transpose(e, y, rank, inv);
}

static void need_float(struct ex_ctx *e, uint32_t x, const char *what)
{
    enum ir_dtype t = ex_v(e, x)->dtype;
    if (t != IR_F32 && t != IR_F16 && t != IR_F64)
        ex_fatal(e, "%s of dtype %s is not supported (float32, float16, float64)", what, ir_dtype_name(t));
}

void expand_dft(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0), len = ex_in(e, 1), ax = ex_in(e, 2);
    need_float(e, x, "input");
    int64_t inverse = ex_attr_int(e, "inverse", 0), onesided = ex_attr_int(e, "onesided", 0);
    if (inverse != 0 && inverse != 1) ex_fatal(e, "inverse=%lld must be 0 or 1", (long long)inverse);
    if (onesided != 0 && onesided != 1) ex_fatal(e, "onesided=%lld must be 0 or 1", (long long)onesided);
    int64_t axis;
    if (e->g->opset >= 20) axis = ax != IR_NONE ? const_int(e, ax, "axis") : -2;
    else axis = ex_attr_int(e, "axis", 1);
    int rank = ex_v(e, x)->rank;
    if (rank < 2) ex_fatal(e, "input must have rank >= 2 ([..., N, 1 or 2]), not %d", rank);
    if (axis < -rank || axis > rank - 2 || axis == -1)
        ex_fatal(e, "axis=%lld is out of range for rank %d ([-r, -2] or [0, r-2])", (long long)axis, rank);
    if (axis < 0) axis += rank;
    int64_t n = ex_v(e, x)->dims[axis];
    int64_t L = inverse && onesided ? 2 * (n - 1) : n;
    if (len != IR_NONE) L = const_int(e, len, "dft_length");
    if (L < 1) ex_fatal(e, "dft_length=%lld must be >= 1", (long long)L);
    enum ir_dtype t = ex_v(e, x)->dtype;
    uint32_t y = dft_core(e, ex_cast(e, x, IR_F32), (int)axis, L, inverse, onesided);
    ex_output(e, 0, ex_cast(e, y, t));
}

void expand_stft(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0), step_v = ex_in(e, 1), win = ex_in(e, 2), fl_v = ex_in(e, 3);
    need_float(e, x, "signal");
    int64_t onesided = ex_attr_int(e, "onesided", 1);
    if (onesided != 0 && onesided != 1) ex_fatal(e, "onesided=%lld must be 0 or 1", (long long)onesided);
    const struct ir_value *xv = ex_v(e, x);
    if (xv->rank != 3 || (xv->dims[2] != 1 && xv->dims[2] != 2))
        ex_fatal(e, "signal must be [batch, signal_length, 1 or 2]");
    int64_t len = xv->dims[1];
    enum ir_dtype t = xv->dtype;
    int64_t step = const_int(e, step_v, "frame_step");
    if (step < 1) ex_fatal(e, "frame_step=%lld must be >= 1", (long long)step);
    int64_t fl = len;
    if (win != IR_NONE) {
        need_float(e, win, "window");
        if (ex_v(e, win)->rank != 1) ex_fatal(e, "window must be 1-D, not rank %d", ex_v(e, win)->rank);
        fl = ex_v(e, win)->dims[0];
    }
    if (fl_v != IR_NONE) {
        int64_t f = const_int(e, fl_v, "frame_length");
        if (win != IR_NONE && f != fl)
            ex_fatal(e, "frame_length=%lld differs from the window's length %lld", (long long)f, (long long)fl);
        fl = f;
    }
    if (fl < 1 || fl > len)
        ex_fatal(e, "frame_length=%lld must be in [1, signal_length=%lld]", (long long)fl, (long long)len);
    int64_t nf = 1 + (len - fl) / step;
    int64_t *idx = ir_alloc(e->g, (size_t)(nf * fl) * sizeof *idx);
    for (int64_t f = 0; f < nf; f++)
        for (int64_t j = 0; j < fl; j++) idx[f * fl + j] = f * step + j;
    int64_t id[2] = {nf, fl};
    uint32_t frames = ex_gather(e, ex_cast(e, x, IR_F32), ex_const(e, IR_I64, 2, id, idx), 1);
    if (win != IR_NONE) {
        int64_t wd[4] = {1, 1, fl, 1};
        frames = ex_op2(e, IR_OP_MUL, frames, ex_reshape(e, ex_cast(e, win, IR_F32), 4, wd));
    }
    uint32_t y = dft_core(e, frames, 2, fl, false, onesided);
    ex_output(e, 0, ex_cast(e, y, t));
}
