#!/usr/bin/env python3
"""make_graphs.py — small attention graphs for the attention fusion tests (tests/fusion_attention).

Writes graphs/<name>/{model.onnx, inputs/*.npy, ref/*.npy, shape_flags.txt}; ref = onnxruntime
(CPU, all graph optimizations disabled) on the inputs. Deterministic (numpy default_rng(7)).
Forms (each a separate graph, odd sizes, opset 17):
  legacy3d     [B*h, N, d] attention: MatMul(Q, Kᵀ) -> Mul(scale) -> Add(zeros) (baddbmm) ->
               Softmax -> Cast -> MatMul(V), head split/merge by Reshape/Transpose/Reshape
  single_head  VAE-like: one head of 72 dims, q/k/v with bias, sqrt(scale) Muls on Q and Kᵀ,
               Cast -> Softmax -> Cast, Div(1) rescale after the output projection
  mask_input   cross-attention (S=7 context tokens), 3 heads, scale as Div(sqrt d) on the scores,
               additive mask [B, 1, N, S] fed as a graph input (finite values)
  causal_min   causal mask filled with the most negative float32 (-3.4e38), [N, N] constant,
               2 heads, batch 2
  causal_where CLIP-like causal mask built at run time shape-free: Trilu/Equal/Where(-inf, 0)
               on a constant ones [N, N] (folded by onnx2cl to a constant) + Add
  shared_probs the softmax probabilities are also a graph output: the fusion must be rejected
  op23_3d      the opset-23 Attention op on 3-D [B, N, h*d] inputs (q_num_heads = kv_num_heads = 3,
               explicit scale): expanded (passes/expand/attention.c), then fused back
  op23_causal  the opset-23 Attention op, 4-D inputs, is_causal = 1, cross lengths N = S
  vpt_cf       the CompVis/ldm VAE AttnBlock, channels-first: x [2, 40, 37, 1], q/k/v 1x1 Convs,
               Reshape [B, C, N], MatMul(Transpose(q), k) * C^-0.5, Softmax(axis=2),
               MatMul(v, Transpose(P)) (probabilities the RIGHT operand), Reshape, proj_out Conv,
               residual Add (C = 40, N = 37, batch 2)
  vpt_4d       the same form with 2 heads, 4-D [B, h, d, tokens], cross (N = 29 queries, S = 32
               keys), scale as Div(sqrt d), Softmax(-1), Transpose(0,1,3,2)
  rejected (must stay unfused, and still match onnxruntime):
  vpt_axis1    Softmax over axis 1 (the query axis) of the [B, N, N] scores
  vpt_no_t     MatMul(v, P) without the Transpose (contracts over the query axis)
  vpt_left     MatMul(Transpose(P), V): Pᵀ as the LEFT operand (contracts over the query axis)
  vpt_perm     4-D Transpose(P, (1,0,3,2)): batch and head axes swapped too
  vpt_rtscale  the score scale is a graph input (not a constant)
  masked-row guards with a run-time mask that fully masks some rows (fused: the kernels' zero_rows):
  mask_guard   dynamo SDPA form: Q and Kᵀ times sqrt(scale), + mask input [B, 1, N, S] (0 / -inf,
               rows 0 and 5 of batch 1 all -inf), Softmax, Where(IsNaN(p), 0, p), MatMul(V)
  op23_mask    the opset-23 Attention op with a float attn_mask input [N, S] (row 3 all -inf):
               its expansion guards with Where(IsInf(ReduceMax(bias)), 0, p)
Usage: python3 make_graphs.py [OUT_DIR]   (default: graphs/ next to this script)
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


class G:
    """Tiny graph builder: nodes, initializers, unique names."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, arr, base="c"):
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def linear(self, x, cin, cout, bias=True):
        w = self.const((rng.standard_normal((cin, cout)) / np.sqrt(cin)).astype(np.float32), "w")
        y = self.op("MatMul", [x, w])
        if bias:
            b = self.const((rng.standard_normal(cout) * 0.1).astype(np.float32), "b")
            y = self.op("Add", [y, b])
        return y

    def shape(self, dims):
        return self.const(np.array(dims, dtype=np.int64), "shape")

    def split_heads(self, x, b, n, h, d):
        """[b, n, h*d] -> [b, h, n, d]"""
        r = self.op("Reshape", [x, self.shape([b, n, h, d])])
        return self.op("Transpose", [r], perm=[0, 2, 1, 3])

    def merge_heads(self, x, b, n, h, d):
        """[b, h, n, d] -> [b, n, h*d]"""
        t = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        return self.op("Reshape", [t, self.shape([b, n, h * d])])


