/* test_vae_tiling.c — pipeline/vae_tiling.c: the tile plan and blend weights (pure), the plan's
 * refusals, and the tiny SD 1.5 VAE (tests/pipeline/oneshot/tiny_sd15.safetensors, scale 2)
 * decoded and encoded tiled vs untiled.
 * Usage: test_vae_tiling DIR  (DIR: run.sh's dec_full.o2d [1,4,24,40], dec_tile.o2d [1,4,16,16],
 *        enc_full.o2d [1,3,48,80], enc_tile.o2d [1,3,32,32], up_f16.o2d [2,4,8,8], down_f32.o2d
 *        [1,3,8,8] with their weights)
 * Prints the measured differences; writes DIR/{dec,enc}_{in,tiled}.f32 (the inputs and the tiled
 * outputs, for models/measure_vae_tiling.py --check-c); exits 1 on any failure. */
#include "vae_tiling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c, ...)                                                                                            \
    do {                                                                                                         \
        if (!(c)) {                                                                                              \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                 \
            fprintf(stderr, __VA_ARGS__);                                                                        \
            fputc('\n', stderr);                                                                                 \
            fails++;                                                                                             \
        }                                                                                                        \
    } while (0)

/* ---- pure: plan and weights ------------------------------------------------------------------- */

static void check_plan(int size, int tile, int overlap, int scale)
{
    int pos[SDP_TILE_MAX];
    char err[512];
    int n = sdp_tile_plan(size, tile, overlap, pos, SDP_TILE_MAX, err, sizeof err);
    CHECK(n >= 1, "plan(%d,%d,%d): %s", size, tile, overlap, err);
    if (n < 1) return;
    CHECK(pos[0] == 0 && pos[n - 1] == size - tile, "plan(%d,%d,%d): ends %d..%d", size, tile, overlap, pos[0],
          pos[n - 1]);
    for (int k = 1; k < n; k++) {
        CHECK(pos[k] > pos[k - 1], "plan(%d,%d,%d): positions not ascending at %d", size, tile, overlap, k);
        /* no gap, at least the wanted overlap, the stride exactly tile - overlap but for the last */
        CHECK(pos[k] <= pos[k - 1] + tile - overlap, "plan(%d,%d,%d): overlap %d < %d at %d", size, tile, overlap,
              pos[k - 1] + tile - pos[k], overlap, k);
        if (k < n - 1) CHECK(pos[k] == k * (tile - overlap), "plan(%d,%d,%d): stride at %d", size, tile, overlap, k);
    }
    /* every output pixel covered; the weights of the covering tiles in [0,1], summing to 1 */
    const int T = tile * scale, S = size * scale;
    double *sum = calloc((size_t)S, sizeof *sum);
    int *cover = calloc((size_t)S, sizeof *cover);
    float *w = malloc((size_t)T * sizeof *w);
    for (int k = 0; k < n; k++) {
        sdp_tile_weights(pos, n, tile, scale, k, w);
        for (int i = 0; i < T; i++) {
            CHECK(w[i] >= 0.0f && w[i] <= 1.0f, "weights(%d,%d,%d,s%d): tile %d [%d] = %g", size, tile, overlap,
                  scale, k, i, w[i]);
            sum[pos[k] * scale + i] += w[i];
            cover[pos[k] * scale + i]++;
        }
        /* diffusers' blend_v/blend_h: the new tile's weight y / L over the overlap with the previous */
        if (k > 0 && (k + 1 == n || pos[k + 1] >= pos[k - 1] + tile)) {
            int L = (pos[k - 1] + tile - pos[k]) * scale;
            for (int y = 0; y < L; y++)
                CHECK(fabsf(w[y] - (float)y / (float)L) < 1e-6f, "weights(%d,%d,%d,s%d): tile %d ramp [%d] = %g, want %g",
                      size, tile, overlap, scale, k, y, w[y], (double)y / L);
        }
    }
    for (int p = 0; p < S; p++) {
        CHECK(cover[p] >= 1, "plan(%d,%d,%d): output pixel %d not covered", size, tile, overlap, p);
        CHECK(fabs(sum[p] - 1.0) < 1e-6, "weights(%d,%d,%d,s%d): sum at %d = %.9g", size, tile, overlap, scale, p, sum[p]);
    }
    free(sum);
    free(cover);
    free(w);
}

