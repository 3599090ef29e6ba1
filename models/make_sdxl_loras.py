#!/usr/bin/env python3
"""make_sdxl_loras.py — SDXL LoRAs for the tiny SDXL checkpoint (models/ckpt/sdxl, architecture
models/arch/tiny_sdxl), the fused weights diffusers makes of them, and the image references of
tests/pipeline/run_oneshot_sdxl.sh's LoRA cases (issue 23 item 5, the SDXL half).

What it does
  Builds the tiny SDXL UNet and both text encoders exactly as models/make_oneshot_sdxl_refs.py
  (its load_components: diffusers' single-file converters) and writes to tests/lora/:
    sdxl_kohya.safetensors  kohya naming as sd-scripts writes an SDXL LoRA: UNet modules under the
                            sgm/LDM UNet's paths (lora_unet_input_blocks_4_1_transformer_blocks_
                            0_attn1_to_q, middle_block_1_..., output_blocks_...), self- and cross-
                            attention, ff, proj_out (linear), LoCon on 3x3 convs (in_layers_2 =
                            resnets conv1, out_layers_3 = conv2, input_blocks_3_0_op = the
                            downsampler, output_blocks_2_2_conv = the upsampler: down [r,C,3,3],
                            up [C,r,1,1]), the 1x1 skip_connection, emb_layers_1, label_emb_0_0
                            (add_embedding), time_embed_2,
                            and both text encoders (lora_te1_text_model_..., lora_te2_text_model_
                            ..., attention q/k/v/out and MLP); every module with an .alpha (one
                            alpha per file: diffusers 0.42 applies per-module kohya alphas wrongly,
                            see make_test_loras.py)
    sdxl_peft.safetensors   diffusers/PEFT: unet.add_adapter, text_encoder(_2) adapters
                            (init_lora_weights=False, B scaled so the image moves clearly) saved by
                            StableDiffusionXLPipeline.save_lora_weights with the adapter metadata
                            (lora_alpha per component)
    ref_sdxl_{kohya,peft}.safetensors  "<component>/<canonical key>" -> the fused float32 weight
                            after diffusers' load_lora_weights + fuse_lora(lora_scale=0.8), for
                            every weight it changes (asserted: exactly the LoRA's modules, each
                            by scale * alpha/rank * up @ down within 1e-6); canonical keys are the
                            store's (no text_model. level)
  and the images of StableDiffusionXLPipeline (euler, 4 steps, cfg 5, seed 42, 32x32, the SDXL
  prompts) with each LoRA fused at 0.8 (fuse_lora's lora_scale applies to the UNet and both text
  encoders, as A1111's one weight does) to tests/pipeline/oneshot_sdxl/euler_4_lora_{kohya,peft}.npy.
  It asserts each LoRA moves the image (vs euler_4.npy) by more than 0.05. euler_4_lora_peft_te05.npy:
  sdxl_peft with the text encoders at 0.5 and the UNet at 0.8 (fuse_lora per component), the
  case of the prompt tag <lora:sdxl_peft:0.5:0.8>. The cases go into oneshot_sdxl/cases.txt.

Assumes torch, diffusers 0.42, transformers 5, peft, safetensors (dev machine only; the tests
read the committed files).
Usage: python3 models/make_sdxl_loras.py
"""
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_oneshot_sdxl_refs as refs  # noqa: E402

OUT = os.path.join(ROOT, "tests", "lora")
IMG = os.path.join(ROOT, "tests", "pipeline", "oneshot_sdxl")
SCALE = 0.8
COMPONENTS = ("unet", "text_encoder", "text_encoder_2")
FLAGS = "--weights-dtype f32"  # the merged weights as diffusers' float32 fuse_lora has them


def canonical(comp, key):
    return comp + "/" + (key[len("text_model."):] if comp != "unet" and key.startswith("text_model.") else key)


def state(unet, te, te2):
    out = {}
    for comp, m in zip(COMPONENTS, (unet, te, te2)):
        for k, v in m.state_dict().items():
            out[canonical(comp, k)] = v.detach().clone().float()
    return out


def pipeline(unet, vae, te, te2, arch):
    from diffusers import EulerDiscreteScheduler, StableDiffusionXLPipeline
    from transformers import CLIPTokenizer
    tok = CLIPTokenizer.from_pretrained(os.path.join(refs.ARCH, "tokenizer"))
    tok2 = CLIPTokenizer.from_pretrained(os.path.join(refs.ARCH, "tokenizer_2"))
    sched = EulerDiscreteScheduler.from_config({k: v for k, v in arch["scheduler"].items() if k != "kind"})
    p = StableDiffusionXLPipeline(vae=vae, text_encoder=te, text_encoder_2=te2, tokenizer=tok, tokenizer_2=tok2,
                                  unet=unet, scheduler=sched, force_zeros_for_empty_prompt=True,
                                  add_watermarker=False)
    p.set_progress_bar_config(disable=True)
    return p


