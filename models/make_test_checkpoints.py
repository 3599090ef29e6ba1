#!/usr/bin/env python3
"""make_test_checkpoints.py — tiny random SD 1.x-like and SD 2.x-like checkpoints in every layout
the store (store/, docs/engine.md) reads, plus a reference listing of their values.

Needs torch + diffusers + transformers + safetensors (not run in CI; the outputs are committed
under models/ckpt/). Deterministic (fixed seeds).
`--arch models/arch/<arch> [--out DIR]` instead writes random weights for that architecture's
arch.json configs (diffusers folder, LDM single file F32, reference.tsv; default DIR
models/ckpt/<arch>; not committed: e.g. for end-to-end proofs against the arch's graphs).

Per family F in (sd1, sd2), under models/ckpt/F/:
  diffusers/{unet,vae,text_encoder}/   save_pretrained (safetensors), float32 and the fp16 variant
                                       (diffusion_pytorch_model.fp16.safetensors) side by side
  sharded/unet/                        the UNet saved with a small max_shard_size (index + shards)
  transformers4/text_encoder/          (sd1) the text encoder in transformers 4.x naming (text_model.*)
  F.safetensors                        single file, original LDM layout, float32
  vae_ldm_f16.safetensors              (sd1) a standalone VAE: LDM keys without first_stage_model., f16
  F_f16.safetensors, F_bf16.safetensors  the same in float16 / bfloat16
  F_ema.safetensors                    float32 + an EMA copy of the UNet (model_ema.<flat key>)
                                       holding exactly 2x the UNet's values
  reference.tsv                        component, canonical key, shape, sha256 of the float32 values
                                       (little-endian), of the values rounded to float16, to bfloat16
Models: UNet block_out_channels (8, 16), layers_per_block 1, CrossAttnDownBlock2D + DownBlock2D,
cross_attention_dim 16 (sd2: attention_head_dim (2, 4), use_linear_projection); VAE (8, 16),
4 latent channels; CLIP text encoder hidden 16, 2 layers, vocab 100 (sd2: the single file holds
it in OpenCLIP naming). norm_num_groups 4. Every parameter is random (normal, std 0.5, plus 1
for norm weights), so every key has distinct values.

The LDM layout is written out here directly (ldm_unet/ldm_vae/ldm_clip/ldm_openclip below: the
inverse of diffusers' rules), and then checked with diffusers' own forward conversion
(diffusers.loaders.single_file_utils.convert_ldm_unet_checkpoint, convert_ldm_vae_checkpoint,
convert_ldm_clip_checkpoint, convert_open_clip_checkpoint), which must give back the diffusers
state_dict exactly, key for key and value for value. Extra keys of real single files are
included so the store's ignore rules are exercised: LDM noise-schedule buffers (betas,
alphas_cumprod), CLIP's int64 position_ids, OpenCLIP's text_projection, EMA's decay/num_updates.

SDXL (models/ckpt/sdxl/, `--families sdxl`): random weights for models/arch/tiny_sdxl's configs
(so the checkpoint is that architecture: onnx2cl-ckpt info names it, its graphs compile from it),
export_sd.reinit's initialization (well-conditioned outputs for tests/sdxl), every value rounded to
float16 (the files are float16: small, and the f32 reference is exact):
  diffusers/{unet,vae,text_encoder,text_encoder_2}/   save_pretrained, float16
  sdxl.safetensors        single file as SDXL's sgm layout has it: model.diffusion_model.* (with
                          label_emb.0.{0,2} = add_embedding), first_stage_model.*,
                          conditioner.embedders.0.transformer.text_model.* (CLIP-L, + position_ids),
                          conditioner.embedders.1.model.* (OpenCLIP-G: fused in_proj, every layer,
                          text_projection [D,P] = text_projection.weight transposed, logit_scale)
  refiner_te2.safetensors the refiner's text encoder layout (conditioner.embedders.0.model.*:
                          OpenCLIP-G only) holding text_encoder_2 alone
  reference.tsv           as above
checked with diffusers' convert_ldm_unet_checkpoint (addition_embed_type text_time),
convert_ldm_vae_checkpoint, convert_ldm_clip_checkpoint and convert_open_clip_checkpoint(prefix=
conditioner.embedders.1.model. / .0.model.), which must give every key and value back.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys

import torch
from safetensors.torch import save_file

from diffusers import AutoencoderKL, UNet2DConditionModel
from diffusers.loaders import single_file_utils as sfu
from transformers import CLIPTextConfig, CLIPTextModel

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ckpt")
BOC = (8, 16)
L = 1  # layers_per_block
HIDDEN = 16


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            v = torch.randn(p.shape, generator=g) * 0.5
            if "norm" in name and name.endswith("weight"):
                v += 1.0
            p.copy_(v)
    return model


def canonical(comp, model):
    """A component's canonical keys: its diffusers state_dict() names; for CLIP text encoders
    transformers 5.x's (embeddings.*, encoder.*, final_layer_norm.*), without the text_model.
    level of transformers 4.x and of published checkpoints (the store removes it)."""
    sd = model.state_dict()
    if comp.startswith("text_encoder"):
        sd = {k[len("text_model."):] if k.startswith("text_model.") else k: v for k, v in sd.items()}
    return sd


def build(family):
    sd2 = family == "sd2"
    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        block_out_channels=BOC, layers_per_block=L, sample_size=8, in_channels=4, out_channels=4,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=HIDDEN,
        attention_head_dim=(2, 4) if sd2 else 4, use_linear_projection=sd2, norm_num_groups=4)
    vae = AutoencoderKL(
        block_out_channels=BOC, in_channels=3, out_channels=3, latent_channels=4,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
        layers_per_block=L, norm_num_groups=4, sample_size=16)
    text = CLIPTextModel(CLIPTextConfig(
        hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=2,
        num_attention_heads=2, vocab_size=100, max_position_embeddings=77,
        hidden_act="gelu" if sd2 else "quick_gelu", eos_token_id=2, bos_token_id=0,
        pad_token_id=1, projection_dim=HIDDEN))
    base = 100 if sd2 else 0
    return {"unet": randomize(unet, base + 1), "vae": randomize(vae, base + 2),
            "text_encoder": randomize(text, base + 3)}


# ---- diffusers -> LDM (the inverse of diffusers' single_file_utils rules) ----
UNET_RESNET = [("norm1", "in_layers.0"), ("conv1", "in_layers.2"), ("norm2", "out_layers.0"),
               ("conv2", "out_layers.3"), ("time_emb_proj", "emb_layers.1"),
               ("conv_shortcut", "skip_connection")]


def rename(rest, pairs):
    for a, b in pairs:
        if rest.startswith(a + "."):
            return b + rest[len(a):]
    return rest


def ldm_unet(sd):
    has_attn = {int(k.split(".")[1]) for k in sd if k.startswith("up_blocks.") and ".attentions." in k}
    out = {}
    for k, v in sd.items():
        p = k.split(".")
        if k.startswith("time_embedding.linear_1."):
            n = "time_embed.0." + p[-1]
        elif k.startswith("add_embedding.linear_1."):  # SDXL text_time
            n = "label_emb.0.0." + p[-1]
        elif k.startswith("add_embedding.linear_2."):
            n = "label_emb.0.2." + p[-1]
        elif k.startswith("time_embedding.linear_2."):
            n = "time_embed.2." + p[-1]
        elif k.startswith("conv_in."):
            n = "input_blocks.0.0." + p[-1]
        elif k.startswith("conv_norm_out."):
            n = "out.0." + p[-1]
        elif k.startswith("conv_out."):
            n = "out.2." + p[-1]
        elif p[0] == "down_blocks":
            b = int(p[1])
            if p[2] == "downsamplers":
                n = f"input_blocks.{1 + b * (L + 1) + L}.0.op." + ".".join(p[5:])
            elif p[2] == "resnets":
                n = f"input_blocks.{1 + b * (L + 1) + int(p[3])}.0." + rename(".".join(p[4:]), UNET_RESNET)
            else:
                n = f"input_blocks.{1 + b * (L + 1) + int(p[3])}.1." + ".".join(p[4:])
        elif p[0] == "mid_block":
            if p[1] == "resnets":
                n = f"middle_block.{2 * int(p[2])}." + rename(".".join(p[3:]), UNET_RESNET)
            else:
                n = "middle_block.1." + ".".join(p[3:])
        elif p[0] == "up_blocks":
            b = int(p[1])
            if p[2] == "upsamplers":
                n = f"output_blocks.{b * (L + 1) + L}.{2 if b in has_attn else 1}.conv." + p[-1]
            elif p[2] == "resnets":
                n = f"output_blocks.{b * (L + 1) + int(p[3])}.0." + rename(".".join(p[4:]), UNET_RESNET)
            else:
                n = f"output_blocks.{b * (L + 1) + int(p[3])}.1." + ".".join(p[4:])
        else:
            raise KeyError(k)
        out["model.diffusion_model." + n] = v
    return out


VAE_ATTN = [("group_norm", "norm"), ("to_q", "q"), ("to_k", "k"), ("to_v", "v"),
            ("to_out.0", "proj_out")]


def ldm_vae(sd):
    nup = 1 + max(int(k.split(".")[2]) for k in sd if k.startswith("decoder.up_blocks."))
    out = {}
    for k, v in sd.items():
        p = k.split(".")
        n = k.replace("conv_norm_out", "norm_out")
        if p[1] in ("down_blocks", "up_blocks"):
            b = int(p[2]) if p[1] == "down_blocks" else nup - 1 - int(p[2])
            side = "down" if p[1] == "down_blocks" else "up"
            if p[3] == "resnets":
                rest = ".".join(p[5:]).replace("conv_shortcut", "nin_shortcut")
                n = f"{p[0]}.{side}.{b}.block.{p[4]}.{rest}"
            else:
                n = f"{p[0]}.{side}.{b}.{'downsample' if side == 'down' else 'upsample'}.conv." + p[-1]
        elif p[1] == "mid_block":
            if p[2] == "resnets":
                n = f"{p[0]}.mid.block_{int(p[3]) + 1}." + ".".join(p[4:]).replace("conv_shortcut", "nin_shortcut")
            else:
                n = f"{p[0]}.mid.attn_1." + rename(".".join(p[4:]), VAE_ATTN)
                if v.ndim == 2:
                    v = v[:, :, None, None]  # linear -> 1x1 conv, as LDM stores them
        out["first_stage_model." + n] = v.contiguous()
    return out


def ldm_clip(sd):
    out = {"cond_stage_model.transformer." + k: v for k, v in sd.items()}
    out["cond_stage_model.transformer.text_model.embeddings.position_ids"] = torch.arange(77)[None]
    return out


OPENCLIP_LAYER = [("layer_norm1", "ln_1"), ("layer_norm2", "ln_2"), ("mlp.fc1", "mlp.c_fc"),
                  ("mlp.fc2", "mlp.c_proj"), ("self_attn", "attn")]


def ldm_openclip(sd, seed, P="cond_stage_model.model."):
    out = {P + "positional_embedding": sd["text_model.embeddings.position_embedding.weight"],
           P + "token_embedding.weight": sd["text_model.embeddings.token_embedding.weight"],
           P + "ln_final.weight": sd["text_model.final_layer_norm.weight"],
           P + "ln_final.bias": sd["text_model.final_layer_norm.bias"]}
    if "text_projection.weight" in sd:  # SDXL: OpenCLIP's x @ proj [D,P] = diffusers' weight.T
        out[P + "text_projection"] = sd["text_projection.weight"].T.contiguous()
        out[P + "logit_scale"] = torch.tensor(4.6052)
    else:
        out[P + "text_projection"] = torch.randn(HIDDEN, HIDDEN, generator=torch.Generator().manual_seed(seed))
    layers = sorted({int(k.split(".")[3]) for k in sd if k.startswith("text_model.encoder.layers.")})
    for i in layers:
        pre = f"text_model.encoder.layers.{i}."
        for w in ("weight", "bias"):
            out[f"{P}transformer.resblocks.{i}.attn.in_proj_{w}"] = torch.cat(
                [sd[f"{pre}self_attn.{x}_proj.{w}"] for x in "qkv"], 0)
        for k, v in sd.items():
            if k.startswith(pre) and not any(f"self_attn.{x}_proj." in k for x in "qkv"):
                out[f"{P}transformer.resblocks.{i}." + rename(k[len(pre):], OPENCLIP_LAYER)] = v
    return out


def single_file(models, family):
    ck = {}
    ck.update(ldm_unet(canonical("unet", models["unet"])))
    ck.update(ldm_vae(canonical("vae", models["vae"])))
    # single files hold the text encoder in transformers 4.x naming (text_model.*), as published
    te = {"text_model." + k: v for k, v in canonical("text_encoder", models["text_encoder"]).items()}
    ck.update(ldm_openclip(te, 7) if family == "sd2" else ldm_clip(te))
    betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000) ** 2
    ck["betas"] = betas
    ck["alphas_cumprod"] = torch.cumprod(1 - betas, 0)
    return {k: v.contiguous() for k, v in ck.items()}


def check_with_diffusers(ck, models, family, ema=False):
    """diffusers' own single-file conversion must give back each model's state_dict."""
    nvae = len(models["vae"].config.down_block_types)
    got = {"unet": sfu.convert_ldm_unet_checkpoint(ck, {"layers_per_block": L}, extract_ema=ema),
           "vae": sfu.convert_ldm_vae_checkpoint(ck, {"down_block_types": ("DownEncoderBlock2D",) * nvae,
                                                       "up_block_types": ("UpDecoderBlock2D",) * nvae})}
    if family == "sd2":
        got["text_encoder"] = sfu.convert_open_clip_checkpoint(models["text_encoder"], ck)
    else:
        got["text_encoder"] = sfu.convert_ldm_clip_checkpoint(ck)
        got["text_encoder"].pop("text_model.embeddings.position_ids")
    got["text_encoder"] = {k[len("text_model."):]: v for k, v in got["text_encoder"].items()}
    for comp, m in models.items():
        ref = canonical(comp, m)
        assert set(got[comp]) == set(ref), (comp, set(got[comp]) ^ set(ref))
        for k, v in ref.items():
            want = v * 2 if (ema and comp == "unet") else v
            assert torch.equal(got[comp][k].float(), want.float()), (comp, k)


def sha(t):
    return hashlib.sha256(t.detach().float().contiguous().numpy().astype("<f4").tobytes()).hexdigest()


def write_reference(path, models):
    with open(path, "w") as f:
        f.write("# component\tcanonical key\tshape\tsha256 f32\tsha256 f16-rounded\tsha256 bf16-rounded\n")
        for comp, m in models.items():
            for k, v in sorted(canonical(comp, m).items()):
                f.write(f"{comp}\t{k}\t{','.join(map(str, v.shape))}\t{sha(v)}\t"
                        f"{sha(v.half())}\t{sha(v.bfloat16())}\n")


def from_arch(arch_dir, out):
    """--arch: random weights for the configs of models/arch/<arch>/arch.json (so the checkpoint
    fits that architecture's graphs): a diffusers folder, one LDM single file (F32) and the
    reference listing, in out/."""
    global L, HIDDEN
    a = json.load(open(os.path.join(arch_dir, "arch.json")))
    cfg, family = a["configs"], a["family"]
    L, HIDDEN = cfg["unet"]["layers_per_block"], cfg["text_encoder"]["hidden_size"]
    torch.manual_seed(0)
    models = {"unet": randomize(UNet2DConditionModel(**cfg["unet"]), 1),
              "vae": randomize(AutoencoderKL(**cfg["vae"]), 2),
              "text_encoder": randomize(CLIPTextModel(CLIPTextConfig(**cfg["text_encoder"])), 3)}
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for comp, m in models.items():
        m.save_pretrained(os.path.join(out, "diffusers", comp), safe_serialization=True)
    ck = single_file(models, family)
    check_with_diffusers(ck, models, family)
    save_file(ck, os.path.join(out, f"{a['arch']}.safetensors"), metadata={"format": "pt"})
    write_reference(os.path.join(out, "reference.tsv"), models)
    print(a["arch"], "ok:", sum(len(m.state_dict()) for m in models.values()), "keys in", out)


def f16_exact(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    return model


def sdxl(arch_dir, d):
    """models/ckpt/sdxl (see the file comment)."""
    global L
    from transformers import CLIPTextModelWithProjection
    a = json.load(open(os.path.join(arch_dir, "arch.json")))
    cfg = a["configs"]
    L = cfg["unet"]["layers_per_block"]
    torch.manual_seed(0)
    models = {"unet": UNet2DConditionModel(**cfg["unet"]), "vae": AutoencoderKL(**cfg["vae"]),
              "text_encoder": CLIPTextModel(CLIPTextConfig(**cfg["text_encoder"])),
              "text_encoder_2": CLIPTextModelWithProjection(CLIPTextConfig(**cfg["text_encoder_2"]))}
    # export_sd's variance-preserving init (not randomize's std 0.5, whose activations grow so
    # that float32 itself is off by 1e-3 on the UNet): tests/sdxl compares compiled outputs
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from export_sd import reinit
    for i, (comp, m) in enumerate(models.items()):
        f16_exact(reinit(m, 201 + i)).eval()
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    import copy
    for comp, m in models.items():
        copy.deepcopy(m).half().save_pretrained(os.path.join(d, "diffusers", comp),
                                                safe_serialization=True)
    ck = {}
    ck.update(ldm_unet(canonical("unet", models["unet"])))
    ck.update(ldm_vae(canonical("vae", models["vae"])))
    te = {"text_model." + k: v for k, v in canonical("text_encoder", models["text_encoder"]).items()}
    ck.update({"conditioner.embedders.0.transformer." + k: v for k, v in te.items()})
    ck["conditioner.embedders.0.transformer.text_model.embeddings.position_ids"] = torch.arange(77)[None]
    te2 = {("text_model." + k if k != "text_projection.weight" else k): v
           for k, v in canonical("text_encoder_2", models["text_encoder_2"]).items()}
    ck.update(ldm_openclip(te2, 0, "conditioner.embedders.1.model."))
    ck = {k: v.contiguous() for k, v in ck.items()}
    # diffusers' own conversion gives every key and value back
    unet_cfg = dict(cfg["unet"])
    got = {"unet": sfu.convert_ldm_unet_checkpoint(ck, unet_cfg),
           "vae": sfu.convert_ldm_vae_checkpoint(ck, cfg["vae"]),
           "text_encoder": sfu.convert_ldm_clip_checkpoint(ck),
           "text_encoder_2": sfu.convert_open_clip_checkpoint(
               models["text_encoder_2"], ck, prefix="conditioner.embedders.1.model.")}
    got["text_encoder"].pop("text_model.embeddings.position_ids")
    refiner = ldm_openclip(te2, 0, "conditioner.embedders.0.model.")
    got_ref = sfu.convert_open_clip_checkpoint(models["text_encoder_2"], refiner,
                                               prefix="conditioner.embedders.0.model.")
    for comp, g in list(got.items()) + [("text_encoder_2", got_ref)]:
        g = {k.removeprefix("text_model."): v for k, v in g.items()}
        ref = canonical(comp, models[comp])
        assert set(g) == set(ref), (comp, set(g) ^ set(ref))
        for k, v in ref.items():
            assert torch.equal(g[k].float(), v.float()), (comp, k)
    meta = {"format": "pt"}
    save_file({k: (v.half() if v.is_floating_point() else v) for k, v in ck.items()},
              os.path.join(d, "sdxl.safetensors"), metadata=meta)
    save_file({k: v.half().contiguous() for k, v in refiner.items()},
              os.path.join(d, "refiner_te2.safetensors"), metadata=meta)
    write_reference(os.path.join(d, "reference.tsv"), models)
    print("sdxl ok:", sum(len(m.state_dict()) for m in models.values()), "keys in", d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", help="models/arch/<arch> folder: checkpoints for its configs instead")
    ap.add_argument("--out", help="with --arch: output folder")
    ap.add_argument("--families", default="sd1,sd2,sdxl")
    args = ap.parse_args()
    if args.arch:
        return from_arch(args.arch, args.out or os.path.join(OUT, os.path.basename(args.arch.rstrip("/"))))
    fams = args.families.split(",")
    if "sdxl" in fams:
        sdxl(os.path.join(os.path.dirname(OUT), "arch", "tiny_sdxl"), os.path.join(OUT, "sdxl"))
    for family in [f for f in ("sd1", "sd2") if f in fams]:
        d = os.path.join(OUT, family)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        models = build(family)
        for comp, m in models.items():
            m.save_pretrained(os.path.join(d, "diffusers", comp), safe_serialization=True)
        for comp, m in build(family).items():  # same seeds: the same values, in float16
            m.half().save_pretrained(os.path.join(d, "diffusers", comp), safe_serialization=True,
                                     variant="fp16")
        models["unet"].save_pretrained(os.path.join(d, "sharded", "unet"), safe_serialization=True,
                                       max_shard_size="80KB")
        if family == "sd1":  # a text encoder as transformers 4.x saved it (text_model.*)
            os.makedirs(os.path.join(d, "transformers4", "text_encoder"))
            save_file({"text_model." + k: v.contiguous()
                       for k, v in canonical("text_encoder", models["text_encoder"]).items()},
                      os.path.join(d, "transformers4", "text_encoder", "model.safetensors"),
                      metadata={"format": "pt"})
        ck = single_file(models, family)
        if family == "sd1":  # a standalone VAE as A1111 users have them: LDM keys, no prefix, f16
            save_file({k[len("first_stage_model."):]: v.half() for k, v in ck.items()
                       if k.startswith("first_stage_model.")},
                      os.path.join(d, "vae_ldm_f16.safetensors"), metadata={"format": "pt"})
        check_with_diffusers(ck, models, family)
        meta = {"format": "pt"}  # one key: safetensors writes a map in random order
        save_file(ck, os.path.join(d, f"{family}.safetensors"), metadata=meta)
        for name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
            save_file({k: (v.to(dt) if v.is_floating_point() else v) for k, v in ck.items()},
                      os.path.join(d, f"{family}_{name}.safetensors"), metadata=meta)
        ema = dict(ck)
        for k, v in ck.items():
            if k.startswith("model.diffusion_model."):
                ema["model_ema." + "".join(k.split(".")[1:])] = (v * 2).contiguous()
        ema["model_ema.decay"] = torch.tensor(0.9999)
        ema["model_ema.num_updates"] = torch.tensor(1000, dtype=torch.int32)
        check_with_diffusers(ema, models, family, ema=True)
        save_file(ema, os.path.join(d, f"{family}_ema.safetensors"), metadata=meta)
        write_reference(os.path.join(d, "reference.tsv"), models)
        print(family, "ok:", sum(len(m.state_dict()) for m in models.values()), "keys")


if __name__ == "__main__":
    sys.exit(main())
