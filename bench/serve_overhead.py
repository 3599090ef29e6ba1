#!/usr/bin/env python3
"""serve_overhead.py — what a request to `onnx2cl-sd serve` costs beyond the generation itself
(issue 22: "per-request overhead"), side by side in one run:

  generation  the library's own wall time of the generation (sds_generate: text encoder, UNet
              steps, VAE, PNG encode), read from the CLI's "total (no load)" timing line of the
              same request (same checkpoint, size, steps, seed, sampler; warm caches);
  request     the client's wall time of POST /sdapi/v1/txt2img (JSON parse, queue, generation,
              PNG + base64 + JSON answer, HTTP) on the same machine, urllib, one client;
  overhead    request - generation, medians of N runs each.

Usage: python3 bench/serve_overhead.py ONNX2CL_SD CHECKPOINT [--size 32] [--steps 4] [-n 15]
Prints a Markdown table (medians, min, max) and the load average before and after.
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sd")
    ap.add_argument("ckpt")
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("-n", type=int, default=15)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    env = dict(os.environ, ONNX2CL_CACHE_DIR=os.environ.get("ONNX2CL_CACHE_DIR", os.path.join(tmp, "cache")))
    load0 = os.getloadavg()
    flags = ["-p", "a photo of a cat", "--width", str(a.size), "--height", str(a.size), "--steps", str(a.steps),
             "--seed", "7", "--scheduler", "Euler", "--cfg", "7"]
    gen = []
    for i in range(a.n + 1):  # the first run warms the caches
        r = subprocess.run([a.sd, "-m", a.ckpt, *flags, "-o", os.path.join(tmp, "x.png")], capture_output=True,
                           text=True, env=env, check=True)
        m = re.search(r"total \(no load\)\s+([0-9.]+)", r.stderr)
        if i:
            gen.append(float(m.group(1)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = subprocess.Popen([a.sd, "serve", "-m", a.ckpt, "--listen", f"127.0.0.1:{port}", "--width", str(a.size),
                            "--height", str(a.size), "--quiet"], stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    while True:
        try:
            urllib.request.urlopen(base + "/health", timeout=2).read()
            break
        except OSError:
            time.sleep(0.3)
    body = json.dumps({"prompt": "a photo of a cat", "width": a.size, "height": a.size, "steps": a.steps, "seed": 7,
                       "sampler_name": "Euler", "cfg_scale": 7}).encode()
    req = []
    for i in range(a.n + 1):
        t = time.perf_counter()
        r = urllib.request.Request(base + "/sdapi/v1/txt2img", data=body, headers={"Content-Type": "application/json"})
        urllib.request.urlopen(r, timeout=600).read()
        if i:
            req.append(time.perf_counter() - t)
    srv.terminate()
    srv.wait()
    load1 = os.getloadavg()
    g, q = statistics.median(gen), statistics.median(req)
    print(f"{a.size}x{a.size}, {a.steps} steps Euler, guidance 7, {a.n} runs each, {os.path.basename(a.ckpt)}")
    print("| | median s | min s | max s |\n|---|---|---|---|")
    print(f"| generation (CLI's total, no load) | {g:.4f} | {min(gen):.4f} | {max(gen):.4f} |")
    print(f"| request (POST /sdapi/v1/txt2img) | {q:.4f} | {min(req):.4f} | {max(req):.4f} |")
    print(f"| overhead (median request - median generation) | {q - g:.4f} | | |")
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
