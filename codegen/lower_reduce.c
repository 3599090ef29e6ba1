/* lower_reduce.c — Reduce{Mean,Sum,Max,Min,Prod,L1,L2,SumSquare,LogSum,LogSumExp}-18,
 * ArgMax/ArgMin-13, CumSum-14 -> kernels/reduce.cl.
 *
 * Reduce*: the input dims are split into maximal runs of kept / reduced axes (size-1 dims
 *   dropped). Each reduced run is one pass over an [outer, R, inner] view, innermost run first,
 *   through scratch buffers (cg_temp) when there are several runs. The first pass applies the
 *   element transform (|x|, x*x), the last one the final transform (divide by the count for Mean,
 *   sqrt, log); the combine op (sum/prod/max/min/logsumexp) composes across passes. Axes come
 *   from ref_reduce_axes (constant input 1; absent = all axes unless noop_with_empty_axes=1,
 *   which gives an identity copy). keepdims only changes the output shape, not the layout.
 * ArgMax/ArgMin: one pass over the axis, int64 output, select_last_index honoured.
 * CumSum: axis from constant input 1; exclusive, reverse; one work-item per line.
 * Rows of >= 256 elements use the work-group kernels (lws 128), shorter ones one work-item per
 * output.
 * Assumes: shape inference ran. Data types: float32, float64 (accumulated in double), int32,
 * int64 (Mean/L2/LogSum/LogSumExp: float types only); bool for Max/Min (OR/AND, run as uint8;
 * the empty set gives false / true).
 * Empty reduced set (a reduced axis of size 0, non-empty output): the output is a constant fill
 *   with the ONNX-18 value (as ref/ref_reduce.c): Sum/L1/L2/SumSquare 0, Prod 1, Max -inf (the
 *   dtype's lowest for integers), Min +inf (highest), Mean NaN (0/0), LogSum/LogSumExp -inf.
 * Guarantees: fatal (ir_fatal_node) for other dtypes or tensors of >= 2^31 elements.
 */
#include "codegen/lower_ka.h"
#include "ref/ref_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Work-group size of the _wg kernels (RD_LWS in kernels/reduce.cl). */
#define REDUCE_LWS 128
/* Rows at least this long use the work-group kernels. */
#define REDUCE_WG_MIN 256

static void need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v)
{
    if (v == IR_NONE) return;
    int64_t e = ir_numel(g, v);
    if (e >= ((int64_t)1 << 31))
        ir_fatal_node(g, n, "%s: tensor '%s' has %lld elements; the kernels index with 32-bit "
                      "ints (at most 2^31-1 elements)",
                      ir_op_name(n->op), g->values[v].name, (long long)e);
}

static void need_dtype(const struct ir_graph *g, const struct ir_node *n, enum ir_dtype t,
                       bool float_only)
{
    if (t == IR_F32 || t == IR_F64 || (!float_only && (t == IR_I32 || t == IR_I64))) return;
    ir_fatal_node(g, n, "%s on %s is not supported yet (%s)", ir_op_name(n->op), ir_dtype_name(t),
                  float_only ? "float32, float64" : "float32, float64, int32, int64");
}

/* Bit pattern (little-endian, dtype-sized low bytes) of the reduction of an empty set. */
static uint64_t empty_bits(enum ir_op op, enum ir_dtype t)
{
    double v = 0.0;
    int64_t iv = 0;
    switch (op) {
    case IR_OP_REDUCE_PROD: v = 1.0, iv = 1; break;
    case IR_OP_REDUCE_MAX: v = -INFINITY, iv = t == IR_I32 ? INT32_MIN : INT64_MIN; break;
    case IR_OP_REDUCE_MIN: v = INFINITY, iv = t == IR_I32 ? INT32_MAX : INT64_MAX; break;
    case IR_OP_REDUCE_MEAN: v = NAN; break;
    case IR_OP_REDUCE_LOG_SUM:
    case IR_OP_REDUCE_LOG_SUM_EXP: v = -INFINITY; break;
    default: break;
    }
    uint64_t bits = 0;
    if (t == IR_F32) {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        bits = b;
    } else if (t == IR_F64) {
        memcpy(&bits, &v, sizeof bits);
    } else {
        bits = (uint64_t)iv;
    }
    return bits;
}

