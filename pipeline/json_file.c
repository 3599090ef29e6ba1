/* json_file.c — see json_file.h. */
#include "json_file.h"

#include "../runtime/platform.h" /* o2r_fopen_regular */

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's json extensions made plain JSON, outside strings: Infinity as "1e999   " (cJSON reads
 * inf; padded to the same length), NaN as null. Copies the n bytes of in to out (room for
 * n + n / 3 + 1 bytes) when out is not NULL; stops once stop bytes are written. Returns the
 * bytes written; *in_at: the bytes of in consumed (so an offset in out maps back to one in in). */
static size_t python_literals(const char *in, size_t n, char *out, size_t stop, size_t *in_at)
{
    size_t i = 0, o = 0;
    int in_str = 0;
    while (i < n && o < stop) {
        size_t take = 1;
        const char *rep = NULL;
        if (in_str) {
            if (in[i] == '\\' && i + 1 < n) take = 2;
            else if (in[i] == '"') in_str = 0;
        } else if (in[i] == '"') {
            in_str = 1;
        } else if (n - i >= 8 && !memcmp(in + i, "Infinity", 8)) {
            take = 8, rep = "1e999   ";
        } else if (n - i >= 3 && !memcmp(in + i, "NaN", 3)) {
            take = 3, rep = "null";
        }
        size_t len = rep ? strlen(rep) : take;
        if (out) memcpy(out + o, rep ? rep : in + i, len);
        o += len;
        i += take;
    }
    if (in_at) *in_at = i;
    return o;
}

/* The message for a syntax error at byte off of buf (n bytes): line and column, and whether a
 * string or the input ended first. */
static void syntax_error(const char *path, const char *buf, size_t n, size_t off, char *err, size_t errcap)
{
    size_t line = 1, col = 1;
    int in_str = 0;
    for (size_t i = 0; i < off && i < n; i++) {
        if (buf[i] == '\n') line++, col = 1;
        else col++;
        if (in_str && buf[i] == '\\') i++, col++;
        else if (buf[i] == '"') in_str = !in_str;
    }
    const char *what = "not valid JSON";
    if (off >= n) what = in_str ? "unterminated string" : "unexpected end of input";
    else if (in_str) {
        size_t k = off;
        while (k < n && buf[k] != '"') k += buf[k] == '\\' ? 2 : 1;
        if (k >= n) what = "unterminated string";
    }
    snprintf(err, errcap, "%s:%zu:%zu: %s", path, line, col, what);
}

struct cJSON *sdp_json_file(const char *path, char *err, size_t errcap)
{
    int odd;
    FILE *f = o2r_fopen_regular(path, &odd);
    if (!f) {
        snprintf(err, errcap, "%s: %s%s", path, odd ? "not a regular file" : "cannot read: ", odd ? "" : strerror(errno));
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
    char *text = buf && !rerr ? malloc(n + n / 3 + 1) : NULL;
    if (!text) {
        snprintf(err, errcap, "%s: %s", path, buf && rerr ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    size_t len = python_literals(buf, n, text, SIZE_MAX, NULL);
    text[len] = 0;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
    if (!j) {
        size_t at = 0;
        python_literals(buf, n, NULL, end && end >= text ? (size_t)(end - text) : 0, &at);
        syntax_error(path, buf, n, at, err, errcap);
    }
    free(text);
    free(buf);
    return j;
}
