/* The progress clock with made-up times: the durations' units and rounding,
 * the estimate of the time left (worked by hand in the comments), extended
 * chains measured on their own steps, time limits, caps, and the cases with
 * nothing to estimate. */
#include <math.h>
#include <string.h>

#include "base/progress.h"
#include "tap.h"

static void text_is(const char *got, const char *want, const char *name)
{
    if (!TEST_OK(strcmp(got, want) == 0, "%s", name))
        printf("#   got  '%s'\n#   want '%s'\n", got, want);
}

static void duration_is(double seconds, const char *want)
{
    char buf[64], name[96];
    snprintf(name, sizeof name, "%.17g s reads '%s'", seconds, want);
    text_is(gpc_progress_duration(seconds, buf, sizeof buf), want, name);
}

static void durations(void)
{
    duration_is(0.0, "0.0 s");
    duration_is(2.14, "2.1 s");
    duration_is(9.94, "9.9 s");
    duration_is(9.96, "10 s");          /* 10.0 to a tenth: whole seconds from there */
    duration_is(45.4, "45 s");
    duration_is(59.4, "59 s");
    duration_is(59.6, "1 min 00 s");    /* rounds to 60 s: a minute, not "60 s" */
    duration_is(200.0, "3 min 20 s");
    duration_is(65.0, "1 min 05 s");
    duration_is(3599.4, "59 min 59 s");
    duration_is(3599.6, "1 h 00 min");  /* rounds to 3600 s */
    duration_is(7500.0, "2 h 05 min");  /* 125 min */
    duration_is(7529.0, "2 h 05 min");  /* 125.48 min */
    duration_is(7531.0, "2 h 06 min");  /* 125.52 min */
    duration_is(100 * 3600.0, "100 h 00 min");
    duration_is(-3.0, "0.0 s");
    duration_is(NAN, "0.0 s");
    duration_is(INFINITY, "0.0 s");
}

static void fresh_run(void)
{
    char buf[128];
    gpc_progress p;
    gpc_progress_start(&p, "iteration", 0, 200, 1000.0);
    /* 10 steps in 2.1 s: 0.21 s each, 190 to go, 39.9 s */
    text_is(gpc_progress_format(&p, 10, 1002.1, buf, sizeof buf),
            "iteration 10 of 200, 2.1 s elapsed, about 40 s left", "10 of 200 after 2.1 s");
    int at_limit;
    TEST_CLOSE(gpc_progress_left(&p, 10, 1002.1, &at_limit), 39.9, 1e-12, 0,
               "left after 10 of 200 in 2.1 s: 190 x 0.21 s");
    TEST_OK(!at_limit, "no time limit: the last step ends the run");
    /* 1 step in 40 s: 199 to go, 7960 s = 132.67 min */
    text_is(gpc_progress_format(&p, 1, 1040.0, buf, sizeof buf),
            "iteration 1 of 200, 40 s elapsed, about 2 h 13 min left", "1 of 200 after 40 s");
    text_is(gpc_progress_format(&p, 0, 1000.5, buf, sizeof buf),
            "iteration 0 of 200, 0.5 s elapsed", "no estimate before the first step");
    text_is(gpc_progress_format(&p, 200, 1042.0, buf, sizeof buf),
            "iteration 200 of 200, 42 s elapsed", "no estimate with every step done");
    text_is(gpc_progress_format(&p, 5, 999.0, buf, sizeof buf),
            "iteration 5 of 200, 0.0 s elapsed", "no estimate from a clock that went back");
    text_is(gpc_progress_format(&p, 5, NAN, buf, sizeof buf),
            "iteration 5 of 200, 0.0 s elapsed", "no estimate from a clock that is not a number");
    TEST_OK(gpc_progress_left(&p, 0, 1001.0, &at_limit) < 0, "left: none before the first step");
}

