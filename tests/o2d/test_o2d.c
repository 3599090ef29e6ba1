/* test_o2d.c — checks of the descriptor file (.o2d; runtime/desc_io.c):
 *   test_o2d roundtrip F.o2d [LIB.so NAME]
 *       reads F.o2d and serializes it again: the bytes must equal the file's; with LIB.so (the
 *       same model compiled to C with --no-main, cc -shared), NAME_desc()'s compiled-in
 *       descriptor must serialize to the same bytes: the .o2d holds exactly the generated C's
 *       descriptor.
 *   test_o2d edit IN OUT OP [ARGS]   a damaged copy of IN for the bad-input tests:
 *       truncate N (first N bytes) | flip OFFSET (one byte, checksum left stale) |
 *       set32 OFFSET VALUE (then the size and checksum fixed up, so only the value is wrong)
 *   test_o2d mutate F.o2d N SEED
 *       N random damaged copies (1-8 bytes changed, or cut, or grown; checksum fixed up so the
 *       parser sees them) read with o2r_desc_read: each must be refused or read into a
 *       descriptor whose tables are in range; never a crash (run under ASan in the sanitizer CI).
 *   test_o2d loadtime F.o2d LIB.so NAME WEIGHTS N
 *       load-time comparison (not a test; numbers for the report): N times each, o2r_desc_read
 *       + o2r_model_init vs dlopen + NAME_desc() + o2r_model_init (warm program cache), on the
 *       default OpenCL device; prints the medians of each part.
 * Exit 0 ok, 1 failure (message on stderr).
 */
#include "onnx2cl_rt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static int loadtime(char **argv)
{
    const char *o2d = argv[2], *so = argv[3], *name = argv[4], *w = argv[5];
    int n = atoi(argv[6]);
    if (n < 1 || n > 1000) return 2;
    struct o2r_ctx *ctx;
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "test_o2d: %s\n", o2r_ctx_last_error(NULL));
        return 1;
    }
    double *t[6];
    for (int k = 0; k < 6; k++) t[k] = calloc((size_t)n + 1, sizeof(double));
    char err[1024], sym[300];
    snprintf(sym, sizeof sym, "%s_desc", name);
    for (int i = 0; i <= n; i++) { /* i = 0: warm-up (program cache, page cache) */
        double a = now_ms();
        struct o2r_model_desc *d;
        if (o2r_desc_read(o2d, &d, err, sizeof err) != O2R_OK) {
            fprintf(stderr, "test_o2d: %s\n", err);
            return 1;
        }
        double b = now_ms();
        struct o2r_model *m;
        if (o2r_model_init(ctx, d, w, &m) != O2R_OK) {
            fprintf(stderr, "test_o2d: %s\n", o2r_ctx_last_error(ctx));
            return 1;
        }
        double c = now_ms();
        o2r_model_free(m);
        o2r_desc_free(d);
        double e = now_ms();
        void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        const struct o2r_model_desc *(*fn)(void) = NULL;
        if (dl) *(void **)&fn = dlsym(dl, sym);
        if (!fn) {
            fprintf(stderr, "test_o2d: %s: %s\n", so, dl ? "no _desc symbol" : dlerror());
            return 1;
        }
        const struct o2r_model_desc *sd = fn();
        double f = now_ms();
        if (o2r_model_init(ctx, sd, w, &m) != O2R_OK) {
            fprintf(stderr, "test_o2d: %s\n", o2r_ctx_last_error(ctx));
            return 1;
        }
        double g = now_ms();
        o2r_model_free(m);
        dlclose(dl);
        if (i) {
            t[0][i - 1] = b - a, t[1][i - 1] = c - b, t[2][i - 1] = c - a;
            t[3][i - 1] = f - e, t[4][i - 1] = g - f, t[5][i - 1] = g - e;
        }
    }
    printf("%s: medians of %d: o2r_desc_read %.3f ms + init %.2f ms = %.2f ms; dlopen + _desc "
           "%.3f ms + init %.2f ms = %.2f ms\n", o2d, n, median(t[0], n), median(t[1], n),
           median(t[2], n), median(t[3], n), median(t[4], n), median(t[5], n));
    for (int k = 0; k < 6; k++) free(t[k]);
    o2r_ctx_free(ctx);
    return 0;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *p = malloc(cap);
    size_t k;
    while (p && (k = fread(p + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) p = realloc(p, cap *= 2);
    }
    fclose(f);
    if (!p) exit(1);
    *n = len;
    return p;
}

static void spit(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Sets the header's size field and the trailing checksum for the buffer's length. */
static void fixup(unsigned char *p, size_t n)
{
    if (n < 72) return;
    put64(p + 16, n);
    put64(p + n - 8, o2r_weights_checksum(p, n - 8));
}

static int same_bytes(const unsigned char *a, size_t na, const unsigned char *b, size_t nb,
                      const char *what)
{
    if (na == nb && memcmp(a, b, na) == 0) return 1;
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) i++;
    fprintf(stderr, "test_o2d: %s: %zu vs %zu bytes, first difference at byte %zu\n", what, na,
            nb, i);
    return 0;
}

