/* test_ka_movement.c — single-node tests (tests/kernels harness: ONNX node compiled through
 * passes + codegen + lower_*, run on the OpenCL device, compared with ref/) for the data-
 * movement families: transpose (incl. DepthToSpace/SpaceToDepth), concat, split, slice,
 * gather (Gather/GatherElements/GatherND), expand (Expand/Tile), pad, resize (Resize/Upsample),
 * trilu, fill. Shapes are odd and not tile multiples. Data movement is compared exactly
 * (atol = rtol = 0); resize linear/cubic with atol 1e-6 + rtol 1e-5 (float32 weights vs the
 * reference's double). Usage: test_ka_movement [group] (copy | gather | pad | resize | misc | all).
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>

static int fails, total;

#define RUN(c, label, atol, rtol) (total++, fails += kt_run((c), (label), (atol), (rtol)))

static void copy_tests(void)
{
    {
        const int64_t d[] = {3, 5, 7, 2};
        static const int64_t perms[][4] = {{0, 2, 3, 1}, {0, 3, 1, 2}, {3, 2, 1, 0}, {1, 0, 2, 3}, {0, 1, 3, 2}};
        for (int p = 0; p < 5; p++) {
            struct kt_case *c = kt_new("Transpose", 13);
            kt_attr_ints(c, "perm", perms[p], 4);
            kt_input(c, IR_F32, 4, d, NULL, false);
            char label[64];
            snprintf(label, sizeof label, "Transpose f32 perm %lld%lld%lld%lld", (long long)perms[p][0],
                     (long long)perms[p][1], (long long)perms[p][2], (long long)perms[p][3]);
            RUN(c, label, 0, 0);
        }
        struct kt_case *c = kt_new("Transpose", 13);
        kt_input(c, IR_I64, 4, d, NULL, false);
        RUN(c, "Transpose i64 default perm", 0, 0);
        const int64_t d2[] = {9, 13};
        c = kt_new("Transpose", 13);
        kt_input(c, IR_BOOL, 2, d2, NULL, false);
        RUN(c, "Transpose bool 2-D", 0, 0);
    }
    {
        const int64_t d[] = {2, 12, 3, 5};
        struct kt_case *c = kt_new("DepthToSpace", 13);
        kt_attr_int(c, "blocksize", 2);
        kt_input(c, IR_F32, 4, d, NULL, false);
        RUN(c, "DepthToSpace DCR b2", 0, 0);
        c = kt_new("DepthToSpace", 13);
        kt_attr_int(c, "blocksize", 2);
        kt_attr_string(c, "mode", "CRD");
        kt_input(c, IR_F32, 4, d, NULL, false);
        RUN(c, "DepthToSpace CRD b2", 0, 0);
        const int64_t d2[] = {2, 3, 6, 9};
        c = kt_new("SpaceToDepth", 13);
        kt_attr_int(c, "blocksize", 3);
        kt_input(c, IR_F32, 4, d2, NULL, false);
        RUN(c, "SpaceToDepth b3", 0, 0);
    }
    {
        const int64_t a[] = {2, 3, 5}, b[] = {2, 1, 5}, cc[] = {2, 4, 5};
        {
            struct kt_case *c = kt_new("Concat", 13);
            kt_attr_int(c, "axis", -2);
            kt_input(c, IR_F32, 3, a, NULL, false);
            kt_input(c, IR_F32, 3, b, NULL, true);
            kt_input(c, IR_F32, 3, cc, NULL, false);
            RUN(c, "Concat axis -2 (3 inputs, one constant)", 0, 0);
        }
        const int64_t e0[] = {3, 7}, e1[] = {3, 0}, e2[] = {3, 2};
        struct kt_case *c = kt_new("Concat", 13);
        kt_attr_int(c, "axis", 1);
        kt_input(c, IR_I64, 2, e0, NULL, false);
        kt_input(c, IR_I64, 2, e1, NULL, false);
        kt_input(c, IR_I64, 2, e2, NULL, false);
        RUN(c, "Concat i64 axis 1 with an empty input", 0, 0);
    }
    {
        const int64_t d[] = {3, 11, 4}, sd[] = {3};
        const int64_t sp[] = {2, 5, 4};
        struct kt_case *c = kt_new("Split", 18);
        kt_attr_int(c, "axis", 1);
        kt_input(c, IR_F32, 3, d, NULL, false);
        kt_input(c, IR_I64, 1, sd, sp, true);
        kt_outputs(c, 3);
        RUN(c, "Split axis 1 [2,5,4]", 0, 0);
        c = kt_new("Split", 18);
        kt_attr_int(c, "axis", -1);
        kt_attr_int(c, "num_outputs", 3);
        const int64_t d2[] = {5, 7};
        kt_input(c, IR_F32, 2, d2, NULL, false);
        kt_outputs(c, 3);
        RUN(c, "Split num_outputs=3 of 7 (3,3,1)", 0, 0);
        c = kt_new("Split", 13);
        kt_input(c, IR_I32, 2, (const int64_t[]){6, 5}, NULL, false);
        kt_outputs(c, 2);
        RUN(c, "Split-13 even, axis 0", 0, 0);
    }
    {
        const int64_t d[] = {5, 9, 7}, one[] = {1}, three[] = {3}, two[] = {2};
        struct {
            const char *label;
            int n;
            int64_t st[3], en[3], ax[3], sp[3];
            bool axes, steps;
        } cases[] = {
            {"Slice basic", 3, {1, 2, 0}, {4, 9, 7}, {0, 1, 2}, {1, 1, 1}, false, false},
            {"Slice negative step flip", 1, {-1}, {INT64_MIN}, {1}, {-1}, true, true},
            {"Slice step 2 / 3", 2, {0, 1}, {100, -1}, {2, 0}, {2, 3}, true, true},
            {"Slice neg step 2 on axis 2", 1, {5}, {0}, {-1}, {-2}, true, true},
            {"Slice empty", 1, {4}, {2}, {0}, {1}, true, true},
            {"Slice clamp", 2, {-100, 3}, {100, 1000}, {0, 2}, {1, 1}, true, true},
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            struct kt_case *c = kt_new("Slice", 13);
            kt_input(c, IR_F32, 3, d, NULL, false);
            const int64_t *nd = cases[k].n == 1 ? one : cases[k].n == 2 ? two : three;
            kt_input(c, IR_I64, 1, nd, cases[k].st, true);
            kt_input(c, IR_I64, 1, nd, cases[k].en, true);
            if (cases[k].axes || cases[k].steps) kt_input(c, IR_I64, 1, nd, cases[k].ax, true);
            if (cases[k].steps) kt_input(c, IR_I64, 1, nd, cases[k].sp, true);
            RUN(c, cases[k].label, 0, 0);
        }
    }
    {
        const int64_t d[] = {3, 1, 5}, sd[] = {4};
        const int64_t shp[] = {2, 3, 4, 5};
        struct kt_case *c = kt_new("Expand", 13);
        kt_input(c, IR_F32, 3, d, NULL, false);
        kt_input(c, IR_I64, 1, sd, shp, true);
        RUN(c, "Expand [3,1,5] -> [2,3,4,5]", 0, 0);
        const int64_t d1[] = {1}, s2[] = {2}, shp2[] = {3, 7};
        c = kt_new("Expand", 13);
        kt_input(c, IR_I64, 1, d1, NULL, false);
        kt_input(c, IR_I64, 1, s2, shp2, true);
        RUN(c, "Expand scalar-like i64", 0, 0);
        const int64_t td[] = {2, 3, 5}, tr[] = {3}, reps[] = {2, 1, 3};
        c = kt_new("Tile", 13);
        kt_input(c, IR_F32, 3, td, NULL, false);
        kt_input(c, IR_I64, 1, tr, reps, true);
        RUN(c, "Tile [2,1,3]", 0, 0);
    }
}

/* rows longer than one 256-element chunk of copy_strided */
static void long_row_tests(void)
{
    const int64_t a[] = {2, 3, 401}, b[] = {2, 2, 401};
    struct kt_case *c = kt_new("Concat", 13);
    kt_attr_int(c, "axis", 1);
    kt_input(c, IR_F32, 3, a, NULL, false);
    kt_input(c, IR_F32, 3, b, NULL, false);
    RUN(c, "Concat [2,3,401]++[2,2,401] axis 1", 0, 0);
    const int64_t t[] = {3, 700};
    c = kt_new("Transpose", 13);
    kt_input(c, IR_F32, 2, t, NULL, false);
    RUN(c, "Transpose [3,700]", 0, 0);
    const int64_t t2[] = {700, 3};
    c = kt_new("Transpose", 13);
    kt_input(c, IR_F32, 2, t2, NULL, false);
    RUN(c, "Transpose [700,3]", 0, 0);
    const int64_t one[] = {1}, st[] = {-2}, en[] = {INT64_MIN}, ax[] = {1}, sp[] = {-1};
    c = kt_new("Slice", 13);
    kt_input(c, IR_F32, 2, t, NULL, false);
    kt_input(c, IR_I64, 1, one, st, true);
    kt_input(c, IR_I64, 1, one, en, true);
    kt_input(c, IR_I64, 1, one, ax, true);
    kt_input(c, IR_I64, 1, one, sp, true);
    RUN(c, "Slice [3,700] axis 1 reversed from -2", 0, 0);
}

