/* The tests' CHECK: one definition for the test programs that are not cmocka tests (the GPU,
 * Vulkan and MPI tests, which run where cmocka may be missing).
 *
 *   CHECK(cond, fmt, ...)   counts a pass when cond holds; otherwise counts a failure and prints
 *                           "FAIL file:line: cond: " and the printf-style message, one line
 *
 * g_pass and g_fail count the program's checks (main ends with a summary line from them and
 * exits nonzero when g_fail is). g_check_printed counts the failures toward g_check_limit:
 * beyond it only the counting goes on (a caller that prints more about a failure does so while
 * g_check_printed <= g_check_limit; a test may reset it to let a later part's failures print).
 * Failures go to g_check_out (NULL: stdout), each after g_check_prefix (the MPI tests: their
 * rank). Header-only, for one translation unit per program. */
#ifndef TALLY_TESTS_SUPPORT_CHECK_H
#define TALLY_TESTS_SUPPORT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

#if defined(__GNUC__)
#define CHECK_UNUSED_ __attribute__((unused))
#define CHECK_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define CHECK_UNUSED_
#define CHECK_PRINTF_(f, a)
#endif

static int g_pass CHECK_UNUSED_, g_fail CHECK_UNUSED_;
static int g_check_printed CHECK_UNUSED_;
static int g_check_limit CHECK_UNUSED_ = 100;
static FILE *g_check_out CHECK_UNUSED_;
static char g_check_prefix[64] CHECK_UNUSED_;

static void check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
    CHECK_PRINTF_(4, 5) CHECK_UNUSED_;
static void check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
{
    g_fail++;
    if (g_check_printed++ >= g_check_limit) return;
    FILE *out = g_check_out ? g_check_out : stdout;
    fprintf(out, "%sFAIL %s:%d: %s: ", g_check_prefix, file, line, expr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
    fflush(out);
}

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (cond) g_pass++;                                                                    \
        else check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__);                             \
    } while (0)

#endif