def image(p):
    with torch.no_grad():
        img = p(refs.PROMPT, negative_prompt=refs.NEGATIVE, num_inference_steps=4, guidance_scale=5.0,
                generator=[torch.Generator().manual_seed(refs.SEED)], output_type="np", height=32,
                width=32).images
    return np.ascontiguousarray(img.transpose(0, 3, 1, 2)).astype(np.float32)


def fused(lora_path, expect, name, by_hand=()):
    """diffusers' fused weights and image for a LoRA; expect: canonical key -> expected delta;
    by_hand: keys diffusers is known to drop (merged here with the expected delta)."""
    arch, unet, vae, te, te2 = refs.load_components()
    before = state(unet, te, te2)
    p = pipeline(unet, vae, te, te2, arch)
    p.load_lora_weights(lora_path, adapter_name="a")
    p.fuse_lora(lora_scale=SCALE, adapter_names=["a"], components=list(COMPONENTS))
    p.unload_lora_weights()
    after = state(p.unet, p.text_encoder, p.text_encoder_2)
    mods = {"unet": p.unet, "text_encoder": p.text_encoder, "text_encoder_2": p.text_encoder_2}
    for k in by_hand:
        assert torch.equal(after[k], before[k]), f"{name}: diffusers merged {k} now: drop it from by_hand"
        comp, key = k.split("/", 1)
        sd = mods[comp].state_dict()
        key = key if key in sd else "text_model." + key
        with torch.no_grad():
            sd[key].add_(expect[k])
        after[k] = sd[key].detach().clone().float()
    ref = {}
    for k, v in after.items():
        assert k in before, k
        if not torch.equal(v, before[k]):
            ref[k] = v.contiguous()
    missing = sorted(set(expect) - set(ref))
    extra = sorted(set(ref) - set(expect))
    assert not missing and not extra, f"{name}: diffusers did not change {missing}, changed {extra} too"
    for k, d in expect.items():
        err = float((ref[k] - before[k] - d).abs().max())
        assert err <= 1e-6 * max(1.0, float(ref[k].abs().max())), f"{name}: {k}: delta off by {err}"
    save_file(ref, os.path.join(OUT, f"ref_{name}.safetensors"))
    img = image(p)
    base = np.load(os.path.join(IMG, "euler_4.npy"))
    moved = float(np.abs(img - base).max())
    assert moved > 0.05, f"{name}: the LoRA moves the image by only {moved}"
    np.save(os.path.join(IMG, f"euler_4_lora_{name.split('_')[1]}.npy"), img)
    print(f"{name}: {len(ref)} weights changed as expected; image moved by {moved:.3f} "
          f"(mean {img.mean():.4f} std {img.std():.4f})")


def delta(up, down, alpha, r):
    if down.dim() == 4:
        return SCALE * alpha / r * (up.flatten(1) @ down.flatten(1)).reshape(up.shape[0], *down.shape[1:])
    return SCALE * alpha / r * (up @ down)


