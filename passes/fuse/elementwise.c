/* fuse_elementwise.c — connected elementwise ops become one o2c.Elementwise (elementwise).
 *
 * Pattern: a tree of supported elementwise nodes whose inner values have one use and are not
 * graph outputs (fuse_chain_ok), grown from a root towards its producers:
 *   f(g(x, c), h(y)) ... -> o2c.Elementwise(x, y, ...){program}
 * Leaves are values not absorbed: scalar constants (every element equal) become literals of
 * the program, every other leaf (graph inputs, activations, small constant tensors such as a
 * [C,1,1] bias) a buffer input read with numpy broadcasting to the root's dims (broadcasts
 * compose, so each leaf maps straight onto the root's index space). A value read twice (x in
 * Mul(x, Sigmoid(x))) is one input.
 * Supported (float32 in and out; Where's condition may be bool): Abs Neg Exp Log Sqrt
 * Reciprocal Sigmoid Tanh Sin Cos Erf Relu Floor Ceil Round Sign Softplus Softsign Elu
 * LeakyRelu HardSigmoid HardSwish Gelu(none|tanh), Add Sub Mul Div Pow PRelu Min Max Sum,
 * Where, Clip (constant scalar bounds), Cast/CastLike to float32 from float32.
 * Trees of one node are left alone (no launch saved).
 *
 * Program (attributes of the new node; interpreted by codegen/lower_felem.c): "program" INTS,
 * groups of 4 (kind, a, b, c) in RPN order over a value stack:
 *   kind -1: push input a;  kind -2: push constants[a];
 *   kind = enum ir_op value (>= 0): pop a operands (the last pushed is the last operand), push
 *     op(operands); b = index of the op's float parameters in "constants" (-1 none: Elu alpha,
 *     LeakyRelu alpha, HardSigmoid alpha beta, Clip lo hi), c = int parameter (Gelu: 1 = tanh;
 *     Clip: bit 0 has lo, bit 1 has hi).
 * "constants" FLOATS holds literals and parameters. The enum values are only meaningful inside
 * one onnx2cl run (never serialized).
 * Assumes shape inference ran. Guarantees: the root's output value id is kept.
 */
#include "passes/fuse/fuse.h"

#include <string.h>

#define EL_MAX_INS 16   /* buffer inputs of one fused kernel */
#define EL_MAX_INSTR 96 /* instructions of one program */
#define EL_MAX_CONST 96 /* literals and parameters */

struct el_prog {
    int64_t code[EL_MAX_INSTR * 4]; /* program (see banner) */
    int ninstr;
    float consts[EL_MAX_CONST];     /* literals and parameters */
    int nconst;
    uint32_t ins[EL_MAX_INS];       /* buffer inputs */
    int nins;
    uint32_t nodes[EL_MAX_INSTR];   /* absorbed nodes */
    int nnodes;
    uint32_t inner[EL_MAX_INSTR];   /* absorbed intermediate values */
    int ninner;
    bool overflow;                  /* a limit was hit */
};

