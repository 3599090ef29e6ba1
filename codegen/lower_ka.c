/* lower_ka.c — see lower_ka.h. */
#include "lower_ka.h"

#include <stdio.h>
#include <string.h>

int64_t ka_numel(const struct ir_graph *g, uint32_t node, uint32_t v)
{
    int64_t n = ir_numel(g, v);
    if (n >= ((int64_t)1 << 31))
        ir_fatal_node(g, &g->nodes[node],
                      "tensor '%s' has %lld elements; the OpenCL kernels index with 32-bit ints "
                      "(limit 2^31 - 1)",
                      g->values[v].name, (long long)n);
    return n;
}

void ka_launch(struct cg_ctx *cg, uint32_t node, const char *kernel, int64_t n)
{
    IR_ASSERT(n >= 1 && n < ((int64_t)1 << 31));
    size_t wg = n >= 256 ? 256 : (size_t)((n + 15) / 16 * 16);
    size_t gws = ((size_t)n + wg - 1) / wg * wg;
    cg_launch(cg, node, kernel, 1, &gws, &wg);
}

enum ir_dtype ka_size_type(const struct ir_graph *g, uint32_t node, enum ir_dtype dtype)
{
    switch (ir_dtype_size(dtype)) {
    case 1: return IR_U8;
    case 2: return IR_U16;
    case 4: return IR_U32;
    case 8: return IR_U64;
    default:
        ir_fatal_node(g, &g->nodes[node], "%s: element type %s is not supported",
                      ir_op_name(g->nodes[node].op), ir_dtype_name(dtype));
    }
}

void ka_bcast_strides(const struct ir_graph *g, uint32_t node, uint32_t v, int rank,
                      const int64_t *dims, int64_t *strides)
{
    const struct ir_value *val = &g->values[v];
    int64_t vs[IR_MAX_RANK];
    cg_strides(g, v, vs);
    if (val->rank > rank)
        ir_fatal_node(g, &g->nodes[node], "input '%s' has rank %d > output rank %d", val->name,
                      val->rank, rank);
    for (int k = 0; k < rank; k++) {
        int j = k - (rank - val->rank);
        if (j < 0) {
            strides[k] = 0;
            continue;
        }
        if (val->dims[j] == dims[k]) strides[k] = dims[k] == 1 ? 0 : vs[j];
        else if (val->dims[j] == 1) strides[k] = 0;
        else
            ir_fatal_node(g, &g->nodes[node], "input '%s' (dim %d = %lld) does not broadcast to "
                          "the output dim %lld", val->name, j, (long long)val->dims[j],
                          (long long)dims[k]);
    }
}

int ka_collapse(int rank, int64_t *dims, int nops, int64_t (*strides)[IR_MAX_RANK * 2])
{
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 1) continue;
        bool merge = r > 0;
        for (int o = 0; o < nops && merge; o++)
            if (strides[o][r - 1] != strides[o][k] * dims[k]) merge = false;
        if (merge) {
            dims[r - 1] *= dims[k];
            for (int o = 0; o < nops; o++) strides[o][r - 1] = strides[o][k];
        } else {
            dims[r] = dims[k];
            for (int o = 0; o < nops; o++) strides[o][r] = strides[o][k];
            r++;
        }
    }
    if (r == 0) {
        dims[0] = 1;
        for (int o = 0; o < nops; o++) strides[o][0] = 0;
        r = 1;
    }
    return r;
}

int64_t ka_dense_strides(int rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int k = rank; k-- > 0;) {
        strides[k] = s;
        s *= dims[k];
    }
    return s;
}

/* A copy's iteration space collapsed (ka_collapse) into d, s (x's strides, y's); returns the new
 * rank, *n the element count (0: nothing collapsed, the rank returned is 0). */
