/* Optimiser: finds the maximum of known concave functions, adds the right
 * prior, and the prior's gradient matches central differences; recognises
 * flat directions, names them and keeps them, and optimises the rest. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_math.h>

#include "base/err.h"
#include "hyper/optimize.h"
#include "hyper/prior.h"
#include "kernels/kernel.h"
#include "tap.h"

/* -sum_j c_j (theta_j - m_j)^2 / 2 with maximum at m. */
static const double centre[3] = {1.5, -2.0, 0.25};
static const double curv[3] = {1.0, 10.0, 0.1};

static int quadratic(void *ctx, const double *theta, double *value, double *grad)
{
    (void)ctx;
    *value = 0.0;
    for (int j = 0; j < 3; j++) {
        double d = theta[j] - centre[j];
        *value -= 0.5 * curv[j] * d * d;
        grad[j] = -curv[j] * d;
    }
    return GPC_OK;
}

/* Fails outside a box, to exercise a start that cannot be evaluated. */
static int boxed(void *ctx, const double *theta, double *value, double *grad)
{
    if (fabs(theta[0]) > 50.0)
        return gpc_fail(GPC_ENUM, "outside the box");
    return quadratic(ctx, theta, value, grad);
}

/* Rises without bound toward x -> +inf but cannot be evaluated past x = 1:
 * the maximum the optimiser can reach lies at a wall of failures. */
static int walled(void *ctx, const double *theta, double *value, double *grad)
{
    int *calls = ctx;
    ++*calls;
    if (theta[0] > 1.0)
        return gpc_fail(GPC_ENUM, "past the wall");
    *value = theta[0];
    grad[0] = 1.0;
    return GPC_OK;
}

/* Line searches that only meet failures gain nothing: the run ends after a
 * few such iterations instead of repeating them up to max_iter. */
static void test_wall(void)
{
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    int calls = 0;
    double x[1] = {1.0 - 1e-9}; /* at the wall, as EP near eps -> 0 */
    int st = gpc_optimize(walled, &calls, 1, x, &o, &res);
    TEST_OK(st == GPC_OK && !res.converged && x[0] <= 1.0 && res.iterations < 20 &&
                calls < 200,
            "at a wall of failures: stops after %d iterations, %d evaluations, at x = %g",
            res.iterations, calls, x[0]);
}

/* The quadratic with a ripple of amplitude 1e-3 on its value that its
 * gradient does not show, as an objective computed to a rounding floor:
 * where the gains left are below the ripple (within about 0.2 of the
 * maximum along its flattest axis) the line searches find no rise, while
 * the gradient (up to 0.02) is far from the test's 1e-5. */
static int rough(void *ctx, const double *theta, double *value, double *grad)
{
    quadratic(ctx, theta, value, grad);
    *value += 1e-3 * sin(1e4 * (theta[0] + 2.0 * theta[1] + 3.0 * theta[2]));
    return GPC_OK;
}

static int rosenbrock(void *ctx, const double *x, double *value, double *grad);

/* Each way a run ends is told apart (gpc-fit's warning names it). */
static void test_stop_reasons(void)
{
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    double x[3] = {0, 0, 0};
    int st = gpc_optimize(quadratic, NULL, 3, x, &o, &res);
    TEST_OK(st == GPC_OK && res.converged && res.stop == GPC_STOP_CONVERGED,
            "stop: a smooth maximum converges (stop %d)", (int)res.stop);
    memset(x, 0, sizeof x);
    st = gpc_optimize(rough, NULL, 3, x, &o, &res);
    double far = 0.0;
    for (int j = 0; j < 3; j++)
        far = fmax(far, fabs(x[j] - centre[j]));
    TEST_OK(st == GPC_OK && !res.converged && res.stop == GPC_STOP_NO_ASCENT &&
                res.iterations < o.max_iter && far < 0.3,
            "stop: a rough value ends in no ascent near the maximum (stop %d after %d "
            "iterations, %g from it)", (int)res.stop, res.iterations, far);
    int calls = 0;
    double w[1] = {1.0 - 1e-9};
    st = gpc_optimize(walled, &calls, 1, w, &o, &res);
    TEST_OK(st == GPC_OK && !res.converged && res.stop == GPC_STOP_WALL,
            "stop: at a wall of failures (stop %d)", (int)res.stop);
    o.max_iter = 3;
    double r[2] = {-1.2, 1.0};
    size_t two = 2;
    st = gpc_optimize(rosenbrock, &two, 2, r, &o, &res);
    TEST_OK(st == GPC_OK && !res.converged && res.stop == GPC_STOP_ITERATIONS &&
                res.iterations == 3,
            "stop: iterations used up (stop %d after %d)", (int)res.stop, res.iterations);
}

