/* clip_tokenizer.c — CLIP byte-level BPE (see clip_tokenizer.h for the spec it follows).
 *
 * Assumes: vocab.json maps symbol strings (GPT-2 byte-table characters, "</w>" marking a word's
 * last symbol) to ids; merges.txt lists "LEFT RIGHT" pairs by rank after an optional "#version"
 * line. Guarantees: encoding never allocates per call beyond two buffers sized by the input;
 * lookups are hash tables (open addressing), merges O(n^2) in the piece length at worst.
 */
#include "clip_tokenizer.h"
#include "json_file.h"
#include "../runtime/platform.h"
#include "unicode_tables.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hash tables ---------------------------------------------------------------------------- */

/* String -> id (vocab). Keys point into the JSON document kept alive by the tokenizer. */
struct str_map {
    uint32_t cap;        /* power of two */
    const char **keys;   /* NULL = empty slot */
    uint32_t *lens;      /* key lengths */
    int32_t *vals;       /* ids */
};

/* (left id, right id) -> (rank, merged id). */
struct pair_map {
    uint32_t cap;     /* power of two */
    uint64_t *keys;   /* (left << 32 | right) + 1; 0 = empty */
    int32_t *rank;    /* merge rank (line order) */
    int32_t *merged;  /* id of the concatenation */
};

struct sdp_tokenizer {
    cJSON *vocab_doc;           /* keeps the vocab key strings alive */
    struct str_map vocab;       /* symbol -> id */
    struct pair_map merges;     /* pair -> rank/merged id */
    int32_t byte_id[256];       /* id of the byte's symbol */
    int32_t byte_id_eow[256];   /* id of the byte's symbol + "</w>" */
    int32_t bos, eos, pad, unk; /* special ids (unk = eos, as CLIPTokenizer) */
    uint32_t pad_lit[64];       /* pad_token's code points when it is an added token of its own
                                 * (SD 2.x: "!"), split out of the text like BOS/EOS */
    size_t pad_lit_n;           /* 0: pad is BOS/EOS, nothing extra to split out */
    int32_t vocab_size;         /* largest id + 1 */
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int str_map_init(struct str_map *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 16) m->cap *= 2;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->lens = calloc(m->cap, sizeof *m->lens);
    m->vals = calloc(m->cap, sizeof *m->vals);
    return m->keys && m->lens && m->vals ? 0 : -1;
}

static void str_map_free(struct str_map *m)
{
    free(m->keys);
    free(m->lens);
    free(m->vals);
}

/* Slot of key (existing or the empty slot where it would go). */
static uint32_t str_map_slot(const struct str_map *m, const char *k, size_t n)
{
    uint32_t i = (uint32_t)hash_bytes(k, n) & (m->cap - 1);
    while (m->keys[i] && !(m->lens[i] == n && memcmp(m->keys[i], k, n) == 0))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int32_t str_map_get(const struct str_map *m, const char *k, size_t n)
{
    uint32_t i = str_map_slot(m, k, n);
    return m->keys[i] ? m->vals[i] : -1;
}

static int pair_map_init(struct pair_map *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 16) m->cap *= 2;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->rank = calloc(m->cap, sizeof *m->rank);
    m->merged = calloc(m->cap, sizeof *m->merged);
    return m->keys && m->rank && m->merged ? 0 : -1;
}

static void pair_map_free(struct pair_map *m)
{
    free(m->keys);
    free(m->rank);
    free(m->merged);
}

