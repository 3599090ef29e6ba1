/* model.c — model instances: init (program, kernels, weights, arena, sub-buffers), run, free,
 * profiling.
 *
 * What: o2r_model_init / o2r_model_run / o2r_model_free / o2r_model_set_profiling /
 * o2r_model_print_profile.
 * Assumes: desc is the static descriptor of a generated file (it must outlive the model); the
 * weights file follows the layout documented in onnx2cl_rt.h.
 * Device memory: weights and activations are split into several device allocations ("chunks")
 * each <= CL_DEVICE_MAX_MEM_ALLOC_SIZE or the lower $ONNX2CL_MAX_ALLOC; each desc buffer is a
 * sub-buffer of one chunk (the plan and its design: memplan.c). Weights chunks are uploaded
 * from their byte range of the mmapped weights file; on a CPU device with host-unified memory
 * (PoCL) a chunk that lies in the file IS the mapping (CL_MEM_USE_HOST_PTR: no copy, no second
 * copy of the weights in memory; conv weights rearranged at load are written copy-on-write
 * into the mapping, never into the file), and the mapping lives as long as the model
 * ($ONNX2CL_WEIGHTS_UPLOAD=auto|map|copy). Before anything is built or allocated,
 * init refuses a tensor larger than the limit and a total need (weights + arena + scratch)
 * above CL_DEVICE_GLOBAL_MEM_SIZE (or the lower $ONNX2CL_GLOBAL_MEM, for tests).
 * Guarantees: init validates the whole descriptor first (indices, sizes, alignment, work
 * dimensions), so run only fails on OpenCL errors; every failure path releases what was
 * created and leaves a message naming the CL call, the CL error name and the kernel / node in
 * o2r_ctx_last_error(). run never returns while the device may still read or write the
 * caller's host buffers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* Checks the descriptor's internal consistency; message in ctx->err. */
static o2r_status validate_desc(struct o2r_ctx *ctx, const struct o2r_model_desc *d)
{
    const char *mn = d->name ? d->name : "?";
    if (d->abi_version != O2R_ABI_VERSION) {
        o2r_set_error(ctx, "model '%s' was generated for runtime ABI %u, this runtime is ABI %d: "
                      "regenerate it with a matching onnx2cl", mn, (unsigned)d->abi_version,
                      O2R_ABI_VERSION);
        return O2R_ERR_ARG;
    }
    if (!d->name || (!d->kernel_source && !d->n_sources) || (d->n_sources && !d->sources) ||
        (d->n_buffers && !d->buffers) ||
        (d->n_args && !d->args) || (d->n_launches && !d->launches) ||
        (d->n_inputs && !d->inputs) || (d->n_outputs && !d->outputs)) {
        o2r_set_error(ctx, "model '%s': descriptor has a NULL name, source or array", mn);
        return O2R_ERR_ARG;
    }
    if (d->weights_dtype != 0 && d->weights_dtype != O2R_F32 && d->weights_dtype != O2R_F16) {
        o2r_set_error(ctx, "model '%s': descriptor has weights dtype %u (float32 %d or float16 "
                      "%d)", mn, (unsigned)d->weights_dtype, O2R_F32, O2R_F16);
        return O2R_ERR_ARG;
    }
    for (uint32_t i = 0; i < d->n_buffers; i++) {
        const struct o2r_buffer *b = &d->buffers[i];
        uint64_t limit = b->space == O2R_SPACE_ARENA ? d->arena_bytes : d->weights_bytes;
        if (b->space > O2R_SPACE_WEIGHTS || b->size == 0 || b->offset % O2R_ALIGN != 0 ||
            b->offset > limit || b->size > limit - b->offset) {
            o2r_set_error(ctx, "model '%s': buffer %u (space %u, offset %llu, size %llu) is not "
                          "an aligned, non-empty range inside its %s of %llu bytes", mn,
                          (unsigned)i, (unsigned)b->space, (unsigned long long)b->offset,
                          (unsigned long long)b->size, b->space ? "weights region" : "arena",
                          (unsigned long long)limit);
            return O2R_ERR_ARG;
        }
    }
    for (uint32_t i = 0; i < d->n_buffers; i++) { /* offset views (onnx2cl_rt.h o2r_buffer) */
        const struct o2r_buffer *b = &d->buffers[i];
        if (!b->view_of)
            continue;
        const struct o2r_buffer *p = b->view_of <= d->n_buffers ? &d->buffers[b->view_of - 1] : NULL;
        if (!p || p == b || p->view_of || b->space != O2R_SPACE_ARENA ||
            p->space != O2R_SPACE_ARENA || b->offset < p->offset ||
            b->offset - p->offset > p->size || b->size > p->size - (b->offset - p->offset)) {
            o2r_set_error(ctx, "model '%s': buffer %u ('%s') is a view of buffer %u, which is not "
                          "an arena buffer that holds it and is not itself a view", mn,
                          (unsigned)i, b->name ? b->name : "?", (unsigned)b->view_of - 1);
            return O2R_ERR_ARG;
        }
    }
    if (d->weights_file_bytes > d->weights_bytes ||
        (d->weights_file_bytes < d->weights_bytes && !d->const_data) ||
        (d->n_stored && !d->stored) || (d->n_repacks && !d->repacks)) {
        o2r_set_error(ctx, "model '%s': descriptor's weights file part (%llu of %llu bytes), "
                      "constant data, stored or repack table is invalid", mn,
                      (unsigned long long)d->weights_file_bytes,
                      (unsigned long long)d->weights_bytes);
        return O2R_ERR_ARG;
    }
    for (uint32_t i = 0; i < d->n_stored; i++) {
        const struct o2r_stored *t = &d->stored[i];
        if (t->buf >= d->n_buffers || d->buffers[t->buf].space != O2R_SPACE_WEIGHTS ||
            d->buffers[t->buf].offset + d->buffers[t->buf].size > d->weights_file_bytes ||
            (i && d->buffers[t->buf].offset < d->buffers[d->stored[i - 1].buf].offset +
                                                  d->buffers[d->stored[i - 1].buf].size)) {
            o2r_set_error(ctx, "model '%s': stored tensor %u (buffer %u) is not a weights buffer "
                          "inside the weights file's part, after the one before", mn, (unsigned)i,
                          (unsigned)t->buf);
            return O2R_ERR_ARG;
        }
    }
    for (uint32_t i = 0; i < d->n_repacks; i++) {
        const struct o2r_repack *r = &d->repacks[i];
        int ok = r->kind == O2R_REPACK_CONV && r->buf < d->n_buffers &&
                 (r->elem_bytes == 2 || r->elem_bytes == 4) && r->src_ocb >= 1 &&
                 r->src_ocb <= 64 && r->dst_ocb >= 1 && r->dst_ocb <= 64 && r->flat <= 1 &&
                 r->oc >= 1 && r->cin >= 1 && r->kh >= 1 && r->kw >= 1 &&
                 r->oc <= (1 << 30) && r->cin <= (1 << 30) && r->kh <= 4096 && r->kw <= 4096;
        if (ok) {
            const struct o2r_buffer *b = &d->buffers[r->buf];
            uint64_t k = (uint64_t)r->cin * (uint64_t)r->kh * (uint64_t)r->kw;
            uint64_t ns = (uint64_t)(r->oc + r->src_ocb - 1) / r->src_ocb * r->src_ocb;
            uint64_t nt = (uint64_t)(r->oc + r->dst_ocb - 1) / r->dst_ocb * r->dst_ocb;
            ok = b->space == O2R_SPACE_WEIGHTS && b->offset + b->size <= d->weights_file_bytes &&
                 k <= ((uint64_t)1 << 40) && ns == nt && ns * k * r->elem_bytes == b->size;
        }
        if (!ok) {
            o2r_set_error(ctx, "model '%s': repack %u (buffer %u) has an unknown kind, sizes that "
                          "do not fit its buffer, or a buffer outside the weights file's part",
                          mn, (unsigned)i, (unsigned)r->buf);
            return O2R_ERR_ARG;
        }
    }
    for (uint32_t i = 0; i < d->n_args; i++) {
        const struct o2r_arg *a = &d->args[i];
        if (a->kind > O2R_ARG_LOCAL ||
            (a->kind == O2R_ARG_BUF && (a->u.buf < 0 || (uint32_t)a->u.buf >= d->n_buffers)) ||
            (a->kind == O2R_ARG_LOCAL && a->u.local_bytes == 0)) {
            o2r_set_error(ctx, "model '%s': argument %u has kind %u with an invalid value", mn,
                          (unsigned)i, (unsigned)a->kind);
            return O2R_ERR_ARG;
        }
    }
    for (uint32_t i = 0; i < d->n_launches; i++) {
        const struct o2r_launch *l = &d->launches[i];
        if (l->check || !l->kernel) { /* a run-time check: (bool buffer, I32 0 or 1), no kernel */
            const struct o2r_arg *a = l->first_arg <= d->n_args && d->n_args - l->first_arg >= 2
                                          ? &d->args[l->first_arg] : NULL;
            if (!l->check || l->kernel || l->nargs != 2 || !a || a[0].kind != O2R_ARG_BUF ||
                a[1].kind != O2R_ARG_I32 || (a[1].u.i32 != 0 && a[1].u.i32 != 1) ||
                l->variants > O2R_VARIANT_ALL) {
                o2r_set_error(ctx, "model '%s': launch %u (node '%s') has no kernel name or is "
                              "an invalid run-time check", mn, (unsigned)i, l->node ? l->node : "?");
                return O2R_ERR_ARG;
            }
            continue;
        }
        if (!l->kernel || l->work_dim < 1 || l->work_dim > 3 || l->variants > O2R_VARIANT_ALL ||
            (uint64_t)l->first_arg + l->nargs > d->n_args) {
            o2r_set_error(ctx, "model '%s': launch %u (kernel %s, node '%s') has an invalid "
                          "kernel name, work_dim %u or argument range", mn, (unsigned)i,
                          l->kernel ? l->kernel : "(null)", l->node ? l->node : "?",
                          (unsigned)l->work_dim);
            return O2R_ERR_ARG;
        }
    }
    for (uint32_t i = 0; i < d->n_sources; i++)
        if (!d->sources[i].text || d->sources[i].variants > O2R_VARIANT_ALL) {
            o2r_set_error(ctx, "model '%s': source segment %u has no text or an unknown variant "
                          "mask %u", mn, (unsigned)i, (unsigned)d->sources[i].variants);
            return O2R_ERR_ARG;
        }
    for (int pass = 0; pass < 2; pass++) {
        uint32_t n = pass ? d->n_outputs : d->n_inputs;
        const struct o2r_io *ios = pass ? d->outputs : d->inputs;
        for (uint32_t i = 0; i < n; i++) {
            const struct o2r_io *io = &ios[i];
            size_t es = o2r_dtype_size(io->dtype);
            uint64_t numel = 1;
            int bad = !io->name || es == 0 || io->rank < 0 || io->rank > O2R_MAX_RANK ||
                      io->buf < 0 || (uint32_t)io->buf >= d->n_buffers;
            for (int k = 0; !bad && k < io->rank; k++) {
                if (io->dims[k] < 0 || (io->dims[k] && numel > UINT64_MAX / (uint64_t)io->dims[k]))
                    bad = 1;
                else
                    numel *= (uint64_t)io->dims[k];
            }
            if (!bad && (numel > UINT64_MAX / es || numel * es != io->nbytes ||
                         io->nbytes > d->buffers[io->buf].size))
                bad = 1;
            if (bad) {
                o2r_set_error(ctx, "model '%s': %s %u ('%s') has an invalid dtype, shape, buffer "
                              "or byte size", mn, pass ? "output" : "input", (unsigned)i,
                              io->name ? io->name : "?");
                return O2R_ERR_ARG;
            }
        }
    }
    return o2r_tune_validate_desc(ctx, d);
}

