#!/usr/bin/env python3
"""make_graphs.py — small graphs for the offset views of codegen (codegen/codegen.c banner "offset
views": Concat inputs written in place by their producers, Slice/Split outputs as views).

Writes graphs/<name>/{model.onnx, inputs/*.npy, ref/*.npy} with tests/fusion_conv's graph
builder and writer (ref = onnxruntime, CPU, all graph optimizations disabled, opset 17). Deterministic (numpy default_rng(12)). Slabs are 8 channels of 8x8 float32 =
2048 bytes (a multiple of the runtime's 512-byte sub-buffer alignment) unless said otherwise.
Graphs:
  concat_b1     batch 1, channel axis: Concat(Relu(x), Sigmoid(x)) and Concat of two 1x1 convs
                of x (one conv after sibling_conv), each read by a 1x1 conv -> every input
                written in place: no copy launch
  concat_nested u = Concat(a, b), w = Concat(u, c) (a, b, c convs), s = Slice(w, channels
                8:24), outputs Conv(s) and Conv(w): a, b in u, u and c in w (a chain, resolved to
                w), s a view of w -> no copy launch
  concat_kept   copies that must stay: a batch-2 channel Concat (2 copies: each input is two
                runs); a Concat of 3 + 4 channels of 5x7 (the second slab starts at 420 bytes:
                1 copy; the first is in place); a Concat whose input is also a graph output
                (1 copy; the other input in place) -> 4 copy launches
  split_slice   x = Conv(in) [1, 16, 8, 8]: Split into 8 + 8 channels read by Relu and Sigmoid
                (views); Slice of the last axis 2:6 (strided: 1 copy); Slice of channels 1:5
                (starts at 256 bytes: 1 copy); a Split of another conv whose first output is a
                graph output (1 copy; the second a view) -> 3 copy launches
Usage: python3 make_graphs.py [OUT_DIR]   (default: graphs/ next to this script)
"""
import importlib.util
import os

import numpy as np
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(rel, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fc = _load("../fusion_conv/make_graphs.py", "fc_make_graphs")  # G (graph builder), main
rng = np.random.default_rng(12)


def f32(*dims):
    return rng.standard_normal(dims).astype(np.float32)


def i64(*v):
    return np.array(v, np.int64)


def concat_b1(g):
    ins = {"x": f32(1, 8, 8, 8)}
    y = g.op("Concat", [g.op("Relu", ["x"]), g.op("Sigmoid", ["x"])], axis=1)
    a, b = g.conv("x", 8, 8), g.conv("x", 8, 8)  # one conv after sibling_conv: both in place
    z = g.op("Concat", [a, b], axis=1)
    return ins, [g.conv(y, 16, 4), g.conv(z, 16, 4)]


def concat_nested(g):
    ins = {"x": f32(1, 8, 8, 8)}
    a = g.conv("x", 8, 8)
    b = g.conv("x", 8, 8, k=3, pads=[1, 1, 1, 1])
    c = g.conv(g.op("Relu", ["x"]), 8, 16)
    u = g.op("Concat", [a, b], axis=1)
    w = g.op("Concat", [u, c], axis=1)
    s = g.op("Slice", [w, g.const(i64(8), "st"), g.const(i64(24), "en"), g.const(i64(1), "ax")])
    return ins, [g.conv(s, 16, 4), g.conv(w, 32, 4)]


def concat_kept(g):
    ins = {"x": f32(2, 8, 8, 8), "z": f32(1, 3, 5, 7)}
    b2 = g.op("Concat", [g.conv("x", 8, 8), g.conv(g.op("Relu", ["x"]), 8, 8)], axis=1)
    un = g.op("Concat", [g.conv("z", 3, 3), g.conv("z", 3, 4, k=3, pads=[1, 1, 1, 1])], axis=1)
    x1 = g.op("Slice", ["x", g.const(i64(0), "st"), g.const(i64(1), "en"), g.const(i64(0), "ax")])
    o = g.conv(x1, 8, 8)  # a graph output and a Concat input
    oc = g.op("Concat", [g.conv(g.op("Sigmoid", [x1]), 8, 8), o], axis=1)
    return ins, [g.conv(b2, 16, 4), g.conv(un, 7, 2), o, g.conv(oc, 16, 4)]


def split_slice(g):
    ins = {"x": f32(1, 8, 8, 8)}
    x = g.conv("x", 8, 16)
    s0, s1 = g.name("split"), g.name("split")
    g.nodes.append(helper.make_node("Split", [x, g.const(i64(8, 8), "sz")], [s0, s1], axis=1))
    r = g.op("Relu", [s0])
    sg = g.op("Sigmoid", [s1])
    t0, t1 = g.name("split"), g.name("split")
    g.nodes.append(helper.make_node("Split", [g.conv(g.op("Relu", ["x"]), 8, 16),
                                              g.const(i64(8, 8), "sz")], [t0, t1], axis=1))
    rt = g.op("Relu", [t1])
    last = g.op("Slice", [x, g.const(i64(2), "st"), g.const(i64(6), "en"), g.const(i64(3), "ax")])
    ch = g.op("Slice", [x, g.const(i64(1), "st"), g.const(i64(5), "en"), g.const(i64(1), "ax")])
    return ins, [r, sg, g.op("Relu", [last]), g.op("Relu", [ch]), t0, rt]


GRAPHS = [concat_b1, concat_nested, concat_kept, split_slice]


if __name__ == "__main__":
    fc.main(GRAPHS, HERE)
