/* pipeline.c — the ordered pass table and its driver (verifier, --dump-after, --stats).
 *
 * Order: specialize_shapes -> infer_fold (shape inference + constant folding in one topological
 * sweep: shapes need folded values, folding needs shapes) -> remove_identity -> dce.
 * Fusion passes (issue 5) slot in after dce; memory planning happens in codegen (it needs the
 * lowered launch order).
 */
#include "passes.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static uint32_t live_nodes(const struct ir_graph *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) n += !g->nodes[i].dead;
    return n;
}

static void after_pass(struct ir_graph *g, const struct pass_options *opt, const char *name,
                       uint32_t before, double ms)
{
    if (opt->stats)
        fprintf(stderr, "pass %-18s nodes %6u -> %6u  (%.1f ms)\n", name, before, live_nodes(g), ms);
    if (opt->verify && !ir_verify(g, name)) ir_fatal(g, "internal error: IR invalid after pass %s", name);
    if (opt->dump_after && (strcmp(opt->dump_after, name) == 0 || strcmp(opt->dump_after, "all") == 0)) {
        printf("=== after %s ===\n", name);
        ir_dump(g, stdout);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void passes_run(struct ir_graph *g, const struct pass_options *opt)
{
    static const char *const names[] = {"specialize_shapes", "infer_fold", "remove_identity", "dce"};
    if (opt->dump_after && strcmp(opt->dump_after, "all") && strcmp(opt->dump_after, "import")) {
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            known |= strcmp(opt->dump_after, names[i]) == 0;
        if (!known)
            ir_die("--dump-after=%s: unknown pass (passes: import, specialize_shapes, infer_fold, "
                   "remove_identity, dce, all)", opt->dump_after);
    }
    if (opt->dump_after && strcmp(opt->dump_after, "import") == 0) {
        printf("=== after import ===\n");
        ir_dump(g, stdout);
    }
    ir_toposort(g);
    if (opt->verify && !ir_verify(g, "import")) ir_fatal(g, "internal error: IR invalid after import");
    uint32_t before;
    double t;
#define RUN(name, call)                                   \
    do {                                                  \
        before = live_nodes(g);                           \
        t = now_ms();                                     \
        (void)(call);                                     \
        after_pass(g, opt, name, before, now_ms() - t);   \
    } while (0)
    RUN("specialize_shapes", pass_specialize_shapes(g, opt));
    RUN("infer_fold", pass_infer_fold(g));
    RUN("remove_identity", pass_remove_identity(g));
    RUN("dce", pass_dce(g));
#undef RUN
}
