/* lower_quant.c — QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (ops.def family
 * "quant") -> kernels/quant.cl.
 *
 * QuantizeLinear / DequantizeLinear: one launch over x's elements; the granularity (per-tensor,
 * per-axis, blocked) comes from ref_quant_geom (ref/ref_quant.h) as scale strides, so scale
 * and zero point may be computed at run time (only their shapes must be known). Types:
 * x float32/float16 -> int8/uint8/int16/uint16 (quantize); int8/uint8/int16/uint16/int32 ->
 * float32/float16 (dequantize); scale float32/float16. Checked by ref_quant_out_dtype (fatal,
 * naming the type, for float8/int4/int2/float4/bfloat16 and the rest). QuantizeLinear divides
 * in float16 where ref_quant_half_div says so (precision=float16, or float16 x and scale).
 * DynamicQuantizeLinear (float32 -> uint8): per-chunk min/max into a scratch buffer, one
 * work-item for scale and zero point, then one quantizing launch.
 */
#include "lower_ka.h"

#include <stdio.h>

#include "ref/ref_quant.h"

static const char *fsfx(enum ir_dtype t)
{
    return t == IR_F16 ? "f16" : "f32";
}

/* Elements of x one dql_minmax work-item folds (at most 256 parts, at least 1024 elements). */
static int64_t dql_chunk(int64_t n)
{
    int64_t c = (n + 255) / 256;
    return c < 1024 ? 1024 : c;
}

static void lower_dynamic(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    uint32_t ys = n->noutputs > 1 ? n->outputs[1] : IR_NONE;
    uint32_t yz = n->noutputs > 2 ? n->outputs[2] : IR_NONE;
    const int64_t cnt = ka_numel(g, node, x);
    const char *sfx = cg_use(cg, "quant", IR_U8);
    /* absent scale / zero-point outputs still need somewhere to go */
    if (ys == IR_NONE) ys = cg_temp(cg, node, IR_F32, 1);
    if (yz == IR_NONE) yz = cg_temp(cg, node, IR_U8, 1);
    char kname[64];
    const int64_t chunk = dql_chunk(cnt), nparts = cnt ? (cnt + chunk - 1) / chunk : 0;
    uint32_t part = IR_NONE;
    if (nparts > 0) {
        part = cg_temp(cg, node, IR_F32, 2 * nparts);
        snprintf(kname, sizeof kname, "dql_minmax_%s", sfx);
        ka_launch(cg, node, kname, nparts);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, part);
        cg_arg_i32(cg, cnt);
        cg_arg_i32(cg, chunk);
    } else {
        part = cg_temp(cg, node, IR_F32, 2); /* not read: nparts = 0 */
    }
    snprintf(kname, sizeof kname, "dql_params_%s", sfx);
    ka_launch(cg, node, kname, 1);
    cg_arg_buf(cg, part);
    cg_arg_i32(cg, nparts);
    cg_arg_buf(cg, ys);
    cg_arg_buf(cg, yz);
    if (cnt == 0 || y == IR_NONE) return;
    snprintf(kname, sizeof kname, "dql_quant_%s", sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, ys);
    cg_arg_buf(cg, yz);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
}

bool lower_quant(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (n->op == IR_OP_DYNAMIC_QUANTIZE_LINEAR) {
        if (g->values[n->inputs[0]].dtype != IR_F32)
            ir_fatal_node(g, n, "DynamicQuantizeLinear: input type %s (float32 only)",
                          ir_dtype_name(g->values[n->inputs[0]].dtype));
        lower_dynamic(cg, g, node);
        return true;
    }
    if (n->op != IR_OP_QUANTIZE_LINEAR && n->op != IR_OP_DEQUANTIZE_LINEAR) return false;
    struct ref_quant_geom q;
    ref_quant_geom(g, n, &q);
    const enum ir_dtype ot = ref_quant_out_dtype(g, n);
    const uint32_t x = n->inputs[0], s = n->inputs[1], z = ir_input(n, 2), y = n->outputs[0];
    const enum ir_dtype xt = g->values[x].dtype, st = g->values[s].dtype;
    IR_ASSERT(g->values[y].dtype == ot);
    const int64_t cnt = ka_numel(g, node, x);
    ka_numel(g, node, s);
    if (cnt == 0) return true;
    const bool quant = n->op == IR_OP_QUANTIZE_LINEAR;
    const char *tsfx = cg_use(cg, "quant", quant ? ot : xt);
    char kname[64];
    if (quant)
        snprintf(kname, sizeof kname, "quantize_%s_%s_%s", fsfx(xt), fsfx(st), tsfx);
    else
        snprintf(kname, sizeof kname, "dequantize_%s_%s_%s", fsfx(st), fsfx(ot), tsfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, s);
    cg_arg_buf(cg, z != IR_NONE ? z : x); /* not read when has_zp = 0 (x has type T too for
                                             dequantize; for quantize any buffer will do) */
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, q.d);
    cg_arg_i32(cg, q.inner);
    cg_arg_i32(cg, q.block);
    cg_arg_i32(cg, q.s_outer);
    cg_arg_i32(cg, q.s_axis);
    cg_arg_i32(cg, q.s_inner);
    cg_arg_i32(cg, z != IR_NONE);
    if (quant) cg_arg_i32(cg, ref_quant_half_div(g, n));
    return true;
}
