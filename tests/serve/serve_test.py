#!/usr/bin/env python3
"""serve_test.py ONNX2CL_SD WORK_DIR — `onnx2cl-sd serve` (A1111/Forge API) on the tiny SD 1.5
checkpoint of tests/pipeline/oneshot, driven by a real third-party A1111 client (webuiapi, PyPI)
and by urllib:

  1. txt2img through webuiapi: the image equals the CLI's PNG for the same parameters, pixel for
     pixel (prompt, negative, Euler a, 4 steps, cfg 7.5, seed 42, 32x32); seed -1 is replaced by a
     random seed that info reports; the PNG's "parameters" chunk is A1111's infotext; img2img of
     that image (strength 0.6, 10 steps) equals the CLI's --init-image PNG;
  2. progress during a 300-step run (sampling_step grows, progress in (0, 1), a current_image preview
     PNG), then /interrupt: the job ends early with info.interrupted and no image; /skip of the
     first of two images: one image, the second seed; the server runs with --taesd: current_image
     at a step equals the CLI's --taesd --preview at that step, pixel for pixel;
  3. queueing: two concurrent requests are answered in FIFO order (the second waits, reported as
     queued by /progress) and the second image is the reference image;
  4. options: /sd-models lists --ckpt-dir; sd_model_checkpoint switches to the diffusers folder and
     back (the image equals the reference again); names outside the list (paths) are refused;
  4b. A1111 fields: override_settings, masks (whole picture), inpaint_full_res "Only masked" (true or
     absent, A1111's default; inpaint_full_res_padding) == the CLI's --only-masked, eta, resize_mode 0;
  5. png-info round trip (webuiapi.png_info): the infotext and its parsed Steps/Seed/Prompt;
  6. bad input, each answered 4xx naming the problem/limit, /health answering after every one:
     malformed JSON, a JSON array, huge width, negative steps, steps as a string, unknown sampler,
     unknown scheduler, too many images, too long a prompt, an oversized body, no / wrong
     credentials, unknown route, wrong method, bad img2img inputs (inpaint_full_res_padding negative,
     text, fractional; an all-black mask with "Only masked"), a body that is not UTF-8; then
     a mutation fuzz of 300 bodies (none answered 5xx);
  7. a client that disconnects mid-generation loses its job; the server goes on serving;
  8. SIGTERM: the server exits 0;
  9. a second server on compiled models (--models + --hf: the cache's programs and weights) makes
     the same image, refuses other sizes, LoRA tags and switches, and drops slow clients (partial
     headers) after --timeout while serving others;
 10. two workers (--devices 0,0): two jobs at once, a checkpoint switch that waits for both and
     switches both, concurrent requests all equal to the reference.
Prints the wall time of each part.
"""
import base64
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
from PIL import Image, ImageFilter
import webuiapi

sd, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
oneshot = os.path.normpath(os.path.join(here, "..", "pipeline", "oneshot"))
lora_dir = os.path.normpath(os.path.join(here, "..", "lora"))
taesd = os.path.normpath(os.path.join(here, "..", "..", "models", "ckpt", "taesd", "tiny_taesd_decoder.safetensors"))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, ONNX2CL_CACHE_DIR=os.path.join(work, "cache"))
ckdir = os.path.join(work, "ckpts")
os.makedirs(ckdir)
os.symlink(os.path.join(oneshot, "tiny_sd15.safetensors"), os.path.join(ckdir, "tiny_sd15.safetensors"))
os.symlink(os.path.join(oneshot, "tiny_sd15"), os.path.join(ckdir, "tiny_sd15"))
with open(os.path.join(ckdir, "broken.safetensors"), "wb") as f:  # listed, but not a checkpoint
    f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
PROMPT = "a photo of an astronaut riding a horse on mars"
NEG = "blurry, low quality"
USER, PASS = "tester", "s3cret:with:colons"
fails = []
t_start = time.time()
marks = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL", what, flush=True)


def mark(name):
    marks.append((name, time.time()))
    print(f"-- {name}: {marks[-1][1] - (marks[-2][1] if len(marks) > 1 else t_start):.2f} s", flush=True)


def pixels(img):
    return np.asarray(img.convert("RGB"))


# the CLI's reference image (first run: compiles into the fresh cache)
ref_png = os.path.join(work, "ref.png")
subprocess.run([sd, "-m", os.path.join(ckdir, "tiny_sd15.safetensors"), "-p", PROMPT, "-n", NEG, "--steps", "4",
                "--cfg", "7.5", "--seed", "42", "--scheduler", "euler_a", "--width", "32", "--height", "32",
                "--quiet", "-o", ref_png], env=env, check=True, stderr=subprocess.DEVNULL)
ref = pixels(Image.open(ref_png))
REF_B64 = base64.b64encode(open(ref_png, "rb").read()).decode()
# the CLI's img2img of that image (strength 0.6, 10 steps): the reference of the server's img2img
ref_i2i_png = os.path.join(work, "ref_i2i.png")
subprocess.run([sd, "-m", os.path.join(ckdir, "tiny_sd15.safetensors"), "-p", PROMPT, "-n", NEG, "--steps", "10",
                "--cfg", "7.5", "--seed", "42", "--scheduler", "euler_a", "--init-image", ref_png, "--strength", "0.6",
                "--quiet", "-o", ref_i2i_png], env=env, check=True, stderr=subprocess.DEVNULL)
ref_i2i = pixels(Image.open(ref_i2i_png))
mark("CLI references (compile into a fresh cache)")

log = open(os.path.join(work, "server.log"), "w+")
srv = subprocess.Popen([sd, "serve", "-m", os.path.join(ckdir, "tiny_sd15.safetensors"), "--ckpt-dir", ckdir,
                        "--lora-dir", lora_dir, "--listen", "127.0.0.1:0", "--width", "32", "--height", "32",
                        "--api-auth", f"{USER}:{PASS}", "--max-body", "65536", "--max-prompt", "4096",
                        "--max-steps", "300", "--taesd", taesd, "--quiet"], env=env, stdout=subprocess.DEVNULL,
                       stderr=log)
import atexit
atexit.register(lambda: srv.poll() is None and srv.kill())
port = None
for _ in range(300):
    log.seek(0)
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read())
    if m:
        port = int(m.group(1))
        break
    if srv.poll() is not None:
        break
    time.sleep(0.05)
if not port:
    log.seek(0)
    print(log.read())
    sys.exit("FAIL: the server did not start")
base = f"http://127.0.0.1:{port}"
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASS}".encode()).decode()
mark(f"server up on port {port}")


