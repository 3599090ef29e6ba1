#!/usr/bin/env python3
"""export_family.py — export the Stable Diffusion family beyond SD 1.5 to ONNX (both PyTorch
exporters), with fixed-seed random weights, inputs and PyTorch reference outputs.

What it does
  Builds each model offline from its published configuration (the config dict is written below;
  no from_pretrained, no download), shrunk for `--size tiny`, re-initializes every parameter with
  export_sd.py's `reinit`, and writes the same folder layout as export_sd.py through its
  `export_one` (model.onnx, inputs/, ref/, meta.json) — `models/<size>/<model>/` for the
  TorchScript exporter (opset 17, dynamic axes), `models/<size>/<model>_dynamo/` for the dynamo
  exporter (default opset, dynamic shapes). Models:
      sd21_unet        SD 2.1 / SD-Turbo UNet: head dim per block, linear proj_in/proj_out,
                       cross_attention_dim 1024 (UNet2DConditionModel)
      sdxl_unet        SDXL UNet: text_time additional embeddings (text_embeds, time_ids),
                       transformer_layers_per_block per level (UNet2DConditionModel)
      vae16_decoder    16-channel VAE decoder of SD3/Flux (AutoencoderKL, latent_channels=16, no
                       post_quant_conv; shift/scale stay in the pipeline)
      taesd_decoder    TAESD decoder (AutoencoderTiny.decode)
      clip_g           SDXL's text_encoder_2: OpenCLIP ViT-bigG text tower with projection
                       (CLIPTextModelWithProjection): text_embeds, last and penultimate hidden
      t5_encoder       T5 v1.1 encoder (T5EncoderModel: relative attention bias, RMS norm,
                       gated tanh-GELU)
      sd3_transformer  SD3 MMDiT (SD3Transformer2DModel)
      flux_transformer Flux (FluxTransformer2DModel: RoPE from img/txt ids, RMSNorm q/k, joint and
                       single-stream blocks)
      ldm_attnblock    a slice of the CompVis/ldm VAE (original SD checkpoints, older diffusers
                       AttentionBlock exports): conv_in, the ldm `AttnBlock` (GroupNorm, q/k/v 1x1
                       convs, bmm(q, k) and bmm(v, softmaxᵀ): the probabilities are the RIGHT
                       operand, heads channels-first), norm_out + SiLU + conv_out; the module is
                       written below (no ldm package)

Assumes
  python3 with torch, diffusers, transformers, onnx, onnxruntime, onnxscript (dynamo), numpy
  (dev machine only: CI never runs this script; the committed tiny files are all tests need).

Guarantees
  Same versions + same seed -> same weights, inputs and references (per model; export_sd.py's
  guarantees). Graph input/output names as the diffusers/optimum ONNX pipelines name them.

Usage
  python3 models/export_family.py --size tiny [--models sd21_unet,...]
                                  [--exporter torchscript|dynamo|both] [--out DIR] [--seed N]
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_sd  # noqa: E402  (shared: reinit, export_one, UNET_FULL, clip_token_ids, ...)
from export_sd import reinit, UNetWrapper, VaeDecoderWrapper  # noqa: E402

# ----------------------------------------------------------------------------------------------
# Configurations: published configs (the arguments that matter), tiny = the same with small widths
# ----------------------------------------------------------------------------------------------

# stabilityai/stable-diffusion-2-1-base (= sd-turbo) unet/config.json
SD21_UNET_FULL = dict(
    export_sd.UNET_FULL, sample_size=64, cross_attention_dim=1024,
    attention_head_dim=[5, 10, 20, 20],  # diffusers: number of heads per block (head dim 64)
    use_linear_projection=True,
)
SD21_UNET_TINY = dict(
    SD21_UNET_FULL, sample_size=16,
    down_block_types=["CrossAttnDownBlock2D", "DownBlock2D"],
    up_block_types=["UpBlock2D", "CrossAttnUpBlock2D"],
    block_out_channels=[16, 32], layers_per_block=1, norm_num_groups=8,
    cross_attention_dim=48, attention_head_dim=[2, 4],  # head dim 8 at both levels
)

# stabilityai/stable-diffusion-xl-base-1.0 unet/config.json
SDXL_UNET_FULL = dict(
    sample_size=128, in_channels=4, out_channels=4, center_input_sample=False,
    flip_sin_to_cos=True, freq_shift=0,
    down_block_types=["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
    up_block_types=["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
    block_out_channels=[320, 640, 1280], layers_per_block=2, downsample_padding=1,
    mid_block_scale_factor=1, act_fn="silu", norm_num_groups=32, norm_eps=1e-5,
    cross_attention_dim=2048, attention_head_dim=[5, 10, 20], use_linear_projection=True,
    transformer_layers_per_block=[1, 2, 10], addition_embed_type="text_time",
    addition_time_embed_dim=256, projection_class_embeddings_input_dim=2816,
)
SDXL_UNET_TINY = dict(
    SDXL_UNET_FULL, sample_size=16,
    down_block_types=["DownBlock2D", "CrossAttnDownBlock2D"],
    up_block_types=["CrossAttnUpBlock2D", "UpBlock2D"],
    block_out_channels=[16, 32], layers_per_block=1, norm_num_groups=8,
    cross_attention_dim=48, attention_head_dim=[2, 4], transformer_layers_per_block=[1, 2],
    addition_time_embed_dim=8,
    projection_class_embeddings_input_dim=32 + 6 * 8,  # text_embeds (clip_g projection) + 6 ids
)
SDXL_TEXT_EMBEDS_TINY = 32

# stabilityai/stable-diffusion-3-medium-diffusers vae/config.json (Flux's is the same but for
# scaling/shift factors)
VAE16_FULL = dict(
    export_sd.VAE_FULL, latent_channels=16, use_quant_conv=False, use_post_quant_conv=False,
    scaling_factor=1.5305, shift_factor=0.0609,
)
VAE16_TINY = dict(
    export_sd.VAE_TINY, latent_channels=16, use_quant_conv=False, use_post_quant_conv=False,
    scaling_factor=1.5305, shift_factor=0.0609,
)

# madebyollin/taesd config.json (AutoencoderTiny defaults)
TAESD_FULL = dict(
    in_channels=3, out_channels=3, encoder_block_out_channels=[64, 64, 64, 64],
    decoder_block_out_channels=[64, 64, 64, 64], act_fn="relu", latent_channels=4,
    upsampling_scaling_factor=2, num_encoder_blocks=[1, 3, 3, 3], num_decoder_blocks=[3, 3, 3, 1],
    latent_magnitude=3, latent_shift=0.5, scaling_factor=1.0,
)
TAESD_TINY = dict(TAESD_FULL, encoder_block_out_channels=[16, 16, 16, 16],
                  decoder_block_out_channels=[16, 16, 16, 16])

# stabilityai/stable-diffusion-xl-base-1.0 text_encoder_2/config.json (OpenCLIP ViT-bigG/14)
CLIPG_FULL = dict(
    export_sd.CLIP_FULL, hidden_size=1280, intermediate_size=5120, num_attention_heads=20,
    num_hidden_layers=32, hidden_act="gelu", projection_dim=1280,
)
CLIPG_TINY = dict(
    CLIPG_FULL, vocab_size=1000, hidden_size=32, intermediate_size=64, num_attention_heads=2,
    num_hidden_layers=3, projection_dim=SDXL_TEXT_EMBEDS_TINY,
)

# google/t5-v1_1-xxl (SD3's text_encoder_3, Flux's text_encoder_2) config.json
T5_FULL = dict(
    vocab_size=32128, d_model=4096, d_kv=64, d_ff=10240, num_layers=24, num_heads=64,
    relative_attention_num_buckets=32, relative_attention_max_distance=128,
    feed_forward_proj="gated-gelu", dense_act_fn="gelu_new", layer_norm_epsilon=1e-6,
    is_encoder_decoder=True, tie_word_embeddings=False, pad_token_id=0, eos_token_id=1,
)
T5_TINY = dict(T5_FULL, vocab_size=1000, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)

# stabilityai/stable-diffusion-3-medium-diffusers transformer/config.json
SD3_FULL = dict(
    sample_size=128, patch_size=2, in_channels=16, num_layers=24, attention_head_dim=64,
    num_attention_heads=24, joint_attention_dim=4096, caption_projection_dim=1536,
    pooled_projection_dim=2048, out_channels=16, pos_embed_max_size=192,
)
SD3_TINY = dict(
    SD3_FULL, sample_size=16, num_layers=2, attention_head_dim=8, num_attention_heads=2,
    joint_attention_dim=32, caption_projection_dim=16, pooled_projection_dim=24,
    pos_embed_max_size=16,
)

# black-forest-labs/FLUX.1-schnell transformer/config.json (dev: guidance_embeds=True)
FLUX_FULL = dict(
    patch_size=1, in_channels=64, num_layers=19, num_single_layers=38, attention_head_dim=128,
    num_attention_heads=24, joint_attention_dim=4096, pooled_projection_dim=768,
    guidance_embeds=False, axes_dims_rope=[16, 56, 56],
)
FLUX_TINY = dict(
    FLUX_FULL, in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16,
    num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=24,
    axes_dims_rope=[4, 6, 6],
)

# CompVis/ldm first-stage VAE (configs/autoencoder/*.yaml and SD v1's first_stage_config):
# ch 128, ch_mult (1,2,4,4) -> 512 channels at the mid-block, Normalize = GroupNorm(32, eps=1e-6)
LDM_ATTN_FULL = dict(z_channels=4, channels=512, num_groups=32, eps=1e-6)
LDM_ATTN_TINY = dict(LDM_ATTN_FULL, channels=64)

# Input sizes: latent H, W (pixels/8), text tokens (CLIP: 77 as the pipelines pad; T5/MMDiT: 16
# tiny, 256/512 full)
SIZES = {
    "tiny": {"hw": (16, 16), "vae_hw": (8, 8), "clip_seq": 77, "t5_seq": 16, "batch": 1},
    "full": {"hw": (64, 64), "vae_hw": (64, 64), "clip_seq": 77, "t5_seq": 256, "batch": 1},
}


def pick(size, tiny, full):
    return tiny if size == "tiny" else full


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def make(ctor, cfg, seed):
    """ctor(cfg) with every parameter re-drawn by export_sd.reinit(seed), in eval mode."""
    torch.manual_seed(seed)
    return reinit(ctor(cfg), seed).eval()


# ----------------------------------------------------------------------------------------------
# Wrappers: tensors in, tuple of tensors out
# ----------------------------------------------------------------------------------------------


class SdxlUNetWrapper(torch.nn.Module):
    """unet(sample, timestep, encoder_hidden_states, text_embeds, time_ids) -> out_sample."""

    def __init__(self, unet):
        super().__init__()
        self.unet = unet

    def forward(self, sample, timestep, encoder_hidden_states, text_embeds, time_ids):
        cond = {"text_embeds": text_embeds, "time_ids": time_ids}
        return self.unet(sample, timestep, encoder_hidden_states, added_cond_kwargs=cond,
                         return_dict=False)[0]


class ClipProjWrapper(torch.nn.Module):
    """clip_g(input_ids) -> (text_embeds, last_hidden_state, penultimate_hidden_state): what SDXL
    takes from text_encoder_2 (pooled projection and hidden_states[-2])."""

    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, input_ids):
        out = self.clip(input_ids=input_ids, output_hidden_states=True, return_dict=True)
        return out.text_embeds, out.last_hidden_state, out.hidden_states[-2]


class T5Wrapper(torch.nn.Module):
    """t5_encoder(input_ids) -> last_hidden_state (no attention mask: SD3/Flux pass none)."""

    def __init__(self, t5):
        super().__init__()
        self.t5 = t5

    def forward(self, input_ids):
        return self.t5(input_ids=input_ids, return_dict=False)[0]


class Sd3Wrapper(torch.nn.Module):
    """transformer(hidden_states, encoder_hidden_states, pooled_projections, timestep) -> out."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, hidden_states, encoder_hidden_states, pooled_projections, timestep):
        return self.m(hidden_states=hidden_states, encoder_hidden_states=encoder_hidden_states,
                      pooled_projections=pooled_projections, timestep=timestep,
                      return_dict=False)[0]


