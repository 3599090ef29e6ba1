/* png_read.c — PNG input through libpng for img2img's init image and inpainting's mask (see
 * sdp_png_read / sdp_png_read_mem in sd_pipeline.h), with one rule for the CLI, the library and
 * the server: what diffusers' load_image (PIL Image.open + convert("RGB"), or convert("L") for a
 * mask) gives.
 *
 * The rule (PIL 10+, PngImagePlugin's modes and Image.convert):
 *   8-bit gray, 1/2/4-bit gray (scaled to 0..255 as PIL's L;1/L;2/L;4 unpackers) -> 1 channel
 *   gray + alpha (8 or 16-bit: PIL mode LA, 16-bit read by its high byte) -> 1 channel, alpha dropped
 *   RGB, RGBA (8 or 16-bit: 16-bit read by its high byte, PIL's RGB;16B / RGBA;16B) -> 3 channels,
 *   alpha dropped (convert("RGB") drops it: no compositing)
 *   palette (1-8 bit, tRNS or not) -> 3 channels through the palette, transparency dropped
 *   gray with tRNS -> 1 channel (the transparency is dropped)
 *   16-bit gray without alpha: refused (PIL opens it as 32-bit integer mode I;16 and convert("RGB")
 *   clips every value above 255 to white instead of scaling: no faithful reading to match)
 * Callers take 1 channel as gray (convert("RGB") replicates it) and 3 as RGB (convert("L"):
 * ITU-R 601-2 luma). Assumes: libpng 1.6. Guarantees: a truncated or corrupt file (bad CRC, short
 * data) is an error naming the file and libpng's message; nothing is allocated on failure.
 */
#include "sd_pipeline.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

struct memsrc {
    const unsigned char *p;
    size_t n, off;
};

static void mem_read(png_structp png, png_bytep data, png_size_t len)
{
    struct memsrc *m = png_get_io_ptr(png);
    if (len > m->n - m->off) png_error(png, "truncated PNG (file ends early)");
    memcpy(data, m->p + m->off, len);
    m->off += len;
}

/* Decodes from f (a FILE after its 8 signature bytes) or m (memory, from its start). */
static int decode(const char *name, FILE *f, struct memsrc *m, unsigned char **pix, int *w, int *h,
                  int *channels, char *err, size_t errcap)
{
    struct rd_err e = {""};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &e, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *volatile buf = NULL, *volatile out = NULL;
    volatile int rc = -1;
    png_bytep *volatile rows = NULL;
    if (!png || !info) {
        snprintf(err, errcap, "%s: out of memory", name);
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(err, errcap, "%s: corrupt or truncated PNG: %s", name, e.msg);
        goto fail;
    }
    if (f) {
        png_init_io(png, f);
        png_set_sig_bytes(png, 8);
    } else {
        png_set_read_fn(png, m, mem_read);
    }
    png_set_user_limits(png, 65536, 65536);
    png_read_info(png, info);
    png_uint_32 pw, ph;
    int depth, ct;
    png_get_IHDR(png, info, &pw, &ph, &depth, &ct, NULL, NULL, NULL);
    if (depth == 16 && ct == PNG_COLOR_TYPE_GRAY) {
        snprintf(err, errcap, "%s: PNG mode grayscale 16-bit: not read (PIL reads it as 32-bit integers, which "
                 "convert(\"RGB\") clips at 255 instead of scaling); convert it to 8-bit, e.g. `convert IN -depth 8 "
                 "OUT.png`", name);
        rc = -2;
        goto fail;
    }
    if (ct == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (ct == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (depth == 16) png_set_strip_16(png); /* the high byte, as PIL's ;16B unpackers */
    if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const int in_ch = png_get_channels(png, info); /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    size_t stride = (size_t)pw * (size_t)in_ch;
    if (in_ch < 1 || in_ch > 4 || png_get_rowbytes(png, info) != stride) {
        snprintf(err, errcap, "%s: unexpected PNG row size", name);
        goto fail;
    }
    const int ch = in_ch <= 2 ? 1 : 3;
    buf = malloc(stride * ph);
    rows = malloc(ph * sizeof *rows);
    out = in_ch == ch ? buf : malloc((size_t)pw * ph * ch);
    if (!buf || !rows || !out) {
        snprintf(err, errcap, "%s: out of memory (%ux%u)", name, (unsigned)pw, (unsigned)ph);
        goto fail;
    }
    for (png_uint_32 y = 0; y < ph; y++) rows[y] = buf + y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    if (out != buf) { /* drop the alpha channel (PIL's convert("RGB") / convert("L") of RGBA / LA) */
        size_t np = (size_t)pw * ph;
        for (size_t k = 0; k < np; k++)
            for (int c = 0; c < ch; c++) out[k * ch + c] = buf[k * in_ch + c];
        free(buf);
        buf = NULL;
    }
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    *pix = out;
    *w = (int)pw;
    *h = (int)ph;
    *channels = ch;
    return 0;
fail:
    png_destroy_read_struct(&png, &info, NULL);
    if (out != buf) free(out);
    free(buf);
    free(rows);
    return rc;
}

int sdp_png_read(const char *path, unsigned char **pix, int *w, int *h, int *channels, char *err,
                 size_t errcap)
{
    *pix = NULL;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errcap, "%s: is a directory, not a PNG file", path);
        return -1;
    }
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
    int rc = decode(path, f, NULL, pix, w, h, channels, err, errcap);
    fclose(f);
    return rc;
}

int sdp_png_read_mem(const unsigned char *data, size_t len, const char *name, unsigned char **pix, int *w, int *h,
                     int *channels, char *err, size_t errcap)
{
    *pix = NULL;
    if (len < 8 || png_sig_cmp((png_const_bytep)data, 0, 8)) {
        snprintf(err, errcap, "%s: not a PNG (no PNG signature)", name);
        return -1;
    }
    struct memsrc m = {data, len, 0};
    return decode(name, NULL, &m, pix, w, h, channels, err, errcap);
}

int sdp_pix_convert(unsigned char **pix, int w, int h, int *channels, int want)
{
    if (*channels == want) return 0;
    size_t np = (size_t)w * h;
    unsigned char *src = *pix, *dst = malloc(np * (size_t)want);
    if (!dst) return -1;
    for (size_t k = 0; k < np; k++)
        if (want == 3) /* L -> RGB: replicated */
            dst[3 * k] = dst[3 * k + 1] = dst[3 * k + 2] = src[k];
        else /* RGB -> L: ITU-R 601-2 luma in PIL's fixed point */
            dst[k] = (unsigned char)((src[3 * k] * 19595u + src[3 * k + 1] * 38470u + src[3 * k + 2] * 7471u +
                                      0x8000u) >> 16);
    free(src);
    *pix = dst;
    *channels = want;
    return 0;
}
