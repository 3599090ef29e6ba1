/* app.c — an outside program on the installed libonnx2cl-sd (tests/serve/install_sd.sh): opens
 * the checkpoint argv[1] with the installed compiler argv[2], generates (prompt argv[4], Euler,
 * 4 steps, cfg 7.5, seed 42, 32x32) and compares the pixels with the CLI's PNG argv[3]. */
#include <onnx2cl/sd_session.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: app CHECKPOINT ONNX2CL CLI_PNG PROMPT\n");
        return 2;
    }
    char err[4096];
    struct sds_open_options o = {.checkpoint = argv[1], .compiler = argv[2], .width = 32, .height = 32, .quiet = 1};
    struct sds_session *s;
    if (sds_open(&o, &s, err, sizeof err)) {
        fprintf(stderr, "app: %s\n", err);
        return 1;
    }
    struct sds_request r = {.prompt = argv[4], .negative = "blurry, low quality", .steps = 4, .cfg = 7.5,
                            .seed = 42, .sampler = "euler"};
    struct sds_image im;
    if (sds_generate(s, &r, &im, err, sizeof err)) {
        fprintf(stderr, "app: %s\n", err);
        sds_close(s);
        return 1;
    }
    FILE *f = fopen(argv[3], "rb");
    static unsigned char png[1 << 20];
    size_t n = f ? fread(png, 1, sizeof png, f) : 0;
    if (f) fclose(f);
    unsigned char *ref = NULL;
    int w = 0, h = 0, rc = 1;
    if (sds_png_decode(png, n, 0, &ref, &w, &h, err, sizeof err)) fprintf(stderr, "app: %s: %s\n", argv[3], err);
    else if (w != im.width || h != im.height || memcmp(ref, im.rgb, (size_t)w * h * 3))
        fprintf(stderr, "app: the image differs from the CLI's %s\n", argv[3]);
    else {
        printf("app: %dx%d image == the CLI's PNG\n", w, h);
        rc = 0;
    }
    free(ref);
    sds_image_free(&im);
    sds_close(s);
    return rc;
}
