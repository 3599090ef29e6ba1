/* keymap.c — applies the key tables (keymap_sd.def) to an LDM single file: each file key ->
 * ignored, unknown, or one or more (component, canonical key, transform) entries.
 * Row semantics: keymap_sd.def's header. The block-index parameters the templates use are read
 * from the file's own keys: L (UNet layers_per_block) = n - 1 for the first input block n holding
 * a downsampler (input_blocks.n.0.op), else the last input block's index; B (VAE up blocks) =
 * 1 + the largest n of decoder.up.n; J (SD 3's joint blocks) = 1 + the largest n of
 * joint_blocks.n. O2S_PREFIX_IF rows apply to files holding their evidence key (evidence_of).
 * Component files in diffusers naming (o2s_keymap_diffusers) pass through the CLIP rules (text
 * encoders) or the TAESD rules (VAE: taesd.py's decoder naming); other keys stay as they are.
 * EMA (o2s_options.use_ema): each UNet entry takes the tensor "model_ema." + its LDM key after
 * "model." with the dots removed (diffusers' flat EMA naming), which must exist.
 */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum rules {
#define O2S_PREFIX(p, c, r)
#define O2S_PREFIX_IF(p, ev, c, r)
#define O2S_RULE(r, pat, tmpl, rn, tf)
#define O2S_RENAME(rn, from, to)
#define O2S_COMPONENT_KEY(prefix, c)
    RS_IGNORE = 0,
    RS_LDM_UNET,
    RS_LDM_VAE,
    RS_CLIP,
    RS_OPENCLIP,
    RS_OPENCLIP_XL,
    RS_TAESD,
    RS_SD3,
    RS_FLUX,
    RS_T5,
};
enum renames { RN_NONE = 0, RN_UNET_RESNET, RN_VAE_RESNET, RN_VAE_ATTN, RN_OPENCLIP_LAYER };
#define T_COPY O2S_COPY
#define T_LINEAR O2S_LINEAR
#define T_SPLIT3 O2S_SPLIT3
#define T_TRANSPOSE O2S_TRANSPOSE
#define T_SWAP2 O2S_SWAP2
#define T_SWAP2_LAST O2S_SWAP2_LAST
#define T_SPLIT_QKVM O2S_SPLIT_QKVM
#define IGNORE NULL

static const struct prefix_row {
    const char *prefix;
    enum o2s_component c;
    enum rules r;
    const char *evidence; /* O2S_PREFIX_IF's; NULL: every file */
} PREFIXES[] = {
#undef O2S_PREFIX
#undef O2S_PREFIX_IF
#define O2S_PREFIX(p, c, r) {p, c, RS_##r, NULL},
#define O2S_PREFIX_IF(p, ev, c, r) {p, c, RS_##r, ev},
#include "keymap_sd.def"
#undef O2S_PREFIX
#undef O2S_PREFIX_IF
#define O2S_PREFIX(p, c, r)
#define O2S_PREFIX_IF(p, ev, c, r)
};
_Static_assert(sizeof PREFIXES / sizeof PREFIXES[0] <= 32, "evidence bits: one per prefix row");
static const struct rule_row {
    enum rules r;
    const char *pattern, *tmpl;
    enum renames rn;
    enum o2s_transform tf;
} RULES[] = {
#undef O2S_RULE
#define O2S_RULE(r, pat, tmpl, rn, tf) {RS_##r, pat, tmpl, RN_##rn, T_##tf},
#include "keymap_sd.def"
#undef O2S_RULE
#define O2S_RULE(r, pat, tmpl, rn, tf)
};
static const struct rename_row { enum renames rn; const char *from, *to; } RENAMES[] = {
#undef O2S_RENAME
#define O2S_RENAME(rn, from, to) {RN_##rn, from, to},
#include "keymap_sd.def"
#undef O2S_RENAME
#define O2S_RENAME(rn, from, to)
};
static const struct component_row { const char *prefix; enum o2s_component c; } COMPONENT_KEYS[] = {
#undef O2S_COMPONENT_KEY
#define O2S_COMPONENT_KEY(prefix, c) {prefix, c},
#include "keymap_sd.def"
#undef O2S_COMPONENT_KEY
};

/* Does key start with prefix (a '.'-terminated prefix) or equal it (otherwise)? Returns the
 * rest or NULL. */
