#!/usr/bin/env python3
"""make_graphs.py — small ONNX graphs for the rope fusion (passes/fuse/rope.c -> o2c.Rope).

Writes graphs/<name>/{model.onnx, inputs/<input>.npy, ref/<output>.npy}; the references are
onnxruntime (CPU, graph optimizations disabled) outputs on the committed inputs (numpy
default_rng, fixed seed). Needs numpy, onnx, onnxruntime; CI only reads the committed files.
The forms are the ones the exporters write (models/tiny/flux_transformer*: diffusers
apply_rotary_emb with use_real_unbind_dim=-1), HF LLaMA / SD3-style rotate_half, and the
RotaryEmbedding-23 op (expanded by passes/expand/seq.c); odd sizes (5, 7 pairs, 9 positions),
cos/sin computed in the graph or given as inputs/initializers of several broadcast shapes, and
two rejections that must keep the unfused result.
Run from anywhere: python3 tests/fusion_rope/make_graphs.py [NAME-PREFIX...] (default: all)
"""
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")
rng = np.random.default_rng(20261202)
I64 = np.iinfo(np.int64).max


class Graph:
    """Nodes, initializers and fed inputs of one test graph."""

    def __init__(self, opset=17):
        self.nodes, self.inits, self.ins, self.feeds = [], [], [], {}
        self.opset, self.k = opset, 0

    def feed(self, name, arr):
        """A graph input fed with arr (its dtype: float32 or int64)."""
        t = TP.INT64 if arr.dtype == np.int64 else TP.FLOAT
        self.ins.append(oh.make_tensor_value_info(name, t, arr.shape))
        self.feeds[name] = arr
        return name

    def init(self, arr):
        self.k += 1
        self.inits.append(nh.from_array(np.asarray(arr), f"c{self.k}"))
        return f"c{self.k}"

    def ints(self, *v):
        return self.init(np.array(v, np.int64))

    def node(self, op_type, *inputs, nout=1, **attrs):
        self.k += 1
        outs = [f"t{self.k}_{i}" for i in range(nout)]
        self.nodes.append(oh.make_node(op_type, list(inputs), outs, name=f"n{self.k}_{op_type}",
                                       **attrs))
        return outs[0] if nout == 1 else outs

    def write(self, name, outputs):
        if len(sys.argv) > 1 and not any(name.startswith(a) for a in sys.argv[1:]):
            return
        d = os.path.join(ROOT, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "inputs"))
        os.makedirs(os.path.join(d, "ref"))
        nodes = self.nodes + [oh.make_node("Identity", [o], [f"y{i}"], name=f"out{i}")
                              for i, o in enumerate(outputs)]
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 3  # the probe run (no output shapes yet) warns

        def model(shapes):
            outs = [oh.make_tensor_value_info(f"y{i}", TP.FLOAT, s) for i, s in enumerate(shapes)]
            m = oh.make_model(oh.make_graph(nodes, name, self.ins, outs, self.inits),
                              opset_imports=[oh.make_opsetid("", self.opset)],
                              producer_name="tests/fusion_rope/make_graphs.py")
            m.ir_version = 10 if self.opset >= 23 else 8
            return m

        probe = ort.InferenceSession(model([[] for _ in outputs]).SerializeToString(), so,
                                     providers=["CPUExecutionProvider"])
        res = probe.run(None, self.feeds)
        m = model([list(r.shape) for r in res])
        onnx.checker.check_model(m, full_check=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        refs = {f"y{i}": r for i, r in enumerate(res)}
        for sub, arrays in (("inputs", self.feeds), ("ref", refs)):
            for k, v in arrays.items():
                np.save(os.path.join(d, sub, k + ".npy"), v)


def randn(*s):
    return rng.standard_normal(s, dtype=np.float32)


def angles(g, name, rows, pairs):
    """cos, sin tables [rows, 2*pairs] computed in the graph as diffusers does (Flux): each
    angle of an input [rows, pairs] repeated twice side by side (repeat_interleave)."""
    a = g.feed(name, randn(rows, pairs) * 3)
    out = []
    for f in ("Cos", "Sin"):
        u = g.node("Unsqueeze", g.node(f, a), g.ints(-1))
        out.append(g.node("Reshape", g.node("Concat", u, u, axis=-1), g.ints(rows, 2 * pairs)))
    return out


def pairs_rot(g, x, shape, form, neg_first=False, share=None, swap_cat=False):
    """rot(x) of the interleaved form: x viewed as [.., D/2, 2], unbound on the last axis,
    stack(-x_imag, x_real) (neg_first: stack(x_imag, -x_real); swap_cat: stack(x_real,
    -x_imag)), viewed back as x.
    form "split": Split + Squeeze/Unsqueeze (TorchScript); "slice": two Slices (dynamo).
    share: a list that gets the squeezed real part (to read it a second time)."""
    *lead, D = shape
    view = {"allowzero": 1} if form == "slice" else {}
    z = g.node("Reshape", x, g.ints(*lead, D // 2, 2), **view)
    if form == "split":
        re, im = g.node("Split", z, g.ints(1, 1), nout=2, axis=-1)
    else:
        re = g.node("Slice", z, g.ints(0), g.ints(1), g.ints(-1))
        im = g.node("Slice", z, g.ints(1), g.ints(2), g.ints(-1))
    re, im = (g.node("Squeeze", v, g.ints(-1)) for v in (re, im))
    if share is not None:
        share.append(re)
    if neg_first:
        parts = [im, g.node("Neg", re)]
    else:
        parts = [g.node("Neg", im), re]
    if swap_cat:
        parts.reverse()
    st = g.node("Concat", *(g.node("Unsqueeze", v, g.ints(-1)) for v in parts), axis=-1)
    return g.node("Reshape", st, g.ints(*shape))


def half_rot(g, x, D, form):
    """rotate_half: cat(-x[.., D/2:], x[.., :D/2]) by two Slices (end INT64_MAX as torch
    writes it) or a Split."""
    if form == "split":
        x1, x2 = g.node("Split", x, g.ints(D // 2, D // 2), nout=2, axis=-1)
    else:
        x1 = g.node("Slice", x, g.ints(0), g.ints(D // 2), g.ints(-1))
        x2 = g.node("Slice", x, g.ints(D // 2), g.ints(I64), g.ints(-1))
    return g.node("Concat", g.node("Neg", x2), x1, axis=-1)


def apply(g, x, rot, cos, sin, swap=False):
    """x*cos + rot*sin (swap: Add(Mul(rot, sin), Mul(cos, x)))."""
    if swap:
        return g.node("Add", g.node("Mul", rot, sin), g.node("Mul", cos, x))
    return g.node("Add", g.node("Mul", x, cos), g.node("Mul", rot, sin))


def flux_ts():
    """Flux / TorchScript: q and k [1,S,H,D] (here S=7, H=3, D=10: 5 pairs) with float32
    Casts, Split/Squeeze/Neg/Unsqueeze/Concat, one graph-computed [1,S,1,D] cos/sin shared."""
    g = Graph()
    S, H, D = 7, 3, 10
    cos, sin = (g.node("Unsqueeze", v, g.ints(0, 2)) for v in angles(g, "ang", S, D // 2))
    outs = []
    for name in ("q", "k"):
        x = g.node("Cast", g.node("Add", g.feed(name, randn(1, S, H, D)), g.init(np.float32(0.25))),
                   to=TP.FLOAT)
        rot = g.node("Cast", pairs_rot(g, x, [1, S, H, D], "split"), to=TP.FLOAT)
        outs.append(g.node("Cast", apply(g, x, rot, cos, sin), to=TP.FLOAT))
    g.write("rope_ts", outs)


def flux_dynamo():
    """Flux / dynamo: two Slices, Reshape allowzero=1, Add(Mul(rot, sin), Mul(cos, x));
    batch 2, cos [S,1,D] (rank 3: broadcast over batch and heads), sin [1,S,1,D]."""
    g = Graph(20)
    B, S, H, D = 2, 9, 4, 14
    c, s = angles(g, "ang", S, D // 2)
    cos = g.node("Unsqueeze", c, g.ints(1))
    sin = g.node("Unsqueeze", s, g.ints(0, 2))
    x = g.node("Mul", g.feed("q", randn(B, S, H, D)), g.init(np.float32(1.5)))
    rot = pairs_rot(g, x, [B, S, H, D], "slice")
    g.write("rope_dynamo", [apply(g, x, rot, cos, sin, swap=True)])


def half_slices():
    """rotate_half (HF LLaMA / SD3 style) on [B,H,S,D] = [2,3,5,12]: cos [1,1,S,D],
    sin per batch [B,1,S,D] (inputs)."""
    g = Graph()
    B, H, S, D = 2, 3, 5, 12
    x = g.feed("x", randn(B, H, S, D))
    cos = g.feed("cos", randn(1, 1, S, D))
    sin = g.feed("sin", randn(B, 1, S, D))
    g.write("rope_half", [apply(g, x, half_rot(g, x, D, "slice"), cos, sin)])


def half_split():
    """rotate_half by a Split on a rank-2 x [4,14]: cos a constant [14] (broadcast over rows),
    sin [4,1] (one value per row: broadcast along D)."""
    g = Graph()
    x = g.feed("x", randn(4, 14))
    cos = g.init(randn(14))
    sin = g.feed("sin", randn(4, 1))
    g.write("rope_half_split", [apply(g, x, half_rot(g, x, 14, "split"), cos, sin, swap=True)])


def both():
    """One interleaved (dynamo slices) and one halves RoPE in one graph (oclgrind coverage of
    both pair layouts): x [1,5,2,6] with cos/sin [1,5,1,6]; y [2,7,8] with cos/sin [7,8]."""
    g = Graph()
    c, s = (g.node("Unsqueeze", v, g.ints(0, 2)) for v in angles(g, "ang", 5, 3))
    x = g.feed("x", randn(1, 5, 2, 6))
    y = g.feed("y", randn(2, 7, 8))
    cy, sy = g.feed("cy", randn(7, 8)), g.feed("sy", randn(7, 8))
    g.write("rope_both", [apply(g, x, pairs_rot(g, x, [1, 5, 2, 6], "slice"), c, s),
                          apply(g, y, half_rot(g, y, 8, "slice"), cy, sy)])


def op23(name, shape, interleaved, rd=0, heads=0, pos=True):
    """RotaryEmbedding-23: caches [max_pos, rd/2] with position_ids [B,S] or [B,S,rd/2]."""
    g = Graph(23)
    x = g.feed("x", randn(*shape))
    B = shape[0]
    S = shape[2] if len(shape) == 4 else shape[1]
    D = shape[3] if len(shape) == 4 else shape[2] // heads
    h = (rd or D) // 2
    ins = [x]
    if pos:
        ins += [g.feed("cos", randn(16, h)), g.feed("sin", randn(16, h)),
                g.feed("pos", rng.integers(0, 16, (B, S)).astype(np.int64))]
    else:
        ins += [g.feed("cos", randn(B, S, h)), g.feed("sin", randn(B, S, h))]
    attrs = {"interleaved": interleaved}
    if rd:
        attrs["rotary_embedding_dim"] = rd
    if heads:
        attrs["num_heads"] = heads
    g.write(name, [g.node("RotaryEmbedding", *ins, **attrs)])


def reject_neg_first():
    """stack(x_imag, -x_real): the Neg on the first half (a rotation by -90 degrees, not
    o2c.Rope's): rejected, the unfused chain must still be right."""
    g = Graph()
    c, s = (g.node("Unsqueeze", v, g.ints(0, 2)) for v in angles(g, "ang", 6, 4))
    x = g.feed("x", randn(1, 6, 2, 8))
    rot = pairs_rot(g, x, [1, 6, 2, 8], "split", neg_first=True)
    g.write("rope_reject_negfirst", [apply(g, x, rot, c, s)])


def reject_order():
    """stack(x_real, -x_imag): the negated half second in the Concat (not a rotation by +90
    degrees): rejected."""
    g = Graph()
    c, s = (g.node("Unsqueeze", v, g.ints(0, 2)) for v in angles(g, "ang", 5, 3))
    x = g.feed("x", randn(2, 5, 3, 6))
    rot = pairs_rot(g, x, [2, 5, 3, 6], "slice", swap_cat=True)
    g.write("rope_reject_order", [apply(g, x, rot, c, s)])


def reject_shared():
    """The squeezed real part also feeds a second output: an intermediate with two readers,
    rejected."""
    g = Graph()
    c, s = (g.node("Unsqueeze", v, g.ints(0, 2)) for v in angles(g, "ang", 6, 4))
    x = g.feed("x", randn(1, 6, 2, 8))
    share = []
    y = apply(g, x, pairs_rot(g, x, [1, 6, 2, 8], "split", share=share), c, s)
    g.write("rope_reject_shared", [y, g.node("Mul", share[0], g.init(np.float32(2.0)))])


flux_ts()
flux_dynamo()
half_slices()
half_split()
both()
op23("rope_op23_inter", (2, 3, 5, 8), 1)
op23("rope_op23_half_3d", (2, 7, 20), 0, rd=6, heads=2, pos=False)
reject_neg_first()
reject_order()
reject_shared()
