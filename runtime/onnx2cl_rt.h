/* onnx2cl_rt.h — the runtime that every generated model file links against.
 *
 * A generated model file (codegen/) holds one constant `struct o2r_model_desc` describing the
 * model: its OpenCL source, the device buffers (one activation arena + one weights region, each
 * value a sub-buffer at a planned offset), the list of kernel launches with their arguments, and
 * the graph inputs/outputs. The runtime turns it into a running model:
 *   o2r_ctx_create   -> OpenCL platform/device/context/queue (device chosen by spec or
 *                       $ONNX2CL_DEVICE), last-error string
 *   o2r_model_init   -> builds (or loads from the on-disk binary cache) the program, mmaps and
 *                       verifies the weights file, uploads weights once, allocates the arena
 *   o2r_model_run    -> uploads inputs, enqueues every launch in order (no clFinish between
 *                       kernels), reads outputs once
 *   o2r_main         -> the CLI of a per-model executable (--input/--output/--bench/...)
 *
 * This header never includes compiler headers; the runtime depends only on OpenCL and libc.
 * Nothing here exits or aborts: every function returns an o2r_status and, on failure, leaves a
 * message in o2r_ctx_last_error() naming the CL call, the CL error name and the node/kernel.
 */
#ifndef ONNX2CL_RT_H
#define ONNX2CL_RT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define O2R_MAX_RANK 8
#define O2R_ABI_VERSION 7 /* 4: tunable kernel instances (struct o2r_tunable); 5: weights file
                            independent of --shape (struct o2r_stored, o2r_repack, const_data);
                            6: offset views (o2r_buffer.view_of); 7: run-time checks
                            (o2r_launch.check, O2R_ERR_UNSUPPORTED) */
/* Every sub-buffer offset in a desc is a multiple of this (covers CL_DEVICE_MEM_BASE_ADDR_ALIGN
 * of common devices: 4096 bits). */
#define O2R_ALIGN 512

typedef enum o2r_status {
    O2R_OK = 0,
    O2R_ERR_ARG,       /* bad argument (NULL, unknown name, ...) */
    O2R_ERR_IO,        /* file missing / unreadable / unwritable */
    O2R_ERR_FORMAT,    /* malformed .npy/.pb/weights file */
    O2R_ERR_MISMATCH,  /* dtype/shape/checksum does not match the model */
    O2R_ERR_CL,        /* an OpenCL call failed */
    O2R_ERR_NOMEM,     /* host allocation failed */
    O2R_ERR_NODEVICE,  /* no OpenCL device matches, or the device cannot hold the model */
    O2R_ERR_UNSUPPORTED, /* the inputs take a path this build cannot run: a run-time check
                            failed (o2r_launch.check, e.g. an If branch that did not fit the
                            shapes bound at compile time); the last error names the node */
} o2r_status;

/* Element types: ONNX TensorProto.DataType numbering. */
enum o2r_dtype {
    O2R_F32 = 1, O2R_U8 = 2, O2R_I8 = 3, O2R_U16 = 4, O2R_I16 = 5, O2R_I32 = 6, O2R_I64 = 7,
    O2R_BOOL = 9, O2R_F16 = 10, O2R_F64 = 11, O2R_U32 = 12, O2R_U64 = 13,
    O2R_BF16 = 16, /* bfloat16 bits; .npy descr '<V2' (what numpy writes for ml_dtypes.bfloat16) */
};

/* Where a buffer lives. */
enum o2r_space {
    O2R_SPACE_ARENA = 0,   /* activation arena (allocated at init, contents undefined) */
    O2R_SPACE_WEIGHTS = 1, /* weights region (filled from the weights file at init) */
};

/* One device buffer = a sub-buffer [offset, offset+size) of the arena or the weights region.
 * The runtime may place it in one of several device allocations (see o2r_model_init); the
 * offset is its place in the compiled, contiguous layout (and in the weights file).
 * Offset views (view_of > 0): an arena buffer that is a byte range of another arena buffer, its
 * parent (buffers[view_of - 1]), e.g. one input of a Concat that its producer writes in place
 * into the Concat's output, or a Slice/Split output that is a contiguous part of its input. It
 * still gets its own sub-buffer (kernels take no offset argument), and its offset lies inside
 * the parent's range, (offset - parent offset) a multiple of O2R_ALIGN; the parent is not
 * itself a view (codegen resolves chains) and the runtime keeps the child at that distance
 * from the parent wherever it places the parent (runtime/memplan.c). A child's launches count
 * for the parent's lifetime: the bytes are the parent's. */
struct o2r_buffer {
    uint64_t offset;  /* bytes, multiple of O2R_ALIGN */
    uint64_t size;    /* bytes, > 0 */
    uint8_t space;    /* enum o2r_space */
    const char *name; /* tensor (ONNX value) name, for messages; may be NULL */
    uint32_t view_of; /* 0: owns its bytes; k >= 1: an offset view into buffer k - 1 (arena) */
};

enum o2r_arg_kind {
    O2R_ARG_BUF = 0,   /* u.buf: index into desc.buffers */
    O2R_ARG_I32 = 1,   /* u.i32 */
    O2R_ARG_I64 = 2,   /* u.i64 (OpenCL `long`) */
    O2R_ARG_F32 = 3,   /* u.f32 */
    O2R_ARG_LOCAL = 4, /* u.local_bytes of __local memory */
};

/* One kernel argument. */
struct o2r_arg {
    uint8_t kind; /* enum o2r_arg_kind */
    union {
        int32_t buf;
        int32_t i32;
        int64_t i64;
        float f32;
        uint64_t local_bytes;
    } u;
};

