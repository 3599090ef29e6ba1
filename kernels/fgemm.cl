/* fgemm.cl — fused GEMM with a constant weight (ops.def o2c.Gemm, family "fgemm").
 *
 *   Z[m, n]  = sum_k A[m, k] * W[k, n]                      m < M, n < N (N = all splits)
 *   Z[m, n] += bias[n]                                      (has_bias)
 *   Z[m, n]  = act(Z[m, n])                                 act: 0 none, 1 relu, 2 silu,
 *                                                                3 gelu (erf), 4 gelu (tanh),
 *                                                                7 quick gelu v*sigmoid(1.702v)
 *   Z[m, n] += R[m, n]                                      (has_res; only with one split)
 *   Y_s[m, n - o_s] = Z[m, n]   for o_s <= n < o_{s+1}      (column splits, s < nsplit <= 8)
 * GEGLU (act 5 / 6, passes/fuse/geglu.c): the weight and bias columns are in pair order (16
 * hidden, then the 16 gate columns of the same outputs; N = 2 * F16) and one output of width
 * F = o1 (nsplit = 1, no residual):
 *   Y0[m, 16q + j] = (Z[m, 32q + j] + bias) * gelu(Z[m, 32q + 16 + j] + bias)   16q + j < F
 * (gelu = fg_act code act - 2: erf for 5, tanh for 6): a work-item's two panels (NP = 2, p0 even) are one pair.
 *
 * Layout: A dense row-major [M, K] (batch dims of the model folded into M); the weight arrives
 * pre-packed by the lowering (codegen/lower_fgemm.c) in panels of 16 columns, K-major inside a
 * panel:  Wp[p][k][j] = W[k, 16p + j]  (zero for 16p + j >= N), so one vload16 per k reads the
 * 16 weights of a panel row and a panel is one contiguous stream of K * 64 bytes. bias [N],
 * R dense [M, N], each Y_s dense [M, o_{s+1} - o_s]. Offsets o_0 = 0, o_1..o_7 are arguments
 * (unused ones = N), o_nsplit = N.
 *
 * Work: one work-item computes a TM x (16·NP) register tile: TM rows x NP panels, one float16
 * accumulator per (row, panel) (TM=8, NP=2: 16 zmm registers on AVX-512). Per k it loads NP
 * panel rows (vload16, contiguous) and broadcasts A[m, k] of each row (a scalar load +
 * broadcast, no shuffles), so every weight load feeds TM vector FMAs and every A element NP.
 * gws[0] = ceil(M / TM) row blocks (fastest: neighbouring work-items share the weight panels,
 * which stay in cache), gws[1] = ceil(N / (16·NP)) panel groups.
 *
 *               k-th row of panels p0 .. p0+NP-1 (16·NP floats)
 *   m0     [ c[0][0] | c[0][1] ]
 *   ...    [   ...   |   ...   ]   += A[m0+i, k] * Wp[p0+q][k][0..15]     k = 0 .. K-1
 *   m0+TM-1[c[TM-1][0]|c[TM-1][1]]
 *
 * Edges: the last row block starts at min(m0, M - TM) (it recomputes rows of its neighbour and
 * stores only its own; the lowering makes TM <= M), panels beyond N are clamped to the last
 * panel (their columns are never stored), padded columns of the last panel are zero weights.
 * A 16-column tile that lies inside one split and inside N is finished with float16 vector
 * ops (bias, activation, residual, vstore16); any other tile element by element.
 *
 * Compile-time specialization: TM, NP and the weight storage WS are macro arguments; the
 * lowering emits one line
 *     FG_DEFINE(fgemm_t8_p2, 8, 2, f32)
 * per distinct (TM, NP, WS) through cg_add_source(). K is a run-time argument (the loop is
 * unrolled by 4 with a run-time trip count, the TM rows of A are pointers computed once): K as
 * a constant measured no faster at SD's sizes (K = 320..5120, within the noise of a shared
 * machine: bench/results/fgemm-runtime-k-2026-12-02-5adc7ca.md), while one kernel per K cost
 * one PoCL compile per K value at the first run. WS = f16: the panels hold IEEE half weights
 * (onnx2cl --weights-dtype f16), read with vload_half16 (prelude.cl O2C_WLOAD16); the
 * arithmetic is the same float32.
 *
 * Accumulation is in float, in increasing k order with fused multiply-adds. Semantics match the
 * unfused ops: relu NaN-propagating (v < 0 ? 0 : v), silu = v * (1 / (1 + exp(-v))) as
 * Mul(v, Sigmoid(v)), gelu as kernels/unary.cl (no erf() call: the same rational approximation
 * ka_erf_f, max abs error 4.5e-7; the float16 version evaluates the same expression lane-wise).
 * Assumes every index fits in int (the lowering checks numel < 2^31). float32 only; the file
 * does not depend on T and defines its helpers and macro once.
 */
