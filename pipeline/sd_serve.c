/* sd_serve.c — `onnx2cl-sd serve`: the AUTOMATIC1111/Forge HTTP API over libonnx2cl-sd's session
 * layer (sd_session.h), with libmicrohttpd (HTTP) and cJSON (JSON).
 *
 * Threads: libmicrohttpd runs one thread per connection (at most --max-connections); those threads
 * parse, validate and answer, and never run a model. Generations and checkpoint switches are jobs
 * in one FIFO queue served by one worker thread per device (--devices; default one), each owning a
 * session on its device; a switch waits until the other workers are idle and switches them all. A
 * connection waiting for its job polls its socket: a client that disconnects loses its job
 * (removed from the queue, or cancelled through the session's cancel flag when running); the
 * server's state is untouched.
 *
 * Security: binds to 127.0.0.1 unless --listen names another address; --api-auth USER:PASS asks
 * every request for HTTP Basic credentials (compared in constant time); limits on the body, the
 * image size, steps, images per request, prompt length and the queue, each answered 4xx naming the
 * limit; checkpoint and LoRA names are matched against the lists of --ckpt-dir / --lora-dir (no
 * path from a request reaches the file system); libmicrohttpd drops idle connections after
 * --timeout seconds (slow clients).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sd_serve.h"

#include "platform.h" /* o2r_realpath, o2r_random_bytes, o2r_pid, o2r_strndup */
#include "sd_preview.h" /* --taesd: TAESD for /progress's current_image (onnx2cl-sd's sd_preview.c) */
#include "sd_session.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the platform seam: sockets, the stop request (POSIX / Windows) ----
 * Everything OS-specific of the server is here; the rest is POSIX threads (winpthreads on
 * MinGW-w64), dirent and stat, which both have.
 *   net_init()            before the first socket (Windows: WSAStartup; POSIX: nothing)
 *   sock_reuse(s)         the listening socket's address option (POSIX: SO_REUSEADDR, a restart
 *                         binds at once; Windows: SO_EXCLUSIVEADDRUSE, a port in use is refused
 *                         as on Linux, where SO_REUSEADDR would let a second server share it)
 *   sock_close(s), sock_error()  close; the last socket error as text
 *   peer_gone(s)          1 when the peer of connection s has closed it (or the socket failed)
 *   stop_setup()          before any thread starts: SIGINT/SIGTERM (Windows: Ctrl+C, Ctrl+Break,
 *                         the console closing) become a stop request; SIGPIPE ignored
 *   stop_wait()           blocks until a stop request; returns its name (SIGINT, SIGTERM, ...)
 *   local_tm(t, tm)       localtime_r (Windows: localtime_s)
 * MHD_socket (microhttpd.h) is int on POSIX, SOCKET on Windows. */
#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <microhttpd.h>

static void local_tm(time_t t, struct tm *tm) { localtime_s(tm, &t); }
static int net_init(void)
{
    WSADATA wd;
    return WSAStartup(MAKEWORD(2, 2), &wd) ? -1 : 0;
}
static void sock_reuse(MHD_socket s)
{
    BOOL one = TRUE;
    setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&one, sizeof one);
}
static void sock_close(MHD_socket s) { closesocket(s); }
static const char *sock_error(void)
{
    static char msg[256];
    int e = WSAGetLastError();
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, (DWORD)e, 0, msg,
                             sizeof msg, NULL);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' ' || msg[n - 1] == '.')) msg[--n] = 0;
    if (!n) snprintf(msg, sizeof msg, "socket error %d", e);
    return msg;
}
static int peer_gone(MHD_socket s)
{
    WSAPOLLFD p = {.fd = s, .events = POLLRDNORM};
    if (WSAPoll(&p, 1, 0) <= 0) return 0;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) return 1;
    if (p.revents & POLLRDNORM) { /* readable: data (a pipelined request) or the end of the stream */
        char b;
        int r = recv(s, &b, 1, MSG_PEEK);
        return r == 0 || (r < 0 && WSAGetLastError() != WSAEWOULDBLOCK && WSAGetLastError() != WSAEINTR);
    }
    return 0;
}
static HANDLE stop_event;
static volatile LONG stop_kind;
static BOOL WINAPI on_console_ctrl(DWORD type)
{
    InterlockedCompareExchange(&stop_kind, (LONG)type + 1, 0);
    SetEvent(stop_event);
    /* the console closing (or logoff, shutdown) ends the process when this returns: give the
     * main thread time to stop the server (it exits the process itself when done) */
    if (type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT || type == CTRL_SHUTDOWN_EVENT) Sleep(10000);
    return TRUE;
}
static void stop_setup(void)
{
    stop_event = CreateEventA(NULL, TRUE, FALSE, NULL);
    SetConsoleCtrlHandler(on_console_ctrl, TRUE);
}
static const char *stop_wait(void)
{
    WaitForSingleObject(stop_event, INFINITE);
    switch (stop_kind - 1) {
    case CTRL_C_EVENT: return "Ctrl+C";
    case CTRL_BREAK_EVENT: return "Ctrl+Break";
    case CTRL_CLOSE_EVENT: return "console closed";
    default: return "logoff/shutdown";
    }
}
#else
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

static void local_tm(time_t t, struct tm *tm) { localtime_r(&t, tm); }
static int net_init(void) { return 0; }
static void sock_reuse(MHD_socket s)
{
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
}
static void sock_close(MHD_socket s) { close(s); }
static const char *sock_error(void) { return strerror(errno); }
static int peer_gone(MHD_socket fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) <= 0) return 0;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return 1;
    if (p.revents & POLLIN) {
        char b;
        ssize_t r = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
    return 0;
}
static sigset_t stop_sigs;
/* signals go to the thread of stop_wait only (sigwait): blocked here, before any thread starts,
 * the threads inherit the mask */
static void stop_setup(void)
{
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
}
static const char *stop_wait(void)
{
    int sig = 0;
    sigwait(&stop_sigs, &sig);
    return sig == SIGINT ? "SIGINT" : "SIGTERM";
}
#endif

#ifndef ONNX2CL_VERSION
#define ONNX2CL_VERSION "dev"
#endif
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define MAX_LIST 512 /* checkpoints / LoRAs listed */

/* ---- limits and options ---- */

struct limits {
    size_t body;     /* request body bytes */
    int size;        /* width and height */
    int steps;       /* steps */
    int batch;       /* batch_size * n_iter */
    size_t prompt;   /* prompt and negative prompt bytes */
    int queue;       /* jobs waiting */
};

/* ---- jobs ---- */

enum job_kind { JOB_TXT2IMG, JOB_SWITCH };
enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
    enum job_kind kind;
    enum job_state state;
    int refs;                /* the waiting connection + the queue/worker */
    long id;
    struct job *next;
    volatile int stop;       /* the session's cancel flag for the current image */
    int interrupted;         /* /interrupt (or a disconnect, or shutdown): no further images */
    int abandoned;           /* the client went away */
    /* txt2img */
    cJSON *req;              /* the request object (echoed as "parameters") */
    char *prompt, *negative;
    char sampler[64];        /* sds_request.sampler as the client named it ("" = the checkpoint's) */
    char schedule[32];       /* sds_request.schedule ("" = none) */
    int clip_skip;           /* sds_request.clip_skip: override_settings / options CLIP_stop_at_last_layers (1) */
    char emphasis[16];       /* sds_request.emphasis: override_settings.emphasis, else POST /options'
                                "emphasis", else "Original" (A1111's default) */
    int steps, width, height, n_images, batch_size, send_images;
    /* img2img */
    unsigned char *init, *mask; /* 8-bit RGB [h, w, 3] / gray [h, w], or NULL */
    int init_w, init_h;
    double strength;
    double mask_blur;        /* A1111's mask_blur (default 4), the library's mask_blur */
    int mask_invert;         /* inpainting_mask_invert */
    int mask_w, mask_h;      /* the mask's size as sent */
    int only_masked;         /* inpaint_full_res (A1111's default: true) with a mask: sds_request.only_masked */
    int only_masked_padding; /* inpaint_full_res_padding (default 0) */
    double eta;              /* eta (DDIM / TCD; A1111's Eta DDIM) */
    /* override_settings.sd_model_checkpoint: this request's checkpoint ("" = the one open) */
    char ck_path[PATH_MAX], ck_title[PATH_MAX];
    int ck_restore;          /* override_settings_restore_afterwards (A1111's default: true) */
    double cfg;
    double distilled_cfg;    /* Forge's distilled_cfg_scale (Flux dev; 0: the library's 3.5) */
    uint64_t seed;
    /* switch */
    char path[PATH_MAX], title[PATH_MAX];
    /* result */
    unsigned status;
    char *body;              /* JSON text */
};

struct entry {               /* a checkpoint or LoRA found in a listed folder */
    char name[PATH_MAX];     /* LoRA: file stem; checkpoint: path relative to the folder */
    char stem[PATH_MAX];
    char path[PATH_MAX];
};
#undef MAX_LIST
#define MAX_LIST 256 /* checkpoints / LoRAs listed */

struct server;

/* One worker: a thread, its session on one OpenCL device, its running job and its progress. */
struct worker {
    struct server *sv;
    pthread_t th;
    const char *device;      /* --devices entry (NULL: --device / the default) */
    struct sds_session *sess;/* written under sv->mu (/health reads it); used by this worker (and by the
                                worker that runs a checkpoint switch while this one is idle) */
    struct job *current;
    char job_timestamp[32];
    double job_t0;
    int job_no, job_count, step, steps, skipped;
    int excl_wait;           /* waiting in exclusive_begin (counts as idle) */
    char stage[192];         /* sds_progress.stage of the running image ("" during its steps) */
    float *lat;
    int lat_c, lat_h, lat_w;
    size_t lat_cap;
    /* --taesd: the decoder of current_image for the running image's latents, on a context of its
     * own on this worker's device; prepared and loaded by the worker (on_progress), run by /progress
     * (td_mu held by both) */
    pthread_mutex_t td_mu;
    struct o2r_ctx *td_ctx;
    struct sdv_taesd td;
    int td_loaded;
    int td_tried_c, td_tried_h, td_tried_w; /* the latents last prepared for (failed or not) */
};

struct server {
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* queue changed, a job finished, shutdown */
    struct job *head, *tail;
    int n_queued;
    int stopping;
    int pausing;             /* a checkpoint switch waits for the other workers: no job is started */
    long next_id;
    struct limits lim;
    const char *auth;        /* "user:pass" or NULL */
    int timeout;
    struct worker *wk;       /* one per device */
    int n_wk;
    struct sds_open_options oo;
    char ckpt[PATH_MAX];     /* the checkpoint open now ("" with --models) */
    char title[PATH_MAX];    /* its title in /sd-models */
    struct sds_info info;    /* of worker 0's session (under mu) */
    const char *ckpt_dir, *lora_dir;
    cJSON *options;          /* options set through POST /options (echoed by GET) */
    const char *taesd;       /* --taesd PATH or NULL */
    pthread_mutex_t td_prep_mu; /* one TAESD preparation at a time (the cache's temporary file names) */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- base64 ---- */

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const unsigned char *p, size_t n)
{
    char *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
    if (!o) return NULL;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *q++ = b64chars[v >> 18];
        *q++ = b64chars[(v >> 12) & 63];
        *q++ = b64chars[(v >> 6) & 63];
        *q++ = b64chars[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *q++ = b64chars[v >> 18];
        *q++ = b64chars[(v >> 12) & 63];
        *q++ = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
        *q++ = '=';
    }
    *q = 0;
    return o;
}

static int b64_val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* Decodes base64 (standard or URL alphabet, '=' padding optional, whitespace skipped) into a
 * malloc'd buffer. Returns NULL for a character outside the alphabet. */
static unsigned char *b64_decode(const char *s, size_t n, size_t *out_n)
{
    unsigned char *o = malloc(n / 4 * 3 + 3);
    if (!o) return NULL;
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '=') break;
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        int v = b64_val(c);
        if (v < 0) {
            free(o);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (unsigned char)(acc >> bits);
        }
    }
    *out_n = k;
    return o;
}

/* ---- responses ---- */

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *text, const char *ctype,
                                 const char *allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", ctype);
    if (allow) MHD_add_response_header(r, "Allow", allow);
    if (status == MHD_HTTP_UNAUTHORIZED) MHD_add_response_header(r, "WWW-Authenticate", "Basic realm=\"onnx2cl-sd\"");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, cJSON *j)
{
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!t) return send_text(c, 500, "{\"error\":\"InternalError\",\"detail\":\"out of memory\"}", "application/json", NULL);
    enum MHD_Result ret = send_text(c, status, t, "application/json", NULL);
    free(t);
    return ret;
}

/* {"error": kind, "detail": message} (A1111's error shape). */
static cJSON *err_json(const char *kind, const char *fmt, ...) O2R_PRINTF(2, 3);
static cJSON *err_json(const char *kind, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", kind);
    cJSON_AddStringToObject(j, "detail", msg);
    return j;
}

static enum MHD_Result send_err(struct MHD_Connection *c, unsigned status, const char *kind, const char *fmt, ...)
    O2R_PRINTF(4, 5);
static enum MHD_Result send_err(struct MHD_Connection *c, unsigned status, const char *kind, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return send_json(c, status, err_json(kind, "%s", msg));
}

/* ---- folder listings (checkpoints, LoRAs) ---- */

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && !strcasecmp(s + n - m, suf);
}

/* Lists dir recursively (depth 4): *.safetensors files, and (checkpoints) diffusers folders (with
 * model_index.json; not entered). rel: the path below the root. */
