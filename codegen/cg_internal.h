/* cg_internal.h — codegen's private state: the lowering context, which after cg_build() is
 * also the built model (launch list, buffers, memory plan, descriptor). Not for lowerings:
 * they use only codegen/lower.h. */
#ifndef ONNX2CL_CG_INTERNAL_H
#define ONNX2CL_CG_INTERNAL_H

#include "../ir/ir.h"
#include "codegen.h"
#include "lower.h"
#include "onnx2cl_rt.h"

/* One (kernel family, element type) instance in the program. */
struct cg_use {
    const char *family;  /* kernels/<family>.cl */
    enum ir_dtype dtype; /* instantiated element type T */
    unsigned variants;   /* O2R_VARIANT_* classes that use it (OR of cg_variant masks) */
};

/* One launch as emitted by a lowering. */
struct cg_launch {
    const char *kernel;  /* kernel name */
    uint32_t node;       /* node id (provenance) */
    int64_t step;        /* schedule step (node position among live nodes) */
    unsigned work_dim;   /* 1..3 */
    size_t gws[3], lws[3]; /* global / local sizes (lws 0 = driver's choice) */
    uint32_t first_arg;  /* first argument in cg_ctx.args */
    uint32_t nargs;      /* number of arguments */
    unsigned variants;   /* O2R_VARIANT_* classes this launch runs under */
    const char *check;   /* NULL; a run-time check (cg_check, kernel NULL): its message */
};

/* One kernel argument before buffer assignment. */
struct cg_arg {
    int kind;        /* enum o2r_arg_kind */
    uint32_t value;  /* BUF: value id */
    int64_t i;       /* I32 / I64 / LOCAL bytes */
    float f;         /* F32 */
};

/* One offset view made during lowering (codegen.c banner "offset views"). */
struct cg_link {
    uint32_t child;  /* the root made a part of another root's bytes */
    uint32_t parent; /* the root it lies in (cg_ctx.within while the view stands) */
    uint64_t off;    /* byte offset inside it */
    uint32_t l0, l1; /* the copy launches [l0, l1) emitted for it anyway: removed when it stands */
    bool undone;     /* undone after planning (it made the arena larger): the copy stays */
};

/* One device buffer (root value of an alias set). */
struct cg_buffer {
    uint32_t value;   /* root value id */
    uint8_t space;    /* enum o2r_space */
    uint64_t offset;  /* planned offset in its region */
    uint64_t size;    /* bytes (>= 4) */
    int32_t parent;   /* offset view: buffer index of the top root it lies in, else -1 */
    uint64_t rel;     /* offset view: byte offset inside the parent (multiple of O2R_ALIGN) */
    unsigned classes; /* kernel classes (CG_VARIANT_*) whose launches touch it (plan_memory);
                         CG_VARIANT_ALL for graph inputs/outputs and untouched buffers */
};

/* Sets m->desc.weights_checksum if not yet set (makes every weight once: lazy constants). */
void cg_checksum_ensure(const struct cg_ctx *m);

struct cg_ctx {
    struct ir_graph *g;        /* the graph being lowered */
    uint32_t cur_node;         /* node being lowered (IR_NONE outside lowering) */
    int64_t step;              /* current schedule step */
    unsigned variants;         /* cg_variant mask for the launches/sources being emitted */
    struct cg_use *uses;       /* kernel instances, first-use order */
    uint32_t nuses, cap_uses;
    char **extra_src;          /* cg_add_source texts, in first-use order */
    unsigned *extra_variants;  /* [nextra] classes using each text (grown with extra_src) */
    uint32_t nextra, cap_extra;
    struct cg_launch *launches;
    uint32_t nlaunches, cap_launches;
    struct cg_arg *args;
    uint32_t nargs, cap_args;
    struct o2r_tunable *tunables; /* cg_tunable records (strings in the graph arena) */
    uint32_t ntunables, cap_tunables;
    /* per value (size cap_vals >= g->nvalues) */
    uint32_t *alias;           /* view parent or IR_NONE */
    int64_t *first, *last;     /* lifetime of a root, in steps */
    int32_t *buf;              /* buffer index of a root or -1 */
    uint32_t *within;          /* offset view: the root whose bytes this root lies in, IR_NONE */
    uint64_t *within_off;      /* offset view: byte offset inside `within` */
    unsigned char *pinned;     /* 1: the view class of this value (views and BitCast of it)
                                  holds a graph input or output (never an offset view child) */
    /* offset view policy (codegen.c est_build): a static estimate of live arena bytes */
    uint32_t est_n;            /* values the estimate covers (g->nvalues before lowering) */
    int64_t *est_first, *est_last; /* [est_n] per view class root: first write, last read step
                                  (widened to the family's hull when roots are linked) */
    int64_t *est_live;         /* [est_steps + 2]: est_live[t + 1] = bytes live at step t */
    int64_t est_steps;         /* live nodes (steps 0 .. est_steps - 1; -1 = inputs) */
    int64_t est_peak;          /* max of est_live before any view */
    struct cg_link *links;     /* offset views, in the order lowering made them */
    uint32_t nlinks, cap_links;
    uint32_t cap_vals;
    struct cg_buffer *bufs;    /* buffers: I/O first, then first-use order */
    uint32_t nbufs, cap_bufs;
    uint64_t arena_bytes;      /* planned arena size */
    uint64_t weights_bytes;    /* weights region size */
    char *source;              /* assembled OpenCL source of every class (malloc; --stats) */
    size_t source_len;
    struct o2r_source *segments; /* desc.sources: pieces of `source` tagged by class (<= 60 KB) */
    uint32_t nsegments;
    struct o2r_model_desc desc; /* descriptor (arrays in the graph arena) */
    void *payload;             /* lazily built weights payload (malloc) */
    bool have_checksum;        /* desc.weights_checksum is set (by cg_write_weights, which
                                  computes it while writing, or cg_checksum_ensure) */
    enum ir_dtype wdtype;      /* storage of repacked weights: IR_F32 or IR_F16 (--weights-dtype) */
    uint32_t *wconsts;         /* constants made by cg_weight_const (storage-dtype weights) */
    const char **wkinds;       /* [nwconsts] their layout kinds ("tensor", "panels", "fconv_v8") */
    uint32_t nwconsts, cap_wconsts;
    struct o2r_repack *repacks; /* cg_weight_repack records (buf = the constant's value id until
                                   the descriptor is built) */
    uint32_t nrepacks, cap_repacks;
    uint64_t file_bytes;       /* weights region [0, file_bytes) is the weights file's payload */
};

uint64_t cg_weights_checksum(const struct cg_ctx *m);

/* Atomic output files (emit_c.c): cg_open_tmp opens a temporary file beside `path` (registered
 * for removal on a fatal error; *tmp receives its malloc'ed name); cg_commit_tmp flushes, fsyncs,
 * re-checks `path` (o2r_path_check_output) and renames the file into place. Fatal on error. */
FILE *cg_open_tmp(const char *path, char **tmp);
void cg_commit_tmp(FILE *f, char *tmp, const char *path);

#endif
