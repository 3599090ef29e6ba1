/* expand_rnn.c — RNN-7/14/22, GRU-7/14/22 and LSTM-7/14/22 unrolled over the (static) sequence.
 *
 * Shapes (layout 0; layout 1 swaps the first two axes of X, Y, initial_*, Y_h, Y_c):
 *   X [T,B,I], W [D,G*H,I], R [D,G*H,H], B [D,2*G*H] (Wb | Rb), initial_h/c [D,B,H], P [D,3H],
 *   sequence_lens [B] (int32), Y [T,D,B,H], Y_h / Y_c [D,B,H]; G = 1 (RNN), 3 (GRU), 4 (LSTM);
 *   D = 2 for direction=bidirectional, else 1.
 * Algebra per direction d (gate order as in the spec: GRU z,r,h; LSTM i,o,f,c; P = p_i,p_o,p_f):
 *   XW = X @ W[d]^T + bias           one MatMul for all steps ([T,B,G*H]); bias = Wb + Rb,
 *                                     except GRU's h slice which gets Wb_h only (Rb_h below)
 *   RNN   H' = f(XW_t + H @ R^T)
 *   GRU   z = f(XW_t,z + H @ Rz^T), r = f(XW_t,r + H @ Rr^T)
 *         h = g(XW_t,h + (r*H) @ Rh^T + Rb_h)            linear_before_reset = 0
 *         h = g(XW_t,h + r * (H @ Rh^T + Rb_h))           linear_before_reset = 1
 *         H' = h + z * (H - h)                            (= (1-z) h + z H)
 *   LSTM  [i,o,f,c] = XW_t + H @ R^T;  i = f(i + p_i*C);  f = input_forget ? 1 - i : f(f + p_f*C)
 *         c = g(c);  C' = f*C + i*c;  o = f(o + p_o*C');  H' = o * h(C')
 *   Steps run t = 0..T-1 (forward) or T-1..0 (reverse); Y[t,d] = H' of step t.
 *   clip (if given) clamps every gate's activation input to [-clip, clip] (not the input of
 *   LSTM's h(C'), as onnxruntime does).
 *   sequence_lens (when it is not a constant equal to T everywhere): at step t the batch rows
 *   with t >= len stay as they were (H, C hold) and get Y[t] = 0 — so reverse direction starts
 *   at each row's own last valid step, as the spec and onnxruntime define it.
 * Activations (attribute `activations`, case-insensitive, G*... per direction, forward first;
 * one list of per-direction length is used for both directions): Relu, Tanh, Sigmoid, Affine,
 * LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus; activation_alpha
 * and activation_beta are consumed in list order by the activations that take them, defaults as
 * the ONNX ops (onnxruntime's rule).
 * Assumes: inputs' dims known (expand.h); weights may be runtime inputs (each is sliced and
 * transposed once per direction). Guarantees: float32 only (MatMul), other dtypes, unknown
 * activations, bad shapes or attribute values are fatal and named.
 */
#include "passes/expand/expand.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ref/ref_util.h"

enum rnn_kind { K_RNN, K_GRU, K_LSTM };

/* One resolved activation function. */
struct rnn_act {
    int kind;     /* index into act_names */
    float alpha;  /* alpha (where used) */
    float beta;   /* beta (where used) */
};

static const char *const act_names[] = {"relu", "tanh", "sigmoid", "affine", "leakyrelu",
                                        "thresholdedrelu", "scaledtanh", "hardsigmoid", "elu",
                                        "softsign", "softplus"};
/* Per act_names entry: uses alpha, uses beta, default alpha, default beta. */
static const struct { bool a, b; float da, db; } act_args[] = {
    {false, false, 0, 0}, {false, false, 0, 0}, {false, false, 0, 0}, {true, true, 1.0f, 0.0f},
    {true, false, 0.01f, 0}, {true, false, 1.0f, 0}, {true, true, 1.0f, 1.0f},
    {true, true, 0.2f, 0.5f}, {true, false, 1.0f, 0}, {false, false, 0, 0}, {false, false, 0, 0}};
