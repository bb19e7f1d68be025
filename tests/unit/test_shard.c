/* Shard statistics, with a Gaussian likelihood per class (lambda = sum_c
 * log N(y | mu_c, v) - s2_c / (2 v), exact in closed form): the sum of
 * lambda against the marginals case by case; G, H, the hyperparameter and
 * inducing-input gradients against central differences of that sum in M,
 * S, theta and Z (L held fixed: the shard's part of the chain rule); two shards adding up to
 * one over all rows; a non-finite likelihood refused naming the row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "sparse/inducing.h"
#include "sparse/shard.h"
#include "random_matrix.h"
#include "tap.h"

#include "gaussian_lik.h"

static const double V = 0.3; /* the Gaussian likelihood's variance */

static double gauss_lik(const void *ctx, size_t C, double y, const double *mu, const double *s2,
                        double *g, double *h)
{
    (void)ctx;
    return gaussian_expect(&V, C, y, mu, s2, g, h);
}

static double nan_lik(const void *ctx, size_t C, double y, const double *mu, const double *s2,
                      double *g, double *h)
{
    double l = gauss_lik(ctx, C, y, mu, s2, g, h);
    return y > 0.9 ? NAN : l;
}

typedef struct {
    gpc_kernel *k;
    gsl_matrix *Z, *X, *L, *M;
    gsl_matrix *S[2];
    double *y;
} problem;

static double lambda_sum(problem *pr)
{
    gpc_shard_stats *st = gpc_shard_stats_alloc(pr->Z->size1, 2, pr->Z->size2,
                                                gpc_kernel_nparams(pr->k));
    gpc_shard_add_rows(pr->k, pr->Z, &pr->L, pr->M, pr->S, pr->X, pr->y, 0, gauss_lik, NULL, st);
    double l = st->lambda;
    gpc_shard_stats_free(st);
    return l;
}

/* Fourth-order central difference of lambda_sum in *x. */
static double diff(problem *pr, double *x, void (*refresh)(problem *))
{
    static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
    double x0 = *x, h = 1e-4, d = 0.0;
    for (int i = 0; i < 4; i++) {
        *x = x0 + step[i] * h;
        if (refresh)
            refresh(pr);
        d += coef[i] * lambda_sum(pr) / (12 * h);
    }
    *x = x0;
    if (refresh)
        refresh(pr);
    return d;
}

static double *theta_buf;
static void set_theta(problem *pr) { gpc_kernel_set_params(pr->k, theta_buf); }

