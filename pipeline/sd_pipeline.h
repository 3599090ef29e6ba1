/* sd_pipeline.h — Stable Diffusion txt2img, img2img and inpainting around models compiled by
 * onnx2cl (text encoder, UNet, VAE decoder, and the VAE encoder for img2img/inpainting), loaded at
 * run time as shared objects or descriptor files through the generated API only (<name>_desc() +
 * the runtime's o2r_model_init/_run/_free of runtime/onnx2cl_rt.h).
 *
 * What a run does (as diffusers 0.42 does it, guidance_rescale 0, generator=[torch.Generator()
 * .manual_seed(seed + i) for i in range(batch)]):
 *   txt2img (StableDiffusionPipeline): tokenize prompt (and negative prompt when cfg > 1) -> text
 *   encoder -> last_hidden_state; latents = randn (each image from its own generator) *
 *   init_noise_sigma; for each timestep: scale_model_input, UNet on [uncond x batch; cond x batch]
 *   in runs of the UNet's compiled batch, noise = uncond + cfg * (cond - uncond), scheduler step;
 *   image = VAE(latents / scaling_factor) per image, then image / 2 + 0.5 clamped to [0, 1].
 *   img2img (StableDiffusionImg2ImgPipeline): the init image 2x - 1 -> VAE encoder -> mean ||
 *   logvar; per image i: latent_dist.sample(generator[i]) = mean + exp(0.5 clamp(logvar, -30, 20))
 *   * randn, times scaling_factor; timesteps cut by strength (t_start = steps - min(int(steps *
 *   strength), steps); the scheduler's begin index and the loop's first model evaluation =
 *   t_start * scheduler.order); noise = randn per image; latents = scheduler.add_noise(
 *   init_latents, noise, timesteps[begin]).
 *   inpainting with a 4-channel UNet (StableDiffusionInpaintPipeline): mask binarized at 0.5
 *   (>= 0.5 repaint), nearest-downsampled to the latents (mask[8y][8x]); image latents sampled
 *   once with generator[0] (the pipeline encodes the one init image); noise per image; strength 1:
 *   latents = noise * init_noise_sigma, else add_noise as img2img; then generator[0] draws once
 *   more (diffusers encodes the masked image, unused by a 4-channel UNet); after every step
 *   latents = (1 - mask) * add_noise(image_latents, noise, timesteps[i + 1]) + mask * latents
 *   (image_latents unnoised after the last step).
 *   inpainting with a 9-channel UNet (2C + 1 input channels): the image encoded (generator[0]) only
 *   when strength < 1, noise per image, the masked image (init 2x - 1, zero where mask >= 0.5)
 *   encoded and sampled with generator[0]; the UNet's input per row is [scaled latents, mask
 *   (1 channel), masked-image latents]; no blending.
 *   SDXL (StableDiffusionXLPipeline, StableDiffusionXLImg2ImgPipeline with a base model; p->te2
 *   loaded): prompt and prompt_2 the same text, each tokenizer to 77 ids, each encoder's
 *   hidden_states[-2] (clip_skip None) concatenated on the last axis; text_embeds = text_encoder_2's
 *   projected pooled output; add_time_ids = (height, width, 0, 0, height, width) for the cond and
 *   the uncond rows; with guidance and no negative prompt both the uncond states and its pooled
 *   vector are zeros (force_zeros_for_empty_prompt, as SDXL's model_index.json says; A1111 the
 *   same), unless sdp_params.encode_empty_negative. The UNet gets text_embeds and time_ids per row.
 *   The VAE runs in float32 arithmetic (weights may be stored float16), so SDXL's VAE float16
 *   overflow (force_upcast) cannot happen.
 * Guarantees: every shape, dtype and name is checked before the first run, with messages that
 * name the file or flag; float16 model inputs/outputs are converted on the host.
 */
#ifndef PIPELINE_SD_PIPELINE_H
#define PIPELINE_SD_PIPELINE_H

#include "clip_tokenizer.h"
#include "onnx2cl_rt.h"
#include "scheduler.h"

#include <stddef.h>
#include <stdint.h>

/* Device memory of the models on the device at once: live = the sum over loaded models of their
 * memory plan's weights + arena bytes, peak = the largest live seen (bytes). */
struct sdp_mem_track {
    uint64_t live, peak;
};

