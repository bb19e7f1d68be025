/* Inducing inputs: k-means++ is seeded and picks distinct rows, k-means
 * from there finds clusters' means; K_ZZ's
 * factor, with jitter only where needed; and the marginals through the
 * whitened kernel column against the dense answers they stand for: with Z = X the marginal of
 * f_i is row i of N(L m, L S L'), and with S = 0 the variance is the
 * Nystrom residual k_xx - k' K_ZZ^-1 k. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "sparse/inducing.h"
#include "random_matrix.h"
#include "tap.h"

/* A random q(v) = N(mc, S) with S = R R' + 0.1 I. */
static void random_q(gsl_rng *r, gsl_vector *mc, gsl_matrix *S)
{
    size_t m = mc->size;
    gsl_matrix *R = random_matrix(r, m, m);
    for (size_t i = 0; i < m; i++)
        gsl_vector_set(mc, i, gsl_rng_uniform(r) - 0.5);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 0.5, R, R, 0.0, S);
    for (size_t i = 0; i < m; i++)
        gsl_matrix_set(S, i, i, gsl_matrix_get(S, i, i) + 0.1);
    gsl_matrix_free(R);
}

static void check_kmeanspp(gsl_rng *r)
{
    gsl_matrix *X = random_matrix(r, 40, 3), *Z = gsl_matrix_alloc(10, 3),
               *Z2 = gsl_matrix_alloc(10, 3);
    TEST_OK(gpc_inducing_kmeanspp(X, 10, 7, Z) == GPC_OK &&
                gpc_inducing_kmeanspp(X, 10, 7, Z2) == GPC_OK && gsl_matrix_equal(Z, Z2),
            "k-means++: the same seed picks the same rows");
    gpc_inducing_kmeanspp(X, 10, 8, Z2);
    TEST_OK(!gsl_matrix_equal(Z, Z2), "k-means++: another seed picks other rows");
    int rows_of_x = 1, distinct = 1;
    for (size_t j = 0; j < 10; j++) {
        int found = 0;
        for (size_t i = 0; i < 40; i++) {
            gsl_vector_const_view a = gsl_matrix_const_row(X, i), b = gsl_matrix_const_row(Z, j);
            found |= gsl_vector_equal(&a.vector, &b.vector);
        }
        rows_of_x &= found;
        for (size_t k = 0; k < j; k++) {
            gsl_vector_const_view a = gsl_matrix_const_row(Z, k), b = gsl_matrix_const_row(Z, j);
            distinct &= !gsl_vector_equal(&a.vector, &b.vector);
        }
    }
    TEST_OK(rows_of_x && distinct, "k-means++: every inducing input is a training row, none twice");
    gsl_matrix *all = gsl_matrix_alloc(40, 3);
    TEST_OK(gpc_inducing_kmeanspp(X, 40, 1, all) == GPC_OK, "k-means++: m = n takes every row");
    gsl_matrix_free(all);
    /* five distinct rows repeated */
    gsl_matrix *D = gsl_matrix_alloc(20, 3);
    for (size_t i = 0; i < 20; i++)
        for (size_t l = 0; l < 3; l++)
            gsl_matrix_set(D, i, l, gsl_matrix_get(X, i % 5, l));
    gsl_matrix *Z6 = gsl_matrix_alloc(6, 3), *Z5 = gsl_matrix_alloc(5, 3);
    TEST_OK(gpc_inducing_kmeanspp(D, 5, 3, Z5) == GPC_OK, "k-means++: five of five distinct rows");
    int st = gpc_inducing_kmeanspp(D, 6, 3, Z6);
    TEST_OK(st == GPC_EUSAGE && strstr(gpc_errmsg(), "only 5 distinct rows"),
            "k-means++: six of five distinct rows is refused: %s", gpc_errmsg());
    st = gpc_inducing_kmeanspp(X, 41, 3, Z6);
    TEST_OK(st == GPC_EUSAGE && strstr(gpc_errmsg(), "choose from 1 to 40"),
            "k-means++: more inducing inputs than cases is refused: %s", gpc_errmsg());
    st = gpc_inducing_kmeanspp(X, 0, 3, Z6);
    TEST_OK(st == GPC_EUSAGE, "k-means++: none is refused");
    gsl_matrix_free(D);
    gsl_matrix_free(Z5);
    gsl_matrix_free(Z6);
    gsl_matrix_free(X);
    gsl_matrix_free(Z);
    gsl_matrix_free(Z2);
}

