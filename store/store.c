/* store.c — opening a checkpoint: files, safetensors headers, diffusers folders, lookups.
 *
 * Format (https://github.com/huggingface/safetensors): 8-byte little-endian header length N,
 * N bytes of JSON (one object: tensor name -> {"dtype", "shape", "data_offsets": [begin, end)}
 * relative to the data region, plus an optional "__metadata__" object of strings), then the data
 * region. The JSON is parsed by cJSON; every entry is then checked here (see o2s_open in
 * store.h). A diffusers folder is <component>/{diffusion_pytorch_model,model}[.VARIANT].safetensors
 * or a sharded <name>.safetensors.index[.VARIANT].json whose weight_map names shard files of the
 * same folder (plain file names only: no path from a file reaches elsewhere).
 * Assumes: POSIX mmap; files do not change while open.
 * Guarantees: no read outside a mapping; nothing printed; every failure is a message naming the
 * file (and the tensor); everything allocated is freed by o2s_close or on a failed open.
 */
#include "store_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_HEADER (100u << 20) /* the format's own limit on the JSON header */

static const char *const COMPONENT_NAMES[O2S_NUM_COMPONENTS] = {"unet", "vae", "text_encoder",
                                                                "text_encoder_2", "transformer",
                                                                "text_encoder_3"};
static const char PICKLE_MSG[] =
    "pickle checkpoints are not read (they can run code); convert to .safetensors";

int o2s_fail(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *o2s_component_name(enum o2s_component c)
{
    return (unsigned)c < O2S_NUM_COMPONENTS ? COMPONENT_NAMES[c] : "?";
}

int o2s_component_from_name(const char *name)
{
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++)
        if (strcmp(name, COMPONENT_NAMES[c]) == 0) return c;
    return -1;
}

const char *o2s_dtype_name(enum o2s_dtype t)
{
    return t == O2S_F32 ? "F32" : t == O2S_F16 ? "F16" : t == O2S_BF16 ? "BF16" : "?";
}

size_t o2s_dtype_size(enum o2s_dtype t) { return t == O2S_F32 ? 4 : 2; }

