/* tap.h — a tiny TAP producer for the C unit tests.
 *
 *   TEST_CLOSE(got, want, rtol, atol, "name %d", i);  passes if
 *       |got - want| <= atol + rtol * |want|
 *   TEST_OK(cond, "name");
 *   return tap_done();   prints the plan, returns nonzero if anything failed
 *
 * Each check prints "ok N - name" or "not ok N - name" plus the values. */
#ifndef GPC_TAP_H
#define GPC_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

static void tap_line(int pass, const char *fmt, va_list ap)
{
    printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
    vprintf(fmt, ap);
    putchar('\n');
    if (!pass)
        tap_failed++;
}

__attribute__((format(printf, 2, 3))) static int TEST_OK(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_line(cond, fmt, ap);
    va_end(ap);
    return cond;
}

__attribute__((format(printf, 5, 6), unused)) static int
TEST_CLOSE(double got, double want, double rtol, double atol, const char *fmt, ...)
{
    int pass = isfinite(got) && fabs(got - want) <= atol + rtol * fabs(want);
    va_list ap;
    va_start(ap, fmt);
    tap_line(pass, fmt, ap);
    va_end(ap);
    if (!pass)
        printf("#   got %.17g, want %.17g (diff %.3g)\n", got, want, got - want);
    return pass;
}

static int tap_done(void)
{
    printf("1..%d\n", tap_count);
    fflush(stdout);
    return tap_failed ? 1 : 0;
}

#endif