static void check_spec(gsl_rng *r, const char *spec)
{
    size_t m = 5, n = 9;
    problem pr;
    gpc_kernel_parse(spec, 2, &pr.k);
    size_t np = gpc_kernel_nparams(pr.k);
    theta_buf = malloc(np * sizeof *theta_buf);
    for (size_t j = 0; j < np; j++)
        theta_buf[j] = gsl_rng_uniform(r) - 0.7;
    gpc_kernel_set_params(pr.k, theta_buf);
    pr.Z = random_matrix(r, m, 2);
    pr.X = random_matrix(r, n, 2);
    pr.M = random_matrix(r, 2, m);
    pr.y = malloc(n * sizeof *pr.y);
    for (size_t i = 0; i < n; i++)
        pr.y[i] = gsl_rng_uniform(r) * 2 - 1;
    for (int c = 0; c < 2; c++) { /* S_c = 0.3 R R' + 0.1 I */
        gsl_matrix *R = random_matrix(r, m, m);
        pr.S[c] = gsl_matrix_alloc(m, m);
        gsl_matrix_set_identity(pr.S[c]);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 0.3, R, R, 0.1, pr.S[c]);
        gsl_matrix_free(R);
    }
    /* L the factor of K_ZZ + I/2, fixed: the Nystrom residual through it
     * stays clear of 0 however theta and Z move a little */
    gsl_matrix *Kzz = gsl_matrix_alloc(m, m);
    gpc_kernel_matrix(pr.k, pr.Z, Kzz);
    for (size_t j = 0; j < m; j++)
        Kzz->data[j * (m + 1)] += 0.5;
    gsl_linalg_cholesky_decomp1(Kzz);
    for (size_t j = 0; j < m; j++)
        for (size_t l = j + 1; l < m; l++)
            gsl_matrix_set(Kzz, j, l, 0.0);
    pr.L = Kzz;
    gpc_shard_stats *st = gpc_shard_stats_alloc(m, 2, 2, np);
    int rc = gpc_shard_add_rows(pr.k, pr.Z, &pr.L, pr.M, pr.S, pr.X, pr.y, 0, gauss_lik, NULL, st);
    TEST_OK(rc == GPC_OK && st->rows == n, "%s: the shard's statistics", spec);

    /* lambda case by case through the marginals */
    gsl_matrix *Kzx = gsl_matrix_alloc(m, n);
    gsl_vector *kxx = gsl_vector_alloc(n);
    gpc_kernel_cross(pr.k, pr.Z, pr.X, Kzx);
    gpc_kernel_diag(pr.k, pr.X, kxx);
    double want = 0.0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 2; c++) {
            double mu, s2, g, h;
            gsl_vector_view ki = gsl_matrix_column(Kzx, i);
            gsl_vector_const_view mc = gsl_matrix_const_row(pr.M, c);
            gpc_inducing_marginal(pr.L, &ki.vector, gsl_vector_get(kxx, i), &mc.vector, pr.S[c],
                                  &mu, &s2);
            want += gauss_lik(NULL, 1, pr.y[i], &mu, &s2, &g, &h);
        }
    TEST_CLOSE(st->lambda, want, 1e-13, 0, "%s: the sum of lambda is the marginals'", spec);

    double worst = 0.0;
    for (int c = 0; c < 2; c++)
        for (size_t j = 0; j < m; j++) {
            double d = diff(&pr, pr.M->data + c * pr.M->tda + j, NULL);
            worst = fmax(worst, fabs(d - gsl_matrix_get(st->G, c, j)) / (1 + fabs(d)));
        }
    TEST_CLOSE(worst, 0, 0, 1e-8, "%s: G_c = d lambda / d m_c", spec);
    worst = 0.0;
    for (int c = 0; c < 2; c++)
        for (size_t a = 0; a < m; a++)
            for (size_t b = 0; b < m; b++) {
                double d = diff(&pr, pr.S[c]->data + a * pr.S[c]->tda + b, NULL);
                worst = fmax(worst, fabs(d - gsl_matrix_get(st->H[c], a, b)) / (1 + fabs(d)));
            }
    TEST_CLOSE(worst, 0, 0, 1e-8, "%s: H_c = d lambda / d S_c, entry by entry", spec);
    worst = 0.0;
    for (size_t j = 0; j < np; j++) {
        double d = diff(&pr, theta_buf + j, set_theta);
        worst = fmax(worst, fabs(d - st->dtheta[j]) / (1 + fabs(d)));
    }
    TEST_CLOSE(worst, 0, 0, 1e-8, "%s: the hyperparameter gradient through k_i and k_ii", spec);
    worst = 0.0;
    for (size_t j = 0; j < m; j++)
        for (size_t l = 0; l < 2; l++) {
            double d = diff(&pr, pr.Z->data + j * pr.Z->tda + l, NULL);
            worst = fmax(worst, fabs(d - gsl_matrix_get(st->dZ, j, l)) / (1 + fabs(d)));
        }
    TEST_CLOSE(worst, 0, 0, 1e-8, "%s: the gradient in Z through k_i", spec);

    /* two shards add up to one */
    gsl_matrix_view top = gsl_matrix_submatrix(pr.X, 0, 0, 4, 2),
                    rest = gsl_matrix_submatrix(pr.X, 4, 0, n - 4, 2);
    gpc_shard_stats *s1 = gpc_shard_stats_alloc(m, 2, 2, np), *s2 = gpc_shard_stats_alloc(m, 2, 2, np);
    gpc_shard_add_rows(pr.k, pr.Z, &pr.L, pr.M, pr.S, &top.matrix, pr.y, 0, gauss_lik, NULL, s1);
    gpc_shard_add_rows(pr.k, pr.Z, &pr.L, pr.M, pr.S, &rest.matrix, pr.y + 4, 4, gauss_lik, NULL, s2);
    gpc_shard_stats_add(s1, s2);
    double e = fabs(s1->lambda - st->lambda) / fabs(st->lambda);
    for (size_t j = 0; j < np; j++)
        e = fmax(e, fabs(s1->dtheta[j] - st->dtheta[j]) / (1 + fabs(st->dtheta[j])));
    for (size_t j = 0; j < m * 2; j++)
        e = fmax(e, fabs(s1->dZ->data[j] - st->dZ->data[j]) / (1 + fabs(st->dZ->data[j])));
    TEST_OK(s1->rows == n && e < 1e-13, "%s: two shards add up to the whole (%.3g)", spec, e);

    /* a likelihood that is not finite at row 7 (1-based), in the second shard */
    pr.y[6] = 0.95;
    gpc_shard_stats_zero(s2);
    rc = gpc_shard_add_rows(pr.k, pr.Z, &pr.L, pr.M, pr.S, &rest.matrix, pr.y + 4, 4, nan_lik, NULL, s2);
    TEST_OK(rc == GPC_ENUM && strstr(gpc_errmsg(), "row 7:") && s2->rows == 0,
            "%s: a non-finite likelihood is refused naming the row, adding nothing: %s", spec,
            gpc_errmsg());

    gpc_shard_stats_free(st);
    gpc_shard_stats_free(s1);
    gpc_shard_stats_free(s2);
    gsl_matrix_free(Kzx);
    gsl_vector_free(kxx);
    gsl_matrix_free(pr.Z);
    gsl_matrix_free(pr.X);
    gsl_matrix_free(pr.M);
    gsl_matrix_free(pr.L);
    gsl_matrix_free(pr.S[0]);
    gsl_matrix_free(pr.S[1]);
    free(pr.y);
    free(theta_buf);
    gpc_kernel_free(pr.k);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    const char *specs[] = {"ard+jitter", "matern52*periodic@1+linear", "(rq@1+bias)*matern12ard"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        check_spec(r, specs[s]);
    gsl_rng_free(r);
    return tap_done();
}
