/* scheduler.c — diffusers' Euler, Euler ancestral, DPM++ 2M, DDIM and LCM schedulers (see
 * scheduler.h for what is matched and how).
 *
 * Assumes: IEEE float32/float64, round to nearest; compiled with -ffp-contract=off so float
 * expressions round like torch's element-wise kernels. Guarantees: set_timesteps reproduces
 * diffusers' timesteps and sigmas (tests/pipeline/test_scheduler.c against traces of diffusers).
 */
#include "scheduler.h"
#include "json.h"
#include "torch_rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"euler", "euler_a", "dpmpp_2m", "ddim", "lcm"};
/* The diffusers class each kind ports (same order as kind_names). */
static const char *const kind_classes[] = {"EulerDiscreteScheduler", "EulerAncestralDiscreteScheduler",
                                           "DPMSolverMultistepScheduler", "DDIMScheduler", "LCMScheduler"};
#define N_KINDS ((int)(sizeof kind_names / sizeof *kind_names))

int sdp_sched_kind_from_name(const char *name, enum sdp_sched_kind *out)
{
    for (int k = 0; k < N_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (enum sdp_sched_kind)k;
            return 0;
        }
    return -1;
}

int sdp_sched_kind_from_class(const char *cls, enum sdp_sched_kind *out)
{
    for (int k = 0; k < N_KINDS; k++)
        if (strcmp(cls, kind_classes[k]) == 0) {
            *out = (enum sdp_sched_kind)k;
            return 0;
        }
    return -1;
}

const char *sdp_sched_kind_name(enum sdp_sched_kind k) { return kind_names[k]; }
const char *sdp_sched_kind_class(enum sdp_sched_kind k) { return kind_classes[k]; }

const char *sdp_sched_names(void)
{
    static char buf[1024];
    if (!buf[0]) {
        size_t o = 0;
        for (int k = 0; k < N_KINDS && o < sizeof buf; k++)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", k ? ", " : "", kind_names[k]);
    }
    return buf;
}

/* torch.linspace(start, end, n, dtype=float32) on the CPU. */
static void linspace_f32(float start, float end, int n, float *out)
{
    float step = n > 1 ? (end - start) / (float)(n - 1) : 0.0f;
    int half = n / 2;
    for (int i = 0; i < n; i++)
        out[i] = i < half ? start + step * (float)i : end - step * (float)(n - i - 1);
}

/* numpy.interp(x, arange(len), fp) for 0 <= x <= len-1 (the only range used here). */
static double interp(double x, const float *fp, int len)
{
    if (x <= 0) return fp[0];
    if (x >= len - 1) return fp[len - 1];
    int j = (int)floor(x);
    double slope = ((double)fp[j + 1] - (double)fp[j]) / 1.0;
    return slope * (x - j) + (double)fp[j];
}

/* _sigma_to_t: the (fractional) training timestep of sigma, interpolating in log sigma. */
static double sigma_to_t(double sigma, const double *log_sigmas, int n)
{
    double ls = log(sigma > 1e-10 ? sigma : 1e-10);
    /* low_idx = last index with log_sigmas[i] <= ls (cumsum(dists >= 0).argmax), clipped */
    int cnt = 0, low = 0;
    int best = -1;
    for (int i = 0; i < n; i++) {
        cnt += ls - log_sigmas[i] >= 0;
        if (cnt > best) best = cnt, low = i;
    }
    if (low > n - 2) low = n - 2;
    double lo = log_sigmas[low], hi = log_sigmas[low + 1];
    double w = (lo - ls) / (lo - hi);
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    return (1 - w) * low + w * (low + 1);
}

/* _convert_to_karras: n sigmas from sigma_max down to sigma_min, rho = 7. */
static void karras(double smin, double smax, int n, double *out)
{
    double rho = 7.0, min_inv = pow(smin, 1 / rho), max_inv = pow(smax, 1 / rho);
    for (int i = 0; i < n; i++) {
        double ramp = n > 1 ? (double)i * (1.0 / (double)(n - 1)) : 0.0;
        if (n > 1 && i == n - 1) ramp = 1.0;
        out[i] = pow(max_inv + ramp * (min_inv - max_inv), rho);
    }
}

