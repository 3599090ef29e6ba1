/* clip_tokenizer.h — the CLIP byte-level BPE tokenizer of Stable Diffusion checkpoints, reading the
 * Hugging Face files (tokenizer/vocab.json, tokenizer/merges.txt, optional tokenizer_config.json
 * or special_tokens_map.json for the pad token).
 *
 * Spec followed: transformers.CLIPTokenizer (5.x, tokenizers backend), which is what diffusers
 * calls: the literal special tokens "<|startoftext|>"/"<|endoftext|>" are split out first; every
 * other span is normalized NFC -> runs of Unicode White_Space to one " " -> lower case (per code
 * point, full mappings), split by CLIP's regex
 *     <\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+
 * (what does not match, i.e. white space, is dropped), each piece mapped byte-wise through the
 * GPT-2 byte table, "</w>" appended to its last symbol, and merged by BPE rank (lowest rank first,
 * leftmost first among equal ranks). The ids are BOS, the piece ids, EOS, truncated so that EOS
 * stays at position max_len-1, then padded with the pad id. A pad_token other than BOS/EOS (SD 2.x:
 * "!", id 0) is a special token as well: split out of the raw text like them (so "wow!!" is
 * wow</w> ! !) and used for the padding.
 *
 * Guarantees: identical ids to transformers.CLIPTokenizer(padding="max_length", truncation=True)
 * on tests/pipeline/tokenizer_cases.txt (1277 prompts, pad = EOS) and tokenizer_cases_sd2.txt
 * (the same prompts, pad "!"). Loading errors name the file and line.
 */
#ifndef PIPELINE_CLIP_TOKENIZER_H
#define PIPELINE_CLIP_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

struct sdp_tokenizer;

/* Loads DIR/vocab.json and DIR/merges.txt (+ DIR/tokenizer_config.json or
 * DIR/special_tokens_map.json when present: pad_token; default pad = "<|endoftext|>"; a pad_token
 * that is neither BOS nor EOS is also split out of prompts as a special token).
 * Returns 0, or -1 with a message naming the file (and line) in err: missing file, malformed
 * JSON, vocab entry that is not a non-negative integer id, a merges line that is not two
 * symbols of the vocab whose concatenation is in the vocab, missing <|startoftext|> or
 * <|endoftext|>. */
int sdp_tokenizer_load(const char *dir, struct sdp_tokenizer **out, char *err, size_t errcap);
void sdp_tokenizer_free(struct sdp_tokenizer *t);

/* Tokenizes the UTF-8 string `text` into exactly `max_len` ids (int64 as the text encoder takes
 * them): BOS, tokens, EOS, padding. *n_full receives the untruncated count (BOS + tokens + EOS):
 * more than max_len means the prompt was truncated. Returns 0, or -1 when text is not valid
 * UTF-8 (message in err) or max_len < 2. */
int sdp_tokenizer_encode(const struct sdp_tokenizer *t, const char *text, int64_t *ids,
                         int max_len, int *n_full, char *err, size_t errcap);

/* Vocabulary size (largest id + 1) and the special ids. */
int sdp_tokenizer_vocab_size(const struct sdp_tokenizer *t);
int64_t sdp_tokenizer_bos(const struct sdp_tokenizer *t);
int64_t sdp_tokenizer_eos(const struct sdp_tokenizer *t);
int64_t sdp_tokenizer_pad(const struct sdp_tokenizer *t);

#endif
