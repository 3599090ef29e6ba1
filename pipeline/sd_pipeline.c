/* sd_pipeline.c — model loading (dlopen, or a .o2d descriptor file), shape checks and the txt2img loop (see sd_pipeline.h).
 *
 * Assumes: POSIX dlopen; the executable exports the runtime's o2r_* symbols (linked with
 * ENABLE_EXPORTS) so the generated shared objects resolve against it. Guarantees: host buffers are
 * sized from the descriptors; every runtime error is reported with the runtime's message and the
 * model file.
 */
#include "sd_pipeline.h"
#include "clip_tokenizer.h"
#include "prompt_weights.h"
#include "torch_rng.h"
#include "vae_tiling.h"
#include "platform.h" /* o2r_dl_open, o2r_now_ms */

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static double now_s(void) { return o2r_now_ms() * 1e-3; }

void sdp_model_weights_path(const char *so_path, char *buf, size_t cap)
{
    const char *base = strrchr(so_path, '/');
    base = base ? base + 1 : so_path;
    const char *dot = strrchr(base, '.');
    size_t pl = dot && dot != base ? (size_t)(dot - so_path) : strlen(so_path);
    snprintf(buf, cap, "%.*s.weights", (int)pl, so_path);
}

int sdp_model_ready(struct sdp_model *m, char *err, size_t errcap)
{
    if (m->m) return 0;
    if (!m->desc) {
        snprintf(err, errcap, "%s: no model loaded", m->path[0] ? m->path : "model");
        return -1;
    }
    if (o2r_model_init(m->ctx, m->desc, m->weights, &m->m) != O2R_OK) {
        snprintf(err, errcap, "%s: %s", m->path, o2r_ctx_last_error(m->ctx));
        m->m = NULL;
        return -1;
    }
    m->dev_bytes = o2r_model_device_bytes(m->m);
    if (m->track) {
        m->track->live += m->dev_bytes;
        if (m->track->live > m->track->peak) m->track->peak = m->track->live;
    }
    return 0;
}

/* Frees the device side of m (whatever its offload mode). */
static void model_unload(struct sdp_model *m)
{
    if (!m->m) return;
    o2r_model_free(m->m);
    m->m = NULL;
    if (m->track) m->track->live -= m->dev_bytes;
    m->dev_bytes = 0;
}

void sdp_model_park(struct sdp_model *m)
{
    if (m->offload) model_unload(m);
}

int sdp_model_load_opt(struct o2r_ctx *ctx, const char *so_path, const char *weights_path, int offload,
                       struct sdp_mem_track *track, struct sdp_model *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    out->offload = offload != 0;
    out->track = track;
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
    if (!(out->weights = strdup(weights_path))) {
        snprintf(err, errcap, "%s: out of memory", so_path);
        return -1;
    }
    size_t pl = strlen(so_path);
    if (pl > 4 && strcmp(so_path + pl - 4, ".o2d") == 0) { /* a descriptor file: no dlopen */
        char derr[2048];
        if (o2r_desc_read(so_path, &out->owned, derr, sizeof derr) != O2R_OK) {
            snprintf(err, errcap, "%s", derr);
            goto fail;
        }
        out->desc = out->owned;
    } else {
        /* a bare name would make dlopen search the library path: always give it a path */
        char dlp[4096];
        snprintf(dlp, sizeof dlp, "%s%s", strchr(so_path, '/') ? "" : "./", so_path);
        char dlerr[1024];
        out->dl = o2r_dl_open(dlp, dlerr, sizeof dlerr);
        if (!out->dl) {
            snprintf(err, errcap, "%s: cannot load: %s", so_path, dlerr);
            goto fail;
        }
        const struct o2r_model_desc *(*fn)(void);
        *(void **)&fn = o2r_dl_sym(out->dl, sym);
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
    }
    if (!out->offload && sdp_model_ready(out, err, errcap)) goto fail;
    return 0;
fail:
    sdp_model_close(out);
    return -1;
}

int sdp_model_load(struct o2r_ctx *ctx, const char *so_path, const char *weights_path,
                   struct sdp_model *out, char *err, size_t errcap)
{
    return sdp_model_load_opt(ctx, so_path, weights_path, 0, NULL, out, err, errcap);
}

