/* vae_tiling.c — a fixed-shape spatial model over a larger input in overlapping, linearly blended
 * tiles (vae_tiling.h). */
#include "vae_tiling.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) (snprintf(err, errcap, __VA_ARGS__), -1)

int sdp_tile_plan(int size, int tile, int overlap, int *pos, int cap, char *err, size_t errcap)
{
    if (size <= 0) return ERR("tile plan: image extent %d: must be > 0", size);
    if (tile <= 0) return ERR("tile plan: tile %d: must be > 0", tile);
    if (tile > size)
        return ERR("tile plan: tile %d is larger than the image extent %d (decode it untiled, or use a "
                   "tile <= %d)", tile, size, size);
    if (overlap < 0) return ERR("tile plan: overlap %d: must be >= 0", overlap);
    if (overlap >= tile) return ERR("tile plan: overlap %d must be smaller than the tile %d", overlap, tile);
    if (cap < 1 || !pos) return ERR("tile plan: no room for the tile positions");
    const int stride = tile - overlap;
    int n = 1;
    pos[0] = 0;
    while (pos[n - 1] + tile < size) {
        if (n == cap) {
            int need = (size - tile + stride - 1) / stride + 1;
            return ERR("tile plan: %d tiles of %d with overlap %d over %d: more than %d (use a larger tile "
                       "or a smaller overlap)", need, tile, overlap, size, cap);
        }
        int next = pos[n - 1] + stride;
        if (next + tile > size) next = size - tile; /* the last tile moved back to end at the edge */
        pos[n++] = next;
    }
    return n;
}

void sdp_tile_weights(const int *pos, int n, int tile, int scale, int k, float *w)
{
    const long long T = (long long)tile * scale, P = (long long)pos[k] * scale;
    for (long long i = 0; i < T; i++) {
        const long long p = P + i;
        /* tile k's own ramp: inside the previous tile's span, (p - P) / (its overlap) */
        double r = 1.0;
        if (k > 0) {
            long long prev_end = (long long)pos[k - 1] * scale + T;
            if (p < prev_end) r = (double)(p - P) / (double)(prev_end - P);
        }
        /* times (1 - ramp) of every later tile that covers p (they were blended in after k) */
        for (int m = k + 1; m < n && r > 0.0; m++) {
            long long Pm = (long long)pos[m] * scale;
            if (Pm > p) break; /* positions ascend */
            long long prev_end = (long long)pos[m - 1] * scale + T; /* > p: tile m-1 >= k covers p */
            r *= 1.0 - (double)(p - Pm) / (double)(prev_end - Pm);
        }
        w[i] = (float)r;
    }
}


/* ---- plan ------------------------------------------------------------------------------------ */

static int is_float(int32_t dt) { return dt == O2R_F32 || dt == O2R_F16; }

/* The integer scale between a model input extent a and output extent b: *gi input and *go output
 * pixels per grid unit (one of them 1). Returns -1 when neither divides the other. */
static int grid_of(int64_t a, int64_t b, int *gi, int *go)
{
    if (a <= 0 || b <= 0) return -1;
    if (b >= a && b % a == 0) {
        *gi = 1;
        *go = (int)(b / a);
        return 0;
    }
    if (a > b && a % b == 0) {
        *gi = (int)(a / b);
        *go = 1;
        return 0;
    }
    return -1;
}

