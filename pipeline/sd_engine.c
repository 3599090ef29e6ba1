/* sd_engine.c — `onnx2cl-sd -m CHECKPOINT`: checkpoint -> architecture -> cached programs and
 * weights (see sd_engine.h for the contract, docs/engine.md for the cache layout).
 *
 * Compiling is onnx2cl's job: this file only runs the onnx2cl executable (no C compiler, no
 * dlopen; the programs are .o2d descriptor files). onnx2cl reads the checkpoint itself, through
 * the same store (`--weights-from CKPT --component C [--variant V] [--lora F:S]`): it ships from
 * the same build as onnx2cl-sd.
 *
 * Platform seam: the OS calls (stat, mkdir, spawning onnx2cl, process ids) go through
 * runtime/platform.h in the helpers right below (POSIX and Windows); the rest is ISO C + rmdir.
 */
#define _POSIX_C_SOURCE 200809L
#include "sd_engine.h"
#include "json_file.h"

#include "platform.h" /* o2r_exe_path, o2r_rename_replace, o2r_spawn_wait, o2r_mkdir ... */
#include "store.h"

#include <cjson/cJSON.h>

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h> /* rmdir */

#ifndef ONNX2CL_VERSION
#define ONNX2CL_VERSION "dev"
#endif

static const char *const MODELS[7] = {"text_encoder",   "unet",           "vae_decoder", "vae_encoder",
                                      "text_encoder_2", "text_encoder_3", "transformer"};
#define N_MODELS 7
/* the text encoders (models of input_ids only) */
#define IS_TEXT(m) ((m) == 0 || (m) == 4 || (m) == 5)

/* snprintf (long paths are truncated, as the fixed PATH_MAX buffers must). */
static int fmt(char *buf, size_t cap, const char *f, ...) O2R_PRINTF(3, 4);
static int fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    return n;
}

/* ---- platform seam (runtime/platform.h) ------------------------------------------------------ */

static double now_s(void) { return o2r_now_ms() * 1e-3; }

/* size and mtime (ns) of a file; -1 if it does not exist. */
static int file_stat(const char *p, uint64_t *size, uint64_t *mtime_ns) { return o2r_file_stat(p, size, mtime_ns); }

static int is_dir(const char *p) { return o2r_path_is_dir(p); }

static int is_file(const char *p) { return o2r_path_is_file(p); }

/* mkdir -p; 0 or -1 (errno set). */
static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    fmt(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (o2r_mkdir(buf) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    if (o2r_mkdir(buf) != 0 && errno != EEXIST) return -1;
    return is_dir(buf) ? 0 : (errno = ENOTDIR, -1);
}

static int writable_dir(const char *p) { return o2r_path_writable_dir(p); }

/* Runs argv (argv[0] a path) with its stdout sent to our stderr. Returns the exit status, or -1
 * when it could not be started / was killed (message in err). */
static int run_process(char *const argv[], char *err, size_t errcap) { return o2r_spawn_wait(argv, err, errcap); }

static long self_pid(void) { return o2r_pid(); }

/* A temporary name part unique to this call: the process id (what sweep_stale reads) and a count of
 * this process's calls, so two threads of one process (the server's workers preparing the same
 * program) never write into the same temporary. */
static void tmp_tag(char *buf, size_t cap)
{
    static unsigned counter;
    unsigned n = __atomic_fetch_add(&counter, 1u, __ATOMIC_RELAXED);
    snprintf(buf, cap, "%ld-%u", self_pid(), n);
}

/* Removes the .tmp-<pid>-* folders of dir (a compile's model.o2d / model.weights) whose process
 * no longer runs (killed mid-compile). */
static void sweep_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        if (strncmp(e->d_name, ".tmp-", 5)) continue;
        long pid = strtol(e->d_name + 5, &end, 10);
        if (end == e->d_name + 5 || *end != '-' || pid <= 0 || pid == self_pid()) continue;
        if (o2r_pid_alive(pid)) continue;
        char p[PATH_MAX + 300];
        static const char *const files[] = {"model.o2d", "model.weights"};
        for (int i = 0; i < 2; i++) {
            fmt(p, sizeof p, "%s/%s/%s", dir, e->d_name, files[i]);
            remove(p);
        }
        fmt(p, sizeof p, "%s/%s", dir, e->d_name);
        rmdir(p);
    }
    closedir(d);
}

/* ---- helpers -------------------------------------------------------------------------------- */


static int fail(char *err, size_t cap, const char *fmt, ...) O2R_PRINTF(3, 4);
static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Two-lane 64-bit FNV-1a (128 bits of key). */
struct hash { uint64_t a, b; };
static void hash_init(struct hash *h) { h->a = 0xcbf29ce484222325ull; h->b = 0x84222325cbf29ce4ull; }
static void hash_add(struct hash *h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h->a = (h->a ^ c[i]) * 0x100000001b3ull;
        h->b = (h->b ^ c[i]) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
}
static void hash_str(struct hash *h, const char *s) { hash_add(h, s, strlen(s) + 1); }
static void hash_u64(struct hash *h, uint64_t v) { hash_add(h, &v, sizeof v); }
static void hash_hex(const struct hash *h, char out[33])
{
    fmt(out, 33, "%016llx%016llx", (unsigned long long)h->a, (unsigned long long)h->b);
}

static void dir_of(const char *path, char *buf, size_t cap)
{
    const char *s = strrchr(path, '/');
    if (!s) fmt(buf, cap, ".");
    else fmt(buf, cap, "%.*s", (int)(s - path) + (s == path), path);
}

int sde_cache_dir(char *buf, size_t cap)
{
    const char *e = getenv("ONNX2CL_CACHE_DIR");
    if (e && *e) return fmt(buf, cap, "%s", e), 0;
    e = getenv("XDG_CACHE_HOME");
    if (e && *e) return fmt(buf, cap, "%s/onnx2cl", e), 0;
    e = getenv("HOME");
    if (e && *e) return fmt(buf, cap, "%s/.cache/onnx2cl", e), 0;
    return -1;
}

int sde_default_arch_dir(char *buf, size_t cap)
{
    char exe[PATH_MAX], d[PATH_MAX];
    if (o2r_exe_path(exe, sizeof exe)) {
        dir_of(exe, d, sizeof d);
        fmt(buf, cap, "%s/../share/onnx2cl/arch", d);
        if (is_dir(buf)) return 0;
    }
#ifdef ONNX2CL_ARCH_INSTALL_DIR
    fmt(buf, cap, "%s", ONNX2CL_ARCH_INSTALL_DIR);
    if (is_dir(buf)) return 0;
#endif
#ifdef ONNX2CL_ARCH_SOURCE_DIR
    fmt(buf, cap, "%s", ONNX2CL_ARCH_SOURCE_DIR);
    if (is_dir(buf)) return 0;
#endif
    return -1;
}

int sde_find_compiler(char *buf, size_t cap)
{
    char exe[PATH_MAX], d[PATH_MAX];
    if (o2r_exe_path(exe, sizeof exe)) {
        dir_of(exe, d, sizeof d);
#ifdef _WIN32
        fmt(buf, cap, "%s/onnx2cl.exe", d);
#else
        fmt(buf, cap, "%s/onnx2cl", d);
#endif
        if (o2r_path_executable(buf)) return 0;
    }
#ifdef ONNX2CL_COMPILER_BUILD_PATH
    fmt(buf, cap, "%s", ONNX2CL_COMPILER_BUILD_PATH);
    if (o2r_path_executable(buf)) return 0;
#endif
    return -1;
}

/* Member `name` of object o (NULL when o is not an object or has none). */
static const cJSON *jget(const cJSON *o, const char *name)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, name) : NULL;
}

