/* Laplace approximation: the mode is a fixed point, the evidence matches a
 * naive dense implementation and a one-point problem solved by hand, the
 * gradient matches central differences, predictions match the dense formula. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "io/matio.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "methods/laplace.h"
#include "problems.h"
#include "tap.h"

/* A small problem: n points in d dims, labels from a noisy linear rule. */
/* The Laplace evidence for central_difference (problems.h). */
typedef struct {
    gpc_laplace *w;
    const gsl_matrix *X;
    const gsl_vector *y;
} laplace_at;

static double laplace_evidence_at(void *ctx, const gpc_kernel *k)
{
    laplace_at *c = ctx;
    double z;
    gpc_laplace_evidence(c->w, k, c->X, c->y, &z, NULL);
    return z;
}

static void make_problem(gsl_rng *r, size_t n, size_t d, gsl_matrix **X, gsl_vector **y)
{
    *X = gsl_matrix_alloc(n, d);
    *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (size_t l = 0; l < d; l++) {
            double x = 2.0 * gsl_rng_uniform(r) - 1.0;
            gsl_matrix_set(*X, i, l, x);
            s += (l + 1.0) * x;
        }
        s += 0.5 * (gsl_rng_uniform(r) - 0.5);
        gsl_vector_set(*y, i, s > 0 ? 1.0 : -1.0);
    }
}

static double max_abs(const gsl_vector *v)
{
    double m = 0.0;
    for (size_t i = 0; i < v->size; i++)
        m = fmax(m, fabs(gsl_vector_get(v, i)));
    return m;
}

/* log|A| of a general matrix by LU (A is destroyed). */
static double log_det(gsl_matrix *A)
{
    gsl_permutation *p = gsl_permutation_alloc(A->size1);
    int sign;
    gsl_linalg_LU_decomp(A, p, &sign);
    double ld = gsl_linalg_LU_lndet(A);
    gsl_permutation_free(p);
    return ld;
}

/* Naive reference: Newton f <- (K^-1 + W)^-1 (W f + d1) written as
 * f <- K (I + W K)^-1 (W f + d1) with an LU solve, 100 iterations, then
 * log Z = log p(y|f) - 1/2 f' K^-1 f - 1/2 log|I + K W|. */
static double naive_evidence(gpc_lik lik, const gsl_matrix *K, const gsl_vector *y,
                             gsl_vector *f)
{
    size_t n = K->size1;
    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gsl_vector *b = gsl_vector_alloc(n), *x = gsl_vector_alloc(n), *W = gsl_vector_alloc(n);
    gsl_permutation *p = gsl_permutation_alloc(n);
    double ll = 0.0;
    gsl_vector_set_zero(f);
    for (int it = 0; it < 100; it++) {
        ll = 0.0;
        for (size_t i = 0; i < n; i++) {
            double d1, d2, fi = gsl_vector_get(f, i);
            ll += gpc_lik_logp(lik, gsl_vector_get(y, i), fi, &d1, &d2, NULL);
            gsl_vector_set(W, i, -d2);
            gsl_vector_set(b, i, -d2 * fi + d1);
        }
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                gsl_matrix_set(A, i, j, (i == j) + gsl_vector_get(W, i) * gsl_matrix_get(K, i, j));
        int sign;
        gsl_linalg_LU_decomp(A, p, &sign);
        gsl_linalg_LU_solve(A, p, b, x); /* x = (I + W K)^-1 b = K^-1 f_new */
        gsl_blas_dgemv(CblasNoTrans, 1.0, K, x, 0.0, f);
    }
    /* at the fixed point K^-1 f = x from the last solve, up to convergence */
    double quad;
    gsl_blas_ddot(f, x, &quad);
    ll = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d2;
        ll += gpc_lik_logp(lik, gsl_vector_get(y, i), gsl_vector_get(f, i), NULL, &d2, NULL);
        gsl_vector_set(W, i, -d2);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(A, i, j, (i == j) + gsl_matrix_get(K, i, j) * gsl_vector_get(W, j));
    double z = ll - 0.5 * quad - 0.5 * log_det(A);
    gsl_matrix_free(A);
    gsl_vector_free(b);
    gsl_vector_free(x);
    gsl_vector_free(W);
    gsl_permutation_free(p);
    return z;
}

