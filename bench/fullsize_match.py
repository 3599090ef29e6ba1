#!/usr/bin/env python3
"""fullsize_match.py — one model of a full-size architecture folder (models/arch/<arch>) against
PyTorch at its real size, with fixed-seed random weights (issue 23's full-size proof; dev check:
torch + diffusers + transformers, never CI).

What: builds the model as models/make_arch.py does (`build(arch, model, seed)`: the published
  config, export_sd.reinit's random weights, the export's example inputs), rounds every weight to
  float16 (so the checkpoint holds them exactly), writes the component's canonical keys as one F16
  safetensors file (streamed, one tensor at a time), runs the module in float32 on the inputs
  (the reference), frees it, then compiles models/arch/<arch>/<model>.onnx with
  `onnx2cl --name-map ... --weights-from CKPT --component C --weights-dtype f16` and runs it with
  `onnx2cl-run`, and compares every output (max abs error, max error / max |ref|). Prints one
  markdown table row per output plus the times and peak memory of each step.
Assumes: enough memory for the float32 module (SDXL UNet 10.3 GB, SD 3.5 medium 9.9 GB).
Guarantees: writes only under --work (default: a new temporary folder, removed unless --keep).
Usage: python3 bench/fullsize_match.py --arch sdxl --model unet [--onnx2cl build/onnx2cl]
         [--run build/onnx2cl-run] [--work DIR] [--keep] [--shape NAME=D0,D1,..]
"""
import argparse
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "models"))
import export_sd  # noqa: E402
import make_arch  # noqa: E402
import name_map  # noqa: E402


def write_f16_safetensors(path, tensors):
    """tensors: [(key, torch tensor)] written as F16, one at a time (no second copy in memory)."""
    header, off = {}, 0
    for k, t in tensors:
        n = t.numel() * 2
        header[k] = {"dtype": "F16", "shape": list(t.shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, t in tensors:
            f.write(t.detach().to(torch.float16).contiguous().numpy().tobytes())


def peak_children_mib():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--onnx2cl", default=os.path.join(ROOT, "build", "onnx2cl"))
    ap.add_argument("--run", default=os.path.join(ROOT, "build", "onnx2cl-run"))
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--seed", type=int, default=export_sd.DEFAULT_SEED)
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    work = args.work or tempfile.mkdtemp(prefix="fullsize_match_")
    os.makedirs(work, exist_ok=True)
    try:
        t0 = time.time()
        module, ins, outs, _, comp = make_arch.build(args.arch, args.model, args.seed)
        module.eval()
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(p.half().float())
        cm = name_map.component_module(module)
        keys = make_arch._canonical_keys(module, cm, comp)
        params = dict(module.named_parameters(remove_duplicate=False))
        params.update(module.named_buffers())
        seen, tensors = set(), []
        for n, k in sorted(keys.items(), key=lambda x: x[1]):
            if k not in seen:
                seen.add(k)
                tensors.append((k, params[n]))
        ckpt = os.path.join(work, comp + ".safetensors")
        write_f16_safetensors(ckpt, tensors)
        nparams = sum(t.numel() for _, t in tensors)
        t_build = time.time() - t0
        for k, v in ins.items():
            np.save(os.path.join(work, k + ".npy"), v.numpy())
        t0 = time.time()
        with torch.no_grad():
            ref = module(*[ins[k] for k in ins])
        t_torch = time.time() - t0
        ref = ref if isinstance(ref, (tuple, list)) else (ref,)
        refs = {o: r.numpy() for o, r in zip(outs, ref)}
        del module, cm, params, tensors, ref
        import gc
        gc.collect()
        adir = os.path.join(ROOT, "models", "arch", args.arch)
        o2d = os.path.join(work, args.model + ".o2d")
        cmd = [args.onnx2cl, os.path.join(adir, args.model + ".onnx"), "--name-map",
               os.path.join(adir, args.model + ".namemap"), "--weights-from", ckpt,
               "--component", comp, "--weights-dtype", "f16", "-o", o2d]
        for k, v in ins.items():
            cmd += ["--shape", f"{k}={','.join(str(d) for d in v.shape)}"]
        t0 = time.time()
        subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, check=True,
                       stderr=open(os.path.join(work, "compile.err"), "w"))
        t_compile = time.time() - t0
        compile_rss = int(open(os.path.join(work, "compile.err")).read().split()[-1]) / 1024
        cmd = [args.run, o2d]
        for k in ins:
            cmd += ["--input", f"{k}={os.path.join(work, k + '.npy')}"]
        for o in outs:
            cmd += ["--output", f"{o}={os.path.join(work, 'out_' + o + '.npy')}"]
        t0 = time.time()
        subprocess.run(cmd + ["--verbose"], check=True)
        t_run = time.time() - t0
        print(f"\n{args.arch}/{args.model}: {nparams:,} parameters; inputs "
              + ", ".join(f"{k} {list(v.shape)}" for k, v in ins.items()))
        print(f"build + checkpoint {t_build:.1f} s, PyTorch float32 forward {t_torch:.1f} s "
              f"(peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB), "
              f"onnx2cl compile {t_compile:.1f} s (peak RSS {compile_rss:,.0f} MiB), "
              f"onnx2cl-run (cold: program, weights, first run) {t_run:.1f} s\n")
        print("| output | shape | max abs err | max err / max abs ref | max abs ref |")
        print("|---|---|---:|---:|---:|")
        worst = 0.0
        for o in outs:
            got = np.load(os.path.join(work, "out_" + o + ".npy"))
            r = refs[o]
            err = float(np.max(np.abs(got.astype(np.float64) - r)))
            scale = float(np.max(np.abs(r)))
            worst = max(worst, err / max(scale, 1e-30))
            print(f"| {o} | {list(r.shape)} | {err:.3g} | {err / max(scale, 1e-30):.3g} | {scale:.3g} |")
        return 0 if worst < 1e-3 else 1
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
