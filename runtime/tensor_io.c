/* tensor_io.c — host tensor files: NumPy .npy (read v1/v2/v3, write v1) and ONNX TensorProto .pb.
 *
 * What: o2r_tensor_read / o2r_tensor_write_npy / o2r_tensor_free, dtype size/name tables, and a
 * small bounds-checked protobuf wire decoder for onnx.TensorProto (fields dims=1 packed or not,
 * data_type=2, float_data=4, int32_data=5, int64_data=7, name=8, raw_data=9, double_data=10,
 * uint64_data=11, data_location=14; other fields are skipped by wire type).
 * Assumes: a little-endian host (.npy '<' data and TensorProto raw_data are copied as is).
 * Follows: NumPy format spec (numpy.lib.format, versions 1.0-3.0) and onnx.proto (TensorProto).
 * Guarantees: every length, count and element-size product is checked against the file before
 * any copy; a malformed file gives O2R_ERR_FORMAT with a message naming the file and the
 * problem; .npy files are written atomically (temporary file in the same folder, fsync, rename
 * through platform.h; the temporary file is removed on failure).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "tensor_internal.h"

/* One supported element type. */
struct dtype_info {
    int32_t dtype;     /* enum o2r_dtype */
    size_t size;       /* bytes per element */
    const char *name;  /* numpy-style name */
    char npy_kind;     /* numpy descr kind: 'f', 'i', 'u', 'b', 'V' (raw 2 bytes: bfloat16) */
};

static const struct dtype_info g_dtypes[] = {
    {O2R_F32, 4, "float32", 'f'}, {O2R_U8, 1, "uint8", 'u'},    {O2R_I8, 1, "int8", 'i'},
    {O2R_U16, 2, "uint16", 'u'},  {O2R_I16, 2, "int16", 'i'},   {O2R_I32, 4, "int32", 'i'},
    {O2R_I64, 8, "int64", 'i'},   {O2R_BOOL, 1, "bool", 'b'},   {O2R_F16, 2, "float16", 'f'},
    {O2R_F64, 8, "float64", 'f'}, {O2R_U32, 4, "uint32", 'u'},  {O2R_U64, 8, "uint64", 'u'},
    {O2R_BF16, 2, "bfloat16", 'V'}, /* '<V2': numpy's descr for ml_dtypes.bfloat16 */
};
#define N_DTYPES (sizeof g_dtypes / sizeof g_dtypes[0])

static const struct dtype_info *dtype_find(int32_t dtype)
{
    for (size_t i = 0; i < N_DTYPES; i++)
        if (g_dtypes[i].dtype == dtype)
            return &g_dtypes[i];
    return NULL;
}

size_t o2r_dtype_size(int32_t dtype)
{
    const struct dtype_info *d = dtype_find(dtype);
    return d ? d->size : 0;
}

const char *o2r_dtype_name(int32_t dtype)
{
    const struct dtype_info *d = dtype_find(dtype);
    return d ? d->name : "unsupported";
}

