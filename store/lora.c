/* lora.c — LoRA files (store.h, "LoRA"): which base weight each low-rank pair changes, checked
 * against the checkpoint, and the merge W += scale * alpha/rank * up @ down.
 *
 * Namings are data (NAMINGS below: key prefix, component, how the module is written, suffixes of
 * the down/up factors): kohya (lora_unet_/lora_te_/lora_te1_/lora_te2_ + the module path with
 * '_' for '.', .lora_down.weight / .lora_up.weight / .alpha), diffusers/PEFT (unet. /
 * text_encoder. / text_encoder_2. / transformer. (SD 3, Flux) + the dotted module path,
 * .lora_A.weight / .lora_B.weight) and
 * older diffusers (.lora.down.weight / .lora.up.weight). A kohya module is resolved against the
 * checkpoint's own canonical keys with '.' read as '_' (diffusers paths), else, for the UNet, as
 * an LDM path (input_blocks_1_1_proj_in: every placement of '.' and '_' between non-numeric
 * words is tried through the store's key tables, o2s_ldm_canonical). Text encoders: the
 * text_model level of transformers 4.x names is dropped (canonical keys have none).
 * alpha: the module's .alpha tensor, else PEFT's lora_alpha in the file's __metadata__
 * lora_adapter_metadata ("unet.lora_alpha"), else alpha = rank (factor 1).
 * Guarantees: a key no rule or no module matches, a factor without its partner, ranks or shapes
 * that do not fit the base weight, a component the checkpoint lacks: refused, naming the file and
 * the key (and the first few unmatched keys). Modules that match no weight are reported before
 * one whose shapes do not fit: a LoRA for another architecture (SD 1.x on SDXL: same diffusers
 * names in part) is named by the modules the checkpoint lacks. */
#include "store_internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if O2S_THREADS
#include <pthread.h>
#endif

#define MAX_UNKNOWN_LISTED 4

static const struct naming {
    const char *prefix;        /* key prefix */
    enum o2s_component c;
    bool flat;                 /* module path written with '_' for '.' (kohya) */
    const char *down, *up;     /* factor suffixes */
    const char *meta;          /* prefix of PEFT's lora_adapter_metadata keys, or NULL */
} NAMINGS[] = {
    {"lora_unet_", O2S_UNET, true, ".lora_down.weight", ".lora_up.weight", NULL},
    {"lora_te1_", O2S_TEXT_ENCODER, true, ".lora_down.weight", ".lora_up.weight", NULL},
    {"lora_te2_", O2S_TEXT_ENCODER_2, true, ".lora_down.weight", ".lora_up.weight", NULL},
    {"lora_te_", O2S_TEXT_ENCODER, true, ".lora_down.weight", ".lora_up.weight", NULL},
    {"unet.", O2S_UNET, false, ".lora_A.weight", ".lora_B.weight", "unet."},
    {"unet.", O2S_UNET, false, ".lora.down.weight", ".lora.up.weight", "unet."},
    {"text_encoder.", O2S_TEXT_ENCODER, false, ".lora_A.weight", ".lora_B.weight", "text_encoder."},
    {"text_encoder.", O2S_TEXT_ENCODER, false, ".lora.down.weight", ".lora.up.weight",
     "text_encoder."},
    {"text_encoder_2.", O2S_TEXT_ENCODER_2, false, ".lora_A.weight", ".lora_B.weight",
     "text_encoder_2."},
    {"text_encoder_2.", O2S_TEXT_ENCODER_2, false, ".lora.down.weight", ".lora.up.weight",
     "text_encoder_2."},
    /* SD 3 / Flux: diffusers' SD3/Flux LoRA loaders' naming (save_lora_weights, PEFT) */
    {"transformer.", O2S_TRANSFORMER, false, ".lora_A.weight", ".lora_B.weight", "transformer."},
    {"transformer.", O2S_TRANSFORMER, false, ".lora.down.weight", ".lora.up.weight", "transformer."},
};
#define NNAMINGS (sizeof NAMINGS / sizeof NAMINGS[0])

