/* test_ops_hc.c — single-node tests of GridSample, LpPool, RoiAlign and Det through the real
 * compile path (tests/kernels/harness.h: passes + cg_build + runtime on the OpenCL device vs
 * ref_eval), on odd shapes, every mode / padding / align_corners / attribute form.
 * Usage: test_ops_hc gridsample|lppool|roialign|det|fatal:<case>; exit 0 iff every case passes
 * (fatal cases: ctest matches the compile error message).
 * Tolerances float32: atol 1e-5 / rtol 1e-4 (GridSample cubic and Det 1e-4 / 1e-3: float32
 * kernel vs double reference).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
/* Adds a float32 input with values in [-amp, amp). */
#define IN_F(c, amp, ...) in_rand(c, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__), amp)

static int fails, runs;

static float frand(void)
{
    static uint32_t s = 424242u;
    s = s * 1664525u + 1013904223u;
    return (float)((s >> 8) & 0xffffff) / 8388608.0f - 1.0f; /* [-1, 1) */
}

static void in_rand(struct kt_case *c, int rank, const int64_t *dims, float amp)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= dims[k];
    float *x = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) x[i] = amp * frand();
    kt_input(c, IR_F32, rank, dims, x, false);
    free(x);
}

static void run(struct kt_case *c, const char *label, double atol, double rtol)
{
    runs++;
    fails += kt_run(c, label, atol, rtol);
}

/* ---- GridSample ------------------------------------------------------------------------------ */
static void t_gridsample(void)
{
    static const char *modes16[] = {"bilinear", "nearest", "bicubic"};
    static const char *modes20[] = {"linear", "nearest", "cubic"};
    static const char *pads[] = {"zeros", "border", "reflection"};
    char label[160];
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++)
            for (int a = 0; a < 2; a++) {
                /* 2-D, opset 16 names; grid reaches 1.6x outside [-1, 1] */
                struct kt_case *c = kt_new("GridSample", 16);
                IN_F(c, 1.0f, 2, 3, 5, 7);
                IN_F(c, 1.6f, 2, 4, 9, 2);
                kt_attr_string(c, "mode", modes16[m]);
                kt_attr_string(c, "padding_mode", pads[p]);
                kt_attr_int(c, "align_corners", a);
                snprintf(label, sizeof label, "GridSample-16 2-D %s %s align_corners=%d",
                         modes16[m], pads[p], a);
                run(c, label, m == 2 ? 1e-4 : 1e-5, m == 2 ? 1e-3 : 1e-4);
                /* 3-D (volumetric), opset 22 names */
                c = kt_new("GridSample", 22);
                IN_F(c, 1.0f, 1, 2, 3, 4, 5);
                IN_F(c, 1.4f, 1, 3, 2, 5, 3);
                kt_attr_string(c, "mode", modes20[m]);
                kt_attr_string(c, "padding_mode", pads[p]);
                kt_attr_int(c, "align_corners", a);
                snprintf(label, sizeof label, "GridSample-22 3-D %s %s align_corners=%d",
                         modes20[m], pads[p], a);
                run(c, label, m == 2 ? 1e-4 : 1e-5, m == 2 ? 1e-3 : 1e-4);
            }
    /* 1-D, defaults (linear, zeros, align_corners 0) */
    struct kt_case *c = kt_new("GridSample", 20);
    IN_F(c, 1.0f, 3, 2, 11);
    IN_F(c, 1.3f, 3, 7, 1);
    run(c, "GridSample-20 1-D defaults", 1e-5, 1e-4);
    /* nearest at exact half-pixel coordinates: round half to even */
    c = kt_new("GridSample", 22);
    IN_F(c, 1.0f, 1, 1, 4, 4);
    {
        float gd[2 * 8];
        for (int i = 0; i < 8; i++) {
            gd[2 * i] = -1.0f + 0.25f * (float)i; /* x = (g + 1) * 2 - 0.5: 0.5 steps */
            gd[2 * i + 1] = 0.75f - 0.25f * (float)i;
        }
        kt_input(c, IR_F32, 4, DIMS(1, 1, 8, 2), gd, false);
    }
    kt_attr_string(c, "mode", "nearest");
    run(c, "GridSample-22 nearest half-pixel ties", 0, 0);
}

