#!/usr/bin/env python3
"""make_tokenizer_cases.py — writes tests/pipeline/tokenizer_cases.txt: prompts and the ids that
transformers.CLIPTokenizer gives for them, the reference of the C tokenizer test.

What it does
  Builds >= 1000 prompts (fixed seed): Stable Diffusion style prompts, weights and brackets,
  digit runs, punctuation runs, contractions, mixed case, accents (composed and decomposed),
  Greek/Cyrillic/CJK/Arabic/Hangul/Devanagari, emoji (ZWJ sequences, skin tones, flags), odd
  whitespace (tabs, newlines, NBSP, ideographic space), control characters, literal special
  tokens, empty prompts and over-long prompts (> 77 tokens). Tokenizes each with
  CLIPTokenizer.from_pretrained(FOLDER) exactly as diffusers does (padding="max_length",
  max_length=77, truncation=True) and also without truncation (to know the untruncated length).

Output format (one case per line, tab separated):
  <prompt as hex of its UTF-8 bytes> \t <untruncated token count n incl. BOS/EOS> \t <the first
  min(n, 77) ids, space separated>   (the rest of the 77 is the folder's pad id: EOS for SD 1.x,
  "!" = 0 for SD 2.x, whose tokenizer_config.json has pad_token "!", which transformers also
  splits out of the prompt as a special token)

Assumes
  transformers (dev machine only; the test reads the committed file) and the folder made by
  clip_bpe_setup.py.

Usage
  python3 tests/pipeline/make_tokenizer_cases.py BPE_OUT/clip tests/pipeline/tokenizer_cases.txt
  python3 tests/pipeline/make_tokenizer_cases.py models/arch/sd2/tokenizer \
      tests/pipeline/tokenizer_cases_sd2.txt
"""

import random
import sys

from transformers import CLIPTokenizer

WORDS = """a photo of an astronaut riding horse on mars portrait woman man cat dog city night
street cyberpunk neon lights highly detailed digital painting artstation concept art smooth sharp
focus illustration unreal engine octane render 8k 4k hdr trending masterpiece best quality ultra
realistic cinematic lighting volumetric fog golden hour bokeh depth field oil canvas watercolor
sketch pencil drawing anime manga studio ghibli greg rutkowski alphonse mucha by and the with in
of at landscape mountains river forest sunset sunrise beach ocean waves castle dragon knight armor
fantasy sci-fi spaceship robot mech steampunk victorian baroque gothic cathedral interior kitchen
bedroom living room architecture photograph 35mm 50mm f/1.8 canon nikon sony dslr film grain
kodak portra polaroid vintage retro 1980s 1920s art deco nouveau minimalist abstract surreal
dali picasso van gogh monet rembrandt vermeer low poly isometric pixel voxel 3d blender cgi
soft hard rim backlight studio ambient occlusion ray tracing subsurface scattering chiaroscuro
red green blue yellow purple orange pink black white gray grey silver gold teal cyan magenta
happy sad angry calm serene dramatic moody dark bright colorful vibrant pastel muted
don't can't won't it's she's they're we've i'm you'll he'd isn't wasn't couldn't
""".split()

UNICODE = [
    "café", "cafe\u0301", "naïve", "nai\u0308ve", "Ångström", "A\u030angstro\u0308m", "ÉCOLE",
    "straße", "STRASSE", "İstanbul", "ΣΟΦΙΑ", "σοφία", "Ὀδυσσεύς", "Москва", "ПРИВЕТ мир",
    "東京タワー", "北京", "你好世界", "こんにちは", "カタカナ", "한국어 텍스트", "\u1100\u1161\u11a8",
    "مرحبا بالعالم", "שלום", "हिन्दी", "ภาษาไทย", "Ⅻ", "①②③", "½ ¾", "٣٤٥", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "😀", "🐱‍👤", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷🇯🇵", "❤️", "✨🌙✨", "🤖🎨", "☕️", "ﬁ ligature", "Ｆｕｌｌｗｉｄｔｈ",
    "x²", "H₂O", "µ", "Ω", "K", "ǅ", "ﬀ", "\u00a0nbsp\u00a0", "ideo\u3000space", "zero\u200bwidth",
    "soft\u00adhyphen", "tab\there", "new\nline", "cr\r\nlf", "\u2028ls", "\x0bvt", "\x1cfs",
    "bell\x07", "nul-free", "emoji✨end", "€100", "£5", "¥", "©®™", "§¶", "…", "—dash–", "«guillemets»",
    "“quotes”", "‘single’", "¿qué?", "¡hola!", "Ǆ", "ŉ", "ΐ", "ẞ",
]

