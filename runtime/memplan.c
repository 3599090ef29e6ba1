/* memplan.c — splits a model's weights region and activation arena into device buffers no
 * larger than the device's single-allocation limit (host-only planning, no OpenCL calls).
 *
 * What: o2r_parse_bytes (the ONNX2CL_MAX_ALLOC / ONNX2CL_GLOBAL_MEM syntax), o2r_mem_plan_build
 * (which device buffer, "chunk", each desc buffer lives in and at which offset), and
 * o2r_desc_memory (the memory figures of a descriptor, for --help and --info).
 *
 * Why: OpenCL caps one clCreateBuffer at CL_DEVICE_MAX_MEM_ALLOC_SIZE (25% of VRAM on NVIDIA,
 * 4 GB on Intel), far below what an SD UNet's weights (3.4 GB) or a VAE's arena need in one
 * piece. Kernels address each tensor through its own sub-buffer, so a tensor only has to sit
 * whole inside one allocation; different tensors may live in different allocations.
 *
 * Design:
 *   Weights: the desc places every weight tensor at an offset of one contiguous region (the
 *     weights file's payload, then the build's constants, desc.const_data). Chunks are runs of
 *     consecutive tensors in region order, each run as long as it fits the limit (greedy, which
 *     gives the fewest chunks for a fixed order), and never across the end of the file part (so
 *     a chunk is a range of the mmapped file, which can serve as its memory on a CPU device, or
 *     of const_data; model.c).
 *   Arena: the compiled plan reuses bytes between buffers whose lifetimes do not overlap, so
 *     buffers overlap in space and a chunk boundary must not cut any of them. First try: merge
 *     the buffers' byte intervals into clusters (maximal runs of overlapping intervals); every
 *     boundary between clusters is a valid cut, and clusters are packed greedily into chunks of
 *     at most the limit. This keeps the compiled plan (same total bytes) and needs no lifetime
 *     information. When a cluster is larger than the limit (reuse chained buffers across it),
 *     the arena is placed again at init: each buffer's lifetime is taken from the descriptor
 *     itself (first and last launch whose arguments name it; graph inputs live from before
 *     launch 0, outputs until after the last), and buffers are placed by decreasing size at the
 *     lowest offset of the first chunk where no lifetime-overlapping buffer occupies the bytes,
 *     opening a new chunk when none fits. Deriving lifetimes from the launch arguments needs
 *     no descriptor change and is exact at launch granularity; it is never looser than the
 *     compiler's step-granular lifetimes, so every overlap the compiled plan made is still
 *     legal. With kernel variants, the same rule applied to the selected launches only gives
 *     the selected class's lifetimes.
 *   Offset views (o2r_buffer.view_of: a buffer that is a byte range of its parent) move with
 *   their parent: a cut never falls inside the parent's range, so the first try keeps them in
 *   its chunk as compiled; the second places parents only (a child's launches count for its
 *   parent's lifetime, and a used child makes its parent used) and then puts each child at
 *   the parent's chunk offset plus its distance from the parent in the compiled layout.
 *   Every chunk starts at a buffer offset (a multiple of O2R_ALIGN), so every sub-buffer
 *   offset stays a multiple of O2R_ALIGN.
 *   A single tensor larger than the limit cannot be placed: the error names it, its size and
 *   the limit (and where the limit came from).
 * Kernel classes: buffers that no launch of the selected class (runtime/schedule.c) names and
 * that are not graph inputs or outputs (the other class's temporaries and packed weights) get
 * no device memory and are not uploaded; lifetimes count the selected launches only. A run of
 * such weights longer than O2R_SKIP_GAP ends a weights chunk, so their bytes are not uploaded.
 * Weights layout hash (o2r_desc_layout_hash, the one a weights file must match): the payload
 * size, storage dtype and each stored tensor's layout string, offset and size (o2r_stored_hash),
 * in payload order; codegen makes the layout strings from the weights' dims only, so every
 * --shape build of a model shares it.
 * Build hash (o2r_desc_build_hash): everything in a descriptor that generated code and kernels
 * depend on, names and the model file's hash excluded, so two compilations that would run the
 * same kernels on the same weights layout share it (diagnostics and tests; weights files carry
 * the weights layout hash of runtime/repack.c instead, which ignores activation shapes).
 * Scratch: the runtime allocates nothing on the device besides the chunks (temporaries of
 * kernels are planned inside the arena by the compiler), so the scratch term is 0 today; it is
 * kept in the figures so the need message and --info stay right when that changes.
 * Assumes: desc passed validate_desc (model.c) or comes from the compiler.
 * Guarantees: pure host code; on failure nothing stays allocated and err names the problem.
 */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