/* One module of the file while reading: its factors (tensor indices, -1: absent). */
struct module {
    int naming;
    char *name;                /* the module as written (between prefix and suffix) */
    long down, up, alpha;
};

struct o2s_lora {
    struct o2s_store *f;       /* the LoRA file (tensors only) */
    struct o2s_lora_entry *e;
    size_t n;
};

static bool ends_with(const char *s, const char *suf, size_t *stem)
{
    size_t n = strlen(s), m = strlen(suf);
    if (n <= m || strcmp(s + n - m, suf) != 0) return false;
    *stem = n - m;
    return true;
}

static void view_of(const struct o2s_store *f, size_t ti, struct o2s_view *v)
{
    const struct o2s_tensor *t = &f->tensors[ti];
    memset(v, 0, sizeof *v);
    v->dtype = (enum o2s_dtype)t->dtype;
    v->rank = t->rank;
    memcpy(v->dims, t->dims, sizeof v->dims);
    v->data = f->files[t->file].data + t->begin;
    v->bytes = t->end - t->begin;
    v->key = v->orig_key = t->name;
    v->file = f->files[t->file].path;
}

/* The module record for (naming, name), created if new: an alpha joins the module of the same
 * prefix and name; a factor joins the record of its own naming or an alpha-only one. NULL: out
 * of memory. */
static struct module *module_of(struct module **ms, size_t *n, size_t *cap, int naming,
                                bool alpha, const char *name, size_t len)
{
    for (size_t i = 0; i < *n; i++) {
        struct module *x = &(*ms)[i];
        if (strcmp(NAMINGS[x->naming].prefix, NAMINGS[naming].prefix) != 0 ||
            strlen(x->name) != len || strncmp(x->name, name, len) != 0)
            continue;
        if (alpha) return x;
        if (x->naming == naming || (x->down < 0 && x->up < 0)) {
            x->naming = naming;
            return x;
        }
    }
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        struct module *m = realloc(*ms, nc * sizeof *m);
        if (!m) return NULL;
        *ms = m;
        *cap = nc;
    }
    struct module *m = &(*ms)[(*n)++];
    m->naming = naming;
    m->name = o2r_strndup(name, len);
    m->down = m->up = m->alpha = -1;
    return m->name ? m : NULL;
}

/* ---- resolving a module to a canonical key ---- */

/* Canonical module paths of a component with '.' as '_' (kohya's spelling), sorted. */
struct flat { char *flat; const char *key; };
static int by_flat(const void *a, const void *b)
{
    return strcmp(((const struct flat *)a)->flat, ((const struct flat *)b)->flat);
}

static struct flat *flat_table(const struct o2s_store *base, enum o2s_component c, size_t *n)
{
    size_t cnt = o2s_count(base, c), k = 0;
    struct flat *t = calloc(cnt ? cnt : 1, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < cnt; i++) {
        struct o2s_view v;
        size_t stem;
        o2s_get(base, c, i, &v);
        if (!ends_with(v.key, ".weight", &stem)) continue;
        const char *key = v.key;
        if (c != O2S_UNET && c != O2S_VAE && strncmp(key, "text_model.", 11) == 0) {
            key += 11;
            stem -= 11;
        }
        char *f = o2r_strndup(key, stem);
        if (!f) break;
        for (char *p = f; *p; p++)
            if (*p == '.') *p = '_';
        t[k].flat = f;
        t[k++].key = v.key;
    }
    qsort(t, k, sizeof *t, by_flat);
    *n = k;
    return t;
}

static void flat_free(struct flat *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) free(t[i].flat);
    free(t);
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return false;
    return n > 0;
}

/* Kohya-named Flux and SD 3 LoRAs (lora_unet_double_blocks_0_img_attn_qkv, lora_unet_joint_blocks_0_x_block_
 * attn_qkv): as ldm_try, each placement of '.' and '_' between non-numeric words is tried as a Black Forest
 * Labs (sd3 0) or SAI MMDiT (sd3 1) key through the store's FLUX / SD3 rules (o2s_flow_canonical); a hit names
 * 1, 3 or 4 canonical keys, all in the checkpoint. */
