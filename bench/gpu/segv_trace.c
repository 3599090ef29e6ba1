/* bench/gpu/segv_trace.c — LD_PRELOAD helper for bench/gpu/run.sh (device runs only, never
 * linked into onnx2cl): on SIGSEGV/SIGBUS/SIGABRT/SIGFPE prints the faulting address and the
 * call stack, one "segv-frame: MODULE +0xOFFSET SYMBOL" line per frame (OFFSET relative to the
 * module's load base, ready for `addr2line -f -e MODULE OFFSET`), then re-raises the signal so
 * the exit status stays 128+N. The device image may have no gdb; this needs only glibc.
 *   gcc -shared -fPIC -O1 -o segv_trace.so segv_trace.c -ldl
 *   LD_PRELOAD=$PWD/segv_trace.so ./model ...                                            */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    void *frames[64];
    int n = backtrace(frames, 64);
    char line[1024];
    int len = snprintf(line, sizeof line, "segv-trace: signal %d (%s), fault address %p, %d frames\n",
                       sig, strsignal(sig), si ? si->si_addr : NULL, n);
    if (write(2, line, (size_t)len) < 0) {}
    for (int i = 0; i < n; i++) {
        Dl_info di;
        memset(&di, 0, sizeof di);
        if (dladdr(frames[i], &di) && di.dli_fname)
            len = snprintf(line, sizeof line, "segv-frame: %s +0x%lx %s\n", di.dli_fname,
                           (unsigned long)((char *)frames[i] - (char *)di.dli_fbase),
                           di.dli_sname ? di.dli_sname : "?");
        else
            len = snprintf(line, sizeof line, "segv-frame: ? %p ?\n", frames[i]);
        if (write(2, line, (size_t)len) < 0) {}
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void segv_trace_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
}
