#include "sparse/inducing.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_rng.h>

#include "base/alloc.h"
#include "base/err.h"

/* LAPACK through OpenBLAS.  Row-major lower is column-major upper, hence "U". */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);

static double sq_dist(const gsl_matrix *X, size_t a, const gsl_matrix *Z, size_t b)
{
    double s = 0.0;
    for (size_t l = 0; l < X->size2; l++) {
        double d = gsl_matrix_get(X, a, l) - gsl_matrix_get(Z, b, l);
        s += d * d;
    }
    return s;
}

/* The row whose cumulative weight first passes u * total. */
static size_t draw_weighted(const double *w, size_t n, double total, double u)
{
    double target = u * total, acc = 0.0;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i] <= 0.0)
            continue;
        last = i;
        acc += w[i];
        if (acc > target)
            return i;
    }
    return last; /* rounding left target at the very end */
}

int gpc_inducing_kmeanspp(const gsl_matrix *X, size_t m, unsigned long seed, gsl_matrix *Z)
{
    size_t n = X->size1;
    if (m == 0 || m > n)
        return gpc_fail(GPC_EUSAGE, "%zu inducing inputs from %zu cases: choose from 1 to %zu",
                        m, n, n);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    double *d2 = gpc_mallocarray(n, sizeof *d2);
    size_t first = (size_t)gsl_rng_uniform_int(r, n);
    gsl_vector_const_view x0 = gsl_matrix_const_row(X, first);
    gsl_matrix_set_row(Z, 0, &x0.vector);
    for (size_t i = 0; i < n; i++)
        d2[i] = sq_dist(X, i, Z, 0);
    int rc = GPC_OK;
    for (size_t j = 1; j < m; j++) {
        double total = 0.0;
        size_t distinct = j;
        for (size_t i = 0; i < n; i++) {
            total += d2[i];
            distinct += d2[i] > 0.0;
        }
        if (!(total > 0.0) || !isfinite(total)) {
            rc = gpc_fail(GPC_EUSAGE, "%zu inducing inputs, but the cases have only %zu "
                          "distinct rows%s: choose at most that many", m, distinct,
                          isfinite(total) ? "" : " (or values too large to compare)");
            break;
        }
        size_t next = draw_weighted(d2, n, total, gsl_rng_uniform(r));
        gsl_vector_const_view xn = gsl_matrix_const_row(X, next);
        gsl_matrix_set_row(Z, j, &xn.vector);
        for (size_t i = 0; i < n; i++)
            d2[i] = fmin(d2[i], sq_dist(X, i, Z, j));
    }
    free(d2);
    gsl_rng_free(r);
    return rc;
}

/* Rows of X whose products with Z are formed at once: the work matrix
 * stays at this many rows by m, whatever the candidates. */
#define ASSIGN_BLOCK 1024

/* Each row of X's nearest row of Z (by |z|^2 - 2 x'z, from matrix products
 * a block of rows at a time; the first on ties) into near; returns how many
 * changed.  G is ASSIGN_BLOCK x m work. */
static size_t assign(const gsl_matrix *X, const gsl_matrix *Z, gsl_matrix *G, double *zz,
                     size_t *near)
{
    size_t n = X->size1, m = Z->size1, changed = 0;
    for (size_t j = 0; j < m; j++) {
        gsl_vector_const_view z = gsl_matrix_const_row(Z, j);
        gsl_blas_ddot(&z.vector, &z.vector, zz + j);
    }
    for (size_t i0 = 0; i0 < n; i0 += ASSIGN_BLOCK) {
        size_t rows = n - i0 < ASSIGN_BLOCK ? n - i0 : ASSIGN_BLOCK;
        gsl_matrix_const_view Xb = gsl_matrix_const_submatrix(X, i0, 0, rows, X->size2);
        gsl_matrix_view Gb = gsl_matrix_submatrix(G, 0, 0, rows, m);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &Xb.matrix, Z, 0.0, &Gb.matrix);
        for (size_t i = 0; i < rows; i++) {
            const double *g = gsl_matrix_const_ptr(G, i, 0);
            size_t best = 0;
            for (size_t j = 1; j < m; j++)
                if (zz[j] - 2.0 * g[j] < zz[best] - 2.0 * g[best])
                    best = j;
            changed += best != near[i0 + i];
            near[i0 + i] = best;
        }
    }
    return changed;
}

/* Each row of Z to the mean of the rows of X nearest it (one without any
 * stays where it is). */
static void recentre(const gsl_matrix *X, const size_t *near, gsl_matrix *Z, size_t *count)
{
    size_t m = Z->size1, d = Z->size2;
    gsl_matrix *sum = gpc_matrix_alloc(m, d);
    gsl_matrix_set_zero(sum);
    for (size_t j = 0; j < m; j++)
        count[j] = 0;
    for (size_t i = 0; i < X->size1; i++) {
        gsl_vector_const_view x = gsl_matrix_const_row(X, i);
        gsl_vector_view s = gsl_matrix_row(sum, near[i]);
        gsl_vector_add(&s.vector, &x.vector);
        count[near[i]]++;
    }
    for (size_t j = 0; j < m; j++)
        for (size_t l = 0; l < d && count[j]; l++)
            gsl_matrix_set(Z, j, l, gsl_matrix_get(sum, j, l) / (double)count[j]);
    gsl_matrix_free(sum);
}

