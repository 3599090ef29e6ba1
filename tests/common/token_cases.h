/* token_cases.h — shared by the tokenizer tests (tests/pipeline/test_tokenizer.c,
 * tests/t5_tokenizer/test_t5_tokenizer.c) and tests/prompt_weights/test_prompt_weights.c: hex
 * decoding and the run over a file of reference token ids. Header only (static functions).
 *
 * A cases file (made with transformers by the tests' make_*cases.py) has one line per prompt: the
 * prompt's bytes in hex, a tab, the untruncated token count, a tab, the first min(count, max_len)
 * ids separated by spaces.
 */
#ifndef ONNX2CL_TESTS_TOKEN_CASES_H
#define ONNX2CL_TESTS_TOKEN_CASES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The n hex digits at h as a malloc'd NUL-terminated string (free it); NULL when not hex or out
 * of memory. */
static inline char *tc_unhex(const char *h, size_t n)
{
    char *o = malloc(n / 2 + 1);
    for (size_t i = 0; o && i < n / 2; i++) {
        unsigned v;
        if (sscanf(h + 2 * i, "%2x", &v) != 1) {
            free(o);
            return NULL;
        }
        o[i] = (char)v;
    }
    if (o) o[n / 2] = 0;
    return o;
}

/* The tokenizer under test: encodes text into ids[0..max_len), *n_full the untruncated count;
 * 0, or -1 with a message in err. */
typedef int (*tc_encode_fn)(const void *tok, const char *text, int64_t *ids, int max_len, int *n_full,
                            char *err, size_t errcap);

/* Encodes every prompt of the cases file at path to max_len ids and requires every id, the padding
 * (pad after the reference's ids) and the untruncated count to be identical; prints the first 10
 * mismatches with the prompt. Returns the number of mismatches, or -1 (with a FAIL line) when the
 * file is unreadable or malformed. *cases: prompts read; *truncated: those over max_len tokens. */
static inline int tc_run_cases(const char *path, int max_len, int64_t pad, tc_encode_fn enc, const void *tok,
                               int *cases, int *truncated)
{
    *cases = *truncated = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    int64_t *want = malloc(2 * (size_t)max_len * sizeof *want);
    if (!want) {
        fprintf(stderr, "FAIL: out of memory\n");
        fclose(f);
        return -1;
    }
    int64_t *got = want + max_len;
    char *line = NULL, err[1024];
    size_t cap = 0;
    int bad = 0;
    while (getline(&line, &cap, f) > 0) {
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        char *prompt = tab2 ? tc_unhex(line, (size_t)(tab1 - line)) : NULL;
        if (!prompt) {
            fprintf(stderr, "FAIL: %s: malformed line %d\n", path, *cases + 1);
            bad = -1;
            break;
        }
        int want_full = atoi(tab1 + 1), want_n = want_full < max_len ? want_full : max_len, full = 0;
        char *p = tab2 + 1;
        for (int i = 0; i < max_len; i++) want[i] = i < want_n ? strtoll(p, &p, 10) : pad;
        ++*cases;
        if (enc(tok, prompt, got, max_len, &full, err, sizeof err)) {
            fprintf(stderr, "case %d: error %s\n", *cases, err);
            bad++;
        } else if (full != want_full || memcmp(got, want, (size_t)max_len * sizeof *got)) {
            if (bad < 10) {
                fprintf(stderr, "case %d: prompt \"%s\"\n  full %d (want %d)\n  got :", *cases, prompt, full,
                        want_full);
                for (int i = 0; i < max_len && i < want_n + 1; i++) fprintf(stderr, " %lld", (long long)got[i]);
                fprintf(stderr, "\n  want:");
                for (int i = 0; i < max_len && i < want_n + 1; i++) fprintf(stderr, " %lld", (long long)want[i]);
                fprintf(stderr, "\n");
            }
            bad++;
        }
        *truncated += want_full > max_len;
        free(prompt);
    }
    free(want);
    free(line);
    fclose(f);
    return bad;
}

#endif
