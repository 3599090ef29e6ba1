/* lower_binary.c — binary and variadic elementwise ops with numpy broadcasting (ops.def family
 * "binary") -> kernels/binary.cl.
 *
 * Each pairwise step is one launch over the output shape: the same-shape kernel <op>_<T> when
 * both operands already have the output's dims, else <op>_bc_<T> with the iteration space
 * collapsed (size-1 axes dropped, axes merged where output and both inputs are contiguous) and
 * per-input strides (0 on broadcast axes). Variadic Min/Max/Sum/Mean chain the steps in place
 * in the output (y = op(x0, x1); y = op(y, x2); ...); Mean then scales by 1/count; one input is
 * a copy. Pow with a constant scalar exponent 2 becomes x*x.
 * Types: all inputs share one element type, except Pow-12+'s exponent (output: the base's type):
 * an exponent of another type is cast on the device into a scratch buffer when needed (cast
 * family) and read by powl_<T> (integer exponents as long; uint64 as its bits, flag uns),
 * pow_<T> (float T = f32/f64, float exponents cast to T) or powf_<T> (f16 and integer T, float
 * exponents as float; a float64 exponent is rounded to float there). Mod fmod=0 on floats is
 * numpy.mod (opset 28 allows it; sign of the divisor); And/Or/Xor for bool; comparisons output
 * bool; BitwiseAnd/Or/Xor-18 and BitShift-11/28 (direction LEFT|RIGHT) for integer types.
 * A large float32 constant second operand (cg_weight_operand_ok) stored as half under
 * --weights-dtype f16 is first cast to float32 into a scratch buffer (one more launch).
 * Fatal (located) for anything else, naming the op and the type.
 */
#include "lower_ka.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_float(enum ir_dtype t)
{
    return t == IR_F32 || t == IR_F64 || t == IR_F16;
}

static bool same_dims(const struct ir_value *a, const struct ir_value *b)
{
    if (a->rank != b->rank) return false;
    for (int k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

/* One launch y = base(a, b) over y's shape; b's data is read from the buffer of value bbuf
 * (b itself, or a converted copy of b with b's element count). */
static void emit_pair_buf(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, const char *base,
                          const char *sfx, uint32_t a, uint32_t b, uint32_t bbuf, uint32_t y,
                          int64_t cnt)
{
    const struct ir_value *yv = &g->values[y];
    char kname[64];
    if (same_dims(&g->values[a], yv) && same_dims(&g->values[b], yv)) {
        snprintf(kname, sizeof kname, "%s_%s", base, sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, a);
        cg_arg_buf(cg, bbuf);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, cnt);
        return;
    }
    int64_t dims[IR_MAX_RANK * 2];
    int64_t s[3][IR_MAX_RANK * 2];
    const int rank = yv->rank;
    for (int k = 0; k < rank; k++) dims[k] = yv->dims[k];
    ka_bcast_strides(g, node, a, rank, dims, s[0]);
    ka_bcast_strides(g, node, b, rank, dims, s[1]);
    ka_dense_strides(rank, dims, s[2]);
    const int r = ka_collapse(rank, dims, 3, s);
    if (r > KA_EW_RANK)
        ir_fatal_node(g, &g->nodes[node], "%s: broadcasting needs %d non-mergeable axes (the "
                      "kernels handle %d)", ir_op_name(g->nodes[node].op), r, KA_EW_RANK);
    /* rows of the innermost axis, split in KA_CH-element chunks (kernels/binary.cl) */
    const int64_t inner = dims[r - 1], nch = (inner + KA_CH - 1) / KA_CH;
    const int64_t nitems = nch * (cnt / inner);
    snprintf(kname, sizeof kname, "%s_bc_%s", base, sfx);
    ka_launch(cg, node, kname, nitems);
    cg_arg_buf(cg, a);
    cg_arg_buf(cg, bbuf);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, nitems);
    cg_arg_i32(cg, inner);
    cg_arg_i32(cg, nch);
    for (int k = 0; k < KA_EW_RANK - 1; k++) {
        const int j = k - (KA_EW_RANK - r);
        cg_arg_i32(cg, j >= 0 ? dims[j] : 1);
    }
    for (int which = 0; which < 2; which++)
        for (int k = 0; k < KA_EW_RANK; k++) {
            const int j = k - (KA_EW_RANK - r);
            cg_arg_i32(cg, j >= 0 ? s[which][j] : 0);
        }
}

