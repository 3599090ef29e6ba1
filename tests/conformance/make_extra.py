#!/usr/bin/env python3
"""make_extra.py — writes tests/conformance/extra/<test>/: the known troublemakers as ONNX backend
test folders (model.onnx, test_data_set_0/{input,output}_K.pb), for the ones the backend data
lacks or covers only partly.

Run by a developer (python3 with numpy, onnx, onnxruntime); the generated folders are committed,
so nothing runs Python at test time. Expected outputs: onnxruntime, cross-checked against
onnx.reference.ReferenceEvaluator (or against a numpy formula given with the case, where the
reference implements only the newest semantics, e.g. Softmax-11 or GroupNormalization-18). The
script refuses to write a case where the two disagree (atol 1e-6 + rtol 1e-5; NaN must match).
Optional files: tolerance.txt ("ATOL RTOL") overrides the runner's float tolerance (0 0 = bit
exact); expected_error.txt holds a text the compile error must contain (the model must be
rejected by onnx2cl with exit status 1; no data set then).
"""
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as TP
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extra")
I64_MAX = np.iinfo(np.int64).max
I64_MIN = np.iinfo(np.int64).min
written = []


def tdt(a):
    return helper.np_dtype_to_tensor_dtype(np.asarray(a).dtype)


def build(name, nodes, inputs, outputs, inits=(), opset=13):
    """inputs: [(name, array)]; outputs: [(name, dtype)]; inits: [(name, array)]."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, tdt(a), np.asarray(a).shape) for n, a in inputs],
        [helper.make_tensor_value_info(n, dt, None) for n, dt in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        na, nb = np.isnan(a), np.isnan(b)
        if (na != nb).any():
            return False
        a, b = a[~na].astype(np.float64), b[~nb].astype(np.float64)
        fa, fb = np.isfinite(a), np.isfinite(b)
        if (fa != fb).any() or (a[~fa] != b[~fb]).any():
            return False
        a, b = a[fa], b[fb]
        return bool(np.all(np.abs(a - b) <= 1e-6 + 1e-5 * np.abs(b)))
    return bool((a == b).all())


def write(name, model, inputs, expected, tolerance=None):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())
    for k, (o, a) in enumerate(zip(model.graph.output, expected)):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(a), o.name).SerializeToString())
    if tolerance is not None:
        with open(os.path.join(d, "tolerance.txt"), "w") as f:
            f.write("%g %g\n" % tolerance)
    written.append(name)


def case(name, nodes, inputs, outputs, inits=(), opset=13, numpy_ref=None, tolerance=None, trust_ref=False):
    """numpy_ref: expected outputs computed by a formula, used instead of onnx.reference.
    trust_ref: onnxruntime is known to deviate from the spec here (e.g. ReduceMax skips NaN where
    the spec says "like numpy", which propagates it): the reference result is written instead."""
    model = build(name, nodes, inputs, outputs, inits, opset)
    feeds = {n: np.asarray(a) for n, a in inputs}
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, feeds)
    other = numpy_ref if numpy_ref is not None else ReferenceEvaluator(model).run(None, feeds)
    if trust_ref:
        if all(same(a, b) for a, b in zip(got, other)):
            sys.exit(f"{name}: trust_ref set but onnxruntime agrees: drop trust_ref")
        print(f"{name}: onnxruntime deviates; the onnx reference (numpy semantics) is written", file=sys.stderr)
        got = other
    for k, (a, b) in enumerate(zip(got, other)):
        if not same(a, b):
            sys.exit(f"{name}: output {k}: onnxruntime and the cross-check disagree:\n{a}\n{b}")
    write(name, model, inputs, got, tolerance)


def error_case(name, nodes, inputs, outputs, inits=(), opset=13, message=()):
    """A model onnx2cl must reject at compile time with a message containing every text in
    `message` (op, attribute, node name)."""
    model = build(name, nodes, inputs, outputs, inits, opset)
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "expected_error.txt"), "w") as f:
        f.write("".join(m + "\n" for m in message))
    written.append(name)


def ramp(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def nearest_ref(x, scales, ctm, mode):
    """numpy nearest resize over the last two axes (ONNX Resize-13 formulas, float64)."""
    idx = []
    for ax in (2, 3):
        n_in, sc = x.shape[ax], float(scales[ax])
        n_out = int(np.floor(n_in * sc))
        ii = []
        for i in range(n_out):
            if ctm == "half_pixel":
                c = (i + 0.5) / sc - 0.5
            elif ctm == "pytorch_half_pixel":
                c = (i + 0.5) / sc - 0.5 if n_out > 1 else 0.0
            elif ctm == "align_corners":
                # length_resized = n_in * scale (a float), as the ONNX reference evaluator and the
                # backend tests (test_resize_downsample_scales_linear_align_corners) use it;
                # onnxruntime uses the integer output length instead (they differ at scale 0.6)
                c = 0.0 if n_in * sc == 1 else i * (n_in - 1) / (n_in * sc - 1)
            elif ctm == "asymmetric":
                c = i / sc
            else:  # tf_half_pixel_for_nn
                c = (i + 0.5) / sc
            f = np.floor(c)
            if mode == "floor":
                r = f
            elif mode == "ceil":
                r = np.ceil(c)
            elif mode == "round_prefer_floor":
                r = f if c - f <= 0.5 else f + 1
            else:
                r = f + 1 if c - f >= 0.5 else f
            ii.append(int(min(max(r, 0), n_in - 1)))
        idx.append(ii)
    return x[:, :, idx[0], :][:, :, :, idx[1]]


def resize_cases():
    # Nearest resize: every nearest_mode x coordinate transform on the sizes that trip
    # floating-point index arithmetic (bit-exact: nearest only copies input values).
    grids = [("s3_4x4", ramp(1, 1, 4, 4), [1, 1, 3, 3]),
             ("s2_7x7", ramp(1, 1, 7, 7), [1, 1, 2, 2]),
             ("s1p5_8x8", ramp(1, 1, 8, 8), [1, 1, 1.5, 1.5]),
             ("s2x3_4x4", ramp(1, 1, 4, 4), [1, 1, 2, 3]),
             ("s0p6_7x7", ramp(1, 1, 7, 7), [1, 1, 0.6, 0.6])]
    modes = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
    ctms = ["asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"]
    for gname, x, scales in grids:
        for mode in modes:
            for ctm in ctms:
                name = f"resize_nearest_{ctm}_{mode}_{gname}"
                node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="nearest",
                                        coordinate_transformation_mode=ctm, nearest_mode=mode)
                # tf_half_pixel_for_nn exists up to opset 12 only
                case(name, [node], [("x", x)], [("y", TP.FLOAT)],
                     inits=[("roi", np.array([], np.float32)), ("scales", np.array(scales, np.float32))],
                     opset=11 if ctm == "tf_half_pixel_for_nn" else 13, tolerance=(0, 0),
                     numpy_ref=[nearest_ref(x, scales, ctm, mode)],
                     trust_ref=ctm == "align_corners" and gname == "s0p6_7x7" and mode == "floor")
    # sizes given, roi and scales empty: opset 11 (empty tensors) and 13 (absent and empty)
    x = ramp(1, 1, 4, 4)
    sizes = np.array([1, 1, 7, 5], np.int64)
    empty = np.array([], np.float32)
    n11 = helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], mode="nearest")
    case("resize_sizes_empty_roi_scales_opset11", [n11], [("x", x)], [("y", TP.FLOAT)],
         inits=[("roi", empty), ("scales", empty), ("sizes", sizes)], opset=11, tolerance=(0, 0))
    n13 = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest")
    case("resize_sizes_absent_roi_scales_opset13", [n13], [("x", x)], [("y", TP.FLOAT)],
         inits=[("sizes", sizes)], opset=13, tolerance=(0, 0))
    case("resize_sizes_empty_roi_scales_opset13", [n11], [("x", x)], [("y", TP.FLOAT)],
         inits=[("roi", empty), ("scales", empty), ("sizes", sizes)], opset=13, tolerance=(0, 0))
    nl = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")
    case("resize_linear_sizes_opset13", [nl], [("x", x)], [("y", TP.FLOAT)],
         inits=[("sizes", sizes)], opset=13)
    # both scales and sizes given: invalid (the spec allows exactly one)
    nb = helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], mode="nearest", name="up0")
    error_case("resize_scales_and_sizes_rejected", [nb], [("x", x)], [("y", TP.FLOAT)],
               inits=[("roi", empty), ("scales", np.array([1, 1, 2, 2], np.float32)), ("sizes", sizes)],
               opset=13, message=["Resize", "up0", "scales", "sizes", "opset 13"])


def resize_antialias_cases():
    """Resize-18 antialias=1 (linear, cubic) downscaling: odd sizes, scales and sizes, float32
    and float16, non-integer factors, one axis down and one up, exclude_outside, several
    coordinate transforms, one axis given by `axes`."""
    rng = np.random.default_rng(18)
    x = rng.standard_normal((1, 2, 13, 11)).astype(np.float32)
    for mode in ("linear", "cubic"):
        for dt in (np.float32, np.float16):
            xs = x.astype(dt)
            tag = f"{mode}_{np.dtype(dt).name}"
            n = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1)
            case(f"resize_antialias_{tag}_scales_0p6x0p35", [n], [("x", xs)], [("y", tdt(xs))],
                 inits=[("scales", np.array([1, 1, 0.6, 0.35], np.float32))], opset=18)
            n = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode, antialias=1)
            case(f"resize_antialias_{tag}_sizes_5x3", [n], [("x", xs)], [("y", tdt(xs))],
                 inits=[("sizes", np.array([1, 2, 5, 3], np.int64))], opset=18)
        n = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1,
                             exclude_outside=1, coordinate_transformation_mode="pytorch_half_pixel")
        case(f"resize_antialias_{mode}_excl_pytorch_down_up", [n], [("x", x)], [("y", TP.FLOAT)],
             inits=[("scales", np.array([1, 1, 0.45, 1.7], np.float32))], opset=18)
        n = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1,
                             coordinate_transformation_mode="align_corners", axes=[2])
        # onnxruntime's antialias filter differs here (align_corners): the onnx reference is written
        case(f"resize_antialias_{mode}_align_corners_axes2", [n], [("x", x)], [("y", TP.FLOAT)],
             inits=[("scales", np.array([0.3], np.float32))], opset=18, trust_ref=True)
        # constant input: folded at compile time by the reference implementation (ref_resize.c)
        n1 = helper.make_node("Resize", ["c", "", "scales"], ["r"], mode=mode, antialias=1)
        n2 = helper.make_node("Add", ["x", "r"], ["y"])
        case(f"resize_antialias_{mode}_const_input", [n1, n2], [("x", ramp(1, 2, 3, 2))], [("y", TP.FLOAT)],
             inits=[("c", x), ("scales", np.array([1, 1, 0.3, 0.27], np.float32))], opset=18)
        n = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1,
                             coordinate_transformation_mode="asymmetric")
        case(f"resize_antialias_{mode}_asymmetric_0p5", [n], [("x", x)], [("y", TP.FLOAT)],
             inits=[("scales", np.array([1, 1, 0.5, 0.5], np.float32))], opset=18)


def softmax_cases():
    x = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.0) / 3.0
    for op in ["Softmax", "LogSoftmax", "Hardmax"]:
        n = helper.make_node(op, ["x"], ["y"], axis=1)
        # opset 11: coerce to 2-D [2, 12] at axis 1, normalize over the 12
        flat = x.reshape(2, 12).astype(np.float64)
        if op == "Softmax":
            e = np.exp(flat - flat.max(1, keepdims=True))
            ref11 = (e / e.sum(1, keepdims=True)).astype(np.float32).reshape(2, 3, 4)
        elif op == "LogSoftmax":
            s = flat - flat.max(1, keepdims=True)
            ref11 = (s - np.log(np.exp(s).sum(1, keepdims=True))).astype(np.float32).reshape(2, 3, 4)
        else:
            ref11 = np.zeros((2, 12), np.float32)
            ref11[np.arange(2), flat.argmax(1)] = 1
            ref11 = ref11.reshape(2, 3, 4)
        lname = op.lower()
        case(f"{lname}_axis1_3d_opset11", [n], [("x", x)], [("y", TP.FLOAT)], opset=11, numpy_ref=[ref11])
        case(f"{lname}_axis1_3d_opset13", [n], [("x", x)], [("y", TP.FLOAT)], opset=13)


def slice_cases():
    x = ramp(4, 5)
    def sl(name, starts, ends, axes, steps):
        n = helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])
        case(name, [n], [("x", x)], [("y", TP.FLOAT)],
             inits=[("starts", np.array(starts, np.int64)), ("ends", np.array(ends, np.int64)),
                    ("axes", np.array(axes, np.int64)), ("steps", np.array(steps, np.int64))])
    sl("slice_neg_step_int64_min_end", [-1], [I64_MIN], [1], [-1])
    sl("slice_neg_step2_int64_min_end", [I64_MAX], [I64_MIN], [0], [-2])
    sl("slice_neg_step_int64_max_start", [I64_MAX, 3], [-10, I64_MIN], [0, 1], [-1, -2])
    sl("slice_pos_step_int64_max_end", [1, -3], [I64_MAX, I64_MAX], [0, 1], [2, 1])
    sl("slice_neg_step_clamped_start", [100], [0], [1], [-1])


def shape_cases():
    n = helper.make_node("Expand", ["x", "shape"], ["y"])
    case("expand_3x1_to_2x1x6", [n], [("x", ramp(3, 1))], [("y", TP.FLOAT)],
         inits=[("shape", np.array([2, 1, 6], np.int64))])
    x = ramp(2, 3, 4)
    n = helper.make_node("Reshape", ["x", "shape"], ["y"])
    case("reshape_zero_and_minus1", [n], [("x", x)], [("y", TP.FLOAT)],
         inits=[("shape", np.array([0, -1], np.int64))])
    case("reshape_zero_middle_minus1", [n], [("x", x)], [("y", TP.FLOAT)],
         inits=[("shape", np.array([-1, 0, 2], np.int64))])
    n = helper.make_node("Reshape", ["x", "shape"], ["y"], allowzero=1)
    case("reshape_allowzero_empty", [n], [("x", np.zeros((0, 3, 4), np.float32))], [("y", TP.FLOAT)],
         inits=[("shape", np.array([3, 0, 4], np.int64))], opset=14)
    case("reshape_allowzero_nonzero_dims", [n], [("x", x)], [("y", TP.FLOAT)],
         inits=[("shape", np.array([4, 3, 2], np.int64))], opset=14)


def cast_cases():
    x = np.array([65504, 65520, 65536, 1e-8, np.nan, -65520, 6e-8, 2.9802322e-08, -0.0, np.inf],
                 np.float32)
    n = helper.make_node("Cast", ["x"], ["y"], to=TP.FLOAT16)
    case("cast_f32_to_f16_edges", [n], [("x", x)], [("y", TP.FLOAT16)], tolerance=(0, 0))
    n = helper.make_node("Cast", ["x"], ["y"], to=TP.FLOAT)
    h = np.array([65504, -65504, 6e-8, np.nan, np.inf, 1.0009765625], np.float16)
    case("cast_f16_to_f32_edges", [n], [("x", h)], [("y", TP.FLOAT)], tolerance=(0, 0))


def cast_rewrite_cases():
    """remove_identity's Cast rewrites: same-type Casts are forwarded, Concat of Casts from one
    type becomes one Cast of the Concat (float64 sources, as the dynamo Flux export has)."""
    r = np.random.default_rng(20261201)
    x = r.standard_normal((2, 5)).astype(np.float32)
    i = r.integers(-9, 9, (2, 5)).astype(np.int64)
    nodes = [helper.make_node("Cast", ["x"], ["xc"], to=TP.FLOAT),
             helper.make_node("Cast", ["xc"], ["xcc"], to=TP.FLOAT),
             helper.make_node("Mul", ["xcc", "xc"], ["y"]),
             helper.make_node("Cast", ["i"], ["ic"], to=TP.INT64),
             helper.make_node("Add", ["ic", "ic"], ["j"])]
    case("cast_same_type_forwarded", nodes, [("x", x), ("i", i)], [("y", TP.FLOAT), ("j", TP.INT64)],
         tolerance=(0, 0))
    a = (r.standard_normal((1, 3, 4)) * 1e3).astype(np.float64)
    b = (r.standard_normal((1, 2, 4)) * 1e-3).astype(np.float64)
    nodes = [helper.make_node("Cast", ["a"], ["ac"], to=TP.FLOAT),
             helper.make_node("Cast", ["b"], ["bc"], to=TP.FLOAT),
             helper.make_node("Concat", ["ac", "bc"], ["c"], axis=1),
             helper.make_node("Mul", ["c", "c"], ["y"])]
    case("concat_of_casts_f64", nodes, [("a", a), ("b", b)], [("y", TP.FLOAT), ("c", TP.FLOAT)],
         tolerance=(0, 0))
    # Cast(Unsqueeze(Gather(x, k)), double) for k = 0, 1, 2 -> one Cast of x (dynamo Flux's
    # position ids); a fourth Gather of x stays float32 (no Cast after it)
    x = (r.standard_normal((6, 3)) * 50).astype(np.float32)
    ax = np.array([1], np.int64)
    nodes = []
    for k in range(3):
        nodes += [helper.make_node("Gather", ["x", f"k{k}"], [f"g{k}"], axis=1),
                  helper.make_node("Unsqueeze", [f"g{k}", "ax"], [f"u{k}"]),
                  helper.make_node("Cast", [f"u{k}"], [f"c{k}"], to=TP.DOUBLE),
                  helper.make_node("Mul", [f"c{k}", "w"], [f"m{k}"])]
    nodes += [helper.make_node("Concat", ["m0", "m1", "m2"], ["s"], axis=1),
              helper.make_node("Cast", ["s"], ["y"], to=TP.FLOAT),
              helper.make_node("Gather", ["x", "k1"], ["z"], axis=1)]
    case("gather_casts_f64", nodes, [("x", x)], [("y", TP.FLOAT), ("s", TP.DOUBLE), ("z", TP.FLOAT)],
         inits=[("k0", np.array(0, np.int64)), ("k1", np.array(1, np.int64)),
                ("k2", np.array(2, np.int64)), ("ax", ax), ("w", np.array([1.0 / 3], np.float64))],
         tolerance=(0, 0))


def nan_cases():
    a = np.array([1.0, np.nan, 3.0, -np.inf, np.nan, 0.5], np.float32)
    b = np.array([np.nan, 2.0, 1.0, 5.0, np.nan, 0.25], np.float32)
    for op in ["Min", "Max"]:
        n = helper.make_node(op, ["a", "b"], ["y"])
        case(f"{op.lower()}_nan", [n], [("a", a), ("b", b)], [("y", TP.FLOAT)])
    n = helper.make_node("Relu", ["a"], ["y"])
    case("relu_nan", [n], [("a", a)], [("y", TP.FLOAT)])
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0], [-np.inf, -1.0, np.nan]], np.float32)
    n = helper.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=1)
    case("reducemax_nan_opset13", [n], [("x", x)], [("y", TP.FLOAT)], trust_ref=True)
    n = helper.make_node("ReduceMin", ["x"], ["y"], axes=[1], keepdims=0)
    case("reducemin_nan_opset13", [n], [("x", x)], [("y", TP.FLOAT)], trust_ref=True)


def reduce_cases():
    x = (ramp(2, 3, 4) - 7.0) / 5.0
    n = helper.make_node("ReduceMean", ["x"], ["y"], axes=[0, 2], keepdims=1)
    case("reducemean_axes_attr_opset13", [n], [("x", x)], [("y", TP.FLOAT)], opset=13)
    n = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=1)
    case("reducemean_axes_input_opset18", [n], [("x", x)], [("y", TP.FLOAT)],
         inits=[("axes", np.array([0, 2], np.int64))], opset=18)
    for noop in (0, 1):
        n = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0, noop_with_empty_axes=noop)
        case(f"reducemean_empty_axes_noop{noop}_opset18", [n], [("x", x)], [("y", TP.FLOAT)],
             inits=[("axes", np.array([], np.int64))], opset=18)
        n = helper.make_node("ReduceMean", ["x"], ["y"], keepdims=1, noop_with_empty_axes=noop)
        case(f"reducemean_absent_axes_noop{noop}_opset18", [n], [("x", x)], [("y", TP.FLOAT)], opset=18)


def reduce_empty_cases():
    """Reductions over a zero-length axis (ONNX-18: sum 0, prod 1, max -inf / dtype lowest, min
    +inf / highest, mean NaN, LogSum(Exp) -inf, L1/L2/SumSquare 0), axes a constant input,
    keepdims both ways, float32 and float16 inputs (int32/int64 for Max/Min/Sum/Prod); plus an
    empty constant input (folded at compile time) added to a graph input."""
    ops = ["ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceLogSumExp",
           "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum"]
    for op in ops:
        short = op[len("Reduce"):].lower()
        dts = [np.float32, np.float16] + ([np.int32, np.int64] if op in ("ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin") else [])
        for dt in dts:
            for keep in (0, 1):
                x = np.zeros((3, 0, 5), dt)
                axes = [1] if keep else [1, 2]
                n = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)
                case(f"reduce_{short}_empty_axis_{np.dtype(dt).name}_keepdims{keep}", [n], [("x", x)],
                     [("y", tdt(x))], inits=[("axes", np.array(axes, np.int64))], opset=18,
                     tolerance=(0, 0), trust_ref=op == "ReduceMean")  # onnxruntime gives 0
    # the empty input is an initializer: folded by the compiler's reference path
    for op in ("ReduceMin", "ReduceMean"):
        n1 = helper.make_node(op, ["e", "axes"], ["r"], keepdims=1)
        n2 = helper.make_node("Add", ["x", "r"], ["y"])
        x = ramp(2, 1, 3)
        case(f"reduce_{op[6:].lower()}_empty_axis_const_input", [n1, n2], [("x", x)], [("y", TP.FLOAT)],
             inits=[("e", np.zeros((2, 0, 3), np.float32)), ("axes", np.array([1], np.int64))], opset=18,
             tolerance=(0, 0), trust_ref=op == "ReduceMean")


def split_cases():
    x = ramp(7, 2)
    n = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, split=[2, 4, 1])
    out3 = [("a", TP.FLOAT), ("b", TP.FLOAT), ("c", TP.FLOAT)]
    case("split_attr_opset11", [n], [("x", x)], out3, opset=11)
    n = helper.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=0)
    case("split_input_opset13", [n], [("x", x)], out3, inits=[("split", np.array([2, 4, 1], np.int64))], opset=13)
    n = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0)
    case("split_equal_default_opset13", [n], [("x", ramp(6, 2))], out3, opset=13)
    n = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)
    case("split_num_outputs_uneven_opset18", [n], [("x", x)], out3, opset=18)
    n = helper.make_node("Split", ["x"], ["a", "b", "c", "d"], axis=-1, num_outputs=4)
    case("split_num_outputs_uneven_last_axis_opset18", [n], [("x", ramp(2, 10))],
         out3 + [("d", TP.FLOAT)], opset=18)


def groupnorm_cases():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 6, 3, 3)).astype(np.float32)
    G, C, eps = 3, 6, 1e-5
    xg = x.reshape(2, G, -1).astype(np.float64)
    norm = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + eps)).reshape(x.shape)
    # opset 18: scale/bias per group [G]; opset 21: per channel [C]
    s18, b18 = np.array([0.5, 2.0, -1.0], np.float32), np.array([0.1, -0.2, 0.3], np.float32)
    s21, b21 = np.repeat(s18, C // G), np.repeat(b18, C // G)
    ref = (norm * s21.reshape(1, C, 1, 1) + b21.reshape(1, C, 1, 1)).astype(np.float32)
    n = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=G, epsilon=eps)
    # onnxruntime implements only -21 (and -18 as a function); both cross-checked with numpy
    for opset, s, b in ((18, s18, b18), (21, s21, b21)):
        name = f"groupnorm_opset{opset}_same_input"
        model = build(name, [n], [("x", x)], [("y", TP.FLOAT)], inits=[("s", s), ("b", b)], opset=opset)
        try:
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            got = sess.run(None, {"x": x})[0]
            if not same(got, ref):
                sys.exit(f"{name}: onnxruntime disagrees with the numpy formula")
        except Exception as e:  # noqa: BLE001 — ort may lack the opset; numpy stays the reference
            print(f"{name}: onnxruntime unavailable ({type(e).__name__}); numpy reference", file=sys.stderr)
        write(name, model, [("x", x)], [ref])


def scalar_cases():
    x = ramp(2, 3)
    n = helper.make_node("Mul", ["x", "k"], ["y"])
    case("rank0_initializer_mul", [n], [("x", x)], [("y", TP.FLOAT)], inits=[("k", np.array(2.5, np.float32))])
    c = helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array(-1.5, np.float32)))
    case("rank0_constant_mul", [c, n], [("x", x)], [("y", TP.FLOAT)])
    # a rank-0 tensor reshaped to [1,1] and back to rank 0 (shape [] = empty shape input)
    n1 = helper.make_node("Reshape", ["x", "s11"], ["t"])
    n2 = helper.make_node("Reshape", ["t", "s0"], ["y"])
    case("rank0_input_reshape", [n1, n2], [("x", np.array(3.25, np.float32))], [("y", TP.FLOAT)],
         inits=[("s11", np.array([1, 1], np.int64)), ("s0", np.array([], np.int64))])
    c = helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array(4.0, np.float32)))
    r = helper.make_node("Reshape", ["k", "s1"], ["k1"])
    m = helper.make_node("Mul", ["x", "k1"], ["y"])
    case("rank0_constant_reshape_mul", [c, r, m], [("x", x)], [("y", TP.FLOAT)],
         inits=[("s1", np.array([1], np.int64))])


def gemm_cases():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    b = rng.standard_normal((4, 4)).astype(np.float32)
    c = np.array([1.0, -2.0, 3.0, -4.0], np.float32)
    for ta in (0, 1):
        for tb in (0, 1):
            n = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb, alpha=0.5, beta=-1.5)
            case(f"gemm_bias1d_m_eq_n_ta{ta}_tb{tb}", [n], [("a", a), ("b", b)], [("y", TP.FLOAT)],
                 inits=[("c", c)])
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    n = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=2.0, beta=0.25)
    case("gemm_bias1d_n_input", [n], [("a", a), ("b", b), ("c", c)], [("y", TP.FLOAT)])


def mixed_dtype_cases():
    """Pow-15 with another exponent type, MaxPool's Indices output, float64 Softmax (wg rows)."""
    rng = np.random.default_rng(7)
    n = helper.make_node("Pow", ["a", "b"], ["y"])
    a = np.array([[-2.0, -1.5, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.inf, -np.inf]],
                 np.float32).T
    b = np.array([-3, -1, 0, 1, 2, 5], np.int64)
    case("pow_f32_base_i64_exponent_bcast", [n], [("a", a), ("b", b)], [("y", TP.FLOAT)], opset=15)
    a = np.array([[0, 1, 2, 3, 5, 7, 10]], np.int32).T
    b = np.array([0.0, 1.0, 2.0, 3.0, 0.5, 1.5, 2.5], np.float32)
    case("pow_i32_base_f32_exponent_bcast", [n], [("a", a), ("b", b)], [("y", TP.INT32)], opset=15)
    n = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 2], strides=[2, 1],
                         pads=[1, 0, 1, 1], storage_order=1)
    x = rng.standard_normal((2, 2, 5, 7)).astype(np.float32)
    case("maxpool_indices_2d_storage_order1", [n], [("x", x)], [("y", TP.FLOAT), ("i", TP.INT64)],
         opset=12)
    n = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 3, 2], strides=[1, 2, 2],
                         pads=[0, 1, 0, 1, 1, 1])
    x = rng.standard_normal((2, 2, 5, 6, 4)).astype(np.float32)
    case("maxpool_indices_3d_pads", [n], [("x", x)], [("y", TP.FLOAT), ("i", TP.INT64)],
         opset=12)
    x = rng.standard_normal((3, 1000)) * 5.0
    for op in ["Softmax", "LogSoftmax"]:
        n = helper.make_node(op, ["x"], ["y"], axis=-1)
        case(f"{op.lower()}_f64_long_rows", [n], [("x", x)], [("y", TP.DOUBLE)], opset=13,
             tolerance=(1e-12, 1e-12))


