/* expand_control.c — If, Loop and Scan, unrolled at compile time into copies of their bodies.
 *
 * A static compiler can run control flow whose decisions are known at compile time:
 *   If-1/11/13/16/19/21   condition constant: the taken branch is copied in. Condition known only
 *                         at run time: both branches are copied and each output is
 *                         Where(cond, then, else) — both branches run; their outputs must agree in
 *                         dtype and dims (else a located error naming the graph inputs the condition
 *                         is computed from, which --bind can fix). A branch whose copy fails for the
 *                         bound shapes (a located error of inference or of an expansion inside it,
 *                         caught by an ir_trap; its nodes are erased) is left out: the outputs are
 *                         the other branch's, each behind an o2c.Check that stops the run, naming
 *                         the If, the branch's node and the error, if the condition ever selects
 *                         the branch that does not fit (onnxruntime also fails only then). When
 *                         neither branch fits, a compile-time error names both. Conditions
 *                         computed from shapes only (Not(Equal(Size(Shape(x)), 0))) fold also
 *                         inside a branch copy and after an earlier If (Shape/Size fold in
 *                         infer_fold_node), so they count as constant.
 *   Loop-1/11/13/16/19/21 trip count M constant (or absent) and the condition constant at every
 *                         step (absent, a constant, or a body output that folds to a constant):
 *                         the body is copied once per iteration, iteration_num a constant; scan
 *                         outputs are stacked on a new axis 0 (Unsqueeze + Concat). A run-time
 *                         M or condition is refused: it would decide the output shape at run time.
 *   Scan-8/9/11/16/19/21  unrolled over the sequence length (the scan inputs' dim on their scan
 *                         axis): per step, slice t (t reversed for direction 1) of every scan
 *                         input, run the body on (states, slices), stack the per-step scan outputs
 *                         on their output axis (reversed for direction 1). Scan-8 (batch axis 0,
 *                         optional sequence_lens that must be absent or all full length) runs the
 *                         same per batch entry.
 * Each copy maps the body's template values to new values (struct cf_map); values a body reads
 * from enclosing graphs resolve through the chain of maps, so nested control flow works. At most
 * MAX_COPIES body copies per node and MAX_UNROLLED_NODES nodes in the graph while unrolling (nested
 * loops multiply), so a small model cannot exhaust memory: beyond either, a located error.
 */
#include "passes/expand/expand.h"

#include <setjmp.h>
#include <string.h>

#include "ref/ref_util.h"

#define MAX_COPIES 4096
/* Nested loops multiply: the whole graph may not grow past this many nodes while unrolling. */
#define MAX_UNROLLED_NODES 262144u

/* Template value -> actual value, for one body copy, chained to the enclosing copies. */
struct cf_map {
    const struct cf_map *parent; /* enclosing body copy (NULL = the main graph) */
    uint32_t *from, *to;         /* pairs */
    uint32_t n, cap;             /* used / allocated */
};

static uint32_t map_get(const struct cf_map *m, uint32_t v)
{
    if (v == IR_NONE) return v;
    for (; m; m = m->parent)
        for (uint32_t i = m->n; i-- > 0;)
            if (m->from[i] == v) return m->to[i];
    return v;
}

static void map_put(struct ir_graph *g, struct cf_map *m, uint32_t from, uint32_t to)
{
    if (m->n == m->cap) {
        uint32_t ncap = m->cap ? m->cap * 2 : 32;
        uint32_t *nf = ir_alloc(g, ncap * sizeof *nf), *nt = ir_alloc(g, ncap * sizeof *nt);
        for (uint32_t i = 0; i < m->n; i++) nf[i] = m->from[i], nt[i] = m->to[i];
        m->from = nf;
        m->to = nt;
        m->cap = ncap;
    }
    m->from[m->n] = from;
    m->to[m->n++] = to;
}

static const struct ir_body *body_attr(struct ex_ctx *e, const char *name)
{
    const struct ir_attr *a = ir_attr_find(ex_self(e), name);
    if (!a || a->type != IR_ATTR_GRAPH) ex_fatal(e, "missing subgraph attribute '%s'", name);
    return a->body;
}

/* Copies body b with its formal inputs bound to actual[]; results[k] = its k-th output. While
 * it copies template node t, *at (when not NULL) holds t (try_branch names it in messages). */
