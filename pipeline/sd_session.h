/* sd_session.h — onnx2cl's Stable Diffusion library: open a model set once, generate many images.
 *
 * The one public header of libonnx2cl-sd (installed as <onnx2cl/sd_session.h>; CMake:
 * find_package(onnx2cl CONFIG) + target_link_libraries(app onnx2cl::sd); pkg-config: onnx2cl-sd).
 * `onnx2cl-sd` (the CLI's engine) and `onnx2cl-sd serve` (the HTTP server) sit on the same code.
 *
 *   struct sds_open_options o = {.checkpoint = "model.safetensors"};
 *   struct sds_session *s;
 *   char err[2048];
 *   if (sds_open(&o, &s, err, sizeof err)) { fprintf(stderr, "%s\n", err); ... }
 *   struct sds_request r = {.prompt = "a photo of a cat", .steps = 20, .cfg = 7.5, .seed = 1};
 *   struct sds_image im;
 *   if (sds_txt2img(s, &r, &im, err, sizeof err) == 0) { ... im.rgb ...; sds_image_free(&im); }
 *   sds_close(s);
 *
 * Model sets. A session is opened from either
 *   - a checkpoint (.safetensors single file or diffusers folder; `onnx2cl-sd -m`): its
 *     architecture is found among the installed ones and the three models (text encoder, UNet,
 *     VAE decoder) are compiled into the cache on first use (needs the onnx2cl executable; later
 *     opens read the cache: no compile). The models loaded depend on (image size, UNet batch: 2
 *     with guidance cfg > 1 else 1, LoRA set); a request that needs another combination re-prepares
 *     and reloads them (a cache hit after the first time: the weight load alone; LoRA merges are
 *     cached on disk per (checkpoint, LoRA set)). The session keeps one combination loaded: the
 *     last one used.
 *   - or compiled models (`onnx2cl-sd --models DIR --hf DIR`): DIR/{text_encoder,unet,vae_decoder}
 *     .so or .o2d (+ .weights), a Hugging Face folder for the tokenizer, scheduler and VAE config.
 *     Fixed size; no LoRA tags (their weights are merged at compile time).
 *
 * Threads. Every function may be called from any thread. One generation runs at a time per
 * session: sds_txt2img holds the session's mutex for the whole run (a second caller waits). Open
 * one session per device for parallel generation. Cancel from another thread with the flag of
 * struct sds_request (checked before every text encoder, UNet and VAE run).
 *
 * Errors. Every function returns 0 or a negative code with a one-line message in err (errcap
 * bytes, always NUL-terminated); nothing calls exit(). The codes: SDS_ERROR (files, device,
 * models, memory: the caller cannot fix it by changing the request), SDS_EINVAL (the request or
 * the options: a value out of range, a name that is not known, a size the models cannot do),
 * SDS_CANCELLED (the cancel flag or the progress callback). The session stays usable after each.
 *
 * Notes on stderr: opening a checkpoint prints the engine's progress lines (compiling, converting)
 * unless sds_open_options.quiet; LoRA tag notes (a tag in the negative prompt, unknown tag types)
 * are printed on stderr as the CLI does.
 */
#ifndef ONNX2CL_SD_SESSION_H
#define ONNX2CL_SD_SESSION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SDS_OK 0
#define SDS_ERROR (-1)     /* files, device, models, memory */
#define SDS_CANCELLED (-2) /* the cancel flag or the progress callback stopped the generation */
#define SDS_EINVAL (-3)    /* a bad request or option (the message names the field and the limit) */

/* An opened model set (opaque). */
struct sds_session;

/* How to open a session. Zeroed fields take the defaults. Give checkpoint, or models_dir +
 * hf_dir. Strings are copied by sds_open. */