/* Number of arch.json field `name` (a number), else dflt. */
static double jnum(const cJSON *o, const char *name, double dflt)
{
    const cJSON *v = jget(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* Elements of a JSON array (0 for anything else). */
static int jlen(const cJSON *a) { return cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0; }

/* Writes text to path atomically (temporary in the same folder, renamed). */
static int write_atomic(const char *path, const char *text, char *err, size_t errcap)
{
    char tmp[PATH_MAX + 48], tag[40];
    tmp_tag(tag, sizeof tag);
    fmt(tmp, sizeof tmp, "%s.tmp-%s", path, tag);
    FILE *f = fopen(tmp, "wb");
    if (!f) return fail(err, errcap, "cannot write %s: %s", tmp, strerror(errno));
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad || o2r_rename_replace(tmp, path) != 0) {
        remove(tmp);
        return fail(err, errcap, "cannot write %s (disk full?)", path);
    }
    return 0;
}

/* JSON text of a flat value (numbers, strings, booleans, null, arrays of those). */
static void json_write(const cJSON *v, char *b, size_t cap, size_t *o)
{
#define PUT(...) (*o += (size_t)fmt(b + *o, *o < cap ? cap - *o : 0, __VA_ARGS__), *o = *o < cap ? *o : cap)
    if (cJSON_IsNull(v)) PUT("null");
    else if (cJSON_IsBool(v)) PUT("%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v)) PUT("%.17g", v->valuedouble);
    else if (cJSON_IsString(v)) PUT("\"%s\"", v->valuestring);
    else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        PUT("%c", cJSON_IsArray(v) ? '[' : '{');
        int i = 0;
        for (const cJSON *it = v->child; it; it = it->next, i++) {
            if (i) PUT(", ");
            if (cJSON_IsObject(v)) PUT("\"%s\": ", it->string);
            json_write(it, b, cap, o);
        }
        PUT("%c", cJSON_IsArray(v) ? ']' : '}');
    }
#undef PUT
}

/* ---- the engine ----------------------------------------------------------------------------- */

struct job {
    const struct sde_options *o;
    struct sde_result *r;
    struct o2s_store *s;
    const cJSON *arch;
    char compiler[PATH_MAX], cache[PATH_MAX], compiler_id[64], wkey[33], wdir[PATH_MAX];
    const char *add_file[O2S_NUM_COMPONENTS]; /* o->vae_file ... by component (sde_prepare) */
};

/* LoRA i of o: its file and the text encoder's and UNet's scales ("FILE:S" as onnx2cl's --lora
 * reads it: S after the last ':' when no '/' follows; lora_unet[i] overrides the UNet's). */
static void lora_split(const struct sde_options *o, int i, char *file, size_t cap, double *te, double *unet)
{
    fmt(file, cap, "%s", o->loras[i]);
    char *colon = strrchr(file, ':'), *e;
    *te = 1.0;
    if (colon && colon != file && !strchr(colon, '/')) {
        double v = strtod(colon + 1, &e);
        if (e != colon + 1 && !*e) *colon = 0, *te = v;
    }
    *unet = *te;
    if (o->lora_unet[i]) *unet = strtod(o->lora_unet[i], NULL);
}

static const char *component_of_model(int m)
{
    return m == 0 ? "text_encoder" : m == 1 ? "unet" : m == 4 ? "text_encoder_2" : m == 5 ? "text_encoder_3"
           : m == 6 ? "transformer" : "vae"; /* 2, 3: vae */
}

/* The --weights-from arguments of onnx2cl for model m: the checkpoint, its component, the
 * variant and the LoRAs (the UNet's scale for the UNet and the VAE, the text encoder's for it). */
static void weights_source(struct job *j, int m, char **argv, int *argc)
{
    const char *comp = component_of_model(m);
    static char lora_args[SDE_MAX_LORAS][PATH_MAX + 32];
    argv[(*argc)++] = "--weights-from";
    argv[(*argc)++] = (char *)j->o->ckpt;
    argv[(*argc)++] = "--component";
    argv[(*argc)++] = (char *)comp;
    if (j->o->variant) {
        argv[(*argc)++] = "--variant";
        argv[(*argc)++] = (char *)j->o->variant;
    }
    static char add_args[O2S_NUM_COMPONENTS][PATH_MAX + 32];
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++)
        if (j->add_file[c]) {
            fmt(add_args[c], sizeof add_args[c], "%s=%s", o2s_component_name((enum o2s_component)c), j->add_file[c]);
            argv[(*argc)++] = "--add-component";
            argv[(*argc)++] = add_args[c];
        }
    for (int i = 0; i < j->o->n_loras; i++) {
        char file[PATH_MAX];
        double te, unet;
        lora_split(j->o, i, file, sizeof file, &te, &unet);
        if (IS_TEXT(m) || !j->o->lora_unet[i]) fmt(lora_args[i], sizeof lora_args[i], "%s", j->o->loras[i]);
        else fmt(lora_args[i], sizeof lora_args[i], "%s:%s", file, j->o->lora_unet[i]); /* UNet, VAE */
        argv[(*argc)++] = "--lora";
        argv[(*argc)++] = lora_args[i];
    }
}

/* The image size model m is compiled for: w x h, or for the VAE decoder (2) and encoder (3) with
 * o->vae_tile, the tile (min(tile, side) per side). */
static void model_size(const struct sde_options *o, int m, int *w, int *h)
{
    if ((m == 2 || m == 3) && o->vae_tile > 0) {
        if (*w > o->vae_tile) *w = o->vae_tile;
        if (*h > o->vae_tile) *h = o->vae_tile;
    }
}

/* The --shape arguments of model m. */
static void shape_args(struct job *j, int m, char *buf, size_t cap, char **argv, int *argc)
{
    const cJSON *cfg = jget(j->arch, "configs");
    const cJSON *u = jget(cfg, "unet"), *v = jget(cfg, "vae");
    const cJSON *t = jget(cfg, "text_encoder"), *tok = jget(j->arch, "tokenizer");
    const cJSON *boc = jget(v, "block_out_channels");
    int f = 1 << (jlen(boc) ? jlen(boc) - 1 : 3);
    int lc = (int)jnum(u, "in_channels", 4), seq = (int)jnum(tok, "max_length", 77);
    int useq = j->o->tokens > 0 ? j->o->tokens : seq;
    int hidden = (int)jnum(t, "hidden_size", 768);
    const cJSON *t2 = jget(cfg, "text_encoder_2"); /* SDXL: the states of both encoders side by side */
    if (t2) hidden += (int)jnum(t2, "hidden_size", 1280);
    int iw = j->r->width, ih = j->r->height;
    model_size(j->o, m, &iw, &ih);
    int lh = ih / f, lw = iw / f, b = j->o->batch;
    size_t o = 0;
#define ARG(...)                                                            \
    do {                                                                    \
        argv[(*argc)++] = "--shape";                                        \
        argv[(*argc)++] = buf + o;                                          \
        o += (size_t)fmt(buf + o, cap - o, __VA_ARGS__) + 1;           \
    } while (0)
    const int flux = !strcmp(j->r->family, "flux");
    if (m == 0) ARG("input_ids=1,%d", seq);
    else if (m == 4) ARG("input_ids=1,%d", (int)jnum(jget(j->arch, "tokenizer_2"), "max_length", seq)); /* Flux: T5 */
    else if (m == 5) ARG("input_ids=1,%d", (int)jnum(jget(j->arch, "tokenizer_3"), "max_length", 256));
    else if (m == 6 && flux) { /* Flux's transformer: 2x2-packed latents, T5 states, CLIP pooled, the ids */
        const cJSON *tr = jget(cfg, "transformer");
        const int t5 = (int)jnum(jget(j->arch, "tokenizer_2"), "max_length", 512), tokens = (lh / 2) * (lw / 2);
        ARG("hidden_states=1,%d,%d", tokens, (int)jnum(tr, "in_channels", 64));
        ARG("encoder_hidden_states=1,%d,%d", t5, (int)jnum(tr, "joint_attention_dim", 4096));
        ARG("pooled_projections=1,%d", (int)jnum(tr, "pooled_projection_dim", 768));
        ARG("timestep=1");
        ARG("img_ids=%d,3", tokens);
        ARG("txt_ids=%d,3", t5);
        if (cJSON_IsTrue(jget(tr, "guidance_embeds"))) ARG("guidance=1");
    } else if (m == 6) { /* SD 3's transformer: the CLIP tokens then T5's, pooled CLIP-L + CLIP-G */
        const cJSON *tr = jget(cfg, "transformer");
        const int t5 = (int)jnum(jget(j->arch, "tokenizer_3"), "max_length", 256);
        ARG("hidden_states=%d,%d,%d,%d", b, (int)jnum(tr, "in_channels", 16), lh, lw);
        ARG("encoder_hidden_states=%d,%d,%d", b, seq + t5, (int)jnum(tr, "joint_attention_dim", 4096));
        ARG("pooled_projections=%d,%d", b, (int)jnum(tr, "pooled_projection_dim", 2048));
        ARG("timestep=%d", b);
    } else if (m == 1) {
        ARG("sample=%d,%d,%d,%d", b, lc, lh, lw);
        ARG("encoder_hidden_states=%d,%d,%d", b, useq, hidden);
        if (t2) {
            ARG("text_embeds=%d,%d", b, (int)jnum(t2, "projection_dim", 1280));
            ARG("time_ids=%d,6", b);
        }
    } else if (m == 2) ARG("latent_sample=1,%d,%d,%d", (int)jnum(v, "latent_channels", 4), lh, lw); /* not the
                                                              UNet's in_channels: 9 for an inpainting UNet */
    else ARG("sample=1,3,%d,%d", ih, iw);
#undef ARG
}

