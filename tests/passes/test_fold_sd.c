/* test_fold_sd.c — shape arithmetic of the tiny SD exports folds away completely.
 *
 * For each tiny model (UNet, VAE decoder, CLIP text encoder) with its --shape bindings and every
 * fusion disabled: no Shape/Size/ConstantOfShape/Range/EyeLike node survives, no view-only or
 * Identity chain is left producing int64 shape data, and the number of nodes that compute
 * integers at run time is exactly what the model needs (CLIP's ArgMax pooling only).
 * Also checks the verifier after every pass (opt.verify). Label: unit (no OpenCL). */
#include "frontend/onnx_load.h"
#include "passes/passes.h"

#include <stdio.h>
#include <string.h>

static int check(const char *path, const struct pass_shape_binding *b, int nb, int max_int_nodes,
                 int expect_max_nodes)
{
    struct ir_graph *g = onnx_load(path);
    uint32_t before = g->nnodes;
    struct pass_options opt = {.shapes = b, .nshapes = nb, .verify = true, .no_fuse = "all"};
    passes_run(g, &opt);
    int live = 0, shapeops = 0, int_nodes = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        live++;
        if (ir_op_flags(n->op) & IR_F_SHAPEOP) {
            fprintf(stderr, "%s: shape op left: %s '%s'\n", path, ir_op_name(n->op), n->name);
            shapeops++;
        }
        enum ir_dtype t = g->values[n->outputs[0]].dtype;
        if (t == IR_I64 || t == IR_I32) {
            int_nodes++;
            fprintf(stderr, "%s: integer node at run time: %s '%s'\n", path, ir_op_name(n->op), n->name);
        }
    }
    int fail = shapeops != 0 || int_nodes > max_int_nodes || live > expect_max_nodes;
    printf("%s %s: %u nodes imported, %d after folding (limit %d), %d shape ops, %d integer nodes (limit %d)\n",
           fail ? "FAIL" : "ok  ", path, before, live, expect_max_nodes, shapeops, int_nodes, max_int_nodes);
    ir_graph_free(g);
    return fail;
}

int main(void)
{
    const char *root = ONNX2CL_SOURCE_DIR "/models/tiny";
    char p[512];
    int fails = 0;
    struct pass_shape_binding unet[] = {{"sample", 4, {1, 4, 16, 16}},
                                        {"encoder_hidden_states", 3, {1, 77, 32}}};
    snprintf(p, sizeof p, "%s/unet/model.onnx", root);
    fails += check(p, unet, 2, 0, 500);
    struct pass_shape_binding vae[] = {{"latent_sample", 4, {1, 4, 8, 8}}};
    snprintf(p, sizeof p, "%s/vae_decoder/model.onnx", root);
    fails += check(p, vae, 1, 0, 200);
    struct pass_shape_binding clip[] = {{"input_ids", 2, {1, 77}}};
    snprintf(p, sizeof p, "%s/text_encoder/model.onnx", root);
    /* pooled output = hidden[arange(B), argmax(ids)]: ArgMax + its index arithmetic */
    fails += check(p, clip, 1, 4, 90);
    printf("%d passed, %d failed\n", 3 - fails, fails);
    return fails != 0;
}
