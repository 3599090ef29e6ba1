/* sched_gemm.h — the schedule layer of the GEMM-like families (docs/kernel_variants.md): a lowering
 * fills a "what" struct (sizes, operands, epilogue) and calls sched_<family>(), which emits the
 * launches of every kernel class (cpu, gpu) with their tile parameters and geometry.
 *   sched_gemm (codegen/sched_gemm.c): o2c.Gemm / linear layers -> kernels/fgemm.cl (cpu),
 *     kernels/gemm_gpu.cl GG_FGEMM_DEFINE (+ split-K reduce) (gpu).
 *   sched_matmul (codegen/sched_gemm.c): MatMul / Gemm -> kernels/matmul.cl (cpu),
 *     kernels/gemm_gpu.cl GG_MATMUL_DEFINE (gpu).
 *   sched_conv (codegen/sched_conv.c): Conv / o2c.Conv -> kernels/fconv.cl (cpu),
 *     kernels/gemm_gpu.cl GG_CONV_DEFINE, implicit GEMM (gpu) where it applies.
 */
#ifndef ONNX2CL_SCHED_GEMM_H
#define ONNX2CL_SCHED_GEMM_H

#include "codegen/lower.h"
#include "onnx2cl_rt.h"

#define SCHED_GEMM_MAX_SPLITS 8 /* output buffers of the linear kernels */

/* What a linear layer computes: Y_s = column split s of epilogue(A W) (kernels/fgemm.cl). */
struct sched_gemm {
    uint32_t node;                          /* the o2c.Gemm node (comments, errors) */
    uint32_t a;                             /* activations, dense, numel M*K, float32 */
    uint32_t wpanels;                       /* W [K, N] packed as o2c.panels16 [ceil(N/16), K, 16],
                                               float32 or half (cg_wsfx) */
    uint32_t wplace;                        /* a buffer the node uploads anyway (the panels),
                                               passed for an absent bias (never read) */
    uint32_t bias;                          /* [N] or IR_NONE */
    uint32_t res;                           /* [M, N] or IR_NONE (only with one split) */
    uint32_t out[SCHED_GEMM_MAX_SPLITS];    /* split outputs, numel M * (off[s+1] - off[s]) */
    int nsplit;                             /* 1..8 */
    int64_t off[SCHED_GEMM_MAX_SPLITS + 1]; /* split column offsets, off[0] = 0, off[nsplit] = N */
    int64_t M, N, K;                        /* GEMM sizes (all >= 1) */
    int act;                                /* 0 none, 1 relu, 2 silu, 3 gelu erf, 4 gelu tanh,
                                               5/6 GEGLU (erf/tanh), 7 quick gelu */
    int64_t F;                              /* GEGLU: output width (N = 2 * F rounded up to
                                               16; the weight in pair order); else 0 */
};

/* Emits the cpu and gpu launches of a linear layer. Fatal (ir_fatal_node) if a temporary would
 * have 2^31 elements or more. */
void sched_gemm(struct cg_ctx *cg, struct ir_graph *g, const struct sched_gemm *w);

/* The default tiles of the GPU class's tunable instances (struct o2r_tiles: macro arguments of
 * each kernels/gemm_gpu.cl instance): 64 x 64 x 16, 4 x 4 blocks, 256 work-items (for a modern
 * NVIDIA GPU), or $ONNX2CL_GG_TILES="TM,TN,TK,RM,RN" (read at compile time, for tests and manual
 * tuning; fatal naming the rule of o2r_tiles_check it breaks; then *pinned = 1: the runtime
 * keeps them and ignores tuning files). The runtime may replace unpinned defaults at init
 * (runtime/tune.c, docs/tuning.md). */