/* The first launch of desc that reads buffer b ("?" when none). */
static const char *first_reader(const struct o2r_model_desc *d, uint32_t b)
{
    for (uint32_t l = 0; l < d->n_launches; l++)
        for (uint32_t a = 0; a < d->launches[l].nargs; a++) {
            const struct o2r_arg *ar = &d->args[d->launches[l].first_arg + a];
            if (ar->kind == O2R_ARG_BUF && (uint32_t)ar->u.buf == b)
                return d->launches[l].node ? d->launches[l].node : "?";
        }
    return "?";
}

/* "; they first differ at stored tensor N: ..." from the weights file's layout trailer
 * (onnx2cl_rt.h), or "" when the file has none or it is malformed (every read bounds-checked). */
static void explain_layout_diff(const struct o2r_model_desc *d, const unsigned char *map,
                                uint64_t size, char *out, size_t cap)
{
    uint64_t payload, names;
    uint32_t ver, n;
    out[0] = 0;
    memcpy(&payload, map + 16, 8);
    if (payload > size - O2R_WEIGHTS_HEADER || size - O2R_WEIGHTS_HEADER - payload < 24)
        return;
    const unsigned char *t = map + O2R_WEIGHTS_HEADER + payload;
    uint64_t left = size - O2R_WEIGHTS_HEADER - payload - 24;
    memcpy(&ver, t + 8, 4);
    memcpy(&n, t + 12, 4);
    memcpy(&names, t + 16, 8);
    if (memcmp(t, O2R_WEIGHTS_TRAILER_MAGIC, 8) != 0 || ver != 2 || (uint64_t)n > left / 8 ||
        names != left - 8 * (uint64_t)n || (names && t[24 + 8 * (uint64_t)n + names - 1] != 0))
        return;
    const unsigned char *hashes = t + 24;
    const char *nm = (const char *)t + 24 + 8 * (uint64_t)n, *nm_end = nm + names;
    uint32_t common = n < d->n_stored ? n : d->n_stored;
    for (uint32_t i = 0; i < common; i++) {
        const char *str[3]; /* tensor, node, layout of the file's tensor i */
        for (int k = 0; k < 3; k++) {
            str[k] = nm < nm_end ? nm : "?";
            nm += nm < nm_end ? strlen(nm) + 1 : 0; /* stays inside: the blob ends with a NUL */
        }
        uint64_t fh;
        memcpy(&fh, hashes + 8 * (uint64_t)i, 8);
        if (fh != o2r_stored_hash(d, i)) {
            const struct o2r_stored *s = &d->stored[i];
            const struct o2r_buffer *b = &d->buffers[s->buf];
            snprintf(out, cap, "; they first differ at stored tensor %u: '%s' (node '%s') is %s "
                     "at payload offset %llu here, the file has '%s' (node '%s'), %s",
                     (unsigned)i, b->name ? b->name : "?",
                     s->node ? s->node : first_reader(d, s->buf), s->layout ? s->layout : "?",
                     (unsigned long long)b->offset, str[0], str[1], str[2]);
            return;
        }
    }
    if (n != d->n_stored)
        snprintf(out, cap, "; the first %u stored tensors agree, then the file has %u tensors and "
                 "model '%s' %u", (unsigned)common, (unsigned)n, d->name, (unsigned)d->n_stored);
    else if (payload != d->weights_file_bytes)
        snprintf(out, cap, "; every stored tensor agrees: the payload sizes differ");
    else
        snprintf(out, cap, "; every stored tensor and the payload size agree, so header bytes "
                 "96-103 (the layout hash) are damaged");
}

/* Bytes the header may hold where the format says what they are (onnx2cl_rt.h): bytes 32-95
 * the source model's hex SHA-256 (hex digits, then NUL padding), bytes 104 to the end zero.
 * Returns O2R_OK, or O2R_ERR_FORMAT with the first bad byte, its value and what belongs there
 * in ctx's error (a damaged file). */
static o2r_status check_header_bytes(struct o2r_ctx *ctx, const char *path,
                                     const unsigned char *map)
{
    int pad = 0; /* in the NUL padding of the model hash */
    for (unsigned i = 32; i < O2R_WEIGHTS_HEADER; i++) {
        unsigned char c = map[i];
        int hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        if (i >= 96 && i < 104)
            continue; /* the layout hash: compared with the model's below */
        pad = pad || (i < 96 && c == 0);
        if (i < 96 ? (pad ? c == 0 : hex) : c == 0)
            continue;
        o2r_set_error(ctx, "weights file %s is damaged: header byte %u is 0x%02x, the format "
                      "has %s there", path, i, (unsigned)c, i < 96 ? (pad ? "the NUL padding "
                      "after the source model's hex SHA-256 (bytes 32-95)" : "a lowercase hex "
                      "digit of the source model's SHA-256 (bytes 32-95)")
                      : "zero padding (bytes 104-4095)");
        return O2R_ERR_FORMAT;
    }
    return O2R_OK;
}

/* The layout trailer after the payload (onnx2cl_rt.h; optional, but when present it must be
 * whole): magic, version 2, the model's n stored tensors with their hashes (the layout hash
 * matched, so they are the model's), the names' byte count reaching exactly to the end of the
 * file, 3n NUL-terminated strings. Returns O2R_OK, or O2R_ERR_FORMAT naming the byte offset and
 * field that is wrong in ctx's error. d NULL: its structure alone (no model to compare with). */
static o2r_status check_trailer(struct o2r_ctx *ctx, const struct o2r_model_desc *d,
                                const char *path, const unsigned char *map, uint64_t size,
                                uint64_t payload)
{
    const uint64_t at = O2R_WEIGHTS_HEADER + payload, left = size - at;
    const unsigned char *t = map + at;
    char what[200] = "";
    uint32_t ver = 0, n = 0;
    uint64_t names = 0, bad_at = at;
    if (left == 0)
        return O2R_OK;
    if (left < 24) {
        snprintf(what, sizeof what, "%llu bytes, shorter than its 24-byte head (truncated?)",
                 (unsigned long long)left);
        goto bad;
    }
    memcpy(&ver, t + 8, 4);
    memcpy(&n, t + 12, 4);
    memcpy(&names, t + 16, 8);
    if (memcmp(t, O2R_WEIGHTS_TRAILER_MAGIC, 8) != 0) {
        snprintf(what, sizeof what, "bytes 0-7 are not \"%s\\0\"", O2R_WEIGHTS_TRAILER_MAGIC);
    } else if (ver != 2) {
        bad_at = at + 8;
        snprintf(what, sizeof what, "bytes 8-11 (version) hold %u, expected 2", (unsigned)ver);
    } else if (d && n != d->n_stored) {
        bad_at = at + 12;
        snprintf(what, sizeof what, "bytes 12-15 (stored tensors) hold %u, the model stores %u",
                 (unsigned)n, (unsigned)d->n_stored);
    } else if (left - 24 < 8 * (uint64_t)n || names != left - 24 - 8 * (uint64_t)n) {
        bad_at = at + 16;
        snprintf(what, sizeof what, "bytes 16-23 (names' bytes) hold %llu, the file has %lld "
                 "bytes for them (truncated or extended?)", (unsigned long long)names,
                 (long long)(left - 24) - 8 * (long long)n);
    }
    if (what[0])
        goto bad;
    for (uint32_t i = 0; d && i < n; i++) { /* without a model (o2r_weights_verify): the structure only */
        uint64_t h;
        memcpy(&h, t + 24 + 8 * (uint64_t)i, 8);
        if (h != o2r_stored_hash(d, i)) {
            bad_at = at + 24 + 8 * (uint64_t)i;
            snprintf(what, sizeof what, "the hash of stored tensor %u differs from the model's, "
                     "whose layout hash the header matches", (unsigned)i);
            goto bad;
        }
    }
    uint64_t strings = 0;
    for (uint64_t k = 0; k < names; k++)
        strings += t[24 + 8 * (uint64_t)n + k] == 0;
    if (strings != 3 * (uint64_t)n || (names && t[left - 1] != 0)) {
        bad_at = at + 24 + 8 * (uint64_t)n;
        snprintf(what, sizeof what, "its names hold %llu NUL-terminated strings%s, expected %llu "
                 "(tensor, node, layout per stored tensor)", (unsigned long long)strings,
                 names && t[left - 1] != 0 ? " and an unterminated one" : "",
                 3 * (unsigned long long)n);
        goto bad;
    }
    return O2R_OK;
bad:
    o2r_set_error(ctx, "weights file %s is damaged: the layout trailer after the payload (file "
                  "offset %llu, at byte %llu) is wrong: %s", path, (unsigned long long)at,
                  (unsigned long long)bad_at, what);
    return O2R_ERR_FORMAT;
}

