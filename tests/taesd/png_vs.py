#!/usr/bin/env python3
"""png_vs.py — compares an 8-bit RGB PNG (onnx2cl-sd's writer) with a float image, stdlib only
(CI has no numpy).
  png_vs.py A.png REF.npy ATOL   : |A/255 - REF| <= ATOL + 0.5/255 for every value (REF: float32
                                   [1,3,H,W] .npy in [0, 1]; 8-bit rounding allowed)
  png_vs.py A.png B.png          : the pixels are equal
Prints one line; exit 0 when it holds, 1 otherwise (a file that is not a valid PNG: 1)."""
import struct
import sys
import zlib


def read_png(path):
    b = open(path, "rb").read()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"FAIL {path}: not a PNG (signature)")
    pos, idat, w = 8, b"", None
    ended = False
    while pos < len(b):
        n, typ = struct.unpack(">I4s", b[pos:pos + 8])
        data = b[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", b[pos + 8 + n:pos + 12 + n])[0]
        if zlib.crc32(typ + data) != crc:
            raise SystemExit(f"FAIL {path}: bad CRC in {typ!r}")
        if typ == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", data[:10])
            if depth != 8 or color != 2:
                raise SystemExit(f"FAIL {path}: not 8-bit RGB")
        elif typ == b"IDAT":
            idat += data
        elif typ == b"IEND":
            ended = True
            break
        pos += 12 + n
    if w is None or not ended:
        raise SystemExit(f"FAIL {path}: no IHDR or IEND (truncated)")
    raw, bpp, stride = zlib.decompress(idat), 3, 3 * w
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            c = prev[x - bpp] if x >= bpp else 0
            up = prev[x]
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + up) & 255
            elif f == 3:
                line[x] = (line[x] + (a + up) // 2) & 255
            elif f == 4:
                p = a + up - c
                pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, b"".join(rows)


def read_npy(path):
    b = open(path, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    hdr = b[10:10 + hl].decode()
    if "'<f4'" not in hdr or "False" not in hdr:
        raise SystemExit(f"FAIL {path}: not a C-order float32 .npy")
    shape = tuple(int(x) for x in hdr.split("(")[1].split(")")[0].split(",") if x.strip())
    data = struct.unpack(f"<{len(b[10 + hl:]) // 4}f", b[10 + hl:])
    return shape, data


def main():
    a = sys.argv[1]
    w, h, pix = read_png(a)
    if sys.argv[2].endswith(".png"):
        w2, h2, pix2 = read_png(sys.argv[2])
        ok = (w, h, pix) == (w2, h2, pix2)
        print(f"{a} vs {sys.argv[2]}: {w}x{h}, pixels {'equal' if ok else 'differ'}")
        return 0 if ok else 1
    shape, ref = read_npy(sys.argv[2])
    atol = float(sys.argv[3])
    if shape[-3:] != (3, h, w):
        print(f"FAIL {a}: {w}x{h}, reference {shape}")
        return 1
    worst = 0.0
    for c in range(3):
        for i in range(w * h):
            worst = max(worst, abs(pix[i * 3 + c] / 255.0 - ref[c * w * h + i]))
    ok = worst <= atol + 0.5 / 255
    print(f"{a} vs {sys.argv[2]}: {w}x{h}, max |png/255 - ref| {worst:.2e} (bound {atol} + 0.5/255): "
          f"{'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
