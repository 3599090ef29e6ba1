/* lower_check.c — o2c.Check (ops.def family "check"): a run-time check, no kernel.
 *
 * Assumes: inference checked that input 1 (cond) is one bool; attributes "message" (string) and
 * "fail_if" (0 or 1) were set by the If expansion (passes/expand/control.c).
 * Guarantees: the output shares input 0's device buffer (like BitCast: codegen.c view_source
 * counts it in the view class); one check launch (cg_check) reads cond at this step of the run
 * and stops the run with the message when cond == fail_if, so cond stays live until then.
 */
#include "lower.h"

bool lower_check(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (n->op != IR_OP_FUSED_CHECK) return false;
    const char *msg = ir_attr_string(n, "message", NULL);
    const int64_t fail_if = ir_attr_int(n, "fail_if", -1);
    if (!msg || (fail_if != 0 && fail_if != 1))
        ir_fatal_node(g, n, "internal error: o2c.Check needs a message and fail_if 0 or 1");
    cg_alias(cg, n->outputs[0], n->inputs[0]);
    cg_check(cg, node, n->inputs[1], (int)fail_if, msg);
    return true;
}