static void list_dir(const char *root, const char *rel, int depth, int ckpts, struct entry *out, int *n)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && *n < MAX_LIST) {
        if (e->d_name[0] == '.') continue;
        char path[PATH_MAX], r2[PATH_MAX], mi[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            snprintf(r2, sizeof r2, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= (int)sizeof r2)
            continue; /* too long a path: not listed */
        struct stat st;
        if (stat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            if (ckpts && snprintf(mi, sizeof mi, "%s/model_index.json", path) < (int)sizeof mi &&
                access(mi, R_OK) == 0) {
                struct entry *x = &out[(*n)++];
                snprintf(x->name, sizeof x->name, "%s", r2);
                snprintf(x->stem, sizeof x->stem, "%s", e->d_name);
                snprintf(x->path, sizeof x->path, "%s", path);
            } else if (depth < 4) {
                list_dir(root, r2, depth + 1, ckpts, out, n);
            }
        } else if (S_ISREG(st.st_mode) && has_suffix(e->d_name, ".safetensors")) {
            struct entry *x = &out[(*n)++];
            snprintf(x->name, sizeof x->name, "%s", ckpts ? r2 : e->d_name);
            snprintf(x->stem, sizeof x->stem, "%.*s", (int)(strlen(e->d_name) - strlen(".safetensors")), e->d_name);
            if (!ckpts) snprintf(x->name, sizeof x->name, "%s", x->stem);
            snprintf(x->path, sizeof x->path, "%s", path);
        }
    }
    closedir(d);
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static struct entry *list_entries(const char *root, int ckpts, int *n)
{
    *n = 0;
    struct entry *e = calloc(MAX_LIST, sizeof *e);
    if (!e || !root) return e;
    list_dir(root, "", 0, ckpts, e, n);
    qsort(e, (size_t)*n, sizeof *e, cmp_entry);
    return e;
}

/* ---- samplers (A1111 names -> the session's) ---- */

/* What /samplers lists: A1111's names that sds_sampler_check accepts, with A1111's aliases. */
static const struct {
    const char *label;
    const char *aliases[3];
} samplers[] = {
    {"DPM++ 2M", {"k_dpmpp_2m", NULL, NULL}}, {"DPM++ 2M SDE", {"k_dpmpp_2m_sde", NULL, NULL}},
    {"DPM++ 3M SDE", {"k_dpmpp_3m_sde", NULL, NULL}}, {"Euler a", {"k_euler_a", "k_euler_ancestral", NULL}},
    {"Euler", {"k_euler", NULL, NULL}}, {"LMS", {"k_lms", NULL, NULL}}, {"Heun", {"k_heun", NULL, NULL}},
    {"DPM2", {"k_dpm_2", NULL, NULL}}, {"DPM2 a", {"k_dpm_2_a", NULL, NULL}}, {"DDIM", {"ddim", NULL, NULL}},
    {"PLMS", {"plms", NULL, NULL}}, {"UniPC", {"unipc", NULL, NULL}}, {"DEIS", {NULL, NULL, NULL}},
    {"LCM", {"k_lcm", NULL, NULL}}, {"TCD", {NULL, NULL, NULL}}, {"DDPM", {NULL, NULL, NULL}},
};
#define N_SAMPLERS (sizeof samplers / sizeof *samplers)

static const char *sampler_labels(void)
{
    static char buf[512];
    if (!buf[0])
        for (size_t i = 0; i < N_SAMPLERS; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "", samplers[i].label);
    return buf;
}

/* A1111 1.9+ schedule types that sds_sampler_check accepts: name, label. */
static const struct {
    const char *name, *label;
} schedules[] = {{"automatic", "Automatic"}, {"uniform", "Uniform"},     {"karras", "Karras"},
                 {"exponential", "Exponential"}, {"sgm_uniform", "SGM Uniform"}, {"simple", "Simple"},
                 {"normal", "Normal"},       {"beta", "Beta"}};
#define N_SCHEDULES (sizeof schedules / sizeof *schedules)

/* ---- request parsing ---- */

/* An integer field: absent -> dflt; not a number / not an integer / out of [lo, hi] -> -1 with a message. */
static int get_int(const cJSON *o, const char *key, long long dflt, long long lo, long long hi, const char *limit,
                   long long *out, char *msg, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble)) {
        snprintf(msg, cap, "%s: expected an integer", key);
        return -1;
    }
    if (!(v->valuedouble >= (double)lo && v->valuedouble <= (double)hi)) {
        snprintf(msg, cap, "%s %.17g: out of [%lld, %lld]%s%s", key, v->valuedouble, lo, hi, limit ? " " : "",
                 limit ? limit : "");
        return -1;
    }
    *out = (long long)v->valuedouble;
    return 0;
}

static int get_str(const cJSON *o, const char *key, const char *dflt, size_t max, const char *limit,
                   const char **out, char *msg, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsString(v)) {
        snprintf(msg, cap, "%s: expected a string", key);
        return -1;
    }
    if (max && strlen(v->valuestring) > max) {
        snprintf(msg, cap, "%s: %zu bytes, more than the limit of %zu%s%s", key, strlen(v->valuestring), max,
                 limit ? " " : "", limit ? limit : "");
        return -1;
    }
    *out = v->valuestring;
    return 0;
}

static uint64_t random_seed(void)
{
    uint64_t v = 0;
    if (o2r_random_bytes(&v, sizeof v)) v = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)o2r_pid();
    return v % 4294967294u; /* A1111: random.randrange(4294967294) */
}

static void strip_hash(char *s)
{
    size_t n = strlen(s);
    if (n > 2 && s[n - 1] == ']') {
        char *b = strrchr(s, '[');
        if (b && b > s && b[-1] == ' ') b[-1] = 0;
    }
}

/* 1 when field key of o is present with a value other than A1111's defaults: null, false, 0, "",
 * [] / {} (empty), or the number dflt. */
static int non_default(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v)) return 0;
    if (cJSON_IsNumber(v)) return v->valuedouble != 0 && v->valuedouble != dflt;
    if (cJSON_IsString(v)) return v->valuestring[0] != 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) return v->child != NULL;
    return 1; /* true */
}

/* A1111 fields this server does not run: a value other than the default is refused (422) rather
 * than ignored, so that no client gets a silently different image. {field, its default (numbers),
 * why}. img2img only: the second list. */
static const struct {
    const char *key;
    double dflt;
    const char *why;
} refused[] = {
    {"enable_hr", 0, "hires. fix is not supported"},
    {"subseed_strength", 0, "variation seeds are not supported"},
    {"seed_resize_from_w", -1, "seed resize is not supported"},
    {"seed_resize_from_h", -1, "seed resize is not supported"},
    {"restore_faces", 0, "face restoration is not supported"},
    {"tiling", 0, "tiling is not supported"},
    {"styles", 0, "styles are not supported (put the text in the prompt)"},
    {"s_min_uncond", 0, "NGMS (s_min_uncond) is not supported"},
    {"s_churn", 0, "sampler churn is not supported"},
    {"s_tmin", 0, "sampler s_tmin is not supported"},
    {"s_tmax", 0, "sampler s_tmax is not supported"},
    {"s_noise", 1, "sampler s_noise is not supported"},
    {"refiner_checkpoint", 0, "refiners are not supported"},
    {"disable_extra_networks", 0, "LoRA tags are always applied here"},
    {"firstpass_image", 0, "hires. fix is not supported"},
    {"script_name", 0, "scripts are not supported"},
    {"alwayson_scripts", 0, "scripts are not supported"},
    {"infotext", 0, "infotext parsing into fields is not supported (give the fields)"},
}, refused_i2i[] = {
    {"initial_noise_multiplier", 1, "initial_noise_multiplier is not supported"},
    {"latent_mask", 0, "latent_mask is not supported"},
};

/* A base64 PNG field (a "data:image/png;base64," prefix allowed) decoded to 8-bit RGB or gray. */
static int get_png(const char *field, const char *b64, int gray, unsigned char **pix, int *w, int *h, char *msg,
                   size_t cap)
{
    if (!strncmp(b64, "data:", 5) && strchr(b64, ',')) b64 = strchr(b64, ',') + 1;
    size_t n = 0;
    unsigned char *png = b64_decode(b64, strlen(b64), &n);
    if (!png) return snprintf(msg, cap, "%s: not base64", field), -1;
    char e[512];
    int rc = sds_png_decode(png, n, gray, pix, w, h, e, sizeof e);
    free(png);
    if (rc) return snprintf(msg, cap, "%s: %s", field, e), -1;
    return 0;
}

/* Fills a txt2img (img2img: also init_images, denoising_strength, mask) job from the request; -1
 * with a message (HTTP 422) for a bad field. */