static bool flow_try(int sd3, const struct o2s_store *base, const char *name, char *cand, size_t len, size_t i,
                     int *budget, char keys[4][O2S_KEY_MAX], int *nparts, enum o2s_transform *tf)
{
    for (; i < len && cand[i] != '_'; i++) {}
    if (i >= len) {
        char bfl[O2S_KEY_MAX];
        if (--*budget < 0 || (size_t)snprintf(bfl, sizeof bfl, "%s.weight", cand) >= sizeof bfl ||
            o2s_flow_canonical(sd3, bfl, keys, nparts, tf) != 0)
            return false;
        for (int p = 0; p < *nparts; p++)
            if (o2s_find(base, O2S_TRANSFORMER, keys[p], NULL) != 0) return false;
        return true;
    }
    size_t a = i, b = i + 1;
    while (a > 0 && cand[a - 1] != '_' && cand[a - 1] != '.') a--;
    while (b < len && name[b] != '_') b++;
    bool num = all_digits(cand + a, i - a) || all_digits(name + i + 1, b - i - 1);
    cand[i] = '.';
    if (flow_try(sd3, base, name, cand, len, i + 1, budget, keys, nparts, tf)) return true;
    if (num) return false;
    cand[i] = '_';
    return flow_try(sd3, base, name, cand, len, i + 1, budget, keys, nparts, tf);
}

/* LDM search: tok[0..nt) are the '_'-separated words of a kohya UNet module; joins[i] is the
 * character between words i and i+1. Numbers are whole dotted segments, so only joins between
 * two non-numeric words are free. Writes the canonical key into out on success. */

static bool ldm_try(const struct o2s_store *base, const char *name, char *cand, size_t len,
                    size_t i, int *budget, char *out, size_t cap)
{
    for (; i < len && cand[i] != '_'; i++) {}
    if (i >= len) {
        char ldm[O2S_KEY_MAX];
        enum o2s_component c;
        if (--*budget < 0) return false;
        snprintf(ldm, sizeof ldm, "model.diffusion_model.%s.weight", cand);
        return o2s_ldm_canonical(base, ldm, &c, out, cap) == 0 && c == O2S_UNET &&
               o2s_find(base, O2S_UNET, out, NULL) == 0;
    }
    size_t a = i, b = i + 1; /* the words around this underscore */
    while (a > 0 && cand[a - 1] != '_' && cand[a - 1] != '.') a--;
    while (b < len && name[b] != '_') b++;
    bool num = all_digits(cand + a, i - a) || all_digits(name + i + 1, b - i - 1);
    cand[i] = '.';
    if (ldm_try(base, name, cand, len, i + 1, budget, out, cap)) return true;
    if (num) return false;
    cand[i] = '_';
    return ldm_try(base, name, cand, len, i + 1, budget, out, cap);
}

/* PEFT's lora_alpha for a naming from __metadata__ lora_adapter_metadata; -1 when absent. */
static int peft_alpha(const struct o2s_store *f, const char *prefix, double *alpha, char *err,
                      size_t cap)
{
    const char *js = o2s_metadata(f, "lora_adapter_metadata");
    if (!js || !prefix) return 0;
    cJSON *j = cJSON_Parse(js);
    if (!j) return o2s_fail(err, cap, "%s: __metadata__ lora_adapter_metadata is not JSON",
                            f->files[0].path);
    char k[64];
    int rc = 0;
    snprintf(k, sizeof k, "%slora_alpha", prefix);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, k);
    if (cJSON_IsNumber(a)) *alpha = a->valuedouble;
    static const char *const unsupported[] = {"alpha_pattern", "rank_pattern", "use_rslora",
                                              "use_dora"};
    for (size_t u = 0; u < 4 && !rc; u++) {
        snprintf(k, sizeof k, "%s%s", prefix, unsupported[u]);
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k);
        if ((cJSON_IsObject(x) && x->child) || cJSON_IsTrue(x))
            rc = o2s_fail(err, cap, "%s: LoRA metadata '%s' is set; not supported (per-module "
                          "ranks/alphas, rsLoRA and DoRA change the merge)", f->files[0].path, k);
    }
    cJSON_Delete(j);
    return rc;
}

