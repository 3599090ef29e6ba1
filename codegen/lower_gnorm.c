/* lower_gnorm.c — o2c.GroupNorm (made by passes/fuse/gnorm.c) -> kernels/gnorm.cl, one launch.
 *
 * Inputs: x [N, C, ...] float32, gamma, beta ([C], or [G] with per_group=1).
 * Attributes: num_groups G, epsilon, activation (0 none, 1 silu), per_group.
 * Kernel variants (lower.h: cg_variant): the CPU class runs gnorm_rows (one work-item per
 * group, contiguous float8 loops, no barriers), or with fewer than GNORM_CPU_ITEMS groups of
 * at least 2*GNORM_CPU_MIN_SPAN elements gnorm_rows_part + gnorm_rows_apply (one item per part
 * of a group: partials, then merge and normalize). The GPU class runs gnorm (one work-group
 * per group), or splits large groups over several work-groups (gn_gpu_parts): gnorm_part
 * writes per-part (mean offset, M2) partials into a scratch buffer, gnorm_apply merges them
 * (Chan) and normalizes.
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
/* CPU class (kernels/gnorm.cl gnorm_rows*): chunk length of the statistics (GN_CHUNK), and the
 * split: groups are cut into parts when fewer than GNORM_CPU_ITEMS work-items would run, parts
 * of at least GNORM_CPU_MIN_SPAN elements. */
#define GNORM_CHUNK 2048
#define GNORM_CPU_ITEMS 16
#define GNORM_CPU_MIN_SPAN 8192

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

/* Arguments C, S, G of the normalizing kernels (after X[, Part], Gamma, Beta, Y). */
static void gn_args_geom(struct cg_ctx *cg, int64_t C, int64_t S, int64_t G)
{
    cg_arg_i32(cg, C);
    cg_arg_i32(cg, S);
    cg_arg_i32(cg, G);
}

/* One launch of gnorm (GPU class) or gnorm_rows (CPU class, which also takes the group count
 * `rows`; rows < 0: not passed): (X, Gamma, Beta, Y, C, S, G, eps, per_group, act[, rows]). */
static void launch_gnorm_whole(struct cg_ctx *cg, const struct ir_graph *g, uint32_t node,
                               const char *kernel, size_t gws, size_t lws, int64_t C, int64_t S,
                               int64_t G, int64_t rows)
{
    const struct ir_node *n = &g->nodes[node];
    const char *sfx = cg_use(cg, "gnorm", IR_F32);
    char kname[64];
    snprintf(kname, sizeof kname, "%s_%s", kernel, sfx);
    cg_launch(cg, node, kname, 1, &gws, &lws);
    cg_arg_buf(cg, n->inputs[0]);
    cg_arg_buf(cg, n->inputs[1]);
    cg_arg_buf(cg, n->inputs[2]);
    cg_arg_buf(cg, n->outputs[0]);
    gn_args_geom(cg, C, S, G);
    cg_arg_f32(cg, ir_attr_float(n, "epsilon", 1e-5f));
    cg_arg_i32(cg, ir_attr_int(n, "per_group", 0));
    cg_arg_i32(cg, ir_attr_int(n, "activation", 0));
    if (rows >= 0) cg_arg_i32(cg, rows);
}

/* CPU class: parts per group (1: gnorm_rows, no split) and their length *span (a multiple of
 * GNORM_CHUNK; every part non-empty). Groups are split only when there are fewer than
 * GNORM_CPU_ITEMS of them and each part keeps at least GNORM_CPU_MIN_SPAN elements. */
static int64_t gn_cpu_parts(int64_t rows, int64_t R, int64_t *span)
{
    int64_t want = (GNORM_CPU_ITEMS + rows - 1) / rows, P = R / GNORM_CPU_MIN_SPAN;
    if (P > want) P = want;
    if (P < 2) {
        *span = R;
        return 1;
    }
    *span = ((R + P - 1) / P + GNORM_CHUNK - 1) / GNORM_CHUNK * GNORM_CHUNK;
    return (R + *span - 1) / *span;
}

