/* test_kernels_scatter.c — kernels/scatter.cl against ref/ref_scatter.c through the kernel
 * harness (tests/kernels/harness.h): odd, non-power-of-two sizes; indices, sequence_lens and
 * write_indices are RUN-TIME inputs (so the kernels, not constant folding, do the work) holding
 * duplicates and negative values, every reduction (none/add/mul/max/min), several dtypes and
 * both index types. Tolerance: exact for integer dtypes; float32 add/mul 1e-6 + 1e-6 relative
 * (the reference rounds each step to float32 as the kernel does).
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>

static uint32_t rng_state = 12345u;

/* Deterministic pseudo-random integer in [lo, hi). */
static int64_t rnd(int64_t lo, int64_t hi)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return lo + (int64_t)((rng_state >> 8) % (uint32_t)(hi - lo));
}

static void fill_i64(int64_t *p, int64_t n, int64_t lo, int64_t hi)
{
    for (int64_t i = 0; i < n; i++) p[i] = rnd(lo, hi);
}

static int scatter_elements(const char *red, enum ir_dtype t, enum ir_dtype it)
{
    /* data [5,7,3], axis 1 (A = 7), indices/updates [4,6,3]: 6 updates per column into 7 slots */
    int64_t xd[] = {5, 7, 3}, ud[] = {4, 6, 3};
    int64_t ind[72];
    int32_t ind32[72];
    fill_i64(ind, 72, -7, 7);
    for (int i = 0; i < 72; i++) ind32[i] = (int32_t)ind[i];
    struct kt_case *c = kt_new("ScatterElements", 18);
    kt_input(c, t, 3, xd, NULL, false);
    kt_input(c, it, 3, ud, it == IR_I64 ? (const void *)ind : (const void *)ind32, false);
    kt_input(c, t, 3, ud, NULL, false);
    kt_attr_int(c, "axis", 1);
    kt_attr_string(c, "reduction", red);
    char label[96];
    snprintf(label, sizeof label, "ScatterElements [5,7,3] axis=1 reduction=%s %s idx %s", red,
             ir_dtype_name(t), ir_dtype_name(it));
    return kt_run(c, label, 1e-6, 1e-6);
}

static int scatter_elements_axis0(void)
{
    /* rank 2, axis 0, indices narrower than data off the axis ([3,4] into [6,5]) */
    int64_t xd[] = {6, 5}, ud[] = {3, 4}, ind[12];
    fill_i64(ind, 12, -6, 6);
    struct kt_case *c = kt_new("ScatterElements", 13);
    kt_input(c, IR_F32, 2, xd, NULL, false);
    kt_input(c, IR_I64, 2, ud, ind, false);
    kt_input(c, IR_F32, 2, ud, NULL, false);
    return kt_run(c, "ScatterElements-13 [6,5] axis=0 indices [3,4]", 0, 0);
}

static int scatter_nd(const char *red, enum ir_dtype t, int K)
{
    /* data [6,5,4]; 7 index tuples of length K (duplicates), slices of the trailing dims */
    int64_t xd[] = {6, 5, 4}, idd[] = {7, K}, ind[21];
    for (int m = 0; m < 7; m++)
        for (int j = 0; j < K; j++) ind[m * K + j] = rnd(-xd[j], xd[j]);
    int64_t ud[3] = {7, 1, 1};
    int ur = 1;
    for (int k = K; k < 3; k++) ud[ur++] = xd[k];
    struct kt_case *c = kt_new("ScatterND", 18);
    kt_input(c, t, 3, xd, NULL, false);
    kt_input(c, IR_I64, 2, idd, ind, false);
    kt_input(c, t, ur, ud, NULL, false);
    kt_attr_string(c, "reduction", red);
    char label[96];
    snprintf(label, sizeof label, "ScatterND [6,5,4] K=%d reduction=%s %s", K, red,
             ir_dtype_name(t));
    return kt_run(c, label, 1e-6, 1e-6);
}

static int tensor_scatter(const char *mode, const int64_t *w)
{
    int64_t xd[] = {3, 2, 9, 5}, ud[] = {3, 2, 4, 5}, wd[] = {3};
    struct kt_case *c = kt_new("TensorScatter", 24);
    kt_input(c, IR_F32, 4, xd, NULL, false);
    kt_input(c, IR_F32, 4, ud, NULL, false);
    if (w) kt_input(c, IR_I64, 1, wd, w, false);
    kt_attr_int(c, "axis", 2);
    kt_attr_string(c, "mode", mode);
    char label[96];
    snprintf(label, sizeof label, "TensorScatter [3,2,9,5] axis=2 S=4 mode=%s%s", mode,
             w ? "" : " no write_indices");
    return kt_run(c, label, 0, 0);
}

