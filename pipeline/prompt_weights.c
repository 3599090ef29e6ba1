/* prompt_weights.c — A1111's emphasis syntax, BREAK and 75-token chunks (prompt_weights.h).
 *
 * The parser is a hand-written scanner for A1111's re_attention alternatives, tried in its
 * order at each position:  \( \) \[ \] \\ \  ( [  :NUMBER)  )  ]  [^\()[]:]+  :
 * and re_break (\s*\bBREAK\b\s*) with Python's Unicode \s and \w (\w approximated as \p{L}, \p{N}
 * and '_': Python's str.isalnum also takes a few numeric symbols outside \p{N}).
 */
#include "prompt_weights.h"
#include "unicode_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 75

struct piece_list {
    struct sdp_prompt_piece *p;
    int n, cap;
};

static int push(struct piece_list *l, const char *s, size_t len, double w)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        struct sdp_prompt_piece *np = realloc(l->p, (size_t)cap * sizeof *np);
        if (!np) return -1;
        l->p = np;
        l->cap = cap;
    }
    char *t = malloc(len + 1);
    if (!t) return -1;
    memcpy(t, s, len);
    t[len] = 0;
    l->p[l->n++] = (struct sdp_prompt_piece){.text = t, .weight = w};
    return 0;
}

/* Decodes one UTF-8 code point at s (valid input assumed; invalid bytes count as one unit). */
static unsigned decode(const unsigned char *s, size_t n, size_t *len)
{
    unsigned c = s[0];
    size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (l > n) l = 1;
    unsigned cp = l == 1 ? c : c & (0x7f >> l);
    for (size_t k = 1; k < l; k++) cp = cp << 6 | (s[k] & 0x3f);
    *len = l;
    return cp;
}

/* The code point ending at byte i (exclusive) of s. */
static unsigned decode_before(const unsigned char *s, size_t i)
{
    size_t j = i - 1;
    while (j > 0 && (s[j] & 0xc0) == 0x80 && i - j < 4) j--;
    size_t len;
    return decode(s + j, i - j, &len);
}

static int in_ranges(unsigned cp, const uint32_t (*r)[2], uint32_t n)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cp < r[mid][0]) hi = mid;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

/* Python's \w (str.isalnum() or '_'), approximated as \p{L} | \p{N} | '_'. */
static int is_word(unsigned cp)
{
    if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
    return in_ranges(cp, uni_letter, uni_letter_n) || in_ranges(cp, uni_number, uni_number_n);
}

/* Python's \s (str.isspace()). */
static int is_space(unsigned cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
           cp == 0x3000;
}

/* A text token: split by re_break, with ["BREAK", -1] between the parts. */
static int push_text(struct piece_list *l, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t seg = 0, i = 0;
    while (i < n) {
        /* leftmost match of \s*\bBREAK\b\s* starting at i: a run of white space (possibly empty)
         * then BREAK with word boundaries on both sides */
        size_t j = i, len;
        while (j < n && is_space(decode(u + j, n - j, &len))) j += len;
        if (j + 5 <= n && memcmp(s + j, "BREAK", 5) == 0 && (j == 0 || !is_word(decode_before(u, j))) &&
            (j + 5 == n || !is_word(decode(u + j + 5, n - j - 5, &len)))) {
            size_t e = j + 5;
            while (e < n && is_space(decode(u + e, n - e, &len))) e += len;
            if (push(l, s + seg, i - seg, 1.0) || push(l, "BREAK", 5, -1.0)) return -1;
            seg = i = e;
            continue;
        }
        decode(u + i, n - i, &len);
        i += len;
    }
    return push(l, s + seg, n - seg, 1.0);
}

