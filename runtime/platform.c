/* platform.c — the runtime's operating-system seam: output-path checks, file mapping, temporary
 * files + atomic rename, folders, the executable's path, the clock (declared in platform.h and,
 * for the output-path checks, in onnx2cl_rt.h).
 *
 * What: o2r_path_check_output / o2r_path_check_output_dir decide whether a path the user named
 * as an output may be written by onnx2cl's atomic writers (temporary file beside it + rename);
 * o2r_fmap_*, o2r_tmp_create, o2r_file_sync_close, o2r_rename_replace, o2r_path_make_dirs(_new),
 * o2r_path_remove_new_dirs,
 * o2r_exe_path, o2r_now_ms are the only OS calls of the runtime.
 * Assumes: POSIX.1-2008 (lstat, mmap, mkstemp, fsync, readlink of /proc/self/exe where it
 * exists), or Windows (the _WIN32 branches: GetFileAttributes, CreateFileMapping, MoveFileEx,
 * GetModuleFileName, QueryPerformanceCounter; builds with MinGW-w64).
 * Guarantees: only a missing path or an existing regular file is accepted as an output file, and
 * only a missing path, a directory or a symbolic link to a directory as an output folder. A
 * device node, FIFO, socket, directory (for a file) or symbolic link (for a file, whatever it
 * points to) is refused with a message naming the path and what it is, so that rename() never
 * replaces /dev/null or a pipe, even when running as root. Callers check once before any work
 * starts and again just before their rename (the path may have changed meanwhile).
 * Nothing here exits; failures come back as status / errno.
 */
#if !defined(_WIN32) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700 /* lstat, mkstemp, fchmod, fsync, readlink, S_ISSOCK under -std=c11 */
#endif
#include "platform.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#ifdef _WIN32
#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#ifdef __linux__
#include <sys/vfs.h> /* fstatfs: the file system type of a weights file (no stamps on tmpfs) */
#endif
#include <time.h>
#include <unistd.h>
#endif

static void fmt(char *err, size_t cap, const char *f, ...)
{
    if (!err || !cap)
        return;
    va_list ap;
    va_start(ap, f);
    vsnprintf(err, cap, f, ap);
    va_end(ap);
}

#ifndef _WIN32
/* What a non-regular file is, in words. */
static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISLNK(m)) return "a symbolic link";
    return "not a regular file";
}
#endif

o2r_status o2r_path_check_output(const char *path, char *err, size_t errcap)
{
    if (!path || !*path) {
        fmt(err, errcap, "empty output path");
        return O2R_ERR_ARG;
    }
#ifdef _WIN32
    DWORD a = GetFileAttributesA(path);
    if (a == INVALID_FILE_ATTRIBUTES)
        return O2R_OK; /* missing: will be created */
    if (a & FILE_ATTRIBUTE_REPARSE_POINT) {
        fmt(err, errcap, "%s: refusing to write: it is a symbolic link or junction; name the file "
            "itself", path);
        return O2R_ERR_IO;
    }
    if (a & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_DEVICE)) {
        fmt(err, errcap, "%s: refusing to write: it is %s, not a regular file", path,
            (a & FILE_ATTRIBUTE_DIRECTORY) ? "a directory" : "a device");
        return O2R_ERR_IO;
    }
    return O2R_OK;
#else
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return O2R_OK; /* will be created */
        fmt(err, errcap, "%s: cannot examine the output path: %s", path, strerror(errno));
        return O2R_ERR_IO;
    }
    if (S_ISREG(st.st_mode))
        return O2R_OK;
    if (S_ISLNK(st.st_mode)) {
        struct stat t;
        const char *to = stat(path, &t) != 0 ? "nothing (dangling)"
                         : S_ISREG(t.st_mode) ? "a regular file" : kind_of(t.st_mode);
        fmt(err, errcap, "%s: refusing to write: it is a symbolic link (to %s); outputs replace "
            "only regular files: name a new file or the file itself", path, to);
        return O2R_ERR_IO;
    }
    fmt(err, errcap, "%s: refusing to write: it is %s; outputs replace only regular files: name "
        "a new file or an existing regular file", path, kind_of(st.st_mode));
    return O2R_ERR_IO;
#endif
}

