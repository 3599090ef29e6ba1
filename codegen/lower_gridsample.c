/* lower_gridsample.c — GridSample-16/20/22 (ops.def family "gridsample") -> kernels/gridsample.cl.
 *
 * X [N, C, D1..Dr] and grid [N, O1..Or, r] float32, r = 1..3 spatial dims (the 2-D form of
 * opset 16 and the N-D form of opsets 20/22); lower-rank inputs run as 3-D with unit leading
 * spatial dims. Attributes normalized by ref_gridsample_attrs (ref/ref_gridsample.c, the
 * reference this kernel is tested against): mode linear/bilinear, nearest, cubic/bicubic;
 * padding_mode zeros/border/reflection; align_corners 0/1.
 * Assumes: shape inference ran (Y [N, C, O1..Or]).
 * Guarantees: fatal (ir_fatal_node) on other dtypes, more than 3 spatial dims, unsupported
 * attribute values, or tensors of >= 2^31 elements.
 */
#include "codegen/lower.h"
#include "ref/ref_util.h"

#include <stdio.h>

bool lower_gridsample(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], gr = n->inputs[1], y = n->outputs[0];
    const struct ir_value *xv = &g->values[x], *gv = &g->values[gr];
    if (xv->dtype != IR_F32 || gv->dtype != IR_F32)
        ir_fatal_node(g, n, "GridSample on X %s, grid %s is not supported yet (float32 only)",
                      ir_dtype_name(xv->dtype), ir_dtype_name(gv->dtype));
    const int nsp = xv->rank - 2;
    if (nsp < 1 || nsp > 3)
        ir_fatal_node(g, n, "GridSample with %d spatial dims is not supported (1 to 3)", nsp);
    int mode, padding, align;
    ref_gridsample_attrs(g, n, &mode, &padding, &align);
    const uint32_t vs[3] = {x, gr, y};
    for (int k = 0; k < 3; k++)
        if (ir_numel(g, vs[k]) >= ((int64_t)1 << 31))
            ir_fatal_node(g, n, "GridSample: tensor '%s' has %lld elements; the kernel indexes "
                          "with 32-bit ints (at most 2^31-1)",
                          g->values[vs[k]].name, (long long)ir_numel(g, vs[k]));
    int64_t in[3] = {1, 1, 1}, opos = 1;
    for (int i = 0; i < nsp; i++) {
        in[3 - nsp + i] = xv->dims[2 + i];
        opos *= gv->dims[1 + i];
    }
    const int64_t total = xv->dims[0] * opos;
    if (total == 0 || xv->dims[1] == 0) return true;
    for (int i = 0; i < 3; i++)
        if (in[i] == 0)
            ir_fatal_node(g, n, "GridSample on an empty input '%s' is not supported", xv->name);
    const char *sfx = cg_use(cg, "gridsample", IR_F32);
    char kname[64];
    snprintf(kname, sizeof kname, "gridsample_%s", sfx);
    size_t gws[1] = {(size_t)total};
    cg_launch(cg, node, kname, 1, gws, NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, gr);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, xv->dims[1]);
    for (int i = 0; i < 3; i++) cg_arg_i32(cg, in[i]);
    cg_arg_i32(cg, nsp);
    cg_arg_i32(cg, mode);
    cg_arg_i32(cg, padding);
    cg_arg_i32(cg, align);
    cg_arg_i32(cg, opos);
    cg_arg_i32(cg, total);
    return true;
}
