/* namemap.c — name maps: parse (nm_load), fill initializers from a checkpoint (nm_apply),
 * refuse unfilled placeholders (nm_check_filled), recover a map by value matching (nm_recover).
 * Format and semantics: frontend/namemap.h and docs/engine.md.
 *
 * Assumes: the graph is as imported (onnx_load, before any pass), so initializer names and dims
 * are the file's. Guarantees: nm_apply checks every line before it replaces anything, so a
 * refusal leaves the graph untouched and nothing is written; tensor views are read, never
 * written; every dims product and byte count is 64-bit and checked.
 */
#include "frontend/namemap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/onnx_load.h"
#include "frontend/safetensors.h"
#include "ref/ref_util.h"

#define NM_MAX_LISTED 8 /* problems named in one message */

/* ---- parsing ----------------------------------------------------------------------------------- */

__attribute__((noreturn, format(printf, 3, 4))) static void line_fail(const char *path, int line,
                                                                     const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ir_die("%s:%d: %s", path, line, msg);
}

/* Splits s at '\t' into at most max fields (s is modified); returns the number of fields. */
static int split_tabs(char *s, char **f, int max)
{
    int n = 0;
    f[n++] = s;
    for (char *p = s; *p; p++)
        if (*p == '\t') {
            *p = 0;
            if (n == max) return max + 1;
            f[n++] = p + 1;
        }
    return n;
}

static bool has_space(const char *s)
{
    return strpbrk(s, " \r\v\f") != NULL;
}

/* Parses one transform field into l. */
static void parse_transform(const char *path, int line, const char *t, struct nm_line *l)
{
    if (strcmp(t, "copy") == 0) l->tr = NM_COPY;
    else if (strcmp(t, "transpose") == 0) l->tr = NM_TRANSPOSE;
    else if (strcmp(t, "reshape") == 0) l->tr = NM_RESHAPE;
    else if (strcmp(t, "concat0") == 0) l->tr = NM_CONCAT0;
    else if (strncmp(t, "scale:", 6) == 0) {
        char *end;
        errno = 0;
        double v = strtod(t + 6, &end);
        if (end == t + 6 || *end || errno || v != v || v > 3.4e38 || v < -3.4e38)
            line_fail(path, line, "transform '%s': expected scale:<float> (a finite number)", t);
        l->tr = NM_SCALE;
        l->scale = (float)v;
    } else {
        line_fail(path, line, "unknown transform '%.60s' (expected copy, transpose, reshape, "
                  "concat0, scale:<float> or -)", t);
    }
}

/* Reads the whole file at path into g's arena, NUL-terminated; *len gets its bytes. */
static char *read_all(struct ir_graph *g, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) ir_die("%s: cannot open the name map: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) ir_die("out of memory");
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *q = realloc(buf, cap *= 2);
            if (!q) ir_die("out of memory");
            buf = q;
        }
    }
    bool err = ferror(f) != 0;
    fclose(f);
    if (err) ir_die("%s: cannot read the name map: %s", path, strerror(errno));
    char *out = ir_alloc(g, n + 1);
    memcpy(out, buf, n);
    out[n] = 0;
    free(buf);
    *len = n;
    return out;
}