def call(method, path, body=None, raw=None, auth=AUTH, timeout=60):
    """(status, parsed JSON or text) of one request."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method)
    if auth:
        req.add_header("Authorization", auth)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def healthy(after):
    s, h = call("GET", "/health")
    check(s == 200 and h.get("status") == "ok", f"/health after {after}: {s} {h}")


api = webuiapi.WebUIApi(host="127.0.0.1", port=port, sampler="Euler a", steps=4)
api.set_auth(USER, PASS)

# 1. txt2img == the CLI's image
res = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                  sampler_name="Euler a", steps=4)
img = res.image
check(img.size == (32, 32), f"txt2img size {img.size}")
diff = int((pixels(img) != ref).sum())
check(diff == 0, f"txt2img image differs from the CLI's in {diff} values")
check(res.info.get("seed") == 42 and res.info.get("all_seeds") == [42], f"info seeds {res.info.get('all_seeds')}")
check(res.parameters.get("prompt") == PROMPT and res.parameters.get("steps") == 4, "parameters echo")
infotext = img.info.get("parameters", "")
check(infotext == res.info["infotexts"][0], "PNG parameters chunk == info.infotexts[0]")
check(re.fullmatch(re.escape(PROMPT + "\nNegative prompt: " + NEG + "\nSteps: 4, Sampler: Euler a, Schedule type: Automatic, CFG scale: 7.5, "
                             "Seed: 42, Size: 32x32, Model hash: ") + "[0-9a-f]{10}" +
                   re.escape(", Model: tiny_sd15, Version: onnx2cl-sd ") + ".*", infotext), f"infotext {infotext!r}")
print(f"1. txt2img via webuiapi == CLI PNG (32x32x3, 0 values differ); infotext: {infotext.splitlines()[-1]}")
res2 = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=-1, cfg_scale=7.5, width=32, height=32, steps=4,
                   batch_size=2)
seeds = res2.info.get("all_seeds", [])
check(len(res2.images) == 2 and len(seeds) == 2 and 0 <= seeds[0] < 2**32 and seeds[1] == seeds[0] + 1,
      f"seed -1, batch 2: {len(res2.images)} images, seeds {seeds}")
check(res2.info["seed"] == seeds[0] and f"Seed: {seeds[0]}," in res2.images[0].info.get("parameters", ""),
      "random seed reported in info and in the PNG")
i2i = api.img2img(images=[Image.open(ref_png)], prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5,
                  width=32, height=32, sampler_name="Euler a", steps=10, denoising_strength=0.6)
diff = int((pixels(i2i.image) != ref_i2i).sum())
check(diff == 0, f"img2img image differs from the CLI's --init-image in {diff} values")
check("Denoising strength: 0.6" in i2i.image.info.get("parameters", "") and i2i.info.get("denoising_strength") == 0.6,
      "img2img infotext / info")
print(f"1b. img2img via webuiapi (strength 0.6, 10 steps) == CLI --init-image PNG ({diff} values differ)")
mark("txt2img + random seed batch + img2img")

# 1c. A1111's prompt syntax (issue 21 item 5): the server's default emphasis is "Original" (the CLI's
# --emphasis Original, long prompts chunked), override_settings.emphasis "None" and the CLI's
# default (diffusers) agree under 75 tokens; a bad emphasis is a 422
EMP = "a (photo:1.3) of an [astronaut] riding a ((horse)) on mars"
LONG = ", ".join([PROMPT] * 5)  # 2 chunks of the tiny tokenizer: the server compiles the UNet for 154 tokens


def cli_png(tag, prompt, *flags):
    path = os.path.join(work, tag + ".png")
    subprocess.run([sd, "-m", os.path.join(ckdir, "tiny_sd15.safetensors"), "-p", prompt, "-n", NEG, "--steps", "4",
                    "--cfg", "7.5", "--seed", "42", "--scheduler", "euler_a", "--width", "32", "--height", "32",
                    "--quiet", "-o", path, *flags], env=env, check=True, stderr=subprocess.DEVNULL)
    return pixels(Image.open(path))


for tag, prompt, flags, over in (("emp_orig", EMP, ["--emphasis", "Original"], None),
                                 ("emp_none", EMP, [], {"emphasis": "None"}),
                                 ("emp_long", LONG, ["--emphasis", "Original"], None),
                                 ("emp_skip", EMP, ["--emphasis", "Original", "--clip-skip", "2"],
                                  {"CLIP_stop_at_last_layers": 2})):
    want = cli_png(tag, prompt, *flags)
    kw = {"override_settings": over} if over else {}
    r = api.txt2img(prompt=prompt, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                    sampler_name="Euler a", steps=4, **kw)
    diff = int((pixels(r.image) != want).sum())
    check(diff == 0, f"{tag}: server image differs from the CLI's ({' '.join(flags) or 'default'}) in {diff} values")
    check(("Emphasis: None" in r.image.info.get("parameters", "")) == (tag == "emp_none"), f"{tag}: Emphasis key")
    check(("Clip skip: 2" in r.image.info.get("parameters", "")) == (tag == "emp_skip"), f"{tag}: Clip skip key")
st, body = call("POST", "/sdapi/v1/options", {"emphasis": "Bogus"})
check(st == 422 and "Original" in json.dumps(body), f"options emphasis Bogus: {st} {str(body)[:200]}")
st, body = call("POST", "/sdapi/v1/options", {"CLIP_stop_at_last_layers": 0})
check(st == 422, f"options CLIP_stop_at_last_layers 0: {st} {str(body)[:200]}")
st, body = call("POST", "/sdapi/v1/txt2img", {"prompt": "a (cat:1.2.3)", "steps": 1, "width": 32, "height": 32})
check(st >= 400 and "byte" in json.dumps(body), f"txt2img bad weight: {st} {str(body)[:200]}")
print("1c. emphasis: server default Original == CLI --emphasis Original (brackets, 2-chunk prompt), "
      "override_settings None == CLI default, CLIP_stop_at_last_layers 2 == CLI --clip-skip 2; bad values 422")
mark("emphasis")

# 2. progress during a long run, then interrupt
out = {}


def long_job(key, steps, seed=7, **kw):
    t0 = time.time()
    out[key] = call("POST", "/sdapi/v1/txt2img", {"prompt": PROMPT, "steps": steps, "seed": seed, "width": 32,
                                                  "height": 32, "sampler_name": "Euler a", "cfg_scale": 7.5, **kw})
    out[key + "_t"] = (t0, time.time())


th = threading.Thread(target=long_job, args=("long", 300))
th.start()
seen, prog = [], None
t_end = time.time() + 20
while time.time() < t_end:
    prog = api.get_progress()
    st = prog["state"]
    if st["sampling_step"] > 0:
        seen.append(st["sampling_step"])
    if len(seen) >= 3 and seen[-1] > seen[0]:
        break
    time.sleep(0.05)
check(len(seen) >= 3 and seen[-1] > seen[0], f"progress steps seen {seen}")
check(prog is not None and 0 < prog["progress"] < 1 and prog["state"]["sampling_steps"] == 300 and
      prog["state"]["job_count"] == 1 and prog["eta_relative"] > 0, f"progress {dict(prog or {}, current_image='...')}")
cur = prog.get("current_image") if prog else None
check(cur is not None and Image.open(io.BytesIO(base64.b64decode(cur))).size[0] > 0, "current_image preview PNG")
api.interrupt()
th.join(30)
s, r = out.get("long", (0, None))
info = json.loads(r["info"]) if s == 200 else {}
check(s == 200 and r["images"] == [] and info.get("interrupted") is True, f"interrupted job: {s} {str(r)[:200]}")
t0, t1 = out["long_t"]
print(f"2. progress seen at steps {seen[:3]}..{seen[-1]} of 300, preview {Image.open(io.BytesIO(base64.b64decode(cur))).size if cur else None}; "
      f"interrupt answered after {t1 - t0:.2f} s with {len(r['images']) if s == 200 else '?'} images")
# /skip: the first of two images is skipped, the second is made
ths = threading.Thread(target=long_job, args=("skip", 80, 11), kwargs={"n_iter": 2})
ths.start()
while api.get_progress()["state"]["sampling_step"] == 0:
    time.sleep(0.02)
api.skip()
ths.join(30)
s, r = out.get("skip", (0, None))
info = json.loads(r["info"]) if s == 200 else {}
check(s == 200 and len(r["images"]) == 1 and info.get("all_seeds") == [12] and not info.get("interrupted"),
      f"skip: {s} {len(r['images']) if s == 200 else ''} images, seeds {info.get('all_seeds')}")
s, idle = call("GET", "/sdapi/v1/progress")
check(s == 200 and idle["state"]["job"] == "" and idle["current_image"] is None and idle["progress"] == 0,
      f"idle progress {idle}")
mark("progress + interrupt")

# 2c. --taesd: current_image is TAESD's decode of the latents at the step reported (A1111's live
# preview "TAESD"; TAESD upsamples 8x: 128x128 from the tiny checkpoint's 16x16 latents, whose latent
# approximation is 16x16): equal to the CLI's --taesd --preview at that step, pixel for pixel (a 60-step job, polled until a step s in (30, 60); the CLI's --preview-every s writes
# step s last)
pv_step, pv_img = 0, None
for attempt in range(3):
    tj = threading.Thread(target=lambda: out.__setitem__("pv", call(
        "POST", "/sdapi/v1/txt2img", {"prompt": PROMPT, "negative_prompt": NEG, "steps": 60, "seed": 9, "width": 32,
                                      "height": 32, "sampler_name": "Euler a", "cfg_scale": 7.5})))
    tj.start()
    while tj.is_alive():
        s, p = call("GET", "/sdapi/v1/progress")
        k = p["state"]["sampling_step"] if s == 200 else 0
        if 30 < k < 60 and p.get("current_image"):
            im = Image.open(io.BytesIO(base64.b64decode(p["current_image"])))
            if im.size == (128, 128):
                pv_step, pv_img = k, pixels(im)
                break
        time.sleep(0.01)
    tj.join(60)
    if pv_img is not None:
        break
check(pv_img is not None, "--taesd: no 128x128 (TAESD) current_image seen past step 30 of 60")
if pv_img is not None:
    pv_png = os.path.join(work, "taesd_preview.png")
    subprocess.run([sd, "-m", os.path.join(ckdir, "tiny_sd15.safetensors"), "-p", PROMPT, "-n", NEG, "--steps", "60",
                    "--cfg", "7.5", "--seed", "9", "--scheduler", "euler_a", "--width", "32", "--height", "32",
                    "--taesd", taesd, "--preview", pv_png, "--preview-every", str(pv_step), "--quiet", "-o",
                    os.path.join(work, "taesd_out.png")], env=env, check=True, stderr=subprocess.DEVNULL)
    diff = int((pixels(Image.open(pv_png)) != pv_img).sum())
    check(diff == 0, f"--taesd: current_image at step {pv_step} differs from the CLI's --preview in {diff} values")
    print(f"2c. --taesd: current_image at step {pv_step} of 60 (128x128) == CLI --taesd --preview-every {pv_step} "
          f"({diff} values differ)")
mark("taesd preview")

# 3. FIFO queue: A (60 steps) then B (the reference parameters)
tha = threading.Thread(target=long_job, args=("A", 60, 5))
tha.start()
while api.get_progress()["state"]["sampling_step"] == 0:
    time.sleep(0.02)
def job_b():
    r = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                    sampler_name="Euler a", steps=4)
    out["B"], out["B_t"] = r, time.time()


thb = threading.Thread(target=job_b)
thb.start()
queued = 0
for _ in range(200):
    p = api.get_progress()
    queued = max(queued, p["state"].get("queued", 0))
    if queued or not tha.is_alive():
        break
    time.sleep(0.01)
tha.join(60)
thb.join(60)
check(queued == 1, f"B reported as queued while A runs: {queued}")
check(out["A"][0] == 200 and len(out["A"][1]["images"]) == 1, f"A answered: {out['A'][0]}")
check(out["A_t"][1] <= out["B_t"], "FIFO: A finished before B")
check(int((pixels(out["B"].image) != ref).sum()) == 0, "B's image == the reference")
print(f"3. queue: B waited behind A (queued {queued}); A done at +{out['A_t'][1] - out['A_t'][0]:.2f} s, B after it; B == reference")
mark("queue")

# 4. options: list, switch to the diffusers folder and back, refused names
models = api.get_sd_models()
titles = sorted(m["title"] for m in models)
check(titles == ["broken.safetensors", "tiny_sd15", "tiny_sd15.safetensors"], f"sd-models titles {titles}")
check(api.get_options()["sd_model_checkpoint"] == "tiny_sd15.safetensors", "options: current checkpoint")
s, r = call("POST", "/sdapi/v1/options", {"sd_model_checkpoint": "tiny_sd15", "samples_format": "png"})
check(s == 200, f"switch to the folder: {s} {r}")
check(api.get_options()["sd_model_checkpoint"] == "tiny_sd15", "options after the switch")
res_f = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                    sampler_name="Euler a", steps=4)
check(res_f.image.size == (32, 32) and "Model: tiny_sd15, " in res_f.info["infotexts"][0], "txt2img on the folder")
s, r = call("POST", "/sdapi/v1/options", {"sd_model_checkpoint": "broken.safetensors"})
check(s in (422, 500) and "broken.safetensors" in r.get("detail", ""), f"switch to a broken checkpoint: {s} {r}")
broken_detail = r.get("detail", "")[:150]
check(api.get_options()["sd_model_checkpoint"] == "tiny_sd15", "a failed switch reopens the checkpoint we had")
healthy("a failed switch")
api.util_set_model("tiny_sd15.safetensors", find_closest=False)
check(api.get_options()["sd_model_checkpoint"] == "tiny_sd15.safetensors", "switched back (webuiapi util_set_model)")
res_b = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                    sampler_name="Euler a", steps=4)
check(int((pixels(res_b.image) != ref).sum()) == 0, "after switching back: the reference image")
for bad in ["../ckpts/tiny_sd15.safetensors", os.path.join(oneshot, "tiny_sd15.safetensors"), "/etc/passwd",
            "nothing_like_it"]:
    s, r = call("POST", "/sdapi/v1/options", {"sd_model_checkpoint": bad})
    check(s == 422 and "not one of the checkpoints" in r.get("detail", ""), f"switch to {bad!r}: {s} {r}")
check(api.get_options()["sd_model_checkpoint"] == "tiny_sd15.safetensors", "refused names change nothing")
loras = [x["name"] for x in api.get_loras()]
check("tiny_peft" in loras and "tiny_kohya" in loras, f"loras {loras}")
samplers = api.util_get_sampler_names()
check({"Euler", "Euler a", "DPM++ 2M", "DDIM"} <= set(samplers), f"samplers {samplers}")
check([s["name"] for s in api.get_schedulers()][:3] == ["automatic", "uniform", "karras"], "schedulers")
res_k = api.txt2img(prompt=PROMPT, seed=42, width=32, height=32, sampler_name="DPM++ 2M", scheduler="Karras", steps=4)
check("Sampler: DPM++ 2M, Schedule type: Karras," in res_k.image.info.get("parameters", ""), "DPM++ 2M + Karras infotext")
print(f"4. options: {titles}, switched to the folder and back (reference image again), a broken one refused "
      f"({s}: {broken_detail}) and the folder reopened; 4 names outside the list -> 422")
mark("options + lists")

# 4b. A1111 fields (fresh-user trial): override_settings.sd_model_checkpoint for one request (switched
# and restored), masks (mask_blur, inpainting_mask_invert) == the CLI's --mask/--mask-blur, eta ==
# the CLI's --eta with A1111's "Eta DDIM", img2img's resize_mode 0 (PIL LANCZOS), a fixed default
# size (not the last request's), textinfo during a first-use compile
res_o = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                    sampler_name="Euler a", steps=4, override_settings={"sd_model_checkpoint": "tiny_sd15"})
check("Model: tiny_sd15, " in res_o.info["infotexts"][0] and "Model hash" not in res_o.info["infotexts"][0] and
      int((pixels(res_o.image) != ref).sum()) == 0, f"override sd_model_checkpoint: {res_o.info['infotexts'][0]!r}")
check(api.get_options()["sd_model_checkpoint"] == "tiny_sd15.safetensors", "override restored afterwards")
mask = np.zeros((32, 32), np.uint8)
mask[:, :16] = 255
mask_png, inv_png = os.path.join(work, "mask.png"), os.path.join(work, "mask_inv.png")
Image.fromarray(mask, "L").save(mask_png)
Image.fromarray(255 - mask, "L").save(inv_png)
# whole picture: A1111 pastes the original back over the unmasked pixels (the CLI's --mask-overlay)
want_m = cli_png("mask4", PROMPT, "--init-image", ref_png, "--strength", "0.6", "--mask", mask_png, "--mask-blur", "4",
                 "--mask-overlay")
for tag, mp, inv in (("mask", mask_png, 0), ("inverted mask", inv_png, 1)):
    r = api.img2img(images=[Image.open(ref_png)], mask_image=Image.open(mp), inpainting_mask_invert=inv,
                    inpainting_fill=1, inpaint_full_res=False, prompt=PROMPT, negative_prompt=NEG, seed=42,
                    cfg_scale=7.5, width=32, height=32, sampler_name="Euler a", steps=4, denoising_strength=0.6)
    diff = int((pixels(r.image) != want_m).sum())
    check(diff == 0 and "Mask blur: 4" in r.info["infotexts"][0], f"{tag}: {diff} values differ from the CLI's "
          f"--mask --mask-blur 4 --mask-overlay; {r.info['infotexts'][0]!r}")
    keep = np.asarray(Image.fromarray(mask, "L").filter(ImageFilter.GaussianBlur(4))) == 0  # inverted: the same
    same = (pixels(r.image)[keep] == pixels(Image.open(ref_png))[keep]).all()
    check(bool(same) and keep.any(), f"{tag}: the {int(keep.sum())} pixels outside the blurred mask are the init "
          "image's (A1111's overlay)")
# a mask of another size is resized to width x height as the image (PIL LANCZOS, as A1111)
mask64 = Image.fromarray(mask, "L").resize((64, 64), Image.NEAREST)
mask_r_png = os.path.join(work, "mask_64_to_32.png")
mask64.resize((32, 32), Image.LANCZOS).save(mask_r_png)
want_mr = cli_png("mask_r", PROMPT, "--init-image", ref_png, "--strength", "0.6", "--mask", mask_r_png, "--mask-blur", "4",
                  "--mask-overlay")
r = api.img2img(images=[Image.open(ref_png)], mask_image=mask64, inpainting_fill=1, inpaint_full_res=False,
                prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                sampler_name="Euler a", steps=4, denoising_strength=0.6)
check(int((pixels(r.image) != want_mr).sum()) == 0, "a 64x64 mask resized to 32x32 == CLI on PIL's LANCZOS resize")
# A1111's Inpaint area "Only masked" (inpaint_full_res, its default true; inpaint_full_res_padding):
# the image keeps its size, the box around the mask is generated at width x height == the CLI's
# --only-masked --only-masked-padding P. A 48x40 image at 32x32 (padding 4), a 96x80 mask resized
# to 48x40, and a request without inpaint_full_res / width / height on a 37x34 image (the area at
# 32x32, the image's size rounded down to 8; padding 0)
om_img = Image.open(ref_png).convert("RGB").resize((48, 40), Image.BICUBIC)
om_png, om_mask_png = os.path.join(work, "om_48x40.png"), os.path.join(work, "om_mask_48x40.png")
om_img.save(om_png)
om_mask = np.zeros((40, 48), np.uint8)
om_mask[12:26, 20:34] = 255
Image.fromarray(om_mask, "L").save(om_mask_png)
om_flags = ["--strength", "0.6", "--mask-blur", "4", "--only-masked"]
want_om = cli_png("om4", PROMPT, "--init-image", om_png, "--mask", om_mask_png, *om_flags, "--only-masked-padding", "4")
r = api.img2img(images=[om_img], mask_image=Image.open(om_mask_png), inpainting_fill=1, inpaint_full_res=True,
                inpaint_full_res_padding=4, prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32,
                height=32, sampler_name="Euler a", steps=4, denoising_strength=0.6)
diff = int((pixels(r.image) != want_om).sum()) if r.image.size == (48, 40) else -1
check(diff == 0 and "Inpaint area: Only masked, Masked area padding: 4" in r.info["infotexts"][0] and
      "Size: 32x32" in r.info["infotexts"][0] and (r.info["width"], r.info["height"]) == (32, 32),
      f"only masked, padding 4, 48x40 at 32x32: {r.image.size}, {diff} values differ from the CLI's --only-masked; "
      f"{r.info['infotexts'][0]!r}")
om_mask96 = Image.fromarray(om_mask, "L").resize((96, 80), Image.NEAREST)
om_mask_r_png = os.path.join(work, "om_mask_96_to_48.png")
om_mask96.resize((48, 40), Image.LANCZOS).save(om_mask_r_png)
want_omr = cli_png("om4r", PROMPT, "--init-image", om_png, "--mask", om_mask_r_png, *om_flags, "--only-masked-padding", "4")
r = api.img2img(images=[om_img], mask_image=om_mask96, inpainting_fill=1, inpaint_full_res=True,
                inpaint_full_res_padding=4, prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32,
                height=32, sampler_name="Euler a", steps=4, denoising_strength=0.6)
check(r.image.size == (48, 40) and int((pixels(r.image) != want_omr).sum()) == 0,
      f"only masked: a 96x80 mask resized to the 48x40 image == CLI on PIL's LANCZOS resize: {r.image.size}")
om_img2 = Image.open(ref_png).convert("RGB").resize((37, 34), Image.BICUBIC)
om2_png, om2_mask_png = os.path.join(work, "om_37x34.png"), os.path.join(work, "om_mask_37x34.png")
om_img2.save(om2_png)
Image.fromarray(om_mask[:34, 5:42], "L").save(om2_mask_png)
want_om0 = cli_png("om0", PROMPT, "--init-image", om2_png, "--mask", om2_mask_png, *om_flags, "--only-masked-padding", "0")
buf = io.BytesIO()
om_img2.save(buf, "PNG")
s, r = call("POST", "/sdapi/v1/img2img", {"init_images": [base64.b64encode(buf.getvalue()).decode()],
                                          "mask": base64.b64encode(open(om2_mask_png, "rb").read()).decode(),
                                          "inpainting_fill": 1, "prompt": PROMPT, "negative_prompt": NEG, "seed": 42,
                                          "cfg_scale": 7.5, "sampler_name": "Euler a", "steps": 4,
                                          "denoising_strength": 0.6})
im0 = Image.open(io.BytesIO(base64.b64decode(r["images"][0]))) if s == 200 else None
info0 = json.loads(r["info"]) if s == 200 else {}
check(im0 is not None and im0.size == (37, 34) and int((pixels(im0) != want_om0).sum()) == 0 and
      "Inpaint area: Only masked, Masked area padding: 0" in info0["infotexts"][0] and
      (info0["width"], info0["height"]) == (32, 32),
      f"img2img without inpaint_full_res/width/height: only masked (A1111's default) at 32x32 == CLI "
      f"--only-masked-padding 0: {s} {im0.size if im0 else str(r)[:300]}")
want_e = cli_png("eta", PROMPT, "--scheduler", "ddim", "--eta", "0.5")
r = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32, sampler_name="DDIM",
                steps=4, eta=0.5)
check(int((pixels(r.image) != want_e).sum()) == 0 and "Eta DDIM: 0.5" in r.info["infotexts"][0],
      f"eta 0.5 (DDIM) == CLI --eta 0.5: {r.info['infotexts'][0]!r}")
# resize_mode 0: a 64x64 init image resized to 32x32 == the CLI's img2img of PIL's LANCZOS resize
big = Image.open(ref_png).convert("RGB").resize((64, 64), Image.BICUBIC)
small_png = os.path.join(work, "small.png")
big.resize((32, 32), Image.LANCZOS).save(small_png)
want_r = cli_png("resized", PROMPT, "--init-image", small_png, "--strength", "0.6")
r = api.img2img(images=[big], prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                sampler_name="Euler a", steps=4, denoising_strength=0.6)
check(r.image.size == (32, 32) and int((pixels(r.image) != want_r).sum()) == 0,
      f"img2img 64x64 -> 32x32 (resize_mode 0) == CLI on PIL's LANCZOS resize: {r.image.size}")
# no width/height: the init image's size (64x64: a first use, compiled; /progress says so), then a
# txt2img without width/height is 32x32 (--width/--height), not the last request's 64x64
texts = []


def poll():
    while "done" not in texts:
        t = api.get_progress().get("textinfo")
        if t:
            texts.append(t)
        time.sleep(0.01)


th = threading.Thread(target=poll, daemon=True)
th.start()
buf = io.BytesIO()
big.save(buf, "PNG")
try:  # a compile: slow on a loaded machine
    s, r = call("POST", "/sdapi/v1/img2img", {"init_images": [base64.b64encode(buf.getvalue()).decode()],
                                              "prompt": PROMPT, "steps": 2, "seed": 1}, timeout=280)
finally:
    texts.append("done")
th.join()
check(s == 200 and Image.open(io.BytesIO(base64.b64decode(r["images"][0]))).size == (64, 64), f"img2img default size: {s}")
check(any("compiled on first use" in t for t in texts), f"textinfo during the compile: {texts[:3]}")
s, r = call("POST", "/sdapi/v1/txt2img", {"prompt": PROMPT, "steps": 2, "seed": 1})
check(s == 200 and Image.open(io.BytesIO(base64.b64decode(r["images"][0]))).size == (32, 32),
      f"txt2img without width/height after a 64x64 request: {s} {str(r)[:200]}")
print("4b. override sd_model_checkpoint (switched, restored); mask / inverted mask + mask_blur 4 == CLI --mask-blur 4; "
      "only masked (inpaint_full_res true / absent, padding 4 / 0, a resized mask) == CLI --only-masked; "
      "eta 0.5 == CLI --eta (Eta DDIM); 64->32 resize == PIL LANCZOS + CLI; default sizes fixed; textinfo: "
      f"{texts[0] if texts else None!r}")
mark("A1111 fields")

# 5. png-info round trip
r = api.png_info(img)
raw = r.json
check(raw["info"] == infotext, "png-info: info == the infotext")
p = raw["parameters"]
check(p.get("Prompt") == PROMPT and p.get("Negative prompt") == NEG and p.get("Steps") == "4" and
      p.get("Seed") == "42" and p.get("Sampler") == "Euler a" and p.get("Size") == "32x32",
      f"png-info parameters {p}")
s, r = call("POST", "/sdapi/v1/png-info", {"image": "data:image/png;base64," + base64.b64encode(b"GIF89a....").decode()})
check(s == 422 and "not a PNG" in r["detail"], f"png-info of a non-PNG: {s} {r}")
mark("png-info")

# 6. bad input: 4xx naming the problem; the server keeps serving
ok = dict(prompt="x", steps=4, width=32, height=32)
MASK_B64 = base64.b64encode(open(os.path.join(work, "mask.png"), "rb").read()).decode()
buf = io.BytesIO()
Image.new("L", (32, 32), 0).save(buf, "PNG")
BLACK_B64 = base64.b64encode(buf.getvalue()).decode()
cases = [
    ("malformed JSON", "POST", "/sdapi/v1/txt2img", None, b'{"prompt": "a cat", "steps": ', AUTH, 400, "malformed JSON"),
    ("JSON array", "POST", "/sdapi/v1/txt2img", [1, 2], None, AUTH, 400, "JSON object"),
    ("not UTF-8", "POST", "/sdapi/v1/txt2img", None, b'{"prompt": "caf\xe9"}', AUTH, 400, "not UTF-8"),
    ("empty body", "POST", "/sdapi/v1/txt2img", None, b"", AUTH, 400, "empty body"),
    ("huge width", "POST", "/sdapi/v1/txt2img", dict(ok, width=100000), None, AUTH, 422, "--max-size"),
    ("negative steps", "POST", "/sdapi/v1/txt2img", dict(ok, steps=-3), None, AUTH, 422, "steps -3"),
    ("steps as text", "POST", "/sdapi/v1/txt2img", dict(ok, steps="many"), None, AUTH, 422, "steps: expected an integer"),
    ("fractional steps", "POST", "/sdapi/v1/txt2img", dict(ok, steps=4.5), None, AUTH, 422, "steps"),
    ("width not /8", "POST", "/sdapi/v1/txt2img", dict(ok, width=33), None, AUTH, 422, "multiples of"),
    ("unknown sampler", "POST", "/sdapi/v1/txt2img", dict(ok, sampler_name="Heun++ 9000"), None, AUTH, 422, "Heun++ 9000"),
    ("refused sampler", "POST", "/sdapi/v1/txt2img", dict(ok, sampler_name="DPM++ SDE"), None, AUTH, 422, "not supported"),
    ("unknown scheduler", "POST", "/sdapi/v1/txt2img", dict(ok, scheduler="zigzag"), None, AUTH, 422, "zigzag"),
    ("karras + ddim", "POST", "/sdapi/v1/txt2img", dict(ok, sampler_name="DDIM", scheduler="Karras"), None, AUTH, 422, "Karras"),
    ("too many images", "POST", "/sdapi/v1/txt2img", dict(ok, batch_size=4, n_iter=4), None, AUTH, 422, "--max-batch"),
    ("prompt too long", "POST", "/sdapi/v1/txt2img", dict(ok, prompt="a" * 5000), None, AUTH, 422, "--max-prompt"),
    ("cfg out of range", "POST", "/sdapi/v1/txt2img", dict(ok, cfg_scale=1e9), None, AUTH, 422, "cfg_scale"),
    ("unknown LoRA", "POST", "/sdapi/v1/txt2img", dict(ok, prompt="a cat <lora:no_such_lora:0.5>"), None, AUTH, 422, "no_such_lora"),
    ("oversized body", "POST", "/sdapi/v1/txt2img", None, b"{" + b" " * 70000 + b"}", AUTH, 413, "--max-body"),
    ("no credentials", "GET", "/sdapi/v1/options", None, None, None, 401, "credentials"),
    ("wrong password", "GET", "/sdapi/v1/options", None, None,
     "Basic " + base64.b64encode(f"{USER}:{PASS}x".encode()).decode(), 401, "credentials"),
    ("wrong user", "POST", "/sdapi/v1/txt2img", ok, None,
     "Basic " + base64.b64encode(f"x{USER}:{PASS}".encode()).decode(), 401, "credentials"),
    ("garbage auth", "GET", "/health", None, None, "Basic %%%", 401, "credentials"),
    ("unknown route", "GET", "/sdapi/v1/nothing", None, None, AUTH, 404, "no route"),
    ("path traversal route", "GET", "/../../etc/passwd", None, None, AUTH, 404, "no route"),
    ("wrong method", "GET", "/sdapi/v1/txt2img", None, None, AUTH, 405, "allowed: POST"),
    ("wrong method 2", "DELETE", "/sdapi/v1/options", None, None, AUTH, 405, "allowed: GET, POST"),
    ("img2img without image", "POST", "/sdapi/v1/img2img", ok, None, AUTH, 422, "init_images"),
    ("img2img not a PNG", "POST", "/sdapi/v1/img2img", dict(ok, init_images=["aGVsbG8="]), None, AUTH, 422, "not a PNG"),
    ("img2img not base64", "POST", "/sdapi/v1/img2img", dict(ok, init_images=["%%%"]), None, AUTH, 422, "base64"),
    ("img2img resize_mode 1", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], width=64, height=64, resize_mode=1), None, AUTH, 422, "resize_mode"),
    ("enable_hr", "POST", "/sdapi/v1/txt2img", dict(ok, enable_hr=True, hr_scale=2), None, AUTH, 422, "enable_hr"),
    ("subseed_strength", "POST", "/sdapi/v1/txt2img", dict(ok, subseed_strength=0.3), None, AUTH, 422, "subseed_strength"),
    ("restore_faces", "POST", "/sdapi/v1/txt2img", dict(ok, restore_faces=True), None, AUTH, 422, "restore_faces"),
    ("eta Euler a", "POST", "/sdapi/v1/txt2img", dict(ok, sampler_name="Euler a", eta=0.5), None, AUTH, 422, "eta 0.5"),
    ("unknown override checkpoint", "POST", "/sdapi/v1/txt2img", dict(ok, override_settings={"sd_model_checkpoint": "nope"}), None, AUTH, 422, "sd_model_checkpoint"),
    ("LoRA not fitting", "POST", "/sdapi/v1/txt2img", dict(ok, prompt="x <lora:sd2_peft:0.8>"), None, AUTH, 422, "does not fit"),
    ("inpaint_full_res runs", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpaint_full_res=True, inpaint_full_res_padding=8), None, AUTH, 200, ""),
    ("inpaint_full_res 1 runs", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpaint_full_res=1, steps=2), None, AUTH, 200, ""),
    ("inpaint_full_res text", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpaint_full_res="yes"), None, AUTH, 422, "inpaint_full_res: expected true or false"),
    ("padding negative", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpaint_full_res_padding=-1), None, AUTH, 422, "inpaint_full_res_padding -1"),
    ("padding text", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpaint_full_res_padding="32"), None, AUTH, 422, "inpaint_full_res_padding: expected an integer"),
    ("padding fractional", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpaint_full_res_padding=4.5), None, AUTH, 422, "inpaint_full_res_padding: expected an integer"),
    ("padding huge", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpaint_full_res_padding=1e12), None, AUTH, 422, "inpaint_full_res_padding"),
    ("padding without mask", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], inpaint_full_res_padding=-5), None, AUTH, 422, "inpaint_full_res_padding"),
    ("only masked, black mask", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=BLACK_B64), None, AUTH, 422, "all black"),
    ("inpainting_fill 0", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], mask=MASK_B64, inpainting_fill=0, inpaint_full_res=False), None, AUTH, 422, "inpainting_fill"),
    ("img2img strength", "POST", "/sdapi/v1/img2img", dict(ok, init_images=[REF_B64], denoising_strength=1.5), None, AUTH, 422, "denoising_strength"),
    ("options wrong type", "POST", "/sdapi/v1/options", {"sd_model_checkpoint": 5}, None, AUTH, 422, "expected a string"),
]
for name, method, path, body, raw, auth, want, needle in cases:
    try:
        s, r = call(method, path, body=body, raw=raw, auth=auth)
    except Exception as e:  # a reset connection is not an answer
        s, r = 0, repr(e)
    detail = r.get("detail", "") if isinstance(r, dict) else str(r)
    check(s == want and needle in detail, f"bad input '{name}': {s} {detail!r} (want {want} naming {needle!r})")
    healthy(name)
# a mutation fuzz of the request parser: 300 bodies cut, byte-flipped, type-swapped, nested; each
# answered (any status but 5xx) and the server still healthy
import random
rng = random.Random(22)
seed_bodies = [json.dumps(dict(ok, seed=1, sampler_name="Euler a", scheduler="karras", batch_size=1)).encode(),
               json.dumps({"sd_model_checkpoint": "tiny_sd15.safetensors", "x": [1, {"y": None}]}).encode(),
               json.dumps({"image": "data:image/png;base64," + REF_B64[:200]}).encode()]
paths = ["/sdapi/v1/txt2img", "/sdapi/v1/options", "/sdapi/v1/png-info", "/sdapi/v1/img2img"]
weird = [b"null", b"[]", b"{}", b'"s"', b"1e999", b"-0", b"true", b"{" * 2000, b"\xff\xfe", b'{"steps": 1e308}',
         b'{"width": -1e20}', b'{"prompt": "\\ud800"}', b'{"steps": 4, "steps": "x"}', b'{"n_iter": 3.0000001}']
statuses = {}
for i in range(300):
    b = bytearray(rng.choice(seed_bodies))
    op = i % 5
    if op == 0 and len(b) > 2:
        b = b[:rng.randrange(1, len(b))]
    elif op == 1:
        for _ in range(rng.randrange(1, 6)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif op == 2:
        b = bytearray(rng.choice(weird))
    elif op == 3:
        d = json.loads(rng.choice(seed_bodies))
        k = rng.choice(list(d))
        d[k] = rng.choice([None, [], {}, -1, 2**70, "x" * rng.randrange(0, 300), 1.5, True])
        b = bytearray(json.dumps(d).encode())
    else:
        b = bytearray(json.dumps({"prompt": {"nested": [[[[rng.random()]]]]}, "steps": [4]}).encode())
    path = paths[i % len(paths)]
    if path.endswith("options") and op != 2 and b"sd_model_checkpoint" in b:
        path = "/sdapi/v1/png-info"  # no checkpoint switches in the fuzz
    try:
        st, _ = call("POST", path, raw=bytes(b), timeout=30)
    except Exception as e:
        st = repr(e)[:40]
    statuses[st] = statuses.get(st, 0) + 1
    if not (isinstance(st, int) and st < 500):
        check(False, f"fuzz {i} {path} {bytes(b)[:80]!r}: {st}")
        break
healthy("the fuzz")
print(f"6. {sum(c[6] >= 400 for c in cases)} bad requests answered 4xx naming the problem, "
      f"{sum(c[6] < 400 for c in cases)} edge requests run; /health ok after each; "
      f"fuzz: 300 mutated bodies -> {dict(sorted(statuses.items(), key=str))}")
mark("bad input")

# 7. a client that disconnects mid-generation loses its job
sk = socket.create_connection(("127.0.0.1", port))
body = json.dumps({"prompt": PROMPT, "steps": 300, "width": 32, "height": 32}).encode()
sk.sendall(b"POST /sdapi/v1/txt2img HTTP/1.1\r\nHost: x\r\nAuthorization: " + AUTH.encode() +
           b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
while api.get_progress()["state"]["sampling_step"] == 0:
    time.sleep(0.02)
sk.close()
t0 = time.time()
while time.time() - t0 < 10 and api.get_progress()["state"]["job"] != "":
    time.sleep(0.05)
check(api.get_progress()["state"]["job"] == "", "the disconnected client's job was dropped")
res3 = api.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                   sampler_name="Euler a", steps=4)
check(int((pixels(res3.image) != ref).sum()) == 0, "after a disconnect: the reference image")
log.seek(0)
check("the client disconnected" in log.read(), "the server logged the dropped job")
print(f"7. disconnect: job dropped after {time.time() - t0:.2f} s; the next image == reference")
mark("disconnect")

# 8. SIGTERM
srv.send_signal(signal.SIGTERM)
try:
    rc = srv.wait(10)
except subprocess.TimeoutExpired:
    srv.kill()
    rc = "timeout"
check(rc == 0, f"exit status after SIGTERM: {rc}")
# start-up checks: a --lora-dir that is not a folder is refused as --ckpt-dir is; a bad --listen
# port is one error line; --taesd of a missing file, of another file (a LoRA), or with --models
lora_file = os.path.join(lora_dir, "ref_sd1_kohya.safetensors")
for args, needle in ((["--lora-dir", "/nonexistent/loras"], "--lora-dir /nonexistent/loras: not a folder"),
                     (["--taesd", "/nonexistent/taesd.safetensors"], "--taesd /nonexistent/taesd.safetensors: no such"),
                     (["--taesd", lora_file], "not a TAESD decoder"),
                     (["--ckpt-dir", "/nonexistent/ckpts"], "--ckpt-dir /nonexistent/ckpts: not a folder"),
                     (["--listen", "127.0.0.1:99999"], "--listen 127.0.0.1:99999")):
    p = subprocess.run([sd, "serve", "-m", os.path.join(ckdir, "tiny_sd15.safetensors"), "--quiet", *args], env=env,
                       capture_output=True, text=True, timeout=30)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and needle in lines[0], f"serve {' '.join(args)}: {p.returncode} {lines}")
p = subprocess.run([sd, "serve", "--models", work, "--hf", work, "--taesd", taesd, "--quiet"], env=env,
                   capture_output=True, text=True, timeout=30)
check(p.returncode == 2 and "--taesd" in p.stderr and "needs -m CHECKPOINT" in p.stderr,
      f"serve --models --taesd: {p.returncode} {p.stderr.strip()}")
mark("SIGTERM")

# 9. compiled models (--models DIR --hf DIR: the cache's programs and weights of the single file)
#    with --timeout 1: the same image as -m; fixed size, no LoRA tags, no switch; slow clients
#    (partial headers) are dropped after the timeout while others are served
cache = os.path.join(work, "cache")
mdir, hf = os.path.join(work, "models"), os.path.join(work, "hf")
os.makedirs(mdir)
os.makedirs(os.path.join(hf, "scheduler"))
wdir = [os.path.dirname(p) for p in
        (os.path.join(cache, "weights", d, "source.txt") for d in os.listdir(os.path.join(cache, "weights")))
        if os.path.isfile(p) and "tiny_sd15.safetensors" in open(p).read()][0]  # (TAESD's folder has none)
for m in ["text_encoder", "unet", "vae_decoder", "vae_encoder"]:
    pdir = os.path.join(cache, "programs", "tiny_sd15", m)
    prog = [d for d in sorted(os.listdir(pdir)) if m == "text_encoder" or d.startswith("32x32-b2" if m == "unet" else "32x32-b1")][0]
    os.symlink(os.path.join(pdir, prog, "model.o2d"), os.path.join(mdir, m + ".o2d"))
    os.symlink(os.path.join(wdir, m + ".weights"), os.path.join(mdir, m + ".weights"))
arch = os.path.normpath(os.path.join(here, "..", "..", "models", "arch", "tiny_sd15"))
os.symlink(os.path.join(arch, "tokenizer"), os.path.join(hf, "tokenizer"))
os.symlink(os.path.join(cache, "programs", "tiny_sd15", "scheduler_config.json"),
           os.path.join(hf, "scheduler", "scheduler_config.json"))
log2 = open(os.path.join(work, "server2.log"), "w+")
srv2 = subprocess.Popen([sd, "serve", "--models", mdir, "--hf", hf, "--listen", "127.0.0.1:0", "--timeout", "1",
                         "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=log2)
atexit.register(lambda: srv2.poll() is None and srv2.kill())
port2 = None
for _ in range(300):
    log2.seek(0)
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log2.read())
    if m:
        port2 = int(m.group(1))
        break
    if srv2.poll() is not None:
        break
    time.sleep(0.05)
check(port2 is not None, "the --models server started")
if port2:
    base = f"http://127.0.0.1:{port2}"
    api2 = webuiapi.WebUIApi(host="127.0.0.1", port=port2)
    r2 = api2.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                      sampler_name="Euler a", steps=4)
    diff = int((pixels(r2.image) != ref).sum())
    check(diff == 0, f"--models image differs from -m's in {diff} values")
    for name, body, want, needle in [
            ("size", dict(ok, width=64), 422, "make 32x32 only"),
            ("LoRA tag", dict(ok, prompt="x <lora:tiny_peft:1>"), 422, "need a checkpoint session"),
            ("switch", None, 422, "switching needs -m")]:
        s, r = (call("POST", "/sdapi/v1/txt2img", body, auth=None) if body else
                call("POST", "/sdapi/v1/options", {"sd_model_checkpoint": "x"}, auth=None))
        check(s == want and needle in r.get("detail", ""), f"--models {name}: {s} {r}")
    slow = []
    for _ in range(8):
        k = socket.create_connection(("127.0.0.1", port2))
        k.sendall(b"POST /sdapi/v1/txt2img HTTP/1.1\r\nHost: x\r\nContent-Le")
        slow.append(k)
    s, h = call("GET", "/health", auth=None)
    check(s == 200, "served while 8 slow clients hold connections")
    time.sleep(1.8)
    closed = 0
    for k in slow:
        k.settimeout(2)
        try:
            closed += k.recv(100) == b""
        except OSError:
            closed += 1
        k.close()
    check(closed == 8, f"slow clients dropped after --timeout 1: {closed} of 8")
    s, h = call("GET", "/health", auth=None)
    check(s == 200, "/health after the slow clients")
    srv2.send_signal(signal.SIGTERM)
    check(srv2.wait(10) == 0, "--models server: exit 0 after SIGTERM")
    print(f"9. --models DIR --hf DIR: the -m image ({diff} values differ); 3 refusals; {closed} of 8 slow clients dropped")
mark("--models server + slow clients")

# 10. two workers (--devices 0,0: two sessions on the one device here): two jobs run at once; a
#     checkpoint switch waits for both, switches both sessions, and both make the reference again
log3 = open(os.path.join(work, "server3.log"), "w+")
srv3 = subprocess.Popen([sd, "serve", "-m", os.path.join(ckdir, "tiny_sd15.safetensors"), "--ckpt-dir", ckdir,
                         "--devices", "0,0", "--listen", "127.0.0.1:0", "--width", "32", "--height", "32",
                         "--max-steps", "300", "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=log3)
atexit.register(lambda: srv3.poll() is None and srv3.kill())
port3 = None
for _ in range(400):
    log3.seek(0)
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log3.read())
    if m:
        port3 = int(m.group(1))
        break
    if srv3.poll() is not None:
        break
    time.sleep(0.05)
check(port3 is not None and "2 workers" in open(os.path.join(work, "server3.log")).read(), "the 2-worker server started")
if port3:
    base = f"http://127.0.0.1:{port3}"
    api3 = webuiapi.WebUIApi(host="127.0.0.1", port=port3)
    jobs = [threading.Thread(target=long_job, args=(f"w{k}", 60, 3 + k)) for k in range(2)]
    for t in jobs:
        t.start()
    running = 0
    t_end = time.time() + 20
    while time.time() < t_end and running < 2 and any(t.is_alive() for t in jobs):
        running = max(running, api3.get_progress()["state"].get("running", 0))
        time.sleep(0.02)
    check(running == 2, f"two jobs ran at once on 2 workers: {running}")
    sw = {}
    tsw = threading.Thread(target=lambda: sw.update(r=call("POST", "/sdapi/v1/options",
                                                         {"sd_model_checkpoint": "tiny_sd15"}, auth=None),
                                                    t=time.time()))
    tsw.start()
    for t in jobs:
        t.join(60)
    tsw.join(60)
    check(all(out[f"w{k}"][0] == 200 and len(out[f"w{k}"][1]["images"]) == 1 for k in range(2)), "both jobs answered")
    check(sw.get("r", (0,))[0] == 200 and sw["t"] >= max(out[f"w{k}_t"][1] for k in range(2)) - 0.05,
          f"the switch waited for both jobs: {sw.get('r')}")
    check(api3.get_options()["sd_model_checkpoint"] == "tiny_sd15", "2 workers switched")
    rs = [api3.txt2img(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
                       sampler_name="Euler a", steps=4) for _ in range(2)]
    check(all(r.info["infotexts"][0].find("Model: tiny_sd15,") > 0 for r in rs), "both on the folder")
    api3.util_set_model("tiny_sd15.safetensors", find_closest=False)
    same = []
    th2 = [threading.Thread(target=lambda: same.append(int((pixels(api3.txt2img(
        prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32, sampler_name="Euler a",
        steps=4).image) != ref).sum()))) for _ in range(4)]
    for t in th2:
        t.start()
    for t in th2:
        t.join(60)
    check(same == [0, 0, 0, 0], f"4 concurrent requests on 2 workers after switching back: differing values {same}")
    # an override_settings.sd_model_checkpoint job, a POST /options switch and a plain job at once:
    # each switch holds both workers (none waits for the other: no deadlock); the plain job == reference
    mixed = {}
    def one(key, body, path="/sdapi/v1/txt2img"):
        mixed[key] = call("POST", path, body, auth=None, timeout=120)
    ovr = dict(prompt=PROMPT, negative_prompt=NEG, seed=42, cfg_scale=7.5, width=32, height=32,
               sampler_name="Euler a", steps=4)
    th3 = [threading.Thread(target=one, args=("o1", dict(ovr, override_settings={"sd_model_checkpoint": "tiny_sd15"}))),
           threading.Thread(target=one, args=("sw", {"sd_model_checkpoint": "tiny_sd15.safetensors"}, "/sdapi/v1/options")),
           threading.Thread(target=one, args=("plain", ovr))]
    for t in th3:
        t.start()
    for t in th3:
        t.join(150)
    check(all(mixed.get(k, (0,))[0] == 200 for k in ("o1", "sw", "plain")) and "Model: tiny_sd15," in mixed["o1"][1]["info"] and
          int((pixels(Image.open(io.BytesIO(base64.b64decode(mixed["plain"][1]["images"][0])))) != ref).sum()) == 0,
          f"2 workers, overrides + switch at once: { {k: v[0] for k, v in mixed.items()} }")
    check(api3.get_options()["sd_model_checkpoint"] == "tiny_sd15.safetensors", "2 workers: overrides restored")
    srv3.send_signal(signal.SIGTERM)
    check(srv3.wait(10) == 0, "2-worker server: exit 0 after SIGTERM")
    print(f"10. --devices 0,0: {running} jobs at once; the switch waited for both; 4 concurrent images == reference")
mark("2 workers")
print(f"serve: {len(fails)} failed, {time.time() - t_start:.1f} s")
if fails:
    log.seek(0)
    print(log.read()[-3000:])
sys.exit(1 if fails else 0)