static uint32_t pair_map_slot(const struct pair_map *m, uint64_t key)
{
    uint32_t i = (uint32_t)hash_u64(key) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

/* Rank of merging (a, b) or -1; merged id in *out. */
static int32_t pair_rank(const struct pair_map *m, int32_t a, int32_t b, int32_t *out)
{
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    uint32_t i = pair_map_slot(m, key);
    if (!m->keys[i]) return -1;
    *out = m->merged[i];
    return m->rank[i];
}

/* ---- Unicode -------------------------------------------------------------------------------- */

static int in_ranges(const uint32_t (*r)[2], uint32_t n, uint32_t cp)
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

static int is_letter(uint32_t cp) { return in_ranges(uni_letter, uni_letter_n, cp); }
static int is_number(uint32_t cp) { return in_ranges(uni_number, uni_number_n, cp); }

/* Unicode White_Space (what the tokenizers regex \s matches). */
static int is_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

static unsigned ccc(uint32_t cp)
{
    uint32_t lo = 0, hi = uni_ccc_n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (uni_ccc[mid][0] == cp) return uni_ccc[mid][1];
        if (uni_ccc[mid][0] < cp) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* Hangul syllable constants (Unicode 3.12). */
enum { H_SBASE = 0xAC00, H_LBASE = 0x1100, H_VBASE = 0x1161, H_TBASE = 0x11A7, H_LCOUNT = 19,
       H_VCOUNT = 21, H_TCOUNT = 28, H_NCOUNT = H_VCOUNT * H_TCOUNT, H_SCOUNT = H_LCOUNT * H_NCOUNT };

/* Appends the full canonical decomposition of cp to out; returns the count (<= 4). */
static int decompose(uint32_t cp, uint32_t *out)
{
    if (cp >= H_SBASE && cp < H_SBASE + H_SCOUNT) {
        uint32_t s = cp - H_SBASE, t = s % H_TCOUNT;
        out[0] = H_LBASE + s / H_NCOUNT;
        out[1] = H_VBASE + (s % H_NCOUNT) / H_TCOUNT;
        if (t) out[2] = H_TBASE + t;
        return t ? 3 : 2;
    }
    uint32_t lo = 0, hi = uni_decomp_n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (uni_decomp[mid].cp == cp) {
            int n = 0;
            while (n < 4 && uni_decomp[mid].to[n]) out[n] = uni_decomp[mid].to[n], n++;
            return n;
        }
        if (uni_decomp[mid].cp < cp) lo = mid + 1;
        else hi = mid;
    }
    out[0] = cp;
    return 1;
}

/* Primary composite of (a, b) or 0. */
static uint32_t compose(uint32_t a, uint32_t b)
{
    if (a >= H_LBASE && a < H_LBASE + H_LCOUNT && b >= H_VBASE && b < H_VBASE + H_VCOUNT)
        return H_SBASE + ((a - H_LBASE) * H_VCOUNT + (b - H_VBASE)) * H_TCOUNT;
    if (a >= H_SBASE && a < H_SBASE + H_SCOUNT && (a - H_SBASE) % H_TCOUNT == 0 &&
        b > H_TBASE && b < H_TBASE + H_TCOUNT)
        return a + (b - H_TBASE);
    uint32_t lo = 0, hi = uni_comp_n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const uint32_t *e = uni_comp[mid];
        if (e[0] == a && e[1] == b) return e[2];
        if (e[0] < a || (e[0] == a && e[1] < b)) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* NFC of cps[0..n) into out (capacity 4n); returns the new length. */
static size_t nfc(const uint32_t *cps, size_t n, uint32_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += (size_t)decompose(cps[i], out + m);
    /* canonical ordering: stable insertion sort of each run of non-starters by class */
    for (size_t i = 1; i < m; i++) {
        unsigned ci = ccc(out[i]);
        if (!ci) continue;
        size_t j = i;
        uint32_t c = out[i];
        while (j > 0 && ccc(out[j - 1]) > ci) out[j] = out[j - 1], j--;
        out[j] = c;
    }
    if (m == 0) return 0;
    /* canonical composition */
    size_t starter = 0, w = 1;
    unsigned last = ccc(out[0]) ? 256 : 0;
    for (size_t r = 1; r < m; r++) {
        uint32_t c = out[r];
        unsigned cc = ccc(c);
        uint32_t comp = (last < cc || last == 0) ? compose(out[starter], c) : 0;
        if (comp) {
            out[starter] = comp;
            continue;
        }
        if (cc == 0) starter = w;
        last = cc;
        out[w++] = c;
    }
    return w;
}

/* Per-code-point lower case; writes 1..3 code points, returns the count. */
static int lower(uint32_t cp, uint32_t *out)
{
    uint32_t lo = 0, hi = uni_lower_n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (uni_lower[mid].cp == cp) {
            int n = 0;
            while (n < 3 && uni_lower[mid].to[n]) out[n] = uni_lower[mid].to[n], n++;
            return n;
        }
        if (uni_lower[mid].cp < cp) lo = mid + 1;
        else hi = mid;
    }
    out[0] = cp;
    return 1;
}

/* Decodes UTF-8 (strict: no overlongs, surrogates or > U+10FFFF). Returns count or -1 with the
 * byte offset of the problem in *bad. */
static long utf8_decode(const unsigned char *s, size_t n, uint32_t *out, size_t *bad)
{
    size_t i = 0, m = 0;
    while (i < n) {
        unsigned c = s[i];
        uint32_t cp;
        int k;
        if (c < 0x80) cp = c, k = 0;
        else if (c >= 0xC2 && c < 0xE0) cp = c & 0x1F, k = 1;
        else if (c >= 0xE0 && c < 0xF0) cp = c & 0x0F, k = 2;
        else if (c >= 0xF0 && c < 0xF5) cp = c & 0x07, k = 3;
        else goto bad;
        for (int j = 1; j <= k; j++) {
            if (i + (size_t)j >= n || (s[i + j] & 0xC0) != 0x80) goto bad;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            goto bad;
        out[m++] = cp;
        i += (size_t)k + 1;
    }
    return (long)m;
bad:
    *bad = i;
    return -1;
}

/* GPT-2 byte -> printable code point table (bytes_to_unicode). */
static uint32_t byte_char(unsigned b)
{
    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) return b;
    unsigned n = 0;
    for (unsigned x = 0; x < b; x++)
        if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF))) n++;
    return 256 + n;
}

