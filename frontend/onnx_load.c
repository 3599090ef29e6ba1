/* onnx_load.c — reads an ONNX ModelProto file and builds the IR graph.
 *
 * Steps: mmap the file, SHA-256 it (g->model_hash), unpack it with protobuf-c (the top-level
 * graph's initializers one at a time, their file pages dropped once copied: unpack_model), copy
 * what the IR needs into the graph's arena, free the unpacked message. No Onnx__* type outlives
 * onnx_load().
 *
 * What becomes what:
 *   opset_import      the default domain ("" or "ai.onnx") version -> g->opset. Other imported
 *                     domains are only quoted in errors: a node in any other domain
 *                     (com.microsoft, ai.onnx.ml, ...) is a fatal "unsupported domain" error.
 *   initializer       constant values (is_initializer). An initializer whose name is also a graph
 *                     input is its default value (ONNX IR >= 4): onnx2cl compiles it in as a
 *                     constant and does NOT make it a graph input.
 *   input             graph inputs (tensor types only), in file order; dims from dim_value, symbolic
 *                     dims keep their dim_param; a dim with neither, or with dim_value -1 (some
 *                     exporters write that for "dynamic"), gets the unique symbolic name
 *                     "?<input>[<axis>]"; a missing shape gives rank -1 (unknown). A dim_value 0
 *                     stays 0 (an empty tensor) unless --shape binds it (specialize_shapes.c).
 *   node              one IR node each (op from ops.def via ir_op_lookup), with its provenance
 *                     (name, op_type, onnx_index) and every attribute copied (TENSOR attributes
 *                     become constant values referenced by attr.tensor). Constant nodes become
 *                     constant values directly (no Constant node in the IR), keeping the output
 *                     name. Then normalize.c rewrites older attribute forms (see its banner).
 *   output            graph outputs by name (is_output, +1 use each).
 *   value_info        read only as static-shape hints for normalization (GroupNormalization-18).
 *
 * Refused (fatal, located): non-ONNX/truncated/empty files, a default-domain opset newer than
 * O2C_NEWEST_OPSET, nodes of other domains and op types not in ops.def (every such node of the
 * model, subgraphs included, listed in one message by check_ops before anything is imported), subgraph attributes (If/Loop/Scan), sparse tensors, string tensors, attribute
 * references (ref_attr_name, only valid in functions), non-tensor graph inputs, a value produced
 * twice, a value read but produced by nothing, a graph output produced by nothing, input counts
 * outside ops.def's [MIN_IN, MAX_IN]. Nodes that are not in topological order in the file are
 * sorted (ir_toposort), which also reports cycles.
 */
#include "onnx_load.h"

#include "frontend_internal.h"
#include "runtime/sha256.h" /* the model hash */

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ---------------------------------------------------------------------------- */

static bool is_default_domain(const char *d)
{
    return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

static bool value_defined(const struct ir_graph *g, uint32_t v)
{
    const struct ir_value *x = &g->values[v];
    return x->producer != IR_NONE || x->is_input || x->data != NULL;
}

/* Version of `domain` in the model's opset_import, -1 if not imported. */
static int64_t domain_version(const Onnx__ModelProto *m, const char *domain)
{
    int64_t best = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        bool match = is_default_domain(domain) ? is_default_domain(o->domain)
                                               : (o->domain && strcmp(o->domain, domain) == 0);
        if (match && o->has_version && o->version > best) best = o->version;
    }
    return best;
}

/* ---- subgraph scopes ---------------------------------------------------------------------------- */

/* The value named `name` as seen from the current scope (innermost first), IR_NONE if none. */
static uint32_t fe_find(const struct fe_ctx *c, const char *name)
{
    for (const struct fe_scope *s = c->scope; s; s = s->parent)
        for (uint32_t i = s->n; i-- > 0;)
            if (strcmp(s->names[i], name) == 0) return s->vids[i];
    return ir_value_find(c->g, name);
}

/* The value named `name` in the innermost scope only (IR_NONE if not there); at the main graph
 * the same as ir_value_find. */
static uint32_t fe_find_local(const struct fe_ctx *c, const char *name)
{
    if (!c->scope) return ir_value_find(c->g, name);
    const struct fe_scope *s = c->scope;
    for (uint32_t i = s->n; i-- > 0;)
        if (strcmp(s->names[i], name) == 0) return s->vids[i];
    return IR_NONE;
}

/* A new, undefined value for ONNX name `name` in the current scope. */
static uint32_t fe_new_value(struct fe_ctx *c, const char *name)
{
    struct ir_graph *g = c->g;
    struct fe_scope *s = c->scope;
    if (!s) return ir_value_add(g, name, IR_UNDEFINED, -1, NULL);
    uint32_t v = ir_value_add(g, ir_name_unique(g, ir_sprintf(g, "%s%s", s->prefix, name)), IR_UNDEFINED,
                              -1, NULL);
    if (s->n == s->cap) {
        uint32_t ncap = s->cap ? s->cap * 2 : 16;
        const char **nn = ir_alloc(g, ncap * sizeof *nn);
        uint32_t *nv = ir_alloc(g, ncap * sizeof *nv);
        for (uint32_t i = 0; i < s->n; i++) nn[i] = s->names[i], nv[i] = s->vids[i];
        s->names = nn;
        s->vids = nv;
        s->cap = ncap;
    }
    s->names[s->n] = ir_strdup(g, name);
    s->vids[s->n++] = v;
    return v;
}

/* Makes `name` a constant value: a new one, or a placeholder already read by an earlier node
 * (file not topologically sorted) turned into the constant. */
static uint32_t const_define(struct fe_ctx *c, const struct ir_node *where, const char *name,
                             enum ir_dtype dt, int rank, const int64_t *dims, const void *data,
                             size_t nbytes)
{
    struct ir_graph *g = c->g;
    uint32_t v = fe_find_local(c, name);
    if (v == IR_NONE) v = fe_new_value(c, name);
    if (value_defined(g, v)) {
            if (where) ir_fatal_node(g, where, "value '%s' is produced twice", name);
        ir_fatal(g, "value '%s' is defined twice", name);
    }
    struct ir_value *x = &g->values[v];
    x->dtype = dt;
    x->rank = rank;
    for (int k = 0; k < rank; k++) x->dims[k] = dims[k], x->dim_param[k] = NULL;
    x->dims_known = true;
    x->data = data;
    x->nbytes = nbytes;
    g->values[v].is_initializer = true;
    return v;
}

