/* alloc.c — the runtime's single host allocation wrapper and its fault-injection hooks.
 *
 * What: o2r_malloc/o2r_calloc/o2r_free/o2r_strdup, plus o2r_fault_cl() consulted by guarded
 * OpenCL creation calls.
 * Assumes: single-threaded use of the counters (the runtime is not called concurrently from
 * several threads in the tests that use the hooks).
 * Guarantees: with $ONNX2CL_FAIL_ALLOC=N the Nth allocation since the last o2r_fault_reset()
 * (or process start) returns NULL; with $ONNX2CL_FAIL_CL=NAME:N the Nth call of the CL function
 * NAME since the last reset reports a failure (CL_BUILD_PROGRAM_FAILURE for clBuildProgram,
 * CL_OUT_OF_RESOURCES otherwise). Without the variables these are plain malloc/free.
 */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define O2R_FAULT_MAX_NAMES 32 /* distinct CL function names counted */

static unsigned long g_alloc_count;                   /* allocations since the last reset */
static char g_cl_names[O2R_FAULT_MAX_NAMES][48];      /* CL function names seen */
static unsigned long g_cl_counts[O2R_FAULT_MAX_NAMES]; /* calls of each name since the reset */
static int g_cl_n;                                    /* used entries of g_cl_names */

void o2r_fault_reset(void)
{
    g_alloc_count = 0;
    g_cl_n = 0;
}

/* True if this allocation must fail ($ONNX2CL_FAIL_ALLOC). */
static int alloc_should_fail(void)
{
    g_alloc_count++;
    const char *s = getenv("ONNX2CL_FAIL_ALLOC");
    if (!s || !*s)
        return 0;
    unsigned long n = strtoul(s, NULL, 10);
    return n != 0 && n == g_alloc_count;
}

void *o2r_malloc(size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *o2r_calloc(size_t count, size_t size)
{
    if (alloc_should_fail())
        return NULL;
    if (count == 0 || size == 0)
        return calloc(1, 1);
    return calloc(count, size);
}

void o2r_free(void *p)
{
    free(p);
}

char *o2r_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = o2r_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

cl_int o2r_fault_cl(const char *fn)
{
    int i;
    for (i = 0; i < g_cl_n; i++)
        if (strcmp(g_cl_names[i], fn) == 0)
            break;
    if (i == g_cl_n) {
        if (g_cl_n == O2R_FAULT_MAX_NAMES)
            return 0;
        snprintf(g_cl_names[i], sizeof g_cl_names[i], "%s", fn);
        g_cl_counts[i] = 0;
        g_cl_n++;
    }
    g_cl_counts[i]++;
    const char *s = getenv("ONNX2CL_FAIL_CL");
    if (!s || !*s)
        return 0;
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) != strlen(fn) || strncmp(s, fn, strlen(fn)) != 0)
        return 0;
    unsigned long n = strtoul(colon + 1, NULL, 10);
    if (n == 0 || n != g_cl_counts[i])
        return 0;
    return strcmp(fn, "clBuildProgram") == 0 ? CL_BUILD_PROGRAM_FAILURE : CL_OUT_OF_RESOURCES;
}