static void check_refused(int size, int tile, int overlap, int cap, const char *want)
{
    int pos[8];
    char err[512] = "";
    int n = sdp_tile_plan(size, tile, overlap, pos, cap, err, sizeof err);
    CHECK(n == -1 && strstr(err, want), "plan(%d,%d,%d,cap %d) = %d '%s', want -1 '%s'", size, tile, overlap, cap, n,
          err, want);
}

static void pure_tests(void)
{
    static const int cases[][3] = {
        {32, 16, 4},  {32, 16, 0}, {32, 16, 8},  {32, 16, 15}, {29, 16, 4},  {28, 16, 4},   {40, 16, 4},
        {16, 16, 4},  {17, 16, 4}, {100, 16, 4}, {100, 7, 3},  {128, 64, 16}, {96, 64, 16}, {1, 1, 0},
        {5, 2, 1},    {33, 32, 8}, {1000, 64, 16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int s = 1; s <= 8; s *= 2) check_plan(cases[i][0], cases[i][1], cases[i][2], s);
    /* the shifted last tile: 29 / 16 / 4 -> 0, 12, 13 (three tiles cover [13, 16)) */
    int pos[SDP_TILE_MAX];
    char err[256];
    int n = sdp_tile_plan(29, 16, 4, pos, SDP_TILE_MAX, err, sizeof err);
    CHECK(n == 3 && pos[1] == 12 && pos[2] == 13, "plan(29,16,4) = %d tiles", n);
    n = sdp_tile_plan(16, 16, 4, pos, SDP_TILE_MAX, err, sizeof err);
    CHECK(n == 1 && pos[0] == 0, "plan(16,16,4) = %d tiles, want 1", n);
    float w[16];
    sdp_tile_weights(pos, 1, 16, 1, 0, w);
    for (int i = 0; i < 16; i++) CHECK(w[i] == 1.0f, "one tile: weight %g", w[i]);
    check_refused(8, 16, 4, SDP_TILE_MAX, "larger than the image");
    check_refused(32, 16, 16, SDP_TILE_MAX, "smaller than the tile");
    check_refused(32, 16, 20, SDP_TILE_MAX, "smaller than the tile");
    check_refused(32, 16, -1, SDP_TILE_MAX, "must be >= 0");
    check_refused(0, 16, 4, SDP_TILE_MAX, "must be > 0");
    check_refused(32, 0, 0, SDP_TILE_MAX, "must be > 0");
    check_refused(1000, 16, 4, 8, "more than 8");
}

/* ---- models ------------------------------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double unif(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((rng >> 11) + 0.5) / 9007199254740992.0;
}
static float gauss(void) { return (float)(sqrt(-2.0 * log(unif())) * cos(6.283185307179586 * unif())); }

static int load(struct o2r_ctx *ctx, const char *dir, const char *name, struct sdp_model *m)
{
    char path[1024], err[1024];
    snprintf(path, sizeof path, "%s/%s.o2d", dir, name);
    memset(m, 0, sizeof *m);
    if (sdp_model_load(ctx, path, NULL, m, err, sizeof err)) {
        fprintf(stderr, "FAIL: %s\n", err);
        fails++;
        return -1;
    }
    return 0;
}

/* untiled: one run of m on x ([C,H,W] = its input, nx floats), its first output into y (ny floats;
 * float32 models) */
static int run_full(struct sdp_model *m, const float *x, size_t nx, float *y, size_t ny)
{
    const void *in[1] = {x};
    void *out[1] = {y};
    if (m->desc->inputs[0].nbytes != 4 * nx || m->desc->outputs[0].nbytes != 4 * ny) {
        fprintf(stderr, "FAIL: %s: input/output of %llu/%llu bytes, the test has %zu/%zu floats\n", m->path,
                (unsigned long long)m->desc->inputs[0].nbytes, (unsigned long long)m->desc->outputs[0].nbytes, nx, ny);
        fails++;
        return -1;
    }
    if (m->desc->n_outputs != 1 || m->desc->inputs[0].dtype != O2R_F32 || m->desc->outputs[0].dtype != O2R_F32 ||
        o2r_model_run(m->m, in, out) != O2R_OK) {
        fprintf(stderr, "FAIL: %s: %s\n", m->path, o2r_ctx_last_error(m->ctx));
        fails++;
        return -1;
    }
    return 0;
}

static void diff(const float *a, const float *b, size_t n, double *mx, double *mean)
{
    double s = 0;
    *mx = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (d > *mx || d != d) *mx = d != d ? INFINITY : d;
        s += d;
    }
    *mean = s / (double)n;
}

