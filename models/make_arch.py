#!/usr/bin/env python3
"""make_arch.py — weight-free architecture graphs (docs/engine.md): models/arch/<arch>/.

What it does
  For each architecture (a family + config), builds every model from its published config with
  fixed-seed random weights (export_sd's builders and `reinit`, so that no two parameters are
  equal and the exporter deduplicates none), exports it as export_sd.py does (TorchScript
  exporter, dynamo=False, opset 17, dynamic axes, constant folding), writes its name map
  (models/name_map.py) and then strips the graph: every initializer the name map gives a
  checkpoint key keeps its name, dims and dtype but its data becomes an external-data reference
  to the placeholder location `weights.placeholder` (which never exists: onnx2cl fills it from a
  checkpoint, `--weights-from CKPT --name-map <model>.namemap`); exporter constants (`-` lines)
  stay inline. Writes per architecture:
      models/arch/<arch>/<model>.onnx       weight-free graph (kilobytes to a few MB)
      models/arch/<arch>/<model>.namemap    its name map
      models/arch/<arch>/arch.json          family, prediction type, default size, VAE scaling
                                            factor, tokenizer/scheduler defaults, configs, and
                                            the canonical keys + shapes per component that
                                            identify the architecture (what the store checks)
  and models/arch/SHA256SUMS over every file of models/arch/.
  Models: unet, vae_decoder (AutoencoderKL.decode), vae_encoder (quant_conv(encoder(x)): the
  latent distribution's parameters [B, 2*latent_channels, H/8, W/8], mean then log-variance, as
  diffusers' DiagonalGaussianDistribution reads them), text_encoder (CLIPTextModel:
  last_hidden_state, pooler_output).

Architectures
  tiny_sd15  export_sd.py's tiny configs (the tests' models: same seed, so unet/vae_decoder/
             text_encoder are the committed models/tiny exports without their weights)
  sd15       SD 1.x at published size (runwayml/stable-diffusion-v1-5): the UNet export needs
             ~10 GB of memory and minutes
  sd2        SD 2.x (stabilityai/stable-diffusion-2-1): UNet with linear projections and head
             dim 64, OpenCLIP ViT-H text encoder (transformers CLIPTextModel form, gelu, 23
             layers as the pipeline uses it: penultimate layer), v-prediction at 768
  tiny_sd2   sd2 shrunk as export_family's sd21_unet (the text encoder: 2 layers, gelu)
  tiny_sd15_inpaint  tiny_sd15 with a 9-channel inpainting UNet (latents + mask + masked-image
             latents, as runwayml/stable-diffusion-inpainting): the tests' inpainting checkpoint
  tiny_sdxl  SDXL base (stabilityai/stable-diffusion-xl-base-1.0) shrunk: UNet DownBlock2D +
             2 CrossAttnDownBlock2D (16/32/32 channels, heads 2/2/4, layers_per_block 2,
             transformer layers 1/2/2, mid 2), addition_embed_type "text_time"; text_encoder = CLIP-L (quick_gelu,
             3 layers, hidden 32), text_encoder_2 = OpenCLIP-G as CLIPTextModelWithProjection
             (gelu, 3 layers, hidden 48, projection 40); cross_attention_dim 32 + 48 = 80;
             VAE (16/32 channels) scaling 0.13025; EulerDiscreteScheduler as SDXL's scheduler_config.json
  taesd      TAESD's decoder (madebyollin/taesd config.json; AutoencoderTiny.decode: tanh(x/3)*3,
             the layers, then 2x - 1: an image in [-1, 1] from the pipeline's latents as they are,
             scaling_factor 1.0). taesdxl (madebyollin/taesdxl) has the same config and keys: one
             graph, other weights. Family "taesd", only the vae_decoder model (component vae,
             keys decoder.layers.*); not a pipeline of its own: onnx2cl-sd --taesd PATH
  tiny_taesd taesd shrunk as export_family's TAESD_TINY (16 channels): the tests' decoder
  tiny_sd3   SD 3 (stabilityai/stable-diffusion-3-medium-diffusers) shrunk as tests/pipeline/sd3's
             tiny_sd3 (models/make_sd3_refs.py): transformer (SD3Transformer2DModel), CLIP-L and
             CLIP-G with projection (text_embeds, last_hidden_state, penultimate_hidden_state), T5
             encoder (text_encoder_3; its embedding keyed once as shared.weight), the 16-channel VAE
  tiny_flux_schnell, tiny_flux_dev  Flux shrunk as tests/pipeline/flux's folders
             (models/make_flux_refs.py): transformer (FluxTransformer2DModel; dev with the guidance
             input; exported with the dynamo exporter, which keeps the rotary reshapes symbolic),
             CLIP-L (pooler_output), T5 (text_encoder_2), the 16-channel VAE
  SDXL models: unet(sample, timestep, encoder_hidden_states, text_embeds, time_ids) ->
  out_sample (export_family's SdxlUNetWrapper, as sdxl_unet); text_encoder(input_ids) ->
  last_hidden_state, pooler_output, penultimate_hidden_state (= hidden_states[-2], what SDXL
  conditions on); text_encoder_2(input_ids) -> text_embeds, last_hidden_state,
  penultimate_hidden_state (export_family's clip_g naming). text_encoder_2's canonical keys
  drop transformers' text_model. level (as the store's, and text_encoder's in transformers 5.x).

Assumes
  torch, diffusers, transformers, onnx, onnxscript (the dynamo exporter: Flux's transformer)
  (dev machine only; CI never runs it). The graphs contain
  no weights, so any seed gives the same files as long as no two parameters are equal.

Usage
  python3 models/make_arch.py [--arch tiny_sd15,sd15,...] [--models unet,vae_decoder,...]
"""

import argparse
import gc
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_family  # noqa: E402
import export_sd  # noqa: E402
import name_map  # noqa: E402

PLACEHOLDER = "weights.placeholder"
OPSET = export_sd.OPSET


class VaeEncoderWrapper(torch.nn.Module):
    """vae_encoder(sample) -> latent_parameters: quant_conv(encoder(sample)), [B, 2*latent, h, w]
    (mean, then log-variance: DiagonalGaussianDistribution's input)."""

    def __init__(self, vae):
        super().__init__()
        self.vae = vae

    def forward(self, sample):
        h = self.vae.encoder(sample)
        if self.vae.quant_conv is not None:
            h = self.vae.quant_conv(h)
        return h


