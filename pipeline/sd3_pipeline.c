/* sd3_pipeline.c — StableDiffusion3Pipeline's txt2img loop over compiled models (sd3_pipeline.h).
 * Linked into onnx2cl-sd with the T5 tokenizer (t5_tokenizer.h, libsentencepiece); not part of
 * libonnx2cl-sd (whose users do not link libstdc++).
 */
#include "sd3_pipeline.h"
#include "clip_tokenizer.h"
#include "json_file.h"

#include <cjson/cJSON.h>
#include "torch_rng.h"
#include "platform.h" /* o2r_now_ms */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXIO 16
#define CLIP_LEN 77

static double now_s(void) { return o2r_now_ms() * 1e-3; }

static int find_io(const struct o2r_io *io, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(io[i].name, name)) return (int)i;
    return -1;
}

static int is_float(int32_t dt) { return dt == O2R_F32 || dt == O2R_F16; }

static int fail(char *err, size_t cap, const char *fmt, const char *path, const char *what)
{
    snprintf(err, cap, fmt, path, what);
    return -1;
}

/* A CLIP encoder with projection: input_ids [1,77] int -> text_embeds [1,P] and
 * penultimate_hidden_state [1,77,H]. */
static int check_clip(const struct sdp_model *m, const struct sdp_tokenizer *tok, int *out, int *pool, int *hidden,
                      int *proj, char *err, size_t errcap)
{
    const struct o2r_model_desc *d = m->desc;
    if (d->n_inputs != 1 || (d->inputs[0].dtype != O2R_I64 && d->inputs[0].dtype != O2R_I32) ||
        d->inputs[0].rank != 2 || d->inputs[0].dims[0] != 1 || d->inputs[0].dims[1] != CLIP_LEN)
        return fail(err, errcap, "%s: %s", m->path,
                    "expected one input input_ids int64 [1,77] (compile it with --shape input_ids=1,77)");
    *out = find_io(d->outputs, d->n_outputs, "penultimate_hidden_state");
    *pool = find_io(d->outputs, d->n_outputs, "text_embeds");
    if (*out < 0 || *pool < 0)
        return fail(err, errcap, "%s: %s", m->path,
                    "no penultimate_hidden_state or text_embeds output (SD3's CLIP encoders are exported as "
                    "CLIPTextModelWithProjection with hidden_states[-2]: models/make_sd3_refs.py)");
    const struct o2r_io *o = &d->outputs[*out], *pl = &d->outputs[*pool];
    if (o->rank != 3 || !is_float(o->dtype) || o->dims[0] != 1 || o->dims[1] != CLIP_LEN || pl->rank != 2 ||
        !is_float(pl->dtype) || pl->dims[0] != 1)
        return fail(err, errcap, "%s: %s", m->path, "outputs not [1,77,H] and [1,P] float");
    *hidden = (int)o->dims[2];
    *proj = (int)pl->dims[1];
    (void)tok;
    return 0;
}

int sdp_sd3_check(struct sdp_sd3 *p, char *err, size_t errcap)
{
    if (!p->te.desc || !p->te2.desc || !p->dit.desc || !p->vae.desc || !p->tok || !p->tok2 || !p->sched) {
        snprintf(err, errcap, "SD3: text_encoder, text_encoder_2, transformer, vae_decoder, both CLIP tokenizers "
                 "and the scheduler are needed");
        return -1;
    }
    if (p->sched->kind != SDP_SCHED_FLOW_EULER) {
        snprintf(err, errcap, "SD3: the scheduler must be flow matching (FlowMatchEulerDiscreteScheduler: flow_euler), "
                 "not %s", sdp_sched_kind_name(p->sched->kind));
        return -1;
    }
    if (check_clip(&p->te, p->tok, &p->te_out, &p->te_pool, &p->te_hidden, &p->te_proj, err, errcap) ||
        check_clip(&p->te2, p->tok2, &p->te2_out, &p->te2_pool, &p->te2_hidden, &p->te2_proj, err, errcap))
        return -1;
    const struct o2r_model_desc *d = p->dit.desc;
    p->d_hs = find_io(d->inputs, d->n_inputs, "hidden_states");
    p->d_ehs = find_io(d->inputs, d->n_inputs, "encoder_hidden_states");
    p->d_pool = find_io(d->inputs, d->n_inputs, "pooled_projections");
    p->d_t = find_io(d->inputs, d->n_inputs, "timestep");
    if (p->d_hs < 0 || p->d_ehs < 0 || p->d_pool < 0 || p->d_t < 0 || d->n_outputs != 1)
        return fail(err, errcap, "%s: %s", p->dit.path,
                    "does not look like an SD3 transformer: expected inputs hidden_states, encoder_hidden_states, "
                    "pooled_projections, timestep and one output");
    const struct o2r_io *hs = &d->inputs[p->d_hs], *ehs = &d->inputs[p->d_ehs], *pool = &d->inputs[p->d_pool],
                        *ts = &d->inputs[p->d_t], *out = &d->outputs[0];
    if (hs->rank != 4 || ehs->rank != 3 || pool->rank != 2 || !is_float(hs->dtype) || !is_float(ehs->dtype) ||
        !is_float(pool->dtype) || !is_float(ts->dtype) || out->rank != 4 || !is_float(out->dtype))
        return fail(err, errcap, "%s: %s", p->dit.path,
                    "inputs not hidden_states [B,C,h,w], encoder_hidden_states [B,S,D], pooled_projections [B,P] "
                    "float");
    p->d_batch = (int)hs->dims[0];
    p->lat_c = (int)hs->dims[1], p->lat_h = (int)hs->dims[2], p->lat_w = (int)hs->dims[3];
    p->ctx_len = (int)ehs->dims[1], p->joint_dim = (int)ehs->dims[2];
    char msg[512];
    if ((p->d_batch != 1 && p->d_batch != 2) || ehs->dims[0] != p->d_batch || pool->dims[0] != p->d_batch ||
        (ts->rank == 1 && ts->dims[0] != p->d_batch && ts->dims[0] != 1) || out->dims[0] != p->d_batch ||
        out->dims[1] != p->lat_c || out->dims[2] != p->lat_h || out->dims[3] != p->lat_w) {
        snprintf(msg, sizeof msg, "batch %d: every input and the output must have it (1, or 2: guidance in one run), "
                 "and the output the hidden_states' shape", p->d_batch);
        return fail(err, errcap, "%s: %s", p->dit.path, msg);
    }
    if (pool->dims[1] != p->te_proj + p->te2_proj) {
        snprintf(msg, sizeof msg, "pooled_projections width %lld, but the CLIP encoders' text_embeds are %d + %d",
                 (long long)pool->dims[1], p->te_proj, p->te2_proj);
        return fail(err, errcap, "%s: %s", p->dit.path, msg);
    }
    if (p->joint_dim < p->te_hidden + p->te2_hidden || p->ctx_len <= CLIP_LEN) {
        snprintf(msg, sizeof msg, "encoder_hidden_states [%d,%d]: expected [77 + T5 tokens, D] with D >= %d + %d (the "
                 "CLIP states, zero-padded to D)", p->ctx_len, p->joint_dim, p->te_hidden, p->te2_hidden);
        return fail(err, errcap, "%s: %s", p->dit.path, msg);
    }
    p->t5_len = p->ctx_len - CLIP_LEN, p->t5_dim = p->joint_dim;
    if (p->te3.desc) {
        const struct o2r_model_desc *t = p->te3.desc;
        if (!p->t5) {
            snprintf(err, errcap, "%s: a T5 encoder without its tokenizer (tokenizer_3/spiece.model)", p->te3.path);
            return -1;
        }
        if (t->n_inputs != 1 || (t->inputs[0].dtype != O2R_I64 && t->inputs[0].dtype != O2R_I32) ||
            t->inputs[0].rank != 2 || t->inputs[0].dims[0] != 1 || t->n_outputs < 1 || t->outputs[0].rank != 3 ||
            !is_float(t->outputs[0].dtype) || t->inputs[0].dims[1] != p->t5_len || t->outputs[0].dims[1] != p->t5_len ||
            t->outputs[0].dims[2] != p->t5_dim) {
            snprintf(msg, sizeof msg, "expected input_ids [1,%d] int64 -> last_hidden_state [1,%d,%d] (the "
                     "transformer's context is 77 + %d tokens of width %d)", p->t5_len, p->t5_len, p->t5_dim, p->t5_len,
                     p->t5_dim);
            return fail(err, errcap, "%s: %s", p->te3.path, msg);
        }
    }
    const struct o2r_model_desc *v = p->vae.desc;
    p->v_in = find_io(v->inputs, v->n_inputs, "latent_sample");
    if (p->v_in < 0) p->v_in = 0;
    const struct o2r_io *vi = &v->inputs[p->v_in], *vo = &v->outputs[0];
    if (vi->rank != 4 || vi->dims[0] != 1 || vi->dims[1] != p->lat_c || vi->dims[2] != p->lat_h ||
        vi->dims[3] != p->lat_w || vo->rank != 4 || vo->dims[1] != 3) {
        snprintf(msg, sizeof msg, "expected latent_sample [1,%d,%d,%d] (the transformer's latents) -> sample "
                 "[1,3,H,W]", p->lat_c, p->lat_h, p->lat_w);
        return fail(err, errcap, "%s: %s", p->vae.path, msg);
    }
    p->img_h = (int)vo->dims[2], p->img_w = (int)vo->dims[3];
    return 0;
}

