#!/usr/bin/env python3
"""make_img2img_refs.py — references of batches, img2img and inpainting (issue 21) made by
diffusers' own pipelines on the tiny SD 1.5 checkpoint of tests/pipeline/oneshot/tiny_sd15.

What it does
  Writes into tests/pipeline/img2img/:
    init.png                 32x32 8-bit RGB init image (drawn here, deterministic)
    mask_*.png               32x32 masks: rect (gray), circle (gray), half (RGB, PIL's convert("L")
                             decides), odd (gray rectangle on non-multiple-of-8 edges); black, white
    bad_*.png                refused inputs: RGBA, palette, gray (as an init image), 16-bit gray,
                             48x48
    <case>.npy               float32 [N,3,32,32] in [0,1] (output_type="np", NCHW); inp9_*: the
                             9-channel inpainting UNet of make_inpaint_ckpt.py (the same bytes the
                             test builds)
    cases.txt                case <TAB> onnx2cl-sd flags (run_img2img.sh adds -m, prompts, size,
                             outputs)
    init_big.png, init_wide.png, mask_om_*.png
                             "only masked" inputs (48x40 and 64x24 images and their masks)
    om*.png                  "only masked" references: StableDiffusionInpaintPipeline with
                             padding_mask_crop=P (A1111's Inpaint area "Only masked" with "Masked area
                             padding" P) at 32x32, output_type="pil": the 8-bit image of the init
                             image's size after diffusers' apply_overlay (np output has no overlay)
  Each case runs StableDiffusionPipeline / StableDiffusionImg2ImgPipeline /
  StableDiffusionInpaintPipeline.from_pretrained(tiny_sd15) with the scheduler class of the case
  built from the folder's scheduler config, prompt/negative below, 32x32, and
  generator=[torch.Generator().manual_seed(seed + i) for i in range(N)] (one generator per image:
  A1111's seeds seed, seed+1, ...; onnx2cl-sd's --batch-size N --seed S). The init image and masks
  are given as the PIL images of the committed PNG files (what onnx2cl-sd reads).

Assumes
  torch, diffusers 0.42, numpy, PIL (dev machine only; the test reads the committed files).

Usage
  python3 tests/pipeline/make_img2img_refs.py [--out tests/pipeline/img2img] [--only PREFIX]
  (--only: just the cases whose name starts with PREFIX; cases.txt keeps the other lines)
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(HERE, "oneshot", "tiny_sd15")
PROMPT = "a photo of an astronaut riding a horse on mars, highly detailed"
NEGATIVE = "blurry, low quality"
SEED = 42
SCHED = {"euler": ("EulerDiscreteScheduler", {}), "euler_a": ("EulerAncestralDiscreteScheduler", {}),
         "ddim": ("DDIMScheduler", {}), "dpmpp_2m": ("DPMSolverMultistepScheduler", {}),
         "pndm": ("PNDMScheduler", {}), "lms": ("LMSDiscreteScheduler", {}),
         "unipc": ("UniPCMultistepScheduler", {}), "heun": ("HeunDiscreteScheduler", {}),
         "dpm2_a": ("KDPM2AncestralDiscreteScheduler", {}),
         "dpmpp_2m_sde": ("DPMSolverMultistepScheduler", {"algorithm_type": "sde-dpmsolver++"})}
# name, mode (txt2img/img2img/inpaint), scheduler, steps, cfg, batch, strength, mask
CASES = [
    ("b2_euler_a_4", "txt2img", "euler_a", 4, 7.5, 2, None, None),
    ("b2_nocfg_dpmpp_4", "txt2img", "dpmpp_2m", 4, 1.0, 2, None, None),
    ("i2i_euler_075_4", "img2img", "euler", 4, 7.5, 1, 0.75, None),
    ("i2i_euler_a_03_20", "img2img", "euler_a", 20, 7.5, 1, 0.3, None),
    ("i2i_ddim_1_4", "img2img", "ddim", 4, 7.5, 1, 1.0, None),
    ("i2i_dpmpp_05_10", "img2img", "dpmpp_2m", 10, 7.5, 1, 0.5, None),
    ("i2i_b2_euler_a_075_4", "img2img", "euler_a", 4, 7.5, 2, 0.75, None),
    ("i2i_b2_nocfg_ddim_06_5", "img2img", "ddim", 5, 1.0, 2, 0.6, None),
    # the other samplers' add_noise and begin index (scheduler.c; order 2: t_start * 2)
    ("i2i_pndm_075_8", "img2img", "pndm", 8, 7.5, 1, 0.75, None),
    ("i2i_lms_05_6", "img2img", "lms", 6, 7.5, 1, 0.5, None),
    ("i2i_unipc_06_5", "img2img", "unipc", 5, 7.5, 1, 0.6, None),
    ("i2i_b2_dpmpp_2m_sde_075_4", "img2img", "dpmpp_2m_sde", 4, 7.5, 2, 0.75, None),
    ("i2i_heun_06_5", "img2img", "heun", 5, 7.5, 1, 0.6, None),
    ("inp_dpm2_a_rect_075_4", "inpaint", "dpm2_a", 4, 7.5, 1, 0.75, "rect"),
    # --mask-blur R = mask_processor.blur(mask, R) (PIL GaussianBlur) before the pipeline (radii
    # chosen so that the latent mask changes: 4 and 1 of its 16 pixels; 9-channel: the masked image)
    ("inp_blur6_circle_euler_075_4", "inpaint", "euler", 4, 7.5, 1, 0.75, "circle:6"),
    ("inp_blur3_rect_euler_a_1_4", "inpaint", "euler_a", 4, 7.5, 1, 1.0, "rect:3"),
    ("inp9_blur2_odd_ddim_075_5", "inpaint9", "ddim", 5, 7.5, 1, 0.75, "odd:2.5"),
    ("inp_rect_euler_1_4", "inpaint", "euler", 4, 7.5, 1, 1.0, "rect"),
    ("inp_circle_euler_a_075_4", "inpaint", "euler_a", 4, 7.5, 1, 0.75, "circle"),
    ("inp_half_ddim_05_10", "inpaint", "ddim", 10, 7.5, 1, 0.5, "half"),
    ("inp_odd_dpmpp_075_6", "inpaint", "dpmpp_2m", 6, 7.5, 1, 0.75, "odd"),
    ("inp_b2_rect_euler_a_1_4", "inpaint", "euler_a", 4, 7.5, 2, 1.0, "rect"),
    ("inp_b2_nocfg_circle_euler_08_4", "inpaint", "euler", 4, 1.0, 2, 0.8, "circle"),
    # the 9-channel inpainting UNet (make_inpaint_ckpt.py: architecture tiny_sd15_inpaint)
    ("inp9_rect_euler_075_4", "inpaint9", "euler", 4, 7.5, 1, 0.75, "rect"),
    ("inp9_circle_euler_a_1_4", "inpaint9", "euler_a", 4, 7.5, 1, 1.0, "circle"),
    ("inp9_b2_half_ddim_1_5", "inpaint9", "ddim", 5, 7.5, 2, 1.0, "half"),
    ("inp9_b2_nocfg_odd_dpmpp_06_6", "inpaint9", "dpmpp_2m", 6, 1.0, 2, 0.6, "odd"),
    # "only masked" (padding_mask_crop; mask "NAME:BLUR:PAD@INIT"): a small box grown to the
    # square processing size; a blurred mask (partial alpha in the overlay); a wide image whose box
    # cannot reach 1:1 (fill bands); a padding past the image (the whole image, fill bands); batch 2;
    # the 9-channel UNet
    ("om_rect_euler_075_4", "inpaint", "euler", 4, 7.5, 1, 0.75, "om_rect::4@init_big"),
    ("om_blur_circle_euler_a_1_4", "inpaint", "euler_a", 4, 7.5, 1, 1.0, "om_circle:3:8@init_big"),
    ("om_wide_dpmpp_075_6", "inpaint", "dpmpp_2m", 6, 7.5, 1, 0.75, "om_wide::0@init_wide"),
    ("om_b2_rect_euler_a_08_4", "inpaint", "euler_a", 4, 7.5, 2, 0.8, "om_rect::32@init_big"),
    ("om9_circle_ddim_075_5", "inpaint9", "ddim", 5, 7.5, 1, 0.75, "om_circle::6@init_big"),
]


def make_images(out):
    y, x = np.mgrid[0:32, 0:32]
    img = np.stack([x * 8, y * 8, (x + y) * 4], -1).astype(np.float64)
    img[(x - 20) ** 2 + (y - 12) ** 2 < 36] = [250, 240, 20]     # a yellow disc
    img[20:28, 4:14] = [30, 60, 200]                                  # a blue block
    Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB").save(os.path.join(out, "init.png"))
    rect = np.zeros((32, 32), np.uint8)
    rect[8:24, 8:24] = 255
    circle = (((x - 16) ** 2 + (y - 16) ** 2) < 100).astype(np.uint8) * 255
    half = np.zeros((32, 32, 3), np.uint8)
    half[:, :16] = [200, 90, 40]      # luma 113: below 128, kept (L of RGB decides, not a channel)
    half[:, 16:] = [90, 200, 100]     # luma 155: repainted
    odd = np.zeros((32, 32), np.uint8)
    odd[5:21, 3:29] = 255             # edges off the 8-pixel grid: nearest downsampling decides
    Image.fromarray(rect, "L").save(os.path.join(out, "mask_rect.png"))
    Image.fromarray(circle.astype(np.uint8), "L").save(os.path.join(out, "mask_circle.png"))
    Image.fromarray(half, "RGB").save(os.path.join(out, "mask_half.png"))
    Image.fromarray(odd, "L").save(os.path.join(out, "mask_odd.png"))
    # refusals (bad_input_oneshot.sh): other modes and sizes, masks with nothing or everything to repaint
    base = Image.open(os.path.join(out, "init.png"))
    base.convert("RGBA").save(os.path.join(out, "bad_rgba.png"))
    base.convert("P").save(os.path.join(out, "bad_palette.png"))
    base.convert("L").save(os.path.join(out, "bad_gray.png"))
    Image.fromarray(rect.astype(np.uint16) * 257).save(os.path.join(out, "bad_gray16.png"))
    base.resize((48, 48)).save(os.path.join(out, "bad_size48.png"))
    Image.fromarray(np.zeros((32, 32), np.uint8), "L").save(os.path.join(out, "mask_black.png"))
    Image.fromarray(np.full((32, 32), 255, np.uint8), "L").save(os.path.join(out, "mask_white.png"))
    # "only masked": images of other sizes than the 32x32 processing size, masks of their size
    for name, (w, h) in (("init_big", (48, 40)), ("init_wide", (64, 24))):
        yy, xx = np.mgrid[0:h, 0:w]
        im = np.stack([xx * 5, yy * 6, (xx * 3 + yy * 2) % 256], -1).astype(np.float64)
        im[(xx - w * 2 // 3) ** 2 + (yy - h // 3) ** 2 < 40] = [240, 230, 30]
        Image.fromarray(np.clip(im, 0, 255).astype(np.uint8), "RGB").save(os.path.join(out, f"{name}.png"))
    yy, xx = np.mgrid[0:40, 0:48]
    m = np.zeros((40, 48), np.uint8)
    m[14:22, 21:31] = 255
    Image.fromarray(m, "L").save(os.path.join(out, "mask_om_rect.png"))
    Image.fromarray((((xx - 30) ** 2 + (yy - 25) ** 2) < 30).astype(np.uint8) * 255, "L").save(
        os.path.join(out, "mask_om_circle.png"))
    m = np.zeros((24, 64), np.uint8)
    m[6:15, 4:61] = 255
    Image.fromarray(m, "L").save(os.path.join(out, "mask_om_wide.png"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "img2img"))
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    import diffusers
    from diffusers import (StableDiffusionImg2ImgPipeline, StableDiffusionInpaintPipeline,
                           StableDiffusionPipeline)
    os.makedirs(a.out, exist_ok=True)
    make_images(a.out)
    init = Image.open(os.path.join(a.out, "init.png"))
    pipes = {"txt2img": StableDiffusionPipeline, "img2img": StableDiffusionImg2ImgPipeline,
             "inpaint": StableDiffusionInpaintPipeline}
    loaded = {k: v.from_pretrained(CKPT, safety_checker=None, requires_safety_checker=False)
              for k, v in pipes.items()}
    tmp = tempfile.mkdtemp()
    ck9 = os.path.join(tmp, "tiny_inpaint")
    subprocess.run([sys.executable, os.path.join(HERE, "make_inpaint_ckpt.py"), CKPT, ck9], check=True)
    loaded["inpaint9"] = StableDiffusionInpaintPipeline.from_pretrained(
        ck9, safety_checker=None, requires_safety_checker=False)
    assert loaded["inpaint9"].unet.config.in_channels == 9
    lines = ["# case\tonnx2cl-sd flags (run_img2img.sh adds -m, prompts, size, outputs)",
             f"# prompt: {PROMPT}", f"# negative: {NEGATIVE}"]
    old = {}
    if a.only and os.path.exists(os.path.join(a.out, "cases.txt")):
        with open(os.path.join(a.out, "cases.txt")) as fh:
            old = dict(ln.rstrip("\n").split("\t", 1) for ln in fh if not ln.startswith("#"))
    for name, mode, sched, steps, cfg, n, strength, mask in CASES:
        if not name.startswith(a.only):
            lines.append(f"{name}\t{old[name]}")
            continue
        pipe = loaded[mode]
        cls, extra = SCHED[sched]
        pipe.scheduler = getattr(diffusers, cls).from_config(pipe.scheduler.config, **extra)
        pipe.set_progress_bar_config(disable=True)
        gens = [torch.Generator().manual_seed(SEED + i) for i in range(n)]
        kw = dict(negative_prompt=NEGATIVE if cfg > 1 else None, num_inference_steps=steps,
                  guidance_scale=cfg, generator=gens, num_images_per_prompt=n, output_type="np")
        flags = f"--scheduler {sched} --steps {steps} --cfg {cfg} --seed {SEED}"
        if n > 1:
            flags += f" --batch-size {n}"
        if mode == "txt2img":
            kw.update(height=32, width=32)
        else:
            iname = mask.partition("@")[2] if mask and "@" in mask else "init"
            kw.update(image=Image.open(os.path.join(a.out, f"{iname}.png")) if iname != "init" else init,
                      strength=strength)
            flags += f" --init-image {iname}.png --strength {strength}"
        pad = None
        if mode in ("inpaint", "inpaint9"):
            mname, _, blur = mask.partition("@")[0].partition(":")
            blur, _, pad = blur.partition(":")
            m = Image.open(os.path.join(a.out, f"mask_{mname}.png"))
            if blur:
                m = pipe.mask_processor.blur(m, blur_factor=float(blur))
                flags += f" --mask-blur {blur}"
            kw.update(mask_image=m, height=32, width=32)
            flags += f" --mask mask_{mname}.png"
            if pad:
                kw.update(padding_mask_crop=int(pad), output_type="pil")
                flags += f" --only-masked --only-masked-padding {pad}"
        with torch.no_grad():
            img = pipe(PROMPT, **kw).images
        if pad:  # 8-bit images of the init image's size, as onnx2cl-sd's PNGs
            for i, im in enumerate(img):
                im.save(os.path.join(a.out, f"{name}{'-%d' % i if i else ''}.png"))
            print(f"{name}: {len(img)} x {img[0].size}")
        else:
            img = np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)
            np.save(os.path.join(a.out, f"{name}.npy"), img)
            print(f"{name}: {img.shape} mean {img.mean():.4f} std {img.std():.4f}")
        lines.append(f"{name}\t{flags}")
    with open(os.path.join(a.out, "cases.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
