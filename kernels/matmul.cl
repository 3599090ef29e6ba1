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
 * Work: one work-item computes MM_TN consecutive columns n of one row m (gws[0] = ceil(N/MM_TN),
 * gws[1] = M, gws[2] = batch); the K loop accumulates in float (ACC). A naive but correct
 * kernel: each A element loaded once per MM_TN outputs.
 *
 *        n ->  [n0 .. n0+MM_TN)
 *   m  [ A row ] x [ B columns ]  -> MM_TN accumulators
 *
 * Assumes every index fits in int (the lowering checks numel < 2^31).
 */
#ifndef MM_TN
#define MM_TN 4
#endif

__kernel void KN(matmul)(__global const T *A, __global const T *B, __global const T *C,
                         __global T *Y, int M, int N, int K, int a_rs, int a_cs, int b_rs,
                         int b_cs, int bd1, int bd2, int a_s0, int a_s1, int a_s2, int b_s0,
                         int b_s1, int b_s2, float alpha, float beta, int c_rs, int c_cs,
                         int has_c)
{
    const int n0 = (int)get_global_id(0) * MM_TN;
    const int m = (int)get_global_id(1);
    const int b = (int)get_global_id(2);
    if (n0 >= N || m >= M) return;
    const int b2 = b % bd2;
    const int t = b / bd2;
    const int b1 = t % bd1;
    const int b0 = t / bd1;
    const __global T *a = A + (b0 * a_s0 + b1 * a_s1 + b2 * a_s2 + m * a_rs);
    const __global T *bb = B + (b0 * b_s0 + b1 * b_s1 + b2 * b_s2 + n0 * b_cs);
    float acc[MM_TN];
    for (int j = 0; j < MM_TN; j++) acc[j] = 0.0f;
    if (n0 + MM_TN <= N) {
        for (int k = 0; k < K; k++) {
            const float av = (float)a[k * a_cs];
            const __global T *br = bb + k * b_rs;
            for (int j = 0; j < MM_TN; j++) acc[j] += av * (float)br[j * b_cs];
        }
    } else {
        const int nn = N - n0;
        for (int k = 0; k < K; k++) {
            const float av = (float)a[k * a_cs];
            const __global T *br = bb + k * b_rs;
            for (int j = 0; j < nn; j++) acc[j] += av * (float)br[j * b_cs];
        }
    }
    __global T *y = Y + ((b * M + m) * N + n0);
    for (int j = 0; j < MM_TN && n0 + j < N; j++) {
        float v = alpha * acc[j];
        if (has_c) v += beta * (float)C[m * c_rs + (n0 + j) * c_cs];
        y[j] = (T)v;
    }
}
