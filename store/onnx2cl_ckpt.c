/* onnx2cl-ckpt — look inside a checkpoint as the store sees it.
 *   onnx2cl-ckpt info CHECKPOINT [--variant fp16] [--ema]
 *       format, files, dtypes, components and their tensor counts, the detected family (or why
 *       none), ignored and unknown keys. Exit 1 if the checkpoint cannot be opened or is no
 *       known architecture.
 *   onnx2cl-ckpt list CHECKPOINT [--component unet] [--variant fp16] [--ema]
 *       one line per canonical key: component, key, dims, dtype, file key.
 * Errors go to stderr naming the file and key; exit 1 (2 for a usage error).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

static int usage(void)
{
    fprintf(stderr,
            "usage: onnx2cl-ckpt info CHECKPOINT [--variant V] [--ema]\n"
            "       onnx2cl-ckpt list CHECKPOINT [--component NAME] [--variant V] [--ema]\n"
            "CHECKPOINT: a .safetensors file (single-file LDM layout or one diffusers component)\n"
            "or a diffusers folder. Components: unet, vae, text_encoder, text_encoder_2.\n");
    return 2;
}

static const char *format_name(enum o2s_format f)
{
    return f == O2S_FORMAT_LDM         ? "single file (LDM layout)"
           : f == O2S_FORMAT_COMPONENT ? "single file (one diffusers component)"
                                       : "diffusers folder";
}

int main(int argc, char **argv)
{
    if (argc < 3) return usage();
    const char *cmd = argv[1], *path = argv[2];
    bool info_cmd = strcmp(cmd, "info") == 0;
    if (!info_cmd && strcmp(cmd, "list") != 0) return usage();
    struct o2s_options opt = {0};
    int only = -1;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--variant") == 0 && i + 1 < argc) {
            opt.variant = argv[++i];
        } else if (strcmp(argv[i], "--ema") == 0) {
            opt.use_ema = 1;
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
            printf("unet: in_channels %" PRId64 ", block_out_channels[0] %" PRId64 ", %d down "
                   "blocks, layers_per_block %d, cross_attention_dim %" PRId64 ", "
                   "use_linear_projection %s\n", a.unet_in_channels, a.unet_model_channels,
                   a.unet_down_blocks, a.unet_layers_per_block, a.cross_attention_dim,
                   a.use_linear_projection ? "true" : "false");
            if (a.text_hidden)
                printf("text_encoder: hidden %" PRId64 ", %d layers%s\n", a.text_hidden,
                       a.text_layers, a.text_openclip ? " (from OpenCLIP keys)" : "");
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
