/* fuse.c — helpers shared by the fusion passes: legality, constants, rewriting, statistics. */
#include "passes/fuse/fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_util.h"

#define MAX_PASS_STATS 32
#define MAX_REASONS 8

struct reason_count {
    const char *reason; /* static string */
    uint32_t count;
};

struct pass_stat {
    const char *pass;
    uint32_t applied, rejected;
    struct reason_count reasons[MAX_REASONS];
};

static struct pass_stat stats[MAX_PASS_STATS];
static int nstats;

static struct pass_stat *stat_for(const char *pass)
{
    for (int i = 0; i < nstats; i++)
        if (strcmp(stats[i].pass, pass) == 0) return &stats[i];
    IR_ASSERT(nstats < MAX_PASS_STATS);
    stats[nstats].pass = pass;
    return &stats[nstats++];
}

void fuse_note(const char *pass, bool applied, const char *reason)
{
    struct pass_stat *s = stat_for(pass);
    if (applied) {
        s->applied++;
        return;
    }
    s->rejected++;
    for (int i = 0; i < MAX_REASONS; i++) {
        if (!s->reasons[i].reason) s->reasons[i].reason = reason ? reason : "?";
        if (strcmp(s->reasons[i].reason, reason ? reason : "?") == 0) {
            s->reasons[i].count++;
            return;
        }
    }
}

void fuse_stats_register(const char *pass)
{
    stat_for(pass);
}

void fuse_stats_print(FILE *f)
{
    for (int i = 0; i < nstats; i++) {
        fprintf(f, "fusion %-16s applied %4u, rejected %4u", stats[i].pass, stats[i].applied,
                stats[i].rejected);
        for (int r = 0; r < MAX_REASONS && stats[i].reasons[r].reason; r++)
            fprintf(f, "%s%u x %s", r ? "; " : " (", stats[i].reasons[r].count, stats[i].reasons[r].reason);
        fputs(stats[i].rejected ? ")\n" : "\n", f);
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 32) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

void fuse_stats_json(FILE *f)
{
    fputs("[", f);
    for (int i = 0; i < nstats; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_str(f, stats[i].pass);
        fprintf(f, ", \"applied\": %u, \"rejected\": %u, \"reasons\": {", stats[i].applied, stats[i].rejected);
        for (int r = 0; r < MAX_REASONS && stats[i].reasons[r].reason; r++) {
            fputs(r ? ", " : "", f);
            json_str(f, stats[i].reasons[r].reason);
            fprintf(f, ": %u", stats[i].reasons[r].count);
        }
        fputs("}}", f);
    }
    fputs(nstats ? "\n  ]" : "]", f);
}

uint32_t fuse_producer(const struct ir_graph *g, uint32_t v, enum ir_op op)
{
    if (v == IR_NONE) return IR_NONE;
    uint32_t p = g->values[v].producer;
    if (p == IR_NONE || g->nodes[p].dead) return IR_NONE;
    if (op != IR_OP_UNKNOWN && g->nodes[p].op != op) return IR_NONE;
    return p;
}

int fuse_users(const struct ir_graph *g, uint32_t v, uint32_t *out, int max)
{
    int k = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (uint32_t j = 0; j < n->ninputs; j++)
            if (n->inputs[j] == v) {
                if (k < max) out[k] = i;
                k++;
                break;
            }
    }
    return k;
}

uint32_t fuse_sole_user(const struct ir_graph *g, uint32_t v)
{
    if (v == IR_NONE || g->values[v].nuses != 1 || g->values[v].is_output) return IR_NONE;
    uint32_t u;
    return fuse_users(g, v, &u, 1) == 1 ? u : IR_NONE;
}

uint32_t fuse_other_input(const struct ir_node *n, uint32_t v)
{
    if (n->ninputs != 2) return IR_NONE;
    if (n->inputs[0] == v && n->inputs[1] != v) return n->inputs[1];
    if (n->inputs[1] == v && n->inputs[0] != v) return n->inputs[0];
    return IR_NONE;
}

