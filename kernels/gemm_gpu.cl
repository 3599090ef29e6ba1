/* gemm_gpu.cl — GPU-class (docs/kernel_variants.md) tiled GEMM for o2c.Gemm / linear layers
 * (GG_FGEMM_DEFINE), convolution as implicit GEMM (GG_CONV_DEFINE), with split-K reduce
 * kernels, and strided batched MatMul / Gemm-13 (GG_MATMUL_DEFINE). Scheduled by codegen/sched_gemm.c and codegen/sched_conv.c. OpenCL C 1.2, float32.
 * Weights of the linear and conv kernels may be stored as IEEE half (macro argument WS = f16,
 * onnx2cl --weights-dtype f16): the panel loads convert them to float (vload_half4), everything
 * else is float32.
 *
 *   C[m, n] = sum_k A[m, k] * B[k, n]         accumulated in float, increasing k inside a
 *                                              K slice (fma), slices added in increasing order
 *   linear:  A = activations [M, K] row-major, B = weight W [K, N] read from the CPU variant's
 *            16-column K-major panels  Wp[p][k][j] = W[k, 16p + j]  (o2c.panels16 constant: the
 *            weight is stored and uploaded once for both classes); epilogue as kernels/fgemm.cl
 *            (bias[n], act 0 none / 1 relu / 2 silu / 3 gelu-erf / 4 gelu-tanh / 7 quick-gelu,
 *            residual R[m, n],
 *            column splits Y_s[m, n - o_s] into up to 8 outputs); GEGLU (act 5 / 6):
 *            GG_FGEGLU_DEFINE, hidden * gelu(gate) from a pair-ordered weight.
 *   conv:    A = weight as rows oc, k (M = OC), read from a panel layout with OCB rows per panel:
 *            A(oc, k) = Wp[((oc / OCB) * K + k) * OCB + oc % OCB]  (OCB = 1 is the ONNX layout
 *            [OC, K]; OCB 4/8/16 are the CPU fconv_v packings, so the weight is stored once),
 *            k ordered (ci, kh, kw) (KORD 0) or (kh, ci, kw) (KORD 1: fconv_v's direct form);
 *            B = the im2col matrix, never stored: column col = img * P + p (p = oh * OW + ow),
 *            B(k, col) = X[img, ci, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw] (0 outside), gathered
 *            straight into __local memory by the tile loads; epilogue as kernels/fconv.cl:
 *            y = (act(acc + bias[oc]) + res[img*rn + oc*rc + p*rp]) / div, written NCHW, the
 *            output channels split over up to 4 outputs (o2c.Conv of sibling convs: channel oc
 *            of split s to Y_s at channel oc - o_s; gg_conv_store).
 *
 * Tile diagram (one work-group; defaults TM = TN = 64, TK = 16, RM = RN = 4: 16 x 16 = 256
 * work-items, lws = {TN/RN, TM/RM}, dim 0 along n):
 *
 *              TN columns (n0 ..)                       As: __local [TK][TM + 1]  (k-major)
 *          +---------------------+                      Bs: __local [TK][TN + 1]
 *   TM     | work-item (tx, ty)  |   rows  ty + i*(TM/RM), i < RM
 *   rows   | owns an RM x RN     |   cols  tx + j*(TN/RN), j < RN   (strided register block)
 *   (m0..) | register block      |
 *          +---------------------+   for each k-step of TK: all work-items load the A tile
 *                                    (TM x TK) and the B tile (TK x TN) into __local, barrier,
 *   RM*RN fmas per (RM + RN) __local reads per k, barrier.
 *
 * Global loads: each work-item moves TM*TK/NT elements of A and TN*TK/NT of B per k-step
 * (NT = work-group size). Panel operands (linear A, linear B, conv weights) are read in their
 * memory order: consecutive work-items take consecutive groups of 4 floats (vload4 when the 4
 * are inside the matrix, else guarded scalars), so a warp reads 512 contiguous bytes of a panel
 * (B of a linear: a 16-column panel's TK rows are 16*TK contiguous floats) or 64-byte row runs
 * (row-major A). The im2col gather gives each work-item one fixed column (its (img, oh, ow) is
 * decoded once) and TK*TN/NT k rows: neighbouring work-items read neighbouring ow, contiguous
 * for stride 1.
 * __local reads in the inner loop: Bs[k][tx + j*(TN/RN)] — 16 consecutive lanes, consecutive
 * banks, the two half-warps (ty, ty+1) read the same words: conflict-free; As[k][ty + i*(TM/RM)]
 * — two distinct words per warp: broadcast. The +1 pad keeps the transposing tile stores at
 * most 2-way conflicted (they are 8 stores per 256 fmas at the defaults).
 * Stores: lanes along n: a warp stores 2 rows x 16 consecutive floats (linear: row-major Y;
 * conv: along p of NCHW), 64-byte coalesced runs.
 *
 * Expected behaviour on an NVIDIA H200 (132 SMs, 64 K registers and up to 228 KiB shared per
 * SM, 48 KiB __local per work-group in OpenCL): at the defaults ~40-64 registers per work-item
 * (16 accumulators), 8.3 KiB __local per group -> 4 groups (1024 threads) per SM by registers,
 * 528 resident groups; the inner loop does 16 fmas per 8 shared loads (2 of them broadcast), so
 * shared bandwidth (128 B/clk/SM) supports ~70% of fp32 peak; the global side reads each A tile
 * N/TN times and each B tile M/TM times (L2-resident for SD sizes). The missing last factor is
 * double buffering (one barrier pair per k-step is not hidden): a tuning candidate. Bigger
 * blocks (TM = 128, RM = 8) halve shared traffic per fma but give fewer groups; SD's 64x64 UNet
 * linears (M = 4096, N = 320) have 320 tiles of 64x64.
 * Split-K: with nslice > 1 the group (., ., z) sums k in [z*Kc, min(K, (z+1)*Kc)) and writes its
 * raw partial sums to Pt[z][M][N] (no epilogue); gg_*_reduce adds the slices in order z = 0..S-1
 * and applies the epilogue. Chosen by the schedule for few tiles and long K (e.g. 77-row CLIP
 * linears, SD's 8x8 convs with K = 11520).
 *
 * Epilogue activations are kernels/fgemm.cl's fg_act (codes 0 none, 1 relu, 2 silu, 3 gelu-erf,
 * 4 gelu-tanh, 7 quick-gelu; the conv schedule maps fconv's codes onto these): the schedules
 * include fgemm.cl (helpers and macros only, no kernels) before this file.
 * Tile parameters are macro arguments of each instance (TM, TN, TK, RM, RN; conv also OCB, KORD,
 * KH, KW); constraints checked by the schedule: TM % RM == 0, TN % RN == 0, NT = (TM/RM)(TN/RN)
 * <= 256 divides TM*TK and TN*TK, (TM*TK/NT) % 4 == 0, TK % 4 == 0, TN % 16 == 0 (linear B
 * panels), TM % OCB == 0. Every index fits in int (the lowerings check numel < 2^31).
 * No barrier is inside a branch: every work-item of a group runs the same k-steps.
 */
