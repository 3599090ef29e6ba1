/* test_compute_kernels.c — standalone tests of kernels/{matmul,conv,pool,softmax,norm,reduce}.cl
 * against C references (double accumulation), on odd, non-tile-multiple shapes, through
 * OpenCL directly (clkb.h). Usage: test_compute_kernels <family>. Exit 0 iff all pass.
 * Tolerances (float32): atol 1e-5..1e-4 AND rtol 1e-4..1e-5 as stated per check; the arg/int
 * checks are exact.
 */
#include "clkb.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *dalloc(size_t n) { return calloc(n ? n : 1, sizeof(double)); }
static float *falloc(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

/* ---- matmul ------------------------------------------------------------------------------ */
static int test_matmul(void)
{
    int bad = 0;
    cl_program p = kb_program("matmul", "float", "f32");
    /* Batched broadcast: A [2,3,5,7] x B [3,7,9] -> Y [2,3,5,9]. */
    {
        const int B0 = 2, B1 = 3, M = 5, K = 7, N = 9;
        float *a = falloc(B0 * B1 * M * K), *b = falloc(B1 * K * N), *y = falloc(B0 * B1 * M * N);
        double *ref = dalloc(B0 * B1 * M * N);
        kb_fill(a, B0 * B1 * M * K, -1, 1, 1);
        kb_fill(b, B1 * K * N, -1, 1, 2);
        for (int i0 = 0; i0 < B0; i0++)
            for (int i1 = 0; i1 < B1; i1++)
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < N; n++) {
                        double s = 0;
                        for (int k = 0; k < K; k++)
                            s += (double)a[((i0 * B1 + i1) * M + m) * K + k] *
                                 b[(i1 * K + k) * N + n];
                        ref[((i0 * B1 + i1) * M + m) * N + n] = s;
                    }
        cl_mem A = kb_buf(a, 4 * B0 * B1 * M * K), Bm = kb_buf(b, 4 * B1 * K * N),
               Y = kb_buf(NULL, 4 * B0 * B1 * M * N);
        size_t gws[3] = {N, (M + 3) / 4, B0 * B1};
        struct kb_arg args[] = {KB_B(A), KB_B(Bm), KB_B(A), KB_B(Y), KB_I(M), KB_I(N), KB_I(K),
                                KB_I(K), KB_I(1), KB_I(N), KB_I(1), KB_I(1), KB_I(B1),
                                KB_I(B1 * M * K), KB_I(0), KB_I(M * K), KB_I(0), KB_I(0),
                                KB_I(K * N), KB_F(1), KB_F(0), KB_I(0), KB_I(0), KB_I(0)};
        kb_run(p, "matmul_f32", 3, gws, NULL, 24, args);
        kb_read(Y, y, 4 * B0 * B1 * M * N);
        bad += kb_check("matmul batched bcast [2,3,5,7]x[3,7,9]", y, ref, B0 * B1 * M * N, 1e-5,
                        1e-5);
    }
    /* Gemm transA, transB, alpha 0.5, beta 2, bias [N]: A [K,M], B [N,K]. */
    {
        const int M = 6, K = 13, N = 11;
        float *a = falloc(M * K), *b = falloc(K * N), *c = falloc(N), *y = falloc(M * N);
        double *ref = dalloc(M * N);
        kb_fill(a, M * K, -1, 1, 3);
        kb_fill(b, K * N, -1, 1, 4);
        kb_fill(c, N, -1, 1, 5);
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += (double)a[k * M + m] * b[n * K + k];
                ref[m * N + n] = 0.5 * s + 2.0 * c[n];
            }
        cl_mem A = kb_buf(a, 4 * M * K), Bm = kb_buf(b, 4 * K * N), C = kb_buf(c, 4 * N),
               Y = kb_buf(NULL, 4 * M * N);
        size_t gws[3] = {N, (M + 3) / 4, 1};
        struct kb_arg args[] = {KB_B(A), KB_B(Bm), KB_B(C), KB_B(Y), KB_I(M), KB_I(N), KB_I(K),
                                KB_I(1), KB_I(M), KB_I(1), KB_I(K), KB_I(1), KB_I(1),
                                KB_I(0), KB_I(0), KB_I(0), KB_I(0), KB_I(0), KB_I(0),
                                KB_F(0.5), KB_F(2), KB_I(0), KB_I(1), KB_I(1)};
        kb_run(p, "matmul_f32", 3, gws, NULL, 24, args);
        kb_read(Y, y, 4 * M * N);
        bad += kb_check("gemm transA transB alpha beta bias[N]", y, ref, M * N, 1e-5, 1e-5);
    }
    return bad;
}

/* ---- conv ----------------------------------------------------------------------------------- */
struct convp {
    int N, C, D, H, W, OC, KD, KH, KW, sd, sh, sw, pd, ph, pw, dd, dh, dw, group, bias;
    int opd, oph, opw; /* ConvTranspose output_padding */
};

