/* png_write.c — 8-bit RGB PNG output with tEXt chunks, through libpng (see sdp_png_write in
 * sd_pipeline.h).
 *
 * Assumes: libpng 1.6. Guarantees: the PNG appears under its name only when complete (temporary
 * file in the same folder, fsync-free rename); any failure removes the temporary file.
 */
#include "sd_pipeline.h"
#include "platform.h" /* o2r_fd_mode_default, o2r_rename_replace */

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* libpng error callback: keeps the message and jumps back. */
static void on_png_error(png_structp png, png_const_charp msg)
{
    char *buf = png_get_error_ptr(png);
    snprintf(buf, 256, "%s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* sdp_png_write from float CHW (chw) or 8-bit HWC (rgb): exactly one is given. */
static int png_write(const char *path, const float *chw, const unsigned char *rgb, int h, int w,
                     const char *const *keys, const char *const *values, int n_text, char *err, size_t errcap)
{
    char tmp[4096], pngmsg[256] = "";
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errcap, "%s: cannot create a file in its folder: %s", path, strerror(errno));
        return -1;
    }
    o2r_fd_mode_default(fd); /* mkstemp makes 0600; an image is as readable as any new file */
    FILE *f = fdopen(fd, "wb");
    unsigned char *row = malloc((size_t)w * 3);
    png_textp text = calloc((size_t)(n_text > 0 ? n_text : 1), sizeof *text);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, pngmsg, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!f || !row || !text || !png || !info) {
        snprintf(err, errcap, "%s: out of memory", path);
        goto fail;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(err, errcap, "%s: libpng: %s", path, pngmsg);
        goto fail;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    for (int i = 0; i < n_text; i++) {
        int ascii = 1; /* tEXt is Latin-1: a UTF-8 value (non-ASCII) goes in an iTXt chunk, as PIL writes it */
        for (const unsigned char *c = (const unsigned char *)values[i]; *c; c++) ascii &= *c < 0x80;
        text[i].compression = ascii ? PNG_TEXT_COMPRESSION_NONE : PNG_ITXT_COMPRESSION_NONE;
        text[i].key = (png_charp)keys[i];
        text[i].text = (png_charp)values[i];
        text[i].text_length = strlen(values[i]);
    }
    if (n_text > 0) png_set_text(png, info, text, n_text);
    png_write_info(png, info);
    size_t plane = (size_t)h * w;
    for (int y = 0; y < h; y++) {
        if (rgb) {
            png_write_row(png, (png_const_bytep)(rgb + (size_t)y * w * 3));
            continue;
        }
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                float v = chw[c * plane + (size_t)y * w + x] * 255.0f;
                v = nearbyintf(v); /* numpy round: half to even */
                row[x * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(row);
    free(text);
    if (fclose(f) != 0) {
        f = NULL;
        snprintf(err, errcap, "%s: write error: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (o2r_rename_replace(tmp, path) != 0) {
        snprintf(err, errcap, "%s: cannot rename the finished image into place: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
fail:
    if (png) png_destroy_write_struct(&png, info ? &info : NULL);
    free(row);
    free(text);
    if (f) fclose(f);
    else close(fd);
    unlink(tmp);
    return -1;
}

int sdp_png_write(const char *path, const float *chw, int h, int w, const char *const *keys,
                  const char *const *values, int n_text, char *err, size_t errcap)
{
    return png_write(path, chw, NULL, h, w, keys, values, n_text, err, errcap);
}

int sdp_png_write_rgb(const char *path, const unsigned char *rgb, int h, int w, const char *const *keys,
                      const char *const *values, int n_text, char *err, size_t errcap)
{
    return png_write(path, NULL, rgb, h, w, keys, values, n_text, err, errcap);
}
