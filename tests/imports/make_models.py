#!/usr/bin/env python3
"""make_models.py — hand-made models of tests/imports (import breadth), with their references.

Run: python3 tests/imports/make_models.py   (needs numpy, onnx, onnxruntime, ml_dtypes; the
outputs are committed, so the tests need no Python). Deterministic (fixed seeds).

cases/<name>/ holds model.onnx, inputs/<input>.npy and ref/<output>.npy (run by run_case.sh);
the *.onnx files at the top level are bad-input models (one error each, see CMakeLists.txt).

  dyn_dims       input a[-1,4] (dim_value -1) and b[0,4] (dim_value 0), both bound by --shape to
                 [2,4]: y = a * b + 1 (numpy reference)
  empty_dim      input b[0,4] without --shape: an empty tensor, y = Relu(b) is [0,4]
  if_shapes      If inside another If's then_branch and an If reading the first If's output, each
                 on Not(Equal(Size(Shape(v)), 0)): all fold; the test asserts no Where is left
  if_bind        an If on the int64 input 'rate' whose branches give [4,3] or [2,3]: compiled with
                 --bind rate=inputs_bind/rate.npy (16000 -> then branch); 'rate' is no input of the
                 executable (onnxruntime reference with rate = 16000)
  bf16           bfloat16 input, weights and output: MatMul + Add + Gelu-like Tanh chain, computed
                 in float32 inside (onnxruntime's bfloat16 reference is not available for every
                 op, so the reference is numpy in float32 on the bfloat16 values, rounded to
                 bfloat16 at the end)
  f16_const_output  a float16 constant (folded Add of two initializers) that is a graph output and
                 also read by a Mul: the output stays float16, the Mul reads a float32 copy
                 (onnxruntime reference)
  expose         a MatMul/Add/Relu/MatMul/Add/Sigmoid chain for tools/first_mismatch.py;
                 expose_planted.onnx is the same with node 'add1''s bias altered by +0.05, so the
                 first node whose output leaves tolerance vs onnxruntime on expose/model.onnx is
                 'add1'
Bad-input models:
  unsupported_many.onnx  two FancyOp nodes, a com.microsoft FastGelu and a FancyOp inside an If
                         branch: one message lists every one (op, domain, opset, count, names)
  opset_new.onnx         imports opset 29 of the default domain
  negdim_unbound.onnx    input x[-1,3] compiled without --shape: the symbolic-dim message
  if_runtime.onnx        if_bind's model without --bind: the message names the input 'rate'
"""
import os
import shutil

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
F = T.FLOAT
rng = np.random.default_rng(11)


def model(nodes, inputs, outputs, inits=(), opset=17, domains=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in domains]
    return h.make_model(g, opset_imports=ops, producer_name="tests/imports/make_models.py")


def case(name, m, inputs, refs, extra=None):
    d = os.path.join(HERE, "cases", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "ref"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, v in inputs.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v)
    for k, v in refs.items():
        np.save(os.path.join(d, "ref", k + ".npy"), v)
    for sub, files in (extra or {}).items():
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        for k, v in files.items():
            np.save(os.path.join(d, sub, k + ".npy"), v)


