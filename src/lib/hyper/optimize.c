#include "hyper/optimize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/progress.h"
#include "hyper/evidence.h"
#include "hyper/prior.h"

void gpc_optimize_defaults(gpc_optimize_opts *o)
{
    memset(o, 0, sizeof *o);
    o->prior_mean = -3.0;
    o->prior_sd = 3.0;
    o->max_iter = 500;
    o->gtol = 1e-5;
    o->flat_gain = 1e-7;
    o->restart_sd = 1.0;
    o->seed = 1;
    o->label = "log evidence";
}

double gpc_optimize_log_prior(const gpc_optimize_opts *o, size_t p, const double *theta,
                              double *grad)
{
    if (!o->use_prior)
        return 0.0;
    return gpc_log_prior(o->kernel, p - o->inducing, theta, o->prior_mean, o->prior_sd, grad);
}

/* ---- the problem and its points ------------------------------------------------ */

/* A point with the objective (maximised) and its gradient there. */
typedef struct {
    double *x, *g;
    double value, evidence;
    int ok; /* evaluated, finite */
} point;

typedef struct {
    gpc_objective fn;
    void *ctx;
    const gpc_optimize_opts *o;
    size_t p;
    const size_t *index; /* each coordinate's index in the caller's full vector, for names */
    /* with index: the full vector as the last evaluation set it, its length,
     * and room for the prior's gradient in it (the prior is over the full
     * vector: a Dirichlet prior ties the simplex weights together) */
    const double *full;
    size_t p_full;
    double *g_full;
    int evaluations;
    int status;          /* of the last failed evaluation */
} problem;

static point point_alloc(size_t p)
{
    point pt = {gpc_calloc(p, sizeof(double)), gpc_calloc(p, sizeof(double)), -HUGE_VAL,
                -HUGE_VAL, 0};
    return pt;
}

static void point_free(point *pt)
{
    free(pt->x);
    free(pt->g);
}

static void point_copy(point *to, const point *from, size_t p)
{
    memcpy(to->x, from->x, p * sizeof(double));
    memcpy(to->g, from->g, p * sizeof(double));
    to->value = from->value;
    to->evidence = from->evidence;
    to->ok = from->ok;
}

static void point_swap(point *a, point *b)
{
    point t = *a;
    *a = *b;
    *b = t;
}

/* At -vv, a line per evaluation: the point (up to 8 coordinates), the
 * result and its seconds, so that an optimisation that seems to stall
 * shows where its time goes. */
static void report_evaluation(const problem *pb, const point *pt, int st, double secs)
{
    if (gpc_verbosity < 3)
        return;
    char at[160] = "";
    size_t len = 0;
    for (size_t j = 0; j < pb->p && j < 8 && len < sizeof at; j++)
        len += (size_t)snprintf(at + len, sizeof at - len, "%s%.4g", j ? " " : "", pt->x[j]);
    if (pb->p > 8 && len < sizeof at)
        snprintf(at + len, sizeof at - len, " ...");
    if (st == GPC_OK)
        gpc_info(3, "evaluation %d at (%s): %s %.10g (%.3g s)", pb->evaluations, at,
                 pb->o->label, pt->evidence, secs);
    else
        gpc_info(3, "evaluation %d at (%s) failed (%.3g s): %s", pb->evaluations, at, secs,
                 gpc_errmsg());
}

/* The objective at pt->x: log evidence plus log prior, and its gradient.
 * A failure, or a value or gradient that is not finite, leaves pt->ok 0. */
