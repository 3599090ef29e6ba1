/* sched_conv.c — how a convolution (Conv / o2c.Conv, lowered by codegen/lower_fconv.c into a
 * struct sched_conv) runs on each kernel class (docs/kernel_variants.md).
 *
 * cpu: kernels/fconv.cl. fconv_v (1-D/2-D, constant weights, output channels per group a
 *   multiple of 4 or group 1): register-tiled, 8 or 16 output channels x 16 or 32 columns of
 *   float16 accumulators per work-item, weights repacked at compile time (a new constant shared
 *   by the nodes using the same weights), two launches:
 *     direct form: fconv_tile copies the input into per-column-tile runs (padding and stride
 *       phases applied), then fconv_v_k<KH>x<KW>_s<SW>_d<DW>_o<OCB>_v<NV> (one specialization
 *       per geometry, generated with FCONV_V_DEFINE through cg_add_source);
 *     im2col form: fconv_im2col (fconv_tile for pointwise convs) writes the KH*KW taps of 16/32
 *       flattened output positions per run, then the 1x1 specialization (a GEMM); used for
 *       pointwise convs, widths that waste vector lanes (8x8, 3x3 outputs), and strides > 4,
 *       chosen by a small cost model (try_fconv_v).
 *   ~15-20x the older kernels on SD shapes (PoCL, AVX-512; tests/perf_conv/RESULTS.md).
 *   fconv_oc4w4 (4 channels x 4 columns) where channels per group come in fours, else the
 *   scalar fconv: run-time weights (conformance tests), 3-D convs, other group shapes.
 *   Winograd F(4x4, 3x3) (kernels/winograd.cl, try_winograd) for 2-D 3x3 convs with stride 1,
 *   dilation 1, group 1 and constant weights, chosen by a cost model where it measured faster
 *   (large planes: TAESD, the VAE decoders, the UNet's 320-channel 64x64 level; small planes
 *   and few output channels stay direct): 36 multiplies per 16 outputs and channel instead of
 *   144. Filter transform of the fconv_v panel constant on the device every run (1-10% of the
 *   conv; a compile-time U would be 4x the weight and would tie the weights file to the
 *   shape-dependent choice: the file stays the same for every variant and --shape), then per
 *   chunk of 16-tile blocks (V + M ~16 MiB, kept in cache between launches) input transform,
 *   36 GEMMs (fconv_v's 16x16 float16 register tile), output transform with the epilogue and
 *   split store: 1 + 3 launches per chunk. ~2x fconv_v's throughput on those shapes
 *   (bench/results/winograd-2026-12-02.md); float32 error ~2x the direct form's vs PyTorch.
 *   Temporaries U [36][KB][C][16], V, M (chunk-sized) are cg_temp buffers live during the
 *   node.
 *   ONNX2CL_FCONV (read at compile time, for tests and benchmarks): "direct" / "im2col" force a
 *   fconv_v form where it applies, "winograd" the Winograd form ("winograd/N": chunks of N
 *   blocks), "o8" keeps 8 channels per work-item, "w4" selects fconv_oc4w4, "oc4" the
 *   4-channel fconv_oc4; any of them turns the cost model's Winograd choice off; any other
 *   value is fatal (fconv_env: a typo must not quietly measure the default).
 *   Temporary memory: the tiled input (~1.06x the input; im2col: KH*KW x, at most 256 MiB) is a
 *   cg_temp buffer live during the node only.
 * gpu: implicit GEMM (kernels/gemm_gpu.cl GG_CONV_DEFINE) for 1-D/2-D convs with groups = 1, any
 *   stride, padding and dilation: rows = output channels, columns = images x output positions,
 *   the im2col gathered into __local tiles (no im2col buffer); the weight read from the cpu
 *   class's packed constant when fconv_v made one (panels of OCB channels, k in that form's
 *   order), else from the ONNX weight: stored once either way. Split-K (partial sums in a
 *   cg_temp buffer + gg_conv_reduce) for few tiles and long K (SD's 8x8 level, K = 11520).
 *   3-D and grouped convs run the cpu class's fallback kernels (fconv_oc4w4 / fconv).
 * Assumes: the lowering checked dtypes, shapes, bias, residual broadcast and 2^31 limits.
 * Guarantees: fatal (ir_fatal_node) for temporaries of >= 2^31 elements; never a wrong launch.
 */
#include "codegen/sched_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The packed weight constant that the cpu class's fconv_v made (w = IR_NONE: none). */
struct conv_packed {
    uint32_t w; /* the constant */
    int ocb;    /* output channels per panel */
    bool flat;  /* k = (ci, kh, kw) (im2col form of a grouped conv); else k = (kh, ci, kw) */
};

/* The packed weights of fconv_v for w (ONNX layout [OC, cin, KH, KW], constant), as the
 * kernels read them: [ceil(OC/OCB)][KH][cin][KW][OCB] (direct form, also the im2col form of an
 * ungrouped conv: fconv_im2col writes its taps in that order), or with flat (im2col form of a
 * grouped conv) [ceil(OC/OCB)][cin*KH*KW][OCB]; zero where oc >= OC; shared by every node using w; float32 or
 * half (cg_weight_const, --weights-dtype). OCB and the form follow from the activation shape,
 * so the constant holds (and the weights file keeps) the direct form with base_ocb channels per
 * panel (from the weight's dims and group only: the same bytes for every --shape); where the
 * kernels read another form the runtime rearranges it at load (cg_weight_repack, equal sizes).
 * ocb is the panel width the kernel reads (the 16-channel fconv_v kernels read 8-channel
 * panels), so only the flat form of grouped convs is rearranged today. */
