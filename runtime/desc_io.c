/* desc_io.c — the descriptor file (.o2d): o2r_desc_serialize writes a struct o2r_model_desc as
 * bytes, o2r_desc_read reads them back, o2r_desc_free releases what it read.
 *
 * What: the layout documented in onnx2cl_rt.h ("Descriptor file layout"). The compiler writes
 * it (codegen/emit_desc.c) through o2r_desc_serialize, so writer and reader share this file.
 * Assumes: nothing of the file: it may be truncated, corrupt or hostile.
 * Guarantees: never exits or aborts; every read is bounds-checked against the file, every count
 * against the bytes it would need before anything is allocated, every table index (buffer,
 * argument, launch) against its table, every string is NUL-terminated with no NUL inside; an
 * error names the file, the byte offset where relevant and what is wrong. Portable C (stdio):
 * the only platform call is o2r_fopen_regular / o2r_file_regular_size (platform.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "rt_internal.h"

#define STR_NULL 0xffffffffu
#define BLOB_NULL UINT64_MAX
/* .o2d files larger than this are refused (a full SD UNet's is a few MB). */
#define DESC_MAX_BYTES ((uint64_t)1 << 31)

/* ---- writer -------------------------------------------------------------------------------- */

/* A growing byte buffer; `bad` is set on allocation failure or an unwritable value. */
struct wbuf {
    unsigned char *p;
    size_t n, cap;
    o2r_status bad;
};

static void w_bytes(struct wbuf *w, const void *src, size_t n)
{
    if (w->bad)
        return;
    if (n > w->cap - w->n) {
        size_t cap = w->cap ? w->cap : 4096;
        while (n > cap - w->n) {
            if (cap > SIZE_MAX / 2) {
                w->bad = O2R_ERR_NOMEM;
                return;
            }
            cap *= 2;
        }
        unsigned char *q = realloc(w->p, cap);
        if (!q) {
            w->bad = O2R_ERR_NOMEM;
            return;
        }
        w->p = q;
        w->cap = cap;
    }
    if (n)
        memcpy(w->p + w->n, src, n);
    w->n += n;
}

static void w_u32(struct wbuf *w, uint32_t v)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    w_bytes(w, b, 4);
}

static void w_u64(struct wbuf *w, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    w_bytes(w, b, 8);
}

static void w_str(struct wbuf *w, const char *s)
{
    if (!s) {
        w_u32(w, STR_NULL);
        return;
    }
    size_t n = strlen(s);
    if (n >= STR_NULL) {
        w->bad = O2R_ERR_ARG;
        return;
    }
    w_u32(w, (uint32_t)n);
    w_bytes(w, s, n + 1); /* with its NUL */
}

static void w_blob(struct wbuf *w, const void *data, uint64_t n)
{
    static const unsigned char nul = 0;
    if (!data)
        n = 0; /* an empty blob reads back as NULL */
    if (n > SIZE_MAX - 1) {
        w->bad = O2R_ERR_ARG;
        return;
    }
    w_u64(w, n);
    if (n)
        w_bytes(w, data, (size_t)n);
    w_bytes(w, &nul, 1);
}

static void w_io(struct wbuf *w, const struct o2r_io *io)
{
    if (io->rank < 0 || io->rank > O2R_MAX_RANK) {
        w->bad = O2R_ERR_ARG;
        return;
    }
    w_str(w, io->name);
    w_u32(w, (uint32_t)io->dtype);
    w_u32(w, (uint32_t)io->rank);
    for (int k = 0; k < io->rank; k++)
        w_u64(w, (uint64_t)io->dims[k]);
    w_u32(w, (uint32_t)io->buf);
    w_u64(w, io->nbytes);
}

