/* fgemm.cl — fused GEMM with a constant weight (ops.def o2c.Gemm, family "fgemm").
 *
 *   Z[m, n]  = sum_k A[m, k] * W[k, n]                      m < M, n < N (N = all splits)
 *   Z[m, n] += bias[n]                                      (has_bias)
 *   Z[m, n]  = act(Z[m, n])                                 act: 0 none, 1 relu, 2 silu,
 *                                                                3 gelu (erf), 4 gelu (tanh)
 *   Z[m, n] += R[m, n]                                      (has_res; only with one split)
 *   Y_s[m, n - o_s] = Z[m, n]   for o_s <= n < o_{s+1}      (column splits, s < nsplit <= 8)
 *
 * Layout: A dense row-major [M, K] (batch dims of the model folded into M), W dense [K, N]
 * (the pass stores it so: K-major rows, contiguous columns), bias [N], R dense [M, N], each Y_s
 * dense [M, o_{s+1} - o_s]. Offsets o_0 = 0, o_1..o_7 are arguments (unused ones = N),
 * o_nsplit = N.
 *
 * Work: one work-item computes a FG_TM x 8 register tile (4 rows x 8 columns: one float8
 * accumulator per row); gws[0] = ceil(N/8), gws[1] = ceil(M/FG_TM). The K loop loads the 8
 * weights of row k with vload8 (contiguous) and broadcasts A[m, k], so each weight load feeds
 * FG_TM vector multiply-adds; explicit vectors are what PoCL vectorizes well.
 *
 *          n0 .. n0+7  (one float8 of W per k)
 *   m0   [ acc0 ]
 *   m0+1 [ acc1 ]   += A[m0+i, k] * W[k, n0..n0+7]      for k in 0..K-1
 *   m0+2 [ acc2 ]
 *   m0+3 [ acc3 ]
 *
 * Edge tiles (n0+8 > N or m0+FG_TM > M) take a scalar path with bounds checks. Accumulation is
 * in float, in increasing k order, like kernels/matmul.cl.
 * Semantics match the unfused ops: relu NaN-propagating (v < 0 ? 0 : v), silu = v * (1 / (1 +
 * exp(-v))) as Mul(v, Sigmoid(v)), gelu as kernels/unary.cl (no erf() call: the same rational
 * approximation ka_erf_f, max abs error 4.5e-7).
 * Assumes every index fits in int (the lowering checks numel < 2^31). float32 only (T = float).
 */
#ifndef FG_TM
#define FG_TM 4
#endif

#ifndef O2C_KA_ERF
#define O2C_KA_ERF
/* erf(x) for float: see kernels/unary.cl (same function, shared guard). */
static inline float ka_erf_f(float a)
{
    const float x = clamp(a, -4.0f, 4.0f);
    const float x2 = x * x;
    float p = -2.72614225801306e-10f;
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 + -2.10102402082508e-06f;
    p = p * x2 + -5.69250639462346e-05f;
    p = p * x2 + -7.34990630326855e-04f;
    p = p * x2 + -2.95459980854025e-03f;
    p = p * x2 + -1.60960333262415e-02f;
    p = p * x;
    float q = -1.45660718464996e-05f;
    q = q * x2 + -2.13374055278905e-04f;
    q = q * x2 + -1.68282697438203e-03f;
    q = q * x2 + -7.37332916720468e-03f;
    q = q * x2 + -1.42647390514189e-02f;
    return isnan(a) ? a : p / q;
}
#endif

