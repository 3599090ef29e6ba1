/* sd_lora_tags.c — A1111's extra-network prompt syntax for LoRAs in `onnx2cl-sd -m` (sd_engine.h,
 * sde_lora_tags; docs/engine.md, "LoRA from the prompt").
 *
 * The syntax is A1111's modules/extra_networks.py + extensions-builtin/Lora: a tag is `<TYPE:ARGS>`
 * (TYPE one or more word characters, ARGS one or more characters other than '>'), removed from the
 * prompt text (replaced by nothing); ARGS split at ':' into items; an item with exactly one '='
 * is named (KEY=VALUE), the others positional. For TYPE "lora": NAME = positional 1, the text
 * encoder's weight = positional 2 or te=, default 1; the UNet's = positional 3 or unet=, default
 * the text encoder's; positional 4 / dyn= (DyLoRA rows) is refused. Each tag applies separately
 * (the same NAME twice merges twice, as A1111 appends both), after the --lora flags. Only the
 * positive prompt is parsed, as in A1111 (a tag in the negative prompt stays text; a note says
 * so). Other TYPEs (hypernet, lyco, ...) are removed with a note, as A1111 skips unknown ones.
 * NAME is a file stem: DIR/NAME.safetensors or DIR/a/b/NAME.safetensors, searched recursively (symbolic links followed,
 * 16 levels), as A1111 lists its Lora folder; two files of that stem are refused naming both.
 *
 * POSIX (opendir/readdir/stat), like the rest of the engine front.
 */
#define _POSIX_C_SOURCE 200809L
#include "sd_engine.h"
#include "platform.h" /* O2R_PRINTF */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_ITEMS 16
#define MAX_DEPTH 16
#define MAX_FOUND 4

static int fail(char *err, size_t cap, int rc, const char *f, ...) O2R_PRINTF(4, 5);
static int fail(char *err, size_t cap, int rc, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(err, cap, f, ap);
    va_end(ap);
    return rc;
}

/* Python's \w for a byte of UTF-8 text: ASCII letters, digits, '_', and any non-ASCII byte. */
static int word_char(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* The tag starting at s[0] == '<' (A1111's <(\w+):([^>]+)>): its length, or 0 when none starts here.
 * *type and *args point into s. */
static size_t tag_at(const char *s, const char **type, size_t *type_len, const char **args, size_t *args_len)
{
    if (s[0] != '<') return 0;
    size_t i = 1;
    while (s[i] && word_char((unsigned char)s[i])) i++;
    if (i == 1 || s[i] != ':') return 0;
    size_t a = i + 1, k = a;
    while (s[k] && s[k] != '>') k++;
    if (s[k] != '>' || k == a) return 0;
    *type = s + 1;
    *type_len = i - 1;
    *args = s + a;
    *args_len = k - a;
    return k + 1;
}

/* Python's float() of a tag item: surrounding blanks allowed, finite. */
static int parse_weight(const char *v, double *out)
{
    char *e;
    errno = 0;
    double d = strtod(v, &e);
    if (e == v || errno == ERANGE || !isfinite(d)) return -1;
    while (isspace((unsigned char)*e)) e++;
    if (*e) return -1;
    *out = d;
    return 0;
}

/* The shortest %g text of v that reads back as v (0.8, not 0.80000000000000004). */
static const char *shortest(double v, char buf[32])
{
    buf[0] = 0;
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, 32, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

/* Recursive search of DIR for files named stem + ".safetensors" (and pickle files of that stem, to
 * name them when there is no safetensors one). */
struct search {
    const char *stem;
    char found[MAX_FOUND][PATH_MAX];
    int n;
    char pickle[PATH_MAX];
};

static void search_dir(struct search *s, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return;
    size_t sl = strlen(s->stem);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[PATH_MAX];
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p) continue;
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth < MAX_DEPTH) search_dir(s, p, depth + 1);
            continue;
        }
        if (!S_ISREG(st.st_mode) || strncmp(e->d_name, s->stem, sl) != 0 || e->d_name[sl] != '.') continue;
        const char *ext = e->d_name + sl;
        if (!strcmp(ext, ".safetensors")) {
            if (s->n < MAX_FOUND) snprintf(s->found[s->n], PATH_MAX, "%s", p);
            s->n++;
        } else if (!strcmp(ext, ".ckpt") || !strcmp(ext, ".pt") || !strcmp(ext, ".pth") || !strcmp(ext, ".bin")) {
            snprintf(s->pickle, sizeof s->pickle, "%s", p);
        }
    }
    closedir(d);
}