enum { A_RELU, A_TANH, A_SIGMOID, A_AFFINE, A_LEAKY, A_THRESH, A_STANH, A_HSIG, A_ELU, A_SOFTSIGN,
       A_SOFTPLUS };

/* Everything one expansion needs, read from the composite first. */
struct rnn {
    enum rnn_kind kind;
    const char *op;        /* "RNN" / "GRU" / "LSTM" */
    int G;                 /* gates */
    int nact;              /* activations per direction */
    int64_t T, B, I, H, D; /* sizes */
    int64_t layout;        /* 0 or 1 */
    bool reverse;          /* direction=reverse (D == 1) */
    struct rnn_act act[2][3]; /* per direction, f g h */
    bool has_clip;         /* clip given */
    float clip;            /* its value */
    int64_t lbr;           /* GRU linear_before_reset */
    int64_t input_forget;  /* LSTM input_forget */
    uint32_t x, w, r, b, lens, h0, c0, p; /* inputs (IR_NONE = absent); x seq-major [T,B,I] */
    bool use_lens;         /* sequence_lens needs masking */
};

/* x -> act(clip(x)); clip only where `clip` (gate inputs). */
static uint32_t apply_act(struct ex_ctx *e, const struct rnn *c, const struct rnn_act *a, uint32_t x,
                          bool clip)
{
    if (clip && c->has_clip) {
        uint32_t in[3] = {x, ex_scalar(e, IR_F32, -c->clip), ex_scalar(e, IR_F32, c->clip)};
        x = ex_end(e, ex_begin(e, IR_OP_CLIP, in, 3, 1));
    }
    uint32_t id;
    switch (a->kind) {
    case A_RELU: return ex_op1(e, IR_OP_RELU, x);
    case A_TANH: return ex_op1(e, IR_OP_TANH, x);
    case A_SIGMOID: return ex_op1(e, IR_OP_SIGMOID, x);
    case A_SOFTSIGN: return ex_op1(e, IR_OP_SOFTSIGN, x);
    case A_SOFTPLUS: return ex_op1(e, IR_OP_SOFTPLUS, x);
    case A_AFFINE:
        return ex_op2(e, IR_OP_ADD, ex_op2(e, IR_OP_MUL, x, ex_scalar(e, IR_F32, a->alpha)),
                      ex_scalar(e, IR_F32, a->beta));
    case A_STANH: {
        uint32_t t = ex_op1(e, IR_OP_TANH, ex_op2(e, IR_OP_MUL, x, ex_scalar(e, IR_F32, a->beta)));
        return ex_op2(e, IR_OP_MUL, t, ex_scalar(e, IR_F32, a->alpha));
    }
    case A_LEAKY: id = ex_begin(e, IR_OP_LEAKY_RELU, &x, 1, 1); break;
    case A_THRESH: id = ex_begin(e, IR_OP_THRESHOLDED_RELU, &x, 1, 1); break;
    case A_ELU: id = ex_begin(e, IR_OP_ELU, &x, 1, 1); break;
    case A_HSIG:
        id = ex_begin(e, IR_OP_HARD_SIGMOID, &x, 1, 1);
        ir_attr_set_float(e->g, id, "beta", a->beta);
        break;
    default: IR_ASSERT(0);
    }
    ir_attr_set_float(e->g, id, "alpha", a->alpha);
    return ex_end(e, id);
}

