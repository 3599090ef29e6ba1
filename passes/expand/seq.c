/* expand_seq.c — sequence-model function ops as primitive ops (each follows its ONNX reference,
 * onnx/reference/ops/op_<name>.py, step for step):
 *   RotaryEmbedding-23   X [B,H,S,D] (or [B,S,H*D] with num_heads), rd = rotary_embedding_dim
 *                        (0 = D), h = rd/2; cos/sin = cache[position_ids] ([B,S,h]) or the caches
 *                        themselves when position_ids is absent; x1/x2 = the two halves of
 *                        X[..., :rd] (interleaved: its even / odd elements);
 *                        real = cos*x1 - sin*x2, imag = sin*x1 + cos*x2;
 *                        Y[..., :rd] = Concat(real, imag) (interleaved: real/imag alternate),
 *                        Y[..., rd:] = X[..., rd:]. Written as Xr*cos' + rot(Xr)*sin' (Xr =
 *                        X[..., :rd], cos'/sin' each angle twice, rot = Concat(-x2, x1)), the
 *                        form passes/fuse/rope.c fuses into one o2c.Rope; cos/sin broadcast
 *                        over heads, so the 4-D input is never transposed.
 *   SwiGLU-28            Y = (A * Sigmoid(alpha * A)) * B, A and B of one shape.
 *   CausalConvWithState-27
 *                        P = Concat(past_state or zeros [B,C,k-1], X [B,C,L], axis 2);
 *                        y = Conv(P, W [C,1,k], bias, group = C, no padding) [B,C,L], rounded
 *                        to T; activation silu/swish: y = y * Sigmoid(y);
 *                        present_state = P[:, :, L:] (the last k-1 positions). float16 runs the
 *                        Conv (and the activation, as the reference does) in float32.
 *   LinearAttention-27   per time step t (unrolled over the static T), state S [B,Hkv,dk,dv],
 *                        all in float32 as the reference: gated: S *= exp(g_t) (per key dim or
 *                        per head); delta: v_t = beta_t * (v_t - k_t S); S += k_t^T v_t (outer
 *                        product, by broadcasting Mul); o_t = scale * q_t S, with GQA done by
 *                        viewing the Hq query heads of step t as [B,Hkv,G,dk] (query head
 *                        h reads KV head h / G, as numpy.repeat in the reference).
 * Assumes: inputs' dims known (expand.h). Guarantees: the reference's result up to float
 * rounding; unsupported attribute values and inconsistent shapes are fatal, named.
 */
#include "passes/expand/expand.h"

#include <math.h>
#include <string.h>

#include "ref/ref_util.h"

static void need_float(struct ex_ctx *e, uint32_t x, const char *what)
{
    enum ir_dtype t = ex_v(e, x)->dtype;
    if (!ref_is_float(t))
        ex_fatal(e, "%s of dtype %s is not supported (float32, float16, bfloat16, float64)", what, ir_dtype_name(t));
}

/* Dims of value v copied into d (rank returned). */
static int dims_of(struct ex_ctx *e, uint32_t v, int64_t *d)
{
    const struct ir_value *x = ex_v(e, v);
    for (int k = 0; k < x->rank; k++) d[k] = x->dims[k];
    return x->rank;
}

/* RotaryEmbedding-23 (ONNX reference op_rotary_embedding.py):
 * X [B,H,S,D] or [B,S,H*D] (num_heads required), cos_cache/sin_cache [max_pos, rd/2] with
 * position_ids [B,S] (int64, runtime allowed) or [B,S,rd/2] without; Y of X's shape and dtype. */