/* ---- LpPool ---------------------------------------------------------------------------------- */
static void t_lppool(void)
{
    struct kt_case *c;
    for (int p = 1; p <= 4; p++) {
        char label[96];
        c = kt_new("LpPool", 18);
        IN_F(c, 1.0f, 2, 3, 9, 11);
        kt_attr_ints(c, "kernel_shape", DIMS(3, 2), 2);
        kt_attr_int(c, "p", p);
        snprintf(label, sizeof label, "LpPool-18 2-D k3x2 p=%d", p);
        run(c, label, 1e-5, 1e-4);
    }
    c = kt_new("LpPool", 18);
    IN_F(c, 1.0f, 1, 2, 13, 10);
    kt_attr_ints(c, "kernel_shape", DIMS(3, 3), 2);
    kt_attr_ints(c, "strides", DIMS(2, 3), 2);
    kt_attr_ints(c, "pads", DIMS(1, 2, 2, 1), 4);
    kt_attr_ints(c, "dilations", DIMS(2, 1), 2);
    kt_attr_int(c, "ceil_mode", 1);
    kt_attr_int(c, "p", 3);
    run(c, "LpPool-18 2-D strides pads dilations ceil_mode p=3", 1e-5, 1e-4);
    c = kt_new("LpPool", 11);
    IN_F(c, 1.0f, 1, 3, 10, 9);
    kt_attr_ints(c, "kernel_shape", DIMS(4, 3), 2);
    kt_attr_string(c, "auto_pad", "SAME_LOWER");
    run(c, "LpPool-11 SAME_LOWER default p", 1e-5, 1e-4);
    c = kt_new("LpPool", 2);
    IN_F(c, 1.0f, 2, 2, 17);
    kt_attr_ints(c, "kernel_shape", DIMS(4), 1);
    kt_attr_ints(c, "strides", DIMS(3), 1);
    kt_attr_string(c, "auto_pad", "SAME_UPPER");
    run(c, "LpPool-2 1-D SAME_UPPER strides", 1e-5, 1e-4);
    c = kt_new("LpPool", 18);
    IN_F(c, 1.0f, 1, 2, 5, 6, 7);
    kt_attr_ints(c, "kernel_shape", DIMS(2, 3, 2), 3);
    kt_attr_ints(c, "pads", DIMS(1, 0, 1, 0, 2, 1), 6);
    kt_attr_int(c, "p", 1);
    run(c, "LpPool-18 3-D pads p=1", 1e-5, 1e-4);
}

/* ---- RoiAlign -------------------------------------------------------------------------------- */
static void t_roialign(void)
{
    /* rois over a 11x13 image: inside, partly outside, degenerate (x1 > x2), tiny */
    static const float rois[5 * 4] = {0.5f, 1.0f, 9.0f, 7.5f,  -3.0f, -2.0f, 4.0f, 14.0f,
                                      6.0f, 5.0f, 2.0f, 3.0f,  10.0f, 12.0f, 10.3f, 12.2f,
                                      0.0f, 0.0f, 12.9f, 10.9f};
    static const int64_t bidx[5] = {1, 0, 1, 0, 1};
    static const char *modes[] = {"avg", "max"};
    static const char *ctms[] = {"half_pixel", "output_half_pixel"};
    char label[160];
    for (int m = 0; m < 2; m++)
        for (int t = 0; t < 2; t++)
            for (int sr = 0; sr <= 3; sr += 3) {
                struct kt_case *c = kt_new("RoiAlign", 16);
                IN_F(c, 1.0f, 2, 3, 11, 13);
                kt_input(c, IR_F32, 2, DIMS(5, 4), rois, false);
                kt_input(c, IR_I64, 1, DIMS(5), bidx, false);
                kt_attr_string(c, "mode", modes[m]);
                kt_attr_string(c, "coordinate_transformation_mode", ctms[t]);
                kt_attr_int(c, "output_height", 3);
                kt_attr_int(c, "output_width", 4);
                kt_attr_int(c, "sampling_ratio", sr);
                kt_attr_float(c, "spatial_scale", sr ? 0.75f : 1.0f);
                snprintf(label, sizeof label, "RoiAlign-16 %s %s sampling_ratio=%d", modes[m],
                         ctms[t], sr);
                run(c, label, 1e-5, 1e-4);
            }
    /* opset 10: no coordinate_transformation_mode (output_half_pixel), default output 1x1 */
    struct kt_case *c = kt_new("RoiAlign", 10);
    IN_F(c, 1.0f, 2, 3, 11, 13);
    kt_input(c, IR_F32, 2, DIMS(5, 4), rois, false);
    kt_input(c, IR_I64, 1, DIMS(5), bidx, false);
    run(c, "RoiAlign-10 defaults", 1e-5, 1e-4);
}

