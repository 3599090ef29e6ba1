#!/usr/bin/env python3
"""make_graphs.py — small ONNX graphs that put every GPU-class convolution kernel shape through
oclgrind in CI (tests/oclgrind/CMakeLists.txt, test oclgrind.conv_zoo.*).

Why: oclgrind simulates 256-work-item groups slowly (one 64x64x16-tile implicit-GEMM conv launch
with K = 576 takes ~35 s on one core), so the tiny UNet and VAE decoder with --kernels gpu take
10-20 minutes each there (label slow). These graphs keep every conv launch to one or two tiles
and a short K (few input channels) while covering what those models use: 3x3 stride 1 and 2,
1x1, dilation, padding, bias, the SiLU and residual epilogues, output channels that are not a
multiple of any tile or panel (so several weight panel layouts), a grouped conv and a
ConvTranspose (the simpler variants).

Writes graphs/<name>/{model.onnx, inputs/<input>.npy, ref/<output>.npy}; references are
onnxruntime (CPU, graph optimizations disabled) outputs on the committed inputs (numpy
default_rng(seed)). Needs numpy, onnx, onnxruntime; CI only reads the committed files.
Also data/unet_6x6/{inputs,ref}: the tiny UNet (models/tiny/unet/model.onnx, not copied) at a
6x6 latent (its committed timestep and encoder_hidden_states, a new sample), for the whole-model
gpu-class run in CI (oclgrind.unet_6x6.gpu): every GEMM/conv/attention launch then has partial
tiles (36 and 9 positions), and it fits CI's time on oclgrind. onnxruntime reproduces the
PyTorch reference of models/tiny/unet at 16x16 within 2.2e-6.
Also graphs/resize_zoo: integer nearest upsampling (cpu-class resize_nn_up tails and factors).
Run: python3 tests/oclgrind/make_graphs.py [NAME ...]
"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")
rng = np.random.default_rng(20261201)


def weight(name, shape, inits):
    """A float32 initializer NAME of SHAPE, N(0, 1/fan_in), appended to INITS; returns NAME."""
    fan_in = int(np.prod(shape[1:]))
    inits.append(nh.from_array((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name))
    return name


def conv_zoo():
    """x [1,5,9,11] through the conv geometries of an SD UNet/VAE, at tiny channel counts."""
    inits, nodes = [], []

    def conv(x, y, oc, ic, k, bias=True, **attrs):
        ins = [x, weight(y + ".w", [oc, ic // attrs.get("group", 1), k, k], inits)]
        if bias:
            inits.append(nh.from_array(rng.standard_normal(oc).astype(np.float32) / 4, y + ".b"))
            ins.append(y + ".b")
        nodes.append(oh.make_node("Conv", ins, [y], **attrs))

    conv("x", "a0", 32, 5, 3, pads=[1, 1, 1, 1])                      # 3x3 s1, bias
    nodes += [oh.make_node("Sigmoid", ["a0"], ["a0s"]), oh.make_node("Mul", ["a0", "a0s"], ["a"])]  # SiLU
    conv("a", "b", 24, 32, 3, pads=[1, 1, 1, 1], strides=[2, 2])       # 3x3 s2
    conv("b", "c0", 24, 24, 1)                                        # 1x1 + residual
    nodes.append(oh.make_node("Add", ["c0", "b"], ["c"]))
    conv("c", "d", 6, 24, 3, bias=False, pads=[2, 2, 2, 2], dilations=[2, 2])  # dilated, no bias
    conv("x", "e", 10, 5, 3, pads=[1, 1, 1, 1], group=5)              # grouped
    inits.append(nh.from_array((rng.standard_normal([6, 3, 2, 2]) / 4).astype(np.float32), "t.w"))
    nodes.append(oh.make_node("ConvTranspose", ["d", "t.w"], ["t"], strides=[2, 2]))
    conv("t", "u", 3, 3, 3, pads=[1, 1, 1, 1])                        # 3 output channels (conv_out)
    g = oh.make_graph(nodes, "conv_zoo", [oh.make_tensor_value_info("x", TP.FLOAT, [1, 5, 9, 11])],
                      [oh.make_tensor_value_info(n, TP.FLOAT, None) for n in ("u", "e", "c")], inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), {
        "x": rng.standard_normal([1, 5, 9, 11]).astype(np.float32)}


def gpu_zoo():
    """The gpu-class kernels of the tiny UNet/VAE that conv_zoo and the CLIP do not run, small
    enough for -cl-opt-disable: a split-K conv (K = 576 over 2 slices, then gg_conv_reduce), a
    4-channel 1x1 conv (the VAE's post_quant_conv form), attention at head dim 64 (1 head, the
    VAE's) and 32 (2 heads, 4-D: the UNet's mid block), N = 9 queries, S = 13 keys; the 6x6
    UNet's im2col-form 3x3 and 1x1 convs with 16-channel panels; a GEGLU feed-forward (the
    instances of those runs up to tile sizes: the test pins 16x16x4 r4x4)."""
    inits, nodes = [], []
    for y, x, oc, ic, k, pads in (("s", "x", 8, 64, 3, 1), ("o", "p", 4, 4, 1, 0)):
        nodes.append(oh.make_node("Conv", [x, weight(y + ".w", [oc, ic, k, k], inits), y + ".b"], [y],
                                  pads=[pads] * 4))
        inits.append(nh.from_array(rng.standard_normal(oc).astype(np.float32) / 4, y + ".b"))
    for sfx, perm, d in (("", [0, 2, 1], 64), ("2", [0, 1, 3, 2], 32)):
        nodes += [oh.make_node("Transpose", ["k" + sfx], ["kt" + sfx], perm=perm),
                  oh.make_node("MatMul", ["q" + sfx, "kt" + sfx], ["sc" + sfx]),
                  oh.make_node("Mul", ["sc" + sfx, "scale" + sfx], ["sm" + sfx]),
                  oh.make_node("Softmax", ["sm" + sfx], ["pr" + sfx], axis=-1),
                  oh.make_node("MatMul", ["pr" + sfx, "v" + sfx], ["att" + sfx])]
        inits.append(nh.from_array(np.array(1 / np.sqrt(d), np.float32), "scale" + sfx))
    # the 6x6 UNet's 64-channel convs at its 3x3 level: 3x3 and 1x1 in the im2col (k0) form
    # with 16-channel weight panels
    for y, k in (("c3", 3), ("c1", 1)):
        nodes.append(oh.make_node("Conv", ["y3", weight(y + ".w", [64, 32, k, k], inits), y + ".b"], [y],
                                  pads=[k // 2] * 4))
        inits.append(nh.from_array(rng.standard_normal(64).astype(np.float32) / 4, y + ".b"))
    # GEGLU feed-forward (passes/fuse/geglu.c -> gg_fgeglu): (t W + b) split, h * Gelu(g)
    nodes += [oh.make_node("MatMul", ["t", weight("ff.w", [48, 16], inits)], ["ffm"]),
              oh.make_node("Add", ["ffm", "ff.b"], ["ffz"]),
              oh.make_node("Split", ["ffz"], ["ffh", "ffg"], axis=-1, num_outputs=2),
              oh.make_node("Gelu", ["ffg"], ["ffgg"]),
              oh.make_node("Mul", ["ffh", "ffgg"], ["geglu"])]
    inits[-1] = nh.from_array(nh.to_array(inits[-1]).T.copy(), "ff.w")  # [K, 2F] = [16, 48]
    inits.append(nh.from_array(rng.standard_normal(48).astype(np.float32) / 4, "ff.b"))
    shapes = {"x": [1, 64, 3, 3], "p": [1, 4, 5, 7], "q": [1, 9, 64], "k": [1, 13, 64],
              "v": [1, 13, 64], "q2": [1, 2, 9, 32], "k2": [1, 2, 13, 32], "v2": [1, 2, 13, 32],
              "y3": [1, 32, 3, 3], "t": [1, 9, 16]}
    outs = ("s", "o", "att", "att2", "c3", "c1", "geglu")
    g = oh.make_graph(nodes, "gpu_zoo", [oh.make_tensor_value_info(n, TP.FLOAT, s) for n, s in shapes.items()],
                      [oh.make_tensor_value_info(n, TP.FLOAT, None) for n in outs], inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 20)]), {
        n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}


def save_ref(d, name, model_path, feeds):
    """DIR/{inputs,ref}/ (made anew): FEEDS and onnxruntime's outputs of MODEL_PATH on them."""
    for sub in ("inputs", "ref"):
        shutil.rmtree(os.path.join(d, sub), ignore_errors=True)
        os.makedirs(os.path.join(d, sub))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    for k, v in feeds.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v)
    for o, v in zip(sess.get_outputs(), outs):
        np.save(os.path.join(d, "ref", o.name + ".npy"), v)
        print(f"{name}: {o.name} {list(v.shape)}")


