/* graph.c — construction, lookup and rewriting of struct ir_graph; the op table from ops.def.
 *
 * Values and nodes live in growable arrays (indices stay valid, pointers do not survive an
 * ir_value_add / ir_node_add). A name -> value hash index makes ir_value_find O(1).
 */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ir_arena *ir_arena_new(void);
void ir_arena_free(struct ir_arena *a);

/* ---- op table ---- */

struct op_info {
    const char *name;
    int min_in, max_in;
    unsigned flags;
    const char *family;
};

static const struct op_info op_table[IR_OP_COUNT] = {
    [IR_OP_UNKNOWN] = {"?", 0, 255, 0, "none"},
#define X(id, name, min_in, max_in, flags, family) \
    [IR_OP_##id] = {name, min_in, max_in, flags, #family},
#include "ops.def"
#undef X
};

const char *ir_op_name(enum ir_op op)
{
    return (unsigned)op < IR_OP_COUNT ? op_table[op].name : "?";
}

enum ir_op ir_op_lookup(const char *name)
{
    for (int i = 1; i < IR_OP_COUNT; i++)
        if (strcmp(op_table[i].name, name) == 0) return (enum ir_op)i;
    return IR_OP_UNKNOWN;
}

unsigned ir_op_flags(enum ir_op op)
{
    return (unsigned)op < IR_OP_COUNT ? op_table[op].flags : 0;
}

const char *ir_op_family(enum ir_op op)
{
    return (unsigned)op < IR_OP_COUNT ? op_table[op].family : "none";
}

int ir_op_min_inputs(enum ir_op op)
{
    return (unsigned)op < IR_OP_COUNT ? op_table[op].min_in : 0;
}

int ir_op_max_inputs(enum ir_op op)
{
    return (unsigned)op < IR_OP_COUNT ? op_table[op].max_in : 255;
}

/* ---- dtypes ---- */

size_t ir_dtype_size(enum ir_dtype t)
{
    switch (t) {
    case IR_F32: case IR_I32: case IR_U32: return 4;
    case IR_U8: case IR_I8: case IR_BOOL: return 1;
    case IR_U16: case IR_I16: case IR_F16: case IR_BF16: return 2;
    case IR_I64: case IR_U64: case IR_F64: return 8;
    default: return 0;
    }
}

const char *ir_dtype_name(enum ir_dtype t)
{
    switch (t) {
    case IR_F32: return "float32";
    case IR_U8: return "uint8";
    case IR_I8: return "int8";
    case IR_U16: return "uint16";
    case IR_I16: return "int16";
    case IR_I32: return "int32";
    case IR_I64: return "int64";
    case IR_STRING: return "string";
    case IR_BOOL: return "bool";
    case IR_F16: return "float16";
    case IR_F64: return "float64";
    case IR_U32: return "uint32";
    case IR_U64: return "uint64";
    case IR_BF16: return "bfloat16";
    default: return "undefined";
    }
}

bool ir_dims_numel(const int64_t *dims, int rank, int64_t *out)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return false;
        if (dims[i] != 0 && n > INT64_MAX / dims[i]) return false;
        n *= dims[i];
    }
    *out = n;
    return true;
}

int64_t ir_numel(const struct ir_graph *g, uint32_t v)
{
    const struct ir_value *val = &g->values[v];
    IR_ASSERT(val->rank >= 0);
    int64_t n;
    if (!ir_dims_numel(val->dims, val->rank, &n))
        ir_fatal(g, "tensor '%s': element count overflows or a dim is negative", val->name);
    return n;
}