void o2s_dims_str(const int64_t *d, int rank, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "[");
    for (int k = 0; k < rank && n < cap; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s%" PRId64, k ? "," : "", d[k]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

/* safetensors dtype names, their element sizes, and the view dtype (0: not readable as float). */
static const struct { const char *name; unsigned size; int dtype; } DTYPES[] = {
    {"F32", 4, O2S_F32}, {"F16", 2, O2S_F16}, {"BF16", 2, O2S_BF16}, {"F64", 8, 0},
    {"I64", 8, 0},       {"I32", 4, 0},       {"I16", 2, 0},         {"I8", 1, 0},
    {"U64", 8, 0},       {"U32", 4, 0},       {"U16", 2, 0},         {"U8", 1, 0},
    {"BOOL", 1, 0},      {"F8_E4M3", 1, 0},   {"F8_E5M2", 1, 0},
};

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static bool pickle_name(const char *path)
{
    static const char *const ext[] = {".ckpt", ".pt", ".pth", ".bin", ".pkl", ".pickle"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (has_suffix(path, ext[i])) return true;
    return false;
}

/* ---- headers ---- */

/* A JSON number that is a non-negative integer < 2^53 (exactly representable). */
static bool json_uint(const cJSON *j, uint64_t *v)
{
    if (!cJSON_IsNumber(j)) return false;
    double d = j->valuedouble;
    if (!(d >= 0 && d < 9007199254740992.0) || d != (double)(uint64_t)d) return false;
    *v = (uint64_t)d;
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_begin(const void *a, const void *b)
{
    const struct o2s_tensor *x = *(const struct o2s_tensor *const *)a;
    const struct o2s_tensor *y = *(const struct o2s_tensor *const *)b;
    return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1)
                                : (x->end != y->end ? (x->end < y->end ? -1 : 1) : 0);
}

static struct o2s_tensor *new_tensor(struct o2s_store *s)
{
    if (s->ntensors == s->captensors) {
        size_t cap = s->captensors ? 2 * s->captensors : 256;
        struct o2s_tensor *t = realloc(s->tensors, cap * sizeof *t);
        if (!t) return NULL;
        s->tensors = t;
        s->captensors = cap;
    }
    struct o2s_tensor *t = &s->tensors[s->ntensors];
    memset(t, 0, sizeof *t);
    return t;
}

/* One tensor entry {dtype, shape, data_offsets} of file fi. */
static int parse_entry(struct o2s_store *s, int fi, const cJSON *e, char *err, size_t cap)
{
    const struct o2s_file *f = &s->files[fi];
    const char *name = e->string;
    if (!cJSON_IsObject(e))
        return o2s_fail(err, cap, "%s: tensor '%s': header entry is not an object", f->path, name);
    const cJSON *dt = NULL, *shape = NULL, *off = NULL;
    for (const cJSON *k = e->child; k; k = k->next) {
        const cJSON **slot = strcmp(k->string, "dtype") == 0          ? &dt
                             : strcmp(k->string, "shape") == 0        ? &shape
                             : strcmp(k->string, "data_offsets") == 0 ? &off
                                                                      : NULL;
        if (!slot || *slot)
            return o2s_fail(err, cap, "%s: tensor '%s': unexpected or repeated field '%.60s'",
                            f->path, name, k->string);
        *slot = k;
    }
    if (!dt || !shape || !off)
        return o2s_fail(err, cap, "%s: tensor '%s' lacks \"%s\"", f->path, name,
                        !dt ? "dtype" : !shape ? "shape" : "data_offsets");
    struct o2s_tensor *t = new_tensor(s);
    if (!t) return o2s_fail(err, cap, "%s: out of memory", f->path);
    t->file = fi;
    if (!cJSON_IsString(dt))
        return o2s_fail(err, cap, "%s: tensor '%s': dtype is not a string", f->path, name);
    unsigned esize = 0;
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (strcmp(dt->valuestring, DTYPES[i].name) == 0) {
            t->dtype = DTYPES[i].dtype;
            t->dtype_name = DTYPES[i].name;
            esize = DTYPES[i].size;
        }
    if (!esize)
        return o2s_fail(err, cap, "%s: tensor '%s': unknown dtype '%.40s'", f->path, name,
                        dt->valuestring);
    if (!cJSON_IsArray(shape))
        return o2s_fail(err, cap, "%s: tensor '%s': shape is not an array", f->path, name);
    int rank = cJSON_GetArraySize(shape);
    if (rank > O2S_MAX_RANK)
        return o2s_fail(err, cap, "%s: tensor '%s': %d dims (at most %d)", f->path, name, rank,
                        O2S_MAX_RANK);
    uint64_t elems = 1;
    int k = 0;
    for (const cJSON *d = shape->child; d; d = d->next, k++) {
        uint64_t v;
        if (!json_uint(d, &v))
            return o2s_fail(err, cap, "%s: tensor '%s': shape: dim %d is not a non-negative "
                            "integer", f->path, name, k);
        if (v && elems > UINT64_MAX / 8 / v)
            return o2s_fail(err, cap, "%s: tensor '%s': shape too large", f->path, name);
        elems *= v;
        t->dims[k] = (int64_t)v;
    }
    t->rank = rank;
    uint64_t b, en;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !json_uint(off->child, &b) ||
        !json_uint(off->child->next, &en))
        return o2s_fail(err, cap, "%s: tensor '%s': data_offsets is not two non-negative "
                        "integers", f->path, name);
    if (b > en || en > f->data_len)
        return o2s_fail(err, cap, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] "
                        "outside the data region (%" PRIu64 " bytes)", f->path, name, b, en,
                        f->data_len);
    if (en - b != elems * esize) {
        char ds[160];
        o2s_dims_str(t->dims, rank, ds, sizeof ds);
        return o2s_fail(err, cap, "%s: tensor '%s': %s %s is %" PRIu64 " bytes but "
                        "data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64, f->path, name,
                        t->dtype_name, ds, elems * esize, b, en, en - b);
    }
    t->begin = b;
    t->end = en;
    t->name = strdup(name);
    if (!t->name) return o2s_fail(err, cap, "%s: out of memory", f->path);
    s->ntensors++;
    return 0;
}

/* Ranges of tensors [first, first+n) of one file tile its data region exactly (the format's
 * rule, as the reference reader checks): sorted by offset, each starts where the previous ends. */