void nm_load(struct ir_graph *g, const char *path, struct nm_map *m)
{
    size_t len;
    char *text = read_all(g, path, &len);
    memset(m, 0, sizeof *m);
    m->path = ir_strdup(g, path);
    size_t cap = 256;
    m->lines = ir_alloc(g, cap * sizeof *m->lines);
    int line = 0;
    for (char *s = text; s < text + len;) {
        char *nl = memchr(s, '\n', (size_t)(text + len - s));
        char *end = nl ? nl : text + len;
        line++;
        if (memchr(s, 0, (size_t)(end - s))) line_fail(path, line, "NUL byte in the line");
        *end = 0;
        if (end > s && end[-1] == '\r') end[-1] = 0;
        char *buf = s;
        s = end + 1;
        if (!*buf || buf[0] == '#') continue;
        char *fld[4];
        int nf = split_tabs(buf, fld, 4);
        if (nf != 4)
            line_fail(path, line, "expected 4 tab-separated fields (initializer, component, "
                      "key[,key...], transform), found %s%d", nf > 4 ? "more than " : "",
                      nf > 4 ? 4 : nf);
        static const char *what[4] = {"initializer", "component", "key", "transform"};
        for (int k = 0; k < 4; k++) {
            if (!*fld[k]) line_fail(path, line, "the %s field is empty", what[k]);
            if (k > 0 && has_space(fld[k]))
                line_fail(path, line, "the %s field '%.60s' has a space", what[k], fld[k]);
        }
        if (m->n == cap) {
            struct nm_line *q = ir_alloc(g, 2 * cap * sizeof *q);
            memcpy(q, m->lines, cap * sizeof *q);
            m->lines = q;
            cap *= 2;
        }
        struct nm_line *l = &m->lines[m->n];
        memset(l, 0, sizeof *l);
        l->lineno = line;
        l->init = fld[0];
        if (strcmp(fld[1], "-") == 0) {
            if (strcmp(fld[2], "-") != 0 || strcmp(fld[3], "-") != 0)
                line_fail(path, line, "initializer '%s' has component '-' (kept from the graph): "
                          "its key and transform must be '-' too", l->init);
            l->tr = NM_KEEP;
        } else {
            l->component = fld[1];
            int nk = 1;
            for (const char *p = fld[2]; *p; p++) nk += *p == ',';
            l->keys = ir_alloc(g, (size_t)nk * sizeof *l->keys);
            char *k0 = fld[2];
            for (int k = 0; k < nk; k++) {
                char *c = strchr(k0, ',');
                if (c) *c = 0;
                if (!*k0 || strcmp(k0, "-") == 0)
                    line_fail(path, line, "initializer '%s': key #%d is %s", l->init, k + 1,
                              *k0 ? "'-' (only a kept line has no key)" : "empty");
                l->keys[k] = k0;
                k0 = c ? c + 1 : k0 + strlen(k0);
            }
            l->nkeys = nk;
            if (strcmp(fld[3], "-") == 0)
                line_fail(path, line, "initializer '%s' names keys but its transform is '-'",
                          l->init);
            parse_transform(path, line, fld[3], l);
        }
        for (size_t i = 0; i < m->n; i++)
            if (strcmp(m->lines[i].init, l->init) == 0)
                line_fail(path, line, "initializer '%s' is named twice (first on line %d)",
                          l->init, m->lines[i].lineno);
        m->n++;
    }
    if (m->n == 0) ir_die("%s: the name map has no line (an empty file?)", path);
}

/* ---- the safetensors source ------------------------------------------------------------------- */

static void view_of(const struct st_tensor *t, struct nm_view *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = t->dtype;
    out->rank = t->rank;
    memcpy(out->dims, t->dims, sizeof out->dims);
    out->data = t->data;
    out->nbytes = t->nbytes;
}

static bool st_find(void *ctx, const char *component, const char *key, struct nm_view *out)
{
    (void)component; /* one file = one component */
    const struct st_file *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->t[i].name, key) == 0) {
            view_of(&f->t[i], out);
            return true;
        }
    return false;
}

static void st_at(void *ctx, size_t i, const char **key, struct nm_view *out)
{
    const struct st_file *f = ctx;
    *key = f->t[i].name;
    view_of(&f->t[i], out);
}

void nm_source_safetensors(struct ir_graph *g, const char *path, struct nm_source *src)
{
    struct st_file *f = ir_alloc(g, sizeof *f);
    st_read(g, path, f);
    if (f->n == 0) ir_die("%s: holds no tensor (only a header)", path);
    memset(src, 0, sizeof *src);
    src->name = path;
    src->ctx = f;
    src->n = f->n;
    src->find = st_find;
    src->at = st_at;
}

/* ---- applying ---------------------------------------------------------------------------------- */

