/* platform_proc.c — the OS seam of onnx2cl-sd, libonnx2cl-sd and the checkpoint store: child
 * processes, shared libraries, file identity, folders, read-only mappings of open files,
 * randomness (declared in platform.h, section "onnx2cl-sd and the store").
 *
 * What: o2r_spawn_wait, o2r_pid, o2r_pid_alive, o2r_dl_open / _sym / _close, o2r_file_stat,
 * o2r_path_is_file, o2r_path_writable_dir, o2r_path_executable, o2r_mkdir, o2r_realpath,
 * o2r_file_map / o2r_file_unmap, o2r_fd_mode_default, o2r_random_bytes, o2r_cpu_count.
 * Apart from platform.c so that a generated model's program, which links the runtime archive,
 * never pulls in dlopen or posix_spawn: nothing the runtime itself calls lives here.
 * Assumes: POSIX.1-2008 (+ Linux getrandom and /proc where present), or Windows (MinGW-w64 or
 * MSVC: CreateProcessA, LoadLibraryA, CreateFileMapping, rand_s).
 * Guarantees: nothing here exits or prints; failures come back as return values (errno where
 * the declaration says so).
 */
#if !defined(_WIN32) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700 /* realpath, kill, fchmod, umask, sysconf under -std=c11 */
#endif
#ifdef _WIN32
#define _CRT_RAND_S /* rand_s */
#endif
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef _WIN32
#include <direct.h>
#include <io.h>
#include <windows.h>
#else
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/random.h>
#endif
extern char **environ;
#endif

int o2r_path_is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int o2r_file_stat(const char *p, uint64_t *size, uint64_t *mtime_ns)
{
    struct stat st;
    if (stat(p, &st) != 0)
        return -1;
    if (size)
        *size = (uint64_t)st.st_size;
#ifdef _WIN32
    if (mtime_ns)
        *mtime_ns = (uint64_t)st.st_mtime * 1000000000u;
#elif defined(__APPLE__)
    if (mtime_ns)
        *mtime_ns = (uint64_t)st.st_mtimespec.tv_sec * 1000000000u + (uint64_t)st.st_mtimespec.tv_nsec;
#else
    if (mtime_ns)
        *mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
#endif
    return 0;
}

char *o2r_strndup(const char *s, size_t n)
{
    size_t l = 0;
    while (l < n && s[l]) l++;
    char *d = malloc(l + 1);
    if (d) {
        memcpy(d, s, l);
        d[l] = 0;
    }
    return d;
}

long o2r_getline(char **line, size_t *cap, FILE *f)
{
#ifdef _WIN32
    size_t n = 0;
    for (int c; (c = getc(f)) != EOF;) {
        if (n + 2 > *cap || !*line) {
            size_t nc = *cap < 128 ? 128 : *cap * 2;
            char *p = realloc(*line, nc);
            if (!p) return -1;
            *line = p;
            *cap = nc;
        }
        (*line)[n++] = (char)c;
        if (c == '\n') break;
    }
    if (n == 0) return -1;
    (*line)[n] = 0;
    return (long)n;
#else
    return (long)getline(line, cap, f);
#endif
}

#ifdef _WIN32

/* ---- Windows ------------------------------------------------------------------------------- */

int o2r_path_writable_dir(const char *p)
{
    return o2r_path_is_dir(p) && _access(p, 2) == 0;
}

int o2r_path_executable(const char *p)
{
    return o2r_path_is_file(p);
}

int o2r_mkdir(const char *p)
{
    return _mkdir(p);
}

char *o2r_realpath(const char *path, char *buf, size_t cap)
{
    if (!o2r_path_exists(path) || !_fullpath(buf, path, cap))
        return NULL;
    return buf;
}

/* Appends s to the command line cmd (at *n, cap bytes) quoted as CommandLineToArgvW reads it. */
static int cmd_add(char *cmd, size_t cap, size_t *n, const char *s)
{
    size_t o = *n;
    if (o && o < cap) cmd[o++] = ' ';
    if (o < cap) cmd[o++] = '"';
    for (const char *c = s;; c++) {
        size_t bs = 0;
        while (*c == '\\') bs++, c++;
        size_t rep = !*c ? 2 * bs : *c == '"' ? 2 * bs + 1 : bs; /* backslashes before " double */
        for (size_t i = 0; i < rep && o < cap; i++) cmd[o++] = '\\';
        if (!*c) break;
        if (o < cap) cmd[o++] = *c;
    }
    if (o < cap) cmd[o++] = '"';
    if (o >= cap) return -1;
    cmd[o] = 0;
    *n = o;
    return 0;
}

