/* info.c — `onnx2cl MODEL.onnx --info`: what a model is and what it will need, before any run.
 *
 * What: info_count_imported() records the op histogram and parameter count of the graph as
 * imported (before any pass); info_flops() counts FLOPs on the optimized graph; info_print()
 * prints inputs/outputs, the histogram, parameters, FLOPs, weights bytes (as compiled, and with
 * --weights-dtype f32 and f16: exact, cg_weights_bytes_as), arena bytes, peak device memory, the largest tensor
 * and kernel launches per class.
 * Definitions (printed with the figures):
 *   parameters  elements of the model's initializers (Constant nodes' tensors and other
 *               attribute tensors are not counted);
 *   FLOPs       2 x multiply-accumulates of MatMul, Gemm, Conv, ConvTranspose and attention
 *               (Q.K^T and P.V) per inference, at the bound shapes, counted after constant
 *               folding and fusion (a fused Gemm/Conv/attention counts as the ops it replaced);
 *               bias, activations, normalization, softmax and data movement are not counted;
 *   peak        weights + arena + scratch as compiled: all are allocated for the model's
 *               lifetime, so the peak is their sum (the runtime may allocate less: buffers only
 *               the other kernel class uses are skipped).
 * Assumes: the graph passed passes_run (concrete shapes) for info_flops / info_print.
 * Guarantees: writes nothing but stdout.
 */
#include "info.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx2cl_rt.h"

static int cmp_op(const void *a, const void *b)
{
    const struct info_op *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

void info_count_imported(const struct ir_graph *g, struct info_imported *out)
{
    memset(out, 0, sizeof *out);
    out->ops = calloc(g->nnodes + 1, sizeof *out->ops);
    bool *attr_tensor = calloc(g->nvalues ? g->nvalues : 1, sizeof *attr_tensor);
    if (!out->ops || !attr_tensor) ir_die("out of memory");
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        out->nodes++;
        uint32_t k;
        for (k = 0; k < out->nops; k++)
            if (strcmp(out->ops[k].op, n->op_type) == 0) break;
        if (k == out->nops) out->ops[out->nops++].op = n->op_type;
        out->ops[k].count++;
        for (uint32_t a = 0; a < n->nattrs; a++)
            if (n->attrs[a].type == IR_ATTR_TENSOR && n->attrs[a].tensor < g->nvalues)
                attr_tensor[n->attrs[a].tensor] = true;
    }
    uint32_t nconst = 0; /* Constant nodes: the importer made them constants directly */
    for (uint32_t v = 0; v < g->nvalues; v++) {
        const struct ir_value *val = &g->values[v];
        if (val->is_param) {
            out->initializers++;
            out->parameters += (uint64_t)ir_numel(g, v);
        } else if (val->is_initializer && !attr_tensor[v] && val->producer == IR_NONE) {
            nconst++;
        }
    }
    if (nconst) {
        out->ops[out->nops].op = "Constant";
        out->ops[out->nops++].count = nconst;
        out->nodes += nconst;
    }
    qsort(out->ops, out->nops, sizeof *out->ops, cmp_op);
    free(attr_tensor);
}

void info_imported_free(struct info_imported *x)
{
    free(x->ops);
    memset(x, 0, sizeof *x);
}

/* Last dim of value v (its only dim for rank 1). */
static int64_t last_dim(const struct ir_graph *g, uint32_t v)
{
    const struct ir_value *val = &g->values[v];
    return val->rank > 0 ? val->dims[val->rank - 1] : 1;
}

/* Multiply-accumulates of node n (0 for ops that are not counted). */
static uint64_t node_macs(const struct ir_graph *g, const struct ir_node *n)
{
    switch (n->op) {
    case IR_OP_MATMUL: /* Y [..., M, N] = A [..., M, K] B [..., K, N]: numel(Y) * K */
        return (uint64_t)ir_numel(g, n->outputs[0]) * (uint64_t)last_dim(g, n->inputs[0]);
    case IR_OP_GEMM: { /* Y [M, N] = op(A) op(B), K = A's inner dim */
        const struct ir_value *a = &g->values[n->inputs[0]];
        int64_t k = ir_attr_int(n, "transA", 0) ? a->dims[0] : a->dims[a->rank - 1];
        return (uint64_t)ir_numel(g, n->outputs[0]) * (uint64_t)k;
    }
    case IR_OP_FUSED_GEMM: { /* outputs are column splits of [M, N] = a [M, K] w [K, N] */
        uint64_t y = 0;
        for (uint32_t k = 0; k < n->noutputs; k++)
            if (n->outputs[k] != IR_NONE) y += (uint64_t)ir_numel(g, n->outputs[k]);
        if (ir_attr_int(n, "activation", 0) == 5 || ir_attr_int(n, "activation", 0) == 6) y *= 2; /* GEGLU: hidden and gate [M, F] each */
        return y * (uint64_t)last_dim(g, n->inputs[0]);
    }
    case IR_OP_CONV:
    case IR_OP_FUSED_CONV: { /* W [OC, C/group, k...]: each output element takes C/group*k...
                              * (o2c.Conv of sibling convs: outputs split the OC channels) */
        const struct ir_value *w = &g->values[n->inputs[1]];
        uint64_t per = w->dims[0] ? (uint64_t)ir_numel(g, n->inputs[1]) / (uint64_t)w->dims[0] : 0;
        uint64_t y = 0;
        for (uint32_t k = 0; k < n->noutputs; k++) y += (uint64_t)ir_numel(g, n->outputs[k]);
        return y * per;
    }
    case IR_OP_CONV_TRANSPOSE: { /* W [C, OC/group, k...]: each input element feeds OC/group*k... */
        const struct ir_value *w = &g->values[n->inputs[1]];
        uint64_t per = w->dims[0] ? (uint64_t)ir_numel(g, n->inputs[1]) / (uint64_t)w->dims[0] : 0;
        return (uint64_t)ir_numel(g, n->inputs[0]) * per;
    }
    case IR_OP_FUSED_ATTENTION: { /* dims [B, H, N, S, D]: Q.K^T and P.V, N*S*D each */
        size_t cnt = 0;
        const int64_t *dm = ir_attr_ints(n, "dims", &cnt);
        if (!dm || cnt != 5) return 0;
        return 2 * (uint64_t)dm[0] * (uint64_t)dm[1] * (uint64_t)dm[2] * (uint64_t)dm[3] *
               (uint64_t)dm[4];
    }
    default: return 0;
    }
}