/* Name of an ONNX TensorProto.DataType, including the ones the runtime does not support. */
static const char *onnx_type_name(int64_t t)
{
    static const char *names[] = {"UNDEFINED", "FLOAT",     "UINT8",          "INT8",
                                  "UINT16",    "INT16",     "INT32",          "INT64",
                                  "STRING",    "BOOL",      "FLOAT16",        "DOUBLE",
                                  "UINT32",    "UINT64",    "COMPLEX64",      "COMPLEX128",
                                  "BFLOAT16",  "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                  "FLOAT8E5M2FNUZ", "UINT4", "INT4",          "FLOAT4E2M1"};
    return t >= 0 && t < (int64_t)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

void o2r_shape_str(int32_t rank, const int64_t *dims, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return;
    buf[0] = 0;
    n += (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* Element count of a shape; 0 on overflow or negative dims (sets *ok = 0). */
static uint64_t shape_numel(int32_t rank, const int64_t *dims, int *ok)
{
    uint64_t n = 1;
    *ok = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && n > UINT64_MAX / (uint64_t)dims[i])) {
            *ok = 0;
            return 0;
        }
        n *= (uint64_t)dims[i];
    }
    return n;
}

/* Reads a whole file into an o2r_malloc'ed buffer. */
static o2r_status read_all(const char *path, unsigned char **out, size_t *len, char *err,
                           size_t errcap)
{
    int odd;
    FILE *f = o2r_fopen_regular(path, &odd); /* a FIFO with no writer must not hang the run */
    uint64_t fsize = 0;
    *out = NULL;
    if (!f && odd) {
        o2r_fmt(err, errcap, "%s: not a regular file", path);
        return O2R_ERR_IO;
    }
    if (!f) {
        o2r_fmt(err, errcap, "%s: cannot open: %s", path, strerror(errno));
        return O2R_ERR_IO;
    }
    if (o2r_file_regular_size(f, &fsize) != 1 || fsize > SIZE_MAX) {
        o2r_fmt(err, errcap, "%s: not a regular file", path);
        fclose(f);
        return O2R_ERR_IO;
    }
    size_t n = (size_t)fsize;
    unsigned char *buf = o2r_malloc(n);
    if (!buf) {
        o2r_fmt(err, errcap, "%s: out of host memory reading %zu bytes", path, n);
        fclose(f);
        return O2R_ERR_NOMEM;
    }
    if (fread(buf, 1, n, f) != n) {
        o2r_fmt(err, errcap, "%s: read error", path);
        o2r_free(buf);
        fclose(f);
        return O2R_ERR_IO;
    }
    fclose(f);
    *out = buf;
    *len = n;
    return O2R_OK;
}

/* ---- .npy ---------------------------------------------------------------------------------- */

/* Cursor over the .npy header dictionary text. */
struct hdr_cursor {
    const char *p;   /* current position */
    const char *end; /* one past the header */
};

static void hc_ws(struct hdr_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* Parses a quoted Python string into out (cap bytes). 0 on error. */
static int hc_string(struct hdr_cursor *c, char *out, size_t cap)
{
    hc_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= cap)
            return 0;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return 0;
    c->p++;
    out[n] = 0;
    return 1;
}

static int hc_char(struct hdr_cursor *c, char ch)
{
    hc_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* Parses the .npy header dict; fills dtype/rank/dims. Message in err. */
static o2r_status npy_parse_header(const char *path, const char *h, size_t hlen,
                                   struct o2r_tensor *t, char *err, size_t errcap)
{
    struct hdr_cursor c = {h, h + hlen};
    char key[32], descr[32] = "";
    int have_descr = 0, have_shape = 0, have_fortran = 0, fortran = 0;
    if (!hc_char(&c, '{'))
        goto bad;
    for (;;) {
        if (hc_char(&c, '}'))
            break;
        if (!hc_string(&c, key, sizeof key) || !hc_char(&c, ':'))
            goto bad;
        if (strcmp(key, "descr") == 0) {
            if (!hc_string(&c, descr, sizeof descr))
                goto bad;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            hc_ws(&c);
            if ((size_t)(c.end - c.p) >= 4 && memcmp(c.p, "True", 4) == 0) {
                fortran = 1;
                c.p += 4;
            } else if ((size_t)(c.end - c.p) >= 5 && memcmp(c.p, "False", 5) == 0) {
                c.p += 5;
            } else {
                goto bad;
            }
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!hc_char(&c, '('))
                goto bad;
            t->rank = 0;
            for (;;) {
                if (hc_char(&c, ')'))
                    break;
                hc_ws(&c);
                if (c.p >= c.end || *c.p < '0' || *c.p > '9')
                    goto bad;
                int64_t v = 0;
                while (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
                    if (v > (INT64_MAX - 9) / 10) {
                        o2r_fmt(err, errcap, "%s: .npy shape dimension overflows int64", path);
                        return O2R_ERR_FORMAT;
                    }
                    v = v * 10 + (*c.p++ - '0');
                }
                if (c.p < c.end && (*c.p == 'L' || *c.p == 'l'))
                    c.p++;
                if (t->rank == O2R_MAX_RANK) {
                    o2r_fmt(err, errcap, "%s: .npy array has more than %d dimensions", path,
                            O2R_MAX_RANK);
                    return O2R_ERR_FORMAT;
                }
                t->dims[t->rank++] = v;
                if (!hc_char(&c, ',')) {
                    if (!hc_char(&c, ')'))
                        goto bad;
                    break;
                }
            }
            have_shape = 1;
        } else {
            o2r_fmt(err, errcap, "%s: unexpected key '%s' in the .npy header", path, key);
            return O2R_ERR_FORMAT;
        }
        if (!hc_char(&c, ',')) {
            if (!hc_char(&c, '}'))
                goto bad;
            break;
        }
    }
    if (!have_descr || !have_shape || !have_fortran) {
        o2r_fmt(err, errcap, "%s: .npy header lacks '%s'", path,
                !have_descr ? "descr" : !have_shape ? "shape" : "fortran_order");
        return O2R_ERR_FORMAT;
    }
    if (fortran) {
        o2r_fmt(err, errcap, "%s: .npy array is in Fortran order (fortran_order: True); save it "
                "C-contiguous (numpy.ascontiguousarray)", path);
        return O2R_ERR_FORMAT;
    }
    /* descr: byte order + kind + size, e.g. '<f4', '|u1' */
    size_t dl = strlen(descr);
    char order = dl == 3 ? descr[0] : 0;
    char kind = dl == 3 ? descr[1] : 0;
    int size = dl == 3 && descr[2] >= '1' && descr[2] <= '9' ? descr[2] - '0' : 0;
    if (dl == 3 && order == '>' && size > 1) {
        o2r_fmt(err, errcap, "%s: .npy dtype '%s' is big-endian; only little-endian data is "
                "supported (numpy: arr.astype(arr.dtype.newbyteorder('<')))", path, descr);
        return O2R_ERR_FORMAT;
    }
    t->dtype = 0;
    if (order == '<' || order == '|' || order == '=' || (order == '>' && size == 1))
        for (size_t i = 0; i < N_DTYPES; i++)
            if (g_dtypes[i].npy_kind == kind && (int)g_dtypes[i].size == size)
                t->dtype = g_dtypes[i].dtype;
    if (!t->dtype) {
        o2r_fmt(err, errcap, "%s: unsupported .npy dtype '%s' (supported: f2 f4 f8 i1 i2 i4 i8 "
                "u1 u2 u4 u8 b1, little-endian)", path, descr);
        return O2R_ERR_FORMAT;
    }
    return O2R_OK;
bad:
    o2r_fmt(err, errcap, "%s: malformed .npy header near offset %ld: %.*s", path,
            (long)(c.p - h), (int)(hlen > 120 ? 120 : hlen), h);
    return O2R_ERR_FORMAT;
}

/* Checks that a data section of `have` bytes holds exactly the tensor; sets t->nbytes. */
static o2r_status check_data_size(const char *path, struct o2r_tensor *t, uint64_t have,
                                  char *err, size_t errcap)
{
    int ok;
    uint64_t numel = shape_numel(t->rank, t->dims, &ok);
    size_t es = o2r_dtype_size(t->dtype);
    char shp[200] = "";
    for (int32_t i = 0, n = 0; i < t->rank; i++)
        n += snprintf(shp + n, sizeof shp - (size_t)n, i ? "x%lld" : "%lld",
                      (long long)t->dims[i]);
    if (t->rank == 0)
        snprintf(shp, sizeof shp, "scalar");
    if (!ok || numel > UINT64_MAX / es) {
        o2r_fmt(err, errcap, "%s: shape %s element count overflows", path, shp);
        return O2R_ERR_FORMAT;
    }
    if (numel * es != have) {
        o2r_fmt(err, errcap, "%s: data is %llu bytes, header says %s %s = %llu bytes", path,
                (unsigned long long)have, shp, o2r_dtype_name(t->dtype),
                (unsigned long long)(numel * es));
        return O2R_ERR_FORMAT;
    }
    t->nbytes = numel * es;
    return O2R_OK;
}

static o2r_status npy_read(const char *path, const unsigned char *b, size_t len,
                           struct o2r_tensor *t, char *err, size_t errcap)
{
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) {
        o2r_fmt(err, errcap, "%s: not a .npy file (%s)", path,
                len < 10 ? "shorter than the 10-byte preamble" : "bad magic");
        return O2R_ERR_FORMAT;
    }
    unsigned major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) {
            o2r_fmt(err, errcap, "%s: truncated .npy preamble", path);
            return O2R_ERR_FORMAT;
        }
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        o2r_fmt(err, errcap, "%s: unsupported .npy format version %u.%u", path, major, b[7]);
        return O2R_ERR_FORMAT;
    }
    if (hlen > len - hstart) {
        o2r_fmt(err, errcap, "%s: truncated .npy header (%zu bytes declared, %zu present)", path,
                hlen, len - hstart);
        return O2R_ERR_FORMAT;
    }
    o2r_status st = npy_parse_header(path, (const char *)b + hstart, hlen, t, err, errcap);
    if (st != O2R_OK)
        return st;
    size_t off = hstart + hlen;
    st = check_data_size(path, t, len - off, err, errcap);
    if (st != O2R_OK)
        return st;
    t->data = o2r_malloc((size_t)t->nbytes);
    if (!t->data) {
        o2r_fmt(err, errcap, "%s: out of host memory (%llu bytes)", path,
                (unsigned long long)t->nbytes);
        return O2R_ERR_NOMEM;
    }
    if (t->nbytes)
        memcpy(t->data, b + off, (size_t)t->nbytes);
    return O2R_OK;
}

