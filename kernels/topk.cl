/* topk.cl — TopK-1/10/11 (ops.def "topk"): the k first elements of every line along an axis.
 *   topk(X, V, I, R, inner, K, largest, n): X dense [outer, R, inner]; V (T) and I (long) dense
 *   [outer, K, inner]. One work-item per input element (gws[0] = n = outer*R*inner): its rank
 *   in the line = how many elements come before it (larger, or smaller when !largest; equal
 *   values by lower index, NaN above every number), found by a scan of the line (O(R) each,
 *   stopping once the rank reaches K); an element of rank < K is written at that rank. The order
 *   is onnxruntime's (sorted; ties by lower index); sorted=0 gets the same order, which the spec
 *   allows. Instantiated for f32, f64 (with cl_khr_fp64) and the integer types.
 */
#if O2C_TID == O2C_ID_f64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef O2C_TOPK_DEFS
#define O2C_TOPK_DEFS
/* key order: 1 if a comes after b in "largest first" order by value alone, -1 before, 0 equal */
#define TK_CMP_INT(a, b) (((a) > (b)) - ((a) < (b)))
#define TK_CMP_FLT(a, b) (isnan(a) || isnan(b) ? (int)isnan(a) - (int)isnan(b) : ((a) > (b)) - ((a) < (b)))
#endif
#if O2C_T_FLOAT
#define TK_CMP TK_CMP_FLT
#else
#define TK_CMP TK_CMP_INT
#endif

__kernel void KN(topk)(__global const T *X, __global T *V, __global long *I, int R, int inner, int K,
                       int largest, int n)
{
    const int g = (int)get_global_id(0);
    if (g >= n) return;
    const int o = g / (R * inner), rem = g % (R * inner), a = rem / inner, i = rem % inner;
    const __global T *x = X + o * R * inner + i;
    const T v = x[a * inner];
    const int sgn = largest ? 1 : -1;
    int rank = 0;
    for (int j = 0; j < R && rank < K; j++) {
        const int c = sgn * TK_CMP(x[j * inner], v);
        rank += c > 0 || (c == 0 && j < a);
    }
    if (rank >= K) return;
    const int dst = (o * K + rank) * inner + i;
    V[dst] = v;
    I[dst] = (long)a;
}
#undef TK_CMP
