/* fuzz_store.c — libFuzzer target for the checkpoint store (store/): the input bytes are one
 * .safetensors file (held in a memfd, opened by its /proc/self/fd path); a file the store accepts
 * is then walked completely: family detection, every view of every component converted to
 * float32. Any crash, sanitizer report or leak is a finding; refusals are fine.
 * Built with clang when ONNX2CL_FUZZ=ON (tests/store/CMakeLists.txt); without libFuzzer,
 * fuzz_store_replay (tests/fuzz/replay_main.c) runs the seeds as bad-input.fuzz_store_corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_store", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) abort();
    char path[64], err[1024];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    for (int ema = 0; ema < 2; ema++) {
        struct o2s_options opt = {.use_ema = ema};
        struct o2s_store *s = o2s_open(path, &opt, err, sizeof err);
        if (!s) continue;
        struct o2s_arch a;
        o2s_detect_arch(s, &a, err, sizeof err);
        struct o2s_info in;
        o2s_info(s, &in);
        for (size_t i = 0; i < in.unknown; i++)
            if (!o2s_unknown_key(s, i)) abort();
        for (int c = 0; c < O2S_NUM_COMPONENTS; c++) {
            struct o2s_view v;
            for (size_t i = 0; o2s_get(s, (enum o2s_component)c, i, &v) == 0; i++) {
                if (o2s_elements(&v) * o2s_dtype_size(v.dtype) != v.bytes) abort();
                float *x = malloc(o2s_elements(&v) * 4 + 4);
                if (!x) abort();
                o2s_to_f32(&v, x);
                free(x);
            }
        }
        o2s_close(s);
    }
    close(fd);
    return 0;
}
