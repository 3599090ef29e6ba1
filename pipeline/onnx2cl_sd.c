/* onnx2cl_sd.c — onnx2cl-sd: Stable Diffusion txt2img, img2img and inpainting from models compiled by onnx2cl.
 *
 *   onnx2cl-sd -m CHECKPOINT -p "a photo of a cat" -o cat.png [options]
 *   onnx2cl-sd --models DIR --hf CKPT -p "a photo of a cat" -o cat.png [options]
 *
 * -m: a .safetensors checkpoint or diffusers folder; its architecture is found among the installed
 * ones and the models are compiled into the cache on first use (sd_engine.h, docs/engine.md).
 * DIR holds text_encoder.so, unet.so, vae_decoder.so (+ .weights) built from onnx2cl's C output,
 * or descriptor files text_encoder.o2d, ... (onnx2cl -o NAME.o2d: no C compiler needed);
 * CKPT is a Hugging Face SD folder (tokenizer/vocab.json + merges.txt,
 * scheduler/scheduler_config.json, vae/config.json). Prints a progress line per step and a timings
 * table on stderr; writes 8-bit RGB PNGs with the generation parameters in A1111's infotext format
 * (sd_infotext.h). txt2img, img2img (--init-image, --strength: the VAE encoder is compiled too),
 * inpainting (--mask, --mask-blur; 4-channel UNets by latent blending, 9-channel inpainting UNets),
 * batches (--batch-size N per UNet run, --batch-count K; image k: seed + k, OUT-k.png), each as the
 * diffusers 0.42 pipeline of the same name with generator=[Generator().manual_seed(seed + i)].
 * Exit status: 0 ok, 1 error (files, models, device), 2 usage (flags, shapes the build cannot do,
 * output path). Each image is written atomically (a temporary file renamed) when its batch is
 * done: a failed or killed --batch-count run keeps the finished batches' images and no partial
 * file; --save-image at the end. An output that is a file the run reads, or another output, is
 * refused before any work.
 */
#include "clip_tokenizer.h"
#include "json_file.h"
#include "scheduler.h"
#include "platform.h" /* o2r_path_same_file, o2r_exe_path, o2r_realpath, o2r_random_bytes ... */
#include "sd_engine.h"
#include "sd_preview.h"
#include "sd_infotext.h"
#include "sd_pipeline.h"
#include "sd_serve.h"
#include "sd_session.h" /* sds_image_resize */
#ifdef ONNX2CL_HAVE_SD3
#include "sd3_pipeline.h"
#endif

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#ifndef ONNX2CL_VERSION
#define ONNX2CL_VERSION "dev"
#endif

static const char *prog = "onnx2cl-sd";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: onnx2cl-sd -m CHECKPOINT --prompt TEXT [options]\n"
        "   or: onnx2cl-sd --models DIR --hf DIR --prompt TEXT [options]\n"
        "   or: onnx2cl-sd serve -m CHECKPOINT [--listen 127.0.0.1:7860]   (A1111/Forge API; serve --help)\n"
        "checkpoint (one command: architecture found, models compiled into the cache on first use):\n"
        "  -m, --model CKPT        .safetensors file (single-file SD 1.x, 2.x, SDXL, SD 3 / 3.5, Flux) or diffusers\n"
        "                          folder; the family and architecture are read from its keys\n"
        "  --arch-dir DIR          installed architectures (DIR/<arch>/arch.json; default: share/onnx2cl/arch)\n"
        "  --lora F[:S]            LoRA file (kohya, LoCon, diffusers/PEFT .safetensors; SD 3 / Flux: the\n"
        "                          transformer's, kohya or diffusers/PEFT) and scale (default 1), merged into the\n"
        "                          weights (repeatable)\n"
        "  --lora-dir DIR          where <lora:NAME:W> / <lora:NAME:TE:UNET> prompt tags find\n"
        "                          NAME.safetensors (subfolders too; default $ONNX2CL_LORA_DIR)\n"
        "  --variant V             diffusers file variant to read (fp16)\n"
        "  --weights-dtype f16|f32 storage of the converted weights (default f16: half the memory)\n"
        "  --offload               each model on the device only while its stage runs (text encoders, VAE\n"
        "                          encoder, UNet/transformer, VAE decoder, one after another): the device needs\n"
        "                          the largest stage instead of the sum (--info says both), every image loads the\n"
        "                          models again (programs from the cache, weights uploaded: seconds per image)\n"
        "  --vae F  --clip-l F  --clip-g F  --t5xxl F   (-m) .safetensors files added to the checkpoint or\n"
        "                          replacing its own (sd.cpp's flags): what transformer-only SD 3.5 / Flux files\n"
        "                          (flux1-dev.safetensors + ae.safetensors, clip_l, t5xxl) leave out, or another VAE\n"
        "  --info                  (-m) print what the run will need per model (weights, activations, device\n"
        "                          memory, launches at the run's size and --weights-dtype) and exit: nothing\n"
        "                          compiled, converted or generated\n"
        "  --t5-tokenizer PATH     (-m, SD 3 / Flux) T5's spiece.model (or its folder) when the checkpoint is a\n"
        "                          single file: the full-size architectures ship none\n"
        "  cache: $ONNX2CL_CACHE_DIR, else $XDG_CACHE_HOME/onnx2cl, else ~/.cache/onnx2cl\n"
        "models (shared objects from onnx2cl's C output or descriptor files from onnx2cl -o F.o2d,\n"
        "each with NAME.weights beside it):\n"
        "  --models DIR            DIR/text_encoder.so, DIR/unet.so, DIR/vae_decoder.so (each: .o2d\n"
        "                          when there is no .so). SD 3 (StableDiffusion3Pipeline, txt2img): DIR/\n"
        "                          text_encoder, text_encoder_2, text_encoder_3 (T5, optional), transformer,\n"
        "                          vae_decoder; --hf DIR with tokenizer/, tokenizer_2/, tokenizer_3/spiece.model,\n"
        "                          scheduler/ (flow matching) and vae/ (scaling and shift factors); defaults\n"
        "                          28 steps, --cfg 7; --no-t5 leaves T5 out (zeros: diffusers' text_encoder_3=None,\n"
        "                          the memory of T5-XXL saved). Flux (FluxPipeline; tokenizer_2/spiece.model, no\n"
        "                          text_encoder_3): text_encoder (CLIP-L), text_encoder_2 (T5), transformer,\n"
        "                          vae_decoder; --cfg is true_cfg_scale (default 1: off; > 1 with -n), --guidance G\n"
        "                          the distilled guidance of dev (default 3.5; schnell has none); 28 steps\n"
        "  --text-encoder F.so|F.o2d  --unet F.so|F.o2d  --vae-decoder F.so|F.o2d   (override one)\n"
        "checkpoint files:\n"
        "  --hf DIR                Hugging Face SD folder: DIR/tokenizer/, DIR/scheduler/scheduler_config.json,\n"
        "                          DIR/vae/config.json (scaling_factor; optional)\n"
        "  --tokenizer DIR         vocab.json + merges.txt (override)\n"
        "  --scheduler-config F    scheduler_config.json (override)\n"
        "  --scaling-factor X      VAE latent scaling factor (default: vae/config.json, else 0.18215)\n"
        "generation:\n"
        "  -p, --prompt TEXT       prompt (UTF-8; more than 75 tokens are truncated, with a note, unless\n"
        "                          --emphasis is given)\n"
        "  -n, --negative-prompt TEXT\n"
        "  --emphasis MODE         A1111's prompt syntax (its \"Emphasis\" option): Original ((word:1.2), [word],\n"
        "                          BREAK, 75-token chunks concatenated: long prompts), \"No norm\" (the same\n"
        "                          without the mean restore), Ignore (brackets removed, no weights), None\n"
        "                          (text as is, 75-token chunks); default diffusers: text as is, truncated\n"
        "                          at 77 tokens, as StableDiffusionPipeline\n"
        "  --clip-skip N           A1111's Clip skip (default 1: the last layer): the text encoder's hidden\n"
        "                          state N layers from the end, then final_layer_norm (= diffusers'\n"
        "                          clip_skip N-1); SD 1.x with -m only\n"
        "  --steps N               inference steps (default 20)\n"
        "  --cfg X                 guidance scale (default 7.5; <= 1 turns guidance off: one UNet run per step)\n"
        "  --guidance-rescale R    diffusers' guidance_rescale in [0, 1] (default 0: off), for v-prediction\n"
        "                          models trained with zero terminal SNR (rescale_noise_cfg)\n"
        "  --seed N                torch.Generator().manual_seed(N) noise (default 0); -1: a random seed\n"
        "                          (written to stderr and the metadata)\n"
        "  --batch-size N          N images per UNet run (UNet compiled for 2N with guidance, else N;\n"
        "                          default 1); image i gets seed + i (A1111's rule)\n"
        "  --batch-count K         K batches one after another (A1111's n_iter; default 1): images\n"
        "                          seed, seed+1, ..., seed+K*N-1\n"
        "img2img / inpainting (StableDiffusionImg2ImgPipeline / StableDiffusionInpaintPipeline):\n"
        "  --init-image F.png      PNG, resized to --width/--height as PIL's LANCZOS (A1111's Just resize; with -m\n"
        "                          and no --width/--height its size is the output size), read as PIL's convert(\"RGB\"): gray\n"
        "                          replicated, alpha dropped, palette expanded, 16-bit by the high byte\n"
        "                          (16-bit gray refused)\n"
        "  --strength S            denoising strength in (0, 1] (default 0.75); int(steps*S) steps run\n"
        "  --mask F.png            inpainting mask, any PNG mode --init-image takes (to gray as PIL's convert(\"L\")),\n"
        "                          resized to the image's size: white (>= 128) is repainted, black kept\n"
        "  --mask-blur R           blur the mask first as diffusers' mask_processor.blur(mask, R) (PIL's\n"
        "                          GaussianBlur, bit for bit; default 0: none; A1111's \"Mask blur\")\n"
        "  --only-masked           inpaint the masked area only (A1111's Inpaint area \"Only masked\", diffusers'\n"
        "                          padding_mask_crop): the box around the mask, grown by --only-masked-padding and\n"
        "                          to the --width:--height ratio, is cut from the image (kept at its size), generated\n"
        "                          at --width x --height (-m default: the image's size rounded down to a multiple\n"
        "                          of 8) and pasted back with the (blurred) mask: the output has the image's size\n"
        "  --only-masked-padding P pixels around the mask (default 32, A1111's \"Masked area padding\")\n"
        "  --mask-overlay          paste the init image back over the result with the (blurred) mask as alpha, as\n"
        "                          A1111 does: the pixels outside the mask stay the init image's (diffusers'\n"
        "                          pipeline and the default: the generated ones; --only-masked always does it)\n"
        "  --vae-encoder F.so|F.o2d  VAE encoder for --models (default DIR/vae_encoder.so or .o2d)\n"
        "  --vae-tile N            (-m) run the VAE decoder and encoder in N x N-pixel tiles (N a multiple of the\n"
        "                          VAE's factor, 8 for SD) overlapping by N/4, blended as diffusers' tiled_decode:\n"
        "                          device memory of one tile, not of the image; the image differs a little from\n"
        "                          the untiled one (per-tile GroupNorm, docs/vae_tiling.md). Default 0: untiled\n"
        "  --scheduler NAME        %s,\n"
        "                          or A1111's sampler name (\"Euler a\", \"DPM++ 2M\", \"DPM++ 2M Karras\", ...)\n"
        "                          (default: the config's _class_name when one of these ports it, else euler)\n"
        "  --schedule-type T       A1111's Schedule type: Automatic, Karras, Exponential, Beta, SGM Uniform, ...\n"
        "  --karras | --no-karras  Karras sigmas (the classes that take them; default: scheduler_config.json)\n"
        "  --eta X                 DDIM's eta (TCD's gamma) as the pipeline's eta argument (default 0; other\n"
        "                          samplers take none: refused)\n"
        "  --timestep-spacing S    linspace, leading, trailing (default: scheduler_config.json)\n"
        "  --prediction-type P     epsilon or v_prediction: what the UNet predicts (SD 2.x 512-base: epsilon,\n"
        "                          768: v_prediction; default: scheduler_config.json, with -m the folder's\n"
        "                          scheduler/, else arch.json's prediction_type)\n"
        "  --width W --height H    must match the compiled models (default: what they were compiled for;\n"
        "                          with -m: arch.json's default_size, e.g. 768x768 for SD 2.x)\n"
        "  --latents F.npy         initial noise [N,4,h,w] float32 instead of --seed's (tests; img2img: the\n"
        "                          noise add_noise adds; every batch of --batch-count takes the same)\n"
        "output:\n"
        "  -o, --output F.png      image (default out.png); more images: F.png, F-1.png, F-2.png, ...\n"
        "                          (image k of the run: batch k / N, position k %% N)\n"
        "  --save-image F.npy      also every float image of the run [K*N,3,H,W] in [0,1] before 8-bit rounding\n"
        "  --device SPEC           OpenCL device (index or name part; default $ONNX2CL_DEVICE, a GPU, else first)\n"
        "  --text-device SPEC      run the text encoders on this OpenCL device instead (sd.cpp's --clip-on-cpu: e.g.\n"
        "                          the CPU device when the GPU is short of memory; their own context and kernels)\n"
        "  --quiet                 no per-step progress lines\n"
        "TAESD (madebyollin's tiny autoencoder; -m only; docs/taesd.md):\n"
        "  --taesd PATH            TAESD's decoder: a diffusers AutoencoderTiny folder (madebyollin/taesd,\n"
        "                          taesdxl) or taesd_decoder.safetensors / taesdxl_decoder.safetensors\n"
        "  --preview F.png         write TAESD's image of the current latents to F.png (atomically) every\n"
        "                          --preview-every K steps (default 1; A1111's live preview \"TAESD\")\n"
        "  --fast-decode           decode the final image with TAESD instead of the VAE (sd.cpp's --taesd)\n"
        "SD-Turbo: --steps 1 --cfg 0 (its config: EulerDiscreteScheduler, trailing spacing)\n",
        sdp_sched_names());
}