int sdp_vae_tiling_plan(const struct o2r_model_desc *d, int c_in, int h, int w, int overlap,
                        struct sdp_tiling *t, char *err, size_t errcap)
{
    memset(t, 0, sizeof *t);
    if (!d) return ERR("VAE tiling: no model");
    if (d->n_inputs != 1 || d->n_outputs < 1)
        return ERR("VAE tiling: the model has %u inputs and %u outputs: expected one image-like input and "
                   "output", (unsigned)d->n_inputs, (unsigned)d->n_outputs);
    const struct o2r_io *vi = &d->inputs[0], *vo = &d->outputs[0];
    if (vi->rank != 4 || vo->rank != 4 || !is_float(vi->dtype) || !is_float(vo->dtype) || vi->dims[0] < 1 ||
        vo->dims[0] != vi->dims[0] || vi->dims[1] < 1 || vo->dims[1] < 1)
        return ERR("VAE tiling: input %s (%s, rank %d) -> output %s (%s, rank %d): expected float [B,C,H,W] -> "
                   "[B,C',H',W']", vi->name, o2r_dtype_name(vi->dtype), (int)vi->rank, vo->name,
                   o2r_dtype_name(vo->dtype), (int)vo->rank);
    int gi_h, go_h, gi_w, go_w;
    if (grid_of(vi->dims[2], vo->dims[2], &gi_h, &go_h) || grid_of(vi->dims[3], vo->dims[3], &gi_w, &go_w) ||
        gi_h != gi_w || go_h != go_w)
        return ERR("VAE tiling: %s [%lld,%lld] -> %s [%lld,%lld]: not one integer scale for both axes",
                   vi->name, (long long)vi->dims[2], (long long)vi->dims[3], vo->name, (long long)vo->dims[2],
                   (long long)vo->dims[3]);
    if (vi->dims[1] > 1 << 20 || vo->dims[1] > 1 << 20 || vi->dims[2] > 1 << 20 || vi->dims[3] > 1 << 20 ||
        vo->dims[2] > 1 << 20 || vo->dims[3] > 1 << 20 || vi->dims[0] > 1 << 16)
        return ERR("VAE tiling: model dims too large");
    t->batch = (int)vi->dims[0];
    t->c_in = c_in;
    t->h = h;
    t->w = w;
    t->c_out = (int)vo->dims[1];
    t->tile_in_h = (int)vi->dims[2];
    t->tile_in_w = (int)vi->dims[3];
    t->tile_out_h = (int)vo->dims[2];
    t->tile_out_w = (int)vo->dims[3];
    t->g_in = gi_h;
    t->g_out = go_h;
    t->tile_h = t->tile_in_h / t->g_in;
    t->tile_w = t->tile_in_w / t->g_in;
    if (c_in != (int)vi->dims[1])
        return ERR("VAE tiling: the input has %d channels, the model's %s has %lld", c_in, vi->name,
                   (long long)vi->dims[1]);
    if (h <= 0 || w <= 0) return ERR("VAE tiling: input %dx%d: height and width must be > 0", h, w);
    if (h % t->g_in || w % t->g_in)
        return ERR("VAE tiling: input %dx%d is not a multiple of the model's scale %d", h, w, t->g_in);
    if ((int64_t)h / t->g_in * t->g_out > 1 << 20 || (int64_t)w / t->g_in * t->g_out > 1 << 20)
        return ERR("VAE tiling: input %dx%d too large", h, w);
    if (t->tile_in_h > h || t->tile_in_w > w)
        return ERR("VAE tiling: the model's tile %dx%d (%s) is larger than the input %dx%d: run it untiled or "
                   "compile a tile no larger than the input", t->tile_in_h, t->tile_in_w, vi->name, h, w);
    const int hg = h / t->g_in, wg = w / t->g_in;
    t->out_h = hg * t->g_out;
    t->out_w = wg * t->g_out;
    if (overlap < 0) overlap = (t->tile_h < t->tile_w ? t->tile_h : t->tile_w) / 4;
    t->overlap = overlap;
    char e2[512];
    if ((t->ny = sdp_tile_plan(hg, t->tile_h, overlap, t->pos_y, SDP_TILE_MAX, e2, sizeof e2)) < 0)
        return ERR("VAE tiling: height (latent units): %s", e2);
    if ((t->nx = sdp_tile_plan(wg, t->tile_w, overlap, t->pos_x, SDP_TILE_MAX, e2, sizeof e2)) < 0)
        return ERR("VAE tiling: width (latent units): %s", e2);
    t->runs = (t->ny * t->nx + t->batch - 1) / t->batch;
    const uint64_t n_in = (uint64_t)c_in * t->tile_in_h * t->tile_in_w,
                   n_out = (uint64_t)t->c_out * t->tile_out_h * t->tile_out_w;
    t->host_bytes = vi->nbytes + vo->nbytes + 4 * (n_in > n_out ? n_in : n_out) +
                    4 * ((uint64_t)t->ny * t->tile_out_h + (uint64_t)t->nx * t->tile_out_w);
    struct o2r_memory mem;
    o2r_desc_memory(d, &mem);
    t->device_bytes = mem.peak_bytes;
    return 0;
}

/* ---- run ------------------------------------------------------------------------------------- */

