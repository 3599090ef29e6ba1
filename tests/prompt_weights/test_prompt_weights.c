/* test_prompt_weights.c — pipeline/prompt_weights.h against AUTOMATIC1111.
 *
 * Reads cases.txt (make_cases.py: each prompt, A1111's parse_prompt_attention pieces with their
 * double weights, and tokenize_line's 77-id chunks with float32 multipliers) and requires, per
 * prompt: the same pieces (text bytes, weight bit for bit, the same order), the same chunks
 * (ids, multipliers bit for bit, token count), or an error where A1111 raises. Then
 * sdp_prompt_emphasis on a small tensor against values worked by hand.
 *
 * Usage: test_prompt_weights TOKENIZER_DIR CASES.txt
 */
#include "prompt_weights.h"
#include "../common/token_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int emphasis_check(void)
{
    /* z = [[1, 2], [3, 4]], mult = [2, 0.5]: scaled [[2, 4], [1.5, 2]] (mean 2.375), original mean 2.5:
     * ratio 2.5 / 2.375 */
    float z[4] = {1, 2, 3, 4}, m[2] = {2, 0.5f};
    sdp_prompt_emphasis(z, m, 2, 2);
    const float r = 2.5f / 2.375f, want[4] = {2 * r, 4 * r, 1.5f * r, 2 * r};
    for (int i = 0; i < 4; i++)
        if (fabsf(z[i] - want[i]) > 1e-6f) {
            fprintf(stderr, "emphasis: z[%d] = %g, want %g\n", i, z[i], want[i]);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_prompt_weights TOKENIZER_DIR CASES.txt\n");
        return 2;
    }
    char err[1024];
    struct sdp_tokenizer *tok;
    if (sdp_tokenizer_load(argv[1], &tok, err, sizeof err)) {
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
    int cases = 0, bad = 0, chunked = 0, errors = 0;
    char *prompt = NULL;
    struct sdp_prompt_piece *pieces = NULL;
    int np = 0, wi = 0, perr = 0, case_bad = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'P') {
            free(prompt);
            sdp_prompt_pieces_free(pieces, np);
            pieces = NULL;
            np = wi = 0;
            case_bad = 0;
            prompt = tc_unhex(line + 2, strlen(line + 2));
            cases++;
            perr = sdp_prompt_parse(prompt, &pieces, &np, err, sizeof err);
        } else if (line[0] == 'E') {
            errors++;
            if (!perr) {
                fprintf(stderr, "case %d \"%s\": parsed, but A1111 raises\n", cases, prompt);
                bad++;
            } else if (!strstr(err, "is not a number")) {
                fprintf(stderr, "case %d: unexpected message: %s\n", cases, err);
                bad++;
            }
        } else if (line[0] == 'W') {
            char *t = line + 2, *tab = strchr(t, '\t');
            *tab = 0;
            char *text = strcmp(t, "-") ? tc_unhex(t, strlen(t)) : strdup("");
            double w = strtod(tab + 1, NULL);
            if (perr || wi >= np || strcmp(pieces[wi].text, text) || pieces[wi].weight != w) {
                if (!case_bad && bad < 10)
                    fprintf(stderr, "case %d \"%s\": piece %d: got \"%s\" %.17g (%s), want \"%s\" %.17g\n", cases,
                            prompt, wi, perr || wi >= np ? "-" : pieces[wi].text, perr || wi >= np ? 0 : pieces[wi].weight,
                            perr ? err : "", text, w);
                bad += !case_bad;
                case_bad = 1;
            }
            wi++;
            free(text);
        } else if (line[0] == 'C') {
            if (!case_bad && wi != np) {
                fprintf(stderr, "case %d \"%s\": %d pieces, want %d\n", cases, prompt, np, wi);
                bad++;
                case_bad = 1;
            }
            char *p = line + 2;
            int want_count = (int)strtol(p, &p, 10), want_n = (int)strtol(p, &p, 10);
            struct sdp_prompt_chunks c;
            if (sdp_prompt_chunks(tok, prompt, 20, &c, err, sizeof err)) {
                fprintf(stderr, "case %d: %s\n", cases, err);
                bad += !case_bad;
                continue;
            }
            chunked += want_n > 1;
            int ok = c.token_count == want_count && c.n_chunks == want_n;
            for (int i = 0; ok && i < want_n * 77; i++) ok = c.ids[i] == strtoll(p, &p, 10);
            for (int i = 0; ok && i < want_n * 77; i++) {
                while (*p == ' ' || *p == '\t') p++;
                float m;
                if (*p == '-') {
                    m = 1.0f;
                    p++;
                } else {
                    unsigned bits = (unsigned)strtoul(p, &p, 16);
                    memcpy(&m, &bits, 4);
                }
                ok = memcmp(&m, &c.mult[i], 4) == 0;
            }
            if (!ok) {
                if (!case_bad && bad < 10)
                    fprintf(stderr, "case %d \"%s\": chunks differ (got %d chunks, count %d; want %d, %d)\n", cases,
                            prompt, c.n_chunks, c.token_count, want_n, want_count);
                bad += !case_bad;
            }
            sdp_prompt_chunks_free(&c);
        }
    }
    free(prompt);
    sdp_prompt_pieces_free(pieces, np);
    free(line);
    fclose(f);
    sdp_tokenizer_free(tok);
    int emph = emphasis_check();
    printf("%d prompts (%d over one chunk, %d refused as A1111 does), %d mismatches, emphasis %s\n", cases, chunked,
           errors, bad, emph ? "FAILED" : "ok");
    if (cases < 1000) {
        fprintf(stderr, "FAIL: fewer than 1000 prompts\n");
        return 1;
    }
    return bad || emph ? 1 : 0;
}