PUNCT = ["!!!", "???", "...", "(((", ")))", "[[", "]]", "{", "}", "::", ";", ",,", "--", "__",
         "**", "~", "@", "#", "$$", "%", "^", "&&", "|", "\\", "/", "<", ">", "=", "+", "'", '"',
         "`", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "''", "'x", ":)", ":-(", "<3", "(:1.2)"]


def prompt(rng):
    kind = rng.random()
    parts = []
    n = rng.choice([1, 2, 3, 5, 8, 12, 20, 30, 45, 60, 90])
    for _ in range(n):
        r = rng.random()
        if r < 0.55:
            w = rng.choice(WORDS)
            c = rng.random()
            if c < 0.1:
                w = w.upper()
            elif c < 0.2:
                w = w.capitalize()
            parts.append(w)
        elif r < 0.7:
            parts.append(rng.choice(UNICODE))
        elif r < 0.82:
            parts.append(rng.choice(PUNCT))
        elif r < 0.9:
            parts.append(str(rng.randrange(0, 10 ** rng.randrange(1, 9))))
        elif r < 0.95:
            parts.append("(" + rng.choice(WORDS) + ":" + f"{rng.uniform(0.5, 1.6):.{rng.randrange(1, 3)}f}" + ")")
        else:
            parts.append(rng.choice(WORDS) + rng.choice(PUNCT) + rng.choice(WORDS))
    seps = [" ", " ", " ", ", ", ",", "  ", "\t", "\n", "", " . "]
    out = ""
    for i, p in enumerate(parts):
        out += p
        if i + 1 < len(parts):
            out += rng.choice(seps) if kind < 0.5 else " "
    if rng.random() < 0.1:
        out = "  " + out + " \n"
    return out


FIXED = [
    "", " ", "a", "A", "a photo of an astronaut riding a horse on mars",
    "<|startoftext|>", "<|endoftext|>", "hello <|endoftext|> world", "<|ENDOFTEXT|>",
    "masterpiece, best quality, (ultra detailed:1.2), 1girl, solo", "1234567890", "3.14159",
    "don't DON'T Don't", "'s's's", "''''", "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
    "a" * 300, "ab" * 200, " ".join(["word"] * 100), " ".join(str(i) for i in range(100)),
    "🙂" * 40, "東" * 100, "x" * 1000 + "y",
]


# "!" next to words, in runs, spaced, with other punctuation and special tokens: SD 2.x's pad
# token, split out of the text before BPE (appended after the other lists, so that the earlier
# lines of an SD 1.x file stay as they were).
BANG = [
    "!", "!!", "wow!!", "wow!!!", "hello ! world", "a!b", "hi!", "HELLO!", " ! ", "!?", "?!",
    "!!?!!", "a ! ! b", "Hello!World", "wow!!!<|endoftext|>!", "!<|startoftext|>!", "(masterpiece:1.2)!",
    "don't!", "it's!s", "!'s", "1!2!3", "café!", "東京!", "🙂!🙂", "！fullwidth！", "¡hola!", "‼ double",
    "a photo of a cat!!!, highly detailed!!", "!" * 100, "wow! " * 30, "\t!\n!",
]


def main():
    folder, out = sys.argv[1], sys.argv[2]
    tok = CLIPTokenizer.from_pretrained(folder)
    rng = random.Random(12)
    prompts = FIXED + [prompt(rng) for _ in range(1100)] + UNICODE + PUNCT + BANG
    eos = tok.eos_token_id
    with open(out, "w") as f:
        for p in prompts:
            full = tok(p).input_ids
            ids = tok(p, padding="max_length", max_length=77, truncation=True).input_ids
            assert len(ids) == 77
            k = min(len(full), 77)
            assert ids[k - 1] == eos
            assert all(i == tok.pad_token_id for i in ids[k:])
            f.write(p.encode("utf-8").hex() + "\t" + str(len(full)) + "\t" +
                    " ".join(str(i) for i in ids[:k]) + "\n")
    print(f"{len(prompts)} cases, {sum(1 for p in prompts if len(tok(p).input_ids) > 77)} over-long")


if __name__ == "__main__":
    main()
