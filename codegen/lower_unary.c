/* lower_unary.c — unary elementwise ops (ops.def family "unary") -> kernels/unary.cl.
 *
 * One launch y[i] = f(x[i]) over numel(x) elements, x and y dense with the same shape.
 * Attributes (ONNX defaults): Elu/Celu alpha 1, Selu alpha 1.67326.., gamma 1.0507..,
 * LeakyRelu alpha 0.01, ThresholdedRelu alpha 1, HardSigmoid alpha 0.2 beta 0.5, Gelu
 * approximate "none"|"tanh", IsInf detect_negative/detect_positive 1.
 * Types: float32/float64/float16 for every op but BitwiseNot; integer types for Abs Neg Sign Relu
 * BitwiseNot; bool for Not.
 * Anything else is a located fatal error naming op and type.
 */
#include "lower_ka.h"

#include <stdio.h>
#include <string.h>

/* Kernel base name for an op, or NULL. *int_ok: the op also exists for integer types. */
static const char *unary_kernel(enum ir_op op, bool *int_ok)
{
    *int_ok = false;
    switch (op) {
    case IR_OP_ABS: *int_ok = true; return "abs";
    case IR_OP_NEG: *int_ok = true; return "neg";
    case IR_OP_SIGN: *int_ok = true; return "sign";
    case IR_OP_RELU: *int_ok = true; return "relu";
    case IR_OP_EXP: return "exp";
    case IR_OP_LOG: return "log";
    case IR_OP_SQRT: return "sqrt";
    case IR_OP_RECIPROCAL: return "reciprocal";
    case IR_OP_SIGMOID: return "sigmoid";
    case IR_OP_TANH: return "tanh";
    case IR_OP_SIN: return "sin";
    case IR_OP_COS: return "cos";
    case IR_OP_TAN: return "tan";
    case IR_OP_ASIN: return "asin";
    case IR_OP_ACOS: return "acos";
    case IR_OP_ATAN: return "atan";
    case IR_OP_SINH: return "sinh";
    case IR_OP_COSH: return "cosh";
    case IR_OP_ASINH: return "asinh";
    case IR_OP_ACOSH: return "acosh";
    case IR_OP_ATANH: return "atanh";
    case IR_OP_ERF: return "erf";
    case IR_OP_FLOOR: return "floor";
    case IR_OP_CEIL: return "ceil";
    case IR_OP_ROUND: return "round";
    case IR_OP_SOFTPLUS: return "softplus";
    case IR_OP_SOFTSIGN: return "softsign";
    case IR_OP_ELU: return "elu";
    case IR_OP_SELU: return "selu";
    case IR_OP_CELU: return "celu";
    case IR_OP_LEAKY_RELU: return "leaky_relu";
    case IR_OP_THRESHOLDED_RELU: return "thresholded_relu";
    case IR_OP_HARD_SIGMOID: return "hard_sigmoid";
    case IR_OP_HARD_SWISH: return "hard_swish";
    case IR_OP_MISH: return "mish";
    case IR_OP_GELU: return "gelu";
    case IR_OP_ISNAN: return "isnan";
    case IR_OP_ISINF: return "isinf";
    case IR_OP_NOT: return "not";
    case IR_OP_BITWISE_NOT: *int_ok = true; return "bit_not";
    default: return NULL;
    }
}

static bool is_float(enum ir_dtype t)
{
    return t == IR_F32 || t == IR_F64 || t == IR_F16;
}

bool lower_unary(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const enum ir_dtype dt = g->values[x].dtype;
    bool int_ok;
    const char *base = unary_kernel(n->op, &int_ok);
    if (!base) return false;
    float alpha = 0.0f, beta = 0.0f;
    switch (n->op) {
    case IR_OP_ELU:
    case IR_OP_CELU:
    case IR_OP_THRESHOLDED_RELU: alpha = ir_attr_float(n, "alpha", 1.0f); break;
    case IR_OP_LEAKY_RELU: alpha = ir_attr_float(n, "alpha", 0.01f); break;
    case IR_OP_SELU:
        alpha = ir_attr_float(n, "alpha", 1.67326319217681884765625f);
        beta = ir_attr_float(n, "gamma", 1.05070102214813232421875f);
        break;
    case IR_OP_HARD_SIGMOID:
        alpha = ir_attr_float(n, "alpha", 0.2f);
        beta = ir_attr_float(n, "beta", 0.5f);
        break;
    case IR_OP_ISINF:
        alpha = ir_attr_int(n, "detect_negative", 1) ? 1.0f : 0.0f;
        beta = ir_attr_int(n, "detect_positive", 1) ? 1.0f : 0.0f;
        break;
    case IR_OP_GELU: {
        const char *ap = ir_attr_string(n, "approximate", "none");
        if (strcmp(ap, "tanh") == 0) base = "gelu_tanh";
        else if (strcmp(ap, "none") != 0)
            ir_fatal_node(g, n, "Gelu: approximate='%s' is not supported (none, tanh)", ap);
        break;
    }
    default: break;
    }
    if (n->op == IR_OP_CELU && alpha == 0.0f)
        ir_fatal_node(g, n, "Celu: alpha=0 divides by zero");
    bool ok;
    if (n->op == IR_OP_NOT) ok = dt == IR_BOOL;
    else if (is_float(dt)) ok = n->op != IR_OP_BITWISE_NOT;
    else ok = int_ok && dt != IR_BOOL && ir_dtype_size(dt) > 0 && dt != IR_BF16;
    if (!ok)
        ir_fatal_node(g, n, "%s: element type %s is not supported by the OpenCL kernels",
                      ir_op_name(n->op), ir_dtype_name(dt));
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    const char *sfx = cg_use(cg, "unary", dt);
    char kname[64];
    snprintf(kname, sizeof kname, "%s_%s", base, sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_f32(cg, alpha);
    cg_arg_f32(cg, beta);
    return true;
}