#ifndef O2C_GEMM_GPU_CL
#define O2C_GEMM_GPU_CL

#ifndef O2C_FGEMM_CL
#error "kernels/gemm_gpu.cl needs kernels/fgemm.cl before it (fg_act): cg_use fgemm first"
#endif

/* The fgemm epilogue of C[m, n] = v: bias, activation, residual, store into the split owning
 * column n (o[0..nsplit] split offsets). */
static inline void gg_fgemm_store(float v, int m, int n, int N, const int *o, int nsplit,
                                  __global const float *bias, __global const float *R,
                                  int has_bias, int act, int has_res, __global float *Y0,
                                  __global float *Y1, __global float *Y2, __global float *Y3,
                                  __global float *Y4, __global float *Y5, __global float *Y6,
                                  __global float *Y7)
{
    if (has_bias) v += bias[n];
    v = fg_act(v, act);
    if (has_res) v += R[m * N + n];
    int s = 0;
    while (s + 1 < nsplit && n >= o[s + 1]) s++;
    __global float *y = s == 0 ? Y0 : s == 1 ? Y1 : s == 2 ? Y2 : s == 3 ? Y3
                      : s == 4 ? Y4 : s == 5 ? Y5 : s == 6 ? Y6 : Y7;
    y[m * (o[s + 1] - o[s]) + (n - o[s])] = v;
}

