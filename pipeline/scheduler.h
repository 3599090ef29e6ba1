/* scheduler.h — the diffusion schedulers (samplers) of the txt2img loop, ported from diffusers 0.42 so
 * that timesteps, sigmas and every update match it step by step:
 *   euler        EulerDiscreteScheduler (Karras / exponential / beta sigmas; SD-Turbo = "trailing")
 *   euler_a      EulerAncestralDiscreteScheduler (draws noise from the torch-compatible RNG)
 *   dpmpp_2m     DPMSolverMultistepScheduler, algorithm dpmsolver++, solver_order 2 (midpoint or heun
 *                solver_type, lower_order_final, euler_at_final, final_sigmas_type "zero")
 *   dpmpp_2m_sde the same class with algorithm_type sde-dpmsolver++ (noise every step)
 *   dpmpp_3m_sde the same class with algorithm_type sde-dpmsolver++, solver_order 3
 *   ddim         DDIMScheduler (eta from sdp_sched_overrides; eta > 0 draws noise)
 *   lcm          LCMScheduler (draws noise between steps)
 *   pndm         PNDMScheduler (skip_prk_steps true = PLMS, SD 1.x's default; false = PRK + PLMS)
 *   lms          LMSDiscreteScheduler (order 4; the coefficients integrated exactly)
 *   heun         HeunDiscreteScheduler (2 model runs per step: n_steps = 2 * steps - 1)
 *   dpm2         KDPM2DiscreteScheduler (2 runs per step)
 *   dpm2_a       KDPM2AncestralDiscreteScheduler (2 runs per step, noise at each second run)
 *   unipc        UniPCMultistepScheduler (bh2 or bh1, solver_order 1 or 2, predict_x0)
 *   deis         DEISMultistepScheduler (logrho, solver_order 1-3)
 *   ddpm         DDPMScheduler (variance_type fixed_small, fixed_small_log, fixed_large)
 *   tcd          TCDScheduler (gamma = eta from sdp_sched_overrides, as the pipeline passes it)
 *   flow_euler   FlowMatchEulerDiscreteScheduler (SD 3.x, Flux: flow matching; A1111/Forge's "Euler"
 *                on flow models): shift, use_dynamic_shifting with mu (time_shift_type exponential or
 *                linear), the pipeline's custom sigmas, shift_terminal, invert_sigmas, Karras /
 *                exponential / beta sigmas, stochastic_sampling; see "Flow matching" below
 * The loop (sd_pipeline.c) runs i = 0 .. n_steps-1 over diffusers' scheduler.timesteps: classes that
 * evaluate the model twice per step (heun, dpm2, dpm2_a) or run PRK steps list every evaluation
 * there, exactly as diffusers' pipeline loops over scheduler.timesteps.
 * The checkpoint's scheduler_config.json supplies num_train_timesteps, beta_start/beta_end,
 * beta_schedule (linear, scaled_linear, squaredcos_cap_v2), trained_betas, prediction_type
 * (epsilon, v_prediction, sample where the class takes it), timestep_spacing (linspace, leading,
 * trailing), steps_offset, set_alpha_to_one, clip_sample(_range), use_karras_sigmas,
 * use_exponential_sigmas, use_beta_sigmas (alpha = beta = 0.6 as diffusers fixes them),
 * sigma_min/sigma_max (Euler, UniPC), original_inference_steps/timestep_scaling (LCM, TCD),
 * skip_prk_steps (PNDM), variance_type (DDPM), algorithm_type/solver_order/solver_type/
 * lower_order_final/euler_at_final (DPM-Solver, DEIS, UniPC); a key that is absent takes the
 * default of the chosen diffusers class, as SchedulerClass.from_config(config) does. Settings that
 * are not ported (rescale_betas_zero_snr, thresholding, DPM-Solver/UniPC/DEIS use_flow_sigmas and
 * use_dynamic_shifting, learned variances, non-zero final sigma, ...) are refused with the key
 * named, never ignored (flow_euler's keys: see "Flow matching" below).
 * Not ported and refused by name (sdp_sched_parse): A1111's "DPM++ SDE" (diffusers
 * DPMSolverSDEScheduler draws its noise from torchsde's BrownianTree, whose random stream is not
 * torch.randn's), "DPM++ 2S a", "DPM fast", "DPM adaptive", "Restart", and the schedule types
 * diffusers has no equivalent of.
 *
 * As StableDiffusionPipeline.__init__ does, sdp_sched_load rewrites by default a steps_offset other
 * than 1 to 1 and a clip_sample of true to false (on the config as the class sees it, its defaults
 * filled in), with a note on stderr (sdp_sched_overrides.raw turns this off).
 *
 * Arithmetic: schedule set-up in double as numpy does, cast to float32 where diffusers casts;
 * per-element updates in float32 in diffusers' operation order (the file is compiled without
 * FMA contraction). Sample tensors are NCHW float32 of n elements; the scheduler is agnostic of
 * the shape (noise is drawn as torch.randn of the sample's n elements).
 */