uint64_t info_flops(const struct ir_graph *g)
{
    uint64_t macs = 0;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (!g->nodes[i].dead) macs += node_macs(g, &g->nodes[i]);
    return 2 * macs;
}

static void print_ios(FILE *f, const struct o2r_io *io, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "  %s: %s [", io[i].name, o2r_dtype_name(io[i].dtype));
        for (int k = 0; k < io[i].rank; k++) fprintf(f, "%s%" PRId64, k ? "," : "", io[i].dims[k]);
        fprintf(f, "]\n");
    }
}

void info_print(FILE *f, const struct ir_graph *g, const struct info_imported *imp,
                uint64_t flops, const struct cg_ctx *m)
{
    const struct o2r_model_desc *d = cg_desc_plan(m); /* no checksum: no weight is read */
    struct o2r_memory mem;
    o2r_desc_memory(d, &mem);
    const double mib = 1048576.0;
    fprintf(f, "model: %s (opset %" PRId64 ", sha256 %s)\n", g->model_path, g->opset,
            d->model_hash);
    fprintf(f, "inputs:\n");
    print_ios(f, d->inputs, d->n_inputs);
    fprintf(f, "outputs:\n");
    print_ios(f, d->outputs, d->n_outputs);
    fprintf(f, "ops: %u nodes as imported, %u op types\n", imp->nodes, imp->nops);
    for (uint32_t k = 0; k < imp->nops; k++)
        fprintf(f, "  %-28s %u\n", imp->ops[k].op, imp->ops[k].count);
    fprintf(f, "parameters: %" PRIu64 " (elements of %u initializers)\n", imp->parameters,
            imp->initializers);
    fprintf(f, "flops: %" PRIu64 " (%.3f GFLOP per inference: 2 x multiply-accumulates of "
               "MatMul/Gemm/Conv/ConvTranspose/attention; bias, activations, normalization, "
               "softmax, data movement not counted)\n", flops, (double)flops / 1e9);
    const uint64_t wf32 = cg_weights_bytes_as(m, IR_F32), wf16 = cg_weights_bytes_as(m, IR_F16);
    const bool half = d->weights_dtype == O2R_F16;
    fprintf(f, "weights_bytes: %" PRIu64 " (%.2f MiB as compiled: --weights-dtype %s)\n",
            mem.weights_bytes, mem.weights_bytes / mib, half ? "f16" : "f32");
    fprintf(f, "weights_bytes_f32: %" PRIu64 " (%.2f MiB with --weights-dtype f32)\n", wf32,
            wf32 / mib);
    fprintf(f, "weights_bytes_f16: %" PRIu64 " (%.2f MiB with --weights-dtype f16: GEMM/conv/"
               "embedding weights as float16, biases, norm scales and other small tensors "
               "float32)\n", wf16, wf16 / mib);
    fprintf(f, "arena_bytes: %" PRIu64 " (%.2f MiB of activations, lifetimes overlapped)\n",
            mem.arena_bytes, mem.arena_bytes / mib);
    fprintf(f, "scratch_bytes: %" PRIu64 "\n", mem.scratch_bytes);
    fprintf(f, "device_bytes_peak: %" PRIu64 " (%.2f MiB = weights + arena + scratch, all live "
               "for the model's lifetime)\n", mem.peak_bytes, mem.peak_bytes / mib);
    int wl = mem.largest_weight_bytes >= mem.largest_arena_bytes;
    int32_t lb = wl ? mem.largest_weight : mem.largest_arena;
    if (lb >= 0)
        fprintf(f, "largest_tensor_bytes: %" PRIu64 " (%s '%s'; the device's largest allocation "
                   "must hold it)\n", d->buffers[lb].size, wl ? "weight" : "activation",
                d->buffers[lb].name ? d->buffers[lb].name : "?");
    fprintf(f, "kernel_launches: %u (cpu kernels), %u (gpu kernels)\n", cg_launch_count(m, 1),
            cg_launch_count(m, 2));
}