/* The shape part of model m's program folder name: tokens<S>-b1, WxH-b<B> (UNet: -t<T> appended
 * when it takes T != S text tokens). */
static void program_shape(const cJSON *arch, const struct sde_options *o, int w, int h, int m, char *shape,
                          size_t cap)
{
    int seq = (int)jnum(jget(arch, "tokenizer"), "max_length", 77);
    model_size(o, m, &w, &h);
    if (m == 0) fmt(shape, cap, "tokens%d-b1", seq);
    else if (m == 4) fmt(shape, cap, "tokens%d-b1", (int)jnum(jget(arch, "tokenizer_2"), "max_length", seq));
    else if (m == 5) fmt(shape, cap, "tokens%d-b1", (int)jnum(jget(arch, "tokenizer_3"), "max_length", 256));
    else if (m == 6) fmt(shape, cap, "%dx%d-b%d", w, h, o->batch);
    else if (m == 1 && o->tokens > 0 && o->tokens != seq) fmt(shape, cap, "%dx%d-b%d-t%d", w, h, o->batch, o->tokens);
    else fmt(shape, cap, "%dx%d-b%d", w, h, m == 1 ? o->batch : 1);
}

/* The weights file name of model m ("text_encoder-clipskip<N>" with a clip skip). */
static void weights_file(const struct sde_options *o, const char *wdir, int m, char *buf, size_t cap)
{
    if (m == 0 && o->clip_skip > 1) fmt(buf, cap, "%s/%s-clipskip%d.weights", wdir, MODELS[m], o->clip_skip);
    else fmt(buf, cap, "%s/%s.weights", wdir, MODELS[m]);
}

/* Clip skip N: writes ARCH's text_encoder.namemap with the last N - 1 layers' self_attn.out_proj
 * (weight, bias), layer_norm2 (weight, bias), mlp.fc1.bias and mlp.fc2.bias lines as scale:0 into
 * out (the cache), unless it is there. Those layers then add exactly 0 to the residual stream. */
static int clip_skip_namemap(struct job *j, char *out, size_t cap, char *err, size_t errcap)
{
    const int n = j->o->clip_skip;
    const int layers = (int)jnum(jget(jget(j->arch, "configs"), "text_encoder"), "num_hidden_layers", 0);
    fmt(out, cap, "%s/programs/%s/text_encoder-clipskip%d.namemap", j->cache, j->r->arch, n);
    if (is_file(out)) return 0;
    char src[PATH_MAX + 64], dir[PATH_MAX];
    fmt(src, sizeof src, "%s/text_encoder.namemap", j->r->arch_path);
    FILE *f = fopen(src, "rb");
    if (!f) return fail(err, errcap, "%s: %s", src, strerror(errno));
    size_t tcap = 1 << 16, len = 0;
    char *text = malloc(tcap), line[8192];
    int rc = -1, changed = 0;
    if (!text) goto oom;
    text[0] = 0;
    while (fgets(line, sizeof line, f)) {
        char keys[8192] = "", tr[256] = "";
        int zero = 0, keep = 0;
        if (line[0] != '#' && sscanf(line, "%*[^\t]\t%*[^\t]\t%8191[^\t]\t%255[^\n]", keys, tr) == 2) {
            for (char *k = keys, *next; k; k = next) {
                if ((next = strchr(k, ','))) *next++ = 0;
                int li, off = 0;
                const char *sfx;
                if (sscanf(k, "encoder.layers.%d.%n", &li, &off) == 1 && off > 0 && li >= layers - (n - 1) &&
                    (sfx = k + off, !strcmp(sfx, "self_attn.out_proj.weight") || !strcmp(sfx, "self_attn.out_proj.bias") ||
                     !strcmp(sfx, "layer_norm2.weight") || !strcmp(sfx, "layer_norm2.bias") ||
                     !strcmp(sfx, "mlp.fc1.bias") || !strcmp(sfx, "mlp.fc2.bias")))
                    zero = 1;
                else
                    keep = 1;
            }
        }
        if (zero && keep) {
            fail(err, errcap, "%s: an initializer shared by a skipped and a kept tensor (%s); --clip-skip %d "
                 "cannot be made from this architecture", src, line, n);
            goto done;
        }
        if (zero) { /* the line with its transform replaced */
            char *t = strrchr(line, '\t');
            fmt(t + 1, sizeof line - (size_t)(t + 1 - line), "scale:0\n");
            changed++;
        }
        size_t l = strlen(line);
        if (len + l + 1 > tcap) {
            char *nt = realloc(text, tcap *= 2);
            if (!nt) goto oom;
            text = nt;
        }
        memcpy(text + len, line, l + 1);
        len += l;
    }
    if (changed != 6 * (n - 1)) {
        fail(err, errcap, "%s: %d lines of the last %d layers' out_proj, layer_norm2, fc1/fc2 biases, expected %d: "
             "--clip-skip %d cannot be made from this architecture", src, changed, n - 1, 6 * (n - 1), n);
        goto done;
    }
    dir_of(out, dir, sizeof dir);
    if (mkdir_p(dir) != 0) {
        fail(err, errcap, "cache folder %s: cannot be written (%s)", dir, strerror(errno));
        goto done;
    }
    rc = write_atomic(out, text, err, errcap);
    goto done;
oom:
    fail(err, errcap, "out of memory");
done:
    fclose(f);
    free(text);
    return rc;
}

/* The tokenizer folder NAME ("tokenizer", "tokenizer_2") into out (PATH_MAX): the diffusers
 * folder's when it has NAME/vocab.json, else the architecture's. Returns 1, or 0 when neither has. */
/* The architecture's folder of tokenizer NAME into out (PATH_MAX): arch.json's NAME.dir (a path
 * relative to the architecture folder, e.g. "../sd15/tokenizer": the full-size architectures share
 * the two CLIP BPE folders instead of copies), else ARCH/NAME. */
static void arch_tokenizer_dir(const cJSON *arch, const struct sde_result *r, const char *name, char *out)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(jget(arch, name), "dir");
    if (cJSON_IsString(d) && d->valuestring[0] && d->valuestring[0] != '/')
        fmt(out, PATH_MAX, "%s/%s", r->arch_path, d->valuestring);
    else
        fmt(out, PATH_MAX, "%s/%s", r->arch_path, name);
}

/* Tokenizer NAME (vocab.json + merges.txt) into out: the checkpoint folder's, else the
 * architecture's (arch_tokenizer_dir); 0 when neither has one. */
static int find_tokenizer(const struct sde_options *o, const struct sde_result *r, const cJSON *arch,
                          const char *name, char *out)
{
    char path[PATH_MAX + 64];
    fmt(out, PATH_MAX, "%s/%s", o->ckpt, name);
    fmt(path, sizeof path, "%s/vocab.json", out);
    if (is_dir(o->ckpt) && is_file(path)) return 1;
    arch_tokenizer_dir(arch, r, name, out);
    fmt(path, sizeof path, "%s/vocab.json", out);
    return is_file(path);
}

/* The onnx2cl command line shared by every build of model m into argv (NULL-free, up to 96
 * entries with what the caller adds): the graph, its name map, the weights source, the storage and
 * the shapes (symbolic dims: --weights-only and --info need them too; shapes holds their text).
 * Returns the count. */
static int compiler_args(struct job *j, int m, char *graph, char *nmap, char *shapes, size_t cap, char **argv)
{
    int argc = 0;
    argv[argc++] = j->compiler;
    argv[argc++] = graph;
    argv[argc++] = "--name-map";
    argv[argc++] = nmap;
    weights_source(j, m, argv, &argc);
    argv[argc++] = "--weights-dtype";
    argv[argc++] = (char *)sde_weights_dtype(j->o);
    shape_args(j, m, shapes, cap, argv, &argc);
    return argc;
}

