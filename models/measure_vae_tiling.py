#!/usr/bin/env python3
"""measure_vae_tiling.py — how far tiled VAE decoding/encoding is from untiled on the tiny SD 1.5 VAE
(tests/pipeline/oneshot/tiny_sd15/vae, scale 2, GroupNorm with 8 groups): diffusers' own
AutoencoderKL.tiled_decode / tiled_encode (enable_tiling, tile_latent_min_size / tile_sample_min_size
set to the test's tile) against its untiled decode / encode, and onnx2cl's scheme
(pipeline/vae_tiling.c: fixed-size tiles, the last one shifted back to the edge, separable linear
ramps; re-implemented here in torch) against the same untiled result, on the same inputs.
Decoder: N(0,1) latents, images x/2 + 0.5 clamped to [0,1]; encoder: a smooth image plus noise in
[-1,1], mean || logvar. Prints a Markdown table (docs/vae_tiling.md). Needs torch and diffusers
(not in CI).
With --check-c DIR (tests/vae_tiling's work folder after a run: dec_in.f32 [4,24,40] latents,
dec_tiled.f32 [3,48,80], enc_in.f32 [3,48,80] image, enc_tiled.f32 [8,24,40]) it instead checks
that onnx2cl's tiled outputs equal this script's torch re-implementation of the scheme on the same
inputs (max abs, float32 device arithmetic vs torch CPU).
Usage: measure_vae_tiling.py [VAE_DIR] [--seeds N] [--check-c DIR]"""
import argparse
import os

import torch
from diffusers import AutoencoderKL

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plan(size, tile, overlap):
    """sdp_tile_plan: 0, tile-overlap, ...; the last moved back to end at the edge."""
    assert 0 < tile <= size and 0 <= overlap < tile
    pos = [0]
    while pos[-1] + tile < size:
        nxt = pos[-1] + tile - overlap
        pos.append(min(nxt, size - tile))
    return pos


def weights(pos, tile, scale, k):
    """sdp_tile_weights: tile k's weight at each of its tile*scale output pixels."""
    T, P = tile * scale, pos[k] * scale
    w = []
    for i in range(T):
        p = P + i
        r = 1.0
        if k > 0:
            pe = pos[k - 1] * scale + T
            if p < pe:
                r = (p - P) / (pe - P)
        for m in range(k + 1, len(pos)):
            Pm = pos[m] * scale
            if Pm > p:
                break
            pe = pos[m - 1] * scale + T
            r *= 1.0 - (p - Pm) / (pe - Pm)
        w.append(r)
    return torch.tensor(w, dtype=torch.float64)


def ours(fn, x, tile_in, g_in, g_out, overlap, c_out):
    """onnx2cl's tiled run of fn (a [1,C,t,t] -> [1,C',t',t'] module) over x [1,C,H,W]."""
    H, W = x.shape[2] // g_in, x.shape[3] // g_in
    t = tile_in // g_in
    py, px = plan(H, t, overlap), plan(W, t, overlap)
    out = torch.zeros(1, c_out, H * g_out, W * g_out, dtype=torch.float64)
    T = t * g_out
    for ky, y0 in enumerate(py):
        wy = weights(py, t, g_out, ky)
        for kx, x0 in enumerate(px):
            wx = weights(px, t, g_out, kx)
            tin = x[:, :, y0 * g_in:y0 * g_in + tile_in, x0 * g_in:x0 * g_in + tile_in]
            tout = fn(tin).double()
            out[:, :, y0 * g_out:y0 * g_out + T, x0 * g_out:x0 * g_out + T] += wy[:, None] * wx[None, :] * tout
    return out.float()


def unit(x):
    return (x / 2 + 0.5).clamp(0, 1)