static int parse_txt2img(struct server *sv, const cJSON *o, struct job *j, int img2img, char *msg, size_t cap)
{
    const char *prompt, *neg, *sname, *sched;
    long long steps, w, h, seed, bs, ni;
    char lim[64];
    snprintf(lim, sizeof lim, "(--max-prompt %zu)", sv->lim.prompt);
    if (get_str(o, "prompt", "", sv->lim.prompt, lim, &prompt, msg, cap) ||
        get_str(o, "negative_prompt", "", sv->lim.prompt, lim, &neg, msg, cap) ||
        get_str(o, "sampler_name", NULL, 64, NULL, &sname, msg, cap) ||
        get_str(o, "scheduler", NULL, 64, NULL, &sched, msg, cap))
        return -1;
    if (!sname) {
        const char *si;
        if (get_str(o, "sampler_index", NULL, 64, NULL, &si, msg, cap)) return -1;
        sname = si;
    }
    pthread_mutex_lock(&sv->mu);
    struct sds_info info = sv->info;
    pthread_mutex_unlock(&sv->mu);
    /* the default size: the compiled models' (--models), else --width/--height when given, else A1111's
     * 512x512; never the last request's. img2img: the init image's (only masked: rounded down to a
     * multiple of 8), unless the compiled models fix the size. */
    if (!info.fixed_size) {
        info.width = sv->oo.width ? sv->oo.width : 512;
        info.height = sv->oo.height ? sv->oo.height : 512;
    }
    int def_w = info.width, def_h = info.height;
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
        if (non_default(o, refused[k].key, refused[k].dflt))
            return snprintf(msg, cap, "%s: %s (this server refuses values other than the default)", refused[k].key,
                            refused[k].why), -1;
    if (img2img)
        for (size_t k = 0; k < sizeof refused_i2i / sizeof *refused_i2i; k++)
            if (non_default(o, refused_i2i[k].key, refused_i2i[k].dflt))
                return snprintf(msg, cap, "%s: %s (this server refuses values other than the default)",
                                refused_i2i[k].key, refused_i2i[k].why), -1;
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "eta");
        j->eta = -1; /* absent: the sampler's default */
        if (v && !cJSON_IsNull(v)) {
            if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1))
                return snprintf(msg, cap, "eta: expected a number in [0, 1]"), -1;
            j->eta = v->valuedouble;
        }
    }
    snprintf(lim, sizeof lim, "(--max-steps %d)", sv->lim.steps);
    if (get_int(o, "steps", 20, 1, sv->lim.steps, lim, &steps, msg, cap)) return -1;
    if (img2img) {
        const cJSON *ii = cJSON_GetObjectItemCaseSensitive(o, "init_images");
        if (!cJSON_IsArray(ii) || cJSON_GetArraySize(ii) < 1 || !cJSON_IsString(cJSON_GetArrayItem(ii, 0)))
            return snprintf(msg, cap, "init_images: expected a list of base64 PNG strings"), -1;
        if (cJSON_GetArraySize(ii) > 1)
            return snprintf(msg, cap, "init_images: %d images; this server takes one", cJSON_GetArraySize(ii)), -1;
        if (get_png("init_images[0]", cJSON_GetArrayItem(ii, 0)->valuestring, 0, &j->init, &j->init_w, &j->init_h,
                    msg, cap))
            return -1;
        if (!info.fixed_size) { /* the default size: the image's (no resize) */
            def_w = j->init_w;
            def_h = j->init_h;
        }
        const cJSON *ds = cJSON_GetObjectItemCaseSensitive(o, "denoising_strength");
        j->strength = 0.75;
        if (ds && !cJSON_IsNull(ds)) {
            if (!cJSON_IsNumber(ds) || !(ds->valuedouble > 0 && ds->valuedouble <= 1))
                return snprintf(msg, cap, "denoising_strength: expected a number in (0, 1]"), -1;
            j->strength = ds->valuedouble;
        }
        { /* A1111's Inpaint area (acts with a mask): inpaint_full_res true ("Only masked", its default)
           * or false ("Whole picture"); inpaint_full_res_padding ("Masked area padding", default 0) */
            const cJSON *fr = cJSON_GetObjectItemCaseSensitive(o, "inpaint_full_res");
            if (fr && !cJSON_IsNull(fr) && !cJSON_IsBool(fr) && !cJSON_IsNumber(fr))
                return snprintf(msg, cap, "inpaint_full_res: expected true or false"), -1;
            j->only_masked = !fr || cJSON_IsNull(fr) || cJSON_IsTrue(fr) || (cJSON_IsNumber(fr) && fr->valuedouble != 0);
            long long pad;
            if (get_int(o, "inpaint_full_res_padding", 0, 0, 16384, NULL, &pad, msg, cap)) return -1;
            j->only_masked_padding = (int)pad;
        }
        const cJSON *mk = cJSON_GetObjectItemCaseSensitive(o, "mask");
        if (mk && !cJSON_IsNull(mk)) {
            int mw, mh;
            if (!cJSON_IsString(mk)) return snprintf(msg, cap, "mask: expected a base64 PNG string"), -1;
            if (get_png("mask", mk->valuestring, 1, &j->mask, &mw, &mh, msg, cap)) return -1;
            j->mask_w = mw; /* resized to the init image's size (after its resize to width x height) */
            j->mask_h = mh;
            /* A1111's inpainting options: mask_blur (default 4; mask_blur_x/y when it is absent),
             * inpainting_mask_invert; "original" fill is what runs */
            const cJSON *mb = cJSON_GetObjectItemCaseSensitive(o, "mask_blur");
            j->mask_blur = 4;
            if (mb && !cJSON_IsNull(mb)) {
                if (!cJSON_IsNumber(mb) || !(mb->valuedouble >= 0 && mb->valuedouble <= 1000))
                    return snprintf(msg, cap, "mask_blur: expected a number in [0, 1000]"), -1;
                j->mask_blur = mb->valuedouble;
            } else {
                const cJSON *bx = cJSON_GetObjectItemCaseSensitive(o, "mask_blur_x"),
                            *by = cJSON_GetObjectItemCaseSensitive(o, "mask_blur_y");
                double x = cJSON_IsNumber(bx) ? bx->valuedouble : 4, y = cJSON_IsNumber(by) ? by->valuedouble : 4;
                if (x != y || !(x >= 0 && x <= 1000))
                    return snprintf(msg, cap, "mask_blur_x %g, mask_blur_y %g: only one radius for both (give mask_blur)",
                                    x, y), -1;
                j->mask_blur = x;
            }
            long long inv, fill;
            if (get_int(o, "inpainting_mask_invert", 0, 0, 1, NULL, &inv, msg, cap)) return -1;
            j->mask_invert = (int)inv;
            if (get_int(o, "inpainting_fill", 1, 0, 3, NULL, &fill, msg, cap)) return -1;
            if (fill != 1)
                return snprintf(msg, cap, "inpainting_fill %lld: only 1 (\"original\": the init image under the mask) "
                                "is supported", fill), -1;
            if (j->only_masked && !info.fixed_size) {
                /* the area's default size: the image's rounded down to a multiple of 8 (the library's and
                 * the CLI's rule, diffusers' get_default_height_width) and of the size multiple */
                int m = 8;
                while (info.size_multiple > 0 && m % info.size_multiple) m += 8;
                def_w = j->init_w - j->init_w % m;
                def_h = j->init_h - j->init_h % m;
                if (def_w < m) def_w = m;
                if (def_h < m) def_h = m;
            }
            const cJSON *mr = cJSON_GetObjectItemCaseSensitive(o, "mask_round");
            if (cJSON_IsFalse(mr))
                return snprintf(msg, cap, "mask_round: only true (the mask is read as repaint >= 128) is supported"), -1;
        }
    }
    snprintf(lim, sizeof lim, "(--max-size %d)", sv->lim.size);
    if (get_int(o, "width", def_w, 8, sv->lim.size, lim, &w, msg, cap) ||
        get_int(o, "height", def_h, 8, sv->lim.size, lim, &h, msg, cap))
        return -1;
    long long rmode = 0;
    if (img2img && get_int(o, "resize_mode", 0, 0, 3, NULL, &rmode, msg, cap)) return -1;
    /* only masked: the image keeps its size (the area around the mask is generated at width x
     * height; A1111 applies no resize_mode then) and the mask is resized to the image's size */
    const int om = img2img && j->mask && j->only_masked;
    if (img2img && !om && rmode != 0 && (w != j->init_w || h != j->init_h))
        return snprintf(msg, cap, "resize_mode %lld: only 0 (\"Just resize\") is supported; the init image is %dx%d, "
                        "width x height %lldx%lld", rmode, j->init_w, j->init_h, w, h), -1;
    if (get_int(o, "seed", -1, -1, (1LL << 53), NULL, &seed, msg, cap)) return -1;
    snprintf(lim, sizeof lim, "(--max-batch %d)", sv->lim.batch);
    if (get_int(o, "batch_size", 1, 1, sv->lim.batch, lim, &bs, msg, cap) ||
        get_int(o, "n_iter", 1, 1, sv->lim.batch, lim, &ni, msg, cap))
        return -1;
    if (bs * ni > sv->lim.batch) {
        snprintf(msg, cap, "batch_size %lld x n_iter %lld = %lld images: more than the limit of %d (--max-batch)", bs,
                 ni, bs * ni, sv->lim.batch);
        return -1;
    }
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(o, "cfg_scale");
    double cf = 7.0;
    if (cfg && !cJSON_IsNull(cfg)) {
        if (!cJSON_IsNumber(cfg)) return snprintf(msg, cap, "cfg_scale: expected a number"), -1;
        cf = cfg->valuedouble;
        if (!(cf >= 0 && cf <= 100)) return snprintf(msg, cap, "cfg_scale %g: out of [0, 100]", cf), -1;
    }
    const cJSON *dcfg = cJSON_GetObjectItemCaseSensitive(o, "distilled_cfg_scale"); /* Forge (Flux dev) */
    double dcf = 0;
    if (dcfg && !cJSON_IsNull(dcfg)) {
        if (!cJSON_IsNumber(dcfg)) return snprintf(msg, cap, "distilled_cfg_scale: expected a number"), -1;
        dcf = dcfg->valuedouble;
        if (!(dcf >= 0 && dcf <= 100)) return snprintf(msg, cap, "distilled_cfg_scale %g: out of [0, 100]", dcf), -1;
    }
    if (info.fixed_size && (w != info.width || h != info.height))
        return snprintf(msg, cap, "width %lld, height %lld: the compiled models (--models) make %dx%d only", w, h,
                        info.width, info.height),
               -1;
    if (w % info.size_multiple || h % info.size_multiple)
        return snprintf(msg, cap, "width %lld, height %lld: not multiples of %d (the VAE's factor%s)", w, h,
                        info.size_multiple, info.size_multiple == 16 ? " 8 x the transformer's 2x2 patches" : ""),
               -1;
    if (img2img && !om && j->mask && rmode != 0 && (w != j->mask_w || h != j->mask_h))
        return snprintf(msg, cap, "resize_mode %lld: only 0 (\"Just resize\") is supported; the mask is %dx%d, "
                        "width x height %lldx%lld", rmode, j->mask_w, j->mask_h, w, h), -1;
    if (img2img && !om && (w != j->init_w || h != j->init_h)) { /* A1111's resize_mode 0: PIL LANCZOS */
        unsigned char *ri = NULL;
        if (sds_image_resize(j->init, j->init_w, j->init_h, 3, (int)w, (int)h, &ri))
            return snprintf(msg, cap, "init_images[0]: resizing %dx%d to %lldx%lld: out of memory", j->init_w,
                            j->init_h, w, h), -1;
        free(j->init);
        j->init = ri;
        j->init_w = (int)w;
        j->init_h = (int)h;
    }
    if (img2img && j->mask && (j->init_w != j->mask_w || j->init_h != j->mask_h)) { /* the mask alike */
        unsigned char *rm = NULL;
        if (sds_image_resize(j->mask, j->mask_w, j->mask_h, 1, j->init_w, j->init_h, &rm))
            return snprintf(msg, cap, "mask: resizing %dx%d to %dx%d: out of memory", j->mask_w, j->mask_h, j->init_w,
                            j->init_h), -1;
        free(j->mask);
        j->mask = rm;
        j->mask_w = j->init_w;
        j->mask_h = j->init_h;
    }
    const cJSON *si = cJSON_GetObjectItemCaseSensitive(o, "send_images");
    if (si && !cJSON_IsNull(si) && !cJSON_IsBool(si)) return snprintf(msg, cap, "send_images: expected true or false"), -1;
    j->send_images = !si || cJSON_IsNull(si) || cJSON_IsTrue(si);
    /* sampler and schedule, checked here (422 before queueing), run by the session */
    if (sds_sampler_check(sname, sched, msg, cap)) return -1;
    { /* A1111's Clip skip (CLIP_stop_at_last_layers): override_settings, else the server's options, else 1 */
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(o, "override_settings");
        const cJSON *cs = cJSON_IsObject(os) ? cJSON_GetObjectItemCaseSensitive(os, "CLIP_stop_at_last_layers") : NULL;
        pthread_mutex_lock(&sv->mu);
        const cJSON *ocs = cJSON_GetObjectItemCaseSensitive(sv->options, "CLIP_stop_at_last_layers");
        double v = cs && !cJSON_IsNull(cs) ? (cJSON_IsNumber(cs) ? cs->valuedouble : -1)
                                           : cJSON_IsNumber(ocs) ? ocs->valuedouble : 1;
        pthread_mutex_unlock(&sv->mu);
        if (!(v >= 1 && v <= 12) || v != (int)v)
            return snprintf(msg, cap, "override_settings.CLIP_stop_at_last_layers: expected an integer in [1, 12]"), -1;
        j->clip_skip = (int)v;
    }
    { /* A1111's Emphasis option: override_settings, else the server's options, else "Original" */
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(o, "override_settings");
        const cJSON *em = cJSON_IsObject(os) ? cJSON_GetObjectItemCaseSensitive(os, "emphasis") : NULL;
        char e[512];
        if (em && !cJSON_IsNull(em)) {
            if (!cJSON_IsString(em)) return snprintf(msg, cap, "override_settings.emphasis: expected a string"), -1;
            if (sds_emphasis_check(em->valuestring, e, sizeof e))
                return snprintf(msg, cap, "override_settings.%s", e), -1;
            snprintf(j->emphasis, sizeof j->emphasis, "%s", em->valuestring);
        } else {
            pthread_mutex_lock(&sv->mu);
            const cJSON *oe = cJSON_GetObjectItemCaseSensitive(sv->options, "emphasis");
            snprintf(j->emphasis, sizeof j->emphasis, "%s", cJSON_IsString(oe) ? oe->valuestring : "Original");
            pthread_mutex_unlock(&sv->mu);
        }
    }
    if (j->eta >= 0 && j->eta != 1 && sname &&
        (strstr(sname, " a") == sname + strlen(sname) - 2 || strstr(sname, "SDE") || strstr(sname, "_a") ||
         strstr(sname, "sde"))) /* A1111's ancestral eta (1 by default); diffusers' samplers take none */
        return snprintf(msg, cap, "eta %g: the %s sampler's eta is fixed at 1 here (eta applies to DDIM and TCD)",
                        j->eta, sname), -1;
    { /* override_settings.sd_model_checkpoint: this request's checkpoint, restored afterwards unless
       * override_settings_restore_afterwards is false (A1111) */
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(o, "override_settings");
        const cJSON *ck = cJSON_IsObject(os) ? cJSON_GetObjectItemCaseSensitive(os, "sd_model_checkpoint") : NULL;
        const cJSON *ra = cJSON_GetObjectItemCaseSensitive(o, "override_settings_restore_afterwards");
        j->ck_restore = !cJSON_IsFalse(ra);
        if (ck && !cJSON_IsNull(ck)) {
            if (!cJSON_IsString(ck)) return snprintf(msg, cap, "override_settings.sd_model_checkpoint: expected a string"), -1;
            char want[PATH_MAX];
            snprintf(want, sizeof want, "%s", ck->valuestring);
            strip_hash(want);
            pthread_mutex_lock(&sv->mu);
            int same = !strcmp(want, sv->title);
            pthread_mutex_unlock(&sv->mu);
            if (!same) {
                if (!sv->ckpt_dir || !sv->oo.checkpoint)
                    return snprintf(msg, cap, "override_settings.sd_model_checkpoint \"%s\": switching needs -m and "
                                    "--ckpt-dir DIR", ck->valuestring), -1;
                int n, k = 0;
                struct entry *e = list_entries(sv->ckpt_dir, 1, &n);
                while (e && k < n && strcmp(want, e[k].name) && strcmp(want, e[k].stem)) k++;
                if (!e || k == n) {
                    free(e);
                    return snprintf(msg, cap, "override_settings.sd_model_checkpoint \"%s\": not one of the checkpoints "
                                    "in --ckpt-dir (GET /sdapi/v1/sd-models lists them)", ck->valuestring), -1;
                }
                snprintf(j->ck_path, sizeof j->ck_path, "%s", e[k].path);
                snprintf(j->ck_title, sizeof j->ck_title, "%s", e[k].name);
                free(e);
            }
        }
    }
    snprintf(j->sampler, sizeof j->sampler, "%s", sname ? sname : "");
    snprintf(j->schedule, sizeof j->schedule, "%s", sched ? sched : "");
    j->prompt = strdup(prompt);
    j->negative = strdup(neg);
    if (!j->prompt || !j->negative) return snprintf(msg, cap, "out of memory"), -1;
    j->steps = (int)steps;
    j->width = (int)w;
    j->height = (int)h;
    j->cfg = cf;
    j->distilled_cfg = dcf;
    j->batch_size = (int)bs;
    j->n_images = (int)(bs * ni);
    j->seed = seed == -1 ? random_seed() : (uint64_t)seed;
    return 0;
}

/* ---- the queue ---- */

static void job_free(struct job *j)
{
    cJSON_Delete(j->req);
    free(j->prompt);
    free(j->negative);
    free(j->init);
    free(j->mask);
    free(j->body);
    free(j);
}

static void job_unref(struct server *sv, struct job *j) /* with sv->mu held */
{
    (void)sv;
    if (--j->refs > 0) return;
    job_free(j);
}

static void queue_remove(struct server *sv, struct job *j) /* with sv->mu held */
{
    for (struct job **p = &sv->head; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            if (sv->tail == j) {
                sv->tail = NULL;
                for (struct job *q = sv->head; q; q = q->next) sv->tail = q;
            }
            sv->n_queued--;
            j->next = NULL;
            job_unref(sv, j);
            return;
        }
}

/* Queues j and waits for it. Returns 1 when answered (j->status, j->body), 0 when the client went
 * away (the job is dropped), -1 when the queue is full, -2 when the server is stopping. */
static int submit_and_wait(struct server *sv, struct MHD_Connection *c, struct job *j)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    MHD_socket fd = ci ? ci->connect_fd : MHD_INVALID_SOCKET;
    pthread_mutex_lock(&sv->mu);
    if (sv->stopping) {
        pthread_mutex_unlock(&sv->mu);
        return -2;
    }
    if (sv->n_queued >= sv->lim.queue) {
        pthread_mutex_unlock(&sv->mu);
        return -1;
    }
    j->id = ++sv->next_id;
    j->refs = 2;
    j->state = JOB_QUEUED;
    if (sv->tail) sv->tail->next = j;
    else sv->head = j;
    sv->tail = j;
    sv->n_queued++;
    pthread_cond_broadcast(&sv->cv);
    int ret = 1;
    while (j->state != JOB_DONE) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
        if (j->state == JOB_DONE) break;
        if (sv->stopping && j->state == JOB_QUEUED) {
            queue_remove(sv, j);
            ret = -2;
            break;
        }
        if (fd != MHD_INVALID_SOCKET && peer_gone(fd)) {
            j->abandoned = j->interrupted = 1;
            j->stop = 1;
            if (j->state == JOB_QUEUED) queue_remove(sv, j);
            fprintf(stderr, "onnx2cl-sd serve: job %ld: the client disconnected; job dropped\n", j->id);
            ret = 0;
            break;
        }
    }
    pthread_mutex_unlock(&sv->mu);
    return ret;
}