static float half_to_float(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    float v;
    if (e == 0) v = ldexpf((float)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexpf((float)(m | 1024), e - 25);
    return s ? -v : v;
}

int64_t ir_const_i64(const struct ir_graph *g, uint32_t v, int64_t i)
{
    /* a lazy constant read element by element is made once, for good (small ones: biases,
     * norm scales; the transforms read big ones whole, through ir_const_bytes) */
    if (g->values[v].lazy) ir_const_materialize((struct ir_graph *)g, v);
    const struct ir_value *val = &g->values[v];
    IR_ASSERT(val->data != NULL);
    IR_ASSERT(i >= 0 && (size_t)(i + 1) * ir_dtype_size(val->dtype) <= val->nbytes);
    const void *p = val->data;
    switch (val->dtype) {
    case IR_I64: { int64_t x; memcpy(&x, (const char *)p + 8 * i, 8); return x; }
    case IR_U64: { uint64_t x; memcpy(&x, (const char *)p + 8 * i, 8); return (int64_t)x; }
    case IR_I32: { int32_t x; memcpy(&x, (const char *)p + 4 * i, 4); return x; }
    case IR_U32: { uint32_t x; memcpy(&x, (const char *)p + 4 * i, 4); return x; }
    case IR_I16: { int16_t x; memcpy(&x, (const char *)p + 2 * i, 2); return x; }
    case IR_U16: { uint16_t x; memcpy(&x, (const char *)p + 2 * i, 2); return x; }
    case IR_I8: return ((const int8_t *)p)[i];
    case IR_U8: case IR_BOOL: return ((const uint8_t *)p)[i];
    case IR_F32: case IR_F64: case IR_F16: return (int64_t)ir_const_f64(g, v, i);
    default: ir_fatal(g, "tensor '%s': %s data cannot be read as an integer", val->name,
                      ir_dtype_name(val->dtype));
    }
}

double ir_const_f64(const struct ir_graph *g, uint32_t v, int64_t i)
{
    /* a lazy constant read element by element is made once, for good (small ones: biases,
     * norm scales; the transforms read big ones whole, through ir_const_bytes) */
    if (g->values[v].lazy) ir_const_materialize((struct ir_graph *)g, v);
    const struct ir_value *val = &g->values[v];
    IR_ASSERT(val->data != NULL);
    IR_ASSERT(i >= 0 && (size_t)(i + 1) * ir_dtype_size(val->dtype) <= val->nbytes);
    const char *p = val->data;
    switch (val->dtype) {
    case IR_F32: { float x; memcpy(&x, p + 4 * i, 4); return x; }
    case IR_F64: { double x; memcpy(&x, p + 8 * i, 8); return x; }
    case IR_F16: { uint16_t x; memcpy(&x, p + 2 * i, 2); return half_to_float(x); }
    case IR_BF16: { uint16_t x; memcpy(&x, p + 2 * i, 2); uint32_t u = (uint32_t)x << 16; float f;
                    memcpy(&f, &u, 4); return f; }
    default: return (double)ir_const_i64(g, v, i);
    }
}

/* ---- construction ---- */

#define HASH_EMPTY UINT32_MAX

/* Name index: open addressing over value ids, kept beside the graph in a static side table
 * keyed by graph pointer would be clumsy; instead the index lives in the arena and is rebuilt
 * on growth. */
struct name_index {
    uint32_t *slots; /* value ids or HASH_EMPTY */
    uint32_t cap;    /* power of two */
    uint32_t count;  /* filled slots */
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

struct graph_private {
    struct ir_graph g;      /* must be first */
    struct name_index idx;  /* name -> value id */
};

static void index_insert(struct graph_private *gp, uint32_t id)
{
    struct name_index *ix = &gp->idx;
    if ((ix->count + 1) * 2 > ix->cap) {
        uint32_t ncap = ix->cap ? ix->cap * 2 : 1024;
        uint32_t *ns = malloc(sizeof(uint32_t) * ncap);
        if (!ns) ir_die("out of memory");
        memset(ns, 0xff, sizeof(uint32_t) * ncap);
        for (uint32_t i = 0; i < ix->cap; i++) {
            uint32_t v = ix->slots[i];
            if (v == HASH_EMPTY) continue;
            uint64_t h = str_hash(gp->g.values[v].name) & (ncap - 1);
            while (ns[h] != HASH_EMPTY) h = (h + 1) & (ncap - 1);
            ns[h] = v;
        }
        free(ix->slots);
        ix->slots = ns;
        ix->cap = ncap;
    }
    uint64_t h = str_hash(gp->g.values[id].name) & (ix->cap - 1);
    while (ix->slots[h] != HASH_EMPTY) h = (h + 1) & (ix->cap - 1);
    ix->slots[h] = id;
    ix->count++;
}

struct ir_graph *ir_graph_new(const char *model_path)
{
    struct graph_private *gp = calloc(1, sizeof *gp);
    if (!gp) ir_die("out of memory");
    struct ir_graph *g = &gp->g;
    g->arena = ir_arena_new();
    g->model_path = ir_strdup(g, model_path ? model_path : "model");
    g->model_dir = ir_strdup(g, ".");
    g->opset = 17;
    return g;
}

void ir_graph_free(struct ir_graph *g)
{
    if (!g) return;
    struct graph_private *gp = (struct graph_private *)g;
    free(gp->idx.slots);
    free(g->nodes);
    free(g->values);
    ir_arena_free(g->arena);
    free(gp);
}

uint32_t ir_value_find(const struct ir_graph *g, const char *name)
{
    const struct graph_private *gp = (const struct graph_private *)g;
    const struct name_index *ix = &gp->idx;
    if (!ix->cap || !name) return IR_NONE;
    uint64_t h = str_hash(name) & (ix->cap - 1);
    while (ix->slots[h] != HASH_EMPTY) {
        if (strcmp(g->values[ix->slots[h]].name, name) == 0) return ix->slots[h];
        h = (h + 1) & (ix->cap - 1);
    }
    return IR_NONE;
}

uint32_t ir_value_add(struct ir_graph *g, const char *name, enum ir_dtype dtype, int rank,
                      const int64_t *dims)
{
    if (g->nvalues == g->cap_values) {
        uint32_t ncap = g->cap_values ? g->cap_values * 2 : 256;
        struct ir_value *nv = realloc(g->values, sizeof *nv * ncap);
        if (!nv) ir_die("out of memory");
        g->values = nv;
        g->cap_values = ncap;
    }
    IR_ASSERT(rank <= IR_MAX_RANK);
    uint32_t id = g->nvalues++;
    struct ir_value *v = &g->values[id];
    memset(v, 0, sizeof *v);
    v->name = (name && name[0]) ? ir_strdup(g, name) : ir_sprintf(g, "_v%u", id);
    v->dtype = dtype;
    v->rank = rank;
    v->producer = IR_NONE;
    if (rank >= 0 && dims) {
        memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
        v->dims_known = true;
    } else if (rank == 0) {
        v->dims_known = true;
    }
    index_insert((struct graph_private *)g, id);
    return id;
}

uint32_t ir_const_add(struct ir_graph *g, const char *name, enum ir_dtype dtype, int rank,
                      const int64_t *dims, const void *data, size_t nbytes)
{
    uint32_t id = ir_value_add(g, name, dtype, rank, dims);
    struct ir_value *v = &g->values[id];
    v->data = data ? data : ir_alloc(g, 1);
    v->nbytes = nbytes;
    v->is_initializer = true;
    v->dims_known = true;
    return id;
}

uint32_t ir_lazy_add(struct ir_graph *g, const char *name, enum ir_dtype dtype, int rank,
                     const int64_t *dims, size_t nbytes, const struct ir_lazy *l)
{
    struct ir_lazy *copy = ir_alloc(g, sizeof *copy);
    *copy = *l;
    uint32_t id = ir_value_add(g, name, dtype, rank, dims);
    struct ir_value *v = &g->values[id];
    v->lazy = copy;
    v->nbytes = nbytes;
    v->is_initializer = true;
    v->dims_known = true;
    return id;
}

const void *ir_const_bytes(const struct ir_graph *g, uint32_t v, void **owned)
{
    const struct ir_value *val = &g->values[v];
    *owned = NULL;
    if (!val->lazy) return val->data;
    void *p = calloc(1, val->nbytes ? val->nbytes : 1);
    if (!p) ir_die("out of memory (%zu bytes for weight '%s')", val->nbytes, val->name);
    val->lazy->fill(g, val->lazy, p);
    *owned = p;
    return p;
}

void ir_const_materialize(struct ir_graph *g, uint32_t v)
{
    struct ir_value *val = &g->values[v];
    if (!val->lazy) return;
    void *owned;
    const void *p = ir_const_bytes(g, v, &owned);
    void *d = ir_alloc(g, val->nbytes ? val->nbytes : 1);
    memcpy(d, p, val->nbytes);
    free(owned);
    val = &g->values[v];
    val->data = d;
    val->lazy = NULL;
}

const char *ir_name_unique(struct ir_graph *g, const char *base)
{
    const char *name = base;
    for (unsigned k = 1; ir_value_find(g, name) != IR_NONE; k++) name = ir_sprintf(g, "%s_%u", base, k);
    return name;
}

uint32_t ir_node_add(struct ir_graph *g, enum ir_op op, const char *name, const char *op_type,
                     const uint32_t *inputs, uint32_t ninputs, const uint32_t *outputs,
                     uint32_t noutputs)
{
    if (g->nnodes == g->cap_nodes) {
        uint32_t ncap = g->cap_nodes ? g->cap_nodes * 2 : 256;
        struct ir_node *nn = realloc(g->nodes, sizeof *nn * ncap);
        if (!nn) ir_die("out of memory");
        g->nodes = nn;
        g->cap_nodes = ncap;
    }
    uint32_t id = g->nnodes++;
    struct ir_node *n = &g->nodes[id];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->name = ir_strdup(g, name ? name : "");
    n->op_type = ir_strdup(g, op_type ? op_type : ir_op_name(op));
    n->onnx_index = -1;
    n->inputs = ir_alloc(g, sizeof(uint32_t) * (ninputs ? ninputs : 1));
    n->outputs = ir_alloc(g, sizeof(uint32_t) * (noutputs ? noutputs : 1));
    if (ninputs) memcpy(n->inputs, inputs, sizeof(uint32_t) * ninputs);
    if (noutputs) memcpy(n->outputs, outputs, sizeof(uint32_t) * noutputs);
    n->ninputs = ninputs;
    n->noutputs = noutputs;
    for (uint32_t i = 0; i < ninputs; i++)
        if (inputs[i] != IR_NONE) g->values[inputs[i]].nuses++;
    for (uint32_t i = 0; i < noutputs; i++)
        if (outputs[i] != IR_NONE) g->values[outputs[i]].producer = id;
    return id;
}

static struct ir_attr *attr_slot(struct ir_graph *g, uint32_t node, const char *name)
{
    struct ir_node *n = &g->nodes[node];
    for (uint32_t i = 0; i < n->nattrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) {
            memset(&n->attrs[i], 0, sizeof n->attrs[i]);
            n->attrs[i].name = ir_strdup(g, name);
            return &n->attrs[i];
        }
    struct ir_attr *na = ir_alloc(g, sizeof *na * (n->nattrs + 1));
    if (n->nattrs) memcpy(na, n->attrs, sizeof *na * n->nattrs);
    n->attrs = na;
    struct ir_attr *a = &na[n->nattrs++];
    a->name = ir_strdup(g, name);
    a->tensor = IR_NONE;
    return a;
}

void ir_attr_set_int(struct ir_graph *g, uint32_t node, const char *name, int64_t v)
{
    struct ir_attr *a = attr_slot(g, node, name);
    a->type = IR_ATTR_INT;
    a->i = v;
}

void ir_attr_set_float(struct ir_graph *g, uint32_t node, const char *name, float v)
{
    struct ir_attr *a = attr_slot(g, node, name);
    a->type = IR_ATTR_FLOAT;
    a->f = v;
}

void ir_attr_set_ints(struct ir_graph *g, uint32_t node, const char *name, const int64_t *v,
                      size_t n)
{
    struct ir_attr *a = attr_slot(g, node, name);
    a->type = IR_ATTR_INTS;
    a->ints = ir_alloc(g, sizeof(int64_t) * (n ? n : 1));
    if (n) memcpy(a->ints, v, sizeof(int64_t) * n);
    a->n = n;
}

void ir_attr_set_string(struct ir_graph *g, uint32_t node, const char *name, const char *s)
{
    struct ir_attr *a = attr_slot(g, node, name);
    a->type = IR_ATTR_STRING;
    a->s = ir_strdup(g, s);
    a->s_len = strlen(s);
}

/* ---- attribute lookup ---- */

const struct ir_attr *ir_attr_find(const struct ir_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->nattrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t ir_attr_int(const struct ir_node *n, const char *name, int64_t dflt)
{
    const struct ir_attr *a = ir_attr_find(n, name);
    return a && a->type == IR_ATTR_INT ? a->i : dflt;
}

float ir_attr_float(const struct ir_node *n, const char *name, float dflt)
{
    const struct ir_attr *a = ir_attr_find(n, name);
    if (a && a->type == IR_ATTR_FLOAT) return a->f;
    if (a && a->type == IR_ATTR_INT) return (float)a->i;
    return dflt;
}

const char *ir_attr_string(const struct ir_node *n, const char *name, const char *dflt)
{
    const struct ir_attr *a = ir_attr_find(n, name);
    return a && a->type == IR_ATTR_STRING ? a->s : dflt;
}

const int64_t *ir_attr_ints(const struct ir_node *n, const char *name, size_t *count)
{
    const struct ir_attr *a = ir_attr_find(n, name);
    if (a && a->type == IR_ATTR_INTS) {
        *count = a->n;
        return a->ints;
    }
    *count = 0;
    return NULL;
}

const float *ir_attr_floats(const struct ir_node *n, const char *name, size_t *count)
{
    const struct ir_attr *a = ir_attr_find(n, name);
    if (a && a->type == IR_ATTR_FLOATS) {
        *count = a->n;
        return a->floats;
    }
    *count = 0;
    return NULL;
}

/* ---- rewriting ---- */

void ir_replace_uses(struct ir_graph *g, uint32_t from, uint32_t to)
{
    if (from == to) return;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] == from) {
                n->inputs[k] = to;
                g->values[from].nuses--;
                g->values[to].nuses++;
            }
    }
    for (uint32_t k = 0; k < g->noutputs; k++)
        if (g->outputs[k] == from) {
            /* The graph output keeps its name: the value `to` takes over the output role.
             * Callers that replace a graph output must make sure `to` is not also an input. */
            g->outputs[k] = to;
            g->values[from].nuses--;
            g->values[from].is_output = false;
            g->values[to].nuses++;
            g->values[to].is_output = true;
        }
}

