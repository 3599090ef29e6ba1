/* test_tokenizer.c — the C CLIP tokenizer against transformers.CLIPTokenizer.
 *
 * Reads tests/pipeline/tokenizer_cases.txt (made by make_tokenizer_cases.py with transformers:
 * hex prompt, untruncated count, the first min(count, 77) ids) and the tokenizer folder made by
 * clip_bpe_setup.py; encodes every prompt to 77 ids and requires every id, the padding and the
 * untruncated count to be identical. Prints the first mismatches with the prompt.
 *
 * Usage: test_tokenizer TOKENIZER_DIR CASES.txt
 */
#include "clip_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_tokenizer TOKENIZER_DIR CASES.txt\n");
        return 2;
    }
    char err[1024];
    struct sdp_tokenizer *t;
    if (sdp_tokenizer_load(argv[1], &t, err, sizeof err)) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 1;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    int cases = 0, bad = 0, truncated = 0;
    while (getline(&line, &cap, f) > 0) {
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        if (!tab2) {
            fprintf(stderr, "FAIL: %s: malformed line %d\n", argv[2], cases + 1);
            return 1;
        }
        size_t hl = (size_t)(tab1 - line);
        char *prompt = malloc(hl / 2 + 1);
        if (unhex(line, hl, prompt)) {
            fprintf(stderr, "FAIL: %s: bad hex on line %d\n", argv[2], cases + 1);
            return 1;
        }
        int want_full = atoi(tab1 + 1), want_n = want_full < 77 ? want_full : 77;
        int64_t want[77], got[77];
        char *p = tab2 + 1;
        for (int i = 0; i < 77; i++) {
            if (i < want_n) want[i] = strtoll(p, &p, 10);
            else want[i] = sdp_tokenizer_pad(t);
        }
        int full = 0;
        cases++;
        if (sdp_tokenizer_encode(t, prompt, got, 77, &full, err, sizeof err)) {
            fprintf(stderr, "case %d: error %s\n", cases, err);
            bad++;
        } else if (full != want_full || memcmp(got, want, sizeof got)) {
            if (bad < 10) {
                fprintf(stderr, "case %d: prompt \"%s\"\n  full %d (want %d)\n  got :", cases,
                        prompt, full, want_full);
                for (int i = 0; i < 77 && i < want_n + 1; i++) fprintf(stderr, " %lld", (long long)got[i]);
                fprintf(stderr, "\n  want:");
                for (int i = 0; i < 77 && i < want_n + 1; i++) fprintf(stderr, " %lld", (long long)want[i]);
                fprintf(stderr, "\n");
            }
            bad++;
        }
        truncated += want_full > 77;
        free(prompt);
    }
    free(line);
    fclose(f);
    sdp_tokenizer_free(t);
    printf("%d cases (%d over 77 tokens), %d mismatches\n", cases, truncated, bad);
    if (cases < 1000) {
        fprintf(stderr, "FAIL: fewer than 1000 cases\n");
        return 1;
    }
    return bad ? 1 : 0;
}