def f32(*dims):
    return (rng.standard_normal(dims)).astype(np.float32)


def legacy3d(g):
    B, N, H, d = 2, 10, 3, 8
    C = H * d
    ins = {"x": f32(B, N, C)}
    q, k, v = (g.linear("x", C, C, bias=False) for _ in range(3))
    def to3(t):
        s = g.split_heads(t, B, N, H, d)
        return g.op("Reshape", [s, g.shape([B * H, N, d])])
    q3, k3, v3 = to3(q), to3(k), to3(v)
    kt = g.op("Transpose", [k3], perm=[0, 2, 1])
    s = g.op("MatMul", [q3, kt])
    s = g.op("Mul", [s, g.const(np.array(d ** -0.5, dtype=np.float32))])
    s = g.op("Add", [s, g.const(np.zeros((1,), dtype=np.float32))])
    p = g.op("Softmax", [s], axis=-1)
    p = g.op("Cast", [p], to=TensorProto.FLOAT)
    o = g.op("MatMul", [p, v3])
    o = g.op("Reshape", [o, g.shape([B, H, N, d])])
    o = g.merge_heads(o, B, N, H, d)
    return ins, g.linear(o, C, C)


def single_head(g):
    B, N, C = 1, 12, 72
    ins = {"x": f32(B, N, C)}
    q, k, v = (g.linear("x", C, C) for _ in range(3))
    sq = g.const(np.array([C ** -0.25], dtype=np.float32))
    q4 = g.op("Mul", [g.split_heads(q, B, N, 1, C), sq])
    kr = g.op("Reshape", [k, g.shape([B, N, 1, C])])
    kt = g.op("Mul", [g.op("Transpose", [kr], perm=[0, 2, 3, 1]), sq])
    s = g.op("Cast", [g.op("MatMul", [q4, kt])], to=TensorProto.FLOAT)
    p = g.op("Cast", [g.op("Softmax", [s], axis=-1)], to=TensorProto.FLOAT)
    o = g.op("MatMul", [p, g.split_heads(v, B, N, 1, C)])
    o = g.linear(g.merge_heads(o, B, N, 1, C), C, C)
    return ins, g.op("Div", [o, g.const(np.array(1.0, dtype=np.float32))])


def mask_input(g):
    B, N, S, H, d, Cc = 2, 9, 7, 3, 8, 5
    C = H * d
    ins = {"x": f32(B, N, C), "ctx": f32(B, S, Cc), "mask": f32(B, 1, N, S)}
    q = g.split_heads(g.linear("x", C, C, bias=False), B, N, H, d)
    k = g.linear("ctx", Cc, C, bias=False)
    v = g.split_heads(g.linear("ctx", Cc, C, bias=False), B, S, H, d)
    kt = g.op("Transpose", [g.op("Reshape", [k, g.shape([B, S, H, d])])], perm=[0, 2, 3, 1])
    s = g.op("Div", [g.op("MatMul", [q, kt]), g.const(np.array(np.sqrt(d), dtype=np.float32))])
    s = g.op("Add", [s, "mask"])
    o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    return ins, g.linear(g.merge_heads(o, B, N, H, d), C, C)


def causal(g, where):
    B, N, H, d = 2, 11, 2, 12
    C = H * d
    ins = {"x": f32(B, N, C)}
    q, k, v = (g.split_heads(g.linear("x", C, C), B, N, H, d) for _ in range(3))
    s = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = g.op("Mul", [s, g.const(np.array(d ** -0.5, dtype=np.float32))])
    if where:
        tri = g.op("Trilu", [g.const(np.ones((N, N), dtype=np.float32))], upper=0)
        eq = g.op("Equal", [tri, g.const(np.array(0.0, dtype=np.float32))])
        m = g.op("Where", [eq, g.const(np.array(-np.inf, dtype=np.float32)),
                           g.const(np.array(0.0, dtype=np.float32))])
    else:
        m = g.const(np.triu(np.full((N, N), np.finfo(np.float32).min, dtype=np.float32), 1))
    s = g.op("Add", [s, m])
    o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    return ins, g.merge_heads(o, B, N, H, d)