/* The conv epilogue of output (img, oc, p) = v (fconv.cl's order: bias, act, residual, div),
 * stored into the output split owning channel oc: Y_s [images, o_{s+1} - o_s, P] with
 * o_0 = 0 <= o1 <= o2 <= o3 <= o_4 = OC (a single output: o1 = o2 = o3 = OC, Y1..Y3 never
 * accessed; passes/fuse/sibling_conv.c). */
static inline void gg_conv_store(float v, int img, int oc, int p, int OC, int P,
                                 __global const float *bias, __global const float *Res,
                                 __global float *Y, __global float *Y1, __global float *Y2,
                                 __global float *Y3, int o1, int o2, int o3, int has_bias,
                                 int act, int has_res, int rn, int rc, int rp, int has_div,
                                 float div)
{
    if (has_bias) v += bias[oc];
    v = fg_act(v, act);
    if (has_res) v += Res[img * rn + oc * rc + p * rp];
    if (has_div) v = v / div;
    const int s = (oc >= o1) + (oc >= o2) + (oc >= o3);
    const int lo = s == 0 ? 0 : s == 1 ? o1 : s == 2 ? o2 : o3;
    const int hi = s == 0 ? o1 : s == 1 ? o2 : s == 2 ? o3 : OC;
    __global float *y = s == 0 ? Y : s == 1 ? Y1 : s == 2 ? Y2 : Y3;
    y[(img * (hi - lo) + oc - lo) * P + p] = v;
}

/* Loads the TR x TK tile (rows r0.., k0..) of a panel matrix with OCB rows per panel
 * (element (r, k) at Wp[((r / OCB) * K + k) * OCB + r % OCB]; OCB = 1: row-major [R, K]) into
 * the k-major __local tile S[k * (TR + 1) + r]; zero outside r < R, k < kend. NT work-items,
 * each moving TR*TK/(4*NT) groups of 4 elements that are contiguous in memory (the schedule
 * makes TR*TK a multiple of 4*NT). WS: the storage of Wp (f32, or f16 read with vload_half4 /
 * vload_half: onnx2cl --weights-dtype f16; prelude.cl O2C_WLOAD*). */
#define GG_LOAD_PANEL(S, Wp, r0, k0, kend, R, K, TR, TK, OCB, NT, lid, WS)                       \
    GG_LOAD_PANEL_SP(S, Wp, r0, k0, kend, R, K, TR, TK, OCB, NT, lid, WS, 1, 0)

/* The same with panel q of the tile read from stored panel ((r0 / OCB) + q) * PS + PO: PS = 2,
 * PO = 0 / 1 reads the hidden / gate panels of a GEGLU weight in pair order (rows = output
 * columns 16q'.., GG_FGEGLU_DEFINE). */
