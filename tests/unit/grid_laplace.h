/* grid_laplace.h — the binary Laplace approximation on the process grid
 * (linalg/pdense) against the same on plain matrices, for the unit test
 * on one process (a 1 x 1 grid, LAPACK) and the MPI test on several ranks
 * (ScaLAPACK).  Include after tap.h. */
#ifndef GPC_TEST_GRID_LAPLACE_H
#define GPC_TEST_GRID_LAPLACE_H

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "base/comm.h"
#include "base/err.h"
#include "kernels/kernel.h"
#include "linalg/pdense.h"
#include "methods/laplace.h"
#include "problems.h"

static double grid_rel(double got, double want)
{
    return fabs(got - want) / fmax(fabs(want), 1e-300);
}

/* The largest relative difference between two vectors, each entry scaled
 * by the largest of want (a gradient's small entries are sums of larger
 * cancelling ones). */
static double grid_vec_rel(const double *got, const double *want, size_t n)
{
    double big = 0.0, diff = 0.0;
    for (size_t i = 0; i < n; i++) {
        big = fmax(big, fabs(want[i]));
        diff = fmax(diff, isfinite(got[i]) ? fabs(got[i] - want[i]) : INFINITY);
    }
    return diff / fmax(big, 1e-300);
}

/* Evidence, gradient, predictions and a mode set from outside, on the
 * grid g against plain matrices, to rtol; and every rank holding the same
 * bits of the gradient. */
static void grid_laplace_compare(gsl_rng *r, const gpc_pgrid *g, const char *spec, gpc_lik lik,
                                 size_t n, double rtol)
{
    size_t d = 3, m = 40;
    gsl_matrix *X, *Xs;
    gsl_vector *y, *ys;
    linear_problem(r, n, d, &X, &y);
    linear_problem(r, m, d, &Xs, &ys);
    gpc_kernel *k;
    gpc_kernel_parse(spec, d, &k);
    size_t p = gpc_kernel_nparams(k);
    double *theta = malloc(p * sizeof *theta);
    gpc_kernel_default_params(k, theta);
    theta[0] = 1.5; /* a strong signal: Newton takes several steps */
    gpc_kernel_set_params(k, theta);
    gpc_laplace *plain = gpc_laplace_alloc_on(n, p, lik, NULL);
    gpc_laplace *dist = gpc_laplace_alloc_on(n, p, lik, g);
    double e0, e1, *g0 = malloc(p * sizeof *g0), *g1 = malloc(p * sizeof *g1);
    int s0 = gpc_laplace_evidence(plain, k, X, y, &e0, g0);
    int s1 = gpc_laplace_evidence(dist, k, X, y, &e1, g1);
    const char *ln = lik == GPC_LIK_LOGISTIC ? "logistic" : "probit";
    TEST_OK(s0 == GPC_OK && s1 == GPC_OK, "%s %s n=%zu on %dx%d/%d: both fit", spec, ln, n,
            g->p, g->q, g->nb);
    TEST_OK(grid_rel(e1, e0) <= rtol, "%s %s: log evidence %.17g equals plain %.17g", spec, ln,
            e1, e0);
    double gr = grid_vec_rel(g1, g0, p);
    TEST_OK(gr <= rtol, "%s %s: gradient equals plain (%.2g relative)", spec, ln, gr);
    double *g1r = malloc(p * sizeof *g1r);
    for (size_t j = 0; j < p; j++)
        g1r[j] = g1[j];
    gpc_comm_broadcast(g->comm, g1r, p);
    int same = 1;
    for (size_t j = 0; j < p; j++)
        same &= g1r[j] == g1[j];
    TEST_OK(gpc_comm_any(g->comm, !same) == 0, "%s %s: every rank has rank 0's gradient bits",
            spec, ln);

    /* predictions from the fit, then from the mode set from outside */
    gsl_matrix *Ks = gsl_matrix_alloc(n, m), *Ks1 = gsl_matrix_alloc(n, m);
    gsl_vector *kss = gsl_vector_alloc(m), *mu0 = gsl_vector_alloc(m), *mu1 = gsl_vector_alloc(m);
    gsl_vector *v0 = gsl_vector_alloc(m), *v1 = gsl_vector_alloc(m);
    gpc_kernel_cross(k, X, Xs, Ks);
    gpc_kernel_diag(k, Xs, kss);
    gpc_laplace_set_mode(plain, y, plain->f);
    gsl_matrix_memcpy(Ks1, Ks);
    gpc_laplace_predict(plain, Ks1, kss, mu0, v0);
    gpc_laplace_kernel(dist, k, X, y);
    int s2 = gpc_laplace_set_mode(dist, y, plain->f);
    TEST_OK(s2 == GPC_OK && grid_rel(dist->log_evidence, plain->log_evidence) <= rtol,
            "%s %s: the mode set from outside gives the evidence", spec, ln);
    gsl_matrix_memcpy(Ks1, Ks);
    gpc_laplace_predict(dist, Ks1, kss, mu1, v1);
    TEST_OK(grid_vec_rel(mu1->data, mu0->data, m) <= rtol &&
                grid_vec_rel(v1->data, v0->data, m) <= rtol,
            "%s %s: latent means and variances equal plain (%.2g, %.2g)", spec, ln,
            grid_vec_rel(mu1->data, mu0->data, m), grid_vec_rel(v1->data, v0->data, m));
    gsl_matrix_free(Ks);
    gsl_matrix_free(Ks1);
    gsl_vector *vs[] = {kss, mu0, mu1, v0, v1, y, ys};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
        gsl_vector_free(vs[i]);
    free(g0);
    free(g1);
    free(g1r);
    free(theta);
    gpc_laplace_free(plain);
    gpc_laplace_free(dist);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_matrix_free(Xs);
}

/* The kernels and likelihoods every grid test runs: jitter (the diagonal
 * the cross-covariance lacks), a bias, a product, a Matern term. */
static void grid_laplace_all(gsl_rng *r, const gpc_pgrid *g, size_t n, double rtol)
{
    const char *specs[] = {"ard+jitter", "se+bias+jitter", "ard@1-2*periodic@3+jitter",
                           "matern32+linear"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        grid_laplace_compare(r, g, specs[s], s % 2 ? GPC_LIK_PROBIT : GPC_LIK_LOGISTIC, n,
                             rtol);
}

#endif