/* ---- graph inputs ------------------------------------------------------------------------------ */

static void import_input(struct fe_ctx *c, const Onnx__ValueInfoProto *vi)
{
    struct ir_graph *g = c->g;
    const char *name = vi->name;
    if (!name || !*name) ir_fatal(g, "a graph input has no name");
    if (ir_value_find(g, name) != IR_NONE) ir_fatal(g, "graph input '%s' is listed twice", name);
    const Onnx__TypeProto *tp = vi->type;
    if (!tp) ir_fatal(g, "graph input '%s' has no type", name);
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        ir_fatal(g,
                 "graph input '%s' is not a tensor (sequence, map, optional and sparse inputs "
                 "are not supported)",
                 name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int32_t et = tt->has_elem_type ? tt->elem_type : 0;
    if (et == IR_STRING) ir_fatal(g, "graph input '%s': string tensors are not supported", name);
    if (et == IR_UNDEFINED || ir_dtype_size((enum ir_dtype)et) == 0 || et > IR_BF16 || et == 14 ||
        et == 15)
        ir_fatal(g, "graph input '%s': unsupported element type %d", name, (int)et);
    int rank = -1;
    int64_t dims[IR_MAX_RANK] = {0};
    const char *params[IR_MAX_RANK] = {0};
    if (tt->shape) {
        if (tt->shape->n_dim > IR_MAX_RANK)
            ir_fatal(g, "graph input '%s': rank %zu exceeds the supported maximum %d", name,
                     tt->shape->n_dim, IR_MAX_RANK);
        rank = (int)tt->shape->n_dim;
        for (int k = 0; k < rank; k++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                d->dim_value != -1) {
                if (d->dim_value < 0)
                    ir_fatal(g, "graph input '%s': negative dim %lld at axis %d", name,
                             (long long)d->dim_value, k);
                dims[k] = d->dim_value; /* 0: empty, unless --shape binds it (specialize_shapes) */
            } else { /* dim_param, no value, or dim_value -1 (some exporters' "dynamic") */
                dims[k] = -1;
                if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                    d->dim_param && *d->dim_param)
                    params[k] = ir_strdup(g, d->dim_param);
                else
                    params[k] = ir_sprintf(g, "?%s[%d]", name, k);
            }
        }
    }
    uint32_t v = ir_value_add(g, name, (enum ir_dtype)et, rank, rank >= 0 ? dims : NULL);
    struct ir_value *x = &g->values[v];
    bool known = rank >= 0;
    for (int k = 0; k < rank; k++) {
        x->dims[k] = dims[k];
        x->dim_param[k] = params[k];
        if (params[k]) known = false;
    }
    x->dims_known = known;
    x->is_input = true;
    g->inputs[g->ninputs++] = v;
}

/* ---- attributes --------------------------------------------------------------------------------- */

/* Attribute type, inferred from the filled field for IR v1 files that omit `type`. */
static int attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type) return (int)a->type;
    if (a->has_f) return IR_ATTR_FLOAT;
    if (a->has_i) return IR_ATTR_INT;
    if (a->has_s) return IR_ATTR_STRING;
    if (a->t) return IR_ATTR_TENSOR;
    if (a->g) return 5;
    if (a->n_floats) return IR_ATTR_FLOATS;
    if (a->n_ints) return IR_ATTR_INTS;
    if (a->n_strings) return IR_ATTR_STRINGS;
    if (a->n_graphs) return 10;
    return 0;
}

/* Attribute names whose type is the same in every ONNX operator that has them: a model giving
 * another type (group=1.5, strides="11", perm=1) is refused here, since the IR's typed lookups
 * (ir_attr_int, ...) would otherwise silently use the default. */
static const struct {
    const char *name;       /* attribute name */
    enum ir_attr_type type; /* its type in every operator that defines it */
} attr_types[] = {
    {"axis", IR_ATTR_INT},        {"axes", IR_ATTR_INTS},         {"group", IR_ATTR_INT},
    {"strides", IR_ATTR_INTS},    {"pads", IR_ATTR_INTS},         {"dilations", IR_ATTR_INTS},
    {"kernel_shape", IR_ATTR_INTS}, {"output_padding", IR_ATTR_INTS},
    {"output_shape", IR_ATTR_INTS}, {"perm", IR_ATTR_INTS},       {"keepdims", IR_ATTR_INT},
    {"epsilon", IR_ATTR_FLOAT},     {"auto_pad", IR_ATTR_STRING},
    {"mode", IR_ATTR_STRING},     {"num_groups", IR_ATTR_INT},    {"blocksize", IR_ATTR_INT},
    {"transA", IR_ATTR_INT},      {"transB", IR_ATTR_INT},        {"split", IR_ATTR_INTS},
    {"ceil_mode", IR_ATTR_INT},   {"count_include_pad", IR_ATTR_INT},
    {"coordinate_transformation_mode", IR_ATTR_STRING},           {"upper", IR_ATTR_INT},
    {"num_outputs", IR_ATTR_INT}, {"allowzero", IR_ATTR_INT},     {"exclusive", IR_ATTR_INT},
    {"reverse", IR_ATTR_INT},     {"select_last_index", IR_ATTR_INT},
};

static const char *attr_type_name(int t)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH",
                                        "FLOATS", "INTS", "STRINGS", "TENSORS", "GRAPHS"};
    return t >= 0 && t <= 10 ? names[t] : "?";
}

static struct ir_body *import_body(struct fe_ctx *c, const Onnx__GraphProto *gp, uint32_t owner,
                                   const char *attr);