/* Makes sure program and weights of model m are in the cache. */
static int prepare_model(struct job *j, int m, char *err, size_t errcap)
{
    const char *name = MODELS[m];
    char pdir[PATH_MAX], shape[64];
    program_shape(j->arch, j->o, j->r->width, j->r->height, m, shape, sizeof shape);
    fmt(pdir, sizeof pdir, "%s/programs/%s/%s/%s-any-%s-%s", j->cache, j->r->arch, name, shape,
        sde_weights_dtype(j->o), j->compiler_id);
    fmt(j->r->program[m], PATH_MAX, "%s/model.o2d", pdir);
    weights_file(j->o, j->wdir, m, j->r->weights[m], PATH_MAX);
    int have_p = is_file(j->r->program[m]), have_w = is_file(j->r->weights[m]), damaged = 0;
    if (have_w) { /* a damaged cache entry (a truncated or changed file) is converted again, not trusted */
        char why[1024];
        if (o2r_weights_verify(j->r->weights[m], why, sizeof why) != O2R_OK) {
            fprintf(stderr, "onnx2cl-sd: %s; converting the %s weights again\n", why, name);
            if (remove(j->r->weights[m]) != 0 && is_file(j->r->weights[m]))
                return fail(err, errcap, "cached weights %s: damaged and cannot be removed (%s)", j->r->weights[m],
                            strerror(errno));
            have_w = 0, damaged = 1;
        }
    }
    if (have_p && have_w) return 0;
    char graph[PATH_MAX + 64], nmap[PATH_MAX + 64], shapes[512], tmpdir[PATH_MAX + 64], out[PATH_MAX + 80];
    fmt(graph, sizeof graph, "%s/%s.onnx", j->r->arch_path, name);
    fmt(nmap, sizeof nmap, "%s/%s.namemap", j->r->arch_path, name);
    if (m == 0 && j->o->clip_skip > 1 && clip_skip_namemap(j, nmap, sizeof nmap, err, errcap)) return -1;
    char parent[PATH_MAX];
    dir_of(pdir, parent, sizeof parent);
    if (mkdir_p(parent) != 0 || !writable_dir(parent))
        return fail(err, errcap, "cache folder %s: cannot be written (%s); set ONNX2CL_CACHE_DIR to a writable "
                    "folder", parent, strerror(errno ? errno : EACCES));
    char *argv[96];
    int argc = compiler_args(j, m, graph, nmap, shapes, sizeof shapes, argv);
    double t0 = now_s();
    if (!have_p) { /* program (and its weights file, kept when the cache has none) */
        sweep_stale(parent);
        char tag[40];
        tmp_tag(tag, sizeof tag);
        fmt(tmpdir, sizeof tmpdir, "%s/.tmp-%s-%s", parent, tag, strrchr(pdir, '/') + 1);
        if (mkdir_p(tmpdir) != 0) return fail(err, errcap, "cache folder %s: cannot be written (%s)", parent, strerror(errno));
        fmt(out, sizeof out, "%s/model.o2d", tmpdir);
        argv[argc++] = "--name"; /* the runtime's messages say "model 'unet'", not the file's "model" */
        argv[argc++] = (char *)name;
        if (have_w) { /* another size (or kernel class) of converted weights: the program alone, no weight
                         read or written (onnx2cl checks that the file's layout is this build's) */
            argv[argc++] = "--reuse-weights";
            argv[argc++] = j->r->weights[m];
        }
        argv[argc++] = "-o";
        argv[argc++] = out;
        argv[argc] = NULL;
        if (!j->o->quiet)
            fprintf(stderr, "onnx2cl-sd: compiling %s for %s (first use) ...\n", name,
                    m == 0 ? "any size" : shape);
        int rc = run_process(argv, err, errcap);
        char wtmp[PATH_MAX + 96];
        fmt(wtmp, sizeof wtmp, "%s/model.weights", tmpdir);
        if (rc == 0 && !have_w && o2r_rename_replace(wtmp, j->r->weights[m]) != 0) rc = -2;
        remove(wtmp);
        if (rc == 0 && rename(tmpdir, pdir) != 0 && !is_file(j->r->program[m])) rc = -2;
        if (rc != 0) {
            remove(out);
            rmdir(tmpdir);
            if (rc == -2) return fail(err, errcap, "cache folder %s: cannot be written (disk full?)", parent);
            if (rc > 0)
                return fail(err, errcap, "compiling %s (%s) failed: onnx2cl exited %d (its message is above)",
                            graph, j->o->ckpt, rc);
            return -1;
        }
        remove(out); /* lost a race: another process renamed its copy first */
        rmdir(tmpdir);
        j->r->compiled++;
        if (!have_w) j->r->converted++;
        if (!j->o->quiet)
            fprintf(stderr, "onnx2cl-sd: compiled %s in %.1f s into %s\n", name, now_s() - t0, pdir);
        return 0;
    }
    /* program cached, weights not: the weights file alone */
    char wtag[40];
    tmp_tag(wtag, sizeof wtag);
    fmt(out, sizeof out, "%s/.tmp-%s-%s.weights", j->wdir, wtag, name);
    argv[argc++] = "--weights-only";
    argv[argc++] = "-o";
    argv[argc++] = out;
    argv[argc] = NULL;
    if (!j->o->quiet)
        fprintf(stderr, "onnx2cl-sd: converting %s weights (%s) ...\n", name,
                damaged ? "again" : "first use of this checkpoint");
    int rc = run_process(argv, err, errcap);
    if (rc == 0 && o2r_rename_replace(out, j->r->weights[m]) != 0) rc = -2;
    if (rc != 0) {
        remove(out);
        if (rc == -2) return fail(err, errcap, "cache folder %s: cannot be written (disk full?)", j->wdir);
        if (rc > 0) return fail(err, errcap, "converting %s weights of %s failed: onnx2cl exited %d", name, j->o->ckpt, rc);
        return -1;
    }
    j->r->converted++;
    if (!j->o->quiet) fprintf(stderr, "onnx2cl-sd: converted %s weights in %.1f s\n", name, now_s() - t0);
    return 0;
}

/* sde_options.info: onnx2cl --info --stats-json for each model of `wanted` (bit m: MODELS[m]) with the
 * run's shapes, weights source and storage (nothing converted or compiled: the graph is planned, no weight
 * read), then one table on j->o->info. The caller sets the run's batch (onnx2cl-sd: Flux 1, SD 3 2 with
 * guidance), as for the run itself. */