static int check_tiling(struct o2s_store *s, int fi, size_t first, size_t n, char *err, size_t cap)
{
    const struct o2s_file *f = &s->files[fi];
    if (n == 0)
        return f->data_len ? o2s_fail(err, cap, "%s: the data region holds %" PRIu64 " bytes "
                                      "but the header lists no tensor", f->path, f->data_len)
                           : 0;
    const struct o2s_tensor **o = malloc(n * sizeof *o);
    if (!o) return o2s_fail(err, cap, "%s: out of memory", f->path);
    for (size_t i = 0; i < n; i++) o[i] = &s->tensors[first + i];
    qsort(o, n, sizeof *o, by_begin);
    uint64_t at = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (o[i]->begin < at)
            rc = o2s_fail(err, cap, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] "
                          "overlap tensor '%s' [%" PRIu64 ", %" PRIu64 "]", f->path, o[i]->name,
                          o[i]->begin, o[i]->end, o[i - 1]->name, o[i - 1]->begin, o[i - 1]->end);
        else if (o[i]->begin > at)
            rc = o2s_fail(err, cap, "%s: bytes [%" PRIu64 ", %" PRIu64 ") of the data region "
                          "belong to no tensor (a hole before tensor '%s')", f->path, at,
                          o[i]->begin, o[i]->name);
        at = o[i]->end;
    }
    if (!rc && at != f->data_len)
        rc = o2s_fail(err, cap, "%s: the data region has %" PRIu64 " bytes after its last "
                      "tensor '%s'", f->path, f->data_len - at, o[n - 1]->name);
    free(o);
    return rc;
}

/* Maps path and checks its header; appends its tensors. Returns the file index or -1. */
static int add_file(struct o2s_store *s, const char *path, char *err, size_t cap)
{
    if (pickle_name(path)) return o2s_fail(err, cap, "%s: %s", path, PICKLE_MSG);
    struct o2s_file *fs = realloc(s->files, (size_t)(s->nfiles + 1) * sizeof *fs);
    if (!fs) return o2s_fail(err, cap, "%s: out of memory", path);
    s->files = fs;
    int fi = s->nfiles;
    struct o2s_file *f = &fs[fi];
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    if (!f->path) return o2s_fail(err, cap, "%s: out of memory", path);
    s->nfiles++;
    int not_regular = 0;
    uint64_t fsize = 0;
    FILE *fp = o2r_fopen_regular(path, &not_regular);
    if (!fp && !not_regular) return o2s_fail(err, cap, "%s: cannot open: %s", path, strerror(errno));
    if (!fp || o2r_file_regular_size(fp, &fsize) != 1) {
        if (fp) fclose(fp);
        return o2s_fail(err, cap, "%s: not a regular file", path);
    }
    if (fsize < 8) {
        fclose(fp);
        return o2s_fail(err, cap, "%s: not a safetensors file: %lld bytes, shorter than the "
                        "8-byte header length", path, (long long)fsize);
    }
    const void *m = o2r_file_map(fp, fsize);
    int map_errno = errno;
    fclose(fp);
    if (!m) return o2s_fail(err, cap, "%s: cannot map: %s", path, strerror(map_errno));
    f->base = m;
    f->size = (size_t)fsize;
    const unsigned char *b = f->base;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
    bool hdr_ok = hlen <= ST_MAX_HEADER && hlen <= f->size - 8 && hlen > 0 && b[8] == '{';
    if (!hdr_ok && ((b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) ||
                    (b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4)))
        return o2s_fail(err, cap, "%s: %s", path, PICKLE_MSG);
    if (hlen > ST_MAX_HEADER || hlen > f->size - 8)
        return o2s_fail(err, cap, "%s: safetensors header length %" PRIu64 " exceeds the %s "
                        "(%zu bytes)", path, hlen,
                        hlen > ST_MAX_HEADER ? "format's 100 MiB limit; not a safetensors file?"
                                             : "file", f->size);
    f->data = b + 8 + hlen;
    f->data_len = f->size - 8 - hlen;
    const char *h = (const char *)b + 8, *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(h, (size_t)hlen, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= h && at <= h + hlen ? (long)(at - h) : -1;
        return o2s_fail(err, cap, "%s: safetensors header: invalid JSON (near header byte %ld)",
                        path, off);
    }
    for (const char *p = end; p && p < h + hlen; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            cJSON_Delete(root);
            return o2s_fail(err, cap, "%s: safetensors header: bytes after the JSON object "
                            "(header byte %td)", path, p - h);
        }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return o2s_fail(err, cap, "%s: safetensors header is not a JSON object", path);
    }
    /* duplicate keys: cJSON keeps both; sort the names and compare neighbours */
    int n = cJSON_GetArraySize(root);
    const char **names = malloc((size_t)(n ? n : 1) * sizeof *names);
    if (!names) {
        cJSON_Delete(root);
        return o2s_fail(err, cap, "%s: out of memory", path);
    }
    int k = 0;
    for (const cJSON *e = root->child; e; e = e->next) names[k++] = e->string;
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 1; i < n; i++)
        if (strcmp(names[i], names[i - 1]) == 0) {
            int rc = o2s_fail(err, cap, "%s: tensor '%s' listed twice in the header", path,
                              names[i]);
            free(names);
            cJSON_Delete(root);
            return rc;
        }
    free(names);
    size_t first = s->ntensors;
    int rc = 0;
    for (cJSON *e = root->child; e && !rc; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(e)) {
                rc = o2s_fail(err, cap, "%s: __metadata__ is not an object", path);
                break;
            }
            for (const cJSON *m2 = e->child; m2 && !rc; m2 = m2->next)
                if (!cJSON_IsString(m2))
                    rc = o2s_fail(err, cap, "%s: __metadata__ '%s' is not a string", path,
                                  m2->string);
            continue;
        }
        rc = parse_entry(s, fi, e, err, cap);
    }
    if (!rc) rc = check_tiling(s, fi, first, s->ntensors - first, err, cap);
    if (!rc) {
        cJSON *meta = cJSON_DetachItemFromObjectCaseSensitive(root, "__metadata__");
        f->meta = meta;
    }
    cJSON_Delete(root);
    return rc ? -1 : fi;
}