/* Runs model m once on host buffers. */
static int run(struct sdp_model *m, void **in, void **out, double *acc, int *runs, char *err, size_t errcap)
{
    if (sdp_model_ready(m, err, errcap)) return -1; /* an offloaded model: on the device now */
    double t0 = now_s();
    if (o2r_model_run(m->m, (const void *const *)in, out) != O2R_OK) {
        snprintf(err, errcap, "%s: %s", m->path, o2r_ctx_last_error(m->ctx));
        return -1;
    }
    if (acc) *acc += now_s() - t0;
    if (runs) (*runs)++;
    return 0;
}

static int alloc_io(const struct o2r_model_desc *d, void **in, void **out)
{
    if (d->n_inputs > MAXIO || d->n_outputs > MAXIO) return -1;
    for (uint32_t i = 0; i < d->n_inputs; i++)
        if (!(in[i] = calloc(1, d->inputs[i].nbytes ? d->inputs[i].nbytes : 1))) return -1;
    for (uint32_t i = 0; i < d->n_outputs; i++)
        if (!(out[i] = calloc(1, d->outputs[i].nbytes ? d->outputs[i].nbytes : 1))) return -1;
    return 0;
}

static void free_io(const struct o2r_model_desc *d, void **in, void **out)
{
    for (uint32_t i = 0; i < d->n_inputs && i < MAXIO; i++) free(in[i]);
    for (uint32_t i = 0; i < d->n_outputs && i < MAXIO; i++) free(out[i]);
}

static void put_ids(void *dst, int32_t dt, const int64_t *ids, int n)
{
    for (int j = 0; j < n; j++) {
        if (dt == O2R_I64) ((int64_t *)dst)[j] = ids[j];
        else ((int32_t *)dst)[j] = (int32_t)ids[j];
    }
}

/* Text encoder m on one row of n ids: output o1 (n1 floats) into d1 and, when d2, output o2 (n2
 * floats) into d2. */
static int encode_ids(struct sdp_model *m, const int64_t *ids, int n, int o1, float *d1, size_t n1, int o2, float *d2,
                      size_t n2, struct sdp_timings *tm, char *err, size_t errcap)
{
    const struct o2r_model_desc *d = m->desc;
    void *in[MAXIO] = {0}, *o[MAXIO] = {0};
    int rc = -1;
    if (alloc_io(d, in, o)) snprintf(err, errcap, "%s: out of memory", m->path);
    else {
        put_ids(in[0], d->inputs[0].dtype, ids, n);
        if (!run(m, in, o, &tm->text_encoder, &tm->text_runs, err, errcap)) {
            sdp_get_floats(d1, d->outputs[o1].dtype, o[o1], n1);
            if (d2) sdp_get_floats(d2, d->outputs[o2].dtype, o[o2], n2);
            rc = 0;
        }
    }
    free_io(d, in, o);
    return rc;
}

