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
static inline void gaussian_moments(const void *ctx, double y, double m, double v, double *logZ,
                             double *mean, double *var)
{
    double s2 = *(const double *)ctx, t = v + s2;
    *logZ = -0.5 * log(2 * M_PI * t) - 0.5 * (y - m) * (y - m) / t;
    *mean = m + v * (y - m) / t;
    *var = v - v * v / t;
}

/* A gpc_shard_lik: the expected log likelihood of y under N(f_c, V) for
 * each of C marginals N(mu_c, s2_c), log N(y | mu_c, V) - s2_c / (2 V),
 * with its derivatives; ctx points to V. */
static inline double gaussian_expect(const void *ctx, size_t C, double y, const double *mu,
                                     const double *s2, double *g, double *h)
{
    double V = *(const double *)ctx, sum = 0.0;
    for (size_t c = 0; c < C; c++) {
        double r = y - mu[c];
        sum += -0.5 * log(2 * M_PI * V) - 0.5 * r * r / V - 0.5 * s2[c] / V;
        g[c] = r / V;
        h[c] = -0.5 / V;
    }
    return sum;
}

/* n inputs uniform on [-2, 2] and targets sin(2x) + U(-0.1, 0.1). */
static inline void regression_data(gsl_rng *r, size_t n, gsl_matrix **X, gsl_vector **y)
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
