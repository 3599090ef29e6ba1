/* arch_match.c — which installed architecture a checkpoint is: its canonical keys and dims against
 * the `keys` table (component -> canonical key -> shape) of every DIR/<arch>/arch.json
 * (models/make_arch.py writes them; docs/engine.md).
 * Rule: an architecture matches when, for every component it lists, the checkpoint has exactly
 * its keys (none missing, none extra) with equal dims, and the checkpoint has no component it
 * does not list, except the components arch.json's "optional_components" names, which may be absent
 * as a whole (SD 3's text_encoder_3). Exactly-equal key sets keep a deeper model from matching a shallower one whose
 * keys are a subset. When none matches, the error names the closest architecture (fewest
 * components on one side only, then most keys equal, fewest differences) and its first few
 * differences with the dims expected and found.
 * Assumes: POSIX opendir/readdir (the store maps files with mmap already).
 */
#include "store_internal.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LISTED 4

/* Reads a whole file (NUL-terminated) or returns NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
            } else {
                buf[n] = 0;
            }
        }
    }
    fclose(f);
    return buf;
}

static void dims_str(char *b, size_t cap, const int64_t *d, int rank)
{
    size_t o = (size_t)snprintf(b, cap, "[");
    for (int i = 0; i < rank && o < cap; i++)
        o += (size_t)snprintf(b + o, cap - o, "%s%lld", i ? "," : "", (long long)d[i]);
    if (o < cap) snprintf(b + o, cap - o, "]");
}

/* Score of one arch.json against s: matched keys, differences, components present on one side only
 * (*comps: an SD 3 architecture is no close match for an SD 1.x file whatever keys their VAEs
 * share), and the first few differences described into diff. Returns -1 when the file is not a
 * usable arch.json (message in err). */
static int score(const struct o2s_store *s, const cJSON *keys, const cJSON *optional, size_t *matched, size_t *differ,
                 size_t *comps, char *diff, size_t cap, const char *path, char *err, size_t errcap)
{
    int listed[O2S_NUM_COMPONENTS] = {0};
    size_t nd = 0, o = 0;
    *matched = *differ = *comps = 0;
    diff[0] = 0;
#define NOTE(...)                                                                       \
    do {                                                                                \
        if (nd++ < MAX_LISTED && o < cap) o += (size_t)snprintf(diff + o, cap - o, __VA_ARGS__); \
    } while (0)
    for (const cJSON *comp = keys->child; comp; comp = comp->next) {
        int c = o2s_component_from_name(comp->string);
        if (c < 0 || !cJSON_IsObject(comp))
            return o2s_fail(err, errcap, "%s: keys.%s: not a component object", path, comp->string);
        listed[c] = 1;
        if (!o2s_count(s, (enum o2s_component)c)) {
            int opt = 0; /* arch.json "optional_components": may be left out whole (SD 3's T5) */
            for (const cJSON *e = optional ? optional->child : NULL; e; e = e->next)
                opt |= cJSON_IsString(e) && !strcmp(e->valuestring, comp->string);
            if (opt) continue;
            (*comps)++;
        }
        for (const cJSON *k = comp->child; k; k = k->next) {
            int64_t want[O2S_MAX_RANK];
            int rank = cJSON_GetArraySize(k);
            if (!cJSON_IsArray(k) || rank > O2S_MAX_RANK)
                return o2s_fail(err, errcap, "%s: keys.%s.%s: not a shape", path, comp->string, k->string);
            int i = 0;
            for (const cJSON *d = k->child; d; d = d->next, i++) {
                if (!cJSON_IsNumber(d))
                    return o2s_fail(err, errcap, "%s: keys.%s.%s: not a shape", path, comp->string, k->string);
                want[i] = (int64_t)d->valuedouble;
            }
            struct o2s_view v;
            char ws[128], gs[128];
            dims_str(ws, sizeof ws, want, rank);
            if (o2s_find(s, (enum o2s_component)c, k->string, &v) != 0) {
                NOTE("\n  %s %s: missing (expected %s)", comp->string, k->string, ws);
                (*differ)++;
            } else if (v.rank != rank || memcmp(v.dims, want, (size_t)rank * sizeof *want)) {
                dims_str(gs, sizeof gs, v.dims, v.rank);
                NOTE("\n  %s %s: dims %s, expected %s", comp->string, k->string, gs, ws);
                (*differ)++;
            } else {
                (*matched)++;
            }
        }
        size_t have = o2s_count(s, (enum o2s_component)c);
        if (have) { /* keys of the checkpoint the arch does not list */
            size_t extra = 0;
            for (size_t i = 0; i < have; i++) {
                struct o2s_view v;
                if (o2s_get(s, (enum o2s_component)c, i, &v) == 0 && !cJSON_GetObjectItemCaseSensitive(comp, v.key)) {
                    if (!extra) NOTE("\n  %s %s: in the checkpoint, not in the architecture", comp->string, v.key);
                    extra++;
                }
            }
            *differ += extra;
        }
    }
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++)
        if (!listed[c] && o2s_count(s, (enum o2s_component)c)) {
            NOTE("\n  %s: %zu keys in the checkpoint, a component the architecture does not have",
                 o2s_component_name((enum o2s_component)c), o2s_count(s, (enum o2s_component)c));
            *differ += o2s_count(s, (enum o2s_component)c);
            (*comps)++;
        }
    if (nd > MAX_LISTED && o < cap) snprintf(diff + o, cap - o, "\n  ... (%zu differences in all)", *differ);