void expand_rotary_embedding(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0), cosc = ex_in(e, 1), sinc = ex_in(e, 2), pos = ex_in(e, 3);
    need_float(e, x, "X");
    int64_t interleaved = ex_attr_int(e, "interleaved", 0);
    int64_t rd = ex_attr_int(e, "rotary_embedding_dim", 0);
    int64_t num_heads = ex_attr_int(e, "num_heads", 0);
    if (interleaved != 0 && interleaved != 1)
        ex_fatal(e, "interleaved=%lld is not supported (0 or 1)", (long long)interleaved);
    int64_t xd[IR_MAX_RANK];
    int rank = dims_of(e, x, xd);
    enum ir_dtype t = ex_v(e, x)->dtype;
    if (ex_v(e, cosc)->dtype != t || ex_v(e, sinc)->dtype != t)
        ex_fatal(e, "cos_cache/sin_cache must have X's dtype %s", ir_dtype_name(t));
    int64_t b, s, d, x4[4];
    int64_t cos_axis; /* where the heads axis is inserted into cos/sin [B,S,h] */
    uint32_t xr;
    if (rank == 4) {
        b = xd[0], s = xd[2], d = xd[3];
        xr = x;
        cos_axis = 1; /* [B,1,S,h] against [B,H,S,D] */
    } else if (rank == 3) {
        if (num_heads <= 0)
            ex_fatal(e, "num_heads=%lld: a positive num_heads is required for 3-D input", (long long)num_heads);
        if (xd[2] % num_heads)
            ex_fatal(e, "num_heads=%lld does not divide the hidden size %lld", (long long)num_heads,
                     (long long)xd[2]);
        b = xd[0], s = xd[1], d = xd[2] / num_heads;
        int64_t v4[4] = {b, s, num_heads, d};
        xr = ex_reshape(e, x, 4, v4);
        cos_axis = 2; /* [B,S,1,h] against [B,S,H,D] */
    } else {
        ex_fatal(e, "X must have rank 3 or 4, not %d", rank);
    }
    if (rd == 0) rd = d;
    if (rd < 0 || rd > d || rd % 2)
        ex_fatal(e, "rotary_embedding_dim=%lld is not supported (an even number <= head size %lld)",
                 (long long)rd, (long long)d);
    int64_t h = rd / 2;
    dims_of(e, xr, x4);
    uint32_t cs[2] = {cosc, sinc};
    for (int k = 0; k < 2; k++) {
        const struct ir_value *c = ex_v(e, cs[k]);
        if (pos != IR_NONE) {
            const struct ir_value *p = ex_v(e, pos);
            if (c->rank != 2 || c->dims[1] != h || p->rank != 2 || p->dims[0] != b || p->dims[1] != s)
                ex_fatal(e, "with position_ids [B,S]=[%lld,%lld] the caches must be [max_pos, %lld]",
                         (long long)b, (long long)s, (long long)h);
            cs[k] = ex_gather(e, cs[k], pos, 0);
        } else if (c->rank != 3 || c->dims[0] != b || c->dims[1] != s || c->dims[2] != h) {
            ex_fatal(e, "without position_ids the caches must be [B,S,rd/2] = [%lld,%lld,%lld]",
                     (long long)b, (long long)s, (long long)h);
        }
        /* per element of the rotated part [B,S,rd]: each angle twice (pairs side by side when
         * interleaved, the two halves otherwise) */
        uint32_t two[2] = {cs[k], cs[k]};
        if (interleaved) {
            int64_t ax = 3, bsr[3] = {b, s, rd};
            two[0] = two[1] = ex_unsqueeze(e, cs[k], 1, &ax);
            cs[k] = ex_reshape(e, ex_concat(e, 2, two, 3), 3, bsr);
        } else {
            cs[k] = ex_concat(e, 2, two, 2);
        }
        cs[k] = ex_unsqueeze(e, cs[k], 1, &cos_axis);
    }
    /* out = x*cos + rot(x)*sin with rot(x) = (-x2, x1) per pair, the form passes/fuse/rope.c
     * makes one o2c.Rope of: at (x1, x2) it gives (x1 cos - x2 sin, x2 cos + x1 sin), the
     * reference's (real, imag), with the same float operations (a - b == a + (-b)) */
    uint32_t xs = rd < d ? ex_slice(e, xr, 3, 0, rd, 1) : xr, x1, x2, rot;
    if (interleaved) {
        int64_t zd[5] = {x4[0], x4[1], x4[2], h, 2}, rdims[4] = {x4[0], x4[1], x4[2], rd};
        uint32_t z = ex_reshape(e, xs, 5, zd);
        x1 = ex_slice(e, z, 4, 0, 1, 1);
        x2 = ex_slice(e, z, 4, 1, 2, 1);
        uint32_t pair[2] = {ex_op1(e, IR_OP_NEG, x2), x1};
        rot = ex_reshape(e, ex_concat(e, 2, pair, 4), 4, rdims);
    } else {
        x1 = ex_slice(e, xs, 3, 0, h, 1);
        x2 = ex_slice(e, xs, 3, h, rd, 1);
        uint32_t pair[2] = {ex_op1(e, IR_OP_NEG, x2), x1};
        rot = ex_concat(e, 2, pair, 3);
    }
    rot = ex_op2(e, IR_OP_ADD, ex_op2(e, IR_OP_MUL, xs, cs[0]), ex_op2(e, IR_OP_MUL, rot, cs[1]));
    if (rd < d) {
        uint32_t parts[2] = {rot, ex_slice(e, xr, 3, rd, d, 1)};
        rot = ex_concat(e, 2, parts, 3);
    }
    if (rank == 3) rot = ex_reshape(e, rot, 3, xd);
    ex_output(e, 0, rot);
}

