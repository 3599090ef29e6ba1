#!/usr/bin/env python3
"""make_flow_inpaint_refs.py — diffusers' inpainting references for the tiny SD 3 and Flux models of
tests/pipeline/sd3 and tests/pipeline/flux (their committed diffusers folders):

  StableDiffusion3InpaintPipeline on tiny_sd3, FluxInpaintPipeline on tiny_flux_schnell / tiny_flux_dev,
  image tests/pipeline/img2img/init.png and a mask of tests/pipeline/img2img (32x32), CPU, float32,
  torch.Generator().manual_seed(42), output_type "np" -> <dir>/inp_<case>_image.npy [1,3,32,32] and
  <dir>/inp_cases.txt (tab-separated: case, variant (sd3 / schnell / dev), steps, cfg (SD 3
  guidance_scale / Flux true_cfg_scale), guidance (Flux dev's guidance_scale), strength, mask file,
  prompt, negative prompt); flux/inp_om_image.png: FluxInpaintPipeline with padding_mask_crop 4 (A1111's
  Only masked) on init_big.png (48x40) + mask_om_rect.png, 32x32, schnell, 4 steps, strength 0.75: the
  48x40 image with the generated area pasted back (apply_overlay).

The cases cover strength 1 (pure noise start) and below, guidance on and off, two masks. SD 3's reference
decodes the Inpaint pipeline's latents with the VAE's shift factor (the pipeline itself leaves it out; see
below). Needs torch + diffusers 0.42 (not run in CI; the outputs are committed).
"""
import os

import numpy as np
import torch
from PIL import Image
from diffusers import FluxInpaintPipeline, StableDiffusion3InpaintPipeline

from make_flow_img2img_refs import load_pipe  # noqa: E402 (models/ beside this script)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
P = "a photo of an astronaut riding a horse on mars"
CASES = {  # case: (variant, steps, cfg, guidance, strength, mask, negative)
    "sd3": [("a", "sd3", 4, 7.0, 0.0, 0.75, "mask_circle.png", "blurry, low quality"),
            ("b", "sd3", 3, 1.0, 0.0, 1.0, "mask_rect.png", "")],
    "flux": [("a", "schnell", 4, 1.0, 0.0, 0.8, "mask_circle.png", ""),
             ("c", "dev", 4, 1.0, 3.5, 1.0, "mask_rect.png", "")],
}


def main():
    img_dir = os.path.join(ROOT, "tests/pipeline/img2img")
    init = Image.open(os.path.join(img_dir, "init.png")).convert("RGB")
    for fam, cases in CASES.items():
        d = os.path.join(ROOT, "tests/pipeline", fam)
        lines = []
        for case, variant, steps, cfg, guidance, strength, mask, neg in cases:
            pipe, kw = load_pipe(StableDiffusion3InpaintPipeline, FluxInpaintPipeline, d, fam, variant, cfg, guidance, neg)
            m = Image.open(os.path.join(img_dir, mask))
            args = dict(image=init, mask_image=m, strength=strength, num_inference_steps=steps, height=32, width=32,
                        generator=torch.Generator().manual_seed(42), **kw)
            if fam == "sd3":
                # StableDiffusion3InpaintPipeline (0.42) decodes latents / scaling_factor without adding the VAE's
                # shift_factor, unlike its txt2img / img2img pipelines and every SD 3 UI: the reference takes its
                # latents and decodes them as StableDiffusion3Pipeline does (latents / scaling + shift)
                lat = pipe(P, output_type="latent", **args).images
                with torch.no_grad():
                    dec = pipe.vae.decode(lat / pipe.vae.config.scaling_factor + pipe.vae.config.shift_factor,
                                          return_dict=False)[0]
                out = pipe.image_processor.postprocess(dec, output_type="np")
            else:
                out = pipe(P, output_type="np", **args).images
            img = np.ascontiguousarray(out.transpose(0, 3, 1, 2).astype(np.float32))
            np.save(os.path.join(d, f"inp_{case}_image.npy"), img)
            lines.append("\t".join([case, variant, str(steps), str(cfg), str(guidance), str(strength), mask, P, neg]))
            print(f"{fam} inp_{case}: {variant} steps {steps} cfg {cfg} guidance {guidance} strength {strength} "
                  f"{mask}: mean {img.mean():.4f}")
        if fam == "flux":  # Only masked (padding_mask_crop): the area around the mask generated at 32x32, pasted back
            pipe = FluxInpaintPipeline.from_pretrained(os.path.join(d, "tiny_flux_schnell"))
            pipe.set_progress_bar_config(disable=True)
            big = Image.open(os.path.join(img_dir, "init_big.png")).convert("RGB")
            m = Image.open(os.path.join(img_dir, "mask_om_rect.png"))
            out = pipe(P, image=big, mask_image=m, strength=0.75, num_inference_steps=4, height=32, width=32,
                       padding_mask_crop=4, true_cfg_scale=1.0, guidance_scale=0.0, max_sequence_length=64,
                       generator=torch.Generator().manual_seed(42), output_type="pil").images[0]
            out.save(os.path.join(d, "inp_om_image.png"))
            print(f"flux inp_om: schnell, init_big.png + mask_om_rect.png, padding 4, 32x32 -> {out.size}")
        with open(os.path.join(d, "inp_cases.txt"), "w") as f:
            f.write("# case\tvariant\tsteps\tcfg\tguidance\tstrength\tmask\tprompt\tnegative "
                    "(models/make_flow_inpaint_refs.py)\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
