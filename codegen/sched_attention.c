/* sched_attention.c — the schedule of o2c.Attention: which kernels, tiles and launch geometry
 * compute the node on each class of device (docs/kernel_variants.md).
 *
 *   cpu  kernels/attention.cl: att_kt copies k transposed into a scratch buffer (tiles of 16
 *        keys, each a contiguous D x 16 block: B·H·D·ceil16(S) floats, live only during the
 *        node; att_kvt also copies a v whose head dim is strided into a dense B·H·S·D scratch,
 *        in the same launch; keys already contiguous along s with S % 16 == 0, as channels-first
 *        k is, are read in place when the head is small: no copy, or att_vt for v alone), then
 *        the register-tiled attention kernel with gws = {ceil(N/RB), H, B·NC}, specialized for (D, DC, RB, CW) by a generated ATT_DEFINE line; work-items stream their
 *        own rows (what PoCL vectorizes).
 *   gpu  kernels/attention_gpu.cl: one launch, a work-group of WI per (batch·head, block of BQ
 *        query rows), K/V tiles in __local, specialized for (D, BQ, BK, WI, DK, BKV, TD) by a
 *        generated AG_DEFINE line. Tiles from sched_attention_gpu_default() (a later --tune
 *        varies them). Heads too large for 32 KiB of __local even with one V key per chunk
 *        (D > ~5000) keep the CPU-shaped kernels for the gpu class too (no fast path worth having
 *        for them; correctness first).
 * Assumes: the lowering checked dtypes (float32) and int32 offsets.
 * Guarantees: both classes write the same y (within float rounding), or a fatal located error.
 */
#include "codegen/sched_attention.h"

#include <stdio.h>

/* CPU: query rows per work-item (reuses each loaded k/v row RB times). */
#define ATT_RB 8
/* CPU: largest D·S (floats, 256 KiB) of one head's keys that the kernel reads in place when they
 * are contiguous along s (channels-first k): each key tile then loads D vectors S floats apart.
 * Measured on PoCL (ldm AttnBlock, 2 loaded cores): D = 64, S = 64: in place 0.102 ms + a
 * 0.014 ms V copy vs 0.115 + 0.022 ms with the transposed copy; D = 512, S = 4096 (SD's VAE at
 * 64x64): in place 2x slower (5.0-5.7 s vs 2.4-3.3 s: rows 16 KiB apart share L1 sets), so big
 * heads keep the copy (contiguous D x 16 tiles). */
#define ATT_KDIRECT 65536
/* CPU: largest work-group size (work-items along the query axis). */
#define ATT_LWS 8
/* Bits of the kernels' mflags argument (kernels/attention.cl, attention_gpu.cl). */
#define ATT_MASK 1      /* add the mask input to the scores */
#define ATT_ZERO_ROWS 2 /* write 0 for a row whose softmax sum is not > 0 */

/* GPU: key-threads per score row (AG_TK in kernels/attention_gpu.cl). */
#define AG_TK 16
/* GPU: __local bytes every device offers (OpenCL's minimum, oclgrind's size). */
#define AG_LOCAL_MAX 32768

