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
#include "tap.h"

/* The dense fit: its bound, means mu and variances s2.  In the stable
 * form of Rasmussen & Williams (3.26-3.29): with B = I + R K R, R =
 * diag(sqrt(lambda)), S = K - K R B^-1 R K, and KL(N(m, S) || N(0, K)) =
 * 1/2 (nu' K nu - tr(R B^-1 R K) + log|B|), so K is never inverted. */
#define DAMP 0.1

static double dense_fit(gpc_lik lik, const gsl_matrix *K, const double *y, double *mu, double *s2)
{
    size_t n = K->size1;
    gsl_matrix *B = gsl_matrix_alloc(n, n), *RK = gsl_matrix_alloc(n, n),
               *BRK = gsl_matrix_alloc(n, n);
    gsl_vector *nu = gsl_vector_calloc(n), *m = gsl_vector_alloc(n);
    double *lam = calloc(n, sizeof *lam), ldB = 0.0, trace = 0.0;
    for (int it = 0; it < 50000; it++) {
        /* RK = R K, B = I + R K R, BRK = B^-1 R K */
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                double rk = sqrt(lam[i]) * gsl_matrix_get(K, i, j);
                gsl_matrix_set(RK, i, j, rk);
                gsl_matrix_set(B, i, j, (i == j) + rk * sqrt(lam[j]));
            }
        gsl_linalg_cholesky_decomp1(B);
        gsl_matrix_memcpy(BRK, RK);
        for (size_t j = 0; j < n; j++) {
            gsl_vector_view col = gsl_matrix_column(BRK, j);
            gsl_linalg_cholesky_svx(B, &col.vector);
        }
        gsl_blas_dgemv(CblasNoTrans, 1.0, K, nu, 0.0, m);
        double move = 0.0;
        ldB = 0.0;
        trace = 0.0;
        for (size_t i = 0; i < n; i++) {
            double v = gsl_matrix_get(K, i, i), g, h;
            for (size_t l = 0; l < n; l++) /* (K R B^-1 R K)_ii */
                v -= gsl_matrix_get(RK, l, i) * gsl_matrix_get(BRK, l, i);
            mu[i] = gsl_vector_get(m, i);
            s2[i] = v;
            ldB += 2 * log(gsl_matrix_get(B, i, i));
            trace += sqrt(lam[i]) * gsl_matrix_get(BRK, i, i);
            gpc_lik_expect(lik, y[i], mu[i], s2[i], &g, &h);
            /* damped: the plain fixed point can oscillate */
            double l2 = (1 - DAMP) * lam[i] - DAMP * 2 * h,
                   n2 = (1 - DAMP) * gsl_vector_get(nu, i) + DAMP * g;
            move = fmax(move, fmax(fabs(l2 - lam[i]), fabs(n2 - gsl_vector_get(nu, i))));
            lam[i] = l2;
            gsl_vector_set(nu, i, n2);
        }
        if (move < 1e-15)
            break;
    }
    double sumE = 0.0, quad;
    for (size_t i = 0; i < n; i++)
        sumE += gpc_lik_expect(lik, y[i], mu[i], s2[i], NULL, NULL);
    gsl_blas_ddot(nu, m, &quad);
    double kl = 0.5 * (quad - trace + ldB);
    gsl_matrix_free(B);
    gsl_matrix_free(RK);
    gsl_matrix_free(BRK);
    gsl_vector_free(nu);
    gsl_vector_free(m);
    free(lam);
    return sumE - kl;
}

static void check(gsl_rng *r, gpc_lik lik, const char *spec)
{
    size_t n = 12;
    gsl_matrix *X = random_matrix(r, n, 2), *K = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    double y[12], mu[12], s2[12], jitter;
    for (size_t i = 0; i < n; i++)
        y[i] = gsl_matrix_get(X, i, 0) + 0.3 * gsl_rng_uniform(r) > 0 ? 1.0 : -1.0;
    gpc_kernel *k;
    gpc_kernel_parse(spec, 2, &k);
    double th[3] = {1.0, 1.5, 0.0}; /* length scale e^-0.75: K well conditioned */
    gpc_kernel_set_params(k, th);
    gpc_kernel_matrix(k, X, K);
    double dense = dense_fit(lik, K, y, mu, s2);

    /* sparse, Z = X: natural steps of 0.5 on q from the prior */
    gpc_inducing_factor(k, X, L, &jitter);
    gsl_matrix *M = gsl_matrix_calloc(1, n), *S[1] = {gsl_matrix_alloc(n, n)},
               *dM = gsl_matrix_alloc(1, n), *dS[1] = {gsl_matrix_alloc(n, n)};
    gsl_matrix_set_identity(S[0]);
    gpc_shard_stats *st = gpc_shard_stats_alloc(n, 1, 2, gpc_kernel_nparams(k));
    double elbo = NAN;
    for (int it = 0; it < 400; it++) {
        gsl_vector_view mc = gsl_matrix_row(M, 0), dmc = gsl_matrix_row(dM, 0);
        gpc_shard_stats_zero(st);
        gpc_shard_add_rows(k, X, &L, M, S, X, y, 0, gpc_shard_binary_lik, &lik, st);
        gpc_bound_eval(k, X, &L, M, S, st, 1.0, &elbo, dM, dS, NULL, NULL, NULL);
        gpc_natgrad_step(&mc.vector, S[0], NULL, &dmc.vector, dS[0], 0.5);
    }
    TEST_OK(jitter == 0.0, "%s: K_ZZ factors without jitter", spec);
    TEST_CLOSE(elbo, dense, 1e-8, 0, "%s, %s, Z = X: the sparse bound at its optimum is the "
               "dense variational fit's (%.10g)", gpc_lik_name(lik), spec, dense);
    /* the marginals of f = L v */
    gsl_matrix *LS = gsl_matrix_alloc(n, n), *V = gsl_matrix_alloc(n, n);
    gsl_vector *f = gsl_vector_alloc(n);
    gsl_vector_view mc = gsl_matrix_row(M, 0);
    gsl_blas_dgemv(CblasNoTrans, 1.0, L, &mc.vector, 0.0, f);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, L, S[0], 0.0, LS);
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
    gpc_shard_stats_free(st);
    gsl_matrix_free(X);
    gsl_matrix_free(K);
    gsl_matrix_free(L);
    gsl_matrix_free(M);
    gsl_matrix_free(S[0]);
    gsl_matrix_free(dM);
    gsl_matrix_free(dS[0]);
    gsl_matrix_free(LS);
    gsl_matrix_free(V);
    gsl_vector_free(f);
    gpc_kernel_free(k);
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