static const char *match_prefix(const char *key, const char *prefix)
{
    size_t n = strlen(prefix);
    if (n == 0) return key; /* the catch-all row */
    if (strncmp(key, prefix, n) != 0) return NULL;
    if (prefix[n - 1] != '.' && key[n]) return NULL;
    return key + n;
}

/* Matches pattern ('#' = a decimal number) against s; fills caps (up to 2). Returns the tail
 * (after a '.'-terminated pattern; "" for a whole match) or NULL. */
static const char *match_pattern(const char *s, const char *pat, long caps[2])
{
    int nc = 0;
    const char *p = pat;
    for (; *p; p++) {
        if (*p == '#') {
            if (*s < '0' || *s > '9') return NULL;
            long v = 0;
            while (*s >= '0' && *s <= '9' && v < 100000000) v = v * 10 + (*s++ - '0');
            if (*s >= '0' && *s <= '9') return NULL;
            if (nc < 2) caps[nc] = v;
            nc++;
        } else if (*s++ != *p) {
            return NULL;
        }
    }
    if (p > pat && p[-1] != '.' && *s) return NULL;
    return s;
}

/* Applies rename set rn to tail (in place, whole dotted segments). 0, or -1 if too long. */
static int apply_renames(enum renames rn, char *tail, size_t cap)
{
    for (size_t r = 0; r < sizeof RENAMES / sizeof RENAMES[0]; r++) {
        if (RENAMES[r].rn != rn) continue;
        size_t lf = strlen(RENAMES[r].from), lt = strlen(RENAMES[r].to);
        for (size_t i = 0; tail[i];) {
            bool at_seg = i == 0 || tail[i - 1] == '.';
            if (at_seg && strncmp(tail + i, RENAMES[r].from, lf) == 0 &&
                (tail[i + lf] == 0 || tail[i + lf] == '.')) {
                size_t rest = strlen(tail + i + lf);
                if (i + lt + rest + 1 > cap) return -1;
                memmove(tail + i + lt, tail + i + lf, rest + 1);
                memcpy(tail + i, RENAMES[r].to, lt);
                i += lt;
            } else {
                i++;
            }
        }
    }
    return 0;
}

struct params { long L, B, J; }; /* J: SD 3's joint blocks */

/* Expands template into out with captures and parameters; split: the char for '*'. -1 when an
 * index comes out negative or the key is too long. */
static int expand(const char *tmpl, const long caps[2], const struct params *pr, char split,
                  char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = tmpl; *p; p++) {
        char buf[32];
        const char *ins = buf;
        buf[0] = *p;
        buf[1] = 0;
        if (*p == '*') {
            buf[0] = split;
        } else if (*p == '{' && p[1] && p[2] == '}') {
            long v;
            switch (p[1]) {
            case '0': v = caps[0]; break;
            case '1': v = caps[1]; break;
            case 'D': v = (caps[0] - 1) / (pr->L + 1); break;
            case 'd': v = (caps[0] - 1) % (pr->L + 1); break;
            case 'U': v = caps[0] / (pr->L + 1); break;
            case 'u': v = caps[0] % (pr->L + 1); break;
            case 'R': v = pr->B - 1 - caps[0]; break;
            case 'P': v = caps[0] - 1; break;
            default: return -1;
            }
            if (v < 0 || ((p[1] == 'D' || p[1] == 'd') && caps[0] < 1)) return -1;
            snprintf(buf, sizeof buf, "%ld", v);
            p += 2;
        }
        size_t l = strlen(ins);
        if (n + l + 1 > cap) return -1;
        memcpy(out + n, ins, l);
        n += l;
    }
    out[n] = 0;
    return 0;
}

/* Bit i set when tensors [first, ntensors) hold a key starting with prefix row i's evidence
 * (O2S_PREFIX_IF). */
static unsigned evidence_of(const struct o2s_store *s, size_t first)
{
    unsigned ev = 0;
    for (size_t k = 0; k < sizeof PREFIXES / sizeof PREFIXES[0]; k++) {
        const char *e = PREFIXES[k].evidence;
        for (size_t i = first; e && i < s->ntensors && !(ev & (1u << k)); i++)
            if (strncmp(s->tensors[i].name, e, strlen(e)) == 0) ev |= 1u << k;
    }
    return ev;
}

/* The first prefix row for key in a file with evidence bits ev; *rest: the key after it. */
static const struct prefix_row *find_prefix(unsigned ev, const char *key, const char **rest)
{
    for (size_t i = 0; i < sizeof PREFIXES / sizeof PREFIXES[0]; i++)
        if ((!PREFIXES[i].evidence || (ev & (1u << i))) &&
            (*rest = match_prefix(key, PREFIXES[i].prefix)))
            return &PREFIXES[i];
    return NULL;
}

