/* test_attention_pass.c — shape of the graph after the attention fusion (no OpenCL).
 *
 * Loads a model, runs the whole pipeline (every fusion on) with the given --shape bindings and
 * asserts: the number of o2c.Attention nodes; how many of them are causal / carry a mask input;
 * the number of Softmax nodes left; and, with "absorbed", that no Transpose feeds or consumes
 * an o2c.Attention (the head split/merge transposes were absorbed into strides).
 * Also checks --no-fuse=attention leaves every Softmax in place and no o2c.Attention.
 * Usage: test_attention_pass MODEL.onnx N_ATT N_CAUSAL N_MASK N_SOFTMAX absorbed|kept
 *                            [NAME=d0,d1,...]...
 */
#include "frontend/onnx_load.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_op(const struct ir_graph *g, enum ir_op op)
{
    int n = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) n += !g->nodes[i].dead && g->nodes[i].op == op;
    return n;
}

static struct ir_graph *compile(const char *path, struct pass_shape_binding *sb, int nsb,
                                const char *no_fuse)
{
    struct ir_graph *g = onnx_load(path);
    struct pass_options po = {0};
    po.shapes = sb;
    po.nshapes = nsb;
    po.verify = true;
    po.no_fuse = no_fuse;
    passes_run(g, &po);
    return g;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s MODEL N_ATT N_CAUSAL N_MASK N_SOFTMAX absorbed|kept [NAME=dims]...\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int want_att = atoi(argv[2]), want_causal = atoi(argv[3]), want_mask = atoi(argv[4]);
    int want_sm = atoi(argv[5]);
    bool absorbed = strcmp(argv[6], "absorbed") == 0;
    struct pass_shape_binding sb[8];
    int nsb = 0;
    for (int a = 7; a < argc && nsb < 8; a++) {
        char *eq = strchr(argv[a], '=');
        if (!eq) return 2;
        *eq = 0;
        sb[nsb].input = argv[a];
        sb[nsb].rank = 0;
        for (char *p = eq + 1; *p && sb[nsb].rank < IR_MAX_RANK;) {
            sb[nsb].dims[sb[nsb].rank++] = strtoll(p, &p, 10);
            if (*p == ',') p++;
        }
        nsb++;
    }
    int fail = 0;
    struct ir_graph *g = compile(path, sb, nsb, NULL);
    int natt = 0, ncausal = 0, nmask = 0, ntr = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead || n->op != IR_OP_FUSED_ATTENTION) continue;
        natt++;
        ncausal += ir_attr_int(n, "causal", 0) != 0;
        nmask += ir_input(n, 3) != IR_NONE;
        for (uint32_t k = 0; k < n->ninputs; k++) {
            uint32_t p = n->inputs[k] == IR_NONE ? IR_NONE : g->values[n->inputs[k]].producer;
            if (p != IR_NONE && g->nodes[p].op == IR_OP_TRANSPOSE) ntr++;
        }
        for (uint32_t j = 0; j < g->nnodes; j++) {
            const struct ir_node *c = &g->nodes[j];
            if (c->dead || c->op != IR_OP_TRANSPOSE) continue;
            if (c->inputs[0] == n->outputs[0]) ntr++;
        }
    }
    int nsm = count_op(g, IR_OP_SOFTMAX);
    printf("%s: %d o2c.Attention (%d causal, %d with a mask), %d Softmax left, %d Transposes "
           "next to them\n", path, natt, ncausal, nmask, nsm, ntr);
    if (natt != want_att || ncausal != want_causal || nmask != want_mask || nsm != want_sm) {
        fprintf(stderr, "FAIL: expected %d o2c.Attention (%d causal, %d with a mask), %d Softmax\n",
                want_att, want_causal, want_mask, want_sm);
        fail = 1;
    }
    if (absorbed && ntr != 0) {
        fprintf(stderr, "FAIL: %d Transposes feed or consume an o2c.Attention\n", ntr);
        fail = 1;
    }
    if (!absorbed && natt > 0 && ntr == 0) {
        fprintf(stderr, "FAIL: expected the head transposes to stay (legacy 3-D form)\n");
        fail = 1;
    }
    int sm_before = nsm + natt;
    ir_graph_free(g);
    g = compile(path, sb, nsb, "attention");
    int natt0 = count_op(g, IR_OP_FUSED_ATTENTION), nsm0 = count_op(g, IR_OP_SOFTMAX);
    printf("with --no-fuse=attention: %d o2c.Attention, %d Softmax\n", natt0, nsm0);
    if (natt0 != 0 || nsm0 != sm_before) {
        fprintf(stderr, "FAIL: --no-fuse=attention should leave %d Softmax and no o2c.Attention\n",
                sm_before);
        fail = 1;
    }
    ir_graph_free(g);
    if (!fail) printf("ok\n");
    return fail;
}
