/* lower_attention.c — o2c.Attention (made by passes/fuse_attention.c) -> kernels/attention.cl.
 *
 * IR form (ir/ops.def): o2c.Attention(q, k, v, [mask]) -> y, attributes
 *   dims      ints [B, H, N, S, D]   batch, heads, query rows, keys, head dim
 *   q_strides ints [b, h, n, d]      element strides of q (0 = broadcast), d must be 1
 *   k_strides ints [b, h, s, d]      of k (token axis s), d must be 1
 *   v_strides ints [b, h, s, d]      of v, d must be 1
 *   o_strides ints [b, h, n, d]      of the output y, d must be 1 (y is written densely: the
 *                                    strides are a permutation of y's row-major layout)
 *   m_strides ints [b, h, n, s]      of the mask (only with a mask input)
 *   scale     float                  multiplies q·k before the mask is added
 *   causal    int                    1: key j is only seen by query rows n >= j
 * Two launches per node: att_kt copies k transposed into a scratch buffer (tiles of 16 keys,
 * each a contiguous D x 16 block: B·H·D·ceil16(S) floats, live only during the node), then the
 * attention kernel with gws = {ceil(N/RB), H, B·NC}, specialized for (D, DC, RB, CW) by a
 * generated ATT_DEFINE line (see kernels/attention.cl).
 * Assumes: float32; every offset fits in int32 (checked). Guarantees: a fatal located error for
 * anything else, never a wrong kernel.
 */
#include "codegen/lower.h"

#include <stdio.h>

/* Query rows per work-item (reuses each loaded k/v row RB times). */
#define ATT_RB 8
/* Largest work-group size (work-items along the query axis). */
#define ATT_LWS 8

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
    if (qs[3] != 1 || ks[3] != 1 || vs[3] != 1 || os[3] != 1)
        ir_fatal_node(g, n, "o2c.Attention: the head dim must be contiguous (d strides q %lld, "
                      "k %lld, v %lld, y %lld)", (long long)qs[3], (long long)ks[3],
                      (long long)vs[3], (long long)os[3]);
    if (B < 1 || H < 1 || N < 1 || S < 1 || D < 1)
        ir_fatal_node(g, n, "o2c.Attention: empty dims [%lld,%lld,%lld,%lld,%lld]", (long long)B,
                      (long long)H, (long long)N, (long long)S, (long long)D);
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
    /* output chunk: the whole head up to 512 dims (on PoCL, d=512 N=S=1024: 365 ms with one
     * chunk and 4 rows per work-item, 1748 ms in chunks of 128 that recompute q·k per chunk);
     * bigger heads in chunks of 256/128/64. GPUs would prefer smaller private arrays. */
    int64_t dc = D;
    if (D > 512) {
        if (D % 256 == 0) dc = 256;
        else if (D % 128 == 0) dc = 128;
        else if (D % 64 == 0) dc = 64;
    }
    int64_t nc = D / dc;
    int rb = ATT_RB;
    if (N < rb) rb = (int)N;
    const int cw = dc >= 16 ? 16 : dc >= 8 ? 8 : dc >= 4 ? 4 : 1;
    const int64_t sp = (S + 15) / 16 * 16;
    if (B * H * D * sp > lim)
        ir_fatal_node(g, n, "o2c.Attention: the transposed keys (%lld elements) exceed the "
                      "32-bit offsets of the kernel", (long long)(B * H * D * sp));
    char kname[96], src[256];
    (void)cg_use(cg, "attention", IR_F32);
    /* keys transposed (d-major, keys contiguous) into a scratch buffer */
    const uint32_t kt = cg_temp(cg, node, IR_F32, B * H * D * sp);
    size_t kgws[3] = {(size_t)sp, (size_t)D, (size_t)(B * H)};
    cg_launch(cg, node, "att_kt", 3, kgws, NULL);
    cg_arg_buf(cg, k);
    cg_arg_buf(cg, kt);
    cg_arg_i32(cg, S);
    cg_arg_i32(cg, sp);
    cg_arg_i32(cg, D);
    cg_arg_i32(cg, H);
    for (int a = 0; a < 3; a++) cg_arg_i32(cg, ks[a]);
    snprintf(kname, sizeof kname, "attention_d%lld_c%lld_r%d_w%d", (long long)D, (long long)dc,
             rb, cw);
    snprintf(src, sizeof src, "ATT_DEFINE(%s, %lld, %lld, %d, %d)\n", kname, (long long)D,
             (long long)dc, rb, cw);
    cg_add_source(cg, src);
    size_t gws[3] = {(size_t)((N + rb - 1) / rb), (size_t)H, (size_t)(B * nc)};
    /* Small work-groups: PoCL may keep the private arrays (q rows, accumulators: RB*(D+DC)
     * floats) of every work-item of a group alive at once; a driver-chosen group of thousands
     * of work-items overflows the worker thread's stack. lws[0] divides gws[0] (OpenCL 1.2). */
    size_t lws[3] = {1, 1, 1};
    for (size_t d = ATT_LWS; d >= 1; d--)
        if (gws[0] % d == 0) {
            lws[0] = d;
            break;
        }
    cg_launch(cg, node, kname, 3, gws, lws);
    cg_arg_buf(cg, q);
    cg_arg_buf(cg, kt);
    cg_arg_buf(cg, v);
    cg_arg_buf(cg, mask != IR_NONE ? mask : q); /* unread without a mask */
    cg_arg_buf(cg, y);
    cg_arg_i32(cg, N);
    cg_arg_i32(cg, S);
    cg_arg_i32(cg, sp);
    cg_arg_i32(cg, nc);
    cg_arg_f32(cg, scale);
    cg_arg_i32(cg, causal != 0);
    cg_arg_i32(cg, mask != IR_NONE);
    for (int a = 0; a < 3; a++) cg_arg_i32(cg, qs[a]);
    for (int a = 0; a < 3; a++) cg_arg_i32(cg, vs[a]);
    for (int a = 0; a < 3; a++) cg_arg_i32(cg, os[a]);
    for (int a = 0; a < 4; a++) cg_arg_i32(cg, ms[a]);
    return true;
}
