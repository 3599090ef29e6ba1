#!/usr/bin/env python3
"""vae_tile_arena.py — device memory of the SD 1.5 VAE decoder, untiled vs `--vae-tile N` (issue 21).

Claim checked: "VAE tiling at 1024x1024 keeps the decoder's arena <= 1/3 of the untiled one".

No image is generated: the script compiles the VAE decoder the way `onnx2cl-sd -m CKPT` does
(pipeline/sd_engine.c prepare_model: `onnx2cl ARCH/vae_decoder.onnx --name-map ARCH/vae_decoder.namemap
--weights-from CKPT --component vae --weights-dtype f16 --shape latent_sample=1,4,LH,LW --name vae_decoder
-o DIR/model.o2d`), once for the whole image (untiled) and once per tile size (with --vae-tile N the
engine compiles the decoder for min(N, side) pixels per side), with --stats-json, and reads
arena_bytes / weights_bytes / device_bytes_peak (o2r_desc_memory) and the onnx2cl process's peak RSS.
The tile plan (tiles per image) is sdp_tile_plan's rule: tiles of T latents at 0, T-O, 2(T-O), ...,
the last moved back to the edge, O = T/4.

Usage
  python3 bench/batch_throughput.py --work W --ckpt-only      # the random-weights SD 1.5 checkpoint
  python3 bench/vae_tile_arena.py --ckpt W/sd15_random_f16.safetensors [--size 1024] [--tiles 512,256]
      [--build build-bench] [--work /tmp/vae_tile_arena] [--md OUT.md]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MIB = 1048576.0


def tile_plan(size, tile, overlap):
    pos = [0]
    while pos[-1] + tile < size:
        nxt = pos[-1] + tile - overlap
        pos.append(min(nxt, size - tile))
    return pos


def compile_vae(build, ckpt, work, lat, tag):
    d = os.path.join(work, tag)
    os.makedirs(d, exist_ok=True)
    stats = os.path.join(work, f"{tag}.json")
    arch = os.path.join(ROOT, "models/arch/sd15")
    cmd = [os.path.join(build, "onnx2cl"), os.path.join(arch, "vae_decoder.onnx"), "--name-map",
           os.path.join(arch, "vae_decoder.namemap"), "--weights-from", ckpt, "--component", "vae",
           "--weights-dtype", "f16", "--shape", f"latent_sample=1,4,{lat},{lat}", "--name", "vae_decoder",
           "-o", os.path.join(d, "model.o2d"), "--stats-json", stats]
    timer = ["/usr/bin/time", "-f", "peak_rss_kb %M"] if os.path.exists("/usr/bin/time") else []
    p = subprocess.run(timer + cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{tag}: exit {p.returncode}\n{p.stderr[-3000:]}")
    s = json.load(open(stats))
    rss = [l.split()[1] for l in p.stderr.splitlines() if l.startswith("peak_rss_kb")]
    s["compile_peak_rss_mib"] = int(rss[0]) / 1024 if rss else float("nan")
    s["cmd"] = " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--work", default="/tmp/vae_tile_arena")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--tiles", default="512,256")
    ap.add_argument("--md")
    a = ap.parse_args()
    f = 8
    lat = a.size // f
    load0 = " ".join(open("/proc/loadavg").read().split()[:3])
    rows = [("untiled", a.size, compile_vae(a.build, a.ckpt, a.work, lat, "untiled"))]
    for t in [int(x) for x in a.tiles.split(",") if x]:
        rows.append((f"--vae-tile {t}", t, compile_vae(a.build, a.ckpt, a.work, min(t, a.size) // f, f"tile{t}")))
    base = rows[0][2]
    L = [f"# VAE decoder device memory at {a.size}x{a.size}: untiled vs --vae-tile (SD 1.5, issue 21)\n",
         f"Command: `python3 {' '.join(sys.argv)}`; load average at start {load0}.\n",
         "| program | compiled for | tiles per image | kernel launches per image | arena MiB | arena / untiled | "
         "weights MiB | device peak MiB (weights + arena + scratch) | peak / untiled | onnx2cl compile peak RSS MiB |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for name, px, s in rows:
        tl = px // f
        ntiles = 1 if name == "untiled" else len(tile_plan(lat, tl, tl // 4)) ** 2
        L.append(f"| {name} | latent_sample=1,4,{tl},{tl} ({px}x{px} px) | {ntiles} | "
                 f"{s['kernel_launches'] * ntiles} | {s['arena_bytes'] / MIB:.2f} | "
                 f"{s['arena_bytes'] / base['arena_bytes']:.4f} | {s['weights_bytes'] / MIB:.2f} | "
                 f"{s['device_bytes_peak'] / MIB:.2f} | {s['device_bytes_peak'] / base['device_bytes_peak']:.4f} | "
                 f"{s['compile_peak_rss_mib']:.0f} |")
    L.append("")
    for name, px, s in rows:
        L.append(f"- {name}: `{s['cmd']}`")
    md = "\n".join(L) + "\n"
    if a.md:
        open(a.md, "w").write(md)
    print(md)


if __name__ == "__main__":
    main()
