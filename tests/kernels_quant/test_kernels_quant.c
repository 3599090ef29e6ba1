/* test_kernels_quant.c — kernels/quant.cl (QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear), the integer bit ops of kernels/unary.cl and kernels/binary.cl
 * (BitwiseNot, BitwiseAnd/Or/Xor, BitShift) and BitCast (a buffer alias) against ref/ through
 * the kernel harness (tests/kernels/harness.h): odd sizes, run-time x / scale / zero point (so
 * the kernels, not constant folding, do the work), per-tensor, per-axis (positive and negative
 * axis) and blocked granularity, every quantized type, float16 x / scale / output, round-half-
 * to-even ties, saturation, shift counts < 0 and >= the width, broadcasting.
 * Usage: test_kernels_quant quant|bits|fatal:<case>; exit 0 iff every case passes (fatal cases:
 * ctest matches the compile error message). Tolerances: integer outputs exact; float outputs
 * 0 / 0 (kernel and reference evaluate the same float32 expression).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static int fails, runs;
static uint32_t rng_state = 97531u;

static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= dims[k];
    return n;
}

/* Float input (float32 or float16) with values lo + (hi - lo) * u, u uniform in [0, 1). */
static void in_f(struct kt_case *c, enum ir_dtype t, int rank, const int64_t *dims, float lo,
                 float hi)
{
    const int64_t n = numel(rank, dims);
    float *x = malloc(sizeof(float) * (size_t)(n ? n : 1));
    uint16_t *h = malloc(sizeof(uint16_t) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        x[i] = lo + (hi - lo) * (float)(rng() & 0xffffff) / 16777216.0f;
        h[i] = ref_f32_to_f16(x[i]);
    }
    kt_input(c, t, rank, dims, t == IR_F16 ? (const void *)h : (const void *)x, false);
    free(x);
    free(h);
}

/* Integer input of type t with values in [lo, hi) (lo = hi = 0: random bit patterns). */
static void in_i(struct kt_case *c, enum ir_dtype t, int rank, const int64_t *dims, int64_t lo,
                 int64_t hi)
{
    const int64_t n = numel(rank, dims);
    const size_t es = ir_dtype_size(t);
    unsigned char *p = malloc(es * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        if (lo == hi) v = (int64_t)(((uint64_t)rng() << 40) ^ ((uint64_t)rng() << 16) ^ rng());
        else v = lo + (int64_t)(((uint64_t)rng() << 24 | rng()) % (uint64_t)(hi - lo));
        if (t == IR_BOOL) v &= 1;
        memcpy(p + (size_t)i * es, &v, es); /* little-endian: the low bytes */
    }
    kt_input(c, t, rank, dims, p, false);
    free(p);
}

static void run(struct kt_case *c, const char *label)
{
    runs++;
    fails += kt_run(c, label, 0, 0);
}