/* Checks e's factors against the base weight; fills rank. */
static int check_fit(const struct o2s_store *base, struct o2s_lora_entry *e, const char *path,
                     char *err, size_t cap)
{
    struct o2s_view b;
    o2s_find(base, e->component, e->key, &b);
    char du[160], dd[160], db[160];
    o2s_dims_str(e->up.dims, e->up.rank, du, sizeof du);
    o2s_dims_str(e->down.dims, e->down.rank, dd, sizeof dd);
    o2s_dims_str(b.dims, b.rank, db, sizeof db);
    if (e->up.rank < 2 || e->down.rank < 2 || e->up.dims[1] != e->down.dims[0])
        return o2s_fail(err, cap, "%s: LoRA module '%s': rank mismatch: up %s and down %s (up "
                        "[out,r,...] @ down [r,in,...])", path, e->module, du, dd);
    for (int k = 2; k < e->up.rank; k++)
        if (e->up.dims[k] != 1)
            return o2s_fail(err, cap, "%s: LoRA module '%s': up %s is not [out,r] or [out,r,1,1]",
                            path, e->module, du);
    /* down's trailing dims = the base's (trailing 1s aside) */
    int rd = e->down.rank, rb = b.rank;
    while (rd > 2 && e->down.dims[rd - 1] == 1) rd--;
    while (rb > 2 && b.dims[rb - 1] == 1) rb--;
    bool fit = rb >= 2 && b.dims[0] == e->up.dims[0] && rd == rb;
    for (int k = 1; fit && k < rb; k++) fit = e->down.dims[k] == b.dims[k];
    if (!fit)
        return o2s_fail(err, cap, "%s: LoRA module '%s' does not fit %s '%s': up %s @ down %s "
                        "against the checkpoint's %s (a LoRA for another architecture?)", path,
                        e->module, o2s_component_name(e->component), e->key, du, dd, db);
    e->rank = (int)e->down.dims[0];
    if (!e->has_alpha) e->alpha = (float)e->rank;
    return 0;
}