static void copy_attrs(struct fe_ctx *c, uint32_t nid, const Onnx__NodeProto *np)
{
    struct ir_graph *g = c->g;
    const struct ir_node *n = &g->nodes[nid];
    size_t na = np->n_attribute;
    struct ir_attr *attrs = ir_alloc(g, (na ? na : 1) * sizeof *attrs);
    for (size_t i = 0; i < na; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        struct ir_attr *o = &attrs[i];
        if (!a->name || !*a->name) ir_fatal_node(g, n, "attribute #%zu has no name", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(attrs[j].name, a->name) == 0)
                ir_fatal_node(g, n, "attribute '%s' is given twice", a->name);
        if (a->ref_attr_name && *a->ref_attr_name)
            ir_fatal_node(g, n,
                          "attribute '%s' refers to '%s' (attribute references are only valid "
                          "inside functions)",
                          a->name, a->ref_attr_name);
        o->name = ir_strdup(g, a->name);
        o->tensor = IR_NONE;
        int t = attr_type(a);
        for (size_t k = 0; k < sizeof attr_types / sizeof attr_types[0]; k++)
            if (strcmp(a->name, attr_types[k].name) == 0 && t != (int)attr_types[k].type)
                ir_fatal_node(g, n, "attribute '%s' has type %s (%d), expected %s", a->name,
                              attr_type_name(t), t, attr_type_name(attr_types[k].type));
        switch (t) {
        case IR_ATTR_FLOAT: o->f = a->f; break;
        case IR_ATTR_INT: o->i = a->i; break;
        case IR_ATTR_STRING:
            o->s = ir_strndup(g, (const char *)a->s.data, a->s.len);
            o->s_len = a->s.len;
            break;
        case IR_ATTR_TENSOR: {
            if (!a->t) ir_fatal_node(g, n, "attribute '%s' (TENSOR) holds no tensor", a->name);
            enum ir_dtype dt;
            int rank;
            int64_t dims[IR_MAX_RANK];
            const void *data;
            size_t nbytes;
            const char *tn = ir_sprintf(g, "%s.%s", *n->name ? n->name : n->op_type, a->name);
            c->where = n;
            fe_tensor_data(c, a->t, tn, &dt, &rank, dims, &data, &nbytes);
            c->where = NULL;
            uint32_t v = ir_const_add(g, ir_name_unique(g, tn), dt, rank, dims, data, nbytes);
            g->values[v].is_initializer = true;
            n = &g->nodes[nid];
            o->tensor = v;
            break;
        }
        case IR_ATTR_FLOATS:
            o->n = a->n_floats;
            o->floats = ir_alloc(g, (a->n_floats ? a->n_floats : 1) * sizeof(float));
            if (a->n_floats) memcpy(o->floats, a->floats, a->n_floats * sizeof(float));
            break;
        case IR_ATTR_INTS:
            o->n = a->n_ints;
            o->ints = ir_alloc(g, (a->n_ints ? a->n_ints : 1) * sizeof(int64_t));
            if (a->n_ints) memcpy(o->ints, a->ints, a->n_ints * sizeof(int64_t));
            break;
        case IR_ATTR_STRINGS:
            o->n = a->n_strings;
            o->strings = ir_alloc(g, (a->n_strings ? a->n_strings : 1) * sizeof(char *));
            for (size_t k = 0; k < a->n_strings; k++)
                o->strings[k] = ir_strndup(g, (const char *)a->strings[k].data, a->strings[k].len);
            break;
        case 5: /* GRAPH */
            if (n->op == IR_OP_IF || n->op == IR_OP_LOOP || n->op == IR_OP_SCAN) {
                if (!a->g) ir_fatal_node(g, n, "attribute '%s' (GRAPH) holds no graph", a->name);
                o->body = import_body(c, a->g, nid, o->name);
                n = &g->nodes[nid];
                break;
            }
            /* fall through */
        case 10: /* GRAPHS */
            ir_fatal_node(g, n,
                          "attribute '%s' holds a subgraph, which only If, Loop and Scan take",
                          a->name);
        case 9: ir_fatal_node(g, n, "attribute '%s': TENSORS attributes are not supported", a->name);
        case 11:
        case 12:
            ir_fatal_node(g, n, "attribute '%s': sparse tensors are not supported", a->name);
        case 13:
        case 14:
            ir_fatal_node(g, n, "attribute '%s': TYPE_PROTO attributes are not supported", a->name);
        default:
            ir_fatal_node(g, n, "attribute '%s' has an unknown type %d", a->name, t);
        }
        o->type = (enum ir_attr_type)t;
    }
    g->nodes[nid].attrs = attrs;
    g->nodes[nid].nattrs = (uint32_t)na;
}

/* Initializers of graph gp (the main graph: where = NULL; a subgraph: where = its owner node, for
 * messages) -> constant values in the current scope. */
static void import_initializers(struct fe_ctx *c, const Onnx__GraphProto *gp, const struct ir_node *where)
{
    struct ir_graph *g = c->g;
    if (gp->n_sparse_initializer > 0) {
        const char *nm = gp->sparse_initializer[0]->values && gp->sparse_initializer[0]->values->name
                             ? gp->sparse_initializer[0]->values->name
                             : "?";
        if (where) ir_fatal_node(g, where, "sparse initializer '%s': sparse tensors are not supported", nm);
        ir_fatal(g, "sparse initializer '%s': sparse tensors are not supported", nm);
    }
    for (size_t i = 0; i < gp->n_initializer; i++) {
        Onnx__TensorProto *t = gp->initializer[i];
        char why[600] = "";
        if (!t->name || !*t->name)
            snprintf(why, sizeof why, "initializer #%zu has no name", i);
        else if (fe_find_local(c, t->name) != IR_NONE)
            snprintf(why, sizeof why, "initializer '%.500s' is listed twice", t->name);
        if (*why && where) ir_fatal_node(g, where, "%s", why);
        if (*why) ir_fatal(g, "%s", why);
        enum ir_dtype dt;
        int rank;
        int64_t dims[IR_MAX_RANK];
        const void *data;
        size_t nbytes;
        fe_tensor_data(c, t, t->name, &dt, &rank, dims, &data, &nbytes);
        uint32_t v = const_define(c, where, t->name, dt, rank, dims, data, nbytes);
        g->values[v].is_param = true;
    }
}

/* ---- subgraphs ------------------------------------------------------------------------------------ */

static void import_node(struct fe_ctx *c, const Onnx__ModelProto *m, const Onnx__NodeProto *np,
                        int32_t index, bool *forward);

static bool in_list(const uint32_t *l, uint32_t n, uint32_t v)
{
    for (uint32_t i = 0; i < n; i++)
        if (l[i] == v) return true;
    return false;
}