/* Kernel variant classes (docs/kernel_variants.md). A generated file may carry launches and
 * kernel sources for several classes; at init the runtime picks ONE class for the device
 * (o2r_ctx_set_kernels, $ONNX2CL_KERNELS, else by CL_DEVICE_TYPE) and runs only the launches
 * and builds only the source segments whose mask holds it. Mask 0 means every class. */
#define O2R_VARIANT_CPU 1u /* shaped for CPU devices: per-work-item register tiles, wide vectors */
#define O2R_VARIANT_GPU 2u /* shaped for GPUs: __local tiles, coalesced loads, 64-256 items/group */
#define O2R_VARIANT_ALL 3u

/* One piece of the program source; the program is the concatenation, in order, of the segments
 * whose mask holds the chosen class (each segment <= 60 KB so every C compiler takes it). */
struct o2r_source {
    const char *text;  /* OpenCL C text (not NUL-terminated necessarily) */
    uint64_t len;      /* bytes */
    uint32_t variants; /* O2R_VARIANT_* mask (0 = all) */
};

/* One clEnqueueNDRangeKernel, or a run-time check (check != NULL, kernel NULL): when the run
 * reaches it (every launch before it complete), the runtime reads the first byte of the buffer
 * of its argument 0 (O2R_ARG_BUF, a bool) and, when it equals its argument 1 (O2R_ARG_I32, 0 or
 * 1), stops the run with O2R_ERR_UNSUPPORTED and `check` as the last error. A check has exactly
 * these two arguments; work_dim, gws and lws are ignored (1); tuning runs skip it. */
struct o2r_launch {
    const char *kernel;  /* kernel function name in the program */
    uint32_t work_dim;   /* 1..3 */
    uint64_t gws[3];     /* global work size */
    uint64_t lws[3];     /* local work size; all 0 = let the driver choose */
    uint32_t first_arg;  /* index of the first argument in desc.args */
    uint32_t nargs;      /* number of arguments */
    const char *node;    /* ONNX node name(s) it implements (for errors and --profile) */
    const char *op;      /* op kind (e.g. "Conv", "Add") for profile grouping */
    uint32_t variants;   /* kernel classes this launch belongs to (O2R_VARIANT_* bits; 0 = all) */
    const char *check;   /* NULL: a kernel launch; else a run-time check and its message */
};

/* Families of tunable GPU-class kernel instances (kernels/gemm_gpu.cl; docs/tuning.md). All
 * three are tiled GEMMs with the same tile parameters and the same launch geometry rule. */
enum o2r_tune_family {
    O2R_TUNE_GEMM = 1,   /* linear layer (o2c.Gemm): GG_FGEMM_DEFINE */
    O2R_TUNE_CONV = 2,   /* convolution as implicit GEMM: GG_CONV_DEFINE */
    O2R_TUNE_MATMUL = 3, /* MatMul / Gemm-13 with strided operands: GG_MATMUL_DEFINE */
};
/* Tile parameters of a tunable instance: a TM x TN x TK work-group tile, an RM x RN register
 * block per work-item; (TM/RM) * (TN/RN) work-items per group. Valid sets: o2r_tiles_check. */
struct o2r_tiles {
    int32_t tm, tn, tk, rm, rn;
};
/* One launch whose kernel instance, geometry and slice length the runtime chooses at init
 * (runtime/tune.c): the program gets the line
 *     MACRO(NAME, TM, TN, TK, RM, RN<margs>)      NAME = kbase "_<TM>x<TN>x<TK>_r<RM>x<RN>" ksuffix
 * once per distinct instance, and the launch runs NAME with lws = {TN/RN, TM/RM, 1},
 * gws = {ceil(cols/TN) * TN/RN, ceil(rows/TM) * TM/RM, z}; with kc_arg >= 0 its argument kc_arg
 * is set to Kc = ceil(ceil(k / z) / TK) * TK (the k range of one of the z split-K slices; z is
 * fixed at compile time, so the partial-sum temporary keeps its size). The descriptor's launch
 * holds the default choice (kernel name, gws, lws, Kc), so a runtime that ignored this table
 * would still run the compiled defaults; the default instance's MACRO line is not in the
 * sources (the runtime writes every tunable line). */
struct o2r_tunable {
    uint32_t family;         /* enum o2r_tune_family */
    uint32_t launch;         /* index of the tile launch in desc.launches (work_dim 3) */
    uint32_t span;           /* launches [launch, launch + span) make the outputs (2: + split-K
                                reduce); --tune times and checks them together */
    int64_t rows, cols, k;   /* the GEMM: rows (M; conv: OC), columns (N; conv: images * OH*OW),
                                reduction length K (>= 1, < 2^31) */
    int64_t z;               /* gws[2]: split-K slices (gemm, conv) or batch (matmul) */
    int32_t kc_arg;          /* argument of the launch (0-based) holding Kc, -1 if none */
    uint32_t out_arg;        /* arguments [out_arg, out_arg + n_out) of the launch are its output */
    uint32_t n_out;          /*   buffers (what --tune compares against the default's) */
    uint32_t row_mult;       /* TM must be a multiple of this (conv weight panels of OCB rows) */
    struct o2r_tiles tiles;  /* the compiled default */
    uint32_t pinned;         /* 1: tiles fixed at compile time ($ONNX2CL_GG_TILES): kept as they are */
    const char *macro;       /* instance macro ("GG_CONV_DEFINE") */
    const char *kbase;       /* kernel name before the tile part ("gg_conv") */
    const char *ksuffix;     /* kernel name after it ("_o8_k1_3x3"; may be "") */
    const char *margs;       /* macro arguments after RN (", 8, 1, 3, 3, f32"; may be "") */
};
/* Why tiles t cannot be used (a rule of kernels/gemm_gpu.cl in words), or NULL when they are
 * valid: sizes >= 1, TK >= 4, TM % RM == TN % RN == 0, TK % 4 == TN % 16 == TM % 16 == 0,
 * NT = (TM/RM)(TN/RN) <= 256 and a multiple of TN, TM*TK and TN*TK multiples of 4*NT,
 * TK*(TM+TN+2)*4 bytes of __local <= 32 KiB; each size <= 1024. Pure; shared by the compiler's
 * $ONNX2CL_GG_TILES check and the runtime's tuning-file check. */
