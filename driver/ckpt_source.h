/* ckpt_source.h — the checkpoint store (store/store.h) as a name-map source (frontend/namemap.h's
 * struct nm_source) for `onnx2cl --weights-from CKPT --name-map MAP`: CKPT is anything the store
 * reads (an LDM single file, a diffusers folder, one component file; --variant, --ema), with
 * LoRAs (--lora FILE[:SCALE]) merged into the tensors they touch. */
#ifndef ONNX2CL_DRIVER_CKPT_SOURCE_H
#define ONNX2CL_DRIVER_CKPT_SOURCE_H

#include <stdbool.h>

#include "frontend/namemap.h"

/* One --lora FILE[:SCALE]. */
struct ckpt_lora {
    const char *path;  /* the LoRA's .safetensors file */
    float scale;       /* its strength (1 by default) */
};

/* Checkpoint options from the command line. */
struct ckpt_options {
    const char *variant;           /* --variant V (diffusers folders: *.V.safetensors), or NULL */
    bool use_ema;                  /* --ema: the UNet from the LDM file's EMA copy */
    const struct ckpt_lora *loras; /* nloras --lora flags, merged in order */
    int nloras;
    const char *add_component[8];  /* --add-component NAME=FILE: FILE as component NAME (enum
                                      o2s_component index), added to or replacing the checkpoint's
                                      (o2s_add_component_file); NULL for none */
};

/* Parses "FILE[:SCALE]" (SCALE a finite number; the last ':' followed by a number splits it, so a
 * path holding ':' still works) into *l. Exit 2 (usage) naming the flag on a SCALE that is not a
 * number. */
void ckpt_lora_parse(const char *arg, struct ckpt_lora *l);

/* Fills src with the canonical keys of `component` (unet, vae, text_encoder, text_encoder_2) of
 * the checkpoint at path, opened by the store; find() answers any component's keys (a name map's
 * lines say which), at() enumerates `component`'s. Every tensor a LoRA of opt touches is a
 * view made on demand (nm_view.make: float32 with the LoRA deltas added, scale x alpha/rank x
 * up @ down, when the weights file is written, one tensor at a time); the others are zero-copy
 * views of the mapped files. Returns false (nothing filled) when path is a single
 * .safetensors file that the store cannot read or that gives `component` no key, and opt asks
 * for nothing the store alone does (no variant, EMA or LoRA): the caller then reads it as a plain
 * file of canonical keys (nm_source_safetensors). Fatal (exit 1) with the store's message, which
 * names the file and key, on any other failure: a folder or LoRA the store refuses, a LoRA key
 * that matches nothing or does not fit its base tensor. The store stays open for the process. */
bool ckpt_source_open(struct ir_graph *g, const char *path, const char *component,
                      const struct ckpt_options *opt, struct nm_source *src);

#endif