static void instantiate(struct ex_ctx *e, const struct ir_body *b, const uint32_t *actual,
                        uint32_t *results, volatile uint32_t *at)
{
    struct ir_graph *g = e->g;
    struct cf_map m = {.parent = e->scope};
    if (g->nnodes + b->nnodes > MAX_UNROLLED_NODES)
        ex_fatal(e, "unrolling would grow the graph past %u nodes (nested loops multiply their trip "
                    "counts): too large to compile", MAX_UNROLLED_NODES);
    for (uint32_t i = 0; i < b->ninputs; i++) map_put(g, &m, b->inputs[i], actual[i]);
    for (uint32_t t = 0; t < b->nnodes; t++) {
        const struct ir_node *tn = &b->nodes[t];
        if (at) *at = t;
        uint32_t nin = tn->ninputs, nout = tn->noutputs;
        if (nout < 1 || nout > 16) ex_fatal(e, "body node '%s' has %u outputs (1..16 supported)", tn->name, nout);
        uint32_t *ins = ir_alloc(g, (nin + 1) * sizeof *ins);
        for (uint32_t k = 0; k < nin; k++) ins[k] = map_get(&m, tn->inputs[k]);
        enum ir_op op = tn->op;
        uint32_t nattrs = tn->nattrs;
        const struct ir_attr *attrs = tn->attrs;
        uint32_t id = ex_begin(e, op, ins, nin, nout);
        if (tn->name && tn->name[0]) g->nodes[id].name = tn->name; /* errors name the ONNX node */
        struct ir_attr *copy = ir_alloc(g, (nattrs + 1) * sizeof *copy);
        memcpy(copy, attrs, nattrs * sizeof *copy);
        g->nodes[id].attrs = copy;
        g->nodes[id].nattrs = nattrs;
        for (uint32_t k = 0; k < nout; k++)
            if (b->nodes[t].outputs[k] != IR_NONE) map_put(g, &m, b->nodes[t].outputs[k], ex_out(e, id, k));
        if (ir_op_flags(op) & IR_F_FUNCTION)
            expand_node_scoped(g, id, &m);
        else
            ex_end(e, id);
    }
    for (uint32_t k = 0; k < b->noutputs; k++) results[k] = map_get(&m, b->outputs[k]);
}

/* The single element of a constant bool/int tensor, or -1 when v is not constant. */
static int const_flag(const struct ex_ctx *e, uint32_t v)
{
    const struct ir_value *x = ex_v(e, v);
    if (!x->data) return -1;
    if (ref_numel_v(x) != 1) return -2;
    return ref_get_i(x->data, x->dtype, 0) != 0;
}

/* The name of value v for messages: inside a body copy, the body's own (ONNX) name of the value
 * it copies, else v's name. */
static const char *value_name(const struct ex_ctx *e, uint32_t v)
{
    for (const struct cf_map *m = e->scope; m; m = m->parent)
        for (uint32_t i = m->n; i-- > 0;)
            if (m->to[i] == v) return e->g->values[m->from[i]].name;
    return e->g->values[v].name;
}

/* "the graph input 'a' (and 'b')" that run-time value v is computed from, for messages: a
 * condition or trip count known only at run time names what decides it and how to fix it. */
static const char *runtime_origin(struct ex_ctx *e, uint32_t v)
{
    struct ir_graph *g = e->g;
    bool *seen = ir_alloc(g, g->nvalues + 1);
    memset(seen, 0, g->nvalues + 1);
    uint32_t *stk = ir_alloc(g, (g->nvalues + 1) * sizeof *stk), sp = 0;
    const char *names = "";
    int found = 0;
    stk[sp++] = v;
    seen[v] = true;
    while (sp) {
        const struct ir_value *x = &g->values[stk[--sp]];
        if (x->is_input) {
            names = ir_sprintf(g, "%s%s'%s'", names, found ? ", " : "", x->name);
            found++;
            continue;
        }
        if (x->producer == IR_NONE || x->data) continue;
        const struct ir_node *n = &g->nodes[x->producer];
        for (uint32_t k = 0; k < n->ninputs; k++) {
            uint32_t u = n->inputs[k];
            if (u != IR_NONE && !seen[u]) seen[u] = true, stk[sp++] = u;
        }
    }
    if (!found) return "";
    if (found == 1)
        return ir_sprintf(g, "; it depends on the graph input %s (fix it with --bind %.*s=VALUE.npy to "
                             "compile for one value)", names, (int)strlen(names) - 2, names + 1);
    return ir_sprintf(g, "; it depends on the graph inputs %s (fix them with --bind NAME=VALUE.npy to "
                         "compile for one value)", names);
}