static void evaluate(problem *pb, point *pt)
{
    pb->evaluations++;
    double t0 = gpc_progress_clock();
    int st = pb->fn(pb->ctx, pt->x, &pt->evidence, pt->g);
    report_evaluation(pb, pt, st, gpc_progress_clock() - t0);
    pt->ok = st == GPC_OK;
    if (pt->ok && pb->full && pb->o->use_prior) {
        memset(pb->g_full, 0, pb->p_full * sizeof(double));
        pt->value = pt->evidence + gpc_optimize_log_prior(pb->o, pb->p_full, pb->full,
                                                          pb->g_full);
        for (size_t j = 0; j < pb->p; j++)
            pt->g[j] += pb->g_full[pb->index[j]];
    } else if (pt->ok) {
        pt->value = pt->evidence + gpc_optimize_log_prior(pb->o, pb->p, pt->x, pt->g);
    }
    if (pt->ok) {
        pt->ok = isfinite(pt->value);
        for (size_t j = 0; j < pb->p && pt->ok; j++)
            pt->ok = isfinite(pt->g[j]);
        if (!pt->ok)
            st = gpc_fail(GPC_ENUM, "the %s or its gradient is not finite", pb->o->label);
    }
    if (!pt->ok) {
        pb->status = st;
        pt->value = -HUGE_VAL;
    }
}

/* ---- small vector helpers over the active coordinates ------------------------ */

static double dot_active(const double *a, const double *b, const unsigned char *frozen, size_t p)
{
    double s = 0.0;
    for (size_t j = 0; j < p; j++)
        if (!frozen[j])
            s += a[j] * b[j];
    return s;
}

static double max_abs_active(const double *a, const unsigned char *frozen, size_t p)
{
    double m = 0.0;
    for (size_t j = 0; j < p; j++)
        if (!frozen || !frozen[j])
            m = fmax(m, fabs(a[j]));
    return m;
}

/* ---- the line search ---------------------------------------------------------- */

/* Along d from cur, in terms of phi(a) = -objective(cur + a d), which is
 * minimised: sufficient decrease (c1) and the strong curvature condition
 * (c2), as in Nocedal & Wright's algorithm 3.5, with cubic interpolation on
 * the values and slopes that every evaluation gives.  A trial point that
 * cannot be evaluated lies beyond a wall: the step is cut to a tenth of the
 * way there. */
#define LS_C1 1e-4
#define LS_C2 0.9
#define LS_C2_FIRST 0.1 /* the first search also sets the scale of H: closer */
#define LS_MAX_TRIALS 20
#define LS_EXPAND 4.0

typedef struct {
    int improved; /* best holds a point better than cur */
    int hit_wall; /* some trial could not be evaluated */
} line_result;

/* The minimiser of the cubic through (a0, f0, d0) and (a1, f1, d1), kept a
 * tenth of the interval away from its ends; the midpoint if none. */
static double cubic_step(double a0, double f0, double d0, double a1, double f1, double d1)
{
    double lo = fmin(a0, a1), hi = fmax(a0, a1), w = hi - lo;
    double t1 = d0 + d1 - 3.0 * (f0 - f1) / (a0 - a1);
    double disc = t1 * t1 - d0 * d1;
    double a = 0.5 * (a0 + a1);
    if (disc >= 0.0) {
        double t2 = copysign(sqrt(disc), a1 - a0);
        double c = a1 - (a1 - a0) * (d1 + t2 - t1) / (d1 - d0 + 2.0 * t2);
        if (isfinite(c))
            a = c;
    }
    return fmin(fmax(a, lo + 0.1 * w), hi - 0.1 * w);
}

