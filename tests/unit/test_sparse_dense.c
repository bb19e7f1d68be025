/* The sparse bound is the dense variational method when nothing is sparse:
 * with the inducing inputs at the training inputs and a binary likelihood
 * (logistic, probit), q(v) iterated to its optimum by natural steps gives
 * the same bound and the same marginals as an independent dense
 * Gaussian-posterior variational fit, maximising E_q[log p(y|f)] -
 * KL(q(f) || p(f)) over q(f) = N(m, S) by the fixed point of Opper &
 * Archambeau (2009): S = (K^-1 + diag(lambda))^-1, m = K nu, with lambda_i =
 * -2 dE_i/ds2_i and nu_i = dE_i/dmu_i at the optimum. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "liks/expect.h"
#include "liks/lik.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/natgrad.h"
#include "sparse/shard.h"
#include "random_matrix.h"
#include "sparse_bound.h"
#include "tap.h"

/* The dense fit: its bound, means mu and variances s2, by the damped
 * fixed point on lambda and nu (sparse_bound.h's dense_q for q). */
#define DAMP 0.1

static double dense_fit(gpc_lik lik, const gsl_matrix *K, const double *y, double *mu, double *s2)
{
    size_t n = K->size1;
    double *lam = calloc(n, sizeof *lam), *nu = calloc(n, sizeof *nu), kl = 0.0;
    for (int it = 0; it < 50000; it++) {
        kl = dense_q(K, lam, nu, mu, s2);
        double move = 0.0;
        for (size_t i = 0; i < n; i++) {
            double g, h;
            gpc_lik_expect(lik, y[i], mu[i], s2[i], &g, &h);
            /* damped: the plain fixed point can oscillate */
            double l2 = (1 - DAMP) * lam[i] - DAMP * 2 * h, n2 = (1 - DAMP) * nu[i] + DAMP * g;
            move = fmax(move, fmax(fabs(l2 - lam[i]), fabs(n2 - nu[i])));
            lam[i] = l2;
            nu[i] = n2;
        }
        if (move < 1e-15)
            break;
    }
    double sumE = 0.0;
    for (size_t i = 0; i < n; i++)
        sumE += gpc_lik_expect(lik, y[i], mu[i], s2[i], NULL, NULL);
    free(lam);
    free(nu);
    return sumE - kl;
}

static void check(gsl_rng *r, gpc_lik lik, const char *spec)
{
    size_t n = 12;
    sparse_problem pr = {.C = 1, .lik = gpc_shard_binary_lik, .ctx = &lik};
    pr.X = random_matrix(r, n, 2);
    gsl_matrix *K = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    double mu[12], s2[12], jitter;
    pr.y = malloc(n * sizeof *pr.y);
    for (size_t i = 0; i < n; i++)
        pr.y[i] = gsl_matrix_get(pr.X, i, 0) + 0.3 * gsl_rng_uniform(r) > 0 ? 1.0 : -1.0;
    gpc_kernel_parse(spec, 2, &pr.k);
    double th[3] = {1.0, 1.5, 0.0}; /* length scale e^-0.75: K well conditioned */
    gpc_kernel_set_params(pr.k, th);
    gpc_kernel_matrix(pr.k, pr.X, K);
    double dense = dense_fit(lik, K, pr.y, mu, s2);

    /* sparse, Z = X: natural steps of 0.5 on q from the prior */
    pr.Z = gsl_matrix_alloc(n, 2);
    gsl_matrix_memcpy(pr.Z, pr.X);
    pr.M = gsl_matrix_calloc(1, n);
    pr.S[0] = gsl_matrix_alloc(n, n);
    gsl_matrix_set_identity(pr.S[0]);
    double elbo = NAN;
    for (int it = 0; it < 400; it++)
        sparse_natural_step(&pr, 0.5, &elbo);
    gpc_inducing_factor(pr.k, pr.Z, L, &jitter);
    TEST_OK(jitter == 0.0, "%s: K_ZZ factors without jitter", spec);
    TEST_CLOSE(elbo, dense, 1e-8, 0, "%s, %s, Z = X: the sparse bound at its optimum is the "
               "dense variational fit's (%.10g)", gpc_lik_name(lik), spec, dense);
    /* the marginals of f = L v */
    gsl_matrix *LS = gsl_matrix_alloc(n, n), *V = gsl_matrix_alloc(n, n);
    gsl_vector *f = gsl_vector_alloc(n);
    gsl_vector_view mc = gsl_matrix_row(pr.M, 0);
    gsl_blas_dgemv(CblasNoTrans, 1.0, L, &mc.vector, 0.0, f);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, L, pr.S[0], 0.0, LS);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, LS, L, 0.0, V);
    double em = 0.0, ev = 0.0;
    for (size_t i = 0; i < n; i++) {
        em = fmax(em, fabs(gsl_vector_get(f, i) - mu[i]));
        ev = fmax(ev, fabs(gsl_matrix_get(V, i, i) - s2[i]) / s2[i]);
    }
    TEST_CLOSE(em, 0, 0, 1e-7, "%s, %s, Z = X: the latent means are the dense fit's",
               gpc_lik_name(lik), spec);
    TEST_CLOSE(ev, 0, 0, 1e-7, "%s, %s, Z = X: the latent variances are the dense fit's",
               gpc_lik_name(lik), spec);
    gsl_matrix_free(K);
    gsl_matrix_free(L);
    gsl_matrix_free(LS);
    gsl_matrix_free(V);
    gsl_vector_free(f);
    sparse_problem_free(&pr);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 23);
    check(r, GPC_LIK_PROBIT, "se");
    check(r, GPC_LIK_LOGISTIC, "se");
    check(r, GPC_LIK_LOGISTIC, "matern52ard");
    gsl_rng_free(r);
    return tap_done();
}
