#include "optimize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "alloc.h"
#include "err.h"
#include "evidence.h"
#include "prior.h"

void gpc_optimize_defaults(gpc_optimize_opts *o)
{
    memset(o, 0, sizeof *o);
    o->prior_mean = -3.0;
    o->prior_sd = 3.0;
    o->max_iter = 500;
    o->gtol = 1e-5;
    o->restart_sd = 1.0;
    o->seed = 1;
    o->label = "log evidence";
}

double gpc_optimize_log_prior(const gpc_optimize_opts *o, size_t p, const double *theta,
                              double *grad)
{
    if (!o->use_prior)
        return 0.0;
    return gpc_log_prior(o->kernel, p, theta, o->prior_mean, o->prior_sd, grad);
}

/* GSL minimises; we hand it minus the objective.  GSL asks for f, df and fdf
 * separately, often at the same point, so the last evaluation is cached. */
typedef struct {
    gpc_objective fn;
    void *ctx;
    const gpc_optimize_opts *o;
    size_t p;
    double *theta, *grad; /* last point evaluated and its gradient */
    double value, evidence;
    int valid, status, evaluations;
} problem;

static void evaluate(problem *pb, const gsl_vector *x)
{
    if (pb->valid && memcmp(pb->theta, x->data, pb->p * sizeof(double)) == 0)
        return;
    memcpy(pb->theta, x->data, pb->p * sizeof(double));
    pb->evaluations++;
    pb->status = pb->fn(pb->ctx, pb->theta, &pb->evidence, pb->grad);
    pb->valid = 1;
    if (pb->status != GPC_OK) {
        pb->value = GSL_NAN;
        return;
    }
    pb->value = pb->evidence + gpc_optimize_log_prior(pb->o, pb->p, pb->theta, pb->grad);
}

static double min_f(const gsl_vector *x, void *params)
{
    problem *pb = params;
    evaluate(pb, x);
    return pb->status == GPC_OK ? -pb->value : GSL_POSINF;
}

static void min_df(const gsl_vector *x, void *params, gsl_vector *g)
{
    problem *pb = params;
    evaluate(pb, x);
    for (size_t j = 0; j < pb->p; j++)
        gsl_vector_set(g, j, pb->status == GPC_OK ? -pb->grad[j] : 0.0);
}

static void min_fdf(const gsl_vector *x, void *params, double *f, gsl_vector *g)
{
    *f = min_f(x, params);
    min_df(x, params, g);
}

static double max_abs(const gsl_vector *g)
{
    double m = 0.0;
    for (size_t j = 0; j < g->size; j++)
        m = fmax(m, fabs(gsl_vector_get(g, j)));
    return m;
}

#define MAX_STALLED 3

/* One BFGS run from x; on return x is the final point.  Returns 1 if the
 * gradient test was met. */
static int run_bfgs(problem *pb, gsl_vector *x, int start, int *iterations)
{
    gsl_multimin_function_fdf fdf = {min_f, min_df, min_fdf, pb->p, pb};
    gsl_multimin_fdfminimizer *m =
        gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, pb->p);
    int converged = 0;
    if (gsl_multimin_fdfminimizer_set(m, &fdf, x, 0.1, 0.1) != GSL_SUCCESS ||
        !isfinite(m->f)) {
        gsl_multimin_fdfminimizer_free(m);
        return 0;
    }
    double last = m->f;
    int stalled = 0;
    for (int it = 1; it <= pb->o->max_iter; it++) {
        int st = gsl_multimin_fdfminimizer_iterate(m);
        (*iterations)++;
        double gn = max_abs(m->gradient);
        gpc_info(it % 10 == 0 ? 1 : 2, "start %d, iteration %d: %s %.10g, max |gradient| %.3g",
                 start, it, pb->o->use_prior ? "log posterior" : pb->o->label, -m->f, gn);
        if (gn < pb->o->gtol) {
            converged = 1;
            break;
        }
        if (st != GSL_SUCCESS) /* no further progress possible along the line */
            break;
        /* an iteration that gains nothing, e.g. because every trial point of
         * its line search fails to evaluate: a few in a row end the run
         * rather than repeat the same failing trials up to max_iter */
        stalled = m->f < last ? 0 : stalled + 1;
        last = m->f;
        if (stalled == MAX_STALLED)
            break;
    }
    gsl_vector_memcpy(x, m->x);
    gsl_multimin_fdfminimizer_free(m);
    return converged;
}

