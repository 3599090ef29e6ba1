/* arch.c — which family a checkpoint is (SD 1.x / 2.x / SDXL), from its canonical keys and shapes,
 * and a check that it is a whole, self-consistent model of that family.
 * Evidence: SDXL's UNet has add_embedding (addition_embed_type "text_time") and its
 * cross-attention reads the two text encoders' hidden states concatenated (X = CLIP-L's H +
 * OpenCLIP-G's G; the refiner: text_encoder_2 alone, X = G); text_encoder_2 has a
 * text_projection. SD 2.x has an OpenCLIP text encoder in single files (cond_stage_model.model.*),
 * linear proj_in/proj_out in the UNet's transformers (use_linear_projection) and cross-attention
 * dim 1024; SD 1.x has CLIP-L (768) and 1x1-conv projections. Files without a UNet conv_in are
 * refused as unknown.
 * Checks (tables below, data): REQUIRED keys with dims over variables bound by the first key that
 * names them (C = block_out_channels[0], T = time embedding, M = mid channels, X = cross-attention
 * dim, ...); MODULES: every ResNet / transformer block / attention / text layer that has one key
 * has all of its keys; every attn2.to_k/to_v weight reads X. To be extended by arch.json
 * matching (docs/engine.md).
 */
#include "store_internal.h"

#include <dirent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LISTED 4

/* dims: a letter binds/compares a variable, a number is literal, '*' is any. xl: 1 = SDXL only. */
static const struct req { enum o2s_component c; const char *key; const char *dims; int xl; } REQUIRED[] = {
    {O2S_UNET, "conv_in.weight", "C I 3 3", 0},
    {O2S_UNET, "conv_in.bias", "C", 0},
    {O2S_UNET, "time_embedding.linear_1.weight", "T C", 0},
    {O2S_UNET, "time_embedding.linear_2.weight", "T T", 0},
    {O2S_UNET, "add_embedding.linear_1.weight", "T A", 1},
    {O2S_UNET, "add_embedding.linear_1.bias", "T", 1},
    {O2S_UNET, "add_embedding.linear_2.weight", "T T", 1},
    {O2S_UNET, "add_embedding.linear_2.bias", "T", 1},
    {O2S_UNET, "down_blocks.0.resnets.0.conv1.weight", "C C 3 3", 0},
    {O2S_UNET, "down_blocks.0.resnets.0.time_emb_proj.weight", "C T", 0},
    {O2S_UNET, "mid_block.resnets.0.conv1.weight", "M M 3 3", 0},
    {O2S_UNET, "mid_block.resnets.0.time_emb_proj.weight", "M T", 0},
    {O2S_UNET, "mid_block.attentions.0.transformer_blocks.0.attn2.to_k.weight", "M X", 0},
    {O2S_UNET, "mid_block.resnets.1.conv2.weight", "M M 3 3", 0},
    {O2S_UNET, "conv_norm_out.weight", "C", 0},
    {O2S_UNET, "conv_out.weight", "* C 3 3", 0},
    {O2S_VAE, "encoder.conv_in.weight", "V 3 3 3", 0},
    {O2S_VAE, "encoder.conv_out.weight", "Z W 3 3", 0},
    {O2S_VAE, "quant_conv.weight", "Z Z 1 1", 0},
    {O2S_VAE, "post_quant_conv.weight", "Y Y 1 1", 0},
    {O2S_VAE, "decoder.conv_in.weight", "* Y 3 3", 0},
    {O2S_VAE, "decoder.conv_out.weight", "3 V 3 3", 0},
    {O2S_VAE, "decoder.mid_block.attentions.0.to_q.weight", "W W", 0},
    {O2S_TEXT_ENCODER, "embeddings.token_embedding.weight", "* H", 0},
    {O2S_TEXT_ENCODER, "embeddings.position_embedding.weight", "* H", 0},
    {O2S_TEXT_ENCODER, "encoder.layers.0.self_attn.q_proj.weight", "H H", 0},
    {O2S_TEXT_ENCODER, "final_layer_norm.weight", "H", 0},
    {O2S_TEXT_ENCODER_2, "embeddings.token_embedding.weight", "* G", 0},
    {O2S_TEXT_ENCODER_2, "embeddings.position_embedding.weight", "* G", 0},
    {O2S_TEXT_ENCODER_2, "encoder.layers.0.self_attn.q_proj.weight", "G G", 0},
    {O2S_TEXT_ENCODER_2, "final_layer_norm.weight", "G", 0},
    {O2S_TEXT_ENCODER_2, "text_projection.weight", "P G", 0},
};