int sdp_vae_tiled_run(struct sdp_model *m, const float *in, int c_in, int h, int w, int overlap, float *out,
                      sdp_tile_progress_fn progress, void *user, char *err, size_t errcap)
{
    if (!m || !m->desc) return ERR("VAE tiling: no loaded model");
    if (sdp_model_ready(m, err, errcap)) return -1; /* an offloaded decoder: on the device now */
    if (!in || !out) return ERR("VAE tiling: %s: no input or output array", m->path);
    struct sdp_tiling *t = malloc(sizeof *t);
    if (!t) return ERR("VAE tiling: out of memory");
    char e2[768];
    if (sdp_vae_tiling_plan(m->desc, c_in, h, w, overlap, t, e2, sizeof e2)) {
        snprintf(err, errcap, "%s: %s", m->path, e2);
        free(t);
        return -1;
    }
    const struct o2r_model_desc *d = m->desc;
    const struct o2r_io *vi = &d->inputs[0], *vo = &d->outputs[0];
    void *outs[64] = {0};
    int rc = -1;
    const size_t tin = (size_t)c_in * t->tile_in_h * t->tile_in_w, tout = (size_t)t->c_out * t->tile_out_h * t->tile_out_w;
    const size_t isz = o2r_dtype_size(vi->dtype), osz = o2r_dtype_size(vo->dtype);
    void *ibuf = calloc(1, vi->nbytes ? vi->nbytes : 1);
    float *stage = malloc((tin > tout ? tin : tout) * sizeof *stage);
    float *wy = malloc((size_t)t->ny * t->tile_out_h * sizeof *wy), *wx = malloc((size_t)t->nx * t->tile_out_w * sizeof *wx);
    if (d->n_outputs > 64) {
        snprintf(err, errcap, "%s: VAE tiling: %u outputs (at most 64)", m->path, (unsigned)d->n_outputs);
        goto done;
    }
    int oom = !ibuf || !stage || !wy || !wx;
    for (uint32_t i = 0; i < d->n_outputs && !oom; i++)
        oom = !(outs[i] = calloc(1, d->outputs[i].nbytes ? d->outputs[i].nbytes : 1));
    if (oom) {
        snprintf(err, errcap, "%s: VAE tiling: out of memory", m->path);
        goto done;
    }
    for (int k = 0; k < t->ny; k++) sdp_tile_weights(t->pos_y, t->ny, t->tile_h, t->g_out, k, wy + (size_t)k * t->tile_out_h);
    for (int k = 0; k < t->nx; k++) sdp_tile_weights(t->pos_x, t->nx, t->tile_w, t->g_out, k, wx + (size_t)k * t->tile_out_w);
    const size_t out_plane = (size_t)t->out_h * t->out_w;
    memset(out, 0, (size_t)t->c_out * out_plane * sizeof *out);
    const int total = t->ny * t->nx;
    for (int t0 = 0, run = 0; t0 < total; t0 += t->batch, run++) {
        /* gather up to batch tiles (unused slots repeat the last tile) */
        for (int b = 0; b < t->batch; b++) {
            int k = t0 + b < total ? t0 + b : total - 1, ky = k / t->nx, kx = k % t->nx;
            int y0 = t->pos_y[ky] * t->g_in, x0 = t->pos_x[kx] * t->g_in;
            for (int c = 0; c < c_in; c++)
                for (int y = 0; y < t->tile_in_h; y++)
                    memcpy(stage + ((size_t)c * t->tile_in_h + y) * t->tile_in_w,
                           in + ((size_t)c * h + y0 + y) * w + x0, (size_t)t->tile_in_w * sizeof *stage);
            char *dst = (char *)ibuf + (size_t)b * tin * isz;
            sdp_put_floats(dst, vi->dtype, stage, tin);
        }
        const void *ins[1] = {ibuf};
        if (o2r_model_run(m->m, ins, outs) != O2R_OK) {
            snprintf(err, errcap, "%s: %s", m->path, o2r_ctx_last_error(m->ctx));
            goto done;
        }
        /* blend: out += wy[y] * wx[x] * tile */
        for (int b = 0; b < t->batch && t0 + b < total; b++) {
            int k = t0 + b, ky = k / t->nx, kx = k % t->nx;
            const char *src = (const char *)outs[0] + (size_t)b * tout * osz;
            sdp_get_floats(stage, vo->dtype, src, tout);
            const float *ry = wy + (size_t)ky * t->tile_out_h, *rx = wx + (size_t)kx * t->tile_out_w;
            const size_t Y0 = (size_t)t->pos_y[ky] * t->g_out, X0 = (size_t)t->pos_x[kx] * t->g_out;
            for (int c = 0; c < t->c_out; c++)
                for (int y = 0; y < t->tile_out_h; y++) {
                    const float a = ry[y];
                    if (a == 0.0f) continue;
                    float *o = out + c * out_plane + (Y0 + y) * t->out_w + X0;
                    const float *s = stage + ((size_t)c * t->tile_out_h + y) * t->tile_out_w;
                    for (int x = 0; x < t->tile_out_w; x++) o[x] += a * rx[x] * s[x];
                }
        }
        if (progress && progress(run + 1, t->runs, user)) {
            snprintf(err, errcap, "%s: VAE tiling cancelled by the progress callback after run %d of %d", m->path,
                     run + 1, t->runs);
            goto done;
        }
    }
    rc = 0;
done:
    for (uint32_t i = 0; i < d->n_outputs && i < 64; i++) free(outs[i]);
    free(ibuf);
    free(stage);
    free(wy);
    free(wx);
    free(t);
    return rc;
}
