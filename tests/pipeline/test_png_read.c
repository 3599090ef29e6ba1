/* test_png_read.c — sdp_png_read / sdp_png_read_mem + sdp_pix_convert against PIL: every PNG of
 * png_modes/ (make_png_modes.py) read and converted to RGB and to gray must equal PIL's
 * Image.open(f).convert("RGB") / convert("L") bytes (NAME.rgb, NAME.l) bit for bit; 16-bit gray
 * (no .rgb) must be refused with status -2; a directory is "is a directory".
 * Usage: test_png_read DIR */
#include "sd_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *b = malloc(1 << 20);
    *n = b ? fread(b, 1, 1 << 20, f) : 0;
    fclose(f);
    return b;
}

static int check(const char *dir, const char *name)
{
    char p[4096], e[512];
    snprintf(p, sizeof p, "%s/%s.png", dir, name);
    int fails = 0;
    for (int mem = 0; mem < 2; mem++)
        for (int want = 1; want <= 3; want += 2) {
            unsigned char *pix = NULL;
            int w, h, ch, rc;
            if (mem) {
                size_t n;
                unsigned char *d = slurp(p, &n);
                rc = d ? sdp_png_read_mem(d, n, name, &pix, &w, &h, &ch, e, sizeof e) : -1;
                free(d);
            } else {
                rc = sdp_png_read(p, &pix, &w, &h, &ch, e, sizeof e);
            }
            char q[4096];
            snprintf(q, sizeof q, "%s/%s.%s", dir, name, want == 3 ? "rgb" : "l");
            size_t n = 0;
            unsigned char *ref = slurp(q, &n);
            if (!ref) { /* a refused mode */
                if (rc != -2 || !strstr(e, "16-bit")) printf("FAIL %s: rc %d (want -2): %s\n", name, rc, e), fails++;
                free(pix);
                continue;
            }
            if (rc || sdp_pix_convert(&pix, w, h, &ch, want) || (size_t)w * h * want != n || memcmp(pix, ref, n)) {
                printf("FAIL %s (%s, to %d channels): rc %d %s\n", name, mem ? "memory" : "file", want, rc,
                       rc ? e : "bytes differ from PIL's");
                fails++;
            }
            free(pix);
            free(ref);
        }
    if (!fails) printf("ok %s\n", name);
    return fails;
}

int main(int argc, char **argv)
{
    if (argc != 2) return fprintf(stderr, "usage: test_png_read DIR\n"), 2;
    static const char *const names[] = {"gray1", "gray2", "gray4", "gray8", "gray8_trns", "gray16", "rgb8", "rgb16",
                                        "gray_alpha8", "gray_alpha16", "rgba8", "rgba16", "palette4",
                                        "palette8_trns"};
    int fails = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) fails += check(argv[1], names[i]);
    unsigned char *pix;
    int w, h, ch;
    char e[512];
    if (sdp_png_read(argv[1], &pix, &w, &h, &ch, e, sizeof e) != -1 || !strstr(e, "is a directory"))
        printf("FAIL a directory: %s\n", e), fails++;
    printf("%s\n", fails ? "FAILED" : "all equal to PIL");
    return fails != 0;
}