static int print_info(struct job *j, unsigned wanted, char *err, size_t errcap)
{
    FILE *f = j->o->info;
    double tw = 0, ta = 0, tp = 0, todo = 0, text_p = 0, stage_p = 0; /* stage_p: the largest --offload stage */
    /* onnx2cl writes each model's figures into a scratch file of the cache folder (then removed) */
    if (mkdir_p(j->cache) != 0 || !writable_dir(j->cache))
        return fail(err, errcap, "cache folder %s: cannot be written (%s); set ONNX2CL_CACHE_DIR to a writable folder",
                    j->cache, strerror(errno ? errno : EACCES));
    fprintf(f, "%s: architecture %s (family %s), %dx%d, weights stored as %s (what onnx2cl --info plans)\n",
            j->o->ckpt, j->r->arch, j->r->family, j->r->width, j->r->height, sde_weights_dtype(j->o));
    fprintf(f, "%-16s %-22s %12s %16s %16s %9s\n", "model", "compiled for", "weights MiB", "activations MiB",
            "device peak MiB", "launches");
    for (int m = 0; m < N_MODELS; m++) {
        if (!(wanted & 1u << m)) continue;
        char graph[PATH_MAX + 64], nmap[PATH_MAX + 64], shapes[512], json[PATH_MAX + 96], shape[64];
        fmt(graph, sizeof graph, "%s/%s.onnx", j->r->arch_path, MODELS[m]);
        fmt(nmap, sizeof nmap, "%s/%s.namemap", j->r->arch_path, MODELS[m]);
        char tag[40];
        tmp_tag(tag, sizeof tag);
        fmt(json, sizeof json, "%s/.tmp-%s-info-%s.json", j->cache, tag, MODELS[m]);
        program_shape(j->arch, j->o, j->r->width, j->r->height, m, shape, sizeof shape);
        char *argv[96];
        int argc = compiler_args(j, m, graph, nmap, shapes, sizeof shapes, argv);
        argv[argc++] = "--info";
        argv[argc++] = "--stats-json";
        argv[argc++] = json;
        argv[argc] = NULL;
        int rc = run_process(argv, err, errcap);
        if (rc != 0) {
            remove(json);
            return rc > 0 ? fail(err, errcap, "onnx2cl --info on %s (%s) failed: exit %d (its message is above)", graph,
                                 j->o->ckpt, rc)
                          : -1;
        }
        cJSON *st = sdp_json_file(json, err, errcap);
        remove(json);
        if (!st) return -1;
        const double w = jnum(st, "weights_bytes", 0) / 1048576.0, a = jnum(st, "arena_bytes", 0) / 1048576.0,
                     p = jnum(st, "device_bytes_peak", 0) / 1048576.0;
        fprintf(f, "%-16s %-22s %12.1f %16.1f %16.1f %9.0f\n", MODELS[m], shape, w, a, p,
                jnum(st, "kernel_launches", 0));
        cJSON_Delete(st);
        char wf[PATH_MAX];
        weights_file(j->o, j->wdir, m, wf, sizeof wf);
        tw += w, ta += a, tp += p, todo += is_file(wf) ? 0 : w;
        if (IS_TEXT(m)) text_p += p; /* the text encoders run together, the other models one at a time */
        else if (p > stage_p) stage_p = p;
    }
    if (text_p > stage_p) stage_p = text_p;
    fprintf(f, "%-16s %-22s %12.1f %16.1f %16.1f\n", "all", "", tw, ta, tp);
    if (j->o->offload)
        fprintf(f, "With --offload each stage's models are on the device only while it runs (text encoders; VAE "
                   "encoder; %s; VAE decoder): the device needs about the largest stage (%.1f MiB of the %.1f "
                   "MiB sum; the CPU device: host memory). ", strcmp(j->r->family, "sd3") && strcmp(j->r->family, "flux") ?
                   "UNet" : "transformer", stage_p, tp);
    else
        fprintf(f, "onnx2cl-sd and serve keep every model loaded: the device needs about the sum (%.0f MiB; the "
                   "CPU device: host memory; --offload: about the largest stage, %.1f MiB). ", tp, stage_p);
    fprintf(f, "The weights files are mapped, not copied, on the CPU device. ");
    if (todo > 0)
        fprintf(f, "The first run converts the weights into the cache: %.0f MiB to write.\n", todo);
    else
        fprintf(f, "The converted weights are in the cache already.\n");
    return 0;
}

/* Compiler identity: version + size and mtime of the executable (a rebuilt onnx2cl is another). */
static void compiler_identity(struct job *j)
{
    uint64_t sz = 0, mt = 0;
    file_stat(j->compiler, &sz, &mt);
    struct hash h;
    hash_init(&h);
    hash_u64(&h, sz);
    hash_u64(&h, mt);
    char hx[33];
    hash_hex(&h, hx);
    fmt(j->compiler_id, sizeof j->compiler_id, "%s-%.8s", ONNX2CL_VERSION, hx);
}

/* Weights key: the checkpoint's canonical keys, dtypes, dims, the sizes and mtimes of its files,
 * the LoRA set, the storage dtype and the compiler. */
static void weights_key(struct job *j)
{
    struct hash h;
    hash_init(&h);
    const char *last_file = "";
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++)
        for (size_t i = 0, n = o2s_count(j->s, (enum o2s_component)c); i < n; i++) {
            struct o2s_view v;
            o2s_get(j->s, (enum o2s_component)c, i, &v);
            hash_u64(&h, (uint64_t)c);
            hash_str(&h, v.key);
            hash_u64(&h, (uint64_t)v.dtype);
            hash_add(&h, v.dims, (size_t)v.rank * sizeof *v.dims);
            if (strcmp(v.file, last_file)) { /* the file's size and mtime, not its path */
                uint64_t sz = 0, mt = 0;
                file_stat(v.file, &sz, &mt);
                hash_u64(&h, sz);
                hash_u64(&h, mt);
                last_file = v.file;
            }
        }
    for (int i = 0; i < j->o->n_loras; i++) { /* in order (the merge adds in order); scales as numbers */
        char f[PATH_MAX];
        double te, unet;
        lora_split(j->o, i, f, sizeof f, &te, &unet);
        uint64_t sz = 0, mt = 0;
        file_stat(f, &sz, &mt);
        hash_str(&h, "lora");
        hash_u64(&h, sz);
        hash_u64(&h, mt);
        hash_add(&h, &te, sizeof te);
        hash_add(&h, &unet, sizeof unet);
    }
    hash_str(&h, sde_weights_dtype(j->o));
    hash_str(&h, j->compiler_id);
    hash_hex(&h, j->wkey);
}

/* The scheduler config: the folder's own, else arch.json's "scheduler" as a diffusers config with
 * arch.json's "prediction_type" added (onnx2cl-sd's --prediction-type overrides either). */
static int scheduler_config(struct job *j, char *err, size_t errcap)
{
    fmt(j->r->sched_cfg, PATH_MAX, "%s/scheduler/scheduler_config.json", j->o->ckpt);
    if (is_dir(j->o->ckpt) && is_file(j->r->sched_cfg)) return 0;
    static const char *const classes[][2] = {
        {"pndm", "PNDMScheduler"}, {"euler", "EulerDiscreteScheduler"}, {"euler_a", "EulerAncestralDiscreteScheduler"},
        {"dpmpp_2m", "DPMSolverMultistepScheduler"}, {"ddim", "DDIMScheduler"}, {"lcm", "LCMScheduler"}};
    const cJSON *sc = jget(j->arch, "scheduler");
    if (!cJSON_IsObject(sc))
        return fail(err, errcap, "%s/arch.json: no \"scheduler\" object", j->r->arch_path);
    char text[8192];
    size_t o = 0;
    o += (size_t)fmt(text, sizeof text, "{");
    int i = 0;
    for (const cJSON *it = sc->child; it && o < sizeof text; it = it->next, i++) {
        if (strcmp(it->string, "kind") == 0) {
            const char *cls = NULL;
            for (size_t k = 0; k < sizeof classes / sizeof *classes; k++)
                if (cJSON_IsString(it) && strcmp(it->valuestring, classes[k][0]) == 0) cls = classes[k][1];
            if (cls) o += (size_t)fmt(text + o, sizeof text - o, "%s\"_class_name\": \"%s\"", i ? ", " : "", cls);
            continue;
        }
        o += (size_t)fmt(text + o, sizeof text - o, "%s\"%s\": ", o > 1 ? ", " : "", it->string);
        json_write(it, text, sizeof text, &o);
    }
    /* the architecture's prediction type (SD 2.x: v_prediction, as diffusers' from_single_file
     * assumes for a "v2" file without a config) unless the scheduler object names one */
    const cJSON *pt = jget(j->arch, "prediction_type");
    if (cJSON_IsString(pt) && !jget(sc, "prediction_type") && o < sizeof text) {
        o += (size_t)fmt(text + o, sizeof text - o, "%s\"prediction_type\": ", o > 1 ? ", " : "");
        json_write(pt, text, sizeof text, &o);
    }
    if (o >= sizeof text - 4) return fail(err, errcap, "%s/arch.json: \"scheduler\" too long", j->r->arch_path);
    fmt(text + o, sizeof text - o, "}\n");
    fmt(j->r->sched_cfg, PATH_MAX, "%s/programs/%s/scheduler_config.json", j->cache, j->r->arch);
    if (j->o->info) return 0; /* --info writes nothing into the cache */
    /* written when absent or different (the arch folder changed) */
    FILE *f = fopen(j->r->sched_cfg, "rb");
    char old[8192];
    size_t n = f ? fread(old, 1, sizeof old - 1, f) : 0;
    if (f) fclose(f);
    old[n] = 0;
    if (f && strcmp(old, text) == 0) return 0;
    char parent[PATH_MAX];
    dir_of(j->r->sched_cfg, parent, sizeof parent);
    if (mkdir_p(parent) != 0 || !writable_dir(parent))
        return fail(err, errcap, "cache folder %s: cannot be written (%s); set ONNX2CL_CACHE_DIR to a writable "
                    "folder", parent, strerror(errno ? errno : EACCES));
    return write_atomic(j->r->sched_cfg, text, err, errcap);
}