const char *o2r_tiles_check(const struct o2r_tiles *t);
/* The kernel name of tunable t's instance with tiles s: kbase "_<TM>x<TN>x<TK>_r<RM>x<RN>"
 * ksuffix, into buf (truncated to cap - 1 bytes). Returns buf. */
char *o2r_tunable_kernel_name(const struct o2r_tunable *t, const struct o2r_tiles *s, char *buf,
                              size_t cap);

/* One tensor of the weights file (the part of the weights region below desc.weights_file_bytes),
 * in payload order. Its layout string (storage dtype, dims, layout kind; never names, values or
 * activation shapes) with its offset and size make its hash (o2r_stored_hash); the hashes of all
 * of them make the weights layout hash a weights file must carry (o2r_desc_layout_hash). */
struct o2r_stored {
    uint32_t buf;       /* index into desc.buffers (space O2R_SPACE_WEIGHTS) */
    const char *layout; /* e.g. "float32 [320,4,3,3] tensor", "float16 [5760] fconv_v8" */
    const char *node;   /* ONNX node that reads it first (messages) */
};

/* Kinds of load-time repacking (struct o2r_repack). */
enum o2r_repack_kind {
    /* Conv weight panels (codegen/sched_conv.c): the file holds the direct form with `src_ocb`
     * output channels per panel, [ceil(OC/src_ocb)][KH][cin][KW][src_ocb]; the build's kernels
     * read `dst_ocb` per panel, in the direct form or (flat) [ceil(OC/dst_ocb)][cin][KH][KW]
     * [dst_ocb]; channels oc >= OC are zero. Which form a conv runs depends on its activation
     * shape, so the weights file keeps one form for every --shape. */
    O2R_REPACK_CONV = 1,
};

/* A weights-file tensor the runtime rearranges after reading it (host, at load; runtime/repack.c):
 * the file's bytes at the buffer's offset are in the source form, the device gets the target
 * form (the same byte size). */
struct o2r_repack {
    uint32_t buf;              /* index into desc.buffers (inside the weights file's part) */
    uint32_t kind;             /* enum o2r_repack_kind */
    uint32_t elem_bytes;       /* 4 (float32) or 2 (half) */
    uint32_t src_ocb, dst_ocb; /* output channels per panel: file form, build form (4, 8, 16) */
    uint32_t flat;             /* 1: build form is [panel][cin][KH][KW][ocb] */
    int64_t oc, cin, kh, kw;   /* conv weight dims [OC, cin, KH, KW] */
};

/* A graph input or output. */
struct o2r_io {
    const char *name;             /* ONNX graph input/output name */
    int32_t dtype;                /* enum o2r_dtype */
    int32_t rank;                 /* number of dims */
    int64_t dims[O2R_MAX_RANK];   /* concrete dims */
    int32_t buf;                  /* index into desc.buffers */
    uint64_t nbytes;              /* numel * element size (may be 0 for an empty tensor) */
};

/* Everything the runtime needs to know about one compiled model (emitted by codegen). */
struct o2r_model_desc {
    uint32_t abi_version;          /* O2R_ABI_VERSION */
    const char *name;              /* model name (API prefix) */
    const char *model_hash;        /* hex SHA-256 of the .onnx file (weights file must match) */
    const char *kernel_source;     /* OpenCL C 1.2 source of every kernel (NULL when n_sources) */
    uint64_t kernel_source_len;
    const char *build_options;     /* clBuildProgram options */
    uint64_t arena_bytes;          /* activation arena size */
    uint64_t weights_bytes;        /* weights region size (payload of the weights file) */
    uint64_t weights_checksum;     /* o2r_weights_checksum of the weights payload */
    uint32_t n_buffers;
    const struct o2r_buffer *buffers;
    uint32_t n_args;
    const struct o2r_arg *args;
    uint32_t n_launches;
    const struct o2r_launch *launches;
    uint32_t n_inputs;
    const struct o2r_io *inputs;
    uint32_t n_outputs;
    const struct o2r_io *outputs;
    uint32_t n_sources;            /* > 0: the program is built from `sources`, not kernel_source */
    const struct o2r_source *sources;
    uint32_t n_tunables;           /* launches with runtime-chosen tiles (docs/tuning.md) */
    const struct o2r_tunable *tunables;
    uint32_t weights_dtype;        /* storage of the repacked GEMM/conv/embedding weights:
                                      O2R_F32 (or 0) float32, O2R_F16 IEEE half (onnx2cl
                                      --weights-dtype f16); the weights file must say the same */
    uint64_t weights_file_bytes;   /* the weights region [0, this) comes from the weights file
                                      (its payload); [this, weights_bytes) from const_data */
    const unsigned char *const_data; /* bytes [weights_file_bytes, weights_bytes) of the region:
                                      constants that depend on the --shape bindings (folded
                                      from Shape/Size of run-time values), so they are part of
                                      the build, not of the weights file; NULL when empty */
    uint32_t n_stored;             /* tensors of the weights file, in payload order */
    const struct o2r_stored *stored;
    uint32_t n_repacks;            /* file tensors rearranged at load (shape-dependent forms) */
    const struct o2r_repack *repacks;
};

