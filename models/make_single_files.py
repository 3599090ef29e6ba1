#!/usr/bin/env python3
"""make_single_files.py — single-file SD 3 and Flux checkpoints made from the tiny diffusers folders
of tests/pipeline/sd3 and tests/pipeline/flux, in the layouts users download:

  tests/pipeline/sd3/tiny_sd3.safetensors
      SAI's SD 3 / 3.5 layout with every text encoder (sd3_medium_incl_clips_t5xxl*.safetensors,
      sd3.5_*_fp8_scaled-style all-in-one files): model.diffusion_model.* (MMDiT naming:
      joint_blocks.N.{x_block,context_block}.attn.qkv, adaLN_modulation.1 as (shift, scale), ...),
      first_stage_model.* (LDM VAE, 16 channels), text_encoders.clip_l.transformer.*,
      text_encoders.clip_g.transformer.*, text_encoders.t5xxl.transformer.*
  tests/pipeline/flux/tiny_flux_dev.safetensors
      ComfyUI's all-in-one Flux checkpoint layout: model.diffusion_model.* (BFL naming:
      double_blocks, single_blocks with fused linear1 = q|k|v|mlp, ...), first_stage_model.*,
      text_encoders.clip_l.transformer.*, text_encoders.t5xxl.transformer.*
  tests/pipeline/flux/tiny_flux_schnell_bfl.safetensors
      Black Forest Labs' own layout (flux1-schnell.safetensors): the transformer alone, no prefix
  tests/store/sd35/transformer/diffusion_pytorch_model.safetensors, tests/store/sd35_mmdit.safetensors
      an SD 3.5-style transformer (qk RMS norms, a dual-attention attn2 block; random weights, seed
      35, bfloat16) as a diffusers component and as SAI's single file (model.diffusion_model.*
      only, as sd3.5_large.safetensors): the store's SD 3.5 rows and swapped bfloat16 rows

Each is written by the inverse of diffusers' single-file rules (below) and then checked with
diffusers' own forward conversion (diffusers.loaders.single_file_utils:
convert_sd3_transformer_checkpoint_to_diffusers, convert_flux_transformer_checkpoint_to_diffusers
(its hard-coded inner_dim = 3072 set to the tiny model's width), convert_ldm_vae_checkpoint,
convert_ldm_clip_checkpoint, convert_sd3_t5_checkpoint_to_diffusers), which must give back the
folder's state_dicts exactly, key for key and value for value. float32, like the folders, so
the images from these files are the folders' images (pipeline.sd3, pipeline.flux).

Needs torch + diffusers + safetensors (not run in CI; the outputs are committed).
"""
import inspect
import json
import os
import sys

import torch
from safetensors.torch import load_file, save_file
from diffusers.loaders import single_file_utils as sfu

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from make_test_checkpoints import ldm_vae  # noqa: E402  (diffusers VAE -> LDM keys)


def folder_sd(folder, comp):
    d = os.path.join(folder, comp)
    for n in ("diffusion_pytorch_model.safetensors", "model.safetensors"):
        if os.path.exists(os.path.join(d, n)):
            return load_file(os.path.join(d, n))
    raise FileNotFoundError(d)


def swap(t):
    a, b = t.chunk(2, dim=0)
    return torch.cat([b, a], dim=0)