/* Adds v to the capture list unless it is defined in scope s (a body-local value) or absent. */
static void add_capture(struct ir_graph *g, struct ir_body *b, uint32_t *cap, const struct fe_scope *s,
                        uint32_t v)
{
    if (v == IR_NONE || in_list(s->vids, s->n, v) || in_list(b->captures, b->ncaptures, v)) return;
    if (b->ncaptures == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        uint32_t *nc = ir_alloc(g, ncap * sizeof *nc);
        for (uint32_t i = 0; i < b->ncaptures; i++) nc[i] = b->captures[i];
        b->captures = nc;
        *cap = ncap;
    }
    b->captures[b->ncaptures++] = v;
}

/* Imports subgraph attribute `attr` of node `owner` (If/Loop/Scan) as a template: its inputs
 * become placeholder values, its initializers and Constant nodes constants, its nodes are
 * imported (normalized like any node) and then moved out of g->nodes into the template. Names
 * resolve innermost scope first, then the enclosing scopes and the main graph (ONNX subgraph
 * scoping). Values read from enclosing scopes are listed in captures. */
static struct ir_body *import_body(struct fe_ctx *c, const Onnx__GraphProto *gp, uint32_t owner,
                                   const char *attr)
{
    struct ir_graph *g = c->g;
    const struct ir_node *on = &g->nodes[owner];
    int32_t index = on->onnx_index;
    struct fe_scope sc = {.parent = c->scope,
                          .prefix = ir_sprintf(g, "%s/%s/", *on->name ? on->name : on->op_type, attr)};
    c->scope = &sc;
    struct ir_body *b = ir_alloc(g, sizeof *b);
    memset(b, 0, sizeof *b);
    import_initializers(c, gp, &g->nodes[owner]);
    b->inputs = ir_alloc(g, (gp->n_input + 1) * sizeof *b->inputs);
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !*vi->name)
            ir_fatal_node(g, &g->nodes[owner], "subgraph '%s': input #%zu has no name", attr, i);
        if (fe_find_local(c, vi->name) != IR_NONE)
            ir_fatal_node(g, &g->nodes[owner], "subgraph '%s': input '%s' is defined twice", attr, vi->name);
        const Onnx__TypeProto *tp = vi->type;
        if (tp && tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
            ir_fatal_node(g, &g->nodes[owner],
                          "subgraph '%s': input '%s' is not a tensor (sequence, map and optional "
                          "values are not supported)",
                          attr, vi->name);
        uint32_t v = fe_new_value(c, vi->name);
        if (tp && tp->tensor_type && tp->tensor_type->has_elem_type)
            g->values[v].dtype = (enum ir_dtype)tp->tensor_type->elem_type;
        b->inputs[b->ninputs++] = v;
    }
    uint32_t first = g->nnodes;
    bool forward = false;
    for (size_t i = 0; i < gp->n_node; i++) import_node(c, c->model, gp->node[i], index, &forward);
    uint32_t last = g->nnodes;
    b->nnodes = last - first;
    b->nodes = ir_alloc(g, (b->nnodes + 1) * sizeof *b->nodes);
    uint32_t cap = 0;
    /* Every value a body node reads must be defined: a constant or produced value (main graph,
     * enclosing bodies, this body), a formal input of this body, or one of an enclosing body. */
    for (uint32_t i = first; i < last; i++) {
        const struct ir_node *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->ninputs; k++) {
            uint32_t v = n->inputs[k];
            if (v == IR_NONE || value_defined(g, v) || in_list(b->inputs, b->ninputs, v)) continue;
            bool outer = false;
            for (const struct fe_scope *p = sc.parent; p && !outer; p = p->parent) outer = in_list(p->vids, p->n, v);
            if (outer) continue;
            const char *nm = g->values[v].name; /* the ONNX name, not the scoped value name */
            for (uint32_t j = 0; j < sc.n; j++)
                if (sc.vids[j] == v) nm = sc.names[j];
            ir_fatal_node(g, n,
                          "input '%s' is not produced by any node of subgraph '%s' and not visible "
                          "from an enclosing graph",
                          nm, attr);
        }
    }
    for (uint32_t i = first; i < last; i++) {
        struct ir_node *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->ninputs; k++) {
            uint32_t v = n->inputs[k];
            if (v == IR_NONE) continue;
            g->values[v].nuses--;
            add_capture(g, b, &cap, &sc, v);
        }
        for (uint32_t k = 0; k < n->noutputs; k++)
            if (n->outputs[k] != IR_NONE) g->values[n->outputs[k]].producer = IR_NONE;
        b->nodes[i - first] = *n;
    }
    g->nnodes = first;
    b->outputs = ir_alloc(g, (gp->n_output + 1) * sizeof *b->outputs);
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *nm = gp->output[i]->name;
        uint32_t v = nm && *nm ? fe_find(c, nm) : IR_NONE;
        if (v == IR_NONE)
            ir_fatal_node(g, &g->nodes[owner], "subgraph '%s': output '%s' is produced by nothing", attr,
                          nm ? nm : "");
        add_capture(g, b, &cap, &sc, v);
        b->outputs[b->noutputs++] = v;
    }
    c->scope = sc.parent;
    return b;
}

/* ---- nodes ---------------------------------------------------------------------------------------- */