/* ---- the worker ---- */

/* --taesd: prepares (compiled and converted into the cache on first use, as the CLI's --taesd) and
 * loads TAESD for latents [c, h, w] on the worker's thread, once per latent size; on a failure
 * (said on stderr) /progress keeps the latent approximation for that size. */
static void taesd_ready(struct worker *wk, int c, int h, int w)
{
    struct server *sv = wk->sv;
    wk->td_tried_c = c, wk->td_tried_h = h, wk->td_tried_w = w;
    struct sde_options eo = {.arch_dir = sv->oo.arch_dir, .cache_dir = sv->oo.cache_dir,
                             .compiler = sv->oo.compiler, .weights_dtype = sv->oo.weights_dtype,
                             .quiet = sv->oo.quiet};
    struct sdv_taesd_files f;
    char err[2048] = "";
    pthread_mutex_lock(&sv->td_prep_mu);
    int rc = sdv_taesd_prepare(&eo, sv->taesd, c, h, w, &f, err, sizeof err);
    pthread_mutex_unlock(&sv->td_prep_mu);
    pthread_mutex_lock(&wk->td_mu);
    if (wk->td_loaded) sdv_taesd_close(&wk->td);
    wk->td_loaded = 0;
    if (!rc && !wk->td_ctx && o2r_ctx_create(wk->device ? wk->device : sv->oo.device, &wk->td_ctx) != O2R_OK) {
        snprintf(err, sizeof err, "OpenCL context: %s", o2r_ctx_last_error(NULL));
        wk->td_ctx = NULL;
        rc = -1;
    }
    if (!rc && !(rc = sdv_taesd_load(wk->td_ctx, &f, &wk->td, err, sizeof err))) wk->td_loaded = 1;
    pthread_mutex_unlock(&wk->td_mu);
    if (rc)
        fprintf(stderr, "onnx2cl-sd serve: --taesd for latents %dx%dx%d: %s; current_image is the latent "
                "approximation\n", c, h, w, err);
}

static int on_progress(const struct sds_progress *pr, void *user)
{
    struct worker *wk = user;
    struct server *sv = wk->sv;
    pthread_mutex_lock(&sv->mu);
    wk->step = pr->step;
    wk->steps = pr->total;
    snprintf(wk->stage, sizeof wk->stage, "%s", pr->stage ? pr->stage : "");
    size_t n = (size_t)pr->lat_c * pr->lat_h * pr->lat_w;
    if (n > wk->lat_cap) {
        float *nl = realloc(wk->lat, n * sizeof *nl);
        if (nl) wk->lat = nl, wk->lat_cap = n;
    }
    if (n <= wk->lat_cap && pr->latents) {
        memcpy(wk->lat, pr->latents, n * sizeof *wk->lat);
        wk->lat_c = pr->lat_c;
        wk->lat_h = pr->lat_h;
        wk->lat_w = pr->lat_w;
    }
    pthread_mutex_unlock(&sv->mu);
    if (sv->taesd && pr->latents && pr->lat_c > 0 &&
        (pr->lat_c != wk->td_tried_c || pr->lat_h != wk->td_tried_h || pr->lat_w != wk->td_tried_w))
        taesd_ready(wk, pr->lat_c, pr->lat_h, pr->lat_w);
    return 0;
}

static void model_name(const struct server *sv, char *buf, size_t cap)
{
    const char *t = sv->title[0] ? sv->title : sv->info.source;
    const char *sl = strrchr(t, '/');
    if (snprintf(buf, cap, "%s", sl ? sl + 1 : t) >= (int)cap) buf[cap - 1] = 0;
    char *dot = strrchr(buf, '.');
    if (dot && !strcmp(dot, ".safetensors")) *dot = 0;
}

static void exclusive_begin(struct worker *self);
static void exclusive_end(struct worker *self);
static void switch_core(struct worker *self, struct job *j);

static void run_images(struct worker *wk, struct job *j);

/* A txt2img / img2img job, under override_settings.sd_model_checkpoint when it names another
 * checkpoint: switched to for the job (as POST /options does) and back afterwards. */
static void run_txt2img(struct worker *wk, struct job *j)
{
    struct server *sv = wk->sv;
    if (!j->ck_path[0]) {
        run_images(wk, j);
        return;
    }
    struct job *sw = calloc(1, sizeof *sw);
    if (!sw) {
        j->status = 500;
        j->body = strdup("{\"error\":\"InternalError\",\"detail\":\"out of memory\"}");
        return;
    }
    exclusive_begin(wk); /* held for the switch, the images and the switch back: no other job meanwhile */
    pthread_mutex_lock(&sv->mu);
    char old_path[PATH_MAX], old_title[PATH_MAX];
    snprintf(old_path, sizeof old_path, "%s", sv->ckpt);
    snprintf(old_title, sizeof old_title, "%s", sv->title);
    pthread_mutex_unlock(&sv->mu);
    sw->kind = JOB_SWITCH;
    snprintf(sw->path, sizeof sw->path, "%s", j->ck_path);
    snprintf(sw->title, sizeof sw->title, "%s", j->ck_title);
    switch_core(wk, sw);
    if (sw->status != 200) { /* the switch's error, naming the field */
        j->status = sw->status;
        cJSON *e = cJSON_Parse(sw->body ? sw->body : "{}");
        const char *d = e ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "detail")) : NULL;
        cJSON *ne = err_json(sw->status == 422 ? "ValidationError" : "ModelLoadError", "override_settings.%s",
                             d ? d : "sd_model_checkpoint: switch failed");
        j->body = cJSON_PrintUnformatted(ne);
        cJSON_Delete(ne);
        cJSON_Delete(e);
        free(sw->body);
        free(sw);
        exclusive_end(wk);
        return;
    }
    free(sw->body);
    sw->body = NULL;
    if (wk->sess) run_images(wk, j);
    if (j->ck_restore && old_path[0]) {
        memset(sw, 0, sizeof *sw);
        sw->kind = JOB_SWITCH;
        snprintf(sw->path, sizeof sw->path, "%s", old_path);
        snprintf(sw->title, sizeof sw->title, "%s", old_title);
        switch_core(wk, sw);
        free(sw->body);
    }
    exclusive_end(wk);
    free(sw);
}

static void run_images(struct worker *wk, struct job *j)
{
    struct server *sv = wk->sv;
    cJSON *images = cJSON_CreateArray(), *infotexts = cJSON_CreateArray(), *seeds = cJSON_CreateArray();
    char err[4096] = "";
    int rc = 0, done = 0, w = j->width, h = j->height;
    char a_sampler[32] = "", a_schedule[32] = "Automatic";
    for (int i = 0; i < j->n_images; i++) {
        pthread_mutex_lock(&sv->mu);
        int stop = j->interrupted || sv->stopping;
        if (!stop) j->stop = 0; /* a /skip of the previous image is spent */
        wk->job_no = i;
        wk->step = 0;
        wk->skipped = 0;
        wk->stage[0] = 0;
        pthread_mutex_unlock(&sv->mu);
        if (stop) break;
        uint64_t seed = j->seed + (uint64_t)i;
        struct sds_request r = {.prompt = j->prompt, .negative = j->negative, .steps = j->steps, .cfg = j->cfg,
                                .distilled_cfg = j->distilled_cfg,
                                .seed = seed, .sampler = j->sampler[0] ? j->sampler : NULL,
                                .schedule = j->schedule[0] ? j->schedule : NULL, .width = j->width,
                                .height = j->height, .init_rgb = j->init, .init_w = j->init_w, .init_h = j->init_h,
                                .strength = j->strength, .mask = j->mask, .progress = on_progress,
                                .progress_user = wk, .cancel = &j->stop, .emphasis = j->emphasis,
                                .clip_skip = j->clip_skip, .mask_blur = j->mask ? j->mask_blur : 0,
                                .mask_invert = j->mask ? j->mask_invert : 0, .eta = j->eta > 0 ? j->eta : 0,
                                .only_masked = j->mask ? j->only_masked : 0,
                                .mask_overlay = j->mask != NULL, /* A1111 pastes the original back */
                                .only_masked_padding = j->mask ? j->only_masked_padding : 0};
        struct sds_image im;
        rc = sds_generate(wk->sess, &r, &im, err, sizeof err);
        if (im.load_seconds > 0) {
            struct sds_info info;
            sds_get_info(wk->sess, &info);
            pthread_mutex_lock(&sv->mu);
            sv->info = info;
            pthread_mutex_unlock(&sv->mu);
        }
        if (rc == SDS_CANCELLED) {
            rc = 0;
            continue; /* skipped (or interrupted: the loop ends above) */
        }
        if (rc) break;
        cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)seed));
        char *txt = im.parameters; /* A1111's infotext (sd_infotext.h) */
        im.parameters = NULL;
        snprintf(a_sampler, sizeof a_sampler, "%s", im.a1111_sampler);
        snprintf(a_schedule, sizeof a_schedule, "%s", im.a1111_schedule);
        unsigned char *png = NULL;
        size_t len = 0;
        const char *keys[1] = {"parameters"}, *vals[1] = {txt ? txt : ""};
        if (!txt || sds_png_encode(im.rgb, im.width, im.height, keys, vals, 1, &png, &len, err, sizeof err)) {
            rc = SDS_ERROR;
            if (!txt) snprintf(err, sizeof err, "out of memory");
            free(txt);
            sds_image_free(&im);
            break;
        }
        sds_image_free(&im); /* info's width/height: the size generated (only masked: the area's), as A1111 */
        char *b64 = b64_encode(png, len);
        free(png);
        if (j->send_images && b64) cJSON_AddItemToArray(images, cJSON_CreateString(b64));
        free(b64);
        cJSON_AddItemToArray(infotexts, cJSON_CreateString(txt));
        free(txt);
        done++;
    }
    if (rc) {
        cJSON_Delete(images);
        cJSON_Delete(infotexts);
        cJSON_Delete(seeds);
        cJSON *e = err_json(rc == SDS_EINVAL ? "ValidationError" : "GenerationError", "%s", err);
        j->status = rc == SDS_EINVAL ? 422 : 500;
        j->body = cJSON_PrintUnformatted(e);
        cJSON_Delete(e);
        return;
    }
    char model[256], ts[32];
    model_name(sv, model, sizeof model);
    pthread_mutex_lock(&sv->mu);
    snprintf(ts, sizeof ts, "%s", wk->job_timestamp);
    pthread_mutex_unlock(&sv->mu);
    cJSON *info = cJSON_CreateObject();
    cJSON_AddStringToObject(info, "prompt", j->prompt);
    cJSON_AddStringToObject(info, "negative_prompt", j->negative);
    cJSON_AddNumberToObject(info, "seed", (double)j->seed);
    cJSON_AddItemToObject(info, "all_seeds", seeds);
    cJSON *ap = cJSON_CreateArray(), *an = cJSON_CreateArray(), *sub = cJSON_CreateArray();
    for (int i = 0; i < cJSON_GetArraySize(seeds); i++) {
        cJSON_AddItemToArray(ap, cJSON_CreateString(j->prompt));
        cJSON_AddItemToArray(an, cJSON_CreateString(j->negative));
        cJSON_AddItemToArray(sub, cJSON_CreateNumber(-1));
    }
    cJSON_AddItemToObject(info, "all_prompts", ap);
    cJSON_AddItemToObject(info, "all_negative_prompts", an);
    cJSON_AddNumberToObject(info, "subseed", -1);
    cJSON_AddItemToObject(info, "all_subseeds", sub);
    cJSON_AddNumberToObject(info, "subseed_strength", 0);
    cJSON_AddNumberToObject(info, "width", w);
    cJSON_AddNumberToObject(info, "height", h);
    cJSON_AddStringToObject(info, "sampler_name", a_sampler[0] ? a_sampler : j->sampler);
    cJSON_AddStringToObject(info, "scheduler", a_schedule);
    cJSON_AddNumberToObject(info, "cfg_scale", j->cfg);
    cJSON_AddNumberToObject(info, "steps", j->steps);
    cJSON_AddNumberToObject(info, "batch_size", j->batch_size);
    cJSON_AddBoolToObject(info, "restore_faces", 0);
    cJSON_AddNullToObject(info, "face_restoration_model");
    cJSON_AddStringToObject(info, "sd_model_name", model);
    pthread_mutex_lock(&sv->mu);
    if (sv->info.model_hash[0]) cJSON_AddStringToObject(info, "sd_model_hash", sv->info.model_hash);
    else cJSON_AddNullToObject(info, "sd_model_hash");
    pthread_mutex_unlock(&sv->mu);
    cJSON_AddNumberToObject(info, "seed_resize_from_w", -1);
    cJSON_AddNumberToObject(info, "seed_resize_from_h", -1);
    if (j->init) cJSON_AddNumberToObject(info, "denoising_strength", j->strength);
    else cJSON_AddNullToObject(info, "denoising_strength");
    cJSON_AddItemToObject(info, "extra_generation_params", cJSON_CreateObject());
    cJSON_AddNumberToObject(info, "index_of_first_image", 0);
    cJSON_AddItemToObject(info, "infotexts", infotexts);
    cJSON_AddItemToObject(info, "styles", cJSON_CreateArray());
    cJSON_AddStringToObject(info, "job_timestamp", ts);
    cJSON_AddNumberToObject(info, "clip_skip", 1);
    cJSON_AddBoolToObject(info, "is_using_inpainting_conditioning", 0);
    cJSON_AddStringToObject(info, "version", "onnx2cl-sd " ONNX2CL_VERSION);
    cJSON_AddBoolToObject(info, "interrupted", j->interrupted);
    cJSON_AddNumberToObject(info, "images_done", done);
    char *info_s = cJSON_PrintUnformatted(info);
    cJSON_Delete(info);
    cJSON *resp = cJSON_CreateObject();
    cJSON_AddItemToObject(resp, "images", images);
    /* parameters: the request as given, with the values used where it left them out */
    cJSON *par = j->req ? cJSON_Duplicate(j->req, 1) : cJSON_CreateObject();
    if (!par) par = cJSON_CreateObject();
    const char *fill_s[][2] = {{"prompt", j->prompt}, {"negative_prompt", j->negative},
                               {"sampler_name", a_sampler[0] ? a_sampler : j->sampler}};
    for (size_t k = 0; k < 3; k++)
        if (!cJSON_GetObjectItemCaseSensitive(par, fill_s[k][0])) cJSON_AddStringToObject(par, fill_s[k][0], fill_s[k][1]);
    const char *fill_n[] = {"steps", "cfg_scale", "width", "height", "seed", "batch_size", "n_iter"};
    double vals_n[] = {j->steps, j->cfg, w, h, -1, j->batch_size, (double)j->n_images / j->batch_size};
    for (size_t k = 0; k < 7; k++)
        if (!cJSON_GetObjectItemCaseSensitive(par, fill_n[k])) cJSON_AddNumberToObject(par, fill_n[k], vals_n[k]);
    cJSON_AddItemToObject(resp, "parameters", par);
    cJSON_AddStringToObject(resp, "info", info_s ? info_s : "{}");
    free(info_s);
    j->status = 200;
    j->body = cJSON_PrintUnformatted(resp);
    cJSON_Delete(resp);
}

