/* ref_linalg.c — reference MatMul (numpy semantics: 1-D promotion, broadcast batch dims), Gemm
 * (transA/transB, alpha/beta, unidirectional C broadcast), Conv and ConvTranspose (1-D/2-D/3-D,
 * groups, strides, dilations, pads/auto_pad, output_padding/output_shape), MaxPool (with the
 * optional Indices output), AveragePool (count_include_pad, ceil_mode, dilations), LpPool,
 * GlobalAveragePool, GlobalMaxPool.
 *
 * Assumes: NC[D]HW layout; outputs shaped by infer_node; geometry from ref_conv_geom /
 * ref_convt_geom (shared with shape inference).
 * Guarantees: float products accumulated in double, rounded once to the output dtype; integer
 * MatMul/Gemm accumulate in int64 (wrapping).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_util.h"

static const struct ir_value *inp(const struct ir_graph *g, const struct ir_node *n, uint32_t k)
{
    uint32_t v = ir_input(n, k);
    return v == IR_NONE ? NULL : &g->values[v];
}

static bool eval_matmul(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *a = inp(g, n, 0), *b = inp(g, n, 1);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    enum ir_dtype t = a->dtype;
    if (t == IR_BOOL || b->dtype != t) return false;
    int64_t ad[IR_MAX_RANK + 1], bd[IR_MAX_RANK + 1];
    int ar = a->rank, br = b->rank;
    memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ar);
    memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
    bool a1 = ar == 1, b1 = br == 1;
    if (a1) { ad[1] = ad[0]; ad[0] = 1; ar = 2; }
    if (b1) { bd[1] = 1; br = 2; }
    int64_t M = ad[ar - 2], K = ad[ar - 1], N = bd[br - 1];
    int rb = o->rank - (a1 ? 0 : 1) - (b1 ? 0 : 1);
    int64_t ast[IR_MAX_RANK], bst[IR_MAX_RANK], nb = 1;
    ref_bcast_strides(ad, ar - 2, rb, ast);
    ref_bcast_strides(bd, br - 2, rb, bst);
    for (int k = 0; k < rb; k++) nb *= o->dims[k];
    void *out = ref_alloc_out(g, ov);
    bool flt = ref_is_float(t);
    int64_t coord[IR_MAX_RANK] = {0};
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t ao = 0, bo = 0;
        for (int k = 0; k < rb; k++) {
            ao += coord[k] * ast[k];
            bo += coord[k] * bst[k];
        }
        ao *= M * K;
        bo *= K * N;
        for (int64_t m = 0; m < M; m++)
            for (int64_t j = 0; j < N; j++) {
                int64_t oi = (bi * M + m) * N + j;
                if (flt) {
                    double s = 0;
                    for (int64_t k = 0; k < K; k++)
                        s += ref_get_f(a->data, t, ao + m * K + k) * ref_get_f(b->data, t, bo + k * N + j);
                    ref_set_f(out, t, oi, s);
                } else {
                    uint64_t s = 0;
                    for (int64_t k = 0; k < K; k++)
                        s += (uint64_t)ref_get_i(a->data, t, ao + m * K + k) *
                             (uint64_t)ref_get_i(b->data, t, bo + k * N + j);
                    ref_set_i(out, t, oi, (int64_t)s);
                }
            }
        for (int k = rb - 1; k >= 0; k--) {
            if (++coord[k] < o->dims[k]) break;
            coord[k] = 0;
        }
    }
    return true;
}

static bool eval_gemm(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *a = inp(g, n, 0), *b = inp(g, n, 1), *c = inp(g, n, 2);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    enum ir_dtype t = a->dtype;
    if (t == IR_BOOL || b->dtype != t) return false;
    bool ta = ir_attr_int(n, "transA", 0), tb = ir_attr_int(n, "transB", 0);
    double alpha = ir_attr_float(n, "alpha", 1.0f), beta = ir_attr_float(n, "beta", 1.0f);
    int64_t M = o->dims[0], N = o->dims[1], K = ta ? a->dims[0] : a->dims[1];
    int64_t cst[2] = {0, 0};
    if (c) ref_bcast_strides(c->dims, c->rank, 2, cst);
    void *out = ref_alloc_out(g, ov);
    for (int64_t m = 0; m < M; m++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) {
                int64_t ai = ta ? k * M + m : m * K + k, bi = tb ? j * K + k : k * N + j;
                s += ref_get_f(a->data, t, ai) * ref_get_f(b->data, t, bi);
            }
            s *= alpha;
            if (c) s += beta * ref_get_f(c->data, c->dtype, m * cst[0] + j * cst[1]);
            ref_set_f(out, t, m * N + j, s);
        }
    return true;
}

/* Decodes linear index i over dims[nsp] into coords. */
static void unravel(int64_t i, const int64_t *dims, int nsp, int64_t *c)
{
    for (int k = nsp - 1; k >= 0; k--) {
        c[k] = i % dims[k];
        i /= dims[k];
    }
}

