/* ref_quant.h — geometry and type rules of QuantizeLinear / DequantizeLinear /
 * DynamicQuantizeLinear and of BitCast, shared by shape inference (passes/infer.c), the
 * reference ops (ref/ref_quant.c, ref/ref_elementwise.c) and the lowering (codegen/lower_quant.c,
 * codegen/lower_bitcast.c), so that all of them read the attributes and shapes one way.
 *
 * Assumes: the node's inputs have known dims and dtypes.
 * Guarantees: every helper checks the node against the ONNX spec (QuantizeLinear /
 * DequantizeLinear 10, 13, 19, 21, 23, 25; BitCast 26) and reports what it does not support
 * through ir_fatal_node(), naming the op, the attribute or input, and the value.
 */
#ifndef ONNX2CL_REF_QUANT_H
#define ONNX2CL_REF_QUANT_H

#include "ir/ir.h"

/* Where the scale (and zero point) element of x's element i lives. With x viewed as
 * [outer, d, inner] around the quantization axis and i = (o * d + c) * inner + r:
 *   scale index = o * s_outer + (c / block) * s_axis + r * s_inner.
 * Per-tensor: every stride 0. Per-axis (scale [d]): s_axis 1, block 1. Blocked (scale of x's
 * rank, ceil(d / block_size) along axis): s_outer = sd * inner, s_axis = inner, s_inner = 1. */
struct ref_quant_geom {
    int64_t outer;   /* product of x's dims before the axis (numel for per-tensor) */
    int64_t d;       /* x's dim along the axis (1 for per-tensor) */
    int64_t inner;   /* product of x's dims after the axis (1 for per-tensor) */
    int64_t block;   /* elements along the axis sharing one scale (>= 1) */
    int64_t s_outer; /* scale stride per outer index */
    int64_t s_axis;  /* scale stride per block along the axis */
    int64_t s_inner; /* scale stride per inner index */
};

/* Granularity of node n (QuantizeLinear or DequantizeLinear: x = input 0, scale = input 1,
 * zero point = optional input 2) from the scale's shape and the attributes axis (default 1)
 * and block_size (default 0; opset 21+). Per-tensor when the scale has one element and rank
 * <= 1 and block_size is 0; per-axis for a 1-D scale of x's dim at axis; blocked when
 * block_size > 0 (scale of x's rank, equal dims except ceil(d / block_size) at axis). The zero
 * point must have the scale's element count (and its dims unless per-tensor). Fatal otherwise. */
void ref_quant_geom(const struct ir_graph *g, const struct ir_node *n, struct ref_quant_geom *q);

/* Index of the scale / zero-point element for x's element i. */
static inline int64_t ref_quant_sidx(const struct ref_quant_geom *q, int64_t i)
{
    const int64_t r = i % q->inner, t = i / q->inner;
    return (t / q->d) * q->s_outer + ((t % q->d) / q->block) * q->s_axis + r * q->s_inner;
}

/* Output element type of a QuantizeLinear (zero point's type, else output_dtype, else uint8;
 * int8/uint8/int16/uint16 only) or DequantizeLinear (output_dtype, else the scale's type;
 * float32/float16 only) node; also checks x, scale, zero point and precision types. Fatal
 * (naming the type) for anything else: float8/int4/int2/float4 and bfloat16 are not supported. */
enum ir_dtype ref_quant_out_dtype(const struct ir_graph *g, const struct ir_node *n);

/* QuantizeLinear: whether x / scale is a float16 division (attribute precision = float16, or
 * precision absent and x and scale both float16, as numpy's promotion in the ONNX reference);
 * otherwise it is float32's. */
bool ref_quant_half_div(const struct ir_graph *g, const struct ir_node *n);

/* Integer range [lo, hi] of a quantized type (int8/uint8/int16/uint16/int32). */
void ref_quant_range(enum ir_dtype t, int64_t *lo, int64_t *hi);

/* BitCast-26: the target type (attribute `to`); fatal if it is missing, not a type onnx2cl
 * stores (string, bfloat16, float8, int4, complex, ...), or of another size than the input's. */
enum ir_dtype ref_bitcast_dtype(const struct ir_graph *g, const struct ir_node *n);

/* Reference evaluation of QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (all
 * arithmetic in float32, as the kernels): returns false for dtypes it does not handle. */
bool ref_eval_quant(struct ir_graph *g, uint32_t node);

#endif
