/* test_memplan.c — host-only tests of the device-memory planner (runtime/memplan.c).
 *
 * What: o2r_parse_bytes on good and bad byte counts; o2r_mem_plan_build on synthetic descriptors:
 * (1) weights cut into runs of whole tensors, each chunk <= limit, uploaded ranges = tensor
 * offsets; (2) an arena whose compiled plan can be cut at cluster boundaries keeps its offsets;
 * (3) an arena whose compiled plan chains overlapping buffers across the limit is placed again:
 * every chunk <= limit, offsets aligned, and no two buffers whose lifetimes (recomputed here from
 * the launch arguments, independently of the planner) overlap share a byte; (4) random
 * descriptors (lifetimes, sizes, a valid compiled plan made here) checked the same way under
 * several limits; (5) a tensor over the limit is refused naming it; o2r_desc_memory figures;
 * (6) offset views (o2r_buffer.view_of) move with their parent, cut or placed again, and their
 * lifetimes count for it.
 * Assumes: nothing but the runtime library (no OpenCL device is touched).
 */
#include <stdlib.h>
#include <string.h>

#include "onnx2cl_rt.h"
#include "rt_internal.h"
#include "rt_test.h"

#define MAXB 64

/* A synthetic model: n buffers, launch l names the buffers whose lifetime covers l. */
struct synth {
    struct o2r_buffer bufs[MAXB];
    int lo[MAXB], hi[MAXB]; /* lifetime in launches (inclusive) */
    struct o2r_arg args[MAXB * 64];
    struct o2r_launch launches[64];
    struct o2r_model_desc d;
};

static void synth_finish(struct synth *s, uint32_t nb, uint32_t nl)
{
    uint32_t na = 0;
    for (uint32_t l = 0; l < nl; l++) {
        s->launches[l] = (struct o2r_launch){"k", 1, {1, 1, 1}, {0, 0, 0}, na, 0, "n", "Op", 0, NULL};
        for (uint32_t b = 0; b < nb; b++)
            if (s->lo[b] <= (int)l && (int)l <= s->hi[b]) {
                s->args[na++] = (struct o2r_arg){O2R_ARG_BUF, {.buf = (int32_t)b}};
                s->launches[l].nargs++;
            }
    }
    memset(&s->d, 0, sizeof s->d);
    s->d.abi_version = O2R_ABI_VERSION;
    s->d.name = "synth";
    s->d.n_buffers = nb;
    s->d.buffers = s->bufs;
    s->d.n_args = na;
    s->d.args = s->args;
    s->d.n_launches = nl;
    s->d.launches = s->launches;
    for (uint32_t b = 0; b < nb; b++) {
        uint64_t end = s->bufs[b].offset + s->bufs[b].size;
        uint64_t *r = s->bufs[b].space ? &s->d.weights_bytes : &s->d.arena_bytes;
        *r = end > *r ? end : *r;
    }
}

/* Checks a plan's invariants against the synthetic lifetimes; returns the failures. */
static int check_plan(const struct synth *s, const struct o2r_mem_plan *p, uint64_t limit,
                      const char *what)
{
    int bad = 0;
    uint32_t nc = p->n_weight_chunks + p->n_arena_chunks;
    for (uint32_t c = 0; c < nc; c++)
        if (p->chunk_bytes[c] > limit || p->chunk_bytes[c] == 0) {
            fprintf(stderr, "%s: chunk %u has %llu bytes (limit %llu)\n", what, c,
                    (unsigned long long)p->chunk_bytes[c], (unsigned long long)limit);
            bad++;
        }
    for (uint32_t i = 0; i < s->d.n_buffers; i++) {
        uint32_t c = p->buf_chunk[i];
        if (c == UINT32_MAX && s->lo[i] == -9)
            continue; /* skipped on purpose (test_classes checks which) */
        int wchunk = c < p->n_weight_chunks;
        if (c >= nc || wchunk != (s->bufs[i].space == O2R_SPACE_WEIGHTS) ||
            p->buf_off[i] % O2R_ALIGN || p->buf_off[i] + s->bufs[i].size > p->chunk_bytes[c]) {
            fprintf(stderr, "%s: buffer %u at chunk %u offset %llu is misplaced\n", what, i, c,
                    (unsigned long long)p->buf_off[i]);
            bad++;
            continue;
        }
        if (wchunk && p->chunk_src[c] + p->buf_off[i] != s->bufs[i].offset) {
            fprintf(stderr, "%s: weight %u uploads from %llu, lives at %llu\n", what, i,
                    (unsigned long long)(p->chunk_src[c] + p->buf_off[i]),
                    (unsigned long long)s->bufs[i].offset);
            bad++;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (p->buf_chunk[j] != c || s->hi[i] < s->lo[j] || s->hi[j] < s->lo[i] ||
                s->bufs[i].view_of == j + 1 || s->bufs[j].view_of == i + 1 ||
                (s->bufs[i].view_of && s->bufs[i].view_of == s->bufs[j].view_of))
                continue; /* (a view and its parent share bytes by design) */
            uint64_t a0 = p->buf_off[i], a1 = a0 + s->bufs[i].size;
            uint64_t b0 = p->buf_off[j], b1 = b0 + s->bufs[j].size;
            if (a0 < b1 && b0 < a1) {
                fprintf(stderr, "%s: live buffers %u and %u share bytes in chunk %u\n", what, i,
                        j, c);
                bad++;
            }
        }
    }
    return bad;
}