#define GG_LOAD_PANEL_SP(S, Wp, r0, k0, kend, R, K, TR, TK, OCB, NT, lid, WS, PS, PO)            \
    _Pragma("unroll") for (int it = 0; it < (TR) * (TK) / 4 / (NT); it++) {                      \
        const int e = ((lid) + it * (NT)) * 4;                                                   \
        const int q = e / ((TK) * (OCB)), rr = e % ((TK) * (OCB));                               \
        const int kq = rr / (OCB), jq = rr % (OCB);                                              \
        const int rb = (r0) + q * (OCB) + jq, kb = (k0) + kq;                                    \
        const __global O2C_WT(WS) *src =                                                         \
            (Wp) + ((((r0) / (OCB) + q) * (PS) + (PO)) * (K) + kb) * (OCB) + jq;                  \
        /* OCB == 1: the 4 are consecutive k of row rb; else 4 consecutive rows at k kb */      \
        const int dr = (OCB) == 1 ? 0 : 1, dk = (OCB) == 1 ? 1 : 0;                             \
        float4 v;                                                                                \
        if (rb + 3 * dr < (R) && kb + 3 * dk < (kend)) {                                        \
            v = O2C_WLOAD4(WS, 0, src);                                                          \
        } else {                                                                                 \
            v.s0 = rb < (R) && kb < (kend) ? O2C_WLOAD1(WS, 0, src) : 0.0f;                      \
            v.s1 = rb + dr < (R) && kb + dk < (kend) ? O2C_WLOAD1(WS, 1, src) : 0.0f;            \
            v.s2 = rb + 2 * dr < (R) && kb + 2 * dk < (kend) ? O2C_WLOAD1(WS, 2, src) : 0.0f;    \
            v.s3 = rb + 3 * dr < (R) && kb + 3 * dk < (kend) ? O2C_WLOAD1(WS, 3, src) : 0.0f;    \
        }                                                                                        \
        const int lr = q * (OCB) + jq, lk = kq;                                                  \
        S[(lk + 0 * dk) * ((TR) + 1) + lr + 0 * dr] = v.s0;                                      \
        S[(lk + 1 * dk) * ((TR) + 1) + lr + 1 * dr] = v.s1;                                      \
        S[(lk + 2 * dk) * ((TR) + 1) + lr + 2 * dr] = v.s2;                                      \
        S[(lk + 3 * dk) * ((TR) + 1) + lr + 3 * dr] = v.s3;                                      \
    }

/* The start of every tile kernel: the __local tiles, work-item coordinates (tx along n, ty
 * along m, lid linear), the tile origin (n0, m0) and the zeroed RM x RN accumulators. */
#define GG_BEGIN(TM, TN, TK, RM, RN)                                                             \
    __local float As[(TK) * ((TM) + 1)], Bs[(TK) * ((TN) + 1)];                                  \
    const int NT = ((TM) / (RM)) * ((TN) / (RN));                                                \
    const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);                              \
    const int lid = ty * ((TN) / (RN)) + tx;                                                     \
    const int n0 = (int)get_group_id(0) * (TN), m0 = (int)get_group_id(1) * (TM);                \
    float acc[RM][RN];                                                                           \
    _Pragma("unroll") for (int i = 0; i < (RM); i++)                                             \
        _Pragma("unroll") for (int j = 0; j < (RN); j++) acc[i][j] = 0.0f;

/* The register-block product of one staged k-step. */
#define GG_MMA(As, Bs, acc, TM, TN, TK, RM, RN, tx, ty)                                          \
    _Pragma("unroll") for (int kk = 0; kk < (TK); kk++) {                                        \
        float av[RM], bv[RN];                                                                    \
        _Pragma("unroll") for (int i = 0; i < (RM); i++)                                         \
            av[i] = As[kk * ((TM) + 1) + (ty) + i * ((TM) / (RM))];                              \
        _Pragma("unroll") for (int j = 0; j < (RN); j++)                                         \
            bv[j] = Bs[kk * ((TN) + 1) + (tx) + j * ((TN) / (RN))];                              \
        _Pragma("unroll") for (int i = 0; i < (RM); i++)                                         \
            _Pragma("unroll") for (int j = 0; j < (RN); j++)                                     \
                acc[i][j] = fma(av[i], bv[j], acc[i][j]);                                        \
    }

/* The parameters of GG_FGEMM_DEFINE and GG_FGEGLU_DEFINE (one argument list: the schedule and
 * the tuner set them alike; Kc is argument 16, Y0..Y7 arguments 4..11). */
#define GG_FGEMM_PARAMS(WS)                                                                      \
    __global const float *A, __global const O2C_WT(WS) *Wp, __global const float *bias,         \
        __global const float *R, __global float *Y0, __global float *Y1, __global float *Y2,    \
        __global float *Y3, __global float *Y4, __global float *Y5, __global float *Y6,         \
        __global float *Y7, __global float *Pt, int M, int N, int K, int Kc, int nslice,        \
        int has_bias, int act, int has_res, int nsplit, int o1, int o2, int o3, int o4, int o5, \
        int o6, int o7

