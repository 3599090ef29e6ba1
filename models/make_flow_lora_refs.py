#!/usr/bin/env python3
"""make_flow_lora_refs.py — tiny diffusers/PEFT LoRAs for the tiny Flux dev and SD 3 transformers of
tests/pipeline/{flux,sd3} and diffusers' images with them loaded (the fixture of onnx2cl-sd --lora on
SD 3 / Flux):

  <dir>/lora_transformer.safetensors  a PEFT LoRA in diffusers' naming (what save_lora_weights writes:
      transformer.<module>.lora_A.weight / .lora_B.weight), rank 4, lora_alpha 8 (factor 2, in the
      file's lora_adapter_metadata), on the attention projections (to_q, to_k, to_v, to_out.0,
      add_*_proj, to_add_out where present) and the feed-forward layers of every block (Flux: the
      single blocks' to_q/k/v, proj_mlp, proj_out too); random A and B (seed 7), B scaled so the
      change is visible but small
  tests/pipeline/flux/lora_kohya.safetensors  kohya sd-scripts' naming of a Flux LoRA (lora_unet_double_blocks_0_
      img_attn_qkv: fused q/k/v and the single blocks' q|k|v|mlp linear1, .alpha 8 of rank 4), case k
  <dir>/lora_<case>_image.npy          the pipeline's image with the LoRA loaded (load_lora_weights +
      set_adapters weight W), 32x32, seed 42, output_type "np"
  <dir>/lora_cases.txt                 case, steps, cfg, guidance (Flux dev), LoRA weight, prompt

Needs torch + diffusers 0.42 + peft (not run in CI; the outputs are committed).
"""
import json
import os

import numpy as np
import torch
from safetensors.torch import save_file
from diffusers import FluxPipeline, StableDiffusion3Pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
P = "a photo of an astronaut riding a horse on mars"
TARGETS = ("to_q", "to_k", "to_v", "to_out.0", "add_q_proj", "add_k_proj", "add_v_proj", "to_add_out",
           "ff.net.0.proj", "ff.net.2", "ff_context.net.0.proj", "ff_context.net.2", "proj_mlp", "proj_out")


def make_lora(transformer, rank=4, alpha=8, seed=7):
    g = torch.Generator().manual_seed(seed)
    sd = {}
    for name, mod in transformer.named_modules():
        if not isinstance(mod, torch.nn.Linear) or not any(name.endswith(t) for t in TARGETS):
            continue
        if not (name.startswith("transformer_blocks.") or name.startswith("single_transformer_blocks.")):
            continue
        a = torch.randn(rank, mod.in_features, generator=g) / mod.in_features ** 0.5
        b = torch.randn(mod.out_features, rank, generator=g) * 0.05
        sd[f"transformer.{name}.lora_A.weight"] = a.contiguous()
        sd[f"transformer.{name}.lora_B.weight"] = b.contiguous()
    mods = sorted({k[len("transformer."):-len(".lora_A.weight")] for k in sd if k.endswith(".lora_A.weight")})
    meta = {"lora_adapter_metadata": json.dumps({"transformer.r": rank, "transformer.lora_alpha": alpha,
                                                 "transformer.target_modules": mods}), "format": "pt"}
    return sd, meta


def make_kohya_flux(transformer, rank=4, alpha=8.0, seed=11):
    """kohya sd-scripts' Flux LoRA naming (lora_unet_ + Black Forest Labs' module path with '_'):
    fused double-block qkv (one down, up rows q|k|v), single-block linear1 (up rows q|k|v|mlp, 1:1:1:4),
    the projections, MLPs and modulation linears; .alpha tensors."""
    g = torch.Generator().manual_seed(seed)
    cfg = transformer.config
    D = cfg.num_attention_heads * cfg.attention_head_dim
    mods = {}
    for i in range(cfg.num_layers):
        b = f"double_blocks_{i}_"
        for side in ("img", "txt"):
            mods[b + f"{side}_attn_qkv"] = (D, 3 * D)
            mods[b + f"{side}_attn_proj"] = (D, D)
            mods[b + f"{side}_mlp_0"] = (D, 4 * D)
            mods[b + f"{side}_mlp_2"] = (4 * D, D)
            mods[b + f"{side}_mod_lin"] = (D, 6 * D)
    for i in range(cfg.num_single_layers):
        b = f"single_blocks_{i}_"
        mods[b + "linear1"] = (D, 7 * D)
        mods[b + "linear2"] = (5 * D, D)
        mods[b + "modulation_lin"] = (D, 3 * D)
    sd = {}
    for name, (fin, fout) in mods.items():
        sd[f"lora_unet_{name}.lora_down.weight"] = (torch.randn(rank, fin, generator=g) / fin ** 0.5).contiguous()
        sd[f"lora_unet_{name}.lora_up.weight"] = (torch.randn(fout, rank, generator=g) * 0.05).contiguous()
        sd[f"lora_unet_{name}.alpha"] = torch.tensor(alpha)
    return sd


