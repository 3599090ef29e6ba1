/* unary.cl — unary elementwise ops (ops.def family "unary"): y[i] = f(x[i]), x and y dense with
 * n elements (n < 2^31), one work-item per element; gws may be rounded up (items i >= n exit).
 *
 * Kernels (all: (__global const T *x, __global OUT *y, int n, float alpha, float beta)):
 *   float types (f32, f64, f16 stored as half and computed in float):
 *     abs neg exp log sqrt reciprocal sigmoid tanh sin cos tan asin acos atan sinh cosh asinh
 *     acosh atanh erf relu floor ceil round (half to even) sign softplus softsign
 *     elu(alpha) selu(alpha, gamma=beta) celu(alpha) leaky_relu(alpha) thresholded_relu(alpha)
 *     hard_sigmoid(alpha, beta) hard_swish mish gelu (exact, erf) gelu_tanh (approximate=tanh)
 *     isnan, isinf (alpha != 0: detect negative, beta != 0: detect positive): OUT = uchar (bool)
 *   signed integer types: abs neg sign relu bit_not;  unsigned: abs (identity) neg (wraps) sign
 *     relu bit_not (BitwiseNot-18);
 *   bool (T = uchar, suffix b): not.
 * NaN propagates through relu/sign/leaky_relu/elu/hard_sigmoid... (comparisons, not fmax/fmin).
 *
 * Erf (f32/f16): no erf() call (slow on PoCL). Rational minimax approximation on [-4, 4]
 * (x * P(x^2) / Q(x^2), P degree 6 / Q degree 4 in x^2, coefficients as in Eigen's
 * generic_fast_erf_float), clamped to +-1 outside; measured against C erf() in double over
 * 2,000,001 points of [-6, 6]: max |error| 3.3e-7 = max relative error (PoCL, with fma), 4.5e-7
 * in plain float32 arithmetic (numpy emulation); tests/kernels_a test_ka_kernels requires
 * < 6e-7 on the device. f64 uses erf().
 *
 * Element-type block (same in every family file of this group): O2C_TID identifies T at
 * preprocessing time (O2C_ID_<suffix>); KA_CT is the compute type (float for f16), KA_LD/KA_ST
 * load/store one element (vload_half/vstore_half_rte for f16: core OpenCL 1.2, no cl_khr_fp16).
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


/* Kernel names are built by pasting (name##_) so that a name which is also an OpenCL builtin
 * implemented as a macro by the compiler (exp, sin, max, ...) is never expanded. */
#ifndef O2C_KA_KN
#define O2C_KA_KN
#define KA_KN3(p, s) p##s
#define KA_KN2(p, s) KA_KN3(p, s)
#define KA_KN(p) KA_KN2(p, TS)
#endif
#define KC(c) ((KA_CT)(c))
#define KA_UN(name, EXPR)                                                                     \
    __kernel void KA_KN(name##_)(__global const T *x, __global T *y, int n, float alpha, float beta) \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const KA_CT v = KA_LD(x, i);                                                          \
        KA_ST(y, i, (EXPR));                                                                  \
    }
#define KA_UNB(name, EXPR)                                                                    \
    __kernel void KA_KN(name##_)(__global const T *x, __global uchar *y, int n, float alpha,        \
                           float beta)                                                        \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const KA_CT v = KA_LD(x, i);                                                          \
        y[i] = (uchar)((EXPR) ? 1 : 0);                                                       \
    }