struct sds_open_options {
    const char *checkpoint;    /* .safetensors file or diffusers folder (engine: compiles into the cache) */
    const char *models_dir;    /* compiled models: DIR/text_encoder.so|.o2d, unet, vae_decoder */
    const char *hf_dir;        /* with models_dir: tokenizer/, scheduler/scheduler_config.json, vae/config.json */
    const char *arch_dir;      /* checkpoint: installed architectures (NULL: <exe dir>/../share/onnx2cl/arch,
                                  else the configured install prefix's, else the source tree's models/arch) */
    const char *cache_dir;     /* checkpoint: NULL = $ONNX2CL_CACHE_DIR, $XDG_CACHE_HOME/onnx2cl, ~/.cache/onnx2cl */
    const char *compiler;      /* checkpoint: the onnx2cl executable (NULL: beside this program's executable,
                                  else the build tree's; an application installed elsewhere gives
                                  PREFIX/bin/onnx2cl) */
    const char *variant;       /* checkpoint: diffusers file variant ("fp16") or NULL */
    const char *t5_tokenizer;  /* checkpoint, SD 3 / Flux: T5's spiece.model (or its folder) when the checkpoint
                                  is a single file and the architecture ships none (the full-size ones);
                                  NULL: the folder's or the architecture's */
    const char *vae_file;      /* checkpoint: a VAE .safetensors replacing / completing the checkpoint's (a
                                  diffusers AutoencoderKL or an LDM first_stage_model file; onnx2cl-sd --vae) */
    const char *clip_l_file;   /* checkpoint: CLIP-L text encoder file (onnx2cl-sd --clip-l; sd.cpp's flags: a Flux
                                  or SD 3.5 file without its text encoders) */
    const char *clip_g_file;   /* checkpoint: SD 3's CLIP-G text encoder file (--clip-g) */
    const char *t5xxl_file;    /* checkpoint: SD 3 / Flux T5-XXL encoder file (--t5xxl) */
    const char *weights_dtype; /* checkpoint: "f16" (default: half the memory) or "f32" */
    const char *lora_dir;      /* where <lora:NAME:W> prompt tags find NAME.safetensors (subfolders too;
                                  NULL: $ONNX2CL_LORA_DIR) */
    const char *device;        /* OpenCL device: index or part of its name (NULL: $ONNX2CL_DEVICE, a GPU,
                                  else the first) */
    const char *text_device;   /* the text encoders' OpenCL device (the same syntax; NULL: device's), e.g. the
                                  CPU device when the GPU is short of memory (onnx2cl-sd --text-device) */
    int width, height;         /* checkpoint: the size prepared at open (0: the architecture's default size) */
    int quiet;                 /* 1: no engine progress lines on stderr */
    int vae_tile;              /* checkpoint: VAE decoder/encoder in tiles of this many image pixels per side
                                  (0: untiled; a multiple of the VAE factor, >= 4 factors; onnx2cl-sd --vae-tile) */
    int offload;               /* 1: each model on the device only while its stage of a generation runs (text
                                  encoders, VAE encoder, UNet/transformer, VAE decoder in turn; onnx2cl-sd
                                  --offload): the device holds the largest stage, not the sum; every image
                                  loads the models again */
};

/* Opens a model set: prepares (checkpoint) or finds (models_dir) the three models, loads them on
 * the device with the tokenizer, checks that they fit together. With a checkpoint the models for
 * cfg > 1 (UNet batch 2) at the given size are loaded. Returns SDS_OK and *out (free with
 * sds_close), SDS_EINVAL (options: neither or both of checkpoint and models_dir, a size that is
 * not a multiple of the VAE factor, ...) or SDS_ERROR (files, compile, device), with a message. */
int sds_open(const struct sds_open_options *o, struct sds_session **out, char *err, size_t errcap);

/* Frees the session and its device context. Waits for a running generation (set its cancel flag
 * first to stop it early). NULL is a no-op. */
void sds_close(struct sds_session *s);

/* Facts about an opened session. */
struct sds_info {
    char arch[256];          /* architecture name ("tiny_sd15", "sd15", ...; "" for models_dir) */
    char family[32];         /* its family: "sd1", "sd2", "sdxl", "sd3", "flux" ("" for models_dir) */
    char source[4096];       /* the checkpoint or models_dir it was opened from */
    int width, height;       /* image size of the loaded models (pixels) */
    int default_width, default_height; /* size prepared at open */
    int fixed_size;          /* 1: compiled models (models_dir): only width x height */
    int size_multiple;       /* width and height must be multiples of this (the VAE factor, 8) */
    char default_sampler[32];/* the checkpoint's scheduler_config _class_name as A1111 names the sampler
                                ("PLMS", "Euler", "DDIM", ...; sds_request.sampler accepts it) */
    char default_sampler_internal[32]; /* the same as sdp_sched_names() spells it ("pndm", "euler", ...) */
    char model[256];         /* the checkpoint's file or folder name without .safetensors (A1111's Model) */
    char model_hash[11];     /* A1111's short hash of a single-file checkpoint (SHA-256, 10 hex), or "" */
    int has_vae_encoder;     /* img2img possible (checkpoint: always; models_dir: DIR/vae_encoder.so|.o2d) */
};
/* Fills *info. Returns SDS_OK. */
int sds_get_info(struct sds_session *s, struct sds_info *info);