static void dims_str(const int64_t *d, int rank, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "[");
    for (int k = 0; k < rank && n < cap; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s%" PRId64, k ? "," : "", d[k]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

static uint64_t numel_of(const int64_t *d, int rank)
{
    uint64_t n = 1;
    for (int k = 0; k < rank; k++) n *= (uint64_t)d[k];
    return n;
}

/* A growing "; "-separated list of the first problems. */
struct problems {
    char text[4096]; /* the list */
    uint32_t count;  /* problems noted (listed or not) */
};

__attribute__((format(printf, 2, 3))) static void problem(struct problems *p, const char *fmt, ...)
{
    if (++p->count > NM_MAX_LISTED) return;
    size_t n = strlen(p->text);
    if (n + 3 >= sizeof p->text) return;
    if (p->count > 1) n += (size_t)snprintf(p->text + n, sizeof p->text - n, ";");
    n += (size_t)snprintf(p->text + n, sizeof p->text - n, " ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->text + n, sizeof p->text - n, fmt, ap);
    va_end(ap);
}

/* The key's tensor converted to dtype dt (F32 or F16 or the source's own), dense in g's arena
 * or in place. */
static const void *converted(struct ir_graph *g, const struct nm_view *v, enum ir_dtype dt,
                             const struct ir_value *like)
{
    if (v->make) { /* made now, for good (only where no lazy fill applies) */
        void *d = ir_alloc(g, v->nbytes ? v->nbytes : 1);
        v->make(v->make_ctx, d);
        struct nm_view made = *v;
        made.data = d;
        made.make = NULL;
        return converted(g, &made, dt, like);
    }
    struct ir_value tmp = *like;
    tmp.dtype = dt;
    IR_ASSERT(st_fill(g, &tmp, v->dtype, v->data, v->nbytes / ir_dtype_size(v->dtype)));
    return tmp.data;
}

/* Checks line l against the initializer val and the source; notes problems. Returns whether
 * the line can be applied. */
static bool check_line(const struct nm_map *m, const struct nm_line *l, const struct ir_value *val,
                       const struct nm_source *src, struct problems *p)
{
    char a[256], b[256];
    dims_str(val->dims, val->rank, b, sizeof b);
    uint64_t sum0 = 0;
    bool ok = true;
    for (int k = 0; k < l->nkeys; k++) {
        struct nm_view v;
        if (!src->find(src->ctx, l->component, l->keys[k], &v)) {
            problem(p, "'%s' (%s:%d): key '%s' of %s is not in the checkpoint", l->init, m->path,
                    l->lineno, l->keys[k], l->component);
            ok = false;
            continue;
        }
        dims_str(v.dims, v.rank, a, sizeof a);
        if (!st_dtype_fits(val->dtype, v.dtype) ||
            (l->tr == NM_SCALE && val->dtype != IR_F32 && val->dtype != IR_F16)) {
            problem(p, "'%s' (%s:%d): key '%s' is %s, which cannot fill the model's %s "
                    "initializer", l->init, m->path, l->lineno, l->keys[k],
                    st_dtype_name(v.dtype), ir_dtype_name(val->dtype));
            ok = false;
            continue;
        }
        bool fit = true;
        switch (l->tr) {
        case NM_COPY:
        case NM_SCALE:
            fit = v.rank == val->rank && numel_of(v.dims, v.rank) == numel_of(val->dims, val->rank);
            for (int d = 0; fit && d < v.rank; d++) fit = v.dims[d] == val->dims[d];
            break;
        case NM_RESHAPE:
            fit = numel_of(v.dims, v.rank) == numel_of(val->dims, val->rank);
            break;
        case NM_TRANSPOSE:
            if (v.rank != 2 || val->rank != 2) {
                problem(p, "'%s' (%s:%d): transpose of key '%s' %s into %s: transpose needs "
                        "2-D tensors", l->init, m->path, l->lineno, l->keys[k], a, b);
                ok = false;
                continue;
            }
            fit = v.dims[0] == val->dims[1] && v.dims[1] == val->dims[0];
            break;
        case NM_CONCAT0:
            fit = v.rank == val->rank && v.rank >= 1;
            for (int d = 1; fit && d < v.rank; d++) fit = v.dims[d] == val->dims[d];
            sum0 += fit ? (uint64_t)v.dims[0] : 0;
            break;
        case NM_KEEP: break;
        }
        if (!fit) {
            static const char *names[] = {"-", "copy", "transpose", "reshape", "concat0", "scale"};
            problem(p, "'%s' (%s:%d): key '%s' is %s, the model's initializer is %s (transform "
                    "%s)", l->init, m->path, l->lineno, l->keys[k], a, b, names[l->tr]);
            ok = false;
        }
    }
    if (ok && l->tr == NM_CONCAT0 && (val->rank < 1 || sum0 != (uint64_t)val->dims[0])) {
        problem(p, "'%s' (%s:%d): the %d keys concatenated on axis 0 make %" PRIu64 " rows, the "
                "model's initializer is %s", l->init, m->path, l->lineno, l->nkeys, sum0, b);
        ok = false;
    }
    return ok;
}

/* 2-D transpose of rows x cols elements of size es, in 32 x 32 tiles (cache lines of both
 * sides reused); 4- and 2-byte elements copied with constant sizes. */
static void transpose_bytes(unsigned char *dst, const unsigned char *src, int64_t rows,
                            int64_t cols, size_t es)
{
    enum { T = 32 };
    for (int64_t i0 = 0; i0 < rows; i0 += T)
        for (int64_t j0 = 0; j0 < cols; j0 += T) {
            const int64_t i1 = i0 + T < rows ? i0 + T : rows, j1 = j0 + T < cols ? j0 + T : cols;
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < j1; j++) {
                    unsigned char *d = dst + ((size_t)j * (size_t)rows + (size_t)i) * es;
                    const unsigned char *p = src + ((size_t)i * (size_t)cols + (size_t)j) * es;
                    if (es == 4) memcpy(d, p, 4);
                    else if (es == 2) memcpy(d, p, 2);
                    else memcpy(d, p, es);
                }
        }
}

/* Lazy fills (struct ir_lazy): a transposed or converted weight is made from the checkpoint's
 * bytes when the weights file is written (or a pass needs it), never held for the compile.
 * Smaller tensors (fewer than NM_LAZY_MIN elements) are made at once. */
#define NM_LAZY_MIN 1024

/* ctx: the checkpoint tensor; p = {transpose (0/1), rows, cols, numel, initializer dtype}. */
struct nm_lazy_src {
    const void *data;   /* its elements (mapped file), or NULL: make gives them */
    enum ir_dtype dtype; /* their dtype */
    void (*make)(const void *make_ctx, void *dst); /* nm_view's (a LoRA-merged weight) */
    const void *make_ctx;
    size_t nbytes;      /* bytes make writes */
};

static void fill_nm(const struct ir_graph *g, const struct ir_lazy *l, void *dst)
{
    const struct nm_lazy_src *s = l->ctx;
    const enum ir_dtype to = (enum ir_dtype)l->p[4]; /* the initializer's dtype */
    (void)g;
    const size_t es = ir_dtype_size(to);
    const uint64_t numel = (uint64_t)l->p[3];
    unsigned char *conv = dst;
    void *made = NULL;
    const void *from = s->data;
    if (s->make) {
        if (!(made = malloc(s->nbytes ? s->nbytes : 1)))
            ir_die("out of memory (%zu bytes of a weight)", s->nbytes);
        s->make(s->make_ctx, made);
        from = made;
    }
    if (l->p[0] && s->dtype == to) { /* transposed straight from the source */
        transpose_bytes(dst, from, l->p[1], l->p[2], es);
        free(made);
        return;
    }
    if (l->p[0]) {
        conv = malloc(numel ? numel * es : 1);
        if (!conv) ir_die("out of memory (%" PRIu64 " elements of a weight)", numel);
    }
    if (s->dtype == to) {
        memcpy(conv, from, numel * es);
    } else {
        for (uint64_t k = 0; k < numel; k++) { /* as st_fill converts */
            float f = st_load_float(from, s->dtype, k);
            if (to == IR_F32) {
                memcpy(conv + 4 * k, &f, 4);
            } else {
                uint16_t h = ref_f32_to_f16(f);
                memcpy(conv + 2 * k, &h, 2);
            }
        }
    }
    free(made);
    if (l->p[0]) {
        transpose_bytes(dst, conv, l->p[1], l->p[2], es);
        free(conv);
    }
}

/* Makes val a lazy constant of checkpoint tensor v (converted to val's dtype, transposed when
 * transpose) where that saves a copy; returns false (val untouched) where it does not apply. */
static bool fill_lazy(struct ir_graph *g, struct ir_value *val, const struct nm_view *v,
                      bool transpose)
{
    const int64_t numel = numel_of(val->dims, val->rank);
    const bool in_place = v->data && v->dtype == val->dtype &&
                          (uintptr_t)v->data % ir_dtype_size(val->dtype) == 0;
    if ((val->dtype != IR_F32 && val->dtype != IR_F16) || (numel < NM_LAZY_MIN && !v->make) ||
        (in_place && !transpose))
        return false;
    if (v->dtype != val->dtype && v->dtype != IR_F32 && v->dtype != IR_F16 && v->dtype != IR_BF16 &&
        v->dtype != IR_F64)
        return false;
    struct nm_lazy_src *s = ir_alloc(g, sizeof *s);
    s->data = v->data;
    s->dtype = v->dtype;
    s->make = v->make;
    s->make_ctx = v->make_ctx;
    s->nbytes = v->nbytes;
    val->lazy = ir_alloc(g, sizeof *val->lazy);
    *(struct ir_lazy *)val->lazy = (struct ir_lazy){
        .fill = fill_nm, .src = {(uint32_t)(val - g->values), IR_NONE, IR_NONE, IR_NONE},
        .p = {transpose, transpose ? v->dims[0] : 0, transpose ? v->dims[1] : 0, numel,
              val->dtype}, .ctx = s};
    val->data = NULL;
    val->nbytes = (size_t)numel * ir_dtype_size(val->dtype);
    return true;
}

/* Fills val from line l (checked by check_line). Returns false (val untouched) when the line's
 * deduplicated keys differ; *bad_key gets the first differing key. */
static bool fill_line(struct ir_graph *g, const struct nm_line *l, struct ir_value *val,
                      const struct nm_source *src, const char **bad_key)
{
    const size_t es = ir_dtype_size(val->dtype);
    const size_t nbytes = (size_t)numel_of(val->dims, val->rank) * es;
    struct nm_view v0;
    IR_ASSERT(src->find(src->ctx, l->component, l->keys[0], &v0));
    if (l->tr == NM_CONCAT0) {
        unsigned char *out = ir_alloc(g, nbytes ? nbytes : 1);
        size_t at = 0;
        for (int k = 0; k < l->nkeys; k++) {
            struct nm_view v;
            IR_ASSERT(src->find(src->ctx, l->component, l->keys[k], &v));
            const void *c = converted(g, &v, val->dtype, val);
            size_t n = v.nbytes / ir_dtype_size(v.dtype) * es;
            memcpy(out + at, c, n);
            at += n;
        }
        IR_ASSERT(at == nbytes);
        val->data = out;
        val->nbytes = nbytes;
        return true;
    }
    if (l->nkeys == 1 && (l->tr == NM_TRANSPOSE || l->tr == NM_COPY || l->tr == NM_RESHAPE) &&
        fill_lazy(g, val, &v0, l->tr == NM_TRANSPOSE))
        return true;
    const void *c0 = converted(g, &v0, val->dtype, val);
    for (int k = 1; k < l->nkeys; k++) { /* deduplicated: every key must hold the same values */
        struct nm_view v;
        IR_ASSERT(src->find(src->ctx, l->component, l->keys[k], &v));
        if (memcmp(converted(g, &v, val->dtype, val), c0, nbytes) != 0) {
            *bad_key = l->keys[k];
            return false;
        }
    }
    if (l->tr == NM_TRANSPOSE) {
        unsigned char *out = ir_alloc(g, nbytes ? nbytes : 1);
        transpose_bytes(out, c0, v0.dims[0], v0.dims[1], es);
        val->data = out;
    } else if (l->tr == NM_SCALE) {
        unsigned char *out = ir_alloc(g, nbytes ? nbytes : 1);
        const size_t n = nbytes / es;
        for (size_t i = 0; i < n; i++) {
            if (val->dtype == IR_F32) {
                float f;
                memcpy(&f, (const unsigned char *)c0 + 4 * i, 4);
                f *= l->scale;
                memcpy(out + 4 * i, &f, 4);
            } else {
                uint16_t h;
                memcpy(&h, (const unsigned char *)c0 + 2 * i, 2);
                h = ref_f32_to_f16(ref_f16_to_f32(h) * l->scale);
                memcpy(out + 2 * i, &h, 2);
            }
        }
        val->data = out;
    } else {
        val->data = c0; /* copy, reshape: in place when the file's bytes fit */
    }
    val->nbytes = nbytes;
    return true;
}

void nm_apply(struct ir_graph *g, const struct nm_map *m, const struct nm_source *src,
              struct nm_result *r)
{
    memset(r, 0, sizeof *r);
    struct problems p = {.text = "", .count = 0};
    uint32_t mapped = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct nm_line *l = &m->lines[i];
        uint32_t v = ir_value_find(g, l->init);
        if (v == IR_NONE || !g->values[v].is_param)
            ir_die("%s:%d: '%s' is not an initializer of the model (a name map of another "
                   "graph?)", m->path, l->lineno, l->init);
        if (l->tr == NM_KEEP) continue;
        mapped++;
        check_line(m, l, &g->values[v], src, &p);
    }
    if (p.count)
        ir_die("%s: %u of %u initializers the name map %s gives cannot be taken from it "
               "(refused; nothing written):%s%s", src->name, p.count, mapped, m->path, p.text,
               p.count > NM_MAX_LISTED ? "; ..." : "");
    for (size_t i = 0; i < m->n; i++) {
        const struct nm_line *l = &m->lines[i];
        if (l->tr == NM_KEEP) {
            r->kept++;
            continue;
        }
        const char *bad = NULL;
        struct ir_value *val = &g->values[ir_value_find(g, l->init)];
        if (!fill_line(g, l, val, src, &bad))
            problem(&p, "'%s' (%s:%d): keys '%s' and '%s' differ in the checkpoint, but the graph "
                    "holds one tensor for both (its exporter merged identical tensors: export "
                    "the graph from a checkpoint where they differ)", l->init, m->path, l->lineno,
                    l->keys[0], bad);
        else
            r->applied++;
    }
    if (p.count)
        ir_die("%s: %u initializers cannot be taken from it (refused; nothing written):%s%s",
               src->name, p.count, p.text, p.count > NM_MAX_LISTED ? "; ..." : "");
    for (size_t i = 0; i < src->n; i++) {
        const char *key;
        struct nm_view v;
        src->at(src->ctx, i, &key, &v);
        bool used = false;
        for (size_t j = 0; j < m->n && !used; j++)
            for (int k = 0; k < m->lines[j].nkeys && !used; k++)
                used = strcmp(m->lines[j].keys[k], key) == 0;
        if (!used) {
            if (r->unused < sizeof r->first_unused / sizeof r->first_unused[0])
                r->first_unused[r->unused] = key;
            r->unused++;
        }
    }
}

