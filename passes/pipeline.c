/* pipeline.c — the ordered pass table and its driver (verifier, --dump-after, --stats).
 *
 * Order: specialize_shapes (+ --bind) -> [expose, with --expose] -> infer_fold (shape inference + constant folding in one topological
 * sweep: shapes need folded values, folding needs shapes; function ops expand here) -> promote_f16
 * (float16 GEMM/conv in float32) -> remove_identity -> dce -> the
 * fusion passes of fusion_passes[] (each can be disabled by --no-fuse=NAME, all by
 * --no-fuse=all), with a toposort + DCE after each. Memory planning happens in codegen (it needs
 * the lowered launch order).
 */

#include "passes/fuse/fuse.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* The fusion passes, in order. */
struct fusion_pass {
    const char *name;                 /* --no-fuse name and stats key */
    bool (*fn)(struct ir_graph *g);   /* the pass */
};
static const struct fusion_pass fusion_passes[] = {
#define F(name, fn) {name, fn},
    FUSION_PASSES(F)
#undef F
    {NULL, NULL},
};

void fuse_stats_register(const char *pass);

static bool fusion_disabled(const struct pass_options *opt, const char *name)
{
    if (!opt->no_fuse) return false;
    const char *p = opt->no_fuse;
    size_t n = strlen(name);
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if ((len == 3 && strncmp(p, "all", 3) == 0) || (len == n && strncmp(p, name, n) == 0))
            return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

/* Checks that --no-fuse names at least one pass and that every name is a known fusion pass
 * (an empty list or an empty name between commas is refused, naming the valid names). */
static void check_no_fuse(const struct pass_options *opt)
{
    if (!opt->no_fuse) return;
    char known[512] = "all";
    for (const struct fusion_pass *f = fusion_passes; f->name; f++) {
        strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, f->name, sizeof known - strlen(known) - 1);
    }
    const char *p = opt->no_fuse;
    if (!*p) ir_usage_die("--no-fuse= needs one or more fusion pass names (known: %s)", known);
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool ok = len == 3 && strncmp(p, "all", 3) == 0;
        for (const struct fusion_pass *f = fusion_passes; f->name; f++)
            ok |= strlen(f->name) == len && strncmp(p, f->name, len) == 0;
        if (!len)
            ir_usage_die("--no-fuse=%s: an empty name in the list (known: %s)", opt->no_fuse, known);
        if (!ok)
            ir_usage_die("--no-fuse=%.*s: unknown fusion pass (known: %s)", (int)len, p, known);
        if (!e) break;
        p = e + 1;
    }
}

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
    ir_memtrace(name);
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
    static const char *const names[] = {"specialize_shapes", "expose", "infer_fold", "promote_f16", "remove_identity", "dce"};
    check_no_fuse(opt);
    if (opt->dump_after && strcmp(opt->dump_after, "all") && strcmp(opt->dump_after, "import")) {
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            known |= strcmp(opt->dump_after, names[i]) == 0;
        for (const struct fusion_pass *f = fusion_passes; f->name; f++)
            known |= strcmp(opt->dump_after, f->name) == 0;
        if (!known) {
            char list[512] = "import, specialize_shapes, expose, infer_fold, promote_f16, remove_identity, dce";
            for (const struct fusion_pass *f = fusion_passes; f->name; f++) {
                strncat(list, ", ", sizeof list - strlen(list) - 1);
                strncat(list, f->name, sizeof list - strlen(list) - 1);
            }
            ir_usage_die("--dump-after=%s: unknown pass (passes: %s, all)", opt->dump_after, list);
        }
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
    if (opt->expose) RUN("expose", pass_expose(g, opt->expose));
    RUN("infer_fold", pass_infer_fold(g));
    RUN("promote_f16", pass_promote_f16(g));
    RUN("remove_identity", pass_remove_identity(g));
    RUN("dce", pass_dce(g));
    for (const struct fusion_pass *f = fusion_passes; f->name; f++) {
        if (fusion_disabled(opt, f->name)) continue;
        fuse_stats_register(f->name);
        before = live_nodes(g);
        t = now_ms();
        if (f->fn(g)) {
            ir_toposort(g);
            pass_dce(g);
        }
        after_pass(g, opt, f->name, before, now_ms() - t);
    }
#undef RUN
}
