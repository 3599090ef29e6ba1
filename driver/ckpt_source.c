/* ckpt_source.c — the checkpoint store as a name-map source (ckpt_source.h).
 * Assumes: the store (store/store.h) outlives the compile (it is never closed: the views point
 * into its mappings). Guarantees: every failure exits 1 with the store's message (file and key). */
#include "driver/ckpt_source.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store.h"

struct ckpt_src {
    struct ir_graph *g;
    struct o2s_store *s;
    enum o2s_component comp;   /* what at() enumerates */
    struct o2s_lora **loras;   /* opened --lora files */
    const struct ckpt_options *opt;
};

/* A base weight some --lora touches: merged when the weights file is written (nm_view.make). */
struct merge_job {
    const struct ckpt_src *cs;
    struct o2s_view v; /* the base weight (its key and file stay valid: the store stays open) */
};

static enum ir_dtype ir_dtype_of(enum o2s_dtype t)
{
    return t == O2S_F32 ? IR_F32 : t == O2S_F16 ? IR_F16 : IR_BF16;
}

/* nm_view.make of a LoRA-touched or transposed weight: the base as float32 in its canonical
 * layout (o2s_to_f32 honours a transposed view) plus every LoRA's delta that touches it, in
 * command-line order (o2s_lora_apply). */
static void merge_make(const void *ctx, void *dst)
{
    const struct merge_job *j = ctx;
    const struct ckpt_src *cs = j->cs;
    float *m = dst;
    o2s_to_f32(&j->v, m);
    for (int k = 0; k < cs->opt->nloras; k++) {
        const struct o2s_lora_entry *e = o2s_lora_find(cs->loras[k], j->v.component, j->v.key);
        if (e && o2s_lora_apply(e, cs->opt->loras[k].scale, m) != 0)
            ir_die("%s: out of memory merging LoRA %s into '%s'", j->v.file,
                   cs->opt->loras[k].path, j->v.key);
    }
}

/* v as a name-map view; a float32 tensor made on demand when a --lora touches it or the store's
 * view is transposed (SDXL OpenCLIP's text_projection: the bytes are not in the key's layout). */
static void view_of(struct ckpt_src *cs, const struct o2s_view *v, struct nm_view *out)
{
    memset(out, 0, sizeof *out);
    out->rank = v->rank;
    for (int k = 0; k < v->rank && k < IR_MAX_RANK; k++) out->dims[k] = v->dims[k];
    bool touched = false;
    for (int l = 0; l < cs->opt->nloras && !touched; l++)
        touched = o2s_lora_find(cs->loras[l], v->component, v->key) != NULL;
    if (touched || v->transposed || v->swapped) {
        struct merge_job *j = ir_alloc(cs->g, sizeof *j);
        j->cs = cs;
        j->v = *v;
        out->dtype = IR_F32;
        out->data = NULL;
        out->nbytes = (size_t)o2s_elements(v) * sizeof(float);
        out->make = merge_make;
        out->make_ctx = j;
        return;
    }
    out->dtype = ir_dtype_of(v->dtype);
    out->data = v->data;
    out->nbytes = (size_t)v->bytes;
}

static bool src_find(void *ctx, const char *component, const char *key, struct nm_view *out)
{
    struct ckpt_src *cs = ctx;
    int c = o2s_component_from_name(component);
    struct o2s_view v;
    if (c < 0 || o2s_find(cs->s, (enum o2s_component)c, key, &v) != 0) return false;
    view_of(cs, &v, out);
    return true;
}

static void src_at(void *ctx, size_t i, const char **key, struct nm_view *out)
{
    struct ckpt_src *cs = ctx;
    struct o2s_view v;
    if (o2s_get(cs->s, cs->comp, i, &v) != 0) ir_die("checkpoint source: key %zu out of range", i);
    *key = v.key;
    view_of(cs, &v, out);
}

void ckpt_lora_parse(const char *arg, struct ckpt_lora *l)
{
    l->path = arg;
    l->scale = 1.0f;
    const char *colon = strrchr(arg, ':');
    if (!colon) return;
    char *end = NULL;
    errno = 0;
    double v = strtod(colon + 1, &end);
    bool number = end != colon + 1 && *end == 0 && errno == 0 && isfinite(v);
    struct stat st;
    if (!number) {
        /* FILE:junk: a path that exists as given is a file name holding ':' */
        if (stat(arg, &st) == 0) return;
        ir_usage_die("--lora %s: '%s' after ':' is not a number (give FILE or FILE:SCALE, e.g. "
                     "x.safetensors:0.8)", arg, colon + 1);
    }
    char *p = strndup(arg, (size_t)(colon - arg));
    if (!p) ir_die("out of memory");
    l->path = p;
    l->scale = (float)v;
}