static void test_parse(void)
{
    static const struct { const char *s; uint64_t v; } good[] = {
        {"1", 1}, {"4096", 4096}, {"256K", 262144}, {"256k", 262144}, {"1M", 1048576},
        {"64m", 67108864}, {"2G", 2147483648ull}, {"17179869183G", 17179869183ull << 30},
        {"18446744073709551615", UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 0;
        CHECK(o2r_parse_bytes(good[i].s, &v) == O2R_OK && v == good[i].v, "parse '%s' -> %llu",
              good[i].s, (unsigned long long)v);
    }
    static const char *bad[] = {"", "0", "0K", "K", "12Q", "1.5G", "-1", "+1", "4KB", "4 K",
                                " 4K", "4K ", "0x10", "1e6", "18446744073709551616",
                                "17179869184G", "4KK"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        CHECK(o2r_parse_bytes(bad[i], &v) == O2R_ERR_ARG && v == 7, "'%s' accepted", bad[i]);
    }
    CHECK(o2r_parse_bytes(NULL, NULL) == O2R_ERR_ARG, "NULL accepted");
}

static void test_fixed(void)
{
    static struct synth s;
    struct o2r_mem_plan p;
    char err[512];
    /* weights: 5 tensors of 1000 bytes at 512-aligned offsets; arena: a chain A-B-C where each
     * overlaps the next in space but not in time (compiled reuse), plus D live throughout */
    memset(&s, 0, sizeof s);
    for (int i = 0; i < 5; i++)
        s.bufs[i] = (struct o2r_buffer){(uint64_t)i * 1024, 1000, O2R_SPACE_WEIGHTS, "w", 0};
    s.bufs[5] = (struct o2r_buffer){0, 3072, O2R_SPACE_ARENA, "A", 0};
    s.bufs[6] = (struct o2r_buffer){2048, 3072, O2R_SPACE_ARENA, "B", 0};
    s.bufs[7] = (struct o2r_buffer){4096, 3072, O2R_SPACE_ARENA, "C", 0};
    s.bufs[8] = (struct o2r_buffer){7168, 1024, O2R_SPACE_ARENA, "D", 0};
    int lo[] = {0, 0, 1, 2, 3, 0, 2, 4, 0}, hi[] = {0, 1, 2, 3, 4, 1, 3, 5, 5};
    memcpy(s.lo, lo, sizeof lo);
    memcpy(s.hi, hi, sizeof hi);
    synth_finish(&s, 9, 6);
    /* limit 4096: weights {0..3} (4072 bytes) and {4}; the arena chain must be placed again */
    CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_ALL, 4096, "test", &p, err, sizeof err) == O2R_OK, "%s", err);
    CHECK(p.n_weight_chunks == 2 && p.arena_replaced, "4096: %u weight chunks, replaced %d",
          p.n_weight_chunks, p.arena_replaced);
    CHECK(check_plan(&s, &p, 4096, "fixed 4096") == 0, "fixed 4096");
    /* A, B, C never live together: placed again they share one chunk at offset 0 with D */
    CHECK(p.n_arena_chunks == 1 && p.buf_off[5] == 0 && p.buf_off[6] == 0 && p.buf_off[7] == 0,
          "re-placement reuses bytes: %u chunks, offsets %llu %llu %llu", p.n_arena_chunks,
          (unsigned long long)p.buf_off[5], (unsigned long long)p.buf_off[6],
          (unsigned long long)p.buf_off[7]);
    o2r_mem_plan_free(&p);
    /* limit 8192: the compiled plan cuts (one cluster of 7168 + D): kept as compiled */
    CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_ALL, 8192, "test", &p, err, sizeof err) == O2R_OK, "%s", err);
    CHECK(!p.arena_replaced && p.n_arena_chunks == 1 && p.n_weight_chunks == 1 &&
              p.buf_off[6] == 2048 && p.buf_off[8] == 7168 && p.arena_bytes == 8192 &&
              p.weights_bytes == 4096 + 1000,
          "8192: replaced %d, %u/%u chunks, arena %llu", p.arena_replaced, p.n_weight_chunks,
          p.n_arena_chunks, (unsigned long long)p.arena_bytes);
    CHECK(check_plan(&s, &p, 8192, "fixed 8192") == 0, "fixed 8192");
    o2r_mem_plan_free(&p);
    /* limit 3072: weights {0,1,2} (3048 bytes) and {3,4}; A, B, C exactly at the limit */
    CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_ALL, 3072, "test", &p, err, sizeof err) == O2R_OK, "%s", err);
    CHECK(p.n_weight_chunks == 2 && check_plan(&s, &p, 3072, "fixed 3072") == 0, "fixed 3072");
    o2r_mem_plan_free(&p);
    o2r_status st = o2r_mem_plan_build(&s.d, O2R_VARIANT_ALL, 3000, "$ONNX2CL_MAX_ALLOC", &p, err, sizeof err);
    CHECK(st == O2R_ERR_NODEVICE && strstr(err, "activation tensor 'A' is 3072 bytes") &&
              strstr(err, "3000-byte limit") && strstr(err, "$ONNX2CL_MAX_ALLOC") &&
              p.chunk_bytes == NULL,
          "too large: %d '%s'", st, err);
    s.bufs[5].name = NULL;
    st = o2r_mem_plan_build(&s.d, O2R_VARIANT_ALL, 3000, "x", &p, err, sizeof err);
    CHECK(st == O2R_ERR_NODEVICE && strstr(err, "tensor 'buffer 5'"), "unnamed: '%s'", err);
    s.bufs[5].name = "A";
    struct o2r_memory mem;
    o2r_desc_memory(&s.d, &mem);
    CHECK(mem.weights_bytes == 5096 && mem.arena_bytes == 8192 && mem.peak_bytes == 13288 &&
              mem.largest_weight == 0 && mem.largest_weight_bytes == 1000 &&
              mem.largest_arena == 5 && mem.largest_arena_bytes == 3072,
          "desc memory: %llu %llu %llu %d %d", (unsigned long long)mem.weights_bytes,
          (unsigned long long)mem.arena_bytes, (unsigned long long)mem.peak_bytes,
          mem.largest_weight, mem.largest_arena);
}

