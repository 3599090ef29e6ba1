#!/usr/bin/env python3
"""make_model.py — writes model.onnx and model.namemap for tests/compile_memory (dev only; the
outputs are committed): a chain of 16 linears y = x @ W0 @ W1 ... @ W15, x [1, 1792], each Wi
[1792, 1792] float32 (12.25 MiB; 196 MiB in all), each a placeholder of a weight-free graph
(models/make_arch.py's form) that the name map fills from checkpoint key `wi` [1792, 1792]
transposed (a linear's [out, in] weight), as SD's attention and feed-forward linears are."""
import os

import onnx
from onnx import TensorProto, helper

D, L = 1792, 16
HERE = os.path.dirname(os.path.abspath(__file__))
inits, nodes = [], []
for i in range(L):
    w = TensorProto(name="W%d" % i, data_type=TensorProto.FLOAT, dims=[D, D])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.placeholder"), ("length", str(D * D * 4))):
        e = w.external_data.add()
        e.key, e.value = k, v
    inits.append(w)
    nodes.append(helper.make_node("MatMul", ["x" if i == 0 else "h%d" % i, "W%d" % i],
                                  ["y" if i == L - 1 else "h%d" % (i + 1)], name="linear%d" % i))
g = helper.make_graph(nodes, "linears", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, D])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, D])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_model.py")
onnx.save(m, os.path.join(HERE, "model.onnx"))
with open(os.path.join(HERE, "model.namemap"), "w") as f:
    f.write("# onnx2cl name map: <initializer>\\t<component>\\t<key>[,<key>...]\\t<transform> (docs/engine.md)\n")
    for i in range(L):
        f.write("W%d\tunet\tw%d\ttranspose\n" % (i, i))