/* One conditioning row: ctx [ctx_len, joint_dim] and pooled [te_proj + te2_proj] for text. */
static int encode_text(struct sdp_sd3 *p, const char *text, float *ctx, float *pooled, int *n_tokens,
                       struct sdp_timings *tm, char *err, size_t errcap)
{
    int64_t ids[CLIP_LEN];
    int rc = -1, full;
    memset(ctx, 0, (size_t)p->ctx_len * p->joint_dim * sizeof *ctx); /* the CLIP part's padding, T5's absence */
    for (int e = 0; e < 2; e++) {
        const int width = e ? p->te2_hidden : p->te_hidden, off = e ? p->te_hidden : 0;
        if (sdp_tokenizer_encode(e ? p->tok2 : p->tok, text, ids, CLIP_LEN, &full, err, errcap)) return -1;
        if (!e && n_tokens) *n_tokens = full;
        float *z = malloc((size_t)CLIP_LEN * width * sizeof *z);
        if (!z) return snprintf(err, errcap, "out of memory"), -1;
        rc = encode_ids(e ? &p->te2 : &p->te, ids, CLIP_LEN, e ? p->te2_out : p->te_out, z, (size_t)CLIP_LEN * width,
                        e ? p->te2_pool : p->te_pool, pooled + (e ? p->te_proj : 0),
                        (size_t)(e ? p->te2_proj : p->te_proj), tm, err, errcap);
        for (int t = 0; !rc && t < CLIP_LEN; t++)
            memcpy(ctx + (size_t)t * p->joint_dim + off, z + (size_t)t * width, (size_t)width * sizeof *z);
        free(z);
        if (rc) return -1;
    }
    if (p->te3.desc) { /* T5: last_hidden_state after the 77 CLIP tokens */
        int64_t *t5ids = malloc((size_t)p->t5_len * sizeof *t5ids);
        rc = !t5ids ? (snprintf(err, errcap, "out of memory"), -1)
             : sdp_t5_encode(p->t5, text, t5ids, p->t5_len, &full, err, errcap)
                 ? -1
                 : encode_ids(&p->te3, t5ids, p->t5_len, 0, ctx + (size_t)CLIP_LEN * p->joint_dim,
                              (size_t)p->t5_len * p->t5_dim, 0, NULL, 0, tm, err, errcap);
        free(t5ids);
        if (rc) return -1;
    }
    return 0;
}

/* latents [nl] / scaling + shift (in place) -> the VAE decoder -> image [ni] / 2 + 0.5, clamped. */
static int vae_decode(struct sdp_model *vae, int v_in, float *lat, size_t nl, float scaling, float shift, float *image,
                      size_t ni, struct sdp_timings *tm, char *err, size_t errcap)
{
    const struct o2r_model_desc *v = vae->desc;
    void *vin[MAXIO] = {0}, *vout[MAXIO] = {0};
    int rc = -1;
    if (alloc_io(v, vin, vout)) snprintf(err, errcap, "out of memory");
    else {
        for (size_t k = 0; k < nl; k++) lat[k] = lat[k] / scaling + shift;
        sdp_put_floats(vin[v_in], v->inputs[v_in].dtype, lat, nl);
        if (!run(vae, vin, vout, &tm->vae, NULL, err, errcap)) {
            sdp_get_floats(image, v->outputs[0].dtype, vout[0], ni);
            for (size_t k = 0; k < ni; k++) {
                float x = image[k] / 2 + 0.5f;
                image[k] = x < 0 ? 0 : x > 1 ? 1 : x;
            }
            rc = 0;
        }
    }
    free_io(v, vin, vout);
    return rc;
}

/* After step i of n: the progress line and callback (1: cancel). */
static int step_done(const struct sdp_params *prm, int i, int n, float t, double t_loop, const float *lat, int c, int h,
                     int w)
{
    const double el = now_s() - t_loop;
    if (!prm->quiet) fprintf(stderr, "  step %d/%d  t=%.1f  %.2f s/step\n", i + 1, n, t, el / (i + 1));
    if (!prm->progress) return 0;
    struct sdp_progress pr = {.step = i + 1, .total = n, .elapsed = el, .eta = el / (i + 1) * (n - i - 1),
                              .latents = lat, .lat_c = c, .lat_h = h, .lat_w = w, .batch = 1};
    return prm->progress(&pr, prm->progress_user) != 0;
}

/* A1111's NaN check ("A tensor with all NaNs was produced"): non-finite latents after the loop mean broken
 * weights (a corrupt file) or an overflow; refused rather than decoded to a black image. */
static int finite_or_fail(const float *x, size_t n, const char *what, char *err, size_t errcap)
{
    size_t bad = 0;
    for (size_t k = 0; k < n; k++) bad += !isfinite(x[k]);
    if (!bad) return 0;
    snprintf(err, errcap, "%s: %zu of %zu latent values are NaN or infinite after the loop (corrupt weights, or an "
             "overflow of float16 storage: try --weights-dtype f32)", what, bad, n);
    return -1;
}

/* The loops' common refusals (one image: txt2img, or img2img with a VAE encoder). */
static int one_image_only(const char *what, const struct sdp_params *prm, const struct sdp_model *venc, char *err,
                          size_t errcap)
{
    if (prm->batch > 1 || prm->latents || prm->emphasis || prm->guidance_rescale > 0) {
        snprintf(err, errcap, "%s: batches, --latents, A1111 emphasis and guidance rescale are not ported yet "
                 "(txt2img, img2img and inpainting of one image)", what);
        return -1;
    }
    if (prm->mask && !prm->init_image) {
        snprintf(err, errcap, "%s: inpainting needs the init image as well as the mask", what);
        return -1;
    }
    if (prm->init_image && !venc->desc) {
        snprintf(err, errcap, "%s: img2img needs the VAE encoder (none loaded)", what);
        return -1;
    }
    if (prm->init_image && !(prm->strength > 0 && prm->strength <= 1)) {
        snprintf(err, errcap, "%s: strength %g: not in (0, 1]", what, prm->strength);
        return -1;
    }
    return 0;
}

/* Inpainting's latent mask (the flow Inpaint pipelines' prepare_mask_latents): the image mask [H*W] in [0,1]
 * binarized at 0.5 (mask_processor do_binarize), sampled nearest at the latent grid (F.interpolate, mode
 * nearest: pixel (y f, x f)), repeated over the c channels: m [c*h*w], 1 = repaint. */
static void latent_mask(const float *mask, int img_w, int img_h, int c, int h, int w, float *m)
{
    const int fy = img_h / h, fx = img_w / w;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const float v = mask[(size_t)y * fy * img_w + (size_t)x * fx] < 0.5f ? 0.0f : 1.0f;
            for (int k = 0; k < c; k++) m[((size_t)k * h + y) * w + x] = v;
        }
}

