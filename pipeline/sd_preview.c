/* sd_preview.c — TAESD as onnx2cl-sd's fast decoder and per-step preview (see sd_preview.h). */
#define _POSIX_C_SOURCE 200809L
#include "sd_preview.h"
#include "json_file.h"

#include "platform.h" /* o2r_path_is_dir, o2r_path_is_file, o2r_now_ms */
#include "store.h"

#include <cjson/cJSON.h>

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t cap, const char *f, ...) O2R_PRINTF(3, 4);
static int fail(char *err, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(err, cap, f, ap);
    va_end(ap);
    return -1;
}

static const cJSON *jget(const cJSON *o, const char *name)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, name) : NULL;
}

/* "[a,b,c]" of dims into buf. */
static const char *dims_str(const int64_t *d, int rank, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < rank && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)d[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

/* How far the store s is from architecture arch (family "taesd"): the number of decoder keys
 * missing or of other dims plus the keys that are neither the architecture's nor the encoder's;
 * the first few described in why. */
static long distance(const struct o2s_store *s, const cJSON *arch, char *why, size_t cap)
{
    const cJSON *keys = jget(jget(arch, "keys"), "vae");
    long bad = 0;
    size_t n = 0;
    why[0] = 0;
    for (const cJSON *k = keys ? keys->child : NULL; k; k = k->next) {
        struct o2s_view v;
        int64_t want[O2S_MAX_RANK];
        int rank = cJSON_GetArraySize(k);
        for (int i = 0; i < rank && i < O2S_MAX_RANK; i++) want[i] = (int64_t)cJSON_GetArrayItem(k, i)->valuedouble;
        char a[96], b[96];
        if (o2s_find(s, O2S_VAE, k->string, &v) != 0) {
            if (bad++ < 3 && n < cap)
                n += (size_t)snprintf(why + n, cap - n, "%s'%s' %s missing", n ? ", " : "", k->string,
                                      dims_str(want, rank, a, sizeof a));
        } else if (v.rank != rank || memcmp(v.dims, want, sizeof *want * (size_t)rank) != 0) {
            if (bad++ < 3 && n < cap)
                n += (size_t)snprintf(why + n, cap - n, "%s'%s' is %s, expected %s", n ? ", " : "", k->string,
                                      dims_str(v.dims, v.rank, a, sizeof a), dims_str(want, rank, b, sizeof b));
        }
    }
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++)
        for (size_t i = 0, cnt = o2s_count(s, (enum o2s_component)c); i < cnt; i++) {
            struct o2s_view v;
            o2s_get(s, (enum o2s_component)c, i, &v);
            if (c == O2S_VAE && (jget(keys, v.key) || strncmp(v.key, "encoder.layers.", 15) == 0)) continue;
            if (bad++ < 3 && n < cap)
                n += (size_t)snprintf(why + n, cap - n, "%s'%s' (%s) is not TAESD's", n ? ", " : "", v.orig_key,
                                      o2s_component_name((enum o2s_component)c));
        }
    struct o2s_info info;
    o2s_info(s, &info);
    for (size_t i = 0; i < info.unknown; i++)
        if (bad++ < 3 && n < cap)
            n += (size_t)snprintf(why + n, cap - n, "%s'%s' is not TAESD's", n ? ", " : "", o2s_unknown_key(s, i));
    return bad;
}

