/* api_main.c — uses a generated model through its C API (no generated main()): the model is
 * tests/bad_input/symbolic.onnx compiled with --name relu: y = Relu(x + b), b = [0.5, -1, 2],
 * x float32 [2,3]. Checks every output value exactly (the arithmetic is exact in float32). */
#include "onnx2cl_rt.h"

#include <stdio.h>

o2r_status relu_init(struct o2r_ctx *ctx, const char *weights_path, struct o2r_model **m);
o2r_status relu_run(struct o2r_model *m, const void *const *inputs, void *const *outputs);
void relu_free(struct o2r_model *m);

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "context: %s\n", o2r_ctx_last_error(NULL));
        return 1;
    }
    if (relu_init(ctx, argv[1], &m) != O2R_OK) {
        fprintf(stderr, "init: %s\n", o2r_ctx_last_error(ctx));
        return 1;
    }
    const float x[6] = {-1, 0, -3, 2, 1.5f, -2.5f}, b[3] = {0.5f, -1, 2};
    float y[6];
    int bad = 0;
    for (int rep = 0; rep < 2; rep++) { /* twice: the arena is reused between runs */
        if (relu_run(m, (const void *const[]){x}, (void *const[]){y}) != O2R_OK) {
            fprintf(stderr, "run: %s\n", o2r_ctx_last_error(ctx));
            return 1;
        }
        for (int i = 0; i < 6; i++) {
            float e = x[i] + b[i % 3] > 0 ? x[i] + b[i % 3] : 0;
            if (y[i] != e) {
                fprintf(stderr, "y[%d] = %g, expected %g\n", i, y[i], e);
                bad = 1;
            }
        }
    }
    relu_free(m);
    o2r_ctx_free(ctx);
    printf(bad ? "FAIL\n" : "ok: C API init/run/free, 2 runs, exact values\n");
    return bad;
}
