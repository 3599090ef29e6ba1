/* fill.cl — ConstantOfShape, EyeLike, Range when shape folding did not remove them
 * (ops.def "fill").
 *   fill(y, n, bits):         y[i] = bits (instantiated per element SIZE: the low bytes of the
 *                             64-bit pattern are the element, little-endian).
 *   eye(y, n, C, k, bits):    y dense [R, C]; y[r, j] = (j - r == k) ? bits : 0 (per SIZE).
 *   range(start, delta, y, n): y[i] = start[0] + i * delta[0] (per real type; f16 computed
 *                             in float). One work-item per element.
 * Element-type block: see unary.cl.
 */
#if O2C_TID == O2C_ID_f64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if O2C_TID == O2C_ID_f16
#define KA_CT float
#define KA_LD(p, i) vload_half((i), (p))
#define KA_ST(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define KA_CT T
#define KA_LD(p, i) ((p)[(i)])
#define KA_ST(p, i, v) ((p)[(i)] = (T)(v))
#endif

#if O2C_TID == O2C_ID_u8 || O2C_TID == O2C_ID_u16 || O2C_TID == O2C_ID_u32 || O2C_TID == O2C_ID_u64
__kernel void KN(fill)(__global T *y, int n, long bits)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    y[i] = (T)bits;
}

__kernel void KN(eye)(__global T *y, int n, int C, int k, long bits)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    y[i] = (i % C) - (i / C) == k ? (T)bits : (T)0;
}
#endif

__kernel void KN(range)(__global const T *start, __global const T *delta, __global T *y, int n)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    KA_ST(y, i, KA_LD(start, 0) + (KA_CT)i * KA_LD(delta, 0));
}
#undef KA_CT
#undef KA_LD
#undef KA_ST