int o2s_map_file(struct o2s_store *s, const char *path, char *err, size_t cap)
{
    return add_file(s, path, err, cap);
}

/* ---- entries ---- */

int o2s_add_entry(struct o2s_store *s, enum o2s_component c, const char *key, size_t ti,
                  enum o2s_transform tf, int part, char *err, size_t cap)
{
    struct o2s_tensor *t = &s->tensors[ti];
    const char *path = s->files[t->file].path;
    if (!t->dtype)
        return o2s_fail(err, cap, "%s: tensor '%s' (%s '%s'): dtype %s; the store reads F32, F16 "
                        "and BF16 weights", path, t->name, o2s_component_name(c), key,
                        t->dtype_name);
    if (s->nentries[c] == s->capentries[c]) {
        size_t nc = s->capentries[c] ? 2 * s->capentries[c] : 256;
        struct o2s_entry *e = realloc(s->entries[c], nc * sizeof *e);
        if (!e) return o2s_fail(err, cap, "out of memory");
        s->entries[c] = e;
        s->capentries[c] = nc;
    }
    struct o2s_entry *e = &s->entries[c][s->nentries[c]];
    memset(e, 0, sizeof *e);
    e->tensor = ti;
    e->rank = t->rank;
    memcpy(e->dims, t->dims, sizeof e->dims);
    e->bytes = t->end - t->begin;
    char ds[160];
    o2s_dims_str(t->dims, t->rank, ds, sizeof ds);
    if (tf == O2S_LINEAR) {
        while (e->rank > 2 && e->dims[e->rank - 1] == 1) e->rank--;
        if (e->rank > 2)
            return o2s_fail(err, cap, "%s: tensor '%s' %s: expected a 1x1 convolution weight "
                            "[C,C,1,1] (read as linear [C,C])", path, t->name, ds);
    } else if (tf == O2S_SPLIT3) {
        if (t->rank < 1 || t->dims[0] % 3)
            return o2s_fail(err, cap, "%s: tensor '%s' %s: expected a fused q/k/v projection "
                            "(dim 0 a multiple of 3)", path, t->name, ds);
        e->dims[0] /= 3;
        e->bytes /= 3;
        e->offset = (uint64_t)part * e->bytes;
    } else if (tf == O2S_SPLIT_QKVM) {
        if (t->rank < 1 || t->dims[0] % 7)
            return o2s_fail(err, cap, "%s: tensor '%s' %s: expected a fused q/k/v/MLP projection "
                            "(dim 0 = 3 x hidden + 4 x hidden)", path, t->name, ds);
        uint64_t row = e->bytes / (uint64_t)t->dims[0], d = (uint64_t)t->dims[0] / 7;
        e->dims[0] = (int64_t)(part < 3 ? d : 4 * d);
        e->bytes = (uint64_t)e->dims[0] * row;
        e->offset = (uint64_t)part * d * row;
    } else if (tf == O2S_SWAP2) {
        if (t->rank < 1 || t->dims[0] % 2)
            return o2s_fail(err, cap, "%s: tensor '%s' %s: expected an adaLN modulation (shift, "
                            "scale) with an even dim 0", path, t->name, ds);
        e->swapped = 1;
    } else if (tf == O2S_TRANSPOSE) {
        if (t->rank != 2)
            return o2s_fail(err, cap, "%s: tensor '%s' %s: expected a 2-D projection matrix "
                            "(read transposed)", path, t->name, ds);
        e->dims[0] = t->dims[1];
        e->dims[1] = t->dims[0];
        e->transposed = 1;
    }
    e->key = strdup(key);
    if (!e->key) return o2s_fail(err, cap, "out of memory");
    s->nentries[c]++;
    t->state = O2S_T_MAPPED;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct o2s_entry *)a)->key, ((const struct o2s_entry *)b)->key);
}