static int reverse_sequence(int batch_axis, enum ir_dtype t)
{
    int64_t xd[3], ld[1], lens[7];
    const int time_axis = 1 - batch_axis;
    xd[batch_axis] = 5;
    xd[time_axis] = 7;
    xd[2] = 3;
    ld[0] = 5;
    const int64_t l[5] = {7, 0, 3, 1, 5};
    for (int i = 0; i < 5; i++) lens[i] = l[i];
    struct kt_case *c = kt_new("ReverseSequence", 10);
    kt_input(c, t, 3, xd, NULL, false);
    kt_input(c, IR_I64, 1, ld, lens, false);
    kt_attr_int(c, "batch_axis", batch_axis);
    kt_attr_int(c, "time_axis", time_axis);
    char label[96];
    snprintf(label, sizeof label, "ReverseSequence [%lld,%lld,3] batch_axis=%d %s",
             (long long)xd[0], (long long)xd[1], batch_axis, ir_dtype_name(t));
    return kt_run(c, label, 0, 0);
}

static int max_unpool(bool with_shape)
{
    /* X [2,3,5,4], kernel 3x2, strides 2x2, pads [1,0,0,1]: inferred [2,3,10,7] = 420 */
    int64_t xd[] = {2, 3, 5, 4}, ind[120], ks[] = {3, 2}, st[] = {2, 2}, pads[] = {1, 0, 0, 1};
    fill_i64(ind, 120, 0, 420);
    ind[7] = ind[3]; /* a duplicate target: the later element wins */
    struct kt_case *c = kt_new("MaxUnpool", 11);
    kt_input(c, IR_F32, 4, xd, NULL, false);
    kt_input(c, IR_I64, 4, xd, ind, false);
    if (with_shape) {
        int64_t sd[] = {4}, os[] = {2, 3, 11, 9};
        kt_input(c, IR_I64, 1, sd, os, true);
    }
    kt_attr_ints(c, "kernel_shape", ks, 2);
    kt_attr_ints(c, "strides", st, 2);
    kt_attr_ints(c, "pads", pads, 4);
    return kt_run(c, with_shape ? "MaxUnpool [2,3,5,4] output_shape [2,3,11,9]"
                                : "MaxUnpool [2,3,5,4] k3x2 s2 pads [1,0,0,1]",
                  0, 0);
}

/* Cases that must fail compilation (ctest checks the message): unsupported attribute values
 * and a constant index out of range. */
static int fatal_case(const char *which)
{
    int64_t xd[] = {3, 4}, ud[] = {3, 2}, ind[6] = {0, 1, 2, 3, 0, 1};
    struct kt_case *c = kt_new(strcmp(which, "tscatter_mode") == 0 ? "TensorScatter"
                                                                 : "ScatterElements", 18);
    kt_input(c, IR_F32, 2, xd, NULL, false);
    if (strcmp(which, "tscatter_mode") == 0) {
        kt_input(c, IR_F32, 2, ud, NULL, false);
        kt_attr_int(c, "axis", 1);
        kt_attr_string(c, "mode", "ring");
    } else {
        if (strcmp(which, "const_index") == 0) ind[3] = 4;
        kt_input(c, IR_I64, 2, ud, ind, strcmp(which, "const_index") == 0);
        kt_input(c, IR_F32, 2, ud, NULL, false);
        kt_attr_int(c, "axis", 1);
        if (strcmp(which, "reduction") == 0) kt_attr_string(c, "reduction", "sum");
    }
    return kt_run(c, which, 0, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strncmp(argv[1], "fatal:", 6) == 0) return fatal_case(argv[1] + 6);
    int fails = 0, total = 0;
    const char *reds[] = {"none", "add", "mul", "max", "min"};
    for (int r = 0; r < 5; r++) {
        fails += scatter_elements(reds[r], IR_F32, IR_I64), total++;
        fails += scatter_nd(reds[r], IR_F32, 1), total++;
    }
    fails += scatter_elements("add", IR_I32, IR_I32), total++;
    fails += scatter_elements("max", IR_F16, IR_I64), total++;
    fails += scatter_elements("mul", IR_BOOL, IR_I32), total++;
    fails += scatter_elements("none", IR_I64, IR_I32), total++;
    fails += scatter_elements_axis0(), total++;
    fails += scatter_nd("add", IR_I64, 2), total++;
    fails += scatter_nd("min", IR_F64, 3), total++;
    fails += scatter_nd("none", IR_U8, 2), total++;
    const int64_t wl[] = {5, 0, 2}, wc[] = {7, 8, 3};
    fails += tensor_scatter("linear", wl), total++;
    fails += tensor_scatter("circular", wc), total++;
    fails += tensor_scatter("linear", NULL), total++;
    fails += reverse_sequence(0, IR_F32), total++;
    fails += reverse_sequence(1, IR_I16), total++;
    fails += max_unpool(false), total++;
    fails += max_unpool(true), total++;
    printf("%d passed, %d failed\n", total - fails, fails);
    return fails != 0;
}