/* Random arenas: a valid compiled plan (first fit over lifetimes) made here, then split. */
static void test_random(void)
{
    static struct synth s;
    char err[512];
    unsigned seed = 12345;
    int replaced = 0, cut = 0, split = 0;
    for (int iter = 0; iter < 300; iter++) {
        memset(&s, 0, sizeof s);
        uint32_t nb = 2 + (seed = seed * 1103515245u + 12345u) % (MAXB - 2), nl = 12;
        for (uint32_t b = 0; b < nb; b++) {
            seed = seed * 1103515245u + 12345u;
            int a = (int)((seed >> 8) % nl), len = (int)((seed >> 16) % 4);
            s.lo[b] = a;
            s.hi[b] = a + len < (int)nl ? a + len : (int)nl - 1;
            s.bufs[b].size = 1 + (seed >> 4) % 5000;
            s.bufs[b].space = O2R_SPACE_ARENA;
            s.bufs[b].name = "r";
            /* compiled plan: lowest aligned offset free of lifetime-overlapping buffers */
            uint64_t off = 0;
            for (int moved = 1; moved;) {
                moved = 0;
                for (uint32_t j = 0; j < b; j++) {
                    uint64_t j0 = s.bufs[j].offset, j1 = j0 + (s.bufs[j].size + 511) / 512 * 512;
                    if (s.hi[j] >= s.lo[b] && s.hi[b] >= s.lo[j] && off < j1 &&
                        j0 < off + s.bufs[b].size) {
                        off = j1;
                        moved = 1;
                    }
                }
            }
            s.bufs[b].offset = off;
        }
        synth_finish(&s, nb, nl);
        static const uint64_t limits[] = {5000, 8192, 20000, 1u << 20};
        for (int k = 0; k < 4; k++) {
            struct o2r_mem_plan p;
            char what[64];
            snprintf(what, sizeof what, "random %d limit %llu", iter,
                     (unsigned long long)limits[k]);
            o2r_status st = o2r_mem_plan_build(&s.d, O2R_VARIANT_ALL, limits[k], "t", &p, err, sizeof err);
            CHECK(st == O2R_OK, "%s: %s", what, err);
            if (st == O2R_OK) {
                CHECK(check_plan(&s, &p, limits[k], what) == 0, "%s", what);
                replaced += p.arena_replaced;
                cut += !p.arena_replaced && p.n_arena_chunks > 1;
                split += p.n_arena_chunks > 1;
            }
            o2r_mem_plan_free(&p);
        }
    }
    /* both paths ran: compiled plans cut into several chunks, and plans placed again */
    CHECK(replaced > 50 && cut > 50 && split > 200, "random: %d replaced, %d cut, %d split",
          replaced, cut, split);
    fprintf(stderr, "random: %d placed again, %d cut, %d split of 1200 plans\n", replaced, cut,
            split);
}

