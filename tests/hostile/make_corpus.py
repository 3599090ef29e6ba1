#!/usr/bin/env python3
"""make_corpus.py — writes the hostile-input corpus for tests/hostile (committed; tests need no Python).

Run: python3 tests/hostile/make_corpus.py   (needs numpy + onnx; deterministic output)

Output, under tests/hostile/corpus/:
  base/model.onnx         a valid small model (Conv, Relu, Reshape, Gather, Constant, Add, an
                          external-data weight in base/weights.bin); run_corpus.sh truncates it at
                          many offsets and flips bytes in it at test time.
  <case>/model.onnx       one malformed or hostile model per case (+ the data files it names)
  <case>/SETUP            optional: lines "symlink TARGET NAME" / "fifo NAME" / "outside NAME"
                          run_corpus.sh performs in the case's sandbox before compiling
  ../runtime/             model_a.onnx (Relu(x + c)), model_b.onnx (Relu(x * c)), both x f32[2,3] with
                          a 3-float weight, and inputs x_2x3.{npy,pb} + truncated copies, for the
                          generated-executable tests (weights of another model, truncated files)
  cases.txt               one line per case: NAME<TAB>ERE the single error line must match
                          [<TAB>extra onnx2cl args]
The cases by category: wire (raw protobuf: wrong wire types, negative / huge / past-the-end
lengths, repeated fields where one is expected, deep nesting, non-ONNX and zero-length files),
external data (absolute, .., symlink out of the folder, fifo, directory, offset/length past the
end or overflowing, length not matching the tensor, missing file, bad numbers), tensors (negative
dims, rank 9 / 100, element counts overflowing int64 and size_t, raw_data / typed data not
matching dims x dtype, wrong data field for the dtype), graph (cycle, input nobody produces,
duplicate outputs / inputs / initializers, output never computed, initializer named like a node
output, no outputs, empty op_type), and ops (attributes of the wrong type, Conv weight rank >
input rank, Conv group not dividing channels / zero, zero strides / kernel / dilations,
ConvTranspose output_padding not smaller than the stride or the dilation (or negative), Gather
constant indices out of range, impossible Reshapes, bad Transpose perm, bad axes, Range delta 0,
huge ConstantOfShape, Split sizes not summing, Slice step 0, Cast to a string, Expand mismatch).
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")
F = TP.FLOAT
cases = []  # (name, regex, args)


# ---- raw protobuf encoding (for files the onnx package refuses to write) ----------------------
def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wt):
    return varint(num << 3 | wt)


def ld(num, payload):  # length-delimited field
    return key(num, 2) + varint(len(payload)) + payload


def vi(num, v):  # varint field
    return key(num, 0) + varint(v)


def s(num, text):
    return ld(num, text.encode())


OPSET17 = ld(8, vi(2, 17))
IN_X = ld(11, s(1, "x") + ld(2, ld(1, vi(1, 1) + ld(2, ld(1, vi(1, 2)) + ld(1, vi(1, 3))))))
OUT_Y = ld(12, s(1, "y"))
RELU = ld(1, s(1, "x") + s(2, "y") + s(3, "relu0") + s(4, "Relu"))


def raw_model(graph_payload, head=vi(1, 8) + OPSET17):
    return head + ld(7, graph_payload)


# ---- helpers ----------------------------------------------------------------------------------
def case_dir(name):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    return d


def add_bytes(name, data, regex, args="", files=None, setup=None):
    d = case_dir(name)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(data)
    for fn, content in (files or {}).items():
        with open(os.path.join(d, fn), "wb") as f:
            f.write(content)
    if setup:
        with open(os.path.join(d, "SETUP"), "w") as f:
            f.write(setup)
    cases.append((name, regex, args))


def add(name, model, regex, args="", files=None, setup=None):
    model.producer_name = "make_corpus.py"
    add_bytes(name, model.SerializeToString(), regex, args, files, setup)


def mk(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tv(name, shape, dt=F):
    return helper.make_tensor_value_info(name, dt, shape)


def arr(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def ext_tensor(name, dims, location, offset=None, length=None, dtype=F):
    t = TP()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.data_location = TP.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def raw_tensor(name, dims, dt, raw):
    t = TP()
    t.name, t.data_type = name, dt
    t.dims.extend(dims)
    t.raw_data = raw
    return t


X23 = tv("x", [2, 3])
Y = tv("y", None)
W24 = np.arange(1, 7, dtype="<f4").tobytes()  # 24 bytes: f32 [1..6]


def add_ext(name, t, regex, files=None, setup=None):
    files = {"weights.bin": W24} if files is None else files
    m = mk([helper.make_node("Add", ["x", "W"], ["y"], name="add0")], [X23], [Y], [t])
    add(name, m, regex, files=files, setup=setup)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    LOC = r"model\.onnx: "  # every message names the model file

    # ---- base model for truncation / byte flips ------------------------------------------------
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu0"),
        helper.make_node("Constant", [], ["shp"], name="shape0", value_ints=[1, -1]),
        helper.make_node("Reshape", ["r", "shp"], ["f"], name="reshape0"),
        helper.make_node("Gather", ["f", "idx"], ["gth"], name="gather0", axis=1),
        helper.make_node("Add", ["gth", "bias2"], ["y"], name="add0"),
    ]
    base = mk(nodes, [tv("x", [1, 2, 5, 5])], [tv("y", [1, 6])],
              [arr("w", w), arr("b", np.array([0.1, -0.2, 0.3, 0.0], np.float32)),
               arr("idx", np.array([0, 7, 33, 50, 99, 1], np.int64)),
               ext_tensor("bias2", [6], "weights.bin", 0, 24)])
    base.producer_name = "make_corpus.py"
    d = case_dir("base")
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(base.SerializeToString())
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(W24)

    # ---- wire format -------------------------------------------------------------------------
    NV = LOC + "not a valid ONNX model"
    add_bytes("wire_empty", b"", NV + r" \(empty file\)")
    add_bytes("wire_text", b"this is a text file, not a model\n", NV)
    add_bytes("wire_png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(64)), NV)
    add_bytes("wire_npy", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + b" " * 46 + b"\n" + W24, NV)
    add_bytes("wire_graph_as_varint", vi(1, 8) + OPSET17 + vi(7, 5), NV)
    add_bytes("wire_opset_as_fixed64", vi(1, 8) + key(8, 1) + b"\0" * 8 + ld(7, RELU + IN_X + OUT_Y), NV)
    add_bytes("wire_dims_as_string", raw_model(RELU + IN_X + OUT_Y + ld(5, ld(1, b"ab") + vi(2, 1) + s(8, "t"))),
              LOC + "tensor 't': float_data holds 0 elements but its dims need 9506")  # packed dims 'a','b' = [97, 98]
    add_bytes("wire_neg_length", vi(1, 8) + OPSET17 + key(7, 2) + varint(-1) + RELU, NV)
    add_bytes("wire_huge_length", vi(1, 8) + OPSET17 + key(7, 2) + varint(1 << 40) + RELU, NV)
    add_bytes("wire_length_past_end", vi(1, 8) + OPSET17 + key(7, 2) + varint(len(RELU) + 100) + RELU, NV)
    add_bytes("wire_raw_data_past_end", raw_model(RELU + IN_X + OUT_Y + ld(5, vi(1, 2) + vi(2, 1) + s(8, "t") + key(9, 2) + varint(4000) + b"\0" * 8)), NV)
    add_bytes("wire_bad_varint", vi(1, 8) + OPSET17 + key(1, 0) + b"\xff" * 11, NV)
    add_bytes("wire_group_wiretype", vi(1, 8) + OPSET17 + key(7, 3) + RELU + key(7, 4), NV)
    # nesting: TypeProto.sequence_type 20000 deep (protobuf-c recursion would overflow the stack)
    t = ld(1, vi(1, 1))
    for _ in range(20000):
        t = ld(4, ld(1, t))
    add_bytes("wire_deep_nesting", raw_model(RELU + ld(11, s(1, "x") + ld(2, t)) + OUT_Y), NV + r".*nested")
    # repeated fields where one is expected: the last wins (protobuf) / messages merge
    add_bytes("wire_graph_twice", vi(1, 8) + OPSET17 + ld(7, RELU + IN_X + OUT_Y) + ld(7, RELU + OUT_Y),
              LOC + r"node 'relu0' \(Relu, #1\): output 'y' is already produced")
    add_bytes("wire_dtype_twice", raw_model(RELU + IN_X + OUT_Y + ld(5, vi(1, 2) + vi(2, 1) + vi(2, 7) + s(8, "t") + key(4, 2) + varint(8) + b"\0" * 8)),
              LOC + r"tensor 't'.*(int64|float_data|does not match|holds)")
    add_bytes("wire_no_graph", vi(1, 8) + OPSET17, NV + r" \(no graph\)")
    add_bytes("wire_no_opset", vi(1, 8) + ld(7, RELU + IN_X + OUT_Y), NV + r" \(no opset_import\)")

    # ---- external data -----------------------------------------------------------------------
    T = LOC + r"tensor 'W': "
    add_ext("ext_absolute", ext_tensor("W", [2, 3], "/etc/passwd", 0, 24), T + "external data location '/etc/passwd' is an absolute path")
    add_ext("ext_dotdot", ext_tensor("W", [2, 3], "sub/../../outside.bin", 0, 24), T + "external data location .* contains '\\.\\.'",
            setup="outside outside.bin\n")
    add_ext("ext_symlink_out", ext_tensor("W", [2, 3], "link.bin", 0, 24), T + "external data location 'link.bin' resolves to .*outside the model's folder",
            setup="outside outside.bin\nsymlink ../outside.bin link.bin\n")
    add_ext("ext_symlink_dir_out", ext_tensor("W", [2, 3], "d/weights.bin", 0, 24), T + ".*resolves to .*outside the model's folder",
            setup="outside weights.bin\nsymlink .. d\n")
    add_ext("ext_fifo", ext_tensor("W", [2, 3], "pipe.bin", 0, 24), T + "external data 'pipe.bin' is not a regular file", files={}, setup="fifo pipe.bin\n")
    add_ext("ext_directory", ext_tensor("W", [2, 3], "sub", 0, 24), T + "external data 'sub' is not a regular file", setup="mkdir sub\n")
    add_ext("ext_offset_past_end", ext_tensor("W", [2, 3], "weights.bin", 4096, 24), T + "external data offset 4096 is past the end")
    add_ext("ext_length_past_end", ext_tensor("W", [2, 3], "weights.bin", 16, 24), T + "external data offset 16 \\+ length 24 exceeds")
    add_ext("ext_offset_wraps", ext_tensor("W", [2, 3], "weights.bin", 8, (1 << 64) - 4), T + "external data offset 8 \\+ length 18446744073709551612 exceeds")
    add_ext("ext_offset_overflow", ext_tensor("W", [2, 3], "weights.bin", "99999999999999999999999", 24), T + "external data offset .* is not a non-negative integer")
    add_ext("ext_offset_negative", ext_tensor("W", [2, 3], "weights.bin", -8, 24), T + "external data offset '-8' is not a non-negative integer")
    add_ext("ext_length_mismatch", ext_tensor("W", [2, 3], "weights.bin", 0, 20), T + "external data length 20 does not match")
    add_ext("ext_file_too_small", ext_tensor("W", [2, 3], "weights.bin", 8), T + "external data length 16 does not match")
    add_ext("ext_missing_file", ext_tensor("W", [2, 3], "missing.bin", 0, 24), T + "external data file 'missing.bin' not found")
    add_ext("ext_no_location", ext_tensor("W", [2, 3], "", 0, 24), T + "external data has no 'location'")

    # ---- tensors -----------------------------------------------------------------------------
    def init_case(name, t, regex):
        m = mk([helper.make_node("Identity", [t.name], ["y"], name="id0")], [], [Y], [t])
        add(name, m, regex)
    init_case("dims_negative", raw_tensor("t", [2, -3], F, b""), LOC + "tensor 't': negative dim -3 at axis 1")
    init_case("dims_overflow_int64", raw_tensor("t", [1 << 32, 1 << 32], F, b""), LOC + "tensor 't': element count overflows")
    init_case("dims_overflow_size_t", raw_tensor("t", [1 << 31, 1 << 31], F, b""), LOC + "tensor 't': .*(overflows|too large|holds)")
    init_case("dims_huge_no_data", raw_tensor("t", [1 << 20, 1 << 20], F, b""), LOC + "tensor 't': raw_data holds 0 bytes")
    init_case("rank_9", raw_tensor("t", [1] * 9, F, b"\0" * 4), LOC + "tensor 't': rank 9 exceeds")
    init_case("rank_100", raw_tensor("t", [1] * 100, F, b"\0" * 4), LOC + "tensor 't': rank 100 exceeds")
    init_case("raw_too_short", raw_tensor("t", [2, 3], F, b"\0" * 20), LOC + "tensor 't': raw_data holds 20 bytes")
    init_case("raw_too_long", raw_tensor("t", [2, 3], F, b"\0" * 28), LOC + "tensor 't': raw_data holds 28 bytes")
    init_case("raw_f16_odd", raw_tensor("t", [3], TP.FLOAT16, b"\0" * 5), LOC + "tensor 't': raw_data holds 5 bytes")
    t = TP(); t.name = "t"; t.data_type = F; t.dims.extend([2, 3]); t.float_data.extend([1.0, 2.0, 3.0])
    init_case("typed_count_mismatch", t, LOC + "tensor 't': .*3.*6|tensor 't': .*(does not match|holds)")
    t = TP(); t.name = "t"; t.data_type = F; t.dims.extend([2]); t.int64_data.extend([1, 2])
    init_case("typed_wrong_field", t, LOC + "tensor 't': ")
    init_case("dtype_unknown", raw_tensor("t", [1], 99, b"\0" * 4), LOC + "tensor 't': .*(unsupported|unknown).*99")
    t = TP(); t.name = "t"; t.data_type = TP.STRING; t.dims.extend([1]); t.string_data.append(b"a")
    init_case("dtype_string", t, LOC + "tensor 't': string tensors are not supported")
    init_case("dtype_complex", raw_tensor("t", [1], TP.COMPLEX64, b"\0" * 8), LOC + "tensor 't': .*(unsupported|complex)")
    add("input_rank_9", mk([helper.make_node("Relu", ["x"], ["y"], name="relu0")], [tv("x", [1] * 9)], [Y]),
        LOC + "graph input 'x': rank 9 exceeds")
    add("input_dim_negative", mk([helper.make_node("Relu", ["x"], ["y"], name="relu0")], [tv("x", [2, -5])], [Y]),
        LOC + "graph input 'x': negative dim -5")
    add("input_numel_overflow", mk([helper.make_node("Relu", ["x"], ["y"], name="relu0")], [tv("x", [1 << 40, 1 << 40])], [Y]),
        LOC + ".*(overflow|too large)")
    add("input_shape_flag_overflow", mk([helper.make_node("Relu", ["x"], ["y"], name="relu0")], [tv("x", ["n", "m"])], [Y]),
        LOC + ".*(overflow|too large)", "--shape x=4294967296,4294967296")

    # ---- graph structure ---------------------------------------------------------------------
    add("graph_cycle", mk([helper.make_node("Relu", ["b"], ["a"], name="r0"), helper.make_node("Relu", ["a"], ["b"], name="r1"),
                           helper.make_node("Add", ["x", "a"], ["y"], name="add0")], [X23], [Y]),
        LOC + r"node 'r[01]' \(Relu, #[01]\): .*cycle")
    add("graph_self_loop", mk([helper.make_node("Add", ["x", "y"], ["y"], name="add0")], [X23], [Y]),
        LOC + r"node 'add0' \(Add, #0\): .*cycle")
    add("graph_undefined_input", mk([helper.make_node("Add", ["x", "ghost"], ["y"], name="add0")], [X23], [Y]),
        LOC + r"node 'add0' \(Add, #0\): input 'ghost' is not produced by any node")
    add("graph_duplicate_output", mk([helper.make_node("Relu", ["x"], ["y"], name="r0"), helper.make_node("Neg", ["x"], ["y"], name="n1")], [X23], [Y]),
        LOC + r"node 'n1' \(Neg, #1\): output 'y' is already produced")
    add("graph_output_twice_in_node", mk([helper.make_node("Split", ["x"], ["y", "y"], name="split0", axis=1, num_outputs=2)], [tv("x", [2, 4])], [Y], opset=18),
        LOC + r"node 'split0' \(Split, #0\): output 'y' is already produced")
    add("graph_output_not_computed", mk([helper.make_node("Relu", ["x"], ["r"], name="r0")], [X23], [Y]),
        LOC + "graph output 'y' is not produced by any node")
    add("graph_output_listed_twice", mk([helper.make_node("Relu", ["x"], ["y"], name="r0")], [X23], [Y, Y]),
        LOC + "graph output 'y' is listed twice")
    add("graph_no_outputs", mk([helper.make_node("Relu", ["x"], ["y"], name="r0")], [X23], []),
        LOC + "the graph has no outputs")
    add("graph_input_twice", mk([helper.make_node("Relu", ["x"], ["y"], name="r0")], [X23, X23], [Y]),
        LOC + "graph input 'x' is listed twice")
    add("graph_initializer_twice", mk([helper.make_node("Add", ["x", "c"], ["y"], name="a0")], [X23], [Y],
                                      [arr("c", np.ones(3, np.float32)), arr("c", np.ones(3, np.float32))]),
        LOC + "initializer 'c' is listed twice")
    add("graph_initializer_is_node_output", mk([helper.make_node("Relu", ["x"], ["c"], name="r0"), helper.make_node("Add", ["x", "c"], ["y"], name="a0")],
                                               [X23], [Y], [arr("c", np.ones((2, 3), np.float32))]),
        LOC + r"node 'r0' \(Relu, #0\): output 'c' is already produced")
    add("graph_input_is_node_output", mk([helper.make_node("Relu", ["x"], ["x"], name="r0"), helper.make_node("Relu", ["x"], ["y"], name="r1")], [X23], [Y]),
        LOC + r"node 'r0' \(Relu, #0\): output 'x' is already produced")
    add("graph_empty_op_type", mk([helper.make_node("", ["x"], ["y"], name="nop")], [X23], [Y]),
        LOC + r"node 'nop' \(, #0\): node has no op_type|node 'nop'.*no op_type")
    add("graph_too_many_inputs", mk([helper.make_node("Relu", ["x", "x"], ["y"], name="r0")], [X23], [Y]),
        LOC + r"node 'r0' \(Relu, #0\): has 2 inputs; Relu takes 1\.\.1")
    add("graph_input_sequence", mk([helper.make_node("Identity", ["x"], ["y"], name="i0")],
                                   [helper.make_tensor_sequence_value_info("x", F, [2])], [Y]),
        LOC + "graph input 'x' is not a tensor")
    add("graph_input_no_type", mk([helper.make_node("Relu", ["x"], ["y"], name="r0")], [helper.make_empty_tensor_value_info("x")], [Y]),
        LOC + "graph input 'x' has no type")

    # ---- operators and attributes ------------------------------------------------------------
    X4 = tv("x", [1, 4, 5, 5])
    wc = arr("w", np.ones((4, 4, 3, 3), np.float32))

    def conv(name, regex, w=wc, x=X4, **attrs):
        add(name, mk([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", **attrs)], [x], [Y], [w]),
            LOC + r"node 'conv0' \(Conv, #0\): " + regex)

    def attr_case(name, node, inputs, inits, regex, opset=17):
        add(name, mk([node], inputs, [Y], inits, opset=opset), LOC + r"node '%s' \(%s, #0\): %s" % (node.name, node.op_type, regex))

    conv("conv_weight_rank_gt_input", ".*(rank|dims)", w=arr("w", np.ones((4, 4, 3, 3, 3), np.float32)))
    conv("conv_weight_rank_lt_input", ".*(rank|dims)", w=arr("w", np.ones((4, 4, 3), np.float32)))
    conv("conv_group_not_dividing", ".*group", group=3)
    conv("conv_group_zero", ".*group", group=0)
    conv("conv_group_negative", ".*group", group=-2)
    conv("conv_channels_mismatch", ".*(channel|C_in|group)", w=arr("w", np.ones((4, 3, 3, 3), np.float32)))
    conv("conv_stride_zero", ".*stride", strides=[0, 1])
    conv("conv_dilation_zero", ".*dilation", dilations=[1, 0])
    conv("conv_kernel_zero", ".*(kernel|dim|size)", w=arr("w", np.ones((4, 4, 0, 3), np.float32)))
    conv("conv_kernel_bigger_than_input", ".*(kernel|output|size|dim)", w=arr("w", np.ones((4, 4, 7, 7), np.float32)))
    conv("conv_pads_negative", ".*pad", pads=[-1, 0, 0, 0])
    conv("conv_pads_wrong_count", ".*pads", pads=[1, 1, 1])
    conv("conv_kernel_shape_mismatch", ".*kernel_shape", kernel_shape=[5, 5])
    conv("conv_auto_pad_bad", ".*auto_pad", auto_pad="SOMETIMES")
    conv("conv_group_float", ".*group.*(type|INT|FLOAT)", group=1.5)
    conv("conv_strides_string", ".*strides.*(type|INTS|STRING)", strides="11")
    wt = arr("w", np.ones((4, 2, 3, 3), np.float32))
    for nm, at in (("ge_stride", dict(strides=[2, 2], output_padding=[2, 0])),
                   ("ge_stride_and_dilation", dict(strides=[2, 1], dilations=[1, 2], output_padding=[0, 2])),
                   ("negative", dict(strides=[2, 2], output_padding=[0, -1]))):
        attr_case("convtranspose_output_padding_" + nm,
                  helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="convt0", **at), [X4], [wt],
                  r".*output_padding\[[01]\]=-?[0-9]+ must be >= 0 and smaller than the stride")
    attr_case("pool_stride_zero", helper.make_node("MaxPool", ["x"], ["y"], name="pool0", kernel_shape=[2, 2], strides=[0, 0]), [X4], [], ".*stride")
    attr_case("pool_kernel_zero", helper.make_node("AveragePool", ["x"], ["y"], name="pool0", kernel_shape=[0, 2]), [X4], [], ".*kernel")
    attr_case("pool_no_kernel", helper.make_node("MaxPool", ["x"], ["y"], name="pool0"), [X4], [], ".*kernel_shape")
    attr_case("transpose_perm_int", helper.make_node("Transpose", ["x"], ["y"], name="tr0", perm=1), [X23], [], ".*perm.*(type|INTS|INT)")
    attr_case("transpose_perm_dup", helper.make_node("Transpose", ["x"], ["y"], name="tr0", perm=[0, 0]), [X23], [], ".*perm")
    attr_case("transpose_perm_range", helper.make_node("Transpose", ["x"], ["y"], name="tr0", perm=[0, 5]), [X23], [], ".*perm")
    attr_case("gather_const_oob", helper.make_node("Gather", ["d", "i"], ["y"], name="g0", axis=0), [],
              [arr("d", np.arange(6, dtype=np.float32)), arr("i", np.array([1, 6], np.int64))], ".*(out of range|index|indices).*6")
    attr_case("gather_const_neg_oob", helper.make_node("Gather", ["d", "i"], ["y"], name="g0", axis=0), [],
              [arr("d", np.arange(6, dtype=np.float32)), arr("i", np.array([-7], np.int64))], ".*(out of range|index|indices).*-7")
    attr_case("gather_input_const_oob", helper.make_node("Gather", ["x", "i"], ["y"], name="g0", axis=1), [X23],
              [arr("i", np.array([0, 3], np.int64))], ".*(out of range|index|indices).*3")
    attr_case("gather_axis_range", helper.make_node("Gather", ["x", "i"], ["y"], name="g0", axis=2), [X23],
              [arr("i", np.array([0], np.int64))], ".*axis")
    attr_case("gatherelements_const_oob", helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge0", axis=1), [X23],
              [arr("i", np.array([[0, 1, 9], [0, 0, 0]], np.int64))], ".*(out of range|index|indices).*9")
    attr_case("reshape_impossible", helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0"), [X23], [arr("s", np.array([4, 4], np.int64))], ".*")
    attr_case("reshape_two_minus_one", helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0"), [X23], [arr("s", np.array([-1, -1], np.int64))], ".*-1")
    attr_case("reshape_minus_two", helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0"), [X23], [arr("s", np.array([-2, 3], np.int64))], ".*-2")
    attr_case("reshape_zero_past_rank", helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0"), [X23], [arr("s", np.array([2, 3, 0], np.int64))], ".*")
    attr_case("reshape_shape_float", helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0"), [X23], [arr("s", np.array([3.0, 2.0], np.float32))], ".*(int|float)")
    attr_case("reshape_rank_9", helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0"), [X23], [arr("s", np.array([1] * 8 + [6], np.int64))], ".*(rank|at most 8)")
    attr_case("concat_axis_range", helper.make_node("Concat", ["x", "x"], ["y"], name="cc0", axis=2), [X23], [], ".*axis")
    attr_case("concat_dims_mismatch", helper.make_node("Concat", ["x", "c"], ["y"], name="cc0", axis=0), [X23], [arr("c", np.ones((2, 4), np.float32))], ".*")
    attr_case("split_sizes_sum", helper.make_node("Split", ["x", "s"], ["y", "z"], name="sp0", axis=1), [X23], [arr("s", np.array([1, 1], np.int64))], ".*")
    attr_case("slice_step_zero", helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="sl0"), [X23],
              [arr("st", np.array([0], np.int64)), arr("en", np.array([2], np.int64)), arr("ax", np.array([1], np.int64)), arr("sp", np.array([0], np.int64))], ".*step")
    attr_case("range_delta_zero", helper.make_node("Range", ["a", "b", "d"], ["y"], name="rg0"), [],
              [arr("a", np.array(0, np.int64)), arr("b", np.array(10, np.int64)), arr("d", np.array(0, np.int64))], ".*(delta|zero|0)")
    attr_case("range_huge", helper.make_node("Range", ["a", "b", "d"], ["y"], name="rg0"), [],
              [arr("a", np.array(0, np.int64)), arr("b", np.array(1 << 62, np.int64)), arr("d", np.array(1, np.int64))], ".*")
    attr_case("constantofshape_negative", helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos0"), [], [arr("s", np.array([2, -1], np.int64))], ".*-1")
    attr_case("constantofshape_overflow", helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos0"), [], [arr("s", np.array([1 << 40, 1 << 40], np.int64))], ".*(overflow|too large)")
    attr_case("expand_mismatch", helper.make_node("Expand", ["x", "s"], ["y"], name="ex0"), [X23], [arr("s", np.array([4, 4], np.int64))], ".*(broadcast|shape|compatible)")
    attr_case("tile_negative", helper.make_node("Tile", ["x", "r"], ["y"], name="tl0"), [X23], [arr("r", np.array([1, -2], np.int64))], ".*repeats")
    attr_case("add_broadcast_mismatch", helper.make_node("Add", ["x", "c"], ["y"], name="add0"), [X23], [arr("c", np.ones(4, np.float32))], ".*broadcast")
    attr_case("matmul_mismatch", helper.make_node("MatMul", ["x", "c"], ["y"], name="mm0"), [X23], [arr("c", np.ones((4, 2), np.float32))], ".*")
    attr_case("softmax_axis_range", helper.make_node("Softmax", ["x"], ["y"], name="sm0", axis=5), [X23], [], ".*axis")
    attr_case("cast_to_string", helper.make_node("Cast", ["x"], ["y"], name="cast0", to=TP.STRING), [X23], [], ".*(string|to)")
    attr_case("cast_to_unknown", helper.make_node("Cast", ["x"], ["y"], name="cast0", to=99), [X23], [], ".*(99|to)")
    attr_case("reduce_axes_range", helper.make_node("ReduceSum", ["x", "a"], ["y"], name="rd0"), [X23], [arr("a", np.array([3], np.int64))], ".*ax")
    attr_case("where_dtype_mismatch", helper.make_node("Where", ["c", "x", "i"], ["y"], name="wh0"), [X23],
              [arr("c", np.array([True, False, True])), arr("i", np.ones(3, np.int64))], ".*(dtype|type|float|int64)")
    attr_case("layernorm_axis_range", helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln0", axis=4), [X23], [arr("s", np.ones(3, np.float32))], ".*axis")
    attr_case("groupnorm_groups_zero", helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="gn0", num_groups=0), [X4],
              [arr("s", np.ones(4, np.float32)), arr("b", np.zeros(4, np.float32))], ".*num_groups", opset=21)
    attr_case("depthtospace_blocksize_zero", helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s0", blocksize=0), [X4], [], ".*blocksize")
    attr_case("resize_huge_scale", helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rz0"), [X4],
              [arr("sc", np.array([1, 1, 1e30, 1e30], np.float32))], ".*(out of range|too large|overflow)")
    attr_case("unknown_op", helper.make_node("NotAnOp", ["x"], ["y"], name="n0"), [X23], [], "unsupported operator 'NotAnOp'")

    # ---- control flow (subgraphs imported as templates, unrolled in passes/expand/control.c) ----
    def graph(nodes, outs, ins=()):
        return helper.make_graph(nodes, "body", list(ins), outs)
    YB = tv("t", [2, 3])
    ok_b = graph([helper.make_node("Identity", ["x"], ["t"], name="keep")], [YB])
    bad_b = graph([helper.make_node("Add", ["x", "zz"], ["t"], name="bad_add")], [YB])
    add("cf_body_reads_undefined", mk([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=bad_b, else_branch=ok_b)],
        [tv("c", [], TP.BOOL), X23], [Y]),
        LOC + r"node 'if0/then_branch/bad_add' \(Add, #0\): input 'zz' is not produced by any node of subgraph 'then_branch'.*")
    add("cf_branch_output_missing", mk([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=ok_b,
        else_branch=graph([], [tv("nothing", [2, 3])]))], [tv("c", [], TP.BOOL), X23], [Y]),
        LOC + r"node 'if0' \(If, #0\): subgraph 'else_branch': output 'nothing' is produced by nothing.*")
    loop_b = graph([helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Identity", ["v"], ["v_out"])],
                   [tv("cond_out", [], TP.BOOL), tv("v_out", [2, 3])],
                   [tv("i", [], TP.INT64), tv("cond", [], TP.BOOL), tv("v", [2, 3])])
    attr_case("cf_loop_huge_trip_count", helper.make_node("Loop", ["M", "", "x"], ["y"], name="loop0", body=loop_b), [X23],
              [arr("M", np.array(1 << 40, np.int64))], "more than 4096 iterations.*")
    attr_case("cf_loop_body_arity", helper.make_node("Loop", ["M", "", "x", "x"], ["y", "y2"], name="loop0", body=loop_b), [X23],
              [arr("M", np.array(2, np.int64))], "body takes 3 inputs.*")
    attr_case("cf_scan_num_scan_inputs", helper.make_node("Scan", ["x"], ["y"], name="scan0", body=ok_b, num_scan_inputs=4),
              [X23], [], "num_scan_inputs=4.*", opset=16)
    inner = helper.make_node("Loop", ["M", "", "v"], ["v_out"], name="inner", body=loop_b)
    outer_b = graph([helper.make_node("Identity", ["cond"], ["cond_out"]), inner],
                    [tv("cond_out", [], TP.BOOL), tv("v_out", [2, 3])],
                    [tv("i", [], TP.INT64), tv("cond", [], TP.BOOL), tv("v", [2, 3])])
    add("cf_nested_loops_blowup", mk([helper.make_node("Loop", ["M", "", "x"], ["y"], name="outer", body=outer_b)],
        [X23], [Y], [arr("M", np.array(4096, np.int64))]),
        LOC + r"node 'outer[^']*' \(Loop, #0\): unrolling would grow the graph past 262144 nodes.*")
    attr_case("cf_graph_attr_on_relu", helper.make_node("Relu", ["x"], ["y"], name="relu0", body=ok_b), [X23], [],
              "attribute 'body' holds a subgraph.*")

    # ---- generated-executable inputs (tests/hostile/runtime) ----------------------------------
    rt = os.path.join(HERE, "runtime")
    os.makedirs(rt, exist_ok=True)
    for op, c, fn in (("Add", [0.5, -1.0, 2.0], "model_a.onnx"), ("Mul", [1.0, 2.0, 3.0], "model_b.onnx")):
        m = mk([helper.make_node(op, ["x", "c"], ["t"], name=op.lower() + "0"),
                helper.make_node("Relu", ["t"], ["y"], name="relu0")], [X23], [tv("y", [2, 3])],
               [arr("c", np.array(c, np.float32))])
        m.producer_name = "make_corpus.py"
        with open(os.path.join(rt, fn), "wb") as f:
            f.write(m.SerializeToString())
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    pb = numpy_helper.from_array(xs, "x").SerializeToString()
    np.save(os.path.join(rt, "x_2x3.npy"), xs)
    with open(os.path.join(rt, "x_2x3.npy"), "rb") as f:
        npy = f.read()
    for fn, data in (("x_2x3.pb", pb), ("x_2x3_truncated.pb", pb[:-7]), ("x_2x3_truncated.npy", npy[:-5])):
        with open(os.path.join(rt, fn), "wb") as f:
            f.write(data)

    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# NAME<TAB>ERE the one error line must match<TAB>extra args — written by make_corpus.py\n")
        for name, regex, args in cases:
            f.write("%s\t%s\t%s\n" % (name, regex, args))
    print("%d cases" % len(cases))


if __name__ == "__main__":
    main()