def scatter_cases():
    """Scatter family (kernels/scatter.cl): duplicate indices under a reduction on a middle axis,
    int32 indices, f16/int reductions, MaxUnpool with a constant output_shape, ReverseSequence on
    rank 3, TensorScatter wrapping in circular mode."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    ind = np.array([[[1, -1], [3, 0], [1, 2]], [[0, 0], [-4, 2], [3, 3]]], np.int32)
    u = rng.standard_normal((2, 3, 2)).astype(np.float32)
    n = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction="add")
    case("scatter_elements_axis1_dup_add_i32_opset18", [n], [("x", x), ("i", ind), ("u", u)],
         [("y", TP.FLOAT)], opset=18)
    xh = rng.standard_normal((3, 5)).astype(np.float16)
    uh = rng.standard_normal((3, 4)).astype(np.float16)
    uh[1, 2] = np.nan
    ih = np.array([[0, 4, 0, 2], [1, 1, 3, 1], [4, 3, 2, 1]], np.int64)
    n = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction="max")
    yh = xh.copy()  # numpy.maximum propagates NaN (onnxruntime too; onnx.reference drops it)
    for r in range(3):
        for c in range(4):
            yh[r, ih[r, c]] = np.maximum(yh[r, ih[r, c]], uh[r, c])
    case("scatter_elements_f16_max_nan_opset18", [n], [("x", xh), ("i", ih), ("u", uh)],
         [("y", TP.FLOAT16)], opset=18, tolerance=(0, 0), numpy_ref=[yh])
    xi = np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 7
    ii = np.array([[1, 2], [0, -1], [1, 2], [1, -3]], np.int64)
    ui = np.arange(16, dtype=np.int32).reshape(4, 4) - 5
    n = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="mul")
    case("scatternd_i32_dup_mul_opset18", [n], [("x", xi), ("i", ii), ("u", ui)],
         [("y", TP.INT32)], opset=18)
    xp = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    ip = np.array([[[[0, 3, 4], [13, 8, 11], [24, 28, 35]],
                    [[36, 39, 40], [49, 44, 47], [60, 64, 71]]]], np.int64)
    n = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2],
                         strides=[2, 2])
    # onnxruntime indexes the output_shape tensor with the flat indices; the backend test
    # test_maxunpool_export_with_output_shape (and onnx.reference) unravel them in the inferred
    # shape and place that block at the origin of the larger output: the reference is written.
    case("maxunpool_const_output_shape_opset11", [n], [("x", xp), ("i", ip)], [("y", TP.FLOAT)],
         inits=[("s", np.array([1, 2, 7, 8], np.int64))], opset=11, trust_ref=True)
    xr = ramp(5, 3, 2)
    n = helper.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=0, batch_axis=1)
    case("reversesequence_3d_time0_batch1", [n], [("x", xr), ("l", np.array([5, 1, 3], np.int64))],
         [("y", TP.FLOAT)], opset=10)
    xc = ramp(2, 3, 5, 2)
    uc = -ramp(2, 3, 3, 2) - 1
    n = helper.make_node("TensorScatter", ["x", "u", "w"], ["y"], axis=2, mode="circular")
    case("tensorscatter_axis2_circular_wrap", [n],
         [("x", xc), ("u", uc), ("w", np.array([4, 1], np.int64))], [("y", TP.FLOAT)], opset=24)


def f64_gemm_cases():
    """float64 MatMul/Gemm run natively (double accumulation), never through float32."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 3, 17))
    b = rng.standard_normal((17, 5))
    case("matmul_f64_batched", [helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", a), ("b", b)],
         [("y", TP.DOUBLE)], tolerance=(1e-12, 1e-12))
    a = rng.standard_normal((4, 9))
    w = rng.standard_normal((6, 9))
    c = rng.standard_normal((6,))
    case("gemm_f64_transb_alpha_beta", [helper.make_node("Gemm", ["a", "w", "c"], ["y"], transB=1, alpha=0.5, beta=-2.0)],
         [("a", a)], [("y", TP.DOUBLE)], inits=[("w", w), ("c", c)], tolerance=(1e-12, 1e-12))


def control_cases():
    """If/Loop/Scan unrolled at compile time (passes/expand/control.c)."""
    F = TP.FLOAT
    x = ramp(2, 3)
    vi = helper.make_tensor_value_info
    # Loop with a constant trip count, an outer value read in the body and a scan output:
    # acc_{i+1} = acc_i + x3 * i, scan = every acc (rank-1 values: onnxruntime stacks them on a new
    # axis 0; the onnx reference uses vstack, which agrees only for rank 1).
    x3 = np.array([1.0, -2.0, 0.5], np.float32)
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
         helper.make_node("Mul", ["x3", "fi"], ["xi"]),
         helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan"])],
        "body", [vi("i", TP.INT64, []), vi("cond", TP.BOOL, []), vi("acc", F, [3])],
        [vi("cond_out", TP.BOOL, []), vi("acc_out", F, [3]), vi("scan", F, [3])])
    n = helper.make_node("Loop", ["M", "c0", "acc0"], ["acc", "accs"], body=body, name="loop")
    case("loop_const_trip_count_scan_output", [n], [("x3", x3), ("acc0", np.array([0.5, 1.0, 1.5], np.float32))],
         [("acc", F), ("accs", F)], inits=[("M", np.array(4, np.int64)), ("c0", np.array(True))], opset=16)
    # If nested in a Loop body: the branches read the body's value `acc` and the outer `x`; the
    # condition (i < 1) folds per iteration.
    then_g = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["t"])], "then", [], [vi("t", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Mul", ["acc", "two"], ["t"])], "else", [], [vi("t", F, [2, 3])])
    body = helper.make_graph(
        [helper.make_node("Less", ["i", "one"], ["c"]),
         helper.make_node("If", ["c"], ["acc_out"], then_branch=then_g, else_branch=else_g, name="pick"),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", TP.INT64, []), vi("cond", TP.BOOL, []), vi("acc", F, [2, 3])],
        [vi("cond_out", TP.BOOL, []), vi("acc_out", F, [2, 3])])
    n = helper.make_node("Loop", ["M", "c0", "acc0"], ["acc"], body=body, name="loop")
    case("loop_nested_if_outer_values", [n], [("x", x), ("acc0", ramp(2, 3))], [("acc", F)],
         inits=[("M", np.array(3, np.int64)), ("c0", np.array(True)), ("one", np.array(1, np.int64)),
                ("two", np.array(2.0, np.float32))], opset=16)
    # If whose condition is a graph input: both branches run, Where selects.
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [], [vi("t", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [], [vi("e", F, [2, 3])])
    n = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="sel")
    case("if_runtime_cond_true", [n], [("c", np.array(True)), ("x", x)], [("y", F)], opset=16)
    case("if_runtime_cond_false", [n], [("c", np.array(False)), ("x", x)], [("y", F)], opset=16)
    # Scan-16 over axis 1, reversed input and output: running sums from the end.
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "xt"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y"])],
        "body", [vi("s", F, [2]), vi("xt", F, [2])], [vi("s_out", F, [2]), vi("y", F, [2])])
    n = helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1,
                         scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1],
                         scan_output_directions=[1], name="scan")
    xs = ramp(2, 5)
    case("scan_axis1_reverse", [n], [("s0", np.zeros(2, np.float32)), ("xs", xs)], [("s", F), ("ys", F)],
         opset=16, numpy_ref=[xs.sum(1), np.cumsum(xs[:, ::-1], 1)[:, ::-1]])
    # A run-time condition with branch outputs of different shapes cannot be compiled statically.
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [], [vi("e", F, None)])
    n = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="branchy")
    error_case("error_if_runtime_cond_shapes_differ", [n], [("c", np.array(True)), ("x", x)], [("y", F)],
               opset=16, message=["If", "branchy", "then_branch", "else_branch", "run time", "opset 16"])
    n = helper.make_node("Loop", ["M", "", "x"], ["y"], body=helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Identity", ["v"], ["v_out"])],
        "body", [vi("i", TP.INT64, []), vi("cond", TP.BOOL, []), vi("v", F, [2, 3])],
        [vi("cond_out", TP.BOOL, []), vi("v_out", F, [2, 3])]), name="spin")
    error_case("error_loop_runtime_trip_count", [n], [("M", np.array(3, np.int64)), ("x", x)], [("y", F)],
               opset=16, message=["Loop", "spin", "trip count", "run time", "opset 16"])


