/* sd_session.c — the session layer of libonnx2cl-sd (sd_session.h): one opened model set, many
 * generations, one at a time (a mutex per session).
 *
 * Built on the pipeline (sd_pipeline.h: sdp_model_load, sdp_pipeline_check, sdp_generate) and the
 * engine front (sd_engine.h: sde_prepare, sde_lora_tags) without changing either: the session owns
 * the OpenCL context, the tokenizer and the three loaded models; a scheduler is made per request
 * (the sampler is a request field). With a checkpoint, the loaded models are keyed by (size, UNet
 * batch, LoRA set); a request with another key re-runs sde_prepare (a cache hit after the first
 * time) and reloads the three models.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sd_session.h"

#include "sd_engine.h"
#include "json_file.h"
#include "sd_infotext.h"
#include "sd_pipeline.h"
#ifdef ONNX2CL_HAVE_SD3
#include "sd3_pipeline.h" /* SD 3 / Flux: builds with the T5 tokenizer (C++, libsentencepiece) */
#endif
#include "platform.h" /* O2R_PRINTF */

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef ONNX2CL_VERSION
#define ONNX2CL_VERSION "dev"
#endif

#define LORA_KEY_CAP (SDE_MAX_LORAS * (PATH_MAX + 80))

struct sds_session {
    pthread_mutex_t mu;
    int engine;                     /* opened from a checkpoint */
    /* owned copies of the options */
    char *ckpt, *models_dir, *hf_dir, *arch_dir, *cache_dir, *compiler, *variant, *wdtype, *lora_dir, *device;
    char *t5_tokenizer;
    char *vae_file, *clip_l_file, *clip_g_file, *t5xxl_file; /* component files (engine) */
    int quiet, vae_tile, offload;
    struct sdp_mem_track track;     /* device bytes of the loaded models (sdp_model_load_opt) */
    struct o2r_ctx *ctx;
    struct o2r_ctx *tctx;           /* the text encoders' context: text_device's, or ctx */
    struct sdp_pipeline p;          /* models + tokenizer; p.sched set per request */
    int loaded;                     /* p.te/unet/vae loaded */
    int cur_w, cur_h, cur_batch;    /* the loaded set's key (engine) */
    int cur_tokens;                 /* ... and the UNet's text tokens (77, or 77 k for long prompts) */
    int cur_clip_skip;              /* ... and the text encoder's clip skip (0: none) */
    int has_venc;                   /* a VAE encoder can be loaded (checkpoint; models_dir with the file) */
    char model[256], model_hash[11];
    char *cur_loras;                /* its LoRA list ("FILE:TE|UNET;...") */
    char tok_dir[PATH_MAX], sched_cfg[PATH_MAX], vae_cfg[PATH_MAX];
    int force_zeros;                /* SDXL: an empty negative prompt is zero embeddings (sde_result) */
    float scaling;
#ifdef ONNX2CL_HAVE_SD3
    int fam3;                       /* 1: an SD 3 checkpoint, 2: Flux (sd3_pipeline.h's loop, p3 / pf) */
    struct sdp_sd3 p3;
    struct sdp_flux pf;
    int loaded3;                    /* p3 / pf loaded for cur_w x cur_h, cur_batch */
    int cur_venc3;                  /* ... with the VAE encoder (img2img) */
#endif
    enum sdp_sched_kind default_kind;
    char default_a1111[32];         /* A1111's name of default_kind ("PLMS") */
    char arch[256];
    char family[32];                /* arch.json's family ("sd1", "sd2", "sdxl"; "" for models_dir) */
    int def_w, def_h;
};

static int fail(char *err, size_t cap, int rc, const char *f, ...) O2R_PRINTF(4, 5);
static int fail(char *err, size_t cap, int rc, const char *f, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, f);
        vsnprintf(err, cap, f, ap);
        va_end(ap);
    }
    return rc;
}

/* The engine front (sd_engine.c, sd_lora_tags.c) words its messages for the CLI ("-m X: ...",
 * "--prompt: ...", "give --lora-dir DIR"); a library caller sets fields, not flags: the message is
 * reworded in place for sds_open_options / sds_request. */
