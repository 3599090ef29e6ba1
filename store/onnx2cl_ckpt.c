/* onnx2cl-ckpt — look inside a checkpoint as the store sees it.
 *   onnx2cl-ckpt info CHECKPOINT [--variant fp16] [--ema] [--arch-dir DIR]
 *       format, files, dtypes, components and their tensor counts, the detected family (or why
 *       none), the installed architecture it is (every key and dim of DIR/<arch>/arch.json, as
 *       onnx2cl-sd -m picks it), ignored and unknown keys. Exit 1 if the checkpoint cannot be
 *       opened, is no known family or matches no installed architecture.
 *   onnx2cl-ckpt info LORA.safetensors [--base CHECKPOINT]
 *       a LoRA file: its naming (kohya, diffusers/PEFT; LyCORIS LoHa/LoKr and DoRA named as not
 *       supported), module counts per component and its kohya metadata; with --base, every
 *       module resolved against the checkpoint as onnx2cl-sd --lora does (ranks, alphas), exit 1
 *       when it does not fit.
 *   onnx2cl-ckpt list CHECKPOINT [--component unet] [--variant fp16] [--ema]
 *       one line per canonical key: component, key, dims, dtype, file key.
 * Errors go to stderr naming the file and key; exit 1 (2 for a usage error).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h" /* o2r_exe_path */
#include "store.h"

#include <sys/stat.h>

static int usage(void)
{
    fprintf(stderr,
            "usage: onnx2cl-ckpt info CHECKPOINT [--variant V] [--ema] [--arch-dir DIR]\n"
            "       onnx2cl-ckpt info LORA.safetensors [--base CHECKPOINT]\n"
            "       onnx2cl-ckpt list CHECKPOINT [--component NAME] [--variant V] [--ema]\n"
            "CHECKPOINT: a .safetensors file (single-file LDM layout or one diffusers component)\n"
            "or a diffusers folder. Components: unet, vae, text_encoder, text_encoder_2, transformer, text_encoder_3.\n");
    return 2;
}

static const char *format_name(enum o2s_format f)
{
    return f == O2S_FORMAT_LDM         ? "single file (original layout: LDM / SAI MMDiT / BFL Flux keys)"
           : f == O2S_FORMAT_COMPONENT ? "single file (one diffusers component)"
                                       : "diffusers folder";
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The installed architectures, as onnx2cl-sd finds them (sde_default_arch_dir): <exe
 * dir>/../share/onnx2cl/arch, else the configured install folder, else the source tree's
 * models/arch. Returns 0, or -1 when none exists. */
static int default_arch_dir(char *buf, size_t cap)
{
    char exe[4096];
    if (o2r_exe_path(exe, sizeof exe) && strlen(exe) + 32 < cap) {
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(buf, cap, "%.*s/../share/onnx2cl/arch", (int)(cap - 32), exe);
        if (is_dir(buf)) return 0;
    }
#ifdef ONNX2CL_ARCH_INSTALL_DIR
    snprintf(buf, cap, "%s", ONNX2CL_ARCH_INSTALL_DIR);
    if (is_dir(buf)) return 0;
#endif
#ifdef ONNX2CL_ARCH_SOURCE_DIR
    snprintf(buf, cap, "%s", ONNX2CL_ARCH_SOURCE_DIR);
    if (is_dir(buf)) return 0;
#endif
    return -1;
}

static int has_suffix(const char *k, const char *suf)
{
    size_t n = strlen(k), m = strlen(suf);
    return n >= m && strcmp(k + n - m, suf) == 0;
}

/* LoRA naming of a file whose keys no checkpoint table knows: counts of down factors per
 * naming, per component, and the unsupported kinds (LyCORIS, DoRA). */
struct lora_scan {
    size_t kohya, peft, old_diffusers, lycoris, dora, other;
    size_t unet, te, te2;
    const char *first_lycoris, *first_other;
};

static void scan_lora(const struct o2s_store *s, size_t n_unknown, struct lora_scan *r)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < n_unknown; i++) {
        const char *k = o2s_unknown_key(s, i);
        int down = 0;
        if (strstr(k, ".hada_") || strstr(k, ".lokr_") || strstr(k, ".oft_") || strstr(k, ".diff")) {
            r->lycoris++;
            if (!r->first_lycoris) r->first_lycoris = k;
            continue;
        }
        if (has_suffix(k, ".dora_scale") || has_suffix(k, ".lora_magnitude_vector")) {
            r->dora++;
            continue;
        }
        if (has_suffix(k, ".lora_down.weight")) r->kohya++, down = 1;
        else if (strstr(k, ".lora_A.")) r->peft++, down = 1;
        else if (has_suffix(k, ".lora.down.weight")) r->old_diffusers++, down = 1;
        else if (has_suffix(k, ".alpha") || has_suffix(k, ".lora_up.weight") || strstr(k, ".lora_B.") ||
                 has_suffix(k, ".lora.up.weight"))
            continue;
        else {
            r->other++;
            if (!r->first_other) r->first_other = k;
            continue;
        }
        if (down) {
            if (!strncmp(k, "lora_unet_", 10) || !strncmp(k, "unet.", 5)) r->unet++;
            else if (!strncmp(k, "lora_te2_", 9) || !strncmp(k, "text_encoder_2.", 15)) r->te2++;
            else r->te++;
        }
    }
}

