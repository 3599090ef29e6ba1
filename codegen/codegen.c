/* codegen.c — lowering driver, buffer assignment, memory plan and the in-memory descriptor.
 *
 * Steps of cg_build():
 *   1. walk live nodes in topological order; views (ops.def IR_F_VIEW) alias their input's
 *      buffer; every other node is handed to lower_<family>() which emits launches + args;
 *   2. every value a launch touches gets a buffer: constants -> the weights region (O2R_ALIGN
 *      aligned, in first-use order: first the weights file's part, then the constants whose
 *      bytes depend on the --shape bindings (ir_value.shape_dep), which the generated file
 *      holds, desc.const_data), everything else -> an arena slot;
 *   3. memory plan: each arena root buffer lives from the step that writes it first to the
 *      step that reads it last (graph inputs from step -1, graph outputs to the end); buffers
 *      whose lifetimes overlap (inclusive) never share bytes unless no kernel class touches
 *      both (a model runs one class: cpu-only and gpu-only temporaries may share); placement is greedy best-fit in
 *      decreasing size order, tried twice (equal sizes by index, then longest-lived first), the
 *      smaller arena kept (deterministic);
 *   4. the descriptor (runtime/onnx2cl_rt.h) is assembled from these tables.
 * Offset views (Concat/Slice/Split without copies; runtime/onnx2cl_rt.h o2r_buffer.view_of):
 *   an alias-set root may lie inside another root's bytes at a byte offset (a multiple of
 *   O2R_ALIGN): cg->within[r] / within_off[r]. It keeps its own buffer (own sub-buffer, so
 *   kernels need no offset argument) whose parent is the top of the chain (chains are resolved
 *   here, so a desc parent is never itself a view). Two ways make one:
 *     cg_place_into (Concat): the root of input x becomes a child of output y at x's slab, so
 *       x's producer writes in place and no copy is launched. The Concat must have the product
 *       of the dims before its axis 1 (each input one contiguous slab: batch-1 channel concat in
 *       NCHW, or a concat on the outermost non-1 axis); checked by lower_ka.c ka_move;
 *     cg_view_into (Slice, Split): output y, a contiguous run of input x, becomes a child of x.
 *   Safety: the child root is written by a launched node (not a graph input, constant, graph
 *   output or exposed value, nor a value that reaches one through views: cg->pinned), is not a
 *   child already (so an input used twice, or by two Concats, is placed once and copied
 *   otherwise), and is not an ancestor of the parent; the parent is an arena value. An input
 *   that does not qualify keeps its own copy launch. Nothing ever writes a parent's bytes but
 *   the producers of its members and its own producer's copies (SSA), so a member's bytes stay
 *   valid for as long as the parent lives.
 *   Memory: a view makes the top live from the first write of any member to the last read of
 *   any, which can cost more bytes than the copy saves. So a node's views must keep a static
 *   estimate of live bytes per step under its peak (est_commit: else the view extending the
 *   top's lifetime most is undone, its copy stays), and after planning, views are undone while
 *   the arena is larger than with none (plan_views; the greedy packing fragments). Lowerings
 *   emit every copy anyway (cg_view_copied); the copies of the views that stand are removed
 *   before the descriptor is built (drop_view_copies).
 *   Memory plan: only tops are placed; a child's lifetime counts for its top (first write of any
 *   member to last read of any), and its offset is the top's plus the relative offset.
 * The OpenCL source is the prelude plus each (family, dtype) pair in first-use order, split into
 * segments tagged with the kernel classes that use them (lower.h: cg_variant): first what every
 * class uses, then what only CPU variants use, then what only GPU variants use.
 * Everything is deterministic: the same graph gives byte-identical output.
 */
#include "codegen.h"
#include "cg_internal.h"
#include "ref/ref.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROW(arr, n, cap)                                                       \
    do {                                                                        \
        if ((n) == (cap)) {                                                     \
            (cap) = (cap) ? (cap) * 2 : 64;                                     \
            void *_p = realloc((arr), sizeof(*(arr)) * (cap));                  \
            if (!_p) ir_die("out of memory");                                   \
            (arr) = _p;                                                         \
        }                                                                       \
    } while (0)

/* ---- kernel sources ---- */

struct o2c_kernel_file {
    const char *family;
    const char *src;
    size_t len;
};
extern const struct o2c_kernel_file o2c_kernel_files[];
extern const size_t o2c_n_kernel_files;

static const char *kernel_source(struct cg_ctx *cg, const char *family, size_t *len)
{
#ifdef ONNX2CL_KERNELS_DIR
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.cl", ONNX2CL_KERNELS_DIR, family);
    FILE *f = fopen(path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *s = ir_alloc(cg->g, (size_t)n + 1);
        if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
        fclose(f);
        *len = (size_t)n;
        return s;
    }
#endif
    for (size_t i = 0; i < o2c_n_kernel_files; i++)
        if (strcmp(o2c_kernel_files[i].family, family) == 0) {
            *len = o2c_kernel_files[i].len;
            return o2c_kernel_files[i].src;
        }
    (void)cg;
    return NULL;
}

static const char *dtype_suffix(enum ir_dtype t)
{
    switch (t) {
    case IR_F32: return "f32";
    case IR_F64: return "f64";
    case IR_F16: return "f16";
    case IR_I8: return "i8";
    case IR_U8: return "u8";
    case IR_I16: return "i16";
    case IR_U16: return "u16";
    case IR_I32: return "i32";
    case IR_U32: return "u32";
    case IR_I64: return "i64";
    case IR_U64: return "u64";
    case IR_BOOL: return "b";
    default: return NULL;
    }
}

const char *cg_ctype(enum ir_dtype t)
{
    switch (t) {
    case IR_F32: return "float";
    case IR_F64: return "double";
    case IR_F16: return "half";
    case IR_I8: return "char";
    case IR_U8: return "uchar";
    case IR_I16: return "short";
    case IR_U16: return "ushort";
    case IR_I32: return "int";
    case IR_U32: return "uint";
    case IR_I64: return "long";
    case IR_U64: return "ulong";
    case IR_BOOL: return "uchar";
    default: ir_die("element type %s has no OpenCL type", ir_dtype_name(t));
    }
}

const char *cg_use(struct cg_ctx *cg, const char *family, enum ir_dtype dtype)
{
    const char *sfx = dtype_suffix(dtype);
    if (!sfx) {
        const struct ir_node *n = cg->cur_node != IR_NONE ? &cg->g->nodes[cg->cur_node] : NULL;
        ir_fatal_node(cg->g, n, "element type %s is not supported by the OpenCL kernels",
                      ir_dtype_name(dtype));
    }
    for (uint32_t i = 0; i < cg->nuses; i++)
        if (strcmp(cg->uses[i].family, family) == 0 && cg->uses[i].dtype == dtype) {
            cg->uses[i].variants |= cg->variants;
            return sfx;
        }
    size_t len;
    if (!kernel_source(cg, family, &len))
        ir_die("internal error: kernels/%s.cl is not embedded", family);
    GROW(cg->uses, cg->nuses, cg->cap_uses);
    cg->uses[cg->nuses].family = ir_strdup(cg->g, family);
    cg->uses[cg->nuses].dtype = dtype;
    cg->uses[cg->nuses].variants = cg->variants;
    cg->nuses++;
    return sfx;
}

void cg_add_source(struct cg_ctx *cg, const char *src)
{
    for (uint32_t i = 0; i < cg->nextra; i++)
        if (strcmp(cg->extra_src[i], src) == 0) {
            cg->extra_variants[i] |= cg->variants;
            return;
        }
    uint32_t cap = cg->cap_extra;
    GROW(cg->extra_src, cg->nextra, cg->cap_extra);
    if (cap != cg->cap_extra) {
        unsigned *p = realloc(cg->extra_variants, sizeof *p * cg->cap_extra);
        if (!p) ir_die("out of memory");
        cg->extra_variants = p;
    }
    cg->extra_variants[cg->nextra] = cg->variants;
    cg->extra_src[cg->nextra++] = ir_strdup(cg->g, src);
}

unsigned cg_variant(struct cg_ctx *cg, unsigned mask)
{
    IR_ASSERT(mask >= 1 && mask <= CG_VARIANT_ALL);
    unsigned old = cg->variants;
    cg->variants = mask;
    return old;
}

/* ---- launches and arguments ---- */

void cg_launch(struct cg_ctx *cg, uint32_t node_id, const char *kernel, unsigned work_dim,
               const size_t *gws, const size_t *lws)
{
    IR_ASSERT(work_dim >= 1 && work_dim <= 3);
    GROW(cg->launches, cg->nlaunches, cg->cap_launches);
    struct cg_launch *l = &cg->launches[cg->nlaunches++];
    memset(l, 0, sizeof *l);
    l->kernel = ir_strdup(cg->g, kernel);
    l->node = node_id;
    l->step = cg->step;
    l->work_dim = work_dim;
    l->variants = cg->variants;
    for (unsigned d = 0; d < work_dim; d++) {
        IR_ASSERT(gws[d] >= 1);
        l->gws[d] = gws[d];
        l->lws[d] = lws ? lws[d] : 0;
    }
    for (unsigned d = work_dim; d < 3; d++) l->gws[d] = 1;
    l->first_arg = cg->nargs;
}

