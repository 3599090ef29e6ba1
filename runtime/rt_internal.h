/* rt_internal.h — private declarations shared by the runtime's .c files (never installed).
 *
 * What: the layout of struct o2r_ctx / struct o2r_model, the host allocation wrapper with its
 * fault-injection hooks, error-message helpers and the program-binary cache interface.
 * Assumes: OpenCL 1.2 API (CL_TARGET_OPENCL_VERSION=120), libc only; never includes compiler
 * headers. Tests may include this header to reach the test hooks (o2r_fault_reset,
 * o2r_model_cache_hit, o2r_model_timing).
 * Guarantees: every host allocation of the runtime goes through o2r_malloc/o2r_free, so
 * $ONNX2CL_FAIL_ALLOC=N (fail the Nth allocation) reaches every allocation; every guarded CL
 * creation call consults o2r_fault_cl() first ($ONNX2CL_FAIL_CL=clCreateBuffer:N fails the Nth
 * call of that function).
 */
#ifndef ONNX2CL_RT_INTERNAL_H
#define ONNX2CL_RT_INTERNAL_H

#include <CL/cl.h>
#include <stdarg.h>
#include <stdio.h>

#include "onnx2cl_rt.h"
#include "platform.h"

#ifndef ONNX2CL_VERSION
#define ONNX2CL_VERSION "unknown"
#endif

/* O2R_PRINTF(f, a): printf-style format checking (platform.h) */

#define O2R_ERR_CAP 8192 /* bytes of the last-error string (build logs are truncated to fit) */

/* An OpenCL device context (o2r_ctx_create). */
struct o2r_ctx {
    cl_platform_id platform;      /* platform of the chosen device */
    cl_device_id device;          /* the chosen device */
    cl_context context;           /* context holding only `device` */
    cl_command_queue queue;       /* in-order queue, always created with profiling enabled */
    char device_name[512];        /* "platform name / device name" */
    char device_version[256];     /* CL_DEVICE_VERSION */
    char driver_version[256];     /* CL_DRIVER_VERSION */
    char platform_version[256];   /* CL_PLATFORM_VERSION */
    cl_uint base_align_bits;      /* CL_DEVICE_MEM_BASE_ADDR_ALIGN (bits) */
    cl_ulong max_alloc;           /* CL_DEVICE_MAX_MEM_ALLOC_SIZE (bytes) */
    struct o2r_device_info info;  /* device facts (o2r_ctx_device_info) */
    uint32_t kclass;              /* chosen kernel class (O2R_VARIANT_CPU / _GPU) */
    char kclass_why[160];         /* why that class ("auto: CL_DEVICE_TYPE_GPU", ...) */
    char err[O2R_ERR_CAP];        /* last error message ("" if none) */
};

/* How a model's buffers are split into device allocations ("chunks"), each <= limit
 * (o2r_mem_plan_build, memplan.c). */
struct o2r_mem_plan {
    uint64_t limit;            /* bytes: largest allowed allocation */
    uint32_t n_weight_chunks;  /* chunks [0, n_weight_chunks) hold weights */
    uint32_t n_arena_chunks;   /* chunks after them hold activations */
    uint64_t *chunk_bytes;     /* [chunks] allocation size */
    uint64_t *chunk_src;       /* [chunks] weights chunks: byte offset in the weights region
                                  (the file's payload, then desc.const_data) */
    uint32_t *buf_chunk;       /* [n_buffers] chunk holding each desc buffer; UINT32_MAX: unused
                                  by the selected kernel class, no device memory */
    uint64_t *buf_off;         /* [n_buffers] its offset inside the chunk (multiple of O2R_ALIGN) */
    uint64_t weights_bytes;    /* sum of the weights chunks */
    uint64_t arena_bytes;      /* sum of the arena chunks */
    int arena_replaced;        /* 1: the compiled arena plan could not be cut, placed again */
    uint32_t n_unused;         /* buffers skipped: no selected launch names them */
    uint64_t unused_bytes;     /* their total size */
};

