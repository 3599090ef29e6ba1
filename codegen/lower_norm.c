/* lower_norm.c — InstanceNormalization-6, GroupNormalization-18/21, LayerNormalization-17,
 * BatchNormalization-15 (inference), o2c.RMSNorm (passes/fuse/rmsnorm.c) -> kernels/norm.cl.
 *
 * Instance/Group/LayerNorm all become row kernels: contiguous rows of R elements, per-row mean and
 * biased variance (two passes, fp32), then an affine transform whose parameter index is
 * a = (row % rmod) * rmul + (j / jdiv) % jmod (see kernels/norm.cl for the mapping per op).
 * GroupNormalization: IR form is the opset-21 per-channel scale/bias [C]; with the int
 * attribute "_per_group"=1 they are per group [G] (opset 18) — both are handled.
 * LayerNormalization: outputs Mean / InvStdDev (float32 stash type) are written when used;
 * scale (and bias) must broadcast as a trailing suffix of the normalized dims (leading 1s
 * allowed).
 * o2c.RMSNorm: LayerNorm's rows and scale rules, kernel argument center = 0 (no mean).
 * BatchNormalization: inference form only (training_mode=0, outputs 1.. unused).
 * Kernel variants (lower.h: cg_variant): Instance/Group/LayerNorm/RMSNorm rows run
 * norm_rows_short (one work-item per row, float4 loads) in the CPU class and norm_rows_team (a
 * team of 32..256 work-items per row, several rows per work-group of 256) in the GPU class;
 * BatchNormalization has one kernel for both.
 * Assumes: shape inference ran. float32 only for now.
 * Guarantees: fatal (ir_fatal_node) for anything else, naming op, attribute and value.
 */
#include "codegen/lower.h"

#include <stdio.h>

/* Work-group size of norm_rows_team (NM_GLWS in kernels/norm.cl); norm_rows_short's largest
 * work-group and the fewest work-groups it aims for (emit_rows_short). */
#define NORM_GLWS 256
#define NORM_SLWS 16
#define NORM_SWGS 64

static void need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "%s: tensor '%s' has %lld elements; the kernels index with 32-bit "
                      "ints (at most 2^31-1 elements)",
                      ir_op_name(n->op), g->values[v].name, (long long)e);
}

/* Parameters of one row-kernel launch. */
struct rows_params {
    int64_t rows, R;               /* row count and row length */
    int64_t rmod, rmul, jdiv, jmod; /* affine index mapping */
    float eps;                     /* epsilon */
    uint32_t scale, bias;          /* value ids (bias may be IR_NONE) */
    bool rms;                      /* o2c.RMSNorm: no mean subtraction (kernel arg center = 0) */
};

/* The arguments that norm_rows_short and norm_rows_team share, in order. */
static void rows_args(struct cg_ctx *cg, uint32_t x, uint32_t y, const struct rows_params *p)
{
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, p->scale);
    cg_arg_buf(cg, p->bias != IR_NONE ? p->bias : p->scale); /* dummy: has_bias = 0 */
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, p->R);
    cg_arg_f32(cg, p->eps);
    cg_arg_i32(cg, p->rmod);
    cg_arg_i32(cg, p->rmul);
    cg_arg_i32(cg, p->jdiv);
    cg_arg_i32(cg, p->jmod);
    cg_arg_i32(cg, p->bias != IR_NONE);
    cg_arg_i32(cg, !p->rms);
}

/* The GPU class's norm_rows_team launch: a team of tw work-items per row, tw the power of 2 in
 * [32, NORM_GLWS] nearest above R/16 (about 16 elements per item: LayerNorm rows of 320 get 32
 * items, 1280 get 128, long rows a whole work-group). */
