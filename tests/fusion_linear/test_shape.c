/* test_shape.c — pass-shape assertions of batched_linear / gemm_epilogue / elementwise on the
 * tiny SD exports (no OpenCL). Label: unit.
 *   UNet: one o2c.Gemm with 3 outputs per self-attention (4 transformer blocks: q/k/v), the
 *         8 cross-attention K/V projections of encoder_hidden_states in one 8-output o2c.Gemm
 *         and the 8 ResNet time_emb_proj Gemms of SiLU(temb) in another,
 *         no MatMul/Gemm with a constant weight left, no bias Add left after an o2c.Gemm,
 *         o2c.Elementwise nodes present and each with a program.
 *   CLIP: one 3-output o2c.Gemm per encoder layer (2), no constant-weight linear left.
 *   Every fused node is checked by the verifier (opt.verify). */
#include "frontend/onnx_load.h"
#include "passes/passes.h"

#include <stdio.h>
#include <string.h>

struct counts {
    int gemm_by_outputs[9]; /* o2c.Gemm nodes by number of outputs */
    int const_linear;       /* MatMul/Gemm with a constant weight */
    int elem;               /* o2c.Elementwise */
    int elem_bad;           /* o2c.Elementwise without a program */
    int bias_after_gemm;    /* Add(o2c.Gemm output, constant) left */
    int quick_gelu;         /* o2c.Gemm with the quick-GELU epilogue (activation 7) */
};

static struct counts run(const char *path, const struct pass_shape_binding *b, int nb)
{
    struct counts c;
    memset(&c, 0, sizeof c);
    struct ir_graph *g = onnx_load(path);
    struct pass_options opt = {.shapes = b, .nshapes = nb, .verify = true};
    passes_run(g, &opt);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        if (n->op == IR_OP_FUSED_GEMM && n->noutputs <= 8) c.gemm_by_outputs[n->noutputs]++;
        if (n->op == IR_OP_FUSED_GEMM && ir_attr_int(n, "activation", 0) == 7) c.quick_gelu++;
        if ((n->op == IR_OP_MATMUL || n->op == IR_OP_GEMM) && ir_is_const(g, n->inputs[1]))
            c.const_linear++;
        if (n->op == IR_OP_FUSED_ELEMENTWISE) {
            size_t k = 0;
            c.elem++;
            if (!ir_attr_ints(n, "program", &k) || k == 0 || k % 4) c.elem_bad++;
        }
        if (n->op == IR_OP_ADD) {
            for (int s = 0; s < 2; s++) {
                uint32_t p = g->values[n->inputs[s]].producer;
                if (p != IR_NONE && g->nodes[p].op == IR_OP_FUSED_GEMM &&
                    ir_is_const(g, n->inputs[1 - s]) && g->values[n->inputs[s]].nuses == 1)
                    c.bias_after_gemm++;
            }
        }
    }
    ir_graph_free(g);
    return c;
}

static int expect(const char *what, int got, int want)
{
    printf("%s %s: %d (expected %d)\n", got == want ? "ok  " : "FAIL", what, got, want);
    return got != want;
}

int main(void)
{
    const char *root = ONNX2CL_SOURCE_DIR "/models/tiny";
    char p[512];
    int fails = 0;
    struct pass_shape_binding unet[] = {{"sample", 4, {1, 4, 16, 16}},
                                        {"encoder_hidden_states", 3, {1, 77, 32}}};
    snprintf(p, sizeof p, "%s/unet/model.onnx", root);
    struct counts u = run(p, unet, 2);
    fails += expect("unet: 3-output o2c.Gemm (self-attention q/k/v)", u.gemm_by_outputs[3], 4);
    fails += expect("unet: 8-output o2c.Gemm (cross-attention k/v of the context; the 8 "
                     "time_emb_proj Gemms of SiLU(temb))", u.gemm_by_outputs[8], 2);
    fails += expect("unet: constant-weight MatMul/Gemm left", u.const_linear, 0);
    fails += expect("unet: bias Add left after an o2c.Gemm", u.bias_after_gemm, 0);
    fails += expect("unet: o2c.Elementwise without a program", u.elem_bad, 0);
    /* since the geglu fusion and same-type Cast forwarding, no elementwise chain of the tiny
     * UNet is left outside a GEMM/conv/norm epilogue (the elementwise pass: fusion_linear.elem) */
    fails += expect("unet: o2c.Elementwise (every chain absorbed by other fusions)", u.elem, 0);
    struct pass_shape_binding clip[] = {{"input_ids", 2, {1, 77}}};
    snprintf(p, sizeof p, "%s/text_encoder/model.onnx", root);
    struct counts t = run(p, clip, 1);
    fails += expect("clip: 3-output o2c.Gemm (q/k/v per layer)", t.gemm_by_outputs[3], 2);
    fails += expect("clip: constant-weight MatMul/Gemm left", t.const_linear, 0);
    fails += expect("clip: o2c.Gemm with the quick-GELU epilogue (fc1 of the 2 MLPs)", t.quick_gelu, 2);
    fails += expect("clip: o2c.Elementwise (quick GELU is in the GEMM epilogue)", t.elem, 0);
    fails += expect("clip: bias Add left after an o2c.Gemm", t.bias_after_gemm, 0);
    printf("%d failed\n", fails);
    return fails != 0;
}
