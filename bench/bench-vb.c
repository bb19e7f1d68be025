/* Benchmark: variational Bayes multinomial probit to convergence at fixed
 * hyperparameters (one shared ARD squared-exponential kernel), from a cold
 * start, against the time of one BLAS Cholesky of the same size.
 *
 *   bench-vb [n [d [C [repeats]]]]   defaults 2000 8 10 2
 *
 * The fit is split into its O(n^3) set-up (the factor of I + K and its
 * inverse: gpc_vb_start) and its sweeps (each C products with (I + K)^-1
 * and n one-dimensional integrals); the kernel matrix is timed apart.  Each
 * figure is the best of `repeats` rounds.  The sweep's n one-dimensional
 * integrals are also timed alone, on one thread, at the fitted means (their
 * share of a sweep is meaningful when the whole run has one thread, as in
 * make bench; the rest of a sweep is the products with (I + K)^-1).  Prints one "key value" line per
 * figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/parallel.h"
#include "kernels/kernel.h"
#include "liks/mprobit.h"
#include "methods/vb.h"

#include "bench-data.h"
#include "linalg/blas.h"


int main(int argc, char **argv)
{
    gpc_blas_init(); /* the kernels the tools run on */
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    size_t C = argc > 3 ? strtoul(argv[3], NULL, 10) : 10;
    int repeats = argc > 4 ? atoi(argv[4]) : 2;
    gpc_gsl_quiet();
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    size_t *cls = malloc(n * sizeof *cls);
    make_data(n, d, C, X, cls);
    double *theta;
    gpc_kernel *k = bench_kernel(d, &theta);
    size_t p = gpc_kernel_nparams(k);
    gsl_matrix *A = bench_reference_matrix(k, X), *L = gsl_matrix_alloc(n, n);

    double chol = HUGE_VAL, kern = HUGE_VAL, start = HUGE_VAL, fit = HUGE_VAL, bound = 0.0;
    double integrals = HUGE_VAL;
    gpc_mprobit_rule *rule = gpc_mprobit_rule_alloc(C);
    double *mi = malloc(2 * C * sizeof *mi), *yi = mi + C;
    int sweeps = 0;
    for (int r = 0; r < repeats; r++) {
        chol = fmin(chol, time_cholesky(A, L));
        gpc_vb *w = gpc_vb_alloc(n, C, p, 0);
        double t0 = now();
        gpc_kernel_matrix(k, X, w->K[0]);
        kern = fmin(kern, now() - t0);
        t0 = now();
        if (gpc_vb_start(w, cls) != GPC_OK)
            return fprintf(stderr, "bench-vb: %s\n", gpc_errmsg()), 1;
        start = fmin(start, now() - t0);
        t0 = now();
        if (gpc_vb_fit(w, cls) != GPC_OK)
            return fprintf(stderr, "bench-vb: %s\n", gpc_errmsg()), 1;
        fit = fmin(fit, now() - t0);
        sweeps = w->sweeps;
        bound = w->bound;
        t0 = now();
        for (size_t i = 0; i < n; i++) {
            for (size_t c = 0; c < C; c++)
                mi[c] = gsl_vector_get(w->m, c * n + i);
            gpc_mprobit_case(rule, cls[i], mi, yi);
        }
        integrals = fmin(integrals, now() - t0);
        gpc_vb_free(w);
    }
    double per_sweep = (fit - start) / sweeps;
    printf("n %zu\nd %zu\nC %zu\nthreads %d\n", n, d, C, gpc_parallel_threads());
    printf("bound %.10g\nsweeps %d\n", bound, sweeps);
    printf("seconds_cholesky %.4g\nseconds_kernel_matrix %.4g\n", chol, kern);
    printf("seconds_setup %.4g\nsetup_ratio_to_cholesky %.2f\n", start, start / chol);
    printf("seconds_per_sweep %.4g\nsweep_ratio_to_cholesky %.3f\n", per_sweep,
           per_sweep / chol);
    printf("seconds_integrals_per_sweep %.4g\nintegrals_share_of_sweep %.2f\n", integrals,
           integrals / per_sweep);
    printf("seconds_fit %.4g\nratio_to_cholesky %.2f\n", fit, fit / chol);
    gpc_mprobit_rule_free(rule);
    free(mi);
    gpc_kernel_free(k);
    gsl_matrix_free(A);
    gsl_matrix_free(L);
    gsl_matrix_free(X);
    free(cls);
    free(theta);
    return 0;
}