static void test_against_naive(gsl_rng *r, gpc_lik lik, const char *spec)
{
    gsl_matrix *X;
    gsl_vector *y;
    size_t n = 25, d = 3;
    make_problem(r, n, d, &X, &y);
    gpc_kernel *k;
    gpc_kernel_parse(spec, d, &k);
    size_t p = gpc_kernel_nparams(k);
    double *theta = malloc(p * sizeof *theta);
    for (size_t j = 0; j < p; j++)
        theta[j] = 1.5 * gsl_rng_uniform(r) - 0.5;
    gpc_kernel_set_params(k, theta);
    gpc_laplace *w = gpc_laplace_alloc(n, p, lik);
    double logz;
    int st = gpc_laplace_evidence(w, k, X, y, &logz, NULL);
    TEST_OK(st == GPC_OK, "%s %s: mode found", gpc_lik_name(lik), spec);

    /* fixed point f = K grad log p(y|f) */
    gsl_vector *Kd1 = gsl_vector_alloc(n);
    gsl_blas_dgemv(CblasNoTrans, 1.0, w->K, w->d1, 0.0, Kd1);
    gsl_vector_sub(Kd1, w->f);
    TEST_CLOSE(max_abs(Kd1), 0.0, 0, 1e-10 * (1 + max_abs(w->f)),
               "%s %s: mode satisfies f = K grad log p", gpc_lik_name(lik), spec);

    gsl_vector *fn = gsl_vector_alloc(n);
    double zn = naive_evidence(lik, w->K, y, fn);
    TEST_CLOSE(logz, zn, 1e-11, 0, "%s %s: log evidence equals the dense formula",
               gpc_lik_name(lik), spec);
    gsl_vector_sub(fn, w->f);
    TEST_CLOSE(max_abs(fn), 0, 0, 1e-9, "%s %s: mode equals the dense Newton mode",
               gpc_lik_name(lik), spec);

    /* gradient against central differences of the evidence */
    double *g = malloc(p * sizeof *g);
    gpc_laplace_evidence(w, k, X, y, &logz, g);
    laplace_at at = {w, X, y};
    for (size_t j = 0; j < p; j++) {
        double fd = central_difference(k, j, 1e-5, laplace_evidence_at, &at);
        TEST_CLOSE(g[j], fd, 1e-6, 1e-8, "%s %s: d logZ / d %s against central differences",
                   gpc_lik_name(lik), spec, gpc_kernel_param_name(k, j));
    }

    /* predictions: latent variance k** - k*' (K + W^-1)^-1 k*, computed densely
     * as k** - k*' W^1/2 B^-1 W^1/2 k* with B from scratch */
    gpc_laplace_evidence(w, k, X, y, &logz, NULL);
    size_t m = 4;
    gsl_matrix *Xs, *Ks = gsl_matrix_alloc(n, m), *Ks2 = gsl_matrix_alloc(n, m);
    gsl_vector *ys, *kss = gsl_vector_alloc(m), *mu = gsl_vector_alloc(m), *var = gsl_vector_alloc(m);
    make_problem(r, m, d, &Xs, &ys);
    gpc_kernel_cross(k, X, Xs, Ks);
    gsl_matrix_memcpy(Ks2, Ks);
    gpc_kernel_diag(k, Xs, kss);
    gpc_laplace_predict(w, Ks, kss, mu, var);
    gsl_matrix *B = gsl_matrix_alloc(n, n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(B, i, j, (i == j) + gsl_matrix_get(w->K, i, j) *
                                                   gsl_vector_get(w->sW, i) *
                                                   gsl_vector_get(w->sW, j));
    gsl_linalg_cholesky_decomp1(B);
    for (size_t c = 0; c < m; c++) {
        gsl_vector *v = gsl_vector_alloc(n);
        double mean = 0.0;
        for (size_t i = 0; i < n; i++) {
            double kc = gsl_matrix_get(Ks2, i, c);
            mean += kc * gsl_vector_get(w->d1, i);
            gsl_vector_set(v, i, kc * gsl_vector_get(w->sW, i));
        }
        gsl_vector *u = gsl_vector_alloc(n);
        gsl_linalg_cholesky_solve(B, v, u);
        double q;
        gsl_blas_ddot(v, u, &q);
        TEST_CLOSE(gsl_vector_get(mu, c), mean, 1e-12, 1e-14, "%s %s: latent mean %zu",
                   gpc_lik_name(lik), spec, c);
        TEST_CLOSE(gsl_vector_get(var, c), gsl_vector_get(kss, c) - q, 1e-10, 1e-13,
                   "%s %s: latent variance %zu", gpc_lik_name(lik), spec, c);
        gsl_vector_free(v);
        gsl_vector_free(u);
    }
    gsl_matrix_free(B);
    gsl_matrix_free(Xs);
    gsl_matrix_free(Ks);
    gsl_matrix_free(Ks2);
    gsl_vector_free(ys);
    gsl_vector_free(kss);
    gsl_vector_free(mu);
    gsl_vector_free(var);
    gsl_vector_free(fn);
    gsl_vector_free(Kd1);
    free(g);
    free(theta);
    gpc_laplace_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* One training point: the mode solves f = k d/df log p(y|f) (found here by
 * bisection) and log Z = log p(y|f) - f^2/(2k) - 1/2 log(1 + k W). */
static void test_one_point(gpc_lik lik, double y, double kval)
{
    double lo = -50, hi = 50;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi), d1;
        gpc_lik_logp(lik, y, mid, &d1, NULL, NULL);
        if (d1 - mid / kval > 0)
            lo = mid;
        else
            hi = mid;
    }
    double f = 0.5 * (lo + hi), d2;
    double lp = gpc_lik_logp(lik, y, f, NULL, &d2, NULL);
    double want = lp - f * f / (2 * kval) - 0.5 * log1p(-kval * d2);

    gpc_kernel *k;
    gpc_kernel_parse("bias", 1, &k);
    double th = log(kval);
    gpc_kernel_set_params(k, &th);
    gsl_matrix *X = gsl_matrix_calloc(1, 1);
    gsl_vector *yv = gsl_vector_alloc(1);
    gsl_vector_set(yv, 0, y);
    gpc_laplace *w = gpc_laplace_alloc(1, 1, lik);
    double logz;
    gpc_laplace_evidence(w, k, X, yv, &logz, NULL);
    TEST_CLOSE(logz, want, 1e-12, 1e-14, "%s one point y=%g k=%g: log evidence",
               gpc_lik_name(lik), y, kval);
    TEST_CLOSE(gsl_vector_get(w->f, 0), f, 1e-10, 1e-12, "%s one point y=%g k=%g: mode",
               gpc_lik_name(lik), y, kval);
    gpc_laplace_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(yv);
}

