/* api_main.c — uses a generated model through its C API and generated header (no generated
 * main()): the model is tests/bad_input/symbolic.onnx compiled with --name relu:
 * y = Relu(x + b), b = [0.5, -1, 2], x float32 [2,3]. Checks the header's macros against the
 * model's descriptor and every output value exactly (the arithmetic is exact in float32). */
#include "relu.h"

#include <stdio.h>
#include <string.h>

/* The header's signature macros agree with the descriptor the C file carries. */
static int check_header(void)
{
    const struct o2r_model_desc *d = relu_desc();
    const int64_t in_shape[] = RELU_INPUT0_SHAPE, out_shape[] = RELU_OUTPUT0_SHAPE;
    int bad = RELU_NUM_INPUTS != 1 || RELU_NUM_OUTPUTS != 1 || d->n_inputs != RELU_NUM_INPUTS ||
              d->n_outputs != RELU_NUM_OUTPUTS || strcmp(d->inputs[0].name, RELU_INPUT0_NAME) ||
              strcmp(d->outputs[0].name, RELU_OUTPUT0_NAME) || d->inputs[0].dtype != RELU_INPUT0_DTYPE ||
              RELU_INPUT0_DTYPE != O2R_F32 || RELU_OUTPUT0_DTYPE != O2R_F32 ||
              d->inputs[0].rank != RELU_INPUT0_RANK || RELU_INPUT0_RANK != 2 ||
              RELU_OUTPUT0_RANK != 2 || in_shape[0] != 2 || in_shape[1] != 3 ||
              out_shape[0] != 2 || out_shape[1] != 3 || RELU_INPUT0_NUMEL != 6 ||
              RELU_OUTPUT0_BYTES != 24 || d->outputs[0].nbytes != RELU_OUTPUT0_BYTES ||
              strcmp(d->model_hash, RELU_MODEL_SHA256);
    if (bad)
        fprintf(stderr, "relu.h macros disagree with the descriptor\n");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    if (check_header()) return 1;
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
    printf(bad ? "FAIL\n" : "ok: relu.h macros, C API init/run/free, 2 runs, exact values\n");
    return bad;
}
