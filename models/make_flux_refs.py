#!/usr/bin/env python3
"""make_flux_refs.py — writes tests/pipeline/flux/: two tiny random-weight Flux diffusers folders
(schnell and dev), ONNX exports of their modules and diffusers' FluxPipeline references (the
fixture of a C Flux pipeline).

What it does
  1. Builds the models from models/export_family.py's tiny configs with dims made consistent for
     a real pipeline (export_family.make: deterministic re-drawn weights, one seed each):
       text_encoder    CLIPTextModel, CLIP-L tiny (export_sd.CLIP_TINY: hidden 32, 2 layers,
                       quick_gelu, vocab 1000); FluxPipeline takes its pooler_output only
       text_encoder_2  T5EncoderModel tiny (d_model 32, d_kv 8, d_ff 64, 2 layers, 4 heads,
                       vocab 4100 = 4000 pieces + 100 extra ids)
       transformer     FluxTransformer2DModel (FLUX_TINY with in_channels 64 = 16 latent channels
                       x 2x2 packing, joint_attention_dim 32 = T5 d_model, pooled_projection_dim
                       32 = CLIP-L hidden; 1 double + 1 single block, 2 heads x 16, rope axes
                       [4, 6, 6]); schnell: guidance_embeds False, dev: guidance_embeds True
       vae             AutoencoderKL, 16 latent channels, four levels of 16 channels (the VAE of
                       tests/pipeline/sd3, same seed, same weights) with Flux's scaling_factor
                       0.3611 and shift_factor 0.1159; vae_scale_factor 8: 32x32 pixels = 4x4
                       latents of 16 channels = 2x2 packed tokens = 4 tokens of 64
       scheduler       FlowMatchEulerDiscreteScheduler with FLUX.1-schnell's / FLUX.1-dev's config
     and the tokenizers: tokenizer = copy of models/arch/tiny_sdxl/tokenizer (CLIP BPE, vocab
     1000), tokenizer_2 = T5TokenizerFast from tests/t5_tokenizer/spiece.model (100 extra ids),
     saved as spiece.model + tokenizer_config.json (as make_sd3_refs.py's tokenizer_3).
     FluxPipeline.save_pretrained -> tiny_flux_schnell/, tiny_flux_dev/ (safetensors, float32):
     the same text encoders, VAE and tokenizers, their own transformer and scheduler.
  2. Runs the pipelines (CPU, float32, 32x32, torch.Generator().manual_seed(42), output_type "np",
     max_sequence_length 64) for the cases of CASES -> <case>_image.npy [1,3,32,32] NCHW float32,
     case c's intermediates (c_*.npy, see the README written next to them), cases.txt.
  3. Exports (TorchScript exporter, dynamo=False, opset 17, static shapes, constant folding)
     onnx/text_encoder.onnx, text_encoder_2.onnx, transformer_schnell.onnx, transformer_dev.onnx,
     vae_decoder.onnx; checks each with onnxruntime against torch (inputs: case a's / c's), then
     reruns cases c and e from the ONNX files alone (onnxruntime + numpy).

Assumes
  dev machine: torch, diffusers 0.42, transformers 5, sentencepiece, onnx, onnxruntime. CI never
  runs this; the committed files are the fixture.

Usage
  python3 models/make_flux_refs.py [--out tests/pipeline/flux] [--onnx2cl build-flux/onnx2cl]
  (--onnx2cl: also compiles each ONNX file with it into a temporary folder and prints the result)
"""

import argparse
import copy
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import export_sd  # noqa: E402
import export_family as F  # noqa: E402

torch.set_num_threads(2)

CLIP_L = dict(export_sd.CLIP_TINY)
T5 = dict(F.T5_TINY, vocab_size=4100)
FLUX = dict(F.FLUX_TINY, in_channels=64, joint_attention_dim=32, pooled_projection_dim=32)
VAE = dict(F.VAE16_TINY, sample_size=32, down_block_types=["DownEncoderBlock2D"] * 4,
           up_block_types=["UpDecoderBlock2D"] * 4, block_out_channels=[16, 16, 16, 16],
           scaling_factor=0.3611, shift_factor=0.1159)