def lstm_lens_ref(x, w, r, b, lens, h0, c0, p):
    """numpy LSTM-14 (forward + reverse, default activations) with sequence_lens: rows past their
    length keep H/C and output 0; reverse starts at each row's last valid step (onnxruntime)."""
    sig = lambda v: 1 / (1 + np.exp(-v))
    T, B, _ = x.shape
    D, H = w.shape[0], r.shape[2]
    y = np.zeros((T, D, B, H), np.float32)
    yh, yc = np.zeros((D, B, H), np.float32), np.zeros((D, B, H), np.float32)
    for d in range(D):
        h, c = h0[d].copy(), c0[d].copy()
        pi, po, pf = np.split(p[d], 3)
        for t in (range(T) if d == 0 else range(T - 1, -1, -1)):
            g = x[t] @ w[d].T + h @ r[d].T + b[d][:4 * H] + b[d][4 * H:]
            gi, go, gf, gc = np.split(g, 4, -1)
            i, f = sig(gi + pi * c), sig(gf + pf * c)
            cn = f * c + i * np.tanh(gc)
            hn = sig(go + po * cn) * np.tanh(cn)
            m = (t < lens)[:, None]
            h, c = np.where(m, hn, h), np.where(m, cn, c)
            y[t, d] = np.where(m, hn, 0)
        yh[d], yc[d] = h, c
    return [y, yh, yc]


