#!/usr/bin/env python3
"""make_sched_refs.py — writes tests/pipeline/sched_refs.txt + sched_refs.bin: step-by-step traces of
diffusers' schedulers, the reference of test_scheduler.c (pipeline/scheduler.c).

For every case (a scheduler_config.json of tests/pipeline/sched/, a scheduler, a step count,
optional use_karras_sigmas / timestep_spacing / sigma schedule overrides, the pipeline's eta, a
seed) the scheduler is built with SchedulerClass.from_config(config, **overrides) (with pipe=1:
then handed to StableDiffusionPipeline(...) so that its __init__ applies its config rewrites),
set_timesteps(steps) is called, and a denoising loop runs as StableDiffusionPipeline runs it, on
a 1x4x2x2 sample (16 values: torch.randn's vectorized path, like real latents):
    g = torch.Generator().manual_seed(seed); x = torch.randn(shape, generator=g) * init_noise_sigma
    for each t: xin = scale_model_input(x, t); m = model output (numpy default_rng(seed), stored);
                x = step(m, t, x, **extra).prev_sample
where extra holds generator=g and eta (0.0 unless given) when step() takes them, as the pipeline's
prepare_extra_step_kwargs does.
sched_refs.txt, one block per case:
    case CONFIG SCHEDULER STEPS KARRAS(-1/0/1) SPACING(- or name) SEED [sig=S] [eta=E] [pipe=1]
                                                                        [start=K] [tol=T]
(start=K: img2img's loop, set_begin_index(K) and the steps from timesteps[K] on; the bin then holds
the K-th step's input sample instead of the initial noise; flow_euler (FlowMatchEulerDiscreteScheduler):
wh=WxH: set_timesteps(mu=calculate_shift of a W x H image, as FluxPipeline), the mu written as mu=HEX;
flux=1: FluxPipeline's sigmas np.linspace(1, 1/n, n); the class has no scale_model_input (xin = x) and
no init_noise_sigma (1))
    timesteps T0 T1 ...            (as diffusers holds them; float hex)
    sigmas S0 S1 ...               (float32 values as float hex; "sigmas -" when the class has none)
    init INIT_NOISE_SIGMA
and sched_refs.bin holds, per case: x after init (16 float32), then per step xin, m, x (16 each).

Assumes torch + diffusers + scipy (beta sigmas) (dev machine only). Regenerated with scipy 1.17.1 and
torch 2.15, two KDPM2 exponential-sigma cases move their fractional timesteps by a few ulps (within the
test's 1e-2): the committed files keep the earlier cases as first generated and add the flow_euler
cases and scale_noise lines as this script writes them.
Usage: python3 tests/pipeline/make_sched_refs.py tests/pipeline
"""
import inspect
import json
import os
import sys

import numpy as np
import torch
from diffusers import (DDIMScheduler, DDPMScheduler, DEISMultistepScheduler, DPMSolverMultistepScheduler,
                       EulerAncestralDiscreteScheduler, EulerDiscreteScheduler, FlowMatchEulerDiscreteScheduler,
                       HeunDiscreteScheduler,
                       KDPM2AncestralDiscreteScheduler, KDPM2DiscreteScheduler, LCMScheduler,
                       LMSDiscreteScheduler, PNDMScheduler, StableDiffusionPipeline, TCDScheduler,
                       UniPCMultistepScheduler)

CLASSES = {"euler": EulerDiscreteScheduler, "euler_a": EulerAncestralDiscreteScheduler,
           "dpmpp_2m": DPMSolverMultistepScheduler, "ddim": DDIMScheduler, "lcm": LCMScheduler,
           "pndm": PNDMScheduler, "lms": LMSDiscreteScheduler, "heun": HeunDiscreteScheduler,
           "dpm2": KDPM2DiscreteScheduler, "dpm2_a": KDPM2AncestralDiscreteScheduler,
           "dpmpp_2m_sde": DPMSolverMultistepScheduler, "dpmpp_3m_sde": DPMSolverMultistepScheduler,
           "unipc": UniPCMultistepScheduler, "deis": DEISMultistepScheduler, "ddpm": DDPMScheduler,
           "tcd": TCDScheduler, "flow_euler": FlowMatchEulerDiscreteScheduler}
