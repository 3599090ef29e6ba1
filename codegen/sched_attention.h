/* sched_attention.h — how an o2c.Attention node runs (codegen/sched_attention.c): the lowering
 * (codegen/lower_attention.c) checks the node and fills a sched_attention ("what"); the schedule
 * emits the CPU variant (kernels/attention.cl) and the GPU variant (kernels/attention_gpu.cl) with
 * their tile parameters and launch geometry (docs/kernel_variants.md). */
#ifndef ONNX2CL_SCHED_ATTENTION_H
#define ONNX2CL_SCHED_ATTENTION_H

#include "codegen/lower.h"

/* y = softmax(q kᵀ · scale + mask) v per (batch, head), float32, every offset < 2^31. */
struct sched_attention {
    uint32_t node;                  /* the o2c.Attention node (names launches and temporaries) */
    uint32_t q, k, v, mask, y;      /* value ids; mask = IR_NONE without a mask */
    int64_t B, H, N, S, D;          /* batch, heads, query rows, keys, head dim (all >= 1) */
    int64_t qs[4], ks[4], vs[4];    /* element strides (b, h, token, d) of q, k, v (d: any, e.g.
                                       N for channels-first [B, D, N] tensors) */
    int64_t os[4];                  /* strides (b, h, n, d) of y */
    int64_t ms[4];                  /* strides (b, h, n, s) of the mask (0 = broadcast) */
    float scale;                    /* multiplies q·k before the mask is added */
    bool causal;                    /* key j is seen only by query rows n >= j */
    bool zero_rows;                 /* a row whose softmax sum is not > 0 (every key masked, or
                                       NaN scores) is written as 0, not NaN (masked-row guard) */
};

/* GPU tile parameters (kernels/attention_gpu.cl AG_DEFINE arguments). */
struct sched_attention_gpu {
    int bq, bk, wi, dk, bkv, td; /* query rows, keys per tile, work-items, d-chunk, V key chunk,
                                    work-items along d */
};

/* Default GPU tiles for head dim d: <= 32 KiB of __local memory and <= 256 work-items (tuned
 * for an NVIDIA H200; see the table in kernels/attention_gpu.cl). */
struct sched_attention_gpu sched_attention_gpu_default(int64_t d);
/* Bytes of __local memory an AG_DEFINE instance with head dim d and tiles t declares. */
int64_t sched_attention_gpu_local_bytes(int64_t d, const struct sched_attention_gpu *t);
/* Emits the launches of a's node for every class: the CPU variant (keys transposed into a
 * scratch buffer, and v copied densely when its head dim is strided, then the register-tiled
 * kernel) and the GPU variant (one launch). Fatal (ir_fatal_node) if a transposed-key or
 * copied-value buffer would exceed 32-bit offsets. */
void sched_attention(struct cg_ctx *cg, struct ir_graph *g, const struct sched_attention *a);

#endif
