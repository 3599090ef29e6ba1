/* lower_fconv.c — o2c.Conv (made by passes/fuse/conv_epilogue.c) -> kernels/fconv.cl (cpu),
 * kernels/gemm_gpu.cl (gpu) through codegen/sched_conv.c:
 * direct convolution with bias, activation, residual and divisor applied in the store.
 * fconv_emit (codegen/lower_fconv.h) also serves the plain Conv (codegen/lower_conv.c).
 *
 * The lowering checks the node and fills a struct sched_conv; codegen/sched_conv.c emits the
 * kernels of each class: the cpu class's register-tiled fconv_v forms (and fallbacks), the gpu
 * class's implicit GEMM (kernels/gemm_gpu.cl). See that file for the kernel choice.
 *
 * Inputs: x [N, C, spatial] float32, w [OC, C/group, k...], optional bias [OC] (any shape with
 * OC elements), optional residual broadcasting to y per (n, oc, position) (see the pass).
 * Attributes: the Conv's (pads/auto_pad, strides, dilations, group, kernel_shape), activation
 * (0 none, 1 silu, 2 relu), output_divisor (1 = none).
 * Outputs: one y [N, OC, spatial], or (o2c.Conv of sibling convs, passes/fuse/sibling_conv.c)
 * up to SCHED_CONV_MAX_SPLITS outputs y_s [N, OC_s, spatial] with sum OC_s = OC (w's dims[0]):
 * the output channels in order, split by the kernels' store (no residual then).
 * Geometry comes from ref_conv_geom, as for the plain Conv (codegen/lower_conv.c).
 * Guarantees: fatal (ir_fatal_node) for other dtypes, ranks, residual shapes or activations, and
 * tensors of >= 2^31 elements (the kernels index with int).
 */
#include "codegen/lower_fconv.h"
#include "codegen/sched_gemm.h"
#include "ref/ref_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Residual element strides over (n, oc, p) of r broadcast to y; false if unsupported. */
static bool res_strides(const struct ir_value *r, const struct ir_value *y, int64_t *rn,
                        int64_t *rc, int64_t *rp)
{
    if (r->rank > y->rank) return false;
    int off = y->rank - r->rank;
    int64_t d[IR_MAX_RANK];
    for (int k = 0; k < y->rank; k++) d[k] = k - off >= 0 ? r->dims[k - off] : 1;
    bool eq = true, one = true;
    int64_t P = 1;
    for (int k = 2; k < y->rank; k++) {
        eq &= d[k] == y->dims[k];
        one &= d[k] == 1;
        P *= y->dims[k];
    }
    if (!eq && !one) return false;
    for (int k = 0; k < 2; k++)
        if (d[k] != 1 && d[k] != y->dims[k]) return false;
    int64_t sp = eq ? P : 1; /* elements per (n, c) of r */
    *rp = eq && P > 1 ? 1 : 0;
    *rc = d[1] == y->dims[1] && d[1] > 1 ? sp : 0;
    *rn = d[0] == y->dims[0] && d[0] > 1 ? d[1] * sp : 0;
    return true;
}


bool lower_fconv(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (n->op != IR_OP_FUSED_CONV) return false;
    fconv_emit(cg, g, node, ir_attr_int(n, "activation", 0), ir_input(n, 3),
               ir_attr_float(n, "output_divisor", 1.0f));
    return true;
}

