#!/usr/bin/env python3
"""make_models.py — the empty-dims regression net (issue 19): every op family with a dim of 0.

Run: python3 tests/empty_dims/make_models.py   (needs numpy, onnx, onnxruntime; the outputs are
committed, so the tests need no Python). Deterministic (fixed seed). Rewrites cases/ entirely.

Each family below lists input shapes in which one dim is 0 in turn (each input, each dim where
ONNX allows it), plus the degenerate forms that give a non-empty output from an empty input
(MatMul/Gemm/Conv with K = 0 -> the epilogue of zeros, reductions over an empty axis, Pad and
Concat of an empty tensor). The reference is onnxruntime (CPUExecutionProvider; with graph
optimizations off when its layout rewrites refuse an empty tensor its kernels run), except
ReduceMean over an empty set ("undefined" in ONNX-18): onnx.reference's NaN, which onnx2cl
gives (onnxruntime gives 0). A model onnxruntime refuses whose outputs are all empty by ONNX
shape inference is kept with empty references (e.g. pooling with 0 channels). The model's output shapes are then written from the reference, so
onnx2cl sees fully static graphs.

cases/<group>.<name>/ holds model.onnx, inputs/<input>.npy, ref/<output>.npy and tol ("ATOL
RTOL", |d| <= ATOL + RTOL*|ref|). run_group.sh compiles every case of a group and runs it with
--kernels cpu and --kernels gpu (both classes run on PoCL). Groups = ctest tests
(CMakeLists.txt). Cases onnxruntime refuses are not written; they are listed with onnxruntime's
message in cases/ORT_REFUSED.txt (not onnx2cl's to decide; "kept" ones are cases).
"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
F, I64, B = T.FLOAT, T.INT64, T.BOOL
NP = {F: np.float32, I64: np.int64, B: np.bool_}
rng = np.random.default_rng(19)
refused = []
written = []
ort.set_default_logger_severity(3)


def data(et, shape):
    shape = tuple(shape)
    if et == F:
        return rng.standard_normal(shape).astype(np.float32)
    if et == I64:
        return rng.integers(-3, 4, shape).astype(np.int64)
    return rng.integers(0, 2, shape).astype(np.bool_)


def const(name, arr):
    return nh.from_array(np.asarray(arr), name)


def case(group, name, nodes, inputs, outputs, inits=(), opset=18, tol=(1e-5, 1e-5), feeds=None,
         ref="ort", keep=True):
    """inputs: [(name, elem_type, shape)]; outputs: [(name, elem_type)]; feeds: fixed input data;
    ref "onnx": the reference is onnx.reference (run after onnxruntime accepted the model);
    keep=False: not kept as an empty-output case when onnxruntime refuses it."""
    full = group + "." + name
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, et, s) for n, et, s in inputs],
                     [h.make_tensor_value_info(n, et, None) for n, et in outputs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                     producer_name="tests/empty_dims/make_models.py")
    m.ir_version = 8
    feeds = dict(feeds or {})
    for n, et, s in inputs:
        if n not in feeds:
            feeds[n] = data(et, s)
    res = None
    for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
        # onnxruntime's layout rewrites (NCHWc) refuse some empty tensors its kernels run
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        try:
            s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
            res = s.run(None, feeds)
            break
        except Exception as e:  # noqa: BLE001 — any refusal is recorded, not fatal
            msg = " ".join(str(e).split())[:300]
    if res is None:
        res = empty_outputs(m, outputs) if keep else None
        refused.append("%s: %s%s" % (full, msg, "" if res is None else
                       " [kept: every output is empty by ONNX shape inference; reference empty]"))
        if res is None:
            return
    if ref == "onnx":
        res = ReferenceEvaluator(m).run(None, feeds)
    for (n, et), r in zip(outputs, res):
        v = m.graph.output[[o.name for o in m.graph.output].index(n)]
        v.CopyFrom(h.make_tensor_value_info(n, et, list(r.shape)))
    onnx.checker.check_model(m, full_check=True)
    d = os.path.join(CASES, full)
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "ref"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for n, v in feeds.items():
        np.save(os.path.join(d, "inputs", n + ".npy"), v)
    for (n, _), r in zip(outputs, res):
        np.save(os.path.join(d, "ref", n + ".npy"), r)
    with open(os.path.join(d, "tol"), "w") as f:
        f.write("%g %g\n" % tol)
    written.append(full)


def empty_outputs(m, outputs):
    """Empty arrays of the outputs' shapes when ONNX shape inference gives every output a static
    shape with a 0 in it (a model onnxruntime refuses though its result is empty); else None."""
    try:
        inf = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    except Exception:  # noqa: BLE001
        return None
    got = {}
    for v in inf.graph.output:
        dims = v.type.tensor_type.shape.dim
        if not v.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
            return None
        got[v.name] = [d.dim_value for d in dims]
    res = []
    for n, et in outputs:
        if n not in got or 0 not in got[n]:
            return None
        res.append(np.zeros(got[n], NP[et]))
    return res


def zero_each(shape):
    """Every copy of shape with one dim set to 0 (in turn)."""
    out = []
    for i in range(len(shape)):
        s = list(shape)
        s[i] = 0
        out.append(s)
    return out


def sname(shape):
    return "x".join(str(d) for d in shape) if shape else "s"


# ---- elementwise unary ---------------------------------------------------------------------------
def unary():
    ops = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Exp", {}), ("Abs", {}), ("Neg", {}),
           ("Erf", {}), ("LeakyRelu", {"alpha": 0.1}), ("Softplus", {}), ("Sqrt", {})]
    for op, at in ops:
        for s in zero_each([2, 3, 4]):
            case("unary", "%s_%s" % (op.lower(), sname(s)), [h.make_node(op, ["x"], ["y"], **at)],
                 [("x", F, s)], [("y", F)])
    # a chain the elementwise fusion turns into one kernel, and Clip with constant bounds
    for s in zero_each([2, 3]):
        case("unary", "chain_%s" % sname(s),
             [h.make_node("Mul", ["x", "k"], ["a"]), h.make_node("Add", ["a", "k"], ["b"]),
              h.make_node("Sigmoid", ["b"], ["c"]), h.make_node("Mul", ["b", "c"], ["y"])],
             [("x", F, s)], [("y", F)], [const("k", np.float32(0.5))])
        case("unary", "clip_%s" % sname(s), [h.make_node("Clip", ["x", "lo", "hi"], ["y"])],
             [("x", F, s)], [("y", F)], [const("lo", np.float32(-0.5)), const("hi", np.float32(0.5))])
    for s in zero_each([2, 3]):
        case("unary", "cast_f2i_%s" % sname(s), [h.make_node("Cast", ["x"], ["y"], to=I64)],
             [("x", F, s)], [("y", I64)])
        case("unary", "cast_i2f_%s" % sname(s), [h.make_node("Cast", ["x"], ["y"], to=F)],
             [("x", I64, s)], [("y", F)])
        case("unary", "not_%s" % sname(s), [h.make_node("Not", ["x"], ["y"])], [("x", B, s)], [("y", B)])


# ---- elementwise binary, broadcast against empty ------------------------------------------------
def binary():
    pairs = [([0, 3], [3]), ([0, 3], [1, 3]), ([2, 0], [2, 1]), ([2, 0], [0]), ([2, 0], []),
             ([2, 3], [0, 2, 3]), ([1, 3], [0, 1]), ([2, 0, 4], [2, 1, 4]), ([0], [0])]
    for op in ["Add", "Sub", "Mul", "Div", "Max", "Pow"]:
        for a, b in pairs:
            case("binary", "%s_%s_%s" % (op.lower(), sname(a), sname(b)),
                 [h.make_node(op, ["a", "b"], ["y"])], [("a", F, a), ("b", F, b)], [("y", F)])
    for a, b in pairs[:5]:
        case("binary", "less_%s_%s" % (sname(a), sname(b)), [h.make_node("Less", ["a", "b"], ["y"])],
             [("a", F, a), ("b", F, b)], [("y", B)])
    for a in ([0, 3], [2, 0], [2, 0, 4]):
        # against a constant (the elementwise fusion folds constants into the kernel)
        case("binary", "addconst_%s" % sname(a), [h.make_node("Add", ["a", "c"], ["y"])],
             [("a", F, a)], [("y", F)], [const("c", data(F, [a[-1]]))])
    for c, x, y in [([0, 3], [3], [1, 3]), ([2, 0], [2, 1], [0]), ([2, 3], [0, 1, 3], [3]),
                    ([1], [0, 2], [2])]:
        case("binary", "where_%s_%s_%s" % (sname(c), sname(x), sname(y)),
             [h.make_node("Where", ["c", "x", "y"], ["z"])], [("c", B, c), ("x", F, x), ("y", F, y)],
             [("z", F)])


# ---- MatMul / Gemm: each of M, N, K = 0, batched, constant weights (o2c.Gemm epilogues) ---------
def gemm():
    mm = [([0, 4], [4, 3]), ([2, 4], [4, 0]), ([2, 0], [0, 3]), ([0, 0], [0, 3]),
          ([0, 2, 4], [4, 3]), ([3, 0, 4], [3, 4, 5]), ([3, 2, 4], [3, 4, 0]), ([3, 2, 0], [3, 0, 5]),
          ([3, 2, 0], [0, 5]), ([2, 3, 2, 0], [1, 3, 0, 5]), ([0], [0, 3]), ([4], [4, 0]),
          ([2, 0], [0]), ([3, 0, 2, 4], [1, 4, 5]), ([9, 20], [20, 0]), ([9, 0], [0, 20]),
          ([16, 0], [0, 32])]
    for a, b in mm:
        case("gemm", "matmul_%s_%s" % (sname(a), sname(b)), [h.make_node("MatMul", ["a", "b"], ["y"])],
             [("a", F, a), ("b", F, b)], [("y", F)])
    # constant weights: the linear fusions (o2c.Gemm, bias / activation / residual epilogues)
    for x, (k, n) in [([0, 4], (4, 3)), ([2, 0], (0, 3)), ([2, 4], (4, 0)), ([2, 0, 4], (4, 3)),
                      ([2, 3, 0], (0, 20))]:
        w, bias = data(F, [k, n]), data(F, [n])
        nm = "%s_w%dx%d" % (sname(x), k, n)
        case("gemm", "linear_" + nm,
             [h.make_node("MatMul", ["x", "w"], ["p"]), h.make_node("Add", ["p", "b"], ["q"]),
              h.make_node("Relu", ["q"], ["y"])], [("x", F, x)], [("y", F)],
             [const("w", w), const("b", bias)])
        r = list(x[:-1]) + [n]
        case("gemm", "linres_" + nm,
             [h.make_node("MatMul", ["x", "w"], ["p"]), h.make_node("Add", ["p", "b"], ["q"]),
              h.make_node("Add", ["q", "r"], ["y"])], [("x", F, x), ("r", F, r)], [("y", F)],
             [const("w", w), const("b", bias)])
        w2 = data(F, [k, n])
        case("gemm", "batched_" + nm,
             [h.make_node("MatMul", ["x", "w"], ["y1"]), h.make_node("MatMul", ["x", "w2"], ["y2"])],
             [("x", F, x)], [("y1", F), ("y2", F)], [const("w", w), const("w2", w2)])
    # Gemm-13: bias broadcast, alpha / beta, transA / transB, C as input or constant
    for m, k, n in [(0, 4, 3), (2, 0, 3), (2, 4, 0), (0, 0, 3), (17, 0, 33)]:
        for ta, tb in [(0, 0), (1, 1)]:
            a = [k, m] if ta else [m, k]
            b = [n, k] if tb else [k, n]
            nm = "%dx%dx%d_t%d%d" % (m, k, n, ta, tb)
            case("gemm", "gemm_c_" + nm,
                 [h.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=2.0, beta=0.5, transA=ta,
                              transB=tb)],
                 [("a", F, a), ("b", F, b)], [("y", F)], [const("c", data(F, [n]))])
            case("gemm", "gemm_cin_" + nm,
                 [h.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb)],
                 [("a", F, a), ("b", F, b), ("c", F, [m, 1])], [("y", F)])
            case("gemm", "gemm_constb_" + nm,
                 [h.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb, beta=1.5)],
                 [("a", F, a)], [("y", F)], [const("b", data(F, b)), const("c", data(F, [1, n]))])
        case("gemm", "gemm_noc_%dx%dx%d" % (m, k, n), [h.make_node("Gemm", ["a", "b"], ["y"])],
             [("a", F, [m, k]), ("b", F, [k, n])], [("y", F)])


# ---- attention-like: MatMul -> scale -> Softmax -> MatMul (each dim 0 in turn) ------------------
def attention():
    for bq, hq, sq, sk, d in [(0, 2, 4, 5, 8), (1, 0, 4, 5, 8), (1, 2, 0, 5, 8), (1, 2, 4, 0, 8),
                              (1, 2, 4, 5, 0)]:
        nm = "%d_%d_%d_%d_%d" % (bq, hq, sq, sk, d)
        case("attention", "sdpa_" + nm,
             [h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
              h.make_node("MatMul", ["q", "kt"], ["s"]), h.make_node("Mul", ["s", "sc"], ["ss"]),
              h.make_node("Softmax", ["ss"], ["p"], axis=-1), h.make_node("MatMul", ["p", "v"], ["y"])],
             [("q", F, [bq, hq, sq, d]), ("k", F, [bq, hq, sk, d]), ("v", F, [bq, hq, sk, d])],
             [("y", F)], [const("sc", np.float32(0.35))], tol=(1e-5, 1e-4))
        # the head split / merge of an exported attention block around the same core
        e = hq * d
        az = int(0 in (bq, sq, sk, hq, d))  # a literal 0 in a target shape needs allowzero=1
        case("attention", "heads_" + nm,
             [h.make_node("Reshape", ["q", "sh"], ["q4"], allowzero=az),
              h.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
              h.make_node("Reshape", ["k", "shk"], ["k4"], allowzero=az),
              h.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
              h.make_node("Reshape", ["v", "shk"], ["v4"], allowzero=az), h.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
              h.make_node("MatMul", ["qh", "kh"], ["s"]), h.make_node("Mul", ["s", "sc"], ["ss"]),
              h.make_node("Softmax", ["ss"], ["p"], axis=-1), h.make_node("MatMul", ["p", "vh"], ["o"]),
              h.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
              h.make_node("Reshape", ["ot", "sho"], ["y"], allowzero=az)],
             [("q", F, [bq, sq, e]), ("k", F, [bq, sk, e]), ("v", F, [bq, sk, e])], [("y", F)],
             [const("sc", np.float32(0.35)), const("sh", np.array([bq, sq, hq, d], np.int64)),
              const("shk", np.array([bq, sk, hq, d], np.int64)),
              const("sho", np.array([bq, sq, e], np.int64))], tol=(1e-5, 1e-4))


# ---- convolution and pooling --------------------------------------------------------------------
def conv():
    for x, w, extra in [([0, 3, 5, 5], [4, 3, 3, 3], {}), ([1, 3, 5, 5], [0, 3, 3, 3], {}),
                        ([1, 0, 5, 5], [4, 0, 3, 3], {}), ([1, 3, 0, 5], [4, 3, 1, 1], {}),
                        ([1, 3, 5, 0], [4, 3, 1, 1], {}), ([0, 4, 5, 5], [4, 1, 3, 3], {"group": 4}),
                        ([1, 3, 0, 5], [4, 3, 3, 3], {"pads": [1, 1, 1, 1]}), ([0, 3, 7], [4, 3, 3], {}),
                        ([1, 0, 7], [5, 0, 3], {})]:
        nm = "%s_w%s" % (sname(x), sname(w)) + ("_g%d" % extra["group"] if "group" in extra else "") + \
             ("_p" if "pads" in extra else "")
        # an empty spatial input: onnx2cl refuses it as onnxruntime does (README limitations)
        sp = 0 not in x[2:]
        case("conv", "conv_" + nm, [h.make_node("Conv", ["x", "w", "b"], ["y"], **extra)],
             [("x", F, x)], [("y", F)], [const("w", data(F, w)), const("b", data(F, [w[0]]))],
             tol=(1e-5, 1e-4), keep=sp)
        case("conv", "convrelu_" + nm,
             [h.make_node("Conv", ["x", "w"], ["c"], **extra), h.make_node("Relu", ["c"], ["y"])],
             [("x", F, x)], [("y", F)], [const("w", data(F, w))], tol=(1e-5, 1e-4), keep=sp)
    for x, w in [([0, 3, 4, 4], [3, 2, 3, 3]), ([1, 3, 4, 4], [3, 0, 3, 3]), ([1, 0, 4, 4], [0, 2, 3, 3])]:
        case("conv", "convt_%s_w%s" % (sname(x), sname(w)),
             [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])], [("x", F, x)], [("y", F)],
             [const("w", data(F, w))], tol=(1e-5, 1e-4))


def pool():
    for s in zero_each([2, 3, 4, 4]):
        for op, at in [("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
                       ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
                       ("GlobalAveragePool", {}), ("GlobalMaxPool", {})]:
            case("pool", "%s_%s" % (op.lower(), sname(s)), [h.make_node(op, ["x"], ["y"], **at)],
                 [("x", F, s)], [("y", F)], keep=0 not in s[2:])


# ---- normalizations and Softmax -----------------------------------------------------------------
def norm():
    for s in zero_each([2, 3, 4]):
        c = s[-1]
        case("norm", "layernorm_%s" % sname(s),
             [h.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
             [("x", F, s)], [("y", F)], [const("g", data(F, [c])), const("b", data(F, [c]))], tol=(1e-5, 1e-4))
        for ax in (-1, 1):
            case("norm", "softmax_a%d_%s" % (ax, sname(s)), [h.make_node("Softmax", ["x"], ["y"], axis=ax)],
                 [("x", F, s)], [("y", F)])
            case("norm", "logsoftmax_a%d_%s" % (ax, sname(s)),
                 [h.make_node("LogSoftmax", ["x"], ["y"], axis=ax)], [("x", F, s)], [("y", F)])
    for s in zero_each([2, 4, 3, 3]):
        c = s[1]
        case("norm", "instnorm_%s" % sname(s),
             [h.make_node("InstanceNormalization", ["x", "g", "b"], ["y"], epsilon=1e-5)],
             [("x", F, s)], [("y", F)], [const("g", data(F, [c])), const("b", data(F, [c]))], tol=(1e-5, 1e-4))
        case("norm", "batchnorm_%s" % sname(s),
             [h.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], epsilon=1e-5)],
             [("x", F, s)], [("y", F)],
             [const("g", data(F, [c])), const("b", data(F, [c])), const("m", data(F, [c])),
              const("v", np.abs(data(F, [c])) + 0.5)], tol=(1e-5, 1e-4))
        if c % 2 == 0:
            case("norm", "groupnorm_%s" % sname(s),
                 [h.make_node("GroupNormalization", ["x", "g", "b"], ["y"], num_groups=2, epsilon=1e-5)],
                 [("x", F, s)], [("y", F)], [const("g", data(F, [c])), const("b", data(F, [c]))],
                 opset=21, tol=(1e-5, 1e-4))
            case("norm", "groupnorm18_%s" % sname(s),
                 [h.make_node("GroupNormalization", ["x", "g", "b"], ["y"], num_groups=2, epsilon=1e-5)],
                 [("x", F, s)], [("y", F)], [const("g", data(F, [2])), const("b", data(F, [2]))],
                 opset=18, tol=(1e-5, 1e-4))
        # the exported GroupNorm form: Reshape -> InstanceNorm -> Reshape -> * g + b (fused)
        if s[1] != 0:
            case("norm", "gn_export_%s" % sname(s),
                 [h.make_node("Reshape", ["x", "sh"], ["r"]),
                  h.make_node("InstanceNormalization", ["r", "one", "zero"], ["i"], epsilon=1e-5),
                  h.make_node("Reshape", ["i", "shx"], ["ib"], allowzero=1), h.make_node("Mul", ["ib", "g"], ["m"]),
                  h.make_node("Add", ["m", "b"], ["y"])],
                 [("x", F, s)], [("y", F)],
                 [const("sh", np.array([s[0], 2, -1] if s[0] else [0, 2, 0], np.int64)),
                  const("shx", np.array(s, np.int64)),
                  const("one", np.ones(2, np.float32)), const("zero", np.zeros(2, np.float32)),
                  const("g", data(F, [c, 1, 1])), const("b", data(F, [c, 1, 1]))], tol=(1e-5, 1e-4))


# ---- reductions: empty output, or an empty reduced set (ONNX: the identity of the reduction) ----
def reduce():
    ops = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
           "ReduceLogSumExp", "ReduceSumSquare", "ReduceL1"]
    for op in ops:
        for s, axes in [([2, 0], [1]), ([0, 3], [1]), ([0, 3], [0]), ([2, 0, 3], [1]), ([2, 0, 3], [0, 2]),
                        ([2, 0], None)]:
            for kd in ((0, 1) if axes == [1] else (1,)):  # keepdims both ways on the axis-1 forms
                ins = ["x", "ax"] if axes is not None else ["x"]
                inits = [const("ax", np.array(axes, np.int64))] if axes is not None else []
                # ReduceMean of an empty set: ONNX-18 says "undefined"; onnx2cl gives NaN (0/0,
                # as onnx.reference and numpy; tests/conformance/make_extra.py), onnxruntime 0
                case("reduce", "%s_%s_a%s_k%d" % (op.lower(), sname(s), "".join(map(str, axes or ["all"])), kd),
                     [h.make_node(op, ins, ["y"], keepdims=kd)], [("x", F, s)], [("y", F)], inits,
                     ref="onnx" if op == "ReduceMean" else "ort")
    for op in ["ArgMax", "ArgMin"]:
        for s, ax in [([0, 3], 1), ([2, 0, 3], 2), ([2, 0], 1)]:
            case("reduce", "%s_%s_a%d" % (op.lower(), sname(s), ax), [h.make_node(op, ["x"], ["y"], axis=ax)],
                 [("x", F, s)], [("y", I64)])


# ---- data movement --------------------------------------------------------------------------------
def movement():
    for a, b, ax in [([2, 0], [2, 3], 1), ([0, 3], [2, 3], 0), ([0, 3], [0, 3], 0), ([2, 0], [2, 0], 1),
                     ([2, 3], [0, 3], 0), ([2, 0, 4], [2, 3, 4], 1)]:
        case("move", "concat_%s_%s_a%d" % (sname(a), sname(b), ax),
             [h.make_node("Concat", ["a", "b"], ["y"], axis=ax)], [("a", F, a), ("b", F, b)], [("y", F)])
        case("move", "concat3_%s_%s_a%d" % (sname(a), sname(b), ax),
             [h.make_node("Relu", ["a"], ["ra"]), h.make_node("Concat", ["b", "ra", "b"], ["y"], axis=ax)],
             [("a", F, a), ("b", F, b)], [("y", F)])
    for s, st, en, ax in [([4, 5], [2], [2], [0]), ([4, 5], [5], [10], [1]), ([0, 5], [0], [3], [1]),
                          ([4, 0], [1], [3], [0]), ([4, 5], [3], [1], [0]), ([4, 5, 6], [0, 2], [4, 2], [0, 2])]:
        case("move", "slice_%s_%s_%s" % (sname(s), "_".join(map(str, st)), "_".join(map(str, en))),
             [h.make_node("Slice", ["x", "st", "en", "ax"], ["y"])], [("x", F, s)], [("y", F)],
             [const("st", np.array(st, np.int64)), const("en", np.array(en, np.int64)),
              const("ax", np.array(ax, np.int64))])
    for d, ishape, ax in [([4, 3], [0], 0), ([4, 3], [2, 0], 0), ([4, 3], [0], 1), ([0, 3], [2], 1),
                          ([4, 0], [2], 0), ([4, 3], [], 0)]:
        idx = rng.integers(0, max(1, d[ax]), ishape).astype(np.int64) if d[ax] else np.zeros(ishape, np.int64)
        nm = "%s_i%s_a%d" % (sname(d), sname(ishape), ax)
        case("move", "gather_" + nm, [h.make_node("Gather", ["x", "i"], ["y"], axis=ax)],
             [("x", F, d), ("i", I64, ishape)], [("y", F)], feeds={"i": idx, "x": data(F, d)})
        case("move", "gatherc_" + nm, [h.make_node("Gather", ["x", "i"], ["y"], axis=ax)],
             [("x", F, d)], [("y", F)], [const("i", idx)])
    for s in zero_each([2, 3, 4]):
        case("move", "transpose_%s" % sname(s), [h.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])],
             [("x", F, s)], [("y", F)])
        case("move", "flatten_%s" % sname(s), [h.make_node("Flatten", ["x"], ["y"], axis=1)],
             [("x", F, s)], [("y", F)])
        # a 0 in the shape input is that dim of x unless allowzero=1 (then a literal 0)
        case("move", "reshape_%s" % sname(s), [h.make_node("Relu", ["x"], ["r"]),
                                               h.make_node("Reshape", ["r", "sh"], ["y"], allowzero=1)],
             [("x", F, s)], [("y", F)], [const("sh", np.array([s[2], s[1], s[0]], np.int64))])
        case("move", "unsqueeze_%s" % sname(s), [h.make_node("Unsqueeze", ["x", "ax"], ["u"]),
                                                 h.make_node("Neg", ["u"], ["y"])],
             [("x", F, s)], [("y", F)], [const("ax", np.array([1], np.int64))])
    case("move", "reshape_allowzero", [h.make_node("Reshape", ["x", "sh"], ["y"], allowzero=1)],
         [("x", F, [0, 3])], [("y", F)], [const("sh", np.array([3, 0], np.int64))])
    for x, shp in [([1, 3], [0, 3]), ([0, 1], [0, 4]), ([2, 1], [0, 2, 3]), ([0, 3], [2, 1, 3]), ([3], [0, 3])]:
        case("move", "expand_%s_%s" % (sname(x), sname(shp)), [h.make_node("Expand", ["x", "sh"], ["y"])],
             [("x", F, x)], [("y", F)], [const("sh", np.array(shp, np.int64))])
    for s, rep in [([0, 3], [2, 2]), ([2, 3], [0, 1]), ([2, 0], [1, 3]), ([2, 3], [1, 0])]:
        case("move", "tile_%s_r%s" % (sname(s), sname(rep)), [h.make_node("Tile", ["x", "r"], ["y"])],
             [("x", F, s)], [("y", F)], [const("r", np.array(rep, np.int64))])
    for s, pads, mode in [([0, 3], [0, 1, 0, 1], "constant"), ([2, 0], [0, 1, 0, 1], "constant"),
                          ([0, 3], [1, 0, 1, 0], "constant"), ([2, 0], [1, 1, 1, 1], "constant"),
                          ([0, 3], [0, 1, 0, 1], "reflect"), ([0, 3], [0, 1, 0, 1], "edge"),
                          ([0, 2, 3], [0, 0, 1, 0, 0, 1], "constant")]:
        case("move", "pad_%s_%s_%s" % (sname(s), "".join(map(str, pads)), mode),
             [h.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)], [("x", F, s)], [("y", F)],
             [const("p", np.array(pads, np.int64)), const("v", np.float32(1.5))])
    for s, ax, split in [([4, 0], 0, [2, 2]), ([0, 4], 1, [2, 2]), ([3, 4], 1, [0, 4]), ([0, 4], 0, [0, 0]),
                         ([3, 4], 0, [3, 0])]:
        case("move", "split_%s_a%d_%s" % (sname(s), ax, "_".join(map(str, split))),
             [h.make_node("Split", ["x", "sp"], ["y0", "y1"], axis=ax)], [("x", F, s)], [("y0", F), ("y1", F)],
             [const("sp", np.array(split, np.int64))])
    for s in zero_each([1, 2, 3, 4]):
        for mode, scales in [("nearest", [1, 1, 2, 2]), ("linear", [1, 1, 2, 0.5])]:
            case("move", "resize_%s_%s" % (mode, sname(s)),
                 [h.make_node("Resize", ["x", "", "sc"], ["y"], mode=mode)], [("x", F, s)], [("y", F)],
                 [const("sc", np.array(scales, np.float32))])
        case("move", "resize_sizes_%s" % sname(s),
             [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest")], [("x", F, s)], [("y", F)],
             [const("sz", np.array([s[0], s[1], 4, 6], np.int64))])
    # shape computations over empty tensors
    for s in zero_each([2, 3]):
        case("move", "shape_cos_%s" % sname(s),
             [h.make_node("Shape", ["x"], ["s"]), h.make_node("ConstantOfShape", ["s"], ["c"],
                                                               value=h.make_tensor("", F, [1], [2.0])),
              h.make_node("Add", ["c", "x"], ["y"])], [("x", F, s)], [("y", F)])


def main():
    shutil.rmtree(CASES, ignore_errors=True)
    os.makedirs(CASES)
    for fam in (unary, binary, gemm, attention, conv, pool, norm, reduce, movement):
        fam()
    with open(os.path.join(CASES, "ORT_REFUSED.txt"), "w") as f:
        f.write("# cases onnxruntime %s refuses (not written; generated by make_models.py)\n" % ort.__version__)
        for r in refused:
            f.write(r + "\n")
    print("%d cases, %d refused by onnxruntime (cases/ORT_REFUSED.txt)" % (len(written), len(refused)))


if __name__ == "__main__":
    main()