/* ir_lazy fill of the direct-form panels of conv weight src[0]: p = {OC, cin, KH, KW, OCB},
 * float32 (packed_weights). */
static void fill_fconv(const struct ir_graph *g, const struct ir_lazy *l, void *out)
{
    const int64_t OC = l->p[0], cin = l->p[1], KH = l->p[2], KW = l->p[3], ocb = l->p[4];
    void *owned;
    const float *src = ir_const_bytes(g, l->src[0], &owned);
    float *dst = out;
    /* a panel's ocb rows are read together, each tap run of a row in order (cache friendly) */
    for (int64_t ob = 0; ob * ocb < OC; ob++) {
        const int64_t nrow = OC - ob * ocb < ocb ? OC - ob * ocb : ocb;
        for (int64_t ci = 0; ci < cin; ci++)
            for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++) {
                    float *d = dst + (((ob * KH + kh) * cin + ci) * KW + kw) * ocb;
                    const float *s = src + ((ob * ocb * cin + ci) * KH + kh) * KW + kw;
                    for (int64_t oo = 0; oo < nrow; oo++) d[oo] = s[oo * cin * KH * KW];
                }
    }
    free(owned);
}

static uint32_t packed_weights(struct cg_ctx *cg, struct ir_graph *g, uint32_t w, int ocb,
                               int base_ocb, bool flat)
{
    const struct ir_value *wv = &g->values[w];
    const int64_t OC = wv->dims[0], cin = wv->dims[1];
    const int64_t KH = wv->rank > 3 ? wv->dims[wv->rank - 2] : 1, KW = wv->dims[wv->rank - 1];
    const bool repack = ocb != base_ocb || (flat && KH * KW > 1);
    /* "<w>.fconv_v<base>", plus "@o<OCB>[f]" for the form rearranged at load (the weights file
     * names the tensor without it: the same file for every --shape) */
    const char *name = repack ? ir_sprintf(g, "%s.fconv_v%d@o%d%s", wv->name, base_ocb, ocb,
                                           flat ? "f" : "")
                              : ir_sprintf(g, "%s.fconv_v%d", wv->name, base_ocb);
    uint32_t pv = ir_value_find(g, name);
    if (pv != IR_NONE) return pv;
    wv = &g->values[w];
    const int64_t nb = (OC + base_ocb - 1) / base_ocb;
    const int64_t numel = nb * KH * cin * KW * base_ocb;
    if ((OC + ocb - 1) / ocb * ocb != nb * base_ocb)
        ir_die("internal error (%s:%d): conv weight '%s': panels of %d and %d channels differ "
               "in size", __FILE__, __LINE__, wv->name, ocb, base_ocb);
    const int64_t dims[1] = {numel};
    const struct ir_lazy fill = {.fill = fill_fconv, .src = {w, IR_NONE, IR_NONE, IR_NONE},
                                 .p = {OC, cin, KH, KW, base_ocb}};
    pv = cg_weight_const(cg, name, ir_sprintf(g, "fconv_v%d", base_ocb), 1, dims, &fill);
    g->values[pv].shape_dep = g->values[w].shape_dep; /* not wv: adding pv may move g->values */
    if (repack) {
        const struct o2r_repack r = {.kind = O2R_REPACK_CONV,
                                     .elem_bytes = (uint32_t)ir_dtype_size(cg_weight_dtype(cg)),
                                     .src_ocb = (uint32_t)base_ocb, .dst_ocb = (uint32_t)ocb,
                                     .flat = flat, .oc = OC, .cin = cin, .kh = KH, .kw = KW};
        cg_weight_repack(cg, pv, &r);
    }
    return pv;
}

/* The output buffers Y, Y1, Y2, Y3 of every conv kernel (kernels/fconv.cl, gemm_gpu.cl): the
 * split outputs, the first one again as placeholder for splits that do not exist. */
static void out_bufs(struct cg_ctx *cg, const struct sched_conv *c)
{
    for (int s = 0; s < SCHED_CONV_MAX_SPLITS; s++) cg_arg_buf(cg, s < c->nsplit ? c->ys[s] : c->y);
}

/* The arguments OC, o1, o2, o3 of every conv kernel: all output channels and the first channel
 * of splits 1..3 (OC for splits that do not exist). */
static void out_offs(struct cg_ctx *cg, const struct sched_conv *c, int64_t OC)
{
    cg_arg_i32(cg, OC);
    for (int s = 1; s < SCHED_CONV_MAX_SPLITS; s++) cg_arg_i32(cg, s < c->nsplit ? c->off[s] : OC);
}

/* The epilogue arguments has_bias, act, has_res, rn, rc, rp, has_div, div of every conv kernel:
 * the fconv and Winograd kernels (gpu 0: kernels/fconv.cl activation codes), the implicit GEMM
 * and its split-K reduce (gpu 1: kernels/gemm_gpu.cl codes, fconv's 1 silu -> 2, 2 relu -> 1). */