class FluxWrapper(torch.nn.Module):
    """transformer(hidden_states, encoder_hidden_states, pooled_projections, timestep, img_ids,
    txt_ids) -> out (packed latents [B, HW/4, 4C])."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def for_exporter(self, exporter):
        """The TorchScript exporter has no symbolic for aten::rms_norm (torch.nn.RMSNorm, used
        for Flux's q/k norms): for it, each torch.nn.RMSNorm becomes diffusers' RMSNorm with the
        same weight and eps, which computes x * rsqrt(mean(x^2) + eps) * w in plain ops (the
        form older diffusers exported). Same function; the dynamo export keeps torch's module."""
        if exporter != "torchscript":
            return self
        from diffusers.models.normalization import RMSNorm
        for mod in list(self.modules()):
            for cname, child in list(mod.named_children()):
                if isinstance(child, torch.nn.RMSNorm):
                    dim = child.normalized_shape[-1]
                    eps = child.eps if child.eps is not None else torch.finfo(torch.float32).eps
                    new = RMSNorm(dim, eps=eps, elementwise_affine=child.weight is not None)
                    if child.weight is not None:
                        new.weight.data.copy_(child.weight.data)
                    setattr(mod, cname, new.eval())
        return self

    def forward(self, hidden_states, encoder_hidden_states, pooled_projections, timestep, img_ids,
                txt_ids):
        return self.m(hidden_states=hidden_states, encoder_hidden_states=encoder_hidden_states,
                      pooled_projections=pooled_projections, timestep=timestep, img_ids=img_ids,
                      txt_ids=txt_ids, return_dict=False)[0]


class LdmAttnBlock(torch.nn.Module):
    """ldm.modules.diffusionmodules.model.AttnBlock (CompVis/latent-diffusion, stable-diffusion
    v1), written out: one head of dim C, q/k/v/proj_out 1x1 convs, channels-first bmm's."""

    def __init__(self, c, groups, eps):
        super().__init__()
        self.norm = torch.nn.GroupNorm(groups, c, eps=eps, affine=True)
        self.q = torch.nn.Conv2d(c, c, kernel_size=1)
        self.k = torch.nn.Conv2d(c, c, kernel_size=1)
        self.v = torch.nn.Conv2d(c, c, kernel_size=1)
        self.proj_out = torch.nn.Conv2d(c, c, kernel_size=1)

    def forward(self, x):
        h_ = self.norm(x)
        q = self.q(h_)
        k = self.k(h_)
        v = self.v(h_)
        b, c, h, w = q.shape
        q = q.reshape(b, c, h * w)
        q = q.permute(0, 2, 1)  # b,hw,c
        k = k.reshape(b, c, h * w)  # b,c,hw
        w_ = torch.bmm(q, k)  # b,hw,hw    w[b,i,j]=sum_c q[b,i,c]k[b,c,j]
        w_ = w_ * (int(c) ** (-0.5))
        w_ = torch.nn.functional.softmax(w_, dim=2)
        v = v.reshape(b, c, h * w)
        w_ = w_.permute(0, 2, 1)  # b,hw,hw (first hw of k, second of q)
        h_ = torch.bmm(v, w_)  # b,c,hw (hw of q) h_[b,c,j] = sum_i v[b,c,i] w_[b,i,j]
        h_ = h_.reshape(b, c, h, w)
        h_ = self.proj_out(h_)
        return x + h_


class LdmAttnModel(torch.nn.Module):
    """latent [B, z, H, W] -> conv_in 3x3 -> AttnBlock -> GroupNorm, SiLU, conv_out 3x3
    -> [B, z, H, W] (the ldm decoder's mid-block attention between its stem and head, without the ResnetBlocks)."""

    def __init__(self, cfg):
        super().__init__()
        c, z = cfg["channels"], cfg["z_channels"]
        self.conv_in = torch.nn.Conv2d(z, c, kernel_size=3, padding=1)
        self.attn = LdmAttnBlock(c, cfg["num_groups"], cfg["eps"])
        self.norm_out = torch.nn.GroupNorm(cfg["num_groups"], c, eps=cfg["eps"], affine=True)
        self.conv_out = torch.nn.Conv2d(c, z, kernel_size=3, padding=1)

    def forward(self, latent_sample):
        h = self.attn(self.conv_in(latent_sample))
        return self.conv_out(torch.nn.functional.silu(self.norm_out(h)))


# ----------------------------------------------------------------------------------------------
# Builders: (size, seed, rng) -> (module, inputs, output names, dynamic_axes, config), as in
# export_sd.py
# ----------------------------------------------------------------------------------------------

VAE_DYN = {"latent_sample": {0: "batch", 2: "height", 3: "width"},
           "sample": {0: "batch", 2: "out_height", 3: "out_width"}}
UNET_DYN = {
    "sample": {0: "batch", 2: "height", 3: "width"},
    "encoder_hidden_states": {0: "batch", 1: "sequence"},
    "out_sample": {0: "batch", 2: "height", 3: "width"},
}


def unet_inputs(rng, size, cfg):
    s = SIZES[size]
    b, (h, w) = s["batch"], s["hw"]
    return {
        "sample": randn(rng, b, 4, h, w),
        "timestep": np.array([981.0], dtype=np.float32),
        "encoder_hidden_states": randn(rng, b, s["clip_seq"], cfg["cross_attention_dim"]),
    }


def build_sd21_unet(size, seed, rng):
    from diffusers import UNet2DConditionModel
    cfg = pick(size, SD21_UNET_TINY, SD21_UNET_FULL)
    model = make(lambda c: UNet2DConditionModel(**c), cfg, seed)
    return UNetWrapper(model), unet_inputs(rng, size, cfg), ["out_sample"], dict(UNET_DYN), cfg


def build_sdxl_unet(size, seed, rng):
    from diffusers import UNet2DConditionModel
    cfg = pick(size, SDXL_UNET_TINY, SDXL_UNET_FULL)
    model = make(lambda c: UNet2DConditionModel(**c), cfg, seed)
    inputs = unet_inputs(rng, size, cfg)
    b = SIZES[size]["batch"]
    ntext = cfg["projection_class_embeddings_input_dim"] - 6 * cfg["addition_time_embed_dim"]
    inputs["text_embeds"] = randn(rng, b, ntext)
    # original size, crop top-left, target size (pixels), as the SDXL pipeline builds them
    hw = [8 * d for d in SIZES[size]["hw"]]
    inputs["time_ids"] = np.array([hw + [0, 0] + hw] * b, dtype=np.float32)
    dyn = dict(UNET_DYN, text_embeds={0: "batch"}, time_ids={0: "batch"})
    return SdxlUNetWrapper(model), inputs, ["out_sample"], dyn, cfg


def build_vae16_decoder(size, seed, rng):
    from diffusers import AutoencoderKL
    cfg = pick(size, VAE16_TINY, VAE16_FULL)
    model = make(lambda c: AutoencoderKL(**c), cfg, seed)
    s = SIZES[size]
    b, (h, w) = s["batch"], s["vae_hw"]
    # as the SD3/Flux pipelines feed it: latents / scaling_factor + shift_factor
    lat = randn(rng, b, cfg["latent_channels"], h, w)
    inputs = {"latent_sample": (lat / np.float32(cfg["scaling_factor"])
                                + np.float32(cfg["shift_factor"])).astype(np.float32)}
    return VaeDecoderWrapper(model), inputs, ["sample"], dict(VAE_DYN), cfg


def build_taesd_decoder(size, seed, rng):
    from diffusers import AutoencoderTiny
    cfg = pick(size, TAESD_TINY, TAESD_FULL)
    model = make(lambda c: AutoencoderTiny(**c), cfg, seed)
    s = SIZES[size]
    b, (h, w) = s["batch"], s["vae_hw"]
    inputs = {"latent_sample": randn(rng, b, cfg["latent_channels"], h, w)}
    return VaeDecoderWrapper(model), inputs, ["sample"], dict(VAE_DYN), cfg


def build_clip_g(size, seed, rng):
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection
    cfg = pick(size, CLIPG_TINY, CLIPG_FULL)
    model = make(lambda c: CLIPTextModelWithProjection(CLIPTextConfig(**c)), cfg, seed)
    s = SIZES[size]
    inputs = {"input_ids": export_sd.clip_token_ids(rng, s["batch"], s["clip_seq"],
                                                    cfg["vocab_size"])}
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "text_embeds": {0: "batch"},
           "last_hidden_state": {0: "batch", 1: "sequence"},
           "penultimate_hidden_state": {0: "batch", 1: "sequence"}}
    outs = ["text_embeds", "last_hidden_state", "penultimate_hidden_state"]
    return ClipProjWrapper(model), inputs, outs, dyn, cfg