static bool eval_conv(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *w = inp(g, n, 1), *b = inp(g, n, 2);
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    struct ref_conv_geom geo;
    ref_conv_geom(g, n, x->dims, x->rank, w->dims + 2, false, &geo);
    int nsp = geo.nsp;
    int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], G = geo.group;
    int64_t Cg = C / G, Mg = M / G, isz = 1, osz = 1, ksz = 1;
    for (int i = 0; i < nsp; i++) {
        isz *= geo.in[i];
        osz *= geo.out[i];
        ksz *= geo.k[i];
    }
    int64_t *kc = ref_tmp(sizeof(int64_t) * (size_t)(ksz * nsp));
    for (int64_t q = 0; q < ksz; q++) unravel(q, geo.k, nsp, kc + q * nsp);
    void *out = ref_alloc_out(g, ov);
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t m = 0; m < M; m++) {
            int64_t gi = m / Mg;
            for (int64_t os = 0; os < osz; os++) {
                int64_t oc[6];
                unravel(os, geo.out, nsp, oc);
                double s = b ? ref_get_f(b->data, b->dtype, m) : 0.0;
                for (int64_t q = 0; q < ksz; q++) {
                    int64_t ioff = 0;
                    bool in = true;
                    for (int i = 0; i < nsp && in; i++) {
                        int64_t p = oc[i] * geo.s[i] - geo.pb[i] + kc[q * nsp + i] * geo.d[i];
                        if (p < 0 || p >= geo.in[i]) in = false;
                        ioff = ioff * geo.in[i] + p;
                    }
                    if (!in) continue;
                    for (int64_t c = 0; c < Cg; c++) {
                        double xv = ref_get_f(x->data, t, (nn * C + gi * Cg + c) * isz + ioff);
                        double wv = ref_get_f(w->data, w->dtype, (m * Cg + c) * ksz + q);
                        s += xv * wv;
                    }
                }
                ref_set_f(out, t, (nn * M + m) * osz + os, s);
            }
        }
    free(kc);
    return true;
}

static bool eval_convt(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0), *w = inp(g, n, 1), *b = inp(g, n, 2);
    uint32_t ov = n->outputs[0];
    const struct ir_value *o = &g->values[ov];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    struct ref_conv_geom geo;
    ref_convt_geom(g, n, x->dims, x->rank, w->dims, &geo);
    int nsp = geo.nsp;
    int64_t N = x->dims[0], C = x->dims[1], G = geo.group, Mg = w->dims[1], M = o->dims[1];
    int64_t Cg = C / G, isz = 1, osz = 1, ksz = 1;
    for (int i = 0; i < nsp; i++) {
        isz *= geo.in[i];
        osz *= geo.out[i];
        ksz *= geo.k[i];
    }
    double *acc = ref_tmp(sizeof(double) * (size_t)(N * M * osz));
    int64_t ic[6], kc[6];
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++) {
            int64_t gi = c / Cg;
            for (int64_t is = 0; is < isz; is++) {
                double xv = ref_get_f(x->data, t, (nn * C + c) * isz + is);
                unravel(is, geo.in, nsp, ic);
                for (int64_t q = 0; q < ksz; q++) {
                    unravel(q, geo.k, nsp, kc);
                    int64_t ooff = 0;
                    bool in = true;
                    for (int i = 0; i < nsp && in; i++) {
                        int64_t p = ic[i] * geo.s[i] + kc[i] * geo.d[i] - geo.pb[i];
                        if (p < 0 || p >= geo.out[i]) in = false;
                        ooff = ooff * geo.out[i] + p;
                    }
                    if (!in) continue;
                    for (int64_t m = 0; m < Mg; m++) {
                        double wv = ref_get_f(w->data, w->dtype, (c * Mg + m) * ksz + q);
                        acc[(nn * M + gi * Mg + m) * osz + ooff] += xv * wv;
                    }
                }
            }
        }
    void *out = ref_alloc_out(g, ov);
    for (int64_t i = 0; i < N * M * osz; i++) {
        int64_t m = (i / osz) % M;
        ref_set_f(out, t, i, acc[i] + (b ? ref_get_f(b->data, b->dtype, m) : 0.0));
    }
    free(acc);
    return true;
}

int64_t ref_lp_pool_p(const struct ir_graph *g, const struct ir_node *n)
{
    int64_t p = ir_attr_int(n, "p", 2);
    if (p <= 0) ir_fatal_node(g, n, "LpPool p=%lld is not supported (must be > 0)", (long long)p);
    return p;
}