/* ---- diffusers folders ---- */

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Shards named by an index file (JSON {"weight_map": {key: file}}) in folder dir. */
static int add_index(struct o2s_store *s, const char *dir, const char *index, char *err,
                     size_t cap)
{
    FILE *fp = fopen(index, "rb");
    if (!fp) return o2s_fail(err, cap, "%s: cannot open: %s", index, strerror(errno));
    char *buf = NULL;
    size_t n = 0, capb = 0;
    for (;;) {
        if (n + 65536 > capb) {
            capb = capb ? 2 * capb : 65536 * 2;
            if (capb > (64u << 20)) {
                free(buf);
                fclose(fp);
                return o2s_fail(err, cap, "%s: index file larger than 64 MiB", index);
            }
            char *nb = realloc(buf, capb);
            if (!nb) {
                free(buf);
                fclose(fp);
                return o2s_fail(err, cap, "%s: out of memory", index);
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, capb - n, fp);
        n += r;
        if (r == 0) break;
    }
    fclose(fp);
    cJSON *root = cJSON_ParseWithLength(buf, n);
    free(buf);
    if (!root) return o2s_fail(err, cap, "%s: invalid JSON", index);
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    int rc = 0;
    if (!cJSON_IsObject(wm)) rc = o2s_fail(err, cap, "%s: no \"weight_map\" object", index);
    /* each distinct shard once, in first-mention order */
    for (const cJSON *e = wm ? wm->child : NULL; e && !rc; e = e->next) {
        const char *shard = cJSON_GetStringValue(e);
        if (!shard || !*shard || strchr(shard, '/') || strchr(shard, '\\') ||
            strcmp(shard, ".") == 0 || strcmp(shard, "..") == 0) {
            rc = o2s_fail(err, cap, "%s: weight_map '%s': '%s' is not a file name of this folder",
                          index, e->string, shard ? shard : "(not a string)");
            break;
        }
        bool seen = false;
        for (const cJSON *p = wm->child; p != e; p = p->next)
            if (strcmp(cJSON_GetStringValue(p), shard) == 0) seen = true;
        if (seen) continue;
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, shard) >= (int)sizeof path)
            rc = o2s_fail(err, cap, "%s: shard path too long", index);
        else if (add_file(s, path, err, cap) < 0)
            rc = -1;
    }
    /* every key of the map in the shard it names */
    for (const cJSON *e = wm ? wm->child : NULL; e && !rc; e = e->next) {
        const char *shard = cJSON_GetStringValue(e);
        bool found = false;
        for (size_t i = 0; i < s->ntensors && !found; i++) {
            const struct o2s_tensor *t = &s->tensors[i];
            const char *fp2 = s->files[t->file].path;
            size_t lf = strlen(fp2), ls = strlen(shard);
            found = strcmp(t->name, e->string) == 0 && lf > ls && fp2[lf - ls - 1] == '/' &&
                    strcmp(fp2 + lf - ls, shard) == 0;
        }
        if (!found)
            rc = o2s_fail(err, cap, "%s: weight_map names tensor '%s' in %s, which lacks it", index,
                          e->string, shard);
    }
    cJSON_Delete(root);
    return rc;
}

/* Finds component c's weights under dir/<c>/ and adds them as canonical keys. Returns 1 if
 * found, 0 if the component is absent, -1 on error. */
