/* test_rng.c — pipeline/torch_rng.c against torch.randn, bit for bit.
 *
 * Reads rng_refs.txt ("SEED N1 N2 ...": one generator, successive torch.randn(Ni) calls) and
 * rng_refs.bin (all outputs as float32), made by make_rng_refs.py with torch 2.15 (AVX2 kernel).
 * Every value must have the same bits. Usage: test_rng REFS.txt REFS.bin
 */
#include "torch_rng.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_rng REFS.txt REFS.bin\n");
        return 2;
    }
    FILE *ft = fopen(argv[1], "r"), *fb = fopen(argv[2], "rb");
    if (!ft || !fb) {
        fprintf(stderr, "FAIL: cannot open %s\n", ft ? argv[2] : argv[1]);
        return 1;
    }
    char line[4096];
    int gens = 0, calls = 0, bad = 0;
    size_t values = 0;
    while (fgets(line, sizeof line, ft)) {
        char *p = line;
        uint64_t seed = strtoull(p, &p, 10);
        struct sdp_rng g;
        sdp_rng_seed(&g, seed);
        gens++;
        for (;;) {
            char *q;
            long n = strtol(p, &q, 10);
            if (q == p) break;
            p = q;
            float *want = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
            if (fread(want, 4, (size_t)n, fb) != (size_t)n) {
                fprintf(stderr, "FAIL: %s too short\n", argv[2]);
                return 1;
            }
            sdp_rng_randn(&g, got, (size_t)n);
            int diff = 0;
            for (long i = 0; i < n; i++)
                if (memcmp(&got[i], &want[i], 4)) {
                    if (diff < 3)
                        fprintf(stderr, "seed %" PRIu64 " randn(%ld)[%ld]: got %.9g want %.9g\n",
                                seed, n, i, got[i], want[i]);
                    diff++;
                }
            bad += diff;
            values += (size_t)n;
            calls++;
            free(want);
            free(got);
        }
    }
    char extra;
    if (fread(&extra, 1, 1, fb) == 1) {
        fprintf(stderr, "FAIL: %s has more values than %s lists\n", argv[2], argv[1]);
        return 1;
    }
    printf("%d generators, %d randn calls, %zu values, %d differ\n", gens, calls, values, bad);
    return bad || values == 0 ? 1 : 0;
}