#ifndef PIPELINE_SCHEDULER_H
#define PIPELINE_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

struct sdp_rng;

enum sdp_sched_kind {
    SDP_SCHED_EULER, SDP_SCHED_EULER_A, SDP_SCHED_DPMPP_2M, SDP_SCHED_DDIM, SDP_SCHED_LCM,
    SDP_SCHED_PNDM, SDP_SCHED_LMS, SDP_SCHED_HEUN, SDP_SCHED_DPM2, SDP_SCHED_DPM2_A,
    SDP_SCHED_DPMPP_2M_SDE, SDP_SCHED_DPMPP_3M_SDE, SDP_SCHED_UNIPC, SDP_SCHED_DEIS, SDP_SCHED_DDPM,
    SDP_SCHED_TCD, SDP_SCHED_FLOW_EULER,
};

enum sdp_pred { SDP_PRED_EPSILON, SDP_PRED_V, SDP_PRED_SAMPLE };
enum sdp_spacing { SDP_SPACING_LINSPACE, SDP_SPACING_LEADING, SDP_SPACING_TRAILING };
/* The sigma schedule (use_karras_sigmas / use_exponential_sigmas / use_beta_sigmas). CONFIG (0):
 * as the config says. */
enum sdp_sigmas { SDP_SIGMAS_CONFIG, SDP_SIGMAS_DEFAULT, SDP_SIGMAS_KARRAS, SDP_SIGMAS_EXPONENTIAL, SDP_SIGMAS_BETA };

/* Overrides from the command line (-1 / NULL / 0: take the config's value or the class default).
 * Zero-initialise the struct and set what is wanted; karras must be set (-1 = config). */
struct sdp_sched_overrides {
    int karras;                  /* use_karras_sigmas: -1, 0, 1 */
    const char *spacing;         /* timestep_spacing: NULL, "linspace", "leading", "trailing" */
    const char *prediction_type; /* NULL, "epsilon", "v_prediction", "sample" (SD 2.x 512 vs 768) */
    enum sdp_sigmas sigmas;      /* sigma schedule; overrides karras when not CONFIG */
    float eta;                   /* DDIM's eta / TCD's gamma as the pipeline passes it (0 = its default) */
    int raw;                     /* 1: no StableDiffusionPipeline config rewrites (the class alone) */
};