/* Ctrl-C: the first asks the generation to stop before its next model run (the images already
 * written stay; sdp_params.cancel), a second one ends the process at once. */
static volatile int interrupted;
static void on_sigint(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL);
}

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static double parse_num(const char *flag, const char *v, double lo, double hi)
{
    char *e;
    errno = 0;
    double d = strtod(v, &e);
    if (e == v || *e || errno || !(d >= lo && d <= hi)) die(2, "%s %s: expected a number in [%g, %g]", flag, v, lo, hi);
    return d;
}

static int file_exists(const char *p) { return o2r_path_exists(p); }

static double now_s(void) { return o2r_now_ms() * 1e-3; }

/* 1 if output paths a and b would name one file: the same string, the same existing file (hard or
 * symbolic links), or the same base name in the same folder (./x.png and x.png). */
static int same_output(const char *a, const char *b)
{
    if (strcmp(a, b) == 0 || o2r_path_same_file(a, b)) return 1;
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    if (strcmp(sa ? sa + 1 : a, sb ? sb + 1 : b)) return 0;
    char da[PATH_MAX], db[PATH_MAX];
    snprintf(da, sizeof da, "%.*s", sa ? (int)(sa - a) + (sa == a) : 1, sa ? a : ".");
    snprintf(db, sizeof db, "%.*s", sb ? (int)(sb - b) + (sb == b) : 1, sb ? b : ".");
    return o2r_path_same_file(da, db);
}

/* Refuses, before any work, an output that is a file this run reads (o2r_path_same_file: through
 * hard and symbolic links) or that another output names: exit 2 naming the flag, the path and the
 * input. in[i] / what[i]: the n files read and what each one is (NULL entries skipped). */
static void check_outputs_vs_inputs(const char *const *oflag, const char *const *opath, int no,
                                    const char *const *in, const char *const *what, int n)
{
    for (int o = 0; o < no; o++) {
        if (!opath[o]) continue;
        for (int q = 0; q < o; q++)
            if (opath[q] && same_output(opath[o], opath[q]))
                die(2, "%s %s and %s %s would both be written to %s", oflag[q], opath[q], oflag[o], opath[o],
                    opath[o]);
        for (int i = 0; i < n; i++)
            if (in[i] && o2r_path_same_file(opath[o], in[i]))
                die(2, "%s %s: is %s %s, which this run reads", oflag[o], opath[o], what[i], in[i]);
    }
}

/* Whether output path out lies inside folder dir (after resolving links; the output's folder
 * must exist, as check_output has made sure). */
static int output_inside(const char *out, const char *dir)
{
    char od[PATH_MAX], ro[PATH_MAX], rd[PATH_MAX];
    const char *slash = strrchr(out, '/');
    snprintf(od, sizeof od, "%.*s", slash ? (int)(slash - out) + (slash == out) : 1, slash ? out : ".");
    if (!o2r_realpath(od, ro, sizeof ro) || !o2r_realpath(dir, rd, sizeof rd)) return 0;
    size_t n = strlen(rd);
    return !strncmp(ro, rd, n) && (ro[n] == 0 || ro[n] == '/' || (n == 1 && rd[0] == '/'));
}

/* -m: refuses, before any work, an output that is the checkpoint, lies inside a checkpoint folder
 * or the cache, or is one of the LoRA files (FILE of "FILE[:SCALE]"): exit 2 naming both. */
static void check_outputs_vs_engine(const char *const *oflag, const char *const *opath, int no,
                                    const struct sde_options *eo)
{
    char cache[PATH_MAX];
    const int have_cache = eo->cache_dir ? (snprintf(cache, sizeof cache, "%s", eo->cache_dir), 1)
                                         : sde_cache_dir(cache, sizeof cache) == 0;
    for (int o = 0; o < no; o++) {
        if (!opath[o]) continue;
        if (o2r_path_same_file(opath[o], eo->ckpt))
            die(2, "%s %s: is the checkpoint %s, which this run reads", oflag[o], opath[o], eo->ckpt);
        if (output_inside(opath[o], eo->ckpt))
            die(2, "%s %s: lies inside the checkpoint folder %s; write it elsewhere", oflag[o], opath[o], eo->ckpt);
        if (have_cache && output_inside(opath[o], cache))
            die(2, "%s %s: lies in the cache folder %s (the engine's own files); write it elsewhere", oflag[o],
                opath[o], cache);
        for (int i = 0; i < eo->n_loras; i++) {
            char f[PATH_MAX];
            snprintf(f, sizeof f, "%s", eo->loras[i]);
            char *c = strrchr(f, ':');
            if (c && c != f && !strchr(c, '/')) *c = 0; /* FILE:SCALE -> FILE */
            if (o2r_path_same_file(opath[o], f) || o2r_path_same_file(opath[o], eo->loras[i]))
                die(2, "%s %s: is the LoRA %s, which this run reads", oflag[o], opath[o], f);
        }
    }
}

/* Refuses an output path that cannot be written, before any work. */
static void check_output(const char *flag, const char *path)
{
    char err[1024];
    if (o2r_path_check_output(path, err, sizeof err) != O2R_OK) die(2, "%s: %s", flag, err);
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    if (!o2r_path_is_dir(dir))
        die(2, "%s %s: folder '%s' does not exist", flag, path, dir);
    if (!o2r_path_writable_dir(dir)) die(2, "%s %s: folder '%s' is not writable", flag, path, dir);
}

/* -m CKPT: the Model name of the metadata (the file's or folder's base name without
 * .safetensors: no local path) and A1111's short hash of a single file (cached in the cache
 * folder; "" for a folder or an unreadable file). */
static void model_label(const struct sde_options *eo, char *name, size_t cap, char hash[16])
{
    const char *b = strrchr(eo->ckpt, '/');
    b = b ? b + 1 : eo->ckpt;
    size_t n = strlen(b);
    if (n > 12 && strcmp(b + n - 12, ".safetensors") == 0) n -= 12;
    snprintf(name, cap, "%.*s", (int)n, b);
    char cache[PATH_MAX];
    const char *cd = eo->cache_dir ? eo->cache_dir : sde_cache_dir(cache, sizeof cache) == 0 ? cache : NULL;
    hash[0] = 0;
    if (sdp_model_hash(eo->ckpt, cd, hash)) hash[0] = 0;
}

/* The one-shot CLI (everything but `serve`). */
/* --taesd: the per-step preview (--preview F.png every K steps: image 0 of the batch) and the fast
 * decode (--fast-decode: after the last step every image decoded by TAESD, then the generation is
 * stopped before the VAE), through sdp_params.progress. */
struct taesd_run {
    struct sdv_taesd t;
    const char *preview;
    int every, fast, decoded, failed;
    float *pv;    /* one preview image */
    float *image; /* --fast-decode: the generation's images */
    char err[2048];
};

static int taesd_progress(const struct sdp_progress *pr, void *user)
{
    struct taesd_run *r = user;
    if (r->preview && pr->step % r->every == 0 &&
        (sdv_taesd_decode(&r->t, pr->latents, 1, r->pv, r->err, sizeof r->err) ||
         sdp_png_write(r->preview, r->pv, r->t.img_h, r->t.img_w, NULL, NULL, 0, r->err, sizeof r->err)))
        return r->failed = 1;
    if (r->fast && pr->step == pr->total) {
        if (sdv_taesd_decode(&r->t, pr->latents, pr->batch, r->image, r->err, sizeof r->err)) return r->failed = 1;
        r->decoded = 1;
        return 1; /* the images are made: stop before the VAE */
    }
    return 0;
}

/* Inpainting's paste-back: --only-masked (the generated area into the image: diffusers' apply_overlay) and
 * --mask-overlay (the init image over the result: A1111's), with the (blurred) mask as alpha; init NULL: none. */
struct overlay {
    const unsigned char *init, *mask; /* the image [h, w, 3] and mask [h, w] at the image's size */
    int w, h, box[4];                 /* their size; the generated area's box in them */
};

/* Writes the image [3, h, w] in [0, 1] as PNG path (with the overlay when ov->init), the text chunks
 * keys/vals (2); dies when out of memory, returns sdp_png_write's status with err. */