/* One launch y = base(a, b) over y's shape. */
static void emit_pair(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, const char *base,
                      const char *sfx, uint32_t a, uint32_t b, uint32_t y, int64_t cnt)
{
    emit_pair_buf(cg, g, node, base, sfx, a, b, b, y, cnt);
}

/* Kernel-name suffix of the cast destinations used below. */
static const char *cast_sfx(enum ir_dtype t)
{
    return t == IR_I64 ? "i64" : t == IR_F64 ? "f64" : "f32";
}

/* Pow-12+ with an exponent type other than the base's dt (see the banner): converts the
 * exponent when needed, then one powl/pow/powf launch. */
static void emit_pow_mixed(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, const char *sfx,
                           enum ir_dtype dt, int64_t cnt)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t a = n->inputs[0], b = n->inputs[1], y = n->outputs[0];
    const enum ir_dtype et = g->values[b].dtype;
    if (et == IR_BOOL || et == IR_BF16 || et == IR_STRING || ir_dtype_size(et) == 0)
        ir_fatal_node(g, n, "Pow: exponent element type %s is not supported (base %s)",
                      ir_dtype_name(et), ir_dtype_name(dt));
    enum ir_dtype want;
    const char *base;
    if (!is_float(et)) {
        want = et == IR_U64 ? IR_U64 : IR_I64;
        base = "powl";
    } else if (dt == IR_F32 || dt == IR_F64) {
        want = dt;
        base = "pow";
    } else {
        want = IR_F32;
        base = "powf";
    }
    uint32_t bbuf = b;
    if (et != want) {
        const int64_t bn = ka_numel(g, node, b);
        bbuf = cg_temp(cg, node, want, bn); /* may move g->values: no pointer into it is held */
        char kname[64];
        snprintf(kname, sizeof kname, "cast_to_%s_%s", cast_sfx(want), cg_use(cg, "cast", et));
        ka_launch(cg, node, kname, bn);
        cg_arg_buf(cg, b);
        cg_arg_buf(cg, bbuf);
        cg_arg_i32(cg, bn);
    }
    emit_pair_buf(cg, g, node, base, sfx, a, b, bbuf, y, cnt);
    if (strcmp(base, "powl") == 0) cg_arg_i32(cg, et == IR_U64);
}