static void gather_tests(void)
{
    {
        const int64_t d[] = {11, 6}, id[] = {2, 3};
        const int64_t ind[] = {0, 10, -1, 5, 3, 3};
        struct kt_case *c = kt_new("Gather", 13);
        kt_input(c, IR_F32, 2, d, NULL, true);
        kt_input(c, IR_I64, 2, id, ind, false);
        RUN(c, "Gather axis 0 (embedding, run-time int64 indices)", 0, 0);
        const int32_t ind32[] = {1, -2, 4};
        const int64_t id3[] = {3}, d3[] = {2, 5, 3};
        c = kt_new("Gather", 13);
        kt_attr_int(c, "axis", 1);
        kt_input(c, IR_F32, 3, d3, NULL, false);
        kt_input(c, IR_I32, 1, id3, ind32, true);
        RUN(c, "Gather axis 1 int32 constant", 0, 0);
        const int64_t sc = -1;
        c = kt_new("Gather", 13);
        kt_attr_int(c, "axis", 2);
        kt_input(c, IR_I64, 3, d3, NULL, false);
        kt_input(c, IR_I64, 0, id3, &sc, false);
        RUN(c, "Gather scalar index -1 axis 2", 0, 0);
    }
    {
        const int64_t d[] = {3, 4, 5}, id[] = {3, 2, 5};
        int64_t ind[30];
        for (int i = 0; i < 30; i++) ind[i] = (i * 7) % 4 - (i % 5 == 0 ? 4 : 0);
        struct kt_case *c = kt_new("GatherElements", 13);
        kt_attr_int(c, "axis", 1);
        kt_input(c, IR_F32, 3, d, NULL, false);
        kt_input(c, IR_I64, 3, id, ind, false);
        RUN(c, "GatherElements axis 1", 0, 0);
    }
    {
        const int64_t d[] = {2, 3, 4}, id[] = {2, 2};
        const int64_t ind[] = {1, 2, 0, -1};
        struct kt_case *c = kt_new("GatherND", 13);
        kt_input(c, IR_F32, 3, d, NULL, false);
        kt_input(c, IR_I64, 2, id, ind, false);
        RUN(c, "GatherND K=2", 0, 0);
        const int64_t id2[] = {2, 3, 1};
        const int64_t ind2[] = {2, 0, 1, 1, 1, 0};
        c = kt_new("GatherND", 13);
        kt_attr_int(c, "batch_dims", 1);
        kt_input(c, IR_F32, 3, d, NULL, false);
        kt_input(c, IR_I64, 3, id2, ind2, false);
        RUN(c, "GatherND batch_dims=1", 0, 0);
    }
}