static uint32_t stack(struct ex_ctx *e, uint32_t *vals, uint32_t n, int64_t axis)
{
    if (n == 0) ex_fatal(e, "a scan output over zero iterations has no known shape (unsupported)");
    int64_t a = axis < 0 ? axis + ex_v(e, vals[0])->rank + 1 : axis;
    for (uint32_t i = 0; i < n; i++) vals[i] = ex_unsqueeze(e, vals[i], 1, &a);
    return ex_concat(e, (int)n, vals, a);
}

/* Copies branch b (attribute `attr` of the If) like instantiate and returns true with its
 * outputs in res[]; or, when copying it fails for the bound shapes (a located error of shape
 * inference or of an expansion inside it), erases every node the attempt made and returns
 * false with *why = "node 'n' (Op): <error>", n the branch's own node that failed (a nested If,
 * an LSTM, ... or the primitive itself; its ONNX name is scoped "<if>/<attr>/<name>"). */
static bool try_branch(struct ex_ctx *e, const struct ir_body *b, const char *attr, uint32_t *res,
                       const char **why)
{
    struct ir_graph *g = e->g;
    const uint32_t n0 = g->nnodes;
    volatile uint32_t at = UINT32_MAX;
    struct ir_trap t;
    ir_trap_set(&t);
    if (setjmp(t.jb) == 0) {
        instantiate(e, b, NULL, res, &at);
        ir_trap_unset(&t);
        return true;
    }
    for (uint32_t i = n0; i < g->nnodes; i++) ir_node_erase(g, i);
    const uint32_t k = at;
    if (k < b->nnodes) {
        const struct ir_node *tn = &b->nodes[k];
        *why = tn->name && tn->name[0]
                   ? ir_sprintf(g, "node '%s' (%s): %s", tn->name, tn->op_type, t.msg)
                   : ir_sprintf(g, "node %u of %s (%s): %s", k, attr, tn->op_type, t.msg);
    } else {
        *why = ir_sprintf(g, "%s: %s%s", attr, t.where, t.msg);
    }
    return false;
}

