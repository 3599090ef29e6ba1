#!/usr/bin/env python3
"""make_models.py — generates the small .onnx files the frontend tests load (committed under
tests/frontend/models/, so running the tests never needs Python).

Run: python3 tests/frontend/make_models.py   (needs the `onnx` package; output is deterministic)

Files:
  weights.bin            24 bytes: float32 [1,2,3,4,5,6] (shared external data file)
  ext_ok.onnx            initializer W f32[2,3] external (weights.bin, offset 0, length 24)
  ext_offset4.onnx       initializer W f32[1,2] external at offset 4, length 8 -> [2,3]
  ext_noloc_len.onnx     external without length (rest of file from offset 16 -> f32[2])
  ext_dotdot.onnx        location "../weights.bin"                 -> refused ('..')
  ext_abs.onnx           location "/tmp/weights.bin"               -> refused (absolute)
  ext_link.onnx          location "link.bin" (the test makes link.bin a symlink out of the folder)
  ext_past_end.onnx      offset 4096 past the end of weights.bin  -> refused
  ext_overrun.onnx       offset 16 + length 24 > 24                -> refused
  ext_len_mismatch.onnx  length 20 for f32[2,3] (24 bytes)         -> refused
  ext_missing.onnx       location "missing.bin"                    -> refused (not found)
  ext_big.onnx           f32[4] at offset 5 GiB in "big.bin" (the test makes a sparse file)
  forms.onnx             initializers in every typed field (float_data, int32_data for
                         int8/uint8/int16/uint16/bool/float16, int64_data, double_data,
                         uint64_data for uint32/uint64, raw_data), an initializer shadowing a
                         graph input, an input with a missing dim, Constant value_* forms,
                         a ConstantOfShape TENSOR attribute
  gn18_static.onnx       GroupNormalization-18, x [1,4,2,2] static, scale/bias [2] constants
  gn18_dynamic.onnx      GroupNormalization-18, x [N,C,H,W] symbolic
  gn18_hint.onnx         GroupNormalization-18 on an intermediate whose C=4 is in value_info
  resize10.onnx          Resize-10 (X, scales), mode linear
  upsample7.onnx         Upsample-7 with a `scales` attribute, mode nearest
  slice9.onnx            Slice-9 with starts/ends/axes attributes
  squeeze11.onnx         opset 11: Squeeze/Unsqueeze/ReduceSum axes, ReduceMean without axes,
                         Split `split` attributes, Softmax without axis
  pad2_clip6.onnx        opset 6: Pad (pads, value attributes), Clip (min attribute only)
  big_raw.onnx           raw_data initializers of 64 KiB (taken over) and 64 KiB - 4 (copied)
  unsorted.onnx          nodes not in topological order, a Constant read before it is made
  bad_*.onnx             one error each (see the test for the expected messages)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
F = TensorProto.FLOAT


def save(model, name):
    model.producer_name = "make_models.py"
    onnx.save(model, os.path.join(HERE, name))


def model(nodes, inputs, outputs, inits=(), opset=17, domains=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def ext_tensor(name, dims, location, offset=None, length=None, dtype=F):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key = k
            e.value = str(v)
    return t


def identity_model(t, shape):
    n = helper.make_node("Identity", ["W"], ["y"], name="id")
    y = helper.make_tensor_value_info("y", t.data_type, shape)
    return model([n], [], [y], [t])


def main():
    os.makedirs(HERE, exist_ok=True)
    with open(os.path.join(HERE, "weights.bin"), "wb") as f:
        f.write(np.arange(1, 7, dtype="<f4").tobytes())

    cases = {
        "ext_ok": (ext_tensor("W", [2, 3], "weights.bin", 0, 24), [2, 3]),
        "ext_offset4": (ext_tensor("W", [1, 2], "weights.bin", 4, 8), [1, 2]),
        "ext_noloc_len": (ext_tensor("W", [2], "weights.bin", 16), [2]),
        "ext_dotdot": (ext_tensor("W", [2, 3], "../models/weights.bin", 0, 24), [2, 3]),
        "ext_abs": (ext_tensor("W", [2, 3], "/tmp/weights.bin", 0, 24), [2, 3]),
        "ext_link": (ext_tensor("W", [2, 3], "link.bin", 0, 24), [2, 3]),
        "ext_past_end": (ext_tensor("W", [2, 3], "weights.bin", 4096, 24), [2, 3]),
        "ext_overrun": (ext_tensor("W", [2, 3], "weights.bin", 16, 24), [2, 3]),
        "ext_len_mismatch": (ext_tensor("W", [2, 3], "weights.bin", 0, 20), [2, 3]),
        "ext_missing": (ext_tensor("W", [2, 3], "missing.bin", 0, 24), [2, 3]),
        "ext_big": (ext_tensor("W", [4], "big.bin", 5 << 30, 16), [4]),
    }
    for name, (t, shape) in cases.items():
        save(identity_model(t, shape), name + ".onnx")

    # ---- every tensor data form -------------------------------------------------------------
    inits = []

    def typed(name, dtype, dims, field, vals):
        t = TensorProto()
        t.name = name
        t.data_type = dtype
        t.dims.extend(dims)
        getattr(t, field).extend(vals)
        inits.append(t)

    typed("f32", F, [2, 2], "float_data", [1.5, -2.0, 3.25, 0.0])
    typed("i8", TensorProto.INT8, [3], "int32_data", [-128, 0, 127])
    typed("u8", TensorProto.UINT8, [2], "int32_data", [0, 255])
    typed("i16", TensorProto.INT16, [2], "int32_data", [-32768, 32767])
    typed("u16", TensorProto.UINT16, [2], "int32_data", [0, 65535])
    typed("b", TensorProto.BOOL, [3], "int32_data", [1, 0, 1])
    typed("f16", TensorProto.FLOAT16, [2], "int32_data", [0x3C00, 0xC000])  # 1.0, -2.0
    typed("i32", TensorProto.INT32, [2], "int32_data", [-5, 7])
    typed("i64", TensorProto.INT64, [2], "int64_data", [-(1 << 40), 3])
    typed("f64", TensorProto.DOUBLE, [1], "double_data", [0.1])
    typed("u32", TensorProto.UINT32, [1], "uint64_data", [4000000000])
    typed("u64", TensorProto.UINT64, [1], "uint64_data", [(1 << 63) + 5])
    raw = helper.make_tensor("raw", F, [3], np.array([7, 8, 9], "<f4").tobytes(), raw=True)
    inits.append(raw)
    empty = helper.make_tensor("empty", F, [0, 3], [], raw=False)
    inits.append(empty)
    shadow = helper.make_tensor("shadow", F, [1], [42.0])
    inits.append(shadow)
    nodes = [
        helper.make_node("Constant", [], ["c_float"], value_float=2.5),
        helper.make_node("Constant", [], ["c_floats"], value_floats=[1.0, 2.0]),
        helper.make_node("Constant", [], ["c_int"], value_int=-3),
        helper.make_node("Constant", [], ["c_ints"], value_ints=[4, 5, 6]),
        helper.make_node("Constant", [], ["c_tensor"],
                         value=helper.make_tensor("t", TensorProto.INT64, [2], [9, 10])),
        helper.make_node("ConstantOfShape", ["c_ints"], ["filled"], name="cos",
                         value=helper.make_tensor("v", F, [1], [0.5])),
        helper.make_node("Add", ["x", "shadow"], ["y"], name="add"),
    ]
    x = helper.make_tensor_value_info("x", F, ["batch", None, 4])
    sh = helper.make_tensor_value_info("shadow", F, [1])
    outs = [helper.make_tensor_value_info("y", F, None),
            helper.make_tensor_value_info("filled", F, None),
            helper.make_tensor_value_info("c_float", F, None)]
    m = model(nodes, [x, sh], outs, inits, opset=17)
    m.ir_version = 8
    save(m, "forms.onnx")

    # ---- normalization cases ----------------------------------------------------------------
    def gn(static):
        xs = [1, 4, 2, 2] if static else ["N", "C", "H", "W"]
        n = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="gn",
                             num_groups=2, epsilon=1e-5)
        return model([n], [helper.make_tensor_value_info("x", F, xs)],
                     [helper.make_tensor_value_info("y", F, xs)],
                     [helper.make_tensor("s", F, [2], [1.0, 2.0]),
                      helper.make_tensor("b", F, [2], [0.5, -0.5])], opset=18)
    save(gn(True), "gn18_static.onnx")
    save(gn(False), "gn18_dynamic.onnx")
    # C known only from graph.value_info of an intermediate value
    nodes = [helper.make_node("Identity", ["x"], ["t"], name="id"),
             helper.make_node("GroupNormalization", ["t", "s", "b"], ["y"], name="gn",
                              num_groups=2, epsilon=1e-5)]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", "C", 2, 2])],
              [helper.make_tensor_value_info("y", F, ["N", 4, 2, 2])],
              [helper.make_tensor("s", F, [2], [1.0, 2.0]),
               helper.make_tensor("b", F, [2], [0.5, -0.5])], opset=18)
    m.graph.value_info.append(helper.make_tensor_value_info("t", F, ["N", 4, 2, 2]))
    save(m, "gn18_hint.onnx")

    n = helper.make_node("Resize", ["x", "sc"], ["y"], name="rs", mode="linear")
    save(model([n], [helper.make_tensor_value_info("x", F, [1, 1, 2, 2])],
               [helper.make_tensor_value_info("y", F, [1, 1, 4, 4])],
               [helper.make_tensor("sc", F, [4], [1, 1, 2, 2])], opset=10), "resize10.onnx")

    n = helper.make_node("Upsample", ["x"], ["y"], name="up", scales=[1.0, 1.0, 2.0, 2.0])
    save(model([n], [helper.make_tensor_value_info("x", F, [1, 1, 2, 2])],
               [helper.make_tensor_value_info("y", F, [1, 1, 4, 4])], opset=7), "upsample7.onnx")

    n = helper.make_node("Slice", ["x"], ["y"], name="sl", starts=[0, 1], ends=[2, 3], axes=[0, 1])
    save(model([n], [helper.make_tensor_value_info("x", F, [3, 4])],
               [helper.make_tensor_value_info("y", F, [2, 2])], opset=9), "slice9.onnx")

    nodes = [
        helper.make_node("Squeeze", ["x"], ["sq"], name="sq", axes=[0]),
        helper.make_node("Unsqueeze", ["sq"], ["us"], name="us", axes=[0]),
        helper.make_node("ReduceSum", ["us"], ["rs"], name="rsum", axes=[1], keepdims=1),
        helper.make_node("ReduceMean", ["us"], ["rm"], name="rmean", keepdims=0),
        helper.make_node("Split", ["us"], ["s0", "s1"], name="split", axis=2, split=[1, 3]),
        helper.make_node("Softmax", ["us"], ["sm"], name="soft"),
    ]
    outs = [helper.make_tensor_value_info(o, F, None) for o in ("rs", "rm", "s0", "s1", "sm")]
    save(model(nodes, [helper.make_tensor_value_info("x", F, [1, 2, 4])], outs, opset=11),
         "squeeze11.onnx")

    nodes = [
        helper.make_node("Pad", ["x"], ["p"], name="pad", pads=[0, 1, 0, 1], value=1.5),
        helper.make_node("Clip", ["p"], ["y"], name="clip", min=0.0),
    ]
    save(model(nodes, [helper.make_tensor_value_info("x", F, [2, 2])],
               [helper.make_tensor_value_info("y", F, [2, 4])], opset=6), "pad2_clip6.onnx")

    # a raw_data initializer of 64 KiB (taken over from the message, not copied) and a small one
    bigw = helper.make_tensor("bigw", F, [16384], np.arange(16384, dtype="<f4").tobytes(), raw=True)
    smallw = helper.make_tensor("smallw", F, [16383], np.arange(16383, dtype="<f4").tobytes(),
                                raw=True)
    nodes = [helper.make_node("Add", ["x", "bigw"], ["y"], name="add"),
             helper.make_node("Identity", ["smallw"], ["z"], name="id")]
    save(model(nodes, [helper.make_tensor_value_info("x", F, [16384])],
               [helper.make_tensor_value_info("y", F, [16384]),
                helper.make_tensor_value_info("z", F, [16383])], [bigw, smallw]), "big_raw.onnx")

    # nodes out of topological order (the loader sorts them), a Constant read before it is made
    nodes = [
        helper.make_node("Add", ["a", "c"], ["y"], name="add"),
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Constant", [], ["c"], name="const", value_float=1.0),
    ]
    save(model(nodes, [helper.make_tensor_value_info("x", F, [2])],
               [helper.make_tensor_value_info("y", F, [2])]), "unsorted.onnx")

    # ---- one error each ---------------------------------------------------------------------
    x = helper.make_tensor_value_info("x", F, [2])
    y = helper.make_tensor_value_info("y", F, [2])
    save(model([helper.make_node("FastGelu", ["x"], ["y"], name="fg", domain="com.microsoft")],
               [x], [y], domains=[("com.microsoft", 1)]), "bad_domain.onnx")
    save(model([helper.make_node("NoSuchOp", ["x"], ["y"], name="nso")], [x], [y]),
         "bad_op.onnx")
    save(model([helper.make_node("Relu", ["x"], ["z"], name="r")], [x], [y]),
         "bad_output.onnx")
    save(model([helper.make_node("Relu", ["q"], ["y"], name="r")], [x], [y]),
         "bad_input.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                helper.make_node("Relu", ["x"], ["y"], name="r2")], [x], [y]),
         "bad_twice.onnx")
    s = helper.make_tensor("s", TensorProto.STRING, [1], [b"hi"])
    save(model([helper.make_node("Identity", ["s"], ["y"], name="i")], [], [y], [s]),
         "bad_string.onnx")
    save(model([helper.make_node("Constant", [], ["y"], name="cs", value_string="hi")], [], [y]),
         "bad_const_string.onnx")
    neg = TensorProto()
    neg.name = "neg"
    neg.data_type = F
    neg.dims.extend([2, -1])
    save(model([helper.make_node("Identity", ["neg"], ["y"], name="i")], [], [y], [neg]),
         "bad_negdim.onnx")
    big = TensorProto()
    big.name = "huge"
    big.data_type = F
    big.dims.extend([1 << 40, 1 << 40])
    save(model([helper.make_node("Identity", ["huge"], ["y"], name="i")], [], [y], [big]),
         "bad_overflow.onnx")
    short = TensorProto()
    short.name = "short"
    short.data_type = F
    short.dims.extend([3])
    short.raw_data = np.zeros(2, "<f4").tobytes()
    save(model([helper.make_node("Identity", ["short"], ["y"], name="i")], [], [y], [short]),
         "bad_rawsize.onnx")
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", F, [2])])
    save(model([helper.make_node("Relu", ["x"], ["y"], name="withgraph", then_branch=then_g)],
               [x], [y]), "bad_subgraph.onnx")
    ss = onnx.SparseTensorProto()
    ss.values.CopyFrom(helper.make_tensor("sv", F, [1], [1.0]))
    ss.indices.CopyFrom(helper.make_tensor("si", TensorProto.INT64, [1], [0]))
    ss.dims.extend([2])
    save(model([helper.make_node("Constant", [], ["y"], name="csp", sparse_value=ss)], [], [y]),
         "bad_sparse.onnx")
    save(model([helper.make_node("Relu", ["b"], ["a"], name="r1"),
                helper.make_node("Relu", ["a"], ["b"], name="r2"),
                helper.make_node("Add", ["a", "x"], ["y"], name="add")], [x], [y]),
         "bad_cycle.onnx")


if __name__ == "__main__":
    main()
