#!/usr/bin/env python3
"""make_small_heads.py — attention graphs with head dims below 8 (tests/fusion_attention).

softmax(q·kᵀ·scale)·v over 3-D q [1, N, D], k, v [1, S, D] (one head; S > 16, so the CPU
kernel runs several key tiles) for D = 1, 3, 4, 5, 7: the CPU kernel's output chunks of 4 and 1
columns each ran twice per key tile, and the GPU kernel's d-chunk of 1 (D = 1) gave wrong
scores: wrong results with exit 0 until 2026-12-01 (found by a fresh-user sweep).
Writes graphs/small_d<D>/{model.onnx, inputs/*.npy, ref/y.npy} (onnxruntime CPU reference).
Run from the repository root: python3 tests/fusion_attention/make_small_heads.py
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
N, S = 9, 37


def graph(d):
    sc = numpy_helper.from_array(np.array(d ** -0.5, np.float32), "sc")
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["w"]),
             helper.make_node("Mul", ["w", "sc"], ["w1"]),
             helper.make_node("Softmax", ["w1"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    ins = [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, N, d]),
           helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, S, d]),
           helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, S, d])]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, N, d])]
    g = helper.make_graph(nodes, f"small_d{d}", ins, outs, [sc])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="make_small_heads")


def main():
    rng = np.random.default_rng(23)
    for d in (1, 3, 4, 5, 7):
        m = graph(d)
        onnx.checker.check_model(m)
        out = os.path.join(HERE, "graphs", f"small_d{d}")
        os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
        os.makedirs(os.path.join(out, "ref"), exist_ok=True)
        onnx.save(m, os.path.join(out, "model.onnx"))
        feeds = {n: (rng.standard_normal(s) * 2).astype(np.float32)
                 for n, s in (("q", [1, N, d]), ("k", [1, S, d]), ("v", [1, S, d]))}
        for n, a in feeds.items():
            np.save(os.path.join(out, "inputs", n + ".npy"), a)
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        np.save(os.path.join(out, "ref", "y.npy"), s.run(None, feeds)[0])
        print("wrote", out)


if __name__ == "__main__":
    main()