/* Weights file layout (little-endian), written by onnx2cl, read by o2r_model_init:
 *   offset 0   char[8]  magic "O2CLWTS\0"
 *          8   u32      format version 3 (2: tied to one --shape build by a build hash; 1: a
 *                      byte-wise FNV-1a checksum); other versions are refused
 *         12   u32      weights storage dtype: O2R_F32 or O2R_F16 (repacked weights as IEEE
 *                      half); must equal desc.weights_dtype
 *         16   u64      payload bytes (== desc.weights_file_bytes)
 *         24   u64      o2r_weights_checksum of the payload (verified against the payload)
 *         32   char[64] hex SHA-256 of the source .onnx file, NUL padded (information only;
 *                      lowercase hex digits, then NULs: checked)
 *         96   u64      weights layout hash (o2r_desc_layout_hash): must equal the model's
 *        104   ...      zero padding up to O2R_WEIGHTS_HEADER bytes (checked)
 * The payload holds only what does not depend on the --shape bindings: the model's weights, as
 * stored tensors (desc.stored) in a layout fixed by the weights' dims (conv panels in one form,
 * rearranged at load for the form a build runs: desc.repacks). So one file serves every --shape
 * build of a model, and any file of the same layout hash (a fine-tune's values, written with
 * `onnx2cl FINETUNE.onnx --weights-only`) loads into it.
 *   O2R_WEIGHTS_HEADER  payload: the file part of the weights region, tensors at their offsets
 *   after the payload   optional layout trailer (diagnostics only, not checksummed; when
 *                       present, checked whole: a damaged one refuses the file):
 *                       char[8] "O2CLBLD", u32 version 2, u32 n stored tensors, u64 bytes of
 *                       names, n x u64 o2r_stored_hash, then per tensor three NUL-terminated
 *                       strings: tensor name (up to an '@', where a build-specific suffix
 *                       starts), node, layout; an executable that refuses the file
 *                       names the first stored tensor where the two layouts differ */
#define O2R_WEIGHTS_MAGIC "O2CLWTS"
#define O2R_WEIGHTS_VERSION 3u
#define O2R_WEIGHTS_HEADER 4096u
#define O2R_WEIGHTS_TRAILER_MAGIC "O2CLBLD"

/* Descriptor file layout (.o2d; little-endian), written by `onnx2cl MODEL.onnx -o OUT.o2d` (the
 * descriptor a generated C file would hold, as data: no C compiler and no dlopen needed), read by
 * o2r_desc_read; onnx2cl-run runs one. Scalars are u32/i32/u64/i64; a string is
 *     u32 length L (0xffffffff: NULL), L bytes without a NUL, then one NUL byte
 * and a blob (source text, constant data) is the same with a u64 length (all ones: NULL).
 *   offset 0   char[8]  magic "O2CLDSC\0"
 *          8   u32      format version O2R_DESC_VERSION (others are refused)
 *         12   u32      runtime ABI version (must equal O2R_ABI_VERSION)
 *         16   u64      file bytes (the whole file, header and checksum included)
 *         24   9 x u32  n_buffers, n_args, n_launches, n_inputs, n_outputs, n_sources,
 *                       n_tunables, n_stored, n_repacks
 *         60   u32      0 (reserved)
 *         64   string name, string model_hash, string build_options, blob kernel_source;
 *              u64 arena_bytes, weights_bytes, weights_checksum, weights_file_bytes;
 *              u32 weights_dtype; blob const_data (weights_bytes - weights_file_bytes bytes)
 *              then the tables, each record in the order of its struct's fields:
 *              buffers   u64 offset, u64 size, u32 space, u32 view_of, string name
 *              args      u32 kind, u64 value (buf / i32 sign-extended, i64, f32 bits, local_bytes)
 *              launches  string kernel, u32 work_dim, u64 gws[3], u64 lws[3], u32 first_arg,
 *                        u32 nargs, string node, string op, u32 variants, string check
 *              inputs, outputs  string name, i32 dtype, i32 rank, i64 dims[rank], i32 buf,
 *                        u64 nbytes
 *              sources   u32 variants, blob text
 *              tunables  u32 family, launch, span; i64 rows, cols, k, z; i32 kc_arg; u32
 *                        out_arg, n_out, row_mult; i32 tm, tn, tk, rm, rn; u32 pinned; string
 *                        macro, kbase, ksuffix, margs
 *              stored    u32 buf, string layout, string node
 *              repacks   u32 buf, kind, elem_bytes, src_ocb, dst_ocb, flat; i64 oc, cin, kh, kw
 *   last 8 bytes: u64 o2r_weights_checksum of every byte before it.
 * Nothing follows the tables but the checksum. The weights file beside it (OUT.weights) is the
 * one a C build of the same model and flags writes. */
#define O2R_DESC_MAGIC "O2CLDSC"
#define O2R_DESC_VERSION 1u
#define O2R_DESC_HEADER 64u

struct o2r_ctx;
struct o2r_model;

/* Device memory a descriptor needs as compiled (contiguous weights region and arena). */
struct o2r_memory {
    uint64_t weights_bytes;        /* weights region */
    uint64_t arena_bytes;          /* activation arena */
    uint64_t scratch_bytes;        /* other device allocations of the runtime (0 today) */
    uint64_t peak_bytes;           /* weights + arena + scratch: all live for the whole run */
    int32_t largest_weight;        /* buffer index of the largest weight tensor, -1 if none */
    uint64_t largest_weight_bytes; /* its size */
    int32_t largest_arena;         /* buffer index of the largest activation, -1 if none */
    uint64_t largest_arena_bytes;  /* its size: no device allocation may be smaller than the
                                      larger of the two */
};
/* Fills *out from desc (desc NULL: zeros and -1). Pure host code. */
void o2r_desc_memory(const struct o2r_model_desc *desc, struct o2r_memory *out);
/* Build hash of desc (never 0): a 64-bit o2r_wsum over the kernel sources, build options, the
 * buffer table (offsets, sizes, spaces), every argument value, the launches (kernels, sizes,
 * classes) and the I/O dtypes and shapes; not over names, the model file's hash or the weights
 * checksum. Equal hashes mean the same kernels over the same weights layout. */