void cg_check(struct cg_ctx *cg, uint32_t node_id, uint32_t cond, int fail_if, const char *message)
{
    IR_ASSERT((fail_if == 0 || fail_if == 1) && message);
    IR_ASSERT(cg->g->values[cond].dtype == IR_BOOL && ir_numel(cg->g, cond) == 1);
    const size_t one[1] = {1};
    cg_launch(cg, node_id, "", 1, one, one);
    struct cg_launch *l = &cg->launches[cg->nlaunches - 1];
    l->kernel = NULL;
    l->check = ir_strdup(cg->g, message);
    cg_arg_buf(cg, cond);
    cg_arg_i32(cg, fail_if);
}

void cg_tunable(struct cg_ctx *cg, const struct o2r_tunable *t)
{
    IR_ASSERT(cg->nlaunches > 0 && t->span >= 1);
    /* runtime/tune.c refuses a degenerate GEMM at init: the lowerings must not emit one */
    IR_ASSERT(t->rows >= 1 && t->cols >= 1 && t->k >= 1 && t->z >= 1);
    GROW(cg->tunables, cg->ntunables, cg->cap_tunables);
    struct o2r_tunable *d = &cg->tunables[cg->ntunables++];
    *d = *t;
    d->launch = cg->nlaunches - 1;
    d->macro = ir_strdup(cg->g, t->macro);
    d->kbase = ir_strdup(cg->g, t->kbase);
    d->ksuffix = ir_strdup(cg->g, t->ksuffix);
    d->margs = ir_strdup(cg->g, t->margs);
}

static struct cg_arg *new_arg(struct cg_ctx *cg)
{
    IR_ASSERT(cg->nlaunches > 0);
    GROW(cg->args, cg->nargs, cg->cap_args);
    struct cg_arg *a = &cg->args[cg->nargs++];
    memset(a, 0, sizeof *a);
    cg->launches[cg->nlaunches - 1].nargs++;
    return a;
}

static uint32_t root_of(const struct cg_ctx *cg, uint32_t v)
{
    while (cg->alias[v] != IR_NONE) v = cg->alias[v];
    return v;
}

static void touch(struct cg_ctx *cg, uint32_t v, int64_t step)
{
    uint32_t r = root_of(cg, v);
    if (cg->first[r] > step) cg->first[r] = step;
    if (cg->last[r] < step) cg->last[r] = step;
}

static void ensure_value_tables(struct cg_ctx *cg);

void cg_arg_buf(struct cg_ctx *cg, uint32_t v)
{
    IR_ASSERT(v < cg->g->nvalues);
    ensure_value_tables(cg); /* a lowering may have added constants (e.g. repacked weights) */
    struct cg_arg *a = new_arg(cg);
    a->kind = 0;
    a->value = v;
    touch(cg, v, cg->step);
}

void cg_arg_i32(struct cg_ctx *cg, int64_t v)
{
    if (v < INT32_MIN || v > INT32_MAX) {
        const struct ir_node *n = cg->cur_node != IR_NONE ? &cg->g->nodes[cg->cur_node] : NULL;
        ir_fatal_node(cg->g, n, "a size or index (%lld) exceeds the 32-bit range of the kernels",
                      (long long)v);
    }
    struct cg_arg *a = new_arg(cg);
    a->kind = 1;
    a->i = v;
}

void cg_arg_i64(struct cg_ctx *cg, int64_t v)
{
    struct cg_arg *a = new_arg(cg);
    a->kind = 2;
    a->i = v;
}

void cg_arg_f32(struct cg_ctx *cg, float v)
{
    struct cg_arg *a = new_arg(cg);
    a->kind = 3;
    a->f = v;
}

void cg_arg_local(struct cg_ctx *cg, size_t bytes)
{
    struct cg_arg *a = new_arg(cg);
    a->kind = 4;
    a->i = (int64_t)bytes;
}

static void ensure_value_tables(struct cg_ctx *cg)
{
    uint32_t n = cg->g->nvalues;
    if (n <= cg->cap_vals) return;
    uint32_t ncap = n * 2;
    cg->alias = realloc(cg->alias, sizeof *cg->alias * ncap);
    cg->first = realloc(cg->first, sizeof *cg->first * ncap);
    cg->last = realloc(cg->last, sizeof *cg->last * ncap);
    cg->buf = realloc(cg->buf, sizeof *cg->buf * ncap);
    cg->within = realloc(cg->within, sizeof *cg->within * ncap);
    cg->within_off = realloc(cg->within_off, sizeof *cg->within_off * ncap);
    cg->pinned = realloc(cg->pinned, sizeof *cg->pinned * ncap);
    if (!cg->alias || !cg->first || !cg->last || !cg->buf || !cg->within || !cg->within_off ||
        !cg->pinned)
        ir_die("out of memory");
    for (uint32_t v = cg->cap_vals; v < ncap; v++) {
        cg->alias[v] = IR_NONE;
        cg->first[v] = INT64_MAX;
        cg->last[v] = INT64_MIN;
        cg->buf[v] = -1;
        cg->within[v] = IR_NONE;
        cg->within_off[v] = 0;
        cg->pinned[v] = 0;
    }
    cg->cap_vals = ncap;
}

uint32_t cg_temp(struct cg_ctx *cg, uint32_t node_id, enum ir_dtype dtype, int64_t numel)
{
    int64_t dims[1] = {numel};
    uint32_t v = ir_value_add(cg->g, ir_sprintf(cg->g, "_tmp%u", cg->g->nvalues), dtype, 1, dims);
    ensure_value_tables(cg);
    (void)node_id;
    return v;
}

void cg_alias(struct cg_ctx *cg, uint32_t out, uint32_t in)
{
    ensure_value_tables(cg);
    uint32_t r = root_of(cg, in);
    if (r != out) cg->alias[out] = r;
}

/* ---- offset views (banner) ---- */

static uint64_t value_bytes(const struct ir_graph *g, uint32_t v);

/* The top root holding v's bytes (v's root when it is no offset view); *off (may be NULL)
 * receives v's byte offset inside it. */
static uint32_t top_of(const struct cg_ctx *cg, uint32_t v, uint64_t *off)
{
    uint64_t o = 0;
    uint32_t r = root_of(cg, v);
    while (cg->within[r] != IR_NONE) {
        o += cg->within_off[r];
        r = root_of(cg, cg->within[r]);
    }
    if (off) *off = o;
    return r;
}

/* The value whose view class (through IR views and BitCast, the producers codegen aliases)
 * holds v: the same value root_of() gives once those nodes are lowered. */
static uint32_t view_source(const struct ir_graph *g, uint32_t v)
{
    for (;;) {
        const uint32_t p = g->values[v].producer;
        if (p == IR_NONE) return v;
        const struct ir_node *n = &g->nodes[p];
        if (n->dead || n->ninputs < 1 || n->inputs[0] == IR_NONE ||
            !((ir_op_flags(n->op) & IR_F_VIEW) || n->op == IR_OP_BIT_CAST ||
              n->op == IR_OP_FUSED_CHECK))
            return v;
        v = n->inputs[0];
    }
}

/* The static live-bytes estimate of the offset view policy: per view class root (arena values
 * only) the step that writes it (-1: graph input) and the last step that reads a member
 * (graph outputs: est_steps), and the bytes live at every step, from the graph before lowering
 * (lowerings' temporaries are not in it). */
static void est_build(struct cg_ctx *cg)
{
    const struct ir_graph *g = cg->g;
    const uint32_t nv = g->nvalues;
    cg->est_n = nv;
    cg->est_first = calloc(nv ? nv : 1, sizeof *cg->est_first);
    cg->est_last = calloc(nv ? nv : 1, sizeof *cg->est_last);
    if (!cg->est_first || !cg->est_last) ir_die("out of memory");
    for (uint32_t v = 0; v < nv; v++) cg->est_first[v] = INT64_MAX, cg->est_last[v] = INT64_MIN;
    int64_t step = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE) {
                const uint32_t r = view_source(g, n->inputs[k]);
                if (cg->est_last[r] < step) cg->est_last[r] = step;
            }
        for (uint32_t k = 0; k < n->noutputs; k++)
            if (n->outputs[k] != IR_NONE) {
                const uint32_t r = view_source(g, n->outputs[k]);
                if (cg->est_first[r] > step) cg->est_first[r] = step;
                if (cg->est_last[r] < step) cg->est_last[r] = step;
            }
        step++;
    }
    cg->est_steps = step;
    cg->est_live = calloc((size_t)step + 3, sizeof *cg->est_live);
    if (!cg->est_live) ir_die("out of memory");
    for (uint32_t v = 0; v < nv; v++) {
        const uint32_t r = view_source(g, v);
        if (g->values[v].is_input) cg->est_first[r] = -1;
        if (g->values[v].is_output) cg->est_last[r] = step;
    }
    int64_t *diff = calloc((size_t)step + 3, sizeof *diff);
    if (!diff) ir_die("out of memory");
    for (uint32_t v = 0; v < nv; v++)
        if (view_source(g, v) == v && !ir_is_const(g, v) && cg->est_first[v] <= cg->est_last[v]) {
            const int64_t b = (int64_t)value_bytes(g, v);
            diff[cg->est_first[v] + 1] += b;
            diff[cg->est_last[v] + 2] -= b;
        }
    int64_t live = 0;
    cg->est_peak = 0;
    for (int64_t t = 0; t <= step + 1; t++) {
        live += diff[t];
        cg->est_live[t] = live;
        if (live > cg->est_peak) cg->est_peak = live;
    }
    free(diff);
}

