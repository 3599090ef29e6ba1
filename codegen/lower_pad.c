/* lower_pad.c — Pad-18/19/21 (ops.def family "pad"; older attribute forms become constant
 * inputs in the importer) -> kernels/pad.cl (per element size). pads (constant, read here:
 * [begin_0.., end_0..] over `axes`, default all axes; negative = crop), constant_value
 * (optional one-element input, constant or run-time, passed as a buffer), mode constant |
 * reflect | edge | wrap. Fatal (located) on run-time pads, an unknown mode, or an output
 * shape that disagrees with the pads.
 */
#include "lower_ka.h"

#include <stdio.h>
#include <string.h>

bool lower_pad(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const uint32_t pads = ir_input(n, 1), cval = ir_input(n, 2), axes = ir_input(n, 3);
    const struct ir_value *xv = &g->values[x], *yv = &g->values[y];
    const int r = xv->rank;
    const char *mode = ir_attr_string(n, "mode", "constant");
    int m;
    if (strcmp(mode, "constant") == 0) m = 0;
    else if (strcmp(mode, "reflect") == 0) m = 1;
    else if (strcmp(mode, "edge") == 0) m = 2;
    else if (strcmp(mode, "wrap") == 0) m = 3;
    else ir_fatal_node(g, n, "Pad: mode='%s' is not supported (constant, reflect, edge, wrap)", mode);
    if (pads == IR_NONE || !ir_is_const(g, pads))
        ir_fatal_node(g, n, "Pad: pads are computed at run time (only constant pads are supported)");
    if (axes != IR_NONE && !ir_is_const(g, axes))
        ir_fatal_node(g, n, "Pad: axes are computed at run time (only constant axes are supported)");
    if (r > 8) ir_fatal_node(g, n, "Pad: rank %d > 8", r);
    const int64_t na = axes != IR_NONE ? ir_numel(g, axes) : r;
    if (ir_numel(g, pads) != 2 * na)
        ir_fatal_node(g, n, "Pad: %lld pads for %lld axes", (long long)ir_numel(g, pads), (long long)na);
    int64_t pb[IR_MAX_RANK] = {0};
    for (int64_t i = 0; i < na; i++) {
        int64_t a = axes != IR_NONE ? ir_const_i64(g, axes, i) : i;
        if (a < 0) a += r;
        if (a < 0 || a >= r) ir_fatal_node(g, n, "Pad: axis %lld out of range for rank %d", (long long)a, r);
        pb[a] = ir_const_i64(g, pads, i);
        const int64_t pe = ir_const_i64(g, pads, na + i);
        if (xv->dims[a] + pb[a] + pe != yv->dims[a])
            ir_fatal_node(g, n, "Pad: axis %lld: %lld + %lld + %lld != output dim %lld", (long long)a,
                          (long long)pb[a], (long long)xv->dims[a], (long long)pe,
                          (long long)yv->dims[a]);
        if (m != 0 && xv->dims[a] == 0 && yv->dims[a] > 0)
            ir_fatal_node(g, n, "Pad: mode=%s cannot pad the empty axis %lld", mode, (long long)a);
    }
    bool has_c = cval != IR_NONE && ir_numel(g, cval) >= 1;
    if (has_c && g->values[cval].dtype != xv->dtype)
        ir_fatal_node(g, n, "Pad: constant_value is %s, data is %s",
                      ir_dtype_name(g->values[cval].dtype), ir_dtype_name(xv->dtype));
    ka_numel(g, node, x);
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    if (ir_numel(g, x) == 0 && m != 0) ir_fatal_node(g, n, "Pad: mode=%s of an empty tensor", mode);
    const char *sfx = cg_use(cg, "pad", ka_size_type(g, node, xv->dtype));
    char kname[64];
    snprintf(kname, sizeof kname, "pad_%s", sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, has_c ? cval : x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, r);
    cg_arg_i32(cg, m);
    cg_arg_i32(cg, has_c);
    for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? yv->dims[k - (8 - r)] : 1);
    for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? xv->dims[k - (8 - r)] : 1);
    for (int k = 0; k < 8; k++) cg_arg_i32(cg, k >= 8 - r ? pb[k - (8 - r)] : 0);
    return true;
}