static int run_conv(cl_program p, const struct convp *c, bool transpose, const char *what,
                    bool oc4)
{
    int OD, OH, OW;
    if (!transpose) {
        OD = (c->D + 2 * c->pd - (c->dd * (c->KD - 1) + 1)) / c->sd + 1;
        OH = (c->H + 2 * c->ph - (c->dh * (c->KH - 1) + 1)) / c->sh + 1;
        OW = (c->W + 2 * c->pw - (c->dw * (c->KW - 1) + 1)) / c->sw + 1;
    } else {
        OD = c->sd * (c->D - 1) + c->opd + (c->KD - 1) * c->dd + 1 - 2 * c->pd;
        OH = c->sh * (c->H - 1) + c->oph + (c->KH - 1) * c->dh + 1 - 2 * c->ph;
        OW = c->sw * (c->W - 1) + c->opw + (c->KW - 1) * c->dw + 1 - 2 * c->pw;
    }
    const int cin_g = c->C / c->group, cout_g = c->OC / c->group;
    const int nx = c->N * c->C * c->D * c->H * c->W;
    const int nw = (transpose ? c->C * cout_g : c->OC * cin_g) * c->KD * c->KH * c->KW;
    const int ny = c->N * c->OC * OD * OH * OW;
    float *x = falloc(nx), *w = falloc(nw), *b = falloc(c->OC), *y = falloc(ny);
    double *ref = dalloc(ny);
    kb_fill(x, nx, -1, 1, 11);
    kb_fill(w, nw, -1, 1, 12);
    kb_fill(b, c->OC, -1, 1, 13);
    const int KSZ = c->KD * c->KH * c->KW;
    for (int i = 0; i < ny; i++) ref[i] = c->bias ? b[(i / (OD * OH * OW)) % c->OC] : 0;
    /* scatter-form reference for both (conv as gather is the same sum) */
    for (int n = 0; n < c->N; n++)
        for (int oc = 0; oc < c->OC; oc++)
            for (int od = 0; od < OD; od++)
                for (int oh = 0; oh < OH; oh++)
                    for (int ow = 0; ow < OW; ow++) {
                        if (transpose) continue;
                        const int g = oc / cout_g;
                        double s = 0;
                        for (int ci = 0; ci < cin_g; ci++)
                            for (int kd = 0; kd < c->KD; kd++)
                                for (int kh = 0; kh < c->KH; kh++)
                                    for (int kw = 0; kw < c->KW; kw++) {
                                        int id = od * c->sd - c->pd + kd * c->dd;
                                        int ih = oh * c->sh - c->ph + kh * c->dh;
                                        int iw = ow * c->sw - c->pw + kw * c->dw;
                                        if (id < 0 || id >= c->D || ih < 0 || ih >= c->H ||
                                            iw < 0 || iw >= c->W)
                                            continue;
                                        s += (double)x[((((n * c->C + g * cin_g + ci) * c->D) +
                                                         id) * c->H + ih) * c->W + iw] *
                                             w[(oc * cin_g + ci) * KSZ +
                                               (kd * c->KH + kh) * c->KW + kw];
                                    }
                        ref[(((n * c->OC + oc) * OD + od) * OH + oh) * OW + ow] += s;
                    }
    if (transpose)
        for (int n = 0; n < c->N; n++)
            for (int ci = 0; ci < c->C; ci++)
                for (int id = 0; id < c->D; id++)
                    for (int ih = 0; ih < c->H; ih++)
                        for (int iw = 0; iw < c->W; iw++) {
                            const int g = ci / cin_g;
                            const double xv =
                                x[(((n * c->C + ci) * c->D + id) * c->H + ih) * c->W + iw];
                            for (int oo = 0; oo < cout_g; oo++)
                                for (int kd = 0; kd < c->KD; kd++)
                                    for (int kh = 0; kh < c->KH; kh++)
                                        for (int kw = 0; kw < c->KW; kw++) {
                                            int od = id * c->sd - c->pd + kd * c->dd;
                                            int oh = ih * c->sh - c->ph + kh * c->dh;
                                            int ow = iw * c->sw - c->pw + kw * c->dw;
                                            if (od < 0 || od >= OD || oh < 0 || oh >= OH ||
                                                ow < 0 || ow >= OW)
                                                continue;
                                            const int oc = g * cout_g + oo;
                                            ref[(((n * c->OC + oc) * OD + od) * OH + oh) * OW +
                                                ow] += xv * w[(ci * cout_g + oo) * KSZ +
                                                              (kd * c->KH + kh) * c->KW + kw];
                                        }
                        }
    cl_mem X = kb_buf(x, 4 * nx), Wm = kb_buf(w, 4 * nw), Bm = kb_buf(b, 4 * c->OC),
           Y = kb_buf(NULL, 4 * ny);
    size_t gws[1] = {(size_t)(oc4 ? ny / 4 : ny)};
    struct kb_arg args[] = {KB_B(X),   KB_B(Wm),   KB_B(Bm),   KB_B(Y),   KB_I(c->C),
                            KB_I(c->D), KB_I(c->H), KB_I(c->W), KB_I(c->OC), KB_I(OD),
                            KB_I(OH),  KB_I(OW),   KB_I(c->KD), KB_I(c->KH), KB_I(c->KW),
                            KB_I(c->sd), KB_I(c->sh), KB_I(c->sw), KB_I(c->pd), KB_I(c->ph),
                            KB_I(c->pw), KB_I(c->dd), KB_I(c->dh), KB_I(c->dw), KB_I(cin_g),
                            KB_I(cout_g), KB_I(c->bias), KB_I(oc4 ? ny / 4 : ny)};
    kb_run(p, transpose ? "conv_transpose_f32" : oc4 ? "conv_oc4_f32" : "conv_f32", 1, gws, NULL,
           28, args);
    kb_read(Y, y, 4 * ny);
    return kb_check(what, y, ref, ny, 1e-5, 1e-5);
}

