/* fuzz_load.c — libFuzzer target over the model loader, shape inference and the pass pipeline.
 *
 * Each input is a candidate .onnx file: onnx_load_buffer() imports it (as the model
 * FUZZDIR/fuzz.onnx, so external data resolves inside a private temporary folder holding a
 * 24-byte weights.bin and a symlink out of it), ir_verify() must accept the imported IR, then
 * passes_run() (specialize shapes with every symbolic dim bound to 2, infer + fold, identity
 * removal, DCE) and ir_verify() again.
 * User errors are expected: ir_set_fatal_hook() longjmps back here and the half-built graph is
 * freed (onnx_load_abandon / ir_graph_free); only crashes, sanitizer reports, assertion failures
 * (abort) and verifier failures (abort) are findings.
 * Assumes: single-threaded; a few small temporaries malloc'd by a fold that then fails may leak
 * (run with -detect_leaks=0, see README "Fuzzing").
 */
#include "frontend/onnx_load.h"
#include "passes/passes.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jmp_buf fatal_jmp;          /* where a fatal user error returns to */
static int in_one;                 /* inside LLVMFuzzerTestOneInput */
static char model_path[4096];      /* FUZZDIR/fuzz.onnx (never written) */

static void on_fatal(void)
{
    if (in_one) longjmp(fatal_jmp, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char dir[] = "/tmp/onnx2cl-fuzz-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
    char p[4200];
    snprintf(p, sizeof p, "%s/weights.bin", dir);
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    fwrite(w, sizeof w, 1, f);
    fclose(f);
    snprintf(p, sizeof p, "%s/link.bin", dir);
    if (symlink("/etc/passwd", p) != 0) perror("symlink");
    snprintf(model_path, sizeof model_path, "%s/fuzz.onnx", dir);
    ir_set_fatal_hook(on_fatal);
    return 0;
}

/* --shape bindings: every symbolic graph input gets dims 2 (rank from the file). */
static int bind_inputs(const struct ir_graph *g, struct pass_shape_binding *b, int cap)
{
    int n = 0;
    for (uint32_t i = 0; i < g->ninputs && n < cap; i++) {
        const struct ir_value *v = &g->values[g->inputs[i]];
        if (v->dims_known || v->rank < 0) continue;
        b[n].input = v->name;
        b[n].rank = v->rank;
        for (int k = 0; k < v->rank; k++) b[n].dims[k] = v->dim_param[k] ? 2 : v->dims[k];
        n++;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ir_graph *volatile g;
    static struct pass_shape_binding shapes[16];
    g = NULL;
    in_one = 1;
    if (setjmp(fatal_jmp) == 0) {
        g = onnx_load_buffer(model_path, data, size);
        if (!ir_verify(g, "onnx_load")) abort();
        struct pass_options opt = {0};
        opt.shapes = shapes;
        opt.nshapes = bind_inputs(g, shapes, 16);
        passes_run(g, &opt);
        if (!ir_verify(g, "passes_run")) abort();
    } else {
        onnx_load_abandon();
    }
    in_one = 0;
    ir_graph_free(g);
    g = NULL;
    return 0;
}
