/* attention_gpu.cl — o2c.Attention, GPU variant: y = softmax(q kᵀ · scale + mask) v, fp32,
 * flash-style with work-group tiles in __local memory (the CPU variant is kernels/attention.cl).
 *
 * One work-group of WI work-items per (batch·head, block of BQ query rows). It walks the keys in
 * tiles of BK and keeps an online softmax per query row (running max m, running sum l) with the
 * BQ x D output accumulators spread over the work-items' registers:
 *
 *     for each key tile j0 .. j0+BK:
 *       S[BQ][BK]  = Q[BQ][D] · K[BK][D]ᵀ       d-chunks of DK: Q and K chunks staged in __local
 *                                               (d-major, padded rows), an RQ x RK register block
 *                                               of S per work-item
 *       S = S·scale + mask (-inf: keys >= S, causal keys > row)
 *       m' = max(m, rowmax S)  (partial maxima of the 16 key-threads of a row through __local)
 *       P = exp(S - m'), corr = exp(m - m'), l = l·corr + Σ P   (P -> __local)
 *       O[BQ][D] = O·corr + P[BQ][BK] · V[BK][D] key-chunks of BKV: V chunk staged in __local,
 *                                               an RQ2 x RD register block of O per work-item
 *     y = O / l
 *
 * Work-item roles (lid = local id 0 .. WI-1; both roles are taken by every work-item):
 *   scores  tk = lid % 16, tq = lid / 16 (TQ = WI/16 rows of threads): rows tq + i·TQ (i < RQ =
 *           BQ/TQ), keys tk + j·16 (j < RK = BK/16); a warp reads 16 consecutive K columns and
 *           broadcasts 2 Q values: conflict-free.
 *   output  td = lid % TD, tq2 = lid / TD (TQ2 = WI/TD): rows tq2 + i·TQ2 (i < RQ2 = BQ/TQ2),
 *           dims td + c·TD (c < RD = ceil(D/TD)); V reads consecutive, P reads broadcast or on
 *           distinct banks (row stride BK+1).
 *
 *        keys j0 ............ j0+BK            dims 0 .......... D
 *   rows ┌───────────────────────┐       ┌──────────────────────────┐
 *   n0   │ S = Q·Kᵀ   (tq, tk)   │  P ·  │ V tile (__local, BKV rows)│ = O (tq2, td)
 *   ..   │ RQ x RK per work-item │       └──────────────────────────┘   RQ2 x RD per work-item
 *   n0+BQ└───────────────────────┘
 *
 * __local (floats): U = max(DK·(BQ+1) + DK·(BK+1), BKV·D) (Q/K chunks, then the V chunk, the
 * same memory) + BQ·(BK+1) (P) + BQ·16 (row partials) + BQ (corr); the schedule keeps it
 * <= 32 KiB (codegen/sched_attention.c).
 *
 * Numerics: scores are fma-accumulated over d in order 0 .. D-1 (as the CPU variant), then
 * multiplied by scale, then the mask is added; exp is the full-precision builtin. Sums over keys
 * are grouped differently from the CPU variant (partials per key-thread): results agree within
 * float rounding. Rows whose keys are all -inf give 0/0 = NaN (as the unfused Softmax and the
 * CPU variant), or 0 with mflags bit 1 (masked-row guard; bit 0: add the mask); partially
 * masked rows never give NaN (p = 0, corr = 1 while m' is -inf).
 *
 * Layout: q, k, v, y and the mask through element strides (head split/merge transposes absorbed,
 * 0 strides broadcast; the head dim may be strided too, e.g. the channels-first [B, D, N] of the
 * ldm AttnBlock: qd = kd = vd = od = N, qn = kn = vn = on = 1):
 *     q[b*qb + h*qh + n*qn + d*qd]   k[b*kb + h*kh + s*kn + d*kd]   v[b*vb + h*vh + s*vn + d*vd]
 *     y[b*ob + h*oh + n*on + d*od]   mask[b*mb + h*mh + n*mn + s*ms]
 * Q and K chunks are staged along whichever of (row, d) is contiguous in global memory (a
 * uniform branch); V is staged d-fastest (conflict-free __local stores; with vd != 1 each
 * work-item's 32-byte sector holds 8 keys of one d, which the next key rows of the chunk reuse
 * from cache); y is written once per row block.
 * Launch: gws = {WI · ceil(N/BQ), B·H}, lws = {WI, 1}; query blocks of one head are neighbours
 * (they share K/V in L2).
 *
 * Instance: one line per distinct parameter set, emitted by codegen/sched_attention.c,
 *     AG_DEFINE(attention_gpu_d40_q64_k64_w128_c8_v64_t8, 40, 64, 64, 128, 8, 64, 8)
 * = (NAME, D, BQ, BK, WI, DK, BKV, TD): head dim, query rows per group, keys per tile,
 * work-items, d-chunk of the score product, key chunk of the V tile, work-items along d.
 * Requires WI % 16 == 0, WI % TD == 0, BQ % (WI/16) == 0, BQ % (WI/TD) == 0, BK % 16 == 0,
 * BK % BKV == 0 (checked at compile time below). D % DK and D % TD may be non-zero (zero-filled
 * chunk tails, clamped d reads): any head dim works.
 *
 * Expected on an NVIDIA H200 (132 SMs, 64K registers and up to 227 KiB shared memory per SM,
 * 48 KiB per group; estimates, to be measured; the defaults of sched_attention.c):
 *   D    WI  BQ BK DK BKV TD  S-block O-block  __local   est. regs  groups/SM  warps/SM
 *   40  128  64 64  8  64  8   8x4     4x5     30.5 KiB    ~90        5          20 (31%)
 *   64  128  64 64 16  32 16   8x4     8x4     28.6 KiB    ~100       5          20 (31%)
 *   80  128  64 64 16  32 16   8x4     8x5     30.5 KiB    ~110       4          16 (25%)
 *   96  256  64 64 16  16 16   4x4     4x6     28.6 KiB    ~72        3          24 (38%)
 *   128 256  64 64 16  16 32   4x4     8x4     28.6 KiB    ~80        3          24 (38%)
 *   160 256  64 64 16  16 32   4x4     8x5     30.5 KiB    ~90        2-3        16-24
 * Grid for SD 1.5 at 64x64 latents, CFG batch 2: N = S = 4096, 8 heads of 40 -> 64 x 16 = 1024
 * groups (~1.6 waves of 132 SMs x 5). Local-memory traffic per FMA (scalar loads, RQ+RK per
 * RQ·RK FMAs) is the expected limit, not DRAM: K/V of one head (4096 x 40 floats = 640 KiB)
 * stay in L2 for the 64 query blocks that read it. Next steps for --tune: float4 loads from
 * contiguous per-thread register blocks, Q kept in __local for small D, native_exp.
 * This file does not depend on T (float32 only) and defines its macros once.
 */