# SD 2.x configs (stabilityai/stable-diffusion-2-1 unet/config.json, text_encoder/config.json).
UNET_SD2 = dict(export_sd.UNET_FULL, sample_size=96, attention_head_dim=[5, 10, 20, 20],
                cross_attention_dim=1024, use_linear_projection=True)
UNET_TINY_SD2 = dict(UNET_SD2, sample_size=16,
                     down_block_types=["CrossAttnDownBlock2D", "DownBlock2D"],
                     up_block_types=["UpBlock2D", "CrossAttnUpBlock2D"],
                     block_out_channels=[32, 64], layers_per_block=1, norm_num_groups=8,
                     attention_head_dim=[2, 4], cross_attention_dim=32)
CLIP_SD2 = dict(vocab_size=49408, hidden_size=1024, intermediate_size=4096,
                num_attention_heads=16, num_hidden_layers=23, max_position_embeddings=77,
                hidden_act="gelu", layer_norm_eps=1e-5, bos_token_id=0, eos_token_id=2,
                pad_token_id=1, projection_dim=512)
CLIP_TINY_SD2 = dict(CLIP_SD2, vocab_size=1000, hidden_size=32, intermediate_size=64,
                     num_attention_heads=2, num_hidden_layers=2, projection_dim=32)

SD15_DEFAULTS = {"family": "sd1", "prediction_type": "epsilon", "default_size": [512, 512],
                 "vae_scaling_factor": 0.18215, "clip_skip_layers": 0,
                 "tokenizer": {"kind": "clip_bpe", "max_length": 77, "pad": "eos"},
                 "scheduler": {"kind": "pndm", "num_train_timesteps": 1000,
                               "beta_start": 0.00085, "beta_end": 0.012,
                               "beta_schedule": "scaled_linear", "steps_offset": 1,
                               # runwayml/stable-diffusion-v1-5's scheduler_config.json: without
                               # them diffusers' DDIM defaults (true) clip x0 and use alpha 1
                               "clip_sample": False, "set_alpha_to_one": False,
                               "skip_prk_steps": True}}
# SD 2.x: what diffusers' from_single_file assumes for a "v2" file without a config (0.42
# single_file_utils: v_prediction unless global_step == 875000, 768 px; the scheduler of
# stabilityai/stable-diffusion-2-1: DDIM, clip_sample and set_alpha_to_one false). The 512 base
# (epsilon) has the same keys and shapes: onnx2cl-sd --prediction-type epsilon --width 512.
SD2_DEFAULTS = dict(SD15_DEFAULTS, family="sd2", prediction_type="v_prediction",
                    default_size=[768, 768],
                    tokenizer={"kind": "clip_bpe", "max_length": 77, "pad": "!"},
                    scheduler=dict(SD15_DEFAULTS["scheduler"], kind="ddim", clip_sample=False,
                                   set_alpha_to_one=False))

# SDXL base (stabilityai/stable-diffusion-xl-base-1.0: unet, text_encoder, text_encoder_2, vae
# config.json), shrunk with SDXL's block structure
UNET_TINY_SDXL = dict(
    export_family.SDXL_UNET_FULL, sample_size=64,
    block_out_channels=[16, 32, 32], layers_per_block=2, norm_num_groups=8,
    attention_head_dim=[2, 2, 4], transformer_layers_per_block=[1, 2, 2],
    cross_attention_dim=32 + 48,  # text_encoder hidden + text_encoder_2 hidden (SDXL: 768 + 1280)
    addition_time_embed_dim=8,
    projection_class_embeddings_input_dim=40 + 6 * 8)  # text_embeds + 6 time ids (SDXL: 1280 + 6 * 256)
CLIP_TINY_SDXL = dict(export_sd.CLIP_TINY, num_hidden_layers=3)
CLIPG_TINY_SDXL = dict(export_family.CLIPG_FULL, vocab_size=1000, hidden_size=48,
                       intermediate_size=96, num_attention_heads=2, num_hidden_layers=3,
                       projection_dim=40)
VAE_TINY_SDXL = dict(export_sd.VAE_TINY, block_out_channels=[16, 32], scaling_factor=0.13025,
                     force_upcast=True)
SDXL_DEFAULTS = {"family": "sdxl", "prediction_type": "epsilon", "default_size": [1024, 1024],
                 "vae_scaling_factor": 0.13025, "clip_skip_layers": 0,
                 "tokenizer": {"kind": "clip_bpe", "max_length": 77, "pad": "eos"},
                 "tokenizer_2": {"kind": "clip_bpe", "max_length": 77, "pad": "!"},
                 # what the pipeline feeds: text_encoder's and text_encoder_2's penultimate hidden
                 # states concatenated on the last axis; text_encoder_2's text_embeds; time ids
                 # (original size, crop top-left, target size)
                 "conditioning": {"encoder_hidden_states": ["text_encoder.penultimate_hidden_state",
                                                           "text_encoder_2.penultimate_hidden_state"],
                                  "text_embeds": "text_encoder_2.text_embeds",
                                  "time_ids": ["original_size", "crops_coords_top_left",
                                               "target_size"]},
                 # stabilityai/stable-diffusion-xl-base-1.0 scheduler/scheduler_config.json
                 "scheduler": {"kind": "euler", "num_train_timesteps": 1000,
                               "beta_start": 0.00085, "beta_end": 0.012,
                               "beta_schedule": "scaled_linear", "steps_offset": 1,
                               "timestep_spacing": "leading", "interpolation_type": "linear",
                               "use_karras_sigmas": False, "clip_sample": False,
                               "set_alpha_to_one": False, "skip_prk_steps": True,
                               "sample_max_value": 1.0}}

# SD 3 (stabilityai/stable-diffusion-3-medium-diffusers: transformer, text_encoder (CLIP-L with
# projection), text_encoder_2 (CLIP-G with projection), text_encoder_3 (T5 v1.1 XXL encoder), vae
# (16 latent channels, no quant convs, shift factor), FlowMatchEulerDiscreteScheduler shift 3),
# shrunk as the tests' tests/pipeline/sd3/tiny_sd3 (models/make_sd3_refs.py): T5 d_model 96 = the
# transformer's joint_attention_dim (CLIP 32 + 48 zero-padded to it), pooled 32 + 40 = 72
SD3_TRANSFORMER_TINY = dict(export_family.SD3_TINY, joint_attention_dim=96, pooled_projection_dim=72)
SD3_CLIPL_TINY = dict(export_sd.CLIP_TINY, num_hidden_layers=3, projection_dim=32)
SD3_T5_TINY = dict(export_family.T5_TINY, vocab_size=4100, d_model=96, d_kv=8, d_ff=64, num_layers=2,
                   num_heads=4)