static int add_component(struct o2s_store *s, const char *dir, int c, char *err, size_t cap)
{
    static const char *const bases[] = {"diffusion_pytorch_model", "model"};
    char folder[4096], p[4200];
    snprintf(folder, sizeof folder, "%s/%s", dir, COMPONENT_NAMES[c]);
    struct stat st;
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    const char *want = s->opt.variant;
    /* order: the asked variant (or none), then the other */
    const char *order[2] = {want, want ? NULL : "fp16"};
    size_t first = s->ntensors;
    int got = 0;
    for (int o = 0; o < 2 && !got; o++) {
        const char *v = order[o];
        if (o == 1 && want) break; /* an asked variant is not replaced by the full files */
        for (size_t bi = 0; bi < 2 && !got; bi++) {
            if (v) snprintf(p, sizeof p, "%s/%s.%s.safetensors", folder, bases[bi], v);
            else snprintf(p, sizeof p, "%s/%s.safetensors", folder, bases[bi]);
            if (is_file(p)) {
                if (add_file(s, p, err, cap) < 0) return -1;
                got = 1;
                break;
            }
            if (v) snprintf(p, sizeof p, "%s/%s.safetensors.index.%s.json", folder, bases[bi], v);
            else snprintf(p, sizeof p, "%s/%s.safetensors.index.json", folder, bases[bi]);
            if (is_file(p)) {
                if (add_index(s, folder, p, err, cap) < 0) return -1;
                got = 1;
            }
        }
        if (got && v && !s->variant) s->variant = strdup(v);
    }
    if (!got) {
        for (size_t bi = 0; bi < 2; bi++) {
            snprintf(p, sizeof p, "%s/%s.bin", folder, bases[bi]);
            if (is_file(p)) return o2s_fail(err, cap, "%s: %s", p, PICKLE_MSG);
        }
        if (want)
            return o2s_fail(err, cap, "%s: no %s.%s.safetensors (variant '%s' asked)", folder,
                            bases[0], want, want);
        return 0;
    }
    return o2s_keymap_diffusers(s, (enum o2s_component)c, first, err, cap) < 0 ? -1 : 1;
}

/* ---- open / close ---- */

static int finish(struct o2s_store *s, char *err, size_t cap)
{
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
        struct o2s_entry *e = s->entries[c];
        size_t n = s->nentries[c];
        if (n) qsort(e, n, sizeof *e, by_key);
        for (size_t i = 1; i < n; i++)
            if (strcmp(e[i].key, e[i - 1].key) == 0) {
                const struct o2s_tensor *a = &s->tensors[e[i - 1].tensor];
                const struct o2s_tensor *b = &s->tensors[e[i].tensor];
                return o2s_fail(err, cap, "%s: tensors '%s' and '%s' (%s) both give %s key '%s'",
                                s->files[b->file].path, a->name, b->name, s->files[a->file].path,
                                COMPONENT_NAMES[c], e[i].key);
            }
    }
    return 0;
}

struct o2s_store *o2s_open(const char *path, const struct o2s_options *opt, char *err,
                           size_t errcap)
{
    if (err && errcap) err[0] = 0;
    struct o2s_store *s = calloc(1, sizeof *s);
    if (!s) {
        o2s_fail(err, errcap, "%s: out of memory", path);
        return NULL;
    }
    if (opt) s->opt = *opt;
    s->path = strdup(path);
    struct stat st;
    int rc = 0;
    if (!s->path) rc = o2s_fail(err, errcap, "%s: out of memory", path);
    else if (stat(path, &st) != 0)
        rc = o2s_fail(err, errcap, "%s: cannot open: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode)) {
        s->format = O2S_FORMAT_DIFFUSERS;
        int found = 0;
        for (int c = 0; c < O2S_NUM_COMPONENTS && !rc; c++) {
            int r = add_component(s, path, c, err, errcap);
            if (r < 0) rc = -1;
            else found += r;
        }
        if (!rc && !found)
            rc = o2s_fail(err, errcap, "%s: a folder without any diffusers component "
                          "(unet/ or transformer/, vae/, text_encoder/, text_encoder_2/, text_encoder_3/ holding "
                          "diffusion_pytorch_model.safetensors or model.safetensors)", path);
        if (!rc && s->opt.use_ema)
            rc = o2s_fail(err, errcap, "%s: EMA weights asked, but a diffusers folder has "
                          "none (only single files carry model_ema.*)", path);
    } else {
        rc = add_file(s, path, err, errcap) < 0 ? -1 : 0;
        if (!rc) {
            int c = o2s_component_file(s, path);
            if (c >= 0) {
                s->format = O2S_FORMAT_COMPONENT;
                rc = o2s_keymap_diffusers(s, (enum o2s_component)c, 0, err, errcap);
            } else {
                s->format = O2S_FORMAT_LDM;
                rc = o2s_keymap_ldm(s, 0, err, errcap) < 0 ? -1 : 0;
            }
            if (!rc && s->opt.use_ema && s->format != O2S_FORMAT_LDM)
                rc = o2s_fail(err, errcap, "%s: EMA weights asked, but a component file has "
                              "none", path);
        }
    }
    if (!rc) rc = finish(s, err, errcap);
    if (rc) {
        o2s_close(s);
        return NULL;
    }
    return s;
}