/* Checks the offset views one node made, links [k0, nlinks), together against the estimate:
 * they must keep the estimated live bytes at every step at or below the estimated peak (the
 * top's bytes live over the hull of its lifetime and the children's, whose own bytes are no
 * longer counted). While they do not, the view that extends the top's lifetime most is undone
 * (its copy stays) and the rest is checked again; the estimate takes what stands. Trades a
 * copy for memory only off the peak: e.g. a UNet skip connection written early into the
 * decoder's Concat would hold the whole Concat output from the encoder on, while the input
 * made just before the Concat costs nothing. */
static void est_commit(struct cg_ctx *cg, uint32_t k0)
{
    for (;;) {
        uint32_t top = IR_NONE, worst = IR_NONE;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        bool known = true;
        for (uint32_t k = k0; k < cg->nlinks; k++) {
            const uint32_t c = cg->links[k].child;
            if (cg->links[k].undone) continue;
            const uint32_t t = top_of(cg, c, NULL);
            IR_ASSERT(top == IR_NONE || top == t); /* one node's views share their top */
            top = t;
            known = known && c < cg->est_n && t < cg->est_n &&
                    cg->est_first[c] <= cg->est_last[c] && cg->est_first[t] <= cg->est_last[t];
            if (!known) break;
            lo = cg->est_first[c] < lo ? cg->est_first[c] : lo;
            hi = cg->est_last[c] > hi ? cg->est_last[c] : hi;
            if (worst == IR_NONE || cg->est_first[c] < cg->est_first[cg->links[worst].child])
                worst = k;
        }
        if (top == IR_NONE) return;
        bool ok = known;
        const int64_t tf = known ? cg->est_first[top] : 0, tl = known ? cg->est_last[top] : 0;
        lo = tf < lo ? tf : lo;
        hi = tl > hi ? tl : hi;
        const int64_t tb = (int64_t)value_bytes(cg->g, top);
        for (int pass = 0; ok && pass < 2; pass++)
            for (int64_t t = lo; t <= hi; t++) {
                int64_t d = t < tf || t > tl ? tb : 0;
                for (uint32_t k = k0; k < cg->nlinks; k++) {
                    const uint32_t c = cg->links[k].child;
                    if (!cg->links[k].undone && t >= cg->est_first[c] && t <= cg->est_last[c])
                        d -= (int64_t)value_bytes(cg->g, c);
                }
                if (pass == 0 && cg->est_live[t + 1] + d > cg->est_peak) ok = false;
                if (pass == 1) cg->est_live[t + 1] += d;
                if (!ok) break;
            }
        if (ok) {
            cg->est_first[top] = lo;
            cg->est_last[top] = hi;
            return;
        }
        for (uint32_t k = known ? worst : k0; k < (known ? worst + 1 : cg->nlinks); k++) {
            cg->links[k].undone = true; /* (not in the estimate: all of the node's views) */
            cg->within[cg->links[k].child] = IR_NONE;
        }
    }
}

/* Makes root `child` a part of the bytes of value `parent` at byte `off`, when the banner's
 * rules allow; returns whether it did. */
static bool link_child(struct cg_ctx *cg, uint32_t child, uint32_t parent, uint64_t off)
{
    ensure_value_tables(cg);
    const struct ir_graph *g = cg->g;
    const struct ir_value *c = &g->values[child];
    uint64_t poff;
    const uint32_t top = top_of(cg, parent, &poff);
    if (off % O2R_ALIGN != 0 || cg->alias[child] != IR_NONE || cg->within[child] != IR_NONE ||
        cg->pinned[child] || ir_is_const(g, child) || c->producer == IR_NONE ||
        ir_numel(g, child) < 1 || ir_is_const(g, top) || top == child)
        return false;
    for (uint32_t r = root_of(cg, parent); cg->within[r] != IR_NONE; r = root_of(cg, cg->within[r]))
        if (r == child) return false; /* child is an ancestor of parent: a cycle */
    const uint64_t cb = (uint64_t)ir_numel(g, child) * ir_dtype_size(c->dtype);
    IR_ASSERT(off + cb <= (uint64_t)ir_numel(g, root_of(cg, parent)) *
                              ir_dtype_size(g->values[root_of(cg, parent)].dtype));
    cg->within[child] = root_of(cg, parent);
    cg->within_off[child] = off;
    GROW(cg->links, cg->nlinks, cg->cap_links);
    cg->links[cg->nlinks++] = (struct cg_link){child, root_of(cg, parent), off, cg->nlaunches,
                                               cg->nlaunches, false};
    return true;
}

void cg_view_copied(struct cg_ctx *cg)
{
    IR_ASSERT(cg->nlinks > 0);
    cg->links[cg->nlinks - 1].l1 = cg->nlaunches;
}

bool cg_place_into(struct cg_ctx *cg, uint32_t x, uint32_t y, uint64_t off)
{
    ensure_value_tables(cg);
    const uint32_t r = root_of(cg, x);
    const struct ir_graph *g = cg->g;
    if (ir_numel(g, r) * ir_dtype_size(g->values[r].dtype) !=
        ir_numel(g, x) * ir_dtype_size(g->values[x].dtype))
        return false;
    return link_child(cg, r, y, off);
}

bool cg_view_into(struct cg_ctx *cg, uint32_t y, uint32_t x, uint64_t off)
{
    return link_child(cg, y, x, off);
}

enum ir_dtype cg_weight_dtype(const struct cg_ctx *cg)
{
    return cg->wdtype == IR_F16 ? IR_F16 : IR_F32;
}

/* Records v as a storage-dtype weight of layout kind `kind` (once). */
static void record_wconst(struct cg_ctx *cg, uint32_t v, const char *kind)
{
    ensure_value_tables(cg);
    for (uint32_t k = 0; k < cg->nwconsts; k++)
        if (cg->wconsts[k] == v) return;
    uint32_t cap = cg->cap_wconsts;
    GROW(cg->wconsts, cg->nwconsts, cg->cap_wconsts);
    if (cap != cg->cap_wconsts) {
        cg->wkinds = realloc(cg->wkinds, sizeof *cg->wkinds * cg->cap_wconsts);
        if (!cg->wkinds) ir_die("out of memory");
    }
    cg->wkinds[cg->nwconsts] = kind;
    cg->wconsts[cg->nwconsts++] = v;
}

void cg_weight_repack(struct cg_ctx *cg, uint32_t v, const struct o2r_repack *r)
{
    GROW(cg->repacks, cg->nrepacks, cg->cap_repacks);
    cg->repacks[cg->nrepacks] = *r;
    cg->repacks[cg->nrepacks++].buf = v;
}

/* ir_lazy fill of a half weight: l->ctx is the float32 transform (a struct ir_lazy), p[0] the
 * element count, p[1] the node that made it (IR_NONE: none), l->src[3] the value itself (its
 * name for the range error). */
static void fill_half(const struct ir_graph *g, const struct ir_lazy *l, void *dst)
{
    const struct ir_lazy *f32 = l->ctx;
    const int64_t numel = l->p[0];
    float *tmp = calloc((size_t)(numel ? numel : 1), sizeof *tmp);
    if (!tmp) ir_die("out of memory (%" PRId64 " floats of a weight)", numel);
    f32->fill(g, f32, tmp);
    uint16_t *h = dst;
    for (int64_t i = 0; i < numel; i++) {
        uint32_t x;
        memcpy(&x, &tmp[i], 4);
        const uint32_t ax = x & 0x7fffffffu;
        if (ax - 0x38800000u < 0x477ff000u - 0x38800000u) { /* normal in half: ref_f32_to_f16 */
            const uint32_t r = ax - 0x38000000u;            /* inlined (rebias, round to even) */
            h[i] = (uint16_t)(((x >> 16) & 0x8000u) | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
            continue;
        }
        h[i] = ref_f32_to_f16(tmp[i]);
        if ((h[i] & 0x7fffu) == 0x7c00u && isfinite(tmp[i])) {
            const float f = tmp[i];
            free(tmp);
            ir_fatal_node(g, l->p[1] != (int64_t)IR_NONE ? &g->nodes[l->p[1]] : NULL,
                          "weight '%s' holds %g, beyond float16's range (65504): compile with "
                          "--weights-dtype f32", g->values[l->src[3]].name, (double)f);
        }
    }
    free(tmp);
}

uint32_t cg_weight_const(struct cg_ctx *cg, const char *name, const char *layout, int rank,
                         const int64_t *dims, const struct ir_lazy *fill)
{
    struct ir_graph *g = cg->g;
    int64_t numel = 1;
    for (int k = 0; k < rank; k++) numel *= dims[k];
    const enum ir_dtype t = cg_weight_dtype(cg);
    struct ir_lazy l = *fill;
    if (t == IR_F16) {
        struct ir_lazy *f32 = ir_alloc(g, sizeof *f32);
        *f32 = *fill;
        l = (struct ir_lazy){.fill = fill_half, .src = {fill->src[0], fill->src[1], fill->src[2]},
                             .p = {numel, (int64_t)cg->cur_node}, .ctx = f32};
    }
    uint32_t v = ir_lazy_add(g, name, t, rank, dims, (size_t)numel * ir_dtype_size(t), &l);
    if (t == IR_F16) ((struct ir_lazy *)g->values[v].lazy)->src[3] = v;
    record_wconst(cg, v, layout);
    return v;
}

bool cg_weight_operand_ok(const struct ir_graph *g, uint32_t v)
{
    const struct ir_value *x = &g->values[v];
    if (x->dtype != IR_F32 || !ir_is_const(g, v) || ir_numel(g, v) < 1024)
        return false;
    void *owned;
    const unsigned char *p = ir_const_bytes(g, v, &owned);
    bool ok = true;
    for (int64_t i = 0, n = ir_numel(g, v); i < n && ok; i++) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        if (isfinite(f) && fabsf(f) >= 65520.0f) ok = false; /* would round to inf */
    }
    free(owned);
    return ok;
}

