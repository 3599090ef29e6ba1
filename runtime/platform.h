/* platform.h — the runtime's operating-system seam (private; never installed).
 *
 * What: everything the runtime needs from the OS beyond ISO C11: read-only file mapping,
 * temporary files beside an output + durable close + atomic replacing rename, folder checks,
 * the running executable's path and a monotonic clock. Implemented once in platform.c for POSIX
 * (Linux, macOS, BSD) and Windows (Win32 API, MinGW-w64 or MSVC).
 * Assumes: paths are narrow (char) strings in the process code page on Windows.
 * Guarantees: no other runtime file calls a POSIX- or Windows-only function; each function
 * reports failures through its return value (and errno where it says so), never exits.
 * The output-path checks (o2r_path_check_output...) are public: see onnx2cl_rt.h.
 */
#ifndef ONNX2CL_PLATFORM_H
#define ONNX2CL_PLATFORM_H

#include <stdint.h>
#include <stdio.h>

#include "onnx2cl_rt.h"

/* printf-style format checking; MinGW's C99 printf (__USE_MINGW_ANSI_STDIO) is gnu_printf */
#ifdef __MINGW_PRINTF_FORMAT
#define O2R_PRINTF(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#else
#define O2R_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif

/* A read-only view of a whole regular file (o2r_fmap_open). */
struct o2r_fmap {
    const unsigned char *data; /* first byte of the file; NULL when size == 0 */
    uint64_t size;             /* file size in bytes */
    intptr_t os[2];            /* platform handles (POSIX: fd + 1, 0; Windows: file, mapping) */
};

/* Opens and maps the regular file `path` read-only. `what` names it in messages ("weights
 * file"): "cannot open <what> PATH: <reason>", "<what> PATH is not a regular file (...)",
 * "cannot map <what> PATH: <reason>", written into err. A FIFO does not block the open.
 * Returns O2R_OK (then o2r_fmap_close must be called) or O2R_ERR_IO (nothing to close). */
o2r_status o2r_fmap_open(const char *path, const char *what, struct o2r_fmap *fm, char *err,
                         size_t errcap);
/* Unmaps and closes; fm is zeroed. Safe on a zeroed struct. */
void o2r_fmap_close(struct o2r_fmap *fm);
/* Makes bytes [off, off + len) of the mapping writable, copy-on-write: what is written there
 * stays in this process's memory and never reaches the file (the pages covering the range are
 * copied at their first write; the rest stays shared with the page cache). The range must lie
 * inside the file. Returns 0, or -1 where the platform cannot (Windows: the caller copies
 * instead; errno set on POSIX). */
int o2r_fmap_make_private(struct o2r_fmap *fm, uint64_t off, uint64_t len);
/* The version of the file mapped from `path`, for "verified before" stamps: "dev ino size
 * mtime ctime" (times in ns) into buf, *key = a hash of the absolute path (realpath; one stamp
 * per path), and *age_s = seconds from its last change (the later of mtime and ctime) to now.
 * A write through the file system changes ctime, which only root can set back. Returns 0, or
 * -1 where the platform gives no such identity (Windows) or fstat fails. */
int o2r_fmap_version(const struct o2r_fmap *fm, const char *path, char *buf, size_t cap,
                     uint64_t *key, double *age_s);

/* Size of the open file f if it is a regular file: returns 1 and sets *size; 0 if it is not a
 * regular file (directory, device, FIFO), -1 if it cannot be examined (errno set). */
int o2r_file_regular_size(FILE *f, uint64_t *size);

/* Opens `path` for reading ("rb") only if it is a regular file: a FIFO, device or directory
 * there never blocks the caller (O_NONBLOCK open, then fstat). Returns NULL when it cannot be
 * opened (errno set) or is not a regular file (*not_regular = 1, else 0). For the files the
 * runtime finds in its cache folder (stamps, tuning files, program binaries) and the user's
 * input files (--input .npy/.pb): a FIFO without a writer is refused, never waited on. */
FILE *o2r_fopen_regular(const char *path, int *not_regular);

/* Creates a new, empty file beside `path` named "<path>.tmpXXXXXX" (exclusive create, mode 0644
 * where modes exist), opened "wb". tmp receives its name (tmpcap >= strlen(path) + 12).
 * Returns NULL with errno set on failure. */
FILE *o2r_tmp_create(const char *path, char *tmp, size_t tmpcap);
/* Flushes f to the disk (fflush + fsync / FlushFileBuffers) and closes it, also on failure.
 * Returns 0, or -1 with errno set. */
int o2r_file_sync_close(FILE *f);
/* Renames `from` onto `to`, atomically replacing an existing file `to` (POSIX rename;
 * Windows MoveFileEx with MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH).
 * Returns 0, or -1 with errno set. */
int o2r_rename_replace(const char *from, const char *to);

