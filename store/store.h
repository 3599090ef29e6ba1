/* store.h — the checkpoint store (docs/engine.md, layer 1): opens what a user downloads (one
 * .safetensors file in the original LDM single-file layout, a diffusers component file, or a
 * diffusers folder with plain, .fp16 and sharded files) and answers, per component (unet, vae,
 * text_encoder, text_encoder_2), "the tensor of canonical key K" (its name in the component's
 * diffusers state_dict, e.g. "down_blocks.0.resnets.0.conv1.weight") as a zero-copy view of the
 * mmapped file. Only the store knows checkpoint key names: the key tables are data
 * (store/keymap_sd.def), applied by store/keymap.c.
 *
 * Views: dtype F32, F16 or BF16 (little-endian, as stored), dims as the diffusers model has them
 * (the VAE attention's 1x1-conv weights [C,C,1,1] are presented as linear [C,C]; SD 2.x
 * OpenCLIP's fused in_proj [3D,D] as three [D,D] row slices q/k/v; OpenCLIP's text_projection
 * [D,P] as diffusers' text_projection.weight [P,D]: a transposed view, see o2s_view.transposed).
 * data points into the mapping:
 * valid until o2s_close, read-only, not necessarily aligned to the element size (read it with
 * memcpy or o2s_to_f32).
 *
 * Errors: nothing here exits or prints. A function that fails returns NULL / -1 and writes one
 * message (NUL-terminated, truncated to errcap bytes) into err, naming the file and the key.
 * Pickle checkpoints (.ckpt, .pt, .pth, .bin, or a zip/pickle file) are refused, never read.
 */
#ifndef ONNX2CL_STORE_H
#define ONNX2CL_STORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define O2S_MAX_RANK 8

/* Element types a view can have (the store refuses others for tensors it maps). */
enum o2s_dtype { O2S_F32 = 1, O2S_F16 = 2, O2S_BF16 = 3 };

/* Components, as diffusers names their folders. */
enum o2s_component {
    O2S_UNET = 0,
    O2S_VAE,
    O2S_TEXT_ENCODER,
    O2S_TEXT_ENCODER_2,
    O2S_TRANSFORMER,    /* SD 3.x's / Flux's transformer (diffusers folders; keys as saved) */
    O2S_TEXT_ENCODER_3, /* SD 3.x's T5 encoder (diffusers folders; keys as saved) */
    O2S_NUM_COMPONENTS
};

/* How the checkpoint was laid out. */
enum o2s_format {
    O2S_FORMAT_LDM = 1,       /* one .safetensors in the original single-file (LDM) layout */
    O2S_FORMAT_COMPONENT,     /* one .safetensors of one component in diffusers naming (its
                                 folder, e.g. unet/, names the component) */
    O2S_FORMAT_DIFFUSERS,     /* a diffusers folder (component subfolders) */
};

/* One tensor, as a component's canonical key sees it. */
struct o2s_view {
    enum o2s_dtype dtype;
    int rank;                      /* 0..O2S_MAX_RANK */
    int64_t dims[O2S_MAX_RANK];    /* diffusers' dims (see the header comment for reshapes) */
    const void *data;              /* first byte, inside the mapping (row slices: the slice) */
    uint64_t bytes;                /* = product(dims) x element size */
    const char *key;               /* canonical key */
    const char *orig_key;          /* the key in the file */
    const char *file;              /* the file's path */
    enum o2s_component component;
    int transposed;                /* 2-D only: data holds the [dims[1], dims[0]] matrix
                                      row-major (OpenCLIP's text_projection, which diffusers
                                      stores transposed); o2s_to_f32 writes dims' layout. Users
                                      of data itself must honour it */
    int swapped;                   /* data holds dim 0's two halves in the other order (the SD 3
                                      / Flux single files' adaLN (shift, scale) rows that
                                      diffusers keeps as (scale, shift)); o2s_to_f32 writes dims'
                                      layout. Users of data itself must honour it */
};

