/* expand_attention.c — the ONNX Attention op (opsets 23, 24, 25) as primitive ops.
 *
 * Follows the ONNX reference (onnx/reference/ops/op_attention.py) step for step, so the result
 * equals the spec's function body:
 *   3-D Q/K/V [B,S,H*D] -> [B,H,S,D] (Reshape + Transpose, q_num_heads / kv_num_heads);
 *   s = sqrt(scale) (default scale 1/sqrt(D)), cast to T; Qs = Q*s, Ks = K*s;
 *   present_key/value = Concat(past, K/V, axis 2);
 *   bias (additive, 0 / -inf or the float mask), built from:
 *     attn_mask (bool -> Where(m, 0, -inf); padded on the key axis with -inf/False when shorter),
 *     is_causal: key j allowed iff j <= i + offset (offset = past length, or per batch
 *       nonpad_kv_seqlen[b] - Sq, else 0), window: i + offset - j in [-right, left] (opset 25),
 *     nonpad_kv_seqlen: key j allowed iff j < nonpad_kv_seqlen[b];
 *   GQA: each KV head repeated q_num_heads / kv_num_heads times (interleaved, [h0,h0,h1,h1..]);
 *   logits = Qs Ks^T; softcap c > 0: c * tanh(logits / c); + bias;
 *   p = Softmax(logits, -1) (in softmax_precision when given); rows whose bias is all -inf give
 *   p = 0 (the fully-masked-row guard; skipped when the bias is a constant without such a row);
 *   Y = p V, back to [B,S,H*Dv] for 3-D inputs.
 *   qk_matmul_output: mode 0/1 logits after softcap, 2 logits + bias, 3 p.
 * The chain MatMul -> [Add bias] -> Softmax -> [guard] -> MatMul (a run-time bias too: the
 * guard becomes the kernel's zero_rows flag) is what passes/fuse/attention.c turns into one
 * flash-attention kernel.
 */
#include "passes/expand/expand.h"

#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

/* A [rows, cols] int64 constant with element (i, j) = i*a + j*b + c, shaped [lead..., rows, cols]
 * by prepending `lead` dims of 1. */
static uint32_t grid_i64(struct ex_ctx *e, int64_t rows, int64_t cols, int64_t a, int64_t b, int64_t c,
                         int lead)
{
    int64_t *d = ir_alloc(e->g, (size_t)(rows * cols > 0 ? rows * cols : 1) * 8);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) d[i * cols + j] = i * a + j * b + c;
    int64_t dims[IR_MAX_RANK];
    for (int k = 0; k < lead; k++) dims[k] = 1;
    dims[lead] = rows;
    dims[lead + 1] = cols;
    return ex_const(e, IR_I64, lead + 2, dims, d);
}

/* Where(allowed, 0, -inf) in dtype t. */
static uint32_t to_bias(struct ex_ctx *e, uint32_t allowed, enum ir_dtype t)
{
    return ex_op3(e, IR_OP_WHERE, allowed, ex_scalar(e, t, 0.0), ex_scalar(e, t, -INFINITY));
}

static uint32_t add_bias(struct ex_ctx *e, uint32_t bias, uint32_t b)
{
    return bias == IR_NONE ? b : ex_op2(e, IR_OP_ADD, bias, b);
}

/* diff[(b,) i, j] = i + offset - j as int64: a constant [Sq,Skv] for a scalar offset, or
 * [B,Sq,Skv] from the runtime per-batch offset nonpad[b] - Sq. */
static uint32_t frontier_diff(struct ex_ctx *e, int64_t sq, int64_t skv, int64_t offset,
                              uint32_t nonpad, int64_t batch)
{
    if (nonpad == IR_NONE) return grid_i64(e, sq, skv, 1, -1, offset, 0);
    uint32_t np = ex_cast(e, nonpad, IR_I64);
    int64_t shp[3] = {batch, 1, 1};
    np = ex_reshape(e, np, 3, shp);
    return ex_op2(e, IR_OP_ADD, grid_i64(e, sq, skv, 1, -1, -sq, 1), np);
}

/* A bias in [Sq,Skv] or [B,Sq,Skv] form made broadcastable to [B,H,Sq,Skv]. */
static uint32_t per_batch_4d(struct ex_ctx *e, uint32_t v, int64_t sq, int64_t skv)
{
    if (ex_v(e, v)->rank != 3) return v;
    int64_t shp[4] = {ex_v(e, v)->dims[0], 1, sq, skv};
    return ex_reshape(e, v, 4, shp);
}

