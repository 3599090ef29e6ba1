/* namemap.h — name maps (docs/engine.md layer 2): which checkpoint tensors, named by their
 * canonical diffusers keys, give each initializer of an exported graph, and by which transform;
 * filling a graph's initializers from a checkpoint through one (`onnx2cl --weights-from CKPT
 * --name-map FILE`), and recovering one by value matching (`onnx2cl --name-map-from CKPT`).
 *
 * File format (text, UTF-8, one line per initializer, '#' lines and blank lines ignored):
 *   <initializer> TAB <component> TAB <key>[,<key>...] TAB <transform>
 * component: unet, vae, text_encoder, text_encoder_2 (any name without tab, comma or space);
 * transform: copy (same dims), transpose (a 2-D key [a,b] gives the [b,a] initializer: the
 * TorchScript exporter's MatMul weights), reshape (same element count, other dims), concat0 (the
 * keys concatenated on axis 0), scale:<float> (the key times a constant). Several keys with copy,
 * transpose, reshape or scale: the exporter deduplicated identical tensors; all keys are listed
 * and must hold equal values. A line "<initializer> - - -" marks an initializer that is no
 * checkpoint tensor (an exporter constant): it keeps the graph's values.
 *
 * Checkpoint access is one small interface (struct nm_source: find by (component, canonical key)
 * and enumerate), so a checkpoint store (single files, diffusers folders, key tables) plugs in
 * without this module knowing any checkpoint format; nm_source_safetensors() is the one-file
 * source: a safetensors file whose keys are canonical keys (what diffusers save_pretrained writes
 * in unet/diffusion_pytorch_model.safetensors).
 */
#ifndef ONNX2CL_FRONTEND_NAMEMAP_H
#define ONNX2CL_FRONTEND_NAMEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* How a line's keys become its initializer. */
enum nm_transform {
    NM_KEEP,      /* "-": not a checkpoint tensor, the graph's own values stay */
    NM_COPY,      /* same dims */
    NM_TRANSPOSE, /* 2-D [a,b] key -> [b,a] initializer */
    NM_RESHAPE,   /* same element count, other dims */
    NM_CONCAT0,   /* keys concatenated on axis 0 */
    NM_SCALE,     /* key times nm_line.scale (same dims) */
};

/* One line of a name map. */
struct nm_line {
    const char *init;          /* ONNX initializer name */
    const char *component;     /* "unet", "vae", ... (NULL for NM_KEEP) */
    const char **keys;         /* canonical keys (nkeys; NULL for NM_KEEP) */
    int nkeys;                 /* number of keys (0 for NM_KEEP) */
    enum nm_transform tr;      /* transform */
    float scale;               /* factor of NM_SCALE */
    int lineno;                /* 1-based line in the file, for messages */
};

/* A loaded name map (strings and arrays in the graph arena given to nm_load). */
struct nm_map {
    const char *path;          /* file name, for messages */
    struct nm_line *lines;     /* lines in file order */
    size_t n;                  /* number of lines */
};

/* A checkpoint tensor as a source hands it out: a view of its bytes, never a copy. */
struct nm_view {
    enum ir_dtype dtype;       /* IR_F32, IR_F16, IR_BF16, IR_F64 (or an integer dtype) */
    int rank;                  /* number of dims */
    int64_t dims[IR_MAX_RANK]; /* dims, row-major */
    const void *data;          /* dense little-endian elements (must outlive the compile), or
                                  NULL when make gives them */
    size_t nbytes;             /* bytes at data */
    /* A tensor made on demand (a LoRA-merged weight): writes its nbytes (dtype IR_F32) into dst
     * from make_ctx; nm_apply calls it when the weight is written (ir_lazy), not before. NULL
     * for a tensor at data. */
    void (*make)(const void *make_ctx, void *dst);
    const void *make_ctx;
};

/* Where mapped initializers take their values: (component, canonical key) -> tensor view. */
struct nm_source {
    const char *name;          /* checkpoint name for messages (a path) */
    void *ctx;                 /* the source's own state */
    size_t n;                  /* number of tensors at() enumerates */
    /* Fills *out with the tensor of canonical key `key` of `component`; false when absent. */
    bool (*find)(void *ctx, const char *component, const char *key, struct nm_view *out);
    /* Fills the i-th tensor (i < n): its key and view. */
    void (*at)(void *ctx, size_t i, const char **key, struct nm_view *out);
};

/* What nm_apply did. */
struct nm_result {
    uint32_t applied;          /* initializers filled from the checkpoint */
    uint32_t kept;             /* lines marked "-" (graph values kept) */
    uint32_t unused;           /* checkpoint tensors no line uses */
    const char *first_unused[4]; /* the first few of them (NULL-padded) */
};

/* Parses the name map file at path into m (arena of g). Fatal (exit 1) with "path:line: what"
 * on a malformed line: not 4 tab-separated fields, an empty field or key, an unknown transform,
 * a bad scale, keys or a transform on a "-" line, an initializer named twice. */
void nm_load(struct ir_graph *g, const char *path, struct nm_map *m);

/* Fills src as the tensors of the safetensors file at path (mapped for the life of the process,
 * checked as st_read does), looked up by key alone: the file stands for one component. */
void nm_source_safetensors(struct ir_graph *g, const char *path, struct nm_source *src);

/* Replaces the data of every initializer m maps by its keys' tensors from src, transformed,
 * converted to the initializer's dtype as --weights-from does (any float into float32, F32/F16
 * into float16; zero-copy for copy/reshape of the same dtype when aligned). Checks everything
 * first and refuses (exit 1, nothing replaced) listing the first few problems: a key src lacks,
 * dims that do not fit the transform, a dtype that cannot fill the initializer, a transpose of a
 * non-2-D tensor, deduplicated keys with different values; a line naming no initializer of g
 * is fatal with its file:line. Checkpoint tensors that no line uses are counted in r (a note for
 * the caller: a VAE checkpoint holds the encoder a decoder graph does not use). */
void nm_apply(struct ir_graph *g, const struct nm_map *m, const struct nm_source *src,
              struct nm_result *r);

/* Fatal (exit 1) naming the model, the first unfilled initializer (with its dims) and how many
 * there are, when an initializer of g still holds placeholder data (onnx_is_placeholder) after
 * the weights were applied; `how` says what was given ("the name map FILE has no line for it"). */
void nm_check_filled(const struct ir_graph *g, const char *model, const char *how);

/* Recovers a name map for g's float initializers (as imported: call before any pass) by value
 * matching against src: exact float32 equality of the values (F16/BF16/F64 converted), as is or
 * 2-D transposed; every key holding an initializer's values is listed (deduplicated tensors).
 * Initializers matching nothing get "-" lines. Writes the map to out_path (temporary name, then
 * rename; fatal naming the file on an I/O error) under component; returns the number of
 * initializers matched; *unmatched (may be NULL) gets the float initializers that matched no key. */
uint32_t nm_recover(const struct ir_graph *g, const struct nm_source *src, const char *component,
                    const char *out_path, uint32_t *unmatched);

#endif