uint32_t cg_weight_operand(struct cg_ctx *cg, uint32_t v)
{
    struct ir_graph *g = cg->g;
    uint32_t out = v;
    if (cg_weight_dtype(cg) == IR_F16) {
        const char *name = ir_sprintf(g, "%s.f16", g->values[v].name);
        out = ir_value_find(g, name);
        if (out == IR_NONE) {
            const struct ir_value *x = &g->values[v];
            const int64_t numel = ir_numel(g, v);
            uint16_t *h = ir_alloc(g, sizeof(uint16_t) * (size_t)numel);
            void *owned;
            const unsigned char *p = ir_const_bytes(g, v, &owned);
            for (int64_t i = 0; i < numel; i++) {
                float f;
                memcpy(&f, p + 4 * i, 4);
                h[i] = ref_f32_to_f16(f);
            }
            free(owned);
            int64_t dims[IR_MAX_RANK];
            memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
            out = ir_const_add(g, name, IR_F16, x->rank, dims, h, sizeof(uint16_t) * (size_t)numel);
            g->values[out].shape_dep = g->values[v].shape_dep;
        }
    }
    record_wconst(cg, out, "tensor");
    return out;
}

const char *cg_wsfx(const struct cg_ctx *cg, uint32_t w, const char **name)
{
    const bool half = cg->g->values[w].dtype == IR_F16;
    if (name) *name = half ? "_h" : "";
    return half ? "f16" : "f32";
}

void cg_need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "%s: tensor '%s' has %lld elements; the kernels index with "
                      "32-bit ints (at most 2^31-1 elements)",
                      ir_op_name(n->op), g->values[v].name, (long long)e);
}

int cg_strides(const struct ir_graph *g, uint32_t v, int64_t *out)
{
    const struct ir_value *val = &g->values[v];
    int64_t s = 1;
    for (int k = val->rank; k-- > 0;) {
        out[k] = s;
        s *= val->dims[k];
    }
    return val->rank;
}

/* ---- lowering dispatch ---- */

typedef bool (*lower_fn)(struct cg_ctx *, struct ir_graph *, uint32_t);

static lower_fn find_lowering(const char *family)
{
    for (const struct cg_lowering *l = cg_lowerings; l->family; l++)
        if (strcmp(family, l->family) == 0) return l->fn;
    return NULL;
}

static void lower_node(struct cg_ctx *cg, uint32_t i)
{
    struct ir_graph *g = cg->g;
    struct ir_node *n = &g->nodes[i];
    unsigned flags = ir_op_flags(n->op);
    if (flags & IR_F_VIEW) {
        /* Reshape-like: the output is the input's bytes (Dropout's mask is handled earlier). */
        uint32_t in = n->inputs[0], out = n->outputs[0];
        if (n->op == IR_OP_DROPOUT && n->noutputs > 1 && n->outputs[1] != IR_NONE &&
            g->values[n->outputs[1]].nuses)
            ir_fatal_node(g, n, "Dropout mask output is not supported");
        cg_alias(cg, out, in);
        return;
    }
    const char *fam = ir_op_family(n->op);
    if (strcmp(fam, "none") == 0 || (flags & IR_F_SHAPEOP && strcmp(fam, "fill") != 0)) {
        uint32_t dyn = IR_NONE;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE && !ir_is_const(g, n->inputs[k])) dyn = n->inputs[k];
        ir_fatal_node(g, n, "%s could not be evaluated at compile time%s%s%s", ir_op_name(n->op),
                      dyn != IR_NONE ? " (its input '" : "", dyn != IR_NONE ? g->values[dyn].name : "",
                      dyn != IR_NONE ? "' is computed at run time)" : "");
    }
    lower_fn fn = find_lowering(fam);
    if (!fn)
        ir_fatal_node(g, n, "no OpenCL kernel for op %s yet (family '%s')", ir_op_name(n->op), fam);
    uint32_t before = cg->nlaunches, k0 = cg->nlinks;
    cg->variants = CG_VARIANT_ALL;
    if (!fn(cg, g, i))
        ir_fatal_node(g, &g->nodes[i], "op %s is not supported in this form", ir_op_name(n->op));
    cg->variants = CG_VARIANT_ALL;
    est_commit(cg, k0);
    n = &g->nodes[i];
    /* Outputs of a node are written at this step even if a lowering emitted no launch (empty
     * tensors): keep their lifetime well-formed. */
    for (uint32_t k = 0; k < n->noutputs; k++)
        if (n->outputs[k] != IR_NONE) touch(cg, n->outputs[k], cg->step);
    (void)before;
}

/* ---- buffers and memory plan ---- */

static uint64_t align_up(uint64_t x)
{
    return (x + O2R_ALIGN - 1) / O2R_ALIGN * O2R_ALIGN;
}

static uint64_t value_bytes(const struct ir_graph *g, uint32_t v)
{
    int64_t n = ir_numel(g, v);
    uint64_t b = (uint64_t)n * ir_dtype_size(g->values[v].dtype);
    return b ? b : 4; /* sub-buffers must not be empty */
}

static int32_t add_buffer(struct cg_ctx *cg, uint32_t root, uint8_t space)
{
    GROW(cg->bufs, cg->nbufs, cg->cap_bufs);
    struct cg_buffer *b = &cg->bufs[cg->nbufs];
    memset(b, 0, sizeof *b);
    b->value = root;
    b->space = space;
    b->size = value_bytes(cg->g, root);
    b->parent = -1;
    cg->buf[root] = (int32_t)cg->nbufs;
    return (int32_t)cg->nbufs++;
}

static int32_t buffer_of(struct cg_ctx *cg, uint32_t v)
{
    uint32_t r = root_of(cg, v);
    if (cg->buf[r] >= 0) return cg->buf[r];
    const struct ir_value *val = &cg->g->values[r];
    if (cg->within[r] != IR_NONE) { /* an offset view (set_parents): its top first */
        buffer_of(cg, top_of(cg, r, NULL));
        return add_buffer(cg, r, O2R_SPACE_ARENA);
    }
    return add_buffer(cg, r, val->data || val->lazy ? O2R_SPACE_WEIGHTS : O2R_SPACE_ARENA);
}

static int cmp_size_desc(const void *a, const void *b, void *ctx)
{
    const struct cg_buffer *bufs = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (bufs[x].size != bufs[y].size) return bufs[x].size < bufs[y].size ? 1 : -1;
    return x < y ? -1 : x > y;
}

/* Decreasing size, equal sizes by decreasing lifetime (then index); ctx is the cg_ctx. */
static int cmp_size_life_desc(const void *a, const void *b, void *ctx)
{
    const struct cg_ctx *cg = ctx;
    const struct cg_buffer *bufs = cg->bufs;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (bufs[x].size != bufs[y].size) return bufs[x].size < bufs[y].size ? 1 : -1;
    int64_t lx = cg->last[bufs[x].value] - cg->first[bufs[x].value];
    int64_t ly = cg->last[bufs[y].value] - cg->first[bufs[y].value];
    if (lx != ly) return lx < ly ? 1 : -1;
    return x < y ? -1 : x > y;
}

/* Places the arena buffers order[0..na) in that order, each at the lowest offset that does not
 * overlap a placed buffer whose lifetime overlaps its own (inclusive) and that a kernel class
 * touching it also touches (the runtime runs one class per model: a cpu-only temporary, e.g.
 * Winograd's or fconv_tile's, and a gpu-only one, e.g. split-K partials, never coexist);
 * returns the arena size. busy/placed: scratch of na entries. */
static uint64_t place_arena(struct cg_ctx *cg, const uint32_t *order, uint32_t na,
                            uint32_t *placed, uint64_t (*busy)[2])
{
    uint64_t arena = 0;
    uint32_t np = 0;
    for (uint32_t i = 0; i < na; i++) {
        struct cg_buffer *bf = &cg->bufs[order[i]];
        int64_t f = cg->first[bf->value], l = cg->last[bf->value];
        uint32_t nb = 0;
        for (uint32_t j = 0; j < np; j++) {
            const struct cg_buffer *o = &cg->bufs[placed[j]];
            int64_t of = cg->first[o->value], ol = cg->last[o->value];
            if (of <= l && f <= ol && (o->classes & bf->classes)) {
                busy[nb][0] = o->offset;
                busy[nb++][1] = o->offset + align_up(o->size);
            }
        }
        /* Lowest offset that fits: candidates are 0 and every busy interval's end. */
        uint64_t best = UINT64_MAX, need = align_up(bf->size);
        for (uint32_t c = 0; c <= nb; c++) {
            uint64_t cand = c == nb ? 0 : busy[c][1];
            if (cand >= best) continue;
            bool ok = true;
            for (uint32_t j = 0; j < nb && ok; j++)
                if (cand < busy[j][1] && busy[j][0] < cand + need) ok = false;
            if (ok) best = cand;
        }
        bf->offset = best;
        if (best + need > arena) arena = best + need;
        placed[np++] = order[i];
    }
    return arena;
}

