/* ir.h — the onnx2cl intermediate representation.
 *
 * One graph: dense arrays of nodes and values; edges are uint32_t value ids (IR_NONE = an absent
 * optional input). All memory comes from the graph's arena and is freed once by ir_graph_free().
 * No protobuf type ever appears here: the frontend copies what the IR needs.
 *
 * Guarantees after the shape passes (passes/pipeline.c): every live value has a dtype and concrete
 * dims (dims_known), constants carry host data in little-endian element order, nodes are in
 * topological order. Operator semantics follow the ONNX spec of the model's opset, normalized by
 * the importer into one form (see ops.def and frontend/onnx_load.c):
 *   - Reduce* axes, Split sizes, Squeeze/Unsqueeze axes, Pad pads, Slice starts/ends/axes/steps,
 *     Clip min/max, Resize scales/sizes are inputs (as in the newest opsets) — the importer turns
 *     older attribute forms into constant inputs.
 *   - Softmax/LogSoftmax/Hardmax before opset 13 keep the attribute "axis" and get the int
 *     attribute "_flatten"=1 (coerce to 2-D at axis); from 13 on "_flatten"=0.
 *   - GroupNormalization-18 (per-group scale/bias) is rewritten to the -21 form (per-channel)
 *     when C is known at import, else it carries the int attribute "_per_group"=1.
 * The attribute-form normalization lives in frontend/normalize.c.
 * Fused ops (ops.def, flag IR_F_INTERNAL, names "o2c.*") are made only by fusion passes; their
 * inputs/attributes are documented in ops.def.
 */
#ifndef ONNX2CL_IR_H
#define ONNX2CL_IR_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IR_NONE UINT32_MAX
#define IR_MAX_RANK 8

/* Element types; the numbering is ONNX TensorProto.DataType so files and IR agree. */
enum ir_dtype {
    IR_UNDEFINED = 0,
    IR_F32 = 1,
    IR_U8 = 2,
    IR_I8 = 3,
    IR_U16 = 4,
    IR_I16 = 5,
    IR_I32 = 6,
    IR_I64 = 7,
    IR_STRING = 8,
    IR_BOOL = 9,
    IR_F16 = 10,
    IR_F64 = 11,
    IR_U32 = 12,
    IR_U64 = 13,
    IR_BF16 = 16,
};

/* Operator flags (ops.def column FLAGS). */
enum {
    IR_F_ELEMWISE = 1u << 0,  /* output[i] depends on input[bcast(i)] only */
    IR_F_MOVEMENT = 1u << 1,  /* pure data movement (transpose, slice, ...) */
    IR_F_REDUCTION = 1u << 2, /* reduces over axes */
    IR_F_VIEW = 1u << 3,      /* output aliases input memory (reshape-like) */
    IR_F_SHAPEOP = 1u << 4,   /* produces shape/constant data; must fold for codegen */
    IR_F_NOFOLD = 1u << 5,    /* never constant-folded */
    IR_F_INTERNAL = 1u << 6,  /* made by a fusion pass; never accepted from a model file */
    IR_F_FUNCTION = 1u << 7,  /* expanded into primitive ops during infer_fold (passes/expand/expand.h) */
    IR_F_PARAMS = 1u << 8,    /* inputs 1.. are parameters (shape, axes, starts, scales, k, ...)
                                 that must be constant once shapes are bound; with SHAPEOP every
                                 input is one (ConstantOfShape, Range). infer_fold evaluates a parameter's producers even
                                 where it would keep them on the device (passes/infer_fold.c) */
};

enum ir_op {
    IR_OP_UNKNOWN = 0,
#define X(id, name, min_in, max_in, flags, family) IR_OP_##id,
#include "ops.def"
#undef X
    IR_OP_COUNT
};

enum ir_attr_type {
    IR_ATTR_FLOAT = 1,
    IR_ATTR_INT = 2,
    IR_ATTR_STRING = 3,
    IR_ATTR_TENSOR = 4,
    IR_ATTR_GRAPH = 5,   /* a subgraph (If/Loop/Scan body): struct ir_body */
    IR_ATTR_FLOATS = 6,
    IR_ATTR_INTS = 7,
    IR_ATTR_STRINGS = 8,
};

