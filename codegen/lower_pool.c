/* lower_pool.c — MaxPool-12, AveragePool-19, LpPool-2/11/18 -> kernels/pool.cl (LpPool: pool_lp,
 * integer p > 0 checked by ref_lp_pool_p); GlobalAveragePool-1 and
 * GlobalMaxPool-1 -> the row reductions of kernels/reduce.cl (one row per (n, c) plane).
 *
 * Window geometry (kernel_shape, strides, dilations, pads/auto_pad, ceil_mode) comes from
 * ref_conv_geom, the code shape inference and the reference use. 1-D/2-D pools are passed to
 * the kernel as 3-D ones with unit leading dims. AveragePool count_include_pad selects the
 * divisor (see kernels/pool.cl).
 * Assumes: shape inference ran. float32; MaxPool also (u)int8/(u)int16 (exact in float).
 * MaxPool with its Indices output used -> pool_max_idx (flat int64 indices into X, storage_order
 * 0 or, for 2-D pools, 1), as ref/ref_linalg.c.
 * Guarantees: fatal (ir_fatal_node) for other dtypes, more than 3 spatial dims, storage_order=1
 * on a non-2-D pool with Indices, or tensors of >= 2^31 elements.
 */
#include "codegen/lower.h"
#include "ref/ref_util.h"

#include <stdio.h>

/* Work-group size of the _wg kernels of reduce.cl (RD_LWS). */
#define POOL_RD_LWS 128

static void need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "%s: tensor '%s' has %lld elements; the kernels index with 32-bit "
                      "ints (at most 2^31-1 elements)",
                      ir_op_name(n->op), g->values[v].name, (long long)e);
}

/* GlobalAveragePool / GlobalMaxPool: rows = N*C planes of R = prod(spatial) elements. */
static void lower_global(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, enum ir_dtype t)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x];
    int64_t rows = xv->dims[0] * xv->dims[1];
    int64_t R = ir_numel(g, x) / (rows ? rows : 1);
    if (rows == 0) return;
    if (R == 0)
        ir_fatal_node(g, n, "%s over an empty spatial extent is not supported",
                      ir_op_name(n->op));
    bool avg = n->op == IR_OP_GLOBAL_AVERAGE_POOL;
    const char *sfx = cg_use(cg, "reduce", t);
    bool wg = R >= 256;
    char kname[64];
    snprintf(kname, sizeof kname, "reduce_%s_%s_%s", avg ? "sum" : "max", wg ? "wg" : "seq", sfx);
    size_t gws[1] = {(size_t)(rows * (wg ? POOL_RD_LWS : 1))}, lws[1] = {POOL_RD_LWS};
    cg_launch(cg, node, kname, 1, gws, wg ? lws : NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, 1);                                   /* inner */
    cg_arg_i32(cg, 0);                                   /* pre: none */
    cg_arg_i32(cg, avg ? 1 : 0); /* post: divide by scale */
    cg_arg_f32(cg, (float)R);    /* the element count */
    cg_arg_i32(cg, rows);
}

/* The arguments KN(pool) and KN(pool_lp) share, in kernel order: X, Y, input dims, output dims,
 * kernel, strides, leading pads (each as 3 ints, D/H/W). */
static void geom_args(struct cg_ctx *cg, uint32_t x, uint32_t y, const int64_t *in, const int64_t *out,
                      const int64_t *k, const int64_t *s, const int64_t *pb)
{
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    const int64_t *groups[5] = {in, out, k, s, pb};
    for (int g = 0; g < 5; g++)
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, groups[g][i]);
}

