#!/usr/bin/env python3
"""make_oneshot_lora_refs.py — references of the LoRA image proof of `onnx2cl-sd -m CKPT --lora`
(tests/pipeline/run_oneshot.sh): the image diffusers makes with a LoRA fused, in both namings.

What it does
  Loads tests/pipeline/oneshot's tiny SD 1.5 single file with diffusers
  (StableDiffusionPipeline.from_single_file, config = the diffusers folder beside it,
  EulerDiscreteScheduler as make_oneshot_refs.py), loads tests/lora/tiny_peft.safetensors (PEFT
  naming, UNet only, r 4, lora_alpha 6) with load_lora_weights + fuse_lora(lora_scale=0.8) and
  writes the euler_4 case's image as oneshot/euler_4_lora-single.npy. It also writes
  tests/lora/tiny_kohya.safetensors: the same factors in kohya naming
  (lora_unet_<module path with _>.lora_down.weight / .lora_up.weight / .alpha = 6), and asserts
  diffusers gives the same image from it (within 1e-6), so one reference proves both namings.

Assumes torch, diffusers, peft, safetensors (dev machine only; the test reads the files).
Usage: python3 models/make_oneshot_lora_refs.py
"""
import os

import numpy as np
import torch
from safetensors.torch import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OS = os.path.join(ROOT, "tests", "pipeline", "oneshot")
LORA = os.path.join(ROOT, "tests", "lora")
PROMPT = "a photo of an astronaut riding a horse on mars, highly detailed"
NEGATIVE = "blurry, low quality"
SEED, STEPS, CFG, SCALE = 42, 4, 7.5, 0.8


def to_kohya(peft_file, out):
    sd = load_file(peft_file)
    ko = {}
    for k, v in sd.items():
        assert k.startswith("unet.") and (k.endswith(".lora_A.weight") or k.endswith(".lora_B.weight")), k
        mod = k[len("unet."):].rsplit(".lora_", 1)[0]
        name = "lora_unet_" + mod.replace(".", "_")
        if k.endswith(".lora_A.weight"):
            ko[name + ".lora_down.weight"] = v.contiguous()
            ko[name + ".alpha"] = torch.tensor(6.0)
        else:
            ko[name + ".lora_up.weight"] = v.contiguous()
    save_file(ko, out, metadata={"format": "pt"})


def image(lora_file):
    from diffusers import EulerDiscreteScheduler, StableDiffusionPipeline
    p = StableDiffusionPipeline.from_single_file(os.path.join(OS, "tiny_sd15.safetensors"),
                                                 config=os.path.join(OS, "tiny_sd15"), safety_checker=None,
                                                 requires_safety_checker=False)
    p.scheduler = EulerDiscreteScheduler.from_config(p.scheduler.config)
    p.load_lora_weights(lora_file)
    p.fuse_lora(lora_scale=SCALE)
    p.set_progress_bar_config(disable=True)
    with torch.no_grad():
        img = p(PROMPT, negative_prompt=NEGATIVE, height=32, width=32, num_inference_steps=STEPS,
                guidance_scale=CFG, generator=torch.Generator().manual_seed(SEED), output_type="np").images
    return np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)


def main():
    peft = os.path.join(LORA, "tiny_peft.safetensors")
    kohya = os.path.join(LORA, "tiny_kohya.safetensors")
    to_kohya(peft, kohya)
    a = image(peft)
    b = image(kohya)
    d = float(np.abs(a - b).max())
    assert d <= 1e-6, f"PEFT and kohya namings differ in diffusers by {d}"
    base = np.load(os.path.join(OS, "euler_4-single.npy"))
    moved = float(np.abs(a - base).max())
    assert moved > 1e-2, f"the LoRA moves the image by only {moved}"
    np.save(os.path.join(OS, "euler_4_lora-single.npy"), a)
    print(f"euler_4_lora: PEFT vs kohya {d:.1e}, LoRA moves the image by {moved:.3f}")


if __name__ == "__main__":
    main()
