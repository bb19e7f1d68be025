/* The sparse variational model over data in memory (sparse/svgp): the
 * full-batch fit of q reaches the bound's optimum (with a Gaussian
 * likelihood in one step, and there the exact GP regression evidence when
 * Z = X; with logistic and probit where the bound's gradient in q
 * vanishes), the gradient at that optimum is the derivative of the
 * optimised bound in the hyperparameters (against differences of whole
 * refits), the blocked sums equal one shard's, and predictions are the
 * marginals case by case. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/shard.h"
#include "sparse/svgp.h"
#include "gaussian_lik.h"
#include "random_matrix.h"
#include "tap.h"

static const gpc_svgp_fit_opts TIGHT = {1e-15, 5000};

/* Binary labels from the sign of a smooth function of the first column,
 * with a few flipped. */
static double *binary_labels(gsl_rng *r, const gsl_matrix *X)
{
    double *y = malloc(X->size1 * sizeof *y);
    for (size_t i = 0; i < X->size1; i++)
        y[i] = sin(3 * gsl_matrix_get(X, i, 0)) + 0.4 * (gsl_rng_uniform(r) - 0.5) > 0 ? 1.0
                                                                                          : -1.0;
    return y;
}

static gpc_kernel *kernel(const char *spec, size_t dim, const double *theta)
{
    gpc_kernel *k;
    gpc_kernel_parse(spec, dim, &k);
    gpc_kernel_set_params(k, theta);
    return k;
}

/* Z = X, Gaussian likelihood: one natural step of size 1 from the prior
 * is the optimum, and the bound there is log N(y | 0, K + V I). */
static void check_gaussian(gsl_rng *r)
{
    size_t n = 15;
    gsl_matrix *X;
    gsl_vector *yv;
    regression_data(r, n, &X, &yv);
    double th[2] = {0.3, 0.5}, V = 0.04;
    gpc_kernel *k = kernel("se", 1, th);
    gpc_svgp *s = gpc_svgp_alloc(1, n, 1);
    gsl_matrix_memcpy(s->Z, X);
    TEST_OK(gpc_svgp_factor(s, k) == GPC_OK && s->jitter == 0.0, "K_XX factors without jitter");
    gpc_svgp_lik lik = {gaussian_expect, &V};
    gpc_svgp_fit_result res;
    TEST_OK(gpc_svgp_fit_q(s, k, X, yv->data, lik, &TIGHT, &res) == GPC_OK && res.converged,
            "Gaussian likelihood: the fit converges");
    TEST_OK(res.steps <= 3, "Gaussian likelihood: in %d steps (one reaches the optimum, one "
            "finds nothing left to gain)", res.steps);
    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(k, X, A);
    for (size_t i = 0; i < n; i++)
        A->data[i * (n + 1)] += V;
    gsl_linalg_cholesky_decomp1(A);
    gsl_vector *a = gsl_vector_alloc(n);
    gsl_vector_memcpy(a, yv);
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, A, a);
    double quad, logdet = 0.0;
    gsl_blas_ddot(a, a, &quad);
    for (size_t i = 0; i < n; i++)
        logdet += 2 * log(gsl_matrix_get(A, i, i));
    double exact = -0.5 * (quad + logdet + n * log(2 * M_PI));
    TEST_CLOSE(res.bound, exact, 1e-11, 0, "Gaussian likelihood, Z = X: the fitted bound is "
               "the exact log marginal likelihood (%.10g)", exact);
    gsl_matrix_free(A);
    gsl_vector_free(a);
    gsl_matrix_free(X);
    gsl_vector_free(yv);
    gpc_svgp_free(s);
    gpc_kernel_free(k);
}

/* The optimised bound at theta, refitted from the prior. */
static double fitted_bound(gpc_svgp *s, gpc_kernel *k, const double *theta, const gsl_matrix *X,
                           const double *y, gpc_svgp_lik lik)
{
    gpc_kernel_set_params(k, theta);
    gpc_svgp_factor(s, k);
    gpc_svgp_reset_q(s);
    gpc_svgp_fit_result res;
    gpc_svgp_fit_q(s, k, X, y, lik, &TIGHT, &res);
    return res.bound;
}