void expand_if(struct ex_ctx *e)
{
    uint32_t nin = (uint32_t)ex_attr_int(e, "_nin", 1);
    if (nin != 1) ex_fatal(e, "If takes 1 input (cond), not %u", nin);
    uint32_t cond = ex_in(e, 0);
    const struct ir_body *tb = body_attr(e, "then_branch"), *eb = body_attr(e, "else_branch");
    uint32_t nout = ex_self(e)->noutputs;
    if (tb->noutputs != nout || eb->noutputs != nout)
        ex_fatal(e, "then_branch has %u outputs and else_branch %u; the node has %u", tb->noutputs,
                 eb->noutputs, nout);
    if (tb->ninputs || eb->ninputs) ex_fatal(e, "If branches take no inputs");
    int c = const_flag(e, cond);
    if (c == -2) ex_fatal(e, "cond must hold exactly one element");
    uint32_t tr[16], er[16];
    if (c >= 0) {
        instantiate(e, c ? tb : eb, NULL, tr, NULL);
        for (uint32_t k = 0; k < nout; k++) ex_output(e, k, tr[k]);
        return;
    }
    if (ref_numel_v(ex_v(e, cond)) != 1) ex_fatal(e, "cond must hold exactly one element");
    const char *origin = runtime_origin(e, cond);
    const char *cname = value_name(e, cond);
    uint32_t c0 = ex_reshape(e, cond, 0, NULL);
    if (ex_v(e, c0)->dtype != IR_BOOL) c0 = ex_cast(e, c0, IR_BOOL);
    const char *why_t = NULL, *why_e = NULL;
    const bool ok_t = try_branch(e, tb, "then_branch", tr, &why_t);
    const bool ok_e = try_branch(e, eb, "else_branch", er, &why_e);
    if (!ok_t && !ok_e)
        ex_fatal(e, "neither branch can run with the bound shapes, and the condition ('%s') is known "
                    "only at run time: then_branch: %s; else_branch: %s%s",
                 cname, why_t, why_e, origin);
    if (!ok_t || !ok_e) {
        /* One branch fits: its outputs, each behind a check that stops the run (naming why the
         * other does not fit) if the condition ever selects the other. */
        const char *msg = ir_sprintf(
            e->g, "node '%s' (If, #%d): the condition ('%s') is %s, which selects %s, but %s cannot "
                  "run with the shapes this model was compiled for: %s",
            ex_self(e)->name[0] ? ex_self(e)->name : "<unnamed>", (int)ex_self(e)->onnx_index, cname,
            ok_t ? "false" : "true", ok_t ? "else_branch" : "then_branch",
            ok_t ? "else_branch" : "then_branch", ok_t ? why_e : why_t);
        for (uint32_t k = 0; k < nout; k++) {
            if (!ex_has_output(e, k)) continue;
            uint32_t in[2] = {ok_t ? tr[k] : er[k], c0};
            uint32_t id = ex_begin(e, IR_OP_FUSED_CHECK, in, 2, 1);
            ir_attr_set_string(e->g, id, "message", msg);
            ir_attr_set_int(e->g, id, "fail_if", ok_t ? 0 : 1);
            ex_output(e, k, ex_end(e, id));
        }
        return;
    }
    for (uint32_t k = 0; k < nout; k++) {
        const struct ir_value *a = ex_v(e, tr[k]), *b = ex_v(e, er[k]);
        char b1[200], b2[200];
        if (a->dtype != b->dtype)
            ex_fatal(e, "output %u: then_branch gives %s and else_branch %s; with a condition ('%s') known "
                        "only at run time both branches must give the same dtype%s",
                     k, ir_dtype_name(a->dtype), ir_dtype_name(b->dtype), cname, origin);
        if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
            ex_fatal(e,
                     "output %u: then_branch gives %s %s and else_branch %s %s; with a condition ('%s') "
                     "known only at run time both must agree (the output shape would be decided at run "
                     "time)%s",
                     k, ir_dtype_name(a->dtype), ir_dims_str(a, b1, sizeof b1), ir_dtype_name(b->dtype),
                     ir_dims_str(b, b2, sizeof b2), cname, origin);
        ex_output(e, k, ex_op3(e, IR_OP_WHERE, c0, tr[k], er[k]));
    }
}

void expand_loop(struct ex_ctx *e)
{
    uint32_t nin = (uint32_t)ex_attr_int(e, "_nin", 2);
    const struct ir_body *b = body_attr(e, "body");
    uint32_t ncarried = nin - 2, nout = ex_self(e)->noutputs;
    if (b->ninputs != ncarried + 2)
        ex_fatal(e, "body takes %u inputs; Loop with %u loop-carried values needs %u", b->ninputs,
                 ncarried, ncarried + 2);
    if (b->noutputs < ncarried + 1 || nout != b->noutputs - 1)
        ex_fatal(e, "body has %u outputs; Loop with %u loop-carried values and %u outputs needs %u",
                 b->noutputs, ncarried, nout, nout + 1);
    uint32_t nscan = nout - ncarried;
    if (ncarried + 2 > 64 || nscan > 16) ex_fatal(e, "too many loop-carried values or scan outputs");
    uint32_t m = ex_in(e, 0), cond = ex_in(e, 1);
    int64_t trip = INT64_MAX;
    if (m != IR_NONE) {
        const struct ir_value *mv = ex_v(e, m);
        if (!mv->data)
            ex_fatal(e, "trip count M ('%s') is known only at run time; onnx2cl unrolls loops at "
                        "compile time and needs it constant%s", mv->name, runtime_origin(e, m));
        trip = ref_get_i(mv->data, mv->dtype, 0);
    }
    int c = cond == IR_NONE ? 1 : const_flag(e, cond);
    if (c < 0)
        ex_fatal(e, "loop condition ('%s') is known only at run time; onnx2cl unrolls loops at "
                    "compile time and needs it constant%s", ex_v(e, cond)->name, runtime_origin(e, cond));
    uint32_t vals[66], res[80];
    for (uint32_t k = 0; k < ncarried; k++) vals[2 + k] = ex_in(e, 2 + k);
    uint32_t *scans[16];
    for (uint32_t k = 0; k < nscan; k++) scans[k] = ir_alloc(e->g, MAX_COPIES * sizeof(uint32_t));
    int64_t it = 0;
    for (; it < trip && c; it++) {
        if (it >= MAX_COPIES) ex_fatal(e, "more than %d iterations: too many to unroll", MAX_COPIES);
        vals[0] = ex_scalar(e, IR_I64, (double)it);
        vals[1] = ex_scalar(e, IR_BOOL, 1.0);
        instantiate(e, b, vals, res, NULL);
        c = const_flag(e, res[0]);
        if (c < 0)
            ex_fatal(e, "the body's condition output is computed at run time; onnx2cl unrolls "
                        "loops at compile time and needs it constant%s", runtime_origin(e, res[0]));
        for (uint32_t k = 0; k < ncarried; k++) vals[2 + k] = res[1 + k];
        for (uint32_t k = 0; k < nscan; k++) scans[k][it] = res[1 + ncarried + k];
    }
    for (uint32_t k = 0; k < ncarried; k++) ex_output(e, k, vals[2 + k]);
    for (uint32_t k = 0; k < nscan; k++) ex_output(e, ncarried + k, stack(e, scans[k], (uint32_t)it, 0));
}

