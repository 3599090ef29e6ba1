/* lower_fgemm.c — o2c.Gemm (made by passes/fuse/batched_linear.c and fuse_gemm_epilogue.c)
 * -> kernels/fgemm.cl (cpu class) and kernels/gemm_gpu.cl (gpu class) through codegen/sched_gemm.c.
 *
 * Node form (ops.def): inputs a [.., K] (dense; every leading dim folds into M = numel(a)/K),
 * w [K, N] constant (N = sum of the outputs' last dims), optional bias [N], optional residual
 * (same dims as the single output); attribute "activation" (0 none, 1 relu, 2 silu, 3 gelu erf,
 * 4 gelu tanh, 5/6 GEGLU erf/tanh, 7 quick gelu); outputs y_s [.., N_s] with numel M * N_s, written as column
 * splits of the [M, N] product in output order; GEGLU: one output [.., F] from a pair-ordered
 * weight of N = 2 * F16 columns (ops.def, passes/fuse/geglu.c).
 * Lowering: the constant weight is re-laid out at compile time into panels of 16 columns
 * (K-major inside a panel, zero-padded to a multiple of 16 columns; a new constant
 * "o2c.panels16:<id>:<w>" shared by nodes using the same weight; the original is not uploaded;
 * stored as float32 or, with --weights-dtype f16, as IEEE half: cg_weight_const),
 * then codegen/sched_gemm.c emits the launches of each kernel class from a struct sched_gemm:
 * kernels/fgemm.cl (cpu) and kernels/gemm_gpu.cl (gpu), both reading that panel constant.
 * Assumes: the pass checked shapes; float32 only.
 * Guarantees: fatal (ir_fatal_node) naming the node for anything inconsistent (more than 8
 * outputs, wrong dims, other dtypes, a weight that is not constant, >= 2^31 elements);
 * never a wrong launch.
 */
#include "codegen/sched_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FG_MAX_SPLITS SCHED_GEMM_MAX_SPLITS /* output buffers the kernels take */

static void need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "o2c.Gemm: tensor '%s' has %lld elements; the kernel indexes with "
                      "32-bit ints", g->values[v].name, (long long)e);
}

/* ir_lazy fill of the panels of weight src[0] [K, N]: p = {K, N, pw}, float32. */
static void fill_panels(const struct ir_graph *g, const struct ir_lazy *l, void *out)
{
    const int64_t K = l->p[0], N = l->p[1], pw = l->p[2], np = (N + pw - 1) / pw;
    void *owned;
    const float *src = ir_const_bytes(g, l->src[0], &owned);
    float *dst = out;
    for (int64_t p = 0; p < np; p++) {
        const int64_t nw = N - p * pw < pw ? N - p * pw : pw;
        for (int64_t k = 0; k < K; k++)
            memcpy(dst + (p * K + k) * pw, src + k * N + p * pw, sizeof(float) * (size_t)nw);
    }
    free(owned);
}

/* Packs constant weight w [K, N] into panels of pw columns, K-major inside a panel:
 * packed[(p * K + k) * pw + j] = w[k, p * pw + j], zero where p * pw + j >= N (made when the
 * weights file is written: fill_panels). Reuses the packed constant when another node already
 * packed the same weight. Returns its value id. */
static uint32_t pack_weight(struct cg_ctx *cg, struct ir_graph *g, uint32_t w, int64_t K,
                            int64_t N, int pw)
{
    const char *name = ir_sprintf(g, "o2c.panels%d:%u:%s", pw, w, g->values[w].name);
    const int64_t np = (N + pw - 1) / pw;
    uint32_t got = ir_value_find(g, name);
    if (got != IR_NONE && ir_is_const(g, got) && g->values[got].rank == 3 &&
        g->values[got].dtype == cg_weight_dtype(cg) &&
        g->values[got].dims[0] == np && g->values[got].dims[1] == K &&
        g->values[got].dims[2] == pw)
        return got;
    const int64_t dims[3] = {np, K, pw};
    const struct ir_lazy fill = {.fill = fill_panels, .src = {w, IR_NONE, IR_NONE, IR_NONE},
                                 .p = {K, N, pw}};
    /* float32 or half (--weights-dtype) */
    const uint32_t pv = cg_weight_const(cg, name, "panels", 3, dims, &fill);
    g->values[pv].shape_dep = g->values[w].shape_dep;
    return pv;
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
    if (!ir_is_const(g, w))
        ir_fatal_node(g, n, "o2c.Gemm: weight '%s' is not a constant", wv->name);
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
    const int64_t act = ir_attr_int(n, "activation", 0);
    if (act < 0 || act > 7)
        ir_fatal_node(g, n, "o2c.Gemm: activation=%lld (0..7)", (long long)act);
    /* GEGLU (5, 6): one output of F columns from a pair-ordered weight of 2 * F16 columns */
    const bool geglu = act == 5 || act == 6;
    const int64_t F16 = (off[1] + 15) / 16 * 16;
    if (geglu && (n->noutputs != 1 || res != IR_NONE || N != 2 * F16))
        ir_fatal_node(g, n, "o2c.Gemm GEGLU: needs one output of F columns, no residual and a "
                      "weight of 2 * F16 = %lld columns (has %u outputs, N=%lld)",
                      (long long)(2 * F16), n->noutputs, (long long)N);
    if (!geglu && off[n->noutputs] != N)
        ir_fatal_node(g, n, "o2c.Gemm: output widths sum to %lld but the weight has N=%lld",
                      (long long)off[n->noutputs], (long long)N);
    if (bias != IR_NONE && ir_numel(g, bias) != N)
        ir_fatal_node(g, n, "o2c.Gemm: bias '%s' is not [N=%lld]", g->values[bias].name,
                      (long long)N);
    if (res != IR_NONE && (n->noutputs != 1 || ir_numel(g, res) != M * N))
        ir_fatal_node(g, n, "o2c.Gemm: residual '%s' needs one output of [M, N]",
                      g->values[res].name);
    if (M == 0 || N == 0) return true;
    const int64_t npan = (N + 15) / 16;
    if (npan * 16 * K >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "o2c.Gemm: the packed weight [%lld, %lld] has 2^31 elements or more; "
                      "the kernel indexes with 32-bit ints", (long long)K, (long long)N);
    struct sched_gemm what = {.node = node, .a = a, .bias = bias, .res = res,
                              .nsplit = (int)n->noutputs, .M = M, .N = N, .K = K, .act = (int)act,
                              .F = geglu ? off[1] : 0};
    for (int s = 0; s < SCHED_GEMM_MAX_SPLITS; s++) {
        what.out[s] = s < (int)n->noutputs ? n->outputs[s] : IR_NONE;
        what.off[s] = s <= (int)n->noutputs ? off[s] : N;
    }
    what.off[SCHED_GEMM_MAX_SPLITS] = N;
    what.wpanels = pack_weight(cg, g, w, K, N, 16);
    what.wplace = what.wpanels; /* not the original weight: it would be uploaded as well */
    sched_gemm(cg, g, &what);
    return true;
}