int sde_lora_find(const char *dir, const char *name, char *path, size_t cap, char *err, size_t errcap)
{
    if (!*name || strchr(name, '/') || strchr(name, '\\') || !strcmp(name, ".") || !strcmp(name, ".."))
        return fail(err, errcap, -2, "LoRA name '%s' is not a file name (no '/', '\\', '.' or '..': it is "
                    "looked up under the LoRA folder by file stem)", name);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(err, errcap, -1, "LoRA folder %s: %s", dir, errno == ENOENT ? "no such folder" : "not a folder");
    struct search *s = calloc(1, sizeof *s);
    if (!s) return fail(err, errcap, -1, "out of memory");
    s->stem = name;
    search_dir(s, dir, 0);
    int rc = 0;
    if (s->n == 1) {
        snprintf(path, cap, "%s", s->found[0]);
    } else if (s->n > 1) {
        rc = fail(err, errcap, -1, "LoRA '%s' is ambiguous in %s: %d files named %s.safetensors (%s and %s%s); "
                  "rename one or give --lora FILE", name, dir, s->n, name, s->found[0], s->found[1],
                  s->n > 2 ? ", ..." : "");
    } else if (s->pickle[0]) {
        rc = fail(err, errcap, -1, "LoRA '%s': only %s in %s, a pickle file (refused: never unpickled); convert "
                  "it to %s.safetensors", name, s->pickle, dir, name);
    } else {
        rc = fail(err, errcap, -1, "LoRA '%s': no %s.safetensors in %s (nor in its subfolders)", name, name, dir);
    }
    free(s);
    return rc;
}

/* One <lora:...> tag's arguments (args: the text between the first ':' and '>') → name, te, unet. */
static int lora_args(const char *args, size_t len, char *name, size_t name_cap, double *te, double *unet,
                     const char *where, char *err, size_t errcap)
{
    char buf[1024];
    if (len >= sizeof buf) return fail(err, errcap, -2, "%s: too long", where);
    memcpy(buf, args, len);
    buf[len] = 0;
    const char *pos[MAX_ITEMS], *te_named = NULL, *unet_named = NULL, *dyn = NULL;
    int np = 0;
    for (char *it = buf, *next; it; it = next) {
        next = strchr(it, ':');
        if (next) *next++ = 0;
        char *eq = strchr(it, '=');
        if (eq && !strchr(eq + 1, '=')) { /* KEY=VALUE (Python's item.split('=', 2) of length 2) */
            *eq = 0;
            if (!strcmp(it, "te")) te_named = eq + 1;
            else if (!strcmp(it, "unet")) unet_named = eq + 1;
            else if (!strcmp(it, "dyn")) dyn = eq + 1;
            else fprintf(stderr, "onnx2cl-sd: note: %s: '%s=' is not a LoRA argument (te=, unet=); ignored\n",
                         where, it);
            continue;
        }
        if (np == MAX_ITEMS) return fail(err, errcap, -2, "%s: more than %d arguments", where, MAX_ITEMS);
        pos[np++] = it;
    }
    if (np == 0 || !*pos[0]) return fail(err, errcap, -2, "%s: no LoRA name (write <lora:NAME:WEIGHT>)", where);
    if (np > 3 || dyn)
        return fail(err, errcap, -2, "%s: a DyLoRA dimension (4th argument or dyn=) is not supported", where);
    snprintf(name, name_cap, "%s", pos[0]);
    *te = 1.0;
    const char *v = np > 1 ? pos[1] : NULL;
    if (te_named) v = te_named;
    if (v && parse_weight(v, te))
        return fail(err, errcap, -2, "%s: weight '%s' is not a number (write <lora:NAME:0.8>, or "
                    "<lora:NAME:TE:UNET>)", where, v);
    *unet = *te;
    v = np > 2 ? pos[2] : NULL;
    if (unet_named) v = unet_named;
    if (v && parse_weight(v, unet))
        return fail(err, errcap, -2, "%s: UNet weight '%s' is not a number (write <lora:NAME:TE:UNET>)", where, v);
    return 0;
}