o2r_status o2r_desc_serialize(const struct o2r_model_desc *d, unsigned char **data, size_t *len)
{
    if (!d || !data || !len)
        return O2R_ERR_ARG;
    *data = NULL;
    *len = 0;
    if ((d->n_buffers && !d->buffers) || (d->n_args && !d->args) ||
        (d->n_launches && !d->launches) || (d->n_inputs && !d->inputs) ||
        (d->n_outputs && !d->outputs) || (d->n_sources && !d->sources) ||
        (d->n_tunables && !d->tunables) || (d->n_stored && !d->stored) ||
        (d->n_repacks && !d->repacks) || d->weights_file_bytes > d->weights_bytes ||
        (d->weights_file_bytes < d->weights_bytes && !d->const_data))
        return O2R_ERR_ARG;
    struct wbuf w = {0};
    w_bytes(&w, O2R_DESC_MAGIC, sizeof O2R_DESC_MAGIC);
    w_u32(&w, O2R_DESC_VERSION);
    w_u32(&w, d->abi_version);
    w_u64(&w, 0); /* file bytes: patched below */
    const uint32_t counts[9] = {d->n_buffers, d->n_args,    d->n_launches,
                                d->n_inputs,  d->n_outputs, d->n_sources,
                                d->n_tunables, d->n_stored, d->n_repacks};
    for (int i = 0; i < 9; i++)
        w_u32(&w, counts[i]);
    w_u32(&w, 0);
    w_str(&w, d->name);
    w_str(&w, d->model_hash);
    w_str(&w, d->build_options);
    w_blob(&w, d->kernel_source, d->kernel_source ? d->kernel_source_len : 0);
    w_u64(&w, d->arena_bytes);
    w_u64(&w, d->weights_bytes);
    w_u64(&w, d->weights_checksum);
    w_u64(&w, d->weights_file_bytes);
    w_u32(&w, d->weights_dtype);
    w_blob(&w, d->const_data, d->weights_bytes - d->weights_file_bytes);
    for (uint32_t i = 0; i < d->n_buffers; i++) {
        const struct o2r_buffer *b = &d->buffers[i];
        w_u64(&w, b->offset);
        w_u64(&w, b->size);
        w_u32(&w, b->space);
        w_u32(&w, b->view_of);
        w_str(&w, b->name);
    }
    for (uint32_t i = 0; i < d->n_args; i++) {
        const struct o2r_arg *a = &d->args[i];
        uint64_t v = 0;
        uint32_t bits;
        switch (a->kind) {
        case O2R_ARG_BUF: v = (uint64_t)(int64_t)a->u.buf; break;
        case O2R_ARG_I32: v = (uint64_t)(int64_t)a->u.i32; break;
        case O2R_ARG_I64: v = (uint64_t)a->u.i64; break;
        case O2R_ARG_F32: /* every NaN as the generated C writes it (__builtin_nanf("")) */
            memcpy(&bits, &a->u.f32, 4);
            v = a->u.f32 != a->u.f32 ? 0x7fc00000u : bits;
            break;
        case O2R_ARG_LOCAL: v = a->u.local_bytes; break;
        default: w.bad = O2R_ERR_ARG; break;
        }
        w_u32(&w, a->kind);
        w_u64(&w, v);
    }
    for (uint32_t i = 0; i < d->n_launches; i++) {
        const struct o2r_launch *l = &d->launches[i];
        w_str(&w, l->kernel);
        w_u32(&w, l->work_dim);
        for (int k = 0; k < 3; k++)
            w_u64(&w, l->gws[k]);
        for (int k = 0; k < 3; k++)
            w_u64(&w, l->lws[k]);
        w_u32(&w, l->first_arg);
        w_u32(&w, l->nargs);
        w_str(&w, l->node);
        w_str(&w, l->op);
        w_u32(&w, l->variants);
        w_str(&w, l->check);
    }
    for (uint32_t i = 0; i < d->n_inputs; i++)
        w_io(&w, &d->inputs[i]);
    for (uint32_t i = 0; i < d->n_outputs; i++)
        w_io(&w, &d->outputs[i]);
    for (uint32_t i = 0; i < d->n_sources; i++) {
        const struct o2r_source *s = &d->sources[i];
        w_u32(&w, s->variants == O2R_VARIANT_ALL ? 0 : s->variants);
        w_blob(&w, s->text, s->text ? s->len : 0);
    }
    for (uint32_t i = 0; i < d->n_tunables; i++) {
        const struct o2r_tunable *t = &d->tunables[i];
        w_u32(&w, t->family);
        w_u32(&w, t->launch);
        w_u32(&w, t->span);
        w_u64(&w, (uint64_t)t->rows);
        w_u64(&w, (uint64_t)t->cols);
        w_u64(&w, (uint64_t)t->k);
        w_u64(&w, (uint64_t)t->z);
        w_u32(&w, (uint32_t)t->kc_arg);
        w_u32(&w, t->out_arg);
        w_u32(&w, t->n_out);
        w_u32(&w, t->row_mult);
        const int32_t tl[5] = {t->tiles.tm, t->tiles.tn, t->tiles.tk, t->tiles.rm, t->tiles.rn};
        for (int k = 0; k < 5; k++)
            w_u32(&w, (uint32_t)tl[k]);
        w_u32(&w, t->pinned);
        w_str(&w, t->macro);
        w_str(&w, t->kbase);
        w_str(&w, t->ksuffix);
        w_str(&w, t->margs);
    }
    for (uint32_t i = 0; i < d->n_stored; i++) {
        w_u32(&w, d->stored[i].buf);
        w_str(&w, d->stored[i].layout);
        w_str(&w, d->stored[i].node);
    }
    for (uint32_t i = 0; i < d->n_repacks; i++) {
        const struct o2r_repack *r = &d->repacks[i];
        const uint32_t u[6] = {r->buf, r->kind, r->elem_bytes, r->src_ocb, r->dst_ocb, r->flat};
        for (int k = 0; k < 6; k++)
            w_u32(&w, u[k]);
        const int64_t s[4] = {r->oc, r->cin, r->kh, r->kw};
        for (int k = 0; k < 4; k++)
            w_u64(&w, (uint64_t)s[k]);
    }
    if (!w.bad) {
        uint64_t total = (uint64_t)w.n + 8;
        for (int i = 0; i < 8; i++)
            w.p[16 + i] = (unsigned char)(total >> (8 * i));
        w_u64(&w, o2r_weights_checksum(w.p, w.n));
    }
    if (w.bad) {
        free(w.p);
        return w.bad;
    }
    *data = w.p;
    *len = w.n;
    return O2R_OK;
}