uint64_t o2r_desc_build_hash(const struct o2r_model_desc *desc);
/* Hash of launch li of desc (kernel, sizes, class, argument values; buffer arguments by space,
 * offset and size; not node names): where two builds first differ. */
uint64_t o2r_launch_hash(const struct o2r_model_desc *desc, uint32_t li);
/* Hash of stored tensor i of desc (its layout string, offset and size). */
uint64_t o2r_stored_hash(const struct o2r_model_desc *desc, uint32_t i);
/* Weights layout hash of desc (never 0): over the payload size and every stored tensor's hash,
 * in order. Equal hashes mean a weights file of one fits the other, whatever --shape each was
 * compiled for. */
uint64_t o2r_desc_layout_hash(const struct o2r_model_desc *desc);
/* Rearranges one conv weight from the file's form to the build's (struct o2r_repack; both
 * buffers of the tensor's byte size, dst fully written, zero for padded channels). Pure. */
void o2r_repack_conv(const struct o2r_repack *r, const void *src, void *dst);

/* Creates an OpenCL context. device_spec: NULL/"" = $ONNX2CL_DEVICE or the first GPU, else the
 * first device; "N" = device index N over all platforms; any other string = first device whose
 * "platform/device" name contains it (case-insensitive). */
o2r_status o2r_ctx_create(const char *device_spec, struct o2r_ctx **out);
void o2r_ctx_free(struct o2r_ctx *ctx);
/* Last error message of this context ("" if none); valid until the next call. With ctx NULL it
 * returns the message of the last failed o2r_ctx_create (which leaves no context behind). */
const char *o2r_ctx_last_error(const struct o2r_ctx *ctx);
/* Human-readable device name ("Portable Computing Language / pthread-..."). */
const char *o2r_ctx_device_name(const struct o2r_ctx *ctx);

/* What the runtime knows of a device (CL_DEVICE_* queries; sizes in bytes). */
struct o2r_device_info {
    char platform[256];         /* CL_PLATFORM_NAME */
    char name[256];             /* CL_DEVICE_NAME */
    char vendor[256];           /* CL_DEVICE_VENDOR */
    char version[256];          /* CL_DEVICE_VERSION ("OpenCL 3.0 CUDA") */
    char driver[256];           /* CL_DRIVER_VERSION */
    char c_version[256];        /* CL_DEVICE_OPENCL_C_VERSION ("OpenCL C 1.2 ...") */
    uint64_t type;              /* CL_DEVICE_TYPE bits (CPU 2, GPU 4, ACCELERATOR 8) */
    uint32_t compute_units;     /* CL_DEVICE_MAX_COMPUTE_UNITS */
    uint32_t max_clock_mhz;     /* CL_DEVICE_MAX_CLOCK_FREQUENCY */
    uint64_t max_wg_size;       /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    uint64_t local_mem;         /* CL_DEVICE_LOCAL_MEM_SIZE */
    int local_mem_dedicated;    /* CL_DEVICE_LOCAL_MEM_TYPE == CL_LOCAL */
    uint64_t global_mem;        /* CL_DEVICE_GLOBAL_MEM_SIZE */
    uint64_t max_alloc;         /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    uint32_t pref_vec_float;    /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT */
    int fp64;                   /* CL_DEVICE_DOUBLE_FP_CONFIG != 0 */
};
/* Fills *info for the context's device. O2R_ERR_ARG if an argument is NULL. */
o2r_status o2r_ctx_device_info(const struct o2r_ctx *ctx, struct o2r_device_info *info);
/* Prints every OpenCL platform and device (type, memory, max allocation, local memory, compute
 * units, OpenCL C version, float64, half storage and half arithmetic probed by compiling a
 * kernel) to f (a FILE*), numbered as --device N counts them. When none is usable, prints to
 * stderr why and what to install or set (ICD loader, a vendor driver or PoCL,
 * OCL_ICD_VENDORS, a writable HOME for PoCL's cache). Returns O2R_OK when at least one device
 * was listed, O2R_ERR_NODEVICE otherwise. */
o2r_status o2r_list_devices(void *f);

/* Which kernel variants models initialized on this context use: "cpu", "gpu" or "auto" (by
 * CL_DEVICE_TYPE: GPU and ACCELERATOR devices get the GPU variants, others the CPU ones). NULL
 * means $ONNX2CL_KERNELS, else "auto". O2R_ERR_ARG (message in o2r_ctx_last_error) for any
 * other value. Takes effect for the next o2r_model_init. */
o2r_status o2r_ctx_set_kernels(struct o2r_ctx *ctx, const char *mode);
/* The class chosen for this context (O2R_VARIANT_CPU or O2R_VARIANT_GPU) and, in why, the
 * reason in words ("auto: CL_DEVICE_TYPE_GPU", "--kernels gpu", "$ONNX2CL_KERNELS=cpu"). */
uint32_t o2r_ctx_kernel_class(const struct o2r_ctx *ctx, const char **why);
/* Prints the model's kernel class, why it was chosen, and per op kind the class-specific
 * kernels its launches use, to f (a FILE*; NULL = stderr). For --verbose. */
void o2r_model_print_variants(const struct o2r_model *m, void *f);