/* Linear layer: A [M, K] row-major, Wp = panels16 of W [K, N]. gws = {ceil(N/TN)*(TN/RN),
 * ceil(M/TM)*(TM/RM), nslice}, lws = {TN/RN, TM/RM, 1}. Kc = k per slice (multiple of TK). */
#define GG_FGEMM_DEFINE(NAME, TM, TN, TK, RM, RN, WS)                                            \
    __kernel __attribute__((reqd_work_group_size((TN) / (RN), (TM) / (RM), 1))) void NAME(      \
        GG_FGEMM_PARAMS(WS))                                                                     \
    {                                                                                            \
        GG_BEGIN(TM, TN, TK, RM, RN)                                                             \
        const int z = (int)get_group_id(2);                                                      \
        const int kbeg = z * Kc, kend = min(K, kbeg + Kc);                                       \
        const int npan = (N + 15) / 16;                                                          \
        for (int k0 = kbeg; k0 < kend; k0 += (TK)) {                                             \
            GG_LOAD_PANEL(As, A, m0, k0, kend, M, K, TM, TK, 1, NT, lid, f32)                    \
            GG_LOAD_PANEL(Bs, Wp, n0, k0, kend, npan * 16, K, TN, TK, 16, NT, lid, WS)           \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
            GG_MMA(As, Bs, acc, TM, TN, TK, RM, RN, tx, ty)                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
        }                                                                                        \
        int o[9] = {0, o1, o2, o3, o4, o5, o6, o7, N};                                           \
        o[nsplit] = N;                                                                           \
        _Pragma("unroll") for (int i = 0; i < (RM); i++) {                                       \
            const int m = m0 + ty + i * ((TM) / (RM));                                           \
            _Pragma("unroll") for (int j = 0; j < (RN); j++) {                                   \
                const int n = n0 + tx + j * ((TN) / (RN));                                       \
                if (m >= M || n >= N) continue;                                                  \
                if (nslice > 1) Pt[(z * M + m) * N + n] = acc[i][j];                             \
                else gg_fgemm_store(acc[i][j], m, n, N, o, nsplit, bias, R, has_bias, act,       \
                                    has_res, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7);                    \
            }                                                                                    \
        }                                                                                        \
    }

/* GEGLU linear (o2c.Gemm activation 5 / 6, passes/fuse/geglu.c): Wp = panels16 of the
 * pair-ordered weight W' [K, N = 2 * F16] (panel 2q: hidden columns 16q.., panel 2q + 1: the gate
 * columns of the same outputs), bias [N] in the same order; one output Y0 [M, F], F = o1:
 *   Y0[m, c] = (H[m, c] + bias[32(c/16) + c%16]) * gelu(G[m, c] + bias[32(c/16) + 16 + c%16])
 * with H / G the products with the hidden / gate panels. Tiles over the F output columns:
 * gws = {ceil(F/TN)*(TN/RN), ceil(M/TM)*(TM/RM), 1}, lws = {TN/RN, TM/RM, 1} (no split-K: nslice
 * = 1, Kc >= K; Pt, R, Y1..Y7 are not used). Same arguments as GG_FGEMM_DEFINE. Each k-step
 * stages the A tile once and the hidden then the gate B tile in the same Bs (the __local use of
 * GG_FGEMM_DEFINE, so every tile that is valid for it is valid here), two accumulator blocks. */