/* SwiGLU-28: A, B of one shape and float dtype -> Y = Swish_alpha(A) * B. */
void expand_swiglu(struct ex_ctx *e)
{
    uint32_t a = ex_in(e, 0), bv = ex_in(e, 1);
    need_float(e, a, "A");
    const struct ir_value *av = ex_v(e, a), *bw = ex_v(e, bv);
    bool same = av->rank == bw->rank && av->dtype == bw->dtype;
    for (int k = 0; same && k < av->rank; k++) same = av->dims[k] == bw->dims[k];
    if (!same) ex_fatal(e, "A '%s' and B '%s' must have one shape and dtype (no broadcasting)", av->name, bw->name);
    enum ir_dtype t = av->dtype;
    double alpha = ex_attr_float(e, "alpha", 1.0f);
    uint32_t ax = alpha == 1.0 ? a : ex_op2(e, IR_OP_MUL, a, ex_scalar(e, t, alpha));
    uint32_t swish = ex_op2(e, IR_OP_MUL, a, ex_op1(e, IR_OP_SIGMOID, ax));
    ex_output(e, 0, ex_op2(e, IR_OP_MUL, swish, bv));
}

/* CausalConvWithState-27: input [B,C,L], weight [C,1,k], [bias [C]], [past_state [B,C,k-1]]
 * -> output [B,C,L], present_state [B,C,k-1]; activation "none" | "silu" | "swish". */
void expand_causal_conv_with_state(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0), w = ex_in(e, 1), bias = ex_in(e, 2), past = ex_in(e, 3);
    need_float(e, x, "input");
    const char *act = ex_attr_string(e, "activation", "none");
    bool silu = !strcmp(act, "silu") || !strcmp(act, "swish");
    if (!silu && strcmp(act, "none"))
        ex_fatal(e, "activation='%s' is not supported (none, silu, swish)", act);
    int64_t xd[IR_MAX_RANK], wd[IR_MAX_RANK];
    int xr = dims_of(e, x, xd), wr = dims_of(e, w, wd);
    enum ir_dtype t = ex_v(e, x)->dtype;
    if (xr != 3) ex_fatal(e, "input must have rank 3 (batch, channels, length), not %d", xr);
    int64_t nb = xd[0], c = xd[1], len = xd[2];
    if (wr != 3 || wd[0] != c || wd[1] != 1 || wd[2] < 1)
        ex_fatal(e, "weight must be [channels=%lld, 1, k >= 1]", (long long)c);
    int64_t k = wd[2];
    if (ex_v(e, w)->dtype != t || (bias != IR_NONE && ex_v(e, bias)->dtype != t))
        ex_fatal(e, "weight and bias must have the input's dtype %s", ir_dtype_name(t));
    if (bias != IR_NONE && (ex_v(e, bias)->rank != 1 || ex_v(e, bias)->dims[0] != c))
        ex_fatal(e, "bias must be [channels=%lld]", (long long)c);
    int64_t sd[3] = {nb, c, k - 1};
    if (past != IR_NONE) {
        int64_t pd[IR_MAX_RANK];
        int pr = dims_of(e, past, pd);
        if (pr != 3 || pd[0] != nb || pd[1] != c || pd[2] != k - 1 || ex_v(e, past)->dtype != t)
            ex_fatal(e, "past_state must be %s [%lld, %lld, %lld] (batch, channels, k-1)", ir_dtype_name(t),
                     (long long)nb, (long long)c, (long long)(k - 1));
    }
    uint32_t padded = x;
    if (k > 1) {
        if (past == IR_NONE) {
            int64_t numel = nb * c * (k - 1);
            void *zeros = ir_alloc(e->g, (size_t)numel * ir_dtype_size(t));
            memset(zeros, 0, (size_t)numel * ir_dtype_size(t));
            past = ex_const(e, t, 3, sd, zeros);
        }
        uint32_t parts[2] = {past, x};
        padded = ex_concat(e, 2, parts, 2);
    }
    enum ir_dtype ct = t == IR_F16 ? IR_F32 : t; /* compute type: Conv has no float16 */
    uint32_t in[3] = {ex_cast(e, padded, ct), ex_cast(e, w, ct), bias == IR_NONE ? IR_NONE : ex_cast(e, bias, ct)};
    uint32_t conv = ex_begin(e, IR_OP_CONV, in, bias == IR_NONE ? 2 : 3, 1);
    ir_attr_set_int(e->g, conv, "group", c);
    uint32_t y = ex_end(e, conv);
    if (silu) {
        y = ex_cast(e, ex_cast(e, y, t), ct); /* the reference rounds the conv to T first */
        y = ex_op2(e, IR_OP_MUL, y, ex_op1(e, IR_OP_SIGMOID, y));
    }
    ex_output(e, 0, ex_cast(e, y, t));
    if (ex_has_output(e, 1)) {
        if (k > 1) {
            ex_output(e, 1, ex_slice(e, padded, 2, len, len + k - 1, 1));
        } else {
            uint64_t none = 0;
            ex_output(e, 1, ex_const(e, t, 3, sd, &none));
        }
    }
}