static int test_conv(void)
{
    cl_program p = kb_program("conv", "float", "f32");
    int bad = 0;
    struct convp c2 = {.N = 2, .C = 6, .D = 1, .H = 11, .W = 9, .OC = 4, .KD = 1, .KH = 3,
                       .KW = 3, .sd = 1, .sh = 2, .sw = 2, .pd = 0, .ph = 1, .pw = 1, .dd = 1,
                       .dh = 1, .dw = 1, .group = 2, .bias = 1};
    bad += run_conv(p, &c2, false, "conv2d 3x3 s2 p1 group2 bias", false);
    struct convp c4 = {.N = 2, .C = 6, .D = 1, .H = 11, .W = 9, .OC = 16, .KD = 1, .KH = 3,
                       .KW = 3, .sd = 1, .sh = 2, .sw = 1, .pd = 0, .ph = 1, .pw = 1, .dd = 1,
                       .dh = 1, .dw = 2, .group = 2, .bias = 1};
    bad += run_conv(p, &c4, false, "conv_oc4 2D group2 OC16 bias", true);
    c4.bias = 0;
    c4.group = 1;
    c4.OC = 8;
    bad += run_conv(p, &c4, false, "conv_oc4 2D OC8 nobias", true);
    struct convp c5 = {.N = 1, .C = 3, .D = 4, .H = 5, .W = 6, .OC = 4, .KD = 2, .KH = 3,
                       .KW = 2, .sd = 1, .sh = 2, .sw = 1, .pd = 1, .ph = 1, .pw = 0, .dd = 2,
                       .dh = 1, .dw = 1, .group = 1, .bias = 1};
    bad += run_conv(p, &c5, false, "conv_oc4 3D", true);
    struct convp c1 = {.N = 1, .C = 5, .D = 1, .H = 1, .W = 17, .OC = 3, .KD = 1, .KH = 1,
                       .KW = 4, .sd = 1, .sh = 1, .sw = 1, .pd = 0, .ph = 0, .pw = 2, .dd = 1,
                       .dh = 1, .dw = 2, .group = 1, .bias = 0};
    bad += run_conv(p, &c1, false, "conv1d k4 dil2 pad2 nobias", false);
    struct convp c3 = {.N = 1, .C = 2, .D = 5, .H = 6, .W = 7, .OC = 3, .KD = 3, .KH = 2,
                       .KW = 3, .sd = 2, .sh = 1, .sw = 2, .pd = 1, .ph = 0, .pw = 1, .dd = 1,
                       .dh = 2, .dw = 1, .group = 1, .bias = 1};
    bad += run_conv(p, &c3, false, "conv3d mixed strides/dilations", false);
    struct convp t2 = {.N = 2, .C = 4, .D = 1, .H = 5, .W = 7, .OC = 6, .KD = 1, .KH = 3,
                       .KW = 3, .sd = 1, .sh = 2, .sw = 2, .pd = 0, .ph = 1, .pw = 1, .dd = 1,
                       .dh = 1, .dw = 1, .group = 2, .bias = 1, .oph = 1, .opw = 1};
    bad += run_conv(p, &t2, true, "convtranspose2d s2 p1 outpad1 group2", false);
    struct convp t3 = {.N = 1, .C = 3, .D = 1, .H = 4, .W = 5, .OC = 2, .KD = 1, .KH = 4,
                       .KW = 2, .sd = 1, .sh = 3, .sw = 1, .pd = 0, .ph = 0, .pw = 0, .dd = 1,
                       .dh = 1, .dw = 2, .group = 1, .bias = 0};
    bad += run_conv(p, &t3, true, "convtranspose2d s3 dil2", false);
    return bad;
}

