/* test_scheduler.c — pipeline/scheduler.c against diffusers 0.42, step by step.
 *
 * Reads sched_refs.txt/.bin (make_sched_refs.py): per case the config file, scheduler, steps,
 * overrides and seed; diffusers' timesteps, sigmas, init_noise_sigma; the initial sample and,
 * per step, the scaled model input, the model output used and the new sample. Runs the C
 * scheduler on its own trajectory (model outputs from the file, noise from the C generator) and
 * requires: timesteps equal (fractional Karras timesteps of Euler within 2 float32 ulps), sigmas and
 * init_noise_sigma within 2 float32 ulps (relative 2.4e-7),
 * every scaled input and sample within |d| <= 1e-5 + 1e-5 |ref|.
 * Usage: test_scheduler CONFIG_DIR REFS.txt REFS.bin
 */
#include "scheduler.h"
#include "torch_rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NV 16

static double worst_abs, worst_rel_sig;

static int close_enough(const float *got, const float *want, int n, const char *what, const char *cs, int step)
{
    int bad = 0;
    for (int k = 0; k < n; k++) {
        double d = fabs((double)got[k] - want[k]);
        if (d > worst_abs) worst_abs = d;
        if (!(d <= 1e-5 + 1e-5 * fabs(want[k]))) {
            if (!bad) fprintf(stderr, "%s: step %d %s[%d]: got %.9g want %.9g\n", cs, step, what, k, got[k], want[k]);
            bad = 1;
        }
    }
    return bad;
}

static int read_list(char *line, const char *tag, double *v, int cap)
{
    size_t tl = strlen(tag);
    if (strncmp(line, tag, tl) != 0) return -1;
    char *p = line + tl, *q;
    int n = 0;
    while (n < cap) {
        double x = strtod(p, &q);
        if (q == p) break;
        v[n++] = x;
        p = q;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_scheduler CONFIG_DIR REFS.txt REFS.bin\n");
        return 2;
    }
    FILE *ft = fopen(argv[2], "r"), *fb = fopen(argv[3], "rb");
    if (!ft || !fb) {
        fprintf(stderr, "FAIL: cannot open the references\n");
        return 1;
    }
    char line[65536], cfg[64], name[32], spacing[32];
    int cases = 0, failed = 0;
    long total_steps = 0;
    while (fgets(line, sizeof line, ft)) {
        int steps, karras;
        unsigned long long seed;
        if (sscanf(line, "case %63s %31s %d %d %31s %llu", cfg, name, &steps, &karras, spacing, &seed) != 6) {
            fprintf(stderr, "FAIL: bad line: %s", line);
            return 1;
        }
        char cs[256];
        snprintf(cs, sizeof cs, "%s/%s/%d steps/karras %d/%s/seed %llu", cfg, name, steps, karras, spacing, seed);
        double ts[1024], sg[1024], init;
        int nts, nsg;
        if (!fgets(line, sizeof line, ft) || (nts = read_list(line, "timesteps", ts, 1024)) < 1) return 1;
        if (!fgets(line, sizeof line, ft)) return 1;
        nsg = strncmp(line, "sigmas -", 8) == 0 ? 0 : read_list(line, "sigmas", sg, 1024);
        if (!fgets(line, sizeof line, ft) || read_list(line, "init", &init, 1) != 1) return 1;
        cases++;
        char path[4096], err[1024];
        snprintf(path, sizeof path, "%s/%s.json", argv[1], cfg);
        enum sdp_sched_kind kind;
        if (sdp_sched_kind_from_name(name, &kind)) return 1;
        struct sdp_sched_overrides ov = {.karras = karras, .spacing = strcmp(spacing, "-") ? spacing : NULL};
        struct sdp_scheduler *s;
        int bad = 0;
        if (sdp_sched_load(path, kind, &ov, &s, err, sizeof err) || sdp_sched_set_timesteps(s, steps, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", cs, err);
            return 1;
        }
        if (s->n_steps != nts) {
            fprintf(stderr, "%s: %d timesteps, diffusers has %d\n", cs, s->n_steps, nts);
            bad = 1;
        }
        for (int i = 0; i < nts && i < s->n_steps; i++)
            if (fabs(s->timesteps[i] - ts[i]) > 2.4e-7 * fabs(ts[i]) && !bad) {
                fprintf(stderr, "%s: timestep[%d] = %.17g, diffusers %.17g\n", cs, i, s->timesteps[i], ts[i]);
                bad = 1;
            }
        for (int i = 0; i < nsg && !bad; i++) {
            double r = fabs(s->sigmas[i] - sg[i]) / (fabs(sg[i]) > 1e-30 ? fabs(sg[i]) : 1);
            if (r > worst_rel_sig) worst_rel_sig = r;
            if (r > 2.4e-7) {
                fprintf(stderr, "%s: sigma[%d] = %.9g, diffusers %.9g\n", cs, i, s->sigmas[i], sg[i]);
                bad = 1;
            }
        }
        if (fabs(s->init_noise_sigma - init) > 2.4e-7 * fabs(init)) {
            fprintf(stderr, "%s: init_noise_sigma %.9g, diffusers %.9g\n", cs, s->init_noise_sigma, init);
            bad = 1;
        }
        struct sdp_rng g;
        sdp_rng_seed(&g, seed);
        float x[NV], ref[NV], xin[NV], m[NV];
        sdp_rng_randn(&g, x, NV);
        for (int k = 0; k < NV; k++) x[k] = x[k] * s->init_noise_sigma;
        if (fread(ref, 4, NV, fb) != NV) return 1;
        bad |= close_enough(x, ref, NV, "init", cs, -1);
        for (int i = 0; i < nts; i++) {
            float rxin[NV];
            if (fread(rxin, 4, NV, fb) != NV || fread(m, 4, NV, fb) != NV || fread(ref, 4, NV, fb) != NV) {
                fprintf(stderr, "FAIL: %s too short\n", argv[3]);
                return 1;
            }
            if (bad || i >= s->n_steps) continue;
            sdp_sched_scale_input(s, i, x, xin, NV);
            bad |= close_enough(xin, rxin, NV, "scaled input", cs, i);
            if (sdp_sched_step(s, i, m, x, NV, &g)) return 1;
            bad |= close_enough(x, ref, NV, "sample", cs, i);
            total_steps++;
        }
        sdp_sched_free(s);
        failed += bad;
    }
    printf("%d cases, %ld steps, %d failed; worst |d| %.3g, worst sigma rel %.3g\n", cases, total_steps,
           failed, worst_abs, worst_rel_sig);
    return failed || cases == 0 ? 1 : 0;
}