static void epilogue_args(struct cg_ctx *cg, const struct sched_conv *c, bool gpu)
{
    cg_arg_i32(cg, c->bias != IR_NONE);
    cg_arg_i32(cg, !gpu ? c->act : c->act == 1 ? 2 : c->act == 2 ? 1 : 0);
    cg_arg_i32(cg, c->res != IR_NONE);
    cg_arg_i32(cg, c->rn);
    cg_arg_i32(cg, c->rc);
    cg_arg_i32(cg, c->rp);
    cg_arg_i32(cg, c->div != 1.0f);
    cg_arg_f32(cg, c->div);
}

/* fconv_v (kernels/fconv.cl): the register-tiled kernel for constant weights and 1-D/2-D convs,
 * direct or im2col form (see the banner). Returns false (nothing emitted) where it does not
 * apply: run-time weights, 3-D, channels per group not in fours (group > 1), temporaries of
 * >= 2^31 elements. Geometry in 3-D form (index 0 = D). On success *pk names the packed weight
 * constant it made (the gpu class reads the same one). */
/* $ONNX2CL_FCONV (banner), checked: an unknown value is fatal, never silently the default (a
 * benchmark would measure the wrong kernel). NULL when unset or empty. */
static const char *fconv_env(void)
{
    const char *e = getenv("ONNX2CL_FCONV");
    if (!e || !*e) return NULL;
    static const char *const known[] = {"direct", "im2col", "winograd", "o8", "w4", "oc4"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strcmp(e, known[i]) == 0) return e;
    if (strncmp(e, "winograd/", 9) == 0 && e[9] >= '1' && e[9] <= '9' &&
        strspn(e + 9, "0123456789") == strlen(e + 9) && strlen(e + 9) <= 6)
        return e;
    ir_die("ONNX2CL_FCONV=%s: unknown conv form (known: direct, im2col, winograd, winograd/N "
           "with N >= 1 blocks per chunk, o8, w4, oc4; unset for the cost model's choice)", e);
    return NULL;
}

/* The program's source does not depend on the image size (issue 24 item 3): besides the kernel a
 * conv runs, the source defines every fconv_v form the same conv takes at another size (the
 * vector width nv, 1 or 2, follows the output width; the 16-channel form goes with nv 1; im2col vs
 * direct follows a cost model of the plane): so every size of one architecture builds the same
 * OpenCL program, whose build and per-kernel compiles the platform caches once (PoCL's kernel
 * cache keys on the program's source). Unused kernels cost only the front end (PoCL compiles a
 * kernel at its first launch). KH 0: the direct form does not apply. */
static void fconv_v_sources(struct cg_ctx *cg, int base_ocb, int64_t cout, int64_t KH, int64_t KW,
                            int64_t sw, int64_t dw, const char *ws, const char *wn)
{
    for (int form = 0; form < 2; form++) { /* 0: direct, 1: im2col (1x1 taps) */
        if (form == 0 && KH == 0) continue;
        const int64_t kh = form ? 1 : KH, kw = form ? 1 : KW, s1 = form ? 1 : sw,
                      d1 = form ? 1 : dw;
        for (int nv = 1; nv <= 2; nv++) {
            const int o = nv == 1 && base_ocb == 8 && cout % 16 == 0 ? 16 : base_ocb;
            char src[200];
            snprintf(src, sizeof src,
                     "FCONV_V_DEFINE(fconv_v_k%lldx%lld_s%lld_d%lld_o%d_v%d%s, %lld, %lld, %lld, "
                     "%lld, %d, %d, %s)\n",
                     (long long)kh, (long long)kw, (long long)s1, (long long)d1, o, nv, wn,
                     (long long)kh, (long long)kw, (long long)s1, (long long)d1, o, nv, ws);
            cg_add_source(cg, src);
        }
    }
}

/* The output channels per panel fconv_v stores for a conv of OC output channels in `group` groups
 * (the weights file's panels: packed_weights), 0 when it cannot run it. */
static int fconv_v_ocb(int64_t OC, int64_t group)
{
    const int64_t cout = OC / group;
    if (group == 1) return OC % 8 == 0 || OC > 32 ? 8 : 4;
    if (cout % 8 == 0) return 8;
    if (cout % 4 == 0) return 4;
    return 0;
}

/* fconv_v_sources for conv c when try_fconv_v can take it at some size (its checks that do not
 * depend on the size), before the size decides between Winograd and fconv_v. */
static void fconv_v_declare(struct cg_ctx *cg, struct ir_graph *g, const struct sched_conv *c)
{
    const char *env = fconv_env();
    if (env && (strcmp(env, "oc4") == 0 || strcmp(env, "w4") == 0)) return;
    if (!ir_is_const(g, c->w) || c->in[0] != 1 || c->k[0] != 1 || c->out[0] != 1) return;
    const int64_t OC = g->values[c->w].dims[0], cout = OC / c->group;
    const int ocb = fconv_v_ocb(OC, c->group);
    if (!ocb) return;
    const int64_t KH = c->k[1], KW = c->k[2], sw = c->s[2], dw = c->d[2];
    const bool direct_ok = sw <= 4 && KH * KW <= 64, half = cg_weight_dtype(cg) == IR_F16;
    fconv_v_sources(cg, ocb, cout, direct_ok ? KH : 0, KW, sw, dw, half ? "f16" : "f32",
                    half ? "_h" : "");
}