static void extended_chain(void)
{
    char buf[128];
    gpc_progress p;
    /* 200 rows already, 200 more asked: "of 400", and the rate from the 10
     * rows of this run (0.5 s each, 190 to go: 95 s), not from 210 rows
     * (which would say 4.5 s) */
    gpc_progress_start(&p, "iteration", 200, 400, 0.0);
    text_is(gpc_progress_format(&p, 210, 5.0, buf, sizeof buf),
            "iteration 210 of 400, 5.0 s elapsed, about 1 min 35 s left",
            "extended chain: 210 of 400, rate from this run's 10 steps");
    text_is(gpc_progress_format(&p, 200, 0.3, buf, sizeof buf),
            "iteration 200 of 400, 0.3 s elapsed", "extended chain: no estimate before its first step");
}

static void time_limit(void)
{
    char buf[128];
    int at_limit;
    gpc_progress p;
    gpc_progress_start(&p, "iteration", 0, 200, 0.0);
    p.time_limit = 100.0;
    /* 8 steps in 2 s: 0.25 s each, 192 to go, 48 s: before the limit (98 s away) */
    text_is(gpc_progress_format(&p, 8, 2.0, buf, sizeof buf),
            "iteration 8 of 200, 2.0 s elapsed, about 48 s left", "a limit after the end");
    p.time_limit = 30.0;
    /* the limit is 28 s away, the end 48 s: the run stops after the step
     * that ends at 28 s exactly (112 more) */
    text_is(gpc_progress_format(&p, 8, 2.0, buf, sizeof buf),
            "iteration 8 of 200, 2.0 s elapsed, stopping at the time limit in about 28 s",
            "a limit before the end");
    TEST_CLOSE(gpc_progress_left(&p, 8, 2.0, &at_limit), 28.0, 1e-12, 0, "left at a limit: 28 s");
    TEST_OK(at_limit, "the limit comes first");
    /* limit 30.1 s: 28.1 s away, 112.4 steps: the run ends with the 113th, at 28.25 s */
    p.time_limit = 30.1;
    TEST_CLOSE(gpc_progress_left(&p, 8, 2.0, &at_limit), 28.25, 1e-12, 0,
               "left at a limit: to the end of the step during which it passes");
    /* the limit equal to the expected end: the run ends by finishing */
    p.time_limit = 50.0;
    TEST_CLOSE(gpc_progress_left(&p, 8, 2.0, &at_limit), 48.0, 1e-12, 0, "limit at the end");
    TEST_OK(!at_limit, "a limit that coincides with the end: finished, not stopped");
    p.time_limit = 30.0;
    text_is(gpc_progress_format(&p, 100, 31.0, buf, sizeof buf),
            "iteration 100 of 200, 31 s elapsed, stopping at the time limit",
            "the limit has passed: this step is the last");
    text_is(gpc_progress_format(&p, 200, 31.0, buf, sizeof buf),
            "iteration 200 of 200, 31 s elapsed", "every step done at the limit: nothing to say");
}

static void capped(void)
{
    char buf[128];
    gpc_progress p;
    gpc_progress_start(&p, "importance update", 0, 50, 10.0);
    p.at_most = 1;
    /* 5 updates in 10 s: at most 45 more, 90 s */
    text_is(gpc_progress_format(&p, 5, 20.0, buf, sizeof buf),
            "importance update 5 of at most 50, 10 s elapsed, at most about 1 min 30 s left",
            "a cap says 'at most'");
    p.ended = 1;
    text_is(gpc_progress_format(&p, 7, 24.0, buf, sizeof buf),
            "importance update 7 of at most 50, 14 s elapsed", "no estimate once converged");
}

static void short_buffer(void)
{
    char buf[16];
    gpc_progress p;
    gpc_progress_start(&p, "iteration", 0, 200, 0.0);
    memset(buf, 'x', sizeof buf);
    gpc_progress_format(&p, 10, 2.1, buf, 10);
    text_is(buf, "iteration", "cut short to the buffer, terminated");
    TEST_OK(buf[10] == 'x', "nothing written past the buffer");
}

static void clock_runs(void)
{
    double a = gpc_progress_clock(), b = gpc_progress_clock();
    TEST_OK(isfinite(a) && a > 0 && b >= a, "the clock is finite and does not go back");
}

int main(void)
{
    durations();
    fresh_run();
    extended_chain();
    time_limit();
    capped();
    short_buffer();
    clock_runs();
    return tap_done();
}
