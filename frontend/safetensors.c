/* safetensors.c — `onnx2cl --weights-from FILE.safetensors`: take initializer values from a
 * safetensors file (matched by name) instead of the ONNX file.
 *
 * Format (https://github.com/huggingface/safetensors): 8-byte little-endian header length N,
 * N bytes of JSON header, then the data region. The header is one object: each key a tensor name
 * mapping to {"dtype": "F32", "shape": [d0, ...], "data_offsets": [begin, end]} (offsets relative
 * to the data region, end exclusive), plus an optional "__metadata__" object of strings.
 * What: st_apply() maps the file, parses the header with a strict JSON subset parser (objects,
 * arrays of non-negative integers, strings with every JSON escape; no floats, no duplicates),
 * checks every entry (known dtype; shape elements and bytes without overflow; offsets inside the
 * data region; end - begin == elements x dtype size), matches it to an initializer of the same
 * name and the same dims, and replaces that initializer's data. Conversions: any float dtype
 * (F64, F32, F16, BF16) into a float32 initializer; F32/F16 into a float16 one (rounded to
 * nearest even); other dtypes must equal the initializer's.
 * Errors: fatal (ir_die, exit 1) naming the file and the tensor; tensors that match no
 * initializer, or whose dims or dtype do not fit it, are all listed (up to 20) in one message.
 * Nothing is written by this step, so a refusal leaves no output behind.
 * Assumes: run right after onnx_load, before any pass (initializers still as imported).
 * Guarantees: data used in place when aligned to its element size and of the initializer's
 * dtype (the file stays mapped for the process, like external data), else copied into the
 * graph's arena; never reads outside the file.
 */
#include "frontend/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ref/ref.h"
#include "ref/ref_util.h"

#define ST_MAX_HEADER (100u << 20) /* the format's own limit on the JSON header */
#define ST_MAX_LISTED 20           /* problems named in one message */

/* One tensor entry of the header. */
struct st_entry {
    char *name;                    /* tensor name (decoded) */
    char dtype[8];                 /* "F32", ... */
    int rank;                      /* number of dims */
    int64_t dims[IR_MAX_RANK];     /* dims */
    uint64_t begin, end;           /* data_offsets */
};

/* Parser state over the header bytes. */
struct st_parser {
    struct ir_graph *g;   /* arena for decoded strings */
    const char *path;     /* file name for messages */
    const char *start;    /* first header byte (for offsets in messages) */
    const char *s, *end;  /* current position, end of the header bytes */
};

__attribute__((noreturn, format(printf, 2, 3))) static void st_fail(const struct st_parser *p,
                                                                   const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ir_die("%s: safetensors header: %s", p->path, msg);
}

static void skip_ws(struct st_parser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static void expect(struct st_parser *p, char c, const char *where)
{
    skip_ws(p);
    if (p->s >= p->end || *p->s != c)
        st_fail(p, "expected '%c' %s at header byte %td", c, where, p->s - p->start);
    p->s++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static unsigned read_hex4(struct st_parser *p)
{
    if (p->end - p->s < 4) st_fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[i]);
        if (h < 0) st_fail(p, "bad \\u escape");
        v = v * 16 + (unsigned)h;
    }
    p->s += 4;
    return v;
}

/* A JSON string, decoded to UTF-8 (NUL-terminated, in the graph arena: nothing to free when a
 * fatal error jumps out). Decoding never lengthens a string, so the raw length bounds it. */