/* ---- Det ------------------------------------------------------------------------------------- */
static void t_det(void)
{
    struct kt_case *c;
    c = kt_new("Det", 22);
    IN_F(c, 1.0f, 3, 3);
    run(c, "Det [3,3]", 1e-5, 1e-4);
    c = kt_new("Det", 11);
    IN_F(c, 1.0f, 2, 3, 5, 5);
    run(c, "Det [2,3,5,5]", 1e-4, 1e-3);
    c = kt_new("Det", 22);
    IN_F(c, 1.0f, 7, 1, 1);
    run(c, "Det [7,1,1]", 1e-5, 1e-4);
    c = kt_new("Det", 22);
    IN_F(c, 1.0f, 5, 9, 9);
    run(c, "Det [5,9,9]", 1e-4, 1e-3);
    /* singular matrices (a zero column, two equal rows) give 0 */
    static const float sing[2 * 9] = {1, 0, 2, 3, 0, 4, 5, 0, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3};
    c = kt_new("Det", 22);
    kt_input(c, IR_F32, 3, DIMS(2, 3, 3), sing, false);
    run(c, "Det singular", 1e-5, 1e-4);
}

/* ---- unsupported attribute values: compile errors naming op, attribute and value ------------ */
static void t_fatal(const char *what)
{
    struct kt_case *c;
    if (!strcmp(what, "gridsample_mode")) {
        c = kt_new("GridSample", 16);
        IN_F(c, 1.0f, 1, 1, 3, 3);
        IN_F(c, 1.0f, 1, 2, 2, 2);
        kt_attr_string(c, "mode", "area");
    } else if (!strcmp(what, "roialign_ctm")) {
        c = kt_new("RoiAlign", 16);
        IN_F(c, 1.0f, 1, 1, 4, 4);
        IN_F(c, 1.0f, 1, 4);
        kt_input(c, IR_I64, 1, DIMS(1), (const int64_t[]){0}, false);
        kt_attr_string(c, "coordinate_transformation_mode", "asymmetric");
    } else if (!strcmp(what, "lppool_p")) {
        c = kt_new("LpPool", 18);
        IN_F(c, 1.0f, 1, 1, 4, 4);
        kt_attr_ints(c, "kernel_shape", DIMS(2, 2), 2);
        kt_attr_int(c, "p", 0);
    } else {
        fprintf(stderr, "unknown fatal case %s\n", what);
        return;
    }
    kt_run(c, what, 0, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s gridsample|lppool|roialign|det|fatal:<case>\n", argv[0]);
        return 2;
    }
    const char *f = argv[1];
    if (!strcmp(f, "gridsample")) t_gridsample();
    else if (!strcmp(f, "lppool")) t_lppool();
    else if (!strcmp(f, "roialign")) t_roialign();
    else if (!strcmp(f, "det")) t_det();
    else if (!strncmp(f, "fatal:", 6)) {
        t_fatal(f + 6);
        return 3;
    } else {
        fprintf(stderr, "unknown group %s\n", f);
        return 2;
    }
    printf("%s: %d passed, %d failed\n", f, runs - fails, fails);
    return fails != 0;
}