/* Builds the program (binary cache under $ONNX2CL_CACHE_DIR, else $XDG_CACHE_HOME/onnx2cl, else
 * ~/.cache/onnx2cl; key = hash of source, options, device, driver and runtime version), maps and
 * checks the weights file (magic, version, storage dtype, weights layout hash, size, checksum:
 * the payload checksum once per file version, stamped in that cache folder;
 * $ONNX2CL_WEIGHTS_VERIFY=always checks at every start), uploads it with the build's constants
 * (desc.const_data), rearranges desc.repacks on the host, and allocates the arena. On a CPU
 * device with host-unified memory (PoCL) the weights allocations are the mapped file itself
 * (no copy; the private mapping lives until o2r_model_free, so the file must not be truncated
 * or rewritten in place meanwhile); elsewhere they are copies ($ONNX2CL_WEIGHTS_UPLOAD=
 * auto|map|copy; another value: O2R_ERR_ARG, as for a bad $ONNX2CL_WEIGHTS_VERIFY).
 * Device memory: weights and activations are split into as many device allocations as needed,
 * each <= CL_DEVICE_MAX_MEM_ALLOC_SIZE, or <= $ONNX2CL_MAX_ALLOC when that is lower (bytes, with
 * an optional K/M/G suffix); a tensor never straddles two allocations. Errors: a bad
 * $ONNX2CL_MAX_ALLOC / $ONNX2CL_GLOBAL_MEM value (O2R_ERR_ARG, naming the variable); a single
 * tensor larger than the limit (O2R_ERR_NODEVICE, naming the tensor, its size and the limit);
 * weights + arena + scratch larger than CL_DEVICE_GLOBAL_MEM_SIZE (O2R_ERR_NODEVICE, giving the
 * need and the device's memory; $ONNX2CL_GLOBAL_MEM lowers that figure, for tests only).
 * Checked before the program is built.
 * Tiles of the tunable GPU-class kernels (struct o2r_tunable): from the model's tuning file in
 * the cache folder (entry for this device, else this device with another driver, else this
 * vendor), else the built-in default of the device's vendor, else the compiled default
 * (docs/tuning.md); a tuning file or entry that fails its checks is ignored with one warning on
 * stderr ("onnx2cl: warning: ignoring tuning file PATH: REASON"), never an error.
 * Build ahead ($ONNX2CL_BUILD_AHEAD=auto|on|off, also 1|0; default auto = on for a CPU device
 * of PoCL only; another value: O2R_ERR_ARG): where the platform compiles each kernel at its
 * first launch (PoCL), init ends by enqueueing one small launch per distinct kernel
 * specialization on a second queue, on scratch activations, so the kernels compile in the
 * background (one at a time: PoCL compiles under a process-wide lock) while the caller goes on
 * and the first run finds them built; outputs are bit-identical either way. On PoCL, launches
 * compiled without a local size then run with the one PoCL would choose itself. A cold cache
 * prints "onnx2cl: model 'M': building its N kernels ahead of the first run ..." on stderr;
 * o2r_model_free waits for the warm-ups still running. Off on GPU drivers (they build every
 * kernel in clBuildProgram) and in o2r_model_tune (runtime/build_ahead.c). */
o2r_status o2r_model_init(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                          const char *weights_path, struct o2r_model **out);
/* Runs one inference. inputs[i] points at desc.inputs[i].nbytes of host data in the declared
 * dtype (C order); outputs[i] receives desc.outputs[i].nbytes. Blocks until done. */
o2r_status o2r_model_run(struct o2r_model *m, const void *const *inputs, void *const *outputs);
void o2r_model_free(struct o2r_model *m);
/* Device memory an initialized model holds, in bytes: its weights chunks + arena chunks (the
 * buffers only other kernel classes use are not allocated and not counted; the mapped weights
 * file's pages count as weights). 0 for NULL. */
uint64_t o2r_model_device_bytes(const struct o2r_model *m);
/* Checks a weights file on its own (the layout above; no model, no device): magic, format
 * version, header bytes, storage dtype, truncation and the payload checksum, which reads the whole
 * file unless a "verified before" stamp of the cache folder says it is unchanged since a check
 * ($ONNX2CL_WEIGHTS_VERIFY=always: always read). O2R_OK (err ""), else O2R_ERR_FORMAT /
 * O2R_ERR_IO / O2R_ERR_NOMEM with a message naming the file and what is wrong in err (errcap
 * bytes). The engine checks cached weights with it before it trusts them. */
o2r_status o2r_weights_verify(const char *path, char *err, size_t errcap);

/* Tunes the model's tunable GPU-class kernels on ctx's device (docs/tuning.md): initializes
 * desc with the compiled default tiles plus every candidate instance (the built-in list or
 * $ONNX2CL_TUNE_CANDIDATES; O2R_ERR_ARG for a bad one), runs the model once on `inputs` (as
 * o2r_model_run; inputs NULL, or an entry NULL: deterministic pseudo-random floats in [-1, 1),
 * zero integers), and at the first launch of each distinct (family, shape) times every
 * candidate (median of 5 runs by profiling events, after one warm-up whose output must match
 * the default's within |got - ref| <= 1e-4 * max|ref| + 1e-3 * |ref|; others are rejected and
 * reported), until `seconds` of wall time after the program build have passed (the shape in
 * progress keeps the best so far; the rest are not written). The winners are merged into the model's tuning file in the
 * cache folder (entries of other devices and shapes kept), written atomically; progress lines
 * "tune: n/N ..." go to log (a FILE*; NULL = stderr). Nothing to tune (cpu class, no GPU GEMM)
 * is not an error: a line says so and no file is written. Errors: those of o2r_model_init and
 * o2r_model_run; O2R_ERR_IO when no cache folder can be found or the file cannot be written. */