def rnn_einsum_cases():
    """RNN/GRU/LSTM and Einsum as unrolled expansions (passes/expand/rnn.c, expand_einsum.c):
    bidirectional LSTM with peepholes, initial states and Y_c; GRU linear_before_reset; a runtime
    sequence_lens shorter than the sequence; Einsum diagonals, implicit output, integers, three
    operands and broadcast ellipsis dims."""
    rng = np.random.default_rng(11)
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)
    F = TP.FLOAT
    T, B, I, H = 4, 3, 2, 5
    ins = [("X", f(T, B, I)), ("W", f(2, 4 * H, I)), ("R", f(2, 4 * H, H)), ("B", f(2, 8 * H))]
    st = [("h0", f(2, B, H)), ("c0", f(2, B, H)), ("P", f(2, 3 * H))]
    n = helper.make_node("LSTM", ["X", "W", "R", "B", "", "h0", "c0", "P"], ["Y", "Y_h", "Y_c"],
                         hidden_size=H, direction="bidirectional")
    case("lstm_bidirectional_peepholes_initial_yc", [n], ins + st, [("Y", F), ("Y_h", F), ("Y_c", F)],
         opset=14)
    lens = np.array([4, 1, 3], np.int32)
    n = helper.make_node("LSTM", ["X", "W", "R", "B", "lens", "h0", "c0", "P"], ["Y", "Y_h", "Y_c"],
                         hidden_size=H, direction="bidirectional")
    feeds = dict(ins + st)
    case("lstm_bidirectional_runtime_sequence_lens", [n], ins + [("lens", lens)] + st,
         [("Y", F), ("Y_h", F), ("Y_c", F)], opset=14,
         numpy_ref=lstm_lens_ref(feeds["X"], feeds["W"], feeds["R"], feeds["B"], lens, feeds["h0"],
                                 feeds["c0"], feeds["P"]))
    n = helper.make_node("GRU", ["X", "W", "R", "B", "", "h0"], ["Y", "Y_h"], hidden_size=H,
                         direction="bidirectional", linear_before_reset=1)
    case("gru_bidirectional_linear_before_reset", [n],
         [("X", ins[0][1]), ("W", f(2, 3 * H, I)), ("R", f(2, 3 * H, H)), ("B", f(2, 6 * H)),
          ("h0", st[0][1])], [("Y", F), ("Y_h", F)], opset=14)
    ri = lambda *s: rng.integers(-5, 5, s).astype(np.int32)
    for name, eq, arrs in [
            ("einsum_batch_trace_implicit", "bii", [f(2, 3, 3)]),
            ("einsum_i32_matmul_transposed_out", "ij,jk->ki", [ri(3, 4), ri(4, 2)]),
            ("einsum_three_operands", "ij,jk,kl->il", [f(2, 3), f(3, 4), f(4, 5)]),
            ("einsum_ellipsis_broadcast_matmul", "...ij,...jk->...ik", [f(2, 1, 3, 4), f(1, 5, 4, 2)]),
            ("einsum_mixed_sum_diagonal", "abc,cd,aad->b", [f(2, 3, 4), f(4, 5), f(2, 2, 5)])]:
        names = [f"x{k}" for k in range(len(arrs))]
        n = helper.make_node("Einsum", names, ["y"], equation=eq)
        case(name, [n], list(zip(names, arrs)), [("y", tdt(arrs[0]))], opset=12)
    n = helper.make_node("RNN", ["X", "W", "R"], ["Y"], hidden_size=H, activations=["Gaussian"],
                         name="cell")
    error_case("error_rnn_unknown_activation", [n],
               [("X", ins[0][1]), ("W", f(1, H, I)), ("R", f(1, H, H))], [("Y", F)], opset=14,
               message=["RNN", "activations", "Gaussian", "cell", "opset 14"])


