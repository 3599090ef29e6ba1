/* lora_merge_bench.c — times the store's LoRA merge alone (o2s_lora_apply, store/lora.c) over every
 * module of a LoRA file against a checkpoint: for each entry the base weight is converted to
 * float32 (untimed) and the merge W += alpha/rank * up @ down is timed. Prints the modules, the
 * multiply-adds, the median of RUNS total seconds and GMAC/s. Built and run by bench/lora_merge.py:
 *   cc -O2 -Istore bench/lora_merge_bench.c BUILD/store/libonnx2cl_store.a -lcjson -lm -lpthread
 * Usage: lora_merge_bench CKPT LORA [RUNS] */
#define _POSIX_C_SOURCE 200809L
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 3) return fprintf(stderr, "usage: lora_merge_bench CKPT LORA [RUNS]\n"), 2;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    char err[2048];
    struct o2s_options so = {0};
    struct o2s_store *s = o2s_open(argv[1], &so, err, sizeof err);
    if (!s) return fprintf(stderr, "%s\n", err), 1;
    struct o2s_lora *l = o2s_lora_open(argv[2], s, err, sizeof err);
    if (!l) return fprintf(stderr, "%s\n", err), 1;
    double t[64], macs = 0;
    if (runs < 1 || runs > 64) runs = 3;
    for (int r = 0; r < runs; r++) {
        double total = 0;
        macs = 0;
        for (size_t i = 0; i < o2s_lora_count(l); i++) {
            const struct o2s_lora_entry *e = o2s_lora_get(l, i);
            struct o2s_view v;
            if (o2s_find(s, e->component, e->key, &v)) return fprintf(stderr, "%s: not in the checkpoint\n", e->key), 1;
            uint64_t n = o2s_elements(&v);
            float *w = malloc(n * sizeof *w);
            if (!w) return 1;
            o2s_to_f32(&v, w);
            double t0 = now();
            if (o2s_lora_apply(e, 1.0f, w)) return fprintf(stderr, "out of memory\n"), 1;
            total += now() - t0;
            macs += (double)n * e->rank;
            free(w);
        }
        t[r] = total;
    }
    for (int a = 0; a < runs; a++) /* median */
        for (int b = a + 1; b < runs; b++)
            if (t[b] < t[a]) { double x = t[a]; t[a] = t[b]; t[b] = x; }
    double best = t[runs / 2];
    printf("modules %zu macs %.0f seconds %.4f gmacs %.2f\n", o2s_lora_count(l), macs, best, macs / best / 1e9);
    o2s_lora_close(l);
    o2s_close(s);
    return 0;
}