/* Writes bytes [lo, hi) of the weights region (the file part from map, the rest from
 * desc.const_data) at offset lo - base of chunk c (blocking). */
static cl_int write_region(struct o2r_model *m, uint32_t c, uint64_t base, uint64_t lo,
                           uint64_t hi, const unsigned char *map)
{
    const struct o2r_model_desc *d = m->desc;
    const uint64_t fb = d->weights_file_bytes;
    cl_int e = CL_SUCCESS;
    if (lo < hi && lo < fb)
        e = clEnqueueWriteBuffer(m->ctx->queue, m->chunks[c], CL_TRUE, (size_t)(lo - base),
                                 (size_t)((hi < fb ? hi : fb) - lo), map + O2R_WEIGHTS_HEADER + lo,
                                 0, NULL, NULL);
    if (e == CL_SUCCESS && hi > fb && hi > lo) {
        uint64_t from = lo > fb ? lo : fb;
        e = clEnqueueWriteBuffer(m->ctx->queue, m->chunks[c], CL_TRUE, (size_t)(from - base),
                                 (size_t)(hi - from), d->const_data + (from - fb), 0, NULL, NULL);
    }
    return e;
}

/* Creates weights chunk c of m->plan. When the weights file stays mapped (m->wmap) and the
 * chunk lies inside its payload, the chunk is the mapping itself (CL_MEM_USE_HOST_PTR): each
 * repacked tensor is rearranged in place, through tmp, in pages made copy-on-write
 * (o2r_fmap_make_private), so the file is never written. Else: straight from the mapped file
 * part or from const_data when it lies inside one and holds no repacked tensor (one copy, as
 * before load-time repacking existed); else empty, then written piecewise: the bytes between
 * repacked tensors from the file / const_data, each repacked tensor rearranged on the host
 * (o2r_repack_conv) into tmp (at least the largest repacked tensor's size, reused: its pages
 * are faulted in once) and written from it, so every byte is copied once. */
static o2r_status upload_chunk(struct o2r_model *m, uint32_t c, const unsigned char *map,
                               void *tmp)
{
    struct o2r_ctx *ctx = m->ctx;
    const struct o2r_model_desc *d = m->desc;
    uint64_t src = m->plan.chunk_src[c], n = m->plan.chunk_bytes[c], fb = d->weights_file_bytes;
    uint32_t *rp = o2r_calloc(d->n_repacks + 1, sizeof *rp), nr = 0;
    o2r_status st = O2R_OK;
    if (!rp) {
        o2r_set_error(ctx, "out of host memory loading the weights of model '%s'", d->name);
        return O2R_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < d->n_repacks; i++)
        if (m->plan.buf_chunk[d->repacks[i].buf] == c)
            rp[nr++] = i;
    for (uint32_t i = 1; i < nr; i++) /* by offset (insertion sort: few per chunk, no qsort_r) */
        for (uint32_t j = i; j > 0 && d->buffers[d->repacks[rp[j]].buf].offset <
                                          d->buffers[d->repacks[rp[j - 1]].buf].offset; j--) {
            uint32_t t = rp[j];
            rp[j] = rp[j - 1];
            rp[j - 1] = t;
        }
    cl_int e = o2r_fault_cl("clCreateBuffer");
    int mapped = m->wmap.data && src + n <= fb;
    for (uint32_t k = 0; mapped && k < nr; k++) {
        const struct o2r_buffer *b = &d->buffers[d->repacks[rp[k]].buf];
        mapped = o2r_fmap_make_private(&m->wmap, O2R_WEIGHTS_HEADER + b->offset, b->size) == 0;
    }
    if (mapped) {
        unsigned char *base = (unsigned char *)m->wmap.data + O2R_WEIGHTS_HEADER;
        for (uint32_t k = 0; k < nr; k++) {
            const struct o2r_repack *r = &d->repacks[rp[k]];
            const struct o2r_buffer *b = &d->buffers[r->buf];
            memcpy(tmp, base + b->offset, (size_t)b->size);
            o2r_repack_conv(r, tmp, base + b->offset);
        }
        if (e == CL_SUCCESS)
            m->chunks[c] = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                                          (size_t)n, base + src, &e);
        if (e == CL_SUCCESS && m->chunks[c]) {
            m->n_mapped_chunks++;
            goto done;
        }
        o2r_set_error(ctx, "clCreateBuffer(weights of model '%s', chunk %u of %u: %llu bytes "
                      "of the mapped weights file from payload offset %llu): %s", d->name,
                      (unsigned)c + 1, (unsigned)m->plan.n_weight_chunks, (unsigned long long)n,
                      (unsigned long long)src, o2r_cl_error_name(e));
        m->chunks[c] = NULL;
        st = O2R_ERR_CL;
        goto done;
    }
    const void *host = nr ? NULL
                       : src + n <= fb ? (const void *)(map + O2R_WEIGHTS_HEADER + src)
                       : src >= fb    ? (const void *)(d->const_data + (src - fb)) : NULL;
    if (e == CL_SUCCESS)
        m->chunks[c] = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY |
                                      (host ? CL_MEM_COPY_HOST_PTR : 0), (size_t)n,
                                      (void *)host, &e);
    if (e != CL_SUCCESS || !m->chunks[c]) {
        o2r_set_error(ctx, "clCreateBuffer(weights of model '%s', chunk %u of %u: %llu bytes "
                      "from payload offset %llu): %s", d->name, (unsigned)c + 1,
                      (unsigned)m->plan.n_weight_chunks, (unsigned long long)n,
                      (unsigned long long)src, o2r_cl_error_name(e));
        m->chunks[c] = NULL;
        st = O2R_ERR_CL;
        goto done;
    }
    if (host)
        goto done;
    uint64_t pos = src;
    for (uint32_t k = 0; k <= nr && e == CL_SUCCESS; k++) {
        const struct o2r_repack *r = k < nr ? &d->repacks[rp[k]] : NULL;
        const struct o2r_buffer *b = r ? &d->buffers[r->buf] : NULL;
        e = write_region(m, c, src, pos, b ? b->offset : src + n, map);
        if (!b || e != CL_SUCCESS)
            break;
        o2r_repack_conv(r, map + O2R_WEIGHTS_HEADER + b->offset, tmp);
        e = o2r_fault_cl("clEnqueueWriteBuffer");
        if (e == CL_SUCCESS)
            e = clEnqueueWriteBuffer(ctx->queue, m->chunks[c], CL_TRUE,
                                     (size_t)(b->offset - src), (size_t)b->size, tmp, 0, NULL,
                                     NULL);
        pos = b->offset + b->size;
    }
    if (e != CL_SUCCESS) {
        o2r_set_error(ctx, "clEnqueueWriteBuffer(weights of model '%s', chunk %u of %u: %llu "
                      "bytes from payload offset %llu, %u repacked tensors): %s", d->name,
                      (unsigned)c + 1, (unsigned)m->plan.n_weight_chunks, (unsigned long long)n,
                      (unsigned long long)src, (unsigned)nr, o2r_cl_error_name(e));
        st = O2R_ERR_CL;
    }
done:
    o2r_free(rp);
    return st;
}

/* $ONNX2CL_WEIGHTS_VERIFY: auto (default: the payload checksum is checked once per file
 * version, see weights_stamp) or always (at every start). O2R_ERR_ARG for another value. */
static o2r_status weights_verify_mode(struct o2r_ctx *ctx, int *always)
{
    const char *mode = getenv("ONNX2CL_WEIGHTS_VERIFY");
    *always = mode && strcmp(mode, "always") == 0;
    if (mode && *mode && !*always && strcmp(mode, "auto") != 0) {
        o2r_set_error(ctx, "$ONNX2CL_WEIGHTS_VERIFY=%s: expected auto or always", mode);
        return O2R_ERR_ARG;
    }
    return O2R_OK;
}

/* Whether the weights file should stay mapped as the memory of the weights chunks
 * ($ONNX2CL_WEIGHTS_UPLOAD: auto, the default = on CPU devices whose memory is the host's
 * (CL_DEVICE_HOST_UNIFIED_MEMORY), where a copy only doubles the memory and costs seconds;
 * map = on any device (the driver may still copy); copy = never). O2R_ERR_ARG for another
 * value. */
