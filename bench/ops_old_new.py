#!/usr/bin/env python3
"""ops_old_new.py — one op at Stable Diffusion shapes, two onnx2cl builds, side by side.

Writes single-node ONNX models (GroupNormalization-21 + SiLU, which onnx2cl fuses into
o2c.GroupNorm; Resize nearest 2x asymmetric/floor, the SD / VAE / TAESD upsample) into WORK,
compiles each with the OLD and the NEW onnx2cl (`-o`, executables), then runs them in
alternating rounds (old, new per model per round; `--bench 5 --profile`) and prints a markdown
table: the kernels launched, the median over the rounds of the `--profile` total device time
and of the `--bench` median wall time, and old/new. Inputs: N(0.5, 2) float32, fixed seed.
Needs numpy and onnx (no onnxruntime, no torch).

  python3 bench/ops_old_new.py OLD_ONNX2CL NEW_ONNX2CL [--rounds 3] [--work DIR] [--only a,b]
"""
import argparse
import os
import re
import statistics
import subprocess

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

# name: (kind, input shape, groups or scale)
CASES = {
    "gn_1x128x512x512": ("gn", (1, 128, 512, 512), 32),  # VAE decoder, last up block
    "gn_1x256x256x256": ("gn", (1, 256, 256, 256), 32),
    "gn_1x512x128x128": ("gn", (1, 512, 128, 128), 32),
    "gn_1x512x64x64": ("gn", (1, 512, 64, 64), 32),  # VAE mid block
    "gn_2x320x64x64": ("gn", (2, 320, 64, 64), 32),  # UNet, batch 2 (CFG)
    "gn_2x1280x8x8": ("gn", (2, 1280, 8, 8), 32),
    "gn_1x32x8x8": ("gn", (1, 32, 8, 8), 8),  # tiny
    "gn_1x64x256x256_G1": ("gn", (1, 64, 256, 256), 1),  # one group: the cpu class splits it
    "resize2x_1x64x256x256": ("rs", (1, 64, 256, 256), 2),  # TAESD last upsample
    "resize2x_1x512x64x64": ("rs", (1, 512, 64, 64), 2),
    "resize2x_1x512x128x128": ("rs", (1, 512, 128, 128), 2),
}


def make(d, kind, shape, p):
    rng = np.random.default_rng(0)
    x = oh.make_tensor_value_info("x", TP.FLOAT, list(shape))
    y = oh.make_tensor_value_info("y", TP.FLOAT, None)
    if kind == "gn":
        C = shape[1]
        inits = [nh.from_array((1 + 0.1 * rng.standard_normal(C)).astype(np.float32), "g"),
                 nh.from_array((0.1 * rng.standard_normal(C)).astype(np.float32), "b")]
        nodes = [oh.make_node("GroupNormalization", ["x", "g", "b"], ["n"], num_groups=p, epsilon=1e-5),
                 oh.make_node("Sigmoid", ["n"], ["s"]), oh.make_node("Mul", ["n", "s"], ["y"])]
        opset = 21
    else:
        inits = [nh.from_array(np.array([1, 1, p, p], np.float32), "sc")]
        nodes = [oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor")]
        opset = 17
    m = oh.make_model(oh.make_graph(nodes, "op", [x], [y], inits),
                      opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 8
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "x.npy"), (2 * rng.standard_normal(shape) + 0.5).astype(np.float32))


def run(exe, d):
    out = subprocess.run([exe, "--input", "x=" + os.path.join(d, "x.npy"), "--bench", "5",
                          "--profile"], capture_output=True, text=True, check=True).stdout
    dev = float(re.search(r"launches, ([0-9.]+) ms total device time", out).group(1))
    wall = float(re.search(r"median ([0-9.]+) ms", out).group(1))
    kernels = sorted(set(re.findall(r"\s([a-z]\w+_(?:f32|u32))\s", out)))
    return dev, wall, kernels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="/tmp/ops_old_new")
    ap.add_argument("--only", default="", help="comma list of case names")
    a = ap.parse_args()
    names = [n for n in CASES if not a.only or n in a.only.split(",")]
    for n in names:
        d = os.path.join(a.work, n)
        make(d, *CASES[n])
        for v, exe in (("old", a.old), ("new", a.new)):
            subprocess.run([exe, os.path.join(d, "model.onnx"), "-o", os.path.join(d, v)],
                           check=True, capture_output=True)
    res = {}
    for _ in range(a.rounds):
        for n in names:
            for v in ("old", "new"):
                dev, wall, ks = run(os.path.join(a.work, n, v), os.path.join(a.work, n))
                r = res.setdefault((n, v), {"dev": [], "wall": [], "k": ks})
                r["dev"].append(dev)
                r["wall"].append(wall)
    print("| case | old kernels | new kernels | old device ms | new device ms | old/new | "
          "old wall ms | new wall ms |")
    print("|---|---|---|---|---|---|---|---|")
    for n in names:
        o, w = res[(n, "old")], res[(n, "new")]
        od, nd = statistics.median(o["dev"]), statistics.median(w["dev"])
        print(f"| {n} | {' '.join(o['k'])} | {' '.join(w['k'])} | {od:.3f} | {nd:.3f} | "
              f"{od / nd:.1f}x | {statistics.median(o['wall']):.2f} | "
              f"{statistics.median(w['wall']):.2f} |")


if __name__ == "__main__":
    main()