static void emit_rows_team(struct cg_ctx *cg, uint32_t node, uint32_t x, uint32_t y,
                           enum ir_dtype t, const struct rows_params *p, uint32_t mean,
                           uint32_t invstd)
{
    int64_t tw = 32;
    while (tw < NORM_GLWS && tw * 16 < p->R) tw *= 2;
    int64_t per_wg = NORM_GLWS / tw;
    const char *sfx = cg_use(cg, "norm", t);
    char kname[64];
    snprintf(kname, sizeof kname, "norm_rows_team_%s", sfx);
    size_t gws[1] = {(size_t)((p->rows + per_wg - 1) / per_wg * NORM_GLWS)}, lws[1] = {NORM_GLWS};
    cg_launch(cg, node, kname, 1, gws, lws);
    rows_args(cg, x, y, p);
    cg_arg_i32(cg, p->rows);
    cg_arg_i32(cg, tw);
    cg_arg_i32(cg, mean != IR_NONE);
    cg_arg_buf(cg, mean != IR_NONE ? mean : p->scale); /* dummies: has_stats = 0 */
    cg_arg_buf(cg, invstd != IR_NONE ? invstd : p->scale);
}

/* The CPU class's norm_rows_short launch: one work-item per row, lws rows per work-group:
 * NORM_SLWS, or less so that there are at least NORM_SWGS work-groups for the device's cores
 * (1 at fewest). lws barely matters on PoCL (1..64 within noise on 2 cores). */
static void emit_rows_short(struct cg_ctx *cg, uint32_t node, uint32_t x, uint32_t y,
                            enum ir_dtype t, const struct rows_params *p, uint32_t mean,
                            uint32_t invstd)
{
    int64_t l = NORM_SLWS;
    while (l > 1 && p->rows < l * NORM_SWGS) l /= 2;
    const char *sfx = cg_use(cg, "norm", t);
    char kname[64];
    snprintf(kname, sizeof kname, "norm_rows_short_%s", sfx);
    size_t gws[1] = {(size_t)((p->rows + l - 1) / l * l)}, lws[1] = {(size_t)l};
    cg_launch(cg, node, kname, 1, gws, lws);
    rows_args(cg, x, y, p);
    cg_arg_i32(cg, p->rows);
    cg_arg_i32(cg, mean != IR_NONE);
    cg_arg_buf(cg, mean != IR_NONE ? mean : p->scale); /* dummies: has_stats = 0 */
    cg_arg_buf(cg, invstd != IR_NONE ? invstd : p->scale);
}

/* mean/invstd: value ids of the optional per-row statistics outputs (IR_NONE: not wanted;
 * both or neither). Emits the GPU class's norm_rows_team and the CPU class's norm_rows_short
 * for every row length: on PoCL it beat a work-group of 128 per row (the former CPU kernel)
 * and the team kernel at every R measured (LayerNorm, --profile device time, loaded 2-core
 * machine: [77,64] 0.09 -> 0.01 ms, [4096,64] 4-22 -> 0.7 ms, [4096,1024] 72-95 -> 15-26 ms,
 * [32,262144] 340-370 -> 45 ms, [1,4M] 240 -> 16-31 ms), so there is no row-length threshold
 * in the CPU class. */
static void emit_rows(struct cg_ctx *cg, uint32_t node, uint32_t x, uint32_t y, enum ir_dtype t,
                      const struct rows_params *p, uint32_t mean, uint32_t invstd)
{
    if (p->rows == 0 || p->R == 0) return;
    cg_variant(cg, CG_VARIANT_GPU);
    emit_rows_team(cg, node, x, y, t, p, mean, invstd);
    cg_variant(cg, CG_VARIANT_CPU);
    emit_rows_short(cg, node, x, y, t, p, mean, invstd);
}

/* True if output k of n exists and is read by something. */
static bool output_used(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    return k < n->noutputs && n->outputs[k] != IR_NONE && g->values[n->outputs[k]].nuses > 0;
}

/* Number of elements of v after dropping leading 1s, and whether its remaining dims equal the
 * trailing dims of x's dims[axis:]. */
