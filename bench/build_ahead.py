#!/usr/bin/env python3
"""build_ahead.py — cold first start of one compiled model with $ONNX2CL_BUILD_AHEAD=off vs on
(issue 24 item 2: PoCL compiles each kernel at its first launch; build ahead enqueues one small
launch per kernel specialization at init, on a second queue).

What: for REPS rounds, and inside each round for each mode (alternating, so machine load hits
  both alike), runs `onnx2cl-run MODEL.o2d --input ... --output NAME=FILE --verbose` with a fresh
  empty $POCL_CACHE_DIR and $ONNX2CL_CACHE_DIR (a cold start: program build, weights check and
  every kernel compile), and records the wall time of the whole process, the load average
  before and after, the kernel specializations PoCL compiled (its .so files) and init's time
  split. Outputs of every run must be bit-identical to the first one. Prints a markdown table
  and the medians per mode.
Assumes: PoCL (the CPU device); MODEL.o2d with MODEL.weights beside it.
Guarantees: writes only under a temporary folder (removed).
Usage: python3 bench/build_ahead.py --run build/onnx2cl-run --reps 3 MODEL.o2d OUTPUT_NAME \\
         NAME=FILE.npy [NAME=FILE.npy ...]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import tempfile
import time


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def one(run, o2d, inputs, out_name, mode, tmp, tag):
    d = tempfile.mkdtemp(prefix=tag + ".", dir=tmp)
    out = os.path.join(d, "out.npy")
    env = dict(os.environ, POCL_CACHE_DIR=os.path.join(d, "pocl"),
               ONNX2CL_CACHE_DIR=os.path.join(d, "o2c"), ONNX2CL_BUILD_AHEAD=mode)
    cmd = [run, o2d] + [a for i in inputs for a in ("--input", i)]
    cmd += ["--output", f"{out_name}={out}", "--verbose"]
    la0 = loadavg()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    la1 = loadavg()
    if p.returncode != 0:
        raise SystemExit(f"{mode}: exit {p.returncode}\n{p.stderr[-3000:]}")
    nso = sum(f.endswith(".so") for _, _, fs in os.walk(env["POCL_CACHE_DIR"]) for f in fs)
    m = re.search(r"init ([0-9.]+) ms", p.stderr)
    with open(out, "rb") as f:
        data = f.read()
    ahead = re.search(r"building its (\d+) kernels ahead", p.stderr)
    subprocess.run(["rm", "-rf", d])
    return {"mode": mode, "wall": wall, "cpu": cpu, "load0": la0, "load1": la1, "so": nso,
            "init": float(m.group(1)) / 1000 if m else float("nan"),
            "ahead": int(ahead.group(1)) if ahead else 0, "out": data}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", default="build/onnx2cl-run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="off,on")
    ap.add_argument("o2d")
    ap.add_argument("output")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    modes = a.modes.split(",")
    rows, ref = [], None
    with tempfile.TemporaryDirectory(prefix="o2c_build_ahead_") as tmp:
        for r in range(a.reps):
            for mode in (modes if r % 2 == 0 else modes[::-1]):
                x = one(a.run, a.o2d, a.inputs, a.output, mode, tmp, f"{mode}{r}")
                if ref is None:
                    ref = x["out"]
                x["same"] = x["out"] == ref
                rows.append(x)
                print(f"round {r + 1} {mode}: {x['wall']:.1f} s, init {x['init']:.1f} s, "
                      f"after init {x['wall'] - x['init']:.1f} s, CPU {x['cpu']:.1f} s, "
                      f"load {x['load0']} -> {x['load1']}, {x['so']} kernels compiled, "
                      f"ahead {x['ahead']}, output {'identical' if x['same'] else 'DIFFERS'}",
                      flush=True)
    print("\n| round | mode | first start wall | init | wall after init | CPU (user+sys) | "
          "load avg before -> after | kernels compiled | warm-up launches | output |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, x in enumerate(rows):
        print(f"| {i // len(modes) + 1} | {x['mode']} | {x['wall']:.1f} s | {x['init']:.1f} s | "
              f"{x['wall'] - x['init']:.1f} s | {x['cpu']:.1f} s | "
              f"{x['load0']} -> {x['load1']} | {x['so']} | {x['ahead']} | "
              f"{'identical' if x['same'] else 'DIFFERS'} |")
    print()
    for mode in modes:
        w = [x["wall"] for x in rows if x["mode"] == mode]
        a = [x["wall"] - x["init"] for x in rows if x["mode"] == mode]
        c = [x["cpu"] for x in rows if x["mode"] == mode]
        print(f"- {mode}: first start median {statistics.median(w):.1f} s (min {min(w):.1f}, "
              f"max {max(w):.1f}, n={len(w)}); after init median {statistics.median(a):.1f} s; "
              f"CPU median {statistics.median(c):.1f} s")
    if not all(x["same"] for x in rows):
        raise SystemExit("outputs differ")


if __name__ == "__main__":
    main()
