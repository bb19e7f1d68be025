/* progress — how far a long run is: the clock of a loop with a known number
 * of steps, and the line that says so,
 *
 *     iteration 10 of 200, 2.1 s elapsed, about 40 s left
 *
 * The rate is measured on this run's steps only: an extended chain counts
 * its steps from the rows it already had ("of N" is the chain's target),
 * but the time those took is not on this run's clock.  Times read in a unit
 * a person takes in at a glance: 2.1 s, 45 s, 3 min 20 s, 2 h 05 min.
 *
 * The clock is read by the caller and passed in as `now`, so that the
 * arithmetic and the text can be checked with made-up times. */
#ifndef GPC_PROGRESS_H
#define GPC_PROGRESS_H

#include <stddef.h>

typedef struct {
    const char *what;  /* the name of a step: "iteration", "refit" */
    long before;       /* steps done before this run started (an extended chain) */
    long total;        /* the target, the steps before this run included */
    int at_most;       /* total is a cap: the run may end sooner (a convergence test) */
    int ended;         /* the run ended before total (it converged): nothing is left */
    double start;      /* the clock when this run started, in seconds */
    double time_limit; /* the run stops after the first step that ends this many
                          seconds after start or later; 0 for no limit */
} gpc_progress;

/* Seconds on a monotonic clock, for start and now. */
double gpc_progress_clock(void);

/* A clock for a run that starts at now with `before` of `total` steps done;
 * no time limit and no cap until the caller sets them. */
void gpc_progress_start(gpc_progress *p, const char *what, long before, long total, double now);

/* The seconds the run is expected to go on for after `done` steps (counted
 * as total is, before included) at time now: until the last step, or with a
 * time limit until the end of the step during which the limit passes,
 * whichever comes first (*at_limit says which: 1 for the limit).  Negative
 * when there is nothing to say: no step of this run has finished yet, every
 * step is done, the run has ended, or the clock makes no sense. */
double gpc_progress_left(const gpc_progress *p, long done, double now, int *at_limit);

/* "iteration 10 of 200, 2.1 s elapsed, about 40 s left" into buf (size
 * bytes, cut short if smaller), and buf back.  With a cap, "of at most 50"
 * and "at most about 40 s left"; with a time limit that comes first,
 * "stopping at the time limit in about 8.0 s" (or "stopping at the time
 * limit" once it has passed); no estimate when gpc_progress_left has none. */
char *gpc_progress_format(const gpc_progress *p, long done, double now, char *buf, size_t size);

/* A duration in a readable unit: under 10 s to a tenth ("2.1 s"), under a
 * minute to the second ("45 s"), under an hour in minutes and seconds
 * ("3 min 20 s"), then in hours and minutes ("2 h 05 min").  Negative or
 * not finite counts as 0. */
char *gpc_progress_duration(double seconds, char *buf, size_t size);

#endif