def build_t5_encoder(size, seed, rng):
    from transformers import T5Config, T5EncoderModel
    cfg = pick(size, T5_TINY, T5_FULL)
    model = make(lambda c: T5EncoderModel(T5Config(**c)), cfg, seed)
    s = SIZES[size]
    b, n = s["batch"], s["t5_seq"]
    # a prompt of 9 tokens, </s> (1), then <pad> (0) up to the length, as the pipelines pad
    ids = np.zeros((b, n), dtype=np.int64)
    ids[:, :9] = rng.integers(2, cfg["vocab_size"], size=(b, 9))
    ids[:, 9] = 1
    dyn = {"input_ids": {0: "batch", 1: "sequence"},
           "last_hidden_state": {0: "batch", 1: "sequence"}}
    return T5Wrapper(model), {"input_ids": ids}, ["last_hidden_state"], dyn, cfg


def build_sd3_transformer(size, seed, rng):
    from diffusers import SD3Transformer2DModel
    cfg = pick(size, SD3_TINY, SD3_FULL)
    model = make(lambda c: SD3Transformer2DModel(**c), cfg, seed)
    s = SIZES[size]
    b, (h, w) = s["batch"], s["hw"]
    inputs = {
        "hidden_states": randn(rng, b, cfg["in_channels"], h, w),
        "encoder_hidden_states": randn(rng, b, s["t5_seq"], cfg["joint_attention_dim"]),
        "pooled_projections": randn(rng, b, cfg["pooled_projection_dim"]),
        "timestep": np.array([500.0] * b, dtype=np.float32),
    }
    dyn = {"hidden_states": {0: "batch", 2: "height", 3: "width"},
           "encoder_hidden_states": {0: "batch", 1: "sequence"},
           "pooled_projections": {0: "batch"}, "timestep": {0: "batch"},
           "out_sample": {0: "batch", 2: "height", 3: "width"}}
    return Sd3Wrapper(model), inputs, ["out_sample"], dyn, cfg


