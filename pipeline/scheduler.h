/* scheduler.h — the diffusion schedulers of the txt2img loop, ported from diffusers 0.42 so that
 * timesteps, sigmas and every update match it step by step:
 *   euler      EulerDiscreteScheduler (use_karras_sigmas on/off; SD-Turbo = timestep_spacing
 *              "trailing", 1 step, guidance off)
 *   euler_a    EulerAncestralDiscreteScheduler (draws noise from the torch-compatible RNG)
 *   dpmpp_2m   DPMSolverMultistepScheduler, algorithm dpmsolver++, solver_order 2, midpoint,
 *              lower_order_final, final_sigmas_type "zero" (Karras sigmas on/off)
 *   ddim       DDIMScheduler, eta 0
 *   lcm        LCMScheduler (draws noise between steps)
 * The checkpoint's scheduler_config.json supplies num_train_timesteps, beta_start/beta_end,
 * beta_schedule (linear, scaled_linear, squaredcos_cap_v2), trained_betas, prediction_type
 * (epsilon, v_prediction, sample), timestep_spacing (linspace, leading, trailing), steps_offset,
 * set_alpha_to_one, clip_sample(_range), use_karras_sigmas, sigma_min/sigma_max (Euler),
 * original_inference_steps/timestep_scaling (LCM); a key that is absent takes the default of the
 * chosen diffusers class, as SchedulerClass.from_config(config) does. Settings that are not
 * ported (rescale_betas_zero_snr, thresholding, exponential/beta/flow sigmas, other DPM solver
 * types or orders, non-zero final sigma, ...) are refused with the key named, never ignored.
 *
 * Arithmetic: schedule set-up in double as numpy does, cast to float32 where diffusers casts;
 * per-element updates in float32 in diffusers' operation order (the file is compiled without
 * FMA contraction). Sample tensors are NCHW float32 of n elements; the scheduler is agnostic of
 * the shape.
 */
#ifndef PIPELINE_SCHEDULER_H
#define PIPELINE_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

struct sdp_rng;

enum sdp_sched_kind {
    SDP_SCHED_EULER, SDP_SCHED_EULER_A, SDP_SCHED_DPMPP_2M, SDP_SCHED_DDIM, SDP_SCHED_LCM,
};

enum sdp_pred { SDP_PRED_EPSILON, SDP_PRED_V, SDP_PRED_SAMPLE };
enum sdp_spacing { SDP_SPACING_LINSPACE, SDP_SPACING_LEADING, SDP_SPACING_TRAILING };

/* Overrides from the command line (-1 / NULL: take the config's value or the class default). */
struct sdp_sched_overrides {
    int karras;                  /* use_karras_sigmas: -1, 0, 1 (euler, dpmpp_2m) */
    const char *spacing;         /* timestep_spacing: NULL, "linspace", "leading", "trailing" */
    const char *prediction_type; /* NULL, "epsilon", "v_prediction", "sample" (SD 2.x 512 vs 768) */
};

struct sdp_scheduler {
    enum sdp_sched_kind kind;      /* which diffusers class */
    int n_train;                   /* num_train_timesteps */
    float *alphas_cumprod;         /* [n_train], float32 as torch.cumprod gives them */
    float *train_sigmas;           /* [n_train] ((1 - a) / a) ** 0.5 in float32 */
    enum sdp_pred pred;            /* prediction_type */
    enum sdp_spacing spacing;      /* timestep_spacing */
    int steps_offset;              /* steps_offset */
    int karras;                    /* use_karras_sigmas */
    int squaredcos;                /* beta_schedule == squaredcos_cap_v2 */
    double sigma_min, sigma_max;   /* Euler's optional sigma_min/sigma_max (NAN = unset) */
    int clip_sample;               /* DDIM/LCM clip_sample */
    float clip_range;              /* clip_sample_range */
    float final_alpha_cumprod;     /* DDIM/LCM: 1 if set_alpha_to_one else alphas_cumprod[0] */
    int original_steps;            /* LCM original_inference_steps */
    double timestep_scaling;       /* LCM timestep_scaling */
    /* after sdp_sched_set_timesteps */
    int n_steps;                   /* number of inference steps */
    double *timesteps;             /* [n_steps] as diffusers holds them (float32 or int64 values) */
    float *sigmas;                 /* [n_steps + 1] (Euler, Euler a, DPM++) */
    float init_noise_sigma;        /* latents = noise * init_noise_sigma */
    int first_index;               /* index of the first step (index_for_timestep rule) */
    /* DPM++ 2M state */
    float *prev_x0;                /* previous data prediction, [n] */
    size_t prev_n;                 /* elements in prev_x0 */
    int lower_order_nums;          /* updates done so far (capped at 2) */
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

/* Reads scheduler_config.json at `path` and sets up the training schedule for `kind`. Returns 0,
 * or -1 with a message naming the file and key (missing file, malformed JSON, unknown
 * beta_schedule/prediction_type/timestep_spacing, non-numeric values, trained_betas length). */
int sdp_sched_load(const char *path, enum sdp_sched_kind kind, const struct sdp_sched_overrides *ov,
                   struct sdp_scheduler **out, char *err, size_t errcap);
void sdp_sched_free(struct sdp_scheduler *s);

/* set_timesteps(n). Returns 0, or -1 with a message (n < 1 or > n_train, LCM's
 * original_inference_steps < n). */
int sdp_sched_set_timesteps(struct sdp_scheduler *s, int n, char *err, size_t errcap);

/* The timestep value step i feeds to the UNet (float32 as the UNet takes it). */
float sdp_sched_timestep(const struct sdp_scheduler *s, int i);
/* scale_model_input for step i: out[k] = x[k] / sqrt(sigma^2 + 1) (Euler family), else a copy. */
void sdp_sched_scale_input(const struct sdp_scheduler *s, int i, const float *x, float *out, size_t n);
/* step(): sample[0..n) <- the previous sample given model_out for step i (0-based, in order).
 * rng: the generator noise is drawn from (euler_a, lcm), as diffusers passes the pipeline's
 * generator. Returns 0, or -1 on allocation failure. */
int sdp_sched_step(struct sdp_scheduler *s, int i, const float *model_out, float *sample, size_t n,
                   struct sdp_rng *rng);

/* add_noise(original, noise, timestep) as the diffusers class does it for img2img/inpainting
 * (the pipelines set the begin index, so the sigma is taken by index, not looked up by value):
 * out[k] = the noised sample at step index idx (0-based index into timesteps/sigmas, as
 * set_begin_index(idx) / step_index idx): Euler, Euler a: x0 + noise * sigmas[idx];
 * DPM++ 2M: alpha_t x0 + sigma_t noise with alpha_t = 1 / sqrt(sigma^2 + 1), sigma_t = sigma
 * alpha_t; DDIM, LCM: sqrt(acp[t]) x0 + sqrt(1 - acp[t]) noise with t = timesteps[idx] (float32
 * as torch). out may be x0. Returns 0, or -1 when this kind has no add_noise here (img2img is
 * refused with it) or idx is out of range. */
int sdp_sched_add_noise(const struct sdp_scheduler *s, int idx, const float *x0, const float *noise, float *out,
                        size_t n);

#endif