/* ---- quant ----------------------------------------------------------------------------------- */
static void t_quant(void)
{
    struct kt_case *c;
    /* per-tensor f32 -> uint8, saturating both ends */
    c = kt_new("QuantizeLinear", 13);
    in_f(c, IR_F32, 3, DIMS(3, 37, 5), -2.0f, 2.0f);
    in_f(c, IR_F32, 0, NULL, 0.01f, 0.011f);
    in_i(c, IR_U8, 0, NULL, 100, 140);
    run(c, "QuantizeLinear-13 per-tensor [3,37,5] f32 -> u8 (saturating)");
    /* ties: x = k / 2 with scale 1 round half to even */
    c = kt_new("QuantizeLinear", 13);
    {
        float x[41], one = 1.0f;
        int8_t z = -3;
        for (int i = 0; i < 41; i++) x[i] = (float)(i - 20) * 0.5f;
        kt_input(c, IR_F32, 1, DIMS(41), x, false);
        kt_input(c, IR_F32, 0, NULL, &one, false);
        kt_input(c, IR_I8, 0, NULL, &z, false);
    }
    run(c, "QuantizeLinear-13 ties half to even -> i8");
    /* output_dtype int8, no zero point */
    c = kt_new("QuantizeLinear", 21);
    in_f(c, IR_F32, 2, DIMS(17, 23), -1.5f, 1.5f);
    in_f(c, IR_F32, 0, NULL, 0.007f, 0.009f);
    kt_attr_int(c, "output_dtype", IR_I8);
    run(c, "QuantizeLinear-21 output_dtype=int8 no zero point [17,23]");
    /* no zero point, no output_dtype: uint8 */
    c = kt_new("QuantizeLinear", 19);
    in_f(c, IR_F32, 1, DIMS(101), -0.5f, 3.0f);
    in_f(c, IR_F32, 0, NULL, 0.01f, 0.02f);
    run(c, "QuantizeLinear-19 default uint8 [101]");
    /* per-axis axis=1 -> int8 */
    c = kt_new("QuantizeLinear", 13);
    in_f(c, IR_F32, 3, DIMS(4, 7, 9), -1.0f, 1.0f);
    in_f(c, IR_F32, 1, DIMS(7), 0.004f, 0.03f);
    in_i(c, IR_I8, 1, DIMS(7), -20, 20);
    run(c, "QuantizeLinear-13 per-axis axis=1 [4,7,9] -> i8");
    /* per-axis axis=-1 -> uint16 */
    c = kt_new("QuantizeLinear", 21);
    in_f(c, IR_F32, 3, DIMS(5, 6, 11), -300.0f, 900.0f);
    in_f(c, IR_F32, 1, DIMS(11), 0.01f, 0.02f);
    in_i(c, IR_U16, 1, DIMS(11), 0, 30000);
    kt_attr_int(c, "axis", -1);
    run(c, "QuantizeLinear-21 per-axis axis=-1 [5,6,11] -> u16");
    /* blocked axis=1 block_size=3 on 8 (last block short) -> int16 */
    c = kt_new("QuantizeLinear", 21);
    in_f(c, IR_F32, 3, DIMS(2, 8, 5), -400.0f, 400.0f);
    in_f(c, IR_F32, 3, DIMS(2, 3, 5), 0.005f, 0.02f);
    in_i(c, IR_I16, 3, DIMS(2, 3, 5), -3000, 3000);
    kt_attr_int(c, "axis", 1);
    kt_attr_int(c, "block_size", 3);
    run(c, "QuantizeLinear-21 blocked axis=1 block_size=3 [2,8,5] -> i16");
    /* blocked on the last axis, no zero point, output_dtype uint16 */
    c = kt_new("QuantizeLinear", 21);
    in_f(c, IR_F32, 2, DIMS(3, 13), 0.0f, 700.0f);
    in_f(c, IR_F32, 2, DIMS(3, 4), 0.004f, 0.02f);
    kt_attr_int(c, "axis", 1);
    kt_attr_int(c, "block_size", 4);
    kt_attr_int(c, "output_dtype", IR_U16);
    run(c, "QuantizeLinear-21 blocked axis=1 block_size=4 [3,13] -> u16 no zero point");
    /* float16 x and scale */
    c = kt_new("QuantizeLinear", 19);
    in_f(c, IR_F16, 2, DIMS(5, 19), -2.0f, 2.0f);
    in_f(c, IR_F16, 1, DIMS(5), 0.01f, 0.02f);
    in_i(c, IR_U8, 1, DIMS(5), 60, 200);
    kt_attr_int(c, "axis", 0);
    run(c, "QuantizeLinear-19 f16 x, f16 scale, per-axis axis=0 -> u8");
    c = kt_new("QuantizeLinear", 19);
    in_f(c, IR_F32, 1, DIMS(33), -2.0f, 2.0f);
    in_f(c, IR_F16, 0, NULL, 0.01f, 0.02f);
    in_i(c, IR_I8, 0, NULL, -5, 5);
    run(c, "QuantizeLinear-19 f32 x, f16 scale -> i8");
    c = kt_new("QuantizeLinear", 23);
    in_f(c, IR_F32, 2, DIMS(9, 31), -3.0f, 3.0f);
    in_f(c, IR_F32, 1, DIMS(31), 0.01f, 0.03f);
    in_i(c, IR_I8, 1, DIMS(31), -9, 9);
    kt_attr_int(c, "axis", 1);
    kt_attr_int(c, "precision", IR_F16);
    run(c, "QuantizeLinear-23 precision=float16 per-axis -> i8");

    /* DequantizeLinear */
    c = kt_new("DequantizeLinear", 13);
    in_i(c, IR_U8, 3, DIMS(3, 37, 5), 0, 256);
    in_f(c, IR_F32, 0, NULL, 0.01f, 0.1f);
    in_i(c, IR_U8, 0, NULL, 0, 256);
    run(c, "DequantizeLinear-13 per-tensor u8 [3,37,5]");
    c = kt_new("DequantizeLinear", 13);
    in_i(c, IR_I8, 3, DIMS(4, 7, 9), -128, 128);
    in_f(c, IR_F32, 1, DIMS(7), 0.01f, 0.1f);
    in_i(c, IR_I8, 1, DIMS(7), -128, 128);
    run(c, "DequantizeLinear-13 per-axis axis=1 i8 [4,7,9]");
    c = kt_new("DequantizeLinear", 13);
    in_i(c, IR_I32, 2, DIMS(6, 11), -100000000, 100000000);
    in_f(c, IR_F32, 1, DIMS(6), 0.001f, 0.01f);
    kt_attr_int(c, "axis", 0);
    run(c, "DequantizeLinear-13 per-axis axis=0 i32 no zero point [6,11]");
    c = kt_new("DequantizeLinear", 21);
    in_i(c, IR_U16, 3, DIMS(3, 5, 10), 0, 65536);
    in_f(c, IR_F32, 3, DIMS(3, 5, 3), 0.001f, 0.01f);
    in_i(c, IR_U16, 3, DIMS(3, 5, 3), 0, 65536);
    kt_attr_int(c, "axis", -1);
    kt_attr_int(c, "block_size", 4);
    run(c, "DequantizeLinear-21 blocked axis=-1 block_size=4 u16 [3,5,10]");
    c = kt_new("DequantizeLinear", 21);
    in_i(c, IR_I16, 2, DIMS(9, 14), -32768, 32768);
    in_f(c, IR_F16, 2, DIMS(3, 14), 0.001f, 0.01f);
    in_i(c, IR_I16, 2, DIMS(3, 14), -32768, 32768);
    kt_attr_int(c, "axis", 0);
    kt_attr_int(c, "block_size", 3);
    run(c, "DequantizeLinear-21 blocked axis=0 block_size=3 i16, f16 scale -> f16");
    c = kt_new("DequantizeLinear", 23);
    in_i(c, IR_I8, 2, DIMS(7, 13), -128, 128);
    in_f(c, IR_F16, 1, DIMS(13), 0.01f, 0.1f);
    in_i(c, IR_I8, 1, DIMS(13), -128, 128);
    kt_attr_int(c, "axis", 1);
    kt_attr_int(c, "output_dtype", IR_F32);
    run(c, "DequantizeLinear-23 f16 scale, output_dtype=float32");

    /* DynamicQuantizeLinear: several / many min-max chunks, all positive, all zero */
    c = kt_new("DynamicQuantizeLinear", 11);
    in_f(c, IR_F32, 2, DIMS(7, 1001), -3.0f, 2.0f);
    kt_outputs(c, 3);
    run(c, "DynamicQuantizeLinear [7,1001]");
    c = kt_new("DynamicQuantizeLinear", 11);
    in_f(c, IR_F32, 1, DIMS(300007), -0.5f, 7.0f);
    kt_outputs(c, 3);
    run(c, "DynamicQuantizeLinear [300007] (256 chunks)");
    c = kt_new("DynamicQuantizeLinear", 11);
    in_f(c, IR_F32, 2, DIMS(3, 13), 0.5f, 9.0f);
    kt_outputs(c, 3);
    run(c, "DynamicQuantizeLinear [3,13] all positive");
    c = kt_new("DynamicQuantizeLinear", 11);
    {
        float z[5] = {0, 0, 0, 0, 0};
        kt_input(c, IR_F32, 1, DIMS(5), z, false);
    }
    kt_outputs(c, 3);
    run(c, "DynamicQuantizeLinear [5] all zero");
}