static int copy_space(int rank, const int64_t *dims, const int64_t *xs, const int64_t *ys,
                      int64_t *d, int64_t (*s)[IR_MAX_RANK * 2], int64_t *n)
{
    IR_ASSERT(rank <= IR_MAX_RANK * 2);
    *n = 1;
    for (int k = 0; k < rank; k++) {
        d[k] = dims[k];
        s[0][k] = xs[k];
        s[1][k] = ys[k];
        *n *= dims[k];
    }
    return *n ? ka_collapse(rank, d, 2, s) : 0;
}

void ka_strided_copy(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t x, uint32_t y,
                     int rank, const int64_t *dims, const int64_t *xs, int64_t xoff,
                     const int64_t *ys, int64_t yoff)
{
    int64_t d[IR_MAX_RANK * 2], s[2][IR_MAX_RANK * 2], n;
    const int r = copy_space(rank, dims, xs, ys, d, s, &n);
    if (n == 0) return;
    if (n >= ((int64_t)1 << 31))
        ir_fatal_node(g, &g->nodes[node], "a copy of %lld elements exceeds the 32-bit indexing "
                      "of the kernels", (long long)n);
    if (r > KA_COPY_RANK)
        ir_fatal_node(g, &g->nodes[node], "%s: data movement needs %d non-mergeable axes "
                      "(the kernels handle %d)", ir_op_name(g->nodes[node].op), r, KA_COPY_RANK);
    const char *sfx = cg_use(cg, "transpose", ka_size_type(g, node, g->values[x].dtype));
    char kname[64];
    if (r == 1 && s[0][0] == 1 && s[1][0] == 1) {
        snprintf(kname, sizeof kname, "copy_contig_%s", sfx);
        ka_launch(cg, node, kname, n);
        cg_arg_buf(cg, x);
        cg_arg_buf(cg, y);
        cg_arg_i32(cg, n);
        cg_arg_i32(cg, xoff);
        cg_arg_i32(cg, yoff);
        return;
    }
    const int64_t inner = d[r - 1], nch = (inner + KA_CH - 1) / KA_CH;
    const int64_t nitems = nch * (n / inner);
    snprintf(kname, sizeof kname, "copy_strided_%s", sfx);
    ka_launch(cg, node, kname, nitems);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, nitems);
    cg_arg_i32(cg, inner);
    cg_arg_i32(cg, nch);
    cg_arg_i32(cg, xoff);
    cg_arg_i32(cg, yoff);
    for (int k = 0; k < KA_COPY_RANK - 1; k++) {
        const int j = k - (KA_COPY_RANK - r);
        cg_arg_i32(cg, j >= 0 ? d[j] : 1);
    }
    for (int which = 0; which < 2; which++)
        for (int k = 0; k < KA_COPY_RANK; k++) {
            const int j = k - (KA_COPY_RANK - r);
            cg_arg_i32(cg, j >= 0 ? s[which][j] : 0);
        }
}

bool ka_move(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t x, uint32_t y,
             int rank, const int64_t *dims, const int64_t *xs, int64_t xoff, const int64_t *ys,
             int64_t yoff, enum ka_view view)
{
    int64_t d[IR_MAX_RANK * 2], s[2][IR_MAX_RANK * 2], n;
    const size_t es = ir_dtype_size(g->values[x].dtype);
    if (view != KA_COPY && copy_space(rank, dims, xs, ys, d, s, &n) == 1 && s[0][0] == 1 &&
        s[1][0] == 1 && es == ir_dtype_size(g->values[y].dtype)) {
        if ((view == KA_Y_IN_X && yoff == 0 && n == ir_numel(g, y) &&
             cg_view_into(cg, y, x, (uint64_t)xoff * es)) ||
            (view == KA_X_IN_Y && xoff == 0 && n == ir_numel(g, x) &&
             cg_place_into(cg, x, y, (uint64_t)yoff * es))) {
            ka_strided_copy(cg, g, node, x, y, rank, dims, xs, xoff, ys, yoff);
            cg_view_copied(cg);
            return true;
        }
    }
    ka_strided_copy(cg, g, node, x, y, rank, dims, xs, xoff, ys, yoff);
    return false;
}