/* ---- ONNX TensorProto .pb ------------------------------------------------------------------ */

/* Reads a varint; NULL on truncation or more than 10 bytes. */
static const unsigned char *pb_varint(const unsigned char *p, const unsigned char *end,
                                      uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return NULL;
        unsigned char c = *p++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

/* What one scan of a TensorProto found (counts in pass 1, values copied in pass 2). */
struct pb_scan {
    int64_t data_type;        /* field 2 */
    int64_t data_location;    /* field 14 (1 = EXTERNAL) */
    int32_t rank;             /* dims seen */
    int64_t dims[O2R_MAX_RANK]; /* field 1 */
    int too_many_dims;        /* more than O2R_MAX_RANK dims */
    const unsigned char *raw; /* field 9 */
    size_t raw_len;           /* bytes of raw_data */
    int have_raw;             /* raw_data present */
    int have_strings;         /* string_data (6) present */
    int have_segment;         /* segment (3) present */
    uint64_t n_float, n_i32, n_i64, n_f64, n_u64; /* element counts of fields 4,5,7,10,11 */
    unsigned char *out;       /* pass 2: tensor data to fill (NULL in pass 1) */
    int typed_field;          /* pass 2: field number holding this dtype's values */
    size_t es;                /* pass 2: element size */
    uint64_t filled;          /* pass 2: elements written */
};

/* Stores one typed value (pass 2) converting to the tensor's element type. */
static void pb_store(struct pb_scan *s, int field, uint64_t bits)
{
    if (!s->out || field != s->typed_field)
        return;
    unsigned char *dst = s->out + s->filled * s->es;
    s->filled++;
    if (field == 4 || field == 10 || s->es == 8) {
        memcpy(dst, &bits, s->es); /* float bits (4 bytes), double / int64 / uint64 */
    } else if (s->es == 4) {
        uint32_t v = (uint32_t)bits;
        memcpy(dst, &v, 4);
    } else if (s->es == 2) {
        uint16_t v = (uint16_t)bits;
        memcpy(dst, &v, 2);
    } else {
        *dst = (unsigned char)bits;
    }
}

/* Walks a packed or scalar repeated numeric field; counts (pass 1) or stores (pass 2). */
static int pb_repeated(struct pb_scan *s, int field, int wire, const unsigned char **pp,
                       const unsigned char *end, uint64_t *count)
{
    const unsigned char *p = *pp;
    int fixed = field == 4 ? 4 : field == 10 ? 8 : 0; /* float_data / double_data */
    const unsigned char *q, *qend;
    uint64_t len;
    if (wire == 2) {
        if (!(p = pb_varint(p, end, &len)) || len > (uint64_t)(end - p))
            return 0;
        q = p;
        qend = p + len;
        p = qend;
    } else if ((fixed == 0 && wire == 0) || (fixed == 4 && wire == 5) || (fixed == 8 && wire == 1)) {
        q = p;
        qend = fixed ? (fixed > end - p ? NULL : p + fixed) : end;
        if (!qend)
            return 0;
        if (fixed) {
            p = qend;
        }
    } else {
        return 0;
    }
    int single = wire != 2;
    while (q < qend) {
        uint64_t v = 0;
        if (fixed) {
            if (qend - q < fixed)
                return 0;
            memcpy(&v, q, (size_t)fixed);
            q += fixed;
        } else if (!(q = pb_varint(q, qend, &v))) {
            return 0;
        }
        if (field == 1) {
            if (s->rank == O2R_MAX_RANK)
                s->too_many_dims = 1;
            else
                s->dims[s->rank++] = (int64_t)v;
        } else {
            (*count)++;
            pb_store(s, field, v);
        }
        if (single)
            break;
    }
    if (single && !fixed)
        p = q;
    *pp = p;
    return 1;
}

/* One pass over the message. 0 + message on malformed input. */
static int pb_scan_msg(struct pb_scan *s, const unsigned char *b, size_t len, const char **why)
{
    const unsigned char *p = b, *end = b + len;
    s->rank = 0;
    while (p < end) {
        uint64_t key, v, n;
        if (!(p = pb_varint(p, end, &key))) {
            *why = "truncated field key";
            return 0;
        }
        int field = (int)(key >> 3), wire = (int)(key & 7);
        uint64_t dummy = 0;
        switch (field) {
        case 1: case 4: case 5: case 7: case 10: case 11: {
            uint64_t *cnt = field == 4 ? &s->n_float : field == 5 ? &s->n_i32 :
                            field == 7 ? &s->n_i64 : field == 10 ? &s->n_f64 :
                            field == 11 ? &s->n_u64 : &dummy;
            if (!pb_repeated(s, field, wire, &p, end, cnt)) {
                *why = "truncated or malformed repeated numeric field";
                return 0;
            }
            continue;
        }
        case 2: case 14:
            if (wire != 0 || !(p = pb_varint(p, end, &v))) {
                *why = "malformed data_type / data_location";
                return 0;
            }
            if (field == 2)
                s->data_type = (int64_t)v;
            else
                s->data_location = (int64_t)v;
            continue;
        default: break;
        }
        switch (wire) {
        case 0:
            if (!(p = pb_varint(p, end, &v))) {
                *why = "truncated varint";
                return 0;
            }
            break;
        case 1:
            if (end - p < 8) {
                *why = "truncated fixed64";
                return 0;
            }
            p += 8;
            break;
        case 5:
            if (end - p < 4) {
                *why = "truncated fixed32";
                return 0;
            }
            p += 4;
            break;
        case 2:
            if (!(p = pb_varint(p, end, &n)) || n > (uint64_t)(end - p)) {
                *why = "length-delimited field runs past the end of the file";
                return 0;
            }
            if (field == 9) {
                s->raw = p;
                s->raw_len = (size_t)n;
                s->have_raw = 1;
            } else if (field == 6) {
                s->have_strings = 1;
            } else if (field == 3) {
                s->have_segment = 1;
            }
            p += n;
            break;
        default:
            *why = "unsupported wire type (groups) or not a protobuf message";
            return 0;
        }
    }
    return 1;
}

static o2r_status pb_read(const char *path, const unsigned char *b, size_t len,
                          struct o2r_tensor *t, char *err, size_t errcap)
{
    struct pb_scan s;
    const char *why = NULL;
    memset(&s, 0, sizeof s);
    if (!pb_scan_msg(&s, b, len, &why)) {
        o2r_fmt(err, errcap, "%s: not a valid ONNX TensorProto: %s", path, why);
        return O2R_ERR_FORMAT;
    }
    if (s.data_location == 1) {
        o2r_fmt(err, errcap, "%s: TensorProto stores its data externally (data_location = "
                "EXTERNAL), which is not supported for tensor files", path);
        return O2R_ERR_FORMAT;
    }
    if (s.too_many_dims) {
        o2r_fmt(err, errcap, "%s: TensorProto has more than %d dims", path, O2R_MAX_RANK);
        return O2R_ERR_FORMAT;
    }
    if (s.have_segment) {
        o2r_fmt(err, errcap, "%s: segmented TensorProto is not supported", path);
        return O2R_ERR_FORMAT;
    }
    if (s.data_type <= 0 || s.data_type > INT32_MAX || !dtype_find((int32_t)s.data_type)) {
        o2r_fmt(err, errcap, "%s: unsupported TensorProto data_type %lld (%s)", path,
                (long long)s.data_type, onnx_type_name(s.data_type));
        return O2R_ERR_FORMAT;
    }
    t->dtype = (int32_t)s.data_type;
    t->rank = s.rank;
    memcpy(t->dims, s.dims, sizeof t->dims);
    for (int32_t i = 0; i < t->rank; i++)
        if (t->dims[i] < 0) {
            o2r_fmt(err, errcap, "%s: TensorProto dim %d is negative (%lld)", path, (int)i,
                    (long long)t->dims[i]);
            return O2R_ERR_FORMAT;
        }
    int ok;
    uint64_t numel = shape_numel(t->rank, t->dims, &ok);
    size_t es = o2r_dtype_size(t->dtype);
    int typed_field;
    uint64_t typed_n;
    switch (t->dtype) {
    case O2R_F32: typed_field = 4; typed_n = s.n_float; break;
    case O2R_I64: typed_field = 7; typed_n = s.n_i64; break;
    case O2R_F64: typed_field = 10; typed_n = s.n_f64; break;
    case O2R_U32: case O2R_U64: typed_field = 11; typed_n = s.n_u64; break;
    default: typed_field = 5; typed_n = s.n_i32; break;
    }
    if (s.have_raw && typed_n) { /* onnx.proto: the values are in raw_data OR the typed field */
        static const char *tname[] = {[4] = "float_data", [5] = "int32_data", [7] = "int64_data",
                                      [10] = "double_data", [11] = "uint64_data"};
        o2r_fmt(err, errcap, "%s: TensorProto has both raw_data and %llu values in %s (a tensor "
                "holds its values in exactly one of them)", path, (unsigned long long)typed_n,
                tname[typed_field]);
        return O2R_ERR_FORMAT;
    }
    if (s.have_raw) {
        o2r_status st = check_data_size(path, t, s.raw_len, err, errcap);
        if (st != O2R_OK)
            return st;
    } else {
        static const char *fname[] = {[4] = "float_data", [5] = "int32_data", [7] = "int64_data",
                                      [10] = "double_data", [11] = "uint64_data"};
        if (!ok || numel != typed_n) {
            o2r_fmt(err, errcap, "%s: TensorProto %s has %llu values, dims say %llu (%s)", path,
                    fname[typed_field], (unsigned long long)typed_n, (unsigned long long)numel,
                    o2r_dtype_name(t->dtype));
            return O2R_ERR_FORMAT;
        }
        t->nbytes = numel * es; /* numel <= file bytes here, no overflow */
    }
    t->data = o2r_malloc((size_t)t->nbytes);
    if (!t->data) {
        o2r_fmt(err, errcap, "%s: out of host memory (%llu bytes)", path,
                (unsigned long long)t->nbytes);
        return O2R_ERR_NOMEM;
    }
    if (s.have_raw) {
        if (t->nbytes)
            memcpy(t->data, s.raw, (size_t)t->nbytes);
        return O2R_OK;
    }
    struct pb_scan s2;
    memset(&s2, 0, sizeof s2);
    s2.out = t->data;
    s2.typed_field = typed_field;
    s2.es = es;
    if (!pb_scan_msg(&s2, b, len, &why) || s2.filled != numel) {
        o2r_fmt(err, errcap, "%s: internal error re-reading TensorProto values", path);
        o2r_free(t->data);
        t->data = NULL;
        return O2R_ERR_FORMAT;
    }
    return O2R_OK;
}

/* ---- public entry points ------------------------------------------------------------------ */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

o2r_status o2r_tensor_read(const char *path, struct o2r_tensor *t, char *err, size_t errcap)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    if (err && errcap)
        err[0] = 0;
    if (!path || !t) {
        o2r_fmt(err, errcap, "o2r_tensor_read: path and t must not be NULL");
        return O2R_ERR_ARG;
    }
    memset(t, 0, sizeof *t);
    o2r_status st = read_all(path, &buf, &len, err, errcap);
    if (st != O2R_OK)
        return st;
    int is_npy;
    if (ends_with(path, ".npy"))
        is_npy = 1;
    else if (ends_with(path, ".pb"))
        is_npy = 0;
    else
        is_npy = len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0;
    st = is_npy ? npy_read(path, buf, len, t, err, errcap) : pb_read(path, buf, len, t, err, errcap);
    o2r_free(buf);
    if (st != O2R_OK)
        o2r_tensor_free(t);
    return st;
}

