/* The importance sampler of kernel hyperparameters (importance.h) against a
 * long random-walk Metropolis run on the same one-hyperparameter target,
 * written here independently:
 *     pi(phi) ∝ Exp(phi | psi) prod_c N(ybar_c | 0, I + phi x x')
 * (a linear kernel with its variance phi), and the rate update against its
 * formula. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "err.h"
#include "importance.h"
#include "kernel.h"
#include "problems.h"
#include "tap.h"

#define N 8
#define NC 2

/* log pi(phi) up to a constant, by a dense factorisation of I + phi x x'. */
static double log_target(double phi, double psi, const double *x, const double *ybar)
{
    gsl_matrix *A = gsl_matrix_alloc(N, N);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++)
            gsl_matrix_set(A, i, j, phi * x[i] * x[j] + (i == j));
    gsl_linalg_cholesky_decomp1(A);
    double lt = -psi * phi, logdet = 0.0;
    for (size_t i = 0; i < N; i++)
        logdet += 2.0 * log(gsl_matrix_get(A, i, i));
    for (size_t c = 0; c < NC; c++) {
        gsl_vector_const_view y = gsl_vector_const_view_array(ybar + c * N, N);
        gsl_vector *z = gsl_vector_alloc(N);
        gsl_linalg_cholesky_solve(A, &y.vector, z);
        double q = 0.0;
        for (size_t i = 0; i < N; i++)
            q += ybar[c * N + i] * gsl_vector_get(z, i);
        lt -= 0.5 * q + 0.5 * logdet;
        gsl_vector_free(z);
    }
    gsl_matrix_free(A);
    return lt;
}

static void test_against_metropolis(gsl_rng *r)
{
    double x[N], ybar[NC * N], psi = 0.7;
    for (size_t i = 0; i < N; i++)
        x[i] = -1.0 + 2.0 * (double)i / (N - 1);
    for (size_t i = 0; i < NC * N; i++)
        ybar[i] = 4.0 * x[i % N] * (i < N ? 1.0 : -0.6) + 0.3 * gsl_ran_gaussian(r, 1.0);

    /* Metropolis on u = log phi (the Jacobian phi included) */
    size_t m = 400000, burn = 2000, batches = 100;
    double u = 0.0, lt = log_target(1.0, psi, x, ybar) + u, sum[100] = {0};
    size_t per = (m - burn) / batches;
    for (size_t s = 0; s < m; s++) {
        double v = u + 0.8 * gsl_ran_gaussian(r, 1.0), lv = log_target(exp(v), psi, x, ybar) + v;
        if (log(gsl_rng_uniform_pos(r)) < lv - lt) {
            u = v;
            lt = lv;
        }
        if (s >= burn && (s - burn) / per < batches)
            sum[(s - burn) / per] += exp(u);
    }
    double mh = 0.0, mh2 = 0.0;
    for (size_t b = 0; b < batches; b++) {
        double bm = sum[b] / (double)per;
        mh += bm / batches;
        mh2 += bm * bm / batches;
    }
    double mh_se = sqrt((mh2 - mh * mh) / (batches - 1));

    /* the importance sampler, repeated for its own standard error */
    gsl_matrix *X = gsl_matrix_alloc(N, 1);
    for (size_t i = 0; i < N; i++)
        gsl_matrix_set(X, i, 0, x[i]);
    double th[1] = {0.0};
    gpc_kernel *k = kernel_at("linear", 1, th);
    size_t reps = 10;
    double is = 0.0, is2 = 0.0, ess = 0.0;
    int st = GPC_OK;
    for (size_t t = 0; t < reps && st == GPC_OK; t++) {
        double mean, e;
        st = gpc_importance_mean(k, X, ybar, NC, &psi, 20000, r, &mean, &e);
        is += mean / reps;
        is2 += mean * mean / reps;
        ess += e / reps;
    }
    double is_se = sqrt((is2 - is * is) / (reps - 1) / reps);
    TEST_OK(st == GPC_OK, "importance: %zu x 20000 draws (effective sample size %.0f each)", reps,
            ess);
    double z = (is - mh) / sqrt(is_se * is_se + mh_se * mh_se);
    TEST_OK(fabs(z) < 4.0, "importance: E[phi] %.5f +- %.5f, Metropolis (%zu steps) %.5f +- "
            "%.5f (z = %.2f)", is, is_se, m, mh, mh_se, z);
    /* and it moved: the prior mean is 1 / psi */
    TEST_OK(fabs(is - 1.0 / psi) > 10.0 * is_se, "importance: the posterior mean %.4f differs "
            "from the prior mean %.4f", is, 1.0 / psi);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
}

static void test_rates(void)
{
    double phi[2] = {0.5, 4.0}, psi[2];
    gpc_importance_rates(2, phi, 1e-6, 1e-6, psi);
    TEST_CLOSE(psi[0], (1.0 + 1e-6) / (1e-6 + 0.5), 1e-15, 0.0, "rates: Gamma posterior mean");
    TEST_CLOSE(psi[1], (1.0 + 1e-6) / (1e-6 + 4.0), 1e-15, 0.0, "rates: second parameter");
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    test_against_metropolis(r);
    test_rates();
    gsl_rng_free(r);
    return tap_done();
}