static void to_unit(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i] / 2.0f + 0.5f;
        x[i] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
}

static int cancel_at_2(int done, int total, void *user)
{
    (void)total;
    *(int *)user = done;
    return done >= 2;
}

/* Writes n floats to DIR/NAME (raw float32, for models/measure_vae_tiling.py --check-c). */
static void dump(const char *dir, const char *name, const float *x, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(x, sizeof *x, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

/* The tiled result computed independently of sdp_vae_tiled_run's gather/scatter: each tile of the
 * plan cut out here, run alone on the tile model, weighted by sdp_tile_weights (checked above)
 * and summed in double into want[c_out * out_h * out_w]. */
static int per_tile(struct sdp_model *tile, const struct sdp_tiling *t, const float *in, double *want)
{
    const size_t tin = (size_t)t->c_in * t->tile_in_h * t->tile_in_w, tout = (size_t)t->c_out * t->tile_out_h * t->tile_out_w;
    float *x = malloc(tin * sizeof *x), *y = malloc(tout * sizeof *y), *wy = malloc((size_t)t->tile_out_h * sizeof *wy),
          *wx = malloc((size_t)t->tile_out_w * sizeof *wx);
    int rc = 0;
    memset(want, 0, (size_t)t->c_out * t->out_h * t->out_w * sizeof *want);
    for (int ky = 0; ky < t->ny && !rc; ky++)
        for (int kx = 0; kx < t->nx && !rc; kx++) {
            for (int c = 0; c < t->c_in; c++)
                for (int i = 0; i < t->tile_in_h; i++)
                    for (int j = 0; j < t->tile_in_w; j++)
                        x[((size_t)c * t->tile_in_h + i) * t->tile_in_w + j] =
                            in[((size_t)c * t->h + t->pos_y[ky] * t->g_in + i) * t->w + t->pos_x[kx] * t->g_in + j];
            if ((rc = run_full(tile, x, tin, y, tout))) break;
            sdp_tile_weights(t->pos_y, t->ny, t->tile_h, t->g_out, ky, wy);
            sdp_tile_weights(t->pos_x, t->nx, t->tile_w, t->g_out, kx, wx);
            for (int c = 0; c < t->c_out; c++)
                for (int i = 0; i < t->tile_out_h; i++)
                    for (int j = 0; j < t->tile_out_w; j++)
                        want[((size_t)c * t->out_h + t->pos_y[ky] * t->g_out + i) * t->out_w + t->pos_x[kx] * t->g_out + j] +=
                            (double)wy[i] * wx[j] * y[((size_t)c * t->tile_out_h + i) * t->tile_out_w + j];
        }
    free(x);
    free(y);
    free(wy);
    free(wx);
    return rc;
}

/* One model pair on one input [c, h, w]: (c) the full program as its own single tile gives its
 * untiled output bit for bit; the tile program tiled == per_tile's sum (1e-5); tiled vs untiled
 * measured (decoder: on [0,1] images) for overlaps default / 0 / 8 and bounded at the default. */
static void tiled_case(const char *what, const char *dir, struct sdp_model *full, struct sdp_model *tile, const float *in,
                       int c, int h, int w, int decoder, double bound_max, double bound_mean)
{
    char err[1024];
    struct sdp_tiling *t = malloc(sizeof *t);
    int rc = sdp_vae_tiling_plan(tile->desc, c, h, w, -1, t, err, sizeof err);
    CHECK(rc == 0, "%s: plan: %s", what, err);
    if (rc) {
        free(t);
        return;
    }
    struct o2r_memory mm;
    o2r_desc_memory(full->desc, &mm);
    printf("%s: input %dx%dx%d, tile %dx%d (%dx%d latents), %dx%d tiles at y", what, c, h, w, t->tile_in_h, t->tile_in_w,
           t->tile_h, t->tile_w, t->ny, t->nx);
    for (int k = 0; k < t->ny; k++) printf(" %d", t->pos_y[k]);
    printf(", x");
    for (int k = 0; k < t->nx; k++) printf(" %d", t->pos_x[k]);
    printf(" (latents); host %llu bytes, device %llu bytes (untiled program: %llu)\n", (unsigned long long)t->host_bytes,
           (unsigned long long)t->device_bytes, (unsigned long long)mm.peak_bytes);
    const size_t no = (size_t)t->c_out * t->out_h * t->out_w;
    float *ref = malloc(no * sizeof *ref), *got = malloc(no * sizeof *got);
    double *want = malloc(no * sizeof *want);
    char name[256];
    if (run_full(full, in, (size_t)c * h * w, ref, no)) goto done;
    rc = sdp_vae_tiled_run(full, in, c, h, w, -1, got, NULL, NULL, err, sizeof err);
    CHECK(rc == 0, "%s, tile = image: %s", what, err);
    if (rc == 0) CHECK(memcmp(got, ref, no * sizeof *got) == 0, "%s, tile = image: differs from the untiled run", what);
    rc = sdp_vae_tiled_run(tile, in, c, h, w, -1, got, NULL, NULL, err, sizeof err);
    CHECK(rc == 0, "%s tiled: %s", what, err);
    if (rc) goto done;
    snprintf(name, sizeof name, "%s_in.f32", decoder ? "dec" : "enc");
    dump(dir, name, in, (size_t)c * h * w);
    snprintf(name, sizeof name, "%s_tiled.f32", decoder ? "dec" : "enc");
    dump(dir, name, got, no);
    if (per_tile(tile, t, in, want) == 0) {
        double mx = 0;
        for (size_t i = 0; i < no; i++) mx = fmax(mx, fabs(got[i] - want[i]));
        printf("%s: tiled run vs the tiles run one by one and summed here: max abs %.3g\n", what, mx);
        CHECK(mx <= 1e-5, "%s: tiled run differs from the per-tile sum by %g", what, mx);
    }
    if (decoder) to_unit(ref, no);
    static const int ovs[] = {-1, 0, 8};
    for (size_t o = 0; o < sizeof ovs / sizeof ovs[0]; o++) {
        rc = sdp_vae_tiled_run(tile, in, c, h, w, ovs[o], got, NULL, NULL, err, sizeof err);
        CHECK(rc == 0, "%s tiled, overlap %d: %s", what, ovs[o], err);
        if (rc) continue;
        if (decoder) to_unit(got, no);
        double mx, mean;
        diff(got, ref, no, &mx, &mean);
        printf("%s: overlap %d latents: tiled vs untiled%s: max abs %.6f, mean abs %.6f\n", what,
               ovs[o] < 0 ? t->overlap : ovs[o], decoder ? " on [0,1]" : " (mean || logvar)", mx, mean);
        if (ovs[o] < 0)
            CHECK(mx <= bound_max && mean <= bound_mean, "%s tiled: max abs %g (bound %g), mean abs %g (bound %g)", what,
                  mx, bound_max, mean, bound_mean);
    }
    int calls = 0;
    rc = sdp_vae_tiled_run(tile, in, c, h, w, -1, got, cancel_at_2, &calls, err, sizeof err);
    CHECK(rc == -1 && calls == 2 && strstr(err, "cancelled"), "%s cancel: rc %d after %d runs: %s", what, rc, calls, err);
done:
    free(t);
    free(ref);
    free(got);
    free(want);
}

static void decoder_tests(const char *dir, struct sdp_model *full, struct sdp_model *tile)
{
    const int C = 4, H = 24, W = 40;
    const size_t nl = (size_t)C * H * W;
    float *lat = malloc(nl * sizeof *lat);
    for (size_t i = 0; i < nl; i++) lat[i] = gauss();
    tiled_case("decoder", dir, full, tile, lat, C, H, W, 1, SDP_VAE_TILE_BOUND_MAX, SDP_VAE_TILE_BOUND_MEAN);
    free(lat);
}

static void encoder_tests(const char *dir, struct sdp_model *full, struct sdp_model *tile)
{
    const int H = 48, W = 80;
    const size_t ni = (size_t)3 * H * W;
    float *img = malloc(ni * sizeof *img);
    /* a smooth image plus noise in [-1, 1] (as models/measure_vae_tiling.py's) */
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float v = 0.6f * sinf(0.11f * (float)(x + 7 * c)) * cosf(0.07f * (float)(y - 3 * c)) + 0.2f * gauss();
                img[((size_t)c * H + y) * W + x] = v < -1.0f ? -1.0f : v > 1.0f ? 1.0f : v;
            }
    tiled_case("encoder", dir, full, tile, img, 3, H, W, 0, SDP_VAE_TILE_ENC_BOUND_MAX, SDP_VAE_TILE_ENC_BOUND_MEAN);
    /* an encoder input off the grid is refused */
    char err[1024];
    int rc = sdp_vae_tiled_run(tile, img, 3, 47, 80, -1, img, NULL, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "not a multiple of the model's scale 2"), "encoder 47x80: rc %d '%s'", rc, err);
    free(img);
}