static void pad_tests(void)
{
    const int64_t d[] = {2, 3, 5, 7}, pd[] = {8};
    static const char *modes[] = {"constant", "reflect", "edge", "wrap"};
    const int64_t pads[] = {0, 1, 2, 3, 1, 0, 4, 2};
    const int64_t crop[] = {0, 0, -1, 2, 0, 1, 0, -3};
    for (int m = 0; m < 4; m++) {
        struct kt_case *c = kt_new("Pad", 19);
        kt_attr_string(c, "mode", modes[m]);
        kt_input(c, IR_F32, 4, d, NULL, false);
        kt_input(c, IR_I64, 1, pd, pads, true);
        char label[64];
        snprintf(label, sizeof label, "Pad %s", modes[m]);
        RUN(c, label, 0, 0);
        c = kt_new("Pad", 19);
        kt_attr_string(c, "mode", modes[m]);
        kt_input(c, IR_F32, 4, d, NULL, false);
        kt_input(c, IR_I64, 1, pd, crop, true);
        snprintf(label, sizeof label, "Pad %s with negative pads", modes[m]);
        RUN(c, label, 0, 0);
    }
    const float cv = 2.5f;
    const int64_t d0[] = {0}, ax[] = {1, 3}, p4[] = {4}, pads4[] = {1, 0, 2, 3};
    struct kt_case *c = kt_new("Pad", 19);
    kt_input(c, IR_F32, 4, d, NULL, false);
    kt_input(c, IR_I64, 1, p4, pads4, true);
    kt_input(c, IR_F32, 0, d0, &cv, false);
    kt_input(c, IR_I64, 1, (const int64_t[]){2}, ax, true);
    RUN(c, "Pad constant 2.5 (run-time value) on axes [1,3]", 0, 0);
    const int64_t pv[] = {0, 1, 0, 1, 0, 0, 0, 0};
    c = kt_new("Pad", 19);
    kt_attr_string(c, "mode", "reflect");
    kt_input(c, IR_F32, 4, (const int64_t[]){1, 1, 5, 9}, NULL, false);
    kt_input(c, IR_I64, 1, pd, (const int64_t[]){0, 0, 4, 3, 0, 0, 2, 5}, true);
    RUN(c, "Pad reflect wider than dim-1", 0, 0);
    (void)pv;
}

