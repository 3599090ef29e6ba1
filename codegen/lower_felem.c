/* lower_felem.c — o2c.Elementwise (passes/fuse/elementwise.c) -> one generated OpenCL kernel.
 *
 * The node's program (RPN, see the banner of passes/fuse/elementwise.c) becomes C expression
 * text; the kernel is named felem_<64-bit FNV-1a hash of its text> and added with
 * cg_add_source, so equal programs on equally classified inputs share one kernel.
 * Index space: the output's dims, collapsed (size-1 axes dropped, neighbouring axes merged
 * where every input is contiguous or broadcast across both); 2-D launch: gws[0] = innermost
 * dim, gws[1] = product of the others (exact, no bounds checks). Each input is read
 *   dense:  in[i]            (its broadcast strides equal the output's)
 *   scalar: in[0]            (broadcast along every axis)
 *   strided: in[sum c_j * s_j] with s_j passed as int arguments (0 on broadcast axes);
 * the classification is part of the text, dims and strides are arguments.
 * Semantics match the unfused kernels (kernels/unary.cl, binary.cl, where.cl, clip.cl):
 * NaN-propagating relu/min/max/clip, erf by the same rational approximation (ka_erf_f, no erf()
 * call), Pow with a literal 2 as x*x. Literals are emitted bit-exact (as_float(0x...u)).
 * Float32 values; bool inputs (Where's condition) read as uchar != 0; large float32 constants
 * (cg_weight_operand_ok: position embeddings) as half with vload_half under --weights-dtype f16.
 * Fatal (located) for malformed programs, more than O2C_FE_RANK collapsed axes or >= 2^31
 * elements.
 */
#include "codegen/lower.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FE_RANK 8   /* collapsed axes the generated index math handles */
#define FE_STACK 64 /* expression stack depth */

