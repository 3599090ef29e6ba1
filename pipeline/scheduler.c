/* scheduler.c — diffusers 0.42's samplers (see scheduler.h for the list, what is matched and how).
 *
 * Assumes: IEEE float32/float64, round to nearest; compiled with -ffp-contract=off so float
 * expressions round like torch's element-wise kernels. Guarantees: set_timesteps reproduces
 * diffusers' timesteps and sigmas, step() its updates (tests/pipeline/test_scheduler.c against
 * traces of diffusers).
 */
#include "scheduler.h"
#include "json_file.h"
#include "torch_rng.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"euler", "euler_a", "dpmpp_2m", "ddim", "lcm", "pndm", "lms", "heun",
                                         "dpm2", "dpm2_a", "dpmpp_2m_sde", "dpmpp_3m_sde", "unipc", "deis", "ddpm",
                                         "tcd", "flow_euler"};
/* The diffusers class each kind ports (same order as kind_names). */
static const char *const kind_classes[] = {
    "EulerDiscreteScheduler", "EulerAncestralDiscreteScheduler", "DPMSolverMultistepScheduler", "DDIMScheduler",
    "LCMScheduler", "PNDMScheduler", "LMSDiscreteScheduler", "HeunDiscreteScheduler", "KDPM2DiscreteScheduler",
    "KDPM2AncestralDiscreteScheduler", "DPMSolverMultistepScheduler", "DPMSolverMultistepScheduler",
    "UniPCMultistepScheduler", "DEISMultistepScheduler", "DDPMScheduler", "TCDScheduler",
    "FlowMatchEulerDiscreteScheduler"};
/* A1111's sampler name of each kind (same order). */
static const char *const kind_a1111[] = {"Euler", "Euler a", "DPM++ 2M", "DDIM", "LCM", "PLMS", "LMS", "Heun", "DPM2",
                                         "DPM2 a", "DPM++ 2M SDE", "DPM++ 3M SDE", "UniPC", "DEIS", "DDPM", "TCD", "Euler"};
#define N_KINDS ((int)(sizeof kind_names / sizeof *kind_names))

#define K(k) (1u << SDP_SCHED_##k)
#define DPMF (K(DPMPP_2M) | K(DPMPP_2M_SDE) | K(DPMPP_3M_SDE))
/* classes whose set_timesteps takes use_karras/exponential/beta_sigmas */
#define SIGMA_CONV (K(EULER) | K(LMS) | K(HEUN) | K(DPM2) | K(DPM2_A) | DPMF | K(UNIPC) | K(DEIS) | K(FLOW_EULER))
/* sigma-space classes: scale_model_input divides by sqrt(sigma^2 + 1) */
#define SIGMA_SPACE (K(EULER) | K(EULER_A) | K(LMS) | K(HEUN) | K(DPM2) | K(DPM2_A))
#define IS(s, mask) (((1u << (s)->kind) & (mask)) != 0)

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
    for (int k = 0; k < N_KINDS; k++) /* the first match: DPMSolverMultistepScheduler -> dpmpp_2m */
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

/* ---- schedule arithmetic (numpy/torch in double or float32, as diffusers) ---- */

/* torch.linspace(start, end, n, dtype=float32) on the CPU. */
static void linspace_f32(float start, float end, int n, float *out)
{
    float step = n > 1 ? (end - start) / (float)(n - 1) : 0.0f;
    int half = n / 2;
    for (int i = 0; i < n; i++)
        out[i] = i < half ? start + step * (float)i : end - step * (float)(n - i - 1);
}

/* np.linspace(a, b, n)[i] in double. */
static double np_linspace(double a, double b, int n, int i)
{
    if (n == 1) return a;
    if (i == n - 1) return b;
    double step = (b - a) / (n - 1);
    return i * step + a;
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

/* _sigma_to_t: the (fractional) training timestep of sigma, interpolating in log sigma
 * (log_sigmas: np.log of the float32 training sigmas, float32 values). */
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

/* _sigma_to_t on a float32 tensor sigma against the float32 log_sigmas tensor (KDPM2's
 * timesteps_interpol): log, distances, weights and t all in float32 as torch computes them. */
static double sigma_to_t_f32(float sigma, const double *log_sigmas, int n)
{
    float ls = (float)log(sigma > 1e-10f ? (double)sigma : 1e-10);
    int cnt = 0, low = 0, best = -1;
    for (int i = 0; i < n; i++) {
        cnt += ls - (float)log_sigmas[i] >= 0;
        if (cnt > best) best = cnt, low = i;
    }
    if (low > n - 2) low = n - 2;
    float lo = (float)log_sigmas[low], hi = (float)log_sigmas[low + 1];
    float w = (lo - ls) / (lo - hi);
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    return (1.0f - w) * (float)low + w * (float)(low + 1);
}

/* _convert_to_karras: n sigmas from sigma_max down to sigma_min, rho = 7. */
static void karras(double smin, double smax, int n, double *out)
{
    double rho = 7.0, min_inv = pow(smin, 1 / rho), max_inv = pow(smax, 1 / rho);
    for (int i = 0; i < n; i++) {
        double ramp = np_linspace(0, 1, n, i);
        out[i] = pow(max_inv + ramp * (min_inv - max_inv), rho);
    }
}

/* _convert_to_exponential: exp(linspace(log smax, log smin, n)). */
static void exponential(double smin, double smax, int n, double *out)
{
    for (int i = 0; i < n; i++) out[i] = exp(np_linspace(log(smax), log(smin), n, i));
}

/* Regularized incomplete beta I_x(a, b) (continued fraction, Lentz), double. */
static double betacf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < 1e-300) d = 1e-300;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < 1e-300) d = 1e-300;
        c = 1 + aa / c;
        if (fabs(c) < 1e-300) c = 1e-300;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < 1e-300) d = 1e-300;
        c = 1 + aa / c;
        if (fabs(c) < 1e-300) c = 1e-300;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16) break;
    }
    return h;
}

static double ibeta(double a, double b, double x)
{
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    double bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a;
    return 1 - bt * betacf(b, a, 1 - x) / b;
}

/* scipy.stats.beta.ppf(p, a, b) by bisection on I_x (to double resolution). */
static double beta_ppf(double p, double a, double b)
{
    if (p <= 0) return 0;
    if (p >= 1) return 1;
    double lo = 0, hi = 1;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        if (ibeta(a, b, mid) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* _convert_to_beta with alpha = beta = 0.6 (diffusers' fixed defaults). */
static void beta_sigmas(double smin, double smax, int n, double *out)
{
    for (int i = 0; i < n; i++) {
        double ppf = beta_ppf(1 - np_linspace(0, 1, n, i), 0.6, 0.6);
        out[i] = smin + ppf * (smax - smin);
    }
}

static void convert_sigmas(enum sdp_sigmas k, double smin, double smax, int n, double *out)
{
    if (k == SDP_SIGMAS_KARRAS) karras(smin, smax, n, out);
    else if (k == SDP_SIGMAS_EXPONENTIAL) exponential(smin, smax, n, out);
    else beta_sigmas(smin, smax, n, out);
}

/* ---- scheduler_config.json (cJSON) ---- */

/* Reads an optional number (or bool); 1 = present, 0 = absent or null, -1 = wrong type (err set). */
static int get_num(const cJSON *cfg, const char *key, double *v, const char *path, char *err, size_t errcap)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(cfg, key);
    if (!j || cJSON_IsNull(j)) return 0;
    if (cJSON_IsBool(j)) {
        *v = cJSON_IsTrue(j) ? 1 : 0;
        return 1;
    }
    if (!cJSON_IsNumber(j)) {
        snprintf(err, errcap, "%s: \"%s\" must be a number", path, key);
        return -1;
    }
    *v = j->valuedouble;
    return 1;
}

static int get_str(const cJSON *cfg, const char *key, const char **v, const char *path, char *err, size_t errcap)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(cfg, key);
    if (!j || cJSON_IsNull(j)) return 0;
    if (!cJSON_IsString(j)) {
        snprintf(err, errcap, "%s: \"%s\" must be a string", path, key);
        return -1;
    }
    *v = j->valuestring;
    return 1;
}

/* Config keys that change the arithmetic in ways not ported: a value other than the one given
 * here is refused (naming the key) instead of being ignored. kinds: bit mask of the classes that
 * read the key (diffusers ignores keys a class does not take). */
static const struct {
    const char *key; /* scheduler_config.json key */
    unsigned kinds;  /* 1 << enum sdp_sched_kind */
    const char *str; /* accepted string value, or NULL for a number/bool */
    double num;      /* accepted number/bool value */
} unsupported[] = {
    {"rescale_betas_zero_snr", ~0u, NULL, 0},
    {"thresholding", DPMF | K(DDIM) | K(LCM) | K(UNIPC) | K(DEIS) | K(DDPM) | K(TCD), NULL, 0},
    {"interpolation_type", K(EULER), "linear", 0},
    {"timestep_type", K(EULER), "discrete", 0},
    {"final_sigmas_type", K(EULER) | DPMF | K(UNIPC), "zero", 0},
    {"use_lu_lambdas", DPMF, NULL, 0},
    {"use_flow_sigmas", DPMF | K(UNIPC) | K(DEIS), NULL, 0},
    {"use_dynamic_shifting", DPMF | K(UNIPC) | K(DEIS), NULL, 0},
    {"variance_type", DPMF, "", 0},
    {"lambda_min_clipped", DPMF, NULL, -INFINITY},
    {"predict_x0", K(UNIPC), NULL, 1},
    {"algorithm_type", K(DEIS), "deis", 0},
    {"solver_type", K(DEIS), "logrho", 0},
};

static int check_unsupported(const cJSON *cfg, enum sdp_sched_kind kind, const char *path, char *err,
                             size_t errcap)
{
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        if (!(unsupported[i].kinds & (1u << kind))) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, unsupported[i].key);
        if (!v || cJSON_IsNull(v)) continue;
        double num = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : cJSON_IsNumber(v) ? v->valuedouble : NAN;
        int ok = unsupported[i].str ? cJSON_IsString(v) && strcmp(v->valuestring, unsupported[i].str) == 0
                                    : num == unsupported[i].num;
        if (!ok) {
            if (unsupported[i].str)
                snprintf(err, errcap, "%s: \"%s\" other than \"%s\" is not supported by %s (%s)", path,
                         unsupported[i].key, unsupported[i].str, kind_names[kind], kind_classes[kind]);
            else
                snprintf(err, errcap, "%s: \"%s\" other than %g is not supported by %s (%s)", path,
                         unsupported[i].key, unsupported[i].num, kind_names[kind], kind_classes[kind]);
            return -1;
        }
    }
    if (kind == SDP_SCHED_UNIPC) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, "disable_corrector");
        if (v && !cJSON_IsNull(v) && !(cJSON_IsArray(v) && cJSON_GetArraySize(v) == 0)) {
            snprintf(err, errcap, "%s: \"disable_corrector\" other than [] is not supported by unipc", path);
            return -1;
        }
        v = cJSON_GetObjectItemCaseSensitive(cfg, "solver_p");
        if (v && !cJSON_IsNull(v)) {
            snprintf(err, errcap, "%s: \"solver_p\" is not supported by unipc", path);
            return -1;
        }
    }
    return 0;
}

/* FlowMatchEulerDiscreteScheduler.from_config(cfg, **overrides): every key of the class read, any
 * other refused by name; __init__'s sigma_min / sigma_max. */