static line_result line_search(problem *pb, const point *cur, const double *d, double a,
                               double a_max, double c2, point *trial, point *best)
{
    size_t p = pb->p;
    line_result r = {0, 0};
    double f0 = -cur->value, d0 = 0.0;
    for (size_t j = 0; j < p; j++)
        d0 -= cur->g[j] * d[j];
    double a_lo = 0.0, f_lo = f0, d_lo = d0, a_hi = 0.0, f_hi = 0.0, d_hi = 0.0;
    int bracketed = 0, hi_ok = 0;
    for (int t = 0; t < LS_MAX_TRIALS; t++) {
        for (size_t j = 0; j < p; j++)
            trial->x[j] = cur->x[j] + a * d[j];
        evaluate(pb, trial);
        if (!trial->ok) {
            r.hit_wall = 1;
            a_hi = a, hi_ok = 0, bracketed = 1;
        } else {
            double fa = -trial->value, da = 0.0;
            for (size_t j = 0; j < p; j++)
                da -= trial->g[j] * d[j];
            if (fa > f0 + LS_C1 * a * d0 || fa >= f_lo) {
                a_hi = a, f_hi = fa, d_hi = da, hi_ok = 1, bracketed = 1;
            } else {
                point_swap(trial, best);
                r.improved = 1;
                if (fabs(da) <= -c2 * d0)
                    return r;
                if (da * (a - a_lo) >= 0.0) /* past the minimum: it lies behind */
                    a_hi = a_lo, f_hi = f_lo, d_hi = d_lo, hi_ok = 1, bracketed = 1;
                a_lo = a, f_lo = fa, d_lo = da;
            }
        }
        if (!bracketed) {
            if (a >= a_max)
                return r;
            a = fmin(LS_EXPAND * a, a_max);
            continue;
        }
        if (fabs(a_hi - a_lo) <= 1e-12 * fmax(1.0, fabs(a_lo)))
            return r;
        a = hi_ok ? cubic_step(a_lo, f_lo, d_lo, a_hi, f_hi, d_hi)
                  : a_lo + 0.1 * (a_hi - a_lo);
    }
    return r;
}

/* ---- flat directions -------------------------------------------------------------
 *
 * A log hyperparameter u whose natural parameter tends to 0 or infinity
 * (an ARD weight of an input the data do not need) leaves the objective
 * almost unchanged past some point: there it depends on e^(-r|u|), the
 * gradient in u decays by that factor too, and the most the whole rest of
 * that direction can still give is |g| / r.  A coordinate is watched while
 * it moves the way its gradient points: once it has gone at least
 * FLAT_SPAN that way with a gradient decaying at a rate of at least
 * FLAT_RATE, it drifts.  Whether a drift is flat is only decided where the
 * other coordinates have converged (while they move, a drift may turn back):
 * each drifting coordinate is then moved in one step to where what it could
 * still give is flat_gain, and the move is checked by evaluating there (the
 * objective must not fall, each moved gradient must have decayed as
 * predicted, to within FLAT_SLACK, and the others must still meet the
 * gradient test).  If it passes, the drifting coordinates are flat: named,
 * and kept there.  A prior that pulls back (MAP) keeps the gradient from
 * decaying, so such a coordinate never drifts. */
#define FLAT_SPAN 1.0
#define FLAT_RATE 0.5
#define FLAT_SLACK 10.0
#define FLAT_MAX_JUMP 40.0
#define FLAT_MIN_MOVE 1e-3

typedef struct {
    double u, g;   /* where the current outward drift was first seen, and |gradient| */
    double rate;   /* decay rate of the gradient along it (0: not drifting) */
    double tried;  /* where a flat move last failed its check (NAN: none) */
} drift;

/* Follows coordinate j's drift over an accepted step from (u0, g0) to
 * (u1, g1).  Steps shorter than FLAT_MIN_MOVE neither break nor extend it. */
static void drift_track(drift *dr, double u0, double g0, double u1, double g1)
{
    if (fabs(u1 - u0) < FLAT_MIN_MOVE && (g0 > 0) == (g1 > 0))
        return;
    int outward = g1 != 0.0 && (g0 > 0) == (g1 > 0) && (u1 - u0) * g1 > 0.0;
    double span = fabs(u1 - dr->u);
    if (!outward || !(fabs(g1) < dr->g)) {
        *dr = (drift){u1, fabs(g1), 0.0, dr->tried};
        return;
    }
    dr->rate = 0.0;
    if (span < FLAT_SPAN)
        return;
    double rate = log(dr->g / fabs(g1)) / span;
    if (fabs(u1 - u0) >= 0.25 * FLAT_SPAN && fabs(g1) < fabs(g0)) /* the last step alone */
        rate = fmin(rate, log(fabs(g0) / fabs(g1)) / fabs(u1 - u0));
    if (rate >= FLAT_RATE)
        dr->rate = rate;
}

