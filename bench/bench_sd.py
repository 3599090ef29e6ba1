#!/usr/bin/env python3
"""bench_sd.py — onnx2cl vs onnxruntime (CPU) on the Stable Diffusion exports, side by side.

What it does
  For each model folder (laid out as models/export_sd.py writes it: model.onnx, inputs/*.npy,
  ref/*.npy, meta.json with the --shape flags), in one run:
    * compiles the model with onnx2cl twice: all passes ("fused") and --no-fuse=all ("unfused");
      records the wall time and peak RSS of the onnx2cl process tree (os.wait4 rusage: onnx2cl
      and the C compiler it runs), onnx2cl's own peak RSS and its --stats time split
      (load / passes / codegen / write / C compile), kernel launches, arena and weights bytes
      (--stats-json);
    * start-up: runs the executable once with empty ONNX2CL_CACHE_DIR and POCL_CACHE_DIR (OpenCL
      program build from source), then again with the same (now filled) cache dirs (program
      binary cache hit); wall time of each process (one inference + .npy I/O included) and
      the --verbose init split (program build/cache, weights upload);
    * run time per inference: `--bench N` (one warm-up + N timed runs), median and min;
    * correctness: max abs / max rel error of the outputs (from the second start) vs ref/*.npy
      (PyTorch fp32), and the check |d| <= atol + rtol*|ref| (default 1e-4, 1e-3);
    * onnxruntime CPU (default graph optimizations, default threads) on the same model.onnx and
      inputs, in a child process: session creation time, one warm-up, median/min of N runs,
      peak RSS, error vs ref.
  Prints a markdown table (plus details) and writes JSON (--json FILE) and markdown (--md FILE).

Assumes
  python3 with numpy and onnxruntime (no torch; the ov variant: openvino from PyPI); an onnx2cl binary (default:
  build-bench/obj/onnx2cl as bench/build_snapshot.sh builds it from a commit, else
  build-bench/onnx2cl, else build/onnx2cl, or --onnx2cl PATH); a C compiler for onnx2cl -o EXE; an OpenCL device
  (PoCL on the CPU here). Large models need disk space in --work (the UNet: ~3.4 GB of weights
  per variant; variants are compiled and removed one at a time unless --keep).

Guarantees
  Read-only on the model folders. Every child process runs under a timeout (--timeout, seconds);
  a failure (non-zero exit, timeout, missing output) is recorded with the exact tail of the
  child's stderr and the run goes on with the next variant/model. Exit status: 0 when every
  measured output met the tolerance, 1 otherwise, 2 on usage errors.

Usage
  python3 bench/bench_sd.py                          # models/tiny/*
  python3 bench/bench_sd.py --full                   # models/tiny/* + models/full/*
  python3 bench/bench_sd.py models/full/vae_decoder --bench 2 --ort-runs 3 --json out.json
  See bench/README.md for the columns and caveats.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------------------------
# child processes


def run_child(cmd, timeout, env=None, cwd=None, log_prefix=None):
    """Runs cmd (list) with a wall-clock timeout; returns a dict with rc (None on timeout),
    wall_s, maxrss_mib (peak RSS of the child and its waited-for descendants, from wait4),
    user_s, sys_s, stdout, stderr (text). stdout/stderr also go to log_prefix.{out,err}."""
    out_path = (log_prefix + ".out") if log_prefix else tempfile.mktemp()
    err_path = (log_prefix + ".err") if log_prefix else tempfile.mktemp()
    with open(out_path, "w") as fo, open(err_path, "w") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env, cwd=cwd,
                             start_new_session=True)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.monotonic() - t0 > timeout:
                timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        wall = time.monotonic() - t0
        p.returncode = 0  # reaped by wait4; keep Popen from waiting again
    with open(out_path, errors="replace") as f:
        so = f.read()
    with open(err_path, errors="replace") as f:
        se = f.read()
    if not log_prefix:
        os.unlink(out_path)
        os.unlink(err_path)
    if timed_out:
        rc = None
    elif os.WIFEXITED(status):
        rc = os.WEXITSTATUS(status)
    else:
        rc = -os.WTERMSIG(status)
    return {"cmd": " ".join(cmd), "rc": rc, "wall_s": wall, "maxrss_mib": ru.ru_maxrss / 1024.0,
            "user_s": ru.ru_utime, "sys_s": ru.ru_stime, "stdout": so, "stderr": se,
            "timed_out": timed_out}


def fail_msg(r, what):
    """One-paragraph description of a failed child: what, exit status, last stderr lines."""
    if r["timed_out"]:
        head = f"{what}: timed out after {r['wall_s']:.0f} s"
    elif r["rc"] is not None and r["rc"] < 0:
        head = f"{what}: killed by signal {-r['rc']} after {r['wall_s']:.1f} s"
    else:
        head = f"{what}: exit status {r['rc']} after {r['wall_s']:.1f} s"
    tail = (r["stderr"].strip().splitlines() or r["stdout"].strip().splitlines() or [""])[-8:]
    return head + "\n    " + "\n    ".join(tail)


# ----------------------------------------------------------------------------------------------
# numerics


def errors(got, ref):
    """max abs error, max rel error (|d| / max(|ref|, 1e-6 * max|ref|), as models/check_ort.py),
    max |ref|, and the worst value of |d| / (atol + rtol |ref|) is computed by the caller."""
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    d = np.abs(got - ref)
    if d.size == 0:
        return 0.0, 0.0, 0.0, d, ref
    scale = float(np.max(np.abs(ref)))
    den = np.maximum(np.abs(ref), max(scale * 1e-6, 1e-30))
    return float(np.nanmax(d)), float(np.nanmax(d / den)), scale, d, ref


def compare_outputs(out_dir, refs, atol, rtol):
    """Compares DIR/<name>.npy with refs; returns {name: {max_abs, max_rel, max_ref, ok, ...}}."""
    res = {}
    for name, ref in refs.items():
        path = os.path.join(out_dir, name.replace("/", "_") + ".npy")
        if not os.path.isfile(path):
            res[name] = {"ok": False, "error": f"missing output {path}"}
            continue
        got = np.load(path)
        if got.shape != ref.shape:
            res[name] = {"ok": False, "error": f"shape {got.shape} != ref {ref.shape}"}
            continue
        ma, mr, sc, d, r = errors(got, ref)
        nan = int(np.count_nonzero(~np.isfinite(got)))
        viol = d > atol + rtol * np.abs(r)
        res[name] = {"max_abs": ma, "max_rel": mr, "max_ref": sc, "nonfinite": nan,
                     "violations": int(np.count_nonzero(viol)) + nan, "elements": int(d.size),
                     "ok": nan == 0 and not bool(viol.any())}
    return res


# ----------------------------------------------------------------------------------------------
# onnxruntime worker (runs in a child process so its memory is measured and freed separately)


def ort_worker(folder, runs, out_dir, kind="ort"):
    """kind "ort": onnxruntime (CPUExecutionProvider, default optimizations and threads); "ov":
    OpenVINO's CPU plugin with INFERENCE_PRECISION_HINT f32 (its default on CPUs with bf16 units is
    bf16, not the float32 the others compute in)."""
    inputs = {os.path.splitext(os.path.basename(p))[0]: np.load(p)
              for p in sorted(glob.glob(os.path.join(folder, "inputs", "*.npy")))}
    path = os.path.join(folder, "model.onnx")
    if kind == "ov":
        import openvino as ov
        t0 = time.perf_counter()
        core = ov.Core()
        compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        t_sess = time.perf_counter() - t0
        req = compiled.create_infer_request()
        feeds = {}
        for p in compiled.inputs:
            name = p.get_any_name()
            feeds[name] = inputs[name].astype(p.get_element_type().to_dtype())
        refs = {os.path.splitext(os.path.basename(p))[0]
                for p in glob.glob(os.path.join(folder, "ref", "*.npy"))}
        # an output may carry several tensor names: the ONNX output's (the ref file's) where it has one
        names = [next((n for n in sorted(o.get_names()) if n.replace("/", "_") in refs), o.get_any_name())
                 for o in compiled.outputs]

        def run_once():
            res = req.infer(feeds)
            return [np.array(res[o]) for o in compiled.outputs]
        version = ov.__version__
    else:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.log_severity_level = 3
        t0 = time.perf_counter()
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        t_sess = time.perf_counter() - t0
        type_map = {"tensor(float)": np.float32, "tensor(float16)": np.float16,
                    "tensor(double)": np.float64, "tensor(int64)": np.int64,
                    "tensor(int32)": np.int32, "tensor(bool)": np.bool_}
        feeds = {gi.name: inputs[gi.name].astype(type_map.get(gi.type, inputs[gi.name].dtype))
                 for gi in sess.get_inputs()}
        names = [o.name for o in sess.get_outputs()]

        def run_once():
            return sess.run(names, feeds)
        version = ort.__version__
    t0 = time.perf_counter()
    outs = run_once()  # warm-up
    t_first = time.perf_counter() - t0
    times = []
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(runs):
        t0 = time.perf_counter()
        outs = run_once()
        times.append(time.perf_counter() - t0)
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime) / max(runs, 1)
    os.makedirs(out_dir, exist_ok=True)
    for n, o in zip(names, outs):
        np.save(os.path.join(out_dir, n.replace("/", "_") + ".npy"), o)
    rec = {"session_s": t_sess, "first_run_ms": t_first * 1e3,
           "median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
           "runs": runs, "ort_version": version, "cpu_s_per_run": cpu,
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    print("ORT_RESULT " + json.dumps(rec))


# ----------------------------------------------------------------------------------------------
# onnx2cl


STATS_RE = re.compile(r"time: load ([\d.]+) s, passes ([\d.]+) s, codegen ([\d.]+) s, "
                      r"write ([\d.]+) s; peak RSS ([\d.]+) MiB")
CC_RE = re.compile(r"time: C compile ([\d.]+) s")
LAUNCH_RE = re.compile(r"kernel launches per inference: (\d+)")
INIT_RE = re.compile(r"init ([\d.]+) ms \(program (build|from cache) ([\d.]+) ms, weights "
                     r"([\d.]+) ms\)")
CTX_RE = re.compile(r"device (.*) \(context ([\d.]+) ms\)")
BENCH_RE = re.compile(r"median ([\d.]+) ms, min ([\d.]+) ms over (\d+) runs")


def input_args(folder):
    return [f"--input={os.path.splitext(os.path.basename(p))[0]}={p}"
            for p in sorted(glob.glob(os.path.join(folder, "inputs", "*.npy")))]


def parse_verbose(stderr):
    rec = {}
    m = INIT_RE.search(stderr)
    if m:
        rec.update(init_ms=float(m.group(1)), program=m.group(2), program_ms=float(m.group(3)),
                   weights_ms=float(m.group(4)))
    m = CTX_RE.search(stderr)
    if m:
        rec.update(device=m.group(1), context_ms=float(m.group(2)))
    return rec


def bench_onnx2cl(folder, variant, no_fuse, args, work, refs, log):
    """Compiles and runs one variant; returns its record (never raises on child failures)."""
    meta = json.load(open(os.path.join(folder, "meta.json")))
    flags = meta["onnx2cl_shape_flags"].split()
    name = os.path.basename(os.path.normpath(folder))
    vdir = os.path.join(work, f"{name}-{'unfused' if no_fuse else 'fused'}")
    shutil.rmtree(vdir, ignore_errors=True)
    os.makedirs(vdir)
    exe = os.path.join(vdir, name)
    rec = {"variant": variant, "errors": []}
    cmd = [args.onnx2cl, os.path.join(folder, "model.onnx"), "-o", exe] + flags + \
        ["--stats", "--stats-json", os.path.join(vdir, "stats.json")] + \
        (["--no-fuse=all"] if no_fuse else [])
    log(f"  [{variant}] compile: {' '.join(cmd)}")
    r = run_child(cmd, args.timeout, log_prefix=os.path.join(vdir, "compile"))
    rec["compile"] = {"wall_s": r["wall_s"], "tree_peak_rss_mib": r["maxrss_mib"],
                      "user_s": r["user_s"], "sys_s": r["sys_s"], "rc": r["rc"]}
    m = STATS_RE.search(r["stderr"])
    if m:
        rec["compile"].update(load_s=float(m.group(1)), passes_s=float(m.group(2)),
                              codegen_s=float(m.group(3)), write_s=float(m.group(4)),
                              onnx2cl_peak_rss_mib=float(m.group(5)))
    m = CC_RE.search(r["stderr"])
    if m:
        rec["compile"]["cc_s"] = float(m.group(1))
    m = LAUNCH_RE.search(r["stderr"])
    if m:
        rec["launches"] = int(m.group(1))
    rec["stats_text"] = [l for l in r["stderr"].splitlines()
                         if l.startswith(("pass ", "kernel", "arena", "weights", "time", "fuse"))]
    sj = os.path.join(vdir, "stats.json")
    if os.path.isfile(sj):
        s = json.load(open(sj))
        rec["stats_json"] = s
        rec["launches"] = s.get("kernel_launches", rec.get("launches"))
        rec["arena_bytes"] = s.get("arena_bytes")
        rec["weights_bytes"] = s.get("weights_bytes")
        rec["nodes_after"] = s.get("nodes_after")
    if r["rc"] != 0 or not os.path.isfile(exe):
        rec["errors"].append(fail_msg(r, "onnx2cl compile"))
        log("    FAILED " + rec["errors"][-1])
        return rec
    c = rec["compile"]
    log(f"    compile {c['wall_s']:.2f} s wall (C compile {c.get('cc_s', float('nan')):.2f} s), "
        f"onnx2cl peak RSS {c.get('onnx2cl_peak_rss_mib', float('nan')):.0f} MiB, tree "
        f"{c['tree_peak_rss_mib']:.0f} MiB; {rec.get('launches')} launches")

    # start-up: cold (empty caches), then warm (binary cache hit)
    cache = os.path.join(vdir, "cache")
    env = dict(os.environ)
    env["ONNX2CL_CACHE_DIR"] = os.path.join(cache, "onnx2cl")
    env["POCL_CACHE_DIR"] = os.path.join(cache, "pocl")
    env.pop("ONNX2CL_NO_CACHE", None)
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(env["ONNX2CL_CACHE_DIR"])
    os.makedirs(env["POCL_CACHE_DIR"])
    ins = input_args(folder)
    for k, label in ((0, "first"), (1, "second")):
        out_dir = os.path.join(vdir, f"out{k}")
        extra = []
        if k == 1 and args.fold_bench:
            extra = ["--bench", str(args.bench_n(folder))]
        if k == 0 and args.profile:
            extra = ["--profile"]
        cmd = [exe] + ins + ["--output-dir", out_dir, "--verbose"] + extra
        log(f"  [{variant}] {label} start: {' '.join(cmd)}")
        r = run_child(cmd, args.timeout, env=env, log_prefix=os.path.join(vdir, f"run{k}"))
        st = {"wall_s": r["wall_s"], "peak_rss_mib": r["maxrss_mib"], "rc": r["rc"],
              "cpu_s": r["user_s"] + r["sys_s"]}
        st.update(parse_verbose(r["stderr"]))
        rec[f"{label}_start"] = st
        if k == 0 and args.profile:
            rec["profile"] = r["stdout"]
        if r["rc"] != 0:
            rec["errors"].append(fail_msg(r, f"{label} start"))
            log("    FAILED " + rec["errors"][-1])
            return rec
        if extra and extra[0] == "--bench":
            m = BENCH_RE.search(r["stdout"])
            if m:
                rec["bench"] = {"median_ms": float(m.group(1)), "min_ms": float(m.group(2)),
                                "runs": int(m.group(3)), "folded_into_second_start": True}
        log(f"    {label} start {r['wall_s']:.2f} s wall, init {st.get('init_ms', float('nan')):.0f}"
            f" ms (program {st.get('program')} {st.get('program_ms', float('nan')):.0f} ms, "
            f"weights {st.get('weights_ms', float('nan')):.0f} ms), peak RSS "
            f"{r['maxrss_mib']:.0f} MiB")
        cmp = compare_outputs(out_dir, refs, args.atol, args.rtol)
        rec[f"{label}_start"]["outputs"] = cmp
        for on, e in cmp.items():
            if "error" in e:
                rec["errors"].append(f"{label} start output {on}: {e['error']}")
                log("    FAILED " + rec["errors"][-1])
    rec["accuracy"] = rec["second_start"]["outputs"]
    for on, e in rec["accuracy"].items():
        if "max_abs" in e:
            log(f"    {on}: max abs {e['max_abs']:.3g}, max rel {e['max_rel']:.3g} "
                f"(max|ref| {e['max_ref']:.3g}), {e['violations']}/{e['elements']} outside "
                f"{args.atol:g}+{args.rtol:g}|ref| -> {'ok' if e['ok'] else 'FAIL'}")

    if args.bench_n(folder) == 0:  # no bench run: one inference's time from the 2nd start
        s2 = rec["second_start"]
        est = s2["wall_s"] * 1e3 - s2.get("init_ms", 0.0) - s2.get("context_ms", 0.0)
        rec["bench"] = {"median_ms": est, "min_ms": est, "runs": 0,
                        "estimated_from_second_start": True}
    elif not args.fold_bench:
        n = args.bench_n(folder)
        cmd = [exe] + ins + ["--bench", str(n)]
        log(f"  [{variant}] bench: {' '.join(cmd)}")
        r = run_child(cmd, args.timeout, env=env, log_prefix=os.path.join(vdir, "bench"))
        m = BENCH_RE.search(r["stdout"])
        if r["rc"] != 0 or not m:
            rec["errors"].append(fail_msg(r, "bench"))
            log("    FAILED " + rec["errors"][-1])
        else:
            rec["bench"] = {"median_ms": float(m.group(1)), "min_ms": float(m.group(2)),
                            "runs": int(m.group(3)), "wall_s": r["wall_s"],
                            "cpu_s": r["user_s"] + r["sys_s"]}
    if "bench" in rec:
        b = rec["bench"]
        log(f"    bench: median {b['median_ms']:.2f} ms, min {b['min_ms']:.2f} ms over "
            f"{b['runs']} runs")
    if not args.keep:
        for f in (exe, exe + ".weights", exe + ".c"):
            if os.path.exists(f) and os.path.getsize(f) > (64 << 20):
                os.unlink(f)
    return rec


def bench_ort(folder, args, work, refs, log, kind="ort"):
    """onnxruntime (kind "ort") or OpenVINO ("ov") on the same ONNX file and inputs, in a child."""
    name = os.path.basename(os.path.normpath(folder))
    out_dir = os.path.join(work, f"{name}-{kind}")
    shutil.rmtree(out_dir, ignore_errors=True)
    runs = args.ort_n(folder)
    cmd = [sys.executable, os.path.abspath(__file__), "--ort-worker", folder, "--ort-runs",
           str(runs), "--ort-out", out_dir, "--worker-kind", kind]
    what = "onnxruntime" if kind == "ort" else "openvino"
    log(f"  [{what}] {runs} runs after a warm-up")
    r = run_child(cmd, args.timeout, log_prefix=out_dir + "-log")
    rec = {"variant": what, "errors": []}
    m = re.search(r"^ORT_RESULT (.*)$", r["stdout"], re.M)
    if r["rc"] != 0 or not m:
        rec["errors"].append(fail_msg(r, what))
        log("    FAILED " + rec["errors"][-1])
        return rec
    o = json.loads(m.group(1))
    rec["bench"] = {"median_ms": o["median_ms"], "min_ms": o["min_ms"], "runs": o["runs"],
                    "cpu_s_per_run": o.get("cpu_s_per_run")}
    rec["session_s"] = o["session_s"]
    rec["first_run_ms"] = o["first_run_ms"]
    rec["peak_rss_mib"] = o["peak_rss_mib"]
    rec["ort_version"] = o["ort_version"]
    rec["accuracy"] = compare_outputs(out_dir, refs, args.atol, args.rtol)
    log(f"    session {o['session_s']:.2f} s, first run {o['first_run_ms']:.1f} ms, median "
        f"{o['median_ms']:.2f} ms, min {o['min_ms']:.2f} ms, peak RSS {o['peak_rss_mib']:.0f} MiB")
    for on, e in rec["accuracy"].items():
        if "max_abs" in e:
            log(f"    {on}: max abs {e['max_abs']:.3g}, max rel {e['max_rel']:.3g}")
    return rec


# ----------------------------------------------------------------------------------------------
# report


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def table(results):
    hdr = ["model", "variant", "ms/inf median", "ms/inf min", "runs", "× ORT median (min)",
           "× OpenVINO median (min)",
           "launches", "arena MiB", "weights MiB", "compile s (C cc s)", "onnx2cl peak RSS MiB",
           "1st start s (init ms)", "2nd start s (init ms)", "max abs err vs PyTorch",
           "max rel err", "tol ok"]
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for mres in results:
        ort_med = ort_min = ov_med = ov_min = None
        for v in mres["variants"]:
            if v["variant"] == "onnxruntime" and "bench" in v:
                ort_med, ort_min = v["bench"]["median_ms"], v["bench"]["min_ms"]
            if v["variant"] == "openvino" and "bench" in v:
                ov_med, ov_min = v["bench"]["median_ms"], v["bench"]["min_ms"]
        for v in mres["variants"]:
            b = v.get("bench", {})
            med = b.get("median_ms")
            ratio = ratio_ov = None
            if med is not None and ort_med:
                ratio = f"{med / ort_med:.2f} ({b['min_ms'] / ort_min:.2f})"
            if med is not None and ov_med:
                ratio_ov = f"{med / ov_med:.2f} ({b['min_ms'] / ov_min:.2f})"
            c = v.get("compile", {})
            comp = None
            if c:
                comp = f"{c['wall_s']:.2f} ({fmt(c.get('cc_s'), '.2f')})"
            def start(k):
                s = v.get(k)
                if not s:
                    return "—"
                w = f"{s['wall_s']:.2f}"
                if k == "second_start" and b.get("folded_into_second_start"):
                    w += "†"
                return f"{w} ({fmt(s.get('init_ms'), '.0f')})"
            if v["variant"] in ("onnxruntime", "openvino"):
                s1 = f"session {v['session_s']:.2f} s" if "session_s" in v else "—"
                s2 = "—"
            else:
                s1, s2 = start("first_start"), start("second_start")
            acc = v.get("accuracy", {})
            mabs = [e["max_abs"] for e in acc.values() if "max_abs" in e]
            mrel = [e["max_rel"] for e in acc.values() if "max_rel" in e]
            ok = all(e.get("ok") for e in acc.values()) if acc else None
            runs = b.get("runs")
            if b.get("estimated_from_second_start"):
                runs = "1‡"
            else:
                runs = fmt(runs, "d")
            row = [mres["model"], v["variant"], fmt(med, ".2f"), fmt(b.get("min_ms"), ".2f"),
                   runs, ratio or "—", ratio_ov or "—", fmt(v.get("launches"), "d"),
                   fmt(v["arena_bytes"] / 2**20 if v.get("arena_bytes") is not None else None,
                       ".2f"),
                   fmt(v["weights_bytes"] / 2**20 if v.get("weights_bytes") is not None
                       else None, ".1f"),
                   comp or "—", fmt(c.get("onnx2cl_peak_rss_mib"), ".0f") if c else "—",
                   s1, s2, ", ".join(f"{x:.2e}" for x in mabs) or "—",
                   ", ".join(f"{x:.2e}" for x in mrel) or "—",
                   "—" if ok is None else ("yes" if ok else "**NO**")]
            if v.get("errors"):
                row[1] += " (**failed**)"
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def details(results):
    out = []
    for mres in results:
        out.append(f"\n### {mres['model']} ({mres['folder']})\n")
        for v in mres["variants"]:
            if v.get("errors"):
                out.append(f"**{v['variant']} failed:**\n```\n" + "\n".join(v["errors"]) +
                           "\n```")
            if v["variant"] == "onnxruntime":
                if "session_s" in v:
                    cpu = v["bench"].get("cpu_s_per_run")
                    out.append(f"- onnxruntime {v.get('ort_version')}: session {v['session_s']:.2f}"
                               f" s, first (warm-up) run {v['first_run_ms']:.1f} ms, peak RSS "
                               f"{v['peak_rss_mib']:.0f} MiB" +
                               (f", CPU time per timed run (user+sys, all threads) {cpu:.2f} s"
                                if cpu is not None else ""))
                continue
            c = v.get("compile", {})
            if c:
                out.append(f"- {v['variant']}: onnx2cl wall {c['wall_s']:.2f} s (load "
                           f"{fmt(c.get('load_s'), '.2f')}, passes {fmt(c.get('passes_s'), '.2f')},"
                           f" codegen {fmt(c.get('codegen_s'), '.2f')}, write "
                           f"{fmt(c.get('write_s'), '.2f')}, C compile {fmt(c.get('cc_s'), '.2f')}"
                           f" s); onnx2cl peak RSS {fmt(c.get('onnx2cl_peak_rss_mib'), '.0f')} "
                           f"MiB, with the C compiler {c['tree_peak_rss_mib']:.0f} MiB")
            for k in ("first_start", "second_start"):
                s = v.get(k)
                if s:
                    out.append(f"  - {k.replace('_', ' ')}: {s['wall_s']:.2f} s wall, init "
                               f"{fmt(s.get('init_ms'), '.0f')} ms = context "
                               f"{fmt(s.get('context_ms'), '.0f')} ms + program "
                               f"{s.get('program')} {fmt(s.get('program_ms'), '.0f')} ms + "
                               f"weights {fmt(s.get('weights_ms'), '.0f')} ms; peak RSS "
                               f"{s['peak_rss_mib']:.0f} MiB; CPU time (user+sys, all threads) "
                               f"{fmt(s.get('cpu_s'), '.1f')} s")
            b = v.get("bench", {})
            if b.get("cpu_s") is not None:
                out.append(f"  - bench process ({b['runs']} + 1 warm-up inferences): "
                           f"{b['wall_s']:.1f} s wall, {b['cpu_s']:.1f} s CPU (user+sys)")
            st = [l for l in v.get("stats_text", []) if not l.startswith("time")]
            if st:
                out.append("  - --stats:\n```\n" + "\n".join(st) + "\n```")
            if v.get("profile"):
                out.append("  - --profile of the first run:\n```\n" +
                           v["profile"].strip()[:6000] + "\n```")
    return "\n".join(out)


def render(info, results, notes=None):
    """The markdown report (header, table, details, notes, log) and the table alone."""
    tab = table(results)
    head = (f"# bench_sd {info['date']}\n\n"
            f"- machine: {info.get('cpu', info['machine'])}, {info['cpus']} CPUs (shared with "
            f"other jobs: timings are noisy)\n"
            f"- load average (1/5/15 min) at start "
            f"{' '.join(f'{x:.2f}' for x in info['loadavg_start'])}, at end "
            f"{' '.join(f'{x:.2f}' for x in info['loadavg_end'])}\n"
            f"- onnx2cl: {info['onnx2cl']} ({info['onnx2cl_version']}), git {info['git']}\n"
            f"- tolerance: |d| <= {info['atol']:g} + {info['rtol']:g}·|ref| vs PyTorch fp32 refs\n"
            f"- × ORT = onnx2cl time / onnxruntime time of the same model in this run, on the "
            f"medians and on the mins (> 1: slower than onnxruntime)\n")
    if any(v.get("bench", {}).get("folded_into_second_start") for m in results
           for v in m["variants"]):
        head += ("- †: --fold-bench: the 2nd start run also did the --bench runs, so its wall time "
                 "includes N+1 extra inferences; use its init ms for start-up\n")
    if any(v.get("bench", {}).get("estimated_from_second_start") for m in results
           for v in m["variants"]):
        head += ("- ‡: no --bench run (--bench-full 0, one inference takes minutes here): the time "
                 "of the one inference of the 2nd start, = its wall time − init − context (so it "
                 "also holds process start and the .npy I/O)\n")
    md = head + "\n" + tab + "\n"
    if notes:
        md += "\n## Notes\n\n" + notes.strip() + "\n"
    md += "\n## Details\n" + details(results) + "\n\n## Log\n```\n" + \
        "\n".join(info.get("log", [])) + "\n```\n"
    return md, tab


# ----------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="*", help="model folders (default: models/tiny/*)")
    ap.add_argument("--full", action="store_true", help="also models/full/*")
    ap.add_argument("--onnx2cl", help="onnx2cl binary")
    ap.add_argument("--bench", type=int, default=10, help="--bench N for tiny models (>=5)")
    ap.add_argument("--bench-full", type=int, default=2,
                    help="--bench N for folders under models/full (0: no bench run, the time of "
                    "the 2nd start's one inference is reported instead)")
    ap.add_argument("--ort-runs", type=int, default=20, help="onnxruntime timed runs (tiny)")
    ap.add_argument("--ort-runs-full", type=int, default=3, help="onnxruntime runs (full)")
    ap.add_argument("--variants", default="fused,unfused,ort",
                    help="comma list of fused, unfused, ort (onnxruntime), ov (OpenVINO, pip "
                    "package openvino: bench only)")
    ap.add_argument("--fold-bench", action="store_true",
                    help="run --bench inside the second start-up run (saves inferences on "
                    "huge models; the 2nd start wall time then includes N+1 inferences)")
    ap.add_argument("--profile", action="store_true", help="--profile the first run")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--timeout", type=float, default=3600, help="per child process, s")
    ap.add_argument("--work", help="work dir (default: a temp dir, removed unless --keep)")
    ap.add_argument("--keep", action="store_true", help="keep executables and weights")
    ap.add_argument("--json", help="write the results as JSON")
    ap.add_argument("--md", help="write the markdown report")
    ap.add_argument("--from-json", action="append",
                    help="re-render the report of an earlier --json FILE (repeat to merge several "
                    "runs into one report; with --md; --notes FILE adds a Notes section)")
    ap.add_argument("--notes", help="markdown file added as a Notes section of the report")
    ap.add_argument("--ort-worker", help=argparse.SUPPRESS)
    ap.add_argument("--ort-out", help=argparse.SUPPRESS)
    ap.add_argument("--worker-kind", default="ort", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.ort_worker:
        ort_worker(args.ort_worker, args.ort_runs, args.ort_out, args.worker_kind)
        return 0

    notes = open(args.notes).read() if args.notes else None
    if args.from_json:  # several files: one report, info of the first, load at end of the last
        ds = [json.load(open(f)) for f in args.from_json]
        info = dict(ds[0]["info"])
        info["loadavg_end"] = ds[-1]["info"]["loadavg_end"]
        info["log"] = [l for d in ds for l in d["info"].get("log", [])]
        results = [m for d in ds for m in d["results"]]
        md, tab = render(info, results, notes)
        print(tab)
        if args.md:
            with open(args.md, "w") as f:
                f.write(md)
        return 0

    folders = args.folders or sorted(glob.glob(os.path.join(ROOT, "models/tiny/*/")))
    if args.full:
        folders += sorted(glob.glob(os.path.join(ROOT, "models/full/*/")))
    folders = [os.path.abspath(f) for f in folders]
    if not folders:
        ap.error("no model folders")
    if not args.onnx2cl:
        for c in ("build-bench/obj/onnx2cl", "build-bench/onnx2cl", "build/onnx2cl"):
            if os.path.isfile(os.path.join(ROOT, c)):
                args.onnx2cl = os.path.join(ROOT, c)
                break
    if not args.onnx2cl or not os.path.isfile(args.onnx2cl):
        ap.error("no onnx2cl binary; build it or pass --onnx2cl")
    args.onnx2cl = os.path.abspath(args.onnx2cl)
    if args.bench < 5:
        ap.error("--bench must be >= 5 (use --bench-full for the full-size models)")
    is_full = lambda f: "/models/full/" in f + "/"
    args.bench_n = lambda f: args.bench_full if is_full(f) else args.bench
    args.ort_n = lambda f: args.ort_runs_full if is_full(f) else args.ort_runs
    variants = args.variants.split(",")

    work = args.work or tempfile.mkdtemp(prefix="bench_sd.")
    os.makedirs(work, exist_ok=True)
    report = []

    def log(s):
        print(s, flush=True)
        report.append(s)

    ver = subprocess.run([args.onnx2cl, "--version"], capture_output=True, text=True).stdout
    commit_file = os.path.join(os.path.dirname(args.onnx2cl), "COMMIT")
    if os.path.isfile(commit_file):  # built by bench/build_snapshot.sh from a clean snapshot
        git, dirty = open(commit_file).read().strip()[:12] + " (clean snapshot)", ""
    else:
        git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain"],
                               capture_output=True, text=True).stdout.strip()
    info = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "host": platform.node(), "cpus": os.cpu_count(), "machine": platform.processor() or
            platform.machine(), "python": platform.python_version(),
            "onnx2cl": args.onnx2cl, "onnx2cl_version": ver.strip(),
            "git": git + (" (work tree with uncommitted/untracked changes)" if dirty else ""),
            "loadavg_start": os.getloadavg(), "atol": args.atol, "rtol": args.rtol}
    try:
        cpu = [l for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
        info["cpu"] = cpu.split(":", 1)[1].strip()
    except (OSError, IndexError):
        pass
    log(f"bench_sd {info['date']}: {info.get('cpu', '')} x{info['cpus']}, load average "
        f"{info['loadavg_start'][0]:.2f} {info['loadavg_start'][1]:.2f} "
        f"{info['loadavg_start'][2]:.2f}; onnx2cl {info['git']}")

    results = []
    all_ok = True
    for folder in folders:
        name = os.path.basename(folder)
        size = "full" if is_full(folder) else os.path.basename(os.path.dirname(folder))
        model = f"{size}/{name}"
        refs = {os.path.splitext(os.path.basename(p))[0]: np.load(p)
                for p in sorted(glob.glob(os.path.join(folder, "ref", "*.npy")))}
        log(f"\n== {model} ({folder}); load average {os.getloadavg()[0]:.2f}")
        mres = {"model": model, "folder": folder, "variants": [],
                "loadavg_start": os.getloadavg()}
        for v in variants:
            if v == "fused":
                rec = bench_onnx2cl(folder, "onnx2cl fused", False, args, work, refs, log)
            elif v == "unfused":
                rec = bench_onnx2cl(folder, "onnx2cl --no-fuse=all", True, args, work, refs, log)
            elif v == "ort":
                rec = bench_ort(folder, args, work, refs, log)
            elif v == "ov":
                rec = bench_ort(folder, args, work, refs, log, kind="ov")
            else:
                ap.error(f"unknown variant '{v}'")
            mres["variants"].append(rec)
            if rec.get("errors") or not all(e.get("ok") for e in rec.get("accuracy", {}).values()):
                all_ok = False
        mres["loadavg_end"] = os.getloadavg()
        results.append(mres)
    info["loadavg_end"] = os.getloadavg()

    info["log"] = report
    md, tab = render(info, results, notes)
    print("\n" + tab)
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in info['loadavg_end'])}; work dir "
          f"{work}")
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "results": results}, f, indent=1, default=str)
    if not args.work and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
