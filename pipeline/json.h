/* json.h — a small JSON reader (RFC 8259) for the pipeline's configuration files: the tokenizer's
 * vocab.json and tokenizer_config.json, the scheduler's scheduler_config.json, the VAE's
 * config.json.
 *
 * Assumes: the whole document fits in memory. Accepts Python's NaN/Infinity/-Infinity (which
 * json.dump writes into diffusers configs) as numbers. Guarantees: a parse error names the file, the line
 * and the column; strings are decoded to UTF-8 (\uXXXX escapes and surrogate pairs included);
 * numbers are kept as double; object members keep their file order. One allocation block per
 * document, freed by sdp_json_free.
 */
#ifndef PIPELINE_JSON_H
#define PIPELINE_JSON_H

#include <stddef.h>
#include <stdint.h>

enum sdp_json_type {
    SDP_JSON_NULL, SDP_JSON_BOOL, SDP_JSON_NUMBER, SDP_JSON_STRING, SDP_JSON_ARRAY, SDP_JSON_OBJECT,
};

/* One JSON value. Arrays and objects hold `n` children in `items` (objects also `keys`). */
struct sdp_json {
    enum sdp_json_type type;  /* kind of value */
    double num;               /* SDP_JSON_NUMBER value, SDP_JSON_BOOL 0/1 */
    const char *str;          /* SDP_JSON_STRING: NUL-terminated UTF-8 (may contain no NUL) */
    size_t len;               /* SDP_JSON_STRING: bytes in str */
    size_t n;                 /* number of items (array/object) */
    struct sdp_json **items;  /* children */
    const char **keys;        /* object member names (UTF-8), parallel to items */
};

/* Parses the file at `path`. Returns the root value (free with sdp_json_free) or NULL with a
 * message "PATH:LINE:COL: problem" (or "PATH: cannot read: ...") in err. */
struct sdp_json *sdp_json_parse_file(const char *path, char *err, size_t errcap);
/* Parses `len` bytes of `text`; `name` is used in error messages. */
struct sdp_json *sdp_json_parse(const char *text, size_t len, const char *name, char *err,
                                size_t errcap);
void sdp_json_free(struct sdp_json *root);
/* Object member `key` or NULL (also NULL when obj is not an object). */
const struct sdp_json *sdp_json_get(const struct sdp_json *obj, const char *key);

/* Writes code point cp (<= 0x10FFFF, not a surrogate) as UTF-8 into o (4 bytes of room);
 * returns the byte count. */
size_t sdp_utf8_put(uint32_t cp, char *o);

#endif
