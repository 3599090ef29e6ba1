/* main.c — example application using a model compiled by onnx2cl_add_model (CMakeLists.txt).
 *
 * Runs the tiny CLIP text encoder on its token ids and compares output 0 (last_hidden_state,
 * float32 [1,77,32]) with the PyTorch reference: |got - ref| <= 1e-4 + 1e-3 |ref| per element.
 * Everything it knows about the model comes from the generated text_encoder.h.
 * Usage: app [WEIGHTS INPUT_IDS.npy REF.npy] (defaults: the paths the build configured).
 * Exit status: 0 match, 1 error or mismatch.
 */
#include "text_encoder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *weights = argc > 3 ? argv[1] : APP_WEIGHTS;
    const char *input = argc > 3 ? argv[2] : APP_INPUT;
    const char *ref_path = argc > 3 ? argv[3] : APP_REF;
    static const int64_t in_shape[] = TEXT_ENCODER_INPUT0_SHAPE;
    char err[1024];
    struct o2r_tensor ids = {0}, ref = {0};
    struct o2r_ctx *ctx = NULL;
    struct o2r_model *m = NULL;
    int status = 1;
    float *out0 = malloc(TEXT_ENCODER_OUTPUT0_BYTES), *out1 = malloc(TEXT_ENCODER_OUTPUT1_BYTES);
    if (!out0 || !out1)
        goto done;
    if (o2r_tensor_read(input, &ids, err, sizeof err) != O2R_OK ||
        o2r_tensor_read(ref_path, &ref, err, sizeof err) != O2R_OK) {
        fprintf(stderr, "app: %s\n", err);
        goto done;
    }
    if (ids.dtype != TEXT_ENCODER_INPUT0_DTYPE || ids.rank != TEXT_ENCODER_INPUT0_RANK ||
        ids.dims[0] != in_shape[0] || ids.dims[1] != in_shape[1] ||
        ref.nbytes != TEXT_ENCODER_OUTPUT0_BYTES || ref.dtype != TEXT_ENCODER_OUTPUT0_DTYPE) {
        fprintf(stderr, "app: %s or %s does not match text_encoder.h (%s: %d-d, %s: %llu bytes)\n",
                input, ref_path, TEXT_ENCODER_INPUT0_NAME, TEXT_ENCODER_INPUT0_RANK,
                TEXT_ENCODER_OUTPUT0_NAME, (unsigned long long)TEXT_ENCODER_OUTPUT0_BYTES);
        goto done;
    }
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "app: %s\n", o2r_ctx_last_error(NULL));
        goto done;
    }
    if (text_encoder_init(ctx, weights, &m) != O2R_OK ||
        text_encoder_run(m, (const void *const[]){ids.data}, (void *const[]){out0, out1}) != O2R_OK) {
        fprintf(stderr, "app: %s\n", o2r_ctx_last_error(ctx));
        goto done;
    }
    const float *r = ref.data;
    double maxabs = 0;
    uint64_t bad = 0;
    for (uint64_t i = 0; i < TEXT_ENCODER_OUTPUT0_NUMEL; i++) {
        double d = fabs((double)out0[i] - r[i]);
        maxabs = d > maxabs ? d : maxabs;
        bad += !(d <= 1e-4 + 1e-3 * fabs(r[i]));
    }
    printf("app: %s %s: %llu values, max abs err %.3g vs PyTorch, %llu outside 1e-4 + 1e-3|ref|\n",
           TEXT_ENCODER_OUTPUT0_NAME, "[1,77,32]", (unsigned long long)TEXT_ENCODER_OUTPUT0_NUMEL,
           maxabs, (unsigned long long)bad);
    status = bad != 0;
done:
    text_encoder_free(m);
    o2r_ctx_free(ctx);
    o2r_tensor_free(&ids);
    o2r_tensor_free(&ref);
    free(out0);
    free(out1);
    return status;
}
