// t5_tokenizer.cc — T5TokenizerFast's encoding (t5_tokenizer.h): libsentencepiece (Debian, 0.1.97)
// loads and checks the model and gives the pieces, their scores and the model's precompiled
// normalization map; the steps around them are those of Hugging Face tokenizers, which
// T5TokenizerFast runs and which differ from sentencepiece's own encoder in two places:
//   - its Precompiled normalizer (spm_precompiled) maps the text one extended grapheme cluster
//     (UAX #29, as unicode-segmentation 1.13 cuts them; tables in t5_unicode_tables.c) at a time:
//     a cluster under 6 bytes is replaced by the mapping of its shortest prefix found in the map
//     (the rest of the cluster is dropped), else each character is mapped alone; sentencepiece
//     matches the longest prefix across characters (Hangul jamo L+V+T compose there, not here);
//   - its unigram Viterbi keeps, for each end position, the first best path in the order of start
//     positions (a later one must score strictly higher, in double), with an unknown character
//     scored min score - 10 and a run of unknown characters fused into one <unk>.
// Pipeline: added tokens split out of the raw text; each other segment normalized, split at
// whitespace (Rust's char::is_whitespace), "▁" put before each word not starting with one, the word
// cut before every "▁", each part encoded by the Viterbi over the model's pieces plus the 100 extra
// ids (score 0), as T5TokenizerFast's Unigram vocabulary holds them.
// The only C++ file of the pipeline: libsentencepiece has a C++ API only; everything it throws or
// returns stays behind the C interface.
#include "t5_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" {
extern const uint32_t sdp_t5_gcb_ranges[][3]; // t5_unicode_tables.c
extern const size_t sdp_t5_gcb_nranges;
}

namespace {

// Byte trie of the unigram vocabulary: children sorted by byte, id >= 0 where a piece ends.
struct TrieNode {
    int id = -1;
    std::vector<std::pair<unsigned char, int>> kids;
};

} // namespace