static bool try_fconv_v(struct cg_ctx *cg, struct ir_graph *g, const struct sched_conv *c,
                        struct conv_packed *pk)
{
    const uint32_t node = c->node, x = c->x, w = c->w, b = c->bias, r = c->res;
    const int64_t *in = c->in, *out = c->out, *k = c->k, *s = c->s, *d = c->d, *p = c->p;
    const int64_t group = c->group, act = c->act, rn = c->rn, rc = c->rc, rp = c->rp;
    const float div = c->div;
    const struct ir_node *n = &g->nodes[node];
    const char *env = fconv_env();
    if (env && (strcmp(env, "oc4") == 0 || strcmp(env, "w4") == 0)) return false;
    if (!ir_is_const(g, w)) return false;
    if (in[0] != 1 || k[0] != 1 || out[0] != 1) return false; /* 3-D */
    const struct ir_value *xv = &g->values[x];
    const int64_t N = xv->dims[0], C = xv->dims[1], OC = g->values[w].dims[0];
    const int64_t cin = C / group, cout = OC / group;
    int ocb = fconv_v_ocb(OC, group);
    if (!ocb) return false;
    const int base_ocb = ocb; /* the weights file's panels (packed_weights) */
    int64_t H = in[1], W = in[2], OH = out[1], OW = out[2], KH = k[1], KW = k[2];
    int64_t sh = s[1], sw = s[2], dh = d[1], dw = d[2], ph = p[1], pw = p[2];
    const int64_t lim = ((int64_t)1 << 31) - 1;
    /* direct form: tiles of 16*nv columns of one row; lanes past OW are wasted */
    int nv = OW >= 32 ? 2 : 1;
    int64_t tile = 16 * nv, owt = (OW + tile - 1) / tile;
    const double lanes_direct = (double)OW / (double)(owt * tile);
    /* im2col form: tiles of 16*nv output positions of the flattened plane, K = cin*KH*KW taps
     * per position written out (KH*KW times the input); for pointwise convs, small or odd
     * widths (MTCNN, SD's 8x8 level), and where the direct form cannot run (large strides) */
    const int64_t P = OH * OW;
    const int64_t K = C * KH * KW;
    const bool pointwise = KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
    const int nvc = P >= 32 ? 2 : 1;
    const int64_t tilec = 16 * nvc, pt = (P + tilec - 1) / tilec;
    const int64_t colnumel = N * pt * K * tilec;
    const bool col_ok = colnumel <= lim && colnumel * 4 <= ((int64_t)256 << 20);
    const bool direct_ok = sw <= 4 && KH * KW <= 64;
    /* rough cost model (PoCL, 2 cores): multiply-adds at ~150 GFLOP/s on the used lanes, plus
     * the copy kernel: ~0.2 ns per element of the tiled input, ~1 ns per im2col element */
    const double flop = 2.0 * (double)N * OC * P * cin * KH * KW;
    const double lanes_col = (double)P / (double)(pt * tilec);
    const double xt_numel = (double)N * H * owt * C * ((tile - 1) * sw + (KW - 1) * dw + sw);
    const double t_direct = flop / lanes_direct / 150e9 + xt_numel * 0.2e-9;
    const double t_col = flop / lanes_col / 150e9 + (double)colnumel * 1e-9;
    bool im2col = col_ok && (pointwise || !direct_ok || t_col < t_direct);
    if (env && strcmp(env, "direct") == 0 && direct_ok) im2col = false;
    if (env && strcmp(env, "im2col") == 0 && col_ok) im2col = true;
    if (!im2col && !direct_ok) return false;
    uint32_t xp;
    if (im2col && pointwise) {
        /* the im2col form of a pointwise conv is the tiled input of one row of P columns */
        xp = cg_temp(cg, node, IR_F32, colnumel);
        size_t pg[2] = {(size_t)C, (size_t)(N * pt)};
        cg_launch(cg, node, "fconv_tile", 2, pg, NULL);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, xp);
        cg_arg_i32(cg, C);
        cg_arg_i32(cg, 1);
        cg_arg_i32(cg, P);
        cg_arg_i32(cg, pt);
        cg_arg_i32(cg, tilec);
        cg_arg_i32(cg, tilec);
        cg_arg_i32(cg, 0);
        cg_arg_i32(cg, 1);
        cg_arg_i32(cg, tilec);
    } else if (im2col) {
        xp = cg_temp(cg, node, IR_F32, colnumel);
        size_t pg[2] = {(size_t)C, (size_t)(N * pt)};
        cg_launch(cg, node, "fconv_im2col", 2, pg, NULL);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, xp);
        cg_arg_i32(cg, C);
        cg_arg_i32(cg, H);
        cg_arg_i32(cg, W);
        cg_arg_i32(cg, OW);
        cg_arg_i32(cg, P);
        cg_arg_i32(cg, pt);
        cg_arg_i32(cg, tilec);
        cg_arg_i32(cg, KH);
        cg_arg_i32(cg, KW);
        cg_arg_i32(cg, sh);
        cg_arg_i32(cg, sw);
        cg_arg_i32(cg, ph);
        cg_arg_i32(cg, pw);
        cg_arg_i32(cg, dh);
        cg_arg_i32(cg, dw);
        cg_arg_i32(cg, group == 1); /* k order: the direct form's where groups allow */
    }
    if (im2col) {
        /* the direct kernel on one row of P positions with 1x1 taps over K channels */
        nv = nvc;
        tile = tilec;
        owt = pt;
        H = OH = 1;
        W = OW = P;
        KH = KW = sh = sw = dh = dw = 1;
        ph = pw = 0;
    } else {
        const int64_t XT0 = (tile - 1) * sw + (KW - 1) * dw + 1, XTP = (XT0 + sw - 1) / sw;
        if (N * H * owt * C * XTP * sw > lim) return false;
        xp = cg_temp(cg, node, IR_F32, N * H * owt * C * XTP * sw);
        size_t pg[2] = {(size_t)C, (size_t)(N * H * owt)};
        cg_launch(cg, node, "fconv_tile", 2, pg, NULL);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, xp);
        cg_arg_i32(cg, C);
        cg_arg_i32(cg, H);
        cg_arg_i32(cg, W);
        cg_arg_i32(cg, owt);
        cg_arg_i32(cg, XT0);
        cg_arg_i32(cg, tile * sw);
        cg_arg_i32(cg, pw);
        cg_arg_i32(cg, sw);
        cg_arg_i32(cg, XTP);
    }
    /* floats per (row, tile, channel) run of the kernel's input */
    const int64_t XT = im2col ? tile : ((tile - 1) * sw + (KW - 1) * dw + sw) / sw * sw;
    cg_need_i32(g, n, xp);
    /* one column vector per work-item: 16 channels keep 16 independent accumulators */
    if (nv == 1 && ocb == 8 && cout % 16 == 0 && !(env && strcmp(env, "o8") == 0)) ocb = 16;
    /* the im2col form of an ungrouped conv orders its taps as the direct form's weights */
    const bool kflat = im2col && group > 1;
    /* the 16-channel kernels read two consecutive 8-channel panels (kernels/fconv.cl, SPB):
     * the form the weights file keeps, so nothing is rearranged at load for them */
    const int spb = ocb == 16 ? 8 : ocb;
    uint32_t wk = packed_weights(cg, g, w, spb, base_ocb, kflat);
    pk->w = wk;
    pk->ocb = spb; /* the panels the gpu class reads from the same constant */
    pk->flat = kflat;
    char kname[96], src[160];
    const char *wn, *ws = cg_wsfx(cg, wk, &wn); /* weight storage (--weights-dtype) */
    snprintf(kname, sizeof kname, "fconv_v_k%lldx%lld_s%lld_d%lld_o%d_v%d%s", (long long)KH,
             (long long)KW, (long long)sw, (long long)dw, ocb, nv, wn);
    snprintf(src, sizeof src, "FCONV_V_DEFINE(%s, %lld, %lld, %lld, %lld, %d, %d, %s)\n", kname,
             (long long)KH, (long long)KW, (long long)sw, (long long)dw, ocb, nv, ws);
    cg_add_source(cg, src); /* one of fconv_v_declare's */
    const int64_t ocblk = (OC + ocb - 1) / ocb;
    size_t gws[3] = {(size_t)OH, (size_t)owt, (size_t)(N * ocblk)};
    size_t lws[3] = {1, 1, 1};
    cg_launch(cg, node, kname, 3, gws, lws);
    cg_arg_buf(cg, xp);
    cg_arg_buf(cg, wk);
    cg_arg_buf(cg, b != IR_NONE ? b : wk); /* dummies when absent: never read */
    cg_arg_buf(cg, r != IR_NONE ? r : wk);
    out_bufs(cg, c);
    cg_arg_i32(cg, im2col ? cin * k[1] * k[2] : cin);
    cg_arg_i32(cg, im2col ? K : C);
    cg_arg_i32(cg, H);
    cg_arg_i32(cg, XT);
    cg_arg_i32(cg, OH);
    cg_arg_i32(cg, OW);
    cg_arg_i32(cg, sh);
    cg_arg_i32(cg, ph);
    cg_arg_i32(cg, dh);
    out_offs(cg, c, OC);
    cg_arg_i32(cg, cout);
    cg_arg_i32(cg, b != IR_NONE);
    cg_arg_i32(cg, act);
    cg_arg_i32(cg, r != IR_NONE);
    cg_arg_i32(cg, rn);
    cg_arg_i32(cg, rc);
    cg_arg_i32(cg, rp);
    cg_arg_i32(cg, div != 1.0f);
    cg_arg_f32(cg, div);
    return true;
}

