#!/usr/bin/env python3
"""make_files.py — test data for `onnx2cl --weights-from` (tests/weights_from), committed.

model.onnx: y = MatMul(x [3,6], W [6,5]) + B [5]; e = Gather(E [10,4], idx [3] int64); the
initializers hold one set of values. Safetensors files (written by hand here, per the format:
u64 LE header length, JSON header, data) hold other values:
  good_f32   W, B, E as F32, idx as I64                     -> ref_f32/{y,e}.npy
  good_mixed W as F16, B as BF16, E as F64, idx as I64       -> ref_mixed/{y,e}.npy (numpy on the
             values rounded to those dtypes, computed in float32 like onnx2cl)
  partial    W only (B, E, idx keep the model's values)      -> ref_partial/{y,e}.npy
  bad_*      one defect each (see tests/weights_from/CMakeLists.txt)
x.npy is the input. Run from the repository root: python3 tests/weights_from/make_files.py
"""
import json
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)


def st_bytes(tensors, header_extra=None, raw_header=None):
    """tensors: list of (name, dtype, shape, raw bytes). Offsets packed in order."""
    hdr, data, off = {}, b"", 0
    for name, dt, shape, raw in tensors:
        hdr[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        data += raw
        off += len(raw)
    if header_extra:
        hdr.update(header_extra)
    h = raw_header if raw_header is not None else json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def bf16(a):
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    return r, (r.astype(np.uint32) << 16).view(np.float32)


def write(name, b):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(b)


def main():
    f = TensorProto.FLOAT
    W0 = rng.standard_normal((6, 5)).astype(np.float32)
    B0 = rng.standard_normal(5).astype(np.float32)
    E0 = rng.standard_normal((10, 4)).astype(np.float32)
    idx0 = np.array([1, 7, 3], np.int64)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"], name="mm"),
         helper.make_node("Add", ["xw", "B"], ["y"], name="add"),
         helper.make_node("Gather", ["E", "idx"], ["e"], name="gather", axis=0)],
        "weights_from",
        [helper.make_tensor_value_info("x", f, [3, 6])],
        [helper.make_tensor_value_info("y", f, [3, 5]),
         helper.make_tensor_value_info("e", f, [3, 4])],
        [numpy_helper.from_array(W0, "W"), numpy_helper.from_array(B0, "B"),
         numpy_helper.from_array(E0, "E"), numpy_helper.from_array(idx0, "idx")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "model.onnx"))
    x = rng.standard_normal((3, 6)).astype(np.float32)
    np.save(os.path.join(HERE, "x.npy"), x)

    W = rng.standard_normal((6, 5)).astype(np.float32)
    B = rng.standard_normal(5).astype(np.float32)
    E = rng.standard_normal((10, 4)).astype(np.float32)
    idx = np.array([9, 0, 4], np.int64)

    def refs(folder, Wv, Bv, Ev, idxv):
        os.makedirs(os.path.join(HERE, folder), exist_ok=True)
        np.save(os.path.join(HERE, folder, "y.npy"), (x @ Wv + Bv).astype(np.float32))
        np.save(os.path.join(HERE, folder, "e.npy"), Ev[idxv].astype(np.float32))

    write("good_f32.safetensors", st_bytes(
        [("W", "F32", W.shape, W.tobytes()), ("B", "F32", B.shape, B.tobytes()),
         ("E", "F32", E.shape, E.tobytes()), ("idx", "I64", idx.shape, idx.tobytes())],
        {"__metadata__": {"format": "pt", "note": "caf\\u00e9"}}))
    refs("ref_f32", W, B, E, idx)

    Wh = W.astype(np.float16)
    Bb, Bbf = bf16(B)
    Ed = E.astype(np.float64) * 1.5
    # odd order and a 2-byte tensor first: the F64 data is misaligned in the file
    write("good_mixed.safetensors", st_bytes(
        [("B", "BF16", B.shape, Bb.tobytes()), ("W", "F16", W.shape, Wh.tobytes()),
         ("idx", "I64", idx.shape, idx.tobytes()), ("E", "F64", E.shape, Ed.tobytes())]))
    refs("ref_mixed", Wh.astype(np.float32), Bbf, Ed.astype(np.float32), idx)

    write("partial.safetensors", st_bytes([("W", "F32", W.shape, W.tobytes())]))
    refs("ref_partial", W, B0, E0, idx0)

    good = [("W", "F32", W.shape, W.tobytes())]
    w_ok = {"dtype": "F32", "shape": [6, 5], "data_offsets": [0, 120]}
    write("bad_short.safetensors", b"\x10\x00\x00")
    write("bad_hlen.safetensors", struct.pack("<Q", 1 << 40) + b"{}")
    write("bad_hlen_file.safetensors", struct.pack("<Q", 64) + b"{}" + b" " * 6)
    write("bad_json.safetensors", st_bytes(good, raw_header=b'{"W": {"dtype": "F32", "shape": [6,5]'))
    write("bad_outside.safetensors", st_bytes(good, raw_header=json.dumps(
        {"W": {"dtype": "F32", "shape": [6, 5], "data_offsets": [0, 999999]}}).encode()))
    write("bad_count.safetensors", st_bytes(good, raw_header=json.dumps(
        {"W": {"dtype": "F32", "shape": [6, 5], "data_offsets": [0, 100]}}).encode()))
    write("bad_reversed.safetensors", st_bytes(good, raw_header=json.dumps(
        {"W": {"dtype": "F32", "shape": [6, 5], "data_offsets": [120, 0]}}).encode()))
    write("bad_dtype.safetensors", st_bytes(good, raw_header=json.dumps(
        {"W": {"dtype": "Q4", "shape": [6, 5], "data_offsets": [0, 120]}}).encode()))
    write("bad_float_dim.safetensors", st_bytes(good, raw_header=b'{"W": {"dtype": "F32", '
                                                b'"shape": [6.0, 5], "data_offsets": [0, 120]}}'))
    write("bad_dup.safetensors", st_bytes(good, raw_header=b'{"W": ' + json.dumps(w_ok).encode() +
                                          b', "W": ' + json.dumps(w_ok).encode() + b'}'))
    write("bad_trailing.safetensors", st_bytes(good, raw_header=b'{"W": ' + json.dumps(w_ok).encode() +
                                               b'} x'))
    write("bad_key.safetensors", st_bytes(good, raw_header=json.dumps(
        {"W": {"dtype": "F32", "shape": [6, 5], "data_offsets": [0, 120], "extra": 1}}).encode()))
    # three tensors that do not fit, listed in one message
    Wt = W.T.copy()
    write("bad_fit.safetensors", st_bytes(
        [("W", "F32", Wt.shape, Wt.tobytes()), ("nope", "F32", (2,), b"\0" * 8),
         ("idx", "F32", (3,), b"\0" * 12)]))
    # the data region must be tiled exactly by the tensors (the format's rule; a fresh-user
    # trial found overlaps and trailing bytes accepted)
    raw = W.tobytes()
    x_ok = {"dtype": "F32", "shape": [5], "data_offsets": [100, 120]}
    write("bad_overlap.safetensors", st_bytes(good, raw_header=json.dumps(
        {"W": w_ok, "X": x_ok}).encode()))
    write("bad_hole.safetensors", st_bytes([("W", "F32", W.shape, b"\0" * 8 + raw)], raw_header=json.dumps(
        {"W": {"dtype": "F32", "shape": [6, 5], "data_offsets": [8, 128]}}).encode()))
    write("bad_tail.safetensors", st_bytes([("W", "F32", W.shape, raw + b"\0" * 4)], raw_header=json.dumps(
        {"W": w_ok}).encode()))
    write("bad_empty.safetensors", st_bytes([], raw_header=b"{}"))
    write("bad_meta_only.safetensors", st_bytes([], raw_header=b'{"__metadata__": {"format": "pt"}}'))


if __name__ == "__main__":
    main()