int sde_prepare(const struct sde_options *o, struct sde_result *r, char *err, size_t errcap)
{
    double t0 = now_s();
    memset(r, 0, sizeof *r);
    struct job j = {.o = o, .r = r};
    cJSON *arch = NULL;
    int rc = -1;
    char arch_dir[PATH_MAX];
    if (!o->ckpt) return fail(err, errcap, "no checkpoint given");
    if (!is_file(o->ckpt) && !is_dir(o->ckpt))
        return fail(err, errcap, "-m %s: no such file or folder", o->ckpt);
    if (o->arch_dir) fmt(arch_dir, sizeof arch_dir, "%s", o->arch_dir);
    else if (sde_default_arch_dir(arch_dir, sizeof arch_dir))
        return fail(err, errcap, "no architecture folder found (installed share/onnx2cl/arch); give --arch-dir DIR");
    if (o->cache_dir) fmt(j.cache, sizeof j.cache, "%s", o->cache_dir);
    else if (sde_cache_dir(j.cache, sizeof j.cache))
        return fail(err, errcap, "no cache folder: set ONNX2CL_CACHE_DIR (or HOME)");
    if (o->compiler) fmt(j.compiler, sizeof j.compiler, "%s", o->compiler);
    else if (sde_find_compiler(j.compiler, sizeof j.compiler))
        return fail(err, errcap, "the onnx2cl executable is not next to onnx2cl-sd (nor in the build tree)");
    struct o2s_options so = {.variant = o->variant};
    j.s = o2s_open(o->ckpt, &so, err, errcap);
    if (!j.s) return -1;
    /* the family from the keys (the transformer decides it; component files do not change it) */
    struct o2s_arch fa;
    char ferr[256];
    const int fam_ok = o2s_detect_arch(j.s, &fa, ferr, sizeof ferr) == 0;
    const int key_flux = fam_ok && !strcmp(fa.family, "flux"), key_flow = key_flux || (fam_ok && !strcmp(fa.family, "sd3"));
    if (o->vae_file || o->clip_l_file || o->clip_g_file || o->t5xxl_file) {
        if (key_flux && o->clip_g_file) {
            fail(err, errcap, "--clip-g %s: Flux has no CLIP-G text encoder (CLIP-L and T5-XXL)", o->clip_g_file);
            rc = -2;
            goto out;
        }
        const struct { const char *flag, *file; enum o2s_component c; int t5; } add[] = {
            {"--vae", o->vae_file, O2S_VAE, -1},
            {"--clip-l", o->clip_l_file, O2S_TEXT_ENCODER, 0},
            {"--clip-g", o->clip_g_file, O2S_TEXT_ENCODER_2, 0},
            {"--t5xxl", o->t5xxl_file, key_flux ? O2S_TEXT_ENCODER_2 : O2S_TEXT_ENCODER_3, 1},
        };
        for (size_t k = 0; k < sizeof add / sizeof add[0]; k++) {
            if (!add[k].file) continue;
            if (!is_file(add[k].file)) {
                fail(err, errcap, "%s %s: %s", add[k].flag, add[k].file,
                     is_dir(add[k].file) ? "a folder, not a .safetensors file" : "no such file");
                rc = -2;
                goto out;
            }
            char e[2048];
            if (o2s_add_component_file(j.s, add[k].c, add[k].file, e, sizeof e)) {
                fail(err, errcap, "%s %s: %s", add[k].flag, add[k].file, e);
                goto out;
            }
            /* a text encoder of the other kind (the files are easily swapped): T5 has shared.weight, CLIP its
             * token embedding */
            const int is_t5 = o2s_find(j.s, add[k].c, "shared.weight", NULL) == 0;
            const int is_clip = o2s_find(j.s, add[k].c, "embeddings.token_embedding.weight", NULL) == 0;
            if (add[k].t5 >= 0 && (add[k].t5 ? !is_t5 : !is_clip)) {
                fail(err, errcap, "%s %s: not a %s text encoder (%s)", add[k].flag, add[k].file,
                     add[k].t5 ? "T5" : "CLIP", is_t5 ? "a T5 encoder: give it as --t5xxl"
                                               : is_clip ? "a CLIP encoder: give it as --clip-l or --clip-g"
                                                         : "neither CLIP's embeddings.token_embedding nor T5's shared.weight");
                goto out;
            }
            j.add_file[add[k].c] = add[k].file;
        }
    }
    { /* an SD 3 / Flux file without its VAE or text encoders (Black Forest Labs' flux1-*.safetensors,
       * SAI's sd3.5_large.safetensors): say what is missing rather than the closest architecture */
        if (key_flow) {
            const int flux = key_flux;
            const struct { enum o2s_component c; const char *what, *flag, *file; } need[] = {
                {O2S_VAE, "vae (16-channel VAE)", "--vae F", "ae.safetensors"},
                {O2S_TEXT_ENCODER, "text_encoder (CLIP-L)", "--clip-l F", "clip_l.safetensors"},
                {O2S_TEXT_ENCODER_2, flux ? "text_encoder_2 (T5-XXL)" : "text_encoder_2 (CLIP-G)",
                 flux ? "--t5xxl F" : "--clip-g F", flux ? "t5xxl_fp16.safetensors" : "clip_g.safetensors"},
            };
            char miss[256] = "", flags[128] = "", files[160] = "";
            size_t n = 0, nf = 0, ne = 0;
            for (size_t k = 0; k < sizeof need / sizeof need[0]; k++)
                if (!o2s_count(j.s, need[k].c) && n < sizeof miss && nf < sizeof flags && ne < sizeof files) {
                    n += (size_t)snprintf(miss + n, sizeof miss - n, "%s%s", n ? ", " : "", need[k].what);
                    nf += (size_t)snprintf(flags + nf, sizeof flags - nf, "%s%s", nf ? ", " : "", need[k].flag);
                    ne += (size_t)snprintf(files + ne, sizeof files - ne, "%s%s", ne ? ", " : "", need[k].file);
                }
            if (n) { /* only the flags of what is missing (SD 3's T5 is optional: --t5xxl F or --no-t5) */
                fail(err, errcap, "-m %s: holds the %s transformer without %s; add %s with %s%s (e.g. %s), or give "
                     "a diffusers folder or an all-in-one checkpoint (model.diffusion_model.*, first_stage_model.*, "
                     "text_encoders.*)", o->ckpt, flux ? "Flux" : "SD 3", miss, strchr(miss, ',') ? "them" : "it",
                     flags, flux || o2s_count(j.s, O2S_TEXT_ENCODER_3) ? "" : " (and T5-XXL with --t5xxl F, or --no-t5)",
                     files);
                goto out;
            }
        }
    }
    struct o2s_arch_match am;
    if (o2s_match_arch_dir(j.s, arch_dir, &am, err, errcap)) goto out;
    fmt(r->arch, sizeof r->arch, "%s", am.name);
    fmt(r->arch_path, sizeof r->arch_path, "%s", am.dir);
    char path[PATH_MAX + 32];
    fmt(path, sizeof path, "%s/arch.json", am.dir);
    if (!(arch = sdp_json_file(path, err, errcap))) goto out;
    j.arch = arch;
    { /* families this engine runs (issue 23: the SDXL refiner, SD3 and Flux are to come; the store reads them) */
        const char *fam = cJSON_GetStringValue(jget(arch, "family"));
        fmt(r->family, sizeof r->family, "%s", fam ? fam : "sd1");
        if (fam && !strcmp(fam, "taesd")) { /* a TAESD decoder (sd_preview.c), not a checkpoint */
            fail(err, errcap, "-m %s: a TAESD decoder (architecture %s), not a checkpoint: give it as --taesd %s with "
                 "-m CHECKPOINT", o->ckpt, am.name, o->ckpt);
            rc = -2;
            goto out;
        }
        if (fam && strcmp(fam, "sd1") != 0 && strcmp(fam, "sd2") != 0 && strcmp(fam, "sdxl") != 0 &&
            strcmp(fam, "sd3") != 0 && strcmp(fam, "flux") != 0) {
            fail(err, errcap, "architecture %s (family %s): the %s pipeline is not in onnx2cl-sd yet; "
                 "onnx2cl-ckpt info reads it", am.name, fam,
                 !strcmp(fam, "sdxl") ? "SDXL" : !strcmp(fam, "sdxl_refiner") ? "SDXL refiner" : fam);
            goto out;
        }
    }
    if (o->clip_skip > 1) { /* A1111's Clip skip: SD 1.x's CLIP-L (its SD 2.x embedder ignores the option) */
        const char *fam = cJSON_GetStringValue(jget(arch, "family"));
        int layers = (int)jnum(jget(jget(arch, "configs"), "text_encoder"), "num_hidden_layers", 0);
        if (!fam || strcmp(fam, "sd1")) {
            fail(err, errcap, "--clip-skip %d: architecture %s (family %s): clip skip applies to SD 1.x's CLIP text "
                 "encoder (A1111 ignores it for SD 2.x and SDXL, whose text encoders already end at the penultimate "
                 "layer)",
                 o->clip_skip, am.name, fam ? fam : "?");
            rc = -2;
            goto out;
        }
        if (o->clip_skip > layers) {
            fail(err, errcap, "--clip-skip %d: the text encoder of %s has %d layers", o->clip_skip, am.name, layers);
            rc = -2;
            goto out;
        }
    }
    for (int i = 0; i < o->n_loras; i++) { /* each LoRA fits the checkpoint (before any compile: the store's message) */
        char f[PATH_MAX], e[1536];
        double te, unet;
        lora_split(o, i, f, sizeof f, &te, &unet);
        if (!is_file(f)) {
            fail(err, errcap, "LoRA %s: %s", f, is_dir(f) ? "a folder, not a .safetensors file" : "no such file");
            rc = -2;
            goto out;
        }
        struct o2s_lora *l = o2s_lora_open(f, j.s, e, sizeof e);
        if (!l) {
            fail(err, errcap, "LoRA %s does not fit checkpoint %s (architecture %s): %s", f, o->ckpt, am.name, e);
            rc = -2;
            goto out;
        }
        o2s_lora_close(l);
    }
    const cJSON *ds = jget(arch, "default_size");
    r->width = o->width ? o->width : jlen(ds) == 2 ? (int)cJSON_GetArrayItem(ds, 0)->valuedouble : 512;
    r->height = o->height ? o->height : jlen(ds) == 2 ? (int)cJSON_GetArrayItem(ds, 1)->valuedouble : 512;
    {
        const cJSON *v = jget(jget(arch, "configs"), "vae");
        const cJSON *boc = jget(v, "block_out_channels");
        int f = 1 << (jlen(boc) ? jlen(boc) - 1 : 3);
        /* the UNet halves the latents once per down block but the last and its up blocks double them
         * back with a fixed factor 2 (the exported graphs have no upsample-to-size): latents must be
         * multiples of 2^(down blocks - 1), else a skip connection's Concat does not fit */
        const cJSON *dbt = jget(jget(jget(arch, "configs"), "unet"), "down_block_types");
        const cJSON *tr = jget(jget(arch, "configs"), "transformer"); /* SD 3: 2x2 patches; Flux: 2x2 packing */
        int u = !strcmp(r->family, "flux") ? 2 : tr ? (int)jnum(tr, "patch_size", 2) : 1 << (jlen(dbt) > 1 ? jlen(dbt) - 1 : 0);
        int fu = f * u;
        if (r->width % fu || r->height % fu || r->width < fu || r->height < fu) {
            fail(err, errcap, "--width %d --height %d: architecture %s needs multiples of %d (its VAE's factor %d times "
                 "its %s %d)", r->width, r->height, r->arch, fu, f,
                 !strcmp(r->family, "flux") ? "latent packing's" : tr ? "transformer's patch" : "UNet's", u);
            rc = -2;
            goto out;
        }
        const int pmax = tr ? (int)jnum(tr, "pos_embed_max_size", 0) : 0; /* SD 3's position table */
        if (pmax > 0 && (r->width / fu > pmax || r->height / fu > pmax)) {
            fail(err, errcap, "--width %d --height %d: architecture %s makes at most %dx%d (its transformer's "
                 "pos_embed_max_size %d patches of %d pixels)", r->width, r->height, r->arch, pmax * fu, pmax * fu,
                 pmax, fu);
            rc = -2;
            goto out;
        }
        if (o->vae_tile && (o->vae_tile % f || o->vae_tile < 4 * f)) {
            fail(err, errcap, "--vae-tile %d: architecture %s needs a multiple of its VAE factor %d, at least %d",
                 o->vae_tile, r->arch, f, 4 * f);
            rc = -2;
            goto out;
        }
        r->vae_tiled = o->vae_tile > 0 && (o->vae_tile < r->width || o->vae_tile < r->height);
    }
    r->scaling_factor = jnum(arch, "vae_scaling_factor", 0.18215);
    r->shift_factor = jnum(arch, "vae_shift_factor", 0);
    r->t5_tokens = !strcmp(r->family, "flux") ? (int)jnum(jget(arch, "tokenizer_2"), "max_length", 512)
                                              : (int)jnum(jget(arch, "tokenizer_3"), "max_length", 256);
    if (!o->quiet)
        fprintf(stderr, "onnx2cl-sd: %s: architecture %s (%s/arch.json: %zu keys and dims equal)\n", o->ckpt,
                r->arch, am.dir, am.keys);
    compiler_identity(&j);
    weights_key(&j);
    fmt(j.wdir, sizeof j.wdir, "%s/weights/%s", j.cache, j.wkey);
    const int xl = !strcmp(r->family, "sdxl"), sd3 = !strcmp(r->family, "sd3"), flux = !strcmp(r->family, "flux");
    const int t5 = sd3 && !o->no_t5 && o2s_count(j.s, O2S_TEXT_ENCODER_3) > 0; /* SD 3 without T5: zeros */
    int need = 0;
#define MODEL_WANTED(m)                                                                                  \
    (sd3 || flux ? (m) == 0 || (m) == 2 || (m) == 4 || (t5 && (m) == 5) || (m) == 6 || ((m) == 3 && o->vae_encoder) \
                 : (m) < 3 || ((m) == 3 && o->vae_encoder) || ((m) == 4 && xl))
    for (int m = 0; m < N_MODELS; m++) { /* anything to build? (the paths are set by prepare_model) */
        if (!MODEL_WANTED(m)) continue;
        char p[PATH_MAX + 256], shape[64];
        program_shape(arch, o, r->width, r->height, m, shape, sizeof shape);
        fmt(p, sizeof p, "%s/programs/%s/%s/%s-any-%s-%s/model.o2d", j.cache, r->arch, MODELS[m], shape,
            sde_weights_dtype(o), j.compiler_id);
        char w[PATH_MAX + 64];
        weights_file(o, j.wdir, m, w, sizeof w);
        need |= !is_file(p) || !is_file(w);
    }
    unsigned wanted = 0; /* --info's models (printed last: every check below first) */
    for (int m = 0; m < N_MODELS; m++) wanted |= MODEL_WANTED(m) ? 1u << m : 0u;
    if (o->plan_only || o->info) { /* the paths only */
        for (int m = 0; m < N_MODELS; m++) {
            if (!MODEL_WANTED(m)) continue;
            char shape[64];
            program_shape(arch, o, r->width, r->height, m, shape, sizeof shape);
            fmt(r->program[m], PATH_MAX, "%s/programs/%s/%s/%s-any-%s-%s/model.o2d", j.cache, r->arch, MODELS[m],
                shape, sde_weights_dtype(o), j.compiler_id);
            weights_file(o, j.wdir, m, r->weights[m], PATH_MAX);
        }
        need = 0;
    }
    if (need) {
        if (mkdir_p(j.wdir) != 0 || !writable_dir(j.wdir)) {
            fail(err, errcap, "cache folder %s: cannot be written (%s); set ONNX2CL_CACHE_DIR to a writable folder",
                 j.wdir, strerror(errno ? errno : EACCES));
            goto out;
        }
    }
    for (int m = 0; m < N_MODELS && !o->plan_only && !o->info; m++)
        if (MODEL_WANTED(m) && prepare_model(&j, m, err, errcap)) goto out;
#undef MODEL_WANTED
    if (r->converted) { /* what the weights were made from, for people looking at the cache */
        char text[PATH_MAX * 2], p[PATH_MAX + 32];
        size_t n = (size_t)fmt(text, sizeof text, "checkpoint\t%s\narchitecture\t%s\ncompiler\t%s\n", o->ckpt,
                                    r->arch, j.compiler_id);
        for (int i = 0; i < o->n_loras && n < sizeof text; i++)
            n += (size_t)fmt(text + n, sizeof text - n, "lora\t%s%s%s\n", o->loras[i],
                             o->lora_unet[i] ? "\tunet " : "", o->lora_unet[i] ? o->lora_unet[i] : "");
        fmt(p, sizeof p, "%s/source.txt", j.wdir);
        if (write_atomic(p, text, err, errcap)) goto out;
    }
    /* tokenizer, scheduler, VAE config */
    if (!find_tokenizer(o, r, j.arch, "tokenizer", r->tokenizer)) r->tokenizer[0] = 0; /* none: the caller may have --tokenizer */
    r->tokenizer2[0] = r->tokenizer3[0] = 0;
    if (o->t5_tokenizer && !sd3 && !flux) {
        fail(err, errcap, "--t5-tokenizer %s: architecture %s (family %s) has no T5 text encoder", o->t5_tokenizer,
             r->arch, r->family);
        rc = -2;
        goto out;
    }
    if (flux || t5) { /* T5's SentencePiece model (not when SD 3 runs without T5): the folder's tokenizer_3 (Flux:
                         _2)/spiece.model, else --t5-tokenizer's, else the architecture's */
        char sp[PATH_MAX + 32];
        const char *tn = flux ? "tokenizer_2" : "tokenizer_3";
        fmt(r->tokenizer3, PATH_MAX, "%s/%s", o->ckpt, tn);
        fmt(sp, sizeof sp, "%s/spiece.model", r->tokenizer3);
        if (is_dir(o->ckpt) && is_file(sp)) {
            /* the checkpoint folder's own */
        } else if (o->t5_tokenizer) { /* a spiece.model file, its folder, or a diffusers download holding one */
            const char *t = o->t5_tokenizer;
            if (is_dir(t)) {
                const char *const sub[] = {"", tn, "tokenizer_3", "tokenizer_2"};
                for (size_t k = 0; k < sizeof sub / sizeof *sub; k++) {
                    fmt(r->tokenizer3, PATH_MAX, "%s%s%s", t, sub[k][0] ? "/" : "", sub[k]);
                    fmt(sp, sizeof sp, "%s/spiece.model", r->tokenizer3);
                    if (is_file(sp)) break;
                }
                if (!is_file(sp)) {
                    fail(err, errcap, "--t5-tokenizer %s: no spiece.model in this folder (nor in its %s/)", t, tn);
                    rc = -2;
                    goto out;
                }
            } else {
                const char *slash = strrchr(t, '/');
                if (!is_file(t)) {
                    fail(err, errcap, "--t5-tokenizer %s: no such file or folder", t);
                    rc = -2;
                    goto out;
                }
                if (strcmp(slash ? slash + 1 : t, "spiece.model") != 0) {
                    fail(err, errcap, "--t5-tokenizer %s: expected a file named spiece.model (T5's SentencePiece "
                         "model, as diffusers folders name it) or a folder holding one", t);
                    rc = -2;
                    goto out;
                }
                fmt(r->tokenizer3, PATH_MAX, "%.*s", slash ? (int)(slash - t) : 1, slash ? t : ".");
            }
        } else {
            arch_tokenizer_dir(j.arch, r, tn, r->tokenizer3);
            fmt(sp, sizeof sp, "%s/spiece.model", r->tokenizer3);
            if (!is_file(sp) && !o->info) { /* --info tokenizes nothing */
                fail(err, errcap, "%s: a%s checkpoint needs T5's SentencePiece model (spiece.model, in a diffusers "
                     "folder's %s/): neither the checkpoint nor the architecture %s has one; give "
                     "--t5-tokenizer PATH/spiece.model (any SD 3 / Flux diffusers download has it) or copy it "
                     "into %s/%s/%s", o->ckpt, flux ? " Flux" : "n SD 3", tn, r->arch_path, r->arch_path, tn,
                     flux ? "" : " (or run without T5: --no-t5)");
                rc = -2;
                goto out;
            }
        }
    }
    if (xl || sd3) { /* SDXL's / SD 3's second tokenizer (pad_token "!"): the folder's, else the architecture's */
        if (!find_tokenizer(o, r, j.arch, "tokenizer_2", r->tokenizer2)) {
            fail(err, errcap, "%s: an %s checkpoint needs tokenizer_2/ (vocab.json + merges.txt): neither the "
                 "folder nor the architecture %s has one", o->ckpt, sd3 ? "SD 3" : "SDXL", r->arch_path);
            goto out;
        }
        r->force_zeros = xl; /* StableDiffusionXLPipeline's default; model_index.json may say otherwise */
        fmt(path, sizeof path, "%s/model_index.json", o->ckpt);
        if (xl && is_dir(o->ckpt) && is_file(path)) {
            cJSON *mi = sdp_json_file(path, err, errcap);
            if (!mi) goto out;
            const cJSON *fz = jget(mi, "force_zeros_for_empty_prompt");
            if (cJSON_IsBool(fz)) r->force_zeros = cJSON_IsTrue(fz);
            cJSON_Delete(mi);
        }
    }
    if (scheduler_config(&j, err, errcap)) goto out;
    fmt(r->vae_cfg, PATH_MAX, "%s/vae/config.json", o->ckpt);
    if (!is_dir(o->ckpt) || !is_file(r->vae_cfg)) r->vae_cfg[0] = 0;
    if (o->info && !o->plan_only && print_info(&j, wanted, err, errcap)) goto out;
    rc = 0;
out:
    cJSON_Delete(arch);
    o2s_close(j.s);
    r->seconds = now_s() - t0;
    return rc;
}