void o2r_tensor_free(struct o2r_tensor *t)
{
    if (!t)
        return;
    o2r_free(t->data);
    memset(t, 0, sizeof *t);
}

o2r_status o2r_tensor_write_npy(const char *path, const struct o2r_tensor *t, char *err,
                                size_t errcap)
{
    if (err && errcap)
        err[0] = 0;
    if (!path || !t) {
        o2r_fmt(err, errcap, "o2r_tensor_write_npy: path and t must not be NULL");
        return O2R_ERR_ARG;
    }
    const struct dtype_info *di = dtype_find(t->dtype);
    int ok = 0;
    uint64_t numel = 0;
    if (di && t->rank >= 0 && t->rank <= O2R_MAX_RANK)
        numel = shape_numel(t->rank, t->dims, &ok);
    if (!ok || numel > UINT64_MAX / di->size || numel * di->size != t->nbytes ||
        (t->nbytes && !t->data)) {
        o2r_fmt(err, errcap, "%s: cannot write: tensor has an invalid dtype (%d), rank, shape or "
                "byte size", path, (int)t->dtype);
        return O2R_ERR_ARG;
    }
    /* header: magic, v1.0, u16 length, dict padded with spaces + '\n' to a multiple of 64 */
    char hdr[512];
    int n = snprintf(hdr + 10, sizeof hdr - 10, "{'descr': '%c%c%zu', 'fortran_order': False, "
                     "'shape': (", di->size == 1 ? '|' : '<', di->npy_kind, di->size);
    for (int32_t i = 0; i < t->rank; i++)
        n += snprintf(hdr + 10 + n, sizeof hdr - 10 - (size_t)n, "%lld,%s",
                      (long long)t->dims[i], i + 1 < t->rank ? " " : "");
    if (t->rank > 1)
        n--; /* numpy writes (2, 3) but (4,) */
    n += snprintf(hdr + 10 + n, sizeof hdr - 10 - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1;
    size_t padded = (total + 63) / 64 * 64;
    memset(hdr + 10 + n, ' ', padded - total);
    hdr[padded - 1] = '\n';
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char)((padded - 10) & 0xff);
    hdr[9] = (char)((padded - 10) >> 8);

    o2r_status pst = o2r_path_check_output(path, err, errcap);
    if (pst != O2R_OK)
        return pst;
    char *tmp = o2r_malloc(strlen(path) + 16);
    if (!tmp) {
        o2r_fmt(err, errcap, "%s: out of host memory", path);
        return O2R_ERR_NOMEM;
    }
    FILE *f = o2r_tmp_create(path, tmp, strlen(path) + 16);
    if (!f) {
        o2r_fmt(err, errcap, "%s: cannot create a temporary file beside it: %s", path,
                strerror(errno));
        o2r_free(tmp);
        return O2R_ERR_IO;
    }
    errno = 0;
    int good = fwrite(hdr, 1, padded, f) == padded &&
               (t->nbytes == 0 || fwrite(t->data, 1, (size_t)t->nbytes, f) == t->nbytes);
    good = (o2r_file_sync_close(f) == 0) && good;
    int saved = errno ? errno : EIO;
    if (good && o2r_path_check_output(path, err, errcap) != O2R_OK) {
        /* the path changed into something that must not be replaced while we wrote */
        remove(tmp);
        o2r_free(tmp);
        return O2R_ERR_IO;
    }
    if (good && o2r_rename_replace(tmp, path) != 0) {
        saved = errno;
        good = 0;
    }
    if (!good) {
        remove(tmp);
        o2r_fmt(err, errcap, "%s: write failed: %s", path, strerror(saved));
        o2r_free(tmp);
        return O2R_ERR_IO;
    }
    o2r_free(tmp);
    return O2R_OK;
}