static void plan_memory(struct cg_ctx *cg)
{
    /* Weights: in first-use order, the weights file's part first (pass 0), then the build's
     * shape-dependent constants (pass 1) */
    uint64_t woff = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t b = 0; b < cg->nbufs; b++) {
            struct cg_buffer *bf = &cg->bufs[b];
            if (bf->space != O2R_SPACE_WEIGHTS || cg->g->values[bf->value].shape_dep != (pass == 1))
                continue;
            bf->offset = woff;
            woff = align_up(woff + bf->size);
        }
        if (pass == 0) cg->file_bytes = woff;
    }
    cg->weights_bytes = woff;
    /* Arena: greedy placement by decreasing size among time-overlapping buffers, equal sizes
     * in index order and, second try, longest-lived first; the smaller arena is kept (the
     * packing is a heuristic: e.g. the dynamo Flux export, peak live 134656 bytes, packs into
     * 144896 with the first order, 134656 with the second). */
    uint32_t *order = malloc(sizeof *order * (cg->nbufs ? cg->nbufs : 1));
    uint32_t *order2 = malloc(sizeof *order2 * (cg->nbufs ? cg->nbufs : 1));
    uint32_t *placed = malloc(sizeof *placed * (cg->nbufs ? cg->nbufs : 1));
    uint64_t (*busy)[2] = malloc(sizeof *busy * (cg->nbufs ? cg->nbufs : 1));
    if (!order || !order2 || !placed || !busy) ir_die("out of memory");
    /* kernel classes touching each buffer: graph inputs/outputs and buffers no launch names
     * belong to every class */
    for (uint32_t b = 0; b < cg->nbufs; b++) cg->bufs[b].classes = 0;
    for (uint32_t l = 0; l < cg->nlaunches; l++) {
        const struct cg_launch *la = &cg->launches[l];
        for (uint32_t a = la->first_arg; a < la->first_arg + la->nargs; a++)
            if (cg->args[a].kind == O2R_ARG_BUF) {
                const int32_t b = cg->buf[root_of(cg, cg->args[a].value)];
                if (b >= 0) cg->bufs[b].classes |= la->variants;
            }
    }
    for (uint32_t b = 0; b < cg->nbufs; b++) {
        const struct ir_value *v = &cg->g->values[cg->bufs[b].value];
        if (!cg->bufs[b].classes || v->is_input || v->is_output)
            cg->bufs[b].classes = CG_VARIANT_ALL;
    }
    /* offset views: their lifetimes and classes count for their tops, which alone are placed */
    for (uint32_t b = 0; b < cg->nbufs; b++) {
        const struct cg_buffer *bf = &cg->bufs[b];
        if (bf->parent < 0) continue;
        const uint32_t t = cg->bufs[bf->parent].value;
        if (cg->first[bf->value] < cg->first[t]) cg->first[t] = cg->first[bf->value];
        if (cg->last[bf->value] > cg->last[t]) cg->last[t] = cg->last[bf->value];
        cg->bufs[bf->parent].classes |= bf->classes;
    }
    uint32_t na = 0;
    for (uint32_t b = 0; b < cg->nbufs; b++)
        if (cg->bufs[b].space == O2R_SPACE_ARENA && cg->bufs[b].parent < 0) order[na++] = b;
    memcpy(order2, order, sizeof *order * na);
    qsort_r(order, na, sizeof *order, cmp_size_desc, cg->bufs);
    qsort_r(order2, na, sizeof *order2, cmp_size_life_desc, cg);
    uint64_t a1 = place_arena(cg, order, na, placed, busy);
    uint64_t a2 = place_arena(cg, order2, na, placed, busy);
    uint64_t arena = a2;
    if (a1 <= a2) arena = place_arena(cg, order, na, placed, busy);
    for (uint32_t b = 0; b < cg->nbufs; b++)
        if (cg->bufs[b].parent >= 0) {
            IR_ASSERT(cg->bufs[b].rel + cg->bufs[b].size <= cg->bufs[cg->bufs[b].parent].size);
            cg->bufs[b].offset = cg->bufs[cg->bufs[b].parent].offset + cg->bufs[b].rel;
        }
    cg->arena_bytes = arena ? arena : O2R_ALIGN;
    free(order);
    free(order2);
    free(placed);
    free(busy);
}

/* Sets every buffer's parent and relative offset from the offset views that stand. */
static void set_parents(struct cg_ctx *cg)
{
    for (uint32_t b = 0; b < cg->nbufs; b++) {
        struct cg_buffer *bf = &cg->bufs[b];
        bf->parent = -1;
        bf->rel = 0;
        if (cg->within[bf->value] == IR_NONE) continue;
        bf->parent = cg->buf[top_of(cg, bf->value, &bf->rel)];
        IR_ASSERT(bf->parent >= 0 && bf->space == O2R_SPACE_ARENA);
    }
}

/* Bytes x steps by which view k extends its parent's lifetime (first/last as lowered). */
static double link_cost(const struct cg_ctx *cg, const int64_t *first, const int64_t *last,
                        uint32_t k)
{
    const uint32_t c = cg->links[k].child, p = cg->links[k].parent;
    const int64_t ext = (first[p] > first[c] ? first[p] - first[c] : 0) +
                        (last[c] > last[p] ? last[c] - last[p] : 0);
    return (double)ext * (double)value_bytes(cg->g, p);
}

/* The memory plan with the offset views that lowering made. Views that extend lifetimes can
 * fragment the greedy packing even where they do not raise the peak of live bytes (the tiny
 * SD 1.5 UNet: 533,504 bytes with every view, 513,024 without); so when the arena with views
 * is larger than without any, views are undone, the most lifetime-extending first, until it
 * is not (an undone view keeps its copy). */
static void plan_views(struct cg_ctx *cg)
{
    const size_t nv = cg->cap_vals;
    int64_t *first = malloc(sizeof *first * nv), *last = malloc(sizeof *last * nv);
    uint32_t *order = malloc(sizeof *order * (cg->nlinks ? cg->nlinks : 1));
    double *cost = malloc(sizeof *cost * (cg->nlinks ? cg->nlinks : 1));
    if (!first || !last || !order || !cost) ir_die("out of memory");
    memcpy(first, cg->first, sizeof *first * nv); /* plan_memory widens tops' lifetimes */
    memcpy(last, cg->last, sizeof *last * nv);
    for (uint32_t k = 0; k < cg->nlinks; k++) cg->within[cg->links[k].child] = IR_NONE;
    set_parents(cg);
    plan_memory(cg);
    const uint64_t none = cg->arena_bytes;
    uint32_t n = 0; /* views that stand */
    for (uint32_t k = 0; k < cg->nlinks; k++) {
        if (cg->links[k].undone) continue;
        cg->within[cg->links[k].child] = cg->links[k].parent;
        order[n++] = k;
        cost[k] = link_cost(cg, first, last, k);
    }
    for (uint32_t i = 1; i < n; i++) /* by decreasing cost, then later first */
        for (uint32_t j = i; j > 0 && (cost[order[j]] > cost[order[j - 1]] ||
                                       (cost[order[j]] == cost[order[j - 1]] &&
                                        order[j] > order[j - 1])); j--) {
            const uint32_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (uint32_t i = 0; n; i++) {
        memcpy(cg->first, first, sizeof *first * nv);
        memcpy(cg->last, last, sizeof *last * nv);
        set_parents(cg);
        plan_memory(cg);
        if (cg->arena_bytes <= none || i == n) break;
        cg->links[order[i]].undone = true;
        cg->within[cg->links[order[i]].child] = IR_NONE;
    }
    free(first);
    free(last);
    free(order);
    free(cost);
}

/* Removes the copy launches of the offset views that stand (their bytes are in place); launch
 * indices of tunables follow. */
static void drop_view_copies(struct cg_ctx *cg)
{
    unsigned char *gone = calloc(cg->nlaunches ? cg->nlaunches : 1, 1);
    uint32_t *map = malloc(sizeof *map * (cg->nlaunches ? cg->nlaunches : 1));
    if (!gone || !map) ir_die("out of memory");
    for (uint32_t k = 0; k < cg->nlinks; k++)
        for (uint32_t l = cg->links[k].l0; !cg->links[k].undone && l < cg->links[k].l1; l++)
            gone[l] = 1;
    uint32_t nl = 0, na = 0;
    for (uint32_t l = 0; l < cg->nlaunches; l++) {
        map[l] = nl;
        if (gone[l]) continue;
        struct cg_launch la = cg->launches[l];
        memmove(&cg->args[na], &cg->args[la.first_arg], sizeof *cg->args * la.nargs);
        la.first_arg = na;
        na += la.nargs;
        cg->launches[nl++] = la;
    }
    for (uint32_t t = 0; t < cg->ntunables; t++) {
        const struct o2r_tunable *tu = &cg->tunables[t];
        IR_ASSERT(!gone[tu->launch] && map[tu->launch + tu->span - 1] == map[tu->launch] + tu->span - 1);
        cg->tunables[t].launch = map[tu->launch];
    }
    cg->nlaunches = nl;
    cg->nargs = na;
    free(gone);
    free(map);
}

/* ---- checksum ---- */

/* o2r_weights_checksum of the weights file's payload: each of its buffers at its offset, zeros
 * in between and up to file_bytes. */
uint64_t cg_weights_checksum(const struct cg_ctx *m)
{
    static const unsigned char zeros[O2R_ALIGN];
    struct o2r_wsum s;
    o2r_wsum_init(&s);
    uint64_t pos = 0;
    for (uint32_t b = 0; b < m->nbufs; b++) {
        const struct cg_buffer *bf = &m->bufs[b];
        if (bf->space != O2R_SPACE_WEIGHTS || bf->offset >= m->file_bytes) continue;
        while (pos < bf->offset) {
            uint64_t k = bf->offset - pos > O2R_ALIGN ? O2R_ALIGN : bf->offset - pos;
            o2r_wsum_update(&s, zeros, k);
            pos += k;
        }
        const struct ir_value *v = &m->g->values[bf->value];
        void *owned;
        o2r_wsum_update(&s, ir_const_bytes(m->g, bf->value, &owned), v->nbytes);
        free(owned);
        pos += v->nbytes;
    }
    while (pos < m->file_bytes) {
        uint64_t k = m->file_bytes - pos > O2R_ALIGN ? O2R_ALIGN : m->file_bytes - pos;
        o2r_wsum_update(&s, zeros, k);
        pos += k;
    }
    return o2r_wsum_final(&s);
}

/* ---- descriptor ---- */

/* A growable text. */
struct text {
    char *s;
    size_t len, cap;
};

static void text_add(struct text *t, const char *p, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1 << 16;
        while (t->len + n + 1 > cap) cap *= 2;
        char *q = realloc(t->s, cap);
        if (!q) ir_die("out of memory");
        t->s = q;
        t->cap = cap;
    }
    memcpy(t->s + t->len, p, n);
    t->len += n;
    t->s[t->len] = 0;
}