bool lower_binary(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t y = n->outputs[0];
    const uint32_t a = n->inputs[0];
    const enum ir_dtype dt = g->values[a].dtype;
    for (uint32_t k = 1; k < n->ninputs; k++) {
        const uint32_t v = n->inputs[k];
        if (v == IR_NONE)
            ir_fatal_node(g, n, "%s: input %u is absent", ir_op_name(n->op), k);
        if (g->values[v].dtype != dt && n->op != IR_OP_POW)
            ir_fatal_node(g, n, "%s: input %u has element type %s but input 0 has %s (mixed "
                          "types are not supported)", ir_op_name(n->op), k,
                          ir_dtype_name(g->values[v].dtype), ir_dtype_name(dt));
    }
    const char *base = NULL;
    bool need_bool = false, bool_ok = false, float_only = false, int_only = false;
    switch (n->op) {
    case IR_OP_ADD: case IR_OP_SUM: case IR_OP_MEAN: base = "add"; break;
    case IR_OP_SUB: base = "sub"; break;
    case IR_OP_MUL: base = "mul"; break;
    case IR_OP_DIV: base = "div"; break;
    case IR_OP_POW: base = "pow"; break;
    case IR_OP_PRELU: base = "prelu"; break;
    case IR_OP_MIN: base = "min"; break;
    case IR_OP_MAX: base = "max"; break;
    case IR_OP_MOD: {
        const int64_t fm = ir_attr_int(n, "fmod", 0);
        if (fm != 0 && fm != 1) ir_fatal_node(g, n, "Mod: fmod=%lld (must be 0 or 1)", (long long)fm);
        base = fm ? "fmod" : "mod";
        break;
    }
    case IR_OP_EQUAL: base = "equal"; bool_ok = true; break;
    case IR_OP_GREATER: base = "greater"; break;
    case IR_OP_GREATER_OR_EQUAL: base = "greater_equal"; break;
    case IR_OP_LESS: base = "less"; break;
    case IR_OP_LESS_OR_EQUAL: base = "less_equal"; break;
    case IR_OP_AND: base = "and"; need_bool = true; break;
    case IR_OP_OR: base = "or"; need_bool = true; break;
    case IR_OP_XOR: base = "xor"; need_bool = true; break;
    case IR_OP_BITWISE_AND: base = "bit_and"; int_only = true; break;
    case IR_OP_BITWISE_OR: base = "bit_or"; int_only = true; break;
    case IR_OP_BITWISE_XOR: base = "bit_xor"; int_only = true; break;
    case IR_OP_BIT_SHIFT: {
        const char *dir = ir_attr_string(n, "direction", "");
        if (strcmp(dir, "LEFT") == 0) base = "shift_left";
        else if (strcmp(dir, "RIGHT") == 0) base = "shift_right";
        else ir_fatal_node(g, n, "BitShift: direction='%s' is not supported (LEFT, RIGHT)", dir);
        int_only = true;
        break;
    }
    default: return false;
    }
    if (n->op == IR_OP_MEAN) float_only = true;
    bool ok = need_bool ? dt == IR_BOOL
                        : (dt == IR_BOOL ? bool_ok : (ir_dtype_size(dt) > 0 && dt != IR_BF16 &&
                                                      dt != IR_STRING));
    if (ok && float_only) ok = is_float(dt);
    if (ok && int_only) ok = !is_float(dt) && dt != IR_BOOL;
    if (!ok)
        ir_fatal_node(g, n, "%s: element type %s is not supported by the OpenCL kernels",
                      ir_op_name(n->op), ir_dtype_name(dt));
    const int64_t cnt = ka_numel(g, node, y);
    for (uint32_t k = 0; k < n->ninputs; k++) ka_numel(g, node, n->inputs[k]);
    if (cnt == 0) return true;
    const char *sfx = cg_use(cg, "binary", dt);
    char kname[64];
    if (n->ninputs == 1) {
        snprintf(kname, sizeof kname, "copy_%s", sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, a);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, cnt);
        return true;
    }
    const uint32_t b = n->inputs[1];
    if (n->op == IR_OP_POW && is_float(dt) && ir_is_const(g, b) && ir_numel(g, b) == 1 &&
        ir_const_f64(g, b, 0) == 2.0 && same_dims(&g->values[a], &g->values[y])) {
        emit_pair(cg, g, node, "mul", sfx, a, a, y, cnt);
        return true;
    }
    if (n->op == IR_OP_POW && g->values[b].dtype != dt) {
        emit_pow_mixed(cg, g, node, sfx, dt, cnt);
        return true;
    }
    if (n->ninputs == 2 && dt == IR_F32 && cg_weight_operand_ok(g, b)) {
        /* a large constant second operand (position embeddings) is a weight of the storage
         * dtype; stored as half (--weights-dtype f16) it is expanded into a float32 scratch
         * buffer by one cast launch, then the usual kernel runs */
        const uint32_t h = cg_weight_operand(cg, b);
        if (g->values[h].dtype == IR_F16) {
            const int64_t bn = ka_numel(g, node, b);
            const uint32_t bbuf = cg_temp(cg, node, IR_F32, bn);
            snprintf(kname, sizeof kname, "cast_to_f32_%s", cg_use(cg, "cast", IR_F16));
            ka_launch(cg, node, kname, bn);
            cg_arg_buf(cg, h);
            cg_arg_buf(cg, bbuf);
            cg_arg_i32(cg, bn);
            emit_pair_buf(cg, g, node, base, sfx, a, b, bbuf, y, cnt);
            return true;
        }
    }
    emit_pair(cg, g, node, base, sfx, a, b, y, cnt);
    for (uint32_t k = 2; k < n->ninputs; k++) emit_pair(cg, g, node, base, sfx, y, n->inputs[k], y, cnt);
    if (n->op == IR_OP_MEAN) {
        snprintf(kname, sizeof kname, "scale_%s", sfx);
        ka_launch(cg, node, kname, cnt);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, cnt);
        cg_arg_f32(cg, (float)(1.0 / (double)n->ninputs));
        return true;
    }
    return true;
}