o2r_status o2r_parse_bytes(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (!s || !out || !*s)
        return O2R_ERR_ARG;
    for (; *p >= '0' && *p <= '9'; p++) {
        uint64_t digit = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return O2R_ERR_ARG;
        v = v * 10 + digit;
    }
    if (p == s)
        return O2R_ERR_ARG;
    unsigned shift = 0;
    if (*p) {
        switch (*p) {
        case 'K': case 'k': shift = 10; break;
        case 'M': case 'm': shift = 20; break;
        case 'G': case 'g': shift = 30; break;
        default: return O2R_ERR_ARG;
        }
        if (p[1])
            return O2R_ERR_ARG;
    }
    if (v == 0 || v > (UINT64_MAX >> shift))
        return O2R_ERR_ARG;
    *out = v << shift;
    return O2R_OK;
}

/* Bytes of unused buffers between two used ones above which a chunk ends (not uploaded). */
#define O2R_SKIP_GAP (1u << 20)

/* Byte size rounded up to O2R_ALIGN. */
static uint64_t align_up(uint64_t x)
{
    return (x + O2R_ALIGN - 1) / O2R_ALIGN * O2R_ALIGN;
}

/* Name of buffer i for messages ("buffer 7" when the desc has no name). */
static const char *buf_name(const struct o2r_model_desc *d, uint32_t i, char *tmp, size_t cap)
{
    if (d->buffers[i].name && d->buffers[i].name[0])
        return d->buffers[i].name;
    snprintf(tmp, cap, "buffer %u", (unsigned)i);
    return tmp;
}

/* Sort key of one buffer (no global qsort context: init may run in several threads). */
struct sort_key {
    uint64_t k1, k2; /* primary, secondary key (ascending) */
    uint32_t id;     /* buffer index, last key */
};

static int cmp_key(const void *a, const void *b)
{
    const struct sort_key *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Sorts buffer indices ids[0..n) by (offset, size, index), or with by_size by (decreasing
 * size, index). Returns 0 when out of host memory. */
static int sort_ids(const struct o2r_model_desc *d, uint32_t *ids, uint32_t n, int by_size)
{
    struct sort_key *k = o2r_calloc(n ? n : 1, sizeof *k);
    if (!k) return 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct o2r_buffer *b = &d->buffers[ids[i]];
        k[i] = by_size ? (struct sort_key){UINT64_MAX - b->size, 0, ids[i]}
                       : (struct sort_key){b->offset, b->size, ids[i]};
    }
    qsort(k, n, sizeof *k, cmp_key);
    for (uint32_t i = 0; i < n; i++) ids[i] = k[i].id;
    o2r_free(k);
    return 1;
}

/* Appends a chunk to p (capacity n_buffers + 1 is enough: every chunk holds >= 1 buffer). */
static uint32_t add_chunk(struct o2r_mem_plan *p, uint64_t src, uint64_t bytes)
{
    uint32_t c = p->n_weight_chunks + p->n_arena_chunks;
    p->chunk_src[c] = src;
    p->chunk_bytes[c] = bytes;
    return c;
}

/* End of the maximal run of overlapping intervals (a "cluster") that starts at ids[k] (ids
 * sorted by offset); *hi receives the cluster's end offset. */
static uint32_t cluster_end(const struct o2r_model_desc *d, const uint32_t *ids, uint32_t n,
                            uint32_t k, uint64_t *hi)
{
    uint64_t h = d->buffers[ids[k]].offset + d->buffers[ids[k]].size;
    uint32_t j = k + 1;
    for (; j < n && d->buffers[ids[j]].offset < h; j++) {
        uint64_t e = d->buffers[ids[j]].offset + d->buffers[ids[j]].size;
        h = e > h ? e : h;
    }
    *hi = h;
    return j;
}

/* Cuts the buffers `ids` (sorted by offset) at cluster boundaries into chunks <= limit, packing
 * whole clusters greedily. Returns 0, assigning nothing, when a cluster exceeds the limit. */