/* Whether node n is an op this pass fuses (dtype and attribute checks included). */
static bool supported(const struct ir_graph *g, const struct ir_node *n)
{
    if (n->dead || !(ir_op_flags(n->op) & IR_F_ELEMWISE) || n->noutputs != 1) return false;
    if (g->values[n->outputs[0]].dtype != IR_F32 || !g->values[n->outputs[0]].dims_known) return false;
    for (uint32_t k = 0; k < n->ninputs; k++) {
        uint32_t v = n->inputs[k];
        if (v == IR_NONE) {
            if (n->op == IR_OP_CLIP) continue;
            return false;
        }
        enum ir_dtype t = g->values[v].dtype;
        if (n->op == IR_OP_WHERE && k == 0 ? t != IR_BOOL : t != IR_F32) return false;
    }
    switch (n->op) {
    case IR_OP_ABS: case IR_OP_NEG: case IR_OP_EXP: case IR_OP_LOG: case IR_OP_SQRT:
    case IR_OP_RECIPROCAL: case IR_OP_SIGMOID: case IR_OP_TANH: case IR_OP_SIN: case IR_OP_COS:
    case IR_OP_ERF: case IR_OP_RELU: case IR_OP_FLOOR: case IR_OP_CEIL: case IR_OP_ROUND:
    case IR_OP_SIGN: case IR_OP_SOFTPLUS: case IR_OP_SOFTSIGN: case IR_OP_ELU:
    case IR_OP_LEAKY_RELU: case IR_OP_HARD_SIGMOID: case IR_OP_HARD_SWISH:
    case IR_OP_ADD: case IR_OP_SUB: case IR_OP_MUL: case IR_OP_DIV: case IR_OP_POW:
    case IR_OP_PRELU: case IR_OP_MIN: case IR_OP_MAX: case IR_OP_SUM: case IR_OP_WHERE:
    case IR_OP_CAST: case IR_OP_CAST_LIKE:
        return true;
    case IR_OP_GELU: {
        const char *ap = ir_attr_string(n, "approximate", "none");
        return strcmp(ap, "none") == 0 || strcmp(ap, "tanh") == 0;
    }
    case IR_OP_CLIP: {
        double d;
        for (uint32_t k = 1; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE && !fuse_const_scalar(g, n->inputs[k], &d)) return false;
        return true;
    }
    default: return false;
    }
}

static int add_const(struct el_prog *p, float v)
{
    for (int i = 0; i < p->nconst; i++)
        if (memcmp(&p->consts[i], &v, sizeof v) == 0) return i;
    if (p->nconst >= EL_MAX_CONST) {
        p->overflow = true;
        return 0;
    }
    p->consts[p->nconst] = v;
    return p->nconst++;
}

static void emit(struct el_prog *p, int64_t kind, int64_t a, int64_t b, int64_t c)
{
    if (p->ninstr >= EL_MAX_INSTR) {
        p->overflow = true;
        return;
    }
    int64_t *q = &p->code[p->ninstr++ * 4];
    q[0] = kind, q[1] = a, q[2] = b, q[3] = c;
}

/* Pushes value v: absorbs its producer if legal, else a literal or a buffer input. */
static void push_value(const struct ir_graph *g, const bool *claimed, struct el_prog *p, uint32_t v);

static void absorb(const struct ir_graph *g, const bool *claimed, struct el_prog *p, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (p->nnodes >= EL_MAX_INSTR) {
        p->overflow = true;
        return;
    }
    p->nodes[p->nnodes++] = node;
    int64_t b = -1, c = 0;
    int nops = (int)n->ninputs;
    switch (n->op) {
    case IR_OP_CLIP: {
        double lo = 0, hi = 0;
        uint32_t vlo = ir_input(n, 1), vhi = ir_input(n, 2);
        if (vlo != IR_NONE) fuse_const_scalar(g, vlo, &lo), c |= 1;
        if (vhi != IR_NONE) fuse_const_scalar(g, vhi, &hi), c |= 2;
        if (p->nconst + 2 > EL_MAX_CONST) p->overflow = true;
        else {
            b = p->nconst; /* lo, hi adjacent */
            p->consts[p->nconst++] = (float)lo;
            p->consts[p->nconst++] = (float)hi;
        }
        nops = 1;
        break;
    }
    case IR_OP_ELU:
        b = p->nconst < EL_MAX_CONST ? p->nconst : 0;
        if (p->nconst < EL_MAX_CONST) p->consts[p->nconst++] = ir_attr_float(n, "alpha", 1.0f);
        else p->overflow = true;
        break;
    case IR_OP_LEAKY_RELU:
        b = p->nconst < EL_MAX_CONST ? p->nconst : 0;
        if (p->nconst < EL_MAX_CONST) p->consts[p->nconst++] = ir_attr_float(n, "alpha", 0.01f);
        else p->overflow = true;
        break;
    case IR_OP_HARD_SIGMOID:
        if (p->nconst + 2 > EL_MAX_CONST) p->overflow = true;
        else {
            b = p->nconst;
            p->consts[p->nconst++] = ir_attr_float(n, "alpha", 0.2f);
            p->consts[p->nconst++] = ir_attr_float(n, "beta", 0.5f);
        }
        break;
    case IR_OP_GELU: c = strcmp(ir_attr_string(n, "approximate", "none"), "tanh") == 0; break;
    case IR_OP_CAST_LIKE: nops = 1; break;
    default: break;
    }
    for (int k = 0; k < nops; k++) push_value(g, claimed, p, n->inputs[k]);
    emit(p, (int64_t)n->op, nops, b, c);
}