void sdp_model_close(struct sdp_model *m)
{
    model_unload(m);
    if (m->dl) o2r_dl_close(m->dl);
    o2r_desc_free(m->owned);
    free(m->weights);
    m->dl = NULL;
    m->owned = NULL;
    m->desc = NULL;
    m->weights = NULL;
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

void sdp_put_floats(void *dst, int32_t dt, const float *src, size_t n)
{
    if (dt == O2R_F32) memcpy(dst, src, n * 4);
    else for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = float_to_half(src[i]);
}

void sdp_get_floats(float *dst, int32_t dt, const void *src, size_t n)
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

/* One text encoder: ids [b,S] int -> output `want` (NULL: last_hidden_state, else the first
 * output) [b,S,D] float; the tokenizer's ids rows of its token embedding table. */
static int check_text_encoder(const struct sdp_model *m, const struct sdp_tokenizer *tok, const char *want,
                              int *out_idx, int *batch, int *seq, int *hidden, char *err, size_t errcap)
{
    const struct o2r_model_desc *te = m->desc;
    char a[256];
    if (te->n_inputs != 1 || (te->inputs[0].dtype != O2R_I64 && te->inputs[0].dtype != O2R_I32) ||
        te->inputs[0].rank != 2) {
        shape_str(&te->inputs[0], a, sizeof a);
        snprintf(err, errcap, "%s: does not look like a CLIP text encoder: expected one input_ids "
                 "input int64 [batch,77], got %u input(s), first %s", m->path, te->n_inputs, a);
        return -1;
    }
    *out_idx = find_io(te->outputs, te->n_outputs, want ? want : "last_hidden_state");
    if (*out_idx < 0 && want) {
        snprintf(err, errcap, "%s: no output '%s' (an SDXL text encoder exported by models/make_arch.py has "
                 "penultimate_hidden_state, hidden_states[-2])", m->path, want);
        return -1;
    }
    if (*out_idx < 0) *out_idx = 0;
    const struct o2r_io *ti = &te->inputs[0], *to = &te->outputs[*out_idx];
    *batch = (int)ti->dims[0];
    *seq = (int)ti->dims[1];
    if (to->rank != 3 || !is_float(to->dtype) || to->dims[0] != ti->dims[0] || to->dims[1] != ti->dims[1]) {
        shape_str(to, a, sizeof a);
        snprintf(err, errcap, "%s: output %s is not [batch,%d,hidden] float", m->path, a, *seq);
        return -1;
    }
    *hidden = (int)to->dims[2];
    if (*batch < 1 || *batch > 2 || *seq < 2 || *seq > 1024) {
        snprintf(err, errcap, "%s: input_ids batch %d, sequence %d: compile it with --shape input_ids=1,77",
                 m->path, *batch, *seq);
        return -1;
    }
    /* every id the tokenizer can give must be a row of the token embedding table (the Gather
     * would clamp or read out of bounds: garbage, silently) */
    const char *emb = NULL;
    long long rows = te_embedding_rows(te, *hidden, &emb);
    if (tok && rows > 0 && sdp_tokenizer_vocab_size(tok) > rows) {
        snprintf(err, errcap, "%s: the tokenizer's ids go up to %d (vocabulary of %d), but the text "
                 "encoder's token embedding '%s' has %lld rows: give the tokenizer this text encoder "
                 "was trained with (--tokenizer DIR or --hf CKPT)", m->path,
                 sdp_tokenizer_vocab_size(tok) - 1, sdp_tokenizer_vocab_size(tok), emb, rows);
        return -1;
    }
    return 0;
}

int sdp_pipeline_check(struct sdp_pipeline *p, char *err, size_t errcap)
{
    const struct o2r_model_desc *un = p->unet.desc, *va = p->vae.desc;
    char a[256];
    const int xl = p->te2.desc != NULL;
    p->te_ids = 0;
    if (check_text_encoder(&p->te, p->tok, xl ? "penultimate_hidden_state" : NULL, &p->te_out, &p->te_batch,
                           &p->seq, &p->te_hidden, err, errcap))
        return -1;
    p->hidden = p->te_hidden;
    p->te2_hidden = 0;
    p->te2_pool = -1;
    p->pool_dim = 0;
    if (xl) { /* SDXL: text_encoder_2's penultimate states beside the first's, its text_embeds pooled */
        int b2, s2;
        const struct o2r_model_desc *t2 = p->te2.desc;
        if (check_text_encoder(&p->te2, p->tok2 ? p->tok2 : p->tok, "penultimate_hidden_state", &p->te2_out, &b2,
                               &s2, &p->te2_hidden, err, errcap))
            return -1;
        p->te2_pool = find_io(t2->outputs, t2->n_outputs, "text_embeds");
        const struct o2r_io *po = p->te2_pool >= 0 ? &t2->outputs[p->te2_pool] : NULL;
        if (!po || po->rank != 2 || !is_float(po->dtype) || po->dims[0] != b2) {
            snprintf(err, errcap, "%s: no text_embeds output [batch,D] float (CLIPTextModelWithProjection's "
                     "projected pooled output, SDXL's text_encoder_2)", p->te2.path);
            return -1;
        }
        if (s2 != p->seq) {
            snprintf(err, errcap, "%s: takes %d tokens, %s %d: compile both with --shape input_ids=1,77",
                     p->te2.path, s2, p->te.path, p->seq);
            return -1;
        }
        p->pool_dim = (int)po->dims[1];
        p->hidden = p->te_hidden + p->te2_hidden;
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
    const char *want = xl ? "sample float [B,4,h,w], timestep (1 or B values), encoder_hidden_states float [B,77,D], "
                            "text_embeds [B,P], time_ids [B,6]"
                          : "sample float [B,4,h,w], timestep (1 or B values), encoder_hidden_states float [B,77,D]";
    p->u_temb = find_io(un->inputs, un->n_inputs, "text_embeds");
    p->u_tids = find_io(un->inputs, un->n_inputs, "time_ids");
    if (!xl && un->n_inputs == 5 && p->u_temb >= 0 && p->u_tids >= 0) {
        snprintf(err, errcap, "%s: an SDXL UNet (text_embeds, time_ids inputs): it needs SDXL's second text encoder "
                 "(text_encoder_2) and tokenizer_2, which this pipeline was not given", p->unet.path);
        return -1;
    }
    if (un->n_inputs != (xl ? 5u : 3u) || p->u_sample < 0 || p->u_t < 0 || p->u_ehs < 0 || un->n_outputs < 1 ||
        (xl && (p->u_temb < 0 || p->u_tids < 0))) {
        snprintf(err, errcap, "%s: does not look like %s UNet: %u inputs, expected %d (%s)", p->unet.path,
                 xl ? "an SDXL" : "a", un->n_inputs, xl ? 5 : 3, want);
        return -1;
    }
    const struct o2r_io *us = &un->inputs[p->u_sample], *ut = &un->inputs[p->u_t],
                        *ue = &un->inputs[p->u_ehs], *uo = &un->outputs[0];
    p->u_out = 0;
    p->u_batch = (int)us->dims[0];
    if (us->rank != 4 || !is_float(us->dtype) || ue->rank != 3 || !is_float(ue->dtype) ||
        ue->dims[0] != us->dims[0] || (numel(ut) != 1 && (int64_t)numel(ut) != us->dims[0]) ||
        (ut->dtype != O2R_F32 && ut->dtype != O2R_I64 && ut->dtype != O2R_I32 && ut->dtype != O2R_F16) ||
        uo->rank != 4 || !is_float(uo->dtype) || uo->dims[0] != us->dims[0] || uo->dims[2] != us->dims[2] ||
        uo->dims[3] != us->dims[3] || (uo->dims[1] != us->dims[1] && us->dims[1] != 2 * uo->dims[1] + 1) ||
        p->u_batch < 1 || p->u_batch > 64) {
        char b[256], c[256];
        shape_str(us, a, sizeof a);
        shape_str(ut, b, sizeof b);
        shape_str(ue, c, sizeof c);
        snprintf(err, errcap, "%s: does not look like a UNet: inputs %s, %s, %s (expected %s, batch 1 to 64, "
                 "and one output shaped like sample, or with (C - 1) / 2 channels for an inpainting UNet)", p->unet.path, a, b, c,
                 want);
        return -1;
    }
    if (ue->dims[1] < p->seq || ue->dims[1] % p->seq || ue->dims[2] != p->hidden) {
        shape_str(ue, a, sizeof a);
        snprintf(err, errcap, "%s: encoder_hidden_states %s does not match the text encoder%s output "
                 "[*,%d,%d] (%s%s%s; or k * %d tokens for long prompts)", p->unet.path, a, xl ? "s' concatenated" : "'s",
                 p->seq, p->hidden, p->te.path, xl ? " + " : "", xl ? p->te2.path : "", p->seq);
        return -1;
    }
    if (xl) {
        const struct o2r_io *te_in = &un->inputs[p->u_temb], *ti_in = &un->inputs[p->u_tids];
        if (te_in->rank != 2 || !is_float(te_in->dtype) || te_in->dims[0] != us->dims[0] ||
            te_in->dims[1] != p->pool_dim || ti_in->rank != 2 || !is_float(ti_in->dtype) ||
            ti_in->dims[0] != us->dims[0] || ti_in->dims[1] != 6) {
            char b[256];
            shape_str(te_in, a, sizeof a);
            shape_str(ti_in, b, sizeof b);
            snprintf(err, errcap, "%s: text_embeds %s, time_ids %s: expected [%d,%d] (%s's text_embeds) and [%d,6] "
                     "float", p->unet.path, a, b, (int)us->dims[0], p->pool_dim, p->te2.path, (int)us->dims[0]);
            return -1;
        }
    }
    p->u_seq = (int)ue->dims[1];
    p->lat_c = (int)uo->dims[1];
    p->unet_in_c = (int)us->dims[1];
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
    if (p->vae_tiling) { /* a tile of the latents; the image is the latents times the decoder's scale */
        struct sdp_tiling *t = malloc(sizeof *t);
        int bad = !t || sdp_vae_tiling_plan(va, p->lat_c, p->lat_h, p->lat_w, -1, t, a, sizeof a);
        if (!bad) {
            p->img_c = 3;
            p->img_h = t->out_h;
            p->img_w = t->out_w;
        }
        free(t);
        if (bad) {
            snprintf(err, errcap, "%s: VAE decoder tiling of the UNet's latents [%d,%d,%d]: %s", p->vae.path, p->lat_c,
                     p->lat_h, p->lat_w, t ? a : "out of memory");
            return -1;
        }
    } else if (vi->rank != 4 || !is_float(vi->dtype) || vi->dims[1] != p->lat_c || vi->dims[2] != p->lat_h ||
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
    if (!p->vae_tiling) {
        p->img_c = 3;
        p->img_h = (int)vo->dims[2];
        p->img_w = (int)vo->dims[3];
    }
    /* VAE encoder (img2img/inpainting): [1,3,H,W] -> [1,2C,h,w] (mean || logvar) */
    if (p->venc.desc) {
        const struct o2r_model_desc *ve = p->venc.desc;
        const struct o2r_io *ei = ve->n_inputs == 1 ? &ve->inputs[0] : NULL, *eo = ve->n_outputs ? &ve->outputs[0] : NULL;
        struct sdp_tiling *t = p->vae_tiling ? malloc(sizeof *t) : NULL;
        a[0] = 0;
        int tiled_ok = t && sdp_vae_tiling_plan(ve, 3, p->img_h, p->img_w, -1, t, a, sizeof a) == 0 &&
                       t->c_out == 2 * p->lat_c && t->out_h == p->lat_h && t->out_w == p->lat_w;
        free(t);
        if (p->vae_tiling && !tiled_ok) {
            snprintf(err, errcap, "%s: VAE encoder tiling of the %dx%d image to [%d,%d,%d]: %s", p->venc.path,
                     p->img_w, p->img_h, 2 * p->lat_c, p->lat_h, p->lat_w, a[0] ? a : "does not fit");
            return -1;
        }
        if (p->vae_tiling) {
            /* checked by the plan */
        } else if (!ei || !eo || ei->rank != 4 || !is_float(ei->dtype) || ei->dims[0] != 1 || ei->dims[1] != 3 ||
            ei->dims[2] != p->img_h || ei->dims[3] != p->img_w || eo->rank != 4 || !is_float(eo->dtype) ||
            eo->dims[0] != 1 || eo->dims[1] != 2 * p->lat_c || eo->dims[2] != p->lat_h || eo->dims[3] != p->lat_w) {
            char b[256] = "", c[256] = "";
            if (ei) shape_str(ei, b, sizeof b);
            if (eo) shape_str(eo, c, sizeof c);
            snprintf(err, errcap, "%s: VAE encoder %s -> %s does not fit: expected [1,3,%d,%d] -> [1,%d,%d,%d] "
                     "(mean and log-variance of the UNet's latents)", p->venc.path, b, c, p->img_h, p->img_w,
                     2 * p->lat_c, p->lat_h, p->lat_w);
            return -1;
        }
        p->e_in = 0;
        p->e_out = 0;
    }
    return 0;
}

/* Runs model m with host inputs; reports the runtime's error. */
static int run_model(struct sdp_model *m, const void *const *in, void *const *out, char *err, size_t errcap)
{
    if (sdp_model_ready(m, err, errcap)) return -1; /* an offloaded model: on the device now */
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

/* Text encoder m on n_rows rows of seq ids: z receives n_rows * seq * width floats of output out
 * ([b,seq,width]); pooled (NULL: not wanted) the first row's output pool ([b,P], P floats). */
static int encode_rows(struct sdp_model *m, int out, int pool, int seq, int width, const int64_t *ids, int n_rows,
                       float *z, float *pooled, struct sdp_timings *tm, char *err, size_t errcap)
{
    const struct o2r_model_desc *d = m->desc;
    void *in[MAXIO] = {0}, *o[MAXIO] = {0};
    int rc = -1, batch = (int)d->inputs[0].dims[0];
    size_t per = (size_t)seq * width;
    if (d->n_inputs > MAXIO || d->n_outputs > MAXIO || alloc_io(d, in, o)) {
        snprintf(err, errcap, "%s: out of memory", m->path);
        goto done;
    }
    for (int k = 0; k < n_rows; k += batch) {
        for (int b = 0; b < batch; b++) {
            const int64_t *row = ids + (size_t)(k + b < n_rows ? k + b : k) * seq;
            for (int j = 0; j < seq; j++) {
                if (d->inputs[0].dtype == O2R_I64) ((int64_t *)in[0])[b * seq + j] = row[j];
                else ((int32_t *)in[0])[b * seq + j] = (int32_t)row[j];
            }
        }
        double t0 = now_s();
        if (run_model(m, (const void *const *)in, o, err, errcap)) goto done;
        tm->text_encoder += now_s() - t0;
        tm->text_runs++;
        for (int b = 0; b < batch && k + b < n_rows; b++)
            sdp_get_floats(z + (size_t)(k + b) * per, d->outputs[out].dtype,
                       (const char *)o[out] + (size_t)b * per * o2r_dtype_size(d->outputs[out].dtype), per);
        if (pooled && k == 0) sdp_get_floats(pooled, d->outputs[pool].dtype, o[pool], (size_t)d->outputs[pool].dims[1]);
    }
    rc = 0;
done:
    free_io(d, in, o);
    return rc;
}

int sdp_emphasis_parse(const char *name, int *out, char *err, size_t errcap)
{
    static const struct { const char *n; int e; } names[] = {
        {"diffusers", SDP_EMPHASIS_DIFFUSERS}, {"None", SDP_EMPHASIS_NONE}, {"Ignore", SDP_EMPHASIS_IGNORE},
        {"Original", SDP_EMPHASIS_ORIGINAL}, {"No norm", SDP_EMPHASIS_NO_NORM}, {"no-norm", SDP_EMPHASIS_NO_NORM},
        {"no_norm", SDP_EMPHASIS_NO_NORM}, {"nonorm", SDP_EMPHASIS_NO_NORM}};
    for (size_t i = 0; name && i < sizeof names / sizeof *names; i++)
        if (!strcasecmp(name, names[i].n)) {
            *out = names[i].e;
            return 0;
        }
    snprintf(err, errcap, "emphasis '%s': not one of Original, No norm, None, Ignore (A1111's Emphasis option) "
             "or diffusers", name ? name : "");
    return -1;
}

const char *sdp_emphasis_name(int e)
{
    switch (e) {
    case SDP_EMPHASIS_NONE: return "None";
    case SDP_EMPHASIS_IGNORE: return "Ignore";
    case SDP_EMPHASIS_ORIGINAL: return "Original";
    case SDP_EMPHASIS_NO_NORM: return "No norm";
    default: return "diffusers";
    }
}

#define SDP_MAX_COND_CHUNKS 16

static int gcd_i(int a, int b) { return b ? gcd_i(b, a % b) : a; }

int sdp_cond_tokens(const struct sdp_tokenizer *tok, int emphasis, const char *prompt, const char *negative,
                    int cfg_on, int seq, int *tokens, int *n_pos, int *n_neg, char *err, size_t errcap)
{
    int kp = 1, kn = 1;
    if (emphasis != SDP_EMPHASIS_DIFFUSERS) {
        struct sdp_prompt_chunks c;
        char e[1024];
        const int parse = emphasis != SDP_EMPHASIS_NONE;
        if (sdp_prompt_chunks_ex(tok, prompt, SDP_COMMA_BACKTRACK, parse, &c, e, sizeof e)) {
            snprintf(err, errcap, "prompt: %s", e);
            return -1;
        }
        kp = c.n_chunks;
        sdp_prompt_chunks_free(&c);
        if (cfg_on) {
            if (sdp_prompt_chunks_ex(tok, negative ? negative : "", SDP_COMMA_BACKTRACK, parse, &c, e, sizeof e)) {
                snprintf(err, errcap, "negative prompt: %s", e);
                return -1;
            }
            kn = c.n_chunks;
            sdp_prompt_chunks_free(&c);
        }
    }
    long long l = (long long)kp / gcd_i(kp, kn) * kn;
    if (l > SDP_MAX_COND_CHUNKS) {
        snprintf(err, errcap, "the prompt is %d chunks of 75 tokens and the negative prompt %d: onnx2cl-sd runs both "
                 "in one UNet batch at a common length of %lld chunks, more than %d; shorten one or make their chunk "
                 "counts divide each other (BREAK adds a chunk)", kp, kn, l, SDP_MAX_COND_CHUNKS);
        return -1;
    }
    *tokens = (int)l * seq;
    if (n_pos) *n_pos = kp;
    if (n_neg) *n_neg = cfg_on ? kn : 0;
    return 0;
}

/* Encoder e's (0: text_encoder, 1: SDXL's text_encoder_2) part of one conditioning row of p->u_seq
 * tokens for text: diffusers mode: the 77 truncated ids encoded; A1111 modes: every chunk encoded
 * alone, the emphasis applied per chunk (per encoder, as A1111's SDXL conditioner does), the chunks
 * concatenated; either repeated to u_seq tokens, written at columns [off, off + width) of row's
 * p->hidden. pooled (NULL: not wanted): te2's text_embeds of the first chunk (A1111: zs[0].pooled).
 * *n_tokens (NULL: not wanted): see sdp_generate. */
static int cond_encoder(struct sdp_pipeline *p, int e, int emphasis, const char *text, float *row, float *pooled,
                        int *n_tokens, struct sdp_timings *tm, char *err, size_t errcap)
{
    const struct sdp_tokenizer *tok = e && p->tok2 ? p->tok2 : p->tok;
    struct sdp_model *m = e ? &p->te2 : &p->te;
    const int width = e ? p->te2_hidden : p->te_hidden, off = e ? p->te_hidden : 0;
    const size_t per = (size_t)p->seq * width;
    int64_t *ids = NULL;
    float *z = NULL;
    int k = 1, rc = -1;
    struct sdp_prompt_chunks c = {0};
    if (emphasis == SDP_EMPHASIS_DIFFUSERS) {
        int full;
        if (!(ids = malloc((size_t)p->seq * sizeof *ids))) goto oom;
        if (sdp_tokenizer_encode(tok, text, ids, p->seq, &full, err, errcap)) goto done;
        if (n_tokens) *n_tokens = full;
    } else {
        if (sdp_prompt_chunks_ex(tok, text, SDP_COMMA_BACKTRACK, emphasis != SDP_EMPHASIS_NONE, &c, err, errcap))
            goto done;
        k = c.n_chunks;
        if (n_tokens) *n_tokens = c.token_count;
        if (p->seq != 77) {
            snprintf(err, errcap, "%s: A1111's prompt chunks are 77 ids; the text encoder takes %d", m->path, p->seq);
            goto done;
        }
        ids = c.ids;
        const int64_t eos = sdp_tokenizer_eos(tok), pad = sdp_tokenizer_pad(tok);
        if (pad != eos) /* A1111 (process_tokens): ids after the first EOS become the pad id (SD 2.x: 0) */
            for (int i = 0; i < k; i++) {
                int64_t *r = ids + (size_t)i * p->seq;
                int j = 0;
                while (j < p->seq && r[j] != eos) j++;
                for (j++; j < p->seq; j++) r[j] = pad;
            }
    }
    if ((size_t)p->u_seq % ((size_t)k * p->seq)) {
        snprintf(err, errcap, "%s: the prompt is %d chunks (%d tokens), but the UNet takes encoder_hidden_states "
                 "of %d tokens (not a multiple): compile it with --shape encoder_hidden_states=B,%d,%d",
                 p->unet.path, k, k * p->seq, p->u_seq, k * p->seq, p->hidden);
        goto done;
    }
    if (!(z = malloc((size_t)k * per * sizeof *z))) goto oom;
    if (encode_rows(m, e ? p->te2_out : p->te_out, p->te2_pool, p->seq, width, ids, k, z, pooled, tm, err, errcap))
        goto done;
    for (int i = 0; i < k && emphasis != SDP_EMPHASIS_DIFFUSERS; i++) {
        if (emphasis == SDP_EMPHASIS_ORIGINAL)
            sdp_prompt_emphasis(z + (size_t)i * per, c.mult + (size_t)i * p->seq, (size_t)p->seq, (size_t)width);
        else if (emphasis == SDP_EMPHASIS_NO_NORM)
            sdp_prompt_multiply(z + (size_t)i * per, c.mult + (size_t)i * p->seq, (size_t)p->seq, (size_t)width);
    }
    for (size_t t = 0; t < (size_t)p->u_seq; t++) /* token t of the row: token t mod (k * seq) of z */
        memcpy(row + t * p->hidden + off, z + (t % ((size_t)k * p->seq)) * width, (size_t)width * sizeof *z);
    rc = 0;
    goto done;
oom:
    snprintf(err, errcap, "out of memory");
done:
    if (ids != c.ids) free(ids);
    sdp_prompt_chunks_free(&c);
    free(z);
    return rc;
}

/* One conditioning row (u_seq * hidden floats) and, for SDXL, its pooled text_embeds (pool_dim
 * floats): every encoder's part (cond_encoder). *n_tokens: the first encoder's count. */
static int cond_row(struct sdp_pipeline *p, int emphasis, const char *text, float *row, float *pooled,
                    int *n_tokens, struct sdp_timings *tm, char *err, size_t errcap)
{
    if (cond_encoder(p, 0, emphasis, text, row, NULL, n_tokens, tm, err, errcap)) return -1;
    return p->te2.desc ? cond_encoder(p, 1, emphasis, text, row, pooled, NULL, tm, err, errcap) : 0;
}

/* torch's Tensor.std over n values (unbiased, as std(dim=...) with its default correction 1). */
static double std_unbiased(const float *x, size_t n)
{
    double mean = 0, ss = 0;
    for (size_t k = 0; k < n; k++) mean += x[k];
    mean /= (double)n;
    for (size_t k = 0; k < n; k++) ss += ((double)x[k] - mean) * ((double)x[k] - mean);
    return n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
}

/* diffusers' rescale_noise_cfg on one image's n model outputs: cfg = r * cfg * std(text) / std(cfg)
 * + (1 - r) * cfg. */
static void rescale_noise_cfg(float *cfg, const float *text, size_t n, float r)
{
    double sc = std_unbiased(cfg, n);
    float ratio = sc > 0 ? (float)(std_unbiased(text, n) / sc) : 1.0f, keep = (float)(1.0 - (double)r);
    for (size_t k = 0; k < n; k++) cfg[k] = r * (cfg[k] * ratio) + keep * cfg[k];
}

/* sdp_vae_tiled_run's progress: cancels when the flag (may be NULL) is set. */
static int tile_cancel(int done, int total, void *flag)
{
    (void)done;
    (void)total;
    return flag && *(const volatile int *)flag;
}

int sdp_img2img_t_start(int steps, double strength)
{
    double prod = steps * strength; /* Python: int(num_inference_steps * strength), a double */
    int init = prod >= steps ? steps : prod <= 0 ? 0 : (int)prod;
    return steps - init;
}

/* Runs the VAE encoder on the init image [3,H,W] in [0,1] (2x - 1 first, as VaeImageProcessor
 * normalizes; with mask [H,W], the pixels of mask >= 0.5 then zeroed) and leaves mean and std = exp(0.5 * clamp(logvar, -30, 20)) of the latent
 * distribution in mean[nl], std[nl]. */
static int vae_encode(struct sdp_pipeline *p, const float *img, const float *mask, float *mean, float *stdv,
                      struct sdp_timings *tm, char *err, size_t errcap)
{
    const struct o2r_model_desc *d = p->venc.desc;
    void *in[MAXIO] = {0}, *out[MAXIO] = {0};
    size_t ni = (size_t)3 * p->img_h * p->img_w, nl = (size_t)p->lat_c * p->lat_h * p->lat_w;
    float *x = malloc(ni * sizeof *x), *par = malloc(2 * nl * sizeof *par);
    int rc = -1;
    if (!x || !par || d->n_inputs > MAXIO || d->n_outputs > MAXIO || alloc_io(d, in, out)) {
        snprintf(err, errcap, "%s: out of memory", p->venc.path);
        goto done;
    }
    size_t np = (size_t)p->img_h * p->img_w;
    for (size_t k = 0; k < ni; k++) x[k] = 2.0f * img[k] - 1.0f;
    if (mask) /* the masked image: init_image * (mask_condition < 0.5) */
        for (size_t k = 0; k < ni; k++) x[k] = x[k] * (mask[k % np] < 0.5f ? 1.0f : 0.0f);
    double t0 = now_s();
    if (p->vae_tiling) { /* the encoder compiled for a tile: mean || logvar blended over the tiles */
        if (sdp_vae_tiled_run(&p->venc, x, 3, p->img_h, p->img_w, -1, par, NULL, NULL, err, errcap)) goto done;
    } else {
        sdp_put_floats(in[p->e_in], d->inputs[p->e_in].dtype, x, ni);
        if (run_model(&p->venc, (const void *const *)in, out, err, errcap)) goto done;
        sdp_get_floats(par, d->outputs[p->e_out].dtype, out[p->e_out], 2 * nl);
    }
    tm->vae_encoder += now_s() - t0;
    for (size_t k = 0; k < nl; k++) {
        float lv = par[nl + k];
        lv = lv < -30.0f ? -30.0f : lv > 20.0f ? 20.0f : lv;
        mean[k] = par[k];
        stdv[k] = expf(0.5f * lv);
    }
    rc = 0;
done:
    free_io(d, in, out);
    free(x);
    free(par);
    return rc;
}

int sdp_generate(struct sdp_pipeline *p, const struct sdp_params *prm, float *image, int *n_tokens,
                 struct sdp_timings *tm, char *err, size_t errcap)
{
    memset(tm, 0, sizeof *tm);
    double t_start_s = now_s();
    const int B = prm->batch > 0 ? prm->batch : 1;
    const int cfg_on = prm->cfg > 1.0f, img2img = prm->init_image != NULL, inpaint = img2img && prm->mask;
    const int inpaint9 = p->unet_in_c == 2 * p->lat_c + 1; /* UNet input: latents, mask, masked-image latents */
    const int R = cfg_on ? 2 * B : B; /* UNet rows per step: [uncond x B; cond x B] or [cond x B] */
    size_t per = (size_t)(p->u_seq ? p->u_seq : p->seq) * p->hidden; /* one conditioning row */
    size_t nl = (size_t)p->lat_c * p->lat_h * p->lat_w, nt = (size_t)B * nl, hw = (size_t)p->lat_h * p->lat_w;
    const struct o2r_model_desc *ud = p->unet.desc, *vd = p->vae.desc;
    void *uin[MAXIO] = {0}, *uout[MAXIO] = {0}, *vin[MAXIO] = {0}, *vout[MAXIO] = {0};
    float *emb = malloc(2 * per * sizeof *emb), *lat = malloc(nt * sizeof *lat);
    float *pool = calloc(2 * (size_t)(p->pool_dim + 1), sizeof *pool); /* SDXL text_embeds: [uncond, cond] */
    float *xin = malloc(nt * sizeof *xin), *eps = malloc((size_t)R * nl * sizeof *eps);
    float *noise = NULL, *ilat = NULL, *mlat = NULL, *tmp = NULL, *milat = NULL;
    struct sdp_rng *gens = malloc((size_t)B * sizeof *gens), rng;
    int rc = -1;
#define CANCEL_POINT(where)                                                                                  \
    do {                                                                                                     \
        if (prm->cancel && *prm->cancel) {                                                                   \
            snprintf(err, errcap, "cancelled %s", where);                                                    \
            rc = SDP_CANCELLED;                                                                              \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)
    if (!emb || !lat || !xin || !eps || !gens || !pool || alloc_io(ud, uin, uout) || alloc_io(vd, vin, vout)) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    if (inpaint9 && !inpaint) {
        snprintf(err, errcap, "%s: an inpainting UNet (%d input channels: latents, mask, masked image): give an "
                 "init image and a mask", p->unet.path, p->unet_in_c);
        goto done;
    }
    if (img2img) {
        if (!p->venc.desc) {
            snprintf(err, errcap, "img2img/inpainting needs the VAE encoder (none loaded)");
            goto done;
        }
        if (!(prm->strength > 0.0 && prm->strength <= 1.0)) {
            snprintf(err, errcap, "strength %g: expected a number in (0, 1]", prm->strength);
            goto done;
        }
        noise = malloc(nt * sizeof *noise);
        ilat = malloc(nt * sizeof *ilat);
        tmp = malloc((nt + 3 * nl) * sizeof *tmp); /* mean, std, sample; or add_noise of nt */
        mlat = malloc(nl * sizeof *mlat);
        milat = malloc(nl * sizeof *milat);
        if (!noise || !ilat || !tmp || !mlat || !milat) {
            snprintf(err, errcap, "out of memory");
            goto done;
        }
    }
    /* 1. text: [uncond, cond] with guidance, else [cond]; each row u_seq tokens */
    CANCEL_POINT("before the text encoder");
    const int xl = p->te2.desc != NULL;
    float *pool_u = pool, *pool_c = pool + p->pool_dim;
    if (cfg_on && xl && !prm->encode_empty_negative && !(prm->negative && prm->negative[0])) {
        memset(emb, 0, per * sizeof *emb); /* force_zeros_for_empty_prompt: zeros, pooled too (pool_u) */
    } else if (cfg_on && cond_row(p, prm->emphasis, prm->negative ? prm->negative : "", emb, pool_u, NULL, tm, err,
                                  errcap)) {
        goto done;
    }
    if (cond_row(p, prm->emphasis, prm->prompt, emb + per, pool_c, n_tokens, tm, err, errcap)) goto done;
    sdp_model_park(&p->te); /* --offload: each stage's models leave the device when it is done */
    sdp_model_park(&p->te2);
    /* SDXL's add_time_ids: original_size + crops_coords_top_left + target_size, (height, width) of
     * the image both, crop (0, 0): the pipelines' defaults; the same for the negative rows */
    const float time_ids[6] = {(float)p->img_h, (float)p->img_w, 0.0f, 0.0f, (float)p->img_h, (float)p->img_w};
    /* 2. schedule, generators (image i: seed + i) */
    if (sdp_sched_set_timesteps(p->sched, prm->steps, err, errcap)) goto done;
    int n = p->sched->n_steps, t0i = 0;
    for (int i = 0; i < B; i++) sdp_rng_seed(&gens[i], prm->seed + (uint64_t)i);
    sdp_rng_seed(&rng, prm->seed);
    rng.images = gens;
    rng.n_images = B;
    if (img2img) { /* get_timesteps: timesteps[t_start * order:], the scheduler's begin index */
        t0i = sdp_img2img_t_start(prm->steps, prm->strength) * sdp_sched_order(p->sched);
        if (n - t0i < 1) {
            snprintf(err, errcap, "strength %g with %d steps: int(%d * %g) = 0 denoising steps (diffusers "
                     "refuses it too); raise the strength or the steps", prm->strength, prm->steps, prm->steps,
                     prm->strength);
            goto done;
        }
        p->sched->first_index = 0;
        if (sdp_sched_add_noise(p->sched, t0i, ilat, ilat, tmp, 0)) {
            snprintf(err, errcap, "img2img/inpainting: scheduler %s has no add_noise here (use euler, euler_a, "
                     "dpmpp_2m, ddim or lcm)", sdp_sched_kind_name(p->sched->kind));
            goto done;
        }
    }
    /* 3. initial latents */
    if (!img2img) {
        if (prm->latents) memcpy(lat, prm->latents, nt * sizeof *lat);
        else sdp_rng_randn(&rng, lat, nt);
        for (size_t k = 0; k < nt; k++) lat[k] = lat[k] * p->sched->init_noise_sigma;
    } else {
        float *mean = tmp, *stdv = tmp + nl, *smp = tmp + 2 * nl;
        /* a 9-channel inpainting UNet's pipeline encodes the image only when strength < 1 */
        if (!inpaint9 || prm->strength < 1.0) {
            CANCEL_POINT("before the VAE encoder");
            if (vae_encode(p, prm->init_image, NULL, mean, stdv, tm, err, errcap)) goto done;
            /* latent_dist.sample(generator): img2img encodes the image once per generator, the
             * inpainting pipeline once with generator[0] (its one image, repeated) */
            for (int i = 0; i < (inpaint ? 1 : B); i++) {
                sdp_rng_randn(&gens[i], smp, nl);
                for (size_t k = 0; k < nl; k++) ilat[i * nl + k] = prm->scaling_factor * (mean[k] + stdv[k] * smp[k]);
            }
            if (inpaint)
                for (int i = 1; i < B; i++) memcpy(ilat + i * nl, ilat, nl * sizeof *ilat);
        }
        if (prm->latents) memcpy(noise, prm->latents, nt * sizeof *noise);
        else sdp_rng_randn(&rng, noise, nt);
        if (inpaint && prm->strength == 1.0) { /* is_strength_max: pure noise */
            for (size_t k = 0; k < nt; k++) lat[k] = noise[k] * p->sched->init_noise_sigma;
        } else {
            sdp_sched_add_noise(p->sched, t0i, ilat, noise, lat, nt);
        }
        if (inpaint) { /* prepare_mask_latents: the masked image encoded, sampled with generator[0] */
            if (inpaint9) {
                CANCEL_POINT("before the VAE encoder");
                if (vae_encode(p, prm->init_image, prm->mask, mean, stdv, tm, err, errcap)) goto done;
                sdp_rng_randn(&gens[0], smp, nl);
                for (size_t k = 0; k < nl; k++) milat[k] = prm->scaling_factor * (mean[k] + stdv[k] * smp[k]);
            } else {
                sdp_rng_randn(&gens[0], smp, nl); /* drawn, unused by a 4-channel UNet */
            }
            int fy = p->img_h / p->lat_h, fx = p->img_w / p->lat_w; /* F.interpolate nearest: mask[f y][f x] */
            for (int y = 0; y < p->lat_h; y++)
                for (int x = 0; x < p->lat_w; x++) {
                    float m = prm->mask[(size_t)y * fy * p->img_w + (size_t)x * fx];
                    for (int c = 0; c < p->lat_c; c++)
                        mlat[((size_t)c * p->lat_h + y) * p->lat_w + x] = m < 0.5f ? 0.0f : 1.0f;
                }
        }
    }
    sdp_model_park(&p->venc);
    /* 4. denoising loop */
    const struct o2r_io *us = &ud->inputs[p->u_sample], *ut = &ud->inputs[p->u_t],
                        *ue = &ud->inputs[p->u_ehs], *uo = &ud->outputs[p->u_out];
    size_t esz = o2r_dtype_size(us->dtype), osz = o2r_dtype_size(uo->dtype), hsz = o2r_dtype_size(ue->dtype);
    size_t nu = (size_t)p->unet_in_c * hw; /* one row of the UNet's sample input */
    double t_loop = now_s(), t_step = t_loop;
    for (int i = t0i; i < n; i++) {
        double ts0 = now_s();
        float t = sdp_sched_timestep(p->sched, i);
        sdp_sched_scale_input(p->sched, i, lat, xin, nt);
        tm->scheduler += now_s() - ts0;
        for (int r0 = 0; r0 < R; r0 += p->u_batch) {
            for (int b = 0; b < p->u_batch; b++) {
                int r = r0 + b < R ? r0 + b : r0;          /* a last partial run repeats its first row */
                int erow = cfg_on ? (r < B ? 0 : 1) : 1;  /* emb rows: 0 uncond, 1 cond */
                char *row = (char *)uin[p->u_sample] + (size_t)b * nu * esz;
                sdp_put_floats(row, us->dtype, xin + (size_t)(r % B) * nl, nl);
                if (inpaint9) { /* torch.cat([latent_model_input, mask, masked_image_latents], dim=1) */
                    sdp_put_floats(row + nl * esz, us->dtype, mlat, hw);
                    sdp_put_floats(row + (nl + hw) * esz, us->dtype, milat, nl);
                }
                sdp_put_floats((char *)uin[p->u_ehs] + (size_t)b * per * hsz, ue->dtype, emb + (size_t)erow * per, per);
                if (xl) {
                    const struct o2r_io *pe = &ud->inputs[p->u_temb], *pt = &ud->inputs[p->u_tids];
                    sdp_put_floats((char *)uin[p->u_temb] + (size_t)b * p->pool_dim * o2r_dtype_size(pe->dtype), pe->dtype,
                               erow ? pool_c : pool_u, (size_t)p->pool_dim);
                    sdp_put_floats((char *)uin[p->u_tids] + (size_t)b * 6 * o2r_dtype_size(pt->dtype), pt->dtype, time_ids, 6);
                }
            }
            for (uint64_t k = 0; k < numel(ut); k++) {
                if (ut->dtype == O2R_F32) ((float *)uin[p->u_t])[k] = t;
                else if (ut->dtype == O2R_F16) ((uint16_t *)uin[p->u_t])[k] = float_to_half(t);
                else if (ut->dtype == O2R_I64) ((int64_t *)uin[p->u_t])[k] = (int64_t)t;
                else ((int32_t *)uin[p->u_t])[k] = (int32_t)t;
            }
            CANCEL_POINT("before a UNet run");
            double tu = now_s();
            if (run_model(&p->unet, (const void *const *)uin, uout, err, errcap)) goto done;
            tm->unet_total += now_s() - tu;
            tm->unet_runs++;
            for (int b = 0; b < p->u_batch && r0 + b < R; b++)
                sdp_get_floats(eps + (size_t)(r0 + b) * nl, uo->dtype, (const char *)uout[p->u_out] + (size_t)b * nl * osz, nl);
        }
        ts0 = now_s();
        if (cfg_on) { /* noise_pred_uncond + guidance_scale * (noise_pred_text - noise_pred_uncond) */
            float g = prm->cfg;
            for (size_t k = 0; k < nt; k++) eps[k] = eps[k] + g * (eps[nt + k] - eps[k]);
            if (prm->guidance_rescale > 0.0f) /* rescale_noise_cfg (arXiv 2305.08891, 3.4) per image */
                for (int b = 0; b < B; b++)
                    rescale_noise_cfg(eps + (size_t)b * nl, eps + nt + (size_t)b * nl, nl, prm->guidance_rescale);
        }
        if (sdp_sched_step(p->sched, i, eps, lat, nt, &rng)) {
            snprintf(err, errcap, "scheduler: out of memory");
            goto done;
        }
        if (inpaint && !inpaint9) { /* latents = (1 - init_mask) * init_latents_proper + init_mask * latents */
            const float *proper = ilat;
            if (i + 1 < n) {
                sdp_sched_add_noise(p->sched, i + 1, ilat, noise, tmp, nt);
                proper = tmp;
            }
            for (int b = 0; b < B; b++)
                for (size_t k = 0; k < nl; k++) {
                    float m = mlat[k];
                    lat[b * nl + k] = (1.0f - m) * proper[b * nl + k] + m * lat[b * nl + k];
                }
        }
        tm->scheduler += now_s() - ts0;
        int done_steps = i - t0i + 1, total = n - t0i;
        double t_now = now_s(), el = t_now - t_loop, per_step = el / done_steps;
        /* the line counts the user's steps (--steps, img2img: int(steps * strength)): a scheduler
         * with more model evaluations than steps (PLMS's warm-up, Heun's / DPM2's second order)
         * prints step k when evaluation done * user / total reaches k (PLMS 4 steps = 5
         * evaluations: the warm-up belongs to step 1); its time is that of the evaluations since
         * the last line */
        int user_total = img2img ? prm->steps - sdp_img2img_t_start(prm->steps, prm->strength) : prm->steps;
        if (user_total < 1 || user_total > total) user_total = total;
        int user_done = (int)((long long)done_steps * user_total / total);
        int user_before = (int)((long long)(done_steps - 1) * user_total / total);
        if (!prm->quiet && user_done > user_before) { /* the ETA from the mean of the evaluations so far */
            fprintf(stderr, "step %d/%d  t=%g  %.3f s  ETA %.1f s\n", user_done, user_total, (double)t,
                    t_now - t_step, per_step * (total - done_steps));
            t_step = t_now;
        }
        if (prm->progress) {
            struct sdp_progress pr = {.step = done_steps, .total = total, .elapsed = el,
                                      .eta = per_step * (total - done_steps), .latents = lat, .lat_c = p->lat_c,
                                      .lat_h = p->lat_h, .lat_w = p->lat_w, .batch = B};
            if (prm->progress(&pr, prm->progress_user)) {
                snprintf(err, errcap, "cancelled by the progress callback after step %d of %d", done_steps, total);
                rc = SDP_CANCELLED;
                goto done;
            }
        }
    }
    sdp_model_park(&p->unet);
    /* 5. decode, in runs of the decoder's batch */
    const struct o2r_io *vi = &vd->inputs[p->v_in], *vo = &vd->outputs[p->v_out];
    for (size_t k = 0; k < nt; k++) xin[k] = lat[k] / prm->scaling_factor;
    size_t ni = (size_t)3 * p->img_h * p->img_w, vsz = o2r_dtype_size(vi->dtype), vosz = o2r_dtype_size(vo->dtype);
    int vb = (int)vi->dims[0];
    for (int i = 0; i < B && p->vae_tiling; i++) { /* the decoder compiled for a tile: one image at a time */
        CANCEL_POINT("before the VAE decoder");
        double tv = now_s();
        if (sdp_vae_tiled_run(&p->vae, xin + (size_t)i * nl, p->lat_c, p->lat_h, p->lat_w, -1, image + (size_t)i * ni,
                              tile_cancel, (void *)prm->cancel, err, errcap))
            goto done;
        tm->vae += now_s() - tv;
    }
    for (int i0 = 0; i0 < B && !p->vae_tiling; i0 += vb) {
        for (int b = 0; b < vb; b++)
            sdp_put_floats((char *)vin[p->v_in] + (size_t)b * nl * vsz, vi->dtype,
                       xin + (size_t)(i0 + b < B ? i0 + b : i0) * nl, nl);
        CANCEL_POINT("before the VAE decoder");
        double tv = now_s();
        if (run_model(&p->vae, (const void *const *)vin, vout, err, errcap)) goto done;
        tm->vae += now_s() - tv;
        for (int b = 0; b < vb && i0 + b < B; b++)
            sdp_get_floats(image + (size_t)(i0 + b) * ni, vo->dtype, (const char *)vout[p->v_out] + (size_t)b * ni * vosz, ni);
    }
    for (size_t k = 0; k < (size_t)B * ni; k++) {
        float v = image[k] / 2.0f + 0.5f;
        image[k] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
    tm->total = now_s() - t_start_s;
    rc = 0;
done:
#undef CANCEL_POINT
    sdp_model_park(&p->te); /* --offload: nothing stays on the device between images */
    sdp_model_park(&p->te2);
    sdp_model_park(&p->venc);
    sdp_model_park(&p->unet);
    sdp_model_park(&p->vae);
    free_io(ud, uin, uout);
    free_io(vd, vin, vout);
    free(emb);
    free(pool);
    free(lat);
    free(xin);
    free(eps);
    free(noise);
    free(ilat);
    free(mlat);
    free(milat);
    free(tmp);
    free(gens);
    return rc;
}