def mmdit(sd):
    """SD3Transformer2DModel state_dict -> SAI's MMDiT keys (no prefix)."""
    n = 1 + max(int(k.split(".")[1]) for k in sd if k.startswith("transformer_blocks."))
    o = {"pos_embed": sd["pos_embed.pos_embed"]}
    for w in ("weight", "bias"):
        o[f"x_embedder.proj.{w}"] = sd[f"pos_embed.proj.{w}"]
        o[f"t_embedder.mlp.0.{w}"] = sd[f"time_text_embed.timestep_embedder.linear_1.{w}"]
        o[f"t_embedder.mlp.2.{w}"] = sd[f"time_text_embed.timestep_embedder.linear_2.{w}"]
        o[f"y_embedder.mlp.0.{w}"] = sd[f"time_text_embed.text_embedder.linear_1.{w}"]
        o[f"y_embedder.mlp.2.{w}"] = sd[f"time_text_embed.text_embedder.linear_2.{w}"]
        o[f"context_embedder.{w}"] = sd[f"context_embedder.{w}"]
        o[f"final_layer.linear.{w}"] = sd[f"proj_out.{w}"]
        o[f"final_layer.adaLN_modulation.1.{w}"] = swap(sd[f"norm_out.linear.{w}"])
        for i in range(n):
            b, j = f"transformer_blocks.{i}.", f"joint_blocks.{i}."
            o[f"{j}x_block.attn.qkv.{w}"] = torch.cat([sd[f"{b}attn.to_{x}.{w}"] for x in "qkv"])
            o[f"{j}context_block.attn.qkv.{w}"] = torch.cat([sd[f"{b}attn.add_{x}_proj.{w}"] for x in "qkv"])
            o[f"{j}x_block.attn.proj.{w}"] = sd[f"{b}attn.to_out.0.{w}"]
            o[f"{j}x_block.adaLN_modulation.1.{w}"] = sd[f"{b}norm1.linear.{w}"]
            ctx = sd[f"{b}norm1_context.linear.{w}"]
            o[f"{j}context_block.adaLN_modulation.1.{w}"] = swap(ctx) if i == n - 1 else ctx
            o[f"{j}x_block.mlp.fc1.{w}"] = sd[f"{b}ff.net.0.proj.{w}"]
            o[f"{j}x_block.mlp.fc2.{w}"] = sd[f"{b}ff.net.2.{w}"]
            if i != n - 1:
                o[f"{j}context_block.attn.proj.{w}"] = sd[f"{b}attn.to_add_out.{w}"]
                o[f"{j}context_block.mlp.fc1.{w}"] = sd[f"{b}ff_context.net.0.proj.{w}"]
                o[f"{j}context_block.mlp.fc2.{w}"] = sd[f"{b}ff_context.net.2.{w}"]
            if f"{b}attn2.to_q.{w}" in sd:
                o[f"{j}x_block.attn2.qkv.{w}"] = torch.cat([sd[f"{b}attn2.to_{x}.{w}"] for x in "qkv"])
                o[f"{j}x_block.attn2.proj.{w}"] = sd[f"{b}attn2.to_out.0.{w}"]
    for i in range(n):
        b, j = f"transformer_blocks.{i}.", f"joint_blocks.{i}."
        for a, c in (("norm_q", "x_block.attn.ln_q"), ("norm_k", "x_block.attn.ln_k"),
                     ("norm_added_q", "context_block.attn.ln_q"), ("norm_added_k", "context_block.attn.ln_k"),
                     ("attn2.norm_q", "x_block.attn2.ln_q"), ("attn2.norm_k", "x_block.attn2.ln_k")):
            key = f"{b}{a if a.startswith('attn2') else 'attn.' + a}.weight"
            if key in sd:
                o[f"{j}{c}.weight"] = sd[key]
    assert len(o) == sum(1 for _ in o)
    return o