/* ---- reader -------------------------------------------------------------------------------- */

/* What o2r_desc_read allocates: the descriptor first (o2r_desc_free casts back), the file's
 * bytes (strings and blobs point into them) and the tables. */
struct desc_file {
    struct o2r_model_desc d;
    unsigned char *bytes;
    struct o2r_buffer *buffers;
    struct o2r_arg *args;
    struct o2r_launch *launches;
    struct o2r_io *inputs, *outputs;
    struct o2r_source *sources;
    struct o2r_tunable *tunables;
    struct o2r_stored *stored;
    struct o2r_repack *repacks;
};

/* A cursor over the file; the first failure stops every later read (ok = 0, message in err). */
struct rd {
    unsigned char *p;
    uint64_t pos, end; /* end: where the tables stop (the checksum's offset) */
    const char *path;
    char *err;
    size_t cap;
    int ok;
    const char *what; /* the field being read, for messages */
};

static void rd_fail(struct rd *r, const char *fmt, const char *detail)
{
    if (!r->ok)
        return;
    r->ok = 0;
    char msg[512];
    snprintf(msg, sizeof msg, fmt, detail ? detail : "");
    o2r_fmt(r->err, r->cap, "descriptor file %s: byte %llu (%s): %s", r->path,
            (unsigned long long)r->pos, r->what ? r->what : "?", msg);
}

static int rd_need(struct rd *r, uint64_t n)
{
    if (!r->ok)
        return 0;
    if (n > r->end - r->pos) {
        rd_fail(r, "the file ends inside it (truncated or corrupt)%s", NULL);
        return 0;
    }
    return 1;
}

static uint32_t rd_u32(struct rd *r)
{
    if (!rd_need(r, 4))
        return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)r->p[r->pos + (uint64_t)i] << (8 * i);
    r->pos += 4;
    return v;
}

static uint64_t rd_u64(struct rd *r)
{
    if (!rd_need(r, 8))
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[r->pos + (uint64_t)i] << (8 * i);
    r->pos += 8;
    return v;
}

/* A string (nullable: NULL allowed); points into the file's bytes. */
static const char *rd_str(struct rd *r, int nullable)
{
    uint32_t n = rd_u32(r);
    if (!r->ok)
        return NULL;
    if (n == STR_NULL) {
        if (!nullable)
            rd_fail(r, "a string that must be present is NULL%s", NULL);
        return NULL;
    }
    if (!rd_need(r, (uint64_t)n + 1))
        return NULL;
    const char *s = (const char *)r->p + r->pos;
    if (memchr(s, 0, n) || s[n] != 0) {
        rd_fail(r, "a string holds a NUL or is not NUL-terminated%s", NULL);
        return NULL;
    }
    r->pos += (uint64_t)n + 1;
    return s;
}