#define CG_SEGMENT_MAX 60000 /* bytes per source segment: one C string literal each (MSVC: 64 KB) */

/* Appends the segments of one class's text (split at line ends, each <= CG_SEGMENT_MAX; a
 * single longer line, which codegen never makes, stays whole). Texts point into m->source. */
static void add_segments(struct cg_ctx *m, size_t off, size_t len, unsigned variants,
                         uint32_t *cap)
{
    while (len > 0) {
        size_t n = len;
        if (n > CG_SEGMENT_MAX) {
            n = CG_SEGMENT_MAX;
            while (n > 0 && m->source[off + n - 1] != '\n') n--;
            if (n == 0) n = len; /* no line end: keep the line whole */
        }
        if (m->nsegments == *cap) {
            *cap = *cap ? *cap * 2 : 16;
            m->segments = realloc(m->segments, sizeof *m->segments * *cap);
            if (!m->segments) ir_die("out of memory");
        }
        m->segments[m->nsegments++] = (struct o2r_source){m->source + off, n, variants};
        off += n;
        len -= n;
    }
}

static void build_source(struct cg_ctx *m)
{
    /* cls[0]: used by every class (prelude first), cls[1]: CPU only, cls[2]: GPU only */
    struct text cls[3] = {{0}};
    static const unsigned mask[3] = {CG_VARIANT_ALL, CG_VARIANT_CPU, CG_VARIANT_GPU};
    bool f64 = false;
    for (uint32_t i = 0; i < m->nuses; i++) f64 |= m->uses[i].dtype == IR_F64;
    if (f64) text_add(&cls[0], "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", 46);
    size_t plen;
    const char *pre = kernel_source(m, "prelude", &plen);
    if (!pre) ir_die("internal error: kernels/prelude.cl is not embedded");
    text_add(&cls[0], pre, plen);
    for (uint32_t i = 0; i < m->nuses; i++) {
        struct text *t = &cls[m->uses[i].variants == CG_VARIANT_CPU   ? 1
                              : m->uses[i].variants == CG_VARIANT_GPU ? 2 : 0];
        char hdr[256];
        int hn = snprintf(hdr, sizeof hdr, "\n/* ---- %s.cl, T=%s ---- */\n#define T %s\n#define TS %s\n",
                          m->uses[i].family, ir_dtype_name(m->uses[i].dtype),
                          cg_ctype(m->uses[i].dtype), dtype_suffix(m->uses[i].dtype));
        text_add(t, hdr, (size_t)hn);
        const char *src = kernel_source(m, m->uses[i].family, &plen);
        text_add(t, src, plen);
        text_add(t, "\n#undef T\n#undef TS\n", 20);
    }
    for (uint32_t i = 0; i < m->nextra; i++) {
        struct text *t = &cls[m->extra_variants[i] == CG_VARIANT_CPU   ? 1
                              : m->extra_variants[i] == CG_VARIANT_GPU ? 2 : 0];
        text_add(t, "\n", 1);
        text_add(t, m->extra_src[i], strlen(m->extra_src[i]));
    }
    struct text all = {0};
    for (int c = 0; c < 3; c++)
        if (cls[c].len) text_add(&all, cls[c].s, cls[c].len);
    m->source = all.s;
    m->source_len = all.len;
    uint32_t cap = 0;
    size_t off = 0;
    for (int c = 0; c < 3; c++) {
        add_segments(m, off, cls[c].len, mask[c], &cap);
        off += cls[c].len;
        free(cls[c].s);
    }
}

static void fill_io(struct cg_ctx *m, struct o2r_io *io, uint32_t v)
{
    const struct ir_value *val = &m->g->values[v];
    io->name = val->name;
    io->dtype = val->dtype;
    io->rank = val->rank;
    for (int k = 0; k < val->rank; k++) io->dims[k] = val->dims[k];
    io->buf = buffer_of(m, v);
    io->nbytes = (uint64_t)ir_numel(m->g, v) * ir_dtype_size(val->dtype);
}

/* Layout kind of weight constant v ("tensor" unless cg_weight_const said otherwise). */
static const char *layout_kind(const struct cg_ctx *m, uint32_t v)
{
    for (uint32_t k = 0; k < m->nwconsts; k++)
        if (m->wconsts[k] == v) return m->wkinds[k] ? m->wkinds[k] : "tensor";
    return "tensor";
}

/* The canonical text of a reader signature's attributes, built piece by piece: a 32-bit
 * FNV-1a hash of every byte, and the text itself while it fits in SIG_TEXT_MAX bytes. */
#define SIG_TEXT_MAX 80
struct sig_text {
    uint32_t h;                    /* FNV-1a of everything put */
    size_t len;                    /* bytes put */
    char s[SIG_TEXT_MAX + 1];      /* the first SIG_TEXT_MAX of them, NUL-terminated */
};

static void sig_put(struct sig_text *t, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        t->h = (t->h ^ (unsigned char)p[i]) * 16777619u;
        if (t->len + i < SIG_TEXT_MAX) t->s[t->len + i] = p[i];
    }
    t->len += n;
    t->s[t->len < SIG_TEXT_MAX ? t->len : SIG_TEXT_MAX] = 0;
}