/* Inpainting's step end (SD3 / Flux Inpaint pipelines): lat = (1 - m) init_latents_proper + m lat, where
 * init_latents_proper is the image latents noised to the next step (scale_noise at i + 1), or the image
 * latents themselves after the last step; tmp [n] scratch. */
static void inpaint_blend(struct sdp_scheduler *sched, int i, int n_steps, const float *ilat, const float *noise,
                          const float *m, float *lat, float *tmp, size_t n)
{
    const float *proper = ilat;
    if (i + 1 < n_steps) {
        sdp_sched_add_noise(sched, i + 1, ilat, noise, tmp, n);
        proper = tmp;
    }
    for (size_t k = 0; k < n; k++) lat[k] = (1.0f - m[k]) * proper[k] + m[k] * lat[k];
}

/* The flow pipelines' get_timesteps: init_timestep = min(steps x strength, steps) (a float),
 * t_start = int(max(steps - init_timestep, 0)). */
int sdp_flow_img2img_t_start(int steps, double strength)
{
    double init = steps * strength < steps ? steps * strength : steps;
    double d = steps - init;
    return d > 0 ? (int)d : 0;
}

/* img2img's start (StableDiffusion3Img2ImgPipeline / FluxImg2ImgPipeline.prepare_latents, and their
 * Inpaint pipelines'): the init image [3,H,W] in [0,1] -> 2x - 1 -> the VAE encoder -> latent_dist.sample(g)
 * = mean + exp(0.5 clamp(logvar, -30, 20)) randn -> (x - shift) * scaling = the image latents [nl] (into
 * ilat when not NULL); then noise = randn(g) [nl] (into noise_out when not NULL) and x0 = scale_noise at
 * step t0 (sigma noise + (1 - sigma) x0). */
static int img2img_start(struct sdp_model *venc, struct sdp_scheduler *sched, int t0, const float *img, size_t ni,
                         size_t nl, float scaling, float shift, struct sdp_rng *g, float *x0, float *ilat,
                         float *noise_out, struct sdp_timings *tm, char *err, size_t errcap)
{
    const struct o2r_model_desc *d = venc->desc;
    void *in[MAXIO] = {0}, *o[MAXIO] = {0};
    float *x = malloc(ni * sizeof *x), *par = malloc(2 * nl * sizeof *par), *noise = malloc(nl * sizeof *noise);
    int rc = -1;
    if (!x || !par || !noise || alloc_io(d, in, o)) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    if (d->n_inputs != 1 || d->n_outputs < 1 || d->inputs[0].nbytes != ni * o2r_dtype_size(d->inputs[0].dtype) ||
        d->outputs[0].nbytes != 2 * nl * o2r_dtype_size(d->outputs[0].dtype)) {
        snprintf(err, errcap, "%s: the VAE encoder does not take the %zu image values or give 2 x %zu latent ones",
                 venc->path, ni, nl);
        goto done;
    }
    for (size_t k = 0; k < ni; k++) x[k] = 2.0f * img[k] - 1.0f;
    sdp_put_floats(in[0], d->inputs[0].dtype, x, ni);
    if (run(venc, in, o, &tm->vae_encoder, NULL, err, errcap)) goto done;
    sdp_get_floats(par, d->outputs[0].dtype, o[0], 2 * nl);
    sdp_rng_randn(g, noise, nl); /* latent_dist.sample(generator) */
    for (size_t k = 0; k < nl; k++) {
        float lv = par[nl + k];
        lv = lv < -30.0f ? -30.0f : lv > 20.0f ? 20.0f : lv;
        const float smp = par[k] + expf(0.5f * lv) * noise[k];
        x0[k] = (smp - shift) * scaling;
    }
    if (ilat) memcpy(ilat, x0, nl * sizeof *x0);
    sdp_rng_randn(g, noise, nl); /* randn_tensor(shape, generator) */
    if (noise_out) memcpy(noise_out, noise, nl * sizeof *noise);
    sdp_sched_add_noise(sched, t0, x0, noise, x0, nl);
    rc = 0;
done:
    free_io(d, in, o);
    free(x);
    free(par);
    free(noise);
    return rc;
}