def quant_dft_cases():
    """MatMulInteger/ConvInteger/QLinearMatMul/QLinearConv and DFT/STFT as expansions
    (passes/expand/quant.c, expand_dft.c): sums over K > 258 that the float32 MatMul/Conv must
    split into exact chunks (plain and grouped Conv), int8 QLinearConv with bias and per-channel
    w_scale, DFT with dft_length padding/truncation and a constant opset-20 axis, STFT with
    constant frame_step/frame_length and a window; a runtime DFT-20 axis must be rejected."""
    rng = np.random.default_rng(12)
    u8 = lambda *s: rng.integers(0, 256, s).astype(np.uint8)
    i8 = lambda *s: rng.integers(-128, 128, s).astype(np.int8)
    n = helper.make_node("MatMulInteger", ["A", "B", "azp", "bzp"], ["Y"])
    case("matmulinteger_long_k_chunks", [n], [("A", u8(2, 5, 600)), ("B", i8(600, 7)),
         ("azp", np.array(9, np.uint8)), ("bzp", np.array(-3, np.int8))], [("Y", TP.INT32)], opset=10)
    n = helper.make_node("QLinearMatMul", ["a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"], ["y"])
    case("qlinearmatmul_long_k_chunks", [n],
         [("a", u8(3, 4, 700)), ("as", np.array([0.01], np.float32)), ("azp", np.array([120], np.uint8)),
          ("b", u8(700, 6)), ("bs", np.array([0.002], np.float32)), ("bzp", np.array([130], np.uint8)),
          ("ys", np.array([0.5], np.float32)), ("yzp", np.array([128], np.uint8))], [("y", TP.UINT8)], opset=10)
    x = u8(1, 64, 9, 8)
    n = helper.make_node("ConvInteger", ["x", "w", "xzp"], ["y"], auto_pad="SAME_UPPER")
    case("convinteger_long_k_chunks_same_upper", [n], [("x", x), ("w", u8(4, 64, 3, 3)),
         ("xzp", np.array(7, np.uint8))], [("y", TP.INT32)], opset=10)
    n = helper.make_node("ConvInteger", ["x", "w", "xzp", "wzp"], ["y"], group=2, pads=[1, 0, 1, 1],
                         strides=[2, 1])
    case("convinteger_group_long_k_chunks", [n], [("x", x), ("w", u8(6, 32, 3, 3)),
         ("xzp", np.array(7, np.uint8)), ("wzp", np.array(200, np.uint8))], [("y", TP.INT32)], opset=10)
    n = helper.make_node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "B"], ["y"],
                         pads=[1, 1, 1, 1])
    case("qlinearconv_int8_bias_per_channel_scale", [n],
         [("x", i8(2, 8, 7, 7)), ("xs", np.array(0.02, np.float32)), ("xzp", np.array(3, np.int8)),
          ("w", i8(5, 8, 3, 3)), ("ws", rng.uniform(0.001, 0.01, 5).astype(np.float32)),
          ("wzp", np.zeros(5, np.int8)), ("ys", np.array(0.9, np.float32)), ("yzp", np.array(-4, np.int8)),
          ("B", rng.integers(-5000, 5000, 5).astype(np.int32))], [("y", TP.INT8)], opset=10)
    # length-4 transforms (quarter turns: exact in float32, so onnxruntime and the reference agree)
    for name, shape in [("dft_length_4_truncates_const_axis", (3, 9, 5, 2)),
                        ("dft_length_4_pads_const_axis", (3, 3, 5, 2))]:
        n = helper.make_node("DFT", ["x", "L", "axis"], ["y"])
        case(name, [n], [("x", rng.integers(-4, 5, shape).astype(np.float32))], [("y", TP.FLOAT)],
             inits=[("L", np.array(4, np.int64)), ("axis", np.array(-3, np.int64))], opset=20)
    n = helper.make_node("STFT", ["s", "step", "w", "fl"], ["y"])
    case("stft_const_step_window", [n], [("s", rng.integers(-4, 5, (2, 100, 1)).astype(np.float32)),
         ("w", np.array([1, 2, 2, 1], np.float32))], [("y", TP.FLOAT)],
         inits=[("step", np.array(3, np.int64)), ("fl", np.array(4, np.int64))], opset=17)
    x = rng.integers(-4, 5, (3, 9, 4, 2)).astype(np.float32)
    n = helper.make_node("DFT", ["x", "", "axis"], ["y"], name="spectrum")
    error_case("error_dft_runtime_axis", [n], [("x", x), ("axis", np.array(1, np.int64))],
               [("y", TP.FLOAT)], opset=20, message=["DFT", "axis", "run time", "spectrum", "opset 20"])