struct sdp_scheduler {
    enum sdp_sched_kind kind;      /* which diffusers class (and DPM-Solver variant) */
    int n_train;                   /* num_train_timesteps */
    float *alphas_cumprod;         /* [n_train], float32 as torch.cumprod gives them */
    float *train_sigmas;           /* [n_train] ((1 - a) / a) ** 0.5 in float32 */
    enum sdp_pred pred;            /* prediction_type */
    enum sdp_spacing spacing;      /* timestep_spacing */
    int steps_offset;              /* steps_offset (after the pipeline rewrite) */
    int karras;                    /* use_karras_sigmas (1 when sigma_kind is KARRAS) */
    enum sdp_sigmas sigma_kind;    /* DEFAULT, KARRAS, EXPONENTIAL or BETA */
    int squaredcos;                /* beta_schedule == squaredcos_cap_v2 */
    double sigma_min, sigma_max;   /* Euler's / UniPC's optional sigma_min/sigma_max (NAN = unset) */
    int clip_sample;               /* DDIM/DDPM/LCM/Heun clip_sample (after the pipeline rewrite) */
    float clip_range;              /* clip_sample_range */
    float final_alpha_cumprod;     /* 1 if set_alpha_to_one else alphas_cumprod[0] */
    int original_steps;            /* LCM/TCD original_inference_steps */
    double timestep_scaling;       /* LCM timestep_scaling */
    int skip_prk;                  /* PNDM skip_prk_steps */
    int variance_type;             /* DDPM: 0 fixed_small, 1 fixed_small_log, 2 fixed_large */
    int solver_order;              /* DPM-Solver / DEIS / UniPC solver_order */
    int sde;                       /* DPM-Solver algorithm_type sde-dpmsolver++ */
    int solver_heun;               /* DPM-Solver solver_type heun (else midpoint); UniPC: bh1 */
    int lower_order_final, euler_at_final;
    float eta;                     /* DDIM eta / TCD gamma */
    /* after sdp_sched_set_timesteps */
    int n_steps;                   /* number of model evaluations (len(scheduler.timesteps)) */
    int n_inference;               /* num_inference_steps as asked */
    double *timesteps;             /* [n_steps] as diffusers holds them (float32 or int64 values) */
    float *sigmas;                 /* [n_steps + 2] the class's sigmas (sigma-space classes) */
    float *sig2;                   /* [n_steps + 2] DPM2: sigmas_interpol; DPM2 a: sigmas_interpol */
    float *sig_up, *sig_down;      /* DPM2 a: sigmas_up, sigmas_down (expanded as diffusers) */
    float init_noise_sigma;        /* latents = noise * init_noise_sigma */
    int first_index;               /* index of the first step (index_for_timestep rule) */
    /* multistep state */
    float *hist[6];                /* history buffers of prev_n elements each */
    size_t prev_n;                 /* elements in each hist buffer */
    float *prev_x0;                /* unused, kept NULL (hist[] holds the history) */
    int lower_order_nums;          /* updates done so far (capped at solver_order) */
    int n_hist;                    /* entries in the history (LMS derivatives, PNDM ets) */
    int second;                    /* Heun/DPM2: the next step is the second evaluation */
    int counter;                   /* PNDM counter; UniPC: 1 once last_sample is set */
    int this_order;                /* UniPC order of the last predictor */
    float cur_dt;                  /* Heun dt */
    /* flow_euler (FlowMatchEulerDiscreteScheduler's config) */
    double shift;                  /* shift (> 0) */
    int dyn_shift;                 /* use_dynamic_shifting: set_timesteps needs mu */
    double base_shift, max_shift;  /* calculate_shift's shifts (config, defaults 0.5, 1.15) */
    double base_seq, max_seq;      /* base_image_seq_len, max_image_seq_len (256, 4096) */
    int time_shift_linear;         /* time_shift_type "linear" (else "exponential") */
    int invert_sigmas;             /* invert_sigmas */
    double shift_terminal;         /* shift_terminal (0 = none, as diffusers' truthiness test) */
    int stochastic;                /* stochastic_sampling (draws noise every step) */
    double flow_sigma_min, flow_sigma_max; /* __init__'s sigmas[-1], sigmas[0] (float32 values) */
};