/* Constant node -> constant value named after its output. */
static void import_constant(struct fe_ctx *c, const Onnx__NodeProto *np, const struct ir_node *where)
{
    struct ir_graph *g = c->g;
    if (np->n_output != 1 || !np->output[0] || !*np->output[0])
        ir_fatal_node(g, where, "Constant must have exactly one output");
    if (np->n_input != 0) ir_fatal_node(g, where, "Constant takes no inputs");
    if (np->n_attribute != 1)
        ir_fatal_node(g, where, "Constant needs exactly one value attribute (has %zu attributes)",
                      np->n_attribute);
    const char *out = np->output[0];
    const Onnx__AttributeProto *a = np->attribute[0];
    const char *an = a->name ? a->name : "";
    enum ir_dtype dt;
    int rank = 0;
    int64_t dims[IR_MAX_RANK] = {0};
    const void *data;
    size_t nbytes;
    if (strcmp(an, "value") == 0) {
        if (!a->t) ir_fatal_node(g, where, "attribute 'value' holds no tensor");
        c->where = where;
        fe_tensor_data(c, a->t, out, &dt, &rank, dims, &data, &nbytes);
        c->where = NULL;
    } else if (strcmp(an, "value_float") == 0) {
        dt = IR_F32;
        nbytes = sizeof(float);
        float *p = ir_alloc(g, nbytes);
        *p = a->f;
        data = p;
    } else if (strcmp(an, "value_int") == 0) {
        dt = IR_I64;
        nbytes = sizeof(int64_t);
        int64_t *p = ir_alloc(g, nbytes);
        *p = a->i;
        data = p;
    } else if (strcmp(an, "value_floats") == 0) {
        dt = IR_F32;
        rank = 1;
        dims[0] = (int64_t)a->n_floats;
        nbytes = a->n_floats * sizeof(float);
        float *p = ir_alloc(g, nbytes ? nbytes : 1);
        if (nbytes) memcpy(p, a->floats, nbytes);
        data = p;
    } else if (strcmp(an, "value_ints") == 0) {
        dt = IR_I64;
        rank = 1;
        dims[0] = (int64_t)a->n_ints;
        nbytes = a->n_ints * sizeof(int64_t);
        int64_t *p = ir_alloc(g, nbytes ? nbytes : 1);
        if (nbytes) memcpy(p, a->ints, nbytes);
        data = p;
    } else if (strcmp(an, "value_string") == 0 || strcmp(an, "value_strings") == 0) {
        ir_fatal_node(g, where, "attribute '%s': string tensors are not supported", an);
    } else if (strcmp(an, "sparse_value") == 0) {
        ir_fatal_node(g, where, "attribute 'sparse_value': sparse tensors are not supported");
    } else {
        ir_fatal_node(g, where, "unknown Constant attribute '%s'", an);
    }
    const_define(c, where, out, dt, rank, dims, data, nbytes);
}

/* One NodeProto -> IR node (or constant). Sets *forward when it reads a not-yet-produced value. */
static void import_node(struct fe_ctx *c, const Onnx__ModelProto *m, const Onnx__NodeProto *np,
                        int32_t index, bool *forward)
{
    struct ir_graph *g = c->g;
    struct ir_node where = {0};
    /* inside a subgraph the name says where: "<If/Loop/Scan node>/<attribute>/<name or op>" */
    where.name = c->scope ? ir_sprintf(g, "%s%s", c->scope->prefix,
                                       np->name && *np->name ? np->name : (np->op_type ? np->op_type : "?"))
                          : ir_strdup(g, np->name ? np->name : "");
    where.op_type = ir_strdup(g, np->op_type ? np->op_type : "");
    where.onnx_index = index;
    if (!*where.op_type) ir_fatal_node(g, &where, "node has no op_type");
    if (!is_default_domain(np->domain)) {
        int64_t v = domain_version(m, np->domain);
        if (v < 0)
            ir_fatal_node(g, &where, "unsupported domain '%s' (not imported by the model)",
                          np->domain);
        ir_fatal_node(g, &where, "unsupported domain '%s' (opset %lld)", np->domain,
                      (long long)v);
    }
    if (g->opset < 0)
        ir_fatal_node(g, &where, "the model imports no default-domain (ai.onnx) opset");
    if (strcmp(where.op_type, "Constant") == 0) {
        import_constant(c, np, &where);
        return;
    }
    enum ir_op op = ir_op_lookup(where.op_type);
    if (op == IR_OP_UNKNOWN || (ir_op_flags(op) & IR_F_INTERNAL))
        ir_fatal_node(g, &where, "unsupported operator '%s' (domain 'ai.onnx', opset %lld)",
                      where.op_type, (long long)g->opset);

    uint32_t *ins = ir_alloc(g, (np->n_input ? np->n_input : 1) * sizeof *ins);
    for (size_t k = 0; k < np->n_input; k++) {
        const char *nm = np->input[k];
        if (!nm || !*nm) {
            ins[k] = IR_NONE;
            continue;
        }
        uint32_t v = fe_find(c, nm);
        if (v == IR_NONE) v = fe_new_value(c, nm);
        if (!value_defined(g, v) && !c->scope) *forward = true;
        ins[k] = v;
    }
    uint32_t *outs = ir_alloc(g, (np->n_output ? np->n_output : 1) * sizeof *outs);
    for (size_t k = 0; k < np->n_output; k++) {
        const char *nm = np->output[k];
        if (!nm || !*nm) {
            outs[k] = IR_NONE;
            continue;
        }
        uint32_t v = fe_find_local(c, nm);
        if (v == IR_NONE) {
            v = fe_new_value(c, nm);
        } else {
            bool again = value_defined(g, v);
            for (size_t j = 0; j < k; j++) again |= outs[j] == v;
            if (again) ir_fatal_node(g, &where, "output '%s' is already produced elsewhere", nm);
        }
        outs[k] = v;
    }
    uint32_t nid = ir_node_add(g, op, where.name, where.op_type, ins, (uint32_t)np->n_input, outs,
                               (uint32_t)np->n_output);
    g->nodes[nid].onnx_index = index;
    copy_attrs(c, nid, np);
    fe_normalize_node(c, nid);

    struct ir_node *n = &g->nodes[nid];
    while (n->ninputs > 0 && n->inputs[n->ninputs - 1] == IR_NONE) n->ninputs--;
    int lo = ir_op_min_inputs(n->op), hi = ir_op_max_inputs(n->op);
    if ((int)n->ninputs < lo || (hi != 255 && (int)n->ninputs > hi))
        ir_fatal_node(g, n, "has %u inputs; %s takes %d..%d", n->ninputs, ir_op_name(n->op), lo,
                      hi);
    /* Control flow: the outer values its subgraphs read become extra inputs (after "_nin"). */
    uint32_t ncap = 0;
    for (uint32_t a = 0; a < n->nattrs; a++)
        if (n->attrs[a].type == IR_ATTR_GRAPH) ncap += n->attrs[a].body->ncaptures;
    if (n->op == IR_OP_IF || n->op == IR_OP_LOOP || n->op == IR_OP_SCAN) {
        uint32_t nin = n->ninputs;
        uint32_t *all = ir_alloc(g, (nin + ncap + 1) * sizeof *all);
        for (uint32_t k = 0; k < nin; k++) all[k] = n->inputs[k];
        uint32_t tot = nin;
        for (uint32_t a = 0; a < n->nattrs; a++) {
            if (n->attrs[a].type != IR_ATTR_GRAPH) continue;
            const struct ir_body *b = n->attrs[a].body;
            for (uint32_t k = 0; k < b->ncaptures; k++)
                if (!in_list(all + nin, tot - nin, b->captures[k])) {
                    all[tot++] = b->captures[k];
                    g->values[b->captures[k]].nuses++;
                }
        }
        n->inputs = all;
        n->ninputs = tot;
        ir_attr_set_int(g, nid, "_nin", nin);
    }
}

