#!/usr/bin/env python3
"""make_spelled.py — tests/weights_from/spelled: one model spelled three ways (weights_from.spelled).

The TorchScript and the dynamo exporter write the same Conv differently: TorchScript leaves
defaults out, dynamo writes every attribute (group=1, auto_pad=NOTSET, strides, dilations,
kernel_shape) in another order. Model: y = Conv(Relu(Conv(x [1,8,9,11], W1 [16,8,3,3], B1,
pads 1)), W2 [4,16,1,1]) and e = Gather(T [10,6], ids [3]).
  a.onnx  the short spelling: W1's Conv has pads only, W2's Conv and the Gather no attributes
  b.onnx  the long spelling (dynamo's order, every default written, Gather axis=0), other
          weight values: its weights file must load into a's executable (same weights layout)
  c.onnx  b with W1's Conv dilated (dilations 2, pads 2: the same output shape): another
          computation on the same weights, refused by a's executable naming W1 and both
          attribute sets
inputs/x.npy, inputs/ids.npy; ref_a/, ref_b/: onnxruntime (CPU) outputs of a and b.
Run from the repository root: python3 tests/weights_from/make_spelled.py
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spelled")


def node(op, ins, outs, attrs):
    """A node with its attributes in the given order (helper.make_node sorts them)."""
    n = helper.make_node(op, ins, outs)
    n.attribute.extend(helper.make_attribute(k, v) for k, v in attrs)
    return n


def model(seed, conv1, conv2, gather):
    rng = np.random.default_rng(seed)

    def init(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [init("W1", [16, 8, 3, 3], 0.2), init("B1", [16], 0.1), init("W2", [4, 16, 1, 1], 0.2),
             init("T", [10, 6], 1.0)]
    nodes = [node("Conv", ["x", "W1", "B1"], ["h"], conv1), node("Relu", ["h"], ["r"], []),
             node("Conv", ["r", "W2"], ["y"], conv2), node("Gather", ["T", "ids"], ["e"], gather)]
    g = helper.make_graph(nodes, "spelled",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 9, 11]),
                           helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 9, 11]),
                           helper.make_tensor_value_info("e", TensorProto.FLOAT, [3, 6])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_spelled")
    onnx.checker.check_model(m)
    return m


def dynamo(pads, dil, k):
    return [("group", 1), ("pads", pads), ("auto_pad", "NOTSET"), ("strides", [1, 1]),
            ("dilations", dil), ("kernel_shape", k)]


a = model(1, [("pads", [1, 1, 1, 1])], [], [])
b = model(2, dynamo([1, 1, 1, 1], [1, 1], [3, 3]), dynamo([0, 0, 0, 0], [1, 1], [1, 1]), [("axis", 0)])
c = model(3, dynamo([2, 2, 2, 2], [2, 2], [3, 3]), dynamo([0, 0, 0, 0], [1, 1], [1, 1]), [("axis", 0)])
for d in ("inputs", "ref_a", "ref_b"):
    os.makedirs(os.path.join(OUT, d), exist_ok=True)
rng = np.random.default_rng(4)
feeds = {"x": rng.standard_normal([1, 8, 9, 11]).astype(np.float32),
         "ids": np.array([7, 0, 9], dtype=np.int64)}
for k, v in feeds.items():
    np.save(os.path.join(OUT, "inputs", k + ".npy"), v)
for name, m in (("a", a), ("b", b), ("c", c)):
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    if name != "c":
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        for o, v in zip(("y", "e"), s.run(["y", "e"], feeds)):
            np.save(os.path.join(OUT, "ref_" + name, o + ".npy"), v)
print("wrote", OUT)