void ir_node_erase(struct ir_graph *g, uint32_t node)
{
    struct ir_node *n = &g->nodes[node];
    if (n->dead) return;
    n->dead = true;
    for (uint32_t k = 0; k < n->ninputs; k++)
        if (n->inputs[k] != IR_NONE) g->values[n->inputs[k]].nuses--;
    for (uint32_t k = 0; k < n->noutputs; k++)
        if (n->outputs[k] != IR_NONE && g->values[n->outputs[k]].producer == node)
            g->values[n->outputs[k]].producer = IR_NONE;
}

void ir_recount(struct ir_graph *g)
{
    for (uint32_t v = 0; v < g->nvalues; v++) {
        g->values[v].nuses = 0;
        g->values[v].producer = IR_NONE;
    }
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->ninputs; k++)
            if (n->inputs[k] != IR_NONE) g->values[n->inputs[k]].nuses++;
        for (uint32_t k = 0; k < n->noutputs; k++)
            if (n->outputs[k] != IR_NONE) g->values[n->outputs[k]].producer = i;
    }
    for (uint32_t k = 0; k < g->noutputs; k++) g->values[g->outputs[k]].nuses++;
}

void ir_toposort(struct ir_graph *g)
{
    /* Kahn's algorithm, stable: repeatedly take the earliest ready node in current order. */
    uint32_t n = g->nnodes;
    ir_recount(g);
    uint32_t *pending = calloc(n ? n : 1, sizeof *pending);
    uint32_t *order = malloc(sizeof *order * (n ? n : 1));
    bool *done = calloc(n ? n : 1, 1);
    if (!pending || !order || !done) ir_die("out of memory");
    /* Consumers list per value (CSR). */
    uint32_t *cstart = calloc(g->nvalues + 1, sizeof *cstart);
    if (!cstart) ir_die("out of memory");
    for (uint32_t i = 0; i < n; i++) {
        struct ir_node *nd = &g->nodes[i];
        if (nd->dead) continue;
        for (uint32_t k = 0; k < nd->ninputs; k++) {
            uint32_t v = nd->inputs[k];
            if (v == IR_NONE) continue;
            if (g->values[v].producer != IR_NONE) {
                pending[i]++;
                cstart[v + 1]++;
            }
        }
    }
    for (uint32_t v = 0; v < g->nvalues; v++) cstart[v + 1] += cstart[v];
    uint32_t *cons = malloc(sizeof *cons * (cstart[g->nvalues] ? cstart[g->nvalues] : 1));
    uint32_t *fill = calloc(g->nvalues, sizeof *fill);
    if (!cons || !fill) ir_die("out of memory");
    for (uint32_t i = 0; i < n; i++) {
        struct ir_node *nd = &g->nodes[i];
        if (nd->dead) continue;
        for (uint32_t k = 0; k < nd->ninputs; k++) {
            uint32_t v = nd->inputs[k];
            if (v == IR_NONE || g->values[v].producer == IR_NONE) continue;
            cons[cstart[v] + fill[v]++] = i;
        }
    }
    /* Min-heap on original index keeps the order stable. */
    uint32_t *heap = malloc(sizeof *heap * (n ? n : 1));
    uint32_t hn = 0, no = 0;
#define HPUSH(x)                                                                  \
    do {                                                                          \
        uint32_t _i = hn++;                                                       \
        heap[_i] = (x);                                                           \
        while (_i && heap[(_i - 1) / 2] > heap[_i]) {                             \
            uint32_t _t = heap[_i]; heap[_i] = heap[(_i - 1) / 2];                \
            heap[(_i - 1) / 2] = _t; _i = (_i - 1) / 2;                           \
        }                                                                         \
    } while (0)
    for (uint32_t i = 0; i < n; i++)
        if (!g->nodes[i].dead && pending[i] == 0) HPUSH(i);
    while (hn) {
        uint32_t top = heap[0];
        heap[0] = heap[--hn];
        for (uint32_t i = 0;;) {
            uint32_t l = 2 * i + 1, r = l + 1, m = i;
            if (l < hn && heap[l] < heap[m]) m = l;
            if (r < hn && heap[r] < heap[m]) m = r;
            if (m == i) break;
            uint32_t t = heap[i]; heap[i] = heap[m]; heap[m] = t;
            i = m;
        }
        order[no++] = top;
        done[top] = true;
        struct ir_node *nd = &g->nodes[top];
        for (uint32_t k = 0; k < nd->noutputs; k++) {
            uint32_t v = nd->outputs[k];
            if (v == IR_NONE) continue;
            for (uint32_t c = cstart[v]; c < cstart[v + 1]; c++)
                if (--pending[cons[c]] == 0) HPUSH(cons[c]);
        }
    }
#undef HPUSH
    uint32_t live = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!g->nodes[i].dead) live++;
    if (no != live) {
        for (uint32_t i = 0; i < n; i++)
            if (!g->nodes[i].dead && !done[i])
                ir_fatal_node(g, &g->nodes[i], "the graph has a cycle through this node");
    }
    struct ir_node *nn = malloc(sizeof *nn * (no ? no : 1));
    if (!nn) ir_die("out of memory");
    for (uint32_t i = 0; i < no; i++) nn[i] = g->nodes[order[i]];
    free(g->nodes);
    g->nodes = nn;
    g->nnodes = no;
    g->cap_nodes = no ? no : 1;
    free(pending); free(order); free(done); free(cstart); free(cons); free(fill); free(heap);
    ir_recount(g);
}

const char *ir_dims_str(const struct ir_value *v, char *buf, size_t cap)
{
    size_t o = 0;
    if (v->rank < 0) {
        snprintf(buf, cap, "[?]");
        return buf;
    }
    o += (size_t)snprintf(buf + o, cap - o, "[");
    for (int i = 0; i < v->rank && o < cap; i++) {
        if (v->dim_param[i] && !v->dims_known)
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "," : "", v->dim_param[i]);
        else
            o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? "," : "", (long long)v->dims[i]);
    }
    if (o < cap) snprintf(buf + o, cap - o, "]");
    return buf;
}