int o2r_spawn_wait(char *const argv[], char *err, size_t errcap)
{
    static char cmd[32768];
    size_t n = 0;
    cmd[0] = 0;
    for (int i = 0; argv[i]; i++)
        if (cmd_add(cmd, sizeof cmd, &n, argv[i]) != 0) {
            snprintf(err, errcap, "cannot start %s: command line too long", argv[0]);
            return -1;
        }
    fflush(stdout);
    fflush(stderr);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = GetStdHandle(STD_ERROR_HANDLE); /* its stdout goes to our stderr */
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    if (!CreateProcessA(argv[0], cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
        snprintf(err, errcap, "cannot start %s: Windows error %lu", argv[0], (unsigned long)GetLastError());
        return -1;
    }
    DWORD code = 1;
    WaitForSingleObject(pi.hProcess, INFINITE);
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return (int)code;
}

long o2r_pid(void)
{
    return (long)GetCurrentProcessId();
}

int o2r_pid_alive(long pid)
{
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
    if (!h)
        return GetLastError() == ERROR_ACCESS_DENIED; /* exists, not ours */
    DWORD code = 0;
    int alive = GetExitCodeProcess(h, &code) && code == STILL_ACTIVE;
    CloseHandle(h);
    return alive;
}

void *o2r_dl_open(const char *path, char *err, size_t errcap)
{
    HMODULE h = LoadLibraryA(path);
    if (!h)
        snprintf(err, errcap, "LoadLibrary failed (Windows error %lu)", (unsigned long)GetLastError());
    return (void *)h;
}

void *o2r_dl_sym(void *lib, const char *name)
{
    FARPROC f = GetProcAddress((HMODULE)lib, name);
    void *p;
    memcpy(&p, &f, sizeof p);
    return p;
}

void o2r_dl_close(void *lib)
{
    if (lib)
        FreeLibrary((HMODULE)lib);
}

const void *o2r_file_map(FILE *f, uint64_t size)
{
    HANDLE h = (HANDLE)_get_osfhandle(_fileno(f));
    if (h == INVALID_HANDLE_VALUE || size == 0) {
        errno = EINVAL;
        return NULL;
    }
    HANDLE m = CreateFileMappingA(h, NULL, PAGE_READONLY, 0, 0, NULL);
    if (!m) {
        errno = EACCES;
        return NULL;
    }
    const void *p = MapViewOfFile(m, FILE_MAP_READ, 0, 0, (SIZE_T)size);
    CloseHandle(m); /* the view keeps the mapping */
    if (!p)
        errno = ENOMEM;
    return p;
}

void o2r_file_unmap(const void *p, uint64_t size)
{
    (void)size;
    if (p)
        UnmapViewOfFile(p);
}

void o2r_fd_mode_default(int fd)
{
    (void)fd; /* no permission bits beyond read-only */
}

int o2r_random_bytes(void *buf, size_t n)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++) {
        unsigned int r;
        if (rand_s(&r) != 0) {
            errno = EIO;
            return -1;
        }
        b[i] = (unsigned char)r;
    }
    return 0;
}

int o2r_cpu_count(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (int)si.dwNumberOfProcessors : 1;
}

#else

/* ---- POSIX --------------------------------------------------------------------------------- */

int o2r_path_writable_dir(const char *p)
{
    return access(p, W_OK | X_OK) == 0;
}

int o2r_path_executable(const char *p)
{
    return o2r_path_is_file(p) && access(p, X_OK) == 0;
}

int o2r_mkdir(const char *p)
{
    return mkdir(p, 0777);
}

char *o2r_realpath(const char *path, char *buf, size_t cap)
{
    char *r = realpath(path, NULL);
    if (!r)
        return NULL;
    size_t n = strlen(r);
    if (n >= cap) {
        free(r);
        errno = ENAMETOOLONG;
        return NULL;
    }
    memcpy(buf, r, n + 1);
    free(r);
    return buf;
}

int o2r_spawn_wait(char *const argv[], char *err, size_t errcap)
{
    fflush(stdout);
    fflush(stderr);
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 2, 1); /* its stdout goes to our stderr */
    if (rc == 0)
        rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errcap, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errcap, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    snprintf(err, errcap, "%s was killed by signal %d", argv[0], WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return -1;
}

long o2r_pid(void)
{
    return (long)getpid();
}

int o2r_pid_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

void *o2r_dl_open(const char *path, char *err, size_t errcap)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errcap, "%s", e ? e : "dlopen failed");
    }
    return h;
}

void *o2r_dl_sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

void o2r_dl_close(void *lib)
{
    if (lib)
        dlclose(lib);
}

const void *o2r_file_map(FILE *f, uint64_t size)
{
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
    return m == MAP_FAILED ? NULL : m;
}

void o2r_file_unmap(const void *p, uint64_t size)
{
    if (p)
        munmap((void *)p, (size_t)size);
}

void o2r_fd_mode_default(int fd)
{
    mode_t um = umask(0);
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0) { /* best effort: the file stays 0600 */
    }
}

int o2r_random_bytes(void *buf, size_t n)
{
#ifdef __linux__
    return getrandom(buf, n, 0) == (ssize_t)n ? 0 : -1;
#else
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(buf, 1, n, f) : 0;
    if (f)
        fclose(f);
    return got == n ? 0 : (errno = errno ? errno : EIO, -1);
#endif
}

int o2r_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

#endif