/* A warm start from another mode converges to the same answer. */
static void test_warm_start(gsl_rng *r)
{
    gsl_matrix *X;
    gsl_vector *y;
    make_problem(r, 30, 2, &X, &y);
    gpc_kernel *k;
    gpc_kernel_parse("ard+bias", 2, &k);
    double th[4] = {1.0, 0.5, -0.5, -2.0}, z1, z2, z3;
    gpc_kernel_set_params(k, th);
    gpc_laplace *cold = gpc_laplace_alloc(30, 4, GPC_LIK_LOGISTIC);
    gpc_laplace *warm = gpc_laplace_alloc(30, 4, GPC_LIK_LOGISTIC);
    gpc_laplace_evidence(cold, k, X, y, &z1, NULL);
    th[0] = 2.0;
    gpc_kernel_set_params(k, th);
    gpc_laplace_evidence(warm, k, X, y, &z2, NULL);
    th[0] = 1.0;
    gpc_kernel_set_params(k, th);
    gpc_laplace_evidence(warm, k, X, y, &z3, NULL);
    TEST_CLOSE(z3, z1, 1e-12, 0, "warm start reaches the cold-start evidence");
    TEST_OK(warm->iterations <= cold->iterations, "warm start needs no more iterations (%d vs %d)",
            warm->iterations, cold->iterations);
    TEST_OK(cold->n_chol == (unsigned long)cold->iterations + 1,
            "one Cholesky per Newton iteration plus one at the mode (%lu, %d)", cold->n_chol,
            cold->iterations);
    gpc_laplace_free(cold);
    gpc_laplace_free(warm);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* n cases of a three-input problem (problems.h) and an ARD kernel for them
 * (four hyperparameters). */
static gpc_kernel *ard_problem(gsl_rng *r, size_t n, gsl_matrix **X, gsl_vector **y)
{
    gpc_kernel *k;
    make_problem(r, n, 3, X, y);
    gpc_kernel_parse("ard", 3, &k);
    return k;
}

/* A search started from the first-order prediction of the mode (after a
 * gradient at nearby hyperparameters) and finished by chord steps reaches
 * the cold search's evidence and gradient to rounding, with fewer
 * factorisations; at the mode, a = grad log p(y | f) to rounding. */
static void test_predicted_start(gsl_rng *r)
{
    size_t n = 80;
    gsl_matrix *X;
    gsl_vector *y;
    gpc_kernel *k = ard_problem(r, n, &X, &y);
    double th[4] = {1.0, -0.5, 0.2, -1.0}, z, zc, g[4], gc[4];
    gpc_laplace *warm = gpc_laplace_alloc(n, 4, GPC_LIK_LOGISTIC);
    gpc_laplace *cold = gpc_laplace_alloc(n, 4, GPC_LIK_LOGISTIC);
    gpc_kernel_set_params(k, th);
    gpc_laplace_evidence(warm, k, X, y, &z, g);
    unsigned long chol0 = warm->n_chol, chord0 = warm->chord_steps;
    for (size_t j = 0; j < 4; j++)
        th[j] += 0.05 * (double)(j + 1);
    gpc_kernel_set_params(k, th);
    TEST_OK(gpc_laplace_evidence(warm, k, X, y, &z, g) == GPC_OK &&
                gpc_laplace_evidence(cold, k, X, y, &zc, gc) == GPC_OK,
            "predicted and cold searches succeed");
    TEST_CLOSE(z, zc, 1e-13, 0, "predicted start: the cold search's evidence");
    for (size_t j = 0; j < 4; j++)
        TEST_CLOSE(g[j], gc[j], 1e-10, 1e-12, "predicted start: gradient %zu", j);
    TEST_OK(warm->chord_steps > chord0, "chord steps were taken (%lu)",
            warm->chord_steps - chord0);
    TEST_OK(warm->n_chol - chol0 < cold->n_chol, "fewer factorisations: %lu against %lu",
            warm->n_chol - chol0, cold->n_chol);
    double res = 0.0, amax = 0.0;
    for (size_t i = 0; i < n; i++) {
        res = fmax(res, fabs(gsl_vector_get(warm->d1, i) - gsl_vector_get(warm->a, i)));
        amax = fmax(amax, fabs(gsl_vector_get(warm->a, i)));
    }
    TEST_OK(res <= 1e-13 * amax, "at the mode a = grad log p (%.2g of max |a|)", res / amax);
    gpc_laplace_free(warm);
    gpc_laplace_free(cold);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* Along a straight path of equal steps the start predicted to second order
 * is much closer to the mode than the first-order one, and after a turn
 * the second-order term is left out. */
static double start_error(gpc_laplace *w, const gpc_kernel *k, const gsl_vector *a_from,
                          int second, const gsl_vector *a_mode)
{
    int keep = w->has_slope_prev;
    gsl_vector_memcpy(w->a, a_from);
    w->has_slope_prev = keep && second;
    gpc_laplace_predict_start(w, k);
    w->has_slope_prev = keep;
    double e = 0.0;
    for (size_t i = 0; i < w->n; i++)
        e = fmax(e, fabs(gsl_vector_get(w->a, i) - gsl_vector_get(a_mode, i)));
    return e;
}

static void test_second_order_start(gsl_rng *r)
{
    size_t n = 80;
    gsl_matrix *X;
    gsl_vector *y;
    gpc_kernel *k = ard_problem(r, n, &X, &y);
    double th0[4] = {1.0, -0.5, 0.2, -1.0}, th[4], z, g[4];
    gpc_laplace *w = gpc_laplace_alloc(n, 4, GPC_LIK_LOGISTIC);
    gpc_laplace *cold = gpc_laplace_alloc(n, 4, GPC_LIK_LOGISTIC);
    gsl_vector *a1 = gsl_vector_alloc(n);
    int ok = 1;
    for (int step = 0; step < 2; step++) {
        for (size_t j = 0; j < 4; j++)
            th[j] = th0[j] + 0.05 * step * (double)(j + 1);
        gpc_kernel_set_params(k, th);
        ok &= gpc_laplace_evidence(w, k, X, y, &z, g) == GPC_OK;
    }
    gsl_vector_memcpy(a1, w->a);
    TEST_OK(ok && w->has_slope && w->has_slope_prev, "two steps give the slope and the one before");
    for (size_t j = 0; j < 4; j++)
        th[j] = th0[j] + 0.1 * (double)(j + 1);
    gpc_kernel_set_params(k, th);
    TEST_OK(gpc_laplace_evidence(cold, k, X, y, &z, NULL) == GPC_OK, "the mode of the third step");
    double e1 = start_error(w, k, a1, 0, cold->a), e2 = start_error(w, k, a1, 1, cold->a);
    TEST_OK(e2 < 0.2 * e1, "straight on: second-order start %.3g from the mode, first-order %.3g",
            e2, e1);
    /* a turn: the next step goes back along the first coordinate only */
    for (size_t j = 0; j < 4; j++)
        th[j] = th0[j] + 0.05 * (double)(j + 1) - (j == 0 ? 0.05 : 0.0);
    gpc_kernel_set_params(k, th);
    e1 = start_error(w, k, a1, 0, cold->a);
    e2 = start_error(w, k, a1, 1, cold->a);
    TEST_OK(e2 == e1, "after a turn the start is the first-order one");
    gsl_vector_free(a1);
    gpc_laplace_free(w);
    gpc_laplace_free(cold);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* Hyperparameters that make the latent scale huge (strongly separable data)
 * still converge thanks to step halving. */
static void test_large_scale(gsl_rng *r)
{
    gsl_matrix *X;
    gsl_vector *y;
    make_problem(r, 40, 2, &X, &y);
    gpc_kernel *k;
    gpc_kernel_parse("ard", 2, &k);
    double th[3] = {12.0, 3.0, 3.0}, z;
    gpc_kernel_set_params(k, th);
    for (int l = 0; l < 2; l++) {
        gpc_laplace *w = gpc_laplace_alloc(40, 3, (gpc_lik)l);
        int st = gpc_laplace_evidence(w, k, X, y, &z, NULL);
        TEST_OK(st == GPC_OK && isfinite(z), "%s: converges with log v0 = 12 (z = %g, %d iterations)",
                gpc_lik_name((gpc_lik)l), z, w->iterations);
        gpc_laplace_free(w);
    }
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* Standardised Pima (200 training, 332 test cases) at fixed hyperparameters:
 * the evidence against the dense reference, the gradient against central
 * differences, and the test probabilities against the dense latent moments. */
static void test_pima(void)
{
    gsl_matrix *X, *Xs;
    gsl_vector *y;
    if (gpc_matrix_read("data/pima/X-train.txt", &X, NULL) != GPC_OK ||
        gpc_matrix_read("data/pima/X-test.txt", &Xs, NULL) != GPC_OK ||
        read_binary_labels("data/pima/y-train.txt", &y) != GPC_OK) {
        TEST_OK(0, "Pima data readable: %s", gpc_errmsg());
        return;
    }
    standardise(Xs, X);
    standardise(X, X);
    size_t n = X->size1, m = Xs->size1;
    gpc_kernel *k;
    gpc_kernel_parse("ard", X->size2, &k);
    double th[8] = {1.5, -3, -2, -4, -3.5, -2.5, -3, -2.5}, g[8], z;
    gpc_kernel_set_params(k, th);
    gpc_laplace *w = gpc_laplace_alloc(n, 8, GPC_LIK_LOGISTIC);
    gpc_laplace_evidence(w, k, X, y, &z, g);
    gsl_vector *fn = gsl_vector_alloc(n);
    TEST_CLOSE(z, naive_evidence(GPC_LIK_LOGISTIC, w->K, y, fn), 1e-11, 0,
               "Pima: log evidence equals the dense formula");
    double worst = 0;
    laplace_at at = {w, X, y};
    for (size_t j = 0; j < 8; j++) {
        double fd = central_difference(k, j, 1e-5, laplace_evidence_at, &at);
        worst = fmax(worst, fabs(g[j] - fd) / (1e-3 + fabs(g[j])));
    }
    TEST_OK(worst < 1e-6, "Pima: gradient against central differences (worst relative %.2g)",
            worst);

    /* dense latent moments: mean k*' d1, var k** - k*' (K + W^-1)^-1 k* */
    gpc_laplace_evidence(w, k, X, y, &z, NULL);
    gsl_matrix *Ks = gsl_matrix_alloc(n, m), *Ks2 = gsl_matrix_alloc(n, m),
               *A = gsl_matrix_alloc(n, n);
    gsl_vector *kss = gsl_vector_alloc(m), *mu = gsl_vector_alloc(m), *var = gsl_vector_alloc(m),
               *col = gsl_vector_alloc(n), *sol = gsl_vector_alloc(n);
    gpc_kernel_cross(k, X, Xs, Ks);
    gsl_matrix_memcpy(Ks2, Ks);
    gpc_kernel_diag(k, Xs, kss);
    gpc_laplace_predict(w, Ks, kss, mu, var);
    gsl_matrix_memcpy(A, w->K);
    for (size_t i = 0; i < n; i++)
        gsl_matrix_set(A, i, i, gsl_matrix_get(A, i, i) + 1.0 / gsl_vector_get(w->W, i));
    gsl_permutation *perm = gsl_permutation_alloc(n);
    int sign;
    gsl_linalg_LU_decomp(A, perm, &sign);
    double worst_p = 0;
    for (size_t c = 0; c < m; c++) {
        gsl_matrix_get_col(col, Ks2, c);
        double mean, q;
        gsl_blas_ddot(col, w->d1, &mean);
        gsl_linalg_LU_solve(A, perm, col, sol);
        gsl_blas_ddot(col, sol, &q);
        double p_dense = gpc_lik_predict(GPC_LIK_LOGISTIC, mean, gsl_vector_get(kss, c) - q);
        double p = gpc_lik_predict(GPC_LIK_LOGISTIC, gsl_vector_get(mu, c),
                                   gsl_vector_get(var, c));
        worst_p = fmax(worst_p, fabs(p - p_dense));
    }
    TEST_CLOSE(worst_p, 0, 0, 1e-10, "Pima: test probabilities equal the dense formula");
    gsl_permutation_free(perm);
    gsl_matrix_free(Ks);
    gsl_matrix_free(Ks2);
    gsl_matrix_free(A);
    gsl_vector_free(kss);
    gsl_vector_free(mu);
    gsl_vector_free(var);
    gsl_vector_free(col);
    gsl_vector_free(sol);
    gsl_vector_free(fn);
    gpc_laplace_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_matrix_free(Xs);
    gsl_vector_free(y);
}

/* Standardised Pima with the isotropic kernel at signal variances e^40 and
 * e^60 (ML-II can drift there on separable data): the Newton step must not
 * cancel, so the mode is a true stationary point (f = K d1), the evidence
 * is finite and continues the values at smaller v0 instead of falling to
 * thousands below the trivial n log 1/2, and the gradient matches central
 * differences. */
static void test_huge_signal_variance(void)
{
    gsl_matrix *X;
    gsl_vector *y;
    if (gpc_matrix_read("data/pima/X-train.txt", &X, NULL) != GPC_OK ||
        read_binary_labels("data/pima/y-train.txt", &y) != GPC_OK) {
        TEST_OK(0, "Pima data readable: %s", gpc_errmsg());
        return;
    }
    standardise(X, X);
    size_t n = X->size1;
    gpc_kernel *k;
    gpc_kernel_parse("se", X->size2, &k);
    gpc_laplace *w = gpc_laplace_alloc(n, 2, GPC_LIK_LOGISTIC);
    gsl_vector *Kd1 = gsl_vector_alloc(n);
    double trivial = n * log(0.5);
    for (int c = 0; c < 2; c++) {
        double th[2] = {c == 0 ? 40.0 : 60.0, -2.0}, g[2], z;
        gpc_kernel_set_params(k, th);
        w->has_mode = 0;
        int st = gpc_laplace_evidence(w, k, X, y, &z, g);
        TEST_OK(st == GPC_OK && isfinite(z) && z > trivial - 200 && z < 0,
                "log v0 = %g: evidence %.6g finite, not far below n log 1/2 = %.4g", th[0], z,
                trivial);
        gpc_laplace_mode(w, y);
        gsl_blas_dsymv(CblasLower, 1.0, w->K, w->d1, 0.0, Kd1);
        gsl_vector_sub(Kd1, w->f);
        TEST_OK(max_abs(Kd1) < 1e-6 * (1 + max_abs(w->f)),
                "log v0 = %g: the mode is stationary, |K d1 - f| = %.3g, |f| = %.3g", th[0],
                max_abs(Kd1), max_abs(w->f));
        laplace_at at = {w, X, y};
        for (size_t j = 0; j < 2; j++) {
            TEST_CLOSE(g[j], central_difference(k, j, 1e-4, laplace_evidence_at, &at), 1e-4, 1e-5,
                       "log v0 = %g: gradient %zu against central differences", th[0], j);
        }
    }
    /* a stored mode whose evidence is not a number is refused */
    gsl_vector *fbad = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) /* every case far on its wrong side: log p = -inf */
        gsl_vector_set(fbad, i, -gsl_vector_get(y, i) * 1e308);
    int sm = gpc_laplace_set_mode(w, y, fbad);
    TEST_OK(sm == GPC_ENUM, "a stored mode with a non-finite evidence: status %d", sm);
    gsl_vector_free(fbad);
    /* beyond the reach of 200 Newton steps: a loud failure, not a mode */
    double th[2] = {200.0, -2.0}, z;
    gpc_kernel_set_params(k, th);
    w->has_mode = 0;
    int st = gpc_laplace_evidence(w, k, X, y, &z, NULL);
    TEST_OK(st == GPC_ENUM, "log v0 = 200: status %d, %s", st, gpc_errmsg());
    gsl_vector_free(Kd1);
    gpc_laplace_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    const char *specs[] = {"ard", "ard+bias+jitter", "nn+linear", "se+bias"};
    for (int l = 0; l < 2; l++)
        for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
            test_against_naive(r, (gpc_lik)l, specs[s]);
    for (int l = 0; l < 2; l++) {
        test_one_point((gpc_lik)l, 1.0, 0.3);
        test_one_point((gpc_lik)l, -1.0, 7.0);
        test_one_point((gpc_lik)l, 1.0, 400.0);
    }
    test_warm_start(r);
    test_predicted_start(r);
    test_second_order_start(r);
    test_large_scale(r);
    test_pima();
    test_huge_signal_variance();
    gsl_rng_free(r);
    return tap_done();
}