# from_config overrides that make the kind (A1111's DPM++ 2M SDE / 3M SDE)
KIND_KW = {"dpmpp_2m_sde": {"algorithm_type": "sde-dpmsolver++"},
           "dpmpp_3m_sde": {"algorithm_type": "sde-dpmsolver++", "solver_order": 3}}
SIGMA_KW = {"karras": "use_karras_sigmas", "exponential": "use_exponential_sigmas", "beta": "use_beta_sigmas"}
NEW = ("pndm", "lms", "heun", "dpm2", "dpm2_a", "dpmpp_2m_sde", "dpmpp_3m_sde", "unipc", "deis", "ddpm", "tcd")
CONV = ("euler", "lms", "heun", "dpm2", "dpm2_a", "dpmpp_2m", "dpmpp_2m_sde", "dpmpp_3m_sde", "unipc", "deis")
SIGMA_SPACE = ("euler", "euler_a", "lms", "heun", "dpm2", "dpm2_a")
HAS_SIGMAS = SIGMA_SPACE + ("dpmpp_2m", "dpmpp_2m_sde", "dpmpp_3m_sde", "unipc", "deis", "flow_euler")
SHAPE = (1, 4, 2, 2)


def cases():
    seed = 100
    for sched in CLASSES:
        if sched == "flow_euler":
            continue  # its own cases below (flow-matching configs)
        for steps in (1, 4, 20):
            seed += 1
            yield "sd15", sched, steps, -1, None, seed
    for sched in ("euler", "dpmpp_2m"):
        for steps in (1, 4, 20):
            seed += 1
            yield "sd15", sched, steps, 1, None, seed
    for sched in ("euler", "euler_a", "dpmpp_2m", "ddim", "lcm"):
        seed += 1
        yield "sd21v", sched, 4, -1, None, seed
    yield "sd21v", "dpmpp_2m", 6, 1, None, 300
    yield "turbo", "euler", 1, -1, None, 301
    yield "turbo", "euler", 4, -1, None, 302
    for sched in ("euler", "euler_a", "dpmpp_2m", "ddim"):
        for sp in ("linspace", "leading", "trailing"):
            seed += 1
            yield "sd15", sched, 3, -1, sp, seed
    yield "cosine", "euler", 4, -1, None, 303
    yield "cosine", "dpmpp_2m", 5, 0, None, 304  # with Karras: repeated timesteps (see below)
    yield "cosine", "ddim", 4, -1, None, 305
    yield "linear", "ddim", 4, -1, None, 306
    yield "linear", "euler_a", 7, -1, None, 307
    yield "linear", "lcm", 8, -1, None, 308
    # the samplers added for issue 21: every one at 1, 2, 4, 20, 25 steps on SD 1.5's config
    seed = 400
    for sched in NEW:
        for steps in (1, 2, 4, 20, 25):
            seed += 1
            # KDPM2 a at 2 steps: sigmas_down = sqrt(S1^2 - up^2) cancels, amplifying the 1-ulp error
            # of torch's (MKL) sqrt by (S0 / S1)^2 ~ 2.5e5: diffusers' own result is uncertain to ~1e-3
            yield "sd15", sched, steps, -1, None, seed, "tol=1e-3" if sched == "dpm2_a" and steps == 2 else ""
        seed += 1
        yield "sd21v", sched, 4, -1, None, seed, ""  # v-prediction
        seed += 1
        yield "cosine", sched, 5, -1, None, seed, ""
        for sp in ("linspace", "leading", "trailing"):
            seed += 1
            yield "sd15", sched, 3, -1, sp, seed, ""
    for sched in ("lms", "heun", "unipc", "deis", "ddpm", "tcd", "dpmpp_2m_sde"):
        seed += 1
        yield "sample", sched, 4, -1, None, seed, ""  # prediction_type sample
    # sigma schedules where the class takes them
    for sched in CONV:
        for sig in ("karras", "exponential", "beta"):
            for steps in (4, 20):
                seed += 1
                # beta sigmas bunch at both ends: third-order differences divide by tiny steps, and
                # diffusers itself moves by 6.6e-3 (relative) when one sigma moves by 1 ulp
                tol = " tol=5e-3" if sched == "dpmpp_3m_sde" and sig == "beta" and steps == 20 else ""
                yield "sd15", sched, steps, -1, None, seed, "sig=" + sig + tol
        seed += 1
        yield "sd21v", sched, 6, -1, None, seed, "sig=karras"
    # the pipeline's eta: DDIM eta > 0 draws noise, TCD's gamma
    for sched, eta in (("ddim", "0.5"), ("ddim", "1.0"), ("tcd", "0.3"), ("tcd", "0.0"), ("tcd", "1.0")):
        for steps in (1, 4, 20):
            seed += 1
            yield "sd15", sched, steps, -1, None, seed, "eta=" + eta
    # PNDM with PRK steps (skip_prk_steps false: the class default, linear.json has no key)
    for steps in (4, 5, 20):
        seed += 1
        yield "linear", "pndm", steps, -1, None, seed, ""
    # StableDiffusionPipeline's rewrites: linear.json has clip_sample true and no steps_offset
    for sched in ("ddim", "ddpm", "pndm", "heun", "euler", "dpmpp_2m", "lcm", "tcd"):
        seed += 1
        yield "linear", sched, 4, -1, None, seed, "pipe=1"
    for sched in ("pndm", "ddim", "euler_a", "dpmpp_2m_sde"):
        seed += 1
        yield "sd15", sched, 20, -1, None, seed, "pipe=1"
    # img2img's loop: begin index K, the steps from timesteps[K] on
    for sched in ("euler", "euler_a", "lms", "dpmpp_2m", "dpmpp_2m_sde", "dpmpp_3m_sde", "unipc", "deis", "ddim",
                  "pndm", "ddpm", "tcd", "lcm", "heun", "dpm2", "dpm2_a"):
        for steps, k in ((20, 6), (4, 2)):  # k = t_start * scheduler.order (even for heun, dpm2, dpm2_a)
            seed += 1
            yield "sd15", sched, steps, -1, None, seed, f"start={k}"
    # DDPM variance types, DPM-Solver heun solver type, DEIS order 3
    for steps in (4, 20):
        for cfg in ("ddpm_large", "ddpm_smalllog", "dpm_heun", "deis3"):
            seed += 1
            sched = {"ddpm_large": "ddpm", "ddpm_smalllog": "ddpm", "dpm_heun": "dpmpp_2m_sde", "deis3": "deis"}[cfg]
            yield cfg, sched, steps, -1, None, seed, ""
    # flow matching (issue 23): FlowMatchEulerDiscreteScheduler, SD 3.x (shift 3.0) and Flux (dynamic
    # shifting: mu of the image size, FluxPipeline's sigmas np.linspace(1, 1/n, n)); wh=WxH: mu =
    # calculate_shift((H // 16) * (W // 16), the config's base/max seq len and shifts) as FluxPipeline
    # computes it; flux=1: FluxPipeline's sigmas (else set_timesteps(n, mu=mu))
    seed = 900
    for cfg, opts in (("sd3", ""), ("sd35", ""), ("flux", "wh=1024x1024 flux=1"), ("flux", "wh=512x512 flux=1"),
                      ("flux", "wh=768x1344 flux=1"), ("flux", "wh=1024x1024"), ("flux_linear", "wh=1024x1024 flux=1"),
                      ("flux_linear", "wh=512x512"), ("ltx", "wh=768x512 flux=1"), ("ltx", "wh=1024x1024"),
                      ("sd3_terminal", ""), ("sd3_invert", ""), ("sd3_stoch", ""), ("flow_shift17", ""),
                      ("sd3", "sig=karras"), ("sd3", "sig=exponential"), ("sd3", "sig=beta"),
                      ("flux", "wh=1024x1024 flux=1 sig=karras"), ("flux", "wh=512x512 flux=1 sig=beta")):
        for steps in (1, 4, 28):
            seed += 1
            if steps == 1 and cfg in ("sd3_terminal", "ltx"):
                continue  # shift_terminal at 1 step: 0 / 0 (NaN sigmas, diffusers fails; the C port refuses)
            yield cfg, "flow_euler", steps, -1, None, seed, opts
    for cfg, opts in (("sd3", "start=8"), ("flux", "wh=1024x1024 flux=1 start=10"), ("sd3_stoch", "start=3")):
        seed += 1
        yield cfg, "flow_euler", 28, -1, None, seed, opts


