/* lower_cast.c — Cast-13/19 and CastLike-15 (ops.def family "cast") -> kernels/cast.cl.
 * One launch cast_to_<dst>_<src> over numel elements. Element types: float32, float64, float16,
 * int8/16/32/64, uint8/16/32/64, bool (both directions). Cast-19's saturate only concerns
 * float8 types, which are refused like every other unsupported type, by name. bfloat16 <-> float32
 * (the only bfloat16 casts left after passes/promote_f16.c) use cast_bf16_to_f32 / cast_to_bf16.
 * Semantics (see kernels/cast.cl): float -> int truncates toward zero, int -> int wraps,
 * -> bool is x != 0.
 */
#include "lower_ka.h"

#include <stdio.h>

static const char *suffix_of(enum ir_dtype t)
{
    switch (t) {
    case IR_F32: return "f32";
    case IR_F64: return "f64";
    case IR_F16: return "f16";
    case IR_I8: return "i8";
    case IR_U8: return "u8";
    case IR_I16: return "i16";
    case IR_U16: return "u16";
    case IR_I32: return "i32";
    case IR_U32: return "u32";
    case IR_I64: return "i64";
    case IR_U64: return "u64";
    case IR_BOOL: return "b";
    default: return NULL;
    }
}

bool lower_cast(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const enum ir_dtype src = g->values[x].dtype, dst = g->values[y].dtype;
    if ((src == IR_BF16 && dst == IR_F32) || (src == IR_F32 && dst == IR_BF16)) {
        /* bfloat16 at a promoted model's boundary (passes/promote_f16.c): the bits as ushort */
        const int64_t cnt = ka_numel(g, node, y);
        if (cnt == 0) return true;
        const char *sfx = cg_use(cg, "cast", src == IR_BF16 ? IR_U16 : IR_F32);
        char kname[64];
        snprintf(kname, sizeof kname, "%s_%s", src == IR_BF16 ? "cast_bf16_to_f32" : "cast_to_bf16", sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, cnt);
        return true;
    }
    const char *dsfx = suffix_of(dst);
    if (!suffix_of(src) || !dsfx)
        ir_fatal_node(g, n, "%s from %s to %s is not supported by the OpenCL kernels",
                      ir_op_name(n->op), ir_dtype_name(src), ir_dtype_name(dst));
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    const char *sfx = cg_use(cg, "cast", src);
    char kname[64];
    snprintf(kname, sizeof kname, "cast_to_%s_%s", dsfx, sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    return true;
}
