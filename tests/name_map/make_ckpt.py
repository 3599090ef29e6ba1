#!/usr/bin/env python3
"""make_ckpt.py MODEL.onnx NAMEMAP ARCH_JSON OUT.safetensors

A component checkpoint in canonical diffusers keys (what save_pretrained writes) holding the
values of MODEL.onnx's initializers, made by inverting NAMEMAP: copy as is, transpose back,
reshape to the key's shape (from ARCH_JSON's "keys"), concat0 split by the keys' shapes. For
tests/name_map: the committed tiny exports then give a float32 checkpoint of their own weights
without committing one. Needs numpy and onnx only (as the other test scripts); writes the
safetensors format directly (8-byte header length, JSON header, data in key order).
"""
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model_path, nm_path, arch_path, out = sys.argv[1:5]
m = onnx.load(model_path)
inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
keys_all = json.load(open(arch_path))["keys"]
shapes = {}
for comp in keys_all.values():
    shapes.update(comp)
tensors = {}
for line in open(nm_path):
    if line.startswith("#") or not line.strip():
        continue
    name, comp, keys, tr = line.rstrip("\n").split("\t")
    if comp == "-":
        continue
    a = inits[name]
    keys = keys.split(",")
    if tr == "concat0":
        parts = np.split(a, np.cumsum([shapes[k][0] for k in keys])[:-1], axis=0)
    else:
        x = a.T if tr == "transpose" else a
        parts = [x.reshape(shapes[k]) for k in keys]
    for k, p in zip(keys, parts):
        tensors[k] = np.ascontiguousarray(p, dtype=np.float32)
header, off = {}, 0
for k in sorted(tensors):
    n = tensors[k].nbytes
    header[k] = {"dtype": "F32", "shape": list(tensors[k].shape), "data_offsets": [off, off + n]}
    off += n
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open(out, "wb") as f:
    f.write(len(h).to_bytes(8, "little"))
    f.write(h)
    for k in sorted(tensors):
        f.write(tensors[k].tobytes())
print(f"{out}: {len(tensors)} tensors, {off} bytes")
