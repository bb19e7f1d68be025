/* optimize — maximise an approximate log evidence over log hyperparameters,
 * optionally plus independent Gaussian log priors (MAP), by BFGS on the
 * analytic gradient (a Wolfe line search with cubic interpolation), with
 * random restarts.  A hyperparameter that drifts into a region where the
 * objective no longer depends on it (an ARD weight of an unused input going
 * to 0) is recognised, moved to where what it could still give is below
 * flat_gain, reported and kept there, rather than followed for ever. */
#ifndef GPC_OPTIMIZE_H
#define GPC_OPTIMIZE_H

#include <stddef.h>

#include "kernels/kernel.h"

/* The objective: log evidence at theta and its gradient (both written);
 * returns GPC_OK or an error status (message set).  */
typedef int (*gpc_objective)(void *ctx, const double *theta, double *value, double *grad);

typedef struct {
    int use_prior;          /* add the log prior: gpc_log_prior (prior.h) */
    double prior_mean, prior_sd;
    const gpc_kernel *kernel; /* whose weights on the simplex get theirs (NULL: none) */
    int max_iter;           /* BFGS iterations per start */
    double gtol;            /* converged when max |gradient| < gtol */
    double flat_gain;       /* a direction is flat when all it can still give is below
                             * this (0: never) */
    int restarts;           /* further starts from perturbed points */
    double restart_sd;      /* sd of the perturbation of the first start */
    unsigned long seed;     /* for the perturbations */
    const char *label;      /* "log evidence" or similar, for progress lines */
    const unsigned char *fixed; /* if not NULL, fixed[j] != 0 keeps theta[j] as given */
    size_t lbfgs_pairs;     /* the inverse Hessian as this many last steps (limited-memory
                             * BFGS); 0: whole up to 1000 coordinates, 20 pairs beyond */
    size_t inducing;        /* the last this many coordinates are an inducing method's
                             * inputs, not hyperparameters: no prior, no restart moves them */
    size_t inducing_dim;    /* their columns (rows of Z, for names) */
} gpc_optimize_opts;

/* Defaults: no prior, 500 iterations, gtol 1e-5, flat_gain 1e-7, no restarts,
 * restart_sd 1, seed 1. */
void gpc_optimize_defaults(gpc_optimize_opts *o);

/* Log of the prior density at theta (0 without a prior) over all but the
 * last o->inducing of its p coordinates; adds its gradient to grad if not
 * NULL. */
double gpc_optimize_log_prior(const gpc_optimize_opts *o, size_t p, const double *theta,
                              double *grad);

/* Why a start ended. */
typedef enum {
    GPC_STOP_CONVERGED = 1, /* the gradient test was met */
    GPC_STOP_ITERATIONS,    /* max_iter iterations were used up */
    GPC_STOP_NO_ASCENT,     /* no step along the search direction raised the objective,
                             * from a fresh inverse Hessian too: flat or not smooth at its
                             * computed precision (a rounding floor, as in nested EP at
                             * large signal variances) */
    GPC_STOP_WALL           /* pressed against points that cannot be evaluated, gaining
                             * next to nothing or nothing */
} gpc_stop;

typedef struct {
    double value;       /* objective at theta: log evidence (+ log prior) */
    double evidence;    /* log evidence at theta */
    int iterations;     /* BFGS iterations over all starts */
    int evaluations;
    int converged;      /* the best start met the gradient test (flat directions kept
                         * aside: their gradients are below gtol too) */
    gpc_stop stop;      /* why the best start ended */
    double grad_norm;   /* max |gradient| of the objective at theta */
    int flat;           /* hyperparameters found flat at theta (named on standard error) */
} gpc_optimize_result;

/* Maximise from theta (in/out: start, then the best point found) over the
 * hyperparameters that are not fixed (the prior, if any, counts only those).  Progress
 * and the flat directions found go to standard error through gpc_info.  Fails only when no start could
 * be evaluated at all. */
int gpc_optimize(gpc_objective fn, void *ctx, size_t p, double *theta,
                 const gpc_optimize_opts *o, gpc_optimize_result *res);

#endif
