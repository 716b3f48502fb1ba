/* check.h - the smallest test harness that can fail: CHECK records a
 * failure with its location and lets the test go on; each test function
 * passes when none of its checks failed. main() prints the closing line
 * "core: N passed, M failed" and exits non-zero on any failure. */
#ifndef TSUBU_CHECK_H
#define TSUBU_CHECK_H

#include <stdio.h>

extern int check_failures; /* failures in the running test */

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            check_failures++;                                                       \
            fprintf(stderr, "  FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                           \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                  \
    do {                                                                                       \
        double check_a_ = (a), check_b_ = (b);                                                 \
        if (!(check_a_ - check_b_ <= (tol) && check_b_ - check_a_ <= (tol))) {                 \
            check_failures++;                                                                  \
            fprintf(stderr, "  FAILED %s:%d: %s = %.9g, expected %.9g (tol %g)\n", __FILE__,  \
                    __LINE__, #a, check_a_, check_b_, (double)(tol));                          \
        }                                                                                      \
    } while (0)

/* Each test file exposes its tests through one of these lists. */
typedef struct test_case {
    const char *name;
    void (*run)(void);
} test_case;

#endif