SD3_VAE_TINY = dict(export_family.VAE16_TINY, block_out_channels=[16, 16, 16, 16],
                    down_block_types=["DownEncoderBlock2D"] * 4, up_block_types=["UpDecoderBlock2D"] * 4,
                    norm_num_groups=8)
SD3_DEFAULTS = {"family": "sd3", "default_size": [1024, 1024], "optional_components": ["text_encoder_3"],
                "vae_scaling_factor": 1.5305, "vae_shift_factor": 0.0609, "clip_skip_layers": 0,
                "tokenizer": {"kind": "clip_bpe", "max_length": 77, "pad": "eos"},
                "tokenizer_2": {"kind": "clip_bpe", "max_length": 77, "pad": "!"},
                # StableDiffusion3Pipeline's max_sequence_length default
                "tokenizer_3": {"kind": "t5", "max_length": 256},
                "conditioning": {"encoder_hidden_states": ["text_encoder.penultimate_hidden_state",
                                                          "text_encoder_2.penultimate_hidden_state",
                                                          "text_encoder_3.last_hidden_state"],
                                 "pooled_projections": ["text_encoder.text_embeds",
                                                        "text_encoder_2.text_embeds"]},
                "scheduler": {"_class_name": "FlowMatchEulerDiscreteScheduler",
                              "num_train_timesteps": 1000, "shift": 3.0}}

# Flux (black-forest-labs/FLUX.1-schnell and -dev: transformer, text_encoder (CLIP-L: pooler_output),
# text_encoder_2 (T5 v1.1 XXL encoder), the 16-channel VAE with Flux's factors), shrunk as the tests'
# tests/pipeline/flux (models/make_flux_refs.py); T5's length 64 there (FluxPipeline's
# max_sequence_length: 512 for dev, 256 is usual for schnell)
FLUX_TRANSFORMER_TINY = dict(export_family.FLUX_TINY, in_channels=64, pooled_projection_dim=32)
FLUX_CLIP_TINY = dict(export_sd.CLIP_TINY, num_hidden_layers=2)
FLUX_T5_TINY = dict(SD3_T5_TINY, d_model=32)
FLUX_VAE_TINY = dict(SD3_VAE_TINY, scaling_factor=0.3611, shift_factor=0.1159)
FLUX_DEFAULTS = {"family": "flux", "default_size": [1024, 1024], "vae_scaling_factor": 0.3611,
                 "vae_shift_factor": 0.1159, "clip_skip_layers": 0,
                 "tokenizer": {"kind": "clip_bpe", "max_length": 77, "pad": "eos"},
                 "tokenizer_2": {"kind": "t5", "max_length": 512},
                 "conditioning": {"pooled_projections": "text_encoder.pooler_output",
                                  "encoder_hidden_states": "text_encoder_2.last_hidden_state"}}
FLUX_SCHED_DEV = {"_class_name": "FlowMatchEulerDiscreteScheduler", "num_train_timesteps": 1000,
                  "shift": 3.0, "use_dynamic_shifting": True, "base_shift": 0.5, "max_shift": 1.15,
                  "base_image_seq_len": 256, "max_image_seq_len": 4096}
FLUX_SCHED_SCHNELL = {"_class_name": "FlowMatchEulerDiscreteScheduler", "num_train_timesteps": 1000,
                      "shift": 1.0, "use_dynamic_shifting": False}

ARCHS = {
    "tiny_sd15": dict(SD15_DEFAULTS, size="tiny", unet=export_sd.UNET_TINY,
                      vae=export_sd.VAE_TINY, text_encoder=export_sd.CLIP_TINY,
                      default_size=[128, 128]),
    "sd15": dict(SD15_DEFAULTS, size="full", unet=export_sd.UNET_FULL, vae=export_sd.VAE_FULL,
                 text_encoder=export_sd.CLIP_FULL),
    # an inpainting UNet (runwayml/stable-diffusion-inpainting's layout: in_channels 9 = latents,
    # mask, masked-image latents) around tiny_sd15's other models
    "tiny_sd15_inpaint": dict(SD15_DEFAULTS, size="tiny", unet=dict(export_sd.UNET_TINY, in_channels=9),
                              vae=export_sd.VAE_TINY, text_encoder=export_sd.CLIP_TINY,
                              default_size=[128, 128]),
    "tiny_sd2": dict(SD2_DEFAULTS, size="tiny", unet=UNET_TINY_SD2, vae=export_sd.VAE_TINY,
                     text_encoder=CLIP_TINY_SD2, default_size=[128, 128]),
    "sd2": dict(SD2_DEFAULTS, size="full", unet=UNET_SD2, vae=export_sd.VAE_FULL,
                text_encoder=CLIP_SD2),
    "tiny_sdxl": dict(SDXL_DEFAULTS, size="tiny", unet=UNET_TINY_SDXL, vae=VAE_TINY_SDXL,
                      text_encoder=CLIP_TINY_SDXL, text_encoder_2=CLIPG_TINY_SDXL,
                      default_size=[128, 128]),
}
# full size (make_one_light: the modules do not fit this machine's memory the way make_one exports)
# the full-size architectures share the CLIP BPE folders of sd15 (pad <|endoftext|>) and sd2 (pad
# "!", OpenCLIP's) through arch.json's tokenizer "dir" (pipeline/sd_engine.c) instead of copies
TOK_CLIP = dict(SDXL_DEFAULTS["tokenizer"], dir="../sd15/tokenizer")
TOK_OPENCLIP = dict(SDXL_DEFAULTS["tokenizer_2"], dir="../sd2/tokenizer")
ARCHS["sdxl"] = dict(SDXL_DEFAULTS, size="full", unet=export_family.SDXL_UNET_FULL,
                     tokenizer=TOK_CLIP, tokenizer_2=TOK_OPENCLIP,
                     vae=dict(export_sd.VAE_FULL, scaling_factor=0.13025, force_upcast=True),
                     text_encoder=export_sd.CLIP_FULL, text_encoder_2=export_family.CLIPG_FULL)