/* The index of coordinate j in the caller's vector, and where the inducing
 * inputs' coordinates start in it. */
static size_t full_index(const problem *pb, size_t j) { return pb->index ? pb->index[j] : j; }
static size_t inducing_start(const problem *pb)
{
    return (pb->index ? pb->p_full : pb->p) - pb->o->inducing;
}

static const char *coord_name(const problem *pb, size_t j, char *buf, size_t size)
{
    size_t full = full_index(pb, j), z0 = inducing_start(pb), dim = pb->o->inducing_dim;
    const gpc_kernel *k = pb->o->kernel;
    if (k && full < gpc_kernel_nparams(k))
        return gpc_kernel_param_label(k, full);
    if (full >= z0 && dim)
        snprintf(buf, size, "Z[%zu,%zu]", (full - z0) / dim + 1, (full - z0) % dim + 1);
    else
        snprintf(buf, size, "theta[%zu]", full);
    return buf;
}

static void report_flat(const problem *pb, size_t j, double u, double g, double rate)
{
    char buf[32], what[64] = "it";
    size_t full = full_index(pb, j);
    const gpc_kernel *k = pb->o->kernel;
    long col = k && full < gpc_kernel_nparams(k) ? gpc_kernel_param_column(k, full) : -1;
    if (col >= 0)
        snprintf(what, sizeof what, "feature %ld", col + 1);
    gpc_info(1, "%s -> flat: the %s hardly depends on %s %s exp(%.3g) (at most %.2g more to "
             "gain); kept at %.6g",
             coord_name(pb, j, buf, sizeof buf),
             pb->o->use_prior ? "log posterior" : pb->o->label, what,
             g > 0 ? "above" : "below", u, fabs(g) / rate, u);
}

/* ---- BFGS ------------------------------------------------------------------------ */

/* Up to LBFGS_DENSE_MAX coordinates the inverse Hessian is kept whole;
 * beyond, as its last pairs (s, y) (limited memory: Nocedal & Wright's
 * algorithm 7.4), so that an iteration costs O(p) and not O(p^2). */
#define LBFGS_DENSE_MAX 1000
#define LBFGS_DEFAULT_PAIRS 20

typedef struct {
    problem *pb;
    size_t p;
    double *H;             /* dense: inverse Hessian of -objective over the active coordinates */
    size_t mem;            /* limited memory: pairs kept (0: dense) */
    double *S, *Y, *rho;   /* the pairs, slot i at S + i p, Y + i p, 1 / s'y in rho[i] */
    size_t pairs, newest;  /* pairs held, the slot of the newest */
    double gamma;          /* s'y / y'y of the newest pair: the scale of H0 */
    double scale;          /* of a fresh H: s'y / y'y of the last update, or 0 */
    unsigned char *frozen; /* flat coordinates, kept where they are */
    drift *dr;
    double *d, *s, *y, *Hy;
    point cur, trial, best, prev;
} bfgs;

static void bfgs_reset(bfgs *b)
{
    size_t p = b->p;
    if (b->mem) { /* H0 alone, at the scale of the last pair */
        b->pairs = 0;
        b->gamma = b->scale > 0.0 ? b->scale : 1.0;
        return;
    }
    memset(b->H, 0, p * p * sizeof(double));
    for (size_t j = 0; j < p; j++)
        if (!b->frozen[j])
            b->H[j * p + j] = b->scale > 0.0 ? b->scale : 1.0;
}

/* The pair (s, y) into the slot after the newest (over the oldest when all
 * are held), s and y as they are over the active coordinates. */
