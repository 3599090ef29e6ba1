#!/usr/bin/env python3
"""report.py — turns bench/gpu/run.sh's work folder into report.md + report.json.

Reads, per model: the export's meta.json and ref/*.npy, onnx2cl's --stats-json, the logs of the
first start (cold program cache) and of the timed run (--verbose, --bench, --profile), the
outputs the first start wrote, and torch_ref.py's JSON. Computes ms per inference, TFLOP/s (the
FLOPs PyTorch's FlopCounterMode counted on the same model), % of the H200's 67 TFLOP/s fp32
(non-tensor-core) peak, the ratio to PyTorch fp32 eager, the per-op-kind profile, and the max
error of onnx2cl's outputs against the PyTorch fp32 CPU reference. Missing pieces (a step that
failed or ran out of time) are reported as such, never invented.
"""
import argparse
import glob
import json
import os
import re

import numpy as np

PEAK_FP32_TFLOPS = 67.0  # H200 SXM datasheet, fp32 without tensor cores

INIT_RE = re.compile(r"init ([\d.]+) ms \(program (from cache|build) ([\d.]+) ms, weights ([\d.]+) ms\)")
BENCH_RE = re.compile(r"median ([\d.]+) ms, min ([\d.]+) ms over (\d+) runs")
KERN_RE = re.compile(r"^kernels: (.*)$", re.M)
PROF_HDR = re.compile(r"^op\s+launches\s+total ms", re.M)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def load_json(path):
    t = read(path)
    try:
        return json.loads(t) if t else None
    except ValueError:
        return None


def profile_rows(text):
    """(op, launches, total_ms, pct) rows of o2r_model_print_profile's per-op table."""
    rows = []
    if not text:
        return rows
    m = PROF_HDR.search(text)
    if not m:
        return rows
    for line in text[m.end():].splitlines()[1:]:
        p = line.split()
        if len(p) < 5 or line.startswith("top "):
            break
        try:
            rows.append((p[0], int(p[1]), float(p[2]), float(p[3].rstrip("%"))))
        except ValueError:
            break
    return rows