/* Progress of a generation, after every denoising step (as struct sdp_progress). */
struct sds_progress {
    int step;             /* steps done, 1..total (0: before the first, with stage set) */
    int total;            /* steps of this generation: the request's steps (img2img: those that run,
                             int(steps * strength)); a sampler's extra model evaluations (PLMS's first
                             step) are not counted: step is scaled to total */
    double elapsed;       /* seconds since the denoising loop started */
    double eta;           /* estimated seconds left in the loop */
    const float *latents; /* the current latents [lat_c, lat_h, lat_w] float32 (valid during the call only) */
    int lat_c, lat_h, lat_w;
    const char *stage;    /* NULL during the steps; before them (step 0) a note on what runs, e.g.
                             "preparing the models for 64x64 (compiled on first use: may take minutes)" */
};
/* Returns 0 to go on, non-zero to cancel (sds_txt2img then returns SDS_CANCELLED). Called on the
 * generating thread. */
typedef int (*sds_progress_fn)(const struct sds_progress *pr, void *user);

/* One txt2img request. Zeroed fields take the defaults noted. */
struct sds_request {
    const char *prompt;        /* UTF-8, required; <lora:NAME:W> / <lora:NAME:TE:UNET> tags as A1111
                                  (checkpoint sessions only; removed from the text, merged into the weights) */
    const char *negative;      /* UTF-8 or NULL (= "") */
    int steps;                 /* denoising steps, >= 1 (0: 20) */
    double cfg;                /* guidance scale; <= 1 turns guidance off (one UNet run per step) */
    uint64_t seed;             /* torch.Generator().manual_seed(seed) noise, as diffusers */
    const char *sampler;       /* NULL (the checkpoint's scheduler_config class), one of sdp_sched_names()
                                  ("euler", "euler_a", "dpmpp_2m", ...), or an A1111 sampler name ("Euler a",
                                  "DPM++ 2M", "DPM++ 2M Karras", "UniPC", ...: sds_sampler_check) */
    const char *schedule;      /* NULL, or A1111 1.9+'s schedule type, by name or label ("automatic",
                                  "Karras", "exponential", "SGM Uniform", ...) */
    int karras;                /* Karras sigmas: 0 as sampler/schedule/config say, 1 on, -1 off */
    const char *spacing;       /* timestep_spacing override ("linspace", "leading", "trailing") or NULL */
    int width, height;         /* pixels (0: the size prepared at open, sds_info.default_width/height, whatever
                                  earlier requests used; with init_rgb: its size) */
    const unsigned char *init_rgb; /* NULL (txt2img), or img2img's start image: 8-bit RGB [init_h, init_w, 3]
                                  (its size is the output size; a given width/height must equal it:
                                  sds_image_resize makes it so as A1111's resize_mode 0; with only_masked,
                                  width/height are the size the masked area is generated at) */
    int init_w, init_h;        /* init_rgb's size in pixels */
    double strength;           /* img2img denoising strength in (0, 1] (0: 0.75); int(steps * strength)
                                  steps run, at least 1 */
    const unsigned char *mask; /* NULL, or inpainting's mask: 8-bit gray [init_h, init_w], >= 128 repaints
                                  (needs init_rgb; any checkpoint: a 9-channel inpainting UNet takes the
                                  mask as input, a plain 4-channel UNet blends the latents outside it) */
    const char *emphasis;      /* prompt syntax, A1111's "Emphasis" option: "Original" ((word:1.2), [word], BREAK,
                                  prompts over 75 tokens in 75-token chunks), "No norm", "Ignore", "None" (text
                                  as is, chunked), or NULL/"diffusers" (the default: text as is, truncated at 77
                                  tokens, as diffusers). A prompt of k chunks loads a UNet for 77 k text tokens
                                  (checkpoint sessions: compiled on first use) */
    double mask_blur;          /* with mask: blur it first as diffusers' mask_processor.blur(mask, R) (PIL's
                                  GaussianBlur; the CLI's --mask-blur); 0: none; infotext "Mask blur: R" */
    int mask_invert;           /* with mask: 1 repaints where the mask is < 128 (A1111's inpainting_mask_invert) */
    double eta;                /* DDIM's eta / TCD's gamma (the CLI's --eta; 0: the sampler's default);
                                  in [0, 1]; other samplers ignore it */
    int clip_skip;             /* A1111's Clip skip (0 or 1: off; 2..layers: the text encoder's hidden state N
                                  layers from the end + final_layer_norm; SD 1.x checkpoint sessions only:
                                  ignored for SD 2.x and SDXL, as A1111 ignores it there) */
    sds_progress_fn progress;  /* NULL, or called after every step */
    void *progress_user;       /* passed to progress */
    const volatile int *cancel;/* NULL, or a flag another thread sets non-zero to cancel */
    int only_masked;           /* with mask: 1 inpaints the masked area only (A1111's Inpaint area "Only
                                  masked", inpaint_full_res; diffusers' padding_mask_crop): the box around
                                  the mask's non-zero pixels (after invert and blur), grown by
                                  only_masked_padding and to width:height, is cropped and resized to
                                  width x height (0: the init image's size rounded down to a multiple of 8,
                                  as diffusers), generated, and composited back into the init image with
                                  the mask as alpha: the image returned has the init image's size
                                  (inpaint_crop.c); infotext "Inpaint area: Only masked, Masked area
                                  padding: N" */
    int only_masked_padding;   /* pixels, >= 0 (A1111's "Masked area padding"; its API's default is 0, its
                                  UI's 32) */
    double distilled_cfg;      /* Flux dev's distilled guidance (Forge's distilled_cfg_scale, infotext "Distilled
                                  CFG Scale"; 0: 3.5, diffusers' default); other models ignore it. For SD 3 / Flux
                                  checkpoints (txt2img and img2img, flow-matching Euler, one image per call; builds
                                  with the T5 tokenizer) cfg is SD 3's guidance scale and Flux's true_cfg_scale
                                  (> 1 with a negative prompt); masks, other samplers and schedules: SDS_EINVAL */
    int mask_overlay;          /* with mask, whole picture: 1 pastes the init image back over the result with
                                  the (inverted, blurred) mask as alpha, as A1111 does in both inpaint areas
                                  (its apply_overlay; the CLI's --mask-overlay): the pixels outside the mask
                                  are the init image's. 0: diffusers' pipeline (the generated pixels
                                  everywhere). Only masked always pastes back */
};

