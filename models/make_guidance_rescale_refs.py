#!/usr/bin/env python3
"""make_guidance_rescale_refs.py — references of onnx2cl-sd --guidance-rescale (issue 21 item 5;
tests/pipeline/run_rescale.sh): diffusers' StableDiffusionPipeline on the tiny SD 1.5 folder of
tests/pipeline/oneshot and StableDiffusionXLPipeline on the tiny SDXL file (built as
make_oneshot_sdxl_refs.py builds it), guidance_rescale R (rescale_noise_cfg), 32x32, seed 42,
output_type="np". Writes tests/pipeline/rescale/<case>.npy and cases.txt
(name, checkpoint relative to the source tree, onnx2cl-sd flags).

Assumes torch, diffusers 0.42, transformers (dev machine only).
Usage: python3 models/make_guidance_rescale_refs.py
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
OUT = os.path.join(ROOT, "tests", "pipeline", "rescale")
PROMPT = "a photo of an astronaut riding a horse on mars, highly detailed"
NEGATIVE = "blurry, low quality"
SEED = 42
# name, family, scheduler, steps, cfg, guidance_rescale
CASES = [("sd15_euler_07_4", "sd15", "euler", 4, 7.5, 0.7), ("sd15_dpmpp_2m_1_5", "sd15", "dpmpp_2m", 5, 9.0, 1.0),
         ("sdxl_euler_05_4", "sdxl", "euler", 4, 5.0, 0.5)]
CKPT = {"sd15": "tests/pipeline/oneshot/tiny_sd15.safetensors", "sdxl": "models/ckpt/sdxl/sdxl.safetensors"}
# SD 1.5's tiny file is float32: its float32 storage (the default f16 rounds its weights: 1e-3 here);
# SDXL's tiny file is float16 already (the default storage is exact)
F32 = {"sd15": " --weights-dtype f32", "sdxl": ""}
SCHED = {"euler": "EulerDiscreteScheduler", "dpmpp_2m": "DPMSolverMultistepScheduler"}


def main():
    import diffusers
    from diffusers import StableDiffusionPipeline, StableDiffusionXLPipeline
    pipes = {"sd15": StableDiffusionPipeline.from_pretrained(os.path.join(ROOT, "tests/pipeline/oneshot/tiny_sd15"),
                                                             safety_checker=None, requires_safety_checker=False)}
    import make_oneshot_sdxl_refs as xl
    from transformers import CLIPTokenizer
    arch, unet, vae, te, te2 = xl.load_components()
    sched = diffusers.EulerDiscreteScheduler.from_config({k: v for k, v in arch["scheduler"].items() if k != "kind"})
    pipes["sdxl"] = StableDiffusionXLPipeline(
        vae=vae, text_encoder=te, text_encoder_2=te2, tokenizer=CLIPTokenizer.from_pretrained(os.path.join(xl.ARCH, "tokenizer")),
        tokenizer_2=CLIPTokenizer.from_pretrained(os.path.join(xl.ARCH, "tokenizer_2")), unet=unet, scheduler=sched,
        force_zeros_for_empty_prompt=True, add_watermarker=False)
    os.makedirs(OUT, exist_ok=True)
    lines = ["# case\tcheckpoint (source tree)\tonnx2cl-sd flags (run_rescale.sh adds -m, prompts, size, outputs)",
             f"# prompt: {PROMPT}", f"# negative: {NEGATIVE}"]
    for name, fam, sn, steps, cfg, r in CASES:
        p = pipes[fam]
        p.scheduler = getattr(diffusers, SCHED[sn]).from_config(p.scheduler.config)
        p.set_progress_bar_config(disable=True)
        with torch.no_grad():
            img = p(PROMPT, negative_prompt=NEGATIVE, height=32, width=32, num_inference_steps=steps,
                    guidance_scale=cfg, guidance_rescale=r, generator=torch.Generator().manual_seed(SEED),
                    output_type="np").images
            base = p(PROMPT, negative_prompt=NEGATIVE, height=32, width=32, num_inference_steps=steps,
                     guidance_scale=cfg, generator=torch.Generator().manual_seed(SEED), output_type="np").images
        img = np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)
        np.save(os.path.join(OUT, f"{name}.npy"), img)
        lines.append(f"{name}\t{CKPT[fam]}\t--scheduler {sn} --steps {steps} --cfg {cfg} --seed {SEED}{F32[fam]} "
                     f"--guidance-rescale {r}")
        print(f"{name}: mean {img.mean():.4f}; differs from guidance_rescale 0 by "
              f"{np.abs(img - base.transpose(0, 3, 1, 2)).max():.3f}")
    with open(os.path.join(OUT, "cases.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
