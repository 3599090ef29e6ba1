#!/usr/bin/env python3
"""make_bad.py OUT_DIR — LoRA files the store must refuse (stdlib only; run by the tests).
Base: the tiny SD 1.5 UNet (ft_unet: to_q of down_blocks.0 is [32,32], conv1 [32,32,3,3])."""
import json
import os
import struct
import sys

Q = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q"


def write(path, tensors):
    hdr, data = {}, b""
    for name, shape in tensors.items():
        n = 1
        for d in shape:
            n *= d
        b = struct.pack(f"<{n}f", *([0.01] * n))
        hdr[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(hdr).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
write(f"{out}/rank.safetensors", {Q + ".lora_down.weight": [4, 32], Q + ".lora_up.weight": [32, 3]})
write(f"{out}/shape.safetensors", {Q + ".lora_down.weight": [4, 320], Q + ".lora_up.weight": [320, 4]})
write(f"{out}/unknown_module.safetensors", {
    Q + ".lora_down.weight": [4, 32], Q + ".lora_up.weight": [32, 4],
    "lora_unet_down_blocks_9_foo.lora_down.weight": [4, 32], "lora_unet_down_blocks_9_foo.lora_up.weight": [32, 4]})
write(f"{out}/lycoris.safetensors", {Q + ".hada_w1_a": [32, 4], Q + ".hada_w1_b": [4, 32]})
write(f"{out}/sdxl.safetensors", {
    "lora_te2_text_model_encoder_layers_0_self_attn_q_proj.lora_down.weight": [4, 1280],
    "lora_te2_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight": [1280, 4]})
write(f"{out}/sdxl_unet.safetensors", {
    "lora_unet_input_blocks_4_1_transformer_blocks_0_attn2_to_k.lora_down.weight": [4, 2048],
    "lora_unet_input_blocks_4_1_transformer_blocks_0_attn2_to_k.lora_up.weight": [640, 4]})
write(f"{out}/no_up.safetensors", {Q + ".lora_down.weight": [4, 32]})
