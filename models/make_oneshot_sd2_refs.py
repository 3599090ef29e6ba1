#!/usr/bin/env python3
"""make_oneshot_sd2_refs.py — the checkpoint and references of the SD 2.x `onnx2cl-sd -m` proof
(tests/pipeline/oneshot_sd2/): one tiny SD 2.x checkpoint of architecture models/arch/tiny_sd2
(UNet with linear projections and per-block head counts, OpenCLIP text encoder in the single
file's own naming: fused in_proj q/k/v, gelu) and the images diffusers' StableDiffusionPipeline
makes from it with v-prediction (what diffusers assumes for an SD 2.x single file without a
config: the "v2" default of single_file_utils, stabilityai/stable-diffusion-2-1's DDIMScheduler
config) and with epsilon (SD 2.x 512-base; onnx2cl-sd --prediction-type epsilon).

What it does
  Builds the tiny_sd2 text encoder, UNet and VAE from models/arch/tiny_sd2/arch.json's configs
  with models/make_arch.py's builders (fixed seed, export_sd.reinit: no saturated noise), checks
  that their canonical keys and shapes are exactly arch.json's `keys`, and writes
      tiny_sd2.safetensors  the weights as one LDM single file (float16, 3.4 MB: the models' values
                            are rounded to float16 first, so the references use exactly the
                            stored values; OpenCLIP naming for the
                            text encoder; models/make_test_checkpoints.py's writer, checked with
                            diffusers' own convert_ldm_* / convert_open_clip_checkpoint)
      <case>.npy            StableDiffusionPipeline.from_single_file(tiny_sd2.safetensors,
                            config=<the same pipeline saved with save_pretrained>) output with the
                            case's scheduler; asserted equal (<= 1e-6) to from_pretrained of that
                            folder (the folder itself is not committed: 1 file keeps the data small)
      cases.txt             case name, onnx2cl-sd flags
  Scheduler of every case: tests/pipeline/sched/sd21v.json (stabilityai/stable-diffusion-2-1's
  scheduler_config.json: DDIMScheduler, v_prediction, clip_sample and set_alpha_to_one false)
  with the case's class and prediction_type. Tokenizer: the 1000-id tiny CLIP tokenizer of
  models/arch/tiny_sd15/tokenizer with SD 2.x's tokenizer_config.json (pad_token "!"), also
  written to models/arch/tiny_sd2/tokenizer/ (the architecture's shipped default). Prompts
  contain "!" (split out as the pad token, padding id 0). Seed 42, 32x32, output_type "np" as
  NCHW float32 in [0, 1].

Assumes
  torch, diffusers, transformers, numpy, safetensors (dev machine only; the test reads the files).

Usage
  python3 models/make_oneshot_sd2_refs.py [--out tests/pipeline/oneshot_sd2]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import export_sd  # noqa: E402
import make_arch  # noqa: E402
import make_test_checkpoints as mtc  # noqa: E402

PROMPT = "a photo of an astronaut riding a horse on mars!! highly detailed!"
NEGATIVE = "blurry, low quality!"
SEED = 42
# name, diffusers scheduler class, prediction_type, steps, cfg, onnx2cl-sd flags
CASES = [
    ("default_ddim_4", "DDIMScheduler", "v_prediction", 4, 7.5, ""),
    ("eps_ddim_4", "DDIMScheduler", "epsilon", 4, 7.5, "--prediction-type epsilon"),
    ("v_flag_ddim_4", "DDIMScheduler", "v_prediction", 4, 7.5, "--prediction-type v_prediction"),
    ("v_euler_6", "EulerDiscreteScheduler", "v_prediction", 6, 7.5, "--scheduler euler"),
    ("eps_euler_6", "EulerDiscreteScheduler", "epsilon", 6, 7.5,
     "--scheduler euler --prediction-type epsilon"),
    ("v_dpmpp_5_nocfg", "DPMSolverMultistepScheduler", "v_prediction", 5, 1.0, "--scheduler dpmpp_2m"),
]
TOKENIZER_CONFIG = {"tokenizer_class": "CLIPTokenizer", "model_max_length": 77,
                    "bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>",
                    "unk_token": "<|endoftext|>", "pad_token": "!"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "pipeline", "oneshot_sd2"))
    a = ap.parse_args()
    import diffusers
    from diffusers import StableDiffusionPipeline
    from safetensors.torch import save_file
    from transformers import CLIPTokenizer
    seed = export_sd.DEFAULT_SEED
    arch_dir = os.path.join(HERE, "arch", "tiny_sd2")
    arch = json.load(open(os.path.join(arch_dir, "arch.json")))
    mods = {}
    for name in ("text_encoder", "unet", "vae_decoder"):
        mods[name] = make_arch.build("tiny_sd2", name, seed)[0]
    models = {"unet": mods["unet"].unet, "vae": mods["vae_decoder"].vae,
              "text_encoder": mods["text_encoder"].clip}
    for m in models.values():  # stored as float16 (half the file); the references use these values
        m.to(torch.float16).to(torch.float32)
    for comp, m in models.items():  # the checkpoint is of the architecture
        sd = mtc.canonical(comp, m)
        want = arch["keys"][comp]
        assert set(sd) == set(want), (comp, set(sd) ^ set(want))
        for k, v in sd.items():
            assert list(v.shape) == want[k], (comp, k, v.shape, want[k])
    os.makedirs(a.out, exist_ok=True)
    single = os.path.join(a.out, "tiny_sd2.safetensors")
    tokdir = os.path.join(arch_dir, "tokenizer")
    shutil.rmtree(tokdir, ignore_errors=True)
    os.makedirs(tokdir)
    for f in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(HERE, "arch", "tiny_sd15", "tokenizer", f), tokdir)
    with open(os.path.join(tokdir, "tokenizer_config.json"), "w") as f:
        json.dump(TOKENIZER_CONFIG, f, indent=1)
        f.write("\n")
    tok = CLIPTokenizer.from_pretrained(tokdir)
    assert tok.pad_token_id == 0 and tok("wow!!").input_ids == [tok.bos_token_id, *tok("wow").input_ids[1:-1],
                                                               0, 0, tok.eos_token_id]
    with open(os.path.join(ROOT, "tests", "pipeline", "sched", "sd21v.json")) as f:
        sched_cfg = json.load(f)
    sched = diffusers.DDIMScheduler.from_config(sched_cfg)
    pipe = StableDiffusionPipeline(vae=models["vae"], text_encoder=models["text_encoder"], tokenizer=tok,
                                   unet=models["unet"], scheduler=sched, safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)
    mtc.L, mtc.HIDDEN = arch["configs"]["unet"]["layers_per_block"], arch["configs"]["text_encoder"]["hidden_size"]
    ck = mtc.single_file(models, "sd2")
    mtc.check_with_diffusers(ck, models, "sd2")
    save_file({k: v.half() if v.is_floating_point() else v for k, v in ck.items()}, single,
              metadata={"format": "pt"})

    def run(p, cls, pred, steps, cfg):
        p.scheduler = getattr(diffusers, cls).from_config(dict(sched_cfg, prediction_type=pred))
        p.set_progress_bar_config(disable=True)
        g = torch.Generator().manual_seed(SEED)
        with torch.no_grad():
            img = p(PROMPT, negative_prompt=NEGATIVE if cfg > 1 else None, height=32, width=32,
                    num_inference_steps=steps, guidance_scale=cfg, generator=g, output_type="np").images
        return np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)

    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "tiny_sd2")
        pipe.save_pretrained(folder, safe_serialization=True)
        for f in ("vocab.json", "merges.txt", "tokenizer_config.json"):
            shutil.copy(os.path.join(tokdir, f), os.path.join(folder, "tokenizer"))
        pf = StableDiffusionPipeline.from_pretrained(folder, safety_checker=None, requires_safety_checker=False)
        ps = StableDiffusionPipeline.from_single_file(single, config=folder, safety_checker=None,
                                                      requires_safety_checker=False)
        assert pf.scheduler.config.prediction_type == "v_prediction"
        assert ps.tokenizer.pad_token_id == 0
        for name, cls, pred, steps, cfg, _ in CASES:
            f = run(pf, cls, pred, steps, cfg)
            s = run(ps, cls, pred, steps, cfg)
            d = float(np.abs(f - s).max())
            assert d <= 1e-6, f"{name}: folder and single file differ by {d}"
            np.save(os.path.join(a.out, f"{name}.npy"), s)
            print(f"{name}: mean {s.mean():.4f} std {s.std():.4f} min {s.min():.3f} max {s.max():.3f}; "
                  f"folder vs single {d:.1e}")
    e = run(ps, "DDIMScheduler", "epsilon", 4, 7.5)
    v = run(ps, "DDIMScheduler", "v_prediction", 4, 7.5)
    print(f"epsilon vs v_prediction (ddim 4): max |diff| {float(np.abs(e - v).max()):.3f}")
    with open(os.path.join(a.out, "cases.txt"), "w") as fh:
        fh.write("# case\tonnx2cl-sd flags (run_oneshot_sd2.sh adds -m, prompts, size, outputs)\n")
        fh.write(f"# prompt: {PROMPT}\n# negative: {NEGATIVE}\n")
        for name, cls, pred, steps, cfg, flags in CASES:
            fh.write(f"{name}\t--steps {steps} --cfg {cfg} --seed {SEED} {flags}".rstrip() + "\n")


if __name__ == "__main__":
    main()
