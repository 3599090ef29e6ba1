/* t5_tokenizer.h — the T5 tokenizer of SD 3.x and Flux (T5-XXL text encoder), as
 * transformers.T5TokenizerFast encodes a prompt for diffusers' StableDiffusion3Pipeline /
 * FluxPipeline (add_special_tokens, padding "max_length", truncation).
 *
 * The SentencePiece unigram model shipped with the checkpoint (`spiece.model`, in a diffusers
 * folder's tokenizer_2/ (Flux) or tokenizer_3/ (SD 3.x)) is loaded and checked by Debian's
 * libsentencepiece (0.1.97), which gives the pieces, their scores and the model's precompiled
 * normalization map; the encoding is that of the fast tokenizer (Hugging Face tokenizers), which
 * differs from sentencepiece's own encoder on some text (t5_tokenizer.cc says where):
 *   1. added tokens are split out of the text first, leftmost-longest, as literal strings: "<pad>"
 *      (0), "</s>" (1), "<unk>" (2), any other control piece of the model, and "<extra_id_N>" (N in
 *      0..99, id = pieces + 99 - N);
 *   2. every other segment is normalized by the model's precompiled NFKC map, one extended
 *      grapheme cluster at a time, split at whitespace, a "▁" (U+2581) put before each word, and
 *      encoded by the unigram Viterbi with the fast tokenizer's tie rule; characters outside the
 *      vocabulary are <unk> (2), a run of them one <unk>;
 *   3. the ids are cut to max_len - 1 and "</s>" (1) appended, then padded with "<pad>" (0).
 * Tested against transformers 5.25's T5TokenizerFast built from the same spiece.model on 1974
 * prompts, all identical (tests/t5_tokenizer, make_cases.py).
 *
 * Errors: every function returns 0, or -1 with a message naming the file in err.
 */
#ifndef PIPELINE_T5_TOKENIZER_H
#define PIPELINE_T5_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sdp_t5_tokenizer;

/* Loads path: a spiece.model file, or a folder holding one. Refuses a model without the T5
 * specials at their ids (<pad> 0, </s> 1, <unk> 2) and a folder with only tokenizer.json (its
 * unigram table is not read: give the folder's spiece.model). Returns 0 and *out (free with
 * sdp_t5_free), or -1 with a message naming the file. */
int sdp_t5_load(const char *path, struct sdp_t5_tokenizer **out, char *err, size_t errcap);
void sdp_t5_free(struct sdp_t5_tokenizer *t);

/* Vocabulary size with the 100 extra ids (32100 for T5-XXL's 32000 pieces). */
int sdp_t5_vocab_size(const struct sdp_t5_tokenizer *t);

/* Encodes UTF-8 text into ids[0..max_len) (int64, as the text encoder's input_ids): the tokens,
 * "</s>", then "<pad>" up to max_len (diffusers: 256 for SD 3.x's max_sequence_length, 512 for
 * Flux-dev). *n_full receives the token count before truncation, "</s>" included (> max_len: the
 * text was truncated). Returns 0, or -1 (max_len < 1, text not valid UTF-8) with a message. */
int sdp_t5_encode(const struct sdp_t5_tokenizer *t, const char *text, int64_t *ids, int max_len, int *n_full,
                  char *err, size_t errcap);

#ifdef __cplusplus
}
#endif

#endif
