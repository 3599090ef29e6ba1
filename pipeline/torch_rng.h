/* torch_rng.h — PyTorch's CPU random generator in C, so that `--seed N` gives the latents that
 * `torch.randn(shape, generator=torch.Generator().manual_seed(N))` gives (float32, CPU).
 *
 * Spec followed (PyTorch 2.x, aten/src/ATen/core/MT19937RNGEngine.h, CPUGeneratorImpl.cpp,
 * core/TransformationHelper.h, native/cpu/DistributionTemplates.h):
 *   - engine: MT19937 seeded with the low 32 bits of the seed (init_genrand);
 *     random() = one 32-bit output, random64() = (first << 32) | second;
 *   - float uniform in [0,1): (random() & (2^24-1)) * 2^-24; double: (random64() & (2^53-1)) * 2^-53;
 *   - randn of >= 16 float32 elements: every element gets a float uniform first; then each block
 *     of 16 (u[0..7], u[8..15]) becomes Box-Muller pairs r*cos(t), r*sin(t) with
 *     r = sqrt(-2 log(1 - u[j])), t = 2*pi*u[j+8], computed as the AVX2/AVX-512 kernels do
 *     (avx_mathfun.h log256_ps/sincos256_ps: Cephes polynomials in float); when the count is not
 *     a multiple of 16, the last 16 elements are redrawn (16 new uniforms) and transformed again;
 *   - randn of < 16 elements: per element a double Box-Muller with the generator's cached second
 *     value (u1, u2 from random64(); r = sqrt(-2 log1p(-u2)), t = 2 pi u1; cos first, sin cached),
 *     rounded to float.
 * Guarantees: bit-identical to torch 2.15 on x86-64 with the AVX2 or AVX-512 CPU capability
 * (tests/pipeline/test_rng.c against committed torch outputs). PyTorch's generic (no-AVX2)
 * build rounds differently in the last bit for ~40% of values; that path is not reproduced.
 */
#ifndef PIPELINE_TORCH_RNG_H
#define PIPELINE_TORCH_RNG_H

#include <stddef.h>
#include <stdint.h>

/* torch.Generator (CPU) state. */
struct sdp_rng {
    uint32_t mt[624];        /* MT19937 state */
    int mti;                 /* next index into mt */
    int has_next_double;     /* a cached second Box-Muller value is waiting */
    double next_double;      /* the cached value */
    /* A batch of generators (diffusers' generator=[g0, g1, ...]): NULL, or n_images generators;
     * then sdp_rng_randn of n values, n a multiple of n_images, fills image i's n / n_images
     * values from images[i] (randn_tensor with a list of generators), and this one's own state
     * is unused. sdp_rng_seed sets images to NULL. */
    struct sdp_rng *images;
    int n_images;
};

/* torch.Generator().manual_seed(seed). */
void sdp_rng_seed(struct sdp_rng *g, uint64_t seed);
/* One 32-bit output (torch's generator->random()). */
uint32_t sdp_rng_u32(struct sdp_rng *g);
/* torch.randn(n) with this generator, float32, written to out[0..n) (a batch: see images). */
void sdp_rng_randn(struct sdp_rng *g, float *out, size_t n);

#endif
