#!/usr/bin/env python3
"""check_ort.py — run onnxruntime (CPU) on a model folder's inputs and compare with its references.

What it does
  For each folder given (laid out as export_sd.py writes it: model.onnx, inputs/<name>.npy,
  ref/<name>.npy), runs onnxruntime's CPU provider on inputs/*.npy and prints, per output, the
  max abs error, the max rel error and max |ref|. With --atol/--rtol it also checks
  |got - ref| <= atol + rtol * |ref| element-wise (numpy.allclose semantics) and exits 1 when an
  output fails. --save DIR writes onnxruntime's outputs as DIR/<name>.npy (e.g. to make references
  for a model without PyTorch refs); --time N reports the median run time over N runs.

Assumes
  python3 with numpy and onnxruntime; input .npy dtypes are cast to the graph's input dtypes
  (e.g. int64 ids stay int64). No torch needed.

Guarantees
  Read-only on the model folder (unless --save points into it). Exit status: 0 all within
  tolerance (or no tolerance given), 1 an output out of tolerance or missing, 2 usage/IO error.

Usage
  python3 models/check_ort.py models/tiny/unet [models/tiny/vae_decoder ...]
        [--atol 1e-4 --rtol 1e-3] [--ref-dir DIR] [--save DIR] [--time N] [--threads N]
        [--no-opt]
"""

import argparse
import glob
import os
import sys
import time

import numpy as np


def errors(got, ref):
    """max abs error, max rel error (|d| / max(|ref|, 1e-6 * max|ref|)), max |ref|.
    Rel error is taken against max(|ref|, 1e-6 max|ref|) so exact zeros in ref don't give inf."""
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    d = np.abs(got - ref)
    if d.size == 0:
        return 0.0, 0.0, 0.0
    scale = float(np.max(np.abs(ref)))
    den = np.maximum(np.abs(ref), max(scale * 1e-6, 1e-30))
    return float(d.max()), float((d / den).max()), scale


def load_dir(d):
    out = {}
    for p in sorted(glob.glob(os.path.join(d, "*.npy"))):
        out[os.path.splitext(os.path.basename(p))[0]] = np.load(p)
    return out


def check_folder(folder, args):
    import onnxruntime as ort

    model = os.path.join(folder, "model.onnx")
    if not os.path.isfile(model):
        print(f"{folder}: no model.onnx", file=sys.stderr)
        return 2
    inputs = load_dir(os.path.join(folder, "inputs"))
    refs = load_dir(args.ref_dir or os.path.join(folder, "ref"))

    so = ort.SessionOptions()
    so.log_severity_level = 3
    if args.threads:
        so.intra_op_num_threads = args.threads
    if args.no_opt:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])

    type_map = {"tensor(float)": np.float32, "tensor(float16)": np.float16,
                "tensor(double)": np.float64, "tensor(int64)": np.int64,
                "tensor(int32)": np.int32, "tensor(bool)": np.bool_}
    feeds = {}
    for gi in sess.get_inputs():
        if gi.name not in inputs:
            print(f"{folder}: graph input '{gi.name}' has no inputs/{gi.name}.npy", file=sys.stderr)
            return 2
        feeds[gi.name] = inputs[gi.name].astype(type_map.get(gi.type, inputs[gi.name].dtype))
    names = [o.name for o in sess.get_outputs()]

    t0 = time.perf_counter()
    outs = dict(zip(names, sess.run(names, feeds)))
    first = time.perf_counter() - t0

    status = 0
    print(f"{folder}: {os.path.getsize(model) / 1e6:.2f} MB model, first run {first * 1e3:.1f} ms")
    for k in names:
        got = outs[k]
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            np.save(os.path.join(args.save, k + ".npy"), got)
        if k not in refs:
            print(f"  {k}: {list(got.shape)} {got.dtype}: no reference")
            if args.atol is not None or args.rtol is not None:
                status = max(status, 1)
            continue
        ref = refs[k]
        if got.shape != ref.shape:
            print(f"  {k}: shape {list(got.shape)} != ref {list(ref.shape)}  FAIL")
            status = max(status, 1)
            continue
        a, r, s = errors(got, ref)
        line = f"  {k}: {list(got.shape)} {got.dtype}: max abs {a:.3g}, max rel {r:.3g}, " \
               f"max|ref| {s:.3g}"
        if args.atol is not None or args.rtol is not None:
            atol = args.atol or 0.0
            rtol = args.rtol or 0.0
            bad = np.abs(got.astype(np.float64) - ref) > atol + rtol * np.abs(ref.astype(np.float64))
            nbad = int(np.count_nonzero(bad)) + int(np.count_nonzero(~np.isfinite(got)))
            line += f"  [atol {atol:g} rtol {rtol:g}: " + ("ok]" if nbad == 0 else
                                                           f"{nbad} elements out, FAIL]")
            if nbad:
                status = max(status, 1)
        print(line)

    if args.time:
        ts = []
        for _ in range(args.time):
            t0 = time.perf_counter()
            sess.run(names, feeds)
            ts.append(time.perf_counter() - t0)
        print(f"  time: median {np.median(ts) * 1e3:.2f} ms, min {min(ts) * 1e3:.2f} ms "
              f"over {args.time} runs")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="model folders (model.onnx, inputs/, ref/)")
    ap.add_argument("--atol", type=float, default=None, help="absolute tolerance (check mode)")
    ap.add_argument("--rtol", type=float, default=None, help="relative tolerance (check mode)")
    ap.add_argument("--ref-dir", default=None, help="compare against DIR/*.npy instead of ref/")
    ap.add_argument("--save", default=None, help="write onnxruntime outputs to DIR/<name>.npy")
    ap.add_argument("--time", type=int, default=0, help="time N more runs")
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0 = ORT default)")
    ap.add_argument("--no-opt", action="store_true", help="disable ORT graph optimizations")
    args = ap.parse_args()
    status = 0
    for f in args.folders:
        status = max(status, check_folder(f, args))
    sys.exit(status)


if __name__ == "__main__":
    main()
