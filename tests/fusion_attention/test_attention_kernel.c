/* test_attention_kernel.c — o2c.Attention (codegen/lower_attention.c + kernels/attention.cl)
 * against a C reference of softmax(q kᵀ · scale + mask) v, on odd sizes.
 *
 * Each case builds a one-node graph holding an o2c.Attention node directly (as the fusion pass
 * would leave it: dims/strides/scale/causal attributes, inferred output dims), compiles it with
 * cg_build and runs it on the OpenCL device through the runtime. Layouts: "split" reads q/k/v as
 * [B, tokens, H*D] (the head split absorbed through strides) and writes y as [B, N, H*D] (the
 * head merge absorbed); "dense" is [B, H, tokens, D] everywhere; "cf" is channels-first
 * [B, H*D, tokens] everywhere (the ldm AttnBlock: head dim stride = tokens, token stride 1; the
 * CPU class copies v densely, the GPU class stages rows first); masks are [N, S] (broadcast
 * over b, h) or [B, 1, N, S].
 * Reference: double-precision softmax(q kᵀ · scale + mask) v with max subtraction.
 * Tolerance: |got - ref| <= 2e-5 + 1e-4 |ref| (fp32 accumulation over up to 512 products;
 * inputs in [-1, 1)). Fully masked rows are not generated (the kernel gives NaN there, as the
 * unfused Softmax does).
 * Kernel variants: the first argument picks the class (o2r_ctx_set_kernels): "cpu"
 * (kernels/attention.cl), "gpu" (kernels/attention_gpu.cl, forced on PoCL: every case's sizes are
 * non-multiples of its tiles: 64 query rows, 64 keys, 8/16 d-chunks), or "auto" (default).
 * Usage: test_attention_kernel [cpu|gpu|auto] [--max-work W | bench B H N S D]
 *   --max-work W  only the cases with B·H·N·S·D <= W (for slow simulators such as oclgrind);
 *   bench         times the fused kernel on one size, no check.
 */
#include "codegen/codegen.h"
#include "ir/ir.h"
#include "onnx2cl_rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state = 0x243f6a8885a308d3ull;

/* Uniform in [-1, 1). */
static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

enum { LAY_DENSE, LAY_SPLIT, LAY_CF };

/* One test case. */
struct att_case {
    const char *label; /* printed name */
    int B, H, N, S, D; /* batch, heads, query rows, keys, head dim */
    int layout;        /* LAY_DENSE [B, H, tokens, D], LAY_SPLIT [B, tokens, H*D] or LAY_CF
                          [B, H*D, tokens] */
    int mask;          /* 0 none, 1 additive [N, S] with some -inf, 2 [B, 1, N, S] finite,
                          3 [N, S] -inf on every key < S - 70 (whole key tiles masked) */
    bool causal;       /* causal flag */
    float scale;       /* score scale */
};

static struct o2r_ctx *ctx;

/* Strides (b, h, token, d) of a tensor of `tokens` rows in the case's layout. */
static void strides_of(const struct att_case *c, int tokens, int64_t st[4])
{
    st[0] = (int64_t)c->H * tokens * c->D;
    if (c->layout == LAY_SPLIT) {
        st[1] = c->D;
        st[2] = (int64_t)c->H * c->D;
        st[3] = 1;
    } else if (c->layout == LAY_CF) {
        st[1] = (int64_t)c->D * tokens;
        st[2] = 1;
        st[3] = tokens;
    } else {
        st[1] = (int64_t)tokens * c->D;
        st[2] = c->D;
        st[3] = 1;
    }
}

static uint32_t add_input(struct ir_graph *g, const char *name, int rank, const int64_t *dims)
{
    uint32_t v = ir_value_add(g, name, IR_F32, rank, dims);
    g->values[v].dims_known = true;
    g->values[v].is_input = true;
    g->inputs[g->ninputs++] = v;
    return v;
}

