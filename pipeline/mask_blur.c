/* mask_blur.c — Pillow's ImageFilter.GaussianBlur on 8-bit images, bit for bit: what diffusers'
 * VaeImageProcessor.blur(mask, blur_factor) does to an inpainting mask (see sdp_gaussian_blur_u8 in
 * sd_pipeline.h).
 *
 * The method (Pillow 13, described in its docs and the paper it cites: Gwosdek et al., "Theoretical
 * foundations of Gaussian convolution by extended box filtering", SSVM 2011): three passes of an
 * extended box filter along x, then three along y. The box radius r + a (integer part r,
 * fraction a) comes from the Gaussian radius in float arithmetic; each output is the sum of the
 * 2r + 1 inputs around it times ww = floor(2^24 / (2(r + a) + 1)) plus the two next-outer inputs
 * times fw = (2^24 - (2r + 1) ww) / 2, rounded (+ 2^23) and shifted right by 24; the line is
 * extended with its first and last values. Unsigned 32-bit arithmetic throughout, as Pillow has it.
 * Written from that description; checked against PIL on masks and RGB images for radii 0.5-33.
 */
#include "sd_pipeline.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The extended box radius of 3 box passes equal to a Gaussian of this radius (float math). */
static float box_radius(float radius, int passes)
{
    float sigma2 = radius * radius / passes;
    float L = (float)sqrt(12.0 * sigma2 + 1.0);
    float l = (float)floor((L - 1.0) / 2.0);
    float a = (2 * l + 1) * (l * (l + 1) - 3 * sigma2);
    a /= 6 * (sigma2 - (l + 1) * (l + 1));
    return l + a;
}

/* One pass over the n values in[0..n): out[i * step] from the window around i (edges extended). */
static void box_line(const uint8_t *in, uint8_t *out, int n, size_t step, int r, uint32_t ww, uint32_t fw)
{
#define AT(k) in[(k) < 0 ? 0 : (k) > n - 1 ? n - 1 : (k)]
    uint32_t acc = 0;
    for (int k = -r; k <= r; k++) acc += AT(k);
    for (int i = 0; i < n; i++) {
        if (i) acc += (uint32_t)AT(i + r) - (uint32_t)AT(i - r - 1);
        uint32_t bulk = acc * ww + ((uint32_t)AT(i - r - 1) + (uint32_t)AT(i + r + 1)) * fw;
        out[(size_t)i * step] = (uint8_t)((bulk + (1u << 23)) >> 24);
    }
#undef AT
}

int sdp_gaussian_blur_u8(unsigned char *pix, int w, int h, int ch, float radius)
{
    if (radius <= 0 || w < 1 || h < 1) return 0;
    float fr = box_radius(radius, 3);
    if (fr == 0) return 0;
    int r = (int)fr;
    uint32_t ww = (uint32_t)((float)(1 << 24) / (fr * 2 + 1));
    uint32_t fw = ((1u << 24) - (uint32_t)(r * 2 + 1) * ww) / 2;
    int n = w > h ? w : h;
    uint8_t *line = malloc((size_t)n);
    if (!line) return -1;
    for (int c = 0; c < ch; c++) {
        for (int pass = 0; pass < 3; pass++) /* rows */
            for (int y = 0; y < h; y++) {
                uint8_t *row = pix + (size_t)y * w * ch + c;
                for (int x = 0; x < w; x++) line[x] = row[(size_t)x * ch];
                box_line(line, row, w, (size_t)ch, r, ww, fw);
            }
        for (int pass = 0; pass < 3; pass++) /* columns */
            for (int x = 0; x < w; x++) {
                uint8_t *col = pix + (size_t)x * ch + c;
                for (int y = 0; y < h; y++) line[y] = col[(size_t)y * w * ch];
                box_line(line, col, h, (size_t)w * ch, r, ww, fw);
            }
    }
    free(line);
    return 0;
}
