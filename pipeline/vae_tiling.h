/* vae_tiling.h — large images on small devices (issue 21 item 6, `--vae-tile N`): runs a spatial
 * model compiled for one fixed tile shape (a VAE decoder latents -> pixels, or a VAE encoder
 * pixels -> mean || logvar) over a larger input in overlapping tiles and blends the tile outputs
 * linearly across the overlaps, as diffusers' AutoencoderKL.tiled_decode / tiled_encode (blend_v,
 * blend_h; tile_overlap_factor 0.25) do.
 *
 * Units. The "grid" is the coarse side of the model: latent pixels for both the decoder and the
 * encoder. A model mapping [B, C_in, th, tw] -> [B, C_out, oh, ow] has an integer scale: either
 * oh = th * s (decoder, s = 8 for SD, 2 for the tiny test VAE: one grid unit is 1 input and s
 * output pixels) or th = oh * s (encoder: s input pixels and 1 output pixel); the same s for the
 * width. Tile positions and the overlap are in grid units, so an encoder's tiles start on
 * multiples of s image pixels.
 *
 * The tile plan (per axis, sdp_tile_plan): tiles of the one compiled size T (grid units) at
 * 0, T - O, 2 (T - O), ...; the last tile moved back to end exactly at the edge (size - T), so
 * every tile is whole and one compiled program serves them all. Overlap O default (O < 0):
 * T / 4 of the smaller tile side, as diffusers' tile_overlap_factor 0.25.
 *
 * Blending (sdp_tile_weights): along each axis, tiles are laid in order; where tile m starts
 * inside the previous tile's span (overlap of L output pixels, starting at tile m's first pixel),
 * the result there is (1 - y/L) * previous + (y/L) * tile m for y = 0 .. L-1 (diffusers' blend_v /
 * blend_h: the new tile has weight 0 on the first overlap row), and tile m alone after the
 * overlap. Each tile's weight at an output pixel is the product of its row weight and its column
 * weight; along an axis the weights of the covering tiles sum to 1 (exactly in real arithmetic,
 * to float rounding here), so they do in 2-D.
 *
 * Where this differs from diffusers (0.42):
 *   - fixed tile size with the shifted last tile, instead of diffusers' partial (smaller) tiles
 *     at the right and bottom edges: one compiled program; the last overlap is then usually
 *     larger than O (up to T - 1), the ramp spans the whole actual overlap;
 *   - diffusers blends in place (first vertically with the tile above, then horizontally with
 *     the already blended tile on the left), which gives the corner squares where four tiles
 *     overlap weights that are not the product of the 1-D ramps (the top-left tile gets
 *     (1-wy)(1-wx)(1+wx) there; checked with one-hot fake decoders); here the weights are the
 *     separable product everywhere. Edges (two tiles) are identical.
 *   - diffusers crops each tile to row_limit = T_out - blend_extent and concatenates; with its
 *     stride T - O this is the same as blending over the whole overlap, as here.
 *   - GroupNorm statistics are per tile, as in diffusers (each tile is a separate model run), so
 *     a tiled image is not the untiled one: measured on the tiny SD 1.5 VAE of tests/vae_tiling
 *     (docs/vae_tiling.md), tiled vs untiled on [0,1] images: SDP_VAE_TILE_BOUND_MAX (max abs)
 *     and SDP_VAE_TILE_BOUND_MEAN (mean abs) below are the test's bounds, with margin; of the
 *     same order as diffusers' own tiled vs untiled (its mean difference a little larger: its
 *     thin partial edge tiles). A random-weight tiny VAE with 16-latent tiles is a harsh case;
 *     these are not bounds for a trained VAE.
 *
 * Memory: the device needs the tile-size program's weights + arena (o2r_desc_memory of the model:
 * independent of the image size); the host needs the caller's input and output arrays plus
 * sdp_tiling.host_bytes of working buffers.
 */
#ifndef PIPELINE_VAE_TILING_H
#define PIPELINE_VAE_TILING_H

#include "onnx2cl_rt.h"
#include "sd_pipeline.h"

#include <stddef.h>
#include <stdint.h>

/* Most tiles along one axis (a plan with more is refused: use a larger tile or less overlap). */
#define SDP_TILE_MAX 1024

/* Bounds of tests/vae_tiling on the tiny SD 1.5 VAE (random weights, scale 2): tiled vs untiled
 * decode of 4x24x40 N(0,1) latents in 16x16-latent tiles, default overlap 4, on [0,1] images
 * (measured: max abs 0.27, mean abs 0.033; diffusers' own tiled_decode vs its untiled decode on
 * such inputs, 8 seeds: max abs up to 0.50, mean abs 0.043: the same order — docs/vae_tiling.md) */
