/* lower_ka.h — helpers shared by the elementwise and data-movement lowerings
 * (lower_unary.c ... lower_fill.c): launch sizing, numel checks, broadcasting strides, axis
 * collapsing and the generic strided copy (kernels/transpose.cl copy_strided).
 * Internal to codegen/; lowerings outside this group use codegen/lower.h only.
 */
#ifndef ONNX2CL_LOWER_KA_H
#define ONNX2CL_LOWER_KA_H

#include "lower.h"

/* Most axes the elementwise kernels take after collapsing (binary/where: 6; copies: 8). */
#define KA_EW_RANK 6
#define KA_COPY_RANK 8
/* Most operands one collapse handles (output + 3 inputs). */
#define KA_MAX_OPS 4
/* Elements of the innermost axis one work-item handles in the chunked broadcast / strided-copy
 * kernels (KA_CH in kernels/binary.cl and kernels/transpose.cl: keep equal). */
#define KA_CH 256

/* Element count of value v; fatal (naming node and value) if it is >= 2^31, the kernels'
 * int indexing limit. */
int64_t ka_numel(const struct ir_graph *g, uint32_t node, uint32_t v);
/* 1-D launch of `kernel` over n work-items (n >= 1): gws rounded up to a multiple of the work-
 * group size chosen here (kernels exit for i >= n). Arguments follow with cg_arg_*. */
void ka_launch(struct cg_ctx *cg, uint32_t node, const char *kernel, int64_t n);
/* The unsigned type of the same size as dtype (u8/u16/u32/u64): movement kernels are
 * instantiated per element size. Fatal for types without a size (string). */
enum ir_dtype ka_size_type(const struct ir_graph *g, uint32_t node, enum ir_dtype dtype);
/* Strides (elements) of value v broadcast to the `rank`-dim shape `dims` (numpy rules, v's dims
 * right-aligned): 0 on broadcast axes. Fatal if v does not broadcast to dims. */
void ka_bcast_strides(const struct ir_graph *g, uint32_t node, uint32_t v, int rank,
                      const int64_t *dims, int64_t *strides);
/* Collapses an iteration space: drops size-1 axes and merges axis k into k-1 where every
 * operand's strides are contiguous across them (s[k-1] == s[k] * d[k]). dims/strides are
 * rewritten in place (rank 0 becomes rank 1 of size 1); returns the new rank. */
int ka_collapse(int rank, int64_t *dims, int nops, int64_t (*strides)[IR_MAX_RANK * 2]);
/* Emits y[yoff + sum c_k*ys_k] = x[xoff + sum c_k*xs_k] over dims (rank <= 2*IR_MAX_RANK,
 * collapsed here; fatal if more than KA_COPY_RANK axes remain) with the copy kernels of
 * kernels/transpose.cl for the element size of x. Nothing is emitted for an empty space. */
void ka_strided_copy(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t x, uint32_t y,
                     int rank, const int64_t *dims, const int64_t *xs, int64_t xoff,
                     const int64_t *ys, int64_t yoff);
/* Which offset view ka_move may make instead of a copy (codegen/codegen.c banner). */
enum ka_view {
    KA_COPY = 0,    /* always copy */
    KA_Y_IN_X = 1,  /* y may be a view of x (Slice, Split): cg_view_into */
    KA_X_IN_Y = 2,  /* x may be written in place into y (Concat): cg_place_into */
};
/* ka_strided_copy; when the copy moves one contiguous run that covers all of y (KA_Y_IN_X,
 * yoff 0) or all of x (KA_X_IN_Y, xoff 0) and codegen accepts the view at the other side's
 * byte offset, the copy is marked as the view's (cg_view_copied: removed unless the view is
 * undone). Returns whether a view was made. */
bool ka_move(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t x, uint32_t y,
             int rank, const int64_t *dims, const int64_t *xs, int64_t xoff, const int64_t *ys,
             int64_t yoff, enum ka_view view);
/* Fills every element of y with the dtype-sized low bytes of the little-endian 64-bit pattern
 * `bits` (kernels/fill.cl fill, per element size); nothing is emitted for an empty y.
 * Used by ConstantOfShape and by reductions over an empty axis (lower_reduce.c). */
void ka_fill(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, uint32_t y, uint64_t bits);
/* Row-major strides of a dims array; returns the element count. */
int64_t ka_dense_strides(int rank, const int64_t *dims, int64_t *strides);

#endif