static void resize_one(const char *label, const char *mode, const char *ctm, const char *nm,
                       const int64_t *dims, const float *scales, const int64_t *sizes, int opset,
                       double tol)
{
    struct kt_case *c = kt_new("Resize", opset);
    kt_attr_string(c, "mode", mode);
    if (ctm) kt_attr_string(c, "coordinate_transformation_mode", ctm);
    if (nm) kt_attr_string(c, "nearest_mode", nm);
    const int64_t d4[] = {4}, d0[] = {0};
    kt_input(c, IR_F32, 4, dims, NULL, false);
    if (ctm && strcmp(ctm, "tf_crop_and_resize") == 0) {
        const int64_t d8[] = {8};
        const float roi[] = {0, 0, 0.2f, 0.4f, 1, 1, 0.9f, 1.2f};
        kt_input(c, IR_F32, 1, d8, roi, true);
        kt_attr_float(c, "extrapolation_value", -7.0f);
    } else {
        kt_input(c, IR_F32, 1, d0, NULL, true);
    }
    if (scales) kt_input(c, IR_F32, 1, d4, scales, true);
    else {
        kt_input(c, IR_F32, 1, d0, NULL, true);
        kt_input(c, IR_I64, 1, d4, sizes, true);
    }
    RUN(c, label, tol, tol * 10);
}