/* A module (prefix pattern, '#' = a number) with one key has all of these. */
#define RESNET "norm1.weight norm1.bias conv1.weight conv1.bias norm2.weight norm2.bias conv2.weight conv2.bias"
#define XFORMER "norm.weight norm.bias proj_in.weight proj_in.bias proj_out.weight proj_out.bias"
#define XBLOCK                                                                                     \
    "norm1.weight norm1.bias attn1.to_q.weight attn1.to_k.weight attn1.to_v.weight "               \
    "attn1.to_out.0.weight attn1.to_out.0.bias norm2.weight norm2.bias attn2.to_q.weight "         \
    "attn2.to_k.weight attn2.to_v.weight attn2.to_out.0.weight attn2.to_out.0.bias norm3.weight "  \
    "norm3.bias ff.net.0.proj.weight ff.net.0.proj.bias ff.net.2.weight ff.net.2.bias"
#define VATTN                                                                                      \
    "group_norm.weight group_norm.bias to_q.weight to_q.bias to_k.weight to_k.bias to_v.weight "   \
    "to_v.bias to_out.0.weight to_out.0.bias"
#define TLAYER                                                                                     \
    "self_attn.q_proj.weight self_attn.q_proj.bias self_attn.k_proj.weight self_attn.k_proj.bias " \
    "self_attn.v_proj.weight self_attn.v_proj.bias self_attn.out_proj.weight "                     \
    "self_attn.out_proj.bias layer_norm1.weight layer_norm1.bias mlp.fc1.weight mlp.fc1.bias "     \
    "mlp.fc2.weight mlp.fc2.bias layer_norm2.weight layer_norm2.bias"
static const struct module { enum o2s_component c; const char *pattern; const char *keys; } MODULES[] = {
    {O2S_UNET, "down_blocks.#.resnets.#.", RESNET " time_emb_proj.weight time_emb_proj.bias"},
    {O2S_UNET, "up_blocks.#.resnets.#.", RESNET " time_emb_proj.weight time_emb_proj.bias"},
    {O2S_UNET, "mid_block.resnets.#.", RESNET " time_emb_proj.weight time_emb_proj.bias"},
    {O2S_UNET, "down_blocks.#.attentions.#.transformer_blocks.#.", XBLOCK},
    {O2S_UNET, "up_blocks.#.attentions.#.transformer_blocks.#.", XBLOCK},
    {O2S_UNET, "mid_block.attentions.#.transformer_blocks.#.", XBLOCK},
    {O2S_UNET, "down_blocks.#.attentions.#.", XFORMER},
    {O2S_UNET, "up_blocks.#.attentions.#.", XFORMER},
    {O2S_UNET, "mid_block.attentions.#.", XFORMER},
    {O2S_UNET, "down_blocks.#.downsamplers.0.", "conv.weight conv.bias"},
    {O2S_UNET, "up_blocks.#.upsamplers.0.", "conv.weight conv.bias"},
    {O2S_VAE, "encoder.down_blocks.#.resnets.#.", RESNET},
    {O2S_VAE, "decoder.up_blocks.#.resnets.#.", RESNET},
    {O2S_VAE, "encoder.mid_block.resnets.#.", RESNET},
    {O2S_VAE, "decoder.mid_block.resnets.#.", RESNET},
    {O2S_VAE, "encoder.mid_block.attentions.#.", VATTN},
    {O2S_VAE, "decoder.mid_block.attentions.#.", VATTN},
    {O2S_TEXT_ENCODER, "encoder.layers.#.", TLAYER},
    {O2S_TEXT_ENCODER_2, "encoder.layers.#.", TLAYER},
};