/* Code point cp (<= 0x10FFFF) as UTF-8 into o (4 bytes of room); returns the byte count. */
static size_t utf8_put(uint32_t cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 63));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 63));
        o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 63));
    o[2] = (char)(0x80 | ((cp >> 6) & 63));
    o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* ---- loading -------------------------------------------------------------------------------- */

static const char *json_token_string(const cJSON *v)
{
    if (cJSON_IsString(v)) return v->valuestring;
    if (cJSON_IsObject(v)) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, "content");
        if (cJSON_IsString(c)) return c->valuestring;
    }
    return NULL;
}

/* Reads pad_token from tokenizer_config.json, else special_tokens_map.json; NULL if neither has
 * one. Returns -1 on a malformed file. The string is copied to pad (cap bytes). */
static int read_pad_token(const char *dir, char *pad, size_t cap, char *err, size_t errcap)
{
    static const char *const names[] = {"tokenizer_config.json", "special_tokens_map.json"};
    pad[0] = 0;
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int odd;
        FILE *f = o2r_fopen_regular(path, &odd);
        if (!f && !odd) continue; /* absent: optional; not regular: refused by the parse */
        if (f) fclose(f);
        cJSON *j = sdp_json_file(path, err, errcap);
        if (!j) return -1;
        const cJSON *p = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "pad_token") : NULL;
        const char *s = json_token_string(p);
        if (p && !cJSON_IsNull(p) && !s) {
            snprintf(err, errcap, "%s: pad_token is neither a string nor {\"content\": string}", path);
            cJSON_Delete(j);
            return -1;
        }
        if (s) snprintf(pad, cap, "%s", s);
        cJSON_Delete(j);
        if (s) return 0;
    }
    return 0;
}

static int load_vocab(struct sdp_tokenizer *t, const char *dir, char *err, size_t errcap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    t->vocab_doc = sdp_json_file(path, err, errcap);
    if (!t->vocab_doc) return -1;
    const cJSON *v = t->vocab_doc;
    const int nv = cJSON_GetArraySize(v);
    if (!cJSON_IsObject(v) || nv == 0) {
        snprintf(err, errcap, "%s: expected a non-empty object {symbol: id}", path);
        return -1;
    }
    if (str_map_init(&t->vocab, (size_t)nv)) {
        snprintf(err, errcap, "%s: out of memory", path);
        return -1;
    }
    t->vocab_size = 0;
    for (const cJSON *id = v->child; id; id = id->next) {
        const double num = id->valuedouble;
        if (!cJSON_IsNumber(id) || num < 0 || num > 1e8 || num != (double)(int32_t)num) {
            snprintf(err, errcap, "%s: entry \"%s\": id is not a non-negative integer", path, id->string);
            return -1;
        }
        size_t n = strlen(id->string);
        uint32_t s = str_map_slot(&t->vocab, id->string, n);
        if (t->vocab.keys[s]) {
            snprintf(err, errcap, "%s: symbol \"%s\" listed twice", path, id->string);
            return -1;
        }
        t->vocab.keys[s] = id->string;
        t->vocab.lens[s] = (uint32_t)n;
        t->vocab.vals[s] = (int32_t)num;
        if ((int32_t)num + 1 > t->vocab_size) t->vocab_size = (int32_t)num + 1;
    }
    return 0;
}

