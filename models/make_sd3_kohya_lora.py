#!/usr/bin/env python3
"""make_sd3_kohya_lora.py — the kohya sd-scripts / ComfyUI naming of tests/pipeline/sd3/lora_transformer.safetensors
(the diffusers/PEFT SD 3 LoRA of models/make_flow_lora_refs.py), for onnx2cl-sd's kohya SD 3 LoRA case k:

  tests/pipeline/sd3/lora_kohya.safetensors  lora_unet_<SAI MMDiT module path with '_'>.lora_down.weight /
      .lora_up.weight / .alpha, as sd-scripts' SD 3 LoRAs and ComfyUI's loader name them:
      joint_blocks_N_x_block_attn_qkv (to_q|to_k|to_v fused), ..._attn_proj (to_out.0),
      ..._context_block_attn_qkv (add_q|k|v_proj), ..._context_block_attn_proj (to_add_out),
      ..._x_block_mlp_fc1 / fc2 (ff.net.0.proj / ff.net.2), ..._context_block_mlp_fc1 / fc2 (ff_context)
  tests/pipeline/sd3/lora_k_image.npy        = lora_a_image.npy (diffusers' image with the PEFT LoRA)

The file is an exact re-encoding: a fused q|k|v module gets down = [A_q; A_k; A_v] (rank 3r) and the
block-diagonal up = diag(B_q, B_k, B_v), so up @ down = [B_q A_q; B_k A_k; B_v A_v] row for row, and
alpha = 3r * (lora_alpha / r) keeps kohya's scale alpha / rank equal to PEFT's lora_alpha / r. Every
module's delta is checked against PEFT's before writing. diffusers 0.42 has no converter for kohya SD 3
LoRAs, so the reference is the PEFT LoRA's diffusers image (case a's parameters).

Needs numpy + safetensors (not run in CI; the outputs are committed).
"""
import json
import os
import shutil

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
D = os.path.join(ROOT, "tests", "pipeline", "sd3")
FUSED = {"attn.to_": ("x_block.attn.qkv", "qkv"), "attn.add_": ("context_block.attn.qkv", "qkv")}
SINGLE = {"attn.to_out.0": "x_block.attn.proj", "attn.to_add_out": "context_block.attn.proj",
          "ff.net.0.proj": "x_block.mlp.fc1", "ff.net.2": "x_block.mlp.fc2",
          "ff_context.net.0.proj": "context_block.mlp.fc1", "ff_context.net.2": "context_block.mlp.fc2"}


def main():
    f = safe_open(os.path.join(D, "lora_transformer.safetensors"), "np")
    meta = json.loads(f.metadata()["lora_adapter_metadata"])
    r, scale = meta["transformer.r"], meta["transformer.lora_alpha"] / meta["transformer.r"]
    peft = {k: f.get_tensor(k).astype(np.float32) for k in f.keys()}
    mods = sorted({k[len("transformer."):k.index(".lora_")] for k in peft})
    out, done = {}, set()
    for m in mods:
        blk, sub = m.split(".", 2)[1], m.split(".", 2)[2]  # transformer_blocks.N.<sub>
        A = lambda s: peft[f"transformer.transformer_blocks.{blk}.{s}.lora_A.weight"]
        B = lambda s: peft[f"transformer.transformer_blocks.{blk}.{s}.lora_B.weight"]
        name = None
        if sub in SINGLE:
            name, down, up, rank = SINGLE[sub], A(sub), B(sub), r
        else:
            for pre, (sai, _) in FUSED.items():
                if sub.startswith(pre):
                    if (blk, sai) in done:
                        break
                    done.add((blk, sai))
                    subs = [f"attn.to_{c}" for c in "qkv"] if pre == "attn.to_" else [f"attn.add_{c}_proj" for c in "qkv"]
                    down = np.concatenate([A(s) for s in subs], 0)
                    up = np.zeros((sum(B(s).shape[0] for s in subs), 3 * r), np.float32)
                    row = 0
                    for i, s in enumerate(subs):
                        up[row:row + B(s).shape[0], i * r:(i + 1) * r] = B(s)
                        row += B(s).shape[0]
                    name, rank = sai, 3 * r
                    # the re-encoding is exact: each part's rows of up @ down == PEFT's B @ A
                    row = 0
                    for s in subs:
                        n = B(s).shape[0]
                        assert np.allclose(up[row:row + n] @ down, B(s) @ A(s), atol=0, rtol=1e-6), (blk, s)
                        row += n
                    break
        if name is None:
            continue
        k = f"lora_unet_joint_blocks_{blk}_{name.replace('.', '_')}"
        out[f"{k}.lora_down.weight"] = down.astype(np.float32)
        out[f"{k}.lora_up.weight"] = up.astype(np.float32)
        out[f"{k}.alpha"] = np.array(scale * rank, np.float32)
    save_file(out, os.path.join(D, "lora_kohya.safetensors"), metadata={"ss_network_module": "networks.lora_sd3"})
    shutil.copy(os.path.join(D, "lora_a_image.npy"), os.path.join(D, "lora_k_image.npy"))
    print(f"{len(out) // 3} kohya modules from {len(mods)} PEFT modules -> {D}/lora_kohya.safetensors")


if __name__ == "__main__":
    main()