/* A generated image. */
struct sds_image {
    int width, height;     /* pixels (only masked: the init image's; the infotext's Size is the generated area's) */
    float *chw;            /* [3, height, width] float32 in [0, 1] (the VAE output / 2 + 0.5, clamped; only
                              masked or mask_overlay: rgb / 255) */
    unsigned char *rgb;    /* [height, width, 3] 8-bit RGB: chw * 255 rounded half to even, as the CLI's PNG */
    char *parameters;      /* A1111's infotext of the generation (the CLI's PNG "parameters" chunk:
                              prompt as given, Steps, Sampler, Schedule type, CFG scale, Seed, Size, Model
                              hash, Model, Denoising strength, Version) */
    char sampler[32];      /* the sampler that ran (sdp_sched_names() spelling, " karras" appended when on) */
    char a1111_sampler[32];/* the same as A1111 names it ("Euler a", "DPM++ 2M", ...) */
    char a1111_schedule[32];/* A1111's schedule type ("Automatic", "Karras", "Exponential", ...) */
    int n_tokens;          /* the prompt's token count with BOS/EOS (> 77: truncated, as diffusers); with an
                              A1111 emphasis, A1111's count (75 per chunk before the last) */
    double seconds;        /* generation time (no model loading) */
    double load_seconds;   /* time spent re-preparing / reloading models for this request (0: none) */
};

