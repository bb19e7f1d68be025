/* The full-batch fit of the sparse variational method with its inducing
 * inputs moving (hyper/evidence, gpc_evidence_optimize): the objective over
 * (theta, Z), q refitted at each point, has the gradient its central
 * differences give (binary and softmax); the optimum over both is at least
 * the optimum over theta with Z fixed, its gradient vanishes there, the
 * method is left fitted at it, and a second run gives the same bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "hyper/evidence.h"
#include "hyper/optimize.h"
#include "problems.h"
#include "tap.h"

/* An evidence of method on X, y with m inducing inputs (seed 1), q fitted
 * to 1e-15, theta set and the inputs chosen by one evaluation. */
static gpc_evidence *evidence(const gsl_matrix *X, const gsl_vector *y, size_t C, gpc_lik lik,
                              gpc_method method, const char *spec, const double *theta, size_t m)
{
    gpc_kernel *k;
    if (gpc_kernel_parse(spec, X->size2, &k) != GPC_OK)
        return NULL;
    gpc_evidence *e = gpc_evidence_alloc(k, X, y, C, lik, method);
    gpc_kernel_free(k);
    double v;
    if (gpc_evidence_set_inducing(e, m, 1) != GPC_OK || gpc_evidence_set_tol(e, 1e-15) != GPC_OK ||
        gpc_evidence_eval(e, theta, &v, NULL) != GPC_OK) {
        gpc_evidence_free(e);
        return NULL;
    }
    return e;
}

/* x = (theta, Z by rows) of e's current point; its length in *len. */
static double *point_of(gpc_evidence *e, const double *theta, size_t *len)
{
    const gsl_matrix *Z = gpc_evidence_inducing_inputs(e);
    size_t p = gpc_kernel_nparams(e->kernel), nz = Z->size1 * Z->size2;
    double *x = malloc((p + nz) * sizeof *x);
    memcpy(x, theta, p * sizeof *x);
    for (size_t i = 0; i < Z->size1; i++)
        memcpy(x + p + i * Z->size2, gsl_matrix_const_ptr(Z, i, 0), Z->size2 * sizeof *x);
    *len = p + nz;
    return x;
}

/* The gradient of gpc_evidence_eval_inducing against central differences
 * of its value (q refitted at each), worst relative error over all of x. */
static void check_gradient(gpc_evidence *e, const double *theta, const char *what)
{
    size_t len;
    double *x = point_of(e, theta, &len), *g = malloc(len * sizeof *g), v, worst = 0.0;
    int st = gpc_evidence_eval_inducing(e, x, &v, g);
    for (size_t j = 0; j < len && st == GPC_OK; j++) {
        double h = 1e-5, x0 = x[j], up, dn;
        x[j] = x0 + h;
        st = gpc_evidence_eval_inducing(e, x, &up, NULL);
        x[j] = x0 - h;
        if (st == GPC_OK)
            st = gpc_evidence_eval_inducing(e, x, &dn, NULL);
        x[j] = x0;
        double fd = (up - dn) / (2 * h);
        worst = fmax(worst, fabs(fd - g[j]) / (1.0 + fabs(fd)));
    }
    TEST_OK(st == GPC_OK && worst < 1e-6,
            "%s: the gradient in theta and all %zu coordinates of Z matches central "
            "differences of the refitted bound (worst %.2g)", what, len, worst);
    free(x);
    free(g);
}

/* Fit theta (and Z if move) from theta0; the bound at the end and the max
 * |gradient| there over theta and Z. */
static int fit(gpc_evidence *e, const double *theta0, int move, double *theta, double *bound,
               double *gmax)
{
    size_t p = gpc_kernel_nparams(e->kernel), len;
    memcpy(theta, theta0, p * sizeof *theta);
    gpc_optimize_opts o;
    gpc_optimize_result r;
    gpc_optimize_defaults(&o);
    o.gtol = 1e-6;
    int st = gpc_evidence_set_move_inducing(e, move);
    if (st == GPC_OK)
        st = gpc_evidence_optimize(e, theta, &o, &r);
    if (st != GPC_OK || !r.converged)
        return GPC_ENUM;
    double *x = point_of(e, theta, &len), *g = malloc(len * sizeof *g);
    st = gpc_evidence_eval_inducing(e, x, bound, g);
    *gmax = 0.0;
    for (size_t j = 0; j < (move ? len : p); j++)
        *gmax = fmax(*gmax, fabs(g[j]));
    free(x);
    free(g);
    return st;
}

