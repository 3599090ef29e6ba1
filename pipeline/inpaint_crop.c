/* inpaint_crop.c — inpainting's "only masked" area (A1111's Inpaint area "Only masked", diffusers'
 * padding_mask_crop), as diffusers' VaeImageProcessor does it on PIL images, byte for byte:
 *   get_crop_region  the box around every non-zero mask pixel, grown by the padding, then to the
 *                    processing size's aspect ratio (shifted back inside the image);
 *   resize "fill"    the crop resized (LANCZOS) to fit the processing size, centred, the empty
 *                    bands filled by stretching its first/last rows or columns (Pillow's resize
 *                    with a zero-height/width box, in Image.resize's default BICUBIC);
 *   apply_overlay    the generated image resized "crop" (cover, centred) into the box of a canvas
 *                    of the original size, the original image composited over it with the
 *                    inverted mask as alpha (Pillow's RGBa paste, RGBa -> RGBA and
 *                    alpha_composite integer arithmetic).
 * Pillow's arithmetic is src/libImaging/{Paste,Convert,AlphaComposite}.c's. Differences from A1111
 * (whose masking.expand_crop_region rounds the growth differently and whose overlay uses the
 * blurred mask the same way): the box can differ by a pixel; the references are diffusers'.
 */
#include "sd_session.h"

#include <stdlib.h>
#include <string.h>

int sds_mask_crop_region(const unsigned char *mask, int w, int h, int width, int height, int pad, int box[4])
{
    if (!mask || w < 1 || h < 1 || width < 1 || height < 1 || pad < 0) return SDS_EINVAL;
    int left = w, right = -1, top = h, bottom = -1; /* the non-zero pixels' bounds */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (mask[(size_t)y * w + x]) {
                if (x < left) left = x;
                if (x > right) right = x;
                if (y < top) top = y;
                if (y > bottom) bottom = y;
            }
    if (right < 0) return SDS_EINVAL; /* all zero: no region */
    /* diffusers: crop_left/right/top/bottom counts of empty columns/rows, then the padding */
    int x1 = left - pad > 0 ? left - pad : 0, y1 = top - pad > 0 ? top - pad : 0;
    int x2 = right + 1 + pad < w ? right + 1 + pad : w, y2 = bottom + 1 + pad < h ? bottom + 1 + pad : h;
    const double ratio_crop = (double)(x2 - x1) / (y2 - y1), ratio_proc = (double)width / height;
    if (ratio_crop > ratio_proc) {
        const double desired_h = (x2 - x1) / ratio_proc;
        const int diff = (int)(desired_h - (y2 - y1)); /* Python int(): toward zero */
        y1 -= diff / 2; /* diff >= 0: floor division */
        y2 += diff - diff / 2;
        if (y2 >= h) {
            int d = y2 - h;
            y2 -= d;
            y1 -= d;
        }
        if (y1 < 0) {
            y2 -= y1;
            y1 = 0;
        }
        if (y2 >= h) y2 = h;
    } else {
        const double desired_w = (y2 - y1) * ratio_proc;
        const int diff = (int)(desired_w - (x2 - x1));
        x1 -= diff / 2;
        x2 += diff - diff / 2;
        if (x2 >= w) {
            int d = x2 - w;
            x2 -= d;
            x1 -= d;
        }
        if (x1 < 0) {
            x2 -= x1;
            x1 = 0;
        }
        if (x2 >= w) x2 = w;
    }
    box[0] = x1, box[1] = y1, box[2] = x2, box[3] = y2;
    return SDS_OK;
}

/* Pillow's Image.paste(src, (dx, dy)) without a mask: the part inside dst, same channel count. */
static void paste(unsigned char *dst, int dw, int dh, const unsigned char *src, int sw, int sh, int ch, int dx, int dy)
{
    for (int y = 0; y < sh; y++) {
        if (y + dy < 0 || y + dy >= dh) continue;
        int x0 = dx < 0 ? -dx : 0, x1 = sw < dw - dx ? sw : dw - dx;
        if (x1 > x0)
            memcpy(dst + ((size_t)(y + dy) * dw + x0 + dx) * ch, src + ((size_t)y * sw + x0) * ch, (size_t)(x1 - x0) * ch);
    }
}

/* Image.resize((rw, rh), resample, box) of src, pasted at (dx, dy) into dst. */
static int resize_paste(unsigned char *dst, int dw, int dh, const unsigned char *src, int sw, int sh, int ch,
                        const float box[4], int resample, int rw, int rh, int dx, int dy)
{
    unsigned char *r;
    int rc = sds_image_resize_box(src, sw, sh, ch, box, rw, rh, resample, &r);
    if (rc) return rc;
    paste(dst, dw, dh, r, rw, rh, ch, dx, dy);
    free(r);
    return SDS_OK;
}