/* Growing text buffer (heap; freed before returning). */
struct sbuf {
    char *s;
    size_t n, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->s ? b->s + b->n : NULL, room, fmt, ap);
        va_end(ap);
        IR_ASSERT(k >= 0);
        if ((size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
        IR_ASSERT(b->s != NULL);
    }
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Literal text of a float, bit-exact (NaN/Inf included). */
static void lit(char *out, size_t cap, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    snprintf(out, cap, "as_float(0x%08xu)", u);
}

bool lower_felem(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t y = n->outputs[0];
    const struct ir_value *yv = &g->values[y];
    size_t ncode = 0, nconst = 0;
    const int64_t *code = ir_attr_ints(n, "program", &ncode);
    const int64_t *cbits = ir_attr_ints(n, "constants", &nconst);
    if (!code || ncode % 4 != 0 || yv->dtype != IR_F32)
        ir_fatal_node(g, n, "o2c.Elementwise: malformed node (program missing or output not "
                      "float32)");
    float *consts = calloc(nconst + 1, sizeof(float));
    for (size_t i = 0; i < nconst; i++) {
        uint32_t u = (uint32_t)cbits[i];
        memcpy(&consts[i], &u, 4);
    }
    const int64_t total = ir_numel(g, y);
    if (total >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "o2c.Elementwise: %lld elements (the kernel indexes with 32-bit "
                      "ints)", (long long)total);
    if (total == 0) {
        free(consts);
        return true;
    }
    /* broadcast strides of every input onto the output dims, then collapse */
    const uint32_t nin = n->ninputs;
    int rank = yv->rank;
    int64_t d[IR_MAX_RANK];
    int64_t (*st)[IR_MAX_RANK] = calloc(nin + 1, sizeof *st);
    for (int k = 0; k < rank; k++) d[k] = yv->dims[k];
    for (uint32_t i = 0; i < nin; i++) {
        const struct ir_value *v = &g->values[n->inputs[i]];
        if (v->dtype != IR_F32 && v->dtype != IR_BOOL)
            ir_fatal_node(g, n, "o2c.Elementwise: input '%s' is %s (float32/bool only)", v->name,
                          ir_dtype_name(v->dtype));
        if (v->rank > rank)
            ir_fatal_node(g, n, "o2c.Elementwise: input '%s' has higher rank than the output",
                          v->name);
        int64_t s = 1;
        for (int k = rank - 1; k >= 0; k--) {
            int j = k - (rank - v->rank);
            int64_t dk = j >= 0 ? v->dims[j] : 1;
            if (dk != 1 && dk != d[k])
                ir_fatal_node(g, n, "o2c.Elementwise: input '%s' does not broadcast to the "
                              "output", v->name);
            st[i][k] = dk == 1 ? 0 : s;
            s *= dk;
        }
    }
    /* drop size-1 axes */
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (d[k] == 1) continue;
        d[r] = d[k];
        for (uint32_t i = 0; i < nin; i++) st[i][r] = st[i][k];
        r++;
    }
    /* merge axis k into k-1 where every input is contiguous (s[k-1] == s[k]*d[k]) */
    int m = 0;
    for (int k = 0; k < r; k++) {
        bool ok = m > 0;
        for (uint32_t i = 0; ok && i < nin; i++) ok = st[i][m - 1] == st[i][k] * d[k];
        if (ok) {
            d[m - 1] *= d[k];
            for (uint32_t i = 0; i < nin; i++) st[i][m - 1] = st[i][k];
            continue;
        }
        d[m] = d[k];
        for (uint32_t i = 0; i < nin; i++) st[i][m] = st[i][k];
        m++;
    }
    if (m == 0) {
        d[0] = 1;
        for (uint32_t i = 0; i < nin; i++) st[i][0] = 0;
        m = 1;
    }
    if (m > FE_RANK)
        ir_fatal_node(g, n, "o2c.Elementwise: %d non-mergeable broadcast axes (at most %d)", m,
                      FE_RANK);
    /* classify inputs: 0 dense, 1 scalar, 2 strided */
    int *cls = calloc(nin + 1, sizeof(int));
    bool any_strided = false;
    for (uint32_t i = 0; i < nin; i++) {
        bool dense = true, scalar = true;
        int64_t s = 1;
        for (int k = m - 1; k >= 0; k--) {
            dense &= st[i][k] == s;
            scalar &= st[i][k] == 0;
            s *= d[k];
        }
        cls[i] = dense ? 0 : (scalar ? 1 : 2);
        any_strided |= cls[i] == 2;
    }
    /* large float32 constants (position embeddings) are weights of the storage dtype: read as
     * half under --weights-dtype f16 (cg_weight_operand; vload_half, float arithmetic) */
    uint32_t *arg = calloc(nin + 1, sizeof *arg);
    for (uint32_t i = 0; i < nin; i++)
        arg[i] = cg_weight_operand_ok(g, n->inputs[i]) ? cg_weight_operand(cg, n->inputs[i])
                                                       : n->inputs[i];
    /* kernel text */
    struct sbuf b = {0};
    sb_printf(&b, "__kernel void felem_NAME(");
    for (uint32_t i = 0; i < nin; i++) {
        const enum ir_dtype t = g->values[arg[i]].dtype;
        sb_printf(&b, "__global const %s *in%u, ",
                  t == IR_BOOL ? "uchar" : t == IR_F16 ? "half" : "float", i);
    }
    sb_printf(&b, "__global float *out");
    for (int k = 0; k < m; k++) sb_printf(&b, ", int d%d", k);
    for (uint32_t i = 0; i < nin; i++)
        if (cls[i] == 2)
            for (int k = 0; k < m; k++) sb_printf(&b, ", int s%u_%d", i, k);
    sb_printf(&b, ")\n{\n    const int c%d = (int)get_global_id(0);\n", m - 1);
    sb_printf(&b, "    const int o = (int)get_global_id(1);\n    const int i = o * d%d + c%d;\n",
              m - 1, m - 1);
    if (any_strided && m > 1) {
        sb_printf(&b, "    int r = o;\n");
        for (int k = m - 2; k >= 1; k--) sb_printf(&b, "    const int c%d = r %% d%d; r /= d%d;\n", k, k, k);
        sb_printf(&b, "    const int c0 = r;\n");
    }
    for (uint32_t i = 0; i < nin; i++) {
        bool isb = g->values[arg[i]].dtype == IR_BOOL, ish = g->values[arg[i]].dtype == IR_F16;
        /* in[index], or vload_half(index, in) for a half constant */
        sb_printf(&b, "    const float x%u = %s", i, isb ? "(float)(" : "");
        if (ish) sb_printf(&b, "vload_half(");
        else sb_printf(&b, "in%u[", i);
        if (cls[i] == 0) sb_printf(&b, "i");
        else if (cls[i] == 1) sb_printf(&b, "0");
        else
            for (int k = 0; k < m; k++) sb_printf(&b, "%sc%d * s%u_%d", k ? " + " : "", k, i, k);
        if (ish) sb_printf(&b, ", in%u)", i);
        else sb_printf(&b, "]");
        sb_printf(&b, "%s;\n", isb ? " != 0)" : "");
    }
    /* expression: each instruction result is a named temporary t<j> */
    char stack[FE_STACK][48];
    int sp = 0, nt = 0;
    for (size_t q = 0; q < ncode; q += 4) {
        const int64_t kind = code[q], a = code[q + 1], pb = code[q + 2], pc = code[q + 3];
        if (kind == -1 || kind == -2) {
            if (sp >= FE_STACK || (kind == -1 && (a < 0 || a >= nin)) ||
                (kind == -2 && (a < 0 || (size_t)a >= nconst)))
                ir_fatal_node(g, n, "o2c.Elementwise: malformed program at %zu", q / 4);
            if (kind == -1) snprintf(stack[sp++], sizeof stack[0], "x%lld", (long long)a);
            else lit(stack[sp++], sizeof stack[0], consts[a]);
            continue;
        }
        const enum ir_op op = (enum ir_op)kind;
        if (a < 1 || a > sp || (pb >= 0 && (size_t)pb + 2 > nconst + 1))
            ir_fatal_node(g, n, "o2c.Elementwise: malformed program at %zu", q / 4);
        const char *A = stack[sp - a];
        const char *B = a >= 2 ? stack[sp - a + 1] : "";
        const char *C = a >= 3 ? stack[sp - a + 2] : "";
        char p0[48] = "", p1[48] = "";
        if (pb >= 0) {
            lit(p0, sizeof p0, consts[pb]);
            if ((size_t)pb + 1 < nconst) lit(p1, sizeof p1, consts[pb + 1]);
        }
        if (op == IR_OP_MIN || op == IR_OP_MAX || op == IR_OP_CLIP) {
            /* steps as separate temporaries: t<j>_<k>, the last one named t<j> */
            char acc[48];
            snprintf(acc, sizeof acc, "%s", A);
            const int steps = op == IR_OP_CLIP ? 2 : (int)a - 1;
            for (int k = 1; k <= steps; k++) {
                char nm[48];
                if (k == steps) snprintf(nm, sizeof nm, "t%d", nt);
                else snprintf(nm, sizeof nm, "t%d_%d", nt, k);
                if (op == IR_OP_CLIP) {
                    /* max with lo first, then min with hi (clip.cl order) */
                    const char *bound = k == 1 ? p0 : p1;
                    if (pc & k) sb_printf(&b, "    const float %s = %s %s %s ? %s : %s;\n", nm, acc,
                                          k == 1 ? "<" : ">", bound, bound, acc);
                    else sb_printf(&b, "    const float %s = %s;\n", nm, acc);
                } else {
                    const char *X = stack[sp - a + k];
                    sb_printf(&b, "    const float %s = (%s %s %s || isnan(%s)) ? %s : %s;\n", nm,
                              acc, op == IR_OP_MIN ? "<" : ">", X, acc, acc, X);
                }
                snprintf(acc, sizeof acc, "%s", nm);
            }
            if (steps < 1) sb_printf(&b, "    const float t%d = %s;\n", nt, acc);
            sp -= (int)a;
            snprintf(stack[sp++], sizeof stack[0], "t%d", nt);
            nt++;
            continue;
        }
        sb_printf(&b, "    const float t%d = ", nt);
        switch (op) {
        case IR_OP_ABS: sb_printf(&b, "fabs(%s)", A); break;
        case IR_OP_NEG: sb_printf(&b, "-(%s)", A); break;
        case IR_OP_EXP: sb_printf(&b, "exp(%s)", A); break;
        case IR_OP_LOG: sb_printf(&b, "log(%s)", A); break;
        case IR_OP_SQRT: sb_printf(&b, "sqrt(%s)", A); break;
        case IR_OP_RECIPROCAL: sb_printf(&b, "1.0f / %s", A); break;
        case IR_OP_SIGMOID: sb_printf(&b, "1.0f / (1.0f + exp(-(%s)))", A); break;
        case IR_OP_TANH: sb_printf(&b, "tanh(%s)", A); break;
        case IR_OP_SIN: sb_printf(&b, "sin(%s)", A); break;
        case IR_OP_COS: sb_printf(&b, "cos(%s)", A); break;
        case IR_OP_ERF: sb_printf(&b, "ka_erf_f(%s)", A); break;
        case IR_OP_RELU: sb_printf(&b, "%s < 0.0f ? 0.0f : %s", A, A); break;
        case IR_OP_FLOOR: sb_printf(&b, "floor(%s)", A); break;
        case IR_OP_CEIL: sb_printf(&b, "ceil(%s)", A); break;
        case IR_OP_ROUND: sb_printf(&b, "rint(%s)", A); break;
        case IR_OP_SIGN:
            sb_printf(&b, "%s > 0.0f ? 1.0f : (%s < 0.0f ? -1.0f : %s)", A, A, A);
            break;
        case IR_OP_SOFTPLUS:
            sb_printf(&b, "%s > 0.0f ? %s + log1p(exp(-(%s))) : log1p(exp(%s))", A, A, A, A);
            break;
        case IR_OP_SOFTSIGN: sb_printf(&b, "%s / (1.0f + fabs(%s))", A, A); break;
        case IR_OP_ELU: sb_printf(&b, "%s < 0.0f ? %s * expm1(%s) : %s", A, p0, A, A); break;
        case IR_OP_LEAKY_RELU: sb_printf(&b, "%s < 0.0f ? %s * %s : %s", A, p0, A, A); break;
        case IR_OP_HARD_SIGMOID:
            sb_printf(&b, "fe_clamp01(%s * %s + %s)", p0, A, p1);
            break;
        case IR_OP_HARD_SWISH:
            sb_printf(&b, "%s * fe_clamp01(%s * (float)(1.0 / 6.0) + 0.5f)", A, A);
            break;
        case IR_OP_GELU:
            if (pc == 1)
                sb_printf(&b, "0.5f * %s * (1.0f + tanh(0.79788456080286535588f * (%s + 0.044715f "
                          "* %s * %s * %s)))", A, A, A, A, A);
            else
                sb_printf(&b, "0.5f * %s * (1.0f + ka_erf_f(%s * 0.70710678118654752440f))", A, A);
            break;
        case IR_OP_ADD: case IR_OP_SUB: case IR_OP_MUL: case IR_OP_DIV: {
            const char *o = op == IR_OP_ADD ? "+" : op == IR_OP_SUB ? "-" : op == IR_OP_MUL ? "*" : "/";
            sb_printf(&b, "%s %s %s", A, o, B);
            break;
        }
        case IR_OP_SUM:
            sb_printf(&b, "%s", A);
            for (int64_t k = 1; k < a; k++) sb_printf(&b, " + %s", stack[sp - a + k]);
            break;
        case IR_OP_POW: {
            char two[48];
            lit(two, sizeof two, 2.0f);
            if (strcmp(B, two) == 0) sb_printf(&b, "%s * %s", A, A);
            else sb_printf(&b, "pow(%s, %s)", A, B);
            break;
        }
        case IR_OP_PRELU: sb_printf(&b, "%s < 0.0f ? %s * %s : %s", A, B, A, A); break;
        case IR_OP_WHERE: sb_printf(&b, "%s != 0.0f ? %s : %s", A, B, C); break;
        case IR_OP_CAST: case IR_OP_CAST_LIKE: sb_printf(&b, "%s", A); break;
        default:
            ir_fatal_node(g, n, "o2c.Elementwise: op %s is not supported in a program",
                          ir_op_name(op));
        }
        sb_printf(&b, ";\n");
        sp -= (int)a;
        snprintf(stack[sp++], sizeof stack[0], "t%d", nt);
        nt++;
    }
    if (sp != 1) ir_fatal_node(g, n, "o2c.Elementwise: malformed program (stack depth %d)", sp);
    sb_printf(&b, "    out[i] = %s;\n}\n", stack[0]);
    /* name = hash of the text with the placeholder; helpers first (guarded) */
    char name[40];
    snprintf(name, sizeof name, "felem_%016llx", (unsigned long long)fnv1a(b.s));
    char *at = strstr(b.s, "felem_NAME");
    struct sbuf src = {0};
    /* ka_erf_f comes from kernels/prelude.cl, emitted once at the top of every program */
    sb_printf(&src, "%s", "#ifndef O2C_FE_CLAMP01\n#define O2C_FE_CLAMP01\n"
              "static inline float fe_clamp01(float t) { return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t); }\n"
              "#endif\n");
    sb_printf(&src, "%.*s%s%s", (int)(at - b.s), b.s, name, at + strlen("felem_NAME"));
    cg_add_source(cg, src.s);
    /* launch */
    int64_t outer = 1;
    for (int k = 0; k < m - 1; k++) outer *= d[k];
    const size_t gws[2] = {(size_t)d[m - 1], (size_t)outer};
    cg_launch(cg, node, name, 2, gws, NULL);
    for (uint32_t i = 0; i < nin; i++) cg_arg_buf(cg, arg[i]);
    cg_arg_buf(cg, y);
    for (int k = 0; k < m; k++) cg_arg_i32(cg, d[k]);
    for (uint32_t i = 0; i < nin; i++)
        if (cls[i] == 2)
            for (int k = 0; k < m; k++) cg_arg_i32(cg, st[i][k]);
    free(b.s);
    free(src.s);
    free(cls);
    free(arg);
    free(st);
    free(consts);
    return true;
}
