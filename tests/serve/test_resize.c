/* test_resize.c — sds_image_resize on a raw 8-bit image: test_resize W H CH DW DH IN.raw OUT.raw
 * (rows top to bottom, CH interleaved channels). resize_check.py compares it with Pillow's
 * Image.resize(LANCZOS).
 *   test_resize box W H CH X0 Y0 X1 Y1 DW DH IN.raw OUT.raw [RESAMPLE]: sds_image_resize_box (float
 *     box; RESAMPLE: Pillow's filter number, 1 LANCZOS (default) or 3 BICUBIC)
 *   test_resize only_masked W H PW PH PAD INIT.rgb MASK.gray GEN.rgb CROP.rgb MCROP.gray OVER.rgb:
 *     the "only masked" chain (inpaint_crop.c) for processing size PW x PH: prints the box, writes
 *     the init image and the mask cropped and filled to PW x PH, and GEN (PW x PH) overlaid on INIT.
 * inpaint_crop_check.py compares the last two with diffusers' VaeImageProcessor. */
#include "sd_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *read_raw(const char *path, size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    FILE *f = fopen(path, "rb");
    if (!p || !f || fread(p, 1, n, f) != n) {
        fprintf(stderr, "test_resize: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return p;
}

static void write_raw(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        fprintf(stderr, "test_resize: cannot write %s\n", path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if ((argc == 13 || argc == 14) && !strcmp(argv[1], "box")) {
        int w = atoi(argv[2]), h = atoi(argv[3]), ch = atoi(argv[4]), dw = atoi(argv[9]), dh = atoi(argv[10]);
        const float box[4] = {strtof(argv[5], NULL), strtof(argv[6], NULL), strtof(argv[7], NULL), strtof(argv[8], NULL)};
        unsigned char *in = read_raw(argv[11], (size_t)w * h * ch), *out;
        int rc = sds_image_resize_box(in, w, h, ch, box, dw, dh, argc == 14 ? atoi(argv[13]) : SDS_RESAMPLE_LANCZOS, &out);
        if (rc) return fprintf(stderr, "test_resize: sds_image_resize_box: %d\n", rc), 1;
        write_raw(argv[12], out, (size_t)dw * dh * ch);
        free(in);
        free(out);
        return 0;
    }
    if (argc == 13 && !strcmp(argv[1], "only_masked")) {
        int w = atoi(argv[2]), h = atoi(argv[3]), pw = atoi(argv[4]), ph = atoi(argv[5]), pad = atoi(argv[6]), box[4];
        unsigned char *init = read_raw(argv[7], (size_t)w * h * 3), *mask = read_raw(argv[8], (size_t)w * h);
        unsigned char *gen = read_raw(argv[9], (size_t)pw * ph * 3), *crop, *mcrop, *over;
        if (sds_mask_crop_region(mask, w, h, pw, ph, pad, box) || sds_image_crop_fill(init, w, h, 3, box, pw, ph, &crop) ||
            sds_image_crop_fill(mask, w, h, 1, box, pw, ph, &mcrop) ||
            sds_image_overlay(init, mask, w, h, gen, pw, ph, box, &over))
            return fprintf(stderr, "test_resize: only_masked failed\n"), 1;
        printf("%d %d %d %d\n", box[0], box[1], box[2], box[3]);
        write_raw(argv[10], crop, (size_t)pw * ph * 3);
        write_raw(argv[11], mcrop, (size_t)pw * ph);
        write_raw(argv[12], over, (size_t)w * h * 3);
        free(init), free(mask), free(gen), free(crop), free(mcrop), free(over);
        return 0;
    }
    if (argc != 8) {
        fprintf(stderr, "usage: test_resize W H CH DW DH IN.raw OUT.raw\n");
        return 2;
    }
    int w = atoi(argv[1]), h = atoi(argv[2]), ch = atoi(argv[3]), dw = atoi(argv[4]), dh = atoi(argv[5]);
    size_t n = (size_t)w * h * ch;
    unsigned char *in = malloc(n ? n : 1), *out = NULL;
    FILE *f = fopen(argv[6], "rb");
    if (!in || !f || fread(in, 1, n, f) != n) {
        fprintf(stderr, "test_resize: cannot read %s\n", argv[6]);
        return 1;
    }
    fclose(f);
    int rc = sds_image_resize(in, w, h, ch, dw, dh, &out);
    free(in);
    if (rc) {
        fprintf(stderr, "test_resize: sds_image_resize: %d\n", rc);
        return 1;
    }
    f = fopen(argv[7], "wb");
    if (!f || fwrite(out, 1, (size_t)dw * dh * ch, f) != (size_t)dw * dh * ch || fclose(f)) {
        fprintf(stderr, "test_resize: cannot write %s\n", argv[7]);
        return 1;
    }
    free(out);
    return 0;
}