static void lbfgs_push(bfgs *b, double sy, double yy)
{
    size_t p = b->p, slot = b->pairs ? (b->newest + 1) % b->mem : 0;
    for (size_t j = 0; j < p; j++) {
        b->S[slot * p + j] = b->frozen[j] ? 0.0 : b->s[j];
        b->Y[slot * p + j] = b->frozen[j] ? 0.0 : b->y[j];
    }
    b->rho[slot] = 1.0 / sy;
    b->newest = slot;
    b->pairs = b->pairs < b->mem ? b->pairs + 1 : b->mem;
    b->gamma = sy / yy;
}

/* d = H g by the two loops over the pairs, newest first then oldest
 * first; frozen coordinates stay 0. */
static void lbfgs_direction(bfgs *b, double *alpha)
{
    size_t p = b->p;
    for (size_t j = 0; j < p; j++)
        b->d[j] = b->frozen[j] ? 0.0 : b->cur.g[j];
    for (size_t k = 0; k < b->pairs; k++) {
        size_t i = (b->newest + b->mem - k) % b->mem;
        alpha[i] = b->rho[i] * dot_active(b->S + i * p, b->d, b->frozen, p);
        for (size_t j = 0; j < p; j++)
            b->d[j] -= alpha[i] * b->Y[i * p + j];
    }
    for (size_t j = 0; j < p; j++)
        b->d[j] *= b->gamma;
    for (size_t k = b->pairs; k-- > 0;) {
        size_t i = (b->newest + b->mem - k) % b->mem;
        double beta = b->rho[i] * dot_active(b->Y + i * p, b->d, b->frozen, p);
        for (size_t j = 0; j < p; j++)
            b->d[j] += (alpha[i] - beta) * b->S[i * p + j];
    }
    for (size_t j = 0; j < p; j++)
        if (b->frozen[j])
            b->d[j] = 0.0;
}

/* H <- (I - rho s y') H (I - rho y s') + rho s s', rho = 1 / s'y, if the
 * curvature is positive; the first update also rescales H (Shanno & Phua). */
static void bfgs_update(bfgs *b)
{
    size_t p = b->p;
    double sy = dot_active(b->s, b->y, b->frozen, p), yy = dot_active(b->y, b->y, b->frozen, p);
    double ss = dot_active(b->s, b->s, b->frozen, p);
    if (!(sy > 1e-12 * sqrt(ss * yy)))
        return;
    if (b->scale == 0.0) {
        b->scale = sy / yy;
        bfgs_reset(b);
    }
    if (b->mem) {
        lbfgs_push(b, sy, yy);
        return;
    }
    for (size_t i = 0; i < p; i++) {
        b->Hy[i] = 0.0;
        for (size_t j = 0; j < p; j++)
            if (!b->frozen[j])
                b->Hy[i] += b->H[i * p + j] * b->y[j];
    }
    double yHy = dot_active(b->y, b->Hy, b->frozen, p), rho = 1.0 / sy;
    for (size_t i = 0; i < p; i++)
        for (size_t j = 0; j < p; j++) {
            if (b->frozen[i] || b->frozen[j])
                continue;
            b->H[i * p + j] += rho * ((1.0 + rho * yHy) * b->s[i] * b->s[j] -
                                      b->Hy[i] * b->s[j] - b->s[i] * b->Hy[j]);
        }
}

static void freeze(bfgs *b, size_t j)
{
    b->frozen[j] = 1;
    if (b->mem) { /* the pairs carry j's steps: start again from H0 */
        bfgs_reset(b);
        return;
    }
    for (size_t i = 0; i < b->p; i++)
        b->H[i * b->p + j] = b->H[j * b->p + i] = 0.0;
}

/* Whether coordinate j drifts (and has not failed the check where it is). */
static int drifting(const bfgs *b, size_t j)
{
    return !b->frozen[j] && b->dr[j].rate > 0.0 &&
           !(fabs(b->cur.x[j] - b->dr[j].tried) < FLAT_SPAN);
}