/* Switches every worker's session to j->path: waits until the other workers are idle (no job starts
 * meanwhile), closes each session (two model sets need not fit in memory at once), opens the new
 * checkpoint on each device; on a failure reopens the checkpoint we had. */
/* Exclusive use of every worker's session: no job starts (pausing) and the other workers' running
 * jobs end first. A worker waiting here counts as idle, so that two switches (a POST /options and
 * an override_settings job on two devices) do not wait for each other. */
static void exclusive_begin(struct worker *self)
{
    struct server *sv = self->sv;
    pthread_mutex_lock(&sv->mu);
    self->excl_wait = 1;
    pthread_cond_broadcast(&sv->cv);
    while (sv->pausing && !sv->stopping) pthread_cond_wait(&sv->cv, &sv->mu);
    self->excl_wait = 0;
    sv->pausing = 1;
    for (;;) {
        int busy = 0;
        for (int i = 0; i < sv->n_wk; i++)
            busy |= &sv->wk[i] != self && sv->wk[i].current != NULL && !sv->wk[i].excl_wait;
        if (!busy || sv->stopping) break;
        pthread_cond_wait(&sv->cv, &sv->mu);
    }
    pthread_mutex_unlock(&sv->mu);
}

static void exclusive_end(struct worker *self)
{
    struct server *sv = self->sv;
    pthread_mutex_lock(&sv->mu);
    sv->pausing = 0;
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
}

static void switch_core(struct worker *self, struct job *j);

static void run_switch(struct worker *self, struct job *j)
{
    exclusive_begin(self);
    switch_core(self, j);
    exclusive_end(self);
}

/* run_switch's work, with exclusive use held. */
static void switch_core(struct worker *self, struct job *j)
{
    struct server *sv = self->sv;
    char err[4096] = "";
    struct sds_session *old[64] = {0};
    pthread_mutex_lock(&sv->mu);
    for (int i = 0; i < sv->n_wk; i++) old[i] = sv->wk[i].sess, sv->wk[i].sess = NULL;
    pthread_mutex_unlock(&sv->mu);
    for (int i = 0; i < sv->n_wk; i++) sds_close(old[i]);
    struct sds_open_options o = sv->oo;
    int rc = 0;
    for (int pass = 0; pass < 2; pass++) { /* pass 1: back to the checkpoint we had */
        o.checkpoint = pass ? sv->ckpt : j->path;
        for (int i = 0; i < sv->n_wk; i++) {
            struct sds_session *ns = NULL;
            char e[4096];
            o.device = sv->wk[i].device ? sv->wk[i].device : sv->oo.device;
            int r = sds_open(&o, &ns, e, sizeof e);
            if (r) {
                if (!pass) rc = r, snprintf(err, sizeof err, "%s", e);
                else fprintf(stderr, "onnx2cl-sd serve: cannot reopen %s either: %s\n", sv->ckpt, e);
                break;
            }
            pthread_mutex_lock(&sv->mu);
            sv->wk[i].sess = ns;
            pthread_mutex_unlock(&sv->mu);
        }
        if (!rc || pass) break;
        pthread_mutex_lock(&sv->mu);
        for (int i = 0; i < sv->n_wk; i++) old[i] = sv->wk[i].sess, sv->wk[i].sess = NULL;
        pthread_mutex_unlock(&sv->mu);
        for (int i = 0; i < sv->n_wk; i++) sds_close(old[i]);
    }
    if (rc) {
        cJSON *e = err_json(rc == SDS_EINVAL ? "ValidationError" : "ModelLoadError", "sd_model_checkpoint %s: %s",
                            j->title, err);
        j->status = rc == SDS_EINVAL ? 422 : 500;
        j->body = cJSON_PrintUnformatted(e);
        cJSON_Delete(e);
    } else {
        pthread_mutex_lock(&sv->mu);
        snprintf(sv->ckpt, sizeof sv->ckpt, "%s", j->path);
        snprintf(sv->title, sizeof sv->title, "%s", j->title);
        pthread_mutex_unlock(&sv->mu);
        fprintf(stderr, "onnx2cl-sd serve: checkpoint %s (%s)\n", j->title, j->path);
        j->status = 200;
        j->body = strdup("null");
    }
    struct sds_info info;
    int have = sv->wk[0].sess != NULL;
    if (have) sds_get_info(sv->wk[0].sess, &info);
    pthread_mutex_lock(&sv->mu);
    if (have) sv->info = info;
    pthread_mutex_unlock(&sv->mu);
}

static void *worker_main(void *arg)
{
    struct worker *wk = arg;
    struct server *sv = wk->sv;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        while ((!sv->head || sv->pausing) && !sv->stopping) pthread_cond_wait(&sv->cv, &sv->mu);
        if (sv->stopping) break;
        struct job *j = sv->head;
        sv->head = j->next;
        if (!sv->head) sv->tail = NULL;
        sv->n_queued--;
        j->next = NULL;
        j->state = JOB_RUNNING;
        wk->current = j;
        time_t t = time(NULL);
        struct tm tmv;
        local_tm(t, &tmv);
        strftime(wk->job_timestamp, sizeof wk->job_timestamp, "%Y%m%d%H%M%S", &tmv);
        wk->job_t0 = now_s();
        wk->job_no = 0;
        wk->job_count = j->kind == JOB_TXT2IMG ? j->n_images : 1;
        wk->step = wk->steps = 0;
        wk->lat_c = 0;
        int have = wk->sess != NULL;
        pthread_mutex_unlock(&sv->mu);
        if (j->kind == JOB_SWITCH) {
            run_switch(wk, j);
        } else if (!have) {
            cJSON *e = err_json("ModelLoadError", "no checkpoint is loaded (a switch failed); POST /sdapi/v1/options "
                                "with sd_model_checkpoint");
            j->status = 503;
            j->body = cJSON_PrintUnformatted(e);
            cJSON_Delete(e);
        } else {
            run_txt2img(wk, j);
        }
        pthread_mutex_lock(&sv->mu);
        j->state = JOB_DONE;
        wk->current = NULL;
        wk->job_count = 0;
        wk->step = wk->steps = 0;
        wk->lat_c = 0;
        job_unref(sv, j);
        pthread_cond_broadcast(&sv->cv);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

/* ---- routes ---- */

struct reqctx {
    char *body;
    size_t n, cap;
    int too_big;
};

/* The offset of the first byte that is not well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, <= U+10FFFF), or n when all are. */
static size_t utf8_bad(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (k == 9 || i + k >= n + (k == 0)) return i;
        uint32_t cp = k == 0 ? c : k == 1 ? c & 0x1F : k == 2 ? c & 0x0F : c & 0x07;
        for (size_t q = 1; q <= k; q++) {
            if ((s[i + q] & 0xC0) != 0x80) return i;
            cp = cp << 6 | (s[i + q] & 0x3F);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += k + 1;
    }
    return n;
}

static cJSON *parse_body(struct reqctx *rc, char *msg, size_t cap)
{
    if (!rc->n) {
        snprintf(msg, cap, "empty body: expected a JSON object");
        return NULL;
    }
    size_t bad = utf8_bad((const unsigned char *)rc->body, rc->n);
    if (bad < rc->n) {
        snprintf(msg, cap, "the body is not UTF-8 (byte %zu of %zu): JSON text is UTF-8", bad, rc->n);
        return NULL;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(rc->body, rc->n, &end, 0);
    if (!j) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= rc->body && at <= rc->body + rc->n ? (size_t)(at - rc->body) : 0;
        snprintf(msg, cap, "malformed JSON at byte %zu of %zu", off, rc->n);
        return NULL;
    }
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        snprintf(msg, cap, "expected a JSON object");
        return NULL;
    }
    return j;
}

static enum MHD_Result answer_job(struct server *sv, struct MHD_Connection *c, struct job *j)
{
    int w = submit_and_wait(sv, c, j);
    if (w == -1 || w == -2) {
        unsigned q = (unsigned)sv->lim.queue;
        job_free(j);
        if (w == -1) return send_err(c, 503, "QueueFull", "the queue holds %u jobs, the limit (--max-queue %u); retry later", q, q);
        return send_err(c, 503, "ShuttingDown", "the server is shutting down");
    }
    if (w == 0) { /* client gone */
        pthread_mutex_lock(&sv->mu);
        job_unref(sv, j);
        pthread_mutex_unlock(&sv->mu);
        return MHD_NO;
    }
    enum MHD_Result ret = send_text(c, j->status, j->body ? j->body : "{\"error\":\"InternalError\",\"detail\":\"out of memory\"}",
                                    "application/json", NULL);
    pthread_mutex_lock(&sv->mu);
    job_unref(sv, j);
    pthread_mutex_unlock(&sv->mu);
    return ret;
}

static enum MHD_Result r_txt2img(struct server *sv, struct MHD_Connection *c, struct reqctx *rc, int img2img)
{
    char msg[1024];
    cJSON *o = parse_body(rc, msg, sizeof msg);
    if (!o) return send_err(c, 400, "BadRequest", "%s", msg);
    struct job *j = calloc(1, sizeof *j);
    if (!j) {
        cJSON_Delete(o);
        return send_err(c, 500, "InternalError", "out of memory");
    }
    j->kind = JOB_TXT2IMG;
    j->req = o;
    if (parse_txt2img(sv, o, j, img2img, msg, sizeof msg)) {
        job_free(j);
        return send_err(c, 422, "ValidationError", "%s", msg);
    }
    return answer_job(sv, c, j);
}

static enum MHD_Result r_progress(struct server *sv, struct MHD_Connection *c)
{
    const char *skip = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "skip_current_image");
    int want_image = !(skip && (!strcasecmp(skip, "true") || !strcmp(skip, "1")));
    pthread_mutex_lock(&sv->mu);
    struct worker *wk = NULL; /* the worker running the oldest job (A1111 reports one job) */
    for (int i = 0; i < sv->n_wk; i++)
        if (sv->wk[i].current && (!wk || sv->wk[i].current->id < wk->current->id)) wk = &sv->wk[i];
    int n_busy = 0;
    for (int i = 0; i < sv->n_wk; i++) n_busy += sv->wk[i].current != NULL;
    struct job *j = wk ? wk->current : NULL;
    int running = j && j->kind == JOB_TXT2IMG;
    double el = running ? now_s() - wk->job_t0 : 0;
    double prog = 0, eta = 0;
    if (running && wk->job_count > 0) {
        prog = (wk->job_no + (wk->steps ? (double)wk->step / wk->steps : 0)) / wk->job_count;
        if (prog > 0) eta = el / prog - el;
    }
    cJSON *o = cJSON_CreateObject(), *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "progress", prog);
    cJSON_AddNumberToObject(o, "eta_relative", eta);
    cJSON_AddBoolToObject(st, "skipped", running && wk->skipped);
    cJSON_AddBoolToObject(st, "interrupted", running && j->interrupted);
    cJSON_AddBoolToObject(st, "stopping_generation", 0);
    char jobname[64] = "";
    if (j) snprintf(jobname, sizeof jobname, "%s(%ld)", j->kind == JOB_TXT2IMG ? "txt2img" : "switch-model", j->id);
    cJSON_AddStringToObject(st, "job", jobname);
    cJSON_AddNumberToObject(st, "job_count", j ? wk->job_count : 0);
    cJSON_AddStringToObject(st, "job_timestamp", j ? wk->job_timestamp : "0");
    cJSON_AddNumberToObject(st, "job_no", j ? wk->job_no : 0);
    cJSON_AddNumberToObject(st, "sampling_step", running ? wk->step : 0);
    cJSON_AddNumberToObject(st, "sampling_steps", running ? wk->steps : 0);
    cJSON_AddNumberToObject(st, "queued", sv->n_queued);
    cJSON_AddNumberToObject(st, "running", n_busy);
    cJSON_AddItemToObject(o, "state", st);
    char textinfo[192] = "";
    if (running) snprintf(textinfo, sizeof textinfo, "%s", wk->stage);
    char *b64 = NULL;
    float *lat = NULL; /* the running image's latents, copied: decoded with sv->mu released */
    int lc = 0, lh = 0, lw = 0;
    char family[32];
    snprintf(family, sizeof family, "%s", sv->info.family); /* the preview's coefficients */
    if (want_image && running && (wk->lat_c == 4 || wk->lat_c == 16) &&
        (lat = malloc((size_t)wk->lat_c * wk->lat_h * wk->lat_w * sizeof *lat))) {
        lc = wk->lat_c, lh = wk->lat_h, lw = wk->lat_w;
        memcpy(lat, wk->lat, (size_t)lc * lh * lw * sizeof *lat);
    }
    pthread_mutex_unlock(&sv->mu);
    if (lat) { /* --taesd: TAESD's decode (A1111's live preview "TAESD"), else the latent approximation */
        int iw = lw, ih = lh;
        unsigned char *rgb = NULL;
        if (sv->taesd) {
            pthread_mutex_lock(&wk->td_mu);
            struct sdv_taesd *t = &wk->td;
            if (wk->td_loaded && t->lat_c == lc && t->lat_h == lh && t->lat_w == lw) {
                size_t np = (size_t)t->img_h * t->img_w;
                float *chw = malloc(np * 3 * sizeof *chw);
                char e[2048];
                if (chw && (rgb = malloc(np * 3)) && sdv_taesd_decode(t, lat, 1, chw, e, sizeof e) == 0) {
                    iw = t->img_w, ih = t->img_h;
                    for (size_t k = 0; k < np; k++) /* as png_write.c: x * 255 rounded half to even */
                        for (int ch = 0; ch < 3; ch++) {
                            float v = nearbyintf(chw[ch * np + k] * 255.0f);
                            rgb[k * 3 + ch] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
                        }
                } else {
                    free(rgb);
                    rgb = NULL;
                }
                free(chw);
            }
            pthread_mutex_unlock(&wk->td_mu);
        }
        if (!rgb && (rgb = malloc((size_t)lh * lw * 3)) && sds_preview_rgb_family(family, lat, lc, lh, lw, rgb) != 0) {
            free(rgb);
            rgb = NULL;
        }
        unsigned char *png;
        size_t len;
        char e[256];
        if (rgb && sds_png_encode(rgb, iw, ih, NULL, NULL, 0, &png, &len, e, sizeof e) == 0) {
            b64 = b64_encode(png, len);
            free(png);
        }
        free(rgb);
        free(lat);
    }
    if (b64) cJSON_AddStringToObject(o, "current_image", b64);
    else cJSON_AddNullToObject(o, "current_image");
    free(b64);
    if (textinfo[0]) cJSON_AddStringToObject(o, "textinfo", textinfo);
    else cJSON_AddNullToObject(o, "textinfo");
    return send_json(c, 200, o);
}