static void resize_tests(void)
{
    const int64_t d[] = {2, 3, 5, 7};
    const float up2[] = {1, 1, 2, 2}, up[] = {1, 1, 1.7f, 2.5f}, down[] = {1, 1, 0.6f, 0.45f};
    const int64_t sz[] = {2, 3, 8, 4};
    static const char *ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                 "align_corners", "asymmetric", "tf_crop_and_resize"};
    static const char *nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    resize_one("Resize nearest asymmetric floor x2 (SD upsample)", "nearest", "asymmetric", "floor",
               d, up2, NULL, 13, 0);
    char label[128];
    for (int k = 0; k < 4; k++) {
        snprintf(label, sizeof label, "Resize nearest half_pixel %s up 1.7/2.5", nms[k]);
        resize_one(label, "nearest", "half_pixel", nms[k], d, up, NULL, 13, 0);
        snprintf(label, sizeof label, "Resize nearest asymmetric %s down", nms[k]);
        resize_one(label, "nearest", "asymmetric", nms[k], d, down, NULL, 13, 0);
    }
    for (int k = 0; k < 6; k++) {
        snprintf(label, sizeof label, "Resize linear %s up", ctms[k]);
        resize_one(label, "linear", ctms[k], NULL, d, up, NULL, 19, 1e-6);
        snprintf(label, sizeof label, "Resize linear %s sizes", ctms[k]);
        resize_one(label, "linear", ctms[k], NULL, d, NULL, sz, 19, 1e-6);
        snprintf(label, sizeof label, "Resize cubic %s down", ctms[k]);
        resize_one(label, "cubic", ctms[k], NULL, d, down, NULL, 19, 1e-6);
        snprintf(label, sizeof label, "Resize nearest %s sizes", ctms[k]);
        resize_one(label, "nearest", ctms[k], NULL, d, NULL, sz, 19, 0);
    }
    {
        struct kt_case *c = kt_new("Resize", 19);
        kt_attr_string(c, "mode", "cubic");
        kt_attr_int(c, "exclude_outside", 1);
        kt_attr_float(c, "cubic_coeff_a", -0.5f);
        const int64_t d0[] = {0}, d4[] = {4};
        kt_input(c, IR_F32, 4, d, NULL, false);
        kt_input(c, IR_F32, 1, d0, NULL, true);
        kt_input(c, IR_F32, 1, d4, up, true);
        RUN(c, "Resize cubic exclude_outside a=-0.5", 1e-6, 1e-5);
    }
    {
        struct kt_case *c = kt_new("Resize", 19);
        kt_attr_string(c, "mode", "linear");
        kt_attr_ints(c, "axes", (const int64_t[]){3, 1}, 2);
        const int64_t d0[] = {0}, d2[] = {2};
        const float s2[] = {1.5f, 2.0f};
        kt_input(c, IR_F32, 4, d, NULL, false);
        kt_input(c, IR_F32, 1, d0, NULL, true);
        kt_input(c, IR_F32, 1, d2, s2, true);
        RUN(c, "Resize linear axes [3,1]", 1e-6, 1e-5);
    }
    {
        struct kt_case *c = kt_new("Upsample", 9);
        kt_attr_string(c, "mode", "nearest");
        const int64_t d4[] = {4};
        const float s[] = {1, 1, 2, 3};
        kt_input(c, IR_F32, 4, d, NULL, false);
        kt_input(c, IR_F32, 1, d4, s, true);
        RUN(c, "Upsample-9 nearest [1,1,2,3]", 0, 0);
        c = kt_new("Resize", 13);
        kt_attr_string(c, "mode", "nearest");
        const int64_t d0[] = {0};
        kt_input(c, IR_I64, 4, d, NULL, false);
        kt_input(c, IR_F32, 1, d0, NULL, true);
        kt_input(c, IR_F32, 1, d4, up2, true);
        RUN(c, "Resize nearest int64 x2", 0, 0);
    }
    /* integer nearest upsampling: the cpu class's resize_nn_up (codegen/lower_resize.c), the
     * gpu class's resize_nearest; odd widths (vector loop + tail), > 256 rows (lws 8, items past
     * the last row), fw 1 / 2 / 3, every element size */
    const int64_t dw[] = {1, 3, 100, 37}, dh[] = {2, 3, 5, 19};
    const float up3[] = {1, 1, 3, 3}, uph[] = {1, 1, 2, 1}, upw[] = {1, 1, 1, 2};
    resize_one("Resize nearest half_pixel x2 (round_prefer_floor: c / 2)", "nearest",
               "half_pixel", NULL, d, up2, NULL, 19, 0);
    resize_one("Resize nearest half_pixel round_prefer_ceil x3", "nearest", "half_pixel",
               "round_prefer_ceil", d, up3, NULL, 19, 0);
    resize_one("Resize nearest pytorch_half_pixel x2, 300 rows", "nearest", "pytorch_half_pixel",
               NULL, dw, up2, NULL, 19, 0);
    resize_one("Resize nearest asymmetric floor x3", "nearest", "asymmetric", "floor", d, up3,
               NULL, 19, 0);
    resize_one("Resize nearest asymmetric floor height x2 only (fw 1)", "nearest", "asymmetric",
               "floor", dh, uph, NULL, 19, 0);
    resize_one("Resize nearest asymmetric floor width x2 only (fh 1)", "nearest", "asymmetric",
               "floor", dh, upw, NULL, 19, 0);
    resize_one("Resize nearest asymmetric round_prefer_floor x3 (not c / 3: resize_nearest)",
               "nearest", "asymmetric", NULL, d, up3, NULL, 19, 0);
    resize_one("Resize nearest half_pixel_symmetric sizes x2", "nearest", "half_pixel_symmetric",
               NULL, (const int64_t[]){1, 2, 4, 5}, NULL, (const int64_t[]){1, 2, 8, 10}, 19, 0);
    static const enum ir_dtype nn_types[] = {IR_U8, IR_F16, IR_I64};
    static const char *const nn_names[] = {"uint8", "float16", "int64"};
    for (int k = 0; k < 3; k++) {
        struct kt_case *c = kt_new("Resize", 13);
        kt_attr_string(c, "mode", "nearest");
        kt_attr_string(c, "coordinate_transformation_mode", "asymmetric");
        kt_attr_string(c, "nearest_mode", "floor");
        kt_input(c, nn_types[k], 4, dh, NULL, false);
        kt_input(c, IR_F32, 1, (const int64_t[]){0}, NULL, true);
        kt_input(c, IR_F32, 1, (const int64_t[]){4}, up2, true);
        snprintf(label, sizeof label, "Resize nearest %s x2 (odd width 19)", nn_names[k]);
        RUN(c, label, 0, 0);
    }
    {
        struct kt_case *c = kt_new("Resize", 19);
        kt_attr_string(c, "mode", "nearest");
        kt_attr_string(c, "coordinate_transformation_mode", "asymmetric");
        kt_attr_string(c, "nearest_mode", "floor");
        kt_input(c, IR_F32, 3, (const int64_t[]){2, 3, 13}, NULL, false);
        kt_input(c, IR_F32, 1, (const int64_t[]){0}, NULL, true);
        kt_input(c, IR_F32, 1, (const int64_t[]){3}, (const float[]){1, 1, 2}, true);
        RUN(c, "Resize nearest 1-D x2 (rank 3)", 0, 0);
    }
}