def stats(a, b):
    d = (a - b).abs()
    return d.max().item(), d.mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vae", nargs="?", default=os.path.join(ROOT, "tests/pipeline/oneshot/tiny_sd15/vae"))
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--check-c", metavar="DIR")
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    vae = AutoencoderKL.from_pretrained(a.vae).float().eval()
    g = 2 ** (len(vae.config.block_out_channels) - 1)
    C = vae.config.latent_channels
    dec = lambda z: vae.decoder(vae.post_quant_conv(z))  # noqa: E731
    enc = lambda x: vae.quant_conv(vae.encoder(x))  # noqa: E731
    if a.check_c:
        import numpy as np

        def load(name, shape):
            return torch.from_numpy(np.fromfile(os.path.join(a.check_c, name), dtype=np.float32).reshape(shape))

        z = load("dec_in.f32", (1, C, 24, 40))
        got = load("dec_tiled.f32", (1, 3, 24 * g, 40 * g))
        want = ours(dec, z, 16, 1, g, 4, 3)
        print(f"decoder: onnx2cl tiled vs torch scheme: max abs {(got - want).abs().max().item():.3g} "
              f"(output range {want.abs().max().item():.3g})")
        x = load("enc_in.f32", (1, 3, 24 * g, 40 * g))
        got = load("enc_tiled.f32", (1, 2 * C, 24, 40))
        want = ours(enc, x, 16 * g, g, 1, 4, 2 * C)
        print(f"encoder: onnx2cl tiled vs torch scheme: max abs {(got - want).abs().max().item():.3g} "
              f"(output range {want.abs().max().item():.3g})")
        return
    rows = []
    # decoder: latent shapes, latent tile 16, overlaps (latent pixels; 4 = diffusers' 0.25)
    for (h, w), tile, ov in [((32, 32), 16, 4), ((24, 40), 16, 4), ((32, 32), 16, 8), ((64, 64), 16, 4)]:
        dm, dmean, om, omean = [], [], [], []
        for s in range(a.seeds):
            z = torch.randn(1, C, h, w, generator=torch.Generator().manual_seed(s))
            vae.disable_tiling()
            ref = unit(vae.decode(z).sample)
            vae.enable_tiling()
            vae.tile_latent_min_size, vae.tile_sample_min_size = tile, tile * g
            vae.tile_overlap_factor = ov / tile
            dt = unit(vae.decode(z).sample)
            vae.disable_tiling()
            ot = unit(ours(dec, z, tile, 1, g, ov, 3))
            m1, a1 = stats(dt, ref)
            m2, a2 = stats(ot, ref)
            dm.append(m1), dmean.append(a1), om.append(m2), omean.append(a2)
        rows.append((f"decode {C}x{h}x{w} latents, tile {tile}, overlap {ov}", max(dm), sum(dmean) / len(dmean),
                     max(om), sum(omean) / len(omean)))
    # encoder: image sizes (pixels), tile in pixels, overlap in latents
    for (h, w), tile, ov in [((64, 64), 32, 4), ((48, 80), 32, 4)]:
        dm, dmean, om, omean = [], [], [], []
        for s in range(a.seeds):
            gen = torch.Generator().manual_seed(100 + s)
            yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                                    indexing="ij")
            c = torch.arange(3, dtype=torch.float32)[:, None, None]
            img = 0.6 * torch.sin(0.11 * (xx + 7 * c)) * torch.cos(0.07 * (yy - 3 * c))
            img = (img + 0.2 * torch.randn(3, h, w, generator=gen)).clamp(-1, 1)[None]
            vae.disable_tiling()
            ref = enc(img)
            vae.enable_tiling()
            vae.tile_sample_min_size, vae.tile_latent_min_size = tile, tile // g
            vae.tile_overlap_factor = ov / (tile // g)
            dt = vae.encode(img).latent_dist.parameters
            vae.disable_tiling()
            ot = ours(enc, img, tile, g, 1, ov, 2 * C)
            m1, a1 = stats(dt, ref)
            m2, a2 = stats(ot, ref)
            dm.append(m1), dmean.append(a1), om.append(m2), omean.append(a2)
        rows.append((f"encode 3x{h}x{w} image (mean, logvar), tile {tile} px, overlap {ov} latents", max(dm),
                     sum(dmean) / len(dmean), max(om), sum(omean) / len(omean)))
    print(f"tiny VAE {a.vae}, {a.seeds} seeds; max over seeds of max abs, mean over seeds of mean abs\n")
    print("| case | diffusers tiled: max abs | mean abs | onnx2cl scheme: max abs | mean abs |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.4f} | {r[2]:.4f} | {r[3]:.4f} | {r[4]:.4f} |")


if __name__ == "__main__":
    main()