/* The CPU-shaped launches (see the banner) under the current variant mask. */
static void emit_cpu(struct cg_ctx *cg, struct ir_graph *g, const struct sched_attention *a)
{
    const int64_t lim = ((int64_t)1 << 31) - 1, D = a->D, N = a->N, S = a->S;
    /* output chunk: the whole head up to 512 dims (on PoCL, d=512 N=S=1024: 365 ms with one
     * chunk and 4 rows per work-item, 1748 ms in chunks of 128 that recompute q·k per chunk);
     * bigger heads in chunks of 256/128/64. GPUs would prefer smaller private arrays. */
    int64_t dc = D;
    if (D > 512) {
        if (D % 256 == 0) dc = 256;
        else if (D % 128 == 0) dc = 128;
        else if (D % 64 == 0) dc = 64;
    }
    int64_t nc = D / dc;
    int rb = ATT_RB;
    if (N < rb) rb = (int)N;
    const int cw = dc >= 16 ? 16 : dc >= 8 ? 8 : dc >= 4 ? 4 : 1;
    const int64_t sp = (S + 15) / 16 * 16;
    if (a->B * a->H * D * sp > lim)
        ir_fatal_node(g, &g->nodes[a->node], "o2c.Attention: the transposed keys (%lld elements) "
                      "exceed the 32-bit offsets of the kernel", (long long)(a->B * a->H * D * sp));
    char kname[96], src[256];
    (void)cg_use(cg, "attention", IR_F32);
    /* keys transposed (d-major, keys contiguous) into a scratch buffer, unless they already are
     * (kn = 1, S % 16 == 0: channels-first k) and one head's keys are small (D·S <= ATT_KDIRECT):
     * then read in place; a v with a strided head dim (channels-first) copied densely
     * [B·H, S, D] in the same launch (att_kvt, or att_vt) */
    const bool copy_v = a->vs[3] != 1;
    const bool k_direct = a->ks[2] == 1 && S % 16 == 0 && D * S <= ATT_KDIRECT;
    if (copy_v && a->B * a->H * S * D > lim)
        ir_fatal_node(g, &g->nodes[a->node], "o2c.Attention: the dense copy of the values (%lld "
                      "elements) exceeds the 32-bit offsets of the kernel",
                      (long long)(a->B * a->H * S * D));
    const uint32_t kt = k_direct ? a->k : cg_temp(cg, a->node, IR_F32, a->B * a->H * D * sp);
    const uint32_t vt = copy_v ? cg_temp(cg, a->node, IR_F32, a->B * a->H * S * D) : a->v;
    /* kt addressing (b, h, tile start j0, d): see kernels/attention.cl */
    int64_t kts[4] = {a->H * D * sp, D * sp, D, 16};
    if (k_direct) kts[0] = a->ks[0], kts[1] = a->ks[1], kts[2] = 1, kts[3] = a->ks[3];
    int64_t vs[3] = {a->vs[0], a->vs[1], a->vs[2]};
    if (copy_v) vs[0] = a->H * S * D, vs[1] = S * D, vs[2] = D;
    if (k_direct && copy_v) {
        size_t vgws[3] = {(size_t)S, (size_t)D, (size_t)(a->B * a->H)};
        cg_launch(cg, a->node, "att_vt", 3, vgws, NULL);
        cg_arg_buf(cg, a->v);
        cg_arg_buf(cg, vt);
        cg_arg_i32(cg, S);
        cg_arg_i32(cg, D);
        cg_arg_i32(cg, a->H);
        for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->vs[i]);
    } else if (!k_direct) {
        size_t kgws[3] = {(size_t)sp, (size_t)D, (size_t)(a->B * a->H)};
        cg_launch(cg, a->node, copy_v ? "att_kvt" : "att_kt", 3, kgws, NULL);
        cg_arg_buf(cg, a->k);
        cg_arg_buf(cg, kt);
        if (copy_v) {
            cg_arg_buf(cg, a->v);
            cg_arg_buf(cg, vt);
        }
        cg_arg_i32(cg, S);
        cg_arg_i32(cg, sp);
        cg_arg_i32(cg, D);
        cg_arg_i32(cg, a->H);
        for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->ks[i]);
        if (copy_v)
            for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->vs[i]);
    }
    snprintf(kname, sizeof kname, "attention_d%lld_c%lld_r%d_w%d", (long long)D, (long long)dc,
             rb, cw);
    snprintf(src, sizeof src, "ATT_DEFINE(%s, %lld, %lld, %d, %d)\n", kname, (long long)D,
             (long long)dc, rb, cw);
    cg_add_source(cg, src);
    size_t gws[3] = {(size_t)((N + rb - 1) / rb), (size_t)a->H, (size_t)(a->B * nc)};
    /* Small work-groups: PoCL may keep the private arrays (q rows, accumulators: RB*(D+DC)
     * floats) of every work-item of a group alive at once; a driver-chosen group of thousands
     * of work-items overflows the worker thread's stack. lws[0] divides gws[0] (OpenCL 1.2). */
    size_t lws[3] = {1, 1, 1};
    for (size_t d = ATT_LWS; d >= 1; d /= 2) /* powers of two: one PoCL specialization for many sizes */
        if (gws[0] % d == 0) {
            lws[0] = d;
            break;
        }
    cg_launch(cg, a->node, kname, 3, gws, lws);
    cg_arg_buf(cg, a->q);
    cg_arg_buf(cg, kt);
    cg_arg_buf(cg, vt);
    cg_arg_buf(cg, a->mask != IR_NONE ? a->mask : a->q); /* unread without a mask */
    cg_arg_buf(cg, a->y);
    cg_arg_i32(cg, N);
    cg_arg_i32(cg, S);
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, kts[i]);
    cg_arg_i32(cg, nc);
    cg_arg_f32(cg, a->scale);
    cg_arg_i32(cg, a->causal);
    cg_arg_i32(cg, (a->mask != IR_NONE ? ATT_MASK : 0) | (a->zero_rows ? ATT_ZERO_ROWS : 0));
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->qs[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, vs[i]);
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->os[i]);
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->ms[i]);
}

int64_t sched_attention_gpu_local_bytes(int64_t d, const struct sched_attention_gpu *t)
{
    int64_t uqk = (int64_t)t->dk * (t->bq + 1 + t->bk + 1), uv = (int64_t)t->bkv * d;
    int64_t u = uqk > uv ? uqk : uv;
    return 4 * (u + (int64_t)t->bq * (t->bk + 1) + (int64_t)t->bq * AG_TK + t->bq);
}