static o2r_status weights_mapping_wanted(struct o2r_model *m, int *keep)
{
    const char *mode = getenv("ONNX2CL_WEIGHTS_UPLOAD");
    *keep = 0;
    if (mode && *mode && strcmp(mode, "auto") != 0 && strcmp(mode, "map") != 0 &&
        strcmp(mode, "copy") != 0) {
        o2r_set_error(m->ctx, "$ONNX2CL_WEIGHTS_UPLOAD=%s: expected auto, map or copy", mode);
        return O2R_ERR_ARG;
    }
    if (mode && strcmp(mode, "copy") == 0)
        return O2R_OK;
    if (mode && strcmp(mode, "map") == 0) {
        *keep = 1;
        return O2R_OK;
    }
    *keep = o2r_ctx_memory_is_host(m->ctx);
    return O2R_OK;
}

/* "Verified before" stamps: checking the payload checksum reads the whole file (0.5-1 s for
 * the 3.4 GB SD 1.5 UNet, memory-bound), most of a warm start. After a successful check of a
 * file whose last change is at least O2R_STAMP_SETTLE_S old, a stamp in the cache folder (one
 * per absolute path of a weights file, replaced when the file changes) records its version
 * (device, inode, size, mtime, ctime: o2r_fmap_version) with the header's checksum and layout
 * hash; a later start that finds the same line skips the payload check. A write through the
 * file system changes ctime, so a changed file is checked again. The settle time is git's
 * "racily clean" rule: file times have a coarse clock (a jiffy), so a file changed again within
 * the same tick as a check would keep its times. Where the platform gives no version (Windows;
 * tmpfs/ramfs, which keep the times of writes through a shared mapping), the cache folder is
 * unusable or $ONNX2CL_WEIGHTS_VERIFY=always, every start checks. A stamp is a cache entry:
 * failing to write one is never an error. */
#define O2R_STAMP_SETTLE_S 2.0