/* Reads an optional number; 1 = present, 0 = absent or null, -1 = wrong type (err set). */
static int get_num(const struct sdp_json *cfg, const char *key, double *v, const char *path,
                   char *err, size_t errcap)
{
    const struct sdp_json *j = sdp_json_get(cfg, key);
    if (!j || j->type == SDP_JSON_NULL) return 0;
    if (j->type != SDP_JSON_NUMBER && j->type != SDP_JSON_BOOL) {
        snprintf(err, errcap, "%s: \"%s\" must be a number", path, key);
        return -1;
    }
    *v = j->num;
    return 1;
}

static int get_str(const struct sdp_json *cfg, const char *key, const char **v, const char *path,
                   char *err, size_t errcap)
{
    const struct sdp_json *j = sdp_json_get(cfg, key);
    if (!j || j->type == SDP_JSON_NULL) return 0;
    if (j->type != SDP_JSON_STRING) {
        snprintf(err, errcap, "%s: \"%s\" must be a string", path, key);
        return -1;
    }
    *v = j->str;
    return 1;
}

/* Config keys that change the arithmetic in ways not ported: a value other than the one given
 * here is refused (naming the key) instead of being ignored. kinds: bit mask of the classes that
 * read the key (diffusers ignores keys a class does not take). */
static const struct {
    const char *key;     /* scheduler_config.json key */
    unsigned kinds;      /* 1 << enum sdp_sched_kind */
    const char *str;     /* accepted string value, or NULL for a number/bool */
    double num;          /* accepted number/bool value */
} unsupported[] = {
#define K(k) (1u << SDP_SCHED_##k)
    {"rescale_betas_zero_snr", 31, NULL, 0},
    {"thresholding", K(DPMPP_2M) | K(DDIM) | K(LCM), NULL, 0},
    {"interpolation_type", K(EULER), "linear", 0},
    {"timestep_type", K(EULER), "discrete", 0},
    {"final_sigmas_type", K(EULER) | K(DPMPP_2M), "zero", 0},
    {"use_exponential_sigmas", K(EULER) | K(DPMPP_2M), NULL, 0},
    {"use_beta_sigmas", K(EULER) | K(DPMPP_2M), NULL, 0},
    {"use_lu_lambdas", K(DPMPP_2M), NULL, 0},
    {"use_flow_sigmas", K(DPMPP_2M), NULL, 0},
    {"use_dynamic_shifting", K(DPMPP_2M), NULL, 0},
    {"algorithm_type", K(DPMPP_2M), "dpmsolver++", 0},
    {"solver_order", K(DPMPP_2M), NULL, 2},
    {"solver_type", K(DPMPP_2M), "midpoint", 0},
    {"lower_order_final", K(DPMPP_2M), NULL, 1},
    {"euler_at_final", K(DPMPP_2M), NULL, 0},
    {"variance_type", K(DPMPP_2M), "", 0},
    {"lambda_min_clipped", K(DPMPP_2M), NULL, -INFINITY},
#undef K
};

static int check_unsupported(const struct sdp_json *cfg, enum sdp_sched_kind kind, const char *path,
                             char *err, size_t errcap)
{
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        if (!(unsupported[i].kinds & (1u << kind))) continue;
        const struct sdp_json *v = sdp_json_get(cfg, unsupported[i].key);
        if (!v || v->type == SDP_JSON_NULL) continue;
        int ok = unsupported[i].str
                     ? v->type == SDP_JSON_STRING && strcmp(v->str, unsupported[i].str) == 0
                     : (v->type == SDP_JSON_NUMBER || v->type == SDP_JSON_BOOL) && v->num == unsupported[i].num;
        if (!ok) {
            if (unsupported[i].str)
                snprintf(err, errcap, "%s: \"%s\" other than \"%s\" is not supported by %s", path,
                         unsupported[i].key, unsupported[i].str, kind_names[kind]);
            else
                snprintf(err, errcap, "%s: \"%s\" other than %g is not supported by %s", path,
                         unsupported[i].key, unsupported[i].num, kind_names[kind]);
            return -1;
        }
    }
    return 0;
}

