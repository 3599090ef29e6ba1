#!/usr/bin/env python3
"""make_fp16.py — float16 copies of the tiny SD exports, for the float16 compile path.

Converts models/tiny/<model>/model.onnx with onnxconverter-common's
float16.convert_float_to_float16 (weights, activations, inputs and outputs in float16; the
converter saturates the causal mask's -inf to -1e4), copies the inputs, and writes the
references as the float32 PyTorch references rounded to float16 (the truth the float16 model
approximates). Only the CLIP text encoder is converted here: the tiny UNet and VAE decoder come
from `export_sd.py --fp16` (torch module.half()), while for CLIP that exporter writes a
LayerNormalization with mixed float32/float16 inputs (invalid ONNX; onnxruntime refuses it).

Usage: python3 models/make_fp16.py   (needs: pip install onnx onnxconverter-common numpy)
Writes models/tiny/text_encoder_fp16/{model.onnx, inputs/, ref/, meta.json}.
"""
import json
import os
import shutil

import numpy as np
import onnx
import onnxconverter_common
from onnxconverter_common import float16

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny")

for name in ["text_encoder"]:
    src, dst = os.path.join(ROOT, name), os.path.join(ROOT, name + "_fp16")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "ref"))
    m16 = float16.convert_float_to_float16(onnx.load(os.path.join(src, "model.onnx")), keep_io_types=False)
    onnx.checker.check_model(m16)
    onnx.save(m16, os.path.join(dst, "model.onnx"))
    shutil.copytree(os.path.join(src, "inputs"), os.path.join(dst, "inputs"))
    for f in sorted(os.listdir(os.path.join(src, "ref"))):
        np.save(os.path.join(dst, "ref", f), np.load(os.path.join(src, "ref", f)).astype(np.float16))
    with open(os.path.join(dst, "meta.json"), "w") as f:
        json.dump({"model": name + "_fp16", "from": f"models/tiny/{name}",
                   "converter": f"onnxconverter-common {onnxconverter_common.__version__} "
                                "float16.convert_float_to_float16(keep_io_types=False)",
                   "ref": "the float32 PyTorch references rounded to float16",
                   "onnx2cl_shape_flags": json.load(open(os.path.join(src, "meta.json")))[
                       "onnx2cl_shape_flags"]}, f, indent=1)
    print(dst)
