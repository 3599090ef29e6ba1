/* sd3_pipeline.h — Stable Diffusion 3 / 3.5 and Flux txt2img (diffusers' StableDiffusion3Pipeline and
 * FluxPipeline, 0.42; Flux: below)
 * around models compiled by onnx2cl: two CLIP text encoders with projection (CLIP-L, CLIP-G), the
 * T5 encoder (optional), the MMDiT transformer (SD3Transformer2DModel) and the 16-channel VAE
 * decoder, loaded as sdp_model (shared objects or .o2d files).
 *
 * What a run does (as the pipeline with prompt_2 = prompt_3 = prompt, clip_skip None,
 * max_sequence_length = the T5 encoder's input length, generator = torch.Generator().manual_seed
 * (seed)):
 *   each CLIP tokenizer to 77 ids (padding "max_length", truncation) -> its encoder:
 *   hidden_states[-2] [77, H] and text_embeds (the projected pooled output) [P]; the two hidden
 *   states concatenated per token [77, H1 + H2] and zero-padded to the T5 width D; T5's
 *   last_hidden_state [L, D] (ids: T5TokenizerFast, "</s>" then "<pad>" to L), or zeros [L, D]
 *   without a T5 encoder (diffusers' text_encoder_3=None); prompt_embeds = [clip; t5] [77 + L, D],
 *   pooled = [text_embeds_L, text_embeds_G]. With guidance (cfg > 1) the negative prompt ("" when
 *   none: encoded, no zeroing) the same way; rows [uncond, cond].
 *   latents = randn [16, h, w] (init_noise_sigma 1); per step i: the transformer on the rows with
 *   timestep = sigma_i * 1000 (float32), noise = uncond + cfg (cond - uncond), the flow-matching
 *   Euler step (scheduler.h's flow_euler: shift, dynamic shifting with mu from the image size).
 *   image = VAE(latents / scaling_factor + shift_factor) / 2 + 0.5, clamped to [0, 1].
 * Errors: every function returns 0, or -1 with a message naming the model file; sdp_sd3_generate
 * SDP_CANCELLED (sd_pipeline.h) when cancelled.
 */
#ifndef PIPELINE_SD3_PIPELINE_H
#define PIPELINE_SD3_PIPELINE_H

#include "sd_pipeline.h"
#include "t5_tokenizer.h"

/* The models, tokenizers and scheduler of one SD 3.x pipeline. Load the models with sdp_model_load
 * (te3.desc NULL: no T5), the tokenizers, the scheduler (flow_euler), set the VAE factors, then
 * sdp_sd3_check. */
struct sdp_sd3 {
    struct sdp_model te, te2, te3;   /* text_encoder (CLIP-L), text_encoder_2 (CLIP-G), text_encoder_3 (T5) */
    struct sdp_model dit, vae;       /* transformer, vae_decoder */
    struct sdp_model venc;           /* vae_encoder (img2img; optional): [1,3,H,W] -> [1,2C,h,w] mean || logvar */
    struct sdp_tokenizer *tok, *tok2;/* CLIP tokenizers (tokenizer, tokenizer_2) */
    struct sdp_t5_tokenizer *t5;     /* tokenizer_3 (needed with te3) */
    struct sdp_scheduler *sched;     /* FlowMatchEulerDiscreteScheduler (flow_euler) */
    float scaling_factor;            /* vae/config.json scaling_factor (SD3: 1.5305) */
    float shift_factor;              /* vae/config.json shift_factor (SD3: 0.0609) */
    /* filled by sdp_sd3_check */
    int te_out, te_pool, te_hidden, te_proj;    /* CLIP-L: penultimate_hidden_state, text_embeds */
    int te2_out, te2_pool, te2_hidden, te2_proj;/* CLIP-G */
    int t5_len, t5_dim;                          /* T5: ids length (max_sequence_length), width */
    int d_hs, d_ehs, d_pool, d_t, d_batch;       /* transformer inputs, batch */
    int lat_c, lat_h, lat_w, ctx_len, joint_dim; /* latents; encoder_hidden_states [77 + t5_len, joint_dim] */
    int v_in, img_h, img_w;                      /* VAE decoder input index, image size */
};

