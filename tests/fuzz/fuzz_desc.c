/* fuzz_desc.c — libFuzzer target over the descriptor file reader (runtime/desc_io.c,
 * o2r_desc_read) and what reads a descriptor before o2r_model_init (o2r_desc_memory, the build,
 * layout and launch hashes), then o2r_desc_serialize of what was read: it must serialize and
 * read back to the same bytes.
 * Input: the first byte is a mode (bit 0 set: the rest is written as is; clear: the header's
 * size field and the trailing checksum are fixed up first, so mutations reach the parser); the
 * rest is the file. Seeds: tests/fuzz/desc_corpus/ (a small .o2d; regenerate it with
 * `onnx2cl tests/empty_dims/cases/gemm.linres_0x4_w4x3/model.onnx -o seed.o2d` after a format
 * or ABI change).
 * Findings: crashes, sanitizer reports, leaks, a read that does not round-trip (abort).
 */
#include "onnx2cl_rt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(path, sizeof path, "/tmp/onnx2cl-fuzz-desc-%d.o2d", (int)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t n = size - 1;
    unsigned char *p = malloc(n ? n : 1);
    if (!p) return 0;
    memcpy(p, data + 1, n);
    if (!(data[0] & 1) && n >= 72) {
        for (int i = 0; i < 8; i++) p[16 + i] = (unsigned char)((uint64_t)n >> (8 * i));
        uint64_t s = o2r_weights_checksum(p, n - 8);
        for (int i = 0; i < 8; i++) p[n - 8 + i] = (unsigned char)(s >> (8 * i));
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n) fwrite(p, 1, n, f);
    fclose(f);
    char err[1024];
    struct o2r_model_desc *d = NULL;
    if (o2r_desc_read(path, &d, err, sizeof err) == O2R_OK) {
        struct o2r_memory mem;
        o2r_desc_memory(d, &mem);
        (void)o2r_desc_layout_hash(d);
        (void)o2r_desc_build_hash(d);
        for (uint32_t i = 0; i < d->n_launches; i++) (void)o2r_launch_hash(d, i);
        unsigned char *again = NULL;
        size_t m = 0;
        if (o2r_desc_serialize(d, &again, &m) != O2R_OK) abort();
        /* NaN arguments are normalized when written: compare a second round trip */
        struct o2r_model_desc *d2 = NULL;
        FILE *g = fopen(path, "wb");
        if (!g) abort();
        fwrite(again, 1, m, g);
        fclose(g);
        if (o2r_desc_read(path, &d2, err, sizeof err) != O2R_OK) abort();
        unsigned char *third = NULL;
        size_t m3 = 0;
        if (o2r_desc_serialize(d2, &third, &m3) != O2R_OK || m3 != m || memcmp(third, again, m))
            abort();
        free(third);
        free(again);
        o2r_desc_free(d2);
        o2r_desc_free(d);
    } else if (d || !err[0]) {
        abort();
    }
    remove(path);
    free(p);
    return 0;
}
