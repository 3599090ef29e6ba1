/* sd_engine.h — the engine front of `onnx2cl-sd -m CHECKPOINT` (docs/engine.md, layer 5): from a
 * checkpoint (.safetensors file or diffusers folder) to the three runnable models, through the
 * cache.
 *
 * What sde_prepare does:
 *   1. opens the checkpoint with the store (o2s_open) and picks its architecture among
 *      ARCH_DIR/<arch>/arch.json (o2s_match_arch_dir: keys and dims);
 *   2. for text_encoder, unet, vae_decoder (and vae_encoder when o->vae_encoder; SDXL: text_encoder_2
 *      as program[4]; the UNet with its text_embeds and time_ids inputs): the program
 *        CACHE/programs/<arch>/<model>/<shape>-b<batch>-any-<compiler id>/model.o2d
 *      (shape: WxH, or tokens<N> for the text encoder; the UNet's WxH-b<B>-t<T> when it takes T != 77
 *      text tokens (long prompts); "any": the .o2d holds every kernel class,
 *      the runtime picks one at init) and the weights
 *        CACHE/weights/<key>/<model>.weights
 *      (key: hash of the checkpoint's keys, dtypes, dims, file sizes and mtimes + LoRA set +
 *      storage dtype + compiler id; shape-independent, shared by every size) — each compiled on
 *      first use by running the onnx2cl executable (`ARCH/<model>.onnx --name-map
 *      ARCH/<model>.namemap --weights-from ...`, `-o model.o2d`, or `--weights-only`), with a
 *      progress line on stderr. Everything is written under a temporary name in its final folder
 *      and renamed when complete;
 *   3. the tokenizer folder (the diffusers folder's tokenizer/ when it has vocab.json, else the
 *      architecture's ARCH/tokenizer/), the scheduler config (the folder's
 *      scheduler/scheduler_config.json, else arch.json's "scheduler" written once as
 *      CACHE/programs/<arch>/scheduler_config.json) and the VAE scaling factor (vae/config.json,
 *      else arch.json).
 * A second call with the same checkpoint, LoRAs, size and compiler reads only headers and
 * arch.json files: no conversion, no compile.
 * Errors: -1 with one message naming the file or folder (unknown architecture with its closest
 * match, pickle files, a cache folder that cannot be written, a failed compile with onnx2cl's exit
 * status). POSIX only (fork/exec, stat, mkdir): onnx2cl-sd is not part of the Windows
 * runtime-only build.
 */
#ifndef PIPELINE_SD_ENGINE_H
#define PIPELINE_SD_ENGINE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define SDE_MAX_LORAS 16