/* ---- unsupported operators, all at once ----------------------------------------------------- */

/* One unsupported (domain, op_type) pair of the model. */
struct unsup_op {
    const char *domain;    /* "ai.onnx" for the default domain */
    const char *op_type;   /* as written */
    int64_t opset;         /* the model's import of that domain, -1 if it imports none */
    uint32_t count;        /* nodes using it */
    const char *names[3];  /* the first node names (scoped "<owner>/<attr>/<name>" in subgraphs) */
};

/* Adds every unsupported node of gp (and of its subgraphs) to list[*n] (at most cap pairs). */
static void collect_unsupported(struct fe_ctx *c, const Onnx__GraphProto *gp, const char *prefix,
                                struct unsup_op *list, uint32_t *n, uint32_t cap, uint32_t *total)
{
    struct ir_graph *g = c->g;
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        const char *ot = np->op_type ? np->op_type : "";
        const char *nm = np->name && *np->name ? np->name : ot;
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *at = np->attribute[a];
            const char *sub = ir_sprintf(g, "%s%s/%s/", prefix, nm, at->name ? at->name : "?");
            if (at->g) collect_unsupported(c, at->g, sub, list, n, cap, total);
            for (size_t k = 0; k < at->n_graphs; k++)
                collect_unsupported(c, at->graphs[k], sub, list, n, cap, total);
        }
        bool other = !is_default_domain(np->domain);
        if (!*ot || (!other && strcmp(ot, "Constant") == 0)) continue;
        if (!other) {
            enum ir_op op = ir_op_lookup(ot);
            if (op != IR_OP_UNKNOWN && !(ir_op_flags(op) & IR_F_INTERNAL)) continue;
        }
        const char *dom = other ? np->domain : "ai.onnx";
        (*total)++;
        uint32_t k = 0;
        while (k < *n && !(strcmp(list[k].domain, dom) == 0 && strcmp(list[k].op_type, ot) == 0)) k++;
        if (k == *n) {
            if (*n == cap) continue;
            list[k] = (struct unsup_op){.domain = dom, .op_type = ot,
                                        .opset = domain_version(c->model, other ? np->domain : "")};
            (*n)++;
        }
        if (list[k].count < 3) list[k].names[list[k].count] = ir_sprintf(g, "%s%s", prefix, nm);
        list[k].count++;
    }
}

/* A model with more than one node of an unsupported op or domain is refused with one message
 * listing each (op, domain, opset), its node count and first node names; a single such node is
 * left to import_node, whose message is located at it. */
static void check_ops(struct fe_ctx *c, const Onnx__GraphProto *gp)
{
    enum { CAP = 64 };
    struct unsup_op list[CAP];
    uint32_t n = 0, total = 0;
    collect_unsupported(c, gp, "", list, &n, CAP, &total);
    if (total <= 1) return;
    size_t cap = 256 + (size_t)n * 1200, o = 0;
    char *msg = ir_alloc(c->g, cap);
    o += (size_t)snprintf(msg + o, cap - o, "%u nodes use %u operator%s onnx2cl does not support: ", total,
                          n, n == 1 ? "" : "s");
    for (uint32_t k = 0; k < n && o < cap; k++) {
        const struct unsup_op *u = &list[k];
        o += (size_t)snprintf(msg + o, cap - o, "%s%s (domain '%s', opset %lld): %u node%s ", k ? "; " : "", u->op_type,
                              u->domain, (long long)u->opset, u->count, u->count == 1 ? "" : "s");
        for (uint32_t j = 0; j < u->count && j < 3 && o < cap; j++)
            o += (size_t)snprintf(msg + o, cap - o, "%s'%.200s'", j ? ", " : "(", u->names[j]);
        if (o < cap) o += (size_t)snprintf(msg + o, cap - o, "%s)", u->count > 3 ? ", ..." : "");
    }
    ir_fatal(c->g, "%s", msg);
}

/* ---- whole model ----------------------------------------------------------------------------------- */

static void read_hints(struct fe_ctx *c, const Onnx__GraphProto *gp)
{
    c->hints = ir_alloc(c->g, (gp->n_value_info + 1) * sizeof *c->hints);
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        if (!vi->name || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !vi->type->tensor_type || !vi->type->tensor_type->shape ||
            vi->type->tensor_type->shape->n_dim > IR_MAX_RANK)
            continue;
        const Onnx__TensorShapeProto *s = vi->type->tensor_type->shape;
        struct fe_shape_hint *h = &c->hints[c->nhints++];
        h->name = ir_strdup(c->g, vi->name);
        h->rank = (int)s->n_dim;
        for (size_t k = 0; k < s->n_dim; k++)
            h->dims[k] = s->dim[k]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                             ? s->dim[k]->dim_value
                             : -1;
    }
}

