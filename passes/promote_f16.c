/* promote_f16.c — a float16 or bfloat16 model runs in float32 inside, float16 / bfloat16 at its
 * boundary. Everything below holds for bfloat16 as for float16 (one sweep per type; bfloat16 ->
 * float32 is exact too, float32 -> bfloat16 rounds to nearest even, NaN stays NaN; the bfloat16
 * boundary Casts lower to kernels/cast.cl cast_bf16_to_f32 / cast_to_bf16).
 *
 * The GEMM, convolution, attention, normalization, softmax, reduction and pooling kernels and
 * every fusion are float32; float16 arithmetic on this device gains nothing. So after shape
 * inference every float16 value becomes float32:
 *   - internal values: dtype float32; constants (weights) converted exactly (float16 -> float32 is
 *     exact), so the weights file holds them as float32 (twice the float16 size);
 *   - graph inputs stay float16 and are read through Cast(x -> float32); graph outputs stay
 *     float16, written by Cast(float32 -> float16) (round to nearest even, overflow to inf, as
 *     ONNX Cast);
 *   - Cast(to = float16) inside the graph keeps its rounding: it becomes Cast(-> float16) followed
 *     by Cast(-> float32), so a model that rounds through float16 on purpose gets the same bits;
 *     EyeLike's dtype and DequantizeLinear's output_dtype of float16 become float32;
 *   - BitCast, which reinterprets float16 bits, gets float16 operands through Casts.
 * Results are at least as accurate as float16 arithmetic; intermediate values that would
 * overflow float16 (|x| > 65504) do not, until a Cast or the output rounds them.
 * Runs after infer_fold (every dim and dtype known), before the fusion passes, which then see
 * the float32 graph they are written for.
 */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

#include "ref/ref_util.h"

/* A float16 / bfloat16 constant made float32 (step 4 below), exactly, when its bytes are read
 * (struct ir_lazy): from its data, or from what its own lazy fill makes. */
struct widen {
    const void *data;            /* the half elements, or NULL: inner makes them */
    const struct ir_lazy *inner; /* the value's lazy fill before (writes half elements), or NULL */
    enum ir_dtype ht;            /* IR_F16 or IR_BF16 */
    size_t half_bytes;           /* bytes inner writes */
};

static void fill_widen(const struct ir_graph *g, const struct ir_lazy *l, void *dst)
{
    const struct widen *w = l->ctx;
    void *tmp = NULL;
    const void *src = w->data;
    if (w->inner) {
        if (!(tmp = calloc(1, w->half_bytes ? w->half_bytes : 1))) ir_die("out of memory");
        w->inner->fill(g, w->inner, tmp);
        src = tmp;
    }
    float *d = dst;
    for (int64_t k = 0; k < l->p[0]; k++) d[k] = (float)ref_get_f(src, w->ht, k);
    free(tmp);
}

/* Adds out = Cast(in, to) (out made when IR_NONE) and infers it; returns out. */
static uint32_t add_cast(struct ir_graph *g, uint32_t in, uint32_t out, enum ir_dtype to, const char *name)
{
    name = ir_name_unique(g, name);
    if (out == IR_NONE) out = ir_value_add(g, name, IR_UNDEFINED, -1, NULL);
    uint32_t id = ir_node_add(g, IR_OP_CAST, name, "Cast", &in, 1, &out, 1);
    ir_attr_set_int(g, id, "to", to);
    infer_node(g, id);
    return out;
}

static bool is_graph_input(const struct ir_graph *g, uint32_t v)
{
    for (uint32_t i = 0; i < g->ninputs; i++)
        if (g->inputs[i] == v) return true;
    return false;
}

/* Every node input slot reading `from` reads `to` instead. */
static void reroute(struct ir_graph *g, uint32_t from, uint32_t to)
{
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] == from) n->inputs[k] = to;
    }
}