o2r_status o2r_path_check_output_dir(const char *path, char *err, size_t errcap)
{
    if (!path || !*path) {
        fmt(err, errcap, "empty output folder path");
        return O2R_ERR_ARG;
    }
#ifdef _WIN32
    DWORD a = GetFileAttributesA(path);
    if (a == INVALID_FILE_ATTRIBUTES || (a & FILE_ATTRIBUTE_DIRECTORY))
        return O2R_OK;
    fmt(err, errcap, "%s: exists and is not a directory", path);
    return O2R_ERR_IO;
#else
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) {
            struct stat l;
            if (lstat(path, &l) == 0) { /* a dangling symbolic link */
                fmt(err, errcap, "%s: is a symbolic link to a missing folder; create the folder "
                    "or name another one", path);
                return O2R_ERR_IO;
            }
            return O2R_OK; /* will be created */
        }
        fmt(err, errcap, "%s: cannot examine the output folder: %s", path, strerror(errno));
        return O2R_ERR_IO;
    }
    if (S_ISDIR(st.st_mode))
        return O2R_OK;
    fmt(err, errcap, "%s: exists and is %s, not a directory", path,
        S_ISREG(st.st_mode) ? "a regular file" : kind_of(st.st_mode));
    return O2R_ERR_IO;
#endif
}

/* mkdir of one folder, 0755 where modes exist. */
static int make_one_dir(const char *p)
{
#ifdef _WIN32
    return _mkdir(p); /* sets errno like mkdir */
#else
    return mkdir(p, 0755);
#endif
}

int o2r_path_is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int o2r_path_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

int o2r_path_same_file(const char *a, const char *b)
{
#ifdef _WIN32
    char fa[4096], fb[4096]; /* no inode numbers in MSVCRT's stat: compare full paths */
    return _fullpath(fa, a, sizeof fa) && _fullpath(fb, b, sizeof fb) && _stricmp(fa, fb) == 0;
#else
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
#endif
}

o2r_status o2r_path_make_dirs_new(const char *path, size_t *made, char *err, size_t errcap)
{
    char buf[4096];
    size_t n = path ? strlen(path) : 0, first = 0;
    if (made)
        *made = 0;
    if (n == 0 || n >= sizeof buf) {
        fmt(err, errcap, "%s: empty or too long folder path", path ? path : "(null)");
        return O2R_ERR_ARG;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        int sep = buf[i] == '/' || buf[i] == 0
#ifdef _WIN32
                  || buf[i] == '\\'
#endif
            ;
        if (!sep || buf[i - 1] == '/')
            continue;
        char saved = buf[i];
        buf[i] = 0;
        if (make_one_dir(buf) == 0) {
            if (!first)
                first = i; /* the outermost folder this call created */
        } else if (!(errno == EEXIST && o2r_path_is_dir(buf))) {
            fmt(err, errcap, "cannot create folder %s: %s", buf,
                errno == EEXIST ? "it exists and is not a directory" : strerror(errno));
            o2r_path_remove_new_dirs(path, first); /* nothing half-made stays */
            return O2R_ERR_IO;
        }
        buf[i] = saved;
    }
    if (made)
        *made = first;
    return O2R_OK;
}

o2r_status o2r_path_make_dirs(const char *path, char *err, size_t errcap)
{
    return o2r_path_make_dirs_new(path, NULL, err, errcap);
}

void o2r_path_remove_new_dirs(const char *path, size_t made)
{
    char buf[4096];
    size_t n = path ? strlen(path) : 0;
    if (made == 0 || n == 0 || n >= sizeof buf)
        return;
    memcpy(buf, path, n + 1);
    for (;;) {
        while (n > 1 && (buf[n - 1] == '/'
#ifdef _WIN32
                         || buf[n - 1] == '\\'
#endif
                         ))
            buf[--n] = 0; /* "a/b/" is the folder "a/b" */
        if (n < made)
            return;
#ifdef _WIN32
        if (_rmdir(buf) != 0)
#else
        if (rmdir(buf) != 0)
#endif
            return; /* not empty (or not ours to remove): it and its parents stay */
        while (n > 0 && buf[n - 1] != '/'
#ifdef _WIN32
               && buf[n - 1] != '\\'
#endif
        )
            buf[--n] = 0;
    }
}

/* ---- file mapping, temporary files, rename, executable path, clock ------------------------- */

#ifdef _WIN32
/* errno-like text of the last Win32 error. */
static const char *win_reason(DWORD e, char *buf, size_t cap)
{
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e,
                             0, buf, (DWORD)cap, NULL);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == '.'))
        buf[--n] = 0;
    if (!n)
        snprintf(buf, cap, "Windows error %lu", (unsigned long)e);
    return buf;
}