/* Kernel classes: launch 0 is cpu-only, launch 1 gpu-only, launch 2 shared. */
static void test_classes(void)
{
    static struct synth s;
    struct o2r_mem_plan p;
    char err[512];
    memset(&s, 0, sizeof s);
    /* weights: c0 (cpu, 1000 B at 0), g0 (gpu, 2 MiB at 1024), c1 (cpu, 1000 B after it) */
    s.bufs[0] = (struct o2r_buffer){0, 1000, O2R_SPACE_WEIGHTS, "c0", 0};
    s.bufs[1] = (struct o2r_buffer){1024, 2u << 20, O2R_SPACE_WEIGHTS, "g0", 0};
    s.bufs[2] = (struct o2r_buffer){1024 + (2u << 20), 1000, O2R_SPACE_WEIGHTS, "c1", 0};
    s.bufs[3] = (struct o2r_buffer){0, 4096, O2R_SPACE_ARENA, "x", 0};    /* shared */
    s.bufs[4] = (struct o2r_buffer){4096, 4096, O2R_SPACE_ARENA, "tg", 0}; /* gpu temp */
    int lo[] = {0, 1, 0, 0, 1}, hi[] = {0, 1, 0, 2, 1};
    memcpy(s.lo, lo, sizeof lo);
    memcpy(s.hi, hi, sizeof hi);
    synth_finish(&s, 5, 3);
    s.launches[0].variants = O2R_VARIANT_CPU;
    s.launches[1].variants = O2R_VARIANT_GPU;
    CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_CPU, 1u << 30, "t", &p, err, sizeof err) == O2R_OK,
          "%s", err);
    CHECK(p.buf_chunk[1] == UINT32_MAX && p.buf_chunk[4] == UINT32_MAX && p.n_unused == 2 &&
              p.unused_bytes == (2u << 20) + 4096,
          "cpu: gpu buffers skipped (%u, %llu bytes)", p.n_unused,
          (unsigned long long)p.unused_bytes);
    /* the 2 MiB gpu weight between c0 and c1 is not uploaded: two chunks of 1000 bytes */
    CHECK(p.n_weight_chunks == 2 && p.weights_bytes == 2000 && p.arena_bytes == 4096,
          "cpu: %u weight chunks, %llu weight bytes, %llu arena bytes", p.n_weight_chunks,
          (unsigned long long)p.weights_bytes, (unsigned long long)p.arena_bytes);
    s.lo[1] = s.hi[1] = s.lo[4] = s.hi[4] = -9; /* check_plan: skipped buffers overlap nothing */
    CHECK(check_plan(&s, &p, 1u << 30, "cpu class") == 0, "cpu class");
    o2r_mem_plan_free(&p);
    CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_GPU, 1u << 30, "t", &p, err, sizeof err) == O2R_OK,
          "%s", err);
    CHECK(p.buf_chunk[0] == UINT32_MAX && p.buf_chunk[2] == UINT32_MAX && p.n_unused == 2 &&
              p.buf_chunk[1] != UINT32_MAX && p.buf_chunk[4] != UINT32_MAX &&
              p.weights_bytes == (2u << 20),
          "gpu: cpu weights skipped (%u)", p.n_unused);
    o2r_mem_plan_free(&p);
    /* a tensor over the limit that the selected class never uses is not an error */
    CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_CPU, 8192, "t", &p, err, sizeof err) == O2R_OK,
          "cpu, 8K: %s", err);
    o2r_mem_plan_free(&p);
    CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_GPU, 8192, "t", &p, err, sizeof err) ==
              O2R_ERR_NODEVICE && strstr(err, "'g0'"), "gpu, 8K: %s", err);
}

