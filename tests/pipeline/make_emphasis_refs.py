#!/usr/bin/env python3
"""make_emphasis_refs.py — references of `onnx2cl-sd --emphasis` (A1111's prompt syntax, issue 21
item 5): the images diffusers' StableDiffusionPipeline makes from A1111-style conditionings of the
tiny SD 1.5 checkpoint (tests/pipeline/oneshot/tiny_sd15).

What it does, per case of tests/pipeline/emphasis/cases.txt (prompt, negative, emphasis mode, and
A1111's Clip skip N when a 5th column gives it: hidden_states[-N] then final_layer_norm; mode
"diffusers": encode_prompt's text path with clip_skip = N - 1, given as prompt_embeds, since
diffusers 0.42's own clip_skip fails with transformers 5):
  1. each prompt -> pieces by A1111's own parse_prompt_attention (--a1111 FILE.py defines it;
     A1111's modules/prompt_parser.py, not in this repository), or [[text, 1.0]] for "None";
  2. pieces -> 77-id chunks + multipliers by tests/prompt_weights/make_cases.py's tokenize_line
     (A1111's sd_hijack_clip.py tokenize_line, comma backtrack 20) over the checkpoint's
     CLIPTokenizer;
  3. every chunk alone through transformers' CLIPTextModel (the checkpoint's text_encoder/) ->
     last_hidden_state [1,77,32]; "Original": z * mult, then z * (mean(z) / mean(z * mult)) over
     the chunk (sd_emphasis.py EmphasisOriginal); "No norm": z * mult; "None"/"Ignore": z; chunks
     concatenated along tokens (torch.hstack);
  4. StableDiffusionPipeline.from_pretrained(tiny_sd15) with prompt_embeds /
     negative_prompt_embeds = those tensors, seed 42 (torch.Generator), 4 steps, guidance 7.5,
     32x32, the folder's EulerDiscreteScheduler -> <case>.npy (NCHW float32 in [0,1]).
  When the prompt and the negative prompt have different lengths, A1111 (pad_cond_uncond off, its
  default) runs the UNet on each separately (sd_samplers_cfg_denoiser.py); diffusers takes equal
  lengths only, so both are given tiled to a common length and the UNet is wrapped to run the
  uncond row on the negative's own tokens and the cond row on the prompt's, one pass each.

Usage (dev machine: torch, diffusers, transformers):
  python3 tests/pipeline/make_emphasis_refs.py --a1111 prompt_parser.py [--out tests/pipeline/emphasis]
"""
import argparse
import importlib.util
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "prompt_weights"))
import make_cases  # noqa: E402  (tokenize_line)

CKPT = os.path.join(HERE, "oneshot", "tiny_sd15")


def read_cases(path):
    cases = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        cases.append((f[0], f[1], f[2], f[3], int(f[4]) if len(f) > 4 else 1))
    return cases


def final_ln(te):
    """CLIPTextModel's final_layer_norm (transformers 5 flattened text_model away)."""
    return te.text_model.final_layer_norm if hasattr(te, "text_model") else te.final_layer_norm


def diffusers_embeds(tok, te, text, clip_skip):
    """StableDiffusionPipeline.encode_prompt's text path (max_length padding, truncation; clip_skip k:
    hidden_states[-(k + 1)] then final_layer_norm). diffusers 0.42 itself fails there with
    transformers 5 (it reads text_encoder.text_model, which CLIPTextModel no longer has)."""
    ids = tok(text, padding="max_length", max_length=tok.model_max_length, truncation=True,
              return_tensors="pt").input_ids
    with torch.no_grad():
        if clip_skip is None:
            return te(input_ids=ids)[0]
        hs = te(input_ids=ids, output_hidden_states=True).hidden_states
        return final_ln(te)(hs[-(clip_skip + 1)])


