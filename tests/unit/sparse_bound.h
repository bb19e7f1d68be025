/* sparse_bound — the whole sparse variational bound as the tests
 * difference it: each kernel's K_ZZ factored (NAN when any would need
 * jitter, so that differences never cross a change of jitter), the shard
 * statistics of all rows of X (labels y, likelihood lik with its ctx), and
 * the global part at the data scale, with its gradients where the
 * pointers are not NULL.  Below it, a small problem to evaluate it on and
 * its gradients' worst errors against differences. */
#ifndef GPC_TEST_SPARSE_BOUND_H
#define GPC_TEST_SPARSE_BOUND_H

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/class-kernels.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/natgrad.h"
#include "sparse/shard.h"
#include "random_matrix.h"

static inline double sparse_bound(const gpc_kernel *k, const gsl_matrix *Z, const gsl_matrix *M,
                                  gsl_matrix *const *S, const gsl_matrix *X, const double *y,
                                  gpc_shard_lik lik, const void *ctx, double scale,
                                  gsl_matrix *dM, gsl_matrix **dS, double *dtheta,
                                  gsl_matrix *dZ)
{
    size_t m = Z->size1, C = M->size1, nK = gpc_shard_kernel_count(k);
    gpc_class_kernels *ck = gpc_class_kernels_alloc(k, C);
    gsl_matrix **L = malloc(nK * sizeof *L);
    double jitter, elbo = NAN;
    int ok = 1;
    for (size_t g = 0; g < nK; g++) {
        L[g] = gsl_matrix_alloc(m, m);
        ok &= gpc_inducing_factor(ck->k[g], Z, L[g], &jitter) == GPC_OK && jitter == 0.0;
    }
    gpc_shard_stats *st = gpc_shard_stats_alloc(m, C, Z->size2, gpc_kernel_nparams(k));
    if (ok && gpc_shard_add_rows(k, Z, L, M, S, X, y, 0, lik, ctx, st) == GPC_OK)
        gpc_bound_eval(k, Z, L, M, S, st, scale, &elbo, dM, dS, NULL, dtheta, dZ);
    gpc_shard_stats_free(st);
    for (size_t g = 0; g < nK; g++)
        gsl_matrix_free(L[g]);
    free(L);
    gpc_class_kernels_free(ck);
    return elbo;
}

/* ---- a small sparse problem ------------------------------------------ */

#define SPARSE_CMAX 8 /* classes a problem may have */

/* Everything the whole bound needs, so that the tests pass one pointer:
 * kernel k (with its hyperparameters theta, owned, may be NULL), inducing
 * inputs Z, rows X with labels y, q's means M (C x m) and covariances
 * S[c], the likelihood lik with its ctx (which the test owns) and the
 * minibatch scale (0 is taken as 1). */
typedef struct {
    gpc_kernel *k;
    double *theta;
    gsl_matrix *Z, *X, *M, *S[SPARSE_CMAX];
    double *y, scale;
    size_t C;
    gpc_shard_lik lik;
    const void *ctx;
} sparse_problem;

/* The bound of pr, with its gradients where the pointers are not NULL. */
static inline double sparse_problem_bound(sparse_problem *pr, gsl_matrix *dM, gsl_matrix **dS,
                                          double *dtheta, gsl_matrix *dZ)
{
    return sparse_bound(pr->k, pr->Z, pr->M, pr->S, pr->X, pr->y, pr->lik, pr->ctx,
                        pr->scale > 0 ? pr->scale : 1.0, dM, dS, dtheta, dZ);
}

/* pr->k parsed from spec over two inputs with hyperparameters drawn
 * U(lo, lo + 0.8) (near 0: well-conditioned kernels), then m inducing
 * inputs and n rows drawn U(-1, 1), in this order; labels, M and S are the
 * test's. */
static inline void sparse_problem_draw(sparse_problem *pr, gsl_rng *r, const char *spec,
                                       double lo, size_t m, size_t n)
{
    gpc_kernel_parse(spec, 2, &pr->k);
    size_t np = gpc_kernel_nparams(pr->k);
    pr->theta = malloc(np * sizeof *pr->theta);
    for (size_t j = 0; j < np; j++)
        pr->theta[j] = 0.8 * gsl_rng_uniform(r) + lo;
    gpc_kernel_set_params(pr->k, pr->theta);
    pr->Z = random_matrix(r, m, 2);
    pr->X = random_matrix(r, n, 2);
}