static char *parse_string(struct st_parser *p)
{
    skip_ws(p);
    if (p->s >= p->end || *p->s != '"') st_fail(p, "expected a string");
    p->s++;
    const char *q = p->s;
    while (q < p->end && *q != '"') q += *q == '\\' ? 2 : 1;
    if (q >= p->end) st_fail(p, "unterminated string");
    char *out = ir_alloc(p->g, (size_t)(q - p->s) + 1);
    size_t n = 0;
    for (;;) {
        unsigned char c = (unsigned char)*p->s++;
        if (c == '"') break;
        if (c < 0x20) st_fail(p, "control character 0x%02x in a string", c);
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        char e = *p->s++;
        unsigned cp = 0;
        switch (e) {
        case '"': case '\\': case '/': out[n++] = e; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u':
            cp = read_hex4(p);
            if (cp >= 0xd800 && cp < 0xdc00) { /* surrogate pair */
                if (p->end - p->s < 2 || p->s[0] != '\\' || p->s[1] != 'u')
                    st_fail(p, "lone surrogate in a \\u escape");
                p->s += 2;
                unsigned lo = read_hex4(p);
                if (lo < 0xdc00 || lo >= 0xe000) st_fail(p, "bad surrogate pair in a \\u escape");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                st_fail(p, "lone surrogate in a \\u escape");
            }
            if (cp == 0) st_fail(p, "NUL character in a string");
            if (cp < 0x80) {
                out[n++] = (char)cp;
            } else if (cp < 0x800) {
                out[n++] = (char)(0xc0 | (cp >> 6));
                out[n++] = (char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                out[n++] = (char)(0xe0 | (cp >> 12));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[n++] = (char)(0x80 | (cp & 0x3f));
            } else {
                out[n++] = (char)(0xf0 | (cp >> 18));
                out[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[n++] = (char)(0x80 | (cp & 0x3f));
            }
            break;
        default: st_fail(p, "bad escape '\\%c' in a string", e);
        }
    }
    out[n] = 0;
    return out;
}

/* A non-negative integer (no sign, fraction or exponent), < 2^63, of `what` of tensor. */
static uint64_t parse_uint(struct st_parser *p, const char *tensor, const char *what)
{
    skip_ws(p);
    if (p->s >= p->end || *p->s < '0' || *p->s > '9')
        st_fail(p, "tensor '%s': %s: expected a non-negative integer", tensor, what);
    uint64_t v = 0;
    while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
        if (v > ((uint64_t)INT64_MAX - 9) / 10)
            st_fail(p, "tensor '%s': %s: integer too large", tensor, what);
        v = v * 10 + (uint64_t)(*p->s++ - '0');
    }
    if (p->s < p->end && (*p->s == '.' || *p->s == 'e' || *p->s == 'E'))
        st_fail(p, "tensor '%s': %s: expected an integer, not a number with a fraction or "
                "exponent", tensor, what);
    return v;
}

/* Does the next non-space byte equal c? (consumes it if so) */
static bool accept(struct st_parser *p, char c)
{
    skip_ws(p);
    if (p->s < p->end && *p->s == c) {
        p->s++;
        return true;
    }
    return false;
}

/* qsort order of entry pointers by data_offsets begin, then end. */
static int by_begin(const void *a, const void *b)
{
    const struct st_entry *x = *(const struct st_entry *const *)a;
    const struct st_entry *y = *(const struct st_entry *const *)b;
    return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1)
                                : (x->end != y->end ? (x->end < y->end ? -1 : 1) : 0);
}

/* The safetensors format's rule (as its reference reader validates): the n tensors' byte
 * ranges, taken in offset order, tile the data region exactly: the first starts at 0, each
 * starts where the previous ends, the last ends at data_len. Overlapping tensors (one byte
 * feeding two tensors), holes and trailing bytes are refused, naming the tensors and offsets.
 * Each range was already checked to lie inside the region and to hold its tensor's bytes. */
static void check_tiling(struct ir_graph *g, const char *path, const struct st_entry *es, size_t n,
                         uint64_t data_len)
{
    if (n == 0) {
        if (data_len)
            ir_die("%s: the data region holds %" PRIu64 " bytes but the header lists no tensor",
                   path, data_len);
        return;
    }
    /* in the graph's arena: the errors below leave through ir_die (a fuzzer's hook longjmps) */
    const struct st_entry **o = ir_alloc(g, n * sizeof *o);
    for (size_t i = 0; i < n; i++) o[i] = &es[i];
    qsort(o, n, sizeof *o, by_begin);
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (o[i]->begin < at)
            ir_die("%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] overlap tensor "
                   "'%s' [%" PRIu64 ", %" PRIu64 "] (each byte belongs to one tensor)", path,
                   o[i]->name, o[i]->begin, o[i]->end, o[i - 1]->name, o[i - 1]->begin,
                   o[i - 1]->end);
        if (o[i]->begin > at)
            ir_die("%s: bytes [%" PRIu64 ", %" PRIu64 ") of the data region belong to no tensor "
                   "(a hole before tensor '%s')", path, at, o[i]->begin, o[i]->name);
        at = o[i]->end;
    }
    const char *last = o[n - 1]->name;
    if (at != data_len)
        ir_die("%s: the data region has %" PRIu64 " bytes after its last tensor '%s' (which "
               "ends at %" PRIu64 " of %" PRIu64 ")", path, data_len - at, last, at, data_len);
}