/* A blob; *len receives its length. NULL for a NULL or empty blob. */
static const unsigned char *rd_blob(struct rd *r, uint64_t *len)
{
    *len = 0;
    uint64_t n = rd_u64(r);
    if (!r->ok || n == BLOB_NULL)
        return NULL;
    if (n >= r->end - r->pos) { /* also its NUL */
        rd_fail(r, "a blob runs past the end of the file%s", NULL);
        return NULL;
    }
    const unsigned char *b = r->p + r->pos;
    if (b[n] != 0) {
        rd_fail(r, "a blob is not followed by its NUL byte%s", NULL);
        return NULL;
    }
    r->pos += n + 1;
    *len = n;
    return n ? b : NULL;
}

/* Reads the whole regular file into a new buffer. */
static o2r_status read_all(const char *path, unsigned char **out, uint64_t *size, char *err,
                           size_t cap)
{
    int not_regular = 0;
    FILE *f = o2r_fopen_regular(path, &not_regular);
    if (!f) {
        if (not_regular)
            o2r_fmt(err, cap, "descriptor file %s is not a regular file", path);
        else
            o2r_fmt(err, cap, "cannot open descriptor file %s: %s", path, strerror(errno));
        return O2R_ERR_IO;
    }
    uint64_t n = 0;
    if (o2r_file_regular_size(f, &n) != 1) {
        fclose(f);
        o2r_fmt(err, cap, "descriptor file %s: cannot determine its size", path);
        return O2R_ERR_IO;
    }
    if (n > DESC_MAX_BYTES) {
        fclose(f);
        o2r_fmt(err, cap, "descriptor file %s: %llu bytes, more than any descriptor (%llu)", path,
                (unsigned long long)n, (unsigned long long)DESC_MAX_BYTES);
        return O2R_ERR_FORMAT;
    }
    unsigned char *p = o2r_malloc((size_t)n + 1);
    if (!p) {
        fclose(f);
        o2r_fmt(err, cap, "descriptor file %s: out of host memory (%llu bytes)", path,
                (unsigned long long)n);
        return O2R_ERR_NOMEM;
    }
    size_t got = n ? fread(p, 1, (size_t)n, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        o2r_free(p);
        o2r_fmt(err, cap, "descriptor file %s: read failed (%llu of %llu bytes)", path,
                (unsigned long long)got, (unsigned long long)n);
        return O2R_ERR_IO;
    }
    *out = p;
    *size = n;
    return O2R_OK;
}

void o2r_desc_free(struct o2r_model_desc *desc)
{
    if (!desc)
        return;
    struct desc_file *f = (struct desc_file *)desc;
    o2r_free(f->buffers);
    o2r_free(f->args);
    o2r_free(f->launches);
    o2r_free(f->inputs);
    o2r_free(f->outputs);
    o2r_free(f->sources);
    o2r_free(f->tunables);
    o2r_free(f->stored);
    o2r_free(f->repacks);
    o2r_free(f->bytes);
    o2r_free(f);
}

/* Allocates a table of n records of `size` bytes that take at least `min` bytes each in the
 * file: refused before allocating when the rest of the file cannot hold them. */
static void *rd_table(struct rd *r, uint32_t n, size_t size, uint64_t min, const char *what)
{
    if (!r->ok || !n)
        return NULL;
    r->what = what;
    if ((uint64_t)n > (r->end - r->pos) / min) {
        char d[96];
        snprintf(d, sizeof d, "%u %s need at least %llu bytes", (unsigned)n, what,
                 (unsigned long long)((uint64_t)n * min));
        rd_fail(r, "count too large for the file: %s", d);
        return NULL;
    }
    void *t = o2r_calloc(n, size);
    if (!t)
        rd_fail(r, "out of host memory%s", NULL);
    return t;
}

static void rd_io(struct rd *r, struct o2r_io *io, uint32_t n_buffers)
{
    io->name = rd_str(r, 0);
    io->dtype = (int32_t)rd_u32(r);
    uint32_t rank = rd_u32(r);
    if (r->ok && rank > O2R_MAX_RANK) {
        rd_fail(r, "rank above 8%s", NULL);
        return;
    }
    io->rank = (int32_t)rank;
    for (uint32_t k = 0; k < rank; k++)
        io->dims[k] = (int64_t)rd_u64(r);
    io->buf = (int32_t)rd_u32(r);
    io->nbytes = rd_u64(r);
    if (r->ok && (io->buf < 0 || (uint32_t)io->buf >= n_buffers))
        rd_fail(r, "buffer index outside the buffer table%s", NULL);
    if (r->ok && o2r_dtype_size(io->dtype) == 0)
        rd_fail(r, "unknown element type%s", NULL);
}