static int plan_cut(const struct o2r_model_desc *d, const uint32_t *ids, uint32_t n,
                    uint64_t limit, int weights, struct o2r_mem_plan *p)
{
    uint64_t hi;
    for (uint32_t k = 0; k < n;) {
        uint32_t j = cluster_end(d, ids, n, k, &hi);
        if (hi - d->buffers[ids[k]].offset > limit)
            return 0;
        k = j;
    }
    uint64_t chunk_lo = 0;
    uint32_t c = 0;
    int open = 0;
    for (uint32_t k = 0; k < n;) {
        uint64_t lo = d->buffers[ids[k]].offset;
        uint32_t j = cluster_end(d, ids, n, k, &hi);
        /* a long run of skipped (unused) tensors ends the chunk: they are not uploaded; the
         * build's own constants (after the file part) start a chunk of their own, so that the
         * file part can be the mapped file itself (model.c) */
        const uint64_t fb = d->weights_file_bytes;
        if (!open || hi - chunk_lo > limit || lo - (chunk_lo + p->chunk_bytes[c]) > O2R_SKIP_GAP ||
            (weights && chunk_lo < fb && lo >= fb)) {
            c = add_chunk(p, lo, 0);
            if (weights)
                p->n_weight_chunks++;
            else
                p->n_arena_chunks++;
            chunk_lo = lo;
            open = 1;
        }
        p->chunk_bytes[c] = hi - chunk_lo;
        for (; k < j; k++) {
            p->buf_chunk[ids[k]] = c;
            p->buf_off[ids[k]] = d->buffers[ids[k]].offset - chunk_lo;
        }
    }
    return 1;
}

/* One occupied byte range [lo, hi) of a chunk, for plan_replace. */
struct busy {
    uint64_t lo, hi;
};

static int cmp_busy(const void *a, const void *b)
{
    const struct busy *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Places the arena buffers `ids` again from their launch lifetimes (see the banner). */
static o2r_status plan_replace(const struct o2r_model_desc *d, uint32_t kclass, uint32_t *ids,
                               uint32_t n,
                               uint64_t limit, struct o2r_mem_plan *p, char *err, size_t cap)
{
    o2r_status st = O2R_OK;
    int64_t *lo = o2r_calloc(d->n_buffers ? d->n_buffers : 1, sizeof *lo);
    int64_t *hi = o2r_calloc(d->n_buffers ? d->n_buffers : 1, sizeof *hi);
    struct busy *busy = o2r_calloc(n ? n : 1, sizeof *busy);
    if (!lo || !hi || !busy) {
        o2r_fmt(err, cap, "out of host memory placing the arena of model '%s'", d->name);
        st = O2R_ERR_NOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < d->n_buffers; i++)
        lo[i] = INT64_MAX, hi[i] = INT64_MIN;
    for (uint32_t l = 0; l < d->n_launches; l++)
        for (uint32_t a = 0; o2r_launch_selected(&d->launches[l], kclass) && a < d->launches[l].nargs;
             a++) {
            const struct o2r_arg *ar = &d->args[d->launches[l].first_arg + a];
            if (ar->kind != O2R_ARG_BUF)
                continue;
            uint32_t b = (uint32_t)ar->u.buf;
            lo[b] = lo[b] < (int64_t)l ? lo[b] : (int64_t)l;
            hi[b] = hi[b] > (int64_t)l ? hi[b] : (int64_t)l;
        }
    for (uint32_t i = 0; i < d->n_inputs; i++) { /* written before launch 0 */
        uint32_t b = (uint32_t)d->inputs[i].buf;
        lo[b] = -1;
        hi[b] = hi[b] > -1 ? hi[b] : -1;
    }
    for (uint32_t i = 0; i < d->n_outputs; i++) { /* read after the last launch */
        uint32_t b = (uint32_t)d->outputs[i].buf;
        hi[b] = (int64_t)d->n_launches;
        lo[b] = lo[b] < (int64_t)d->n_launches ? lo[b] : (int64_t)d->n_launches;
    }
    for (uint32_t i = 0; i < d->n_buffers; i++) { /* a view's lifetime is its parent's */
        uint32_t v = d->buffers[i].view_of;
        if (v && lo[i] <= hi[i]) {
            lo[v - 1] = lo[v - 1] < lo[i] ? lo[v - 1] : lo[i];
            hi[v - 1] = hi[v - 1] > hi[i] ? hi[v - 1] : hi[i];
        }
    }
    for (uint32_t i = 0; i < d->n_buffers; i++)
        if (lo[i] > hi[i]) /* named by no launch and no I/O: its bytes are never touched */
            lo[i] = hi[i] = -2;
    const uint32_t nall = n; /* parents first in ids; views after them, placed with them */
    n = 0;
    for (uint32_t k = 0; k < nall; k++)
        if (!d->buffers[ids[k]].view_of) {
            uint32_t t = ids[n];
            ids[n++] = ids[k];
            ids[k] = t;
        }
    if (!sort_ids(d, ids, n, 1)) {
        o2r_fmt(err, cap, "out of host memory placing the arena of model '%s'", d->name);
        st = O2R_ERR_NOMEM;
        goto done;
    }
    uint32_t c0 = p->n_weight_chunks;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t b = ids[k], chunk = UINT32_MAX;
        uint64_t size = d->buffers[b].size, need = align_up(size), off = 0;
        for (uint32_t c = c0; c < c0 + p->n_arena_chunks && chunk == UINT32_MAX; c++) {
            uint32_t nb = 0;
            for (uint32_t q = 0; q < k; q++) {
                uint32_t o = ids[q];
                if (p->buf_chunk[o] == c && hi[o] >= lo[b] && hi[b] >= lo[o])
                    busy[nb++] = (struct busy){p->buf_off[o],
                                               p->buf_off[o] + align_up(d->buffers[o].size)};
            }
            qsort(busy, nb, sizeof *busy, cmp_busy);
            uint64_t cand = 0; /* lowest gap that holds `need` bytes */
            for (uint32_t q = 0; q < nb && busy[q].lo < cand + need; q++)
                cand = busy[q].hi > cand ? busy[q].hi : cand;
            if (cand + size <= limit) {
                chunk = c;
                off = cand;
            }
        }
        if (chunk == UINT32_MAX) {
            chunk = add_chunk(p, 0, 0);
            p->n_arena_chunks++;
            off = 0;
        }
        p->buf_chunk[b] = chunk;
        p->buf_off[b] = off;
        if (off + size > p->chunk_bytes[chunk])
            p->chunk_bytes[chunk] = off + size;
    }
    for (uint32_t k = n; k < nall; k++) {
        const struct o2r_buffer *c = &d->buffers[ids[k]];
        const uint32_t par = c->view_of - 1;
        p->buf_chunk[ids[k]] = p->buf_chunk[par];
        p->buf_off[ids[k]] = p->buf_off[par] + (c->offset - d->buffers[par].offset);
    }
    p->arena_replaced = 1;
done:
    o2r_free(lo);
    o2r_free(hi);
    o2r_free(busy);
    return st;
}

