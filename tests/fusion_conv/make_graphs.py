#!/usr/bin/env python3
"""make_graphs.py — small graphs for the sibling_conv fusion (passes/fuse/sibling_conv.c).

Writes graphs/<name>/{model.onnx, inputs/*.npy, ref/*.npy} with tests/fusion_linear's save
(ref = onnxruntime, CPU, all graph optimizations disabled, opset 17) and tests/fusion_attention's
graph builder. Deterministic (numpy default_rng(11)); outputs are the convs' own values.
Graphs (every conv reads the same x = Relu(input) unless said otherwise):
  qkv_bias      batch 2, 40 channels, 5x7: three 1x1 convs with bias, 40 -> 24 / 40 / 8 (odd
                per-member widths, not multiples of the kernels' 16-channel panels) -> 1 merge
  geom_mix      1x1 16->8 (bias), 3x3 pad 1 16->8 (bias), 1x1 stride 2 16->4, 1x1 16->12 (no
                bias), 3x3 pad 1 16->4 (no bias), 3x3 pad 1 dilation 2 16->4: the two plain
                1x1 merge, the two 3x3 pad 1 merge, the stride-2 and the dilated one are left
                (different geometry) -> 2 merges, 2 rejections
  weight_input  1x1 convs 12->6, 12->5 (weight a graph input), 12->7, batch 2 -> 1 merge of the
                two constant-weight convs, 1 rejection
  epilogue      batch 2, 20 channels, 6x5: q, u plain 1x1 (q with bias), k and k2 followed by
                SiLU (Sigmoid, Mul), v followed by a residual Add of a graph input: after
                conv_epilogue q+u merge, k+k2 merge (same SiLU epilogue), v is left (residual)
  many          five 1x1 siblings 8 -> 3, 5, 8, 6, 10 on 4x4 -> cut into chunks of 3 + 2 (16
                channels each: the 4- and 16-channel blocks of the kernels straddle members)
  splitk        batch 2, 520 channels, 3x3: 1x1 convs 520 -> 6 / 10 / 4 (K = 520: the gpu class
                splits K in two slices, the split-K reduce kernel stores the splits)
  attnblock     GroupNorm (InstanceNormalization form) + q/k/v 1x1 convs + single-head
                attention over the positions + proj_out 1x1 conv + residual (the CompVis/ldm
                AttnBlock in plain ops), batch 2, 24 channels, 6x6
  conv1d        1-D convs, batch 2, 6 channels, length 11: k=3 pad 1 6 -> 5 (bias) and 6 -> 3 (no
                bias) merge, k=3 pad 0 6 -> 4 is left (other geometry)
Usage: python3 make_graphs.py [OUT_DIR]   (default: graphs/ next to this script)
"""
import importlib.util
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(rel, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fa = _load("../fusion_attention/make_graphs.py", "fa_make_graphs")  # G: the graph builder
fl = _load("../fusion_linear/make_models.py", "fl_make_models")     # save: model + ort refs
rng = np.random.default_rng(11)


class G(fa.G):
    """fusion_attention's graph builder (nodes, initializers, unique names) + convs."""

    def conv(self, x, cin, cout, k=1, bias=True, w=None, **attrs):
        if w is None:
            w = self.const((rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k))
                           .astype(np.float32), "w")
        ins = [x, w]
        if bias:
            ins.append(self.const((rng.standard_normal(cout) * 0.1).astype(np.float32), "b"))
        return self.op("Conv", ins, **attrs)

    def silu(self, y):
        return self.op("Mul", [y, self.op("Sigmoid", [y])])


def f32(*dims):
    return rng.standard_normal(dims).astype(np.float32)


def qkv_bias(g):
    ins = {"x": f32(2, 40, 5, 7)}
    x = g.op("Relu", ["x"])
    return ins, [g.conv(x, 40, c) for c in (24, 40, 8)]


def geom_mix(g):
    ins = {"x": f32(1, 16, 9, 9)}
    x = g.op("Relu", ["x"])
    a = g.conv(x, 16, 8)
    b = g.conv(x, 16, 8, k=3, pads=[1, 1, 1, 1])
    c = g.conv(x, 16, 4, strides=[2, 2])
    d = g.conv(x, 16, 12, bias=False)
    e = g.conv(x, 16, 4, k=3, bias=False, pads=[1, 1, 1, 1])
    f = g.conv(x, 16, 4, k=3, pads=[2, 2, 2, 2], dilations=[2, 2])
    return ins, [a, b, c, d, e, f]


def weight_input(g):
    ins = {"x": f32(2, 12, 6, 6), "wb": f32(5, 12, 1, 1)}
    x = g.op("Relu", ["x"])
    return ins, [g.conv(x, 12, 6), g.conv(x, 12, 5, w="wb"), g.conv(x, 12, 7)]