/* Checks the header; O2R_OK or O2R_ERR_FORMAT with a message. */
static o2r_status check_header(const unsigned char *p, uint64_t n, const char *path, char *err,
                               size_t cap)
{
    if (n < 8 || memcmp(p, O2R_DESC_MAGIC, sizeof O2R_DESC_MAGIC) != 0) {
        o2r_fmt(err, cap, "descriptor file %s: not an onnx2cl descriptor (no \"%s\" magic; "
                "write one with onnx2cl MODEL.onnx -o OUT.o2d)", path, O2R_DESC_MAGIC);
        return O2R_ERR_FORMAT;
    }
    if (n < O2R_DESC_HEADER + 8) {
        o2r_fmt(err, cap, "descriptor file %s: truncated: %llu bytes, shorter than its header",
                path, (unsigned long long)n);
        return O2R_ERR_FORMAT;
    }
    uint32_t ver = 0, abi = 0;
    uint64_t total = 0, sum = 0;
    for (int i = 0; i < 4; i++) {
        ver |= (uint32_t)p[8 + i] << (8 * i);
        abi |= (uint32_t)p[12 + i] << (8 * i);
    }
    for (int i = 0; i < 8; i++)
        total |= (uint64_t)p[16 + i] << (8 * i);
    if (ver != O2R_DESC_VERSION) {
        o2r_fmt(err, cap, "descriptor file %s: format version %u, this runtime reads version "
                "%u: recompile the model with a matching onnx2cl", path, (unsigned)ver,
                (unsigned)O2R_DESC_VERSION);
        return O2R_ERR_FORMAT;
    }
    if (abi != O2R_ABI_VERSION) {
        o2r_fmt(err, cap, "descriptor file %s: written for runtime ABI %u, this runtime is ABI "
                "%d: recompile the model with a matching onnx2cl", path, (unsigned)abi,
                O2R_ABI_VERSION);
        return O2R_ERR_FORMAT;
    }
    if (total != n) {
        o2r_fmt(err, cap, "descriptor file %s: %s: the header says %llu bytes, the file has %llu",
                path, total > n ? "truncated" : "trailing bytes or a damaged size field",
                (unsigned long long)total, (unsigned long long)n);
        return O2R_ERR_FORMAT;
    }
    for (int i = 0; i < 8; i++)
        sum |= (uint64_t)p[n - 8 + (uint64_t)i] << (8 * i);
    uint64_t have = o2r_weights_checksum(p, (size_t)(n - 8));
    if (sum != have) {
        o2r_fmt(err, cap, "descriptor file %s: checksum mismatch (stored %016llx, computed "
                "%016llx): the file is corrupt", path, (unsigned long long)sum,
                (unsigned long long)have);
        return O2R_ERR_FORMAT;
    }
    if (p[60] | p[61] | p[62] | p[63]) {
        o2r_fmt(err, cap, "descriptor file %s: reserved header bytes 60-63 are not zero", path);
        return O2R_ERR_FORMAT;
    }
    return O2R_OK;
}

