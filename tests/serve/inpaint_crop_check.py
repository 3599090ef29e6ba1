#!/usr/bin/env python3
"""inpaint_crop_check.py TEST_RESIZE WORK — inpainting's "only masked" area (pipeline/inpaint_crop.c)
against diffusers' VaeImageProcessor on PIL images, byte for byte: get_crop_region(mask, width,
height, pad), preprocess(..., crops_coords, resize_mode="fill") of the image and of the mask, and
apply_overlay(mask, init, image, crops_coords); plus Pillow's Image.resize(LANCZOS, box=...) with
fractional and zero-size boxes.

diffusers needs torch, which CI does not install: the three functions are transcribed below from
diffusers 0.42 (src/diffusers/image_processor.py); where diffusers imports, the transcription is
checked against it on every case too. Cases: masks of one pixel, blobs, blurred (partial alpha)
and full-width strips; image aspect ratios wider, taller and equal to the processing size's; box
growth clipped at every edge (the fill bands); paddings 0 to larger than the image."""
import os
import subprocess
import sys

import numpy as np
from PIL import Image, ImageFilter, ImageOps

exe, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
try:  # the real thing where it is installed (not in CI)
    from diffusers.image_processor import VaeImageProcessor
    DIFFUSERS = VaeImageProcessor(), VaeImageProcessor(do_normalize=False, do_binarize=True, do_convert_grayscale=True)
except Exception:
    DIFFUSERS = None


def get_crop_region(mask_image, width, height, pad=0):  # diffusers' VaeImageProcessor.get_crop_region
    mask = np.array(mask_image.convert("L"))
    h, w = mask.shape
    cols, rows = np.where((mask != 0).any(0))[0], np.where((mask != 0).any(1))[0]
    crop_left, crop_right = int(cols[0]), w - 1 - int(cols[-1])
    crop_top, crop_bottom = int(rows[0]), h - 1 - int(rows[-1])
    x1, y1, x2, y2 = (int(max(crop_left - pad, 0)), int(max(crop_top - pad, 0)),
                      int(min(w - crop_right + pad, w)), int(min(h - crop_bottom + pad, h)))
    ratio_crop_region, ratio_processing = (x2 - x1) / (y2 - y1), width / height
    if ratio_crop_region > ratio_processing:
        desired_height = (x2 - x1) / ratio_processing
        desired_height_diff = int(desired_height - (y2 - y1))
        y1 -= desired_height_diff // 2
        y2 += desired_height_diff - desired_height_diff // 2
        if y2 >= mask_image.height:
            diff = y2 - mask_image.height
            y2 -= diff
            y1 -= diff
        if y1 < 0:
            y2 -= y1
            y1 -= y1
        if y2 >= mask_image.height:
            y2 = mask_image.height
    else:
        desired_width = (y2 - y1) * ratio_processing
        desired_width_diff = int(desired_width - (x2 - x1))
        x1 -= desired_width_diff // 2
        x2 += desired_width_diff - desired_width_diff // 2
        if x2 >= mask_image.width:
            diff = x2 - mask_image.width
            x2 -= diff
            x1 -= diff
        if x1 < 0:
            x2 -= x1
            x1 -= x1
        if x2 >= mask_image.width:
            x2 = mask_image.width
    return x1, y1, x2, y2


