/* image_resize.c — Pillow's Image.resize((w, h), Image.LANCZOS) on 8-bit images (A1111's img2img
 * resize_mode 0, "Just resize", resizes the init image and the mask so).
 *
 * Pillow's src/libImaging/Resample.c, as it does it: a separable filter, the horizontal pass first
 * (over the source rows the vertical pass needs), then the vertical one; per output pixel the
 * Lanczos (a = 3) taps centred on (x + 0.5) * scale, the support scaled by the downscale factor
 * (support = 3 * max(scale, 1)), bounds rounded as int(center -/+ support + 0.5) and clipped to the
 * image, the weights normalised to sum 1 in double, then made 22-bit fixed point (PRECISION_BITS =
 * 32 - 8 - 2, rounded half away from zero); a pixel is the sum of value * weight + 1 << 21, shifted
 * and clipped to [0, 255]. Each channel alone. Guarantees: equal to Pillow's output byte for byte
 * (tests/serve/resize_check.py compares several sizes, up and down).
 */
#include "sd_session.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PRECISION_BITS (32 - 8 - 2)

static double sinc(double x)
{
    if (x == 0.0) return 1.0;
    x = x * M_PI;
    return sin(x) / x;
}

static double lanczos(double x) { return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0; }

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc for in_size -> out_size (box 0..in_size).
 * Returns ksize, or 0 when out of memory. */
static int coeffs(int in_size, int out_size, int **bounds_out, int32_t **kk_out)
{
    double scale = (double)(float)in_size / out_size, filterscale = scale < 1.0 ? 1.0 : scale;
    double support = 3.0 * filterscale;
    int ksize = (int)ceil(support) * 2 + 1;
    double *kk = malloc((size_t)out_size * ksize * sizeof *kk);
    int *bounds = malloc((size_t)out_size * 2 * sizeof *bounds);
    int32_t *ik = malloc((size_t)out_size * ksize * sizeof *ik);
    if (!kk || !bounds || !ik) {
        free(kk);
        free(bounds);
        free(ik);
        return 0;
    }
    for (int xx = 0; xx < out_size; xx++) {
        double center = (xx + 0.5) * scale, ww = 0.0, ss = 1.0 / filterscale;
        int xmin = (int)(center - support + 0.5), xmax = (int)(center + support + 0.5);
        if (xmin < 0) xmin = 0;
        if (xmax > in_size) xmax = in_size;
        xmax -= xmin;
        double *k = &kk[(size_t)xx * ksize];
        int x;
        for (x = 0; x < xmax; x++) {
            double w = lanczos((x + xmin - center + 0.5) * ss);
            k[x] = w;
            ww += w;
        }
        for (x = 0; x < xmax; x++)
            if (ww != 0.0) k[x] /= ww;
        for (; x < ksize; x++) k[x] = 0;
        bounds[xx * 2] = xmin;
        bounds[xx * 2 + 1] = xmax;
    }
    for (size_t i = 0; i < (size_t)out_size * ksize; i++)
        ik[i] = kk[i] < 0 ? (int32_t)(-0.5 + kk[i] * (1 << PRECISION_BITS)) : (int32_t)(0.5 + kk[i] * (1 << PRECISION_BITS));
    free(kk);
    *bounds_out = bounds;
    *kk_out = ik;
    return ksize;
}

static unsigned char clip8(int64_t in)
{
    if (in >= ((int64_t)1 << PRECISION_BITS << 8)) return 255;
    if (in <= 0) return 0;
    return (unsigned char)(in >> PRECISION_BITS);
}

int sds_image_resize(const unsigned char *pix, int w, int h, int ch, int dw, int dh, unsigned char **out)
{
    *out = NULL;
    if (w < 1 || h < 1 || dw < 1 || dh < 1 || w > 16384 || h > 16384 || dw > 16384 || dh > 16384 ||
        (ch != 1 && ch != 3 && ch != 4))
        return SDS_EINVAL;
    int *bh = NULL, *bv = NULL;
    int32_t *kh = NULL, *kv = NULL;
    int ksh = coeffs(w, dw, &bh, &kh), ksv = coeffs(h, dh, &bv, &kv);
    unsigned char *tmp = NULL, *res = malloc((size_t)dw * dh * ch);
    int rc = SDS_ERROR;
    if (!ksh || !ksv || !res) goto out;
    /* rows of the source the vertical pass reads */
    int y_first = bv[0], y_last = bv[(dh - 1) * 2] + bv[(dh - 1) * 2 + 1];
    const int need_h = dw != w, need_v = dh != h;
    const unsigned char *src = pix;
    int src_w = w, src_y0 = 0;
    if (need_h) {
        int rows = need_v ? y_last - y_first : h, y0 = need_v ? y_first : 0;
        tmp = malloc((size_t)dw * rows * ch);
        if (!tmp) goto out;
        for (int y = 0; y < rows; y++)
            for (int xx = 0; xx < dw; xx++) {
                const int xmin = bh[xx * 2], xmax = bh[xx * 2 + 1];
                const int32_t *k = &kh[(size_t)xx * ksh];
                const unsigned char *row = pix + ((size_t)(y + y0) * w + xmin) * ch;
                for (int c = 0; c < ch; c++) {
                    int64_t ss = 1 << (PRECISION_BITS - 1);
                    for (int x = 0; x < xmax; x++) ss += (int64_t)row[(size_t)x * ch + c] * k[x];
                    tmp[((size_t)y * dw + xx) * ch + c] = clip8(ss);
                }
            }
        src = tmp;
        src_w = dw;
        src_y0 = y0;
        if (!need_v) {
            memcpy(res, tmp, (size_t)dw * dh * ch);
            rc = SDS_OK;
            goto out;
        }
    }
    if (need_v) {
        for (int yy = 0; yy < dh; yy++) {
            const int ymin = bv[yy * 2] - src_y0, ymax = bv[yy * 2 + 1];
            const int32_t *k = &kv[(size_t)yy * ksv];
            for (int xx = 0; xx < dw; xx++)
                for (int c = 0; c < ch; c++) {
                    int64_t ss = 1 << (PRECISION_BITS - 1);
                    for (int y = 0; y < ymax; y++) ss += (int64_t)src[((size_t)(y + ymin) * src_w + xx) * ch + c] * k[y];
                    res[((size_t)yy * dw + xx) * ch + c] = clip8(ss);
                }
        }
    } else {
        memcpy(res, pix, (size_t)dw * dh * ch);
    }
    rc = SDS_OK;
out:
    free(bh);
    free(bv);
    free(kh);
    free(kv);
    free(tmp);
    if (rc) free(res);
    else *out = res;
    return rc;
}
