#!/usr/bin/env python3
"""oneshot_full.py — `onnx2cl-sd -m` on a full-size SD 1.5 single file vs diffusers, timed.

What it does (dev machine: torch + diffusers + transformers; never CI)
  1. builds SD 1.5's UNet, VAE and CLIP-L text encoder from models/arch/sd15/arch.json's configs
     with diffusers'/transformers' default random init (torch.manual_seed(SEED)), rounds every
     weight to float16, and writes ONE single-file checkpoint in the original (LDM) layout A1111
     and civitai use, float16 (models/make_test_checkpoints.py's writer, checked with diffusers'
     own single-file conversion);
  2. the reference: diffusers' StableDiffusionPipeline on the same modules (float32 compute on
     the float16-exact weights), the shipped tokenizer (models/arch/sd15/tokenizer) and
     EulerDiscreteScheduler(arch.json's betas, timestep_spacing "leading", steps_offset 1), seed,
     prompt, size and steps below, output_type "np";
  3. onnx2cl-sd -m CKPT --scheduler euler --timestep-spacing leading ... twice, with an empty
     cache (compile + convert) and again (cache hit), timing each and reading peak RSS of the
     whole process tree (/usr/bin/time when present); with --offload a third time with --offload
     (the models on the device one stage at a time);
  4. prints max |image - reference| on [0, 1] and the timings as a markdown report.

Usage
  python3 bench/oneshot_full.py [--build build | --sd PATH] [--arch-dir DIR] [--work /tmp/oneshot_full]
      [--size 256] [--steps 4] [--offload] [--ref-device cpu|cuda]
  (bench/gpu/run.sh runs it on the lent GPU with --ref-device cuda: the first txt2img through the engine there)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEED = 42
PROMPT = "a photo of an astronaut riding a horse on mars"
NEGATIVE = "blurry"


def build_models():
    """SD 1.5's modules from arch.json, random init (torch.manual_seed(SEED)), weights rounded to
    float16 (the checkpoint is float16: the float32 reference then runs the same values)."""
    import torch
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel
    a = json.load(open(os.path.join(ROOT, "models/arch/sd15/arch.json")))
    c = a["configs"]
    torch.manual_seed(SEED)
    models = {"unet": UNet2DConditionModel(**c["unet"]), "vae": AutoencoderKL(**c["vae"]),
              "text_encoder": CLIPTextModel(CLIPTextConfig(**c["text_encoder"]))}
    with torch.no_grad():
        for m in models.values():
            for p in m.parameters():
                p.copy_(p.half().float())
            m.eval()
    return a, models


def write_checkpoint(a, models, path):
    """The models as an LDM single file (float16), checked with diffusers' own conversion."""
    from safetensors.torch import save_file
    sys.path.insert(0, os.path.join(ROOT, "models"))
    import make_test_checkpoints as mtc
    c = a["configs"]
    mtc.L, mtc.HIDDEN = c["unet"]["layers_per_block"], c["text_encoder"]["hidden_size"]
    ck = mtc.single_file(models, "sd1")
    mtc.check_with_diffusers(ck, models, "sd1")
    ck = {k: (v.half() if v.is_floating_point() else v) for k, v in ck.items()}
    save_file(ck, path, metadata={"format": "pt"})


def make_pipe(a, models):
    """diffusers' StableDiffusionPipeline over the models: SD 1.5's tokenizer, Euler (leading)."""
    from diffusers import EulerDiscreteScheduler, StableDiffusionPipeline
    from transformers import CLIPTokenizer
    tok = CLIPTokenizer(os.path.join(ROOT, "models/arch/sd15/tokenizer/vocab.json"),
                        os.path.join(ROOT, "models/arch/sd15/tokenizer/merges.txt"),
                        model_max_length=77, pad_token="<|endoftext|>")
    s = a["scheduler"]
    sched = EulerDiscreteScheduler(num_train_timesteps=s["num_train_timesteps"], beta_start=s["beta_start"],
                                   beta_end=s["beta_end"], beta_schedule=s["beta_schedule"],
                                   steps_offset=s["steps_offset"], timestep_spacing="leading")
    pipe = StableDiffusionPipeline(vae=models["vae"], text_encoder=models["text_encoder"], tokenizer=tok,
                                   unet=models["unet"], scheduler=sched, safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def make_checkpoint_and_ref(work, size, steps, cfg, device="cpu"):
    """The checkpoint, and diffusers' image on device ("cpu", or "cuda": float32 with TF32 off, what onnx2cl
    computes; the generator stays on the CPU, so the latents are the CPU run's). Returns (path, seconds of the
    reference run; cuda: the second of two runs, after a warm-up)."""
    import torch
    a, models = build_models()
    path = os.path.join(work, "sd15_random_f16.safetensors")
    write_checkpoint(a, models, path)
    pipe = make_pipe(a, models)
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        pipe = pipe.to("cuda")

    def once():
        t0 = time.time()
        with torch.no_grad():
            im = pipe(PROMPT, negative_prompt=NEGATIVE, height=size, width=size, num_inference_steps=steps,
                      guidance_scale=cfg, generator=torch.Generator().manual_seed(SEED), output_type="np").images
        if device == "cuda":
            torch.cuda.synchronize()
        return im, time.time() - t0
    img, t_ref = once()
    if device == "cuda":
        img, t_ref = once()
    ref = np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)
    np.save(os.path.join(work, "ref.npy"), ref)
    return path, t_ref


