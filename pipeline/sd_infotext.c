/* sd_infotext.c — A1111's infotext and short model hash (see sd_infotext.h).
 *
 * Assumes: POSIX stat. Guarantees: the text never holds a local path (Model is a base name);
 * the hash is SHA-256 (FIPS 180-4) of the whole file, read in 1 MiB chunks.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "sd_infotext.h"

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

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_compress(uint32_t st[8], const unsigned char *blk)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)blk[4 * i] << 24 | (uint32_t)blk[4 * i + 1] << 16 | (uint32_t)blk[4 * i + 2] << 8 | blk[4 * i + 3];
    for (int i = 16; i < 64; i++)
        w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
               (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
    memcpy(v, st, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t s1 = ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25), ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + s1 + ch + K256[i] + w[i];
        uint32_t s0 = ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22), mj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        memmove(v + 1, v, 7 * sizeof *v);
        v[4] += t1;
        v[0] = t1 + s0 + mj;
    }
    for (int i = 0; i < 8; i++) st[i] += v[i];
}

int sdp_sha256_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint32_t st[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t cap = 1 << 20, n;
    unsigned char *buf = malloc(cap + 128);
    uint64_t total = 0;
    if (!buf) {
        fclose(f);
        errno = ENOMEM;
        return -1;
    }
    size_t have = 0; /* bytes of buf not yet compressed (< 64 between reads) */
    while ((n = fread(buf + have, 1, cap - have, f)) > 0) {
        total += n;
        have += n;
        size_t full = have / 64 * 64;
        for (size_t i = 0; i < full; i += 64) sha_compress(st, buf + i);
        memmove(buf, buf + full, have - full);
        have -= full;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return -1;
    }
    buf[have++] = 0x80;
    while (have % 64 != 56) buf[have++] = 0;
    uint64_t bits = total * 8u;
    for (int i = 7; i >= 0; i--) buf[have++] = (unsigned char)(bits >> (8 * i));
    for (size_t i = 0; i < have; i += 64) sha_compress(st, buf + i);
    free(buf);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", (unsigned)st[i]);
    return 0;
}

int sdp_model_hash(const char *ckpt_path, const char *cache_dir, char out[11])
{
    struct stat sb;
    char ckpt[4096];
    if (!realpath(ckpt_path, ckpt)) return -1;
    if (stat(ckpt, &sb) != 0 || !S_ISREG(sb.st_mode)) return -1;
    unsigned long long size = (unsigned long long)sb.st_size;
    unsigned long long mt = (unsigned long long)sb.st_mtim.tv_sec * 1000000000ull + (unsigned long long)sb.st_mtim.tv_nsec;
    char cpath[4200], line[8192], hex[65] = "";
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
        if (sdp_sha256_file(ckpt, hex)) return -1;
        FILE *f = cache_dir && !strpbrk(ckpt, "\t\n") ? fopen(cpath, "a") : NULL;
        if (f) {
            fprintf(f, "%s\t%llu\t%llu\t%s\n", ckpt, size, mt, hex);
            fclose(f);
        }
    }
    memcpy(out, hex, 10);
    out[10] = 0;
    return 0;
}