int sdp_sd3_generate(struct sdp_sd3 *p, const struct sdp_params *prm, float *image, int *n_tokens,
                     struct sdp_timings *tm_out, char *err, size_t errcap)
{
    struct sdp_timings tm0 = {0}, *tm = tm_out ? tm_out : &tm0;
    memset(tm, 0, sizeof *tm);
    if (one_image_only("SD3", prm, &p->venc, err, errcap)) return -1;
    const double t_start = now_s();
    const int cfg_on = prm->cfg > 1.0f, rows = cfg_on ? 2 : 1;
    const size_t nl = (size_t)p->lat_c * p->lat_h * p->lat_w, nctx = (size_t)p->ctx_len * p->joint_dim;
    const int npool = p->te_proj + p->te2_proj;
    float *ctx = malloc((size_t)rows * nctx * sizeof *ctx), *pooled = malloc((size_t)rows * npool * sizeof *pooled);
    float *lat = malloc(nl * sizeof *lat), *pred = malloc((size_t)rows * nl * sizeof *pred);
    float *inp = prm->mask ? malloc(4 * nl * sizeof *inp) : NULL; /* inpainting: image latents, noise, mask, tmp */
    void *in[MAXIO] = {0}, *o[MAXIO] = {0};
    int rc = -1;
    const struct o2r_model_desc *d = p->dit.desc;
    if (!ctx || !pooled || !lat || !pred || (prm->mask && !inp) || alloc_io(d, in, o)) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    /* conditioning rows: [uncond, cond] with guidance (diffusers' order), [cond] without */
    if (prm->cancel && *prm->cancel) goto cancelled;
    if (encode_text(p, prm->prompt, ctx + (size_t)(rows - 1) * nctx, pooled + (size_t)(rows - 1) * npool, n_tokens,
                    tm, err, errcap))
        goto done;
    if (cfg_on && encode_text(p, prm->negative ? prm->negative : "", ctx, pooled, NULL, tm, err, errcap)) goto done;
    sdp_model_park(&p->te); /* --offload: each stage's models leave the device when it is done */
    sdp_model_park(&p->te2);
    sdp_model_park(&p->te3);
    /* timesteps: the class's schedule (mu from the image size when the config shifts dynamically) */
    {
        double mu = p->sched->dyn_shift ? sdp_sched_flow_mu(p->sched, p->img_w, p->img_h) : NAN;
        if (sdp_sched_set_timesteps_flow(p->sched, prm->steps, NULL, mu, err, errcap)) goto done;
    }
    struct sdp_rng g;
    sdp_rng_seed(&g, prm->seed);
    const int n = p->sched->n_steps, t0 = prm->init_image ? sdp_flow_img2img_t_start(prm->steps, prm->strength) : 0;
    if (t0 >= n) {
        snprintf(err, errcap, "strength %g with %d steps: no denoising step left (diffusers refuses it too)",
                 prm->strength, prm->steps);
        goto done;
    }
    if (prm->init_image) {
        if (prm->cancel && *prm->cancel) goto cancelled;
        if (img2img_start(&p->venc, p->sched, t0, prm->init_image, (size_t)3 * p->img_h * p->img_w, nl,
                          p->scaling_factor, p->shift_factor, &g, lat, inp, inp ? inp + nl : NULL, tm, err, errcap))
            goto done;
        if (inp) { /* StableDiffusion3InpaintPipeline: strength 1 starts from the noise itself */
            latent_mask(prm->mask, p->img_w, p->img_h, p->lat_c, p->lat_h, p->lat_w, inp + 2 * nl);
            if (prm->strength >= 1.0) memcpy(lat, inp + nl, nl * sizeof *lat);
        }
    } else {
        sdp_rng_randn(&g, lat, nl); /* randn_tensor(shape, generator); init_noise_sigma 1 */
    }
    sdp_model_park(&p->venc);
    const double t_loop = now_s();
    for (int i = t0; i < n; i++) {
        const float t = sdp_sched_timestep(p->sched, i);
        for (int r0 = 0; r0 < rows; r0 += p->d_batch) {
            if (prm->cancel && *prm->cancel) goto cancelled;
            for (int b = 0; b < p->d_batch; b++) { /* a batch-2 program without guidance: the row twice */
                const int r = r0 + b < rows ? r0 + b : r0;
                const struct o2r_io *hs = &d->inputs[p->d_hs], *eh = &d->inputs[p->d_ehs], *pl = &d->inputs[p->d_pool];
                sdp_put_floats((char *)in[p->d_hs] + (size_t)b * nl * o2r_dtype_size(hs->dtype), hs->dtype, lat, nl);
                sdp_put_floats((char *)in[p->d_ehs] + (size_t)b * nctx * o2r_dtype_size(eh->dtype), eh->dtype,
                               ctx + (size_t)r * nctx, nctx);
                sdp_put_floats((char *)in[p->d_pool] + (size_t)b * npool * o2r_dtype_size(pl->dtype), pl->dtype,
                               pooled + (size_t)r * npool, (size_t)npool);
            }
            const struct o2r_io *ts = &d->inputs[p->d_t];
            for (uint64_t k = 0; k < (ts->nbytes / o2r_dtype_size(ts->dtype)); k++)
                sdp_put_floats((char *)in[p->d_t] + k * o2r_dtype_size(ts->dtype), ts->dtype, &t, 1);
            if (run(&p->dit, in, o, &tm->unet_total, &tm->unet_runs, err, errcap)) goto done;
            for (int b = 0; b < p->d_batch && r0 + b < rows; b++)
                sdp_get_floats(pred + (size_t)(r0 + b) * nl, d->outputs[0].dtype,
                               (const char *)o[0] + (size_t)b * nl * o2r_dtype_size(d->outputs[0].dtype), nl);
        }
        double ts0 = now_s();
        if (cfg_on) /* noise_pred_uncond + guidance_scale * (noise_pred_text - noise_pred_uncond) */
            for (size_t k = 0; k < nl; k++) pred[k] = pred[k] + prm->cfg * (pred[nl + k] - pred[k]);
        if (sdp_sched_step(p->sched, i, pred, lat, nl, &g)) {
            snprintf(err, errcap, "out of memory");
            goto done;
        }
        if (inp) inpaint_blend(p->sched, i, n, inp, inp + nl, inp + 2 * nl, lat, inp + 3 * nl, nl);
        tm->scheduler += now_s() - ts0;
        if (step_done(prm, i - t0, n - t0, t, t_loop, lat, p->lat_c, p->lat_h, p->lat_w)) goto cancelled;
    }
    if (prm->cancel && *prm->cancel) goto cancelled;
    sdp_model_park(&p->dit);
    if (finite_or_fail(lat, nl, p->dit.path, err, errcap) ||
        vae_decode(&p->vae, p->v_in, lat, nl, p->scaling_factor, p->shift_factor, image, (size_t)3 * p->img_h * p->img_w,
                   tm, err, errcap))
        goto done;
    rc = 0;
    goto done;
cancelled:
    snprintf(err, errcap, "cancelled");
    rc = SDP_CANCELLED;
done:
    tm->total = now_s() - t_start;
    struct sdp_model *all[] = {&p->te, &p->te2, &p->te3, &p->venc, &p->dit, &p->vae};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) sdp_model_park(all[k]); /* --offload: none stays */
    free_io(d, in, o);
    free(ctx);
    free(pooled);
    free(lat);
    free(pred);
    free(inp);
    return rc;
}

void sdp_sd3_close(struct sdp_sd3 *p)
{
    sdp_model_close(&p->te);
    sdp_model_close(&p->te2);
    sdp_model_close(&p->te3);
    sdp_model_close(&p->dit);
    sdp_model_close(&p->vae);
    sdp_model_close(&p->venc);
    sdp_tokenizer_free(p->tok);
    sdp_tokenizer_free(p->tok2);
    sdp_t5_free(p->t5);
    sdp_sched_free(p->sched);
    memset(p, 0, sizeof *p);
}

/* ---- Flux ---- */

