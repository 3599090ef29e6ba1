/* lower_gather.c — Gather-13, GatherElements-13, GatherND-13 (ops.def family "gather") ->
 * kernels/gather.cl (per element size of the data; int64 or int32 indices).
 *   Gather:          x viewed [O, A, I] around `axis`, indices flattened to K: y [O, K, I];
 *   GatherElements:  y and indices share dims; x strides per axis (rank <= 8);
 *   GatherND:        batch_dims b: B = prod(x[:b]), N = prod(ind[b:-1]), K = ind[-1],
 *                    R = prod(x[b+K:]): y [B, N, R] (K <= 8).
 * Constant indices are range-checked here (out of range is a located fatal error, as the spec
 * makes it an error); run-time indices wrap once if negative and are then clamped by the kernel
 * (a kernel cannot raise; see kernels/gather.cl).
 * A Gather from a constant float32 table (token embeddings; cg_weight_operand_ok) is a weight
 * of the storage dtype: under --weights-dtype f16 it reads a half copy (cg_weight_operand) with
 * gather_h2f_* (vload_half; the output stays float32).
 */
#include "lower_ka.h"

#include <stdio.h>

/* Fatal if a constant index is outside [-dim, dim). */
static void check_const_index(const struct ir_graph *g, uint32_t node, uint32_t ind, int64_t i,
                              int64_t dim)
{
    const int64_t v = ir_const_i64(g, ind, i);
    if (v < -dim || v >= dim)
        ir_fatal_node(g, &g->nodes[node], "%s: index %lld (element %lld of '%s') is out of range "
                      "[-%lld, %lld)", ir_op_name(g->nodes[node].op), (long long)v, (long long)i,
                      g->values[ind].name, (long long)dim, (long long)dim);
}

bool lower_gather(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], ind = n->inputs[1], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *iv = &g->values[ind];
    const enum ir_dtype it = iv->dtype;
    if (it != IR_I64 && it != IR_I32)
        ir_fatal_node(g, n, "%s: indices have element type %s (int64 or int32 required)",
                      ir_op_name(n->op), ir_dtype_name(it));
    const char *is = it == IR_I64 ? "l" : "i";
    ka_numel(g, node, x);
    const int64_t ni = ka_numel(g, node, ind);
    const int64_t cnt = ka_numel(g, node, y);
    const int r = xv->rank;
    char kname[64];
    if (n->op == IR_OP_GATHER || n->op == IR_OP_GATHER_ELEMENTS) {
        int64_t axis = ir_attr_int(n, "axis", 0);
        if (axis < 0) axis += r;
        if (axis < 0 || axis >= r)
            ir_fatal_node(g, n, "%s: axis=%lld out of range for rank %d", ir_op_name(n->op),
                          (long long)ir_attr_int(n, "axis", 0), r);
        const int64_t A = xv->dims[axis];
        if (ir_is_const(g, ind))
            for (int64_t i = 0; i < ni; i++) check_const_index(g, node, ind, i, A);
        if (cnt == 0) return true;
        const char *sfx = cg_use(cg, "gather", ka_size_type(g, node, xv->dtype));
        if (n->op == IR_OP_GATHER) {
            int64_t I = 1;
            for (int k = (int)axis + 1; k < r; k++) I *= xv->dims[k];
            uint32_t tab = x;
            if (cg_weight_operand_ok(g, x)) tab = cg_weight_operand(cg, x);
            if (g->values[tab].dtype == IR_F16)
                snprintf(kname, sizeof kname, "gather_h2f_%s", is);
            else
                snprintf(kname, sizeof kname, "gather_%s_%s", is, sfx);
            ka_launch(cg, node, kname, cnt);
            cg_arg_buf(cg, tab);
            cg_arg_buf(cg, ind);
            cg_arg_buf(cg, y);
            cg_arg_i32(cg, cnt);
            cg_arg_i32(cg, A);
            cg_arg_i32(cg, I);
            cg_arg_i32(cg, ni);
            return true;
        }
        if (iv->rank != r)
            ir_fatal_node(g, n, "GatherElements: indices rank %d differs from data rank %d",
                          iv->rank, r);
        int64_t xs[IR_MAX_RANK];
        ka_dense_strides(r, xv->dims, xs);
        snprintf(kname, sizeof kname, "gather_el_%s_%s", is, sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, ind);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, cnt);
        cg_arg_i32(cg, r);
        cg_arg_i32(cg, A);
        cg_arg_i32(cg, axis);
        for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? iv->dims[k - (8 - r)] : 1);
        for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? xs[k - (8 - r)] : 0);
        return true;
    }
    if (n->op != IR_OP_GATHER_ND) return false;
    const int64_t b = ir_attr_int(n, "batch_dims", 0);
    const int q = iv->rank;
    if (q < 1 || b < 0 || b >= q || b >= r)
        ir_fatal_node(g, n, "GatherND: batch_dims=%lld invalid for data rank %d, indices rank %d",
                      (long long)b, r, q);
    const int64_t K = iv->dims[q - 1];
    if (K < 1 || b + K > r || K > 8)
        ir_fatal_node(g, n, "GatherND: index length %lld invalid for data rank %d with "
                      "batch_dims=%lld (at most 8 indexed axes)", (long long)K, r, (long long)b);
    int64_t B = 1, N = 1, R = 1, xb = 1;
    for (int k = 0; k < b; k++) B *= xv->dims[k];
    for (int k = (int)b; k < q - 1; k++) N *= iv->dims[k];
    for (int k = (int)(b + K); k < r; k++) R *= xv->dims[k];
    for (int k = (int)b; k < r; k++) xb *= xv->dims[k];
    int64_t xsd[IR_MAX_RANK];
    ka_dense_strides(r, xv->dims, xsd);
    if (ir_is_const(g, ind))
        for (int64_t i = 0; i < ni; i++) check_const_index(g, node, ind, i, xv->dims[b + i % K]);
    if (cnt == 0) return true;
    const char *sfx = cg_use(cg, "gather", ka_size_type(g, node, xv->dtype));
    snprintf(kname, sizeof kname, "gather_nd_%s_%s", is, sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, ind);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, N);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, K);
    cg_arg_i32(cg, xb);
    for (int j = 0; j < 8; j++) cg_arg_i32(cg, j < K ? xv->dims[b + j] : 1);
    for (int j = 0; j < 8; j++) cg_arg_i32(cg, j < K ? xsd[b + j] : 0);
    (void)B;
    return true;
}
