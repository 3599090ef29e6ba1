/* lower_attention.c — o2c.Attention (made by passes/fuse/attention.c) -> attention kernels.
 *
 * IR form (ir/ops.def): o2c.Attention(q, k, v, [mask]) -> y, attributes
 *   dims      ints [B, H, N, S, D]   batch, heads, query rows, keys, head dim
 *   q_strides ints [b, h, n, d]      element strides of q (0 = broadcast; d may be any stride:
 *                                    channels-first [B, D, N] tensors have d = N, n = 1)
 *   k_strides ints [b, h, s, d]      of k (token axis s)
 *   v_strides ints [b, h, s, d]      of v
 *   o_strides ints [b, h, n, d]      of the output y (y is written densely: the strides are a
 *                                    permutation of y's row-major layout)
 *   m_strides ints [b, h, n, s]      of the mask (only with a mask input)
 *   scale     float                  multiplies q·k before the mask is added
 *   causal    int                    1: key j is only seen by query rows n >= j
 *   zero_rows int                    1: a fully masked row gives 0, not NaN (masked-row guard)
 * This file checks the node and states what it computes (struct sched_attention); the kernels,
 * tiles and launches of each device class (cpu: kernels/attention.cl, gpu:
 * kernels/attention_gpu.cl) are chosen in codegen/sched_attention.c.
 * Empty dims: an empty output (B, H, N or D = 0) gets no launch; no keys (S = 0) fills y with 0
 * (the [N, 0] probabilities times the [0, D] values: onnxruntime's result; no kernel runs a
 * softmax over nothing).
 * Assumes: float32; every offset fits in int32 (checked). Guarantees: a fatal located error for
 * anything else, never a wrong kernel.
 */
#include "codegen/lower_ka.h"
#include "codegen/sched_attention.h"

/* Reads an INTS attribute of exactly n entries or fails naming it. */
static const int64_t *ints_attr(struct ir_graph *g, const struct ir_node *n, const char *name,
                                size_t want)
{
    size_t cnt = 0;
    const int64_t *a = ir_attr_ints(n, name, &cnt);
    if (!a || cnt != want)
        ir_fatal_node(g, n, "o2c.Attention: attribute '%s' must have %zu ints (has %zu)", name,
                      want, cnt);
    return a;
}

/* Largest element offset reachable through strides st over extents ext (4 axes). */
static int64_t max_offset(const int64_t *st, const int64_t *ext)
{
    int64_t off = 0;
    for (int a = 0; a < 4; a++) off += st[a] * (ext[a] - 1);
    return off;
}

bool lower_attention(struct cg_ctx *cg, struct ir_graph *g, uint32_t node)
{
    const struct ir_node *n = &g->nodes[node];
    if (n->op != IR_OP_FUSED_ATTENTION) return false;
    uint32_t q = n->inputs[0], k = n->inputs[1], v = n->inputs[2], mask = ir_input(n, 3);
    uint32_t y = n->outputs[0];
    const uint32_t vals[5] = {q, k, v, mask, y};
    for (int i = 0; i < 5; i++)
        if (vals[i] != IR_NONE && g->values[vals[i]].dtype != IR_F32)
            ir_fatal_node(g, n, "o2c.Attention on %s ('%s') is not supported (float32 only)",
                          ir_dtype_name(g->values[vals[i]].dtype), g->values[vals[i]].name);
    const int64_t *dims = ints_attr(g, n, "dims", 5);
    const int64_t *qs = ints_attr(g, n, "q_strides", 4), *ks = ints_attr(g, n, "k_strides", 4);
    const int64_t *vs = ints_attr(g, n, "v_strides", 4), *os = ints_attr(g, n, "o_strides", 4);
    int64_t B = dims[0], H = dims[1], N = dims[2], S = dims[3], D = dims[4];
    float scale = ir_attr_float(n, "scale", 1.0f);
    int64_t causal = ir_attr_int(n, "causal", 0);
    const int64_t dmin = dims[4] == 1 ? 0 : 1; /* a head of one element may broadcast */
    if (qs[3] < dmin || ks[3] < dmin || vs[3] < dmin || os[3] < dmin)
        ir_fatal_node(g, n, "o2c.Attention: the head dim must have a positive stride (d strides "
                      "q %lld, k %lld, v %lld, y %lld)", (long long)qs[3], (long long)ks[3],
                      (long long)vs[3], (long long)os[3]);
    if (B < 0 || H < 0 || N < 0 || S < 0 || D < 0)
        ir_fatal_node(g, n, "o2c.Attention: negative dims [%lld,%lld,%lld,%lld,%lld]", (long long)B,
                      (long long)H, (long long)N, (long long)S, (long long)D);
    if (B == 0 || H == 0 || N == 0 || D == 0) return true; /* empty output: no launch */
    if (S == 0) {
        /* no keys: the probabilities are [N, 0] and P V sums over nothing (onnxruntime: 0) */
        ka_fill(cg, g, node, y, 0);
        return true;
    }
    const int64_t eq[4] = {B, H, N, D}, ekv[4] = {B, H, S, D};
    int64_t ms[4] = {0, 0, 0, 0};
    const int64_t em[4] = {B, H, N, S};
    const int64_t lim = ((int64_t)1 << 31) - 1;
    struct { uint32_t v; const int64_t *st; const int64_t *ext; } chk[5] = {
        {q, qs, eq}, {k, ks, ekv}, {v, vs, ekv}, {y, os, eq}, {mask, ms, em}};
    if (mask != IR_NONE) {
        const int64_t *m = ints_attr(g, n, "m_strides", 4);
        for (int a = 0; a < 4; a++) ms[a] = m[a];
    }
    for (int i = 0; i < 5; i++) {
        if (chk[i].v == IR_NONE) continue;
        int64_t numel = ir_numel(g, chk[i].v);
        int64_t off = max_offset(chk[i].st, chk[i].ext);
        if (numel > lim || off >= numel || off < 0)
            ir_fatal_node(g, n, "o2c.Attention: tensor '%s' (%lld elements) is not addressable "
                          "with the given strides and int32 offsets (max offset %lld)",
                          g->values[chk[i].v].name, (long long)numel, (long long)off);
    }
    struct sched_attention a = {.node = node, .q = q, .k = k, .v = v, .mask = mask, .y = y,
                                .B = B, .H = H, .N = N, .S = S, .D = D, .scale = scale,
                                .causal = causal != 0,
                                .zero_rows = ir_attr_int(n, "zero_rows", 0) != 0};
    for (int i = 0; i < 4; i++) {
        a.qs[i] = qs[i];
        a.ks[i] = ks[i];
        a.vs[i] = vs[i];
        a.os[i] = os[i];
    }
    for (int i = 0; i < 4; i++) a.ms[i] = ms[i];
    sched_attention(cg, g, &a);
    return true;
}
