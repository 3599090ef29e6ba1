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
  <extra_id_N>, near misses like <extra_id_100>), and the two places where T5TokenizerFast
  (Hugging Face tokenizers) parts from sentencepiece's own encoder, which the C tokenizer follows:
  graphemes() (the Precompiled normalizer maps one extended grapheme cluster at a time: Hangul
  jamo, stacked marks, emoji ZWJ sequences, flags, skin tones, keycaps, Indic conjuncts, marks
  after a mapped character) and ties() (runs of punctuation of every length 1..40, where
  segmentations of equal score exist and the unigram Viterbi's tie rule decides).

Output format (one case per line, tab separated):
  <prompt as hex of its UTF-8 bytes> \t <untruncated count incl. </s>> \t <first min(n, 256) ids>
  (the rest of the 256 is <pad> = 0)
  It also reports how many prompts sentencepiece's own encoder (with the added tokens split out
  the same way) gets wrong: the cases that exercise the tokenizers-specific steps.

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
    """sentencepiece's own encoder (what pipeline/t5_tokenizer.cc ran before it followed tokenizers'
    normalizer and Viterbi): added tokens split out leftmost-longest, sentencepiece on the rest (no
    </s>)."""
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


def graphemes(rng):
    """Prompts whose extended grapheme clusters matter to the Precompiled normalizer."""
    jamo_l, jamo_v, jamo_t = "\u1100\u1102\u1112\u115f", "\u1161\u1162\u1175\u1160", "\u11a8\u11ab\u11c2"
    marks = "\u0301\u0308\u0323\u0330\u20dd\u0345\u05b8\u064b\u3099"
    fixed = [
        "\u1100\u1161", "\u1100\u1161\u11a8", "\u1100\u1100\u1161\u11a8", "\uac00\u11a8", "\uac01\u11a8",
        "\u1100", "\u1161\u11a8", "\ud7b0\ud7cb", "a \u1112\u1161\u11ab\u1100\u1173\u11af b",
        "e\u0301\u0301", "a\u0308\u0301\u0323", "o\u0323\u0302", "ﬁ\u0301", "Ａ\u0301", "①\u0308", "ｶﾞ",
        "ｶ\u3099",
        "Z\u0351\u0360\u0346\u0353\u0318algo", "\u0915\u094d\u0937", "\u0924\u094d\u0930", "\u0915\u094d\u200d\u0937",
        "\u0915\u094d\u200c\u0937", "\u0928\u092e\u0938\u094d\u0924\u0947", "\u0995\u09cd\u09b7", "\u0d15\u0d4d\u0d37",
        "\u0b95\u0bcd\u0bb7", "\u0e01\u0e33", "\u1780\u17d2\u179a", "\u0600\u0661", "\r\n", "a\r\nb",
        "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466", "\U0001F469\u200d\u2764\ufe0f\u200d\U0001F468",
        "\U0001F44D\U0001F3FD", "\U0001F9D1\U0001F3FF\u200d\U0001F91D\u200d\U0001F9D1\U0001F3FB",
        "\U0001F1FA\U0001F1F8", "\U0001F1FA\U0001F1F8\U0001F1EF", "\U0001F1EF\U0001F1F5\U0001F1FA\U0001F1F8",
        "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "#\ufe0f\u20e3", "1\u20e3",
        "\u2764\ufe0f", "\u263a\ufe0e", "\u200d\U0001F600", "a\u200db", "x\u034fy", "\u00ad", "ab\u00adcd",
        "a photo of a \U0001F468\u200d\U0001F469\u200d\U0001F467 family, 8k", "\uff21\uff22\u0301\uff23",
    ]
    out = list(fixed)
    for _ in range(150):
        pick = rng.random()
        if pick < 0.3:
            s = "".join(rng.choice(jamo_l) + rng.choice(jamo_v) + rng.choice(["", rng.choice(jamo_t)])
                        for _ in range(rng.randint(1, 3)))
        elif pick < 0.55:
            s = "".join(rng.choice("aeoAZﬁ①Ａｶ가") +
                        "".join(rng.choice(marks) for _ in range(rng.randint(1, 6)))
                        for _ in range(rng.randint(1, 3)))
        elif pick < 0.8:
            people = ["\U0001F468", "\U0001F469", "\U0001F467", "\U0001F9D1", "\u2764\ufe0f", "\U0001F44D"]
            tones = ["", "\U0001F3FB", "\U0001F3FD", "\U0001F3FF"]
            s = "\u200d".join(rng.choice(people) + rng.choice(tones) for _ in range(rng.randint(1, 4)))
            s += "".join(chr(0x1F1E6 + rng.randrange(26)) for _ in range(rng.randint(0, 3)))
        else:
            cons = "\u0915\u0937\u0924\u0930\u092e\u0938"
            s = "".join(rng.choice(cons) + rng.choice(["\u094d", "\u094d\u200d", "\u093f", "\u0947", "\u0902", ""])
                        for _ in range(rng.randint(2, 5)))
        words = ["photo", "of", "a", "cat"]
        out.append(" ".join(rng.sample(words, 2)) + " " + s if rng.random() < 0.5 else s)
    return out


def ties():
    """Runs of punctuation of every length 1..40 (segmentations of equal score exist)."""
    out = [c * n for c in "!?.,-~*#=_" for n in range(1, 41)]
    out += [p * n for p in ("!?", "?!", "..!", "-_") for n in range(1, 11)]
    out += ["wow" + "!" * n + " nice" for n in range(1, 21)]
    return out


def sentencepiece_differs(sp, tok, text):
    """Whether sentencepiece's own encoder gives other ids than T5TokenizerFast."""
    return sentencepiece_ids(sp, text) != tok(text, add_special_tokens=False).input_ids


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
                   clip_cases.UNICODE + clip_cases.PUNCT + clip_cases.BANG + graphemes(random.Random(17)) +
                   ties())
        sp = spm.SentencePieceProcessor(model_file=os.path.join(out, "spiece.model"))
        over = 0
        spm_differs = 0
        with open(os.path.join(out, "cases.txt"), "w") as f:
            for p in prompts:
                spm_differs += sentencepiece_differs(sp, tok, p)
                full = tok(p).input_ids
                ids = tok(p, padding="max_length", max_length=MAX_LEN, truncation=True).input_ids
                assert len(ids) == MAX_LEN
                k = min(len(full), MAX_LEN)
                assert ids[k - 1] == 1 and all(i == 0 for i in ids[k:])
                over += len(full) > MAX_LEN
                f.write(p.encode("utf-8").hex() + "\t" + str(len(full)) + "\t" +
                        " ".join(str(i) for i in ids[:k]) + "\n")
        print(f"{len(prompts)} cases, {over} over-long, {spm_differs} where sentencepiece's own encoder differs")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
