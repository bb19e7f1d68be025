/* bench-blas — what the BLAS kernels give: the rate of a matrix product of
 * size 2000 and the time of LAPACK's two Cholesky variants at n = 200 (one
 * thread), with the kernels gpc runs on (gpc_blas_init); and gpc's own
 * factor and inverse of B below 400 rows (bmatrix) against LAPACK's dpotrf
 * and dpotri of the same matrix.  Run it with OPENBLAS_CORETYPE set to see
 * another set of kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_matrix.h>

#include "linalg/blas.h"
#include "linalg/bmatrix.h"

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t len);
void openblas_set_num_threads(int n);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* best of five, seconds per call, of `reps` factorisations of a copy of A */
static double cholesky_seconds(const char *uplo, const double *A, double *B, int n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int k = 0; k < reps; k++) {
            int info;
            memcpy(B, A, (size_t)n * (size_t)n * sizeof *B);
            dpotrf_(uplo, &n, B, &n, &info, 1);
        }
        double t = (now() - t0) / reps;
        best = t < best ? t : best;
    }
    return best;
}

/* Best of five, seconds per call, of `reps` calls of gpc's factor of B
 * (K = A - I, s = 1, so that B = A) and of gpc's factor and inverse; and of
 * LAPACK's faster variant (lower, column-major) of dpotrf and dpotrf +
 * dpotri of copies of A.  Prints the four and the two ratios. */
static void own_against_lapack(const double *A, int n)
{
    gsl_matrix *K = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    double *s = malloc(n * sizeof *s), *B = malloc((size_t)n * n * sizeof *B);
    for (int i = 0; i < n; i++) {
        s[i] = 1.0;
        for (int j = 0; j < n; j++)
            gsl_matrix_set(K, i, j, A[i * n + j] - (i == j));
    }
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    int reps = 200, info;
    for (int r = 0; r < 5; r++) {
        double t[5];
        t[0] = now();
        for (int k = 0; k < reps; k++)
            gpc_bmatrix_factor(K, s, L);
        t[1] = now();
        for (int k = 0; k < reps; k++) {
            gpc_bmatrix_factor(K, s, L);
            gpc_bmatrix_inverse(L);
        }
        t[2] = now();
        for (int k = 0; k < reps; k++) {
            memcpy(B, A, (size_t)n * n * sizeof *B);
            dpotrf_("L", &n, B, &n, &info, 1);
        }
        t[3] = now();
        for (int k = 0; k < reps; k++) {
            memcpy(B, A, (size_t)n * n * sizeof *B);
            dpotrf_("L", &n, B, &n, &info, 1);
            dpotri_("L", &n, B, &n, &info, 1);
        }
        t[4] = now();
        for (int q = 0; q < 4; q++)
            best[q] = fmin(best[q], (t[q + 1] - t[q]) / reps);
    }
    printf("seconds_gpc_factor_200 %.3g\nseconds_gpc_factor_inverse_200 %.3g\n", best[0],
           best[1]);
    printf("seconds_dpotrf_200 %.3g\nseconds_dpotrf_dpotri_200 %.3g\n", best[2], best[3]);
    printf("gpc_factor_over_dpotrf %.2f\ngpc_factor_inverse_over_dpotrf_dpotri %.2f\n",
           best[0] / best[2], best[1] / best[3]);
    gsl_matrix_free(K);
    gsl_matrix_free(L);
    free(s);
    free(B);
}

int main(void)
{
    gpc_blas_init();
    printf("kernels %s\n", gpc_blas_core());
    int n = 2000;
    double *A = malloc((size_t)n * n * sizeof *A), *B = malloc((size_t)n * n * sizeof *B);
    double *C = malloc((size_t)n * n * sizeof *C);
    for (size_t i = 0; i < (size_t)n * n; i++)
        A[i] = B[i] = (double)(i % 97) / 97.0 - 0.5;
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n, 0.0, C,
                    n);
        double t = now() - t0;
        best = t < best ? t : best;
    }
    printf("gflops_product_2000_default_threads %.1f\n", 2.0 * n * n * (double)n / best / 1e9);
    openblas_set_num_threads(1);
    int m = 200;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            A[i * m + j] = (i == j ? m : 0) + 1.0 / (1.0 + abs(i - j));
    double u = cholesky_seconds("U", A, B, m, 200), l = cholesky_seconds("L", A, B, m, 200);
    printf("seconds_cholesky_200_upper %.3g\nseconds_cholesky_200_lower %.3g\n", u, l);
    printf("upper_over_lower %.2f\n", u / l);
    own_against_lapack(A, m);
    free(A);
    free(B);
    free(C);
    return 0;
}
