/* sched_gemm.c — how a linear layer (o2c.Gemm, lowered by codegen/lower_fgemm.c) runs on each
 * kernel class (docs/kernel_variants.md), and the GPU tile/split-K choices shared with
 * codegen/sched_conv.c.
 *
 * cpu: kernels/fgemm.cl, one work-item per TM x (16 NP) register tile (FG_DEFINE specialized for
 *   (TM, NP, weight storage), K a run-time argument), gws = {ceil(M / TM), ceil(ceil(N / 16) /
 *   NP)}, lws = {largest divisor of gws[0] <= 16, 1}.
 * gpu: kernels/gemm_gpu.cl GG_FGEMM_DEFINE(TM, TN, TK, RM, RN): __local tiles, an RM x RN block
 *   per work-item, reading the same 16-column panel constant as the cpu kernel (the weight is
 *   stored once); split-K (partial sums in a cg_temp buffer + gg_fgemm_reduce) when the grid is
 *   small and K long.
 * GEGLU (o2c.Gemm activation 5/6, passes/fuse/geglu.c): cpu the same fgemm kernels (a
 *   work-item's panel pair is one output block of 16 columns); gpu GG_FGEGLU_DEFINE, tiles over
 *   the F output columns, no split-K.
 * MatMul / Gemm-13 (sched_matmul, from codegen/lower_matmul.c): cpu kernels/matmul.cl; gpu
 *   GG_MATMUL_DEFINE (same tiles, strided operands loaded into __local, batch in gws[2], no
 *   split-K: the batch fills the grid of SD's unfused attention products).
 * Both write the same values up to float rounding (cpu: one fma chain over k; gpu: fma chains per
 * K slice, slices added in order).
 * Assumes: the lowering checked shapes, dtypes and the 2^31-element limits of its operands.
 * Guarantees: fatal (ir_fatal_node) for invalid $ONNX2CL_GG_TILES; never a wrong launch.
 */
#include "codegen/sched_gemm.h"

#include <stdio.h>
#include <stdlib.h>

#define FG_TM 8   /* rows per work-item (kernels/fgemm.cl TM) */
#define FG_NP 2   /* 16-column weight panels per work-item (kernels/fgemm.cl NP) */
#define FG_LWS 16 /* largest work-group (row blocks) */

#define GG_GROUPS_WANTED 264 /* 2 work-groups per SM of a 132-SM GPU (H200) */
#define GG_MIN_SLICE_K 256   /* shortest K range of a split-K slice */
#define GG_MAX_SLICES 16