static int load_flow(const cJSON *cfg, const char *path, const struct sdp_sched_overrides *ov, struct sdp_scheduler *s,
                     char *err, size_t errcap)
{
    static const char *const keys[] = {"num_train_timesteps", "shift", "use_dynamic_shifting", "base_shift",
                                       "max_shift", "base_image_seq_len", "max_image_seq_len", "invert_sigmas",
                                       "shift_terminal", "use_karras_sigmas", "use_exponential_sigmas",
                                       "use_beta_sigmas", "time_shift_type", "stochastic_sampling"};
    const cJSON *it;
    cJSON_ArrayForEach(it, cfg)
    {
        if (!it->string || it->string[0] == '_') continue; /* _class_name, _diffusers_version, ... */
        size_t k = 0;
        while (k < sizeof keys / sizeof *keys && strcmp(it->string, keys[k])) k++;
        if (k == sizeof keys / sizeof *keys) {
            snprintf(err, errcap, "%s: \"%s\" is not a key of FlowMatchEulerDiscreteScheduler (flow_euler): not "
                     "supported (keys: num_train_timesteps, shift, use_dynamic_shifting, base_shift, max_shift, "
                     "base_image_seq_len, max_image_seq_len, invert_sigmas, shift_terminal, use_karras_sigmas, "
                     "use_exponential_sigmas, use_beta_sigmas, time_shift_type, stochastic_sampling)", path,
                     it->string);
            return -1;
        }
    }
    double n_train = 1000, shift = 1, dyn = 0, base_shift = 0.5, max_shift = 1.15, base_seq = 256, max_seq = 4096;
    double inv = 0, term = 0, karras_on = 0, exp_on = 0, beta_on = 0, stoch = 0;
    const char *tst = "exponential";
    if (get_num(cfg, "num_train_timesteps", &n_train, path, err, errcap) < 0 ||
        get_num(cfg, "shift", &shift, path, err, errcap) < 0 ||
        get_num(cfg, "use_dynamic_shifting", &dyn, path, err, errcap) < 0 ||
        get_num(cfg, "base_shift", &base_shift, path, err, errcap) < 0 ||
        get_num(cfg, "max_shift", &max_shift, path, err, errcap) < 0 ||
        get_num(cfg, "base_image_seq_len", &base_seq, path, err, errcap) < 0 ||
        get_num(cfg, "max_image_seq_len", &max_seq, path, err, errcap) < 0 ||
        get_num(cfg, "invert_sigmas", &inv, path, err, errcap) < 0 ||
        get_num(cfg, "shift_terminal", &term, path, err, errcap) < 0 ||
        get_num(cfg, "use_karras_sigmas", &karras_on, path, err, errcap) < 0 ||
        get_num(cfg, "use_exponential_sigmas", &exp_on, path, err, errcap) < 0 ||
        get_num(cfg, "use_beta_sigmas", &beta_on, path, err, errcap) < 0 ||
        get_num(cfg, "stochastic_sampling", &stoch, path, err, errcap) < 0 ||
        get_str(cfg, "time_shift_type", &tst, path, err, errcap) < 0)
        return -1;
    if (n_train < 2 || n_train > 100000 || n_train != floor(n_train)) {
        snprintf(err, errcap, "%s: num_train_timesteps %g is not an integer in [2, 100000]", path, n_train);
        return -1;
    }
    if (!(shift > 0) || !isfinite(shift)) {
        snprintf(err, errcap, "%s: \"shift\" %g must be > 0 (sigma' = shift sigma / (1 + (shift - 1) sigma))", path,
                 shift);
        return -1;
    }
    if (strcmp(tst, "exponential") && strcmp(tst, "linear")) {
        snprintf(err, errcap, "%s: \"time_shift_type\" \"%s\" is not one of exponential, linear", path, tst);
        return -1;
    }
    if (dyn != 0) { /* calculate_shift reads these (a null would fail in diffusers) */
        static const char *const dk[] = {"base_shift", "max_shift", "base_image_seq_len", "max_image_seq_len"};
        for (size_t k = 0; k < 4; k++) {
            const cJSON *j = cJSON_GetObjectItemCaseSensitive(cfg, dk[k]);
            if (j && cJSON_IsNull(j)) {
                snprintf(err, errcap, "%s: \"%s\" is null: use_dynamic_shifting's calculate_shift needs a number",
                         path, dk[k]);
                return -1;
            }
        }
        if (!isfinite(base_shift) || !isfinite(max_shift) || !isfinite(base_seq) || !isfinite(max_seq) ||
            base_seq == max_seq) {
            snprintf(err, errcap, "%s: base_image_seq_len %g and max_image_seq_len %g must differ (calculate_shift "
                     "divides by max - base)", path, base_seq, max_seq);
            return -1;
        }
    }
    if (term != 0 && !(term > 0 && term < 1)) {
        snprintf(err, errcap, "%s: \"shift_terminal\" %g is not in (0, 1) (null or 0: none)", path, term);
        return -1;
    }
    if ((karras_on != 0) + (exp_on != 0) + (beta_on != 0) > 1 && !(ov && ov->sigmas != SDP_SIGMAS_CONFIG)) {
        snprintf(err, errcap, "%s: only one of use_karras_sigmas, use_exponential_sigmas, use_beta_sigmas may be true", path);
        return -1;
    }
    if (ov && (ov->spacing || ov->prediction_type)) {
        snprintf(err, errcap, "%s: flow_euler (FlowMatchEulerDiscreteScheduler) has no %s (flow matching)",
                 ov->spacing ? "--timestep-spacing / schedule type" : "--prediction-type",
                 ov->spacing ? "timestep_spacing" : "prediction_type");
        return -1;
    }
    enum sdp_sigmas sk = karras_on != 0 ? SDP_SIGMAS_KARRAS : exp_on != 0 ? SDP_SIGMAS_EXPONENTIAL
                         : beta_on != 0 ? SDP_SIGMAS_BETA : SDP_SIGMAS_DEFAULT;
    if (ov && ov->karras == 1) sk = SDP_SIGMAS_KARRAS;
    else if (ov && ov->karras == 0 && sk == SDP_SIGMAS_KARRAS) sk = SDP_SIGMAS_DEFAULT;
    if (ov && ov->sigmas != SDP_SIGMAS_CONFIG) sk = ov->sigmas;
    s->sigma_kind = sk;
    s->karras = sk == SDP_SIGMAS_KARRAS;
    s->n_train = (int)n_train;
    s->shift = shift;
    s->dyn_shift = dyn != 0;
    s->base_shift = base_shift, s->max_shift = max_shift, s->base_seq = base_seq, s->max_seq = max_seq;
    s->time_shift_linear = strcmp(tst, "linear") == 0;
    s->invert_sigmas = inv != 0;
    s->shift_terminal = term;
    s->stochastic = stoch != 0;
    s->sigma_min = s->sigma_max = NAN;
    s->eta = ov ? ov->eta : 0.0f;
    /* __init__: sigmas = linspace(1, N, N, float32)[::-1] / N (float32), shifted when not dynamic */
    int N = s->n_train;
    float smax = (float)N / (float)N, smin = 1.0f / (float)N;
    if (!s->dyn_shift) {
        float sh = (float)shift, sh1 = (float)(shift - 1.0);
        smax = sh * smax / (1.0f + sh1 * smax);
        smin = sh * smin / (1.0f + sh1 * smin);
    }
    s->flow_sigma_max = smax, s->flow_sigma_min = smin;
    return 0;
}