int sds_image_crop_fill(const unsigned char *pix, int w, int h, int ch, const int box[4], int dw, int dh,
                        unsigned char **out)
{
    *out = NULL;
    if (!pix || (ch != 1 && ch != 3) || dw < 1 || dh < 1 || dw > 16384 || dh > 16384 || box[0] < 0 || box[1] < 0 ||
        box[2] > w || box[3] > h || box[2] <= box[0] || box[3] <= box[1])
        return SDS_EINVAL;
    const int cw = box[2] - box[0], chh = box[3] - box[1];
    unsigned char *res = calloc((size_t)dw * dh, (size_t)ch), *resized = NULL; /* Image.new("RGB"): black */
    if (!res) return SDS_ERROR;
    const double ratio = (double)dw / dh, src_ratio = (double)cw / chh;
    const int src_w = ratio < src_ratio ? dw : (int)((long long)cw * dh / chh);
    const int src_h = ratio >= src_ratio ? dh : (int)((long long)chh * dw / cw);
    int rc = SDS_ERROR;
    if (src_w < 1 || src_h < 1) { /* Pillow: "height and width must be > 0" */
        rc = SDS_EINVAL;
        goto out;
    }
    { /* image.crop(box) (a copy: the filter's taps stop at its edges), resized to (src_w, src_h) */
        const float b[4] = {(float)box[0], (float)box[1], (float)box[2], (float)box[3]}, all[4] = {0, 0, (float)cw, (float)chh};
        unsigned char *crop;
        if ((rc = sds_image_resize_box(pix, w, h, ch, b, cw, chh, SDS_RESAMPLE_LANCZOS, &crop))) goto out;
        rc = sds_image_resize_box(crop, cw, chh, ch, all, src_w, src_h, SDS_RESAMPLE_LANCZOS, &resized);
        free(crop);
        if (rc) goto out;
        rc = SDS_ERROR;
    }
    paste(res, dw, dh, resized, src_w, src_h, ch, dw / 2 - src_w / 2, dh / 2 - src_h / 2);
    if (ratio < src_ratio) { /* bands above and below: the first / last row stretched */
        const int fill = dh / 2 - src_h / 2;
        if (fill > 0) {
            const float top[4] = {0, 0, (float)dw, 0}, bot[4] = {0, (float)src_h, (float)dw, (float)src_h};
            if (resize_paste(res, dw, dh, resized, src_w, src_h, ch, top, SDS_RESAMPLE_BICUBIC, dw, fill, 0, 0) ||
                resize_paste(res, dw, dh, resized, src_w, src_h, ch, bot, SDS_RESAMPLE_BICUBIC, dw, fill, 0, fill + src_h))
                goto out;
        }
    } else if (ratio > src_ratio) { /* bands left and right */
        const int fill = dw / 2 - src_w / 2;
        if (fill > 0) {
            const float lft[4] = {0, 0, 0, (float)dh}, rgt[4] = {(float)src_w, 0, (float)src_w, (float)dh};
            if (resize_paste(res, dw, dh, resized, src_w, src_h, ch, lft, SDS_RESAMPLE_BICUBIC, fill, dh, 0, 0) ||
                resize_paste(res, dw, dh, resized, src_w, src_h, ch, rgt, SDS_RESAMPLE_BICUBIC, fill, dh, fill + src_w, 0))
                goto out;
        }
    }
    rc = SDS_OK;
out:
    free(resized);
    if (rc) free(res);
    else *out = res;
    return rc;
}

#define DIV255(v) (((((v) + 128) >> 8) + (v) + 128) >> 8) /* Pillow's DIV255 (v / 255 rounded) */

int sds_image_overlay(const unsigned char *init_rgb, const unsigned char *mask, int w, int h,
                      const unsigned char *gen_rgb, int gw, int gh, const int box[4], unsigned char **out)
{
    *out = NULL;
    if (!init_rgb || !mask || !gen_rgb || w < 1 || h < 1 || gw < 1 || gh < 1 || box[0] < 0 || box[1] < 0 ||
        box[2] > w || box[3] > h || box[2] <= box[0] || box[3] <= box[1])
        return SDS_EINVAL;
    const int bw = box[2] - box[0], bh = box[3] - box[1];
    /* the generated image resized "crop" into the box (diffusers' _resize_and_crop) */
    const double ratio = (double)bw / bh, src_ratio = (double)gw / gh;
    const int src_w = ratio > src_ratio ? bw : (int)((long long)gw * bh / gh);
    const int src_h = ratio <= src_ratio ? bh : (int)((long long)gh * bw / gw);
    if (src_w < 1 || src_h < 1) return SDS_EINVAL;
    unsigned char *res = calloc((size_t)bw * bh, 3), *canvas = calloc((size_t)w * h, 3);
    int rc = SDS_ERROR;
    if (!res || !canvas) goto out;
    const float full[4] = {0, 0, (float)gw, (float)gh};
    if ((rc = resize_paste(res, bw, bh, gen_rgb, gw, gh, 3, full, SDS_RESAMPLE_LANCZOS, src_w, src_h, bw / 2 - src_w / 2, bh / 2 - src_h / 2)))
        goto out;
    paste(canvas, w, h, res, bw, bh, 3, box[0], box[1]);
    /* init_image_masked: RGBa canvas, the init image pasted with the inverted mask as matte
     * (BLEND over zeros), then RGBa -> RGBA; alpha_composite onto the opaque canvas */
    for (size_t i = 0; i < (size_t)w * h; i++) {
        const unsigned a = 255u - mask[i], sa = DIV255(255u * a);
        if (sa == 0) continue; /* src alpha 0: the generated pixel */
        for (int c = 0; c < 3; c++) {
            const unsigned pm = DIV255(init_rgb[i * 3 + c] * a);
            unsigned s = sa == 255 ? pm : 255u * pm / sa;
            if (s > 255) s = 255;
            /* AlphaComposite.c with dst alpha 255: blend = 255 (255 - sa), outa255 = 255 * 255 */
            const unsigned coef1 = sa * 255u * 255u * 128u / (sa * 255u + 255u * (255u - sa));
            const unsigned coef2 = 255u * 128u - coef1;
            const unsigned t = s * coef1 + canvas[i * 3 + c] * coef2 + (0x80u << 7);
            canvas[i * 3 + c] = (unsigned char)((((t >> 8) + t) >> 8) >> 7);
        }
    }
    rc = SDS_OK;
out:
    free(res);
    if (rc) free(canvas);
    else *out = canvas;
    return rc;
}
