#!/usr/bin/env python3
"""make_grouped.py — tests/weights_from/grouped: a model whose conv weights are rearranged at load.

model.onnx: y = Conv(x [1,16,9,11], W [32,8,3,3], B [32], group 2, pads 1) followed by a 3x3
ungrouped Conv(32 -> 16) and a 1x1 Conv(16 -> 16): compiled with ONNX2CL_FCONV=im2col the grouped
conv runs the im2col kernel, whose grouped (flat) tap order differs from the stored direct form,
so its weights are rearranged at load (runtime/repack.c); compiled without, nothing is. The 16-
and 32-channel ungrouped convs run the 16-channel kernels, which read the stored 8-channel panels.
inputs/x.npy, ref/y.npy: the onnxruntime (CPU) reference. Run from the repository root:
python3 tests/weights_from/make_grouped.py
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grouped")
rng = np.random.default_rng(5)


def init(name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


inits = [init("W1", [32, 8, 3, 3], 0.2), init("B1", [32], 0.1),
         init("W2", [16, 32, 3, 3], 0.1), init("B2", [16], 0.1),
         init("W3", [16, 16, 1, 1], 0.2)]
nodes = [helper.make_node("Conv", ["x", "W1", "B1"], ["h1"], group=2, pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["h1", "W2", "B2"], ["h2"], pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["h2", "W3"], ["y"])]
g = helper.make_graph(nodes, "grouped",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 9, 11])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 9, 11])],
                      inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_grouped")
onnx.checker.check_model(m)
os.makedirs(os.path.join(OUT, "inputs"), exist_ok=True)
os.makedirs(os.path.join(OUT, "ref"), exist_ok=True)
onnx.save(m, os.path.join(OUT, "model.onnx"))
x = rng.standard_normal([1, 16, 9, 11]).astype(np.float32)
np.save(os.path.join(OUT, "inputs", "x.npy"), x)
s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
np.save(os.path.join(OUT, "ref", "y.npy"), s.run(None, {"x": x})[0])
print("wrote", OUT)
