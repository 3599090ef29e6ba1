#!/usr/bin/env python3
"""make_inpaint_ckpt.py — the tiny 9-channel inpainting checkpoint (architecture
models/arch/tiny_sd15_inpaint) made from the tiny SD 1.5 diffusers folder, with the standard
library only (the test builds it at run time instead of committing 3 MB of weights; the
references were made by diffusers from the same bytes).

What it does
  Copies SRC (tests/pipeline/oneshot/tiny_sd15) to DST, except unet/: config.json gets
  in_channels 9 and diffusion_pytorch_model.safetensors gets conv_in.weight [C,9,3,3] =
  [W, 0.5 W[:,0:1], 0.6 W[:,(k+1)%4] for k = 0..3] (W: the 4-channel weight; input channels 0-3
  latents, 4 the mask, 5-8 the masked image's latents, as runwayml/stable-diffusion-inpainting),
  float32, every other tensor byte for byte. Deterministic: the same files every run.

Usage: make_inpaint_ckpt.py SRC DST
"""
import json
import os
import shutil
import struct
import sys
from array import array


def widen(w, cout, cin=4, k=9):
    """[cout, 4, 3, 3] float32 array -> [cout, 9, 3, 3]."""
    out = array("f")
    for o in range(cout):
        ch = [w[(o * cin + c) * k:(o * cin + c + 1) * k] for c in range(cin)]
        out.extend(ch[0]); out.extend(ch[1]); out.extend(ch[2]); out.extend(ch[3])
        out.extend(array("f", [0.5 * v for v in ch[0]]))
        for j in range(4):
            out.extend(array("f", [0.6 * v for v in ch[(j + 1) % 4]]))
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("unet"))
    os.makedirs(os.path.join(dst, "unet"))
    cfg = json.load(open(os.path.join(src, "unet", "config.json")))
    cfg["in_channels"] = 9
    with open(os.path.join(dst, "unet", "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    data = open(os.path.join(src, "unet", "diffusion_pytorch_model.safetensors"), "rb").read()
    (hl,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hl])
    body = data[8 + hl:]
    meta = header.pop("__metadata__", None)
    names = sorted(header, key=lambda n: header[n]["data_offsets"][0])
    blobs = {}
    for n in names:
        a, b = header[n]["data_offsets"]
        blobs[n] = body[a:b]
    w = header["conv_in.weight"]
    assert w["dtype"] == "F32" and w["shape"][1] == 4, w
    arr = array("f")
    arr.frombytes(blobs["conv_in.weight"])
    if sys.byteorder != "little":
        arr.byteswap()
    wide = widen(arr, w["shape"][0])
    if sys.byteorder != "little":
        wide.byteswap()
    blobs["conv_in.weight"] = wide.tobytes()
    w["shape"] = [w["shape"][0], 9, 3, 3]
    off, out = 0, {}
    if meta is not None:
        out["__metadata__"] = meta
    for n in names:
        out[n] = dict(header[n], data_offsets=[off, off + len(blobs[n])])
        off += len(blobs[n])
    hdr = json.dumps(out, separators=(",", ":")).encode()
    hdr += b" " * (-len(hdr) % 8)
    with open(os.path.join(dst, "unet", "diffusion_pytorch_model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hdr)))
        f.write(hdr)
        for n in names:
            f.write(blobs[n])


if __name__ == "__main__":
    main()