def bfl_flux(sd):
    """FluxTransformer2DModel state_dict -> Black Forest Labs' keys (no prefix)."""
    nd = 1 + max(int(k.split(".")[1]) for k in sd if k.startswith("transformer_blocks."))
    ns = 1 + max(int(k.split(".")[1]) for k in sd if k.startswith("single_transformer_blocks."))
    o = {}
    for w in ("weight", "bias"):
        for a, b in (("time_in", "timestep_embedder"), ("vector_in", "text_embedder"),
                     ("guidance_in", "guidance_embedder")):
            if f"time_text_embed.{b}.linear_1.{w}" in sd:
                o[f"{a}.in_layer.{w}"] = sd[f"time_text_embed.{b}.linear_1.{w}"]
                o[f"{a}.out_layer.{w}"] = sd[f"time_text_embed.{b}.linear_2.{w}"]
        o[f"txt_in.{w}"] = sd[f"context_embedder.{w}"]
        o[f"img_in.{w}"] = sd[f"x_embedder.{w}"]
        o[f"final_layer.linear.{w}"] = sd[f"proj_out.{w}"]
        o[f"final_layer.adaLN_modulation.1.{w}"] = swap(sd[f"norm_out.linear.{w}"])
        for i in range(nd):
            b, d = f"transformer_blocks.{i}.", f"double_blocks.{i}."
            o[f"{d}img_mod.lin.{w}"] = sd[f"{b}norm1.linear.{w}"]
            o[f"{d}txt_mod.lin.{w}"] = sd[f"{b}norm1_context.linear.{w}"]
            o[f"{d}img_attn.qkv.{w}"] = torch.cat([sd[f"{b}attn.to_{x}.{w}"] for x in "qkv"])
            o[f"{d}txt_attn.qkv.{w}"] = torch.cat([sd[f"{b}attn.add_{x}_proj.{w}"] for x in "qkv"])
            o[f"{d}img_mlp.0.{w}"] = sd[f"{b}ff.net.0.proj.{w}"]
            o[f"{d}img_mlp.2.{w}"] = sd[f"{b}ff.net.2.{w}"]
            o[f"{d}txt_mlp.0.{w}"] = sd[f"{b}ff_context.net.0.proj.{w}"]
            o[f"{d}txt_mlp.2.{w}"] = sd[f"{b}ff_context.net.2.{w}"]
            o[f"{d}img_attn.proj.{w}"] = sd[f"{b}attn.to_out.0.{w}"]
            o[f"{d}txt_attn.proj.{w}"] = sd[f"{b}attn.to_add_out.{w}"]
        for i in range(ns):
            b, s = f"single_transformer_blocks.{i}.", f"single_blocks.{i}."
            o[f"{s}modulation.lin.{w}"] = sd[f"{b}norm.linear.{w}"]
            o[f"{s}linear1.{w}"] = torch.cat([sd[f"{b}attn.to_q.{w}"], sd[f"{b}attn.to_k.{w}"],
                                              sd[f"{b}attn.to_v.{w}"], sd[f"{b}proj_mlp.{w}"]])
            o[f"{s}linear2.{w}"] = sd[f"{b}proj_out.{w}"]
    for i in range(nd):
        b, d = f"transformer_blocks.{i}.", f"double_blocks.{i}."
        o[f"{d}img_attn.norm.query_norm.scale"] = sd[f"{b}attn.norm_q.weight"]
        o[f"{d}img_attn.norm.key_norm.scale"] = sd[f"{b}attn.norm_k.weight"]
        o[f"{d}txt_attn.norm.query_norm.scale"] = sd[f"{b}attn.norm_added_q.weight"]
        o[f"{d}txt_attn.norm.key_norm.scale"] = sd[f"{b}attn.norm_added_k.weight"]
    for i in range(ns):
        b, s = f"single_transformer_blocks.{i}.", f"single_blocks.{i}."
        o[f"{s}norm.query_norm.scale"] = sd[f"{b}attn.norm_q.weight"]
        o[f"{s}norm.key_norm.scale"] = sd[f"{b}attn.norm_k.weight"]
    return o


def flux_converter(inner_dim):
    """diffusers' convert_flux_transformer_checkpoint_to_diffusers with its hard-coded
    inner_dim = 3072 (the published width) replaced by the tiny model's."""
    src = inspect.getsource(sfu.convert_flux_transformer_checkpoint_to_diffusers)
    assert "inner_dim = 3072" in src
    ns = dict(vars(sfu))
    exec(src.replace("inner_dim = 3072", f"inner_dim = {inner_dim}"), ns)
    return ns["convert_flux_transformer_checkpoint_to_diffusers"]


def same(got, ref, what):
    assert set(got) == set(ref), (what, sorted(set(got) ^ set(ref))[:10])
    for k in ref:
        assert torch.equal(got[k], ref[k]), (what, k)
    print(f"  {what}: {len(ref)} tensors equal")


def vae_config(folder):
    cfg = json.load(open(os.path.join(folder, "vae", "config.json")))
    return {"down_block_types": cfg["down_block_types"], "up_block_types": cfg["up_block_types"]}


def save(ck, path, meta):
    save_file({k: v.contiguous() for k, v in ck.items()}, path, metadata=meta)
    print(f"wrote {os.path.relpath(path, ROOT)}: {len(ck)} tensors, {os.path.getsize(path)} bytes")