/* One node attribute, copied out of the ONNX AttributeProto. */
struct ir_attr {
    const char *name;       /* attribute name */
    enum ir_attr_type type; /* which of the fields below is meaningful */
    int64_t i;              /* INT */
    float f;                /* FLOAT */
    const char *s;          /* STRING (NUL-terminated copy; s_len holds the byte length) */
    size_t s_len;           /* STRING length in bytes */
    int64_t *ints;          /* INTS (n entries) */
    float *floats;          /* FLOATS (n entries) */
    const char **strings;   /* STRINGS (n entries) */
    size_t n;               /* count for INTS / FLOATS / STRINGS */
    uint32_t tensor;        /* TENSOR: id of a constant value holding it */
    struct ir_body *body;   /* GRAPH: the subgraph template */
};

/* A subgraph (If branch, Loop/Scan body) as a template that passes/expand/control.c copies
 * into the graph once per use (branch taken, loop iteration). Its nodes are not in g->nodes;
 * their value ids are placeholders in g->values, except inputs that read outer-scope values
 * (listed in captures; the owning node also takes them as extra inputs after its ONNX ones so
 * that ordering, liveness and shape inference see the dependency). */
struct ir_body {
    struct ir_node *nodes;   /* template nodes in topological order (not in g->nodes) */
    uint32_t nnodes;         /* number of template nodes */
    uint32_t *inputs;        /* placeholder values of the body's formal inputs */
    uint32_t ninputs;        /* number of formal inputs */
    uint32_t *outputs;       /* values the body returns (template, input or outer values) */
    uint32_t noutputs;       /* number of outputs */
    uint32_t *captures;      /* outer-scope values read by the body (nested bodies included) */
    uint32_t ncaptures;      /* number of captures */
};

/* One tensor-valued edge of the graph. */
struct ir_value {
    const char *name;                   /* ONNX name (unique in the graph) */
    enum ir_dtype dtype;                /* element type; IR_UNDEFINED until inferred */
    int rank;                           /* number of dims, -1 = unknown */
    int64_t dims[IR_MAX_RANK];          /* dims; valid where dim_param[k] == NULL and rank >= 0 */
    const char *dim_param[IR_MAX_RANK]; /* symbolic dim name (graph inputs) or NULL */
    bool dims_known;                    /* rank and every dim concrete */
    uint32_t producer;                  /* node id making it, IR_NONE for inputs/constants */
    uint32_t nuses;                     /* number of node-input slots reading it (+1 per graph output) */
    const void *data;                   /* constant data (host, little-endian), NULL if not const
                                           or lazy */
    size_t nbytes;                      /* bytes of data (== numel * dtype size) */
    const struct ir_lazy *lazy;         /* a lazy constant (data NULL): how its bytes are made
                                           (ir_const_bytes); NULL otherwise */
    bool is_input;                      /* graph input (fed at run time) */
    bool is_output;                     /* graph output */
    bool is_initializer;                /* came from an initializer / Constant (a weight) */
    bool is_param;                      /* came from a graph initializer (counted as a parameter) */
    bool weight_dep;                    /* constant folded from a float initializer's values */
    bool shape_dep;                     /* constant whose bytes depend on dims of run-time values
                                           (Shape/Size of a non-constant; --bind): it is part of
                                           the build, kept out of the weights file (codegen) */
};

/* A lazy constant: a weight the compiler transforms (transposed, concatenated, packed into
 * panels, stored as half) whose bytes are made only when needed, one tensor at a time, by
 * fill() from the constants it reads (src), instead of held for the whole compilation. The
 * weights file is written tensor by tensor (codegen/emit_c.c), so a model's transformed weights
 * are never all in memory at once (docs/memory.md, "Compile memory"). Only code that knows
 * them reads them: ir_const_bytes(); passes that need values materialize them
 * (ir_const_materialize). */
struct ir_graph;
struct ir_lazy {
    /* Writes the value's nbytes into dst (zeroed by the caller). */
    void (*fill)(const struct ir_graph *g, const struct ir_lazy *l, void *dst);
    uint32_t src[4];   /* constants it reads (IR_NONE where unused) */
    int64_t p[8];      /* the transform's parameters (its fill says which) */
    const void *ctx;   /* the transform's extra data (arena-owned), or NULL */
};