/* Runs gpc_optimize at verbosity 1 with standard error captured into buf. */
static int optimize_captured(gpc_objective fn, void *ctx, size_t p, double *theta,
                             const gpc_optimize_opts *o, gpc_optimize_result *res, char *buf,
                             size_t size)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2), verbosity = gpc_verbosity;
    dup2(fileno(tmp), 2);
    gpc_verbosity = 1;
    int st = gpc_optimize(fn, ctx, p, theta, o, res);
    gpc_verbosity = verbosity;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(buf, 1, size - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
    return st;
}

/* Two ordinary coordinates and two flat ones, like ARD weights of unused
 * inputs: with d = theta0 - 1.5,
 *     f = -d^2 / 2 - 5 (theta1 + 2)^2 - e^theta2 (1 + d^2) - 2 e^-theta3,
 * whose supremum 0 is approached at theta0 = 1.5, theta1 = -2 as theta2 ->
 * -inf and theta3 -> +inf; what theta2 and theta3 can still give at a point
 * is e^theta2 (1 + d^2) + 2 e^-theta3, the distance of f from 0. */
static int flat4(void *ctx, const double *t, double *value, double *grad)
{
    int *calls = ctx;
    if (calls)
        ++*calls;
    double d = t[0] - 1.5, e2 = exp(t[2]), e3 = exp(-t[3]);
    *value = -0.5 * d * d - 5.0 * (t[1] + 2.0) * (t[1] + 2.0) - e2 * (1.0 + d * d) - 2.0 * e3;
    grad[0] = -d - 2.0 * e2 * d;
    grad[1] = -10.0 * (t[1] + 2.0);
    grad[2] = -e2 * (1.0 + d * d);
    grad[3] = 2.0 * e3;
    return GPC_OK;
}

static void test_flat(void)
{
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    char err[4096];
    int calls = 0;
    double t[4] = {0, 0, 0, 0};
    int st = optimize_captured(flat4, &calls, 4, t, &o, &res, err, sizeof err);
    TEST_OK(st == GPC_OK && res.converged && res.flat == 2,
            "flat directions: converged with %d found flat", res.flat);
    TEST_CLOSE(t[0], 1.5, 0, 1e-4, "flat directions: theta0 at its optimum");
    TEST_CLOSE(t[1], -2.0, 0, 1e-4, "flat directions: theta1 at its optimum");
    TEST_OK(res.value > -1e-6 && res.value <= 0.0,
            "flat directions: within 1e-6 of the supremum 0 (%.3g)", res.value);
    TEST_OK(t[2] < -10.0 && t[3] > 10.0, "flat directions: moved out to %g and %g", t[2], t[3]);
    TEST_OK(strstr(err, "theta[2] -> flat") && strstr(err, "theta[3] -> flat") &&
                strstr(err, "below exp(") && strstr(err, "above exp(") &&
                !strstr(err, "theta[0] -> flat") && !strstr(err, "theta[1] -> flat"),
            "flat directions: both named on standard error, the others not");
    TEST_OK(res.evaluations == calls && calls <= 40,
            "flat directions: followed in few evaluations (%d)", calls);
    double again[4] = {0, 0, 0, 0};
    optimize_captured(flat4, NULL, 4, again, &o, &res, err, sizeof err);
    TEST_OK(memcmp(t, again, sizeof t) == 0, "flat directions: the same result twice");

    /* the indices named are those of the full vector when some are fixed */
    unsigned char fixed[4] = {0, 1, 0, 0};
    o.fixed = fixed;
    double tf[4] = {0, -2.5, 0, 0};
    st = optimize_captured(flat4, NULL, 4, tf, &o, &res, err, sizeof err);
    TEST_OK(st == GPC_OK && res.converged && res.flat == 2 && tf[1] == -2.5 &&
                strstr(err, "theta[2] -> flat") && strstr(err, "theta[3] -> flat"),
            "flat directions with a fixed coordinate: named by their full index");
}

/* f = -e^u: flat as u -> -inf, but the prior N(-3, 3^2) pulls back, so the
 * maximum of f + log prior is the root of -e^u - (u + 3) / 9, interior. */
static int falling(void *ctx, const double *t, double *value, double *grad)
{
    (void)ctx;
    *value = -exp(t[0]);
    grad[0] = -exp(t[0]);
    return GPC_OK;
}