/* Slice t of x on `axis`, the axis removed. */
static uint32_t take(struct ex_ctx *e, uint32_t x, int64_t axis, int64_t t)
{
    return ex_op2(e, IR_OP_SQUEEZE, ex_slice(e, x, axis, t, t + 1, 1), ex_ints(e, 1, &axis));
}

static void ints_attr(struct ex_ctx *e, const char *name, uint32_t n, int64_t *out, int64_t dflt)
{
    size_t cnt = 0;
    const int64_t *v = ir_attr_ints(ex_self(e), name, &cnt);
    for (uint32_t i = 0; i < n; i++) out[i] = dflt;
    if (!v) return;
    if (cnt != n) ex_fatal(e, "attribute '%s' has %zu entries, expected %u", name, cnt, n);
    for (uint32_t i = 0; i < n; i++) out[i] = v[i];
}

/* One scan over states[ns] and scan inputs xs[nx] (their scan axes/directions given); fills the
 * final states and stacked scan outputs into outs[ns + nscan]. */
static void run_scan(struct ex_ctx *e, const struct ir_body *b, uint32_t ns, const uint32_t *states,
                     uint32_t nx, const uint32_t *xs, const int64_t *in_axes, const int64_t *in_dirs,
                     uint32_t nscan, const int64_t *out_axes, const int64_t *out_dirs, uint32_t *outs)
{
    int64_t len = -1;
    int64_t axes[16];
    for (uint32_t j = 0; j < nx; j++) {
        const struct ir_value *x = ex_v(e, xs[j]);
        int64_t a = in_axes[j] < 0 ? in_axes[j] + x->rank : in_axes[j];
        if (a < 0 || a >= x->rank) ex_fatal(e, "scan_input_axes[%u]=%lld is out of range for rank %d", j, (long long)in_axes[j], x->rank);
        axes[j] = a;
        if (len >= 0 && x->dims[a] != len)
            ex_fatal(e, "scan inputs differ in sequence length (%lld vs %lld)", (long long)len, (long long)x->dims[a]);
        len = x->dims[a];
    }
    if (len < 0) ex_fatal(e, "Scan needs at least one scan input");
    if (len > MAX_COPIES) ex_fatal(e, "sequence length %lld: too many steps to unroll (max %d)", (long long)len, MAX_COPIES);
    uint32_t vals[32], res[48];
    for (uint32_t k = 0; k < ns; k++) vals[k] = states[k];
    uint32_t *per[16];
    for (uint32_t k = 0; k < nscan; k++) per[k] = ir_alloc(e->g, (size_t)(len + 1) * sizeof(uint32_t));
    for (int64_t t = 0; t < len; t++) {
        for (uint32_t j = 0; j < nx; j++) vals[ns + j] = take(e, xs[j], axes[j], in_dirs[j] ? len - 1 - t : t);
        instantiate(e, b, vals, res, NULL);
        for (uint32_t k = 0; k < ns; k++) vals[k] = res[k];
        for (uint32_t k = 0; k < nscan; k++) per[k][out_dirs[k] ? len - 1 - t : t] = res[ns + k];
    }
    for (uint32_t k = 0; k < ns; k++) outs[k] = vals[k];
    for (uint32_t k = 0; k < nscan; k++) outs[ns + k] = stack(e, per[k], (uint32_t)len, out_axes[k]);
}