/* The part-th '|'-separated alternative of tmpl into out (all of tmpl without a '|'). -1 if
 * there is no such part or it does not fit. */
static int alternative(const char *tmpl, int part, char *out, size_t cap)
{
    if (!strchr(tmpl, '|')) part = 0;
    for (; part > 0 && tmpl; part--) {
        tmpl = strchr(tmpl, '|');
        if (tmpl) tmpl++;
    }
    if (!tmpl) return -1;
    size_t n = strcspn(tmpl, "|");
    if (n + 1 > cap) return -1;
    memcpy(out, tmpl, n);
    out[n] = 0;
    return 0;
}

/* L and B from the file's keys (see the file comment). */
static void read_params(const struct o2s_store *s, size_t first, struct params *pr)
{
    long first_op = -1, max_in = 0, max_up = -1, max_joint = -1;
    for (size_t i = first; i < s->ntensors; i++) {
        const char *rest;
        const struct prefix_row *p = find_prefix(s->evidence, s->tensors[i].name, &rest);
        if (!p) continue;
        long caps[2] = {0, 0};
        if (p->r == RS_LDM_UNET) {
            if (match_pattern(rest, "input_blocks.#.0.op.", caps) &&
                (first_op < 0 || caps[0] < first_op))
                first_op = caps[0];
            if (match_pattern(rest, "input_blocks.#.", caps) && caps[0] > max_in) max_in = caps[0];
        } else if (p->r == RS_LDM_VAE) {
            if (match_pattern(rest, "decoder.up.#.", caps) && caps[0] > max_up) max_up = caps[0];
        } else if (p->r == RS_SD3) {
            if (match_pattern(rest, "joint_blocks.#.", caps) && caps[0] > max_joint) max_joint = caps[0];
        }
    }
    pr->L = first_op > 0 ? first_op - 1 : max_in > 0 ? max_in : 1;
    pr->B = max_up + 1;
    pr->J = max_joint + 1;
}

int o2s_component_file(const struct o2s_store *s, const char *path)
{
    if (evidence_of(s, 0)) return -1; /* SD 3 / Flux single-file evidence */
    for (size_t i = 0; i < s->ntensors; i++)
        for (size_t k = 0; k < sizeof PREFIXES / sizeof PREFIXES[0]; k++)
            if (PREFIXES[k].prefix[0] && match_prefix(s->tensors[i].name, PREFIXES[k].prefix))
                return -1; /* LDM evidence */
    const char *slash = strrchr(path, '/');
    if (slash) {
        const char *dn = slash;
        while (dn > path && dn[-1] != '/') dn--;
        for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
            const char *name = o2s_component_name((enum o2s_component)c);
            if ((size_t)(slash - dn) == strlen(name) && strncmp(dn, name, strlen(name)) == 0)
                return c;
        }
    }
    for (size_t k = 0; k < sizeof COMPONENT_KEYS / sizeof COMPONENT_KEYS[0]; k++)
        for (size_t i = 0; i < s->ntensors; i++)
            if (strncmp(s->tensors[i].name, COMPONENT_KEYS[k].prefix,
                        strlen(COMPONENT_KEYS[k].prefix)) == 0)
                return COMPONENT_KEYS[k].c;
    return -1;
}

