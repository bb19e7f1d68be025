/* bench-gemm — the machine's matrix-multiply rate at one size: the best of
 * five n x n by n x n products (2 n^3 flops each), on the threads gpc's
 * m x m work takes at that size (gpc_parallel_blas), printed as
 * "gemm_gflops_<n> R".  The sparse method's bench divides its dense work by
 * this rate.
 *
 *   bench-gemm N */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_cblas.h>

#include "base/parallel.h"
#include "linalg/blas.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: bench-gemm N\n");
        return 1;
    }
    gpc_blas_init();
    gpc_parallel_blas((size_t)n);
    double *A = malloc((size_t)n * n * sizeof *A), *B = malloc((size_t)n * n * sizeof *B),
           *C = malloc((size_t)n * n * sizeof *C);
    for (size_t i = 0; i < (size_t)n * n; i++)
        A[i] = B[i] = (double)(i % 97) / 97.0 - 0.5;
    /* enough products per timing to last about 0.2 s */
    int reps = (int)(2e10 / (2.0 * n * n * (double)n)) + 1;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int k = 0; k < reps; k++)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n, 0.0,
                        C, n);
        double t = (now() - t0) / reps;
        best = t < best ? t : best;
    }
    printf("gemm_gflops_%d %.2f\n", n, 2.0 * n * n * (double)n / best / 1e9);
    free(A);
    free(B);
    free(C);
    return 0;
}