int sdp_sched_load(const char *path, enum sdp_sched_kind kind, const struct sdp_sched_overrides *ov,
                   struct sdp_scheduler **out, char *err, size_t errcap)
{
    *out = NULL;
    struct sdp_json *cfg = sdp_json_parse_file(path, err, errcap);
    if (!cfg) return -1;
    struct sdp_scheduler *s = calloc(1, sizeof *s);
    float *betas = NULL;
    if (!s) goto nomem;
    if (cfg->type != SDP_JSON_OBJECT) {
        snprintf(err, errcap, "%s: expected a JSON object", path);
        goto fail;
    }
    s->kind = kind;
    /* class defaults (diffusers 0.42) */
    int is_lcm = kind == SDP_SCHED_LCM, is_ddim = kind == SDP_SCHED_DDIM;
    double n_train = 1000, beta_start = is_lcm ? 0.00085 : 0.0001, beta_end = is_lcm ? 0.012 : 0.02;
    double steps_offset = 0, set_alpha_to_one = 1, clip_sample = is_ddim ? 1 : 0, clip_range = 1;
    double karras_on = 0, original_steps = 50, ts_scaling = 10;
    const char *schedule = is_lcm ? "scaled_linear" : "linear", *pred = "epsilon";
    const char *spacing = (is_ddim || is_lcm) ? "leading" : "linspace";
    s->sigma_min = s->sigma_max = NAN;
    double smin, smax;
    if (get_num(cfg, "num_train_timesteps", &n_train, path, err, errcap) < 0 ||
        get_num(cfg, "beta_start", &beta_start, path, err, errcap) < 0 ||
        get_num(cfg, "beta_end", &beta_end, path, err, errcap) < 0 ||
        get_num(cfg, "steps_offset", &steps_offset, path, err, errcap) < 0 ||
        get_num(cfg, "set_alpha_to_one", &set_alpha_to_one, path, err, errcap) < 0 ||
        get_num(cfg, "clip_sample", &clip_sample, path, err, errcap) < 0 ||
        get_num(cfg, "clip_sample_range", &clip_range, path, err, errcap) < 0 ||
        get_num(cfg, "use_karras_sigmas", &karras_on, path, err, errcap) < 0 ||
        get_num(cfg, "original_inference_steps", &original_steps, path, err, errcap) < 0 ||
        get_num(cfg, "timestep_scaling", &ts_scaling, path, err, errcap) < 0 ||
        get_str(cfg, "beta_schedule", &schedule, path, err, errcap) < 0 ||
        get_str(cfg, "prediction_type", &pred, path, err, errcap) < 0 ||
        get_str(cfg, "timestep_spacing", &spacing, path, err, errcap) < 0)
        goto fail;
    if (kind == SDP_SCHED_EULER) {
        int a = get_num(cfg, "sigma_min", &smin, path, err, errcap);
        int b = get_num(cfg, "sigma_max", &smax, path, err, errcap);
        if (a < 0 || b < 0) goto fail;
        if (a) s->sigma_min = smin;
        if (b) s->sigma_max = smax;
    }
    if (check_unsupported(cfg, kind, path, err, errcap)) goto fail;
    if (ov && ov->spacing) spacing = ov->spacing;
    if (ov && ov->prediction_type) pred = ov->prediction_type;
    if (ov && ov->karras >= 0) karras_on = ov->karras;
    if (n_train < 2 || n_train > 100000 || n_train != floor(n_train)) {
        snprintf(err, errcap, "%s: num_train_timesteps %g is not an integer in [2, 100000]", path, n_train);
        goto fail;
    }
    s->n_train = (int)n_train;
    if (strcmp(pred, "epsilon") == 0) s->pred = SDP_PRED_EPSILON;
    else if (strcmp(pred, "v_prediction") == 0) s->pred = SDP_PRED_V;
    else if (strcmp(pred, "sample") == 0 && kind != SDP_SCHED_EULER_A) s->pred = SDP_PRED_SAMPLE;
    else {
        snprintf(err, errcap, "%s: prediction_type \"%s\" is not supported by %s (epsilon, v_prediction%s)",
                 ov && ov->prediction_type ? "--prediction-type" : path, pred, kind_names[kind], kind == SDP_SCHED_EULER_A ? "" : ", sample");
        goto fail;
    }
    if (strcmp(spacing, "linspace") == 0) s->spacing = SDP_SPACING_LINSPACE;
    else if (strcmp(spacing, "leading") == 0) s->spacing = SDP_SPACING_LEADING;
    else if (strcmp(spacing, "trailing") == 0) s->spacing = SDP_SPACING_TRAILING;
    else {
        snprintf(err, errcap, "%s: timestep_spacing \"%s\" is not one of linspace, leading, trailing",
                 ov && ov->spacing ? "--timestep-spacing" : path, spacing);
        goto fail;
    }
    s->steps_offset = (int)steps_offset;
    s->karras = karras_on != 0 && (kind == SDP_SCHED_EULER || kind == SDP_SCHED_DPMPP_2M);
    if (karras_on != 0 && !s->karras && ov && ov->karras == 1) {
        snprintf(err, errcap, "--karras: only euler and dpmpp_2m use Karras sigmas");
        goto fail;
    }
    s->clip_sample = clip_sample != 0;
    s->clip_range = (float)clip_range;
    s->original_steps = (int)original_steps;
    s->timestep_scaling = ts_scaling;