o2r_status o2r_mem_plan_build(const struct o2r_model_desc *d, uint32_t kclass, uint64_t limit,
                              const char *limit_src, struct o2r_mem_plan *p, char *err,
                              size_t cap)
{
    o2r_status st = O2R_OK;
    uint32_t nb = d->n_buffers, nw = 0, na = 0;
    char tmp[32];
    memset(p, 0, sizeof *p);
    uint32_t *ids = o2r_calloc(nb ? nb : 1, sizeof *ids);
    p->chunk_bytes = o2r_calloc(nb + 1, sizeof *p->chunk_bytes);
    p->chunk_src = o2r_calloc(nb + 1, sizeof *p->chunk_src);
    p->buf_chunk = o2r_calloc(nb ? nb : 1, sizeof *p->buf_chunk);
    p->buf_off = o2r_calloc(nb ? nb : 1, sizeof *p->buf_off);
    unsigned char *used = o2r_calloc(nb ? nb : 1, 1);
    if (!ids || !p->chunk_bytes || !p->chunk_src || !p->buf_chunk || !p->buf_off || !used) {
        o2r_fmt(err, cap, "out of host memory planning the device buffers of model '%s'",
                d->name);
        st = O2R_ERR_NOMEM;
        goto fail;
    }
    p->limit = limit;
    /* buffers no launch of the class names (another class's temporaries and packed weights)
     * get no device memory */
    for (uint32_t l = 0; l < d->n_launches; l++)
        for (uint32_t a = 0; o2r_launch_selected(&d->launches[l], kclass) && a < d->launches[l].nargs;
             a++)
            if (d->args[d->launches[l].first_arg + a].kind == O2R_ARG_BUF)
                used[d->args[d->launches[l].first_arg + a].u.buf] = 1;
    for (uint32_t i = 0; i < d->n_inputs; i++)
        used[d->inputs[i].buf] = 1;
    for (uint32_t i = 0; i < d->n_outputs; i++)
        used[d->outputs[i].buf] = 1;
    for (uint32_t i = 0; i < nb; i++) /* an offset view's bytes are its parent's */
        if (used[i] && d->buffers[i].view_of)
            used[d->buffers[i].view_of - 1] = 1;
    for (uint32_t i = 0; i < nb; i++)
        if (!used[i]) {
            p->buf_chunk[i] = UINT32_MAX;
            p->n_unused++;
            p->unused_bytes += d->buffers[i].size;
        }
    for (uint32_t i = 0; i < nb; i++)
        if (used[i] && d->buffers[i].size > limit) {
            const struct o2r_buffer *b = &d->buffers[i];
            o2r_fmt(err, cap, "model '%s': %s tensor '%s' is %llu bytes, larger than the %llu-byte "
                    "limit of one device allocation (%s); a tensor cannot be split across "
                    "allocations", d->name, b->space == O2R_SPACE_WEIGHTS ? "weight" : "activation",
                    buf_name(d, i, tmp, sizeof tmp), (unsigned long long)b->size,
                    (unsigned long long)limit, limit_src);
            st = O2R_ERR_NODEVICE;
            goto fail;
        }
    for (uint32_t i = 0; i < nb; i++) { /* used arena buffers first in ids, then weights */
        na += used[i] && d->buffers[i].space == O2R_SPACE_ARENA;
        nw += used[i] && d->buffers[i].space == O2R_SPACE_WEIGHTS;
    }
    for (uint32_t i = 0, ka = 0, kw = na; i < nb; i++)
        if (used[i])
            ids[d->buffers[i].space == O2R_SPACE_ARENA ? ka++ : kw++] = i;
    /* weights first: chunks [0, n_weight_chunks) */
    if (!sort_ids(d, ids + na, nw, 0) || !sort_ids(d, ids, na, 0)) {
        o2r_fmt(err, cap, "out of host memory planning the device buffers of model '%s'",
                d->name);
        st = O2R_ERR_NOMEM;
        goto fail;
    }
    if (!plan_cut(d, ids + na, nw, limit, 1, p)) {
        /* weight tensors never overlap in a valid desc and each fits: unreachable unless the
         * desc overlaps two weight tensors */
        o2r_fmt(err, cap, "model '%s': weight tensors overlap in the weights region and cannot be "
                "split under the %llu-byte allocation limit (%s)", d->name,
                (unsigned long long)limit, limit_src);
        st = O2R_ERR_ARG;
        goto fail;
    }
    if (!plan_cut(d, ids, na, limit, 0, p)) {
        st = plan_replace(d, kclass, ids, na, limit, p, err, cap);
        if (st != O2R_OK)
            goto fail;
    }
    for (uint32_t c = 0; c < p->n_weight_chunks; c++)
        p->weights_bytes += p->chunk_bytes[c];
    for (uint32_t c = p->n_weight_chunks; c < p->n_weight_chunks + p->n_arena_chunks; c++)
        p->arena_bytes += p->chunk_bytes[c];
    o2r_free(ids);
    o2r_free(used);
    return O2R_OK;
fail:
    o2r_free(ids);
    o2r_free(used);
    o2r_mem_plan_free(p);
    return st;
}

