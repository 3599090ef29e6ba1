#!/usr/bin/env python3
"""make_oneshot_pndm_ref.py — tests/pipeline/oneshot/pndm_4-single.npy: the image diffusers makes
from the bare single file tiny_sd15.safetensors with SD 1.5's own scheduler (PNDMScheduler with
skip_prk_steps, as models/arch/tiny_sd15/arch.json's "scheduler" and the published SD 1.5 config
have it), the reference of run_oneshot.sh's single_pndm case (`onnx2cl-sd -m FILE` without
--scheduler takes the architecture's scheduler).

Reads the committed tiny_sd15/ folder and tiny_sd15.safetensors (made by make_oneshot_refs.py);
checks that from_pretrained(folder) and from_single_file(file, config=folder) agree (<= 1e-6)
with the PNDM scheduler, then saves the single file's image. Needs torch + diffusers (dev machine).
Usage: python3 models/make_oneshot_pndm_ref.py
"""
import json
import os

import numpy as np
import torch

import make_oneshot_refs as mor


def main():
    from diffusers import PNDMScheduler, StableDiffusionPipeline
    out = os.path.join(mor.ROOT, "tests", "pipeline", "oneshot")
    folder, single = os.path.join(out, "tiny_sd15"), os.path.join(out, "tiny_sd15.safetensors")
    cfg = dict(json.load(open(os.path.join(mor.HERE, "arch", "tiny_sd15", "arch.json")))["scheduler"])
    assert cfg.pop("kind") == "pndm"
    imgs = []
    for p in (StableDiffusionPipeline.from_pretrained(folder, safety_checker=None, requires_safety_checker=False),
              StableDiffusionPipeline.from_single_file(single, config=folder, safety_checker=None,
                                                       requires_safety_checker=False)):
        p.scheduler = PNDMScheduler.from_config(cfg)
        p.set_progress_bar_config(disable=True)
        g = torch.Generator().manual_seed(mor.SEED)
        with torch.no_grad():
            img = p(mor.PROMPT, negative_prompt=mor.NEGATIVE, height=32, width=32, num_inference_steps=4,
                    guidance_scale=7.5, generator=g, output_type="np").images
        imgs.append(np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32))
    d = float(np.abs(imgs[0] - imgs[1]).max())
    assert d <= 1e-6, f"folder and single file differ by {d}"
    np.save(os.path.join(out, "pndm_4-single.npy"), imgs[1])
    cases = os.path.join(out, "cases.txt")
    line = f"pndm_4\t--steps 4 --cfg 7.5 --seed {mor.SEED}\n"
    if line not in open(cases).read():
        with open(cases, "a") as f:
            f.write(line)
    print(f"pndm_4: mean {imgs[1].mean():.4f}; folder vs single {d:.1e}")


if __name__ == "__main__":
    main()