/* 1 if path names an existing file system object (following links), else 0. */
int o2r_path_exists(const char *path);
/* 1 if path names an existing directory (following links), else 0. */
int o2r_path_is_dir(const char *path);
/* 1 if paths a and b both exist and name the same file (POSIX: same device and inode, through
 * links; Windows: the same full path, case-insensitive), else 0. */
int o2r_path_same_file(const char *a, const char *b);
/* Full path of the running executable into buf (NUL-terminated); returns its length, or 0 if
 * unknown or longer than cap - 1 (Linux: /proc/self/exe; Windows: GetModuleFileName, with '/'
 * separators). */
size_t o2r_exe_path(char *buf, size_t cap);

/* Monotonic clock in milliseconds (arbitrary origin). */
double o2r_now_ms(void);
/* Sleeps about ms milliseconds (ms <= 0: returns at once). */
void o2r_sleep_ms(double ms);

/* Redirects file descriptor 2 (stderr) to the null device and returns a duplicate of the old
 * one, or -1 if that failed (then nothing changed), or O2R_STDERR_WAS_CLOSED when fd 2 was
 * closed (it then holds the null device until the restore); o2r_stderr_restore(fd) undoes it
 * (-1: no-op). For probes whose failure is expected but whose driver prints compiler diagnostics
 * straight to fd 2 (PoCL's clang). Not thread-safe: stderr is process-wide. */
int o2r_stderr_mute(void);
#define O2R_STDERR_WAS_CLOSED (-2) /* o2r_stderr_mute: fd 2 was closed; restore closes it again */
void o2r_stderr_restore(int saved);

/* ---- onnx2cl-sd and the store (platform_proc.c; nothing the runtime itself calls) ---------- */

/* 1 if path names an existing regular file (following links), else 0. */
int o2r_path_is_file(const char *path);
/* Size and modification time (ns since the epoch; whole seconds on Windows) of path; 0, or -1
 * if it cannot be examined (errno set). Either pointer may be NULL. */
int o2r_file_stat(const char *path, uint64_t *size, uint64_t *mtime_ns);
/* 1 if the folder path may receive new files (POSIX: access W_OK | X_OK), else 0. */
int o2r_path_writable_dir(const char *path);
/* 1 if path is a regular file this process may run (Windows: any regular file), else 0. */
int o2r_path_executable(const char *path);
/* Makes one folder (mode 0777 less the umask where modes exist); 0, or -1 with errno set. */
int o2r_mkdir(const char *path);
/* The absolute path of the existing path, links resolved (POSIX realpath; Windows _fullpath),
 * into buf; returns buf, or NULL (missing, or longer than cap - 1). */
char *o2r_realpath(const char *path, char *buf, size_t cap);
/* Runs the program argv[0] (a path; no search) with arguments argv (NULL-terminated), its
 * stdout sent to this process's stderr, and waits for it. Returns its exit status, or -1 when it
 * could not be started or was killed (message in err). stdout and stderr are flushed first. */
int o2r_spawn_wait(char *const argv[], char *err, size_t errcap);
/* This process's id; whether process pid still runs (1; also when it exists but is not ours). */
long o2r_pid(void);
int o2r_pid_alive(long pid);
/* Shared libraries: o2r_dl_open loads path (given as a path: no library search), resolving all
 * its symbols now, or returns NULL with the reason in err; o2r_dl_sym finds a symbol (NULL if
 * none); o2r_dl_close unloads (NULL: no-op). */
void *o2r_dl_open(const char *path, char *err, size_t errcap);
void *o2r_dl_sym(void *lib, const char *name);
void o2r_dl_close(void *lib);
/* Maps the first `size` bytes (size > 0: the whole regular file, o2r_file_regular_size) of the
 * open file f read-only; the mapping outlives fclose(f). Returns its address, or NULL (errno
 * set). o2r_file_unmap(p, size) releases it (NULL: no-op). */
const void *o2r_file_map(FILE *f, uint64_t size);
void o2r_file_unmap(const void *p, uint64_t size);
/* Gives the file open as fd the permissions a newly created file gets (0666 less the umask),
 * e.g. after mkstemp's 0600; best effort, no-op on Windows. */
void o2r_fd_mode_default(int fd);
/* n bytes from the OS's random source (Linux getrandom, /dev/urandom, Windows rand_s) into buf;
 * 0, or -1 (errno set). */
int o2r_random_bytes(void *buf, size_t n);
/* Online processors (at least 1). */
int o2r_cpu_count(void);
/* POSIX getline (POSIX: getline itself; elsewhere the same in ISO C): reads one line with its
 * '\n' into *line (grown with realloc, *cap its size); returns its length, -1 at end of file or
 * on an error. */
long o2r_getline(char **line, size_t *cap, FILE *f);
/* POSIX strndup: a malloc'd copy of at most n bytes of s, NUL-terminated; NULL when out of memory. */
char *o2r_strndup(const char *s, size_t n);

#endif