void nm_check_filled(const struct ir_graph *g, const char *model, const char *how)
{
    uint32_t n = 0, first = IR_NONE;
    for (uint32_t v = 0; v < g->nvalues; v++)
        if (g->values[v].is_param && g->values[v].data && onnx_is_placeholder(g->values[v].data)) {
            if (first == IR_NONE) first = v;
            n++;
        }
    if (!n) return;
    char d[256];
    dims_str(g->values[first].dims, g->values[first].rank, d, sizeof d);
    ir_die("%s: initializer '%s' %s %s is a placeholder of a weight-free graph and %s (%u "
           "placeholder initializer%s without a value; refused, nothing written)", model,
           g->values[first].name, ir_dtype_name(g->values[first].dtype), d, how, n,
           n == 1 ? "" : "s");
}

/* ---- recovery by value matching ---------------------------------------------------------------- */

/* A hashed checkpoint tensor (or its 2-D transpose). */
struct hkey {
    uint64_t hash;       /* FNV-1a over the float32 bit patterns in order */
    uint64_t numel;      /* element count */
    size_t index;        /* tensor index in the source */
    bool transposed;     /* hash of the 2-D transpose */
};

static uint64_t fnv_f32(const float *x, uint64_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &x[i], 4);
        for (int k = 0; k < 4; k++) {
            h ^= (b >> (8 * k)) & 0xff;
            h *= 1099511628211ull;
        }
    }
    return h;
}