def sd3():
    folder = os.path.join(ROOT, "tests/pipeline/sd3/tiny_sd3")
    tr, vae = folder_sd(folder, "transformer"), folder_sd(folder, "vae")
    te = {c: folder_sd(folder, c) for c in ("text_encoder", "text_encoder_2", "text_encoder_3")}
    ck = {"model.diffusion_model." + k: v for k, v in mmdit(tr).items()}
    ck.update(ldm_vae(vae))
    for c, n in (("text_encoder", "clip_l"), ("text_encoder_2", "clip_g"), ("text_encoder_3", "t5xxl")):
        ck.update({f"text_encoders.{n}.transformer.{k}": v for k, v in te[c].items()})
    print("sd3: diffusers' conversion of the single file")
    same(sfu.convert_sd3_transformer_checkpoint_to_diffusers(dict(ck)), tr, "transformer")
    same(sfu.convert_ldm_vae_checkpoint(ck, vae_config(folder)), vae, "vae")
    same(sfu.convert_ldm_clip_checkpoint(ck, "text_encoders.clip_l.transformer."), te["text_encoder"], "text_encoder")
    same(sfu.convert_ldm_clip_checkpoint(ck, "text_encoders.clip_g.transformer."), te["text_encoder_2"], "text_encoder_2")
    same(sfu.convert_sd3_t5_checkpoint_to_diffusers(ck), te["text_encoder_3"], "text_encoder_3")
    save(ck, os.path.join(ROOT, "tests/pipeline/sd3/tiny_sd3.safetensors"),
         {"modelspec.architecture": "stable-diffusion-v3-medium", "made_by": "models/make_single_files.py"})


def flux():
    for name in ("tiny_flux_dev", "tiny_flux_schnell"):
        folder = os.path.join(ROOT, "tests/pipeline/flux", name)
        tr = folder_sd(folder, "transformer")
        cfg = json.load(open(os.path.join(folder, "transformer", "config.json")))
        conv = flux_converter(cfg["num_attention_heads"] * cfg["attention_head_dim"])
        bfl = bfl_flux(tr)
        print(f"{name}: diffusers' conversion of the single file")
        same(conv(dict(bfl)), tr, "transformer")
        if name == "tiny_flux_schnell":
            save(bfl, os.path.join(ROOT, "tests/pipeline/flux/tiny_flux_schnell_bfl.safetensors"), {})
            continue
        vae = folder_sd(folder, "vae")
        clip, t5 = folder_sd(folder, "text_encoder"), folder_sd(folder, "text_encoder_2")
        ck = {"model.diffusion_model." + k: v for k, v in bfl.items()}
        ck.update(ldm_vae(vae))
        ck.update({f"text_encoders.clip_l.transformer.{k}": v for k, v in clip.items()})
        ck.update({f"text_encoders.t5xxl.transformer.{k}": v for k, v in t5.items()})
        same(conv({k: v for k, v in ck.items() if k.startswith("model.diffusion_model.")}), tr, "transformer (prefixed)")
        same(sfu.convert_ldm_vae_checkpoint(ck, vae_config(folder)), vae, "vae")
        same(sfu.convert_ldm_clip_checkpoint(ck, "text_encoders.clip_l.transformer."), clip, "text_encoder")
        same(sfu.convert_sd3_t5_checkpoint_to_diffusers(ck), t5, "text_encoder_2 (T5)")
        save(ck, os.path.join(ROOT, "tests/pipeline/flux/tiny_flux_dev.safetensors"),
             {"made_by": "models/make_single_files.py"})


def sd35():
    from diffusers import SD3Transformer2DModel
    torch.manual_seed(35)
    m = SD3Transformer2DModel(sample_size=16, patch_size=2, in_channels=16, num_layers=3, attention_head_dim=8,
                              num_attention_heads=2, joint_attention_dim=32, caption_projection_dim=16,
                              pooled_projection_dim=24, out_channels=16, pos_embed_max_size=16,
                              dual_attention_layers=(0, 1), qk_norm="rms_norm")
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    tr = {k: v.to(torch.bfloat16).contiguous() for k, v in m.state_dict().items()}
    assert any(".attn2." in k for k in tr) and any("norm_added_q" in k for k in tr)
    ck = {"model.diffusion_model." + k: v for k, v in mmdit(tr).items()}
    print("sd35: diffusers' conversion of the single file")
    same(sfu.convert_sd3_transformer_checkpoint_to_diffusers(dict(ck)), tr, "transformer")
    d = os.path.join(ROOT, "tests/store/sd35/transformer")
    os.makedirs(d, exist_ok=True)
    save(tr, os.path.join(d, "diffusion_pytorch_model.safetensors"), {"format": "pt"})
    json.dump(dict(m.config), open(os.path.join(d, "config.json"), "w"), indent=1, default=list)
    save(ck, os.path.join(ROOT, "tests/store/sd35_mmdit.safetensors"), {})


if __name__ == "__main__":
    sd3()
    flux()
    sd35()