/* ---- pool ----------------------------------------------------------------------------------- */
static int run_pool(cl_program p, int P, int H, int W, int KH, int KW, int s, int pb, int pe,
                    int dil, int mode, bool ceil_mode, const char *what)
{
    const int ek = dil * (KH - 1) + 1, ekw = dil * (KW - 1) + 1;
    int OH = ceil_mode ? (H + pb + pe - ek + s - 1) / s + 1 : (H + pb + pe - ek) / s + 1;
    int OW = ceil_mode ? (W + pb + pe - ekw + s - 1) / s + 1 : (W + pb + pe - ekw) / s + 1;
    if (ceil_mode) { /* ONNX: the last window must start inside input or left padding */
        if ((OH - 1) * s >= H + pb) OH--;
        if ((OW - 1) * s >= W + pb) OW--;
    }
    const int nx = P * H * W, ny = P * OH * OW;
    float *x = falloc(nx), *y = falloc(ny);
    double *ref = dalloc(ny);
    kb_fill(x, nx, -3, 1, 21);
    x[5] = NAN;
    for (int q = 0; q < P; q++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                double acc = mode == 0 ? -INFINITY : 0;
                int cnt = 0, ch = 0, cw = 0;
                bool nan = false;
                for (int kh = 0; kh < KH; kh++) {
                    int ih = oh * s - pb + kh * dil;
                    if (ih < H + pe) ch++;
                }
                for (int kw = 0; kw < KW; kw++) {
                    int iw = ow * s - pb + kw * dil;
                    if (iw < W + pe) cw++;
                }
                for (int kh = 0; kh < KH; kh++)
                    for (int kw = 0; kw < KW; kw++) {
                        int ih = oh * s - pb + kh * dil, iw = ow * s - pb + kw * dil;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        double v = x[(q * H + ih) * W + iw];
                        if (isnan(v)) nan = true;
                        if (mode == 0) acc = v > acc ? v : acc;
                        else acc += v;
                        cnt++;
                    }
                if (mode == 1) acc /= cnt;
                if (mode == 2) acc /= ch * cw;
                if (nan) acc = NAN;
                ref[(q * OH + oh) * OW + ow] = acc;
            }
    cl_mem X = kb_buf(x, 4 * nx), Y = kb_buf(NULL, 4 * ny);
    size_t gws[1] = {(size_t)ny};
    struct kb_arg args[] = {KB_B(X),  KB_B(Y),   KB_I(1),   KB_I(H),   KB_I(W),   KB_I(1),
                            KB_I(OH), KB_I(OW),  KB_I(1),   KB_I(KH),  KB_I(KW),  KB_I(1),
                            KB_I(s),  KB_I(s),   KB_I(0),   KB_I(pb),  KB_I(pb),  KB_I(0),
                            KB_I(pe), KB_I(pe),  KB_I(1),   KB_I(dil), KB_I(dil), KB_I(mode),
                            KB_I(ny)};
    kb_run(p, "pool_f32", 1, gws, NULL, 25, args);
    kb_read(Y, y, 4 * ny);
    return kb_check(what, y, ref, ny, 1e-6, 1e-5);
}

static int test_pool(void)
{
    cl_program p = kb_program("pool", "float", "f32");
    int bad = 0;
    bad += run_pool(p, 3, 11, 9, 3, 3, 2, 1, 1, 1, 0, false, "maxpool 3x3 s2 p1 (NaN)");
    bad += run_pool(p, 3, 10, 7, 3, 2, 2, 1, 0, 2, 0, true, "maxpool dil2 ceil");
    bad += run_pool(p, 2, 11, 9, 3, 3, 2, 1, 1, 1, 1, false, "avgpool exclude pad");
    bad += run_pool(p, 2, 10, 8, 3, 3, 2, 1, 1, 1, 2, true, "avgpool include pad ceil");
    return bad;
}

/* ---- softmax -------------------------------------------------------------------------------- */
static int run_softmax(cl_program p, int outer, int R, int inner, int mode, bool wg,
                       const char *what)
{
    const int n = outer * R * inner, rows = outer * inner;
    float *x = falloc(n), *y = falloc(n);
    double *ref = dalloc(n);
    kb_fill(x, n, -8, 8, 31 + R);
    if (mode == 2 && R > 3) x[2 * inner] = x[1 * inner] = 100; /* tie: first index wins */
    for (int o = 0; o < outer; o++)
        for (int i = 0; i < inner; i++) {
            double m = -INFINITY, s = 0;
            int am = 0;
            for (int j = 0; j < R; j++) {
                double v = x[(o * R + j) * inner + i];
                if (v > m) m = v, am = j;
            }
            for (int j = 0; j < R; j++) s += exp(x[(o * R + j) * inner + i] - m);
            for (int j = 0; j < R; j++) {
                double v = x[(o * R + j) * inner + i];
                ref[(o * R + j) * inner + i] =
                    mode == 0 ? exp(v - m) / s : mode == 1 ? v - m - log(s) : (j == am);
            }
        }
    cl_mem X = kb_buf(x, 4 * n), Y = kb_buf(NULL, 4 * n);
    if (wg) {
        size_t gws[1] = {(size_t)rows * 128}, lws[1] = {128};
        struct kb_arg args[] = {KB_B(X), KB_B(Y), KB_I(R), KB_I(inner), KB_I(mode)};
        kb_run(p, mode == 2 ? "hardmax_wg_f32" : "softmax_wg_f32", 1, gws, lws, mode == 2 ? 4 : 5,
               args);
    } else {
        size_t gws[1] = {(size_t)rows};
        struct kb_arg args[] = {KB_B(X), KB_B(Y), KB_I(R), KB_I(inner), KB_I(mode), KB_I(rows)};
        kb_run(p, "softmax_seq_f32", 1, gws, NULL, 6, args);
    }
    kb_read(Y, y, 4 * n);
    return kb_check(what, y, ref, n, 1e-6, 1e-5);
}