o2r_status o2r_fmap_open(const char *path, const char *what, struct o2r_fmap *fm, char *err,
                         size_t errcap)
{
    char why[256];
    memset(fm, 0, sizeof *fm);
    DWORD a = GetFileAttributesA(path);
    if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
        fmt(err, errcap, "%s %s is not a regular file (it is a directory)", what, path);
        return O2R_ERR_IO;
    }
    HANDLE h = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        fmt(err, errcap, "cannot open %s %s: %s", what, path, win_reason(GetLastError(), why,
                                                                            sizeof why));
        return O2R_ERR_IO;
    }
    LARGE_INTEGER sz;
    if (GetFileType(h) != FILE_TYPE_DISK || !GetFileSizeEx(h, &sz)) {
        fmt(err, errcap, "%s %s is not a regular file", what, path);
        CloseHandle(h);
        return O2R_ERR_IO;
    }
    fm->size = (uint64_t)sz.QuadPart;
    fm->os[0] = (intptr_t)h;
    if (fm->size == 0)
        return O2R_OK;
    HANDLE mh = CreateFileMappingA(h, NULL, PAGE_READONLY, 0, 0, NULL);
    void *p = mh ? MapViewOfFile(mh, FILE_MAP_READ, 0, 0, 0) : NULL;
    if (!p) {
        fmt(err, errcap, "cannot map %s %s: %s", what, path,
            win_reason(GetLastError(), why, sizeof why));
        if (mh)
            CloseHandle(mh);
        CloseHandle(h);
        memset(fm, 0, sizeof *fm);
        return O2R_ERR_IO;
    }
    fm->os[1] = (intptr_t)mh;
    fm->data = p;
    return O2R_OK;
}

void o2r_fmap_close(struct o2r_fmap *fm)
{
    if (fm->data)
        UnmapViewOfFile((void *)fm->data);
    if (fm->os[1])
        CloseHandle((HANDLE)fm->os[1]);
    if (fm->os[0])
        CloseHandle((HANDLE)fm->os[0]);
    memset(fm, 0, sizeof *fm);
}

int o2r_fmap_make_private(struct o2r_fmap *fm, uint64_t off, uint64_t len)
{
    (void)fm, (void)off, (void)len; /* the view is FILE_MAP_READ: callers copy instead */
    return -1;
}

int o2r_fmap_version(const struct o2r_fmap *fm, const char *path, char *buf, size_t cap,
                     uint64_t *key, double *age_s)
{
    (void)fm, (void)path, (void)buf, (void)cap, (void)key, (void)age_s; /* no stamps */
    return -1;
}