    int N = s->n_train;
    betas = malloc((size_t)N * sizeof *betas);
    s->alphas_cumprod = malloc((size_t)N * sizeof(float));
    s->train_sigmas = malloc((size_t)N * sizeof(float));
    if (!betas || !s->alphas_cumprod || !s->train_sigmas) goto nomem;
    const struct sdp_json *tb = sdp_json_get(cfg, "trained_betas");
    if (tb && tb->type != SDP_JSON_NULL) {
        if (tb->type != SDP_JSON_ARRAY || tb->n != (size_t)N) {
            snprintf(err, errcap, "%s: trained_betas must be an array of num_train_timesteps (%d) numbers", path, N);
            goto fail;
        }
        for (int i = 0; i < N; i++) {
            if (tb->items[i]->type != SDP_JSON_NUMBER) {
                snprintf(err, errcap, "%s: trained_betas[%d] is not a number", path, i);
                goto fail;
            }
            betas[i] = (float)tb->items[i]->num;
        }
    } else if (strcmp(schedule, "linear") == 0) {
        linspace_f32((float)beta_start, (float)beta_end, N, betas);
    } else if (strcmp(schedule, "scaled_linear") == 0) {
        linspace_f32((float)sqrt(beta_start), (float)sqrt(beta_end), N, betas);
        for (int i = 0; i < N; i++) betas[i] = betas[i] * betas[i];
    } else if (strcmp(schedule, "squaredcos_cap_v2") == 0) {
        s->squaredcos = 1;
        for (int i = 0; i < N; i++) {
            double t1 = (double)i / N, t2 = (double)(i + 1) / N;
            double a1 = cos((t1 + 0.008) / 1.008 * M_PI / 2), a2 = cos((t2 + 0.008) / 1.008 * M_PI / 2);
            double b = 1 - (a2 * a2) / (a1 * a1);
            betas[i] = (float)(b < 0.999 ? b : 0.999);
        }
    } else {
        snprintf(err, errcap, "%s: beta_schedule \"%s\" is not one of linear, scaled_linear, squaredcos_cap_v2",
                 path, schedule);
        goto fail;
    }
    double acc = 1.0; /* torch.cumprod accumulates float32 in double on the CPU */
    for (int i = 0; i < N; i++) {
        float alpha = 1.0f - betas[i];
        acc *= (double)alpha;
        s->alphas_cumprod[i] = (float)acc;
        float a = s->alphas_cumprod[i];
        s->train_sigmas[i] = sqrtf((1.0f - a) / a);
    }
    s->final_alpha_cumprod = set_alpha_to_one != 0 ? 1.0f : s->alphas_cumprod[0];
    free(betas);
    sdp_json_free(cfg);
    *out = s;
    return 0;
nomem:
    snprintf(err, errcap, "%s: out of memory", path);
fail:
    free(betas);
    sdp_sched_free(s);
    sdp_json_free(cfg);
    return -1;
}