def write(name, model, feeds):
    """graphs/NAME/{model.onnx, inputs/, ref/} with onnxruntime references."""
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    save_ref(d, name, os.path.join(d, "model.onnx"), feeds)


def unet_6x6():
    """data/unet_6x6: inputs + onnxruntime reference of the tiny UNet at sample [1,4,6,6]."""
    tiny = os.path.join(os.path.dirname(ROOT), "..", "..", "models", "tiny", "unet")
    feeds = {n: np.load(os.path.join(tiny, "inputs", n + ".npy"))
             for n in ("timestep", "encoder_hidden_states")}
    feeds["sample"] = np.random.default_rng(20261206).standard_normal([1, 4, 6, 6]).astype(np.float32)
    save_ref(os.path.join(os.path.dirname(ROOT), "data", "unet_6x6"), "unet_6x6",
             os.path.join(tiny, "model.onnx"), feeds)


def resize_zoo():
    """Integer nearest upsampling (the cpu class's resize_nn_up, codegen/lower_resize.c): widths
    with vector loops and tails (fw 2: 19 = 4*4 + 3; fw 1: 19 = 8*2 + 3), a factor 3 (element
    loop), 258 input rows (work-groups of 8, the last one partly past the end), float32 and
    uint8 (another element size)."""
    r = np.random.default_rng(20261202)
    cases = [("a", [2, 3, 5, 19], [1, 1, 2, 2], TP.FLOAT), ("b", [1, 3, 86, 5], [1, 1, 2, 2], TP.FLOAT),
             ("c", [2, 3, 5, 7], [1, 1, 3, 3], TP.FLOAT), ("d", [2, 3, 5, 19], [1, 1, 2, 1], TP.FLOAT),
             ("e", [2, 3, 5, 19], [1, 1, 2, 2], TP.UINT8)]
    nodes, inits, ins, outs, feeds = [], [], [], [], {}
    for n, shape, sc, tp in cases:
        inits.append(nh.from_array(np.array(sc, np.float32), "s" + n))
        nodes.append(oh.make_node("Resize", ["x" + n, "", "s" + n], ["y" + n], mode="nearest",
                                  coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
        ins.append(oh.make_tensor_value_info("x" + n, tp, shape))
        outs.append(oh.make_tensor_value_info("y" + n, tp, [a * int(b) for a, b in zip(shape, sc)]))
        feeds["x" + n] = (r.integers(0, 256, shape).astype(np.uint8) if tp == TP.UINT8
                          else r.standard_normal(shape).astype(np.float32))
    g = oh.make_graph(nodes, "resize_zoo", ins, outs, inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 19)]), feeds


if __name__ == "__main__":
    import sys
    # arguments: only these graphs (default: all)
    def wanted(name):
        return len(sys.argv) < 2 or name in sys.argv[1:]
    if wanted("conv_zoo"):
        write("conv_zoo", *conv_zoo())
    if wanted("unet_6x6"):
        unet_6x6()
    if wanted("gpu_zoo"):
        write("gpu_zoo", *gpu_zoo())
    if wanted("resize_zoo"):
        write("resize_zoo", *resize_zoo())