def shared_probs(g):
    B, N, H, d = 1, 6, 2, 4
    C = H * d
    ins = {"x": f32(B, N, C)}
    q, k, v = (g.split_heads(g.linear("x", C, C), B, N, H, d) for _ in range(3))
    s = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    p = g.op("Softmax", [s], axis=-1)
    o = g.op("MatMul", [p, v])
    return ins, [g.merge_heads(o, B, N, H, d), p]


def op23_3d(g):
    B, N, H, d = 2, 9, 3, 5
    ins = {"q": f32(B, N, H * d), "k": f32(B, N, H * d), "v": f32(B, N, H * d)}
    return ins, g.op("Attention", ["q", "k", "v"], q_num_heads=H, kv_num_heads=H, scale=0.3)


def op23_causal(g):
    B, H, N, d = 1, 2, 11, 8
    ins = {"q": f32(B, H, N, d), "k": f32(B, H, N, d), "v": f32(B, H, N, d)}
    return ins, g.op("Attention", ["q", "k", "v"], is_causal=1)


def vpt(g, variant):
    """ldm AttnBlock on channels-first [B, C, N]: bmm(Transpose(q), k) * C^-0.5, softmax,
    bmm(v, Transpose(P)); `variant` plants one change that must block the fusion."""
    B, C, N = 2, 40, 37
    ins = {"x": f32(B, C, N, 1)}
    if variant == "rtscale":
        ins["scale"] = np.array(C ** -0.5, dtype=np.float32)

    def conv1x1(x):
        w = g.const((rng.standard_normal((C, C, 1, 1)) / np.sqrt(C)).astype(np.float32), "w")
        b = g.const((rng.standard_normal(C) * 0.1).astype(np.float32), "b")
        return g.op("Conv", [x, w, b], kernel_shape=[1, 1])

    cf = g.shape([B, C, N])
    q, k, v = (g.op("Reshape", [conv1x1("x"), cf]) for _ in range(3))
    s = g.op("MatMul", [g.op("Transpose", [q], perm=[0, 2, 1]), k])
    sc = "scale" if variant == "rtscale" else g.const(np.array(C ** -0.5, dtype=np.float32))
    s = g.op("Mul", [s, sc])
    p = g.op("Softmax", [s], axis=1 if variant == "axis1" else 2)
    if variant == "no_t":
        o = g.op("MatMul", [v, p])
    elif variant == "left":
        vt = g.op("Transpose", [v], perm=[0, 2, 1])  # [B, N, C]
        o = g.op("Transpose", [g.op("MatMul", [g.op("Transpose", [p], perm=[0, 2, 1]), vt])],
                 perm=[0, 2, 1])
    else:
        o = g.op("MatMul", [v, g.op("Transpose", [p], perm=[0, 2, 1])])
    o = conv1x1(g.op("Reshape", [o, g.shape([B, C, N, 1])]))
    return ins, g.op("Add", ["x", o])


def vpt_4d(g, perm):
    """2 heads, channels-first [B, h, d, tokens], cross attention (N != S)."""
    B, H, d, N, S = 1, 2, 24, 29, 32  # S % 16 == 0: the cpu class reads k in place
    if perm != [0, 1, 3, 2]:
        B, H, N, S = 2, 3, 5, 5  # [2, 3, 5, 5] -> [3, 2, 5, 5]: v must be [3, 2, d, 5]
    ins = {"q": f32(B, H, d, N), "k": f32(B, H, d, S),
           "v": f32(*([H, B] if perm != [0, 1, 3, 2] else [B, H]), d, S)}
    s = g.op("MatMul", [g.op("Transpose", ["q"], perm=[0, 1, 3, 2]), "k"])
    s = g.op("Div", [s, g.const(np.array(np.sqrt(d), dtype=np.float32))])
    p = g.op("Softmax", [s], axis=-1)
    o = g.op("MatMul", ["v", g.op("Transpose", [p], perm=perm)])
    return ins, g.op("Mul", [o, g.const(np.array(2.0, dtype=np.float32))])


