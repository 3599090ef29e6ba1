#!/usr/bin/env python3
"""serve_flow_test.py ONNX2CL_SD WORK_DIR — `onnx2cl-sd serve` on SD 3 and Flux single-file checkpoints
(tests/pipeline/{sd3,flux}: the tiny models as one SAI / ComfyUI file, models/make_single_files.py),
driven by the webuiapi client (PyPI) and raw HTTP:

  1. Flux dev (served with an architecture copy without T5's spiece.model and --t5-tokenizer naming it):
     webuiapi txt2img (cfg_scale 1, Forge's distilled_cfg_scale left out: 3.5) == the CLI's
     PNG for the same parameters, value for value, and within one 8-bit level of diffusers' FluxPipeline
     image (tests/pipeline/flux case c); the infotext says "Sampler: Euler" and "Distilled CFG Scale: 3.5";
     a raw request with distilled_cfg_scale 5, 6 steps and the long prompt == diffusers' case d
     (within one level); true CFG (cfg_scale 4 + a negative prompt) == case e;
  2. SD 3: webuiapi txt2img with guidance == diffusers' StableDiffusion3Pipeline image (case a, within one
     level) and the CLI's PNG; inpainting == StableDiffusion3InpaintPipeline's latents decoded (inp case a),
     Only masked (the box = the whole image) the same image;
     img2img (webuiapi, denoising_strength) == diffusers' FluxImg2ImgPipeline (i2i case c, within one level);
     a <lora:NAME:W> tag (--lora-dir; a diffusers/PEFT transformer LoRA) == diffusers' load_lora_weights image;
     inpainting (raw img2img with a mask, Whole picture) == diffusers' FluxInpaintPipeline (inp case c) with
     A1111's paste-back of the init image outside the mask (within one level);
  3. refusals answered 422 while the server goes on serving: a sampler other than Euler, a Karras
     schedule (as a field and as "Euler Karras"), an unknown LoRA tag, an SD 3 LoRA on Flux, a size that is not a multiple of 16,
     distilled_cfg_scale not a number;
     after them the first request again gives the same image;
  4. Black Forest Labs' transformer-only Flux schnell file served with --vae / --clip-l / --t5xxl (the
     component files): txt2img == diffusers' FluxPipeline (case a, within one level); Only masked inpainting
     of a 48x40 image (the 32x32 area pasted back) == diffusers' padding_mask_crop PNG; /progress's
     current_image during a run is the 16-channel latent preview (4x4 for 32x32); a --vae file that is
     not there: the server does not start, the message names the flag and the file.
"""
import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
from PIL import Image
import webuiapi

sd, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
pipe = os.path.normpath(os.path.join(here, "..", "pipeline"))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, ONNX2CL_CACHE_DIR=os.path.join(work, "cache"))
loras = os.path.join(work, "loras")  # --lora-dir: the Flux LoRA under its own name, the SD 3 one as sd3_lora
os.makedirs(loras)
shutil.copy(os.path.join(pipe, "flux", "lora_transformer.safetensors"), loras)
shutil.copy(os.path.join(pipe, "sd3", "lora_transformer.safetensors"), os.path.join(loras, "sd3_lora.safetensors"))
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def pixels(img):
    return np.asarray(img.convert("RGB")).astype(int)


def levels(img, ref_npy):
    """max |8-bit pixel - round(diffusers' [0,1] image * 255)|"""
    ref = np.load(ref_npy)[0].transpose(1, 2, 0)
    return int(np.abs(pixels(img) - np.rint(np.clip(ref, 0, 1) * 255)).max())


def levels_overlay(img, ref_npy, init, mask):
    """levels() against diffusers' image with A1111's apply_overlay (the server's inpainting result): the init
    image's pixels where the (binary) mask is black, diffusers' where it is white"""
    ref = np.rint(np.clip(np.load(ref_npy)[0].transpose(1, 2, 0), 0, 1) * 255)
    m = np.asarray(mask.convert("L"), dtype=np.float64)[..., None] / 255.0
    want = np.rint(ref * m + np.asarray(init.convert("RGB"), dtype=np.float64) * (1 - m))
    return int(np.abs(pixels(img) - want).max())