/* A compiled model loaded from a shared object or a descriptor file (.o2d). */
struct sdp_model {
    void *dl;                          /* dlopen handle (NULL for a .o2d) */
    const struct o2r_model_desc *desc; /* from <name>_desc(), or read from the .o2d */
    struct o2r_model_desc *owned;      /* the descriptor read from a .o2d (o2r_desc_free), NULL */
    struct o2r_model *m;               /* initialized model; NULL while offloaded (not on the device) */
    struct o2r_ctx *ctx;               /* context it runs on (for error messages) */
    char path[1024];                   /* the shared object or .o2d, for messages */
    char *weights;                     /* its weights file (sdp_model_ready loads it again) */
    int offload;                       /* 1: on the device only between sdp_model_ready and sdp_model_park */
    struct sdp_mem_track *track;       /* where its device bytes are counted, or NULL */
    uint64_t dev_bytes;                /* weights + arena bytes while loaded (0 otherwise) */
};

/* Loads SO_PATH (built from onnx2cl's C output with -DONNX2CL_NO_MAIN / --no-main and
 * `cc -shared -fPIC`), finds <name>_desc where name is the file's base name without its
 * extension made a C identifier (onnx2cl's default --name), and initializes it on ctx with
 * weights_path (NULL: SO_PATH with its extension replaced by ".weights"). A path ending in ".o2d"
 * is a descriptor file (`onnx2cl MODEL.onnx -o NAME.o2d`) instead: read with o2r_desc_read, no
 * dlopen and no symbol lookup. Returns 0, or -1 with a message naming the file. */
int sdp_model_load(struct o2r_ctx *ctx, const char *so_path, const char *weights_path,
                   struct sdp_model *out, char *err, size_t errcap);
/* sdp_model_load with offloading (issue 23 item 6, the `--offload` of onnx2cl-sd): offload 1 reads
 * the descriptor only and leaves the model off the device until sdp_model_ready (each pipeline
 * stage readies its models and parks them when done, so the device holds one stage's models at a
 * time, at the cost of loading them again for every image); track (may be NULL) counts the
 * model's device bytes while it is loaded. */
int sdp_model_load_opt(struct o2r_ctx *ctx, const char *so_path, const char *weights_path, int offload,
                       struct sdp_mem_track *track, struct sdp_model *out, char *err, size_t errcap);
/* Puts m on the device if it is not (o2r_model_init with its weights file): 0, or -1 with the
 * runtime's message naming the model file. A no-op for a loaded model. */
int sdp_model_ready(struct sdp_model *m, char *err, size_t errcap);
/* Takes an offloaded model off the device (o2r_model_free; its descriptor stays); a no-op for a
 * model loaded without offload, or not loaded. */
void sdp_model_park(struct sdp_model *m);
void sdp_model_close(struct sdp_model *m);
/* The weights file sdp_model_load reads when given none: SO_PATH with its extension replaced by
 * ".weights" (appended when the base name has none), into buf (cap bytes, truncated). */
void sdp_model_weights_path(const char *so_path, char *buf, size_t cap);

/* n floats into a model I/O buffer of dtype dt (O2R_F32, or O2R_F16: IEEE half, round to nearest
 * even), and back (exact). */
void sdp_put_floats(void *dst, int32_t dt, const float *src, size_t n);
void sdp_get_floats(float *dst, int32_t dt, const void *src, size_t n);

/* Progress of a generation, passed to sdp_params.progress after every denoising step. */
struct sdp_progress {
    int step;               /* steps done, 1..total */
    int total;              /* steps of this generation (the scheduler's timesteps) */
    double elapsed;         /* seconds since the denoising loop started (host wall clock) */
    double eta;             /* estimated seconds left in the loop (elapsed / step * (total - step)) */
    const float *latents;   /* the current latents [lat_c, lat_h, lat_w] float32: the scheduler's sample
                               after this step (VAE input = latents / scaling_factor); valid during
                               the call only */
    int lat_c, lat_h, lat_w;
    int batch;              /* images in latents: [batch, lat_c, lat_h, lat_w] */
};
/* Returns 0 to go on, non-zero to cancel the generation (sdp_generate then returns SDP_CANCELLED). */
typedef int (*sdp_progress_fn)(const struct sdp_progress *pr, void *user);

/* sdp_generate's return value when the run was cancelled (progress callback or cancel flag). */
#define SDP_CANCELLED (-2)