static enum MHD_Result r_interrupt(struct server *sv, struct MHD_Connection *c, int skip)
{
    pthread_mutex_lock(&sv->mu); /* every running generation (one per device) */
    for (int i = 0; i < sv->n_wk; i++) {
        struct job *j = sv->wk[i].current;
        if (j && j->kind == JOB_TXT2IMG) {
            if (skip) sv->wk[i].skipped = 1;
            else j->interrupted = 1;
            j->stop = 1;
        }
    }
    pthread_mutex_unlock(&sv->mu);
    return send_json(c, 200, cJSON_CreateObject());
}

static enum MHD_Result r_samplers(struct MHD_Connection *c)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < N_SAMPLERS; i++) {
        cJSON *o = cJSON_CreateObject(), *al = cJSON_CreateArray();
        cJSON_AddStringToObject(o, "name", samplers[i].label);
        for (int k = 0; k < 3; k++)
            if (samplers[i].aliases[k]) cJSON_AddItemToArray(al, cJSON_CreateString(samplers[i].aliases[k]));
        cJSON_AddItemToObject(o, "aliases", al);
        cJSON_AddItemToObject(o, "options", cJSON_CreateObject());
        cJSON_AddItemToArray(a, o);
    }
    return send_json(c, 200, a);
}

static enum MHD_Result r_schedulers(struct MHD_Connection *c)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < N_SCHEDULES; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", schedules[i].name);
        cJSON_AddStringToObject(o, "label", schedules[i].label);
        cJSON_AddNullToObject(o, "aliases");
        cJSON_AddNumberToObject(o, "default_rho", i == 2 ? 7 : -1);
        cJSON_AddBoolToObject(o, "need_inner_model", 0);
        cJSON_AddItemToArray(a, o);
    }
    return send_json(c, 200, a);
}

static cJSON *model_entry(const char *title, const char *stem, const char *path)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "title", title);
    cJSON_AddStringToObject(o, "model_name", stem);
    cJSON_AddNullToObject(o, "hash");
    cJSON_AddNullToObject(o, "sha256");
    cJSON_AddStringToObject(o, "filename", path);
    cJSON_AddNullToObject(o, "config");
    return o;
}

static enum MHD_Result r_sd_models(struct server *sv, struct MHD_Connection *c)
{
    int n;
    struct entry *e = list_entries(sv->ckpt_dir, 1, &n);
    if (!e) return send_err(c, 500, "InternalError", "out of memory");
    cJSON *a = cJSON_CreateArray();
    pthread_mutex_lock(&sv->mu);
    int cur_listed = 0;
    for (int i = 0; i < n; i++) {
        cJSON_AddItemToArray(a, model_entry(e[i].name, e[i].stem, e[i].path));
        cur_listed |= !strcmp(e[i].name, sv->title);
    }
    if (!cur_listed && sv->title[0]) {
        char stem[256];
        model_name(sv, stem, sizeof stem);
        cJSON_AddItemToArray(a, model_entry(sv->title, stem, sv->ckpt[0] ? sv->ckpt : sv->info.source));
    }
    pthread_mutex_unlock(&sv->mu);
    free(e);
    return send_json(c, 200, a);
}

static enum MHD_Result r_loras(struct server *sv, struct MHD_Connection *c)
{
    int n;
    struct entry *e = list_entries(sv->lora_dir, 0, &n);
    if (!e) return send_err(c, 500, "InternalError", "out of memory");
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", e[i].stem);
        cJSON_AddStringToObject(o, "alias", e[i].stem);
        cJSON_AddStringToObject(o, "path", e[i].path);
        cJSON_AddItemToObject(o, "metadata", cJSON_CreateObject());
        cJSON_AddItemToArray(a, o);
    }
    free(e);
    return send_json(c, 200, a);
}

static enum MHD_Result r_options_get(struct server *sv, struct MHD_Connection *c)
{
    pthread_mutex_lock(&sv->mu);
    cJSON *o = cJSON_Duplicate(sv->options, 1);
    if (!o) o = cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(o, "sd_model_checkpoint");
    cJSON_AddStringToObject(o, "sd_model_checkpoint", sv->title);
    if (!cJSON_GetObjectItemCaseSensitive(o, "samples_format")) cJSON_AddStringToObject(o, "samples_format", "png");
    if (!cJSON_GetObjectItemCaseSensitive(o, "emphasis")) cJSON_AddStringToObject(o, "emphasis", "Original");
    if (!cJSON_GetObjectItemCaseSensitive(o, "CLIP_stop_at_last_layers")) cJSON_AddNumberToObject(o, "CLIP_stop_at_last_layers", 1);
    cJSON_AddNullToObject(o, "sd_checkpoint_hash");
    pthread_mutex_unlock(&sv->mu);
    return send_json(c, 200, o);
}

/* Strips A1111's " [hash]" title suffix. */
static enum MHD_Result r_options_post(struct server *sv, struct MHD_Connection *c, struct reqctx *rc)
{
    char msg[1024];
    cJSON *o = parse_body(rc, msg, sizeof msg);
    if (!o) return send_err(c, 400, "BadRequest", "%s", msg);
    const cJSON *ck = cJSON_GetObjectItemCaseSensitive(o, "sd_model_checkpoint");
    if (ck && !cJSON_IsString(ck)) {
        cJSON_Delete(o);
        return send_err(c, 422, "ValidationError", "sd_model_checkpoint: expected a string");
    }
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "CLIP_stop_at_last_layers"); /* A1111's Clip skip */
    if (cs && (!cJSON_IsNumber(cs) || !(cs->valuedouble >= 1 && cs->valuedouble <= 12) ||
               cs->valuedouble != (int)cs->valuedouble)) {
        cJSON_Delete(o);
        return send_err(c, 422, "ValidationError", "CLIP_stop_at_last_layers: expected an integer in [1, 12]");
    }
    const cJSON *em = cJSON_GetObjectItemCaseSensitive(o, "emphasis"); /* A1111's Emphasis option */
    if (em) {
        char e[512] = "expected a string";
        if (!cJSON_IsString(em) || sds_emphasis_check(em->valuestring, e, sizeof e)) {
            cJSON_Delete(o);
            return send_err(c, 422, "ValidationError", "%s%s", cJSON_IsString(em) ? "" : "emphasis: ", e);
        }
    }
    struct job *j = NULL;
    if (ck) {
        char want[PATH_MAX];
        snprintf(want, sizeof want, "%s", ck->valuestring);
        strip_hash(want);
        pthread_mutex_lock(&sv->mu);
        int same = !strcmp(want, sv->title);
        pthread_mutex_unlock(&sv->mu);
        if (!same) {
            if (!sv->ckpt_dir || !sv->oo.checkpoint) {
                enum MHD_Result ret = send_err(c, 422, "ValidationError", "sd_model_checkpoint \"%s\": switching needs "
                                               "-m and --ckpt-dir DIR (the server lists its checkpoints there)",
                                               ck->valuestring);
                cJSON_Delete(o);
                return ret;
            }
            int n;
            struct entry *e = list_entries(sv->ckpt_dir, 1, &n);
            int k = 0;
            while (e && k < n && strcmp(want, e[k].name) && strcmp(want, e[k].stem)) k++;
            if (!e || k == n) {
                free(e);
                enum MHD_Result ret = send_err(c, 422, "ValidationError", "sd_model_checkpoint \"%s\": not one of the "
                                               "checkpoints in --ckpt-dir (GET /sdapi/v1/sd-models lists them)",
                                               ck->valuestring);
                cJSON_Delete(o);
                return ret;
            }
            j = calloc(1, sizeof *j);
            if (j) {
                j->kind = JOB_SWITCH;
                snprintf(j->path, sizeof j->path, "%s", e[k].path);
                snprintf(j->title, sizeof j->title, "%s", e[k].name);
            }
            free(e);
            if (!j) {
                cJSON_Delete(o);
                return send_err(c, 500, "InternalError", "out of memory");
            }
        }
    }
    pthread_mutex_lock(&sv->mu); /* the other options are kept and echoed (they change nothing here) */
    for (cJSON *it = o->child; it; it = it->next) {
        if (!strcmp(it->string, "sd_model_checkpoint")) continue;
        cJSON_DeleteItemFromObjectCaseSensitive(sv->options, it->string);
        cJSON_AddItemToObject(sv->options, it->string, cJSON_Duplicate(it, 1));
    }
    pthread_mutex_unlock(&sv->mu);
    cJSON_Delete(o);
    if (j) return answer_job(sv, c, j);
    return send_text(c, 200, "null", "application/json", NULL);
}

/* A1111's parse_generation_parameters, simplified: Prompt, Negative prompt, then "Key: value" pairs
 * of the last line (values may be quoted). */
static cJSON *parse_infotext(const char *t)
{
    cJSON *o = cJSON_CreateObject();
    const char *last = strrchr(t, '\n');
    const char *params = last ? last + 1 : t;
    if (!strstr(params, "Steps: ")) params = NULL;
    size_t head_n = params ? (size_t)(params - t) : strlen(t);
    char *head = o2r_strndup(t, head_n);
    if (!head) return o;
    if (head_n && head[head_n - 1] == '\n') head[head_n - 1] = 0;
    char *neg = strstr(head, "\nNegative prompt: ");
    if (!neg && !strncmp(head, "Negative prompt: ", 17)) neg = head - 1;
    if (neg) {
        cJSON_AddStringToObject(o, "Negative prompt", neg + 18);
        if (neg >= head) *neg = 0;
        else head[0] = 0;
    } else {
        cJSON_AddStringToObject(o, "Negative prompt", "");
    }
    cJSON_AddStringToObject(o, "Prompt", neg && neg < head ? "" : head);
    free(head);
    for (const char *p = params; p && *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *colon = strstr(p, ": ");
        if (!colon) break;
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(colon - p), p);
        const char *v = colon + 2, *e;
        char *val;
        if (*v == '"') {
            e = v + 1;
            while (*e && *e != '"') e += e[0] == '\\' && e[1] ? 2 : 1;
            val = o2r_strndup(v + 1, (size_t)(e - v - 1));
            if (*e) e++;
        } else {
            e = strchr(v, ',');
            if (!e) e = v + strlen(v);
            val = o2r_strndup(v, (size_t)(e - v));
        }
        if (val) cJSON_AddStringToObject(o, key, val);
        free(val);
        p = e;
    }
    return o;
}

static enum MHD_Result r_png_info(struct MHD_Connection *c, struct reqctx *rc)
{
    char msg[1024];
    cJSON *o = parse_body(rc, msg, sizeof msg);
    if (!o) return send_err(c, 400, "BadRequest", "%s", msg);
    const cJSON *im = cJSON_GetObjectItemCaseSensitive(o, "image");
    if (!cJSON_IsString(im)) {
        cJSON_Delete(o);
        return send_err(c, 422, "ValidationError", "image: expected a base64 PNG string");
    }
    const char *s = im->valuestring;
    if (!strncmp(s, "data:", 5) && strchr(s, ',')) s = strchr(s, ',') + 1;
    size_t n = 0;
    unsigned char *png = b64_decode(s, strlen(s), &n);
    if (!png) {
        cJSON_Delete(o);
        return send_err(c, 422, "ValidationError", "image: not base64");
    }
    char *keys[32], *vals[32];
    int nt = 0;
    if (sds_png_text(png, n, keys, vals, 32, &nt, NULL, NULL, msg, sizeof msg)) {
        free(png);
        cJSON_Delete(o);
        return send_err(c, 422, "ValidationError", "image: %s", msg);
    }
    free(png);
    cJSON_Delete(o);
    cJSON *r = cJSON_CreateObject(), *items = cJSON_CreateObject();
    const char *geninfo = "";
    for (int i = 0; i < nt; i++) {
        if (!strcmp(keys[i], "parameters")) geninfo = vals[i];
        else cJSON_AddStringToObject(items, keys[i], vals[i]);
    }
    cJSON_AddStringToObject(r, "info", geninfo);
    cJSON_AddItemToObject(r, "items", items);
    cJSON_AddItemToObject(r, "parameters", parse_infotext(geninfo));
    for (int i = 0; i < nt; i++) free(keys[i]), free(vals[i]);
    return send_json(c, 200, r);
}