int o2s_add_component_file(struct o2s_store *s, enum o2s_component c, const char *path, char *err,
                           size_t errcap)
{
    if ((unsigned)c >= O2S_NUM_COMPONENTS) return o2s_fail(err, errcap, "%s: no such component", path);
    struct stat st;
    if (stat(path, &st) != 0) return o2s_fail(err, errcap, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return o2s_fail(err, errcap, "%s: not a .safetensors file", path);
    for (size_t i = 0; i < s->nentries[c]; i++) { /* the file replaces the checkpoint's own */
        s->tensors[s->entries[c][i].tensor].state = O2S_T_IGNORED;
        free(s->entries[c][i].key);
    }
    s->nentries[c] = 0;
    size_t first = s->ntensors, before[O2S_NUM_COMPONENTS];
    for (int k = 0; k < O2S_NUM_COMPONENTS; k++) before[k] = s->nentries[k];
    if (add_file(s, path, err, errcap) < 0) return -1;
    /* a VAE in LDM naming (Black Forest Labs' ae.safetensors, A1111's vae-*.safetensors) goes
     * through the LDM tables; diffusers-named VAEs and every text encoder file (transformers
     * naming: CLIP text_model.*, T5 encoder.block.* / shared.weight) through the component rules */
    bool ldm = false;
    if (c == O2S_VAE) {
        ldm = true;
        for (size_t i = first; i < s->ntensors && ldm; i++)
            ldm = strncmp(s->tensors[i].name, "encoder.down_blocks.", 20) != 0 &&
                  strncmp(s->tensors[i].name, "decoder.up_blocks.", 18) != 0 &&
                  strncmp(s->tensors[i].name, "decoder.layers.", 15) != 0;
    }
    unsigned evidence = s->evidence;
    int rc = ldm ? (o2s_keymap_ldm(s, first, err, errcap) < 0 ? -1 : 0)
                 : o2s_keymap_diffusers(s, c, first, err, errcap);
    s->evidence = evidence;
    if (rc) return -1;
    for (int k = 0; k < O2S_NUM_COMPONENTS; k++)
        if (k != (int)c && s->nentries[k] != before[k])
            return o2s_fail(err, errcap, "%s: holds %s tensors, not %s ones", path, COMPONENT_NAMES[k],
                            COMPONENT_NAMES[c]);
    if (!s->nentries[c])
        return o2s_fail(err, errcap, "%s: no %s tensor in it (first key '%s')", path, COMPONENT_NAMES[c],
                        first < s->ntensors ? s->tensors[first].name : "none");
    for (size_t i = first; i < s->ntensors; i++)
        if (s->tensors[i].state == O2S_T_UNKNOWN)
            return o2s_fail(err, errcap, "%s: key '%s' is not a %s key", path, s->tensors[i].name,
                            COMPONENT_NAMES[c]);
    return finish(s, err, errcap);
}

void o2s_close(struct o2s_store *s)
{
    if (!s) return;
    for (int i = 0; i < s->nfiles; i++) {
        if (s->files[i].base) o2r_file_unmap(s->files[i].base, s->files[i].size);
        cJSON_Delete(s->files[i].meta);
        free(s->files[i].path);
    }
    for (size_t i = 0; i < s->ntensors; i++) free(s->tensors[i].name);
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
        for (size_t i = 0; i < s->nentries[c]; i++) free(s->entries[c][i].key);
        free(s->entries[c]);
    }
    free(s->files);
    free(s->tensors);
    free(s->variant);
    free(s->path);
    free(s);
}

/* ---- lookups ---- */

static void fill_view(const struct o2s_store *s, enum o2s_component c, const struct o2s_entry *e,
                      struct o2s_view *v)
{
    const struct o2s_tensor *t = &s->tensors[e->tensor];
    const struct o2s_file *f = &s->files[t->file];
    memset(v, 0, sizeof *v);
    v->dtype = (enum o2s_dtype)t->dtype;
    v->rank = e->rank;
    memcpy(v->dims, e->dims, sizeof v->dims);
    v->data = f->data + t->begin + e->offset;
    v->bytes = e->bytes;
    v->key = e->key;
    v->orig_key = t->name;
    v->file = f->path;
    v->component = c;
    v->transposed = e->transposed;
    v->swapped = e->swapped;
}

