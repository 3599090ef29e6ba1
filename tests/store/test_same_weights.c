/* test_same_weights.c A B [MIN_SWAPPED] — two checkpoints that hold the same model in different
 * layouts (a single file in SAI's MMDiT / Black Forest Labs' / ComfyUI's naming, and the diffusers
 * folder it was made from by models/make_single_files.py, whose output diffusers' own converters
 * check) give, for every component of A, exactly B's canonical keys, with B's dims and the same
 * float32 values bit for bit (o2s_to_f32: row slices, swapped halves and transposed views
 * resolved). Components A lacks are not compared (a transformer-only file). At least MIN_SWAPPED
 * (default 0) of A's views must be swapped ones (the adaLN (shift, scale) rows), so the swap is
 * exercised. Exit 0 when everything matches; one line per difference otherwise. Label unit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

static int failures;

static void fail(const char *fmt, const char *a, const char *b)
{
    if (failures++ < 20) {
        printf("FAIL ");
        printf(fmt, a, b);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_same_weights A B [MIN_SWAPPED]\n");
        return 2;
    }
    char err[2048];
    struct o2s_store *a = o2s_open(argv[1], NULL, err, sizeof err);
    if (!a) {
        printf("FAIL %s\n", err);
        return 1;
    }
    struct o2s_store *b = o2s_open(argv[2], NULL, err, sizeof err);
    if (!b) {
        printf("FAIL %s\n", err);
        return 1;
    }
    struct o2s_info ia;
    o2s_info(a, &ia);
    if (ia.unknown) fail("%s: unknown key '%s'", argv[1], o2s_unknown_key(a, 0));
    long tensors = 0, swapped = 0, comps = 0;
    for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
        size_t n = o2s_count(a, (enum o2s_component)c);
        if (!n) continue;
        comps++;
        const char *cn = o2s_component_name((enum o2s_component)c);
        if (n != o2s_count(b, (enum o2s_component)c)) fail("component %s: key counts differ (%s)", cn, "A vs B");
        for (size_t i = 0; i < n; i++) {
            struct o2s_view va, vb;
            o2s_get(a, (enum o2s_component)c, i, &va);
            if (o2s_find(b, (enum o2s_component)c, va.key, &vb) != 0) {
                fail("%s '%s': not in B", cn, va.key);
                continue;
            }
            if (va.rank != vb.rank || memcmp(va.dims, vb.dims, sizeof va.dims[0] * (size_t)va.rank)) {
                fail("%s '%s': dims differ", cn, va.key);
                continue;
            }
            uint64_t ne = o2s_elements(&va);
            float *x = malloc(ne * sizeof *x + 4), *y = malloc(ne * sizeof *y + 4);
            if (!x || !y) return 1;
            o2s_to_f32(&va, x);
            o2s_to_f32(&vb, y);
            if (memcmp(x, y, ne * sizeof *x)) fail("%s '%s': values differ", cn, va.key);
            free(x);
            free(y);
            tensors++;
            swapped += va.swapped;
        }
    }
    long min_swapped = argc > 3 ? atol(argv[3]) : 0;
    if (swapped < min_swapped) fail("%s: fewer swapped views than asked (%s)", argv[1], argv[3]);
    printf("%s: %ld components, %ld canonical tensors equal to %s (%ld swapped views); %d failures\n",
           argv[1], comps, tensors, argv[2], swapped, failures);
    o2s_close(a);
    o2s_close(b);
    return failures ? 1 : 0;
}
