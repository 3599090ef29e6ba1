/* test_session.c — libonnx2cl-sd's session layer (pipeline/sd_session.h) on the tiny SD 1.5
 * checkpoint (tests/pipeline/oneshot/tiny_sd15.safetensors, architecture tiny_sd15):
 *   1. errors are returned, not exit(): bad options, a missing checkpoint, a bad request (steps 0
 *      of 1001, an unknown sampler, a size that is not a multiple of 8, LoRA tags without a folder);
 *   2. one open, two generations with different seeds: both finish, the images differ, and the
 *      first is bit-identical to the CLI's PNG for the same parameters (argv[3], written by
 *      `onnx2cl-sd -m ... -o`) and to a third generation with the first seed (determinism);
 *   3. cancel: a flag set from the progress callback at step 3 of 40 -> SDS_CANCELLED with a message,
 *      the callback saw steps 1..3 in order with total 40; the next generation on the same session works;
 *   4. another thread sets the cancel flag while a 200-step run goes: SDS_CANCELLED before the end;
 *   5. a request for guidance off (cfg 1: UNet batch 1) reloads, the next cfg 7.5 request reloads back;
 *   6. sds_png_encode / sds_png_text round-trip the parameters chunk; sds_preview_rgb and the families'
 *      coefficients of sds_preview_rgb_family (SDXL, SD 3 and Flux rows); sds_info.family.
 *   7. A1111 sampler names / schedule types; img2img (strength 0.6) from the CLI's PNG == the CLI's
 *      --init-image PNG (argv[5]) byte for byte; strengths that run no step and resizes refused;
 *   8. a session opened with offload (models on the device per stage) and text_device (the text encoders in
 *      a context of their own) makes image 2's bytes, twice.
 * Usage: test_session CHECKPOINT CACHE_DIR CLI_PNG PROMPT [CLI_IMG2IMG_PNG]
 */
#include "sd_session.h"

#include <png.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fails;
#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            fails++;                                                                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
        }                                                                                                    \
    } while (0)

/* The RGB pixels of a PNG file (libpng), malloc'd; NULL on failure. */
static unsigned char *read_png_rgb(const char *path, int *w, int *h)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&im, path)) return NULL;
    im.format = PNG_FORMAT_RGB;
    unsigned char *buf = malloc(PNG_IMAGE_SIZE(im));
    if (!buf || !png_image_finish_read(&im, NULL, buf, 0, NULL)) {
        free(buf);
        png_image_free(&im);
        return NULL;
    }
    *w = (int)im.width;
    *h = (int)im.height;
    return buf;
}

struct watch {
    int last_step, total, ordered, cancel_at, stages;
    volatile int flag;
};

static int on_progress(const struct sds_progress *pr, void *user)
{
    struct watch *w = user;
    if (pr->stage) { /* before the steps: a (re)load of the models */
        w->stages += pr->step == 0;
        return 0;
    }
    if (pr->step != w->last_step + 1) w->ordered = 0;
    w->last_step = pr->step;
    w->total = pr->total;
    if (pr->lat_c != 4 || !pr->latents) w->ordered = 0;
    if (w->cancel_at && pr->step == w->cancel_at) w->flag = 1; /* seen before the next model run */
    return 0;
}

struct canceller {
    volatile int *flag;
    struct watch *w;
};