def build_flux_transformer(size, seed, rng):
    from diffusers import FluxTransformer2DModel
    cfg = pick(size, FLUX_TINY, FLUX_FULL)
    model = make(lambda c: FluxTransformer2DModel(**c), cfg, seed)
    s = SIZES[size]
    b, (h, w) = s["batch"], s["hw"]
    hp, wp = h // 2, w // 2  # the pipeline packs 2x2 latent patches into tokens
    img_ids = np.zeros((hp, wp, 3), dtype=np.float32)
    img_ids[..., 1] = np.arange(hp, dtype=np.float32)[:, None]
    img_ids[..., 2] = np.arange(wp, dtype=np.float32)[None, :]
    inputs = {
        "hidden_states": randn(rng, b, hp * wp, cfg["in_channels"]),
        "encoder_hidden_states": randn(rng, b, s["t5_seq"], cfg["joint_attention_dim"]),
        "pooled_projections": randn(rng, b, cfg["pooled_projection_dim"]),
        "timestep": np.array([1.0] * b, dtype=np.float32),  # Flux: sigma in [0, 1]
        "img_ids": img_ids.reshape(hp * wp, 3),
        "txt_ids": np.zeros((s["t5_seq"], 3), dtype=np.float32),
    }
    dyn = {"hidden_states": {0: "batch", 1: "image_tokens"},
           "encoder_hidden_states": {0: "batch", 1: "sequence"},
           "pooled_projections": {0: "batch"}, "timestep": {0: "batch"},
           "img_ids": {0: "image_tokens"}, "txt_ids": {0: "sequence"},
           "out_sample": {0: "batch", 1: "image_tokens"}}
    return FluxWrapper(model), inputs, ["out_sample"], dyn, cfg


