/* lower.h — how one IR node becomes OpenCL kernel launches.
 *
 * For every live node, codegen calls lower_<FAMILY>(cg, g, node_id), FAMILY taken from ops.def.
 * A lowering function:
 *   1. asks for its kernel source:   cg_use(cg, "binary", IR_F32)  -> the suffix "f32"
 *      (kernels/binary.cl is then included once with T=float, TS=f32; its kernels are named
 *      through KN(name) and become e.g. "add_f32");
 *   2. emits one or more launches:   cg_launch(cg, "add_f32", 1, gws, NULL);
 *      followed by their arguments:  cg_arg_buf(cg, value), cg_arg_i32(cg, n), ...
 * Values are passed by id; codegen maps them to device buffers (weights, arena slots, views).
 * Constant inputs that a kernel needs as data (e.g. Conv weights) are passed with cg_arg_buf and
 * become weight buffers; constant inputs that only parameterize the launch (e.g. Slice starts)
 * are read at compile time with ir_const_i64 and passed as scalars.
 *
 * Kernel source conventions (kernels/<family>.cl, OpenCL C 1.2):
 *   - codegen emits a prelude once (see codegen/codegen.c: KN(), bool as uchar, INDEX macros),
 *     then, per (family, dtype) used:   #define T <ctype>  #define TS <suffix>  <source>  #undef...
 *   - ctype/suffix: f32 float, f64 double, f16 half, i8 char, u8 uchar, i16 short, u16 ushort,
 *     i32 int, u32 uint, i64 long, u64 ulong, bool uchar (suffix "b").
 *   - a family whose kernels do not depend on T should still use KN() names; codegen only
 *     instantiates the dtypes that are asked for.
 *   - helper functions inside a family file must also be named through KN() (the file may be
 *     included several times).
 * Errors: a lowering that cannot handle a node calls ir_fatal_node() with the reason (op,
 * attribute, value); it never emits a wrong kernel.
 */
#ifndef ONNX2CL_LOWER_H
#define ONNX2CL_LOWER_H

#include "../ir/ir.h"

struct cg_ctx;

/* Includes kernels/<family>.cl instantiated for dtype; returns the kernel-name suffix ("f32"). */
const char *cg_use(struct cg_ctx *cg, const char *family, enum ir_dtype dtype);
/* Adds generated OpenCL source (e.g. one fused elementwise kernel) to the program, after the
 * family sources; identical texts are included once. Kernel names inside must be unique per
 * distinct text (e.g. derived from a hash of the text). */
void cg_add_source(struct cg_ctx *cg, const char *src);
/* OpenCL C type name for a dtype ("float", "long", "uchar" for bool); fatal if unsupported. */
const char *cg_ctype(enum ir_dtype dtype);
/* Starts a launch of `kernel` for node `node_id` (its name goes into comments and errors).
 * gws: work_dim global sizes (each >= 1; a launch with a zero-sized gws is skipped by the
 * caller); lws: NULL = driver's choice. */
void cg_launch(struct cg_ctx *cg, uint32_t node_id, const char *kernel, unsigned work_dim,
               const size_t *gws, const size_t *lws);
/* Arguments of the current launch, in kernel-signature order. A lowering may pass values it
 * created itself (ir_const_add for repacked weights, cg_temp for scratch). */
void cg_arg_buf(struct cg_ctx *cg, uint32_t value);
void cg_arg_i32(struct cg_ctx *cg, int64_t v); /* fatal if v does not fit in int32 */
void cg_arg_i64(struct cg_ctx *cg, int64_t v);
void cg_arg_f32(struct cg_ctx *cg, float v);
void cg_arg_local(struct cg_ctx *cg, size_t bytes);
/* A run-time check for node node_id instead of a kernel launch (runtime/onnx2cl_rt.h
 * o2r_launch.check): when the run reaches it, every launch before it has completed, the runtime
 * reads `cond` (a bool scalar value) and, when it equals fail_if (0 or 1), stops the run with
 * `message` (status O2R_ERR_UNSUPPORTED). Lowering of ops.def o2c.Check. */