o2r_status o2r_model_tune(struct o2r_ctx *ctx, const struct o2r_model_desc *desc,
                          const char *weights_path, const void *const *inputs, double seconds,
                          void *log);
/* Prints where the tiles of the model's tunable kernels came from (tuning file and entry,
 * built-in vendor default, compiled default) and per (family, shape) the tiles chosen, to f
 * (a FILE*; NULL = stderr). For --verbose. Prints nothing when the class has no tunables. */
void o2r_model_print_tuning(const struct o2r_model *m, void *f);

/* Enables per-launch OpenCL event timing for following runs; o2r_model_print_profile prints
 * per-kernel and per-op-kind totals of the last run to f (a FILE*). */
o2r_status o2r_model_set_profiling(struct o2r_model *m, int on);
void o2r_model_print_profile(const struct o2r_model *m, void *f);

/* Reads the descriptor file `path` (.o2d, layout above) into a newly allocated descriptor
 * (*out; release with o2r_desc_free; it does not depend on the file afterwards). Checks the
 * magic, format version, ABI version, size and checksum, then every count, string, offset and
 * table index (buffer, argument, launch) against the file and the tables: a truncated, corrupt
 * or hostile file gives O2R_ERR_IO (unreadable) or O2R_ERR_FORMAT (*out = NULL), never a crash,
 * with a message in err (cap bytes) naming the file and what is wrong. The rest of the
 * descriptor's consistency is checked by o2r_model_init as for a compiled-in one. Never exits. */
o2r_status o2r_desc_read(const char *path, struct o2r_model_desc **out, char *err, size_t cap);
/* Frees a descriptor from o2r_desc_read (NULL: nothing). Free its models first. */
void o2r_desc_free(struct o2r_model_desc *desc);
/* Serializes desc in the .o2d layout into a new buffer (*data, *len; free with free()): the
 * bytes are a function of the descriptor's contents alone (deterministic). Source segments of
 * every class (mask O2R_VARIANT_ALL) are written as mask 0 and every NaN argument as 0x7fc00000,
 * as the generated C writes them, so a .o2d holds exactly the generated C's descriptor. Returns
 * O2R_OK, O2R_ERR_NOMEM, or O2R_ERR_ARG for a descriptor that cannot be written (a NULL
 * array with a count, a string longer than 4 GiB, an I/O rank above O2R_MAX_RANK). */
o2r_status o2r_desc_serialize(const struct o2r_model_desc *desc, unsigned char **data,
                              size_t *len);
/* o2r_main for a descriptor that is not compiled into the executable (onnx2cl-run): as
 * o2r_main, but the default weights file is default_weights (NULL: as o2r_main) and messages
 * are prefixed with prog (NULL: argv[0]). */
int o2r_main_ex(const struct o2r_model_desc *desc, const char *default_weights,
                const char *prog, int argc, char **argv);

/* The CLI of a generated executable (see o2r_usage in runtime/main.c):
 *   --input NAME=FILE (.npy or ONNX TensorProto .pb), --output NAME=FILE.npy, --output-dir DIR,
 *   --weights PATH (default: the executable's path with ".weights"), --device SPEC,
 *   --bench N, --profile, --help. Returns the process exit status (0 ok, 1 error, 2 usage). */
int o2r_main(const struct o2r_model_desc *desc, int argc, char **argv);

/* ---- tensor files (also used by tests) ---------------------------------------------------- */
/* A host tensor read from a file (data is malloc'ed; free with o2r_tensor_free). */
struct o2r_tensor {
    int32_t dtype;               /* enum o2r_dtype */
    int32_t rank;
    int64_t dims[O2R_MAX_RANK];
    void *data;
    uint64_t nbytes;
};
/* Reads .npy (v1/v2/v3, little-endian, C order) or ONNX TensorProto .pb (by extension, else by
 * content). err receives a message naming the file and the problem. */
o2r_status o2r_tensor_read(const char *path, struct o2r_tensor *t, char *err, size_t errcap);
/* Writes .npy atomically (temporary file in the same folder + rename). A path that is not a
 * regular file or missing (device node, FIFO, socket, directory, symbolic link) is refused with
 * O2R_ERR_IO before anything is written (o2r_path_check_output). */
o2r_status o2r_tensor_write_npy(const char *path, const struct o2r_tensor *t, char *err,
                                size_t errcap);
void o2r_tensor_free(struct o2r_tensor *t);
/* ---- output paths (runtime/platform.c) ----------------------------------------------------- */
/* Whether `path` may be written as an output file: O2R_OK when it does not exist or is an
 * existing regular file (which the atomic writers replace by rename). A device node, FIFO,
 * socket, directory or symbolic link (to anything) gives O2R_ERR_IO and a message in err naming
 * the path and what it is; an empty path gives O2R_ERR_ARG. Nothing is created or modified. */
o2r_status o2r_path_check_output(const char *path, char *err, size_t errcap);
/* Whether `path` may serve as an output folder: O2R_OK when it is missing (to be created), a
 * directory or a symbolic link to one; otherwise O2R_ERR_IO with a message naming what it is. */
o2r_status o2r_path_check_output_dir(const char *path, char *err, size_t errcap);
/* Creates folder `path` and its missing parents (mode 0755; like `mkdir -p`). O2R_OK when it
 * exists as a directory afterwards; O2R_ERR_IO with a message naming the component that could
 * not be created (or that exists and is not a directory). */
o2r_status o2r_path_make_dirs(const char *path, char *err, size_t errcap);
/* o2r_path_make_dirs that also says what it created: *made = the length of the shortest prefix
 * of path that is a folder this call created (0: it created none). On failure it removes the
 * folders it created (*made = 0). */