static int write_png(const char *path, const float *chw, int w, int h, const struct overlay *ov, const char **keys,
                     const char **vals, char *err, size_t errcap)
{
    if (!ov->init) return sdp_png_write(path, chw, h, w, keys, vals, 2, err, errcap);
    const size_t pl = (size_t)h * w;
    unsigned char *rgb = malloc(pl * 3), *full = NULL;
    if (!rgb) die(1, "out of memory");
    for (size_t q = 0; q < pl; q++)
        for (int c = 0; c < 3; c++) { /* as png_write.c rounds */
            float v = nearbyintf(chw[c * pl + q] * 255.0f);
            rgb[q * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    if (sds_image_overlay(ov->init, ov->mask, ov->w, ov->h, rgb, w, h, ov->box, &full)) die(1, "out of memory");
    int rc = sdp_png_write_rgb(path, full, ov->h, ov->w, keys, vals, 2, err, errcap);
    free(rgb);
    free(full);
    return rc;
}

/* --text-device SPEC: a context of its own for the text encoders (dies naming the flag when SPEC finds no
 * device); NULL: the main context ctx. */
static struct o2r_ctx *text_context(const char *spec, struct o2r_ctx *ctx)
{
    struct o2r_ctx *t;
    if (!spec) return ctx;
    if (o2r_ctx_create(spec, &t) != O2R_OK) {
        char e[2048];
        snprintf(e, sizeof e, "%s", o2r_ctx_last_error(NULL));
        const char *avail = strstr(e, "; available devices:"); /* the runtime's message names --device */
        if (avail) die(1, "--text-device %s: no OpenCL device matches it%s", spec, avail);
        die(1, "--text-device %s: %s", spec, e);
    }
    fprintf(stderr, "%s: text encoders on %s\n", prog, o2r_ctx_device_name(t));
    return t;
}

/* The timings' last line: the device memory of the models loaded at once (weights + arena). */
static void print_mem_peak(const struct sdp_mem_track *t, int offload)
{
    fprintf(stderr, "  device memory peak   %.1f MiB of models loaded at once (%s)\n", (double)t->peak / 1048576.0,
            offload ? "--offload: one stage's models at a time; the stage times above include loading them"
                    : "every model loaded; --offload: one stage's");
}

#ifdef ONNX2CL_HAVE_SD3
struct sd3_run {
    const char *models, *hf, *prompt, *negative, *save_image, *device, *sched_cfg;
    char **outs;                       /* the n_images output paths (OUT, OUT-1, ...) */
    int n_images;                      /* --batch-count (A1111's n_iter): image k with seed + k */
    int steps, width, height, quiet;
    double cfg;
    uint64_t seed;
    /* -m: the engine's files (sde_result); NULL: from --models / --hf */
    const char *prog[6], *wts[6];      /* text_encoder, text_encoder_2, text_encoder_3, transformer, vae_decoder,
                                          vae_encoder (img2img) */
    const float *init;                 /* img2img: the init image [3, H, W] in [0, 1], or NULL */
    const float *mask;                 /* inpainting: the mask [H, W] in [0, 1] (1: repaint), or NULL */
    struct overlay ov;                 /* --only-masked / --mask-overlay's paste-back (ov.init NULL: none) */
    double mask_blur;                  /* the infotext's Mask blur (--mask-blur, applied to the mask already) */
    double strength;                   /* img2img's denoising strength */
    const char *tok[3];                /* tokenizer, tokenizer_2, tokenizer_3 folders */
    const char *vae_cfg;               /* vae/config.json, or NULL: scaling/shift below */
    double scaling, shift;             /* the architecture's VAE factors */
    const char *model_name;            /* the infotext's Model (NULL: --hf's folder name) */
    int flux;                          /* 1: Flux (FluxPipeline): text_encoder_2 is T5, no text_encoder_3;
                                          cfg is true_cfg_scale, guidance the distilled guidance */
    double guidance;                   /* Flux dev's guidance_scale */
    int no_t5;                         /* SD 3: --no-t5 */
    int offload;                       /* --offload: one stage's models on the device at a time */
    const char *text_device;           /* --text-device: the text encoders' OpenCL device, or NULL */
    const char *model_hash;            /* the infotext's Model hash (NULL: none) */
    const char *info_prompt;           /* the infotext's prompt (LoRA tags of the flags added), NULL: prompt */
    const char *lora_hashes;           /* the infotext's Lora hashes, or NULL */
};
static int model_file(const char *dir, const char *name, char *buf, size_t cap);
static void run_sd3(const struct sd3_run *r);

/* A Flux folder (for --hf): model_index.json's _class_name Flux*, else T5's spiece.model in tokenizer_2/ and no
 * tokenizer_3/ (SD 3 has T5 third). */
static int flux_folder(const char *hf)
{
    char p[PATH_MAX + 32], err[512];
    snprintf(p, sizeof p, "%s/model_index.json", hf);
    if (file_exists(p)) {
        cJSON *j = sdp_json_file(p, err, sizeof err);
        const cJSON *cn = j ? cJSON_GetObjectItemCaseSensitive(j, "_class_name") : NULL;
        int flux = cJSON_IsString(cn) && !strncmp(cn->valuestring, "Flux", 4);
        cJSON_Delete(j);
        if (flux) return 1;
    }
    snprintf(p, sizeof p, "%s/tokenizer_3", hf);
    if (file_exists(p)) return 0;
    snprintf(p, sizeof p, "%s/tokenizer_2/spiece.model", hf);
    return file_exists(p);
}
#endif

/* Frees what sde_lora_tags added to eo (the LoRAs after the n_flag --lora flags) and its tag-free
 * prompt (when it is not the prompt as given). */
static void free_tag_loras(struct sde_options *eo, int n_flag, const char *prompt, const char *given)
{
    for (int i = n_flag; i < eo->n_loras; i++) {
        free((char *)eo->loras[i]);
        free((char *)eo->lora_unet[i]);
        eo->loras[i] = eo->lora_unet[i] = NULL;
    }
    eo->n_loras = n_flag;
    if (prompt != given) free((char *)prompt);
}

/* The infotext's LoRA parts, as A1111 writes them: *info_prompt (NULL without --lora flags) the
 * prompt (its tags kept) + " <lora:STEM:SCALE>" per --lora flag (so A1111, or -m with --lora-dir,
 * redoes it); *lora_hashes (NULL without LoRAs) "Lora hashes" over every LoRA, flags and tags, the
 * hashes cached beside the model hashes. Both malloc'ed (free them); exits on out of memory. */
static void lora_metadata(const struct sde_options *eo, int n_flag_loras, const char *prompt_tagged,
                          char **info_prompt, char **lora_hashes)
{
    *info_prompt = *lora_hashes = NULL;
    if (n_flag_loras) {
        size_t cap = strlen(prompt_tagged) + (size_t)n_flag_loras * (PATH_MAX + 64) + 1, len;
        if (!(*info_prompt = malloc(cap))) die(1, "out of memory");
        len = (size_t)snprintf(*info_prompt, cap, "%s", prompt_tagged);
        for (int i = 0; i < n_flag_loras; i++) {
            char f[PATH_MAX];
            snprintf(f, sizeof f, "%s", eo->loras[i]);
            const char *scale = "1";
            char *c = strrchr(f, ':');
            if (c && c != f && !strchr(c, '/') && !file_exists(f)) *c = 0, scale = c + 1; /* FILE:SCALE */
            const char *b = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
            size_t bl = strlen(b);
            if (bl > 12 && !strcmp(b + bl - 12, ".safetensors")) bl -= 12;
            len += (size_t)snprintf(*info_prompt + len, cap - len, " <lora:%.*s:%s>", (int)bl, b, scale);
        }
    }
    if (eo->n_loras) {
        char cache[PATH_MAX];
        const char *cd = eo->cache_dir ? eo->cache_dir : sde_cache_dir(cache, sizeof cache) == 0 ? cache : NULL;
        *lora_hashes = sdp_infotext_lora_hashes(eo->loras, eo->n_loras, cd);
    }
}

/* --info (-m): what the run of eo will need (sde_options.info: a table on stdout), then exit 0;
 * nothing compiled, converted or generated. Exits 2 / 1 with the engine's message on bad input. */
static void print_info_exit(struct sde_options *eo, struct sde_result *er)
{
    char err[4096];
    eo->info = stdout;
    int rc = sde_prepare(eo, er, err, sizeof err);
    if (rc) die(rc == -2 ? 2 : 1, "%s", err);
    if (fflush(stdout) != 0 || ferror(stdout)) die(1, "--info: writing to stdout failed");
    exit(0);
}

static int cli_main(int argc, char **argv)
{
    const char *models = NULL, *te_so = NULL, *unet_so = NULL, *vae_so = NULL, *hf = NULL;
    const char *tok_dir = NULL, *sched_cfg = NULL, *prompt = NULL, *negative = "", *out = "out.png";
    int info = 0; /* --info: what the run will need (-m) */
    const char *save_image = NULL, *device = NULL, *text_device = NULL, *latents_path = NULL, *sched_name = NULL, *schedule_type = NULL;
    const char *init_path = NULL, *mask_path = NULL, *venc_so = NULL;
    double strength = -1, mask_blur = 0, guidance_rescale = 0;
    int only_masked = 0, only_masked_pad = -1, steps_given = 0, cfg_given = 0, mask_overlay = 0, size_from_image = 0;
    double guidance = 3.5; /* Flux dev's distilled guidance (--guidance) */
    int guidance_given = 0;
    int batch = 1, batch_count = 1, random_seed = 0, eta_given = 0;
    struct sde_options eo = {0};
    const char *taesd = NULL, *preview = NULL; /* --taesd, --preview (sd_preview.c) */
    int preview_every = 0, fast_decode = 0;
    const char *lora_dir = NULL, *prompt_tagged; /* prompt_tagged: as given, <lora:> tags and all */
    double cfg = 7.5, scaling = 0;
    int steps = 20, width = 0, height = 0, quiet = 0, emphasis = SDP_EMPHASIS_DIFFUSERS, clip_skip = 1;
    uint64_t seed = 0;
    struct sdp_sched_overrides ov = {.karras = -1, .spacing = NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die(2, "%s needs a value", a), ""))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("onnx2cl-sd %s\n", ONNX2CL_VERSION);
            return 0;
        } else if (!strcmp(a, "--models")) models = NEXT();
        else if (!strcmp(a, "-m") || !strcmp(a, "--model")) eo.ckpt = NEXT();
        else if (!strcmp(a, "--arch-dir")) eo.arch_dir = NEXT();
        else if (!strcmp(a, "--variant")) eo.variant = NEXT();
        else if (!strcmp(a, "--weights-dtype")) {
            eo.weights_dtype = NEXT();
            if (strcmp(eo.weights_dtype, "f16") && strcmp(eo.weights_dtype, "f32"))
                die(2, "--weights-dtype %s: not f16 or f32", eo.weights_dtype);
        } else if (!strcmp(a, "--lora")) {
            if (eo.n_loras == SDE_MAX_LORAS) die(2, "--lora: at most %d", SDE_MAX_LORAS);
            eo.loras[eo.n_loras++] = NEXT();
        } else if (!strcmp(a, "--lora-dir")) lora_dir = NEXT();
        else if (!strcmp(a, "--text-encoder")) te_so = NEXT();
        else if (!strcmp(a, "--unet")) unet_so = NEXT();
        else if (!strcmp(a, "--vae-decoder")) vae_so = NEXT();
        else if (!strcmp(a, "--hf")) hf = NEXT();
        else if (!strcmp(a, "--tokenizer")) tok_dir = NEXT();
        else if (!strcmp(a, "--scheduler-config")) sched_cfg = NEXT();
        else if (!strcmp(a, "--scaling-factor")) scaling = parse_num(a, NEXT(), 1e-6, 1e6);
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) prompt = NEXT();
        else if (!strcmp(a, "-n") || !strcmp(a, "--negative-prompt")) negative = NEXT();
        else if (!strcmp(a, "--steps")) steps = (int)parse_num(a, NEXT(), 1, 1000), steps_given = 1;
        else if (!strcmp(a, "--emphasis")) {
            const char *v = NEXT();
            char e[512];
            if (sdp_emphasis_parse(v, &emphasis, e, sizeof e)) die(2, "--emphasis: %s", e);
        } else if (!strcmp(a, "--clip-skip")) {
            const char *v = NEXT();
            clip_skip = (int)parse_num(a, v, 1, 12);
            if (clip_skip != atof(v)) die(2, "--clip-skip %s: expected an integer in [1, 12]", v);
        }
        else if (!strcmp(a, "--cfg")) cfg = parse_num(a, NEXT(), 0, 100), cfg_given = 1;
        else if (!strcmp(a, "--guidance")) guidance = parse_num(a, NEXT(), 0, 100), guidance_given = 1;
        else if (!strcmp(a, "--no-t5")) eo.no_t5 = 1;
        else if (!strcmp(a, "--offload")) eo.offload = 1;
        else if (!strcmp(a, "--vae")) eo.vae_file = NEXT();
        else if (!strcmp(a, "--clip-l")) eo.clip_l_file = NEXT();
        else if (!strcmp(a, "--clip-g")) eo.clip_g_file = NEXT();
        else if (!strcmp(a, "--t5xxl")) eo.t5xxl_file = NEXT();
        else if (!strcmp(a, "--t5-tokenizer")) eo.t5_tokenizer = NEXT();
        else if (!strcmp(a, "--info")) info = 1;
        else if (!strcmp(a, "--seed")) {
            const char *v = NEXT();
            char *e;
            errno = 0;
            random_seed = strcmp(v, "-1") == 0;
            seed = random_seed ? 0 : strtoull(v, &e, 10);
            if (!random_seed && (e == v || *e || errno || v[0] == '-'))
                die(2, "--seed %s: expected an integer in [0, 2^64), or -1 for a random seed", v);
        }
        else if (!strcmp(a, "--batch-size")) {
            const char *v = NEXT();
            batch = (int)parse_num(a, v, 1, 32);
            if (batch != atof(v)) die(2, "--batch-size %s: expected an integer in [1, 32]", v);
        } else if (!strcmp(a, "--batch-count")) {
            const char *v = NEXT();
            batch_count = (int)parse_num(a, v, 1, 10000);
            if (batch_count != atof(v)) die(2, "--batch-count %s: expected an integer in [1, 10000]", v);
        }
        else if (!strcmp(a, "--init-image")) init_path = NEXT();
        else if (!strcmp(a, "--mask")) mask_path = NEXT();
        else if (!strcmp(a, "--mask-blur")) mask_blur = parse_num(a, NEXT(), 0, 1000);
        else if (!strcmp(a, "--only-masked")) only_masked = 1;
        else if (!strcmp(a, "--mask-overlay")) mask_overlay = 1;
        else if (!strcmp(a, "--only-masked-padding")) {
            const char *v = NEXT();
            only_masked_pad = (int)parse_num(a, v, 0, 16384);
            if (only_masked_pad != atof(v)) die(2, "--only-masked-padding %s: expected an integer (pixels)", v);
        }
        else if (!strcmp(a, "--vae-encoder")) venc_so = NEXT();
        else if (!strcmp(a, "--guidance-rescale")) guidance_rescale = parse_num(a, NEXT(), 0, 1);
        else if (!strcmp(a, "--vae-tile")) {
            const char *v = NEXT();
            eo.vae_tile = (int)parse_num(a, v, 0, 16384);
            if (eo.vae_tile != atof(v)) die(2, "--vae-tile %s: expected an integer number of pixels in [0, 16384]", v);
        }
        else if (!strcmp(a, "--strength")) {
            const char *v = NEXT();
            char *e;
            errno = 0;
            strength = strtod(v, &e);
            if (e == v || *e || errno || !(strength > 0 && strength <= 1))
                die(2, "--strength %s: expected a number in (0, 1]", v);
        }
        else if (!strcmp(a, "--scheduler")) sched_name = NEXT();
        else if (!strcmp(a, "--schedule-type")) schedule_type = NEXT();
        else if (!strcmp(a, "--eta")) ov.eta = (float)parse_num(a, NEXT(), 0, 1), eta_given = 1;
        else if (!strcmp(a, "--karras")) ov.karras = 1;
        else if (!strcmp(a, "--no-karras")) ov.karras = 0;
        else if (!strcmp(a, "--timestep-spacing")) ov.spacing = NEXT();
        else if (!strcmp(a, "--prediction-type")) ov.prediction_type = NEXT();
        else if (!strcmp(a, "--width")) width = (int)parse_num(a, NEXT(), 8, 65536);
        else if (!strcmp(a, "--height")) height = (int)parse_num(a, NEXT(), 8, 65536);
        else if (!strcmp(a, "--latents")) latents_path = NEXT();
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) out = NEXT();
        else if (!strcmp(a, "--save-image")) save_image = NEXT();
        else if (!strcmp(a, "--device")) device = NEXT();
        else if (!strcmp(a, "--text-device")) text_device = NEXT();
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--taesd")) taesd = NEXT();
        else if (!strcmp(a, "--preview")) preview = NEXT();
        else if (!strcmp(a, "--fast-decode")) fast_decode = 1;
        else if (!strcmp(a, "--preview-every")) {
            const char *v = NEXT();
            preview_every = (int)parse_num(a, v, 1, 1000);
            if (preview_every != atof(v)) die(2, "--preview-every %s: expected an integer in [1, 1000]", v);
        }
        else die(2, "unknown option '%s' (--help lists them)", a);