/* Open options (a zeroed struct, or NULL, asks for the defaults). */
struct o2s_options {
    const char *variant; /* diffusers folder: file variant to prefer ("fp16": the
                            *.fp16.safetensors files); NULL: the full-precision files, and a
                            variant only where a component has no other */
    int use_ema;         /* LDM file: take the UNet from its EMA copy (model_ema.*); an error if
                            the file has none. Default 0: EMA keys are ignored */
};

/* What was opened (o2s_info). Counts are over tensors in the files. */
struct o2s_info {
    enum o2s_format format;
    const char *path;          /* as given to o2s_open */
    int files;                 /* .safetensors files mapped */
    uint64_t file_bytes;       /* their total size */
    size_t tensors;            /* tensors in the files' headers */
    size_t mapped;             /* tensors that became at least one canonical key */
    size_t ignored;            /* known and deliberately unused (EMA copy, LDM noise-schedule
                                  buffers, position_ids, OpenCLIP's text_projection and last
                                  layer, ...) */
    size_t unknown;            /* tensors no table row knows (o2s_unknown_key) */
    size_t by_dtype[4];        /* mapped tensors per enum o2s_dtype */
    int has_ema;               /* the file has model_ema.* tensors */
    const char *variant;       /* the variant read ("fp16"), or NULL */
};

struct o2s_store;

/* Opens a checkpoint: a .safetensors file or a diffusers folder. Maps the files, checks every
 * header (8-byte length inside the file; JSON valid (cJSON); each tensor's dtype known and its
 * shape x dtype size == end - begin; offsets inside the data region; tensors tiling the region
 * without overlap or hole; no key twice; __metadata__ kept), converts the keys through the tables
 * and checks that every mapped tensor is F32/F16/BF16 and that no two keys give one canonical key.
 * opt may be NULL. Returns NULL with a message in err on any failure. */
struct o2s_store *o2s_open(const char *path, const struct o2s_options *opt, char *err,
                           size_t errcap);
/* Adds the .safetensors file path as component c, replacing what the checkpoint had of it (the
 * text encoders and VAE that Black Forest Labs' / SAI's transformer-only files leave out, or
 * another VAE as A1111's "SD VAE"): a VAE in LDM naming (ae.safetensors, vae-*.safetensors) or
 * diffusers naming; a text encoder in transformers naming (CLIP text_model.*, T5 encoder.block.*).
 * The header checks of o2s_open apply. Returns 0, or -1 with a message naming the file: not a
 * file, a malformed header, tensors of another component, a key that is none of c's. */
int o2s_add_component_file(struct o2s_store *s, enum o2s_component c, const char *path, char *err,
                           size_t errcap);
/* Unmaps and frees everything (views die with it). NULL is a no-op. */
void o2s_close(struct o2s_store *s);

/* Tensor of canonical key in component c. Returns 0 and fills *v, or -1 (not present). */
int o2s_find(const struct o2s_store *s, enum o2s_component c, const char *key,
             struct o2s_view *v);
/* Number of canonical keys of component c (0 if the checkpoint lacks it). */
size_t o2s_count(const struct o2s_store *s, enum o2s_component c);
/* The i-th (0 <= i < o2s_count) canonical key of component c, in strcmp order. Returns 0 / -1. */
int o2s_get(const struct o2s_store *s, enum o2s_component c, size_t i, struct o2s_view *v);

void o2s_info(const struct o2s_store *s, struct o2s_info *info);
/* The i-th (0 <= i < info.unknown) key no table knows, in file order; NULL past the end. */
const char *o2s_unknown_key(const struct o2s_store *s, size_t i);
/* Value of __metadata__[name] of the first file that has it, or NULL. */
const char *o2s_metadata(const struct o2s_store *s, const char *name);

/* "unet", "vae", "text_encoder", "text_encoder_2", "transformer", "text_encoder_3"; and back (-1 if
 * none). */
