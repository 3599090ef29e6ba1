#!/usr/bin/env python3
"""export_sd.py — export the Stable Diffusion 1.5 UNet, VAE decoder and CLIP text encoder to ONNX,
with fixed-seed random weights, inputs and PyTorch reference outputs.

What it does
  Builds each model offline from its published configuration (no from_pretrained, no download),
  re-initializes every parameter from a fixed seed (see `reinit`), exports it with the TorchScript
  exporter (torch.onnx.export, dynamo=False, opset 17, dynamic axes, constant folding on) or, with
  `--exporter dynamo`, the dynamo exporter (dynamo=True, its default opset, dynamic shapes; folder
  <model>_dynamo), and writes, for each model:
      models/<size>/<model>/model.onnx          (+ model.onnx.data when saved with external data)
      models/<size>/<model>/inputs/<name>.npy   graph inputs (numpy RNG, fixed seed)
      models/<size>/<model>/ref/<name>.npy      PyTorch outputs for those inputs (fp32, eval mode)
      models/<size>/<model>/model.namemap       initializer -> canonical diffusers key(s) and
                                                transform (models/name_map.py, docs/engine.md)
      models/<size>/<model>/meta.json           names/dtypes/shapes, --shape flags for onnx2cl,
                                                config, versions, seed, op histogram, and the max
                                                abs/rel diff of onnxruntime (CPU) vs PyTorch
  Sizes: `--size tiny` (same block structure as SD 1.5, small widths; committed, a few MB) and
  `--size full` (real SD 1.5 sizes; models/full/ is git-ignored; the UNet is > 2 GB and is saved
  with external data in one file).

Assumes
  python3 with torch, diffusers, transformers, onnx, onnxruntime, numpy (dev machine only: CI never
  runs this script; the committed tiny files are all tests need).

Guarantees
  Same versions + same seed -> same weights, inputs and references. Graph inputs/outputs are named
  as in optimum's SD exports: unet(sample, timestep, encoder_hidden_states) -> out_sample;
  vae_decoder(latent_sample) -> sample; text_encoder(input_ids) -> last_hidden_state,
  pooler_output. Symbolic dims: batch, height, width, sequence (meta.json gives the --shape flags
  that bind them).

Usage
  python3 models/export_sd.py --size tiny [--models unet,vae_decoder,text_encoder]
                              [--external-data] [--out DIR] [--seed N] [--fp16]
                              [--exporter torchscript|dynamo]
"""

import argparse
import gc
import json
import math
import os
import shutil
import sys
import time
from collections import Counter

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
DEFAULT_SEED = 1234

# ----------------------------------------------------------------------------------------------
# Configurations
# ----------------------------------------------------------------------------------------------

# SD 1.5 UNet (runwayml/stable-diffusion-v1-5 unet/config.json, the arguments that matter).
UNET_FULL = dict(
    sample_size=64, in_channels=4, out_channels=4, center_input_sample=False,
    flip_sin_to_cos=True, freq_shift=0,
    down_block_types=["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D",
                      "DownBlock2D"],
    up_block_types=["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D",
                    "CrossAttnUpBlock2D"],
    block_out_channels=[320, 640, 1280, 1280], layers_per_block=2, downsample_padding=1,
    mid_block_scale_factor=1, act_fn="silu", norm_num_groups=32, norm_eps=1e-5,
    cross_attention_dim=768, attention_head_dim=8,  # diffusers: attention_head_dim = number of heads
)
# Tiny UNet: two levels, one cross-attention level, 8 groups (deliberately not 32).
UNET_TINY = dict(
    UNET_FULL,
    sample_size=16,
    down_block_types=["CrossAttnDownBlock2D", "DownBlock2D"],
    up_block_types=["UpBlock2D", "CrossAttnUpBlock2D"],
    block_out_channels=[32, 64], layers_per_block=1, norm_num_groups=8,
    cross_attention_dim=32, attention_head_dim=2,  # 2 heads of dim 16
)