void o2r_mem_plan_free(struct o2r_mem_plan *p)
{
    if (!p)
        return;
    o2r_free(p->chunk_bytes);
    o2r_free(p->chunk_src);
    o2r_free(p->buf_chunk);
    o2r_free(p->buf_off);
    memset(p, 0, sizeof *p);
}

void o2r_desc_memory(const struct o2r_model_desc *d, struct o2r_memory *out)
{
    memset(out, 0, sizeof *out);
    out->largest_weight = out->largest_arena = -1;
    if (!d)
        return;
    out->weights_bytes = d->weights_bytes;
    out->arena_bytes = d->arena_bytes;
    out->scratch_bytes = 0;
    out->peak_bytes = d->weights_bytes + d->arena_bytes + out->scratch_bytes;
    for (uint32_t i = 0; d->buffers && i < d->n_buffers; i++) {
        const struct o2r_buffer *b = &d->buffers[i];
        int32_t *best = b->space == O2R_SPACE_WEIGHTS ? &out->largest_weight : &out->largest_arena;
        if (*best < 0 || b->size > d->buffers[*best].size)
            *best = (int32_t)i;
    }
    if (out->largest_weight >= 0)
        out->largest_weight_bytes = d->buffers[out->largest_weight].size;
    if (out->largest_arena >= 0)
        out->largest_arena_bytes = d->buffers[out->largest_arena].size;
}

