#!/usr/bin/env python3
"""make_sd_pipeline_refs.py — the references of the onnx2cl-sd proof test (tests/pipeline/e2e/):
images made by diffusers' StableDiffusionPipeline from the same tiny weights, tokenizer files,
scheduler config and latents that the test gives onnx2cl-sd.

What it does
  Rebuilds the tiny text encoder, UNet and VAE of models/tiny exactly as export_sd.py does (same
  configs, seed 1234, reinit) and checks each against its committed PyTorch reference
  (models/tiny/*/ref, max abs <= 1e-5: the weights are the exported ones). Builds the 1000-id
  tiny CLIP tokenizer with tests/pipeline/clip_bpe_setup.py (open-clip-torch wheel) and loads it
  with transformers.CLIPTokenizer. Assembles StableDiffusionPipeline(vae, text_encoder, tokenizer,
  unet, scheduler, safety_checker=None) with the scheduler class built from
  tests/pipeline/sched/sd15.json (SchedulerClass.from_config + overrides), fixed latents
  [1,4,16,16] (numpy default_rng(2024), written to e2e/latents.npy) and
  generator = torch.Generator().manual_seed(42); image size 32x32 (vae_scale_factor 2).
  For each case it writes e2e/<case>.npy: output_type="np" turned to NCHW float32 [1,3,32,32] in
  [0,1] (before 8-bit rounding), and e2e/cases.txt with the onnx2cl-sd flags of each case.

Assumes
  torch, diffusers, transformers, numpy (dev machine only; the test reads the committed files).

Usage
  python3 models/make_sd_pipeline_refs.py [--out tests/pipeline/e2e]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import export_sd  # noqa: E402

PROMPT = "a photo of an astronaut riding a horse on mars, highly detailed"
NEGATIVE = "blurry, low quality"
SEED = 42

# name, scheduler, steps, cfg, extra onnx2cl-sd flags, from_config overrides, use fixed latents
CASES = []
for _steps in (1, 4, 20):
    for _name, _sched, _flags, _ov in (
        ("euler", "euler", [], {}),
        ("euler_a", "euler_a", [], {}),
        ("dpmpp_2m", "dpmpp_2m", [], {}),
        ("dpmpp_2m_karras", "dpmpp_2m", ["--karras"], {"use_karras_sigmas": True}),
        ("ddim", "ddim", [], {}),
        ("lcm", "lcm", [], {}),
    ):
        CASES.append((f"{_name}_{_steps}", _sched, _steps, 7.5, _flags, _ov, True))
CASES.append(("turbo_1", "euler", 1, 0.0, ["--timestep-spacing", "trailing"], {"timestep_spacing": "trailing"}, True))
CASES.append(("euler_a_seed_4", "euler_a", 4, 7.5, [], {}, False))  # latents from the seed
# the other samplers (scheduler.h), each at 1, 4 and 20 steps; diffusers class and settings from
# tests/pipeline/make_sched_refs.py (CLASSES, KIND_KW); Heun and DPM2 a also from the seed
NEW_KINDS = ["pndm", "lms", "heun", "dpm2", "dpm2_a", "dpmpp_2m_sde", "dpmpp_3m_sde", "unipc", "deis", "ddpm", "tcd"]
for _steps in (1, 4, 20):
    for _s in NEW_KINDS:
        CASES.append((f"{_s}_{_steps}", _s, _steps, 7.5, [], {}, True))
CASES.append(("heun_seed_4", "heun", 4, 7.5, [], {}, False))
CASES.append(("dpm2_a_seed_4", "dpm2_a", 4, 7.5, [], {}, False))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "pipeline", "e2e"))
    a = ap.parse_args()
    from diffusers import (AutoencoderKL, DDIMScheduler, DPMSolverMultistepScheduler,
                           EulerAncestralDiscreteScheduler, EulerDiscreteScheduler, LCMScheduler,
                           StableDiffusionPipeline)
    from transformers import CLIPTokenizer
    os.makedirs(a.out, exist_ok=True)
    seed = export_sd.DEFAULT_SEED
    mods = {}
    for name in ("text_encoder", "unet", "vae_decoder"):
        rng = np.random.default_rng(seed)
        wrapper, inputs, out_names, _, _ = export_sd.BUILDERS[name]("tiny", seed, rng)
        with torch.no_grad():
            feeds = [torch.from_numpy(np.load(os.path.join(HERE, "tiny", name, "inputs", k + ".npy")))
                     for k in inputs]
            got = wrapper(*feeds)
            got = got if isinstance(got, tuple) else (got,)
        ref = np.load(os.path.join(HERE, "tiny", name, "ref", out_names[0] + ".npy"))
        err = float(np.abs(got[0].numpy() - ref).max())
        # other weights would differ by O(1); 1e-5 leaves room for CPU-dependent float rounding
        assert err <= 1e-5, f"{name}: rebuilt weights differ from the export (max abs {err})"
        mods[name] = wrapper
        print(f"{name}: rebuilt, max abs vs committed ref {err:.1e}")
    text_encoder = mods["text_encoder"].clip
    unet = mods["unet"].unet
    vae = mods["vae_decoder"].vae
    assert isinstance(vae, AutoencoderKL)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "pipeline", "clip_bpe_setup.py"), tmp],
                       check=True)
        tok = CLIPTokenizer.from_pretrained(os.path.join(tmp, "tiny"))
    with open(os.path.join(ROOT, "tests", "pipeline", "sched", "sd15.json")) as f:
        sched_cfg = json.load(f)
    sys.path.insert(0, os.path.join(ROOT, "tests", "pipeline"))
    import make_sched_refs
    classes = dict(make_sched_refs.CLASSES)
    classes.update({"euler": EulerDiscreteScheduler, "euler_a": EulerAncestralDiscreteScheduler,
                    "dpmpp_2m": DPMSolverMultistepScheduler, "ddim": DDIMScheduler, "lcm": LCMScheduler})
    kind_kw = getattr(make_sched_refs, "KIND_KW", {})
    latents = np.random.default_rng(2024).standard_normal((1, 4, 16, 16)).astype(np.float32)
    np.save(os.path.join(a.out, "latents.npy"), latents)
    lines = []
    for name, sched, steps, cfg, flags, ov, fixed in CASES:
        scheduler = classes[sched].from_config(sched_cfg, **ov, **kind_kw.get(sched, {}))
        pipe = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tok, unet=unet,
                                       scheduler=scheduler, safety_checker=None, feature_extractor=None,
                                       requires_safety_checker=False)
        pipe.set_progress_bar_config(disable=True)
        g = torch.Generator().manual_seed(SEED)
        kw = {"latents": torch.from_numpy(latents)} if fixed else {}
        with torch.no_grad():
            img = pipe(PROMPT, negative_prompt=NEGATIVE if cfg > 1 else None, height=32, width=32,
                       num_inference_steps=steps, guidance_scale=cfg, generator=g, output_type="np",
                       **kw).images
        img = np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)
        np.save(os.path.join(a.out, name + ".npy"), img)
        args = ["--scheduler", sched, "--steps", str(steps), "--cfg", str(cfg), "--seed", str(SEED)] + flags
        if fixed:
            args += ["--latents", "latents.npy"]
        lines.append(name + "\t" + " ".join(args))
        print(f"{name}: mean {img.mean():.4f} std {img.std():.4f}")
    with open(os.path.join(a.out, "cases.txt"), "w") as f:
        f.write("# case\tonnx2cl-sd flags (prompt, negative prompt and files are added by run_e2e.sh)\n")
        f.write(f"# prompt: {PROMPT}\n# negative: {NEGATIVE}\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
