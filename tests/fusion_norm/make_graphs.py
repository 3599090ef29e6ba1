#!/usr/bin/env python3
"""make_graphs.py — small ONNX graphs for the layernorm / gelu / gnorm / conv_epilogue fusions.

Writes graphs/<name>/{model.onnx, inputs/<input>.npy, ref/<output>.npy}; the references are
onnxruntime (CPU, all graph optimizations disabled) outputs on the committed inputs
(numpy default_rng(seed)). Needs numpy, onnx, onnxruntime; CI only reads the committed files.
The gnx_* / lnx_* / inx_* / mvnx_* graphs (normalization numerics, issue 13: constant groups, large mean with
tiny variance, float32 and float16 models) take numpy float64 references instead (the exact
math on the stored inputs, rounded once to the model's dtype), written by numerics_graphs().
Run from anywhere: python3 tests/fusion_norm/make_graphs.py [NAME-PREFIX...] (default: all)
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
rng = np.random.default_rng(20260529)


def selected(name):
    """True if NAME is to be (re)written: no arguments, or an argument is a prefix of it."""
    return len(sys.argv) < 2 or any(name.startswith(a) for a in sys.argv[1:])


def fresh_dir(name):
    """graphs/NAME emptied, with inputs/ and ref/; None if NAME is not selected."""
    if not selected(name):
        return None
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "ref"))
    return d


class G:
    """A tiny graph builder: nodes, initializers, inputs, outputs."""

    def __init__(self, opset=17):
        self.nodes, self.inits, self.ins, self.outs, self.feeds = [], [], [], [], {}
        self.opset, self.k, self.check = opset, 0, True

    def inp(self, name, arr):
        self.ins.append(oh.make_tensor_value_info(name, TP.FLOAT, arr.shape))
        self.feeds[name] = arr.astype(np.float32)
        return name

    def const(self, arr, dtype=np.float32):
        self.k += 1
        name = f"c{self.k}"
        self.inits.append(nh.from_array(np.asarray(arr, dtype=dtype), name))
        return name

    def op(self, op_type, *inputs, **attrs):
        self.k += 1
        out = f"t{self.k}"
        self.nodes.append(oh.make_node(op_type, list(inputs), [out], name=f"n{self.k}_{op_type}", **attrs))
        return out

    def save(self, name, outputs):
        d = fresh_dir(name)
        if d is None:
            return
        for i, o in enumerate(outputs):
            self.nodes.append(oh.make_node("Identity", [o], [f"y{i}"], name=f"out{i}"))
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL

        def build(shapes):
            outs = [oh.make_tensor_value_info(f"y{i}", TP.FLOAT, s) for i, s in enumerate(shapes)]
            graph = oh.make_graph(self.nodes, name, self.ins, outs, self.inits)
            model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", self.opset)],
                                  producer_name="make_graphs.py")
            model.ir_version = 8
            return model

        # first run (output shapes unknown) gives the shapes the saved model declares
        tmp = build([[] for _ in outputs])
        sess = ort.InferenceSession(tmp.SerializeToString(), so, providers=["CPUExecutionProvider"])
        res = sess.run(None, self.feeds)
        model = build([list(r.shape) for r in res])
        if self.check:  # GroupNormalization-18 is deprecated: the checker refuses it
            onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        for k, v in self.feeds.items():
            np.save(os.path.join(d, "inputs", k + ".npy"), v)
        for i, r in enumerate(res):
            np.save(os.path.join(d, "ref", f"y{i}.npy"), r)


def randn(*s):
    return rng.standard_normal(s).astype(np.float32)


# ---- layernorm -------------------------------------------------------------------------
def layernorm(name, shape, axes, square, eps, gamma, beta, eps_first=False):
    g = G(17)
    x = g.inp("x", randn(*shape) * 2 + 0.5)
    m = g.op("ReduceMean", x, axes=axes)
    d = g.op("Sub", x, m)
    q = g.op("Pow", d, g.const(2.0)) if square == "pow" else g.op("Mul", d, d)
    v = g.op("ReduceMean", q, axes=axes)
    e = g.op("Add", g.const(eps), v) if eps_first else g.op("Add", v, g.const(eps))
    n = g.op("Div", d, g.op("Sqrt", e))
    if gamma is not None:
        n = g.op("Mul", g.const(gamma), n)
    if beta is not None:
        n = g.op("Add", n, g.const(beta))
    g.save(name, [n])


layernorm("ln_pow", (2, 5, 24), [-1], "pow", 1e-5, 1 + 0.1 * randn(24), 0.1 * randn(24))
layernorm("ln_mulsq_nogb", (3, 7, 10), [2], "mul", 1e-6, None, None, eps_first=True)
layernorm("ln_2axes", (2, 3, 4, 5), [-2, -1], "pow", 1e-5, np.float32(2.0), 0.1 * randn(5))
layernorm("ln_reject_mid", (2, 6, 5), [1], "pow", 1e-5, None, None)  # not trailing: not fused


# ---- rmsnorm (passes/fuse/rmsnorm.c) ---------------------------------------------------
rms_rng = np.random.default_rng(20261201)  # its own stream: the graphs after keep their data


def rrandn(*s):
    return rms_rng.standard_normal(s).astype(np.float32)


def rmsnorm(name, shape, axes, square, form, eps, gamma, gamma_first=False, cast=False,
            share_x=False):
    """x / sqrt(mean(x², axes) + eps) [* gamma] in the export forms: form "div" Div(x, s),
    "div1" Mul(x, Div(1, s)), "recip" Mul(Reciprocal(s), x); cast: float32 Casts around it (T5's
    upcast); share_x: x (the Cast's output with cast) also feeds a second output."""
    g = G(17)
    x = g.inp("x", rrandn(*shape) * 2 + 0.5)
    xx = g.op("Cast", x, to=TP.FLOAT) if cast else x
    q = g.op("Pow", xx, g.const(2.0)) if square == "pow" else g.op("Mul", xx, xx)
    s = g.op("Sqrt", g.op("Add", g.op("ReduceMean", q, axes=axes), g.const(eps)))
    if form == "div":
        n = g.op("Div", xx, s)
    elif form == "div1":
        n = g.op("Mul", xx, g.op("Div", g.const(1.0), s))
    else:
        n = g.op("Mul", g.op("Reciprocal", s), xx)
    if gamma is not None:
        n = g.op("Mul", g.const(gamma), n) if gamma_first else g.op("Mul", n, g.const(gamma))
    if cast:
        n = g.op("Cast", n, to=TP.FLOAT)
    g.save(name, [n, g.op("Add", xx, g.const(1.0))] if share_x else [n])


def rms_op23(name, shape, axis, eps):
    """RMSNormalization-23 (expanded by passes/expand/norm.c, then fused)."""
    g = G(23)
    x = g.inp("x", rrandn(*shape) * 2 - 0.5)
    scale = 1 + 0.1 * rrandn(*shape[axis:])
    g.save(name, [g.op("RMSNormalization", x, g.const(scale), axis=axis, epsilon=eps)])


# odd widths (37, 131) and rows not a multiple of the team kernel's rows per work-group (gpu
# class norm_rows_team; cpu class norm_rows_short: float4 loads and a scalar tail)
rmsnorm("rms_div", (2, 5, 37), [-1], "pow", "div", 1e-6, 1 + 0.1 * rrandn(37))
rmsnorm("rms_recip_cast", (3, 7, 200), [-1], "pow", "recip", 1e-5, 1 + 0.1 * rrandn(200), gamma_first=True,
        cast=True)
rmsnorm("rms_div1_share", (4, 3, 24), [2], "mul", "div1", 1e-2, None, cast=True, share_x=True)
rmsnorm("rms_2axes", (2, 3, 4, 5), [-2, -1], "pow", "div", 1e-5, 0.1 * rrandn(5))
rmsnorm("rms_reject_mid", (2, 6, 5), [1], "pow", "div", 1e-5, None)  # not trailing: not fused
rms_op23("rms_op23", (5, 3, 131), -1, 1e-4)
rms_op23("rms_op23_2axes", (2, 3, 9, 7), 2, 1e-5)


# ---- gelu ------------------------------------------------------------------------------
def gelu_erf(name, scale_op, order, shape=(4, 33), geglu=False):
    g = G(17)
    if geglu:
        h = g.inp("h", randn(*shape) * 2)
        half = shape[-1] // 2
        st, mid, en, ax = (g.const([v], np.int64) for v in (0, half, shape[-1], -1))
        xs = g.op("Slice", h, st, mid, ax)
        x = g.op("Slice", h, mid, en, ax)
    else:
        x = g.inp("x", randn(*shape) * 2)
    t = g.op("Div", x, g.const(1.4142135381698608)) if scale_op == "div" else \
        g.op("Mul", g.const(0.7071067690849304), x)
    a = g.op("Add", g.op("Erf", t), g.const(1.0))
    y = tail(g, x, a, order)
    if geglu:
        y = g.op("Mul", xs, y)
    g.save(name, [y])


def tail(g, x, a, order):
    if order == 1:
        return g.op("Mul", g.op("Mul", x, a), g.const(0.5))
    if order == 2:
        return g.op("Mul", g.op("Mul", x, g.const(0.5)), a)
    return g.op("Mul", x, g.op("Mul", a, g.const(0.5)))


def gelu_tanh(name, cube, order):
    g = G(17)
    x = g.inp("x", randn(5, 19) * 2)
    c = g.op("Pow", x, g.const(3.0)) if cube == "pow" else g.op("Mul", g.op("Mul", x, x), x)
    u = g.op("Add", x, g.op("Mul", g.const(0.044715), c))
    t = g.op("Tanh", g.op("Mul", u, g.const(0.7978845608028654)))
    a = g.op("Add", g.const(1.0), t)
    g.save(name, [tail(g, x, a, order)])


gelu_erf("gelu_erf_div", "div", 1)
gelu_erf("gelu_erf_mul", "mul", 2)
gelu_erf("gelu_erf_v3", "div", 3)
gelu_erf("geglu", "div", 1, shape=(2, 10, 16), geglu=True)
gelu_tanh("gelu_tanh_pow", "pow", 2)
gelu_tanh("gelu_tanh_mul", "mul", 1)


# ---- geglu (passes/fuse/geglu.c) -----------------------------------------------------------
def geglu_lin(name, lead, K, F, form, gate_half=1, gelu="erf", bias=True, opset=17,
              gelu_first=False, share_hidden=False):
    """x [lead.., K] @ W [K, 2F] (+ b) chunked in two on the last axis (form "split": Split,
    "slice": two Slices, the second to INT64_MAX), y = hidden * GELU(gate); the gate is half
    gate_half (diffusers: 1); gelu "erf" / "tanh" decomposed (the gelu pass makes Gelu) or "op"
    (Gelu-20); share_hidden: the hidden half also feeds a second output (not fusable)."""
    g = G(opset)
    x = g.inp("x", rrandn(*lead, K))
    z = g.op("MatMul", x, g.const(rrandn(K, 2 * F) / np.sqrt(K)))
    if bias:
        z = g.op("Add", z, g.const(0.5 * rrandn(2 * F)))
    if form == "split":
        g.k += 1
        halves = [f"t{g.k}a", f"t{g.k}b"]
        if opset >= 18:
            g.nodes.append(oh.make_node("Split", [z], halves, name=f"n{g.k}_Split", axis=-1,
                                        num_outputs=2))
        else:
            g.nodes.append(oh.make_node("Split", [z, g.const([F, F], np.int64)], halves,
                                        name=f"n{g.k}_Split", axis=-1))
    else:
        st, mid, en, ax = (g.const([v], np.int64) for v in (0, F, 2**63 - 1, -1))
        halves = [g.op("Slice", z, st, mid, ax), g.op("Slice", z, mid, en, ax)]
    gate, hid = halves[gate_half], halves[1 - gate_half]
    if gelu == "op":
        a = g.op("Gelu", gate)
    elif gelu == "erf":
        e = g.op("Add", g.op("Erf", g.op("Div", gate, g.const(1.4142135381698608))), g.const(1.0))
        a = tail(g, gate, e, 1)
    else:
        u = g.op("Add", gate, g.op("Mul", g.const(0.044715), g.op("Pow", gate, g.const(3.0))))
        e = g.op("Add", g.const(1.0), g.op("Tanh", g.op("Mul", u, g.const(0.7978845608028654))))
        a = tail(g, gate, e, 2)
    y = g.op("Mul", a, hid) if gelu_first else g.op("Mul", hid, a)
    g.save(name, [y, g.op("Add", hid, g.const(1.0))] if share_hidden else [y])


# F = 37 (not a multiple of 16: a padded last pair), K = 19, M = 26 rows (not a multiple of
# the cpu's 8 or the gpu's 64); F = 100 and M = 70 span two gpu tiles each way; F = 16 one pair
geglu_lin("geglu_split_erf", (2, 13), 19, 37, "split")
geglu_lin("geglu_slice_tanh", (70,), 33, 100, "slice", gate_half=0, gelu="tanh", gelu_first=True)
geglu_lin("geglu_op20_nobias", (1, 5), 8, 16, "split", gelu="op", bias=False, opset=20)
geglu_lin("geglu_reject_shared", (3, 4), 8, 24, "slice", share_hidden=True)


def quick_gelu_lin(name, lead, K, N, swap):
    """CLIP's quick GELU after a linear: z * Sigmoid(1.702 z) (gemm_epilogue activation 7);
    swap: Mul(1.702, z) and Mul(s, z) operand orders."""
    g = G(17)
    x = g.inp("x", rrandn(*lead, K) * 2)
    z = g.op("Add", g.op("MatMul", x, g.const(rrandn(K, N) / np.sqrt(K))), g.const(0.5 * rrandn(N)))
    a = g.op("Mul", g.const(1.702), z) if swap else g.op("Mul", z, g.const(1.702))
    s = g.op("Sigmoid", a)
    g.save(name, [g.op("Mul", s, z) if swap else g.op("Mul", z, s)])


quick_gelu_lin("qgelu_lin", (3, 7), 37, 50, False)
quick_gelu_lin("qgelu_lin_swap", (2, 9), 16, 17, True)


# ---- gnorm -------------------------------------------------------------------------------
def gn_inst(name, shape, G_, eps, gshape, silu, offset=0.0):
    g = G(17)
    x = g.inp("x", randn(*shape) + offset)
    C = shape[1]
    r = g.op("Reshape", x, g.const([shape[0], G_, -1], np.int64))
    i = g.op("InstanceNormalization", r, g.const(np.ones(G_)), g.const(np.zeros(G_)), epsilon=eps)
    y = g.op("Reshape", i, g.const(list(shape), np.int64))
    if gshape is not None:
        y = g.op("Mul", y, g.const((1 + 0.1 * randn(C)).reshape(gshape)))
        y = g.op("Add", g.const((0.1 * randn(C)).reshape(gshape)), y)
    if silu:
        y = g.op("Mul", y, g.op("Sigmoid", y))
    g.save(name, [y])


def gn_op(name, opset, shape, G_, silu):
    g = G(opset)
    g.check = opset >= 21
    x = g.inp("x", randn(*shape))
    n = shape[1] if opset >= 21 else G_
    y = g.op("GroupNormalization", x, g.const(1 + 0.1 * randn(n)), g.const(0.1 * randn(n)),
             num_groups=G_, epsilon=1e-5)
    if silu:
        y = g.op("Mul", g.op("Sigmoid", y), y)
    g.save(name, [y])


gn_inst("gn_inst_silu", (2, 12, 5, 7), 4, 1e-5, (12, 1, 1), True)
gn_inst("gn_inst_rank3", (1, 16, 20), 8, 1e-6, (16, 1), False)
gn_inst("gn_inst_nogb", (2, 6, 3, 3), 3, 1e-5, None, True)
gn_inst("gn_large", (1, 4, 128, 128), 1, 1e-6, (4, 1, 1), True, offset=3.0)
gn_op("gn_op21", 21, (2, 12, 5, 7), 3, True)
gn_op("gn_op18", 18, (2, 12, 5, 7), 4, False)


# ---- conv_epilogue ---------------------------------------------------------------------
def conv_full():
    g = G(17)
    x = g.inp("x", randn(1, 8, 9, 11))
    r = g.inp("r", randn(1, 8, 9, 11))
    y = g.op("Conv", x, g.const(randn(8, 8, 3, 3) / 8), pads=[1, 1, 1, 1])
    y = g.op("Add", y, g.const(0.1 * randn(8, 1, 1)))
    y = g.op("Mul", g.op("Sigmoid", y), y)
    y = g.op("Add", r, y)
    y = g.op("Div", y, g.const(2.0))
    g.save("conv_bias_silu_res_div", [y])


def conv_temb():
    g = G(17)
    x = g.inp("x", randn(2, 5, 10, 10))
    t = g.inp("temb", randn(2, 6, 1, 1))
    y = g.op("Conv", x, g.const(randn(6, 5, 3, 3) / 6), g.const(0.1 * randn(6)), pads=[1, 1, 1, 1],
             strides=[2, 2])
    g.save("conv_temb", [g.op("Add", y, t)])


def conv_relu_1d():
    g = G(17)
    x = g.inp("x", randn(1, 3, 17))
    y = g.op("Conv", x, g.const(randn(8, 3, 5) / 4), g.const(0.1 * randn(8)), pads=[2, 2])
    g.save("conv_relu_1d", [g.op("Relu", y)])


def conv_add_conv():
    g = G(17)
    x = g.inp("x", randn(1, 4, 6, 6))
    a = g.op("Conv", x, g.const(randn(8, 4, 3, 3) / 6), g.const(0.1 * randn(8)), pads=[1, 1, 1, 1])
    b = g.op("Conv", x, g.const(randn(8, 4, 1, 1) / 2), g.const(0.1 * randn(8)))
    g.save("conv_add_conv", [g.op("Div", g.op("Add", a, b), g.const(1.0))])


def conv_shared():
    g = G(17)
    x = g.inp("x", randn(1, 4, 6, 6))
    y = g.op("Conv", x, g.const(randn(4, 4, 3, 3) / 6), pads=[1, 1, 1, 1])
    g.save("conv_shared", [g.op("Relu", y), g.op("Add", y, x)])


def conv_strided():
    g = G(17)
    x = g.inp("x", randn(2, 4, 11, 13))
    y = g.op("Conv", x, g.const(randn(8, 2, 3, 3) / 4), g.const(0.1 * randn(8)), pads=[1, 2, 1, 0],
             strides=[2, 3], dilations=[1, 2], group=2)
    g.save("conv_strided_relu", [g.op("Relu", y)])


conv_full()
conv_strided()
conv_temb()
conv_relu_1d()
conv_add_conv()
conv_shared()


# ---- normalization numerics (issue 13) ----------------------------------------------------
# Groups / rows of four kinds (cycling over (n, g) or rows): a constant, a large mean with a
# tiny spread, ordinary data, a moderate mean with a small spread; eps 1e-6. The float16 data
# sit on the float16 grid (spreads of a few ulps). References: float64 on the stored values.
rng_n = np.random.default_rng(13013)
NP2TP = {np.float32: TP.FLOAT, np.float16: TP.FLOAT16}


def hazard_rows(rows, R, dt, const_only=False):
    """[rows, R] float64 values exactly representable in dt."""
    out = np.empty((rows, R))
    f16 = dt == np.float16
    consts = [1000.5, -37.25, 3.0, 6.5e4 if not f16 else 6.0e4, -0.001, 250.0]
    for r in range(rows):
        k = 0 if const_only else r % 4
        if k == 0:
            out[r] = consts[r % len(consts)] + (0 if f16 else 0.3)
        elif k == 1:
            out[r] = 1000 + (0.5 * rng_n.integers(-2, 3, R) if f16 else 1e-3 * rng_n.standard_normal(R))
        elif k == 2:
            out[r] = 2 * rng_n.standard_normal(R) + 0.5
        else:
            out[r] = 250 + (0.125 * rng_n.integers(-3, 4, R) if f16 else 0.01 * rng_n.standard_normal(R))
    return out.astype(dt).astype(np.float64)


def gn_ref(x, G_, gamma, beta, eps, silu, per_group):
    """float64 GroupNormalization (-18 per_group / -21 per channel) + optional SiLU."""
    N, C = x.shape[:2]
    xr = x.reshape(N, G_, -1)
    mean = xr.mean(axis=2, keepdims=True)
    var = ((xr - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((xr - mean) / np.sqrt(var + eps)).reshape(x.shape)
    bshape = (1, C) + (1,) * (x.ndim - 2)
    if per_group:
        gamma, beta = np.repeat(gamma, C // G_), np.repeat(beta, C // G_)
    y = y * gamma.reshape(bshape) + beta.reshape(bshape)
    return y / (1 + np.exp(-y)) if silu else y


def save_exact(name, nodes, ins, outs, inits, feeds, refs, dt, opset, tol=None, check=True):
    """Writes graphs/NAME with float64 references REFS rounded once to dt (no onnxruntime);
    TOL "ATOL RTOL" goes to tolerance.txt (fused_vs_unfused.sh; default 1e-4 1e-3)."""
    d = fresh_dir(name)
    if d is None:
        return
    tp = NP2TP[dt]
    graph = oh.make_graph(nodes, name, [oh.make_tensor_value_info(k, tp, v.shape) for k, v in ins],
                          [oh.make_tensor_value_info(k, tp, r.shape) for k, r in zip(outs, refs)],
                          inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)],
                          producer_name="make_graphs.py")
    model.ir_version = 8
    # the checker refuses GroupNormalization-18 (deprecated) and fails inside the function body of
    # MeanVarianceNormalization-13 (onnx 1.23)
    if check and opset != 18:
        onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, v in feeds.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v.astype(dt))
    for k, r in zip(outs, refs):
        np.save(os.path.join(d, "ref", k + ".npy"), r.astype(dt))
    if tol:
        with open(os.path.join(d, "tolerance.txt"), "w") as f:
            f.write(tol + "\n")


def gnx(name, form, dt, shapes, G_, silu, const_only=False, ramp=False):
    """GroupNorm over hazard data: form 'inst' (Reshape-InstanceNormalization-Reshape-Mul-Add,
    opset 17), 'op21' (GroupNormalization-21, [C] scale/bias) or 'op18' ([G]); one graph input
    and output per shape in SHAPES. RAMP: the normal rows (r % 4 == 2) get a ramp from -4 to 4
    along the group, so that parts of a split group have different means (Chan's cross term)."""
    opset = {"inst": 17, "op21": 21, "op18": 18}[form]
    nodes, inits, ins, outs, feeds, refs = [], [], [], [], {}, []
    eps = 1e-6

    def const(nm, arr):
        inits.append(nh.from_array(np.asarray(arr).astype(dt if arr.dtype.kind == "f" else arr.dtype), nm))
        return nm

    for i, shape in enumerate(shapes):
        N, C = shape[:2]
        x = hazard_rows(N * G_, int(np.prod(shape)) // (N * G_), dt, const_only)
        if ramp:
            x[2::4] = (x[2::4] + np.linspace(-4, 4, x.shape[1])).astype(dt).astype(np.float64)
        x = x.reshape(shape)
        n_aff = G_ if form == "op18" else C
        gamma = (1 + 0.1 * rng_n.standard_normal(n_aff)).astype(dt).astype(np.float64)
        beta = (0.1 * rng_n.standard_normal(n_aff)).astype(dt).astype(np.float64)
        xi, y = f"x{i}", f"y{i}"
        ins.append((xi, x))
        feeds[xi] = x
        t = f"t{i}_"
        if form == "inst":
            nodes += [oh.make_node("Reshape", [xi, const(t + "s1", np.array([N, G_, -1], np.int64))], [t + "r"]),
                      oh.make_node("InstanceNormalization", [t + "r", const(t + "one", np.ones(G_)),
                                   const(t + "zero", np.zeros(G_))], [t + "i"], epsilon=eps),
                      oh.make_node("Reshape", [t + "i", const(t + "s2", np.array(shape, np.int64))], [t + "b"]),
                      oh.make_node("Mul", [t + "b", const(t + "g", gamma.reshape(C, 1, 1))], [t + "m"]),
                      oh.make_node("Add", [const(t + "be", beta.reshape(C, 1, 1)), t + "m"], [t + "n"])]
        else:
            nodes.append(oh.make_node("GroupNormalization", [xi, const(t + "g", gamma), const(t + "be", beta)],
                                      [t + "n"], num_groups=G_, epsilon=eps))
        if silu:
            nodes += [oh.make_node("Sigmoid", [t + "n"], [t + "sg"]), oh.make_node("Mul", [t + "n", t + "sg"], [y])]
        else:
            nodes.append(oh.make_node("Identity", [t + "n"], [y]))
        outs.append(y)
        refs.append(gn_ref(x, G_, gamma, beta, eps, silu, form == "op18"))
    # all-constant groups must give exactly beta: bit-exact comparison
    save_exact(name, nodes, ins, outs, inits, feeds, refs, dt, opset, "0 0" if const_only else None)


def lnx(name, dt, shape, axis):
    """LayerNormalization-17 over hazard rows (rows = prod(shape[:axis]))."""
    rows = int(np.prod(shape[:axis]))
    x = hazard_rows(rows, int(np.prod(shape)) // rows, dt).reshape(shape)
    sc = (1 + 0.1 * rng_n.standard_normal(shape[axis:])).astype(dt).astype(np.float64)
    bi = (0.1 * rng_n.standard_normal(shape[axis:])).astype(dt).astype(np.float64)
    xr = x.reshape(rows, -1)
    mean = xr.mean(axis=1, keepdims=True)
    y = ((xr - mean) / np.sqrt(((xr - mean) ** 2).mean(axis=1, keepdims=True) + 1e-6)).reshape(shape)
    inits = [nh.from_array(sc.astype(dt), "sc"), nh.from_array(bi.astype(dt), "bi")]
    nodes = [oh.make_node("LayerNormalization", ["x", "sc", "bi"], ["y0"], axis=axis, epsilon=1e-6)]
    save_exact(name, nodes, [("x", x)], ["y0"], inits, {"x": x}, [y * sc + bi], dt, 17)


def lnx_rows(name, dt, widths):
    """LayerNormalization-17 over hazard rows of the short widths the cpu class's
    norm_rows_short reads with float4 loads plus a scalar tail (15, 17, 33: odd; 16: none), 9 rows
    each (not a multiple of its work-group); every other node without bias; the first node also
    outputs Mean and InvStdDev (float32 statistics, float64 references)."""
    nodes, inits, ins, outs, feeds, refs = [], [], [], [], {}, []
    for i, R in enumerate(widths):
        x = hazard_rows(9, R, dt)
        sc = (1 + 0.1 * rng_n.standard_normal(R)).astype(dt).astype(np.float64)
        bi = (0.1 * rng_n.standard_normal(R)).astype(dt).astype(np.float64) if i % 2 == 0 else 0
        mean = x.mean(axis=1, keepdims=True)
        inv = 1 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + 1e-6)
        inits.append(nh.from_array(sc.astype(dt), f"sc{i}"))
        args = [f"x{i}", f"sc{i}"]
        if i % 2 == 0:
            inits.append(nh.from_array(bi.astype(dt), f"bi{i}"))
            args.append(f"bi{i}")
        o = [f"y{i}"] + ([f"mean{i}", f"invstd{i}"] if i == 0 else [])
        nodes.append(oh.make_node("LayerNormalization", args, o, axis=-1, epsilon=1e-6))
        ins.append((f"x{i}", x))
        feeds[f"x{i}"] = x
        outs += o
        refs += [(x - mean) * inv * sc + bi] + ([mean, inv] if i == 0 else [])
    save_exact(name, nodes, ins, outs, inits, feeds, refs, dt, 17)


def inx(name, dt, shape):
    """InstanceNormalization-6 alone over hazard (n, c) planes."""
    N, C = shape[:2]
    x = hazard_rows(N * C, int(np.prod(shape)) // (N * C), dt).reshape(shape)
    sc = (1 + 0.1 * rng_n.standard_normal(C)).astype(dt).astype(np.float64)
    bi = (0.1 * rng_n.standard_normal(C)).astype(dt).astype(np.float64)
    inits = [nh.from_array(sc.astype(dt), "sc"), nh.from_array(bi.astype(dt), "bi")]
    nodes = [oh.make_node("InstanceNormalization", ["x", "sc", "bi"], ["y0"], epsilon=1e-6)]
    ref = gn_ref(x, C, sc, bi, 1e-6, False, False)
    save_exact(name, nodes, [("x", x)], ["y0"], inits, {"x": x}, [ref], dt, 17)


def mvnx(name, dt, shape):
    """MeanVarianceNormalization-13 (expanded into primitive ops by passes/expand/norm.c) over
    hazard sets: x0 per (n, c) plane with axes [2, 3], x1 per channel with the default axes
    [0, 2, 3]; reference (X - E[X]) / (sqrt(E[(X - E[X])^2]) + 1e-9) in float64."""
    N, C = shape[:2]
    xa = hazard_rows(N * C, int(np.prod(shape)) // (N * C), dt).reshape(shape)
    xb = hazard_rows(C, int(np.prod(shape)) // C, dt).reshape((C, N) + shape[2:]).swapaxes(0, 1).copy()
    nodes, refs = [], []
    for i, (xv, axes) in enumerate(((xa, [2, 3]), (xb, None))):
        kw = {"axes": axes} if axes else {}
        nodes.append(oh.make_node("MeanVarianceNormalization", [f"x{i}"], [f"y{i}"], **kw))
        ax = tuple(axes or [0, 2, 3])
        mu = xv.mean(axis=ax, keepdims=True)
        refs.append((xv - mu) / (np.sqrt(((xv - mu) ** 2).mean(axis=ax, keepdims=True)) + 1e-9))
    save_exact(name, nodes, [("x0", xa), ("x1", xb)], ["y0", "y1"], [], {"x0": xa, "x1": xb}, refs, dt, 13, check=False)


# S = 7*5 = 35 < 128 (flat loop) and 13*11 = 143 >= 128 (per-channel loop) in kernels/gnorm.cl
for dt, sfx in ((np.float32, "f32"), (np.float16, "f16")):
    gnx(f"gnx_inst_{sfx}", "inst", dt, [(2, 6, 13, 11), (2, 6, 7, 5)], 3, True)
    gnx(f"gnx_op21_{sfx}", "op21", dt, [(2, 6, 7, 5), (1, 6, 13, 11)], 3, True)
    gnx(f"gnx_op18_{sfx}", "op18", dt, [(2, 6, 13, 11), (2, 6, 7, 5)], 3, False)
    gnx(f"gnx_const_{sfx}", "inst" if dt == np.float32 else "op21", dt, [(2, 6, 13, 11), (2, 6, 7, 5)], 3,
        False, const_only=True)
    lnx(f"lnx_{sfx}", dt, (4, 3, 131), 2)
    inx(f"inx_{sfx}", dt, (2, 5, 7, 5))
    mvnx(f"mvnx_{sfx}", dt, (2, 4, 7, 5))

# Groups large enough for the GPU class to split them over work-groups (codegen/lower_gnorm.c
# gn_gpu_parts: R >= 4096 -> 2 parts of 2176 / 2112): (2,4,41,53) G=2 has R = 4346 with parts
# crossing a channel boundary (S = 2173, per-channel segments); (1,132,8,8) has S = 64 < 256
# (flat loop). Rows cycle through the four hazard kinds (constant, mean 1000, normal + ramp, mean
# 250).
for dt, sfx in ((np.float32, "f32"), (np.float16, "f16")):
    gnx(f"gnx_split_{sfx}", "op21", dt, [(2, 4, 41, 53), (1, 132, 8, 8)], 2, True, ramp=True)
gnx("gnx_splitconst_f32", "inst", np.float32, [(1, 4, 41, 53), (1, 132, 8, 8)], 2, False,
    const_only=True)

# last, so that the graphs above keep their random streams
lnx_rows("lnx_rows_f32", np.float32, (15, 16, 17, 33))

# Groups the cpu class splits over work-items (codegen/lower_gnorm.c gn_cpu_parts: fewer than 16
# groups of >= 2 * 8192 elements): (1,8,48,173) G=4 has 4 groups (constant, mean 1000, normal +
# ramp, mean 250) of R = 2 * 8304 = 16608 in parts of 10240 + 6368, the part boundary inside the
# group's second channel. After lnx_rows, so that the graphs above keep their random streams.
gnx("gnx_cpusplit_f32", "op21", np.float32, [(1, 8, 48, 173)], 4, True, ramp=True)
