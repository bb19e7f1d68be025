/* B = I + S K S (bmatrix.h): the factor reproduces B (L L' = B), its log
 * determinant matches GSL's Cholesky, and the inverse (formed by products
 * from the factor) times B is the identity, at sizes around the inverse's
 * block (16) and its halvings, on one thread and above the parallel
 * threshold on two; a matrix that is not positive definite is refused.  On
 * a B whose condition number is near 1e18 the inverse is as accurate as
 * LAPACK's dpotri. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#include "linalg/blas.h"
#include "linalg/bmatrix.h"
#include "tap.h"

void openblas_set_num_threads(int n);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t len);

/* max |A B - I| with A's lower triangle standing for the symmetric A */
static double inverse_error(gsl_matrix *A, const gsl_matrix *B, gsl_matrix *G)
{
    size_t n = A->size1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            gsl_matrix_set(A, i, j, gsl_matrix_get(A, j, i));
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, A, B, 0.0, G);
    double err = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            err = fmax(err, fabs(gsl_matrix_get(G, i, j) - (i == j)));
    return err;
}

/* the same from LAPACK's dpotrf and dpotri (row-major lower = "U") */
static double lapack_inverse_error(const gsl_matrix *B, gsl_matrix *A, gsl_matrix *G)
{
    int n = (int)B->size1, info;
    gsl_matrix_memcpy(A, B);
    dpotrf_("U", &n, A->data, &n, &info, 1);
    dpotri_("U", &n, A->data, &n, &info, 1);
    return inverse_error(A, B, G);
}

/* K_ij = v exp(-(x_i - x_j)^2 / 2) + 1e-6 [i = j] on a scattered grid, and
 * s_i in (0.2, 1.2). */
static void problem(size_t n, double v, gsl_matrix *K, double *s)
{
    for (size_t i = 0; i < n; i++) {
        double xi = 0.37 * (double)i + sin((double)i);
        s[i] = 0.2 + fabs(sin(1.7 * (double)i));
        for (size_t j = 0; j < n; j++) {
            double xj = 0.37 * (double)j + sin((double)j), d = xi - xj;
            gsl_matrix_set(K, i, j, v * exp(-0.5 * d * d) + (i == j ? 1e-6 : 0.0));
        }
    }
}

static void explicit_b(const gsl_matrix *K, const double *s, gsl_matrix *B)
{
    for (size_t i = 0; i < K->size1; i++)
        for (size_t j = 0; j < K->size1; j++)
            gsl_matrix_set(B, i, j, (i == j) + s[i] * gsl_matrix_get(K, i, j) * s[j]);
}

static double max_abs_lower(const gsl_matrix *A)
{
    double m = 0.0;
    for (size_t i = 0; i < A->size1; i++)
        for (size_t j = 0; j <= i; j++)
            m = fmax(m, fabs(gsl_matrix_get(A, i, j)));
    return m;
}

/* tol bounds the factor's residual and log determinant; the inverse's error
 * is bounded by tol, or by lapack times LAPACK's own where that is given. */
static void check(size_t n, double v, int threads, double tol, double lapack)
{
    openblas_set_num_threads(threads);
    gsl_matrix *K = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    gsl_matrix *B = gsl_matrix_alloc(n, n), *G = gsl_matrix_alloc(n, n);
    gsl_matrix *P = gsl_matrix_alloc(n, n);
    double *s = malloc(n * sizeof *s);
    problem(n, v, K, s);
    explicit_b(K, s, B);
    gsl_matrix_set_all(L, NAN); /* the factor may not read what it did not write */
    TEST_OK(gpc_bmatrix_factor(K, s, L) == 0, "n = %zu, v = %g, %d threads: factored", n, v,
            threads);
    /* L L' - B over the lower triangle, relative to max |B| */
    gsl_matrix_memcpy(P, L);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            gsl_matrix_set(P, i, j, 0.0);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, P, P, 0.0, G);
    gsl_matrix_sub(G, B);
    double bmax = max_abs_lower(B);
    TEST_OK(max_abs_lower(G) <= tol * bmax, "n = %zu, v = %g: L L' = B (%.2g of max |B|)", n, v,
            max_abs_lower(G) / bmax);
    gsl_matrix_memcpy(G, B);
    gsl_linalg_cholesky_decomp1(G);
    double ref = 0.0;
    for (size_t i = 0; i < n; i++)
        ref += log(gsl_matrix_get(G, i, i));
    double rtol = lapack > 0.0 ? 1e-6 : tol; /* log|B| itself is that uncertain there */
    TEST_CLOSE(gpc_bmatrix_half_log_det(L), ref, rtol, rtol, "n = %zu, v = %g: log|B| / 2", n,
               v);
    gpc_bmatrix_inverse(L);
    double err = inverse_error(L, B, G);
    if (lapack > 0.0) {
        double ref_err = lapack_inverse_error(B, P, G);
        TEST_OK(err <= lapack * ref_err, "n = %zu, v = %g: |B^-1 B - I| %.2g, dpotri's %.2g", n,
                v, err, ref_err);
    } else {
        TEST_OK(err <= tol * bmax, "n = %zu, v = %g: B^-1 B = I (%.2g)", n, v, err);
    }
    gsl_matrix_free(K);
    gsl_matrix_free(L);
    gsl_matrix_free(B);
    gsl_matrix_free(G);
    gsl_matrix_free(P);
    free(s);
}

static void test_not_positive_definite(void)
{
    size_t n = 40;
    gsl_matrix *K = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    double *s = malloc(n * sizeof *s);
    problem(n, 1.0, K, s);
    /* a large negative entry on the diagonal at row 30 */
    gsl_matrix_set(K, 30, 30, -100.0 / (s[30] * s[30]));
    TEST_OK(gpc_bmatrix_factor(K, s, L) == 31, "not positive definite: row 31 reported");
    gsl_matrix_free(K);
    gsl_matrix_free(L);
    free(s);
}

int main(void)
{
    gpc_blas_init();
    size_t sizes[] = {1, 2, 7, 8, 9, 12, 15, 16, 17, 33, 64, 100, 201, 203, 399};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        check(sizes[k], 1.0, 1, 1e-13, 0.0);
    check(450, 1.0, 2, 1e-12, 0.0);
    check(120, 1e12, 1, 1e-13, 10.0);
    test_not_positive_definite();
    return tap_done();
}