def build_ldm_attnblock(size, seed, rng):
    cfg = pick(size, LDM_ATTN_TINY, LDM_ATTN_FULL)
    model = make(LdmAttnModel, cfg, seed)
    (h, w) = SIZES[size]["vae_hw"]
    b = 2 if size == "tiny" else 1  # batch 2 tiny: the kernel's batch strides are exercised
    inputs = {"latent_sample": randn(rng, b, cfg["z_channels"], h, w)}
    dyn = {"latent_sample": {0: "batch", 2: "height", 3: "width"},
           "sample": {0: "batch", 2: "height", 3: "width"}}
    return model, inputs, ["sample"], dyn, cfg


BUILDERS = {
    "sd21_unet": build_sd21_unet,
    "sdxl_unet": build_sdxl_unet,
    "vae16_decoder": build_vae16_decoder,
    "taesd_decoder": build_taesd_decoder,
    "clip_g": build_clip_g,
    "t5_encoder": build_t5_encoder,
    "sd3_transformer": build_sd3_transformer,
    "flux_transformer": build_flux_transformer,
    "ldm_attnblock": build_ldm_attnblock,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=["tiny", "full"], required=True)
    ap.add_argument("--models", default=",".join(BUILDERS),
                    help="comma-separated subset of " + ",".join(BUILDERS))
    ap.add_argument("--exporter", choices=["torchscript", "dynamo", "both"], default="both")
    ap.add_argument("--out", default=export_sd.HERE, help="root folder (default: models/)")
    ap.add_argument("--seed", type=int, default=export_sd.DEFAULT_SEED)
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    names = export_sd.parse_models(ap, args.models, BUILDERS)
    exporters = ["torchscript", "dynamo"] if args.exporter == "both" else [args.exporter]
    for n in names:
        for e in exporters:
            export_sd.export_one(n, args.size, args.out, args.seed, external_data=False,
                                 exporter=e, builders=BUILDERS)


if __name__ == "__main__":
    main()