/* m < n inducing inputs, a binary likelihood: at the fitted q the bound's
 * gradient in q vanishes, and the gradient in the hyperparameters equals
 * central differences of the refitted bound. */
static void check_binary(gsl_rng *r, gpc_lik gl, const char *spec, const double *theta)
{
    size_t n = 60, m = 9, d = 2;
    gsl_matrix *X = random_matrix(r, n, d);
    double *y = binary_labels(r, X);
    gpc_kernel *k = kernel(spec, d, theta);
    size_t np = gpc_kernel_nparams(k);
    gpc_svgp *s = gpc_svgp_alloc(1, m, d);
    gpc_inducing_kmeanspp(X, m, 5, s->Z);
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &gl};
    double bound = fitted_bound(s, k, theta, X, y, lik);
    TEST_OK(isfinite(bound) && bound < 0, "%s, %s: the fitted bound %.10g", gpc_lik_name(gl),
            spec, bound);

    /* the gradient in q at the fitted q */
    gpc_shard_stats *st = gpc_shard_stats_alloc(m, 1, d, np);
    gsl_matrix *dM = gsl_matrix_alloc(1, m), *dS[1] = {gsl_matrix_alloc(m, m)};
    double b2;
    gpc_svgp_stats(s, k, X, y, lik, st);
    gpc_bound_eval(k, s->Z, s->L, s->M, s->S, st, 1.0, &b2, dM, dS, NULL, NULL, NULL);
    double gmax = 0.0;
    for (size_t j = 0; j < m; j++) {
        gmax = fmax(gmax, fabs(gsl_matrix_get(dM, 0, j)));
        for (size_t l = 0; l < m; l++)
            gmax = fmax(gmax, fabs(gsl_matrix_get(dS[0], j, l)));
    }
    /* a bound within rounding (1e-14) of its optimum leaves a gradient of
     * about its square root */
    TEST_CLOSE(gmax, 0, 0, 1e-6, "%s, %s: the bound's gradient in q vanishes at the fit",
               gpc_lik_name(gl), spec);
    TEST_CLOSE(b2, bound, 1e-14, 0, "%s, %s: the fit reports the bound at its q",
               gpc_lik_name(gl), spec);

    double *g = malloc(np * sizeof *g), *t = malloc(np * sizeof *t), b3;
    gpc_svgp_gradient(s, k, X, y, lik, &b3, g, NULL);
    TEST_CLOSE(b3, bound, 1e-14, 0, "%s, %s: the gradient's bound is the fit's",
               gpc_lik_name(gl), spec);
    for (size_t j = 0; j < np; j++) {
        double h = 1e-4;
        for (size_t i = 0; i < np; i++)
            t[i] = theta[i];
        t[j] = theta[j] + h;
        double up = fitted_bound(s, k, t, X, y, lik);
        t[j] = theta[j] - h;
        double down = fitted_bound(s, k, t, X, y, lik);
        TEST_CLOSE(g[j], (up - down) / (2 * h), 1e-6, 1e-7, "%s, %s: d bound / d %s at the "
                   "fitted q is the derivative of the refitted bound", gpc_lik_name(gl), spec,
                   gpc_kernel_param_name(k, j));
    }
    free(g);
    free(t);
    gsl_matrix_free(dM);
    gsl_matrix_free(dS[0]);
    gpc_shard_stats_free(st);
    gpc_svgp_free(s);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(y);
}

/* More rows than one block: the blocked sums equal one shard of all rows,
 * and the predictions equal each case's marginal. */
