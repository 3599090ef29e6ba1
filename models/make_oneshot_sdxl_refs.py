#!/usr/bin/env python3
"""make_oneshot_sdxl_refs.py — references of the SDXL proof of `onnx2cl-sd -m CHECKPOINT`
(tests/pipeline/oneshot_sdxl/, run_oneshot_sdxl.sh; issue 23 item 1).

What it does
  Loads the tiny SDXL single file models/ckpt/sdxl/sdxl.safetensors (architecture
  models/arch/tiny_sdxl: CLIP-L + OpenCLIP-G text encoders, the text_time UNet, a 2-level VAE of
  factor 2) through diffusers' own single-file converters into UNet2DConditionModel,
  CLIPTextModel, CLIPTextModelWithProjection and AutoencoderKL built from the architecture's
  configs, with the architecture's shipped tokenizers (tokenizer/, tokenizer_2/: pad_token "!")
  and EulerDiscreteScheduler from arch.json's scheduler, and runs diffusers'
  StableDiffusionXLPipeline / StableDiffusionXLImg2ImgPipeline / StableDiffusionXLInpaintPipeline
  (force_zeros_for_empty_prompt True as SDXL base's model_index.json, no watermark) at 32x32,
  output_type="np", generators torch.Generator().manual_seed(42 + i) per image (A1111's seeds).
  Writes oneshot_sdxl/<case>.npy (NCHW float32 in [0, 1]) and cases.txt (the onnx2cl-sd flags; the
  token NONEG: no negative prompt). The init image and masks are tests/pipeline/img2img's.

Assumes
  torch, diffusers 0.42, transformers, numpy, safetensors, PIL (dev machine only).

Usage
  python3 models/make_oneshot_sdxl_refs.py [--out tests/pipeline/oneshot_sdxl]
"""
import argparse
import json
import os

import numpy as np
import torch
from PIL import Image
from safetensors.torch import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARCH = os.path.join(HERE, "arch", "tiny_sdxl")
CKPT = os.path.join(HERE, "ckpt", "sdxl", "sdxl.safetensors")
IMGS = os.path.join(ROOT, "tests", "pipeline", "img2img")
PROMPT = "a photo of an astronaut riding a horse on mars!! highly detailed"
NEGATIVE = "blurry, low quality!"
SEED = 42
SCHED = {"euler": ("EulerDiscreteScheduler", {}), "euler_a": ("EulerAncestralDiscreteScheduler", {}),
         "dpmpp_2m": ("DPMSolverMultistepScheduler", {}), "ddim": ("DDIMScheduler", {})}
# name, mode, scheduler (+ " karras"), steps, cfg, batch, strength, mask, negative. Two UNet programs
# only (batch 2: guidance or two images; batch 1): each costs PoCL's first-launch compiles in CI
CASES = [
    ("euler_4", "txt2img", "euler", 4, 5.0, 1, None, None, True),
    ("noneg_euler_4", "txt2img", "euler", 4, 5.0, 1, None, None, False),   # zero uncond embeddings
    ("nocfg_euler_1", "txt2img", "euler", 1, 1.0, 1, None, None, False),   # Turbo-style: 1 step, no guidance
    ("karras_dpmpp_2m_5", "txt2img", "dpmpp_2m karras", 5, 5.0, 1, None, None, True),
    ("b2_nocfg_euler_a_4", "txt2img", "euler_a", 4, 1.0, 2, None, None, True),
    ("i2i_euler_06_4", "img2img", "euler", 4, 5.0, 1, 0.6, None, True),
    ("i2i_b2_nocfg_ddim_075_5", "img2img", "ddim", 5, 1.0, 2, 0.75, None, False),
    ("inp_rect_euler_075_4", "inpaint", "euler", 4, 5.0, 1, 0.75, "rect", True),
]


