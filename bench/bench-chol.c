/* bench-chol — the time unit of the dense benchmarks: seconds of one
 * LAPACK Cholesky factorisation (dpotrf, OpenBLAS with its threads) of an
 * n x n positive definite matrix, the best of three.
 *
 *   bench-chol N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linalg/blas.h"

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t len);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
    if (n < 1 || n > 100000) {
        fprintf(stderr, "usage: bench-chol N (1 to 100000)\n");
        return 2;
    }
    gpc_blas_init();
    size_t nn = (size_t)n * (size_t)n;
    double *A = malloc(nn * sizeof *A), *F = malloc(nn * sizeof *F);
    if (!A || !F) {
        fprintf(stderr, "bench-chol: out of memory\n");
        return 3;
    }
    /* diagonally dominant: positive definite without a product */
    for (size_t j = 0; j < (size_t)n; j++)
        for (size_t i = 0; i < (size_t)n; i++)
            A[i + j * n] = i == j ? (double)n : 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
    double best = 1e300;
    for (int rep = 0; rep < 3; rep++) {
        memcpy(F, A, nn * sizeof *F);
        int nl = (int)n, info;
        double t0 = now();
        dpotrf_("L", &nl, F, &nl, &info, 1);
        double t = now() - t0;
        if (info != 0) {
            fprintf(stderr, "bench-chol: dpotrf failed (%d)\n", info);
            return 1;
        }
        best = t < best ? t : best;
    }
    printf("%.3f\n", best);
    free(A);
    free(F);
    return 0;
}
