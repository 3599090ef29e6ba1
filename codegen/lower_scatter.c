/* lower_scatter.c — scatter family (ops.def "scatter") -> kernels/scatter.cl:
 *   ScatterElements-11/13/16/18 and Scatter-9/10: copy data -> y, then scatter_el (one
 *     work-item per column off the axis, the axis walked serially in order);
 *   ScatterND-11/13/16/18: copy, then scatter_nd (one work-item per slice element, the index
 *     tuples walked serially in order);
 *   TensorScatter-24: tscatter, one gather-style pass (each output element finds its source);
 *   ReverseSequence-10: revseq, one gather-style pass (sequence_lens read at run time);
 *   MaxUnpool-9/11/22 (output_shape absent or constant): unpool_init (y = 0, winner = -1),
 *     unpool_claim (atomic_max of the element number per target), unpool_write (the last
 *     element per target writes, as the ONNX reference's in-order loop).
 * Reductions (add/mul/max/min) instantiate the kernels for the real dtype, plain movements for
 * the unsigned type of the element size (any dtype, bool and f16 included).
 * Assumes: shape inference ran (ref_scatter_infer checked ranks, dims, attributes).
 * Guarantees: constant indices / sequence_lens / write_indices out of range are located fatal
 * errors here (the spec makes them errors); run-time ones are skipped (ReverseSequence: lens
 * clamped into [0, T]) by the kernels, which never write outside y (kernels/scatter.cl); fatal
 * for tensors of >= 2^31 elements or rank > 8.
 */
#include "lower_ka.h"
#include "ref/ref_util.h"

#include <stdio.h>
#include <string.h>

/* Fatal if a constant index (element i of ind, wrapped once if negative) is outside [0, dim). */
static void check_idx(const struct ir_graph *g, uint32_t node, uint32_t ind, int64_t i,
                      int64_t dim, bool allow_neg)
{
    const int64_t v = ir_const_i64(g, ind, i);
    if ((allow_neg ? v < -dim : v < 0) || v >= dim)
        ir_fatal_node(g, &g->nodes[node], "%s: index %lld (element %lld of '%s') is out of range "
                      "[%lld, %lld)", ir_op_name(g->nodes[node].op), (long long)v, (long long)i,
                      g->values[ind].name, (long long)(allow_neg ? -dim : 0), (long long)dim);
}

/* "l" or "i" for the index type of value v (int64 / int32); fatal otherwise. */
static const char *idx_sfx(const struct ir_graph *g, uint32_t node, uint32_t v)
{
    const enum ir_dtype t = g->values[v].dtype;
    if (t != IR_I64 && t != IR_I32)
        ir_fatal_node(g, &g->nodes[node], "%s: '%s' has element type %s (int64 or int32 "
                      "required)", ir_op_name(g->nodes[node].op), g->values[v].name,
                      ir_dtype_name(t));
    return t == IR_I64 ? "l" : "i";
}

/* Instance dtype: the real dtype for a reduction (fatal where the kernels lack arithmetic),
 * else the unsigned type of the element size. */
static enum ir_dtype inst_type(const struct ir_graph *g, uint32_t node, enum ir_dtype t, int red)
{
    if (red == 0) return ka_size_type(g, node, t);
    if (t == IR_BF16 || ir_dtype_size(t) == 0)
        ir_fatal_node(g, &g->nodes[node], "%s: reduction on element type %s is not supported",
                      ir_op_name(g->nodes[node].op), ir_dtype_name(t));
    return t;
}

/* y = copy of x (dense, same dims). */
static void copy_all(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t x, uint32_t y)
{
    const struct ir_value *xv = &g->values[x];
    int64_t s[IR_MAX_RANK];
    ka_dense_strides(xv->rank, xv->dims, s);
    ka_strided_copy(cg, g, node, x, y, xv->rank, xv->dims, s, 0, s, 0);
}

