/* test_ka_kernels.c — standalone kernel checks (kernels/<family>.cl built straight from the source tree
 * through ka_cl.c, no compiler involved) for what the single-node harness cannot show:
 *   erf:  the rational approximation in kernels/unary.cl (erf_f32) against C erf() in double
 *         over 2,000,001 points of [-6, 6] plus +-0, +-inf, NaN: max |error| must be < 6e-7
 *         (measured 4.5e-7, stated in the kernel banner) and max relative error < 6e-7 for
 *         |x| >= 1e-30;
 *   f16:  cast_to_f16_f32 (vstore_half_rte) against a host round-to-nearest-even conversion,
 *         bit-exact, over special values, subnormals, overflow and 100k pseudo-random floats;
 *         cast_to_f32_f16 back, bit-exact (NaN: any NaN).
 * Label: kernels.
 */
#include "ka_cl.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* IEEE binary16 from binary32, round to nearest even (host reference). */
static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
    if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (m ? 0x200u | (m >> 13) : 0));
    int32_t ee = (int32_t)e - 127 + 15;
    if (ee >= 31) return (uint16_t)(sign | 0x7c00u);
    if (ee <= 0) {
        if (ee < -10) return sign;
        const uint32_t mm = m | 0x800000u;
        const int shift = 14 - ee;
        uint32_t h = mm >> shift;
        const uint32_t rem = mm & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)ee << 10) | (m >> 13);
    const uint32_t rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

static void test_erf(void)
{
    const int n = 2000001;
    float *x = malloc(sizeof(float) * (size_t)(n + 5)), *y = malloc(sizeof(float) * (size_t)(n + 5));
    for (int i = 0; i < n; i++) x[i] = (float)(-6.0 + 12.0 * (double)i / (double)(n - 1));
    x[n] = 0.0f, x[n + 1] = -0.0f, x[n + 2] = INFINITY, x[n + 3] = -INFINITY, x[n + 4] = NAN;
    const int nt = n + 5;
    cl_mem bx = ka_buf(sizeof(float) * (size_t)nt, x), by = ka_buf(sizeof(float) * (size_t)nt, NULL);
    struct ka_arg args[] = {KB(bx), KB(by), KI(nt), KF(0), KF(0)};
    ka_run("erf_f32", (size_t)nt, args, 5);
    ka_read(by, sizeof(float) * (size_t)nt, y);
    double maxabs = 0, maxrel = 0;
    float worst = 0;
    for (int i = 0; i < n; i++) {
        const double want = erf((double)x[i]), err = fabs((double)y[i] - want);
        if (err > maxabs) maxabs = err, worst = x[i];
        if (fabs(want) >= 1e-30 && err / fabs(want) > maxrel) maxrel = err / fabs(want);
    }
    printf("erf_f32: max abs error %.3g (at x=%.7g), max rel error %.3g over %d points\n", maxabs,
           worst, maxrel, n);
    ka_check(maxabs < 6e-7, "erf_f32 max abs error %.3g >= 6e-7", maxabs);
    ka_check(maxrel < 6e-7, "erf_f32 max rel error %.3g >= 6e-7", maxrel);
    ka_check(y[n] == 0.0f && y[n + 1] == 0.0f && y[n + 2] == 1.0f && y[n + 3] == -1.0f &&
                 isnan(y[n + 4]),
             "erf_f32 specials: erf(0)=%g erf(-0)=%g erf(inf)=%g erf(-inf)=%g erf(nan)=%g", y[n],
             y[n + 1], y[n + 2], y[n + 3], y[n + 4]);
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    free(x);
    free(y);
}

static void test_f16(void)
{
    enum { N = 100000 + 16 };
    static float x[N], back[N];
    static uint16_t h[N];
    const float sp[16] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65520.0f, 1e6f, -1e6f,
                          5.96e-8f, 2.98e-8f, 1e-5f, 6.1e-5f, INFINITY, -INFINITY, NAN, 0.333333f};
    memcpy(x, sp, sizeof sp);
    uint32_t s = 12345;
    for (int i = 16; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        uint32_t bits = (s & 0x807fffffu) | ((uint32_t)(100 + (s >> 24) % 55) << 23);
        memcpy(&x[i], &bits, 4);
    }
    cl_mem bx = ka_buf(sizeof x, x), bh = ka_buf(sizeof h, NULL), bb = ka_buf(sizeof back, NULL);
    struct ka_arg a1[] = {KB(bx), KB(bh), KI(N)};
    ka_run("cast_to_f16_f32", N, a1, 3);
    ka_read(bh, sizeof h, h);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        const uint16_t want = f32_to_f16(x[i]);
        const bool nan_ok = isnan(x[i]) && (h[i] & 0x7c00u) == 0x7c00u && (h[i] & 0x3ffu);
        if (h[i] != want && !nan_ok) {
            if (bad++ < 5)
                fprintf(stderr, "cast_to_f16_f32: x=%.9g got 0x%04x want 0x%04x\n", x[i], h[i], want);
        }
    }
    ka_check(bad == 0, "cast_to_f16_f32: %d of %d conversions differ", bad, N);
    struct ka_arg a2[] = {KB(bh), KB(bb), KI(N)};
    ka_run("cast_to_f32_f16", N, a2, 3);
    ka_read(bb, sizeof back, back);
    bad = 0;
    for (int i = 0; i < N; i++) {
        const uint16_t hh = h[i];
        const int e = (hh >> 10) & 0x1f, m = hh & 0x3ff;
        double want = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
        if (hh & 0x8000u) want = -want;
        const bool ok = isnan(want) ? isnan(back[i]) : (double)back[i] == want;
        if (!ok && bad++ < 5)
            fprintf(stderr, "cast_to_f32_f16: h=0x%04x got %.9g want %.9g\n", hh, back[i], want);
    }
    ka_check(bad == 0, "cast_to_f32_f16: %d of %d conversions differ", bad, N);
    printf("f16 casts: %d values checked both ways\n", N);
    clReleaseMemObject(bx);
    clReleaseMemObject(bh);
    clReleaseMemObject(bb);
}

int main(void)
{
    const struct ka_inst insts[] = {
        {"unary", "float", "f32"}, {"cast", "float", "f32"}, {"cast", "half", "f16"}};
    ka_init(insts, 3);
    test_erf();
    test_f16();
    ka_shutdown();
    printf("%s (%d failures)\n", ka_failures ? "FAIL" : "ok", ka_failures);
    return ka_failures != 0;
}
