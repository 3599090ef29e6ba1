/* tensor.c — TensorProto -> dense constant data for the IR.
 *
 * Data forms read (ONNX TensorProto, onnx.proto IR v8+):
 *   raw_data                       bytes, little-endian, natural element size (copied when small;
 *                                  buffers >= 64 KiB are taken over from the unpacked message)
 *   float_data                     FLOAT
 *   int32_data                     INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16
 *                                  (16-bit floats as their bit patterns), narrowed with a range check
 *   int64_data                     INT64
 *   double_data                    DOUBLE
 *   uint64_data                    UINT32, UINT64 (range-checked for UINT32)
 *   data_location = EXTERNAL       external_data {location, offset, length}: the file is mmapped
 *                                  read-only once (kept mapped for the life of the process) and
 *                                  the value points into the mapping (copied only when the offset
 *                                  is not a multiple of the element size, to keep data aligned).
 *   external data at location "weights.placeholder" (ONNX_PLACEHOLDER_LOCATION): a weight-free
 *                                  graph's stripped initializer (models/arch/). Refused unless
 *                                  onnx_allow_placeholders(true); then the value points at a
 *                                  read-only anonymous zero mapping (costs no memory until read)
 *                                  that onnx_is_placeholder() recognises, for the driver to fill
 *                                  it from a checkpoint through a name map, or refuse the build.
 * Every form is stored as a dense little-endian array of the dtype's natural size (BOOL 1 byte as
 * 0/1, FLOAT16/BFLOAT16 2 bytes). Assumes a little-endian host (checked at compile time).
 *
 * Checks (all fatal, naming the tensor): rank <= IR_MAX_RANK, no negative dim, element count and
 * byte size fit int64/size_t, data size == numel * element size, dtype supported (no STRING,
 * COMPLEX, FLOAT8/INT4 types), no segments. External data: location present, relative, without a
 * ".." component, its realpath() inside the realpath() of the model's folder (so symlinks that
 * lead out are refused), a regular file, offset and length decimal integers with
 * offset + length <= file size, length == numel * element size. 64-bit sizes throughout, so
 * weight files over 2/4 GB work.
 */
#include "frontend_internal.h"
#include "onnx_load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "onnx2cl's importer assumes a little-endian host (ONNX raw_data is little-endian)"
#endif

void fe_tensor_fatal(const struct fe_ctx *c, const char *tensor, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->where) ir_fatal_node(c->g, c->where, "tensor '%s': %s", tensor, msg);
    ir_fatal(c->g, "tensor '%s': %s", tensor, msg);
}

uint32_t fe_const_new(struct ir_graph *g, const char *base, enum ir_dtype dtype, int rank,
                      const int64_t *dims, const void *data, size_t nbytes)
{
    const char *name = ir_name_unique(g, base);
    void *copy = ir_alloc(g, nbytes ? nbytes : 1);
    if (nbytes) memcpy(copy, data, nbytes);
    uint32_t v = ir_const_add(g, name, dtype, rank, dims, copy, nbytes);
    g->values[v].is_initializer = true;
    return v;
}

/* ---- external data ---------------------------------------------------------------------------- */

/* One mapped external data file; the list lives (and stays mapped) for the whole process. */
struct ext_map {
    char *real;            /* realpath of the file */
    const uint8_t *base;   /* start of the read-only mapping (NULL for an empty file) */
    uint64_t size;         /* file size in bytes */
    struct ext_map *next;  /* next mapping */
};
static struct ext_map *ext_maps;

const char *onnx_external_file(size_t i)
{
    for (const struct ext_map *m = ext_maps; m; m = m->next)
        if (i-- == 0) return m->real;
    return NULL;
}

/* Strict unsigned decimal (no sign, no spaces, no overflow). */
static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Maps (or finds the mapping of) the file `real`. */
static const struct ext_map *ext_map_get(struct fe_ctx *c, const char *tname, const char *loc,
                                         const char *real)
{
    for (struct ext_map *m = ext_maps; m; m = m->next)
        if (strcmp(m->real, real) == 0) return m;
    /* O_NONBLOCK: a FIFO must not block the compiler (it is refused below as not regular) */
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        fe_tensor_fatal(c, tname, "cannot open external data file '%s': %s", loc, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        fe_tensor_fatal(c, tname, "external data '%s' is not a regular file", loc);
    }
    const uint8_t *base = NULL;
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            fe_tensor_fatal(c, tname, "cannot mmap external data file '%s' (%lld bytes): %s", loc,
                            (long long)st.st_size, strerror(e));
        }
        base = p;
    }
    close(fd);
    struct ext_map *m = calloc(1, sizeof *m);
    char *r = strdup(real);
    if (!m || !r) ir_die("out of memory");
    m->real = r;
    m->base = base;
    m->size = (uint64_t)st.st_size;
    m->next = ext_maps;
    ext_maps = m;
    return m;
}

