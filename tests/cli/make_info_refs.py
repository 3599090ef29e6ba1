#!/usr/bin/env python3
"""make_info_refs.py — reference figures for `onnx2cl --info` (tests/cli/info_test.sh).

Computed here independently of onnx2cl, with onnx, numpy and onnxruntime (the committed .ref
files are what the test reads; CI needs none of these packages):
  parameters  sum of the element counts of graph.initializer;
  ops         op_type histogram of graph.node;
  flops       2 x multiply-accumulates of MatMul, Gemm, Conv, ConvTranspose nodes, with every
              intermediate shape taken from an onnxruntime run on the model's inputs (the test
              inputs of models/tiny, random ones for ops.onnx); attention appears as its MatMuls;
  inputs/outputs names.
Also writes tests/cli/info/ops.onnx: a small graph with every counted op kind (batched MatMul,
Gemm with transA/transB, grouped strided dilated Conv, grouped strided ConvTranspose, and an
attention block softmax(Q K^T / sqrt(d)) V that onnx2cl fuses into one kernel).
Writes tests/cli/info/<name>.ref (key: value lines). Run from the repository root:
    python3 tests/cli/make_info_refs.py
"""
import os
from collections import Counter

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "info")


def make_ops_model(path):
    rng = np.random.default_rng(7)

    def init(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    inits = [
        init("w_mm", 12, 5),            # MatMul [2,3,7,12] x [12,5]
        init("w_gemm", 9, 12),          # Gemm transB: [7,12] x [9,12]^T
        init("w_conv", 8, 2, 3, 3),     # Conv C=4, group 2: [OC, C/group, 3, 3]
        init("b_conv", 8),
        init("w_ct", 8, 3, 2, 2),       # ConvTranspose C=8, group 2: OC = 6
        init("wq", 16, 16), init("wk", 16, 16), init("wv", 16, 16),
        numpy_helper.from_array(np.array([0.25], np.float32), "scale"),
        numpy_helper.from_array(np.array([1, 10, 2, 8], np.int64), "heads"),
    ]
    nodes = [
        helper.make_node("MatMul", ["a", "w_mm"], ["mm"], name="mm"),
        helper.make_node("Gemm", ["g", "w_gemm"], ["gemm"], name="gemm", transB=1),
        helper.make_node("Gemm", ["gt", "w_gemm"], ["gemm_t"], name="gemm_t", transA=1, transB=1),
        helper.make_node("Conv", ["x", "w_conv", "b_conv"], ["conv"], name="conv", group=2,
                         strides=[2, 1], pads=[1, 1, 1, 1], dilations=[1, 2]),
        helper.make_node("ConvTranspose", ["conv", "w_ct"], ["ct"], name="ct", group=2,
                         strides=[2, 2]),
        helper.make_node("MatMul", ["t", "wq"], ["q0"], name="q"),
        helper.make_node("MatMul", ["t", "wk"], ["k0"], name="k"),
        helper.make_node("MatMul", ["t", "wv"], ["v0"], name="v"),
        helper.make_node("Reshape", ["q0", "heads"], ["q1"]),
        helper.make_node("Reshape", ["k0", "heads"], ["k1"]),
        helper.make_node("Reshape", ["v0", "heads"], ["v1"]),
        helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"], name="qk"),
        helper.make_node("Mul", ["s0", "scale"], ["s1"]),
        helper.make_node("Softmax", ["s1"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="pv"),
    ]
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "info_ops",
        [helper.make_tensor_value_info("a", f, [2, 3, 7, 12]),
         helper.make_tensor_value_info("g", f, [7, 12]),
         helper.make_tensor_value_info("gt", f, [12, 7]),
         helper.make_tensor_value_info("x", f, [1, 4, 11, 10]),
         helper.make_tensor_value_info("t", f, [1, 10, 16])],
        [helper.make_tensor_value_info(n, f, d) for n, d in
         (("mm", [2, 3, 7, 5]), ("gemm", [7, 9]), ("gemm_t", [7, 9]), ("ct", [1, 6, 12, 16]),
          ("o", [1, 2, 10, 8]))],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def run_shapes(path, feeds):
    """Shapes of every node output, from one onnxruntime run with all of them as outputs."""
    import onnxruntime as ort
    m = onnx.load(path)
    known = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in known:
                m.graph.output.append(onnx.ValueInfoProto(name=o))
                known.add(o)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return {n: list(np.asarray(v).shape) for n, v in zip(names, sess.run(names, feeds))}


def figures(path, feeds):
    g = onnx.load(path).graph
    shape = run_shapes(path, feeds)
    for k, v in feeds.items():
        shape[k] = list(v.shape)
    for t in g.initializer:
        shape[t.name] = list(t.dims)
    numel = lambda n: int(np.prod(shape[n], dtype=np.int64))
    macs = 0
    for n in g.node:
        if n.op_type == "MatMul":
            macs += numel(n.output[0]) * shape[n.input[0]][-1]
        elif n.op_type == "Gemm":
            ta = next((a.i for a in n.attribute if a.name == "transA"), 0)
            a = shape[n.input[0]]
            macs += numel(n.output[0]) * (a[0] if ta else a[1])
        elif n.op_type == "Conv":
            macs += numel(n.output[0]) * numel(n.input[1]) // shape[n.input[1]][0]
        elif n.op_type == "ConvTranspose":
            macs += numel(n.input[0]) * numel(n.input[1]) // shape[n.input[1]][0]
    params = sum(int(np.prod(t.dims, dtype=np.int64)) for t in g.initializer)
    inits = {t.name for t in g.initializer}
    hist = Counter(n.op_type for n in g.node)
    return {
        "parameters": params,
        "flops": 2 * macs,
        "nodes": len(g.node),
        "ops": " ".join(f"{k}={hist[k]}" for k in sorted(hist)),
        "inputs": " ".join(i.name for i in g.input if i.name not in inits),
        "outputs": " ".join(o.name for o in g.output),
    }


def tiny_feeds(folder):
    return {f[:-4]: np.load(os.path.join(folder, "inputs", f))
            for f in sorted(os.listdir(os.path.join(folder, "inputs")))}


if __name__ == "__main__":
    os.makedirs(HERE, exist_ok=True)
    ops = os.path.join(HERE, "ops.onnx")
    make_ops_model(ops)
    rng = np.random.default_rng(1)
    models = {
        "ops": (ops, {i.name: rng.standard_normal(
            [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in onnx.load(ops).graph.input}),
    }
    for name in ("unet", "vae_decoder", "text_encoder"):
        models[name] = (f"models/tiny/{name}/model.onnx", tiny_feeds(f"models/tiny/{name}"))
    for name, (path, feeds) in models.items():
        fig = figures(path, feeds)
        with open(os.path.join(HERE, name + ".ref"), "w") as f:
            for k, v in fig.items():
                f.write(f"{k}: {v}\n")
        print(name, fig["parameters"], fig["flops"], fig["nodes"])