struct sdp_t5_tokenizer {
    sentencepiece::SentencePieceProcessor sp;
    int pieces = 0;                     // model pieces (without the extra ids)
    std::vector<std::string> added;     // added tokens, literal
    std::vector<int> added_id;          // their ids
    std::vector<double> score;          // vocabulary scores: the pieces, then <extra_id_99>..<extra_id_0>
    std::vector<TrieNode> trie;         // the vocabulary's strings
    double unk_score = 0;               // min score - 10
    std::vector<uint32_t> charsmap;     // precompiled normalization map: double-array trie units
    std::string replacements;           // and its NUL-separated replacement strings
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

// Length of the UTF-8 sequence starting with byte c (the text is valid).
static size_t u8len(unsigned char c) { return c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4; }

static uint32_t u8decode(const unsigned char *s)
{
    size_t len = u8len(s[0]);
    uint32_t cp = len == 1 ? s[0] : s[0] & (0x7f >> len);
    for (size_t k = 1; k < len; k++) cp = cp << 6 | (s[k] & 0x3f);
    return cp;
}

// ---- the model file: a protobuf (sentencepiece's ModelProto) ----

static bool pb_varint(const unsigned char *&p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        unsigned char b = *p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

// The payload of the last length-delimited field number `field` of the message [p, end): true and
// [*out, *out + *n), or false (absent, or the message is malformed).
static bool pb_bytes(const unsigned char *p, const unsigned char *end, unsigned field, const unsigned char **out,
                     size_t *n)
{
    bool found = false;
    while (p < end) {
        uint64_t key, v;
        if (!pb_varint(p, end, &key)) return false;
        switch (key & 7) {
        case 0: if (!pb_varint(p, end, &v)) return false; break;
        case 1: if (end - p < 8) return false; p += 8; break;
        case 5: if (end - p < 4) return false; p += 4; break;
        case 2:
            if (!pb_varint(p, end, &v) || v > (uint64_t)(end - p)) return false;
            if ((key >> 3) == field) *out = p, *n = (size_t)v, found = true;
            p += v;
            break;
        default: return false;
        }
    }
    return found;
}

// ModelProto.normalizer_spec (3).precompiled_charsmap (2): [u32 LE trie bytes][trie: u32 LE units]
// [replacements]. Absent or empty: no normalization (as T5TokenizerFast without a Precompiled
// normalizer). Returns false when the map is malformed.
static bool load_charsmap(sdp_t5_tokenizer *t)
{
    std::string proto = t->sp.serialized_model_proto();
    const unsigned char *p = (const unsigned char *)proto.data(), *spec, *cm;
    size_t nspec, n;
    if (!pb_bytes(p, p + proto.size(), 3, &spec, &nspec) || !pb_bytes(spec, spec + nspec, 2, &cm, &n) || !n)
        return true;
    if (n < 4) return false;
    size_t trie_bytes = (size_t)cm[0] | (size_t)cm[1] << 8 | (size_t)cm[2] << 16 | (size_t)cm[3] << 24;
    if (trie_bytes > n - 4 || trie_bytes < 4) return false;
    for (size_t i = 0; i < trie_bytes / 4; i++) {
        const unsigned char *u = cm + 4 + 4 * i;
        t->charsmap.push_back((uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24);
    }
    t->replacements.assign((const char *)cm + 4 + trie_bytes, n - 4 - trie_bytes);
    return utf8_invalid_at((const unsigned char *)t->replacements.data(), t->replacements.size()) < 0;
}

// ---- normalization (spm_precompiled's Precompiled over unicode-segmentation's graphemes) ----

// The replacement of the shortest prefix of s[0..n) that the map holds (spm_precompiled's
// transform: the first result of the double array's common prefix search), or false.
static bool cm_transform(const sdp_t5_tokenizer *t, const char *s, size_t n, std::string *out)
{
    const std::vector<uint32_t> &a = t->charsmap;
    auto offset = [](uint32_t u) { return (size_t)(u >> 10) << ((u & (1u << 9)) >> 6); };
    size_t pos = offset(a[0]);
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned c = (unsigned char)s[i];
        pos ^= c;
        if (pos >= a.size() || (a[pos] & (0x80000000u | 0xff)) != c) return false;
        bool leaf = (a[pos] >> 8) & 1;
        pos ^= offset(a[pos]);
        if (leaf) {
            if (pos >= a.size()) return false;
            size_t at = std::min((size_t)(a[pos] & 0x7fffffff), t->replacements.size());
            size_t end = t->replacements.find('\0', at);
            out->append(t->replacements, at, (end == std::string::npos ? t->replacements.size() : end) - at);
            return true;
        }
    }
    return false;
}

enum { GC_OTHER, GC_CR, GC_LF, GC_CONTROL, GC_EXTEND, GC_ZWJ, GC_RI, GC_PREPEND, GC_SPACING_MARK, GC_L, GC_V,
       GC_T, GC_LV, GC_LVT, GC_EXT_PICT, GC_INCB_CONSONANT, INCB_LINKER = 16, INCB_EXTEND = 32 };

static unsigned gcb(uint32_t cp)
{
    size_t lo = 0, hi = sdp_t5_gcb_nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < sdp_t5_gcb_ranges[mid][0]) hi = mid;
        else if (cp > sdp_t5_gcb_ranges[mid][1]) lo = mid + 1;
        else return sdp_t5_gcb_ranges[mid][2];
    }
    return GC_OTHER;
}

// Whether an extended grapheme cluster boundary lies before v[k] (0 < k < v.size(); v: gcb() of
// each code point), by UAX #29's rules as unicode-segmentation 1.13 applies them.
static bool grapheme_break(const std::vector<unsigned> &v, size_t k)
{
    unsigned b = v[k - 1] & 15, a = v[k] & 15;
    if (b == GC_CR && a == GC_LF) return false;                                              // GB3
    if (b == GC_CONTROL || b == GC_CR || b == GC_LF) return true;                            // GB4
    if (a == GC_CONTROL || a == GC_CR || a == GC_LF) return true;                            // GB5
    if (b == GC_L && (a == GC_L || a == GC_V || a == GC_LV || a == GC_LVT)) return false;    // GB6
    if ((b == GC_LV || b == GC_V) && (a == GC_V || a == GC_T)) return false;                 // GB7
    if ((b == GC_LVT || b == GC_T) && a == GC_T) return false;                               // GB8
    if (a == GC_EXTEND || a == GC_ZWJ || a == GC_SPACING_MARK || b == GC_PREPEND) return false; // GB9-9b
    if (a == GC_INCB_CONSONANT) { // GB9c: Consonant [Extend Linker]* Linker [Extend Linker]* x Consonant
        size_t j = k, linkers = 0;
        for (; j > 0 && (v[j - 1] & (INCB_LINKER | INCB_EXTEND)); j--) linkers += (v[j - 1] & INCB_LINKER) != 0;
        return !(j > 0 && linkers && (v[j - 1] & 15) == GC_INCB_CONSONANT);
    }
    if (b == GC_ZWJ && a == GC_EXT_PICT) { // GB11: ExtPict Extend* ZWJ x ExtPict
        size_t j = k - 1;
        while (j > 0 && (v[j - 1] & 15) == GC_EXTEND) j--;
        return !(j > 0 && (v[j - 1] & 15) == GC_EXT_PICT);
    }
    if (b == GC_RI && a == GC_RI) { // GB12, GB13: regional indicators pair up
        size_t j = k - 1;
        while (j > 0 && (v[j - 1] & 15) == GC_RI) j--;
        return (k - j) % 2 == 0;
    }
    return true; // GB999
}