#ifndef O2C_FGEMM_CL
#define O2C_FGEMM_CL


/* ka_erf_f on 16 lanes (same coefficients and operation order). */
static inline float16 fg_erf16(float16 a)
{
    const float16 x = clamp(a, -4.0f, 4.0f);
    const float16 x2 = x * x;
    float16 p = (float16)(-2.72614225801306e-10f);
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 + -2.10102402082508e-06f;
    p = p * x2 + -5.69250639462346e-05f;
    p = p * x2 + -7.34990630326855e-04f;
    p = p * x2 + -2.95459980854025e-03f;
    p = p * x2 + -1.60960333262415e-02f;
    p = p * x;
    float16 q = (float16)(-1.45660718464996e-05f);
    q = q * x2 + -2.13374055278905e-04f;
    q = q * x2 + -1.68282697438203e-03f;
    q = q * x2 + -7.37332916720468e-03f;
    q = q * x2 + -1.42647390514189e-02f;
    return select(p / q, a, isnan(a));
}

/* Epilogue activation of one element (codes in the banner). */
static inline float fg_act(float v, int act)
{
    switch (act) {
    case 1: return v < 0.0f ? 0.0f : v;
    case 2: return v * (1.0f / (1.0f + exp(-v)));
    case 3: return 0.5f * v * (1.0f + ka_erf_f(v * 0.70710678118654752440f));
    case 4: return 0.5f * v * (1.0f + tanh(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
    case 7: return v * (1.0f / (1.0f + exp(-(v * 1.702f))));
    default: return v;
    }
}

/* The same on 16 lanes. */
static inline float16 fg_act16(float16 v, int act)
{
    switch (act) {
    case 1: return select(v, (float16)(0.0f), v < 0.0f);
    case 2: return v * (1.0f / (1.0f + exp(-v)));
    case 3: return 0.5f * v * (1.0f + fg_erf16(v * 0.70710678118654752440f));
    case 4: return 0.5f * v * (1.0f + tanh(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
    case 7: return v * (1.0f / (1.0f + exp(-(v * 1.702f))));
    default: return v;
    }
}

/* Output buffer of split s. */
static inline __global float *fg_split(__global float *Y0, __global float *Y1,
                                       __global float *Y2, __global float *Y3,
                                       __global float *Y4, __global float *Y5,
                                       __global float *Y6, __global float *Y7, int s)
{
    switch (s) {
    case 0: return Y0;
    case 1: return Y1;
    case 2: return Y2;
    case 3: return Y3;
    case 4: return Y4;
    case 5: return Y5;
    case 6: return Y6;
    default: return Y7;
    }
}

/* Finishes the 16 columns n0 .. n0+15 of row m (columns >= N dropped): bias, activation,
 * residual, store into the owning splits. o[0..nsplit] are the split offsets. */
static inline void fg_finish(float16 z, int m, int n0, int N, const int *o, int nsplit,
                             __global const float *bias, __global const float *R, int has_bias,
                             int act, int has_res, __global float *Y0, __global float *Y1,
                             __global float *Y2, __global float *Y3, __global float *Y4,
                             __global float *Y5, __global float *Y6, __global float *Y7)
{
    int s = 0;
    while (s + 1 < nsplit && n0 >= o[s + 1]) s++;
    if (n0 + 16 <= o[s + 1]) {
        __global float *y = fg_split(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, s);
        if (has_bias) z += vload16(0, bias + n0);
        z = fg_act16(z, act);
        if (has_res) z += vload16(0, R + m * N + n0);
        vstore16(z, 0, y + m * (o[s + 1] - o[s]) + (n0 - o[s]));
        return;
    }
    float zz[16];
    vstore16(z, 0, zz);
    const int nn = min(16, N - n0);
    for (int j = 0; j < nn; j++) {
        const int n = n0 + j;
        while (s + 1 < nsplit && n >= o[s + 1]) s++;
        float v = zz[j];
        if (has_bias) v += bias[n];
        v = fg_act(v, act);
        if (has_res) v += R[m * N + n];
        fg_split(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, s)[m * (o[s + 1] - o[s]) + (n - o[s])] = v;
    }
}

/* GEGLU store of row m's output columns n0/2 .. n0/2 + 15 (< F): h = the hidden panel's 16
 * sums (packed columns n0 ..), gt = the gate panel's (n0 + 16 ..); act 5 / 6. */
static inline void fg_geglu(float16 h, float16 gt, int m, int n0, int F, __global const float *bias,
                            int has_bias, int act, __global float *Y)
{
    if (has_bias) {
        h += vload16(0, bias + n0);
        gt += vload16(0, bias + n0 + 16);
    }
    const float16 y = h * fg_act16(gt, act - 2);
    const int c0 = n0 / 2;
    if (c0 + 16 <= F) {
        vstore16(y, 0, Y + m * F + c0);
        return;
    }
    float yy[16];
    vstore16(y, 0, yy);
    for (int j = 0; j < F - c0; j++) Y[m * F + c0 + j] = yy[j];
}

#define FG_DEFINE(NAME, TM, NP, WS)                                                               \
    __kernel void NAME(__global const float *A, __global const O2C_WT(WS) *W,                    \
                       __global const float *bias, __global const float *R, __global float *Y0,  \
                       __global float *Y1, __global float *Y2, __global float *Y3,               \
                       __global float *Y4, __global float *Y5, __global float *Y6,               \
                       __global float *Y7, int M, int N, int K, int has_bias, int act,           \
                       int has_res, int nsplit, int o1, int o2, int o3, int o4, int o5, int o6,  \
                       int o7)                                                                   \
    {                                                                                            \
        const int mb = (int)get_global_id(0) * (TM);                                            \
        const int p0 = (int)get_global_id(1) * (NP);                                            \
        if (mb >= M) return;                                                                     \
        const int m0 = min(mb, M - (TM));                                                        \
        const __global float *ar[TM]; /* the TM rows of A */                                     \
        _Pragma("unroll") for (int i = 0; i < (TM); i++) ar[i] = A + (m0 + i) * K;               \
        const int np_all = (N + 15) / 16;                                                        \
        const __global O2C_WT(WS) *wp[NP];                                                       \
        float16 c[TM][NP];                                                                       \
        _Pragma("unroll") for (int q = 0; q < (NP); q++)                                         \
            wp[q] = W + min(p0 + q, np_all - 1) * (K * 16);                                      \
        _Pragma("unroll") for (int i = 0; i < (TM); i++)                                         \
            _Pragma("unroll") for (int q = 0; q < (NP); q++) c[i][q] = (float16)(0.0f);         \
        int k = 0;                                                                               \
        for (; k + 4 <= K; k += 4) {                                                             \
            float16 w[NP][4];                                                                    \
            _Pragma("unroll") for (int q = 0; q < (NP); q++)                                     \
                _Pragma("unroll") for (int u = 0; u < 4; u++)                                    \
                    w[q][u] = O2C_WLOAD16(WS, u, wp[q] + k * 16);                                \
            _Pragma("unroll") for (int i = 0; i < (TM); i++)                                     \
                _Pragma("unroll") for (int u = 0; u < 4; u++) {                                  \
                    const float16 x = (float16)(ar[i][k + u]);                                   \
                    _Pragma("unroll") for (int q = 0; q < (NP); q++)                             \
                        c[i][q] = fma(x, w[q][u], c[i][q]);                                      \
                }                                                                                \
        }                                                                                        \
        for (; k < K; k++)                                                                       \
            _Pragma("unroll") for (int q = 0; q < (NP); q++) {                                   \
                const float16 w0 = O2C_WLOAD16(WS, 0, wp[q] + k * 16);                           \
                _Pragma("unroll") for (int i = 0; i < (TM); i++)                                 \
                    c[i][q] = fma((float16)(ar[i][k]), w0, c[i][q]);                             \
            }                                                                                    \
        int o[9] = {0, o1, o2, o3, o4, o5, o6, o7, N};                                           \
        o[nsplit] = N;                                                                           \
        float16 z[(TM) * (NP)]; /* dynamic indexing below: keep c[][] in registers */           \
        _Pragma("unroll") for (int i = 0; i < (TM); i++)                                         \
            _Pragma("unroll") for (int q = 0; q < (NP); q++) z[q * (TM) + i] = c[i][q];         \
        if (act == 5 || act == 6) { /* GEGLU: panels p0 (hidden), p0 + 1 (gate), NP == 2 */     \
            for (int i = mb - m0; i < (TM); i++)                                                 \
                fg_geglu(z[i], z[((NP) - 1) * (TM) + i], m0 + i, p0 * 16, o1, bias, has_bias,    \
                         act, Y0);                                                               \
            return;                                                                              \
        }                                                                                        \
        for (int q = 0; q < (NP) && (p0 + q) * 16 < N; q++)                                      \
            for (int i = mb - m0; i < (TM); i++)                                                 \
                fg_finish(z[q * (TM) + i], m0 + i, (p0 + q) * 16, N, o, nsplit, bias, R,         \
                          has_bias, act, has_res, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7);               \
    }

#endif /* O2C_FGEMM_CL */