/* A new value of v's dims and dtype t, named "<v>/<suffix>". */
static uint32_t twin(struct ir_graph *g, uint32_t v, enum ir_dtype t, const char *suffix)
{
    uint32_t w = ir_value_add(g, ir_name_unique(g, ir_sprintf(g, "%s/%s", g->values[v].name, suffix)), t,
                              g->values[v].rank, g->values[v].dims);
    g->values[w].dims_known = true;
    return w;
}

/* Node `node` writes its half-type (ht: float16 or bfloat16) output slot 0 (value y) to a new
 * value h of that type instead, and y = Cast(h -> float32): the rounding stays where the model
 * put it. */
static void round_through(struct ir_graph *g, uint32_t node, uint32_t y, enum ir_dtype ht)
{
    uint32_t h = twin(g, y, ht, ht == IR_F16 ? "f16" : "bf16");
    g->nodes[node].outputs[0] = h;
    g->values[h].producer = node;
    g->values[y].producer = IR_NONE;
    add_cast(g, h, y, IR_F32, ir_sprintf(g, "%s/to_f32", g->values[y].name));
}

/* The pass for one half type ht (IR_F16 or IR_BF16). */
static bool promote(struct ir_graph *g, enum ir_dtype ht)
{
    const char *hs = ht == IR_F16 ? "f16" : "bf16";
    bool any = false;
    for (uint32_t v = 0; v < g->nvalues && !any; v++) any = g->values[v].dtype == ht && g->values[v].nuses;
    if (!any) return false;
    /* Values made below are float32 from the start, or float16 rounding temporaries that stay
     * float16: step 4 converts only the values that existed before this pass. */
    uint32_t nv = g->nvalues, nn = g->nnodes;
    bool *keep16 = ir_alloc(g, nv + 1);
    memset(keep16, 0, nv + 1);

    /* 1. BitCast keeps float16 operands: Casts around it. */
    for (uint32_t i = 0; i < nn; i++) {
        if (g->nodes[i].dead || g->nodes[i].op != IR_OP_BIT_CAST) continue;
        uint32_t x = g->nodes[i].inputs[0], y = g->nodes[i].outputs[0];
        if (g->values[x].dtype == ht) {
            uint32_t h = twin(g, x, ht, hs);
            uint32_t id = ir_node_add(g, IR_OP_CAST, g->values[h].name, "Cast", &x, 1, &h, 1);
            ir_attr_set_int(g, id, "to", ht);
            g->values[x].nuses--;
            g->nodes[i].inputs[0] = h;
            g->values[h].nuses++;
        }
        if (g->values[y].dtype == ht) round_through(g, i, y, ht);
    }

    /* 2. Cast(to = float16) keeps its rounding: Cast(-> f16) then Cast(-> f32). */
    nn = g->nnodes;
    for (uint32_t i = 0; i < nn; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead || (n->op != IR_OP_CAST && n->op != IR_OP_CAST_LIKE)) continue;
        uint32_t x = n->inputs[0], y = n->outputs[0];
        if (g->values[y].dtype != ht || g->values[x].dtype == ht || g->values[y].is_output) continue;
        if (n->op == IR_OP_CAST_LIKE) { /* CastLike(x, like16) -> Cast(x, to = f16) */
            g->values[n->inputs[1]].nuses--;
            n->op = IR_OP_CAST;
            n->ninputs = 1;
            ir_attr_set_int(g, i, "to", ht);
        }
        round_through(g, i, y, ht);
    }

    /* 3. Graph boundary: float16 inputs are read through Cast(-> f32), float16 outputs written by
     *    Cast(-> f16). */
    for (uint32_t i = 0; i < g->ninputs; i++) {
        uint32_t x = g->inputs[i];
        if (g->values[x].dtype != ht) continue;
        keep16[x] = true;
        uint32_t x32 = twin(g, x, IR_F32, "f32");
        reroute(g, x, x32);
        add_cast(g, x, x32, IR_F32, ir_sprintf(g, "%s/to_f32", g->values[x].name));
    }
    for (uint32_t i = 0; i < g->noutputs; i++) {
        uint32_t y = g->outputs[i];
        if (g->values[y].dtype != ht || keep16[y] || is_graph_input(g, y)) continue;
        keep16[y] = true;
        uint32_t y32 = twin(g, y, IR_F32, "f32");
        uint32_t p = g->values[y].producer;
        if (p != IR_NONE) {
            for (uint32_t k = 0; k < g->nodes[p].noutputs; k++)
                if (g->nodes[p].outputs[k] == y) g->nodes[p].outputs[k] = y32;
            g->values[y32].producer = p;
            g->values[y].producer = IR_NONE;
            reroute(g, y, y32);
            add_cast(g, y32, y, ht, ir_sprintf(g, "%s/to_%s", g->values[y].name, hs));
        } else if (ir_const_materialize(g, y), g->values[y].data) { /* read here */
            /* a constant output stays as it is; nodes reading it read a float32 copy */
            keep16[y] = true;
            int64_t cnt = ref_numel_v(&g->values[y]);
            float *d = ir_alloc(g, (size_t)(cnt ? cnt : 1) * sizeof(float));
            for (int64_t k = 0; k < cnt; k++) d[k] = (float)ref_get_f(g->values[y].data, ht, k);
            uint32_t c32 = twin(g, y, IR_F32, "f32");
            g->values[c32].data = d;
            g->values[c32].nbytes = (size_t)cnt * sizeof(float);
            g->values[c32].is_initializer = true;
            g->values[c32].shape_dep = g->values[y].shape_dep;
            g->values[c32].weight_dep = ir_weight_dep(&g->values[y]);
            reroute(g, y, c32);
        }
    }

    /* 4. Every other float16 value is float32 from here on. */
    for (uint32_t v = 0; v < nv; v++) {
        struct ir_value *x = &g->values[v];
        if (x->dtype != ht || keep16[v]) continue;
        const int64_t cnt = ref_numel_v(x);
        if (cnt < 1024) ir_const_materialize(g, v); /* small: converted now, as data */
        x = &g->values[v];
        if (x->data && cnt < 1024) {
            float *d = ir_alloc(g, (size_t)(cnt ? cnt : 1) * sizeof(float));
            for (int64_t k = 0; k < cnt; k++) d[k] = (float)ref_get_f(x->data, ht, k);
            x->data = d;
            x->nbytes = (size_t)cnt * sizeof(float);
        } else if (x->data || x->lazy) { /* a weight: widened when read, never held as float32 */
            struct widen *w = ir_alloc(g, sizeof *w);
            *w = (struct widen){x->data, x->lazy, ht, (size_t)x->nbytes};
            struct ir_lazy *l = ir_alloc(g, sizeof *l);
            *l = (struct ir_lazy){.fill = fill_widen, .src = {v, IR_NONE, IR_NONE, IR_NONE},
                                  .p = {cnt}, .ctx = w};
            x->data = NULL;
            x->lazy = l;
            x->nbytes = (size_t)cnt * sizeof(float);
        }
        x->dtype = IR_F32;
    }
    /* 5. Attributes naming float16 as a result type. */
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        if (n->op == IR_OP_CAST && ir_attr_int(n, "to", 0) == ht && g->values[n->outputs[0]].dtype == IR_F32)
            ir_attr_set_int(g, i, "to", IR_F32);
        else if (n->op == IR_OP_EYE_LIKE && ir_attr_int(n, "dtype", 0) == ht)
            ir_attr_set_int(g, i, "dtype", IR_F32);
        else if (ir_attr_int(n, "output_dtype", 0) == ht && g->values[n->outputs[0]].dtype == IR_F32)
            ir_attr_set_int(g, i, "output_dtype", IR_F32);
    }
    ir_toposort(g);
    ir_recount(g);
    return true;
}

bool pass_promote_f16(struct ir_graph *g)
{
    bool a = promote(g, IR_F16);
    bool b = promote(g, IR_BF16);
    return a || b;
}
