#!/usr/bin/env python3
"""check_infotext.py — reads the `parameters` text of a PNG written by onnx2cl-sd the way
AUTOMATIC1111's "PNG info" does (modules/infotext_utils.py parse_generation_parameters,
stable-diffusion-webui 1.10: the last line holds the "Key: value" pairs when it has at least 3
of them, value = a JSON string or text up to the next comma, "WxH" values split into Key-1 /
Key-2; the lines before it are the prompt until a line starting "Negative prompt:"), written
here from that description (stdlib only: the PNG's tEXt/iTXt chunks are read with zlib/struct),
and checks KEY=VALUE expectations against the parsed dictionary.

Usage: check_infotext.py FILE.png [KEY=VALUE ...]   (exit 0 when all hold; prints the dict)
"""
import json
import re
import struct
import sys
import zlib

PARAM = re.compile(r'\s*(\w[\w \-/]+):\s*("(?:\\.|[^\\"])+"|[^,]*)(?:,|$)')
SIZE = re.compile(r"^(\d+)x(\d+)$")


def png_text(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    out, pos = {}, 8
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"tEXt":
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt":
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"iTXt":
            k, rest = body.split(b"\0", 1)
            comp, _method, rest = rest[0], rest[1], rest[2:]
            _lang, _tk, v = rest.split(b"\0", 2)
            out[k.decode("latin-1")] = (zlib.decompress(v) if comp else v).decode("utf-8")
    return out


def parse(text):
    res, prompt, negative, in_negative = {}, [], [], False
    lines = text.strip().split("\n")
    last = lines.pop()
    if len(PARAM.findall(last)) < 3:
        lines.append(last)
        last = ""
    for line in lines:
        line = line.strip()
        if line.startswith("Negative prompt:"):
            in_negative = True
            line = line[len("Negative prompt:"):].strip()
        (negative if in_negative else prompt).append(line)
    res["Prompt"], res["Negative prompt"] = "\n".join(prompt), "\n".join(negative)
    for k, v in PARAM.findall(last):
        if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
            try:
                v = json.loads(v)
            except ValueError:
                pass
        m = SIZE.match(v)
        if m:
            res[k + "-1"], res[k + "-2"] = m.group(1), m.group(2)
        else:
            res[k] = v
    return res


def main():
    text = png_text(sys.argv[1]).get("parameters")
    if text is None:
        print(f"{sys.argv[1]}: no parameters chunk")
        return 1
    res = parse(text)
    fails = 0
    for kv in sys.argv[2:]:
        k, v = kv.split("=", 1)
        if res.get(k) != v:
            print(f"{sys.argv[1]}: {k}: got {res.get(k)!r}, expected {v!r}")
            fails += 1
    if fails:
        print(json.dumps(res, indent=1))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