/* ---- bit ops and BitCast -------------------------------------------------------------------- */
static void t_bits(void)
{
    static const enum ir_dtype types[] = {IR_I8, IR_U8, IR_I16, IR_U16, IR_I32, IR_U32, IR_I64,
                                          IR_U64};
    char label[160];
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        const enum ir_dtype t = types[k];
        const int64_t w = 8 * (int64_t)ir_dtype_size(t);
        const bool uns = t == IR_U8 || t == IR_U16 || t == IR_U32 || t == IR_U64;
        for (int left = 0; left < 2; left++) {
            struct kt_case *c = kt_new("BitShift", 28);
            in_i(c, t, 3, DIMS(5, 7, 3), 0, 0);
            in_i(c, t, 3, DIMS(5, 7, 3), uns ? 0 : -3, w + 3);
            kt_attr_string(c, "direction", left ? "LEFT" : "RIGHT");
            snprintf(label, sizeof label, "BitShift %s %s [5,7,3] counts in [%d, %lld)",
                     left ? "LEFT" : "RIGHT", ir_dtype_name(t), uns ? 0 : -3, (long long)w + 3);
            run(c, label);
            c = kt_new("BitShift", 11);
            in_i(c, t, 3, DIMS(4, 6, 9), 0, 0);
            in_i(c, t, 2, DIMS(6, 1), 0, w);
            kt_attr_string(c, "direction", left ? "LEFT" : "RIGHT");
            snprintf(label, sizeof label, "BitShift %s %s [4,6,9] by [6,1] (broadcast)",
                     left ? "LEFT" : "RIGHT", ir_dtype_name(t));
            run(c, label);
        }
        struct kt_case *c = kt_new("BitwiseNot", 18);
        in_i(c, t, 3, DIMS(3, 5, 7), 0, 0);
        snprintf(label, sizeof label, "BitwiseNot %s [3,5,7]", ir_dtype_name(t));
        run(c, label);
        static const char *const bops[] = {"BitwiseAnd", "BitwiseOr", "BitwiseXor"};
        for (int b = 0; b < 3; b++) {
            c = kt_new(bops[b], 18);
            in_i(c, t, 3, DIMS(4, 5, 6), 0, 0);
            in_i(c, t, 2, DIMS(5, 1), 0, 0);
            snprintf(label, sizeof label, "%s %s [4,5,6] with [5,1]", bops[b], ir_dtype_name(t));
            run(c, label);
        }
    }
    static const struct { enum ir_dtype from, to; } casts[] = {
        {IR_F32, IR_I32}, {IR_I32, IR_F32}, {IR_U32, IR_I32}, {IR_I64, IR_F64}, {IR_F64, IR_U64},
        {IR_U16, IR_I16}, {IR_F16, IR_U16}, {IR_I8, IR_U8}, {IR_BOOL, IR_U8},
    };
    for (size_t k = 0; k < sizeof casts / sizeof *casts; k++) {
        struct kt_case *c = kt_new("BitCast", 26);
        if (casts[k].from == IR_F32 || casts[k].from == IR_F16)
            in_f(c, casts[k].from, 2, DIMS(9, 11), -1e3f, 1e3f);
        else if (casts[k].from == IR_F64) {
            double d[99];
            for (int i = 0; i < 99; i++) d[i] = (double)(int32_t)rng() * 1e-3;
            kt_input(c, IR_F64, 2, DIMS(9, 11), d, false);
        } else
            in_i(c, casts[k].from, 2, DIMS(9, 11), 0, casts[k].from == IR_BOOL ? 2 : 1000);
        kt_attr_int(c, "to", casts[k].to);
        snprintf(label, sizeof label, "BitCast %s -> %s [9,11]", ir_dtype_name(casts[k].from),
                 ir_dtype_name(casts[k].to));
        run(c, label);
    }
    /* empty tensor: no launch, still a valid alias */
    struct kt_case *c = kt_new("BitCast", 26);
    in_f(c, IR_F32, 1, DIMS(0), 0, 1);
    kt_attr_int(c, "to", IR_I32);
    run(c, "BitCast float32 -> int32 empty [0]");
}