static void build_graph(struct fe_ctx *c, const Onnx__ModelProto *m)
{
    struct ir_graph *g = c->g;
    const Onnx__GraphProto *gp = m->graph;
    g->opset = domain_version(m, "");
    c->model = m;
    if (g->opset > ONNX2CL_NEWEST_OPSET)
        ir_fatal(g, "opset %lld of the default domain (ai.onnx) is newer than the newest onnx2cl knows (%d)",
                 (long long)g->opset, ONNX2CL_NEWEST_OPSET);
    g->graph_name = ir_strdup(g, gp->name ? gp->name : "");
    g->producer = ir_sprintf(g, "%s%s%s", m->producer_name ? m->producer_name : "",
                             m->producer_version && *m->producer_version ? " " : "",
                             m->producer_version ? m->producer_version : "");
    read_hints(c, gp);
    check_ops(c, gp);

    import_initializers(c, gp, NULL);

    g->inputs = ir_alloc(g, (gp->n_input + 1) * sizeof *g->inputs);
    g->ninputs = 0;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        uint32_t v = vi->name ? ir_value_find(g, vi->name) : IR_NONE;
        if (v != IR_NONE && g->values[v].is_initializer) continue; /* default value: a constant */
        import_input(c, vi);
    }

    bool forward = false;
    if (gp->n_node > INT32_MAX) ir_fatal(g, "too many nodes (%zu)", gp->n_node);
    for (size_t i = 0; i < gp->n_node; i++) import_node(c, m, gp->node[i], (int32_t)i, &forward);

    /* Every value read must be produced by something. */
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct ir_node *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->ninputs; k++) {
            uint32_t v = n->inputs[k];
            if (v != IR_NONE && !value_defined(g, v))
                ir_fatal_node(g, n,
                              "input '%s' is not produced by any node and is not a graph input or "
                              "initializer",
                              g->values[v].name);
        }
    }

    g->outputs = ir_alloc(g, (gp->n_output + 1) * sizeof *g->outputs);
    g->noutputs = 0;
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *nm = gp->output[i]->name;
        if (!nm || !*nm) ir_fatal(g, "graph output #%zu has no name", i);
        uint32_t v = ir_value_find(g, nm);
        if (v == IR_NONE || !value_defined(g, v))
            ir_fatal(g,
                     "graph output '%s' is not produced by any node and is not an input or "
                     "initializer",
                     nm);
        for (uint32_t j = 0; j < g->noutputs; j++)
            if (g->outputs[j] == v) ir_fatal(g, "graph output '%s' is listed twice", nm);
        g->values[v].is_output = true;
        g->values[v].nuses++;
        g->outputs[g->noutputs++] = v;
    }
    if (g->noutputs == 0) ir_fatal(g, "the graph has no outputs");
    if (forward) ir_toposort(g);
}

/* protobuf-c unpacks nested messages recursively with no depth limit: a small file nesting
 * TypeProto.sequence_type (or subgraphs) 100000 deep overflows the stack. wire_nesting_ok() walks
 * the wire format with the schema's descriptors and refuses nesting deeper than MAX_NESTING before
 * anything is unpacked (ONNX models nest a handful of levels). Its own recursion is bounded by
 * that limit; malformed wire data is left for protobuf-c to reject. */
#define MAX_NESTING 160

static bool wire_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *i < n; shift += 7) {
        uint8_t b = p[(*i)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

static bool wire_nesting_ok(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n,
                            int depth)
{
    if (depth > MAX_NESTING) return false;
    size_t i = 0;
    while (i < n) {
        uint64_t key, v;
        if (!wire_varint(p, n, &i, &key)) return true;
        switch (key & 7) {
        case 0:
            if (!wire_varint(p, n, &i, &v)) return true;
            break;
        case 1:
            if (n - i < 8) return true;
            i += 8;
            break;
        case 5:
            if (n - i < 4) return true;
            i += 4;
            break;
        case 2: {
            if (!wire_varint(p, n, &i, &v) || v > n - i) return true;
            const ProtobufCFieldDescriptor *f =
                (key >> 3) <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3))
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                !wire_nesting_ok(f->descriptor, p + i, (size_t)v, depth + 1))
                return false;
            i += (size_t)v;
            break;
        }
        default: return true; /* groups / invalid wire types: protobuf-c refuses them */
        }
    }
    return true;
}

/* The load in progress (for onnx_load_abandon after a fatal-error hook longjmps out). */
static struct ir_graph *inflight_graph;
static Onnx__ModelProto *inflight_msg;

/* ---- unpacking with the initializers one at a time ----
 * protobuf-c copies every bytes field it unpacks: unpacking a model with its weights inside
 * (raw_data) at once holds the mapped file's pages and a copy of every weight together (2x the
 * weights). unpack_model() unpacks the ModelProto without the top-level graph's initializers
 * (a copy of the wire bytes with them cut out), then each initializer alone, dropping the
 * file's pages of each from the process (MADV_DONTNEED on the read-only mapping: clean pages,
 * still in the page cache) once it is copied, so the weights are resident once. Wire data it does
 * not expect (no graph field or two, a group, a truncated field) goes to the plain unpack,
 * which reports it as before. */

