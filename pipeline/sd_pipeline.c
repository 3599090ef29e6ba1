/* sd_pipeline.c — model loading (dlopen, or a .o2d descriptor file), shape checks and the txt2img loop (see sd_pipeline.h).
 *
 * Assumes: POSIX dlopen; the executable exports the runtime's o2r_* symbols (linked with
 * ENABLE_EXPORTS) so the generated shared objects resolve against it. Guarantees: host buffers are
 * sized from the descriptors; every runtime error is reported with the runtime's message and the
 * model file.
 */
#include "sd_pipeline.h"
#include "clip_tokenizer.h"
#include "torch_rng.h"

#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sdp_model_weights_path(const char *so_path, char *buf, size_t cap)
{
    const char *base = strrchr(so_path, '/');
    base = base ? base + 1 : so_path;
    const char *dot = strrchr(base, '.');
    size_t pl = dot && dot != base ? (size_t)(dot - so_path) : strlen(so_path);
    snprintf(buf, cap, "%.*s.weights", (int)pl, so_path);
}

int sdp_model_load(struct o2r_ctx *ctx, const char *so_path, const char *weights_path,
                   struct sdp_model *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    snprintf(out->path, sizeof out->path, "%s", so_path);
    const char *base = strrchr(so_path, '/');
    base = base ? base + 1 : so_path;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base) n = (size_t)(dot - base);
    char sym[512], wpath[4096];
    size_t o = 0;
    if (n == 0 || !isalpha((unsigned char)base[0])) sym[o++] = 'm';
    for (size_t i = 0; i < n && o < sizeof sym - 8; i++)
        sym[o++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
    memcpy(sym + o, "_desc", 6);
    if (!weights_path) {
        sdp_model_weights_path(so_path, wpath, sizeof wpath);
        weights_path = wpath;
    }
    size_t pl = strlen(so_path);
    if (pl > 4 && strcmp(so_path + pl - 4, ".o2d") == 0) { /* a descriptor file: no dlopen */
        char derr[2048];
        if (o2r_desc_read(so_path, &out->owned, derr, sizeof derr) != O2R_OK) {
            snprintf(err, errcap, "%s", derr);
            return -1;
        }
        out->desc = out->owned;
        if (o2r_model_init(ctx, out->desc, weights_path, &out->m) != O2R_OK) {
            snprintf(err, errcap, "%s: %s", so_path, o2r_ctx_last_error(ctx));
            o2r_desc_free(out->owned);
            out->owned = NULL;
            out->desc = NULL;
            return -1;
        }
        return 0;
    }
    /* a bare name would make dlopen search the library path: always give it a path */
    char dlp[4096];
    snprintf(dlp, sizeof dlp, "%s%s", strchr(so_path, '/') ? "" : "./", so_path);
    out->dl = dlopen(dlp, RTLD_NOW | RTLD_LOCAL);
    if (!out->dl) {
        snprintf(err, errcap, "%s: cannot load: %s", so_path, dlerror());
        return -1;
    }
    const struct o2r_model_desc *(*fn)(void);
    *(void **)&fn = dlsym(out->dl, sym);
    if (!fn) {
        snprintf(err, errcap, "%s: no symbol %s() (name the file after onnx2cl's --name, e.g. "
                 "unet.so for --name unet)", so_path, sym);
        goto fail;
    }
    out->desc = fn();
    if (!out->desc || out->desc->abi_version != O2R_ABI_VERSION) {
        snprintf(err, errcap, "%s: model ABI version %u, this onnx2cl-sd needs %d (recompile the model)",
                 so_path, out->desc ? out->desc->abi_version : 0, O2R_ABI_VERSION);
        goto fail;
    }
    if (o2r_model_init(ctx, out->desc, weights_path, &out->m) != O2R_OK) {
        snprintf(err, errcap, "%s: %s", so_path, o2r_ctx_last_error(ctx));
        goto fail;
    }
    return 0;
fail:
    dlclose(out->dl);
    out->dl = NULL;
    return -1;
}

void sdp_model_close(struct sdp_model *m)
{
    if (m->m) o2r_model_free(m->m);
    if (m->dl) dlclose(m->dl);
    o2r_desc_free(m->owned);
    m->m = NULL;
    m->dl = NULL;
    m->owned = NULL;
    m->desc = NULL;
}