/* {"dtype": ..., "shape": [...], "data_offsets": [b, e]} of tensor e->name. */
static void parse_entry(struct st_parser *p, struct st_entry *e)
{
    bool has_dtype = false, has_shape = false, has_offsets = false;
    expect(p, '{', "to open a tensor entry");
    if (!accept(p, '}')) {
        do {
            char *key = parse_string(p);
            expect(p, ':', "after a key");
            if (strcmp(key, "dtype") == 0 && !has_dtype) {
                char *dt = parse_string(p);
                if (strlen(dt) >= sizeof e->dtype)
                    st_fail(p, "tensor '%s': unknown dtype '%.40s'", e->name, dt);
                strcpy(e->dtype, dt);
                has_dtype = true;
            } else if (strcmp(key, "shape") == 0 && !has_shape) {
                expect(p, '[', "to open a shape");
                e->rank = 0;
                if (!accept(p, ']')) {
                    do {
                        if (e->rank >= IR_MAX_RANK)
                            st_fail(p, "tensor '%s': more than %d dims", e->name, IR_MAX_RANK);
                        e->dims[e->rank++] = (int64_t)parse_uint(p, e->name, "shape");
                    } while (accept(p, ','));
                    expect(p, ']', "to close a shape");
                }
                has_shape = true;
            } else if (strcmp(key, "data_offsets") == 0 && !has_offsets) {
                expect(p, '[', "to open data_offsets");
                e->begin = parse_uint(p, e->name, "data_offsets");
                expect(p, ',', "in data_offsets");
                e->end = parse_uint(p, e->name, "data_offsets");
                expect(p, ']', "to close data_offsets (two integers)");
                has_offsets = true;
            } else {
                st_fail(p, "tensor '%s': unexpected or repeated key '%.60s'", e->name, key);
            }
        } while (accept(p, ','));
        expect(p, '}', "to close a tensor entry");
    }
    if (!has_dtype || !has_shape || !has_offsets)
        st_fail(p, "tensor '%s' lacks %s", e->name,
                !has_dtype ? "\"dtype\"" : !has_shape ? "\"shape\"" : "\"data_offsets\"");
}

/* "__metadata__": an object of string values (ignored). */
static void skip_metadata(struct st_parser *p)
{
    expect(p, '{', "to open __metadata__");
    if (accept(p, '}')) return;
    do {
        parse_string(p);
        expect(p, ':', "after a __metadata__ key");
        parse_string(p);
    } while (accept(p, ','));
    expect(p, '}', "to close __metadata__");
}

/* Element type of a safetensors dtype name (IR_UNDEFINED if unknown). */
static const struct { const char *name; enum ir_dtype t; } st_dtypes[] = {
    {"F64", IR_F64}, {"F32", IR_F32}, {"F16", IR_F16}, {"BF16", IR_BF16}, {"I64", IR_I64},
    {"I32", IR_I32}, {"I16", IR_I16}, {"I8", IR_I8}, {"U64", IR_U64}, {"U32", IR_U32},
    {"U16", IR_U16}, {"U8", IR_U8}, {"BOOL", IR_BOOL},
};

static enum ir_dtype st_dtype(const char *s)
{
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (strcmp(s, st_dtypes[i].name) == 0) return st_dtypes[i].t;
    return IR_UNDEFINED;
}

const char *st_dtype_name(enum ir_dtype t)
{
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (st_dtypes[i].t == t) return st_dtypes[i].name;
    return "?";
}

static bool is_float(enum ir_dtype t)
{
    return t == IR_F64 || t == IR_F32 || t == IR_F16 || t == IR_BF16;
}

float st_load_float(const void *data, enum ir_dtype t, uint64_t i)
{
    const unsigned char *p = data;
    switch (t) {
    case IR_F64: { double d; memcpy(&d, p + 8 * i, 8); return (float)d; }
    case IR_F32: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case IR_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return ref_f16_to_f32(h); }
    default: { uint16_t h; memcpy(&h, p + 2 * i, 2); return ref_bf16_to_f32(h); }
    }
}