/* The stamp line for the mapped weights file and its stamp path; 0 when there is none. */
static int weights_stamp(const struct o2r_fmap *fm, const char *wpath, uint64_t checksum,
                         uint64_t layout, char *line, size_t lcap, char *path, size_t pcap,
                         int *settled)
{
    char ver[200], dir[4096];
    double age = 0;
    uint64_t key = 0;
    if (o2r_fmap_version(fm, wpath, ver, sizeof ver, &key, &age) != 0 ||
        !o2r_cache_dir(dir, sizeof dir, 1))
        return 0;
    *settled = age >= O2R_STAMP_SETTLE_S;
    int n = snprintf(line, lcap, "onnx2cl weights verified 1: %s checksum %016llx layout %016llx\n",
                     ver, (unsigned long long)checksum, (unsigned long long)layout);
    int k = snprintf(path, pcap, "%s/weights-%016llx.verified", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < lcap && k > 0 && (size_t)k < pcap;
}

/* 1 when the stamp file at path holds exactly line. */
static int stamp_matches(const char *path, const char *line)
{
    char got[512] = "";
    int odd = 0;
    FILE *f = o2r_fopen_regular(path, &odd); /* a FIFO there must not hang the start */
    if (!f)
        return 0;
    size_t n = fread(got, 1, sizeof got - 1, f);
    fclose(f);
    got[n] = 0;
    return strcmp(got, line) == 0;
}

/* Writes line to path (temporary file + rename); failures are ignored (a cache entry). */
static void stamp_write(const char *path, const char *line)
{
    char tmp[4200];
    FILE *f = o2r_tmp_create(path, tmp, sizeof tmp);
    if (!f)
        return;
    int ok = fputs(line, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || o2r_rename_replace(tmp, path) != 0)
        remove(tmp);
}

/* Checks the mapped weights file fm at path (the layout in onnx2cl_rt.h): magic, format version,
 * header bytes, storage dtype, truncation, and the payload checksum (skipped when a "verified
 * before" stamp matches: *stamped = 1; verify_always: never skipped); with a model d also its
 * storage dtype, layout hash, payload size and the layout trailer. O2R_OK, or an error naming the
 * file and what is wrong in ctx's error. */
static o2r_status check_weights_file(struct o2r_ctx *ctx, const struct o2r_model_desc *d,
                                     const char *path, const struct o2r_fmap *fm,
                                     int verify_always, int *stamped)
{
    const unsigned char *map = fm->data;
    o2r_status st;
    /* the magic first: a short file of another kind (an .npy, a text file) is not "truncated" */
    if (fm->size < 8) {
        o2r_set_error(ctx, "%s is not an onnx2cl weights file (%llu bytes, shorter than the "
                      "8-byte magic)", path, (unsigned long long)fm->size);
        return O2R_ERR_FORMAT;
    }
    if (memcmp(map, O2R_WEIGHTS_MAGIC, 8) != 0) {
        char got[40];
        int k = 0;
        for (int i = 0; i < 8; i++)
            k += snprintf(got + k, sizeof got - (size_t)k, "%s%02x", i ? " " : "", map[i]);
        o2r_set_error(ctx, "%s is not an onnx2cl weights file (bad magic: bytes 0-7 are %s, "
                      "expected \"%s\\0\")", path, got, O2R_WEIGHTS_MAGIC);
        return O2R_ERR_FORMAT;
    }
    if (fm->size < O2R_WEIGHTS_HEADER) {
        o2r_set_error(ctx, "weights file %s is %llu bytes, shorter than its %u-byte header "
                      "(truncated?)", path, (unsigned long long)fm->size, O2R_WEIGHTS_HEADER);
        return O2R_ERR_FORMAT;
    }
    uint32_t version;
    uint64_t payload, checksum;
    memcpy(&version, map + 8, 4);
    memcpy(&payload, map + 16, 8);
    memcpy(&checksum, map + 24, 8);
    if (version != O2R_WEIGHTS_VERSION) {
        if (version == 1 || version == 2)
            o2r_set_error(ctx, "weights file %s has format version %u, this runtime reads version "
                          "%u, whose files serve every --shape build; the file is from an older "
                          "onnx2cl (write it again with this onnx2cl: onnx2cl MODEL.onnx "
                          "--weights-only -o FILE.weights, or compile the model again)", path,
                          (unsigned)version, O2R_WEIGHTS_VERSION);
        else
            o2r_set_error(ctx, "weights file %s has format version %u (header bytes 8-11), this "
                          "runtime reads version %u (%s)", path, (unsigned)version,
                          O2R_WEIGHTS_VERSION, version > O2R_WEIGHTS_VERSION && version < 256 ?
                          "a newer onnx2cl, or a damaged file" : "a damaged file: no onnx2cl "
                          "wrote this version");
        return O2R_ERR_FORMAT;
    }
    st = check_header_bytes(ctx, path, map);
    if (st != O2R_OK)
        return st;
    /* weights storage dtype (--weights-dtype): refused by name before the layout hash */
    uint32_t file_wdt, want_wdt = !d ? 0 : d->weights_dtype ? d->weights_dtype : O2R_F32;
    memcpy(&file_wdt, map + 12, 4);
    if (file_wdt != O2R_F32 && file_wdt != O2R_F16) {
        o2r_set_error(ctx, "weights file %s has an unknown weights dtype %u in header bytes "
                      "12-15 (float32 %d or float16 %d; a damaged file)", path, (unsigned)file_wdt,
                      O2R_F32, O2R_F16);
        return O2R_ERR_FORMAT;
    }
    if (d && file_wdt != want_wdt) {
        const char *fw = file_wdt == O2R_F16 ? "f16" : "f32", *ww = want_wdt == O2R_F16 ? "f16" : "f32";
        o2r_set_error(ctx, "weights file %s stores its weights as %s (written with onnx2cl "
                      "--weights-dtype %s), model '%s' was compiled for %s weights "
                      "(--weights-dtype %s): write the weights with --weights-dtype %s, or "
                      "compile the model with --weights-dtype %s", path,
                      file_wdt == O2R_F16 ? "float16" : "float32", fw, d->name,
                      want_wdt == O2R_F16 ? "float16" : "float32", ww, ww, fw);
        return O2R_ERR_MISMATCH;
    }
    /* the weights layout (what is stored where, in which form), never the values: any file
     * of the same layout loads, whatever --shape or model file it was written from */
    uint64_t file_layout;
    memcpy(&file_layout, map + 96, 8);
    const uint64_t want_layout = d ? o2r_desc_layout_hash(d) : file_layout;
    if (file_layout != want_layout) {
        char where[1536];
        explain_layout_diff(d, map, fm->size, where, sizeof where);
        o2r_set_error(ctx, "weights file %s does not fit model '%s': its weights layout hash is "
                      "%016llx, the model's %016llx (another model structure, --weights-dtype, "
                      "fusion flags or onnx2cl version)%s: write the weights for this model with "
                      "onnx2cl MODEL.onnx --weights-only -o FILE.weights and the flags this build "
                      "was compiled with (--weights-dtype, --no-fuse)", path, d->name,
                      (unsigned long long)file_layout, (unsigned long long)want_layout, where);
        return O2R_ERR_MISMATCH;
    }
    if (d && payload != d->weights_file_bytes) {
        o2r_set_error(ctx, "weights file %s says it holds %llu bytes of weights (header bytes "
                      "16-23), model '%s' expects %llu and the layout hash matches (a damaged "
                      "file)", path, (unsigned long long)payload, d->name,
                      (unsigned long long)d->weights_file_bytes);
        return O2R_ERR_MISMATCH;
    }
    if (fm->size - O2R_WEIGHTS_HEADER < payload) {
        o2r_set_error(ctx, "weights file %s is truncated: %llu bytes, header + payload need %llu",
                      path, (unsigned long long)fm->size,
                      (unsigned long long)(payload + O2R_WEIGHTS_HEADER));
        return O2R_ERR_FORMAT;
    }
    if ((st = check_trailer(ctx, d, path, map, fm->size, payload)) != O2R_OK)
        return st;
    char line[512], spath[4300];
    int settled = 0, stamp = !verify_always &&
        weights_stamp(fm, path, checksum, want_layout, line, sizeof line, spath, sizeof spath,
                      &settled);
    if (stamp && stamp_matches(spath, line)) {
        *stamped = 1; /* checked at an earlier start, unchanged since */
    } else {
        uint64_t actual = o2r_weights_checksum(map + O2R_WEIGHTS_HEADER, (size_t)payload);
        if (actual != checksum) {
            o2r_set_error(ctx, "weights file %s is corrupt: payload checksum %016llx, header "
                          "bytes 24-31 say %016llx", path, (unsigned long long)actual,
                          (unsigned long long)checksum);
            return O2R_ERR_FORMAT;
        }
        if (stamp && settled)
            stamp_write(spath, line);
    }
    return O2R_OK;
}

o2r_status o2r_weights_verify(const char *path, char *err, size_t errcap)
{
    struct o2r_fmap fm = {0};
    int always = 0, stamped = 0;
    struct o2r_ctx *ctx = o2r_calloc(1, sizeof *ctx); /* for its error buffer alone: no device */
    if (!ctx || !path) {
        o2r_free(ctx);
        if (err && errcap) snprintf(err, errcap, "%s", path ? "out of host memory" : "no weights file named");
        return path ? O2R_ERR_NOMEM : O2R_ERR_ARG;
    }
    o2r_status st = weights_verify_mode(ctx, &always);
    if (st == O2R_OK)
        st = o2r_fmap_open(path, "weights file", &fm, ctx->err, sizeof ctx->err);
    if (st == O2R_OK)
        st = check_weights_file(ctx, NULL, path, &fm, always, &stamped);
    o2r_fmap_close(&fm);
    if (err && errcap) snprintf(err, errcap, "%s", st == O2R_OK ? "" : ctx->err);
    o2r_free(ctx);
    return st;
}

/* Maps and checks the weights file and uploads each weights chunk of m->plan from it and from
 * the build's constants, rearranging the repacked tensors on the way. */
static o2r_status load_weights(struct o2r_model *m, const char *path)
{
    struct o2r_ctx *ctx = m->ctx;
    const struct o2r_model_desc *d = m->desc;
    o2r_status st = O2R_OK;
    struct o2r_fmap fm = {0};
    const unsigned char *map = NULL;
    void *tmp = NULL; /* host copy of one repacked tensor */
    int keep_map = 0, verify_always = 0;
    /* a bad $ONNX2CL_WEIGHTS_UPLOAD or $ONNX2CL_WEIGHTS_VERIFY: always an error */
    st = weights_mapping_wanted(m, &keep_map);
    if (st == O2R_OK)
        st = weights_verify_mode(ctx, &verify_always);
    if (st != O2R_OK || d->weights_bytes == 0)
        return st;
    if (d->weights_file_bytes == 0) /* only the build's own constants: no file to read */
        goto upload;
    if (!path || !*path) {
        o2r_set_error(ctx, "model '%s' needs a weights file (%llu bytes of weights) and none "
                      "was given", d->name, (unsigned long long)d->weights_file_bytes);
        return O2R_ERR_ARG;
    }
    st = o2r_fmap_open(path, "weights file", &fm, ctx->err, sizeof ctx->err);
    if (st != O2R_OK)
        return st;
    map = fm.data;
    int stamped = 0;
    st = check_weights_file(ctx, d, path, &fm, verify_always, &stamped);
    if (st != O2R_OK)
        goto cleanup;
    m->weights_stamped = stamped;
upload:; /* a label cannot be followed by a declaration before C23 (clang 14) */
    if (keep_map && fm.data) { /* the model owns the mapping from here (o2r_model_free) */
        m->wmap = fm;
        memset(&fm, 0, sizeof fm);
        map = m->wmap.data;
    }
    uint64_t most = 0; /* the largest repacked tensor the selected kernel class reads */
    for (uint32_t i = 0; i < d->n_repacks; i++)
        if (m->plan.buf_chunk[d->repacks[i].buf] != UINT32_MAX &&
            d->buffers[d->repacks[i].buf].size > most)
            most = d->buffers[d->repacks[i].buf].size;
    tmp = most ? o2r_malloc((size_t)most) : NULL;
    if (most && !tmp) {
        o2r_set_error(ctx, "out of host memory repacking the weights of model '%s' (%llu bytes "
                      "for the largest repacked tensor)", d->name, (unsigned long long)most);
        st = O2R_ERR_NOMEM;
        goto cleanup;
    }
    for (uint32_t c = 0; c < m->plan.n_weight_chunks && st == O2R_OK; c++)
        st = upload_chunk(m, c, map, tmp);
    if (m->wmap.data && !m->n_mapped_chunks)
        o2r_fmap_close(&m->wmap); /* every chunk was copied: the mapping is not needed */
cleanup:
    o2r_free(tmp);
    o2r_fmap_close(&fm);
    return st;
}

/* Creates one cl_kernel per distinct kernel name and maps each launch to its kernel. */
static o2r_status create_kernels(struct o2r_model *m)
{
    const struct o2r_model_desc *d = m->desc;
    m->kernels = o2r_calloc(d->n_launches, sizeof *m->kernels);
    m->kernel_names = o2r_calloc(d->n_launches, sizeof *m->kernel_names);
    m->launch_kernel = o2r_calloc(d->n_launches, sizeof *m->launch_kernel);
    if (!m->kernels || !m->kernel_names || !m->launch_kernel) {
        o2r_set_error(m->ctx, "out of host memory creating kernels of model '%s'", d->name);
        return O2R_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < d->n_launches; i++) {
        if (!o2r_launch_selected(&d->launches[i], m->kclass) || d->launches[i].check)
            continue; /* another class's variant (its kernel is not in this program), a check */
        const char *name = m->launches[i].kernel; /* tunable: the chosen instance */
        uint32_t k;
        for (k = 0; k < m->n_kernels; k++)
            if (strcmp(m->kernel_names[k], name) == 0)
                break;
        m->launch_kernel[i] = k;
        if (k < m->n_kernels)
            continue;
        cl_int e = o2r_fault_cl("clCreateKernel");
        cl_kernel kern = NULL;
        if (e == CL_SUCCESS)
            kern = clCreateKernel(m->program, name, &e);
        if (e != CL_SUCCESS || !kern) {
            o2r_set_error(m->ctx, "clCreateKernel(%s, node '%s'): %s", name,
                          d->launches[i].node ? d->launches[i].node : "?", o2r_cl_error_name(e));
            return O2R_ERR_CL;
        }
        m->kernel_names[m->n_kernels] = name;
        m->kernels[m->n_kernels++] = kern;
    }
    return O2R_OK;
}

/* Reads a byte-count environment variable (o2r_parse_bytes syntax) into *v when it is set;
 * a set but malformed value is an error naming the variable. */
static o2r_status env_bytes(struct o2r_ctx *ctx, const char *var, uint64_t *v, int *set)
{
    const char *s = getenv(var);
    *set = 0;
    if (!s)
        return O2R_OK;
    if (o2r_parse_bytes(s, v) != O2R_OK) {
        o2r_set_error(ctx, "$%s='%s' is not a byte count: expected a positive integer with an "
                      "optional K, M or G suffix (2^10, 2^20, 2^30), e.g. 268435456, 256K, 64M, 2G",
                      var, s);
        return O2R_ERR_ARG;
    }
    *set = 1;
    return O2R_OK;
}

/* Splits the model's buffers into chunks under the allocation limit and checks that weights +
 * arena + scratch fit the device's global memory; fills m->plan. */
static o2r_status plan_memory(struct o2r_model *m)
{
    struct o2r_ctx *ctx = m->ctx;
    const struct o2r_model_desc *d = m->desc;
    uint64_t env_alloc = 0, env_global = 0, global = 0;
    int alloc_set, global_set;
    char src[128];
    o2r_status st = env_bytes(ctx, "ONNX2CL_MAX_ALLOC", &env_alloc, &alloc_set);
    if (st == O2R_OK)
        st = env_bytes(ctx, "ONNX2CL_GLOBAL_MEM", &env_global, &global_set);
    if (st != O2R_OK)
        return st;
    cl_int e = clGetDeviceInfo(ctx->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global,
                               NULL);
    if (e != CL_SUCCESS) {
        o2r_set_error(ctx, "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE, %s): %s",
                      ctx->device_name, o2r_cl_error_name(e));
        return O2R_ERR_CL;
    }
    uint64_t limit = ctx->max_alloc;
    if (alloc_set && env_alloc < limit) {
        limit = env_alloc;
        snprintf(src, sizeof src, "$ONNX2CL_MAX_ALLOC");
    } else {
        snprintf(src, sizeof src, "CL_DEVICE_MAX_MEM_ALLOC_SIZE of the device");
    }
    const char *gsrc = "CL_DEVICE_GLOBAL_MEM_SIZE";
    if (global_set && env_global < global) {
        global = env_global;
        gsrc = "$ONNX2CL_GLOBAL_MEM, lowered for testing";
    }
    st = o2r_mem_plan_build(d, m->kclass, limit, src, &m->plan, ctx->err, sizeof ctx->err);
    if (st != O2R_OK)
        return st;
    uint64_t scratch = 0; /* the runtime allocates nothing besides the chunks (memplan.c) */
    uint64_t need = m->plan.weights_bytes + m->plan.arena_bytes + scratch;
    if (need > global) {
        o2r_set_error(ctx, "model '%s' needs %llu bytes (%.1f MiB) of device memory (weights %llu "
                      "+ arena %llu + scratch %llu bytes), more than the %llu bytes (%.1f MiB) of "
                      "%s (%s)", d->name, (unsigned long long)need, (double)need / 1048576.0,
                      (unsigned long long)m->plan.weights_bytes,
                      (unsigned long long)m->plan.arena_bytes, (unsigned long long)scratch,
                      (unsigned long long)global, (double)global / 1048576.0, ctx->device_name,
                      gsrc);
        return O2R_ERR_NODEVICE;
    }
    uint32_t nc = m->plan.n_weight_chunks + m->plan.n_arena_chunks;
    m->chunks = o2r_calloc(nc ? nc : 1, sizeof *m->chunks);
    m->bufs = o2r_calloc(d->n_buffers ? d->n_buffers : 1, sizeof *m->bufs);
    if (!m->chunks || !m->bufs) {
        o2r_set_error(ctx, "out of host memory creating buffers of model '%s'", d->name);
        return O2R_ERR_NOMEM;
    }
    return O2R_OK;
}

/* Allocates the arena chunks and one sub-buffer per distinct region (chunk, offset, size,
 * flags) the selected class uses: desc buffers with the same region (an arena slot reused by
 * tensors of one shape, common in UNets) share one cl_mem, retained once per buffer so that
 * o2r_model_free's one release per buffer balances. Fewer driver objects, and no two sub-buffers
 * of identical regions (NVIDIA's driver 580 crashed releasing the sub-buffers of the UNet and VAE
 * decoder, never of CLIP: bench/gpu/README.md). */
static o2r_status create_buffers(struct o2r_model *m)
{
    struct o2r_ctx *ctx = m->ctx;
    const struct o2r_model_desc *d = m->desc;
    const struct o2r_mem_plan *p = &m->plan;
    cl_int e;
    for (uint32_t c = p->n_weight_chunks; c < p->n_weight_chunks + p->n_arena_chunks; c++) {
        e = o2r_fault_cl("clCreateBuffer");
        if (e == CL_SUCCESS)
            m->chunks[c] = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE,
                                          (size_t)p->chunk_bytes[c], NULL, &e);
        if (e != CL_SUCCESS || !m->chunks[c]) {
            o2r_set_error(ctx, "clCreateBuffer(arena of model '%s', chunk %u of %u, %llu bytes): "
                          "%s", d->name, (unsigned)(c - p->n_weight_chunks) + 1,
                          (unsigned)p->n_arena_chunks, (unsigned long long)p->chunk_bytes[c],
                          o2r_cl_error_name(e));
            m->chunks[c] = NULL;
            return O2R_ERR_CL;
        }
    }
    /* open-addressing table of the buffers already given a sub-buffer, by region */
    uint32_t cap = 16;
    while ((uint64_t)cap < 2ull * d->n_buffers) cap *= 2;
    uint32_t *seen = o2r_calloc(cap, sizeof *seen); /* buffer index + 1; 0: empty */
    if (!seen) {
        o2r_set_error(ctx, "out of host memory creating buffers of model '%s'", d->name);
        return O2R_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < d->n_buffers; i++) {
        const struct o2r_buffer *b = &d->buffers[i];
        if (p->buf_chunk[i] == UINT32_MAX)
            continue; /* only other kernel classes use it: no sub-buffer, never an argument */
        cl_mem parent = m->chunks[p->buf_chunk[i]];
        cl_buffer_region reg = {(size_t)p->buf_off[i], (size_t)b->size};
        cl_mem_flags fl = b->space == O2R_SPACE_WEIGHTS ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
        uint64_t h = ((uint64_t)p->buf_chunk[i] * 0x9E3779B97F4A7C15ull) ^
                     (p->buf_off[i] * 0xC2B2AE3D27D4EB4Full) ^ (b->size * 0x165667B19E3779F9ull) ^ fl;
        uint32_t slot = (uint32_t)(h ^ (h >> 29)) & (cap - 1), j = UINT32_MAX;
        for (; seen[slot]; slot = (slot + 1) & (cap - 1)) {
            uint32_t k = seen[slot] - 1;
            if (p->buf_chunk[k] == p->buf_chunk[i] && p->buf_off[k] == p->buf_off[i] &&
                d->buffers[k].size == b->size && d->buffers[k].space == b->space) {
                j = k;
                break;
            }
        }
        if (j != UINT32_MAX && clRetainMemObject(m->bufs[j]) == CL_SUCCESS) {
            m->bufs[i] = m->bufs[j];
            continue;
        }
        e = o2r_fault_cl("clCreateSubBuffer");
        if (e == CL_SUCCESS)
            m->bufs[i] = clCreateSubBuffer(parent, fl, CL_BUFFER_CREATE_TYPE_REGION, &reg, &e);
        if (e != CL_SUCCESS || !m->bufs[i]) {
            o2r_set_error(ctx, "clCreateSubBuffer(model '%s', buffer %u '%s' in %s chunk %u, "
                          "offset %llu, size %llu): %s", d->name, (unsigned)i,
                          b->name ? b->name : "?",
                          b->space == O2R_SPACE_WEIGHTS ? "weights" : "arena",
                          (unsigned)p->buf_chunk[i], (unsigned long long)p->buf_off[i],
                          (unsigned long long)b->size, o2r_cl_error_name(e));
            m->bufs[i] = NULL;
            o2r_free(seen);
            return O2R_ERR_CL;
        }
        if (j == UINT32_MAX)
            seen[slot] = i + 1;
    }
    o2r_free(seen);
    return O2R_OK;
}