/* Appends an integer to the hash stream (little-endian, fixed width). */
static void hash_u64(struct o2r_wsum *h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    o2r_wsum_update(h, b, 8);
}

/* Appends a string with its length (NULL hashes as length UINT64_MAX). */
static void hash_str(struct o2r_wsum *h, const char *s, uint64_t len)
{
    hash_u64(h, s ? len : UINT64_MAX);
    if (s) o2r_wsum_update(h, s, (size_t)len);
}

/* A variants mask in one form: 0 ("every class", as generated files write it) == all bits. */
static uint64_t class_mask(uint32_t v)
{
    return v == 0 ? O2R_VARIANT_ALL : v;
}

uint64_t o2r_desc_build_hash(const struct o2r_model_desc *d)
{
    struct o2r_wsum h;
    o2r_wsum_init(&h);
    hash_str(&h, "onnx2cl build hash 1", 20);
    hash_str(&h, d->build_options, d->build_options ? strlen(d->build_options) : 0);
    /* the program text: the segments when there are any (the generated file leaves
     * kernel_source NULL then; the compiler's in-memory desc has both), else kernel_source */
    if (d->n_sources && d->sources) {
        hash_u64(&h, d->n_sources);
        for (uint32_t i = 0; i < d->n_sources; i++) {
            hash_str(&h, d->sources[i].text, d->sources[i].len);
            hash_u64(&h, class_mask(d->sources[i].variants));
        }
    } else {
        hash_u64(&h, 1);
        hash_str(&h, d->kernel_source, d->kernel_source_len);
        hash_u64(&h, O2R_VARIANT_ALL);
    }
    hash_u64(&h, d->arena_bytes);
    hash_u64(&h, d->weights_bytes);
    if (d->weights_dtype == O2R_F16) /* (float32 builds keep the hashes they had before) */
        hash_str(&h, "weights f16", 11);
    hash_u64(&h, d->n_buffers);
    for (uint32_t i = 0; d->buffers && i < d->n_buffers; i++) {
        hash_u64(&h, d->buffers[i].offset);
        hash_u64(&h, d->buffers[i].size);
        hash_u64(&h, d->buffers[i].space);
        if (d->buffers[i].view_of) /* (builds without views keep the hashes they had) */
            hash_u64(&h, 0x76696577u + (uint64_t)d->buffers[i].view_of);
    }
    hash_u64(&h, d->n_args);
    for (uint32_t i = 0; d->args && i < d->n_args; i++) {
        const struct o2r_arg *a = &d->args[i];
        uint64_t v = 0;
        switch (a->kind) {
        case O2R_ARG_BUF: v = (uint64_t)(int64_t)a->u.buf; break;
        case O2R_ARG_I32: v = (uint64_t)(int64_t)a->u.i32; break;
        case O2R_ARG_I64: v = (uint64_t)a->u.i64; break;
        case O2R_ARG_F32: { /* any NaN as one NaN: generated files write every NaN the same */
            uint32_t bits;
            memcpy(&bits, &a->u.f32, 4);
            v = a->u.f32 != a->u.f32 ? 0x7fc00000u : bits;
            break;
        }
        default: v = a->u.local_bytes; break;
        }
        hash_u64(&h, a->kind);
        hash_u64(&h, v);
    }
    hash_u64(&h, d->n_launches);
    for (uint32_t i = 0; d->launches && i < d->n_launches; i++) {
        const struct o2r_launch *l = &d->launches[i];
        hash_str(&h, l->kernel, l->kernel ? strlen(l->kernel) : 0);
        hash_u64(&h, l->work_dim);
        for (int k = 0; k < 3; k++) {
            hash_u64(&h, l->gws[k]);
            hash_u64(&h, l->lws[k]);
        }
        hash_u64(&h, l->first_arg);
        hash_u64(&h, l->nargs);
        hash_u64(&h, class_mask(l->variants));
        if (l->check) /* (builds without run-time checks keep the hashes they had) */
            hash_str(&h, l->check, strlen(l->check));
    }
    for (int pass = 0; pass < 2; pass++) {
        uint32_t n = pass ? d->n_outputs : d->n_inputs;
        const struct o2r_io *io = pass ? d->outputs : d->inputs;
        hash_u64(&h, n);
        for (uint32_t i = 0; io && i < n; i++) {
            hash_u64(&h, (uint64_t)(int64_t)io[i].dtype);
            hash_u64(&h, (uint64_t)(int64_t)io[i].rank);
            for (int k = 0; k < io[i].rank && k < O2R_MAX_RANK; k++)
                hash_u64(&h, (uint64_t)io[i].dims[k]);
            hash_u64(&h, (uint64_t)(int64_t)io[i].buf);
            hash_u64(&h, io[i].nbytes);
        }
    }
    /* tunable instances (their macro lines are not in the sources); none: hash as before */
    for (uint32_t i = 0; d->tunables && i < d->n_tunables; i++) {
        const struct o2r_tunable *t = &d->tunables[i];
        const int64_t v[] = {t->family, t->launch, t->span, t->rows, t->cols, t->k, t->z,
                             t->kc_arg, t->out_arg, t->n_out, t->row_mult, t->tiles.tm,
                             t->tiles.tn, t->tiles.tk, t->tiles.rm, t->tiles.rn, t->pinned};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            hash_u64(&h, (uint64_t)v[k]);
        const char *str[4] = {t->macro, t->kbase, t->ksuffix, t->margs};
        for (int k = 0; k < 4; k++)
            hash_str(&h, str[k], str[k] ? strlen(str[k]) : 0);
    }
    uint64_t r = o2r_wsum_final(&h);
    return r ? r : 1; /* 0 means "no build hash" in a weights file */
}