/* What to prepare. Zeroed fields take the defaults. */
struct sde_options {
    const char *ckpt;          /* checkpoint: .safetensors file or diffusers folder (required) */
    const char *arch_dir;      /* folder of <arch>/arch.json (NULL: sde_default_arch_dir) */
    const char *cache_dir;     /* NULL: $ONNX2CL_CACHE_DIR, $XDG_CACHE_HOME/onnx2cl, ~/.cache/onnx2cl */
    const char *compiler;      /* onnx2cl executable (NULL: sde_find_compiler) */
    const char *variant;       /* diffusers file variant ("fp16") or NULL */
    /* component files added to (or replacing those of) the checkpoint (o2s_add_component_file),
     * NULL for none: a VAE, CLIP-L, CLIP-G, T5-XXL (text_encoder_3 for SD 3, text_encoder_2
     * for Flux): what transformer-only SD 3.5 / Flux files leave out, or another VAE */
    const char *vae_file, *clip_l_file, *clip_g_file, *t5xxl_file;
    /* T5's SentencePiece model for SD 3 / Flux: a spiece.model file or a folder holding one, used
     * when the checkpoint is not a diffusers folder with its own (NULL: the architecture folder's
     * tokenizer_3/ (Flux: tokenizer_2/) spiece.model; the full-size architectures ship none) */
    const char *t5_tokenizer;
    const char *weights_dtype; /* "f32", "f16" or NULL (= "f16": sde_weights_dtype) */
    int width, height;         /* image size (0: arch.json default_size) */
    int batch;                 /* UNet batch: 2 (guidance in one run) or 1 */
    int n_loras;               /* LoRA files (need an onnx2cl with --lora) */
    const char *loras[SDE_MAX_LORAS]; /* "FILE" or "FILE:SCALE" (SCALE: every model's, default 1) */
    const char *lora_unet[SDE_MAX_LORAS]; /* the UNet's (and VAE's) scale when it differs from the
                                             text encoder's (<lora:NAME:TE:UNET>), else NULL */
    int quiet;                 /* no progress lines */
    int vae_encoder;           /* also the VAE encoder (img2img/inpainting): program[3], weights[3] */
    int tokens;                /* UNet encoder_hidden_states tokens (0: arch.json's tokenizer max_length,
                                  77): a multiple of it for long prompts (sdp_cond_tokens); the UNet
                                  program folder's shape gets "-t<tokens>" when it is not 77 */
    int clip_skip;             /* A1111's Clip skip (0 or 1: off; N > 1: SD 1.x only, N <= the text encoder's
                                  layers): the text encoder's weights with its last N - 1 layers made exact
                                  identities (self_attn.out_proj, layer_norm2, mlp.fc1.bias, mlp.fc2.bias
                                  scaled by 0: attention and MLP add 0), so final_layer_norm reads
                                  hidden_states[-N], as A1111 (and diffusers' clip_skip = N - 1); the same
                                  program, weights text_encoder-clipskip<N>.weights, converted through
                                  CACHE/programs/<arch>/text_encoder-clipskip<N>.namemap */
    int vae_tile;              /* VAE tiling: the tile's side in image pixels (0: off; a multiple of the VAE's
                                  factor, >= 2 factors): the VAE decoder is compiled for min(tile, image) /
                                  factor latents per side, the encoder for min(tile, image) pixels (program
                                  folders of that size); tiling is on (sde_result.vae_tiled) when the tile is
                                  smaller than the image along either side */
    int no_t5;                 /* SD 3: leave the T5 encoder out (compiled and loaded: nothing; its part of the
                                  conditioning is zeros, as diffusers' text_encoder_3=None); also when the
                                  checkpoint has no text_encoder_3 (arch.json optional_components) */
    FILE *info;                /* non-NULL: like plan_only, then what the run will need, written to info:
                                  per model onnx2cl --info's weights, activation arena and device peak for the
                                  run's sizes and weights storage (no weight is read or converted; onnx2cl-sd
                                  --info) and their sum; with plan_only: the plan alone, no table (and no
                                  tokenizer needed: what --info plans before it knows the run's batch) */
    int plan_only;             /* 1: find the architecture, tokenizer, scheduler config and VAE config and
                                  name the program/weights paths, but compile and convert nothing */
    int offload;               /* with info: the run loads one stage's models at a time (onnx2cl-sd
                                  --offload): the table's verdict is the largest stage, not the sum */
};

/* The storage of the converted weights for o: o->weights_dtype, else "f16" (IEEE half for the
 * GEMM/conv/embedding weights, float32 arithmetic: half the memory of "f32"; onnx2cl
 * --weights-dtype). Part of every program folder's name and of the weights cache key (a program
 * reads one storage only). */
static inline const char *sde_weights_dtype(const struct sde_options *o)
{
    return o->weights_dtype ? o->weights_dtype : "f16";
}

/* What it found or made. */
struct sde_result {
    char arch[256];                 /* architecture name */
    char arch_path[PATH_MAX];       /* its folder */
    char program[7][PATH_MAX];      /* text_encoder, unet, vae_decoder (, vae_encoder) (, SDXL, SD 3, Flux (T5):
                                       text_encoder_2) (SD 3: [5] text_encoder_3, "" without T5; SD 3, Flux: [6]
                                       transformer, no unet) .o2d */
    char weights[7][PATH_MAX];      /* their weights files (text encoder: -clipskip<N> with o->clip_skip > 1) */
    char tokenizer[PATH_MAX];       /* tokenizer folder (vocab.json + merges.txt) */
    char tokenizer2[PATH_MAX];      /* SDXL: tokenizer_2 folder (the folder's tokenizer_2/, else the
                                       architecture's); "" for SD 1.x/2.x */
    char family[32];                /* arch.json "family": "sd1", "sd2", "sdxl", "sd3", "flux" */
    char tokenizer3[PATH_MAX];      /* T5's tokenizer folder (spiece.model: the folder's, else the
                                       architecture's): SD 3's tokenizer_3, Flux's tokenizer_2; "" otherwise */
    double shift_factor;            /* arch.json vae_shift_factor (SD 3: 0.0609; 0 when absent) */
    int t5_tokens;                  /* the T5 encoder's input length (SD 3: arch.json tokenizer_3
                                       max_length; Flux: tokenizer_2's) */
    int vae_tiled;                  /* the VAE programs are for a tile of the image (o->vae_tile): set
                                       sdp_pipeline.vae_tiling */
    int force_zeros;                /* SDXL: 1 when an empty negative prompt means zero embeddings
                                       (model_index.json's force_zeros_for_empty_prompt, default true) */
    char sched_cfg[PATH_MAX];       /* scheduler_config.json */
    char vae_cfg[PATH_MAX];         /* vae/config.json of a diffusers folder, or "" */
    double scaling_factor;          /* arch.json vae_scaling_factor */
    int width, height;              /* image size */
    int compiled;                   /* programs compiled by this call */
    int converted;                  /* weights files written by this call */
    double seconds;                 /* time spent in sde_prepare */
};