/* A model instance (o2r_model_init). */
struct o2r_model {
    struct o2r_ctx *ctx;                 /* owning context (not owned) */
    const struct o2r_model_desc *desc;   /* descriptor (static data of the generated file) */
    cl_program program;                  /* built program */
    uint32_t n_kernels;                  /* number of distinct kernel names */
    cl_kernel *kernels;                  /* [n_kernels], one per distinct name */
    const char **kernel_names;           /* [n_kernels] names (point into desc) */
    uint32_t *launch_kernel;             /* [n_launches] index into kernels */
    struct o2r_mem_plan plan;            /* which chunk / offset each desc buffer lives at */
    cl_mem *chunks;                      /* [plan.n_weight_chunks + plan.n_arena_chunks] device
                                            allocations: weights chunks first, then arena */
    cl_mem *bufs;                        /* [n_buffers] sub-buffers of the chunks */
    int profiling;                       /* o2r_model_set_profiling state */
    int have_profile;                    /* launch_ns holds the timings of the last run */
    uint64_t *launch_ns;                 /* [n_launches] device time of each launch, last run */
    cl_event *events;                    /* [n_launches] scratch events while profiling */
    int cache_hit;                       /* 1 if the program came from the binary cache */
    double build_ms;                     /* time spent building / loading the program */
    uint32_t kclass;                     /* kernel class of this model (from its ctx at init) */
    char *source;                        /* program source: the segments of that class */
    size_t source_len;                   /* bytes of source */
    double weights_ms;                   /* time spent reading, checking and uploading weights */
    struct o2r_launch *launches;         /* [n_launches] the desc's launches, tunable ones with
                                            the kernel name and geometry chosen (tune.c) */
    struct o2r_arg *args;                /* [n_args] the desc's arguments, Kc as chosen */
    struct o2r_tune_state *tune;         /* tile choices (tune.c); NULL without tunables */
    uint32_t runs;                       /* o2r_model_run calls so far (progress of the first) */
    struct o2r_fmap wmap;                /* the weights file, kept mapped while weights chunks
                                            use it as their memory (CL_MEM_USE_HOST_PTR) */
    uint32_t n_mapped_chunks;            /* weights chunks that are the mapped file itself */
    int weights_stamped;                 /* the payload checksum was skipped: a stamp says this
                                            file version was checked at an earlier start */
    cl_command_queue ahead_queue;        /* build ahead (build_ahead.c): the warm-up queue, NULL
                                            when nothing was enqueued; released at free */
    uint32_t ahead_n;                    /* warm-up launches enqueued on it */
};

/* ---- allocation wrapper + fault injection (alloc.c) ---- */
/* malloc that honours $ONNX2CL_FAIL_ALLOC=N (the Nth call since the last reset returns NULL). */
void *o2r_malloc(size_t n);
/* calloc-like (zeroed), same fault hook as o2r_malloc. */
void *o2r_calloc(size_t count, size_t size);
void o2r_free(void *p);
/* strdup through o2r_malloc. */
char *o2r_strdup(const char *s);
/* Returns 0, or the CL error code a guarded CL call named `fn` must fail with now
 * ($ONNX2CL_FAIL_CL=fn:N fails the Nth call of fn since the last reset). */
cl_int o2r_fault_cl(const char *fn);
/* Resets the allocation and CL call counters (tests call it before each injected scenario). */
void o2r_fault_reset(void);

/* ---- errors (errors.c) ---- */
/* printf into ctx->err (no-op when ctx is NULL). */
void o2r_set_error(struct o2r_ctx *ctx, const char *fmt, ...)
    O2R_PRINTF(2, 3);
/* 1 when status st with ctx->err is a failed program build (the message o2r_program_get sets
 * starts with "clBuildProgram("), else 0. */
int o2r_err_is_build(const struct o2r_ctx *ctx, o2r_status st);
/* The first line of ctx->err into buf (cap bytes, truncated); returns buf. */
char *o2r_err_first_line(const struct o2r_ctx *ctx, char *buf, size_t cap);
/* snprintf into a caller buffer (no-op when buf is NULL or cap 0). */
void o2r_fmt(char *buf, size_t cap, const char *fmt, ...) O2R_PRINTF(3, 4);
/* Message of the last failed o2r_ctx_create: o2r_ctx_last_error(NULL) returns it. */
const char *o2r_ctx_create_error(void);

/* ---- program binary cache (cache.c) ---- */
/* Builds desc's program for ctx's device, from the cache when possible; stores the binary after
 * a source build. Sets *cache_hit. On failure sets ctx->err (build log + options included). */