// tokenizers' Precompiled normalizer on s (valid UTF-8).
static std::string normalize(const sdp_t5_tokenizer *t, const std::string &s)
{
    if (t->charsmap.empty()) return s;
    std::vector<size_t> off; // byte offset of each code point, then s.size()
    std::vector<unsigned> v;
    for (size_t i = 0; i < s.size(); i += u8len((unsigned char)s[i])) {
        off.push_back(i);
        v.push_back(gcb(u8decode((const unsigned char *)s.data() + i)));
    }
    off.push_back(s.size());
    std::string out;
    for (size_t g = 0, e; g < v.size(); g = e) {
        for (e = g + 1; e < v.size() && !grapheme_break(v, e); e++) {}
        if (off[e] - off[g] < 6 && cm_transform(t, s.data() + off[g], off[e] - off[g], &out)) continue;
        for (size_t k = g; k < e; k++) {
            size_t len = off[k + 1] - off[k];
            if (!cm_transform(t, s.data() + off[k], len, &out)) out.append(s, off[k], len);
        }
    }
    return out;
}

// ---- the unigram model (tokenizers' Unigram, encode_optimized) ----

static int trie_child(const sdp_t5_tokenizer *t, int node, unsigned char c)
{
    const auto &k = t->trie[node].kids;
    auto it = std::lower_bound(k.begin(), k.end(), std::make_pair(c, 0));
    return it != k.end() && it->first == c ? it->second : -1;
}

static void trie_add(sdp_t5_tokenizer *t, const std::string &s, int id)
{
    int node = 0;
    for (unsigned char c : s) {
        int next = trie_child(t, node, c);
        if (next < 0) {
            next = (int)t->trie.size();
            auto &k = t->trie[node].kids;
            k.insert(std::lower_bound(k.begin(), k.end(), std::make_pair(c, 0)), std::make_pair(c, next));
            t->trie.emplace_back();
        }
        node = next;
    }
    t->trie[node].id = id; // a repeated string keeps the last id, as tokenizers' token map does
}

static int trie_find(const sdp_t5_tokenizer *t, const char *s, size_t n)
{
    int node = 0;
    for (size_t i = 0; i < n && node >= 0; i++) node = trie_child(t, node, (unsigned char)s[i]);
    return node >= 0 ? t->trie[node].id : -1;
}

// Appends the ids of w (one pre-tokenized word part, valid UTF-8) to out.
static void viterbi(const sdp_t5_tokenizer *t, const std::string &w, std::vector<int> &out)
{
    struct Best {
        double score = 0;
        long start = -1; // -1: no path ends here yet
        int id = 0;
    };
    const int unk = 2;
    std::vector<Best> best(w.size() + 1);
    for (size_t i = 0; i < w.size();) {
        size_t mb = u8len((unsigned char)w[i]);
        double base = best[i].score;
        bool single = false;
        auto offer = [&](size_t end, double score, int id) { // the first best path stays (strict >)
            if (best[end].start < 0 || score + base > best[end].score) best[end] = {score + base, (long)i, id};
        };
        for (size_t j = i, node = 0; j < w.size(); j++) {
            int next = trie_child(t, (int)node, (unsigned char)w[j]);
            if (next < 0) break;
            node = (size_t)next;
            int id = t->trie[node].id;
            if (id < 0) continue;
            offer(j + 1, t->score[id], id);
            single |= j + 1 - i == mb;
        }
        if (!single) offer(i + mb, t->unk_score, unk);
        i += mb;
    }
    std::vector<int> rev;
    for (size_t end = w.size(); end > 0;) {
        size_t start = (size_t)best[end].start;
        if (best[end].id == unk) { // fuse a run of unknowns into one token
            while (start > 0 && best[start].id == unk) start = (size_t)best[start].start;
            int id = trie_find(t, w.data() + start, end - start);
            rev.push_back(id >= 0 ? id : unk);
        } else {
            rev.push_back(best[end].id);
        }
        end = start;
    }
    out.insert(out.end(), rev.rbegin(), rev.rend());
}