/* Checks that the models fit together: the CLIP encoders take input_ids [1,77] int and give
 * text_embeds [1,P] and penultimate_hidden_state [1,77,H]; T5 input_ids [1,L] -> [1,L,D] (without
 * T5, D and L come from the transformer: L = its context - 77); the transformer hidden_states
 * [B,C,h,w], encoder_hidden_states [B,77+L,D] with D >= H1 + H2, pooled_projections [B,P1+P2],
 * timestep [B]; the VAE decoder latent_sample [1,C,h,w]. Fills the index/shape fields. */
int sdp_sd3_check(struct sdp_sd3 *p, char *err, size_t errcap);

/* Generates prm->batch (must be 1) image(s) of prm->prompt into image [3, img_h, img_w] float32 in
 * [0, 1]. Reads prompt, negative, steps, cfg, seed, quiet, progress, cancel of prm, and img2img's
 * init_image [3, img_h, img_w] in [0, 1] + strength (StableDiffusion3Img2ImgPipeline: the VAE
 * encoder's latent_dist.sample(generator), (x - shift) * scaling, then noise from the same
 * generator, scale_noise at t_start = int(steps - steps x strength); steps - t_start steps run;
 * needs venc); refuses masks, latents, emphasis modes and guidance rescale (not ported). *n_tokens
 * (NULL: not wanted) receives the CLIP-L token count. tm (NULL: not wanted) the stage timings (the
 * transformer's under unet_*). Returns 0, SDP_CANCELLED, or -1 with a message. */
int sdp_sd3_generate(struct sdp_sd3 *p, const struct sdp_params *prm, float *image, int *n_tokens,
                     struct sdp_timings *tm, char *err, size_t errcap);

/* The flow pipelines' img2img start: t_start = int(max(steps - min(steps x strength, steps), 0))
 * (StableDiffusion3Img2ImgPipeline / FluxImg2ImgPipeline.get_timesteps; steps - t_start run). */
int sdp_flow_img2img_t_start(int steps, double strength);

/* Frees the models, tokenizers and scheduler (what sdp_sd3 holds) and zeroes it. */
void sdp_sd3_close(struct sdp_sd3 *p);

/* ---- Flux (diffusers' FluxPipeline, 0.42: schnell and dev) ----
 * What a run does (prompt_2 = prompt, generator = torch.Generator().manual_seed(seed)):
 *   CLIP-L's pooler_output [P] from 77 ids (padding "max_length", truncation); T5's
 *   last_hidden_state [L, D] (ids: T5TokenizerFast to L = the T5 encoder's input length,
 *   max_sequence_length; no attention mask); txt_ids = zeros [L, 3].
 *   latents = randn [16, h, w] (h = 2 (H / 16)), packed 2x2: token (r, c) of the (h/2) x (w/2) grid
 *   row-major, feature ch * 4 + dy * 2 + dx; img_ids [tokens, 3] = (0, r, c).
 *   sigmas = linspace(1, 1/n, n) (double), mu = calculate_shift(tokens, base/max_image_seq_len,
 *   base/max_shift) from the scheduler config; FlowMatchEulerDiscreteScheduler.set_timesteps(
 *   sigmas=, mu=); per step the transformer with timestep = (sigma * 1000) / 1000 (float32) and, for
 *   a transformer with a guidance input (dev), guidance = guidance_scale; true CFG when
 *   true_cfg_scale > 1 and a negative prompt is given: a second call with the negative prompt's
 *   embeddings, v = neg + true_cfg (cond - neg); the flow-matching Euler step.
 *   image = VAE(unpacked latents / scaling_factor + shift_factor) / 2 + 0.5, clamped. */