const char *o2s_component_name(enum o2s_component c);
int o2s_component_from_name(const char *name);
/* "F32", "F16", "BF16"; element size in bytes. */
const char *o2s_dtype_name(enum o2s_dtype t);
size_t o2s_dtype_size(enum o2s_dtype t);
/* Elements of v (product of dims). */
uint64_t o2s_elements(const struct o2s_view *v);
/* Converts v's elements to float32 into out (o2s_elements(v) floats, row-major in v's dims:
 * a transposed view comes out transposed, a swapped one swapped back); exact for all three
 * dtypes. */
void o2s_to_f32(const struct o2s_view *v, float *out);

/* ---- architecture (minimal: family and the config that keys and shapes reveal) ----------- */
struct o2s_arch {
    char family[16];                 /* "sd1", "sd2", "sdxl", "sdxl_refiner", "sd3" or "flux" (the last
                                        two from a transformer component: no UNet fields) */
    int text_openclip;               /* text encoder came from OpenCLIP keys (SD 2.x files) */
    int use_linear_projection;       /* UNet transformers' proj_in is linear (rank 2; SD 2.x) */
    int64_t unet_in_channels;        /* conv_in.weight dims[1] */
    int64_t unet_model_channels;     /* conv_in.weight dims[0] (block_out_channels[0]) */
    int64_t cross_attention_dim;     /* attn2.to_k.weight dims[1] */
    int unet_down_blocks;            /* len(block_out_channels) */
    int unet_layers_per_block;
    int64_t text_hidden;             /* token_embedding dims[1] (0: no text encoder) */
    int text_layers;                 /* encoder layers */
    int64_t vae_channels;            /* encoder.conv_in.weight dims[0] (0: no VAE) */
    /* SDXL (UNet addition_embed_type "text_time"): */
    int64_t addition_embed_dim;      /* add_embedding.linear_1.weight dims[1]
                                        (projection_class_embeddings_input_dim; 0: none) */
    int64_t text2_hidden;            /* text_encoder_2 token_embedding dims[1] (0: none) */
    int text2_layers;
    int64_t text2_projection_dim;    /* text_encoder_2 text_projection.weight dims[0] */
    int text2_openclip;              /* text_encoder_2 came from OpenCLIP keys (single files) */
    char why[160];                   /* the evidence for family, one line */
};
/* Detects the family from keys and shapes and checks the checkpoint against it: each required
 * key present with dims consistent with the detected config, and every ResNet / transformer /
 * attention module complete. Returns 0, or -1 with a message in err naming the file and the
 * first few missing or mismatched keys and what was expected. To be extended by arch.json
 * matching (docs/engine.md). */
int o2s_detect_arch(const struct o2s_store *s, struct o2s_arch *a, char *err, size_t errcap);

/* ---- installed architectures (DIR/<arch>/arch.json, docs/engine.md) ---------------------- */
struct o2s_arch_match {
    char name[256];   /* the architecture's folder name ("tiny_sd15", "sd15") */
    char dir[4096];   /* DIR/<name> */
    size_t keys;      /* keys its arch.json lists (all equal in the checkpoint) */
};
/* Picks the architecture of s among DIR/<arch>/arch.json: the one whose `keys` table
 * (component -> canonical key -> shape) the checkpoint has exactly (every key present with those
 * dims, no key and no component more). Returns 0 and fills *m, or -1 with a message in err:
 * none matches (names the closest architecture and its first few missing / mismatched / extra
 * keys with the dims expected and found), no arch.json in DIR, an arch.json without a keys
 * table, or two architectures matching. */
int o2s_match_arch_dir(const struct o2s_store *s, const char *dir, struct o2s_arch_match *m,
                       char *err, size_t errcap);


/* ---- one LDM key (store/keymap.c) ---------------------------------------------------------- */
/* Maps one single-file (LDM) key, e.g. "model.diffusion_model.input_blocks.1.1.proj_in.weight",
 * to its component and canonical key through the tables, with the block-index parameters of the
 * checkpoint base (its own keys: layers per block, VAE up blocks). Returns 0, or -1 when no row
 * maps it (or it is ignored, or a fused q/k/v row). base need not be an LDM file. */
