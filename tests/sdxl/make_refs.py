#!/usr/bin/env python3
"""make_refs.py — references for tests/sdxl (torch + diffusers + transformers; not run in CI).

The tiny SDXL checkpoint models/ckpt/sdxl/sdxl.safetensors (models/make_test_checkpoints.py,
tiny_sdxl's configs) converted by diffusers' own single-file converters (single_file_utils:
convert_ldm_unet_checkpoint, convert_ldm_clip_checkpoint, convert_open_clip_checkpoint with
SDXL's conditioner.embedders.1.model. prefix) into UNet2DConditionModel / CLIPTextModel /
CLIPTextModelWithProjection built from models/arch/tiny_sdxl/arch.json, run in float32 on fixed
inputs (seed 23). Writes tests/sdxl/inputs/*.npy and tests/sdxl/ref/<model>/<output>.npy:
  unet            sample [1,4,16,16], timestep [1] (981), encoder_hidden_states [1,77,80]
                  (the two encoders' penultimate states, random here), text_embeds [1,40],
                  time_ids [1,6] (128,128,0,0,128,128: original size, crop, target size)
                  -> out_sample
  text_encoder    input_ids [1,77] -> last_hidden_state, pooler_output, penultimate_hidden_state
  text_encoder_2  input_ids [1,77] -> text_embeds, last_hidden_state, penultimate_hidden_state
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file

from diffusers import UNet2DConditionModel
from diffusers.loaders import single_file_utils as sfu
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    a = json.load(open(os.path.join(ROOT, "models/arch/tiny_sdxl/arch.json")))
    cfg = a["configs"]
    ck = {k: (v.float() if v.is_floating_point() else v)
          for k, v in load_file(os.path.join(ROOT, "models/ckpt/sdxl/sdxl.safetensors")).items()}
    unet = UNet2DConditionModel(**cfg["unet"]).eval()
    unet.load_state_dict(sfu.convert_ldm_unet_checkpoint(ck, cfg["unet"]), strict=True)
    te = CLIPTextModel(CLIPTextConfig(**cfg["text_encoder"])).eval()
    sd = sfu.convert_ldm_clip_checkpoint(ck)
    sd.pop("text_model.embeddings.position_ids", None)
    if not hasattr(te, "text_model"):
        sd = {k.removeprefix("text_model."): v for k, v in sd.items()}
    te.load_state_dict(sd, strict=True)
    te2 = CLIPTextModelWithProjection(CLIPTextConfig(**cfg["text_encoder_2"])).eval()
    te2.load_state_dict(sfu.convert_open_clip_checkpoint(te2, ck, prefix="conditioner.embedders.1.model."),
                        strict=True)
    rng = np.random.default_rng(23)
    ins = {"sample": rng.standard_normal((1, 4, 16, 16)).astype(np.float32),
           "timestep": np.array([981.0], dtype=np.float32),
           "encoder_hidden_states": rng.standard_normal((1, 77, 80)).astype(np.float32),
           "text_embeds": rng.standard_normal((1, 40)).astype(np.float32),
           "time_ids": np.array([[128, 128, 0, 0, 128, 128]], dtype=np.float32)}
    ids = np.full((1, 77), 999, dtype=np.int64)  # <bos> 11 tokens <eos>, padded with <eos>
    ids[0, 0] = 998
    ids[0, 1:12] = rng.integers(3, 998, size=11)
    ins["input_ids"] = ids
    os.makedirs(os.path.join(HERE, "inputs"), exist_ok=True)
    for k, v in ins.items():
        np.save(os.path.join(HERE, "inputs", k + ".npy"), v)
    t = {k: torch.from_numpy(v) for k, v in ins.items()}
    with torch.no_grad():
        outs = {"unet": {"out_sample": unet(t["sample"], t["timestep"], t["encoder_hidden_states"],
                                           added_cond_kwargs={"text_embeds": t["text_embeds"],
                                                              "time_ids": t["time_ids"]},
                                           return_dict=False)[0]}}
        o = te(input_ids=t["input_ids"], output_hidden_states=True)
        outs["text_encoder"] = {"last_hidden_state": o.last_hidden_state,
                                "pooler_output": o.pooler_output,
                                "penultimate_hidden_state": o.hidden_states[-2]}
        o = te2(input_ids=t["input_ids"], output_hidden_states=True)
        outs["text_encoder_2"] = {"text_embeds": o.text_embeds,
                                  "last_hidden_state": o.last_hidden_state,
                                  "penultimate_hidden_state": o.hidden_states[-2]}
    for m, d in outs.items():
        os.makedirs(os.path.join(HERE, "ref", m), exist_ok=True)
        for k, v in d.items():
            np.save(os.path.join(HERE, "ref", m, k + ".npy"), v.numpy().astype(np.float32))
            print(m, k, tuple(v.shape), f"max|x| {v.abs().max().item():.4g}")


if __name__ == "__main__":
    sys.exit(main())
