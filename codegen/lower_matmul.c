/* lower_matmul.c — MatMul-13 and Gemm-13 -> kernels/matmul.cl (one strided GEMM kernel).
 *
 * MatMul: numpy semantics. 1-D A is [1, K] (its M axis dropped from the output), 1-D B is [K, 1]
 *   (its N axis dropped); batch dims broadcast (a size-1 batch dim reads with stride 0). Batch
 *   dims of size 1 in the output are dropped and adjacent batch dims that both operands walk
 *   contiguously are merged; at most 3 remain (the kernel splits gws[2] into 3 dims).
 * Gemm: Y = alpha * op(A) op(B) + beta * C, transA/transB as strides; C (optional) broadcast
 *   unidirectionally to [M, N] with stride-0 axes; beta == 0 ignores C.
 * Kernels (codegen/sched_gemm.c sched_matmul): cpu class matmul_t8x16 (8x16 register tile,
 *   float16 vectors) when A's k axis and B's n axis are contiguous and M >= 8, N >= 16, the
 *   naive matmul otherwise (transposed operands, tiny shapes); gpu class (float32) the __local
 *   tiled GG_MATMUL_DEFINE of kernels/gemm_gpu.cl, any strides.
 * Empty dims: an empty output (M, N or a batch dim 0) gets no launch; K = 0 (non-empty output)
 *   runs the plain kernel in every class: Y = beta * C broadcast, or zeros (ONNX: the sum over
 *   an empty k range is 0). passes/fuse never turns a K = 0 linear into o2c.Gemm.
 * Assumes: shape inference ran (output dims known and consistent). float32 and float64 (float64
 * through the plain kernel, accumulating in double; float16 never gets here: passes/promote_f16.c).
 * Guarantees: fatal (ir_fatal_node) for other dtypes, tensors of >= 2^31 elements or more than 3
 * non-mergeable batch dims; never a wrong launch.
 */
#include "codegen/sched_gemm.h"

#include <stdio.h>
#include <string.h>

/* Fatal unless value v (if present) has fewer than 2^31 elements (kernels index with int). */
static void need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "%s: tensor '%s' has %lld elements; the kernels index with 32-bit "
                      "ints (at most 2^31-1 elements)",
                      ir_op_name(n->op), g->values[v].name, (long long)e);
}