/* max |gradient| of pt over the active coordinates that do not drift. */
static double max_abs_settled(const bfgs *b, const point *pt)
{
    double m = 0.0;
    for (size_t j = 0; j < b->p; j++)
        if (!b->frozen[j] && !drifting(b, j))
            m = fmax(m, fabs(pt->g[j]));
    return m;
}

/* Where the others have converged: move the drifting coordinates to where
 * they stop mattering and check it (see above).  Returns 1 if they were
 * found flat (and frozen, b->cur moved there), 0 if not (marked tried). */
static int settle_flat(bfgs *b)
{
    problem *pb = b->pb;
    size_t p = b->p;
    double tol = pb->o->flat_gain;
    point_copy(&b->trial, &b->cur, p);
    int movers = 0, moved = 0;
    for (size_t j = 0; j < p; j++) {
        if (!drifting(b, j))
            continue;
        double rate = b->dr[j].rate, left = fabs(b->cur.g[j]) / rate;
        if (left > tol) {
            double dist = fmin(log(left / tol) / rate, FLAT_MAX_JUMP);
            b->trial.x[j] = b->cur.x[j] + copysign(dist, b->cur.g[j]);
            moved = 1;
        }
        movers++;
    }
    if (movers == 0)
        return 0;
    if (moved)
        evaluate(pb, &b->trial);
    int good = !moved || (b->trial.ok && b->trial.value >= b->cur.value - tol &&
                          max_abs_settled(b, &b->trial) < pb->o->gtol);
    for (size_t j = 0; j < p && good; j++)
        if (drifting(b, j) && b->trial.x[j] != b->cur.x[j])
            good = (b->trial.g[j] > 0) == (b->cur.g[j] > 0) &&
                   fabs(b->trial.g[j]) <= FLAT_SLACK * b->dr[j].rate * tol;
    const point *at = moved ? &b->trial : &b->cur;
    for (size_t j = 0; j < p; j++) {
        if (!drifting(b, j))
            continue;
        if (!good) {
            b->dr[j].tried = b->cur.x[j];
            continue;
        }
        report_flat(pb, j, at->x[j], at->g[j], b->dr[j].rate);
        freeze(b, j);
    }
    if (good && moved)
        point_swap(&b->cur, &b->trial);
    return good;
}

static void bfgs_init(bfgs *b, problem *pb)
{
    size_t p = pb->p;
    b->pb = pb;
    b->p = p;
    size_t pairs = pb->o->lbfgs_pairs;
    b->mem = pairs ? pairs : p > LBFGS_DENSE_MAX ? LBFGS_DEFAULT_PAIRS : 0;
    b->H = b->mem ? NULL : gpc_calloc(p * p, sizeof(double));
    b->S = b->mem ? gpc_calloc(b->mem * p, sizeof(double)) : NULL;
    b->Y = b->mem ? gpc_calloc(b->mem * p, sizeof(double)) : NULL;
    b->rho = b->mem ? gpc_calloc(2 * b->mem, sizeof(double)) : NULL;
    b->pairs = b->newest = 0;
    b->scale = 0.0;
    b->frozen = gpc_calloc(p, 1);
    b->dr = gpc_calloc(p, sizeof *b->dr);
    b->d = gpc_calloc(p, sizeof(double));
    b->s = gpc_calloc(p, sizeof(double));
    b->y = gpc_calloc(p, sizeof(double));
    b->Hy = gpc_calloc(p, sizeof(double));
    b->cur = point_alloc(p);
    b->trial = point_alloc(p);
    b->best = point_alloc(p);
    b->prev = point_alloc(p);
}

static void bfgs_free(bfgs *b)
{
    free(b->H);
    free(b->S);
    free(b->Y);
    free(b->rho);
    free(b->frozen);
    free(b->dr);
    free(b->d);
    free(b->s);
    free(b->y);
    free(b->Hy);
    point_free(&b->cur);
    point_free(&b->trial);
    point_free(&b->best);
    point_free(&b->prev);
}