/* Reads attribute `activations` (+ alpha/beta) into c->act; defaults `dflt` (nact names). */
static void read_acts(struct ex_ctx *e, struct rnn *c, const int *dflt)
{
    const struct ir_attr *aa = ir_attr_find(ex_self(e), "activations");
    size_t nalpha = 0, nbeta = 0;
    const float *alpha = ir_attr_floats(ex_self(e), "activation_alpha", &nalpha);
    const float *beta = ir_attr_floats(ex_self(e), "activation_beta", &nbeta);
    size_t ia = 0, ib = 0;
    int n = c->nact;
    if (aa && aa->type == IR_ATTR_STRINGS && aa->n > 0) {
        if (aa->n != (size_t)(c->nact * c->D) && aa->n != (size_t)c->nact)
            ex_fatal(e, "%s: activations has %zu entries; expected %d (%d per direction)", c->op,
                     aa->n, (int)(c->nact * c->D), c->nact);
        n = (int)aa->n;
        for (int k = 0; k < n; k++) {
            char low[32];
            size_t len = strlen(aa->strings[k]);
            if (len >= sizeof low) len = sizeof low - 1;
            for (size_t j = 0; j < len; j++) low[j] = (char)tolower((unsigned char)aa->strings[k][j]);
            low[len] = 0;
            int kind = -1;
            for (int j = 0; j < (int)(sizeof act_names / sizeof act_names[0]); j++)
                if (strcmp(low, act_names[j]) == 0) kind = j;
            if (kind < 0)
                ex_fatal(e, "%s: activations[%d]='%s' is not supported (Relu, Tanh, Sigmoid, Affine, "
                         "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)",
                         c->op, k, aa->strings[k]);
            struct rnn_act *a = &c->act[k / c->nact][k % c->nact];
            a->kind = kind;
            a->alpha = act_args[kind].a && ia < nalpha ? alpha[ia++] : act_args[kind].da;
            a->beta = act_args[kind].b && ib < nbeta ? beta[ib++] : act_args[kind].db;
        }
    } else {
        for (int k = 0; k < n; k++) c->act[0][k] = (struct rnn_act){dflt[k], 0, 0};
    }
    if (n == c->nact)
        for (int k = 0; k < c->nact; k++) c->act[1][k] = c->act[0][k];
}

/* Fatal unless value v has rank `rank` and dims `dims` (-1 = any). */
static void need_dims(struct ex_ctx *e, const struct rnn *c, uint32_t v, const char *what, int rank,
                      const int64_t *dims)
{
    const struct ir_value *x = ex_v(e, v);
    bool ok = x->rank == rank && x->dtype == IR_F32;
    for (int k = 0; ok && k < rank; k++) ok = dims[k] < 0 || x->dims[k] == dims[k];
    if (!ok) {
        char got[256], want[256] = "[";
        for (int k = 0; k < rank; k++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", k ? "," : "",
                     (long long)dims[k]);
        strncat(want, "]", sizeof want - strlen(want) - 1);
        ex_fatal(e, "%s: input %s '%s' is %s %s; expected float32 %s", c->op, what, x->name,
                 ir_dtype_name(x->dtype), ir_dims_str(x, got, sizeof got), want);
    }
}