static enum MHD_Result r_health(struct server *sv, struct MHD_Connection *c)
{
    cJSON *o = cJSON_CreateObject();
    pthread_mutex_lock(&sv->mu);
    int loaded = 1, busy = 0;
    for (int i = 0; i < sv->n_wk; i++) loaded &= sv->wk[i].sess != NULL, busy += sv->wk[i].current != NULL;
    cJSON_AddStringToObject(o, "status", loaded ? "ok" : "no-model");
    cJSON_AddStringToObject(o, "sd_model_checkpoint", sv->title);
    cJSON_AddNumberToObject(o, "queued", sv->n_queued);
    cJSON_AddBoolToObject(o, "busy", busy > 0);
    cJSON_AddNumberToObject(o, "workers", sv->n_wk);
    cJSON_AddNumberToObject(o, "running", busy);
    cJSON_AddStringToObject(o, "version", "onnx2cl-sd " ONNX2CL_VERSION);
    pthread_mutex_unlock(&sv->mu);
    return send_json(c, 200, o);
}

/* The route table: path, allowed methods ("GET", "POST", "GET, POST"). */
static const struct {
    const char *path, *methods;
} routes[] = {
    {"/health", "GET"},
    {"/sdapi/v1/txt2img", "POST"},
    {"/sdapi/v1/img2img", "POST"},
    {"/sdapi/v1/progress", "GET"},
    {"/sdapi/v1/interrupt", "POST"},
    {"/sdapi/v1/skip", "POST"},
    {"/sdapi/v1/samplers", "GET"},
    {"/sdapi/v1/schedulers", "GET"},
    {"/sdapi/v1/sd-models", "GET"},
    {"/sdapi/v1/refresh-checkpoints", "POST"},
    {"/sdapi/v1/loras", "GET"},
    {"/sdapi/v1/refresh-loras", "POST"},
    {"/sdapi/v1/options", "GET, POST"},
    {"/sdapi/v1/png-info", "POST"},
    {"/sdapi/v1/scripts", "GET"},
};

static enum MHD_Result dispatch(struct server *sv, struct MHD_Connection *c, const char *url, const char *method,
                                struct reqctx *rc)
{
    size_t k = 0, nr = sizeof routes / sizeof *routes;
    while (k < nr && strcmp(url, routes[k].path)) k++;
    if (k == nr) return send_err(c, 404, "NotFound", "no route %s (see onnx2cl-sd serve --help)", url);
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    if (!((get && strstr(routes[k].methods, "GET")) || (post && strstr(routes[k].methods, "POST")))) {
        char allow[32];
        snprintf(allow, sizeof allow, "%s", routes[k].methods);
        cJSON *e = err_json("MethodNotAllowed", "%s %s: allowed: %s", method, url, routes[k].methods);
        char *t = cJSON_PrintUnformatted(e);
        cJSON_Delete(e);
        enum MHD_Result ret = send_text(c, 405, t ? t : "{}", "application/json", allow);
        free(t);
        return ret;
    }
    const char *p = routes[k].path;
    if (!strcmp(p, "/health")) return r_health(sv, c);
    if (!strcmp(p, "/sdapi/v1/txt2img")) return r_txt2img(sv, c, rc, 0);
    if (!strcmp(p, "/sdapi/v1/img2img")) return r_txt2img(sv, c, rc, 1);
    if (!strcmp(p, "/sdapi/v1/progress")) return r_progress(sv, c);
    if (!strcmp(p, "/sdapi/v1/interrupt")) return r_interrupt(sv, c, 0);
    if (!strcmp(p, "/sdapi/v1/skip")) return r_interrupt(sv, c, 1);
    if (!strcmp(p, "/sdapi/v1/samplers")) return r_samplers(c);
    if (!strcmp(p, "/sdapi/v1/schedulers")) return r_schedulers(c);
    if (!strcmp(p, "/sdapi/v1/sd-models")) return r_sd_models(sv, c);
    if (!strcmp(p, "/sdapi/v1/refresh-checkpoints") || !strcmp(p, "/sdapi/v1/refresh-loras"))
        return send_text(c, 200, "null", "application/json", NULL); /* listed on every request */
    if (!strcmp(p, "/sdapi/v1/loras")) return r_loras(sv, c);
    if (!strcmp(p, "/sdapi/v1/options")) return get ? r_options_get(sv, c) : r_options_post(sv, c, rc);
    if (!strcmp(p, "/sdapi/v1/png-info")) return r_png_info(c, rc);
    if (!strcmp(p, "/sdapi/v1/scripts"))
        return send_text(c, 200, "{\"txt2img\":[],\"img2img\":[]}", "application/json", NULL);
    return send_err(c, 404, "NotFound", "no route %s", url);
}

/* HTTP Basic credentials vs "user:pass", in time independent of where they differ. */
static int auth_ok(const struct server *sv, struct MHD_Connection *c)
{
    if (!sv->auth) return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Basic ", 6)) return 0;
    size_t n = 0;
    unsigned char *dec = b64_decode(h + 6, strnlen(h + 6, 4096), &n);
    if (!dec) return 0;
    size_t m = strlen(sv->auth);
    unsigned diff = (unsigned)(n ^ m);
    for (size_t i = 0; i < m; i++) diff |= (unsigned)(sv->auth[i] ^ (i < n ? dec[i] : 0));
    free(dec);
    return diff == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    struct server *sv = cls;
    (void)version;
    struct reqctx *rc = *con_cls;
    if (!rc) { /* headers only: auth and the declared size are checked before the body is read */
        rc = calloc(1, sizeof *rc);
        if (!rc) return MHD_NO;
        *con_cls = rc;
        if (!auth_ok(sv, c)) {
            rc->too_big = 2;
            return send_err(c, 401, "Unauthorized", "HTTP Basic credentials required (--api-auth)");
        }
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > sv->lim.body) {
            rc->too_big = 2;
            return send_err(c, 413, "PayloadTooLarge", "request body of %s bytes: more than the limit of %zu bytes "
                            "(--max-body)", cl, sv->lim.body);
        }
        return MHD_YES;
    }
    if (rc->too_big == 2) { /* answered already; discard what comes */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t k = *upload_data_size;
        if (rc->n + k > sv->lim.body) rc->too_big = 1;
        if (!rc->too_big) {
            if (rc->n + k + 1 > rc->cap) {
                size_t nc = rc->cap ? rc->cap : 4096;
                while (nc < rc->n + k + 1) nc *= 2;
                char *nb = realloc(rc->body, nc);
                if (!nb) return MHD_NO;
                rc->body = nb;
                rc->cap = nc;
            }
            memcpy(rc->body + rc->n, upload_data, k);
            rc->n += k;
            rc->body[rc->n] = 0;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rc->too_big)
        return send_err(c, 413, "PayloadTooLarge", "request body: more than the limit of %zu bytes (--max-body)",
                        sv->lim.body);
    return dispatch(sv, c, url, method, rc);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    struct reqctx *rc = *con_cls;
    if (rc) {
        free(rc->body);
        free(rc);
    }
    *con_cls = NULL;
}

/* ---- main ---- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: onnx2cl-sd serve -m CHECKPOINT [options]\n"
        "   or: onnx2cl-sd serve --models DIR --hf DIR [options]\n"
        "An HTTP server with AUTOMATIC1111/Forge's API (clients written for it work unchanged). Models stay\n"
        "loaded (--offload: each request loads its stages' models in turn); requests queue FIFO and run one at a\n"
        "time per worker; a client that disconnects loses its job.\n"
        "models (as the CLI):\n"
        "  -m, --model CKPT        .safetensors file or diffusers folder (compiled into the cache on first use)\n"
        "  --models DIR --hf DIR   compiled models (text_encoder/unet/vae_decoder .so|.o2d) + Hugging Face folder\n"
        "  --ckpt-dir DIR          checkpoints that /sdapi/v1/sd-models lists and sd_model_checkpoint may switch to\n"
        "                          (*.safetensors and diffusers folders, subfolders too; names only, never paths)\n"
        "  --lora-dir DIR          where <lora:NAME:W> prompt tags find NAME.safetensors (default $ONNX2CL_LORA_DIR)\n"
        "  --arch-dir DIR  --variant V  --weights-dtype f16|f32  --device SPEC  --vae-tile N  --offload   (as the CLI)\n"
        "  --t5-tokenizer PATH  SD 3 / Flux single files: T5's spiece.model (or its folder), as the CLI's\n"
        "  --text-device SPEC      the text encoders on this OpenCL device (as the CLI's; one for every worker)\n"
        "  --vae F --clip-l F --clip-g F --t5xxl F  component files completing or replacing the checkpoint's (a\n"
        "                          Flux / SD 3.5 file without its VAE and text encoders), as the CLI's; -m only;\n"
        "                          they apply to every checkpoint the server opens (sd_model_checkpoint too)\n"
        "  --devices A,B,...       one worker per OpenCL device (index or name part; up to 64; the same device\n"
        "                          twice runs two generations on it): jobs go to the first idle worker\n"
        "  --width W --height H    size prepared at start (default: the architecture's) and the size of requests\n"
        "                          without width/height (default: 512x512, as A1111); requests may ask others\n"
        "  --taesd PATH            TAESD's decoder (taesd_decoder.safetensors or a diffusers AutoencoderTiny folder,\n"
        "                          the CLI's --taesd; -m only): /progress's current_image is TAESD's decode of the\n"
        "                          latents (A1111's live preview \"TAESD\") instead of the latent approximation;\n"
        "                          give the checkpoints' family's (taesd: SD 1.x/2.x, taesdxl: SDXL)\n"
        "server:\n"
        "  --listen HOST:PORT      address to bind (default 127.0.0.1:7860: this machine only; 0.0.0.0:PORT for all;\n"
        "                          PORT 0 picks a free port, printed on stderr)\n"
        "  --api-auth USER:PASS    require HTTP Basic credentials on every route (as A1111's --api-auth)\n"
        "  --max-body BYTES        request body limit (default 16777216) -> 413\n"
        "  --max-size PX           width/height limit (default 2048) -> 422\n"
        "  --max-steps N           steps limit (default 150) -> 422\n"
        "  --max-batch N           images per request, batch_size x n_iter (default 8) -> 422\n"
        "  --max-prompt BYTES      prompt / negative prompt limit (default 16384) -> 422\n"
        "  --max-queue N           jobs waiting (default 32) -> 503\n"
        "  --max-connections N     simultaneous connections (default 64)\n"
        "  --timeout S             drop a connection idle for S seconds (default 30)\n"
        "  --quiet                 no engine progress lines\n"
        "routes (JSON; A1111 field names):\n"
        "  POST /sdapi/v1/txt2img        prompt, negative_prompt, steps, cfg_scale, seed (-1 random), width, height,\n"
        "                                distilled_cfg_scale (Forge's: Flux dev's guidance, default 3.5),\n"
        "                                sampler_name (%s;\n"
        "                                also our names euler_a, dpmpp_2m, ... and A1111's older \"DPM++ 2M Karras\"),\n"
        "                                scheduler (automatic, uniform, karras, exponential, sgm_uniform, simple,\n"
        "                                normal, beta), batch_size, n_iter, send_images;\n"
        "                                <lora:NAME:W> tags in the prompt, eta (DDIM/TCD), override_settings\n"
        "                                {sd_model_checkpoint, CLIP_stop_at_last_layers, emphasis}; fields this server\n"
        "                                does not run (enable_hr, subseed_strength, restore_faces, ...) are refused\n"
        "                                with 422 unless default (docs/txt2img.md lists each field). Answer:\n"
        "                                {images: [base64 PNG], parameters: {...}, info: \"<JSON>\"}; an interrupted\n"
        "                                job answers the images done before it (maybe none)\n"
        "  POST /sdapi/v1/img2img        the txt2img fields + init_images [one base64 PNG] (resized to width x height\n"
        "                                as A1111's resize_mode 0, PIL Lanczos; width/height default to its size),\n"
        "                                denoising_strength (default 0.75), mask (base64 PNG, any checkpoint: a plain\n"
        "                                UNet blends latents, an inpainting UNet takes the mask), mask_blur (default\n"
        "                                4), inpainting_mask_invert, inpaint_full_res (default true: \"Only masked\",\n"
        "                                the area around the mask generated at width x height, default the image's\n"
        "                                size rounded down to 8 (SD 3 / Flux: 16), and pasted back into the image at\n"
        "                                its size; false:\n"
        "                                \"Whole picture\"), inpaint_full_res_padding (default 0); inpainting_fill 1 only\n"
        "  GET  /sdapi/v1/progress       progress, eta_relative, state{...}, current_image (latent preview;\n"
        "                                --taesd: TAESD's), textinfo\n"
        "  POST /sdapi/v1/interrupt      stop the running job;  POST /sdapi/v1/skip: skip its current image\n"
        "  GET  /sdapi/v1/samplers, /schedulers, /sd-models, /loras, /scripts;  POST /refresh-checkpoints, /refresh-loras\n"
        "  GET  /sdapi/v1/options        POST /sdapi/v1/options {sd_model_checkpoint: NAME} switches the checkpoint\n"
        "                                {emphasis: Original|No norm|Ignore|None|diffusers} sets A1111's prompt\n"
        "                                syntax (default Original: (word:1.2), [word], BREAK, 75-token chunks);\n"
        "                                a request's override_settings.emphasis overrides it;\n"
        "                                {CLIP_stop_at_last_layers: N} A1111's Clip skip (default 1; SD 1.x)\n"
        "  POST /sdapi/v1/png-info       {image: base64 PNG} -> {info, items, parameters}\n"
        "  GET  /health                  {status, sd_model_checkpoint, queued, busy}\n"
        "errors: {error, detail}: 400 malformed JSON, 401 credentials, 404 route, 405 method, 413 body, 422 a field\n"
        "(the message names the field and the limit), 500 generation, 503 queue full / shutting down.\n"
        "SIGINT/SIGTERM: the running image is cancelled, waiting clients get 503, the server exits 0.\n",
        sampler_labels());
}

static int parse_size(const char *flag, const char *v, long long lo, long long hi, long long *out)
{
    char *e;
    errno = 0;
    long long x = strtoll(v, &e, 10);
    if (e == v || *e || errno || x < lo || x > hi) {
        fprintf(stderr, "onnx2cl-sd serve: %s %s: expected an integer in [%lld, %lld]\n", flag, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* listen(2), which sd_serve_main's --listen string shadows there. */