# black-forest-labs/FLUX.1-{schnell,dev} scheduler/scheduler_config.json
SCHED = {
    "schnell": dict(num_train_timesteps=1000, shift=1.0, use_dynamic_shifting=False),
    "dev": dict(num_train_timesteps=1000, shift=3.0, use_dynamic_shifting=True, base_shift=0.5,
                max_shift=1.15, base_image_seq_len=256, max_image_seq_len=4096),
}
# vae 305: the seed of make_sd3_refs.py's VAE (same weights)
SEEDS = dict(text_encoder=401, text_encoder_2=402, transformer_schnell=403, transformer_dev=404,
             vae=305)

HW = 32
T5_LEN = 64
PROMPT = "a photo of an astronaut riding a horse on mars"
LONG = ("a photo of an astronaut riding a horse on mars!! highly detailed, intricate </s> digital "
        "painting by a famous artist, dramatic lighting, volumetric fog, cinematic composition, "
        "sharp focus, octane render, trending on artstation, ultra wide angle, golden hour, "
        "red desert dunes, distant mountains, two moons in a purple sky, dust storm on the horizon")
# case, variant, steps, guidance_scale, true_cfg_scale, prompt, negative ("" = none passed)
CASES = [("a", "schnell", 4, 0.0, 1.0, PROMPT, ""), ("b", "schnell", 1, 0.0, 1.0, PROMPT, ""),
         ("c", "dev", 4, 3.5, 1.0, PROMPT, ""), ("d", "dev", 6, 5.0, 1.0, LONG, ""),
         ("e", "dev", 4, 3.5, 4.0, PROMPT, "blurry")]


def build_folders(out):
    from diffusers import (AutoencoderKL, FlowMatchEulerDiscreteScheduler, FluxPipeline,
                           FluxTransformer2DModel)
    from transformers import (CLIPTextConfig, CLIPTextModel, CLIPTokenizer, T5Config,
                              T5EncoderModel, T5TokenizerFast)

    te = F.make(lambda c: CLIPTextModel(CLIPTextConfig(**c)), CLIP_L, SEEDS["text_encoder"])
    te2 = F.make(lambda c: T5EncoderModel(T5Config(**c)), T5, SEEDS["text_encoder_2"])
    vae = F.make(lambda c: AutoencoderKL(**c), VAE, SEEDS["vae"])

    arch = os.path.join(ROOT, "models", "arch", "tiny_sdxl")
    tok = CLIPTokenizer.from_pretrained(os.path.join(arch, "tokenizer"))
    spiece = os.path.join(ROOT, "tests", "t5_tokenizer", "spiece.model")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(spiece, tmp)
        tok2 = T5TokenizerFast.from_pretrained(tmp)
    assert len(tok2) == 4100, len(tok2)

    folders = {}
    for variant in ("schnell", "dev"):
        dit = F.make(lambda c: FluxTransformer2DModel(**c),
                     dict(FLUX, guidance_embeds=variant == "dev"), SEEDS["transformer_" + variant])
        sched = FlowMatchEulerDiscreteScheduler(**SCHED[variant])
        pipe = FluxPipeline(scheduler=sched, vae=vae, text_encoder=te, tokenizer=tok,
                            text_encoder_2=te2, tokenizer_2=tok2, transformer=dit)
        folder = os.path.join(out, "tiny_flux_" + variant)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        pipe.save_pretrained(folder, safe_serialization=True)
        # tokenizer: the committed files themselves (what the C side loads)
        d = os.path.join(folder, "tokenizer")
        shutil.rmtree(d)
        shutil.copytree(os.path.join(arch, "tokenizer"), d)
        d = os.path.join(folder, "tokenizer_2")
        cfg = {}
        if os.path.exists(os.path.join(d, "tokenizer_config.json")):
            with open(os.path.join(d, "tokenizer_config.json")) as f:
                cfg = json.load(f)
        shutil.rmtree(d)
        os.makedirs(d)
        shutil.copy(spiece, d)
        keep = {k: cfg[k] for k in ("eos_token", "pad_token", "unk_token", "extra_ids",
                                    "model_max_length") if k in cfg}
        keep.update(tokenizer_class="T5TokenizerFast", extra_ids=100, eos_token="</s>",
                    pad_token="<pad>", unk_token="<unk>")
        keep.setdefault("model_max_length", 512)
        if keep["model_max_length"] > 10 ** 9:
            keep["model_max_length"] = 512
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump(keep, f, indent=1)
            f.write("\n")
        folders[variant] = folder
    return folders, tok2