int o2r_file_regular_size(FILE *f, uint64_t *size)
{
    HANDLE h = (HANDLE)_get_osfhandle(_fileno(f));
    LARGE_INTEGER sz;
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    if (GetFileType(h) != FILE_TYPE_DISK)
        return 0;
    BY_HANDLE_FILE_INFORMATION info;
    if (GetFileInformationByHandle(h, &info) && (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
        return 0;
    if (!GetFileSizeEx(h, &sz)) {
        errno = EIO;
        return -1;
    }
    *size = (uint64_t)sz.QuadPart;
    return 1;
}

FILE *o2r_fopen_regular(const char *path, int *not_regular)
{
    uint64_t size;
    *not_regular = 0;
    DWORD a = GetFileAttributesA(path);
    if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
        *not_regular = 1;
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (f && o2r_file_regular_size(f, &size) != 1) {
        fclose(f);
        *not_regular = 1;
        return NULL;
    }
    return f;
}

FILE *o2r_tmp_create(const char *path, char *tmp, size_t tmpcap)
{
    static unsigned counter;
    unsigned seed = (unsigned)GetCurrentProcessId() * 2654435761u ^ (unsigned)GetTickCount();
    for (int i = 0; i < 100; i++) {
        unsigned r = (seed + 7919u * ++counter) & 0xffffffu;
        if ((size_t)snprintf(tmp, tmpcap, "%s.tmp%06x", path, r) >= tmpcap) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        int fd = _open(tmp, _O_CREAT | _O_EXCL | _O_WRONLY | _O_BINARY, _S_IREAD | _S_IWRITE);
        if (fd >= 0) {
            FILE *f = _fdopen(fd, "wb");
            if (!f) {
                int e = errno;
                _close(fd);
                remove(tmp);
                errno = e;
            }
            return f;
        }
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}

/* Pushes a file's written data to the disk. */
static int fd_sync(FILE *f)
{
    return _commit(_fileno(f));
}

int o2r_rename_replace(const char *from, const char *to)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return 0;
    DWORD e = GetLastError();
    errno = e == ERROR_ACCESS_DENIED ? EACCES : e == ERROR_FILE_NOT_FOUND ? ENOENT
          : e == ERROR_PATH_NOT_FOUND ? ENOENT : e == ERROR_NOT_SAME_DEVICE ? EXDEV : EIO;
    return -1;
}

size_t o2r_exe_path(char *buf, size_t cap)
{
    DWORD n = GetModuleFileNameA(NULL, buf, (DWORD)cap);
    if (n == 0 || n >= cap)
        return 0;
    buf[n] = 0;
    for (char *c = buf; *c; c++) /* '/' separators, as every caller splits paths (Win32 takes both) */
        if (*c == '\\')
            *c = '/';
    return n;
}

double o2r_now_ms(void)
{
    LARGE_INTEGER c, f;
    QueryPerformanceCounter(&c);
    QueryPerformanceFrequency(&f);
    return (double)c.QuadPart * 1e3 / (double)f.QuadPart;
}

#else /* POSIX */

o2r_status o2r_fmap_open(const char *path, const char *what, struct o2r_fmap *fm, char *err,
                         size_t errcap)
{
    struct stat st;
    memset(fm, 0, sizeof *fm);
    /* O_NONBLOCK: a FIFO named as the file must not hang the open */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        fmt(err, errcap, "cannot open %s %s: %s", what, path, strerror(errno));
        return O2R_ERR_IO;
    }
    if (fstat(fd, &st) != 0) {
        fmt(err, errcap, "cannot stat %s %s: %s", what, path, strerror(errno));
        close(fd);
        return O2R_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        fmt(err, errcap, "%s %s is not a regular file%s", what, path,
            S_ISDIR(st.st_mode) ? " (it is a directory)" : "");
        close(fd);
        return O2R_ERR_IO;
    }
    fm->size = (uint64_t)st.st_size;
    fm->os[0] = (intptr_t)fd + 1; /* 0 means closed */
    if (fm->size == 0)
        return O2R_OK;
    /* MAP_POPULATE: the whole file is read right after (checksum, upload or the device's
     * zero-copy buffers); mapping every page now costs far less than one fault per page
     * (3.4 GB UNet weights: 840k pages) */
#ifdef MAP_POPULATE
    void *p = mmap(NULL, (size_t)fm->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
#else
    void *p = mmap(NULL, (size_t)fm->size, PROT_READ, MAP_PRIVATE, fd, 0);
#endif
    if (p == MAP_FAILED) {
        fmt(err, errcap, "cannot mmap %s %s: %s", what, path, strerror(errno));
        close(fd);
        memset(fm, 0, sizeof *fm);
        return O2R_ERR_IO;
    }
    fm->data = p;
    return O2R_OK;
}

int o2r_fmap_make_private(struct o2r_fmap *fm, uint64_t off, uint64_t len)
{
    if (!fm->data || off > fm->size || len > fm->size - off) {
        errno = EINVAL;
        return -1;
    }
    if (len == 0)
        return 0;
    /* MAP_PRIVATE: writing needs no write access to the file and never reaches it */
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t lo = ((uintptr_t)fm->data + (uintptr_t)off) & ~(page - 1);
    const uintptr_t hi = (uintptr_t)fm->data + (uintptr_t)(off + len);
    return mprotect((void *)lo, (size_t)(hi - lo), PROT_READ | PROT_WRITE);
}

int o2r_fmap_version(const struct o2r_fmap *fm, const char *path, char *buf, size_t cap,
                     uint64_t *key, double *age_s)
{
    struct stat st;
    struct timespec now;
    if (!fm->os[0] || fstat((int)(fm->os[0] - 1), &st) != 0 ||
        clock_gettime(CLOCK_REALTIME, &now) != 0)
        return -1;
#ifdef __linux__
    /* tmpfs and ramfs (/dev/shm, /tmp on some distributions) do not update mtime/ctime for
     * writes through a shared memory mapping: no stamps there (checked at every start) */
    struct statfs sf;
    if (fstatfs((int)(fm->os[0] - 1), &sf) != 0 ||
        (unsigned long)sf.f_type == 0x01021994UL /* TMPFS_MAGIC */ ||
        (unsigned long)sf.f_type == 0x858458f6UL /* RAMFS_MAGIC */)
        return -1;
#endif
    char *abs = realpath(path, NULL);
    const char *k = abs ? abs : path;
    *key = o2r_fnv1a64(k, strlen(k), O2R_FNV_SEED);
    free(abs);
    const double m = (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
    const double c = (double)st.st_ctim.tv_sec + 1e-9 * (double)st.st_ctim.tv_nsec;
    *age_s = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec - (m > c ? m : c);
    int n = snprintf(buf, cap, "%llu %llu %llu %lld.%09ld %lld.%09ld",
                     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                     (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     (long)st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
                     (long)st.st_ctim.tv_nsec);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

void o2r_fmap_close(struct o2r_fmap *fm)
{
    if (fm->data)
        munmap((void *)fm->data, (size_t)fm->size);
    if (fm->os[0])
        close((int)(fm->os[0] - 1));
    memset(fm, 0, sizeof *fm);
}

int o2r_file_regular_size(FILE *f, uint64_t *size)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        return -1;
    if (!S_ISREG(st.st_mode))
        return 0;
    *size = (uint64_t)st.st_size;
    return 1;
}

FILE *o2r_fopen_regular(const char *path, int *not_regular)
{
    struct stat st;
    *not_regular = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *not_regular = 1;
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL); /* back to blocking reads for a regular file */
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

FILE *o2r_tmp_create(const char *path, char *tmp, size_t tmpcap)
{
    if ((size_t)snprintf(tmp, tmpcap, "%s.tmpXXXXXX", path) >= tmpcap) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0)
        return NULL;
    FILE *f = fchmod(fd, 0644) == 0 ? fdopen(fd, "wb") : NULL; /* mkstemp creates 0600 */
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
    }
    return f;
}

static int fd_sync(FILE *f)
{
    return fsync(fileno(f));
}

int o2r_rename_replace(const char *from, const char *to)
{
    return rename(from, to);
}

size_t o2r_exe_path(char *buf, size_t cap)
{
    if (cap < 2)
        return 0;
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0 || (size_t)n >= cap - 1)
        return 0;
    buf[n] = 0;
    return (size_t)n;
}

double o2r_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
#endif

int o2r_file_sync_close(FILE *f)
{
    int ok = fflush(f) == 0 && !ferror(f) && fd_sync(f) == 0;
    int e = errno;
    ok = (fclose(f) == 0) && ok;
    if (!ok && e)
        errno = e;
    return ok ? 0 : -1;
}

int o2r_stderr_mute(void)
{
    fflush(stderr);
#ifdef _WIN32
    int saved = _dup(2), null = _open("NUL", _O_WRONLY);
    if (saved < 0 || null < 0 || _dup2(null, 2) != 0) {
        if (saved >= 0) _close(saved);
        saved = -1;
    }
    if (null >= 0) _close(null);
#else
    int saved = dup(2);
    if (saved < 0 && errno == EBADF) { /* fd 2 closed: fill it with the null device until restore */
        int null = open("/dev/null", O_WRONLY);
        if (null == 2)
            return O2R_STDERR_WAS_CLOSED;
        if (null >= 0) close(null);
        return -1;
    }
    int null = open("/dev/null", O_WRONLY);
    if (saved < 0 || null < 0 || dup2(null, 2) < 0) {
        if (saved >= 0) close(saved);
        saved = -1;
    }
    if (null >= 0) close(null);
#endif
    return saved;
}

void o2r_stderr_restore(int saved)
{
#ifndef _WIN32
    if (saved == O2R_STDERR_WAS_CLOSED) {
        close(2);
        return;
    }
#endif
    if (saved < 0)
        return;
    fflush(stderr);
#ifdef _WIN32
    _dup2(saved, 2);
    _close(saved);
#else
    dup2(saved, 2);
    close(saved);
#endif
}

void o2r_sleep_ms(double ms)
{
    if (ms <= 0)
        return;
#ifdef _WIN32
    Sleep((DWORD)ms);
#else
    struct timespec ts = {(time_t)(ms / 1000.0), (long)((ms - 1000.0 * (long)(ms / 1000.0)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
#endif
}
