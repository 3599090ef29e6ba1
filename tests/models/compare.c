/* compare.c — o2c_compare GOT EXPECTED ATOL RTOL: compares two tensor files (.npy or .pb).
 *
 * Pass criterion per element: |got - exp| <= ATOL + RTOL * |exp| (both criteria together);
 * NaN must match NaN and infinities must match exactly; dtype and shape must be equal.
 * Prints the measured max abs / max rel error and the tolerance; exit 0 = match, 1 = mismatch,
 * 2 = unreadable input or an element type it cannot compare. */
#include "onnx2cl_rt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* IEEE 754 binary16 -> double (exact). */
static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
    return h & 0x8000 ? -v : v;
}

/* bfloat16 bits -> float (exact: the high half of a float32). */
static float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static bool comparable(enum o2r_dtype t)
{
    return t == O2R_F32 || t == O2R_F64 || t == O2R_F16 || t == O2R_I64 || t == O2R_I32 || t == O2R_I16 ||
           t == O2R_U16 || t == O2R_U32 || t == O2R_U8 || t == O2R_I8 || t == O2R_BOOL || t == O2R_BF16;
}

static double elem(const struct o2r_tensor *t, uint64_t i)
{
    switch (t->dtype) {
    case O2R_F32: return ((const float *)t->data)[i];
    case O2R_F16: return half_to_double(((const uint16_t *)t->data)[i]);
    case O2R_BF16: return (double)bf16_to_float(((const uint16_t *)t->data)[i]);
    case O2R_I16: return ((const int16_t *)t->data)[i];
    case O2R_U16: return ((const uint16_t *)t->data)[i];
    case O2R_U32: return ((const uint32_t *)t->data)[i];
    case O2R_F64: return ((const double *)t->data)[i];
    case O2R_I64: return (double)((const int64_t *)t->data)[i];
    case O2R_I32: return ((const int32_t *)t->data)[i];
    case O2R_U8: case O2R_BOOL: return ((const uint8_t *)t->data)[i];
    case O2R_I8: return ((const int8_t *)t->data)[i];
    default: return NAN;
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: o2c_compare GOT EXPECTED ATOL RTOL\n");
        return 2;
    }
    struct o2r_tensor a, b;
    char err[512];
    if (o2r_tensor_read(argv[1], &a, err, sizeof err) != O2R_OK) { fprintf(stderr, "%s\n", err); return 2; }
    if (o2r_tensor_read(argv[2], &b, err, sizeof err) != O2R_OK) { fprintf(stderr, "%s\n", err); return 2; }
    double atol = atof(argv[3]), rtol = atof(argv[4]);
    if (a.dtype != b.dtype || a.rank != b.rank || a.nbytes != b.nbytes) {
        fprintf(stderr, "%s: dtype/shape differ from %s (%s rank %d, %llu bytes vs %s rank %d, %llu bytes)\n",
                argv[1], argv[2], o2r_dtype_name(a.dtype), a.rank, (unsigned long long)a.nbytes,
                o2r_dtype_name(b.dtype), b.rank, (unsigned long long)b.nbytes);
        return 1;
    }
    if (!comparable(a.dtype)) {
        fprintf(stderr, "%s: element type %s cannot be compared by o2c_compare\n", argv[1], o2r_dtype_name(a.dtype));
        return 2;
    }
    for (int k = 0; k < a.rank; k++)
        if (a.dims[k] != b.dims[k]) {
            fprintf(stderr, "%s: dim %d is %lld, expected %lld\n", argv[1], k, (long long)a.dims[k],
                    (long long)b.dims[k]);
            return 1;
        }
    uint64_t n = a.nbytes / (o2r_dtype_size(a.dtype) ? o2r_dtype_size(a.dtype) : 1), nbad = 0, first = 0;
    double maxabs = 0, maxrel = 0;
    for (uint64_t i = 0; i < n; i++) {
        double x = elem(&a, i), y = elem(&b, i);
        bool ok;
        if (isnan(x) || isnan(y)) ok = isnan(x) && isnan(y);
        else if (isinf(x) || isinf(y)) ok = x == y;
        else {
            double d = fabs(x - y);
            ok = d <= atol + rtol * fabs(y);
            if (d > maxabs) maxabs = d;
            if (d / (fabs(y) + 1e-30) > maxrel && fabs(y) > atol) maxrel = d / fabs(y);
        }
        if (!ok && nbad++ == 0) first = i;
    }
    printf("%s: %llu elements, max abs err %.3g, max rel err %.3g (|ref| > atol), tolerance atol %g + rtol %g*|ref|: %s\n",
           argv[1], (unsigned long long)n, maxabs, maxrel, atol, rtol, nbad ? "MISMATCH" : "ok");
    if (nbad)
        printf("  %llu elements out of tolerance; first at %llu: got %.9g expected %.9g\n",
               (unsigned long long)nbad, (unsigned long long)first, elem(&a, first), elem(&b, first));
    o2r_tensor_free(&a);
    o2r_tensor_free(&b);
    return nbad ? 1 : 0;
}