int sdp_sched_load(const char *path, enum sdp_sched_kind kind, const struct sdp_sched_overrides *ov,
                   struct sdp_scheduler **out, char *err, size_t errcap)
{
    *out = NULL;
    cJSON *cfg = sdp_json_file(path, err, errcap);
    if (!cfg) return -1;
    struct sdp_scheduler *s = calloc(1, sizeof *s);
    float *betas = NULL;
    if (!s) goto nomem;
    if (!cJSON_IsObject(cfg)) {
        snprintf(err, errcap, "%s: expected a JSON object", path);
        goto fail;
    }
    {
        /* flow matching: "Euler" on a FlowMatchEulerDiscreteScheduler config is flow_euler */
        const cJSON *cn = cJSON_GetObjectItemCaseSensitive(cfg, "_class_name");
        const char *cls = cJSON_IsString(cn) ? cn->valuestring : NULL;
        int flow_cfg = cls && strcmp(cls, kind_classes[SDP_SCHED_FLOW_EULER]) == 0;
        if (flow_cfg && kind == SDP_SCHED_EULER) kind = SDP_SCHED_FLOW_EULER;
        if (flow_cfg && kind != SDP_SCHED_FLOW_EULER) {
            snprintf(err, errcap, "%s: _class_name %s is a flow-matching scheduler: of its samplers only Euler "
                     "(flow_euler) is ported, not %s (%s)", path, cls, kind_names[kind], kind_classes[kind]);
            goto fail;
        }
        if (kind == SDP_SCHED_FLOW_EULER) {
            if (cls && !flow_cfg) {
                snprintf(err, errcap, "%s: flow_euler (%s) takes a flow-matching config, not _class_name %s",
                         path, kind_classes[kind], cls);
                goto fail;
            }
            s->kind = kind;
            if (load_flow(cfg, path, ov, s, err, errcap)) goto fail;
            cJSON_Delete(cfg);
            *out = s;
            return 0;
        }
    }
    s->kind = kind;
    /* class defaults (diffusers 0.42) */
    int k_lcm = kind == SDP_SCHED_LCM || kind == SDP_SCHED_TCD, k_ddim = kind == SDP_SCHED_DDIM;
    int k_ddpm = kind == SDP_SCHED_DDPM;
    int k_kd = kind == SDP_SCHED_HEUN || kind == SDP_SCHED_DPM2 || kind == SDP_SCHED_DPM2_A;
    int has_clip = k_lcm || k_ddim || k_ddpm || kind == SDP_SCHED_HEUN;
    double n_train = 1000, beta_start = (k_lcm || k_kd) ? 0.00085 : 0.0001, beta_end = (k_lcm || k_kd) ? 0.012 : 0.02;
    double steps_offset = 0, set_alpha_to_one = kind == SDP_SCHED_PNDM ? 0 : 1;
    double clip_sample = (k_ddim || k_ddpm) ? 1 : 0, clip_range = 1;
    int clip_is_true = k_ddim || k_ddpm; /* `clip_sample is True` as the pipeline tests it */
    double karras_on = 0, exp_on = 0, beta_on = 0, original_steps = 50, ts_scaling = 10, skip_prk = 0;
    double solver_order = 2, lof = 1, eaf = 0;
    const char *schedule = k_lcm ? "scaled_linear" : "linear", *pred = "epsilon";
    const char *spacing = (k_ddim || k_lcm || k_ddpm || kind == SDP_SCHED_PNDM) ? "leading" : "linspace";
    const char *algo = kind == SDP_SCHED_DPMPP_2M_SDE || kind == SDP_SCHED_DPMPP_3M_SDE ? "sde-dpmsolver++" : "dpmsolver++";
    const char *stype = kind == SDP_SCHED_UNIPC ? "bh2" : "midpoint", *vtype = "fixed_small";
    s->sigma_min = s->sigma_max = NAN;
    double smin = 0, smax = 0; /* read below only where get_num found them */
    if (get_num(cfg, "num_train_timesteps", &n_train, path, err, errcap) < 0 ||
        get_num(cfg, "beta_start", &beta_start, path, err, errcap) < 0 ||
        get_num(cfg, "beta_end", &beta_end, path, err, errcap) < 0 ||
        get_num(cfg, "steps_offset", &steps_offset, path, err, errcap) < 0 ||
        get_num(cfg, "set_alpha_to_one", &set_alpha_to_one, path, err, errcap) < 0 ||
        get_num(cfg, "clip_sample_range", &clip_range, path, err, errcap) < 0 ||
        get_num(cfg, "use_karras_sigmas", &karras_on, path, err, errcap) < 0 ||
        get_num(cfg, "use_exponential_sigmas", &exp_on, path, err, errcap) < 0 ||
        get_num(cfg, "use_beta_sigmas", &beta_on, path, err, errcap) < 0 ||
        get_num(cfg, "original_inference_steps", &original_steps, path, err, errcap) < 0 ||
        get_num(cfg, "timestep_scaling", &ts_scaling, path, err, errcap) < 0 ||
        get_num(cfg, "skip_prk_steps", &skip_prk, path, err, errcap) < 0 ||
        get_num(cfg, "solver_order", &solver_order, path, err, errcap) < 0 ||
        get_num(cfg, "lower_order_final", &lof, path, err, errcap) < 0 ||
        get_num(cfg, "euler_at_final", &eaf, path, err, errcap) < 0 ||
        get_str(cfg, "beta_schedule", &schedule, path, err, errcap) < 0 ||
        get_str(cfg, "prediction_type", &pred, path, err, errcap) < 0 ||
        get_str(cfg, "timestep_spacing", &spacing, path, err, errcap) < 0 ||
        get_str(cfg, "solver_type", &stype, path, err, errcap) < 0 ||
        (k_ddpm && get_str(cfg, "variance_type", &vtype, path, err, errcap) < 0))
        goto fail;
    {
        const cJSON *cs = cJSON_GetObjectItemCaseSensitive(cfg, "clip_sample");
        if (cs && !cJSON_IsNull(cs)) {
            if (get_num(cfg, "clip_sample", &clip_sample, path, err, errcap) < 0) goto fail;
            clip_is_true = cJSON_IsTrue(cs);
        }
    }
    if (kind == SDP_SCHED_EULER || kind == SDP_SCHED_UNIPC) {
        int a = get_num(cfg, "sigma_min", &smin, path, err, errcap);
        int b = get_num(cfg, "sigma_max", &smax, path, err, errcap);
        if (a < 0 || b < 0) goto fail;
        if (a) s->sigma_min = smin;
        if (b) s->sigma_max = smax;
    }
    if (IS(s, DPMF)) {
        if (kind == SDP_SCHED_DPMPP_2M) {
            if (get_str(cfg, "algorithm_type", &algo, path, err, errcap) < 0) goto fail;
        } else {
            solver_order = kind == SDP_SCHED_DPMPP_3M_SDE ? 3 : 2; /* forced, as from_config(cfg, ...) */
        }
        if (strcmp(algo, "dpmsolver++") && strcmp(algo, "sde-dpmsolver++")) {
            snprintf(err, errcap, "%s: \"algorithm_type\" \"%s\" is not supported (dpmsolver++, sde-dpmsolver++)", path, algo);
            goto fail;
        }
        s->sde = strcmp(algo, "sde-dpmsolver++") == 0;
        if (kind == SDP_SCHED_DPMPP_2M) {
            if (s->sde && solver_order == 2) s->kind = kind = SDP_SCHED_DPMPP_2M_SDE;
            else if (s->sde && solver_order == 3) s->kind = kind = SDP_SCHED_DPMPP_3M_SDE;
            else if (s->sde || solver_order != 2) {
                snprintf(err, errcap, "%s: DPMSolverMultistepScheduler with algorithm_type \"%s\" and solver_order %g "
                         "is not supported (dpmsolver++ 2 = dpmpp_2m, sde-dpmsolver++ 2 = dpmpp_2m_sde, "
                         "sde-dpmsolver++ 3 = dpmpp_3m_sde)", path, algo, solver_order);
                goto fail;
            }
        }
        if (strcmp(stype, "midpoint") == 0) s->solver_heun = 0;
        else if (strcmp(stype, "heun") == 0) s->solver_heun = 1;
        else if (strcmp(stype, "logrho") == 0 || strcmp(stype, "bh1") == 0 || strcmp(stype, "bh2") == 0)
            s->solver_heun = 0; /* diffusers registers midpoint for these */
        else {
            snprintf(err, errcap, "%s: \"solver_type\" \"%s\" is not one of midpoint, heun", path, stype);
            goto fail;
        }
    }
    if (kind == SDP_SCHED_UNIPC) {
        /* bh1 with final_sigmas_type "zero" ends in B_h = -inf times 0: diffusers 0.42 returns NaN */
        if (strcmp(stype, "bh2") == 0) s->solver_heun = 0;
        else {
            snprintf(err, errcap, "%s: \"solver_type\" \"%s\" is not supported by unipc (bh2; diffusers' bh1 "
                     "with final_sigmas_type zero returns NaN at the last step)", path, stype);
            goto fail;
        }
        if (solver_order != 1 && solver_order != 2) {
            snprintf(err, errcap, "%s: \"solver_order\" %g is not supported by unipc (1, 2)", path, solver_order);
            goto fail;
        }
    }
    if ((kind == SDP_SCHED_DEIS) && (solver_order < 1 || solver_order > 3 || solver_order != floor(solver_order))) {
        snprintf(err, errcap, "%s: \"solver_order\" %g is not supported by deis (1, 2, 3)", path, solver_order);
        goto fail;
    }
    if (k_ddpm) {
        if (strcmp(vtype, "fixed_small") == 0) s->variance_type = 0;
        else if (strcmp(vtype, "fixed_small_log") == 0) s->variance_type = 1;
        else if (strcmp(vtype, "fixed_large") == 0) s->variance_type = 2;
        else {
            snprintf(err, errcap, "%s: \"variance_type\" \"%s\" is not supported by ddpm (fixed_small, "
                     "fixed_small_log, fixed_large)", path, vtype);
            goto fail;
        }
    }
    if (check_unsupported(cfg, kind, path, err, errcap)) goto fail;
    if (ov && ov->spacing) spacing = ov->spacing;
    if (ov && ov->prediction_type) pred = ov->prediction_type;
    enum sdp_sigmas sk = karras_on != 0 ? SDP_SIGMAS_KARRAS : exp_on != 0 ? SDP_SIGMAS_EXPONENTIAL
                         : beta_on != 0 ? SDP_SIGMAS_BETA : SDP_SIGMAS_DEFAULT;
    if ((karras_on != 0) + (exp_on != 0) + (beta_on != 0) > 1 && !(ov && ov->sigmas != SDP_SIGMAS_CONFIG)) {
        snprintf(err, errcap, "%s: only one of use_karras_sigmas, use_exponential_sigmas, use_beta_sigmas may be true", path);
        goto fail;
    }
    if (ov && ov->karras == 1) sk = SDP_SIGMAS_KARRAS;
    else if (ov && ov->karras == 0 && sk == SDP_SIGMAS_KARRAS) sk = SDP_SIGMAS_DEFAULT;
    if (ov && ov->sigmas != SDP_SIGMAS_CONFIG) sk = ov->sigmas;
    if (!IS(s, SIGMA_CONV)) {
        if (sk != SDP_SIGMAS_DEFAULT && ov && (ov->karras == 1 || (ov->sigmas != SDP_SIGMAS_CONFIG && ov->sigmas != SDP_SIGMAS_DEFAULT))) {
            snprintf(err, errcap, "%s (%s) takes no Karras/exponential/beta sigmas (euler, lms, heun, dpm2, dpm2_a, "
                     "dpmpp_2m, dpmpp_2m_sde, dpmpp_3m_sde, unipc, deis do)", kind_names[kind], kind_classes[kind]);
            goto fail;
        }
        sk = SDP_SIGMAS_DEFAULT; /* the class has no such key: diffusers ignores it */
    }
    s->sigma_kind = sk;
    s->karras = sk == SDP_SIGMAS_KARRAS;
    if (n_train < 2 || n_train > 100000 || n_train != floor(n_train)) {
        snprintf(err, errcap, "%s: num_train_timesteps %g is not an integer in [2, 100000]", path, n_train);
        goto fail;
    }
    s->n_train = (int)n_train;
    int no_sample = kind == SDP_SCHED_EULER_A || kind == SDP_SCHED_PNDM || kind == SDP_SCHED_DPM2 || kind == SDP_SCHED_DPM2_A;
    if (strcmp(pred, "epsilon") == 0) s->pred = SDP_PRED_EPSILON;
    else if (strcmp(pred, "v_prediction") == 0) s->pred = SDP_PRED_V;
    else if (strcmp(pred, "sample") == 0 && !no_sample) s->pred = SDP_PRED_SAMPLE;
    else {
        snprintf(err, errcap, "%s: prediction_type \"%s\" is not supported by %s (epsilon, v_prediction%s)",
                 ov && ov->prediction_type ? "--prediction-type" : path, pred, kind_names[kind], no_sample ? "" : ", sample");
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
    /* StableDiffusionPipeline.__init__: getattr(scheduler.config, "steps_offset", 1) != 1 -> 1;
     * getattr(scheduler.config, "clip_sample", False) is True -> False (every class here has
     * steps_offset; clip_sample only those listed in has_clip). */
    if (!(ov && ov->raw)) {
        if (steps_offset != 1) {
            fprintf(stderr, "scheduler: %s has steps_offset %g; set to 1 as diffusers' StableDiffusionPipeline "
                    "does (deprecated config)\n", path, steps_offset);
            steps_offset = 1;
        }
        if (has_clip && clip_is_true) {
            fprintf(stderr, "scheduler: %s: clip_sample is true for %s; set to false as diffusers' "
                    "StableDiffusionPipeline does (deprecated config)\n", path, kind_classes[kind]);
            clip_sample = 0;
        }
    }
    s->steps_offset = (int)steps_offset;
    s->clip_sample = has_clip && clip_sample != 0;
    s->clip_range = (float)clip_range;
    s->original_steps = (int)original_steps;
    s->timestep_scaling = ts_scaling;
    s->skip_prk = skip_prk != 0;
    s->solver_order = (int)solver_order;
    s->lower_order_final = lof != 0;
    s->euler_at_final = eaf != 0;
    s->eta = ov ? ov->eta : 0.0f;
    if (s->eta < 0 || s->eta > 1 || s->eta != s->eta) {
        snprintf(err, errcap, "--eta %g: must be in [0, 1]", (double)s->eta);
        goto fail;
    }

    int N = s->n_train;
    betas = malloc((size_t)N * sizeof *betas);
    s->alphas_cumprod = malloc((size_t)N * sizeof(float));
    s->train_sigmas = malloc((size_t)N * sizeof(float));
    if (!betas || !s->alphas_cumprod || !s->train_sigmas) goto nomem;
    const cJSON *tb = cJSON_GetObjectItemCaseSensitive(cfg, "trained_betas");
    if (tb && !cJSON_IsNull(tb)) {
        if (!cJSON_IsArray(tb) || cJSON_GetArraySize(tb) != N) {
            snprintf(err, errcap, "%s: trained_betas must be an array of num_train_timesteps (%d) numbers", path, N);
            goto fail;
        }
        int i = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, tb)
        {
            if (!cJSON_IsNumber(it)) {
                snprintf(err, errcap, "%s: trained_betas[%d] is not a number", path, i);
                goto fail;
            }
            betas[i++] = (float)it->valuedouble;
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
    cJSON_Delete(cfg);
    *out = s;
    return 0;
nomem:
    snprintf(err, errcap, "%s: out of memory", path);
fail:
    free(betas);
    sdp_sched_free(s);
    cJSON_Delete(cfg);
    return -1;
}

static void free_hist(struct sdp_scheduler *s)
{
    for (int k = 0; k < 6; k++) {
        free(s->hist[k]);
        s->hist[k] = NULL;
    }
    s->prev_n = 0;
}

void sdp_sched_free(struct sdp_scheduler *s)
{
    if (!s) return;
    free(s->alphas_cumprod);
    free(s->train_sigmas);
    free(s->timesteps);
    free(s->sigmas);
    free(s->sig2);
    free(s->sig_up);
    free(s->sig_down);
    free_hist(s);
    free(s);
}

/* np.arange(start, 0, -step) length, as numpy computes it. */
static int arange_len(double start, double step) { return (int)ceil((0.0 - start) / -step); }

/* exp(lerp(log a, log b, 0.5)) in float32 as torch: end - (end - start) * 0.5. */
static float log_mid(float a, float b)
{
    float la = logf(a), lb = logf(b);
    return expf(lb - (lb - la) * 0.5f);
}

/* The base timesteps of the discrete sigma-space classes (float32 values): count entries. */
static int sigma_family_timesteps(const struct sdp_scheduler *s, int n, double *ts)
{
    int N = s->n_train, count = n;
    if (s->spacing == SDP_SPACING_LINSPACE) {
        for (int i = 0; i < n; i++) ts[n - 1 - i] = (float)np_linspace(0, N - 1, n, i);
    } else if (s->spacing == SDP_SPACING_LEADING) {
        int ratio = N / n;
        for (int i = 0; i < n; i++) ts[n - 1 - i] = (float)((double)i * ratio) + (float)s->steps_offset;
    } else {
        double ratio = (double)N / n;
        count = arange_len(N, ratio);
        if (count > n + 1) count = n + 1;
        for (int i = 0; i < count; i++) ts[i] = (float)nearbyint(N - i * ratio) - 1.0f;
    }
    return count;
}

/* The int64 timesteps of DPM-Solver, UniPC, DEIS (n + 1 points, the last dropped). */
static int dpm_family_timesteps(const struct sdp_scheduler *s, int n, double *ts)
{
    int N = s->n_train, count = n;
    if (s->spacing == SDP_SPACING_LINSPACE) {
        for (int i = 1; i <= n; i++) ts[n - i] = nearbyint(np_linspace(0, N - 1, n + 1, i));
    } else if (s->spacing == SDP_SPACING_LEADING) {
        int ratio = N / (n + 1);
        for (int i = 1; i <= n; i++) ts[n - i] = (double)i * ratio + s->steps_offset;
    } else {
        double ratio = (double)N / n;
        count = arange_len(N, ratio);
        if (count > n + 1) count = n + 1;
        for (int i = 0; i < count; i++) ts[i] = nearbyint(N - i * ratio) - 1;
    }
    return count;
}

/* The int timesteps of DDIM, DDPM (descending), PNDM's _timesteps (ascending when asc). */
static int alpha_family_timesteps(const struct sdp_scheduler *s, int n, double *ts, int asc)
{
    int N = s->n_train, count = n;
    if (s->spacing == SDP_SPACING_LINSPACE) {
        for (int i = 0; i < n; i++) ts[n - 1 - i] = nearbyint(np_linspace(0, N - 1, n, i));
    } else if (s->spacing == SDP_SPACING_LEADING) {
        int ratio = N / n;
        for (int i = 0; i < n; i++) ts[n - 1 - i] = (double)i * ratio + s->steps_offset;
    } else {
        double ratio = (double)N / n;
        count = arange_len(N, ratio);
        for (int i = 0; i < count; i++) ts[i] = nearbyint(N - i * ratio) - 1;
    }
    if (asc)
        for (int i = 0; i < count / 2; i++) {
            double t = ts[i];
            ts[i] = ts[count - 1 - i], ts[count - 1 - i] = t;
        }
    return count;
}

double sdp_flow_calculate_shift(double image_seq_len, double base_seq_len, double max_seq_len, double base_shift,
                                double max_shift)
{
    double m = (max_shift - base_shift) / (max_seq_len - base_seq_len);
    double b = base_shift - m * base_seq_len;
    return image_seq_len * m + b;
}

int sdp_flow_image_seq_len(int width, int height) { return (height / 16) * (width / 16); }

double sdp_sched_flow_mu(const struct sdp_scheduler *s, int width, int height)
{
    return sdp_flow_calculate_shift(sdp_flow_image_seq_len(width, height), s->base_seq, s->max_seq, s->base_shift,
                                    s->max_shift);
}

void sdp_flow_flux_sigmas(int n, double *out)
{
    for (int i = 0; i < n; i++) out[i] = np_linspace(1.0, 1.0 / n, n, i);
}

int sdp_sched_set_timesteps_flow(struct sdp_scheduler *s, int n, const double *sigmas, double mu, char *err,
                                 size_t errcap)
{
    if (s->kind != SDP_SCHED_FLOW_EULER) {
        snprintf(err, errcap, "scheduler: %s (%s) is not a flow-matching scheduler", kind_names[s->kind],
                 kind_classes[s->kind]);
        return -1;
    }
    int N = s->n_train;
    if (n < 1 || n > 100000) {
        snprintf(err, errcap, "--steps %d: must be in [1, 100000]", n);
        return -1;
    }
    if (s->dyn_shift && !isfinite(mu)) {
        snprintf(err, errcap, "scheduler: FlowMatchEulerDiscreteScheduler with use_dynamic_shifting needs a finite "
                 "mu (sdp_sched_flow_mu of the image size)%s", isnan(mu) ? ", none given" : "");
        return -1;
    }
    for (int i = 0; sigmas && i < n; i++)
        if (!isfinite(sigmas[i])) {
            snprintf(err, errcap, "scheduler: custom sigma[%d] is not finite", i);
            return -1;
        }
    double *v = malloc((size_t)n * sizeof *v), *ts = malloc(((size_t)n + 1) * sizeof *ts);
    float *sig = malloc(((size_t)n + 1) * sizeof *sig);
    if (!v || !ts || !sig) {
        free(v), free(ts), free(sig);
        snprintf(err, errcap, "scheduler: out of memory");
        return -1;
    }
    /* f32: the values are a float32 numpy array (custom sigmas, np.array(sigmas).astype(float32)),
     * else float64 (np.linspace of the timesteps / N); numpy 2 (NEP 50) keeps Python scalars weak */
    int f32 = sigmas != NULL;
    for (int i = 0; i < n; i++)
        v[i] = f32 ? (double)(float)sigmas[i]
                   : np_linspace(s->flow_sigma_max * N, s->flow_sigma_min * N, n, i) / N;
    if (s->dyn_shift) { /* time_shift(mu, 1.0, t): e / (e + (1 / t - 1) ** 1.0) */
        double e = s->time_shift_linear ? mu : exp(mu);
        for (int i = 0; i < n; i++) {
            if (f32) {
                float t = (float)v[i], q = 1.0f / t - 1.0f, ef = (float)e;
                v[i] = ef / (ef + q);
            } else {
                v[i] = e / (e + (1.0 / v[i] - 1.0));
            }
        }
    } else { /* shift * t / (1 + (shift - 1) * t) */
        for (int i = 0; i < n; i++) {
            if (f32) {
                float t = (float)v[i], sh = (float)s->shift, sh1 = (float)(s->shift - 1.0);
                v[i] = sh * t / (1.0f + sh1 * t);
            } else {
                v[i] = s->shift * v[i] / (1.0 + (s->shift - 1.0) * v[i]);
            }
        }
    }
    if (s->shift_terminal != 0) { /* stretch_shift_to_terminal */
        if (!(v[n - 1] < 1)) {
            free(v), free(ts), free(sig);
            snprintf(err, errcap, "scheduler: shift_terminal with a last sigma of 1 (%d step%s) divides 0 by 0 (NaN "
                     "sigmas in diffusers)", n, n == 1 ? "" : "s");
            return -1;
        }
        if (f32) {
            float scale = (1.0f - (float)v[n - 1]) / (float)(1.0 - s->shift_terminal);
            for (int i = 0; i < n; i++) v[i] = 1.0f - (1.0f - (float)v[i]) / scale;
        } else {
            double scale = (1.0 - v[n - 1]) / (1.0 - s->shift_terminal);
            for (int i = 0; i < n; i++) v[i] = 1.0 - (1.0 - v[i]) / scale;
        }
    }
    if (s->sigma_kind != SDP_SIGMAS_DEFAULT) /* in_sigmas[-1].item(), in_sigmas[0].item() */
        convert_sigmas(s->sigma_kind, v[n - 1], v[0], n, v);
    for (int i = 0; i < n; i++) {
        float sg = (float)v[i]; /* torch.from_numpy(sigmas).to(float32) */
        if (s->invert_sigmas) sg = 1.0f - sg;
        sig[i] = sg;
        ts[i] = sg * (float)N;
    }
    sig[n] = s->invert_sigmas ? 1.0f : 0.0f;
    free(v);
    free(s->timesteps), free(s->sigmas), free(s->sig2), free(s->sig_up), free(s->sig_down);
    s->sig2 = s->sig_up = s->sig_down = NULL;
    s->timesteps = ts;
    s->sigmas = sig;
    s->n_steps = n;
    s->n_inference = n;
    s->first_index = 0; /* index_for_timestep: the second occurrence of timesteps[0] if any */
    for (int i = 1; i < n; i++)
        if (ts[i] == ts[0]) {
            s->first_index = i;
            break;
        }
    s->init_noise_sigma = 1.0f;
    s->lower_order_nums = s->n_hist = s->second = s->counter = s->this_order = 0;
    return 0;
}

int sdp_sched_set_timesteps(struct sdp_scheduler *s, int n, char *err, size_t errcap)
{
    if (s->kind == SDP_SCHED_FLOW_EULER) {
        if (s->dyn_shift) {
            snprintf(err, errcap, "scheduler: FlowMatchEulerDiscreteScheduler with use_dynamic_shifting needs mu: "
                     "sdp_sched_set_timesteps_flow (Flux: the image size's sdp_sched_flow_mu)");
            return -1;
        }
        return sdp_sched_set_timesteps_flow(s, n, NULL, NAN, err, errcap);
    }
    int N = s->n_train;
    if (n < 1 || n > N) {
        snprintf(err, errcap, "--steps %d: must be in [1, %d] (num_train_timesteps)", n, N);
        return -1;
    }
    if (s->kind == SDP_SCHED_PNDM && !s->skip_prk && n < 4) {
        snprintf(err, errcap, "--steps %d: PNDMScheduler with skip_prk_steps false needs at least 4 steps", n);
        return -1;
    }
    free(s->timesteps), free(s->sigmas), free(s->sig2), free(s->sig_up), free(s->sig_down);
    s->timesteps = NULL, s->sigmas = s->sig2 = s->sig_up = s->sig_down = NULL;
    size_t cap = 2 * (size_t)n + 16;
    double *ts = calloc(cap, sizeof *ts);
    float *sig = calloc(cap, sizeof *sig);
    double *logs = malloc((size_t)N * sizeof *logs), *tmp = calloc(cap, sizeof *tmp);
    double *t2 = calloc(cap, sizeof *t2);
    float *e1 = calloc(cap, sizeof *e1), *e2 = calloc(cap, sizeof *e2), *e3 = calloc(cap, sizeof *e3);
    float *S = calloc(cap, sizeof *S);
    if (!ts || !sig || !logs || !tmp || !t2 || !e1 || !e2 || !e3 || !S) {
        snprintf(err, errcap, "scheduler: out of memory");
        goto bad;
    }
    for (int i = 0; i < N; i++) logs[i] = (float)log((double)s->train_sigmas[i]);
    int count = n;
    int sk = s->sigma_kind != SDP_SIGMAS_DEFAULT && IS(s, SIGMA_CONV);
    s->first_index = 0;
    switch (s->kind) {
    case SDP_SCHED_EULER:
    case SDP_SCHED_EULER_A:
    case SDP_SCHED_LMS:
    case SDP_SCHED_HEUN:
    case SDP_SCHED_DPM2:
    case SDP_SCHED_DPM2_A: {
        count = sigma_family_timesteps(s, n, ts);
        for (int i = 0; i < count; i++) tmp[i] = interp(ts[i], s->train_sigmas, N);
        int f64 = 0; /* timesteps held in float64 (KDPM2 with converted sigmas) */
        if (sk) {
            /* in_sigmas[-1].item(), in_sigmas[0].item(): the float64 interp output */
            int own = s->kind == SDP_SCHED_EULER;
            double smin = own && !isnan(s->sigma_min) ? s->sigma_min : tmp[count - 1];
            double smax = own && !isnan(s->sigma_max) ? s->sigma_max : tmp[0];
            count = n;
            convert_sigmas(s->sigma_kind, smin, smax, count, tmp);
            int kd = s->kind == SDP_SCHED_DPM2 || s->kind == SDP_SCHED_DPM2_A;
            for (int i = 0; i < count; i++) {
                double t = sigma_to_t(tmp[i], logs, N);
                if (kd && s->sigma_kind == SDP_SIGMAS_KARRAS) t = nearbyint(t);
                ts[i] = kd ? t : (double)(float)t;
            }
            f64 = kd;
        }
        for (int i = 0; i < count; i++) S[i] = (float)tmp[i];
        S[count] = 0.0f;
        if (s->kind == SDP_SCHED_EULER || s->kind == SDP_SCHED_EULER_A || s->kind == SDP_SCHED_LMS) {
            memcpy(sig, S, ((size_t)count + 1) * sizeof *sig);
        } else if (s->kind == SDP_SCHED_HEUN) {
            /* sigmas: S0, S1, S1, ..., S_{c-1}, S_{c-1}, 0; timesteps T0, T1, T1, ... */
            int m = 2 * count;
            for (int j = 0; j < m; j++) sig[j] = S[(j + 1) / 2];
            for (int j = 0; j < m - 1; j++) t2[j] = ts[(j + 1) / 2];
            memcpy(ts, t2, (size_t)(m - 1) * sizeof *ts);
            count = m - 1;
        } else if (s->kind == SDP_SCHED_DPM2) {
            /* sigmas_interpol = exp(lerp(log S, log roll(S, 1), 0.5)) */
            for (int k = 0; k <= count; k++) e1[k] = log_mid(S[k], S[k == 0 ? count : k - 1]);
            int m = 2 * count + 2;
            for (int j = 0; j < m; j++) {
                int a = (j + 1) / 2 > count ? count : (j + 1) / 2;
                sig[j] = S[a];
                e2[j] = e1[a];
            }
            /* timesteps: T0, ti1, T1, ti2, T2, ..., ti_{c-1}, T_{c-1} */
            t2[0] = ts[0];
            for (int k = 1; k < count; k++) {
                double ti = sigma_to_t_f32(e1[k], logs, N);
                t2[2 * k - 1] = f64 ? ti : (double)(float)ti;
                t2[2 * k] = ts[k];
            }
            count = 2 * count - 1;
            memcpy(ts, t2, (size_t)count * sizeof *ts);
            s->sig2 = e2, e2 = NULL;
        } else { /* DPM2_A */
            float *up = e3, *down = calloc(cap, sizeof *down), *I = e1;
            if (!down) {
                snprintf(err, errcap, "scheduler: out of memory");
                goto bad;
            }
            for (int k = 0; k <= count; k++) {
                float sn = k < count ? S[k + 1] : 0.0f, sg = S[k];
                float sn2 = sn * sn, sg2 = sg * sg;
                up[k] = sqrtf(sn2 * (sg2 - sn2) / sg2);
                down[k] = k == count ? 0.0f : sqrtf(sn2 - up[k] * up[k]);
            }
            for (int k = 0; k <= count; k++) I[k] = log_mid(S[k], down[k]);
            if (count >= 1) I[count - 1] = 0.0f;
            I[count] = 0.0f;
            int m = 2 * count + 2;
            float *xu = calloc(cap, sizeof *xu), *xd = calloc(cap, sizeof *xd);
            if (!xu || !xd) {
                free(down), free(xu), free(xd);
                snprintf(err, errcap, "scheduler: out of memory");
                goto bad;
            }
            for (int j = 0; j < m; j++) {
                int a = (j + 1) / 2 > count ? count : (j + 1) / 2;
                sig[j] = S[a];
                e2[j] = I[a];
                xu[j] = up[a];
                xd[j] = down[a];
            }
            /* timesteps: T0, ti0, T1, ti1, ..., ti_{c-2}, T_{c-1} */
            t2[0] = ts[0];
            for (int k = 1; k < count; k++) {
                double ti = sigma_to_t_f32(I[k - 1], logs, N);
                t2[2 * k - 1] = f64 ? ti : (double)(float)ti;
                t2[2 * k] = ts[k];
            }
            count = 2 * count - 1;
            memcpy(ts, t2, (size_t)count * sizeof *ts);
            s->sig2 = e2, e2 = NULL;
            s->sig_up = xu;
            s->sig_down = xd;
            free(down);
        }
        break;
    }
    case SDP_SCHED_DPMPP_2M:
    case SDP_SCHED_DPMPP_2M_SDE:
    case SDP_SCHED_DPMPP_3M_SDE:
    case SDP_SCHED_UNIPC:
    case SDP_SCHED_DEIS: {
        count = dpm_family_timesteps(s, n, ts);
        if (sk) {
            count = n;
            double smin = s->train_sigmas[0], smax = s->train_sigmas[N - 1];
            if (s->kind == SDP_SCHED_UNIPC) {
                if (!isnan(s->sigma_min)) smin = s->sigma_min;
                if (!isnan(s->sigma_max)) smax = s->sigma_max;
            }
            convert_sigmas(s->sigma_kind, smin, smax, count, tmp);
            int round_k = s->sigma_kind == SDP_SIGMAS_KARRAS && (IS(s, DPMF) ? !s->squaredcos : 1);
            for (int i = 0; i < count; i++) {
                double t = sigma_to_t(tmp[i], logs, N);
                if (round_k) t = nearbyint(t);
                ts[i] = (double)(int64_t)t; /* int64 timesteps */
                sig[i] = (float)tmp[i];
            }
            sig[count] = s->kind == SDP_SCHED_DEIS ? sig[count - 1] : 0.0f;
        } else {
            for (int i = 0; i < count; i++) sig[i] = (float)interp(ts[i], s->train_sigmas, N);
            sig[count] = s->kind == SDP_SCHED_DEIS ? s->train_sigmas[0] : 0.0f;
        }
        break;
    }
    case SDP_SCHED_DDIM:
    case SDP_SCHED_DDPM:
        count = alpha_family_timesteps(s, n, ts, 0);
        break;
    case SDP_SCHED_PNDM: {
        int c = alpha_family_timesteps(s, n, tmp, 1); /* _timesteps, ascending */
        if (s->skip_prk) {
            /* concat(_ts[:-1], _ts[-2:-1], _ts[-1:])[::-1] */
            int m = 0;
            for (int i = 0; i < c - 1; i++) t2[m++] = tmp[i];
            if (c >= 2) t2[m++] = tmp[c - 2];
            t2[m++] = tmp[c - 1];
            for (int i = 0; i < m; i++) ts[i] = t2[m - 1 - i];
            count = m;
        } else {
            int h = N / n / 2;
            double prk[8], rep[14];
            for (int i = 0; i < 4; i++) prk[2 * i] = tmp[c - 4 + i], prk[2 * i + 1] = tmp[c - 4 + i] + h;
            for (int i = 0; i < 7; i++) rep[2 * i] = rep[2 * i + 1] = prk[i];
            int m = 0;
            for (int i = 12; i >= 1; i--) ts[m++] = rep[i]; /* rep[1:-1][::-1] */
            for (int i = c - 4; i >= 0; i--) ts[m++] = tmp[i]; /* _ts[:-3][::-1] */
            count = m;
        }
        break;
    }
    case SDP_SCHED_LCM:
    case SDP_SCHED_TCD: {
        int orig = s->original_steps;
        if (orig < 1 || orig > N) {
            snprintf(err, errcap, "scheduler: original_inference_steps %d not in [1, %d]", orig, N);
            goto bad;
        }
        if (n > orig) {
            snprintf(err, errcap, "--steps %d: %s allows at most original_inference_steps = %d", n,
                     kind_a1111[s->kind], orig);
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
    case SDP_SCHED_FLOW_EULER: /* sdp_sched_set_timesteps_flow (returned above) */
        break;
    }
    s->n_steps = count;
    s->n_inference = n;
    s->timesteps = ts;
    s->sigmas = sig;
    /* index_for_timestep: the first step takes the second occurrence of timesteps[0] if any */
    if (s->kind != SDP_SCHED_DDIM && s->kind != SDP_SCHED_PNDM && s->kind != SDP_SCHED_DDPM)
        for (int i = 1; i < count; i++)
            if (ts[i] == ts[0]) {
                s->first_index = i;
                break;
            }
    float maxs = 0;
    for (int i = 0; i <= count; i++) maxs = sig[i] > maxs ? sig[i] : maxs;
    if (IS(s, SIGMA_SPACE))
        s->init_noise_sigma = s->spacing == SDP_SPACING_LEADING ? sqrtf(maxs * maxs + 1.0f) : maxs;
    else
        s->init_noise_sigma = 1.0f;
    s->lower_order_nums = s->n_hist = s->second = s->counter = s->this_order = 0;
    free(logs), free(tmp), free(t2), free(e1), free(e2), free(e3), free(S);
    return 0;
bad:
    free(ts), free(sig), free(logs), free(tmp), free(t2), free(e1), free(e2), free(e3), free(S);
    return -1;
}

float sdp_sched_timestep(const struct sdp_scheduler *s, int i) { return (float)s->timesteps[i]; }

void sdp_sched_scale_input(const struct sdp_scheduler *s, int i, const float *x, float *out, size_t n)
{
    if (IS(s, SIGMA_SPACE)) {
        int si = s->first_index + i;
        float sigma = s->sigmas[si];
        if (s->kind == SDP_SCHED_DPM2 && s->second) sigma = s->sig2[si];
        if (s->kind == SDP_SCHED_DPM2_A && s->second) sigma = s->sig2[si - 1];
        float d = sqrtf(sigma * sigma + 1.0f);
        for (size_t k = 0; k < n; k++) out[k] = x[k] / d;
    } else if (out != x) {
        memcpy(out, x, n * sizeof *out);
    }
}

/* pred_original_sample of the sigma-space classes. */
static void sigma_x0(const struct sdp_scheduler *s, float sigma, const float *m, const float *x, float *x0,
                     size_t n)
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

static void clip(const struct sdp_scheduler *s, float *x0, size_t n)
{
    if (!s->clip_sample) return;
    float r = s->clip_range;
    for (size_t k = 0; k < n; k++) x0[k] = x0[k] < -r ? -r : x0[k] > r ? r : x0[k];
}

/* Half of a KDPM2 (ancestral) step: x0 at sigma_in, the derivative d = (x - x0) / sigma_in, then
 * x = prev + d * dt, prev being x itself, kept for the second half (first), or the x the first half
 * started from (second). */
static void dpm2_half(const struct sdp_scheduler *s, int first, float sigma_in, float dt, const float *m, float *x,
                      float *prev, float *tmp, size_t n)
{
    sigma_x0(s, sigma_in, m, x, tmp, n);
    for (size_t k = 0; k < n; k++) {
        float d = (x[k] - tmp[k]) / sigma_in;
        if (first) prev[k] = x[k];
        x[k] = prev[k] + d * dt;
    }
}

/* alpha_t, sigma_t of DPM-Solver from a sigma. */
static void dpm_alpha_sigma(float sigma, float *alpha_t, float *sigma_t)
{
    *alpha_t = 1.0f / sqrtf(sigma * sigma + 1.0f);
    *sigma_t = sigma * *alpha_t;
}

static float dpm_lambda(float sigma)
{
    float a, sg;
    dpm_alpha_sigma(sigma, &a, &sg);
    return logf(a) - logf(sg);
}

static int ensure_hist(struct sdp_scheduler *s, size_t n)
{
    if (s->prev_n == n && s->hist[0]) return 0;
    free_hist(s);
    for (int k = 0; k < 6; k++)
        if (!(s->hist[k] = malloc(n * sizeof(float)))) {
            free_hist(s);
            return -1;
        }
    s->prev_n = n;
    return 0;
}

/* Rotates hist[0..cnt) left (oldest first) and returns the slot for the newest entry. */
static float *push_hist(struct sdp_scheduler *s, int cnt)
{
    float *t = s->hist[0];
    for (int k = 0; k < cnt - 1; k++) s->hist[k] = s->hist[k + 1];
    s->hist[cnt - 1] = t;
    return t;
}

/* LMS coefficient: integral over [sigmas[t], sigmas[t+1]] of the Lagrange basis polynomial
 * (exact: 3-point Gauss-Legendre for degree <= 3, in double as scipy's quad). */
static double lms_coeff(const float *sig, int order, int t, int cur)
{
    static const double gx[3] = {-0.7745966692414834, 0.0, 0.7745966692414834};
    static const double gw[3] = {0.5555555555555556, 0.8888888888888888, 0.5555555555555556};
    double a = sig[t], b = sig[t + 1], half = 0.5 * (b - a), mid = 0.5 * (a + b), sum = 0;
    for (int q = 0; q < 3; q++) {
        double tau = mid + half * gx[q], prod = 1.0;
        for (int k = 0; k < order; k++) {
            if (k == cur) continue;
            prod *= (tau - sig[t - k]) / ((double)sig[t - cur] - sig[t - k]);
        }
        sum += gw[q] * prod;
    }
    return sum * half;
}

/* PNDM _get_prev_sample into x (x may alias sample). */
static void pndm_prev(const struct sdp_scheduler *s, const float *sample, int t, int prev_t, const float *m, float *x,
                      size_t n)
{
    float a_t = s->alphas_cumprod[t];
    float a_prev = prev_t >= 0 ? s->alphas_cumprod[prev_t] : s->final_alpha_cumprod;
    float b_t = 1.0f - a_t, b_prev = 1.0f - a_prev;
    float sa = sqrtf(a_t), sb = sqrtf(b_t);
    float coeff = sqrtf(a_prev / a_t);
    float denom = a_t * sqrtf(b_prev) + sqrtf(a_t * b_t * a_prev);
    float diff = a_prev - a_t;
    for (size_t k = 0; k < n; k++) {
        float mo = m[k];
        if (s->pred == SDP_PRED_V) mo = sa * mo + sb * sample[k];
        x[k] = coeff * sample[k] - diff * mo / denom;
    }
}

/* x0 of the alpha-space classes (DDIM, DDPM, LCM, TCD); eps into e when e != NULL. */
static void alpha_x0(const struct sdp_scheduler *s, float a_t, const float *m, const float *x, float *x0, float *e,
                     size_t n)
{
    float b_t = 1.0f - a_t, sa = sqrtf(a_t), sb = sqrtf(b_t);
    for (size_t k = 0; k < n; k++) {
        float p, q;
        if (s->pred == SDP_PRED_EPSILON) p = (x[k] - sb * m[k]) / sa, q = m[k];
        else if (s->pred == SDP_PRED_V) p = sa * x[k] - sb * m[k], q = sa * m[k] + sb * x[k];
        else p = m[k], q = (x[k] - sa * p) / sb;
        x0[k] = p;
        if (e) e[k] = q;
    }
}

int sdp_sched_step(struct sdp_scheduler *s, int i, const float *m, float *x, size_t n, struct sdp_rng *rng)
{
    int si = s->first_index + i; /* step_index */
    float *tmp = malloc(n * sizeof *tmp), *noise = malloc(n * sizeof *noise);
    if (!tmp || !noise || ensure_hist(s, n)) {
        free(tmp), free(noise);
        return -1;
    }
    const float *sg = s->sigmas;
    switch (s->kind) {
    case SDP_SCHED_EULER: {
        float sigma = sg[si], sigma_hat = sigma * 1.0f;
        sigma_x0(s, sigma_hat, m, x, tmp, n);
        float dt = sg[si + 1] - sigma_hat;
        for (size_t k = 0; k < n; k++) {
            float d = (x[k] - tmp[k]) / sigma_hat;
            x[k] = x[k] + d * dt;
        }
        break;
    }
    case SDP_SCHED_EULER_A: {
        float sigma = sg[si], from = sigma, to = sg[si + 1];
        sigma_x0(s, sigma, m, x, tmp, n);
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
    case SDP_SCHED_LMS: {
        float sigma = sg[si];
        sigma_x0(s, sigma, m, x, tmp, n);
        if (s->n_hist < 4) s->n_hist++;
        float *d = push_hist(s, 4); /* hist[4 - n_hist .. 3]: oldest .. newest */
        for (size_t k = 0; k < n; k++) d[k] = (x[k] - tmp[k]) / sigma;
        int order = si + 1 < 4 ? si + 1 : 4;
        /* zip(lms_coeffs, reversed(derivatives)): fewer derivatives than the order (a loop that
         * started past step 0, img2img) use the first coefficients only */
        for (int c = 0; c < order && c < s->n_hist; c++) {
            float coeff = (float)lms_coeff(sg, order, si, c);
            const float *dv = s->hist[3 - c]; /* reversed(derivatives) */
            if (c == 0)
                for (size_t k = 0; k < n; k++) tmp[k] = coeff * dv[k];
            else
                for (size_t k = 0; k < n; k++) tmp[k] = tmp[k] + coeff * dv[k];
        }
        for (size_t k = 0; k < n; k++) x[k] = x[k] + tmp[k];
        break;
    }
    case SDP_SCHED_HEUN: {
        float *pd = s->hist[0], *ps = s->hist[1];
        if (!s->second) {
            float sigma = sg[si], next = sg[si + 1], sigma_hat = sigma * 1.0f;
            sigma_x0(s, sigma_hat, m, x, tmp, n);
            clip(s, tmp, n);
            float dt = next - sigma_hat;
            for (size_t k = 0; k < n; k++) {
                pd[k] = (x[k] - tmp[k]) / sigma_hat;
                ps[k] = x[k];
                x[k] = x[k] + pd[k] * dt;
            }
            s->cur_dt = dt;
            s->second = 1;
        } else {
            float next = sg[si];
            sigma_x0(s, next, m, x, tmp, n);
            clip(s, tmp, n);
            float dt = s->cur_dt;
            for (size_t k = 0; k < n; k++) {
                float d = (x[k] - tmp[k]) / next;
                d = (pd[k] + d) / 2.0f;
                x[k] = ps[k] + d * dt;
            }
            s->second = 0;
        }
        break;
    }
    case SDP_SCHED_DPM2: { /* sigma_hat = sigma (gamma 0); I: the interpolated sigmas */
        const float *I = s->sig2;
        if (!s->second) dpm2_half(s, 1, sg[si], I[si + 1] - sg[si], m, x, s->hist[1], tmp, n);
        else dpm2_half(s, 0, I[si], sg[si] - sg[si - 1], m, x, s->hist[1], tmp, n);
        s->second = !s->second;
        break;
    }
    case SDP_SCHED_DPM2_A: {
        const float *I = s->sig2;
        if (!s->second) {
            dpm2_half(s, 1, sg[si], I[si] - sg[si], m, x, s->hist[1], tmp, n);
        } else {
            float up = s->sig_up[si - 1];
            dpm2_half(s, 0, I[si - 1], s->sig_down[si - 1] - sg[si - 1], m, x, s->hist[1], tmp, n);
            sdp_rng_randn(rng, noise, n);
            for (size_t k = 0; k < n; k++) x[k] = x[k] + noise[k] * up;
        }
        s->second = !s->second;
        break;
    }
    case SDP_SCHED_DPMPP_2M:
    case SDP_SCHED_DPMPP_2M_SDE:
    case SDP_SCHED_DPMPP_3M_SDE: {
        int N = s->n_steps, order = s->solver_order;
        int lof = si == N - 1; /* final_sigmas_type "zero": always first order at the end */
        int los = si == N - 2 && s->lower_order_final && N < 15;
        float a_s0, s_s0, a_t, s_t;
        dpm_alpha_sigma(sg[si], &a_s0, &s_s0);
        dpm_alpha_sigma(sg[si + 1], &a_t, &s_t);
        float *m0 = push_hist(s, order); /* hist[order-1] newest */
        if (s->pred == SDP_PRED_EPSILON)
            for (size_t k = 0; k < n; k++) m0[k] = (x[k] - s_s0 * m[k]) / a_s0;
        else if (s->pred == SDP_PRED_V)
            for (size_t k = 0; k < n; k++) m0[k] = a_s0 * x[k] - s_s0 * m[k];
        else
            memcpy(m0, m, n * sizeof *m0);
        if (s->sde) sdp_rng_randn(rng, noise, n);
        float lam_t = logf(a_t) - logf(s_t), lam_s0 = logf(a_s0) - logf(s_s0);
        float h = lam_t - lam_s0, ratio = s_t / s_s0;
        float e1 = expf(-h), e2 = expf(-2.0f * h);
        float c = a_t * (e1 - 1.0f);                 /* dpmsolver++ */
        float r_sde = ratio * e1, c_sde = a_t * (1.0f - e2), nz = s_t * sqrtf(1.0f - e2);
        int use = (order == 1 || s->lower_order_nums < 1 || lof) ? 1
                  : (order == 2 || s->lower_order_nums < 2 || los) ? 2 : 3;
        if (use == 1) {
            if (!s->sde)
                for (size_t k = 0; k < n; k++) x[k] = ratio * x[k] - c * m0[k];
            else
                for (size_t k = 0; k < n; k++) x[k] = r_sde * x[k] + c_sde * m0[k] + nz * noise[k];
        } else if (use == 2) {
            const float *m1 = s->hist[order - 2];
            float lam_s1 = dpm_lambda(sg[si - 1]);
            float h0 = lam_s0 - lam_s1, r0 = h0 / h, inv_r0 = 1.0f / r0;
            float c1 = !s->sde ? (s->solver_heun ? a_t * ((e1 - 1.0f) / h + 1.0f) : 0.5f * c)
                               : (s->solver_heun ? a_t * ((1.0f - e2) / (-2.0f * h) + 1.0f) : 0.5f * c_sde);
            for (size_t k = 0; k < n; k++) {
                float d1 = inv_r0 * (m0[k] - m1[k]);
                if (!s->sde)
                    x[k] = s->solver_heun ? ratio * x[k] - c * m0[k] + c1 * d1 : ratio * x[k] - c * m0[k] - c1 * d1;
                else
                    x[k] = r_sde * x[k] + c_sde * m0[k] + c1 * d1 + nz * noise[k];
            }
        } else {
            const float *m1 = s->hist[order - 2], *m2 = s->hist[order - 3];
            float lam_s1 = dpm_lambda(sg[si - 1]), lam_s2 = dpm_lambda(sg[si - 2]);
            float h0 = lam_s0 - lam_s1, h1 = lam_s1 - lam_s2, r0 = h0 / h, r1 = h1 / h;
            float i0 = 1.0f / r0, i1 = 1.0f / r1, w = r0 / (r0 + r1), i01 = 1.0f / (r0 + r1);
            float c1, c2;
            if (!s->sde) {
                c1 = a_t * ((e1 - 1.0f) / h + 1.0f);
                c2 = a_t * ((e1 - 1.0f + h) / (h * h) - 0.5f);
            } else {
                float h2 = 2.0f * h;
                c1 = a_t * ((1.0f - e2) / (-2.0f * h) + 1.0f);
                c2 = a_t * ((1.0f - e2 - 2.0f * h) / (h2 * h2) - 0.5f);
            }
            for (size_t k = 0; k < n; k++) {
                float d10 = i0 * (m0[k] - m1[k]), d11 = i1 * (m1[k] - m2[k]);
                float d1 = d10 + w * (d10 - d11), d2 = i01 * (d10 - d11);
                if (!s->sde) x[k] = ratio * x[k] - c * m0[k] + c1 * d1 - c2 * d2;
                else x[k] = r_sde * x[k] + c_sde * m0[k] + c1 * d1 + c2 * d2 + nz * noise[k];
            }
        }
        if (s->lower_order_nums < order) s->lower_order_nums++;
        break;
    }
    case SDP_SCHED_DEIS: {
        int N = s->n_steps, order = s->solver_order;
        int lof = si == N - 1 && s->lower_order_final && N < 15;
        int los = si == N - 2 && s->lower_order_final && N < 15;
        float a_s0, s_s0, a_t, s_t;
        dpm_alpha_sigma(sg[si], &a_s0, &s_s0);
        dpm_alpha_sigma(sg[si + 1], &a_t, &s_t);
        float *m0 = push_hist(s, order);
        for (size_t k = 0; k < n; k++) {
            float x0;
            if (s->pred == SDP_PRED_EPSILON) x0 = (x[k] - s_s0 * m[k]) / a_s0;
            else if (s->pred == SDP_PRED_V) x0 = a_s0 * x[k] - s_s0 * m[k];
            else x0 = m[k];
            m0[k] = (x[k] - a_s0 * x0) / s_s0;
        }
        int use = (order == 1 || s->lower_order_nums < 1 || lof) ? 1
                  : (order == 2 || s->lower_order_nums < 2 || los) ? 2 : 3;
        if (use == 1) {
            float lam_t = logf(a_t) - logf(s_t), lam_s = logf(a_s0) - logf(s_s0), h = lam_t - lam_s;
            float ra = a_t / a_s0, c = s_t * (expf(h) - 1.0f);
            for (size_t k = 0; k < n; k++) x[k] = ra * x[k] - c * m0[k];
        } else if (use == 2) {
            float a_s1, s_s1;
            dpm_alpha_sigma(sg[si - 1], &a_s1, &s_s1);
            float rt = s_t / a_t, r0 = s_s0 / a_s0, r1 = s_s1 / a_s1;
            float lt = logf(rt), l0 = logf(r0), l1 = logf(r1);
#define IND2(t, lt_, lb, lc) ((t) * (-(lc) + (lt_) - 1.0f) / ((lb) - (lc)))
            float c1 = IND2(rt, lt, l0, l1) - IND2(r0, l0, l0, l1);
            float c2 = IND2(rt, lt, l1, l0) - IND2(r0, l0, l1, l0);
#undef IND2
            const float *m1 = s->hist[order - 2];
            for (size_t k = 0; k < n; k++) x[k] = a_t * (x[k] / a_s0 + c1 * m0[k] + c2 * m1[k]);
        } else {
            float a_s1, s_s1, a_s2, s_s2;
            dpm_alpha_sigma(sg[si - 1], &a_s1, &s_s1);
            dpm_alpha_sigma(sg[si - 2], &a_s2, &s_s2);
            float rt = s_t / a_t, r0 = s_s0 / a_s0, r1 = s_s1 / a_s1, r2 = s_s2 / a_s2;
            float lt = logf(rt), l0 = logf(r0), l1 = logf(r1), l2 = logf(r2);
#define IND3(t, ltt, lb, lc, ld)                                                                                 \
    ((t) * ((lc) * ((ld) - (ltt) + 1.0f) - (ld) * (ltt) + (ld) + (ltt) * (ltt) - 2.0f * (ltt) + 2.0f) /          \
     (((lb) - (lc)) * ((lb) - (ld))))
            float c1 = IND3(rt, lt, l0, l1, l2) - IND3(r0, l0, l0, l1, l2);
            float c2 = IND3(rt, lt, l1, l2, l0) - IND3(r0, l0, l1, l2, l0);
            float c3 = IND3(rt, lt, l2, l0, l1) - IND3(r0, l0, l2, l0, l1);
#undef IND3
            const float *m1 = s->hist[order - 2], *m2 = s->hist[order - 3];
            for (size_t k = 0; k < n; k++) x[k] = a_t * (x[k] / a_s0 + c1 * m0[k] + c2 * m1[k] + c3 * m2[k]);
        }
        if (s->lower_order_nums < order) s->lower_order_nums++;
        break;
    }
    case SDP_SCHED_UNIPC: {
        int order_cfg = s->solver_order, bh1 = s->solver_heun;
        float *mc = tmp; /* converted model output */
        {
            float a, sgt;
            dpm_alpha_sigma(sg[si], &a, &sgt);
            for (size_t k = 0; k < n; k++) {
                if (s->pred == SDP_PRED_EPSILON) mc[k] = (x[k] - sgt * m[k]) / a;
                else if (s->pred == SDP_PRED_V) mc[k] = a * x[k] - sgt * m[k];
                else mc[k] = m[k];
            }
        }
        float *last = s->hist[4];
        if (si > 0 && s->counter) { /* corrector (multistep_uni_c_bh_update) */
            int order = s->this_order;
            const float *m0 = s->hist[order_cfg - 1];
            float a_t, s_t, a_s0, s_s0;
            dpm_alpha_sigma(sg[si], &a_t, &s_t);
            dpm_alpha_sigma(sg[si - 1], &a_s0, &s_s0);
            float lam_t = logf(a_t) - logf(s_t), lam_s0 = logf(a_s0) - logf(s_s0), h = lam_t - lam_s0;
            float hh = -h, hp1 = expm1f(hh), B_h = bh1 ? hh : expm1f(hh);
            float rho_c0 = 0.5f, rho_last = 0.5f, rk = 0;
            const float *mi = NULL;
            if (order == 2) {
                mi = s->hist[order_cfg - 2];
                float lam_si = dpm_lambda(sg[si - 2]);
                rk = (lam_si - lam_s0) / h;
                float hpk = hp1 / hh - 1.0f, b1, b2;
                b1 = hpk * 1.0f / B_h;
                hpk = hpk / hh - (float)(1.0 / 2.0);
                b2 = hpk * 2.0f / B_h;
                /* torch.linalg.solve([[1, 1], [rk, 1]], [b1, b2]) with partial pivoting */
                float x1, x2;
                if (fabsf(rk) > 1.0f) {
                    float l = 1.0f * (1.0f / rk), u22 = 1.0f - l * 1.0f;
                    float y2 = b1 - l * b2;
                    x2 = y2 / u22;
                    x1 = (b2 - 1.0f * x2) / rk;
                } else {
                    float l = rk, u22 = 1.0f - l * 1.0f;
                    float y2 = b2 - l * b1;
                    x2 = y2 / u22;
                    x1 = b1 - 1.0f * x2;
                }
                rho_c0 = x1, rho_last = x2;
            }
            float ratio = s_t / s_s0, c0 = a_t * hp1, cb = a_t * B_h;
            for (size_t k = 0; k < n; k++) {
                float xt_ = ratio * last[k] - c0 * m0[k];
                float d1t = mc[k] - m0[k];
                float corr = order == 2 ? rho_c0 * ((mi[k] - m0[k]) / rk) + rho_last * d1t : 0.0f + rho_last * d1t;
                x[k] = xt_ - cb * corr;
            }
        }
        float *m0 = push_hist(s, order_cfg);
        memcpy(m0, mc, n * sizeof *m0);
        int this_order = s->lower_order_final ? (order_cfg < s->n_steps - si ? order_cfg : s->n_steps - si) : order_cfg;
        if (this_order > s->lower_order_nums + 1) this_order = s->lower_order_nums + 1;
        s->this_order = this_order;
        memcpy(last, x, n * sizeof *last);
        s->counter = 1;
        { /* predictor (multistep_uni_p_bh_update) */
            float a_t, s_t, a_s0, s_s0;
            dpm_alpha_sigma(sg[si + 1], &a_t, &s_t);
            dpm_alpha_sigma(sg[si], &a_s0, &s_s0);
            float lam_t = logf(a_t) - logf(s_t), lam_s0 = logf(a_s0) - logf(s_s0), h = lam_t - lam_s0;
            float hh = -h, hp1 = expm1f(hh), B_h = bh1 ? hh : expm1f(hh);
            float ratio = s_t / s_s0, c0 = a_t * hp1, cb = a_t * B_h;
            if (this_order == 2) {
                const float *m1 = s->hist[order_cfg - 2];
                float rk = (dpm_lambda(sg[si - 1]) - lam_s0) / h;
                for (size_t k = 0; k < n; k++) {
                    float xt_ = ratio * x[k] - c0 * m0[k];
                    float pr = 0.5f * ((m1[k] - m0[k]) / rk);
                    x[k] = xt_ - cb * pr;
                }
            } else {
                for (size_t k = 0; k < n; k++) x[k] = ratio * x[k] - c0 * m0[k];
            }
        }
        if (s->lower_order_nums < order_cfg) s->lower_order_nums++;
        break;
    }
    case SDP_SCHED_PNDM: {
        int N = s->n_train, n_inf = s->n_inference, t = (int)s->timesteps[i], c = s->counter;
        float **ets = s->hist; /* ets: hist[4 - n_hist .. 3], oldest first */
        float *cur_sample = s->hist[4], *cur_mo = s->hist[5];
        if (!s->skip_prk && c < 12) { /* step_prk */
            int diff = c % 2 ? 0 : N / n_inf / 2;
            int prev_t = t - diff, tt = (int)s->timesteps[c / 4 * 4];
            const float *mo = m;
            if (c % 4 == 0) {
                for (size_t k = 0; k < n; k++) cur_mo[k] = 0.0f + (float)(1.0 / 6.0) * m[k];
                if (s->n_hist < 4) s->n_hist++;
                memcpy(push_hist(s, 4), m, n * sizeof *m);
                ets = s->hist, cur_sample = s->hist[4], cur_mo = s->hist[5];
                memcpy(cur_sample, x, n * sizeof *x);
            } else if (c % 4 == 1 || c % 4 == 2) {
                for (size_t k = 0; k < n; k++) cur_mo[k] = cur_mo[k] + (float)(1.0 / 3.0) * m[k];
            } else {
                for (size_t k = 0; k < n; k++) tmp[k] = cur_mo[k] + (float)(1.0 / 6.0) * m[k];
                mo = tmp;
            }
            pndm_prev(s, cur_sample, tt, prev_t, mo, x, n);
            s->counter++;
            break;
        }
        /* step_plms */
        int prev_t = t - N / n_inf;
        if (c != 1) {
            if (s->n_hist < 4) s->n_hist++;
            memcpy(push_hist(s, 4), m, n * sizeof *m);
            ets = s->hist;
        } else {
            prev_t = t;
            t = t + N / n_inf;
        }
        int ne = s->n_hist;
        const float *e1 = ets[3], *e2 = ets[2], *e3 = ets[1], *e4 = ets[0];
        const float *smp = x;
        if (ne == 1 && c == 0) {
            memcpy(tmp, m, n * sizeof *tmp);
            memcpy(cur_sample, x, n * sizeof *x);
        } else if (ne == 1 && c == 1) {
            for (size_t k = 0; k < n; k++) tmp[k] = (m[k] + e1[k]) / 2.0f;
            smp = cur_sample;
        } else if (ne == 2) {
            for (size_t k = 0; k < n; k++) tmp[k] = (3.0f * e1[k] - e2[k]) / 2.0f;
        } else if (ne == 3) {
            for (size_t k = 0; k < n; k++) tmp[k] = (23.0f * e1[k] - 16.0f * e2[k] + 5.0f * e3[k]) / 12.0f;
        } else {
            for (size_t k = 0; k < n; k++)
                tmp[k] = (float)(1.0 / 24.0) * (55.0f * e1[k] - 59.0f * e2[k] + 37.0f * e3[k] - 9.0f * e4[k]);
        }
        pndm_prev(s, smp, t, prev_t, tmp, x, n);
        s->counter++;
        break;
    }
    case SDP_SCHED_DDIM: {
        int t = (int)s->timesteps[i], prev = t - s->n_train / s->n_steps;
        float a_t = s->alphas_cumprod[t];
        float a_prev = prev >= 0 ? s->alphas_cumprod[prev] : s->final_alpha_cumprod;
        float b_t = 1.0f - a_t, b_prev = 1.0f - a_prev;
        float var = b_prev / b_t * (1.0f - a_t / a_prev);
        float std = s->eta * sqrtf(var);
        float dir = sqrtf(1.0f - a_prev - std * std), sap = sqrtf(a_prev);
        alpha_x0(s, a_t, m, x, tmp, noise, n);
        clip(s, tmp, n);
        for (size_t k = 0; k < n; k++) x[k] = sap * tmp[k] + dir * noise[k];
        if (s->eta > 0) {
            sdp_rng_randn(rng, noise, n);
            for (size_t k = 0; k < n; k++) x[k] = x[k] + std * noise[k];
        }
        break;
    }
    case SDP_SCHED_DDPM: {
        int t = (int)s->timesteps[i];
        int prev_t = i + 1 < s->n_steps ? (int)s->timesteps[i + 1] : -1;
        float a_t = s->alphas_cumprod[t], a_prev = prev_t >= 0 ? s->alphas_cumprod[prev_t] : 1.0f;
        float b_t = 1.0f - a_t, b_prev = 1.0f - a_prev;
        float cur_a = a_t / a_prev, cur_b = 1.0f - cur_a;
        alpha_x0(s, a_t, m, x, tmp, NULL, n);
        clip(s, tmp, n);
        float c0 = sqrtf(a_prev) * cur_b / b_t, cs = sqrtf(cur_a) * b_prev / b_t;
        for (size_t k = 0; k < n; k++) x[k] = c0 * tmp[k] + cs * x[k];
        if (t > 0) {
            sdp_rng_randn(rng, noise, n);
            float var = (1.0f - a_prev) / (1.0f - a_t) * cur_b;
            var = var < 1e-20f ? 1e-20f : var;
            float sd = s->variance_type == 0 ? sqrtf(var) : s->variance_type == 1 ? expf(0.5f * logf(var)) : sqrtf(cur_b);
            for (size_t k = 0; k < n; k++) x[k] = x[k] + sd * noise[k];
        }
        break;
    }
    case SDP_SCHED_LCM: {
        int t = (int)s->timesteps[i];
        int prev_t = si + 1 < s->n_steps ? (int)s->timesteps[si + 1] : t;
        float a_t = s->alphas_cumprod[t];
        float a_prev = prev_t >= 0 ? s->alphas_cumprod[prev_t] : s->final_alpha_cumprod;
        float b_prev = 1.0f - a_prev;
        double st = t * s->timestep_scaling;
        float c_skip = (float)(0.25 / (st * st + 0.25)), c_out = (float)(st / sqrt(st * st + 0.25));
        alpha_x0(s, a_t, m, x, tmp, NULL, n);
        clip(s, tmp, n);
        for (size_t k = 0; k < n; k++) tmp[k] = c_out * tmp[k] + c_skip * x[k];
        if (si != s->n_steps - 1) {
            sdp_rng_randn(rng, noise, n);
            float sap = sqrtf(a_prev), sbp = sqrtf(b_prev);
            for (size_t k = 0; k < n; k++) x[k] = sap * tmp[k] + sbp * noise[k];
        } else {
            memcpy(x, tmp, n * sizeof *x);
        }
        break;
    }
    case SDP_SCHED_FLOW_EULER: {
        float sigma = sg[si], next = sg[si + 1];
        if (s->stochastic) {
            for (size_t k = 0; k < n; k++) tmp[k] = x[k] - sigma * m[k];
            sdp_rng_randn(rng, noise, n);
            float c = 1.0f - next;
            for (size_t k = 0; k < n; k++) x[k] = c * tmp[k] + next * noise[k];
        } else {
            float dt = next - sigma;
            for (size_t k = 0; k < n; k++) x[k] = x[k] + dt * m[k];
        }
        break;
    }
    case SDP_SCHED_TCD: {
        int t = (int)s->timesteps[si];
        int prev_t = si + 1 < s->n_steps ? (int)s->timesteps[si + 1] : 0;
        int t_s = (int)floorf((float)(1.0 - (double)s->eta) * (float)prev_t);
        float a_t = s->alphas_cumprod[t];
        float a_prev = prev_t >= 0 ? s->alphas_cumprod[prev_t] : s->final_alpha_cumprod;
        float a_s = s->alphas_cumprod[t_s], b_s = 1.0f - a_s;
        alpha_x0(s, a_t, m, x, tmp, noise, n);
        float sas = sqrtf(a_s), sbs = sqrtf(b_s);
        for (size_t k = 0; k < n; k++) tmp[k] = sas * tmp[k] + sbs * noise[k]; /* pred_noised_sample */
        if (s->eta > 0 && si != s->n_inference - 1) {
            sdp_rng_randn(rng, noise, n);
            float q = a_prev / a_s, c1 = sqrtf(q), c2 = sqrtf(1.0f - q);
            for (size_t k = 0; k < n; k++) x[k] = c1 * tmp[k] + c2 * noise[k];
        } else {
            memcpy(x, tmp, n * sizeof *x);
        }
        break;
    }
    }
    free(tmp);
    free(noise);
    return 0;
}

/* ---- A1111 names ---- */

static const struct {
    const char *name; /* A1111 sampler name */
    int kind;         /* enum sdp_sched_kind, or -1: refused with why */
    const char *why;
} a1111[] = {
    {"Euler", SDP_SCHED_EULER, NULL},
    {"Euler a", SDP_SCHED_EULER_A, NULL},
    {"DPM++ 2M", SDP_SCHED_DPMPP_2M, NULL},
    {"DPM++ 2M SDE", SDP_SCHED_DPMPP_2M_SDE, NULL},
    {"DPM++ 3M SDE", SDP_SCHED_DPMPP_3M_SDE, NULL},
    {"DDIM", SDP_SCHED_DDIM, NULL},
    {"LCM", SDP_SCHED_LCM, NULL},
    {"PLMS", SDP_SCHED_PNDM, NULL},
    {"PNDM", SDP_SCHED_PNDM, NULL},
    {"LMS", SDP_SCHED_LMS, NULL},
    {"Heun", SDP_SCHED_HEUN, NULL},
    {"DPM2", SDP_SCHED_DPM2, NULL},
    {"DPM2 a", SDP_SCHED_DPM2_A, NULL},
    {"UniPC", SDP_SCHED_UNIPC, NULL},
    {"DEIS", SDP_SCHED_DEIS, NULL},
    {"DDPM", SDP_SCHED_DDPM, NULL},
    {"TCD", SDP_SCHED_TCD, NULL},
    {"DPM++ SDE", -1, "A1111's DPM++ SDE (k-diffusion sample_dpmpp_sde) is diffusers' DPMSolverSDEScheduler, whose "
                      "noise comes from torchsde's BrownianTree (its own random stream, not torch.randn's): it cannot "
                      "be matched bit for bit (diffusers' scheduler table also lists DPMSolverSinglestepScheduler for "
                      "it: a deterministic solver, another image)"},
    {"DPM++ 2M SDE Heun", -1, "diffusers' scheduler table has no equivalent of A1111's DPM++ 2M SDE Heun"},
    {"DPM++ 2S a", -1, "diffusers has no scheduler for A1111's DPM++ 2S a"},
    {"DPM fast", -1, "diffusers has no scheduler for A1111's DPM fast"},
    {"DPM adaptive", -1, "diffusers has no scheduler for A1111's DPM adaptive (adaptive step size)"},
    {"Restart", -1, "diffusers has no scheduler for A1111's Restart sampler"},
    {"DDIM CFG++", -1, "diffusers has no scheduler for A1111's DDIM CFG++"},
};
#define N_A1111 ((int)(sizeof a1111 / sizeof *a1111))

static int schedule_of(const char *name, enum sdp_sigmas *sig, const char **spacing)
{
    *spacing = NULL;
    if (!strcmp(name, "Automatic")) *sig = SDP_SIGMAS_CONFIG;
    else if (!strcmp(name, "Karras")) *sig = SDP_SIGMAS_KARRAS;
    else if (!strcmp(name, "Exponential")) *sig = SDP_SIGMAS_EXPONENTIAL;
    else if (!strcmp(name, "Beta")) *sig = SDP_SIGMAS_BETA;
    else if (!strcmp(name, "Uniform") || !strcmp(name, "Normal")) *sig = SDP_SIGMAS_DEFAULT;
    else if (!strcmp(name, "SGM Uniform") || !strcmp(name, "Simple")) *sig = SDP_SIGMAS_CONFIG, *spacing = "trailing";
    else return -1;
    return 0;
}

int sdp_sched_parse(const char *sampler, const char *schedule, enum sdp_sched_kind *kind,
                    struct sdp_sched_overrides *ov, char *err, size_t errcap)
{
    enum sdp_sigmas sig = SDP_SIGMAS_CONFIG;
    const char *spacing = NULL;
    int k = -1;
    if (!sampler || !*sampler) {
        snprintf(err, errcap, "empty sampler name");
        return -1;
    }
    enum sdp_sched_kind kk;
    if (sdp_sched_kind_from_name(sampler, &kk) == 0) k = (int)kk;
    char base[128];
    snprintf(base, sizeof base, "%s", sampler);
    for (int pass = 0; k < 0 && pass < 2; pass++) {
        for (int j = 0; j < N_A1111; j++) {
            if (strcmp(base, a1111[j].name)) continue;
            if (a1111[j].kind < 0) {
                snprintf(err, errcap, "sampler \"%s\" is not supported: %s", sampler, a1111[j].why);
                return -1;
            }
            k = a1111[j].kind;
            break;
        }
        if (k >= 0 || pass) break;
        /* the old combined names: "DPM++ 2M Karras", "DPM++ 3M SDE Exponential" */
        size_t L = strlen(base);
        if (L > 7 && !strcmp(base + L - 7, " Karras")) base[L - 7] = 0, sig = SDP_SIGMAS_KARRAS;
        else if (L > 12 && !strcmp(base + L - 12, " Exponential")) base[L - 12] = 0, sig = SDP_SIGMAS_EXPONENTIAL;
        else break;
    }
    if (k < 0) {
        char names[1024];
        size_t o = 0;
        for (int j = 0; j < N_A1111 && o < sizeof names; j++)
            if (a1111[j].kind >= 0) o += (size_t)snprintf(names + o, sizeof names - o, "%s\"%s\"", o ? ", " : "", a1111[j].name);
        snprintf(err, errcap, "unknown sampler \"%s\": one of %s (Karras/Exponential suffixes accepted), or %s",
                 sampler, names, sdp_sched_names());
        return -1;
    }
    if (schedule && *schedule) {
        enum sdp_sigmas s2;
        const char *sp2;
        if (schedule_of(schedule, &s2, &sp2)) {
            snprintf(err, errcap, "schedule type \"%s\" is not supported (Automatic, Uniform, Normal, Karras, "
                     "Exponential, Beta, SGM Uniform, Simple; Polyexponential, KL Optimal, Align Your Steps, DDIM, "
                     "Turbo have no diffusers equivalent)", schedule);
            return -1;
        }
        if (s2 != SDP_SIGMAS_CONFIG) {
            if (sig != SDP_SIGMAS_CONFIG && sig != s2) {
                snprintf(err, errcap, "sampler \"%s\" and schedule type \"%s\" disagree", sampler, schedule);
                return -1;
            }
            sig = s2;
        }
        if (sp2) spacing = sp2;
    }
    if ((sig == SDP_SIGMAS_KARRAS || sig == SDP_SIGMAS_EXPONENTIAL || sig == SDP_SIGMAS_BETA) &&
        !((1u << k) & SIGMA_CONV)) {
        snprintf(err, errcap, "%s (%s) takes no Karras/exponential/beta sigmas", kind_a1111[k], kind_classes[k]);
        return -1;
    }
    *kind = (enum sdp_sched_kind)k;
    if (sig != SDP_SIGMAS_CONFIG) {
        ov->sigmas = sig;
        ov->karras = sig == SDP_SIGMAS_KARRAS;
    }
    if (spacing) ov->spacing = spacing;
    return 0;
}

void sdp_sched_a1111_name(const struct sdp_scheduler *s, const char **sampler, const char **schedule)
{
    *sampler = kind_a1111[s->kind];
    switch (s->sigma_kind) {
    case SDP_SIGMAS_KARRAS: *schedule = "Karras"; break;
    case SDP_SIGMAS_EXPONENTIAL: *schedule = "Exponential"; break;
    case SDP_SIGMAS_BETA: *schedule = "Beta"; break;
    default: *schedule = s->spacing == SDP_SPACING_TRAILING ? "SGM Uniform" : "Automatic"; break;
    }
}

int sdp_sched_add_noise(const struct sdp_scheduler *s, int idx, const float *x0, const float *noise, float *out,
                        size_t n)
{
    if (idx < 0 || idx >= s->n_steps) return -1;
    switch (s->kind) {
    case SDP_SCHED_EULER:
    case SDP_SCHED_EULER_A:
    case SDP_SCHED_LMS: {
        float sigma = s->sigmas[idx];
        for (size_t k = 0; k < n; k++) out[k] = x0[k] + noise[k] * sigma;
        return 0;
    }
    case SDP_SCHED_DPMPP_2M:
    case SDP_SCHED_DPMPP_2M_SDE:
    case SDP_SCHED_DPMPP_3M_SDE:
    case SDP_SCHED_UNIPC:
    case SDP_SCHED_DEIS: { /* _sigma_to_alpha_sigma_t */
        float sigma = s->sigmas[idx], a_t = 1.0f / sqrtf(sigma * sigma + 1.0f), s_t = sigma * a_t;
        for (size_t k = 0; k < n; k++) out[k] = a_t * x0[k] + s_t * noise[k];
        return 0;
    }
    case SDP_SCHED_DDIM:
    case SDP_SCHED_LCM:
    case SDP_SCHED_PNDM:
    case SDP_SCHED_DDPM:
    case SDP_SCHED_TCD: {
        int t = (int)s->timesteps[idx];
        if (t < 0 || t >= s->n_train) return -1;
        float a = s->alphas_cumprod[t], sa = sqrtf(a), sb = sqrtf(1.0f - a);
        for (size_t k = 0; k < n; k++) out[k] = sa * x0[k] + sb * noise[k];
        return 0;
    }
    case SDP_SCHED_FLOW_EULER: { /* scale_noise at the begin index */
        float sigma = s->sigmas[idx], c = 1.0f - sigma;
        for (size_t k = 0; k < n; k++) out[k] = sigma * noise[k] + c * x0[k];
        return 0;
    }
    default: /* heun, dpm2, dpm2_a (order 2): sigmas[idx] + noise as Euler once the loop begins at
              * t_start * sdp_sched_order(); refused until sd_pipeline.c does */
        return -1;
    }
}

int sdp_sched_order(const struct sdp_scheduler *s)
{
    return s->kind == SDP_SCHED_HEUN || s->kind == SDP_SCHED_DPM2 || s->kind == SDP_SCHED_DPM2_A ? 2 : 1;
}
