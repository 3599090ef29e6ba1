/* lower_gnorm.c — o2c.GroupNorm (made by passes/fuse/gnorm.c) -> kernels/gnorm.cl, one launch.
 *
 * Inputs: x [N, C, ...] float32, gamma, beta ([C], or [G] with per_group=1).
 * Attributes: num_groups G, epsilon, activation (0 none, 1 silu), per_group.
 * Kernel variants (lower.h: cg_variant): the CPU class always runs gnorm (one work-group per
 * group). The GPU class splits large groups over several work-groups (gn_gpu_parts): gnorm_part
 * writes per-part (mean offset, M2) partials into a scratch buffer, gnorm_apply merges them
 * (Chan) and normalizes; small groups keep gnorm, then one launch serves both classes.
 * Assumes: the fusion pass checked shapes; this re-checks what the kernel relies on.
 * Guarantees: fatal (ir_fatal_node) for other dtypes, G not dividing C, wrong gamma/beta sizes,
 * an unknown activation, or tensors of >= 2^31 elements (the kernel indexes with int).
 */
#include "codegen/lower.h"

#include <stdio.h>

/* Work-group sizes of gnorm (GN_LWS) and of gnorm_part / gnorm_apply (GN_GLWS, which also
 * bounds the number of parts per group) in kernels/gnorm.cl. */
#define GNORM_LWS 128
#define GNORM_GLWS 256
/* GPU split: at least this many elements per part, and enough parts for about this many
 * work-groups in all (a GPU has 20-150 compute units, each wanting several work-groups). */
#define GNORM_MIN_SPAN 2048
#define GNORM_GPU_WGS 1024

/* Parts per group for the GPU class (1: no split) and their length *span (a multiple of 64;
 * every part non-empty). rows = N*G groups of R elements. */
static int64_t gn_gpu_parts(int64_t rows, int64_t R, int64_t *span)
{
    int64_t P = R / GNORM_MIN_SPAN, want = (GNORM_GPU_WGS + rows - 1) / rows;
    if (P > want) P = want;
    if (P > GNORM_GLWS) P = GNORM_GLWS;
    if (P < 2) {
        *span = R;
        return 1;
    }
    *span = ((R + P - 1) / P + 63) / 64 * 64;
    return (R + *span - 1) / *span;
}

/* The GPU class's two launches for groups of R elements in P parts (see kernels/gnorm.cl). */
static void launch_gnorm_split(struct cg_ctx *cg, const struct ir_graph *g, uint32_t node,
                               int64_t rows, int64_t C, int64_t S, int64_t G, int64_t P,
                               int64_t span)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], gamma = n->inputs[1], beta = n->inputs[2], y = n->outputs[0];
    float eps = ir_attr_float(n, "epsilon", 1e-5f);
    int64_t per_group = ir_attr_int(n, "per_group", 0), act = ir_attr_int(n, "activation", 0);
    const char *sfx = cg_use(cg, "gnorm", IR_F32);
    uint32_t part = cg_temp(cg, node, IR_F32, rows * P * 2);
    char kname[64];
    size_t gws[1] = {(size_t)(rows * P * GNORM_GLWS)}, lws[1] = {GNORM_GLWS};
    snprintf(kname, sizeof kname, "gnorm_part_%s", sfx);
    cg_launch(cg, node, kname, 1, gws, lws);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, part);
    cg_arg_i32(cg, (C / G) * S);
    cg_arg_i32(cg, P);
    cg_arg_i32(cg, span);
    snprintf(kname, sizeof kname, "gnorm_apply_%s", sfx);
    cg_launch(cg, node, kname, 1, gws, lws);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, part);
    cg_arg_buf(cg, gamma);
    cg_arg_buf(cg, beta);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, C);
    cg_arg_i32(cg, S);
    cg_arg_i32(cg, G);
    cg_arg_i32(cg, P);
    cg_arg_i32(cg, span);
    cg_arg_f32(cg, eps);
    cg_arg_i32(cg, per_group);
    cg_arg_i32(cg, act);
}

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
    int64_t S = total / (N * C), span, P = gn_gpu_parts(N * G, (C / G) * S, &span);
    if (P > 1) {
        cg_variant(cg, CG_VARIANT_GPU);
        launch_gnorm_split(cg, g, node, N * G, C, S, G, P, span);
        cg_variant(cg, CG_VARIANT_CPU);
    }
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
    cg_arg_i32(cg, S);
    cg_arg_i32(cg, G);
    cg_arg_f32(cg, ir_attr_float(n, "epsilon", 1e-5f));
    cg_arg_i32(cg, per_group);
    cg_arg_i32(cg, act);
    return true;
}
