/* Benchmark: sweeps of the multinomial probit Gibbs sampler at fixed
 * hyperparameters (one shared ARD squared-exponential kernel), against the
 * time of one BLAS Cholesky of the same size.
 *
 *   bench-gibbs [n [d [C [sweeps]]]]   defaults 1000 8 3 1000
 *
 * The set-up (kernel matrix and its eigendecomposition) is timed apart from
 * the sweeps.  A sweep reads the n x n eigenvector matrix twice (two
 * products with the C x n matrices of y and of the draws), so it is bound
 * by memory bandwidth: the report gives the bytes it reads per second.
 * Prints one "key value" line per figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/parallel.h"
#include "kernels/kernel.h"
#include "sampling/gibbs.h"

#include "bench-data.h"
#include "linalg/blas.h"


int main(int argc, char **argv)
{
    gpc_blas_init(); /* the kernels the tools run on */
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
    size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    size_t C = argc > 3 ? strtoul(argv[3], NULL, 10) : 3;
    size_t sweeps = argc > 4 ? strtoul(argv[4], NULL, 10) : 1000;
    gpc_gsl_quiet();
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    size_t *cls = malloc(n * sizeof *cls);
    make_data(n, d, C, X, cls);
    double *theta;
    gpc_kernel *k = bench_kernel(d, &theta);
    gsl_matrix *A = bench_reference_matrix(k, X), *L = gsl_matrix_alloc(n, n);
    double chol = time_cholesky(A, L);

    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    gpc_gibbs *w = gpc_gibbs_alloc(X, C, &k, 1);
    w->sample_theta = 0;
    double t0 = now();
    if (gpc_gibbs_start(w, theta, cls, r) != GPC_OK)
        return fprintf(stderr, "bench-gibbs: %s\n", gpc_errmsg()), 1;
    double setup = now() - t0;
    t0 = now();
    for (size_t s = 0; s < sweeps; s++)
        gpc_gibbs_sweep(w, cls, r);
    double t_sweeps = now() - t0;
    chol = fmin(chol, time_cholesky(A, L));
    double bytes = 2.0 * (double)n * (double)n * sizeof(double) * (double)sweeps;
    printf("n %zu\nd %zu\nC %zu\nthreads %d\nsweeps %zu\n", n, d, C,
           gpc_parallel_threads(), sweeps);
    printf("seconds_cholesky %.4g\n", chol);
    printf("seconds_setup %.4g\nsetup_ratio_to_cholesky %.2f\n", setup, setup / chol);
    printf("seconds_sweeps %.4g\nsweeps_ratio_to_cholesky %.2f\n", t_sweeps, t_sweeps / chol);
    printf("eigenvector_bytes_read_per_second %.3g\n", bytes / t_sweeps);
    gpc_gibbs_free(w);
    gsl_rng_free(r);
    gpc_kernel_free(k);
    gsl_matrix_free(A);
    gsl_matrix_free(L);
    gsl_matrix_free(X);
    free(cls);
    free(theta);
    return 0;
}
