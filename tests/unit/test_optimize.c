/* Optimiser: finds the maximum of known concave functions, adds the right
 * prior, and the prior's gradient matches central differences. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_math.h>

#include "err.h"
#include "optimize.h"
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

int main(void)
{
    gpc_gsl_quiet();
    gpc_verbosity = 0;
    gpc_optimize_opts o;
    gpc_optimize_result res;
    gpc_optimize_defaults(&o);
    test_wall();

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