/* ---- placeholders of weight-free graphs ---------------------------------------------------------- */

static bool placeholders_allowed;
/* One anonymous read-only zero mapping standing for a placeholder initializer's bytes. */
struct ph_map {
    const uint8_t *base; /* first byte */
    size_t size;         /* bytes mapped */
};
static struct ph_map *ph_maps;
static size_t nph, capph;

void onnx_allow_placeholders(bool allow)
{
    placeholders_allowed = allow;
}

bool onnx_is_placeholder(const void *data)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < nph; i++)
        if (p >= ph_maps[i].base && p < ph_maps[i].base + ph_maps[i].size) return true;
    return false;
}

/* want bytes of zeros that onnx_is_placeholder() recognises (never written, mapped lazily). */
static const void *placeholder_data(struct fe_ctx *c, const char *tname, size_t want)
{
    size_t size = want ? want : 1;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        fe_tensor_fatal(c, tname, "cannot map %zu bytes for a placeholder: %s", size,
                        strerror(errno));
    if (nph == capph) {
        size_t ncap = capph ? 2 * capph : 64;
        struct ph_map *n = realloc(ph_maps, ncap * sizeof *n);
        if (!n) ir_die("out of memory");
        ph_maps = n;
        capph = ncap;
    }
    ph_maps[nph].base = p;
    ph_maps[nph++].size = size;
    return p;
}

/* Resolves the external data of t (want bytes) and returns a pointer to them. */
static const void *external_data(struct fe_ctx *c, const Onnx__TensorProto *t, const char *tname,
                                 size_t want, size_t elem)
{
    const char *loc = NULL, *off_s = NULL, *len_s = NULL;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (!e->key) continue;
        if (strcmp(e->key, "location") == 0) loc = e->value;
        else if (strcmp(e->key, "offset") == 0) off_s = e->value;
        else if (strcmp(e->key, "length") == 0) len_s = e->value;
        /* "checksum" (SHA-1 of the file) and unknown keys are ignored. */
    }
    if (!loc || !*loc) fe_tensor_fatal(c, tname, "external data has no 'location'");
    if (strcmp(loc, ONNX_PLACEHOLDER_LOCATION) == 0) {
        if (!placeholders_allowed)
            fe_tensor_fatal(c, tname, "is a placeholder of a weight-free graph (external data "
                            "'%s'): its values come from a checkpoint: compile with "
                            "--weights-from CKPT.safetensors --name-map FILE.namemap", loc);
        return placeholder_data(c, tname, want);
    }
    if (loc[0] == '/')
        fe_tensor_fatal(c, tname,
                        "external data location '%s' is an absolute path (must be relative to "
                        "the model's folder)",
                        loc);
    for (const char *p = loc; *p;) {
        const char *s = strchr(p, '/');
        size_t n = s ? (size_t)(s - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            fe_tensor_fatal(c, tname,
                            "external data location '%s' contains '..' (must stay inside the "
                            "model's folder)",
                            loc);
        p += n;
        while (*p == '/') p++;
    }
    char *joined = ir_sprintf(c->g, "%s/%s", c->model_dir_real, loc);
    char *real = realpath(joined, NULL);
    if (!real) {
        if (errno == ENOENT || errno == ENOTDIR)
            fe_tensor_fatal(c, tname, "external data file '%s' not found (looked for %s)", loc,
                            joined);
        fe_tensor_fatal(c, tname, "external data file '%s': %s", loc, strerror(errno));
    }
    size_t dl = strlen(c->model_dir_real);
    bool inside = strncmp(real, c->model_dir_real, dl) == 0 &&
                  (real[dl] == '/' || (dl == 1 && c->model_dir_real[0] == '/'));
    if (!inside) {
        char *r = ir_strdup(c->g, real);
        free(real);
        fe_tensor_fatal(c, tname,
                        "external data location '%s' resolves to %s, outside the model's folder %s "
                        "(symlinks out of the folder are refused)",
                        loc, r, c->model_dir_real);
    }
    const struct ext_map *m = ext_map_get(c, tname, loc, real);
    free(real);

    uint64_t off = 0, len;
    if (off_s && !parse_u64(off_s, &off))
        fe_tensor_fatal(c, tname, "external data offset '%s' is not a non-negative integer", off_s);
    if (off > m->size)
        fe_tensor_fatal(c, tname, "external data offset %llu is past the end of '%s' (%llu bytes)",
                        (unsigned long long)off, loc, (unsigned long long)m->size);
    if (len_s) {
        if (!parse_u64(len_s, &len))
            fe_tensor_fatal(c, tname, "external data length '%s' is not a non-negative integer",
                            len_s);
        if (len > m->size - off)
            fe_tensor_fatal(c, tname,
                            "external data offset %llu + length %llu exceeds the size of '%s' "
                            "(%llu bytes)",
                            (unsigned long long)off, (unsigned long long)len, loc,
                            (unsigned long long)m->size);
    } else {
        len = m->size - off;
    }
    if (len != (uint64_t)want)
        fe_tensor_fatal(c, tname,
                        "external data length %llu does not match its dims and dtype (%llu bytes "
                        "expected)",
                        (unsigned long long)len, (unsigned long long)want);
    if (want == 0) return ir_alloc(c->g, 1);
    const uint8_t *p = m->base + off;
    if (off % elem != 0) { /* keep element accesses aligned */
        void *copy = ir_alloc(c->g, want);
        memcpy(copy, p, want);
        return copy;
    }
    return p;
}

