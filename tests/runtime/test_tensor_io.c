/* test_tensor_io.c — unit tests of the runtime's tensor files (.npy read/write, TensorProto .pb).
 *
 * What: (1) .pb files of the ONNX backend test data read by o2r_tensor_read equal the same
 * tensors saved by numpy (onnx.numpy_helper, made by make_refs.py): dtype, shape and bytes exact;
 * (2) TensorProto files using typed fields (float_data, int32_data, ...) likewise; (3) numpy-written
 * .npy files parse, and o2r_tensor_write_npy reproduces them byte for byte; (4) write/read
 * round trips for every dtype and odd shapes (rank 0, empty, rank 8); (5) truncated, padded,
 * corrupt, Fortran-order, big-endian, STRING and external-data files give O2R_ERR_FORMAT with a
 * message naming the file and the problem, and a .pb prefix is either an error or the exact
 * same tensor (never a wrong one); (6) injected allocation failures give O2R_ERR_NOMEM.
 * Exact comparisons (bit-exact): no tolerance is involved, file I/O must not change bytes.
 * Assumes: RT_TEST_DATA (committed references) and RT_ONNX_NODE_DATA (libonnx-testdata).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx2cl_rt.h"
#include "rt_internal.h"
#include "rt_test.h"

static char g_tmp[256]; /* per-run temporary folder */

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
}

static int tensors_equal(const struct o2r_tensor *a, const struct o2r_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return a->nbytes == 0 || memcmp(a->data, b->data, (size_t)a->nbytes) == 0;
}

/* (1) backend-test .pb vs numpy .npy */
static void test_pb_cases(void)
{
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/pb_cases.txt", RT_TEST_DATA);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char rel[512], npy[512], pb[1024], np_path[1024], err[512];
        if (sscanf(line, "%511s %511s", rel, npy) != 2)
            continue;
        snprintf(pb, sizeof pb, "%s/%s", RT_ONNX_NODE_DATA, rel);
        snprintf(np_path, sizeof np_path, "%s/%s", RT_TEST_DATA, npy);
        struct o2r_tensor a, b;
        o2r_status s1 = o2r_tensor_read(pb, &a, err, sizeof err);
        CHECK(s1 == O2R_OK, "%s: %s", pb, err);
        o2r_status s2 = o2r_tensor_read(np_path, &b, err, sizeof err);
        CHECK(s2 == O2R_OK, "%s: %s", np_path, err);
        if (s1 == O2R_OK && s2 == O2R_OK)
            CHECK(tensors_equal(&a, &b), "%s differs from %s (dtype %d/%d rank %d/%d)", pb,
                  np_path, a.dtype, b.dtype, a.rank, b.rank);
        o2r_tensor_free(&a);
        o2r_tensor_free(&b);
        n++;
    }
    fclose(f);
    CHECK(n >= 15, "only %d .pb cases", n);
}

/* (2) typed-field TensorProto files */
static void test_typed_pb(void)
{
    static const char *keys[] = {"f32", "f64", "f16", "i8", "u8", "i16", "u16",
                                 "i32", "i64", "u32", "u64", "bool", "scalar_f32"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char pb[1024], np_path[1024], err[512];
        snprintf(pb, sizeof pb, "%s/typed_%s.pb", RT_TEST_DATA, keys[i]);
        snprintf(np_path, sizeof np_path, "%s/typed_%s.npy", RT_TEST_DATA, keys[i]);
        struct o2r_tensor a, b;
        o2r_status s1 = o2r_tensor_read(pb, &a, err, sizeof err);
        CHECK(s1 == O2R_OK, "%s: %s", pb, err);
        o2r_status s2 = o2r_tensor_read(np_path, &b, err, sizeof err);
        CHECK(s2 == O2R_OK, "%s: %s", np_path, err);
        if (s1 == O2R_OK && s2 == O2R_OK)
            CHECK(tensors_equal(&a, &b), "%s differs from %s", pb, np_path);
        o2r_tensor_free(&a);
        o2r_tensor_free(&b);
    }
}