/* MatMul: fills p from the operand shapes (numpy matmul broadcasting). */
static void matmul_params(const struct ir_graph *g, const struct ir_node *n, struct sched_matmul *p)
{
    const struct ir_value *av = &g->values[n->inputs[0]], *bv = &g->values[n->inputs[1]];
    int ra = av->rank, rb = bv->rank;
    if (ra < 1 || rb < 1)
        ir_fatal_node(g, n, "MatMul operands must have rank >= 1 (got %d and %d)", ra, rb);
    int64_t K2;
    if (ra == 1) {
        p->M = 1;
        p->K = av->dims[0];
        p->a_rs = 0;
        p->a_cs = 1;
    } else {
        p->M = av->dims[ra - 2];
        p->K = av->dims[ra - 1];
        p->a_rs = p->K;
        p->a_cs = 1;
    }
    if (rb == 1) {
        p->N = 1;
        K2 = bv->dims[0];
        p->b_rs = 1;
        p->b_cs = 0;
    } else {
        K2 = bv->dims[rb - 2];
        p->N = bv->dims[rb - 1];
        p->b_rs = p->N;
        p->b_cs = 1;
    }
    if (K2 != p->K)
        ir_fatal_node(g, n, "MatMul inner dims differ: '%s' has K=%lld, '%s' has K=%lld", av->name,
                      (long long)p->K, bv->name, (long long)K2);
    /* batch dims, right-aligned */
    int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0;
    int nbat = na > nb ? na : nb;
    int64_t od[IR_MAX_RANK], as[IR_MAX_RANK], bs[IR_MAX_RANK];
    int64_t sa = p->M * p->K, sb = p->K * p->N;
    for (int i = nbat - 1; i >= 0; i--) {
        int ia = i - (nbat - na), ib = i - (nbat - nb);
        int64_t da = ia >= 0 ? av->dims[ia] : 1, db = ib >= 0 ? bv->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            ir_fatal_node(g, n, "MatMul batch dims do not broadcast: %lld vs %lld", (long long)da,
                          (long long)db);
        od[i] = da > db ? da : db;
        as[i] = da == 1 ? 0 : sa;
        bs[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    /* drop size-1 dims, merge contiguous neighbours */
    int64_t md[IR_MAX_RANK], ma[IR_MAX_RANK], mb[IR_MAX_RANK];
    int nm = 0;
    for (int i = 0; i < nbat; i++) {
        if (od[i] == 1) continue;
        if (nm > 0 && ma[nm - 1] == as[i] * od[i] && mb[nm - 1] == bs[i] * od[i]) {
            md[nm - 1] *= od[i];
            ma[nm - 1] = as[i];
            mb[nm - 1] = bs[i];
            continue;
        }
        md[nm] = od[i];
        ma[nm] = as[i];
        mb[nm] = bs[i];
        nm++;
    }
    if (nm > 3)
        ir_fatal_node(g, n, "MatMul with %d independent broadcast batch dims is not supported "
                      "yet (at most 3)", nm);
    for (int k = 0; k < 3; k++) {
        int src = k - (3 - nm);
        p->bd[k] = src >= 0 ? md[src] : 1;
        p->as[k] = src >= 0 ? ma[src] : 0;
        p->bs[k] = src >= 0 ? mb[src] : 0;
    }
    p->alpha = 1.0f;
    p->beta = 0.0f;
    p->c_rs = p->c_cs = 0;
    p->c = IR_NONE;
}

/* Gemm: fills p from attributes and shapes. */
static void gemm_params(const struct ir_graph *g, const struct ir_node *n, struct sched_matmul *p)
{
    const struct ir_value *av = &g->values[n->inputs[0]], *bv = &g->values[n->inputs[1]];
    if (av->rank != 2 || bv->rank != 2)
        ir_fatal_node(g, n, "Gemm operands must be 2-D (got rank %d and %d)", av->rank, bv->rank);
    bool ta = ir_attr_int(n, "transA", 0) != 0, tb = ir_attr_int(n, "transB", 0) != 0;
    p->M = ta ? av->dims[1] : av->dims[0];
    p->K = ta ? av->dims[0] : av->dims[1];
    p->a_rs = ta ? 1 : av->dims[1];
    p->a_cs = ta ? av->dims[1] : 1;
    int64_t K2 = tb ? bv->dims[1] : bv->dims[0];
    p->N = tb ? bv->dims[0] : bv->dims[1];
    p->b_rs = tb ? 1 : bv->dims[1];
    p->b_cs = tb ? bv->dims[1] : 1;
    if (K2 != p->K)
        ir_fatal_node(g, n, "Gemm inner dims differ: op(A) has K=%lld, op(B) has K=%lld",
                      (long long)p->K, (long long)K2);
    for (int k = 0; k < 3; k++) p->bd[k] = 1, p->as[k] = 0, p->bs[k] = 0;
    p->alpha = ir_attr_float(n, "alpha", 1.0f);
    p->beta = ir_attr_float(n, "beta", 1.0f);
    p->c = ir_input(n, 2);
    p->c_rs = p->c_cs = 0;
    if (p->c != IR_NONE && p->beta == 0.0f) p->c = IR_NONE;
    if (p->c != IR_NONE) {
        const struct ir_value *cv = &g->values[p->c];
        if (cv->rank > 2)
            ir_fatal_node(g, n, "Gemm C '%s' has rank %d (at most 2)", cv->name, cv->rank);
        int64_t cm = cv->rank >= 2 ? cv->dims[cv->rank - 2] : 1;
        int64_t cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if ((cm != 1 && cm != p->M) || (cn != 1 && cn != p->N))
            ir_fatal_node(g, n, "Gemm C '%s' [%lld,%lld] does not broadcast to [%lld,%lld]",
                          cv->name, (long long)cm, (long long)cn, (long long)p->M,
                          (long long)p->N);
        p->c_rs = cm == 1 ? 0 : cn;
        p->c_cs = cn == 1 ? 0 : 1;
    }
}

bool lower_matmul(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t a = n->inputs[0], b = n->inputs[1], y = n->outputs[0];
    enum ir_dtype t = g->values[y].dtype;
    if (t != IR_F32 && t != IR_F64)
        ir_fatal_node(g, n, "%s on %s is not supported yet (float32, float64)", ir_op_name(n->op),
                      ir_dtype_name(t));
    need_i32(g, n, a);
    need_i32(g, n, b);
    need_i32(g, n, y);
    need_i32(g, n, ir_input(n, 2));
    struct sched_matmul p;
    memset(&p, 0, sizeof p);
    if (n->op == IR_OP_MATMUL) matmul_params(g, n, &p);
    else if (n->op == IR_OP_GEMM) gemm_params(g, n, &p);
    else return false;
    if (ir_numel(g, y) == 0) return true; /* empty output (M, N or a batch dim 0): no launch */
    if (p.K == 0) {
        /* empty inner dim: Y = beta * C (broadcast) or zeros; the plain kernel's K loop runs no
         * iteration, in every class (the tuned kernels and their tunables assume K >= 1) */
        sched_matmul_plain(cg, node, a, b, y, t, &p);
        return true;
    }
    sched_matmul(cg, node, a, b, y, t, &p);
    return true;
}
