/* fuzz_input.c — libFuzzer target over a generated executable's input parsing: the .npy and
 * ONNX TensorProto .pb readers (runtime/tensor_io.c) and the command line of o2r_main
 * (runtime/main.c: --input NAME=FILE / --output / --output-dir / --bench ... specs).
 *
 * Input format: the first line is the command line (at most 24 space-separated words after
 * argv[0]); the rest is the content of a tensor file written into a private folder as both
 * t.npy and t.pb. Words may name those files ("x=t.npy") or anything else; a word that could
 * leave the private folder the process runs in (starting with '/', holding "=/" or "..")
 * becomes "w".
 * Each input: o2r_tensor_read of t.npy and of t.pb (with the result's dtype/rank/dims/nbytes
 * checked for consistency), then o2r_main with a fixed descriptor of four inputs (x float32
 * [2,3], ids int64 [1,4], h float16 [3], s float32 scalar) and two outputs. OpenCL sees an empty
 * ICD vendors folder, so o2r_main stops at device selection: everything before the device
 * (argument parsing, output path checks, reading and checking every input) runs for real.
 * Findings: crashes, sanitizer reports (ASan/UBSan), leaks (LeakSanitizer), a reader returning
 * O2R_OK with an inconsistent tensor (abort).
 * Assumes: single-threaded; run with -close_fd_mask=3 (o2r_main prints its usage errors).
 */
#include "onnx2cl_rt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct o2r_io fz_inputs[] = {
    {"x", O2R_F32, 2, {2, 3}, 0, 24},
    {"ids", O2R_I64, 2, {1, 4}, 0, 32},
    {"h", O2R_F16, 1, {3}, 0, 6},
    {"s", O2R_F32, 0, {0}, 0, 4},
};
static const struct o2r_io fz_outputs[] = {
    {"y", O2R_F32, 2, {2, 3}, 0, 24},
    {"y/2", O2R_I64, 1, {2}, 0, 16},
};
static const struct o2r_buffer fz_buffers[] = {{0, 64, O2R_SPACE_ARENA, "io", 0}};
static const struct o2r_model_desc fz_desc = {
    O2R_ABI_VERSION, "fuzz", "0", "", 0, "", 64, 0, 0, 1, fz_buffers, 0, NULL, 0, NULL,
    4, fz_inputs, 2, fz_outputs, 0, NULL, 0, NULL, O2R_F32, 0, NULL, 0, NULL, 0, NULL,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char dir[] = "/tmp/onnx2cl-fuzz-input-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) != 0) {
        perror("fuzz_input: private folder");
        abort();
    }
    if (mkdir("vendors", 0755) != 0) {
        perror("fuzz_input: vendors folder");
        abort();
    }
    setenv("OCL_ICD_VENDORS", "vendors", 1); /* no OpenCL platform: o2r_main stops there */
    setenv("OCL_ICD_FILENAMES", "", 1);
    unsetenv("ONNX2CL_DEVICE");
    setenv("ONNX2CL_NO_CACHE", "1", 1);
    return 0;
}

static void write_file(const char *path, const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
        abort();
}

/* A tensor a reader accepted must be self-consistent. */
static void check_tensor(const struct o2r_tensor *t)
{
    if (t->rank < 0 || t->rank > O2R_MAX_RANK)
        abort();
    uint64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0)
            abort();
        n *= (uint64_t)t->dims[i];
    }
    size_t es = o2r_dtype_size(t->dtype);
    if (es == 0 || n * es != t->nbytes || (t->nbytes && !t->data))
        abort();
    volatile unsigned char sink = 0;
    const unsigned char *p = t->data;
    for (uint64_t i = 0; i < t->nbytes; i += 4093)
        sink ^= p[i]; /* ASan: the data really holds nbytes bytes */
    if (t->nbytes)
        sink ^= p[t->nbytes - 1];
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t line_len = nl ? (size_t)(nl - data) : size;
    if (line_len > 4096)
        return 0;
    const uint8_t *body = nl ? nl + 1 : data + size;
    size_t body_len = size - (size_t)(body - data);
    write_file("t.npy", body, body_len);
    write_file("t.pb", body, body_len);

    char err[1024];
    struct o2r_tensor t;
    for (int k = 0; k < 2; k++) {
        if (o2r_tensor_read(k ? "t.pb" : "t.npy", &t, err, sizeof err) == O2R_OK) {
            check_tensor(&t);
            o2r_tensor_free(&t);
        } else if (!err[0]) {
            abort(); /* a refusal must say why */
        }
    }

    char line[4097];
    memcpy(line, data, line_len);
    line[line_len] = 0;
    char *argv[26] = {"fuzz"};
    int argc = 1;
    for (char *w = strtok(line, " "); w && argc < 25; w = strtok(NULL, " ")) {
        if (w[0] == '/' || strstr(w, "=/") || strstr(w, ".."))
            w = "w";
        argv[argc++] = w;
    }
    argv[argc] = NULL;
    int rc = o2r_main(&fz_desc, argc, argv);
    if (rc != 0 && rc != 1 && rc != 2)
        abort();
    return 0;
}