void sdp_sched_free(struct sdp_scheduler *s)
{
    if (!s) return;
    free(s->alphas_cumprod);
    free(s->train_sigmas);
    free(s->timesteps);
    free(s->sigmas);
    free(s->prev_x0);
    free(s);
}

/* np.arange(start, 0, -step) length, as numpy computes it. */
static int arange_len(double start, double step) { return (int)ceil((0.0 - start) / -step); }

int sdp_sched_set_timesteps(struct sdp_scheduler *s, int n, char *err, size_t errcap)
{
    int N = s->n_train;
    if (n < 1 || n > N) {
        snprintf(err, errcap, "--steps %d: must be in [1, %d] (num_train_timesteps)", n, N);
        return -1;
    }
    free(s->timesteps);
    free(s->sigmas);
    s->timesteps = NULL;
    s->sigmas = NULL;
    double *ts = calloc((size_t)n + 2, sizeof *ts);
    float *sig = calloc((size_t)n + 2, sizeof *sig);
    double *logs = malloc((size_t)N * sizeof *logs), *tmp = malloc(((size_t)n + 2) * sizeof *tmp);
    if (!ts || !sig || !logs || !tmp) {
        free(ts), free(sig), free(logs), free(tmp);
        snprintf(err, errcap, "scheduler: out of memory");
        return -1;
    }
    for (int i = 0; i < N; i++) logs[i] = log((double)s->train_sigmas[i]);
    int count = n;
    switch (s->kind) {
    case SDP_SCHED_EULER:
    case SDP_SCHED_EULER_A:
        if (s->spacing == SDP_SPACING_LINSPACE) {
            for (int i = 0; i < n; i++) { /* np.linspace(0, N-1, n), then float32 */
                double v = n > 1 ? i * ((double)(N - 1) / (n - 1)) : 0;
                if (n > 1 && i == n - 1) v = N - 1;
                ts[n - 1 - i] = (float)v;
            }
        } else if (s->spacing == SDP_SPACING_LEADING) {
            int ratio = N / n;
            for (int i = 0; i < n; i++) ts[n - 1 - i] = (float)((double)i * ratio) + (float)s->steps_offset;
        } else {
            double ratio = (double)N / n;
            count = arange_len(N, ratio);
            if (count > n + 1) count = n + 1;
            for (int i = 0; i < count; i++) ts[i] = (float)nearbyint(N - i * ratio) - 1.0f;
        }
        for (int i = 0; i < count; i++) tmp[i] = interp(ts[i], s->train_sigmas, N);
        if (s->karras && s->kind == SDP_SCHED_EULER) {
            /* in_sigmas[-1].item(), in_sigmas[0].item(): the float64 interp output */
            double smin = isnan(s->sigma_min) ? tmp[count - 1] : s->sigma_min;
            double smax = isnan(s->sigma_max) ? tmp[0] : s->sigma_max;
            count = n;
            karras(smin, smax, count, tmp);
            for (int i = 0; i < count; i++) ts[i] = (float)sigma_to_t(tmp[i], logs, N);
        }
        for (int i = 0; i < count; i++) sig[i] = (float)tmp[i];
        sig[count] = 0.0f;
        break;
    case SDP_SCHED_DPMPP_2M:
        if (s->spacing == SDP_SPACING_LINSPACE) {
            for (int i = 0; i <= n; i++) {
                double v = i * ((double)(N - 1) / n);
                if (i == n) v = N - 1;
                if (i > 0) ts[n - i] = nearbyint(v);
            }
        } else if (s->spacing == SDP_SPACING_LEADING) {
            int ratio = N / (n + 1);
            for (int i = 1; i <= n; i++) ts[n - i] = (double)i * ratio + s->steps_offset;
        } else {
            double ratio = (double)N / n;
            count = arange_len(N, ratio);
            if (count > n + 1) count = n + 1;
            for (int i = 0; i < count; i++) ts[i] = nearbyint(N - i * ratio) - 1;
        }
        if (s->karras) {
            count = n;
            karras(s->train_sigmas[0], s->train_sigmas[N - 1], count, tmp);
            for (int i = 0; i < count; i++) {
                double t = sigma_to_t(tmp[i], logs, N);
                ts[i] = s->squaredcos ? t : nearbyint(t);
                ts[i] = (double)(int64_t)ts[i]; /* int64 timesteps */
                sig[i] = (float)tmp[i];
            }
        } else {
            for (int i = 0; i < count; i++) sig[i] = (float)interp(ts[i], s->train_sigmas, N);
        }
        sig[count] = 0.0f;
        break;
    case SDP_SCHED_DDIM:
        if (s->spacing == SDP_SPACING_LINSPACE) {
            for (int i = 0; i < n; i++) {
                double v = n > 1 ? i * ((double)(N - 1) / (n - 1)) : 0;
                if (n > 1 && i == n - 1) v = N - 1;
                ts[n - 1 - i] = nearbyint(v);
            }
        } else if (s->spacing == SDP_SPACING_LEADING) {
            int ratio = N / n;
            for (int i = 0; i < n; i++) ts[n - 1 - i] = (double)i * ratio + s->steps_offset;
        } else {
            double ratio = (double)N / n;
            count = arange_len(N, ratio);
            if (count > n + 1) count = n + 1;
            for (int i = 0; i < count; i++) ts[i] = nearbyint(N - i * ratio) - 1;
        }
        break;
    case SDP_SCHED_LCM: {
        int orig = s->original_steps;
        if (orig < 1 || orig > N) {
            snprintf(err, errcap, "scheduler: original_inference_steps %d not in [1, %d]", orig, N);
            goto bad;
        }
        if (n > orig) {
            snprintf(err, errcap, "--steps %d: LCM allows at most original_inference_steps = %d", n, orig);
            goto bad;
        }
        int k = N / orig;
        for (int i = 0; i < n; i++) {
            double idx = floor(i * ((double)orig / n));
            int j = (int)idx; /* index into the reversed list (k*orig-1, ..., k-1) */
            ts[i] = (double)((orig - j) * k - 1);
        }
        break;
    }
    }
    s->n_steps = count;
    s->timesteps = ts;
    s->sigmas = sig;
    /* index_for_timestep: the first step takes the second occurrence of timesteps[0] if any */
    s->first_index = 0;
    if (s->kind != SDP_SCHED_DDIM)
        for (int i = 1; i < count; i++)
            if (ts[i] == ts[0]) {
                s->first_index = i;
                break;
            }
    float maxs = 0;
    for (int i = 0; i <= count; i++) maxs = sig[i] > maxs ? sig[i] : maxs;
    if (s->kind == SDP_SCHED_EULER || s->kind == SDP_SCHED_EULER_A)
        s->init_noise_sigma = s->spacing == SDP_SPACING_LEADING ? sqrtf(maxs * maxs + 1.0f) : maxs;
    else
        s->init_noise_sigma = 1.0f;
    s->lower_order_nums = 0;
    free(logs);
    free(tmp);
    return 0;
bad:
    free(ts), free(sig), free(logs), free(tmp);
    return -1;
}