o2r_status o2r_program_get(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                           const char *src, size_t src_len, cl_program *out, int *cache_hit);

/* ---- kernel variants (schedule.c) ---- */
/* Fills ctx->info from the device and sets the default class ($ONNX2CL_KERNELS or auto);
 * O2R_ERR_ARG with the message in ctx->err for a bad $ONNX2CL_KERNELS. */
o2r_status o2r_schedule_init_ctx(struct o2r_ctx *ctx);
/* Fills *info with the properties of device d of platform p (missing ones read as 0/""). */
void o2r_query_device_info(cl_platform_id p, cl_device_id d, struct o2r_device_info *info);
/* 1 if OpenCL C source `src` (defining a kernel named "probe") builds for device d: how device
 * features are probed (never by trusting extension strings). Creates and frees its own context. */
int o2r_probe_build(cl_platform_id p, cl_device_id d, const char *src);
/* 1 when launch l runs under class kclass. */
int o2r_launch_selected(const struct o2r_launch *l, uint32_t kclass);
/* 1 when the context's device computes in the host's own memory (a CPU device reporting
 * CL_DEVICE_HOST_UNIFIED_MEMORY, as PoCL does): a CL_MEM_USE_HOST_PTR buffer is then used in
 * place, without a copy; 0 otherwise (GPUs, accelerators, or the query fails). */
int o2r_ctx_memory_is_host(const struct o2r_ctx *ctx);
/* Assembles the program source of m->kclass into m->source (o2r_malloc). */
o2r_status o2r_schedule_source(struct o2r_model *m);

/* ---- tunable kernels (tune.c; docs/tuning.md) ---- */
/* Checks desc's tunables (indices, sizes, names, default tiles consistent with their launches);
 * O2R_ERR_ARG with the message in ctx->err. */
o2r_status o2r_tune_validate_desc(struct o2r_ctx *ctx, const struct o2r_model_desc *desc);
/* Chooses the tiles of every tunable of m (tuning file, built-in vendor default, compiled
 * default; tune_mode != 0: the compiled defaults, file unread, and the candidates whose bit is
 * set in tune_mode) and applies them to m->launches and
 * m->args. Warnings about an ignored file or entry go to stderr. */
o2r_status o2r_tune_choose(struct o2r_model *m, uint32_t tune_mode);
/* The instance lines (MACRO(NAME, ...)) of m's chosen tiles, plus every candidate in tune mode,
 * as an o2r_malloc'ed text (*len bytes); NULL with *len = 0 when m has no tunables, NULL with
 * *len = (size_t)-1 when out of memory. */
char *o2r_tune_source(const struct o2r_model *m, size_t *len);
/* After a failed program build: every tunable whose tiles came from the tuning file or the
 * built-in vendor default gets the compiled default again (launch geometry and Kc included).
 * Returns what was dropped ("the tuning file's entries", ...), or NULL when nothing was (the
 * failure is then not the tuning's). Not in tune mode. */
const char *o2r_tune_reset_compiled(struct o2r_model *m);
/* The tuning file m read ("" if none). */
const char *o2r_tune_file_path(const struct o2r_model *m);
/* Frees m->tune. */
void o2r_tune_free(struct o2r_model *m);

/* ---- model internals shared with tune.c (model.c) ---- */
/* o2r_model_init; tune_mode != 0: compiled default tiles plus the candidate instances whose
 * bit (1 << k, k = index in the candidate list) is set (O2R_TUNE_ALL: every candidate). */
#define O2R_TUNE_ALL 0xffffffffu
o2r_status o2r_model_init_mode(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                               const char *weights_path, uint32_t tune_mode,
                               struct o2r_model **out);
/* Sets l's arguments (from m->args) on kernel k and enqueues it with l's geometry; a launch
 * with a zero global size is skipped. li: its index (messages). ev: NULL, or receives the
 * event. */
o2r_status o2r_launch_enqueue(struct o2r_model *m, uint32_t li, const struct o2r_launch *l,
                              cl_kernel k, cl_event *ev);
/* Enqueues the writes of every input (host pointers, desc order; not waited for). */
o2r_status o2r_model_upload_inputs(struct o2r_model *m, const void *const *inputs);

