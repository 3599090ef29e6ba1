#!/usr/bin/env python3
"""torch_ref.py — the same SD 1.5 model in PyTorch on the same GPU, for bench/gpu/run.sh.

What it does
  Builds one model exactly as models/export_sd.py does (same config, same seed, same re-init, so
  the weights are those of the ONNX file onnx2cl compiled) and the same inputs, moves it to CUDA
  and times one inference in three modes, each the median of --runs timed runs after two
  warm-ups, timed with CUDA events:
      fp32        float32, TF32 off for matmul and cuDNN convolutions (what onnx2cl computes)
      fp32_tf32   float32 with PyTorch's defaults (cuDNN convolutions may use TF32)
      fp16        module.half(), float16 inputs
  FLOPs per inference: torch.utils.flop_counter.FlopCounterMode on one fp32 run (matmul, conv,
  attention; elementwise work is not counted). Max abs error of each mode's output against the
  CPU float32 reference export_sd.py saved (ref/*.npy of --models-dir).

Writes --out (JSON): device name, torch version, flops, and per mode ms_median, ms_min, runs,
max_abs_err, max_abs_ref.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))
import export_sd  # noqa: E402  (the builders, configs and seeds of the exported models)


def time_module(module, args, runs):
    """Median and min ms of `runs` timed calls after 2 warm-ups (CUDA events)."""
    with torch.no_grad():
        for _ in range(2):
            module(*args)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            out = module(*args)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
    if isinstance(out, torch.Tensor):
        out = (out,)
    return float(np.median(times)), float(min(times)), [o.float().cpu().numpy() for o in out]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=list(export_sd.BUILDERS))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=export_sd.DEFAULT_SEED)
    ap.add_argument("--models-dir", default="/tmp/o2c_gpu/models/full",
                    help="folder with <model>/ref/*.npy written by export_sd.py")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    t0 = time.time()
    rng = np.random.default_rng(args.seed)
    module, inputs, out_names, _, _ = export_sd.BUILDERS[args.model]("full", args.seed, rng)
    dev = torch.device("cuda")
    module = module.to(dev).eval()
    targs = [torch.from_numpy(v).to(dev) for v in inputs.values()]
    refs = []
    for n in out_names:
        p = os.path.join(args.models_dir, args.model, "ref", n + ".npy")
        refs.append(np.load(p) if os.path.exists(p) else None)
    res = {"model": args.model, "device": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "modes": {}}
    from torch.utils.flop_counter import FlopCounterMode
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        module(*targs)
    res["flops"] = int(fc.get_total_flops())
    for mode in ("fp32", "fp32_tf32", "fp16"):
        torch.backends.cudnn.allow_tf32 = mode == "fp32_tf32"
        m, a = module, targs
        if mode == "fp16":
            m = module.half()
            a = [t.half() if t.is_floating_point() else t for t in targs]
        med, mn, outs = time_module(m, a, args.runs)
        errs = [float(np.max(np.abs(o - r))) if r is not None and o.shape == r.shape else None
                for o, r in zip(outs, refs)]
        res["modes"][mode] = {
            "ms_median": med, "ms_min": mn, "runs": args.runs,
            "max_abs_err": max([e for e in errs if e is not None], default=None),
            "max_abs_ref": max([float(np.max(np.abs(r))) for r in refs if r is not None],
                               default=None),
            "tflops": res["flops"] / med / 1e9 if med > 0 else None,
        }
        print(f"[torch {args.model}] {mode}: median {med:.2f} ms (min {mn:.2f}), "
              f"max abs err {res['modes'][mode]['max_abs_err']}", flush=True)
    res["seconds"] = time.time() - t0
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
