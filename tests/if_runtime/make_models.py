#!/usr/bin/env python3
"""make_models.py — If nodes whose condition is known only at run time and one of whose branches
cannot run with the bound shapes (issue 19 item 3), with onnxruntime references.

Run: python3 tests/if_runtime/make_models.py   (needs numpy, onnx, onnxruntime; the outputs are
committed, so the tests need no Python). Deterministic (fixed seed).

x has no shape in the files (so onnxruntime's shape inference cannot see the branch that does
not fit, as in an exported model with dynamic axes); the tests bind it with --shape.
cases/<name>/ holds model.onnx, inputs/<input>.npy and ref/<output>.npy (the run that takes the
branches that fit, compared by run_case.sh), and fail/<k>/ one run each that takes a branch that
does not fit: inputs/<input>.npy (every input) and message.txt (an extended regex the executable's
error must match; it must exit 1 and write no output file).

  else_lstm   If on Equal(rate, 16000) (rate: an int64 input). then_branch: an LSTM over x
              [2,1,3] (seq 2, batch 1) and Relu(x) * 2; else_branch: the same LSTM over
              Unsqueeze(x, [0, 1]) (rank 5: "X must have rank 3, not 5", like a voice-activity
              model's 8 kHz branch) and x * 3. Two outputs, so two checks. rate = 16000 runs;
              rate = 8000 stops, naming 'rate_if', the LSTM and the reason.
  nested      outer If on Equal(rate, 8000): then_branch reshapes x [2,3] to [5,5] (cannot run:
              the check fails when the condition is TRUE); else_branch holds an inner If on
              Greater(ReduceSum(x), 0) whose then_branch is Relu(x) + 1 and whose else_branch
              reshapes x to [4,4]. rate = 16000 with sum(x) > 0 runs; rate = 8000 stops naming
              'outer_if' and its Reshape; rate = 16000 with sum(x) < 0 stops naming 'inner_if'.
Bad-input models (compile-time errors, tests/if_runtime/CMakeLists.txt):
  both_bad.onnx  an If on a run-time condition whose then_branch reshapes to [5,5] and whose
                 else_branch holds an If whose two branches do not fit either: the error names
                 both branches and the nested If's two reasons.
"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
F = T.FLOAT
rng = np.random.default_rng(19)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                        producer_name="tests/if_runtime/make_models.py")


def vi(name, et, dims):
    return h.make_tensor_value_info(name, et, dims)


def branch(name, nodes, outs):
    return h.make_graph(nodes, name, [], [vi(o, F, None) for o in outs])


def ort_run(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def save_inputs(d, feeds):
    os.makedirs(os.path.join(d, "inputs"))
    for k, v in feeds.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v)


def case(name, m, feeds, fails):
    d = os.path.join(HERE, "cases", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "ref"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    save_inputs(d, feeds)
    for k, v in ort_run(m, feeds).items():
        np.save(os.path.join(d, "ref", k + ".npy"), v)
    for i, (ffeeds, regex) in enumerate(fails):
        fd = os.path.join(d, "fail", str(i))
        save_inputs(fd, ffeeds)
        with open(os.path.join(fd, "message.txt"), "w") as f:
            f.write(regex + "\n")


def const_i64(name, vals, dims=None):
    return h.make_node("Constant", [], [name], value=h.make_tensor(
        name, T.INT64, [len(vals)] if dims is None else dims, vals))


# ---- else_lstm --------------------------------------------------------------------------------
H = 4
W = nh.from_array(rng.standard_normal((1, 4 * H, 3)).astype(np.float32) * 0.5, "W")
R = nh.from_array(rng.standard_normal((1, 4 * H, H)).astype(np.float32) * 0.5, "R")
B = nh.from_array(rng.standard_normal((1, 8 * H)).astype(np.float32) * 0.1, "B")
two = nh.from_array(np.array(2.0, np.float32), "two")
three = nh.from_array(np.array(3.0, np.float32), "three")
k16 = nh.from_array(np.array(16000, np.int64), "k16")
then_b = branch("then_branch", [
    h.make_node("LSTM", ["x", "W", "R", "B"], ["", "t_h"], name="lstm_16k", hidden_size=H),
    h.make_node("Relu", ["x"], ["t_r"]), h.make_node("Mul", ["t_r", "two"], ["t_y"])],
    ["t_h", "t_y"])
else_b = branch("else_branch", [
    const_i64("e_axes", [0, 1]),
    h.make_node("Unsqueeze", ["x", "e_axes"], ["e_x5"]),
    h.make_node("LSTM", ["e_x5", "W", "R", "B"], ["", "e_h"], name="lstm_8k", hidden_size=H),
    h.make_node("Mul", ["x", "three"], ["e_y"])],
    ["e_h", "e_y"])
m = model([h.make_node("Equal", ["rate", "k16"], ["is16"]),
           h.make_node("If", ["is16"], ["h", "y"], name="rate_if", then_branch=then_b,
                       else_branch=else_b)],
          [vi("x", F, None), vi("rate", T.INT64, [])],
          [vi("h", F, None), vi("y", F, None)], [W, R, B, two, three, k16])
x = rng.standard_normal((2, 1, 3)).astype(np.float32)
case("else_lstm", m, {"x": x, "rate": np.array(16000, np.int64)},
     [({"x": x, "rate": np.array(8000, np.int64)},
       r"node 'rate_if' \(If, #1\): the condition \('is16'\) is false, which selects else_branch, "
       r"but else_branch cannot run with the shapes this model was compiled for: "
       r"node 'rate_if/else_branch/lstm_8k' \(LSTM\): LSTM: X must have rank 3, not 5")])

# ---- nested ------------------------------------------------------------------------------------
one = nh.from_array(np.array(1.0, np.float32), "one")
k8 = nh.from_array(np.array(8000, np.int64), "k8")
zero = nh.from_array(np.array(0.0, np.float32), "zero")
inner = h.make_node("If", ["pos"], ["i_y"], name="inner_if",
                    then_branch=branch("then_branch", [h.make_node("Relu", ["x"], ["it_r"]),
                                                       h.make_node("Add", ["it_r", "one"], ["it_y"])],
                                       ["it_y"]),
                    else_branch=branch("else_branch", [const_i64("ie_s", [4, 4]),
                                                       h.make_node("Reshape", ["x", "ie_s"], ["ie_y"],
                                                                   name="to_4x4")], ["ie_y"]))
outer = h.make_node("If", ["is8"], ["y"], name="outer_if",
                    then_branch=branch("then_branch", [const_i64("ot_s", [5, 5]),
                                                       h.make_node("Reshape", ["x", "ot_s"], ["ot_y"],
                                                                   name="to_5x5")], ["ot_y"]),
                    else_branch=branch("else_branch", [
                        h.make_node("ReduceSum", ["x"], ["oe_sum"], keepdims=0),
                        h.make_node("Greater", ["oe_sum", "zero"], ["pos"]), inner], ["i_y"]))
m = model([h.make_node("Equal", ["rate", "k8"], ["is8"]), outer],
          [vi("x", F, None), vi("rate", T.INT64, [])], [vi("y", F, None)], [one, k8, zero])
x = np.abs(rng.standard_normal((2, 3)).astype(np.float32)) - np.float32(0.25)
x[0, 0] = 2.0  # sum(x) > 0
case("nested", m, {"x": x, "rate": np.array(16000, np.int64)},
     [({"x": x, "rate": np.array(8000, np.int64)},
       r"node 'outer_if' \(If, #1\): the condition \('is8'\) is true, which selects then_branch, "
       r"but then_branch cannot run with the shapes this model was compiled for: "
       r"node 'outer_if/then_branch/to_5x5' \(Reshape\): .*"),
      ({"x": -np.abs(x) - np.float32(0.5), "rate": np.array(16000, np.int64)},
       r"node 'outer_if/else_branch/inner_if' \(If, #1\): the condition "
       r"\('outer_if/else_branch/pos'\) is false, which selects else_branch, but else_branch "
       r"cannot run with the shapes this model was compiled for: node 'outer_if/else_branch/inner_if/else_branch/to_4x4' \(Reshape\): .*")])

# ---- both branches do not fit: compile-time error -----------------------------------------------
inner_bad = h.make_node("If", ["pos"], ["i_y"], name="inner_if",
                        then_branch=branch("then_branch", [const_i64("it_s", [7]),
                                                           h.make_node("Reshape", ["x", "it_s"], ["it_y"],
                                                                       name="to_7")], ["it_y"]),
                        else_branch=branch("else_branch", [const_i64("ie_s", [4, 4]),
                                                           h.make_node("Reshape", ["x", "ie_s"], ["ie_y"],
                                                                       name="to_4x4")], ["ie_y"]))
outer_bad = h.make_node("If", ["is8"], ["y"], name="outer_if",
                        then_branch=[a.g for a in outer.attribute if a.name == "then_branch"][0],
                        else_branch=branch("else_branch", [
                            h.make_node("ReduceSum", ["x"], ["oe_sum"], keepdims=0),
                            h.make_node("Greater", ["oe_sum", "zero"], ["pos"]), inner_bad], ["i_y"]))
m = model([h.make_node("Equal", ["rate", "k8"], ["is8"]), outer_bad],
          [vi("x", F, None), vi("rate", T.INT64, [])], [vi("y", F, None)], [one, k8, zero])
onnx.save(m, os.path.join(HERE, "both_bad.onnx"))