int o2s_ldm_canonical(const struct o2s_store *base, const char *ldm_key, enum o2s_component *c,
                      char *out, size_t cap);

/* ---- LoRA (store/lora.c) ------------------------------------------------------------------- */
/* One low-rank pair of a LoRA file: base weight W (component, canonical key) becomes
 * W + scale * alpha/rank * up @ down, with up viewed as [out, rank] and down as [rank, rest]
 * (a linear [r,in]; a 1x1 conv [r,in,1,1]; a 3x3 LoCon conv [r,in,3,3] -> [r,in*9]). */
struct o2s_lora_entry {
    enum o2s_component component;
    const char *key;          /* canonical key of the base weight */
    const char *module;       /* the file's key of the down factor (for messages) */
    struct o2s_view down, up; /* as stored in the LoRA file (zero-copy) */
    int rank;                 /* down dims[0] = up dims[1] */
    float alpha;              /* .alpha tensor, PEFT lora_alpha metadata, or rank */
    int has_alpha;            /* alpha came from the file */
};
struct o2s_lora;

/* Opens the LoRA .safetensors at path (checked as o2s_open checks files) and resolves every
 * module against the checkpoint base: kohya (lora_unet_ / lora_te_ / lora_te1_ / lora_te2_,
 * diffusers or LDM module paths with '_', or on a Flux checkpoint Black Forest Labs' paths, a fused
 * qkv / linear1 module becoming one entry per canonical weight with its rows of up;
 * .lora_down/.lora_up/.alpha), diffusers/PEFT
 * (unet. / text_encoder. / text_encoder_2. / transformer. + path, .lora_A/.lora_B or .lora.down/.lora.up;
 * alpha from __metadata__ lora_adapter_metadata's lora_alpha, else rank). Refused (NULL, message
 * naming the file and key): keys of no known naming or modules matching no base weight (the
 * first few listed), a factor without its partner, up/down ranks that differ, shapes that do not
 * fit the base weight, a component the checkpoint lacks (an SDXL LoRA's lora_te2_), two keys for
 * one weight. base must outlive the result. */
struct o2s_lora *o2s_lora_open(const char *path, const struct o2s_store *base, char *err,
                               size_t errcap);
/* Unmaps and frees (entries die with it). NULL is a no-op. */
void o2s_lora_close(struct o2s_lora *l);
/* Whether an opened file is a LoRA rather than a checkpoint: a single file none of whose tensors
 * the checkpoint tables map, with keys of a LoRA naming (down factors .lora_down.weight /
 * .lora_A. / .lora.down.weight, or LyCORIS .hada_/.lokr_/.oft_/.diff, or DoRA magnitudes).
 * Returns NULL (not a LoRA) or the naming found: "kohya", "diffusers/PEFT", "older diffusers",
 * "LyCORIS", "DoRA" (the first with keys, in that order). */
const char *o2s_is_lora(const struct o2s_store *s);
/* Number of resolved entries, and the i-th (NULL past the end), in file order. */
size_t o2s_lora_count(const struct o2s_lora *l);
const struct o2s_lora_entry *o2s_lora_get(const struct o2s_lora *l, size_t i);
/* The entry changing (c, key), or NULL. */
const struct o2s_lora_entry *o2s_lora_find(const struct o2s_lora *l, enum o2s_component c,
                                           const char *key);
/* w (the base weight as float32, o2s_elements of its view) += scale * alpha/rank * up @ down,
 * a blocked float32 product (sums over the rank in float32, as PyTorch's fuse_lora), its rows split
 * across threads when the product is large and the store was built with pthreads (O2S_THREADS=N in
 * the environment overrides the count; 1: serial). The result does not depend on the thread
 * count. Returns 0, or -1 when out of memory. */
int o2s_lora_apply(const struct o2s_lora_entry *e, float scale, float *w);

#ifdef __cplusplus
}
#endif
#endif