/* Packed [B,T,H*D] -> [B,H,T,D] (float32). */
static uint32_t unpack_heads(struct ex_ctx *e, uint32_t v, int64_t heads)
{
    int64_t d[IR_MAX_RANK];
    dims_of(e, v, d);
    int64_t v4[4] = {d[0], d[1], heads, d[2] / heads}, perm[4] = {0, 2, 1, 3};
    return ex_transpose(e, ex_reshape(e, ex_cast(e, v, IR_F32), 4, v4), 4, perm);
}

/* LinearAttention-27: query [B,T,Hq*dk], key [B,T,Hkv*dk], value [B,T,Hkv*dv],
 * [past_state [B,Hkv,dk,dv]], [decay [B,T,Hkv*dk] or [B,T,Hkv]], [beta [B,T,Hkv] or [B,T,1]]
 * -> output [B,T,Hq*dv] (query's dtype), present_state [B,Hkv,dk,dv] (past_state's dtype, else
 * query's). update_rule linear | gated | delta | gated_delta; computed in float32. */
void expand_linear_attention(struct ex_ctx *e)
{
    uint32_t q = ex_in(e, 0), k = ex_in(e, 1), v = ex_in(e, 2), past = ex_in(e, 3);
    uint32_t decay = ex_in(e, 4), beta = ex_in(e, 5);
    need_float(e, q, "query");
    const char *rule = ex_attr_string(e, "update_rule", "gated_delta");
    bool gating, delta;
    if (!strcmp(rule, "linear")) gating = false, delta = false;
    else if (!strcmp(rule, "gated")) gating = true, delta = false;
    else if (!strcmp(rule, "delta")) gating = false, delta = true;
    else if (!strcmp(rule, "gated_delta")) gating = true, delta = true;
    else ex_fatal(e, "update_rule='%s' is not supported (linear, gated, delta, gated_delta)", rule);
    int64_t hq = ex_attr_int(e, "q_num_heads", 0), hkv = ex_attr_int(e, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || hq % hkv)
        ex_fatal(e, "q_num_heads=%lld must be a positive multiple of kv_num_heads=%lld", (long long)hq,
                 (long long)hkv);
    if (gating != (decay != IR_NONE))
        ex_fatal(e, "update_rule='%s' %s the decay input", rule, gating ? "requires" : "forbids");
    if (delta != (beta != IR_NONE))
        ex_fatal(e, "update_rule='%s' %s the beta input", rule, delta ? "requires" : "forbids");
    int64_t qd[IR_MAX_RANK], kd[IR_MAX_RANK], vd[IR_MAX_RANK];
    if (dims_of(e, q, qd) != 3 || dims_of(e, k, kd) != 3 || dims_of(e, v, vd) != 3)
        ex_fatal(e, "query, key and value must have rank 3 (B, T, H*D)");
    int64_t nb = qd[0], nt = qd[1], dk = qd[2] / hq, dv = vd[2] / hkv, grp = hq / hkv;
    if (nt < 1) ex_fatal(e, "a sequence length of %lld is not supported (>= 1)", (long long)nt);
    if (qd[2] % hq || vd[2] % hkv || kd[0] != nb || kd[1] != nt || kd[2] != hkv * dk || vd[0] != nb ||
        vd[1] != nt)
        ex_fatal(e, "query/key/value shapes do not fit q_num_heads=%lld, kv_num_heads=%lld", (long long)hq,
                 (long long)hkv);
    enum ir_dtype out_t = ex_v(e, q)->dtype, state_t = out_t;
    int64_t sdims[4] = {nb, hkv, dk, dv};
    if (past != IR_NONE) {
        int64_t pd[IR_MAX_RANK];
        int pr = dims_of(e, past, pd);
        if (pr != 4 || pd[0] != nb || pd[1] != hkv || pd[2] != dk || pd[3] != dv)
            ex_fatal(e, "past_state must be [%lld, %lld, %lld, %lld] (B, H_kv, d_k, d_v)", (long long)nb,
                     (long long)hkv, (long long)dk, (long long)dv);
        need_float(e, past, "past_state");
        state_t = ex_v(e, past)->dtype;
    }
    uint32_t g4 = IR_NONE, b4 = IR_NONE;
    int64_t perm[4] = {0, 2, 1, 3};
    if (gating) {
        int64_t dd[IR_MAX_RANK];
        if (dims_of(e, decay, dd) != 3 || dd[0] != nb || dd[1] != nt || (dd[2] != hkv && dd[2] != hkv * dk))
            ex_fatal(e, "decay must be [B, T, kv_num_heads] or [B, T, kv_num_heads*d_k]");
        /* exp(g) as [B,Hkv,T,dk|1] */
        if (dd[2] == hkv) {
            int64_t d4[4] = {nb, nt, hkv, 1};
            g4 = ex_transpose(e, ex_reshape(e, ex_cast(e, decay, IR_F32), 4, d4), 4, perm);
        } else {
            g4 = unpack_heads(e, decay, hkv);
        }
        g4 = ex_op1(e, IR_OP_EXP, g4);
    }
    if (delta) {
        int64_t bd[IR_MAX_RANK];
        if (dims_of(e, beta, bd) != 3 || bd[0] != nb || bd[1] != nt || (bd[2] != hkv && bd[2] != 1))
            ex_fatal(e, "beta must be [B, T, kv_num_heads] or [B, T, 1]");
        int64_t d4[4] = {nb, nt, bd[2], 1};
        b4 = ex_transpose(e, ex_reshape(e, ex_cast(e, beta, IR_F32), 4, d4), 4, perm);
    }
    double sc = ex_attr_float(e, "scale", 0.0f);
    if (sc == 0.0) sc = 1.0 / sqrt((double)dk);
    uint32_t q4 = unpack_heads(e, q, hq), k4 = unpack_heads(e, k, hkv), v4 = unpack_heads(e, v, hkv);
    uint32_t state;
    if (past != IR_NONE) {
        state = ex_cast(e, past, IR_F32);
    } else {
        int64_t numel = nb * hkv * dk * dv;
        void *zeros = ir_alloc(e->g, (size_t)(numel > 0 ? numel : 1) * 4);
        memset(zeros, 0, (size_t)(numel > 0 ? numel : 1) * 4);
        state = ex_const(e, IR_F32, 4, sdims, zeros);
    }
    uint32_t scale = ex_scalar(e, IR_F32, sc);
    uint32_t *outs = ir_alloc(e->g, (size_t)(nt > 0 ? nt : 1) * sizeof *outs);
    int64_t tperm[4] = {0, 1, 3, 2};
    int64_t qg[4] = {nb, hkv, grp, dk}, orow[3] = {nb, 1, hq * dv};
    for (int64_t i = 0; i < nt; i++) {
        uint32_t kt = ex_slice(e, k4, 2, i, i + 1, 1); /* [B,Hkv,1,dk] */
        uint32_t vt = ex_slice(e, v4, 2, i, i + 1, 1); /* [B,Hkv,1,dv] */
        uint32_t kcol = ex_transpose(e, kt, 4, tperm); /* [B,Hkv,dk,1] */
        if (gating) /* S *= exp(g_t), g_t as a column [B,Hkv,dk|1,1] */
            state = ex_op2(e, IR_OP_MUL, state, ex_transpose(e, ex_slice(e, g4, 2, i, i + 1, 1), 4, tperm));
        if (delta) {
            uint32_t retrieved = ex_op2(e, IR_OP_MATMUL, kt, state); /* [B,Hkv,1,dv] */
            vt = ex_op2(e, IR_OP_MUL, ex_slice(e, b4, 2, i, i + 1, 1), ex_op2(e, IR_OP_SUB, vt, retrieved));
        }
        state = ex_op2(e, IR_OP_ADD, state, ex_op2(e, IR_OP_MUL, kcol, vt));
        uint32_t qt = ex_reshape(e, ex_slice(e, q4, 2, i, i + 1, 1), 4, qg); /* [B,Hkv,G,dk] */
        uint32_t ot = ex_op2(e, IR_OP_MUL, ex_op2(e, IR_OP_MATMUL, qt, state), scale); /* [B,Hkv,G,dv] */
        outs[i] = ex_reshape(e, ot, 3, orow);
    }
    uint32_t out = ex_concat(e, (int)nt, outs, 1); /* [B,T,Hq*dv] */
    ex_output(e, 0, ex_cast(e, out, out_t));
    if (ex_has_output(e, 1)) ex_output(e, 1, ex_cast(e, state, state_t));
}
