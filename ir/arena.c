/* arena.c — the compiler's one allocator, and its fatal-error reporting.
 *
 * Every allocation of a graph comes from a chunked bump arena freed once by ir_graph_free().
 * Out of memory is fatal (the compiler is a command-line tool; nothing is half-written because
 * outputs are only renamed into place at the very end and temporary files are removed here).
 * A user error (ir_fatal_node, ir_fatal) raised while a trap is set (ir_trap_set) is not
 * reported: its message goes to the trap, which longjmps back to its caller (an If branch that
 * does not fit the bound shapes becomes a run-time check, passes/expand/control.c).
 * ir_memtrace() prints resident memory at phase boundaries ($ONNX2CL_MEMTRACE; docs/memory.md).
 */
#include "ir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ir_arena_chunk {
    struct ir_arena_chunk *next; /* previous chunk */
    size_t used, cap;            /* bytes used / available in data[] */
    _Alignas(64) unsigned char data[];
};

struct ir_arena {
    struct ir_arena_chunk *head; /* current chunk */
};

#define ARENA_CHUNK (1u << 20)

/* Optional hook run by every fatal user error just before exit(1) (see ir_set_fatal_hook). */
static void (*fatal_hook)(void);
/* The innermost fatal-error trap (ir_trap_set), NULL when none. */
static struct ir_trap *trap_top;

void ir_trap_set(struct ir_trap *t)
{
    t->where[0] = t->msg[0] = 0;
    t->outer = trap_top;
    trap_top = t;
}

void ir_trap_unset(struct ir_trap *t)
{
    if (trap_top == t) trap_top = t->outer;
}

/* A trapped error: the message goes to the innermost trap, which is unset, and control returns
 * to its setjmp. */
static void trap_jump(const char *where, const char *msg) __attribute__((noreturn));
static void trap_jump(const char *where, const char *msg)
{
    struct ir_trap *t = trap_top;
    trap_top = t->outer;
    snprintf(t->where, sizeof t->where, "%s", where);
    snprintf(t->msg, sizeof t->msg, "%s", msg);
    longjmp(t->jb, 1);
}

void ir_set_fatal_hook(void (*fn)(void))
{
    fatal_hook = fn;
}

static void oom(size_t bytes)
{
    fprintf(stderr, "onnx2cl: out of memory (allocating %zu bytes)\n", bytes);
    if (fatal_hook) fatal_hook();
    exit(1);
}

struct ir_arena *ir_arena_new(void)
{
    struct ir_arena *a = calloc(1, sizeof *a);
    if (!a) oom(sizeof *a);
    return a;
}

