/* test_store.c CKPT_DIR WORK_DIR — the store (store/) against the reference listing of the tiny random
 * SD 1.x / 2.x checkpoints (models/make_test_checkpoints.py): every layout (diffusers folder,
 * its fp16 variant, a sharded UNet, a single component file, a text encoder in transformers 4.x
 * naming, standalone VAE files (LDM keys without prefix; diffusers keys outside a vae/ folder), LDM single files in F32/F16/BF16,
 * with EMA ignored and used) gives, per component, exactly the reference's canonical keys, with
 * the reference's dims, and values whose float32 conversion hashes (sha256) to the reference's
 * (of the values rounded to the file's dtype). Also: the views are zero-copy (inside the file's
 * mapping: the OpenCLIP q/k/v row slices of one in_proj tensor are adjacent), the original keys
 * are the LDM ones, family detection, the metadata. Label unit. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#include "sha256.h" /* runtime/ */

static int failures, checks;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(c)) {                                                                                \
            failures++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

struct ref {
    int comp;
    char key[256];
    int rank;
    int64_t dims[8];
    char sha[3][65]; /* f32, f16-rounded, bf16-rounded */
};
static struct ref refs[4096];
static int nrefs;

static void load_refs(const char *path)
{
    nrefs = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("FAIL cannot open %s\n", path);
        exit(1);
    }
    char line[1024];
    while (fgets(line, sizeof line, f) && nrefs < (int)(sizeof refs / sizeof refs[0])) {
        if (line[0] == '#') continue;
        struct ref *r = &refs[nrefs];
        char comp[32], shape[128];
        if (sscanf(line, "%31s %255s %127s %64s %64s %64s", comp, r->key, shape, r->sha[0],
                   r->sha[1], r->sha[2]) != 6) {
            printf("FAIL bad reference line: %s", line);
            exit(1);
        }
        r->comp = o2s_component_from_name(comp);
        r->rank = 0;
        for (char *p = shape; *p;) {
            r->dims[r->rank++] = strtoll(p, &p, 10);
            if (*p == ',') p++;
        }
        nrefs++;
    }
    fclose(f);
}

