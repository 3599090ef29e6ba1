#!/usr/bin/env python3
"""make_refs.py — inputs and onnxruntime references for the one-weights-file-many-shapes tests
(tests/weights_from/shapes.sh): each bundled tiny model (models/tiny/<m>) at a second --shape,
other than the one of its committed PyTorch reference. Run once; the .npy files are committed.
onnxruntime is within 3e-6 of PyTorch on these models (models/README.md).
Usage: python3 make_refs.py   (from anywhere; writes beside this script)"""
import os

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "..", "..", "..", "models", "tiny")
rng = np.random.default_rng(20261201)
CASES = {
    "vae_decoder": {"latent_sample": rng.standard_normal((1, 4, 16, 24), dtype=np.float32)},
    "unet": {
        "sample": rng.standard_normal((2, 4, 8, 8), dtype=np.float32),
        "timestep": np.array([421.0], dtype=np.float32),
        "encoder_hidden_states": rng.standard_normal((2, 16, 32), dtype=np.float32),
    },
    "text_encoder": {"input_ids": rng.integers(0, 1000, (2, 16), dtype=np.int64)},
}
for model, feeds in CASES.items():
    sess = ort.InferenceSession(os.path.join(TINY, model, "model.onnx"),
                                providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    for sub in ("inputs", "ref"):
        os.makedirs(os.path.join(HERE, model, sub), exist_ok=True)
    for name, value in feeds.items():
        np.save(os.path.join(HERE, model, "inputs", name + ".npy"), value)
    for o, value in zip(sess.get_outputs(), outs):
        np.save(os.path.join(HERE, model, "ref", o.name.replace("/", "_") + ".npy"), value)
    print(model, {k: v.shape for k, v in feeds.items()},
          {o.name: v.shape for o, v in zip(sess.get_outputs(), outs)})