def cases(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        out[f[0]] = f
    return out


def serve(ckpt, tag, *extra):
    log = open(os.path.join(work, f"{tag}.log"), "w+")
    srv = subprocess.Popen([sd, "serve", "-m", ckpt, "--listen", "127.0.0.1:0", "--width", "32", "--height", "32",
                            "--lora-dir", loras, "--weights-dtype", "f32", "--quiet", *extra], env=env,
                           stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(1200):
        log.seek(0)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read())
        if m:
            return srv, int(m.group(1)), log
        if srv.poll() is not None:
            break
        time.sleep(0.05)
    log.seek(0)
    print(log.read()[-3000:])
    srv.kill()
    sys.exit(f"FAIL: the server on {ckpt} did not start")


def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def b64_of(img):
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def image_of(resp):
    return Image.open(io.BytesIO(base64.b64decode(resp["images"][0])))


def cli_png(ckpt, tag, *flags):
    out = os.path.join(work, tag + ".png")
    subprocess.run([sd, "-m", ckpt, "--width", "32", "--height", "32", "--weights-dtype", "f32", "--quiet",
                    "-o", out, *flags], env=env, check=True, stderr=subprocess.DEVNULL)
    return Image.open(out)


# ---- 1. Flux dev ----
fd = os.path.join(pipe, "flux")
fc = cases(os.path.join(fd, "cases.txt"))
fck = os.path.join(fd, "tiny_flux_dev.safetensors")
# the Flux file with an architecture copy that ships no T5 tokenizer (as the full-size ones) and
# serve --t5-tokenizer naming the file: the same images as with the architecture's own
arch_nt5 = os.path.join(work, "arch")
shutil.copytree(os.path.join(here, "..", "..", "models", "arch", "tiny_flux_dev"), os.path.join(arch_nt5, "tiny_flux_dev"))
os.remove(os.path.join(arch_nt5, "tiny_flux_dev", "tokenizer_2", "spiece.model"))
srv, port, log = serve(fck, "flux", "--arch-dir", arch_nt5, "--t5-tokenizer",
                       os.path.join(here, "..", "..", "models", "arch", "tiny_flux_dev", "tokenizer_2", "spiece.model"))
try:
    api = webuiapi.WebUIApi(host="127.0.0.1", port=port)
    c = fc["c"]  # dev, 4 steps, guidance 3.5, cfg 1
    r = api.txt2img(prompt=c[5], negative_prompt="", steps=int(c[2]), cfg_scale=float(c[4]), seed=42, width=32,
                    height=32, sampler_name="Euler")
    cli = cli_png(fck, "flux_c", "-p", c[5], "--steps", c[2], "--guidance", c[3], "--cfg", c[4], "--seed", "42")
    diff = int((pixels(r.image) != pixels(cli)).sum())
    check(diff == 0, f"Flux dev via webuiapi == the CLI's PNG ({diff} values differ)")
    lv = levels(r.image, os.path.join(fd, "c_image.npy"))
    check(lv <= 1, f"Flux dev via webuiapi vs diffusers' FluxPipeline (case c): max {lv} level(s)")
    info = r.info["infotexts"][0]
    check("Sampler: Euler" in info and "Distilled CFG Scale: 3.5" in info and "CFG scale: 1" in info,
          f"Flux infotext: {info.splitlines()[-1]}")
    d = fc["d"]  # dev, 6 steps, guidance 5, the long prompt
    st, body = post(port, "/sdapi/v1/txt2img", {"prompt": d[5], "steps": int(d[2]), "cfg_scale": 1.0, "seed": 42,
                                                "width": 32, "height": 32, "distilled_cfg_scale": float(d[3])})
    lv = levels(image_of(body), os.path.join(fd, "d_image.npy")) if st == 200 else -1
    check(st == 200 and 0 <= lv <= 1, f"distilled_cfg_scale {d[3]}, long prompt vs diffusers (case d): {st}, {lv} level(s)")
    e = fc["e"]  # dev, true CFG 4 with a negative prompt
    st, body = post(port, "/sdapi/v1/txt2img", {"prompt": e[5], "negative_prompt": e[6], "steps": int(e[2]),
                                                "cfg_scale": float(e[4]), "seed": 42, "width": 32, "height": 32,
                                                "sampler_name": "Euler"})
    lv = levels(image_of(body), os.path.join(fd, "e_image.npy")) if st == 200 else -1
    check(st == 200 and 0 <= lv <= 1, f"true CFG {e[4]} with a negative prompt vs diffusers (case e): {st}, {lv} level(s)")
    # img2img (FluxImg2ImgPipeline): webuiapi img2img of tests/pipeline/img2img/init.png == diffusers' i2i case c
    ic = cases(os.path.join(fd, "i2i_cases.txt"))["c"]  # case variant steps cfg guidance strength prompt negative
    init = Image.open(os.path.join(pipe, "img2img", "init.png"))
    r3 = api.img2img(images=[init], prompt=ic[6], steps=int(ic[2]), cfg_scale=float(ic[3]), denoising_strength=float(ic[5]),
                     seed=42, width=32, height=32, sampler_name="Euler")
    lv = levels(r3.image, os.path.join(fd, "i2i_c_image.npy"))
    check(lv <= 1 and f"Denoising strength: {float(ic[5])}" in r3.info["infotexts"][0],
          f"Flux img2img via webuiapi vs diffusers' FluxImg2ImgPipeline (strength {ic[5]}): max {lv} level(s)")
    # inpainting (FluxInpaintPipeline): A1111's Whole picture, no mask blur == diffusers' inpaint case c
    pc = cases(os.path.join(fd, "inp_cases.txt"))["c"]  # case variant steps cfg guidance strength mask prompt neg
    st, body = post(port, "/sdapi/v1/img2img", {
        "prompt": pc[7], "init_images": [b64_of(init)], "mask": b64_of(Image.open(os.path.join(pipe, "img2img", pc[6]))),
        "denoising_strength": float(pc[5]), "mask_blur": 0, "inpaint_full_res": False, "inpainting_fill": 1,
        "steps": int(pc[2]), "cfg_scale": float(pc[3]), "distilled_cfg_scale": float(pc[4]), "seed": 42,
        "width": 32, "height": 32, "sampler_name": "Euler"})
    lv = levels_overlay(image_of(body), os.path.join(fd, "inp_c_image.npy"), init,
                        Image.open(os.path.join(pipe, "img2img", pc[6]))) if st == 200 else -1
    check(st == 200 and 0 <= lv <= 1 and "Mask blur: 0" in body["info"],
          f"Flux inpainting vs diffusers' FluxInpaintPipeline (case c): {st}, {lv} level(s) {'' if st == 200 else body}")
    # a LoRA tag (diffusers/PEFT LoRA of the transformer, --lora-dir): diffusers' load_lora_weights image
    lc = cases(os.path.join(fd, "lora_cases.txt"))["b"]  # case steps cfg guidance weight prompt
    r4 = api.txt2img(prompt=f"{lc[5]} <lora:lora_transformer:{lc[4]}>", steps=int(lc[1]), cfg_scale=float(lc[2]),
                     seed=42, width=32, height=32, sampler_name="Euler")
    lv = levels(r4.image, os.path.join(fd, "lora_b_image.npy"))
    info = r4.info["infotexts"][0]
    check(lv <= 1 and "<lora:lora_transformer:" in info and "Lora hashes: " in info,
          f"Flux + <lora:lora_transformer:{lc[4]}> vs diffusers' load_lora_weights: max {lv} level(s)")
    # ---- 3. refusals (422), the server keeps serving ----
    base = {"prompt": "a cat", "steps": 2, "cfg_scale": 1.0, "seed": 1, "width": 32, "height": 32}
    png = io.BytesIO()
    r.image.save(png, format="PNG")
    b64 = base64.b64encode(png.getvalue()).decode()
    bad = [("sampler DPM++ 2M", "/sdapi/v1/txt2img", dict(base, sampler_name="DPM++ 2M")),
           ("Karras schedule", "/sdapi/v1/txt2img", dict(base, scheduler="Karras")),
           ("sampler Euler Karras", "/sdapi/v1/txt2img", dict(base, sampler_name="Euler Karras")),
           ("an unknown LoRA tag", "/sdapi/v1/txt2img", dict(base, prompt="a cat <lora:foo:1>")),
           ("an SD 3 LoRA on Flux", "/sdapi/v1/txt2img", dict(base, prompt="a cat <lora:sd3_lora:1>")),
           ("40x40", "/sdapi/v1/txt2img", dict(base, width=40, height=40)),
           ("distilled_cfg_scale text", "/sdapi/v1/txt2img", dict(base, distilled_cfg_scale="high"))]
    for name, path, body in bad:
        st, msg = post(port, path, body)
        check(st == 422, f"refused {name}: {st} {str(msg)[:150]}")
    r2 = api.txt2img(prompt=c[5], negative_prompt="", steps=int(c[2]), cfg_scale=float(c[4]), seed=42, width=32,
                     height=32, sampler_name="Euler")
    check(int((pixels(r2.image) != pixels(r.image)).sum()) == 0, "after the refusals: the same image again")
finally:
    srv.terminate()
    check(srv.wait(20) == 0, "Flux server: exit 0 after SIGTERM")

# ---- 2. SD 3 ----
sd3d = os.path.join(pipe, "sd3")
sc = cases(os.path.join(sd3d, "cases.txt"))
sck = os.path.join(sd3d, "tiny_sd3.safetensors")
srv, port, log = serve(sck, "sd3")
try:
    api = webuiapi.WebUIApi(host="127.0.0.1", port=port)
    a = sc["a"]  # name steps cfg prompt negative
    r = api.txt2img(prompt=a[3], negative_prompt=a[4], steps=int(a[1]), cfg_scale=float(a[2]), seed=42, width=32,
                    height=32, sampler_name="Euler")
    lv = levels(r.image, os.path.join(sd3d, "a_image.npy"))
    check(lv <= 1, f"SD 3 via webuiapi vs diffusers' StableDiffusion3Pipeline (case a): max {lv} level(s)")
    cli = cli_png(sck, "sd3_a", "-p", a[3], "-n", a[4], "--steps", a[1], "--cfg", a[2], "--seed", "42")
    diff = int((pixels(r.image) != pixels(cli)).sum())
    check(diff == 0, f"SD 3 via webuiapi == the CLI's PNG ({diff} values differ)")
    check("Sampler: Euler" in r.info["infotexts"][0], "SD 3 infotext names Euler")
    # inpainting (StableDiffusion3InpaintPipeline, decoded with the VAE's shift) == diffusers' inpaint case a
    pa = cases(os.path.join(sd3d, "inp_cases.txt"))["a"]
    req3 = {
        "prompt": pa[7], "negative_prompt": pa[8], "denoising_strength": float(pa[5]), "mask_blur": 0,
        "init_images": [b64_of(Image.open(os.path.join(pipe, "img2img", "init.png")))],
        "mask": b64_of(Image.open(os.path.join(pipe, "img2img", pa[6]))), "inpaint_full_res": False,
        "inpainting_fill": 1, "steps": int(pa[2]), "cfg_scale": float(pa[3]), "seed": 42, "width": 32, "height": 32}
    st, body = post(port, "/sdapi/v1/img2img", req3)
    lv = levels_overlay(image_of(body), os.path.join(sd3d, "inp_a_image.npy"),
                        Image.open(os.path.join(pipe, "img2img", "init.png")),
                        Image.open(os.path.join(pipe, "img2img", pa[6]))) if st == 200 else -1
    check(st == 200 and 0 <= lv <= 1, f"SD 3 inpainting vs diffusers' inpaint case a: {st}, {lv} level(s) {'' if st == 200 else body}")
    # Inpaint area "Only masked" (A1111's default; webuiapi's inpaint_full_res True, padding 32): the box around
    # the circle mask grown by 32 pixels is the whole 32x32 image, so the same image as Whole picture
    req = dict(req3, inpaint_full_res=True, inpaint_full_res_padding=32)
    st2, body2 = post(port, "/sdapi/v1/img2img", req)
    same = st == 200 and st2 == 200 and int((pixels(image_of(body2)) != pixels(image_of(body))).sum()) == 0
    check(same, f"SD 3 Only masked inpainting (the box = the whole image) == Whole picture: {st2} {'' if st2 == 200 else body2}")
finally:
    srv.terminate()
    check(srv.wait(20) == 0, "SD 3 server: exit 0 after SIGTERM")
# ---- 3. a Flux file without its VAE and text encoders + serve --vae --clip-l --t5xxl ----
# (Black Forest Labs' flux1-schnell.safetensors beside ae / clip_l / t5xxl files: sd.cpp's and Forge's set-up)
fs = os.path.join(fd, "tiny_flux_schnell")
srv, port, log = serve(os.path.join(fd, "tiny_flux_schnell_bfl.safetensors"), "flux_bfl",
                       "--vae", os.path.join(fs, "vae", "diffusion_pytorch_model.safetensors"),
                       "--clip-l", os.path.join(fs, "text_encoder", "model.safetensors"),
                       "--t5xxl", os.path.join(fs, "text_encoder_2", "model.safetensors"))
try:
    a = fc["a"]  # schnell, 4 steps, no guidance
    st, body = post(port, "/sdapi/v1/txt2img", {"prompt": a[5], "steps": int(a[2]), "cfg_scale": float(a[4]),
                                                "seed": 42, "width": 32, "height": 32, "sampler_name": "Euler"})
    lv = levels(image_of(body), os.path.join(fd, "a_image.npy")) if st == 200 else -1
    check(st == 200 and 0 <= lv <= 1, f"BFL Flux file + --vae/--clip-l/--t5xxl vs diffusers (case a): {st}, {lv} level(s)")
    # Only masked (inpaint_full_res, padding 4) on a 48x40 image: the box around the mask generated at 32x32 and
    # pasted back == diffusers' FluxInpaintPipeline with padding_mask_crop 4 (tests/pipeline/flux/inp_om_image.png)
    big = Image.open(os.path.join(pipe, "img2img", "init_big.png"))
    st, body = post(port, "/sdapi/v1/img2img", {
        "prompt": a[5], "init_images": [b64_of(big)], "mask_blur": 0, "denoising_strength": 0.75,
        "mask": b64_of(Image.open(os.path.join(pipe, "img2img", "mask_om_rect.png"))), "inpaint_full_res": True,
        "inpaint_full_res_padding": 4, "inpainting_fill": 1, "steps": 4, "cfg_scale": 1.0, "seed": 42, "width": 32,
        "height": 32, "sampler_name": "Euler"})
    ref = np.asarray(Image.open(os.path.join(fd, "inp_om_image.png")).convert("RGB"), dtype=np.int64)
    got = pixels(image_of(body)).astype(np.int64) if st == 200 else None
    lv = int(np.abs(got - ref).max()) if got is not None and got.shape == ref.shape else -1
    check(0 <= lv <= 1, f"Flux Only masked inpainting (48x40, 32x32 area) vs diffusers' padding_mask_crop: {st}, "
          f"{lv} level(s) {'' if st == 200 else body}")
    # /progress during a long run: current_image is the 16-channel latents' preview (A1111's Flux coefficients),
    # one pixel per latent (32x32 image: 4x4 latents); then interrupted
    long_run = threading.Thread(target=post, args=(port, "/sdapi/v1/txt2img", {
        "prompt": a[5], "steps": 150, "cfg_scale": 1.0, "seed": 7, "width": 32, "height": 32}))
    long_run.start()
    cur = None
    for _ in range(1500):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/sdapi/v1/progress?skip_current_image=false",
                                    timeout=30) as pr:
            cur = json.loads(pr.read()).get("current_image")
        if cur or not long_run.is_alive():
            break
        time.sleep(0.01)
    post(port, "/sdapi/v1/interrupt", {})
    long_run.join(120)
    size = Image.open(io.BytesIO(base64.b64decode(cur))).size if cur else None
    check(size == (4, 4), f"Flux /progress current_image: a 4x4 latent preview PNG ({size})")
finally:
    srv.terminate()
    check(srv.wait(20) == 0, "BFL Flux server: exit 0 after SIGTERM")
# a component file that is not there: the server refuses to start, naming the flag and the file
bad = subprocess.run([sd, "serve", "-m", os.path.join(fd, "tiny_flux_schnell_bfl.safetensors"), "--listen",
                      "127.0.0.1:0", "--vae", os.path.join(work, "no_such_ae.safetensors"), "--quiet"], env=env,
                     capture_output=True, text=True, timeout=120)
check(bad.returncode != 0 and "no_such_ae.safetensors: no such file" in bad.stderr and "--vae" in bad.stderr,
      f"serve --vae MISSING: exit {bad.returncode}, {bad.stderr.strip()[-200:]}")
print(f"serve.flow: {len(fails)} failed")
sys.exit(1 if fails else 0)