# SD 1.5 VAE (vae/config.json).
VAE_FULL = dict(
    in_channels=3, out_channels=3, latent_channels=4, sample_size=512,
    down_block_types=["DownEncoderBlock2D"] * 4, up_block_types=["UpDecoderBlock2D"] * 4,
    block_out_channels=[128, 256, 512, 512], layers_per_block=2, act_fn="silu",
    norm_num_groups=32, scaling_factor=0.18215,
)
VAE_TINY = dict(
    VAE_FULL, sample_size=16,
    down_block_types=["DownEncoderBlock2D"] * 2, up_block_types=["UpDecoderBlock2D"] * 2,
    block_out_channels=[32, 64], norm_num_groups=8,
)

# SD 1.5 text encoder: CLIP ViT-L/14 text tower.
CLIP_FULL = dict(
    vocab_size=49408, hidden_size=768, intermediate_size=3072, num_attention_heads=12,
    num_hidden_layers=12, max_position_embeddings=77, hidden_act="quick_gelu",
    layer_norm_eps=1e-5, bos_token_id=0, eos_token_id=2, pad_token_id=1, projection_dim=768,
)
CLIP_TINY = dict(
    CLIP_FULL, vocab_size=1000, hidden_size=32, intermediate_size=64, num_attention_heads=2,
    num_hidden_layers=2, projection_dim=32,
)

# Input sizes per model and size: (batch, latent H, latent W, sequence length).
SIZES = {
    "tiny": {"unet_hw": (16, 16), "vae_hw": (8, 8), "seq": 77, "batch": 1},
    "full": {"unet_hw": (64, 64), "vae_hw": (64, 64), "seq": 77, "batch": 1},
}

# ----------------------------------------------------------------------------------------------
# Weight initialization
# ----------------------------------------------------------------------------------------------

NORM_TYPES = (torch.nn.GroupNorm, torch.nn.LayerNorm)


def is_norm(mod):
    """torch norms, and the RMS/T5 norms of diffusers and transformers (RMSNorm, T5LayerNorm,
    torch.nn.RMSNorm ...): their weight is a scale around 1."""
    return isinstance(mod, NORM_TYPES) or type(mod).__name__.endswith("Norm")


@torch.no_grad()
def reinit(model, seed):
    """Re-initializes every parameter from `seed` so that no two initializers are identical (the
    exporter would otherwise deduplicate e.g. all-ones norm weights into Identity nodes) and
    activations stay realistic:
      Conv/Linear weights: normal(0, 1/sqrt(fan_in))  (variance-preserving, like trained nets)
      all biases:          normal(0, 0.02)
      norm weights:        1 + normal(0, 0.02);   norm biases: normal(0, 0.02)
      embeddings:          normal(0, 0.02)        (CLIP token/position tables; a LayerNorm follows)
    """
    gen = torch.Generator().manual_seed(seed)

    def normal_(t, mean, std):
        t.copy_(torch.randn(t.shape, generator=gen, dtype=torch.float32) * std + mean)

    for name, mod in model.named_modules():
        for pname, p in mod.named_parameters(recurse=False):
            if is_norm(mod):
                normal_(p, 1.0 if pname == "weight" else 0.0, 0.02)
            elif pname == "bias":
                normal_(p, 0.0, 0.02)
            elif isinstance(mod, torch.nn.Embedding):
                normal_(p, 0.0, 0.02)
            elif p.dim() >= 2:
                fan_in = p[0].numel()
                normal_(p, 0.0, 1.0 / math.sqrt(fan_in))
            else:
                normal_(p, 0.0, 0.02)
    return model


# ----------------------------------------------------------------------------------------------
# Model builders: each returns (module, input dict name->tensor, input names, output names,
#                               dynamic_axes, config)
# ----------------------------------------------------------------------------------------------


class UNetWrapper(torch.nn.Module):
    """unet(sample, timestep, encoder_hidden_states) -> out_sample (tensor, not a dataclass)."""

    def __init__(self, unet):
        super().__init__()
        self.unet = unet

    def forward(self, sample, timestep, encoder_hidden_states):
        return self.unet(sample, timestep, encoder_hidden_states, return_dict=False)[0]