struct o2s_lora *o2s_lora_open(const char *path, const struct o2s_store *base, char *err,
                               size_t errcap)
{
    if (err && errcap) err[0] = 0;
    struct o2s_lora *l = calloc(1, sizeof *l);
    struct module *ms = NULL;
    size_t nm = 0, capm = 0, nunknown = 0, nmisfit = 0;
    char fit[1024], fit_first[1024] = "";
    char unknown[MAX_UNKNOWN_LISTED * 160] = "";
    struct flat *flats[O2S_NUM_COMPONENTS] = {0};
    size_t nflats[O2S_NUM_COMPONENTS] = {0};
    int rc = 0;
    if (!l || !(l->f = calloc(1, sizeof *l->f)) || !(l->f->path = strdup(path))) {
        rc = o2s_fail(err, errcap, "%s: out of memory", path);
        goto out;
    }
    if (o2s_map_file(l->f, path, err, errcap) < 0) {
        rc = -1;
        goto out;
    }
    struct o2s_store *f = l->f;
    /* 1. every key -> (naming, module, factor) */
    for (size_t i = 0; i < f->ntensors && !rc; i++) {
        const char *k = f->tensors[i].name;
        bool known = false;
        for (size_t r = 0; r < NNAMINGS && !known && !rc; r++) {
            size_t pl = strlen(NAMINGS[r].prefix), stem;
            if (strncmp(k, NAMINGS[r].prefix, pl) != 0) continue;
            long *slot = NULL;
            int naming = (int)r;
            if (ends_with(k, NAMINGS[r].down, &stem)) {
                struct module *m = module_of(&ms, &nm, &capm, naming, false, k + pl, stem - pl);
                slot = m ? &m->down : NULL;
            } else if (ends_with(k, NAMINGS[r].up, &stem)) {
                struct module *m = module_of(&ms, &nm, &capm, naming, false, k + pl, stem - pl);
                slot = m ? &m->up : NULL;
            } else if (ends_with(k, ".alpha", &stem)) {
                struct module *m = module_of(&ms, &nm, &capm, naming, true, k + pl, stem - pl);
                slot = m ? &m->alpha : NULL;
            } else {
                continue;
            }
            if (!slot) rc = o2s_fail(err, errcap, "%s: out of memory", path);
            else if (*slot >= 0)
                rc = o2s_fail(err, errcap, "%s: LoRA key '%s': a second tensor for the same "
                              "module and factor ('%s')", path, k, f->tensors[*slot].name);
            else *slot = (long)i;
            known = true;
        }
        if (!known && !rc && ++nunknown <= MAX_UNKNOWN_LISTED) {
            size_t n = strlen(unknown);
            snprintf(unknown + n, sizeof unknown - n, "%s'%.120s'", n ? ", " : "", k);
        }
    }
    if (!rc && nunknown)
        rc = o2s_fail(err, errcap, "%s: %zu of %zu keys are no LoRA factor this store reads "
                      "(kohya lora_unet_/lora_te_ .lora_down/.lora_up/.alpha, diffusers/PEFT "
                      "unet./text_encoder. .lora_A/.lora_B): %s%s", path, nunknown, f->ntensors,
                      unknown, nunknown > MAX_UNKNOWN_LISTED ? ", ..." : "");
    if (!rc && nm == 0) rc = o2s_fail(err, errcap, "%s: holds no LoRA factor", path);
    if (!rc && !(l->e = calloc(4 * nm, sizeof *l->e))) /* a fused Flux module: up to 4 base weights */
        rc = o2s_fail(err, errcap, "%s: out of memory", path);
    /* 2. modules -> canonical keys, checked */
    nunknown = 0;
    unknown[0] = 0;
    for (size_t i = 0; i < nm && !rc; i++) {
        struct module *m = &ms[i];
        const struct naming *nr = &NAMINGS[m->naming];
        if (m->down < 0 || m->up < 0) {
            rc = o2s_fail(err, errcap, "%s: LoRA module '%s%s' has %s but no %s factor", path,
                          nr->prefix, m->name, m->down >= 0 ? "a down" : m->up >= 0 ? "an up" :
                          "only an alpha", m->down >= 0 ? "up" : "down");
            break;
        }
        /* kohya's lora_unet_ on a Flux / SD 3 checkpoint: the transformer, in Black Forest Labs' / SAI's names */
        const bool flow = nr->flat && nr->c == O2S_UNET && o2s_count(base, O2S_UNET) == 0 &&
                          (o2s_find(base, O2S_TRANSFORMER, "x_embedder.weight", NULL) == 0 ||
                           o2s_find(base, O2S_TRANSFORMER, "pos_embed.proj.weight", NULL) == 0);
        const int sd3 = flow && o2s_find(base, O2S_TRANSFORMER, "pos_embed.proj.weight", NULL) == 0;
        const enum o2s_component comp = flow ? O2S_TRANSFORMER : nr->c;
        if (o2s_count(base, comp) == 0) {
            rc = o2s_fail(err, errcap, "%s: LoRA key '%s%s': the checkpoint has no %s (a LoRA "
                          "for another architecture, e.g. SDXL?)", path, nr->prefix, m->name,
                          o2s_component_name(nr->c));
            break;
        }
        char key[O2S_KEY_MAX] = "", fkeys[4][O2S_KEY_MAX];
        int nparts = 1;
        enum o2s_transform ftf = O2S_COPY;
        bool found = false;
        const char *name = m->name;
        bool text = nr->c == O2S_TEXT_ENCODER || nr->c == O2S_TEXT_ENCODER_2;
        if (flow) {
            char cand[O2S_KEY_MAX];
            int budget = 1 << 12;
            if (strlen(name) < O2S_KEY_MAX - 40) {
                strcpy(cand, name);
                found = flow_try(sd3, base, name, cand, strlen(name), 0, &budget, fkeys, &nparts, &ftf);
            }
        } else if (nr->flat) {
            if (text && strncmp(name, "text_model_", 11) == 0) name += 11;
            if (!flats[nr->c] && !(flats[nr->c] = flat_table(base, nr->c, &nflats[nr->c]))) {
                rc = o2s_fail(err, errcap, "%s: out of memory", path);
                break;
            }
            struct flat q = {.flat = (char *)name};
            const struct flat *hit = bsearch(&q, flats[nr->c], nflats[nr->c], sizeof q, by_flat);
            if (hit) {
                snprintf(key, sizeof key, "%s", hit->key);
                found = true;
            } else if (nr->c == O2S_UNET && strlen(name) < O2S_KEY_MAX - 40) {
                char cand[O2S_KEY_MAX];
                int budget = 1 << 14;
                strcpy(cand, name);
                found = ldm_try(base, name, cand, strlen(name), 0, &budget, key, sizeof key);
            }
        } else {
            if (text && strncmp(name, "text_model.", 11) == 0) name += 11;
            snprintf(key, sizeof key, "%s.weight", name);
            found = o2s_find(base, nr->c, key, NULL) == 0;
        }
        if (!found) {
            if (++nunknown <= MAX_UNKNOWN_LISTED) {
                size_t n = strlen(unknown);
                snprintf(unknown + n, sizeof unknown - n, "%s'%s%.120s'", n ? ", " : "",
                         nr->prefix, m->name);
            }
            continue;
        }
        if (!flow) snprintf(fkeys[0], sizeof fkeys[0], "%s", key);
        for (int part = 0; part < nparts && !rc; part++) {
            struct o2s_lora_entry *e = &l->e[l->n];
            e->component = comp;
            struct o2s_view bv;
            o2s_find(base, comp, fkeys[part], &bv);
            e->key = bv.key;
            e->module = f->tensors[m->down].name;
            view_of(f, (size_t)m->down, &e->down);
            view_of(f, (size_t)m->up, &e->up);
            if (nparts > 1) { /* a fused q|k|v(|mlp) module: this weight's rows of up (down shared) */
                const int64_t rows = e->up.rank == 2 ? e->up.dims[0] : 0, d = ftf == O2S_SPLIT3 ? rows / 3 : rows / 7;
                if (!rows || rows % (ftf == O2S_SPLIT3 ? 3 : 7)) {
                    rc = o2s_fail(err, errcap, "%s: LoRA key '%s': up factor of %lld rows does not split into the "
                                  "fused module's q, k, v%s", path, f->tensors[m->up].name, (long long)rows,
                                  ftf == O2S_SPLIT3 ? "" : ", MLP (1:1:1:4)");
                    break;
                }
                const int64_t n = ftf == O2S_SPLIT_QKVM && part == 3 ? 4 * d : d;
                const size_t row_bytes = (size_t)(e->up.bytes / (uint64_t)rows);
                e->up.data = (const unsigned char *)e->up.data + (size_t)(part * d) * row_bytes;
                e->up.dims[0] = n;
                e->up.bytes = (uint64_t)n * row_bytes;
            }
            for (size_t j = 0; j < l->n; j++)
                if (l->e[j].component == e->component && strcmp(l->e[j].key, e->key) == 0) {
                    rc = o2s_fail(err, errcap, "%s: LoRA keys '%s' and '%s' both change %s '%s'",
                                  path, l->e[j].module, e->module, o2s_component_name(e->component),
                                  e->key);
                    break;
                }
            if (rc) break;
            if (!e->down.dtype || !e->up.dtype) {
                rc = o2s_fail(err, errcap, "%s: LoRA key '%s': dtype %s; LoRA factors are F32, F16 "
                              "or BF16", path, e->down.dtype ? e->up.key : e->module,
                              f->tensors[e->down.dtype ? m->up : m->down].dtype_name);
                break;
            }
            if (m->alpha >= 0) {
                struct o2s_view av;
                view_of(f, (size_t)m->alpha, &av);
                if (!av.dtype || o2s_elements(&av) != 1) {
                    rc = o2s_fail(err, errcap, "%s: LoRA key '%s': expected one F32/F16/BF16 "
                                  "number", path, av.key);
                    break;
                }
                o2s_to_f32(&av, &e->alpha);
                e->has_alpha = 1;
            } else {
                double a = -1;
                rc = peft_alpha(f, nr->meta, &a, err, errcap);
                if (a > 0) {
                    e->alpha = (float)a;
                    e->has_alpha = 1;
                }
            }
            if (!rc && check_fit(base, e, path, fit, sizeof fit) != 0) {
                /* kept while the other modules resolve: keys that match nothing say more */
                if (!nmisfit++) snprintf(fit_first, sizeof fit_first, "%s", fit);
                continue;
            }
            if (!rc && !(isfinite(e->alpha)))
                rc = o2s_fail(err, errcap, "%s: LoRA module '%s': alpha is not finite", path,
                              e->module);
            l->n++;
        }
    }
    if (!rc && nunknown)
        rc = o2s_fail(err, errcap, "%s: %zu LoRA modules match no weight of the checkpoint "
                      "(a LoRA for another architecture?): %s%s", path, nunknown, unknown,
                      nunknown > MAX_UNKNOWN_LISTED ? ", ..." : "");
    else if (!rc && nmisfit)
        rc = o2s_fail(err, errcap, "%s", fit_first);
out:
    for (size_t i = 0; i < nm; i++) free(ms[i].name);
    free(ms);
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++) flat_free(flats[c], nflats[c]);
    if (rc) {
        o2s_lora_close(l);
        return NULL;
    }
    return l;
}

