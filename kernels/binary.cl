/* binary.cl — binary elementwise ops with numpy broadcasting (ops.def family "binary"):
 * Add Sub Mul Div Pow Mod PRelu Equal Greater GreaterOrEqual Less LessOrEqual And Or Xor and the
 * pairwise steps of variadic Min Max Sum Mean.
 *
 * Two kernels per op, one work-item per output element (gws may be rounded up; i >= n exits):
 *   <op>(a, b, y, n)                       a, b, y dense with the same n elements;
 *   <op>_bc(a, b, y, nitems, inner, nch, d0..d4, sa0..sa5, sb0..sb5)
 *       y dense with dims [d0, .., d4, inner] (the lowering collapses contiguous axes and pads
 *       with leading 1s); element at coordinates c reads a[sum c_k*sa_k] and b[sum c_k*sb_k]
 *       (stride 0 on broadcast axes). Each work-item handles KA_CH consecutive elements of one
 *       row of the innermost axis (nch = ceil(inner / KA_CH) chunks per row, nitems = nch *
 *       rows work-items): the outer coordinates are decomposed once per chunk, not per element
 *       (per-element div/mod made broadcasting ~15x slower than same-shape on PoCL).
 * Output type: T, except comparisons (equal greater greater_equal less less_equal): uchar (bool).
 * Semantics: ONNX-13/14 (Pow-15): integer div truncates toward zero (x/0 -> 0, no trap);
 *   mod = Python-style remainder (sign of divisor, Mod fmod=0; on floats numpy.mod: a zero result
 *   takes the divisor's sign, x mod ±inf is x or ±inf by sign, x mod 0 and inf mod y are NaN),
 *   fmod = C remainder (sign of dividend, Mod fmod=1); pow on integers by repeated squaring
 *   (negative exponent: 1, -1 or 0 as integer division would give); min/max propagate NaN;
 *   prelu(x, s) = x<0 ? s*x : x; and/or/xor exist for bool only; bit_and bit_or bit_xor
 *   shift_left shift_right (BitwiseAnd/Or/Xor-18, BitShift-11/28) for integer types only.
 * Pow with another exponent type (Pow-12+, output T): powl(a, long *b, y, n, int uns) (+ _bc, uns
 *   last): integer exponents widened to long (uns: b holds uint64 bits); powf(a, float *b, ...)
 *   for f16 and integer T: float exponents. Float T: |x|**e with the sign of x for odd e;
 *   integer T: exact repeated squaring for integral e, else pow in float truncated (saturating).
 * Helpers: scale(y, n, s): y[i] *= s (Mean's final division, float types);
 *          copy(x, y, n): y[i] = x[i] (one-input Min/Max/Sum/Mean).
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

/* Kernel names are built by pasting (name##_) so that a name which is also an OpenCL builtin
 * implemented as a macro by the compiler (max, min, pow, ...) is never expanded. */
#ifndef KA_CH
#define KA_CH 256
#endif
#ifndef O2C_KA_KN
#define O2C_KA_KN
#define KA_KN3(p, s) p##s
#define KA_KN2(p, s) KA_KN3(p, s)
#define KA_KN(p) KA_KN2(p, TS)
#endif
/* KA_BINX: b is a __global const BT * read with LDB into an XT1 (Pow with another exponent
 * type); XARGS: a function-like macro giving extra trailing parameters (KA_NOX: none; a macro
 * name, so that its comma appears only in the final expansion). KA_BIN: b has a's type. */