def ort_run(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def vi(name, et, dims):
    return h.make_tensor_value_info(name, et, dims)


def vi_dims(name, et, dims):
    """A value info whose dims are written as dim_value (even -1 / 0), as some exporters do."""
    v = h.make_tensor_value_info(name, et, None)
    shp = v.type.tensor_type.shape
    for d in dims:
        shp.dim.add().dim_value = d
    return v


# ---- dims written as -1 / 0 ---------------------------------------------------------------------
one = nh.from_array(np.array(1.0, np.float32), "one")
m = model([h.make_node("Mul", ["a", "b"], ["p"]), h.make_node("Add", ["p", "one"], ["y"])],
          [vi_dims("a", F, [-1, 4]), vi_dims("b", F, [0, 4])], [vi_dims("y", F, [-1, 4])], [one])
a = rng.standard_normal((2, 4)).astype(np.float32)
b = rng.standard_normal((2, 4)).astype(np.float32)
case("dyn_dims", m, {"a": a, "b": b}, {"y": a * b + np.float32(1)})
m = model([h.make_node("Relu", ["b"], ["y"])], [vi_dims("b", F, [0, 4])], [vi_dims("y", F, [0, 4])])
case("empty_dim", m, {"b": np.zeros((0, 4), np.float32)}, {"y": np.zeros((0, 4), np.float32)})
onnx.save(model([h.make_node("Relu", ["x"], ["y"])], [vi_dims("x", F, [-1, 3])], [vi("y", F, None)]),
          os.path.join(HERE, "negdim_unbound.onnx"))


# ---- If conditions computed from shapes ---------------------------------------------------------
def nonempty(src, p):
    """Not(Equal(Size(Shape(src)), 0)) as nodes; the condition value is p + 'c'."""
    return [h.make_node("Shape", [src], [p + "s"]), h.make_node("Size", [p + "s"], [p + "n"]),
            h.make_node("Constant", [], [p + "z"], value=h.make_tensor("", T.INT64, [], [0])),
            h.make_node("Equal", [p + "n", p + "z"], [p + "e"]), h.make_node("Not", [p + "e"], [p + "c"])]


def branch(nodes, out):
    return h.make_graph(nodes, out, [], [vi(out, F, None)])


inner = h.make_node("If", ["t_c"], ["ot"], name="inner_if",
                    then_branch=branch([h.make_node("Relu", ["x"], ["it"])], "it"),
                    else_branch=branch([h.make_node("Neg", ["x"], ["ie"])], "ie"))
outer = h.make_node("If", ["o_c"], ["a"], name="outer_if",
                    then_branch=branch(nonempty("x", "t_") + [inner], "ot"),
                    else_branch=branch([h.make_node("Sigmoid", ["x"], ["oe"])], "oe"))
second = h.make_node("If", ["p_c"], ["y"], name="second_if",
                     then_branch=branch([h.make_node("Concat", ["a", "a"], ["b2"], axis=0)], "b2"),
                     else_branch=branch([h.make_node("Identity", ["a"], ["b3"])], "b3"))
m = model(nonempty("x", "o_") + [outer] + nonempty("a", "p_") + [second], [vi("x", F, ["N", 3])],
          [vi("y", F, None)])
x = rng.standard_normal((2, 3)).astype(np.float32)
case("if_shapes", m, {"x": x}, ort_run(m, {"x": x}))

# ---- If on a configuration input: --bind ---------------------------------------------------------
k16 = nh.from_array(np.array(16000, np.int64), "k16")
m = model([h.make_node("Equal", ["rate", "k16"], ["is16"]),
           h.make_node("If", ["is16"], ["y"], name="rate_if",
                       then_branch=branch([h.make_node("Concat", ["x", "x"], ["tc"], axis=0)], "tc"),
                       else_branch=branch([h.make_node("Identity", ["x"], ["te"])], "te"))],
          [vi("x", F, [2, 3]), vi("rate", T.INT64, [])], [vi("y", F, None)], [k16])
x = rng.standard_normal((2, 3)).astype(np.float32)
rate = np.array(16000, np.int64)
case("if_bind", m, {"x": x}, ort_run(m, {"x": x, "rate": rate}),
     extra={"inputs_bind": {"rate": rate},
            "bad_bind": {"rate_f32": np.array(16000, np.float32), "rate_vec": np.array([16000], np.int64)}})
onnx.save(m, os.path.join(HERE, "if_runtime.onnx"))

# ---- bfloat16 ----------------------------------------------------------------------------------
BF = T.BFLOAT16
bf = ml_dtypes.bfloat16
w = rng.standard_normal((3, 5)).astype(bf)
bias = rng.standard_normal((5,)).astype(bf)
xb = rng.standard_normal((2, 3)).astype(bf)
m = model([h.make_node("MatMul", ["x", "w"], ["mm"]), h.make_node("Add", ["mm", "bias"], ["ad"]),
           h.make_node("Tanh", ["ad"], ["th"]), h.make_node("Mul", ["th", "ad"], ["y"])],
          [vi("x", BF, [2, 3])], [vi("y", BF, [2, 5])],
          [nh.from_array(w, "w"), nh.from_array(bias, "bias")])
xf, wf, bfl = xb.astype(np.float32), w.astype(np.float32), bias.astype(np.float32)
ad = xf @ wf + bfl
case("bf16", m, {"x": xb}, {"y": (np.tanh(ad) * ad).astype(bf)})

# ---- --expose / first_mismatch -----------------------------------------------------------------
def expose_model(delta):
    w0 = rng_e.standard_normal((4, 6)).astype(np.float32)
    b0 = rng_e.standard_normal((6,)).astype(np.float32)
    w1 = rng_e.standard_normal((6, 5)).astype(np.float32)
    b1 = rng_e.standard_normal((5,)).astype(np.float32) + np.float32(delta)
    return model([h.make_node("MatMul", ["x", "w0"], ["m0"], name="mm0"),
                  h.make_node("Add", ["m0", "b0"], ["a0"], name="add0"),
                  h.make_node("Relu", ["a0"], ["r0"], name="relu0"),
                  h.make_node("MatMul", ["r0", "w1"], ["m1"], name="mm1"),
                  h.make_node("Add", ["m1", "b1"], ["a1"], name="add1"),
                  h.make_node("Sigmoid", ["a1"], ["s1"], name="sig1"),
                  h.make_node("Mul", ["a1", "s1"], ["y"], name="silu1")],
                 [vi("x", F, [3, 4])], [vi("y", F, [3, 5])],
                 [nh.from_array(w0, "w0"), nh.from_array(b0, "b0"), nh.from_array(w1, "w1"),
                  nh.from_array(b1, "b1")])


rng_e = np.random.default_rng(5)
m = expose_model(0.0)
rng_e = np.random.default_rng(5)
planted = expose_model(0.05)
x = rng.standard_normal((3, 4)).astype(np.float32)
case("expose", m, {"x": x}, ort_run(m, {"x": x}))
onnx.save(planted, os.path.join(HERE, "cases", "expose", "planted.onnx"))

# ---- unsupported operators, newer opset ----------------------------------------------------------
x2, y2 = vi("x", F, [2]), vi("y", F, [2])
br = branch([h.make_node("FancyOp", ["x"], ["fb"], name="fancy_in_branch")], "fb")
m = model([h.make_node("FancyOp", ["x"], ["f0"], name="fancy0"),
           h.make_node("FastGelu", ["f0"], ["g0"], name="fg0", domain="com.microsoft"),
           h.make_node("FancyOp", ["g0"], ["f1"], name="fancy1"),
           h.make_node("Constant", [], ["c"], value=h.make_tensor("", T.BOOL, [], [True])),
           h.make_node("If", ["c"], ["y"], name="if0", then_branch=br, else_branch=br)],
          [x2], [y2], domains=[("com.microsoft", 1)])
onnx.save(m, os.path.join(HERE, "unsupported_many.onnx"))
m = model([h.make_node("Relu", ["x"], ["y"])], [x2], [y2], opset=29)
m.ir_version = 10
onnx.save(m, os.path.join(HERE, "opset_new.onnx"))


# ---- float16 constant graph output that is also read by a node --------------------------------
H = T.FLOAT16
c0 = np.array([0.5, -1.25, 2.0], np.float16)
c1 = np.array([1.0, 0.25, -0.5], np.float16)
m = model([h.make_node("Add", ["c0", "c1"], ["c"]), h.make_node("Mul", ["x", "c"], ["y"])],
          [vi("x", H, [2, 3])], [vi("y", H, [2, 3]), vi("c", H, [3])],
          [nh.from_array(c0, "c0"), nh.from_array(c1, "c1")])
x = rng.standard_normal((2, 3)).astype(np.float16)
case("f16_const_output", m, {"x": x}, ort_run(m, {"x": x}))