void fconv_emit(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, int64_t act, uint32_t r,
                float div)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], w = n->inputs[1], b = ir_input(n, 2);
    uint32_t y = n->outputs[0];
    enum ir_dtype t = g->values[y].dtype;
    if (t != IR_F32)
        ir_fatal_node(g, n, "%s on %s is not supported yet (float32 only)", ir_op_name(n->op), ir_dtype_name(t));
    cg_need_i32(g, n, x);
    cg_need_i32(g, n, w);
    cg_need_i32(g, n, y);
    cg_need_i32(g, n, r);
    const struct ir_value *xv = &g->values[x], *wv = &g->values[w], *yv = &g->values[y];
    int rank = xv->rank;
    if (rank < 3 || rank > 5)
        ir_fatal_node(g, n, "%s with %d spatial dims is not supported (1 to 3)", ir_op_name(n->op), rank - 2);
    struct ref_conv_geom geo;
    ref_conv_geom(g, n, xv->dims, rank, wv->dims + 2, false, &geo);
    const int64_t group = ir_attr_int(n, "group", 1);
    const int64_t C = xv->dims[1], OC = wv->dims[0];
    const int nsplit = (int)n->noutputs;
    int64_t off[SCHED_CONV_MAX_SPLITS + 1] = {0};
    if (nsplit < 1 || nsplit > SCHED_CONV_MAX_SPLITS || (nsplit > 1 && r != IR_NONE))
        ir_fatal_node(g, n, "%s: %d outputs (1..%d; one with a residual)", ir_op_name(n->op),
                      nsplit, SCHED_CONV_MAX_SPLITS);
    for (int s = 0; s < nsplit; s++) {
        const struct ir_value *sv = &g->values[n->outputs[s]];
        cg_need_i32(g, n, n->outputs[s]);
        bool ok = sv->dtype == IR_F32 && sv->rank == yv->rank && sv->dims[0] == yv->dims[0];
        for (int k = 2; ok && k < sv->rank; k++) ok = sv->dims[k] == yv->dims[k];
        if (!ok)
            ir_fatal_node(g, n, "%s: output '%s' is not a float32 [N, C, spatial] split of the "
                          "first output's shape", ir_op_name(n->op), sv->name);
        off[s + 1] = off[s] + sv->dims[1];
    }
    for (int s = nsplit + 1; s <= SCHED_CONV_MAX_SPLITS; s++) off[s] = OC;
    if (off[nsplit] != OC)
        ir_fatal_node(g, n, "%s: output channels sum to %lld, the weight '%s' has %lld",
                      ir_op_name(n->op), (long long)off[nsplit], wv->name, (long long)OC);
    if (group <= 0 || C % group || OC % group)
        ir_fatal_node(g, n, "%s: group=%lld does not divide C_in=%lld and C_out=%lld",
                      ir_op_name(n->op), (long long)group, (long long)C, (long long)OC);
    if (b != IR_NONE && ir_numel(g, b) != OC)
        ir_fatal_node(g, n, "%s: bias '%s' must have %lld elements", ir_op_name(n->op), g->values[b].name,
                      (long long)OC);
    if (act < 0 || act > 2)
        ir_fatal_node(g, n, "%s activation=%lld is not supported (0 none, 1 silu, 2 relu)",
                      ir_op_name(n->op), (long long)act);
    int64_t rn = 0, rc = 0, rp = 0;
    if (r != IR_NONE && !res_strides(&g->values[r], yv, &rn, &rc, &rp))
        ir_fatal_node(g, n, "%s: residual '%s' does not broadcast to the output per "
                      "(n, channel, position)", ir_op_name(n->op), g->values[r].name);
    int64_t in[3], out[3], k[3], s[3], d[3], p[3];
    conv_geom_3d(xv, yv, wv, rank, &geo, in, out, k, s, d, p);
    if (yv->dims[0] * OC * out[0] * out[1] * out[2] == 0) return;
    /* C_in = 0 (K = 0): lower_conv.c writes the bias; the fusions leave such convs alone */
    IR_ASSERT(C > 0);
    struct sched_conv what = {.node = node, .x = x, .w = w, .bias = b, .y = y, .res = r,
                              .rn = rn, .rc = rc, .rp = rp, .group = group, .act = act,
                              .div = div, .nsplit = nsplit};
    for (int s = 0; s < nsplit; s++) what.ys[s] = n->outputs[s];
    memcpy(what.off, off, sizeof off);
    memcpy(what.in, in, sizeof in);
    memcpy(what.out, out, sizeof out);
    memcpy(what.k, k, sizeof k);
    memcpy(what.s, s, sizeof s);
    memcpy(what.d, d, sizeof d);
    memcpy(what.p, p, sizeof p);
    sched_conv(cg, g, &what);
}

void conv_geom_3d(const struct ir_value *xv, const struct ir_value *yv, const struct ir_value *wv,
                  int rank, const struct ref_conv_geom *geo, int64_t in[3], int64_t out[3],
                  int64_t k[3], int64_t s[3], int64_t d[3], int64_t p[3])
{
    for (int j = 0; j < 3; j++) {
        in[j] = out[j] = k[j] = s[j] = d[j] = 1;
        p[j] = 0;
    }
    int nsp = rank - 2;
    for (int i = 0; i < nsp; i++) {
        int j = 3 - nsp + i;
        in[j] = xv->dims[2 + i];
        out[j] = yv->dims[2 + i];
        k[j] = wv->dims[2 + i];
        s[j] = geo->s[i];
        d[j] = geo->d[i];
        p[j] = geo->pb[i];
    }
}