/* How prompts become text-encoder input (sdp_params.emphasis). */
enum sdp_emphasis {
    SDP_EMPHASIS_DIFFUSERS = 0, /* diffusers: the text as is, one 77-id row, truncated (the default) */
    SDP_EMPHASIS_NONE,          /* A1111 "None": the text as is (brackets, BREAK literal), 75-token chunks */
    SDP_EMPHASIS_IGNORE,        /* A1111 "Ignore": parsed (brackets removed, BREAK), no multipliers */
    SDP_EMPHASIS_ORIGINAL,      /* A1111 "Original": parsed, z *= multiplier, chunk mean restored */
    SDP_EMPHASIS_NO_NORM        /* A1111 "No norm": parsed, z *= multiplier */
};
/* A1111's comma_padding_backtrack default, used by every A1111 mode. */
#define SDP_COMMA_BACKTRACK 20

/* Reads an emphasis name: A1111's option values "Original", "No norm", "None", "Ignore" (any case;
 * "no-norm"/"no_norm"/"nonorm" too) or "diffusers". Returns 0, or -1 with a message listing them. */
int sdp_emphasis_parse(const char *name, int *out, char *err, size_t errcap);
/* A1111's spelling of e ("Original", "No norm", "None", "Ignore"); "diffusers" for SDP_EMPHASIS_DIFFUSERS. */
const char *sdp_emphasis_name(int e);

/* The encoder_hidden_states length (tokens) a UNet needs for this prompt pair: seq (the text
 * encoder's 77) with SDP_EMPHASIS_DIFFUSERS; else 77 * lcm(prompt's chunks, negative's chunks when
 * cfg_on) (each conditioning is repeated to that length: cross-attention over a key/value set
 * repeated m times is the attention over the set once, so this equals A1111's default of running
 * prompt and negative prompt in separate UNet passes when their lengths differ). *n_pos / *n_neg
 * (NULL: not wanted) receive the chunk counts (1 in diffusers mode). Returns 0, or -1 with a message
 * (a bad weight naming its byte offset, invalid UTF-8, more than 16 chunks in the common length). */
int sdp_cond_tokens(const struct sdp_tokenizer *tok, int emphasis, const char *prompt, const char *negative,
                    int cfg_on, int seq, int *tokens, int *n_pos, int *n_neg, char *err, size_t errcap);

/* Generation parameters. */
struct sdp_params {
    const char *prompt;           /* UTF-8 */
    const char *negative;         /* UTF-8, "" = none */
    int steps;                    /* inference steps */
    float cfg;                    /* guidance scale; <= 1 disables classifier-free guidance */
    uint64_t seed;                /* image i: torch.Generator().manual_seed(seed + i) (A1111's seeds) */
    int batch;                    /* images of this generation (0 = 1) */
    const float *latents;         /* NULL, or initial noise [batch,4,h,w] (before init_noise_sigma) */
    const float *init_image;      /* NULL (txt2img), or img2img/inpainting's image [3,H,W] in [0,1]
                                     (8-bit value / 255); needs the VAE encoder (p->venc) */
    double strength;              /* img2img/inpainting: in (0, 1]; steps * strength >= 1 */
    const float *mask;            /* NULL, or inpainting's mask [H,W] in [0,1] (>= 0.5: repaint);
                                     needs init_image */
    float scaling_factor;         /* VAE latent scaling factor (0.18215 for SD 1.x/2.x) */
    int emphasis;                 /* enum sdp_emphasis (0: diffusers). The A1111 modes chunk each prompt
                                     (prompt_weights.h), encode every chunk alone, apply the emphasis per
                                     chunk and concatenate; the UNet must take a multiple of the
                                     sdp_cond_tokens length */
    int quiet;                    /* no per-step progress lines */
    sdp_progress_fn progress;     /* NULL, or called after every step (from the calling thread) */
    void *progress_user;          /* passed to progress */
    const volatile int *cancel;   /* NULL, or a flag another thread may set non-zero: checked before
                                     every text encoder, UNet and VAE run */
    float guidance_rescale;       /* with guidance: diffusers' guidance_rescale (0: off; in [0, 1]):
                                     rescale_noise_cfg, "Common Diffusion Noise Schedules and Sample Steps
                                     are Flawed" 3.4, after the guidance step on the model outputs */
    int encode_empty_negative;    /* SDXL with guidance and an empty negative prompt: 0 (default) uses zero
                                     embeddings and a zero pooled vector, as diffusers'
                                     force_zeros_for_empty_prompt (SDXL's model_index.json) and A1111's
                                     force_zero_negative_prompt do; 1 encodes "" */
};