/* Length of the prefix of key that pattern matches ('#' = digits), or 0. */
static size_t match_module(const char *key, const char *pat)
{
    const char *k = key;
    for (const char *p = pat; *p; p++) {
        if (*p == '#') {
            if (*k < '0' || *k > '9') return 0;
            while (*k >= '0' && *k <= '9') k++;
        } else if (*k++ != *p) {
            return 0;
        }
    }
    return (size_t)(k - key);
}

/* The original key behind canonical key (for messages), or the canonical key. */
static void where(const struct o2s_store *s, enum o2s_component c, const char *key, char *out,
                  size_t cap)
{
    struct o2s_view v;
    if (o2s_find(s, c, key, &v) == 0 && strcmp(v.orig_key, key) != 0)
        snprintf(out, cap, "%s '%s' (file key '%s')", o2s_component_name(c), key, v.orig_key);
    else
        snprintf(out, cap, "%s '%s'", o2s_component_name(c), key);
}

struct report {
    char *buf;
    size_t cap, len;
    int n;
};

static void add(struct report *r, const char *fmt, ...) O2R_PRINTF(2, 3);
static void add(struct report *r, const char *fmt, ...)
{
    if (++r->n > MAX_LISTED) return;
    if (r->len >= r->cap) return;
    r->len += (size_t)snprintf(r->buf + r->len, r->cap - r->len, "%s", r->n > 1 ? "; " : "");
    if (r->len >= r->cap) return;
    va_list ap;
    va_start(ap, fmt);
    r->len += (size_t)vsnprintf(r->buf + r->len, r->cap - r->len, fmt, ap);
    va_end(ap);
}

/* Checks dims of v against spec, binding variables in vars[26] (0 = unbound). */
static bool dims_fit(const struct o2s_view *v, const char *spec, int64_t vars[26], char *want,
                     size_t cap)
{
    int64_t exp[O2S_MAX_RANK];
    int rank = 0;
    bool ok = true;
    size_t n = (size_t)snprintf(want, cap, "[");
    for (const char *p = spec; *p; p++) {
        if (*p == ' ') continue;
        int64_t e = -1;
        char name[24];
        if (*p >= 'A' && *p <= 'Z') {
            int64_t *var = &vars[*p - 'A'];
            if (!*var && rank < v->rank) *var = v->dims[rank];
            e = *var;
            snprintf(name, sizeof name, "%c=%lld", *p, (long long)e);
        } else if (*p == '*') {
            snprintf(name, sizeof name, "*");
        } else {
            e = strtoll(p, NULL, 10);
            while (p[1] >= '0' && p[1] <= '9') p++;
            snprintf(name, sizeof name, "%lld", (long long)e);
        }
        if (rank < O2S_MAX_RANK) exp[rank] = e;
        if (rank >= v->rank || (e >= 0 && v->dims[rank] != e)) ok = false;
        if (n < cap) n += (size_t)snprintf(want + n, cap - n, "%s%s", rank ? "," : "", name);
        rank++;
    }
    if (n < cap) snprintf(want + n, cap - n, "]");
    (void)exp;
    return ok && rank == v->rank;
}

