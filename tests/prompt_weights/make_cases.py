#!/usr/bin/env python3
"""make_cases.py — writes tests/prompt_weights/cases.txt: prompts with A1111's emphasis syntax,
how AUTOMATIC1111's parse_prompt_attention splits them (pieces and weights) and the 77-id chunks
and multipliers its tokenize_line makes, the reference of pipeline/prompt_weights.h's test.

Pieces come from A1111's own parse_prompt_attention (modules/prompt_parser.py of
AUTOMATIC1111/stable-diffusion-webui, not in this repository: give a file that defines it with
--a1111 FILE.py). The chunks come from tokenize_line as below (transcribed from A1111's
modules/sd_hijack_clip.py, emphasis "Original", no textual-inversion embeddings) over
transformers' CLIPTokenizer on models/arch/sd15/tokenizer.

Output format, per case (tab separated, one line each):
  P <prompt hex>                     the prompt (UTF-8 bytes as hex)
  E                                   A1111 raises (a weight float() refuses), or:
  W <text hex> <weight repr>          one line per piece ("-" for an empty text)
  C <token_count> <n_chunks> <ids...> <mults...>   all chunks, 77 each; a multiplier is its
                                      float32 bits in hex, "-" for 1.0

Usage (dev machine: transformers): python3 tests/prompt_weights/make_cases.py --a1111 PARSER.py OUT
"""
import argparse
import importlib.util
import random
import struct
import sys

CHUNK = 75
BACKTRACK = 20  # A1111's comma_padding_backtrack default


def tokenize_line(tok, parsed, comma):
    """A1111's FrozenCLIPEmbedderWithCustomWordsBase.tokenize_line (see the module docstring)."""
    tokenized = tok([t for t, _ in parsed], truncation=False, add_special_tokens=False)["input_ids"]
    chunks, cur = [], {"t": [], "m": []}
    state = {"count": 0, "last_comma": -1}

    def next_chunk(is_last=False):
        state["count"] += len(cur["t"]) if is_last else CHUNK
        add = CHUNK - len(cur["t"])
        t = cur["t"] + [tok.eos_token_id] * max(add, 0)
        m = cur["m"] + [1.0] * max(add, 0)
        chunks.append(([tok.bos_token_id] + t + [tok.eos_token_id], [1.0] + m + [1.0]))
        state["last_comma"] = -1
        cur["t"], cur["m"] = [], []

    for tokens, (text, weight) in zip(tokenized, parsed):
        if text == "BREAK" and weight == -1:
            next_chunk()
            continue
        for token in tokens:
            if token == comma:
                state["last_comma"] = len(cur["t"])
            elif (BACKTRACK != 0 and len(cur["t"]) == CHUNK and state["last_comma"] != -1
                  and len(cur["t"]) - state["last_comma"] <= BACKTRACK):
                at = state["last_comma"] + 1
                rt, rm = cur["t"][at:], cur["m"][at:]
                cur["t"], cur["m"] = cur["t"][:at], cur["m"][:at]
                next_chunk()
                cur["t"], cur["m"] = rt, rm
            if len(cur["t"]) == CHUNK:
                next_chunk()
            cur["t"].append(token)
            cur["m"].append(weight)
    if cur["t"] or not chunks:
        next_chunk(is_last=True)
    return chunks, state["count"]


WORDS = ("masterpiece best quality highly detailed a photo of cat dog girl portrait city night neon "
         "forest river mountain castle dragon oil painting watercolor 8k sharp focus cinematic BREAK "
         "BREAKING xBREAK BREAK_ break").split()


