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

#include "base/err.h"
#include "hyper/importance.h"
#include "hyper/prior.h"
#include "kernels/kernel.h"
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
    /* is2 - is^2 is the variance over the reps (divided by reps) */
    double is_se = sqrt((is2 - is * is) / (reps - 1));
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

/* log prod_c N(ybar_c | 0, I + b x1 x1' + (1 - b) x2 x2'), dense. */
static double log_lik_weights(double b, const double *x1, const double *x2, const double *ybar)
{
    gsl_matrix *A = gsl_matrix_alloc(N, N);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++)
            gsl_matrix_set(A, i, j, b * x1[i] * x1[j] + (1 - b) * x2[i] * x2[j] + (i == j));
    gsl_linalg_cholesky_decomp1(A);
    double lt = 0.0, logdet = 0.0;
    for (size_t i = 0; i < N; i++)
        logdet += 2.0 * log(gsl_matrix_get(A, i, i));
    gsl_vector *z = gsl_vector_alloc(N);
    for (size_t c = 0; c < NC; c++) {
        gsl_vector_const_view y = gsl_vector_const_view_array(ybar + c * N, N);
        gsl_linalg_cholesky_solve(A, &y.vector, z);
        double q = 0.0;
        for (size_t i = 0; i < N; i++)
            q += ybar[c * N + i] * gsl_vector_get(z, i);
        lt -= 0.5 * q + 0.5 * logdet;
    }
    gsl_vector_free(z);
    gsl_matrix_free(A);
    return lt;
}

/* Weights on the simplex: the posterior mean of beta_1^2 for the kernel
 * linear@1 + linear@2 on the simplex, from the sampler's draws of the
 * hierarchical Dirichlet prior, against a two-dimensional quadrature (step
 * 0.02) over
 * the unnormalised log weights (u1, u2) with the prior density of
 * gpc_prior_weight (checked against independent draws in test_prior). */
static void test_weights(gsl_rng *r)
{
    double x1[N], x2[N], ybar[NC * N], shape = 4.0, rate = 1.0;
    for (size_t i = 0; i < N; i++) {
        x1[i] = -1.0 + 2.0 * (double)i / (N - 1);
        x2[i] = gsl_ran_gaussian(r, 1.0);
    }
    for (size_t i = 0; i < NC * N; i++)
        ybar[i] = 1.5 * x1[i % N] * (i < N ? 1.0 : -0.6) + 0.8 * gsl_ran_gaussian(r, 1.0);

    /* quadrature on a grid of step h over [-20, 5]^2: beta_1^2 depends on
     * u1 - u2 only, so the likelihood is tabulated by that difference */
    double h = 0.02, lo = -20.0;
    size_t G = 1251;
    double *lp = malloc(G * sizeof *lp), *ll = malloc((2 * G - 1) * sizeof *ll);
    for (size_t i = 0; i < G; i++)
        lp[i] = gpc_prior_weight(lo + h * (double)i, shape, rate, NULL);
    for (size_t k = 0; k < 2 * G - 1; k++) {
        double d = h * ((double)k - (double)(G - 1)), b = 1.0 / (1.0 + exp(-d));
        ll[k] = log_lik_weights(b, x1, x2, ybar);
    }
    double mx = -INFINITY, num = 0.0, den = 0.0;
    for (size_t k = 0; k < 2 * G - 1; k++)
        mx = fmax(mx, ll[k]);
    for (size_t i = 0; i < G; i++)
        for (size_t j = 0; j < G; j++) {
            size_t k = i + G - 1 - j;
            double w = exp(lp[i] + lp[j] + ll[k] - mx), b = 1.0 / (1.0 + exp(-h * ((double)k - (double)(G - 1))));
            num += w * b;
            den += w;
        }
    double want = num / den;

    gsl_matrix *X = gsl_matrix_alloc(N, 2);
    for (size_t i = 0; i < N; i++) {
        gsl_matrix_set(X, i, 0, x1[i]);
        gsl_matrix_set(X, i, 1, x2[i]);
    }
    double th[2] = {0.0, 0.0}, psi[2] = {1.0, 1.0};
    gpc_kernel *k = kernel_at("linear@1+linear@2:simplex=4,1", 2, th);
    size_t reps = 10;
    double is = 0.0, is2 = 0.0, mean[2];
    int st = GPC_OK;
    for (size_t t = 0; t < reps && st == GPC_OK; t++) {
        st = gpc_importance_mean(k, X, ybar, NC, psi, 20000, r, mean, NULL);
        is += mean[0] / reps;
        is2 += mean[0] * mean[0] / reps;
        TEST_CLOSE(mean[0] + mean[1], 1.0, 1e-12, 0.0, "weights: the posterior means sum to one");
    }
    double se = sqrt((is2 - is * is) / (reps - 1)); /* of the mean of the reps */
    TEST_OK(st == GPC_OK && fabs(is - want) < 4.0 * se, "weights: E[beta_1^2] %.5f +- "
            "%.5f by importance sampling, %.5f by quadrature", is, se, want);
    TEST_OK(fabs(want - 0.5) > 0.1, "weights: the posterior mean %.4f is away from the prior "
            "mean 1/2", want);
    free(lp);
    free(ll);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    test_against_metropolis(r);
    test_rates();
    test_weights(r);
    gsl_rng_free(r);
    return tap_done();
}