/* Parses the body of a checked file into f (tables allocated into f). */
static void parse(struct rd *r, struct desc_file *f)
{
    struct o2r_model_desc *d = &f->d;
    r->pos = 24;
    r->what = "header counts";
    uint32_t c[9];
    for (int i = 0; i < 9; i++)
        c[i] = rd_u32(r);
    r->pos = O2R_DESC_HEADER;
    d->abi_version = O2R_ABI_VERSION;
    r->what = "model name";
    d->name = rd_str(r, 0);
    r->what = "model hash";
    d->model_hash = rd_str(r, 0);
    r->what = "build options";
    d->build_options = rd_str(r, 0);
    r->what = "kernel source";
    uint64_t n;
    d->kernel_source = (const char *)rd_blob(r, &n);
    d->kernel_source_len = n;
    r->what = "sizes";
    d->arena_bytes = rd_u64(r);
    d->weights_bytes = rd_u64(r);
    d->weights_checksum = rd_u64(r);
    d->weights_file_bytes = rd_u64(r);
    d->weights_dtype = rd_u32(r);
    if (r->ok && d->weights_file_bytes > d->weights_bytes)
        rd_fail(r, "weights file part larger than the weights region%s", NULL);
    r->what = "constant data";
    d->const_data = rd_blob(r, &n);
    if (r->ok && n != d->weights_bytes - d->weights_file_bytes)
        rd_fail(r, "constant data size differs from weights_bytes - weights_file_bytes%s", NULL);

    d->n_buffers = c[0];
    f->buffers = rd_table(r, c[0], sizeof *f->buffers, 29, "buffers");
    for (uint32_t i = 0; r->ok && i < c[0]; i++) {
        struct o2r_buffer *b = &f->buffers[i];
        b->offset = rd_u64(r);
        b->size = rd_u64(r);
        uint32_t space = rd_u32(r);
        b->view_of = rd_u32(r);
        b->name = rd_str(r, 1);
        if (r->ok && (space > O2R_SPACE_WEIGHTS || b->view_of > c[0]))
            rd_fail(r, "a buffer's space or view index is out of range%s", NULL);
        b->space = (uint8_t)space;
    }
    d->n_args = c[1];
    f->args = rd_table(r, c[1], sizeof *f->args, 12, "arguments");
    for (uint32_t i = 0; r->ok && i < c[1]; i++) {
        struct o2r_arg *a = &f->args[i];
        uint32_t kind = rd_u32(r);
        uint64_t v = rd_u64(r);
        uint32_t bits = (uint32_t)v;
        a->kind = (uint8_t)kind;
        switch (kind) {
        case O2R_ARG_BUF:
            if (v >= c[0])
                rd_fail(r, "a buffer argument names a buffer outside the table%s", NULL);
            a->u.buf = (int32_t)v;
            break;
        case O2R_ARG_I32: a->u.i32 = (int32_t)(uint32_t)v; break;
        case O2R_ARG_I64: a->u.i64 = (int64_t)v; break;
        case O2R_ARG_F32: memcpy(&a->u.f32, &bits, 4); break;
        case O2R_ARG_LOCAL: a->u.local_bytes = v; break;
        default: rd_fail(r, "unknown argument kind%s", NULL); break;
        }
    }
    d->n_launches = c[2];
    f->launches = rd_table(r, c[2], sizeof *f->launches, 84, "launches");
    for (uint32_t i = 0; r->ok && i < c[2]; i++) {
        struct o2r_launch *l = &f->launches[i];
        l->kernel = rd_str(r, 1);
        l->work_dim = rd_u32(r);
        for (int k = 0; k < 3; k++)
            l->gws[k] = rd_u64(r);
        for (int k = 0; k < 3; k++)
            l->lws[k] = rd_u64(r);
        l->first_arg = rd_u32(r);
        l->nargs = rd_u32(r);
        l->node = rd_str(r, 0);
        l->op = rd_str(r, 0);
        l->variants = rd_u32(r);
        l->check = rd_str(r, 1);
        if (r->ok && ((uint64_t)l->first_arg + l->nargs > c[1] || l->variants > O2R_VARIANT_ALL))
            rd_fail(r, "a launch's argument range or kernel classes are out of range%s", NULL);
    }
    d->n_inputs = c[3];
    f->inputs = rd_table(r, c[3], sizeof *f->inputs, 25, "inputs");
    for (uint32_t i = 0; r->ok && i < c[3]; i++)
        rd_io(r, &f->inputs[i], c[0]);
    d->n_outputs = c[4];
    f->outputs = rd_table(r, c[4], sizeof *f->outputs, 25, "outputs");
    for (uint32_t i = 0; r->ok && i < c[4]; i++)
        rd_io(r, &f->outputs[i], c[0]);
    d->n_sources = c[5];
    f->sources = rd_table(r, c[5], sizeof *f->sources, 13, "source segments");
    for (uint32_t i = 0; r->ok && i < c[5]; i++) {
        struct o2r_source *s = &f->sources[i];
        s->variants = rd_u32(r);
        s->text = (const char *)rd_blob(r, &n);
        s->len = n;
        if (r->ok && !s->text)
            s->text = ""; /* an empty segment */
        if (r->ok && s->variants > O2R_VARIANT_ALL)
            rd_fail(r, "unknown kernel class mask%s", NULL);
    }
    d->n_tunables = c[6];
    f->tunables = rd_table(r, c[6], sizeof *f->tunables, 104, "tunables");
    for (uint32_t i = 0; r->ok && i < c[6]; i++) {
        struct o2r_tunable *t = &f->tunables[i];
        t->family = rd_u32(r);
        t->launch = rd_u32(r);
        t->span = rd_u32(r);
        t->rows = (int64_t)rd_u64(r);
        t->cols = (int64_t)rd_u64(r);
        t->k = (int64_t)rd_u64(r);
        t->z = (int64_t)rd_u64(r);
        t->kc_arg = (int32_t)rd_u32(r);
        t->out_arg = rd_u32(r);
        t->n_out = rd_u32(r);
        t->row_mult = rd_u32(r);
        t->tiles.tm = (int32_t)rd_u32(r);
        t->tiles.tn = (int32_t)rd_u32(r);
        t->tiles.tk = (int32_t)rd_u32(r);
        t->tiles.rm = (int32_t)rd_u32(r);
        t->tiles.rn = (int32_t)rd_u32(r);
        t->pinned = rd_u32(r);
        t->macro = rd_str(r, 0);
        t->kbase = rd_str(r, 0);
        t->ksuffix = rd_str(r, 0);
        t->margs = rd_str(r, 0);
        if (r->ok && (t->span < 1 || t->launch >= c[2] || t->span > c[2] - t->launch))
            rd_fail(r, "a tunable's launch range is outside the launch table%s", NULL);
    }
    d->n_stored = c[7];
    f->stored = rd_table(r, c[7], sizeof *f->stored, 14, "stored tensors");
    for (uint32_t i = 0; r->ok && i < c[7]; i++) {
        f->stored[i].buf = rd_u32(r);
        f->stored[i].layout = rd_str(r, 0);
        f->stored[i].node = rd_str(r, 0);
        if (r->ok && f->stored[i].buf >= c[0])
            rd_fail(r, "a stored tensor's buffer is outside the buffer table%s", NULL);
    }
    d->n_repacks = c[8];
    f->repacks = rd_table(r, c[8], sizeof *f->repacks, 56, "repacks");
    for (uint32_t i = 0; r->ok && i < c[8]; i++) {
        struct o2r_repack *p = &f->repacks[i];
        p->buf = rd_u32(r);
        p->kind = rd_u32(r);
        p->elem_bytes = rd_u32(r);
        p->src_ocb = rd_u32(r);
        p->dst_ocb = rd_u32(r);
        p->flat = rd_u32(r);
        p->oc = (int64_t)rd_u64(r);
        p->cin = (int64_t)rd_u64(r);
        p->kh = (int64_t)rd_u64(r);
        p->kw = (int64_t)rd_u64(r);
        if (r->ok && p->buf >= c[0])
            rd_fail(r, "a repack's buffer is outside the buffer table%s", NULL);
    }
    r->what = "end of the tables";
    if (r->ok && r->pos != r->end)
        rd_fail(r, "bytes left between the last table and the checksum%s", NULL);
    d->buffers = f->buffers;
    d->args = f->args;
    d->launches = f->launches;
    d->inputs = f->inputs;
    d->outputs = f->outputs;
    d->sources = f->sources;
    d->tunables = f->tunables;
    d->stored = f->stored;
    d->repacks = f->repacks;
}

o2r_status o2r_desc_read(const char *path, struct o2r_model_desc **out, char *err, size_t cap)
{
    if (out)
        *out = NULL;
    if (!path || !out) {
        o2r_fmt(err, cap, "o2r_desc_read: NULL path or result");
        return O2R_ERR_ARG;
    }
    unsigned char *bytes = NULL;
    uint64_t n = 0;
    o2r_status st = read_all(path, &bytes, &n, err, cap);
    if (st != O2R_OK)
        return st;
    st = check_header(bytes, n, path, err, cap);
    if (st != O2R_OK) {
        o2r_free(bytes);
        return st;
    }
    struct desc_file *f = o2r_calloc(1, sizeof *f);
    if (!f) {
        o2r_free(bytes);
        o2r_fmt(err, cap, "descriptor file %s: out of host memory", path);
        return O2R_ERR_NOMEM;
    }
    f->bytes = bytes;
    struct rd r = {bytes, 0, n - 8, path, err, cap, 1, NULL};
    parse(&r, f);
    if (!r.ok) {
        o2r_desc_free(&f->d);
        return O2R_ERR_FORMAT;
    }
    *out = &f->d;
    return O2R_OK;
}