static bool suffix_of(const struct ir_value *v, const struct ir_value *xv, int axis, int64_t *numel)
{
    int lead = 0;
    while (lead < v->rank && v->dims[lead] == 1) lead++;
    int r = v->rank - lead;
    int64_t e = 1;
    for (int k = lead; k < v->rank; k++) e *= v->dims[k];
    *numel = e;
    if (r > xv->rank - axis) return false;
    for (int k = 0; k < r; k++)
        if (v->dims[v->rank - 1 - k] != xv->dims[xv->rank - 1 - k]) return false;
    return true;
}

bool lower_norm(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], y = n->outputs[0];
    enum ir_dtype t = g->values[y].dtype;
    if (t != IR_F32)
        ir_fatal_node(g, n, "%s on %s is not supported yet (float32 only)", ir_op_name(n->op),
                      ir_dtype_name(t));
    for (uint32_t k = 0; k < n->ninputs; k++) need_i32(g, n, n->inputs[k]);
    need_i32(g, n, y);
    const struct ir_value *xv = &g->values[x];
    int rank = xv->rank;
    int64_t total = ir_numel(g, x);
    struct rows_params p = {0};
    p.bias = IR_NONE;
    switch (n->op) {
    case IR_OP_INSTANCE_NORMALIZATION: {
        if (rank < 3)
            ir_fatal_node(g, n, "InstanceNormalization input '%s' must have rank >= 3, got %d",
                          xv->name, rank);
        int64_t C = xv->dims[1];
        p.rows = xv->dims[0] * C;
        p.R = p.rows ? total / p.rows : 0;
        p.rmod = C, p.rmul = 1, p.jdiv = p.R, p.jmod = 1;
        p.eps = ir_attr_float(n, "epsilon", 1e-5f);
        p.scale = n->inputs[1];
        p.bias = n->inputs[2];
        emit_rows(cg, node, x, y, t, &p, IR_NONE, IR_NONE);
        return true;
    }
    case IR_OP_GROUP_NORMALIZATION: {
        if (rank < 3)
            ir_fatal_node(g, n, "GroupNormalization input '%s' must have rank >= 3, got %d",
                          xv->name, rank);
        int64_t C = xv->dims[1], G = ir_attr_int(n, "num_groups", 0);
        if (G <= 0 || C % G)
            ir_fatal_node(g, n, "GroupNormalization num_groups=%lld does not divide C=%lld",
                          (long long)G, (long long)C);
        bool per_group = ir_attr_int(n, "_per_group", 0) != 0;
        int64_t want = per_group ? G : C;
        if (ir_numel(g, n->inputs[1]) != want || ir_numel(g, n->inputs[2]) != want)
            ir_fatal_node(g, n, "GroupNormalization scale/bias must have %lld elements (%s)",
                          (long long)want, per_group ? "per group" : "per channel");
        int64_t NC = xv->dims[0] * C, S = NC ? total / NC : 0;
        p.rows = xv->dims[0] * G;
        p.R = (C / G) * S;
        if (per_group) p.rmod = G, p.rmul = 1, p.jdiv = p.R, p.jmod = 1;
        else p.rmod = G, p.rmul = C / G, p.jdiv = S, p.jmod = C / G;
        p.eps = ir_attr_float(n, "epsilon", 1e-5f);
        p.scale = n->inputs[1];
        p.bias = n->inputs[2];
        emit_rows(cg, node, x, y, t, &p, IR_NONE, IR_NONE);
        return true;
    }
    case IR_OP_FUSED_RMS_NORM:
    case IR_OP_LAYER_NORMALIZATION: {
        /* Mean / InvStdDev outputs: written by the row kernels (float32 statistics); an
         * unused one gets a scratch buffer. o2c.RMSNorm: the same rows, no mean subtraction. */
        p.rms = n->op == IR_OP_FUSED_RMS_NORM;
        bool stats = !p.rms && (output_used(g, n, 1) || output_used(g, n, 2));
        for (uint32_t k = 1; k < 3 && stats; k++)
            if (output_used(g, n, k) && g->values[n->outputs[k]].dtype != IR_F32)
                ir_fatal_node(g, n, "LayerNormalization output %u as %s (stash_type=%lld) is not "
                              "supported (float32 only)",
                              k, ir_dtype_name(g->values[n->outputs[k]].dtype),
                              (long long)ir_attr_int(n, "stash_type", 1));
        int64_t axis = ir_attr_int(n, "axis", -1);
        if (axis < -rank || axis >= rank)
            ir_fatal_node(g, n, "%s axis=%lld is out of range for rank %d", ir_op_name(n->op),
                          (long long)axis, rank);
        if (axis < 0) axis += rank;
        p.rows = 1;
        for (int k = 0; k < axis; k++) p.rows *= xv->dims[k];
        p.R = p.rows ? total / p.rows : 0;
        if (p.R == 0) return true;
        int64_t sn, bn = 0;
        uint32_t sc = n->inputs[1], bi = ir_input(n, 2);
        if (!suffix_of(&g->values[sc], xv, (int)axis, &sn))
            ir_fatal_node(g, n, "%s scale '%s' broadcasts to the normalized dims in a way that "
                          "is not supported yet (only a trailing suffix)",
                          ir_op_name(n->op), g->values[sc].name);
        if (bi != IR_NONE && (!suffix_of(&g->values[bi], xv, (int)axis, &bn) || bn != sn))
            ir_fatal_node(g, n, "LayerNormalization bias '%s' must have the scale's shape (%lld "
                          "elements) here; got %lld",
                          g->values[bi].name, (long long)sn, (long long)bn);
        p.rmod = 1, p.rmul = 0, p.jdiv = 1, p.jmod = sn;
        p.eps = ir_attr_float(n, "epsilon", 1e-5f);
        p.scale = sc;
        p.bias = bi;
        uint32_t st[2] = {IR_NONE, IR_NONE};
        for (uint32_t k = 1; k < 3 && stats; k++) {
            n = &g->nodes[node];
            st[k - 1] = output_used(g, n, k) ? n->outputs[k] : cg_temp(cg, node, IR_F32, p.rows);
        }
        emit_rows(cg, node, x, y, t, &p, st[0], st[1]);
        return true;
    }
    case IR_OP_BATCH_NORMALIZATION: {
        if (ir_attr_int(n, "training_mode", 0) != 0)
            ir_fatal_node(g, n, "BatchNormalization with training_mode=%lld is not supported "
                          "(inference only)",
                          (long long)ir_attr_int(n, "training_mode", 0));
        for (uint32_t k = 1; k < n->noutputs; k++)
            if (output_used(g, n, k))
                ir_fatal_node(g, n, "BatchNormalization output %u (running statistics) is not "
                              "supported (inference only)", k);
        if (rank < 2)
            ir_fatal_node(g, n, "BatchNormalization input '%s' must have rank >= 2, got %d",
                          xv->name, rank);
        if (total == 0) return true;
        int64_t C = xv->dims[1], S = total / (xv->dims[0] * C);
        const char *sfx = cg_use(cg, "norm", t);
        char kname[64];
        snprintf(kname, sizeof kname, "batchnorm_%s", sfx);
        size_t gws[1] = {(size_t)total};
        cg_launch(cg, node, kname, 1, gws, NULL);
        cg_arg_buf(cg, x);
        for (uint32_t k = 1; k < 5; k++) cg_arg_buf(cg, n->inputs[k]);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, C);
        cg_arg_i32(cg, S);
        cg_arg_f32(cg, ir_attr_float(n, "epsilon", 1e-5f));
        cg_arg_i32(cg, total);
        return true;
    }
    default:
        return false;
    }
}