static int test_softmax(void)
{
    cl_program p = kb_program("softmax", "float", "f32");
    int bad = 0;
    bad += run_softmax(p, 3, 1000, 1, 0, true, "softmax wg rows of 1000");
    bad += run_softmax(p, 2, 77, 5, 0, true, "softmax wg R=77 inner=5");
    bad += run_softmax(p, 2, 300, 3, 1, true, "logsoftmax wg");
    bad += run_softmax(p, 2, 300, 3, 2, true, "hardmax wg (tie)");
    bad += run_softmax(p, 3, 77, 5, 2, true, "hardmax wg R<lws");
    bad += run_softmax(p, 4, 13, 7, 0, false, "softmax seq");
    bad += run_softmax(p, 4, 13, 7, 1, false, "logsoftmax seq");
    bad += run_softmax(p, 4, 13, 7, 2, false, "hardmax seq (tie)");
    return bad;
}

/* ---- norm ----------------------------------------------------------------------------------- */
/* norm_rows_short (team == 0, one work-item per row, work-groups of 4 rows) or norm_rows_team
 * with a team of `team` items; center == 0: RMSNorm (no mean subtraction). */
static int run_norm(cl_program p, int rows, int R, int rmod, int rmul, int jdiv, int jmod,
                    int nscale, int has_bias, float shift, int center, int team, const char *what)
{
    const int n = rows * R;
    float *x = falloc(n), *y = falloc(n), *sc = falloc(nscale), *bi = falloc(nscale);
    double *ref = dalloc(n);
    kb_fill(x, n, -1 + shift, 1 + shift, 41);
    kb_fill(sc, nscale, 0.5, 1.5, 42);
    kb_fill(bi, nscale, -1, 1, 43);
    const float eps = 1e-5f;
    for (int r = 0; r < rows; r++) {
        double m = 0, v = 0;
        for (int j = 0; j < R; j++) m += x[r * R + j];
        m = center ? m / R : 0;
        for (int j = 0; j < R; j++) v += (x[r * R + j] - m) * (x[r * R + j] - m);
        v /= R;
        for (int j = 0; j < R; j++) {
            int a = (r % rmod) * rmul + (j / jdiv) % jmod;
            ref[r * R + j] = (x[r * R + j] - m) / sqrt(v + eps) * sc[a] + (has_bias ? bi[a] : 0);
        }
    }
    cl_mem X = kb_buf(x, 4 * n), Y = kb_buf(NULL, 4 * n), S = kb_buf(sc, 4 * nscale),
           B = kb_buf(bi, 4 * nscale);
    const int per_wg = team ? 256 / team : 1, no = 0;
    size_t gws[1] = {team ? (size_t)((rows + per_wg - 1) / per_wg) * 256
                          : (size_t)((rows + 3) / 4) * 4},
           lws[1] = {team ? 256 : 4};
    struct kb_arg args[] = {KB_B(X),     KB_B(S),    KB_B(B),    KB_B(Y),    KB_I(R),
                            KB_F(eps),   KB_I(rmod), KB_I(rmul), KB_I(jdiv), KB_I(jmod),
                            KB_I(has_bias), KB_I(center), KB_I(rows), KB_I(team), KB_I(no),
                            KB_B(S),     KB_B(S)};
    if (!team) /* norm_rows_short: no tw argument */
        memmove(&args[13], &args[14], 3 * sizeof args[0]);
    kb_run(p, team ? "norm_rows_team_f32" : "norm_rows_short_f32", 1, gws, lws, team ? 17 : 16,
           args);
    kb_read(Y, y, 4 * n);
    return kb_check(what, y, ref, n, 1e-4, 1e-4);
}