/* The first step moves the steepest coordinate by this much (a factor e^0.5
 * of a hyperparameter); no step moves any coordinate by more than MAX_STEP. */
#define FIRST_STEP 0.5
#define MAX_STEP 10.0
#define MAX_STALLED 3

/* The search direction H g; a fresh H if it does not point uphill. */
static void direction(bfgs *b)
{
    size_t p = b->p;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (b->mem) {
            lbfgs_direction(b, b->rho + b->mem);
            if (dot_active(b->d, b->cur.g, b->frozen, p) > 0.0)
                return;
            bfgs_reset(b);
            continue;
        }
        for (size_t i = 0; i < p; i++) {
            b->d[i] = 0.0;
            if (b->frozen[i])
                continue;
            for (size_t j = 0; j < p; j++)
                if (!b->frozen[j])
                    b->d[i] += b->H[i * p + j] * b->cur.g[j];
        }
        if (dot_active(b->d, b->cur.g, b->frozen, p) > 0.0)
            return;
        bfgs_reset(b);
    }
}

/* One run from b->cur (evaluated, finite); on return b->cur is its end.
 * Returns why it ended: GPC_STOP_CONVERGED if the gradient test was met
 * (by the coordinates not found flat). */
static gpc_stop run_bfgs(bfgs *b, int start, int *iterations)
{
    problem *pb = b->pb;
    const gpc_optimize_opts *o = pb->o;
    size_t p = b->p;
    const char *label = o->use_prior ? "log posterior" : o->label;
    int stalled = 0, fresh = 1;
    gpc_stop why = GPC_STOP_ITERATIONS;
    bfgs_reset(b);
    for (size_t j = 0; j < p; j++)
        b->dr[j] = (drift){b->cur.x[j], fabs(b->cur.g[j]), 0.0, NAN};
    for (int it = 1; it <= o->max_iter; it++) {
        if (max_abs_settled(b, &b->cur) < o->gtol) {
            int any = 0;
            for (size_t j = 0; j < p; j++)
                any |= drifting(b, j);
            if (!any || (o->flat_gain > 0.0 && settle_flat(b)))
                return GPC_STOP_CONVERGED;
        }
        direction(b);
        double dmax = max_abs_active(b->d, b->frozen, p);
        if (!(dmax > 0.0)) {
            why = GPC_STOP_NO_ASCENT;
            break;
        }
        double a = b->scale == 0.0 ? FIRST_STEP / dmax : 1.0;
        a = fmin(a, MAX_STEP / dmax);
        line_result lr = line_search(pb, &b->cur, b->d, a, MAX_STEP / dmax,
                                     b->scale == 0.0 ? LS_C2_FIRST : LS_C2, &b->trial, &b->best);
        (*iterations)++;
        if (!lr.improved) {
            /* nothing gained along this direction: once more from a fresh H */
            if (fresh || ++stalled >= MAX_STALLED) {
                why = lr.hit_wall ? GPC_STOP_WALL : GPC_STOP_NO_ASCENT;
                break;
            }
            bfgs_reset(b);
            fresh = 1;
            continue;
        }
        double gain = b->best.value - b->cur.value;
        point_swap(&b->prev, &b->cur);
        point_swap(&b->cur, &b->best);
        for (size_t j = 0; j < p; j++) {
            b->s[j] = b->cur.x[j] - b->prev.x[j];
            b->y[j] = b->prev.g[j] - b->cur.g[j];
            drift_track(&b->dr[j], b->prev.x[j], b->prev.g[j], b->cur.x[j], b->cur.g[j]);
        }
        bfgs_update(b);
        fresh = 0;
        gpc_info(it % 10 == 0 ? 1 : 2, "start %d, iteration %d: %s %.10g, max |gradient| %.3g",
                 start, it, label, b->cur.value, max_abs_active(b->cur.g, NULL, p));
        /* pressed against points that cannot be evaluated, gaining next to
         * nothing: a few such iterations in a row end the run */
        stalled = lr.hit_wall && gain <= 1e-8 * (1.0 + fabs(b->cur.value)) ? stalled + 1 : 0;
        if (stalled >= MAX_STALLED) {
            why = GPC_STOP_WALL;
            break;
        }
    }
    return max_abs_active(b->cur.g, b->frozen, p) < o->gtol ? GPC_STOP_CONVERGED : why;
}