/* One operator application. */
struct ir_node {
    enum ir_op op;           /* operator */
    const char *name;        /* ONNX node name (may be "") */
    const char *op_type;     /* ONNX op_type as written in the file */
    int32_t onnx_index;      /* index of the node in the file's graph, -1 if made by a pass */
    uint32_t *inputs;        /* value ids, IR_NONE for absent optional inputs */
    uint32_t ninputs;        /* number of input slots */
    uint32_t *outputs;       /* value ids, IR_NONE for absent optional outputs */
    uint32_t noutputs;       /* number of output slots */
    struct ir_attr *attrs;   /* attributes */
    uint32_t nattrs;         /* number of attributes */
    bool dead;               /* erased by a pass (skipped everywhere) */
    const int32_t *fused_from; /* onnx_index list of nodes a fusion replaced (NULL if none) */
    uint32_t nfused;         /* entries in fused_from */
};

struct ir_arena;

/* The whole model. */
struct ir_graph {
    struct ir_arena *arena;    /* owns every allocation below */
    struct ir_node *nodes;     /* nodes in topological order (after ir_toposort) */
    uint32_t nnodes, cap_nodes;
    struct ir_value *values;   /* all values */
    uint32_t nvalues, cap_values;
    uint32_t *inputs;          /* graph inputs (value ids), in file order, initializers excluded */
    uint32_t ninputs;
    uint32_t *outputs;         /* graph outputs (value ids), in file order */
    uint32_t noutputs;
    int64_t opset;             /* default-domain opset version */
    const char *model_path;    /* path given by the user (for messages) */
    const char *model_dir;     /* folder of the model (external data root) */
    const char *graph_name;    /* ONNX graph name */
    const char *producer;      /* producer_name + version */
    uint8_t model_hash[32];    /* SHA-256 of the .onnx file bytes */
};