def topk_cases():
    """TopK-1/10/11 with a constant k (codegen/lower_topk.c, ref eval_topk): ties broken by the
    lower index, largest and smallest, every axis position, integer and float16 inputs, k = 0 and
    k = the whole axis, a long line."""
    rng = np.random.default_rng(23)
    ties = rng.integers(-3, 4, (3, 7)).astype(np.float32)
    outs = [("v", TP.FLOAT), ("i", TP.INT64)]

    def topk(name, x, k, opset=11, outs=outs, **attrs):
        if opset == 1:
            n = helper.make_node("TopK", ["x"], ["v", "i"], k=k, **attrs)
            case(name, [n], [("x", x)], outs, opset=1)
        else:
            n = helper.make_node("TopK", ["x", "k"], ["v", "i"], **attrs)
            case(name, [n], [("x", x)], outs, inits=[("k", np.array([k], np.int64))], opset=opset)

    topk("topk_ties_largest_axis1", ties, 4, axis=1)
    topk("topk_ties_smallest_axis0", ties, 2, axis=0, largest=0)
    topk("topk_ties_smallest_negative_axis", ties, 7, axis=-1, largest=0)
    topk("topk_opset1_k_attribute", ties, 3, opset=1, axis=1)
    topk("topk_opset10_k_input", ties, 3, opset=10, axis=0)
    topk("topk_k0_empty", ties, 0, axis=1)
    x4 = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    topk("topk_rank4_axis2", x4, 3, axis=2)
    topk("topk_rank4_axis0_smallest", x4, 1, axis=0, largest=0)
    topk("topk_long_line", rng.standard_normal((2, 300)).astype(np.float32), 5)
    topk("topk_int32_ties", rng.integers(-5, 5, (4, 9)).astype(np.int32), 4, outs=[("v", TP.INT32), ("i", TP.INT64)])
    topk("topk_int64_smallest", rng.integers(-2**40, 2**40, (3, 6)).astype(np.int64), 2, largest=0,
         outs=[("v", TP.INT64), ("i", TP.INT64)])
    topk("topk_uint8", rng.integers(0, 255, (2, 10)).astype(np.uint8), 3, outs=[("v", TP.UINT8), ("i", TP.INT64)])
    topk("topk_f16", rng.standard_normal((3, 8)).astype(np.float16), 3, outs=[("v", TP.FLOAT16), ("i", TP.INT64)])
    # a constant input: folded at compile time by the reference (ref/ref_reduce.c eval_topk)
    n = helper.make_node("TopK", ["c", "k"], ["cv", "ci"], axis=1, largest=0)
    case("topk_const_input_folds", [n, helper.make_node("Add", ["x", "cv"], ["v"])], [("x", ramp(3, 4))],
         [("v", TP.FLOAT), ("ci", TP.INT64)], inits=[("c", ties), ("k", np.array([4], np.int64))])