ARCHS["tiny_sd3"] = dict(SD3_DEFAULTS, size="tiny", transformer=SD3_TRANSFORMER_TINY, vae=SD3_VAE_TINY,
                         text_encoder=SD3_CLIPL_TINY, text_encoder_2=CLIPG_TINY_SDXL,
                         text_encoder_3=SD3_T5_TINY, default_size=[128, 128])
for _v, _g, _sc in (("schnell", False, FLUX_SCHED_SCHNELL), ("dev", True, FLUX_SCHED_DEV)):
    ARCHS["tiny_flux_" + _v] = dict(FLUX_DEFAULTS, size="tiny", scheduler=_sc,
                                    transformer=dict(FLUX_TRANSFORMER_TINY, guidance_embeds=_g),
                                    vae=FLUX_VAE_TINY, text_encoder=FLUX_CLIP_TINY,
                                    text_encoder_2=FLUX_T5_TINY, default_size=[128, 128],
                                    tokenizer_2={"kind": "t5", "max_length": 64})
# full size: SD 3 medium, SD 3.5 medium / large (stabilityai/stable-diffusion-3-medium-diffusers,
# -3.5-medium, -3.5-large transformer/config.json), Flux.1 schnell / dev; their text encoders and VAE
# are the same in each (CLIP-L with projection, OpenCLIP bigG, T5 v1.1 XXL, the 16-channel VAE)
SD3_CLIPL_FULL = dict(export_sd.CLIP_FULL, projection_dim=768)
SD35_MEDIUM = dict(export_family.SD3_FULL, pos_embed_max_size=384, qk_norm="rms_norm",
                   dual_attention_layers=tuple(range(13)))
SD35_LARGE = dict(export_family.SD3_FULL, num_layers=38, num_attention_heads=38,
                  caption_projection_dim=2432, qk_norm="rms_norm")
for _n, _t in (("sd3_medium", export_family.SD3_FULL), ("sd35_medium", SD35_MEDIUM),
               ("sd35_large", SD35_LARGE)):
    ARCHS[_n] = dict(SD3_DEFAULTS, size="full", transformer=_t, vae=export_family.VAE16_FULL,
                     tokenizer=TOK_CLIP, tokenizer_2=TOK_OPENCLIP,
                     text_encoder=SD3_CLIPL_FULL, text_encoder_2=export_family.CLIPG_FULL,
                     text_encoder_3=export_family.T5_FULL)
for _v, _g, _sc, _len in (("schnell", False, FLUX_SCHED_SCHNELL, 256), ("dev", True, FLUX_SCHED_DEV, 512)):
    ARCHS["flux_" + _v] = dict(FLUX_DEFAULTS, size="full", scheduler=_sc,
                               transformer=dict(export_family.FLUX_FULL, guidance_embeds=_g),
                               vae=dict(export_family.VAE16_FULL, scaling_factor=0.3611,
                                        shift_factor=0.1159),
                               text_encoder=export_sd.CLIP_FULL, text_encoder_2=export_family.T5_FULL,
                               tokenizer=TOK_CLIP,
                               tokenizer_2={"kind": "t5", "max_length": _len})
TAESD_DEFAULTS = {"family": "taesd", "vae_scaling_factor": 1.0}
ARCHS["taesd"] = dict(TAESD_DEFAULTS, size="full", vae=export_family.TAESD_FULL)
ARCHS["tiny_taesd"] = dict(TAESD_DEFAULTS, size="tiny", vae=export_family.TAESD_TINY)
MODELS = ["unet", "vae_decoder", "vae_encoder", "text_encoder"]
MODELS_SDXL = MODELS + ["text_encoder_2"]
MODELS_SD3 = ["transformer", "vae_decoder", "vae_encoder", "text_encoder", "text_encoder_2", "text_encoder_3"]
MODELS_FLUX = ["transformer", "vae_decoder", "vae_encoder", "text_encoder", "text_encoder_2"]
CONFIG_KEYS = ("unet", "transformer", "vae", "text_encoder", "text_encoder_2", "text_encoder_3")


class SdxlTextEncoderWrapper(torch.nn.Module):
    """text_encoder(input_ids) -> (last_hidden_state, pooler_output, penultimate_hidden_state):
    SDXL's CLIP-L, whose hidden_states[-2] the pipeline uses."""

    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, input_ids):
        out = self.clip(input_ids=input_ids, output_hidden_states=True, return_dict=True)
        return out.last_hidden_state, out.pooler_output, out.hidden_states[-2]


class _NoTextModel:
    """A module's state_dict() without transformers' text_model. level (canonical keys)."""

    def __init__(self, m):
        self.m = m

    def state_dict(self):
        sd = {k.removeprefix("text_model."): v for k, v in self.m.state_dict().items()}
        if "shared.weight" in sd:  # T5: the encoder's embedding is tied to shared.weight, saved once
            sd.pop("encoder.embed_tokens.weight", None)
        return sd


def is_sdxl(arch):
    return ARCHS[arch]["family"] == "sdxl"


def is_sd3(arch):
    return ARCHS[arch]["family"] == "sd3"


def is_flux(arch):
    return ARCHS[arch]["family"] == "flux"


def is_taesd(arch):
    return ARCHS[arch]["family"] == "taesd"


