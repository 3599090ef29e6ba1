#!/usr/bin/env python3
"""name_map.py — write the name map of an ONNX export (docs/engine.md, layer 2): for each
initializer, the component and canonical diffusers key(s) of the torch module it holds, and the
transform from those keys to the initializer.

What it does
  `name_map(component_module, onnx_model)` matches every float initializer's values with the
  module's state_dict() tensors (what diffusers `save_pretrained` writes; canonical keys carry
  no prefix): equal values and dims -> copy; equal values, other dims -> reshape (the exporter's
  folded `Mul(gamma)` of GroupNorm is [C,1,1]); a 2-D key equal to the transposed initializer ->
  transpose (the TorchScript exporter's `onnx::MatMul_1624` linear weights). An initializer
  equal to several keys (the exporter deduplicated identical tensors) lists them all. Float
  initializers equal to no key (exporter constants: folded tables, shape math) and non-float
  initializers are `-` lines: the graph keeps them.
  `write_name_map(path, ...)` writes the file: one line per initializer,
  `<initializer>\t<component>\t<key>[,<key>...]\t<transform>`.
  export_sd.export_one calls it for every export (model.namemap next to model.onnx).
  Run as a script, it (re)writes the name maps of existing exports by rebuilding their modules
  with the same seed (export_sd / export_family builders), loading the committed model.onnx (not
  re-exported), and refusing when over 1% of the float initializer elements match no key (the
  module is not the one that was exported).

Assumes
  torch, numpy, onnx (and diffusers/transformers for the builders); the module in eval mode with
  the weights that were exported; float32 (or float16, compared in that dtype) initializers.

Usage
  python3 models/name_map.py --size tiny [--models unet,vae_decoder,text_encoder]
                             [--exporter torchscript|dynamo|both]
"""

import argparse
import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# The diffusers component each exported model belongs to (folder names of a diffusers
# checkpoint; the key tables of the store use the same words).
COMPONENTS = {
    "unet": "unet", "vae_decoder": "vae", "vae_encoder": "vae", "text_encoder": "text_encoder",
    "sd21_unet": "unet", "sdxl_unet": "unet", "vae16_decoder": "vae", "taesd_decoder": "vae",
    "clip_g": "text_encoder_2", "t5_encoder": "text_encoder_3", "sd3_transformer": "transformer",
    "flux_transformer": "transformer", "ldm_attnblock": "vae",
}
HEADER = ("# onnx2cl name map: <initializer>\\t<component>\\t<key>[,<key>...]\\t<transform> "
          "(docs/engine.md)\n")


def component_module(wrapper):
    """The module whose state_dict() holds canonical keys: the single child of an export wrapper
    without parameters of its own (UNetWrapper.unet, VaeDecoderWrapper.vae, ...), else itself."""
    kids = list(wrapper.children())
    own = list(wrapper.named_parameters(recurse=False)) + list(wrapper.named_buffers(recurse=False))
    if len(kids) == 1 and not own:
        return kids[0]
    return wrapper


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).digest()


def name_map(module, model):
    """[(initializer, keys, transform)] for every initializer of the onnx ModelProto `model`
    (external data loaded), matched against module.state_dict(); keys == [] for kept ones."""
    from onnx import numpy_helper
    by_digest = {}  # (dtype, digest of values in row-major order) -> [(key, shape, transposed)]
    for key, t in module.state_dict().items():
        if not t.is_floating_point():
            continue
        a = t.detach().cpu().numpy()
        for dt in (np.float32, np.float16):
            x = a.astype(dt)
            by_digest.setdefault((dt, _digest(x)), []).append((key, x.shape, False))
            if x.ndim == 2 and min(x.shape) > 1:
                by_digest.setdefault((dt, _digest(x.T)), []).append((key, x.T.shape, True))
    out = []
    for init in model.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype not in (np.float32, np.float16) or a.size == 0:
            out.append((init.name, [], "-"))
            continue
        hits = by_digest.get((a.dtype.type, _digest(a)), [])
        plain = [(k, s) for k, s, tr in hits if not tr]
        trans = [(k, s) for k, s, tr in hits if tr and tuple(s) == a.shape]
        if plain:
            same = all(tuple(s) == a.shape for _, s in plain)
            out.append((init.name, [k for k, _ in plain], "copy" if same else "reshape"))
        elif trans:
            out.append((init.name, [k for k, _ in trans], "transpose"))
        else:
            out.append((init.name, [], "-"))
    return out


def write_name_map(path, module, model, component):
    """Writes the name map of `model` (onnx ModelProto with its data) for `module` (the component
    module) to path; returns (mapped, kept_float_sizes): kept_float_sizes lists the element counts
    of float initializers that matched no key."""
    from onnx import numpy_helper
    rows = name_map(module, model)
    sizes = {i.name: int(np.prod(i.dims, dtype=np.int64)) for i in model.graph.initializer}
    floats = {i.name for i in model.graph.initializer
              if numpy_helper.to_array(i).dtype in (np.float32, np.float16)}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(HEADER)
        for name, keys, tr in rows:
            if "\t" in name or "\n" in name:
                raise ValueError(f"initializer name {name!r} has a tab or newline")
            if keys:
                f.write(f"{name}\t{component}\t{','.join(keys)}\t{tr}\n")
            else:
                f.write(f"{name}\t-\t-\t-\n")
    os.replace(tmp, path)
    mapped = sum(1 for _, k, _ in rows if k)
    kept = [sizes[n] for n, k, _ in rows if not k and n in floats]
    return mapped, kept


def keys_used(path):
    """The canonical keys a name map file names."""
    used = set()
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            _, comp, keys, _ = line.rstrip("\n").split("\t")
            if comp != "-":
                used.update(keys.split(","))
    return used


def main():
    sys.path.insert(0, HERE)
    import onnx
    import torch
    import export_sd
    import export_family
    builders = dict(export_sd.BUILDERS)
    builders.update(export_family.BUILDERS)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=["tiny", "full"], default="tiny")
    ap.add_argument("--models", default="unet,vae_decoder,text_encoder")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo", "both"], default="both")
    ap.add_argument("--seed", type=int, default=export_sd.DEFAULT_SEED)
    args = ap.parse_args()
    names = export_sd.parse_models(ap, args.models, builders)
    exporters = ["torchscript", "dynamo"] if args.exporter == "both" else [args.exporter]
    bad = 0
    for n in names:
        rng = np.random.default_rng(args.seed)
        module = builders[n](args.size, args.seed, rng)[0].eval()
        comp = component_module(module)
        for e in exporters:
            mdir = os.path.join(HERE, args.size, n + ("_dynamo" if e == "dynamo" else ""))
            mpath = os.path.join(mdir, "model.onnx")
            if not os.path.exists(mpath):
                print(f"[{n}] {mpath}: missing, skipped")
                continue
            model = onnx.load(mpath)
            out = os.path.join(mdir, "model.namemap")
            mapped, kept = write_name_map(out, comp, model, COMPONENTS.get(n, "model"))
            total = sum(int(np.prod(i.dims, dtype=np.int64)) for i in model.graph.initializer
                        if i.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16))
            print(f"[{n}/{e}] {out}: {mapped} initializers mapped, {len(kept)} float kept "
                  f"({sum(kept)} of {total} float elements; largest {sorted(kept)[-3:]})")
            if sum(kept) > 0.01 * total:
                print(f"[{n}/{e}] FAIL: over 1% of the float elements match no key: the rebuilt "
                      "module is not the exported one")
                bad += 1
            del model
            torch.cuda.empty_cache() if torch.cuda.is_available() else None
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
