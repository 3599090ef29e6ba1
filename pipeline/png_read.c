/* png_read.c — 8-bit gray or RGB PNG input through libpng, for img2img's init image and
 * inpainting's mask (see sdp_png_read in sd_pipeline.h).
 *
 * Assumes: libpng 1.6. Guarantees: only 8-bit gray (1 channel) and 8-bit RGB (3 channels) are
 * returned; every other mode is refused naming it; a truncated or corrupt file (bad CRC, short
 * data) is an error naming the file and libpng's message; nothing is allocated on failure.
 */
#include "sd_pipeline.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd_err {
    char msg[256];
};

static void on_error(png_structp png, png_const_charp msg)
{
    struct rd_err *e = png_get_error_ptr(png);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static const char *mode_name(int ct, int depth, char *buf, size_t cap)
{
    const char *c = ct == PNG_COLOR_TYPE_GRAY ? "grayscale" : ct == PNG_COLOR_TYPE_RGB ? "RGB"
                  : ct == PNG_COLOR_TYPE_RGB_ALPHA ? "RGBA" : ct == PNG_COLOR_TYPE_GRAY_ALPHA ? "grayscale+alpha"
                  : ct == PNG_COLOR_TYPE_PALETTE ? "palette" : "unknown";
    snprintf(buf, cap, "%s %d-bit", c, depth);
    return buf;
}

int sdp_png_read(const char *path, unsigned char **pix, int *w, int *h, int *channels, char *err,
                 size_t errcap)
{
    *pix = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char sig[8];
    if (fread(sig, 1, 8, f) != 8 || png_sig_cmp(sig, 0, 8)) {
        snprintf(err, errcap, "%s: not a PNG file (no PNG signature)", path);
        fclose(f);
        return -1;
    }
    struct rd_err e = {""};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &e, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *volatile buf = NULL;
    volatile int rc = -1;
    png_bytep *volatile rows = NULL;
    if (!png || !info) {
        snprintf(err, errcap, "%s: out of memory", path);
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        fclose(f);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(err, errcap, "%s: corrupt or truncated PNG: %s", path, e.msg);
        goto fail;
    }
    png_init_io(png, f);
    png_set_sig_bytes(png, 8);
    png_set_user_limits(png, 65536, 65536);
    png_read_info(png, info);
    png_uint_32 pw, ph;
    int depth, ct;
    png_get_IHDR(png, info, &pw, &ph, &depth, &ct, NULL, NULL, NULL);
    if (depth != 8 || (ct != PNG_COLOR_TYPE_GRAY && ct != PNG_COLOR_TYPE_RGB) ||
        png_get_valid(png, info, PNG_INFO_tRNS)) {
        char m[64];
        snprintf(err, errcap, "%s: PNG mode %s%s: expected 8-bit RGB or 8-bit grayscale (convert it, e.g. "
                 "`convert IN -alpha off -depth 8 PNG24:OUT.png`)", path, mode_name(ct, depth, m, sizeof m),
                 png_get_valid(png, info, PNG_INFO_tRNS) ? " with transparency" : "");
        rc = -2;
        goto fail;
    }
    if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int ch = ct == PNG_COLOR_TYPE_RGB ? 3 : 1;
    size_t stride = (size_t)pw * (size_t)ch;
    if (png_get_rowbytes(png, info) != stride) {
        snprintf(err, errcap, "%s: unexpected PNG row size", path);
        goto fail;
    }
    buf = malloc(stride * ph);
    rows = malloc(ph * sizeof *rows);
    if (!buf || !rows) {
        snprintf(err, errcap, "%s: out of memory (%ux%u)", path, (unsigned)pw, (unsigned)ph);
        goto fail;
    }
    for (png_uint_32 y = 0; y < ph; y++) rows[y] = buf + y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    fclose(f);
    *pix = buf;
    *w = (int)pw;
    *h = (int)ph;
    *channels = ch;
    return 0;
fail:
    png_destroy_read_struct(&png, &info, NULL);
    free(buf);
    free(rows);
    fclose(f);
    return rc;
}
