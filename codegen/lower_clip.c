/* lower_clip.c — Clip-13 (ops.def family "clip"; the importer turns Clip-6 min/max attributes
 * into inputs) -> kernels/clip.cl. min/max are optional one-element inputs, passed as buffers
 * (constant or computed at run time); an absent one is replaced by x as a placeholder with its
 * flag 0. Types: float32/64/16 and integer types; min/max must have x's element type.
 */
#include "lower_ka.h"

#include <stdio.h>

bool lower_clip(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    const uint32_t x = n->inputs[0], y = n->outputs[0];
    const uint32_t lo = ir_input(n, 1), hi = ir_input(n, 2);
    const enum ir_dtype dt = g->values[x].dtype;
    if (dt == IR_BOOL || dt == IR_STRING || dt == IR_BF16 || ir_dtype_size(dt) == 0)
        ir_fatal_node(g, n, "Clip: element type %s is not supported", ir_dtype_name(dt));
    const uint32_t bounds[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        const uint32_t v = bounds[k];
        if (v == IR_NONE) continue;
        if (g->values[v].dtype != dt)
            ir_fatal_node(g, n, "Clip: %s has element type %s but input is %s", k ? "max" : "min",
                          ir_dtype_name(g->values[v].dtype), ir_dtype_name(dt));
        if (ir_numel(g, v) != 1)
            ir_fatal_node(g, n, "Clip: %s must have one element (has %lld)", k ? "max" : "min",
                          (long long)ir_numel(g, v));
    }
    const int64_t cnt = ka_numel(g, node, y);
    if (cnt == 0) return true;
    const char *sfx = cg_use(cg, "clip", dt);
    char kname[64];
    snprintf(kname, sizeof kname, "clip_%s", sfx);
    ka_launch(cg, node, kname, cnt);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, lo != IR_NONE ? lo : x);
    cg_arg_buf(cg, hi != IR_NONE ? hi : x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, cnt);
    cg_arg_i32(cg, lo != IR_NONE);
    cg_arg_i32(cg, hi != IR_NONE);
    return true;
}