/* Skips the field of key at p[*i] (wire types 0, 1, 2, 5); false when malformed. */
static bool wire_skip(const uint8_t *p, size_t n, size_t *i, uint64_t key)
{
    uint64_t v;
    switch (key & 7) {
    case 0: return wire_varint(p, n, i, &v);
    case 1: if (n - *i < 8) return false; *i += 8; return true;
    case 5: if (n - *i < 4) return false; *i += 4; return true;
    case 2:
        if (!wire_varint(p, n, i, &v) || v > n - *i) return false;
        *i += (size_t)v;
        return true;
    default: return false;
    }
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t k = 0;
    do {
        out[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return k;
}

struct wire_range {
    size_t start, end; /* [start, end): a field's bytes (tag included) or a message's payload */
};

static Onnx__ModelProto *unpack_model(const uint8_t *p, size_t n, bool drop_pages)
{
    /* the graph field (7, length-delimited), once */
    size_t i = 0, gtag = 0, gs = 0, ge = 0;
    int ngraph = 0;
    while (i < n) {
        size_t at = i;
        uint64_t key, len;
        if (!wire_varint(p, n, &i, &key)) return onnx__model_proto__unpack(NULL, n, p);
        if (key == ((7u << 3) | 2)) {
            if (!wire_varint(p, n, &i, &len) || len > n - i)
                return onnx__model_proto__unpack(NULL, n, p);
            gtag = at, gs = i, ge = i + (size_t)len, i = ge;
            ngraph++;
        } else if (!wire_skip(p, n, &i, key)) {
            return onnx__model_proto__unpack(NULL, n, p);
        }
    }
    if (ngraph != 1) return onnx__model_proto__unpack(NULL, n, p);
    /* the graph's initializer fields (5, length-delimited) */
    struct wire_range *ini = NULL;
    size_t nini = 0, cap = 0, kept = 0;
    for (i = gs; i < ge;) {
        size_t at = i;
        uint64_t key, len;
        if (!wire_varint(p, ge, &i, &key)) break;
        if (key == ((5u << 3) | 2)) {
            if (!wire_varint(p, ge, &i, &len) || len > ge - i) break;
            if (nini == cap) {
                cap = cap ? 2 * cap : 256;
                struct wire_range *q = realloc(ini, cap * sizeof *q);
                if (!q) ir_die("out of memory");
                ini = q;
            }
            ini[nini++] = (struct wire_range){at, i + (size_t)len};
            i += (size_t)len;
        } else if (!wire_skip(p, ge, &i, key)) {
            break;
        }
    }
    if (i != ge || nini == 0) {
        free(ini);
        return onnx__model_proto__unpack(NULL, n, p);
    }
    for (size_t k = 0; k < nini; k++) kept += ini[k].end - ini[k].start;
    /* the model without them: [0, gtag) + graph tag + new length + graph pieces + [ge, n) */
    const size_t glen = (ge - gs) - kept;
    uint8_t *r = malloc(n - kept + 16);
    if (!r) ir_die("out of memory");
    size_t o = 0;
    memcpy(r, p, gtag);
    o = gtag;
    o += put_varint(r + o, (7u << 3) | 2);
    o += put_varint(r + o, glen);
    size_t from = gs;
    for (size_t k = 0; k < nini; k++) {
        memcpy(r + o, p + from, ini[k].start - from);
        o += ini[k].start - from;
        from = ini[k].end;
    }
    memcpy(r + o, p + from, ge - from);
    o += ge - from;
    memcpy(r + o, p + ge, n - ge);
    o += n - ge;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, o, r);
    free(r);
    if (!m || !m->graph || m->graph->n_initializer) { /* not as parsed: the plain way */
        if (m) protobuf_c_message_free_unpacked(&m->base, NULL);
        free(ini);
        return onnx__model_proto__unpack(NULL, n, p);
    }
    inflight_msg = m;
    Onnx__GraphProto *gp = m->graph;
    gp->initializer = malloc(nini * sizeof *gp->initializer);
    if (!gp->initializer) ir_die("out of memory");
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < nini; k++) {
        size_t j = ini[k].start;
        uint64_t key, len;
        IR_ASSERT(wire_varint(p, n, &j, &key) && wire_varint(p, n, &j, &len));
        Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, (size_t)len, p + j);
        if (!t) {
            free(ini);
            return NULL; /* protobuf parse failed */
        }
        gp->initializer[gp->n_initializer++] = t;
        if (drop_pages && page) { /* the whole pages of this tensor's bytes: copied now */
            uintptr_t a = ((uintptr_t)(p + j) + page - 1) & ~(page - 1);
            uintptr_t b = (uintptr_t)(p + ini[k].end) & ~(page - 1);
            if (b > a) (void)madvise((void *)a, b - a, MADV_DONTNEED);
        }
    }
    free(ini);
    return m;
}


void onnx_load_abandon(void)
{
    if (inflight_msg) protobuf_c_message_free_unpacked(&inflight_msg->base, NULL);
    ir_graph_free(inflight_graph);
    inflight_msg = NULL;
    inflight_graph = NULL;
}

/* onnx_load_buffer; drop_pages: bytes is a read-only file mapping of ours (see unpack_model). */
static struct ir_graph *load_buffer(const char *path, const void *bytes, size_t size,
                                    bool drop_pages)
{
    if (size == 0) ir_die("%s: not a valid ONNX model (empty file)", path);
    struct ir_graph *g = ir_graph_new(path);
    inflight_graph = g;
    o2r_sha256(bytes, size, g->model_hash);
    if (!wire_nesting_ok(&onnx__model_proto__descriptor, bytes, size, 0))
        ir_die("%s: not a valid ONNX model (messages nested more than %d levels deep)", path,
               MAX_NESTING);
    if (drop_pages) /* hashed: the pages are read again below, one initializer at a time */
        (void)madvise((void *)bytes, size, MADV_DONTNEED);
    Onnx__ModelProto *m = unpack_model(bytes, size, drop_pages);
    if (!m) ir_die("%s: not a valid ONNX model (protobuf parse failed)", path);
    inflight_msg = m;
    if (!m->graph) ir_die("%s: not a valid ONNX model (no graph)", path);
    if (m->n_opset_import == 0) ir_die("%s: not a valid ONNX model (no opset_import)", path);

    char *pcopy = ir_strdup(g, path);
    const char *dir = ir_strdup(g, dirname(pcopy));
    g->model_path = ir_strdup(g, path);
    g->model_dir = dir;
    char *real = realpath(dir, NULL);
    if (!real) ir_die("%s: cannot resolve the model's folder %s: %s", path, dir, strerror(errno));
    struct fe_ctx c = {.g = g, .model_dir_real = ir_strdup(g, real)};
    free(real);

    build_graph(&c, m);
    protobuf_c_message_free_unpacked(&m->base, NULL);
    inflight_msg = NULL;
    inflight_graph = NULL;
    return g;
}

struct ir_graph *onnx_load_buffer(const char *path, const void *bytes, size_t size)
{
    return load_buffer(path, bytes, size, false);
}

struct ir_graph *onnx_load(const char *path)
{
    /* O_NONBLOCK: a FIFO without a writer must not block the compiler (refused below) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) ir_die("%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) ir_die("%s: cannot stat: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) ir_die("%s: is a directory, not an ONNX model", path);
    if (!S_ISREG(st.st_mode)) ir_die("%s: not a regular file", path);
    if (st.st_size == 0) ir_die("%s: not a valid ONNX model (empty file)", path);
    size_t size = (size_t)st.st_size;
    void *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) ir_die("%s: cannot mmap: %s", path, strerror(errno));
    close(fd);
    /* protobuf-c copies every byte it keeps; large raw_data buffers are taken over from it
     * (unpack_model: one initializer at a time, its file pages dropped once copied). */
    struct ir_graph *g = load_buffer(path, base, size, true);
    munmap(base, size);
    return g;
}
