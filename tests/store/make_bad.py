#!/usr/bin/env python3
"""make_bad.py SRC_CKPT_DIR OUT_DIR — malformed and non-fitting checkpoints for the store's
bad-input tests (tests/store/CMakeLists.txt), written at test time from the committed tiny
checkpoints (models/ckpt/, models/make_test_checkpoints.py). Python standard library only."""
import json
import os
import struct
import sys


def read(path):
    """{name: (dtype, shape, bytes)} in file order, and the metadata."""
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    meta = h.pop("__metadata__", None)
    data = b[8 + n:]
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in h.items()}, meta


def write(path, tensors, offsets=None, tail=b"", cut=None):
    """tensors: {name: (dtype, shape, bytes)}; offsets: {name: [b, e]} to override (a header
    that lies); tail: bytes appended to the data; cut: drop the file's last -cut bytes."""
    h, data = {}, b""
    for k, (dt, shape, raw) in tensors.items():
        h[k] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    for k, o in (offsets or {}).items():
        h[k]["data_offsets"] = o
    hj = json.dumps(h).encode()
    hj += b" " * (-len(hj) % 8)
    out = struct.pack("<Q", len(hj)) + hj + data + tail
    with open(path, "wb") as f:
        f.write(out[:cut] if cut is not None else out)


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    f32 = lambda *v: struct.pack(f"<{len(v)}f", *v)
    small = {"model.diffusion_model.out.2.bias": ("F32", [4], f32(1, 2, 3, 4)),
             "model.diffusion_model.out.0.bias": ("F32", [2], f32(5, 6))}
    write(p("truncated.safetensors"), small, cut=-4)  # the last 4 data bytes lost
    write(p("lying_offsets.safetensors"), small,
          offsets={"model.diffusion_model.out.2.bias": [0, 8], "model.diffusion_model.out.0.bias": [8, 16]},
          tail=b"\0" * 8)
    write(p("overlap.safetensors"), small, offsets={"model.diffusion_model.out.0.bias": [8, 16]})
    write(p("i64.safetensors"), {"model.diffusion_model.input_blocks.0.0.bias":
                                 ("I64", [2], struct.pack("<2q", 1, 2))})
    with open(p("model.ckpt"), "wb") as f:
        f.write(b"\x80\x02}q\x00.")
    with open(p("pickle.safetensors"), "wb") as f:  # a pickle under a safetensors name
        f.write(b"\x80\x04\x95" + b"\0" * 64)
    with open(p("zip.safetensors"), "wb") as f:     # torch.save's zip container
        f.write(b"PK\x03\x04" + b"\0" * 64)
    write(p("unknown_arch.safetensors"), {"foo.weight": ("F32", [2], f32(1, 2))})
    # a diffusers folder whose unet/ lost its weights (config.json only)
    import shutil
    shutil.rmtree(p("no_unet"), ignore_errors=True)
    shutil.copytree(os.path.join(src, "sd1", "diffusers"), p("no_unet"))
    for f in os.listdir(p("no_unet/unet")):
        if f.endswith(".safetensors"):
            os.remove(os.path.join(p("no_unet/unet"), f))
    # LoRA files onnx2cl-sd refuses: LyCORIS LoHa factors, DoRA magnitudes (onnx2cl-ckpt info names them)
    m = "lora_unet_down_blocks_0_attentions_0_proj_in"
    write(p("loha.safetensors"), {m + ".hada_w1_a": ("F32", [2, 1], f32(1, 2)), m + ".hada_w1_b": ("F32", [1, 2], f32(1, 2)),
                                  m + ".alpha": ("F32", [], f32(1))})
    write(p("dora.safetensors"), {m + ".lora_down.weight": ("F32", [1, 2], f32(1, 2)),
                                  m + ".lora_up.weight": ("F32", [2, 1], f32(1, 2)),
                                  m + ".dora_scale": ("F32", [1, 2], f32(1, 2))})
    # a real (tiny) UNet: one key missing; one wrong shape; index with a path outside
    sd, _ = read(os.path.join(src, "sd1", "sd1_f16.safetensors"))
    unet = {k: v for k, v in sd.items() if k.startswith("model.diffusion_model.")}
    write(p("unet_missing.safetensors"),
          {k: v for k, v in unet.items()
           if k != "model.diffusion_model.input_blocks.1.0.out_layers.3.weight"})
    wrong = dict(unet)
    k = "model.diffusion_model.out.2.weight"  # conv_out [4, 8, 3, 3] -> [4, 16, 3, 3]
    wrong[k] = ("F16", [4, 16, 3, 3], b"\0" * (4 * 16 * 9 * 2))
    write(p("unet_shape.safetensors"), wrong)
    # SDXL (models/ckpt/sdxl): without its OpenCLIP-G; a text_projection that is not 2-D; a
    # UNet whose cross-attention (80 = 32 + 48) does not read what is there (CLIP-L dropped: 48)
    sd, _ = read(os.path.join(src, "sdxl", "sdxl.safetensors"))
    G = "conditioner.embedders.1.model."
    write(p("sdxl_no_te2.safetensors"), {k: v for k, v in sd.items() if not k.startswith(G)})
    bad = dict(sd)
    dt, shape, raw = bad[G + "text_projection"]
    bad[G + "text_projection"] = (dt, [shape[0] * shape[1]], raw)
    write(p("sdxl_proj_1d.safetensors"), bad)
    write(p("sdxl_cross_dim.safetensors"),
          {k: v for k, v in sd.items() if not k.startswith("conditioner.embedders.0.")})
    # a kohya SDXL LoRA (not bad: store.info_lora_sdxl): UNet modules by LDM path (layers_per_block
    # 2, a second transformer block) and diffusers path, lora_te1_ (CLIP-L), lora_te2_ (OpenCLIP-G:
    # a q/k/v row slice of in_proj, an MLP)
    lo = {}
    for name, out_, in_ in (("lora_unet_input_blocks_4_1_transformer_blocks_1_attn2_to_k", 32, 80),
                            ("lora_unet_up_blocks_0_attentions_0_proj_in", 32, 32),
                            ("lora_te1_text_model_encoder_layers_0_self_attn_q_proj", 32, 32),
                            ("lora_te2_text_model_encoder_layers_2_self_attn_k_proj", 48, 48),
                            ("lora_te2_text_model_encoder_layers_1_mlp_fc1", 96, 48)):
        lo[name + ".lora_down.weight"] = ("F32", [2, in_], f32(*[0.01] * (2 * in_)))
        lo[name + ".lora_up.weight"] = ("F32", [out_, 2], f32(*[0.01] * (2 * out_)))
        lo[name + ".alpha"] = ("F32", [], f32(1))
    write(p("sdxl_kohya.safetensors"), lo)
    os.makedirs(p("escape/unet"), exist_ok=True)
    with open(p("escape/unet/diffusion_pytorch_model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": {"conv_in.weight": "../../unknown_arch.safetensors"}}, f)


if __name__ == "__main__":
    main()
