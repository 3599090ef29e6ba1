#!/usr/bin/env python3
"""finetune.py ONNX2CL COMPARE MODEL_DIR WORK "FLAGS_BUILD" "FLAGS_WEIGHTS"

`onnx2cl FT.onnx --weights-only` for an existing build, from a re-export of the model with other
weights, written at another --shape than the build's: the build then gives FT's outputs.

MODEL_DIR/model.onnx is compiled with FLAGS_BUILD (its --shape) to WORK/m. FT.onnx stands for a
fine-tune exported again: every float initializer changed (x * 1.1 + 0.01 * N(0,1), seed 7),
every node and initializer renamed, value_info dropped. `onnx2cl FT.onnx --weights-only` with
FLAGS_WEIGHTS (another --shape) writes WORK/ft.weights; WORK/m runs on MODEL_DIR/inputs with it
and must match onnxruntime on FT.onnx (|d| <= 1e-4 + 1e-3 |ref|), and must differ from the
original model's outputs (the new values are used). A structurally different model (the first
Mul or Add reading an initializer made the other op: same tensors, other computation) is
refused naming the tensor and its node, nothing written.
Needs numpy, onnx and onnxruntime (as tests/imports): without them the test fails, never skips.
"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

o2c, compare, model_dir, work, flags_build, flags_weights = sys.argv[1:7]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "out"))
fails = []


def run(cmd, want_rc=0):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != want_rc:
        print(p.stdout + p.stderr)
        sys.exit(f"FAIL: exit {p.returncode} (want {want_rc}): {' '.join(cmd)}")
    return p


def reexport(path, swap_op=False):
    m = onnx.load(os.path.join(model_dir, "model.onnx"))
    g = m.graph
    rng = np.random.default_rng(7)
    rename = {}
    for k, init in enumerate(g.initializer):
        a = numpy_helper.to_array(init)
        if a.dtype.kind == "f":
            a = (a * 1.1 + 0.01 * rng.standard_normal(a.shape)).astype(a.dtype)
        rename[init.name] = f"ft_w{k}"
        init.CopyFrom(numpy_helper.from_array(a, rename[init.name]))
    for k, n in enumerate(g.node):
        n.name = f"ft_node{k}"
        if swap_op and n.op_type in ("Mul", "Add") and any(x in rename for x in n.input):
            n.op_type = "Add" if n.op_type == "Mul" else "Mul"
            swap_op = False
        n.input[:] = [rename.get(x, x) for x in n.input]
    del g.value_info[:]
    onnx.save(m, path)


ft = os.path.join(work, "ft.onnx")
reexport(ft)
m_exe = os.path.join(work, "m")
run([o2c, os.path.join(model_dir, "model.onnx"), "-o", m_exe] + flags_build.split())
run([o2c, ft, "--weights-only", "-o", os.path.join(work, "ft.weights")] + flags_weights.split())
feeds = {}
args = []
for f in sorted(glob.glob(os.path.join(model_dir, "inputs", "*.npy"))):
    name = os.path.basename(f)[:-4]
    feeds[name] = np.load(f)
    args += ["--input", f"{name}={f}"]
sess = ort.InferenceSession(ft, providers=["CPUExecutionProvider"])
for o, value in zip(sess.get_outputs(), sess.run(None, feeds)):
    np.save(os.path.join(work, "ref_" + o.name.replace("/", "_") + ".npy"), value)
run([m_exe] + args + ["--weights", os.path.join(work, "ft.weights"), "--output-dir",
                      os.path.join(work, "out")])
for o in sess.get_outputs():
    n = o.name.replace("/", "_") + ".npy"
    got, ref = os.path.join(work, "out", n), os.path.join(work, "ref_" + n)
    p = subprocess.run([compare, got, ref, "1e-4", "1e-3"], capture_output=True, text=True)
    print(p.stdout.strip())
    if p.returncode != 0:
        fails.append(f"{n} with the fine-tune's weights")
    own = os.path.join(model_dir, "ref", n)
    if np.allclose(np.load(got), np.load(own), atol=1e-3, rtol=1e-2):
        fails.append(f"{n}: the fine-tune's weights gave the original model's outputs")
# another structure: refused by the executable, naming the first differing tensor and node
bad = os.path.join(work, "bad.onnx")
reexport(bad, swap_op=True)
run([o2c, bad, "--weights-only", "-o", os.path.join(work, "bad.weights")] + flags_weights.split())
p = run([m_exe] + args + ["--weights", os.path.join(work, "bad.weights"), "--output-dir",
                          os.path.join(work, "refused")], want_rc=1)
msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
print("refused as expected:", msg)
if "does not fit model 'm'" not in msg or "they first differ at stored tensor" not in msg or \
        "(node '" not in msg or os.path.exists(os.path.join(work, "refused")):
    fails.append(f"another structure: {msg}")
for f in fails:
    print("FAIL:", f)
print("ok" if not fails else f"{len(fails)} failure(s)")
sys.exit(1 if fails else 0)