int sdp_flux_check(struct sdp_flux *p, char *err, size_t errcap)
{
    char msg[512];
    if (!p->te.desc || !p->te2.desc || !p->dit.desc || !p->vae.desc || !p->tok || !p->t5 || !p->sched) {
        snprintf(err, errcap, "Flux: text_encoder, text_encoder_2 (T5), transformer, vae_decoder, both tokenizers and "
                 "the scheduler are needed");
        return -1;
    }
    if (p->sched->kind != SDP_SCHED_FLOW_EULER) {
        snprintf(err, errcap, "Flux: the scheduler must be flow matching (flow_euler), not %s",
                 sdp_sched_kind_name(p->sched->kind));
        return -1;
    }
    const struct o2r_model_desc *c = p->te.desc, *t = p->te2.desc, *d = p->dit.desc, *v = p->vae.desc;
    p->te_pool = find_io(c->outputs, c->n_outputs, "pooler_output");
    if (c->n_inputs != 1 || c->inputs[0].rank != 2 || c->inputs[0].dims[1] != CLIP_LEN || p->te_pool < 0 ||
        c->outputs[p->te_pool].rank != 2)
        return fail(err, errcap, "%s: %s", p->te.path, "expected input_ids [1,77] -> pooler_output [1,P] (CLIP-L)");
    p->pool_dim = (int)c->outputs[p->te_pool].dims[1];
    if (t->n_inputs != 1 || t->inputs[0].rank != 2 || t->inputs[0].dims[0] != 1 || t->outputs[0].rank != 3 ||
        !is_float(t->outputs[0].dtype) || t->outputs[0].dims[1] != t->inputs[0].dims[1])
        return fail(err, errcap, "%s: %s", p->te2.path, "expected input_ids [1,L] -> last_hidden_state [1,L,D] (T5)");
    p->t5_len = (int)t->inputs[0].dims[1], p->t5_dim = (int)t->outputs[0].dims[2];
    p->d_hs = find_io(d->inputs, d->n_inputs, "hidden_states");
    p->d_ehs = find_io(d->inputs, d->n_inputs, "encoder_hidden_states");
    p->d_pool = find_io(d->inputs, d->n_inputs, "pooled_projections");
    p->d_t = find_io(d->inputs, d->n_inputs, "timestep");
    p->d_img = find_io(d->inputs, d->n_inputs, "img_ids");
    p->d_txt = find_io(d->inputs, d->n_inputs, "txt_ids");
    p->d_g = find_io(d->inputs, d->n_inputs, "guidance");
    if (p->d_hs < 0 || p->d_ehs < 0 || p->d_pool < 0 || p->d_t < 0 || p->d_img < 0 || p->d_txt < 0 ||
        d->n_outputs != 1)
        return fail(err, errcap, "%s: %s", p->dit.path,
                    "does not look like a Flux transformer: expected inputs hidden_states, encoder_hidden_states, "
                    "pooled_projections, timestep, img_ids, txt_ids (guidance: dev) and one output");
    const struct o2r_io *hs = &d->inputs[p->d_hs], *eh = &d->inputs[p->d_ehs], *pl = &d->inputs[p->d_pool],
                        *im = &d->inputs[p->d_img], *tx = &d->inputs[p->d_txt];
    p->tokens = (int)hs->dims[1], p->feat = (int)hs->dims[2];
    if (hs->rank != 3 || hs->dims[0] != 1 || eh->rank != 3 || eh->dims[1] != p->t5_len || eh->dims[2] != p->t5_dim ||
        pl->rank != 2 || pl->dims[1] != p->pool_dim || im->rank != 2 || im->dims[0] != p->tokens || im->dims[1] != 3 ||
        tx->rank != 2 || tx->dims[0] != p->t5_len || tx->dims[1] != 3 || p->feat % 4 ||
        d->outputs[0].dims[1] != p->tokens || d->outputs[0].dims[2] != p->feat) {
        snprintf(msg, sizeof msg, "inputs do not fit: hidden_states [1,T,4C], encoder_hidden_states [1,%d,%d] (T5's), "
                 "pooled_projections [1,%d] (CLIP's), img_ids [T,3], txt_ids [%d,3], output [1,T,4C] (batch 1)",
                 p->t5_len, p->t5_dim, p->pool_dim, p->t5_len);
        return fail(err, errcap, "%s: %s", p->dit.path, msg);
    }
    p->v_in = find_io(v->inputs, v->n_inputs, "latent_sample");
    if (p->v_in < 0) p->v_in = 0;
    const struct o2r_io *vi = &v->inputs[p->v_in], *vo = &v->outputs[0];
    p->lat_c = p->feat / 4;
    if (vi->rank != 4 || vi->dims[1] != p->lat_c || vi->dims[2] % 2 || vi->dims[3] % 2 ||
        (vi->dims[2] / 2) * (vi->dims[3] / 2) != p->tokens || vo->rank != 4 || vo->dims[1] != 3) {
        snprintf(msg, sizeof msg, "expected latent_sample [1,%d,h,w] with (h/2)(w/2) = %d tokens (the transformer's)",
                 p->lat_c, p->tokens);
        return fail(err, errcap, "%s: %s", p->vae.path, msg);
    }
    p->lat_h = (int)vi->dims[2], p->lat_w = (int)vi->dims[3];
    p->img_h = (int)vo->dims[2], p->img_w = (int)vo->dims[3];
    return 0;
}

/* FluxPipeline's _pack_latents / _unpack_latents: [C, h, w] <-> [tokens (h/2)(w/2), C * 4]. */
static void flux_pack(const float *x, float *y, int c, int h, int w, int unpack)
{
    const int gw = w / 2;
    for (int ch = 0; ch < c; ch++)
        for (int yy = 0; yy < h; yy++)
            for (int xx = 0; xx < w; xx++) {
                const size_t a = ((size_t)ch * h + yy) * w + xx;
                const size_t b = ((size_t)(yy / 2) * gw + xx / 2) * (size_t)(c * 4) + (size_t)ch * 4 + (yy % 2) * 2 + xx % 2;
                if (unpack) y[a] = x[b];
                else y[b] = x[a];
            }
}

/* CLIP-L's pooled output [pool_dim] and T5's states [t5_len, t5_dim] for text. */
static int flux_encode(struct sdp_flux *p, const char *text, float *pooled, float *ctx, int *n_tokens,
                       struct sdp_timings *tm, char *err, size_t errcap)
{
    int64_t ids[CLIP_LEN];
    int full, rc;
    if (sdp_tokenizer_encode(p->tok, text, ids, CLIP_LEN, &full, err, errcap)) return -1;
    if (n_tokens) *n_tokens = full;
    if (encode_ids(&p->te, ids, CLIP_LEN, p->te_pool, pooled, (size_t)p->pool_dim, 0, NULL, 0, tm, err, errcap)) return -1;
    int64_t *t5ids = malloc((size_t)p->t5_len * sizeof *t5ids);
    rc = !t5ids ? (snprintf(err, errcap, "out of memory"), -1)
         : sdp_t5_encode(p->t5, text, t5ids, p->t5_len, &full, err, errcap)
             ? -1
             : encode_ids(&p->te2, t5ids, p->t5_len, 0, ctx, (size_t)p->t5_len * p->t5_dim, 0, NULL, 0, tm, err, errcap);
    free(t5ids);
    return rc;
}

