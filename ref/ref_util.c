/* ref_util.c — element access, broadcasting and op geometry shared by the reference ops and by
 * shape inference (see ref_util.h for the contract of each helper).
 *
 * Assumes: normalized IR (ir/ir.h); constant inputs hold little-endian host data.
 * Guarantees: geometry follows the ONNX spec text of each op (Slice-13, Conv-11,
 * ConvTranspose-11, MaxPool-12, AveragePool-19, Resize-19, Split-18, Pad-19, Reduce-18); user
 * errors are fatal and name the node, the attribute/input and the values.
 */
#include "ref/ref_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- element access ------------------------------------------------------------------------ */

float ref_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t ref_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);                                          /* RNE */
    return (uint16_t)(u >> 16);
}

double ref_get_f(const void *p, enum ir_dtype t, int64_t i)
{
    switch (t) {
    case IR_F32: return ((const float *)p)[i];
    case IR_F64: return ((const double *)p)[i];
    case IR_F16: return ref_f16_to_f32(((const uint16_t *)p)[i]);
    case IR_BF16: return ref_bf16_to_f32(((const uint16_t *)p)[i]);
    case IR_U8: return ((const uint8_t *)p)[i];
    case IR_I8: return ((const int8_t *)p)[i];
    case IR_U16: return ((const uint16_t *)p)[i];
    case IR_I16: return ((const int16_t *)p)[i];
    case IR_U32: return ((const uint32_t *)p)[i];
    case IR_I32: return ((const int32_t *)p)[i];
    case IR_U64: return (double)((const uint64_t *)p)[i];
    case IR_I64: return (double)((const int64_t *)p)[i];
    case IR_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: IR_ASSERT(!"ref_get_f: unsupported dtype");
    }
    return 0;
}

/* double -> int64 truncating toward zero, saturating, NaN -> 0. */
static int64_t f_to_i64(double v)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

int64_t ref_get_i(const void *p, enum ir_dtype t, int64_t i)
{
    switch (t) {
    case IR_U8: return ((const uint8_t *)p)[i];
    case IR_I8: return ((const int8_t *)p)[i];
    case IR_U16: return ((const uint16_t *)p)[i];
    case IR_I16: return ((const int16_t *)p)[i];
    case IR_U32: return ((const uint32_t *)p)[i];
    case IR_I32: return ((const int32_t *)p)[i];
    case IR_U64: return (int64_t)((const uint64_t *)p)[i];
    case IR_I64: return ((const int64_t *)p)[i];
    case IR_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return f_to_i64(ref_get_f(p, t, i));
    }
}

void ref_set_i(void *p, enum ir_dtype t, int64_t i, int64_t v)
{
    switch (t) {
    case IR_F32: ((float *)p)[i] = (float)v; break;
    case IR_F64: ((double *)p)[i] = (double)v; break;
    case IR_F16: ((uint16_t *)p)[i] = ref_f32_to_f16((float)v); break;
    case IR_BF16: ((uint16_t *)p)[i] = ref_f32_to_bf16((float)v); break;
    case IR_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case IR_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case IR_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case IR_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case IR_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case IR_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case IR_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case IR_I64: ((int64_t *)p)[i] = v; break;
    case IR_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: IR_ASSERT(!"ref_set_i: unsupported dtype");
    }
}

void ref_set_f(void *p, enum ir_dtype t, int64_t i, double v)
{
    switch (t) {
    case IR_F32: ((float *)p)[i] = (float)v; break;
    case IR_F64: ((double *)p)[i] = v; break;
    case IR_F16: ((uint16_t *)p)[i] = ref_f32_to_f16((float)v); break;
    case IR_BF16: ((uint16_t *)p)[i] = ref_f32_to_bf16((float)v); break;
    case IR_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case IR_U64:
        if (v >= 9223372036854775808.0 && v < 18446744073709551616.0)
            ((uint64_t *)p)[i] = (uint64_t)v;
        else
            ((uint64_t *)p)[i] = (uint64_t)f_to_i64(v);
        break;
    default: ref_set_i(p, t, i, f_to_i64(v)); break;
    }
}