/* A random symmetric positive definite m x m matrix, 0.3 R R' + 0.2 I. */
static inline gsl_matrix *random_spd(gsl_rng *r, size_t m)
{
    gsl_matrix *R = random_matrix(r, m, m), *S = gsl_matrix_alloc(m, m);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 0.3, R, R, 0.0, S);
    for (size_t i = 0; i < m; i++)
        gsl_matrix_set(S, i, i, gsl_matrix_get(S, i, i) + 0.2);
    gsl_matrix_free(R);
    return S;
}

/* n targets drawn U(-0.5, 0.5). */
static inline double *uniform_targets(gsl_rng *r, size_t n)
{
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        y[i] = gsl_rng_uniform(r) - 0.5;
    return y;
}

/* n class indices drawn uniformly from 0 .. C - 1. */
static inline double *uniform_labels(gsl_rng *r, size_t n, size_t C)
{
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        y[i] = (double)gsl_rng_uniform_int(r, C);
    return y;
}

/* Frees what pr holds (not its likelihood's ctx). */
static inline void sparse_problem_free(sparse_problem *pr)
{
    for (size_t c = 0; c < pr->C; c++)
        gsl_matrix_free(pr->S[c]);
    gsl_matrix_free(pr->Z);
    gsl_matrix_free(pr->X);
    gsl_matrix_free(pr->M);
    free(pr->y);
    free(pr->theta);
    gpc_kernel_free(pr->k);
}

/* q's gradients, one buffer of each shape for pr. */
typedef struct {
    gsl_matrix *M, *S[SPARSE_CMAX], *Z;
    double *theta;
} sparse_grads;

static inline sparse_grads sparse_grads_alloc(const sparse_problem *pr)
{
    size_t m = pr->Z->size1;
    sparse_grads g = {gsl_matrix_alloc(pr->C, m), {NULL}, gsl_matrix_alloc(m, pr->Z->size2),
                      malloc(gpc_kernel_nparams(pr->k) * sizeof(double))};
    for (size_t c = 0; c < pr->C; c++)
        g.S[c] = gsl_matrix_alloc(m, m);
    return g;
}

static inline void sparse_grads_free(const sparse_problem *pr, sparse_grads *g)
{
    for (size_t c = 0; c < pr->C; c++)
        gsl_matrix_free(g->S[c]);
    gsl_matrix_free(g->M);
    gsl_matrix_free(g->Z);
    free(g->theta);
}

/* The largest |gradient| in q (means and covariances). */
static inline double sparse_q_gradient(const sparse_problem *pr, const sparse_grads *g)
{
    double w = 0.0;
    for (size_t i = 0; i < g->M->size1 * g->M->size2; i++)
        w = fmax(w, fabs(g->M->data[i]));
    for (size_t c = 0; c < pr->C; c++)
        for (size_t i = 0; i < g->S[c]->size1 * g->S[c]->size2; i++)
            w = fmax(w, fabs(g->S[c]->data[i]));
    return w;
}

/* One natural step of size rho for every class of pr, all from the
 * gradient at the same q; *elbo (if not NULL) is the bound before the
 * step, and a bound that is not finite refuses the step. */
static inline int sparse_natural_step(sparse_problem *pr, double rho, double *elbo)
{
    sparse_grads g = sparse_grads_alloc(pr);
    double e = sparse_problem_bound(pr, g.M, g.S, NULL, NULL);
    if (elbo)
        *elbo = e;
    int rc = isfinite(e) ? GPC_OK : GPC_ENUM;
    for (size_t c = 0; c < pr->C && rc == GPC_OK; c++) {
        gsl_vector_view mc = gsl_matrix_row(pr->M, c), dmc = gsl_matrix_row(g.M, c);
        rc = gpc_natgrad_step(&mc.vector, pr->S[c], NULL, &dmc.vector, g.S[c], rho);
    }
    sparse_grads_free(pr, &g);
    return rc;
}

/* ---- gradients against differences ------------------------------------ */

/* The fourth-order central difference of the bound of pr in *x, step h,
 * with *x2 (if not NULL) moved alongside: a symmetric pair of S.  When x
 * points into pr->theta, the kernel is given the hyperparameters after
 * each move and at the end. */
static inline double sparse_diff(sparse_problem *pr, double *x, double *x2, int in_theta)
{
    static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
    double x0 = *x, h = 1e-4, d = 0.0;
    for (int i = 0; i < 4; i++) {
        *x = x0 + step[i] * h;
        if (x2)
            *x2 = *x;
        if (in_theta)
            gpc_kernel_set_params(pr->k, pr->theta);
        d += coef[i] * sparse_problem_bound(pr, NULL, NULL, NULL, NULL) / (12 * h);
    }
    *x = x0;
    if (x2)
        *x2 = x0;
    if (in_theta)
        gpc_kernel_set_params(pr->k, pr->theta);
    return d;
}