class VaeDecoderWrapper(torch.nn.Module):
    """vae_decoder(latent_sample) -> sample: post_quant_conv + decoder (AutoencoderKL.decode)."""

    def __init__(self, vae):
        super().__init__()
        self.vae = vae

    def forward(self, latent_sample):
        return self.vae.decode(latent_sample, return_dict=False)[0]


class TextEncoderWrapper(torch.nn.Module):
    """text_encoder(input_ids) -> (last_hidden_state, pooler_output)."""

    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, input_ids):
        out = self.clip(input_ids=input_ids, return_dict=False)
        return out[0], out[1]


def build_unet(size, seed, rng):
    from diffusers import UNet2DConditionModel
    cfg = UNET_TINY if size == "tiny" else UNET_FULL
    torch.manual_seed(seed)
    model = reinit(UNet2DConditionModel(**cfg), seed).eval()
    s = SIZES[size]
    b, (h, w) = s["batch"], s["unet_hw"]
    inputs = {
        "sample": rng.standard_normal((b, 4, h, w)).astype(np.float32),
        # one timestep for the whole batch, float32 as in the diffusers pipelines' ONNX path
        "timestep": np.array([981.0], dtype=np.float32),
        "encoder_hidden_states":
            rng.standard_normal((b, s["seq"], cfg["cross_attention_dim"])).astype(np.float32),
    }
    dyn = {
        "sample": {0: "batch", 2: "height", 3: "width"},
        "encoder_hidden_states": {0: "batch", 1: "sequence"},
        "out_sample": {0: "batch", 2: "height", 3: "width"},
    }
    return UNetWrapper(model), inputs, ["out_sample"], dyn, cfg


def build_vae_decoder(size, seed, rng):
    from diffusers import AutoencoderKL
    cfg = VAE_TINY if size == "tiny" else VAE_FULL
    torch.manual_seed(seed)
    model = reinit(AutoencoderKL(**cfg), seed).eval()
    s = SIZES[size]
    b, (h, w) = s["batch"], s["vae_hw"]
    # latents as the pipeline feeds them: unit-variance noise divided by the scaling factor
    lat = rng.standard_normal((b, cfg["latent_channels"], h, w)).astype(np.float32)
    inputs = {"latent_sample": (lat / np.float32(cfg["scaling_factor"])).astype(np.float32)}
    dyn = {
        "latent_sample": {0: "batch", 2: "height", 3: "width"},
        "sample": {0: "batch", 2: "out_height", 3: "out_width"},
    }
    return VaeDecoderWrapper(model), inputs, ["sample"], dyn, cfg


def clip_token_ids(rng, b, n, vocab, ntok=11):
    """[b, n] int64 ids laid out as the SD tokenizer does: <bos> ntok prompt tokens <eos>, padded
    with <eos>; <bos>/<eos> are the two highest ids (vocab-2, vocab-1)."""
    bos, eos = vocab - 2, vocab - 1
    ids = np.full((b, n), eos, dtype=np.int64)
    ids[:, 0] = bos
    ids[:, 1:1 + ntok] = rng.integers(3, vocab - 2, size=(b, ntok))
    return ids


def build_text_encoder(size, seed, rng):
    from transformers import CLIPTextConfig, CLIPTextModel
    cfg = CLIP_TINY if size == "tiny" else CLIP_FULL
    torch.manual_seed(seed)
    model = reinit(CLIPTextModel(CLIPTextConfig(**cfg)), seed).eval()
    s = SIZES[size]
    b, n = s["batch"], s["seq"]
    # Token layout of the SD tokenizer: <bos> prompt tokens <eos> <eos>... (it pads with eos).
    # The real <bos>/<eos> are the two highest ids (49406/49407) and, as eos_token_id == 2 in the
    # SD 1.5 config, transformers pools at argmax(input_ids) = the first <eos>.
    inputs = {"input_ids": clip_token_ids(rng, b, n, cfg["vocab_size"])}
    dyn = {
        "input_ids": {0: "batch", 1: "sequence"},
        "last_hidden_state": {0: "batch", 1: "sequence"},
        "pooler_output": {0: "batch"},
    }
    return TextEncoderWrapper(model), inputs, ["last_hidden_state", "pooler_output"], dyn, cfg