int o2s_find(const struct o2s_store *s, enum o2s_component c, const char *key,
             struct o2s_view *v)
{
    if ((unsigned)c >= O2S_NUM_COMPONENTS) return -1;
    size_t lo = 0, hi = s->nentries[c];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(s->entries[c][mid].key, key);
        if (r == 0) {
            if (v) fill_view(s, c, &s->entries[c][mid], v);
            return 0;
        }
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

size_t o2s_count(const struct o2s_store *s, enum o2s_component c)
{
    return (unsigned)c < O2S_NUM_COMPONENTS ? s->nentries[c] : 0;
}

int o2s_get(const struct o2s_store *s, enum o2s_component c, size_t i, struct o2s_view *v)
{
    if ((unsigned)c >= O2S_NUM_COMPONENTS || i >= s->nentries[c]) return -1;
    fill_view(s, c, &s->entries[c][i], v);
    return 0;
}

void o2s_info(const struct o2s_store *s, struct o2s_info *in)
{
    memset(in, 0, sizeof *in);
    in->format = s->format;
    in->path = s->path;
    in->files = s->nfiles;
    for (int i = 0; i < s->nfiles; i++) in->file_bytes += s->files[i].size;
    in->tensors = s->ntensors;
    for (size_t i = 0; i < s->ntensors; i++) {
        const struct o2s_tensor *t = &s->tensors[i];
        if (t->state == O2S_T_MAPPED) {
            in->mapped++;
            in->by_dtype[t->dtype]++;
        } else if (t->state == O2S_T_IGNORED) {
            in->ignored++;
        } else {
            in->unknown++;
        }
    }
    in->has_ema = s->has_ema;
    in->variant = s->variant;
}

const char *o2s_unknown_key(const struct o2s_store *s, size_t i)
{
    for (size_t k = 0; k < s->ntensors; k++)
        if (s->tensors[k].state == O2S_T_UNKNOWN && i-- == 0) return s->tensors[k].name;
    return NULL;
}

const char *o2s_metadata(const struct o2s_store *s, const char *name)
{
    for (int i = 0; i < s->nfiles; i++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(s->files[i].meta, name);
        if (cJSON_IsString(m)) return m->valuestring;
    }
    return NULL;
}

uint64_t o2s_elements(const struct o2s_view *v)
{
    uint64_t n = 1;
    for (int k = 0; k < v->rank; k++) n *= (uint64_t)v->dims[k];
    return n;
}

static void to_f32(const struct o2s_view *v, float *out);

void o2s_to_f32(const struct o2s_view *v, float *out)
{
    if (v->swapped) { /* stored (B, A), out (A, B): each half converted into its place */
        struct o2s_view half = *v;
        half.swapped = 0;
        half.dims[0] /= 2;
        half.bytes /= 2;
        uint64_t n = o2s_elements(&half);
        half.data = (const unsigned char *)v->data + half.bytes;
        o2s_to_f32(&half, out);
        half.data = v->data;
        o2s_to_f32(&half, out + n);
        return;
    }
    if (!v->transposed || v->rank != 2) {
        to_f32(v, out);
        return;
    }
    /* stored [C, R] row-major; out is [R, C] = dims: convert one stored row at a time into a
     * strided column of out */
    uint64_t R = (uint64_t)v->dims[0], C = (uint64_t)v->dims[1];
    size_t es = o2s_dtype_size(v->dtype);
    float row[256];
    struct o2s_view piece = *v;
    piece.transposed = 0;
    piece.rank = 1;
    for (uint64_t c = 0; c < C; c++)
        for (uint64_t r0 = 0; r0 < R; r0 += 256) {
            uint64_t n = R - r0 < 256 ? R - r0 : 256;
            piece.dims[0] = (int64_t)n;
            piece.data = (const unsigned char *)v->data + (c * R + r0) * es;
            to_f32(&piece, row);
            for (uint64_t k = 0; k < n; k++) out[(r0 + k) * C + c] = row[k];
        }
}

static void to_f32(const struct o2s_view *v, float *out)
{
    uint64_t n = o2s_elements(v);
    const unsigned char *p = v->data;
    if (v->dtype == O2S_F32) {
        memcpy(out, p, n * 4);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        uint32_t bits;
        if (v->dtype == O2S_BF16) {
            bits = (uint32_t)h << 16;
        } else {
            uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
            if (exp == 0x1f) {
                bits = sign | 0x7f800000u | (man << 13);
            } else if (exp) {
                bits = sign | ((exp + 112) << 23) | (man << 13);
            } else if (!man) {
                bits = sign;
            } else { /* subnormal half: normalize */
                int e = -1;
                do {
                    e++;
                    man <<= 1;
                } while (!(man & 0x400));
                bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
            }
        }
        memcpy(&out[i], &bits, 4);
    }
}