void o2s_lora_close(struct o2s_lora *l)
{
    if (!l) return;
    o2s_close(l->f);
    free(l->e);
    free(l);
}

size_t o2s_lora_count(const struct o2s_lora *l) { return l->n; }

const struct o2s_lora_entry *o2s_lora_get(const struct o2s_lora *l, size_t i)
{
    return i < l->n ? &l->e[i] : NULL;
}

const struct o2s_lora_entry *o2s_lora_find(const struct o2s_lora *l, enum o2s_component c,
                                           const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].component == c && strcmp(l->e[i].key, key) == 0) return &l->e[i];
    return NULL;
}

/* The merge W[out, in] += f * up[out, r] @ down[r, in] as a blocked float32 product: for a block of
 * JB columns, down's r x JB slice (<= 128 KB at r = 128) stays in cache while every output row
 * accumulates sum_k up[o,k] * down[k, j] into a JB-float row (i-k-j order: the inner loop is a
 * contiguous axpy the compiler vectorizes), then adds f times it to W. Float32 accumulation, as
 * PyTorch's fuse_lora (a float32 matmul) does. Rows [o0, o1) only: threads split the rows. */
#define MERGE_JB 256
struct merge_job {
    const float *up, *down;
    float *w;
    uint64_t in, r, o0, o1;
    float f;
};

