#!/usr/bin/env python3
"""make_cases.py — writes tests/t5_tokenizer/{spiece.model,cases.txt}: a T5-style SentencePiece
model and the ids transformers' T5TokenizerFast gives for >= 1000 prompts with it, the reference
of the C tokenizer test (pipeline/t5_tokenizer.h).

What it does
  1. Trains a unigram SentencePiece model with T5's settings (pad 0, </s> 1, <unk> 2, no BOS,
     nmt_nfkc normalization, character coverage 0.995 so rare scripts become <unk> as in T5-XXL's
     32000-piece model) on prompts from tests/pipeline/make_tokenizer_cases.py's generator
     (fixed seed), 4000 pieces: spiece.model (committed; training is not bit-reproducible across
     sentencepiece versions, the file is the reference).
  2. Loads it with transformers' T5TokenizerFast (from_pretrained of a folder holding it, 100
     extra ids, as SD 3.x/Flux folders ship it) and tokenizes each prompt exactly as diffusers'
     StableDiffusion3Pipeline does (padding="max_length", max_length=256, truncation=True,
     add_special_tokens) and without truncation (the untruncated length).
  Prompts: the CLIP test's generator and fixed lists (SD-style prompts, weights, unicode, odd
  whitespace, emoji, over-long) plus T5's added tokens in text (</s>, <pad>, <unk>,
  <extra_id_N>, near misses like <extra_id_100>).

Output format (one case per line, tab separated):
  <prompt as hex of its UTF-8 bytes> \t <untruncated count incl. </s>> \t <first min(n, 256) ids>
  [\t grapheme|tie: a known difference, see known_difference()]
  (the rest of the 256 is <pad> = 0)

Usage (dev machine: transformers + sentencepiece; the test reads the committed files)
  python3 tests/t5_tokenizer/make_cases.py tests/t5_tokenizer [--keep-model]
  (--keep-model: the cases only, from the committed spiece.model)
"""

import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pipeline"))
import make_tokenizer_cases as clip_cases  # noqa: E402

MAX_LEN = 256

T5_FIXED = [
    "</s>", "<pad>", "<unk>", "<extra_id_0>", "<extra_id_99>", "<extra_id_100>", "<extra_id_>",
    "<extra_id_7", "hello</s>world", "hello </s> world", "a<pad>b<unk>c", "<</s>>", "<<extra_id_1>>",
    "</s></s></s>", "x <extra_id_42> y <extra_id_3>z", "</S>", "<PAD>", "two  spaces", "   lead",
    "trail   ", "tab\tand\nnewline", "\u3000ideographic\u3000space", "nbsp\u00a0x", "▁already▁marked",
    "▁", "▁▁", "a ▁ b", "é", "e\u0301", "ﬁ", "①", "Ｆｕｌｌ", "😀", "中文", "x" * 600,
    " ".join(["long"] * 300), "</s>" * 300,
]


ADDED = ["<pad>", "</s>", "<unk>"] + [f"<extra_id_{n}>" for n in range(100)]


def sentencepiece_ids(sp, text):
    """What pipeline/t5_tokenizer.cc does: added tokens split out leftmost-longest, sentencepiece on
    the rest (no </s>)."""
    ids, seg, i = [], 0, 0
    while i < len(text):
        best = max((a for a in ADDED if text.startswith(a, i)), key=len, default=None)
        if best is None:
            i += 1
            continue
        ids += sp.encode(text[seg:i]) if i > seg else []
        ids.append(tok_added_id(sp, best))
        i += len(best)
        seg = i
    return ids + (sp.encode(text[seg:]) if seg < len(text) else [])


def tok_added_id(sp, a):
    if a.startswith("<extra_id_"):
        return sp.get_piece_size() + 99 - int(a[10:-1])
    return ["<pad>", "</s>", "<unk>"].index(a)


def known_difference(sp, tok, text):
    """Where libsentencepiece and T5TokenizerFast part ways (the C test lets these differ):
    "grapheme": tokenizers' Precompiled normalizer maps a grapheme of >= 6 UTF-8 bytes one
    character at a time (sentencepiece composes across it: Hangul jamo L+V+T, stacked combining
    marks); "tie": two segmentations with the same total score (runs like "!!!!!!!!"), broken
    differently by the two Viterbi implementations. Any other difference stops the script."""
    import regex
    ours, hf = sentencepiece_ids(sp, text), tok(text, add_special_tokens=False).input_ids
    if ours == hf:
        return ""
    if any(len(g.encode()) >= 6 for g in regex.findall(r"\X", text)):
        return "grapheme"
    score = lambda ids: sum(sp.get_score(i) for i in ids if i < sp.get_piece_size())  # noqa: E731
    if len(ours) == len(hf) and abs(score(ours) - score(hf)) < 1e-4:
        return "tie"
    raise SystemExit(f"unexplained difference on {text!r}: {ours} vs {hf}")


def main():
    out = sys.argv[1]
    import sentencepiece as spm
    from transformers import T5TokenizerFast

    rng = random.Random(5)
    tmp = tempfile.mkdtemp()
    try:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w") as f:
            for _ in range(30000):
                f.write(clip_cases.prompt(rng).replace("\n", " ") + "\n")
            for w in clip_cases.WORDS + clip_cases.UNICODE:
                f.write(w + "\n")
        if "--keep-model" not in sys.argv:
            spm.SentencePieceTrainer.train(
                input=corpus, model_prefix=os.path.join(out, "spiece"), vocab_size=4000, model_type="unigram",
                pad_id=0, eos_id=1, unk_id=2, bos_id=-1, character_coverage=0.995, num_threads=1,
                minloglevel=2)
            os.remove(os.path.join(out, "spiece.vocab"))
        folder = os.path.join(tmp, "tok")
        os.makedirs(folder)
        shutil.copy(os.path.join(out, "spiece.model"), folder)
        tok = T5TokenizerFast.from_pretrained(folder)
        assert len(tok) == 4100, len(tok)
        rng = random.Random(13)
        prompts = (T5_FIXED + clip_cases.FIXED + [clip_cases.prompt(rng) for _ in range(1100)] +
                   clip_cases.UNICODE + clip_cases.PUNCT + clip_cases.BANG)
        sp = spm.SentencePieceProcessor(model_file=os.path.join(out, "spiece.model"))
        over = 0
        known = {"grapheme": 0, "tie": 0}
        with open(os.path.join(out, "cases.txt"), "w") as f:
            for p in prompts:
                flag = known_difference(sp, tok, p)
                if flag:
                    known[flag] += 1
                full = tok(p).input_ids
                ids = tok(p, padding="max_length", max_length=MAX_LEN, truncation=True).input_ids
                assert len(ids) == MAX_LEN
                k = min(len(full), MAX_LEN)
                assert ids[k - 1] == 1 and all(i == 0 for i in ids[k:])
                over += len(full) > MAX_LEN
                f.write(p.encode("utf-8").hex() + "\t" + str(len(full)) + "\t" +
                        " ".join(str(i) for i in ids[:k]) + ("\t" + flag if flag else "") + "\n")
        print(f"{len(prompts)} cases, {over} over-long, known differences: {known}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
