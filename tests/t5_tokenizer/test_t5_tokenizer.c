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
#include "../common/token_cases.h"

#define MAX_LEN 256

static int encode(const void *t, const char *text, int64_t *ids, int max_len, int *n_full, char *err, size_t errcap)
{
    return sdp_t5_encode(t, text, ids, max_len, n_full, err, errcap);
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
    int cases, truncated, bad = tc_run_cases(path, MAX_LEN, 0, encode, t, &cases, &truncated);
    if (bad < 0) return 1;
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