bool lower_pool(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], y = n->outputs[0];
    enum ir_dtype t = g->values[y].dtype;
    /* MaxPool of 8/16-bit integers is exact through the kernel's float arithmetic */
    bool small_int = t == IR_U8 || t == IR_I8 || t == IR_U16 || t == IR_I16;
    if (t != IR_F32 && !(small_int && n->op == IR_OP_MAX_POOL))
        ir_fatal_node(g, n, "%s on %s is not supported yet (float32%s)", ir_op_name(n->op),
                      ir_dtype_name(t),
                      n->op == IR_OP_MAX_POOL ? "; MaxPool also 8/16-bit integers" : " only");
    need_i32(g, n, x);
    need_i32(g, n, y);
    if (n->op == IR_OP_GLOBAL_AVERAGE_POOL || n->op == IR_OP_GLOBAL_MAX_POOL) {
        lower_global(cg, g, node, t);
        return true;
    }
    if (n->op != IR_OP_MAX_POOL && n->op != IR_OP_AVERAGE_POOL && n->op != IR_OP_LP_POOL)
        return false;
    const uint32_t iv = n->op == IR_OP_MAX_POOL && n->noutputs > 1 &&
                                n->outputs[1] != IR_NONE && g->values[n->outputs[1]].nuses > 0
                            ? n->outputs[1]
                            : IR_NONE;
    const struct ir_value *xv = &g->values[x], *yv = &g->values[y];
    int rank = xv->rank;
    if (rank < 3 || rank > 5)
        ir_fatal_node(g, n, "%s with %d spatial dims is not supported (1 to 3)", ir_op_name(n->op),
                      rank - 2);
    struct ref_conv_geom geo;
    ref_conv_geom(g, n, xv->dims, rank, NULL, true, &geo);
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
            d[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
    int nsp = rank - 2;
    for (int i = 0; i < nsp; i++) {
        int j = 3 - nsp + i;
        in[j] = xv->dims[2 + i];
        out[j] = yv->dims[2 + i];
        k[j] = geo.k[i];
        s[j] = geo.s[i];
        d[j] = geo.d[i];
        pb[j] = geo.pb[i];
        pe[j] = geo.pe[i];
    }
    const int64_t so = ir_attr_int(n, "storage_order", 0);
    if (iv != IR_NONE && so != 0 && (so != 1 || nsp != 2))
        ir_fatal_node(g, n, "MaxPool: storage_order=%lld with the Indices output is supported for "
                      "2-D pooling only (0 or 1)", (long long)so);
    int mode = 0;
    if (n->op == IR_OP_AVERAGE_POOL) mode = ir_attr_int(n, "count_include_pad", 0) ? 2 : 1;
    int64_t total = ir_numel(g, y);
    if (total == 0) return true;
    const char *sfx = cg_use(cg, "pool", t);
    char kname[64];
    if (iv != IR_NONE) {
        snprintf(kname, sizeof kname, "pool_max_idx_%s", sfx);
        size_t gws[1] = {(size_t)total};
        cg_launch(cg, node, kname, 1, gws, NULL);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, y);
        cg_arg_buf(cg, iv);
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, in[i]);
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, out[i]);
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, k[i]);
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, s[i]);
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, pb[i]);
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, d[i]);
        cg_arg_i32(cg, so);
        cg_arg_i32(cg, total);
        return true;
    }
    if (n->op == IR_OP_LP_POOL) {
        const int64_t p = ref_lp_pool_p(g, n);
        snprintf(kname, sizeof kname, "pool_lp_%s", sfx);
        size_t gws[1] = {(size_t)total};
        cg_launch(cg, node, kname, 1, gws, NULL);
        geom_args(cg, x, y, in, out, k, s, pb);
        for (int i = 0; i < 3; i++) cg_arg_i32(cg, d[i]);
        cg_arg_i32(cg, p);
        cg_arg_i32(cg, total);
        return true;
    }
    snprintf(kname, sizeof kname, "pool_%s", sfx);
    size_t gws[1] = {(size_t)total};
    cg_launch(cg, node, kname, 1, gws, NULL);
    geom_args(cg, x, y, in, out, k, s, pb);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, pe[i]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, d[i]);
    cg_arg_i32(cg, mode);
    cg_arg_i32(cg, total);
    return true;
}