/* Double-precision reference into ref[B*H*N*D] in the case's output layout. */
static void reference(const struct att_case *c, const float *q, const float *k, const float *v,
                      const float *mask, const int64_t *qs, const int64_t *ks, const int64_t *os,
                      const int64_t *msd, double *ref)
{
    double *sc = malloc(sizeof(double) * (size_t)c->S);
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->H; h++)
            for (int i = 0; i < c->N; i++) {
                double mx = -INFINITY;
                for (int j = 0; j < c->S; j++) {
                    double d = 0;
                    for (int t = 0; t < c->D; t++)
                        d += (double)q[b * qs[0] + h * qs[1] + i * qs[2] + t * qs[3]] *
                             k[b * ks[0] + h * ks[1] + j * ks[2] + t * ks[3]];
                    d *= c->scale;
                    if (mask) d += mask[b * msd[0] + h * msd[1] + i * msd[2] + j * msd[3]];
                    if (c->causal && j > i) d = -INFINITY;
                    sc[j] = d;
                    if (d > mx) mx = d;
                }
                double sum = 0;
                for (int j = 0; j < c->S; j++) {
                    sc[j] = sc[j] == -INFINITY ? 0 : exp(sc[j] - mx);
                    sum += sc[j];
                }
                for (int t = 0; t < c->D; t++) {
                    double a = 0;
                    for (int j = 0; j < c->S; j++)
                        a += sc[j] * v[b * ks[0] + h * ks[1] + j * ks[2] + t * ks[3]];
                    ref[b * os[0] + h * os[1] + i * os[2] + t * os[3]] = a / sum;
                }
            }
    free(sc);
}

