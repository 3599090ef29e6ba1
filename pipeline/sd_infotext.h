/* sd_infotext.h — the PNG `parameters` text in AUTOMATIC1111's format ("infotext"), so that its
 * "PNG info" tab and parse_generation_parameters read a generation back, and A1111's short model
 * hash.
 *
 * Format written (one image):
 *   PROMPT
 *   Negative prompt: NEGATIVE                      (line omitted when NEGATIVE is "")
 *   Steps: 20, Sampler: Euler a, Schedule type: Karras, CFG scale: 7, Seed: 1, Size: 512x512,
 *   Model hash: 0123456789, Model: name, Denoising strength: 0.75, Mask blur: 0,
 *   Lora hashes: "name: 0123456789ab", Version: onnx2cl-sd X
 * (the last line one line; keys absent when unknown: Model hash only for a single-file checkpoint, Denoising strength / Mask blur only for img2img /
 * inpainting). A value holding ',', ':' or a newline is written as a JSON string (A1111's
 * quote()). No local paths: Model is the checkpoint's file or folder name without .safetensors.
 */
#ifndef PIPELINE_SD_INFOTEXT_H
#define PIPELINE_SD_INFOTEXT_H

#include <stddef.h>
#include <stdint.h>

struct sdp_infotext {
    const char *prompt, *negative;
    int steps;
    const char *sampler;        /* A1111 name ("Euler a"; sdp_sched_a1111_name) */
    const char *schedule;       /* A1111 Schedule type ("Karras", "Automatic", ...; sdp_sched_a1111_name),
                                   or NULL: then "Karras" when karras is set, else none */
    int karras;
    double cfg;
    uint64_t seed;
    int width, height;
    const char *model_hash;     /* 10 hex or NULL/"" */
    const char *model;          /* name or NULL/"" */
    double strength;            /* < 0: txt2img */
    int inpaint;                /* Mask blur: <mask_blur> */
    double mask_blur;           /* inpainting's --mask-blur radius */
    int clip_skip;              /* A1111's "Clip skip: N", written when > 1 (after Denoising strength) */
    const char *emphasis;       /* NULL, or A1111's "Emphasis: X" (after Mask blur): A1111 writes it when
                                   its Emphasis option is not "Original" and the prompt or the negative
                                   prompt holds '(' or '[' (sdp_infotext_emphasis) */
    const char *lora_hashes;    /* NULL, or A1111's "Lora hashes" value (sdp_infotext_lora_hashes; quoted) */
    const char *extra;          /* NULL, or more "Key: value" pairs appended before Version */
    const char *version;        /* "onnx2cl-sd X" */
};

/* The Emphasis value A1111 writes for a generation: NULL when name is "Original" or neither
 * prompt nor negative (may be NULL) holds '(' or '[', else name (sd_hijack_clip.py's rule). */
const char *sdp_infotext_emphasis(const char *name, const char *prompt, const char *negative);

/* Writes the parameters text into buf (truncated to cap, NUL-terminated when cap > 0). Returns
 * the text's full length (as snprintf: >= cap means it was cut). */
size_t sdp_infotext(const struct sdp_infotext *it, char *buf, size_t cap);

/* The parameters text in a malloc'd string of its exact size (no length limit: a long prompt
 * keeps Steps, Seed, ...), or NULL when out of memory. */
char *sdp_infotext_dup(const struct sdp_infotext *it);

/* SHA-256 of a file as 64 hex digits + NUL. Returns 0, or -1 (errno set) when unreadable. */
int sdp_sha256_file(const char *path, char hex[65]);

/* A1111's short model hash (the first 10 hex digits of the file's SHA-256) of a checkpoint file,
 * cached in cache_dir/model_hashes.tsv (path, size, mtime, sha256: a file changed in place is
 * hashed again). cache_dir NULL: not cached. Returns 0, or -1 (not a regular file, unreadable). */
int sdp_model_hash(const char *ckpt, const char *cache_dir, char out[11]);

/* A1111's LoRA short hash: the first 12 hex digits of the SHA-256 of a .safetensors file's bytes
 * after its header (kohya's addnet_hash_safetensors, what A1111 computes for a .safetensors
 * LoRA), cached as sdp_model_hash does. Returns 0, or -1 (not a regular file, unreadable, a header
 * length past the end). */
int sdp_lora_hash(const char *path, const char *cache_dir, char out[13]);

/* A1111's "Lora hashes" value for the LoRA files loras[0..n-1] ("FILE" or "FILE:SCALE", as
 * sde_options.loras): "NAME: HASH, NAME: HASH" with NAME the file stem (the <lora:NAME> tag's
 * name) without ':' and ',' and HASH sdp_lora_hash's; files that cannot be hashed are left out.
 * Returns a malloc'd string, or NULL when none (or out of memory). */
char *sdp_infotext_lora_hashes(const char *const *loras, int n, const char *cache_dir);

#endif