static int roundtrip(int argc, char **argv)
{
    size_t n;
    unsigned char *file = slurp(argv[2], &n);
    char err[1024];
    struct o2r_model_desc *d;
    if (o2r_desc_read(argv[2], &d, err, sizeof err) != O2R_OK) {
        fprintf(stderr, "test_o2d: %s\n", err);
        return 1;
    }
    unsigned char *again;
    size_t m;
    if (o2r_desc_serialize(d, &again, &m) != O2R_OK) {
        fprintf(stderr, "test_o2d: cannot serialize %s again\n", argv[2]);
        return 1;
    }
    int ok = same_bytes(file, n, again, m, "read + serialize != the file");
    free(again);
    if (argc >= 5) {
        void *dl = dlopen(argv[3], RTLD_LAZY | RTLD_LOCAL) /* only _desc() is called */;
        char sym[300];
        snprintf(sym, sizeof sym, "%s_desc", argv[4]);
        const struct o2r_model_desc *(*fn)(void) = NULL;
        if (dl) *(void **)&fn = dlsym(dl, sym);
        if (!fn) {
            fprintf(stderr, "test_o2d: %s: %s\n", argv[3], dl ? "no _desc symbol" : dlerror());
            return 1;
        }
        if (o2r_desc_serialize(fn(), &again, &m) != O2R_OK) {
            fprintf(stderr, "test_o2d: cannot serialize %s's descriptor\n", argv[3]);
            return 1;
        }
        ok &= same_bytes(file, n, again, m, "the generated C's descriptor != the .o2d");
        free(again);
        if (ok) printf("the generated C's descriptor serializes to the .o2d's %zu bytes\n", n);
    }
    printf("%s: %u buffers, %u args, %u launches, %u sources, %u tunables, %u stored, %u "
           "repacks; %zu bytes\n", argv[2], d->n_buffers, d->n_args, d->n_launches,
           d->n_sources, d->n_tunables, d->n_stored, d->n_repacks, n);
    o2r_desc_free(d);
    free(file);
    return ok ? 0 : 1;
}

static int edit(char **argv, int argc)
{
    size_t n;
    unsigned char *p = slurp(argv[2], &n);
    const char *op = argv[4];
    if (!strcmp(op, "truncate") && argc > 5) {
        size_t k = strtoull(argv[5], NULL, 0);
        spit(argv[3], p, k < n ? k : n);
    } else if (!strcmp(op, "flip") && argc > 5) {
        size_t off = strtoull(argv[5], NULL, 0);
        if (off >= n) return 1;
        p[off] ^= 0x10;
        spit(argv[3], p, n);
    } else if (!strcmp(op, "set32") && argc > 6) {
        size_t off = strtoull(argv[5], NULL, 0);
        uint32_t v = (uint32_t)strtoull(argv[6], NULL, 0);
        if (off + 4 > n) return 1;
        for (int i = 0; i < 4; i++) p[off + i] = (unsigned char)(v >> (8 * i));
        fixup(p, n);
        spit(argv[3], p, n);
    } else {
        fprintf(stderr, "test_o2d edit: unknown operation\n");
        return 1;
    }
    free(p);
    return 0;
}

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static int mutate(char **argv)
{
    size_t n;
    unsigned char *orig = slurp(argv[2], &n);
    long iters = strtol(argv[3], NULL, 0);
    rng_state = strtoull(argv[4], NULL, 0);
    char tmp[] = "/tmp/test_o2d_XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) return 1;
    long refused = 0, read_ok = 0;
    unsigned char *p = malloc(n + 64);
    for (long it = 0; it < iters; it++) {
        size_t m = n;
        memcpy(p, orig, n);
        uint32_t kind = rnd() % 8;
        if (kind == 0) {
            m = 72 + rnd() % (n - 72); /* cut */
        } else if (kind == 1) {
            m = n + 1 + rnd() % 32; /* grown */
            memset(p + n, (int)(rnd() & 0xff), m - n);
        } else {
            int k = 1 + (int)(rnd() % 8);
            for (int j = 0; j < k; j++) {
                /* most damage near the header and the first tables, some anywhere */
                size_t off = rnd() % 4 ? 24 + rnd() % (n < 2048 ? n - 32 : 2048) : rnd() % (n - 8);
                uint32_t how = rnd() % 4;
                p[off] = how == 0 ? 0xff : how == 1 ? 0 : how == 2 ? (unsigned char)(p[off] + 1)
                                                                   : (unsigned char)rnd();
            }
        }
        if (rnd() % 16) fixup(p, m); /* mostly past the checksum, to reach the parser */
        spit(tmp, p, m);
        char err[1024];
        struct o2r_model_desc *d = NULL;
        if (o2r_desc_read(tmp, &d, err, sizeof err) != O2R_OK) {
            if (d || !err[0]) {
                fprintf(stderr, "test_o2d: refused without a message or left a descriptor\n");
                return 1;
            }
            refused++;
            continue;
        }
        read_ok++;
        /* what o2r_main and the hashes read before o2r_model_init: must stay in range */
        struct o2r_memory mem;
        o2r_desc_memory(d, &mem);
        (void)o2r_desc_layout_hash(d);
        (void)o2r_desc_build_hash(d);
        for (uint32_t i = 0; i < d->n_launches; i++) (void)o2r_launch_hash(d, i);
        o2r_desc_free(d);
    }
    remove(tmp);
    free(p);
    free(orig);
    printf("%ld damaged copies: %ld refused with a message, %ld read (in range)\n", iters, refused,
           read_ok);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "roundtrip")) return roundtrip(argc, argv);
    if (argc >= 5 && !strcmp(argv[1], "edit")) return edit(argv, argc);
    if (argc >= 5 && !strcmp(argv[1], "mutate")) return mutate(argv);
    if (argc >= 7 && !strcmp(argv[1], "loadtime")) return loadtime(argv);
    fprintf(stderr, "usage: test_o2d roundtrip F.o2d [LIB.so NAME] | edit IN OUT OP ARGS | "
                    "mutate F.o2d N SEED\n");
    return 2;
}