#undef NOTE
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int o2s_match_arch_dir(const struct o2s_store *s, const char *dir, struct o2s_arch_match *m, char *err,
                       size_t errcap)
{
    memset(m, 0, sizeof *m);
    const char *lora = o2s_is_lora(s);
    if (lora) {
        struct o2s_info in;
        o2s_info(s, &in);
        return o2s_fail(err, errcap, "%s is a LoRA (%s naming), not a checkpoint: use --lora %s, or <lora:NAME:W> "
                        "in the prompt (NAME: its file name without .safetensors, found in --lora-dir)", in.path,
                        lora, in.path);
    }
    DIR *d = opendir(dir);
    if (!d) return o2s_fail(err, errcap, "architecture folder %s: cannot be read", dir);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char **nn = realloc(names, (n + 1) * sizeof *names);
        if (!nn || !(nn[n] = strdup(e->d_name))) {
            names = nn ? nn : names;
            break;
        }
        names = nn;
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str); /* deterministic order */
    struct o2s_info info;
    o2s_info(s, &info);
    char best_diff[2048] = "", diff[2048], path[PATH_MAX], list[512] = "";
    size_t best_m = 0, best_d = (size_t)-1, best_c = (size_t)-1, lo = 0;
    int found = 0, bad = 0, narch = 0;
    char best[256] = "";
    for (size_t i = 0; i < n && !bad; i++) {
        snprintf(path, sizeof path, "%s/%s/arch.json", dir, names[i]);
        char *text = slurp(path);
        if (!text) continue; /* not an architecture folder */
        cJSON *j = cJSON_Parse(text);
        free(text);
        const cJSON *keys = j ? cJSON_GetObjectItemCaseSensitive(j, "keys") : NULL;
        if (!cJSON_IsObject(keys)) {
            o2s_fail(err, errcap, "%s: not an arch.json (no \"keys\" object)", path);
            bad = 1;
        } else {
            narch++;
            if (lo < sizeof list) lo += (size_t)snprintf(list + lo, sizeof list - lo, "%s%s", lo ? ", " : "", names[i]);
            size_t mt, df, cm;
            if (score(s, keys, cJSON_GetObjectItemCaseSensitive(j, "optional_components"), &mt, &df, &cm, diff,
                      sizeof diff, path, err, errcap))
                bad = 1;
            else if (df == 0 && mt > 0) {
                if (found)
                    bad = o2s_fail(err, errcap, "%s: matches both architectures %s and %s of %s", info.path,
                                   m->name, names[i], dir) != 0;
                snprintf(m->name, sizeof m->name, "%s", names[i]);
                snprintf(m->dir, sizeof m->dir, "%s/%s", dir, names[i]);
                m->keys = mt;
                found = 1;
            } else if (mt && (cm < best_c || (cm == best_c && (mt > best_m || (mt == best_m && df < best_d))))) {
                best_m = mt; /* closest: the same components first, then the most keys equal, the fewest differences */
                best_d = df;
                best_c = cm;
                snprintf(best, sizeof best, "%s", names[i]);
                snprintf(best_diff, sizeof best_diff, "%s", diff);
            }
        }
        cJSON_Delete(j);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    if (bad) return -1;
    if (found) return 0;
    if (!narch) return o2s_fail(err, errcap, "%s: no architecture installed in %s (no */arch.json)", info.path, dir);
    if (!best[0])
        return o2s_fail(err, errcap, "%s: matches none of the architectures in %s (%s): no key in common",
                        info.path, dir, list);
    return o2s_fail(err, errcap,
                    "%s: matches none of the architectures in %s (%s); closest %s (%zu keys equal, %zu "
                    "differ):%s",
                    info.path, dir, list, best, best_m, best_d, best_diff);
}