def masked(shape, rows):
    """A 0 / -inf additive mask: random keys masked, and every key of the given rows."""
    m = np.where(rng.random(shape) < 0.3, -np.inf, 0.0).astype(np.float32)
    for r in rows:
        m[r] = -np.inf
    return m


def mask_guard(g):
    B, N, S, H, d = 2, 9, 13, 2, 6
    C = H * d
    ins = {"x": f32(B, N, C), "ctx": f32(B, S, C), "mask": masked((B, 1, N, S), [(1, 0, 0), (1, 0, 5)])}
    sq = g.const(np.array(d ** -0.25, dtype=np.float32))
    q = g.op("Mul", [g.split_heads(g.linear("x", C, C, bias=False), B, N, H, d), sq])
    k = g.op("Mul", [g.split_heads(g.linear("ctx", C, C, bias=False), B, S, H, d), sq])
    v = g.split_heads(g.linear("ctx", C, C, bias=False), B, S, H, d)
    s = g.op("Add", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), "mask"])
    p = g.op("Softmax", [s], axis=-1)
    p = g.op("Where", [g.op("IsNaN", [p]), g.const(np.array(0.0, dtype=np.float32)), p])
    return ins, g.merge_heads(g.op("MatMul", [p, v]), B, N, H, d)


def op23_mask(g):
    B, H, N, S, d = 2, 2, 7, 11, 5
    ins = {"q": f32(B, H, N, d), "k": f32(B, H, S, d), "v": f32(B, H, S, d),
           "attn_mask": masked((N, S), [3])}
    return ins, g.op("Attention", ["q", "k", "v", "attn_mask"])


OPSET = {"op23_3d": 23, "op23_causal": 23, "mask_guard": 18, "op23_mask": 23}

FORMS = {
    "legacy3d": legacy3d,
    "single_head": single_head,
    "mask_input": mask_input,
    "causal_min": lambda g: causal(g, False),
    "causal_where": lambda g: causal(g, True),
    "shared_probs": shared_probs,
    "op23_3d": op23_3d,
    "op23_causal": op23_causal,
    # (new forms go last: the generator's random stream keeps the earlier graphs unchanged)
    "vpt_cf": lambda g: vpt(g, ""),
    "vpt_4d": lambda g: vpt_4d(g, [0, 1, 3, 2]),
    "vpt_axis1": lambda g: vpt(g, "axis1"),
    "vpt_no_t": lambda g: vpt(g, "no_t"),
    "vpt_left": lambda g: vpt(g, "left"),
    "vpt_perm": lambda g: vpt_4d(g, [1, 0, 3, 2]),
    "vpt_rtscale": lambda g: vpt(g, "rtscale"),
    "mask_guard": mask_guard,
    "op23_mask": op23_mask,
}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")
    for name, fn in FORMS.items():
        g = G()
        ins, outs = fn(g)
        outs = outs if isinstance(outs, list) else [outs]
        gin = [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(a.shape)) for k, a in ins.items()]
        gout = []
        for i, o in enumerate(outs):
            nm = "y" if i == 0 else f"y{i}"
            g.nodes.append(helper.make_node("Identity", [o], [nm], name=f"out_{nm}"))
            gout.append(helper.make_tensor_value_info(nm, TensorProto.FLOAT, None))
        model = helper.make_model(helper.make_graph(g.nodes, name, gin, gout, g.inits),
                                  opset_imports=[helper.make_opsetid("", OPSET.get(name, 17))],
                                  producer_name="make_graphs.py")
        model.ir_version = 8
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        shapes = {vi.name: vi for vi in inferred.graph.value_info}
        for o, src in zip(model.graph.output, outs):
            o.type.CopyFrom(shapes[src].type)
        onnx.checker.check_model(model, full_check=True)
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
        os.makedirs(os.path.join(d, "ref"), exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        res = sess.run(None, ins)
        for k, a in ins.items():
            np.save(os.path.join(d, "inputs", k + ".npy"), a)
        for o, r in zip(sess.get_outputs(), res):
            assert np.isfinite(r).all(), (name, o.name)
            np.save(os.path.join(d, "ref", o.name + ".npy"), r)
        print(f"{name}: {len(g.nodes)} nodes, inputs {[a.shape for a in ins.values()]}, outputs {[r.shape for r in res]}")


if __name__ == "__main__":
    main()