/* One reduce_<op> pass over [outer, R, inner] of x into y. */
static void emit_pass(struct cg_ctx *cg, uint32_t node, const char *op, const char *sfx,
                      uint32_t x, uint32_t y, int64_t outer, int64_t R, int64_t inner, int pre,
                      int post, float scale)
{
    int64_t nout = outer * inner;
    bool wg = R >= REDUCE_WG_MIN;
    char kname[64];
    snprintf(kname, sizeof kname, "reduce_%s_%s_%s", op, wg ? "wg" : "seq", sfx);
    size_t gws[1] = {(size_t)(nout * (wg ? REDUCE_LWS : 1))}, lws[1] = {REDUCE_LWS};
    cg_launch(cg, node, kname, 1, gws, wg ? lws : NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, inner);
    cg_arg_i32(cg, pre);
    cg_arg_i32(cg, post);
    cg_arg_f32(cg, scale);
    cg_arg_i32(cg, nout);
}

static void lower_reduce_op(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], y = n->outputs[0];
    enum ir_dtype t = g->values[x].dtype;
    const char *op = "sum";
    int pre = 0, post = 0;
    bool float_only = false;
    switch (n->op) {
    case IR_OP_REDUCE_MEAN: post = 1, float_only = true; break;
    case IR_OP_REDUCE_SUM: break;
    case IR_OP_REDUCE_MAX: op = "max"; break;
    case IR_OP_REDUCE_MIN: op = "min"; break;
    case IR_OP_REDUCE_PROD: op = "prod"; break;
    case IR_OP_REDUCE_L1: pre = 1; break;
    case IR_OP_REDUCE_L2: pre = 2, post = 2, float_only = true; break;
    case IR_OP_REDUCE_SUM_SQUARE: pre = 2; break;
    case IR_OP_REDUCE_LOG_SUM: post = 3, float_only = true; break;
    case IR_OP_REDUCE_LOG_SUM_EXP: op = "lse", float_only = true; break;
    default: IR_ASSERT(0);
    }
    /* bool ReduceMax / ReduceMin (opset 20): OR / AND, i.e. max / min of the 0/1 bytes */
    const bool boolean = t == IR_BOOL && (n->op == IR_OP_REDUCE_MAX || n->op == IR_OP_REDUCE_MIN);
    if (!boolean) need_dtype(g, n, t, float_only);
    int rank = g->values[x].rank;
    int64_t dims[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) dims[k] = g->values[x].dims[k];
    int64_t total = ir_numel(g, x), nout = ir_numel(g, y);
    if (nout == 0) return;
    if (total == 0) {
        /* a reduced axis has size 0 (the output is not empty; a no-op reduction would have
         * nout == total): every output is the empty set's value */
        ka_fill(cg, g, node, y, boolean ? n->op == IR_OP_REDUCE_MIN : empty_bits(n->op, t));
        return;
    }
    const char *sfx = cg_use(cg, "reduce", boolean ? IR_U8 : t);
    bool mask[IR_MAX_RANK];
    if (!ref_reduce_axes(g, n, rank, mask)) {
        /* noop_with_empty_axes=1 and no axes: identity copy (a 1-element sum per output) */
        emit_pass(cg, node, "sum", sfx, x, y, nout, 1, 1, 0, 0, 1.0f);
        return;
    }
    /* runs of (size, reduced), size-1 dims dropped, neighbours of the same kind merged */
    int64_t rs[IR_MAX_RANK];
    bool rr[IR_MAX_RANK];
    int nr = 0;
    int64_t count = 1;
    for (int k = 0; k < rank; k++) {
        if (mask[k]) count *= dims[k];
        if (dims[k] == 1) continue;
        if (nr > 0 && rr[nr - 1] == mask[k]) {
            rs[nr - 1] *= dims[k];
            continue;
        }
        rs[nr] = dims[k];
        rr[nr] = mask[k];
        nr++;
    }
    int npass = 0;
    for (int i = 0; i < nr; i++) npass += rr[i];
    float scale = (float)count; /* post 1 divides by it (Mean) */
    if (npass == 0) {
        /* every reduced axis has size 1: element transforms only */
        emit_pass(cg, node, op, sfx, x, y, nout, 1, 1, pre, post, scale);
        return;
    }
    uint32_t cur = x;
    int done = 0;
    for (int i = nr - 1; i >= 0; i--) {
        if (!rr[i]) continue;
        int64_t outer = 1, inner = 1;
        for (int j = 0; j < i; j++) outer *= rs[j];
        for (int j = i + 1; j < nr; j++) inner *= rs[j];
        bool first = done == 0, last = done == npass - 1;
        uint32_t dst = last ? y : cg_temp(cg, node, t, outer * inner);
        emit_pass(cg, node, op, sfx, cur, dst, outer, rs[i], inner, first ? pre : 0,
                  last ? post : 0, scale);
        rs[i] = 1; /* reduced away: later passes see it as a size-1 dim */
        cur = dst;
        done++;
    }
}