static void merge_rows(const struct merge_job *m)
{
    float acc[MERGE_JB];
    for (uint64_t j0 = 0; j0 < m->in; j0 += MERGE_JB) {
        uint64_t jn = m->in - j0 < MERGE_JB ? m->in - j0 : MERGE_JB;
        for (uint64_t o = m->o0; o < m->o1; o++) {
            for (uint64_t j = 0; j < jn; j++) acc[j] = 0;
            const float *u = m->up + o * m->r;
            uint64_t k = 0;
            for (; k + 4 <= m->r; k += 4) { /* four rank terms per pass over acc */
                const float u0 = u[k], u1 = u[k + 1], u2 = u[k + 2], u3 = u[k + 3];
                const float *restrict d0 = m->down + k * m->in + j0, *restrict d1 = d0 + m->in;
                const float *restrict d2 = d1 + m->in, *restrict d3 = d2 + m->in;
                for (uint64_t j = 0; j < jn; j++) acc[j] += u0 * d0[j] + u1 * d1[j] + u2 * d2[j] + u3 * d3[j];
            }
            for (; k < m->r; k++) {
                const float uk = u[k];
                const float *restrict d = m->down + k * m->in + j0;
                for (uint64_t j = 0; j < jn; j++) acc[j] += uk * d[j];
            }
            float *restrict wr = m->w + o * m->in + j0;
            for (uint64_t j = 0; j < jn; j++) wr[j] += m->f * acc[j];
        }
    }
}