static void lib_wording(char *err, size_t cap)
{
    static const char *const map[][2] = {
        {"give --lora-dir DIR or set ONNX2CL_LORA_DIR", "set sds_open_options.lora_dir or $ONNX2CL_LORA_DIR"},
        {"give --arch-dir DIR", "set sds_open_options.arch_dir"},
        {"need -m CHECKPOINT (compiled --models have", "need a checkpoint session (compiled models have"},
        {"--prompt: ", "prompt: "},
        {"--negative-prompt: ", "negative prompt: "},
        {"--clip-skip ", "clip skip "},
        {"--width ", "width "},
        {" --height ", ", height "},
        {"--variant ", "variant "},
        {"--weights-dtype ", "weights_dtype "},
    };
    if (!err || !cap || !err[0]) return;
    char *buf = malloc(cap);
    if (!buf) return;
    for (size_t k = 0; k <= sizeof map / sizeof *map; k++) {
        const char *from = k < sizeof map / sizeof *map ? map[k][0] : "-m ", *to = k < sizeof map / sizeof *map ? map[k][1] : "checkpoint ";
        char *at = k < sizeof map / sizeof *map ? strstr(err, from) : (!strncmp(err, "-m ", 3) ? err : NULL);
        if (!at) continue;
        snprintf(buf, cap, "%.*s%s%s", (int)(at - err), err, to, at + strlen(from));
        snprintf(err, cap, "%s", buf);
    }
    free(buf);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The VAE scaling factor of a vae/config.json (absent file: dflt). */
static int read_scaling(const char *path, float dflt, float *out, char *err, size_t errcap)
{
    *out = dflt;
    if (!path || !path[0] || !is_file(path)) return 0;
    cJSON *j = sdp_json_file(path, err, errcap);
    if (!j) return SDS_ERROR;
    const cJSON *sf = cJSON_GetObjectItemCaseSensitive(j, "scaling_factor");
    int rc = 0;
    if (sf && !cJSON_IsNumber(sf)) rc = fail(err, errcap, SDS_ERROR, "%s: scaling_factor is not a number", path);
    else if (sf) *out = (float)sf->valuedouble;
    cJSON_Delete(j);
    return rc;
}

/* The scheduler kind of the config's _class_name (euler when it names none or one not ported). */
static int read_default_kind(const char *path, enum sdp_sched_kind *kind, char *err, size_t errcap)
{
    *kind = SDP_SCHED_EULER;
    cJSON *j = sdp_json_file(path, err, errcap);
    if (!j) return SDS_ERROR;
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(j, "_class_name");
    if (cJSON_IsString(cn) && sdp_sched_kind_from_class(cn->valuestring, kind)) *kind = SDP_SCHED_EULER;
    cJSON_Delete(j);
    return 0;
}

static void unload(struct sds_session *s)
{
    if (!s->loaded) return;
    sdp_model_close(&s->p.te);
    sdp_model_close(&s->p.unet);
    sdp_model_close(&s->p.vae);
    if (s->p.venc.desc) sdp_model_close(&s->p.venc);
    if (s->p.te2.desc) sdp_model_close(&s->p.te2);
    memset(&s->p.venc, 0, sizeof s->p.venc);
    memset(&s->p.te2, 0, sizeof s->p.te2);
    memset(&s->p.te, 0, sizeof s->p.te);
    memset(&s->p.unet, 0, sizeof s->p.unet);
    memset(&s->p.vae, 0, sizeof s->p.vae);
    s->loaded = 0;
    free(s->cur_loras);
    s->cur_loras = NULL;
}

/* Loads the three models (with so[3]: the VAE encoder; so[4]: SDXL's text_encoder_2) from their
 * files and checks the set. */
static int load_models(struct sds_session *s, const char *const so[5], const char *const w[5], char *err,
                       size_t errcap)
{
    struct sdp_model *m[5] = {&s->p.te, &s->p.unet, &s->p.vae, &s->p.venc, &s->p.te2};
    for (int i = 0; i < 5; i++)
        if (so[i] && sdp_model_load_opt(i == 0 || i == 4 ? s->tctx : s->ctx, so[i], w[i], s->offload, &s->track, m[i],
                                        err, errcap)) { /* 0, 4: the text encoders */
            for (int k = 0; k < i; k++)
                if (so[k]) sdp_model_close(m[k]);
            for (int k = 0; k < 5; k++) memset(m[k], 0, sizeof *m[k]);
            return SDS_ERROR;
        }
    s->loaded = 1;
    if (sdp_pipeline_check(&s->p, err, errcap)) {
        unload(s);
        return SDS_ERROR;
    }
    return 0;
}

#ifdef ONNX2CL_HAVE_SD3
static void unload3(struct sds_session *s)
{
    if (!s->loaded3) return;
    if (s->fam3 == 2) sdp_flux_close(&s->pf);
    else sdp_sd3_close(&s->p3);
    s->loaded3 = 0;
    free(s->cur_loras);
    s->cur_loras = NULL;
}

/* SD 3 / Flux: prepares (sde_prepare: compiled on first use) and loads the set for w x h (0: the
 * architecture's default) with the transformer at batch (SD 3: 2 with guidance). A failed
 * preparation keeps the loaded set; a failed load leaves none loaded. */
static int engine_load3(struct sds_session *s, int w, int h, int batch, int venc, const struct sde_options *tags,
                        const char *key, char *err, size_t errcap)
{
    struct sde_options eo = {.ckpt = s->ckpt, .arch_dir = s->arch_dir, .cache_dir = s->cache_dir,
                             .compiler = s->compiler, .variant = s->variant, .weights_dtype = s->wdtype,
                             .width = w, .height = h, .batch = batch, .quiet = s->quiet, .vae_encoder = venc,
                             .t5_tokenizer = s->t5_tokenizer, .vae_file = s->vae_file,
                             .clip_l_file = s->clip_l_file, .clip_g_file = s->clip_g_file, .t5xxl_file = s->t5xxl_file};
    for (int i = 0; tags && i < tags->n_loras; i++) { /* the request's <lora:...> tags (merged into the weights) */
        eo.loras[i] = tags->loras[i];
        eo.lora_unet[i] = tags->lora_unet[i];
        eo.n_loras = i + 1;
    }
    struct sde_result *er = calloc(1, sizeof *er);
    if (!er) return fail(err, errcap, SDS_ERROR, "out of memory");
    int rc = sde_prepare(&eo, er, err, errcap);
    if (rc) {
        free(er);
        return rc == -2 ? SDS_EINVAL : SDS_ERROR;
    }
    unload3(s);
    const int flux = s->fam3 == 2;
    struct sdp_sd3_files f = {
        .flux = flux,
        .prog = {er->program[0], er->program[4], flux ? NULL : er->program[5], er->program[6], er->program[2],
                 venc ? er->program[3] : NULL},
        .wts = {er->weights[0], er->weights[4], flux ? NULL : er->weights[5], er->weights[6], er->weights[2],
                venc ? er->weights[3] : NULL},
        .tok = {er->tokenizer, flux ? NULL : er->tokenizer2, er->tokenizer3}, .offload = s->offload, .track = &s->track,
        .text_ctx = s->tctx,
        .sched_cfg = er->sched_cfg, .vae_cfg = er->vae_cfg, .scaling = (float)er->scaling_factor,
        .shift = (float)er->shift_factor};
    if (sdp_sd3_setup(s->ctx, &f, &s->p3, &s->pf, err, errcap)) {
        free(er);
        return SDS_ERROR;
    }
    s->loaded3 = 1;
    s->cur_venc3 = venc;
    if (!(s->cur_loras = strdup(key ? key : ""))) {
        unload3(s);
        free(er);
        return fail(err, errcap, SDS_ERROR, "out of memory");
    }
    s->cur_w = flux ? s->pf.img_w : s->p3.img_w;
    s->cur_h = flux ? s->pf.img_h : s->p3.img_h;
    s->cur_batch = batch;
    if (!s->def_w) s->def_w = er->width, s->def_h = er->height;
    free(er);
    return 0;
}
#endif

/* Engine: prepares and loads the set (w, h, batch, loras). A failed preparation keeps the loaded set;
 * a failed load leaves none loaded (the next request prepares again). */
static int engine_load(struct sds_session *s, int w, int h, int batch, int tokens, int clip_skip, int venc, int n_loras,
                       const char *const *loras, const char *const *lora_unet, const char *key, int first, char *err,
                       size_t errcap)
{
    struct sde_options eo = {.ckpt = s->ckpt, .arch_dir = s->arch_dir, .cache_dir = s->cache_dir,
                             .compiler = s->compiler, .variant = s->variant, .weights_dtype = s->wdtype,
                             .width = w, .height = h, .batch = batch, .n_loras = n_loras, .quiet = s->quiet,
                             .vae_encoder = venc, .tokens = tokens, .clip_skip = clip_skip,
                             .vae_tile = s->vae_tile, .t5_tokenizer = s->t5_tokenizer, .vae_file = s->vae_file,
                             .clip_l_file = s->clip_l_file, .clip_g_file = s->clip_g_file, .t5xxl_file = s->t5xxl_file};
    for (int i = 0; i < n_loras; i++) {
        eo.loras[i] = loras[i];
        eo.lora_unet[i] = lora_unet[i];
    }
    struct sde_result *er = calloc(1, sizeof *er);
    if (!er) return fail(err, errcap, SDS_ERROR, "out of memory");
    if (first) { /* SD 3 and Flux: their own loop (sd3_pipeline.h), in builds with the T5 tokenizer's C++ */
        struct sde_options po = eo;
        po.plan_only = 1, po.quiet = 1;
        if (sde_prepare(&po, er, err, errcap) == 0 && (!strcmp(er->family, "sd3") || !strcmp(er->family, "flux"))) {
#ifdef ONNX2CL_HAVE_SD3
            s->fam3 = !strcmp(er->family, "flux") ? 2 : 1;
            snprintf(s->arch, sizeof s->arch, "%s", er->arch);
            snprintf(s->family, sizeof s->family, "%s", er->family);
            snprintf(s->sched_cfg, sizeof s->sched_cfg, "%s", er->sched_cfg);
            free(er);
            return engine_load3(s, w, h, s->fam3 == 1 ? 2 : 1, 0, NULL, "", err, errcap); /* SD 3 cfg 7: batch 2 */
#else
            int frc = fail(err, errcap, SDS_EINVAL, "%s: a%s checkpoint (architecture %s): this build of the library "
                           "does not run it (built without the T5 tokenizer, libsentencepiece)", eo.ckpt,
                           !strcmp(er->family, "flux") ? " Flux" : "n SD 3", er->arch);
            free(er);
            return frc;
#endif
        }
        memset(er, 0, sizeof *er);
    }
    int rc = sde_prepare(&eo, er, err, errcap); /* a failure leaves the loaded set as it was */
    if (rc) {
        free(er);
        return rc == -2 ? SDS_EINVAL : SDS_ERROR;
    }
    unload(s);
    if (first) {
        snprintf(s->arch, sizeof s->arch, "%s", er->arch);
        snprintf(s->family, sizeof s->family, "%s", er->family);
        if (!er->tokenizer[0]) {
            fail(err, errcap, SDS_ERROR, "%s: no tokenizer (neither the folder's tokenizer/vocab.json nor %s/tokenizer/)",
                 s->ckpt, er->arch_path);
            free(er);
            return SDS_ERROR;
        }
        snprintf(s->tok_dir, sizeof s->tok_dir, "%s", er->tokenizer);
        snprintf(s->sched_cfg, sizeof s->sched_cfg, "%s", er->sched_cfg);
        snprintf(s->vae_cfg, sizeof s->vae_cfg, "%s", er->vae_cfg);
        if (read_scaling(er->vae_cfg, (float)er->scaling_factor, &s->scaling, err, errcap) ||
            sdp_tokenizer_load(s->tok_dir, &s->p.tok, err, errcap) ||
            (er->tokenizer2[0] && sdp_tokenizer_load(er->tokenizer2, &s->p.tok2, err, errcap))) {
            free(er);
            return SDS_ERROR;
        }
        s->force_zeros = er->force_zeros;
        s->def_w = er->width;
        s->def_h = er->height;
    }
    const int xl = er->tokenizer2[0] != 0;
    s->p.vae_tiling = er->vae_tiled;
    const char *so[5] = {er->program[0], er->program[1], er->program[2], venc ? er->program[3] : NULL,
                         xl ? er->program[4] : NULL};
    const char *wp[5] = {er->weights[0], er->weights[1], er->weights[2], venc ? er->weights[3] : NULL,
                         xl ? er->weights[4] : NULL};
    rc = load_models(s, so, wp, err, errcap);
    if (rc == 0) {
        s->cur_w = s->p.img_w;
        s->cur_h = s->p.img_h;
        s->cur_batch = batch;
        s->cur_tokens = s->p.u_seq;
        s->cur_clip_skip = clip_skip > 1 ? clip_skip : 0;
        s->cur_loras = strdup(key ? key : "");
        if (!s->cur_loras) {
            unload(s);
            rc = fail(err, errcap, SDS_ERROR, "out of memory");
        }
    }
    free(er);
    return rc;
}

static int models_dir_open(struct sds_session *s, char *err, size_t errcap)
{
    static const char *const names[4] = {"text_encoder", "unet", "vae_decoder", "vae_encoder"};
    char so[4][PATH_MAX];
    for (int i = 0; i < 4; i++) {
        snprintf(so[i], sizeof so[i], "%s/%s.so", s->models_dir, names[i]);
        if (!is_file(so[i])) {
            char o2d[PATH_MAX];
            snprintf(o2d, sizeof o2d, "%s/%s.o2d", s->models_dir, names[i]);
            if (is_file(o2d)) memcpy(so[i], o2d, sizeof o2d);
        }
    }
    snprintf(s->tok_dir, sizeof s->tok_dir, "%s/tokenizer", s->hf_dir);
    snprintf(s->sched_cfg, sizeof s->sched_cfg, "%s/scheduler/scheduler_config.json", s->hf_dir);
    snprintf(s->vae_cfg, sizeof s->vae_cfg, "%s/vae/config.json", s->hf_dir);
    if (read_scaling(s->vae_cfg, 0.18215f, &s->scaling, err, errcap) ||
        sdp_tokenizer_load(s->tok_dir, &s->p.tok, err, errcap))
        return SDS_ERROR;
    s->has_venc = is_file(so[3]);
    const char *sp[5] = {so[0], so[1], so[2], s->has_venc ? so[3] : NULL, NULL}, *wp[5] = {NULL, NULL, NULL, NULL, NULL};
    int rc = load_models(s, sp, wp, err, errcap);
    if (rc) return rc;
    s->cur_w = s->def_w = s->p.img_w;
    s->cur_h = s->def_h = s->p.img_h;
    s->cur_batch = s->p.u_batch;
    return 0;
}

int sds_open(const struct sds_open_options *o, struct sds_session **out, char *err, size_t errcap)
{
    if (err && errcap) err[0] = 0;
    *out = NULL;
    if (!o) return fail(err, errcap, SDS_EINVAL, "sds_open: no options");
    if (!!(o->checkpoint && *o->checkpoint) == !!(o->models_dir && *o->models_dir))
        return fail(err, errcap, SDS_EINVAL, "sds_open: give a checkpoint or models_dir (one of them)");
    if (o->models_dir && (!o->hf_dir || !*o->hf_dir))
        return fail(err, errcap, SDS_EINVAL, "sds_open: models_dir %s needs hf_dir (tokenizer/, scheduler/)",
                    o->models_dir);
    if (o->models_dir && (o->vae_file || o->clip_l_file || o->clip_g_file || o->t5xxl_file))
        return fail(err, errcap, SDS_EINVAL, "sds_open: vae_file / clip_l_file / clip_g_file / t5xxl_file replace "
                    "parts of a checkpoint: they need checkpoint, not models_dir");
    if (o->weights_dtype && strcmp(o->weights_dtype, "f16") && strcmp(o->weights_dtype, "f32"))
        return fail(err, errcap, SDS_EINVAL, "sds_open: weights_dtype %s: not f16 or f32", o->weights_dtype);
    if (o->width < 0 || o->height < 0 || o->width > 16384 || o->height > 16384)
        return fail(err, errcap, SDS_EINVAL, "sds_open: size %dx%d: out of [0, 16384]", o->width, o->height);
    struct sds_session *s = calloc(1, sizeof *s);
    if (!s) return fail(err, errcap, SDS_ERROR, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    s->engine = o->checkpoint && *o->checkpoint;
    s->ckpt = dup_or_null(o->checkpoint);
    s->models_dir = dup_or_null(o->models_dir);
    s->hf_dir = dup_or_null(o->hf_dir);
    s->arch_dir = dup_or_null(o->arch_dir);
    s->cache_dir = dup_or_null(o->cache_dir);
    s->compiler = dup_or_null(o->compiler);
    s->variant = dup_or_null(o->variant);
    s->t5_tokenizer = dup_or_null(o->t5_tokenizer);
    s->vae_file = dup_or_null(o->vae_file);
    s->clip_l_file = dup_or_null(o->clip_l_file);
    s->clip_g_file = dup_or_null(o->clip_g_file);
    s->t5xxl_file = dup_or_null(o->t5xxl_file);
    s->wdtype = dup_or_null(o->weights_dtype);
    s->lora_dir = dup_or_null(o->lora_dir);
    s->device = dup_or_null(o->device);
    s->quiet = o->quiet;
    s->vae_tile = o->vae_tile;
    s->offload = o->offload;
    if (s->ckpt) /* "folder/" -> "folder" */
        for (size_t l = strlen(s->ckpt); l > 1 && s->ckpt[l - 1] == '/'; l--) s->ckpt[l - 1] = 0;
    int rc;
    if (o2r_ctx_create(s->device, &s->ctx) != O2R_OK) {
        rc = fail(err, errcap, SDS_ERROR, "device: %s", o2r_ctx_last_error(NULL));
        goto bad;
    }
    s->tctx = s->ctx;
    if (o->text_device && o2r_ctx_create(o->text_device, &s->tctx) != O2R_OK) {
        s->tctx = s->ctx;
        const char *e = o2r_ctx_last_error(NULL), *avail = strstr(e, "; available devices:");
        rc = avail ? fail(err, errcap, SDS_EINVAL, "text_device %s: no OpenCL device matches it%s", o->text_device, avail)
                   : fail(err, errcap, SDS_EINVAL, "text_device %s: %s", o->text_device, e);
        goto bad;
    }
    s->has_venc = s->engine;
    if (s->engine) rc = engine_load(s, o->width, o->height, 2, 0, 0, 0, 0, NULL, NULL, "", 1, err, errcap);
    else rc = models_dir_open(s, err, errcap);
    if (rc) goto bad;
#ifdef ONNX2CL_HAVE_SD3
    if (s->fam3 && s->vae_tile) {
        rc = fail(err, errcap, SDS_EINVAL, "vae_tile %d: VAE tiling is not ported for %s (architecture %s)", s->vae_tile,
                  s->fam3 == 2 ? "Flux" : "SD 3", s->arch);
        goto bad;
    }
#endif
    { /* A1111's Model and Model hash */
        const char *src = s->engine ? s->ckpt : s->models_dir, *b = strrchr(src, '/');
        snprintf(s->model, sizeof s->model, "%s", b && b[1] ? b + 1 : src);
        size_t l = strlen(s->model);
        if (l > 12 && !strcmp(s->model + l - 12, ".safetensors")) s->model[l - 12] = 0;
        char cache[PATH_MAX];
        const char *cd = s->cache_dir ? s->cache_dir : sde_cache_dir(cache, sizeof cache) == 0 ? cache : NULL;
        if (!s->engine || !is_file(s->ckpt) || sdp_model_hash(s->ckpt, cd, s->model_hash)) s->model_hash[0] = 0;
    }
    if ((rc = read_default_kind(s->sched_cfg, &s->default_kind, err, errcap))) goto bad;
    { /* A1111's name of the default sampler */
        struct sdp_sched_overrides ov = {.karras = -1};
        struct sdp_scheduler *sc = NULL;
        const char *a_s = NULL, *a_sc = NULL;
        if (sdp_sched_load(s->sched_cfg, s->default_kind, &ov, &sc, err, errcap) == 0) sdp_sched_a1111_name(sc, &a_s, &a_sc);
        snprintf(s->default_a1111, sizeof s->default_a1111, "%s", a_s ? a_s : sdp_sched_kind_name(s->default_kind));
        sdp_sched_free(sc);
        if (err && errcap) err[0] = 0;
    }
    *out = s;
    return 0;
bad:
    sds_close(s);
    lib_wording(err, errcap);
    return rc;
}

void sds_close(struct sds_session *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    unload(s);
#ifdef ONNX2CL_HAVE_SD3
    unload3(s);
#endif
    sdp_tokenizer_free(s->p.tok);
    sdp_tokenizer_free(s->p.tok2);
    if (s->tctx && s->tctx != s->ctx) o2r_ctx_free(s->tctx);
    if (s->ctx) o2r_ctx_free(s->ctx);
    char *owned[] = {s->ckpt, s->models_dir, s->hf_dir, s->arch_dir, s->cache_dir, s->compiler, s->variant,
                     s->wdtype, s->lora_dir, s->device, s->t5_tokenizer, s->vae_file, s->clip_l_file,
                     s->clip_g_file, s->t5xxl_file};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) free(owned[i]);
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int sds_get_info(struct sds_session *s, struct sds_info *info)
{
    memset(info, 0, sizeof *info);
    pthread_mutex_lock(&s->mu);
    snprintf(info->arch, sizeof info->arch, "%s", s->arch);
    snprintf(info->family, sizeof info->family, "%s", s->family);
    snprintf(info->source, sizeof info->source, "%s", s->engine ? s->ckpt : s->models_dir);
    info->width = s->cur_w;
    info->height = s->cur_h;
    info->default_width = s->def_w;
    info->default_height = s->def_h;
    info->fixed_size = !s->engine;
    info->size_multiple = s->p.lat_w ? s->p.img_w / s->p.lat_w : 8;
#ifdef ONNX2CL_HAVE_SD3
    if (s->fam3) info->size_multiple = 16; /* the 16-channel VAE's 8 x the transformer's 2x2 patches */
#endif
    snprintf(info->default_sampler, sizeof info->default_sampler, "%s", s->default_a1111);
    snprintf(info->default_sampler_internal, sizeof info->default_sampler_internal, "%s",
             sdp_sched_kind_name(s->default_kind));
    snprintf(info->model, sizeof info->model, "%s", s->model);
    snprintf(info->model_hash, sizeof info->model_hash, "%s", s->model_hash);
    info->has_vae_encoder = s->has_venc;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

const char *sds_sampler_names(void) { return sdp_sched_names(); }

struct progress_bridge {
    sds_progress_fn fn;
    void *user;
    int steps; /* the request's steps that run (img2img: int(steps * strength)) */
};

/* The pipeline counts model evaluations (PLMS: steps + 1); the caller sees its steps. */
static int progress_cb(const struct sdp_progress *pr, void *user)
{
    const struct progress_bridge *b = user;
    int total = b->steps > 0 ? b->steps : pr->total;
    int step = pr->total > 0 ? (int)((long long)pr->step * total / pr->total) : pr->step;
    struct sds_progress q = {.step = step, .total = total, .elapsed = pr->elapsed, .eta = pr->eta,
                             .latents = pr->latents, .lat_c = pr->lat_c, .lat_h = pr->lat_h, .lat_w = pr->lat_w};
    return b->fn(&q, b->user);
}

/* Frees what sde_lora_tags allocated into o (entries from `from` on) and the cleaned prompt. */
static void free_tags(struct sde_options *o, int from, const char *prompt, const char *orig)
{
    for (int i = from; i < o->n_loras; i++) {
        free((char *)o->loras[i]);
        free((char *)o->lora_unet[i]);
        o->loras[i] = o->lora_unet[i] = NULL;
    }
    if (prompt != orig) free((char *)prompt);
}

/* A1111 schedule type names -> the labels sdp_sched_parse reads ("karras" -> "Karras"). */
static const char *schedule_label(const char *s)
{
    static const char *const map[][2] = {
        {"automatic", "Automatic"}, {"uniform", "Uniform"}, {"karras", "Karras"}, {"exponential", "Exponential"},
        {"polyexponential", "Polyexponential"}, {"sgm_uniform", "SGM Uniform"}, {"kl_optimal", "KL Optimal"},
        {"align_your_steps", "Align Your Steps"}, {"simple", "Simple"}, {"normal", "Normal"}, {"ddim", "DDIM"},
        {"beta", "Beta"}, {"turbo", "Turbo"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(s, map[i][0])) return map[i][1];
    return s;
}

/* A1111's sampler aliases ("k_euler_a") -> names. */
static const char *sampler_label(const char *s)
{
    static const char *const map[][2] = {
        {"k_euler", "Euler"}, {"k_euler_a", "Euler a"}, {"k_euler_ancestral", "Euler a"}, {"k_dpmpp_2m", "DPM++ 2M"},
        {"k_dpmpp_2m_ka", "DPM++ 2M Karras"}, {"k_dpmpp_2m_sde", "DPM++ 2M SDE"}, {"k_lms", "LMS"},
        {"k_heun", "Heun"}, {"k_dpm_2", "DPM2"}, {"k_dpm_2_a", "DPM2 a"}, {"k_lcm", "LCM"}, {"plms", "PLMS"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(s, map[i][0])) return map[i][1];
    return s;
}

/* kind + overrides of a request's sampler / schedule (NULL: the default kind). */
static int pick_sampler(const char *sampler, const char *schedule, enum sdp_sched_kind dflt, enum sdp_sched_kind *kind,
                        struct sdp_sched_overrides *ov, char *err, size_t errcap)
{
    *kind = dflt;
    const char *sn = sampler && *sampler ? sampler_label(sampler) : sdp_sched_kind_name(dflt);
    const char *sc = schedule && *schedule ? schedule_label(schedule) : NULL;
    if (!(sampler && *sampler) && !sc) return 0;
    char e[1536];
    if (sdp_sched_parse(sn, sc, kind, ov, e, sizeof e)) return fail(err, errcap, SDS_EINVAL, "%s", e);
    return 0;
}

int sds_sampler_check(const char *sampler, const char *schedule, char *err, size_t errcap)
{
    enum sdp_sched_kind k;
    struct sdp_sched_overrides ov = {.karras = -1};
    return pick_sampler(sampler, schedule, SDP_SCHED_EULER, &k, &ov, err, errcap);
}

int sds_emphasis_check(const char *name, char *err, size_t errcap)
{
    int e;
    char m[512];
    if (!name || !name[0]) return SDS_OK;
    if (sdp_emphasis_parse(name, &e, m, sizeof m)) return fail(err, errcap, SDS_EINVAL, "%s", m);
    return SDS_OK;
}

int sds_txt2img(struct sds_session *s, const struct sds_request *r, struct sds_image *out, char *err,
                size_t errcap)
{
    return sds_generate(s, r, out, err, errcap);
}

/* [3, h, w] floats in [0, 1] -> 8-bit RGB [h, w, 3], rounded as png_write.c does. */
static void chw_to_rgb(const float *image, int w, int h, unsigned char *rgb)
{
    const size_t plane = (size_t)w * h;
    for (size_t i = 0; i < plane; i++)
        for (int c = 0; c < 3; c++) {
            float v = nearbyintf(image[c * plane + i] * 255.0f);
            rgb[i * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

/* A1111's apply_overlay: the generated image *rgb [gh, gw, 3] pasted into the init image [ih, iw, 3] at box
 * with the (blurred) 8-bit mask [ih, iw] as alpha; *rgb and *chw ([3, ih, iw] in [0, 1]) are replaced by the
 * result at the init image's size. -1: out of memory, nothing changed. */
static int paste_back(const unsigned char *init_rgb, const unsigned char *m8, int iw, int ih, const int box[4],
                      int gw, int gh, unsigned char **rgb, float **chw)
{
    unsigned char *full = NULL;
    float *fchw = NULL;
    const size_t iplane = (size_t)iw * ih;
    if (sds_image_overlay(init_rgb, m8, iw, ih, *rgb, gw, gh, box, &full) ||
        !(fchw = malloc(iplane * 3 * sizeof *fchw))) {
        free(full);
        return -1;
    }
    for (size_t i = 0; i < iplane; i++)
        for (int c = 0; c < 3; c++) fchw[c * iplane + i] = full[i * 3 + c] / 255.0f;
    free(*rgb);
    free(*chw);
    *rgb = full, *chw = fchw;
    return 0;
}

#ifdef ONNX2CL_HAVE_SD3
/* An SD 3 / Flux request (s->mu held): txt2img or img2img with flow-matching Euler, one image;
 * what the loop does not take is refused (SDS_EINVAL) before any model runs. */
static int generate3(struct sds_session *s, const struct sds_request *r, int steps, const char *negative,
                     struct sds_image *out, char *err, size_t errcap)
{
    const int flux = s->fam3 == 2, img2img = r->init_rgb != NULL;
    const char *fam = flux ? "Flux" : "SD 3";
    const double strength = r->strength > 0 ? r->strength : 0.75;
    if (img2img && sdp_flow_img2img_t_start(steps, strength) >= steps)
        return fail(err, errcap, SDS_EINVAL, "strength %g, steps %d: no denoising step left; raise one", strength, steps);
    if (r->karras == 1 || r->spacing || (r->schedule && strcasecmp(r->schedule, "automatic")))
        return fail(err, errcap, SDS_EINVAL, "schedule %s: %s runs FlowMatchEulerDiscreteScheduler's own sigmas only",
                    r->schedule ? r->schedule : r->spacing ? r->spacing : "Karras", fam);
    if (r->sampler) {
        enum sdp_sched_kind kind;
        struct sdp_sched_overrides ov = {.karras = -1};
        int prc = pick_sampler(r->sampler, NULL, SDP_SCHED_FLOW_EULER, &kind, &ov, err, errcap);
        if (prc) return prc;
        if (kind != SDP_SCHED_EULER && kind != SDP_SCHED_FLOW_EULER)
            return fail(err, errcap, SDS_EINVAL, "sampler %s: %s runs flow-matching Euler only (sampler \"Euler\")",
                        r->sampler, fam);
        if (ov.karras == 1 || ov.sigmas != SDP_SIGMAS_CONFIG || ov.spacing) /* "Euler Karras", "Euler Exponential" */
            return fail(err, errcap, SDS_EINVAL, "sampler %s: %s runs FlowMatchEulerDiscreteScheduler's own sigmas only "
                        "(sampler \"Euler\", schedule automatic)", r->sampler, fam);
    }
    if (!isfinite(r->distilled_cfg) || r->distilled_cfg < 0 || r->distilled_cfg > 100)
        return fail(err, errcap, SDS_EINVAL, "distilled cfg %g: not in [0, 100]", r->distilled_cfg);
    /* only masked: width x height, or the image's size rounded down to a multiple of 16 (the flow families') */
    const int om_size = r->mask && r->only_masked;
    const int w = om_size ? (r->width ? r->width : r->init_w - r->init_w % 16)
                  : img2img ? r->init_w : r->width ? r->width : s->def_w;
    const int h = om_size ? (r->height ? r->height : r->init_h - r->init_h % 16)
                  : img2img ? r->init_h : r->height ? r->height : s->def_h;
    const int batch = !flux && r->cfg > 1 ? 2 : 1; /* SD 3: uncond and cond rows in one transformer run */
    const int venc = img2img || (s->loaded3 && s->cur_venc3); /* a loaded encoder stays */
    int rc = 0;
    /* LoRA tags: removed from the prompt, their files found by stem in lora_dir, the set the load's key */
    const char *prompt = r->prompt;
    struct sde_options tags = {.ckpt = s->ckpt};
    char key[LORA_KEY_CAP > 8192 ? 8192 : LORA_KEY_CAP];
    {
        char e[2048];
        if ((rc = sde_lora_tags(&tags, s->lora_dir, &prompt, negative, e, sizeof e))) {
            free_tags(&tags, 0, prompt, r->prompt);
            return fail(err, errcap, SDS_EINVAL, "%s", e);
        }
        size_t kl = 0;
        key[0] = 0;
        for (int i = 0; i < tags.n_loras && kl < sizeof key; i++)
            kl += (size_t)snprintf(key + kl, sizeof key - kl, "%s|%s;", tags.loras[i],
                                   tags.lora_unet[i] ? tags.lora_unet[i] : "");
    }
    if (!s->loaded3 || w != s->cur_w || h != s->cur_h || batch != s->cur_batch || venc != s->cur_venc3 ||
        strcmp(key, s->cur_loras ? s->cur_loras : "")) {
        double tl = now_s();
        if (r->progress) {
            char note[160];
            snprintf(note, sizeof note, "preparing the models for %dx%d (compiled on first use: may take minutes)", w, h);
            struct sds_progress q = {.step = 0, .total = steps, .stage = note};
            if (r->progress(&q, r->progress_user)) {
                free_tags(&tags, 0, prompt, r->prompt);
                return fail(err, errcap, SDS_CANCELLED, "cancelled");
            }
        }
        rc = engine_load3(s, w, h, batch, venc, &tags, key, err, errcap);
        out->load_seconds = now_s() - tl;
        if (rc) {
            free_tags(&tags, 0, prompt, r->prompt);
            return rc;
        }
    }
    const int img_w = flux ? s->pf.img_w : s->p3.img_w, img_h = flux ? s->pf.img_h : s->p3.img_h;
    const size_t plane = (size_t)img_w * img_h;
    char *lora_hashes = NULL; /* A1111's "Lora hashes", cached beside the model hashes */
    if (tags.n_loras) {
        char cache[PATH_MAX];
        const char *cd = s->cache_dir ? s->cache_dir : sde_cache_dir(cache, sizeof cache) == 0 ? cache : NULL;
        lora_hashes = sdp_infotext_lora_hashes(tags.loras, tags.n_loras, cd);
    }
    free_tags(&tags, 0, NULL, NULL); /* the files are merged; the tag-free prompt stays for the text encoders */
    /* A1111's Inpaint area "Only masked": the box around the mask, cut from the image and the mask and filled
     * to the processing size (img_w x img_h), generated, pasted back into the image (the CLI's --only-masked) */
    const int om = r->mask && r->only_masked;
    const int iw = img2img ? r->init_w : img_w, ih = img2img ? r->init_h : img_h;
    const size_t iplane = (size_t)iw * ih;
    float *image = malloc(plane * 3 * sizeof *image), *init = img2img ? malloc(plane * 3 * sizeof *init) : NULL;
    float *mask = r->mask ? malloc(plane * sizeof *mask) : NULL;
    unsigned char *rgb = malloc(plane * 3), *m8 = r->mask ? malloc(iplane) : NULL, *om_rgb = NULL, *om_mask = NULL;
    int box[4] = {0, 0, iw, ih}, ow = img_w, oh = img_h;
    const double tg = now_s();
    if (!image || !rgb || (img2img && !init) || (r->mask && (!mask || !m8))) {
        rc = fail(err, errcap, SDS_ERROR, "out of memory");
        goto out3;
    }
    const unsigned char *irgb = r->init_rgb, *im8 = m8;
    if (r->mask) { /* inverted, then blurred (A1111's order), as the CLI reads --mask / --mask-blur */
        for (size_t i = 0; i < iplane; i++) m8[i] = r->mask_invert ? (unsigned char)(255 - r->mask[i]) : r->mask[i];
        if (sdp_gaussian_blur_u8(m8, iw, ih, 1, (float)r->mask_blur)) {
            rc = fail(err, errcap, SDS_ERROR, "out of memory");
            goto out3;
        }
        if (om) {
            if (sds_mask_crop_region(m8, iw, ih, img_w, img_h, r->only_masked_padding, box)) {
                rc = fail(err, errcap, SDS_EINVAL, "only masked: the mask is all black%s: nothing to inpaint",
                          r->mask_blur > 0 ? " after its blur" : "");
                goto out3;
            }
            if (sds_image_crop_fill(r->init_rgb, iw, ih, 3, box, img_w, img_h, &om_rgb) ||
                sds_image_crop_fill(m8, iw, ih, 1, box, img_w, img_h, &om_mask)) {
                rc = fail(err, errcap, SDS_ERROR, "out of memory");
                goto out3;
            }
            irgb = om_rgb, im8 = om_mask;
        }
        for (size_t i = 0; i < plane; i++) mask[i] = im8[i] / 255.0f;
    }
    for (size_t i = 0; img2img && i < plane; i++) /* 8-bit value / 255, as the CLI reads --init-image */
        for (int c = 0; c < 3; c++) init[c * plane + i] = irgb[i * 3 + c] / 255.0f;
    struct progress_bridge br = {r->progress, r->progress_user,
                                 img2img ? steps - sdp_flow_img2img_t_start(steps, strength) : steps};
    struct sdp_params prm = {.prompt = prompt, .negative = negative, .steps = steps, .cfg = (float)r->cfg,
                             .seed = r->seed, .batch = 1, .quiet = 1, .progress = r->progress ? progress_cb : NULL,
                             .progress_user = &br, .cancel = r->cancel, .init_image = init, .mask = mask,
                             .strength = img2img ? strength : 0};
    const float guidance = r->distilled_cfg > 0 ? (float)r->distilled_cfg : 3.5f;
    struct sdp_timings tm;
    int grc = flux ? sdp_flux_generate(&s->pf, &prm, guidance, image, &out->n_tokens, &tm, err, errcap)
                   : sdp_sd3_generate(&s->p3, &prm, image, &out->n_tokens, &tm, err, errcap);
    if (grc) {
        rc = grc == SDP_CANCELLED ? SDS_CANCELLED : SDS_ERROR;
        goto out3;
    }
    chw_to_rgb(image, img_w, img_h, rgb);
    if (r->mask && (om || r->mask_overlay)) { /* pasted back with the (blurred) mask as alpha: A1111's apply_overlay */
        if (paste_back(r->init_rgb, m8, iw, ih, box, img_w, img_h, &rgb, &image)) {
            rc = fail(err, errcap, SDS_ERROR, "out of memory");
            goto out3;
        }
        ow = iw, oh = ih;
    }
    const char *a_s, *a_sc;
    sdp_sched_a1111_name(flux ? s->pf.sched : s->p3.sched, &a_s, &a_sc);
    snprintf(out->sampler, sizeof out->sampler, "%s", sdp_sched_kind_name(SDP_SCHED_FLOW_EULER));
    snprintf(out->a1111_sampler, sizeof out->a1111_sampler, "%s", a_s);
    snprintf(out->a1111_schedule, sizeof out->a1111_schedule, "%s", a_sc);
    char extra[64] = ""; /* Forge's name for Flux dev's guidance */
    if (flux && s->pf.d_g >= 0) snprintf(extra, sizeof extra, "Distilled CFG Scale: %g", guidance);
    struct sdp_infotext it = {.prompt = r->prompt, .negative = negative, .steps = steps, .sampler = a_s,
                              .schedule = a_sc, .cfg = r->cfg, .seed = r->seed, .width = img_w, .height = img_h,
                              .model_hash = s->model_hash, .model = s->model, .strength = img2img ? strength : -1,
                              .extra = extra[0] ? extra : NULL, .lora_hashes = lora_hashes,
                              .inpaint = r->mask != NULL, .mask_blur = r->mask_blur,
                              .version = "onnx2cl-sd " ONNX2CL_VERSION};
    if (!(out->parameters = sdp_infotext_dup(&it))) {
        rc = fail(err, errcap, SDS_ERROR, "out of memory");
        goto out3;
    }
    out->width = ow;
    out->height = oh;
    out->chw = image;
    out->rgb = rgb;
    out->seconds = now_s() - tg;
    image = NULL, rgb = NULL;
out3:
    free(image);
    free(rgb);
    free(init);
    free(mask);
    free(m8);
    free(om_rgb);
    free(om_mask);
    free(lora_hashes);
    if (prompt != r->prompt) free((char *)prompt);
    return rc;
}
#endif

int sds_generate(struct sds_session *s, const struct sds_request *r, struct sds_image *out, char *err,
                 size_t errcap)
{
    memset(out, 0, sizeof *out);
    if (err && errcap) err[0] = 0;
    if (!s || !r) return fail(err, errcap, SDS_EINVAL, "sds_generate: no session or request");
    if (!r->prompt) return fail(err, errcap, SDS_EINVAL, "prompt: missing");
    const int steps = r->steps ? r->steps : 20;
    if (steps < 1 || steps > 1000) return fail(err, errcap, SDS_EINVAL, "steps %d: not in [1, 1000]", r->steps);
    if (!isfinite(r->cfg) || r->cfg < 0 || r->cfg > 100)
        return fail(err, errcap, SDS_EINVAL, "cfg %g: not in [0, 100]", r->cfg);
    if (r->width < 0 || r->height < 0 || r->width > 16384 || r->height > 16384)
        return fail(err, errcap, SDS_EINVAL, "size %dx%d: out of [0, 16384]", r->width, r->height);
    if (r->karras < -1 || r->karras > 1) return fail(err, errcap, SDS_EINVAL, "karras %d: not -1, 0 or 1", r->karras);
    if (r->spacing && strcmp(r->spacing, "linspace") && strcmp(r->spacing, "leading") && strcmp(r->spacing, "trailing"))
        return fail(err, errcap, SDS_EINVAL, "timestep spacing %s: not one of linspace, leading, trailing", r->spacing);
    const int img2img = r->init_rgb != NULL;
    const double strength = r->strength > 0 ? r->strength : 0.75;
    if (r->mask && !img2img) return fail(err, errcap, SDS_EINVAL, "mask: needs an init image (inpainting)");
    if (img2img) {
        if (r->init_w < 8 || r->init_h < 8 || r->init_w > 16384 || r->init_h > 16384)
            return fail(err, errcap, SDS_EINVAL, "init image %dx%d: out of [8, 16384]", r->init_w, r->init_h);
        if (!r->only_masked && ((r->width && r->width != r->init_w) || (r->height && r->height != r->init_h)))
            return fail(err, errcap, SDS_EINVAL, "width %d, height %d: the init image is %dx%d (it is not resized)",
                        r->width, r->height, r->init_w, r->init_h);
        if (!(strength > 0 && strength <= 1))
            return fail(err, errcap, SDS_EINVAL, "strength %g: not in (0, 1]", strength);
        if (sdp_img2img_t_start(steps, strength) >= steps)
            return fail(err, errcap, SDS_EINVAL, "strength %g, steps %d: int(%d * %g) = 0 denoising steps; raise one",
                        strength, steps, steps, strength);
        if (!s->has_venc)
            return fail(err, errcap, SDS_EINVAL, "img2img: no VAE encoder (%s/vae_encoder.so or .o2d)",
                        s->models_dir ? s->models_dir : "?");
    }
    if (!isfinite(r->mask_blur) || r->mask_blur < 0 || r->mask_blur > 1000)
        return fail(err, errcap, SDS_EINVAL, "mask blur %g: not in [0, 1000]", r->mask_blur);
    if ((r->mask_blur > 0 || r->mask_invert || r->only_masked) && !r->mask)
        return fail(err, errcap, SDS_EINVAL, "%s: needs a mask",
                    r->only_masked ? "only masked (inpaint_full_res)" : r->mask_invert ? "mask invert" : "mask blur");
    if (r->only_masked_padding < 0 || r->only_masked_padding > 16384)
        return fail(err, errcap, SDS_EINVAL, "masked area padding %d: not in [0, 16384]", r->only_masked_padding);
    if (!isfinite(r->eta) || r->eta < 0 || r->eta > 1) return fail(err, errcap, SDS_EINVAL, "eta %g: not in [0, 1]", r->eta);
    const char *negative = r->negative ? r->negative : "";
    pthread_mutex_lock(&s->mu);
#ifdef ONNX2CL_HAVE_SD3
    if (s->fam3) {
        int rc3 = generate3(s, r, steps, negative, out, err, errcap);
        pthread_mutex_unlock(&s->mu);
        if (rc3) {
            double ls = out->load_seconds;
            sds_image_free(out);
            out->load_seconds = ls;
            lib_wording(err, errcap);
        }
        return rc3;
    }
#endif
    int rc = 0;
    const char *prompt = r->prompt;
    struct sde_options tags = {.ckpt = s->engine ? s->ckpt : NULL};
    struct sdp_scheduler *sched = NULL;
    float *image = NULL, *init = NULL, *mask = NULL;
    unsigned char *m8full = NULL, *om_rgb = NULL, *om_mask = NULL; /* the mask at the init's size; only masked's crops */
    int om_box[4] = {0, 0, 0, 0};
    /* LoRA tags: removed from the prompt, their files found by stem in lora_dir */
    {
        char e[2048];
        int trc = sde_lora_tags(&tags, s->lora_dir, &prompt, negative, e, sizeof e);
        if (trc) {
            rc = fail(err, errcap, SDS_EINVAL, "%s", e);
            goto done;
        }
    }
    enum sdp_sched_kind kind;
    struct sdp_sched_overrides ov = {.karras = -1, .spacing = r->spacing, .eta = (float)r->eta};
    if ((rc = pick_sampler(r->sampler, r->schedule, s->default_kind, &kind, &ov, err, errcap))) goto done;
    if (r->karras) {
        ov.karras = r->karras == 1;
        ov.sigmas = r->karras == 1 ? SDP_SIGMAS_KARRAS : SDP_SIGMAS_DEFAULT;
    }
    if (r->spacing) ov.spacing = r->spacing;
    /* the prompt syntax: how many text tokens the UNet takes */
    int emphasis = SDP_EMPHASIS_DIFFUSERS, tokens = 77;
    {
        char e[1024];
        if (r->emphasis && r->emphasis[0] && sdp_emphasis_parse(r->emphasis, &emphasis, e, sizeof e)) {
            rc = fail(err, errcap, SDS_EINVAL, "%s", e);
            goto done;
        }
        if (sdp_cond_tokens(s->p.tok, emphasis, prompt, negative, r->cfg > 1, 77, &tokens, NULL, NULL, e, sizeof e)) {
            rc = fail(err, errcap, SDS_EINVAL, "%s", e);
            goto done;
        }
    }
    if (r->clip_skip < 0 || r->clip_skip > 12) {
        rc = fail(err, errcap, SDS_EINVAL, "clip skip %d: not in [1, 12]", r->clip_skip);
        goto done;
    }
    /* A1111 applies its Clip skip option (CLIP_stop_at_last_layers) to SD 1.x only: SD 2.x's and
     * SDXL's text encoders already end at the penultimate layer, so the option is ignored there */
    const int clip_skip = r->clip_skip > 1 && (!s->engine || !strcmp(s->family, "sd1")) ? r->clip_skip : 0;
    if (clip_skip && !s->engine) {
        rc = fail(err, errcap, SDS_EINVAL, "clip skip %d: needs a checkpoint session (compiled models take the text "
                  "encoder's last layer only)", clip_skip);
        goto done;
    }
    /* the models this request needs */
    /* only masked: width x height, or the init image's size rounded down to a multiple of 8 (diffusers'
     * get_default_height_width) */
    const int want_w = r->only_masked ? (r->width ? r->width : r->init_w - r->init_w % 8) : img2img ? r->init_w : r->width;
    const int want_h = r->only_masked ? (r->height ? r->height : r->init_h - r->init_h % 8) : img2img ? r->init_h : r->height;
    if (s->engine) {
        int w = want_w ? want_w : s->def_w; /* not the last request's size */
        int h = want_h ? want_h : s->def_h;
        int batch = r->cfg > 1 ? 2 : 1;
        int venc = img2img || (s->loaded && s->p.venc.desc != NULL); /* a loaded encoder stays */
        char *key = malloc(LORA_KEY_CAP);
        if (!key) {
            rc = fail(err, errcap, SDS_ERROR, "out of memory");
            goto done;
        }
        size_t kl = 0;
        key[0] = 0;
        for (int i = 0; i < tags.n_loras; i++)
            kl += (size_t)snprintf(key + kl, LORA_KEY_CAP - kl, "%s|%s;", tags.loras[i],
                                   tags.lora_unet[i] ? tags.lora_unet[i] : "");
        if (!s->loaded || w != s->cur_w || h != s->cur_h || batch != s->cur_batch || strcmp(key, s->cur_loras) ||
            (venc && !s->p.venc.desc) || tokens != s->cur_tokens || clip_skip != s->cur_clip_skip) {
            double tl = now_s();
            if (r->progress) { /* a first use compiles: say so before the wait */
                char note[160];
                snprintf(note, sizeof note, "preparing the models for %dx%d%s (compiled on first use: may take minutes)",
                         w, h, tags.n_loras ? " with LoRAs" : "");
                struct sds_progress q = {.step = 0, .total = steps, .stage = note};
                if (r->progress(&q, r->progress_user)) {
                    free(key);
                    rc = fail(err, errcap, SDS_CANCELLED, "cancelled");
                    goto done;
                }
            }
            rc = engine_load(s, w, h, batch, tokens, clip_skip, venc, tags.n_loras, tags.loras, tags.lora_unet, key, 0, err, errcap);
            out->load_seconds = now_s() - tl;
        }
        free(key);
        if (rc) goto done;
    } else if ((want_w && want_w != s->p.img_w) || (want_h && want_h != s->p.img_h)) {
        rc = fail(err, errcap, SDS_EINVAL, "size %dx%d: the compiled models (%s) make %dx%d only",
                  want_w ? want_w : s->p.img_w, want_h ? want_h : s->p.img_h, s->models_dir, s->p.img_w, s->p.img_h);
        goto done;
    } else if (s->p.u_seq % tokens) {
        rc = fail(err, errcap, SDS_EINVAL, "prompt: %d text tokens (75-token chunks of the prompt and negative prompt), "
                  "but the compiled UNet (%s) takes %d", tokens, s->models_dir, s->p.u_seq);
        goto done;
    }
    /* scheduler, prompt and schedule checked before any model runs */
    if (sdp_sched_load(s->sched_cfg, kind, &ov, &sched, err, errcap)) {
        rc = SDS_ERROR;
        goto done;
    }
    {
        int64_t ids[2];
        int full;
        char e[1024];
        if (sdp_tokenizer_encode(s->p.tok, prompt, ids, 2, &full, e, sizeof e)) {
            rc = fail(err, errcap, SDS_EINVAL, "prompt: %s", e);
            goto done;
        }
        if (sdp_tokenizer_encode(s->p.tok, negative, ids, 2, &full, e, sizeof e)) {
            rc = fail(err, errcap, SDS_EINVAL, "negative prompt: %s", e);
            goto done;
        }
        if (sdp_sched_set_timesteps(sched, steps, e, sizeof e)) {
            rc = fail(err, errcap, SDS_EINVAL, "%s", e);
            goto done;
        }
    }
    const size_t plane = (size_t)s->p.img_h * s->p.img_w;
    if (img2img) { /* 8-bit value / 255, as the CLI reads --init-image */
        const size_t iplane = (size_t)r->init_w * r->init_h; /* == plane unless only masked */
        const unsigned char *irgb = r->init_rgb, *m8 = NULL;
        init = malloc(plane * 3 * sizeof *init);
        mask = r->mask ? malloc(plane * sizeof *mask) : NULL;
        if (!init || (r->mask && !mask) || (r->mask && !(m8full = malloc(iplane)))) {
            rc = fail(err, errcap, SDS_ERROR, "out of memory");
            goto done;
        }
        if (r->mask) { /* inverted, then blurred (A1111's order), as the CLI reads --mask / --mask-blur */
            for (size_t i = 0; i < iplane; i++)
                m8full[i] = r->mask_invert ? (unsigned char)(255 - r->mask[i]) : r->mask[i];
            if (sdp_gaussian_blur_u8(m8full, r->init_w, r->init_h, 1, (float)r->mask_blur)) {
                rc = fail(err, errcap, SDS_ERROR, "out of memory");
                goto done;
            }
            m8 = m8full;
        }
        if (r->only_masked) { /* the box around the mask, cropped and filled to the processing size */
            if (sds_mask_crop_region(m8full, r->init_w, r->init_h, s->p.img_w, s->p.img_h, r->only_masked_padding,
                                     om_box)) {
                rc = fail(err, errcap, SDS_EINVAL, "only masked: the mask is all black%s: nothing to inpaint",
                          r->mask_blur > 0 ? " after its blur" : "");
                goto done;
            }
            if (sds_image_crop_fill(r->init_rgb, r->init_w, r->init_h, 3, om_box, s->p.img_w, s->p.img_h, &om_rgb) ||
                sds_image_crop_fill(m8full, r->init_w, r->init_h, 1, om_box, s->p.img_w, s->p.img_h, &om_mask)) {
                rc = fail(err, errcap, SDS_ERROR, "out of memory");
                goto done;
            }
            irgb = om_rgb, m8 = om_mask;
        }
        for (size_t i = 0; i < plane; i++)
            for (int c = 0; c < 3; c++) init[c * plane + i] = irgb[i * 3 + c] / 255.0f;
        if (mask)
            for (size_t i = 0; i < plane; i++) mask[i] = m8[i] / 255.0f;
    }
    image = malloc(plane * 3 * sizeof *image);
    unsigned char *rgb = malloc(plane * 3);
    if (!image || !rgb) {
        free(rgb);
        rc = fail(err, errcap, SDS_ERROR, "out of memory");
        goto done;
    }
    struct progress_bridge br = {r->progress, r->progress_user,
                                 img2img ? steps - sdp_img2img_t_start(steps, strength) : steps};
    struct sdp_params prm = {.prompt = prompt, .negative = negative, .steps = steps, .cfg = (float)r->cfg,
                             .seed = r->seed, .batch = 1, .init_image = init, .strength = img2img ? strength : 0,
                             .mask = mask, .scaling_factor = s->scaling, .quiet = 1,
                             .progress = r->progress ? progress_cb : NULL, .progress_user = &br,
                             .cancel = r->cancel, .emphasis = emphasis, .encode_empty_negative = !s->force_zeros};
    struct sdp_timings tm;
    s->p.sched = sched;
    double tg = now_s();
    int grc = sdp_generate(&s->p, &prm, image, &out->n_tokens, &tm, err, errcap);
    s->p.sched = NULL;
    if (grc) {
        free(rgb);
        rc = grc == SDP_CANCELLED ? SDS_CANCELLED : SDS_ERROR;
        goto done;
    }
    chw_to_rgb(image, s->p.img_w, s->p.img_h, rgb);
    snprintf(out->sampler, sizeof out->sampler, "%s%s", sdp_sched_kind_name(kind), sched->karras ? " karras" : "");
    const char *a_s, *a_sc;
    sdp_sched_a1111_name(sched, &a_s, &a_sc);
    snprintf(out->a1111_sampler, sizeof out->a1111_sampler, "%s", a_s);
    snprintf(out->a1111_schedule, sizeof out->a1111_schedule, "%s", a_sc);
    char extra[128] = ""; /* A1111: "Eta DDIM" (DDIM, PLMS, UniPC: sd_samplers_timesteps) when eta != 0 */
    if (r->eta != 0 && (kind == SDP_SCHED_DDIM || kind == SDP_SCHED_TCD))
        snprintf(extra, sizeof extra, "%s: %g", kind == SDP_SCHED_DDIM ? "Eta DDIM" : "Eta", r->eta);
    if (r->only_masked) /* A1111's processing.py names */
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%sInpaint area: Only masked, Masked area padding: %d",
                 extra[0] ? ", " : "", r->only_masked_padding);
    char *lora_hashes = NULL; /* A1111's "Lora hashes", cached beside the model hashes */
    if (tags.n_loras) {
        char cache[PATH_MAX];
        const char *cd = s->cache_dir ? s->cache_dir : sde_cache_dir(cache, sizeof cache) == 0 ? cache : NULL;
        lora_hashes = sdp_infotext_lora_hashes(tags.loras, tags.n_loras, cd);
    }
    struct sdp_infotext it = {.prompt = r->prompt, .negative = negative, .steps = steps, .sampler = a_s,
                              .schedule = a_sc, .karras = !strcmp(a_sc, "Karras"), .cfg = r->cfg, .seed = r->seed, .width = s->p.img_w,
                              .height = s->p.img_h, .model_hash = s->model_hash, .model = s->model,
                              .strength = img2img ? strength : -1, .inpaint = r->mask != NULL,
                              .mask_blur = r->mask_blur, .clip_skip = clip_skip, .extra = extra,
                              .lora_hashes = lora_hashes,
                              .emphasis = sdp_infotext_emphasis(emphasis == SDP_EMPHASIS_DIFFUSERS ? "None"
                                                                : sdp_emphasis_name(emphasis), r->prompt,
                                                                r->cfg > 1 ? negative : ""),
                              .version = "onnx2cl-sd " ONNX2CL_VERSION};
    out->parameters = sdp_infotext_dup(&it); /* its full length */
    free(lora_hashes);
    if (!out->parameters) {
        free(rgb);
        rc = fail(err, errcap, SDS_ERROR, "out of memory");
        goto done;
    }
    out->width = s->p.img_w;
    out->height = s->p.img_h;
    if (r->mask && (r->only_masked || r->mask_overlay)) { /* A1111's apply_overlay: the area (only masked) or the
                                                              whole picture (mask overlay) pasted back */
        const int whole[4] = {0, 0, s->p.img_w, s->p.img_h};
        if (paste_back(r->init_rgb, m8full, r->init_w, r->init_h, r->only_masked ? om_box : whole, s->p.img_w,
                       s->p.img_h, &rgb, &image)) {
            free(rgb);
            rc = fail(err, errcap, SDS_ERROR, "out of memory");
            goto done;
        }
        out->width = r->init_w;
        out->height = r->init_h;
    }
    out->chw = image;
    out->rgb = rgb;
    out->seconds = now_s() - tg;
    image = NULL;
done:
    free(image);
    free(init);
    free(mask);
    free(m8full);
    free(om_rgb);
    free(om_mask);
    sdp_sched_free(sched);
    free_tags(&tags, 0, prompt, r->prompt);
    pthread_mutex_unlock(&s->mu);
    if (rc) {
        double ls = out->load_seconds;
        sds_image_free(out);
        out->load_seconds = ls;
        lib_wording(err, errcap);
    }
    return rc;
}

void sds_image_free(struct sds_image *im)
{
    if (!im) return;
    free(im->chw);
    free(im->rgb);
    free(im->parameters);
    memset(im, 0, sizeof *im);
}

/* ---- PNG in memory ---- */

struct membuf {
    unsigned char *p;
    size_t n, cap;
    int oom;
};

static void on_png_error(png_structp png, png_const_charp msg)
{
    char *buf = png_get_error_ptr(png);
    snprintf(buf, 256, "%s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static void mem_write(png_structp png, png_bytep data, png_size_t len)
{
    struct membuf *b = png_get_io_ptr(png);
    if (b->oom) return;
    if (b->n + len > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + len) nc *= 2;
        unsigned char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void mem_flush(png_structp png) { (void)png; }

int sds_png_encode(const unsigned char *rgb, int w, int h, const char *const *keys, const char *const *values,
                   int n_text, unsigned char **png_out, size_t *len, char *err, size_t errcap)
{
    *png_out = NULL;
    *len = 0;
    if (w < 1 || h < 1) return fail(err, errcap, SDS_EINVAL, "PNG: size %dx%d", w, h);
    char pngmsg[256] = "";
    struct membuf b = {0};
    png_textp text = calloc((size_t)(n_text > 0 ? n_text : 1), sizeof *text);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, pngmsg, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!text || !png || !info) {
        if (png) png_destroy_write_struct(&png, info ? &info : NULL);
        free(text);
        return fail(err, errcap, SDS_ERROR, "PNG: out of memory");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(text);
        free(b.p);
        return fail(err, errcap, SDS_ERROR, "PNG: libpng: %s", pngmsg);
    }
    png_set_write_fn(png, &b, mem_write, mem_flush);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    for (int i = 0; i < n_text; i++) { /* tEXt is Latin-1: UTF-8 text goes in iTXt, as PIL writes A1111's */
        int ascii = 1;
        for (const unsigned char *c = (const unsigned char *)values[i]; *c; c++) ascii &= *c < 0x80;
        text[i].compression = ascii ? PNG_TEXT_COMPRESSION_NONE : PNG_ITXT_COMPRESSION_NONE;
        text[i].key = (png_charp)keys[i];
        text[i].text = (png_charp)values[i];
        if (ascii) text[i].text_length = strlen(values[i]);
        else text[i].itxt_length = strlen(values[i]);
    }
    if (n_text > 0) png_set_text(png, info, text, n_text);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) png_write_row(png, (png_const_bytep)(rgb + (size_t)y * w * 3));
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(text);
    if (b.oom) {
        free(b.p);
        return fail(err, errcap, SDS_ERROR, "PNG: out of memory");
    }
    *png_out = b.p;
    *len = b.n;
    return 0;
}

struct memread {
    const unsigned char *p;
    size_t n, off;
};

static void mem_read(png_structp png, png_bytep data, png_size_t len)
{
    struct memread *m = png_get_io_ptr(png);
    if (len > m->n - m->off) png_error(png, "truncated PNG");
    memcpy(data, m->p + m->off, len);
    m->off += len;
}

int sds_png_text(const unsigned char *data, size_t len, char **keys, char **values, int cap, int *n_text, int *w,
                 int *h, char *err, size_t errcap)
{
    *n_text = 0;
    if (len < 8 || png_sig_cmp((png_const_bytep)data, 0, 8))
        return fail(err, errcap, SDS_EINVAL, "not a PNG (no PNG signature)");
    char pngmsg[256] = "";
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, pngmsg, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_read_struct(&png, info ? &info : NULL, NULL);
        return fail(err, errcap, SDS_ERROR, "PNG: out of memory");
    }
    struct memread m = {data, len, 0};
    volatile int got = 0;
    if (setjmp(png_jmpbuf(png))) {
        for (int i = 0; i < got; i++) free(keys[i]), free(values[i]);
        *n_text = 0;
        png_destroy_read_struct(&png, &info, NULL);
        return fail(err, errcap, SDS_EINVAL, "PNG: %s", pngmsg);
    }
    png_set_read_fn(png, &m, mem_read);
    png_set_user_limits(png, 1u << 16, 1u << 16);
    png_read_info(png, info);
    if (w) *w = (int)png_get_image_width(png, info);
    if (h) *h = (int)png_get_image_height(png, info);
    png_textp text = NULL;
    int nt = 0;
    png_get_text(png, info, &text, &nt);
    for (int i = 0; i < nt && got < cap; i++) {
        keys[got] = strdup(text[i].key ? text[i].key : "");
        values[got] = strdup(text[i].text ? text[i].text : "");
        if (!keys[got] || !values[got]) {
            free(keys[got]);
            free(values[got]);
            break;
        }
        got++;
    }
    *n_text = got;
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

int sds_png_decode(const unsigned char *png, size_t len, int want_gray, unsigned char **pix, int *w, int *h,
                   char *err, size_t errcap)
{
    /* png_read.c's rule (the CLI's --init-image / --mask): what diffusers' load_image sees through
     * PIL (alpha dropped, not composited; no gamma), then PIL's convert("RGB") / convert("L") */
    *pix = NULL;
    if (len < 8 || png_sig_cmp((png_const_bytep)png, 0, 8))
        return fail(err, errcap, SDS_EINVAL, "not a PNG (no PNG signature)");
    if (len >= 24 && !memcmp(png + 12, "IHDR", 4)) { /* the size before decoding (a tiny PNG may be huge) */
        uint32_t iw = (uint32_t)png[16] << 24 | (uint32_t)png[17] << 16 | (uint32_t)png[18] << 8 | png[19];
        uint32_t ih = (uint32_t)png[20] << 24 | (uint32_t)png[21] << 16 | (uint32_t)png[22] << 8 | png[23];
        if (iw < 1 || ih < 1 || iw > 16384 || ih > 16384)
            return fail(err, errcap, SDS_EINVAL, "PNG of %ux%u: out of [1, 16384]", iw, ih);
    }
    int ch = 0, pw = 0, ph = 0;
    unsigned char *buf = NULL;
    char e[512];
    if (sdp_png_read_mem(png, len, "PNG", &buf, &pw, &ph, &ch, e, sizeof e))
        return fail(err, errcap, SDS_EINVAL, "unreadable %s", e);
    if (pw < 1 || ph < 1 || pw > 16384 || ph > 16384) {
        free(buf);
        return fail(err, errcap, SDS_EINVAL, "PNG of %dx%d: out of [1, 16384]", pw, ph);
    }
    if (sdp_pix_convert(&buf, pw, ph, &ch, want_gray ? 1 : 3)) {
        free(buf);
        return fail(err, errcap, SDS_ERROR, "out of memory");
    }
    *pix = buf;
    *w = pw;
    *h = ph;
    return 0;
}

/* A1111 modules/sd_vae_approx.py cheap_approximation's coefficients [latent channel][r, g, b]: SD 1.x/2.x,
 * SDXL, SD 3 (16 channels) and Flux (16 channels, ComfyUI's latent_rgb_factors) */
static const float PREVIEW_SD1[4][3] = {
    {0.298f, 0.207f, 0.208f}, {0.187f, 0.286f, 0.173f}, {-0.158f, 0.189f, 0.264f}, {-0.184f, -0.271f, -0.473f}};
static const float PREVIEW_SDXL[4][3] = {
    {0.3448f, 0.4168f, 0.4395f}, {-0.1953f, -0.0290f, 0.0250f}, {0.1074f, 0.0886f, -0.0163f},
    {-0.3730f, -0.2499f, -0.2088f}};
static const float PREVIEW_SD3[16][3] = {
    {-0.0645f, 0.0177f, 0.1052f}, {0.0028f, 0.0312f, 0.0650f},   {0.1848f, 0.0762f, 0.0360f},
    {0.0944f, 0.0360f, 0.0889f},  {0.0897f, 0.0506f, -0.0364f},  {-0.0020f, 0.1203f, 0.0284f},
    {0.0855f, 0.0118f, 0.0283f},  {-0.0539f, 0.0658f, 0.1047f},  {-0.0057f, 0.0116f, 0.0700f},
    {-0.0412f, 0.0281f, -0.0039f}, {0.1106f, 0.1171f, 0.1220f},  {-0.0248f, 0.0682f, -0.0481f},
    {0.0815f, 0.0846f, 0.1207f},  {-0.0120f, -0.0055f, -0.0867f}, {-0.0749f, -0.0634f, -0.0456f},
    {-0.1418f, -0.1457f, -0.1259f}};
static const float PREVIEW_FLUX[16][3] = {
    {-0.0404f, 0.0159f, 0.0609f}, {0.0043f, 0.0298f, 0.0850f},   {0.0328f, -0.0749f, -0.0503f},
    {-0.0245f, 0.0085f, 0.0549f}, {0.0966f, 0.0894f, 0.0530f},   {0.0035f, 0.0399f, 0.0123f},
    {0.0583f, 0.1184f, 0.1262f},  {-0.0191f, -0.0206f, -0.0306f}, {-0.0324f, 0.0055f, 0.1001f},
    {0.0955f, 0.0659f, -0.0545f}, {-0.0504f, 0.0231f, -0.0013f}, {0.0500f, -0.0008f, -0.0088f},
    {0.0982f, 0.0941f, 0.0976f},  {-0.1233f, -0.0280f, -0.0897f}, {-0.0005f, -0.0530f, -0.0020f},
    {-0.1273f, -0.0932f, -0.0680f}};

int sds_preview_rgb_family(const char *family, const float *latents, int lat_c, int lat_h, int lat_w,
                           unsigned char *rgb)
{
    const int flow = family && (!strcmp(family, "sd3") || !strcmp(family, "flux"));
    const float(*coef)[3] = !family ? PREVIEW_SD1
                            : !strcmp(family, "sdxl") ? PREVIEW_SDXL
                            : !strcmp(family, "sd3")  ? PREVIEW_SD3
                            : !strcmp(family, "flux") ? PREVIEW_FLUX : PREVIEW_SD1;
    if (lat_c != (flow ? 16 : 4) || lat_h < 1 || lat_w < 1 || !latents || !rgb) return SDS_EINVAL;
    const size_t plane = (size_t)lat_h * lat_w;
    for (size_t i = 0; i < plane; i++)
        for (int c = 0; c < 3; c++) {
            float v = 0;
            for (int k = 0; k < lat_c; k++) v += latents[k * plane + i] * coef[k][c];
            v = (v * 0.5f + 0.5f) * 255.0f; /* A1111: clamp((x + 1) / 2, 0, 1) * 255 */
            rgb[i * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5f);
        }
    return 0;
}

int sds_preview_rgb(const float *latents, int lat_c, int lat_h, int lat_w, unsigned char *rgb)
{
    return sds_preview_rgb_family(NULL, latents, lat_c, lat_h, lat_w, rgb);
}