/* Epilogue activation of one element (codes in the banner). */
static inline float KN(fg_act)(float v, int act)
{
    switch (act) {
    case 1: return v < 0.0f ? 0.0f : v;
    case 2: return v * (1.0f / (1.0f + exp(-v)));
    case 3: return 0.5f * v * (1.0f + ka_erf_f(v * 0.70710678118654752440f));
    case 4: return 0.5f * v * (1.0f + tanh(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
    default: return v;
    }
}

/* Stores Z[m, n] = v into the split owning column n. */
static inline void KN(fg_store)(__global T *Y0, __global T *Y1, __global T *Y2, __global T *Y3,
                                __global T *Y4, __global T *Y5, __global T *Y6, __global T *Y7,
                                const int *o, int nsplit, int m, int n, float v)
{
    int s = 0;
    while (s + 1 < nsplit && n >= o[s + 1]) s++;
    const int w = o[s + 1] - o[s];
    const int idx = m * w + (n - o[s]);
    switch (s) {
    case 0: Y0[idx] = (T)v; break;
    case 1: Y1[idx] = (T)v; break;
    case 2: Y2[idx] = (T)v; break;
    case 3: Y3[idx] = (T)v; break;
    case 4: Y4[idx] = (T)v; break;
    case 5: Y5[idx] = (T)v; break;
    case 6: Y6[idx] = (T)v; break;
    default: Y7[idx] = (T)v; break;
    }
}

__kernel void KN(fgemm)(__global const T *A, __global const T *W, __global const T *bias,
                        __global const T *R, __global T *Y0, __global T *Y1, __global T *Y2,
                        __global T *Y3, __global T *Y4, __global T *Y5, __global T *Y6,
                        __global T *Y7, int M, int N, int K, int has_bias, int act, int has_res,
                        int nsplit, int o1, int o2, int o3, int o4, int o5, int o6, int o7)
{
    const int n0 = (int)get_global_id(0) * 8;
    const int m0 = (int)get_global_id(1) * FG_TM;
    if (n0 >= N || m0 >= M) return;
    int o[9] = {0, o1, o2, o3, o4, o5, o6, o7, N};
    o[nsplit] = N;
    float acc[FG_TM][8];
    if (n0 + 8 <= N && m0 + FG_TM <= M) {
        float8 c0 = (float8)(0.0f), c1 = (float8)(0.0f), c2 = (float8)(0.0f), c3 = (float8)(0.0f);
        const __global T *a0 = A + m0 * K;
        const __global T *a1 = a0 + K;
        const __global T *a2 = a1 + K;
        const __global T *a3 = a2 + K;
        const __global T *w = W + n0;
        int k = 0;
        for (; k + 4 <= K; k += 4) {
            const float4 x0 = vload4(0, a0 + k), x1 = vload4(0, a1 + k);
            const float4 x2 = vload4(0, a2 + k), x3 = vload4(0, a3 + k);
            const float8 w0 = vload8(0, w + k * N), w1 = vload8(0, w + (k + 1) * N);
            const float8 w2 = vload8(0, w + (k + 2) * N), w3 = vload8(0, w + (k + 3) * N);
            c0 += x0.s0 * w0; c1 += x1.s0 * w0; c2 += x2.s0 * w0; c3 += x3.s0 * w0;
            c0 += x0.s1 * w1; c1 += x1.s1 * w1; c2 += x2.s1 * w1; c3 += x3.s1 * w1;
            c0 += x0.s2 * w2; c1 += x1.s2 * w2; c2 += x2.s2 * w2; c3 += x3.s2 * w2;
            c0 += x0.s3 * w3; c1 += x1.s3 * w3; c2 += x2.s3 * w3; c3 += x3.s3 * w3;
        }
        for (; k < K; k++) {
            const float8 wk = vload8(0, w + k * N);
            c0 += a0[k] * wk; c1 += a1[k] * wk; c2 += a2[k] * wk; c3 += a3[k] * wk;
        }
        vstore8(c0, 0, acc[0]);
        vstore8(c1, 0, acc[1]);
        vstore8(c2, 0, acc[2]);
        vstore8(c3, 0, acc[3]);
    } else {
        const int mm = min(FG_TM, M - m0), nn = min(8, N - n0);
        for (int i = 0; i < FG_TM; i++)
            for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
        for (int k = 0; k < K; k++)
            for (int i = 0; i < mm; i++) {
                const float x = (float)A[(m0 + i) * K + k];
                for (int j = 0; j < nn; j++) acc[i][j] += x * (float)W[k * N + n0 + j];
            }
    }
    const int mm = min(FG_TM, M - m0), nn = min(8, N - n0);
    for (int i = 0; i < mm; i++) {
        const int m = m0 + i;
        for (int j = 0; j < nn; j++) {
            const int n = n0 + j;
            float v = acc[i][j];
            if (has_bias) v += (float)bias[n];
            v = KN(fg_act)(v, act);
            if (has_res) v += (float)R[m * N + n];
            KN(fg_store)(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, o, nsplit, m, n, v);
        }
    }
}