def run_ours(sd, ckpt, work, size, steps, cfg, tag, extra=()):
    out = os.path.join(work, f"{tag}.npy")
    cmd = [sd, "-m", ckpt, "-p", PROMPT, "-n", NEGATIVE,
           "--width", str(size), "--height", str(size), "--steps", str(steps), "--cfg", str(cfg),
           "--seed", str(SEED), "--scheduler", "euler", "--timestep-spacing", "leading",
           "-o", os.path.join(work, f"{tag}.png"), "--save-image", out, *extra]
    timer = ["/usr/bin/time", "-f", "peak_rss_kb %M"] if os.path.exists("/usr/bin/time") else []
    t0 = time.time()
    p = subprocess.run(timer + cmd, capture_output=True, text=True,
                       env=dict(os.environ, ONNX2CL_CACHE_DIR=os.path.join(work, "cache")))
    dt = time.time() - t0
    if p.returncode:
        sys.exit(f"{tag}: exit {p.returncode}\n{p.stderr[-4000:]}")
    rss = [l for l in p.stderr.splitlines() if l.startswith("peak_rss_kb")]
    lines = [l for l in p.stderr.splitlines() if "checkpoint/cache" in l or "load models" in l
             or l.strip().startswith(("unet ", "vae decoder", "total", "text encoder", "device memory"))]
    return np.load(out), dt, (rss[0] if rss else "peak_rss n/a"), lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--sd", help="the onnx2cl-sd to run (default BUILD/pipeline/onnx2cl-sd)")
    ap.add_argument("--arch-dir", help="onnx2cl-sd --arch-dir (default: its own lookup)")
    ap.add_argument("--ref-device", default="cpu", choices=("cpu", "cuda"),
                    help="where diffusers' reference runs (cuda: float32, TF32 off; timed after a warm-up)")
    ap.add_argument("--work", default="/tmp/oneshot_full")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--cfg", type=float, default=7.5)
    ap.add_argument("--keep", action="store_true", help="reuse the checkpoint and reference")
    ap.add_argument("--offload", action="store_true",
                    help="a third run (warm cache) with --offload: one stage's models on the device at a time")
    a = ap.parse_args()
    ck = os.path.join(a.work, "sd15_random_f16.safetensors")
    if not (a.keep and os.path.exists(ck)):
        shutil.rmtree(a.work, ignore_errors=True)
        os.makedirs(a.work)
        ck, t_ref = make_checkpoint_and_ref(a.work, a.size, a.steps, a.cfg, a.ref_device)
    else:
        t_ref = float("nan")
        shutil.rmtree(os.path.join(a.work, "cache"), ignore_errors=True)
    ref = np.load(os.path.join(a.work, "ref.npy"))
    print(f"# onnx2cl-sd -m, full-size SD 1.5 single file (random weights, F16, "
          f"{os.path.getsize(ck) / 2**30:.2f} GiB), {a.size}x{a.size}, {a.steps} steps, cfg {a.cfg}\n")
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}\n")
    print(f"- diffusers StableDiffusionPipeline (PyTorch {a.ref_device.upper()}, float32"
          f"{', TF32 off, after a warm-up run' if a.ref_device == 'cuda' else ''}): {t_ref:.1f} s\n")
    sd = a.sd or os.path.join(a.build, "pipeline/onnx2cl-sd")
    common = ("--arch-dir", a.arch_dir) if a.arch_dir else ()
    for tag in ("cold", "warm") + (("offload",) if a.offload else ()):
        img, dt, rss, lines = run_ours(sd, ck, a.work, a.size, a.steps, a.cfg, tag,
                                       common + (("--offload",) if tag == "offload" else ()))
        d = float(np.abs(img - ref).max())
        print(f"- onnx2cl-sd {tag} cache: {dt:.1f} s wall, {rss}, max |image - diffusers| = {d:.2e}")
        for l in lines:
            print(f"    {l.strip()}")
    print(f"\nload average at end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
