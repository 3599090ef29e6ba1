/* test_t5_tokenizer.c — the T5 tokenizer (pipeline/t5_tokenizer.h) against transformers'
 * T5TokenizerFast.
 *
 * Reads cases.txt (make_cases.py: hex prompt, untruncated count with </s>, the first
 * min(count, 256) ids; prompts stressing grapheme clusters and score ties included) and
 * spiece.model; encodes every prompt to 256 ids (SD 3.x's max_sequence_length) and requires every
 * id, the padding and the untruncated count to be identical on every case; then the error cases
 * (bad files, invalid UTF-8, max_len < 1, a shorter max_len cuts and ends with </s>). Prints the
 * first mismatches with the prompt.
 *
 * Usage: test_t5_tokenizer DIR   (DIR holds spiece.model and cases.txt)
 */
#include "t5_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEN 256

static int unhex(const char *h, size_t n, char *out)
{
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(h + 2 * i, "%2x", &v) != 1) return -1;
        out[i] = (char)v;
    }
    out[n / 2] = 0;
    return 0;
}

static int fails;
#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            fails++;                                                                                         \
        }                                                                                                    \
    } while (0)

/* Error and edge cases beyond the reference file. */
static void error_cases(const char *dir, struct sdp_t5_tokenizer *t)
{
    char err[1024], path[4096];
    struct sdp_t5_tokenizer *x = NULL;
    CHECK(sdp_t5_load("/nonexistent/spiece.model", &x, err, sizeof err) == -1 && !x && strstr(err, "/nonexistent"),
          "missing file: %s", err);
    snprintf(path, sizeof path, "%s/cases.txt", dir);
    CHECK(sdp_t5_load(path, &x, err, sizeof err) == -1 && strstr(err, "not a SentencePiece model"),
          "not a model: %s", err);
    CHECK(sdp_t5_load("/", &x, err, sizeof err) == -1 && strstr(err, "spiece.model"), "folder without: %s", err);
    CHECK(sdp_t5_vocab_size(t) == 4100, "vocab size %d", sdp_t5_vocab_size(t));
    int64_t ids[8];
    int full;
    CHECK(sdp_t5_encode(t, "a\xff" "b", ids, 8, &full, err, sizeof err) == -1 && strstr(err, "byte 1"),
          "invalid UTF-8: %s", err);
    CHECK(sdp_t5_encode(t, "\xed\xa0\x80", ids, 8, &full, err, sizeof err) == -1, "surrogate accepted");
    CHECK(sdp_t5_encode(t, "\xc0\xaf", ids, 8, &full, err, sizeof err) == -1, "overlong accepted");
    CHECK(sdp_t5_encode(t, "cat", ids, 0, &full, err, sizeof err) == -1, "max_len 0 accepted");
    /* a short max_len: tokens cut, </s> last */
    CHECK(sdp_t5_encode(t, "</s></s></s></s></s>", ids, 3, &full, err, sizeof err) == 0 && full == 6 &&
              ids[0] == 1 && ids[1] == 1 && ids[2] == 1, "truncation");
    CHECK(sdp_t5_encode(t, "<extra_id_0>", ids, 1, &full, err, sizeof err) == 0 && full == 2 && ids[0] == 1,
          "max_len 1");
    CHECK(sdp_t5_encode(t, "", ids, 4, &full, err, sizeof err) == 0 && full == 1 && ids[0] == 1 && ids[1] == 0 &&
              ids[3] == 0, "empty");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_t5_tokenizer DIR\n");
        return 2;
    }
    char err[1024], path[4096];
    struct sdp_t5_tokenizer *t;
    if (sdp_t5_load(argv[1], &t, err, sizeof err)) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 1;
    }
    snprintf(path, sizeof path, "%s/cases.txt", argv[1]);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    int cases = 0, bad = 0, truncated = 0;
    while (getline(&line, &cap, f) > 0) {
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        if (!tab2) {
            fprintf(stderr, "FAIL: %s: malformed line %d\n", path, cases + 1);
            return 1;
        }
        size_t hl = (size_t)(tab1 - line);
        char *prompt = malloc(hl / 2 + 1);
        if (!prompt || unhex(line, hl, prompt)) {
            fprintf(stderr, "FAIL: %s: bad hex on line %d\n", path, cases + 1);
            return 1;
        }
        int want_full = atoi(tab1 + 1), want_n = want_full < MAX_LEN ? want_full : MAX_LEN;
        static int64_t want[MAX_LEN], got[MAX_LEN];
        char *p = tab2 + 1;
        for (int i = 0; i < MAX_LEN; i++) want[i] = i < want_n ? strtoll(p, &p, 10) : 0;
        int full = 0;
        cases++;
        if (sdp_t5_encode(t, prompt, got, MAX_LEN, &full, err, sizeof err)) {
            fprintf(stderr, "case %d: error %s\n", cases, err);
            bad++;
        } else if (full != want_full || memcmp(got, want, sizeof got)) {
            if (bad < 10) {
                fprintf(stderr, "case %d: prompt \"%s\"\n  full %d (want %d)\n  got :", cases, prompt, full,
                        want_full);
                for (int i = 0; i < MAX_LEN && i < want_n + 1; i++) fprintf(stderr, " %lld", (long long)got[i]);
                fprintf(stderr, "\n  want:");
                for (int i = 0; i < MAX_LEN && i < want_n + 1; i++) fprintf(stderr, " %lld", (long long)want[i]);
                fprintf(stderr, "\n");
            }
            bad++;
        }
        truncated += want_full > MAX_LEN;
        free(prompt);
    }
    free(line);
    fclose(f);
    error_cases(argv[1], t);
    sdp_t5_free(t);
    printf("%d cases (%d over %d tokens), %d mismatches, %d failed checks\n", cases, truncated, MAX_LEN, bad,
           fails);
    if (cases < 1000) {
        fprintf(stderr, "FAIL: fewer than 1000 cases\n");
        return 1;
    }
    return bad || fails ? 1 : 0;
}