/* Work-items per work-group of the CPU kernels (one item per group or part). */
static size_t gn_cpu_lws(int64_t items) { return items >= 64 ? 4 : 1; }

/* Groups of R = (C/G)*S elements in P parts of `span`, two launches: <prefix>part (X, Part, R,
 * P, span[, items]) writes per-part (mean offset, M2) partials into a scratch buffer,
 * <prefix>apply (X, Part, Gamma, Beta, Y, C, S, G, P, span, eps, per_group, act[, items])
 * merges them (Chan) and normalizes. GPU class: prefix "gnorm_", items < 0 (not passed); CPU
 * class: "gnorm_rows_", items = rows*P work-items (see kernels/gnorm.cl). */
static void launch_gnorm_parts(struct cg_ctx *cg, const struct ir_graph *g, uint32_t node,
                               const char *prefix, size_t gws, size_t lws, int64_t rows,
                               int64_t C, int64_t S, int64_t G, int64_t P, int64_t span,
                               int64_t items)
{
    const struct ir_node *n = &g->nodes[node];
    const char *sfx = cg_use(cg, "gnorm", IR_F32);
    uint32_t part = cg_temp(cg, node, IR_F32, rows * P * 2);
    char kname[64];
    snprintf(kname, sizeof kname, "%spart_%s", prefix, sfx);
    cg_launch(cg, node, kname, 1, &gws, &lws);
    cg_arg_buf(cg, n->inputs[0]);
    cg_arg_buf(cg, part);
    cg_arg_i32(cg, (C / G) * S);
    cg_arg_i32(cg, P);
    cg_arg_i32(cg, span);
    if (items >= 0) cg_arg_i32(cg, items);
    snprintf(kname, sizeof kname, "%sapply_%s", prefix, sfx);
    cg_launch(cg, node, kname, 1, &gws, &lws);
    cg_arg_buf(cg, n->inputs[0]);
    cg_arg_buf(cg, part);
    cg_arg_buf(cg, n->inputs[1]);
    cg_arg_buf(cg, n->inputs[2]);
    cg_arg_buf(cg, n->outputs[0]);
    gn_args_geom(cg, C, S, G);
    cg_arg_i32(cg, P);
    cg_arg_i32(cg, span);
    cg_arg_f32(cg, ir_attr_float(n, "epsilon", 1e-5f));
    cg_arg_i32(cg, ir_attr_int(n, "per_group", 0));
    cg_arg_i32(cg, ir_attr_int(n, "activation", 0));
    if (items >= 0) cg_arg_i32(cg, items);
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
    int64_t S = total / (N * C), rows = N * G, R = (C / G) * S, span;
    int64_t P = gn_gpu_parts(rows, R, &span);
    cg_variant(cg, CG_VARIANT_GPU);
    if (P > 1)
        launch_gnorm_parts(cg, g, node, "gnorm_", (size_t)(rows * P * GNORM_GLWS), GNORM_GLWS,
                           rows, C, S, G, P, span, -1);
    else
        launch_gnorm_whole(cg, g, node, "gnorm", (size_t)(rows * GNORM_LWS), GNORM_LWS, C, S, G,
                           -1);
    cg_variant(cg, CG_VARIANT_CPU);
    P = gn_cpu_parts(rows, R, &span);
    const size_t lws = gn_cpu_lws(rows * P), gws = ((size_t)(rows * P) + lws - 1) / lws * lws;
    if (P > 1)
        launch_gnorm_parts(cg, g, node, "gnorm_rows_", gws, lws, rows, C, S, G, P, span, rows * P);
    else launch_gnorm_whole(cg, g, node, "gnorm_rows", gws, lws, C, S, G, rows);
    return true;
}