def build(arch, model, seed):
    """(wrapper module, example inputs {name: tensor}, output names, dynamic axes, component)."""
    from diffusers import AutoencoderKL, AutoencoderTiny, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel
    a = ARCHS[arch]
    if is_taesd(arch):
        if model != "vae_decoder":
            raise SystemExit(f"{arch}: only vae_decoder (TAESD's decoder)")
        torch.manual_seed(seed)
        m = export_sd.reinit(AutoencoderTiny(**a["vae"]), seed).eval()
        h = 8 if a["size"] == "tiny" else 64
        dyn = {"latent_sample": {0: "batch", 2: "height", 3: "width"},
               "sample": {0: "batch", 2: "out_height", 3: "out_width"}}
        return (export_sd.VaeDecoderWrapper(m), {"latent_sample": torch.randn(1, 4, h, h)},
                ["sample"], dyn, "vae")
    if arch in ("tiny_sd15", "sd15") and model in export_sd.BUILDERS:
        # exactly export_sd.py's module and inputs: tiny_sd15 = models/tiny without weights
        m, ins, outs, dyn, _ = export_sd.BUILDERS[model](a["size"], seed,
                                                         np.random.default_rng(seed))
        ins = {k: torch.from_numpy(v) for k, v in ins.items()}
        return m, ins, outs, dyn, name_map.COMPONENTS[model]
    torch.manual_seed(seed)
    if is_sd3(arch) and model in ("transformer", "text_encoder", "text_encoder_3"):
        return build_sd3(arch, model, seed)
    if is_flux(arch) and model in ("transformer", "text_encoder", "text_encoder_2"):
        return build_flux(arch, model, seed)
    if model == "unet" and is_sdxl(arch):
        cfg = a["unet"]
        m = export_sd.reinit(UNet2DConditionModel(**cfg), seed).eval()
        h = 16 if a["size"] == "tiny" else 64  # traced at 512 px (dynamic axes)
        ntext = cfg["projection_class_embeddings_input_dim"] - 6 * cfg["addition_time_embed_dim"]
        px = float(8 * h)
        ins = {"sample": torch.randn(1, cfg.get("in_channels", 4), h, h),
               "timestep": torch.tensor([981.0]),
               "encoder_hidden_states": torch.randn(1, 77, cfg["cross_attention_dim"]),
               "text_embeds": torch.randn(1, ntext),
               "time_ids": torch.tensor([[px, px, 0.0, 0.0, px, px]])}
        dyn = {"sample": {0: "batch", 2: "height", 3: "width"},
               "encoder_hidden_states": {0: "batch", 1: "sequence"},
               "text_embeds": {0: "batch"}, "time_ids": {0: "batch"},
               "out_sample": {0: "batch", 2: "height", 3: "width"}}
        return export_family.SdxlUNetWrapper(m), ins, ["out_sample"], dyn, "unet"
    if model == "unet":
        cfg = a["unet"]
        m = export_sd.reinit(UNet2DConditionModel(**cfg), seed).eval()
        h = 16 if a["size"] == "tiny" else cfg["sample_size"]
        ins = {"sample": torch.randn(1, cfg.get("in_channels", 4), h, h), "timestep": torch.tensor([981.0]),
               "encoder_hidden_states": torch.randn(1, 77, cfg["cross_attention_dim"])}
        dyn = {"sample": {0: "batch", 2: "height", 3: "width"},
               "encoder_hidden_states": {0: "batch", 1: "sequence"},
               "out_sample": {0: "batch", 2: "height", 3: "width"}}
        return export_sd.UNetWrapper(m), ins, ["out_sample"], dyn, "unet"
    if model in ("vae_decoder", "vae_encoder"):
        cfg = a["vae"]
        m = export_sd.reinit(AutoencoderKL(**cfg), seed).eval()
        if model == "vae_decoder":
            h = 8 if a["size"] == "tiny" else 64
            dyn = {"latent_sample": {0: "batch", 2: "height", 3: "width"},
                   "sample": {0: "batch", 2: "out_height", 3: "out_width"}}
            return (export_sd.VaeDecoderWrapper(m),
                    {"latent_sample": torch.randn(1, cfg.get("latent_channels", 4), h, h)}, ["sample"], dyn, "vae")
        h = 16 if a["size"] == "tiny" else 512
        dyn = {"sample": {0: "batch", 2: "height", 3: "width"},
               "latent_parameters": {0: "batch", 2: "latent_height", 3: "latent_width"}}
        return (VaeEncoderWrapper(m), {"sample": torch.randn(1, 3, h, h)}, ["latent_parameters"],
                dyn, "vae")
    if model == "text_encoder_2":
        from transformers import CLIPTextModelWithProjection
        cfg = a["text_encoder_2"]
        m = export_sd.reinit(CLIPTextModelWithProjection(CLIPTextConfig(**cfg)), seed).eval()
        ids = torch.from_numpy(export_sd.clip_token_ids(np.random.default_rng(seed), 1, 77,
                                                        cfg["vocab_size"]))
        outs = ["text_embeds", "last_hidden_state", "penultimate_hidden_state"]
        dyn = {"input_ids": {0: "batch", 1: "sequence"}, "text_embeds": {0: "batch"},
               "last_hidden_state": {0: "batch", 1: "sequence"},
               "penultimate_hidden_state": {0: "batch", 1: "sequence"}}
        return export_family.ClipProjWrapper(m), {"input_ids": ids}, outs, dyn, "text_encoder_2"
    cfg = a["text_encoder"]
    m = export_sd.reinit(CLIPTextModel(CLIPTextConfig(**cfg)), seed).eval()
    ids = torch.from_numpy(export_sd.clip_token_ids(np.random.default_rng(seed), 1, 77,
                                                    cfg["vocab_size"]))
    if is_sdxl(arch):
        dyn = {"input_ids": {0: "batch", 1: "sequence"},
               "last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"},
               "penultimate_hidden_state": {0: "batch", 1: "sequence"}}
        return (SdxlTextEncoderWrapper(m), {"input_ids": ids},
                ["last_hidden_state", "pooler_output", "penultimate_hidden_state"], dyn,
                "text_encoder")
    dyn = {"input_ids": {0: "batch", 1: "sequence"},
           "last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"}}
    return (export_sd.TextEncoderWrapper(m), {"input_ids": ids},
            ["last_hidden_state", "pooler_output"], dyn, "text_encoder")


def build_t5(a, comp, t5_len, seed):
    """T5EncoderModel of arch a's config comp (SD 3's text_encoder_3, Flux's text_encoder_2): input_ids
    [1, t5_len] -> last_hidden_state."""
    from transformers import T5Config, T5EncoderModel
    cfg = a[comp]
    m = export_sd.reinit(T5EncoderModel(T5Config(**cfg)), seed).eval()
    ids = torch.from_numpy(np.random.default_rng(seed).integers(0, cfg["vocab_size"], (1, t5_len)))
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "last_hidden_state": {0: "batch", 1: "sequence"}}
    return export_family.T5Wrapper(m), {"input_ids": ids}, ["last_hidden_state"], dyn, comp


