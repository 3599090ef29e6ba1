#!/usr/bin/env python3
"""lora_merge.py --bench LABEL=EXE... [--onnx2cl LABEL=EXE...] [--work DIR] [--runs N]
   [--ranks 64,128] [--out REPORT.md] — the cost of merging a kohya LoRA into SD 1.5 weights
   (store/lora.c, o2s_lora_apply) on the real module set and shapes, without downloading anything.

From models/arch/sd15/arch.json's keys (canonical names and dims) it writes:
  - a diffusers folder base/{unet,text_encoder}/... of every key, F16, as sparse files (real
    header, zero data: nothing to read from disk);
  - kohya LoRAs of rank R (random F16 factors, alpha = R/2) on the modules kohya's sd-scripts
    trains by default: UNet Transformer2DModel linears (attn1/attn2 to_q/to_k/to_v/to_out.0,
    ff.net.0.proj, ff.net.2, proj_in, proj_out) and CLIP-L attention + MLP (q/k/v/out_proj, fc1,
    fc2), flat names (lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight, ...).
Then runs each lora_merge_bench build (bench/lora_merge_bench.c: the merge alone, every module,
median of --runs; build it with
  cc -O2 -Istore bench/lora_merge_bench.c BUILD/store/libonnx2cl_store.a -lcjson -lm -lpthread
against the store before and after a change) and, with --onnx2cl, the whole text-encoder
conversion (`onnx2cl --weights-only --weights-dtype f16`) without and with `--lora L:1`.
Needs numpy only.
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ARCH = os.path.join(ROOT, "models", "arch", "sd15")
UNET_MODS = ("attn1.to_q", "attn1.to_k", "attn1.to_v", "attn1.to_out.0", "attn2.to_q", "attn2.to_k",
             "attn2.to_v", "attn2.to_out.0", "ff.net.0.proj", "ff.net.2")
TE_MODS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj", "mlp.fc1", "mlp.fc2")


def write_safetensors(path, tensors, sparse):
    """tensors: list of (key, dtype, shape, bytes or None). sparse: data left as a hole."""
    hdr, off = {}, 0
    for k, dt, shape, data in tensors:
        n = int(np.prod(shape)) * 2
        hdr[k] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        if sparse:
            f.truncate(8 + len(h) + off)
        else:
            for _, _, _, data in tensors:
                f.write(data)


def targets(keys):
    """(component, canonical module) pairs kohya trains, with [out, in] dims."""
    out = []
    for k, d in keys["unet"].items():
        if not k.endswith(".weight") or ".attentions." not in k:
            continue
        m = k[:-len(".weight")]
        if m.endswith(UNET_MODS) or m.endswith((".proj_in", ".proj_out")):
            out.append(("unet", m, d))
    for k, d in keys["text_encoder"].items():
        m = k[:-len(".weight")] if k.endswith(".weight") else None
        if m and m.endswith(TE_MODS):
            out.append(("text_encoder", m, d))
    return out


def make_lora(path, mods, rank, rng):
    ts, macs = [], 0
    for comp, m, d in mods:
        pre = "lora_unet_" if comp == "unet" else "lora_te_text_model_"
        name = pre + m.replace(".", "_")
        out, rest = d[0], int(np.prod(d[1:]))
        down_shape = [rank] + list(d[1:])
        dn = (rng.standard_normal(rank * rest, dtype=np.float32) * 0.01).astype(np.float16)
        up = (rng.standard_normal(out * rank, dtype=np.float32) * 0.01).astype(np.float16)
        ts.append((name + ".lora_down.weight", "F16", down_shape, dn.tobytes()))
        ts.append((name + ".lora_up.weight", "F16", [out, rank] + [1] * (len(d) - 2), up.tobytes()))
        ts.append((name + ".alpha", "F16", [], np.float16(rank / 2).tobytes()))
        macs += out * rest * rank
    # alpha: 0-d tensors are 2 bytes; write_safetensors counts prod([]) = 1 element
    write_safetensors(path, ts, sparse=False)
    return macs


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.perf_counter() - t0
    if p.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stdout[-2000:]))
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="append", required=True, metavar="LABEL=EXE",
                    help="a lora_merge_bench build (repeatable: before=..., after=...)")
    ap.add_argument("--onnx2cl", action="append", default=[], metavar="LABEL=EXE",
                    help="also time the whole text-encoder conversion with onnx2cl (repeatable)")
    ap.add_argument("--work", default="/tmp/lora_merge_bench")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ranks", default="64,128")
    ap.add_argument("--out")
    a = ap.parse_args()
    keys = json.load(open(os.path.join(ARCH, "arch.json")))["keys"]
    os.makedirs(a.work, exist_ok=True)
    base = os.path.join(a.work, "base")
    for comp, fname in (("unet", "diffusion_pytorch_model"), ("text_encoder", "model")):
        write_safetensors(os.path.join(base, comp, fname + ".safetensors"),
                          [(k, "F16", d, None) for k, d in sorted(keys[comp].items())], sparse=True)
    mods = targets(keys)
    rng = np.random.default_rng(0)
    ranks = [int(r) for r in a.ranks.split(",")]
    loras = {}
    for r in ranks:
        p = os.path.join(a.work, "kohya_r%d.safetensors" % r)
        loras[r] = (p, make_lora(p, mods, r, rng))
    lines = ["merge alone (o2s_lora_apply over every module, median of %d):" % a.runs, "",
             "| build | rank | modules | multiply-adds | seconds | GMAC/s |", "|---|---|---|---|---|---|"]
    for spec in a.bench:
        label, exe = spec.split("=", 1)
        for r in ranks:
            p = subprocess.run([exe, base, loras[r][0], str(a.runs)], stdout=subprocess.PIPE, text=True, check=True)
            f = p.stdout.split()
            lines.append("| %s | %d | %s | %.1f G | %.2f | %.2f |" % (label, r, f[1], float(f[3]) / 1e9,
                                                                       float(f[5]), float(f[7])))
            print(lines[-1], flush=True)
    if a.onnx2cl:
        lines += ["", "whole conversion, text encoder (`onnx2cl --weights-only --weights-dtype f16`, median of %d):"
                  % a.runs, "", "| onnx2cl | rank | no LoRA s | with LoRA s |", "|---|---|---|---|"]
        for spec in a.onnx2cl:
            label, exe = spec.split("=", 1)
            cmd = [exe, os.path.join(ARCH, "text_encoder.onnx"), "--name-map",
                   os.path.join(ARCH, "text_encoder.namemap"), "--weights-from", base, "--component",
                   "text_encoder", "--weights-only", "--weights-dtype", "f16", "-o",
                   os.path.join(a.work, "out.weights"), "--shape", "input_ids=1,77"]
            t0 = statistics.median(run(cmd) for _ in range(a.runs))
            for r in ranks:
                t = statistics.median(run(cmd + ["--lora", loras[r][0] + ":1"]) for _ in range(a.runs))
                lines.append("| %s | %d | %.2f | %.2f |" % (label, r, t0, t))
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
