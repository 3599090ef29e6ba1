#!/usr/bin/env python3
"""make_png_modes.py — PNG fixtures of every color type / bit depth (tests/pipeline/png_modes/) and
what diffusers' load_image sees in each: PIL Image.open(f).convert("RGB") and convert("L") bytes
(NAME.rgb, NAME.l; absent for a mode onnx2cl-sd refuses). Read by test_png_read.c (sdp_png_read
against PIL, bit for bit). Files written with zlib/struct (any depth); PIL (Pillow 10+) only reads.

Usage: make_png_modes.py OUT_DIR
"""
import os
import random
import struct
import sys
import zlib

from PIL import Image

W, H = 5, 3


def chunk(kind, body):
    c = struct.pack(">I", len(body)) + kind + body
    return c + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png(path, ct, depth, samples, plte=None, trns=None):
    """samples: rows of per-pixel sample lists (ints of `depth` bits)."""
    raw = b""
    for row in samples:
        bits, nb = 0, 0
        line = bytearray()
        for px in row:
            for v in px:
                if depth >= 8:
                    line += v.to_bytes(depth // 8, "big")
                else:
                    bits, nb = (bits << depth) | v, nb + depth
                    if nb == 8:
                        line.append(bits)
                        bits, nb = 0, 0
        if nb:
            line.append(bits << (8 - nb))
        raw += b"\0" + bytes(line)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, depth, ct, 0, 0, 0))
    if plte:
        data += chunk(b"PLTE", bytes(sum(plte, [])))
    if trns is not None:
        data += chunk(b"tRNS", trns)
    data += chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    open(path, "wb").write(data)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(7)
    cases = []
    for depth in (1, 2, 4, 8):
        cases.append((f"gray{depth}", 0, depth, 1, None, None))
    cases.append(("gray8_trns", 0, 8, 1, None, struct.pack(">H", 17)))
    cases.append(("gray16", 0, 16, 1, None, None))  # refused
    for depth in (8, 16):
        cases.append((f"rgb{depth}", 2, depth, 3, None, None))
        cases.append((f"gray_alpha{depth}", 4, depth, 2, None, None))
        cases.append((f"rgba{depth}", 6, depth, 4, None, None))
    plte = [[rnd.randrange(256) for _ in range(3)] for _ in range(16)]
    cases.append(("palette4", 3, 4, 1, plte, None))
    cases.append(("palette8_trns", 3, 8, 1, plte, bytes([0, 128, 255])))
    for name, ct, depth, n, pl, trns in cases:
        top = (len(pl) if pl else 1 << depth) - 1
        samples = [[[rnd.randint(0, top) for _ in range(n)] for _ in range(W)] for _ in range(H)]
        f = os.path.join(out, name + ".png")
        png(f, ct, depth, samples, pl, trns)
        if name == "gray16":
            continue
        im = Image.open(f)
        open(os.path.join(out, name + ".rgb"), "wb").write(im.convert("RGB").tobytes())
        open(os.path.join(out, name + ".l"), "wb").write(im.convert("L").tobytes())


if __name__ == "__main__":
    main()