/* Python's float() of [+-]?[.\d]+: digits with at most one '.', and at least one digit. */
static int parse_weight(const char *s, size_t n, double *w)
{
    size_t i = s[0] == '+' || s[0] == '-', dots = 0, digits = 0;
    for (size_t k = i; k < n; k++) {
        if (s[k] == '.') dots++;
        else digits++;
    }
    if (dots > 1 || !digits) return -1;
    char buf[128];
    if (n >= sizeof buf) { /* a very long number: strtod on a heap copy */
        char *h = malloc(n + 1);
        if (!h) return -1;
        memcpy(h, s, n);
        h[n] = 0;
        *w = strtod(h, NULL);
        free(h);
        return 0;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    *w = strtod(buf, NULL);
    return 0;
}

static void multiply_range(struct piece_list *l, int start, double m)
{
    for (int p = start; p < l->n; p++) l->p[p].weight *= m;
}

void sdp_prompt_pieces_free(struct sdp_prompt_piece *p, int n)
{
    for (int i = 0; i < n && p; i++) free(p[i].text);
    free(p);
}

int sdp_prompt_parse(const char *text, struct sdp_prompt_piece **out, int *n, char *err, size_t errcap)
{
    struct piece_list l = {0};
    size_t len = strlen(text), i = 0;
    int *round = malloc((len + 1) * sizeof *round), *square = malloc((len + 1) * sizeof *square);
    int nr = 0, ns = 0, rc = -1;
    if (!round || !square) goto oom;
    const double round_mult = 1.1, square_mult = 1 / 1.1;
    while (i < len) {
        char c = text[i];
        if (c == '\\') {
            char d = i + 1 < len ? text[i + 1] : 0;
            if (d == '(' || d == ')' || d == '[' || d == ']' || d == '\\') {
                if (push(&l, text + i + 1, 1, 1.0)) goto oom;
                i += 2;
            } else { /* a lone backslash: A1111 appends text[1:], i.e. "" */
                if (push(&l, "", 0, 1.0)) goto oom;
                i += 1;
            }
        } else if (c == '(') {
            round[nr++] = l.n;
            i++;
        } else if (c == '[') {
            square[ns++] = l.n;
            i++;
        } else if (c == ':') {
            /* :([+-]?[.\d]+)\) */
            size_t j = i + 1;
            if (j < len && (text[j] == '+' || text[j] == '-')) j++;
            size_t d0 = j;
            while (j < len && (text[j] == '.' || (text[j] >= '0' && text[j] <= '9'))) j++;
            if (j > d0 && j < len && text[j] == ')') {
                if (nr) {
                    double w;
                    if (parse_weight(text + i + 1, j - i - 1, &w)) {
                        snprintf(err, errcap, "prompt: weight '%.*s' at byte %zu is not a number", (int)(j - i - 1),
                                 text + i + 1, i + 1);
                        goto fail;
                    }
                    multiply_range(&l, round[--nr], w);
                } else if (push_text(&l, text + i, j + 1 - i)) {
                    goto oom;
                }
                i = j + 1;
            } else { /* ':' alone is text */
                if (push_text(&l, text + i, 1)) goto oom;
                i++;
            }
        } else if (c == ')') {
            if (nr) multiply_range(&l, round[--nr], round_mult);
            else if (push_text(&l, ")", 1)) goto oom;
            i++;
        } else if (c == ']') {
            if (ns) multiply_range(&l, square[--ns], square_mult);
            else if (push_text(&l, "]", 1)) goto oom;
            i++;
        } else {
            size_t j = i;
            while (j < len && !strchr("\\()[]:", text[j])) j++;
            if (push_text(&l, text + i, j - i)) goto oom;
            i = j;
        }
    }
    for (int k = 0; k < nr; k++) multiply_range(&l, round[k], round_mult);
    for (int k = 0; k < ns; k++) multiply_range(&l, square[k], square_mult);
    if (l.n == 0 && push(&l, "", 0, 1.0)) goto oom;
    /* merge runs of identical weights */
    for (int k = 0; k + 1 < l.n;) {
        if (l.p[k].weight == l.p[k + 1].weight) {
            size_t a = strlen(l.p[k].text), b = strlen(l.p[k + 1].text);
            char *t = realloc(l.p[k].text, a + b + 1);
            if (!t) goto oom;
            memcpy(t + a, l.p[k + 1].text, b + 1);
            l.p[k].text = t;
            free(l.p[k + 1].text);
            memmove(l.p + k + 1, l.p + k + 2, (size_t)(l.n - k - 2) * sizeof *l.p);
            l.n--;
        } else {
            k++;
        }
    }
    for (int k = 0; k < l.n; k++) l.p[k].is_break = l.p[k].weight == -1.0 && strcmp(l.p[k].text, "BREAK") == 0;
    *out = l.p;
    *n = l.n;
    l.p = NULL;
    rc = 0;
    goto done;
oom:
    snprintf(err, errcap, "prompt: out of memory");
fail:
    sdp_prompt_pieces_free(l.p, l.n);
done:
    free(round);
    free(square);
    return rc;
}

struct chunker {
    int64_t *ids;   /* emitted chunks */
    float *mult;
    int n_chunks, cap_chunks;
    int64_t tok[CHUNK];
    float tm[CHUNK];
    int len;        /* tokens in the current chunk */
    int last_comma;
    int token_count;
    int64_t bos, eos;
};

static int next_chunk(struct chunker *c, int is_last)
{
    c->token_count += is_last ? c->len : CHUNK;
    if (c->n_chunks == c->cap_chunks) {
        int cap = c->cap_chunks ? 2 * c->cap_chunks : 2;
        int64_t *ni = realloc(c->ids, (size_t)cap * (CHUNK + 2) * sizeof *ni);
        if (!ni) return -1;
        c->ids = ni;
        float *nm = realloc(c->mult, (size_t)cap * (CHUNK + 2) * sizeof *nm);
        if (!nm) return -1;
        c->mult = nm;
        c->cap_chunks = cap;
    }
    int64_t *id = c->ids + (size_t)c->n_chunks * (CHUNK + 2);
    float *m = c->mult + (size_t)c->n_chunks * (CHUNK + 2);
    id[0] = c->bos;
    m[0] = 1.0f;
    for (int k = 0; k < CHUNK; k++) {
        id[1 + k] = k < c->len ? c->tok[k] : c->eos;
        m[1 + k] = k < c->len ? c->tm[k] : 1.0f;
    }
    id[CHUNK + 1] = c->eos;
    m[CHUNK + 1] = 1.0f;
    c->n_chunks++;
    c->len = 0;
    c->last_comma = -1;
    return 0;
}

int sdp_prompt_chunks(const struct sdp_tokenizer *tok, const char *text, int comma_backtrack,
                      struct sdp_prompt_chunks *out, char *err, size_t errcap)
{
    return sdp_prompt_chunks_ex(tok, text, comma_backtrack, 1, out, err, errcap);
}

int sdp_prompt_chunks_ex(const struct sdp_tokenizer *tok, const char *text, int comma_backtrack, int parse,
                         struct sdp_prompt_chunks *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    struct sdp_prompt_piece *pieces;
    int np;
    if (parse) {
        if (sdp_prompt_parse(text, &pieces, &np, err, errcap)) return -1;
    } else { /* A1111's emphasis "None": [[line, 1.0]] (no brackets, no BREAK) */
        np = 1;
        pieces = calloc(1, sizeof *pieces);
        size_t tl = strlen(text);
        if (pieces && (pieces->text = malloc(tl + 1))) memcpy(pieces->text, text, tl + 1);
        if (!pieces || !pieces->text) {
            free(pieces);
            snprintf(err, errcap, "prompt: out of memory");
            return -1;
        }
        pieces->weight = 1.0;
    }
    struct chunker c = {.last_comma = -1, .bos = sdp_tokenizer_bos(tok), .eos = sdp_tokenizer_eos(tok)};
    int64_t comma_ids[3], *ids = NULL;
    int full, rc = -1;
    /* the comma's id: "," alone is [BOS, ",</w>", EOS] */
    if (sdp_tokenizer_encode(tok, ",", comma_ids, 3, &full, err, errcap)) goto done;
    const int64_t comma = full == 3 ? comma_ids[1] : -1;
    for (int p = 0; p < np; p++) {
        if (pieces[p].is_break) {
            if (next_chunk(&c, 0)) goto oom;
            continue;
        }
        /* the piece's tokens without BOS/EOS or truncation: a first call for the count */
        int64_t two[2];
        if (sdp_tokenizer_encode(tok, pieces[p].text, two, 2, &full, err, errcap)) goto done;
        free(ids);
        if (!(ids = malloc((size_t)full * sizeof *ids))) goto oom;
        if (sdp_tokenizer_encode(tok, pieces[p].text, ids, full, &full, err, errcap)) goto done;
        const float w = (float)pieces[p].weight;
        for (int k = 1; k + 1 < full; k++) {
            int64_t t = ids[k];
            if (t == comma) {
                c.last_comma = c.len;
            } else if (comma_backtrack != 0 && c.len == CHUNK && c.last_comma != -1 &&
                       c.len - c.last_comma <= comma_backtrack) {
                int at = c.last_comma + 1, nrel = c.len - at;
                int64_t rt[CHUNK];
                float rm[CHUNK];
                memcpy(rt, c.tok + at, (size_t)nrel * sizeof *rt);
                memcpy(rm, c.tm + at, (size_t)nrel * sizeof *rm);
                c.len = at;
                if (next_chunk(&c, 0)) goto oom;
                memcpy(c.tok, rt, (size_t)nrel * sizeof *rt);
                memcpy(c.tm, rm, (size_t)nrel * sizeof *rm);
                c.len = nrel;
            }
            if (c.len == CHUNK && next_chunk(&c, 0)) goto oom;
            c.tok[c.len] = t;
            c.tm[c.len++] = w;
        }
    }
    if ((c.len > 0 || c.n_chunks == 0) && next_chunk(&c, 1)) goto oom;
    out->n_chunks = c.n_chunks;
    out->ids = c.ids;
    out->mult = c.mult;
    out->token_count = c.token_count;
    c.ids = NULL;
    c.mult = NULL;
    rc = 0;
    goto done;
oom:
    snprintf(err, errcap, "prompt: out of memory");
done:
    free(ids);
    free(c.ids);
    free(c.mult);
    sdp_prompt_pieces_free(pieces, np);
    return rc;
}

void sdp_prompt_chunks_free(struct sdp_prompt_chunks *c)
{
    free(c->ids);
    free(c->mult);
    memset(c, 0, sizeof *c);
}

void sdp_prompt_multiply(float *z, const float *mult, size_t n_tok, size_t dim)
{
    for (size_t t = 0; t < n_tok; t++)
        for (size_t c = 0; c < dim; c++) z[t * dim + c] *= mult[t];
}

void sdp_prompt_emphasis(float *z, const float *mult, size_t n_tok, size_t dim)
{
    size_t n = n_tok * dim;
    if (!n) return;
    double before = 0, after = 0;
    for (size_t i = 0; i < n; i++) before += z[i];
    for (size_t t = 0; t < n_tok; t++)
        for (size_t c = 0; c < dim; c++) {
            z[t * dim + c] *= mult[t];
            after += z[t * dim + c];
        }
    float ratio = (float)(before / (double)n) / (float)(after / (double)n);
    for (size_t i = 0; i < n; i++) z[i] *= ratio;
}