static int test_norm(void)
{
    cl_program p = kb_program("norm", "float", "f32");
    int bad = 0;
    /* InstanceNorm N=2, C=5, S=37 */
    bad += run_norm(p, 10, 37, 5, 1, 37, 1, 5, 1, 0, 1, 0, "instancenorm");
    /* GroupNorm N=2, C=6, G=3, S=100 (per channel), mean offset 100 (stability) */
    bad += run_norm(p, 6, 200, 3, 2, 100, 2, 6, 1, 100, 1, 0, "groupnorm per-channel offset 100");
    /* GroupNorm per group */
    bad += run_norm(p, 6, 200, 3, 1, 200, 1, 3, 1, 0, 1, 0, "groupnorm per-group");
    /* LayerNorm rows 7 of R=33, scale [33], no bias */
    bad += run_norm(p, 7, 33, 1, 0, 1, 33, 33, 0, 0, 1, 0, "layernorm nobias");
    /* RMSNorm (center 0): rows of odd R, with and without bias, norm_rows_short and the team kernel
     * (rows not a multiple of the rows per work-group); LayerNorm through the team kernel */
    bad += run_norm(p, 7, 133, 1, 0, 1, 133, 133, 0, 0.5f, 0, 0, "rmsnorm R=133 nobias");
    bad += run_norm(p, 5, 33, 1, 0, 1, 11, 11, 1, 0, 0, 0, "rmsnorm scale suffix bcast bias");
    bad += run_norm(p, 13, 24, 1, 0, 1, 24, 24, 0, 0, 0, 32, "rmsnorm team 32 R=24");
    bad += run_norm(p, 3, 1000, 1, 0, 1, 1000, 1000, 1, 0, 0, 256, "rmsnorm team 256 R=1000");
    bad += run_norm(p, 11, 77, 1, 0, 1, 77, 77, 1, 3, 1, 64, "layernorm team 64 R=77 offset 3");
    /* norm_rows_short: segments of S = 7 (not a multiple of 4) per channel, rows 15 / 17 with
     * a float4 tail, mean 100 (the shift) */
    bad += run_norm(p, 6, 14, 3, 2, 7, 2, 6, 1, 3, 1, 0, "groupnorm per-channel S=7 short");
    bad += run_norm(p, 9, 17, 1, 0, 1, 17, 17, 1, 100, 1, 0, "layernorm R=17 offset 100 short");
    bad += run_norm(p, 5, 15, 1, 0, 1, 15, 15, 0, 0, 0, 0, "rmsnorm R=15 short");
    /* LayerNorm scale [11] broadcast over normalized [3,11] */
    bad += run_norm(p, 5, 33, 1, 0, 1, 11, 11, 1, 0, 1, 0, "layernorm scale suffix bcast");
    /* BatchNorm N=2, C=3, S=13 */
    {
        const int N = 2, C = 3, S = 13, n = N * C * S;
        float *x = falloc(n), *y = falloc(n), prm[4][3];
        double *ref = dalloc(n);
        kb_fill(x, n, -2, 2, 51);
        for (int k = 0; k < 4; k++) kb_fill(prm[k], 3, 0.1f, 2, 52 + k);
        for (int i = 0; i < n; i++) {
            int c = (i / S) % C;
            ref[i] = (x[i] - prm[2][c]) / sqrt(prm[3][c] + 1e-3) * prm[0][c] + prm[1][c];
        }
        cl_mem X = kb_buf(x, 4 * n), Y = kb_buf(NULL, 4 * n), P0 = kb_buf(prm[0], 12),
               P1 = kb_buf(prm[1], 12), P2 = kb_buf(prm[2], 12), P3 = kb_buf(prm[3], 12);
        size_t gws[1] = {(size_t)n};
        struct kb_arg args[] = {KB_B(X), KB_B(P0), KB_B(P1), KB_B(P2), KB_B(P3),
                                KB_B(Y), KB_I(C),  KB_I(S),  KB_F(1e-3f), KB_I(n)};
        kb_run(p, "batchnorm_f32", 1, gws, NULL, 10, args);
        kb_read(Y, y, 4 * n);
        bad += kb_check("batchnorm", y, ref, n, 1e-5, 1e-5);
    }
    return bad;
}