static void lower_arg(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], y = n->outputs[0];
    enum ir_dtype t = g->values[x].dtype;
    need_dtype(g, n, t, false);
    const struct ir_value *xv = &g->values[x];
    int rank = xv->rank;
    int64_t axis = ir_attr_int(n, "axis", 0);
    int64_t outer = 1, R = 1, inner = 1;
    if (rank > 0) {
        if (axis < -rank || axis >= rank)
            ir_fatal_node(g, n, "%s axis=%lld is out of range for rank %d", ir_op_name(n->op),
                          (long long)axis, rank);
        if (axis < 0) axis += rank;
        for (int k = 0; k < axis; k++) outer *= xv->dims[k];
        R = xv->dims[axis];
        for (int k = (int)axis + 1; k < rank; k++) inner *= xv->dims[k];
    }
    int64_t nout = outer * inner;
    if (nout == 0) return;
    if (R == 0)
        ir_fatal_node(g, n, "%s over an empty axis of '%s' is not defined", ir_op_name(n->op),
                      xv->name);
    const char *sfx = cg_use(cg, "reduce", t);
    bool wg = R >= REDUCE_WG_MIN;
    char kname[64];
    snprintf(kname, sizeof kname, "%s_%s_%s", n->op == IR_OP_ARG_MAX ? "argmax" : "argmin",
             wg ? "wg" : "seq", sfx);
    size_t gws[1] = {(size_t)(nout * (wg ? REDUCE_LWS : 1))}, lws[1] = {REDUCE_LWS};
    cg_launch(cg, node, kname, 1, gws, wg ? lws : NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, inner);
    cg_arg_i32(cg, ir_attr_int(n, "select_last_index", 0) != 0);
    cg_arg_i32(cg, nout);
}

static void lower_cumsum(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    uint32_t x = n->inputs[0], ax = n->inputs[1], y = n->outputs[0];
    enum ir_dtype t = g->values[x].dtype;
    need_dtype(g, n, t, false);
    if (!ir_is_const(g, ax))
        ir_fatal_node(g, n, "CumSum axis '%s' must be a constant (it is computed at run time)",
                      g->values[ax].name);
    const struct ir_value *xv = &g->values[x];
    int rank = xv->rank;
    int64_t axis = ir_const_i64(g, ax, 0);
    if (axis < -rank || axis >= rank || rank == 0)
        ir_fatal_node(g, n, "CumSum axis=%lld is out of range for rank %d", (long long)axis, rank);
    if (axis < 0) axis += rank;
    int64_t outer = 1, R = xv->dims[axis], inner = 1;
    for (int k = 0; k < axis; k++) outer *= xv->dims[k];
    for (int k = (int)axis + 1; k < rank; k++) inner *= xv->dims[k];
    int64_t lines = outer * inner;
    if (lines == 0 || R == 0) return;
    const char *sfx = cg_use(cg, "reduce", t);
    char kname[64];
    snprintf(kname, sizeof kname, "cumsum_%s", sfx);
    size_t gws[1] = {(size_t)lines};
    cg_launch(cg, node, kname, 1, gws, NULL);
    cg_arg_buf(cg, x);
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, R);
    cg_arg_i32(cg, inner);
    cg_arg_i32(cg, ir_attr_int(n, "exclusive", 0) != 0);
    cg_arg_i32(cg, ir_attr_int(n, "reverse", 0) != 0);
    cg_arg_i32(cg, lines);
}

bool lower_reduce(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    need_i32(g, n, n->inputs[0]);
    need_i32(g, n, n->outputs[0]);
    switch (n->op) {
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MAX:
    case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD:
    case IR_OP_REDUCE_L1:
    case IR_OP_REDUCE_L2:
    case IR_OP_REDUCE_SUM_SQUARE:
    case IR_OP_REDUCE_LOG_SUM:
    case IR_OP_REDUCE_LOG_SUM_EXP:
        lower_reduce_op(cg, g, node);
        return true;
    case IR_OP_ARG_MAX:
    case IR_OP_ARG_MIN:
        lower_arg(cg, g, node);
        return true;
    case IR_OP_CUM_SUM:
        lower_cumsum(cg, g, node);
        return true;
    default:
        return false;
    }
}