def conditioning(tok, te, parse, text, mode, clip_skip):
    parsed = parse(text) if mode != "None" else [[text, 1.0]]
    comma = tok.get_vocab().get(",</w>", None)
    chunks, _ = make_cases.tokenize_line(tok, parsed, comma)
    zs = []
    for ids, mult in chunks:
        with torch.no_grad():
            if clip_skip > 1:  # A1111: hidden_states[-N], then final_layer_norm
                hs = te(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
                z = final_ln(te)(hs[-clip_skip])
            else:
                z = te(input_ids=torch.tensor([ids]))[0]
        m = torch.asarray(mult).reshape(1, 77, 1)
        if mode == "Original":
            original_mean = z.mean()
            z = z * m.expand(z.shape)
            new_mean = z.mean()
            z = z * (original_mean / new_mean)
        elif mode == "No norm":
            z = z * m.expand(z.shape)
        zs.append(z)
    return torch.hstack(zs), len(chunks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a1111", required=True, help="a .py file defining A1111's parse_prompt_attention")
    ap.add_argument("--out", default=os.path.join(HERE, "emphasis"))
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("a1111_prompt_parser", a.a1111)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from diffusers import StableDiffusionPipeline
    pipe = StableDiffusionPipeline.from_pretrained(CKPT, safety_checker=None, requires_safety_checker=False)
    pipe.set_progress_bar_config(disable=True)
    tok, te = pipe.tokenizer, pipe.text_encoder
    unet_forward = pipe.unet.forward
    for name, mode, prompt, negative, clip_skip in read_cases(os.path.join(a.out, "cases.txt")):
        if mode == "diffusers":  # diffusers' own text handling; its clip_skip k = A1111's Clip skip k + 1
            pipe.unet.forward = unet_forward
            g = torch.Generator().manual_seed(42)
            with torch.no_grad():
                k = clip_skip - 1 if clip_skip > 1 else None
                img = pipe(prompt_embeds=diffusers_embeds(tok, te, prompt, k),
                           negative_prompt_embeds=diffusers_embeds(tok, te, negative, k), num_inference_steps=4,
                           guidance_scale=7.5, generator=g, height=32, width=32, output_type="np").images
            img = np.ascontiguousarray(np.transpose(img, (0, 3, 1, 2)).astype(np.float32))
            np.save(os.path.join(a.out, name + ".npy"), img)
            print(f"{name}: diffusers, clip_skip {clip_skip - 1}; image mean {img.mean():.6f}")
            continue
        cond, kc = conditioning(tok, te, mod.parse_prompt_attention, prompt, mode, clip_skip)
        unc, ku = conditioning(tok, te, mod.parse_prompt_attention, negative, mode, clip_skip)
        tc, tn = cond.shape[1], unc.shape[1]
        if tc != tn:
            L = np.lcm(tc // 77, tn // 77) * 77
            cond_in, unc_in = cond.repeat(1, L // tc, 1), unc.repeat(1, L // tn, 1)

            def split_forward(sample, t, encoder_hidden_states=None, **kw):
                # A1111 without pad_cond_uncond: cond and uncond in separate UNet passes, each on its
                # own tokens ([uncond; cond] is diffusers' batch order)
                u = unet_forward(sample[:1], t, encoder_hidden_states=encoder_hidden_states[:1, :tn], **kw)[0]
                c = unet_forward(sample[1:], t, encoder_hidden_states=encoder_hidden_states[1:, :tc], **kw)[0]
                return (torch.cat([u, c]),)
            pipe.unet.forward = split_forward
        else:
            cond_in, unc_in = cond, unc
            pipe.unet.forward = unet_forward
        g = torch.Generator().manual_seed(42)
        with torch.no_grad():
            img = pipe(prompt_embeds=cond_in, negative_prompt_embeds=unc_in, num_inference_steps=4, guidance_scale=7.5,
                       generator=g, height=32, width=32, output_type="np").images
        img = np.ascontiguousarray(np.transpose(img, (0, 3, 1, 2)).astype(np.float32))
        np.save(os.path.join(a.out, name + ".npy"), img)
        print(f"{name}: {mode}, prompt {kc} chunk(s), negative {ku}; image mean {img.mean():.6f}")
    pipe.unet.forward = unet_forward


if __name__ == "__main__":
    main()