void cg_check(struct cg_ctx *cg, uint32_t node_id, uint32_t cond, int fail_if, const char *message);
/* A scratch device buffer live only during node `node_id` (e.g. per-row statistics). */
uint32_t cg_temp(struct cg_ctx *cg, uint32_t node_id, enum ir_dtype dtype, int64_t numel);
/* Output value `out` of the current node shares the buffer of `in` (used for views that
 * codegen cannot see, e.g. Identity inside a lowering). */
void cg_alias(struct cg_ctx *cg, uint32_t out, uint32_t in);

/* ---- offset views (codegen/codegen.c banner) ----
 * Both return false when the rules do not allow the view (the caller copies) and true when
 * codegen made it: the caller then still emits the copy, at once, and calls cg_view_copied(),
 * because codegen may undo the view after planning memory (then the copy runs; otherwise the
 * copy's launches are removed). `off` is a byte offset, it must be a multiple of O2R_ALIGN
 * (512); the contained value must be written by a launched node, must not reach a graph input
 * or output through views, must not be a view of another buffer already, and the view must not
 * raise the estimated peak of live activation bytes. */
/* Concat in place: input x's bytes are bytes [off, off + size(x)) of output y, written there by
 * x's producer. */
bool cg_place_into(struct cg_ctx *cg, uint32_t x, uint32_t y, uint64_t off);
/* Slice/Split view: output y's bytes are bytes [off, off + size(y)) of input x. */
bool cg_view_into(struct cg_ctx *cg, uint32_t y, uint32_t x, uint64_t off);
/* The launches since the last cg_place_into / cg_view_into that returned true are its copy. */
void cg_view_copied(struct cg_ctx *cg);

/* ---- kernel variants (docs/kernel_variants.md) ----
 * A node may be computed by different kernels on different kinds of device: CPU-shaped kernels
 * (register tiles, float16 vectors, one work-item per row) and GPU-shaped ones (__local tiles,
 * coalesced loads, work-group reductions). The generated file carries both; the runtime picks
 * one class per device at init (runtime/schedule.c) and runs only that class's launches.
 * A lowering says WHAT a node computes and hands it to a schedule function (codegen/sched_*.c)
 * that emits HOW, once per class:
 *     cg_variant(cg, CG_VARIANT_CPU);  ... cg_use / cg_launch / cg_arg_* of the CPU kernel ...
 *     cg_variant(cg, CG_VARIANT_GPU);  ... the same outputs computed by the GPU kernel ...
 * Both variants must write the same output values; each may use its own temporaries, constants
 * (e.g. repacked weights) and kernel sources, which are tagged with the class that asked for
 * them (sources only one class uses are not compiled for the other). The mask is reset to
 * CG_VARIANT_ALL before every node, so lowerings with one variant for every device do nothing.
 * Lowerings never test the device: there is no device at compile time. */
enum { CG_VARIANT_CPU = 1, CG_VARIANT_GPU = 2, CG_VARIANT_ALL = 3 }; /* == O2R_VARIANT_* */
/* Sets the class mask of the launches, cg_use and cg_add_source calls that follow (until the
 * next call or the end of the node); returns the previous mask. */
unsigned cg_variant(struct cg_ctx *cg, unsigned mask);

/* ---- tunable launches (docs/tuning.md) ----
 * A schedule whose kernel is a tiled instance of kernels/gemm_gpu.cl starts the launch under the
 * default instance's name (o2r_tunable_kernel_name) and geometry, then calls cg_tunable with
 * what the runtime needs to choose other tiles at init: t->launch is filled in (the launch just
 * started); the instance's MACRO(...) line is written by the runtime, not added as source.
 * Only for a GEMM with rows, cols, k, z >= 1 (asserted; runtime/tune.c refuses others at init):
 * degenerate products (an empty dim) get no launch or a plain kernel from their lowering. */
struct o2r_tunable;
void cg_tunable(struct cg_ctx *cg, const struct o2r_tunable *t);

/* ---- weight storage (onnx2cl --weights-dtype; docs/kernel_variants.md "Weight layouts") ----
 * A lowering that repacks a constant weight for its kernels (GEMM panels, conv panels, embedding
 * tables) makes the packed constant with cg_weight_const(): stored as float32, or as IEEE half
 * when the build stores weights as float16 (cg_options.weights_dtype). Its kernels then take the
 * storage suffix cg_wsfx() of that constant ("f32" / "f16") as their WS macro argument
 * (kernels/prelude.cl O2C_WT / O2C_WLOAD*: half is read with vload_half, arithmetic is float). */