/* Prepares the models of o->ckpt (see the header comment). Returns 0, or -1 with a message (-2:
 * the message is about a flag: size not a multiple of the VAE factor).
 * r->tokenizer is "" when neither the folder nor the architecture has a tokenizer. */
int sde_prepare(const struct sde_options *o, struct sde_result *r, char *err, size_t errcap);

/* Another checkpoint's model compiled and cached as sde_prepare does the checkpoint's (sd_preview.c:
 * TAESD): model m (2: vae_decoder) of the architecture folder arch_path (its arch.json, <model>.onnx,
 * <model>.namemap) with the weights of ckpt (a .safetensors file the caller has matched to the
 * architecture) for an image of width x height; o's cache, compiler, quiet and weights storage (not
 * its LoRAs, variant, VAE tile). program and weights (PATH_MAX bytes each) receive the cached files.
 * Returns 0, or -1 with a message. */
int sde_prepare_extra(const struct sde_options *o, const char *ckpt, const char *arch_path, int width, int height,
                      int m, char *program, char *weights, char *err, size_t errcap);

/* LoRA tags in the prompt, A1111's syntax (sd_lora_tags.c): every `<lora:NAME>`,
 * `<lora:NAME:W>`, `<lora:NAME:TE:UNET>` (also te=W, unet=W) is removed from *prompt (which then
 * points to a new string, owned by the process; unchanged when there is no tag) and NAME, found by
 * sde_lora_find in lora_dir (NULL or "": $ONNX2CL_LORA_DIR), is appended to o->loras with its
 * weights, after the --lora flags. Other `<TYPE:...>` tags are removed with a note on stderr; a
 * `<lora:` tag in negative (may be NULL) stays text, with a note (A1111 parses the prompt only).
 * Returns 0; -1 (exit 1: a name not found, ambiguous, a missing folder) or -2 (exit 2: a malformed
 * tag, a name with '/' or "..", no folder given, tags without o->ckpt) with one message naming the
 * tag and its character position. */
int sde_lora_tags(struct sde_options *o, const char *lora_dir, const char **prompt, const char *negative,
                  char *err, size_t errcap);

/* The LoRA file of stem `name` under dir (recursively: dir/NAME.safetensors or dir/a/b/NAME.safetensors,
 * as A1111 finds LoRAs by file stem) into path. Returns 0; -2 for a name that is not a plain file
 * stem ('/', '\\', "." or ".."); -1 for no such file (naming name and dir; a pickle file of that stem
 * is named as refused), two or more (naming two), or dir not a folder. */
int sde_lora_find(const char *dir, const char *name, char *path, size_t cap, char *err, size_t errcap);

/* The cache folder: $ONNX2CL_CACHE_DIR, else $XDG_CACHE_HOME/onnx2cl, else $HOME/.cache/onnx2cl.
 * Returns 0, or -1 when none of these is set. */
int sde_cache_dir(char *buf, size_t cap);

/* The installed architectures: <exe dir>/../share/onnx2cl/arch, else the configured install
 * folder, else the source tree's models/arch (a build-tree run), whichever exists first. */
int sde_default_arch_dir(char *buf, size_t cap);

/* The onnx2cl executable: next to this program's executable, else the build tree's. */
int sde_find_compiler(char *buf, size_t cap);

#endif
