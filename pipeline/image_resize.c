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

/* Pillow's bicubic_filter (a = -0.5, support 2): Image.resize's default resample */
static double bicubic(double x)
{
    const double a = -0.5;
    if (x < 0.0) x = -x;
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc for the source span in0..in1 (float, as
 * Pillow's box; 0..in_size without one) of an axis of in_size pixels -> out_size. Returns ksize, or
 * 0 when out of memory. */
static int coeffs(int in_size, float in0, float in1, int out_size, int resample, int **bounds_out, int32_t **kk_out)
{
    double (*filter)(double) = resample == SDS_RESAMPLE_BICUBIC ? bicubic : lanczos;
    const double filter_support = resample == SDS_RESAMPLE_BICUBIC ? 2.0 : 3.0;
    double scale = (double)(in1 - in0) / out_size, filterscale = scale < 1.0 ? 1.0 : scale;
    double support = filter_support * filterscale;
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
        double center = in0 + (xx + 0.5) * scale, ww = 0.0, ss = 1.0 / filterscale;
        int xmin = (int)(center - support + 0.5), xmax = (int)(center + support + 0.5);
        if (xmin < 0) xmin = 0;
        if (xmax > in_size) xmax = in_size;
        xmax -= xmin;
        double *k = &kk[(size_t)xx * ksize];
        int x;
        for (x = 0; x < xmax; x++) {
            double w = filter((x + xmin - center + 0.5) * ss);
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

int sds_image_resize_box(const unsigned char *pix, int w, int h, int ch, const float box[4], int dw, int dh,
                         int resample, unsigned char **out)
{
    *out = NULL;
    if ((resample != SDS_RESAMPLE_LANCZOS && resample != SDS_RESAMPLE_BICUBIC) || w < 1 || h < 1 || dw < 1 || dh < 1 || w > 16384 || h > 16384 || dw > 16384 || dh > 16384 ||
        (ch != 1 && ch != 3 && ch != 4) || !(box[0] >= 0 && box[1] >= 0 && box[2] <= w && box[3] <= h) ||
        !(box[2] - box[0] >= 0 && box[3] - box[1] >= 0))
        return SDS_EINVAL;
    /* Pillow's _resize: an integral box of the output's size is a crop (no filter) */
    if (box[0] == (int)box[0] && box[1] == (int)box[1] && box[2] - box[0] == dw && box[3] - box[1] == dh) {
        unsigned char *res = malloc((size_t)dw * dh * ch);
        if (!res) return SDS_ERROR;
        for (int y = 0; y < dh; y++)
            memcpy(res + (size_t)y * dw * ch, pix + ((size_t)(y + (int)box[1]) * w + (int)box[0]) * ch, (size_t)dw * ch);
        *out = res;
        return SDS_OK;
    }
    int *bh = NULL, *bv = NULL;
    int32_t *kh = NULL, *kv = NULL;
    int ksh = coeffs(w, box[0], box[2], dw, resample, &bh, &kh), ksv = coeffs(h, box[1], box[3], dh, resample, &bv, &kv);
    unsigned char *tmp = NULL, *res = malloc((size_t)dw * dh * ch);
    int rc = SDS_ERROR;
    if (!ksh || !ksv || !res) goto out;
    /* rows of the source the vertical pass reads */
    int y_first = bv[0], y_last = bv[(dh - 1) * 2] + bv[(dh - 1) * 2 + 1];
    const int need_h = dw != w || box[0] != 0 || box[2] != dw, need_v = dh != h || box[1] != 0 || box[3] != dh;
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

int sds_image_resize(const unsigned char *pix, int w, int h, int ch, int dw, int dh, unsigned char **out)
{
    const float box[4] = {0, 0, (float)w, (float)h};
    return sds_image_resize_box(pix, w, h, ch, box, dw, dh, SDS_RESAMPLE_LANCZOS, out);
}