/* Reads and checks attributes and inputs common to the three ops. */
static void read_common(struct ex_ctx *e, struct rnn *c, const int *dflt_acts)
{
    c->x = ex_in(e, 0);
    c->w = ex_in(e, 1);
    c->r = ex_in(e, 2);
    c->b = ex_in(e, 3);
    c->lens = ex_in(e, 4);
    c->h0 = ex_in(e, 5);
    c->c0 = c->kind == K_LSTM ? ex_in(e, 6) : IR_NONE;
    c->p = c->kind == K_LSTM ? ex_in(e, 7) : IR_NONE;
    const char *dir = ex_attr_string(e, "direction", "forward");
    if (strcmp(dir, "forward") == 0) c->D = 1;
    else if (strcmp(dir, "reverse") == 0) c->D = 1, c->reverse = true;
    else if (strcmp(dir, "bidirectional") == 0) c->D = 2;
    else ex_fatal(e, "%s: direction='%s' is not forward, reverse or bidirectional", c->op, dir);
    c->layout = ex_attr_int(e, "layout", 0);
    if (c->layout != 0 && c->layout != 1)
        ex_fatal(e, "%s: layout=%lld is not 0 or 1", c->op, (long long)c->layout);
    const struct ir_attr *ca = ir_attr_find(ex_self(e), "clip");
    if (ca) {
        c->has_clip = true;
        c->clip = ex_attr_float(e, "clip", 0.0f);
        if (!(c->clip >= 0)) ex_fatal(e, "%s: clip=%g must be >= 0", c->op, (double)c->clip);
    }
    read_acts(e, c, dflt_acts);

    const struct ir_value *xv = ex_v(e, c->x);
    if (xv->dtype != IR_F32)
        ex_fatal(e, "%s: X of dtype %s is not supported (float32 only: MatMul)", c->op,
                 ir_dtype_name(xv->dtype));
    if (xv->rank != 3) ex_fatal(e, "%s: X must have rank 3, not %d", c->op, xv->rank);
    c->T = xv->dims[c->layout ? 1 : 0];
    c->B = xv->dims[c->layout ? 0 : 1];
    c->I = xv->dims[2];
    const struct ir_value *rv = ex_v(e, c->r);
    if (rv->rank != 3) ex_fatal(e, "%s: R must have rank 3, not %d", c->op, rv->rank);
    c->H = rv->dims[2];
    int64_t hs = ex_attr_int(e, "hidden_size", c->H);
    if (hs != c->H)
        ex_fatal(e, "%s: hidden_size=%lld differs from R's last dim %lld", c->op, (long long)hs,
                 (long long)c->H);
    if (c->T < 1) ex_fatal(e, "%s: sequence length %lld: must be >= 1", c->op, (long long)c->T);
    int64_t gh = c->G * c->H;
    need_dims(e, c, c->w, "W", 3, (int64_t[]){c->D, gh, c->I});
    need_dims(e, c, c->r, "R", 3, (int64_t[]){c->D, gh, c->H});
    if (c->b != IR_NONE) need_dims(e, c, c->b, "B", 2, (int64_t[]){c->D, 2 * gh});
    int64_t sd[3] = {c->layout ? c->B : c->D, c->layout ? c->D : c->B, c->H};
    if (c->h0 != IR_NONE) need_dims(e, c, c->h0, "initial_h", 3, sd);
    if (c->c0 != IR_NONE) need_dims(e, c, c->c0, "initial_c", 3, sd);
    if (c->p != IR_NONE) need_dims(e, c, c->p, "P", 2, (int64_t[]){c->D, 3 * c->H});

    if (c->lens != IR_NONE) {
        const struct ir_value *lv = ex_v(e, c->lens);
        if (lv->dtype != IR_I32 || lv->rank != 1 || lv->dims[0] != c->B) {
            char d[256];
            ex_fatal(e, "%s: sequence_lens '%s' is %s %s; expected int32 [%lld]", c->op, lv->name,
                     ir_dtype_name(lv->dtype), ir_dims_str(lv, d, sizeof d), (long long)c->B);
        }
        c->use_lens = true;
        if (lv->data) {
            const int32_t *l = lv->data;
            bool all = true;
            for (int64_t k = 0; k < c->B; k++) {
                if (l[k] < 0 || l[k] > c->T)
                    ex_fatal(e, "%s: sequence_lens[%lld]=%d is outside [0, %lld]", c->op, (long long)k,
                             (int)l[k], (long long)c->T);
                all &= l[k] == c->T;
            }
            if (all) c->use_lens = false;
        }
    }
    /* seq-major X and states */
    int64_t swap[3] = {1, 0, 2};
    if (c->layout) {
        c->x = ex_transpose(e, c->x, 3, swap);
        if (c->h0 != IR_NONE) c->h0 = ex_transpose(e, c->h0, 3, swap);
        if (c->c0 != IR_NONE) c->c0 = ex_transpose(e, c->c0, 3, swap);
    }
}

