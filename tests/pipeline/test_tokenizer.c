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
#include "../common/token_cases.h"

static int encode(const void *t, const char *text, int64_t *ids, int max_len, int *n_full, char *err, size_t errcap)
{
    return sdp_tokenizer_encode(t, text, ids, max_len, n_full, err, errcap);
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
    int cases, truncated, bad = tc_run_cases(argv[2], 77, sdp_tokenizer_pad(t), encode, t, &cases, &truncated);
    sdp_tokenizer_free(t);
    if (bad < 0) return 1;
    printf("%d cases (%d over 77 tokens), %d mismatches\n", cases, truncated, bad);
    if (cases < 1000) {
        fprintf(stderr, "FAIL: fewer than 1000 cases\n");
        return 1;
    }
    return bad ? 1 : 0;
}