/* Winograd F(4x4, 3x3) (kernels/winograd.cl) for 2-D 3x3 convs with stride 1, dilation 1,
 * group 1 and constant weights, any padding. Returns false (nothing emitted) where it does not
 * apply, where the cost model prefers fconv_v (unless ONNX2CL_FCONV=winograd), or under
 * ONNX2CL_FCONV set to another form. Reads the fconv_v panel constant (packed_weights, the form
 * the weights file keeps; *pk names it for the gpu class) and transforms it on the device every
 * run (wino_filter: ~1-3% of the conv). Temporaries U, V, M as cg_temp buffers; V and M hold
 * PTC blocks of 16 tiles at a time (chunks: see below). */
#define WINO_TEMP_BYTES ((int64_t)128 << 20) /* most bytes of V or M */
#define WINO_CHUNK_BYTES ((int64_t)16 << 20) /* V + M of a chunk (cache) */
static bool try_winograd(struct cg_ctx *cg, struct ir_graph *g, const struct sched_conv *c,
                         struct conv_packed *pk)
{
    const char *env = fconv_env();
    /* "winograd" forces it where it applies; "winograd/N" also makes chunks of N blocks (tests) */
    const bool forced = env && strncmp(env, "winograd", 8) == 0;
    if (env && *env && !forced) return false;
    if (!ir_is_const(g, c->w) || c->group != 1) return false;
    if (c->in[0] != 1 || c->k[0] != 1 || c->out[0] != 1) return false; /* 3-D */
    if (c->k[1] != 3 || c->k[2] != 3 || c->s[1] != 1 || c->s[2] != 1 || c->d[1] != 1 ||
        c->d[2] != 1)
        return false;
    const struct ir_value *xv = &g->values[c->x];
    const int64_t N = xv->dims[0], C = xv->dims[1], K = g->values[c->w].dims[0];
    const int64_t H = c->in[1], W = c->in[2], OH = c->out[1], OW = c->out[2];
    const int64_t TH = (OH + 3) / 4, TW = (OW + 3) / 4, TWB = (TW + 15) / 16;
    const int64_t PT = N * TH * TWB, KB = (K + 15) / 16;
    /* cost model (PoCL, 2 cores; bench/results/winograd.md): both GEMM-like loops (fconv_v,
     * wino_gemm) at ~150 GFLOP/s on the lanes and channels they compute (fconv_v: 32-column
     * tiles; Winograd: 16-tile blocks of a tile row, 16-channel panels), the Winograd
     * transforms at ~0.5 ns per element of V and M, its filter transform ~2 ns per element of
     * U. Small planes (8x8: 2 of 16 lanes used) and few output channels (the 64 -> 3 output
     * conv) stay direct. */
    const double flop = 2.0 * (double)N * K * OH * OW * C * 9;
    const double owt = (double)((OW + 31) / 32 * 32);
    const double t_direct = flop / ((double)OW / owt) / 150e9;
    const double vm = 36.0 * (double)PT * 16 * ((double)C + (double)KB * 16);
    const double t_wino = 2.0 * 36 * (double)PT * 16 * KB * 16 * C / 150e9 + vm * 0.5e-9 +
                          36.0 * KB * 16 * C * 2e-9;
    /* the Winograd kernels are in the program whether or not this size takes them
     * (fconv_v_sources: one program source for every size) */
    const char *wsd = cg_weight_dtype(cg) == IR_F16 ? "f16" : "f32";
    char wsrc[48];
    snprintf(wsrc, sizeof wsrc, "WINO_FILTER_DEFINE(%s)\n", wsd);
    if (36 * KB * 16 * C <= ((int64_t)1 << 31) - 1) {
        (void)cg_use(cg, "winograd", IR_F32);
        cg_add_source(cg, wsrc);
    }
    if (!forced && t_wino >= t_direct) return false;
    const int bo = K % 8 == 0 || K > 32 ? 8 : 4; /* try_fconv_v's panels (group 1) */
    const uint32_t wk = packed_weights(cg, g, c->w, bo, bo, false);
    pk->w = wk;
    pk->ocb = bo;
    pk->flat = false;
    /* Blocks per chunk: V and M of a chunk stay in cache (L3) from one launch to the next
     * (~16 MiB together: whole-conv temporaries on 64-128 channels are bound by memory
     * traffic; 4 MiB chunks cost more in launches: full TAESD 1.67x onnxruntime with 4 MiB,
     * 1.46x with 16 MiB in one loaded session), but U is read again by every chunk's GEMM: at
     * least as many blocks as make that no more than the chunk's V and M. */
    const int64_t per_blk = 36 * 16 * 4 * (C > KB * 16 ? C : KB * 16); /* bytes of V or M */
    int64_t ptc = (WINO_CHUNK_BYTES / 2 + per_blk - 1) / per_blk;
    const int64_t ptu = (KB * 16 * C + 16 * (C + KB * 16) - 1) / (16 * (C + KB * 16));
    if (ptc < ptu) ptc = ptu;
    if (ptc > WINO_TEMP_BYTES / per_blk) ptc = WINO_TEMP_BYTES / per_blk;
    if (ptc < 1) ptc = 1;
    if (forced && env[8] == '/' && atoll(env + 9) > 0) ptc = atoll(env + 9);
    if (ptc > PT) ptc = PT;
    const int64_t lim = ((int64_t)1 << 31) - 1;
    if (36 * KB * 16 * C > lim || ptc * per_blk / 4 > lim) return false;
    (void)cg_use(cg, "winograd", IR_F32);
    const uint32_t u = cg_temp(cg, c->node, IR_F32, 36 * KB * 16 * C);
    const char *wn, *ws = cg_wsfx(cg, wk, &wn);
    char kname[32];
    snprintf(kname, sizeof kname, "wino_filter_%s", ws);
    char src[48];
    snprintf(src, sizeof src, "WINO_FILTER_DEFINE(%s)\n", ws);
    cg_add_source(cg, src);
    const size_t lws[3] = {1, 1, 1};
    const size_t fg[1] = {(size_t)KB};
    cg_launch(cg, c->node, kname, 1, fg, lws);
    cg_arg_buf(cg, wk);
    cg_arg_buf(cg, u);
    cg_arg_i32(cg, C);
    cg_arg_i32(cg, K);
    cg_arg_i32(cg, bo);
    const uint32_t v = cg_temp(cg, c->node, IR_F32, 36 * ptc * C * 16);
    const uint32_t m = cg_temp(cg, c->node, IR_F32, 36 * ptc * KB * 256);
    for (int64_t pt0 = 0; pt0 < PT; pt0 += ptc) {
        const int64_t n = PT - pt0 < ptc ? PT - pt0 : ptc;
        const size_t ig[2] = {(size_t)((C + 15) / 16), (size_t)n};
        cg_launch(cg, c->node, "wino_in", 2, ig, lws);
        cg_arg_buf(cg, c->x);
        cg_arg_buf(cg, v);
        cg_arg_i32(cg, C);
        cg_arg_i32(cg, H);
        cg_arg_i32(cg, W);
        cg_arg_i32(cg, TH);
        cg_arg_i32(cg, TWB);
        cg_arg_i32(cg, c->p[1]);
        cg_arg_i32(cg, c->p[2]);
        cg_arg_i32(cg, pt0);
        const size_t gg[2] = {(size_t)n, 36};
        cg_launch(cg, c->node, "wino_gemm", 2, gg, lws);
        cg_arg_buf(cg, u);
        cg_arg_buf(cg, v);
        cg_arg_buf(cg, m);
        cg_arg_i32(cg, C);
        cg_arg_i32(cg, KB);
        const size_t og[2] = {(size_t)KB, (size_t)n};
        cg_launch(cg, c->node, "wino_out", 2, og, lws);
        cg_arg_buf(cg, m);
        cg_arg_buf(cg, c->bias != IR_NONE ? c->bias : m); /* dummies when absent: never read */
        cg_arg_buf(cg, c->res != IR_NONE ? c->res : m);
        out_bufs(cg, c);
        cg_arg_i32(cg, KB);
        cg_arg_i32(cg, OH);
        cg_arg_i32(cg, OW);
        cg_arg_i32(cg, TH);
        cg_arg_i32(cg, TWB);
        cg_arg_i32(cg, pt0);
        out_offs(cg, c, K);
        epilogue_args(cg, c, false);
    }
    return true;
}