struct sched_attention_gpu sched_attention_gpu_default(int64_t d)
{
    struct sched_attention_gpu t;
    /* 128 work-items give small heads bigger register blocks (fewer __local loads per FMA);
     * 256 keep the accumulators of big heads under ~40 registers per work-item */
    t.wi = d <= 80 ? 128 : 256;
    t.bk = 64;
    /* d-chunk of the score product: divides D when it can (no zero-filled tail) */
    t.dk = d % 16 == 0 ? 16 : d % 8 == 0 ? 8 : d < 16 ? (int)d : 16;
    /* never a d-chunk of 1: at head dim 1 with DK = 1 (WI 128) every score came out 0 on PoCL
     * (found 2026-12-01 by a fresh-user sweep). Cause (2026-12-02): PoCL 3.1's loopvec
     * work-group vectorizer miscompiles this instance: the same kernel is right with
     * POCL_WORK_GROUP_METHOD=loops or cbs, with -cl-opt-disable, and on oclgrind with and without
     * optimization (no diagnostics). It shows only at D = 1 when the Q/K staging loops leave
     * work-items idle (BQ·DK < WI: DK 1 at WI 128 and DK 2 at WI 256 fail, DK 1 at WI 64 and
     * D = 3..7 with DK 1 pass), so no GPU driver is expected to need this; a chunk of 2 with its
     * zero-filled tail is right (tests/fusion_attention small_d1.gpu) */
    if (t.dk < 2) t.dk = 2;
    /* work-items along d in the output block: divides D when it can, 32 (a warp, coalesced
     * stores) for big heads */
    t.td = (d % 32 == 0 && d >= 128) ? 32 : d % 16 == 0 ? 16 : d % 8 == 0 ? 8 : d > 16 ? 16 : 8;
    const int tq = t.wi / AG_TK, tq2 = t.wi / t.td, minbq = tq > tq2 ? tq : tq2;
    const int64_t rd = (d + t.td - 1) / t.td;
    /* 64 query rows, fewer while a work-item would hold over 64 accumulators (big heads) */
    t.bq = 64;
    while (t.bq > minbq && t.bq / tq2 * rd > 64) t.bq /= 2;
    if (t.bq < minbq) t.bq = minbq;
    /* V staged in the largest key chunk (dividing BK) that keeps __local within 32 KiB */
    t.bkv = t.bk;
    while (t.bkv > 1 && sched_attention_gpu_local_bytes(d, &t) > AG_LOCAL_MAX) t.bkv /= 2;
    return t;
}

/* The GPU launch (see kernels/attention_gpu.cl) with tiles t, under the current mask. */
static void emit_gpu(struct cg_ctx *cg, const struct sched_attention *a,
                     const struct sched_attention_gpu *t)
{
    char kname[128], src[256];
    (void)cg_use(cg, "attention_gpu", IR_F32);
    snprintf(kname, sizeof kname, "attention_gpu_d%lld_q%d_k%d_w%d_c%d_v%d_t%d", (long long)a->D,
             t->bq, t->bk, t->wi, t->dk, t->bkv, t->td);
    snprintf(src, sizeof src, "AG_DEFINE(%s, %lld, %d, %d, %d, %d, %d, %d)\n", kname,
             (long long)a->D, t->bq, t->bk, t->wi, t->dk, t->bkv, t->td);
    cg_add_source(cg, src);
    size_t gws[2] = {(size_t)t->wi * (size_t)((a->N + t->bq - 1) / t->bq), (size_t)(a->B * a->H)};
    size_t lws[2] = {(size_t)t->wi, 1};
    cg_launch(cg, a->node, kname, 2, gws, lws);
    cg_arg_buf(cg, a->q);
    cg_arg_buf(cg, a->k);
    cg_arg_buf(cg, a->v);
    cg_arg_buf(cg, a->mask != IR_NONE ? a->mask : a->q); /* unread without a mask */
    cg_arg_buf(cg, a->y);
    cg_arg_i32(cg, a->N);
    cg_arg_i32(cg, a->S);
    cg_arg_i32(cg, a->H);
    cg_arg_f32(cg, a->scale);
    cg_arg_i32(cg, a->causal);
    cg_arg_i32(cg, (a->mask != IR_NONE ? ATT_MASK : 0) | (a->zero_rows ? ATT_ZERO_ROWS : 0));
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->qs[i]);
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->ks[i]);
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->vs[i]);
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->os[i]);
    for (int i = 0; i < 4; i++) cg_arg_i32(cg, a->ms[i]);
}

void sched_attention(struct cg_ctx *cg, struct ir_graph *g, const struct sched_attention *a)
{
    const struct sched_attention_gpu t = sched_attention_gpu_default(a->D);
    if (sched_attention_gpu_local_bytes(a->D, &t) > AG_LOCAL_MAX) {
        /* a head this large does not fit the GPU tiles: the CPU-shaped kernels for every class */
        emit_cpu(cg, g, a);
        return;
    }
    cg_variant(cg, CG_VARIANT_CPU);
    emit_cpu(cg, g, a);
    cg_variant(cg, CG_VARIANT_GPU);
    emit_gpu(cg, a, &t);
}