static void check_binary(gsl_rng *r)
{
    gsl_matrix *X;
    gsl_vector *y;
    circle_problem(r, 60, &X, &y);
    double theta[3] = {0.5, 0.3, -0.2}, th_fixed[3], th_moved[3], th_again[3];
    gpc_evidence *e = evidence(X, y, 2, GPC_LIK_LOGISTIC, GPC_METHOD_SVGP, "ard", theta, 6);
    TEST_OK(e != NULL, "binary: the evidence is set up (%s)", e ? "" : gpc_errmsg());
    if (!e)
        return;
    check_gradient(e, theta, "binary logistic, ard, 6 inducing inputs");
    gsl_matrix *Z0 = gsl_matrix_alloc(6, 2);
    gsl_matrix_memcpy(Z0, gpc_evidence_inducing_inputs(e));

    double b_fixed, b_moved, b_again, g_fixed, g_moved, g_again;
    gpc_evidence_set_inducing_inputs(e, Z0);
    int st = fit(e, theta, 0, th_fixed, &b_fixed, &g_fixed);
    gpc_evidence_set_inducing_inputs(e, Z0);
    st = st == GPC_OK ? fit(e, theta, 1, th_moved, &b_moved, &g_moved) : st;
    gsl_matrix *Z1 = gsl_matrix_alloc(6, 2);
    gsl_matrix_memcpy(Z1, gpc_evidence_inducing_inputs(e));
    gpc_evidence_set_inducing_inputs(e, Z0);
    st = st == GPC_OK ? fit(e, theta, 1, th_again, &b_again, &g_again) : st;
    TEST_OK(st == GPC_OK && g_fixed < 1e-5 && g_moved < 1e-5,
            "binary: both fits converge, max |gradient| %.2g (theta) and %.2g (theta and Z)",
            g_fixed, g_moved);
    TEST_OK(b_moved > b_fixed + 1e-3,
            "binary: moving Z raises the optimum, %.10g against %.10g with Z fixed", b_moved,
            b_fixed);
    double moved = 0.0;
    for (size_t i = 0; i < 12; i++)
        moved = fmax(moved, fabs(Z1->data[i] - Z0->data[i]));
    TEST_OK(moved > 1e-2, "binary: the inputs moved (by up to %.3g)", moved);
    TEST_OK(b_again == b_moved && memcmp(th_again, th_moved, sizeof th_moved) == 0 &&
                memcmp(gpc_evidence_inducing_inputs(e)->data, Z1->data, 12 * sizeof(double)) == 0,
            "binary: a second run from the same start gives the same bits");
    gsl_matrix_free(Z0);
    gsl_matrix_free(Z1);
    gpc_evidence_free(e);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* Three classes by the sign pattern of two coordinates, softmax likelihood. */
static void check_softmax(gsl_rng *r)
{
    gsl_matrix *X;
    gsl_vector *y;
    linear_problem(r, 45, 2, &X, &y);
    for (size_t i = 0; i < X->size1; i++) {
        double a = gsl_matrix_get(X, i, 0), b = gsl_matrix_get(X, i, 1);
        gsl_vector_set(y, i, a > 0.3 ? 0 : b > 0 ? 1 : 2);
    }
    double theta[2] = {0.7, 0.2};
    gpc_evidence *e = evidence(X, y, 3, GPC_LIK_SOFTMAX, GPC_METHOD_SVGP_MC, "se", theta, 5);
    TEST_OK(e != NULL, "softmax: the evidence is set up (%s)", e ? "" : gpc_errmsg());
    if (e)
        check_gradient(e, theta, "softmax, 3 classes, se, 5 inducing inputs");
    gpc_evidence_free(e);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

int main(void)
{
    gpc_gsl_quiet();
    gpc_verbosity = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    check_binary(r);
    check_softmax(r);
    gsl_rng_free(r);
    return tap_done();
}