/* ---- inline raw_data ---------------------------------------------------------------------------- */

/* Large raw_data buffers are taken over from the unpacked message instead of copied: protobuf-c
 * allocated them with malloc (16-byte aligned), and protobuf_c_message_free_unpacked() skips a
 * bytes field whose data is NULL. They stay allocated for the life of the process (like external
 * data mappings); the list keeps them reachable for leak checkers. */
#define STEAL_MIN_BYTES ((size_t)64 << 10)
static void **kept;
static size_t nkept, capkept;

static const void *steal_raw(Onnx__TensorProto *t)
{
    if (nkept == capkept) {
        size_t ncap = capkept ? 2 * capkept : 64;
        void **nk = realloc(kept, ncap * sizeof *nk);
        if (!nk) ir_die("out of memory");
        kept = nk;
        capkept = ncap;
    }
    void *p = t->raw_data.data;
    kept[nkept++] = p;
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    t->has_raw_data = 0;
    return p;
}

/* ---- typed fields ------------------------------------------------------------------------------ */

static const char *onnx_dtype_name(int32_t dt)
{
    static const char *names[] = {
        "UNDEFINED", "FLOAT",    "UINT8",     "INT8",       "UINT16",         "INT16",
        "INT32",     "INT64",    "STRING",    "BOOL",       "FLOAT16",        "DOUBLE",
        "UINT32",    "UINT64",   "COMPLEX64", "COMPLEX128", "BFLOAT16",       "FLOAT8E4M3FN",
        "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4",   "FLOAT4E2M1",
    };
    if (dt >= 0 && (size_t)dt < sizeof names / sizeof *names) return names[dt];
    return "unknown";
}

/* Checks the number of elements of a typed field against numel. */
static void check_count(struct fe_ctx *c, const char *tname, const char *field, size_t n,
                        int64_t numel)
{
    if ((uint64_t)n != (uint64_t)numel)
        fe_tensor_fatal(c, tname, "%s holds %zu elements but its dims need %lld", field, n,
                        (long long)numel);
}

