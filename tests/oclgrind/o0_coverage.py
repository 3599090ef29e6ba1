#!/usr/bin/env python3
"""o0_coverage.py — proves that every kernel of the oclgrind runs with optimized programs
(O2C_OCLGRIND_OPT=1: the whole tiny UNet/VAE in the gpu class) also runs in some CI oclgrind
test at -cl-opt-disable, up to tile sizes (tests/oclgrind/CMakeLists.txt, test
oclgrind.o0_coverage). Optimized builds could hide an out-of-bounds load whose value is unused;
this keeps such a kernel from escaping the -O0 check when a lowering starts emitting a new one.

Usage: o0_coverage.py ONNX2CL WORK_DIR RUN...
  RUN = "MODE|CLASS|TILES|MODEL.onnx|ONNX2CL_FLAG|..." ('|'-separated): MODE opt or o0, CLASS
  gpu or cpu (the --kernels of that test), TILES the $ONNX2CL_GG_TILES it pins or '-'.
Compiles each RUN to C only (onnx2cl -o X.c), reads the launch table of the generated file
(kernel name and class mask: 0 shared, 1 cpu, 2 gpu) and takes the kernels that class runs.
A kernel is named without its tile part (_<TM>x<TN>x<TK>_r<RM>x<RN>): the tile constants are
macro arguments of one code path. Exit 0 when every opt kernel is in some o0 run, else 1 with
the list; 2 on a failed compile or an unreadable launch table.
"""
import os
import re
import subprocess
import sys

LAUNCH = re.compile(r'\{"(\w+)", \d, \{[\d, ]+\}, \{[\d, ]+\}, \d+, \d+,\s+"[^"]*",\s+"[^"]*", (\d)(?:, [^{}]*)?\}')
TILES = re.compile(r"_\d+x\d+x\d+_r\d+x\d+")


def kernels(onnx2cl, work, i, run):
    """The set of tile-less kernel names that RUN's class launches."""
    mode, cls, tiles, model, *flags = run.split("|")
    env = dict(os.environ)
    env.pop("ONNX2CL_GG_TILES", None)
    if tiles != "-":
        env["ONNX2CL_GG_TILES"] = tiles
    out = os.path.join(work, f"run{i}.c")
    r = subprocess.run([onnx2cl, model, "-o", out] + flags, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"o0_coverage: onnx2cl failed on {run}:\n{r.stderr}")
    src = open(out).read()
    start = src.find("_launches[] = {")
    want = {"0", "1" if cls == "cpu" else "2"}
    names = [m.group(1) for m in LAUNCH.finditer(src, start) if m.group(2) in want]
    # the banner's count, so that a launch the pattern misses cannot pass unseen
    n = re.search(r"kernel launches per inference: (\d+) with the cpu kernels, (\d+) with the gpu", src)
    if start < 0 or not n or len(names) != int(n.group(1 if cls == "cpu" else 2)):
        sys.exit(f"o0_coverage: read {len(names)} {cls} launches from {out} ({run}), its banner: "
                 f"{n.group(0) if n else 'none'}")
    return mode, {TILES.sub("", k) for k in names}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    onnx2cl, work, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    opt, o0 = [], set()
    for i, run in enumerate(runs):
        mode, ks = kernels(onnx2cl, work, i, run)
        if mode == "opt":
            opt.append((run.split("|")[3], ks))
        else:
            o0 |= ks
    bad = 0
    for model, ks in opt:
        missing = sorted(ks - o0)
        print(f"{model}: {len(ks)} kernels, {len(ks) - len(missing)} also run at -O0")
        for k in missing:
            print(f"  FAIL: {k} runs only in optimized programs: add a small graph that launches it "
                  f"to tests/oclgrind/make_graphs.py (gpu_zoo)")
        bad += len(missing)
    if not opt:
        sys.exit("o0_coverage: no opt run given")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