def error_cases():
    x = ramp(1, 2, 3)
    n = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, name="top")
    error_case("error_topk_runtime_k", [n], [("x", x), ("k", np.array([2], np.int64))],
               [("v", TP.FLOAT), ("i", TP.INT64)], opset=13,
               message=["TopK", "top", "k ('k') is computed at run time", "--bind k=", "opset 13"])
    n = helper.make_node("Gelu", ["x"], ["y"], approximate="fast", name="act")
    error_case("error_gelu_bad_approximate", [n], [("x", x)], [("y", TP.FLOAT)], opset=20,
               message=["Gelu", "approximate", "fast", "act", "opset 20"])


def main():
    os.makedirs(OUT, exist_ok=True)
    resize_cases()
    resize_antialias_cases()
    softmax_cases()
    slice_cases()
    shape_cases()
    cast_cases()
    nan_cases()
    reduce_cases()
    reduce_empty_cases()
    split_cases()
    groupnorm_cases()
    scalar_cases()
    gemm_cases()
    mixed_dtype_cases()
    scatter_cases()
    control_cases()
    f64_gemm_cases()
    rnn_einsum_cases()
    quant_dft_cases()
    topk_cases()
    cast_rewrite_cases()
    error_cases()
    keep = set(written)
    for d in os.listdir(OUT):
        if d not in keep:
            shutil.rmtree(os.path.join(OUT, d))
    print(f"{len(written)} tests in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