/* Every store and LoRA this process opened: their views feed the weights until the weights file
 * is written (lazily, one tensor at a time), so they stay open to the end and are closed at exit
 * (the graph's arena, which holds struct ckpt_src, may be freed first). */
static struct o2s_store **open_stores;
static struct o2s_lora **open_loras;
static size_t n_open_stores, n_open_loras;

static void close_all(void)
{
    for (size_t i = n_open_loras; i-- > 0;) o2s_lora_close(open_loras[i]);
    for (size_t i = n_open_stores; i-- > 0;) o2s_close(open_stores[i]);
    free(open_loras);
    free(open_stores);
    open_loras = NULL;
    open_stores = NULL;
    n_open_loras = n_open_stores = 0;
}

static void keep_open(struct o2s_store *s, struct o2s_lora *l)
{
    static bool registered;
    if (!registered) {
        atexit(close_all);
        registered = true;
    }
    if (s) {
        struct o2s_store **p = realloc(open_stores, (n_open_stores + 1) * sizeof *p);
        if (!p) ir_die("out of memory");
        open_stores = p;
        open_stores[n_open_stores++] = s;
    }
    if (l) {
        struct o2s_lora **p = realloc(open_loras, (n_open_loras + 1) * sizeof *p);
        if (!p) ir_die("out of memory");
        open_loras = p;
        open_loras[n_open_loras++] = l;
    }
}

bool ckpt_source_open(struct ir_graph *g, const char *path, const char *component,
                      const struct ckpt_options *opt, struct nm_source *src)
{
    int c = o2s_component_from_name(component);
    if (c < 0)
        ir_usage_die("--component %s: expected unet, vae, text_encoder, text_encoder_2, transformer or text_encoder_3",
                     component);
    struct stat st;
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    bool adds = false;
    for (int k = 0; k < 8; k++) adds = adds || opt->add_component[k];
    bool needs_store = dir || opt->variant || opt->use_ema || opt->nloras > 0 || adds;
    struct o2s_options so = {.variant = opt->variant, .use_ema = opt->use_ema};
    char err[2048];
    struct o2s_store *s = o2s_open(path, &so, err, sizeof err);
    if (!s) {
        if (!needs_store) return false; /* read as a plain file (which says what is wrong) */
        ir_die("%s", err);
    }
    for (int k = 0; k < 8; k++)
        if (opt->add_component[k] &&
            o2s_add_component_file(s, (enum o2s_component)k, opt->add_component[k], err, sizeof err))
            ir_die("--add-component %s=%s: %s", o2s_component_name((enum o2s_component)k),
                   opt->add_component[k], err);
    if (o2s_count(s, (enum o2s_component)c) == 0) {
        if (!needs_store) {
            o2s_close(s);
            return false;
        }
        struct o2s_info in;
        o2s_info(s, &in);
        ir_die("%s: the checkpoint has no %s tensors (%zu tensors, %zu mapped to %s%s%s%s%s)",
               path, component, in.tensors, in.mapped,
               o2s_count(s, O2S_UNET) ? "unet " : "", o2s_count(s, O2S_VAE) ? "vae " : "",
               o2s_count(s, O2S_TEXT_ENCODER) ? "text_encoder " : "",
               o2s_count(s, O2S_TEXT_ENCODER_2) ? "text_encoder_2 " : "",
               in.mapped ? "" : "nothing");
    }
    keep_open(s, NULL);
    struct ckpt_src *cs = ir_alloc(g, sizeof *cs);
    cs->g = g;
    cs->s = s;
    cs->comp = (enum o2s_component)c;
    cs->opt = opt;
    cs->loras = ir_alloc(g, (size_t)(opt->nloras + 1) * sizeof *cs->loras);
    for (int l = 0; l < opt->nloras; l++) {
        cs->loras[l] = o2s_lora_open(opt->loras[l].path, s, err, sizeof err);
        if (!cs->loras[l]) ir_die("--lora: %s", err);
        keep_open(NULL, cs->loras[l]);
        size_t mine = 0;
        for (size_t i = 0; i < o2s_lora_count(cs->loras[l]); i++)
            mine += o2s_lora_get(cs->loras[l], i)->component == cs->comp;
        fprintf(stderr, "onnx2cl: LoRA %s (scale %g): %zu of its %zu weights are %s weights\n",
                opt->loras[l].path, (double)opt->loras[l].scale, mine,
                o2s_lora_count(cs->loras[l]), component);
    }
    memset(src, 0, sizeof *src);
    src->name = path;
    src->ctx = cs;
    src->n = o2s_count(s, cs->comp);
    src->find = src_find;
    src->at = src_at;
    return true;
}
