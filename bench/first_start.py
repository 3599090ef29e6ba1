#!/usr/bin/env python3
"""first_start.py — first start (cold caches) and second start of compiled models, two program
cache policies side by side in the same run.

What: compiles each model once with onnx2cl (--kernels class chosen at run time), then for REPS
  rounds and for each policy (ONNX2CL_CACHE=always: onnx2cl stores the program binary, the
  behaviour before 2026-12-01; auto: on PoCL only PoCL's own kernel cache keeps the build) runs
  the executable with empty XDG_CACHE_HOME and POCL_CACHE_DIR (first start), then again
  (second start). Reports medians of: init before the first kernel ("init X ms" of --verbose),
  wall time of the whole first run (init + run, where PoCL compiles each kernel at its first
  launch), and the second start's init and wall time. Policies alternate inside each round so
  that machine load hits both alike.
Assumes: run from the repository root; ONNX2CL (default build/onnx2cl) built; PoCL or another
  OpenCL device; models/tiny/* committed with their inputs.
Guarantees: writes only under a temporary folder (removed) and --out when given.
Usage: python3 bench/first_start.py [--reps 3] [--kernels cpu] [--out FILE.md] [MODEL ...]
  MODEL is one of: unet, vae_decoder, text_encoder (default: all three).
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

SHAPES = {
    "unet": ["sample=1,4,16,16", "encoder_hidden_states=1,77,32"],
    "vae_decoder": ["latent_sample=1,4,8,8"],
    "text_encoder": ["input_ids=1,77"],
}
POLICIES = ["always", "auto"]


def run_once(exe, args, env):
    t0 = time.monotonic()
    p = subprocess.run([exe] + args + ["--verbose"], env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"{exe} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    m = re.search(r"init ([0-9.]+) ms", p.stderr)
    if not m:
        raise SystemExit(f"{exe}: no 'init X ms' line in --verbose output:\n{p.stderr[-2000:]}")
    return float(m.group(1)) / 1000.0, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=list(SHAPES))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--kernels", default="cpu", choices=["cpu", "gpu", "auto"])
    ap.add_argument("--onnx2cl", default="build/onnx2cl")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="o2c_first_start_") as tmp:
        for name in a.models:
            if name not in SHAPES:
                raise SystemExit(f"unknown model {name!r} (known: {', '.join(SHAPES)})")
            mdir = f"models/tiny/{name}"
            exe = f"{tmp}/{name}"
            cmd = [a.onnx2cl, f"{mdir}/model.onnx", "-o", exe]
            for s in SHAPES[name]:
                cmd += ["--shape", s]
            subprocess.run(cmd, check=True, capture_output=True)
            args = ["--kernels", a.kernels]
            for f in sorted(os.listdir(f"{mdir}/inputs")):
                args += ["--input", f"{f[:-4]}={mdir}/inputs/{f}"]
            res = {p: {"init1": [], "wall1": [], "init2": [], "wall2": []} for p in POLICIES}
            for r in range(a.reps):
                for pol in POLICIES if r % 2 == 0 else POLICIES[::-1]:
                    cache = tempfile.mkdtemp(dir=tmp)
                    env = dict(os.environ, ONNX2CL_CACHE=pol, XDG_CACHE_HOME=f"{cache}/xdg",
                               POCL_CACHE_DIR=f"{cache}/pocl")
                    env.pop("ONNX2CL_CACHE_DIR", None)
                    env.pop("ONNX2CL_NO_CACHE", None)
                    i1, w1 = run_once(exe, args, env)
                    i2, w2 = run_once(exe, args, env)
                    for k, v in (("init1", i1), ("wall1", w1), ("init2", i2), ("wall2", w2)):
                        res[pol][k].append(v)
            for pol in POLICIES:
                med = {k: statistics.median(v) for k, v in res[pol].items()}
                rows.append((name, pol, med))
    load = os.getloadavg()
    out = [f"First start (empty XDG_CACHE_HOME and POCL_CACHE_DIR) and second start, tiny models,"
           f" --kernels {a.kernels}, medians of {a.reps} rounds; load average at the end "
           f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
           f"(`python3 bench/first_start.py --reps {a.reps} --kernels {a.kernels}`)", "",
           "| model | ONNX2CL_CACHE | first start: init before the first kernel | first run wall "
           "(init + first-launch compiles + run) | second start: init | second start wall |",
           "|---|---|---|---|---|---|"]
    for name, pol, m in rows:
        out.append(f"| {name} | {pol} | {m['init1']:.2f} s | {m['wall1']:.1f} s | "
                   f"{m['init2'] * 1000:.0f} ms | {m['wall2']:.2f} s |")
    text = "\n".join(out) + "\n"
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
