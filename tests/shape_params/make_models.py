#!/usr/bin/env python3
"""make_models.py — "parameters computed from shapes" regression net (issue 19 item 2).

Every case has only static input shapes; a parameter input that must be constant once shapes
are bound (Resize scales/sizes, Reshape shape, Expand shape, Tile repeats, Pad pads, Slice
starts/ends, ConstantOfShape shape, Range start/limit/delta, Squeeze/Unsqueeze/Reduce axes,
Split sizes, TopK k) is computed from Shape of those inputs, as exporters write it, often through
float arithmetic with small float initializers (ones, halves: values that look like weights to
the folding rule that keeps weights and shape-dependent data apart). Each must compile and match
onnxruntime in both kernel classes (run_case.sh).

Run: python3 tests/shape_params/make_models.py (numpy, onnx, onnxruntime; outputs committed).
cases/<name>/ holds model.onnx, inputs/<input>.npy and ref/<output>.npy.
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
I64 = T.INT64
rng = np.random.default_rng(19)
ort.set_default_logger_severity(3)


def i64(name, v):
    return nh.from_array(np.array(v, np.int64), name)


def f32(name, v):
    return nh.from_array(np.array(v, np.float32), name)


def vi(name, shape, t=F):
    return h.make_tensor_value_info(name, t, shape)


def shape_slice(src, start, end, out):
    """Shape(src)[start:end] -> out (int64) as a Shape + Slice pair."""
    return [h.make_node("Shape", [src], [out + "_s"]),
            h.make_node("Slice", [out + "_s", "c_%d" % start, "c_%d" % end], [out])]


CONSTS = [i64("c_%d" % k, [k]) for k in range(0, 5)] + [i64("c_m1", [-1])]


def case(name, nodes, inputs, outputs, inits=(), opset=17):
    used = {i for nd in nodes for i in nd.input}
    consts = [c for c in CONSTS if c.name in used]
    g = h.make_graph(nodes, name, [vi(n, s, t) for n, s, t in inputs],
                     [h.make_tensor_value_info(n, I64 if n == "I" else F, None) for n in outputs],
                     consts + list(inits))
    feeds = {n: (rng.standard_normal(s).astype(np.float32) if t == F else
                 rng.integers(0, 3, s).astype(np.int64)) for n, s, t in inputs}
    m0 = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m0.ir_version = 8
    sess = ort.InferenceSession(m0.SerializeToString())
    outs = sess.run(outputs, feeds)
    del g.output[:]
    g.output.extend([vi(n, list(o.shape), T.FLOAT if o.dtype == np.float32 else T.INT64)
                     for n, o in zip(outputs, outs)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                     producer_name="tests/shape_params/make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    d = os.path.join(HERE, "cases", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d + "/inputs")
    os.makedirs(d + "/ref")
    onnx.save(m, d + "/model.onnx")
    for n, v in feeds.items():
        np.save("%s/inputs/%s.npy" % (d, n), v)
    for n, o in zip(outputs, outs):
        np.save("%s/ref/%s.npy" % (d, n), o)
    print(name, [o.shape for o in outs])


def main():
    X = ("X", [1, 2, 3, 4], F)
    Tt = ("T", [1, 2, 6, 8], F)
    # Resize to another tensor's size: scales = Concat([1, 1], float(Shape(T)[2:]) / float(Shape(X)[2:]))
    for mode in ("nearest", "linear"):
        case("resize_scales_" + mode,
             shape_slice("T", 2, 4, "ts") + shape_slice("X", 2, 4, "xs") + [
                 h.make_node("Cast", ["ts"], ["tf"], to=F), h.make_node("Cast", ["xs"], ["xf"], to=F),
                 h.make_node("Div", ["tf", "xf"], ["r"]),
                 h.make_node("Concat", ["ones", "r"], ["scales"], axis=0),
                 h.make_node("Resize", ["X", "", "scales"], ["Y"], mode=mode)],
             [X, Tt], ["Y"], [f32("ones", [1, 1])])
    # sizes = Concat(Shape(X)[:2], Shape(T)[2:]) ; opset 11 form with an roi input
    case("resize_sizes",
         shape_slice("T", 2, 4, "ts") + shape_slice("X", 0, 2, "xs") + [
             h.make_node("Concat", ["xs", "ts"], ["sizes"], axis=0),
             h.make_node("Resize", ["X", "roi", "", "sizes"], ["Y"], mode="nearest")],
         [X, Tt], ["Y"], [f32("roi", [])], opset=13)
    # scales through float math with a weight-like vector: Shape(T) * [1, 1, 1.5, 0.75] / Shape(X)
    case("resize_scales_mixed",
         [h.make_node("Shape", ["T"], ["ts"]), h.make_node("Shape", ["X"], ["xs"]),
          h.make_node("Cast", ["ts"], ["tf"], to=F), h.make_node("Cast", ["xs"], ["xf"], to=F),
          h.make_node("Mul", ["tf", "w"], ["tw"]), h.make_node("Div", ["tw", "xf"], ["scales"]),
          h.make_node("Resize", ["X", "", "scales"], ["Y"], mode="nearest")],
         [X, Tt], ["Y"], [f32("w", [1, 1, 1.5, 0.75])])
    # Reshape shape = Concat(Shape(X)[:1], int(float(Shape(X)[1:]) product via ReduceProd * [1.0]) , -1)
    case("reshape",
         shape_slice("X", 0, 1, "b") + shape_slice("X", 1, 3, "mid") + [
             h.make_node("Cast", ["mid"], ["midf"], to=F),
             h.make_node("Mul", ["midf", "halfdouble"], ["midw"]),
             h.make_node("ReduceProd", ["midw"], ["p"], keepdims=1),
             h.make_node("Cast", ["p"], ["pi"], to=I64),
             h.make_node("Concat", ["b", "pi", "c_m1"], ["shape"], axis=0),
             h.make_node("Reshape", ["X", "shape"], ["Y"])],
         [X], ["Y"], [f32("halfdouble", [0.5, 2.0])])
    # Expand X[1,2,1,4] to T's shape; Tile by Shape(T) / Shape(X)
    case("expand",
         [h.make_node("Shape", ["T"], ["ts"]), h.make_node("Expand", ["X", "ts"], ["Y"])],
         [("X", [1, 2, 1, 8], F), Tt], ["Y"])
    case("tile",
         [h.make_node("Shape", ["T"], ["ts"]), h.make_node("Shape", ["X"], ["xs"]),
          h.make_node("Cast", ["ts"], ["tf"], to=F), h.make_node("Cast", ["xs"], ["xf"], to=F),
          h.make_node("Div", ["tf", "xf"], ["q"]), h.make_node("Mul", ["q", "ones4"], ["qw"]),
          h.make_node("Cast", ["qw"], ["rep"], to=I64), h.make_node("Tile", ["X", "rep"], ["Y"])],
         [X, Tt], ["Y"], [f32("ones4", [1, 1, 1, 1])])
    # Pad X up to T's size at the end: pads = Concat(zeros4, Shape(T) - Shape(X)) (through float)
    case("pad",
         [h.make_node("Shape", ["T"], ["ts"]), h.make_node("Shape", ["X"], ["xs"]),
          h.make_node("Sub", ["ts", "xs"], ["d"]), h.make_node("Cast", ["d"], ["df"], to=F),
          h.make_node("Mul", ["df", "ones4"], ["dw"]), h.make_node("Cast", ["dw"], ["di"], to=I64),
          h.make_node("Concat", ["zeros4", "di"], ["pads"], axis=0),
          h.make_node("Pad", ["X", "pads", "padv"], ["Y"], mode="constant")],
         [X, Tt], ["Y"], [f32("ones4", [1, 1, 1, 1]), i64("zeros4", [0, 0, 0, 0]), f32("padv", 0.5)])
    # Slice T to X's spatial size, starting at the middle: starts = (Shape(T) - Shape(X)) * [.5 .5]
    case("slice",
         shape_slice("T", 2, 4, "ts") + shape_slice("X", 2, 4, "xs") + [
             h.make_node("Sub", ["ts", "xs"], ["d"]), h.make_node("Cast", ["d"], ["df"], to=F),
             h.make_node("Mul", ["df", "halves"], ["sf"]), h.make_node("Cast", ["sf"], ["st"], to=I64),
             h.make_node("Add", ["st", "xs"], ["en"]),
             h.make_node("Slice", ["T", "st", "en", "ax23"], ["Y"])],
         [X, Tt], ["Y"], [f32("halves", [0.5, 0.5]), i64("ax23", [2, 3])])
    # ConstantOfShape(int(float(Shape(X)) * ones4)) + X; Range(0, float(Shape(X)[3]) + sum([.5,.5]) - 1, 1)
    case("constant_of_shape",
         [h.make_node("Shape", ["X"], ["xs"]), h.make_node("Cast", ["xs"], ["xf"], to=F),
          h.make_node("Mul", ["xf", "ones4"], ["xw"]), h.make_node("Cast", ["xw"], ["xi"], to=I64),
          h.make_node("ConstantOfShape", ["xi"], ["z"], value=h.make_tensor("v", F, [1], [2.0])),
          h.make_node("Add", ["X", "z"], ["Y"])],
         [X], ["Y"], [f32("ones4", [1, 1, 1, 1])])
    case("range",
         shape_slice("X", 3, 4, "w") + [
             h.make_node("Cast", ["w"], ["wf"], to=F), h.make_node("ReduceSum", ["halves"], ["hs"], keepdims=1),
             h.make_node("Add", ["wf", "hs"], ["l1"]), h.make_node("Sub", ["l1", "one"], ["l2"]),
             h.make_node("Squeeze", ["l2", "c_0"], ["limit"]),
             h.make_node("Range", ["zero", "limit", "one_s"], ["r"]),
             h.make_node("Add", ["X", "r"], ["Y"])],
         [X], ["Y"], [f32("halves", [0.5, 0.5]), f32("one", [1.0]), f32("zero", 0.0), f32("one_s", 1.0)])
    # axes computed from shapes: Unsqueeze at rank(X), ReduceSum over [rank-1] via Size(Shape) - 1
    case("axes",
         [h.make_node("Shape", ["X"], ["xs"]), h.make_node("Size", ["xs"], ["r"]),
          h.make_node("Cast", ["r"], ["rf"], to=F), h.make_node("Sub", ["rf", "ones2"], ["rm"]),
          h.make_node("Cast", ["rm"], ["ax"], to=I64),  # [3, 3]
          h.make_node("Slice", ["ax", "c_0", "c_1"], ["ax1"]),
          h.make_node("ReduceSum", ["X", "ax1"], ["s"], keepdims=0),
          h.make_node("Unsqueeze", ["s", "ax1"], ["Y"])],
         [X], ["Y"], [f32("ones2", [1, 1])], opset=18)
    # Split sizes = [w - w//2 ... ] from Shape(X)[3] * [0.25, 0.75]; TopK k = Shape(X)[3] * 0.5
    case("split_topk",
         shape_slice("X", 3, 4, "w") + [
             h.make_node("Cast", ["w"], ["wf"], to=F), h.make_node("Mul", ["wf", "q"], ["sf"]),
             h.make_node("Cast", ["sf"], ["sp"], to=I64),
             h.make_node("Split", ["X", "sp"], ["Y0", "Y1"], axis=3),
             h.make_node("Slice", ["sp", "c_0", "c_1"], ["k"]),
             h.make_node("TopK", ["X", "k"], ["V", "I"], axis=3)],
         [X], ["Y0", "Y1", "V", "I"], [f32("q", [0.25, 0.75])], opset=18)


if __name__ == "__main__":
    main()