static void push_value(const struct ir_graph *g, const bool *claimed, struct el_prog *p, uint32_t v)
{
    uint32_t prod = fuse_producer(g, v, IR_OP_UNKNOWN);
    if (prod != IR_NONE && supported(g, &g->nodes[prod]) && !claimed[prod] &&
        !g->values[v].is_output && g->values[v].nuses == 1 && p->ninner < EL_MAX_INSTR) {
        p->inner[p->ninner++] = v;
        absorb(g, claimed, p, prod);
        return;
    }
    double d;
    if (g->values[v].dtype == IR_F32 && fuse_const_scalar(g, v, &d)) {
        emit(p, -2, add_const(p, (float)d), -1, 0);
        return;
    }
    for (int i = 0; i < p->nins; i++)
        if (p->ins[i] == v) {
            emit(p, -1, i, -1, 0);
            return;
        }
    if (p->nins >= EL_MAX_INS) {
        p->overflow = true;
        return;
    }
    p->ins[p->nins] = v;
    emit(p, -1, p->nins++, -1, 0);
}

bool pass_fuse_elementwise(struct ir_graph *g)
{
    /* fused nodes get new ids (at most one per original node): room for both */
    bool *claimed = ir_alloc(g, 2 * (size_t)g->nnodes + 1);
    struct el_prog *p = ir_alloc(g, sizeof *p);
    bool changed = false;
    const uint32_t nn = g->nnodes;
    for (uint32_t r = nn; r-- > 0;) {
        if (claimed[r] || !supported(g, &g->nodes[r])) continue;
        memset(p, 0, sizeof *p);
        absorb(g, claimed, p, r);
        if (p->nnodes < 2) continue;
        const char *why = NULL;
        if (p->overflow) {
            fuse_note("elementwise", false, "program too large (inputs/instructions/constants)");
            continue;
        }
        if (!fuse_chain_ok(g, p->inner, p->ninner, &why)) {
            fuse_note("elementwise", false, why);
            continue;
        }
        for (int i = 0; i < p->nnodes; i++) claimed[p->nodes[i]] = true;
        /* old nodes in program order (producers first), root last */
        uint32_t old[EL_MAX_INSTR];
        for (int i = 0; i < p->nnodes; i++) old[i] = p->nodes[p->nnodes - 1 - i];
        uint32_t out = g->nodes[r].outputs[0];
        uint32_t id = fuse_replace(g, IR_OP_FUSED_ELEMENTWISE, old, p->nnodes, p->ins,
                                   (uint32_t)p->nins, &out, 1);
        ir_attr_set_ints(g, id, "program", p->code, (size_t)p->ninstr * 4);
        /* FLOATS attribute: no setter in ir.h; stored through the ints of their bit patterns */
        int64_t bits[EL_MAX_CONST];
        for (int i = 0; i < p->nconst; i++) {
            uint32_t u;
            memcpy(&u, &p->consts[i], 4);
            bits[i] = u;
        }
        ir_attr_set_ints(g, id, "constants", bits, (size_t)p->nconst);
        fuse_note("elementwise", true, NULL);
        changed = true;
    }
    return changed;
}
