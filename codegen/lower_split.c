/* lower_split.c — Split-18 (ops.def family "split"; the importer turns the older attribute into
 * the constant `split` input): each present output is a strided copy of its slab of the input.
 * Slab sizes along `axis`: the constant split input, else ceil(A / outputs) each with the rest
 * in the last (Split-18 num_outputs; an even split for older opsets); slab k starts at the sum
 * of the earlier sizes. An output that is one contiguous run of the input (the product of the
 * dims before `axis` is 1) and that codegen accepts as an offset view (codegen.c banner: slab
 * offset a multiple of 512 bytes, not a graph output) gets no copy. A run-time split input is
 * refused (fatal, located).
 */
#include "lower_ka.h"

bool lower_split(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0];
    const struct ir_value *xv = &g->values[x];
    const int r = xv->rank;
    int64_t axis = ir_attr_int(n, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        ir_fatal_node(g, n, "Split: axis=%lld out of range for rank %d",
                      (long long)ir_attr_int(n, "axis", 0), r);
    ka_numel(g, node, x);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= xv->dims[k];
    for (int k = (int)axis + 1; k < r; k++) inner *= xv->dims[k];
    const int64_t A = xv->dims[axis];
    const uint32_t sp = ir_input(n, 1);
    if (sp != IR_NONE && !ir_is_const(g, sp))
        ir_fatal_node(g, n, "Split: the split sizes are computed at run time (not supported)");
    if (sp != IR_NONE && ir_numel(g, sp) != (int64_t)n->noutputs)
        ir_fatal_node(g, n, "Split: %lld split sizes for %u outputs", (long long)ir_numel(g, sp),
                      n->noutputs);
    const int64_t chunk = (A + (int64_t)n->noutputs - 1) / (int64_t)n->noutputs;
    int64_t off = 0;
    for (uint32_t i = 0; i < n->noutputs; i++) {
        int64_t a = sp != IR_NONE ? ir_const_i64(g, sp, i)
                                  : (i + 1 < n->noutputs ? chunk : A - chunk * (int64_t)i);
        if (a < 0) a = 0;
        const uint32_t y = n->outputs[i];
        if (y == IR_NONE) {
            off += a;
            continue;
        }
        const struct ir_value *yv = &g->values[y];
        if (yv->rank != r)
            ir_fatal_node(g, n, "Split: output %u has rank %d, input %d", i, yv->rank, r);
        if (yv->dims[axis] != a)
            ir_fatal_node(g, n, "Split: output %u has %lld elements along axis %lld, expected %lld",
                          i, (long long)yv->dims[axis], (long long)axis, (long long)a);
        if (off + a > A)
            ir_fatal_node(g, n, "Split: outputs exceed the input's %lld elements along axis %lld",
                          (long long)A, (long long)axis);
        const int64_t dims[3] = {outer, a, inner};
        const int64_t xs[3] = {A * inner, inner, 1};
        const int64_t ys[3] = {a * inner, inner, 1};
        ka_move(cg, g, node, x, y, 3, dims, xs, off * inner, ys, 0, KA_Y_IN_X);
        off += a;
    }
    return true;
}