static void lower_scatter_elements(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], ind = n->inputs[1], upd = n->inputs[2], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *uv = &g->values[upd];
    const int r = xv->rank;
    const int axis = ref_axis(g, n, ir_attr_int(n, "axis", 0), r, false, "axis");
    const int red = n->op == IR_OP_SCATTER ? 0 : ref_scatter_reduction(g, n);
    const char *is = idx_sfx(g, node, ind);
    const int64_t nu = ka_numel(g, node, upd);
    ka_numel(g, node, y);
    if (ir_is_const(g, ind))
        for (int64_t i = 0; i < nu; i++) check_idx(g, node, ind, i, xv->dims[axis], true);
    const enum ir_dtype it = inst_type(g, node, xv->dtype, red);
    copy_all(cg, g, node, x, y);
    if (nu == 0) return;
    const int64_t ncol = nu / uv->dims[axis];
    int64_t ys[IR_MAX_RANK];
    ka_dense_strides(r, xv->dims, ys);
    char kname[64];
    snprintf(kname, sizeof kname, "scatter_el_%s_%s", is, cg_use(cg, "scatter", it));
    ka_launch(cg, node, kname, ncol);
    cg_arg_buf(cg, y);
    cg_arg_buf(cg, ind);
    cg_arg_buf(cg, upd);
    cg_arg_i32(cg, ncol);
    cg_arg_i32(cg, r);
    cg_arg_i32(cg, axis);
    cg_arg_i32(cg, xv->dims[axis]);
    for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? uv->dims[k - (8 - r)] : 1);
    for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? ys[k - (8 - r)] : 0);
    cg_arg_i32(cg, red);
}

static void lower_scatter_nd(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], ind = n->inputs[1], upd = n->inputs[2], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *iv = &g->values[ind];
    const int r = xv->rank;
    const int red = ref_scatter_reduction(g, n);
    const char *is = idx_sfx(g, node, ind);
    const int64_t ni = ka_numel(g, node, ind);
    ka_numel(g, node, upd);
    ka_numel(g, node, y);
    const int64_t K = iv->dims[iv->rank - 1];
    if (ir_is_const(g, ind))
        for (int64_t i = 0; i < ni; i++) check_idx(g, node, ind, i, xv->dims[i % K], true);
    const enum ir_dtype it = inst_type(g, node, xv->dtype, red);
    copy_all(cg, g, node, x, y);
    int64_t R = 1;
    for (int k = (int)K; k < r; k++) R *= xv->dims[k];
    const int64_t N = ni / K;
    if (N == 0 || R == 0) return;
    int64_t xs[IR_MAX_RANK];
    ka_dense_strides(r, xv->dims, xs);
    char kname[64];
    snprintf(kname, sizeof kname, "scatter_nd_%s_%s", is, cg_use(cg, "scatter", it));
    ka_launch(cg, node, kname, R);
    cg_arg_buf(cg, y);
    cg_arg_buf(cg, ind);
    cg_arg_buf(cg, upd);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, N);
    cg_arg_i32(cg, K);
    for (int j = 0; j < 8; j++) cg_arg_i32(cg, j < K ? xv->dims[j] : 1);
    for (int j = 0; j < 8; j++) cg_arg_i32(cg, j < K ? xs[j] : 0);
    cg_arg_i32(cg, red);
}

static void lower_tensor_scatter(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], upd = n->inputs[1], wi = ir_input(n, 2), y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *uv = &g->values[upd];
    const int r = xv->rank;
    const int axis = ref_axis(g, n, ir_attr_int(n, "axis", -2), r, false, "axis");
    const bool circ = strcmp(ir_attr_string(n, "mode", "linear"), "circular") == 0;
    const int64_t cnt = ka_numel(g, node, y);
    ka_numel(g, node, upd);
    const int64_t M = xv->dims[axis], S = uv->dims[axis];
    if (wi != IR_NONE && ir_is_const(g, wi) && !circ)
        for (int64_t b = 0; b < xv->dims[0]; b++) {
            const int64_t w = ir_const_i64(g, wi, b);
            if (S > 0 && (w < 0 || w + S > M))
                ir_fatal_node(g, n, "TensorScatter: write_indices[%lld]=%lld with %lld updates "
                              "leaves the cache length %lld (mode linear)", (long long)b,
                              (long long)w, (long long)S, (long long)M);
        }
    if (cnt == 0) return;
    int64_t sa = 1;
    for (int k = axis + 1; k < r; k++) sa *= xv->dims[k];
    const int64_t s0 = cnt / xv->dims[0];
    const char *is = wi != IR_NONE ? idx_sfx(g, node, wi) : "l";
    char kname[64];
    snprintf(kname, sizeof kname, "tscatter_%s_%s", is,
             cg_use(cg, "scatter", ka_size_type(g, node, xv->dtype)));
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, upd);
    cg_arg_buf(cg, wi != IR_NONE ? wi : x); /* unread when has_wi = 0 */
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, M);
    cg_arg_i32(cg, S);
    cg_arg_i32(cg, sa);
    cg_arg_i32(cg, s0);
    cg_arg_i32(cg, circ);
    cg_arg_i32(cg, wi != IR_NONE);
}

