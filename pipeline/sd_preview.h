/* sd_preview.h — TAESD (madebyollin's tiny autoencoder, diffusers AutoencoderTiny) as the fast
 * decoder and the per-step preview of onnx2cl-sd (`--taesd PATH`, `--preview F.png`,
 * `--fast-decode`; docs/taesd.md).
 *
 * What it does
 *   sdv_taesd_prepare: PATH is what users download — a diffusers AutoencoderTiny folder
 *   (madebyollin/taesd, madebyollin/taesdxl: config.json + diffusion_pytorch_model.safetensors, keys
 *   decoder.layers.* and encoder.layers.*), that folder's .safetensors, or the original decoder file
 *   (taesd_decoder.safetensors, taesdxl_decoder.safetensors: taesd.py's keys "1.weight", ...; the
 *   store's keymap_sd.def TAESD rule). Opened with the store; its architecture is the installed one
 *   of family "taesd" (ARCH_DIR/<arch>/arch.json) whose decoder keys the file has with equal dims
 *   (the encoder's keys may be there too; nothing else); then the engine compiles the architecture's
 *   vae_decoder for the pipeline's latents and converts the weights into the cache, as it does the
 *   checkpoint's models (sde_prepare_extra). TAESD and TAESDXL share the graph: the weights differ.
 *   sdv_taesd_decode: as StableDiffusionPipeline with pipe.vae = AutoencoderTiny(...) decodes: the
 *   latents as the denoising loop holds them (AutoencoderTiny's scaling_factor is 1.0: latents / 1),
 *   DecoderTiny (tanh(x/3)*3, the layers, 2x - 1), then the image processor's x/2 + 0.5 clamped to
 *   [0, 1]. latent_magnitude / latent_shift are not used by decode (only by scale_latents).
 * Errors: -1 with one message naming the path (a file that is not TAESD: its first keys and the
 * keys expected; a LoRA file: named as such), -2 for a flag-level misuse (latent channels that are
 * not TAESD's 4).
 */
#ifndef PIPELINE_SD_PREVIEW_H
#define PIPELINE_SD_PREVIEW_H

#include "sd_engine.h"
#include "sd_pipeline.h"

#include <stddef.h>

/* The prepared decoder's files and sizes. */
struct sdv_taesd_files {
    char file[PATH_MAX];     /* the .safetensors read */
    char arch[256];          /* architecture ("taesd", "tiny_taesd") */
    char program[PATH_MAX];  /* cached vae_decoder .o2d */
    char weights[PATH_MAX];  /* cached weights */
    int img_w, img_h;        /* the decoder's image size for the latents */
};

/* Prepares TAESD at path for latents [lat_c, lat_h, lat_w] with o's cache, compiler, architecture
 * folder and weights storage (see the header comment); lat_c 0: only finds the file and checks it
 * against the architectures (f->file, f->arch), compiling nothing. Returns 0, -1 or -2 with a
 * message. */
int sdv_taesd_prepare(const struct sde_options *o, const char *path, int lat_c, int lat_h, int lat_w,
                      struct sdv_taesd_files *f, char *err, size_t errcap);

/* A loaded TAESD decoder. */
struct sdv_taesd {
    struct sdp_model dec;
    int lat_c, lat_h, lat_w, img_h, img_w;
    void *in, *out;          /* host buffers of the model's input and output */
    double seconds;          /* time spent in sdv_taesd_decode */
};

/* Loads the prepared decoder on ctx and checks its input [1,lat_c,lat_h,lat_w] and output
 * [1,3,H,W] (float32). Returns 0, or -1 with a message. */
int sdv_taesd_load(struct o2r_ctx *ctx, const struct sdv_taesd_files *f, struct sdv_taesd *t, char *err,
                   size_t errcap);
/* Decodes n images of latents [n, lat_c, lat_h, lat_w] (the loop's, unscaled) into image
 * [n, 3, img_h, img_w] in [0, 1]. Returns 0, or -1 with a message. */
int sdv_taesd_decode(struct sdv_taesd *t, const float *latents, int n, float *image, char *err, size_t errcap);
void sdv_taesd_close(struct sdv_taesd *t);

#endif