struct o2r_tiles sched_gpu_tiles(int *pinned)
{
    struct o2r_tiles t = {64, 64, 16, 4, 4};
    const char *env = getenv("ONNX2CL_GG_TILES");
    *pinned = 0;
    if (!env || !*env) return t;
    int v[5];
    if (sscanf(env, "%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
        ir_die("ONNX2CL_GG_TILES='%s': expected TM,TN,TK,RM,RN", env);
    t = (struct o2r_tiles){v[0], v[1], v[2], v[3], v[4]};
    const char *bad = o2r_tiles_check(&t);
    if (bad) ir_die("ONNX2CL_GG_TILES='%s': %s", env, bad);
    *pinned = 1;
    return t;
}

int sched_gpu_splitk(int64_t tiles, int64_t K, int tk, int64_t partial_numel, int64_t *kc)
{
    int64_t s = 1;
    if (tiles < GG_GROUPS_WANTED && K >= 2 * GG_MIN_SLICE_K) {
        s = (GG_GROUPS_WANTED + tiles - 1) / tiles;
        if (s > K / GG_MIN_SLICE_K) s = K / GG_MIN_SLICE_K;
        if (s > GG_MAX_SLICES) s = GG_MAX_SLICES;
        const int64_t lim = ((int64_t)1 << 31) - 1, bytes = (int64_t)256 << 20;
        while (s > 1 && (s * partial_numel > lim || s * partial_numel * 4 > bytes)) s--;
    }
    int64_t c = (K + s - 1) / s;
    c = (c + tk - 1) / tk * tk;
    *kc = c;
    return (int)((K + c - 1) / c);
}

/* The epilogue arguments of every linear kernel (cpu, gpu tile kernel, split-K reduce). */
static void epilogue_args(struct cg_ctx *cg, const struct sched_gemm *w)
{
    cg_arg_i32(cg, w->bias != IR_NONE);
    cg_arg_i32(cg, w->act);
    cg_arg_i32(cg, w->res != IR_NONE);
    cg_arg_i32(cg, w->nsplit);
    for (int s = 1; s < SCHED_GEMM_MAX_SPLITS; s++) /* GEGLU: o1 = F (kernels/fgemm.cl) */
        cg_arg_i32(cg, w->F && s == 1 ? w->F : s < w->nsplit ? w->off[s] : w->N);
}

/* The bias, residual and output buffers of every linear kernel (placeholders never read). */
static void out_args(struct cg_ctx *cg, const struct sched_gemm *w)
{
    cg_arg_buf(cg, w->bias != IR_NONE ? w->bias : w->wplace);
    cg_arg_buf(cg, w->res != IR_NONE ? w->res : w->a);
    for (int s = 0; s < SCHED_GEMM_MAX_SPLITS; s++) cg_arg_buf(cg, w->out[s < w->nsplit ? s : 0]);
}

/* The cpu class: kernels/fgemm.cl. */
static void emit_cpu(struct cg_ctx *cg, const struct sched_gemm *w)
{
    /* Register tile: FG_TM rows x FG_NP panels of 16 columns; fewer rows when M is smaller
     * (the kernel's last row block must fit in M). */
    const int tm = w->M < FG_TM ? (int)w->M : FG_TM;
    const int np = w->N <= 16 ? 1 : FG_NP;
    IR_ASSERT(!w->F || np == 2); /* GEGLU: a work-item's panel pair (hidden, gate) */
    const int64_t npan = (w->N + 15) / 16;
    (void)cg_use(cg, "fgemm", IR_F32);
    char kname[64], src[128];
    const char *wn, *ws = cg_wsfx(cg, w->wpanels, &wn); /* weight storage (--weights-dtype) */
    snprintf(kname, sizeof kname, "fgemm_t%d_p%d%s", tm, np, wn);
    snprintf(src, sizeof src, "FG_DEFINE(%s, %d, %d, %s)\n", kname, tm, np, ws);
    cg_add_source(cg, src);
    const size_t gws[2] = {(size_t)((w->M + tm - 1) / tm), (size_t)((npan + np - 1) / np)};
    /* Explicit small work-groups (lws[0] divides gws[0], OpenCL 1.2): same speed on PoCL as its
     * own choice, and never thousands of work-items' private arrays alive at once (see
     * codegen/lower_attention.c). */
    size_t lws[2] = {1, 1};
    for (size_t d = FG_LWS; d >= 1; d /= 2) /* powers of two: one PoCL specialization for many sizes */
        if (gws[0] % d == 0) {
            lws[0] = d;
            break;
        }
    cg_launch(cg, w->node, kname, 2, gws, lws);
    cg_arg_buf(cg, w->a);
    cg_arg_buf(cg, w->wpanels);
    out_args(cg, w);
    cg_arg_i32(cg, w->M);
    cg_arg_i32(cg, w->N);
    cg_arg_i32(cg, w->K);
    epilogue_args(cg, w);
}

/* The gpu class: kernels/gemm_gpu.cl. */
static void emit_gpu(struct cg_ctx *cg, const struct sched_gemm *w)
{
    int pinned;
    const struct o2r_tiles t = sched_gpu_tiles(&pinned);
    const int64_t tiles_n = (w->N + t.tn - 1) / t.tn, tiles_m = (w->M + t.tm - 1) / t.tm;
    int64_t kc = (w->K + t.tk - 1) / t.tk * t.tk;
    /* GEGLU: GG_FGEGLU_DEFINE over the F output columns, never split over K */
    const int ns = w->F ? 1 : sched_gpu_splitk(tiles_n * tiles_m, w->K, t.tk, w->M * w->N, &kc);
    const int64_t cols = w->F ? w->F : w->N;
    uint32_t part = w->a; /* placeholder when ns == 1: never written */
    if (ns > 1) part = cg_temp(cg, w->node, IR_F32, (int64_t)ns * w->M * w->N);
    (void)cg_use(cg, "fgemm", IR_F32); /* fg_act, before kernels/gemm_gpu.cl */
    (void)cg_use(cg, "gemm_gpu", IR_F32);
    /* tunable: Kc is argument 16, the outputs Y0..Y7 arguments 4..11; the weight storage
     * (--weights-dtype) is the last macro argument */
    const char *wn, *ws = cg_wsfx(cg, w->wpanels, &wn);
    const char *margs = ws[1] == '1' ? ", f16" : ", f32";
    const struct o2r_tunable tu = {O2R_TUNE_GEMM, 0, ns > 1 ? 2 : 1, w->M, cols, w->K, ns, 16,
                                   4, SCHED_GEMM_MAX_SPLITS, 1, t, (uint32_t)pinned,
                                   w->F ? "GG_FGEGLU_DEFINE" : "GG_FGEMM_DEFINE",
                                   w->F ? "gg_fgeglu" : "gg_fgemm", wn, margs};
    char kname[128];
    o2r_tunable_kernel_name(&tu, &t, kname, sizeof kname);
    const size_t lws[3] = {(size_t)(t.tn / t.rn), (size_t)(t.tm / t.rm), 1};
    const size_t gws[3] = {(size_t)((cols + t.tn - 1) / t.tn) * lws[0], (size_t)tiles_m * lws[1],
                           (size_t)ns};
    cg_launch(cg, w->node, kname, 3, gws, lws);
    cg_tunable(cg, &tu);
    cg_arg_buf(cg, w->a);
    cg_arg_buf(cg, w->wpanels);
    out_args(cg, w);
    cg_arg_buf(cg, part);
    cg_arg_i32(cg, w->M);
    cg_arg_i32(cg, w->N);
    cg_arg_i32(cg, w->K);
    cg_arg_i32(cg, kc);
    cg_arg_i32(cg, ns);
    epilogue_args(cg, w);
    if (ns == 1) return;
    const size_t rl[1] = {256}, rg[1] = {(size_t)((w->M * w->N + 255) / 256 * 256)};
    cg_launch(cg, w->node, "gg_fgemm_reduce", 1, rg, rl);
    cg_arg_buf(cg, part);
    out_args(cg, w);
    cg_arg_i32(cg, w->M);
    cg_arg_i32(cg, w->N);
    cg_arg_i32(cg, ns);
    epilogue_args(cg, w);
}

void sched_gemm(struct cg_ctx *cg, struct ir_graph *g, const struct sched_gemm *w)
{
    cg_variant(cg, CG_VARIANT_CPU);
    emit_cpu(cg, w);
    cg_variant(cg, CG_VARIANT_GPU);
    emit_gpu(cg, w);
    (void)g;
}

/* The arguments of every matmul kernel (kernels/matmul.cl, GG_MATMUL_DEFINE). */
static void matmul_args(struct cg_ctx *cg, uint32_t a, uint32_t b, uint32_t y,
                        const struct sched_matmul *p)
{
    cg_arg_buf(cg, a);
    cg_arg_buf(cg, b);
    cg_arg_buf(cg, p->c != IR_NONE ? p->c : a); /* dummy when has_c == 0: never read */
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, p->M);
    cg_arg_i32(cg, p->N);
    cg_arg_i32(cg, p->K);
    cg_arg_i32(cg, p->a_rs);
    cg_arg_i32(cg, p->a_cs);
    cg_arg_i32(cg, p->b_rs);
    cg_arg_i32(cg, p->b_cs);
    cg_arg_i32(cg, p->bd[1]);
    cg_arg_i32(cg, p->bd[2]);
    for (int k = 0; k < 3; k++) cg_arg_i32(cg, p->as[k]);
    for (int k = 0; k < 3; k++) cg_arg_i32(cg, p->bs[k]);
    cg_arg_f32(cg, p->alpha);
    cg_arg_f32(cg, p->beta);
    cg_arg_i32(cg, p->c_rs);
    cg_arg_i32(cg, p->c_cs);
    cg_arg_i32(cg, p->c != IR_NONE);
}

/* The cpu class of MatMul/Gemm: kernels/matmul.cl (register-tiled matmul_t8x16 where A's k and
 * B's n axes are contiguous and M >= 8, N >= 16, else the naive matmul). */
static void emit_matmul_cpu(struct cg_ctx *cg, uint32_t node, uint32_t a, uint32_t b, uint32_t y,
                            enum ir_dtype t, const struct sched_matmul *p)
{
    const char *sfx = cg_use(cg, "matmul", t);
    char kname[64];
    int64_t batch = p->bd[0] * p->bd[1] * p->bd[2];
    if (t == IR_F32 && p->a_cs == 1 && p->b_cs == 1 && p->M >= 8 && p->N >= 16) {
        /* register-tiled: 8 rows x 16 columns per work-item */
        snprintf(kname, sizeof kname, "matmul_t8x16_%s", sfx);
        size_t gws[3] = {(size_t)((p->N + 15) / 16), (size_t)((p->M + 7) / 8), (size_t)batch};
        cg_launch(cg, node, kname, 3, gws, NULL);
    } else {
        snprintf(kname, sizeof kname, "matmul_%s", sfx);
        size_t gws[3] = {(size_t)p->N, (size_t)((p->M + 3) / 4), (size_t)batch}; /* MM_TM = 4 */
        cg_launch(cg, node, kname, 3, gws, NULL);
    }
    matmul_args(cg, a, b, y, p);
}

/* The gpu class of a float32 MatMul/Gemm: GG_MATMUL_DEFINE (any strides; batch in gws[2]). */
static void emit_matmul_gpu(struct cg_ctx *cg, uint32_t node, uint32_t a, uint32_t b, uint32_t y,
                            const struct sched_matmul *p)
{
    int pinned;
    const struct o2r_tiles t = sched_gpu_tiles(&pinned);
    (void)cg_use(cg, "fgemm", IR_F32); /* fg_act, before kernels/gemm_gpu.cl */
    (void)cg_use(cg, "gemm_gpu", IR_F32);
    const int64_t batch = p->bd[0] * p->bd[1] * p->bd[2];
    /* tunable: no split-K; the output Y is argument 3 */
    const struct o2r_tunable tu = {O2R_TUNE_MATMUL, 0, 1, p->M, p->N, p->K, batch, -1, 3, 1, 1,
                                   t, (uint32_t)pinned, "GG_MATMUL_DEFINE", "gg_matmul", "", ""};
    char kname[128];
    o2r_tunable_kernel_name(&tu, &t, kname, sizeof kname);
    const size_t lws[3] = {(size_t)(t.tn / t.rn), (size_t)(t.tm / t.rm), 1};
    const size_t gws[3] = {(size_t)((p->N + t.tn - 1) / t.tn) * lws[0],
                           (size_t)((p->M + t.tm - 1) / t.tm) * lws[1], (size_t)batch};
    cg_launch(cg, node, kname, 3, gws, lws);
    cg_tunable(cg, &tu);
    matmul_args(cg, a, b, y, p);
}

void sched_matmul_plain(struct cg_ctx *cg, uint32_t node, uint32_t a, uint32_t b, uint32_t y,
                        enum ir_dtype t, const struct sched_matmul *p)
{
    emit_matmul_cpu(cg, node, a, b, y, t, p); /* no variant: one launch for every class */
}

void sched_matmul(struct cg_ctx *cg, uint32_t node, uint32_t a, uint32_t b, uint32_t y,
                  enum ir_dtype t, const struct sched_matmul *p)
{
    if (t != IR_F32) {
        emit_matmul_cpu(cg, node, a, b, y, t, p); /* float64: one kernel for every class */
        return;
    }
    cg_variant(cg, CG_VARIANT_CPU);
    emit_matmul_cpu(cg, node, a, b, y, t, p);
    cg_variant(cg, CG_VARIANT_GPU);
    emit_matmul_gpu(cg, node, a, b, y, p);
}
