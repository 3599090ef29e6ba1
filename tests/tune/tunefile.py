#!/usr/bin/env python3
"""tunefile.py — makes and damages onnx2cl tuning files for the tests (format: docs/tuning.md).

  tunefile.py write FILE MODEL_NAME MODEL_ONNX VERBOSE_LOG TILES [LEVEL]
        a file whose entries give every tunable shape listed in VERBOSE_LOG (the stderr of a
        `--verbose` run: "tuning:   <key> ..." and "tuning: device key: ..." lines) the tiles
        TILES ("TM,TN,TK,RM,RN", any values: out-of-range ones test the runtime's checks), for
        this device (LEVEL exact, the default), this device with another driver (LEVEL driver)
        or another device of the same vendor (LEVEL vendor); model hash = sha256 of MODEL_ONNX
  tunefile.py write-vendor FILE MODEL_NAME MODEL_ONNX KEYS_LOG LIST_DEVICES_LOG TILES
        the same for the vendor named in LIST_DEVICES_LOG (`./model --list-devices` output,
        device 0), keys from KEYS_LOG (a verbose log of any device)
  tunefile.py damage FILE HOW      corrupt (flip a byte of an entry, checksum kept), truncate
                                   (drop the end line), version (format 99, resealed), model
                                   (another model's hash, resealed), nul (a NUL byte in an
                                   entry), empty (0 bytes)
Exit status 0, or 1 with a message.
"""
import hashlib
import re
import sys

FNV_SEED = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def fnv1a64(data):
    h = FNV_SEED
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def seal(body):
    """body: the file up to the end line (bytes, ends with a newline) -> the whole file."""
    n = sum(1 for ln in body.split(b"\n") if ln.startswith(b"e\t"))
    return body + b"end\t%d\t%016x\n" % (n, fnv1a64(body))


def keys_and_device(log):
    text = open(log, encoding="utf-8", errors="replace").read()
    keys = []
    for m in re.finditer(r"^tuning:   (\S+)\s", text, re.M):
        if m.group(1) not in keys:
            keys.append(m.group(1))
    m = re.search(r'^tuning: device key: platform "(.*)", device "(.*)", driver "(.*)", '
                  r'vendor "(.*)"$', text, re.M)
    return keys, (m.groups() if m else None)


def write(path, name, onnx, keys, dev, tiles):
    if not keys:
        sys.exit("tunefile.py: no 'tuning:   KEY' lines in the log: nothing to tune?")
    h = hashlib.sha256(open(onnx, "rb").read()).hexdigest()
    t = tiles.split(",")
    if len(t) != 5:
        sys.exit("tunefile.py: TILES must be TM,TN,TK,RM,RN")
    body = "onnx2cl-tune\t1\nmodel\t%s\t%s\n" % (name, h)
    for k in keys:
        body += "e\t%s\t%s\t%s\t%s\t%s\t%s\t1.0\t2.0\n" % (dev[0], dev[1], dev[2], dev[3], k,
                                                           "\t".join(t))
    open(path, "wb").write(seal(body.encode()))


def main(a):
    if len(a) >= 6 and a[0] == "write":
        keys, dev = keys_and_device(a[4])
        if not dev:
            sys.exit("tunefile.py: no 'tuning: device key:' line in " + a[4])
        if len(a) > 6 and a[6] == "vendor":
            dev = ("other platform", "other device", "other driver", dev[3])
        elif len(a) > 6 and a[6] == "driver":
            dev = (dev[0], dev[1], "other driver", dev[3])
        write(a[1], a[2], a[3], keys, dev, a[5])
    elif len(a) == 7 and a[0] == "write-vendor":
        keys, _ = keys_and_device(a[4])
        m = re.search(r"^\s+type \S+, vendor (.*), \d+ compute units", open(a[5]).read(), re.M)
        if not m:
            sys.exit("tunefile.py: no vendor in " + a[5])
        write(a[1], a[2], a[3], keys, ("other platform", "other device", "other driver",
                                       m.group(1)), a[6])
    elif len(a) == 3 and a[0] == "damage":
        data = open(a[1], "rb").read()
        body = data[: data.rindex(b"end\t")]
        how = a[2]
        if how == "corrupt":
            i = data.index(b"\ne\t") + 3
            data = data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1:]
        elif how == "truncate":
            data = body
        elif how == "version":
            data = seal(body.replace(b"onnx2cl-tune\t1\n", b"onnx2cl-tune\t99\n", 1))
        elif how == "nul":
            i = data.index(b"\ne\t") + 3
            data = data[:i] + b"\0" + data[i + 1:]
        elif how == "empty":
            data = b""
        elif how == "model":
            lines = body.split(b"\n")
            f = lines[1].split(b"\t")
            f[2] = b"0" * 64
            lines[1] = b"\t".join(f)
            data = seal(b"\n".join(lines))
        else:
            sys.exit("tunefile.py: unknown damage " + how)
        open(a[1], "wb").write(data)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