/* Stage timings of the last run (seconds, host wall clock, every run synchronous). */
struct sdp_timings {
    double text_encoder;   /* all text encoder runs */
    int text_runs;         /* number of text encoder runs */
    double unet_total;     /* all UNet runs */
    int unet_runs;         /* number of UNet runs */
    double scheduler;      /* scheduler arithmetic on the host */
    double vae;            /* VAE decoder (all images) */
    double vae_encoder;    /* VAE encoder (img2img/inpainting) */
    double total;          /* the whole generation (not model loading) */
};

/* The three models, the tokenizer and the scheduler of one pipeline. */
struct sdp_pipeline {
    struct sdp_model te, unet, vae;          /* loaded models */
    struct sdp_model venc;                   /* VAE encoder (img2img/inpainting), or desc NULL */
    struct sdp_tokenizer *tok;               /* CLIP tokenizer */
    struct sdp_scheduler *sched;             /* scheduler (set_timesteps done by sdp_generate) */
    /* discovered from the models' descriptors */
    int te_ids, te_out;                      /* text encoder: input index, last_hidden_state index */
    int te_batch, seq, hidden;               /* text encoder batch, sequence length, hidden size */
    int u_sample, u_t, u_ehs, u_out;         /* UNet input/output indices */
    int u_batch, lat_c, lat_h, lat_w;        /* UNet batch, latent dims (the UNet's output) */
    int u_seq;                               /* UNet encoder_hidden_states tokens (a multiple of seq) */
    int unet_in_c;                           /* UNet sample channels: lat_c, or 2 lat_c + 1 for an
                                                inpainting UNet (latents, mask, masked-image latents) */
    int v_in, v_out;                         /* VAE input/output index */
    int img_c, img_h, img_w;                 /* VAE output dims */
    int e_in, e_out;                         /* VAE encoder input/output index (venc loaded) */
    /* SDXL (StableDiffusionXLPipeline): te2 loaded. Both encoders' penultimate_hidden_state
     * (hidden_states[-2]) are concatenated per token into encoder_hidden_states (hidden =
     * te_hidden + te2_hidden); te2's text_embeds (the projected pooled output) and the six
     * add_time_ids are the UNet's text_embeds and time_ids inputs. */
    struct sdp_model te2;                    /* text_encoder_2 (CLIPTextModelWithProjection), or desc NULL */
    struct sdp_tokenizer *tok2;              /* its tokenizer (SDXL: pad_token "!"); NULL: p->tok */
    int te_hidden, te2_hidden;               /* each encoder's state width (SD 1.x/2.x: te_hidden == hidden) */
    int te2_out, te2_pool;                   /* te2's penultimate_hidden_state and text_embeds output indices */
    int u_temb, u_tids;                      /* UNet text_embeds [B,pool_dim] and time_ids [B,6] inputs (-1: none) */
    int pool_dim;                            /* text_embeds width */
    int vae_tiling;                          /* set before sdp_pipeline_check: the VAE decoder (and encoder)
                                                are compiled for a tile of the image (--vae-tile) and run
                                                over it in overlapping tiles (vae_tiling.h); the image size
                                                is then the latents times the decoder's scale */
};

/* Checks that the loaded models fit together (a UNet whose inputs look like a UNet: sample
 * [B,C,h,w] float, timestep of 1 or B elements, encoder_hidden_states [B,S*k,D] float with S and D
 * the text encoder's, k >= 1: long prompts; SDXL (te2 loaded): D the two encoders' widths summed,
 * text_embeds [B,P] with P te2's text_embeds width, time_ids [B,6]; a UNet with text_embeds and
 * time_ids but no te2 is refused naming text_encoder_2); a text encoder with int32/int64 ids [b,S]
 * and a [b,S,D] output (SDXL: penultimate_hidden_state, and te2's text_embeds [b,P]); a VAE
 * decoder taking [1,C,h,w] or [B,C,h,w] (p->vae_tiling: a tile of them, sdp_vae_tiling_plan); a VAE
 * encoder when loaded: [1,3,H,W] -> [1,2C,h,w] (p->vae_tiling: a tile of the image)
 * (mean || logvar); with p->tok loaded, a tokenizer whose largest id is a
 * row of the text encoder's token embedding table) and fills the index/shape fields. Returns 0,
 * or -1 with a message naming the model file and what does not fit. */