def load_components():
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from diffusers.loaders import single_file_utils as sfu
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection
    a = json.load(open(os.path.join(ARCH, "arch.json")))
    cfg = a["configs"]
    ck = {k: (v.float() if v.is_floating_point() else v) for k, v in load_file(CKPT).items()}
    unet = UNet2DConditionModel(**cfg["unet"]).eval()
    unet.load_state_dict(sfu.convert_ldm_unet_checkpoint(ck, cfg["unet"]), strict=True)
    vae = AutoencoderKL(**cfg["vae"]).eval()
    vae.load_state_dict(sfu.convert_ldm_vae_checkpoint(ck, cfg["vae"]), strict=True)
    te = CLIPTextModel(CLIPTextConfig(**cfg["text_encoder"])).eval()
    sd = sfu.convert_ldm_clip_checkpoint(ck)
    sd.pop("text_model.embeddings.position_ids", None)
    if not hasattr(te, "text_model"):  # transformers 5: CLIPTextModel is the transformer itself
        sd = {k.removeprefix("text_model."): v for k, v in sd.items()}
    te.load_state_dict(sd, strict=True)
    te2 = CLIPTextModelWithProjection(CLIPTextConfig(**cfg["text_encoder_2"])).eval()
    te2.load_state_dict(sfu.convert_open_clip_checkpoint(te2, ck, prefix="conditioner.embedders.1.model."),
                        strict=True)
    return a, unet, vae, te, te2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "pipeline", "oneshot_sdxl"))
    a = ap.parse_args()
    import diffusers
    from diffusers import (EulerDiscreteScheduler, StableDiffusionXLImg2ImgPipeline,
                           StableDiffusionXLInpaintPipeline, StableDiffusionXLPipeline)
    from transformers import CLIPTokenizer
    arch, unet, vae, te, te2 = load_components()
    tok = CLIPTokenizer.from_pretrained(os.path.join(ARCH, "tokenizer"))
    tok2 = CLIPTokenizer.from_pretrained(os.path.join(ARCH, "tokenizer_2"))
    assert tok2.pad_token == "!", tok2.pad_token
    sched = EulerDiscreteScheduler.from_config({k: v for k, v in arch["scheduler"].items() if k != "kind"})
    parts = dict(vae=vae, text_encoder=te, text_encoder_2=te2, tokenizer=tok, tokenizer_2=tok2, unet=unet,
                 scheduler=sched, force_zeros_for_empty_prompt=True, add_watermarker=False)
    pipes = {"txt2img": StableDiffusionXLPipeline(**parts),
             "img2img": StableDiffusionXLImg2ImgPipeline(**parts, requires_aesthetics_score=False),
             "inpaint": StableDiffusionXLInpaintPipeline(**parts, requires_aesthetics_score=False)}
    init = Image.open(os.path.join(IMGS, "init.png"))
    os.makedirs(a.out, exist_ok=True)
    lines = ["# case\tonnx2cl-sd flags (run_oneshot_sdxl.sh adds -m, prompts, size, outputs; NONEG: no -n)",
             f"# prompt: {PROMPT}", f"# negative: {NEGATIVE}"]
    for name, mode, sname, steps, cfg, n, strength, mask, neg in CASES:
        pipe = pipes[mode]
        sn, _, karras = sname.partition(" ")
        cls, extra = SCHED[sn]
        extra = dict(extra, use_karras_sigmas=True) if karras else extra
        pipe.scheduler = getattr(diffusers, cls).from_config(sched.config, **extra)
        pipe.set_progress_bar_config(disable=True)
        gens = [torch.Generator().manual_seed(SEED + i) for i in range(n)]
        kw = dict(negative_prompt=NEGATIVE if neg else None, num_inference_steps=steps, guidance_scale=cfg,
                  generator=gens, num_images_per_prompt=n, output_type="np", height=32, width=32)
        flags = f"--scheduler {sn} --steps {steps} --cfg {cfg} --seed {SEED}"
        if karras:
            flags += " --schedule-type Karras"
        if n > 1:
            flags += f" --batch-size {n}"
        if not neg:
            flags += " NONEG"
        if mode != "txt2img":
            kw.update(image=init, strength=strength)
            flags += f" --init-image {IMGS}/init.png --strength {strength}"
        if mode == "inpaint":
            kw.update(mask_image=Image.open(os.path.join(IMGS, f"mask_{mask}.png")))
            flags += f" --mask {IMGS}/mask_{mask}.png"
        with torch.no_grad():
            img = pipe(PROMPT, **kw).images
        img = np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)
        np.save(os.path.join(a.out, f"{name}.npy"), img)
        lines.append(f"{name}\t{flags.replace(ROOT + '/', '$ROOT/')}")
        print(f"{name}: {img.shape} mean {img.mean():.4f} std {img.std():.4f} min {img.min():.3f} max {img.max():.3f}")
    with open(os.path.join(a.out, "cases.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
