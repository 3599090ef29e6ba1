/* sd_infotext.c — A1111's infotext and short model hash (see sd_infotext.h).
 *
 * Assumes: POSIX stat. Guarantees: the text never holds a local path (Model is a base name);
 * the hash is SHA-256 (FIPS 180-4) of the whole file, read in 1 MiB chunks.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "sd_infotext.h"

#include "../runtime/sha256.h"
#include "../runtime/platform.h" /* o2r_realpath, o2r_file_stat */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- infotext -------------------------------------------------------------------------------- */

/* A1111's quote(): as is unless it holds ',', ':' or a newline, else a JSON string. */
static size_t put_value(char *buf, size_t cap, size_t o, const char *v)
{
    if (!strpbrk(v, ",:\n")) return o + (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s", v);
    o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "\"");
    for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
        char e[8];
        if (*c == '"' || *c == '\\') snprintf(e, sizeof e, "\\%c", *c);
        else if (*c == '\n') snprintf(e, sizeof e, "\\n");
        else if (*c == '\r') snprintf(e, sizeof e, "\\r");
        else if (*c == '\t') snprintf(e, sizeof e, "\\t");
        else if (*c < 0x20) snprintf(e, sizeof e, "\\u%04x", *c);
        else e[0] = (char)*c, e[1] = 0;
        o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s", e);
    }
    return o + (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "\"");
}

static size_t put_kv(char *buf, size_t cap, size_t o, const char *k, const char *v)
{
    o += (size_t)snprintf(buf + (o < cap ? o : 0), o < cap ? cap - o : 0, ", %s: ", k); /* after "Steps: N" */
    return put_value(buf, cap, o, v);
}

const char *sdp_infotext_emphasis(const char *name, const char *prompt, const char *negative)
{
    if (!name || !strcmp(name, "Original")) return NULL;
    if ((prompt && strpbrk(prompt, "([")) || (negative && strpbrk(negative, "("))) return name;
    if (negative && strchr(negative, '[')) return name;
    return NULL;
}

size_t sdp_infotext(const struct sdp_infotext *it, char *buf, size_t cap)
{
    if (!cap) return 0;
    buf[0] = 0;
    size_t o = (size_t)snprintf(buf, cap, "%s\n", it->prompt);
    if (it->negative && it->negative[0])
        o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "Negative prompt: %s\n", it->negative);
    char v[64];
    o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "Steps: %d", it->steps);
    o = put_kv(buf, cap, o, "Sampler", it->sampler);
    if (it->schedule && it->schedule[0]) o = put_kv(buf, cap, o, "Schedule type", it->schedule);
    else if (it->karras) o = put_kv(buf, cap, o, "Schedule type", "Karras");
    snprintf(v, sizeof v, "%g", it->cfg);
    o = put_kv(buf, cap, o, "CFG scale", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)it->seed);
    o = put_kv(buf, cap, o, "Seed", v);
    snprintf(v, sizeof v, "%dx%d", it->width, it->height);
    o = put_kv(buf, cap, o, "Size", v);
    if (it->model_hash && it->model_hash[0]) o = put_kv(buf, cap, o, "Model hash", it->model_hash);
    if (it->model && it->model[0]) o = put_kv(buf, cap, o, "Model", it->model);
    if (it->strength >= 0) {
        snprintf(v, sizeof v, "%g", it->strength);
        o = put_kv(buf, cap, o, "Denoising strength", v);
    }
    if (it->clip_skip > 1) {
        snprintf(v, sizeof v, "%d", it->clip_skip);
        o = put_kv(buf, cap, o, "Clip skip", v);
    }
    if (it->inpaint) {
        snprintf(v, sizeof v, "%g", it->mask_blur);
        o = put_kv(buf, cap, o, "Mask blur", v);
    }
    if (it->emphasis && it->emphasis[0]) o = put_kv(buf, cap, o, "Emphasis", it->emphasis);
    if (it->lora_hashes && it->lora_hashes[0]) o = put_kv(buf, cap, o, "Lora hashes", it->lora_hashes);
    if (it->extra && it->extra[0]) o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, ", %s", it->extra);
    o = put_kv(buf, cap, o, "Version", it->version);
    if (cap && o >= cap) buf[cap - 1] = 0;
    return o;
}

char *sdp_infotext_dup(const struct sdp_infotext *it)
{
    size_t cap = 1024 + 2 * strlen(it->prompt) + (it->negative ? 2 * strlen(it->negative) : 0);
    for (;;) {
        char *s = malloc(cap);
        if (!s) return NULL;
        size_t n = sdp_infotext(it, s, cap);
        if (n < cap) return s;
        free(s);
        cap = n + 1;
    }
}

/* ---- SHA-256 --------------------------------------------------------------------------------- */