def build_sd3(arch, model, seed):
    """SD 3's transformer (hidden_states, encoder_hidden_states [B, 77 + T5 tokens, D],
    pooled_projections, timestep -> out_sample), CLIP-L with projection (text_embeds,
    last_hidden_state, penultimate_hidden_state), T5 encoder (input_ids -> last_hidden_state)."""
    from diffusers import SD3Transformer2DModel
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection
    a = ARCHS[arch]
    t5_len = a["tokenizer_3"]["max_length"]
    if model == "transformer":
        cfg = a["transformer"]
        m = export_sd.reinit(SD3Transformer2DModel(**cfg), seed).eval()
        h = cfg["sample_size"] // 4
        ins = {"hidden_states": torch.randn(2, cfg["in_channels"], h, h),
               "encoder_hidden_states": torch.randn(2, 77 + t5_len, cfg["joint_attention_dim"]),
               "pooled_projections": torch.randn(2, cfg["pooled_projection_dim"]),
               "timestep": torch.tensor([1000.0, 1000.0])}
        dyn = {"hidden_states": {0: "batch", 2: "height", 3: "width"},
               "encoder_hidden_states": {0: "batch", 1: "sequence"}, "pooled_projections": {0: "batch"},
               "timestep": {0: "batch"}, "out_sample": {0: "batch", 2: "height", 3: "width"}}
        return export_family.Sd3Wrapper(m), ins, ["out_sample"], dyn, "transformer"
    if model == "text_encoder_3":
        return build_t5(a, "text_encoder_3", t5_len, seed)
    cfg = a["text_encoder"]
    m = export_sd.reinit(CLIPTextModelWithProjection(CLIPTextConfig(**cfg)), seed).eval()
    ids = torch.from_numpy(export_sd.clip_token_ids(np.random.default_rng(seed), 1, 77, cfg["vocab_size"]))
    outs = ["text_embeds", "last_hidden_state", "penultimate_hidden_state"]
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "text_embeds": {0: "batch"},
           "last_hidden_state": {0: "batch", 1: "sequence"},
           "penultimate_hidden_state": {0: "batch", 1: "sequence"}}
    return export_family.ClipProjWrapper(m), {"input_ids": ids}, outs, dyn, "text_encoder"


# Flux's wrappers: the test fixture's (CLIP-L -> pooler_output, last_hidden_state; dev's transformer with guidance)
from make_flux_refs import ClipPooledWrapper, FluxGuidanceWrapper  # noqa: E402


def build_flux(arch, model, seed):
    """Flux's transformer (packed latents [B, T, 4C], T5 states, CLIP pooled, timestep / 1000,
    img_ids [T, 3], txt_ids [L, 3], dev: guidance [B] -> out_sample), CLIP-L (pooler_output,
    last_hidden_state), T5 (input_ids -> last_hidden_state)."""
    from diffusers import FluxTransformer2DModel
    from transformers import CLIPTextConfig, CLIPTextModel
    a = ARCHS[arch]
    t5_len = a["tokenizer_2"]["max_length"]
    if model == "transformer":
        cfg = a["transformer"]
        m = export_sd.reinit(FluxTransformer2DModel(**cfg), seed).eval()
        tokens = 4
        ins = {"hidden_states": torch.randn(1, tokens, cfg["in_channels"]),
               "encoder_hidden_states": torch.randn(1, t5_len, cfg["joint_attention_dim"]),
               "pooled_projections": torch.randn(1, cfg["pooled_projection_dim"]),
               "timestep": torch.tensor([1.0]),
               "img_ids": torch.tensor([[0.0, r, c] for r in range(2) for c in range(2)]),
               "txt_ids": torch.zeros(t5_len, 3)}
        dyn = {"hidden_states": {1: "tokens"}, "encoder_hidden_states": {1: "sequence"},
               "img_ids": {0: "tokens"}, "txt_ids": {0: "sequence"}, "out_sample": {1: "tokens"}}
        w = export_family.FluxWrapper(m)
        if cfg.get("guidance_embeds"):
            ins["guidance"] = torch.tensor([3.5])
            w = FluxGuidanceWrapper(m)
        return w, ins, ["out_sample"], dyn, "transformer"  # exported with dynamo (make_one)
    if model == "text_encoder_2":
        return build_t5(a, "text_encoder_2", t5_len, seed)
    cfg = a["text_encoder"]
    m = export_sd.reinit(CLIPTextModel(CLIPTextConfig(**cfg)), seed).eval()
    ids = torch.from_numpy(export_sd.clip_token_ids(np.random.default_rng(seed), 1, 77, cfg["vocab_size"]))
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"},
           "last_hidden_state": {0: "batch", 1: "sequence"}}
    return ClipPooledWrapper(m), {"input_ids": ids}, ["pooler_output", "last_hidden_state"], dyn, "text_encoder"


def strip(model, rows):
    """Makes every mapped initializer of the ModelProto a placeholder reference (in place);
    returns (stripped count, stripped bytes, kept float bytes)."""
    import onnx
    from onnx import numpy_helper
    mapped = {n for n, keys, _ in rows if keys}
    n = nbytes = kept = 0
    for t in model.graph.initializer:
        a = numpy_helper.to_array(t)
        if t.name not in mapped:
            if a.dtype.kind == "f":
                kept += a.nbytes
            continue
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.ClearField("int32_data")
        del t.external_data[:]
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", PLACEHOLDER), ("length", str(a.nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        n += 1
        nbytes += a.nbytes
    return n, nbytes, kept


class _LightParams:
    """Context: modules built inside get parameters on torch's meta device (no memory) and
    export_sd.reinit does nothing; buffers stay real (accelerate's init_empty_weights with
    include_buffers=False)."""

    def __enter__(self):
        from accelerate import init_empty_weights
        self.ctx = init_empty_weights(include_buffers=False)
        self.ctx.__enter__()
        self.reinit = export_sd.reinit
        export_sd.reinit = lambda m, seed: m
        return self

    def __exit__(self, *exc):
        export_sd.reinit = self.reinit
        return self.ctx.__exit__(*exc)