int o2s_detect_arch(const struct o2s_store *s, struct o2s_arch *a, char *err, size_t cap)
{
    memset(a, 0, sizeof *a);
    const char *file = s->nfiles ? s->files[0].path : s->path;
    struct o2s_view v;
    if (!s->nentries[O2S_UNET] && s->nentries[O2S_TRANSFORMER]) { /* SD 3.x, Flux: no UNet checks here */
        const bool sd3 = o2s_find(s, O2S_TRANSFORMER, "pos_embed.proj.weight", NULL) == 0;
        const bool flux = o2s_find(s, O2S_TRANSFORMER, "x_embedder.weight", NULL) == 0;
        if (!sd3 && !flux)
            return o2s_fail(err, cap, "%s: unknown architecture: a transformer that is neither SD 3's "
                            "(pos_embed.proj.weight) nor Flux's (x_embedder.weight)", file);
        snprintf(a->family, sizeof a->family, "%s", sd3 ? "sd3" : "flux");
        snprintf(a->why, sizeof a->why, "transformer %s", sd3 ? "pos_embed.proj.weight (SD3Transformer2DModel)"
                                                             : "x_embedder.weight (FluxTransformer2DModel)");
        if (o2s_find(s, O2S_TEXT_ENCODER, "embeddings.token_embedding.weight", &v) == 0) a->text_hidden = v.dims[1];
        if (o2s_find(s, O2S_TEXT_ENCODER_2, "embeddings.token_embedding.weight", &v) == 0) a->text2_hidden = v.dims[1];
        if (o2s_find(s, O2S_TEXT_ENCODER_2, "text_projection.weight", &v) == 0) a->text2_projection_dim = v.dims[0];
        for (int e = 0; e < 2; e++) { /* the CLIP encoders' layers (Flux's text_encoder_2 is T5: none) */
            const enum o2s_component c = e ? O2S_TEXT_ENCODER_2 : O2S_TEXT_ENCODER;
            int *layers = e ? &a->text2_layers : &a->text_layers, l;
            for (size_t i = 0; i < s->nentries[c]; i++)
                if (sscanf(s->entries[c][i].key, "encoder.layers.%d.", &l) == 1 && l + 1 > *layers) *layers = l + 1;
        }
        if (o2s_find(s, O2S_VAE, "encoder.conv_in.weight", &v) == 0) a->vae_channels = v.dims[0];
        return 0;
    }
    bool xl = o2s_find(s, O2S_UNET, "add_embedding.linear_1.weight", NULL) == 0;
    if (o2s_find(s, O2S_UNET, "conv_in.weight", &v) != 0 && s->format == O2S_FORMAT_DIFFUSERS) {
        /* a folder: name its unet/ and what is there (a variant only, a pickle, nothing) */
        char list[512] = "";
        size_t n = 0;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/unet", s->path);
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d)) && n < sizeof list;)
            if (e->d_name[0] != '.')
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", e->d_name);
        if (d) closedir(d);
        return o2s_fail(err, cap, "%s: diffusers folder without a UNet: %s/ %s%s (expected "
                        "diffusion_pytorch_model.safetensors, or a variant's with --variant, e.g. fp16)",
                        s->path, dir, d ? "holds " : "does not exist", d ? (n ? list : "nothing") : "");
    }
    if (o2s_find(s, O2S_UNET, "conv_in.weight", &v) != 0) {
        char first[320] = "";
        size_t n = 0;
        for (size_t i = 0; i < s->ntensors && i < 3 && n < sizeof first; i++)
            n += (size_t)snprintf(first + n, sizeof first - n, "%s'%s'", i ? ", " : "",
                                  s->tensors[i].name);
        return o2s_fail(err, cap, "%s: unknown architecture: no SD UNet (unet 'conv_in.weight', "
                        "file key 'model.diffusion_model.input_blocks.0.0.weight' in a single "
                        "file) among its %zu tensors (first: %s)", file, s->ntensors, first);
    }
    /* shape checks */
    int64_t vars[26] = {0};
    struct report r = {err, cap, 0, 0};
    char what[320], want[160], got[160];
    for (size_t i = 0; i < sizeof REQUIRED / sizeof REQUIRED[0]; i++) {
        const struct req *q = &REQUIRED[i];
        if (!s->nentries[q->c]) continue; /* component absent (a UNet-only file, ...) */
        if (q->xl && !xl) continue;
        if (o2s_find(s, q->c, q->key, &v) != 0) {
            add(&r, "%s '%s' missing", o2s_component_name(q->c), q->key);
            continue;
        }
        if (!dims_fit(&v, q->dims, vars, want, sizeof want)) {
            where(s, q->c, q->key, what, sizeof what);
            o2s_dims_str(v.dims, v.rank, got, sizeof got);
            add(&r, "%s is %s, expected %s", what, got, want);
        }
    }
    /* every module complete; every cross-attention reads X */
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
        for (size_t i = 0; i < s->nentries[c]; i++) {
            const char *key = s->entries[c][i].key;
            size_t kl = strlen(key);
            if (c == O2S_UNET && vars['X' - 'A'] &&
                (kl > 17 && (strcmp(key + kl - 17, "attn2.to_k.weight") == 0 ||
                             strcmp(key + kl - 17, "attn2.to_v.weight") == 0))) {
                o2s_get(s, O2S_UNET, i, &v);
                if (v.rank != 2 || v.dims[1] != vars['X' - 'A']) {
                    where(s, O2S_UNET, key, what, sizeof what);
                    o2s_dims_str(v.dims, v.rank, got, sizeof got);
                    add(&r, "%s is %s, expected [*,%lld] (cross-attention dim)", what, got,
                        (long long)vars['X' - 'A']);
                }
            }
            for (size_t m = 0; m < sizeof MODULES / sizeof MODULES[0]; m++) {
                if ((int)MODULES[m].c != c) continue;
                size_t pl = match_module(key, MODULES[m].pattern);
                if (!pl) continue;
                /* check the module once: at its first key in sort order */
                if (i > 0 && strncmp(s->entries[c][i - 1].key, key, pl) == 0 &&
                    match_module(s->entries[c][i - 1].key, MODULES[m].pattern) == pl)
                    continue;
                const char *p = MODULES[m].keys;
                while (*p) {
                    size_t l = strcspn(p, " ");
                    char full[O2S_KEY_MAX];
                    if (pl + l + 1 <= sizeof full) {
                        memcpy(full, key, pl);
                        memcpy(full + pl, p, l);
                        full[pl + l] = 0;
                        if (o2s_find(s, (enum o2s_component)c, full, NULL) != 0)
                            add(&r, "%s '%s' missing (module '%.*s' is incomplete)",
                                o2s_component_name(c), full, (int)pl, key);
                    }
                    p += l;
                    while (*p == ' ') p++;
                }
                break; /* the first (most specific) module pattern owns the key */
            }
        }
    }
    if (r.n) {
        char list[1024];
        snprintf(list, sizeof list, "%s", err);
        return o2s_fail(err, cap, "%s: not a complete %s checkpoint: %d problem%s: %s%s",
                        file, xl ? "SDXL" : "SD 1.x/2.x", r.n, r.n > 1 ? "s" : "", list, r.n > MAX_LISTED ? "; ..." : "");
    }
    /* config */
    o2s_find(s, O2S_UNET, "conv_in.weight", &v);
    a->unet_in_channels = v.dims[1];
    a->unet_model_channels = v.dims[0];
    a->cross_attention_dim = vars['X' - 'A'];
    int maxdown = -1, maxres = -1;
    for (size_t i = 0; i < s->nentries[O2S_UNET]; i++) {
        const char *key = s->entries[O2S_UNET][i].key;
        int b, j;
        if (sscanf(key, "down_blocks.%d.resnets.%d.", &b, &j) == 2) {
            if (b > maxdown) maxdown = b;
            if (b == 0 && j > maxres) maxres = j;
        }
        if (strstr(key, "attentions.") && strstr(key, ".proj_in.weight")) {
            o2s_get(s, O2S_UNET, i, &v);
            a->use_linear_projection = v.rank == 2;
        }
    }
    a->unet_down_blocks = maxdown + 1;
    a->unet_layers_per_block = maxres + 1;
    if (o2s_find(s, O2S_TEXT_ENCODER, "embeddings.token_embedding.weight", &v) == 0) {
        a->text_hidden = v.dims[1];
        a->text_openclip = strncmp(v.orig_key, "cond_stage_model.model.", 23) == 0;
        for (size_t i = 0; i < s->nentries[O2S_TEXT_ENCODER]; i++) {
            int l;
            if (sscanf(s->entries[O2S_TEXT_ENCODER][i].key, "encoder.layers.%d.", &l) ==
                    1 && l + 1 > a->text_layers)
                a->text_layers = l + 1;
        }
    }
    if (o2s_find(s, O2S_VAE, "encoder.conv_in.weight", &v) == 0) a->vae_channels = v.dims[0];
    if (o2s_find(s, O2S_TEXT_ENCODER_2, "embeddings.token_embedding.weight", &v) == 0) {
        a->text2_hidden = v.dims[1];
        a->text2_openclip = strncmp(v.orig_key, "conditioner.embedders.", 22) == 0 &&
                            strstr(v.orig_key, ".model.") != NULL;
        for (size_t i = 0; i < s->nentries[O2S_TEXT_ENCODER_2]; i++) {
            int l;
            if (sscanf(s->entries[O2S_TEXT_ENCODER_2][i].key, "encoder.layers.%d.", &l) == 1 &&
                l + 1 > a->text2_layers)
                a->text2_layers = l + 1;
        }
        if (o2s_find(s, O2S_TEXT_ENCODER_2, "text_projection.weight", &v) == 0)
            a->text2_projection_dim = v.dims[0];
    }
    if (xl) {
        a->addition_embed_dim = vars['A' - 'A'];
        bool refiner = a->text2_hidden && !a->text_hidden;
        int64_t want = a->text_hidden + a->text2_hidden;
        if (!a->text2_hidden && a->text_hidden)
            return o2s_fail(err, cap, "%s: unknown architecture: SDXL evidence (UNet add_embedding) "
                            "and a text_encoder, but no text_encoder_2 (SDXL's OpenCLIP ViT-bigG, "
                            "conditioner.embedders.1.model.* in a single file)", file);
        if (want && a->cross_attention_dim != want)
            return o2s_fail(err, cap, "%s: unknown architecture: SDXL evidence (UNet add_embedding) "
                            "with cross-attention dim %lld, but the text encoders' hidden sizes "
                            "add up to %lld (text_encoder %lld + text_encoder_2 %lld)", file,
                            (long long)a->cross_attention_dim, (long long)want,
                            (long long)a->text_hidden, (long long)a->text2_hidden);
        snprintf(a->family, sizeof a->family, "%s", refiner ? "sdxl_refiner" : "sdxl");
        snprintf(a->why, sizeof a->why, "UNet add_embedding (text_time, input %lld), %s proj_in, "
                 "cross-attention dim %lld%s", (long long)a->addition_embed_dim,
                 a->use_linear_projection ? "linear" : "1x1-conv", (long long)a->cross_attention_dim,
                 refiner ? " = OpenCLIP-G" : a->text_hidden ? " = CLIP-L + OpenCLIP-G" : "");
        return 0;
    }
    if (a->text2_hidden)
        return o2s_fail(err, cap, "%s: unknown architecture: a text_encoder_2 without SDXL's UNet "
                        "add_embedding", file);
    int sd2 = a->text_openclip || a->use_linear_projection;
    const char *conflict = NULL;
    if (a->cross_attention_dim == 768 && sd2) conflict = "cross-attention dim 768 (SD 1.x)";
    if (a->cross_attention_dim == 1024 && !sd2) conflict = "cross-attention dim 1024 (SD 2.x)";
    if (a->text_openclip && !a->use_linear_projection)
        conflict = "an OpenCLIP text encoder (SD 2.x) with 1x1-conv projections (SD 1.x)";
    if (conflict)
        return o2s_fail(err, cap, "%s: unknown architecture: %s%s with %s", file,
                        sd2 ? "SD 2.x evidence (" : "SD 1.x evidence (",
                        a->text_openclip ? "OpenCLIP text encoder)" : a->use_linear_projection
                            ? "linear proj_in)" : "1x1-conv proj_in)", conflict);
    snprintf(a->family, sizeof a->family, "%s", sd2 ? "sd2" : "sd1");
    snprintf(a->why, sizeof a->why, "%s proj_in, cross-attention dim %lld%s",
             a->use_linear_projection ? "linear" : "1x1-conv", (long long)a->cross_attention_dim,
             a->text_hidden ? (a->text_openclip ? ", OpenCLIP text encoder"
                                                : ", CLIP text encoder") : "");
    return 0;
}