/* `info` of a LoRA file (its keys all unknown to the checkpoint tables). Returns the exit status. */
static int info_lora(const struct o2s_store *s, const char *path, size_t n_unknown, const char *base_path,
                     const struct o2s_options *opt)
{
    struct lora_scan r;
    scan_lora(s, n_unknown, &r);
    size_t modules = r.kohya + r.peft + r.old_diffusers;
    printf("LoRA: %zu modules (", modules);
    const char *sep = "";
    if (r.kohya) printf("%skohya lora_down/lora_up %zu", sep, r.kohya), sep = ", ";
    if (r.peft) printf("%sdiffusers/PEFT lora_A/lora_B %zu", sep, r.peft), sep = ", ";
    if (r.old_diffusers) printf("%solder diffusers lora.down/lora.up %zu", sep, r.old_diffusers);
    printf("): unet %zu, text_encoder %zu, text_encoder_2 %zu\n", r.unet, r.te, r.te2);
    static const char *const meta[] = {"ss_output_name", "ss_sd_model_name", "ss_base_model_version",
                                       "ss_network_module", "ss_network_dim", "ss_network_alpha",
                                       "modelspec.architecture", "modelspec.title"};
    for (size_t i = 0; i < sizeof meta / sizeof *meta; i++) {
        const char *v = o2s_metadata(s, meta[i]);
        if (v) printf("metadata %s: %.200s\n", meta[i], v);
    }
    int rc = 0;
    if (r.lycoris)
        fprintf(stderr, "onnx2cl-ckpt: %s: LyCORIS modules (LoHa/LoKr/OFT: %zu keys, first '%s') are not "
                "supported; onnx2cl-sd --lora refuses this file\n", path, r.lycoris, r.first_lycoris), rc = 1;
    if (r.dora)
        fprintf(stderr, "onnx2cl-ckpt: %s: DoRA magnitude vectors (%zu) are not supported; onnx2cl-sd --lora "
                "refuses this file\n", path, r.dora), rc = 1;
    if (r.other)
        fprintf(stderr, "onnx2cl-ckpt: %s: %zu keys of no LoRA naming (first '%s')\n", path, r.other,
                r.first_other), rc = 1;
    if (!base_path) {
        if (!rc)
            printf("use: onnx2cl-sd -m CHECKPOINT --lora %s:0.8, or <lora:NAME:0.8> in the prompt with "
                   "--lora-dir (NAME: the file's stem); --base CHECKPOINT checks that it fits\n", path);
        return rc;
    }
    char err[2048];
    struct o2s_store *base = o2s_open(base_path, opt, err, sizeof err);
    if (!base) {
        fprintf(stderr, "onnx2cl-ckpt: --base: %s\n", err);
        return 1;
    }
    struct o2s_lora *l = o2s_lora_open(path, base, err, sizeof err);
    if (!l) {
        fprintf(stderr, "onnx2cl-ckpt: %s\n", err);
        o2s_close(base);
        return 1;
    }
    size_t n = o2s_lora_count(l), per[O2S_NUM_COMPONENTS] = {0};
    int rmin = 0, rmax = 0;
    float amin = 0, amax = 0;
    for (size_t i = 0; i < n; i++) {
        const struct o2s_lora_entry *e = o2s_lora_get(l, i);
        per[e->component]++;
        if (!i || e->rank < rmin) rmin = e->rank;
        if (!i || e->rank > rmax) rmax = e->rank;
        if (!i || e->alpha < amin) amin = e->alpha;
        if (!i || e->alpha > amax) amax = e->alpha;
    }
    printf("fits %s: %zu weights changed (", base_path, n);
    for (int c = 0, first = 1; c < O2S_NUM_COMPONENTS; c++)
        if (per[c]) printf("%s%s %zu", first ? "" : ", ", o2s_component_name((enum o2s_component)c), per[c]), first = 0;
    printf("), rank %d", rmin);
    if (rmax != rmin) printf("..%d", rmax);
    printf(", alpha %g", amin);
    if (amax != amin) printf("..%g", amax);
    printf("\n");
    o2s_lora_close(l);
    o2s_close(base);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) return usage();
    const char *cmd = argv[1], *path = argv[2];
    bool info_cmd = strcmp(cmd, "info") == 0;
    if (!info_cmd && strcmp(cmd, "list") != 0) return usage();
    struct o2s_options opt = {0};
    int only = -1;
    const char *arch_dir = NULL, *base_path = NULL;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--variant") == 0 && i + 1 < argc) {
            opt.variant = argv[++i];
        } else if (strcmp(argv[i], "--ema") == 0) {
            opt.use_ema = 1;
        } else if (strcmp(argv[i], "--arch-dir") == 0 && i + 1 < argc && info_cmd) {
            arch_dir = argv[++i];
        } else if (strcmp(argv[i], "--base") == 0 && i + 1 < argc && info_cmd) {
            base_path = argv[++i];
        } else if (strcmp(argv[i], "--component") == 0 && i + 1 < argc && !info_cmd) {
            only = o2s_component_from_name(argv[++i]);
            if (only < 0) {
                fprintf(stderr, "onnx2cl-ckpt: --component %s: expected unet, vae, text_encoder "
                        "or text_encoder_2\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "onnx2cl-ckpt: unknown option '%s'\n", argv[i]);
            return usage();
        }
    }
    char err[2048];
    struct o2s_store *s = o2s_open(path, &opt, err, sizeof err);
    if (!s) {
        fprintf(stderr, "onnx2cl-ckpt: %s\n", err);
        return 1;
    }
    int rc = 0;
    if (info_cmd) {
        struct o2s_info in;
        o2s_info(s, &in);
        if (o2s_is_lora(s)) { /* the store's test (store.h); info_lora gives the details */
            printf("file: %s (%" PRIu64 " bytes, %zu tensors)\n", in.path, in.file_bytes, in.tensors);
            rc = info_lora(s, path, in.unknown, base_path, &opt);
            o2s_close(s);
            return rc;
        }
        if (base_path) {
            fprintf(stderr, "onnx2cl-ckpt: --base %s: %s is not a LoRA file (no lora_down/lora_A keys)\n",
                    base_path, path);
            o2s_close(s);
            return 2;
        }
        printf("checkpoint: %s\nformat: %s\nfiles: %d (%" PRIu64 " bytes)\n", in.path,
               format_name(in.format), in.files, in.file_bytes);
        if (in.variant) printf("variant: %s\n", in.variant);
        printf("tensors: %zu (%zu mapped, %zu ignored, %zu unknown)\n", in.tensors, in.mapped,
               in.ignored, in.unknown);
        printf("dtypes:");
        for (int t = O2S_F32; t <= O2S_BF16; t++)
            if (in.by_dtype[t]) printf(" %s %zu", o2s_dtype_name((enum o2s_dtype)t), in.by_dtype[t]);
        printf("\nema: %s\n", in.has_ema ? (opt.use_ema ? "present, used" : "present, ignored")
                                          : "none");
        for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
            size_t n = o2s_count(s, (enum o2s_component)c);
            if (!n) continue;
            uint64_t params = 0;
            struct o2s_view v;
            for (size_t i = 0; i < n; i++) {
                o2s_get(s, (enum o2s_component)c, i, &v);
                params += o2s_elements(&v);
            }
            printf("component %s: %zu tensors, %" PRIu64 " parameters\n",
                   o2s_component_name((enum o2s_component)c), n, params);
        }
        struct o2s_arch a;
        if (o2s_detect_arch(s, &a, err, sizeof err) == 0) {
            printf("family: %s (%s)\n", a.family, a.why);
            if (a.unet_in_channels) /* SD 3.x / Flux: a transformer, no UNet */
                printf("unet: in_channels %" PRId64 ", block_out_channels[0] %" PRId64 ", %d down "
                       "blocks, layers_per_block %d, cross_attention_dim %" PRId64 ", "
                       "use_linear_projection %s\n", a.unet_in_channels, a.unet_model_channels,
                       a.unet_down_blocks, a.unet_layers_per_block, a.cross_attention_dim,
                       a.use_linear_projection ? "true" : "false");
            if (a.text_hidden)
                printf("text_encoder: hidden %" PRId64 ", %d layers%s\n", a.text_hidden,
                       a.text_layers, a.text_openclip ? " (from OpenCLIP keys)" : "");
            if (a.text2_hidden)
                printf("text_encoder_2: hidden %" PRId64 ", %d layers, projection %" PRId64 "%s\n",
                       a.text2_hidden, a.text2_layers, a.text2_projection_dim,
                       a.text2_openclip ? " (from OpenCLIP keys)" : "");
            if (a.addition_embed_dim)
                printf("unet: addition_embed_type text_time, projection_class_embeddings_input_dim %" PRId64
                       "\n", a.addition_embed_dim);
            char dir[4096];
            if (arch_dir) snprintf(dir, sizeof dir, "%s", arch_dir);
            if (arch_dir || default_arch_dir(dir, sizeof dir) == 0) {
                struct o2s_arch_match m;
                const int flow = !strcmp(a.family, "sd3") || !strcmp(a.family, "flux");
                const int partial = flow && (!o2s_count(s, O2S_VAE) || !o2s_count(s, O2S_TEXT_ENCODER) ||
                                             !o2s_count(s, O2S_TEXT_ENCODER_2));
                if (o2s_match_arch_dir(s, dir, &m, err, sizeof err) == 0) {
                    printf("architecture: %s (%zu keys and dims as %s/arch.json lists them)\n", m.name, m.keys,
                           m.dir);
                } else if (partial) { /* Black Forest Labs' / SAI's transformer-only files: complete with flags */
                    printf("architecture: not matched: the %s transformer without%s%s%s (onnx2cl-sd -m FILE adds "
                           "them with --vae F, --clip-l F, %s--t5xxl F)\n", !strcmp(a.family, "flux") ? "Flux" : "SD 3",
                           o2s_count(s, O2S_VAE) ? "" : " vae", o2s_count(s, O2S_TEXT_ENCODER) ? "" : " text_encoder",
                           o2s_count(s, O2S_TEXT_ENCODER_2) ? "" : " text_encoder_2",
                           !strcmp(a.family, "flux") ? "" : "--clip-g F, ");
                } else {
                    fprintf(stderr, "onnx2cl-ckpt: %s\n", err);
                    rc = 1;
                }
            } else {
                printf("architecture: not checked (no installed architectures; --arch-dir DIR)\n");
            }
        } else {
            fprintf(stderr, "onnx2cl-ckpt: %s\n", err);
            rc = 1;
        }
        for (size_t i = 0; i < in.unknown; i++) {
            if (i == 20) {
                printf("unknown: ... (%zu more)\n", in.unknown - 20);
                break;
            }
            printf("unknown: %s\n", o2s_unknown_key(s, i));
        }
    } else {
        for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
            if (only >= 0 && c != only) continue;
            struct o2s_view v;
            for (size_t i = 0; o2s_get(s, (enum o2s_component)c, i, &v) == 0; i++) {
                printf("%s\t%s\t[", o2s_component_name(v.component), v.key);
                for (int k = 0; k < v.rank; k++) printf("%s%" PRId64, k ? "," : "", v.dims[k]);
                printf("]\t%s\t%s\n", o2s_dtype_name(v.dtype), v.orig_key);
            }
        }
    }
    o2s_close(s);
    return rc;
}
