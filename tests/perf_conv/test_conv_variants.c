/* test_conv_variants.c — the direct-convolution kernel forms of codegen/lower_fconv.c on odd
 * shapes, every output element checked against a double-precision C reference.
 *
 * Each case is a small graph  Conv(x, w const, [bias const]) -> [Relu | x*Sigmoid(x)] ->
 * [Add(., r)] -> [Div(., const)]  compiled by the full pipeline (passes_run fuses the chain into
 * one o2c.Conv, so the fused epilogue is covered), run on the OpenCL device through the runtime,
 * and compared with a direct C evaluation of the same math in double:
 *   |got - expected| <= 1e-4 + 1e-4 * |expected|   (float32 accumulation over <= 1170 terms of
 *   magnitude <= 1).
 * The lowering's form is forced with ONNX2CL_FCONV (read at compile time by lower_fconv.c):
 *   "direct" (fconv_tile + fconv_v_k<KH>x<KW>...), "im2col" (fconv_im2col, or fconv_tile for
 *   pointwise convs, + fconv_v_k1x1...), "w4" (the older fconv_oc4w4 / fconv kernels),
 *   "winograd" and "winograd/2" (kernels/winograd.cl F(4x4, 3x3), the second in chunks of 2
 *   blocks of 16 tiles: several launches per conv; on the 3x3 stride-1 ungrouped 2-D cases,
 *   cpu class), and the default (cost model). Winograd's float32 transforms give ~10x the
 *   direct forms' rounding error (max 1.4e-4 here at |y| ~ 10: within the tolerance's relative
 *   part). The test also asserts that the launches of the compiled model use the
 *   kernel the form names, so a case cannot silently test another path.
 * Shapes: channels not multiples of 8 (output channels padded to the 4/8-channel block), widths
 * not multiples of the 16/32-column tile, strides 2, 3 and 5, dilations, asymmetric pads,
 * groups (2, 4, 3: the last falls back), depthwise (falls back), batch > 1, 1-D, pointwise
 * with positions not a multiple of the tile, residuals of full shape and broadcast per (n, c),
 * per channel, and per position.
 * With ONNX2CL_KERNELS=gpu (ctest perf_conv.variants_gpu) the gpu class runs: the implicit GEMM
 * of kernels/gemm_gpu.cl for every groups = 1 case (asserted), reading the weight in the layout
 * the form made (direct: k = (kh, ci, kw) panels; im2col: (ci, kh, kw) panels; w4: ONNX
 * layout), with split-K on the long-K cases.
 * With --f16 (ctest perf_conv.variants_f16 / variants_gpu_f16) the weights are stored as IEEE
 * half (--weights-dtype f16: the packed constants of fconv_v, read with vload_half by fconv_v_*_h
 * and gg_conv_*_h): the weights are drawn as half-representable floats, so the same reference
 * and tolerance apply, and every fconv_v / packed-layout gg_conv launch must be the half
 * kernel (only the ONNX-layout fallbacks read float32 weights).
 * Usage: test_conv_variants [--f16] [filter] (cases whose name contains filter; exit 0 = all
 * pass).
 * Label kernels.
 */
#include "codegen/codegen.h"
#include "onnx2cl_rt.h"
#include "passes/passes.h"
#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One test case (2-D unless d1). */
struct tc {
    const char *name; /* label */
    int n, c, h, w;   /* input [n, c, h, w] ([n, c, w] when d1) */
    int oc, kh, kw;   /* output channels, kernel */
    int sh, sw;       /* strides */
    int pt, pl, pb, pr; /* pads top, left, bottom, right */
    int dh, dw;       /* dilations */
    int group;        /* Conv group */
    int bias;         /* 1 = bias input */
    int act;          /* 0 none, 1 silu (x*Sigmoid(x)), 2 relu */
    int res;          /* residual: 0 none, 1 [N,OC,OH,OW], 2 [N,OC,1,1], 3 [1,OC,1,1], 4 [OH,OW] */
    float div;        /* 1 = no Div */
    int d1;           /* 1-D conv */
};

