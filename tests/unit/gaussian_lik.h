/* gaussian_lik.h — a Gaussian likelihood N(y | f, s2) for the tests of EP
 * and mean field: its tilted distribution is Gaussian, so those methods have
 * exact answers (GP regression) to be checked against, on a 1-D regression
 * problem y = sin(2x) + noise. */
#ifndef GPC_TEST_GAUSSIAN_LIK_H
#define GPC_TEST_GAUSSIAN_LIK_H

#include <math.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

/* A gpc_ep_moments; ctx points to s2. */
static void gaussian_moments(const void *ctx, double y, double m, double v, double *logZ,
                             double *mean, double *var)
{
    double s2 = *(const double *)ctx, t = v + s2;
    *logZ = -0.5 * log(2 * M_PI * t) - 0.5 * (y - m) * (y - m) / t;
    *mean = m + v * (y - m) / t;
    *var = v - v * v / t;
}

/* n inputs uniform on [-2, 2] and targets sin(2x) + U(-0.1, 0.1). */
static void regression_data(gsl_rng *r, size_t n, gsl_matrix **X, gsl_vector **y)
{
    *X = gsl_matrix_alloc(n, 1);
    *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double x = 4 * gsl_rng_uniform(r) - 2;
        gsl_matrix_set(*X, i, 0, x);
        gsl_vector_set(*y, i, sin(2 * x) + 0.2 * (gsl_rng_uniform(r) - 0.5));
    }
}

#endif
