/* lower_slice.c — Slice-13 (ops.def family "slice"; older attribute forms are turned into
 * constant inputs by the importer): starts, ends, axes (default 0..r-1) and steps (default 1)
 * must be constants, read here. Per axis (ONNX rules): negative start/end += dim; step > 0
 * clamps start, end into [0, dim]; step < 0 clamps start into [0, dim-1], end into [-1, dim-1].
 * The copy is y[c] = x[sum (start_k + c_k*step_k) * xstride_k], one strided launch
 * (negative strides for negative steps), or none when y is one contiguous run of x that codegen
 * accepts as an offset view (codegen.c banner: e.g. a slice of the outermost non-1 axis at a
 * 512-byte multiple, y not a graph output). Fatal (located) on a run-time parameter, step 0,
 * a repeated axis, or an output shape that disagrees with these rules.
 */
#include "lower_ka.h"

bool lower_slice(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const uint32_t st = ir_input(n, 1), en = ir_input(n, 2), ax = ir_input(n, 3), sp = ir_input(n, 4);
    const struct ir_value *xv = &g->values[x], *yv = &g->values[y];
    const int r = xv->rank;
    const uint32_t params[4] = {st, en, ax, sp};
    static const char *pname[4] = {"starts", "ends", "axes", "steps"};
    for (int k = 0; k < 4; k++)
        if (params[k] != IR_NONE && !ir_is_const(g, params[k]))
            ir_fatal_node(g, n, "Slice: %s is computed at run time (only constant %s are supported)",
                          pname[k], pname[k]);
    if (st == IR_NONE || en == IR_NONE) ir_fatal_node(g, n, "Slice: starts and ends are required");
    const int64_t m = ir_numel(g, st);
    if (ir_numel(g, en) != m || (ax != IR_NONE && ir_numel(g, ax) != m) ||
        (sp != IR_NONE && ir_numel(g, sp) != m))
        ir_fatal_node(g, n, "Slice: starts, ends, axes and steps must have the same length");
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK];
    bool seen[IR_MAX_RANK] = {false};
    for (int k = 0; k < r; k++) start[k] = 0, step[k] = 1;
    ka_numel(g, node, x);
    const int64_t cnt = ka_numel(g, node, y);
    for (int64_t i = 0; i < m; i++) {
        int64_t a = ax != IR_NONE ? ir_const_i64(g, ax, i) : i;
        if (a < 0) a += r;
        if (a < 0 || a >= r)
            ir_fatal_node(g, n, "Slice: axes[%lld]=%lld out of range for rank %d", (long long)i,
                          (long long)(ax != IR_NONE ? ir_const_i64(g, ax, i) : i), r);
        if (seen[a]) ir_fatal_node(g, n, "Slice: axis %lld is repeated", (long long)a);
        seen[a] = true;
        const int64_t d = xv->dims[a];
        const int64_t t = sp != IR_NONE ? ir_const_i64(g, sp, i) : 1;
        if (t == 0) ir_fatal_node(g, n, "Slice: steps[%lld] is 0", (long long)i);
        int64_t s = ir_const_i64(g, st, i), e = ir_const_i64(g, en, i);
        if (s < 0) s += d;
        if (e < 0) e += d;
        int64_t len;
        if (t > 0) {
            s = s < 0 ? 0 : (s > d ? d : s);
            e = e < 0 ? 0 : (e > d ? d : e);
            len = e > s ? (e - s + t - 1) / t : 0;
        } else {
            s = s < 0 ? 0 : (s > d - 1 ? d - 1 : s);
            e = e < -1 ? -1 : (e > d - 1 ? d - 1 : e);
            len = s > e ? (s - e + (-t) - 1) / (-t) : 0;
        }
        if (len != yv->dims[a])
            ir_fatal_node(g, n, "Slice: axis %lld gives %lld elements but the output has %lld",
                          (long long)a, (long long)len, (long long)yv->dims[a]);
        start[a] = s;
        step[a] = t;
    }
    if (cnt == 0) return true;
    int64_t xsd[IR_MAX_RANK], xs[IR_MAX_RANK], ys[IR_MAX_RANK];
    ka_dense_strides(r, xv->dims, xsd);
    ka_dense_strides(r, yv->dims, ys);
    int64_t off = 0;
    for (int k = 0; k < r; k++) {
        off += start[k] * xsd[k];
        xs[k] = step[k] * xsd[k];
    }
    ka_move(cg, g, node, x, y, r, yv->dims, xs, off, ys, 0, KA_Y_IN_X);
    return true;
}