o2r_status o2r_model_init(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                          const char *weights_path, struct o2r_model **out)
{
    return o2r_model_init_mode(ctx, desc, weights_path, 0, out);
}

o2r_status o2r_model_init_mode(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                               const char *weights_path, uint32_t tune_mode,
                               struct o2r_model **out)
{
    o2r_status st;
    if (!ctx)
        return O2R_ERR_ARG;
    ctx->err[0] = 0;
    if (!desc || !out) {
        o2r_set_error(ctx, "o2r_model_init: desc and out must not be NULL");
        return O2R_ERR_ARG;
    }
    *out = NULL;
    st = validate_desc(ctx, desc);
    if (st != O2R_OK)
        return st;
    int ahead = 0;
    st = o2r_build_ahead_mode(ctx, &ahead);
    if (st != O2R_OK)
        return st;
    if (ctx->base_align_bits == 0 || ((uint64_t)O2R_ALIGN * 8) % ctx->base_align_bits != 0) {
        o2r_set_error(ctx, "device %s has CL_DEVICE_MEM_BASE_ADDR_ALIGN = %u bits, which does "
                      "not divide the %d-byte sub-buffer alignment generated code assumes "
                      "(O2R_ALIGN): this device is not supported", ctx->device_name,
                      (unsigned)ctx->base_align_bits, O2R_ALIGN);
        return O2R_ERR_CL;
    }
    struct o2r_model *m = o2r_calloc(1, sizeof *m);
    if (!m) {
        o2r_set_error(ctx, "out of host memory creating model '%s'", desc->name);
        return O2R_ERR_NOMEM;
    }
    m->ctx = ctx;
    m->desc = desc;
    m->kclass = ctx->kclass;
    /* launches and arguments as they run: tunable launches get their chosen tiles (tune.c) */
    m->launches = o2r_malloc(sizeof *m->launches * (desc->n_launches + 1));
    m->args = o2r_malloc(sizeof *m->args * (desc->n_args + 1));
    if (!m->launches || !m->args) {
        o2r_set_error(ctx, "out of host memory creating model '%s'", desc->name);
        st = O2R_ERR_NOMEM;
        goto fail;
    }
    if (desc->n_launches)
        memcpy(m->launches, desc->launches, sizeof *m->launches * desc->n_launches);
    if (desc->n_args)
        memcpy(m->args, desc->args, sizeof *m->args * desc->n_args);
    st = plan_memory(m);
    if (st != O2R_OK)
        goto fail;
    st = o2r_tune_choose(m, tune_mode);
    if (st != O2R_OK)
        goto fail;
    /* weights first: a wrong, truncated or corrupt weights file is refused before the program
     * build, which takes seconds to minutes on a first start */
    double t0 = o2r_now_ms();
    st = load_weights(m, weights_path);
    if (st != O2R_OK)
        goto fail;
    double t1 = o2r_now_ms();
    st = o2r_schedule_source(m);
    if (st != O2R_OK)
        goto fail;
    st = o2r_program_get(ctx, desc, m->source, m->source_len, &m->program, &m->cache_hit);
    if (o2r_err_is_build(ctx, st)) {
        /* tiles from a tuning file (possibly of another driver or device of this vendor) or a
         * built-in vendor default may not build with this driver: never let them stop a start */
        char first[300];
        o2r_err_first_line(ctx, first, sizeof first);
        const char *tf = o2r_tune_file_path(m);
        const char *dropped = o2r_tune_reset_compiled(m);
        if (dropped) {
            fprintf(stderr, "onnx2cl: warning: model '%s': the program with the tiles of %s%s%s "
                    "did not build (%s); building it with the compiled default tiles\n",
                    desc->name, dropped, tf[0] ? " in " : "", tf, first);
            o2r_free(m->source);
            m->source = NULL;
            st = o2r_schedule_source(m);
            if (st != O2R_OK)
                goto fail;
            st = o2r_program_get(ctx, desc, m->source, m->source_len, &m->program,
                                 &m->cache_hit);
        }
    }
    if (st != O2R_OK)
        goto fail;
    st = create_kernels(m);
    if (st != O2R_OK)
        goto fail;
    double t2 = o2r_now_ms();
    st = create_buffers(m);
    if (st != O2R_OK)
        goto fail;
    m->weights_ms = t1 - t0;
    m->build_ms = t2 - t1;
    if (!tune_mode)
        o2r_local_sizes(m); /* PoCL: powers of two for the launches left to the driver */
    if (ahead && !tune_mode)
        o2r_build_ahead_start(m); /* kernels compile in the background (build_ahead.c) */
    *out = m;
    return O2R_OK;
fail:
    o2r_model_free(m);
    return st;
}