/* The pointwise models of make_pointwise.py (up_f16: float16 I/O, batch 2; down_f32: scale 1/2):
 * tiled == the host-computed untiled result up to rounding (float16: 4e-3, float32: 1e-5). */
static float pw_w(int o, int c) { return 0.1f * (float)(o + 1) - 0.05f * (float)c; }

static void pointwise_tests(struct sdp_model *up, struct sdp_model *down)
{
    char err[1024];
    {
        const int C = 4, H = 20, W = 28, CO = 3;
        size_t ni = (size_t)C * H * W, no = (size_t)CO * 2 * H * 2 * W;
        float *x = malloc(ni * sizeof *x), *y = malloc(no * sizeof *y);
        for (size_t i = 0; i < ni; i++) x[i] = (float)(2.0 * unif() - 1.0);
        struct sdp_tiling *t = malloc(sizeof *t);
        int rc = sdp_vae_tiling_plan(up->desc, C, H, W, -1, t, err, sizeof err);
        CHECK(up->desc->inputs[0].dtype == O2R_F16 && up->desc->outputs[0].dtype == O2R_F16,
              "up_f16: float16 input and output expected");
        CHECK(rc == 0 && t->batch == 2 && t->ny == 3 && t->nx == 5 && t->runs == 8 && t->g_in == 1 && t->g_out == 2,
              "up_f16 plan: rc %d batch %d %dx%d tiles, %d runs: %s", rc, t->batch, t->ny, t->nx, t->runs, err);
        rc = sdp_vae_tiled_run(up, x, C, H, W, -1, y, NULL, NULL, err, sizeof err);
        CHECK(rc == 0, "up_f16 tiled: %s", err);
        if (rc == 0) {
            double mx = 0;
            for (int o = 0; o < CO; o++)
                for (int i = 0; i < 2 * H; i++)
                    for (int j = 0; j < 2 * W; j++) {
                        double r = 0.01 * o;
                        for (int c = 0; c < C; c++) r += (double)pw_w(o, c) * x[((size_t)c * H + i / 2) * W + j / 2];
                        mx = fmax(mx, fabs(y[((size_t)o * 2 * H + i) * 2 * W + j] - r));
                    }
            printf("pointwise float16 batch-2 model (Conv 1x1 + Resize x2), 4x20x28 in 8x8 tiles (%d runs): tiled vs "
                   "untiled (host) max abs %.3g\n", t->runs, mx);
            CHECK(mx <= 4e-3, "up_f16 tiled vs host: max abs %g", mx);
        }
        free(t);
        free(x);
        free(y);
    }
    {
        const int C = 3, H = 24, W = 40, CO = 8;
        size_t ni = (size_t)C * H * W, no = (size_t)CO * (H / 2) * (W / 2);
        float *x = malloc(ni * sizeof *x), *y = malloc(no * sizeof *y);
        for (size_t i = 0; i < ni; i++) x[i] = (float)(2.0 * unif() - 1.0);
        int rc = sdp_vae_tiled_run(down, x, C, H, W, -1, y, NULL, NULL, err, sizeof err);
        CHECK(rc == 0, "down_f32 tiled: %s", err);
        if (rc == 0) {
            double mx = 0;
            for (int o = 0; o < CO; o++)
                for (int i = 0; i < H / 2; i++)
                    for (int j = 0; j < W / 2; j++) {
                        double r = 0.01 * o;
                        for (int c = 0; c < C; c++) {
                            const float *p = x + ((size_t)c * H + 2 * i) * W + 2 * j;
                            r += (double)pw_w(o, c) * ((double)p[0] + p[1] + p[W] + p[W + 1]) / 4.0;
                        }
                        mx = fmax(mx, fabs(y[((size_t)o * (H / 2) + i) * (W / 2) + j] - r));
                    }
            printf("pointwise float32 model (AveragePool 2x2 + Conv 1x1), 3x24x40 in 8x8 tiles: tiled vs untiled "
                   "(host) max abs %.3g\n", mx);
            CHECK(mx <= 1e-5, "down_f32 tiled vs host: max abs %g", mx);
        }
        free(x);
        free(y);
    }
}

