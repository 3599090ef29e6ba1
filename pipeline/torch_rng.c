/* torch_rng.c — PyTorch CPU generator and randn (see torch_rng.h for the spec followed).
 *
 * Assumes: IEEE-754 binary32/binary64 with round-to-nearest; this file is compiled with
 * -ffp-contract=off (pipeline/CMakeLists.txt) so that no multiply-add is fused except the ones
 * written as fmaf(): they are exactly the ones GCC fuses in torch's AVX2/AVX-512 kernels (the
 * intrinsics of avx_mathfun.h compiled with -mfma and -ffp-contract=fast; found by compiling them
 * and reading the assembly, then checked bit for bit against torch).
 * Guarantees: the same bits as torch (tests/pipeline/test_rng.c).
 */
#include "torch_rng.h"

#include <math.h>
#include <string.h>

void sdp_rng_seed(struct sdp_rng *g, uint64_t seed)
{
    g->mt[0] = (uint32_t)(seed & 0xffffffffu);
    for (int i = 1; i < 624; i++)
        g->mt[i] = 1812433253u * (g->mt[i - 1] ^ (g->mt[i - 1] >> 30)) + (uint32_t)i;
    g->mti = 624;
    g->has_next_double = 0;
    g->next_double = 0;
    g->images = NULL;
    g->n_images = 0;
}

uint32_t sdp_rng_u32(struct sdp_rng *g)
{
    if (g->mti >= 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (g->mt[i] & 0x80000000u) | (g->mt[(i + 1) % 624] & 0x7fffffffu);
            g->mt[i] = g->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->mti = 0;
    }
    uint32_t y = g->mt[g->mti++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static float uniform_f32(struct sdp_rng *g)
{
    return (float)(sdp_rng_u32(g) & ((1u << 24) - 1)) * (1.0f / (1u << 24));
}

static double uniform_f64(struct sdp_rng *g)
{
    uint64_t hi = sdp_rng_u32(g), lo = sdp_rng_u32(g);
    uint64_t x = (hi << 32) | lo;
    return (double)(x & ((1ull << 53) - 1)) * (1.0 / (double)(1ull << 53));
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* log256_ps of avx_mathfun.h (Cephes logf), one lane. x in (0, 1]. */
static float mathfun_log(float x)
{
    x = x < 1.17549435e-38f ? 1.17549435e-38f : x; /* max(x, min_norm_pos) */
    int32_t e_i = (int32_t)(f2u(x) >> 23) - 0x7f;
    x = u2f((f2u(x) & ~0x7f800000u) | f2u(0.5f));
    float e = (float)e_i + 1.0f;
    int below = x < 0.707106781186547524f;
    float tmp = below ? x : 0.0f;
    x = x - 1.0f;
    e = e - (below ? 1.0f : 0.0f);
    x = x + tmp;
    float z = x * x;
    float y = 7.0376836292E-2f;
    y = fmaf(y, x, -1.1514610310E-1f);
    y = fmaf(y, x, 1.1676998740E-1f);
    y = fmaf(y, x, -1.2420140846E-1f);
    y = fmaf(y, x, 1.4249322787E-1f);
    y = fmaf(y, x, -1.6668057665E-1f);
    y = fmaf(y, x, 2.0000714765E-1f);
    y = fmaf(y, x, -2.4999993993E-1f);
    y = fmaf(y, x, 3.3333331174E-1f);
    y = y * x;
    y = fmaf(y, z, e * -2.12194440e-4f);
    y = fmaf(z, -0.5f, y);
    x = x + y;
    x = fmaf(e, 0.693359375f, x);
    return x;
}

/* sincos256_ps of avx_mathfun.h (Cephes sinf/cosf), one lane. */
static void mathfun_sincos(float x, float *s, float *c)
{
    uint32_t sign_sin = f2u(x) & 0x80000000u;
    x = u2f(f2u(x) & 0x7fffffffu);
    float y = x * 1.27323954473516f; /* 4/pi */
    int32_t j = (int32_t)y;
    j = (j + 1) & ~1;
    y = (float)j;
    uint32_t swap_sin = ((uint32_t)j & 4u) << 29;
    int poly = (j & 2) == 0;
    x = fmaf(y, -0.78515625f, x);
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    uint32_t sign_cos = (~(uint32_t)(j - 2) & 4u) << 29;
    sign_sin ^= swap_sin;
    float z = x * x;
    float yc = 2.443315711809948E-005f;
    yc = fmaf(yc, z, -1.388731625493765E-003f);
    yc = fmaf(yc, z, 4.166664568298827E-002f);
    yc = yc * z;
    yc = fmaf(yc, z, -(z * 0.5f));
    yc = yc + 1.0f;
    float ys = -1.9515295891E-4f;
    ys = fmaf(ys, z, 8.3321608736E-3f);
    ys = fmaf(ys, z, -1.6666654611E-1f);
    ys = ys * z;
    ys = fmaf(ys, x, x);
    float sv = poly ? ys : yc, cv = poly ? yc : ys;
    *s = u2f(f2u(sv) ^ sign_sin);
    *c = u2f(f2u(cv) ^ sign_cos);
}

/* normal_fill_16_AVX2: data[0..16) uniforms -> normals (mean 0, std 1). */
static void normal_fill_16(float *d)
{
    const float two_pi = (float)(2.0f * 3.14159265358979323846);
    for (int j = 0; j < 8; j++) {
        float u1 = 1.0f - d[j], u2 = d[j + 8];
        float radius = sqrtf(-2.0f * mathfun_log(u1));
        float theta = two_pi * u2, s, c;
        mathfun_sincos(theta, &s, &c);
        d[j] = radius * c;
        d[j + 8] = radius * s;
    }
}

void sdp_rng_randn(struct sdp_rng *g, float *out, size_t n)
{
    if (g->images && g->n_images > 0 && n % (size_t)g->n_images == 0) {
        size_t per = n / (size_t)g->n_images;
        for (int i = 0; i < g->n_images; i++) sdp_rng_randn(&g->images[i], out + (size_t)i * per, per);
        return;
    }
    if (n < 16) {
        for (size_t i = 0; i < n; i++) {
            double v;
            if (g->has_next_double) {
                v = g->next_double;
                g->has_next_double = 0;
            } else {
                double u1 = uniform_f64(g), u2 = uniform_f64(g);
                double r = sqrt(-2.0 * log1p(-u2)), theta = 2.0 * 3.14159265358979323846 * u1;
                g->next_double = r * sin(theta);
                g->has_next_double = 1;
                v = r * cos(theta);
            }
            out[i] = (float)v;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) out[i] = uniform_f32(g);
    for (size_t i = 0; i + 16 <= n; i += 16) normal_fill_16(out + i);
    if (n % 16) {
        float *d = out + n - 16;
        for (int i = 0; i < 16; i++) d[i] = uniform_f32(g);
        normal_fill_16(d);
    }
}
