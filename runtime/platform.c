/* platform.c — the runtime's operating-system seam: what a path names before anything is
 * written to it.
 *
 * What: o2r_path_check_output / o2r_path_check_output_dir decide whether a path the user named
 * as an output may be written by onnx2cl's atomic writers (temporary file beside it + rename).
 * Assumes: POSIX lstat/stat (Windows: GetFileAttributes, see the _WIN32 branch).
 * Guarantees: only a missing path or an existing regular file is accepted as an output file, and
 * only a missing path, a directory or a symbolic link to a directory as an output folder. A
 * device node, FIFO, socket, directory (for a file) or symbolic link (for a file, whatever it
 * points to) is refused with a message naming the path and what it is, so that rename() never
 * replaces /dev/null or a pipe, even when running as root. Callers check once before any work
 * starts and again just before their rename (the path may have changed meanwhile).
 */
#include "onnx2cl_rt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#ifdef _WIN32
#include <direct.h>
#include <windows.h>
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

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

o2r_status o2r_path_make_dirs(const char *path, char *err, size_t errcap)
{
    char buf[4096];
    size_t n = path ? strlen(path) : 0;
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
        if (make_one_dir(buf) != 0 && !(errno == EEXIST && is_dir(buf))) {
            fmt(err, errcap, "cannot create folder %s: %s", buf,
                errno == EEXIST ? "it exists and is not a directory" : strerror(errno));
            return O2R_ERR_IO;
        }
        buf[i] = saved;
    }
    return O2R_OK;
}
