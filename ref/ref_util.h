/* ref_util.h — internal helpers of the reference ops (ref/ref_*.c), shared with shape inference
 * (passes/infer.c) so that both compute geometry (broadcast, Slice ranges, Conv/Pool pads,
 * Resize scales, Reduce axes, Split sizes, Pad amounts) from one piece of code.
 *
 * Assumes: the normalized IR of ir/ir.h (axes/pads/splits/... are constant inputs).
 * Guarantees: every helper that reads node parameters checks them against the ONNX spec and
 * reports user errors through ir_fatal_node() naming the values involved.
 * Element access: every dtype is read as double (ref_get_f) or as int64 (ref_get_i, uint64 kept as
 * its bit pattern) and written back with the ONNX Cast conversion rules (ref_set_f / ref_set_i).
 */
#ifndef ONNX2CL_REF_UTIL_H
#define ONNX2CL_REF_UTIL_H

#include "ir/ir.h"
#include "ref/ref.h"

/* ---- dtype classes ---------------------------------------------------------------------- */
static inline bool ref_is_float(enum ir_dtype t)
{
    return t == IR_F32 || t == IR_F64 || t == IR_F16 || t == IR_BF16;
}
static inline bool ref_is_unsigned(enum ir_dtype t)
{
    return t == IR_U8 || t == IR_U16 || t == IR_U32 || t == IR_U64;
}
static inline bool ref_is_signed_int(enum ir_dtype t)
{
    return t == IR_I8 || t == IR_I16 || t == IR_I32 || t == IR_I64;
}
static inline bool ref_is_int(enum ir_dtype t)
{
    return ref_is_unsigned(t) || ref_is_signed_int(t);
}
/* Numeric or bool: the dtypes the reference implements. */
static inline bool ref_is_supported(enum ir_dtype t)
{
    return ref_is_float(t) || ref_is_int(t) || t == IR_BOOL;
}

/* ---- element access ------------------------------------------------------------------------ */
/* Element i of a buffer of dtype t, as double (ints converted, bool 0/1). */
double ref_get_f(const void *p, enum ir_dtype t, int64_t i);
/* Element i as int64: ints sign/zero-extended (uint64 as its bit pattern), bool 0/1,
 * floats truncated toward zero (NaN -> 0, saturating). */
int64_t ref_get_i(const void *p, enum ir_dtype t, int64_t i);
/* Stores a double into element i: float types round to nearest even (f16/bf16 per IEEE),
 * ints truncate toward zero (out-of-range values saturate), bool = (v != 0), NaN -> true. */
void ref_set_f(void *p, enum ir_dtype t, int64_t i, double v);
/* Stores an int64 into element i: ints wrap (two's complement), floats convert, bool = (v != 0). */
void ref_set_i(void *p, enum ir_dtype t, int64_t i, int64_t v);
/* Copies element si of src (dtype t) to element di of dst (same dtype), byte-exact. */
void ref_copy_elem(void *dst, int64_t di, const void *src, int64_t si, size_t esize);
float ref_bf16_to_f32(uint16_t h);
uint16_t ref_f32_to_bf16(float f);

/* ---- values ----------------------------------------------------------------------------------- */
/* Product of the dims of v (dims must be known). */
int64_t ref_numel_v(const struct ir_value *v);
/* Allocates the data of output value `v` (numel * dtype size bytes, zeroed) in the arena and
 * sets v.data / v.nbytes; returns the buffer. */
void *ref_alloc_out(struct ir_graph *g, uint32_t v);
/* Row-major strides (elements) of dims. */
void ref_strides(const int64_t *dims, int rank, int64_t *strides);
/* Strides to read an input of dims in_dims[in_rank] broadcast (numpy, right-aligned) to a
 * tensor of rank out_rank: stride 0 on broadcast axes. */
void ref_bcast_strides(const int64_t *in_dims, int in_rank, int out_rank, int64_t *strides);

/* Temporary host buffer (malloc; fatal on out of memory). Free with free(). */
void *ref_tmp(size_t bytes);

