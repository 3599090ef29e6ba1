#!/usr/bin/env python3
"""arch_full.py ONNX2CL_CKPT ONNX2CL ARCH_ROOT WORK ARCH [--no-info] [--sd ONNX2CL_SD] — a full-size architecture folder
(models/arch/ARCH: graphs, name maps and arch.json made by models/make_arch.py) against a
checkpoint with its real key names and shapes (test store.arch_full_ARCH; python3 standard
library only).

What: writes a sparse diffusers folder (every component's canonical keys and shapes from
  arch.json, F16, data left as holes: no disk used) under WORK, then checks
  1. `onnx2cl-ckpt info DIR` recognises exactly ARCH (not another installed architecture: SD 3
     medium vs 3.5 medium vs 3.5 large, Flux dev vs schnell differ in keys or shapes only);
  2. for each model of the architecture, `onnx2cl GRAPH --name-map MAP --weights-from DIR
     --component C --info` with the engine's shapes: every initializer of the graph is found in
     the checkpoint with fitting dims (through its transform), and the parameter count --info
     prints equals the arch.json shapes' count of the keys the name map uses (not with
     --no-info: seconds to a minute per architecture);
  3. with --sd: `onnx2cl-sd -m DIR --info` prints one row per model the run needs, the last row
     their sum, and writes no program, weights or scratch file into its cache; with 2. also each row's weights
     equal onnx2cl --info's weights_bytes_f16 for that model; with --offload its verdict is the largest
     stage (the text encoders' rows together, each other row alone), below the sum.
Exit 0 when all hold; prints what differs otherwise.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

ONE = {"unet": "diffusion_pytorch_model", "vae": "diffusion_pytorch_model",
       "transformer": "diffusion_pytorch_model"}


def write_sparse(path, shapes):
    """shapes: {key: [dims]}, written as F16 with the data left as a hole."""
    h, off = {}, 0
    for k, dims in sorted(shapes.items()):
        n = 2
        for d in dims:
            n *= d
        h[k] = {"dtype": "F16", "shape": dims, "data_offsets": [off, off + n]}
        off += n
    hj = json.dumps(h).encode()
    hj += b" " * (-len(hj) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj)
        f.truncate(8 + len(hj) + off)


def shapes_for(arch, model):
    """The --shape flags the engine (pipeline/sd_engine.c) compiles MODEL with: batch 1, the
    default image size, 77 CLIP tokens, the architecture's T5 length."""
    fam = arch["family"]
    w, hgt = arch.get("default_size", [512, 512])
    cfg = arch["configs"]
    vae = cfg["vae"]
    f = 2 ** (len(vae["block_out_channels"]) - 1)
    lat = vae.get("latent_channels", 4)
    if model == "vae_decoder":
        return [f"latent_sample=1,{lat},{hgt // f},{w // f}"]
    if model == "vae_encoder":
        return [f"sample=1,3,{hgt},{w}"]
    if model.startswith("text_encoder"):
        tok = {"text_encoder_3": "tokenizer_3", "text_encoder_2": "tokenizer_2"}.get(model, "tokenizer")
        n = arch[tok]["max_length"] if tok in arch else 77
        return [f"input_ids=1,{n}"]
    if model == "unet":
        u = cfg["unet"]
        s = [f"sample=1,{u.get('in_channels', 4)},{hgt // f},{w // f}",
             f"encoder_hidden_states=1,77,{u['cross_attention_dim']}"]
        if fam == "sdxl":
            s += [f"text_embeds=1,{u['projection_class_embeddings_input_dim'] - 6 * u['addition_time_embed_dim']}",
                  "time_ids=1,6"]
        return s
    t = cfg["transformer"]
    if fam == "sd3":
        n = 77 + arch["tokenizer_3"]["max_length"]
        return [f"hidden_states=1,{t['in_channels']},{hgt // f},{w // f}",
                f"encoder_hidden_states=1,{n},{t['joint_attention_dim']}",
                f"pooled_projections=1,{t['pooled_projection_dim']}", "timestep=1"]
    n = arch["tokenizer_2"]["max_length"]
    tokens = (hgt // f // 2) * (w // f // 2)
    s = [f"hidden_states=1,{tokens},{t['in_channels']}", f"encoder_hidden_states=1,{n},{t['joint_attention_dim']}",
         f"pooled_projections=1,{t['pooled_projection_dim']}", "timestep=1", f"img_ids={tokens},3",
         f"txt_ids={n},3"]
    if t.get("guidance_embeds"):
        s.append("guidance=1")
    return s


def main():
    ckpt_tool, onnx2cl, root, work, name = sys.argv[1:6]
    adir = os.path.join(root, name)
    arch = json.load(open(os.path.join(adir, "arch.json")))
    shutil.rmtree(work, ignore_errors=True)
    folder = os.path.join(work, name)
    for comp, shapes in arch["keys"].items():
        os.makedirs(os.path.join(folder, comp))
        write_sparse(os.path.join(folder, comp, ONE.get(comp, "model") + ".safetensors"), shapes)
    bad = []
    r = subprocess.run([ckpt_tool, "info", folder, "--arch-dir", root], capture_output=True, text=True)
    m = re.search(r"^architecture: (\S+)", r.stdout, re.M)
    if r.returncode != 0 or not m or m.group(1) != name:
        bad.append(f"onnx2cl-ckpt info: exit {r.returncode}, expected 'architecture: {name}':\n{r.stdout}{r.stderr}")
    f16 = {}
    for model, mi in arch["models"].items() if "--no-info" not in sys.argv[6:] else ():
        comp = mi["component"]
        used = set()
        for line in open(os.path.join(adir, mi["name_map"])):
            f = line.rstrip("\n").split("\t")
            if not line.startswith("#") and len(f) == 4 and f[1] != "-":
                used.update(f[2].split(","))
        want = 0
        for k in used:
            n = 1
            for d in arch["keys"][comp][k]:
                n *= d
            want += n
        cmd = [onnx2cl, os.path.join(adir, mi["graph"]), "--name-map", os.path.join(adir, mi["name_map"]),
               "--weights-from", folder, "--component", comp, "--info", "--weights-dtype", "f16"]
        for s in shapes_for(arch, model):
            cmd += ["--shape", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        wb = re.search(r"^weights_bytes_f16: (\d+)", r.stdout, re.M)
        if wb:
            f16[model] = int(wb.group(1)) / 1048576.0
        got = re.search(r"parameters: ([\d,]+)", r.stdout)
        got = int(got.group(1).replace(",", "")) if got else None
        print(f"{name}/{model}: exit {r.returncode}, parameters {got} (name map's keys: {want})")
        if r.returncode != 0 or got is None or got < want:
            bad.append(f"{model}: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    if "--sd" in sys.argv[6:]:
        sd = sys.argv[sys.argv.index("--sd") + 1]
        cache = os.path.join(work, "cache")
        r = subprocess.run([sd, "-m", folder, "--arch-dir", root, "-p", "x", "--info"], capture_output=True,
                           text=True, env=dict(os.environ, ONNX2CL_CACHE_DIR=cache))
        rows = {m.group(1): [float(x) for x in m.group(2).split()]
                for m in re.finditer(r"^(\w+) +(?:any size|\S+-b\d) +([\d. ]+)$", r.stdout, re.M)}
        total = re.search(r"^all +([\d. ]+)$", r.stdout, re.M)
        fam = arch["family"]
        want = {"text_encoder", "vae_decoder", "unet" if fam in ("sd1", "sd2", "sdxl") else "transformer"}
        want |= {"text_encoder_2"} if fam in ("sdxl", "sd3", "flux") else set()
        want |= {"text_encoder_3"} if fam == "sd3" else set()
        print(f"{name}: onnx2cl-sd --info exit {r.returncode}, rows {sorted(rows)}")
        if r.returncode != 0 or set(rows) != want or not total:
            bad.append(f"onnx2cl-sd --info: exit {r.returncode}, rows {sorted(rows)} (want {sorted(want)}):\n"
                       f"{r.stdout}{r.stderr}")
        else:
            sums = [sum(v[i] for v in rows.values()) for i in range(3)]
            tot = [float(x) for x in total.group(1).split()]
            if any(abs(a - b) > 0.1 + 1e-4 * b for a, b in zip(sums, tot)):
                bad.append(f"onnx2cl-sd --info: the 'all' row {tot} is not the sum {sums}")
            for model, mib in f16.items():
                if model in rows and abs(rows[model][0] - mib) > 0.06:
                    bad.append(f"onnx2cl-sd --info: {model} weights {rows[model][0]} MiB, onnx2cl --info says {mib:.2f}")
            # --offload: the verdict is the largest stage (the text encoders together, each other model alone)
            stage = max([sum(v[2] for m, v in rows.items() if m.startswith("text_encoder"))] +
                        [v[2] for m, v in rows.items() if not m.startswith("text_encoder")])
            r2 = subprocess.run([sd, "-m", folder, "--arch-dir", root, "-p", "x", "--info", "--offload"],
                                capture_output=True, text=True, env=dict(os.environ, ONNX2CL_CACHE_DIR=cache))
            m2 = re.search(r"about the largest stage \(([\d.]+) MiB of the ([\d.]+) MiB sum", r2.stdout)
            print(f"{name}: onnx2cl-sd --info --offload: {m2.group(0) if m2 else r2.stdout[-300:]} (rows: {stage:.0f})")
            if r2.returncode != 0 or not m2 or abs(float(m2.group(1)) - stage) > 1 or \
                    abs(float(m2.group(2)) - tot[2]) > 1 or not float(m2.group(1)) < float(m2.group(2)):
                bad.append(f"onnx2cl-sd --info --offload: want the largest stage {stage:.0f} of {tot[2]:.0f} MiB:\n"
                           f"{r2.stdout}{r2.stderr}")
        for d, _, files in os.walk(cache):  # no program or weights (scheduler_config.json may be there)
            for fn in files:
                if fn.endswith((".o2d", ".weights", ".so")) or fn.startswith(".tmp"):
                    bad.append(f"onnx2cl-sd --info wrote {os.path.join(d, fn)}")
    shutil.rmtree(work, ignore_errors=True)
    if bad:
        print("\n".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