void ref_copy_elem(void *dst, int64_t di, const void *src, int64_t si, size_t esize)
{
    memcpy((char *)dst + (size_t)di * esize, (const char *)src + (size_t)si * esize, esize);
}

/* ---- values ----------------------------------------------------------------------------------- */

int64_t ref_numel_v(const struct ir_value *v)
{
    int64_t n = 1;
    for (int k = 0; k < v->rank; k++) n *= v->dims[k];
    return n;
}

void *ref_alloc_out(struct ir_graph *g, uint32_t v)
{
    struct ir_value *val = &g->values[v];
    IR_ASSERT(val->dims_known && ir_dtype_size(val->dtype) > 0);
    size_t bytes = (size_t)ref_numel_v(val) * ir_dtype_size(val->dtype);
    void *p = ir_alloc(g, bytes ? bytes : 1);
    val = &g->values[v];
    val->data = p;
    val->nbytes = bytes;
    return p;
}

void ref_strides(const int64_t *dims, int rank, int64_t *strides)
{
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        strides[k] = s;
        s *= dims[k];
    }
}

void ref_bcast_strides(const int64_t *in_dims, int in_rank, int out_rank, int64_t *strides)
{
    int64_t st[IR_MAX_RANK];
    ref_strides(in_dims, in_rank, st);
    for (int k = 0; k < out_rank; k++) {
        int ik = k - (out_rank - in_rank);
        strides[k] = (ik < 0 || in_dims[ik] == 1) ? 0 : st[ik];
    }
}

void *ref_tmp(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) ir_die("out of memory allocating %zu bytes in a reference op", bytes);
    return p;
}

void ref_iter_init(struct ref_iter *it, const struct ir_value *out, const struct ir_value **ins,
                   int nin)
{
    IR_ASSERT(nin <= REF_MAX_IT);
    memset(it, 0, sizeof *it);
    it->rank = out->rank;
    it->nin = nin;
    memcpy(it->dims, out->dims, sizeof(int64_t) * (size_t)out->rank);
    for (int j = 0; j < nin; j++)
        if (ins[j]) ref_bcast_strides(ins[j]->dims, ins[j]->rank, out->rank, it->st[j]);
}

/* ---- geometry --------------------------------------------------------------------------------- */

bool ref_bcast_dims(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out, int *rout)
{
    int r = ra > rb ? ra : rb;
    for (int k = 0; k < r; k++) {
        int ka = k - (r - ra), kb = k - (r - rb);
        int64_t da = ka < 0 ? 1 : a[ka], db = kb < 0 ? 1 : b[kb];
        if (da == db || db == 1)
            out[k] = da;
        else if (da == 1)
            out[k] = db;
        else
            return false;
    }
    *rout = r;
    return true;
}

int ref_axis(const struct ir_graph *g, const struct ir_node *n, int64_t axis, int rank,
             bool inclusive, const char *what)
{
    int64_t hi = inclusive ? rank : rank - 1;
    if (axis < -(int64_t)rank || axis > hi)
        ir_fatal_node(g, n, "%s=%lld out of range [%d, %lld] for rank %d", what, (long long)axis,
                      -rank, (long long)hi, rank);
    if (axis < 0) axis += rank;
    return (int)axis;
}