static void sig_putf(struct sig_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sig_putf(struct sig_text *t, const char *fmt, ...)
{
    char b[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    sig_put(t, b, n < 0 ? 0 : (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* True when attribute a of node n holds the value ONNX gives it when absent, for the attribute
 * names whose default is the same in every operator that has them (Conv, ConvTranspose,
 * pooling, DeformConv, the fused o2c.Conv): group 1, strides and dilations all 1, pads and
 * output_padding all 0, auto_pad NOTSET; and kernel_shape equal to the spatial dims of the
 * node's weight (input 1), which is what an absent kernel_shape means for a conv; and the
 * operator-specific defaults of op_defaults (Gather axis 0, Gemm transA/transB 0, ...).
 * Exporters differ in which of these they write (the dynamo exporter writes them all). */
static bool attr_is_default(const struct ir_graph *g, const struct ir_node *n,
                            const struct ir_attr *a)
{
    /* defaults of one operator (ONNX operator docs), for the ops that read weights */
    static const struct {
        const char *op, *name; /* operator, attribute */
        double value;          /* its default (INT or FLOAT) */
    } op_defaults[] = {
        {"Gather", "axis", 0},      {"Gemm", "transA", 0},  {"Gemm", "transB", 0},
        {"Gemm", "alpha", 1},       {"Gemm", "beta", 1},    {"LayerNormalization", "axis", -1},
        {"LayerNormalization", "epsilon", 1e-5f}, {"LayerNormalization", "stash_type", 1},
        {"InstanceNormalization", "epsilon", 1e-5f}, {"GroupNormalization", "epsilon", 1e-5f},
        {"BatchNormalization", "epsilon", 1e-5f}, {"BatchNormalization", "momentum", 0.9f},
    };
    const char *nm = a->name;
    for (size_t k = 0; k < sizeof op_defaults / sizeof *op_defaults; k++)
        if (!strcmp(op_defaults[k].op, n->op_type) && !strcmp(op_defaults[k].name, nm))
            return a->type == IR_ATTR_INT ? (double)a->i == op_defaults[k].value
                   : a->type == IR_ATTR_FLOAT && a->f == (float)op_defaults[k].value;
    if (a->type == IR_ATTR_INT) return strcmp(nm, "group") == 0 && a->i == 1;
    if (a->type == IR_ATTR_STRING)
        return strcmp(nm, "auto_pad") == 0 && (a->s_len == 0 || strcmp(a->s, "NOTSET") == 0);
    if (a->type != IR_ATTR_INTS) return false;
    int64_t want;
    if (!strcmp(nm, "strides") || !strcmp(nm, "dilations")) {
        want = 1;
    } else if (!strcmp(nm, "pads") || !strcmp(nm, "output_padding")) {
        want = 0;
    } else if (!strcmp(nm, "kernel_shape")) {
        const uint32_t w = n->ninputs > 1 ? n->inputs[1] : IR_NONE;
        if (w == IR_NONE || g->values[w].rank != (int)a->n + 2) return false;
        for (size_t j = 0; j < a->n; j++)
            if (a->ints[j] != g->values[w].dims[j + 2]) return false;
        return true;
    } else {
        return false;
    }
    for (size_t j = 0; j < a->n; j++)
        if (a->ints[j] != want) return false;
    return true;
}

/* "OP[slot]{attrs}" of node ni reading constant v: ONNX op type, the input slot holding v ("?"
 * when v is a constant the lowering made, e.g. packed panels) and the node's int, float and
 * string attributes in a canonical form: sorted by name, those at their ONNX default left out
 * (attr_is_default), so exports that spell the same node differently (attribute order, written
 * defaults) give the same signature; e.g. "o2c.Conv[?]{activation=2 pads=[1,1,1,1]}". When
 * that text is longer than SIG_TEXT_MAX (an o2c.Elementwise program), "#" and its 32-bit
 * FNV-1a hash stand for it; nothing when no attribute is left. Names and tensor attributes
 * are left out. */
static const char *reader_signature(const struct cg_ctx *m, uint32_t ni, uint32_t v)
{
    const struct ir_node *n = &m->g->nodes[ni];
    struct sig_text t = {.h = 2166136261u};
    const struct ir_attr *sorted[64];
    uint32_t ns = 0;
    for (uint32_t k = 0; k < n->nattrs; k++) {
        const struct ir_attr *at = &n->attrs[k];
        if (at->type == IR_ATTR_TENSOR || at->type == IR_ATTR_GRAPH ||
            attr_is_default(m->g, n, at))
            continue;
        if (ns == sizeof sorted / sizeof *sorted)
            ir_fatal_node(m->g, n, "more than %zu attributes", sizeof sorted / sizeof *sorted);
        uint32_t j = ns++;
        for (; j > 0 && strcmp(sorted[j - 1]->name, at->name) > 0; j--) sorted[j] = sorted[j - 1];
        sorted[j] = at;
    }
    for (uint32_t k = 0; k < ns; k++) {
        const struct ir_attr *at = sorted[k];
        sig_putf(&t, "%s%s=", k ? " " : "", at->name);
        switch (at->type) {
        case IR_ATTR_INT: sig_putf(&t, "%" PRId64, at->i); break;
        case IR_ATTR_FLOAT: sig_putf(&t, "%.9g", (double)at->f); break;
        case IR_ATTR_STRING: sig_put(&t, at->s, at->s_len); break;
        case IR_ATTR_INTS:
        case IR_ATTR_FLOATS:
        case IR_ATTR_STRINGS:
            sig_put(&t, "[", 1);
            for (size_t j = 0; j < at->n; j++) {
                if (j) sig_put(&t, ",", 1);
                if (at->type == IR_ATTR_INTS) sig_putf(&t, "%" PRId64, at->ints[j]);
                else if (at->type == IR_ATTR_FLOATS) sig_putf(&t, "%.9g", (double)at->floats[j]);
                else sig_put(&t, at->strings[j], strlen(at->strings[j]));
            }
            sig_put(&t, "]", 1);
            break;
        default: break;
        }
    }
    int slot = -1;
    for (uint32_t k = 0; k < n->ninputs && slot < 0; k++)
        if (n->inputs[k] != IR_NONE && root_of(m, n->inputs[k]) == v) slot = (int)k;
    char sl[16] = "?";
    if (slot >= 0) snprintf(sl, sizeof sl, "%d", slot);
    if (!ns) return ir_sprintf(m->g, "%s[%s]", n->op_type, sl);
    if (t.len <= SIG_TEXT_MAX) return ir_sprintf(m->g, "%s[%s]{%s}", n->op_type, sl, t.s);
    return ir_sprintf(m->g, "%s[%s]#%08x", n->op_type, sl, t.h);
}

/* desc.const_data, stored and repacks (after buffers, args and launches are in the desc). */
static void build_weights_tables(struct cg_ctx *m)
{
    struct ir_graph *g = m->g;
    struct o2r_model_desc *d = &m->desc;
    uint64_t tail = m->weights_bytes - m->file_bytes;
    unsigned char *cd = tail ? ir_alloc(g, tail) : NULL; /* zeroed */
    uint32_t ns = 0;
    for (uint32_t b = 0; b < m->nbufs; b++) {
        const struct cg_buffer *bf = &m->bufs[b];
        if (bf->space != O2R_SPACE_WEIGHTS) continue;
        if (bf->offset >= m->file_bytes) {
            const struct ir_value *v = &g->values[bf->value];
            void *owned;
            memcpy(cd + (bf->offset - m->file_bytes), ir_const_bytes(g, bf->value, &owned),
                   v->nbytes);
            free(owned);
        } else {
            ns++;
        }
    }
    d->const_data = cd;
    /* the node of each buffer's first reading launch, and the nodes reading it (distinct, in
     * launch order, each as op type, input slot and its canonical attributes: part of its
     * layout string, so weights of a model that uses a tensor of the same dims in another
     * computation are refused) */
    const char **first = ir_alloc(g, sizeof *first * (m->nbufs ? m->nbufs : 1));
    const char **ops = ir_alloc(g, sizeof *ops * (m->nbufs ? m->nbufs : 1));
    for (uint32_t l = 0; l < d->n_launches; l++)
        for (uint32_t a = 0; a < d->launches[l].nargs; a++) {
            const struct o2r_arg *ar = &d->args[d->launches[l].first_arg + a];
            if (ar->kind != O2R_ARG_BUF || m->bufs[ar->u.buf].space != O2R_SPACE_WEIGHTS) continue;
            const char *op = reader_signature(m, m->launches[l].node, m->bufs[ar->u.buf].value);
            const char *have = ops[ar->u.buf];
            if (!first[ar->u.buf]) first[ar->u.buf] = d->launches[l].node;
            bool seen = false; /* op already in the "; "-separated list? */
            for (const char *p = have; p && *p && !seen; p = strstr(p, "; ") ? strstr(p, "; ") + 2 : "")
                seen = strncmp(p, op, strlen(op)) == 0 && (p[strlen(op)] == ';' || !p[strlen(op)]);
            if (!seen) ops[ar->u.buf] = have ? ir_sprintf(g, "%s; %s", have, op) : op;
        }
    struct o2r_stored *st = ir_alloc(g, sizeof *st * (ns ? ns : 1));
    uint32_t k = 0;
    for (uint32_t b = 0; b < m->nbufs; b++) { /* buffer order is offset order (plan_memory) */
        const struct cg_buffer *bf = &m->bufs[b];
        if (bf->space != O2R_SPACE_WEIGHTS || bf->offset >= m->file_bytes) continue;
        const struct ir_value *v = &g->values[bf->value];
        char dims[256];
        int n = 0;
        for (int q = 0; q < v->rank && n < (int)sizeof dims - 24; q++)
            n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%" PRId64, q ? "," : "", v->dims[q]);
        dims[n] = 0;
        st[k++] = (struct o2r_stored){b, ir_sprintf(g, "%s [%s] %s, read by %s",
                                                    ir_dtype_name(v->dtype), dims,
                                                    layout_kind(m, bf->value),
                                                    ops[b] ? ops[b] : "no launch"),
                                      first[b] ? first[b] : "(a graph output)"};
    }
    d->n_stored = ns;
    d->stored = st;
    struct o2r_repack *rp = ir_alloc(g, sizeof *rp * (m->nrepacks ? m->nrepacks : 1));
    uint32_t nr = 0;
    for (uint32_t i = 0; i < m->nrepacks; i++) {
        uint32_t v = m->repacks[i].buf, r = root_of(m, v);
        if (m->buf[r] < 0) continue; /* never read by a launch */
        rp[nr] = m->repacks[i];
        rp[nr++].buf = (uint32_t)m->buf[r];
    }
    d->n_repacks = nr;
    d->repacks = rp;
}

static void build_desc(struct cg_ctx *m, const struct cg_options *opt)
{
    struct ir_graph *g = m->g;
    struct o2r_model_desc *d = &m->desc;
    memset(d, 0, sizeof *d);
    d->abi_version = O2R_ABI_VERSION;
    d->name = opt->name;
    char *hex = ir_alloc(g, 65);
    for (int i = 0; i < 32; i++) sprintf(hex + 2 * i, "%02x", g->model_hash[i]);
    d->model_hash = hex;
    d->kernel_source = NULL; /* the program is d->sources, by class */
    d->kernel_source_len = 0;
    d->n_sources = m->nsegments;
    d->sources = m->segments;
    d->build_options = "-cl-std=CL1.2";
    d->arena_bytes = m->arena_bytes;
    d->weights_bytes = m->weights_bytes;
    d->weights_checksum = 0; /* set by cg_write_weights or cg_checksum_ensure: made once */
    d->weights_dtype = m->wdtype == IR_F16 ? O2R_F16 : O2R_F32;
    d->weights_file_bytes = m->file_bytes;
    struct o2r_buffer *bufs = ir_alloc(g, sizeof *bufs * (m->nbufs ? m->nbufs : 1));
    for (uint32_t b = 0; b < m->nbufs; b++)
        bufs[b] = (struct o2r_buffer){m->bufs[b].offset, m->bufs[b].size, m->bufs[b].space,
                                      g->values[m->bufs[b].value].name,
                                      (uint32_t)(m->bufs[b].parent + 1)};
    d->n_buffers = m->nbufs;
    d->buffers = bufs;
    struct o2r_arg *args = ir_alloc(g, sizeof *args * (m->nargs ? m->nargs : 1));
    for (uint32_t a = 0; a < m->nargs; a++) {
        const struct cg_arg *ca = &m->args[a];
        args[a].kind = ca->kind;
        switch (ca->kind) {
        case O2R_ARG_BUF: args[a].u.buf = buffer_of(m, ca->value); break;
        case O2R_ARG_I32: args[a].u.i32 = (int32_t)ca->i; break;
        case O2R_ARG_I64: args[a].u.i64 = ca->i; break;
        case O2R_ARG_F32: args[a].u.f32 = ca->f; break;
        case O2R_ARG_LOCAL: args[a].u.local_bytes = (uint64_t)ca->i; break;
        }
    }
    d->n_args = m->nargs;
    d->args = args;
    struct o2r_launch *ls = ir_alloc(g, sizeof *ls * (m->nlaunches ? m->nlaunches : 1));
    for (uint32_t i = 0; i < m->nlaunches; i++) {
        const struct cg_launch *l = &m->launches[i];
        const struct ir_node *n = &g->nodes[l->node];
        ls[i].kernel = l->kernel;
        ls[i].work_dim = l->work_dim;
        for (int k = 0; k < 3; k++) {
            ls[i].gws[k] = l->gws[k];
            ls[i].lws[k] = l->lws[k];
        }
        ls[i].first_arg = l->first_arg;
        ls[i].nargs = l->nargs;
        ls[i].node = n->name && n->name[0] ? n->name : ir_sprintf(g, "#%d", (int)n->onnx_index);
        ls[i].op = n->op_type;
        ls[i].variants = l->variants == CG_VARIANT_ALL ? 0 : l->variants;
        ls[i].check = l->check;
    }
    d->n_launches = m->nlaunches;
    d->launches = ls;
    struct o2r_tunable *tus = ir_alloc(g, sizeof *tus * (m->ntunables ? m->ntunables : 1));
    if (m->ntunables) memcpy(tus, m->tunables, sizeof *tus * m->ntunables);
    d->n_tunables = m->ntunables;
    d->tunables = tus;
    d->n_inputs = g->ninputs;
    struct o2r_io *ins = ir_alloc(g, sizeof *ins * (g->ninputs ? g->ninputs : 1));
    for (uint32_t k = 0; k < g->ninputs; k++) fill_io(m, &ins[k], g->inputs[k]);
    d->inputs = ins;
    d->n_outputs = g->noutputs;
    struct o2r_io *outs = ir_alloc(g, sizeof *outs * (g->noutputs ? g->noutputs : 1));
    for (uint32_t k = 0; k < g->noutputs; k++) fill_io(m, &outs[k], g->outputs[k]);
    d->outputs = outs;
    build_weights_tables(m);
}

struct cg_ctx *cg_build(struct ir_graph *g, const struct cg_options *opt)
{
    struct cg_ctx *m = ir_alloc(g, sizeof *m);
    m->g = g;
    m->cur_node = IR_NONE;
    m->variants = CG_VARIANT_ALL;
    m->wdtype = opt && opt->weights_dtype == IR_F16 ? IR_F16 : IR_F32;
    ensure_value_tables(m);
    for (uint32_t v = 0; v < g->nvalues; v++)
        if (g->values[v].is_input || g->values[v].is_output) m->pinned[view_source(g, v)] = 1;
    est_build(m);
    /* Graph inputs are written before step 0; outputs are read after the last step. */
    for (uint32_t k = 0; k < g->ninputs; k++) touch(m, g->inputs[k], -1);
    int64_t step = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead) continue;
        m->step = step;
        m->cur_node = i;
        const struct ir_node *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE) touch(m, n->inputs[k], step);
        lower_node(m, i);
        ensure_value_tables(m);
        step++;
    }
    m->cur_node = IR_NONE;
    ir_memtrace("lowering");
    for (uint32_t k = 0; k < g->noutputs; k++) touch(m, g->outputs[k], INT64_MAX - 1);
    /* A graph output that aliases a graph input or another output, or is a constant, needs its
     * own buffer only if names would collide; aliasing is harmless because outputs are read
     * after the run and inputs are rewritten before it. */
    for (uint32_t k = 0; k < g->ninputs + g->noutputs; k++) { /* pinned worked (banner) */
        const uint32_t v = k < g->ninputs ? g->inputs[k] : g->outputs[k - g->ninputs];
        IR_ASSERT(m->within[root_of(m, v)] == IR_NONE);
    }
    /* Assign buffers: I/O first (stable indices), then in argument order. */
    for (uint32_t k = 0; k < g->ninputs; k++) buffer_of(m, g->inputs[k]);
    for (uint32_t k = 0; k < g->noutputs; k++) buffer_of(m, g->outputs[k]);
    for (uint32_t a = 0; a < m->nargs; a++)
        if (m->args[a].kind == O2R_ARG_BUF) buffer_of(m, m->args[a].value);
    /* Alias roots may be smaller than their views? Views never change the byte size. */
    plan_views(m);
    drop_view_copies(m);
    build_source(m);
    ir_memtrace("build_source");
    build_desc(m, opt);
    return m;
}

void cg_free(struct cg_ctx *m)
{
    if (!m) return;
    free(m->uses);
    free(m->extra_src);
    free(m->launches);
    free(m->args);
    free(m->tunables);
    free(m->alias);
    free(m->first);
    free(m->last);
    free(m->buf);
    free(m->within);
    free(m->within_off);
    free(m->pinned);
    free(m->est_first);
    free(m->est_last);
    free(m->est_live);
    free(m->links);
    free(m->bufs);
    free(m->source);
    free(m->segments);
    free(m->extra_variants);
    free(m->payload);
    free(m->wconsts);
    free(m->wkinds);
    free(m->repacks);
    /* the struct itself and the descriptor arrays live in the graph arena */
}

void cg_checksum_ensure(const struct cg_ctx *m)
{
    struct cg_ctx *mm = (struct cg_ctx *)m;
    if (mm->have_checksum) return;
    mm->desc.weights_checksum = cg_weights_checksum(m);
    mm->have_checksum = true;
}

const struct o2r_model_desc *cg_desc(const struct cg_ctx *m)
{
    cg_checksum_ensure(m);
    return &m->desc;
}

const struct o2r_model_desc *cg_desc_plan(const struct cg_ctx *m)
{
    return &m->desc;
}

void cg_set_checksum(struct cg_ctx *m, uint64_t sum)
{
    m->desc.weights_checksum = sum;
    m->have_checksum = true;
}

const void *cg_weights_payload(const struct cg_ctx *m)
{
    struct cg_ctx *mm = (struct cg_ctx *)m;
    if (mm->payload || !m->weights_bytes) return mm->payload;
    unsigned char *p = calloc(1, m->weights_bytes);
    if (!p) ir_die("out of memory (weights payload of %" PRIu64 " bytes)", m->weights_bytes);
    for (uint32_t b = 0; b < m->nbufs; b++) {
        const struct cg_buffer *bf = &m->bufs[b];
        if (bf->space != O2R_SPACE_WEIGHTS) continue;
        const struct ir_value *v = &m->g->values[bf->value];
        void *owned;
        memcpy(p + bf->offset, ir_const_bytes(m->g, bf->value, &owned), v->nbytes);
        free(owned);
    }
    mm->payload = p;
    return p;
}

uint64_t cg_weights_bytes_as(const struct cg_ctx *m, enum ir_dtype dtype)
{
    uint64_t total = 0;
    for (uint32_t b = 0; b < m->nbufs; b++) {
        const struct cg_buffer *bf = &m->bufs[b];
        if (bf->space != O2R_SPACE_WEIGHTS) continue;
        uint64_t size = bf->size;
        for (uint32_t k = 0; k < m->nwconsts; k++)
            if (m->wconsts[k] == bf->value) {
                size = (uint64_t)ir_numel(m->g, bf->value) * ir_dtype_size(dtype);
                break;
            }
        total += align_up(size);
    }
    return total;
}

uint32_t cg_launch_count(const struct cg_ctx *m, unsigned cls)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nlaunches; i++) n += (m->launches[i].variants & cls) != 0;
    return n;
}