#undef NEXT
    }
    if (!prompt && info) prompt = ""; /* --info generates nothing */
    if (!prompt) die(2, "--prompt is required (--help shows the usage)");
    if (emphasis != SDP_EMPHASIS_DIFFUSERS) { /* A1111 syntax onnx2cl-sd does not run: say so */
        const char *txt[2] = {prompt, negative};
        for (int t = 0; t < 2; t++) {
            const char *b = strchr(txt[t], '['), *e = b ? strchr(b, ']') : NULL;
            int colons = 0, bar = 0;
            for (const char *c = b; c && c < e; c++) colons += *c == ':', bar |= *c == '|';
            if (colons >= 1 || bar || strstr(txt[t], " AND "))
                fprintf(stderr, "%s: note: the %s looks like A1111's prompt editing [from:to:when], alternation "
                        "[a|b] or AND: onnx2cl-sd reads it as emphasis brackets and text only\n", prog,
                        t ? "negative prompt" : "prompt");
        }
    }
    if (clip_skip > 1 && !eo.ckpt)
        die(2, "--clip-skip %d: needs -m CHECKPOINT (the engine converts the text encoder's weights for it; "
            "compiled --models take the last layer only)", clip_skip);
    eo.clip_skip = clip_skip;
    if ((preview || fast_decode || preview_every) && !taesd)
        die(2, "%s: needs --taesd PATH (TAESD's decoder: taesd_decoder.safetensors or a diffusers AutoencoderTiny "
            "folder such as madebyollin/taesd)", preview ? "--preview" : fast_decode ? "--fast-decode" : "--preview-every");
    if (taesd && !eo.ckpt) die(2, "--taesd %s: needs -m CHECKPOINT (the engine compiles TAESD for its latents)", taesd);
    if (preview_every && !preview) die(2, "--preview-every %d: needs --preview F.png", preview_every);
    if (!preview_every) preview_every = 1;
    if (preview) {
        const char *dot = strrchr(preview, '.');
        if (!dot || strcasecmp(dot, ".png")) die(2, "--preview %s: onnx2cl-sd writes PNG only (name it .png)", preview);
        check_output("--preview", preview);
        if (same_output(preview, out)) die(2, "--preview %s: is the --output image too; write it elsewhere", preview);
    }
    static struct sdv_taesd_files taesd_f;
    if (taesd) { /* the file is TAESD's decoder: checked before anything is compiled */
        char e[2048];
        int rc = sdv_taesd_prepare(&eo, taesd, 0, 0, 0, &taesd_f, e, sizeof e);
        if (rc) die(rc == -2 ? 2 : 1, "%s", e);
    }
    { /* only PNG is written: another image format's name is refused, not silently given a PNG */
        static const char *const other[] = {".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".avif", ".jxl"};
        const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
        for (size_t i = 0; dot && (!slash || dot > slash) && i < sizeof other / sizeof *other; i++)
            if (!strcasecmp(dot, other[i]))
                die(2, "--output %s: onnx2cl-sd writes PNG only (name it .png and convert, e.g. with ImageMagick)", out);
    }
    for (int i = 0; i < eo.n_loras; i++) { /* FILE:SCALE with a SCALE that is not a number: a flag error */
        const char *l = eo.loras[i], *c = strrchr(l, ':');
        if (!c || c == l || strchr(c, '/') || file_exists(l)) continue;
        char *e;
        double v = strtod(c + 1, &e);
        if (e == c + 1 || *e || !isfinite(v))
            die(2, "--lora %s: scale '%s' is not a number (--lora FILE[:SCALE], e.g. %.*s:0.8)", l, c + 1,
                (int)(c - l), l);
    }
    prompt_tagged = prompt;
    const int n_flag_loras = eo.n_loras; /* --lora FILE[:SCALE]: written into the metadata's prompt as
                                            <lora:STEM:SCALE> tags, so A1111 (or -m with --lora-dir) redoes it */
    { /* <lora:NAME:W> tags: removed from the prompt, merged as --lora after the flags (sd_lora_tags.c) */
        char e[2048];
        int rc = sde_lora_tags(&eo, lora_dir, &prompt, negative, e, sizeof e);
        if (rc) die(rc == -2 ? 2 : 1, "%s", e);
    }
    enum sdp_sched_kind kind = SDP_SCHED_EULER;
    const int user_karras = ov.karras; /* --karras 1, --no-karras 0, neither -1 (sdp_sched_parse overwrites it) */
    const int sched_given = sched_name != NULL;
    if (sched_name) { /* our names or A1111's ("DPM++ 2M Karras"), with --schedule-type */
        char e[2048];
        if (sdp_sched_parse(sched_name, schedule_type, &kind, &ov, e, sizeof e))
            die(2, "--scheduler %s%s%s: %s", sched_name, schedule_type ? " --schedule-type " : "",
                schedule_type ? schedule_type : "", e);
    }
    if (ov.spacing && strcmp(ov.spacing, "linspace") && strcmp(ov.spacing, "leading") && strcmp(ov.spacing, "trailing"))
        die(2, "--timestep-spacing %s: not one of linspace, leading, trailing", ov.spacing);
    if (ov.prediction_type && strcmp(ov.prediction_type, "epsilon") && strcmp(ov.prediction_type, "v_prediction"))
        die(2, "--prediction-type %s: not epsilon or v_prediction", ov.prediction_type);
    if (latents_path) { /* an image or a folder given as --latents: said before any work */
        struct stat st;
        unsigned char sig[8] = {0};
        FILE *f = stat(latents_path, &st) == 0 && !S_ISDIR(st.st_mode) ? fopen(latents_path, "rb") : NULL;
        if (f) {
            size_t got = fread(sig, 1, sizeof sig, f);
            fclose(f);
            if (got == 8 && !memcmp(sig, "\x89PNG\r\n\x1a\n", 8))
                die(1, "--latents %s: a PNG image, not a tensor file: give the initial noise as a .npy or .pb "
                    "float32 tensor [N,4,H/8,W/8] (e.g. numpy.save); an image to start from is --init-image",
                    latents_path);
        } else if (stat(latents_path, &st) == 0 && S_ISDIR(st.st_mode))
            die(1, "--latents %s: is a directory, not a .npy or .pb tensor file", latents_path);
    }
    /* img2img / inpainting inputs: read and checked before any work */
    if (mask_path && !init_path) die(2, "--mask %s: needs --init-image (the image to inpaint)", mask_path);
    if (strength >= 0 && !init_path) die(2, "--strength: needs --init-image (img2img or inpainting)");
    if (mask_blur > 0 && !mask_path) die(2, "--mask-blur: needs --mask");
    if (only_masked_pad >= 0 && !only_masked) die(2, "--only-masked-padding: needs --only-masked");
    if (only_masked && !mask_path) die(2, "--only-masked: needs --init-image and --mask (inpainting)");
    if (mask_overlay && !mask_path) die(2, "--mask-overlay: needs --init-image and --mask (inpainting)");
    if (only_masked_pad < 0) only_masked_pad = 32; /* A1111's UI default */
    if (only_masked && !eo.ckpt && (!width || !height))
        die(2, "--only-masked: give --width and --height (the size the --models make; the masked area is generated "
            "at that size)");
    if (strength < 0) strength = 0.75; /* A1111's default denoising strength */
    unsigned char *init_pix = NULL, *mask_pix = NULL;
    int init_w = 0, init_h = 0;
    /* --only-masked: the image and the (blurred) mask at the image's size, the box generated */
    static unsigned char *om_init, *om_mask; /* static: reachable at die() (LeakSanitizer) */
    int om_w = 0, om_h = 0, om_box[4] = {0, 0, 0, 0};
    float *init_img = NULL, *mask_img = NULL;
    char err[2048];
    if (init_path) {
        int ch;
        int rc = sdp_png_read(init_path, &init_pix, &init_w, &init_h, &ch, err, sizeof err);
        if (rc) die(rc == -2 ? 2 : 1, "--init-image %s", err);
        if (sdp_pix_convert(&init_pix, init_w, init_h, &ch, 3)) die(1, "out of memory"); /* gray: convert("RGB") */
        if (!only_masked && ((width && width != init_w) || (height && height != init_h))) {
            /* A1111's "Just resize" (resize_mode 0) and diffusers' inpainting preprocess: PIL's
             * Image.resize((W, H), LANCZOS) to the output size (image_resize.c, byte for byte) */
            int tw = width ? width : init_w, th = height ? height : init_h;
            unsigned char *r;
            if (sds_image_resize(init_pix, init_w, init_h, 3, tw, th, &r)) die(1, "out of memory");
            fprintf(stderr, "%s: --init-image %s: %dx%d resized to %dx%d (PIL LANCZOS, A1111's Just resize)\n", prog,
                    init_path, init_w, init_h, tw, th);
            free(init_pix);
            init_pix = r;
            init_w = tw;
            init_h = th;
        }
        size_from_image = !width || !height; /* no --width/--height: the size comes from the image */
        (void)size_from_image;                /* read by SD3_REFUSE (builds with the SD 3 / Flux loop) */
        if (only_masked) { /* the image stays at its size; the area is generated at width x height */
            if (!width) width = init_w - init_w % 8; /* diffusers' get_default_height_width */
            if (!height) height = init_h - init_h % 8;
        }
        if (eo.ckpt && !width && !height) width = init_w, height = init_h; /* diffusers: the image's size */
        if (sdp_img2img_t_start(steps, strength) >= steps)
            die(2, "--strength %g --steps %d: int(%d * %g) = 0 denoising steps (diffusers refuses it too); raise "
                "--strength or --steps", strength, steps, steps, strength);
    }
    if (mask_path) {
        int mw, mh, ch;
        int rc = sdp_png_read(mask_path, &mask_pix, &mw, &mh, &ch, err, sizeof err);
        if (rc) die(rc == -2 ? 2 : 1, "--mask %s", err);
        /* diffusers' order: mask_processor.blur (PIL GaussianBlur in the mask's mode), then the
         * pipeline's preprocess: convert("L") (ITU-R 601-2 luma), resize to the image's size (PIL
         * LANCZOS, as A1111 resizes the mask too), binarize at 0.5 */
        if (sdp_gaussian_blur_u8(mask_pix, mw, mh, ch, (float)mask_blur)) die(1, "out of memory");
        if (sdp_pix_convert(&mask_pix, mw, mh, &ch, 1)) die(1, "out of memory");
        if (mw != init_w || mh != init_h) {
            unsigned char *r;
            if (sds_image_resize(mask_pix, mw, mh, 1, init_w, init_h, &r)) die(1, "out of memory");
            fprintf(stderr, "%s: --mask %s: %dx%d resized to %dx%d (PIL LANCZOS)\n", prog, mask_path, mw, mh, init_w,
                    init_h);
            free(mask_pix);
            mask_pix = r;
        }
        if (only_masked) { /* the box around the mask cut from both, filled to width x height */
            om_init = init_pix, om_mask = mask_pix, om_w = init_w, om_h = init_h;
            if (sds_mask_crop_region(om_mask, om_w, om_h, width, height, only_masked_pad, om_box))
                die(2, "--mask %s: all black%s: nothing to inpaint", mask_path, mask_blur > 0 ? " after --mask-blur" : "");
            if (sds_image_crop_fill(om_init, om_w, om_h, 3, om_box, width, height, &init_pix) ||
                sds_image_crop_fill(om_mask, om_w, om_h, 1, om_box, width, height, &mask_pix))
                die(1, "out of memory");
            fprintf(stderr, "%s: --only-masked: the area (%d,%d)-(%d,%d) of the %dx%d image (padding %d) generated at %dx%d\n",
                    prog, om_box[0], om_box[1], om_box[2], om_box[3], om_w, om_h, only_masked_pad, width, height);
            init_w = width, init_h = height;
        }
        if (mask_overlay && !only_masked) { /* A1111's paste-back over the whole picture: box = the image */
            om_w = init_w, om_h = init_h, om_box[2] = init_w, om_box[3] = init_h;
            if (!(om_init = malloc((size_t)init_w * init_h * 3)) || !(om_mask = malloc((size_t)init_w * init_h)))
                die(1, "out of memory");
            memcpy(om_init, init_pix, (size_t)init_w * init_h * 3);
            memcpy(om_mask, mask_pix, (size_t)init_w * init_h);
        }
        size_t np = (size_t)init_w * init_h, white = 0;
        if (!(mask_img = malloc(np * sizeof *mask_img))) die(1, "out of memory");
        for (size_t k = 0; k < np; k++) {
            mask_img[k] = (float)mask_pix[k] / 255.0f;
            white += mask_img[k] >= 0.5f;
        }
        if (white == 0 && !only_masked) /* only masked: the full mask had a pixel (the crop region), which may fade
                                            below 128 when the box is resized; the paste-back still uses it */
            die(2, "--mask %s: all black (no pixel >= 128%s): nothing would be repainted", mask_path,
                mask_blur > 0 ? " after --mask-blur" : "");
        if (white == np && !only_masked) /* only masked: the cut-out area is often all mask */
            die(2, "--mask %s: all white%s: every pixel would be repainted (use --init-image without --mask)",
                mask_path, mask_blur > 0 ? " after --mask-blur" : "");
    }
    if (init_path) {
        size_t np = (size_t)init_w * init_h;
        if (!(init_img = malloc(3 * np * sizeof *init_img))) die(1, "out of memory");
        for (size_t k = 0; k < np; k++) /* HWC bytes -> CHW float / 255 (pil_to_numpy) */
            for (int c = 0; c < 3; c++) init_img[c * np + k] = (float)init_pix[k * 3 + c] / 255.0f;
    }
    free(init_pix);
    free(mask_pix);
    if (random_seed) { /* A1111: random.randrange(4294967294) */
        uint64_t r = 0;
        if (o2r_random_bytes(&r, sizeof r) != 0) die(1, "--seed -1: getrandom: %s", strerror(errno));
        seed = r % 4294967294u;
        fprintf(stderr, "%s: seed %llu (random)\n", prog, (unsigned long long)seed);
    }
    /* outputs: OUT, OUT-1, OUT-2, ... (one per image of the run) */
    const int n_images = batch * batch_count;
    if (seed > UINT64_MAX - (uint64_t)(n_images - 1)) /* image k: seed + k; torch's manual_seed takes < 2^64 */
        die(2, "--seed %llu with %d images: the last image's seed, seed + %d, would pass 2^64 - 1 (the largest "
            "torch.Generator().manual_seed takes); give a seed <= %llu", (unsigned long long)seed, n_images,
            n_images - 1, (unsigned long long)(UINT64_MAX - (uint64_t)(n_images - 1)));
    static char **outs; /* static: as oflag below */
    outs = calloc((size_t)n_images, sizeof *outs);
    if (!outs) die(1, "out of memory");
    for (int k = 0; k < n_images; k++) {
        outs[k] = malloc(strlen(out) + 16);
        if (!outs[k]) die(1, "out of memory");
        const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
        if (k == 0 || !dot || (slash && dot < slash) || dot == (slash ? slash + 1 : out))
            sprintf(outs[k], k ? "%s-%d" : "%s", out, k);
        else
            sprintf(outs[k], "%.*s-%d%s", (int)(dot - out), out, k, dot);
    }
    static const char **oflag, **opath; /* static: still reachable when die() exits (LeakSanitizer) */
    oflag = calloc((size_t)n_images + 1, sizeof *oflag), opath = calloc((size_t)n_images + 1, sizeof *opath);
    if (!oflag || !opath) die(1, "out of memory");
    for (int k = 0; k < n_images; k++) oflag[k] = "--output", opath[k] = outs[k];
    oflag[n_images] = "--save-image", opath[n_images] = save_image;
    /* file locations */
    static char p_te[PATH_MAX], p_un[PATH_MAX], p_va[PATH_MAX], p_ve[PATH_MAX], p_tok[PATH_MAX], p_sc[PATH_MAX],
        p_vc[PATH_MAX];
    static char wpath[5][PATH_MAX];
    const char *te2_so = NULL, *tok2_dir = NULL; /* SDXL's text_encoder_2 and tokenizer_2 (-m only) */
    static struct sde_result er;
    if (!eo.ckpt && info) die(2, "--info: needs -m CHECKPOINT (it plans the engine's compiles)");
    if (!eo.ckpt && eo.t5_tokenizer) die(2, "--t5-tokenizer: needs -m CHECKPOINT (--models takes --hf DIR's tokenizers)");
    if (!eo.ckpt && (eo.vae_file || eo.clip_l_file || eo.clip_g_file || eo.t5xxl_file))
        die(2, "--vae, --clip-l, --clip-g, --t5xxl: need -m CHECKPOINT (files added to the checkpoint's weights)");
#ifdef ONNX2CL_HAVE_SD3
    /* SD 3: the flags its loop does not take (before anything is loaded or compiled) */
#define SD3_REFUSE(what, fam)                                                                                      \
    do {                                                                                                           \
        if (latents_path || batch > 1 || emphasis != SDP_EMPHASIS_DIFFUSERS ||                                    \
            clip_skip > 1 || guidance_rescale > 0 || taesd || eo.vae_tile || te_so || unet_so ||                   \
            vae_so || venc_so || sched_name || schedule_type)                                                      \
            die(2, "%s (%s): txt2img, img2img and inpainting, one image at a time so far (--batch-count runs): "    \
                "--latents, --batch-size, --emphasis, --clip-skip, --guidance-rescale, "                           \
                "--taesd, --vae-tile, --scheduler and the per-model flags are not ported for %s", what, fam, fam);   \
        if (guidance_given && strcmp(fam, "Flux"))                                                                 \
            die(2, "--guidance: Flux dev's distilled guidance; %s takes --cfg", fam);                             \
        if (eo.no_t5 && strcmp(fam, "SD 3"))                                                                       \
            die(2, "--no-t5: SD 3's optional T5 (Flux needs its T5)");                                             \
        if (size_from_image && ((width && width % 16) || (height && height % 16)))                                 \
            die(2, "--init-image %s: %s generates sizes that are multiples of 16, the %s %dx%d is not: give "    \
                "--width and --height (multiples of 16; the image is resized%s)", init_path, fam,                 \
                only_masked ? "area around the mask, by default" : "image", width, height,                        \
                only_masked ? "; with --only-masked the area is generated at that size" : "");                    \
    } while (0)
    { /* --models DIR with an SD 3 transformer: StableDiffusion3Pipeline (sd3_pipeline.h) */
        char tf[PATH_MAX];
        if (!eo.ckpt && models && model_file(models, "transformer", tf, sizeof tf)) {
            char what[PATH_MAX + 16];
            snprintf(what, sizeof what, "--models %s", models);
            const int flux = hf && flux_folder(hf);
            SD3_REFUSE(what, flux ? "Flux" : "SD 3");
            if (eo.n_loras)
                die(2, "--lora / <lora:...> tags: need -m CHECKPOINT (LoRAs are merged when the engine converts the "
                    "checkpoint's weights; --models DIR are compiled already)");
            for (int k = 0; k <= n_images; k++)
                if (opath[k]) check_output(oflag[k], opath[k]);
            struct sd3_run r = {.models = models, .hf = hf, .prompt = prompt, .negative = negative, .outs = outs,
                                .n_images = n_images,
                                .save_image = save_image, .device = device, .sched_cfg = sched_cfg,
                                .steps = steps_given ? steps : 28, .width = width, .height = height, .quiet = quiet,
                                /* diffusers' defaults: SD 3 guidance 7; Flux true CFG 1 (off), guidance 3.5 */
                                .cfg = cfg_given ? cfg : flux ? 1.0 : 7.0, .seed = seed, .flux = flux, .no_t5 = eo.no_t5, .offload = eo.offload, .text_device = text_device,
                                .init = init_img, .mask = mask_img, .mask_blur = mask_blur, .strength = strength,
                                .ov = {om_init, om_mask, om_w, om_h, {om_box[0], om_box[1], om_box[2], om_box[3]}},
                                .guidance = guidance, .scaling = flux ? 0.3611 : 1.5305, .shift = flux ? 0.1159 : 0.0609};
            run_sd3(&r);
            free(init_img);
            free(mask_img);
            return 0;
        }
    }
#endif
    if (eo.vae_tile && !eo.ckpt) die(2, "--vae-tile %d: needs -m CHECKPOINT (the engine compiles the VAE for the tile)", eo.vae_tile);
    if (eo.ckpt) { /* -m: the engine finds or builds the models in the cache */
        if (models || te_so || unet_so || vae_so || venc_so || hf)
            die(2, "-m %s: the models come from the checkpoint; drop --models, --hf, --text-encoder, --unet, "
                "--vae-decoder, --vae-encoder", eo.ckpt);
        for (int k = 0; k <= n_images; k++)
            if (opath[k]) check_output(oflag[k], opath[k]);
        for (char *e = argv[0] ? (char *)eo.ckpt + strlen(eo.ckpt) : NULL; e && e > eo.ckpt + 1 && e[-1] == '/';)
            *--e = 0; /* "folder/" -> "folder" (messages, paths) */
        check_outputs_vs_engine(oflag, opath, n_images + 1, &eo);
        { /* the user's own inputs, before anything is compiled */
            const char *in[] = {init_path, mask_path, latents_path};
            const char *what[] = {"the --init-image", "the --mask", "the --latents file"};
            check_outputs_vs_inputs(oflag, opath, n_images + 1, in, what, 3);
        }
        eo.width = width;
        eo.height = height;
        eo.batch = cfg > 1 ? 2 * batch : batch;
        eo.vae_encoder = init_path != NULL;
        eo.quiet = 0;
        if (emphasis != SDP_EMPHASIS_DIFFUSERS) { /* long prompts: the UNet's text length from the chunks */
            eo.plan_only = 1;
            int prc = sde_prepare(&eo, &er, err, sizeof err);
            if (prc) die(prc == -2 ? 2 : 1, "%s", err);
            eo.plan_only = 0;
            const char *td = tok_dir ? tok_dir : er.tokenizer;
            struct sdp_tokenizer *t0;
            if (!td[0])
                die(1, "-m %s: no tokenizer (neither the folder's tokenizer/vocab.json nor %s/tokenizer/): "
                    "give --tokenizer DIR (vocab.json + merges.txt)", eo.ckpt, er.arch_path);
            if (sdp_tokenizer_load(td, &t0, err, sizeof err)) die(1, "%s", err);
            if (sdp_cond_tokens(t0, emphasis, prompt, negative, cfg > 1, 77, &eo.tokens, NULL, NULL, err, sizeof err))
                die(2, "%s", err);
            sdp_tokenizer_free(t0);
        }
#ifdef ONNX2CL_HAVE_SD3
        { /* an SD 3 checkpoint: its own loop (the family from the keys, before any compile) */
            struct sde_options po = eo;
            po.plan_only = 1, po.quiet = 1;
            if (size_from_image) po.width = po.height = 0; /* the family first; its size rule below (SD3_REFUSE) */
            po.info = info ? stdout : NULL; /* plan_only + info: the family alone (no table; --info needs no tokenizer) */
            int prc = sde_prepare(&po, &er, err, sizeof err);
            if (prc) die(prc == -2 ? 2 : 1, "%s", err);
            const int flux = !strcmp(er.family, "flux");
            if (flux || !strcmp(er.family, "sd3")) {
                char what[PATH_MAX + 16];
                snprintf(what, sizeof what, "-m %s", eo.ckpt);
                SD3_REFUSE(what, flux ? "Flux" : "SD 3");
                /* diffusers' defaults: SD 3 guidance 7 (one batch-2 run); Flux true CFG 1 (off), one row per run */
                const double c = cfg_given ? cfg : flux ? 1.0 : 7.0;
                eo.batch = !flux && c > 1 ? 2 : 1, eo.vae_encoder = init_img != NULL, eo.tokens = 0;
                if (info) print_info_exit(&eo, &er); /* after the refusals above */
                int rc3 = sde_prepare(&eo, &er, err, sizeof err);
                if (rc3) die(rc3 == -2 ? 2 : 1, "%s", err);
                struct sd3_run r = {.prompt = prompt, .negative = negative, .outs = outs, .n_images = n_images,
                                    .save_image = save_image,
                                    .device = device, .sched_cfg = sched_cfg ? sched_cfg : er.sched_cfg,
                                    .steps = steps_given ? steps : 28, .width = er.width, .height = er.height,
                                    .quiet = quiet, .cfg = c, .seed = seed, .flux = flux, .guidance = guidance,
                                    .no_t5 = eo.no_t5, .offload = eo.offload, .text_device = text_device, .init = init_img, .mask = mask_img,
                                    .mask_blur = mask_blur, .strength = strength,
                                    .ov = {om_init, om_mask, om_w, om_h, {om_box[0], om_box[1], om_box[2], om_box[3]}},
                                    .prog = {er.program[0], er.program[4], flux ? NULL : er.program[5], er.program[6],
                                             er.program[2], init_img ? er.program[3] : NULL},
                                    .wts = {er.weights[0], er.weights[4], flux ? NULL : er.weights[5], er.weights[6],
                                            er.weights[2], init_img ? er.weights[3] : NULL},
                                    .tok = {tok_dir ? tok_dir : er.tokenizer, flux ? NULL : er.tokenizer2, er.tokenizer3},
                                    .vae_cfg = er.vae_cfg[0] ? er.vae_cfg : NULL, .scaling = er.scaling_factor,
                                    .shift = er.shift_factor};
                static char mname[256], mhash[16];
                model_label(&eo, mname, sizeof mname, mhash);
                r.model_name = mname, r.model_hash = mhash;
                static char *iprompt, *lhashes; /* static: reachable at die() (LeakSanitizer) */
                lora_metadata(&eo, n_flag_loras, prompt_tagged, &iprompt, &lhashes);
                r.info_prompt = iprompt ? iprompt : prompt_tagged, r.lora_hashes = lhashes;
                run_sd3(&r);
                free(init_img);
                free(mask_img);
                free(iprompt);
                free(lhashes);
                free_tag_loras(&eo, n_flag_loras, prompt, prompt_tagged);
                return 0;
            }
        }
#endif
        if (guidance_given || eo.no_t5) /* SD 3 and Flux returned above */
            die(2, "%s", guidance_given ? "--guidance: Flux dev's distilled guidance; an SD 1.x/2.x/XL UNet takes --cfg"
                                        : "--no-t5: SD 3's optional T5 encoder; an SD 1.x/2.x/XL checkpoint has none");
        if (info) print_info_exit(&eo, &er);
        int rc = sde_prepare(&eo, &er, err, sizeof err);
        if (rc) die(rc == -2 ? 2 : 1, "%s", err);
        if (eo.vae_tile && !er.vae_tiled)
            fprintf(stderr, "%s: note: --vae-tile %d is not smaller than the image (%dx%d): the VAE runs untiled\n",
                    prog, eo.vae_tile, er.width, er.height);
        te_so = er.program[0];
        unet_so = er.program[1];
        vae_so = er.program[2];
        if (init_path) venc_so = er.program[3];
        for (int i = 0; i < 5; i++) snprintf(wpath[i], sizeof wpath[i], "%s", er.weights[i]);
        if (er.tokenizer2[0]) {
            te2_so = er.program[4];
            tok2_dir = er.tokenizer2;
        }
        if (!tok_dir) {
            if (!er.tokenizer[0])
                die(1, "-m %s: no tokenizer (neither the folder's tokenizer/vocab.json nor %s/tokenizer/): "
                    "give --tokenizer DIR (vocab.json + merges.txt)", eo.ckpt, er.arch_path);
            tok_dir = er.tokenizer;
        }
        if (!sched_cfg) sched_cfg = er.sched_cfg;
        if (scaling == 0 && er.vae_cfg[0]) snprintf(p_vc, sizeof p_vc, "%s", er.vae_cfg);
        else if (scaling == 0) scaling = er.scaling_factor;
    }
    (void)guidance, (void)steps_given, (void)cfg_given; /* SD 3 and Flux only */
    if (guidance_given || eo.no_t5) /* SD 3 and Flux returned above */
        die(2, "%s", guidance_given ? "--guidance: Flux dev's distilled guidance; an SD 1.x/2.x/XL UNet takes --cfg"
                                    : "--no-t5: SD 3's optional T5 encoder; an SD 1.x/2.x/XL checkpoint has none");
    if (!te_so || !unet_so || !vae_so || (init_path && !venc_so)) {
        if (!models)
            die(2, "give --models DIR (or all of --text-encoder, --unet, --vae-decoder%s)",
                init_path ? ", --vae-encoder" : "");
        snprintf(p_te, sizeof p_te, "%s/text_encoder.so", models);
        snprintf(p_un, sizeof p_un, "%s/unet.so", models);
        snprintf(p_va, sizeof p_va, "%s/vae_decoder.so", models);
        snprintf(p_ve, sizeof p_ve, "%s/vae_encoder.so", models);
        char *ps[4] = {p_te, p_un, p_va, p_ve}; /* no .so but a .o2d: the descriptor file */
        for (int i = 0; i < 4; i++)
            if (!file_exists(ps[i]) && strlen(ps[i]) + 2 < PATH_MAX) {
                size_t l = strlen(ps[i]);
                memcpy(ps[i] + l - 3, ".o2d", 5);
                if (!file_exists(ps[i])) memcpy(ps[i] + l - 3, ".so", 4);
            }
        if (!te_so) te_so = p_te;
        if (!unet_so) unet_so = p_un;
        if (!vae_so) vae_so = p_va;
        if (init_path && !venc_so) venc_so = p_ve;
    }
    if (!init_path) venc_so = NULL;
    if (!tok_dir) {
        if (!hf) die(2, "give --hf CHECKPOINT_DIR or --tokenizer DIR");
        snprintf(p_tok, sizeof p_tok, "%s/tokenizer", hf);
        tok_dir = p_tok;
    }
    if (!sched_cfg) {
        if (!hf) die(2, "give --hf CHECKPOINT_DIR or --scheduler-config FILE");
        snprintf(p_sc, sizeof p_sc, "%s/scheduler/scheduler_config.json", hf);
        sched_cfg = p_sc;
    }
    for (int k = 0; k <= n_images; k++)
        if (opath[k]) check_output(oflag[k], opath[k]);
    if (scaling == 0 && hf) snprintf(p_vc, sizeof p_vc, "%s/vae/config.json", hf);
    const char *vae_cfg = p_vc[0] ? p_vc : NULL;
    { /* no output may be a file this run reads, nor another output */
        static char w[4][PATH_MAX], tf[4][PATH_MAX + 32], exe[PATH_MAX];
        const char *sos[4] = {te_so, unet_so, vae_so, venc_so};
        for (int i = 0; i < 4; i++)
            if (wpath[i][0]) memcpy(w[i], wpath[i], sizeof w[i]);
            else if (sos[i]) sdp_model_weights_path(sos[i], w[i], sizeof w[i]);
        static const char *const tok_files[4] = {"vocab.json", "merges.txt", "tokenizer_config.json",
                                                 "special_tokens_map.json"};
        for (int i = 0; i < 4; i++) snprintf(tf[i], sizeof tf[i], "%s/%s", tok_dir, tok_files[i]);
        const char *in[] = {te_so, w[0], unet_so, w[1], vae_so, w[2], tf[0], tf[1], tf[2], tf[3], sched_cfg,
                            p_vc[0] ? p_vc : NULL, latents_path, o2r_exe_path(exe, sizeof exe) ? exe : NULL,
                            init_path, mask_path, venc_so, venc_so ? w[3] : NULL, te2_so, te2_so ? wpath[4] : NULL};
        const char *what[] = {"the text encoder's shared object", "the text encoder's weights file",
                              "the UNet's shared object", "the UNet's weights file", "the VAE decoder's shared object",
                              "the VAE decoder's weights file", "the tokenizer's vocab.json",
                              "the tokenizer's merges.txt", "the tokenizer's tokenizer_config.json",
                              "the tokenizer's special_tokens_map.json", "the scheduler config",
                              "the VAE config", "the --latents file", "this executable", "the --init-image",
                              "the --mask", "the VAE encoder's shared object", "the VAE encoder's weights file",
                              "text_encoder_2's program", "text_encoder_2's weights file"};
        check_outputs_vs_inputs(oflag, opath, n_images + 1, in, what, (int)(sizeof in / sizeof *in));
    }
    if (scaling == 0) {
        scaling = 0.18215;
        if (vae_cfg) {
            if (file_exists(p_vc)) {
                cJSON *j = sdp_json_file(p_vc, err, sizeof err);
                if (!j) die(1, "%s", err);
                const cJSON *sf = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "scaling_factor") : NULL;
                if (sf && !cJSON_IsNumber(sf)) die(1, "%s: scaling_factor is not a number", p_vc);
                if (sf) scaling = sf->valuedouble;
                cJSON_Delete(j);
            }
        }
    }
    if (!sched_name) { /* the checkpoint's own class when it is one of ours */
        cJSON *j = sdp_json_file(sched_cfg, err, sizeof err);
        if (!j) die(1, "%s", err);
        const cJSON *cn = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "_class_name") : NULL;
        const char *cls = cJSON_IsString(cn) ? cn->valuestring : NULL;
        kind = SDP_SCHED_EULER;
        if (!cls)
            fprintf(stderr, "%s: scheduler euler (%s names no _class_name)\n", prog, sched_cfg);
        else if (sdp_sched_kind_from_class(cls, &kind))
            fprintf(stderr, "%s: scheduler euler (%s: _class_name %s is not ported; --scheduler picks "
                    "another)\n", prog, sched_cfg, cls);
        else
            fprintf(stderr, "%s: scheduler %s (%s: _class_name %s)\n", prog, sdp_sched_kind_name(kind), sched_cfg, cls);
        sched_name = sdp_sched_kind_name(kind);
        cJSON_Delete(j);
    }
    if (schedule_type && !sched_given) { /* the config's class with A1111's schedule type */
        if (sdp_sched_parse(sdp_sched_kind_name(kind), schedule_type, &kind, &ov, err, sizeof err))
            die(2, "--schedule-type %s: %s", schedule_type, err);
    }
    /* --karras / --no-karras against sigmas the sampler name or schedule type implies: refused as
     * sdp_sched_parse refuses "DPM++ 2M Karras" with --schedule-type Exponential */
    if ((user_karras == 0 && ov.sigmas == SDP_SIGMAS_KARRAS) ||
        (user_karras == 1 && ov.sigmas != SDP_SIGMAS_CONFIG && ov.sigmas != SDP_SIGMAS_KARRAS)) {
        char what[512];
        snprintf(what, sizeof what, "%s%s%s%s", sched_given ? "--scheduler " : "", sched_given ? sched_name : "",
                 schedule_type ? (sched_given ? " --schedule-type " : "--schedule-type ") : "",
                 schedule_type ? schedule_type : "");
        die(2, "--%s: contradicts %s (%s sigmas); drop one", user_karras ? "karras" : "no-karras", what,
            ov.sigmas == SDP_SIGMAS_KARRAS ? "Karras" : ov.sigmas == SDP_SIGMAS_EXPONENTIAL ? "exponential"
            : ov.sigmas == SDP_SIGMAS_BETA ? "beta" : "default");
    }
    if (eta_given && kind != SDP_SCHED_DDIM && kind != SDP_SCHED_TCD)
        die(2, "--eta: sampler %s takes no eta (only DDIM's eta and TCD's gamma are ported; diffusers' ancestral "
            "and SDE samplers have none)", sdp_sched_kind_name(kind));
    if (ov.karras == 1) { /* only for the classes that take Karras sigmas */
        struct sdp_sched_overrides o2 = ov;
        enum sdp_sched_kind k2;
        if (sdp_sched_parse(sdp_sched_kind_name(kind), "Karras", &k2, &o2, err, sizeof err))
            die(2, "--karras: %s", err);
    }
    struct sdp_pipeline p = {0};
    p.vae_tiling = er.vae_tiled;
    if (sdp_tokenizer_load(tok_dir, &p.tok, err, sizeof err)) die(1, "%s", err);
    if (tok2_dir && sdp_tokenizer_load(tok2_dir, &p.tok2, err, sizeof err)) die(1, "%s", err);
    if (sdp_sched_load(sched_cfg, kind, &ov, &p.sched, err, sizeof err)) die(1, "%s", err);
    if (p.sched->pred != SDP_PRED_EPSILON || ov.prediction_type)
        fprintf(stderr, "%s: prediction type %s (%s)\n", prog,
                p.sched->pred == SDP_PRED_V ? "v_prediction" : p.sched->pred == SDP_PRED_SAMPLE ? "sample" : "epsilon",
                ov.prediction_type ? "--prediction-type" : sched_cfg);
    /* the prompt and the schedule are checked before any model is loaded */
    int neg_tokens = 0;
    {
        int64_t ids[2];
        int full;
        if (sdp_tokenizer_encode(p.tok, prompt, ids, 2, &full, err, sizeof err)) die(2, "--prompt: %s", err);
        if (sdp_tokenizer_encode(p.tok, negative, ids, 2, &neg_tokens, err, sizeof err))
            die(2, "--negative-prompt: %s", err);
        int ct;
        if (sdp_cond_tokens(p.tok, emphasis, prompt, negative, cfg > 1, 77, &ct, NULL, NULL, err, sizeof err))
            die(2, "%s", err);
        if (sdp_sched_set_timesteps(p.sched, steps, err, sizeof err)) die(2, "%s", err);
        if (init_path && sdp_sched_add_noise(p.sched, 0, NULL, NULL, NULL, 0))
            die(2, "--init-image: scheduler %s has no img2img here (add_noise)", sched_name);
    }
    struct o2r_ctx *ctx;
    double t0 = now_s();
    if (o2r_ctx_create(device, &ctx) != O2R_OK) die(1, "device: %s", o2r_ctx_last_error(NULL));
    struct o2r_ctx *tctx = text_context(text_device, ctx);
    struct sdp_mem_track track = {0};
    const int ol = eo.offload;
    if (sdp_model_load_opt(tctx, te_so, wpath[0][0] ? wpath[0] : NULL, ol, &track, &p.te, err, sizeof err) ||
        sdp_model_load_opt(ctx, unet_so, wpath[1][0] ? wpath[1] : NULL, ol, &track, &p.unet, err, sizeof err) ||
        sdp_model_load_opt(ctx, vae_so, wpath[2][0] ? wpath[2] : NULL, ol, &track, &p.vae, err, sizeof err) ||
        (venc_so && sdp_model_load_opt(ctx, venc_so, wpath[3][0] ? wpath[3] : NULL, ol, &track, &p.venc, err, sizeof err)) ||
        (te2_so && sdp_model_load_opt(tctx, te2_so, wpath[4], ol, &track, &p.te2, err, sizeof err)))
        die(1, "%s", err);
    double t_load = now_s() - t0;
    if (sdp_pipeline_check(&p, err, sizeof err)) die(1, "%s", err);
    if ((width && width != p.img_w) || (height && height != p.img_h))
        die(2, "--width %d --height %d: the models were compiled for %dx%d (UNet sample [%d,%d,%d,%d], VAE "
            "output %dx%d); recompile the UNet with --shape sample=B,%d,H/f,W/f --shape "
            "encoder_hidden_states=B,%d,%d and the VAE decoder with --shape latent_sample=1,%d,H/f,W/f "
            "(f = %d here)", width ? width : p.img_w, height ? height : p.img_h, p.img_w, p.img_h, p.u_batch,
            p.lat_c, p.lat_h, p.lat_w, p.img_w, p.img_h, p.lat_c, p.seq, p.hidden, p.lat_c,
            p.img_w / (p.lat_w ? p.lat_w : 1));
    if (p.unet_in_c != p.lat_c && !mask_path)
        die(2, "%s: an inpainting UNet (%d input channels: latents, mask, masked image): give --init-image and "
            "--mask", eo.ckpt ? eo.ckpt : unet_so, p.unet_in_c);
    if (init_path && (init_w != p.img_w || init_h != p.img_h))
        die(2, "--init-image %s: %dx%d, but the models make %dx%d images: give --width %d --height %d to resize it "
            "(or an image of that size)", init_path, init_w, init_h, p.img_w, p.img_h, p.img_w, p.img_h);
    static struct taesd_run tr;
    if (taesd) { /* compiled for the UNet's latents (cached as the checkpoint's models) and loaded */
        int rc = sdv_taesd_prepare(&eo, taesd, p.lat_c, p.lat_h, p.lat_w, &taesd_f, err, sizeof err);
        if (rc) die(rc == -2 ? 2 : 1, "%s", err);
        if (sdv_taesd_load(ctx, &taesd_f, &tr.t, err, sizeof err)) die(1, "%s", err);
        tr.preview = preview, tr.every = preview_every, tr.fast = fast_decode;
        if (!(tr.pv = malloc((size_t)3 * tr.t.img_h * tr.t.img_w * sizeof *tr.pv))) die(1, "out of memory");
    }
    const int out_h = fast_decode ? tr.t.img_h : p.img_h, out_w = fast_decode ? tr.t.img_w : p.img_w;
    float *latents = NULL;
    size_t nl = (size_t)p.lat_c * p.lat_h * p.lat_w;
    if (latents_path) {
        struct o2r_tensor t;
        if (o2r_tensor_read(latents_path, &t, err, sizeof err) != O2R_OK) die(1, "--latents: %s", err);
        if (t.dtype != O2R_F32 || t.nbytes != (size_t)batch * nl * 4)
            die(1, "--latents %s: expected float32 [%d,%d,%d,%d] (%zu values), got %s with %llu bytes", latents_path,
                batch, p.lat_c, p.lat_h, p.lat_w, (size_t)batch * nl, o2r_dtype_name(t.dtype),
                (unsigned long long)t.nbytes);
        latents = t.data;
    }
    struct sdp_params prm = {.prompt = prompt, .negative = negative, .steps = steps, .cfg = (float)cfg,
                             .seed = seed, .batch = batch, .latents = latents, .init_image = init_img,
                             .strength = strength, .mask = mask_img, .scaling_factor = (float)scaling,
                             .quiet = quiet, .emphasis = emphasis,
                             .encode_empty_negative = te2_so && !er.force_zeros,
                             .guidance_rescale = (float)guidance_rescale};
    if (taesd) prm.progress = taesd_progress, prm.progress_user = &tr;
    size_t ni = (size_t)3 * out_h * out_w;
    float *image = malloc((save_image ? (size_t)n_images : (size_t)batch) * ni * sizeof *image);
    if (!image) die(1, "out of memory");
    struct sdp_timings tm, tsum = {0};
    int n_tokens = 0;
    char model_name[256] = "", model_hash[16] = "", *lora_hashes = NULL, *info_prompt = NULL;
    lora_metadata(&eo, n_flag_loras, prompt_tagged, &info_prompt, &lora_hashes);
    if (eo.ckpt) model_label(&eo, model_name, sizeof model_name, model_hash);
    const char *a1111_sampler, *a1111_schedule;
    sdp_sched_a1111_name(p.sched, &a1111_sampler, &a1111_schedule);
    int written = 0;
    prm.cancel = &interrupted;
    signal(SIGINT, on_sigint);
    for (int it = 0; it < batch_count; it++) {
        float *img = image + (save_image ? (size_t)it * batch * ni : 0);
        prm.seed = seed + (uint64_t)it * (uint64_t)batch;
        if (batch_count > 1 && !quiet) fprintf(stderr, "%s: batch %d/%d\n", prog, it + 1, batch_count);
        double t_gen = now_s();
        tr.image = img, tr.decoded = 0;
        int grc = sdp_generate(&p, &prm, img, &n_tokens, &tm, err, sizeof err);
        if (grc == SDP_CANCELLED && interrupted) {
            fprintf(stderr, "%s: interrupted (Ctrl-C) in batch %d of %d: %d image(s) written before it%s%s%s\n", prog,
                    it + 1, batch_count, written, written ? " (" : "", written ? outs[0] : "",
                    written > 1 ? ", ...)" : written ? ")" : "");
            exit(130);
        }
        if (tr.failed) die(1, "%s%s", preview ? "--preview: " : "", tr.err);
        if (grc && !(grc == SDP_CANCELLED && tr.decoded)) die(1, "%s", err);
        if (tr.decoded) tm.total = now_s() - t_gen; /* stopped before the VAE: TAESD's images */
        tsum.text_encoder += tm.text_encoder, tsum.text_runs += tm.text_runs, tsum.unet_total += tm.unet_total;
        tsum.unet_runs += tm.unet_runs, tsum.scheduler += tm.scheduler, tsum.vae += tm.vae;
        tsum.vae_encoder += tm.vae_encoder, tsum.total += tm.total;
        if (it == 0 && emphasis == SDP_EMPHASIS_DIFFUSERS && n_tokens > p.seq)
            fprintf(stderr, "%s: note: the prompt is %d tokens with BOS/EOS; the text encoder takes %d: "
                    "the last %d were dropped (as diffusers truncates; --emphasis Original keeps them, in 75-token chunks "
                    "as A1111)\n", prog, n_tokens, p.seq, n_tokens - p.seq);
        if (it == 0 && emphasis == SDP_EMPHASIS_DIFFUSERS && cfg > 1 && neg_tokens > p.seq)
            fprintf(stderr, "%s: note: the negative prompt is %d tokens with BOS/EOS; the text encoder takes %d: "
                    "the last %d were dropped (as diffusers truncates)\n", prog, neg_tokens, p.seq,
                    neg_tokens - p.seq);
        for (int b = 0; b < batch; b++) {
            int k = it * batch + b;
            /* A1111 writes the negative prompt whatever the CFG scale, and eta when the sampler
             * takes it and it is not the default ("Eta DDIM" for DDIM: sd_samplers_timesteps.py) */
            char extra[256] = "";
            if (ov.eta != 0 && (kind == SDP_SCHED_DDIM || kind == SDP_SCHED_TCD))
                snprintf(extra, sizeof extra, "%s: %g", kind == SDP_SCHED_DDIM ? "Eta DDIM" : "Eta", ov.eta);
            if (latents_path)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%sLatents: from file",
                         extra[0] ? ", " : "");
            if (only_masked) /* A1111's processing.py names */
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         "%sInpaint area: Only masked, Masked area padding: %d", extra[0] ? ", " : "", only_masked_pad);
            if (guidance_rescale > 0) /* not an A1111 key: kept as is by its parser */
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%sGuidance rescale: %g",
                         extra[0] ? ", " : "", guidance_rescale);
            struct sdp_infotext itx = {.prompt = info_prompt ? info_prompt : prompt_tagged, .negative = negative, .steps = steps,
                                       .sampler = a1111_sampler, .schedule = a1111_schedule,
                                       .cfg = cfg, .seed = seed + (uint64_t)k, .width = out_w, .height = out_h,
                                       .model_hash = model_hash, .model = model_name,
                                       .strength = init_path ? strength : -1, .inpaint = mask_path != NULL,
                                       .mask_blur = mask_blur, .clip_skip = clip_skip,
                                       .emphasis = sdp_infotext_emphasis(emphasis == SDP_EMPHASIS_DIFFUSERS ? "None"
                                                                         : sdp_emphasis_name(emphasis),
                                                                         prompt_tagged, negative),
                                       .extra = extra[0] ? extra : NULL, .lora_hashes = lora_hashes,
                                       .version = "onnx2cl-sd " ONNX2CL_VERSION};
            char *params = sdp_infotext_dup(&itx);
            if (!params) die(1, "out of memory");
            const char *keys[2] = {"parameters", "Software"}, *vals[2] = {params, "onnx2cl-sd " ONNX2CL_VERSION};
            const struct overlay ov = {om_init, om_mask, om_w, om_h, {om_box[0], om_box[1], om_box[2], om_box[3]}};
            int wrc = write_png(outs[k], img + (size_t)b * ni, out_w, out_h, &ov, keys, vals, err, sizeof err);
            free(params);
            if (wrc)
                die(1, "%s", err);
            written++;
        }
    }
    /* outputs */
    if (save_image) {
        struct o2r_tensor t = {.dtype = O2R_F32, .rank = 4, .dims = {n_images, 3, out_h, out_w}, .data = image,
                               .nbytes = (size_t)n_images * ni * 4};
        if (o2r_tensor_write_npy(save_image, &t, err, sizeof err) != O2R_OK) die(1, "--save-image: %s", err);
    }
    /* timings */
    int n = p.sched->n_steps;
    int n_run = init_path ? n - sdp_img2img_t_start(steps, strength) * sdp_sched_order(p.sched) : n;
    if (n_images > 1)
        fprintf(stderr, "%s: wrote %s ... %s (%d images of %dx%d, seeds %llu ... %llu)\n", prog, outs[0],
                outs[n_images - 1], n_images, only_masked ? om_w : out_w, only_masked ? om_h : out_h, (unsigned long long)seed,
                (unsigned long long)(seed + (uint64_t)n_images - 1));
    else
        fprintf(stderr, "%s: wrote %s (%dx%d)\n", prog, outs[0], only_masked ? om_w : out_w, only_masked ? om_h : out_h);
    if (taesd)
        fprintf(stderr, "%s: TAESD (%s, %s): %.3f s%s%s%s\n", prog, taesd_f.arch, taesd_f.file, tr.t.seconds,
                fast_decode ? ", decoded the images (no VAE)" : "", preview ? ", previews in " : "", preview ? preview : "");
    fprintf(stderr,
            "timings on %s:\n"
            "  stage              runs   total s   per run s\n"
            "  checkpoint/cache      %d  %8.3f              (-m: %d compiled, %d converted)\n"
            "  load models        %4d  %8.3f\n"
            "  text encoder       %4d  %8.3f  %10.4f\n"
            "  vae encoder        %4d  %8.3f\n"
            "  unet               %4d  %8.3f  %10.4f\n"
            "  unet per step      %4d            %10.4f\n"
            "  scheduler (host)   %4d  %8.3f\n"
            "  vae decoder        %4d  %8.3f  %10.4f\n"
            "  total (no load)          %8.3f\n",
            o2r_ctx_device_name(ctx), eo.ckpt ? 1 : 0, er.seconds, er.compiled,
            er.converted, 3 + (venc_so != NULL) + (te2_so != NULL), t_load, tsum.text_runs, tsum.text_encoder,
            tsum.text_runs ? tsum.text_encoder / tsum.text_runs : 0, init_path ? batch_count : 0, tsum.vae_encoder,
            tsum.unet_runs, tsum.unet_total, tsum.unet_runs ? tsum.unet_total / tsum.unet_runs : 0,
            n_run * batch_count, n_run ? tsum.unet_total / (n_run * batch_count) : 0, n_run * batch_count,
            tsum.scheduler, n_images, tsum.vae, tsum.vae / n_images, tsum.total);
    print_mem_peak(&track, ol);
    free(image);
    free(latents);
    free(init_img);
    free(mask_img);
    free(lora_hashes);
    free(info_prompt);
    free_tag_loras(&eo, n_flag_loras, prompt, prompt_tagged);
    for (int k = 0; k < n_images; k++) free(outs[k]);
    free(outs);
    free(oflag);
    free(opath);
    sdp_model_close(&p.te);
    sdp_model_close(&p.unet);
    sdp_model_close(&p.vae);
    sdp_model_close(&p.venc);
    sdp_model_close(&p.te2);
    sdv_taesd_close(&tr.t);
    free(tr.pv);
    sdp_tokenizer_free(p.tok);
    sdp_tokenizer_free(p.tok2);
    sdp_sched_free(p.sched);
    if (tctx != ctx) o2r_ctx_free(tctx);
    o2r_ctx_free(ctx);
    return 0;
}