/* Multi-operand broadcast iterator over the elements of an output, in row-major order, keeping
 * the element offset of each (broadcast) input. */
#define REF_MAX_IT 4
struct ref_iter {
    int rank;                              /* output rank */
    int nin;                               /* number of operands */
    int64_t dims[IR_MAX_RANK];             /* output dims */
    int64_t idx[IR_MAX_RANK];              /* current output coordinate */
    int64_t st[REF_MAX_IT][IR_MAX_RANK];   /* per-operand strides (0 on broadcast axes) */
    int64_t off[REF_MAX_IT];               /* per-operand current element offset */
};
/* ins[j] == NULL gives an operand of one element (offset stays 0). */
void ref_iter_init(struct ref_iter *it, const struct ir_value *out, const struct ir_value **ins,
                   int nin);
static inline void ref_iter_next(struct ref_iter *it)
{
    for (int k = it->rank - 1; k >= 0; k--) {
        it->idx[k]++;
        for (int j = 0; j < it->nin; j++) it->off[j] += it->st[j][k];
        if (it->idx[k] < it->dims[k]) return;
        for (int j = 0; j < it->nin; j++) it->off[j] -= it->st[j][k] * it->dims[k];
        it->idx[k] = 0;
    }
}

/* ---- geometry shared with shape inference ---------------------------------------------------- */
/* Numpy multidirectional broadcast of a and b into out; false if incompatible. */
bool ref_bcast_dims(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out, int *rout);
/* Normalizes axis in [-rank, rank) (or [-rank, rank] when inclusive) to [0, rank); fatal with
 * the attribute name otherwise. */
int ref_axis(const struct ir_graph *g, const struct ir_node *n, int64_t axis, int rank,
             bool inclusive, const char *what);
/* Reads constant int input k of n into out[] (at most cap entries); returns the count.
 * Fatal if the input is not constant (naming it) or has more than cap entries. */
int ref_const_ints(const struct ir_graph *g, const struct ir_node *n, uint32_t k, int64_t *out,
                   int cap, const char *what);

/* Slice: effective start and step per axis of the input, and output dims (ONNX Slice-13). */
void ref_slice_params(const struct ir_graph *g, const struct ir_node *n, const int64_t *dims,
                      int rank, int64_t *start, int64_t *step, int64_t *out_dims);

/* Convolution / pooling geometry for nsp spatial dims. */
struct ref_conv_geom {
    int nsp;                     /* number of spatial dims (1..3 for conv; up to 6 for pools) */
    int64_t in[6];               /* input spatial dims */
    int64_t out[6];              /* output spatial dims */
    int64_t k[6];                /* kernel dims */
    int64_t s[6];                /* strides */
    int64_t d[6];                /* dilations */
    int64_t pb[6];               /* padding at the beginning of each spatial dim */
    int64_t pe[6];               /* padding at the end of each spatial dim */
    int64_t group;               /* groups (conv only) */
};
/* Conv-11 / MaxPool-12 / AveragePool-19 geometry from attributes and the input (and, for Conv,
 * the weight) dims: auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID), pads, strides,
 * dilations, kernel_shape (pools; Conv defaults to the weight's), ceil_mode (pools). */
void ref_conv_geom(const struct ir_graph *g, const struct ir_node *n, const int64_t *xdims,
                   int xrank, const int64_t *kdims, bool is_pool, struct ref_conv_geom *geo);
/* ConvTranspose-11 geometry (output_padding, output_shape, auto_pad per the spec text). */
void ref_convt_geom(const struct ir_graph *g, const struct ir_node *n, const int64_t *xdims,
                    int xrank, const int64_t *wdims, struct ref_conv_geom *geo);

/* Resize-10..19 / Upsample: per-axis scale (output/input) and output dims. */
void ref_resize_params(const struct ir_graph *g, const struct ir_node *n, const int64_t *dims,
                       int rank, double *scales, int64_t *out_dims);

