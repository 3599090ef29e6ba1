/* sha256.h — SHA-256 (FIPS 180-4): streaming (init / update / final) and one-shot (private to the
 * project; never installed).
 *
 * Used by the compiler's frontend (the model hash in struct ir_graph) and the pipeline (A1111's
 * model hash of a checkpoint file, read in chunks).
 * Assumes: nothing beyond ISO C11.
 * Guarantees: any total length (the bit length is kept in 64 bits as the standard requires);
 * update may be called with any split of the input (the digest is that of the concatenation);
 * tested against the FIPS/NIST vectors ("", "abc", the 448-bit message, one million 'a') in
 * tests/frontend/test_frontend.c.
 */
#ifndef ONNX2CL_SHA256_H
#define ONNX2CL_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct o2r_sha256 {
    uint32_t h[8];
    uint64_t len;       /* bytes given so far */
    unsigned char buf[64]; /* the last len % 64 of them, not yet compressed */
};

void o2r_sha256_init(struct o2r_sha256 *s);
void o2r_sha256_update(struct o2r_sha256 *s, const void *data, size_t len);
/* Writes the 32-byte big-endian digest; s is spent (init it again to reuse it). */
void o2r_sha256_final(struct o2r_sha256 *s, uint8_t out[32]);
/* The digest of len bytes at data in one call. */
void o2r_sha256(const void *data, size_t len, uint8_t out[32]);

#endif