int ref_const_ints(const struct ir_graph *g, const struct ir_node *n, uint32_t k, int64_t *out,
                   int cap, const char *what)
{
    uint32_t v = ir_input(n, k);
    if (v == IR_NONE) /* optional in ops.def's arity, but this form of the op needs it */
        ir_fatal_node(g, n, "input %u (%s) is missing", k, what);
    const struct ir_value *val = &g->values[v];
    if (!val->data)
        ir_fatal_node(g, n,
                      "input %u '%s' (%s) must be a constant once shapes are bound; it is computed "
                      "at run time here (bind the graph input shapes with --shape)",
                      k, val->name, what);
    if (!ref_is_int(val->dtype) && val->dtype != IR_BOOL)
        ir_fatal_node(g, n, "input %u '%s' (%s) must be an integer tensor, got %s", k, val->name,
                      what, ir_dtype_name(val->dtype));
    size_t es = ir_dtype_size(val->dtype);
    int64_t cnt = (int64_t)(val->nbytes / es);
    if (cnt > cap)
        ir_fatal_node(g, n, "input %u '%s' (%s) has %lld entries, at most %d allowed", k,
                      val->name, what, (long long)cnt, cap);
    for (int64_t i = 0; i < cnt; i++) out[i] = ir_const_i64(g, v, i);
    return (int)cnt;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void ref_slice_params(const struct ir_graph *g, const struct ir_node *n, const int64_t *dims,
                      int rank, int64_t *start, int64_t *step, int64_t *out_dims)
{
    int64_t starts[IR_MAX_RANK], ends[IR_MAX_RANK], axes[IR_MAX_RANK], steps[IR_MAX_RANK];
    int ns = ref_const_ints(g, n, 1, starts, IR_MAX_RANK, "starts");
    int ne = ref_const_ints(g, n, 2, ends, IR_MAX_RANK, "ends");
    if (ns != ne)
        ir_fatal_node(g, n, "starts has %d entries but ends has %d", ns, ne);
    if (ir_input(n, 3) != IR_NONE) {
        int na = ref_const_ints(g, n, 3, axes, IR_MAX_RANK, "axes");
        if (na != ns) ir_fatal_node(g, n, "axes has %d entries but starts has %d", na, ns);
    } else {
        for (int i = 0; i < ns; i++) axes[i] = i;
    }
    if (ir_input(n, 4) != IR_NONE) {
        int nt = ref_const_ints(g, n, 4, steps, IR_MAX_RANK, "steps");
        if (nt != ns) ir_fatal_node(g, n, "steps has %d entries but starts has %d", nt, ns);
    } else {
        for (int i = 0; i < ns; i++) steps[i] = 1;
    }
    if (ns > rank) ir_fatal_node(g, n, "%d slice axes for an input of rank %d", ns, rank);
    bool seen[IR_MAX_RANK] = {false};
    for (int k = 0; k < rank; k++) {
        start[k] = 0;
        step[k] = 1;
        out_dims[k] = dims[k];
    }
    for (int i = 0; i < ns; i++) {
        int a = ref_axis(g, n, axes[i], rank, false, "Slice axes entry");
        if (seen[a]) ir_fatal_node(g, n, "axis %d repeated in Slice axes", a);
        seen[a] = true;
        int64_t st = steps[i], d = dims[a], s = starts[i], e = ends[i];
        if (st == 0) ir_fatal_node(g, n, "Slice step is 0 on axis %d", a);
        if (s < 0) s += d;
        if (e < 0) e += d;
        int64_t cnt;
        if (st > 0) {
            s = clamp64(s, 0, d);
            e = clamp64(e, 0, d);
            cnt = e > s ? (e - s - 1) / st + 1 : 0;
        } else {
            s = clamp64(s, 0, d - 1);
            e = clamp64(e, -1, d - 1);
            cnt = s > e ? (s - e - 1) / (-st) + 1 : 0;
        }
        if (cnt == 0) s = 0;
        start[a] = s;
        step[a] = st;
        out_dims[a] = cnt;
    }
}

/* Reads an INTS attribute of exactly `want` entries into out (default dflt when absent). */
static void attr_ints_n(const struct ir_graph *g, const struct ir_node *n, const char *name,
                        int want, int64_t dflt, int64_t *out)
{
    size_t cnt;
    const int64_t *v = ir_attr_ints(n, name, &cnt);
    if (!v) {
        for (int i = 0; i < want; i++) out[i] = dflt;
        return;
    }
    if ((int)cnt != want)
        ir_fatal_node(g, n, "attribute %s has %zu entries, expected %d", name, cnt, want);
    for (int i = 0; i < want; i++) out[i] = v[i];
}

static int auto_pad_kind(const struct ir_graph *g, const struct ir_node *n)
{
    const char *ap = ir_attr_string(n, "auto_pad", "NOTSET");
    if (!strcmp(ap, "NOTSET") || !*ap) return 0;
    if (!strcmp(ap, "SAME_UPPER")) return 1;
    if (!strcmp(ap, "SAME_LOWER")) return 2;
    if (!strcmp(ap, "VALID")) return 3;
    ir_fatal_node(g, n, "unsupported auto_pad '%s' (NOTSET, SAME_UPPER, SAME_LOWER, VALID)", ap);
}

void ref_conv_geom(const struct ir_graph *g, const struct ir_node *n, const int64_t *xdims,
                   int xrank, const int64_t *kdims, bool is_pool, struct ref_conv_geom *geo)
{
    memset(geo, 0, sizeof *geo);
    int nsp = xrank - 2;
    if (nsp < 1 || nsp > 6)
        ir_fatal_node(g, n, "input must have rank 3..8 (N, C, spatial...), got rank %d", xrank);
    geo->nsp = nsp;
    for (int i = 0; i < nsp; i++) geo->in[i] = xdims[2 + i];
    size_t kc;
    const int64_t *ks = ir_attr_ints(n, "kernel_shape", &kc);
    if (ks) {
        if ((int)kc != nsp)
            ir_fatal_node(g, n, "kernel_shape has %zu entries for %d spatial dims", kc, nsp);
        for (int i = 0; i < nsp; i++) geo->k[i] = ks[i];
        if (kdims)
            for (int i = 0; i < nsp; i++)
                if (ks[i] != kdims[i])
                    ir_fatal_node(g, n, "kernel_shape[%d]=%lld but the weight has %lld", i,
                                  (long long)ks[i], (long long)kdims[i]);
    } else if (kdims) {
        for (int i = 0; i < nsp; i++) geo->k[i] = kdims[i];
    } else {
        ir_fatal_node(g, n, "missing attribute kernel_shape");
    }
    attr_ints_n(g, n, "strides", nsp, 1, geo->s);
    attr_ints_n(g, n, "dilations", nsp, 1, geo->d);
    int64_t pads[12];
    attr_ints_n(g, n, "pads", 2 * nsp, 0, pads);
    int ceil_mode = is_pool ? (int)ir_attr_int(n, "ceil_mode", 0) : 0;
    int ap = auto_pad_kind(g, n);
    for (int i = 0; i < nsp; i++) {
        int64_t in = geo->in[i], s = geo->s[i], d = geo->d[i], k = geo->k[i];
        if (s <= 0 || d <= 0 || k <= 0)
            ir_fatal_node(g, n, "spatial dim %d: kernel %lld, stride %lld, dilation %lld must be > 0",
                          i, (long long)k, (long long)s, (long long)d);
        int64_t ek = d * (k - 1) + 1;
        if (ap == 1 || ap == 2) {
            int64_t out = (in + s - 1) / s;
            int64_t total = (out - 1) * s + ek - in;
            if (total < 0) total = 0;
            if (ap == 1) {
                geo->pb[i] = total / 2;
                geo->pe[i] = total - total / 2;
            } else {
                geo->pe[i] = total / 2;
                geo->pb[i] = total - total / 2;
            }
            geo->out[i] = out;
            continue;
        }
        if (ap == 0) {
            geo->pb[i] = pads[i];
            geo->pe[i] = pads[nsp + i];
            if (pads[i] < 0 || pads[nsp + i] < 0)
                ir_fatal_node(g, n, "negative pads (%lld, %lld) on spatial dim %d",
                              (long long)pads[i], (long long)pads[nsp + i], i);
        }
        int64_t num = in + geo->pb[i] + geo->pe[i] - ek;
        if (num < 0)
            ir_fatal_node(g, n,
                          "spatial dim %d: input %lld + pads (%lld, %lld) is smaller than the "
                          "dilated kernel %lld",
                          i, (long long)in, (long long)geo->pb[i], (long long)geo->pe[i],
                          (long long)ek);
        int64_t out;
        if (ceil_mode) {
            out = (num + s - 1) / s + 1;
            if ((out - 1) * s >= in + geo->pb[i]) out--;
        } else {
            out = num / s + 1;
        }
        geo->out[i] = out;
    }
    geo->group = is_pool ? 1 : ir_attr_int(n, "group", 1);
}

void ref_convt_geom(const struct ir_graph *g, const struct ir_node *n, const int64_t *xdims,
                    int xrank, const int64_t *wdims, struct ref_conv_geom *geo)
{
    memset(geo, 0, sizeof *geo);
    int nsp = xrank - 2;
    if (nsp < 1 || nsp > 3)
        ir_fatal_node(g, n, "input must have rank 3..5 (N, C, spatial...), got rank %d", xrank);
    geo->nsp = nsp;
    for (int i = 0; i < nsp; i++) {
        geo->in[i] = xdims[2 + i];
        geo->k[i] = wdims[2 + i];
    }
    size_t kc;
    const int64_t *ks = ir_attr_ints(n, "kernel_shape", &kc);
    if (ks) {
        if ((int)kc != nsp)
            ir_fatal_node(g, n, "kernel_shape has %zu entries for %d spatial dims", kc, nsp);
        for (int i = 0; i < nsp; i++)
            if (ks[i] != geo->k[i])
                ir_fatal_node(g, n, "kernel_shape[%d]=%lld but the weight has %lld", i,
                              (long long)ks[i], (long long)geo->k[i]);
    }
    attr_ints_n(g, n, "strides", nsp, 1, geo->s);
    attr_ints_n(g, n, "dilations", nsp, 1, geo->d);
    int64_t pads[6], opad[3];
    attr_ints_n(g, n, "pads", 2 * nsp, 0, pads);
    attr_ints_n(g, n, "output_padding", nsp, 0, opad);
    size_t oc;
    const int64_t *os = ir_attr_ints(n, "output_shape", &oc);
    if (os && (int)oc < nsp)
        ir_fatal_node(g, n, "output_shape has %zu entries for %d spatial dims", oc, nsp);
    int ap = auto_pad_kind(g, n);
    geo->group = ir_attr_int(n, "group", 1);
    for (int i = 0; i < nsp; i++) {
        int64_t in = geo->in[i], s = geo->s[i], d = geo->d[i], k = geo->k[i];
        if (s <= 0 || d <= 0 || k <= 0)
            ir_fatal_node(g, n, "spatial dim %d: kernel %lld, stride %lld, dilation %lld must be > 0",
                          i, (long long)k, (long long)s, (long long)d);
        /* ConvTranspose-11: "output_padding ... must be smaller than either stride or
         * dilation" (per axis); a larger one would add rows no input contributes to */
        if (opad[i] < 0 || (opad[i] >= s && opad[i] >= d))
            ir_fatal_node(g, n, "output_padding[%d]=%lld must be >= 0 and smaller than the stride "
                          "(%lld) or the dilation (%lld) of that axis",
                          i, (long long)opad[i], (long long)s, (long long)d);
        int64_t ek = d * (k - 1) + 1;
        int64_t full = s * (in - 1) + opad[i] + ek;
        if (os || ap == 1 || ap == 2) {
            int64_t out = os ? os[oc - nsp + i] : in * s;
            int64_t total = full - out;
            if (total < 0) total = 0;
            if (ap == 1) {
                geo->pb[i] = total / 2;
                geo->pe[i] = total - total / 2;
            } else {
                geo->pb[i] = total - total / 2;
                geo->pe[i] = total / 2;
            }
            geo->out[i] = out;
        } else {
            if (ap == 0) {
                geo->pb[i] = pads[i];
                geo->pe[i] = pads[nsp + i];
            }
            geo->out[i] = full - geo->pb[i] - geo->pe[i];
        }
        if (geo->out[i] <= 0)
            ir_fatal_node(g, n, "spatial dim %d: output size %lld is not positive", i,
                          (long long)geo->out[i]);
    }
}

/* floor(x) as an output dim; fatal unless it is a non-negative int64 (huge/NaN/negative scales). */
static int64_t resize_dim(const struct ir_graph *g, const struct ir_node *n, double x, int axis)
{
    x = floor(x);
    if (!(x >= 0.0 && x < 9.2e18))
        ir_fatal_node(g, n, "output dim %d would be %g (scales/sizes out of range)", axis, x);
    return (int64_t)x;
}

void ref_resize_params(const struct ir_graph *g, const struct ir_node *n, const int64_t *dims,
                       int rank, double *scales, int64_t *out_dims)
{
    uint32_t vs = IR_NONE, vz = IR_NONE;
    if (n->op == IR_OP_UPSAMPLE || (g->opset < 11 && n->ninputs == 2)) {
        vs = ir_input(n, 1);
    } else {
        vs = ir_input(n, 2);
        vz = ir_input(n, 3);
    }
    if (vs != IR_NONE && g->values[vs].data && g->values[vs].nbytes == 0) vs = IR_NONE;
    if (vz != IR_NONE && g->values[vz].data && g->values[vz].nbytes == 0) vz = IR_NONE;
    for (int k = 0; k < rank; k++) {
        scales[k] = 1.0;
        out_dims[k] = dims[k];
    }
    size_t na;
    const int64_t *axes_attr = ir_attr_ints(n, "axes", &na);
    int axes[IR_MAX_RANK];
    if (axes_attr) {
        if ((int)na > rank) ir_fatal_node(g, n, "axes has %zu entries for rank %d", na, rank);
        for (size_t i = 0; i < na; i++)
            axes[i] = ref_axis(g, n, axes_attr[i], rank, false, "axes entry");
    } else {
        na = (size_t)rank;
        for (int i = 0; i < rank; i++) axes[i] = i;
    }
    if (vs == IR_NONE && vz == IR_NONE) {
        size_t fc;
        const float *fs = ir_attr_floats(n, "scales", &fc);
        if (n->op == IR_OP_UPSAMPLE && fs) {
            if ((int)fc != rank)
                ir_fatal_node(g, n, "scales has %zu entries for rank %d", fc, rank);
            for (int k = 0; k < rank; k++) {
                scales[k] = fs[k];
                out_dims[k] = resize_dim(g, n, (double)dims[k] * fs[k], k);
            }
            return;
        }
        ir_fatal_node(g, n, "one of scales or sizes must be given");
    }
    if (vs != IR_NONE && vz != IR_NONE)
        ir_fatal_node(g, n, "only one of scales and sizes may be given");
    if (vs != IR_NONE) {
        const struct ir_value *sv = &g->values[vs];
        if (!sv->data)
            ir_fatal_node(g, n, "scales input '%s' must be constant once shapes are bound",
                          sv->name);
        size_t cnt = sv->nbytes / ir_dtype_size(sv->dtype);
        if (cnt != na)
            ir_fatal_node(g, n, "scales '%s' has %zu entries, expected %zu", sv->name, cnt, na);
        for (size_t i = 0; i < na; i++) {
            double s = ir_const_f64(g, vs, (int64_t)i);
            if (!(s > 0)) ir_fatal_node(g, n, "scales[%zu]=%g must be > 0", i, s);
            scales[axes[i]] = s;
            /* the float32 scale times the dim, in double, as the ONNX reference does */
            out_dims[axes[i]] = resize_dim(g, n, (double)dims[axes[i]] * s, axes[i]);
        }
        return;
    }
    int64_t sizes[IR_MAX_RANK];
    int cnt = ref_const_ints(g, n, 3, sizes, IR_MAX_RANK, "sizes");
    if (cnt != (int)na)
        ir_fatal_node(g, n, "sizes has %d entries, expected %zu", cnt, na);
    const char *pol = ir_attr_string(n, "keep_aspect_ratio_policy", "stretch");
    if (!strcmp(pol, "stretch")) {
        for (size_t i = 0; i < na; i++) {
            if (sizes[i] < 0) ir_fatal_node(g, n, "sizes[%zu]=%lld < 0", i, (long long)sizes[i]);
            out_dims[axes[i]] = sizes[i];
            scales[axes[i]] = (double)sizes[i] / (double)dims[axes[i]];
        }
        return;
    }
    bool larger = !strcmp(pol, "not_larger");
    if (!larger && strcmp(pol, "not_smaller"))
        ir_fatal_node(g, n, "unsupported keep_aspect_ratio_policy '%s'", pol);
    double sc = larger ? INFINITY : 0.0;
    for (size_t i = 0; i < na; i++) {
        double r = (double)sizes[i] / (double)dims[axes[i]];
        sc = larger ? fmin(sc, r) : fmax(sc, r);
    }
    for (size_t i = 0; i < na; i++) {
        scales[axes[i]] = sc;
        out_dims[axes[i]] = resize_dim(g, n, sc * (double)dims[axes[i]] + 0.5, axes[i]);
    }
}

bool ref_reduce_axes(const struct ir_graph *g, const struct ir_node *n, int rank, bool *mask)
{
    int64_t axes[IR_MAX_RANK];
    int na = 0;
    if (ir_input(n, 1) != IR_NONE) {
        na = ref_const_ints(g, n, 1, axes, IR_MAX_RANK, "axes");
    } else {
        size_t c;
        const int64_t *a = ir_attr_ints(n, "axes", &c);
        if (a) {
            if ((int)c > rank) ir_fatal_node(g, n, "axes has %zu entries for rank %d", c, rank);
            for (size_t i = 0; i < c; i++) axes[i] = a[i];
            na = (int)c;
        }
    }
    for (int k = 0; k < rank; k++) mask[k] = false;
    if (na == 0) {
        if (ir_attr_int(n, "noop_with_empty_axes", 0)) return false;
        for (int k = 0; k < rank; k++) mask[k] = true;
        return true;
    }
    for (int i = 0; i < na; i++) {
        int a = ref_axis(g, n, axes[i], rank, false, "axes entry");
        if (mask[a]) ir_fatal_node(g, n, "axis %d repeated in axes", a);
        mask[a] = true;
    }
    return true;
}

void ref_split_sizes(const struct ir_graph *g, const struct ir_node *n, int64_t dim,
                     int64_t *sizes)
{
    uint32_t no = n->noutputs;
    uint32_t vs = ir_input(n, 1);
    if (vs != IR_NONE && g->values[vs].data && g->values[vs].nbytes == 0) vs = IR_NONE;
    if (vs != IR_NONE) {
        int64_t tmp[256];
        int cnt = ref_const_ints(g, n, 1, tmp, 256, "split");
        if (cnt != (int)no)
            ir_fatal_node(g, n, "split has %d entries but the node has %u outputs", cnt, no);
        int64_t sum = 0;
        for (int i = 0; i < cnt; i++) {
            if (tmp[i] < 0) ir_fatal_node(g, n, "split[%d]=%lld < 0", i, (long long)tmp[i]);
            sizes[i] = tmp[i];
            sum += tmp[i];
        }
        if (sum != dim)
            ir_fatal_node(g, n, "split sizes sum to %lld but the split axis has %lld",
                          (long long)sum, (long long)dim);
        return;
    }
    const struct ir_attr *a = ir_attr_find(n, "num_outputs");
    if (a) {
        int64_t k = a->i;
        if (k != (int64_t)no)
            ir_fatal_node(g, n, "num_outputs=%lld but the node has %u outputs", (long long)k, no);
        int64_t chunk = (dim + k - 1) / k;
        int64_t last = dim - chunk * (k - 1);
        if (last < 0)
            ir_fatal_node(g, n, "cannot split an axis of %lld into num_outputs=%lld chunks",
                          (long long)dim, (long long)k);
        for (int64_t i = 0; i < k; i++) sizes[i] = i == k - 1 ? last : chunk;
        return;
    }
    if (dim % no)
        ir_fatal_node(g, n, "axis of size %lld does not split evenly into %u outputs",
                      (long long)dim, no);
    for (uint32_t i = 0; i < no; i++) sizes[i] = dim / no;
}

void ref_pad_amounts(const struct ir_graph *g, const struct ir_node *n, int rank, int64_t *pb,
                     int64_t *pe)
{
    int64_t pads[2 * IR_MAX_RANK], axes[IR_MAX_RANK];
    int np = ref_const_ints(g, n, 1, pads, 2 * IR_MAX_RANK, "pads");
    int na;
    if (ir_input(n, 3) != IR_NONE) {
        na = ref_const_ints(g, n, 3, axes, IR_MAX_RANK, "axes");
    } else {
        na = rank;
        for (int i = 0; i < rank; i++) axes[i] = i;
    }
    if (np != 2 * na)
        ir_fatal_node(g, n, "pads has %d entries, expected 2 x %d axes", np, na);
    for (int k = 0; k < rank; k++) pb[k] = pe[k] = 0;
    for (int i = 0; i < na; i++) {
        int a = ref_axis(g, n, axes[i], rank, false, "axes entry");
        pb[a] = pads[i];
        pe[a] = pads[na + i];
    }
}
