#!/usr/bin/env python3
"""make_taesd_refs.py — the tiny TAESD checkpoint (both layouts users download) and the diffusers
references of tests/taesd/ (onnx2cl-sd --taesd, --preview, --fast-decode; docs/taesd.md).

What it does
  Builds diffusers' AutoencoderTiny with export_family's TAESD_TINY config (architecture
  models/arch/tiny_taesd), every parameter re-drawn by export_sd.reinit (seed 1234), and writes
      models/ckpt/taesd/tiny_taesd/                    AutoencoderTiny.save_pretrained (config.json +
                                                       diffusion_pytorch_model.safetensors: keys
                                                       encoder.layers.* / decoder.layers.*), as
                                                       madebyollin/taesd is published
      models/ckpt/taesd/tiny_taesd_decoder.safetensors the decoder alone in the original naming
                                                       (madebyollin/taesd taesd.py: Decoder is an
                                                       nn.Sequential whose index 0 is Clamp, so
                                                       diffusers' decoder.layers.N is "N+1."), as
                                                       taesd_decoder.safetensors is published
      tests/taesd/latents.npy      fixed latents [1,4,8,8] (numpy seed 1234)
      tests/taesd/decode.npy       AutoencoderTiny.decode(latents).sample [1,3,64,64]: in [-1, 1]
                                   (DecoderTiny: tanh(x/3)*3, the layers, then 2x - 1)
      tests/taesd/euler_4_taesd_step3.npy  the preview after step 3 (callback_on_step_end's latents,
                                   decoded and postprocessed as the pipeline does)
      tests/taesd/euler_4_taesd.npy  StableDiffusionPipeline.from_single_file(tests/pipeline/oneshot/
                                   tiny_sd15.safetensors) with EulerDiscreteScheduler and
                                   pipe.vae = the tiny AutoencoderTiny (what users do for a fast
                                   decode): the oneshot euler_4 case (prompt/negative of
                                   tests/pipeline/oneshot/cases.txt, 32x32, 4 steps, cfg 7.5,
                                   seed 42), output_type "np" as NCHW float32. The pipeline then
                                   decodes latents / vae.config.scaling_factor = latents / 1.0,
                                   and its image processor keeps the vae_scale_factor of the
                                   VAE it was built with (2 for tiny_sd15's), so the image is the
                                   TAESD decoder's size: 16x16 latents -> 128x128.
  Checks the original-naming file loads into taesd.py's layout: every decoder key is "N+1." of a
  diffusers key with the same tensor.

Assumes
  torch, diffusers (0.42), numpy, safetensors (dev machine only; CI reads the files).

Usage
  python3 models/make_taesd_refs.py
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import export_family  # noqa: E402
import export_sd  # noqa: E402

SEED = export_sd.DEFAULT_SEED


def original_naming(sd):
    """diffusers decoder.layers.N.rest -> taesd.py's Decoder (nn.Sequential, Clamp at 0): N+1.rest"""
    out = {}
    for k, v in sd.items():
        if not k.startswith("decoder.layers."):
            continue
        n, rest = k[len("decoder.layers."):].split(".", 1)
        out[f"{int(n) + 1}.{rest}"] = v.contiguous()
    return out


def main():
    from diffusers import AutoencoderTiny, EulerDiscreteScheduler, StableDiffusionPipeline
    from safetensors.torch import save_file
    torch.manual_seed(SEED)
    taesd = export_sd.reinit(AutoencoderTiny(**export_family.TAESD_TINY), SEED).eval()
    arch = json.load(open(os.path.join(HERE, "arch", "tiny_taesd", "arch.json")))
    sd = taesd.state_dict()
    for k, shape in arch["keys"]["vae"].items():
        assert list(sd[k].shape) == shape, (k, sd[k].shape, shape)
    ck = os.path.join(HERE, "ckpt", "taesd")
    os.makedirs(ck, exist_ok=True)
    taesd.save_pretrained(os.path.join(ck, "tiny_taesd"), safe_serialization=True)
    orig = original_naming(sd)
    assert len(orig) == len(arch["keys"]["vae"])
    save_file(orig, os.path.join(ck, "tiny_taesd_decoder.safetensors"), metadata={"format": "pt"})

    out = os.path.join(ROOT, "tests", "taesd")
    os.makedirs(out, exist_ok=True)
    lat = np.random.default_rng(SEED).standard_normal((1, 4, 8, 8)).astype(np.float32)
    with torch.no_grad():
        dec = taesd.decode(torch.from_numpy(lat)).sample.numpy().astype(np.float32)
    np.save(os.path.join(out, "latents.npy"), lat)
    np.save(os.path.join(out, "decode.npy"), dec)
    print(f"decode: {dec.shape} min {dec.min():.3f} max {dec.max():.3f} mean {dec.mean():.4f}")

    os_dir = os.path.join(ROOT, "tests", "pipeline", "oneshot")
    cases = open(os.path.join(os_dir, "cases.txt")).read()
    prompt = cases.split("# prompt: ")[1].split("\n")[0]
    negative = cases.split("# negative: ")[1].split("\n")[0]
    pipe = StableDiffusionPipeline.from_single_file(
        os.path.join(os_dir, "tiny_sd15.safetensors"), config=os.path.join(os_dir, "tiny_sd15"),
        safety_checker=None, requires_safety_checker=False)
    pipe.scheduler = EulerDiscreteScheduler.from_config(pipe.scheduler.config)
    pipe.vae = AutoencoderTiny.from_pretrained(os.path.join(ck, "tiny_taesd"))
    pipe.set_progress_bar_config(disable=True)
    lats = []

    def keep(p, i, t, kw):
        lats.append(kw["latents"].detach().clone().numpy())
        return kw

    g = torch.Generator().manual_seed(42)
    with torch.no_grad():
        img = pipe(prompt, negative_prompt=negative, height=32, width=32, num_inference_steps=4,
                   guidance_scale=7.5, generator=g, output_type="np",
                   callback_on_step_end=keep).images
    img = np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)
    np.save(os.path.join(out, "euler_4_taesd.npy"), img)
    # step 3's preview (--preview-every 3): TAESD on the latents after step 3, as the pipeline's
    # image processor postprocesses a decode
    with torch.no_grad():
        p3 = pipe.vae.decode(torch.from_numpy(lats[2])).sample
    p3 = (p3 / 2 + 0.5).clamp(0, 1).numpy().astype(np.float32)
    np.save(os.path.join(out, "euler_4_taesd_step3.npy"), p3)
    print(f"euler_4_taesd: {img.shape} min {img.min():.3f} max {img.max():.3f} mean {img.mean():.4f}")


if __name__ == "__main__":
    main()