#define GG_FGEGLU_DEFINE(NAME, TM, TN, TK, RM, RN, WS)                                           \
    __kernel __attribute__((reqd_work_group_size((TN) / (RN), (TM) / (RM), 1))) void NAME(      \
        GG_FGEMM_PARAMS(WS))                                                                     \
    {                                                                                            \
        GG_BEGIN(TM, TN, TK, RM, RN)                                                             \
        float accg[RM][RN];                                                                      \
        _Pragma("unroll") for (int i = 0; i < (RM); i++)                                         \
            _Pragma("unroll") for (int j = 0; j < (RN); j++) accg[i][j] = 0.0f;                  \
        const int F = o1, F16 = N / 2;                                                           \
        for (int k0 = 0; k0 < K; k0 += (TK)) {                                                   \
            GG_LOAD_PANEL(As, A, m0, k0, K, M, K, TM, TK, 1, NT, lid, f32)                       \
            GG_LOAD_PANEL_SP(Bs, Wp, n0, k0, K, F16, K, TN, TK, 16, NT, lid, WS, 2, 0)           \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
            GG_MMA(As, Bs, acc, TM, TN, TK, RM, RN, tx, ty)                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
            GG_LOAD_PANEL_SP(Bs, Wp, n0, k0, K, F16, K, TN, TK, 16, NT, lid, WS, 2, 1)           \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
            GG_MMA(As, Bs, accg, TM, TN, TK, RM, RN, tx, ty)                                     \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
        }                                                                                        \
        _Pragma("unroll") for (int i = 0; i < (RM); i++) {                                       \
            const int m = m0 + ty + i * ((TM) / (RM));                                           \
            _Pragma("unroll") for (int j = 0; j < (RN); j++) {                                   \
                const int c = n0 + tx + j * ((TN) / (RN));                                       \
                if (m >= M || c >= F) continue;                                                  \
                const int bh = (c / 16) * 32 + c % 16;                                           \
                float h = acc[i][j], gt = accg[i][j];                                            \
                if (has_bias) {                                                                  \
                    h += bias[bh];                                                               \
                    gt += bias[bh + 16];                                                         \
                }                                                                                \
                Y0[m * F + c] = h * fg_act(gt, act - 2);                                         \
            }                                                                                    \
        }                                                                                        \
    }

/* Split-K finish of a linear: C[m, n] = sum_z Pt[z][m][n] (z increasing), then the epilogue.
 * gws = {ceil(M*N / 256) * 256}, lws = {256}. */
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void gg_fgemm_reduce(
    __global const float *Pt, __global const float *bias, __global const float *R,
    __global float *Y0, __global float *Y1, __global float *Y2, __global float *Y3,
    __global float *Y4, __global float *Y5, __global float *Y6, __global float *Y7, int M, int N,
    int nslice, int has_bias, int act, int has_res, int nsplit, int o1, int o2, int o3, int o4,
    int o5, int o6, int o7)
{
    const int idx = (int)get_global_id(0);
    if (idx >= M * N) return;
    float v = 0.0f;
    for (int z = 0; z < nslice; z++) v += Pt[z * M * N + idx];
    int o[9] = {0, o1, o2, o3, o4, o5, o6, o7, N};
    o[nsplit] = N;
    gg_fgemm_store(v, idx / N, idx % N, N, o, nsplit, bias, R, has_bias, act, has_res, Y0, Y1,
                   Y2, Y3, Y4, Y5, Y6, Y7);
}

/* Convolution as implicit GEMM, groups = 1, 1-D/2-D (H = OH = 1 for 1-D): rows oc (M = OC),
 * columns col = img * P + p (NC = images * P), K = C * KH * KW. KH, KW compile-time (the k
 * decomposition divides by constants). gws = {ceil(NC/TN)*(TN/RN), ceil(OC/TM)*(TM/RM),
 * nslice}, lws = {TN/RN, TM/RM, 1}. Partial sums Pt[z][OC][NC] when nslice > 1. */