int sdp_flux_generate(struct sdp_flux *p, const struct sdp_params *prm, float guidance, float *image, int *n_tokens,
                      struct sdp_timings *tm_out, char *err, size_t errcap)
{
    struct sdp_timings tm0 = {0}, *tm = tm_out ? tm_out : &tm0;
    memset(tm, 0, sizeof *tm);
    if (one_image_only("Flux", prm, &p->venc, err, errcap)) return -1;
    const double t_start = now_s();
    const int true_cfg = prm->cfg > 1.0f && prm->negative && prm->negative[0], rows = true_cfg ? 2 : 1;
    const size_t nl = (size_t)p->lat_c * p->lat_h * p->lat_w, nctx = (size_t)p->t5_len * p->t5_dim;
    float *ctx = malloc((size_t)rows * nctx * sizeof *ctx), *pooled = malloc((size_t)rows * p->pool_dim * sizeof *pooled);
    float *lat = malloc(nl * sizeof *lat), *x = malloc(nl * sizeof *x), *pred = malloc((size_t)rows * nl * sizeof *pred);
    float *img_ids = malloc((size_t)p->tokens * 3 * sizeof *img_ids), *txt_ids = calloc((size_t)p->t5_len * 3, sizeof *txt_ids);
    float *inp = prm->mask ? malloc(4 * nl * sizeof *inp) : NULL; /* inpainting, packed: image latents, noise, mask, tmp */
    void *in[MAXIO] = {0}, *o[MAXIO] = {0};
    int rc = -1;
    const struct o2r_model_desc *d = p->dit.desc;
    if (!ctx || !pooled || !lat || !x || !pred || !img_ids || !txt_ids || (prm->mask && !inp) || alloc_io(d, in, o)) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    /* rows: [cond] (+ [negative] with true CFG) */
    if (prm->cancel && *prm->cancel) goto cancelled;
    if (flux_encode(p, prm->prompt, pooled, ctx, n_tokens, tm, err, errcap)) goto done;
    if (true_cfg && flux_encode(p, prm->negative, pooled + p->pool_dim, ctx + nctx, NULL, tm, err, errcap)) goto done;
    sdp_model_park(&p->te); /* --offload: each stage's models leave the device when it is done */
    sdp_model_park(&p->te2);
    for (int r = 0, k = 0; r < p->lat_h / 2; r++) /* latent_image_ids: (0, row, column) */
        for (int c = 0; c < p->lat_w / 2; c++, k++)
            img_ids[k * 3] = 0, img_ids[k * 3 + 1] = (float)r, img_ids[k * 3 + 2] = (float)c;
    { /* FluxPipeline's sigmas and mu (image_seq_len: the packed tokens) */
        double *sig = malloc((size_t)(prm->steps > 0 ? prm->steps : 1) * sizeof *sig);
        if (!sig) {
            snprintf(err, errcap, "out of memory");
            goto done;
        }
        sdp_flow_flux_sigmas(prm->steps, sig);
        const double mu = sdp_flow_calculate_shift(p->tokens, p->sched->base_seq, p->sched->max_seq,
                                                   p->sched->base_shift, p->sched->max_shift);
        int src = sdp_sched_set_timesteps_flow(p->sched, prm->steps, sig, mu, err, errcap);
        free(sig);
        if (src) goto done;
    }
    struct sdp_rng g;
    sdp_rng_seed(&g, prm->seed);
    const int n = p->sched->n_steps, t0 = prm->init_image ? sdp_flow_img2img_t_start(prm->steps, prm->strength) : 0;
    if (t0 >= n) {
        snprintf(err, errcap, "strength %g with %d steps: no denoising step left (diffusers refuses it too)",
                 prm->strength, prm->steps);
        goto done;
    }
    if (prm->init_image) { /* the image's latents noised at t_start, [1, C, h, w], then packed */
        if (prm->cancel && *prm->cancel) goto cancelled;
        if (img2img_start(&p->venc, p->sched, t0, prm->init_image, (size_t)3 * p->img_h * p->img_w, nl,
                          p->scaling_factor, p->shift_factor, &g, x, inp, inp ? inp + nl : NULL, tm, err, errcap))
            goto done;
        if (inp) { /* FluxInpaintPipeline: image latents, noise and mask packed as the latents are */
            latent_mask(prm->mask, p->img_w, p->img_h, p->lat_c, p->lat_h, p->lat_w, inp + 2 * nl);
            for (int k = 0; k < 3; k++) {
                flux_pack(inp + (size_t)k * nl, inp + 3 * nl, p->lat_c, p->lat_h, p->lat_w, 0);
                memcpy(inp + (size_t)k * nl, inp + 3 * nl, nl * sizeof *inp);
            }
        }
    } else {
        sdp_rng_randn(&g, x, nl); /* randn_tensor([1, C, h, w]), then packed */
    }
    sdp_model_park(&p->venc);
    flux_pack(x, lat, p->lat_c, p->lat_h, p->lat_w, 0);
    const struct o2r_io *io = d->inputs;
    sdp_put_floats(in[p->d_img], io[p->d_img].dtype, img_ids, (size_t)p->tokens * 3);
    sdp_put_floats(in[p->d_txt], io[p->d_txt].dtype, txt_ids, (size_t)p->t5_len * 3);
    if (p->d_g >= 0) sdp_put_floats(in[p->d_g], io[p->d_g].dtype, &guidance, 1);
    const double t_loop = now_s();
    for (int i = t0; i < n; i++) {
        const float t = sdp_sched_timestep(p->sched, i), tt = t / 1000.0f; /* FluxPipeline: timestep / 1000 */
        for (int r = 0; r < rows; r++) { /* the cond call, then the negative one (diffusers' order) */
            if (prm->cancel && *prm->cancel) goto cancelled;
            sdp_put_floats(in[p->d_hs], io[p->d_hs].dtype, lat, nl);
            sdp_put_floats(in[p->d_ehs], io[p->d_ehs].dtype, ctx + (size_t)r * nctx, nctx);
            sdp_put_floats(in[p->d_pool], io[p->d_pool].dtype, pooled + (size_t)r * p->pool_dim, (size_t)p->pool_dim);
            sdp_put_floats(in[p->d_t], io[p->d_t].dtype, &tt, 1);
            if (run(&p->dit, in, o, &tm->unet_total, &tm->unet_runs, err, errcap)) goto done;
            sdp_get_floats(pred + (size_t)r * nl, d->outputs[0].dtype, o[0], nl);
        }
        double ts0 = now_s();
        if (true_cfg) /* neg_noise_pred + true_cfg_scale * (noise_pred - neg_noise_pred) */
            for (size_t k = 0; k < nl; k++) pred[k] = pred[nl + k] + prm->cfg * (pred[k] - pred[nl + k]);
        if (sdp_sched_step(p->sched, i, pred, lat, nl, &g)) {
            snprintf(err, errcap, "out of memory");
            goto done;
        }
        if (inp) inpaint_blend(p->sched, i, n, inp, inp + nl, inp + 2 * nl, lat, inp + 3 * nl, nl);
        tm->scheduler += now_s() - ts0;
        if (prm->progress) flux_pack(lat, x, p->lat_c, p->lat_h, p->lat_w, 1); /* [C, h, w] for the callback */
        if (step_done(prm, i - t0, n - t0, t, t_loop, x, p->lat_c, p->lat_h, p->lat_w)) goto cancelled;
    }
    if (prm->cancel && *prm->cancel) goto cancelled;
    sdp_model_park(&p->dit);
    flux_pack(lat, x, p->lat_c, p->lat_h, p->lat_w, 1);
    if (finite_or_fail(x, nl, p->dit.path, err, errcap)) goto done;
    if (vae_decode(&p->vae, p->v_in, x, nl, p->scaling_factor, p->shift_factor, image, (size_t)3 * p->img_h * p->img_w,
                   tm, err, errcap))
        goto done;
    rc = 0;
    goto done;
cancelled:
    snprintf(err, errcap, "cancelled");
    rc = SDP_CANCELLED;
done:
    tm->total = now_s() - t_start;
    struct sdp_model *all[] = {&p->te, &p->te2, &p->venc, &p->dit, &p->vae};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) sdp_model_park(all[k]); /* --offload: none stays */
    free_io(d, in, o);
    free(ctx);
    free(pooled);
    free(lat);
    free(x);
    free(pred);
    free(img_ids);
    free(txt_ids);
    free(inp);
    return rc;
}