/* Releases the scratch profiling events [0, n). */
static void release_events(struct o2r_model *m, uint32_t n)
{
    for (uint32_t i = 0; m->events && i < n; i++)
        if (m->events[i]) {
            clReleaseEvent(m->events[i]);
            m->events[i] = NULL;
        }
}

cl_int o2r_set_kernel_arg(cl_kernel k, cl_uint j, const struct o2r_arg *a, cl_mem buf)
{
    switch (a->kind) {
    case O2R_ARG_BUF: return clSetKernelArg(k, j, sizeof(cl_mem), &buf);
    case O2R_ARG_I32: {
        cl_int v = a->u.i32;
        return clSetKernelArg(k, j, sizeof v, &v);
    }
    case O2R_ARG_I64: {
        cl_long v = a->u.i64;
        return clSetKernelArg(k, j, sizeof v, &v);
    }
    case O2R_ARG_F32: {
        cl_float v = a->u.f32;
        return clSetKernelArg(k, j, sizeof v, &v);
    }
    default: return clSetKernelArg(k, j, (size_t)a->u.local_bytes, NULL);
    }
}

/* Sets the arguments of launch l (from m->args) on kernel k. */
static o2r_status set_args(struct o2r_model *m, const struct o2r_launch *l, cl_kernel k)
{
    for (uint32_t j = 0; j < l->nargs; j++) {
        const struct o2r_arg *a = &m->args[l->first_arg + j];
        cl_int e;
        e = o2r_set_kernel_arg(k, j, a, a->kind == O2R_ARG_BUF ? m->bufs[a->u.buf] : NULL);
        if (e != CL_SUCCESS) {
            o2r_set_error(m->ctx, "clSetKernelArg(%s, arg %u, node '%s'): %s", l->kernel,
                          (unsigned)j, l->node ? l->node : "?", o2r_cl_error_name(e));
            return O2R_ERR_CL;
        }
    }
    return O2R_OK;
}

o2r_status o2r_model_upload_inputs(struct o2r_model *m, const void *const *inputs)
{
    const struct o2r_model_desc *d = m->desc;
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        const struct o2r_io *io = &d->inputs[i];
        if (!io->nbytes)
            continue;
        cl_int e = clEnqueueWriteBuffer(m->ctx->queue, m->bufs[io->buf], CL_FALSE, 0,
                                        (size_t)io->nbytes, inputs[i], 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            o2r_set_error(m->ctx, "clEnqueueWriteBuffer(input '%s', %llu bytes): %s", io->name,
                          (unsigned long long)io->nbytes, o2r_cl_error_name(e));
            return O2R_ERR_CL;
        }
    }
    return O2R_OK;
}

/* Runs the run-time check l (o2r_launch.check): waits for the launches before it by reading
 * the byte of its condition buffer, and fails when it equals the check's argument 1. */
static o2r_status run_check(struct o2r_model *m, uint32_t li, const struct o2r_launch *l)
{
    const struct o2r_arg *a = &m->args[l->first_arg];
    unsigned char c = 0;
    cl_int e = o2r_fault_cl("clEnqueueReadBuffer");
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(m->ctx->queue, m->bufs[a[0].u.buf], CL_TRUE, 0, 1, &c, 0, NULL,
                                NULL);
    if (e != CL_SUCCESS) {
        o2r_set_error(m->ctx, "clEnqueueReadBuffer(run-time check, launch %u, node '%s'): %s",
                      (unsigned)li, l->node ? l->node : "?", o2r_cl_error_name(e));
        return O2R_ERR_CL;
    }
    if ((c != 0) == (a[1].u.i32 != 0)) {
        o2r_set_error(m->ctx, "model '%s': %s", m->desc->name, l->check);
        return O2R_ERR_UNSUPPORTED;
    }
    return O2R_OK;
}

o2r_status o2r_launch_enqueue(struct o2r_model *m, uint32_t li, const struct o2r_launch *l,
                              cl_kernel k, cl_event *ev)
{
    size_t gws[3] = {1, 1, 1}, lws[3] = {1, 1, 1};
    int empty = 0, lws_set = 0;
    if (ev)
        *ev = NULL;
    if (l->check)
        return run_check(m, li, l);
    for (uint32_t q = 0; q < l->work_dim; q++) {
        gws[q] = (size_t)l->gws[q];
        lws[q] = (size_t)l->lws[q];
        empty |= gws[q] == 0;
        lws_set |= lws[q] != 0;
    }
    if (empty)
        return O2R_OK;
    o2r_status st = set_args(m, l, k);
    if (st != O2R_OK)
        return st;
    cl_int e = o2r_fault_cl("clEnqueueNDRangeKernel");
    if (e == CL_SUCCESS)
        e = clEnqueueNDRangeKernel(m->ctx->queue, k, l->work_dim, NULL, gws, lws_set ? lws : NULL,
                                   0, NULL, ev);
    if (e != CL_SUCCESS) {
        o2r_set_error(m->ctx, "clEnqueueNDRangeKernel(%s, node '%s'): %s [launch %u, gws "
                      "%zux%zux%zu, lws %zux%zux%zu]", l->kernel, l->node ? l->node : "?",
                      o2r_cl_error_name(e), (unsigned)li, gws[0], gws[1], gws[2],
                      lws_set ? lws[0] : 0, lws_set ? lws[1] : 0, lws_set ? lws[2] : 0);
        if (ev)
            *ev = NULL;
        return O2R_ERR_CL;
    }
    return O2R_OK;
}

/* Waits for the launches of a model's first run, saying on stderr how far they are when the wait
 * takes 1 s or more (at most one line per 5 s): "first run: N of M launches done after T s".
 * ev[i] is the event of launch i (NULL for launches not enqueued); the in-order queue completes
 * them in order. Returns when all are complete or one failed (the caller's clFinish reports). */
static void first_run_wait(struct o2r_model *m, cl_event *ev)
{
    const struct o2r_model_desc *d = m->desc;
    if (!ev)
        return;
    uint32_t n_ev = 0;
    for (uint32_t i = 0; i < d->n_launches; i++)
        n_ev += ev[i] != NULL;
    if (clFlush(m->ctx->queue) != CL_SUCCESS)
        return;
    const double t0 = o2r_now_ms();
    double said = t0 - 4000.0;
    uint32_t next = 0, done = 0; /* launches before `next` are complete */
    for (;;) {
        for (; next < d->n_launches; next++) {
            if (!ev[next])
                continue;
            cl_int status = CL_QUEUED;
            if (clGetEventInfo(ev[next], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                               NULL) != CL_SUCCESS || status < 0)
                return; /* failed: clFinish reports it */
            if (status != CL_COMPLETE)
                break;
            done++;
        }
        if (next == d->n_launches)
            return;
        const double now = o2r_now_ms();
        if (now - t0 >= 1000.0 && now - said >= 5000.0) {
            fprintf(stderr, "onnx2cl: model '%s': first run: %u of %u launches done after %.0f s%s\n",
                    d->name, (unsigned)done, (unsigned)n_ev, (now - t0) / 1000.0,
                    said < t0 ? " (with a cold OpenCL cache this includes compiling each kernel "
                                "at its first launch)" : "");
            said = now;
        }
        o2r_sleep_ms(now - t0 < 100.0 ? 2 : 20);
    }
}