static bool is_float(enum ir_dtype t)
{
    return t == IR_F32 || t == IR_F16 || t == IR_BF16 || t == IR_F64;
}

/* The n elements at data (float dtype t) as float32 (malloc'ed; the caller frees). */
static float *as_f32(const void *data, enum ir_dtype t, uint64_t n)
{
    float *o = malloc(n ? (size_t)n * sizeof *o : 1);
    if (!o) ir_die("out of memory");
    for (uint64_t i = 0; i < n; i++) o[i] = st_load_float(data, t, i);
    return o;
}

uint32_t nm_recover(const struct ir_graph *g, const struct nm_source *src, const char *component,
                    const char *out_path, uint32_t *unmatched)
{
    struct hkey *hk = malloc((2 * src->n + 1) * sizeof *hk);
    if (!hk) ir_die("out of memory");
    size_t nh = 0;
    for (size_t i = 0; i < src->n; i++) {
        const char *key;
        struct nm_view v;
        src->at(src->ctx, i, &key, &v);
        if (!is_float(v.dtype)) continue;
        uint64_t n = numel_of(v.dims, v.rank);
        float *x = as_f32(v.data, v.dtype, n);
        hk[nh++] = (struct hkey){fnv_f32(x, n), n, i, false};
        if (v.rank == 2 && v.dims[0] > 1 && v.dims[1] > 1) {
            float *t = malloc((size_t)n * sizeof *t);
            if (!t) ir_die("out of memory");
            transpose_bytes((unsigned char *)t, (const unsigned char *)x, v.dims[0], v.dims[1], 4);
            hk[nh++] = (struct hkey){fnv_f32(t, n), n, i, true};
            free(t);
        }
        free(x);
    }
    size_t plen = strlen(out_path);
    char *tmp = malloc(plen + 32);
    snprintf(tmp, plen + 32, "%s.tmp%ld", out_path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) ir_die("%s: cannot write the name map: %s", tmp, strerror(errno));
    fprintf(f, "# onnx2cl name map: <initializer>\\t<component>\\t<key>[,<key>...]\\t<transform> "
            "(docs/engine.md)\n# recovered by value matching against %s\n", src->name);
    uint32_t matched = 0, missed = 0;
    for (uint32_t vi = 0; vi < g->nvalues; vi++) {
        const struct ir_value *val = &g->values[vi];
        if (!val->is_param) continue;
        if (!is_float(val->dtype) || !val->data || onnx_is_placeholder(val->data)) {
            if (is_float(val->dtype)) missed++;
            fprintf(f, "%s\t-\t-\t-\n", val->name);
            continue;
        }
        uint64_t n = numel_of(val->dims, val->rank);
        float *x = as_f32(val->data, val->dtype, n);
        uint64_t h = fnv_f32(x, n);
        /* keys holding these values as is (copy/reshape) and transposed; as-is wins */
        const char *plain[64], *trans[64];
        int np = 0, nt = 0;
        bool plain_same_dims = true;
        for (size_t k = 0; k < nh; k++) {
            if (hk[k].hash != h || hk[k].numel != n) continue;
            const char *key;
            struct nm_view v;
            src->at(src->ctx, hk[k].index, &key, &v);
            float *y = as_f32(v.data, v.dtype, n);
            bool eq;
            if (hk[k].transposed) {
                if (val->rank != 2 || val->dims[0] != v.dims[1] || val->dims[1] != v.dims[0]) {
                    free(y);
                    continue;
                }
                float *t = malloc((size_t)n * sizeof *t);
                if (!t) ir_die("out of memory");
                transpose_bytes((unsigned char *)t, (const unsigned char *)y, v.dims[0], v.dims[1],
                                4);
                eq = memcmp(t, x, (size_t)n * 4) == 0;
                free(t);
                if (eq && nt < 64) trans[nt++] = key;
            } else {
                eq = memcmp(y, x, (size_t)n * 4) == 0;
                if (eq && np < 64) {
                    bool same = v.rank == val->rank;
                    for (int d = 0; same && d < v.rank; d++) same = v.dims[d] == val->dims[d];
                    plain_same_dims = plain_same_dims && same;
                    plain[np++] = key;
                }
            }
            free(y);
        }
        free(x);
        const char **keys = np ? plain : trans;
        int nk = np ? np : nt;
        if (!nk) {
            fprintf(f, "%s\t-\t-\t-\n", val->name);
            missed++;
            continue;
        }
        fprintf(f, "%s\t%s\t", val->name, component);
        for (int k = 0; k < nk; k++) fprintf(f, "%s%s", k ? "," : "", keys[k]);
        fprintf(f, "\t%s\n", np ? (plain_same_dims ? "copy" : "reshape") : "transpose");
        matched++;
    }
    free(hk);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    if (bad || rename(tmp, out_path) != 0) {
        int e = errno;
        unlink(tmp);
        ir_die("%s: cannot write the name map: %s", out_path, strerror(e));
    }
    free(tmp);
    if (unmatched) *unmatched = missed;
    return matched;
}