static const struct tc cases[] = {
    {"3x3 p1 C13 OC18 W37 bias", 1, 13, 9, 37, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0},
    {"3x3 p1 OC36 (pad to 40) silu+res", 2, 7, 6, 19, 36, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},
    {"3x3 p1 OC3 W70 res[N,OC,1,1] div", 1, 5, 5, 70, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 2.0f, 0},
    {"3x3 s2 p1 W35 relu", 2, 6, 11, 35, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 1, 0},
    {"3x3 s2 p(0,1,1,0) OC12", 1, 9, 10, 33, 12, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 0},
    {"3x3 s3 p1 OC8", 1, 4, 13, 50, 8, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0},
    {"2x4 s(1,5) W61 OC16", 1, 3, 7, 61, 16, 2, 4, 1, 5, 0, 2, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0},
    {"3x3 dil2 p2 res[1,OC,1,1]", 1, 10, 12, 40, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 3, 1, 0},
    {"3x2 dil(2,3) asym pads", 1, 5, 10, 23, 4, 3, 2, 1, 1, 1, 0, 2, 3, 2, 3, 1, 0, 0, 0, 1, 0},
    {"group2 cout8 3x3 p1 silu", 1, 12, 8, 21, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 0, 1, 0},
    {"group4 cout4 3x3 s2", 2, 8, 9, 17, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, 1, 0, 1, 1, 0},
    {"group3 cout6 (fallback)", 1, 9, 7, 9, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 0, 0, 1, 0},
    {"depthwise (fallback)", 1, 6, 7, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 0, 0, 0, 1, 0},
    {"1x1 P=63 C20 OC24 res[OH,OW]", 3, 20, 7, 9, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 4, 1, 0},
    {"1x1 P=1100 OC40 silu res div", 1, 33, 20, 55, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 4.0f, 0},
    {"1x1 s2 (not pointwise)", 1, 16, 9, 40, 8, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0},
    {"3x3 8x8 C40 OC64", 2, 40, 8, 8, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0},
    {"2x2 4x4 C64 OC128 (MTCNN conv4)", 3, 64, 4, 4, 128, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 2, 0, 1, 0},
    {"1-D k5 s2 p2 W77", 2, 6, 1, 77, 12, 1, 5, 1, 2, 0, 2, 0, 2, 1, 1, 1, 1, 0, 0, 1, 1},
    /* long K over one output tile: split-K in the gpu class */
    {"3x3 5x5 C130 OC20 silu+res (long K)", 1, 130, 5, 5, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},
    {"1x1 7x9 C600 OC12 relu div (long K)", 1, 600, 7, 9, 12, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 2, 0, 2.0f, 0},
    /* Winograd F(4x4, 3x3): odd sizes (partial tiles, lanes past the row), several 16-tile
     * blocks per row, batch 2, channels not multiples of 4/8/16, pads 0 and asymmetric */
    {"wino p0 C5 OC7 H11 W69 relu", 1, 5, 11, 69, 7, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 2, 0, 1, 0},
    {"wino p1 N2 C17 OC33 H13 W130 res[OH,OW] div", 2, 17, 13, 130, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 4, 3.0f, 0},
    {"wino p(1,0,2,1) C9 OC16 H10 W67 silu res", 1, 9, 10, 67, 16, 3, 3, 1, 1, 1, 0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0},
};

static uint64_t rng_state = 0x853c49e6748fea9bull;
static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 40) / 16777216.0 * 2.0 - 1.0);
}

static struct o2r_ctx *ctx;
static enum ir_dtype weights_dtype = IR_F32; /* --f16: IR_F16 (half weight storage) */
static int half_launches;                    /* --f16: half-weight launches seen */