float sdp_sched_timestep(const struct sdp_scheduler *s, int i) { return (float)s->timesteps[i]; }

void sdp_sched_scale_input(const struct sdp_scheduler *s, int i, const float *x, float *out, size_t n)
{
    if (s->kind == SDP_SCHED_EULER || s->kind == SDP_SCHED_EULER_A) {
        float sigma = s->sigmas[s->first_index + i];
        float d = sqrtf(sigma * sigma + 1.0f);
        for (size_t k = 0; k < n; k++) out[k] = x[k] / d;
    } else if (out != x) {
        memcpy(out, x, n * sizeof *out);
    }
}

/* pred_original_sample of the Euler family (sigma-space). */
static void euler_x0(const struct sdp_scheduler *s, float sigma, const float *m, const float *x,
                     float *x0, size_t n)
{
    if (s->pred == SDP_PRED_EPSILON) {
        for (size_t k = 0; k < n; k++) x0[k] = x[k] - sigma * m[k];
    } else if (s->pred == SDP_PRED_V) {
        float s2 = sigma * sigma + 1.0f, c_out = -sigma / sqrtf(s2);
        for (size_t k = 0; k < n; k++) x0[k] = m[k] * c_out + x[k] / s2;
    } else {
        memcpy(x0, m, n * sizeof *x0);
    }
}

