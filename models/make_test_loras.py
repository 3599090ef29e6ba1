#!/usr/bin/env python3
"""make_test_loras.py — LoRA files and their diffusers-fused references for tests/lora.

Needs torch + diffusers + peft + safetensors (not run in CI; outputs committed in tests/lora/).
Deterministic (fixed seeds). Bases: the tiny checkpoints of models/ckpt/{sd1,sd2}
(make_test_checkpoints.py) and the fine-tuned tiny SD 1.5 UNet tests/name_map/ft_unet.safetensors
(the config of models/arch/tiny_sd15, whose weight-free unet.onnx the end-to-end test compiles).

Writes tests/lora/:
  tiny_sd15_unet_ldm.safetensors  ft_unet's values in the LDM single-file layout (F16)
  F_peft.safetensors              (F = sd1, sd2) diffusers/PEFT LoRA: unet.add_adapter +
                                  text_encoder.add_adapter (LoraConfig r=4, lora_alpha=8,
                                  init_lora_weights=False: B non-zero), saved by
                                  StableDiffusionPipeline.save_lora_weights with the adapter
                                  metadata (lora_alpha)
  F_kohya.safetensors             kohya naming written directly: lora_unet_<diffusers path>,
                                  lora_te_text_model_..., alpha != rank, a LoCon 3x3 conv
                                  (resnets conv1: down [r,C,3,3], up [C,r,1,1]), 1x1 conv proj_in
  sd1_kohya_ldm.safetensors       sd1_kohya's factors under LDM module paths
                                  (lora_unet_input_blocks_1_1_...; reference: ref_sd1_kohya)
  ref_<lora>.safetensors          "<component>/<canonical key>" -> the fused float32 weight after
                                  diffusers' load_lora_weights + fuse_lora(lora_scale=SCALE) for
                                  every weight the LoRA changes (and nothing else changes)
  tiny_peft.safetensors           PEFT LoRA (unet only) for the tiny_sd15 UNet (ft_unet)
  tiny_peft_out_sample.npy        the UNet's output after fusing it at SCALE_E2E on
                                  models/tiny/unet/inputs
SCALE = 0.8 for every reference.
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from diffusers import (AutoencoderKL, DDIMScheduler, StableDiffusionPipeline,
                       UNet2DConditionModel)
from peft import LoraConfig, inject_adapter_in_model
from peft.utils import get_peft_model_state_dict
from transformers import CLIPTextModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "lora")
CK = os.path.join(ROOT, "models", "ckpt")
SCALE = 0.8
sys.path.insert(0, os.path.join(ROOT, "models"))
import make_test_checkpoints as mtc  # noqa: E402


def pipe_of(unet, te):
    return StableDiffusionPipeline(vae=None, text_encoder=te, tokenizer=None, unet=unet,
                                   scheduler=DDIMScheduler(), safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)


def load_base(fam):
    d = os.path.join(CK, fam, "diffusers")
    unet = UNet2DConditionModel.from_pretrained(os.path.join(d, "unet")).float()
    te = CLIPTextModel.from_pretrained(os.path.join(d, "text_encoder"), dtype=torch.float32)
    return unet, te


def fused_ref(fam_or_models, lora_path, name, save=True):
    unet, te = fam_or_models() if callable(fam_or_models) else fam_or_models
    before = {"unet/" + k: v.clone() for k, v in unet.state_dict().items()}
    before.update({"text_encoder/" + k: v.clone() for k, v in te.state_dict().items()})
    pipe = pipe_of(unet, te)
    pipe.load_lora_weights(lora_path, adapter_name="a")
    pipe.fuse_lora(lora_scale=SCALE, adapter_names=["a"])
    pipe.unload_lora_weights()
    after = {"unet/" + k: v for k, v in pipe.unet.state_dict().items()}
    after.update({"text_encoder/" + k: v for k, v in pipe.text_encoder.state_dict().items()})
    ref = {}
    for k, v in after.items():
        assert k in before, k
        if not torch.equal(v, before[k]):
            ref[k] = v.detach().float().contiguous()
    assert ref, name
    if save:
        save_file(ref, os.path.join(OUT, f"ref_{name}.safetensors"))
    print(f"ref_{name}: {len(ref)} weights changed")
    return pipe


def rnd(g, *shape):
    return (torch.randn(*shape, generator=g) * 0.3).contiguous()


def peft_lora(fam, seed):
    torch.manual_seed(seed)
    unet, te = load_base(fam)
    ucfg = LoraConfig(r=4, lora_alpha=8, init_lora_weights=False,
                      target_modules=["to_q", "to_k", "to_v", "to_out.0", "proj_in", "conv1"])
    tcfg = LoraConfig(r=2, lora_alpha=3, init_lora_weights=False,
                      target_modules=["q_proj", "v_proj", "fc1"])
    unet.add_adapter(ucfg)
    te = inject_adapter_in_model(tcfg, te)
    path = os.path.join(OUT, f"{fam}_peft.safetensors")
    StableDiffusionPipeline.save_lora_weights(
        OUT, unet_lora_layers=get_peft_model_state_dict(unet),
        text_encoder_lora_layers=get_peft_model_state_dict(te),
        weight_name=f"{fam}_peft.safetensors",
        unet_lora_adapter_metadata=ucfg.to_dict(), text_encoder_lora_adapter_metadata=tcfg.to_dict())
    fused_ref(lambda: load_base(fam), path, f"{fam}_peft")


def kohya_lora(fam, seed):
    g = torch.Generator().manual_seed(seed)
    unet, te = load_base(fam)
    sd = unet.state_dict()
    tsd = te.state_dict()
    out = {}

    def add(name, w, r, alpha):
        if w.dim() == 2:
            down, up = rnd(g, r, w.shape[1]), rnd(g, w.shape[0], r)
        else:
            down, up = rnd(g, r, *w.shape[1:]), rnd(g, w.shape[0], r, 1, 1)
        out[name + ".lora_down.weight"] = down
        out[name + ".lora_up.weight"] = up
        out[name + ".alpha"] = torch.tensor(float(alpha))

    mods = ["down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q",
            "down_blocks.0.attentions.0.transformer_blocks.0.attn2.to_k",
            "down_blocks.0.attentions.0.proj_in",
            "down_blocks.0.resnets.0.conv1",                 # LoCon 3x3
            "up_blocks.1.attentions.0.transformer_blocks.0.ff.net.0.proj",
            "mid_block.attentions.0.transformer_blocks.0.attn1.to_out.0"]
    ldm_names = {  # LDM module paths of the same modules (layers_per_block 1)
        mods[0]: "input_blocks.1.1.transformer_blocks.0.attn1.to_q",
        mods[1]: "input_blocks.1.1.transformer_blocks.0.attn2.to_k",
        mods[2]: "input_blocks.1.1.proj_in",
        mods[3]: "input_blocks.1.0.in_layers.2",
        mods[4]: "output_blocks.2.1.transformer_blocks.0.ff.net.0.proj",
        mods[5]: "middle_block.1.transformer_blocks.0.attn1.to_out.0"}
    for i, m in enumerate(mods):
        # one alpha for all: diffusers 0.42 applies a kohya file's per-module alphas wrongly
        # (to_k/to_out.0 got the first module's alpha), while sd-scripts' rule is alpha/rank per
        # module, as the store does
        add("lora_unet_" + m.replace(".", "_"), sd[m + ".weight"], 4 if i != 3 else 2, 3.0)
    # (diffusers 0.42 with transformers 5 drops kohya self_attn keys of the text encoder as
    # unexpected, so the text-encoder modules here are the MLP's, which it fuses)
    for m in ["encoder.layers.0.mlp.fc2", "encoder.layers.1.mlp.fc1"]:
        add("lora_te_text_model_" + m.replace(".", "_"), tsd[m + ".weight"], 2, 1.0)
    path = os.path.join(OUT, f"{fam}_kohya.safetensors")
    save_file(out, path)
    fused_ref(lambda: load_base(fam), path, f"{fam}_kohya")
    if fam == "sd1":  # the same factors under LDM module paths (diffusers' own SGM mapping
        # assumes SDXL's block layout, so ref_sd1_kohya is the reference of both files)
        ren = {"lora_unet_" + m.replace(".", "_"): "lora_unet_" + ldm_names[m].replace(".", "_")
               for m in mods}
        ldm = {}
        for k, v in out.items():
            mod, suf = k.split(".", 1)
            ldm[ren.get(mod, mod) + "." + suf] = v
        save_file(ldm, os.path.join(OUT, "sd1_kohya_ldm.safetensors"))


def tiny_e2e():
    cfg = json.load(open(os.path.join(ROOT, "models", "arch", "tiny_sd15", "arch.json")))["configs"]["unet"]
    cfg = {k: v for k, v in cfg.items() if not k.startswith("_")}

    def base():
        u = UNet2DConditionModel(**cfg)
        u.load_state_dict({k: v.float() for k, v in
                           load_file(os.path.join(ROOT, "tests", "name_map", "ft_unet.safetensors")).items()})
        return u.float().eval(), CLIPTextModel.from_pretrained(
            os.path.join(CK, "sd1", "diffusers", "text_encoder"), dtype=torch.float32)

    # the LDM layout of ft_unet
    sd = load_file(os.path.join(ROOT, "tests", "name_map", "ft_unet.safetensors"))
    save_file({k: v.contiguous() for k, v in mtc.ldm_unet(sd).items()},
              os.path.join(OUT, "tiny_sd15_unet_ldm.safetensors"))
    torch.manual_seed(7)
    unet, _ = base()
    ucfg = LoraConfig(r=4, lora_alpha=6, init_lora_weights=False,
                      target_modules=["to_q", "to_k", "to_v", "to_out.0", "proj_in", "proj_out",
                                      "conv1", "conv2", "ff.net.2"])
    unet.add_adapter(ucfg)
    with torch.no_grad():  # LoRA deltas of a size that moves the output visibly
        for n, p in unet.named_parameters():
            if "lora_B" in n:
                p.mul_(0.2)
    StableDiffusionPipeline.save_lora_weights(
        OUT, unet_lora_layers=get_peft_model_state_dict(unet), weight_name="tiny_peft.safetensors",
        unet_lora_adapter_metadata=ucfg.to_dict())
    pipe = fused_ref(base, os.path.join(OUT, "tiny_peft.safetensors"), "tiny_peft", save=False)
    ins = os.path.join(ROOT, "models", "tiny", "unet", "inputs")
    x = torch.from_numpy(np.load(os.path.join(ins, "sample.npy")))
    t = torch.from_numpy(np.load(os.path.join(ins, "timestep.npy")))
    e = torch.from_numpy(np.load(os.path.join(ins, "encoder_hidden_states.npy")))
    with torch.no_grad():
        y = pipe.unet(x, t, e).sample.numpy().astype(np.float32)
        y0 = base()[0](x, t, e).sample.numpy()
    print("tiny e2e: max |fused - base| =", float(np.abs(y - y0).max()), "max |y| =", float(np.abs(y).max()))
    np.save(os.path.join(OUT, "tiny_peft_out_sample.npy"), y)


def main():
    os.makedirs(OUT, exist_ok=True)
    for fam, seed in (("sd1", 1), ("sd2", 2)):
        peft_lora(fam, seed)
        kohya_lora(fam, seed + 10)
    tiny_e2e()
    for f in os.listdir(OUT):
        if f.endswith((".safetensors", ".npy")):
            os.chmod(os.path.join(OUT, f), 0o644)


if __name__ == "__main__":
    main()
