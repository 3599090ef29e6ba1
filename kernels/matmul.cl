/* matmul.cl — batched, strided GEMM for MatMul and Gemm (ONNX MatMul-13, Gemm-13).
 *
 *   Y[b, m, n] = alpha * sum_k A(b, m, k) * B(b, k, n)  +  beta * C(m, n)      (C optional)
 *
 * Layout: A(b, m, k) = A[a_off(b) + m*a_rs + k*a_cs], B(b, k, n) = B[b_off(b) + k*b_rs + n*b_cs],
 * so transposed operands (Gemm transA/transB) and 1-D MatMul operands are just strides.
 * Batch: the output batch index b (0 .. gws[2]-1) is split into up to 3 dims (bd0, bd1, bd2),
 * b = (b0*bd1 + b1)*bd2 + b2; a_off = b0*a_s0 + b1*a_s1 + b2*a_s2 (stride 0 = broadcast), same for B.
 * C(m, n) = C[m*c_rs + n*c_cs] (stride 0 = broadcast), used only when has_c != 0.
 * Y is dense row-major [batch, M, N].
 *
 * Work: one work-item computes MM_TM consecutive rows m of one column n (gws[0] = N,
 * gws[1] = ceil(M/MM_TM), gws[2] = batch): neighbouring work-items read neighbouring B columns
 * (contiguous when b_cs == 1, which vectorizes across work-items on PoCL) and share the A
 * rows; the K loop accumulates in MMACC (float; double for T = double). Naive but correct;
 * each B element feeds MM_TM multiply-adds.
 *
 *        n (one per work-item)
 *   rows [m0 .. m0+MM_TM) of A  x  column n of B  -> MM_TM accumulators
 *
 * Assumes every index fits in int (the lowering checks numel < 2^31).
 */
#ifndef MM_TM
#define MM_TM 4
#endif
/* MMACC: accumulator type, double for T = double (ONNX MatMul on float64 keeps its precision),
 * float otherwise. #undef'd at the end of the file (included once per dtype). */
#if O2C_TID == O2C_ID_f64
#define MMACC double
#else
#define MMACC float
#endif

__kernel void KN(matmul)(__global const T *A, __global const T *B, __global const T *C,
                         __global T *Y, int M, int N, int K, int a_rs, int a_cs, int b_rs,
                         int b_cs, int bd1, int bd2, int a_s0, int a_s1, int a_s2, int b_s0,
                         int b_s1, int b_s2, float alpha, float beta, int c_rs, int c_cs,
                         int has_c)
{
    const int n = (int)get_global_id(0);
    const int m0 = (int)get_global_id(1) * MM_TM;
    const int b = (int)get_global_id(2);
    if (n >= N || m0 >= M) return;
    const int b2 = b % bd2;
    const int t = b / bd2;
    const int b1 = t % bd1;
    const int b0 = t / bd1;
    const __global T *a = A + (b0 * a_s0 + b1 * a_s1 + b2 * a_s2 + m0 * a_rs);
    const __global T *bb = B + (b0 * b_s0 + b1 * b_s1 + b2 * b_s2 + n * b_cs);
    MMACC acc[MM_TM];
    for (int i = 0; i < MM_TM; i++) acc[i] = 0.0f;
    if (m0 + MM_TM <= M) {
        for (int k = 0; k < K; k++) {
            const MMACC bv = (MMACC)bb[k * b_rs];
            const __global T *ak = a + k * a_cs;
            for (int i = 0; i < MM_TM; i++) acc[i] += (MMACC)ak[i * a_rs] * bv;
        }
    } else {
        const int mm = M - m0;
        for (int k = 0; k < K; k++) {
            const MMACC bv = (MMACC)bb[k * b_rs];
            const __global T *ak = a + k * a_cs;
            for (int i = 0; i < mm; i++) acc[i] += (MMACC)ak[i * a_rs] * bv;
        }
    }
    for (int i = 0; i < MM_TM && m0 + i < M; i++) {
        MMACC v = alpha * acc[i];
        if (has_c) v += beta * (MMACC)C[(m0 + i) * c_rs + n * c_cs];
        Y[(b * M + m0 + i) * N + n] = (T)v;
    }
}

/* matmul_t8x16 — the same product, register-tiled, for operands whose k (A) and n (B) axes are
 * contiguous (a_cs == 1, b_cs == 1) and M >= 8, N >= 16 (the lowering checks; other shapes use
 * matmul above). One work-item computes 8 rows x 16 columns: per k one vload16 of B's row k
 * (contiguous columns) and 8 broadcasts of A[m, k], 8 float16 fused multiply-adds.
 * gws[0] = ceil(N/16), gws[1] = ceil(M/8), gws[2] = batch; arguments as matmul.
 * Edge tiles are shifted inside the matrix (first row min(m0, M-8), first column
 * min(n0, N-16)); they recompute some of their neighbour's elements and store only their own.
 * Accumulation in float, increasing k, fused multiply-adds (T = float only: compiled for f32). */
#if O2C_TID == O2C_ID_f32
__kernel void KN(matmul_t8x16)(__global const T *A, __global const T *B, __global const T *C,
                               __global T *Y, int M, int N, int K, int a_rs, int a_cs, int b_rs,
                               int b_cs, int bd1, int bd2, int a_s0, int a_s1, int a_s2,
                               int b_s0, int b_s1, int b_s2, float alpha, float beta, int c_rs,
                               int c_cs, int has_c)
{
    const int nb = (int)get_global_id(0) * 16;
    const int mb = (int)get_global_id(1) * 8;
    const int b = (int)get_global_id(2);
    if (nb >= N || mb >= M) return;
    const int n0 = min(nb, N - 16), m0 = min(mb, M - 8);
    const int b2 = b % bd2;
    const int t = b / bd2;
    const int b1 = t % bd1;
    const int b0 = t / bd1;
    const __global T *a = A + (b0 * a_s0 + b1 * a_s1 + b2 * a_s2 + m0 * a_rs);
    const __global T *bb = B + (b0 * b_s0 + b1 * b_s1 + b2 * b_s2 + n0);
    float16 c0 = (float16)(0.0f), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    for (int k = 0; k < K; k++) {
        const float16 w = vload16(0, bb + k * b_rs);
        const __global T *ak = a + k;
        c0 = fma((float16)(ak[0]), w, c0);
        c1 = fma((float16)(ak[a_rs]), w, c1);
        c2 = fma((float16)(ak[2 * a_rs]), w, c2);
        c3 = fma((float16)(ak[3 * a_rs]), w, c3);
        c4 = fma((float16)(ak[4 * a_rs]), w, c4);
        c5 = fma((float16)(ak[5 * a_rs]), w, c5);
        c6 = fma((float16)(ak[6 * a_rs]), w, c6);
        c7 = fma((float16)(ak[7 * a_rs]), w, c7);
    }
    float acc[8][16];
    vstore16(c0, 0, acc[0]);
    vstore16(c1, 0, acc[1]);
    vstore16(c2, 0, acc[2]);
    vstore16(c3, 0, acc[3]);
    vstore16(c4, 0, acc[4]);
    vstore16(c5, 0, acc[5]);
    vstore16(c6, 0, acc[6]);
    vstore16(c7, 0, acc[7]);
    for (int i = mb - m0; i < 8; i++)
        for (int j = nb - n0; j < 16; j++) {
            const int m = m0 + i, n = n0 + j;
            float v = alpha * acc[i][j];
            if (has_c) v += beta * (float)C[m * c_rs + n * c_cs];
            Y[(b * M + m) * N + n] = (T)v;
        }
}
#endif
#undef MMACC