uint64_t o2r_launch_hash(const struct o2r_model_desc *d, uint32_t li)
{
    const struct o2r_launch *l = &d->launches[li];
    struct o2r_wsum h;
    o2r_wsum_init(&h);
    hash_str(&h, l->kernel, l->kernel ? strlen(l->kernel) : 0);
    hash_u64(&h, l->work_dim);
    for (int k = 0; k < 3; k++) {
        hash_u64(&h, l->gws[k]);
        hash_u64(&h, l->lws[k]);
    }
    hash_u64(&h, class_mask(l->variants));
    hash_u64(&h, l->nargs);
    for (uint32_t j = 0; j < l->nargs && (uint64_t)l->first_arg + j < d->n_args; j++) {
        const struct o2r_arg *a = &d->args[l->first_arg + j];
        hash_u64(&h, a->kind);
        if (a->kind == O2R_ARG_BUF && a->u.buf >= 0 && (uint32_t)a->u.buf < d->n_buffers) {
            const struct o2r_buffer *b = &d->buffers[a->u.buf]; /* where, not which index */
            hash_u64(&h, b->space);
            hash_u64(&h, b->offset);
            hash_u64(&h, b->size);
        } else if (a->kind == O2R_ARG_F32) {
            uint32_t bits;
            memcpy(&bits, &a->u.f32, 4);
            hash_u64(&h, a->u.f32 != a->u.f32 ? 0x7fc00000u : bits);
        } else {
            hash_u64(&h, a->kind == O2R_ARG_I32 ? (uint64_t)(int64_t)a->u.i32
                         : a->kind == O2R_ARG_I64 ? (uint64_t)a->u.i64 : a->u.local_bytes);
        }
    }
    return o2r_wsum_final(&h);
}

uint64_t o2r_stored_hash(const struct o2r_model_desc *d, uint32_t i)
{
    const struct o2r_stored *s = &d->stored[i];
    struct o2r_wsum h;
    o2r_wsum_init(&h);
    hash_str(&h, s->layout, s->layout ? strlen(s->layout) : 0);
    hash_u64(&h, d->buffers[s->buf].offset);
    hash_u64(&h, d->buffers[s->buf].size);
    return o2r_wsum_final(&h);
}

uint64_t o2r_desc_layout_hash(const struct o2r_model_desc *d)
{
    struct o2r_wsum h;
    o2r_wsum_init(&h);
    hash_str(&h, "onnx2cl weights layout 1", 24);
    hash_u64(&h, d->weights_file_bytes);
    hash_u64(&h, d->weights_dtype == O2R_F16 ? O2R_F16 : O2R_F32);
    hash_u64(&h, d->n_stored);
    for (uint32_t i = 0; d->stored && i < d->n_stored; i++)
        hash_u64(&h, o2r_stored_hash(d, i));
    uint64_t r = o2r_wsum_final(&h);
    return r ? r : 1;
}