int sdp_pipeline_check(struct sdp_pipeline *p, char *err, size_t errcap);

/* Runs txt2img, img2img (prm->init_image) or inpainting (prm->init_image + prm->mask). image
 * receives batch*img_c*img_h*img_w floats in [0, 1] (NCHW). n_tokens receives the untruncated
 * token count of the prompt with BOS/EOS (diffusers mode: > seq means it was truncated), or in the A1111
 * modes A1111's token count (the "75/150" counter: 75 per chunk before the last). Returns 0,
 * SDP_CANCELLED (message "cancelled ...": prm->cancel set or the progress callback asked; image
 * unset), or -1 with a message. The pipeline stays usable after either. */
int sdp_generate(struct sdp_pipeline *p, const struct sdp_params *prm, float *image, int *n_tokens,
                 struct sdp_timings *tm, char *err, size_t errcap);

/* img2img/inpainting's first step: t_start = steps - min(int(steps * strength), steps) (diffusers'
 * get_timesteps, strength as a double); the inference steps run are steps - t_start (< 1: the
 * strength is too small for the steps), from model evaluation t_start * sdp_sched_order(). */
int sdp_img2img_t_start(int steps, double strength);

/* Pillow's ImageFilter.GaussianBlur(radius) in place on an 8-bit image of w x h pixels with ch
 * interleaved channels (each channel alone), bit for bit (mask_blur.c): diffusers'
 * VaeImageProcessor.blur(mask, blur_factor=radius). radius <= 0: unchanged. Returns 0, or -1 when
 * out of memory. */
int sdp_gaussian_blur_u8(unsigned char *pix, int w, int h, int ch, float radius);

/* Reads a PNG (libpng, png_read.c) into *pix (malloc'd, h*w*channels bytes, rows top to bottom)
 * as diffusers' load_image sees it through PIL: *channels 1 (gray, gray+alpha: alpha dropped;
 * 1/2/4-bit gray scaled) or 3 (RGB, RGBA: alpha dropped; palette through the palette; 16-bit RGB /
 * RGBA / gray+alpha by the high byte). 16-bit gray is refused (PIL's mode I;16, clipped by
 * convert("RGB")). One rule for the CLI, the library and the server (png_read.c). Returns 0; -1
 * (no such file, a directory, not a PNG, corrupt or truncated) or -2 (16-bit gray) with a message
 * naming the file. sdp_png_read_mem: the same from memory, name in the messages. */
int sdp_png_read(const char *path, unsigned char **pix, int *w, int *h, int *channels, char *err,
                 size_t errcap);
int sdp_png_read_mem(const unsigned char *data, size_t len, const char *name, unsigned char **pix, int *w, int *h,
                     int *channels, char *err, size_t errcap);
/* *pix (w*h*channels bytes) converted in place to want channels as PIL does: 1 -> 3 replicates
 * (convert("RGB") of L), 3 -> 1 is ITU-R 601-2 luma, (R*19595 + G*38470 + B*7471 + 0x8000) >> 16
 * (convert("L")). Returns 0, or -1 when out of memory (*pix unchanged). */
int sdp_pix_convert(unsigned char **pix, int w, int h, int *channels, int want);

/* Writes an 8-bit RGB PNG (libpng) of a [3,h,w] float image in [0, 1] (values * 255 rounded half
 * to even, as diffusers' numpy_to_pil), with text chunks key[i] = value[i] (tEXt for ASCII values,
 * else iTXt: UTF-8). Atomic: a temporary
 * file in the same folder renamed into place; nothing is left behind on failure. */
int sdp_png_write(const char *path, const float *chw, int h, int w, const char *const *keys,
                  const char *const *values, int n_text, char *err, size_t errcap);
/* sdp_png_write of an 8-bit RGB image [h, w, 3] as it is. */
int sdp_png_write_rgb(const char *path, const unsigned char *rgb, int h, int w, const char *const *keys,
                      const char *const *values, int n_text, char *err, size_t errcap);

#endif