/* Builds, runs and (unless bench > 0) checks one case; returns 0 on pass. */
static int run_case(const struct att_case *c, int bench)
{
    struct ir_graph *g = ir_graph_new(c->label);
    g->opset = 17;
    g->inputs = ir_alloc(g, sizeof(uint32_t) * 4);
    g->outputs = ir_alloc(g, sizeof(uint32_t));
    int64_t qd[4], kd[4], od[4];
    int rank = c->layout == LAY_DENSE ? 4 : 3;
    if (c->layout == LAY_SPLIT) {
        int64_t a[3] = {c->B, c->N, (int64_t)c->H * c->D}, b[3] = {c->B, c->S, (int64_t)c->H * c->D};
        memcpy(qd, a, sizeof a);
        memcpy(kd, b, sizeof b);
    } else if (c->layout == LAY_CF) {
        int64_t hd = (int64_t)c->H * c->D, a[3] = {c->B, hd, c->N}, b[3] = {c->B, hd, c->S};
        memcpy(qd, a, sizeof a);
        memcpy(kd, b, sizeof b);
    } else {
        int64_t a[4] = {c->B, c->H, c->N, c->D}, b[4] = {c->B, c->H, c->S, c->D};
        memcpy(qd, a, sizeof a);
        memcpy(kd, b, sizeof b);
    }
    memcpy(od, qd, sizeof qd);
    uint32_t ins[4];
    ins[0] = add_input(g, "q", rank, qd);
    ins[1] = add_input(g, "k", rank, kd);
    ins[2] = add_input(g, "v", rank, kd);
    int64_t msd[4] = {0, 0, 0, 0}, mdims[4];
    int mrank = 0;
    if (c->mask == 1 || c->mask == 3) {
        mrank = 2;
        mdims[0] = c->N;
        mdims[1] = c->S;
        msd[2] = c->S;
        msd[3] = 1;
    } else if (c->mask == 2) {
        mrank = 4;
        mdims[0] = c->B;
        mdims[1] = 1;
        mdims[2] = c->N;
        mdims[3] = c->S;
        msd[0] = (int64_t)c->N * c->S;
        msd[2] = c->S;
        msd[3] = 1;
    }
    if (c->mask) ins[3] = add_input(g, "mask", mrank, mdims);
    uint32_t out = ir_value_add(g, "y", IR_F32, rank, od);
    g->values[out].dims_known = true;
    uint32_t nd = ir_node_add(g, IR_OP_FUSED_ATTENTION, "attn", "o2c.Attention", ins,
                              c->mask ? 4 : 3, &out, 1);
    g->nodes[nd].onnx_index = 0;
    int64_t qs[4], ks[4];
    strides_of(c, c->N, qs);
    strides_of(c, c->S, ks);
    int64_t dims[5] = {c->B, c->H, c->N, c->S, c->D};
    ir_attr_set_ints(g, nd, "dims", dims, 5);
    ir_attr_set_ints(g, nd, "q_strides", qs, 4);
    ir_attr_set_ints(g, nd, "k_strides", ks, 4);
    ir_attr_set_ints(g, nd, "v_strides", ks, 4);
    ir_attr_set_ints(g, nd, "o_strides", qs, 4);
    if (c->mask) ir_attr_set_ints(g, nd, "m_strides", msd, 4);
    ir_attr_set_float(g, nd, "scale", c->scale);
    ir_attr_set_int(g, nd, "causal", c->causal);
    g->outputs[g->noutputs++] = out;
    g->values[out].is_output = true;
    g->values[out].nuses++;

    size_t nq = (size_t)c->B * c->H * c->N * c->D, nk = (size_t)c->B * c->H * c->S * c->D;
    size_t nm = c->mask != 2 ? (size_t)c->N * c->S : (size_t)c->B * c->N * c->S;
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4);
    float *mask = c->mask ? malloc(nm * 4) : NULL, *y = malloc(nq * 4);
    for (size_t i = 0; i < nq; i++) q[i] = frand();
    for (size_t i = 0; i < nk; i++) k[i] = frand();
    for (size_t i = 0; i < nk; i++) v[i] = frand();
    for (size_t i = 0; i < nm && mask; i++) {
        float r = frand();
        /* [N,S] masks: -inf on ~1/4 of the keys, never on key 0 (no fully masked row) */
        if (c->mask == 1) mask[i] = i % (size_t)c->S != 0 && r < -0.5f ? -INFINITY : 2.0f * r;
        else if (c->mask == 3) mask[i] = (int)(i % (size_t)c->S) < c->S - 70 ? -INFINITY : r;
        else mask[i] = r;
    }

    struct cg_options co = {.name = "att", .with_main = false};
    struct cg_ctx *m = cg_build(g, &co);
    char wpath[] = "/tmp/o2c_att_XXXXXX";
    int fd = mkstemp(wpath);
    if (fd < 0) return 1;
    close(fd);
    cg_write_weights(m, wpath);
    struct o2r_model *rm = NULL;
    int fail = 0;
    if (o2r_model_init(ctx, cg_desc(m), wpath, &rm) != O2R_OK) {
        fprintf(stderr, "FAIL %s: init: %s\n", c->label, o2r_ctx_last_error(ctx));
        unlink(wpath);
        return 1;
    }
    unlink(wpath);
    const void *inp[4] = {q, k, v, mask};
    void *outp[1] = {y};
    int reps = bench > 0 ? bench : 1;
    double best = 1e30;
    for (int r = 0; r < reps + (bench > 0); r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (o2r_model_run(rm, inp, outp) != O2R_OK) {
            fprintf(stderr, "FAIL %s: run: %s\n", c->label, o2r_ctx_last_error(ctx));
            fail = 1;
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (r > 0 || bench == 0) best = ms < best ? ms : best;
    }
    if (bench > 0 && !fail) printf("bench %s: best of %d runs %.2f ms\n", c->label, reps, best);
    if (!fail && bench == 0) {
        double *ref = malloc(sizeof(double) * nq);
        reference(c, q, k, v, mask, qs, ks, qs, msd, ref);
        double maxabs = 0, atol = 2e-5, rtol = 1e-4;
        size_t bad = (size_t)-1;
        for (size_t i = 0; i < nq; i++) {
            double d = fabs((double)y[i] - ref[i]);
            if (!(d <= atol + rtol * fabs(ref[i])) && bad == (size_t)-1) bad = i;
            if (d > maxabs || isnan(d)) maxabs = d;
        }
        if (bad != (size_t)-1) {
            fprintf(stderr, "FAIL %s: element %zu: got %.9g, expected %.9g (max abs err %.3g)\n",
                    c->label, bad, y[bad], ref[bad], maxabs);
            fail = 1;
        } else {
            printf("ok   %s: %zu elements, max abs err %.3g (atol %g, rtol %g)\n", c->label, nq,
                   maxabs, atol, rtol);
        }
        free(ref);
    }
    o2r_model_free(rm);
    ir_graph_free(g);
    free(q), free(k), free(v), free(mask), free(y);
    return fail;
}