/* SHA-256 of a file's bytes from offset on (0: the whole file). */
static int sha256_file_from(const char *path, uint64_t offset, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    if (offset && fseek(f, (long)offset, SEEK_SET) != 0) {
        fclose(f);
        errno = EIO;
        return -1;
    }
    size_t cap = 1 << 20, n;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        errno = ENOMEM;
        return -1;
    }
    struct o2r_sha256 s;
    o2r_sha256_init(&s);
    while ((n = fread(buf, 1, cap, f)) > 0) o2r_sha256_update(&s, buf, n);
    int bad = ferror(f);
    fclose(f);
    free(buf);
    if (bad) {
        errno = EIO;
        return -1;
    }
    uint8_t d[32];
    o2r_sha256_final(&s, d);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

int sdp_sha256_file(const char *path, char hex[65]) { return sha256_file_from(path, 0, hex); }

/* The SHA-256 of a regular file (addnet: of its bytes after the safetensors header, kohya's
 * addnet_hash_safetensors, A1111's LoRA hash) into hex, cached in cache_dir/model_hashes.tsv by
 * real path (prefixed "addnet:" for the addnet hash), size and mtime. */
static int cached_sha256(const char *path_in, const char *cache_dir, int addnet, char hex[65])
{
    char real[4096], ckpt[4200];
    uint64_t sz, mtime;
    if (!o2r_realpath(path_in, real, sizeof real)) return -1;
    if (!o2r_path_is_file(real) || o2r_file_stat(real, &sz, &mtime) != 0) return -1;
    snprintf(ckpt, sizeof ckpt, "%s%s", addnet ? "addnet:" : "", real);
    unsigned long long size = (unsigned long long)sz;
    unsigned long long mt = (unsigned long long)mtime;
    char cpath[4200], line[8192];
    hex[0] = 0;
    if (cache_dir) {
        snprintf(cpath, sizeof cpath, "%s/model_hashes.tsv", cache_dir);
        FILE *f = fopen(cpath, "r");
        while (f && fgets(line, sizeof line, f)) { /* path \t size \t mtime \t sha256 */
            char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL, *t3 = t2 ? strchr(t2 + 1, '\t') : NULL;
            if (!t3) continue;
            *t1 = 0;
            if (strcmp(line, ckpt) || strtoull(t1 + 1, NULL, 10) != size || strtoull(t2 + 1, NULL, 10) != mt) continue;
            if (strlen(t3 + 1) >= 64) memcpy(hex, t3 + 1, 64), hex[64] = 0;
        }
        if (f) fclose(f);
    }
    if (!hex[0]) {
        uint64_t off = 0;
        if (addnet) { /* u64 little-endian header length, then the header */
            unsigned char b[8];
            FILE *f = fopen(real, "rb");
            size_t got = f ? fread(b, 1, 8, f) : 0;
            if (f) fclose(f);
            if (got != 8) return -1;
            for (int i = 7; i >= 0; i--) off = off << 8 | b[i];
            if (off > sz - 8) return -1;
            off += 8;
        }
        if (sha256_file_from(real, off, hex)) return -1;
        FILE *f = cache_dir && !strpbrk(ckpt, "\t\n") ? fopen(cpath, "a") : NULL;
        if (f) {
            fprintf(f, "%s\t%llu\t%llu\t%s\n", ckpt, size, mt, hex);
            fclose(f);
        }
    }
    return 0;
}

/* The first n hex digits of cached_sha256 into out (n + 1 bytes). */
static int short_hash(const char *path, const char *cache_dir, int addnet, int n, char *out)
{
    char hex[65];
    if (cached_sha256(path, cache_dir, addnet, hex)) return -1;
    memcpy(out, hex, (size_t)n);
    out[n] = 0;
    return 0;
}

int sdp_model_hash(const char *ckpt_path, const char *cache_dir, char out[11])
{
    return short_hash(ckpt_path, cache_dir, 0, 10, out);
}

int sdp_lora_hash(const char *path, const char *cache_dir, char out[13]) { return short_hash(path, cache_dir, 1, 12, out); }

char *sdp_infotext_lora_hashes(const char *const *loras, int n, const char *cache_dir)
{
    size_t cap = 64 + (size_t)n * 300, len = 0;
    char *v = malloc(cap);
    if (!v) return NULL;
    v[0] = 0;
    for (int i = 0; i < n; i++) {
        char file[4096], h[13];
        snprintf(file, sizeof file, "%s", loras[i]);
        char *colon = strrchr(file, ':'), *e; /* FILE:SCALE (a number after the last ':', no '/') */
        if (colon && colon != file && !strchr(colon, '/')) {
            strtod(colon + 1, &e);
            if (e != colon + 1 && !*e) *colon = 0;
        }
        if (sdp_lora_hash(file, cache_dir, h)) continue;
        const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        size_t bl = strlen(base);
        if (bl > 12 && !strcmp(base + bl - 12, ".safetensors")) bl -= 12;
        char name[256];
        size_t k = 0;
        for (size_t j = 0; j < bl && k + 1 < sizeof name; j++)
            if (base[j] != ':' && base[j] != ',') name[k++] = base[j]; /* A1111 removes ":," from the name */
        name[k] = 0;
        len += (size_t)snprintf(v + len, cap - len, "%s%s: %s", len ? ", " : "", name, h);
    }
    if (!len) {
        free(v);
        return NULL;
    }
    return v;
}