/* Offset views: parent P (4096 bytes, read at launches 3..4) holds C0 (written at 0, read at 1)
 * and C1 (written at 1, read at 2) at relative offsets 0 and 2048; R (4096 bytes, live 0..1)
 * and S (4096, live 5) complete a compiled plan whose one cluster exceeds a 4096-byte limit, so
 * the arena is placed again: R must not share bytes with C0 (P's lifetime is 0..4 through its
 * views), and the views stay at their distance from P. */
static void test_views(void)
{
    static struct synth s;
    struct o2r_mem_plan p;
    char err[512];
    memset(&s, 0, sizeof s);
    s.bufs[0] = (struct o2r_buffer){0, 4096, O2R_SPACE_ARENA, "P", 0};
    s.bufs[1] = (struct o2r_buffer){0, 2048, O2R_SPACE_ARENA, "C0", 1};
    s.bufs[2] = (struct o2r_buffer){2048, 2048, O2R_SPACE_ARENA, "C1", 1};
    s.bufs[3] = (struct o2r_buffer){4096, 4096, O2R_SPACE_ARENA, "R", 0};
    s.bufs[4] = (struct o2r_buffer){2048, 4096, O2R_SPACE_ARENA, "S", 0};
    int lo[] = {3, 0, 1, 0, 5}, hi[] = {4, 1, 2, 1, 5};
    memcpy(s.lo, lo, sizeof lo);
    memcpy(s.hi, hi, sizeof hi);
    synth_finish(&s, 5, 6);
    for (int k = 0; k < 2; k++) {
        const uint64_t limit = k ? 8192 : 4096;
        CHECK(o2r_mem_plan_build(&s.d, O2R_VARIANT_ALL, limit, "test", &p, err, sizeof err) == O2R_OK,
              "%s", err);
        CHECK(p.arena_replaced == (k == 0), "limit %llu: replaced %d", (unsigned long long)limit,
              p.arena_replaced);
        CHECK(p.buf_chunk[1] == p.buf_chunk[0] && p.buf_chunk[2] == p.buf_chunk[0] &&
                  p.buf_off[1] == p.buf_off[0] && p.buf_off[2] == p.buf_off[0] + 2048,
              "limit %llu: views at chunk %u/%u offsets %llu/%llu, parent chunk %u offset %llu",
              (unsigned long long)limit, p.buf_chunk[1], p.buf_chunk[2],
              (unsigned long long)p.buf_off[1], (unsigned long long)p.buf_off[2], p.buf_chunk[0],
              (unsigned long long)p.buf_off[0]);
        CHECK(check_plan(&s, &p, limit, k ? "views 8192" : "views 4096") == 0, "views");
        o2r_mem_plan_free(&p);
    }
}

int main(void)
{
    test_parse();
    test_fixed();
    test_random();
    test_classes();
    test_views();
    return rt_test_done("test_memplan");
}