bool fuse_same_shape(const struct ir_value *a, const struct ir_value *b)
{
    if (a->rank != b->rank) return false;
    for (int k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

bool fuse_chain_ok(const struct ir_graph *g, const uint32_t *inner, int ninner, const char **why)
{
    for (int i = 0; i < ninner; i++) {
        const struct ir_value *v = &g->values[inner[i]];
        if (v->is_output) {
            *why = "an intermediate is a graph output";
            return false;
        }
        if (v->nuses != 1) {
            *why = "an intermediate has more than one use";
            return false;
        }
    }
    return true;
}

bool fuse_const_scalar(const struct ir_graph *g, uint32_t v, double *out)
{
    if (!ir_is_const(g, v)) return false;
    const struct ir_value *val = &g->values[v];
    if (val->dtype != IR_F32 && val->dtype != IR_F64 && val->dtype != IR_F16) return false;
    int64_t n = ir_numel(g, v);
    if (n < 1) return false;
    double x = ir_const_f64(g, v, 0);
    for (int64_t i = 1; i < n; i++) {
        double y = ir_const_f64(g, v, i);
        if (!(y == x || (isnan(x) && isnan(y)))) return false;
    }
    *out = x;
    return true;
}

uint32_t fuse_replace(struct ir_graph *g, enum ir_op op, const uint32_t *old, int nold,
                      const uint32_t *inputs, uint32_t ninputs, const uint32_t *outputs,
                      uint32_t noutputs)
{
    IR_ASSERT(nold > 0);
    const char *name = g->nodes[old[nold - 1]].name;
    int32_t *from = ir_alloc(g, sizeof(int32_t) * (size_t)nold);
    int32_t idx = g->nodes[old[nold - 1]].onnx_index;
    uint32_t nf = 0;
    for (int i = 0; i < nold; i++) {
        const struct ir_node *o = &g->nodes[old[i]];
        if (o->fused_from)
            for (uint32_t k = 0; k < o->nfused && nf < (uint32_t)nold; k++) from[nf++] = o->fused_from[k];
        else if (nf < (uint32_t)nold)
            from[nf++] = o->onnx_index;
    }
    for (int i = 0; i < nold; i++) ir_node_erase(g, old[i]);
    uint32_t id = ir_node_add(g, op, name, ir_op_name(op), inputs, ninputs, outputs, noutputs);
    g->nodes[id].onnx_index = idx;
    g->nodes[id].fused_from = from;
    g->nodes[id].nfused = nf;
    return id;
}

/* First reduced axis if ReduceMean node r reduces exactly the trailing axes a..rank-1 with
 * keepdims=1; -1 otherwise. */
int fuse_trailing_axes(const struct ir_graph *g, const struct ir_node *r)
{
    int rank = g->values[r->inputs[0]].rank;
    uint32_t ax = ir_input(r, 1);
    if (ir_attr_int(r, "keepdims", 1) != 1 || !ir_is_const(g, ax) || rank < 1) return -1;
    int64_t n = ir_numel(g, ax);
    if (n < 1 || n > rank) return -1;
    bool seen[IR_MAX_RANK] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ir_const_i64(g, ax, i);
        if (a < 0) a += rank;
        if (a < 0 || a >= rank || seen[a]) return -1;
        seen[a] = true;
    }
    int first = rank - (int)n;
    for (int a = first; a < rank; a++)
        if (!seen[a]) return -1;
    return first;
}

int fuse_norm_axis(const struct ir_graph *g, const char *pass, const struct ir_node *r, uint32_t x)
{
    int axis = fuse_trailing_axes(g, r);
    if (axis < 0) {
        fuse_note(pass, false, "ReduceMean over axes other than the trailing ones");
        return -1;
    }
    if (g->values[x].dtype != IR_F32) {
        fuse_note(pass, false, "not float32");
        return -1;
    }
    return axis;
}

/* p broadcasts as a trailing suffix of x's dims[axis:] (leading 1s allowed), dtype f32. */
bool fuse_suffix_param(const struct ir_graph *g, uint32_t p, const struct ir_value *x, int axis)
{
    const struct ir_value *v = &g->values[p];
    if (v->dtype != IR_F32 || !v->dims_known) return false;
    int lead = 0;
    while (lead < v->rank && v->dims[lead] == 1) lead++;
    int r = v->rank - lead;
    if (r > x->rank - axis) return false;
    for (int k = 0; k < r; k++)
        if (v->dims[v->rank - 1 - k] != x->dims[x->rank - 1 - k]) return false;
    return true;
}

/* A new float32 constant named `name` of dims[0..rank) with every element `fill`. */
uint32_t fuse_const_fill(struct ir_graph *g, const char *name, int rank, const int64_t *dims,
                         float fill)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= dims[k];
    float *d = ir_alloc(g, sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) d[i] = fill;
    return ir_const_add(g, name, IR_F32, rank, dims, d, sizeof(float) * (size_t)n);
}