/* The fconv fallback kernels (fconv_oc4w4 / fconv_oc4 / fconv) on the ONNX weight. */
static void emit_fallback(struct cg_ctx *cg, struct ir_graph *g, const struct sched_conv *c)
{
    const struct ir_value *yv = &g->values[c->y];
    const int64_t C = g->values[c->x].dims[1], OC = g->values[c->w].dims[0], group = c->group;
    const char *sfx = cg_use(cg, "fconv", IR_F32);
    char kname[64];
    /* 4 channels x 4 columns per work-item where channels come in fours (every SD conv);
     * ONNX2CL_FCONV=oc4 selects the older 4-channel kernel (for comparisons) */
    bool oc4 = (OC / group) % 4 == 0;
    const char *env = fconv_env();
    bool w4 = oc4 && !(env && strcmp(env, "oc4") == 0);
    int64_t items = yv->dims[0] * OC * c->out[0] * c->out[1] * c->out[2];
    if (w4) items = yv->dims[0] * (OC / 4) * c->out[0] * c->out[1] * ((c->out[2] + 3) / 4);
    else if (oc4) items /= 4;
    snprintf(kname, sizeof kname, "%s_%s", w4 ? "fconv_oc4w4" : oc4 ? "fconv_oc4" : "fconv", sfx);
    size_t gws[1] = {(size_t)items};
    cg_launch(cg, c->node, kname, 1, gws, NULL);
    cg_arg_buf(cg, c->x);
    cg_arg_buf(cg, c->w);
    cg_arg_buf(cg, c->bias != IR_NONE ? c->bias : c->w); /* dummies when absent: never read */
    cg_arg_buf(cg, c->res != IR_NONE ? c->res : c->w);
    out_bufs(cg, c);
    cg_arg_i32(cg, C);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, c->in[i]);
    out_offs(cg, c, OC);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, c->out[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, c->k[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, c->s[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, c->p[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, c->d[i]);
    cg_arg_i32(cg, C / group);
    cg_arg_i32(cg, OC / group);
    epilogue_args(cg, c, false);
    cg_arg_i32(cg, items);
}

/* Whether the gpu implicit GEMM applies: groups = 1, 1-D or 2-D. */
static bool gpu_applies(const struct sched_conv *c)
{
    return c->group == 1 && c->in[0] == 1 && c->k[0] == 1 && c->out[0] == 1;
}

/* The gpu class: implicit GEMM over weight pk (or the ONNX weight when pk->w == IR_NONE). */
static void emit_gpu(struct cg_ctx *cg, struct ir_graph *g, const struct sched_conv *c,
                     const struct conv_packed *pk)
{
    int pinned;
    const struct o2r_tiles t = sched_gpu_tiles(&pinned);
    const struct ir_value *xv = &g->values[c->x];
    const int64_t imgs = xv->dims[0], C = xv->dims[1], OC = g->values[c->w].dims[0];
    const int64_t P = c->out[1] * c->out[2], NC = imgs * P, K = C * c->k[1] * c->k[2];
    int ocb = 1, kord = 0;
    uint32_t wk = c->w;
    if (pk->w != IR_NONE && t.tm % pk->ocb == 0) {
        wk = pk->w;
        ocb = pk->ocb;
        kord = pk->flat ? 0 : 1;
    }
    const int64_t tiles_n = (NC + t.tn - 1) / t.tn, tiles_m = (OC + t.tm - 1) / t.tm;
    int64_t kc;
    const int ns = sched_gpu_splitk(tiles_n * tiles_m, K, t.tk, OC * NC, &kc);
    uint32_t part = c->y; /* placeholder when ns == 1: never written */
    if (ns > 1) part = cg_temp(cg, c->node, IR_F32, (int64_t)ns * OC * NC);
    (void)cg_use(cg, "fgemm", IR_F32); /* fg_act, before kernels/gemm_gpu.cl */
    (void)cg_use(cg, "gemm_gpu", IR_F32);
    /* tunable: Kc is argument 19, the outputs Y_s arguments 4.. (one per split); TM a multiple
     * of the weight's OCB */
    char ksuffix[64], margs[64], kname[160];
    const char *wn, *ws = cg_wsfx(cg, wk, &wn); /* weight storage (--weights-dtype) */
    snprintf(ksuffix, sizeof ksuffix, "_o%d_k%d_%lldx%lld%s", ocb, kord, (long long)c->k[1],
             (long long)c->k[2], wn);
    snprintf(margs, sizeof margs, ", %d, %d, %lld, %lld, %s", ocb, kord, (long long)c->k[1],
             (long long)c->k[2], ws);
    const struct o2r_tunable tu = {O2R_TUNE_CONV, 0, ns > 1 ? 2 : 1, OC, NC, K, ns, 19, 4,
                                   (uint32_t)c->nsplit,
                                   (uint32_t)ocb, t, (uint32_t)pinned, "GG_CONV_DEFINE",
                                   "gg_conv", ksuffix, margs};
    o2r_tunable_kernel_name(&tu, &t, kname, sizeof kname);
    const size_t lws[3] = {(size_t)(t.tn / t.rn), (size_t)(t.tm / t.rm), 1};
    const size_t gws[3] = {(size_t)tiles_n * lws[0], (size_t)tiles_m * lws[1], (size_t)ns};
    cg_launch(cg, c->node, kname, 3, gws, lws);
    cg_tunable(cg, &tu);
    cg_arg_buf(cg, c->x);
    cg_arg_buf(cg, wk);
    cg_arg_buf(cg, c->bias != IR_NONE ? c->bias : wk); /* dummies when absent: never read */
    cg_arg_buf(cg, c->res != IR_NONE ? c->res : wk);
    out_bufs(cg, c);
    cg_arg_buf(cg, part);
    cg_arg_i32(cg, C);
    cg_arg_i32(cg, c->in[1]);
    cg_arg_i32(cg, c->in[2]);
    cg_arg_i32(cg, c->out[1]);
    cg_arg_i32(cg, c->out[2]);
    out_offs(cg, c, OC);
    cg_arg_i32(cg, NC);
    cg_arg_i32(cg, kc);
    cg_arg_i32(cg, ns);
    cg_arg_i32(cg, c->s[1]);
    cg_arg_i32(cg, c->s[2]);
    cg_arg_i32(cg, c->p[1]);
    cg_arg_i32(cg, c->p[2]);
    cg_arg_i32(cg, c->d[1]);
    cg_arg_i32(cg, c->d[2]);
    epilogue_args(cg, c, true);
    if (ns == 1) return;
    const size_t rl[1] = {256}, rg[1] = {(size_t)((OC * NC + 255) / 256 * 256)};
    cg_launch(cg, c->node, "gg_conv_reduce", 1, rg, rl);
    cg_arg_buf(cg, part);
    cg_arg_buf(cg, c->bias != IR_NONE ? c->bias : wk);
    cg_arg_buf(cg, c->res != IR_NONE ? c->res : wk);
    out_bufs(cg, c);
    out_offs(cg, c, OC);
    cg_arg_i32(cg, P);
    cg_arg_i32(cg, NC);
    cg_arg_i32(cg, ns);
    epilogue_args(cg, c, true);
}

void sched_conv(struct cg_ctx *cg, struct ir_graph *g, const struct sched_conv *c)
{
    struct conv_packed pk = {IR_NONE, 1, false};
    const bool gpu = gpu_applies(c);
    cg_variant(cg, CG_VARIANT_CPU);
    (void)cg_use(cg, "fconv", IR_F32);
    fconv_v_declare(cg, g, c); /* the same program source at every size */
    const bool packed = try_winograd(cg, g, c, &pk) || try_fconv_v(cg, g, c, &pk);
    if (!packed && !gpu) {
        cg_variant(cg, CG_VARIANT_ALL); /* one fallback launch serves both classes */
        emit_fallback(cg, g, c);
        return;
    }
    if (!packed) emit_fallback(cg, g, c);
    cg_variant(cg, CG_VARIANT_GPU);
    if (gpu) emit_gpu(cg, g, c, &pk);
    else emit_fallback(cg, g, c);
}
