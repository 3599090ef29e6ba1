/* replay_main.c — runs a libFuzzer target's LLVMFuzzerTestOneInput on files, without libFuzzer
 * (any C compiler): `fuzz_input_replay FILE|DIR...` feeds every file (a folder: each file in it)
 * once. The ctest bad-input.fuzz_input_corpus replays tests/fuzz/input_corpus/ (representative
 * inputs + every crash the fuzzer found) in the normal and the sanitizer builds.
 * Exit status 0 when every input ran; a finding aborts (or is reported by a sanitizer).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0, r;
    do {
        if (n == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 65536)))
            abort();
        r = fread(buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    printf("ran %s (%zu bytes)\n", path, n);
    return 0;
}

int main(int argc, char **argv)
{
    int bad = 0, count = 0;
    /* the target may chdir into a private folder: resolve the arguments first */
    char **paths = calloc((size_t)argc, sizeof *paths);
    for (int i = 1; i < argc; i++)
        paths[i] = realpath(argv[i], NULL);
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (!paths[i] || stat(paths[i], &st) != 0) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            bad = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(paths[i]);
            count++;
            continue;
        }
        DIR *d = opendir(paths[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char p[8192];
            snprintf(p, sizeof p, "%s/%s", paths[i], e->d_name);
            bad |= run_file(p);
            count++;
        }
        if (d)
            closedir(d);
    }
    for (int i = 1; i < argc; i++)
        free(paths[i]);
    free(paths);
    printf("%d inputs replayed\n", count);
    return bad || count == 0;
}