def emphasis_prompt(rng):
    out = []
    depth = 0
    for _ in range(rng.choice([1, 3, 6, 12, 25, 40, 70])):
        r = rng.random()
        if r < 0.45:
            out.append(rng.choice(WORDS))
        elif r < 0.55:
            out.append("(")
            depth += 1
        elif r < 0.62:
            out.append("[")
        elif r < 0.7 and depth:
            out.append(rng.choice([")", ":" + rng.choice(["1.2", "0.5", "1.", ".8", "+1.3", "-0.4", "2", "1.15"]) + ")"]))
            depth -= 1
        elif r < 0.74:
            out.append("]")
        elif r < 0.8:
            out.append(rng.choice([",", ", ", " , ", ",,"]))
        elif r < 0.84:
            out.append(rng.choice(["\\(", "\\)", "\\[", "\\]", "\\\\", "\\", "\\x"]))
        elif r < 0.88:
            out.append(rng.choice([":", " : ", "a:b", ":1.2", ":3)", "::"]))
        elif r < 0.92:
            out.append(rng.choice([" BREAK ", "BREAK", "\nBREAK\n", " BREAK", "\u3000BREAK\t", "(BREAK)"]))
        else:
            out.append(rng.choice(["café", "東京", "🙂", "\u00a0", "don't", "!!", "1.5", "(((", ")))"]))
        out.append(rng.choice(["", " ", " ", ", "]))
    return "".join(out)


FIXED = [
    "", "normal text", "an (important) word", "(unbalanced", "\\(literal\\]", "(unnecessary)(parens)",
    "a (((house:1.3)) [on] a (hill:0.5), sun, (((sky))).", "a BREAK b", "(a BREAK b)", "BREAK BREAK",
    "BREAKfast", "x BREAK", "BREAK", "[[[faint]]]", "(a:1.5) (b:0.5) [c] (d)", "(x:-1)", "(x:1.2.3)", "(x:.)",
    "a \\ b", "\\", "(\\(x\\))", ":", "a:b:c", "(a:b:1.2)", "((a)(b))", "]]]]((((", "(" * 30 + "deep" + ")" * 30,
    ", ".join(["tag%d" % i for i in range(60)]), " ".join(["word"] * 200), ", ".join(["(w%d:1.1)" % i for i in range(50)]),
    "a, " * 100, "long " * 74 + ", x y z", "long " * 60 + ", " + "tail " * 30,
] + [
    # the comma 18..22 tokens back when the chunk fills: comma_padding_backtrack's boundary (20)
    "word " * a + ", " + "(word:1.2) " * 30 for a in range(53, 58)
] + ["word " * 75 + ", " + "word " * a + ", " + "word " * 40 for a in range(53, 58)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a1111", required=True, help="a .py file defining A1111's parse_prompt_attention")
    ap.add_argument("--tokenizer", default="models/arch/sd15/tokenizer")
    ap.add_argument("out")
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("a1111_prompt_parser", a.a1111)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from transformers import CLIPTokenizer
    tok = CLIPTokenizer.from_pretrained(a.tokenizer)
    comma = tok(",", add_special_tokens=False).input_ids[0]
    rng = random.Random(7)
    prompts = FIXED + [emphasis_prompt(rng) for _ in range(1000)]
    errors = multi = 0
    with open(a.out, "w") as f:
        for p in prompts:
            f.write("P\t" + p.encode().hex() + "\n")
            try:
                parsed = mod.parse_prompt_attention(p)
            except ValueError:
                f.write("E\n")
                errors += 1
                continue
            for text, w in parsed:
                f.write("W\t" + (text.encode().hex() or "-") + "\t" + repr(float(w)) + "\n")
            chunks, count = tokenize_line(tok, parsed, comma)
            multi += len(chunks) > 1
            ids = [i for c in chunks for i in c[0]]
            mults = [struct.unpack("<I", struct.pack("<f", m))[0] for c in chunks for m in c[1]]
            f.write("C\t%d\t%d\t%s\t%s\n" % (count, len(chunks), " ".join(map(str, ids)),
                                            " ".join("-" if m == 0x3F800000 else "%08x" % m for m in mults)))
    print(f"{len(prompts)} prompts, {errors} refused by float(), {multi} with more than one chunk")


if __name__ == "__main__":
    sys.exit(main())