static void *cancel_thread(void *arg)
{
    struct canceller *c = arg;
    while (c->w->last_step < 5) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    *c->flag = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: test_session CHECKPOINT CACHE_DIR CLI_PNG PROMPT [CLI_IMG2IMG_PNG]\n");
        return 2;
    }
    const char *ckpt = argv[1], *cache = argv[2], *cli_png = argv[3], *prompt = argv[4];
    char err[4096];
    struct sds_session *s = NULL;
    /* 1. errors returned */
    struct sds_open_options bad = {0};
    CHECK(sds_open(&bad, &s, err, sizeof err) == SDS_EINVAL && strstr(err, "checkpoint or models_dir"), "no source: %s", err);
    struct sds_open_options both = {.checkpoint = ckpt, .models_dir = "/nonexistent"};
    CHECK(sds_open(&both, &s, err, sizeof err) == SDS_EINVAL, "both sources: %s", err);
    struct sds_open_options missing = {.checkpoint = "/nonexistent/x.safetensors", .cache_dir = cache, .quiet = 1};
    CHECK(sds_open(&missing, &s, err, sizeof err) == SDS_ERROR && strstr(err, "/nonexistent/x.safetensors") &&
              !strstr(err, "-m ") && strstr(err, "checkpoint /nonexistent/x.safetensors"),
          "missing checkpoint: %s", err);
    CHECK(s == NULL, "no session on failure");
    struct sds_open_options o = {.checkpoint = ckpt, .cache_dir = cache, .width = 32, .height = 32, .quiet = 1};
    int rc = sds_open(&o, &s, err, sizeof err);
    CHECK(rc == 0, "open %s: %s", ckpt, err);
    if (rc) return 1;
    struct sds_info info;
    sds_get_info(s, &info);
    CHECK(!strcmp(info.arch, "tiny_sd15") && info.width == 32 && info.height == 32 && !info.fixed_size,
          "info: arch %s %dx%d fixed %d", info.arch, info.width, info.height, info.fixed_size);
    struct sds_image im[3];
    struct sds_request rq = {.prompt = prompt, .negative = "blurry, low quality", .steps = 4, .cfg = 7.5,
                             .seed = 42, .sampler = "euler"};
    struct sds_request r = rq;
    r.steps = 1001;
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "steps 1001"), "steps: %s", err);
    r = rq;
    r.sampler = "heun_xyz";
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "heun_xyz"), "sampler: %s", err);
    r = rq;
    r.width = 33;
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "33"), "width 33: %s", err);
    r = rq;
    r.prompt = "a cat <lora:nothing_here:0.5>";
    unsetenv("ONNX2CL_LORA_DIR");
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "lora") && !strstr(err, "--"),
          "lora (library wording, no CLI flags): %s", err);
    /* A1111's prompt syntax and clip skip (issue 21 item 5): bad values are the request's */
    r = rq;
    r.emphasis = "Bogus";
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "Original"), "emphasis: %s", err);
    CHECK(sds_emphasis_check("No norm", err, sizeof err) == SDS_OK && sds_emphasis_check(NULL, err, sizeof err) == SDS_OK &&
              sds_emphasis_check("x", err, sizeof err) == SDS_EINVAL, "sds_emphasis_check: %s", err);
    r = rq;
    r.emphasis = "Original";
    r.prompt = "a (cat:1.2.3)";
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "at byte 7"), "bad weight: %s", err);
    r = rq;
    r.clip_skip = 13;
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "clip skip 13"), "clip skip: %s", err);
    r = rq;
    r.clip_skip = 3; /* tiny_sd15: 2 layers */
    CHECK(sds_txt2img(s, &r, &im[0], err, sizeof err) == SDS_EINVAL && strstr(err, "2 layers"), "clip skip 3: %s", err);
    /* 2. two seeds on one open; the first equals the CLI's PNG */
    rc = sds_txt2img(s, &rq, &im[0], err, sizeof err);
    CHECK(rc == 0, "generate seed 42: %s", err);
    r = rq;
    r.seed = 43;
    int rc2 = sds_txt2img(s, &r, &im[1], err, sizeof err);
    CHECK(rc2 == 0, "generate seed 43: %s", err);
    if (rc || rc2) return 1;
    CHECK(im[0].width == 32 && im[0].height == 32 && im[0].load_seconds == 0, "size %dx%d, reload %.3f s",
          im[0].width, im[0].height, im[0].load_seconds);
    size_t nb = (size_t)32 * 32 * 3, ndiff = 0;
    for (size_t i = 0; i < nb; i++) ndiff += im[0].rgb[i] != im[1].rgb[i];
    CHECK(ndiff > nb / 2, "seeds 42 and 43 differ in %zu of %zu bytes only", ndiff, nb);
    int cw, ch;
    unsigned char *cli = read_png_rgb(cli_png, &cw, &ch);
    CHECK(cli && cw == 32 && ch == 32, "CLI PNG %s unreadable or not 32x32", cli_png);
    if (cli) {
        size_t d = 0;
        for (size_t i = 0; i < nb; i++) d += cli[i] != im[0].rgb[i];
        CHECK(d == 0, "session image differs from the CLI's in %zu of %zu bytes", d, nb);
        printf("2. seed 42 == CLI PNG (%zu bytes), seed 43 differs in %zu bytes; %.3f s per image\n", nb, ndiff,
               im[0].seconds);
        free(cli);
    }
    CHECK(strstr(im[0].parameters, "\nSteps: 4, Sampler: Euler, Schedule type: Automatic, CFG scale: 7.5, Seed: 42, Size: 32x32, Model hash: ") &&
              strstr(im[0].parameters, ", Model: tiny_sd15, Version: onnx2cl-sd ") && !strcmp(im[0].a1111_sampler, "Euler"),
          "parameters: %s", im[0].parameters);
    /* A1111 sampler names and schedule types (sdp_sched_parse) */
    r = rq;
    r.sampler = "DPM++ SDE";
    CHECK(sds_txt2img(s, &r, &im[2], err, sizeof err) == SDS_EINVAL && strstr(err, "not supported"), "DPM++ SDE: %s", err);
    r.sampler = "Euler a";
    r.schedule = "karras";
    CHECK(sds_txt2img(s, &r, &im[2], err, sizeof err) == SDS_EINVAL && strstr(err, "Karras"), "Euler a + karras: %s", err);
    CHECK(sds_sampler_check("DPM++ 2M", "Karras", err, sizeof err) == 0 && sds_sampler_check("k_euler_a", NULL, err, sizeof err) == 0 &&
              sds_sampler_check("Nope", NULL, err, sizeof err) == SDS_EINVAL && strstr(err, "Nope"),
          "sds_sampler_check: %s", err);
    r.sampler = "DPM++ 2M";
    r.schedule = "karras";
    rc = sds_txt2img(s, &r, &im[2], err, sizeof err);
    CHECK(rc == 0 && !strcmp(im[2].a1111_sampler, "DPM++ 2M") && !strcmp(im[2].a1111_schedule, "Karras") &&
              strstr(im[2].parameters, "Sampler: DPM++ 2M, Schedule type: Karras,"),
          "DPM++ 2M Karras: rc %d %s %s", rc, err, im[2].parameters ? im[2].parameters : "");
    sds_image_free(&im[2]);
    /* img2img from the CLI's image == the CLI's img2img (argv[5]) */
    if (argc > 5) {
        int iw, ih;
        unsigned char *init = read_png_rgb(cli_png, &iw, &ih), *ref2 = read_png_rgb(argv[5], &cw, &ch);
        r = rq;
        r.init_rgb = init;
        r.init_w = iw;
        r.init_h = ih;
        r.strength = 0.6;
        r.steps = 10;
        rc = sds_generate(s, &r, &im[2], err, sizeof err);
        CHECK(rc == 0 && init && ref2, "img2img: rc %d %s", rc, err);
        if (rc == 0 && init && ref2) {
            size_t d = 0;
            for (size_t i = 0; i < nb; i++) d += ref2[i] != im[2].rgb[i];
            CHECK(d == 0, "img2img differs from the CLI's in %zu of %zu bytes", d, nb);
            CHECK(strstr(im[2].parameters, "Denoising strength: 0.6") != NULL, "img2img infotext %s", im[2].parameters);
            printf("img2img (strength 0.6, 10 steps) == the CLI's --init-image PNG byte for byte\n");
        }
        sds_image_free(&im[2]);
        r.strength = 0.01;
        CHECK(sds_generate(s, &r, &im[2], err, sizeof err) == SDS_EINVAL && strstr(err, "0 denoising steps"), "strength 0.01: %s", err);
        r.strength = 0.6;
        r.width = 64;
        CHECK(sds_generate(s, &r, &im[2], err, sizeof err) == SDS_EINVAL && strstr(err, "not resized"), "img2img width: %s", err);
        free(init);
        free(ref2);
    }
    /* 3. cancel through the flag from the progress callback, then a further generation */
    struct watch w = {.ordered = 1, .cancel_at = 3};
    r = rq;
    r.steps = 40;
    r.progress = on_progress;
    r.progress_user = &w;
    r.cancel = &w.flag;
    rc = sds_txt2img(s, &r, &im[2], err, sizeof err);
    CHECK(rc == SDS_CANCELLED && strstr(err, "cancelled"), "cancel at step 3: rc %d: %s", rc, err);
    char cmsg[256];
    snprintf(cmsg, sizeof cmsg, "%.200s", err);
    CHECK(w.last_step == 3 && w.total == 40 && w.ordered, "progress: last step %d of %d, ordered %d", w.last_step,
          w.total, w.ordered);
    CHECK(im[2].rgb == NULL, "no image after a cancel");
    rc = sds_txt2img(s, &rq, &im[2], err, sizeof err);
    CHECK(rc == 0 && !memcmp(im[2].rgb, im[0].rgb, nb), "after the cancel: rc %d (%s), same image as before", rc,
          err);
    sds_image_free(&im[2]);
    printf("3. cancelled at step %d of %d (%s); the next generation equals the first\n", w.last_step, w.total, cmsg);
    { /* PLMS runs steps + 1 model evaluations: progress counts the request's steps */
        struct watch wp = {.ordered = 1};
        r = rq;
        r.sampler = "PLMS";
        r.steps = 5;
        r.progress = on_progress;
        r.progress_user = &wp;
        rc = sds_generate(s, &r, &im[2], err, sizeof err);
        CHECK(rc == 0 && wp.last_step == 5 && wp.total == 5, "PLMS 5 steps: rc %d %s, progress %d of %d", rc, err,
              wp.last_step, wp.total);
        sds_image_free(&im[2]);
        struct sds_info inf;
        sds_get_info(s, &inf);
        CHECK(!strcmp(inf.default_sampler, "PLMS") && !strcmp(inf.default_sampler_internal, "pndm"),
              "default sampler %s (%s)", inf.default_sampler, inf.default_sampler_internal);
        printf("PLMS 5 steps: progress %d of %d; default sampler %s (%s)\n", wp.last_step, wp.total,
               inf.default_sampler, inf.default_sampler_internal);
    }
    /* 4. another thread cancels */
    struct watch w2 = {.ordered = 1};
    r.steps = 200;
    r.progress_user = &w2;
    r.cancel = &w2.flag;
    struct canceller c = {&w2.flag, &w2};
    pthread_t th;
    pthread_create(&th, NULL, cancel_thread, &c);
    rc = sds_txt2img(s, &r, &im[2], err, sizeof err);
    pthread_join(th, NULL);
    CHECK(rc == SDS_CANCELLED && w2.last_step >= 5 && w2.last_step < 200, "thread cancel: rc %d at step %d (%s)", rc,
          w2.last_step, err);
    printf("4. cancelled by another thread after step %d of 200\n", w2.last_step);
    /* 5. guidance off reloads (UNet batch 1), back on reloads again */
    r = rq;
    r.cfg = 1.0;
    rc = sds_txt2img(s, &r, &im[2], err, sizeof err);
    CHECK(rc == 0 && im[2].load_seconds > 0, "cfg 1: rc %d (%s), reload %.3f s", rc, err, im[2].load_seconds);
    sds_image_free(&im[2]);
    rc = sds_txt2img(s, &rq, &im[2], err, sizeof err);
    CHECK(rc == 0 && im[2].load_seconds > 0 && !memcmp(im[2].rgb, im[0].rgb, nb), "cfg 7.5 again: rc %d (%s)", rc,
          err);
    sds_image_free(&im[2]);
    /* 6. PNG in memory, text chunk round trip, preview */
    unsigned char *png;
    size_t len;
    const char *keys[1] = {"parameters"}, *vals[1] = {im[0].parameters};
    CHECK(sds_png_encode(im[0].rgb, 32, 32, keys, vals, 1, &png, &len, err, sizeof err) == 0, "encode: %s", err);
    char *k[4], *v[4];
    int n = 0, pw = 0, ph = 0;
    CHECK(sds_png_text(png, len, k, v, 4, &n, &pw, &ph, err, sizeof err) == 0 && n == 1 && pw == 32 && ph == 32 &&
              !strcmp(k[0], "parameters") && !strcmp(v[0], im[0].parameters),
          "png text: n %d %dx%d %s", n, pw, ph, err);
    for (int i = 0; i < n; i++) free(k[i]), free(v[i]);
    CHECK(sds_png_text(png, len / 2, k, v, 4, &n, NULL, NULL, err, sizeof err) == 0 || n == 0, "truncated PNG");
    for (int i = 0; i < n; i++) free(k[i]), free(v[i]);
    CHECK(sds_png_text((const unsigned char *)"not a png at all", 16, k, v, 4, &n, NULL, NULL, err, sizeof err) ==
              SDS_EINVAL,
          "not a PNG: %s", err);
    free(png);
    float lat[4 * 2] = {1, -1, 0, 0, 0, 0, 0, 0};
    unsigned char prev[2 * 3];
    CHECK(sds_preview_rgb(lat, 4, 1, 2, prev) == 0 && prev[0] == 165 && prev[3] == 90, "preview %d %d", prev[0],
          prev[3]);
    /* the families' coefficients (A1111's cheap_approximation tables): one latent channel at 1 gives that
     * channel's row, (x * 0.5 + 0.5) * 255 */
    {
        float l16[16] = {0}, l4[4] = {1, 0, 0, 0};
        unsigned char px[3];
        l16[6] = 1; /* Flux row 6: 0.0583, 0.1184, 0.1262 */
        CHECK(sds_preview_rgb_family("flux", l16, 16, 1, 1, px) == 0 && px[0] == 135 && px[1] == 143 && px[2] == 144,
              "flux preview %d %d %d", px[0], px[1], px[2]);
        l16[6] = 0, l16[2] = 1; /* SD 3 row 2: 0.1848, 0.0762, 0.0360 */
        CHECK(sds_preview_rgb_family("sd3", l16, 16, 1, 1, px) == 0 && px[0] == 151 && px[1] == 137 && px[2] == 132,
              "sd3 preview %d %d %d", px[0], px[1], px[2]);
        /* SDXL row 0: 0.3448, 0.4168, 0.4395 */
        CHECK(sds_preview_rgb_family("sdxl", l4, 4, 1, 1, px) == 0 && px[0] == 171 && px[1] == 181 && px[2] == 184,
              "sdxl preview %d %d %d", px[0], px[1], px[2]);
        CHECK(sds_preview_rgb_family("sd3", l4, 4, 1, 1, px) == SDS_EINVAL &&
                  sds_preview_rgb_family("sd1", l16, 16, 1, 1, px) == SDS_EINVAL, "preview channel counts not refused");
        struct sds_info si;
        sds_get_info(s, &si);
        CHECK(!strcmp(si.family, "sd1"), "info family '%s'", si.family);
    }
    sds_close(s);
    /* 8. offload (one stage's models on the device at a time): the same image as every model loaded */
    struct sds_open_options oo = o;
    oo.offload = 1;
    oo.text_device = "0"; /* the text encoders in a context of their own (here the same device) */
    rc = sds_open(&oo, &s, err, sizeof err);
    CHECK(rc == 0, "open with offload: %s", err);
    for (int k = 0; k < 2 && rc == 0; k++) { /* twice: the models come back for the next image */
        rc = sds_txt2img(s, &rq, &im[2], err, sizeof err);
        CHECK(rc == 0, "offload generation %d: %s", k + 1, err);
        if (rc) break;
        size_t d = 0;
        for (size_t i = 0; i < nb; i++) d += im[2].rgb[i] != im[0].rgb[i];
        CHECK(d == 0, "offload image %d differs from the loaded session's in %zu of %zu bytes", k + 1, d, nb);
        sds_image_free(&im[2]);
    }
    if (rc == 0) printf("8. offload + text_device: two images == the loaded session's\n");
    sds_close(s);
    sds_image_free(&im[0]);
    sds_image_free(&im[1]);
    printf("session: %d failed\n", fails);
    return fails != 0;
}