void fe_tensor_data(struct fe_ctx *c, Onnx__TensorProto *t, const char *name,
                    enum ir_dtype *dtype, int *rank, int64_t dims[IR_MAX_RANK],
                    const void **data, size_t *nbytes)
{
    struct ir_graph *g = c->g;
    const char *tname = name ? name : "";
    int32_t dt = t->has_data_type ? t->data_type : 0;
    if (dt == IR_STRING) fe_tensor_fatal(c, tname, "string tensors are not supported");
    switch (dt) {
    case IR_F32: case IR_U8: case IR_I8: case IR_U16: case IR_I16: case IR_I32: case IR_I64:
    case IR_BOOL: case IR_F16: case IR_F64: case IR_U32: case IR_U64: case IR_BF16:
        break;
    default:
        fe_tensor_fatal(c, tname, "unsupported data type %d (%s)", (int)dt, onnx_dtype_name(dt));
    }
    if (t->segment) fe_tensor_fatal(c, tname, "segmented tensors are not supported");
    if (t->n_dims > IR_MAX_RANK)
        fe_tensor_fatal(c, tname, "rank %zu exceeds the supported maximum %d", t->n_dims,
                        IR_MAX_RANK);
    for (size_t i = 0; i < t->n_dims; i++)
        if (t->dims[i] < 0)
            fe_tensor_fatal(c, tname, "negative dim %lld at axis %zu", (long long)t->dims[i], i);
    int r = (int)t->n_dims;
    for (int i = 0; i < r; i++) dims[i] = t->dims[i];
    int64_t numel;
    size_t esz = ir_dtype_size((enum ir_dtype)dt);
    IR_ASSERT(esz > 0);
    if (!ir_dims_numel(dims, r, &numel) || (uint64_t)numel > (uint64_t)INT64_MAX / esz ||
        (uint64_t)numel > SIZE_MAX / esz)
        fe_tensor_fatal(c, tname, "element count overflows 64 bits");
    size_t want = (size_t)numel * esz;
    *dtype = (enum ir_dtype)dt;
    *rank = r;
    *nbytes = want;

    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        *data = external_data(c, t, tname, want, esz);
        return;
    }
    if (t->n_external_data > 0)
        fe_tensor_fatal(c, tname, "has external_data entries but data_location is not EXTERNAL");

    if (t->has_raw_data) {
        if (t->raw_data.len != want)
            fe_tensor_fatal(c, tname,
                            "raw_data holds %zu bytes but dims and dtype %s need %zu",
                            t->raw_data.len, onnx_dtype_name(dt), want);
        if (want >= STEAL_MIN_BYTES) {
            *data = steal_raw(t);
            return;
        }
        uint8_t *out = ir_alloc(g, want ? want : 1);
        if (want) memcpy(out, t->raw_data.data, want);
        *data = out;
        return;
    }
    uint8_t *out = ir_alloc(g, want ? want : 1);
    *data = out;
    if (t->n_string_data) fe_tensor_fatal(c, tname, "string tensors are not supported");
    switch (dt) {
    case IR_F32:
        check_count(c, tname, "float_data", t->n_float_data, numel);
        if (want) memcpy(out, t->float_data, want);
        return;
    case IR_F64:
        check_count(c, tname, "double_data", t->n_double_data, numel);
        if (want) memcpy(out, t->double_data, want);
        return;
    case IR_I64:
        check_count(c, tname, "int64_data", t->n_int64_data, numel);
        if (want) memcpy(out, t->int64_data, want);
        return;
    case IR_U64:
        check_count(c, tname, "uint64_data", t->n_uint64_data, numel);
        if (want) memcpy(out, t->uint64_data, want);
        return;
    case IR_U32:
        check_count(c, tname, "uint64_data", t->n_uint64_data, numel);
        for (int64_t i = 0; i < numel; i++) {
            uint64_t v = t->uint64_data[i];
            if (v > UINT32_MAX)
                fe_tensor_fatal(c, tname, "uint64_data[%lld] = %llu is out of range for UINT32",
                                (long long)i, (unsigned long long)v);
            uint32_t u = (uint32_t)v;
            memcpy(out + 4 * i, &u, 4);
        }
        return;
    default: /* int32_data carriers */
        break;
    }
    check_count(c, tname, "int32_data", t->n_int32_data, numel);
    int64_t lo, hi;
    switch (dt) {
    case IR_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case IR_I16: lo = INT16_MIN; hi = INT16_MAX; break;
    case IR_I8: lo = INT8_MIN; hi = INT8_MAX; break;
    case IR_U16: case IR_F16: case IR_BF16: lo = 0; hi = UINT16_MAX; break;
    case IR_U8: lo = 0; hi = UINT8_MAX; break;
    case IR_BOOL: lo = 0; hi = 1; break;
    default: IR_ASSERT(0); return;
    }
    for (int64_t i = 0; i < numel; i++) {
        int64_t v = t->int32_data[i];
        /* 16-bit float patterns with the sign bit set may be written sign-extended. */
        if ((dt == IR_F16 || dt == IR_BF16) && v < 0 && v >= INT16_MIN) v &= 0xffff;
        if (v < lo || v > hi)
            fe_tensor_fatal(c, tname, "int32_data[%lld] = %lld is out of range for %s",
                            (long long)i, (long long)v, onnx_dtype_name(dt));
        switch (esz) {
        case 1: out[i] = (uint8_t)v; break;
        case 2: { uint16_t u = (uint16_t)v; memcpy(out + 2 * i, &u, 2); break; }
        case 4: { int32_t u = (int32_t)v; memcpy(out + 4 * i, &u, 4); break; }
        default: IR_ASSERT(0);
        }
    }
}