// Rust's char::is_whitespace (White_Space), on which the WhitespaceSplit pre-tokenizer splits.
static bool is_white_space(uint32_t c)
{
    return (c >= 9 && c <= 13) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
           c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// One segment between added tokens: normalize, WhitespaceSplit, Metaspace("▁", prepend always,
// split), unigram.
static void encode_segment(const sdp_t5_tokenizer *t, const std::string &seg, std::vector<int> &out)
{
    static const std::string meta = "\xe2\x96\x81"; // U+2581
    std::string s = normalize(t, seg);
    for (size_t i = 0; i < s.size();) {
        size_t e = i;
        while (e < s.size() && !is_white_space(u8decode((const unsigned char *)s.data() + e)))
            e += u8len((unsigned char)s[e]);
        if (e > i) {
            std::string word = s.compare(i, meta.size(), meta) == 0 ? s.substr(i, e - i) : meta + s.substr(i, e - i);
            for (size_t p = 0; p < word.size();) { // parts: each "▁" starts one
                size_t q = word.find(meta, p + 1);
                if (q == std::string::npos) q = word.size();
                viterbi(t, word.substr(p, q - p), out);
                p = q;
            }
            i = e;
        } else {
            i += u8len((unsigned char)s[i]);
        }
    }
}

// ---- the C interface ----

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
        if (!load_charsmap(t)) {
            delete t;
            return fail(err, errcap, file + ": malformed precompiled normalization map (normalizer_spec)");
        }
        // Added tokens (split out of the raw text first): the specials, the model's other control
        // pieces (transformers adds them as special tokens), the extra ids.
        for (int i = 0; i < 3; i++) {
            t->added.push_back(specials[i]);
            t->added_id.push_back(i);
        }
        for (int i = 3; i < t->pieces; i++)
            if (t->sp.IsControl(i)) {
                t->added.push_back(t->sp.IdToPiece(i));
                t->added_id.push_back(i);
            }
        // The Unigram vocabulary: the pieces with their scores, <extra_id_99>..<extra_id_0> scored 0.
        t->trie.emplace_back();
        double min_score = 0;
        for (int i = 0; i < t->pieces + 100; i++) {
            std::string piece =
                i < t->pieces ? t->sp.IdToPiece(i) : "<extra_id_" + std::to_string(t->pieces + 99 - i) + ">";
            double score = i < t->pieces ? (double)t->sp.GetScore(i) : 0.0;
            t->score.push_back(score);
            min_score = i ? std::min(min_score, score) : score;
            if (!piece.empty()) trie_add(t, piece, i);
            if (i >= t->pieces) {
                t->added.push_back(piece);
                t->added_id.push_back(i);
            }
        }
        t->unk_score = min_score - 10.0;
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
        while (i < n) { // added tokens: leftmost-longest
            size_t best = 0;
            int best_id = 0;
            for (size_t k = 0; k < t->added.size(); k++) {
                const std::string &a = t->added[k];
                if (a.size() > best && a[0] == text[i] && std::strncmp(text + i, a.c_str(), a.size()) == 0)
                    best = a.size(), best_id = t->added_id[k];
            }
            if (!best) {
                i++;
                continue;
            }
            if (i > seg) encode_segment(t, std::string(text + seg, i - seg), out);
            out.push_back(best_id);
            i += best;
            seg = i;
        }
        if (n > seg) encode_segment(t, std::string(text + seg, n - seg), out);
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