def _materialize_light(module):
    """Replaces every meta parameter of module by a constant tensor of its shape that takes one
    float of memory (a stride-0 view), keeping tied parameters tied: enough to trace the forward.
    The constants differ from parameter to parameter and are not 0 (an exporter drops a Gemm's
    zero bias)."""
    new = {}
    for mod in module.modules():
        for name, p in list(mod._parameters.items()):
            if p is None:
                continue
            if id(p) not in new:
                v = torch.full((), 1.0 + len(new) * 2.0 ** -20, dtype=p.dtype)
                new[id(p)] = torch.nn.Parameter(v.expand(p.shape), requires_grad=False)
            mod._parameters[name] = new[id(p)]


def _canonical_keys(wrapper, cm, comp):
    """{wrapper parameter name: canonical key}: each parameter's (and saved float buffer's) key in
    the component module's state_dict (text encoders without transformers' text_model. level; T5's tied embedding as
    shared.weight)."""
    by_id = {}
    persistent = set(cm.state_dict(keep_vars=True))
    tensors = list(cm.named_parameters(remove_duplicate=False))
    # float buffers saved with the model (SD 3's pos_embed.pos_embed) are checkpoint keys too
    tensors += [(k, b) for k, b in cm.named_buffers(remove_duplicate=False)
                if k in persistent and b.is_floating_point()]
    for k, p in tensors:
        k = k.removeprefix("text_model.") if comp.startswith("text_encoder") else k
        if k == "encoder.embed_tokens.weight" and id(p) in by_id:
            continue
        by_id.setdefault(id(p), k)
        if k == "shared.weight":
            by_id[id(p)] = k
    shared = any(k == "shared.weight" for k, _ in cm.named_parameters(remove_duplicate=False))
    out = {n: by_id[id(p)] for n, p in list(wrapper.named_parameters(remove_duplicate=False)) +
           list(wrapper.named_buffers(remove_duplicate=False)) if id(p) in by_id}
    # T5: the encoder's embedding is tied to shared.weight (keyed once, as the store's tables say),
    # whether or not the module ties them by object
    return {n: "shared.weight" if shared and k == "encoder.embed_tokens.weight" else k
            for n, k in out.items()}


def light_graph(m, n_inputs, keys, comp):
    """Turns an export made with export_params=False and no constant folding into a weight-free
    graph as strip() leaves one: every parameter input becomes a placeholder initializer; a 2-D
    Transpose of a parameter becomes an initializer mapped 'transpose' (what constant folding and
    name_map's value matching give). Returns the name map rows [(initializer, keys, transform)]."""
    import onnx
    from onnx import helper
    params = {i.name: ([d.dim_value for d in i.type.tensor_type.shape.dim], i.type.tensor_type.elem_type)
              for i in m.graph.input[n_inputs:]}
    missing = [n for n in params if n not in keys]
    if missing:
        raise SystemExit(f"graph inputs that are no parameter: {missing[:5]}")
    consumers = {}
    for node in m.graph.node:
        for x in node.input:
            consumers.setdefault(x, []).append(node)
    rows, inits, drop = [], [], set()
    rename = {}

    def placeholder(name, dims, etype):
        t = onnx.TensorProto(name=name, data_type=etype, dims=dims)
        t.data_location = onnx.TensorProto.EXTERNAL
        nbytes = int(np.prod(dims, dtype=np.int64)) * np.dtype(helper.tensor_dtype_to_np_dtype(etype)).itemsize
        for k, v in (("location", PLACEHOLDER), ("length", str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)

    for name, (dims, etype) in params.items():
        direct = False
        for node in consumers.get(name, []):
            perm = [list(a.ints) for a in node.attribute if a.name == "perm"]
            if node.op_type == "Transpose" and len(dims) == 2 and perm in ([], [[1, 0]]):
                tname = node.output[0]
                if tname not in rename:
                    rename[tname] = name + ".T"
                    placeholder(name + ".T", dims[::-1], etype)
                    rows.append((name + ".T", [keys[name]], "transpose"))
                drop.add(id(node))
            else:
                direct = True
        if direct:
            placeholder(name, dims, etype)
            rows.append((name, [keys[name]], "copy"))
    nodes = [n for n in m.graph.node if id(n) not in drop]
    for node in nodes:
        for j, x in enumerate(node.input):
            if x in rename:
                node.input[j] = rename[x]
    for o in m.graph.output:
        if o.name in rename:
            raise SystemExit(f"graph output {o.name} is a transposed parameter")
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    keep = list(m.graph.input[:n_inputs])
    del m.graph.input[:]
    m.graph.input.extend(keep)
    m.graph.initializer.extend(inits)
    return rows


def write_rows(path, rows, comp):
    """Writes name map rows [(initializer, keys, transform)] as name_map.write_name_map does."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(name_map.HEADER)
        for name, ks, tr in rows:
            f.write(f"{name}\t{comp}\t{','.join(ks)}\t{tr}\n" if ks else f"{name}\t-\t-\t-\n")
    os.replace(tmp, path)


def make_one_light(arch, model, out_dir, seed):
    """make_one without the weights: the module is built with meta parameters (no memory),
    traced with stride-0 zero parameters, exported with export_params=False (TorchScript, no
    constant folding) and the parameter inputs turned into placeholders (light_graph). For the
    full-size SDXL / SD 3 / Flux / T5-XXL models, which do not fit this machine's memory the
    way make_one exports (module + folded copies + the serialized proto). The graph differs from
    make_one's (unfolded shape math, Unsqueezed norm weights) but computes the same."""
    import onnx
    t0 = time.time()
    with _LightParams():
        module, ins, outs, dyn, comp = build(arch, model, seed)
    _materialize_light(module)
    module.eval()
    names = list(ins)
    nparams = sum(p.numel() for p in module.parameters())
    cm = name_map.component_module(module)
    keys = _canonical_keys(module, cm, comp)
    tmp = tempfile.mkdtemp(prefix="make_arch_")
    try:
        path = os.path.join(tmp, "model.onnx")
        with torch.no_grad():
            if is_flux(arch) and model == "transformer":  # dynamo, as make_one (symbolic rotary shapes)
                prog = torch.onnx.export(module, tuple(ins[k] for k in names), None, input_names=names,
                                         output_names=outs, dynamic_shapes=export_sd.dynamo_shapes(names, dyn),
                                         dynamo=True, optimize=False, verbose=False)
                # the parameters become graph inputs (light_graph turns them into placeholders):
                # the optimizer (Split for SplitToSequence/SequenceAt, ...) then neither folds nor
                # merges them; exporter constants stay initializers with their values
                g = prog.model.graph
                for n in [n for n in g.initializers if n in keys]:
                    g.inputs.append(g.initializers.pop(n))
                prog.optimize()
                prog.save(path)
                export_sd.strip_node_metadata(path)
            else:
                torch.onnx.export(module, tuple(ins[k] for k in names), path, input_names=names,
                                  output_names=outs, dynamic_axes=dyn, opset_version=OPSET,
                                  do_constant_folding=False, export_params=False, dynamo=False,
                                  keep_initializers_as_inputs=True)  # no value deduplication
        m = onnx.load(path)
        rows = light_graph(m, len(names), keys, comp)
        write_rows(os.path.join(out_dir, model + ".namemap"), rows, comp)
        shapes = {}
        for n, p in list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers()):
            if n in keys:
                shapes[keys[n]] = list(p.shape)
        used = {k for _, ks, _ in rows for k in ks}
        onnx.save_model(m, os.path.join(out_dir, model + ".onnx"))
        size = os.path.getsize(os.path.join(out_dir, model + ".onnx"))
        print(f"[{arch}/{model}] light export ({nparams:,} params, {len(rows)} placeholders) "
              f"{model}.onnx {size / 1e6:.2f} MB; {time.time() - t0:.1f}s", flush=True)
    finally:
        shutil.rmtree(tmp)
    return comp, {k: shapes[k] for k in sorted(used)}


