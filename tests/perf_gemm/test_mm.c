/* test_mm.c — MatMul / Gemm with two run-time operands (codegen/lower_matmul.c, both kernels of
 * kernels/matmul.cl) through the single-node harness (tests/kernels/harness.h: passes +
 * codegen + runtime vs the reference CPU implementation), on shapes around the 8 x 16 register
 * tile of matmul_t8x16: M, N, K off the tile multiples, exactly one tile, shifted edge tiles,
 * batch broadcasting, Gemm alpha/beta/C, and the shapes that fall back to the naive kernel
 * (M < 8, N < 16, transposed operands).
 * ctest runs it with the cpu class (perf_gemm.matmul) and the gpu class (perf_gemm.matmul_gpu:
 * kernels/gemm_gpu.cl GG_MATMUL_DEFINE for every float32 case).
 * Usage: test_perf_mm [filter] (e.g. small cases on oclgrind).
 * Tolerance: |got - ref| <= 1e-4 + 1e-4 |ref| (fp32 accumulation, values in [-1, 1)).
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define IN_F(c, ...) kt_input(c, IR_F32, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__), NULL, false)

static int fails, runs;
static const char *filter = ""; /* argv[1]: run only the cases whose label contains it */

static void run(struct kt_case *c, const char *label)
{
    if (!strstr(label, filter)) return; /* a skipped case is not freed (manual runs only) */
    runs++;
    fails += kt_run(c, label, 1e-4, 1e-4);
}

int main(int argc, char **argv)
{
    if (argc > 1) filter = argv[1];
    struct kt_case *c;
    c = kt_new("MatMul", 17);
    IN_F(c, 8, 5);
    IN_F(c, 5, 16);
    run(c, "MatMul [8,5]x[5,16] one tile");
    c = kt_new("MatMul", 17);
    IN_F(c, 37, 29);
    IN_F(c, 29, 45);
    run(c, "MatMul [37,29]x[29,45] shifted edge tiles");
    c = kt_new("MatMul", 17);
    IN_F(c, 9, 1);
    IN_F(c, 1, 17);
    run(c, "MatMul [9,1]x[1,17] K=1");
    c = kt_new("MatMul", 17);
    IN_F(c, 3, 21, 64);
    IN_F(c, 3, 64, 50);
    run(c, "MatMul [3,21,64]x[3,64,50] batched");
    c = kt_new("MatMul", 17);
    IN_F(c, 2, 1, 19, 70);
    IN_F(c, 1, 3, 70, 17);
    run(c, "MatMul [2,1,19,70]x[1,3,70,17] two-sided broadcast");
    c = kt_new("MatMul", 17);
    IN_F(c, 2, 8, 4, 33);
    IN_F(c, 33, 77);
    run(c, "MatMul [2,8,4,33]x[33,77] run-time B, folded batch");
    c = kt_new("MatMul", 17);
    IN_F(c, 7, 30);
    IN_F(c, 30, 40);
    run(c, "MatMul [7,30]x[30,40] M < 8 (naive kernel)");
    c = kt_new("MatMul", 17);
    IN_F(c, 40, 30);
    IN_F(c, 30, 15);
    run(c, "MatMul [40,30]x[30,15] N < 16 (naive kernel)");
    c = kt_new("MatMul", 17);
    IN_F(c, 1, 8, 4096, 40);
    IN_F(c, 1, 8, 40, 77);
    run(c, "MatMul [1,8,4096,40]x[1,8,40,77] attention scores");
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            const int64_t M = 19, K = 23, N = 35;
            c = kt_new("Gemm", 13);
            kt_input(c, IR_F32, 2, ta ? DIMS(K, M) : DIMS(M, K), NULL, false);
            kt_input(c, IR_F32, 2, tb ? DIMS(N, K) : DIMS(K, N), NULL, false);
            IN_F(c, M, N);
            kt_attr_int(c, "transA", ta);
            kt_attr_int(c, "transB", tb);
            kt_attr_float(c, "alpha", 0.75f);
            kt_attr_float(c, "beta", -1.5f);
            char label[96];
            snprintf(label, sizeof label, "Gemm [19,23]x[23,35] transA=%d transB=%d alpha beta C[M,N]",
                     ta, tb);
            run(c, label);
        }
    c = kt_new("Gemm", 13);
    IN_F(c, 16, 9);
    IN_F(c, 9, 32);
    IN_F(c, 32);
    kt_attr_float(c, "alpha", 2.0f);
    run(c, "Gemm [16,9]x[9,32] C[N] broadcast");
    c = kt_new("Gemm", 13);
    IN_F(c, 12, 9);
    IN_F(c, 9, 20);
    IN_F(c, 12, 1);
    run(c, "Gemm [12,9]x[9,20] C[M,1] broadcast");
    /* beyond one 64 x 64 x 16 tile of the gpu class in every dim */
    c = kt_new("MatMul", 17);
    IN_F(c, 2, 77, 129);
    IN_F(c, 2, 129, 70);
    run(c, "MatMul [2,77,129]x[2,129,70] several gpu tiles");
    c = kt_new("MatMul", 17);
    IN_F(c, 333);
    IN_F(c, 333, 7);
    run(c, "MatMul [333]x[333,7] 1-D A");
    printf("%d/%d cases passed\n", runs - fails, runs);
    return fails != 0;
}