#define KA_BINX_(kn, kbc, BT, XT1, LDB, XARGS, OT, STORE, EXPR)                              \
    __kernel void KA_KN(kn)(__global const T *a, __global const BT *b, __global OT *y,  \
                                 int n XARGS())                                                 \
    {                                                                                         \
        const int i = (int)get_global_id(0);                                                  \
        if (i >= n) return;                                                                   \
        const KA_CT x0 = KA_LD(a, i);                                                         \
        const XT1 x1 = LDB(b, i);                                                             \
        STORE(y, i, (EXPR));                                                                  \
    }                                                                                         \
    __kernel void KA_KN(kbc)(__global const T *a, __global const BT *b, __global OT *y,      \
                                    int nitems, int inner, int nch, int d0, int d1, int d2,    \
                                    int d3, int d4, int sa0, int sa1, int sa2, int sa3,        \
                                    int sa4, int sa5, int sb0, int sb1, int sb2, int sb3,      \
                                    int sb4, int sb5 XARGS())                                    \
    {                                                                                         \
        const int id = (int)get_global_id(0);                                                 \
        if (id >= nitems) return;                                                             \
        const int o = id / nch;                                                               \
        const int j0 = (id - o * nch) * KA_CH;                                                \
        const int j1 = min(inner, j0 + KA_CH);                                                \
        int r = o;                                                                            \
        const int c4 = r % d4;                                                                \
        r /= d4;                                                                              \
        const int c3 = r % d3;                                                                \
        r /= d3;                                                                              \
        const int c2 = r % d2;                                                                \
        r /= d2;                                                                              \
        const int c1 = r % d1;                                                                \
        const int c0 = r / d1;                                                                \
        const int oa = c0 * sa0 + c1 * sa1 + c2 * sa2 + c3 * sa3 + c4 * sa4;                  \
        const int ob = c0 * sb0 + c1 * sb1 + c2 * sb2 + c3 * sb3 + c4 * sb4;                  \
        const int oy = o * inner;                                                             \
        for (int j = j0; j < j1; j++) {                                                       \
            const KA_CT x0 = KA_LD(a, oa + j * sa5);                                          \
            const XT1 x1 = LDB(b, ob + j * sb5);                                              \
            STORE(y, oy + j, (EXPR));                                                         \
        }                                                                                     \
    }
#define KA_NOX()
#define KA_UNSX() , int uns
#define KA_LDP(p, i) ((p)[(i)])
/* The names are pasted here, before any expansion of `name` (pow, min, max are builtins that a
 * compiler may implement as macros). */
