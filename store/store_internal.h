/* store_internal.h — shared by the files of store/ only (store.c: files, headers, lookups;
 * keymap.c: the key tables; arch.c: family detection and checks). */
#ifndef ONNX2CL_STORE_INTERNAL_H
#define ONNX2CL_STORE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>

#include "store.h"
#include "platform.h" /* runtime/platform.h: the OS seam (O2R_PRINTF, o2r_file_map ...) */

#define O2S_KEY_MAX 1024 /* longest key handled (bytes, with the NUL) */

/* A mapped .safetensors file. */
struct o2s_file {
    char *path;
    const unsigned char *base; /* mapping of the whole file */
    size_t size;
    const unsigned char *data; /* data region (after the header) */
    uint64_t data_len;
    void *meta;                /* cJSON object of __metadata__ (or NULL) */
};

enum o2s_tstate { O2S_T_UNKNOWN = 0, O2S_T_MAPPED, O2S_T_IGNORED };

/* A tensor as its file's header lists it. */
struct o2s_tensor {
    int file;
    char *name;
    int dtype;                  /* enum o2s_dtype, or 0 for a known non-float dtype */
    const char *dtype_name;     /* as written ("I64", ...) */
    int rank;
    int64_t dims[O2S_MAX_RANK];
    uint64_t begin, end;        /* data_offsets */
    enum o2s_tstate state;
};

/* COPY: as stored. LINEAR: trailing 1-dims dropped (1x1 conv as linear). SPLIT3: dim 0 in three
 * equal slices (part 0..2: q, k, v). TRANSPOSE: a 2-D tensor seen transposed. SWAP2: dim 0's two
 * halves swapped (SD 3 / Flux adaLN (shift, scale) -> diffusers' (scale, shift), diffusers'
 * swap_scale_shift). SWAP2_LAST: SWAP2 for the last joint block (the rule's first capture ==
 * the file's last joint_blocks index), else COPY (SD 3's context_pre_only block). SPLIT_QKVM:
 * dim 0 in parts of 1:1:1:4 (part 0..3: q, k, v, MLP in; Flux single blocks' linear1 with
 * mlp_ratio 4). */
enum o2s_transform {
    O2S_COPY = 0,
    O2S_LINEAR,
    O2S_SPLIT3,
    O2S_TRANSPOSE,
    O2S_SWAP2,
    O2S_SWAP2_LAST,
    O2S_SPLIT_QKVM,
};

/* A canonical key of a component. */
struct o2s_entry {
    char *key;
    size_t tensor;              /* index into tensors */
    int rank;
    int64_t dims[O2S_MAX_RANK];
    uint64_t offset, bytes;     /* within the tensor's bytes */
    int transposed;             /* O2S_TRANSPOSE: dims are the stored 2-D dims swapped */
    int swapped;                /* O2S_SWAP2: dim 0's halves are stored in the other order */
};

struct o2s_store {
    struct o2s_options opt;
    char *variant;
    enum o2s_format format;
    char *path;
    struct o2s_file *files;
    int nfiles;
    struct o2s_tensor *tensors;
    size_t ntensors, captensors;
    struct o2s_entry *entries[O2S_NUM_COMPONENTS];
    size_t nentries[O2S_NUM_COMPONENTS], capentries[O2S_NUM_COMPONENTS];
    int has_ema;
    unsigned evidence;          /* keymap.c: bit k set when a key starts with evidence prefix k */
};

/* snprintf into err; returns -1. */
int o2s_fail(char *err, size_t cap, const char *fmt, ...) O2R_PRINTF(3, 4);
/* Adds canonical key for tensor t with transform tf (part: 0..2 of SPLIT3, 0..3 of
 * SPLIT_QKVM). -1 + err on a bad
 * shape for the transform. */
int o2s_add_entry(struct o2s_store *s, enum o2s_component c, const char *key, size_t t,
                  enum o2s_transform tf, int part, char *err, size_t cap);
/* Converts the tensors [first, ntensors) of an LDM (or SD 3 / Flux) single file through the
 * tables (keymap_sd.def); evidence and block parameters come from those tensors alone. Returns
 * the number of tensors mapped, or -1 with err. */
long o2s_keymap_ldm(struct o2s_store *s, size_t first, char *err, size_t cap);
/* The canonical transformer key(s) of a Black Forest Labs Flux key (sd3 0: keymap_sd.def's FLUX rules, e.g.
 * "double_blocks.0.img_attn.qkv.weight" -> the three attn.to_q/k/v weights) or of an SAI SD 3 MMDiT key
 * (sd3 1: the SD3 rules, "joint_blocks.0.x_block.attn.qkv.weight" -> attn.to_q/k/v): keys[0..*nparts),
 * *tf how the tensor's rows split (COPY, SPLIT3, SPLIT_QKVM). -1: no rule, or a swapped (adaLN)
 * tensor, which a row slice cannot express. For kohya-named Flux and SD 3 LoRAs (lora.c). */
int o2s_flow_canonical(int sd3, const char *key, char keys[4][O2S_KEY_MAX], int *nparts, enum o2s_transform *tf);
/* The component a single file holds in diffusers naming (keymap_sd.def's O2S_COMPONENT_KEY: a
 * file without LDM keys, named by its folder or by its keys), or -1 (read it as LDM). */
int o2s_component_file(const struct o2s_store *s, const char *path);
/* Adds the tensors [first, ntensors) of a diffusers component file as component c's keys: as
 * they are, except CLIP text encoders saved without their text_model. level (transformers 5.x),
 * which get it back through the CLIP rules (position_ids ignored). 0, or -1 with err. */
int o2s_keymap_diffusers(struct o2s_store *s, enum o2s_component c, size_t first, char *err,
                         size_t cap);
/* Maps the .safetensors file at path into s and checks its header (o2s_open's checks); appends
 * its tensors to s->tensors (no key conversion). Returns the file index, or -1 with err. */
int o2s_map_file(struct o2s_store *s, const char *path, char *err, size_t cap);
/* dims as "[a,b,c]" */
void o2s_dims_str(const int64_t *d, int rank, char *out, size_t cap);

#endif
