/* test_platform_proc.c — runtime/platform_proc.c, the OS seam of onnx2cl-sd and the store
 * (POSIX side; the Windows side is compiled by .ci/mingw.sh): spawning and exit statuses, a
 * program that cannot start, folders, realpath, file identity, read-only mapping, getline /
 * strndup, random bytes, shared-library errors. Works in a fresh folder under $TMPDIR (or /tmp).
 */
#include "platform.h"
#include "rt_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    const char *t = getenv("TMPDIR");
    char dir[512], p[600], q[600], err[512];
    snprintf(dir, sizeof dir, "%s/o2r_platform_proc_%ld", t && *t ? t : "/tmp", o2r_pid());
    CHECK(o2r_mkdir(dir) == 0, "mkdir %s: %s", dir, strerror(errno));
    CHECK(o2r_mkdir(dir) != 0 && errno == EEXIST, "second mkdir: errno %d", errno);
    CHECK(o2r_path_is_dir(dir) && o2r_path_writable_dir(dir), "%s", dir);

    /* spawn: exit status, stdout sent to stderr, a missing program */
    char *ok[] = {"/bin/sh", "-c", "echo to-stderr; exit 3", NULL};
    CHECK(o2r_spawn_wait(ok, err, sizeof err) == 3, "exit status");
    char *kill9[] = {"/bin/sh", "-c", "kill -9 $$", NULL};
    err[0] = 0;
    CHECK(o2r_spawn_wait(kill9, err, sizeof err) == -1 && strstr(err, "signal 9"), "killed: %s", err);
    snprintf(p, sizeof p, "%s/no-such-program", dir);
    char *missing[] = {p, NULL};
    err[0] = 0;
    CHECK(o2r_spawn_wait(missing, err, sizeof err) == -1 && strstr(err, "no-such-program"), "missing: %s", err);
    CHECK(o2r_pid_alive(o2r_pid()), "own pid");
    CHECK(o2r_path_executable("/bin/sh") && !o2r_path_executable(p), "executable");

    /* a file: stat, realpath, getline (last line without '\n'), mapping */
    snprintf(p, sizeof p, "%s/lines.txt", dir);
    FILE *f = fopen(p, "wb");
    CHECK(f && fputs("first\n\nthird", f) >= 0 && fclose(f) == 0, "write %s", p);
    uint64_t size = 0, mt = 0;
    CHECK(o2r_file_stat(p, &size, &mt) == 0 && size == 12 && mt > 0, "stat: %llu", (unsigned long long)size);
    CHECK(o2r_path_is_file(p) && !o2r_path_is_file(dir), "is_file");
    snprintf(q, sizeof q, "%s/./lines.txt", dir);
    char real[4096], real2[4096];
    CHECK(o2r_realpath(q, real, sizeof real) && o2r_realpath(p, real2, sizeof real2) && !strcmp(real, real2) &&
              !strstr(real, "/./"), "realpath %s", real);
    CHECK(!o2r_realpath(p, real, 4), "realpath into a short buffer");
    snprintf(q, sizeof q, "%s/missing", dir);
    CHECK(!o2r_realpath(q, real, sizeof real) && o2r_file_stat(q, NULL, NULL) == -1, "missing file");
    f = fopen(p, "rb");
    char *line = NULL;
    size_t cap = 0;
    long lens[4] = {-2, -2, -2, -2};
    for (int i = 0; i < 4 && f; i++) lens[i] = o2r_getline(&line, &cap, f);
    CHECK(lens[0] == 6 && lens[1] == 1 && lens[2] == 5 && lens[3] == -1 && !strcmp(line, "third"),
          "getline %ld %ld %ld %ld", lens[0], lens[1], lens[2], lens[3]);
    free(line);
    if (f) fclose(f);
    int notreg = 0;
    f = o2r_fopen_regular(p, &notreg);
    const unsigned char *m = f ? o2r_file_map(f, size) : NULL;
    if (f) fclose(f); /* the mapping outlives the FILE */
    CHECK(m && !memcmp(m, "first\n\nthird", 12), "map");
    o2r_file_unmap(m, size);

    char *d = o2r_strndup("abcdef", 3), *e = o2r_strndup("ab", 10);
    CHECK(d && e && !strcmp(d, "abc") && !strcmp(e, "ab"), "strndup");
    free(d);
    free(e);
    unsigned char r1[16] = {0}, r2[16] = {0};
    CHECK(o2r_random_bytes(r1, sizeof r1) == 0 && o2r_random_bytes(r2, sizeof r2) == 0 && memcmp(r1, r2, 16),
          "random bytes");
    CHECK(o2r_cpu_count() >= 1, "cpus");
    err[0] = 0;
    CHECK(!o2r_dl_open(p, err, sizeof err) && err[0], "dl_open of a text file: %s", err);

    remove(p);
    CHECK(remove(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
    return rt_test_done("platform_proc");
}