def epilogue(g):
    ins = {"x": f32(2, 20, 6, 5), "r": f32(2, 16, 6, 5)}
    x = g.op("Relu", ["x"])
    q = g.conv(x, 20, 12)
    k = g.silu(g.conv(x, 20, 8))
    v = g.op("Add", [g.conv(x, 20, 16), "r"])
    u = g.conv(x, 20, 4, bias=False)
    k2 = g.silu(g.conv(x, 20, 12))
    return ins, [q, k, v, u, k2]


def many(g):
    ins = {"x": f32(1, 8, 4, 4)}
    x = g.op("Relu", ["x"])
    return ins, [g.conv(x, 8, c) for c in (3, 5, 8, 6, 10)]


def splitk(g):
    ins = {"x": f32(2, 520, 3, 3)}
    x = g.op("Relu", ["x"])
    return ins, [g.conv(x, 520, c) for c in (6, 10, 4)]


def attnblock(g):
    B, C, H, W, G_ = 2, 24, 6, 6, 4
    ins = {"x": f32(B, C, H, W)}
    # GroupNorm as exported by torch.onnx (TorchScript): Reshape -> InstanceNorm -> Reshape * γ + β
    r = g.op("Reshape", ["x", g.const(np.array([B, G_, -1], np.int64), "shape")])
    inorm = g.op("InstanceNormalization", [r, g.const(np.ones(G_, np.float32), "one"),
                                           g.const(np.zeros(G_, np.float32), "zero")], epsilon=1e-6)
    h = g.op("Reshape", [inorm, g.const(np.array([B, C, H, W], np.int64), "shape")])
    h = g.op("Mul", [h, g.const((1 + 0.1 * rng.standard_normal((C, 1, 1))).astype(np.float32), "gamma")])
    h = g.op("Add", [h, g.const((0.1 * rng.standard_normal((C, 1, 1))).astype(np.float32), "beta")])
    q, k, v = (g.conv(h, C, C) for _ in range(3))
    flat = g.const(np.array([B, C, H * W], np.int64), "shape")
    qf = g.op("Transpose", [g.op("Reshape", [q, flat])], perm=[0, 2, 1])  # [B, HW, C]
    kf = g.op("Reshape", [k, flat])                                       # [B, C, HW]
    s = g.op("Mul", [g.op("MatMul", [qf, kf]), g.const(np.float32(C ** -0.5), "scale")])
    p = g.op("Softmax", [s], axis=2)                                      # [B, HWq, HWk]
    vf = g.op("Reshape", [v, flat])                                       # [B, C, HWk]
    o = g.op("MatMul", [vf, g.op("Transpose", [p], perm=[0, 2, 1])])      # [B, C, HWq]
    o = g.op("Reshape", [o, g.const(np.array([B, C, H, W], np.int64), "shape")])
    return ins, g.op("Add", ["x", g.conv(o, C, C)])


def conv1d(g):
    ins = {"x": f32(2, 6, 11)}
    x = g.op("Relu", ["x"])
    outs = []
    for cout, bias, pads in ((5, True, [1, 1]), (3, False, [1, 1]), (4, True, [0, 0])):
        w = g.const((rng.standard_normal((cout, 6, 3)) / np.sqrt(18)).astype(np.float32), "w")
        ins_ = [x, w] + ([g.const((rng.standard_normal(cout) * 0.1).astype(np.float32), "b")] if bias else [])
        outs.append(g.op("Conv", ins_, pads=pads))
    return ins, outs


GRAPHS = [qkv_bias, geom_mix, weight_input, epilogue, many, splitk, attnblock, conv1d]


def main(graphs=None, here=HERE):
    """Writes each graph of `graphs` (default GRAPHS) to OUT_DIR or `here`/graphs."""
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "graphs")
    for fn in graphs or GRAPHS:
        g = G()
        name = fn.__name__
        ins, outs = fn(g)
        outs = outs if isinstance(outs, list) else [outs]
        gin = [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(a.shape)) for k, a in ins.items()]
        gout = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
        graph = helper.make_graph(g.nodes, name, gin, gout, g.inits)
        # typed outputs (onnx shape inference)
        m = onnx.shape_inference.infer_shapes(helper.make_model(graph), strict_mode=True)
        shapes = {vi.name: vi for vi in list(m.graph.value_info) + list(m.graph.output)}
        for o in graph.output:
            o.type.CopyFrom(shapes[o.name].type)
        fl.save(os.path.join(root, name), graph, ins)
        print(f"{name}: {len(g.nodes)} nodes, inputs {[a.shape for a in ins.values()]}")


if __name__ == "__main__":
    main()
