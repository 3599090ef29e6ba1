/* json.c — recursive-descent JSON reader (see json.h).
 *
 * Assumes: input is UTF-8. Guarantees: nesting is limited to 64 levels (deeper input is an
 * error, not a stack overflow); every node and string lives in an arena released by
 * sdp_json_free; errors carry line and column.
 */
#include "json.h"
#include "../runtime/platform.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

/* Owner of a document's arena. */
struct doc {
    struct chunk *chunks; /* arena chunks, newest first */
};

struct parser {
    const char *p, *end, *start;  /* cursor, end of input, start (for line/column) */
    const char *name;             /* file name for messages */
    char *err;
    size_t errcap;
    int failed;
    struct doc *doc;
};

static void *arena_alloc(struct parser *ps, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct chunk *c = ps->doc->chunks;
    if (!c || c->used + n > c->cap) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        struct chunk *nc = malloc(sizeof *nc + cap);
        if (!nc) return NULL;
        nc->next = c, nc->used = 0, nc->cap = cap;
        ps->doc->chunks = c = nc;
    }
    void *r = c->data + c->used;
    c->used += n;
    return r;
}

static void fail(struct parser *ps, const char *fmt, ...)
{
    if (ps->failed) return;
    ps->failed = 1;
    int line = 1, col = 1;
    for (const char *q = ps->start; q < ps->p && q < ps->end; q++) {
        if (*q == '\n') line++, col = 1;
        else col++;
    }
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errcap, "%s:%d:%d: %s", ps->name, line, col, msg);
}

static void skip_ws(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static struct sdp_json *new_node(struct parser *ps, enum sdp_json_type t)
{
    struct sdp_json *v = arena_alloc(ps, sizeof *v);
    if (!v) {
        fail(ps, "out of memory");
        return NULL;
    }
    memset(v, 0, sizeof *v);
    v->type = t;
    return v;
}

static int hex4(struct parser *ps, unsigned *out)
{
    if (ps->end - ps->p < 4) return 0;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = ps->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    ps->p += 4;
    *out = v;
    return 1;
}

size_t sdp_utf8_put(uint32_t cp, char *o)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 63));
        o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 63));
    o[2] = (char)(0x80 | ((cp >> 6) & 63)); o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* Parses a string at ps->p (on the opening quote); returns arena copy, length in *len. */
static char *parse_string(struct parser *ps, size_t *len)
{
    ps->p++; /* opening quote */
    const char *q = ps->p;
    while (q < ps->end && *q != '"') q += (*q == '\\') ? 2 : 1;
    if (q >= ps->end) {
        fail(ps, "unterminated string");
        return NULL;
    }
    char *out = arena_alloc(ps, (size_t)(q - ps->p) + 1); /* decoded is never longer */
    if (!out) {
        fail(ps, "out of memory");
        return NULL;
    }
    size_t n = 0;
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) {
            fail(ps, "control character in string");
            return NULL;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            ps->p++;
            continue;
        }
        ps->p++;
        char e = *ps->p++;
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (!hex4(ps, &cp)) {
                fail(ps, "bad \\u escape");
                return NULL;
            }
            if (cp >= 0xD800 && cp < 0xDC00) {
                if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                    fail(ps, "unpaired surrogate in \\u escape");
                    return NULL;
                }
                ps->p += 2;
                if (!hex4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    fail(ps, "bad low surrogate in \\u escape");
                    return NULL;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                fail(ps, "unpaired surrogate in \\u escape");
                return NULL;
            }
            if (cp == 0) {
                fail(ps, "NUL character in string");
                return NULL;
            }
            n += sdp_utf8_put(cp, out + n);
            break;
        }
        default:
            ps->p--;
            fail(ps, "bad escape '\\%c'", e);
            return NULL;
        }
    }
    ps->p++; /* closing quote */
    out[n] = 0;
    *len = n;
    return out;
}

static struct sdp_json *parse_value(struct parser *ps, int depth);

/* Parses the members of an array or object into a growable list, then copies them to the arena. */
static struct sdp_json *parse_container(struct parser *ps, int depth, int is_obj)
{
    struct sdp_json *v = new_node(ps, is_obj ? SDP_JSON_OBJECT : SDP_JSON_ARRAY);
    if (!v) return NULL;
    ps->p++;
    size_t cap = 0, n = 0;
    struct sdp_json **items = NULL;
    const char **keys = NULL;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == (is_obj ? '}' : ']')) {
        ps->p++;
        return v;
    }
    for (;;) {
        const char *key = NULL;
        skip_ws(ps);
        if (is_obj) {
            size_t kl;
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, "expected a member name");
                goto bad;
            }
            key = parse_string(ps, &kl);
            if (!key) goto bad;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                fail(ps, "expected ':'");
                goto bad;
            }
            ps->p++;
        }
        struct sdp_json *item = parse_value(ps, depth + 1);
        if (!item) goto bad;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            struct sdp_json **ni = realloc(items, cap * sizeof *ni);
            const char **nk = realloc(keys, cap * sizeof *nk);
            if (ni) items = ni;
            if (nk) keys = nk;
            if (!ni || !nk) {
                fail(ps, "out of memory");
                goto bad;
            }
        }
        items[n] = item, keys[n] = key, n++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == (is_obj ? '}' : ']')) {
            ps->p++;
            break;
        }
        fail(ps, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        goto bad;
    }
    v->n = n;
    v->items = arena_alloc(ps, n * sizeof *items);
    if (is_obj) v->keys = arena_alloc(ps, n * sizeof *keys);
    if (!v->items || (is_obj && !v->keys)) {
        fail(ps, "out of memory");
        goto bad;
    }
    memcpy(v->items, items, n * sizeof *items);
    if (is_obj) memcpy(v->keys, keys, n * sizeof *keys);
    free(items);
    free(keys);
    return v;