#define KA_BINX(name, BT, XT1, LDB, XARGS, OT, STORE, EXPR)                                  \
    KA_BINX_(name##_, name##_bc_, BT, XT1, LDB, XARGS, OT, STORE, EXPR)
#define KA_BIN(name, OT, STORE, EXPR)                                                         \
    KA_BINX_(name##_, name##_bc_, T, KA_CT, KA_LD, KA_NOX, OT, STORE, EXPR)
#define KA_STB(p, i, v) ((p)[(i)] = (uchar)((v) ? 1 : 0))

#if O2C_T_FLOAT
#define KC(c) ((KA_CT)(c))
KA_BIN(add, T, KA_ST, x0 + x1)
KA_BIN(sub, T, KA_ST, x0 - x1)
KA_BIN(mul, T, KA_ST, x0 * x1)
KA_BIN(div, T, KA_ST, x0 / x1)
KA_BIN(pow, T, KA_ST, pow(x0, x1))
KA_BIN(fmod, T, KA_ST, fmod(x0, x1))
/* numpy.mod / Python %: r = fmod(a, b) moved into b's sign (r + b), 0 -> copysign(0, b). NaN
 * (b == 0, a = ±inf, NaN operands) passes through: NaN < 0 is false on both sides of the test. */
static inline KA_CT KN(ka_fmod0)(KA_CT a, KA_CT b)
{
    KA_CT r = fmod(a, b);
    if (r == (KA_CT)0) return copysign((KA_CT)0, b);
    if ((r < (KA_CT)0) != (b < (KA_CT)0)) r += b;
    return r;
}
KA_BIN(mod, T, KA_ST, KN(ka_fmod0)(x0, x1))
/* x ** e, e an integer exponent (a long; uns: the bits of a uint64): |x| ** e, negated for an odd
 * e and a negative x (sign bit), so the sign stays right beyond the float's integer range. */
static inline KA_CT KN(ka_powl)(KA_CT x, long e, int uns)
{
    const KA_CT m = pow(fabs(x), uns ? (KA_CT)(ulong)e : (KA_CT)e);
    return ((e & 1) && signbit(x)) ? -m : m;
}
KA_BINX(powl, long, long, KA_LDP, KA_UNSX, T, KA_ST, KN(ka_powl)(x0, x1, uns))
#if O2C_TID == O2C_ID_f16
KA_BINX(powf, float, float, KA_LDP, KA_NOX, T, KA_ST, pow(x0, x1))
#endif
KA_BIN(prelu, T, KA_ST, x0 < KC(0) ? x1 * x0 : x0)
KA_BIN(min, T, KA_ST, (x0 < x1 || isnan(x0)) ? x0 : x1)
KA_BIN(max, T, KA_ST, (x0 > x1 || isnan(x0)) ? x0 : x1)
__kernel void KN(scale)(__global T *y, int n, float s)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    KA_ST(y, i, KA_LD(y, i) * (KA_CT)s);
}
#undef KC
#elif O2C_TID != O2C_ID_b
#if O2C_TID == O2C_ID_u8 || O2C_TID == O2C_ID_u16 || O2C_TID == O2C_ID_u32 || O2C_TID == O2C_ID_u64
#define KA_UNSIGNED 1
#else
#define KA_UNSIGNED 0
#endif
/* a / b truncating toward zero; b == 0 gives 0 and MIN / -1 wraps (no hardware trap). */
static inline T KN(ka_idiv)(T a, T b)
{
    if (b == (T)0) return (T)0;
#if !KA_UNSIGNED
    if (b == (T)-1) return (T)((T)0 - a);
#endif
    return (T)(a / b);
}
/* C remainder (sign of a); b == 0 gives 0. */
static inline T KN(ka_irem)(T a, T b)
{
    if (b == (T)0) return (T)0;
#if !KA_UNSIGNED
    if (b == (T)-1) return (T)0;
#endif
    return (T)(a % b);
}
/* Python remainder (sign of b). */
static inline T KN(ka_imod)(T a, T b)
{
    T r = KN(ka_irem)(a, b);
#if !KA_UNSIGNED
    if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = (T)(r + b);
#endif
    return r;
}
/* a ** b by repeated squaring (wrapping); negative b: 1/a**|b| truncated. */
static inline T KN(ka_ipow)(T a, T b)
{
#if !KA_UNSIGNED
    if (b < (T)0) {
        if (a == (T)1) return (T)1;
        if (a == (T)-1) return (b & (T)1) ? (T)-1 : (T)1;
        return (T)0;
    }
#endif
    T r = (T)1;
    while (b != (T)0) {
        if (b & (T)1) r = (T)(r * a);
        a = (T)(a * a);
        b = (T)(b >> 1);
    }
    return r;
}
/* a ** e for a long exponent e (uns: the bits of a uint64, never negative); negative e: 1, -1
 * or 0 as for ka_ipow. */
static inline T KN(ka_ipowl)(T a, long e, int uns)
{
    if (!uns && e < 0) {
        if (a == (T)1) return (T)1;
#if !KA_UNSIGNED
        if (a == (T)-1) return (e & 1) ? (T)-1 : (T)1;
#endif
        return (T)0;
    }
    ulong b = (ulong)e;
    T r = (T)1;
    while (b != 0) {
        if (b & 1) r = (T)(r * a);
        a = (T)(a * a);
        b >>= 1;
    }
    return r;
}
/* a ** e for a float exponent: an integral e (|e| < 2^63) exactly as ka_ipowl (wrapping), any
 * other e as pow() in float truncated toward zero (saturating to int64, NaN -> 0, then wrapping
 * to T like Cast): exact while |result| < 2^24. */
static inline T KN(ka_ipowf)(T a, float e)
{
    if (e == floor(e) && fabs(e) < 0x1p63f) return KN(ka_ipowl)(a, (long)e, 0);
    return (T)convert_long_sat(pow((float)a, e));
}
KA_BINX(powl, long, long, KA_LDP, KA_UNSX, T, KA_ST, KN(ka_ipowl)(x0, x1, uns))
KA_BINX(powf, float, float, KA_LDP, KA_NOX, T, KA_ST, KN(ka_ipowf)(x0, x1))
KA_BIN(add, T, KA_ST, x0 + x1)
KA_BIN(sub, T, KA_ST, x0 - x1)
KA_BIN(mul, T, KA_ST, x0 * x1)
KA_BIN(div, T, KA_ST, KN(ka_idiv)(x0, x1))
KA_BIN(pow, T, KA_ST, KN(ka_ipow)(x0, x1))
KA_BIN(fmod, T, KA_ST, KN(ka_irem)(x0, x1))
KA_BIN(mod, T, KA_ST, KN(ka_imod)(x0, x1))
KA_BIN(prelu, T, KA_ST, x0 < (T)0 ? (T)(x1 * x0) : x0)
KA_BIN(min, T, KA_ST, x0 < x1 ? x0 : x1)
KA_BIN(max, T, KA_ST, x0 > x1 ? x0 : x1)
/* BitShift-28: counts < 0 or >= the width give 0 (-1 for a right shift of a negative signed
 * value); OpenCL would take the count modulo the width, so it is tested first. Left shifts go
 * through ulong (no signed overflow), right shifts of signed T are arithmetic. */
#define KA_BITS ((T)(8 * sizeof(T)))
#if KA_UNSIGNED
#define KA_SHIFT_BAD(b) ((b) >= KA_BITS)
#else
#define KA_SHIFT_BAD(b) ((b) < (T)0 || (b) >= KA_BITS)
#endif
static inline T KN(ka_shl)(T a, T b)
{
    return KA_SHIFT_BAD(b) ? (T)0 : (T)((ulong)a << (ulong)b);
}
static inline T KN(ka_shr)(T a, T b)
{
    return KA_SHIFT_BAD(b) ? (a < (T)0 ? (T)-1 : (T)0) : (T)(a >> b);
}
KA_BIN(bit_and, T, KA_ST, x0 & x1)
KA_BIN(bit_or, T, KA_ST, x0 | x1)
KA_BIN(bit_xor, T, KA_ST, x0 ^ x1)
KA_BIN(shift_left, T, KA_ST, KN(ka_shl)(x0, x1))
KA_BIN(shift_right, T, KA_ST, KN(ka_shr)(x0, x1))
#undef KA_BITS
#undef KA_SHIFT_BAD
#undef KA_UNSIGNED
#else
KA_BIN(and, T, KA_ST, (x0 && x1) ? 1 : 0)
KA_BIN(or, T, KA_ST, (x0 || x1) ? 1 : 0)
KA_BIN(xor, T, KA_ST, ((x0 != 0) != (x1 != 0)) ? 1 : 0)
#endif
KA_BIN(equal, uchar, KA_STB, x0 == x1)
KA_BIN(greater, uchar, KA_STB, x0 > x1)
KA_BIN(greater_equal, uchar, KA_STB, x0 >= x1)
KA_BIN(less, uchar, KA_STB, x0 < x1)
KA_BIN(less_equal, uchar, KA_STB, x0 <= x1)
__kernel void KN(copy)(__global const T *x, __global T *y, int n)
{
    const int i = (int)get_global_id(0);
    if (i >= n) return;
    KA_ST(y, i, KA_LD(x, i));
}
#undef KA_BIN
#undef KA_BINX
#undef KA_BINX_
#undef KA_NOX
#undef KA_UNSX
#undef KA_LDP
#undef KA_STB
#undef KA_CT
#undef KA_LD
#undef KA_ST