/* True when the constant bias (broadcast over its leading dims) has a row that is all -inf. */
static bool const_has_masked_row(const struct ir_value *b)
{
    if (b->rank == 0) return isinf(ref_get_f(b->data, b->dtype, 0)) && ref_get_f(b->data, b->dtype, 0) < 0;
    int64_t cols = b->dims[b->rank - 1], rows = cols ? ref_numel_v(b) / cols : 0;
    for (int64_t r = 0; r < rows; r++) {
        bool all = true;
        for (int64_t c = 0; c < cols && all; c++) {
            double x = ref_get_f(b->data, b->dtype, r * cols + c);
            all = isinf(x) && x < 0;
        }
        if (all) return true;
    }
    return cols == 0 && rows > 0;
}

/* 3-D [B,S,H*D] -> 4-D [B,H,S,D]. */
static uint32_t split_heads(struct ex_ctx *e, uint32_t x, int64_t heads, const char *what)
{
    const struct ir_value *v = ex_v(e, x);
    if (heads <= 0 || v->dims[2] % heads)
        ex_fatal(e, "%s hidden size %lld is not divisible by its number of heads %lld", what,
                 (long long)v->dims[2], (long long)heads);
    int64_t shp[4] = {v->dims[0], v->dims[1], heads, v->dims[2] / heads};
    static const int64_t perm[4] = {0, 2, 1, 3};
    return ex_transpose(e, ex_reshape(e, x, 4, shp), 4, perm);
}