/* The worst relative error |d - want[i]| / (1 + |d|) of the gradient want
 * against the differences d of the bound in the n coordinates x[i]. */
static inline double sparse_diff_worst(sparse_problem *pr, double *x, const double *want, size_t n,
                                       int in_theta)
{
    double w = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = sparse_diff(pr, x + i, NULL, in_theta);
        w = fmax(w, fabs(d - want[i]) / (1 + fabs(d)));
    }
    return w;
}

/* The same for a symmetric S (m x m, packed) and its gradient dS: each
 * off-diagonal pair moves together, so its difference is the sum of the
 * pair's gradients. */
static inline double sparse_diff_worst_sym(sparse_problem *pr, gsl_matrix *S, const gsl_matrix *dS)
{
    double w = 0.0;
    for (size_t i = 0; i < S->size1; i++)
        for (size_t j = 0; j <= i; j++) {
            double *a = gsl_matrix_ptr(S, i, j), *b = gsl_matrix_ptr(S, j, i);
            double d = sparse_diff(pr, a, i == j ? NULL : b, 0);
            double want = i == j ? gsl_matrix_get(dS, i, i)
                                 : gsl_matrix_get(dS, i, j) + gsl_matrix_get(dS, j, i);
            w = fmax(w, fabs(d - want) / (1 + fabs(d)));
        }
    return w;
}

/* The bound at pr and the worst relative errors of its gradients in M,
 * S, the hyperparameters and Z against fourth-order differences. */
typedef struct {
    double bound, M, S, theta, Z;
} sparse_grad_errors;

static inline sparse_grad_errors sparse_gradient_errors(sparse_problem *pr)
{
    sparse_grads g = sparse_grads_alloc(pr);
    sparse_grad_errors e = {sparse_problem_bound(pr, g.M, g.S, g.theta, g.Z), 0, 0, 0, 0};
    e.M = sparse_diff_worst(pr, pr->M->data, g.M->data, pr->C * pr->M->size2, 0);
    for (size_t c = 0; c < pr->C; c++)
        e.S = fmax(e.S, sparse_diff_worst_sym(pr, pr->S[c], g.S[c]));
    e.theta = sparse_diff_worst(pr, pr->theta, g.theta, gpc_kernel_nparams(pr->k), 1);
    e.Z = sparse_diff_worst(pr, pr->Z->data, g.Z->data, pr->Z->size1 * pr->Z->size2, 0);
    sparse_grads_free(pr, &g);
    return e;
}

/* ---- the dense fit the bound is when nothing is sparse ---------------- */

/* The dense fit's q(f) = N(K nu, (K^-1 + diag(lam))^-1) of one class:
 * its marginals mu, s2 and KL(q || N(0, K)), in the stable form of Rasmussen & Williams
 * (3.26-3.29): with R = diag(sqrt(lam)) and B = I + R K R, S = K - K R B^-1
 * R K and KL = 1/2 (nu' K nu - tr(R B^-1 R K) + log|B|), so K is never
 * inverted. */
static inline double dense_q(const gsl_matrix *K, const double *lam, const double *nu, double *mu,
                             double *s2)
{
    size_t n = K->size1;
    gsl_matrix *B = gsl_matrix_alloc(n, n), *RK = gsl_matrix_alloc(n, n),
               *BRK = gsl_matrix_alloc(n, n);
    gsl_vector_const_view nv = gsl_vector_const_view_array(nu, n);
    gsl_vector_view mv = gsl_vector_view_array(mu, n);
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
    gsl_blas_dgemv(CblasNoTrans, 1.0, K, &nv.vector, 0.0, &mv.vector);
    double ldB = 0.0, trace = 0.0, quad;
    for (size_t i = 0; i < n; i++) {
        double v = gsl_matrix_get(K, i, i);
        for (size_t l = 0; l < n; l++) /* (K R B^-1 R K)_ii */
            v -= gsl_matrix_get(RK, l, i) * gsl_matrix_get(BRK, l, i);
        s2[i] = v;
        ldB += 2 * log(gsl_matrix_get(B, i, i));
        trace += sqrt(lam[i]) * gsl_matrix_get(BRK, i, i);
    }
    gsl_blas_ddot(&nv.vector, &mv.vector, &quad);
    gsl_matrix_free(B);
    gsl_matrix_free(RK);
    gsl_matrix_free(BRK);
    return 0.5 * (quad - trace + ldB);
}

#endif
