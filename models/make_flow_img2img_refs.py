#!/usr/bin/env python3
"""make_flow_img2img_refs.py — diffusers' img2img references for the tiny SD 3 and Flux models of
tests/pipeline/sd3 and tests/pipeline/flux (their committed diffusers folders; made by
make_sd3_refs.py / make_flux_refs.py):

  StableDiffusion3Img2ImgPipeline on tiny_sd3, FluxImg2ImgPipeline on tiny_flux_schnell / tiny_flux_dev,
  image tests/pipeline/img2img/init.png (32x32), CPU, float32, torch.Generator().manual_seed(42),
  output_type "np" -> <dir>/i2i_<case>_image.npy [1,3,32,32] and <dir>/i2i_cases.txt (tab-separated:
  case, variant (sd3 / schnell / dev), steps, cfg (SD 3 guidance_scale / Flux true_cfg_scale),
  guidance (Flux dev's guidance_scale), strength, prompt, negative prompt).

The cases cover strengths whose steps x strength is not an integer (the flow pipelines' get_timesteps:
t_start = int(steps - steps x strength), unlike SD 1.x's int(steps x strength)), guidance on and off,
true CFG. Needs torch + diffusers 0.42 (not run in CI; the outputs are committed).
"""
import os

import numpy as np
import torch
from PIL import Image
from diffusers import FluxImg2ImgPipeline, StableDiffusion3Img2ImgPipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
P = "a photo of an astronaut riding a horse on mars"
CASES = {  # case: (variant, steps, cfg, guidance, strength, negative)
    "sd3": [("a", "sd3", 4, 7.0, 0.0, 0.6, "blurry, low quality"),
            ("b", "sd3", 5, 1.0, 0.0, 0.5, ""),
            ("c", "sd3", 3, 5.0, 0.0, 1.0, "")],
    "flux": [("a", "schnell", 4, 1.0, 0.0, 0.5, ""),
             ("c", "dev", 4, 1.0, 3.5, 0.75, ""),
             ("e", "dev", 5, 4.0, 3.5, 0.7, "blurry")],
}


def load_pipe(sd3_cls, flux_cls, d, fam, variant, cfg, guidance, neg):
    """The family's diffusers pipeline class (sd3_cls / flux_cls) on the committed tiny folder of d, and its
    guidance keywords (SD 3: guidance_scale = cfg; Flux: true_cfg_scale = cfg, guidance_scale = guidance)."""
    if fam == "sd3":
        pipe = sd3_cls.from_pretrained(os.path.join(d, "tiny_sd3"))
        kw = dict(guidance_scale=cfg, negative_prompt=neg if neg else None)
    else:
        pipe = flux_cls.from_pretrained(os.path.join(d, f"tiny_flux_{variant}"))
        kw = dict(true_cfg_scale=cfg, guidance_scale=guidance, negative_prompt=neg if neg else None,
                  max_sequence_length=64)
    pipe.set_progress_bar_config(disable=True)
    return pipe, kw


def main():
    init = Image.open(os.path.join(ROOT, "tests/pipeline/img2img/init.png")).convert("RGB")
    for fam, cases in CASES.items():
        d = os.path.join(ROOT, "tests/pipeline", fam)
        lines = []
        for case, variant, steps, cfg, guidance, strength, neg in cases:
            pipe, kw = load_pipe(StableDiffusion3Img2ImgPipeline, FluxImg2ImgPipeline, d, fam, variant, cfg, guidance, neg)
            out = pipe(P, image=init, strength=strength, num_inference_steps=steps, height=32, width=32,
                       generator=torch.Generator().manual_seed(42), output_type="np", **kw).images
            img = np.ascontiguousarray(out.transpose(0, 3, 1, 2).astype(np.float32))
            np.save(os.path.join(d, f"i2i_{case}_image.npy"), img)
            lines.append("\t".join([case, variant, str(steps), str(cfg), str(guidance), str(strength), P, neg]))
            print(f"{fam} i2i_{case}: {variant} steps {steps} cfg {cfg} guidance {guidance} strength {strength}: "
                  f"mean {img.mean():.4f}")
        with open(os.path.join(d, "i2i_cases.txt"), "w") as f:
            f.write("# case\tvariant\tsteps\tcfg\tguidance\tstrength\tprompt\tnegative (models/make_flow_img2img_refs.py)\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