int sdv_taesd_prepare(const struct sde_options *o, const char *path, int lat_c, int lat_h, int lat_w,
                      struct sdv_taesd_files *f, char *err, size_t errcap)
{
    memset(f, 0, sizeof *f);
    char arch_dir[PATH_MAX];
    if (o->arch_dir) snprintf(arch_dir, sizeof arch_dir, "%s", o->arch_dir);
    else if (sde_default_arch_dir(arch_dir, sizeof arch_dir))
        return fail(err, errcap, "no architecture folder found (installed share/onnx2cl/arch); give --arch-dir DIR");
    if (o2r_path_is_dir(path)) { /* madebyollin/taesd as downloaded: config.json + diffusion_pytorch_model.safetensors */
        snprintf(f->file, sizeof f->file, "%s/diffusion_pytorch_model.safetensors", path);
        if (!o2r_path_is_file(f->file))
            return fail(err, errcap, "--taesd %s: a folder without diffusion_pytorch_model.safetensors (TAESD as "
                        "diffusers publishes it, madebyollin/taesd; or give taesd_decoder.safetensors)", path);
    } else if (o2r_path_is_file(path)) {
        snprintf(f->file, sizeof f->file, "%s", path);
    } else {
        return fail(err, errcap, "--taesd %s: no such file or folder", path);
    }
    char e[1536];
    struct o2s_store *s = o2s_open(f->file, NULL, e, sizeof e);
    if (!s) return fail(err, errcap, "--taesd %s: %s", path, e);
    int rc = -1;
    const char *lora = o2s_is_lora(s);
    if (lora) {
        fail(err, errcap, "--taesd %s: a LoRA file (%s naming, e.g. '%s'), not TAESD (taesd_decoder.safetensors "
             "or a diffusers AutoencoderTiny folder)", path, lora, o2s_unknown_key(s, 0) ? o2s_unknown_key(s, 0) : "?");
        o2s_close(s);
        return -1;
    }
    /* the installed architectures of family "taesd": the first at distance 0, else the closest */
    DIR *d = opendir(arch_dir);
    if (!d) {
        o2s_close(s);
        return fail(err, errcap, "architecture folder %s: cannot be read", arch_dir);
    }
    long best = -1;
    char best_name[256] = "", best_why[512] = "";
    cJSON *arch = NULL;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        char p[PATH_MAX + 300];
        snprintf(p, sizeof p, "%s/%s/arch.json", arch_dir, de->d_name);
        if (!o2r_path_is_file(p)) continue;
        cJSON *a = sdp_json_file(p, e, sizeof e);
        const char *fam = a ? cJSON_GetStringValue(jget(a, "family")) : NULL;
        if (!fam || strcmp(fam, "taesd") != 0) {
            cJSON_Delete(a);
            continue;
        }
        char why[512];
        long dist = distance(s, a, why, sizeof why);
        if (best < 0 || dist < best || (dist == best && strcmp(de->d_name, best_name) < 0)) {
            best = dist;
            snprintf(best_name, sizeof best_name, "%s", de->d_name);
            snprintf(best_why, sizeof best_why, "%s", why);
            cJSON_Delete(arch);
            arch = a;
        } else {
            cJSON_Delete(a);
        }
    }
    closedir(d);
    if (best < 0) {
        fail(err, errcap, "architecture folder %s: no TAESD architecture (family \"taesd\")", arch_dir);
        goto out;
    }
    if (best > 0) {
        struct o2s_info info;
        o2s_info(s, &info);
        fail(err, errcap, "--taesd %s: not a TAESD decoder (%zu tensors; closest architecture %s: %ld keys differ: "
             "%s%s)", f->file, info.tensors, best_name, best, best_why, best > 3 ? ", ..." : "");
        goto out;
    }
    const cJSON *v = jget(jget(arch, "configs"), "vae");
    int lc = (int)(cJSON_IsNumber(jget(v, "latent_channels")) ? jget(v, "latent_channels")->valuedouble : 4);
    int up = cJSON_IsNumber(jget(v, "upsampling_scaling_factor")) ? (int)jget(v, "upsampling_scaling_factor")->valuedouble : 2;
    int nb = cJSON_GetArraySize(jget(v, "num_decoder_blocks"));
    int factor = 1;
    for (int i = 1; i < nb; i++) factor *= up;
    snprintf(f->arch, sizeof f->arch, "%s", best_name);
    if (lat_c <= 0) { /* the check alone */
        rc = 0;
        goto out;
    }
    if (lat_c != lc) {
        fail(err, errcap, "--taesd %s: TAESD decodes %d latent channels, the checkpoint's latents have %d", path, lc,
             lat_c);
        rc = -2;
        goto out;
    }
    f->img_w = lat_w * factor;
    f->img_h = lat_h * factor;
    o2s_close(s);
    s = NULL;
    char ap[PATH_MAX + 256];
    snprintf(ap, sizeof ap, "%s/%s", arch_dir, best_name);
    if (!o->quiet)
        fprintf(stderr, "onnx2cl-sd: --taesd %s: architecture %s (decoder keys and dims equal)\n", f->file, best_name);
    rc = sde_prepare_extra(o, f->file, ap, f->img_w, f->img_h, 2, f->program, f->weights, err, errcap);
out:
    cJSON_Delete(arch);
    o2s_close(s);
    return rc;
}

int sdv_taesd_load(struct o2r_ctx *ctx, const struct sdv_taesd_files *f, struct sdv_taesd *t, char *err,
                   size_t errcap)
{
    memset(t, 0, sizeof *t);
    if (sdp_model_load(ctx, f->program, f->weights, &t->dec, err, errcap)) return -1;
    const struct o2r_model_desc *d = t->dec.desc;
    const struct o2r_io *i = d->n_inputs == 1 ? &d->inputs[0] : NULL, *o = d->n_outputs == 1 ? &d->outputs[0] : NULL;
    if (!i || !o || i->rank != 4 || o->rank != 4 || i->dtype != O2R_F32 || o->dtype != O2R_F32 || i->dims[0] != 1 ||
        o->dims[0] != 1 || o->dims[1] != 3) {
        sdv_taesd_close(t);
        return fail(err, errcap, "%s: not a TAESD decoder program (one float32 input [1,C,h,w], one float32 output "
                    "[1,3,H,W])", f->program);
    }
    t->lat_c = (int)i->dims[1], t->lat_h = (int)i->dims[2], t->lat_w = (int)i->dims[3];
    t->img_h = (int)o->dims[2], t->img_w = (int)o->dims[3];
    t->in = calloc(1, i->nbytes);
    t->out = calloc(1, o->nbytes);
    if (!t->in || !t->out) {
        sdv_taesd_close(t);
        return fail(err, errcap, "out of memory");
    }
    return 0;
}

int sdv_taesd_decode(struct sdv_taesd *t, const float *latents, int n, float *image, char *err, size_t errcap)
{
    double t0 = o2r_now_ms();
    size_t nl = (size_t)t->lat_c * t->lat_h * t->lat_w, ni = (size_t)3 * t->img_h * t->img_w;
    for (int b = 0; b < n; b++) {
        memcpy(t->in, latents + (size_t)b * nl, nl * sizeof(float)); /* scaling_factor 1.0: as they are */
        const void *in[1] = {t->in};
        void *out[1] = {t->out};
        if (o2r_model_run(t->dec.m, in, out) != O2R_OK)
            return fail(err, errcap, "%s: %s", t->dec.path, o2r_ctx_last_error(t->dec.ctx));
        const float *x = t->out;
        float *y = image + (size_t)b * ni;
        for (size_t k = 0; k < ni; k++) { /* VaeImageProcessor.denormalize: x / 2 + 0.5 clamped */
            float v = x[k] / 2.0f + 0.5f;
            y[k] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
    }
    t->seconds += (o2r_now_ms() - t0) * 1e-3;
    return 0;
}

void sdv_taesd_close(struct sdv_taesd *t)
{
    if (!t) return;
    sdp_model_close(&t->dec);
    free(t->in);
    free(t->out);
    t->in = t->out = NULL;
}