static bool eval_pool(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    bool ismax = n->op == IR_OP_MAX_POOL;
    if (!ref_is_float(t) && !(ismax && ref_is_int(t))) return false;
    struct ref_conv_geom geo;
    ref_conv_geom(g, n, x->dims, x->rank, NULL, true, &geo);
    int nsp = geo.nsp;
    int64_t NC = x->dims[0] * x->dims[1], isz = 1, osz = 1, ksz = 1;
    for (int i = 0; i < nsp; i++) {
        isz *= geo.in[i];
        osz *= geo.out[i];
        ksz *= geo.k[i];
    }
    bool incl = ir_attr_int(n, "count_include_pad", 0) != 0;
    /* LpPool-2/11/18: y = (sum over in-bounds taps of |x|^p)^(1/p) (zero padding adds 0) */
    bool islp = n->op == IR_OP_LP_POOL;
    int64_t lp = islp ? ref_lp_pool_p(g, n) : 0;
    int64_t so = ir_attr_int(n, "storage_order", 0);
    uint32_t iv = n->noutputs > 1 ? n->outputs[1] : IR_NONE;
    if (iv != IR_NONE && so && nsp != 2)
        ir_fatal_node(g, n, "storage_order=1 is supported for 2-D pooling only");
    void *out = ref_alloc_out(g, ov);
    int64_t *idx = iv != IR_NONE ? ref_alloc_out(g, iv) : NULL;
    int64_t oc[6], kc[6];
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t os = 0; os < osz; os++) {
            unravel(os, geo.out, nsp, oc);
            double s = ismax ? -INFINITY : 0.0;
            int64_t best = -1, cnt = 0, cnt_pad = 0;
            for (int64_t q = 0; q < ksz; q++) {
                unravel(q, geo.k, nsp, kc);
                int64_t ioff = 0;
                bool in = true, inpad = true;
                for (int i = 0; i < nsp; i++) {
                    int64_t p = oc[i] * geo.s[i] - geo.pb[i] + kc[i] * geo.d[i];
                    if (p < 0 || p >= geo.in[i]) in = false;
                    if (p < -geo.pb[i] || p >= geo.in[i] + geo.pe[i]) inpad = false;
                    ioff = ioff * geo.in[i] + p;
                }
                if (inpad) cnt_pad++;
                if (!in) continue;
                cnt++;
                double v = ref_get_f(x->data, t, nc * isz + ioff);
                if (ismax) {
                    if (v > s || best < 0) {
                        s = v;
                        best = ioff;
                    }
                } else {
                    s += islp ? pow(fabs(v), (double)lp) : v;
                }
            }
            int64_t oi = nc * osz + os;
            if (islp) {
                ref_set_f(out, t, oi, pow(s, 1.0 / (double)lp));
            } else if (ismax) {
                ref_set_f(out, t, oi, s);
                if (idx) {
                    int64_t bi = best;
                    if (so && best >= 0) {
                        int64_t h = best / geo.in[1], w = best % geo.in[1];
                        bi = w * geo.in[0] + h;
                    }
                    idx[oi] = nc * isz + bi;
                }
            } else {
                int64_t div = incl ? cnt_pad : cnt;
                ref_set_f(out, t, oi, div ? s / (double)div : NAN);
            }
        }
    return true;
}

static bool eval_global_pool(struct ir_graph *g, const struct ir_node *n)
{
    const struct ir_value *x = inp(g, n, 0);
    uint32_t ov = n->outputs[0];
    enum ir_dtype t = x->dtype;
    if (!ref_is_float(t)) return false;
    int64_t NC = x->dims[0] * x->dims[1], sp = 1;
    for (int k = 2; k < x->rank; k++) sp *= x->dims[k];
    void *out = ref_alloc_out(g, ov);
    bool ismax = n->op == IR_OP_GLOBAL_MAX_POOL;
    for (int64_t nc = 0; nc < NC; nc++) {
        double s = ismax ? -INFINITY : 0.0;
        for (int64_t i = 0; i < sp; i++) {
            double v = ref_get_f(x->data, t, nc * sp + i);
            if (ismax) s = (isnan(v) || v > s) ? v : s;
            else s += v;
        }
        ref_set_f(out, t, nc, ismax ? s : s / (double)sp);
    }
    return true;
}

bool ref_eval_linalg(struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    switch (n->op) {
    case IR_OP_MATMUL: return eval_matmul(g, n);
    case IR_OP_GEMM: return eval_gemm(g, n);
    case IR_OP_CONV: return eval_conv(g, n);
    case IR_OP_CONV_TRANSPOSE: return eval_convt(g, n);
    case IR_OP_MAX_POOL:
    case IR_OP_AVERAGE_POOL:
    case IR_OP_LP_POOL: return eval_pool(g, n);
    case IR_OP_GLOBAL_AVERAGE_POOL:
    case IR_OP_GLOBAL_MAX_POOL: return eval_global_pool(g, n);
    default: return false;
    }
}