/* Like falling, with a quadratic that turns the drift back: f = -e^u -
 * 1e-4 (u + 12)^2 / 2.  Far above -12 its gradient decays like e^u, as a
 * flat direction's would; its maximum is the root of -e^u - 1e-4 (u + 12),
 * near -12.06. */
static int turning(void *ctx, const double *t, double *value, double *grad)
{
    (void)ctx;
    *value = -exp(t[0]) - 0.5e-4 * (t[0] + 12.0) * (t[0] + 12.0);
    grad[0] = -exp(t[0]) - 1e-4 * (t[0] + 12.0);
    return GPC_OK;
}

/* The root of a decreasing function h on [lo, hi] by bisection. */
static double bisect(double (*h)(double), double lo, double hi)
{
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (h(mid) > 0)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static double falling_map_slope(double u) { return -exp(u) - (u + 3.0) / 9.0; }
static double turning_slope(double u) { return -exp(u) - 1e-4 * (u + 12.0); }

static void test_not_flat(void)
{
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    char err[4096];
    o.use_prior = 1;
    double u[1] = {0.0};
    int st = optimize_captured(falling, NULL, 1, u, &o, &res, err, sizeof err);
    TEST_OK(st == GPC_OK && res.converged && res.flat == 0 && !strstr(err, "flat"),
            "MAP: a direction flat in the evidence is not flat under the prior");
    TEST_CLOSE(u[0], bisect(falling_map_slope, -10.0, 0.0), 0, 1e-4,
               "MAP: and reaches the posterior maximum");

    o.use_prior = 0;
    o.gtol = 1e-8; /* the curvature at the maximum is 1.06e-4: u within 1e-4 */
    u[0] = 0.0;
    st = optimize_captured(turning, NULL, 1, u, &o, &res, err, sizeof err);
    TEST_OK(st == GPC_OK && res.converged && res.flat == 0 && !strstr(err, "flat"),
            "a drift that turns back is not flat");
    TEST_CLOSE(u[0], bisect(turning_slope, -20.0, 0.0), 0, 1e-4,
               "a drift that turns back: its maximum is reached");
}

/* A flat objective, so that MAP maximises the prior alone. */
static int zero(void *ctx, const double *t, double *value, double *grad)
{
    (void)ctx;
    (void)t;
    *value = 0.0;
    if (grad)
        memset(grad, 0, 4 * sizeof *grad);
    return GPC_OK;
}

/* With some hyperparameters fixed, the prior is still that of the whole
 * vector: a Dirichlet prior on simplex weights knows which coordinates are
 * weights by their place in it (t1.log_weight t1.log_w t2.log_weight
 * t2.log_w; with t1.log_w fixed the free t2.log_weight is the second free
 * coordinate, which is no weight in the full vector's numbering). */
static void test_fixed_prior(void)
{
    gpc_kernel *k;
    if (gpc_kernel_parse("se@1+se@2:simplex", 2, &k) != GPC_OK) {
        TEST_OK(0, "kernel parsed: %s", gpc_errmsg());
        return;
    }
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    o.use_prior = 1;
    o.kernel = k;
    unsigned char fixed[4] = {0, 1, 0, 0};
    o.fixed = fixed;
    double theta[4] = {log(0.3), -1.0, log(0.7), 0.5};
    int st = gpc_optimize(zero, NULL, 4, theta, &o, &res);
    double full = gpc_log_prior(k, 4, theta, o.prior_mean, o.prior_sd, NULL);
    TEST_OK(st == GPC_OK, "MAP with a fixed coordinate of a simplex kernel runs");
    TEST_CLOSE(res.value, full, 1e-12, 1e-12, "with t1.log_w fixed, the value maximised is the "
               "whole vector's log prior (%.10g against %.10g)", res.value, full);
    gpc_kernel_free(k);
}

/* The extended Rosenbrock function of p (even) coordinates, negated:
 * maximum 0 at all ones, a curved valley per pair that a method without
 * curvature crosses slowly. */
static int rosenbrock(void *ctx, const double *x, double *value, double *grad)
{
    size_t p = *(const size_t *)ctx;
    *value = 0.0;
    for (size_t j = 0; j < p; j += 2) {
        double a = x[j + 1] - x[j] * x[j], b = 1.0 - x[j];
        *value -= 10.0 * a * a + b * b;
        grad[j] = 40.0 * a * x[j] + 2.0 * b;
        grad[j + 1] = -20.0 * a;
    }
    return GPC_OK;
}

/* Limited memory: a few pairs find Rosenbrock's maximum, also from 1500
 * coordinates (where it is the default) and with a coordinate fixed, and
 * give the same bits twice. */
static void test_limited_memory(void)
{
    enum { P = 1500 };
    static double x[P], again[P];
    size_t p = 40;
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    o.lbfgs_pairs = 5;
    o.gtol = 1e-8;
    for (size_t j = 0; j < p; j++)
        x[j] = j % 2 ? 1.0 : -1.2;
    int st = gpc_optimize(rosenbrock, &p, p, x, &o, &res);
    double err = 0.0;
    for (size_t j = 0; j < p; j++)
        err = fmax(err, fabs(x[j] - 1.0));
    TEST_OK(st == GPC_OK && res.converged && err < 1e-6,
            "L-BFGS, 5 pairs: 40-coordinate Rosenbrock's maximum to %.2g in %d iterations",
            err, res.iterations);

    p = P;
    o.lbfgs_pairs = 0;
    for (size_t j = 0; j < p; j++)
        x[j] = j % 2 ? 1.0 : -1.2;
    st = gpc_optimize(rosenbrock, &p, p, x, &o, &res);
    err = 0.0;
    for (size_t j = 0; j < p; j++)
        err = fmax(err, fabs(x[j] - 1.0));
    /* the dense inverse Hessian would take p^2 = 2.25e6 entries and as many
     * operations per iteration; the pairs converge as the dense BFGS does
     * on each separate 2-d valley, in a few dozen iterations */
    TEST_OK(st == GPC_OK && res.converged && err < 1e-6 && res.iterations < 200,
            "L-BFGS by default past 1000 coordinates: 1500-coordinate Rosenbrock to %.2g in "
            "%d iterations", err, res.iterations);
    /* the default there is 20 pairs: the same steps, to the bit */
    o.lbfgs_pairs = 20;
    for (size_t j = 0; j < p; j++)
        again[j] = j % 2 ? 1.0 : -1.2;
    gpc_optimize(rosenbrock, &p, p, again, &o, &res);
    TEST_OK(memcmp(x, again, sizeof x) == 0, "and it is 20 pairs, to the bit");
    o.lbfgs_pairs = 0;

    static unsigned char fixed[P];
    fixed[3] = 1;
    o.fixed = fixed;
    for (int run = 0; run < 2; run++) {
        double *y = run ? again : x;
        for (size_t j = 0; j < p; j++)
            y[j] = j % 2 ? 1.0 : -1.2;
        y[3] = 0.5;
        st = gpc_optimize(rosenbrock, &p, p, y, &o, &res);
    }
    /* with x[3] = 0.5 the pair's maximum is x[2] where 40 a x + 2 (1 - x) = 0 */
    err = 0.0;
    for (size_t j = 0; j < p; j++)
        if (j / 2 != 1)
            err = fmax(err, fabs(x[j] - 1.0));
    double g2 = 40.0 * (0.5 - x[2] * x[2]) * x[2] + 2.0 * (1.0 - x[2]);
    TEST_OK(st == GPC_OK && res.converged && x[3] == 0.5 && err < 1e-6 && fabs(g2) < 1e-6,
            "L-BFGS with a coordinate fixed: it stays, the rest at their maximum (%.2g, "
            "slope %.2g)", err, g2);
    TEST_OK(memcmp(x, again, sizeof x) == 0, "L-BFGS: the same bits twice");
}

/* -sum (x - 1)^2 / 2 over every coordinate, for the inducing tail below. */
static int bowl(void *ctx, const double *x, double *value, double *grad)
{
    size_t p = *(const size_t *)ctx;
    *value = 0.0;
    for (size_t j = 0; j < p; j++) {
        *value -= 0.5 * (x[j] - 1.0) * (x[j] - 1.0);
        grad[j] = 1.0 - x[j];
    }
    return GPC_OK;
}

/* Coordinates named as inducing inputs carry no prior: MAP pulls the
 * hyperparameters towards the prior mean, and leaves the tail at the
 * likelihood's maximum. */
static void test_inducing_tail(void)
{
    size_t p = 5;
    double x[5] = {0, 0, 0, 0, 0};
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    o.use_prior = 1;
    o.inducing = 4;
    o.inducing_dim = 2;
    int st = gpc_optimize(bowl, &p, p, x, &o, &res);
    double prec = 1.0 / 9.0, want = (1.0 + prec * -3.0) / (1.0 + prec), err = 0.0;
    for (size_t j = 1; j < p; j++)
        err = fmax(err, fabs(x[j] - 1.0));
    TEST_OK(st == GPC_OK && res.converged && fabs(x[0] - want) < 1e-6 && err < 1e-6,
            "MAP with an inducing tail: the hyperparameter at %.8g (want %.8g), the tail at "
            "1 to %.2g", x[0], want, err);
    double g[5] = {0};
    TEST_CLOSE(gpc_optimize_log_prior(&o, p, x, g), gpc_log_prior_normal(1, x, -3.0, 3.0, NULL),
               1e-15, 0, "the log prior counts the hyperparameter alone");
    TEST_OK(g[1] == 0.0 && g[4] == 0.0, "and gives the tail no gradient");
}

int main(void)
{
    gpc_gsl_quiet();
    gpc_verbosity = 0;
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    test_wall();
    test_stop_reasons();
    test_flat();
    test_not_flat();
    test_fixed_prior();
    test_limited_memory();
    test_inducing_tail();

    double theta[3] = {0, 0, 0};
    int st = gpc_optimize(quadratic, NULL, 3, theta, &o, &res);
    TEST_OK(st == GPC_OK && res.converged, "ML: converged");
    for (int j = 0; j < 3; j++)
        TEST_CLOSE(theta[j], centre[j], 0, 1e-4, "ML: theta[%d] at the maximum", j);

    /* With a N(mu, s^2) prior the maximum of the sum is at
     * (c m + mu / s^2) / (c + 1 / s^2) in each coordinate. */
    o.use_prior = 1;
    o.prior_mean = -3.0;
    o.prior_sd = 3.0;
    double th2[3] = {0, 0, 0};
    st = gpc_optimize(quadratic, NULL, 3, th2, &o, &res);
    TEST_OK(st == GPC_OK && res.converged, "MAP: converged");
    for (int j = 0; j < 3; j++) {
        double prec = 1.0 / 9.0;
        double want = (curv[j] * centre[j] + prec * -3.0) / (curv[j] + prec);
        TEST_CLOSE(th2[j], want, 0, 1e-4, "MAP: theta[%d] at the posterior maximum", j);
    }
    double ev;
    double g0[3];
    quadratic(NULL, th2, &ev, g0);
    TEST_CLOSE(res.value, ev + gpc_optimize_log_prior(&o, 3, th2, NULL), 1e-12, 1e-12,
               "MAP: reported value is evidence plus log prior");
    TEST_CLOSE(res.evidence, ev, 1e-12, 1e-12, "MAP: reported evidence");

    /* the prior's log density and gradient */
    double at[3] = {0.3, -4.0, 2.0}, g[3] = {0, 0, 0};
    double lp = gpc_optimize_log_prior(&o, 3, at, g);
    double want_lp = 0.0;
    for (int j = 0; j < 3; j++)
        want_lp += -0.5 * pow((at[j] + 3.0) / 3.0, 2) - log(3.0 * sqrt(2.0 * M_PI));
    TEST_CLOSE(lp, want_lp, 1e-14, 0, "log prior density");
    for (int j = 0; j < 3; j++) {
        double h = 1e-5, a = at[j];
        at[j] = a + h;
        double up = gpc_optimize_log_prior(&o, 3, at, NULL);
        at[j] = a - h;
        double dn = gpc_optimize_log_prior(&o, 3, at, NULL);
        at[j] = a;
        TEST_CLOSE(g[j], (up - dn) / (2 * h), 1e-7, 1e-9, "log prior gradient %d", j);
    }

    /* restarts: a first start that cannot be evaluated is survived, and the
     * same seed gives the same answer */
    o.use_prior = 0;
    o.restarts = 3;
    o.restart_sd = 80.0;
    double th3[3] = {60.0, 0, 0}, th4[3] = {60.0, 0, 0};
    st = gpc_optimize(boxed, NULL, 3, th3, &o, &res);
    TEST_OK(st == GPC_OK, "restarts recover from a start that fails");
    TEST_CLOSE(th3[1], centre[1], 0, 1e-4, "restarts reach the maximum");
    gpc_optimize(boxed, NULL, 3, th4, &o, &res);
    TEST_OK(th3[0] == th4[0] && th3[1] == th4[1] && th3[2] == th4[2],
            "same seed, same result");
    o.restarts = 0;
    double th5[3] = {60.0, 0, 0};
    st = gpc_optimize(boxed, NULL, 3, th5, &o, &res);
    TEST_OK(st == GPC_ENUM, "no start evaluable: the objective's error is returned");
    return tap_done();
}
