#!/usr/bin/env python3
"""make_pointwise.py — the two spatially pointwise models of tests/vae_tiling (committed .onnx files;
onnx only): tiling one of them must give the untiled result up to rounding, which tests the tiled
run's batching, float16 conversion and gather/scatter independently of any GroupNorm effect.
  up_f16.onnx:   x float16 [B,4,H,W] -> Conv 1x1 (4->3) -> Resize nearest x2 -> y float16 [B,3,2H,2W]
  down_f32.onnx: x float32 [B,3,H,W] -> AveragePool 2x2 stride 2 -> Conv 1x1 (3->8) -> y [B,8,H/2,W/2]
Weights: W[o][c] = 0.1 (o + 1) - 0.05 c, bias[o] = 0.01 o (test_vae_tiling.c computes the same).
Usage: make_pointwise.py OUT_DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def wb(cout, cin, dt):
    w = np.array([[0.1 * (o + 1) - 0.05 * c for c in range(cin)] for o in range(cout)], dtype=dt)
    b = np.array([0.01 * o for o in range(cout)], dtype=dt)
    return numpy_helper.from_array(w.reshape(cout, cin, 1, 1), "w"), numpy_helper.from_array(b, "b")


def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_pointwise.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    out = sys.argv[1]
    w, b = wb(3, 4, np.float16)
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales")
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
         helper.make_node("Resize", ["c", "", "scales"], ["y"], mode="nearest")],
        "up_f16",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["B", 4, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, ["B", 3, "H2", "W2"])], [w, b, scales])
    save(g, os.path.join(out, "up_f16.onnx"))
    w, b = wb(8, 3, np.float32)
    g = helper.make_graph(
        [helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Conv", ["p", "w", "b"], ["y"])],
        "down_f32",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 8, "H2", "W2"])], [w, b])
    save(g, os.path.join(out, "down_f32.onnx"))


if __name__ == "__main__":
    main()