/* ---- reduce --------------------------------------------------------------------------------- */
static int run_reduce(cl_program p, const char *op, int outer, int R, int inner, int pre,
                      int post, float scale, bool wg, const char *what)
{
    const int n = outer * R * inner, nout = outer * inner;
    float *x = falloc(n), *y = falloc(nout);
    double *ref = dalloc(nout);
    kb_fill(x, n, strcmp(op, "prod") == 0 ? 0.9f : -2, strcmp(op, "prod") == 0 ? 1.1f : 2, 61);
    if (!strcmp(op, "max") || !strcmp(op, "min")) x[3 * inner] = NAN; /* row 0 gets NaN */
    for (int o = 0; o < outer; o++)
        for (int i = 0; i < inner; i++) {
            double acc = 0, m = -INFINITY;
            bool nan = false;
            for (int j = 0; j < R; j++) {
                double v = x[(o * R + j) * inner + i];
                if (isnan(v)) nan = true;
                v = pre == 1 ? fabs(v) : pre == 2 ? v * v : v;
                if (j == 0) acc = v;
                else if (!strcmp(op, "sum")) acc += v;
                else if (!strcmp(op, "prod")) acc *= v;
                else if (!strcmp(op, "max")) acc = v > acc ? v : acc;
                else if (!strcmp(op, "min")) acc = v < acc ? v : acc;
                if (v > m) m = v;
            }
            if (!strcmp(op, "lse")) {
                double s = 0;
                for (int j = 0; j < R; j++) s += exp(x[(o * R + j) * inner + i] - m);
                acc = m + log(s);
            }
            if (nan) acc = NAN;
            acc = post == 1 ? acc / scale : post == 2 ? sqrt(acc) : post == 3 ? log(acc) : acc;
            ref[o * inner + i] = acc;
        }
    cl_mem X = kb_buf(x, 4 * n), Y = kb_buf(NULL, 4 * nout);
    char kname[64];
    snprintf(kname, sizeof kname, "reduce_%s_%s_f32", op, wg ? "wg" : "seq");
    struct kb_arg args[] = {KB_B(X),   KB_B(Y),    KB_I(R),      KB_I(inner),
                            KB_I(pre), KB_I(post), KB_F(scale), KB_I(nout)};
    size_t gws[1] = {(size_t)nout * (wg ? 128 : 1)}, lws[1] = {128};
    kb_run(p, kname, 1, gws, wg ? lws : NULL, 8, args);
    kb_read(Y, y, 4 * nout);
    return kb_check(what, y, ref, nout, 1e-5, 1e-5);
}