/* (3) numpy-written .npy: parse, and the writer reproduces the file byte for byte */
static void test_numpy_files(void)
{
    static const struct {
        const char *key;
        int32_t dtype;
        int32_t rank;
        int64_t dims[8];
    } cases[] = {
        {"f32_2x3", O2R_F32, 2, {2, 3}},
        {"f64_5", O2R_F64, 1, {5}},
        {"f16_3x1x2", O2R_F16, 3, {3, 1, 2}},
        {"i8_7", O2R_I8, 1, {7}},
        {"i16_2x2", O2R_I16, 2, {2, 2}},
        {"i32_1x1x1x3", O2R_I32, 4, {1, 1, 1, 3}},
        {"i64_scalar", O2R_I64, 0, {0}},
        {"u8_4", O2R_U8, 1, {4}},
        {"u16_2", O2R_U16, 1, {2}},
        {"u32_2", O2R_U32, 1, {2}},
        {"u64_1", O2R_U64, 1, {1}},
        {"bool_2x2", O2R_BOOL, 2, {2, 2}},
        {"f32_empty_0x4", O2R_F32, 2, {0, 4}},
        {"f32_rank8", O2R_F32, 8, {1, 2, 1, 3, 1, 1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1024], out[1024], err[512];
        snprintf(path, sizeof path, "%s/np_%s.npy", RT_TEST_DATA, cases[i].key);
        snprintf(out, sizeof out, "%s/w_%s.npy", g_tmp, cases[i].key);
        struct o2r_tensor t;
        o2r_status st = o2r_tensor_read(path, &t, err, sizeof err);
        CHECK(st == O2R_OK, "%s: %s", path, err);
        if (st != O2R_OK)
            continue;
        CHECK(t.dtype == cases[i].dtype && t.rank == cases[i].rank, "%s: dtype %d rank %d",
              path, t.dtype, t.rank);
        for (int k = 0; k < t.rank && k < 8; k++)
            CHECK(t.dims[k] == cases[i].dims[k], "%s: dim %d = %lld", path, k,
                  (long long)t.dims[k]);
        st = o2r_tensor_write_npy(out, &t, err, sizeof err);
        CHECK(st == O2R_OK, "%s: %s", out, err);
        size_t n1 = 0, n2 = 0;
        unsigned char *b1 = slurp(path, &n1), *b2 = slurp(out, &n2);
        CHECK(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0,
              "writer output %s differs from numpy's %s (%zu vs %zu bytes)", out, path, n2, n1);
        free(b1);
        free(b2);
        o2r_tensor_free(&t);
    }
    /* format 2.0 */
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/np_v2_f32_3.npy", RT_TEST_DATA);
    struct o2r_tensor t;
    CHECK(o2r_tensor_read(path, &t, err, sizeof err) == O2R_OK, "%s: %s", path, err);
    const float want[3] = {1.5f, -2.0f, 3.25f};
    CHECK(t.dtype == O2R_F32 && t.rank == 1 && t.dims[0] == 3 && t.nbytes == 12 &&
              memcmp(t.data, want, 12) == 0, "v2.0 file content");
    o2r_tensor_free(&t);
}

/* (4) write + read round trips over every dtype and odd shapes */
static void test_round_trips(void)
{
    static const int32_t dtypes[] = {O2R_F32, O2R_U8,  O2R_I8,  O2R_U16, O2R_I16, O2R_I32,
                                     O2R_I64, O2R_BOOL, O2R_F16, O2R_F64, O2R_U32, O2R_U64};
    static const struct {
        int32_t rank;
        int64_t dims[8];
    } shapes[] = {{0, {0}}, {1, {0}}, {1, {3}}, {3, {2, 0, 3}}, {2, {7, 3}},
                  {8, {1, 1, 1, 1, 1, 1, 1, 5}}, {4, {1, 3, 5, 7}}};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            struct o2r_tensor t, r;
            char path[512], err[512];
            memset(&t, 0, sizeof t);
            t.dtype = dtypes[d];
            t.rank = shapes[s].rank;
            uint64_t numel = 1;
            for (int k = 0; k < t.rank; k++) {
                t.dims[k] = shapes[s].dims[k];
                numel *= (uint64_t)t.dims[k];
            }
            t.nbytes = numel * o2r_dtype_size(t.dtype);
            t.data = malloc((size_t)t.nbytes + 1);
            for (uint64_t b = 0; b < t.nbytes; b++)
                ((unsigned char *)t.data)[b] =
                    t.dtype == O2R_BOOL ? (unsigned char)(b % 2) : (unsigned char)(b * 37 + d);
            snprintf(path, sizeof path, "%s/rt_%s_%zu.npy", g_tmp, o2r_dtype_name(t.dtype), s);
            CHECK(o2r_tensor_write_npy(path, &t, err, sizeof err) == O2R_OK, "%s", err);
            CHECK(o2r_tensor_read(path, &r, err, sizeof err) == O2R_OK, "%s", err);
            CHECK(tensors_equal(&t, &r), "round trip %s shape #%zu", o2r_dtype_name(t.dtype), s);
            o2r_tensor_free(&r);
            free(t.data);
        }
    /* invalid tensor: nbytes disagrees with the shape -> O2R_ERR_ARG, nothing written */
    struct o2r_tensor bad;
    char err[512], path[512];
    float x[4] = {0};
    memset(&bad, 0, sizeof bad);
    bad.dtype = O2R_F32;
    bad.rank = 1;
    bad.dims[0] = 3;
    bad.data = x;
    bad.nbytes = 16;
    snprintf(path, sizeof path, "%s/bad.npy", g_tmp);
    CHECK(o2r_tensor_write_npy(path, &bad, err, sizeof err) == O2R_ERR_ARG, "bad tensor accepted");
    CHECK(access(path, F_OK) != 0, "bad tensor left a file");
    /* unwritable folder -> O2R_ERR_IO, naming the path */
    bad.nbytes = 12;
    CHECK(o2r_tensor_write_npy("/nonexistent-dir/x.npy", &bad, err, sizeof err) == O2R_ERR_IO &&
              strstr(err, "/nonexistent-dir/x.npy"), "unwritable: %s", err);
}

