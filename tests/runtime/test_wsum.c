/* test_wsum.c — the weights checksum (o2r_weights_checksum / o2r_wsum_*, onnx2cl_rt.h).
 *
 * Checks: (1) the streaming form fed in random pieces (odd sizes, splits inside words) equals the
 * one-shot form, for payload sizes 0..300 and a 1 MiB + 13 bytes payload; (2) flipping any single
 * bit of a 4 KiB payload, swapping two different words, or appending a zero byte changes the
 * checksum; (3) a fixed payload gives a fixed value, so the format-2 checksum cannot change by
 * accident (weights files written by another onnx2cl build must keep verifying). Label: unit.
 */
#include "onnx2cl_rt.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x1234567887654321ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t pieces(const unsigned char *p, size_t n)
{
    struct o2r_wsum s;
    o2r_wsum_init(&s);
    size_t off = 0;
    while (off < n) {
        size_t k = (size_t)(next() % 41);
        if (k > n - off) k = n - off;
        o2r_wsum_update(&s, p + off, k);
        off += k;
    }
    return o2r_wsum_final(&s);
}

int main(void)
{
    int fails = 0;
    size_t big = (1u << 20) + 13;
    unsigned char *buf = malloc(big + 1);
    if (!buf) return 2;
    for (size_t i = 0; i < big; i++) buf[i] = (unsigned char)next();
    for (size_t n = 0; n <= 300; n++)
        if (pieces(buf, n) != o2r_weights_checksum(buf, n)) {
            printf("FAIL: streaming != one-shot for %zu bytes\n", n);
            fails++;
        }
    if (pieces(buf, big) != o2r_weights_checksum(buf, big)) {
        printf("FAIL: streaming != one-shot for %zu bytes\n", big);
        fails++;
    }
    uint64_t base = o2r_weights_checksum(buf, 4096);
    for (size_t bit = 0; bit < 4096 * 8; bit++) {
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        if (o2r_weights_checksum(buf, 4096) == base) {
            printf("FAIL: flipping bit %zu does not change the checksum\n", bit);
            fails++;
        }
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    for (int w = 1; w < 64; w++) {
        unsigned char t[8];
        memcpy(t, buf, 8);
        if (memcmp(t, buf + 8 * w, 8) == 0) continue;
        memcpy(buf, buf + 8 * w, 8);
        memcpy(buf + 8 * w, t, 8);
        if (o2r_weights_checksum(buf, 4096) == base) {
            printf("FAIL: swapping words 0 and %d does not change the checksum\n", w);
            fails++;
        }
        memcpy(buf + 8 * w, buf, 8);
        memcpy(buf, t, 8);
    }
    buf[4096] = 0;
    if (o2r_weights_checksum(buf, 4097) == base) {
        printf("FAIL: appending a zero byte does not change the checksum\n");
        fails++;
    }
    /* fixed value: bytes 0, 1, ..., 99 */
    unsigned char seq[100];
    for (int i = 0; i < 100; i++) seq[i] = (unsigned char)i;
    uint64_t got = o2r_weights_checksum(seq, 100), want = 0x9427b650c4cfc564ull;
    if (got != want) {
        printf("FAIL: checksum of bytes 0..99 is %016llx, format 2 defines %016llx\n",
               (unsigned long long)got, (unsigned long long)want);
        fails++;
    }
    free(buf);
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