int main(int argc, char **argv)
{
    if (o2r_ctx_create(NULL, &ctx) != O2R_OK) {
        fprintf(stderr, "cannot create an OpenCL context: %s\n", o2r_ctx_last_error(NULL));
        return 1;
    }
    int a0 = 1;
    if (argc > 1 && strcmp(argv[1], "bench") != 0) {
        if (o2r_ctx_set_kernels(ctx, argv[1]) != O2R_OK) {
            fprintf(stderr, "%s\n", o2r_ctx_last_error(ctx));
            return 2;
        }
        a0 = 2;
    }
    const char *why = "";
    const uint32_t cls = o2r_ctx_kernel_class(ctx, &why);
    printf("kernel class: %s (%s)\n", cls == O2R_VARIANT_GPU ? "gpu" : "cpu", why);
    if (a0 == 2 && strcmp(argv[1], "auto") != 0 &&
        (cls == O2R_VARIANT_GPU) != (strcmp(argv[1], "gpu") == 0)) {
        fprintf(stderr, "FAIL: asked for the %s kernels, the context chose the other class\n",
                argv[1]);
        return 1;
    }
    if (argc == a0 + 6 && strcmp(argv[a0], "bench") == 0) {
        struct att_case c = {"bench", atoi(argv[a0 + 1]), atoi(argv[a0 + 2]), atoi(argv[a0 + 3]),
                             atoi(argv[a0 + 4]), atoi(argv[a0 + 5]), LAY_SPLIT, 0, false, 0.125f};
        c.scale = 1.0f / sqrtf((float)c.D);
        int rc = run_case(&c, 3);
        o2r_ctx_free(ctx);
        return rc;
    }
    const struct att_case cases[] = {
        {"split_h3_n37_s19_d24", 2, 3, 37, 19, 24, LAY_SPLIT, 0, false, 0.2f},
        {"split_h3_n37_s37_d40_causal", 1, 3, 37, 37, 40, LAY_SPLIT, 0, true, 0.158f},
        {"dense_h3_n37_s19_d40", 2, 3, 37, 19, 40, LAY_DENSE, 0, false, 0.158f},
        {"split_h1_n37_s37_d512", 1, 1, 37, 37, 512, LAY_SPLIT, 0, false, 0.044f},
        {"dense_h3_n37_s19_d24_mask_ns", 1, 3, 37, 19, 24, LAY_DENSE, 1, false, 0.2f},
        {"split_h3_n37_s37_d40_mask_b1ns_causal", 2, 3, 37, 37, 40, LAY_SPLIT, 2, true, 0.158f},
        {"split_h2_n3_s5_d7", 1, 2, 3, 5, 7, LAY_SPLIT, 0, false, 0.37f},
        {"split_h2_n1_s1_d16", 1, 2, 1, 1, 16, LAY_SPLIT, 0, false, 0.25f},
        {"dense_h1_n37_s77_d320_mask_ns", 1, 1, 37, 77, 320, LAY_DENSE, 1, false, 0.056f},
        {"split_h2_n5_s9_d1024_chunked", 1, 2, 5, 9, 1024, LAY_SPLIT, 0, false, 0.03f},
        {"dense_h1_n6_s6_d520_causal", 1, 1, 6, 6, 520, LAY_DENSE, 0, true, 0.04f},
        /* the SD head dims (40, 64, 80, 96, 128, 160) on sizes that are not multiples of the
         * GPU tiles (64 rows, 64 keys) nor of the CPU ones (8 rows, 16 keys): self, cross
         * (N != S, S = 1), causal, each mask kind */
        {"split_h2_n77_s77_d40_causal", 1, 2, 77, 77, 40, LAY_SPLIT, 0, true, 0.158f},
        {"split_h2_n129_s77_d40_cross", 2, 2, 129, 77, 40, LAY_SPLIT, 0, false, 0.158f},
        {"dense_h2_n129_s1_d64", 1, 2, 129, 1, 64, LAY_DENSE, 0, false, 0.125f},
        {"split_h1_n77_s333_d64_mask_tiles", 1, 1, 77, 333, 64, LAY_SPLIT, 3, false, 0.125f},
        {"split_h2_n129_s333_d80_mask_ns", 1, 2, 129, 333, 80, LAY_SPLIT, 1, false, 0.112f},
        {"dense_h1_n77_s77_d80_mask_b1ns_causal", 2, 1, 77, 77, 80, LAY_DENSE, 2, true, 0.112f},
        {"split_h1_n129_s333_d96", 1, 1, 129, 333, 96, LAY_SPLIT, 0, false, 0.102f},
        {"split_h2_n1_s77_d96_cross", 1, 2, 1, 77, 96, LAY_SPLIT, 0, false, 0.102f},
        {"split_h1_n129_s129_d128_causal", 1, 1, 129, 129, 128, LAY_SPLIT, 0, true, 0.088f},
        {"dense_h1_n77_s333_d128_mask_ns", 1, 1, 77, 333, 128, LAY_DENSE, 1, false, 0.088f},
        {"split_h2_n77_s129_d160_causal", 1, 2, 77, 129, 160, LAY_SPLIT, 0, true, 0.079f},
        {"split_h1_n129_s333_d160_mask_tiles", 1, 1, 129, 333, 160, LAY_SPLIT, 3, false, 0.079f},
        {"split_h1_n333_s77_d40_causal_mask_ns", 1, 1, 333, 77, 40, LAY_SPLIT, 1, true, 0.158f},
        /* channels-first [B, H*D, tokens] (ldm AttnBlock: one head of C channels; the head dim
         * strided by the token count): odd C and token counts, batch 2, cross and masked too */
        {"cf_h1_n37_s37_d40", 2, 1, 37, 37, 40, LAY_CF, 0, false, 0.158f},
        {"cf_h2_n129_s77_d24_cross", 2, 2, 129, 77, 24, LAY_CF, 0, false, 0.2f},
        {"cf_h1_n77_s77_d64_mask_b1ns", 2, 1, 77, 77, 64, LAY_CF, 2, false, 0.125f},
        {"cf_h1_n37_s37_d512", 1, 1, 37, 37, 512, LAY_CF, 0, false, 0.044f},
        /* S % 16 == 0: the cpu class reads channels-first k in place (no transposed copy) */
        {"cf_h2_n37_s64_d40_kdirect", 2, 2, 37, 64, 40, LAY_CF, 0, false, 0.158f},
        {"cf_h1_n64_s64_d24_kdirect_causal_mask_ns", 1, 1, 64, 64, 24, LAY_CF, 1, true, 0.2f},
    };
    double max_work = 1e300;
    if (argc == a0 + 2 && strcmp(argv[a0], "--max-work") == 0) max_work = atof(argv[a0 + 1]);
    else if (argc != a0) {
        fprintf(stderr, "usage: %s [cpu|gpu|auto] [--max-work W | bench B H N S D]\n", argv[0]);
        return 2;
    }
    int fail = 0, ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct att_case *c = &cases[i];
        if ((double)c->B * c->H * c->N * c->S * c->D > max_work) continue;
        fail |= run_case(c, 0);
        ran++;
    }
    printf("%d cases run\n", ran);
    o2r_ctx_free(ctx);
    return fail;
}