/* ---- a second checkpoint's model (TAESD: sd_preview.c) ---------------------------------------- */

int sde_prepare_extra(const struct sde_options *o, const char *ckpt, const char *arch_path, int width, int height,
                      int m, char *program, char *weights, char *err, size_t errcap)
{
    struct sde_options o2 = *o; /* the cache, compiler, storage dtype; none of the checkpoint's extras */
    o2.ckpt = ckpt, o2.variant = NULL, o2.n_loras = 0, o2.vae_tile = 0, o2.clip_skip = 0, o2.tokens = 0, o2.batch = 1;
    o2.plan_only = 0;
    struct sde_result r;
    memset(&r, 0, sizeof r);
    struct job j = {.o = &o2, .r = &r};
    if (o->cache_dir) fmt(j.cache, sizeof j.cache, "%s", o->cache_dir);
    else if (sde_cache_dir(j.cache, sizeof j.cache)) return fail(err, errcap, "no cache folder: set ONNX2CL_CACHE_DIR (or HOME)");
    if (o->compiler) fmt(j.compiler, sizeof j.compiler, "%s", o->compiler);
    else if (sde_find_compiler(j.compiler, sizeof j.compiler))
        return fail(err, errcap, "the onnx2cl executable is not next to onnx2cl-sd (nor in the build tree)");
    const char *base = strrchr(arch_path, '/');
    fmt(r.arch, sizeof r.arch, "%s", base ? base + 1 : arch_path);
    fmt(r.arch_path, sizeof r.arch_path, "%s", arch_path);
    r.width = width, r.height = height;
    char path[PATH_MAX + 32];
    fmt(path, sizeof path, "%s/arch.json", arch_path);
    cJSON *arch = sdp_json_file(path, err, errcap);
    if (!arch) return -1;
    j.arch = arch;
    int rc = -1;
    if (!(j.s = o2s_open(ckpt, NULL, err, errcap))) goto out;
    compiler_identity(&j);
    weights_key(&j);
    fmt(j.wdir, sizeof j.wdir, "%s/weights/%s", j.cache, j.wkey);
    if (mkdir_p(j.wdir) != 0 || !writable_dir(j.wdir)) {
        fail(err, errcap, "cache folder %s: cannot be written (%s); set ONNX2CL_CACHE_DIR to a writable folder", j.wdir,
             strerror(errno ? errno : EACCES));
        goto out;
    }
    if (prepare_model(&j, m, err, errcap)) goto out;
    fmt(program, PATH_MAX, "%s", r.program[m]);
    fmt(weights, PATH_MAX, "%s", r.weights[m]);
    rc = 0;
out:
    cJSON_Delete(arch);
    o2s_close(j.s);
    return rc;
}