static void lower_reverse_sequence(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], lens = n->inputs[1], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x];
    const int ba = (int)ir_attr_int(n, "batch_axis", 1), ta = (int)ir_attr_int(n, "time_axis", 0);
    const int64_t cnt = ka_numel(g, node, y), T = xv->dims[ta];
    const char *is = idx_sfx(g, node, lens);
    if (ir_is_const(g, lens))
        for (int64_t b = 0; b < xv->dims[ba]; b++) {
            const int64_t L = ir_const_i64(g, lens, b);
            if (L < 0 || L > T)
                ir_fatal_node(g, n, "ReverseSequence: sequence_lens[%lld]=%lld outside [0, %lld]",
                              (long long)b, (long long)L, (long long)T);
        }
    if (cnt == 0) return;
    int64_t xs[IR_MAX_RANK];
    ka_dense_strides(xv->rank, xv->dims, xs);
    char kname[64];
    snprintf(kname, sizeof kname, "revseq_%s_%s", is,
             cg_use(cg, "scatter", ka_size_type(g, node, xv->dtype)));
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, lens);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, T);
    cg_arg_i32(cg, xs[ta]);
    cg_arg_i32(cg, xv->dims[ba]);
    cg_arg_i32(cg, xs[ba]);
}

static void lower_max_unpool(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], ind = n->inputs[1], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *yv = &g->values[y];
    const int r = xv->rank;
    if (r > 8) ir_fatal_node(g, n, "MaxUnpool: rank %d > 8 is not supported", r);
    int64_t inf[IR_MAX_RANK], os[IR_MAX_RANK];
    ref_maxunpool_geom(g, n, xv->dims, r, inf);
    int64_t ninf = 1;
    for (int k = 0; k < r; k++) ninf *= inf[k];
    const int64_t nx = ka_numel(g, node, x), ny = ka_numel(g, node, y);
    const char *is = idx_sfx(g, node, ind);
    if (ir_is_const(g, ind))
        for (int64_t i = 0; i < nx; i++) check_idx(g, node, ind, i, ninf, false);
    if (ny == 0) return;
    ka_dense_strides(r, yv->dims, os);
    const char *sfx = cg_use(cg, "scatter", ka_size_type(g, node, xv->dtype));
    const uint32_t win = cg_temp(cg, node, IR_I32, ninf);
    char kname[64];
    snprintf(kname, sizeof kname, "unpool_init_%s", sfx);
    ka_launch(cg, node, kname, ny);
    cg_arg_buf(cg, y);
    cg_arg_buf(cg, win);
    cg_arg_i32(cg, ny);
    cg_arg_i32(cg, ninf);
    if (nx == 0) return;
    snprintf(kname, sizeof kname, "unpool_claim_%s_%s", is, sfx);
    ka_launch(cg, node, kname, nx);
    cg_arg_buf(cg, ind);
    cg_arg_buf(cg, win);
    cg_arg_i32(cg, nx);
    cg_arg_i32(cg, ninf);
    snprintf(kname, sizeof kname, "unpool_write_%s_%s", is, sfx);
    ka_launch(cg, node, kname, nx);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, ind);
    cg_arg_buf(cg, win);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, nx);
    cg_arg_i32(cg, ninf);
    cg_arg_i32(cg, r);
    for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? inf[k - (8 - r)] : 1);
    for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? os[k - (8 - r)] : 0);
}

bool lower_scatter(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    switch (g->nodes[node].op) {
    case IR_OP_SCATTER_ELEMENTS:
    case IR_OP_SCATTER: lower_scatter_elements(cg, g, node); return true;
    case IR_OP_SCATTER_ND: lower_scatter_nd(cg, g, node); return true;
    case IR_OP_TENSOR_SCATTER: lower_tensor_scatter(cg, g, node); return true;
    case IR_OP_REVERSE_SEQUENCE: lower_reverse_sequence(cg, g, node); return true;
    case IR_OP_MAX_UNPOOL: lower_max_unpool(cg, g, node); return true;
    default: return false;
    }
}