/* ---- fatal cases: compilation must stop with a located message ------------------------------ */
static int t_fatal(const char *name)
{
    struct kt_case *c;
    if (strcmp(name, "bitcast_size") == 0) {
        c = kt_new("BitCast", 26);
        in_f(c, IR_F32, 1, DIMS(4), 0, 1);
        kt_attr_int(c, "to", IR_I64);
    } else if (strcmp(name, "bitshift_dir") == 0) {
        c = kt_new("BitShift", 11);
        in_i(c, IR_U8, 1, DIMS(4), 0, 8);
        in_i(c, IR_U8, 1, DIMS(4), 0, 8);
        kt_attr_string(c, "direction", "UP");
    } else if (strcmp(name, "quant_int4") == 0) {
        c = kt_new("QuantizeLinear", 21);
        in_f(c, IR_F32, 1, DIMS(4), 0, 1);
        in_f(c, IR_F32, 0, NULL, 0.1f, 0.2f);
        kt_attr_int(c, "output_dtype", 22);
    } else if (strcmp(name, "quant_block") == 0) {
        c = kt_new("DequantizeLinear", 21);
        in_i(c, IR_U8, 2, DIMS(4, 6), 0, 8);
        in_f(c, IR_F32, 2, DIMS(4, 2), 0.1f, 0.2f);
        kt_attr_int(c, "axis", 1);
        kt_attr_int(c, "block_size", 2); /* ceil(6 / 2) = 3 scales per row, not 2 */
    } else {
        fprintf(stderr, "unknown fatal case '%s'\n", name);
        return 2;
    }
    kt_run(c, name, 0, 0);
    fprintf(stderr, "fatal case '%s' compiled (it must not)\n", name);
    return 1;
}

int main(int argc, char **argv)
{
    const char *grp = argc > 1 ? argv[1] : "quant";
    if (strncmp(grp, "fatal:", 6) == 0) return t_fatal(grp + 6);
    if (strcmp(grp, "quant") == 0) t_quant();
    else if (strcmp(grp, "bits") == 0) t_bits();
    else {
        fprintf(stderr, "usage: test_kernels_quant quant|bits|fatal:<case>\n");
        return 2;
    }
    printf("%d/%d cases passed\n", runs - fails, runs);
    return fails ? 1 : 0;
}
