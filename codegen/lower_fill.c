/* lower_fill.c — ConstantOfShape-20, EyeLike-22, Range-11 (ops.def family "fill") when shape
 * folding left them in the graph (their output shape is known, but e.g. the graph is compiled
 * without folding this node) -> kernels/fill.cl:
 *   ConstantOfShape: every element = the `value` attribute tensor (default float32 0), written
 *                    as its bit pattern (fill, per element size);
 *   EyeLike:         ones on diagonal k (attribute, default 0), dtype attribute or the input's
 *                    type (eye, per element size);
 *   Range:           y[i] = start + i * delta, start/delta read from their (one-element)
 *                    buffers at run time (range, per real type).
 */
#include "lower_ka.h"

#include <stdio.h>
#include <string.h>

/* The 64-bit little-endian pattern of the value 1 in dtype t. */
static uint64_t one_bits(enum ir_dtype t)
{
    switch (t) {
    case IR_F32: return 0x3f800000u;
    case IR_F64: return 0x3ff0000000000000ull;
    case IR_F16: return 0x3c00u;
    case IR_BF16: return 0x3f80u;
    default: return 1;
    }
}

void ka_fill(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t y, uint64_t bits)
{
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return;
    char kname[64];
    const char *sfx = cg_use(cg, "fill", ka_size_type(g, node, g->values[y].dtype));
    snprintf(kname, sizeof kname, "fill_%s", sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i64(cg, (int64_t)bits);
}

bool lower_fill(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t y = n->outputs[0];
    const struct ir_value *yv = &g->values[y];
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    char kname[64];
    if (n->op == IR_OP_CONSTANT_OF_SHAPE) {
        uint64_t bits = 0;
        const struct ir_attr *a = ir_attr_find(n, "value");
        if (a) {
            if (a->type != IR_ATTR_TENSOR || !ir_is_const(g, a->tensor))
                ir_fatal_node(g, n, "ConstantOfShape: value attribute is not a tensor");
            const struct ir_value *cv = &g->values[a->tensor];
            if (cv->dtype != yv->dtype || cv->nbytes < ir_dtype_size(cv->dtype) ||
                ir_dtype_size(cv->dtype) > 8)
                ir_fatal_node(g, n, "ConstantOfShape: value tensor (%s, %zu bytes) does not match "
                              "the output type %s", ir_dtype_name(cv->dtype), cv->nbytes,
                              ir_dtype_name(yv->dtype));
            const uint8_t *p = cv->data;
            for (size_t i = 0; i < ir_dtype_size(cv->dtype); i++) bits |= (uint64_t)p[i] << (8 * i);
        }
        ka_fill(cg, g, node, y, bits);
        return true;
    }
    if (n->op == IR_OP_EYE_LIKE) {
        if (yv->rank != 2) ir_fatal_node(g, n, "EyeLike: output rank %d (must be 2)", yv->rank);
        int64_t k = ir_attr_int(n, "k", 0);
        const int64_t R = yv->dims[0], C = yv->dims[1];
        if (k > C) k = C;
        if (k < -R) k = -R;
        const char *sfx = cg_use(cg, "fill", ka_size_type(g, node, yv->dtype));
        snprintf(kname, sizeof kname, "eye_%s", sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, cnt);
        cg_arg_i32(cg, C);
        cg_arg_i32(cg, k);
        cg_arg_i64(cg, (int64_t)one_bits(yv->dtype));
        return true;
    }
    if (n->op == IR_OP_RANGE) {
        const enum ir_dtype t = yv->dtype;
        if (!(t == IR_F32 || t == IR_F64 || t == IR_F16 || t == IR_I32 || t == IR_I64 ||
              t == IR_I16 || t == IR_I8 || t == IR_U8 || t == IR_U16 || t == IR_U32 || t == IR_U64))
            ir_fatal_node(g, n, "Range: element type %s is not supported", ir_dtype_name(t));
        const char *sfx = cg_use(cg, "fill", t);
        snprintf(kname, sizeof kname, "range_%s", sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, n->inputs[0]);
        cg_arg_buf(cg, n->inputs[2]);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, cnt);
        return true;
    }
    return false;
}
