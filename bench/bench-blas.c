/* bench-blas — what the BLAS kernels give: the rate of a matrix product of
 * size 2000 and the time of LAPACK's two Cholesky variants at n = 200 (one
 * thread), with the kernels gpc runs on (gpc_blas_init).  Run it with
 * OPENBLAS_CORETYPE set to see another set of kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_cblas.h>

#include "blas.h"

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t len);
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
    free(A);
    free(B);
    free(C);
    return 0;
}