static void refusal_tests(struct sdp_model *tile)
{
    static const struct {
        int c, h, w, ov;
        const char *want;
    } bad[] = {
        {4, 8, 32, -1, "is larger than the input 8x32"},
        {4, 32, 12, -1, "is larger than the input 32x12"},
        {4, 32, 32, 16, "overlap 16 must be smaller than the tile 16"},
        {4, 32, 32, 40, "overlap 40 must be smaller than the tile 16"},
        {4, 0, 32, -1, "must be > 0"},
        {4, 32, 0, -1, "must be > 0"},
        {3, 32, 32, -1, "the input has 3 channels, the model's latent_sample has 4"},
        {0, 32, 32, -1, "the input has 0 channels"},
        {4, 4000, 32, 15, "more than 1024"},
    };
    float dummy[4];
    char err[1024];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = sdp_vae_tiled_run(tile, dummy, bad[i].c, bad[i].h, bad[i].w, bad[i].ov, dummy, NULL, NULL, err,
                                   sizeof err);
        CHECK(rc == -1 && strstr(err, bad[i].want) && strstr(err, "dec_tile.o2d"),
              "refusal %zu: rc %d '%s', want '%s' naming the model", i, rc, err, bad[i].want);
    }
    int rc = sdp_vae_tiled_run(tile, NULL, 4, 32, 32, -1, dummy, NULL, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "no input or output"), "NULL input: rc %d '%s'", rc, err);
    struct sdp_model none = {0};
    rc = sdp_vae_tiled_run(&none, dummy, 4, 32, 32, -1, dummy, NULL, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "no loaded model"), "no model: rc %d '%s'", rc, err);
    struct sdp_tiling *t = malloc(sizeof *t);
    rc = sdp_vae_tiling_plan(NULL, 4, 32, 32, -1, t, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "no model"), "plan without model: rc %d '%s'", rc, err);
    free(t);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_vae_tiling DIR\n");
        return 2;
    }
    pure_tests();
    printf("plan and weights: %d failures\n", fails);
    struct o2r_ctx *ctx = NULL;
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "FAIL: no OpenCL device: %s\n", o2r_ctx_last_error(NULL));
        return 1;
    }
    struct sdp_model df, dt, ef, et, pu, pd;
    /* every model loaded (no short-circuit: each failure is reported) */
    int n_bad = (load(ctx, argv[1], "dec_full", &df) != 0) + (load(ctx, argv[1], "dec_tile", &dt) != 0) +
                (load(ctx, argv[1], "enc_full", &ef) != 0) + (load(ctx, argv[1], "enc_tile", &et) != 0) +
                (load(ctx, argv[1], "up_f16", &pu) != 0) + (load(ctx, argv[1], "down_f32", &pd) != 0);
    int ok = n_bad == 0;
    if (ok) {
        refusal_tests(&dt);
        pointwise_tests(&pu, &pd);
        decoder_tests(argv[1], &df, &dt);
        encoder_tests(argv[1], &ef, &et);
    }
    sdp_model_close(&df);
    sdp_model_close(&dt);
    sdp_model_close(&ef);
    sdp_model_close(&et);
    sdp_model_close(&pu);
    sdp_model_close(&pd);
    o2r_ctx_free(ctx);
    if (fails) {
        fprintf(stderr, "%d failures\n", fails);
        return 1;
    }
    printf("all passed\n");
    return 0;
}