int gpc_inducing_kmeans(const gsl_matrix *X, size_t m, unsigned long seed, int iterations,
                        gsl_matrix *Z)
{
    int st = gpc_inducing_kmeanspp(X, m, seed, Z);
    if (st != GPC_OK || m == X->size1)
        return st;
    size_t n = X->size1, *near = gpc_mallocarray(n, sizeof *near),
           *count = gpc_mallocarray(m, sizeof *count);
    gsl_matrix *G = gpc_matrix_alloc(n < ASSIGN_BLOCK ? n : ASSIGN_BLOCK, m);
    double *zz = gpc_mallocarray(m, sizeof *zz);
    for (size_t i = 0; i < n; i++)
        near[i] = m; /* none yet: every row counts as changed */
    for (int it = 0; it < iterations && assign(X, Z, G, zz, near) > 0; it++)
        recentre(X, near, Z, count);
    free(near);
    free(count);
    free(zz);
    gsl_matrix_free(G);
    return GPC_OK;
}

int gpc_inducing_factor(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *L, double *jitter)
{
    size_t m = Z->size1;
    gsl_matrix *K = gpc_matrix_alloc(m, m);
    gpc_kernel_matrix(k, Z, K);
    double mean = 0.0;
    for (size_t i = 0; i < m; i++)
        mean += gsl_matrix_get(K, i, i) / (double)m;
    *jitter = 0.0;
    int rc = GPC_ENUM;
    if (isfinite(mean) && mean > 0.0)
        for (double j = 0.0; j <= 1e-2 * mean; j = j > 0.0 ? 10.0 * j : 1e-10 * mean) {
            gsl_matrix_memcpy(L, K);
            for (size_t i = 0; i < m; i++)
                gsl_matrix_set(L, i, i, gsl_matrix_get(L, i, i) + j);
            int nn = (int)m, lda = (int)L->tda, info;
            dpotrf_("U", &nn, L->data, &lda, &info, 1);
            if (info == 0) {
                *jitter = j;
                rc = GPC_OK;
                break;
            }
        }
    gsl_matrix_free(K);
    if (rc != GPC_OK && !(isfinite(mean) && mean > 0.0))
        return gpc_fail(GPC_ENUM, "the inducing inputs' kernel matrix (%zu x %zu) has a mean "
                        "variance of %.3g: the hyperparameters are out of range", m, m, mean);
    if (rc != GPC_OK)
        return gpc_fail(GPC_ENUM, "the inducing inputs' kernel matrix (%zu x %zu) is not "
                        "positive definite even with a jitter of 1e-2 of its mean variance "
                        "(%.3g): the inducing inputs or the hyperparameters are degenerate",
                        m, m, mean);
    for (size_t i = 0; i < m; i++)
        for (size_t j = i + 1; j < m; j++)
            gsl_matrix_set(L, i, j, 0.0);
    return GPC_OK;
}

int gpc_inducing_spd_inverse(const gsl_matrix *A, gsl_matrix *Ainv, double *logdet)
{
    size_t m = A->size1;
    int nn = (int)m, lda = (int)Ainv->tda, info;
    gsl_matrix_memcpy(Ainv, A);
    dpotrf_("U", &nn, Ainv->data, &lda, &info, 1); /* row-major lower factor */
    if (info != 0)
        return info;
    double ld = 0.0;
    for (size_t i = 0; i < m; i++)
        ld += 2.0 * log(gsl_matrix_get(Ainv, i, i));
    if (logdet)
        *logdet = ld;
    dpotri_("U", &nn, Ainv->data, &lda, &info, 1);
    for (size_t i = 0; i < m; i++) /* the lower triangle holds it: mirror */
        for (size_t j = 0; j < i; j++)
            gsl_matrix_set(Ainv, j, i, gsl_matrix_get(Ainv, i, j));
    return info;
}

void gpc_inducing_marginal(const gsl_matrix *L, const gsl_vector *k, double kxx,
                           const gsl_vector *mc, const gsl_matrix *S, double *mu, double *s2)
{
    size_t m = k->size;
    gsl_vector *a = gsl_vector_alloc(m), *Sa = gsl_vector_alloc(m);
    double aa, aSa;
    gsl_vector_memcpy(a, k);
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, L, a);
    gsl_blas_ddot(a, mc, mu);
    gsl_blas_dgemv(CblasNoTrans, 1.0, S, a, 0.0, Sa);
    gsl_blas_ddot(a, a, &aa);
    gsl_blas_ddot(a, Sa, &aSa);
    *s2 = fmax(kxx - aa, 0.0) + fmax(aSa, 0.0);
    gsl_vector_free(a);
    gsl_vector_free(Sa);
}