#ifdef ONNX2CL_HAVE_SD3
/* SD 3.x (StableDiffusion3Pipeline) from --models DIR: text_encoder, text_encoder_2, text_encoder_3
 * (optional: T5), transformer, vae_decoder (.so or .o2d each), and --hf DIR: tokenizer/,
 * tokenizer_2/ (CLIP), tokenizer_3/spiece.model (T5), scheduler/scheduler_config.json
 * (FlowMatchEulerDiscreteScheduler), vae/config.json (scaling_factor, shift_factor). */

/* DIR/NAME.so, else DIR/NAME.o2d, into buf; 0 when neither exists. */
static int model_file(const char *dir, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s.so", dir, name);
    if (file_exists(buf)) return 1;
    snprintf(buf, cap, "%s/%s.o2d", dir, name);
    return file_exists(buf);
}

/* vae/config.json's scaling_factor and shift_factor into *scaling / *shift when the file exists. */
/* SD 3 (r->flux 0) or Flux (1): load, check, generate one image, write it with its infotext. */
static void run_sd3(const struct sd3_run *r)
{
    static struct sdp_sd3 p;  /* static: reachable at die() (LeakSanitizer) */
    static struct sdp_flux q;
    const char *fam = r->flux ? "Flux" : "SD 3";
    char err[2048], sc[PATH_MAX], vc[PATH_MAX];
    if (!r->hf && !r->prog[0])
        die(2, "--models %s holds a %s transformer: give --hf DIR (its tokenizer folders, scheduler/ and vae/ config)",
            r->models, fam);
    /* the models in -m's order (prog/wts), their --models names; Flux: text_encoder_2 is T5 */
    static const char *const names_sd3[6] = {"text_encoder", "text_encoder_2", "text_encoder_3", "transformer",
                                             "vae_decoder", "vae_encoder"};
    static const char *const names_flux[6] = {"text_encoder", "text_encoder_2", NULL, "transformer", "vae_decoder",
                                              "vae_encoder"};
    const char *const *names = r->flux ? names_flux : names_sd3;
    static char mpath[6][PATH_MAX], tpath[3][PATH_MAX];
    struct sdp_mem_track track = {0};
    struct sdp_sd3_files f = {.flux = r->flux, .offload = r->offload, .track = &track, .sched_cfg = r->sched_cfg,
                              .vae_cfg = r->vae_cfg,
                              .scaling = (float)r->scaling, .shift = (float)r->shift};
    if (!r->sched_cfg) snprintf(sc, sizeof sc, "%s/scheduler/scheduler_config.json", r->hf ? r->hf : "."), f.sched_cfg = sc;
    if (r->hf && !r->vae_cfg) snprintf(vc, sizeof vc, "%s/vae/config.json", r->hf), f.vae_cfg = vc;
    for (int i = 0; i < 3; i++) { /* tokenizer, tokenizer_2 (CLIP-G), the T5 folder (SD 3: tokenizer_3; Flux: _2) */
        snprintf(tpath[i], sizeof tpath[i], "%s/tokenizer%s", r->hf ? r->hf : ".",
                 i == 0 ? "" : i == 1 ? "_2" : r->flux ? "_2" : "_3");
        f.tok[i] = r->tok[i] ? r->tok[i] : tpath[i];
    }
    for (int i = 0; i < 6; i++) {
        if (!names[i] || (i == 5 && !r->init)) continue; /* the VAE encoder for img2img only */
        if (r->prog[0]) { /* -m: the engine's programs ("" for a checkpoint without text_encoder_3) */
            f.prog[i] = r->prog[i], f.wts[i] = r->wts[i];
            if (i == 2 && (r->no_t5 || !r->prog[i] || !r->prog[i][0])) {
                f.prog[i] = NULL;
                fprintf(stderr, "%s: T5 left out (%s): zero embeddings, as diffusers with text_encoder_3=None\n", prog,
                        r->no_t5 ? "--no-t5" : "the checkpoint has no text_encoder_3");
            }
            continue;
        }
        if (i == 2 && r->no_t5) {
            fprintf(stderr, "%s: T5 left out (--no-t5): zero embeddings, as diffusers with text_encoder_3=None\n", prog);
            continue;
        }
        if (!model_file(r->models, names[i], mpath[i], sizeof mpath[i])) {
            if (i == 2) { /* no T5: diffusers' text_encoder_3=None, zero embeddings */
                fprintf(stderr, "%s: no %s/text_encoder_3.so or .o2d: T5 left out (zero embeddings, as diffusers "
                        "with text_encoder_3=None)\n", prog, r->models);
                continue;
            }
            die(1, "--models %s: no %s.so or %s.o2d (%s needs text_encoder, text_encoder_2, transformer, "
                "vae_decoder%s%s)", r->models, names[i], names[i], fam, r->flux ? "" : "; text_encoder_3 optional",
                r->init ? "; vae_encoder for --init-image" : "");
        }
        f.prog[i] = mpath[i];
    }
    struct o2r_ctx *ctx;
    const double t0 = now_s();
    if (o2r_ctx_create(r->device, &ctx) != O2R_OK) die(1, "device: %s", o2r_ctx_last_error(NULL));
    struct o2r_ctx *tctx = text_context(r->text_device, ctx);
    f.text_ctx = tctx;
    if (sdp_sd3_setup(ctx, &f, &p, &q, err, sizeof err)) die(1, "%s", err);
    const struct sdp_scheduler *sched = r->flux ? q.sched : p.sched;
    const int img_w = r->flux ? q.img_w : p.img_w, img_h = r->flux ? q.img_h : p.img_h;
    if ((r->width && r->width != img_w) || (r->height && r->height != img_h))
        die(2, "--width %d --height %d: the models were compiled for %dx%d", r->width ? r->width : img_w,
            r->height ? r->height : img_h, img_w, img_h);
    const double t_load = now_s() - t0;
    const size_t ni = (size_t)3 * img_h * img_w;
    const int n = r->n_images > 0 ? r->n_images : 1;
    static float *image; /* every image when --save-image wants them all, else one */
    if (!(image = malloc((r->save_image ? (size_t)n : 1) * ni * sizeof *image))) die(1, "out of memory");
    const char *a_s, *a_sc;
    sdp_sched_a1111_name(sched, &a_s, &a_sc);
    const char *mname = r->model_name ? r->model_name : r->hf, *slash = strrchr(mname, '/');
    char extra[64] = ""; /* Forge's name for Flux's guidance */
    if (r->flux && q.d_g >= 0) snprintf(extra, sizeof extra, "Distilled CFG Scale: %g", r->guidance);
    struct sdp_timings tm, tsum = {0};
    for (int k = 0; k < n; k++) { /* --batch-count: image k with seed + k (A1111's n_iter) */
        float *img = image + (r->save_image ? (size_t)k * ni : 0);
        struct sdp_params prm = {.prompt = r->prompt, .negative = r->negative, .steps = r->steps, .cfg = (float)r->cfg,
                                 .seed = r->seed + (uint64_t)k, .batch = 1, .quiet = r->quiet, .init_image = r->init,
                                 .mask = r->mask, .strength = r->init ? r->strength : 0};
        int n_tokens = 0;
        if (n > 1 && !r->quiet) fprintf(stderr, "%s: image %d/%d (seed %llu)\n", prog, k + 1, n,
                                        (unsigned long long)prm.seed);
        if (r->flux ? sdp_flux_generate(&q, &prm, (float)r->guidance, img, &n_tokens, &tm, err, sizeof err)
                    : sdp_sd3_generate(&p, &prm, img, &n_tokens, &tm, err, sizeof err))
            die(1, "%s", err);
        tsum.text_runs += tm.text_runs, tsum.text_encoder += tm.text_encoder, tsum.unet_runs += tm.unet_runs;
        tsum.unet_total += tm.unet_total, tsum.scheduler += tm.scheduler, tsum.vae += tm.vae, tsum.total += tm.total;
        if (k == 0 && n_tokens > 77) /* as diffusers truncates (its warning); T5 takes max_sequence_length */
            fprintf(stderr, "%s: note: the prompt is %d CLIP tokens with BOS/EOS; the CLIP text encoders take 77: the "
                    "last %d were dropped (as diffusers truncates; T5 takes %d tokens)\n", prog, n_tokens,
                    n_tokens - 77, r->flux ? q.t5_len : p.t5_len);
        struct sdp_infotext it = {.prompt = r->info_prompt ? r->info_prompt : r->prompt, .negative = r->negative,
                                  .steps = r->steps, .sampler = a_s, .lora_hashes = r->lora_hashes,
                                  .schedule = a_sc, .cfg = r->cfg, .seed = prm.seed, .width = img_w, .height = img_h,
                                  .model = slash && slash[1] ? slash + 1 : mname, .model_hash = r->model_hash,
                                  .strength = r->init ? r->strength : -1, .extra = extra[0] ? extra : NULL,
                                  .inpaint = r->mask != NULL, .mask_blur = r->mask_blur,
                                  .version = "onnx2cl-sd " ONNX2CL_VERSION};
        char *params = sdp_infotext_dup(&it);
        if (!params) die(1, "out of memory");
        const char *keys[2] = {"parameters", "Software"}, *vals[2] = {params, "onnx2cl-sd " ONNX2CL_VERSION};
        if (write_png(r->outs[k], img, img_w, img_h, &r->ov, keys, vals, err, sizeof err)) die(1, "%s", err);
        free(params);
    }
    tm = tsum;
    if (r->save_image) {
        struct o2r_tensor t = {.dtype = O2R_F32, .rank = 4, .dims = {n, 3, img_h, img_w}, .data = image,
                               .nbytes = (size_t)n * ni * 4};
        if (o2r_tensor_write_npy(r->save_image, &t, err, sizeof err) != O2R_OK) die(1, "--save-image: %s", err);
    }
    char what[96];
    if (r->flux)
        snprintf(what, sizeof what, "Flux %s: CLIP-L + T5, guidance %g%s", q.d_g >= 0 ? "dev" : "schnell", r->guidance,
                 q.d_g >= 0 ? "" : " (unused)");
    else
        snprintf(what, sizeof what, "SD 3: %s", p.te3.desc ? "CLIP-L + CLIP-G + T5" : "CLIP-L + CLIP-G, no T5");
    const int ow = r->ov.init ? r->ov.w : img_w, oh = r->ov.init ? r->ov.h : img_h; /* --only-masked: the image's */
    if (n > 1)
        fprintf(stderr, "%s: wrote %s ... %s (%d images of %dx%d, %s, %d steps, cfg %g, seeds %llu ... %llu)\n", prog,
                r->outs[0], r->outs[n - 1], n, ow, oh, what, r->steps, r->cfg, (unsigned long long)r->seed,
                (unsigned long long)(r->seed + (uint64_t)n - 1));
    else
        fprintf(stderr, "%s: wrote %s (%dx%d, %s, %d steps, cfg %g, seed %llu)\n", prog, r->outs[0], ow, oh,
                what, r->steps, r->cfg, (unsigned long long)r->seed);
    fprintf(stderr,
            "timings on %s:\n"
            "  load models        %8.3f s\n"
            "  text encoders      %4d runs %8.3f s\n"
            "  transformer        %4d runs %8.3f s  (%.4f s per run)\n"
            "  scheduler (host)            %8.3f s\n"
            "  vae decoder                 %8.3f s\n"
            "  total (no load)             %8.3f s\n",
            o2r_ctx_device_name(ctx), t_load, tm.text_runs, tm.text_encoder, tm.unet_runs, tm.unet_total,
            tm.unet_runs ? tm.unet_total / tm.unet_runs : 0, tm.scheduler, tm.vae, tm.total);
    print_mem_peak(&track, r->offload);
    free(image);
    image = NULL;
    if (r->flux) sdp_flux_close(&q);
    else sdp_sd3_close(&p);
    if (tctx != ctx) o2r_ctx_free(tctx);
    o2r_ctx_free(ctx);
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0) return sd_serve_main(argc - 1, argv + 1);
    return cli_main(argc, argv);
}