/* With Z = X: mu = L m and s2 = diag(L S L'). */
static void check_dense_marginals(gsl_rng *r, const char *spec)
{
    size_t n = 12;
    gsl_matrix *X = random_matrix(r, n, 2), *L = gsl_matrix_alloc(n, n), *K = gsl_matrix_alloc(n, n),
               *S = gsl_matrix_alloc(n, n), *LS = gsl_matrix_alloc(n, n),
               *V = gsl_matrix_alloc(n, n);
    gsl_vector *mc = gsl_vector_alloc(n), *want = gsl_vector_alloc(n);
    gpc_kernel *k;
    gpc_kernel_parse(spec, 2, &k);
    double th[8] = {0.3, 0.5, -0.4, 0.2, -1.0, 0.1, 0.0, 0.0};
    gpc_kernel_set_params(k, th);
    double jitter;
    TEST_OK(gpc_inducing_factor(k, X, L, &jitter) == GPC_OK && jitter == 0.0,
            "%s: K_ZZ of distinct rows factors without jitter", spec);
    random_q(r, mc, S);
    gpc_kernel_matrix(k, X, K);
    gsl_blas_dgemv(CblasNoTrans, 1.0, L, mc, 0.0, want);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, L, S, 0.0, LS);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, LS, L, 0.0, V);
    double emu = 0.0, es2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        gsl_vector_view ki = gsl_matrix_row(K, i);
        double mu, s2;
        gpc_inducing_marginal(L, &ki.vector, gsl_matrix_get(K, i, i), mc, S, &mu, &s2);
        emu = fmax(emu, fabs(mu - gsl_vector_get(want, i)));
        es2 = fmax(es2, fabs(s2 - gsl_matrix_get(V, i, i)) / gsl_matrix_get(V, i, i));
    }
    TEST_CLOSE(emu, 0, 0, 1e-12, "%s, Z = X: the means are L m", spec);
    TEST_CLOSE(es2, 0, 0, 1e-10, "%s, Z = X: the variances are diag(L S L')", spec);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_matrix_free(L);
    gsl_matrix_free(K);
    gsl_matrix_free(S);
    gsl_matrix_free(LS);
    gsl_matrix_free(V);
    gsl_vector_free(mc);
    gsl_vector_free(want);
}

/* Z a few rows, q(v) = N(0, 0): the variance left is the Nystrom residual,
 * against a solve with K_ZZ by LU; with q(v) = N(0, I), the prior. */
static void check_nystrom(gsl_rng *r)
{
    size_t m = 6;
    gsl_matrix *Z = random_matrix(r, m, 2), *x = random_matrix(r, 1, 2),
               *L = gsl_matrix_alloc(m, m), *Kzz = gsl_matrix_alloc(m, m),
               *S = gsl_matrix_calloc(m, m), *kx = gsl_matrix_alloc(m, 1);
    gsl_vector *mc = gsl_vector_calloc(m), *sol = gsl_vector_alloc(m);
    gpc_kernel *k;
    gpc_kernel_parse("matern52ard+linear", 2, &k);
    double jitter, mu, s2, kxx;
    gpc_inducing_factor(k, Z, L, &jitter);
    gpc_kernel_matrix(k, Z, Kzz);
    gpc_kernel_cross(k, Z, x, kx);
    gsl_vector_view kv = gsl_matrix_column(kx, 0);
    gsl_vector *d = gsl_vector_alloc(1);
    gpc_kernel_diag(k, x, d);
    kxx = gsl_vector_get(d, 0);
    gpc_inducing_marginal(L, &kv.vector, kxx, mc, S, &mu, &s2);
    gsl_permutation *perm = gsl_permutation_alloc(m);
    int sgn;
    gsl_linalg_LU_decomp(Kzz, perm, &sgn);
    gsl_linalg_LU_solve(Kzz, perm, &kv.vector, sol);
    double kKk;
    gsl_blas_ddot(&kv.vector, sol, &kKk);
    TEST_CLOSE(s2, kxx - kKk, 1e-9, 1e-12, "S = 0: the variance is k_xx - k' K_ZZ^-1 k");
    TEST_OK(mu == 0.0, "m = 0: the mean is 0");
    gsl_matrix_set_identity(S);
    gpc_inducing_marginal(L, &kv.vector, kxx, mc, S, &mu, &s2);
    TEST_CLOSE(s2, kxx, 1e-14, 0, "S = I (q the prior): the variance is k_xx");
    gsl_permutation_free(perm);
    gpc_kernel_free(k);
    gsl_matrix_free(Z);
    gsl_matrix_free(x);
    gsl_matrix_free(L);
    gsl_matrix_free(Kzz);
    gsl_matrix_free(S);
    gsl_matrix_free(kx);
    gsl_vector_free(mc);
    gsl_vector_free(sol);
    gsl_vector_free(d);
}

/* Repeated inducing inputs: K_ZZ is singular, the jitter that makes it
 * factor is reported; a kernel that overflows is refused. */