/* ---- starts ------------------------------------------------------------------- */

static int optimize_core(problem *pb, double *theta, gpc_optimize_result *res)
{
    const gpc_optimize_opts *o = pb->o;
    size_t p = pb->p;
    bfgs b;
    bfgs_init(&b, pb);
    point best = point_alloc(p);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, o->seed);
    int found = 0;
    memset(res, 0, sizeof *res);
    for (int s = 0; s <= o->restarts; s++) {
        for (size_t j = 0; j < p; j++) /* inducing inputs stay where they were */
            b.cur.x[j] = theta[j] + (s && full_index(pb, j) < inducing_start(pb)
                                         ? gsl_ran_gaussian(rng, o->restart_sd)
                                         : 0.0);
        memset(b.frozen, 0, p);
        b.scale = 0.0;
        evaluate(pb, &b.cur);
        if (!b.cur.ok && pb->status != GPC_OK && pb->status != GPC_ENUM)
            break; /* bad input or settings, which no other start mends */
        if (!b.cur.ok) {
            gpc_info(1, "start %d failed: %s", s + 1, gpc_errmsg());
            continue;
        }
        gpc_stop why = run_bfgs(&b, s + 1, &res->iterations);
        int conv = why == GPC_STOP_CONVERGED;
        gpc_info(1, "start %d: %s %.10g after %d evaluations%s", s + 1,
                 o->use_prior ? "log posterior" : o->label, b.cur.value, pb->evaluations,
                 conv ? "" : " (gradient test not met)");
        if (b.cur.value > best.value || !found) {
            point_copy(&best, &b.cur, p);
            res->value = b.cur.value;
            res->evidence = b.cur.evidence;
            res->converged = conv;
            res->stop = why;
            res->grad_norm = max_abs_active(b.cur.g, NULL, p);
            res->flat = 0;
            for (size_t j = 0; j < p; j++)
                res->flat += b.frozen[j];
            found = 1;
        }
    }
    res->evaluations = pb->evaluations;
    if (found)
        memcpy(theta, best.x, p * sizeof(double));
    point_free(&best);
    bfgs_free(&b);
    gsl_rng_free(rng);
    if (!found)
        return pb->status != GPC_OK ? pb->status : gpc_fail(GPC_ENUM, "optimisation failed");
    return GPC_OK;
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
        res->stop = GPC_STOP_CONVERGED;
        res->evaluations = 1;
        return st;
    }
    subset s = {fn, ctx, p, q, free_idx, gpc_malloc(p * sizeof(double)), gpc_malloc(p * sizeof(double))};
    memcpy(s.full, theta, p * sizeof(double));
    double *t = gpc_malloc(q * sizeof *t);
    for (size_t j = 0; j < q; j++)
        t[j] = theta[free_idx[j]];
    gpc_optimize_opts oq = *o;
    oq.fixed = NULL;
    double *g_full = gpc_malloc(p * sizeof *g_full);
    problem pb = {subset_eval, &s, &oq, q, free_idx, s.full, p, g_full, 0, GPC_OK};
    int st = optimize_core(&pb, t, res);
    free(g_full);
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
    problem pb = {fn, ctx, o, p, NULL, NULL, 0, NULL, 0, GPC_OK};
    return optimize_core(&pb, theta, res);
}
