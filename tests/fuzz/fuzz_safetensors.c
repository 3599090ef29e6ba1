/* fuzz_safetensors.c — libFuzzer target over the safetensors reader (`onnx2cl --weights-from`,
 * frontend/safetensors.c): each input is a candidate .safetensors file applied with
 * st_apply_buffer() to a freshly loaded tests/weights_from/model.onnx (initializers W [6,5] f32,
 * B [5] f32, E [10,4] f32, idx [3] int64, so matching names reach the conversion code).
 * User errors are expected (ir_set_fatal_hook longjmps back; the graph is freed); crashes,
 * sanitizer reports and aborts are findings. After a successful apply every replaced
 * initializer's bytes are read once (a wrong pointer or size is then an ASan report).
 * Assumes: single-threaded. O2C_ST_MODEL names the model (compile definition).
 */
#include "frontend/onnx_load.h"
#include "frontend/safetensors.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf fatal_jmp; /* where a fatal user error returns to */
static int in_one;        /* inside LLVMFuzzerTestOneInput */

static void on_fatal(void)
{
    if (in_one) longjmp(fatal_jmp, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ir_set_fatal_hook(on_fatal);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ir_graph *volatile g;
    static uint8_t *volatile copy; /* the reader keeps pointers into the bytes: its own copy */
    in_one = 0;
    g = onnx_load(O2C_ST_MODEL); /* a model that loads: errors here are not expected */
    copy = malloc(size ? size : 1);
    if (!copy) abort();
    for (size_t i = 0; i < size; i++) copy[i] = data[i];
    in_one = 1;
    if (setjmp(fatal_jmp) == 0) {
        st_apply_buffer(g, "fuzz.safetensors", copy, size, NULL);
        volatile unsigned sum = 0;
        for (uint32_t v = 0; v < g->nvalues; v++)
            if (g->values[v].is_param)
                for (size_t i = 0; i < g->values[v].nbytes; i++)
                    sum += ((const unsigned char *)g->values[v].data)[i];
        (void)sum;
    }
    in_one = 0;
    ir_graph_free(g);
    free(copy);
    return 0;
}