def out_errors(out_dir, ref_dir):
    """max abs error and max |ref| over every output; None if an output is missing."""
    worst, scale, n = 0.0, 0.0, 0
    for r in sorted(glob.glob(os.path.join(ref_dir, "*.npy"))):
        o = os.path.join(out_dir, os.path.basename(r))
        if not os.path.exists(o):
            return None
        a, b = np.load(o).astype(np.float64), np.load(r).astype(np.float64)
        if a.shape != b.shape:
            return None
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
        scale = max(scale, float(np.max(np.abs(b))) if b.size else 0.0)
        n += 1
    return {"max_abs_err": worst, "max_abs_ref": scale, "outputs": n} if n else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--kernels", default="auto")
    a = ap.parse_args()
    W = a.work
    steps = {}
    for line in (read(os.path.join(W, "steps.txt")) or "").splitlines():
        p = line.split()
        if len(p) == 3:
            steps[p[0]] = {"exit": int(p[1]), "seconds": int(p[2])}
    rep = {"gpu": (read(os.path.join(W, "gpu.txt")) or "").strip(),
           "devices": (read(os.path.join(W, "devices.txt")) or "").strip(),
           "steps": steps, "models": {}}
    md = ["# onnx2cl on the lent GPU (bench/gpu/run.sh)", "",
          "```", rep["gpu"], "```", "", "`onnx2cl --list-devices`:", "```",
          rep["devices"] or "(no output)", "```", ""]
    for m in a.models.split():
        d = os.path.join(W, "models", "full", m)
        meta = load_json(os.path.join(d, "meta.json")) or {}
        stats = load_json(os.path.join(W, m, "stats.json")) or {}
        torch = load_json(os.path.join(W, f"torch_{m}.json")) or {}
        flops = torch.get("flops")
        r = {"params": meta.get("params_in_graph"), "flops": flops,
             "launches_cpu": stats.get("kernel_launches"),
             "launches_gpu": stats.get("kernel_launches_gpu"),
             "arena_bytes": stats.get("arena_bytes"), "weights_bytes": stats.get("weights_bytes"),
             "compile_seconds": stats.get("compile_seconds"), "onnx2cl": {}, "torch": torch}
        md += [f"## {m}", "",
               f"params {r['params']}, FLOPs per inference {flops} (torch FlopCounterMode), "
               f"launches {r['launches_cpu']} (cpu kernels) / {r['launches_gpu']} (gpu kernels), "
               f"arena {r['arena_bytes']} B, weights {r['weights_bytes']} B, onnx2cl compile "
               f"{r['compile_seconds']} s", ""]
        tfp32 = ((torch.get("modes") or {}).get("fp32") or {}).get("ms_median")
        md += ["| run | ms/inference (median) | min | TFLOP/s | % of 67 | vs PyTorch fp32 | "
               "max abs err vs PyTorch fp32 CPU (max abs ref) | first start: init (program build) | second start: init |",
               "|---|---:|---:|---:|---:|---:|---|---|---|"]
        for k in a.kernels.split():
            first = read(os.path.join(W, f"first_{m}_{k}.log")) or ""
            run = read(os.path.join(W, f"run_{m}_{k}.log")) or ""
            fi, ri, b = INIT_RE.search(first), INIT_RE.search(run), BENCH_RE.search(run)
            kern = KERN_RE.search(first)
            err = out_errors(os.path.join(W, m, f"out_{k}"), os.path.join(d, "ref"))
            ms = float(b.group(1)) if b else None
            o = {"kernels": kern.group(1) if kern else None,
                 "first_init_ms": float(fi.group(1)) if fi else None,
                 "first_program_ms": float(fi.group(3)) if fi else None,
                 "second_init_ms": float(ri.group(1)) if ri else None,
                 "ms_median": ms, "ms_min": float(b.group(2)) if b else None,
                 "runs": int(b.group(3)) if b else None, "errors": err,
                 "profile": profile_rows(run),
                 "tflops": flops / ms / 1e9 if flops and ms else None,
                 "first_exit": steps.get(f"first_{m}_{k}", {}).get("exit"),
                 "run_exit": steps.get(f"run_{m}_{k}", {}).get("exit")}
            r["onnx2cl"][k] = o

            def f(x, fmt="{:.2f}"):
                return fmt.format(x) if x is not None else "—"
            md.append(f"| onnx2cl --kernels {k} | {f(ms)} | {f(o['ms_min'])} | {f(o['tflops'])} | "
                      f"{f(o['tflops'] and 100 * o['tflops'] / PEAK_FP32_TFLOPS, '{:.1f}')} | "
                      f"{f(ms / tfp32 if ms and tfp32 else None)}x | "
                      f"{f(err and err['max_abs_err'], '{:.2e}')} ({f(err and err['max_abs_ref'], '{:.3g}')}) | "
                      f"{f(o['first_init_ms'], '{:.0f}')} ms ({f(o['first_program_ms'], '{:.0f}')} ms) | "
                      f"{f(o['second_init_ms'], '{:.0f}')} ms |")
        for mode, t in (torch.get("modes") or {}).items():
            md.append(f"| PyTorch {mode} | {t['ms_median']:.2f} | {t['ms_min']:.2f} | "
                      f"{(t.get('tflops') or 0):.2f} | {100 * (t.get('tflops') or 0) / PEAK_FP32_TFLOPS:.1f} | "
                      f"{t['ms_median'] / tfp32 if tfp32 else 0:.2f}x | "
                      f"{t['max_abs_err'] if t['max_abs_err'] is not None else '—'} | | |")
        md.append("")
        for k, o in r["onnx2cl"].items():
            if o["kernels"]:
                md.append(f"`--kernels {k}`: {o['kernels']}  ")
            if o["profile"]:
                md += ["", f"Device time by op kind (`--profile`, --kernels {k}):", "",
                       "| op | launches | ms | % |", "|---|---:|---:|---:|"]
                md += [f"| {op} | {n} | {ms:.3f} | {pct:.1f} |" for op, n, ms, pct in o["profile"][:12]]
                md.append("")
        rep["models"][m] = r
    md += ["## Steps (exit status, seconds)", "", "| step | exit | s |", "|---|---:|---:|"]
    md += [f"| {k} | {v['exit']} | {v['seconds']} |" for k, v in steps.items()]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump(rep, f, indent=1)


if __name__ == "__main__":
    main()