/* Row d of v [D, ...] as a tensor of rank-1 with dims rest[]. */
static uint32_t take_dir(struct ex_ctx *e, uint32_t v, int64_t d, int rank, const int64_t *rest)
{
    return ex_reshape(e, ex_slice(e, v, 0, d, d + 1, 1), rank, rest);
}

/* Columns [lo, hi) of the last axis of a rank-2 (or rank-1 when rank == 1) tensor. */
static uint32_t cols(struct ex_ctx *e, uint32_t v, int rank, int64_t lo, int64_t hi)
{
    return ex_slice(e, v, rank - 1, lo, hi, 1);
}

/* The per-direction recurrence; returns Y_d [T,1,B,H] and sets *yh, *yc ([1,B,H]). */
static uint32_t run_dir(struct ex_ctx *e, const struct rnn *c, int64_t d, bool reverse, uint32_t *yh,
                        uint32_t *yc)
{
    int64_t T = c->T, B = c->B, I = c->I, H = c->H, gh = c->G * H;
    const struct rnn_act *act = c->act[d];
    int64_t tr[2] = {1, 0};
    uint32_t wt = ex_transpose(e, take_dir(e, c->w, d, 2, (int64_t[]){gh, I}), 2, tr); /* [I,GH] */
    uint32_t rt = ex_transpose(e, take_dir(e, c->r, d, 2, (int64_t[]){gh, H}), 2, tr); /* [H,GH] */
    uint32_t xw = ex_op2(e, IR_OP_MATMUL, c->x, wt);                                      /* [T,B,GH] */
    uint32_t rbh = IR_NONE; /* GRU linear_before_reset: Rb_h, added inside r * (...) */
    if (c->b != IR_NONE) {
        uint32_t bd = take_dir(e, c->b, d, 1, (int64_t[]){2 * gh});
        uint32_t wb = cols(e, bd, 1, 0, gh), rb = cols(e, bd, 1, gh, 2 * gh);
        if (c->kind == K_GRU && c->lbr) {
            rbh = cols(e, rb, 1, 2 * H, 3 * H);
            int64_t nh[1] = {H};
            float *z = ir_alloc(e->g, (size_t)H * sizeof(float));
            memset(z, 0, (size_t)H * sizeof(float));
            uint32_t parts[2] = {cols(e, rb, 1, 0, 2 * H), ex_const(e, IR_F32, 1, nh, z)};
            rb = ex_concat(e, 2, parts, 0); /* [Rb_z, Rb_r, 0] */
        }
        xw = ex_op2(e, IR_OP_ADD, xw, ex_op2(e, IR_OP_ADD, wb, rb));
    }
    uint32_t rzr = IR_NONE, rh = IR_NONE;
    if (c->kind == K_GRU) {
        rzr = cols(e, rt, 2, 0, 2 * H);
        rh = cols(e, rt, 2, 2 * H, 3 * H);
    }
    uint32_t pi = IR_NONE, po = IR_NONE, pf = IR_NONE;
    if (c->p != IR_NONE) {
        uint32_t pd = take_dir(e, c->p, d, 1, (int64_t[]){3 * H});
        pi = cols(e, pd, 1, 0, H);
        po = cols(e, pd, 1, H, 2 * H);
        pf = cols(e, pd, 1, 2 * H, 3 * H);
    }
    int64_t bh[2] = {B, H};
    uint32_t h = c->h0 != IR_NONE ? take_dir(e, c->h0, d, 2, bh) : IR_NONE;
    uint32_t cs = c->c0 != IR_NONE ? take_dir(e, c->c0, d, 2, bh) : IR_NONE;
    if (h == IR_NONE || (c->kind == K_LSTM && cs == IR_NONE)) {
        float *z = ir_alloc(e->g, (size_t)(B * H) * sizeof(float));
        memset(z, 0, (size_t)(B * H) * sizeof(float));
        uint32_t zero = ex_const(e, IR_F32, 2, bh, z);
        if (h == IR_NONE) h = zero;
        if (c->kind == K_LSTM && cs == IR_NONE) cs = zero;
    }
    uint32_t zero_s = ex_scalar(e, IR_F32, 0.0), one_s = ex_scalar(e, IR_F32, 1.0);
    uint32_t *ys = ir_alloc(e->g, (size_t)T * sizeof(uint32_t));
    for (int64_t s = 0; s < T; s++) {
        int64_t t = reverse ? T - 1 - s : s;
        uint32_t xt = ex_reshape(e, ex_slice(e, xw, 0, t, t + 1, 1), 2, (int64_t[]){B, gh});
        uint32_t hn, cn = IR_NONE;
        if (c->kind == K_RNN) {
            hn = apply_act(e, c, &act[0], ex_op2(e, IR_OP_ADD, xt, ex_op2(e, IR_OP_MATMUL, h, rt)), true);
        } else if (c->kind == K_GRU) {
            uint32_t zr = ex_op2(e, IR_OP_ADD, cols(e, xt, 2, 0, 2 * H), ex_op2(e, IR_OP_MATMUL, h, rzr));
            uint32_t z = apply_act(e, c, &act[0], cols(e, zr, 2, 0, H), true);
            uint32_t r = apply_act(e, c, &act[0], cols(e, zr, 2, H, 2 * H), true);
            uint32_t xh = cols(e, xt, 2, 2 * H, 3 * H), pre;
            if (c->lbr) {
                uint32_t hr = ex_op2(e, IR_OP_MATMUL, h, rh);
                if (rbh != IR_NONE) hr = ex_op2(e, IR_OP_ADD, hr, rbh);
                pre = ex_op2(e, IR_OP_ADD, xh, ex_op2(e, IR_OP_MUL, r, hr));
            } else {
                pre = ex_op2(e, IR_OP_ADD, xh, ex_op2(e, IR_OP_MATMUL, ex_op2(e, IR_OP_MUL, r, h), rh));
            }
            uint32_t hh = apply_act(e, c, &act[1], pre, true);
            hn = ex_op2(e, IR_OP_ADD, hh, ex_op2(e, IR_OP_MUL, z, ex_op2(e, IR_OP_SUB, h, hh)));
        } else {
            uint32_t g = ex_op2(e, IR_OP_ADD, xt, ex_op2(e, IR_OP_MATMUL, h, rt));
            uint32_t gi = cols(e, g, 2, 0, H), go = cols(e, g, 2, H, 2 * H);
            uint32_t gf = cols(e, g, 2, 2 * H, 3 * H), gc = cols(e, g, 2, 3 * H, 4 * H);
            if (pi != IR_NONE) gi = ex_op2(e, IR_OP_ADD, gi, ex_op2(e, IR_OP_MUL, pi, cs));
            uint32_t i = apply_act(e, c, &act[0], gi, true), f;
            if (c->input_forget) {
                f = ex_op2(e, IR_OP_SUB, one_s, i);
            } else {
                if (pf != IR_NONE) gf = ex_op2(e, IR_OP_ADD, gf, ex_op2(e, IR_OP_MUL, pf, cs));
                f = apply_act(e, c, &act[0], gf, true);
            }
            uint32_t cc = apply_act(e, c, &act[1], gc, true);
            cn = ex_op2(e, IR_OP_ADD, ex_op2(e, IR_OP_MUL, f, cs), ex_op2(e, IR_OP_MUL, i, cc));
            if (po != IR_NONE) go = ex_op2(e, IR_OP_ADD, go, ex_op2(e, IR_OP_MUL, po, cn));
            uint32_t o = apply_act(e, c, &act[0], go, true);
            hn = ex_op2(e, IR_OP_MUL, o, apply_act(e, c, &act[2], cn, false));
        }
        uint32_t yt = hn;
        if (c->use_lens) {
            int32_t tv = (int32_t)t;
            uint32_t valid = ex_op2(e, IR_OP_LESS, ex_const(e, IR_I32, 0, NULL, &tv), c->lens);
            valid = ex_reshape(e, valid, 2, (int64_t[]){B, 1});
            yt = ex_op3(e, IR_OP_WHERE, valid, hn, zero_s);
            hn = ex_op3(e, IR_OP_WHERE, valid, hn, h);
            if (cn != IR_NONE) cn = ex_op3(e, IR_OP_WHERE, valid, cn, cs);
        }
        h = hn;
        if (cn != IR_NONE) cs = cn;
        ys[t] = ex_reshape(e, yt, 4, (int64_t[]){1, 1, B, H});
    }
    *yh = ex_reshape(e, h, 3, (int64_t[]){1, B, H});
    *yc = c->kind == K_LSTM ? ex_reshape(e, cs, 3, (int64_t[]){1, B, H}) : IR_NONE;
    return ex_concat(e, (int)T, ys, 0);
}