def make_one(arch, model, out_dir, seed):
    """Exports, maps and strips one model into out_dir; returns {key: shape} it maps."""
    import onnx
    t0 = time.time()
    module, ins, outs, dyn, comp = build(arch, model, seed)
    names = list(ins)
    nparams = sum(p.numel() for p in module.parameters())
    tmp = tempfile.mkdtemp(prefix="make_arch_")
    try:
        path = os.path.join(tmp, "model.onnx")
        # Flux's transformer: the TorchScript exporter bakes the traced token count into its
        # rotary-embedding reshapes ([1, 68, 2, -1, 2]); the dynamo exporter keeps them symbolic,
        # so one graph serves every image size
        dynamo = is_flux(arch) and model == "transformer"
        with torch.no_grad():
            if dynamo:
                torch.onnx.export(module, tuple(ins[k] for k in names), path, input_names=names,
                                  output_names=outs, dynamic_shapes=export_sd.dynamo_shapes(names, dyn),
                                  dynamo=True, verbose=False)
                export_sd.strip_node_metadata(path)
            else:
                torch.onnx.export(module, tuple(ins[k] for k in names), path, input_names=names,
                                  output_names=outs, dynamic_axes=dyn, opset_version=OPSET,
                                  do_constant_folding=True, dynamo=False)
        print(f"[{arch}/{model}] exported ({nparams:,} params) in {time.time() - t0:.1f}s",
              flush=True)
        m = onnx.load(path)
        cm = name_map.component_module(module)
        if comp.startswith("text_encoder"):
            cm = _NoTextModel(cm)  # canonical keys: no text_model. level
        rows = name_map.name_map(cm, m)
        nm_path = os.path.join(out_dir, model + ".namemap")
        name_map.write_name_map(nm_path, cm, m, comp)
        sd = cm.state_dict()
        keys = {}
        for _, ks, _ in rows:
            for k in ks:
                keys[k] = list(sd[k].shape)
        del module, sd, cm
        gc.collect()
        n, nb, kept = strip(m, rows)
        onnx.save_model(m, os.path.join(out_dir, model + ".onnx"))
        size = os.path.getsize(os.path.join(out_dir, model + ".onnx"))
        print(f"[{arch}/{model}] {n} initializers stripped ({nb / 1e6:.1f} MB), {kept} bytes of "
              f"exporter constants kept; {model}.onnx {size / 1e6:.2f} MB; "
              f"{time.time() - t0:.1f}s", flush=True)
        del m
    finally:
        shutil.rmtree(tmp)
    return comp, keys


def write_sums(root):
    lines = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if f == "SHA256SUMS":
                continue
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                lines.append(f"{hashlib.sha256(fh.read()).hexdigest()}  "
                             f"{os.path.relpath(p, root)}\n")
    with open(os.path.join(root, "SHA256SUMS"), "w") as fh:
        fh.writelines(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="tiny_sd15,tiny_sd2")
    ap.add_argument("--models", help="default: every model of the architecture")
    ap.add_argument("--out", default=os.path.join(HERE, "arch"))
    ap.add_argument("--seed", type=int, default=export_sd.DEFAULT_SEED)
    ap.add_argument("--light", action="store_true",
                    help="export without weights (make_one_light; the default for the full-size "
                         "SDXL, SD 3 and Flux architectures)")
    ap.add_argument("--json-only", action="store_true",
                    help="rewrite arch.json from the table above, keeping its models and keys (no export)")
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for arch in args.arch.split(","):
        if arch not in ARCHS:
            ap.error(f"unknown architecture '{arch}' (known: {', '.join(ARCHS)})")
        d = os.path.join(args.out, arch)
        os.makedirs(d, exist_ok=True)
        jpath = os.path.join(d, "arch.json")
        info = json.load(open(jpath)) if os.path.exists(jpath) else {}
        a = ARCHS[arch]
        info.update({k: v for k, v in a.items() if k not in CONFIG_KEYS})
        info["arch"] = arch
        info["configs"] = {k: a[k] for k in CONFIG_KEYS if k in a}
        info.setdefault("models", {})
        info.setdefault("keys", {})
        models = args.models or ",".join(MODELS_SDXL if is_sdxl(arch) else MODELS_SD3 if is_sd3(arch) else
                                         MODELS_FLUX if is_flux(arch) else
                                         ["vae_decoder"] if is_taesd(arch) else MODELS)
        for model in models.split(",") if not args.json_only else ():
            light = args.light or (a["size"] == "full" and a["family"] in ("sdxl", "sd3", "flux"))
            comp, keys = (make_one_light if light else make_one)(arch, model, d, args.seed)
            info["models"][model] = {"graph": model + ".onnx", "name_map": model + ".namemap",
                                     "component": comp}
            info["keys"].setdefault(comp, {}).update(keys)
        for comp in info["keys"]:
            info["keys"][comp] = dict(sorted(info["keys"][comp].items()))
        with open(jpath, "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
    write_sums(args.out)


if __name__ == "__main__":
    main()