/* IR_F16 when this build stores repacked weights as half, else IR_F32. */
enum ir_dtype cg_weight_dtype(const struct cg_ctx *cg);
/* Adds constant `name` (dims[rank]) whose float32 values fill makes (a lazy transform of
 * constants, struct ir_lazy in ir/ir.h, whose src[3] must be unused: the bytes are made only
 * when the weights file is written, one tensor at a time, never all at once): kept as float32,
 * or converted to half (round to nearest even, subnormals, inf and NaN kept: ref_f32_to_f16)
 * under IR_F16 storage; layout: the layout kind, part of the weights layout hash (e.g.
 * "panels", "fconv_v8"); it and the dims must follow from the source weight's dims only, never
 * from activation shapes. Under IR_F16 storage a finite value beyond half's range
 * (|x| >= 65520) is fatal when the weights are written, naming the constant, the node being
 * lowered now and --weights-dtype f32. Recorded as a storage-dtype weight
 * (cg_weights_bytes_as). Returns the value id. */
uint32_t cg_weight_const(struct cg_ctx *cg, const char *name, const char *layout, int rank,
                         const int64_t *dims, const struct ir_lazy *fill);
/* Says that weight constant v (made by cg_weight_const, data in the form the weights file keeps)
 * is rearranged at load into the form r describes (r->buf is filled in by codegen): for packing
 * choices that depend on activation shapes, so the weights file stays the same for every
 * --shape (runtime/repack.c). */
struct o2r_repack;
void cg_weight_repack(struct cg_ctx *cg, uint32_t v, const struct o2r_repack *r);
/* A constant float32 operand v that a kernel can also read as half (embedding tables, large
 * elementwise constants) when cg_weight_operand_ok(): under half storage a half copy
 * "<v>.f16" (made once, shared), else v itself; recorded as a storage-dtype weight either way. */
uint32_t cg_weight_operand(struct cg_ctx *cg, uint32_t v);
/* Whether constant v may be read as half: float32 data of >= 1024 elements, no finite one
 * beyond half's range (|x| >= 65520 would become inf): rounding then changes each element by at
 * most 2^-11 relative or 2^-25 absolute (subnormals); inf and NaN stay as they are. */
bool cg_weight_operand_ok(const struct ir_graph *g, uint32_t v);
/* The storage suffix of constant weight w: "f16" if it holds half, else "f32"; *name gets the
 * kernel-name suffix of that storage ("_h" for half, "" for float32) when name is not NULL. */
const char *cg_wsfx(const struct cg_ctx *cg, uint32_t w, const char **name);

/* Lowering entry points, one per family in ops.def, defined in codegen/lower_<family>.c.
 * cmake/lower_table.cmake lists the ones that exist in cg_lowerings[]; a family without one is
 * reported as "no OpenCL kernel for op X yet". */
#define LOWER_FAMILIES(F)                                                                     \
    F(unary) F(binary) F(where) F(clip) F(cast) F(transpose) F(concat) F(split) F(slice)      \
    F(gather) F(expand) F(pad) F(resize) F(trilu) F(fill) F(matmul) F(conv) F(pool)          \
    F(softmax) F(norm) F(reduce) F(topk)
#define F(fam) bool lower_##fam(struct cg_ctx *cg, struct ir_graph *g, uint32_t node);
LOWER_FAMILIES(F)
#undef F

struct cg_lowering {
    const char *family;                                            /* ops.def FAMILY */
    bool (*fn)(struct cg_ctx *cg, struct ir_graph *g, uint32_t node); /* its lowering */
};
extern const struct cg_lowering cg_lowerings[]; /* generated; ends with {0, 0} */

/* Helpers shared by lowerings. */
/* Fatal (located at node n) when value v (IR_NONE: nothing) has >= 2^31 elements: the kernels
 * index with 32-bit ints. */
void cg_need_i32(const struct ir_graph *g, const struct ir_node *n, uint32_t v);
/* Row-major strides of value v (in elements) into out[rank]; returns rank. */
int cg_strides(const struct ir_graph *g, uint32_t v, int64_t *out);

#endif