def load(folder):
    from diffusers import FluxPipeline
    pipe = FluxPipeline.from_pretrained(folder, torch_dtype=torch.float32)
    pipe.set_progress_bar_config(disable=True)
    return pipe.to("cpu")


class Recorder:
    """Latents after each step (callback_on_step_end), the transformer's inputs and output per
    call (forward hook), prepare_latents' result (packed latents, latent_image_ids) and the sigmas
    and mu passed to scheduler.set_timesteps."""

    def __init__(self, pipe):
        self.pipe, self.steps, self.calls, self.init, self.st = pipe, [], [], None, None
        self.h = pipe.transformer.register_forward_hook(self.hook, with_kwargs=True)
        orig, orig_st = pipe.prepare_latents, pipe.scheduler.set_timesteps

        def prep(*a, **k):
            out = orig(*a, **k)
            self.init = tuple(x.detach().clone() for x in out)
            return out

        @functools.wraps(orig_st)  # retrieve_timesteps inspects its signature
        def st(*a, **k):
            self.st = (a, dict(k))
            return orig_st(*a, **k)
        pipe.prepare_latents = prep
        pipe.scheduler.set_timesteps = st
        self.orig, self.orig_st = orig, orig_st

    def hook(self, mod, args, kwargs, out):
        self.calls.append({k: (v.detach().clone() if torch.is_tensor(v) else v)
                           for k, v in kwargs.items()} | {"out": out[0].detach().clone()})

    def callback(self, pipe, i, t, kw):
        self.steps.append(kw["latents"].detach().clone())
        return {}

    def close(self):
        self.h.remove()
        self.pipe.prepare_latents = self.orig
        self.pipe.scheduler.set_timesteps = self.orig_st


def run_case(pipe, steps, gs, tcfg, prompt, neg, rec=None):
    g = torch.Generator().manual_seed(42)
    kw = dict(prompt=prompt, negative_prompt=neg or None, true_cfg_scale=tcfg,
              num_inference_steps=steps, guidance_scale=gs, height=HW, width=HW, generator=g,
              output_type="np", max_sequence_length=T5_LEN)
    if rec is not None:
        kw.update(callback_on_step_end=rec.callback, callback_on_step_end_tensor_inputs=["latents"])
    img = pipe(**kw).images  # [1, H, W, 3] float32 in [0, 1]
    return np.ascontiguousarray(img.transpose(0, 3, 1, 2).astype(np.float32))


def ids(tok, text, n):
    return tok(text, padding="max_length", max_length=n, truncation=True,
               add_special_tokens=True, return_tensors="np").input_ids.astype(np.int64)


def save(out, name, arr, keep64=False):
    arr = arr.detach().cpu().numpy() if torch.is_tensor(arr) else np.asarray(arr)
    if arr.dtype == np.float64 and not keep64:
        arr = arr.astype(np.float32)
    np.save(os.path.join(out, name + ".npy"), arr)
    return arr