static int load_merges(struct sdp_tokenizer *t, const char *dir, char *err, size_t errcap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    int odd; /* a FIFO without a writer is refused, never waited on */
    FILE *f = o2r_fopen_regular(path, &odd);
    if (!f) {
        snprintf(err, errcap, "%s: %s%s", path, odd ? "not a regular file" : "cannot read: ",
                 odd ? "" : strerror(errno));
        return -1;
    }
    size_t cap = 1024, nlines = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    /* count lines for the table size */
    while ((len = o2r_getline(&line, &lcap, f)) >= 0) nlines++;
    rewind(f);
    if (pair_map_init(&t->merges, nlines > cap ? nlines : cap)) {
        fclose(f);
        free(line);
        snprintf(err, errcap, "%s: out of memory", path);
        return -1;
    }
    int rank = 0, lineno = 0, rc = 0;
    char buf[1024];
    while ((len = o2r_getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (lineno == 1 && strncmp(line, "#version", 8) == 0) continue;
        if (len == 0) continue;
        char *sp = strchr(line, ' ');
        if (!sp || sp == line || !sp[1] || strchr(sp + 1, ' ') || (size_t)len >= sizeof buf) {
            snprintf(err, errcap, "%s:%d: expected \"LEFT RIGHT\" (two symbols, one space)", path,
                     lineno);
            rc = -1;
            break;
        }
        size_t la = (size_t)(sp - line), lb = (size_t)len - la - 1;
        int32_t a = str_map_get(&t->vocab, line, la), b = str_map_get(&t->vocab, sp + 1, lb);
        memcpy(buf, line, la);
        memcpy(buf + la, sp + 1, lb);
        int32_t ab = str_map_get(&t->vocab, buf, la + lb);
        if (a < 0 || b < 0 || ab < 0) {
            snprintf(err, errcap, "%s:%d: merge \"%s\": %s not in vocab.json", path, lineno, line,
                     a < 0 ? "left symbol" : b < 0 ? "right symbol" : "merged symbol");
            rc = -1;
            break;
        }
        uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
        uint32_t s = pair_map_slot(&t->merges, key);
        if (!t->merges.keys[s]) { /* a repeated pair keeps its first (best) rank */
            t->merges.keys[s] = key;
            t->merges.rank[s] = rank;
            t->merges.merged[s] = ab;
        }
        rank++;
    }
    free(line);
    fclose(f);
    if (!rc && rank == 0) {
        snprintf(err, errcap, "%s: no merges", path);
        rc = -1;
    }
    return rc;
}

int sdp_tokenizer_load(const char *dir, struct sdp_tokenizer **out, char *err, size_t errcap)
{
    *out = NULL;
    struct sdp_tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errcap, "%s: out of memory", dir);
        return -1;
    }
    char pad[256];
    if (load_vocab(t, dir, err, errcap) || load_merges(t, dir, err, errcap) ||
        read_pad_token(dir, pad, sizeof pad, err, errcap))
        goto fail;
    t->bos = str_map_get(&t->vocab, "<|startoftext|>", 15);
    t->eos = str_map_get(&t->vocab, "<|endoftext|>", 13);
    if (t->bos < 0 || t->eos < 0) {
        snprintf(err, errcap, "%s/vocab.json: no %s entry", dir,
                 t->bos < 0 ? "\"<|startoftext|>\"" : "\"<|endoftext|>\"");
        goto fail;
    }
    t->unk = t->eos;
    t->pad = pad[0] ? str_map_get(&t->vocab, pad, strlen(pad)) : t->eos;
    if (t->pad < 0) {
        snprintf(err, errcap, "%s: pad_token \"%s\" is not in vocab.json", dir, pad);
        goto fail;
    }
    if (pad[0] && strcmp(pad, "<|startoftext|>") != 0 && strcmp(pad, "<|endoftext|>") != 0) {
        /* transformers registers pad_token as a special added token: matched in the raw text */
        size_t bad = 0, pn = strlen(pad);
        long m = pn < sizeof t->pad_lit / sizeof *t->pad_lit
                     ? utf8_decode((const unsigned char *)pad, pn, t->pad_lit, &bad) : -1;
        if (m <= 0) {
            snprintf(err, errcap, "%s: pad_token \"%s\" is not valid UTF-8 of at most %zu bytes", dir, pad,
                     sizeof t->pad_lit / sizeof *t->pad_lit - 1);
            goto fail;
        }
        t->pad_lit_n = (size_t)m;
    }
    for (unsigned b = 0; b < 256; b++) {
        char s[16];
        size_t n = utf8_put(byte_char(b), s);
        t->byte_id[b] = str_map_get(&t->vocab, s, n);
        memcpy(s + n, "</w>", 4);
        t->byte_id_eow[b] = str_map_get(&t->vocab, s, n + 4);
    }
    *out = t;
    return 0;