int o2s_keymap_diffusers(struct o2s_store *s, enum o2s_component c, size_t first, char *err,
                         size_t cap)
{
    /* the rules of a component file: CLIP text encoders (transformers 4.x/5.x), T5 encoders (a
     * shared.weight or encoder.block.* key: SD 3's text_encoder_3, Flux's text_encoder_2), TAESD's
     * decoder in its original naming */
    bool t5 = false;
    for (size_t i = first; i < s->ntensors && !t5; i++)
        t5 = !strcmp(s->tensors[i].name, "shared.weight") || !strncmp(s->tensors[i].name, "encoder.block.", 14);
    enum rules rs = (c == O2S_TEXT_ENCODER || c == O2S_TEXT_ENCODER_2 || c == O2S_TEXT_ENCODER_3) && t5 ? RS_T5
                    : c == O2S_TEXT_ENCODER || c == O2S_TEXT_ENCODER_2                             ? RS_CLIP
                    : c == O2S_VAE                                                                 ? RS_TAESD
                                                                                                   : RS_IGNORE;
    for (size_t i = first; i < s->ntensors; i++) {
        struct o2s_tensor *t = &s->tensors[i];
        const char *key = t->name, *tail = NULL;
        char buf[O2S_KEY_MAX];
        long caps[2] = {0, 0};
        const struct rule_row *r = NULL;
        for (size_t k = 0; rs != RS_IGNORE && k < sizeof RULES / sizeof RULES[0] && !r; k++)
            if (RULES[k].r == rs && (tail = match_pattern(key, RULES[k].pattern, caps)))
                r = &RULES[k];
        if (r && !r->tmpl) {
            t->state = O2S_T_IGNORED;
            continue;
        }
        if (r) {
            struct params pr = {1, 1, 0};
            if (rs == RS_TAESD && caps[0] < 1) { /* no DecoderTiny layer: the key as it is */
            } else if (expand(r->tmpl, caps, &pr, 'q', buf, sizeof buf) < 0 ||
                       strlen(buf) + strlen(tail) + 1 > sizeof buf) {
                return o2s_fail(err, cap, "%s: tensor '%.200s': key too long",
                                s->files[t->file].path, key);
            } else {
                key = strcat(buf, tail);
            }
        }
        if (o2s_add_entry(s, c, key, i, O2S_COPY, 0, err, cap) < 0) return -1;
    }
    return 0;
}

long o2s_keymap_ldm(struct o2s_store *s, size_t first, char *err, size_t cap)
{
    struct params pr;
    s->evidence = evidence_of(s, first);
    read_params(s, first, &pr);
    long mapped = 0;
    for (size_t i = first; i < s->ntensors; i++) {
        struct o2s_tensor *t = &s->tensors[i];
        if (strncmp(t->name, "model_ema.", 10) == 0) s->has_ema = 1;
        const char *rest;
        const struct prefix_row *p = find_prefix(s->evidence, t->name, &rest);
        if (!p) continue; /* unknown */
        if (p->r == RS_IGNORE) {
            t->state = O2S_T_IGNORED;
            continue;
        }
        const struct rule_row *r = NULL;
        const char *tail = NULL;
        long caps[2] = {0, 0};
        for (size_t k = 0; k < sizeof RULES / sizeof RULES[0] && !r; k++)
            if (RULES[k].r == p->r && (tail = match_pattern(rest, RULES[k].pattern, caps)))
                r = &RULES[k];
        if (!r) continue; /* unknown */
        if (!r->tmpl) {
            t->state = O2S_T_IGNORED;
            continue;
        }
        char tl[O2S_KEY_MAX], key[O2S_KEY_MAX];
        if (strlen(tail) + 1 > sizeof tl || apply_renames(r->rn, strcpy(tl, tail), sizeof tl) < 0)
            return o2s_fail(err, cap, "%s: tensor '%.200s': key too long", s->files[t->file].path,
                            t->name);
        int parts = r->tf == O2S_SPLIT3 ? 3 : r->tf == O2S_SPLIT_QKVM ? 4 : 1;
        enum o2s_transform tf = r->tf;
        if (tf == O2S_SWAP2_LAST) tf = caps[0] == pr.J - 1 ? O2S_SWAP2 : O2S_COPY;
        for (int part = 0; part < parts; part++) {
            char tm[O2S_KEY_MAX];
            if (alternative(r->tmpl, part, tm, sizeof tm) < 0 ||
                expand(tm, caps, &pr, "qkv"[part % 3], key, sizeof key) < 0 ||
                strlen(key) + strlen(tl) + 1 > sizeof key)
                break; /* an index that fits no block: left unknown */
            strcat(key, tl);
            if (o2s_add_entry(s, p->c, key, i, tf, part, err, cap) < 0) return -1;
        }
        if (t->state == O2S_T_MAPPED) mapped++;
    }
    if (s->opt.use_ema) {
        if (!s->has_ema)
            return o2s_fail(err, cap, "%s: EMA weights asked, but the file has no model_ema.* "
                            "tensor", s->files[0].path);
        /* name -> index lookup through a sorted copy */
        for (size_t k = 0; k < s->nentries[O2S_UNET]; k++) {
            struct o2s_entry *e = &s->entries[O2S_UNET][k];
            const char *orig = s->tensors[e->tensor].name;
            char flat[O2S_KEY_MAX];
            size_t n = (size_t)snprintf(flat, sizeof flat, "model_ema.");
            for (const char *q = orig + strlen("model."); *q && n + 1 < sizeof flat; q++)
                if (*q != '.') flat[n++] = *q;
            flat[n] = 0;
            size_t j = 0;
            while (j < s->ntensors && strcmp(s->tensors[j].name, flat) != 0) j++;
            if (j == s->ntensors)
                return o2s_fail(err, cap, "%s: EMA weights asked, but tensor '%s' (for '%s') is "
                                "missing", s->files[0].path, flat, orig);
            const struct o2s_tensor *et = &s->tensors[j];
            const struct o2s_tensor *ot = &s->tensors[e->tensor];
            if (et->rank != ot->rank || memcmp(et->dims, ot->dims, sizeof et->dims) != 0 ||
                !et->dtype)
                return o2s_fail(err, cap, "%s: EMA tensor '%s' does not match '%s' in dtype or "
                                "dims", s->files[0].path, flat, orig);
            s->tensors[j].state = O2S_T_MAPPED;
            s->tensors[e->tensor].state = O2S_T_IGNORED;
            e->tensor = j;
        }
    }
    return mapped;
}

