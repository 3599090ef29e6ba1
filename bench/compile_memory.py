#!/usr/bin/env python3
"""compile_memory.py — peak host memory and wall time of compiling the full SD 1.5 UNet.

What it measures (dev machine; never CI): `onnx2cl` compiling SD 1.5's UNet (859,520,964
parameters, 3.44 GB of float32 weights) the ways users meet it, each under /usr/bin/time -v
(peak RSS = "Maximum resident set size", wall time), one after the other:
  ckpt-f32 / ckpt-f16   models/arch/sd15/unet.onnx --name-map ... --weights-from CKPT --component
                        unet --weights-dtype f32|f16 -o X.o2d (what pipeline/sd_engine.c runs);
  plain-f32 / plain-f16 the same graph as a self-contained ONNX file whose initializers are external
                        data (the export form of a > 2 GB model): `onnx2cl unet.onnx -o X.o2d`;
  inline-f32            (--inline MODEL, optional) a < 2 GB graph with its weights inside the .onnx.
For each: peak RSS, the checkpoint's / model's weight bytes, peak / weights, the weights file's
bytes, wall time, the load average at its start, and (ONNX2CL_MEMTRACE=1) the resident memory
onnx2cl reports after each phase, anonymous and file-mapped apart (file pages of the mapped
checkpoint are page cache: clean, shared, evictable; anonymous memory is what the compiler holds).

Inputs it makes when missing (under --work, never in the repository; ~7 GB):
  CKPT: a diffusers UNet folder `sd15/unet/diffusion_pytorch_model.safetensors` (float32) from
        diffusers' UNet2DConditionModel with models/arch/sd15/arch.json's config and fixed-seed
        random weights (torch + diffusers);
  the plain ONNX: models/arch/sd15/unet.onnx with every placeholder initializer pointed at one
        external data file written from CKPT through the name map (copy / reshape / transpose).

Usage
  python3 bench/compile_memory.py [--onnx2cl build/onnx2cl] [--work /work/bench-data]
      [--runs ckpt-f32,ckpt-f16,plain-f32,plain-f16] [--md bench/results/compile-memory-DATE.md]
      [--keep] (keep the outputs; default: the .o2d/.weights of each run are removed after it)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARCH = os.path.join(ROOT, "models", "arch", "sd15")
SHAPES = ["--shape", "sample=2,4,64,64", "--shape", "encoder_hidden_states=2,77,768"]


def make_checkpoint(path):
    import torch
    from diffusers import UNet2DConditionModel
    from safetensors.torch import save_file
    cfg = json.load(open(os.path.join(ARCH, "arch.json")))["configs"]["unet"]
    torch.manual_seed(42)
    with torch.no_grad():
        m = UNet2DConditionModel(**cfg)
    sd = {k: v.contiguous() for k, v in m.state_dict().items()}
    del m
    os.makedirs(os.path.dirname(path), exist_ok=True)
    save_file(sd, path + ".tmp", metadata={"format": "pt"})
    os.replace(path + ".tmp", path)


def make_plain(ckpt, out_dir):
    """unet.onnx + unet.bin (external data) from the weight-free graph, its name map and ckpt."""
    import numpy as np
    import onnx
    from safetensors import safe_open
    model = onnx.load(os.path.join(ARCH, "unet.onnx"), load_external_data=False)
    rows = {}
    for line in open(os.path.join(ARCH, "unet.namemap")):
        if line.startswith("#") or not line.strip():
            continue
        init, comp, keys, tr = line.rstrip("\n").split("\t")
        rows[init] = (keys, tr)
    os.makedirs(out_dir, exist_ok=True)
    off = 0
    with safe_open(ckpt, "np") as f, open(os.path.join(out_dir, "unet.bin"), "wb") as out:
        for t in model.graph.initializer:
            if t.data_location != onnx.TensorProto.EXTERNAL:
                continue
            keys, tr = rows[t.name]
            assert tr in ("copy", "reshape", "transpose") and "," not in keys, (t.name, tr)
            a = f.get_tensor(keys).astype(np.float32)
            if tr == "transpose":
                a = a.T
            a = np.ascontiguousarray(a.reshape(tuple(t.dims)))
            pad = (-off) % 64
            out.write(b"\0" * pad)
            off += pad
            out.write(a.tobytes())
            del t.external_data[:]
            for k, v in (("location", "unet.bin"), ("offset", str(off)), ("length", str(a.nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            off += a.nbytes
    onnx.save(model, os.path.join(out_dir, "unet.onnx"))


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def run(name, argv, work, weights_bytes, keep):
    out = os.path.join(work, "out", name + ".o2d")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    env = dict(os.environ, ONNX2CL_MEMTRACE="1")
    load = loadavg()
    t0 = time.time()
    p = subprocess.run(["/usr/bin/time", "-v"] + argv + ["-o", out], env=env,
                       capture_output=True, text=True)
    wall = time.time() - t0
    if p.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (name, p.returncode, p.stderr[-3000:]))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) * 1024
    phases = re.findall(r"memory after (\S+): VmHWM: (\d+) MiB VmRSS: (\d+) MiB RssAnon: (\d+) MiB "
                        r"RssFile: (\d+) MiB", p.stderr)
    wfile = out[:-4] + ".weights"
    wsize = os.path.getsize(wfile)
    if not keep:
        for f in (out, wfile):
            os.remove(f)
    return {"name": name, "argv": " ".join(argv[1:]), "peak_rss": rss, "weights": weights_bytes,
            "ratio": rss / weights_bytes, "weights_file": wsize, "wall_s": wall, "load": load,
            "anon_peak_mib": max([int(x[3]) for x in phases] or [0]), "phases": phases}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx2cl", default=os.path.join(ROOT, "build", "onnx2cl"))
    ap.add_argument("--work", default="/work/bench-data")
    ap.add_argument("--runs", default="ckpt-f32,ckpt-f16,plain-f32,plain-f16")
    ap.add_argument("--md")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    ckpt = os.path.join(a.work, "sd15", "unet", "diffusion_pytorch_model.safetensors")
    if not os.path.exists(ckpt):
        print("making", ckpt, file=sys.stderr)
        make_checkpoint(ckpt)
    hdr = json.loads(open(ckpt, "rb").read(8 + int.from_bytes(open(ckpt, "rb").read(8), "little"))[8:])
    wbytes = sum(v["data_offsets"][1] - v["data_offsets"][0] for k, v in hdr.items() if k != "__metadata__")
    plain = os.path.join(a.work, "plain")
    runs = a.runs.split(",")
    if any(r.startswith("plain") for r in runs) and not os.path.exists(os.path.join(plain, "unet.onnx")):
        print("making", plain, file=sys.stderr)
        make_plain(ckpt, plain)
    res = []
    for r in runs:
        kind, dt = r.split("-")
        if kind == "ckpt":
            argv = [a.onnx2cl, os.path.join(ARCH, "unet.onnx"), "--name-map",
                    os.path.join(ARCH, "unet.namemap"), "--weights-from", ckpt, "--component", "unet"]
        else:
            argv = [a.onnx2cl, os.path.join(plain, "unet.onnx")]
        argv += ["--weights-dtype", dt] + SHAPES
        res.append(run(r, argv, a.work, wbytes, a.keep))
        x = res[-1]
        print("%-10s peak RSS %6.0f MiB (%.2fx the %.0f MiB of weights; anonymous at most %d MiB), "
              "weights file %.0f MiB, %.1f s wall, load %s" %
              (r, x["peak_rss"] / 2**20, x["ratio"], wbytes / 2**20, x["anon_peak_mib"],
               x["weights_file"] / 2**20, x["wall_s"], x["load"]), flush=True)
    if a.md:
        with open(a.md, "w") as f:
            f.write("# Compile memory: full SD 1.5 UNet (%s)\n\n" % time.strftime("%Y-%m-%d"))
            f.write("`python3 bench/compile_memory.py` (onnx2cl %s); weights = the checkpoint's %d bytes "
                    "(float32); shapes %s.\n\n" % (a.onnx2cl, wbytes, " ".join(SHAPES[1::2])))
            f.write("| run | peak RSS (MiB) | peak / weights | anonymous peak (MiB) | weights file (bytes) "
                    "| wall (s) | load avg at start |\n|---|---|---|---|---|---|---|\n")
            for x in res:
                f.write("| %s | %.0f | %.2f | %d | %d | %.1f | %s |\n" %
                        (x["name"], x["peak_rss"] / 2**20, x["ratio"], x["anon_peak_mib"],
                         x["weights_file"], x["wall_s"], x["load"]))
            f.write("\nCommands (each with `-o OUT.o2d`):\n\n")
            for x in res:
                f.write("- %s: `onnx2cl %s`\n" % (x["name"], x["argv"]))
            f.write("\nResident memory after each phase (ONNX2CL_MEMTRACE=1; MiB: peak, now, anonymous, "
                    "file-mapped):\n\n")
            for x in res:
                f.write("- %s: %s\n" % (x["name"], "; ".join("%s %s/%s/%s/%s" % p for p in x["phases"]
                                                            if p[0] in ("onnx_load", "weights_from", "dce",
                                                                        "elementwise", "cg_build",
                                                                        "write_weights"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
