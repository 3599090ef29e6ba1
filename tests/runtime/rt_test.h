/* rt_test.h — tiny assertion helpers shared by the runtime tests.
 * What: CHECK (records a failure with file:line and continues), CHECK_EQ_INT, test summary.
 * Assumes: single-threaded tests. Guarantees: rt_test_done() returns 1 if any CHECK failed.
 */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <stdio.h>

static int g_failures; /* number of failed CHECKs */
static int g_checks;   /* number of CHECKs evaluated */

#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        g_checks++;                                                                              \
        if (!(cond)) {                                                                           \
            g_failures++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fprintf(stderr, "\n");                                                               \
        }                                                                                        \
    } while (0)

static inline int rt_test_done(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, g_checks, g_failures);
    return g_failures ? 1 : 0;
}

#endif