static void check_jitter(gsl_rng *r)
{
    gsl_matrix *Z = random_matrix(r, 5, 2), *L = gsl_matrix_alloc(5, 5);
    for (size_t l = 0; l < 2; l++)
        gsl_matrix_set(Z, 4, l, gsl_matrix_get(Z, 0, l));
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    double jitter = -1.0;
    int st = gpc_inducing_factor(k, Z, L, &jitter);
    TEST_OK(st == GPC_OK && jitter > 0.0 && jitter <= 1e-2,
            "a repeated inducing input is factored with a jitter, reported (%.3g)", jitter);
    int upper_zero = 1;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = i + 1; j < 5; j++)
            upper_zero &= gsl_matrix_get(L, i, j) == 0.0;
    TEST_OK(upper_zero, "the factor's upper triangle is zero");
    double th[2] = {800.0, 0.0};
    gpc_kernel_set_params(k, th);
    TEST_OK(gpc_inducing_factor(k, Z, L, &jitter) == GPC_ENUM && strlen(gpc_errmsg()) > 0,
            "an overflowing kernel is refused: %s", gpc_errmsg());
    gpc_kernel_free(k);
    gsl_matrix_free(Z);
    gsl_matrix_free(L);
}

/* The sum over rows of X of the squared distance to the nearest row of Z. */
static double within(const gsl_matrix *X, const gsl_matrix *Z)
{
    double total = 0.0;
    for (size_t i = 0; i < X->size1; i++) {
        double best = HUGE_VAL;
        for (size_t j = 0; j < Z->size1; j++) {
            double s = 0.0;
            for (size_t l = 0; l < X->size2; l++) {
                double d = gsl_matrix_get(X, i, l) - gsl_matrix_get(Z, j, l);
                s += d * d;
            }
            best = fmin(best, s);
        }
        total += best;
    }
    return total;
}

/* k-means: on three far-apart clusters the inducing inputs are the
 * clusters' means (to rounding); on random rows it lowers k-means++'s sum
 * of squares; m = n keeps every row; the same seed, the same bits. */
static void check_kmeans(gsl_rng *r)
{
    size_t per = 900; /* 2700 rows: the products go in three blocks */
    gsl_matrix *X = random_matrix(r, 3 * per, 2), *Z = gsl_matrix_alloc(3, 2);
    double mean[3][2] = {{0}};
    for (size_t i = 0; i < 3 * per; i++)
        for (size_t l = 0; l < 2; l++) {
            double x = gsl_matrix_get(X, i, l) + 100.0 * (double)(i / per) * (l == 0 ? 1 : -1);
            gsl_matrix_set(X, i, l, x);
            mean[i / per][l] += x / (double)per;
        }
    int st = gpc_inducing_kmeans(X, 3, 4, GPC_KMEANS_ITERATIONS, Z);
    double worst = 0.0;
    for (size_t c = 0; c < 3; c++) {
        double nearest = HUGE_VAL;
        for (size_t j = 0; j < 3; j++)
            nearest = fmin(nearest, fabs(gsl_matrix_get(Z, j, 0) - mean[c][0]) +
                                        fabs(gsl_matrix_get(Z, j, 1) - mean[c][1]));
        worst = fmax(worst, nearest);
    }
    TEST_OK(st == GPC_OK && worst < 1e-11,
            "k-means: three far-apart clusters of 900 rows give their means (to %.2g)", worst);
    gsl_matrix_free(X);
    gsl_matrix_free(Z);

    X = random_matrix(r, 200, 3);
    gsl_matrix *Zpp = gsl_matrix_alloc(12, 3), *Zk = gsl_matrix_alloc(12, 3),
               *Zk2 = gsl_matrix_alloc(12, 3), *all = gsl_matrix_alloc(200, 3);
    gpc_inducing_kmeanspp(X, 12, 9, Zpp);
    gpc_inducing_kmeans(X, 12, 9, GPC_KMEANS_ITERATIONS, Zk);
    gpc_inducing_kmeans(X, 12, 9, GPC_KMEANS_ITERATIONS, Zk2);
    double wpp = within(X, Zpp), wk = within(X, Zk);
    TEST_OK(wk < 0.8 * wpp, "k-means: the sum of squares falls from %.4g (k-means++) to %.4g",
            wpp, wk);
    TEST_OK(gsl_matrix_equal(Zk, Zk2), "k-means: the same seed gives the same bits");
    TEST_OK(gpc_inducing_kmeans(X, 200, 9, GPC_KMEANS_ITERATIONS, all) == GPC_OK &&
                within(X, all) == 0.0,
            "k-means: m = n keeps every row");
    TEST_OK(gpc_inducing_kmeans(X, 201, 9, GPC_KMEANS_ITERATIONS, all) == GPC_EUSAGE,
            "k-means: more inducing inputs than cases is refused");
    gsl_matrix_free(X);
    gsl_matrix_free(Zpp);
    gsl_matrix_free(Zk);
    gsl_matrix_free(Zk2);
    gsl_matrix_free(all);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    check_kmeanspp(r);
    check_kmeans(r);
    check_dense_marginals(r, "ard");
    check_dense_marginals(r, "matern32*periodic@1+bias");
    check_nystrom(r);
    check_jitter(r);
    gsl_rng_free(r);
    return tap_done();
}