#if O2C_T_FLOAT
#if O2C_TID == O2C_ID_f64
#define KA_ERF(v) erf(v)
#else
#define KA_ERF(v) ka_erf_f(v)
#endif
/* softplus(v) = log(1 + exp(v)), evaluated without overflow */
/* clamp to [0, 1] keeping NaN (OpenCL clamp() leaves NaN undefined) */
#define KA_CLAMP01(t) ((t) < KC(0) ? KC(0) : ((t) > KC(1) ? KC(1) : (t)))
#define KA_SOFTPLUS(v) ((v) > KC(0) ? (v) + log1p(exp(-(v))) : log1p(exp(v)))
KA_UN(abs, fabs(v))
KA_UN(neg, -v)
KA_UN(exp, exp(v))
KA_UN(log, log(v))
KA_UN(sqrt, sqrt(v))
KA_UN(reciprocal, KC(1) / v)
KA_UN(sigmoid, KC(1) / (KC(1) + exp(-v)))
KA_UN(tanh, tanh(v))
KA_UN(sin, sin(v))
KA_UN(cos, cos(v))
KA_UN(tan, tan(v))
KA_UN(asin, asin(v))
KA_UN(acos, acos(v))
KA_UN(atan, atan(v))
KA_UN(sinh, sinh(v))
KA_UN(cosh, cosh(v))
KA_UN(asinh, asinh(v))
KA_UN(acosh, acosh(v))
KA_UN(atanh, atanh(v))
KA_UN(erf, KA_ERF(v))
KA_UN(relu, v < KC(0) ? KC(0) : v)
KA_UN(floor, floor(v))
KA_UN(ceil, ceil(v))
KA_UN(round, rint(v))
KA_UN(sign, v > KC(0) ? KC(1) : (v < KC(0) ? KC(-1) : v))
KA_UN(softplus, KA_SOFTPLUS(v))
KA_UN(softsign, v / (KC(1) + fabs(v)))
KA_UN(elu, v < KC(0) ? (KA_CT)alpha * expm1(v) : v)
KA_UN(selu, v > KC(0) ? (KA_CT)beta * v : (KA_CT)beta * ((KA_CT)alpha * exp(v) - (KA_CT)alpha))
KA_UN(celu, (v > KC(0) ? v : KC(0)) + (v < KC(0) ? (KA_CT)alpha * expm1(v / (KA_CT)alpha) : KC(0)))
KA_UN(leaky_relu, v < KC(0) ? (KA_CT)alpha * v : v)
KA_UN(thresholded_relu, v > (KA_CT)alpha ? v : KC(0))
KA_UN(hard_sigmoid, KA_CLAMP01((KA_CT)alpha * v + (KA_CT)beta))
KA_UN(hard_swish, v * KA_CLAMP01(v * KC(1.0 / 6.0) + KC(0.5)))
KA_UN(mish, v * tanh(KA_SOFTPLUS(v)))
KA_UN(gelu, KC(0.5) * v * (KC(1) + KA_ERF(v * KC(0.70710678118654752440))))
KA_UN(gelu_tanh,
      KC(0.5) * v * (KC(1) + tanh(KC(0.79788456080286535588) * (v + KC(0.044715) * v * v * v))))
KA_UNB(isnan, isnan(v))
KA_UNB(isinf, isinf(v) && ((v < KC(0) && alpha != 0.0f) || (v > KC(0) && beta != 0.0f)))
#undef KA_ERF
#undef KA_SOFTPLUS
#undef KA_CLAMP01
#elif O2C_TID == O2C_ID_b
KA_UN(not, v ? 0 : 1)
#elif O2C_TID == O2C_ID_u8 || O2C_TID == O2C_ID_u16 || O2C_TID == O2C_ID_u32 || O2C_TID == O2C_ID_u64
KA_UN(abs, v)
KA_UN(neg, (T)0 - v)
KA_UN(sign, v > (T)0 ? (T)1 : (T)0)
KA_UN(relu, v)
KA_UN(bit_not, ~v)
#else
KA_UN(abs, v < (T)0 ? (T)0 - v : v)
KA_UN(neg, (T)0 - v)
KA_UN(sign, v > (T)0 ? (T)1 : (v < (T)0 ? (T)-1 : (T)0))
KA_UN(relu, v < (T)0 ? (T)0 : v)
KA_UN(bit_not, ~v)
#endif
#undef KA_UN
#undef KA_UNB
#undef KC
#undef KA_CT
#undef KA_LD
#undef KA_ST