/* The objective restricted to the hyperparameters that are not fixed: the
 * others keep their values in full, and their gradient entries are dropped. */
typedef struct {
    gpc_objective fn;
    void *ctx;
    size_t p, q;
    const size_t *free; /* q indices into the full vector */
    double *full, *grad;
} subset;

static int subset_eval(void *ctx, const double *t, double *value, double *grad)
{
    subset *s = ctx;
    for (size_t j = 0; j < s->q; j++)
        s->full[s->free[j]] = t[j];
    int st = s->fn(s->ctx, s->full, value, grad ? s->grad : NULL);
    if (st == GPC_OK && grad)
        for (size_t j = 0; j < s->q; j++)
            grad[j] = s->grad[s->free[j]];
    return st;
}

static int optimize_subset(gpc_objective fn, void *ctx, size_t p, double *theta,
                           const gpc_optimize_opts *o, gpc_optimize_result *res)
{
    size_t *free_idx = gpc_malloc(p * sizeof *free_idx), q = 0;
    for (size_t j = 0; j < p; j++)
        if (!o->fixed[j])
            free_idx[q++] = j;
    if (q == 0) { /* nothing to move: the objective at theta is the answer */
        free(free_idx);
        memset(res, 0, sizeof *res);
        double *g = gpc_malloc(p * sizeof *g);
        int st = fn(ctx, theta, &res->evidence, g);
        free(g);
        res->value = res->evidence;
        res->converged = 1;
        res->evaluations = 1;
        return st;
    }
    subset s = {fn, ctx, p, q, free_idx, gpc_malloc(p * sizeof(double)), gpc_malloc(p * sizeof(double))};
    memcpy(s.full, theta, p * sizeof(double));
    double *t = gpc_malloc((q ? q : 1) * sizeof *t);
    for (size_t j = 0; j < q; j++)
        t[j] = theta[free_idx[j]];
    gpc_optimize_opts oq = *o;
    oq.fixed = NULL;
    int st = gpc_optimize(subset_eval, &s, q, t, &oq, res);
    for (size_t j = 0; j < q && st == GPC_OK; j++)
        theta[free_idx[j]] = t[j];
    free(t);
    free(s.full);
    free(s.grad);
    free(free_idx);
    return st;
}

int gpc_optimize(gpc_objective fn, void *ctx, size_t p, double *theta,
                 const gpc_optimize_opts *o, gpc_optimize_result *res)
{
    if (o->fixed)
        return optimize_subset(fn, ctx, p, theta, o, res);
    problem pb = {fn, ctx, o, p, gpc_malloc(p * sizeof(double)), gpc_malloc(p * sizeof(double)),
                  0, 0, 0, GPC_OK, 0};
    gsl_vector *x = gpc_vector_alloc(p), *best = gpc_vector_alloc(p), *g = gpc_vector_alloc(p);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, o->seed);
    double best_value = -HUGE_VAL;
    int found = 0, last_status = GPC_OK;
    memset(res, 0, sizeof *res);
    for (int s = 0; s <= o->restarts; s++) {
        for (size_t j = 0; j < p; j++)
            gsl_vector_set(x, j, theta[j] + (s ? gsl_ran_gaussian(rng, o->restart_sd) : 0.0));
        int conv = run_bfgs(&pb, x, s + 1, &res->iterations);
        evaluate(&pb, x);
        if (pb.status != GPC_OK) {
            last_status = pb.status;
            gpc_info(1, "start %d failed: %s", s + 1, gpc_errmsg());
            continue;
        }
        min_df(x, &pb, g);
        gpc_info(1, "start %d: %s %.10g after %d evaluations%s", s + 1,
                 o->use_prior ? "log posterior" : o->label, pb.value, pb.evaluations,
                 conv ? "" : " (gradient test not met)");
        if (pb.value > best_value) {
            best_value = pb.value;
            gsl_vector_memcpy(best, x);
            res->value = pb.value;
            res->evidence = pb.evidence;
            res->converged = conv;
            res->grad_norm = max_abs(g);
            found = 1;
        }
    }
    res->evaluations = pb.evaluations;
    if (found)
        memcpy(theta, best->data, p * sizeof(double));
    free(pb.theta);
    free(pb.grad);
    gsl_vector_free(x);
    gsl_vector_free(best);
    gsl_vector_free(g);
    gsl_rng_free(rng);
    if (!found)
        return last_status != GPC_OK ? last_status : gpc_fail(GPC_ENUM, "optimisation failed");
    return GPC_OK;
}
