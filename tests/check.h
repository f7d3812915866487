/* check.h: the assertion of the C test programs. CHECK(cond, fmt, ...) counts a failure in
 * `failures` and prints where and why; the program exits nonzero when failures > 0. (test_layouts
 * caps its output and test_recipes prints its seed: they keep their own.) */
#ifndef QC_TESTS_CHECK_H
#define QC_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                                            \
    do {                                                                                                            \
        if (!(cond)) {                                                                                              \
            failures++;                                                                                             \
            printf("FAIL %s:%d (%s): ", __FILE__, __LINE__, #cond);                                                 \
            printf(__VA_ARGS__);                                                                                    \
            printf("\n");                                                                                           \
        }                                                                                                           \
    } while (0)

#endif