/* Reads bytes as a file named name in the temp folder; returns the status, message in err. */
static o2r_status read_bytes(const char *name, const void *b, size_t n, struct o2r_tensor *t,
                             char *err, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    spit(path, b, n);
    return o2r_tensor_read(path, t, err, cap);
}

/* (5) corrupt files */
static void test_corrupt(void)
{
    char path[1024], err[512];
    struct o2r_tensor t, ref;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/np_f32_2x3.npy", RT_TEST_DATA);
    unsigned char *b = slurp(path, &n);
    CHECK(b != NULL, "read %s", path);
    if (!b)
        return;
    /* every truncation of a .npy fails with O2R_ERR_FORMAT */
    int all_fail = 1;
    for (size_t k = 0; k < n; k++)
        if (read_bytes("trunc.npy", b, k, &t, err, sizeof err) != O2R_ERR_FORMAT ||
            !strstr(err, "trunc.npy")) {
            all_fail = 0;
            fprintf(stderr, "prefix %zu: '%s'\n", k, err);
        }
    CHECK(all_fail, "a truncated .npy was accepted or gave a wrong status");
    CHECK(read_bytes("short.npy", b, n - 4, &t, err, sizeof err) == O2R_ERR_FORMAT &&
              strstr(err, "data is 20 bytes, header says 2x3 float32 = 24 bytes"), "msg: %s",
          err);
    /* trailing garbage */
    unsigned char *big = malloc(n + 4);
    memcpy(big, b, n);
    memset(big + n, 0, 4);
    CHECK(read_bytes("long.npy", big, n + 4, &t, err, sizeof err) == O2R_ERR_FORMAT, "long");
    free(big);
    /* header edits (same length so the file stays well-framed) */
    static const struct {
        const char *from, *to, *expect;
    } edits[] = {
        {"'fortran_order': False", "'fortran_order': True ", "Fortran"},
        {"'<f4'", "'>f4'", "big-endian"},
        {"'<f4'", "'<c8'", "unsupported .npy dtype"},
        {"'descr'", "'dascr'", "unexpected key"},
        {"(2, 3)", "(2, 3]", "malformed"},
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        unsigned char *c = malloc(n);
        memcpy(c, b, n);
        char *hit = memmem(c, n, edits[e].from, strlen(edits[e].from));
        CHECK(hit != NULL, "edit %zu not applicable", e);
        if (hit)
            memcpy(hit, edits[e].to, strlen(edits[e].to));
        CHECK(read_bytes("edit.npy", c, n, &t, err, sizeof err) == O2R_ERR_FORMAT &&
                  strstr(err, edits[e].expect) && strstr(err, "edit.npy"),
              "edit %zu: %s", e, err);
        free(c);
    }
    {
        unsigned char *c = malloc(n);
        memcpy(c, b, n);
        c[6] = 9;
        CHECK(read_bytes("ver.npy", c, n, &t, err, sizeof err) == O2R_ERR_FORMAT &&
                  strstr(err, "version 9"), "version: %s", err);
        free(c);
    }
    free(b);
    /* missing file */
    CHECK(o2r_tensor_read("/nonexistent/x.npy", &t, err, sizeof err) == O2R_ERR_IO &&
              strstr(err, "/nonexistent/x.npy"), "missing: %s", err);

    /* .pb: every prefix is an error or exactly the same tensor */
    static const char *pbs[] = {"typed_f32.pb", "typed_i64.pb", "typed_f16.pb", "typed_u64.pb"};
    for (size_t p = 0; p < sizeof pbs / sizeof pbs[0]; p++) {
        snprintf(path, sizeof path, "%s/%s", RT_TEST_DATA, pbs[p]);
        b = slurp(path, &n);
        CHECK(o2r_tensor_read(path, &ref, err, sizeof err) == O2R_OK, "%s", err);
        int ok = 1, nerr = 0;
        for (size_t k = 0; k < n; k++) {
            o2r_status st = read_bytes("trunc.pb", b, k, &t, err, sizeof err);
            if (st == O2R_OK) {
                ok &= tensors_equal(&t, &ref);
                o2r_tensor_free(&t);
            } else {
                ok &= st == O2R_ERR_FORMAT && strstr(err, "trunc.pb") != NULL;
                nerr++;
            }
        }
        CHECK(ok && nerr > (int)n / 2, "%s: a prefix gave a wrong tensor (%d errors)", pbs[p],
              nerr);
        /* byte corruption: never crashes; if accepted, the tensor is consistent */
        for (size_t k = 0; k < n; k++) {
            unsigned char *c = malloc(n);
            memcpy(c, b, n);
            c[k] ^= 0xff;
            if (read_bytes("flip.pb", c, n, &t, err, sizeof err) == O2R_OK) {
                uint64_t numel = 1;
                for (int i = 0; i < t.rank; i++)
                    numel *= (uint64_t)t.dims[i];
                CHECK(numel * o2r_dtype_size(t.dtype) == t.nbytes, "inconsistent tensor");
                o2r_tensor_free(&t);
            }
            free(c);
        }
        o2r_tensor_free(&ref);
        free(b);
    }
    /* STRING tensor from the backend data */
    snprintf(path, sizeof path, "%s/test_strnormalizer_export_monday_empty_output/"
             "test_data_set_0/output_0.pb", RT_ONNX_NODE_DATA);
    CHECK(o2r_tensor_read(path, &t, err, sizeof err) == O2R_ERR_FORMAT && strstr(err, "STRING"),
          "string tensor: %s", err);
    /* hand-made: packed dims + raw_data */
    {
        unsigned char m[64];
        size_t k = 0;
        m[k++] = 0x0a; m[k++] = 2; m[k++] = 2; m[k++] = 3; /* dims packed [2,3] */
        m[k++] = 0x10; m[k++] = 5;                           /* data_type INT16 */
        m[k++] = 0x4a; m[k++] = 12;                          /* raw_data, 12 bytes */
        for (int i = 0; i < 12; i++)
            m[k++] = (unsigned char)i;
        CHECK(read_bytes("packed.pb", m, k, &t, err, sizeof err) == O2R_OK && t.rank == 2 &&
                  t.dims[0] == 2 && t.dims[1] == 3 && t.dtype == O2R_I16 && t.nbytes == 12 &&
                  ((unsigned char *)t.data)[11] == 11, "packed dims: %s", err);
        o2r_tensor_free(&t);
        /* wrong raw size */
        m[7] = 10;
        CHECK(read_bytes("rawsize.pb", m, k - 2, &t, err, sizeof err) == O2R_ERR_FORMAT &&
                  strstr(err, "data is 10 bytes, header says 2x3 int16 = 12 bytes"), "raw: %s",
              err);
        /* external data */
        k = 0;
        m[k++] = 0x08; m[k++] = 4;    /* dims 4 */
        m[k++] = 0x10; m[k++] = 1;    /* FLOAT */
        m[k++] = 0x70; m[k++] = 1;    /* data_location EXTERNAL */
        CHECK(read_bytes("ext.pb", m, k, &t, err, sizeof err) == O2R_ERR_FORMAT &&
                  strstr(err, "EXTERNAL"), "external: %s", err);
        /* no data for 4 floats */
        CHECK(read_bytes("nodata.pb", m, 4, &t, err, sizeof err) == O2R_ERR_FORMAT &&
                  strstr(err, "float_data has 0 values, dims say 4"), "nodata: %s", err);
        /* negative dim */
        k = 0;
        m[k++] = 0x08;
        for (int i = 0; i < 9; i++)
            m[k++] = 0xff;
        m[k++] = 0x01; /* -1 as varint */
        m[k++] = 0x10; m[k++] = 1;
        CHECK(read_bytes("neg.pb", m, k, &t, err, sizeof err) == O2R_ERR_FORMAT &&
                  strstr(err, "negative"), "neg: %s", err);
        /* float8 unsupported, by name */
        k = 0;
        m[k++] = 0x10; m[k++] = 17;
        CHECK(read_bytes("f8.pb", m, k, &t, err, sizeof err) == O2R_ERR_FORMAT &&
                  strstr(err, "FLOAT8E4M3FN"), "f8: %s", err);
        /* bfloat16: dims [2], raw_data = bits of 1.0 and -2.5 */
        k = 0;
        m[k++] = 0x08; m[k++] = 2;
        m[k++] = 0x10; m[k++] = 16;
        m[k++] = 0x4a; m[k++] = 4;
        m[k++] = 0x80; m[k++] = 0x3f; m[k++] = 0x20; m[k++] = 0xc0;
        memset(&t, 0, sizeof t);
        CHECK(read_bytes("bf16.pb", m, k, &t, err, sizeof err) == O2R_OK && t.dtype == O2R_BF16 && t.rank == 1 &&
                  t.dims[0] == 2 && t.nbytes == 4 && ((uint16_t *)t.data)[0] == 0x3f80 &&
                  ((uint16_t *)t.data)[1] == 0xc020, "bf16: %s", err);
        if (t.data) o2r_tensor_free(&t);
    }
}

/* (6) allocation failures */
static void test_alloc_failures(void)
{
    char path[1024], err[512];
    struct o2r_tensor t;
    snprintf(path, sizeof path, "%s/np_f32_2x3.npy", RT_TEST_DATA);
    for (int k = 1; k <= 2; k++) {
        char v[16];
        snprintf(v, sizeof v, "%d", k);
        setenv("ONNX2CL_FAIL_ALLOC", v, 1);
        o2r_fault_reset();
        o2r_status st = o2r_tensor_read(path, &t, err, sizeof err);
        unsetenv("ONNX2CL_FAIL_ALLOC");
        CHECK(st == O2R_ERR_NOMEM && strstr(err, "out of host memory"), "alloc %d: %d %s", k, st,
              err);
        CHECK(t.data == NULL, "data left after failure");
    }
    o2r_fault_reset();
}

int main(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/o2r_tio_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_pb_cases();
    test_typed_pb();
    test_numpy_files();
    test_round_trips();
    test_corrupt();
    test_alloc_failures();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", g_tmp);
    return rt_test_done("test_tensor_io");
}
