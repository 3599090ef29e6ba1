#!/usr/bin/env python3
"""make_flow_lora_refs.py — tiny diffusers/PEFT LoRAs for the tiny Flux dev and SD 3 transformers of
tests/pipeline/{flux,sd3} and diffusers' images with them loaded (the fixture of onnx2cl-sd --lora on
SD 3 / Flux):

  <dir>/lora_transformer.safetensors  a PEFT LoRA in diffusers' naming (what save_lora_weights writes:
      transformer.<module>.lora_A.weight / .lora_B.weight), rank 4, lora_alpha 8 (factor 2, in the
      file's lora_adapter_metadata), on the attention projections (to_q, to_k, to_v, to_out.0,
      add_*_proj, to_add_out where present) and the feed-forward layers of every block (Flux: the
      single blocks' to_q/k/v, proj_mlp, proj_out too); random A and B (seed 7), B scaled so the
      change is visible but small
  <dir>/lora_<case>_image.npy          the pipeline's image with the LoRA loaded (load_lora_weights +
      set_adapters weight W), 32x32, seed 42, output_type "np"
  <dir>/lora_cases.txt                 case, steps, cfg, guidance (Flux dev), LoRA weight, prompt

Needs torch + diffusers 0.42 + peft (not run in CI; the outputs are committed).
"""
import json
import os

import numpy as np
import torch
from safetensors.torch import save_file
from diffusers import FluxPipeline, StableDiffusion3Pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
P = "a photo of an astronaut riding a horse on mars"
TARGETS = ("to_q", "to_k", "to_v", "to_out.0", "add_q_proj", "add_k_proj", "add_v_proj", "to_add_out",
           "ff.net.0.proj", "ff.net.2", "ff_context.net.0.proj", "ff_context.net.2", "proj_mlp", "proj_out")


def make_lora(transformer, rank=4, alpha=8, seed=7):
    g = torch.Generator().manual_seed(seed)
    sd = {}
    for name, mod in transformer.named_modules():
        if not isinstance(mod, torch.nn.Linear) or not any(name.endswith(t) for t in TARGETS):
            continue
        if not (name.startswith("transformer_blocks.") or name.startswith("single_transformer_blocks.")):
            continue
        a = torch.randn(rank, mod.in_features, generator=g) / mod.in_features ** 0.5
        b = torch.randn(mod.out_features, rank, generator=g) * 0.05
        sd[f"transformer.{name}.lora_A.weight"] = a.contiguous()
        sd[f"transformer.{name}.lora_B.weight"] = b.contiguous()
    mods = sorted({k[len("transformer."):-len(".lora_A.weight")] for k in sd if k.endswith(".lora_A.weight")})
    meta = {"lora_adapter_metadata": json.dumps({"transformer.r": rank, "transformer.lora_alpha": alpha,
                                                 "transformer.target_modules": mods}), "format": "pt"}
    return sd, meta


def main():
    for fam, folder, cases in (
            ("flux", "tests/pipeline/flux/tiny_flux_dev", [("a", 4, 1.0, 3.5, 1.0), ("b", 4, 1.0, 3.5, 0.6)]),
            ("sd3", "tests/pipeline/sd3/tiny_sd3", [("a", 4, 7.0, 0.0, 1.0), ("b", 3, 1.0, 0.0, 0.5)])):
        d = os.path.join(ROOT, os.path.dirname(folder))
        cls = FluxPipeline if fam == "flux" else StableDiffusion3Pipeline
        pipe = cls.from_pretrained(os.path.join(ROOT, folder))
        pipe.set_progress_bar_config(disable=True)
        sd, meta = make_lora(pipe.transformer)
        path = os.path.join(d, "lora_transformer.safetensors")
        save_file(sd, path, metadata=meta)
        print(f"{fam}: {len(sd) // 2} modules -> {os.path.relpath(path, ROOT)}")
        lines = []
        for case, steps, cfg, guidance, w in cases:
            pipe = cls.from_pretrained(os.path.join(ROOT, folder))
            pipe.set_progress_bar_config(disable=True)
            pipe.load_lora_weights(path, adapter_name="t")
            pipe.set_adapters(["t"], adapter_weights=[w])
            kw = dict(guidance_scale=guidance, true_cfg_scale=cfg, max_sequence_length=64) if fam == "flux" else \
                dict(guidance_scale=cfg)
            img = pipe(P, num_inference_steps=steps, height=32, width=32, generator=torch.Generator().manual_seed(42),
                       output_type="np", **kw).images
            img = np.ascontiguousarray(img.transpose(0, 3, 1, 2).astype(np.float32))
            np.save(os.path.join(d, f"lora_{case}_image.npy"), img)
            lines.append("\t".join([case, str(steps), str(cfg), str(guidance), str(w), P]))
            print(f"  lora_{case}: steps {steps} cfg {cfg} guidance {guidance} weight {w}: mean {img.mean():.4f}")
        with open(os.path.join(d, "lora_cases.txt"), "w") as f:
            f.write("# case\tsteps\tcfg\tguidance\tlora weight\tprompt (models/make_flow_lora_refs.py)\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
