/* lower_gnorm.c — o2c.GroupNorm (made by passes/fuse_gnorm.c) -> kernels/gnorm.cl, one launch.
 *
 * Inputs: x [N, C, ...] float32, gamma, beta ([C], or [G] with per_group=1).
 * Attributes: num_groups G, epsilon, activation (0 none, 1 silu), per_group.
 * Assumes: the fusion pass checked shapes; this re-checks what the kernel relies on.
 * Guarantees: fatal (ir_fatal_node) for other dtypes, G not dividing C, wrong gamma/beta sizes,
 * an unknown activation, or tensors of >= 2^31 elements (the kernel indexes with int).
 */
#include "codegen/lower.h"

#include <stdio.h>

/* Work-group size of gnorm (GN_LWS in kernels/gnorm.cl). */
#define GNORM_LWS 128

bool lower_gnorm(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (n->op != IR_OP_FUSED_GROUP_NORM) return false;
    uint32_t x = n->inputs[0], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x];
    enum ir_dtype t = g->values[y].dtype;
    if (t != IR_F32 || xv->dtype != IR_F32)
        ir_fatal_node(g, n, "o2c.GroupNorm on %s is not supported (float32 only)", ir_dtype_name(t));
    if (xv->rank < 2)
        ir_fatal_node(g, n, "o2c.GroupNorm input '%s' must have rank >= 2, got %d", xv->name,
                      xv->rank);
    int64_t total = ir_numel(g, x);
    if (total >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "o2c.GroupNorm: tensor '%s' has %lld elements; the kernel indexes "
                      "with 32-bit ints (at most 2^31-1 elements)",
                      xv->name, (long long)total);
    int64_t N = xv->dims[0], C = xv->dims[1], G = ir_attr_int(n, "num_groups", 0);
    if (G <= 0 || C % G)
        ir_fatal_node(g, n, "o2c.GroupNorm num_groups=%lld does not divide C=%lld", (long long)G,
                      (long long)C);
    int64_t per_group = ir_attr_int(n, "per_group", 0), act = ir_attr_int(n, "activation", 0);
    int64_t want = per_group ? G : C;
    if (ir_numel(g, n->inputs[1]) != want || ir_numel(g, n->inputs[2]) != want)
        ir_fatal_node(g, n, "o2c.GroupNorm gamma/beta must have %lld elements", (long long)want);
    if (act != 0 && act != 1)
        ir_fatal_node(g, n, "o2c.GroupNorm activation=%lld is not supported (0 none, 1 silu)",
                      (long long)act);
    if (total == 0) return true;
    const char *sfx = cg_use(cg, "gnorm", t);
    char kname[64];
    snprintf(kname, sizeof kname, "gnorm_%s", sfx);
    size_t gws[1] = {(size_t)(N * G * GNORM_LWS)}, lws[1] = {GNORM_LWS};
    cg_launch(cg, node, kname, 1, gws, lws);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, n->inputs[1]);
    cg_arg_buf(cg, n->inputs[2]);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, C);
    cg_arg_i32(cg, total / (N * C));
    cg_arg_i32(cg, G);
    cg_arg_f32(cg, ir_attr_float(n, "epsilon", 1e-5f));
    cg_arg_i32(cg, per_group);
    cg_arg_i32(cg, act);
    return true;
}
