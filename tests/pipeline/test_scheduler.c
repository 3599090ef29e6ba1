/* test_scheduler.c — pipeline/scheduler.c against diffusers 0.42, step by step.
 *
 * Reads sched_refs.txt/.bin (make_sched_refs.py): per case the config file, scheduler, steps,
 * overrides and seed; diffusers' timesteps, sigmas, init_noise_sigma; the initial sample and,
 * per step, the scaled model input, the model output used and the new sample. Runs the C
 * scheduler on its own trajectory (model outputs from the file, noise from the C generator) and
 * requires: integer timesteps equal, fractional ones (Karras/exponential/beta conversions, KDPM2's
 * interpolated timesteps) within 1e-2 (torch's CPU exp/log/sqrt are MKL VML's, not correctly
 * rounded, and KDPM2 a's sigmas_down cancel; the UNet sees no difference), sigmas and
 * init_noise_sigma within 2 float32 ulps (relative 2.4e-7), every scaled input and sample within
 * |d| <= tol + tol |ref|, tol = 1e-5 (5e-5 for the multistep DPM-Solver++, DEIS, UniPC and for
 * KDPM2 a, whose sigmas_down cancel; a case's tol=X where make_sched_refs.py measured diffusers'
 * own 1-ulp sensitivity above it). NaN where diffusers gives NaN.
 * Usage: test_scheduler CONFIG_DIR REFS.txt REFS.bin
 */
#include "scheduler.h"
#include "torch_rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NV 16

static double worst_abs, worst_rel_sig, worst_norm; /* worst_norm: |d| / max(1, |ref|) */

static double tol = 1e-5;