/* ---- float16 <-> float32 ------------------------------------------------------------------- */

static float half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 31, m = h & 1023, u;
    if (e == 31) u = s | 0x7f800000u | (m << 13);
    else if (e) u = s | ((e + 112) << 23) | (m << 13);
    else if (!m) u = s;
    else {
        e = 113;
        while (!(m & 1024)) m <<= 1, e--;
        u = s | (e << 23) | ((m & 1023) << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t s = (u >> 16) & 0x8000, e = (u >> 23) & 255, m = u & 0x7fffff;
    if (e == 255) return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
    int ne = (int)e - 112;
    if (ne >= 31) return (uint16_t)(s | 0x7c00);
    if (ne <= 0) {
        if (ne < -10) return (uint16_t)s;
        m |= 0x800000;
        int shift = 14 - ne;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(s | r);
    }
    uint32_t r = ((uint32_t)ne << 10) | (m >> 13), rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(s | r);
}

/* Copies n floats into a model input buffer of dtype dt (F32 or F16). */
static void put_floats(void *dst, int32_t dt, const float *src, size_t n)
{
    if (dt == O2R_F32) memcpy(dst, src, n * 4);
    else for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = float_to_half(src[i]);
}

static void get_floats(float *dst, int32_t dt, const void *src, size_t n)
{
    if (dt == O2R_F32) memcpy(dst, src, n * 4);
    else for (size_t i = 0; i < n; i++) dst[i] = half_to_float(((const uint16_t *)src)[i]);
}

static int is_float(int32_t dt) { return dt == O2R_F32 || dt == O2R_F16; }

static uint64_t numel(const struct o2r_io *io)
{
    uint64_t n = 1;
    for (int i = 0; i < io->rank; i++) n *= (uint64_t)io->dims[i];
    return n;
}

static void shape_str(const struct o2r_io *io, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "%s %s [", io->name, o2r_dtype_name(io->dtype));
    for (int i = 0; i < io->rank && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? "," : "", (long long)io->dims[i]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

static int find_io(const struct o2r_io *io, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(io[i].name, name) == 0) return (int)i;
    return -1;
}

/* The text encoder's token embedding table: the weights-file tensor that the first Gather
 * launch reading the input_ids buffer reads (its layout string "DTYPE [rows,hidden] KIND...",
 * runtime/onnx2cl_rt.h struct o2r_stored). Returns its rows and *name, or 0 when no such
 * tensor is found (then nothing can be checked). */
static long long te_embedding_rows(const struct o2r_model_desc *d, int hidden, const char **name)
{
    const int ids = d->inputs[0].buf;
    for (uint32_t l = 0; l < d->n_launches; l++) {
        const struct o2r_launch *la = &d->launches[l];
        int reads_ids = 0;
        if (!la->op || strcmp(la->op, "Gather") != 0) continue;
        for (uint32_t a = 0; a < la->nargs; a++) {
            const struct o2r_arg *ar = &d->args[la->first_arg + a];
            reads_ids |= ar->kind == O2R_ARG_BUF && ar->u.buf == ids;
        }
        for (uint32_t a = 0; reads_ids && a < la->nargs; a++) {
            const struct o2r_arg *ar = &d->args[la->first_arg + a];
            for (uint32_t k = 0; ar->kind == O2R_ARG_BUF && k < d->n_stored; k++) {
                long long rows, cols;
                if ((int)d->stored[k].buf != ar->u.buf || !d->stored[k].layout ||
                    sscanf(d->stored[k].layout, "%*s [%lld,%lld]", &rows, &cols) != 2 || cols != hidden)
                    continue;
                *name = d->buffers[ar->u.buf].name ? d->buffers[ar->u.buf].name : "?";
                return rows;
            }
        }
    }
    return 0;
}

int sdp_pipeline_check(struct sdp_pipeline *p, char *err, size_t errcap)
{
    const struct o2r_model_desc *te = p->te.desc, *un = p->unet.desc, *va = p->vae.desc;
    char a[256];
    /* text encoder: ids [b,S] int, first output (or last_hidden_state) [b,S,D] float */
    if (te->n_inputs != 1 || (te->inputs[0].dtype != O2R_I64 && te->inputs[0].dtype != O2R_I32) ||
        te->inputs[0].rank != 2) {
        shape_str(&te->inputs[0], a, sizeof a);
        snprintf(err, errcap, "%s: does not look like a CLIP text encoder: expected one input_ids "
                 "input int64 [batch,77], got %u input(s), first %s", p->te.path, te->n_inputs, a);
        return -1;
    }
    p->te_ids = 0;
    p->te_out = find_io(te->outputs, te->n_outputs, "last_hidden_state");
    if (p->te_out < 0) p->te_out = 0;
    const struct o2r_io *ti = &te->inputs[0], *to = &te->outputs[p->te_out];
    p->te_batch = (int)ti->dims[0];
    p->seq = (int)ti->dims[1];
    if (to->rank != 3 || !is_float(to->dtype) || to->dims[0] != ti->dims[0] || to->dims[1] != ti->dims[1]) {
        shape_str(to, a, sizeof a);
        snprintf(err, errcap, "%s: output %s is not [batch,%d,hidden] float", p->te.path, a, p->seq);
        return -1;
    }
    p->hidden = (int)to->dims[2];
    if (p->te_batch < 1 || p->te_batch > 2 || p->seq < 2 || p->seq > 1024) {
        snprintf(err, errcap, "%s: input_ids batch %d, sequence %d: compile it with --shape input_ids=1,77",
                 p->te.path, p->te_batch, p->seq);
        return -1;
    }
    /* every id the tokenizer can give must be a row of the token embedding table (the Gather
     * would clamp or read out of bounds: garbage, silently) */
    const char *emb = NULL;
    long long rows = te_embedding_rows(te, p->hidden, &emb);
    if (p->tok && rows > 0 && sdp_tokenizer_vocab_size(p->tok) > rows) {
        snprintf(err, errcap, "%s: the tokenizer's ids go up to %d (vocabulary of %d), but the text "
                 "encoder's token embedding '%s' has %lld rows: give the tokenizer this text encoder "
                 "was trained with (--tokenizer DIR or --hf CKPT)", p->te.path,
                 sdp_tokenizer_vocab_size(p->tok) - 1, sdp_tokenizer_vocab_size(p->tok), emb, rows);
        return -1;
    }
    /* UNet */
    p->u_sample = find_io(un->inputs, un->n_inputs, "sample");
    p->u_t = find_io(un->inputs, un->n_inputs, "timestep");
    p->u_ehs = find_io(un->inputs, un->n_inputs, "encoder_hidden_states");
    if (un->n_inputs == 3 && (p->u_sample < 0 || p->u_t < 0 || p->u_ehs < 0)) {
        /* unnamed: by rank (4-D sample, 3-D states, the rest the timestep) */
        p->u_sample = p->u_t = p->u_ehs = -1;
        for (int i = 0; i < 3; i++) {
            int r = un->inputs[i].rank;
            if (r == 4 && p->u_sample < 0) p->u_sample = i;
            else if (r == 3 && p->u_ehs < 0) p->u_ehs = i;
            else if (r <= 1 && p->u_t < 0) p->u_t = i;
        }
    }
    const char *want = "sample float [B,4,h,w], timestep (1 or B values), encoder_hidden_states float [B,77,D]";
    if (un->n_inputs != 3 || p->u_sample < 0 || p->u_t < 0 || p->u_ehs < 0 || un->n_outputs < 1) {
        snprintf(err, errcap, "%s: does not look like a UNet: %u inputs, expected 3 (%s)", p->unet.path,
                 un->n_inputs, want);
        return -1;
    }
    const struct o2r_io *us = &un->inputs[p->u_sample], *ut = &un->inputs[p->u_t],
                        *ue = &un->inputs[p->u_ehs], *uo = &un->outputs[0];
    p->u_out = 0;
    p->u_batch = (int)us->dims[0];
    if (us->rank != 4 || !is_float(us->dtype) || ue->rank != 3 || !is_float(ue->dtype) ||
        ue->dims[0] != us->dims[0] || (numel(ut) != 1 && (int64_t)numel(ut) != us->dims[0]) ||
        (ut->dtype != O2R_F32 && ut->dtype != O2R_I64 && ut->dtype != O2R_I32 && ut->dtype != O2R_F16) ||
        uo->rank != 4 || !is_float(uo->dtype) || memcmp(uo->dims, us->dims, 4 * sizeof uo->dims[0]) ||
        p->u_batch < 1 || p->u_batch > 2) {
        char b[256], c[256];
        shape_str(us, a, sizeof a);
        shape_str(ut, b, sizeof b);
        shape_str(ue, c, sizeof c);
        snprintf(err, errcap, "%s: does not look like a UNet: inputs %s, %s, %s (expected %s, batch 1 or 2, "
                 "and one output shaped like sample)", p->unet.path, a, b, c, want);
        return -1;
    }
    if (ue->dims[1] != p->seq || ue->dims[2] != p->hidden) {
        shape_str(ue, a, sizeof a);
        snprintf(err, errcap, "%s: encoder_hidden_states %s does not match the text encoder's output "
                 "[*,%d,%d] (%s)", p->unet.path, a, p->seq, p->hidden, p->te.path);
        return -1;
    }
    p->lat_c = (int)us->dims[1];
    p->lat_h = (int)us->dims[2];
    p->lat_w = (int)us->dims[3];
    /* VAE decoder: [1 or B, C, h, w] -> [same, 3, H, W] */
    if (va->n_inputs != 1 || va->n_outputs < 1) {
        snprintf(err, errcap, "%s: does not look like a VAE decoder: expected one latent_sample input", p->vae.path);
        return -1;
    }
    const struct o2r_io *vi = &va->inputs[0], *vo = &va->outputs[0];
    p->v_in = 0;
    p->v_out = 0;
    if (vi->rank != 4 || !is_float(vi->dtype) || vi->dims[1] != p->lat_c || vi->dims[2] != p->lat_h ||
        vi->dims[3] != p->lat_w || vo->rank != 4 || !is_float(vo->dtype) || vo->dims[0] != vi->dims[0] ||
        vo->dims[1] != 3) {
        char b[256];
        shape_str(vi, a, sizeof a);
        shape_str(vo, b, sizeof b);
        snprintf(err, errcap, "%s: VAE decoder %s -> %s does not fit the UNet's latents [*,%d,%d,%d] "
                 "(compile it with --shape %s=1,%d,%d,%d)", p->vae.path, a, b, p->lat_c, p->lat_h,
                 p->lat_w, vi->name, p->lat_c, p->lat_h, p->lat_w);
        return -1;
    }
    p->img_c = 3;
    p->img_h = (int)vo->dims[2];
    p->img_w = (int)vo->dims[3];
    return 0;
}

/* Runs model m with host inputs; reports the runtime's error. */
static int run_model(struct sdp_model *m, const void *const *in, void *const *out, char *err, size_t errcap)
{
    if (o2r_model_run(m->m, in, out) != O2R_OK) {
        snprintf(err, errcap, "%s: %s", m->path, o2r_ctx_last_error(m->ctx));
        return -1;
    }
    return 0;
}

/* Allocates host buffers for every input and output of a model. */
static int alloc_io(const struct o2r_model_desc *d, void **in, void **out)
{
    for (uint32_t i = 0; i < d->n_inputs; i++)
        if (!(in[i] = calloc(1, d->inputs[i].nbytes ? d->inputs[i].nbytes : 1))) return -1;
    for (uint32_t i = 0; i < d->n_outputs; i++)
        if (!(out[i] = calloc(1, d->outputs[i].nbytes ? d->outputs[i].nbytes : 1))) return -1;
    return 0;
}

static void free_io(const struct o2r_model_desc *d, void **in, void **out)
{
    for (uint32_t i = 0; i < d->n_inputs; i++) free(in[i]);
    for (uint32_t i = 0; i < d->n_outputs; i++) free(out[i]);
}

#define MAXIO 16

/* Text encoder on one or two prompts: emb receives n_prompts * seq * hidden floats. */
static int encode(struct sdp_pipeline *p, const char *const *prompts, int n_prompts, float *emb,
                  int *n_tokens, struct sdp_timings *tm, char *err, size_t errcap)
{
    const struct o2r_model_desc *d = p->te.desc;
    void *in[MAXIO] = {0}, *out[MAXIO] = {0};
    int rc = -1;
    size_t per = (size_t)p->seq * p->hidden;
    if (d->n_inputs > MAXIO || d->n_outputs > MAXIO || alloc_io(d, in, out)) {
        snprintf(err, errcap, "%s: out of memory", p->te.path);
        goto done;
    }
    for (int k = 0; k < n_prompts; k += p->te_batch) {
        for (int b = 0; b < p->te_batch; b++) {
            int64_t ids[1024];
            int full;
            const char *txt = prompts[k + b < n_prompts ? k + b : k];
            if (sdp_tokenizer_encode(p->tok, txt, ids, p->seq, &full, err, errcap)) goto done;
            if (k + b == 0 && n_tokens) *n_tokens = full;
            for (int j = 0; j < p->seq; j++) {
                if (d->inputs[0].dtype == O2R_I64) ((int64_t *)in[0])[b * p->seq + j] = ids[j];
                else ((int32_t *)in[0])[b * p->seq + j] = (int32_t)ids[j];
            }
        }
        double t0 = now_s();
        if (run_model(&p->te, (const void *const *)in, out, err, errcap)) goto done;
        tm->text_encoder += now_s() - t0;
        tm->text_runs++;
        for (int b = 0; b < p->te_batch && k + b < n_prompts; b++)
            get_floats(emb + (size_t)(k + b) * per, d->outputs[p->te_out].dtype,
                       (const char *)out[p->te_out] + (size_t)b * per * o2r_dtype_size(d->outputs[p->te_out].dtype), per);
    }
    rc = 0;
done:
    free_io(d, in, out);
    return rc;
}

int sdp_generate(struct sdp_pipeline *p, const struct sdp_params *prm, float *image, int *n_tokens,
                 struct sdp_timings *tm, char *err, size_t errcap)
{
    memset(tm, 0, sizeof *tm);
    double t_start = now_s();
    int cfg_on = prm->cfg > 1.0f;
    size_t per = (size_t)p->seq * p->hidden;
    size_t nl = (size_t)p->lat_c * p->lat_h * p->lat_w;
    const struct o2r_model_desc *ud = p->unet.desc, *vd = p->vae.desc;
    void *uin[MAXIO] = {0}, *uout[MAXIO] = {0}, *vin[MAXIO] = {0}, *vout[MAXIO] = {0};
    float *emb = malloc(2 * per * sizeof *emb), *lat = malloc(nl * sizeof *lat);
    float *xin = malloc(nl * sizeof *xin), *eps = malloc(2 * nl * sizeof *eps);
    int rc = -1;
#define CANCEL_POINT(where)                                                                                  \
    do {                                                                                                     \
        if (prm->cancel && *prm->cancel) {                                                                   \
            snprintf(err, errcap, "cancelled %s", where);                                                    \
            rc = SDP_CANCELLED;                                                                              \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)
    if (!emb || !lat || !xin || !eps || alloc_io(ud, uin, uout) || alloc_io(vd, vin, vout)) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    /* 1. text: [uncond, cond] with guidance, else [cond] */
    const char *prompts[2] = {prm->negative ? prm->negative : "", prm->prompt};
    int n_tokens_unused;
    CANCEL_POINT("before the text encoder");
    if (cfg_on) {
        if (encode(p, prompts, 2, emb, &n_tokens_unused, tm, err, errcap)) goto done;
        /* the count reported is the prompt's: re-tokenize cheaply */
        int64_t ids[1024];
        if (sdp_tokenizer_encode(p->tok, prm->prompt, ids, p->seq, n_tokens, err, errcap)) goto done;
    } else {
        if (encode(p, prompts + 1, 1, emb + per, n_tokens, tm, err, errcap)) goto done;
    }
    /* 2. schedule and initial noise */
    if (sdp_sched_set_timesteps(p->sched, prm->steps, err, errcap)) goto done;
    struct sdp_rng rng;
    sdp_rng_seed(&rng, prm->seed);
    if (prm->latents) memcpy(lat, prm->latents, nl * sizeof *lat);
    else sdp_rng_randn(&rng, lat, nl);
    for (size_t k = 0; k < nl; k++) lat[k] = lat[k] * p->sched->init_noise_sigma;
    /* 3. denoising loop */
    const struct o2r_io *us = &ud->inputs[p->u_sample], *ut = &ud->inputs[p->u_t],
                        *ue = &ud->inputs[p->u_ehs], *uo = &ud->outputs[p->u_out];
    size_t esz = o2r_dtype_size(us->dtype), osz = o2r_dtype_size(uo->dtype), hsz = o2r_dtype_size(ue->dtype);
    int n = p->sched->n_steps;
    double t_loop = now_s();
    for (int i = 0; i < n; i++) {
        double ts0 = now_s();
        float t = sdp_sched_timestep(p->sched, i);
        sdp_sched_scale_input(p->sched, i, lat, xin, nl);
        tm->scheduler += now_s() - ts0;
        int n_branch = cfg_on ? 2 : 1, first = cfg_on ? 0 : 1; /* emb rows: 0 uncond, 1 cond */
        for (int r = 0; r < n_branch; r += p->u_batch) {
            for (int b = 0; b < p->u_batch; b++) {
                int row = first + (r + b < n_branch ? r + b : r);
                put_floats((char *)uin[p->u_sample] + (size_t)b * nl * esz, us->dtype, xin, nl);
                put_floats((char *)uin[p->u_ehs] + (size_t)b * per * hsz, ue->dtype, emb + (size_t)row * per, per);
            }
            for (uint64_t k = 0; k < numel(ut); k++) {
                if (ut->dtype == O2R_F32) ((float *)uin[p->u_t])[k] = t;
                else if (ut->dtype == O2R_F16) ((uint16_t *)uin[p->u_t])[k] = float_to_half(t);
                else if (ut->dtype == O2R_I64) ((int64_t *)uin[p->u_t])[k] = (int64_t)t;
                else ((int32_t *)uin[p->u_t])[k] = (int32_t)t;
            }
            CANCEL_POINT("before a UNet run");
            double t0 = now_s();
            if (run_model(&p->unet, (const void *const *)uin, uout, err, errcap)) goto done;
            tm->unet_total += now_s() - t0;
            tm->unet_runs++;
            for (int b = 0; b < p->u_batch && r + b < n_branch; b++)
                get_floats(eps + (size_t)(r + b) * nl, uo->dtype, (const char *)uout[p->u_out] + (size_t)b * nl * osz, nl);
        }
        ts0 = now_s();
        if (cfg_on) {
            float g = prm->cfg;
            for (size_t k = 0; k < nl; k++) eps[k] = eps[k] + g * (eps[nl + k] - eps[k]);
        }
        if (sdp_sched_step(p->sched, i, eps, lat, nl, &rng)) {
            snprintf(err, errcap, "scheduler: out of memory");
            goto done;
        }
        tm->scheduler += now_s() - ts0;
        double el = now_s() - t_loop, per_step = el / (i + 1);
        if (!prm->quiet)
            fprintf(stderr, "step %d/%d  t=%g  %.3f s/step  ETA %.1f s\n", i + 1, n, (double)t, per_step,
                    per_step * (n - i - 1));
        if (prm->progress) {
            struct sdp_progress pr = {.step = i + 1, .total = n, .elapsed = el, .eta = per_step * (n - i - 1),
                                      .latents = lat, .lat_c = p->lat_c, .lat_h = p->lat_h, .lat_w = p->lat_w};
            if (prm->progress(&pr, prm->progress_user)) {
                snprintf(err, errcap, "cancelled by the progress callback after step %d of %d", i + 1, n);
                rc = SDP_CANCELLED;
                goto done;
            }
        }
    }
    CANCEL_POINT("before the VAE decoder");
    /* 4. decode */
    const struct o2r_io *vi = &vd->inputs[p->v_in], *vo = &vd->outputs[p->v_out];
    for (size_t k = 0; k < nl; k++) xin[k] = lat[k] / prm->scaling_factor;
    for (int64_t b = 0; b < vi->dims[0]; b++)
        put_floats((char *)vin[p->v_in] + (size_t)b * nl * o2r_dtype_size(vi->dtype), vi->dtype, xin, nl);
    double t0 = now_s();
    if (run_model(&p->vae, (const void *const *)vin, vout, err, errcap)) goto done;
    tm->vae = now_s() - t0;
    size_t ni = (size_t)3 * p->img_h * p->img_w;
    get_floats(image, vo->dtype, vout[p->v_out], ni);
    for (size_t k = 0; k < ni; k++) {
        float v = image[k] / 2.0f + 0.5f;
        image[k] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
    tm->total = now_s() - t_start;
    rc = 0;
done:
#undef CANCEL_POINT
    free_io(ud, uin, uout);
    free_io(vd, vin, vout);
    free(emb);
    free(lat);
    free(xin);
    free(eps);
    return rc;
}