fail:
    sdp_tokenizer_free(t);
    return -1;
}

void sdp_tokenizer_free(struct sdp_tokenizer *t)
{
    if (!t) return;
    str_map_free(&t->vocab);
    pair_map_free(&t->merges);
    cJSON_Delete(t->vocab_doc);
    free(t);
}

int sdp_tokenizer_vocab_size(const struct sdp_tokenizer *t) { return t->vocab_size; }
int64_t sdp_tokenizer_bos(const struct sdp_tokenizer *t) { return t->bos; }
int64_t sdp_tokenizer_eos(const struct sdp_tokenizer *t) { return t->eos; }
int64_t sdp_tokenizer_pad(const struct sdp_tokenizer *t) { return t->pad; }

/* ---- encoding ------------------------------------------------------------------------------- */

/* Output list of ids (grows). */
struct idlist {
    int32_t *v;
    size_t n, cap;
};

static int push(struct idlist *l, int32_t id)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 128;
        int32_t *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv) return -1;
        l->v = nv, l->cap = nc;
    }
    l->v[l->n++] = id;
    return 0;
}

/* BPE of one pre-tokenized piece (UTF-8 bytes) appended to out. sym is scratch (n ids). */
static int bpe_piece(const struct sdp_tokenizer *t, const unsigned char *s, size_t n,
                     int32_t *sym, struct idlist *out)
{
    for (size_t i = 0; i < n; i++) {
        sym[i] = i + 1 == n ? t->byte_id_eow[s[i]] : t->byte_id[s[i]];
        if (sym[i] < 0) sym[i] = t->unk; /* a vocab without this byte symbol */
    }
    size_t m = n;
    for (;;) {
        int32_t best = -1, merged = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < m; i++) {
            int32_t id, r = pair_rank(&t->merges, sym[i], sym[i + 1], &id);
            if (r >= 0 && (best < 0 || r < best)) best = r, merged = id, at = i;
        }
        if (best < 0) break;
        sym[at] = merged;
        memmove(sym + at + 1, sym + at + 2, (m - at - 2) * sizeof *sym);
        m--;
    }
    for (size_t i = 0; i < m; i++)
        if (push(out, sym[i])) return -1;
    return 0;
}

static int match_lit(const uint32_t *c, size_t n, size_t i, const char *lit)
{
    size_t l = strlen(lit);
    if (i + l > n) return 0;
    for (size_t k = 0; k < l; k++)
        if (c[i + k] != (unsigned char)lit[k]) return 0;
    return 1;
}

/* Normalizes and pre-tokenizes cps[0..n) (a span without literal special tokens) and appends
 * the BPE ids. */