def kohya(seed):
    g = torch.Generator().manual_seed(seed)
    _, unet, _, te, te2 = refs.load_components()
    sds = {"unet": unet.state_dict(), "text_encoder": te.state_dict(),
           "text_encoder_2": {k.removeprefix("text_model."): v for k, v in te2.state_dict().items()}}
    alpha = 3.0
    out, expect = {}, {}
    # (kohya module name, component, diffusers/canonical module path, rank)
    mods = [
        ("lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q", "unet",
         "down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q", 4),
        ("lora_unet_input_blocks_5_1_transformer_blocks_1_attn2_to_k", "unet",
         "down_blocks.1.attentions.1.transformer_blocks.1.attn2.to_k", 4),
        ("lora_unet_input_blocks_7_1_transformer_blocks_0_attn2_to_v", "unet",
         "down_blocks.2.attentions.0.transformer_blocks.0.attn2.to_v", 4),
        ("lora_unet_middle_block_1_transformer_blocks_0_ff_net_0_proj", "unet",
         "mid_block.attentions.0.transformer_blocks.0.ff.net.0.proj", 4),
        ("lora_unet_middle_block_1_transformer_blocks_1_attn1_to_out_0", "unet",
         "mid_block.attentions.0.transformer_blocks.1.attn1.to_out.0", 4),
        ("lora_unet_output_blocks_1_1_proj_out", "unet", "up_blocks.0.attentions.1.proj_out", 4),
        ("lora_unet_output_blocks_4_1_transformer_blocks_1_ff_net_2", "unet",
         "up_blocks.1.attentions.1.transformer_blocks.1.ff.net.2", 4),
        ("lora_unet_input_blocks_1_0_in_layers_2", "unet", "down_blocks.0.resnets.0.conv1", 4),  # LoCon 3x3
        ("lora_unet_output_blocks_4_0_out_layers_3", "unet", "up_blocks.1.resnets.1.conv2", 4),  # LoCon 3x3
        ("lora_unet_input_blocks_3_0_op", "unet", "down_blocks.0.downsamplers.0.conv", 2),        # LoCon 3x3
        ("lora_unet_output_blocks_2_2_conv", "unet", "up_blocks.0.upsamplers.0.conv", 2),         # LoCon 3x3
        ("lora_unet_output_blocks_0_0_skip_connection", "unet", "up_blocks.0.resnets.0.conv_shortcut", 2),
        ("lora_unet_input_blocks_1_0_emb_layers_1", "unet", "down_blocks.0.resnets.0.time_emb_proj", 2),
        ("lora_unet_label_emb_0_0", "unet", "add_embedding.linear_1", 2),
        ("lora_unet_time_embed_2", "unet", "time_embedding.linear_2", 2),
        ("lora_te1_text_model_encoder_layers_0_self_attn_q_proj", "text_encoder",
         "encoder.layers.0.self_attn.q_proj", 2),
        ("lora_te1_text_model_encoder_layers_1_self_attn_out_proj", "text_encoder",
         "encoder.layers.1.self_attn.out_proj", 2),
        ("lora_te1_text_model_encoder_layers_2_mlp_fc1", "text_encoder", "encoder.layers.2.mlp.fc1", 2),
        ("lora_te2_text_model_encoder_layers_0_self_attn_k_proj", "text_encoder_2",
         "encoder.layers.0.self_attn.k_proj", 2),
        ("lora_te2_text_model_encoder_layers_1_self_attn_v_proj", "text_encoder_2",
         "encoder.layers.1.self_attn.v_proj", 2),
        ("lora_te2_text_model_encoder_layers_2_mlp_fc2", "text_encoder_2", "encoder.layers.2.mlp.fc2", 2),
    ]
    for name, comp, path, r in mods:
        w = sds[comp][path + ".weight"]
        if w.dim() == 2:
            down, up = torch.randn(r, w.shape[1], generator=g), torch.randn(w.shape[0], r, generator=g)
        else:
            down, up = torch.randn(r, *w.shape[1:], generator=g), torch.randn(w.shape[0], r, 1, 1, generator=g)
        down, up = (down * 0.3).contiguous(), (up * 0.3).contiguous()
        out[name + ".lora_down.weight"] = down
        out[name + ".lora_up.weight"] = up
        out[name + ".alpha"] = torch.tensor(alpha)
        expect[f"{comp}/{path}.weight"] = delta(up, down, alpha, r)
    path = os.path.join(OUT, "sdxl_kohya.safetensors")
    save_file(out, path, metadata={"ss_network_module": "networks.lora", "ss_base_model_version": "sdxl_base_v1-0"})
    # diffusers 0.42 with transformers 5 drops the kohya self_attn keys of text_encoder_2 (UNEXPECTED
    # in CLIPTextModelWithProjection's load report; text_encoder's it merges): merged by hand
    fused(path, expect, "sdxl_kohya", by_hand=[k for k in expect if k.startswith("text_encoder_2/") and "self_attn" in k])