def references(pipes, out):
    from diffusers.utils.torch_utils import randn_tensor
    with open(os.path.join(out, "cases.txt"), "w") as f:
        for c in CASES:
            f.write("\t".join(str(x) for x in c) + "\n")
    inputs = {}
    for name, variant, steps, gs, tcfg, prompt, neg in CASES:
        pipe = pipes[variant]
        rec = Recorder(pipe)
        img = run_case(pipe, steps, gs, tcfg, prompt, neg, rec)
        rec.close()
        save(out, f"{name}_image", img)
        c0 = rec.calls[0]
        print(f"case {name} ({variant}, {steps} steps, guidance {gs}, true_cfg {tcfg}): "
              f"{len(rec.calls)} transformer calls; set_timesteps args {rec.st[0]} kwargs "
              f"{ {k: (v.tolist() if hasattr(v, 'tolist') else v) for k, v in rec.st[1].items()} }")
        print("  timesteps", pipe.scheduler.timesteps.tolist())
        print("  sigmas", pipe.scheduler.sigmas.tolist())
        print("  timestep fed", [c["timestep"].tolist() for c in rec.calls],
              "guidance fed", [None if c["guidance"] is None else c["guidance"].tolist()
                               for c in rec.calls[:1]])
        if name == "a":
            inputs["transformer_schnell"] = {k: c0[k].numpy() for k in (
                "hidden_states", "encoder_hidden_states", "pooled_projections", "timestep",
                "img_ids", "txt_ids")}
        if name == "d":
            full = pipe.tokenizer(prompt).input_ids
            t5 = pipe.tokenizer_2(prompt).input_ids
            print(f"  case d: {len(full)} CLIP-L tokens (incl. bos/eos), {len(t5)} T5 tokens;"
                  f" '</s>' in T5 ids at {[i for i, x in enumerate(t5) if x == 1]}")
            save(out, "d_ids_clip_l", ids(pipe.tokenizer, prompt, 77))
            save(out, "d_ids_t5", ids(pipe.tokenizer_2, prompt, T5_LEN))
        if name == "e":
            save(out, "e_ids_clip_l_neg", ids(pipe.tokenizer, neg, 77))
            save(out, "e_ids_t5_neg", ids(pipe.tokenizer_2, neg, T5_LEN))
            # calls alternate cond, uncond per step
            save(out, "e_noise_pred_raw", torch.stack(
                [torch.cat([rec.calls[2 * i]["out"], rec.calls[2 * i + 1]["out"]])
                 for i in range(steps)]))                                  # [steps, 2, 4, 64]
            save(out, "e_latents_steps", torch.cat(rec.steps))            # [steps, 4, 64]
        if name != "c":
            continue
        # case c's intermediates
        pe, pp, tids = pipe.encode_prompt(prompt=prompt, prompt_2=None, device="cpu",
                                          num_images_per_prompt=1, max_sequence_length=T5_LEN)
        save(out, "c_ids_clip_l", ids(pipe.tokenizer, prompt, 77))
        save(out, "c_ids_t5", ids(pipe.tokenizer_2, prompt, T5_LEN))
        save(out, "c_prompt_embeds", pe)
        save(out, "c_pooled_prompt_embeds", pp)
        save(out, "c_text_ids", tids)
        lat0, img_ids = rec.init
        save(out, "c_latents_init", lat0)                                  # [1, 4, 64] packed
        save(out, "c_latent_image_ids", img_ids)                           # [4, 3]
        g = torch.Generator().manual_seed(42)
        noise = randn_tensor((1, 16, HW // 8, HW // 8), generator=g, dtype=torch.float32)
        save(out, "c_noise", noise)                                        # [1, 16, 4, 4]
        packed = noise.view(1, 16, 2, 2, 2, 2).permute(0, 2, 4, 1, 3, 5).reshape(1, 4, 64)
        print("  initial latents = pack(randn_tensor([1,16,4,4], generator 42)):",
              torch.equal(packed, lat0), "(the explicit reshape/permute too:",
              torch.equal(pipe._pack_latents(noise, 1, 16, 4, 4), lat0), ")")
        sig_in = rec.st[1]["sigmas"]
        save(out, "c_sigmas_in", np.asarray(sig_in, dtype=np.float64), keep64=True)
        save(out, "c_mu", np.asarray([rec.st[1]["mu"]], dtype=np.float64), keep64=True)
        save(out, "c_timesteps", pipe.scheduler.timesteps)
        save(out, "c_sigmas", pipe.scheduler.sigmas)
        save(out, "c_timestep_fed", torch.cat([c["timestep"] for c in rec.calls]))
        save(out, "c_guidance_fed", c0["guidance"])
        save(out, "c_noise_pred_raw", torch.cat([c["out"] for c in rec.calls]))  # [steps, 4, 64]
        save(out, "c_latents_steps", torch.cat(rec.steps))                        # [steps, 4, 64]
        unpacked = pipe._unpack_latents(rec.steps[-1], HW, HW, pipe.vae_scale_factor)
        save(out, "c_latents_unpacked", unpacked)
        lat = unpacked / pipe.vae.config.scaling_factor + pipe.vae.config.shift_factor
        save(out, "c_vae_input", lat)
        print("  mu", repr(rec.st[1]["mu"]), "sigmas passed", np.asarray(sig_in).tolist(),
              type(sig_in).__name__, np.asarray(sig_in).dtype)
        print("  transformer call inputs:", {k: (tuple(v.shape), str(v.dtype))
                                             if torch.is_tensor(v) else v for k, v in c0.items()})
        print("  encoder_hidden_states == encode_prompt's:",
              torch.equal(c0["encoder_hidden_states"], pe), "pooled:",
              torch.equal(c0["pooled_projections"], pp), "txt_ids zeros:",
              bool((c0["txt_ids"] == 0).all()), tuple(c0["txt_ids"].shape))
        print("  img_ids:", c0["img_ids"].tolist())
        inputs["transformer_dev"] = {k: c0[k].numpy() for k in (
            "hidden_states", "encoder_hidden_states", "pooled_projections", "timestep",
            "img_ids", "txt_ids", "guidance")}
        inputs["vae_decoder"] = {"latent_sample": lat.numpy()}
        inputs["text_encoder"] = {"input_ids": ids(pipe.tokenizer, prompt, 77)}
        inputs["text_encoder_2"] = {"input_ids": ids(pipe.tokenizer_2, prompt, T5_LEN)}
    return inputs


class ClipPooledWrapper(torch.nn.Module):
    """text_encoder(input_ids) -> (pooler_output, last_hidden_state)."""

    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, input_ids):
        out = self.clip(input_ids=input_ids, return_dict=True)
        return out.pooler_output, out.last_hidden_state


class FluxGuidanceWrapper(F.FluxWrapper):
    """transformer(hidden_states, encoder_hidden_states, pooled_projections, timestep, img_ids,
    txt_ids, guidance) -> out (guidance_embeds True: FLUX.1-dev)."""

    def forward(self, hidden_states, encoder_hidden_states, pooled_projections, timestep, img_ids,
                txt_ids, guidance):
        return self.m(hidden_states=hidden_states, encoder_hidden_states=encoder_hidden_states,
                      pooled_projections=pooled_projections, timestep=timestep, img_ids=img_ids,
                      txt_ids=txt_ids, guidance=guidance, return_dict=False)[0]


def export(pipes, onnx_dir, inputs):
    import onnxruntime as ort
    os.makedirs(onnx_dir, exist_ok=True)
    tins = ["hidden_states", "encoder_hidden_states", "pooled_projections", "timestep", "img_ids",
            "txt_ids"]
    dev = pipes["dev"]
    # the transformers are copied: for_exporter swaps torch.nn.RMSNorm for diffusers' RMSNorm
    specs = {
        "text_encoder": (ClipPooledWrapper(dev.text_encoder), ["input_ids"],
                         ["pooler_output", "last_hidden_state"]),
        "text_encoder_2": (F.T5Wrapper(dev.text_encoder_2), ["input_ids"],
                           ["last_hidden_state"]),
        "transformer_schnell": (F.FluxWrapper(copy.deepcopy(pipes["schnell"].transformer))
                                .for_exporter("torchscript"), tins, ["out_sample"]),
        "transformer_dev": (FluxGuidanceWrapper(copy.deepcopy(dev.transformer))
                            .for_exporter("torchscript"), tins + ["guidance"], ["out_sample"]),
        "vae_decoder": (export_sd.VaeDecoderWrapper(dev.vae), ["latent_sample"], ["sample"]),
    }
    paths = {}
    for name, (mod, ins, outs) in specs.items():
        mod = mod.eval()
        feed = inputs[name]
        args = tuple(torch.from_numpy(feed[k]) for k in ins)
        path = os.path.join(onnx_dir, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(mod, args, path, input_names=ins, output_names=outs,
                              opset_version=17, do_constant_folding=True, dynamo=False)
            ref = mod(*args)
        ref = ref if isinstance(ref, tuple) else (ref,)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(outs, {k: feed[k] for k in ins})
        io = ", ".join(f"{i.name} {i.type} {i.shape}" for i in sess.get_inputs())
        oo = ", ".join(f"{o.name} {o.type} {o.shape}" for o in sess.get_outputs())
        diffs = ", ".join(f"{o} {np.abs(g - r.numpy()).max():.3g} (max |ref| "
                          f"{np.abs(r.numpy()).max():.3g})" for o, g, r in zip(outs, got, ref))
        print(f"{name}.onnx ({os.path.getsize(path)} B): in [{io}] out [{oo}]\n  "
              f"onnxruntime vs torch max abs diff: {diffs}")
        paths[name] = path
    return paths


def unpack(x):
    """FluxPipeline._unpack_latents for 32x32: [1,4,64] -> [1,16,4,4]."""
    return x.reshape(1, 2, 2, 16, 2, 2).transpose(0, 3, 1, 4, 2, 5).reshape(1, 16, 4, 4)


def ort_loop(paths, out):
    """Cases c and e again from the ONNX files alone (onnxruntime + numpy): the encoders on the
    ids, the Euler loop from the saved initial latents and sigmas (guidance, true CFG), unpacking,
    the VAE: prints the max abs differences to the pipeline's tensors."""
    import onnxruntime as ort
    sess = {k: ort.InferenceSession(p, providers=["CPUExecutionProvider"])
            for k, p in paths.items()}
    ld = lambda n: np.load(os.path.join(out, n + ".npy"))  # noqa: E731

    def encode(id_l, id_t5):
        pooled, _ = sess["text_encoder"].run(None, {"input_ids": id_l})
        (t5,) = sess["text_encoder_2"].run(None, {"input_ids": id_t5})
        return t5, pooled

    pe, pp = encode(ld("c_ids_clip_l"), ld("c_ids_t5"))
    print(f"ort loop: prompt_embeds diff {np.abs(pe - ld('c_prompt_embeds')).max():.3g}, "
          f"pooled {np.abs(pp - ld('c_pooled_prompt_embeds')).max():.3g}")
    neg = encode(ld("e_ids_clip_l_neg"), ld("e_ids_t5_neg"))
    sig = ld("c_sigmas")
    img_ids, txt_ids = ld("c_latent_image_ids"), ld("c_text_ids")
    for case, tcfg, ref_steps in (("c", 1.0, "c_latents_steps"), ("e", 4.0, "e_latents_steps")):
        gs = 3.5
        lat = ld("c_latents_init")
        ref = ld(ref_steps)

        def dit(lat, t, emb, pool):
            return sess["transformer_dev"].run(None, {
                "hidden_states": lat, "encoder_hidden_states": emb, "pooled_projections": pool,
                "timestep": t, "img_ids": img_ids, "txt_ids": txt_ids,
                "guidance": np.full([1], gs, dtype=np.float32)})[0]
        for i in range(len(sig) - 1):
            t = (np.float32(sig[i]) * np.float32(1000)) / np.float32(1000)
            t = np.full([1], t, dtype=np.float32)
            v = dit(lat, t, pe, pp)
            if tcfg > 1:
                u = dit(lat, t, *neg)
                v = u + np.float32(tcfg) * (v - u)
            lat = (lat + (sig[i + 1] - sig[i]) * v).astype(np.float32)
            print(f"ort loop {case}: step {i} latents diff {np.abs(lat - ref[i]).max():.3g}")
        x = (unpack(lat) / np.float32(0.3611) + np.float32(0.1159)).astype(np.float32)
        (img,) = sess["vae_decoder"].run(None, {"latent_sample": x})
        img = np.clip(img / 2 + 0.5, 0, 1)
        print(f"ort loop {case}: image diff {np.abs(img - ld(case + '_image')).max():.3g}")


def compile_all(onnx2cl, paths):
    tmp = tempfile.mkdtemp(prefix="fluxx")
    for name, path in paths.items():
        r = subprocess.run([onnx2cl, path, "-o", os.path.join(tmp, name + ".o2d")],
                           capture_output=True, text=True)
        msg = (r.stdout + r.stderr).strip().splitlines()
        print(f"onnx2cl {name}: rc {r.returncode}" + ("" if r.returncode == 0 else
                                                      "\n  " + "\n  ".join(msg[-15:])))
    shutil.rmtree(tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "pipeline", "flux"))
    ap.add_argument("--onnx2cl", default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    folders, tok2 = build_folders(a.out)
    pipes = {k: load(v) for k, v in folders.items()}
    # the reloaded tokenizers give the same ids as the ones built here
    probe = "hello </s> world <extra_id_0> !!"
    for p in pipes.values():
        assert p.tokenizer_2(probe).input_ids == tok2(probe).input_ids
    p = pipes["dev"]
    print("loaded:", {k: type(v).__name__ for k, v in p.components.items()})
    print("vae_scale_factor", p.vae_scale_factor, "tokenizer_max_length",
          p.tokenizer_max_length, "default_sample_size", p.default_sample_size)
    with torch.no_grad():
        inputs = references(pipes, a.out)
    paths = export(pipes, os.path.join(a.out, "onnx"), inputs)
    ort_loop(paths, a.out)
    if a.onnx2cl:
        compile_all(a.onnx2cl, paths)


if __name__ == "__main__":
    main()
