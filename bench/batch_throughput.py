#!/usr/bin/env python3
"""batch_throughput.py — `onnx2cl-sd -m` --batch-size 4 vs --batch-count 4 (issue 21), vs diffusers.

Claim checked: "batch size 4 per UNet call is >= 1.5x the throughput of 4 single calls on the CPU
device".

What it does (dev machine: torch + diffusers + transformers; never CI)
  1. builds a full-size SD 1.5 single-file checkpoint with random weights (float16 values) exactly
     as bench/oneshot_full.py does (models/arch/sd15/arch.json configs, torch.manual_seed(42),
     models/make_test_checkpoints.py's LDM writer), unless --keep finds it in --work;
  2. diffusers StableDiffusionPipeline (PyTorch CPU, float32) on the same modules: one warm-up call
     (1 step), then per repetition num_images_per_prompt=4 (one call) and 4 calls of 1 image, the
     UNet's forward time summed through forward hooks;
  3. onnx2cl-sd -m CKPT, per mode (batch: --batch-size 4 --batch-count 1; single: --batch-size 1
     --batch-count 4): one warm-up run (1 step, 1 batch: compiles the programs into the cache and
     lets PoCL build its kernels; not timed), then --reps timed runs, parsing the timings table
     onnx2cl-sd prints on stderr ("unet", "unet per step", "vae decoder", "total (no load)");
  4. prints a markdown report: medians, images/s of the UNet and of the whole generation, the
     batch/single ratios for both engines.

Usage
  python3 bench/batch_throughput.py [--build build-bench] [--work /tmp/batch_tp] [--size 256]
      [--steps 4] [--reps 2] [--diffusers-reps 1] [--keep] [--skip-diffusers] [--skip-ours]
      [--json RAW.json] [--md OUT.md]
  python3 bench/batch_throughput.py --from-json RAW.json --md OUT.md [--size/--steps/--reps as run]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEED = 42
PROMPT = "a photo of an astronaut riding a horse on mars"
NEGATIVE = "blurry"
N = 4  # images per mode


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


sys.path.insert(0, HERE)
from oneshot_full import build_models, make_pipe, write_checkpoint  # noqa: E402  (the same checkpoint)


def time_diffusers(pipe, size, steps, cfg, reps):
    """{mode: [ {unet_s, total_s}, ... ]} for mode batch (num_images_per_prompt=4) and single (4 calls)."""
    import torch
    acc = {"t": 0.0, "t0": 0.0, "calls": 0}

    def pre(_m, _i):
        acc["t0"] = time.perf_counter()

    def post(_m, _i, _o):
        acc["t"] += time.perf_counter() - acc["t0"]
        acc["calls"] += 1

    pipe.unet.register_forward_pre_hook(pre)
    pipe.unet.register_forward_hook(post)

    def call(k, seed, nsteps):
        with torch.no_grad():
            pipe(PROMPT, negative_prompt=NEGATIVE, height=size, width=size, num_inference_steps=nsteps,
                 guidance_scale=cfg, num_images_per_prompt=k,
                 generator=torch.Generator().manual_seed(seed), output_type="np")

    call(1, SEED, 1)  # warm-up
    res = {"batch": [], "single": []}
    for r in range(reps):
        for mode in ("batch", "single"):
            acc.update(t=0.0, calls=0)
            t0 = time.perf_counter()
            if mode == "batch":
                call(N, SEED, steps)
            else:
                for i in range(N):
                    call(1, SEED + i, steps)
            tot = time.perf_counter() - t0
            res[mode].append({"unet_s": acc["t"], "unet_calls": acc["calls"], "total_s": tot, "load": loadavg()})
            print(f"diffusers {mode} rep {r}: unet {acc['t']:.1f} s ({acc['calls']} calls), total {tot:.1f} s, "
                  f"load {loadavg()}", file=sys.stderr, flush=True)
    return res


ROW = re.compile(r"^\s*(checkpoint/cache|load models|text encoder|unet per step|unet|scheduler \(host\)|"
                 r"vae decoder|total \(no load\))\s+(.*)$")


def parse_timings(stderr):
    t = {}
    for line in stderr.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        nums = [float(x) for x in re.findall(r"[-+]?\d+\.\d+|\d+", m.group(2).split("(")[0])]
        key = m.group(1)
        if key == "unet per step":
            t["unet_per_step_s"] = nums[-1]
        elif key == "total (no load)":
            t["total_no_load_s"] = nums[-1]
        elif key == "unet":
            t["unet_runs"], t["unet_s"] = int(nums[0]), nums[1]
        elif key == "vae decoder":
            t["vae_s"] = nums[1]
        elif key == "text encoder":
            t["text_s"] = nums[1]
        elif key == "checkpoint/cache":
            c = re.search(r"(\d+) compiled, (\d+) converted", m.group(2))
            t["cache_s"] = nums[1]
            if c:
                t["compiled"], t["converted"] = int(c.group(1)), int(c.group(2))
        elif key == "load models":
            t["load_s"] = nums[1]
    return t


def run_ours(build, ckpt, work, size, steps, cfg, bs, bc, tag, arch_dir=None):
    cmd = [os.path.join(build, "pipeline/onnx2cl-sd"), "-m", ckpt] + (["--arch-dir", arch_dir] if arch_dir else []) + [ "-p", PROMPT, "-n", NEGATIVE,
           "--width", str(size), "--height", str(size), "--steps", str(steps), "--cfg", str(cfg),
           "--seed", str(SEED), "--scheduler", "euler", "--timestep-spacing", "leading",
           "--batch-size", str(bs), "--batch-count", str(bc), "-o", os.path.join(work, f"{tag}.png")]
    timer = (["/usr/bin/time", "-f", "peak_rss_kb %M cpu_s %U %S"] if os.path.exists("/usr/bin/time") else [])
    env = dict(os.environ, ONNX2CL_CACHE_DIR=os.path.join(work, "cache"),
               POCL_CACHE_DIR=os.path.join(work, "pocl-cache"))
    t0 = time.time()
    p = subprocess.run(timer + cmd, capture_output=True, text=True, env=env)
    dt = time.time() - t0
    open(os.path.join(work, f"{tag}.err"), "w").write(" ".join(cmd) + "\n" + p.stderr)
    if p.returncode:
        sys.exit(f"{tag}: exit {p.returncode}\n{p.stderr[-4000:]}")
    t = parse_timings(p.stderr)
    rss = [l.split() for l in p.stderr.splitlines() if l.startswith("peak_rss_kb")]
    t.update(wall_s=dt, peak_rss_mib=(int(rss[0][1]) / 1024 if rss else None), load=loadavg(), cmd=" ".join(cmd))
    if rss and len(rss[0]) >= 5:  # user + system CPU seconds of the process (the load disturbs them less)
        t["cpu_s"] = float(rss[0][3]) + float(rss[0][4])
    print(f"onnx2cl-sd {tag}: {json.dumps({k: v for k, v in t.items() if k != 'cmd'})}", file=sys.stderr,
          flush=True)
    return t


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def report(r, a):
    L = []
    p = L.append
    p(f"# Batch throughput: --batch-size 4 vs --batch-count 4 (issue 21), full-size SD 1.5 (random weights)\n")
    p(f"{a.size}x{a.size} ({a.size // 8}x{a.size // 8} latents), {a.steps} steps, cfg {a.cfg} (the UNet runs "
      f"batch 2N: N images x cond/uncond), Euler, {N} images per mode; onnx2cl-sd timed runs: {a.reps} per "
      f"mode after one untimed warm-up run per mode (compile + PoCL kernel builds); diffusers: "
      f"{a.diffusers_reps} per mode after a 1-step warm-up call.\n")
    p(f"Command: `{r['command']}`\n")
    p(f"Machine: {r['machine']}. Load average (1, 5, 15 min) at start: {r['load_start']}; at end: {r['load_end']}. "
      f"Per-run load in the Details.\n")
    p("## Medians\n")
    p("| engine | mode | timed runs | UNet calls | UNet s | UNet s per call | UNet images/s | total s | "
      "images/s (whole generation) | process CPU s |")
    p("|---|---|---|---|---|---|---|---|---|---|")
    ratios = {}
    for eng in ("onnx2cl-sd", "diffusers"):
        runs = r["runs"].get(eng)
        if not runs:
            continue
        tput = {}
        for mode in ("batch", "single"):
            rs = runs[mode]
            if not rs:
                continue
            if eng == "onnx2cl-sd":
                u = med([x["unet_s"] for x in rs]); tot = med([x["total_no_load_s"] for x in rs])
                calls = rs[0]["unet_runs"]
            else:
                u = med([x["unet_s"] for x in rs]); tot = med([x["total_s"] for x in rs])
                calls = rs[0]["unet_calls"]
            tput[mode] = (N / u, N / tot)
            label = "--batch-size 4 --batch-count 1" if mode == "batch" else "--batch-size 1 --batch-count 4"
            if eng == "diffusers":
                label = "num_images_per_prompt=4" if mode == "batch" else "4 calls of 1 image"
            cpu = [x["cpu_s"] for x in rs if "cpu_s" in x]
            p(f"| {eng} | {label} | {len(rs)} | {calls} | {u:.1f} | {u / calls:.2f} | {N / u:.4f} | {tot:.1f} | "
              f"{N / tot:.4f} | {f'{med(cpu):.0f} ({len(cpu)} runs)' if cpu else 'n/a'} |")
        if len(tput) == 2:
            ratios[eng] = (tput["batch"][0] / tput["single"][0], tput["batch"][1] / tput["single"][1])
    p("")
    p("## Ratios (batch throughput / single throughput)\n")
    p("| engine | UNet | whole generation |")
    p("|---|---|---|")
    for eng, (ru, rt) in ratios.items():
        p(f"| {eng} | {ru:.2f}x | {rt:.2f}x |")
    p("")
    if "onnx2cl-sd" in ratios:
        ru = ratios["onnx2cl-sd"][0]
        p(f"Claim \"batch size 4 per UNet call is >= 1.5x the throughput of 4 single calls\" (onnx2cl-sd, UNet): "
          f"{'HOLDS' if ru >= 1.5 else 'DOES NOT HOLD'} ({ru:.2f}x).\n")
    p("onnx2cl-sd's `total (no load)` is the generation without loading the models (text encoder, UNet, scheduler, "
      "VAE decoder); diffusers' total is the wall time of the pipeline call(s) (text encoder, UNet, scheduler, "
      "VAE decoder, postprocessing). UNet s: onnx2cl-sd's `unet` row; diffusers: the UNet's forward time "
      "summed over forward hooks.\n")
    if r.get("pairs"):
        p("## Paired ratios (a batch run and the single run right after it, same invocation)\n")
        p("Throughput ratio batch / single of each pair (= single seconds / batch seconds); the load drifts less "
          "within a pair than across the pooled runs above.\n")
        p("| engine | run | UNet | whole generation | process CPU s (single / batch) |")
        p("|---|---|---|---|---|")
        for eng, run, ru, rt, rc in r["pairs"]:
            p(f"| {eng} | {run} | {ru:.2f}x | {rt:.2f}x | {f'{rc:.2f}' if rc else 'n/a'} |")
        for eng in sorted({e for e, *_ in r["pairs"]}):
            xs = [x for x in r["pairs"] if x[0] == eng]
            p(f"\n{eng}: median of {len(xs)} paired UNet ratios {med([x[2] for x in xs]):.2f}x (min "
              f"{min(x[2] for x in xs):.2f}x, max {max(x[2] for x in xs):.2f}x); whole generation "
              f"{med([x[3] for x in xs]):.2f}x.")
        p("")
    p("## Details (every timed run)\n")
    p("```")
    for eng, runs in r["runs"].items():
        for mode, rs in runs.items():
            for i, x in enumerate(rs):
                p(f"{eng} {mode} #{i}: " + json.dumps({k: v for k, v in x.items() if k != 'cmd'}))
    p("```")
    if r.get("warmups"):
        p("\nWarm-up runs (not timed into the medians):\n\n```")
        for x in r["warmups"]:
            p(json.dumps({k: v for k, v in x.items() if k != "cmd"}))
        p("```")
    return "\n".join(L) + "\n"


def save(r, a):
    """the raw results so far (a run cut short keeps what it measured; --from-json renders them)"""
    if a.json:
        json.dump(r, open(a.json, "w"), indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--work", default="/tmp/batch_tp")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--cfg", type=float, default=7.5)
    ap.add_argument("--reps", type=int, default=2, help="timed onnx2cl-sd runs per mode")
    ap.add_argument("--diffusers-reps", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="reuse the checkpoint in --work")
    ap.add_argument("--skip-diffusers", action="store_true")
    ap.add_argument("--skip-ours", action="store_true")
    ap.add_argument("--ckpt-only", action="store_true", help="write the checkpoint and stop")
    ap.add_argument("--arch-dir", help="onnx2cl-sd --arch-dir (default: a private copy of models/arch/sd15 under "
                    "--work, so architectures being added to the tree meanwhile cannot break the runs)")
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--md", help="write the markdown report here (else stdout)")
    ap.add_argument("--from-json", action="append", help="render the report from this raw results file (no runs); "
                    "repeated: the runs of all files pooled (their commands and loads listed)")
    a = ap.parse_args()
    if a.from_json:
        rs = [json.load(open(f)) for f in a.from_json]
        r = rs[0]
        r.setdefault("load_end", "(run cut short)")
        if len(rs) > 1:
            r["command"] = "` then `".join(x["command"] for x in rs)
            r["load_start"] = ", ".join(f"{x['load_start']} (run {i + 1})" for i, x in enumerate(rs))
            r["load_end"] = ", ".join(f"{x.get('load_end', '(cut short)')} (run {i + 1})" for i, x in enumerate(rs))
        r["pairs"] = []  # back-to-back batch/single runs of one invocation: single UNet s / batch UNet s
        for i, x in enumerate(rs):
            for eng, runs in x["runs"].items():
                for b, sg in zip(runs.get("batch", []), runs.get("single", [])):
                    r["pairs"].append((eng, i + 1, sg["unet_s"] / b["unet_s"],
                                       sg.get("total_no_load_s", sg.get("total_s")) / b.get("total_no_load_s", b.get("total_s")),
                                       (sg["cpu_s"] / b["cpu_s"]) if "cpu_s" in b and "cpu_s" in sg else None))
        for x in rs[1:]:
            r["warmups"] += x.get("warmups", [])
            for eng, runs in x["runs"].items():
                for mode, l in runs.items():
                    r["runs"].setdefault(eng, {}).setdefault(mode, []).extend(l)
        md = report(r, a)
        if a.md:
            open(a.md, "w").write(md)
        print(md)
        return
    os.makedirs(a.work, exist_ok=True)
    r = {"command": "python3 " + " ".join(sys.argv), "load_start": loadavg(), "runs": {}, "warmups": []}
    r["machine"] = f"{os.cpu_count()} CPUs, " + (open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0]
                                                 .strip(" :\t") if "model name" in open("/proc/cpuinfo").read() else "?")
    ck = os.path.join(a.work, "sd15_random_f16.safetensors")
    pipe = None
    if not (a.keep and os.path.exists(ck)) or not a.skip_diffusers:
        arch, models = build_models()
        if not (a.keep and os.path.exists(ck)):
            write_checkpoint(arch, models, ck)
            print(f"wrote {ck}", file=sys.stderr, flush=True)
        if a.ckpt_only:
            return
        if not a.skip_diffusers:
            pipe = make_pipe(arch, models)
            r["runs"]["diffusers"] = time_diffusers(pipe, a.size, a.steps, a.cfg, a.diffusers_reps)
            save(r, a)
        del pipe, models
        import gc
        gc.collect()
    if not a.skip_ours:
        if not a.arch_dir:
            import shutil
            a.arch_dir = os.path.join(a.work, "arch")
            shutil.rmtree(a.arch_dir, ignore_errors=True)
            shutil.copytree(os.path.join(ROOT, "models/arch/sd15"), os.path.join(a.arch_dir, "sd15"))
        runs = r["runs"]["onnx2cl-sd"] = {"batch": [], "single": []}
        modes = {"batch": (N, 1), "single": (1, N)}
        for mode, (bs, bc) in modes.items():
            w = run_ours(a.build, ck, a.work, a.size, 1, a.cfg, bs, 1, f"warmup-{mode}", a.arch_dir)
            w["mode"] = mode
            r["warmups"].append(w)
            save(r, a)
        for i in range(a.reps):
            for mode, (bs, bc) in modes.items():
                runs[mode].append(run_ours(a.build, ck, a.work, a.size, a.steps, a.cfg, bs, bc, f"{mode}-{i}", a.arch_dir))
                save(r, a)
    r["load_end"] = loadavg()
    save(r, a)
    md = report(r, a)
    if a.md:
        open(a.md, "w").write(md)
    print(md)


if __name__ == "__main__":
    main()