static void misc_tests(void)
{
    const int64_t d[] = {2, 5, 7}, one[] = {1};
    const int64_t ks[] = {0, 2, -3, 9};
    for (int up = 0; up < 2; up++)
        for (int k = 0; k < 4; k++) {
            struct kt_case *c = kt_new("Trilu", 14);
            kt_attr_int(c, "upper", up);
            kt_input(c, IR_F32, 3, d, NULL, false);
            kt_input(c, IR_I64, 0, one, &ks[k], true);
            char label[64];
            snprintf(label, sizeof label, "Trilu upper=%d k=%lld", up, (long long)ks[k]);
            RUN(c, label, 0, 0);
        }
    struct kt_case *c = kt_new("Trilu", 14);
    kt_input(c, IR_BOOL, 3, d, NULL, false);
    RUN(c, "Trilu bool default", 0, 0);
    /* fill family: EyeLike's output depends only on its input's shape */
    const int64_t ks2[] = {0, 2, -3};
    for (int k = 0; k < 3; k++) {
        c = kt_new("EyeLike", 22);
        kt_attr_int(c, "k", ks2[k]);
        kt_input(c, IR_F32, 2, (const int64_t[]){5, 7}, NULL, false);
        char label[64];
        snprintf(label, sizeof label, "EyeLike f32 [5,7] k=%lld", (long long)ks2[k]);
        RUN(c, label, 0, 0);
    }
    c = kt_new("EyeLike", 22);
    kt_attr_int(c, "dtype", IR_I64);
    kt_input(c, IR_F32, 2, (const int64_t[]){6, 4}, NULL, false);
    RUN(c, "EyeLike -> int64 [6,4]", 0, 0);
}

int main(int argc, char **argv)
{
    const char *grp = argc > 1 ? argv[1] : "all";
    const bool all = strcmp(grp, "all") == 0;
    if (all || strcmp(grp, "copy") == 0) copy_tests(), long_row_tests();
    if (all || strcmp(grp, "gather") == 0) gather_tests();
    if (all || strcmp(grp, "pad") == 0) pad_tests();
    if (all || strcmp(grp, "resize") == 0) resize_tests();
    if (all || strcmp(grp, "misc") == 0) misc_tests();
    printf("%d of %d passed\n", total - fails, total);
    return fails != 0;
}