BUILDERS = {
    "unet": build_unet,
    "vae_decoder": build_vae_decoder,
    "text_encoder": build_text_encoder,
}

# ----------------------------------------------------------------------------------------------
# Export, references, checks
# ----------------------------------------------------------------------------------------------


def op_histogram(model):
    """op_type -> count over the main graph (domain-qualified when not the default domain)."""
    c = Counter()
    for n in model.graph.node:
        c[n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"] += 1
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def onnx_dtype_name(elem_type):
    import onnx
    return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name


def value_info_json(vi):
    t = vi.type.tensor_type
    dims = [d.dim_param if d.HasField("dim_param") else d.dim_value for d in t.shape.dim]
    return {"name": vi.name, "dtype": onnx_dtype_name(t.elem_type), "dims": dims}


def dynamo_shapes(in_names, dyn):
    """dynamic_axes {input: {axis: name}} -> dynamic_shapes for torch.onnx.export(dynamo=True):
    one tuple per input (positional), Dim.AUTO on the named axes, None (static) elsewhere."""
    auto = torch.export.Dim.AUTO
    return tuple({a: auto for a in dyn.get(n, {})} or None for n in in_names)


def strip_node_metadata(path):
    """Drops the dynamo exporter's per-node metadata_props (Python class paths, FX node text and
    stack traces: 1.1 MB of the 4.5 MB tiny UNet, and it names the calling script's module) so
    the committed files stay small and reproducible. Nothing reads them: ops, attributes,
    initializers and value_info are untouched."""
    import onnx
    m = onnx.load(path, load_external_data=False)

    def strip(graph):
        for n in graph.node:
            del n.metadata_props[:]
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    strip(a.g)
                for g in a.graphs:
                    strip(g)
    strip(m.graph)
    onnx.save_model(m, path)


def run_ort(model_path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def errors(got, ref):
    """max abs error, max rel error (|d| / max(|ref|, 1e-6 * max|ref|)), max |ref|."""
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    d = np.abs(got - ref)
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    den = np.maximum(np.abs(ref), max(scale * 1e-6, 1e-30))
    return float(d.max()), float((d / den).max()), float(scale)


def export_one(name, size, out_root, seed, external_data, fp16=False, ort_check=True,
               exporter="torchscript", builders=None):
    """Builds model `name` (from `builders`, default BUILDERS), writes its folder
    <out_root>/<size>/<name>[_fp16][_dynamo]/ (see the module docstring) and returns meta.json's
    dict. exporter: "torchscript" (dynamo=False, opset 17, dynamic_axes) or "dynamo"
    (dynamo=True, the exporter's default opset, the same dynamic axes as dynamic shapes)."""
    import onnx
    import diffusers
    import transformers
    import onnxruntime

    t0 = time.time()
    rng = np.random.default_rng(seed)
    module, inputs, out_names, dyn, cfg = (builders or BUILDERS)[name](size, seed, rng)
    module = module.eval()  # the wrappers too (their submodules already are)
    if hasattr(module, "for_exporter"):
        module = module.for_exporter(exporter)  # a same-function rewrite one exporter needs
    in_names = list(inputs)
    nparams = sum(p.numel() for p in module.parameters())

    mdir = os.path.join(out_root, size, name + ("_fp16" if fp16 else "")
                        + ("_dynamo" if exporter == "dynamo" else ""))
    if os.path.isdir(mdir):
        shutil.rmtree(mdir)
    os.makedirs(os.path.join(mdir, "inputs"))
    os.makedirs(os.path.join(mdir, "ref"))
    model_path = os.path.join(mdir, "model.onnx")

    targs = tuple(torch.from_numpy(inputs[k]) for k in in_names)
    with torch.no_grad():
        outs = module(*targs)
    if isinstance(outs, torch.Tensor):
        outs = (outs,)
    refs = {k: v.detach().cpu().numpy() for k, v in zip(out_names, outs)}
    print(f"[{name}] built ({nparams:,} params) and ran in {time.time() - t0:.1f}s", flush=True)
    if fp16:
        # --fp16: the module and its float inputs in float16 (module.half(), as fp16 SD exports
        # are made); the references stay the float32 module's outputs, rounded to float16.
        module = module.half()
        inputs = {k: (v.astype(np.float16) if v.dtype == np.float32 else v) for k, v in inputs.items()}
        targs = tuple(torch.from_numpy(inputs[k]) for k in in_names)
        refs = {k: v.astype(np.float16) for k, v in refs.items()}

    for k, v in inputs.items():
        np.save(os.path.join(mdir, "inputs", k + ".npy"), v)
    for k, v in refs.items():
        np.save(os.path.join(mdir, "ref", k + ".npy"), v)

    big = external_data or nparams * 4 > 1.8e9
    export_path = model_path if not big else os.path.join(mdir, "_tmp_export", "model.onnx")
    os.makedirs(os.path.dirname(export_path), exist_ok=True)
    t1 = time.time()
    with torch.no_grad():
        if exporter == "dynamo":
            # The default exporter of current torch, as a user calls it: default opset, the
            # same symbolic dims as dynamic shapes (torch.export.Dim.AUTO per named axis).
            torch.onnx.export(
                module, targs, export_path, input_names=in_names, output_names=out_names,
                dynamic_shapes=dynamo_shapes(in_names, dyn), dynamo=True, external_data=big,
                verbose=False,
            )
        else:
            torch.onnx.export(
                module, targs, export_path, input_names=in_names, output_names=out_names,
                dynamic_axes=dyn, opset_version=OPSET, do_constant_folding=True, dynamo=False,
            )
    print(f"[{name}] exported ({exporter}) in {time.time() - t1:.1f}s", flush=True)
    if exporter == "dynamo":
        strip_node_metadata(export_path)
    if big:
        # The TorchScript exporter writes > 2 GB models as one file per tensor; regroup them into
        # one model.onnx.data next to model.onnx (the only layout we commit to).
        m = onnx.load(export_path, load_external_data=True)
        onnx.save_model(m, model_path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="model.onnx.data", size_threshold=1024)
        del m
        shutil.rmtree(os.path.dirname(export_path))
        os.chmod(os.path.join(mdir, "model.onnx.data"), 0o644)  # onnx writes it 0600

    # the name map (docs/engine.md): initializer -> canonical diffusers key(s) + transform
    import name_map
    nm_model = onnx.load(model_path)  # with its external data: values are matched
    nm_mapped, nm_kept = name_map.write_name_map(
        os.path.join(mdir, "model.namemap"), name_map.component_module(module), nm_model,
        name_map.COMPONENTS.get(name, "model"))
    del nm_model
    print(f"[{name}] model.namemap: {nm_mapped} initializers mapped, {len(nm_kept)} float "
          "kept (exporter constants)", flush=True)

    # free the PyTorch model before onnxruntime loads its own copy (the full UNet is 3.4 GB)
    del module, targs, outs
    gc.collect()

    m = onnx.load(model_path, load_external_data=False)
    onnx.checker.check_model(model_path if big else m)
    hist = op_histogram(m)
    graph_inputs = [value_info_json(v) for v in m.graph.input]
    graph_outputs = [value_info_json(v) for v in m.graph.output]
    opsets = {(o.domain or "ai.onnx"): o.version for o in m.opset_import}
    ninit = len(m.graph.initializer)
    # parameters the graph actually holds (the VAE module also carries the unused encoder)
    nparams_graph = int(sum(np.prod(t.dims, dtype=np.int64) for t in m.graph.initializer))
    del m

    # onnxruntime vs PyTorch on the same inputs
    feeds = {}
    for gi in graph_inputs:
        feeds[gi["name"]] = inputs[gi["name"]].astype(gi["dtype"])
    got = run_ort(model_path, feeds) if ort_check else {}
    ort_err = {}
    for k in (out_names if ort_check else []):
        a, r, s = errors(got[k], refs[k])
        ort_err[k] = {"max_abs": a, "max_rel": r, "max_abs_ref": s}
        print(f"[{name}] ORT vs PyTorch {k}: max abs {a:.3g}, max rel {r:.3g}, max|ref| {s:.3g}")

    dtypes_used = sorted({gi["dtype"] for gi in graph_inputs})
    files = {}
    for root, dirs, fnames in os.walk(mdir):
        dirs.sort()
        for f in sorted(fnames):
            p = os.path.join(root, f)
            files[os.path.relpath(p, mdir)] = os.path.getsize(p)
    # --shape flags for the inputs that carry symbolic dims (the others are fully static)
    shape_flags = " ".join(
        f"--shape {gi['name']}=" + ",".join(str(d) for d in inputs[gi["name"]].shape)
        for gi in graph_inputs if any(isinstance(d, str) for d in gi["dims"]))
    meta = {
        "model": name,
        "size": size,
        "fp16": fp16,
        "seed": seed,
        "init": "Conv/Linear weights N(0, 1/sqrt(fan_in)); biases N(0, 0.02); "
                "norm weights 1+N(0, 0.02), norm biases N(0, 0.02); embeddings N(0, 0.02)",
        "params_module": nparams,
        "params_in_graph": nparams_graph,
        "exporter": ({"api": "torch.onnx.export", "dynamo": False, "opset": OPSET,
                      "do_constant_folding": True, "external_data": bool(big)}
                     if exporter != "dynamo" else
                     {"api": "torch.onnx.export", "dynamo": True,
                      "opset": opsets.get("ai.onnx"), "dynamic_shapes": "Dim.AUTO per named axis",
                      "node_metadata_props": "stripped", "external_data": bool(big)}),
        "opset_import": opsets,
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "diffusers": diffusers.__version__, "transformers": transformers.__version__,
                     "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
                     "numpy": np.__version__},
        "config": cfg,
        "inputs": [dict(gi, shape=list(inputs[gi["name"]].shape)) for gi in graph_inputs],
        "outputs": [dict(go, shape=list(refs[go["name"]].shape),
                         ref_dtype=refs[go["name"]].dtype.name,
                         ref_std=float(refs[go["name"]].astype(np.float64).std()))
                    for go in graph_outputs],
        "input_dtypes": dtypes_used,
        "onnx2cl_shape_flags": shape_flags,
        "dynamic_axes": {k: {str(a): n for a, n in v.items()} for k, v in dyn.items()},
        "node_count": sum(hist.values()),
        "initializer_count": ninit,
        "op_histogram": hist,
        "ort_cpu_vs_pytorch": ort_err,
        "files": files,
    }
    with open(os.path.join(mdir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(f"[{name}] {meta['node_count']} nodes, {sum(files.values()) / 1e6:.2f} MB, "
          f"done in {time.time() - t0:.1f}s", flush=True)
    return meta


def parse_models(ap, spec, builders):
    """--models "a,b" -> ["a", "b"]; a name not in `builders` is a usage error (exit 2)."""
    names = [n for n in spec.split(",") if n]
    for n in names:
        if n not in builders:
            ap.error(f"unknown model '{n}' (known: {', '.join(builders)})")
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=["tiny", "full"], required=True)
    ap.add_argument("--models", default=",".join(BUILDERS),
                    help="comma-separated subset of " + ",".join(BUILDERS))
    ap.add_argument("--out", default=HERE, help="root folder (default: models/)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--fp16", action="store_true",
                    help="export the float16 module (module.half()) to models/<size>/<model>_fp16; "
                         "references: the float32 outputs rounded to float16")
    ap.add_argument("--no-ort-check", action="store_true",
                    help="skip the onnxruntime-vs-PyTorch check (meta.json then has no ORT errors)")
    ap.add_argument("--external-data", action="store_true",
                    help="save every model with external data (forced for models > 1.8 GB)")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript",
                    help="torchscript: dynamo=False, opset 17, dynamic_axes (folders <model>/); "
                         "dynamo: dynamo=True, default opset, dynamic shapes "
                         "(folders <model>_dynamo/)")
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    names = parse_models(ap, args.models, BUILDERS)
    for n in names:
        export_one(n, args.size, args.out, args.seed, args.external_data, args.fp16,
                   ort_check=not args.no_ort_check, exporter=args.exporter)


if __name__ == "__main__":
    main()
