#!/usr/bin/env python3
"""make_files.py — the fine-tune checkpoints and PyTorch references of tests/name_map (torch,
diffusers, transformers; dev machine only, CI never runs it; outputs committed).

Rebuilds export_sd.py's tiny SD 1.5 UNet, VAE and CLIP text encoder with its seed (the modules
of models/tiny/*), checks them against models/tiny/*/ref, then makes a "fine-tune" of each:
every float parameter p <- p * (1 + 0.1 N(0,1)) (torch generator seed 99), saved with diffusers /
transformers `save_pretrained` in float16 (`.half()`), and copied to
    ft_unet.safetensors          (unet/diffusion_pytorch_model.safetensors, F16)
    ft_vae.safetensors           (vae/diffusion_pytorch_model.safetensors, F16: encoder included)
    ft_text_encoder.safetensors  (text_encoder/model.safetensors, F16)
The references are the float32 module loaded from that float16 file (exactly the values onnx2cl
converts) run on models/tiny/<model>/inputs: ref_ft/<model>/<output>.npy; and the fine-tuned
VAE's encoder (models/make_arch.py's vae_encoder: quant_conv(encoder(x))) on a fixed image
ref_ft/vae_encoder/inputs/sample.npy [1,3,16,16]: ref_ft/vae_encoder/latent_parameters.npy.

Usage: python3 tests/name_map/make_files.py
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "models"))
import export_sd  # noqa: E402
import name_map  # noqa: E402

FILES = {"unet": "diffusion_pytorch_model.safetensors",
         "vae_decoder": "diffusion_pytorch_model.safetensors", "text_encoder": "model.safetensors"}


def main():
    seed = export_sd.DEFAULT_SEED
    for model, fname in FILES.items():
        rng = np.random.default_rng(seed)
        wrapper, inputs, out_names, _, _ = export_sd.BUILDERS[model]("tiny", seed, rng)
        wrapper.eval()
        tiny = os.path.join(ROOT, "models", "tiny", model)
        feeds = [torch.from_numpy(np.load(os.path.join(tiny, "inputs", k + ".npy"))) for k in inputs]
        with torch.no_grad():
            outs = wrapper(*feeds)
        outs = (outs,) if isinstance(outs, torch.Tensor) else outs
        for k, o in zip(out_names, outs):
            ref = np.load(os.path.join(tiny, "ref", k + ".npy"))
            d = np.abs(o.numpy() - ref).max()
            assert d <= 1e-5, f"{model}/{k}: rebuilt module differs from models/tiny ({d})"
        comp = name_map.component_module(wrapper)
        gen = torch.Generator().manual_seed(99)
        with torch.no_grad():
            for _, p in comp.named_parameters():
                p.mul_(1 + 0.1 * torch.randn(p.shape, generator=gen))
        tmp = tempfile.mkdtemp()
        comp.half().save_pretrained(tmp)
        comp.float()
        comp_name = name_map.COMPONENTS[model]
        dst = os.path.join(HERE, f"ft_{comp_name}.safetensors")
        shutil.copy(os.path.join(tmp, fname), dst)
        shutil.rmtree(tmp)
        from safetensors.torch import load_file
        sd = load_file(dst)
        missing, unexpected = comp.load_state_dict({k: v.float() for k, v in sd.items()},
                                                   strict=False)
        assert not unexpected, unexpected
        with torch.no_grad():
            outs = wrapper(*feeds)
        outs = (outs,) if isinstance(outs, torch.Tensor) else outs
        rdir = os.path.join(HERE, "ref_ft", model)
        os.makedirs(rdir, exist_ok=True)
        for k, o in zip(out_names, outs):
            np.save(os.path.join(rdir, k + ".npy"), o.numpy())
        if model == "vae_decoder":  # the encoder of the same fine-tune (weight-free graph)
            import make_arch
            enc = make_arch.VaeEncoderWrapper(comp).eval()
            x = np.random.default_rng(seed).standard_normal((1, 3, 16, 16)).astype(np.float32)
            edir = os.path.join(HERE, "ref_ft", "vae_encoder")
            os.makedirs(os.path.join(edir, "inputs"), exist_ok=True)
            np.save(os.path.join(edir, "inputs", "sample.npy"), x)
            with torch.no_grad():
                np.save(os.path.join(edir, "latent_parameters.npy"),
                        enc(torch.from_numpy(x)).numpy())
        print(f"{model}: {dst} ({os.path.getsize(dst)} bytes, {len(sd)} tensors; "
              f"not in the file: {missing})")


if __name__ == "__main__":
    main()