#if O2S_THREADS
static void *merge_thread(void *arg)
{
    merge_rows(arg);
    return NULL;
}

/* Threads for a merge of `macs` multiply-adds: 1 below 16 M (thread start-up would dominate),
 * else the online processors, at most 16 ($O2S_THREADS overrides: 1 = serial). */
static int merge_threads(uint64_t macs, uint64_t rows)
{
    const char *env = getenv("O2S_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : o2r_cpu_count();
    if (macs < (16u << 20) || n < 1) n = 1;
    if (n > 16) n = 16;
    if ((uint64_t)n > rows) n = (long)rows;
    return (int)n;
}
#endif

int o2s_lora_apply(const struct o2s_lora_entry *e, float scale, float *w)
{
    uint64_t out = (uint64_t)e->up.dims[0], r = (uint64_t)e->rank;
    uint64_t in = o2s_elements(&e->down) / r;
    float *up = malloc(out * r * sizeof *up), *down = malloc(r * in * sizeof *down);
    if (!up || !down) {
        free(up);
        free(down);
        return -1;
    }
    o2s_to_f32(&e->up, up);
    o2s_to_f32(&e->down, down);
    struct merge_job all = {up, down, w, in, r, 0, out, (float)((double)scale * (double)e->alpha / (double)r)};
    int nt = 1;
#if O2S_THREADS
    nt = merge_threads(out * r * in, out);
    pthread_t tid[16];
    struct merge_job jobs[16];
    int started = 0;
    for (int t = 0; t < nt; t++) {
        jobs[t] = all;
        jobs[t].o0 = out * (uint64_t)t / (uint64_t)nt;
        jobs[t].o1 = out * (uint64_t)(t + 1) / (uint64_t)nt;
        if (t > 0 && pthread_create(&tid[t], NULL, merge_thread, &jobs[t]) == 0) started |= 1 << t;
        else if (t > 0) merge_rows(&jobs[t]); /* no thread: this one does it */
    }
    if (nt > 1) {
        merge_rows(&jobs[0]);
        for (int t = 1; t < nt; t++)
            if (started & (1 << t)) pthread_join(tid[t], NULL);
    }
#endif
    if (nt == 1) merge_rows(&all);
    free(up);
    free(down);
    return 0;
}

const char *o2s_is_lora(const struct o2s_store *s)
{
    struct o2s_info in;
    o2s_info(s, &in);
    if (in.format == O2S_FORMAT_DIFFUSERS || in.mapped != 0 || in.unknown == 0) return NULL;
    size_t kohya = 0, peft = 0, old = 0, lycoris = 0, dora = 0, stem;
    for (size_t i = 0; i < in.unknown; i++) {
        const char *k = o2s_unknown_key(s, i);
        if (strstr(k, ".hada_") || strstr(k, ".lokr_") || strstr(k, ".oft_") || strstr(k, ".diff")) lycoris++;
        else if (ends_with(k, ".dora_scale", &stem) || ends_with(k, ".lora_magnitude_vector", &stem)) dora++;
        else if (ends_with(k, ".lora_down.weight", &stem)) kohya++;
        else if (strstr(k, ".lora_A.")) peft++;
        else if (ends_with(k, ".lora.down.weight", &stem)) old++;
    }
    return kohya ? "kohya" : peft ? "diffusers/PEFT" : old ? "older diffusers" : lycoris ? "LyCORIS" : dora ? "DoRA" : NULL;
}