/* The kind of a scheduler name (sdp_sched_names lists them). Returns 0, or -1 for no such name. */
int sdp_sched_kind_from_name(const char *name, enum sdp_sched_kind *out);
/* The kind that ports diffusers class cls (a scheduler_config.json's _class_name, e.g.
 * "EulerDiscreteScheduler"). Returns 0, or -1 when no kind ports it. */
int sdp_sched_kind_from_class(const char *cls, enum sdp_sched_kind *out);
/* The name of kind k (what sdp_sched_kind_from_name reads) and the diffusers class it ports. */
const char *sdp_sched_kind_name(enum sdp_sched_kind k);
const char *sdp_sched_kind_class(enum sdp_sched_kind k);
/* Every accepted name, comma-separated ("euler, euler_a, ..."), for usage and error messages. */
const char *sdp_sched_names(void);

/* A sampler chosen as A1111 / Forge name it, or by our names: sampler is one of sdp_sched_names()
 * ("euler_a", ...) or an A1111 sampler name ("Euler a", "DPM++ 2M", "DPM++ 2M Karras" (the old
 * combined names, "Karras"/"Exponential" suffix), "DPM++ 2M SDE", "DPM++ 3M SDE", "DPM2", "DPM2 a",
 * "LMS", "Heun", "PLMS", "DDIM", "UniPC", "DEIS", "LCM", "TCD", "DDPM", ...; case-sensitive as
 * A1111 writes them); schedule (NULL or "" = none) is A1111 1.9+'s separate "Schedule type":
 * "Automatic" (the config's), "Karras", "Exponential", "Beta", "SGM Uniform" (= timestep_spacing
 * "trailing", as diffusers' docs map it), "Uniform"/"Normal" (the class's default sigmas).
 * On success sets *kind and the sigmas/karras/spacing fields of *ov (other fields untouched) and
 * returns 0. Returns -1 with a message in err for an unknown name (listing the accepted ones), a
 * sampler diffusers has and we refuse (DPM++ SDE: torchsde BrownianTree noise), A1111 samplers
 * diffusers has no class for (DPM++ 2S a, DPM fast, DPM adaptive, Restart, ...), schedule types
 * without a diffusers equivalent (Polyexponential, Align Your Steps, KL Optimal, Simple, DDIM,
 * Turbo), and a schedule the sampler's class does not take (e.g. "Karras" with Euler a). */
int sdp_sched_parse(const char *sampler, const char *schedule, enum sdp_sched_kind *kind,
                    struct sdp_sched_overrides *ov, char *err, size_t errcap);
/* The A1111 names of a loaded scheduler for the PNG "parameters" metadata: *sampler gets the
 * "Sampler:" value ("DPM++ 2M", "Euler a", ...) and *schedule the "Schedule type:" value
 * ("Karras", "Exponential", "Beta", "SGM Uniform" for trailing spacing, "Automatic" otherwise).
 * Static strings; never fails. */
void sdp_sched_a1111_name(const struct sdp_scheduler *s, const char **sampler, const char **schedule);

/* Reads scheduler_config.json at `path` (parsed with cJSON) and sets up the training schedule for
 * `kind` as SchedulerClass.from_config(config, **overrides) would, then (unless ov->raw) applies
 * StableDiffusionPipeline.__init__'s rewrites (steps_offset -> 1, clip_sample true -> false) with a
 * note on stderr. For dpmpp_2m the config's algorithm_type/solver_order pick dpmpp_2m_sde or
 * dpmpp_3m_sde (s->kind tells which); dpmpp_2m_sde/dpmpp_3m_sde force them. Returns 0, or -1 with
 * a message naming the file and key (missing file, malformed JSON, unknown beta_schedule/
 * prediction_type/timestep_spacing, non-numeric values, trained_betas length, a setting not
 * ported, a sigma schedule the class does not take). */
int sdp_sched_load(const char *path, enum sdp_sched_kind kind, const struct sdp_sched_overrides *ov,
                   struct sdp_scheduler **out, char *err, size_t errcap);