def flux_mu(s, wh):
    """FluxPipeline's mu for a W x H image (image_seq_len: its packed latents' length)."""
    from diffusers.pipelines.flux.pipeline_flux import calculate_shift
    w, h = (int(v) for v in wh.split("x"))
    seq = (h // 16) * (w // 16)
    return calculate_shift(seq, s.config.get("base_image_seq_len", 256), s.config.get("max_image_seq_len", 4096),
                           s.config.get("base_shift", 0.5), s.config.get("max_shift", 1.15))


def hexf(v):
    return float(v).hex()


def main():
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    txt, blobs = [], []
    for case in cases():
        cfg_name, sched, steps, karras, spacing, seed = case[:6]
        opts = case[6] if len(case) > 6 else ""
        with open(os.path.join(here, "sched", cfg_name + ".json")) as f:
            cfg = json.load(f)
        kw = dict(KIND_KW.get(sched, {}))
        if karras >= 0:
            kw["use_karras_sigmas"] = bool(karras)
        if spacing:
            kw["timestep_spacing"] = spacing
        eta, pipe, start, wh, flux = 0.0, False, 0, None, False
        for o in opts.split():
            k, v = o.split("=")
            if k == "sig":
                kw[SIGMA_KW[v]] = True
            elif k == "eta":
                eta = float(v)
            elif k == "pipe":
                pipe = True
            elif k == "start":
                start = int(v)
            elif k == "wh":
                wh = v
            elif k == "flux":
                flux = True
            elif k != "tol":  # tol: the C test's tolerance for this case
                raise ValueError(o)
        s = CLASSES[sched].from_config(cfg, **kw)
        if pipe:
            p = StableDiffusionPipeline(vae=None, text_encoder=None, tokenizer=None, unet=None, scheduler=s,
                                        safety_checker=None, feature_extractor=None,
                                        requires_safety_checker=False)
            s = p.scheduler
        params = set(inspect.signature(s.step).parameters)
        tkw = {}
        if wh:
            tkw["mu"] = flux_mu(s, wh)
            opts += " mu=" + hexf(tkw["mu"])
        if flux:  # FluxPipeline: retrieve_timesteps(scheduler, sigmas=..., mu=mu) (no num_inference_steps)
            tkw["sigmas"] = np.linspace(1.0, 1 / steps, steps)

        def set_timesteps():
            if flux:
                s.set_timesteps(**tkw)
            else:
                s.set_timesteps(steps, **tkw)

        set_timesteps()
        tl = s.timesteps.tolist()
        if sched not in ("pndm", "ddim", "ddpm") and tl.count(tl[0]) > 1:
            # a repeated first timestep makes diffusers start at its second occurrence and run past
            # the end of the schedule (IndexError): no reference exists for these
            print(f"skipped {cfg_name} {sched} {steps} karras={karras} {spacing}: repeated timesteps "
                  f"{s.timesteps.tolist()}")
            continue
        set_timesteps()
        ts = s.timesteps.double().numpy()
        sig = getattr(s, "sigmas", None) if sched in HAS_SIGMAS else None
        init = float(getattr(s, "init_noise_sigma", 1.0))  # flow matching: none (latents = noise)
        txt.append(f"case {cfg_name} {sched} {steps} {karras} {spacing or '-'} {seed}" + (" " + opts if opts else ""))
        txt.append("timesteps " + " ".join(hexf(t) for t in ts))
        txt.append("sigmas " + (" ".join(hexf(np.float32(v)) for v in sig.numpy()) if sig is not None else "-"))
        txt.append("init " + hexf(np.float32(init)))
        g = torch.Generator().manual_seed(seed)
        rng = np.random.default_rng(seed)
        x = torch.randn(SHAPE, generator=g, dtype=torch.float32) * init
        if start and hasattr(s, "set_begin_index"):  # DDIM, PNDM, DDPM index by value
            s.set_begin_index(start)
        blobs.append(x.numpy().ravel())
        for t in s.timesteps[start:]:
            xin = s.scale_model_input(x, t) if hasattr(s, "scale_model_input") else x  # flow: the latents as is
            m = torch.from_numpy(rng.standard_normal(SHAPE).astype(np.float32))
            extra = {}
            if "generator" in params:
                extra["generator"] = g
            if "eta" in params:
                extra["eta"] = eta
            x = s.step(m, t, x, return_dict=False, **extra)[0]
            blobs += [xin.numpy().ravel(), m.numpy().ravel(), x.numpy().ravel()]
    # add_noise at a begin index (img2img's first noise, inpainting's per-step blend)
    for sched in ("euler", "euler_a", "lms", "dpmpp_2m", "dpmpp_2m_sde", "dpmpp_3m_sde", "unipc", "deis", "ddim",
                  "pndm", "ddpm", "tcd", "lcm"):
        for cfg_name, steps, idx in (("sd15", 20, 6), ("sd21v", 4, 1), ("sd15", 25, 24)):
            with open(os.path.join(here, "sched", cfg_name + ".json")) as f:
                cfg = json.load(f)
            s = CLASSES[sched].from_config(cfg, **KIND_KW.get(sched, {}))
            s.set_timesteps(steps)
            if hasattr(s, "set_begin_index"):
                s.set_begin_index(idx)
            rng = np.random.default_rng(idx + steps)
            x0 = torch.from_numpy(rng.standard_normal(SHAPE).astype(np.float32))
            nz = torch.from_numpy(rng.standard_normal(SHAPE).astype(np.float32))
            y = s.add_noise(x0, nz, s.timesteps[idx:idx + 1])
            txt.append(f"addnoise {cfg_name} {sched} {steps} {idx}")
            blobs += [x0.numpy().ravel(), nz.numpy().ravel(), y.numpy().ravel()]
    # flow matching's img2img noise: scale_noise(sample, timesteps[idx], noise) at the begin index
    for cfg_name, steps, idx in (("sd3", 28, 8), ("sd3", 4, 1), ("sd35", 28, 27), ("sd3_invert", 10, 3)):
        with open(os.path.join(here, "sched", cfg_name + ".json")) as f:
            cfg = json.load(f)
        s = FlowMatchEulerDiscreteScheduler.from_config(cfg)
        s.set_timesteps(steps)
        s.set_begin_index(idx)
        rng = np.random.default_rng(idx + steps)
        x0 = torch.from_numpy(rng.standard_normal(SHAPE).astype(np.float32))
        nz = torch.from_numpy(rng.standard_normal(SHAPE).astype(np.float32))
        y = s.scale_noise(x0, s.timesteps[idx:idx + 1], nz)
        txt.append(f"addnoise {cfg_name} flow_euler {steps} {idx}")
        blobs += [x0.numpy().ravel(), nz.numpy().ravel(), y.numpy().ravel()]
    with open(os.path.join(out, "sched_refs.txt"), "w") as f:
        f.write("\n".join(txt) + "\n")
    np.concatenate(blobs).astype("<f4").tofile(os.path.join(out, "sched_refs.bin"))
    print(f"{sum(1 for l in txt if l.startswith('case'))} cases, {sum(len(b) for b in blobs)} values")


if __name__ == "__main__":
    main()
