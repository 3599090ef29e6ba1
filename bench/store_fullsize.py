#!/usr/bin/env python3
"""store_fullsize.py [--ckpt PATH] [--work DIR] [--runs N] — the store (store/) on checkpoints
with the real SD 1.5 / SD 2.1 key names and shapes, without downloading one.

Builds the diffusers models of the published configs on torch's meta device (no memory), writes
them in the original single-file LDM layout (models/make_test_checkpoints.py's writers, the layout
checked by diffusers' own convert_ldm_* / convert_open_clip_checkpoint here too) as sparse
safetensors files (real header, zero data, no disk used): F16 without EMA, F32 with an EMA copy
of the UNet. Then for each file:
  - `onnx2cl-ckpt list` must give exactly the diffusers models' canonical keys and dims;
  - `onnx2cl-ckpt info` wall time (median of --runs) and peak RSS (/usr/bin/time if present).
Needs torch + diffusers + transformers (not run in CI). Prints a markdown table.
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import make_test_checkpoints as m  # noqa: E402
from diffusers import AutoencoderKL, UNet2DConditionModel  # noqa: E402
from diffusers.loaders import single_file_utils as sfu  # noqa: E402
from transformers import CLIPTextConfig, CLIPTextModel  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def models(fam):
    sd2 = fam == "sd2"
    with torch.device("meta"):
        u = UNet2DConditionModel(cross_attention_dim=1024 if sd2 else 768,
                                 attention_head_dim=(5, 10, 20, 20) if sd2 else 8,
                                 use_linear_projection=sd2)
        v = AutoencoderKL(block_out_channels=(128, 256, 512, 512), layers_per_block=2,
                          down_block_types=("DownEncoderBlock2D",) * 4,
                          up_block_types=("UpDecoderBlock2D",) * 4, latent_channels=4)
        t = CLIPTextModel(CLIPTextConfig(hidden_size=1024 if sd2 else 768,
                                         intermediate_size=4096 if sd2 else 3072,
                                         num_hidden_layers=23 if sd2 else 12,
                                         num_attention_heads=16 if sd2 else 12,
                                         hidden_act="gelu" if sd2 else "quick_gelu"))
    return {"unet": u, "vae": v, "text_encoder": t}


def ldm(fam, ms):
    m.L, m.HIDDEN = 2, 1024 if fam == "sd2" else 768
    sd = {}
    sd.update(m.ldm_unet(m.canonical("unet", ms["unet"])))
    sd.update(m.ldm_vae(m.canonical("vae", ms["vae"])))
    te = {"text_model." + k: x for k, x in m.canonical("text_encoder", ms["text_encoder"]).items()}
    sd.update(m.ldm_openclip(te, 0) if fam == "sd2" else m.ldm_clip(te))
    return sd


def check_with_diffusers(fam, ms, sd):
    conv = {"unet": sfu.convert_ldm_unet_checkpoint(sd, {"layers_per_block": 2}),
            "vae": sfu.convert_ldm_vae_checkpoint(sd, {"down_block_types": ("x",) * 4,
                                                       "up_block_types": ("x",) * 4})}
    te = (sfu.convert_open_clip_checkpoint(ms["text_encoder"], sd) if fam == "sd2"
          else sfu.convert_ldm_clip_checkpoint(sd))
    te.pop("text_model.embeddings.position_ids", None)
    conv["text_encoder"] = {k[len("text_model."):]: x for k, x in te.items()}
    for c, d in conv.items():
        want = {k: list(x.shape) for k, x in m.canonical(c, ms[c]).items()}
        assert {k: list(x.shape) for k, x in d.items()} == want, c


def write_sparse(path, tensors):
    """tensors: {name: (shape, dtype)}; data left as a hole (zeros)."""
    size = {"F16": 2, "F32": 4, "I64": 8}
    h, off = {}, 0
    for k, (shape, dt) in tensors.items():
        n = 1
        for d in shape:
            n *= d
        h[k] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + n * size[dt]]}
        off += n * size[dt]
    hj = json.dumps(h).encode()
    hj += b" " * (-len(hj) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj)
        f.truncate(8 + len(hj) + off)
    return len(h), 8 + len(hj) + off


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(ROOT, "build-store", "store", "onnx2cl-ckpt"))
    ap.add_argument("--work", default="/tmp/onnx2cl-store-bench")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows = []
    for fam in ("sd1", "sd2"):
        ms = models(fam)
        sd = ldm(fam, ms)
        check_with_diffusers(fam, ms, sd)
        want = {(c, k): list(x.shape) for c, mod in ms.items()
                for k, x in m.canonical(c, mod).items()}
        params = {c: sum(x.numel() for x in mod.state_dict().values()) for c, mod in ms.items()}
        ema = {"model_ema." + "".join(k.split(".")[1:]): x for k, x in sd.items()
               if k.startswith("model.diffusion_model.")}
        variants = {
            f"{fam}_f16": {k: (tuple(x.shape), "I64" if k.endswith("position_ids") else "F16")
                           for k, x in sd.items()},
            f"{fam}_ema_f32": {k: (tuple(x.shape), "I64" if k.endswith("position_ids") else "F32")
                               for k, x in {**sd, **ema}.items()},
        }
        for name, tensors in variants.items():
            path = os.path.join(a.work, name + ".safetensors")
            n, size = write_sparse(path, tensors)
            out = subprocess.run([a.ckpt, "list", path], capture_output=True, text=True, check=True)
            got = {}
            for line in out.stdout.splitlines():
                c, k, dims, _, _ = line.split("\t")
                got[(c, k)] = [int(d) for d in dims.strip("[]").split(",") if d]
            assert got == want, sorted(set(got) ^ set(want))[:5]
            times = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                subprocess.run([a.ckpt, "info", path], capture_output=True, check=True)
                times.append(time.perf_counter() - t0)
            rss = "-"
            if os.path.exists("/usr/bin/time"):
                r = subprocess.run(["/usr/bin/time", "-f", "%M", a.ckpt, "info", path],
                                   capture_output=True, text=True)
                rss = f"{int(r.stderr.strip().splitlines()[-1]) / 1024:.1f} MB"
            rows.append((name, n, size / 2 ** 30, len(got), statistics.median(times) * 1e3, rss))
        print(f"{fam}: parameters " + ", ".join(f"{c} {p:,}" for c, p in params.items()),
              file=sys.stderr)
    print("| file | tensors | size | canonical keys (= diffusers) | `onnx2cl-ckpt info` | peak RSS |")
    print("|---|---|---|---|---|---|")
    for name, n, gib, keys, ms_, rss in rows:
        print(f"| {name} | {n} | {gib:.2f} GiB | {keys} | {ms_:.1f} ms | {rss} |")


if __name__ == "__main__":
    main()
