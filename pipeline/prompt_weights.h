/* prompt_weights.h — AUTOMATIC1111's prompt emphasis and long prompts, for CLIP text encoders.
 *
 * Spec followed: AUTOMATIC1111/stable-diffusion-webui 1.10 (emphasis "Original"):
 *   modules/prompt_parser.py parse_prompt_attention — "(text)" multiplies the weight of text by
 *   1.1, "[text]" divides it by 1.1, "(text:W)" multiplies it by W; brackets nest (the factors
 *   multiply, in double precision, innermost first); "\(", "\)", "\[", "\]", "\\" are the literal
 *   characters; a bracket never closed applies to the rest of the prompt; "BREAK" (a whole word,
 *   with the white space around it) outside brackets ends the current 75-token chunk; adjacent
 *   pieces of equal weight merge;
 *   modules/sd_hijack_clip.py tokenize_line — each piece is tokenized on its own (CLIP BPE, no
 *   BOS/EOS, no truncation) and the tokens fill chunks of 75, each chunk [BOS, 75 tokens padded
 *   with EOS, EOS] (77 ids) with one multiplier per id (1 for BOS/EOS/padding); when a chunk is
 *   full and a comma was among its last `comma_backtrack` tokens (A1111's option
 *   comma_padding_backtrack, default 20), the tokens after that comma move to the next chunk;
 *   sd_emphasis.py EmphasisOriginal — after the text encoder, z *= multiplier (per token), then
 *   z *= mean(z before) / mean(z after), over the whole chunk batch.
 * Each chunk is encoded by the text encoder on its own; the chunks' outputs are concatenated
 * along the token axis (77 * n_chunks tokens), so a UNet conditioned on them takes
 * encoder_hidden_states with that many tokens. diffusers' StableDiffusionPipeline does none of
 * this: it reads "(" and ":" as text and truncates at 77 tokens.
 */
#ifndef PIPELINE_PROMPT_WEIGHTS_H
#define PIPELINE_PROMPT_WEIGHTS_H

#include "clip_tokenizer.h"

#include <stddef.h>
#include <stdint.h>

/* One piece of a parsed prompt. */
struct sdp_prompt_piece {
    char *text;     /* UTF-8, escapes resolved */
    double weight;  /* product of the bracket factors; a BREAK outside brackets has weight -1 */
    int is_break;   /* text is "BREAK" with weight exactly -1: a chunk boundary */
};

/* Parses text as parse_prompt_attention does. *out receives *n pieces (at least one: an empty
 * prompt is one piece "" of weight 1), free with sdp_prompt_pieces_free. A "(text:W)" whose W is
 * not a number Python's float() reads (e.g. "1.2.3", ".") is an error naming its byte offset
 * (A1111 raises there). Returns 0, or -1 with a message (out of memory, that error). */
int sdp_prompt_parse(const char *text, struct sdp_prompt_piece **out, int *n, char *err, size_t errcap);
void sdp_prompt_pieces_free(struct sdp_prompt_piece *p, int n);

/* A prompt in 77-id chunks. */
struct sdp_prompt_chunks {
    int n_chunks;       /* >= 1 */
    int64_t *ids;       /* [n_chunks][77] */
    float *mult;        /* [n_chunks][77] multipliers (float32, as torch.asarray makes them) */
    int token_count;    /* A1111's token count (the "75/150" counter: chunks before the last count
                           75 each, the last one its tokens) */
};

/* Parses and tokenizes text into chunks as tokenize_line does (comma_backtrack: A1111's
 * comma_padding_backtrack; 0 disables it, 20 is its default). Padding is EOS for every tokenizer
 * (A1111's SD 1.x CLIP embedder). Returns 0, or -1 with a message (invalid UTF-8, a bad weight,
 * out of memory). Free with sdp_prompt_chunks_free. */
int sdp_prompt_chunks(const struct sdp_tokenizer *tok, const char *text, int comma_backtrack,
                      struct sdp_prompt_chunks *out, char *err, size_t errcap);
/* sdp_prompt_chunks with parse = 0: the text as one piece of weight 1, brackets and BREAK as
 * literal text (A1111's emphasis "None": tokenize_line's parsed = [[line, 1.0]]), still in 75-token
 * chunks; parse = 1 is sdp_prompt_chunks. */
int sdp_prompt_chunks_ex(const struct sdp_tokenizer *tok, const char *text, int comma_backtrack, int parse,
                         struct sdp_prompt_chunks *out, char *err, size_t errcap);
void sdp_prompt_chunks_free(struct sdp_prompt_chunks *c);

/* EmphasisOriginal on z [n_tok, dim] float32 (the text encoder's output for one batch of chunks,
 * n_tok tokens in all) with mult [n_tok]: z[t][c] *= mult[t], then z *= mean_before / mean_after
 * (means over all n_tok * dim values, accumulated in double; torch accumulates float32 sums
 * pairwise: results agree to ~1e-7 relative). */
void sdp_prompt_emphasis(float *z, const float *mult, size_t n_tok, size_t dim);

/* A1111's emphasis "No norm" (EmphasisOriginalNoNorm): z[t][c] *= mult[t], no mean restore. */
void sdp_prompt_multiply(float *z, const float *mult, size_t n_tok, size_t dim);

#endif
