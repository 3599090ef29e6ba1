/* lower_fconv.h — the direct-convolution launch shared by Conv (lower_conv.c) and o2c.Conv
 * (lower_fconv.c); kernels in kernels/fconv.cl. */
#ifndef ONNX2CL_LOWER_FCONV_H
#define ONNX2CL_LOWER_FCONV_H

#include "codegen/lower.h"
#include "ref/ref_util.h"

/* Spatial parameters of a 1-, 2- or 3-D (transposed) convolution padded to 3-D, index 0 = D,
 * 1 = H, 2 = W, unit/zero where the model has fewer spatial dims: in/out/kernel sizes from x, y,
 * w, strides, dilations and begin pads from geo (ref_conv_geom / ref_convt_geom). */
void conv_geom_3d(const struct ir_value *xv, const struct ir_value *yv, const struct ir_value *wv,
                  int rank, const struct ref_conv_geom *geo, int64_t in[3], int64_t out[3],
                  int64_t k[3], int64_t s[3], int64_t d[3], int64_t p[3]);

/* Emits one launch computing output 0 of node (a Conv-11 or o2c.Conv: inputs x [N,C,spatial]
 * float32, w [OC, C/group, k...], optional bias input 2 with OC elements; the node's Conv
 * attributes) followed by the epilogue y = (act(conv + bias) + r) / div: act 0 none, 1 silu,
 * 2 relu; r = IR_NONE or a value broadcasting to y per (n, channel, position); div 1 = none.
 * Fatal (ir_fatal_node) for other dtypes, 0 or more than 3 spatial dims, bad groups, shapes, or
 * tensors of >= 2^31 elements. */
void fconv_emit(struct cg_ctx *cg, struct ir_graph *g, uint32_t node, int64_t act, uint32_t r,
                float div);

#endif