struct sdp_flux {
    struct sdp_model te, te2, dit, vae; /* text_encoder (CLIP-L), text_encoder_2 (T5), transformer, vae_decoder */
    struct sdp_model venc;              /* vae_encoder (img2img; optional), as sdp_sd3's */
    struct sdp_tokenizer *tok;          /* CLIP tokenizer */
    struct sdp_t5_tokenizer *t5;        /* tokenizer_2 (T5) */
    struct sdp_scheduler *sched;        /* flow_euler */
    float scaling_factor, shift_factor; /* vae/config.json (Flux: 0.3611, 0.1159) */
    /* filled by sdp_flux_check */
    int te_pool, pool_dim;              /* CLIP-L pooler_output index, width */
    int t5_len, t5_dim;                 /* T5 input length, width */
    int d_hs, d_ehs, d_pool, d_t, d_img, d_txt, d_g; /* transformer inputs (d_g -1: no guidance: schnell) */
    int tokens, feat;                   /* packed latents [tokens, feat] (feat = 4 * latent channels) */
    int lat_c, lat_h, lat_w, img_h, img_w, v_in;
};

/* Checks the models: CLIP input_ids [1,77] -> pooler_output [1,P]; T5 input_ids [1,L] ->
 * last_hidden_state [1,L,D]; the transformer hidden_states [1,T,F], encoder_hidden_states [1,L,D],
 * pooled_projections [1,P], timestep [1], img_ids [T,3], txt_ids [L,3], guidance [1] (optional);
 * the VAE decoder latent_sample [1,F/4,h,w] with T = (h/2)(w/2). Fills the fields. */
int sdp_flux_check(struct sdp_flux *p, char *err, size_t errcap);

/* Generates one image of prm->prompt into image [3, img_h, img_w] in [0, 1]: prm->cfg is
 * true_cfg_scale (> 1 with a non-empty negative prompt: true CFG), guidance the distilled guidance
 * (dev's guidance_scale; ignored by schnell); init_image + strength: FluxImg2ImgPipeline (as
 * sdp_sd3_generate's img2img, the noise drawn unpacked, then packed; needs venc). Refuses batches,
 * masks, latents, emphasis modes, guidance rescale. Returns 0, SDP_CANCELLED, or -1 with a message. */
int sdp_flux_generate(struct sdp_flux *p, const struct sdp_params *prm, float guidance, float *image, int *n_tokens,
                      struct sdp_timings *tm, char *err, size_t errcap);

void sdp_flux_close(struct sdp_flux *p);

/* ---- one call that loads either family's set (the CLI's -m and --models, the library) ---- */
struct sdp_sd3_files {
    int flux;              /* 1: Flux (text_encoder_2 is T5, prog[2] unused), 0: SD 3 */
    const char *prog[6];   /* text_encoder (CLIP-L), text_encoder_2 (CLIP-G; Flux: T5), text_encoder_3 (SD 3's
                              T5; NULL or "": none, zero embeddings), transformer, vae_decoder, vae_encoder
                              (img2img; NULL: none): .so or .o2d */
    const char *wts[6];    /* their weights files (NULL: the program's own, beside it) */
    const char *tok[3];    /* folders: tokenizer (CLIP-L), tokenizer_2 (SD 3's CLIP-G; Flux: unused), the T5
                              SentencePiece folder (spiece.model; SD 3's tokenizer_3, Flux's tokenizer_2) */
    const char *sched_cfg; /* scheduler_config.json (FlowMatchEulerDiscreteScheduler) */
    const char *vae_cfg;   /* vae/config.json whose scaling_factor / shift_factor win, or NULL / "" */
    float scaling, shift;  /* the VAE factors without vae_cfg (SD 3: 1.5305, 0.0609; Flux: 0.3611, 0.1159) */
    int offload;           /* 1: each model on the device only while its stage runs (sdp_model_load_opt) */
    struct o2r_ctx *text_ctx; /* the text encoders' context (--text-device), or NULL: the setup's ctx */
    struct sdp_mem_track *track; /* counts the models' device bytes (may be NULL) */
};

/* Loads f's scheduler, tokenizers and models on ctx into *p (SD 3) or *q (Flux) and checks them
 * (sdp_sd3_check / sdp_flux_check). Returns 0, or -1 with a message naming the file; on failure
 * nothing stays loaded (the struct is zeroed). */
int sdp_sd3_setup(struct o2r_ctx *ctx, const struct sdp_sd3_files *f, struct sdp_sd3 *p, struct sdp_flux *q,
                  char *err, size_t errcap);

#endif