/* alpha_t, sigma_t of DPM-Solver from a sigma. */
static void dpm_alpha_sigma(float sigma, float *alpha_t, float *sigma_t)
{
    *alpha_t = 1.0f / sqrtf(sigma * sigma + 1.0f);
    *sigma_t = sigma * *alpha_t;
}

int sdp_sched_step(struct sdp_scheduler *s, int i, const float *m, float *x, size_t n,
                   struct sdp_rng *rng)
{
    int si = s->first_index + i; /* step_index */
    float *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return -1;
    switch (s->kind) {
    case SDP_SCHED_EULER: {
        float sigma = s->sigmas[si], sigma_hat = sigma * 1.0f;
        euler_x0(s, sigma_hat, m, x, tmp, n);
        float dt = s->sigmas[si + 1] - sigma_hat;
        for (size_t k = 0; k < n; k++) {
            float d = (x[k] - tmp[k]) / sigma_hat;
            x[k] = x[k] + d * dt;
        }
        break;
    }
    case SDP_SCHED_EULER_A: {
        float sigma = s->sigmas[si], from = sigma, to = s->sigmas[si + 1];
        euler_x0(s, sigma, m, x, tmp, n);
        float up = sqrtf(to * to * (from * from - to * to) / (from * from));
        float down = sqrtf(to * to - up * up), dt = down - sigma;
        for (size_t k = 0; k < n; k++) {
            float d = (x[k] - tmp[k]) / sigma;
            x[k] = x[k] + d * dt;
        }
        sdp_rng_randn(rng, tmp, n);
        for (size_t k = 0; k < n; k++) x[k] = x[k] + tmp[k] * up;
        break;
    }
    case SDP_SCHED_DPMPP_2M: {
        if (s->prev_n != n) {
            free(s->prev_x0);
            s->prev_x0 = malloc(n * sizeof *s->prev_x0);
            s->prev_n = n;
            if (!s->prev_x0) {
                s->prev_n = 0;
                free(tmp);
                return -1;
            }
        }
        int last = si == s->n_steps - 1; /* final_sigmas_type "zero": first order at the end */
        float a_s0, s_s0, a_t, s_t;
        dpm_alpha_sigma(s->sigmas[si], &a_s0, &s_s0);
        dpm_alpha_sigma(s->sigmas[si + 1], &a_t, &s_t);
        /* convert_model_output -> x0 (data prediction) into tmp */
        if (s->pred == SDP_PRED_EPSILON)
            for (size_t k = 0; k < n; k++) tmp[k] = (x[k] - s_s0 * m[k]) / a_s0;
        else if (s->pred == SDP_PRED_V)
            for (size_t k = 0; k < n; k++) tmp[k] = a_s0 * x[k] - s_s0 * m[k];
        else
            memcpy(tmp, m, n * sizeof *tmp);
        float lam_t = logf(a_t) - logf(s_t), lam_s0 = logf(a_s0) - logf(s_s0);
        float h = lam_t - lam_s0, ratio = s_t / s_s0, c = a_t * (expf(-h) - 1.0f);
        if (s->lower_order_nums < 1 || last) {
            for (size_t k = 0; k < n; k++) x[k] = ratio * x[k] - c * tmp[k];
        } else {
            float a_s1, s_s1;
            dpm_alpha_sigma(s->sigmas[si - 1], &a_s1, &s_s1);
            float lam_s1 = logf(a_s1) - logf(s_s1);
            float h0 = lam_s0 - lam_s1, r0 = h0 / h, inv_r0 = 1.0f / r0, half_c = 0.5f * c;
            for (size_t k = 0; k < n; k++) {
                float d1 = inv_r0 * (tmp[k] - s->prev_x0[k]);
                x[k] = ratio * x[k] - c * tmp[k] - half_c * d1;
            }
        }
        memcpy(s->prev_x0, tmp, n * sizeof *tmp);
        if (s->lower_order_nums < 2) s->lower_order_nums++;
        break;
    }
    case SDP_SCHED_DDIM: {
        int t = (int)s->timesteps[i], prev = t - s->n_train / s->n_steps;
        float a_t = s->alphas_cumprod[t];
        float a_prev = prev >= 0 ? s->alphas_cumprod[prev] : s->final_alpha_cumprod;
        float b_t = 1.0f - a_t, sa = sqrtf(a_t), sb = sqrtf(b_t);
        float dir = sqrtf(1.0f - a_prev - 0.0f), sap = sqrtf(a_prev);
        for (size_t k = 0; k < n; k++) {
            float x0, eps;
            if (s->pred == SDP_PRED_EPSILON) x0 = (x[k] - sb * m[k]) / sa, eps = m[k];
            else if (s->pred == SDP_PRED_V) x0 = sa * x[k] - sb * m[k], eps = sa * m[k] + sb * x[k];
            else x0 = m[k], eps = (x[k] - sa * x0) / sb;
            if (s->clip_sample) x0 = x0 < -s->clip_range ? -s->clip_range : x0 > s->clip_range ? s->clip_range : x0;
            x[k] = sap * x0 + dir * eps;
        }
        break;
    }
    case SDP_SCHED_LCM: {
        int t = (int)s->timesteps[i];
        int prev_t = si + 1 < s->n_steps ? (int)s->timesteps[si + 1] : t;
        float a_t = s->alphas_cumprod[t];
        float a_prev = prev_t >= 0 ? s->alphas_cumprod[prev_t] : s->final_alpha_cumprod;
        float b_t = 1.0f - a_t, b_prev = 1.0f - a_prev;
        double st = t * s->timestep_scaling;
        float c_skip = (float)(0.25 / (st * st + 0.25)), c_out = (float)(st / sqrt(st * st + 0.25));
        float sa = sqrtf(a_t), sb = sqrtf(b_t);
        for (size_t k = 0; k < n; k++) {
            float x0;
            if (s->pred == SDP_PRED_EPSILON) x0 = (x[k] - sb * m[k]) / sa;
            else if (s->pred == SDP_PRED_V) x0 = sa * x[k] - sb * m[k];
            else x0 = m[k];
            if (s->clip_sample) x0 = x0 < -s->clip_range ? -s->clip_range : x0 > s->clip_range ? s->clip_range : x0;
            tmp[k] = c_out * x0 + c_skip * x[k];
        }
        if (si != s->n_steps - 1) {
            float *noise = malloc(n * sizeof *noise);
            if (!noise) {
                free(tmp);
                return -1;
            }
            sdp_rng_randn(rng, noise, n);
            float sap = sqrtf(a_prev), sbp = sqrtf(b_prev);
            for (size_t k = 0; k < n; k++) x[k] = sap * tmp[k] + sbp * noise[k];
            free(noise);
        } else {
            memcpy(x, tmp, n * sizeof *x);
        }
        break;
    }
    }
    free(tmp);
    return 0;
}