uint32_t fuse_norm_param(const struct ir_graph *g, uint32_t node, enum ir_op op, uint32_t v,
                         const struct ir_value *x, int axis)
{
    if (node == IR_NONE || g->nodes[node].op != op) return IR_NONE;
    uint32_t p = fuse_other_input(&g->nodes[node], v);
    if (p == IR_NONE || !fuse_suffix_param(g, p, x, axis) ||
        !fuse_same_shape(&g->values[g->nodes[node].outputs[0]], x))
        return IR_NONE;
    return p;
}

/* Which half of z's last axis (width 2F) Slice node s takes: 0 [0, F), 1 [F, 2F), -1 other. */
static int slice_half(const struct ir_graph *g, uint32_t s, uint32_t z, int64_t F)
{
    const struct ir_node *n = &g->nodes[s];
    if (n->op != IR_OP_SLICE || n->inputs[0] != z) return -1;
    for (uint32_t k = 1; k < n->ninputs; k++)
        if (n->inputs[k] != IR_NONE && !ir_is_const(g, n->inputs[k])) return -1;
    const struct ir_value *zv = &g->values[z];
    int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], od[IR_MAX_RANK];
    ref_slice_params(g, n, zv->dims, zv->rank, st, sp, od);
    for (int a = 0; a < zv->rank - 1; a++)
        if (od[a] != zv->dims[a]) return -1;
    int l = zv->rank - 1;
    if (sp[l] != 1 || od[l] != F) return -1;
    return st[l] == 0 ? 0 : (st[l] == F ? 1 : -1);
}

/* Split node s cuts z's last axis into two outputs of F. */
static bool split_halves(const struct ir_graph *g, uint32_t s, uint32_t z, int64_t F)
{
    const struct ir_node *n = &g->nodes[s];
    if (n->op != IR_OP_SPLIT || n->inputs[0] != z || n->noutputs != 2) return false;
    const struct ir_value *zv = &g->values[z];
    for (int k = 0; k < 2; k++) {
        const struct ir_value *o = &g->values[n->outputs[k]];
        if (o->rank != zv->rank || o->dims[o->rank - 1] != F) return false;
    }
    return true;
}

bool fuse_halves(const struct ir_graph *g, uint32_t z, int64_t F, bool exclusive, uint32_t h[2],
                 uint32_t nodes[2], int *nn)
{
    uint32_t u[8];
    int nu = fuse_users(g, z, u, 8);
    const struct ir_value *zv = &g->values[z];
    if (zv->rank < 1 || zv->dims[zv->rank - 1] != 2 * F) return false;
    if (exclusive && (zv->is_output || nu > 2)) return false;
    if (nu > 8) nu = 8;
    int sl[2] = {-1, -1}; /* the users taking half 0 / half 1 by a Slice */
    for (int i = 0; i < nu; i++) {
        if (split_halves(g, u[i], z, F) && (!exclusive || (nu == 1 && zv->nuses == 1))) {
            h[0] = g->nodes[u[i]].outputs[0], h[1] = g->nodes[u[i]].outputs[1];
            nodes[0] = u[i], *nn = 1;
            return true;
        }
        int half = slice_half(g, u[i], z, F);
        if (half >= 0 && sl[half] < 0) sl[half] = i;
    }
    if (sl[0] < 0 || sl[1] < 0 || (exclusive && (nu != 2 || zv->nuses != 2))) return false;
    for (int k = 0; k < 2; k++) {
        h[k] = g->nodes[u[sl[k]]].outputs[0];
        nodes[k] = u[sl[k]];
    }
    *nn = 2;
    return true;
}