static int close_enough(const float *got, const float *want, int n, const char *what, const char *cs, int step)
{
    int bad = 0;
    for (int k = 0; k < n; k++) {
        if (isnan(got[k]) && isnan(want[k])) continue; /* diffusers' own NaN (KDPM2 a on a cosine schedule) */
        double d = fabs((double)got[k] - want[k]);
        if (d > worst_abs) worst_abs = d;
        if (d / fmax(1.0, fabs(want[k])) > worst_norm) worst_norm = d / fmax(1.0, fabs(want[k]));
        if (!(d <= tol + tol * fabs(want[k]))) {
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

/* sdp_sched_parse: A1111 names (sampler + schedule type) and ours to a kind and overrides, the
 * refusals by name, and sdp_sched_a1111_name back on the scheduler loaded with them. */
static int parse_tests(const char *cfgdir)
{
    static const struct {
        const char *sampler, *schedule;
        const char *kind;     /* expected kind, or NULL: refused */
        enum sdp_sigmas sig;  /* expected ov.sigmas */
        const char *spacing;  /* expected ov.spacing (NULL: untouched) */
        const char *err;      /* expected part of the message when refused */
        const char *a_sampler, *a_schedule; /* sdp_sched_a1111_name after loading sd15.json */
    } c[] = {
        {"Euler a", NULL, "euler_a", SDP_SIGMAS_CONFIG, NULL, NULL, "Euler a", "Automatic"},
        {"euler_a", "", "euler_a", SDP_SIGMAS_CONFIG, NULL, NULL, "Euler a", "Automatic"},
        {"DPM++ 2M", "Karras", "dpmpp_2m", SDP_SIGMAS_KARRAS, NULL, NULL, "DPM++ 2M", "Karras"},
        {"DPM++ 2M Karras", NULL, "dpmpp_2m", SDP_SIGMAS_KARRAS, NULL, NULL, "DPM++ 2M", "Karras"},
        {"DPM++ 2M Karras", "Automatic", "dpmpp_2m", SDP_SIGMAS_KARRAS, NULL, NULL, "DPM++ 2M", "Karras"},
        {"DPM++ 2M SDE", "Exponential", "dpmpp_2m_sde", SDP_SIGMAS_EXPONENTIAL, NULL, NULL, "DPM++ 2M SDE", "Exponential"},
        {"DPM++ 2M SDE Karras", NULL, "dpmpp_2m_sde", SDP_SIGMAS_KARRAS, NULL, NULL, "DPM++ 2M SDE", "Karras"},
        {"DPM++ 3M SDE Exponential", NULL, "dpmpp_3m_sde", SDP_SIGMAS_EXPONENTIAL, NULL, NULL, "DPM++ 3M SDE", "Exponential"},
        {"DPM2 a", "Beta", "dpm2_a", SDP_SIGMAS_BETA, NULL, NULL, "DPM2 a", "Beta"},
        {"DPM2 Karras", NULL, "dpm2", SDP_SIGMAS_KARRAS, NULL, NULL, "DPM2", "Karras"},
        {"LMS Karras", NULL, "lms", SDP_SIGMAS_KARRAS, NULL, NULL, "LMS", "Karras"},
        {"Heun", "SGM Uniform", "heun", SDP_SIGMAS_CONFIG, "trailing", NULL, "Heun", "SGM Uniform"},
        {"Euler", "Simple", "euler", SDP_SIGMAS_CONFIG, "trailing", NULL, "Euler", "SGM Uniform"},
        {"Euler", "Uniform", "euler", SDP_SIGMAS_DEFAULT, NULL, NULL, "Euler", "Automatic"},
        {"Euler", "Normal", "euler", SDP_SIGMAS_DEFAULT, NULL, NULL, "Euler", "Automatic"},
        {"PLMS", NULL, "pndm", SDP_SIGMAS_CONFIG, NULL, NULL, "PLMS", "Automatic"},
        {"DDIM", "Automatic", "ddim", SDP_SIGMAS_CONFIG, NULL, NULL, "DDIM", "Automatic"},
        {"UniPC", "Karras", "unipc", SDP_SIGMAS_KARRAS, NULL, NULL, "UniPC", "Karras"},
        {"DEIS", NULL, "deis", SDP_SIGMAS_CONFIG, NULL, NULL, "DEIS", "Automatic"},
        {"LCM", NULL, "lcm", SDP_SIGMAS_CONFIG, NULL, NULL, "LCM", "Automatic"},
        {"TCD", NULL, "tcd", SDP_SIGMAS_CONFIG, NULL, NULL, "TCD", "Automatic"},
        {"DDPM", NULL, "ddpm", SDP_SIGMAS_CONFIG, NULL, NULL, "DDPM", "Automatic"},
        {"DPM++ SDE", NULL, NULL, 0, NULL, "torchsde", NULL, NULL},
        {"DPM++ SDE Karras", NULL, NULL, 0, NULL, "BrownianTree", NULL, NULL},
        {"DPM++ 2S a", NULL, NULL, 0, NULL, "no scheduler", NULL, NULL},
        {"DPM adaptive", NULL, NULL, 0, NULL, "no scheduler", NULL, NULL},
        {"Restart", NULL, NULL, 0, NULL, "no scheduler", NULL, NULL},
        {"Euler b", NULL, NULL, 0, NULL, "unknown sampler \"Euler b\"", NULL, NULL},
        {"Euler a", "Karras", NULL, 0, NULL, "takes no Karras", NULL, NULL},
        {"DDIM Karras", NULL, NULL, 0, NULL, "takes no Karras", NULL, NULL},
        {"Euler", "Align Your Steps", NULL, 0, NULL, "schedule type \"Align Your Steps\" is not supported", NULL, NULL},
        {"Euler", "Polyexponential", NULL, 0, NULL, "no diffusers equivalent", NULL, NULL},
        {"DPM++ 2M Karras", "Exponential", NULL, 0, NULL, "disagree", NULL, NULL},
        {"", NULL, NULL, 0, NULL, "empty", NULL, NULL},
    };
    int failed = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/sd15.json", cfgdir);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct sdp_sched_overrides ov = {.karras = -1};
        enum sdp_sched_kind k;
        char err[1024] = "";
        int rc = sdp_sched_parse(c[i].sampler, c[i].schedule, &k, &ov, err, sizeof err);
        int bad = 0;
        if (!c[i].kind) {
            bad = rc == 0 || !strstr(err, c[i].err);
        } else if (rc || strcmp(sdp_sched_kind_name(k), c[i].kind) || ov.sigmas != c[i].sig ||
                   (c[i].spacing ? !ov.spacing || strcmp(ov.spacing, c[i].spacing) : ov.spacing != NULL)) {
            bad = 1;
        } else {
            struct sdp_scheduler *s;
            const char *an, *as;
            ov.raw = 1;
            if (sdp_sched_load(path, k, &ov, &s, err, sizeof err)) {
                bad = 1;
            } else {
                sdp_sched_a1111_name(s, &an, &as);
                bad = strcmp(an, c[i].a_sampler) || strcmp(as, c[i].a_schedule);
                snprintf(err, sizeof err, "A1111 name \"%s\" / \"%s\"", an, as);
                sdp_sched_free(s);
            }
        }
        if (bad) {
            fprintf(stderr, "FAIL: sdp_sched_parse(\"%s\", \"%s\"): rc %d, %s\n", c[i].sampler,
                    c[i].schedule ? c[i].schedule : "(null)", rc, err);
            failed++;
        }
    }
    printf("%zu sdp_sched_parse cases, %d failed\n", sizeof c / sizeof c[0], failed);
    return failed;
}

/* flow_euler: refused configs and overrides (the message naming the key), "Euler" on a flow config,
 * set_timesteps without the mu dynamic shifting needs. */
static int flow_tests(const char *cfgdir)
{
    static const struct {
        const char *cfg, *kind;
        int steps;        /* > 0: set_timesteps(steps) after loading */
        int ov;           /* 1: spacing override, 2: prediction type override, 3: Karras */
        const char *err;  /* expected part of the message, or NULL: accepted */
        const char *loaded; /* the kind it loads as */
    } c[] = {
        {"flow_bad_key", "flow_euler", 0, 0, "\"sigma_min\" is not a key of FlowMatchEulerDiscreteScheduler", NULL},
        {"flow_bad_shift0", "flow_euler", 0, 0, "\"shift\" 0 must be > 0", NULL},
        {"flow_bad_shiftneg", "flow_euler", 0, 0, "\"shift\" -3 must be > 0", NULL},
        {"flow_bad_tst", "flow_euler", 0, 0, "\"time_shift_type\" \"cubic\" is not one of exponential, linear", NULL},
        {"flow_bad_terminal", "flow_euler", 0, 0, "\"shift_terminal\" 1 is not in (0, 1)", NULL},
        {"flow_bad_two", "flow_euler", 0, 0, "only one of use_karras_sigmas", NULL},
        {"sd15", "flow_euler", 0, 0, "takes a flow-matching config, not _class_name PNDMScheduler", NULL},
        {"sd3", "euler_a", 0, 0, "of its samplers only Euler (flow_euler) is ported, not euler_a", NULL},
        {"sd3", "dpmpp_2m", 0, 0, "not dpmpp_2m", NULL},
        {"sd3", "flow_euler", 0, 1, "has no timestep_spacing", NULL},
        {"sd3", "flow_euler", 0, 2, "has no prediction_type", NULL},
        {"flux", "flow_euler", 4, 0, "use_dynamic_shifting needs mu", NULL},
        {"sd3_terminal", "flow_euler", 1, 0, "shift_terminal with a last sigma of 1", NULL},
        {"sd3", "euler", 4, 0, NULL, "flow_euler"},  /* A1111's "Euler" on a flow model */
        {"sd35", "flow_euler", 4, 3, NULL, "flow_euler"},
        {"flux", "euler", 0, 0, NULL, "flow_euler"},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char path[4096], err[1024] = "";
        snprintf(path, sizeof path, "%s/%s.json", cfgdir, c[i].cfg);
        enum sdp_sched_kind k;
        struct sdp_sched_overrides ov = {.karras = -1};
        if (c[i].ov == 1) ov.spacing = "trailing";
        if (c[i].ov == 2) ov.prediction_type = "v_prediction";
        if (c[i].ov == 3) ov.sigmas = SDP_SIGMAS_KARRAS, ov.karras = 1;
        struct sdp_scheduler *s = NULL;
        int rc = sdp_sched_kind_from_name(c[i].kind, &k);
        if (!rc) rc = sdp_sched_load(path, k, &ov, &s, err, sizeof err);
        if (!rc && c[i].steps) rc = sdp_sched_set_timesteps(s, c[i].steps, err, sizeof err);
        int bad = c[i].err ? rc == 0 || !strstr(err, c[i].err) : rc != 0 || strcmp(sdp_sched_kind_name(s->kind), c[i].loaded);
        if (!bad && s) {
            const char *an, *as;
            sdp_sched_a1111_name(s, &an, &as);
            bad = strcmp(an, "Euler") || strcmp(as, c[i].ov == 3 ? "Karras" : "Automatic");
        }
        if (bad) {
            fprintf(stderr, "FAIL: flow config %s as %s: rc %d, %s\n", c[i].cfg, c[i].kind, rc, err);
            failed++;
        }
        sdp_sched_free(s);
    }
    /* names: A1111's "Euler" + schedule type parses to euler (loaded as flow_euler above), our name,
     * the config's _class_name */
    enum sdp_sched_kind k;
    struct sdp_sched_overrides ov = {.karras = -1};
    char err[512];
    if (sdp_sched_parse("flow_euler", "Beta", &k, &ov, err, sizeof err) || k != SDP_SCHED_FLOW_EULER ||
        ov.sigmas != SDP_SIGMAS_BETA || sdp_sched_kind_from_class("FlowMatchEulerDiscreteScheduler", &k) ||
        k != SDP_SCHED_FLOW_EULER || strcmp(sdp_sched_kind_class(k), "FlowMatchEulerDiscreteScheduler")) {
        fprintf(stderr, "FAIL: flow_euler names\n");
        failed++;
    }
    /* calculate_shift: Flux at 1024x1024 (seq 4096 = max_image_seq_len) is max_shift, at 256 tokens base_shift */
    if (sdp_flow_image_seq_len(1024, 1024) != 4096 || sdp_flow_image_seq_len(1000, 520) != 32 * 62 ||
        fabs(sdp_flow_calculate_shift(4096, 256, 4096, 0.5, 1.15) - 1.15) > 1e-15 ||
        fabs(sdp_flow_calculate_shift(256, 256, 4096, 0.5, 1.15) - 0.5) > 1e-15) {
        fprintf(stderr, "FAIL: sdp_flow_calculate_shift / sdp_flow_image_seq_len\n");
        failed++;
    }
    printf("%zu flow_euler config cases, %d failed\n", sizeof c / sizeof c[0], failed);
    return failed;
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
    static double worst_kind[64], worst_kind_norm[64];
    int cases = 0, failed = 0, n_addnoise = 0;
    long total_steps = 0;
    while (fgets(line, sizeof line, ft)) {
        int steps, karras;
        unsigned long long seed;
        if (!strncmp(line, "addnoise ", 9)) { /* sdp_sched_add_noise at index idx */
            int idx;
            char path[4096], err[1024];
            if (sscanf(line, "addnoise %63s %31s %d %d", cfg, name, &steps, &idx) != 4) return 1;
            enum sdp_sched_kind kind;
            struct sdp_sched_overrides ov = {.karras = -1, .raw = 1};
            struct sdp_scheduler *s;
            float x0[NV], nz[NV], want[NV], got[NV];
            if (fread(x0, 4, NV, fb) != NV || fread(nz, 4, NV, fb) != NV || fread(want, 4, NV, fb) != NV) return 1;
            snprintf(path, sizeof path, "%s/%s.json", argv[1], cfg);
            if (sdp_sched_kind_from_name(name, &kind) || sdp_sched_load(path, kind, &ov, &s, err, sizeof err) ||
                sdp_sched_set_timesteps(s, steps, err, sizeof err)) { /* flow_euler: SD3 configs, no mu */
                fprintf(stderr, "FAIL: %s", line);
                return 1;
            }
            char cs[256];
            snprintf(cs, sizeof cs, "add_noise %s/%s/%d steps/index %d", cfg, name, steps, idx);
            tol = 1e-5;
            if (sdp_sched_add_noise(s, idx, x0, nz, got, NV)) {
                fprintf(stderr, "%s: refused\n", cs);
                failed++;
            } else {
                failed += close_enough(got, want, NV, "noised", cs, idx);
            }
            n_addnoise++;
            sdp_sched_free(s);
            continue;
        }
        int used = 0;
        double case_tol = 0;
        int start = 0; /* img2img: the loop begins at step index start (set_begin_index) */
        int flux = 0, fw = 0, fh = 0; /* flow: FluxPipeline's sigmas; mu of a fw x fh image */
        double mu = NAN;
        if (sscanf(line, "case %63s %31s %d %d %31s %llu%n", cfg, name, &steps, &karras, spacing, &seed, &used) != 6) {
            fprintf(stderr, "FAIL: bad line: %s", line);
            return 1;
        }
        /* optional key=value tokens: sig=default|karras|exponential|beta, eta=F, pipe=1 (the
         * StableDiffusionPipeline config rewrites; without it the raw class) */
        struct sdp_sched_overrides ov = {.karras = karras, .spacing = strcmp(spacing, "-") ? spacing : NULL, .raw = 1};
        char opts[256] = "";
        for (char *tok = strtok(line + used, " \n"); tok; tok = strtok(NULL, " \n")) {
            if (!strcmp(tok, "sig=default")) ov.sigmas = SDP_SIGMAS_DEFAULT;
            else if (!strcmp(tok, "sig=karras")) ov.sigmas = SDP_SIGMAS_KARRAS;
            else if (!strcmp(tok, "sig=exponential")) ov.sigmas = SDP_SIGMAS_EXPONENTIAL;
            else if (!strcmp(tok, "sig=beta")) ov.sigmas = SDP_SIGMAS_BETA;
            else if (!strncmp(tok, "eta=", 4)) ov.eta = strtof(tok + 4, NULL);
            else if (!strcmp(tok, "pipe=1")) ov.raw = 0;
            else if (!strncmp(tok, "tol=", 4)) case_tol = strtod(tok + 4, NULL);
            else if (!strncmp(tok, "start=", 6)) start = atoi(tok + 6);
            else if (!strcmp(tok, "flux=1")) flux = 1;
            else if (!strncmp(tok, "mu=", 3)) mu = strtod(tok + 3, NULL);
            else if (sscanf(tok, "wh=%dx%d", &fw, &fh) == 2) continue;
            else {
                fprintf(stderr, "FAIL: bad option %s\n", tok);
                return 1;
            }
            snprintf(opts + strlen(opts), sizeof opts - strlen(opts), "/%s", tok);
        }
        char cs[512];
        snprintf(cs, sizeof cs, "%s/%s/%d steps/karras %d/%s/seed %llu%s", cfg, name, steps, karras, spacing, seed, opts);
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
        if (sdp_sched_kind_from_name(name, &kind)) {
            fprintf(stderr, "FAIL: unknown scheduler %s\n", name);
            return 1;
        }
        /* multistep solvers (DPM-Solver++, DEIS, UniPC) difference up to 3 past model outputs
         * divided by log-sigma steps: the 1-ulp differences of torch's MKL (VML) exp/log/sqrt, which
         * are not correctly rounded, grow to a few 1e-5 there */
        tol = kind == SDP_SCHED_DPMPP_2M || kind == SDP_SCHED_DPMPP_2M_SDE || kind == SDP_SCHED_DPMPP_3M_SDE ||
                      kind == SDP_SCHED_DEIS || kind == SDP_SCHED_UNIPC || kind == SDP_SCHED_DPM2_A
                  ? 5e-5 : 1e-5;
        if (case_tol > 0) tol = case_tol;
        double worst_before = worst_abs, norm_before = worst_norm;
        worst_abs = worst_norm = 0;
        struct sdp_scheduler *s;
        int bad = 0;
        if (sdp_sched_load(path, kind, &ov, &s, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", cs, err);
            return 1;
        }
        if (kind == SDP_SCHED_FLOW_EULER) { /* mu from the image size, FluxPipeline's sigmas */
            double fmu = NAN, fs[1024];
            if (fw) {
                fmu = sdp_sched_flow_mu(s, fw, fh);
                if (fmu != mu) {
                    fprintf(stderr, "%s: mu %.17g, diffusers' calculate_shift %.17g\n", cs, fmu, mu);
                    bad = 1;
                }
            }
            if (flux) sdp_flow_flux_sigmas(steps, fs);
            if (sdp_sched_set_timesteps_flow(s, steps, flux ? fs : NULL, fmu, err, sizeof err)) {
                fprintf(stderr, "%s: %s\n", cs, err);
                return 1;
            }
            if (!fw && sdp_sched_set_timesteps(s, steps, err, sizeof err)) { /* the same without mu */
                fprintf(stderr, "%s: %s\n", cs, err);
                return 1;
            }
        } else if (sdp_sched_set_timesteps(s, steps, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", cs, err);
            return 1;
        }
        if (strcmp(sdp_sched_kind_name(s->kind), name)) {
            fprintf(stderr, "%s: loaded as %s\n", cs, sdp_sched_kind_name(s->kind));
            bad = 1;
        }
        if (s->n_steps != nts) {
            fprintf(stderr, "%s: %d timesteps, diffusers has %d\n", cs, s->n_steps, nts);
            bad = 1;
        }
        /* flow matching: timesteps are float32 sigma * N, required within 2 float32 ulps as sigmas */
        double ts_tol_flow = kind == SDP_SCHED_FLOW_EULER ? 2.4e-7 : -1;
        double case_ts_rel = 0, case_sig_rel = 0;
        for (int i = 0; i < nts && i < s->n_steps; i++)
            if (ts[i] != 0 && fabs(s->timesteps[i] - ts[i]) / fabs(ts[i]) > case_ts_rel)
                case_ts_rel = fabs(s->timesteps[i] - ts[i]) / fabs(ts[i]);
        for (int i = 0; i < nts && i < s->n_steps; i++)
            if (fabs(s->timesteps[i] - ts[i]) > (ts_tol_flow >= 0 ? ts_tol_flow * fabs(ts[i])
                                                 : ts[i] == floor(ts[i]) && s->timesteps[i] == floor(s->timesteps[i]) ? 0 : 1e-2) && !bad) {
                fprintf(stderr, "%s: timestep[%d] = %.17g, diffusers %.17g\n", cs, i, s->timesteps[i], ts[i]);
                bad = 1;
            }
        for (int i = 0; i < nsg && !bad; i++) {
            double r = fabs(s->sigmas[i] - sg[i]) / (fabs(sg[i]) > 1e-30 ? fabs(sg[i]) : 1);
            if (r > worst_rel_sig) worst_rel_sig = r;
            if (r > case_sig_rel) case_sig_rel = r;
            if (getenv("SCHED_DEBUG") && strstr(cs, getenv("SCHED_DEBUG")) && (float)sg[i] != s->sigmas[i])
                fprintf(stderr, "  %s sigma[%d] %.9g vs %.9g\n", cs, i, s->sigmas[i], sg[i]);
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
        if (start) s->first_index = 0; /* set_begin_index(start), as sd_pipeline.c's img2img */
        for (int i = start; i < nts; i++) {
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
            if (getenv("SCHED_DEBUG") && strstr(cs, getenv("SCHED_DEBUG"))) {
                double w = 0;
                for (int k = 0; k < NV; k++) {
                    double r = fabs((double)x[k] - ref[k]) / (1e-5 + fabs(ref[k]));
                    w = r > w ? r : w;
                }
                fprintf(stderr, "  %s step %d t %g rel %.3g\n", cs, i, s->timesteps[i], w);
            }
            total_steps++;
        }
        if (getenv("SCHED_REPORT") && strstr(cs, getenv("SCHED_REPORT")))
            printf("  %s: timesteps rel %.3g, sigmas rel %.3g, samples worst |d| %.3g, |d|/max(1,|ref|) %.3g\n", cs,
                   case_ts_rel, case_sig_rel, worst_abs, worst_norm);
        if (worst_abs > worst_kind[kind]) worst_kind[kind] = worst_abs;
        if (worst_norm > worst_kind_norm[kind]) worst_kind_norm[kind] = worst_norm;
        if (worst_before > worst_abs) worst_abs = worst_before;
        if (norm_before > worst_norm) worst_norm = norm_before;
        sdp_sched_free(s);
        failed += bad;
    }
    printf("%d cases, %ld steps, %d add_noise cases, %d failed; worst |d| %.3g, worst sigma rel %.3g\n", cases,
           total_steps, n_addnoise, failed, worst_abs, worst_rel_sig);
    for (int k = 0; k < 64; k++)
        if (worst_kind[k] > 0)
            printf("  %-13s worst |d| %.3g, worst |d|/max(1,|ref|) %.3g\n", sdp_sched_kind_name((enum sdp_sched_kind)k),
                   worst_kind[k], worst_kind_norm[k]);
    failed += parse_tests(argv[1]);
    failed += flow_tests(argv[1]);
    return failed || cases == 0 ? 1 : 0;
}