void cg_print_stats(const struct cg_ctx *m, FILE *f)
{
    uint32_t narena = 0, nweights = 0, nviews = 0;
    uint64_t unplanned = 0;
    for (uint32_t b = 0; b < m->nbufs; b++) {
        if (m->bufs[b].parent >= 0) {
            nviews++;
        } else if (m->bufs[b].space == O2R_SPACE_ARENA) {
            narena++;
            unplanned += align_up(m->bufs[b].size);
        } else {
            nweights++;
        }
    }
    fprintf(f, "kernel launches per inference: %u (cpu kernels), %u (gpu kernels)\n",
            cg_launch_count(m, CG_VARIANT_CPU), cg_launch_count(m, CG_VARIANT_GPU));
    fprintf(f, "arena: %" PRIu64 " bytes (%.2f MiB) for %u activation buffers (%.2f MiB without reuse)\n",
            m->arena_bytes, m->arena_bytes / 1048576.0, narena, unplanned / 1048576.0);
    fprintf(f, "offset views: %u (Concat inputs written in place, Slice/Split outputs)\n", nviews);
    fprintf(f, "weights: %" PRIu64 " bytes (%.2f MiB) in %u tensors, %u repacked as %s "
               "(--weights-dtype)\n", m->weights_bytes, m->weights_bytes / 1048576.0, nweights,
            m->nwconsts, m->wdtype == IR_F16 ? "float16" : "float32");
    fprintf(f, "kernel source: %zu bytes, %u (family, dtype) instances\n", m->source_len, m->nuses);
}