def patch_kohya_dims(D):
    """diffusers' _convert_kohya_flux_lora_to_diffusers splits linear1's up rows at the published width
    (dims=[3072, 3072, 3072, 12288]): the same function with the tiny model's width."""
    import inspect
    from diffusers.loaders import lora_conversion_utils as u, lora_pipeline
    src = inspect.getsource(u._convert_kohya_flux_lora_to_diffusers)
    assert "dims=[3072, 3072, 3072, 12288]" in src
    ns = dict(vars(u))
    exec(src.replace("dims=[3072, 3072, 3072, 12288]", f"dims=[{D}, {D}, {D}, {4 * D}]"), ns)
    u._convert_kohya_flux_lora_to_diffusers = ns["_convert_kohya_flux_lora_to_diffusers"]
    if hasattr(lora_pipeline, "_convert_kohya_flux_lora_to_diffusers"):
        lora_pipeline._convert_kohya_flux_lora_to_diffusers = ns["_convert_kohya_flux_lora_to_diffusers"]


def main():
    for fam, folder, cases in (
            ("flux", "tests/pipeline/flux/tiny_flux_dev", [("a", 4, 1.0, 3.5, 1.0), ("b", 4, 1.0, 3.5, 0.6)]),
            ("sd3", "tests/pipeline/sd3/tiny_sd3", [("a", 4, 7.0, 0.0, 1.0), ("b", 3, 1.0, 0.0, 0.5)])):
        d = os.path.join(ROOT, os.path.dirname(folder))
        cls = FluxPipeline if fam == "flux" else StableDiffusion3Pipeline
        pipe = cls.from_pretrained(os.path.join(ROOT, folder))
        pipe.set_progress_bar_config(disable=True)
        sd, meta = make_lora(pipe.transformer)
        path = os.path.join(d, "lora_transformer.safetensors")
        save_file(sd, path, metadata=meta)
        print(f"{fam}: {len(sd) // 2} modules -> {os.path.relpath(path, ROOT)}")
        lines = []
        for case, steps, cfg, guidance, w in cases:
            pipe = cls.from_pretrained(os.path.join(ROOT, folder))
            pipe.set_progress_bar_config(disable=True)
            pipe.load_lora_weights(path, adapter_name="t")
            pipe.set_adapters(["t"], adapter_weights=[w])
            kw = dict(guidance_scale=guidance, true_cfg_scale=cfg, max_sequence_length=64) if fam == "flux" else \
                dict(guidance_scale=cfg)
            img = pipe(P, num_inference_steps=steps, height=32, width=32, generator=torch.Generator().manual_seed(42),
                       output_type="np", **kw).images
            img = np.ascontiguousarray(img.transpose(0, 3, 1, 2).astype(np.float32))
            np.save(os.path.join(d, f"lora_{case}_image.npy"), img)
            lines.append("\t".join([case, str(steps), str(cfg), str(guidance), str(w), P]))
            print(f"  lora_{case}: steps {steps} cfg {cfg} guidance {guidance} weight {w}: mean {img.mean():.4f}")
        if fam == "flux":  # a kohya-named LoRA (fused modules), loaded by diffusers' kohya converter
            patch_kohya_dims(pipe.transformer.config.num_attention_heads * pipe.transformer.config.attention_head_dim)
            kpath = os.path.join(d, "lora_kohya.safetensors")
            save_file(make_kohya_flux(pipe.transformer), kpath)
            pipe = cls.from_pretrained(os.path.join(ROOT, folder))
            pipe.set_progress_bar_config(disable=True)
            pipe.load_lora_weights(kpath, adapter_name="k")
            pipe.set_adapters(["k"], adapter_weights=[0.8])
            img = pipe(P, num_inference_steps=4, height=32, width=32, generator=torch.Generator().manual_seed(42),
                       output_type="np", guidance_scale=3.5, true_cfg_scale=1.0, max_sequence_length=64).images
            img = np.ascontiguousarray(img.transpose(0, 3, 1, 2).astype(np.float32))
            np.save(os.path.join(d, "lora_k_image.npy"), img)
            lines.append("\t".join(["k", "4", "1.0", "3.5", "0.8", P]))
            print(f"  lora_k (kohya): mean {img.mean():.4f}")
        with open(os.path.join(d, "lora_cases.txt"), "w") as f:
            f.write("# case\tsteps\tcfg\tguidance\tlora weight\tprompt (models/make_flow_lora_refs.py)\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