static int test_reduce(void)
{
    cl_program p = kb_program("reduce", "float", "f32");
    int bad = 0;
    bad += run_reduce(p, "sum", 3, 517, 2, 0, 1, 517, true, "reducemean wg");
    bad += run_reduce(p, "sum", 3, 50, 1, 0, 1, 50, true, "reducemean wg R<lws");
    bad += run_reduce(p, "sum", 3, 17, 5, 2, 2, 1, false, "reduceL2 seq");
    bad += run_reduce(p, "sum", 3, 300, 5, 1, 0, 1, true, "reduceL1 wg");
    bad += run_reduce(p, "sum", 3, 300, 5, 0, 3, 1, false, "reducelogsum seq");
    bad += run_reduce(p, "max", 3, 300, 5, 0, 0, 1, true, "reducemax wg NaN");
    bad += run_reduce(p, "max", 3, 19, 5, 0, 0, 1, false, "reducemax seq NaN");
    bad += run_reduce(p, "min", 3, 300, 5, 0, 0, 1, true, "reducemin wg NaN");
    bad += run_reduce(p, "min", 2, 70, 1, 0, 0, 1, true, "reducemin wg R<lws NaN");
    bad += run_reduce(p, "prod", 2, 200, 3, 0, 0, 1, true, "reduceprod wg");
    bad += run_reduce(p, "prod", 2, 20, 3, 0, 0, 1, false, "reduceprod seq");
    bad += run_reduce(p, "lse", 2, 999, 3, 0, 0, 1, true, "reducelogsumexp wg");
    bad += run_reduce(p, "lse", 2, 9, 3, 0, 0, 1, false, "reducelogsumexp seq");
    /* ArgMax/ArgMin with NaN, ties, select_last_index, f32 and i64 */
    for (int wg = 0; wg < 2; wg++)
        for (int last = 0; last < 2; last++)
            for (int ismax = 0; ismax < 2; ismax++) {
                const int outer = 3, R = wg ? 300 : 23, inner = 2, n = outer * R * inner,
                          nout = outer * inner;
                float *x = falloc(n);
                long long *xi = calloc(n, 8);
                for (int i = 0; i < n; i++) x[i] = (float)((i * 7919) % 13), xi[i] = (long long)x[i] - 5;
                x[(0 * R + 5) * inner + 1] = NAN;
                x[(0 * R + 9) * inner + 1] = NAN;
                x[(1 * R + 0) * inner + 0] = NAN; /* NaN at index 0: the answer is 0 */
                x[(1 * R + 7) * inner + 0] = NAN;
                for (int t = 0; t < 2; t++) {
                    long long got[6], want[6];
                    for (int o = 0; o < outer; o++)
                        for (int i = 0; i < inner; i++) {
                            int bi = -1;
                            double bv = 0;
                            for (int j = 0; j < R; j++) {
                                double v = t ? (double)xi[(o * R + j) * inner + i]
                                             : x[(o * R + j) * inner + i];
                                /* onnxruntime: sequential scan, NaN never compares */
                                bool better;
                                if (bi < 0) better = true;
                                else if (v == bv) better = last;
                                else better = ismax ? v > bv : v < bv;
                                if (better) bv = v, bi = j;
                            }
                            want[o * inner + i] = bi;
                        }
                    cl_program pp = t ? kb_program("reduce", "long", "i64") : p;
                    cl_mem X = t ? kb_buf(xi, 8 * n) : kb_buf(x, 4 * n), Y = kb_buf(NULL, 8 * nout);
                    char kname[64];
                    snprintf(kname, sizeof kname, "%s_%s_%s", ismax ? "argmax" : "argmin",
                             wg ? "wg" : "seq", t ? "i64" : "f32");
                    struct kb_arg args[] = {KB_B(X), KB_B(Y), KB_I(R), KB_I(inner), KB_I(last),
                                            KB_I(nout)};
                    size_t gws[1] = {(size_t)nout * (wg ? 128 : 1)}, lws[1] = {128};
                    kb_run(pp, kname, 1, gws, wg ? lws : NULL, 6, args);
                    kb_read(Y, got, 8 * nout);
                    int b = memcmp(got, want, sizeof got) != 0;
                    printf("%s %s last=%d\n", b ? "FAIL" : "ok  ", kname, last);
                    if (b)
                        for (int k = 0; k < nout; k++)
                            fprintf(stderr, "  [%d] got %lld want %lld\n", k, got[k], want[k]);
                    bad += b;
                }
            }
    /* CumSum f32 (exclusive/reverse) */
    for (int mode = 0; mode < 4; mode++) {
        const int outer = 2, R = 37, inner = 3, n = outer * R * inner;
        const int excl = mode & 1, rev = mode >> 1;
        float *x = falloc(n), *y = falloc(n);
        double *ref = dalloc(n);
        kb_fill(x, n, -1, 1, 71);
        for (int o = 0; o < outer; o++)
            for (int i = 0; i < inner; i++) {
                double acc = 0;
                for (int t = 0; t < R; t++) {
                    int j = rev ? R - 1 - t : t;
                    double v = x[(o * R + j) * inner + i];
                    if (excl) ref[(o * R + j) * inner + i] = acc, acc += v;
                    else acc += v, ref[(o * R + j) * inner + i] = acc;
                }
            }
        cl_mem X = kb_buf(x, 4 * n), Y = kb_buf(NULL, 4 * n);
        struct kb_arg args[] = {KB_B(X),    KB_B(Y),   KB_I(R), KB_I(inner),
                                KB_I(excl), KB_I(rev), KB_I(outer * inner)};
        size_t gws[1] = {(size_t)outer * inner};
        kb_run(p, "cumsum_f32", 1, gws, NULL, 7, args);
        kb_read(Y, y, 4 * n);
        char what[64];
        snprintf(what, sizeof what, "cumsum exclusive=%d reverse=%d", excl, rev);
        bad += kb_check(what, y, ref, n, 1e-5, 1e-5);
    }
    /* int64 sum/max (exact) */
    {
        cl_program pi = kb_program("reduce", "long", "i64");
        const int outer = 2, R = 301, inner = 1, nout = 2;
        long long x[602], got[2], wsum[2] = {0, 0}, wmax[2] = {-(1LL << 62), -(1LL << 62)};
        for (int i = 0; i < 602; i++) {
            x[i] = (long long)((i * 2654435761u) % 100000) * 100000LL - 3;
            wsum[i / R] += x[i];
            if (x[i] > wmax[i / R]) wmax[i / R] = x[i];
        }
        cl_mem X = kb_buf(x, sizeof x), Y = kb_buf(NULL, 16);
        struct kb_arg args[] = {KB_B(X), KB_B(Y), KB_I(R), KB_I(inner), KB_I(0), KB_I(0),
                                KB_F(1), KB_I(nout)};
        size_t gws[1] = {(size_t)nout * 128}, lws[1] = {128};
        kb_run(pi, "reduce_sum_wg_i64", 1, gws, lws, 8, args);
        kb_read(Y, got, 16);
        int b = got[0] != wsum[0] || got[1] != wsum[1];
        kb_run(pi, "reduce_max_wg_i64", 1, gws, lws, 8, args);
        kb_read(Y, got, 16);
        b |= got[0] != wmax[0] || got[1] != wmax[1];
        printf("%s reduce sum/max i64 (outer %d)\n", b ? "FAIL" : "ok  ", outer);
        bad += b;
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s matmul|conv|pool|softmax|norm|reduce\n", argv[0]);
        return 2;
    }
    const char *f = argv[1];
    int bad;
    if (!strcmp(f, "matmul")) bad = test_matmul();
    else if (!strcmp(f, "conv")) bad = test_conv();
    else if (!strcmp(f, "pool")) bad = test_pool();
    else if (!strcmp(f, "softmax")) bad = test_softmax();
    else if (!strcmp(f, "norm")) bad = test_norm();
    else if (!strcmp(f, "reduce")) bad = test_reduce();
    else {
        fprintf(stderr, "unknown family %s\n", f);
        return 2;
    }
    printf("%s: %s\n", f, bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}
