#!/usr/bin/env python3
"""make_models.py — small ONNX graphs for the batched_linear / gemm_epilogue / elementwise
fusions, with inputs and onnxruntime reference outputs (committed; rerun to regenerate:
python3 tests/fusion_linear/make_models.py). Needs numpy, onnx, onnxruntime.

  linear/   x[2,5,12]: Q/K/V MatMuls sharing x (odd widths 7, 9, 7), one with bias+SiLU, one
            with bias+Relu+residual; a Gemm pair sharing t[3,10] (transB=1, alpha, beta, C);
            a lone Gemm -> bias -> Div(scale) -> Gelu-free SiLU chain; outputs stay separate.
  elem/     elementwise chains with odd numpy broadcasting: a[3,1,5], b[4,1], c[5], cond bool
            [3,4,5], a [3,1,1] constant tensor, scalar constants, Where/Clip/Max/Min/Pow/Erf/...
"""
import os
import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


def const(name, arr):
    return nh.from_array(np.asarray(arr), name)


def save(folder, graph, feeds):
    d = os.path.join(HERE, folder)
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(d, "ref"), exist_ok=True)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    outs = s.run(None, feeds)
    for k, v in feeds.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v)
    for o, v in zip(s.get_outputs(), outs):
        np.save(os.path.join(d, "ref", o.name + ".npy"), v)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def linear():
    K = 12
    nodes, inits = [], []
    ws = {"wq": f32(K, 7) / 3, "wk": f32(K, 9) / 3, "wv": f32(K, 7) / 3}
    for k, v in ws.items():
        inits.append(const(k, v))
    inits += [const("bk", f32(9) * 0.1), const("bv", f32(1, 1, 7) * 0.1)]
    nodes += [h.make_node("MatMul", ["x", "wq"], ["q"]),
              h.make_node("MatMul", ["x", "wk"], ["k0"]),
              h.make_node("MatMul", ["x", "wv"], ["v0"]),
              h.make_node("Add", ["k0", "bk"], ["k1"]),
              h.make_node("Sigmoid", ["k1"], ["ks"]),
              h.make_node("Mul", ["k1", "ks"], ["k"]),
              h.make_node("Add", ["bv", "v0"], ["v1"]),
              h.make_node("Relu", ["v1"], ["v2"]),
              h.make_node("Add", ["v2", "r"], ["v"])]
    # Gemm pair sharing t: transB=1 with alpha/beta/C, and plain
    inits += [const("g1w", f32(6, 10) / 3), const("g1c", f32(6) * 0.1),
              const("g2w", f32(10, 5) / 3), const("g2c", f32(1, 5) * 0.1)]
    nodes += [h.make_node("Gemm", ["t", "g1w", "g1c"], ["g1"], transB=1, alpha=0.5, beta=2.0),
              h.make_node("Gemm", ["t", "g2w", "g2c"], ["g2"])]
    # lone linear: MatMul -> bias -> Div(scale) -> SiLU -> MatMul -> bias -> residual
    inits += [const("lw", f32(10, 11) / 3), const("lb", f32(11) * 0.1), const("ls", np.float32(2.0)),
              const("lw2", f32(11, 10) / 3), const("lb2", f32(10) * 0.1)]
    nodes += [h.make_node("MatMul", ["t", "lw"], ["l0"]),
              h.make_node("Add", ["l0", "lb"], ["l1"]),
              h.make_node("Div", ["l1", "ls"], ["l2"]),
              h.make_node("Sigmoid", ["l2"], ["l3"]),
              h.make_node("Mul", ["l3", "l2"], ["l4"]),
              h.make_node("MatMul", ["l4", "lw2"], ["l5"]),
              h.make_node("Add", ["lb2", "l5"], ["l6"]),
              h.make_node("Add", ["l6", "t"], ["l"])]
    vi = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
    g = h.make_graph(nodes, "linear", [vi("x", [2, 5, K]), vi("r", [2, 5, 7]), vi("t", [3, 10])],
                     [vi("q", [2, 5, 7]), vi("k", [2, 5, 9]), vi("v", [2, 5, 7]), vi("g1", [3, 6]),
                      vi("g2", [3, 5]), vi("l", [3, 10])], inits)
    save("linear", g, {"x": f32(2, 5, K), "r": f32(2, 5, 7), "t": f32(3, 10)})


def elem():
    nodes, inits = [], []
    inits += [const("half", np.float32(0.5)), const("two", np.float32(2.0)),
              const("cb", f32(3, 1, 1)), const("lo", np.float32(-0.3)), const("hi", np.float32(0.7)),
              const("three", np.full([1], 3.0, np.float32))]
    nodes += [h.make_node("Add", ["a", "b"], ["e1"]),            # [3,4,5]
              h.make_node("Mul", ["e1", "c"], ["e2"]),
              h.make_node("Sub", ["e2", "half"], ["e3"]),
              h.make_node("Max", ["e3", "a"], ["e4"]),
              h.make_node("Sigmoid", ["e4"], ["e5"]),
              h.make_node("Mul", ["e5", "cb"], ["e6"]),
              h.make_node("Pow", ["e6", "two"], ["e7"]),
              h.make_node("Neg", ["b"], ["e3n0"]),
              h.make_node("Div", ["e3n0", "three"], ["e3n"]),
              h.make_node("Erf", ["e3n"], ["e8"]),
              h.make_node("Where", ["cond", "e7", "e8"], ["e9"]),
              h.make_node("Clip", ["e9", "lo", "hi"], ["e10"]),
              h.make_node("Min", ["e10", "c", "b"], ["e11"]),
              h.make_node("Tanh", ["e11"], ["y"]),
              # a second chain sharing input a, with a NaN-carrying input
              h.make_node("Relu", ["n"], ["m1"]),
              h.make_node("Abs", ["m1"], ["m2"]),
              h.make_node("Sqrt", ["m2"], ["m3"]),
              h.make_node("Add", ["m3", "a"], ["z"])]
    vi = lambda n, s, t=TP.FLOAT: h.make_tensor_value_info(n, t, s)
    g = h.make_graph(nodes, "elem", [vi("a", [3, 1, 5]), vi("b", [4, 1]), vi("c", [5]),
                                     vi("cond", [3, 4, 5], TP.BOOL), vi("n", [2, 3, 4, 5])],
                     [vi("y", [3, 4, 5]), vi("z", [2, 3, 4, 5])], inits)
    n = f32(2, 3, 4, 5)
    n[0, 1, 2, 3] = np.nan
    save("elem", g, {"a": f32(3, 1, 5), "b": f32(4, 1), "c": f32(5),
                     "cond": rng.random((3, 4, 5)) < 0.5, "n": n})


if __name__ == "__main__":
    linear()
    elem()