/* ---- build ahead (build_ahead.c; issue 24 item 2) ---- */
/* Whether models of ctx build their kernels ahead ($ONNX2CL_BUILD_AHEAD=auto|on|off|1|0; auto:
 * on for a CPU device of PoCL). O2R_ERR_ARG with the message in ctx->err for another value. */
o2r_status o2r_build_ahead_mode(struct o2r_ctx *ctx, int *on);
/* At the end of o2r_model_init (buffers and kernels made): fixes the local size of launches
 * without one to PoCL's choice (PoCL only), then enqueues one small launch per distinct kernel
 * specialization on m->ahead_queue (scratch activations) and flushes it; best effort, never
 * fails. Prints one progress line when the kernels are not in the platform's cache. */
/* Sets kernel argument j of k from a (model.c): a scalar's value, a local size, or for a buffer
 * argument the cl_mem buf (ignored for the other kinds). Returns clSetKernelArg's status. */
cl_int o2r_set_kernel_arg(cl_kernel k, cl_uint j, const struct o2r_arg *a, cl_mem buf);
void o2r_build_ahead_start(struct o2r_model *m);
/* On PoCL: a local size for each launch the generated code left to the driver (build_ahead.c,
 * ls_canonical: powers of two, shared across launches and image sizes); other platforms: nothing. */
void o2r_local_sizes(struct o2r_model *m);
/* Waits for the warm-up launches and releases their queue (o2r_model_free). */
void o2r_build_ahead_finish(struct o2r_model *m);
/* Test hook: warm-up launches enqueued at init (0 when off). */
uint32_t o2r_model_ahead_count(const struct o2r_model *m);

/* ---- program cache folder (cache.c) ---- */
/* The cache folder ($ONNX2CL_CACHE_DIR, else $XDG_CACHE_HOME/onnx2cl, else
 * $HOME/.cache/onnx2cl) into buf; with create, made if missing. 1 when it exists (or was made),
 * else 0 (buf still holds the path when one of the variables gave one). Ignores $ONNX2CL_NO_CACHE (that switches off the program cache only). */
int o2r_cache_dir(char *buf, size_t cap, int create);

/* ---- device memory planning (memplan.c) ---- */
/* Parses a byte count: decimal digits, optionally followed by one of K/M/G (k/m/g; 2^10, 2^20,
 * 2^30). Nothing else is accepted (no sign, spaces, fractions or "B"); 0 and values that
 * overflow 64 bits are refused. O2R_OK and *out set, or O2R_ERR_ARG. */
o2r_status o2r_parse_bytes(const char *s, uint64_t *out);
/* Splits desc's weights region and arena into chunks of at most `limit` bytes (design in the
 * banner of memplan.c), for the launches of kernel class kclass (O2R_VARIANT_*, as
 * o2r_launch_selected; O2R_VARIANT_ALL = every launch); buffers only other classes use get no
 * chunk. limit_src names where the limit comes from, for messages. Errors:
 * O2R_ERR_NODEVICE when one tensor exceeds the limit (err names it, its size and the limit),
 * O2R_ERR_NOMEM, O2R_ERR_ARG for an inconsistent desc. On failure p holds nothing. */
o2r_status o2r_mem_plan_build(const struct o2r_model_desc *desc, uint32_t kclass, uint64_t limit,
                              const char *limit_src, struct o2r_mem_plan *p, char *err,
                              size_t errcap);
void o2r_mem_plan_free(struct o2r_mem_plan *p);

/* ---- model test hooks (model.c) ---- */
/* 1 if the model's program was loaded from the binary cache. */
int o2r_model_cache_hit(const struct o2r_model *m);
/* Init time split: program build/cache load and weights read+check+upload, in ms. */
void o2r_model_timing(const struct o2r_model *m, double *build_ms, double *weights_ms);
/* How many weights chunks of m are the mapped weights file itself (no copy; model.c). */
uint32_t o2r_model_mapped_chunks(const struct o2r_model *m);
/* 1 when m's weights payload checksum was not computed because a stamp in the cache folder
 * says this version of the file was checked before (model.c, weights_stamp). */
int o2r_model_weights_stamped(const struct o2r_model *m);
/* The model's device buffer plan (valid while m lives). */
const struct o2r_mem_plan *o2r_model_mem_plan(const struct o2r_model *m);

#endif