/* Runs every direction and sets the outputs Y, Y_h (and Y_c for LSTM). */
static void expand_common(struct ex_ctx *e, struct rnn *c)
{
    uint32_t y[2], yh[2], yc[2];
    for (int64_t d = 0; d < c->D; d++)
        y[d] = run_dir(e, c, d, c->D == 2 ? d == 1 : c->reverse, &yh[d], &yc[d]);
    uint32_t Y = ex_concat(e, (int)c->D, y, 1);      /* [T,D,B,H] */
    uint32_t Yh = ex_concat(e, (int)c->D, yh, 0);    /* [D,B,H] */
    uint32_t Yc = c->kind == K_LSTM ? ex_concat(e, (int)c->D, yc, 0) : IR_NONE;
    if (c->layout) {
        int64_t p4[4] = {2, 0, 1, 3}, p3[3] = {1, 0, 2};
        Y = ex_transpose(e, Y, 4, p4);
        Yh = ex_transpose(e, Yh, 3, p3);
        if (Yc != IR_NONE) Yc = ex_transpose(e, Yc, 3, p3);
    }
    if (ex_has_output(e, 0)) ex_output(e, 0, Y);
    if (ex_has_output(e, 1)) ex_output(e, 1, Yh);
    if (Yc != IR_NONE && ex_has_output(e, 2)) ex_output(e, 2, Yc);
}