int o2s_ldm_canonical(const struct o2s_store *base, const char *ldm_key, enum o2s_component *c,
                      char *out, size_t cap)
{
    const char *rest;
    const struct prefix_row *p = find_prefix(base->evidence, ldm_key, &rest);
    if (!p || p->r == RS_IGNORE) return -1;
    struct params pr;
    if (base->format == O2S_FORMAT_LDM) {
        read_params(base, 0, &pr);
    } else { /* from the canonical keys: resnets per down block, VAE up blocks */
        char k[96];
        pr.L = 0;
        pr.J = 0;
        do snprintf(k, sizeof k, "down_blocks.0.resnets.%ld.conv1.weight", pr.L);
        while (o2s_find(base, O2S_UNET, k, NULL) == 0 && ++pr.L < 64);
        pr.B = 0;
        do snprintf(k, sizeof k, "decoder.up_blocks.%ld.resnets.0.conv1.weight", pr.B);
        while (o2s_find(base, O2S_VAE, k, NULL) == 0 && ++pr.B < 64);
        if (pr.L == 0) pr.L = 1;
    }
    for (size_t k = 0; k < sizeof RULES / sizeof RULES[0]; k++) {
        long caps[2] = {0, 0};
        const char *tail;
        if (RULES[k].r != p->r || !(tail = match_pattern(rest, RULES[k].pattern, caps))) continue;
        if (!RULES[k].tmpl || (RULES[k].tf != O2S_COPY && RULES[k].tf != O2S_LINEAR)) return -1;
        char tl[O2S_KEY_MAX];
        if (strlen(tail) + 1 > sizeof tl || apply_renames(RULES[k].rn, strcpy(tl, tail), sizeof tl) < 0 ||
            expand(RULES[k].tmpl, caps, &pr, 'q', out, cap) < 0 || strlen(out) + strlen(tl) + 1 > cap)
            return -1;
        strcat(out, tl);
        *c = p->c;
        return 0;
    }
    return -1;
}

int o2s_flow_canonical(int sd3, const char *key, char keys[4][O2S_KEY_MAX], int *nparts, enum o2s_transform *tf)
{
    const enum rules rs = sd3 ? RS_SD3 : RS_FLUX;
    for (size_t k = 0; k < sizeof RULES / sizeof RULES[0]; k++) {
        long caps[2] = {0, 0};
        const char *tail;
        if (RULES[k].r != rs || !(tail = match_pattern(key, RULES[k].pattern, caps))) continue;
        if (!RULES[k].tmpl || RULES[k].tf == O2S_SWAP2 || RULES[k].tf == O2S_SWAP2_LAST) return -1;
        const int parts = RULES[k].tf == O2S_SPLIT3 ? 3 : RULES[k].tf == O2S_SPLIT_QKVM ? 4 : 1;
        const struct params pr = {1, 1, 0};
        for (int part = 0; part < parts; part++) {
            char tm[O2S_KEY_MAX];
            if (alternative(RULES[k].tmpl, part, tm, sizeof tm) < 0 ||
                expand(tm, caps, &pr, "qkv"[part % 3], keys[part], O2S_KEY_MAX) < 0 ||
                strlen(keys[part]) + strlen(tail) + 1 > O2S_KEY_MAX)
                return -1;
            strcat(keys[part], tail);
        }
        *nparts = parts;
        *tf = RULES[k].tf;
        return 0;
    }
    return -1;
}