void ir_arena_free(struct ir_arena *a)
{
    if (!a) return;
    for (struct ir_arena_chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

static void *arena_alloc(struct ir_arena *a, size_t bytes)
{
    size_t need = (bytes + 63) & ~(size_t)63;
    if (need < bytes) oom(bytes);
    struct ir_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > ARENA_CHUNK ? need : ARENA_CHUNK;
        c = calloc(1, sizeof *c + cap);
        if (!c) oom(bytes);
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += need;
    return p;
}

void *ir_alloc(struct ir_graph *g, size_t bytes)
{
    return arena_alloc(g->arena, bytes ? bytes : 1);
}

char *ir_strndup(struct ir_graph *g, const char *s, size_t n)
{
    char *d = ir_alloc(g, n + 1);
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *ir_strdup(struct ir_graph *g, const char *s)
{
    return ir_strndup(g, s ? s : "", s ? strlen(s) : 0);
}

char *ir_sprintf(struct ir_graph *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = ir_alloc(g, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}

/* ---- fatal errors and temporary files ---- */

#define MAX_TMP 16
static char *tmp_paths[MAX_TMP];

void ir_tmp_register(const char *path)
{
    for (int i = 0; i < MAX_TMP; i++)
        if (!tmp_paths[i]) {
            tmp_paths[i] = strdup(path);
            return;
        }
    IR_ASSERT(!"too many temporary files");
}

/* Removes every registered temporary file (async-signal-safe: unlink only). */
void ir_tmp_remove_all_signal_safe(void)
{
    for (int i = 0; i < MAX_TMP; i++)
        if (tmp_paths[i]) unlink(tmp_paths[i]);
}

void ir_tmp_unregister(const char *path)
{
    for (int i = 0; i < MAX_TMP; i++)
        if (tmp_paths[i] && strcmp(tmp_paths[i], path) == 0) {
            free(tmp_paths[i]);
            tmp_paths[i] = NULL;
        }
}

static void remove_tmps(void)
{
    for (int i = 0; i < MAX_TMP; i++)
        if (tmp_paths[i]) {
            unlink(tmp_paths[i]);
            free(tmp_paths[i]);
            tmp_paths[i] = NULL;
        }
}

/* Writes s to stderr with control bytes escaped (\xNN): names in a model file are untrusted and
 * must not reach the terminal raw. UTF-8 text passes unchanged. */
static void put_escaped(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) fprintf(stderr, "\\x%02x", c);
        else fputc(c, stderr);
    }
}

static int die_status = 1;

static void die_v(const char *prefix, const char *fmt, va_list ap)
{
    char msg[4096];
    vsnprintf(msg, sizeof msg, fmt, ap);
    trap_top = NULL; /* a fuzzer's hook longjmps past every trap's frame */
    fflush(stdout);
    if (prefix) put_escaped(prefix);
    put_escaped(msg);
    fputc('\n', stderr);
    remove_tmps();
    if (fatal_hook) fatal_hook();
    exit(die_status);
}

void ir_usage_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_status = 2;
    die_v("onnx2cl: ", fmt, ap);
    va_end(ap);
    exit(2);
}

void ir_fatal_node(const struct ir_graph *g, const struct ir_node *n, const char *fmt, ...)
{
    char prefix[1024], msg[4096];
    const char *model = g && g->model_path ? g->model_path : "model";
    if (n)
        snprintf(prefix, sizeof prefix, "%s: node '%s' (%s, #%d): ", model,
                 n->name && n->name[0] ? n->name : "<unnamed>",
                 n->op_type ? n->op_type : ir_op_name(n->op), (int)n->onnx_index);
    else
        snprintf(prefix, sizeof prefix, "%s: ", model);
    /* where the prefix's "node ..." part starts (a trap keeps only that) */
    const size_t at = strnlen(prefix, strlen(model) + 2);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Every located error names the opset the node's semantics were taken from. */
    if (n && g && !strstr(msg, "opset")) {
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof msg - l, " (opset %lld)", (long long)g->opset);
    }
    if (trap_top) trap_jump(prefix + at, msg);
    trap_top = NULL;
    fflush(stdout);
    put_escaped(prefix);
    put_escaped(msg);
    fputc('\n', stderr);
    remove_tmps();
    if (fatal_hook) fatal_hook();
    exit(1);
}

void ir_fatal(const struct ir_graph *g, const char *fmt, ...)
{
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s: ", g && g->model_path ? g->model_path : "onnx2cl");
    va_list ap;
    if (trap_top) {
        char msg[2048];
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        trap_jump("", msg);
    }
    va_start(ap, fmt);
    die_v(prefix, fmt, ap);
    va_end(ap);
    exit(1);
}

void ir_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_v("onnx2cl: ", fmt, ap);
    va_end(ap);
    exit(1);
}

void ir_assert_fail(const char *expr, const char *file, int line)
{
    fflush(stdout);
    fprintf(stderr, "onnx2cl: internal error: %s:%d: assertion '%s' failed (please report)\n", file,
            line, expr);
    remove_tmps();
    abort();
}

void ir_memtrace(const char *phase)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("ONNX2CL_MEMTRACE");
        on = e && *e && strcmp(e, "0") != 0;
    }
    if (!on) return;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256], out[256] = "";
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        static const char *keys[] = {"VmHWM:", "VmRSS:", "RssAnon:", "RssFile:"};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            if (strncmp(line, keys[k], strlen(keys[k])) == 0) {
                long kb = atol(line + strlen(keys[k]));
                n += (size_t)snprintf(out + n, sizeof out - n, " %s %.0f MiB", keys[k],
                                      kb / 1024.0);
            }
        if (n >= sizeof out) break;
    }
    fclose(f);
    fprintf(stderr, "onnx2cl: memory after %s:%s\n", phase, out);
}