/* Runs txt2img, or img2img when r->init_rgb is set (inpainting with r->mask), on the session (waits
 * for a generation already running on it). On SDS_OK *out holds the image (free with
 * sds_image_free); on an error *out is zeroed. Returns SDS_EINVAL for the request (no prompt, steps
 * out of [1, 1000], a size the models cannot do, an unknown sampler or schedule type, a strength
 * that runs no step, a malformed LoRA tag or an unknown LoRA name, LoRA tags on compiled models, no
 * VAE encoder for img2img), SDS_CANCELLED when cancelled, SDS_ERROR otherwise; always with a
 * message. */
int sds_generate(struct sds_session *s, const struct sds_request *r, struct sds_image *out, char *err,
                 size_t errcap);
/* sds_generate under its older name (txt2img when r->init_rgb is NULL). */
int sds_txt2img(struct sds_session *s, const struct sds_request *r, struct sds_image *out, char *err,
                size_t errcap);

/* Checks a sampler / schedule type pair as sds_generate reads them (NULL or "": the default),
 * without a session. Returns SDS_OK, or SDS_EINVAL with a message listing the accepted names. */
int sds_sampler_check(const char *sampler, const char *schedule, char *err, size_t errcap);

/* Checks an emphasis name as sds_request.emphasis reads it (NULL or "": the default, diffusers).
 * Returns SDS_OK, or SDS_EINVAL with a message listing the accepted names. */
int sds_emphasis_check(const char *name, char *err, size_t errcap);

/* Resizes an 8-bit image of w x h pixels with ch interleaved channels (1 or 3) to dw x dh as Pillow's
 * Image.resize((dw, dh), Image.LANCZOS) (A1111's img2img resize_mode 0 "Just resize"): separable
 * Lanczos a=3, support scaled on downscale, 8-bit fixed-point coefficients, horizontal pass first
 * (image_resize.c). *out: malloc'd dh * dw * ch bytes. Returns SDS_OK, SDS_EINVAL (sizes out of
 * [1, 16384], ch) or SDS_ERROR (memory). */
int sds_image_resize(const unsigned char *pix, int w, int h, int ch, int dw, int dh, unsigned char **out);

/* Pillow's resample filters, by Pillow's numbers */
#define SDS_RESAMPLE_LANCZOS 1 /* Image.LANCZOS (a = 3) */
#define SDS_RESAMPLE_BICUBIC 3 /* Image.BICUBIC (a = -0.5): Image.resize's default */

/* Pillow's Image.resize((dw, dh), resample, box=box) of an 8-bit image [h, w, ch] (ch 1, 3 or 4):
 * the source region box = {x0, y0, x1, y1} in pixels, fractional allowed; a zero-height/width box
 * stretches the rows/columns around it; an integral box of the output's size is a plain crop.
 * resample: SDS_RESAMPLE_LANCZOS or SDS_RESAMPLE_BICUBIC. *out: malloc'd [dh, dw, ch]. Returns
 * SDS_OK, SDS_EINVAL (sizes, filter, a box outside the image or inverted) or SDS_ERROR (memory). */
int sds_image_resize_box(const unsigned char *pix, int w, int h, int ch, const float box[4], int dw, int dh,
                         int resample, unsigned char **out);

/* Inpainting's "only masked" area (A1111's Inpaint area "Only masked" with "Masked area padding",
 * diffusers' padding_mask_crop; inpaint_crop.c), as diffusers' VaeImageProcessor:
 * sds_mask_crop_region is get_crop_region(mask, width, height, pad): the box {x0, y0, x1, y1}
 * (x1, y1 exclusive) holding every non-zero pixel of the 8-bit gray mask [h, w], grown by pad
 * pixels, then grown to the aspect ratio of the processing size width x height and kept inside the
 * image. Returns SDS_OK, or SDS_EINVAL for an all-zero mask or bad sizes. */
int sds_mask_crop_region(const unsigned char *mask, int w, int h, int width, int height, int pad, int box[4]);