int sde_lora_tags(struct sde_options *o, const char *lora_dir, const char **prompt, const char *negative,
                  char *err, size_t errcap)
{
    const char *s = *prompt, *type, *args;
    size_t tl, al, n = strlen(s), o_len = 0;
    if (negative)
        for (const char *c = negative; (c = strchr(c, '<')); c++)
            if (tag_at(c, &type, &tl, &args, &al) && tl == 4 && !strncmp(type, "lora", 4)) {
                fprintf(stderr, "onnx2cl-sd: note: --negative-prompt: %.*s stays text (A1111 reads LoRA tags in "
                        "the prompt only)\n", (int)(tl + al + 3), c);
                break;
            }
    char *clean = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t len = s[i] == '<' ? tag_at(s + i, &type, &tl, &args, &al) : 0;
        if (!len && strncmp(s + i, "<lora:", 6) == 0) { /* A1111 would leave it as text: a typo, surely */
            size_t chars = 1;
            for (size_t k = 0; k < i; k++) chars += ((unsigned char)s[k] & 0xc0) != 0x80;
            int closed = strchr(s + i, '>') != NULL;
            free(clean);
            return fail(err, errcap, -2, "--prompt: %.40s%s (character %zu): %s (write <lora:NAME:WEIGHT>)", s + i,
                        strlen(s + i) > 40 ? "..." : "", chars, closed ? "no LoRA name" : "'<lora:' without its closing '>'");
        }
        if (!len) {
            if (clean) clean[o_len++] = s[i];
            continue;
        }
        if (!clean) {
            if (!(clean = malloc(n + 1))) return fail(err, errcap, -1, "out of memory");
            memcpy(clean, s, i);
            o_len = i;
        }
        char where[160];
        size_t chars = 1; /* UTF-8 characters before the tag, + 1 */
        for (size_t k = 0; k < i; k++) chars += ((unsigned char)s[k] & 0xc0) != 0x80;
        snprintf(where, sizeof where, "--prompt: %.*s (character %zu)", len < 100 ? (int)len : 100, s + i, chars);
        i += len - 1;
        if (tl != 4 || strncmp(type, "lora", 4)) {
            fprintf(stderr, "onnx2cl-sd: note: %s: only <lora:...> tags are supported; removed from the prompt\n",
                    where);
            continue;
        }
        char name[256], path[PATH_MAX];
        double te = 1.0, unet = 1.0; /* set by lora_args when it returns 0 */
        int rc = lora_args(args, al, name, sizeof name, &te, &unet, where, err, errcap);
        if (rc) goto bad;
        if (!o->ckpt) {
            rc = fail(err, errcap, -2, "%s: LoRA tags need -m CHECKPOINT (compiled --models have their weights "
                      "merged already)", where);
            goto bad;
        }
        if (!lora_dir || !*lora_dir) lora_dir = getenv("ONNX2CL_LORA_DIR");
        if (!lora_dir || !*lora_dir) {
            rc = fail(err, errcap, -2, "%s: no LoRA folder: give --lora-dir DIR or set ONNX2CL_LORA_DIR", where);
            goto bad;
        }
        char e2[PATH_MAX * 3];
        if ((rc = sde_lora_find(lora_dir, name, path, sizeof path, e2, sizeof e2))) {
            fail(err, errcap, rc, "%s: %s", where, e2);
            goto bad;
        }
        if (o->n_loras == SDE_MAX_LORAS) {
            rc = fail(err, errcap, -2, "%s: more than %d LoRAs (flags and tags)", where, SDE_MAX_LORAS);
            goto bad;
        }
        /* "PATH:TE" as --lora gives it; the UNet's when it differs */
        size_t pl = strlen(path) + 32;
        char *arg = malloc(pl), *u = NULL, num[32];
        if (!arg) return free(clean), fail(err, errcap, -1, "out of memory");
        snprintf(arg, pl, "%s:%s", path, shortest(te, num));
        if (unet != te && (u = malloc(32))) snprintf(u, 32, "%s", shortest(unet, num));
        o->lora_unet[o->n_loras] = u;
        o->loras[o->n_loras++] = arg; /* kept for the run (the process owns them) */
        continue;
    bad:
        free(clean);
        return rc;
    }
    if (clean) {
        clean[o_len] = 0;
        *prompt = clean;
    }
    return 0;
}
