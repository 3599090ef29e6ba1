/* lower_fgemm.c — o2c.Gemm (made by passes/fuse_batched_linear.c and fuse_gemm_epilogue.c)
 * -> kernels/fgemm.cl, one launch per node.
 *
 * Node form (ops.def): inputs a [.., K] (dense; every leading dim folds into M = numel(a)/K),
 * w [K, N] constant (N = sum of the outputs' last dims), optional bias [N], optional residual
 * (same dims as the single output); attribute "activation" (0 none, 1 relu, 2 silu, 3 gelu erf,
 * 4 gelu tanh); outputs y_s [.., N_s] with numel M * N_s, written as column splits of the
 * [M, N] product in output order.
 * Assumes: the pass checked shapes; float32 only.
 * Guarantees: fatal (ir_fatal_node) naming the node for anything inconsistent (more than 8
 * outputs, wrong dims, other dtypes, >= 2^31 elements); never a wrong launch.
 */
#include "codegen/lower.h"

#include <stdio.h>

#define FG_MAX_SPLITS 8 /* output buffers the kernel takes (kernels/fgemm.cl) */
#define FG_TM 4         /* rows per work-item (kernels/fgemm.cl FG_TM) */
#define FG_TN 8         /* columns per work-item */

static void need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "o2c.Gemm: tensor '%s' has %lld elements; the kernel indexes with "
                      "32-bit ints", g->values[v].name, (long long)e);
}

bool lower_fgemm(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t a = n->inputs[0], w = n->inputs[1];
    const uint32_t bias = ir_input(n, 2), res = ir_input(n, 3);
    const struct ir_value *wv = &g->values[w];
    if (wv->rank != 2)
        ir_fatal_node(g, n, "o2c.Gemm: weight '%s' has rank %d (must be [K, N])", wv->name,
                      wv->rank);
    const int64_t K = wv->dims[0], N = wv->dims[1];
    if (n->noutputs < 1 || n->noutputs > FG_MAX_SPLITS)
        ir_fatal_node(g, n, "o2c.Gemm: %u outputs (1..%d supported)", n->noutputs, FG_MAX_SPLITS);
    const uint32_t vals[4] = {a, w, bias, res};
    for (int i = 0; i < 4; i++) {
        if (vals[i] == IR_NONE) continue;
        if (g->values[vals[i]].dtype != IR_F32)
            ir_fatal_node(g, n, "o2c.Gemm: input '%s' is %s (float32 only)", g->values[vals[i]].name,
                          ir_dtype_name(g->values[vals[i]].dtype));
        need_i32(g, n, vals[i]);
    }
    const int64_t na = ir_numel(g, a);
    if (K <= 0 || na % K != 0 || g->values[a].dims[g->values[a].rank - 1] != K)
        ir_fatal_node(g, n, "o2c.Gemm: input '%s' does not end in K=%lld", g->values[a].name,
                      (long long)K);
    const int64_t M = na / K;
    int64_t off[FG_MAX_SPLITS + 1] = {0};
    for (uint32_t s = 0; s < n->noutputs; s++) {
        const struct ir_value *yv = &g->values[n->outputs[s]];
        if (yv->dtype != IR_F32)
            ir_fatal_node(g, n, "o2c.Gemm: output '%s' is %s (float32 only)", yv->name,
                          ir_dtype_name(yv->dtype));
        need_i32(g, n, n->outputs[s]);
        const int64_t ns = yv->rank >= 1 ? yv->dims[yv->rank - 1] : 1;
        if (ir_numel(g, n->outputs[s]) != M * ns)
            ir_fatal_node(g, n, "o2c.Gemm: output '%s' is not [M=%lld, %lld]", yv->name,
                          (long long)M, (long long)ns);
        off[s + 1] = off[s] + ns;
    }
    if (off[n->noutputs] != N)
        ir_fatal_node(g, n, "o2c.Gemm: output widths sum to %lld but the weight has N=%lld",
                      (long long)off[n->noutputs], (long long)N);
    if (bias != IR_NONE && ir_numel(g, bias) != N)
        ir_fatal_node(g, n, "o2c.Gemm: bias '%s' is not [N=%lld]", g->values[bias].name,
                      (long long)N);
    if (res != IR_NONE && (n->noutputs != 1 || ir_numel(g, res) != M * N))
        ir_fatal_node(g, n, "o2c.Gemm: residual '%s' needs one output of [M, N]",
                      g->values[res].name);
    const int64_t act = ir_attr_int(n, "activation", 0);
    if (act < 0 || act > 4)
        ir_fatal_node(g, n, "o2c.Gemm: activation=%lld (0..4)", (long long)act);
    if (M == 0 || N == 0) return true;
    const char *sfx = cg_use(cg, "fgemm", IR_F32);
    char kname[64];
    snprintf(kname, sizeof kname, "fgemm_%s", sfx);
    const size_t gws[2] = {(size_t)((N + FG_TN - 1) / FG_TN), (size_t)((M + FG_TM - 1) / FG_TM)};
    cg_launch(cg, node, kname, 2, gws, NULL);
    cg_arg_buf(cg, a);
    cg_arg_buf(cg, w);
    cg_arg_buf(cg, bias != IR_NONE ? bias : w); /* placeholders are never read */
    cg_arg_buf(cg, res != IR_NONE ? res : a);
    for (uint32_t s = 0; s < FG_MAX_SPLITS; s++)
        cg_arg_buf(cg, n->outputs[s < n->noutputs ? s : 0]);
    cg_arg_i32(cg, M);
    cg_arg_i32(cg, N);
    cg_arg_i32(cg, K);
    cg_arg_i32(cg, bias != IR_NONE);
    cg_arg_i32(cg, act);
    cg_arg_i32(cg, res != IR_NONE);
    cg_arg_i32(cg, n->noutputs);
    for (uint32_t s = 1; s < FG_MAX_SPLITS; s++) cg_arg_i32(cg, s < n->noutputs ? off[s] : N);
    return true;
}