static int encode_span(const struct sdp_tokenizer *t, const uint32_t *cps, size_t n,
                       struct idlist *out)
{
    if (n == 0) return 0;
    int rc = -1;
    uint32_t *a = malloc(4 * n * sizeof *a), *b = malloc(12 * n * sizeof *b);
    unsigned char *bytes = malloc(48 * n + 4);
    int32_t *sym = malloc((48 * n + 4) * sizeof *sym);
    if (!a || !b || !bytes || !sym) goto done;
    size_t m = nfc(cps, n, a), k = 0;
    /* white space runs -> " ", then lower case */
    for (size_t i = 0; i < m; i++) {
        if (is_space(a[i])) {
            while (i + 1 < m && is_space(a[i + 1])) i++;
            b[k++] = ' ';
        } else {
            k += (size_t)lower(a[i], b + k);
        }
    }
    /* pre-tokenizer: CLIP's regex, alternatives in order, leftmost-first */
    size_t i = 0;
    while (i < k) {
        size_t j;
        uint32_t c = b[i];
        int lit = match_lit(b, k, i, "<|startoftext|>") ? 15 : match_lit(b, k, i, "<|endoftext|>") ? 13 : 0;
        if (lit) {
            /* ByteLevel's GPT-2 regex splits this piece again: "<|", the word, "|>" */
            size_t cut[4] = {i, i + 2, i + (size_t)lit - 2, i + (size_t)lit};
            for (int q = 0; q < 3; q++) {
                size_t nb = 0;
                for (size_t x = cut[q]; x < cut[q + 1]; x++) nb += utf8_put(b[x], (char *)bytes + nb);
                if (bpe_piece(t, bytes, nb, sym, out)) goto done;
            }
            i += (size_t)lit;
            continue;
        }
        if (c == '\'' && i + 1 < k && (b[i + 1] == 's' || b[i + 1] == 't' || b[i + 1] == 'm' ||
                                            b[i + 1] == 'd'))
            j = i + 2;
        else if (c == '\'' && (match_lit(b, k, i, "'re") || match_lit(b, k, i, "'ve") ||
                               match_lit(b, k, i, "'ll")))
            j = i + 3;
        else if (is_letter(c))
            for (j = i + 1; j < k && is_letter(b[j]); j++) {}
        else if (is_number(c))
            j = i + 1;
        else if (is_space(c)) {
            i++;
            continue;
        } else
            for (j = i + 1; j < k && !is_space(b[j]) && !is_letter(b[j]) && !is_number(b[j]); j++) {}
        size_t nb = 0;
        for (size_t q = i; q < j; q++) nb += utf8_put(b[q], (char *)bytes + nb);
        if (bpe_piece(t, bytes, nb, sym, out)) goto done;
        i = j;
    }
    rc = 0;
done:
    free(a);
    free(b);
    free(bytes);
    free(sym);
    return rc;
}

int sdp_tokenizer_encode(const struct sdp_tokenizer *t, const char *text, int64_t *ids,
                         int max_len, int *n_full, char *err, size_t errcap)
{
    if (max_len < 2) {
        snprintf(err, errcap, "tokenizer: max_len %d < 2", max_len);
        return -1;
    }
    size_t n = strlen(text), bad = 0;
    uint32_t *cps = malloc((n + 1) * sizeof *cps);
    struct idlist out = {0};
    if (!cps) {
        snprintf(err, errcap, "tokenizer: out of memory");
        return -1;
    }
    long m = utf8_decode((const unsigned char *)text, n, cps, &bad);
    if (m < 0) {
        snprintf(err, errcap, "prompt is not valid UTF-8 (byte %zu)", bad);
        free(cps);
        return -1;
    }
    int rc = push(&out, t->bos);
    /* literal special tokens are split out before normalization (added tokens: BOS, EOS and a
     * pad_token of its own, leftmost then longest first) */
    size_t start = 0;
    for (size_t i = 0; i < (size_t)m && !rc;) {
        size_t s = match_lit(cps, (size_t)m, i, "<|startoftext|>") ? 15
                   : match_lit(cps, (size_t)m, i, "<|endoftext|>") ? 13 : 0;
        int32_t id = s == 15 ? t->bos : t->eos;
        if (t->pad_lit_n > s && i + t->pad_lit_n <= (size_t)m &&
            memcmp(cps + i, t->pad_lit, t->pad_lit_n * sizeof *cps) == 0)
            s = t->pad_lit_n, id = t->pad;
        if (!s) {
            i++;
            continue;
        }
        rc = encode_span(t, cps + start, i - start, &out);
        if (!rc) rc = push(&out, id);
        i += s;
        start = i;
    }
    if (!rc) rc = encode_span(t, cps + start, (size_t)m - start, &out);
    if (!rc) rc = push(&out, t->eos);
    free(cps);
    if (rc) {
        free(out.v);
        snprintf(err, errcap, "tokenizer: out of memory");
        return -1;
    }
    *n_full = (int)out.n;
    int keep = out.n > (size_t)max_len ? max_len : (int)out.n;
    for (int i = 0; i < keep; i++) ids[i] = out.v[i];
    if (out.n > (size_t)max_len) ids[max_len - 1] = t->eos;
    for (int i = keep; i < max_len; i++) ids[i] = t->pad;
    free(out.v);
    return 0;
}