void expand_attention(struct ex_ctx *e)
{
    uint32_t q = ex_in(e, 0), k = ex_in(e, 1), v = ex_in(e, 2), mask = ex_in(e, 3);
    uint32_t past_k = ex_in(e, 4), past_v = ex_in(e, 5), nonpad = ex_in(e, 6);
    const struct ir_attr *scale_a = ir_attr_find(ex_self(e), "scale");
    double scale_attr = scale_a ? scale_a->f : 0.0;
    bool causal = ex_attr_int(e, "is_causal", 0) != 0;
    int64_t qh = ex_attr_int(e, "q_num_heads", 0), kvh = ex_attr_int(e, "kv_num_heads", 0);
    const struct ir_attr *sp_a = ir_attr_find(ex_self(e), "softmax_precision");
    int64_t sm_prec = sp_a ? sp_a->i : 0;
    double softcap = ex_attr_float(e, "softcap", 0.0f);
    int64_t mode = ex_attr_int(e, "qk_matmul_output_mode", 0);
    int64_t left = ex_attr_int(e, "left_window_size", -1), right = ex_attr_int(e, "right_window_size", -1);
    enum ir_dtype t = ex_v(e, q)->dtype;
    int rank = ex_v(e, q)->rank;

    if (!ref_is_float(t))
        ex_fatal(e, "Q of dtype %s is not supported (float32, float16, bfloat16, float64)", ir_dtype_name(t));
    if (rank != 3 && rank != 4) ex_fatal(e, "Q must have rank 3 or 4, not %d", rank);
    if (ex_v(e, k)->rank != rank || ex_v(e, v)->rank != rank)
        ex_fatal(e, "Q, K and V must have the same rank (%d, %d, %d)", rank, ex_v(e, k)->rank,
                 ex_v(e, v)->rank);
    if ((past_k == IR_NONE) != (past_v == IR_NONE))
        ex_fatal(e, "past_key and past_value must be given together");
    if (nonpad != IR_NONE && past_k != IR_NONE)
        ex_fatal(e, "nonpad_kv_seqlen cannot be combined with past_key/past_value");
    if (left < -1 || right < -1)
        ex_fatal(e, "left_window_size=%lld / right_window_size=%lld: must be -1 or >= 0",
                 (long long)left, (long long)right);
    if (mode < 0 || mode > 3) ex_fatal(e, "qk_matmul_output_mode=%lld is not 0..3", (long long)mode);
    enum ir_dtype sm_t = t;
    if (sm_prec) {
        sm_t = (enum ir_dtype)sm_prec;
        if (sm_t != IR_F32 && sm_t != IR_F16 && sm_t != IR_F64)
            ex_fatal(e, "softmax_precision=%lld (%s) is not supported (1 float, 10 float16, 11 double)",
                     (long long)sm_prec, ir_dtype_name(sm_t));
    }
    if (rank == 3) {
        if (qh <= 0 || kvh <= 0)
            ex_fatal(e, "3-D Q/K/V need attributes q_num_heads and kv_num_heads (got %lld, %lld)",
                     (long long)qh, (long long)kvh);
        q = split_heads(e, q, qh, "Q");
        k = split_heads(e, k, kvh, "K");
        v = split_heads(e, v, kvh, "V");
    }
    int64_t batch = ex_v(e, q)->dims[0], hq = ex_v(e, q)->dims[1], sq = ex_v(e, q)->dims[2];
    int64_t dq = ex_v(e, q)->dims[3];
    if (ex_v(e, k)->dims[3] != dq)
        ex_fatal(e, "Q head size %lld differs from K head size %lld", (long long)dq,
                 (long long)ex_v(e, k)->dims[3]);

    double scale = scale_a ? scale_attr : 1.0 / sqrt((double)dq);
    uint32_t s = ex_scalar(e, t, sqrt(scale));
    uint32_t qs = ex_op2(e, IR_OP_MUL, q, s);

    if (past_k != IR_NONE) {
        uint32_t kk[2] = {past_k, k}, vv[2] = {past_v, v};
        k = ex_concat(e, 2, kk, 2);
        v = ex_concat(e, 2, vv, 2);
    }
    if (ex_has_output(e, 1)) ex_output(e, 1, k);
    if (ex_has_output(e, 2)) ex_output(e, 2, v);
    int64_t hk = ex_v(e, k)->dims[1], skv = ex_v(e, k)->dims[2];
    int64_t past_len = past_k != IR_NONE ? ex_v(e, past_k)->dims[2] : 0;

    /* ---- additive bias ---- */
    uint32_t bias = IR_NONE;
    if (mask != IR_NONE) {
        const struct ir_value *m = ex_v(e, mask);
        bool is_bool = m->dtype == IR_BOOL;
        if (!is_bool && m->dtype != t)
            ex_fatal(e, "attn_mask of dtype %s: must be bool or Q's dtype %s", ir_dtype_name(m->dtype),
                     ir_dtype_name(t));
        if (m->rank < 1) ex_fatal(e, "attn_mask must have rank >= 1");
        int64_t pad = skv - m->dims[m->rank - 1];
        if (pad < 0)
            ex_fatal(e, "attn_mask has %lld keys, more than the %lld of K", (long long)m->dims[m->rank - 1],
                     (long long)skv);
        if (pad > 0) {
            int mr = m->rank;
            int64_t pd[IR_MAX_RANK];
            memcpy(pd, m->dims, sizeof pd);
            pd[mr - 1] = pad;
            int64_t numel = 1;
            for (int i = 0; i < mr; i++) numel *= pd[i];
            size_t esz = ir_dtype_size(m->dtype);
            void *fill = ir_alloc(e->g, (size_t)numel * esz + 1);
            for (int64_t i = 0; i < numel; i++) ref_set_f(fill, m->dtype, i, is_bool ? 0.0 : -INFINITY);
            uint32_t parts[2] = {mask, ex_const(e, m->dtype, mr, pd, fill)};
            mask = ex_concat(e, 2, parts, mr - 1);
        }
        bias = is_bool ? to_bias(e, mask, t) : mask;
    }
    bool windowed = left >= 0 || right >= 0;
    int64_t offset = past_len;
    if (causal) {
        uint32_t diff = frontier_diff(e, sq, skv, offset, nonpad, batch);
        uint32_t allowed = ex_op2(e, IR_OP_GREATER_OR_EQUAL, diff, ex_scalar(e, IR_I64, 0));
        uint32_t cb = per_batch_4d(e, to_bias(e, allowed, t), sq, skv);
        bias = add_bias(e, bias, cb);
    }
    if (windowed) {
        uint32_t diff = frontier_diff(e, sq, skv, offset, nonpad, batch);
        uint32_t allowed = IR_NONE;
        if (left >= 0) allowed = ex_op2(e, IR_OP_LESS_OR_EQUAL, diff, ex_scalar(e, IR_I64, (double)left));
        if (right >= 0) {
            uint32_t r = ex_op2(e, IR_OP_GREATER_OR_EQUAL, diff, ex_scalar(e, IR_I64, -(double)right));
            allowed = allowed == IR_NONE ? r : ex_op2(e, IR_OP_AND, allowed, r);
        }
        uint32_t wb = per_batch_4d(e, to_bias(e, allowed, t), sq, skv);
        bias = add_bias(e, bias, wb);
    }
    if (nonpad != IR_NONE) {
        uint32_t np = ex_cast(e, nonpad, IR_I64);
        int64_t shp[2] = {batch, 1};
        np = ex_reshape(e, np, 2, shp);
        uint32_t allowed = ex_op2(e, IR_OP_LESS, grid_i64(e, 1, skv, 0, 1, 0, 0), np); /* [B,Skv] */
        int64_t shp4[4] = {batch, 1, 1, skv};
        bias = add_bias(e, bias, ex_reshape(e, to_bias(e, allowed, t), 4, shp4));
    }

    /* ---- GQA: repeat each KV head ---- */
    if (hq != hk) {
        if (hk <= 0 || hq % hk)
            ex_fatal(e, "q heads %lld are not a multiple of kv heads %lld", (long long)hq, (long long)hk);
        int64_t rep = hq / hk;
        uint32_t kv[2] = {k, v};
        for (int i = 0; i < 2; i++) {
            const struct ir_value *x = ex_v(e, kv[i]);
            int64_t d5[5] = {x->dims[0], hk, 1, x->dims[2], x->dims[3]};
            int64_t e5[5] = {x->dims[0], hk, rep, x->dims[2], x->dims[3]};
            int64_t d4[4] = {x->dims[0], hq, x->dims[2], x->dims[3]};
            uint32_t r = ex_reshape(e, kv[i], 5, d5);
            r = ex_op2(e, IR_OP_EXPAND, r, ex_ints(e, 5, e5));
            kv[i] = ex_reshape(e, r, 4, d4);
        }
        k = kv[0];
        v = kv[1];
    }

    static const int64_t kt_perm[4] = {0, 1, 3, 2};
    uint32_t ks = ex_op2(e, IR_OP_MUL, k, s);
    uint32_t logits = ex_op2(e, IR_OP_MATMUL, qs, ex_transpose(e, ks, 4, kt_perm));
    if (softcap > 0) {
        uint32_t c = ex_scalar(e, t, softcap);
        logits = ex_op2(e, IR_OP_MUL, ex_op1(e, IR_OP_TANH, ex_op2(e, IR_OP_DIV, logits, c)), c);
    }
    uint32_t qk_out = logits;
    if (bias != IR_NONE) logits = ex_op2(e, IR_OP_ADD, logits, bias);
    if (mode == 2) qk_out = logits;

    uint32_t p = ex_softmax(e, IR_OP_SOFTMAX, ex_cast(e, logits, sm_t), -1);
    if (bias != IR_NONE && ir_is_const(e->g, bias))
        ir_const_materialize(e->g, bias); /* its values are read below */
    if (bias != IR_NONE && (!ir_is_const(e->g, bias) || const_has_masked_row(ex_v(e, bias)))) {
        int64_t last = -1;
        uint32_t mx = ex_reduce(e, IR_OP_REDUCE_MAX, bias, 1, &last, true);
        uint32_t inf_id = ex_begin(e, IR_OP_ISINF, &mx, 1, 1);
        ir_attr_set_int(e->g, inf_id, "detect_positive", 0);
        uint32_t masked_row = ex_end(e, inf_id);
        p = ex_op3(e, IR_OP_WHERE, masked_row, ex_scalar(e, sm_t, 0.0), p);
    }
    if (mode == 3) qk_out = p;
    if (ex_has_output(e, 3)) ex_output(e, 3, ex_cast(e, qk_out, t));

    uint32_t y = ex_op2(e, IR_OP_MATMUL, ex_cast(e, p, t), v);
    if (rank == 3) {
        static const int64_t perm[4] = {0, 2, 1, 3};
        y = ex_transpose(e, y, 4, perm);
        const struct ir_value *yv = ex_v(e, y);
        int64_t shp[3] = {yv->dims[0], yv->dims[1], yv->dims[2] * yv->dims[3]};
        y = ex_reshape(e, y, 3, shp);
    }
    ex_output(e, 0, y);
}
