// t5_tokenizer.cc — T5TokenizerFast's encoding over Debian's libsentencepiece (t5_tokenizer.h). The
// only C++ file of the pipeline: libsentencepiece has a C++ API only; everything it throws or
// returns stays behind the C interface.
#include "t5_tokenizer.h"

#include <sentencepiece_processor.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <vector>

struct sdp_t5_tokenizer {
    sentencepiece::SentencePieceProcessor sp;
    int pieces = 0;                     // model pieces (without the extra ids)
    std::vector<std::string> added;     // added tokens, literal
    std::vector<int> added_id;          // their ids
};

static int fail(char *err, size_t errcap, const std::string &m)
{
    if (errcap) std::snprintf(err, errcap, "%s", m.c_str());
    return -1;
}

// Byte offset of the first invalid UTF-8 sequence (strict: no overlongs, surrogates, > U+10FFFF),
// or -1 when s is valid.
static long utf8_invalid_at(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n) return (long)i;
        unsigned cp = len == 1 ? c : c & (0x7f >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return (long)i;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return (long)i;
        i += len;
    }
    return -1;
}

extern "C" int sdp_t5_load(const char *path, struct sdp_t5_tokenizer **out, char *err, size_t errcap)
{
    *out = nullptr;
    std::string file = path;
    struct stat st;
    if (stat(path, &st) != 0) return fail(err, errcap, file + ": no such file or folder");
    if (S_ISDIR(st.st_mode)) {
        file += "/spiece.model";
        if (stat(file.c_str(), &st) != 0) {
            std::string tj = std::string(path) + "/tokenizer.json";
            if (stat(tj.c_str(), &st) == 0)
                return fail(err, errcap, std::string(path) + ": has tokenizer.json but no spiece.model; the T5 "
                            "tokenizer reads the SentencePiece model (spiece.model, shipped beside it in the "
                            "checkpoint's tokenizer_2/ or tokenizer_3/ folder)");
            return fail(err, errcap, file + ": no such file (the T5 tokenizer's SentencePiece model)");
        }
    }
    sdp_t5_tokenizer *t = new (std::nothrow) sdp_t5_tokenizer;
    if (!t) return fail(err, errcap, "out of memory");
    try {
        auto s = t->sp.Load(file);
        if (!s.ok()) {
            delete t;
            return fail(err, errcap, file + ": not a SentencePiece model (" + s.ToString() + ")");
        }
        t->pieces = t->sp.GetPieceSize();
        static const char *const specials[3] = {"<pad>", "</s>", "<unk>"};
        for (int i = 0; i < 3; i++)
            if (t->pieces <= 3 || t->sp.PieceToId(specials[i]) != i || (i == 2 && !t->sp.IsUnknown(2))) {
                std::string m = file + ": not a T5 SentencePiece model: expected <pad> 0, </s> 1, <unk> 2";
                delete t;
                return fail(err, errcap, m);
            }
        for (int i = 0; i < 3; i++) {
            t->added.push_back(specials[i]);
            t->added_id.push_back(i);
        }
        for (int n = 0; n < 100; n++) {
            t->added.push_back("<extra_id_" + std::to_string(n) + ">");
            t->added_id.push_back(t->pieces + 99 - n);
        }
    } catch (const std::exception &e) {
        delete t;
        return fail(err, errcap, file + ": " + e.what());
    }
    *out = t;
    return 0;
}

extern "C" void sdp_t5_free(struct sdp_t5_tokenizer *t) { delete t; }

extern "C" int sdp_t5_vocab_size(const struct sdp_t5_tokenizer *t) { return t->pieces + 100; }

extern "C" int sdp_t5_encode(const struct sdp_t5_tokenizer *t, const char *text, int64_t *ids, int max_len,
                             int *n_full, char *err, size_t errcap)
{
    if (max_len < 1) return fail(err, errcap, "T5 tokenizer: max_len " + std::to_string(max_len) + " < 1");
    size_t n = std::strlen(text);
    long bad = utf8_invalid_at((const unsigned char *)text, n);
    if (bad >= 0) return fail(err, errcap, "prompt is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    try {
        std::vector<int> out;
        size_t seg = 0, i = 0;
        auto flush = [&](size_t end) {
            if (end > seg) {
                std::vector<int> v;
                auto s = t->sp.Encode(std::string(text + seg, end - seg), &v);
                if (!s.ok()) throw std::runtime_error(s.ToString());
                out.insert(out.end(), v.begin(), v.end());
            }
        };
        while (i < n) {
            size_t best = 0;
            int best_id = 0;
            if (text[i] == '<')
                for (size_t k = 0; k < t->added.size(); k++) {
                    const std::string &a = t->added[k];
                    if (a.size() > best && std::strncmp(text + i, a.c_str(), a.size()) == 0) best = a.size(), best_id = t->added_id[k];
                }
            if (!best) {
                i++;
                continue;
            }
            flush(i);
            out.push_back(best_id);
            i += best;
            seg = i;
        }
        flush(n);
        *n_full = (int)out.size() + 1;
        int k = 0;
        for (; k < (int)out.size() && k < max_len - 1; k++) ids[k] = out[k];
        ids[k++] = 1; // </s>
        for (; k < max_len; k++) ids[k] = 0; // <pad>
    } catch (const std::exception &e) {
        return fail(err, errcap, std::string("T5 tokenizer: ") + e.what());
    }
    return 0;
}
