/* test_norm_pass.c — graph shape after the layernorm / gelu / gnorm / conv_epilogue fusions
 * (no OpenCL; label unit).
 *
 * usage: test_norm_pass MODEL.onnx [--upto=PASS] [NAME=d0,d1,..]... [OP=COUNT]...
 *   --upto=PASS  run the fusions up to PASS only (the later ones, e.g. elementwise, which
 *              absorbs Gelu, are disabled; names from FUSION_PASSES in passes/fuse/fuse.h);
 *   NAME=dims  a --shape binding (NAME is a graph input);
 *   OP=COUNT   after the whole pipeline (every fusion on, verifier after each pass) exactly COUNT
 *              live nodes of op OP (ONNX or o2c.* name). Qualified forms count fused nodes by
 *              an attribute: o2c.GroupNorm+silu (activation=1), o2c.Conv+silu / +relu
 *              (activation 1 / 2), o2c.Conv+res (with a residual input), o2c.Conv+div
 *              (output_divisor != 1), Gelu+tanh (approximate="tanh"), o2c.Gemm+geglu
 *              (activation 5 / 6: a GEGLU feed-forward, passes/fuse/geglu.c).
 * Prints every check; exit status 1 if any fails.
 */
#include "frontend/onnx_load.h"
#include "passes/fuse/fuse.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Live nodes of g matching the (possibly qualified) op spec. */
static int count(const struct ir_graph *g, const char *spec)
{
    char op[64];
    const char *plus = strchr(spec, '+');
    size_t len = plus ? (size_t)(plus - spec) : strlen(spec);
    if (len >= sizeof op) return -1;
    memcpy(op, spec, len);
    op[len] = 0;
    enum ir_op id = ir_op_lookup(op);
    if (id == IR_OP_UNKNOWN) {
        for (int k = 1; k < IR_OP_COUNT; k++)
            if (strcmp(ir_op_name((enum ir_op)k), op) == 0) id = (enum ir_op)k;
        if (id == IR_OP_UNKNOWN) return -1;
    }
    int c = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead || n->op != id) continue;
        bool ok = true;
        if (plus) {
            const char *q = plus + 1;
            if (strcmp(q, "silu") == 0) ok = ir_attr_int(n, "activation", 0) == 1;
            else if (strcmp(q, "relu") == 0) ok = ir_attr_int(n, "activation", 0) == 2;
            else if (strcmp(q, "res") == 0) ok = ir_input(n, 3) != IR_NONE;
            else if (strcmp(q, "div") == 0) ok = ir_attr_float(n, "output_divisor", 1.0f) != 1.0f;
            else if (strcmp(q, "geglu") == 0)
                ok = ir_attr_int(n, "activation", 0) == 5 || ir_attr_int(n, "activation", 0) == 6;
            else if (strcmp(q, "tanh") == 0) ok = strcmp(ir_attr_string(n, "approximate", "none"), "tanh") == 0;
            else return -1;
        }
        c += ok;
    }
    return c;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.onnx [NAME=dims]... [OP=COUNT]...\n", argv[0]);
        return 2;
    }
    struct pass_shape_binding b[8];
    int nb = 0;
    struct ir_graph *g = onnx_load(argv[1]);
    /* shape bindings are the NAME=... whose NAME is a graph input */
    for (int a = 2; a < argc; a++) {
        const char *eq = strchr(argv[a], '=');
        if (!eq) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - argv[a]), argv[a]);
        uint32_t v = ir_value_find(g, name);
        if (v == IR_NONE || !g->values[v].is_input || nb == 8) continue;
        b[nb].input = strdup(name);
        b[nb].rank = 0;
        for (const char *p = eq + 1; *p && b[nb].rank < IR_MAX_RANK;) {
            b[nb].dims[b[nb].rank++] = strtoll(p, (char **)&p, 10);
            if (*p == ',') p++;
        }
        nb++;
    }
    struct pass_options opt = {.shapes = b, .nshapes = nb, .verify = true};
    static char no_fuse[1024];
    for (int a = 2; a < argc; a++) {
        if (strncmp(argv[a], "--upto=", 7) != 0) continue;
        static const char *const names[] = {
#define F(name, fn) name,
            FUSION_PASSES(F)
#undef F
        };
        bool after = false;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            if (after) {
                if (no_fuse[0]) strncat(no_fuse, ",", sizeof no_fuse - strlen(no_fuse) - 1);
                strncat(no_fuse, names[k], sizeof no_fuse - strlen(no_fuse) - 1);
            }
            after |= strcmp(names[k], argv[a] + 7) == 0;
        }
        if (!after) {
            fprintf(stderr, "%s: unknown pass\n", argv[a]);
            return 2;
        }
        if (no_fuse[0]) opt.no_fuse = no_fuse;
    }
    passes_run(g, &opt);
    int fails = 0;
    for (int a = 2; a < argc; a++) {
        const char *eq = strchr(argv[a], '=');
        if (!eq || strncmp(argv[a], "--", 2) == 0) continue;
        char spec[256];
        snprintf(spec, sizeof spec, "%.*s", (int)(eq - argv[a]), argv[a]);
        uint32_t v = ir_value_find(g, spec);
        if (v != IR_NONE && g->values[v].is_input) continue;
        int want = atoi(eq + 1), got = count(g, spec);
        bool ok = got == want;
        fails += !ok;
        printf("%s %s: %s = %d (expected %d)\n", ok ? "ok  " : "FAIL", argv[1], spec, got, want);
    }
    ir_graph_free(g);
    for (int i = 0; i < nb; i++) free((char *)b[i].input);
    return fails != 0;
}