o2r_status o2r_path_make_dirs_new(const char *path, size_t *made, char *err, size_t errcap);
/* Undoes o2r_path_make_dirs_new(path, &made): removes folder path and its parents down to the
 * prefix of length made, innermost first, each only while empty (rmdir), so a run that fails
 * after creating its output folder leaves nothing it made; a folder holding anything stays,
 * with its parents. made == 0: nothing. */
void o2r_path_remove_new_dirs(const char *path, size_t made);

size_t o2r_dtype_size(int32_t dtype);
const char *o2r_dtype_name(int32_t dtype);

/* Name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), "CL_UNKNOWN_ERROR(<n>)" otherwise. */
const char *o2r_cl_error_name(int32_t err);

/* FNV-1a 64 over bytes (program-cache keys). */
uint64_t o2r_fnv1a64(const void *data, size_t n, uint64_t seed);
#define O2R_FNV_SEED 0xcbf29ce484222325ull

/* Weights checksum (weights file format 2): the payload read as little-endian 64-bit words (a
 * last partial word zero-padded), word i folded into lane i mod 4 by
 *     lane = rotl64(lane ^ word, 29) * 0x9e3779b97f4a7c15
 * (a bijection per word, so any change of one word changes its lane), then the four lanes and the
 * byte count folded with FNV-1a 64. It detects corruption and mixed-up files; it is not a
 * cryptographic hash. Four independent lanes of word operations run at memory speed (the
 * byte-wise FNV-1a of format 1 took seconds on a 3.5 GB UNet). o2r_wsum_* is the streaming form
 * for writers that produce the payload in pieces; header-only so the compiler shares it. */
struct o2r_wsum {
    uint64_t lane[4]; /* lane states */
    uint64_t nbytes;  /* bytes consumed */
    uint64_t part;    /* bytes of the current partial word (little-endian) */
};
static inline void o2r_wsum_init(struct o2r_wsum *s)
{
    s->lane[0] = 0x243f6a8885a308d3ull;
    s->lane[1] = 0x13198a2e03707344ull;
    s->lane[2] = 0xa4093822299f31d0ull;
    s->lane[3] = 0x082efa98ec4e6c89ull;
    s->nbytes = 0;
    s->part = 0;
}
static inline uint64_t o2r_wsum_mix(uint64_t lane, uint64_t w)
{
    uint64_t x = lane ^ w;
    return ((x << 29) | (x >> 35)) * 0x9e3779b97f4a7c15ull;
}
static inline void o2r_wsum_update(struct o2r_wsum *s, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    while (n && (s->nbytes & 7)) { /* finish a partial word */
        s->part |= (uint64_t)*p++ << (8 * (s->nbytes & 7));
        n--;
        if ((++s->nbytes & 7) == 0) {
            uint64_t i = (s->nbytes >> 3) - 1;
            s->lane[i & 3] = o2r_wsum_mix(s->lane[i & 3], s->part);
            s->part = 0;
        }
    }
    if (s->nbytes & 7) return; /* n ran out inside a partial word */
    uint64_t l0 = s->lane[0], l1 = s->lane[1], l2 = s->lane[2], l3 = s->lane[3];
    uint64_t i = s->nbytes >> 3;
    while (n >= 8 && (i & 3)) {
        uint64_t w;
        memcpy(&w, p, 8);
        if ((i & 3) == 1) l1 = o2r_wsum_mix(l1, w);
        else if ((i & 3) == 2) l2 = o2r_wsum_mix(l2, w);
        else l3 = o2r_wsum_mix(l3, w);
        p += 8, n -= 8, i++;
    }
    while (n >= 32) { /* i % 4 == 0 here */
        uint64_t w[4];
        memcpy(w, p, 32);
        l0 = o2r_wsum_mix(l0, w[0]);
        l1 = o2r_wsum_mix(l1, w[1]);
        l2 = o2r_wsum_mix(l2, w[2]);
        l3 = o2r_wsum_mix(l3, w[3]);
        p += 32, n -= 32, i += 4;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if ((i & 3) == 0) l0 = o2r_wsum_mix(l0, w);
        else if ((i & 3) == 1) l1 = o2r_wsum_mix(l1, w);
        else l2 = o2r_wsum_mix(l2, w);
        p += 8, n -= 8, i++;
    }
    s->lane[0] = l0, s->lane[1] = l1, s->lane[2] = l2, s->lane[3] = l3;
    s->nbytes = i << 3;
    for (unsigned k = 0; k < n; k++) s->part |= (uint64_t)p[k] << (8 * k);
    s->nbytes += n;
}
static inline uint64_t o2r_wsum_final(const struct o2r_wsum *s)
{
    uint64_t lane[4] = {s->lane[0], s->lane[1], s->lane[2], s->lane[3]};
    if (s->nbytes & 7) {
        uint64_t i = s->nbytes >> 3;
        lane[i & 3] = o2r_wsum_mix(lane[i & 3], s->part);
    }
    uint64_t h = O2R_FNV_SEED;
    uint64_t fold[5] = {lane[0], lane[1], lane[2], lane[3], s->nbytes};
    for (int k = 0; k < 5; k++)
        for (int b = 0; b < 8; b++) h = (h ^ ((fold[k] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    return h;
}
/* o2r_wsum over one contiguous payload. */
static inline uint64_t o2r_weights_checksum(const void *data, size_t n)
{
    struct o2r_wsum s;
    o2r_wsum_init(&s);
    o2r_wsum_update(&s, data, n);
    return o2r_wsum_final(&s);
}

#ifdef __cplusplus
}
#endif
#endif