static int sock_listen(MHD_socket fd, int backlog) { return listen(fd, backlog); }

int sd_serve_main(int argc, char **argv)
{
    static struct server sv0;
    struct server *sv = &sv0;
    memset(sv, 0, sizeof *sv);
    sv->lim = (struct limits){.body = 16u << 20, .size = 2048, .steps = 150, .batch = 8, .prompt = 16384, .queue = 32};
    sv->timeout = 30;
    const char *listen = "127.0.0.1:7860", *devices = NULL;
    long long maxconn = 64, v;
    struct sds_open_options *oo = &sv->oo;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT()                                                                                               \
    (i + 1 < argc ? argv[++i]                                                                                \
                  : (fprintf(stderr, "onnx2cl-sd serve: %s needs a value\n", a), (const char *)NULL))
#define NUM(lo, hi, dst)                                                                                     \
    do {                                                                                                     \
        const char *s_ = NEXT();                                                                             \
        if (!s_ || parse_size(a, s_, lo, hi, &v)) return 2;                                                  \
        dst = v;                                                                                             \
    } while (0)
        const char **sp = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) sp = &oo->checkpoint;
        else if (!strcmp(a, "--models")) sp = &oo->models_dir;
        else if (!strcmp(a, "--hf")) sp = &oo->hf_dir;
        else if (!strcmp(a, "--ckpt-dir")) sp = &sv->ckpt_dir;
        else if (!strcmp(a, "--lora-dir")) sp = &oo->lora_dir;
        else if (!strcmp(a, "--arch-dir")) sp = &oo->arch_dir;
        else if (!strcmp(a, "--t5-tokenizer")) sp = &oo->t5_tokenizer;
        else if (!strcmp(a, "--vae")) sp = &oo->vae_file;
        else if (!strcmp(a, "--clip-l")) sp = &oo->clip_l_file;
        else if (!strcmp(a, "--clip-g")) sp = &oo->clip_g_file;
        else if (!strcmp(a, "--t5xxl")) sp = &oo->t5xxl_file;
        else if (!strcmp(a, "--variant")) sp = &oo->variant;
        else if (!strcmp(a, "--weights-dtype")) sp = &oo->weights_dtype;
        else if (!strcmp(a, "--device")) sp = &oo->device;
        else if (!strcmp(a, "--text-device")) sp = &oo->text_device;
        else if (!strcmp(a, "--devices")) sp = &devices;
        else if (!strcmp(a, "--listen")) sp = &listen;
        else if (!strcmp(a, "--api-auth")) sp = &sv->auth;
        else if (!strcmp(a, "--taesd")) sp = &sv->taesd;
        else if (!strcmp(a, "--width")) NUM(8, 16384, oo->width);
        else if (!strcmp(a, "--height")) NUM(8, 16384, oo->height);
        else if (!strcmp(a, "--max-body")) NUM(1024, 1LL << 32, sv->lim.body);
        else if (!strcmp(a, "--max-size")) NUM(8, 16384, sv->lim.size);
        else if (!strcmp(a, "--max-steps")) NUM(1, 1000, sv->lim.steps);
        else if (!strcmp(a, "--max-batch")) NUM(1, 1000, sv->lim.batch);
        else if (!strcmp(a, "--max-prompt")) NUM(1, 1 << 24, sv->lim.prompt);
        else if (!strcmp(a, "--max-queue")) NUM(1, 100000, sv->lim.queue);
        else if (!strcmp(a, "--max-connections")) NUM(2, 100000, maxconn);
        else if (!strcmp(a, "--timeout")) NUM(1, 86400, sv->timeout);
        else if (!strcmp(a, "--quiet")) oo->quiet = 1;
        else if (!strcmp(a, "--offload")) oo->offload = 1;
        else if (!strcmp(a, "--vae-tile")) NUM(0, 16384, oo->vae_tile);
        else {
            fprintf(stderr, "onnx2cl-sd serve: unknown option '%s' (serve --help lists them)\n", a);
            return 2;
        }
        if (sp && !(*sp = NEXT())) return 2;
#undef NEXT
#undef NUM
    }
    if (!oo->lora_dir) oo->lora_dir = getenv("ONNX2CL_LORA_DIR");
    sv->lora_dir = oo->lora_dir;
    if (!oo->checkpoint == !oo->models_dir) {
        fprintf(stderr, "onnx2cl-sd serve: give -m CHECKPOINT or --models DIR --hf DIR (serve --help)\n");
        return 2;
    }
    if (sv->taesd) { /* the file is TAESD's decoder: checked before anything is compiled (as the CLI) */
        if (!oo->checkpoint) {
            fprintf(stderr, "onnx2cl-sd serve: --taesd %s: needs -m CHECKPOINT (the engine compiles TAESD for its "
                    "latents)\n", sv->taesd);
            return 2;
        }
        struct sde_options eo = {.arch_dir = oo->arch_dir, .cache_dir = oo->cache_dir, .compiler = oo->compiler,
                                 .weights_dtype = oo->weights_dtype, .quiet = 1};
        struct sdv_taesd_files f;
        char e[2048];
        int rc = sdv_taesd_prepare(&eo, sv->taesd, 0, 0, 0, &f, e, sizeof e);
        if (rc) { /* no such file, not TAESD, a LoRA: a bad argument */
            fprintf(stderr, "onnx2cl-sd serve: %s\n", e);
            return 2;
        }
    }
    if (sv->auth && !strchr(sv->auth, ':')) {
        fprintf(stderr, "onnx2cl-sd serve: --api-auth %s: expected USER:PASS\n", sv->auth);
        return 2;
    }
    if (sv->ckpt_dir) {
        struct stat st;
        if (stat(sv->ckpt_dir, &st) || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "onnx2cl-sd serve: --ckpt-dir %s: not a folder\n", sv->ckpt_dir);
            return 2;
        }
    }
    if (oo->lora_dir && oo->lora_dir[0]) { /* as --ckpt-dir: a typo is refused at start, not at the first tag */
        struct stat st;
        if (stat(oo->lora_dir, &st) || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "onnx2cl-sd serve: --lora-dir %s: not a folder%s\n", oo->lora_dir,
                    getenv("ONNX2CL_LORA_DIR") == oo->lora_dir ? " (from $ONNX2CL_LORA_DIR)" : "");
            return 2;
        }
    }
    /* --listen HOST:PORT (IPv4) */
    struct sockaddr_in addr = {.sin_family = AF_INET};
    {
        const char *colon = strrchr(listen, ':');
        char host[256];
        long long port = -1;
        char *pe = NULL;
        if (colon) {
            errno = 0;
            port = strtoll(colon + 1, &pe, 10);
            if (pe == colon + 1 || *pe || errno || port < 0 || port > 65535) port = -1;
        }
        if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host || port < 0) {
            fprintf(stderr, "onnx2cl-sd serve: --listen %s: expected HOST:PORT, PORT in [0, 65535] (IPv4, e.g. "
                    "127.0.0.1:7860)\n", listen);
            return 2;
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
        if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
        if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
            fprintf(stderr, "onnx2cl-sd serve: --listen %s: %s is not an IPv4 address\n", listen, host);
            return 2;
        }
        addr.sin_port = htons((uint16_t)port);
    }
    /* the listening socket before the models load: an address in use is said at once, not after a
     * minute of loading (handed to libmicrohttpd, which closes it at stop) */
    if (net_init()) {
        fprintf(stderr, "onnx2cl-sd serve: cannot start the network layer: %s\n", sock_error());
        return 1;
    }
    MHD_socket lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd != MHD_INVALID_SOCKET) sock_reuse(lfd);
    if (lfd == MHD_INVALID_SOCKET || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        sock_listen(lfd, 128) != 0) {
        fprintf(stderr, "onnx2cl-sd serve: --listen %s: cannot listen there: %s\n", listen, sock_error());
        if (lfd != MHD_INVALID_SOCKET) sock_close(lfd);
        return 1;
    }
    /* the workers: one per --devices entry, each with the model set opened on its device */
    static char devbuf[4096];
    static const char *devlist[64];
    int n_dev = 0;
    if (devices) {
        snprintf(devbuf, sizeof devbuf, "%s", devices);
        for (char *save = NULL, *t = strtok_r(devbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (n_dev == 64) {
                fprintf(stderr, "onnx2cl-sd serve: --devices %s: more than 64\n", devices);
                return 2;
            }
            devlist[n_dev++] = t;
        }
        if (!n_dev) {
            fprintf(stderr, "onnx2cl-sd serve: --devices %s: no device named\n", devices);
            return 2;
        }
    } else {
        devlist[n_dev++] = NULL;
    }
    sv->n_wk = n_dev;
    sv->wk = calloc((size_t)n_dev, sizeof *sv->wk);
    if (!sv->wk) return 1;
    char err[4096];
    for (int i = 0; i < n_dev; i++) {
        struct sds_open_options o = *oo;
        sv->wk[i].sv = sv;
        sv->wk[i].device = devlist[i];
        if (devlist[i]) o.device = devlist[i];
        fprintf(stderr, "onnx2cl-sd serve: loading %s%s%s\n", oo->checkpoint ? oo->checkpoint : oo->models_dir,
                devlist[i] ? " on device " : "", devlist[i] ? devlist[i] : "");
        int rc = sds_open(&o, &sv->wk[i].sess, err, sizeof err);
        if (rc) {
            fprintf(stderr, "onnx2cl-sd serve: %s\n", err);
            sock_close(lfd);
            for (int k = 0; k < i; k++) sds_close(sv->wk[k].sess);
            free(sv->wk);
            return rc == SDS_EINVAL ? 2 : 1;
        }
    }
    sds_get_info(sv->wk[0].sess, &sv->info);
    if (oo->checkpoint) {
        snprintf(sv->ckpt, sizeof sv->ckpt, "%s", oo->checkpoint);
        /* its title: the name in --ckpt-dir when it lies there, else its base name */
        const char *b = strrchr(sv->info.source, '/');
        if (snprintf(sv->title, sizeof sv->title, "%s", b ? b + 1 : sv->info.source) >= (int)sizeof sv->title)
            sv->title[sizeof sv->title - 1] = 0;
        int n;
        struct entry *e = list_entries(sv->ckpt_dir, 1, &n);
        char rp[PATH_MAX], rq[PATH_MAX];
        for (int i = 0; e && i < n; i++)
            if (o2r_realpath(e[i].path, rp, sizeof rp) && o2r_realpath(oo->checkpoint, rq, sizeof rq) &&
                !strcmp(rp, rq))
                snprintf(sv->title, sizeof sv->title, "%s", e[i].name);
        free(e);
    } else {
        snprintf(sv->title, sizeof sv->title, "%s", oo->models_dir);
    }
    sv->options = cJSON_CreateObject();
    pthread_mutex_init(&sv->mu, NULL);
    pthread_mutex_init(&sv->td_prep_mu, NULL);
    for (int i = 0; i < sv->n_wk; i++) pthread_mutex_init(&sv->wk[i].td_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&sv->cv, &ca);
    pthread_condattr_destroy(&ca);
    stop_setup(); /* SIGINT/SIGTERM to this thread only (stop_wait below) */
    for (int i = 0; i < sv->n_wk; i++) pthread_create(&sv->wk[i].th, NULL, worker_main, &sv->wk[i]);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL,
        NULL, on_request, sv, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)lfd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)maxconn, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)sv->timeout, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, sv, MHD_OPTION_END);
    int status = 0;
    if (!d) {
        sock_close(lfd);
        fprintf(stderr, "onnx2cl-sd serve: cannot listen on %s: %s\n", listen, strerror(errno));
        status = 1;
    } else {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        char ip[64];
        inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
        fprintf(stderr, "onnx2cl-sd serve: listening on http://%s:%u (%s, %dx%d, %d worker%s)%s\n", ip,
                di ? di->port : ntohs(addr.sin_port), sv->title, sv->info.width, sv->info.height, sv->n_wk,
                sv->n_wk > 1 ? "s" : "", sv->auth ? " with --api-auth" : "");
        fprintf(stderr, "onnx2cl-sd serve: %s: stopping\n", stop_wait());
    }
    pthread_mutex_lock(&sv->mu);
    sv->stopping = 1;
    for (int i = 0; i < sv->n_wk; i++)
        if (sv->wk[i].current) {
            sv->wk[i].current->interrupted = 1;
            sv->wk[i].current->stop = 1;
        }
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    for (int i = 0; i < sv->n_wk; i++) pthread_join(sv->wk[i].th, NULL);
    if (d) MHD_stop_daemon(d); /* waits for the connection threads (they answer 503 and return) */
    pthread_mutex_lock(&sv->mu);
    while (sv->head) queue_remove(sv, sv->head);
    pthread_mutex_unlock(&sv->mu);
    for (int i = 0; i < sv->n_wk; i++) {
        sds_close(sv->wk[i].sess);
        free(sv->wk[i].lat);
        if (sv->wk[i].td_loaded) sdv_taesd_close(&sv->wk[i].td);
        if (sv->wk[i].td_ctx) o2r_ctx_free(sv->wk[i].td_ctx);
        pthread_mutex_destroy(&sv->wk[i].td_mu);
    }
    pthread_mutex_destroy(&sv->td_prep_mu);
    free(sv->wk);
    cJSON_Delete(sv->options);
    pthread_cond_destroy(&sv->cv);
    pthread_mutex_destroy(&sv->mu);
    return status;
}