int sdp_sched_add_noise(const struct sdp_scheduler *s, int idx, const float *x0, const float *noise, float *out,
                        size_t n)
{
    if (idx < 0 || idx >= s->n_steps) return -1;
    switch (s->kind) {
    case SDP_SCHED_EULER:
    case SDP_SCHED_EULER_A: {
        float sigma = s->sigmas[idx];
        for (size_t k = 0; k < n; k++) out[k] = x0[k] + noise[k] * sigma;
        return 0;
    }
    case SDP_SCHED_DPMPP_2M: {
        float sigma = s->sigmas[idx], a_t, s_t;
        dpm_alpha_sigma(sigma, &a_t, &s_t);
        for (size_t k = 0; k < n; k++) out[k] = a_t * x0[k] + s_t * noise[k];
        return 0;
    }
    case SDP_SCHED_DDIM:
    case SDP_SCHED_LCM: {
        int t = (int)s->timesteps[idx];
        if (t < 0 || t >= s->n_train) return -1;
        float a = s->alphas_cumprod[t], sa = sqrtf(a), sb = sqrtf(1.0f - a);
        for (size_t k = 0; k < n; k++) out[k] = sa * x0[k] + sb * noise[k];
        return 0;
    }
    default: /* kinds without a port of add_noise */
        return -1;
    }
}