#define GG_CONV_DEFINE(NAME, TM, TN, TK, RM, RN, OCB, KORD, KH, KW, WS)                          \
    __kernel __attribute__((reqd_work_group_size((TN) / (RN), (TM) / (RM), 1))) void NAME(      \
        __global const float *X, __global const O2C_WT(WS) *Wp, __global const float *bias,     \
        __global const float *Res, __global float *Y, __global float *Y1, __global float *Y2,    \
        __global float *Y3, __global float *Pt, int C, int H, int W, int OH, int OW, int OC,    \
        int o1, int o2, int o3, int NC, int Kc, int nslice, int sh, int sw, int ph, int pw,     \
        int dh, int dw, int has_bias, int act, int has_res, int rn, int rc, int rp,             \
        int has_div, float div)                                                                  \
    {                                                                                            \
        GG_BEGIN(TM, TN, TK, RM, RN)                                                             \
        const int z = (int)get_group_id(2);                                                      \
        const int K = C * (KH) * (KW), P = OH * OW;                                              \
        const int kbeg = z * Kc, kend = min(K, kbeg + Kc);                                       \
        /* this work-item's im2col column (fixed: NT is a multiple of TN) */                    \
        const int bc = lid % (TN), bk = lid / (TN);                                              \
        const int col = n0 + bc;                                                                 \
        const bool col_ok = col < NC;                                                            \
        const int img = col_ok ? col / P : 0, pp = col_ok ? col % P : 0;                         \
        const int ih0 = (pp / OW) * sh - ph, iw0 = (pp % OW) * sw - pw;                          \
        const __global float *ximg = X + img * C * H * W;                                        \
        for (int k0 = kbeg; k0 < kend; k0 += (TK)) {                                             \
            GG_LOAD_PANEL(As, Wp, m0, k0, kend, OC, K, TM, TK, OCB, NT, lid, WS)                 \
            _Pragma("unroll") for (int it = 0; it < (TK) * (TN) / NT; it++) {                    \
                const int kr = bk + it * (NT / (TN)), k = k0 + kr;                               \
                int ci, kh, kw;                                                                  \
                if (KORD == 0) {                                                                 \
                    ci = k / ((KH) * (KW));                                                      \
                    kh = k / (KW) % (KH);                                                        \
                } else {                                                                         \
                    ci = k / (KW) % C;                                                           \
                    kh = k / ((KW) * C);                                                         \
                }                                                                                \
                kw = k % (KW);                                                                   \
                const int ih = ih0 + kh * dh, iw = iw0 + kw * dw;                                \
                const bool ok = col_ok && k < kend && ih >= 0 && ih < H && iw >= 0 && iw < W;    \
                Bs[kr * ((TN) + 1) + bc] = ok ? ximg[(ci * H + ih) * W + iw] : 0.0f;             \
            }                                                                                    \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
            GG_MMA(As, Bs, acc, TM, TN, TK, RM, RN, tx, ty)                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
        }                                                                                        \
        _Pragma("unroll") for (int j = 0; j < (RN); j++) {                                       \
            const int c = n0 + tx + j * ((TN) / (RN));                                           \
            if (c >= NC) continue;                                                               \
            const int cimg = c / P, cp = c % P;                                                  \
            _Pragma("unroll") for (int i = 0; i < (RM); i++) {                                   \
                const int oc = m0 + ty + i * ((TM) / (RM));                                      \
                if (oc >= OC) continue;                                                          \
                if (nslice > 1) Pt[(z * OC + oc) * NC + c] = acc[i][j];                          \
                else gg_conv_store(acc[i][j], cimg, oc, cp, OC, P, bias, Res, Y, Y1, Y2, Y3, o1,   \
                                   o2, o3, has_bias, act, has_res, rn, rc, rp, has_div, div);    \
            }                                                                                    \
        }                                                                                        \
    }

/* Split-K finish of a convolution: y(img, oc, p) = epilogue(sum_z Pt[z][oc][img*P + p]).
 * gws = {ceil(images*OC*P / 256) * 256} in NCHW order (coalesced stores), lws = {256}. */
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void gg_conv_reduce(
    __global const float *Pt, __global const float *bias, __global const float *Res,
    __global float *Y, __global float *Y1, __global float *Y2, __global float *Y3, int OC, int o1,
    int o2, int o3, int P, int NC, int nslice, int has_bias, int act, int has_res, int rn, int rc,
    int rp, int has_div, float div)
{
    const int idx = (int)get_global_id(0);
    if (idx >= OC * NC) return;
    const int p = idx % P, t = idx / P, oc = t % OC, img = t / OC;
    float v = 0.0f;
    for (int z = 0; z < nslice; z++) v += Pt[(z * OC + oc) * NC + img * P + p];
    gg_conv_store(v, img, oc, p, OC, P, bias, Res, Y, Y1, Y2, Y3, o1, o2, o3, has_bias, act,
                  has_res, rn, rc, rp, has_div, div);
}