void sdp_sched_free(struct sdp_scheduler *s);

/* set_timesteps(n): n inference steps; s->n_steps becomes the number of model evaluations
 * (2n - 1 for heun/dpm2/dpm2_a, n + 1 for PLMS, n + 1 or more for PRK). Returns 0, or -1 with a
 * message (n < 1 or > n_train, LCM's/TCD's original_inference_steps < n, PLMS/PRK with too few
 * steps as diffusers fails on them; flow_euler with use_dynamic_shifting, which needs mu:
 * sdp_sched_set_timesteps_flow). */
int sdp_sched_set_timesteps(struct sdp_scheduler *s, int n, char *err, size_t errcap);

/* The timestep value step i feeds to the UNet (float32 as the UNet takes it). */
float sdp_sched_timestep(const struct sdp_scheduler *s, int i);
/* scale_model_input for step i: out[k] = x[k] / sqrt(sigma^2 + 1) (sigma-space classes: euler,
 * euler_a, lms, heun, dpm2, dpm2_a, with the class's sigma for that evaluation), else a copy. */
void sdp_sched_scale_input(const struct sdp_scheduler *s, int i, const float *x, float *out, size_t n);
/* step(): sample[0..n) <- the previous sample given model_out for step i (0-based, in order, i <
 * n_steps). rng: the generator noise is drawn from (euler_a, lcm, dpm2_a, dpmpp_2m_sde,
 * dpmpp_3m_sde, ddim with eta > 0, ddpm, tcd with eta > 0, flow_euler with stochastic_sampling),
 * as diffusers passes the pipeline's generator. Returns 0, or -1 on allocation failure. */
int sdp_sched_step(struct sdp_scheduler *s, int i, const float *model_out, float *sample, size_t n,
                   struct sdp_rng *rng);

/* add_noise(original, noise, timestep) as the diffusers class does it for img2img/inpainting
 * (the pipelines set the begin index, so the sigma is taken by index, not looked up by value):
 * out[k] = the noised sample at step index idx (0-based index into timesteps/sigmas, as
 * set_begin_index(idx) / step_index idx): Euler, Euler a, LMS: x0 + noise * sigmas[idx];
 * DPM-Solver++ (2M, 2M SDE, 3M SDE), UniPC, DEIS: alpha_t x0 + sigma_t noise with alpha_t = 1 /
 * sqrt(sigma^2 + 1), sigma_t = sigma alpha_t; DDIM, LCM, PNDM, DDPM, TCD: sqrt(acp[t]) x0 +
 * sqrt(1 - acp[t]) noise with t = timesteps[idx] (float32 as torch); flow_euler: scale_noise,
 * sigmas[idx] * noise + (1 - sigmas[idx]) * x0. out may be x0. Returns 0, or
 * -1 when idx is out of range or the kind is heun, dpm2 or dpm2_a (scheduler.order 2: diffusers'
 * img2img begins at t_start * order, which the loop does not do yet; refused, not approximated). */
int sdp_sched_add_noise(const struct sdp_scheduler *s, int idx, const float *x0, const float *noise, float *out,
                        size_t n);
/* diffusers' scheduler.order: model evaluations per inference step (2 for heun, dpm2, dpm2_a;
 * 1 otherwise). img2img's begin index is t_start * order. */
int sdp_sched_order(const struct sdp_scheduler *s);

