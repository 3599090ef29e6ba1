#!/usr/bin/env python3
"""make_rng_refs.py — writes tests/pipeline/rng_refs.txt + rng_refs.bin: torch.randn outputs (float32,
CPU generator) that test_rng.c requires bit for bit from pipeline/torch_rng.c.

Each line of rng_refs.txt is one generator: "SEED N1 N2 ..." = torch.Generator().manual_seed(SEED),
then torch.randn(N1), torch.randn(N2), ... in that order (the generator's state, including the
cached Box-Muller value of the < 16 path, carries over between calls); rng_refs.bin holds every
output, little-endian float32, in the same order.

Assumes torch (dev machine only). The AVX2 kernel is forced (ATEN_CPU_CAPABILITY=avx2; AVX-512
gives the same bits, checked when the file was made).
Usage: ATEN_CPU_CAPABILITY=avx2 python3 tests/pipeline/make_rng_refs.py tests/pipeline
"""
import os
import sys

import numpy as np
import torch

CASES = [
    (42, [16384]),                 # SD 1.x latents 1x4x64x64
    (0, [1024, 1024]),             # tiny latents, then the next draw (ancestral noise)
    (1234, [17, 33, 100, 1000]),   # sizes not a multiple of 16: the last 16 are redrawn
    (2**32 + 7, [512]),            # seeds use their low 32 bits
    (123456789, [1, 3, 5, 15]),    # the < 16 double path with its cached second value
    (7, [5, 16, 3, 31]),           # mixing both paths
    (2**63 - 1, [48]),
]


def main():
    out = sys.argv[1]
    assert torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")
    vals = []
    with open(os.path.join(out, "rng_refs.txt"), "w") as f:
        for seed, sizes in CASES:
            g = torch.Generator().manual_seed(seed)
            for n in sizes:
                vals.append(torch.randn(n, generator=g, dtype=torch.float32).numpy())
            f.write(f"{seed} " + " ".join(str(n) for n in sizes) + "\n")
    np.concatenate(vals).astype("<f4").tofile(os.path.join(out, "rng_refs.bin"))
    print(f"{sum(len(v) for v in vals)} values, torch {torch.__version__}, "
          f"{torch.backends.cpu.get_cpu_capability()}")


if __name__ == "__main__":
    main()