#define SDP_VAE_TILE_BOUND_MAX 0.5
#define SDP_VAE_TILE_BOUND_MEAN 0.05
/* ... and of the encoder's mean || logvar (3x48x80 image in [-1,1], 32x32-pixel tiles, overlap 4
 * latents; measured: max abs 1.78, mean abs 0.16; diffusers' tiled_encode, 8 seeds: max abs 1.85,
 * mean abs 0.18). */
#define SDP_VAE_TILE_ENC_BOUND_MAX 2.5
#define SDP_VAE_TILE_ENC_BOUND_MEAN 0.25

/* Plans the tiles along one axis. size: the input's extent, tile: the tile's, overlap: wanted
 * overlap between consecutive tiles, all in grid units (latent pixels). Writes the start positions
 * (ascending, pos[0] = 0, pos[n-1] = size - tile, consecutive tiles overlap by >= overlap except
 * that the last may overlap by more) into pos[0 .. n-1]. Returns n >= 1 (1 when tile == size), or
 * -1 with a message when size <= 0, tile <= 0, tile > size, overlap < 0, overlap >= tile, or more
 * than cap tiles would be needed. Pure. */
int sdp_tile_plan(int size, int tile, int overlap, int *pos, int cap, char *err, size_t errcap);

/* Blend weights of tile k of a plan (pos[0 .. n-1] from sdp_tile_plan, tile size `tile` in grid
 * units) at its tile * scale output pixels (scale: output pixels per grid unit), into
 * w[0 .. tile*scale - 1], each in [0, 1]. For every output pixel p of the axis,
 * sum over the tiles k covering p of w_k[p - pos[k]*scale] = 1 (to float rounding). Pure. */
void sdp_tile_weights(const int *pos, int n, int tile, int scale, int k, float *w);

/* A checked tiling of one input through one model (sdp_vae_tiling_plan). */
struct sdp_tiling {
    int c_in, h, w;            /* input [c_in, h, w] in the model's input pixels */
    int c_out, out_h, out_w;   /* output [c_out, out_h, out_w] in the model's output pixels */
    int batch;                 /* the model's batch: tiles per model run */
    int tile_in_h, tile_in_w;  /* the model's input spatial dims (one tile) */
    int tile_out_h, tile_out_w;/* the model's output spatial dims */
    int g_in, g_out;           /* input and output pixels per grid unit (one of them is 1) */
    int tile_h, tile_w;        /* tile in grid units */
    int overlap;               /* overlap used, grid units */
    int ny, nx;                /* tiles along the height and the width */
    int pos_y[SDP_TILE_MAX], pos_x[SDP_TILE_MAX]; /* tile starts, grid units */
    int runs;                  /* model runs: ceil(ny * nx / batch) */
    uint64_t host_bytes;       /* host working memory of sdp_vae_tiled_run (not counting the
                                  caller's input and output arrays: 4 * c_in*h*w and
                                  4 * c_out*out_h*out_w bytes) */
    uint64_t device_bytes;     /* device memory of the tile program (o2r_desc_memory peak_bytes):
                                  independent of the image size */
};

/* Checks that model d (one float32/float16 input [B, C_in, th, tw], first output [B, C_out, oh,
 * ow] with an integer scale as above) can tile an input [c_in, h, w] (model input pixels; for an
 * encoder h and w multiples of the scale) with overlap `overlap` grid units (< 0: the default,
 * min(tile_h, tile_w) / 4), and fills *t. Refused (-1, with a message naming what is wrong): a
 * model of another form, c_in != C_in, h or w <= 0 or not on the grid, a tile larger than the
 * input along either axis, overlap >= the tile, too many tiles. A tile equal to the input along
 * both axes is allowed (one tile: the model's output exactly). Pure (reads the descriptor only). */
int sdp_vae_tiling_plan(const struct o2r_model_desc *d, int c_in, int h, int w, int overlap,
                        struct sdp_tiling *t, char *err, size_t errcap);

/* Progress after each model run: done of total runs; a nonzero return cancels the tiled run
 * (it then returns -1 with "cancelled ..."). */
typedef int (*sdp_tile_progress_fn)(int done, int total, void *user);

/* Runs model m (loaded with sdp_model_load, compiled at the tile's shape) over in[c_in * h * w]
 * (float32, [c_in, h, w] row-major, in the model's input units: a decoder's scaled latents, an
 * encoder's image in [-1, 1]) in the tiles of sdp_vae_tiling_plan and writes the blended result
 * into out[c_out * out_h * out_w] (float32, [c_out, out_h, out_w]; a decoder's output in [-1, 1]
 * before the caller's x/2 + 0.5, an encoder's mean || logvar). overlap: grid units, < 0 default.
 * progress may be NULL. Returns 0, or -1 with a message (the plan's refusals, out of memory, the
 * runtime's error naming the model file, cancelled); out is then unspecified. Never exits. */
int sdp_vae_tiled_run(struct sdp_model *m, const float *in, int c_in, int h, int w, int overlap, float *out,
                      sdp_tile_progress_fn progress, void *user, char *err, size_t errcap);

#endif
