/* unicode_tables.h — Unicode data used by the CLIP tokenizer (tables generated into
 * unicode_tables.c by gen_unicode_tables.py from the reference tokenizer's own Unicode data).
 * Every table is sorted by its first column (binary search). */
#ifndef PIPELINE_UNICODE_TABLES_H
#define PIPELINE_UNICODE_TABLES_H

#include <stdint.h>

/* A code point and its lower-case form (1..3 code points, unused ones 0). */
struct uni_map {
    uint32_t cp;     /* code point */
    uint32_t to[3];  /* mapping, 0-terminated when shorter */
};
/* A code point and its full canonical decomposition (1..4 code points, unused ones 0). */
struct uni_map4 {
    uint32_t cp;     /* code point */
    uint32_t to[4];  /* decomposition, 0-terminated when shorter */
};

extern const uint32_t uni_letter[][2]; /* \p{L} as inclusive ranges [lo, hi] */
extern const uint32_t uni_letter_n;
extern const uint32_t uni_number[][2]; /* \p{N} as inclusive ranges */
extern const uint32_t uni_number_n;
extern const struct uni_map uni_lower[]; /* code points whose lower case differs */
extern const uint32_t uni_lower_n;
extern const struct uni_map4 uni_decomp[]; /* canonical decompositions (no Hangul syllables) */
extern const uint32_t uni_decomp_n;
extern const uint32_t uni_ccc[][2];  /* (code point, canonical combining class != 0) */
extern const uint32_t uni_ccc_n;
extern const uint32_t uni_comp[][3]; /* primary composites (first, second) -> composite,
                                        sorted by (first, second) */
extern const uint32_t uni_comp_n;

#endif