/* The box of an 8-bit image [h, w, ch] (ch 1 or 3) cropped and resized to dw x dh as diffusers'
 * resize(..., resize_mode="fill"): LANCZOS to fit inside, centred, the bands left over filled with
 * its edge rows/columns stretched (Pillow's default BICUBIC there, as diffusers calls it; byte for
 * byte). *out: malloc'd [dh, dw, ch]. Returns SDS_OK,
 * SDS_EINVAL (box outside the image, sizes) or SDS_ERROR (memory). */
int sds_image_crop_fill(const unsigned char *pix, int w, int h, int ch, const int box[4], int dw, int dh,
                        unsigned char **out);

/* diffusers' apply_overlay(mask, init_image, image, box): gen_rgb [gh, gw, 3] resized "crop" (LANCZOS
 * to cover, centred) into box of a w x h canvas, then init_rgb [h, w, 3] composited over it with
 * 255 - mask ([h, w] gray, the mask the generation used, blurred or not) as alpha, in Pillow's
 * integer arithmetic. *out: malloc'd [h, w, 3]: where the mask is 0 it is init_rgb exactly.
 * Returns SDS_OK, SDS_EINVAL (sizes, box) or SDS_ERROR (memory). */
int sds_image_overlay(const unsigned char *init_rgb, const unsigned char *mask, int w, int h,
                      const unsigned char *gen_rgb, int gw, int gh, const int box[4], unsigned char **out);

/* Frees what sds_txt2img put in *im (and zeroes it). NULL is a no-op. */
void sds_image_free(struct sds_image *im);

/* Encodes an 8-bit RGB image ([h, w, 3]) as a PNG in memory with n_text text chunks keys[i] =
 * values[i] (keys: Latin-1, 1-79 bytes; values: tEXt when ASCII, else iTXt holding UTF-8). *png receives a malloc'd buffer of *len bytes (free()).
 * Returns SDS_OK, or SDS_ERROR with a message. */
int sds_png_encode(const unsigned char *rgb, int w, int h, const char *const *keys, const char *const *values,
                   int n_text, unsigned char **png, size_t *len, char *err, size_t errcap);

/* Reads a PNG from memory: its text chunks (tEXt, zTXt, iTXt) into keys/values (malloc'd strings,
 * up to cap of them; free each and the arrays' entries with free()), the count in *n_text, and its
 * size in *w, *h (NULL: not wanted). Returns SDS_OK, or SDS_EINVAL with a message for data that is
 * not a PNG. */
int sds_png_text(const unsigned char *png, size_t len, char **keys, char **values, int cap, int *n_text, int *w,
                 int *h, char *err, size_t errcap);

/* Decodes a PNG in memory (any PNG mode; alpha dropped, gray expanded) into malloc'd 8-bit RGB
 * [h, w, 3] (gray: [h, w] when want_gray). Returns SDS_OK, or SDS_EINVAL with a message for data that
 * is not a readable PNG or is larger than 16384 x 16384. */
int sds_png_decode(const unsigned char *png, size_t len, int want_gray, unsigned char **pix, int *w, int *h,
                   char *err, size_t errcap);

/* A cheap preview of latents ([4, lat_h, lat_w] float32, SD 1.x/2.x) as 8-bit RGB [lat_h, lat_w, 3]:
 * the linear latent -> RGB map A1111 calls "Approx cheap" (x * 0.5 + 0.5, clamped). rgb holds
 * lat_h * lat_w * 3 bytes. Returns SDS_OK, or SDS_EINVAL when lat_c is not 4. */
int sds_preview_rgb(const float *latents, int lat_c, int lat_h, int lat_w, unsigned char *rgb);
/* The same for a family's latents (sds_info.family): "sdxl" with A1111's SDXL coefficients, "sd3" and
 * "flux" [16, lat_h, lat_w] with A1111's SD 3 / Flux ones (the loops' latents, scaled and shifted as
 * the transformer sees them); NULL, "" or another family: SD 1.x's. SDS_EINVAL when lat_c is not the
 * family's (4; 16 for SD 3 / Flux). */
int sds_preview_rgb_family(const char *family, const float *latents, int lat_c, int lat_h, int lat_w,
                           unsigned char *rgb);

/* The sampler names sds_request.sampler accepts, comma-separated. */
const char *sds_sampler_names(void);

#ifdef __cplusplus
}
#endif

#endif