/* Reduce*: marks reduced axes in mask[rank]; returns false if the op is a no-op (empty axes with
 * noop_with_empty_axes=1). Axes from input 1 (normalized IR). */
bool ref_reduce_axes(const struct ir_graph *g, const struct ir_node *n, int rank, bool *mask);

/* Split: sizes of the n->noutputs outputs along axis (input 1, num_outputs or equal split). */
void ref_split_sizes(const struct ir_graph *g, const struct ir_node *n, int64_t dim,
                     int64_t *sizes);

/* Pad: begin/end pad per axis (negative = crop) from inputs 1 (pads) and 3 (axes). */
void ref_pad_amounts(const struct ir_graph *g, const struct ir_node *n, int rank, int64_t *pb,
                     int64_t *pe);

/* ---- per-family evaluators (return false if op/dtype unsupported) ----------------------------- */
bool ref_eval_elementwise(struct ir_graph *g, uint32_t node);
bool ref_eval_movement(struct ir_graph *g, uint32_t node);
bool ref_eval_linalg(struct ir_graph *g, uint32_t node);
bool ref_eval_norm(struct ir_graph *g, uint32_t node);
bool ref_eval_reduce(struct ir_graph *g, uint32_t node);
bool ref_eval_resize(struct ir_graph *g, uint32_t node);
bool ref_eval_fill(struct ir_graph *g, uint32_t node);
bool ref_eval_gridsample(struct ir_graph *g, uint32_t node); /* ref/ref_gridsample.c */
bool ref_eval_roialign(struct ir_graph *g, uint32_t node);   /* ref/ref_roialign.c */
bool ref_eval_det(struct ir_graph *g, uint32_t node);        /* ref/ref_det.c */

/* LpPool attribute p (default 2), checked > 0 (fatal otherwise); ref/ref_linalg.c and
 * codegen/lower_pool.c. */
int64_t ref_lp_pool_p(const struct ir_graph *g, const struct ir_node *n);
/* GridSample-16/20/22 attributes, normalized: mode 0 linear ("bilinear"/"linear"), 1 nearest,
 * 2 cubic ("bicubic"/"cubic"); padding 0 zeros, 1 border, 2 reflection; align_corners 0/1.
 * Fatal (naming attribute and value) on anything else. ref/ref_gridsample.c. */
void ref_gridsample_attrs(const struct ir_graph *g, const struct ir_node *n, int *mode,
                          int *padding, int *align_corners);
/* RoiAlign-10/16 attributes: mode 0 avg / 1 max, half_pixel (coordinate_transformation_mode;
 * default output_half_pixel before opset 16, half_pixel from 16), sampling_ratio >= 0,
 * spatial_scale. Fatal on other values. ref/ref_roialign.c. */
void ref_roialign_attrs(const struct ir_graph *g, const struct ir_node *n, int *mode,
                        int *half_pixel, int64_t *sampling_ratio, float *spatial_scale);

/* Scatter family (ref/ref_scatter.c): ScatterElements, Scatter, ScatterND, TensorScatter,
 * ReverseSequence, MaxUnpool. ref_scatter_infer checks the inputs against the ONNX spec (fatal,
 * naming values and attributes) and writes the output dims/dtype, returning the rank;
 * ref_scatter_reduction maps the reduction attribute to 0 none, 1 add, 2 mul, 3 max, 4 min (fatal
 * on other values or a value the model's opset lacks); ref_maxunpool_geom gives MaxUnpool's
 * inferred output dims [N, C, (in-1)*stride - pads + kernel]. */
bool ref_eval_scatter(struct ir_graph *g, uint32_t node);
int ref_scatter_infer(const struct ir_graph *g, const struct ir_node *n, int64_t *out,
                      enum ir_dtype *dtype);
int ref_scatter_reduction(const struct ir_graph *g, const struct ir_node *n);
void ref_maxunpool_geom(const struct ir_graph *g, const struct ir_node *n, const int64_t *xdims,
                        int rank, int64_t *inferred);

#endif
