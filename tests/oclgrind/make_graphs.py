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
Run: python3 tests/oclgrind/make_graphs.py
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


if __name__ == "__main__":
    write("conv_zoo", *conv_zoo())
    unet_6x6()