/* MatMul / Gemm-13 (kernels/matmul.cl's arguments and semantics): Y[b, m, n] = alpha * sum_k
 * A(b, m, k) B(b, k, n) + beta * C(m, n), A(b, m, k) = A[a_off(b) + m*a_rs + k*a_cs], B likewise,
 * batch b = get_group_id(2) split into (b0, b1, b2) by bd1, bd2. Tiles as the linear kernel;
 * the tile loads are scalar (strided operands): element e of a tile goes to work-item e % NT,
 * A along k and B along n, so contiguous operands (a_cs = b_cs = 1) give coalesced runs.
 * gws = {ceil(N/TN)*(TN/RN), ceil(M/TM)*(TM/RM), batch}, lws = {TN/RN, TM/RM, 1}. */
#define GG_MATMUL_DEFINE(NAME, TM, TN, TK, RM, RN)                                               \
    __kernel __attribute__((reqd_work_group_size((TN) / (RN), (TM) / (RM), 1))) void NAME(      \
        __global const float *A, __global const float *B, __global const float *Cm,             \
        __global float *Y, int M, int N, int K, int a_rs, int a_cs, int b_rs, int b_cs, int bd1, \
        int bd2, int a_s0, int a_s1, int a_s2, int b_s0, int b_s1, int b_s2, float alpha,       \
        float beta, int c_rs, int c_cs, int has_c)                                               \
    {                                                                                            \
        GG_BEGIN(TM, TN, TK, RM, RN)                                                             \
        const int b = (int)get_group_id(2);                                                      \
        const int b2 = b % bd2, bt = b / bd2, b1 = bt % bd1, b0 = bt / bd1;                      \
        const __global float *a = A + (b0 * a_s0 + b1 * a_s1 + b2 * a_s2);                       \
        const __global float *bb = B + (b0 * b_s0 + b1 * b_s1 + b2 * b_s2);                      \
        for (int k0 = 0; k0 < K; k0 += (TK)) {                                                   \
            _Pragma("unroll") for (int it = 0; it < (TM) * (TK) / NT; it++) {                    \
                const int e = lid + it * NT, m = e / (TK), kk = e % (TK);                        \
                const int gm = m0 + m, gk = k0 + kk;                                             \
                As[kk * ((TM) + 1) + m] = gm < M && gk < K ? a[gm * a_rs + gk * a_cs] : 0.0f;    \
            }                                                                                    \
            _Pragma("unroll") for (int it = 0; it < (TN) * (TK) / NT; it++) {                    \
                const int e = lid + it * NT, kk = e / (TN), n = e % (TN);                        \
                const int gn = n0 + n, gk = k0 + kk;                                             \
                Bs[kk * ((TN) + 1) + n] = gn < N && gk < K ? bb[gk * b_rs + gn * b_cs] : 0.0f;   \
            }                                                                                    \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
            GG_MMA(As, Bs, acc, TM, TN, TK, RM, RN, tx, ty)                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                        \
        }                                                                                        \
        _Pragma("unroll") for (int i = 0; i < (RM); i++) {                                       \
            const int m = m0 + ty + i * ((TM) / (RM));                                           \
            _Pragma("unroll") for (int j = 0; j < (RN); j++) {                                   \
                const int n = n0 + tx + j * ((TN) / (RN));                                       \
                if (m >= M || n >= N) continue;                                                  \
                float v = alpha * acc[i][j];                                                     \
                if (has_c) v += beta * Cm[m * c_rs + n * c_cs];                                  \
                Y[(b * M + m) * N + n] = v;                                                      \
            }                                                                                    \
        }                                                                                        \
    }

#endif /* O2C_GEMM_GPU_CL */
