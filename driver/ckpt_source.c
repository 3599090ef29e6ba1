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
    struct o2s_store *s;
    enum o2s_component comp; /* what at() enumerates */
};

static enum ir_dtype ir_dtype_of(enum o2s_dtype t)
{
    return t == O2S_F32 ? IR_F32 : t == O2S_F16 ? IR_F16 : IR_BF16;
}

static void view_of(const struct o2s_view *v, struct nm_view *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = ir_dtype_of(v->dtype);
    out->rank = v->rank;
    for (int k = 0; k < v->rank && k < IR_MAX_RANK; k++) out->dims[k] = v->dims[k];
    out->data = v->data;
    out->nbytes = (size_t)v->bytes;
}

static bool src_find(void *ctx, const char *component, const char *key, struct nm_view *out)
{
    const struct ckpt_src *cs = ctx;
    int c = o2s_component_from_name(component);
    struct o2s_view v;
    if (c < 0 || o2s_find(cs->s, (enum o2s_component)c, key, &v) != 0) return false;
    view_of(&v, out);
    return true;
}

static void src_at(void *ctx, size_t i, const char **key, struct nm_view *out)
{
    const struct ckpt_src *cs = ctx;
    struct o2s_view v;
    if (o2s_get(cs->s, cs->comp, i, &v) != 0) ir_die("checkpoint source: key %zu out of range", i);
    *key = v.key;
    view_of(&v, out);
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

bool ckpt_source_open(struct ir_graph *g, const char *path, const char *component,
                      const struct ckpt_options *opt, struct nm_source *src)
{
    int c = o2s_component_from_name(component);
    if (c < 0)
        ir_usage_die("--component %s: expected unet, vae, text_encoder or text_encoder_2",
                     component);
    struct stat st;
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    bool needs_store = dir || opt->variant || opt->use_ema || opt->nloras > 0;
    struct o2s_options so = {.variant = opt->variant, .use_ema = opt->use_ema};
    char err[2048];
    struct o2s_store *s = o2s_open(path, &so, err, sizeof err);
    if (!s) {
        if (!needs_store) return false; /* read as a plain file (which says what is wrong) */
        ir_die("%s", err);
    }
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
    struct ckpt_src *cs = ir_alloc(g, sizeof *cs);
    cs->s = s;
    cs->comp = (enum o2s_component)c;
    memset(src, 0, sizeof *src);
    src->name = path;
    src->ctx = cs;
    src->n = o2s_count(s, cs->comp);
    src->find = src_find;
    src->at = src_at;
    return true;
}