bad:
    free(items);
    free(keys);
    return NULL;
}

static struct sdp_json *parse_value(struct parser *ps, int depth)
{
    if (depth > MAX_DEPTH) {
        fail(ps, "nesting deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end of input");
        return NULL;
    }
    char c = *ps->p;
    if (c == '{' || c == '[') return parse_container(ps, depth, c == '{');
    if (c == '"') {
        struct sdp_json *v = new_node(ps, SDP_JSON_STRING);
        if (!v) return NULL;
        v->str = parse_string(ps, &v->len);
        return v->str ? v : NULL;
    }
    static const struct { const char *word; enum sdp_json_type t; double num; } lits[] = {
        {"true", SDP_JSON_BOOL, 1}, {"false", SDP_JSON_BOOL, 0}, {"null", SDP_JSON_NULL, 0},
    };
    /* Python's json module writes NaN, Infinity and -Infinity (diffusers configs carry e.g.
     * "lambda_min_clipped": -Infinity): accepted as numbers */
    static const struct { const char *word; double num; } py[] = {
        {"NaN", NAN}, {"Infinity", INFINITY}, {"-Infinity", -INFINITY},
    };
    for (size_t i = 0; i < 3; i++) {
        size_t l = strlen(py[i].word);
        if ((size_t)(ps->end - ps->p) >= l && memcmp(ps->p, py[i].word, l) == 0) {
            ps->p += l;
            struct sdp_json *v = new_node(ps, SDP_JSON_NUMBER);
            if (v) v->num = py[i].num;
            return v;
        }
    }
    for (size_t i = 0; i < 3; i++) {
        size_t l = strlen(lits[i].word);
        if ((size_t)(ps->end - ps->p) >= l && memcmp(ps->p, lits[i].word, l) == 0) {
            ps->p += l;
            struct sdp_json *v = new_node(ps, lits[i].t);
            if (v) v->num = lits[i].num;
            return v;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t l = 0;
        while (ps->p + l < ps->end && l < sizeof buf - 1 &&
               strchr("+-0123456789.eE", ps->p[l]) && ps->p[l])
            l++;
        memcpy(buf, ps->p, l);
        buf[l] = 0;
        char *e;
        errno = 0;
        double d = strtod(buf, &e);
        if (e != buf + l || l == 0) {
            fail(ps, "malformed number '%s'", buf);
            return NULL;
        }
        ps->p += l;
        struct sdp_json *v = new_node(ps, SDP_JSON_NUMBER);
        if (v) v->num = d;
        return v;
    }
    fail(ps, "unexpected character '%c'", c);
    return NULL;
}

/* First allocation of every document: the root value and the arena it lives in. */
struct rootbox {
    struct doc *doc;      /* arena owner */
    struct sdp_json root; /* the document's root value */
};

static void doc_free(struct doc *doc)
{
    for (struct chunk *c = doc->chunks, *nx; c; c = nx) nx = c->next, free(c);
    free(doc);
}

struct sdp_json *sdp_json_parse(const char *text, size_t len, const char *name, char *err,
                                size_t errcap)
{
    struct doc *doc = calloc(1, sizeof *doc);
    if (!doc) {
        snprintf(err, errcap, "%s: out of memory", name);
        return NULL;
    }
    struct parser ps = {.p = text, .end = text + len, .start = text, .name = name, .err = err,
                        .errcap = errcap, .doc = doc};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ps.p += 3; /* UTF-8 BOM */
    struct rootbox *box = arena_alloc(&ps, sizeof *box);
    struct sdp_json *v = NULL;
    if (box) {
        box->doc = doc;
        v = parse_value(&ps, 0);
        skip_ws(&ps);
        if (v && ps.p != ps.end) fail(&ps, "trailing characters after the JSON value");
    } else {
        fail(&ps, "out of memory");
    }
    if (ps.failed || !v) {
        doc_free(doc);
        return NULL;
    }
    box->root = *v;
    return &box->root;
}

void sdp_json_free(struct sdp_json *root)
{
    if (!root) return;
    struct rootbox *box = (struct rootbox *)((char *)root - offsetof(struct rootbox, root));
    doc_free(box->doc);
}

struct sdp_json *sdp_json_parse_file(const char *path, char *err, size_t errcap)
{
    int odd; /* a FIFO without a writer is refused, never waited on */
    FILE *f = o2r_fopen_regular(path, &odd);
    if (!f) {
        snprintf(err, errcap, "%s: %s%s", path, odd ? "not a regular file" : "cannot read: ",
                 odd ? "" : strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb) free(buf);
        buf = nb;
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf || rerr) {
        snprintf(err, errcap, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    struct sdp_json *r = sdp_json_parse(buf, n, path, err, errcap);
    free(buf);
    return r;
}

const struct sdp_json *sdp_json_get(const struct sdp_json *obj, const char *key)
{
    if (!obj || obj->type != SDP_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
    return NULL;
}
