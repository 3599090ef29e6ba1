#!/usr/bin/env python3
"""make_sched_refs.py — writes tests/pipeline/sched_refs.txt + sched_refs.bin: step-by-step traces of
diffusers' schedulers, the reference of test_scheduler.c (pipeline/scheduler.c).

For every case (a scheduler_config.json of tests/pipeline/sched/, a scheduler, a step count,
optional use_karras_sigmas / timestep_spacing overrides, a seed) the scheduler is built with
SchedulerClass.from_config(config, **overrides), set_timesteps(steps) is called, and a denoising
loop runs as StableDiffusionPipeline runs it, on a 1x4x2x2 sample (16 values: torch.randn's
vectorized path, like real latents):
    g = torch.Generator().manual_seed(seed); x = torch.randn(shape, generator=g) * init_noise_sigma
    for each t: xin = scale_model_input(x, t); m = model output (numpy default_rng(seed), stored);
                x = step(m, t, x, generator=g).prev_sample
sched_refs.txt, one block per case:
    case CONFIG SCHEDULER STEPS KARRAS(-1/0/1) SPACING(- or name) SEED
    timesteps T0 T1 ...            (as diffusers holds them; float hex)
    sigmas S0 S1 ...               (float32 values as float hex; "sigmas -" when the class has none)
    init INIT_NOISE_SIGMA
and sched_refs.bin holds, per case: x after init (16 float32), then per step xin, m, x (16 each).

Assumes torch + diffusers (dev machine only).
Usage: python3 tests/pipeline/make_sched_refs.py tests/pipeline
"""
import json
import os
import sys

import numpy as np
import torch
from diffusers import (DDIMScheduler, DPMSolverMultistepScheduler, EulerAncestralDiscreteScheduler,
                       EulerDiscreteScheduler, LCMScheduler)

CLASSES = {"euler": EulerDiscreteScheduler, "euler_a": EulerAncestralDiscreteScheduler,
           "dpmpp_2m": DPMSolverMultistepScheduler, "ddim": DDIMScheduler, "lcm": LCMScheduler}
SHAPE = (1, 4, 2, 2)


def cases():
    seed = 100
    for sched in CLASSES:
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


def hexf(v):
    return float(v).hex()


def main():
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    txt, blobs = [], []
    for cfg_name, sched, steps, karras, spacing, seed in cases():
        with open(os.path.join(here, "sched", cfg_name + ".json")) as f:
            cfg = json.load(f)
        kw = {}
        if karras >= 0:
            kw["use_karras_sigmas"] = bool(karras)
        if spacing:
            kw["timestep_spacing"] = spacing
        s = CLASSES[sched].from_config(cfg, **kw)
        s.set_timesteps(steps)
        if len(set(s.timesteps.tolist())) != len(s.timesteps):
            # a repeated timestep makes diffusers start at its second occurrence and run past the
            # end of the schedule (IndexError): no reference exists for these
            print(f"skipped {cfg_name} {sched} {steps} karras={karras} {spacing}: repeated timesteps "
                  f"{s.timesteps.tolist()}")
            continue
        s.set_timesteps(steps)
        ts = s.timesteps.double().numpy()
        sig = getattr(s, "sigmas", None) if sched in ("euler", "euler_a", "dpmpp_2m") else None
        init = float(s.init_noise_sigma)
        txt.append(f"case {cfg_name} {sched} {steps} {karras} {spacing or '-'} {seed}")
        txt.append("timesteps " + " ".join(hexf(t) for t in ts))
        txt.append("sigmas " + (" ".join(hexf(np.float32(v)) for v in sig.numpy()) if sig is not None else "-"))
        txt.append("init " + hexf(np.float32(init)))
        g = torch.Generator().manual_seed(seed)
        rng = np.random.default_rng(seed)
        x = torch.randn(SHAPE, generator=g, dtype=torch.float32) * s.init_noise_sigma
        blobs.append(x.numpy().ravel())
        for t in s.timesteps:
            xin = s.scale_model_input(x, t)
            m = torch.from_numpy(rng.standard_normal(SHAPE).astype(np.float32))
            x = s.step(m, t, x, generator=g, return_dict=False)[0]
            blobs += [xin.numpy().ravel(), m.numpy().ravel(), x.numpy().ravel()]
    with open(os.path.join(out, "sched_refs.txt"), "w") as f:
        f.write("\n".join(txt) + "\n")
    np.concatenate(blobs).astype("<f4").tofile(os.path.join(out, "sched_refs.bin"))
    print(f"{sum(1 for l in txt if l.startswith('case'))} cases, {sum(len(b) for b in blobs)} values")


if __name__ == "__main__":
    main()