o2r_status o2r_model_run(struct o2r_model *m, const void *const *inputs, void *const *outputs)
{
    if (!m)
        return O2R_ERR_ARG;
    struct o2r_ctx *ctx = m->ctx;
    const struct o2r_model_desc *d = m->desc;
    cl_command_queue q = ctx->queue;
    o2r_status st = O2R_OK;
    cl_int e;
    ctx->err[0] = 0;
    m->have_profile = 0;
    for (uint32_t i = 0; i < d->n_inputs; i++)
        if (d->inputs[i].nbytes && (!inputs || !inputs[i])) {
            o2r_set_error(ctx, "o2r_model_run(model '%s'): input %u ('%s') is NULL", d->name,
                          (unsigned)i, d->inputs[i].name);
            return O2R_ERR_ARG;
        }
    for (uint32_t i = 0; i < d->n_outputs; i++)
        if (d->outputs[i].nbytes && (!outputs || !outputs[i])) {
            o2r_set_error(ctx, "o2r_model_run(model '%s'): output %u ('%s') is NULL", d->name,
                          (unsigned)i, d->outputs[i].name);
            return O2R_ERR_ARG;
        }
    /* Progress of the first run (issue 11 item 4): drivers may compile each kernel at its first
     * launch (PoCL does, when the command is submitted: seconds to minutes for a UNet on a cold
     * cache), so the first run keeps an event per launch and its wait says how far it is. */
    const int first = m->runs++ == 0;
    cl_event *first_ev = NULL;
    if (first && !(m->profiling && m->events))
        first_ev = o2r_calloc(d->n_launches, sizeof *first_ev); /* NULL: no progress, no error */
    st = o2r_model_upload_inputs(m, inputs);
    if (st != O2R_OK)
        goto finish;
    for (uint32_t i = 0; i < d->n_launches; i++) {
        if (!o2r_launch_selected(&d->launches[i], m->kclass))
            continue;
        cl_event *ev = m->profiling && m->events ? &m->events[i] : first_ev ? &first_ev[i] : NULL;
        st = o2r_launch_enqueue(m, i, &m->launches[i], m->kernels[m->launch_kernel[i]], ev);
        if (st != O2R_OK)
            goto finish;
    }
    for (uint32_t i = 0; i < d->n_outputs; i++) {
        const struct o2r_io *io = &d->outputs[i];
        if (!io->nbytes)
            continue;
        e = clEnqueueReadBuffer(q, m->bufs[io->buf], CL_FALSE, 0, (size_t)io->nbytes, outputs[i],
                                0, NULL, NULL);
        if (e != CL_SUCCESS) {
            o2r_set_error(ctx, "clEnqueueReadBuffer(output '%s', %llu bytes): %s", io->name,
                          (unsigned long long)io->nbytes, o2r_cl_error_name(e));
            st = O2R_ERR_CL;
            goto finish;
        }
    }
finish:
    if (first && st == O2R_OK)
        first_run_wait(m, m->profiling && m->events ? m->events : first_ev);
    if (first_ev) {
        for (uint32_t i = 0; i < d->n_launches; i++)
            if (first_ev[i])
                clReleaseEvent(first_ev[i]);
    }
    /* Always wait: the queue may still read inputs[] / write outputs[]. */
    e = clFinish(q);
    if (e != CL_SUCCESS && st == O2R_OK) {
        o2r_set_error(ctx, "clFinish(model '%s', after %u launches): %s (a kernel failed on the "
                      "device)", d->name, (unsigned)d->n_launches, o2r_cl_error_name(e));
        st = O2R_ERR_CL;
    }
    if (st == O2R_OK && m->profiling && m->events) {
        for (uint32_t i = 0; i < d->n_launches; i++) {
            cl_ulong t0 = 0, t1 = 0;
            m->launch_ns[i] = 0;
            if (!m->events[i])
                continue;
            if (clGetEventProfilingInfo(m->events[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0,
                                        NULL) == CL_SUCCESS &&
                clGetEventProfilingInfo(m->events[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                                        NULL) == CL_SUCCESS && t1 >= t0)
                m->launch_ns[i] = t1 - t0;
        }
        m->have_profile = 1;
    }
    release_events(m, d->n_launches);
    o2r_free(first_ev);
    return st;
}

void o2r_model_free(struct o2r_model *m)
{
    if (!m)
        return;
    const struct o2r_model_desc *d = m->desc;
    o2r_build_ahead_finish(m); /* its launches use the kernels and weights buffers */
    release_events(m, d->n_launches);
    if (m->ctx && m->ctx->queue)
        clFinish(m->ctx->queue); /* nothing in flight uses what is released below */
    /* the kernels (which hold the buffers as arguments) and the program before the buffers */
    for (uint32_t k = 0; m->kernels && k < m->n_kernels; k++)
        clReleaseKernel(m->kernels[k]);
    if (m->program)
        clReleaseProgram(m->program);
    for (uint32_t i = 0; m->bufs && i < d->n_buffers; i++)
        if (m->bufs[i])
            clReleaseMemObject(m->bufs[i]);
    for (uint32_t c = 0; m->chunks && c < m->plan.n_weight_chunks + m->plan.n_arena_chunks; c++)
        if (m->chunks[c])
            clReleaseMemObject(m->chunks[c]);
    o2r_free(m->chunks);
    o2r_fmap_close(&m->wmap); /* after the chunks that used it */
    o2r_mem_plan_free(&m->plan);
    o2r_free(m->bufs);
    o2r_free(m->kernels);
    o2r_free(m->kernel_names);
    o2r_free(m->source);
    o2r_free(m->launch_kernel);
    o2r_free(m->events);
    o2r_free(m->launch_ns);
    o2r_free(m->launches);
    o2r_free(m->args);
    o2r_tune_free(m);
    o2r_free(m);
}

uint64_t o2r_model_device_bytes(const struct o2r_model *m)
{
    return m ? m->plan.weights_bytes + m->plan.arena_bytes : 0;
}

o2r_status o2r_model_set_profiling(struct o2r_model *m, int on)
{
    if (!m)
        return O2R_ERR_ARG;
    if (on && !m->events) {
        uint32_t n = m->desc->n_launches;
        m->events = o2r_calloc(n, sizeof *m->events);
        m->launch_ns = o2r_calloc(n, sizeof *m->launch_ns);
        if (!m->events || !m->launch_ns) {
            o2r_free(m->events);
            o2r_free(m->launch_ns);
            m->events = NULL;
            m->launch_ns = NULL;
            o2r_set_error(m->ctx, "out of host memory enabling profiling of model '%s'",
                          m->desc->name);
            return O2R_ERR_NOMEM;
        }
    }
    m->profiling = on != 0;
    return O2R_OK;
}

/* Per-op-kind total for the profile table. */
struct op_total {
    const char *op;   /* op kind (launch.op) */
    uint64_t ns;      /* summed device time */
    uint32_t count;   /* launches */
};

static int cmp_op_total(const void *a, const void *b)
{
    const struct op_total *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->op, y->op);
}

static const uint64_t *g_sort_ns; /* qsort context for cmp_launch */

static int cmp_launch(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return g_sort_ns[x] < g_sort_ns[y] ? 1 : g_sort_ns[x] > g_sort_ns[y] ? -1 : (x > y) - (x < y);
}

void o2r_model_print_profile(const struct o2r_model *m, void *fp)
{
    FILE *f = fp ? fp : stdout;
    if (!m)
        return;
    const struct o2r_model_desc *d = m->desc;
    if (!m->have_profile) {
        fprintf(f, "profile of model '%s': no profiled run (enable profiling, then run)\n",
                d->name);
        return;
    }
    uint32_t n = 0, nops = 0;
    uint64_t total = 0;
    struct op_total *ops = o2r_calloc(d->n_launches + 1, sizeof *ops);
    uint32_t *order = o2r_calloc(d->n_launches + 1, sizeof *order);
    if (!ops || !order) {
        fprintf(f, "profile of model '%s': out of host memory\n", d->name);
        goto done;
    }
    for (uint32_t i = 0; i < d->n_launches; i++) {
        if (!o2r_launch_selected(&d->launches[i], m->kclass) || d->launches[i].check)
            continue;
        const char *op = d->launches[i].op ? d->launches[i].op : "?";
        uint32_t k;
        for (k = 0; k < nops; k++)
            if (strcmp(ops[k].op, op) == 0)
                break;
        if (k == nops)
            ops[nops++].op = op;
        ops[k].ns += m->launch_ns[i];
        ops[k].count++;
        total += m->launch_ns[i];
        order[n++] = i;
    }
    qsort(ops, nops, sizeof *ops, cmp_op_total);
    g_sort_ns = m->launch_ns;
    qsort(order, n, sizeof *order, cmp_launch);
    fprintf(f, "profile of model '%s' on %s (%s kernels): %u launches, %.3f ms total device "
            "time\n", d->name, m->ctx->device_name, m->kclass == O2R_VARIANT_GPU ? "gpu" : "cpu",
            (unsigned)n, (double)total / 1e6);
    fprintf(f, "%-24s %8s %12s %7s %12s\n", "op", "launches", "total ms", "%", "avg us");
    for (uint32_t k = 0; k < nops; k++)
        fprintf(f, "%-24s %8u %12.3f %6.1f%% %12.1f\n", ops[k].op, (unsigned)ops[k].count,
                (double)ops[k].ns / 1e6, total ? 100.0 * (double)ops[k].ns / (double)total : 0.0,
                (double)ops[k].ns / 1e3 / ops[k].count);
    uint32_t top = n < 20 ? n : 20;
    fprintf(f, "top %u launches:\n%6s %12s %7s  %-28s %-16s %s\n", (unsigned)top, "#",
            "ms", "%", "kernel", "op", "node");
    for (uint32_t r = 0; r < top; r++) {
        const struct o2r_launch *l = &m->launches[order[r]];
        uint64_t ns = m->launch_ns[order[r]];
        fprintf(f, "%6u %12.3f %6.1f%%  %-28s %-16s %s\n", (unsigned)order[r], (double)ns / 1e6,
                total ? 100.0 * (double)ns / (double)total : 0.0, l->kernel, l->op ? l->op : "?",
                l->node ? l->node : "?");
    }
done:
    o2r_free(ops);
    o2r_free(order);
}

int o2r_model_cache_hit(const struct o2r_model *m)
{
    return m ? m->cache_hit : 0;
}

const struct o2r_mem_plan *o2r_model_mem_plan(const struct o2r_model *m)
{
    return m ? &m->plan : NULL;
}

uint32_t o2r_model_mapped_chunks(const struct o2r_model *m)
{
    return m ? m->n_mapped_chunks : 0;
}

int o2r_model_weights_stamped(const struct o2r_model *m)
{
    return m ? m->weights_stamped : 0;
}

void o2r_model_timing(const struct o2r_model *m, double *build_ms, double *weights_ms)
{
    if (build_ms)
        *build_ms = m ? m->build_ms : 0;
    if (weights_ms)
        *weights_ms = m ? m->weights_ms : 0;
}
