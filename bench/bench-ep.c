/* Benchmark: EP (probit) to convergence with the evidence gradient for n
 * cases in d dimensions (ARD squared exponential), the best of three runs,
 * against the time of one BLAS Cholesky of the same size (the best of five).
 * Prints "key value" lines.
 *
 *   bench-ep [n [d]]     defaults 2000 8 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "linalg/blas.h"
#include "methods/ep.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    gpc_blas_init(); /* the kernels the tools run on */
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    gpc_gsl_quiet();
    /* the same synthetic problem as bench-laplace */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    gsl_vector *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (size_t l = 0; l < d; l++) {
            double x = gsl_ran_gaussian(r, 1.0);
            gsl_matrix_set(X, i, l, x);
            s += sin(x * (l + 1) / 2.0);
        }
        gsl_vector_set(y, i, s + gsl_ran_gaussian(r, 0.5) > 0 ? 1.0 : -1.0);
    }
    gpc_kernel *k;
    gpc_kernel_parse("ard", d, &k);
    double *theta = calloc(d + 1, sizeof *theta), *grad = calloc(d + 1, sizeof *grad), z;
    theta[0] = 1.0;
    for (size_t l = 1; l <= d; l++)
        theta[l] = -1.0;
    gpc_kernel_set_params(k, theta);

    gsl_matrix *C = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(k, X, C);
    for (size_t i = 0; i < n; i++)
        *gsl_matrix_ptr(C, i, i) += 1.0;
    gsl_matrix *A = gsl_matrix_alloc(n, n); /* the best of five factorisations */
    double t0, t_chol = HUGE_VAL;
    for (int rep = 0; rep < 5; rep++) {
        gsl_matrix_memcpy(A, C);
        t0 = now();
        gsl_linalg_cholesky_decomp1(A);
        t_chol = fmin(t_chol, now() - t0);
    }
    gsl_matrix_free(A);
    gsl_matrix_free(C);

    gpc_ep *e = NULL; /* the best of three runs, each from the prior */
    double t = HUGE_VAL;
    for (int rep = 0; rep < 3; rep++) {
        gpc_ep_free(e);
        e = gpc_ep_alloc(n, d + 1);
        t0 = now();
        int st = gpc_ep_evidence(e, k, X, y, &z, grad);
        t = fmin(t, now() - t0);
        if (st != GPC_OK) {
            fprintf(stderr, "bench-ep: %s\n", gpc_errmsg());
            return 1;
        }
    }
    printf("n %zu\nd %zu\nlog_evidence %.10g\nsweeps %d\n", n, d, z, e->sweeps);
    printf("seconds_cholesky %.4f\nseconds_ep_with_gradient %.3f\n", t_chol, t);
    printf("ratio_to_cholesky %.1f\ncholesky_equivalents_per_sweep %.1f\n", t / t_chol,
           t / t_chol / e->sweeps);
    gpc_ep_free(e);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    free(theta);
    free(grad);
    return 0;
}