/* ---- Flow matching (flow_euler: FlowMatchEulerDiscreteScheduler, diffusers 0.42) ----
 * Loading: sdp_sched_load with kind flow_euler, or with kind euler (A1111/Forge's "Euler") on a
 * config whose _class_name is FlowMatchEulerDiscreteScheduler (s->kind then tells flow_euler); any
 * other kind on such a config is refused (no other flow-matching class is ported), and so is
 * flow_euler on a config naming another class. Keys read: num_train_timesteps, shift (> 0),
 * use_dynamic_shifting, base_shift, max_shift, base_image_seq_len, max_image_seq_len,
 * invert_sigmas, shift_terminal (null/0 = none, else in (0, 1)), use_karras_sigmas,
 * use_exponential_sigmas, use_beta_sigmas, time_shift_type ("exponential", "linear"),
 * stochastic_sampling; "_"-prefixed metadata is skipped; any other key is refused by name (diffusers
 * would keep it in the config, where sigma_min / sigma_max would change the Karras conversion and
 * use_flow_sigmas FluxPipeline's sigmas). Overrides: the sigma schedule (Karras / Exponential /
 * Beta schedule types) as from_config(config, use_karras_sigmas=True, ...); a timestep spacing or
 * prediction type is refused (the class has neither). StableDiffusion3Pipeline and FluxPipeline
 * rewrite nothing in the scheduler config; __init__'s own rewrite is kept: without dynamic shifting
 * the training sigmas are shifted, so sigma_min is the shifted 1/N, and set_timesteps shifts the
 * linspace between the shifted ends again (diffusers' double shift, reproduced).
 * The loop: latents = noise (init_noise_sigma 1, no scale_model_input: sdp_sched_scale_input
 * copies); the transformer takes sdp_sched_timestep(s, i) = sigma * num_train_timesteps (float32):
 * SD 3.x as is, Flux divided by 1000 (FluxPipeline passes timestep / 1000); step: x + (sigma_next
 * - sigma) * v, or with stochastic_sampling x0 = x - sigma * v, x = (1 - sigma_next) x0 +
 * sigma_next * noise (torch.randn from rng); img2img: sdp_sched_add_noise is scale_noise at
 * begin index idx: sigma * noise + (1 - sigma) * x0. */

/* FluxPipeline's / StableDiffusion3Pipeline's calculate_shift (double, Python's arithmetic):
 * m = (max_shift - base_shift) / (max_seq_len - base_seq_len), mu = image_seq_len * m +
 * (base_shift - m * base_seq_len). */
double sdp_flow_calculate_shift(double image_seq_len, double base_seq_len, double max_seq_len, double base_shift,
                                double max_shift);
/* The image_seq_len of a width x height image (pixels): Flux's packed latents (vae scale 8, 2x2
 * patches: (height // 16) * (width // 16)), equally SD3's (latent // patch_size 2). */
int sdp_flow_image_seq_len(int width, int height);
/* The mu FluxPipeline passes for a width x height image: calculate_shift(image_seq_len,
 * base_image_seq_len, max_image_seq_len, base_shift, max_shift) from s's config (SD3 with
 * use_dynamic_shifting computes the same). */
double sdp_sched_flow_mu(const struct sdp_scheduler *s, int width, int height);
/* FluxPipeline's sigmas: out[0..n) = np.linspace(1.0, 1 / n, n) (double). */
void sdp_flow_flux_sigmas(int n, double *out);
/* FlowMatchEulerDiscreteScheduler.set_timesteps(num_inference_steps, sigmas=, mu=): sigmas NULL:
 * the class's n-step linspace (SD3: sdp_sched_set_timesteps(s, n) does the same); else n custom
 * sigmas (FluxPipeline's sdp_flow_flux_sigmas; taken as float32 as diffusers does). mu: NAN when
 * none; required (as diffusers raises) with use_dynamic_shifting, ignored without. Returns 0, or -1
 * with a message (not flow_euler, n outside [1, 100000], mu missing or not finite with dynamic
 * shifting, a custom sigma not finite, shift_terminal on a schedule ending at sigma 1 (1 step:
 * diffusers divides 0 by 0)). */
int sdp_sched_set_timesteps_flow(struct sdp_scheduler *s, int n, const double *sigmas, double mu, char *err,
                                 size_t errcap);

#endif