void sdp_flux_close(struct sdp_flux *p)
{
    sdp_model_close(&p->te);
    sdp_model_close(&p->te2);
    sdp_model_close(&p->dit);
    sdp_model_close(&p->vae);
    sdp_model_close(&p->venc);
    sdp_tokenizer_free(p->tok);
    sdp_t5_free(p->t5);
    sdp_sched_free(p->sched);
    memset(p, 0, sizeof *p);
}

/* The VAE factors of vae/config.json (path "" or NULL: keep *scaling, *shift). */
static int vae_factors(const char *path, float *scaling, float *shift, char *err, size_t errcap)
{
    FILE *f = path && path[0] ? fopen(path, "rb") : NULL;
    if (!f) return 0;
    fclose(f);
    cJSON *j = sdp_json_file(path, err, errcap);
    if (!j) return -1;
    const cJSON *sf = cJSON_GetObjectItemCaseSensitive(j, "scaling_factor"),
                *sh = cJSON_GetObjectItemCaseSensitive(j, "shift_factor");
    int rc = 0;
    if ((sf && !cJSON_IsNumber(sf)) || (sh && !cJSON_IsNull(sh) && !cJSON_IsNumber(sh))) {
        snprintf(err, errcap, "%s: scaling_factor / shift_factor is not a number", path);
        rc = -1;
    } else {
        if (sf) *scaling = (float)sf->valuedouble;
        *shift = cJSON_IsNumber(sh) ? (float)sh->valuedouble : 0.0f;
    }
    cJSON_Delete(j);
    return rc;
}

int sdp_sd3_setup(struct o2r_ctx *ctx, const struct sdp_sd3_files *f, struct sdp_sd3 *p, struct sdp_flux *q,
                  char *err, size_t errcap)
{
    memset(p, 0, sizeof *p);
    memset(q, 0, sizeof *q);
    float scaling = f->scaling, shift = f->shift;
    struct sdp_sched_overrides ov = {.karras = -1};
    struct sdp_scheduler **sched = f->flux ? &q->sched : &p->sched;
    struct sdp_tokenizer **tk[2] = {f->flux ? &q->tok : &p->tok, f->flux ? NULL : &p->tok2};
    struct sdp_model *mm[6] = {f->flux ? &q->te : &p->te, f->flux ? &q->te2 : &p->te2, f->flux ? NULL : &p->te3,
                               f->flux ? &q->dit : &p->dit, f->flux ? &q->vae : &p->vae, f->flux ? &q->venc : &p->venc};
    int rc = vae_factors(f->vae_cfg, &scaling, &shift, err, errcap) ||
             sdp_sched_load(f->sched_cfg, SDP_SCHED_FLOW_EULER, &ov, sched, err, errcap);
    for (int i = 0; i < 2 && !rc; i++)
        if (tk[i]) rc = sdp_tokenizer_load(f->tok[i], tk[i], err, errcap);
    for (int i = 0; i < 6 && !rc; i++)
        if (mm[i] && f->prog[i] && f->prog[i][0])
            rc = sdp_model_load_opt(i < 3 && f->text_ctx ? f->text_ctx : ctx, f->prog[i], f->wts[i], f->offload,
                                    f->track, mm[i], err, errcap); /* 0-2: the text encoders */
    if (!rc && (f->flux || p->te3.desc)) rc = sdp_t5_load(f->tok[2], f->flux ? &q->t5 : &p->t5, err, errcap);
    if (!rc) {
        if (f->flux) q->scaling_factor = scaling, q->shift_factor = shift;
        else p->scaling_factor = scaling, p->shift_factor = shift;
        rc = f->flux ? sdp_flux_check(q, err, errcap) : sdp_sd3_check(p, err, errcap);
    }
    if (rc) {
        if (f->flux) sdp_flux_close(q);
        else sdp_sd3_close(p);
        return -1;
    }
    return 0;
}
