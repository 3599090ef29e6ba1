/* test_resize.c — sds_image_resize on a raw 8-bit image: test_resize W H CH DW DH IN.raw OUT.raw
 * (rows top to bottom, CH interleaved channels). resize_check.py compares it with Pillow's
 * Image.resize(LANCZOS). */
#include "sd_session.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
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