/* Runs one case under form `form` (NULL = default). Returns 0 if every element matches. */
static int run_case(const struct tc *t, const char *form)
{
    if (form) setenv("ONNX2CL_FCONV", form, 1);
    else unsetenv("ONNX2CL_FCONV");
    const int oh = (t->h + t->pt + t->pb - t->dh * (t->kh - 1) - 1) / t->sh + 1;
    const int ow = (t->w + t->pl + t->pr - t->dw * (t->kw - 1) - 1) / t->sw + 1;
    const int cg = t->c / t->group, og = t->oc / t->group;
    const int64_t xn = (int64_t)t->n * t->c * t->h * t->w;
    const int64_t wn = (int64_t)t->oc * cg * t->kh * t->kw;
    const int64_t yn = (int64_t)t->n * t->oc * oh * ow;
    int64_t rd[4];
    int rrank = 0;
    switch (t->res) {
    case 1: rrank = 4; rd[0] = t->n; rd[1] = t->oc; rd[2] = oh; rd[3] = ow; break;
    case 2: rrank = 4; rd[0] = t->n; rd[1] = t->oc; rd[2] = 1; rd[3] = 1; break;
    case 3: rrank = 4; rd[0] = 1; rd[1] = t->oc; rd[2] = 1; rd[3] = 1; break;
    case 4: rrank = 2; rd[0] = oh; rd[1] = ow; break;
    }
    if (t->d1 && rrank == 4) rd[2] = rd[3], rrank = 3; /* [.., OC, OW] */
    int64_t rnum = 1;
    for (int i = 0; i < rrank; i++) rnum *= rd[i];

    struct ir_graph *g = ir_graph_new(t->name);
    g->opset = 17;
    float *x = malloc(sizeof(float) * xn), *rv = malloc(sizeof(float) * (rnum ? rnum : 1));
    float *wt = ir_alloc(g, sizeof(float) * wn), *bias = ir_alloc(g, sizeof(float) * t->oc);
    for (int64_t i = 0; i < xn; i++) x[i] = frand();
    for (int64_t i = 0; i < wn; i++) {
        wt[i] = frand();
        if (weights_dtype == IR_F16) wt[i] = ref_f16_to_f32(ref_f32_to_f16(wt[i]));
    }
    for (int i = 0; i < t->oc; i++) bias[i] = frand();
    for (int64_t i = 0; i < rnum; i++) rv[i] = frand();
    int64_t xd[4] = {t->n, t->c, t->h, t->w}, wd[4] = {t->oc, cg, t->kh, t->kw};
    if (t->d1) xd[2] = t->w, wd[2] = t->kw;
    const int rank = t->d1 ? 3 : 4;
    const int64_t bd[1] = {t->oc};
    g->inputs = ir_alloc(g, sizeof(uint32_t) * 2);
    uint32_t xin = ir_value_add(g, "x", IR_F32, rank, xd);
    g->values[xin].is_input = true;
    g->inputs[g->ninputs++] = xin;
    uint32_t rin = IR_NONE;
    if (t->res) {
        rin = ir_value_add(g, "r", IR_F32, rrank, rd);
        g->values[rin].is_input = true;
        g->inputs[g->ninputs++] = rin;
    }
    uint32_t ins[3] = {xin, ir_const_add(g, "w", IR_F32, rank, wd, wt, sizeof(float) * wn),
                       ir_const_add(g, "b", IR_F32, 1, bd, bias, sizeof(float) * t->oc)};
    uint32_t cur = ir_value_add(g, "conv_out", IR_UNDEFINED, -1, NULL);
    uint32_t nd = ir_node_add(g, ir_op_lookup("Conv"), "conv", "Conv", ins, t->bias ? 3 : 2, &cur, 1);
    if (t->d1) {
        const int64_t st[1] = {t->sw}, pads[2] = {t->pl, t->pr}, dil[1] = {t->dw};
        ir_attr_set_ints(g, nd, "strides", st, 1);
        ir_attr_set_ints(g, nd, "pads", pads, 2);
        ir_attr_set_ints(g, nd, "dilations", dil, 1);
    } else {
        const int64_t st[2] = {t->sh, t->sw}, pads[4] = {t->pt, t->pl, t->pb, t->pr};
        const int64_t dil[2] = {t->dh, t->dw};
        ir_attr_set_ints(g, nd, "strides", st, 2);
        ir_attr_set_ints(g, nd, "pads", pads, 4);
        ir_attr_set_ints(g, nd, "dilations", dil, 2);
    }
    ir_attr_set_int(g, nd, "group", t->group);
    if (t->act == 2) {
        uint32_t o = ir_value_add(g, "relu_out", IR_UNDEFINED, -1, NULL);
        ir_node_add(g, ir_op_lookup("Relu"), "relu", "Relu", &cur, 1, &o, 1);
        cur = o;
    } else if (t->act == 1) {
        uint32_t s = ir_value_add(g, "sig_out", IR_UNDEFINED, -1, NULL);
        ir_node_add(g, ir_op_lookup("Sigmoid"), "sig", "Sigmoid", &cur, 1, &s, 1);
        uint32_t o = ir_value_add(g, "silu_out", IR_UNDEFINED, -1, NULL);
        uint32_t mi[2] = {cur, s};
        ir_node_add(g, ir_op_lookup("Mul"), "mul", "Mul", mi, 2, &o, 1);
        cur = o;
    }
    if (t->res) {
        uint32_t o = ir_value_add(g, "add_out", IR_UNDEFINED, -1, NULL);
        uint32_t ai[2] = {cur, rin};
        ir_node_add(g, ir_op_lookup("Add"), "add", "Add", ai, 2, &o, 1);
        cur = o;
    }
    if (t->div != 1.0f) {
        float *dv = ir_alloc(g, sizeof(float));
        *dv = t->div;
        uint32_t dc = ir_const_add(g, "d", IR_F32, 0, NULL, dv, sizeof(float));
        uint32_t o = ir_value_add(g, "div_out", IR_UNDEFINED, -1, NULL);
        uint32_t di[2] = {cur, dc};
        ir_node_add(g, ir_op_lookup("Div"), "div", "Div", di, 2, &o, 1);
        cur = o;
    }
    g->outputs = ir_alloc(g, sizeof(uint32_t));
    g->outputs[g->noutputs++] = cur;
    g->values[cur].is_output = true;
    g->values[cur].nuses++;
    struct pass_options po = {0};
    po.verify = true;
    passes_run(g, &po);
    struct cg_options co = {.name = "kt", .with_main = false, .weights_dtype = weights_dtype};
    struct cg_ctx *m = cg_build(g, &co);
    const struct o2r_model_desc *d = cg_desc(m);
    int bad = 0;
    for (uint32_t i = 0; weights_dtype == IR_F16 && i < d->n_launches; i++) {
        const char *k = d->launches[i].kernel;
        const size_t kl = strlen(k);
        const bool half = kl > 2 && strcmp(k + kl - 2, "_h") == 0;
        half_launches += half;
        if (!half && (!strncmp(k, "fconv_v_", 8) || (!strncmp(k, "gg_conv_", 8) &&
                                                      strcmp(k, "gg_conv_reduce") != 0 &&
                                                      !strstr(k, "_o1_")))) {
            fprintf(stderr, "FAIL %s [%s]: launch %s reads float32 weights under f16 storage\n",
                    t->name, form ? form : "default", k);
            bad = 1;
        }
    }

    /* which kernels the form must (not) use */
    const bool pointwise = t->kh == 1 && t->kw == 1 && t->sh == 1 && t->sw == 1 && !t->pt &&
                           !t->pl && !t->pb && !t->pr;
    const bool blockable = t->group == 1 || og % 4 == 0;
    const char *want = NULL;
    if (form && !strcmp(form, "w4")) want = og % 4 == 0 ? "fconv_oc4w4" : "fconv_f32";
    else if (form && !blockable) want = og % 4 == 0 ? "fconv_oc4w4" : "fconv_f32";
    else if (form && !strcmp(form, "direct") && t->sw <= 4) want = "fconv_tile";
    else if (form && !strcmp(form, "im2col")) want = pointwise ? "fconv_v_k1x1" : "fconv_im2col";
    else if (form && !strncmp(form, "winograd", 8) && t->kh == 3 && t->kw == 3 && t->sh == 1 &&
             t->sw == 1 && t->dh == 1 && t->dw == 1 && t->group == 1 && !t->d1)
        want = "wino_gemm";
    bool found = want == NULL;
    for (uint32_t i = 0; i < d->n_launches; i++) {
        const char *k = d->launches[i].kernel;
        if (want && strncmp(k, want, strlen(want)) == 0) found = true;
    }
    /* gpu class (ONNX2CL_KERNELS=gpu): groups = 1 convs must run the implicit GEMM there */
    if (found && o2r_ctx_kernel_class(ctx, NULL) == O2R_VARIANT_GPU && t->group == 1) {
        want = "gg_conv_";
        found = false;
        for (uint32_t i = 0; i < d->n_launches; i++)
            if ((d->launches[i].variants & O2R_VARIANT_GPU) &&
                strncmp(d->launches[i].kernel, want, strlen(want)) == 0)
                found = true;
    }
    if (!found) {
        fprintf(stderr, "FAIL %s [%s]: no launch of %s; kernels:", t->name, form, want);
        for (uint32_t i = 0; i < d->n_launches; i++) fprintf(stderr, " %s", d->launches[i].kernel);
        fprintf(stderr, "\n");
        bad = 1;
    }

    char wpath[] = "/tmp/o2c_convvar_XXXXXX";
    int fd = mkstemp(wpath);
    if (fd < 0) return 1;
    close(fd);
    cg_write_weights(m, wpath);
    struct o2r_model *rm = NULL;
    if (o2r_model_init(ctx, d, wpath, &rm) != O2R_OK) {
        fprintf(stderr, "FAIL %s: init: %s\n", t->name, o2r_ctx_last_error(ctx));
        unlink(wpath);
        return 1;
    }
    unlink(wpath);
    float *y = malloc(sizeof(float) * yn);
    memset(y, 0xff, sizeof(float) * yn);
    const void *inp[2] = {x, rv};
    void *outp[1] = {y};
    if (o2r_model_run(rm, inp, outp) != O2R_OK) {
        fprintf(stderr, "FAIL %s: run: %s\n", t->name, o2r_ctx_last_error(ctx));
        bad = 1;
    }
    double maxerr = 0;
    int64_t first_bad = -1;
    const int KH = t->d1 ? 1 : t->kh;
    const int H = t->d1 ? 1 : t->h, OH = t->d1 ? 1 : oh;
    for (int64_t i = 0; i < yn && !bad; i++) {
        const int j = (int)(i % ow), r = (int)(i / ow % OH), o = (int)(i / ((int64_t)ow * OH) % t->oc);
        const int nn = (int)(i / ((int64_t)ow * OH * t->oc));
        const int gi = o / og;
        double acc = t->bias ? bias[o] : 0.0;
        for (int ci = 0; ci < cg; ci++)
            for (int a = 0; a < KH; a++)
                for (int b = 0; b < t->kw; b++) {
                    const int ih = r * t->sh - t->pt + a * t->dh, iw = j * t->sw - t->pl + b * t->dw;
                    if (t->d1 ? 0 : (ih < 0 || ih >= H)) continue;
                    if (iw < 0 || iw >= t->w) continue;
                    const int ihh = t->d1 ? 0 : ih;
                    acc += (double)x[(((int64_t)nn * t->c + gi * cg + ci) * H + ihh) * t->w + iw] *
                           wt[(((int64_t)o * cg + ci) * KH + a) * t->kw + b];
                }
        if (t->act == 1) acc = acc / (1.0 + exp(-acc));
        else if (t->act == 2) acc = acc > 0 ? acc : 0;
        const int64_t p = (int64_t)r * ow + j;
        switch (t->res) {
        case 1: acc += rv[i]; break;
        case 2: acc += rv[nn * t->oc + o]; break;
        case 3: acc += rv[o]; break;
        case 4: acc += rv[p]; break;
        }
        acc /= t->div;
        const double e = fabs(y[i] - acc);
        if (!(e <= 1e-4 + 1e-4 * fabs(acc))) {
            if (first_bad < 0) {
                first_bad = i;
                fprintf(stderr, "FAIL %s [%s]: element %lld (n %d oc %d oh %d ow %d): got %.7g "
                        "expected %.7g\n", t->name, form ? form : "default", (long long)i, nn, o,
                        r, j, y[i], acc);
            }
            bad = 1;
        }
        if (e > maxerr) maxerr = e;
    }
    if (!bad) {
        char ks[256] = "";
        const uint32_t cls = o2r_ctx_kernel_class(ctx, NULL);
        for (uint32_t i = 0; i < d->n_launches; i++) {
            if (d->launches[i].variants && !(d->launches[i].variants & cls)) continue;
            if (strlen(ks) + strlen(d->launches[i].kernel) + 2 >= sizeof ks) break;
            strcat(ks, i ? " " : "");
            strcat(ks, d->launches[i].kernel);
        }
        printf("ok   %-36s [%-7s] %lld elements, max abs err %.2g (atol 1e-4, rtol 1e-4): %s\n",
               t->name, form ? form : "default", (long long)yn, maxerr, ks);
    }
    free(x);
    free(rv);
    free(y);
    o2r_model_free(rm);
    cg_free(m);
    ir_graph_free(g);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--f16")) {
        weights_dtype = IR_F16;
        argv++, argc--;
    }
    const char *filt = argc > 1 ? argv[1] : ""; /* case names containing it only (oclgrind) */
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "cannot create an OpenCL context: %s\n", o2r_ctx_last_error(NULL));
        return 1;
    }
    /* winograd/2: chunks of 2 blocks of 16 tiles (several launches per conv) */
    static const char *forms[] = {NULL, "w4", "direct", "im2col", "winograd", "winograd/2"};
    /* gpu class: the default form (a panel layout of fconv_v: direct or im2col k order) on
     * every case, the other forms (w4: the ONNX layout) on every fourth case and the long-K
     * ones; cpu class: every form, the default only for the long-K cases (there for the gpu
     * class's split-K). Keeps both runs fast. */
    const bool gpu = o2r_ctx_kernel_class(ctx, NULL) == O2R_VARIANT_GPU;
    int bad = 0;
    /* --f16: the default form on every case, the forced direct and im2col forms on every third
     * case in the cpu class (the half reads are the same code in every form) */
    const bool f16 = weights_dtype == IR_F16;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const bool longk = strstr(cases[k].name, "(long K)") != NULL;
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            const struct tc *t = &cases[k];
            const bool wino = t->kh == 3 && t->kw == 3 && t->sh == 1 && t->sw == 1 &&
                              t->dh == 1 && t->dw == 1 && t->group == 1 && !t->d1;
            bool on = f16 ? f == 0 || (!gpu && f >= 2 && k % 3 == 0)
                          : f == 0 || (gpu ? k % 4 == 0 || longk : !longk);
            /* the Winograd forms (cpu class only) on the cases they apply to, long K too */
            if (f >= 4) on = !gpu && wino && (!f16 || f == 4) && (f == 4 || !longk);
            if (on && strstr(cases[k].name, filt)) bad |= run_case(&cases[k], forms[f]);
        }
    }
    o2r_ctx_free(ctx);
    if (weights_dtype == IR_F16 && !half_launches) {
        fprintf(stderr, "FAIL: --f16 ran no half-weight kernel\n");
        bad = 1;
    }
    printf(bad ? "FAILED\n" : "all passed\n");
    return bad;
}
