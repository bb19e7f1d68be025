#include "base/progress.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

double gpc_progress_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void gpc_progress_start(gpc_progress *p, const char *what, long before, long total, double now)
{
    p->what = what;
    p->before = before;
    p->total = total;
    p->at_most = 0;
    p->ended = 0;
    p->start = now;
    p->time_limit = 0.0;
}

double gpc_progress_left(const gpc_progress *p, long done, double now, int *at_limit)
{
    long run = done - p->before, remaining = p->total - done;
    double elapsed = now - p->start;
    *at_limit = 0;
    if (p->ended || run <= 0 || remaining <= 0 || !isfinite(elapsed) || elapsed < 0)
        return -1.0;
    double per_step = elapsed / (double)run, left = per_step * (double)remaining;
    if (!(p->time_limit > 0) || left <= p->time_limit - elapsed)
        return left;
    /* The limit comes first.  It is checked after each step, so the run
     * ends with the first step that ends at or after it: k steps on. */
    *at_limit = 1;
    double until = p->time_limit - elapsed;
    return until <= 0 ? 0.0 : ceil(until / per_step) * per_step;
}

char *gpc_progress_duration(double seconds, char *buf, size_t size)
{
    if (!isfinite(seconds) || seconds < 0)
        seconds = 0.0;
    /* each branch tests the value rounded as it would print, so that 59.7 s
     * reads "1 min 00 s", never "60 s" */
    double tenths = round(seconds * 10.0) / 10.0, whole = round(seconds);
    if (tenths < 10.0)
        snprintf(buf, size, "%.1f s", tenths);
    else if (whole < 60.0)
        snprintf(buf, size, "%.0f s", whole);
    else if (whole < 3600.0)
        snprintf(buf, size, "%.0f min %02.0f s", floor(whole / 60.0), fmod(whole, 60.0));
    else {
        double minutes = round(seconds / 60.0);
        snprintf(buf, size, "%.0f h %02.0f min", floor(minutes / 60.0), fmod(minutes, 60.0));
    }
    return buf;
}

char *gpc_progress_format(const gpc_progress *p, long done, double now, char *buf, size_t size)
{
    char elapsed[32], left[32];
    int at_limit;
    double t = gpc_progress_left(p, done, now, &at_limit);
    gpc_progress_duration(now - p->start, elapsed, sizeof elapsed);
    int len = snprintf(buf, size, "%s %ld of %s%ld, %s elapsed", p->what, done,
                       p->at_most ? "at most " : "", p->total, elapsed);
    if (t < 0 || len < 0 || (size_t)len >= size)
        return buf;
    gpc_progress_duration(t, left, sizeof left);
    if (!at_limit)
        snprintf(buf + len, size - (size_t)len, ", %sabout %s left", p->at_most ? "at most " : "",
                 left);
    else if (t > 0)
        snprintf(buf + len, size - (size_t)len, ", stopping at the time limit in about %s", left);
    else
        snprintf(buf + len, size - (size_t)len, ", stopping at the time limit");
    return buf;
}