def peft(seed):
    from diffusers import StableDiffusionXLPipeline
    from peft import LoraConfig, inject_adapter_in_model
    from peft.utils import get_peft_model_state_dict
    torch.manual_seed(seed)
    _, unet, _, te, te2 = refs.load_components()
    # a few blocks only (the fused references hold whole weights): self/cross attention, ff, proj_in of
    # one down, the mid and one up transformer, and two resnet 3x3 convs (PEFT's regex: full match)
    ucfg = LoraConfig(r=4, lora_alpha=8, init_lora_weights=False, target_modules=(
        r"(down_blocks\.1\.attentions\.0|mid_block\.attentions\.0|up_blocks\.0\.attentions\.2)\."
        r"(proj_in|transformer_blocks\.\d\.(attn1\.to_q|attn1\.to_v|attn2\.to_k|attn2\.to_out\.0|ff\.net\.2))"
        r"|down_blocks\.0\.resnets\.0\.conv1|up_blocks\.1\.resnets\.2\.conv1"))
    tcfg = LoraConfig(r=2, lora_alpha=3, init_lora_weights=False, target_modules=["q_proj", "v_proj", "fc1"])
    t2cfg = LoraConfig(r=4, lora_alpha=2, init_lora_weights=False,
                       target_modules=["k_proj", "out_proj", "fc2"])
    unet.add_adapter(ucfg)
    te = inject_adapter_in_model(tcfg, te)
    te2 = inject_adapter_in_model(t2cfg, te2)
    with torch.no_grad():  # deltas of a size that moves the image clearly without wrecking it
        for m in (unet, te, te2):
            for n, p in m.named_parameters():
                if "lora_B" in n:
                    p.mul_(0.7)
    layers = [get_peft_model_state_dict(m) for m in (unet, te, te2)]
    expect = {}
    for comp, sd, cfg in zip(COMPONENTS, layers, (ucfg, tcfg, t2cfg)):
        for k, down in sd.items():
            if not k.endswith(".lora_A.weight"):
                continue
            up = sd[k.replace(".lora_A.", ".lora_B.")]
            mod = k[:-len(".lora_A.weight")]
            expect[canonical(comp, mod + ".weight")] = delta(up.float(), down.float(), cfg.lora_alpha, cfg.r)
    StableDiffusionXLPipeline.save_lora_weights(
        OUT, unet_lora_layers=layers[0], text_encoder_lora_layers=layers[1], text_encoder_2_lora_layers=layers[2],
        weight_name="sdxl_peft.safetensors", unet_lora_adapter_metadata=ucfg.to_dict(),
        text_encoder_lora_adapter_metadata=tcfg.to_dict(), text_encoder_2_lora_adapter_metadata=t2cfg.to_dict())
    fused(os.path.join(OUT, "sdxl_peft.safetensors"), expect, "sdxl_peft")


def split_scales(te_scale=0.5, unet_scale=0.8):
    """A1111's <lora:NAME:TE:UNET>: the text encoders (both) at te_scale, the UNet at unet_scale
    (sdxl_peft; fuse_lora per component) -> euler_4_lora_peft_te05.npy."""
    arch, unet, vae, te, te2 = refs.load_components()
    p = pipeline(unet, vae, te, te2, arch)
    p.load_lora_weights(os.path.join(OUT, "sdxl_peft.safetensors"), adapter_name="a")
    p.fuse_lora(lora_scale=unet_scale, adapter_names=["a"], components=["unet"])
    p.fuse_lora(lora_scale=te_scale, adapter_names=["a"], components=["text_encoder", "text_encoder_2"])
    p.unload_lora_weights()
    img = image(p)
    full = np.load(os.path.join(IMG, "euler_4_lora_peft.npy"))
    moved = float(np.abs(img - full).max())
    assert moved > 0.01, f"TE scale {te_scale} moves the image by only {moved}"
    np.save(os.path.join(IMG, "euler_4_lora_peft_te05.npy"), img)
    print(f"euler_4_lora_peft_te05: TE {te_scale} / UNet {unet_scale} differs from {SCALE} on all by {moved:.3f}")


def cases():
    """The LoRA cases in oneshot_sdxl/cases.txt (replacing earlier ones: make_oneshot_sdxl_refs.py
    rewrites the file without them, so run this after it)."""
    path = os.path.join(IMG, "cases.txt")
    lines = [ln for ln in open(path).read().splitlines() if not ln.startswith("euler_4_lora_")]
    for n in ("kohya", "peft"):
        lines.append(f"euler_4_lora_{n}\t--scheduler euler --steps 4 --cfg 5.0 --seed {refs.SEED} {FLAGS} "
                     f"--lora $ROOT/tests/lora/sdxl_{n}.safetensors:{SCALE}")
    # the prompt tag (a case token +TEXT: appended to the prompt) with text-encoder and UNet weights
    lines.append(f"euler_4_lora_peft_te05\t--scheduler euler --steps 4 --cfg 5.0 --seed {refs.SEED} {FLAGS} "
                 f"--lora-dir $ROOT/tests/lora +<lora:sdxl_peft:0.5:0.8>")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    kohya(21)
    peft(22)
    split_scales()
    cases()
    for d, names in ((OUT, ("sdxl_kohya", "sdxl_peft", "ref_sdxl_kohya", "ref_sdxl_peft")),):
        for n in names:
            os.chmod(os.path.join(d, n + ".safetensors"), 0o644)


if __name__ == "__main__":
    main()