void expand_scan(struct ex_ctx *e)
{
    uint32_t nin = (uint32_t)ex_attr_int(e, "_nin", 1);
    const struct ir_body *b = body_attr(e, "body");
    int64_t nx = ex_attr_int(e, "num_scan_inputs", -1);
    bool v8 = e->g->opset < 9;
    uint32_t first = v8 ? 1 : 0; /* Scan-8: input 0 is the optional sequence_lens */
    if (nx < 1 || nx > 16 || (uint32_t)nx > nin - first)
        ex_fatal(e, "num_scan_inputs=%lld does not fit the %u inputs", (long long)nx, nin - first);
    uint32_t ns = nin - first - (uint32_t)nx, nout = ex_self(e)->noutputs;
    if (ns > 16 || b->ninputs != ns + (uint32_t)nx || b->noutputs != nout || nout < ns || nout - ns > 16)
        ex_fatal(e, "body has %u inputs and %u outputs; the node has %u states, %lld scan inputs and %u outputs",
                 b->ninputs, b->noutputs, ns, (long long)nx, nout);
    uint32_t nscan = nout - ns;
    int64_t in_axes[16], in_dirs[16], out_axes[16], out_dirs[16];
    ints_attr(e, "scan_input_axes", (uint32_t)nx, in_axes, 0);
    ints_attr(e, v8 ? "directions" : "scan_input_directions", (uint32_t)nx, in_dirs, 0);
    ints_attr(e, "scan_output_axes", nscan, out_axes, 0);
    ints_attr(e, "scan_output_directions", nscan, out_dirs, 0);
    uint32_t states[16], xs[16], outs[32];
    for (uint32_t k = 0; k < ns; k++) states[k] = ex_in(e, first + k);
    for (uint32_t j = 0; j < (uint32_t)nx; j++) xs[j] = ex_in(e, first + ns + j);
    if (!v8) {
        run_scan(e, b, ns, states, (uint32_t)nx, xs, in_axes, in_dirs, nscan, out_axes, out_dirs, outs);
        for (uint32_t k = 0; k < nout; k++) ex_output(e, k, outs[k]);
        return;
    }
    /* Scan-8: every tensor has a batch axis 0; the scan axis of the inputs is 1. */
    int64_t batch = ex_v(e, xs[0])->dims[0];
    uint32_t seq = ex_in(e, 0);
    int64_t len = ex_v(e, xs[0])->rank > 1 ? ex_v(e, xs[0])->dims[1] : -1;
    if (seq != IR_NONE) {
        const struct ir_value *sv = ex_v(e, seq);
        if (!sv->data) ex_fatal(e, "sequence_lens is known only at run time (unsupported)");
        for (int64_t i = 0; i < ref_numel_v(sv); i++)
            if (ref_get_i(sv->data, sv->dtype, i) != len)
                ex_fatal(e, "sequence_lens[%lld]=%lld differs from the sequence length %lld (unsupported)",
                         (long long)i, (long long)ref_get_i(sv->data, sv->dtype, i), (long long)len);
    }
    if (batch > MAX_COPIES) ex_fatal(e, "batch %lld: too many to unroll", (long long)batch);
    uint32_t *col[32];
    for (uint32_t k = 0; k < nout; k++) col[k] = ir_alloc(e->g, (size_t)(batch + 1) * sizeof(uint32_t));
    for (int64_t i = 0; i < batch; i++) {
        uint32_t st[16], xb[16];
        for (uint32_t k = 0; k < ns; k++) st[k] = take(e, states[k], 0, i);
        for (uint32_t j = 0; j < (uint32_t)nx; j++) xb[j] = take(e, xs[j], 0, i);
        run_scan(e, b, ns, st, (uint32_t)nx, xb, in_axes, in_dirs, nscan, out_axes, out_dirs, outs);
        for (uint32_t k = 0; k < nout; k++) col[k][i] = outs[k];
    }
    for (uint32_t k = 0; k < nout; k++) ex_output(e, k, stack(e, col[k], (uint32_t)batch, 0));
}