#ifndef O2C_ATTENTION_GPU_CL
#define O2C_ATTENTION_GPU_CL

#define AG_TK 16 /* key-threads per row in the score block */

#define AG_DEFINE(NAME, D, BQ, BK, WI, DK, BKV, TD)                                              \
    typedef char NAME##_params_ok[((WI) % AG_TK == 0 && (WI) % (TD) == 0 &&                      \
                                   (BQ) % ((WI) / AG_TK) == 0 && (BQ) % ((WI) / (TD)) == 0 &&    \
                                   (BK) % AG_TK == 0 && (BK) % (BKV) == 0)                       \
                                      ? 1                                                        \
                                      : -1];                                                     \
    __kernel __attribute__((reqd_work_group_size(WI, 1, 1))) void NAME(                          \
        __global const float *restrict q, __global const float *restrict k,                      \
        __global const float *restrict v, __global const float *restrict mask,                   \
        __global float *restrict y, int N, int S, int H, float scale, int causal, int mflags,    \
        int qb, int qh, int qn, int qd, int kb, int kh, int kn, int kd, int vb, int vh, int vn,  \
        int vd, int ob, int oh, int on, int od, int mb, int mh, int mn, int ms)                  \
    {                                                                                            \
        enum {                                                                                   \
            TQ = (WI) / AG_TK, RQ = (BQ) / TQ, RK = (BK) / AG_TK, TQ2 = (WI) / (TD),             \
            RQ2 = (BQ) / TQ2, RD = ((D) + (TD) - 1) / (TD), NDK = ((D) + (DK) - 1) / (DK),       \
            QS = (BQ) + 1, KS = (BK) + 1, PS = (BK) + 1, KOFF = (DK) * QS,                       \
            UQK = (DK) * (QS + KS), UV = (BKV) * (D), U = UQK > UV ? UQK : UV                    \
        };                                                                                       \
        __local float lu[U];              /* Q/K d-chunks, then the V key chunk */               \
        __local float lp[(BQ) * PS];      /* P = exp(S - m') of the tile */                      \
        __local float lred[(BQ) * AG_TK]; /* per-row partial maxima, then partial sums */        \
        __local float lcorr[BQ];          /* exp(m - m') per row */                              \
        const int lid = (int)get_local_id(0);                                                    \
        const int n0 = (int)get_group_id(0) * (BQ);                                              \
        const int bh = (int)get_group_id(1), b = bh / H, h = bh % H;                             \
        const int tk = lid % AG_TK, tq = lid / AG_TK, td = lid % (TD), tq2 = lid / (TD);         \
        /* staging order: along the contiguous axis of global memory (rows when the head dim  \
         * is strided, channels-first), so consecutive work-items read consecutive floats */    \
        const bool qrows = qn == 1 && qd != 1, krows = kn == 1 && kd != 1;                       \
        __global const float *qp = q + b * qb + h * qh;                                          \
        __global const float *kp = k + b * kb + h * kh;                                          \
        __global const float *vp = v + b * vb + h * vh;                                          \
        __global const float *mp = mask + b * mb + h * mh;                                       \
        float m[RQ], ls[RQ], acc[RQ2][RD];                                                       \
        for (int i = 0; i < RQ; i++) {                                                           \
            m[i] = -INFINITY;                                                                    \
            ls[i] = 0.0f;                                                                        \
        }                                                                                        \
        for (int i = 0; i < RQ2; i++)                                                            \
            for (int c = 0; c < RD; c++) acc[i][c] = 0.0f;                                       \
        /* keys any row of the block may see (uniform over the group) */                         \
        const int kend = causal ? min(S, min(N, n0 + (BQ))) : S;                                 \
        for (int j0 = 0; j0 < kend; j0 += (BK)) {                                                \
            float s[RQ][RK];                                                                     \
            for (int i = 0; i < RQ; i++)                                                         \
                for (int j = 0; j < RK; j++) s[i][j] = 0.0f;                                     \
            for (int dc = 0; dc < NDK; dc++) {                                                   \
                const int d0 = dc * (DK);                                                        \
                barrier(CLK_LOCAL_MEM_FENCE); /* lu free (previous chunk / V chunk read) */      \
                for (int e = lid; e < (BQ) * (DK); e += (WI)) {                                  \
                    const int r = qrows ? e % (BQ) : e / (DK);                                   \
                    const int d = qrows ? e / (BQ) : e % (DK);                                   \
                    float x = 0.0f;                                                              \
                    if (n0 + r < N && ((D) % (DK) == 0 || d0 + d < (D)))                         \
                        x = qp[(n0 + r) * qn + (d0 + d) * qd];                                   \
                    lu[d * QS + r] = x;                                                          \
                }                                                                                \
                for (int e = lid; e < (BK) * (DK); e += (WI)) {                                  \
                    const int j = krows ? e % (BK) : e / (DK);                                   \
                    const int d = krows ? e / (BK) : e % (DK);                                   \
                    float x = 0.0f;                                                              \
                    if (j0 + j < S && ((D) % (DK) == 0 || d0 + d < (D)))                         \
                        x = kp[(j0 + j) * kn + (d0 + d) * kd];                                   \
                    lu[KOFF + d * KS + j] = x;                                                   \
                }                                                                                \
                barrier(CLK_LOCAL_MEM_FENCE);                                                    \
                for (int d = 0; d < (DK); d++) {                                                 \
                    float a[RQ], bk[RK];                                                         \
                    for (int i = 0; i < RQ; i++) a[i] = lu[d * QS + tq + i * TQ];                \
                    for (int j = 0; j < RK; j++) bk[j] = lu[KOFF + d * KS + tk + j * AG_TK];     \
                    for (int i = 0; i < RQ; i++)                                                 \
                        for (int j = 0; j < RK; j++) s[i][j] = fma(a[i], bk[j], s[i][j]);        \
                }                                                                                \
            }                                                                                    \
            /* scale, mask, bounds; partial row maxima over this work-item's keys */             \
            for (int i = 0; i < RQ; i++) {                                                       \
                const int row = n0 + tq + i * TQ, rowc = min(row, N - 1);                        \
                float pm = -INFINITY;                                                            \
                for (int j = 0; j < RK; j++) {                                                   \
                    const int key = j0 + tk + j * AG_TK;                                         \
                    float x = s[i][j] * scale;                                                   \
                    if (key >= S) x = -INFINITY;                                                 \
                    else {                                                                       \
                        if (mflags & 1) x += mp[rowc * mn + key * ms];                           \
                        if (causal && key > row) x = -INFINITY;                                  \
                    }                                                                            \
                    s[i][j] = x;                                                                 \
                    pm = fmax(pm, x);                                                            \
                }                                                                                \
                lred[(tq + i * TQ) * AG_TK + tk] = pm;                                           \
            }                                                                                    \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
            /* online softmax: every key-thread of a row derives the same m' and corr */         \
            for (int i = 0; i < RQ; i++) {                                                       \
                const int r = tq + i * TQ;                                                       \
                float mx = m[i];                                                                 \
                for (int t = 0; t < AG_TK; t++) mx = fmax(mx, lred[r * AG_TK + t]);              \
                const float corr = mx == -INFINITY ? 1.0f : exp(m[i] - mx);                      \
                float ps = 0.0f;                                                                 \
                for (int j = 0; j < RK; j++) {                                                   \
                    const float p = mx == -INFINITY ? 0.0f : exp(s[i][j] - mx);                  \
                    lp[r * PS + tk + j * AG_TK] = p;                                             \
                    ps += p;                                                                     \
                }                                                                                \
                ls[i] = ls[i] * corr + ps;                                                       \
                m[i] = mx;                                                                       \
                if (tk == 0) lcorr[r] = corr;                                                    \
            }                                                                                    \
            /* O = O·corr + P·V, V staged in chunks of BKV keys */                               \
            for (int jv = 0; jv < (BK); jv += (BKV)) {                                           \
                if (j0 + jv >= kend) break; /* uniform */                                        \
                barrier(CLK_LOCAL_MEM_FENCE); /* P, corr written; lu free */                     \
                for (int e = lid; e < (BKV) * (D); e += (WI)) {                                  \
                    const int j = e / (D), d = e % (D);                                          \
                    lu[e] = j0 + jv + j < S ? vp[(j0 + jv + j) * vn + d * vd] : 0.0f;            \
                }                                                                                \
                barrier(CLK_LOCAL_MEM_FENCE);                                                    \
                if (jv == 0)                                                                     \
                    for (int i = 0; i < RQ2; i++) {                                              \
                        const float cr = lcorr[tq2 + i * TQ2];                                   \
                        for (int c = 0; c < RD; c++) acc[i][c] *= cr;                            \
                    }                                                                            \
                for (int j = 0; j < (BKV); j++) {                                                \
                    float pv[RQ2], vv[RD];                                                       \
                    for (int i = 0; i < RQ2; i++) pv[i] = lp[(tq2 + i * TQ2) * PS + jv + j];     \
                    for (int c = 0; c < RD; c++)                                                 \
                        vv[c] = lu[j * (D) + ((D) % (TD) == 0 ? td + c * (TD)                    \
                                                              : min(td + c * (TD), (D) - 1))];   \
                    for (int i = 0; i < RQ2; i++)                                                \
                        for (int c = 0; c < RD; c++) acc[i][c] = fma(pv[i], vv[c], acc[i][c]);   \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        /* l per row = sum of the key-threads' partial sums */                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                            \
        for (int i = 0; i < RQ; i++) lred[(tq + i * TQ) * AG_TK + tk] = ls[i];                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                            \
        for (int i = 0; i < RQ2; i++) {                                                          \
            const int r = tq2 + i * TQ2;                                                         \
            if (n0 + r >= N) break;                                                              \
            float l = 0.0f;                                                                      \
            for (int t = 0; t < AG_TK; t++) l += lred[r * AG_TK + t];                            \
            /* masked-row guard (mflags & 2): a row with l not > 0 is written as 0 */            \
            const bool zr = (mflags & 2) && !(l > 0.0f);                                         \
            const float inv = 1.0f / l;                                                          \
            __global float *yr = y + b * ob + h * oh + (n0 + r) * on;                            \
            for (int c = 0; c < RD; c++)                                                         \
                if ((D) % (TD) == 0 || td + c * (TD) < (D))                                      \
                    yr[(td + c * (TD)) * od] = zr ? 0.0f : acc[i][c] * inv;                      \
        }                                                                                        \
    }

#endif /* O2C_ATTENTION_GPU_CL */
