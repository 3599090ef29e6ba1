#!/usr/bin/env python3
"""fullsize_keys.py [--ckpt ONNX2CL_CKPT] [--work DIR] — the store on SDXL single files with the
real key names and shapes, without downloading one (dev check; torch + diffusers + transformers,
not in CI; as bench/store_fullsize.py does for SD 1.5 / 2.1).

Builds SDXL base 1.0's UNet, VAE, CLIP-L and OpenCLIP-bigG (CLIPTextModelWithProjection) from
their published configs on torch's meta device, and the refiner's UNet + OpenCLIP-bigG, writes
them in the sgm single-file layout (models/make_test_checkpoints.py's writers; the key set
checked by diffusers' own converters) as sparse F16 safetensors (real header, zero data, no disk
used), then: `onnx2cl-ckpt list` gives exactly the diffusers models' canonical keys and dims, and
`onnx2cl-ckpt info` names the family (sdxl / sdxl_refiner). Prints parameter counts.
"""
import argparse
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "models"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import export_family  # noqa: E402
import make_test_checkpoints as m  # noqa: E402
from store_fullsize import write_sparse  # noqa: E402
from diffusers import AutoencoderKL, UNet2DConditionModel  # noqa: E402
from diffusers.loaders import single_file_utils as sfu  # noqa: E402
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection  # noqa: E402

# stabilityai/stable-diffusion-xl-refiner-1.0 unet/config.json
REFINER_UNET = dict(
    export_family.SDXL_UNET_FULL, block_out_channels=[384, 768, 1536, 1536],
    down_block_types=["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
    up_block_types=["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
    attention_head_dim=[6, 12, 24, 24], cross_attention_dim=1280, transformer_layers_per_block=4,
    projection_class_embeddings_input_dim=2560)
CLIP_L = dict(vocab_size=49408, hidden_size=768, intermediate_size=3072, num_attention_heads=12,
              num_hidden_layers=12, max_position_embeddings=77, hidden_act="quick_gelu",
              projection_dim=768)


def build(refiner):
    with torch.device("meta"):
        ms = {"unet": UNet2DConditionModel(**(REFINER_UNET if refiner else export_family.SDXL_UNET_FULL))}
        if not refiner:
            ms["vae"] = AutoencoderKL(block_out_channels=(128, 256, 512, 512), layers_per_block=2,
                                      down_block_types=("DownEncoderBlock2D",) * 4,
                                      up_block_types=("UpDecoderBlock2D",) * 4, latent_channels=4)
            ms["text_encoder"] = CLIPTextModel(CLIPTextConfig(**CLIP_L))
        ms["text_encoder_2"] = CLIPTextModelWithProjection(CLIPTextConfig(**export_family.CLIPG_FULL))
    return ms


def sgm(ms, refiner):
    m.L = 2
    sd = dict(m.ldm_unet(m.canonical("unet", ms["unet"])))
    if "vae" in ms:
        sd.update(m.ldm_vae(m.canonical("vae", ms["vae"])))
    if "text_encoder" in ms:
        sd.update({"conditioner.embedders.0.transformer.text_model." + k: x
                   for k, x in m.canonical("text_encoder", ms["text_encoder"]).items()})
        sd["conditioner.embedders.0.transformer.text_model.embeddings.position_ids"] = torch.zeros(1, 77, dtype=torch.int64, device="meta")
    te2 = {("text_model." + k if k != "text_projection.weight" else k): x
           for k, x in m.canonical("text_encoder_2", ms["text_encoder_2"]).items()}
    pre = "conditioner.embedders.0.model." if refiner else "conditioner.embedders.1.model."
    sd.update(m.ldm_openclip(te2, 0, pre))
    # diffusers' converters give the key set back (shapes: meta tensors)
    got = {"unet": sfu.convert_ldm_unet_checkpoint(sd, dict(ms["unet"].config))}
    got["text_encoder_2"] = sfu.convert_open_clip_checkpoint(ms["text_encoder_2"], sd, prefix=pre)
    for c, d in got.items():
        d = {k.removeprefix("text_model."): list(x.shape) for k, x in d.items()}
        assert d == {k: list(x.shape) for k, x in m.canonical(c, ms[c]).items()}, c
    return sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(ROOT, "build", "store", "onnx2cl-ckpt"))
    ap.add_argument("--work", default="/tmp/onnx2cl-sdxl-keys")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    for refiner in (False, True):
        name = "sdxl_refiner" if refiner else "sdxl"
        ms = build(refiner)
        sd = sgm(ms, refiner)
        path = os.path.join(a.work, name + ".safetensors")
        n, size = write_sparse(path, {k: (tuple(x.shape), "I64" if k.endswith("position_ids") else "F16")
                                      for k, x in sd.items()})
        out = subprocess.run([a.ckpt, "list", path], capture_output=True, text=True, check=True)
        got = {}
        for line in out.stdout.splitlines():
            c, k, dims, _, _ = line.split("\t")
            got[(c, k)] = [int(d) for d in dims.strip("[]").split(",") if d]
        want = {(c, k): list(x.shape) for c, mod in ms.items() for k, x in m.canonical(c, mod).items()}
        assert got == want, sorted(set(got) ^ set(want))[:5]
        info = subprocess.run([a.ckpt, "info", path, "--arch-dir", os.path.join(ROOT, "models", "arch")],
                              capture_output=True, text=True).stdout
        fam = [l for l in info.splitlines() if l.startswith("family:")]
        assert fam and fam[0].startswith(f"family: {name} ("), info
        params = {c: sum(x.numel() for x in mod.state_dict().values()) for c, mod in ms.items()}
        print(f"{name}: {n} tensors, {size / 2**30:.2f} GiB F16, {len(got)} canonical keys = diffusers'; "
              f"{fam[0]}; parameters " + ", ".join(f"{c} {p:,}" for c, p in params.items()))


if __name__ == "__main__":
    sys.exit(main())