def resize_and_fill(image, width, height):  # diffusers' VaeImageProcessor._resize_and_fill
    ratio, src_ratio = width / height, image.width / image.height
    src_w = width if ratio < src_ratio else image.width * height // image.height
    src_h = height if ratio >= src_ratio else image.height * width // image.width
    resized = image.resize((src_w, src_h), resample=Image.LANCZOS)
    res = Image.new("RGB", (width, height))
    res.paste(resized, box=(width // 2 - src_w // 2, height // 2 - src_h // 2))
    if ratio < src_ratio:
        fill_height = height // 2 - src_h // 2
        if fill_height > 0:
            res.paste(resized.resize((width, fill_height), box=(0, 0, width, 0)), box=(0, 0))
            res.paste(resized.resize((width, fill_height), box=(0, resized.height, width, resized.height)),
                      box=(0, fill_height + src_h))
    elif ratio > src_ratio:
        fill_width = width // 2 - src_w // 2
        if fill_width > 0:
            res.paste(resized.resize((fill_width, height), box=(0, 0, 0, height)), box=(0, 0))
            res.paste(resized.resize((fill_width, height), box=(resized.width, 0, resized.width, height)),
                      box=(fill_width + src_w, 0))
    return res


def resize_and_crop(image, width, height):  # diffusers' VaeImageProcessor._resize_and_crop
    ratio, src_ratio = width / height, image.width / image.height
    src_w = width if ratio > src_ratio else image.width * height // image.height
    src_h = height if ratio <= src_ratio else image.height * width // image.width
    resized = image.resize((src_w, src_h), resample=Image.LANCZOS)
    res = Image.new("RGB", (width, height))
    res.paste(resized, box=(width // 2 - src_w // 2, height // 2 - src_h // 2))
    return res


def apply_overlay(mask, init_image, image, crop_coords):  # diffusers' VaeImageProcessor.apply_overlay
    width, height = init_image.width, init_image.height
    init_image_masked = Image.new("RGBa", (width, height))
    init_image_masked.paste(init_image.convert("RGBA").convert("RGBa"), mask=ImageOps.invert(mask.convert("L")))
    init_image_masked = init_image_masked.convert("RGBA")
    x, y, x2, y2 = crop_coords
    base_image = Image.new("RGBA", (width, height))
    base_image.paste(resize_and_crop(image, x2 - x, y2 - y), (x, y))
    image = base_image.convert("RGB").convert("RGBA")
    image.alpha_composite(init_image_masked)
    return image.convert("RGB")


def run(*args):
    return subprocess.run([exe] + [str(a) for a in args], check=True, capture_output=True, text=True).stdout


rng = np.random.default_rng(11)
fails = n = 0


def check(name, got, want):
    global fails, n
    n += 1
    want = np.asarray(want, np.uint8)
    if got.shape != want.shape or (got != want).any():
        fails += 1
        d = int(np.abs(got.astype(int) - want.astype(int)).max()) if got.shape == want.shape else -1
        print(f"FAIL {name}: {(got != want).sum() if d >= 0 else 'shape'} values differ, max {d}")


def image(w, h, ch=3):
    yy, xx = np.mgrid[0:h, 0:w]
    base = (xx * 255 // max(w - 1, 1) + yy * 53) % 256
    return ((base[..., None] + rng.integers(0, 90, (h, w, ch))) % 256).astype(np.uint8)


# Pillow's resize with a box: fractional, zero-height/width (the fill bands), the edge ones; LANCZOS
# and BICUBIC (Image.resize's default, the fill bands' filter)
src = image(37, 23)
for (box, size), resample in [(bs, r) for bs in [((0, 0, 37, 0), (37, 9)), ((0, 23, 37, 23), (37, 4)), ((0, 0, 0, 23), (6, 23)),
                  ((37, 0, 37, 23), (5, 23)), ((2.5, 1.25, 30.75, 20.5), (50, 31)), ((3, 2, 20, 9), (17, 7)),
                  ((0, 0, 37, 23), (19, 40)), ((1, 1, 2, 2), (3, 3))] for r in (Image.LANCZOS, Image.BICUBIC)]:
    for ch in (3, 1):
        s = src if ch == 3 else src[..., :1]
        pil = Image.fromarray(s if ch == 3 else s[..., 0], "RGB" if ch == 3 else "L")
        s.tofile(os.path.join(work, "in.raw"))
        run("box", 37, 23, ch, *box, *size, os.path.join(work, "in.raw"), os.path.join(work, "out.raw"), int(resample))
        got = np.fromfile(os.path.join(work, "out.raw"), np.uint8).reshape(size[1], size[0], ch)
        check(f"resize box {box} -> {size} ch {ch} filter {int(resample)}", got,
              np.asarray(pil.resize(size, resample, box=box)).reshape(got.shape))


def mask_of(kind, w, h):
    m = np.zeros((h, w), np.uint8)
    if kind == "pixel":
        m[rng.integers(0, h), rng.integers(0, w)] = 255
    elif kind == "blob":
        x0, y0 = rng.integers(0, w - w // 4), rng.integers(0, h - h // 4)
        m[y0:y0 + h // 4 + 1, x0:x0 + w // 5 + 1] = 255
    elif kind == "corner":
        m[h - h // 5:, w - w // 3:] = 255
    elif kind == "hstrip":
        m[h // 2: h // 2 + 3, :] = 255
    elif kind == "vstrip":
        m[:, 1:4] = 255
    elif kind == "blurred":  # partial alpha everywhere near the edge: the composite's rounding
        m[h // 3: h // 2, w // 4: w // 2] = 255
        return Image.fromarray(m, "L").filter(ImageFilter.GaussianBlur(4))
    return Image.fromarray(m, "L")


cases = 0
for (w, h) in [(96, 64), (64, 96), (80, 80), (123, 77)]:
    for (pw, ph) in [(64, 64), (96, 64), (64, 128)]:
        for kind in ("pixel", "blob", "corner", "hstrip", "vstrip", "blurred"):
            for pad in (0, 8, 32, 500):
                cases += 1
                init = Image.fromarray(image(w, h), "RGB")
                mask = mask_of(kind, w, h)
                gen = Image.fromarray(image(pw, ph), "RGB")
                paths = [os.path.join(work, f) for f in ("init.raw", "mask.raw", "gen.raw", "crop.raw", "mcrop.raw", "over.raw")]
                np.asarray(init).tofile(paths[0])
                np.asarray(mask).tofile(paths[1])
                np.asarray(gen).tofile(paths[2])
                out = run("only_masked", w, h, pw, ph, pad, *paths)
                box = tuple(int(v) for v in out.split())
                name = f"{w}x{h} -> {pw}x{ph} {kind} pad {pad}"
                want_box = get_crop_region(mask, pw, ph, pad)
                if box != want_box:
                    fails += 1
                    print(f"FAIL {name}: box {box}, diffusers {want_box}")
                    continue
                want_crop = resize_and_fill(init.crop(want_box), pw, ph)
                want_mcrop = resize_and_fill(mask.crop(want_box), pw, ph).convert("L")
                want_over = apply_overlay(mask, init, gen, want_box)
                if DIFFUSERS:  # the transcription is diffusers
                    ip, mp = DIFFUSERS
                    assert ip.get_crop_region(mask, pw, ph, pad=pad) == want_box, name
                    assert (np.asarray(ip.resize(init.crop(want_box), ph, pw, resize_mode="fill")) == np.asarray(want_crop)).all(), name
                    assert (np.asarray(mp.resize(mask.crop(want_box), ph, pw, resize_mode="fill").convert("L")) == np.asarray(want_mcrop)).all(), name
                    assert (np.asarray(ip.apply_overlay(mask, init, gen, want_box)) == np.asarray(want_over)).all(), name
                check(name + " image", np.fromfile(paths[3], np.uint8).reshape(ph, pw, 3), want_crop)
                check(name + " mask", np.fromfile(paths[4], np.uint8).reshape(ph, pw), want_mcrop)
                check(name + " overlay", np.fromfile(paths[5], np.uint8).reshape(h, w, 3), want_over)
print(f"{n} comparisons ({cases} only-masked cases, 32 boxed resizes) against Pillow {Image.__version__}"
      f"{' and diffusers' if DIFFUSERS else ' (diffusers transcribed: not installed)'}: {fails} differ")
sys.exit(1 if fails else 0)