struct o2r_tiles sched_gpu_tiles(int *pinned);
/* Split-K for the GPU class: the number of K slices (>= 1) for a grid of `tiles` work-groups
 * over K, and in *kc the k range of one slice (a multiple of tk). More slices when there are
 * too few tiles to fill a large GPU (< 264 groups: 2 per SM of a 132-SM H200) and K is long
 * (>= 256 per slice); at most 16, and the partial sums (slices * partial_numel) stay below
 * 2^31 elements and 256 MiB. */
int sched_gpu_splitk(int64_t tiles, int64_t K, int tk, int64_t partial_numel, int64_t *kc);

/* What a MatMul-13 / Gemm-13 with run-time or constant operands computes (kernels/matmul.cl):
 * Y[b, m, n] = alpha * sum_k A(b, m, k) B(b, k, n) + beta * C(m, n), operands as strides. */
struct sched_matmul {
    int64_t M, N, K;                /* GEMM sizes */
    int64_t a_rs, a_cs, b_rs, b_cs; /* row/column strides of A and B */
    int64_t bd[3];                  /* batch dims (outermost first), 1 where unused */
    int64_t as[3], bs[3];           /* batch strides of A and B per batch dim */
    float alpha, beta;              /* Gemm scalars (MatMul: 1, 0) */
    int64_t c_rs, c_cs;             /* C strides (0 = broadcast) */
    uint32_t c;                     /* C value or IR_NONE */
};

/* Emits the cpu and gpu launches of node's MatMul/Gemm: A a, B b, output y of dtype t (float32:
 * a gpu variant; float64: kernels/matmul.cl for every class). */
void sched_matmul(struct cg_ctx *cg, uint32_t node, uint32_t a, uint32_t b, uint32_t y,
                  enum ir_dtype t, const struct sched_matmul *p);

/* Emits one launch of the cpu class's MatMul/Gemm kernels (kernels/matmul.cl) for every kernel
 * class: no tunable. For the degenerate K = 0 (Y[b, m, n] = beta * C(m, n), or 0 without C),
 * which the tuned kernels and runtime/tune.c's tunables (k >= 1) do not take. */
void sched_matmul_plain(struct cg_ctx *cg, uint32_t node, uint32_t a, uint32_t b, uint32_t y,
                        enum ir_dtype t, const struct sched_matmul *p);

/* What a convolution computes (Conv / o2c.Conv, 1-D..3-D in 3-D form: index 0 = D, 1 = H,
 * 2 = W; see codegen/lower_fconv.h). */
#define SCHED_CONV_MAX_SPLITS 4 /* output buffers the conv kernels take (kernels/fconv.cl) */
struct sched_conv {
    uint32_t node;              /* the node (its inputs: x, w, optional bias) */
    uint32_t x, w, bias, y;     /* input [N, C, ...], weight [OC, C/group, k...], bias [OC] or
                                   IR_NONE, output [N, OC, ...] */
    uint32_t res;               /* residual or IR_NONE */
    int64_t rn, rc, rp;         /* residual element strides over (n, oc, p) */
    int64_t in[3], out[3], k[3], s[3], d[3], p[3]; /* geometry (begin pads in p) */
    int64_t group;              /* groups */
    int64_t act;                /* 0 none, 1 silu, 2 relu (kernels/fconv.cl codes) */
    float div;                  /* output divisor, 1 = none */
    int nsplit;                 /* outputs (1..SCHED_CONV_MAX_SPLITS): the OC = w dims[0]
                                   output channels split in order (o2c.Conv of sibling convs) */
    uint32_t ys[SCHED_CONV_MAX_SPLITS]; /* split outputs, ys[0] == y; [N, off[s+1]-off[s], ...] */
    int64_t off[SCHED_CONV_MAX_SPLITS + 1]; /* first channel of each split; OC from nsplit on */
};

/* Emits the cpu and gpu launches of a convolution: the fconv kernels (cpu; the gpu class too
 * where the implicit GEMM does not apply: groups > 1, 3-D) and the implicit GEMM (gpu). */
void sched_conv(struct cg_ctx *cg, struct ir_graph *g, const struct sched_conv *c);

#endif
