#!/usr/bin/env python3
"""make_extra.py — generates tests/ref/extra/<test>/{model.onnx,test_data_set_0/*.pb}: node tests
in the ONNX backend layout for op forms the Debian backend data (an older ONNX) lacks.

Run once by a developer (needs onnx + onnxruntime); the outputs are committed, so no Python runs at
test time. Expected outputs come from onnx.reference.ReferenceEvaluator (onnxruntime where use_ort=True:
opset-11 Softmax family, which the reference evaluates with the opset-13 meaning); every case is
also run through onnxruntime and the script refuses to write a case where the two disagree beyond
rtol 1e-4 / atol 1e-5.
"""
import os, shutil, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP
from onnx.reference import ReferenceEvaluator

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extra")
rng = np.random.default_rng(1234)

def make(name, op, inputs, attrs=None, opset=21, n_out=1, const_inputs=(), out_names=None, ort_skip=None, use_ort=False):
    """inputs: list of (name, array) — None entries become absent optional inputs.
    use_ort: take onnxruntime's outputs as expected (the onnx reference implements only the
    newest semantics of some ops, e.g. Softmax before opset 13 coerces to 2-D)."""
    attrs = attrs or {}
    graph_inputs, inits, names = [], [], []
    for k, (nm, arr) in enumerate(inputs):
        if arr is None:
            names.append("")
            continue
        names.append(nm)
        if k in const_inputs:
            inits.append(numpy_helper.from_array(arr, nm))
        else:
            graph_inputs.append(helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
    outs = out_names or [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, **attrs)
    feeds = {nm: arr for k, (nm, arr) in enumerate(inputs) if arr is not None and k not in const_inputs}
    # outputs declared without shape; types filled from the reference results
    tmp = helper.make_graph([node], name, graph_inputs, [helper.make_tensor_value_info(o, TP.FLOAT, None) for o in outs], inits)
    model = helper.make_model(tmp, opset_imports=[helper.make_opsetid("", opset)])
    if use_ort:
        import onnxruntime as ort
        res = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    else:
        res = ReferenceEvaluator(model).run(None, feeds)
    g = helper.make_graph([node], name, graph_inputs,
                          [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(r.dtype), r.shape) for o, r in zip(outs, res)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    if ort_skip is None:
        import onnxruntime as ort
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        ores = sess.run(None, feeds)
        if use_ort:
            res = ores
        for a, b in zip(res, ores):
            if a.dtype.kind == "f":
                if not np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True):
                    sys.exit(f"{name}: onnx reference and onnxruntime disagree:\n{a}\n{b}")
            elif not np.array_equal(a, b):
                sys.exit(f"{name}: onnx reference and onnxruntime disagree:\n{a}\n{b}")
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    i = 0
    for k, (nm, arr) in enumerate(inputs):
        if arr is None or k in const_inputs:
            continue
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, nm).SerializeToString())
        i += 1
    for j, (o, r) in enumerate(zip(outs, res)):
        with open(os.path.join(d, "test_data_set_0", f"output_{j}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r, o).SerializeToString())

f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
i64 = lambda *v: np.array(v, dtype=np.int64)

x = f32(2, 6, 3, 4)
make("test_x_groupnorm21", "GroupNormalization", [("x", x), ("s", f32(6)), ("b", f32(6))], {"num_groups": 3, "epsilon": 1e-3}, opset=21)
make("test_x_gelu_none", "Gelu", [("x", f32(3, 7) * 3)], opset=20)
make("test_x_gelu_tanh", "Gelu", [("x", f32(3, 7) * 3)], {"approximate": "tanh"}, opset=20)
make("test_x_layernorm_3out", "LayerNormalization", [("x", f32(2, 3, 5)), ("s", f32(3, 5)), ("b", f32(5))], {"axis": -2}, opset=17, n_out=3)
make("test_x_softmax11_axis1", "Softmax", [("x", f32(2, 3, 4))], {"axis": 1}, opset=11, use_ort=True)
make("test_x_logsoftmax11_default", "LogSoftmax", [("x", f32(2, 3, 4))], {}, opset=11, use_ort=True)
make("test_x_hardmax11_axis0", "Hardmax", [("x", f32(2, 3, 4))], {"axis": 0}, opset=11, use_ort=True)
make("test_x_softmax13_axis1", "Softmax", [("x", f32(2, 3, 4))], {"axis": 1}, opset=13)
r = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
make("test_x_resize_nearest_asym_floor_3x", "Resize", [("x", r), ("roi", None), ("scales", np.array([1, 1, 3, 3], np.float32))],
     {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, opset=19, const_inputs=(2,))
img = f32(1, 2, 5, 7)
make("test_x_resize_linear_axes_not_larger", "Resize", [("x", img), ("roi", None), ("scales", None), ("sizes", i64(4, 4))],
     {"mode": "linear", "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}, opset=19, const_inputs=(3,))
make("test_x_resize_cubic_not_smaller_sym", "Resize", [("x", img), ("roi", None), ("scales", None), ("sizes", i64(4, 4))],
     {"mode": "cubic", "axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller", "coordinate_transformation_mode": "half_pixel_symmetric"},
     opset=19, const_inputs=(3,))
make("test_x_resize_linear_pytorch_down", "Resize", [("x", img), ("roi", None), ("scales", np.array([1, 1, 0.6, 0.45], np.float32))],
     {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, opset=19, const_inputs=(2,))
make("test_x_resize_nearest_ceil_halfpixel_up", "Resize", [("x", img), ("roi", None), ("scales", np.array([1, 1, 1.7, 2.3], np.float32))],
     {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, opset=19, const_inputs=(2,))
make("test_x_pad_wrap_axes", "Pad", [("x", f32(2, 3, 4)), ("pads", i64(2, 1, 1, 3)), ("v", None), ("axes", i64(-1, 1))], {"mode": "wrap"}, opset=19, const_inputs=(1, 3))
make("test_x_pad_reflect_neg", "Pad", [("x", f32(3, 5)), ("pads", i64(2, -1, 1, 3))], {"mode": "reflect"}, opset=19, const_inputs=(1,), use_ort=True)
make("test_x_pad_edge", "Pad", [("x", f32(3, 5)), ("pads", i64(0, 2, 2, 1))], {"mode": "edge"}, opset=19, const_inputs=(1,))
make("test_x_split18_uneven", "Split", [("x", f32(2, 7))], {"axis": 1, "num_outputs": 3}, opset=18, n_out=3)
make("test_x_slice_neg_steps", "Slice", [("x", f32(5, 6)), ("s", i64(-1, 20)), ("e", i64(-9223372036854775808, -7)), ("a", i64(1, 0)), ("st", i64(-2, -2))], {}, opset=13, const_inputs=(1, 2, 3, 4))
make("test_x_cumsum_excl_rev", "CumSum", [("x", f32(3, 4)), ("axis", np.array(1, np.int32))], {"exclusive": 1, "reverse": 1}, opset=14, const_inputs=(1,))
make("test_x_trilu_lower_k", "Trilu", [("x", f32(2, 4, 5)), ("k", np.array(-1, np.int64))], {"upper": 0}, opset=14, const_inputs=(1,))
make("test_x_depth_to_space_crd", "DepthToSpace", [("x", f32(1, 8, 2, 3))], {"blocksize": 2, "mode": "CRD"}, opset=13)
make("test_x_convtranspose_outshape", "ConvTranspose", [("x", f32(1, 2, 3, 3)), ("w", f32(2, 3, 3, 3))], {"strides": [2, 2], "output_shape": [8, 7]}, opset=11, use_ort=True)
make("test_x_convtranspose_group_pads", "ConvTranspose", [("x", f32(1, 4, 3, 4)), ("w", f32(4, 1, 3, 2)), ("b", f32(2))],
     {"strides": [2, 1], "group": 2, "pads": [1, 0, 0, 1], "output_padding": [1, 0], "dilations": [1, 2]}, opset=11, use_ort=True)
make("test_x_conv_same_lower_dil_group", "Conv", [("x", f32(1, 4, 7, 6)), ("w", f32(6, 2, 3, 2)), ("b", f32(6))],
     {"auto_pad": "SAME_LOWER", "strides": [2, 1], "group": 2}, opset=11)
make("test_x_avgpool_ceil_dil_pad", "AveragePool", [("x", f32(1, 2, 7, 6))],
     {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1, "dilations": [1, 2], "count_include_pad": 1}, opset=19)
make("test_x_maxpool_indices", "MaxPool", [("x", f32(2, 2, 5, 5))], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, opset=12, n_out=2)
make("test_x_reducemax_nan_keep0", "ReduceMax", [("x", np.array([[1, np.nan, 3], [4, 5, 6]], np.float32)), ("axes", i64(1))], {"keepdims": 0}, opset=18, const_inputs=(1,), ort_skip="onnxruntime ReduceMax ignores NaN; the spec (and onnx2cl) propagate it")
make("test_x_reducemean_noop", "ReduceMean", [("x", f32(2, 3)), ("axes", np.zeros(0, np.int64))], {"noop_with_empty_axes": 1}, opset=18, const_inputs=(1,))
make("test_x_cast_f16_edges", "Cast", [("x", np.array([65504, 65519, 65520, 65536, 1e-8, 3e-8, 6e-8, -0.0, np.inf, 1.00048828125, 1.00146484375], np.float32))], {"to": TP.FLOAT16}, opset=21)
make("test_x_mod_int_sign", "Mod", [("a", np.array([-7, 7, -7, 7, 5], np.int32)), ("b", np.array([2, -2, -2, 2, 3], np.int32))], {}, opset=13)
make("test_x_div_int_trunc", "Div", [("a", np.array([-7, 7, -7, 7], np.int64)), ("b", np.array([2, -2, -2, 2], np.int64))], {}, opset=14)
make("test_x_gather_neg_idx_axis1", "Gather", [("x", f32(3, 4, 2)), ("i", np.array([[-1, 0], [2, -4]], np.int64))], {"axis": 1}, opset=13)
make("test_x_gathernd_batch", "GatherND", [("x", f32(2, 3, 4)), ("i", np.array([[[1], [0]], [[2], [1]]], np.int64))], {"batch_dims": 1}, opset=13)
make("test_x_expand_rank_up", "Expand", [("x", f32(3, 1)), ("s", i64(2, 1, 6))], {}, opset=13, const_inputs=(1,))
make("test_x_range_float_neg", "Range", [("a", np.array(5, np.float32)), ("b", np.array(-2.2, np.float32)), ("c", np.array(-1.5, np.float32))], {}, opset=11, const_inputs=(0, 1, 2))
make("test_x_clip_int_bounds", "Clip", [("x", np.array([-5, 0, 3, 9], np.int32)), ("lo", np.array(-1, np.int32)), ("hi", np.array(4, np.int32))], {}, opset=13, const_inputs=(1, 2))
print("ok")