static void check_blocks(gsl_rng *r)
{
    size_t n = 1300, m = 12, d = 3;
    gsl_matrix *X = random_matrix(r, n, d);
    double *y = binary_labels(r, X), th[4] = {0.2, 0.5, -0.3, 0.1};
    gpc_kernel *k = kernel("ard", d, th);
    size_t np = gpc_kernel_nparams(k);
    gpc_svgp *s = gpc_svgp_alloc(1, m, d);
    gpc_inducing_kmeanspp(X, m, 9, s->Z);
    gpc_svgp_factor(s, k);
    for (size_t j = 0; j < m; j++) { /* some q away from the prior */
        gsl_matrix_set(s->M, 0, j, 0.3 * j - 1.0);
        gsl_matrix_set(s->S[0], j, j, 0.5 + 0.01 * j);
    }
    gpc_lik gl = GPC_LIK_LOGISTIC;
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &gl};
    gpc_shard_stats *a = gpc_shard_stats_alloc(m, 1, d, np), *b = gpc_shard_stats_alloc(m, 1, d, np);
    gpc_svgp_stats(s, k, X, y, lik, a);
    gpc_shard_add_rows(k, s->Z, s->L, s->M, s->S, X, y, 0, gpc_shard_binary_lik, &gl, b);
    double e = fabs(a->lambda - b->lambda) / fabs(b->lambda);
    for (size_t j = 0; j < m; j++) {
        e = fmax(e, fabs(gsl_matrix_get(a->G, 0, j) - gsl_matrix_get(b->G, 0, j)));
        for (size_t l = 0; l < m; l++)
            e = fmax(e, fabs(gsl_matrix_get(a->H[0], j, l) - gsl_matrix_get(b->H[0], j, l)));
    }
    for (size_t j = 0; j < np; j++)
        e = fmax(e, fabs(a->dtheta[j] - b->dtheta[j]) / (1 + fabs(b->dtheta[j])));
    TEST_CLOSE(e, 0, 0, 1e-10, "%zu rows in blocks: the statistics equal one shard's", n);
    TEST_OK(a->rows == n, "every row counted once");

    gsl_matrix *mean = gsl_matrix_alloc(n, 1), *var = gsl_matrix_alloc(n, 1);
    gsl_vector *kz = gsl_vector_alloc(m), *kxx = gsl_vector_alloc(1);
    gpc_svgp_predict(s, k, X, mean, var);
    double em = 0.0;
    for (size_t i = 0; i < n; i += 97) {
        gsl_matrix_const_view xi = gsl_matrix_const_submatrix(X, i, 0, 1, d);
        gsl_matrix_view kc = gsl_matrix_view_vector(kz, m, 1);
        gpc_kernel_cross(k, s->Z, &xi.matrix, &kc.matrix);
        gpc_kernel_diag(k, &xi.matrix, kxx);
        double mu, s2;
        gsl_vector_const_view m0 = gsl_matrix_const_row(s->M, 0);
        gpc_inducing_marginal(s->L[0], kz, gsl_vector_get(kxx, 0), &m0.vector, s->S[0], &mu, &s2);
        em = fmax(em, fabs(mu - gsl_matrix_get(mean, i, 0)) + fabs(s2 - gsl_matrix_get(var, i, 0)));
    }
    TEST_CLOSE(em, 0, 0, 1e-13, "predictions are each case's marginal");
    gsl_matrix_free(mean);
    gsl_matrix_free(var);
    gsl_vector_free(kz);
    gsl_vector_free(kxx);
    gpc_shard_stats_free(a);
    gpc_shard_stats_free(b);
    gpc_svgp_free(s);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(y);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    check_gaussian(r);
    double th_ard[3] = {0.5, 0.3, -0.2}, th_prod[5] = {0.2, 0.4, 0.1, -0.5, -1.0};
    check_binary(r, GPC_LIK_LOGISTIC, "ard", th_ard);
    check_binary(r, GPC_LIK_PROBIT, "ard", th_ard);
    check_binary(r, GPC_LIK_LOGISTIC, "matern32@1*se@2+bias", th_prod);
    check_blocks(r);
    gsl_rng_free(r);
    return tap_done();
}