/* ---- arena ---------------------------------------------------------------------------- */
/* Allocation never fails: out of memory is a fatal error (message + exit 1). Memory is zeroed. */
void *ir_alloc(struct ir_graph *g, size_t bytes);
char *ir_strdup(struct ir_graph *g, const char *s);
char *ir_strndup(struct ir_graph *g, const char *s, size_t n);
char *ir_sprintf(struct ir_graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- graph construction ------------------------------------------------------------------ */
struct ir_graph *ir_graph_new(const char *model_path);
void ir_graph_free(struct ir_graph *g);
/* Adds a value (name copied; dtype/rank may be unknown: IR_UNDEFINED / -1). Returns its id. */
uint32_t ir_value_add(struct ir_graph *g, const char *name, enum ir_dtype dtype, int rank,
                      const int64_t *dims);
/* Adds a constant value owning (not copying) data of nbytes; dims must be concrete. */
uint32_t ir_const_add(struct ir_graph *g, const char *name, enum ir_dtype dtype, int rank,
                      const int64_t *dims, const void *data, size_t nbytes);
/* Adds a lazy constant of nbytes (l copied into the arena; see struct ir_lazy). */
uint32_t ir_lazy_add(struct ir_graph *g, const char *name, enum ir_dtype dtype, int rank,
                     const int64_t *dims, size_t nbytes, const struct ir_lazy *l);
/* The bytes of constant v: its data, or a lazy constant's bytes made into a new malloc'd
 * buffer that *owned also gets (the caller frees it; NULL when nothing was made). */
const void *ir_const_bytes(const struct ir_graph *g, uint32_t v, void **owned);
/* Turns lazy constant v into an ordinary one (its bytes made once, in the arena); no-op
 * otherwise. For the few passes that read weight values element by element. */
void ir_const_materialize(struct ir_graph *g, uint32_t v);
/* Looks a value up by name; IR_NONE if absent. */
uint32_t ir_value_find(const struct ir_graph *g, const char *name);
/* `base` if no value has that name yet, else the first free "<base>_<k>", k = 1, 2, ... */
const char *ir_name_unique(struct ir_graph *g, const char *base);
/* Appends a node (input/output arrays copied). Fills producer and nuses. Returns its id.
 * Pointers into g->nodes / g->values are invalidated by ir_node_add / ir_value_add. */
uint32_t ir_node_add(struct ir_graph *g, enum ir_op op, const char *name, const char *op_type,
                     const uint32_t *inputs, uint32_t ninputs, const uint32_t *outputs,
                     uint32_t noutputs);
/* Attribute setters (copy their arguments). */
void ir_attr_set_int(struct ir_graph *g, uint32_t node, const char *name, int64_t v);
void ir_attr_set_float(struct ir_graph *g, uint32_t node, const char *name, float v);
void ir_attr_set_ints(struct ir_graph *g, uint32_t node, const char *name, const int64_t *v,
                      size_t n);
void ir_attr_set_string(struct ir_graph *g, uint32_t node, const char *name, const char *s);

/* ---- rewriting API (passes) ---------------------------------------------------------------- */
/* Every use of value `from` (node inputs and graph outputs) now reads `to`. */
void ir_replace_uses(struct ir_graph *g, uint32_t from, uint32_t to);
/* Marks a node dead and drops its input uses. Its outputs keep no producer. */
void ir_node_erase(struct ir_graph *g, uint32_t node);
/* Recomputes producer/nuses for every value from live nodes and graph outputs. */
void ir_recount(struct ir_graph *g);
/* Sorts live nodes topologically (stable); fatal error naming a node on a cycle. */
void ir_toposort(struct ir_graph *g);

/* ---- attribute lookup ------------------------------------------------------------------------ */
const struct ir_attr *ir_attr_find(const struct ir_node *n, const char *name);
int64_t ir_attr_int(const struct ir_node *n, const char *name, int64_t dflt);
float ir_attr_float(const struct ir_node *n, const char *name, float dflt);
const char *ir_attr_string(const struct ir_node *n, const char *name, const char *dflt);
/* INTS attribute: returns the array and sets *count; NULL (count 0) if absent. */
const int64_t *ir_attr_ints(const struct ir_node *n, const char *name, size_t *count);
const float *ir_attr_floats(const struct ir_node *n, const char *name, size_t *count);

/* ---- op table --------------------------------------------------------------------------------- */
const char *ir_op_name(enum ir_op op);             /* ONNX name, "?" if unknown */
enum ir_op ir_op_lookup(const char *onnx_name);    /* IR_OP_UNKNOWN if not in ops.def */
unsigned ir_op_flags(enum ir_op op);
const char *ir_op_family(enum ir_op op);           /* "none" for views and fold-only ops */
int ir_op_min_inputs(enum ir_op op);
int ir_op_max_inputs(enum ir_op op);

/* ---- values ------------------------------------------------------------------------------------ */
size_t ir_dtype_size(enum ir_dtype t); /* bytes per element; 0 for STRING/UNDEFINED */
const char *ir_dtype_name(enum ir_dtype t); /* "float32", "int64", ... */
/* Element count of a value with known dims; fatal error on int64 overflow. */
int64_t ir_numel(const struct ir_graph *g, uint32_t v);
/* Product of dims with overflow check; returns false on overflow or a negative dim. */
bool ir_dims_numel(const int64_t *dims, int rank, int64_t *out);
/* Reads element i of a constant integer-typed (any int/bool dtype) value as int64. */
int64_t ir_const_i64(const struct ir_graph *g, uint32_t v, int64_t i);
/* Reads element i of a constant float-typed (f32/f64/f16) value as double. */
double ir_const_f64(const struct ir_graph *g, uint32_t v, int64_t i);
/* Whether constant v's bytes derive from floating-point graph initializers' values (what a
 * fine-tune changes). Integer initializers (shape vectors, ids) and one-element float ones
 * (exporters' literals: 0.5, -FLT_MAX fill values) count as structure, like literals. */
static inline bool ir_weight_dep(const struct ir_value *v)
{
    return v->weight_dep ||
           (v->is_param && v->nbytes > ir_dtype_size(v->dtype) &&
            (v->dtype == IR_F32 || v->dtype == IR_F16 || v->dtype == IR_BF16 || v->dtype == IR_F64));
}
static inline bool ir_is_const(const struct ir_graph *g, uint32_t v)
{
    return v != IR_NONE && (g->values[v].data != NULL || g->values[v].lazy != NULL);
}
/* Optional input k of node n, IR_NONE if absent (k beyond ninputs also gives IR_NONE). */
static inline uint32_t ir_input(const struct ir_node *n, uint32_t k)
{
    return k < n->ninputs ? n->inputs[k] : IR_NONE;
}

/* ---- errors ------------------------------------------------------------------------------------ */
/* User error located at a node: prints
 *   "<model>: node '<name>' (<op_type>, #<onnx_index>): <message>"
 * to stderr, removes registered temporary output files, exits with status 1. */
void ir_fatal_node(const struct ir_graph *g, const struct ir_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* User error located at the model file: "<model>: <message>", then as above. */
void ir_fatal(const struct ir_graph *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
/* Error with a plain prefix (e.g. a file or flag name); g may be NULL. */
void ir_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* With $ONNX2CL_MEMTRACE set (not "0"): prints the process's peak and current resident memory
 * (VmHWM, VmRSS, RssAnon, RssFile of /proc/self/status) after `phase` to stderr; else nothing.
 * For measuring compile memory (bench/compile_memory.py); Linux only (silent elsewhere). */
void ir_memtrace(const char *phase);
/* Command-line (usage) error: like ir_die, but exit status 2. */
void ir_usage_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Registers a path removed by every fatal exit (temporary outputs); unregister after rename. */
void ir_tmp_register(const char *path);
void ir_tmp_unregister(const char *path);
/* Test/fuzzing hook: fn is called by every fatal user error (ir_fatal*, ir_die, out of memory)
 * after the message is printed and temporary files are removed, just before exit(1). A fuzzer's
 * hook longjmps back to its loop instead of returning (the arena of the abandoned graph is then
 * the caller's to free). NULL (the default) removes it. Not called by ir_assert_fail (abort). */
void ir_set_fatal_hook(void (*fn)(void));
/* A fatal-error trap: compiles a part of a model that may not fit (an If branch whose condition
 * is known only at run time, passes/expand/control.c) without ending the compilation. While
 * traps are set (innermost first), ir_fatal_node and ir_fatal neither print nor exit: they write
 * their message into the innermost trap, unset it, and longjmp to its jb with value 1. Other
 * fatal errors (ir_die: out of memory, files) are not trapped; they reset every trap before the
 * fatal hook runs. Use:
 *     struct ir_trap t;
 *     ir_trap_set(&t);
 *     if (setjmp(t.jb) == 0) { work(); ir_trap_unset(&t); } else { ... t.msg ... }
 * Locals changed inside work() and read after the longjmp must be volatile. The graph may hold
 * the half-built part (nodes added by work()): the caller erases it. */
struct ir_trap {
    jmp_buf jb;            /* where a trapped error returns (setjmp'ed after ir_trap_set) */
    char where[512];       /* "node 'x' (Op, #3): " (ir_fatal_node), "" (ir_fatal) */
    char msg[2048];        /* the message after that: "why (opset N)" */
    struct ir_trap *outer; /* the trap set before this one (restored when this one is unset) */
};
/* Makes t the innermost trap. */
void ir_trap_set(struct ir_trap *t);
/* Unsets t if it is still set (a trapped error has already unset it). */
void ir_trap_unset(struct ir_trap *t);

/* Internal bug check that stays on in release builds: prints file:line and aborts. */
#define IR_ASSERT(c)                                                                      \
    do {                                                                                  \
        if (!(c)) ir_assert_fail(#c, __FILE__, __LINE__);                                 \
    } while (0)
void ir_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));

/* ---- verifier and dump ------------------------------------------------------------------------- */
/* Checks producers, use counts, topological order, input arity against ops.def, dtype/shape
 * consistency of constants. Returns true if valid; otherwise prints each problem to stderr. */
bool ir_verify(const struct ir_graph *g, const char *after_pass);
/* Prints the IR as text (one line per live node: outputs = Op(inputs) {attrs}). */
void ir_dump(const struct ir_graph *g, void *file /* FILE* */);
/* "[1,4,64,64]" into buf. */
const char *ir_dims_str(const struct ir_value *v, char *buf, size_t cap);

#endif