void expand_rnn(struct ex_ctx *e)
{
    static const int dflt[1] = {A_TANH};
    struct rnn c = {.kind = K_RNN, .op = "RNN", .G = 1, .nact = 1};
    read_common(e, &c, dflt);
    expand_common(e, &c);
}

void expand_gru(struct ex_ctx *e)
{
    static const int dflt[2] = {A_SIGMOID, A_TANH};
    struct rnn c = {.kind = K_GRU, .op = "GRU", .G = 3, .nact = 2};
    c.lbr = ex_attr_int(e, "linear_before_reset", 0);
    if (c.lbr != 0 && c.lbr != 1)
        ex_fatal(e, "GRU: linear_before_reset=%lld is not 0 or 1", (long long)c.lbr);
    read_common(e, &c, dflt);
    expand_common(e, &c);
}

void expand_lstm(struct ex_ctx *e)
{
    static const int dflt[3] = {A_SIGMOID, A_TANH, A_TANH};
    struct rnn c = {.kind = K_LSTM, .op = "LSTM", .G = 4, .nact = 3};
    c.input_forget = ex_attr_int(e, "input_forget", 0);
    if (c.input_forget != 0 && c.input_forget != 1)
        ex_fatal(e, "LSTM: input_forget=%lld is not 0 or 1", (long long)c.input_forget);
    read_common(e, &c, dflt);
    expand_common(e, &c);
}