static void hex(const uint8_t d[32], char out[65])
{
    for (int i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

/* Opens path with opt and checks components mask against the reference (column col; unet values
 * halved when halve_unet: the EMA copy holds 2x). */
static void check_variant(const char *name, const char *path, const struct o2s_options *opt,
                          unsigned mask, int col, int halve_unet, const char *family)
{
    char err[2048];
    struct o2s_store *s = o2s_open(path, opt, err, sizeof err);
    CHECK(s, "%s: open: %s", name, err);
    if (!s) return;
    int bad = 0, compared = 0;
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
        size_t want = 0;
        for (int i = 0; i < nrefs; i++) want += (mask >> c & 1) && refs[i].comp == c;
        CHECK(o2s_count(s, c) == want, "%s: %s: %zu keys, the reference has %zu", name,
              o2s_component_name(c), o2s_count(s, c), want);
    }
    for (int i = 0; i < nrefs; i++) {
        const struct ref *r = &refs[i];
        if (!(mask >> r->comp & 1)) continue;
        struct o2s_view v;
        if (o2s_find(s, r->comp, r->key, &v) != 0) {
            if (bad++ < 5) CHECK(0, "%s: %s '%s' not found", name, o2s_component_name(r->comp), r->key);
            continue;
        }
        if (v.rank != r->rank || memcmp(v.dims, r->dims, sizeof(int64_t) * (size_t)r->rank)) {
            if (bad++ < 5) CHECK(0, "%s: '%s': dims differ", name, r->key);
            continue;
        }
        uint64_t n = o2s_elements(&v);
        CHECK(v.bytes == n * o2s_dtype_size(v.dtype), "%s: '%s': bytes", name, r->key);
        float *x = malloc(n * 4 + 4);
        o2s_to_f32(&v, x);
        if (halve_unet && r->comp == O2S_UNET)
            for (uint64_t k = 0; k < n; k++) x[k] *= 0.5f;
        uint8_t d[32];
        char h[65];
        o2r_sha256(x, n * 4, d);
        hex(d, h);
        free(x);
        if (strcmp(h, r->sha[col]) != 0 && bad++ < 5)
            CHECK(0, "%s: %s '%s' (file key '%s'): values differ from the reference", name,
                  o2s_component_name(r->comp), r->key, v.orig_key);
        compared++;
    }
    CHECK(!bad, "%s: %d keys wrong", name, bad);
    struct o2s_arch a;
    int ar = o2s_detect_arch(s, &a, err, sizeof err);
    if (!(mask & 1u << O2S_UNET)) /* no UNet: no family */
        CHECK(ar != 0 && strstr(err, "no SD UNet"), "%s: arch without a UNet: %s", name, err);
    else CHECK(ar == 0, "%s: arch: %s", name, err);
    if (ar == 0) CHECK(strcmp(a.family, family) == 0, "%s: family %s, expected %s", name, a.family, family);
    printf("%-28s %3d keys, values match (%s%s)\n", name, compared,
           col == 0 ? "f32" : col == 1 ? "f16" : "bf16", halve_unet ? ", EMA unet" : "");
    o2s_close(s);
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[65536];
    size_t r;
    while (a && b && (r = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, r, b);
    CHECK(a && b, "copy %s -> %s", from, to);
    if (a) fclose(a);
    if (b) fclose(b);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_store CKPT_DIR WORK_DIR\n");
        return 2;
    }
    const char *dir = argv[1], *work = argv[2];
    char p[4096], rp[4096], n[4096];
    const unsigned ALL = 1u << O2S_UNET | 1u << O2S_VAE | 1u << O2S_TEXT_ENCODER;
    const unsigned UNET = 1u << O2S_UNET;
    struct o2s_options fp16 = {.variant = "fp16"}, ema = {.use_ema = 1};
    for (int fam = 0; fam < 2; fam++) {
        const char *f = fam ? "sd2" : "sd1";
        snprintf(rp, sizeof rp, "%s/%s/reference.tsv", dir, f);
        load_refs(rp);
        CHECK(nrefs == 368, "%s: %d reference keys", f, nrefs);
#define V(label, rel, opt, mask, col, halve)                                                     \
    snprintf(p, sizeof p, "%s/%s/" rel, dir, f, f);                                               \
    snprintf(n, sizeof n, "%s " label, f);                                                       \
    check_variant(n, p, opt, mask, col, halve, f)
        V("diffusers", "diffusers%.0s", NULL, ALL, 0, 0);
        V("diffusers fp16", "diffusers%.0s", &fp16, ALL, 1, 0);
        V("sharded unet", "sharded%.0s", NULL, UNET, 0, 0);
        V("component file", "diffusers/unet/diffusion_pytorch_model%.0s.safetensors", NULL, UNET, 0, 0);
        if (!fam) {
            V("text encoder, text_model.*", "transformers4/text_encoder/model%.0s.safetensors", NULL,
              1u << O2S_TEXT_ENCODER, 0, 0);
            V("standalone LDM VAE f16", "vae_ldm_f16%.0s.safetensors", NULL, 1u << O2S_VAE, 1, 0);
            /* a diffusers VAE file outside a vae/ folder: known by its keys */
            snprintf(p, sizeof p, "%s/sd1/diffusers/vae/diffusion_pytorch_model.safetensors", dir);
            snprintf(n, sizeof n, "%s/standalone_vae.safetensors", work);
            copy_file(p, n);
            check_variant("sd1 standalone diffusers VAE", n, NULL, 1u << O2S_VAE, 0, 0, f);
        }
        V("single f32", "%s.safetensors", NULL, ALL, 0, 0);
        V("single f16", "%s_f16.safetensors", NULL, ALL, 1, 0);
        V("single bf16", "%s_bf16.safetensors", NULL, ALL, 2, 0);
        V("single +ema, ema ignored", "%s_ema.safetensors", NULL, ALL, 0, 0);
        V("single +ema, ema used", "%s_ema.safetensors", &ema, ALL, 0, 1);
#undef V
    }

    /* SDXL (models/ckpt/sdxl: tiny_sdxl's configs, float16-exact values): the diffusers folder
     * (text_encoder_2 in CLIPTextModelWithProjection naming), the sgm single file
     * (conditioner.embedders.*, label_emb), the refiner's OpenCLIP-G-only layout */
    snprintf(rp, sizeof rp, "%s/sdxl/reference.tsv", dir);
    load_refs(rp);
    CHECK(nrefs == 979, "sdxl: %d reference keys", nrefs);
    const unsigned ALL4 = ALL | 1u << O2S_TEXT_ENCODER_2;
    snprintf(p, sizeof p, "%s/sdxl/diffusers", dir);
    check_variant("sdxl diffusers f16", p, NULL, ALL4, 0, 0, "sdxl");
    snprintf(p, sizeof p, "%s/sdxl/sdxl.safetensors", dir);
    check_variant("sdxl single f16", p, NULL, ALL4, 0, 0, "sdxl");
    snprintf(p, sizeof p, "%s/sdxl/refiner_te2.safetensors", dir);
    check_variant("sdxl refiner layout, te2", p, NULL, 1u << O2S_TEXT_ENCODER_2, 0, 0, "sdxl_refiner");
    {
        char err0[2048];
        snprintf(p, sizeof p, "%s/sdxl/sdxl.safetensors", dir);
        struct o2s_store *x = o2s_open(p, NULL, err0, sizeof err0);
        CHECK(x, "open %s: %s", p, err0);
        struct o2s_view v, q, k;
        if (x) {
            CHECK(o2s_find(x, O2S_TEXT_ENCODER_2, "text_projection.weight", &v) == 0 && v.transposed &&
                  v.rank == 2 && v.dims[0] == 40 && v.dims[1] == 48 &&
                  strcmp(v.orig_key, "conditioner.embedders.1.model.text_projection") == 0,
                  "text_projection.weight: a transposed [40,48] view of the OpenCLIP [48,40]");
            CHECK(o2s_find(x, O2S_UNET, "add_embedding.linear_2.bias", &v) == 0 &&
                  strcmp(v.orig_key, "model.diffusion_model.label_emb.0.2.bias") == 0, "label_emb.0.2");
            CHECK(o2s_find(x, O2S_UNET, "down_blocks.1.downsamplers.0.conv.weight", &v) == 0 &&
                  strcmp(v.orig_key, "model.diffusion_model.input_blocks.6.0.op.weight") == 0,
                  "layers_per_block 2: %s", v.orig_key);
            CHECK(o2s_find(x, O2S_UNET, "up_blocks.1.attentions.2.transformer_blocks.1.attn2.to_k.weight", &v) == 0 &&
                  strcmp(v.orig_key, "model.diffusion_model.output_blocks.5.1.transformer_blocks.1.attn2.to_k.weight") == 0,
                  "transformer_layers_per_block 2: %s", v.orig_key);
            CHECK(o2s_find(x, O2S_TEXT_ENCODER_2, "encoder.layers.2.self_attn.q_proj.weight", &q) == 0 &&
                  o2s_find(x, O2S_TEXT_ENCODER_2, "encoder.layers.2.self_attn.k_proj.weight", &k) == 0 &&
                  (const char *)k.data == (const char *)q.data + q.bytes,
                  "SDXL keeps OpenCLIP-G's last layer (q/k slices of resblocks.2)");
            CHECK(o2s_find(x, O2S_TEXT_ENCODER, "encoder.layers.2.mlp.fc1.weight", &v) == 0 &&
                  strcmp(v.orig_key, "conditioner.embedders.0.transformer.text_model.encoder.layers.2.mlp.fc1.weight") == 0,
                  "CLIP-L under conditioner.embedders.0.transformer");
            struct o2s_info in;
            o2s_info(x, &in);
            CHECK(in.unknown == 0 && in.ignored == 2, "sdxl: %zu unknown, %zu ignored (position_ids, "
                  "logit_scale)", in.unknown, in.ignored);
            struct o2s_arch a;
            CHECK(o2s_detect_arch(x, &a, err0, sizeof err0) == 0 && a.addition_embed_dim == 88 &&
                  a.text2_hidden == 48 && a.text2_layers == 3 && a.text2_projection_dim == 40 &&
                  a.text_hidden == 32 && a.cross_attention_dim == 80 && a.text2_openclip,
                  "sdxl arch fields: %s", err0);
            /* o2s_to_f32 of the transposed view = the diffusers folder's (plain) tensor */
            snprintf(p, sizeof p, "%s/sdxl/diffusers", dir);
            struct o2s_store *y = o2s_open(p, NULL, err0, sizeof err0);
            struct o2s_view w;
            if (y && o2s_find(x, O2S_TEXT_ENCODER_2, "text_projection.weight", &v) == 0 &&
                o2s_find(y, O2S_TEXT_ENCODER_2, "text_projection.weight", &w) == 0) {
                CHECK(!w.transposed && w.rank == 2 && w.dims[0] == 40 && w.dims[1] == 48, "folder view plain");
                float a1[40 * 48], b1[40 * 48];
                o2s_to_f32(&v, a1);
                o2s_to_f32(&w, b1);
                CHECK(memcmp(a1, b1, sizeof a1) == 0, "transposed view converts to the folder's values");
            } else {
                CHECK(0, "sdxl folder: %s", err0);
            }
            o2s_close(y);
        }
        o2s_close(x);
    }

    /* details of one LDM file of each family */
    char err[2048];
    snprintf(p, sizeof p, "%s/sd2/sd2.safetensors", dir);
    struct o2s_store *s = o2s_open(p, NULL, err, sizeof err);
    CHECK(s, "open %s: %s", p, err);
    if (s) {
        struct o2s_view q, k, v;
        const char *base = "encoder.layers.1.self_attn.";
        char key[128];
        snprintf(key, sizeof key, "%sq_proj.weight", base);
        CHECK(o2s_find(s, O2S_TEXT_ENCODER, key, &q) == 0, "q_proj");
        snprintf(key, sizeof key, "%sk_proj.weight", base);
        CHECK(o2s_find(s, O2S_TEXT_ENCODER, key, &k) == 0, "k_proj");
        snprintf(key, sizeof key, "%sv_proj.weight", base);
        CHECK(o2s_find(s, O2S_TEXT_ENCODER, key, &v) == 0, "v_proj");
        CHECK(strcmp(q.orig_key, "cond_stage_model.model.transformer.resblocks.1.attn.in_proj_weight") == 0,
              "q_proj from %s", q.orig_key);
        CHECK((const char *)k.data == (const char *)q.data + q.bytes &&
              (const char *)v.data == (const char *)k.data + k.bytes,
              "q/k/v are adjacent row slices of one mapped tensor");
        CHECK(q.rank == 2 && q.dims[0] == 16 && q.dims[1] == 16, "q_proj dims");
        CHECK(o2s_find(s, O2S_VAE, "decoder.mid_block.attentions.0.to_q.weight", &v) == 0 &&
              v.rank == 2 && strcmp(v.orig_key, "first_stage_model.decoder.mid.attn_1.q.weight") == 0,
              "VAE 1x1 conv q as linear [C,C]");
        CHECK(o2s_find(s, O2S_UNET, "up_blocks.0.upsamplers.0.conv.weight", &v) == 0 &&
              strcmp(v.orig_key, "model.diffusion_model.output_blocks.1.1.conv.weight") == 0,
              "upsampler of a block without attention: %s", v.orig_key);
        CHECK(o2s_find(s, O2S_UNET, "down_blocks.1.resnets.0.conv_shortcut.weight", &v) == 0 &&
              strcmp(v.orig_key, "model.diffusion_model.input_blocks.3.0.skip_connection.weight") == 0,
              "skip_connection");
        CHECK(o2s_find(s, O2S_TEXT_ENCODER, "text_projection", &v) != 0, "text_projection ignored");
        struct o2s_info in;
        o2s_info(s, &in);
        CHECK(in.unknown == 0 && in.ignored == 3, "sd2: %zu unknown, %zu ignored", in.unknown,
              in.ignored);
        const char *m = o2s_metadata(s, "format");
        CHECK(m && strcmp(m, "pt") == 0, "__metadata__ kept");
        o2s_close(s);
    }
    snprintf(p, sizeof p, "%s/sd1/diffusers", dir);
    struct o2s_options none = {.variant = "fp32x"};
    s = o2s_open(p, &none, err, sizeof err);
    CHECK(!s && strstr(err, "variant 'fp32x' asked"), "a missing variant is an error: %s", err);
    o2s_close(s);
    snprintf(p, sizeof p, "%s/sd1/sd1.safetensors", dir);
    s = o2s_open(p, &ema, err, sizeof err);
    CHECK(!s && strstr(err, "no model_ema"), "EMA asked of a file without: %s", err);
    o2s_close(s);
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
