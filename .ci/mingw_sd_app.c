/* mingw_sd_app.c — a program using libonnx2cl-sd (sd_session.h) without a device, for the Windows
 * cross build (.ci/mingw.sh links it against the MinGW libonnx2cl-sd.a; it runs anywhere the
 * library does): PNG encode -> text chunks -> decode round trip, the sampler check, and sds_open
 * of a checkpoint that does not exist (an error, never a crash). Exit status 0 when all hold.
 */
#include "sd_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char err[1024];
    unsigned char rgb[4 * 2 * 3], *png = NULL, *back = NULL;
    size_t len = 0;
    int w = 0, h = 0, n = 0, bad = 0;
    for (size_t i = 0; i < sizeof rgb; i++) rgb[i] = (unsigned char)(i * 19);
    const char *keys[] = {"parameters"}, *values[] = {"a cat, Steps: 4"};
    char *k[4] = {0}, *v[4] = {0};
    bad |= sds_png_encode(rgb, 4, 2, keys, values, 1, &png, &len, err, sizeof err) != SDS_OK;
    bad |= !png || sds_png_text(png, len, k, v, 4, &n, &w, &h, err, sizeof err) != SDS_OK || n != 1 ||
           w != 4 || h != 2 || strcmp(k[0], "parameters") || strcmp(v[0], values[0]);
    bad |= !png || sds_png_decode(png, len, 0, &back, &w, &h, err, sizeof err) != SDS_OK ||
           memcmp(back, rgb, sizeof rgb) != 0;
    bad |= sds_sampler_check("Euler a", NULL, err, sizeof err) != SDS_OK;
    bad |= sds_sampler_check("no such sampler", NULL, err, sizeof err) != SDS_EINVAL;
    struct sds_open_options o;
    struct sds_session *s = NULL;
    memset(&o, 0, sizeof o);
    o.checkpoint = "no-such-checkpoint.safetensors";
    o.quiet = 1;
    bad |= sds_open(&o, &s, err, sizeof err) == SDS_OK || s != NULL;
    printf("sds_open(missing checkpoint): %s\n", err);
    for (int i = 0; i < n; i++) free(k[i]), free(v[i]);
    free(png);
    free(back);
    printf("%s\n", bad ? "FAIL" : "ok");
    return bad;
}