/* Appends "'name' (why)" to the problem list. */
static void note(char *list, size_t cap, uint32_t *count, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void note(char *list, size_t cap, uint32_t *count, const char *name, const char *fmt, ...)
{
    if (++*count > ST_MAX_LISTED) return;
    size_t n = strlen(list);
    n += (size_t)snprintf(list + n, n < cap ? cap - n : 0, "%s'%s': ", *count > 1 ? "; " : " ",
                          name);
    if (n >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(list + n, cap - n, fmt, ap);
    va_end(ap);
}

static void dims_str(const int64_t *d, int rank, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "[");
    for (int k = 0; k < rank && n < cap; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s%" PRId64, k ? "," : "", d[k]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

void st_read_buffer(struct ir_graph *g, const char *path, const void *bytes, size_t size,
                    struct st_file *f)
{
    const unsigned char *b = bytes;
    memset(f, 0, sizeof *f);
    f->path = path;
    if (size < 8) ir_die("%s: not a safetensors file: %zu bytes, shorter than the 8-byte header "
                         "length", path, size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
    if (hlen > ST_MAX_HEADER || hlen > size - 8)
        ir_die("%s: safetensors header length %" PRIu64 " exceeds the %s (%zu bytes)", path, hlen,
               hlen > ST_MAX_HEADER ? "format's 100 MiB limit; not a safetensors file?" : "file",
               size);
    const unsigned char *data = b + 8 + hlen;
    uint64_t data_len = size - 8 - hlen;
    struct st_parser p = {g, path, (const char *)b + 8, (const char *)b + 8,
                          (const char *)b + 8 + hlen};
    expect(&p, '{', "at the start of the header");
    size_t cap = 16, n = 0;
    struct st_entry *es = ir_alloc(g, cap * sizeof *es); /* arena: nothing leaks on a fatal error */
    bool meta = false;
    if (!accept(&p, '}')) {
        do {
            char *key = parse_string(&p);
            expect(&p, ':', "after a tensor name");
            if (strcmp(key, "__metadata__") == 0) {
                if (meta) st_fail(&p, "__metadata__ given twice");
                meta = true;
                skip_metadata(&p);
                continue;
            }
            for (size_t i = 0; i < n; i++)
                if (strcmp(es[i].name, key) == 0) st_fail(&p, "tensor '%s' listed twice", key);
            if (n == cap) {
                struct st_entry *q = ir_alloc(g, 2 * cap * sizeof *es);
                memcpy(q, es, cap * sizeof *es);
                es = q;
                cap *= 2;
            }
            memset(&es[n], 0, sizeof es[n]);
            es[n].name = key;
            parse_entry(&p, &es[n]);
            n++;
        } while (accept(&p, ','));
        expect(&p, '}', "to close the header");
    }
    skip_ws(&p);
    if (p.s != p.end) st_fail(&p, "trailing bytes after the header object");
    struct st_tensor *ts = ir_alloc(g, (n ? n : 1) * sizeof *ts);
    for (size_t i = 0; i < n; i++) {
        const struct st_entry *e = &es[i];
        enum ir_dtype dt = st_dtype(e->dtype);
        if (dt == IR_UNDEFINED)
            ir_die("%s: tensor '%s': dtype '%s' is not a safetensors dtype this reader knows "
                   "(F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL)", path,
                   e->name, e->dtype);
        uint64_t numel = 1;
        for (int k = 0; k < e->rank; k++) {
            if (e->dims[k] && numel > UINT64_MAX / 16 / (uint64_t)e->dims[k])
                ir_die("%s: tensor '%s': shape overflows", path, e->name);
            numel *= (uint64_t)e->dims[k];
        }
        uint64_t need = numel * ir_dtype_size(dt);
        if (e->begin > e->end)
            ir_die("%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] begin after they end",
                   path, e->name, e->begin, e->end);
        if (e->end > data_len)
            ir_die("%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] are not inside the "
                   "%" PRIu64 "-byte data region", path, e->name, e->begin, e->end, data_len);
        if (e->end - e->begin != need) {
            char ds[256];
            dims_str(e->dims, e->rank, ds, sizeof ds);
            ir_die("%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                   " bytes, but %s %s needs %" PRIu64, path, e->name, e->begin, e->end,
                   e->end - e->begin, e->dtype, ds, need);
        }
        ts[i].name = e->name;
        ts[i].dtype = dt;
        ts[i].rank = e->rank;
        memcpy(ts[i].dims, e->dims, sizeof e->dims);
        ts[i].data = data + e->begin;
        ts[i].nbytes = (size_t)need;
    }
    check_tiling(g, path, es, n, data_len);
    f->n = n;
    f->t = ts;
    f->has_metadata = meta;
}

bool st_fill(struct ir_graph *g, struct ir_value *val, enum ir_dtype dt, const void *src,
             uint64_t numel)
{
    size_t es_out = ir_dtype_size(val->dtype);
    size_t out_bytes = (size_t)numel * es_out;
    if (dt == val->dtype && ((uintptr_t)src % es_out) == 0) {
        val->data = src; /* in place: the file stays mapped */
    } else if (dt == val->dtype) {
        void *q = ir_alloc(g, out_bytes ? out_bytes : 1);
        memcpy(q, src, out_bytes);
        val->data = q;
    } else if (is_float(dt) && (val->dtype == IR_F32 || val->dtype == IR_F16)) {
        unsigned char *q = ir_alloc(g, out_bytes ? out_bytes : 1);
        for (uint64_t k = 0; k < numel; k++) {
            float f = st_load_float(src, dt, k);
            if (val->dtype == IR_F32) {
                memcpy(q + 4 * k, &f, 4);
            } else {
                uint16_t h = ref_f32_to_f16(f);
                memcpy(q + 2 * k, &h, 2);
            }
        }
        val->data = q;
    } else {
        return false;
    }
    val->nbytes = out_bytes;
    return true;
}

bool st_dtype_fits(enum ir_dtype init, enum ir_dtype file)
{
    return file == init || (init == IR_F32 && is_float(file)) ||
           (init == IR_F16 && (file == IR_F32 || file == IR_F16));
}

uint32_t st_apply_buffer(struct ir_graph *g, const char *path, const void *bytes, size_t size,
                         struct st_result *res)
{
    struct st_file f;
    if (res) memset(res, 0, sizeof *res);
    st_read_buffer(g, path, bytes, size, &f);
    /* check every tensor against the model */
    char list[4096] = "";
    uint32_t problems = 0, applied = 0;
    for (size_t i = 0; i < f.n; i++) {
        const struct st_tensor *e = &f.t[i];
        uint32_t v = ir_value_find(g, e->name);
        if (v == IR_NONE || !g->values[v].is_param) {
            note(list, sizeof list, &problems, e->name, "no initializer of the model has this name");
            continue;
        }
        const struct ir_value *val = &g->values[v];
        bool same = val->rank == e->rank;
        for (int k = 0; same && k < e->rank; k++) same = val->dims[k] == e->dims[k];
        if (!same) {
            char a[256], c[256];
            dims_str(e->dims, e->rank, a, sizeof a);
            dims_str(val->dims, val->rank, c, sizeof c);
            note(list, sizeof list, &problems, e->name, "shape %s, the model's initializer is %s", a,
                 c);
            continue;
        }
        if (!st_dtype_fits(val->dtype, e->dtype)) {
            note(list, sizeof list, &problems, e->name, "dtype %s cannot fill the model's %s "
                 "initializer", st_dtype_name(e->dtype), ir_dtype_name(val->dtype));
            continue;
        }
    }
    if (problems)
        ir_die("%s: %u of %zu tensors do not fit the model (refused; nothing written):%s%s", path,
               problems, f.n, list, problems > ST_MAX_LISTED ? "; ..." : "");
    if (f.n == 0)
        ir_die("%s: holds no tensor (only a header%s): it would change none of the model's "
               "initializers (refused; nothing written)", path,
               f.has_metadata ? " with __metadata__" : "");
    for (size_t i = 0; i < f.n; i++) {
        const struct st_tensor *e = &f.t[i];
        struct ir_value *val = &g->values[ir_value_find(g, e->name)];
        IR_ASSERT(st_fill(g, val, e->dtype, e->data, e->nbytes / ir_dtype_size(e->dtype)));
        applied++;
    }
    if (res) {
        res->applied = applied;
        for (uint32_t v = 0; v < g->nvalues; v++)
            if (g->values[v].is_param) {
                res->initializers++;
                bool found = false;
                for (size_t i = 0; i < f.n && !found; i++)
                    found = strcmp(f.t[i].name, g->values[v].name) == 0;
                if (!found && !res->first_kept) res->first_kept = g->values[v].name;
                res->kept += !found;
            }
    }
    return applied;
}

const void *st_map_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) ir_die("%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) ir_die("%s: cannot stat: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) ir_die("%s: not a regular file", path);
    *size = (size_t)st.st_size;
    const void *map = NULL;
    if (*size > 0) {
        map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) ir_die("%s: cannot mmap: %s", path, strerror(errno));
    }
    close(fd);
    /* stays mapped: initializers may point into it until the weights file is written */
    return map ? map : "";
}

void st_read(struct ir_graph *g, const char *path, struct st_file *f)
{
    size_t size;
    const void *map = st_map_file(path, &size);
    st_read_buffer(g, path, map, size, f);
}

uint32_t st_apply(struct ir_graph *g, const char *path, struct st_result *res)
{
    size_t size;
    const void *map = st_map_file(path, &size);
    return st_apply_buffer(g, path, map, size, res);
}
