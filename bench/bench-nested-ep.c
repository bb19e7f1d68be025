/* Benchmark: nested EP for the multinomial probit likelihood, log evidence
 * and its gradient from zero sites, for n cases in d dimensions and C
 * classes (one shared ARD squared-exponential kernel, the data of
 * bench-data.h), against the time of one BLAS Cholesky of the same size on
 * the same machine.
 *
 *   bench-nested-ep [n [d [C [repeats]]]]  defaults 1000 8 4 2
 *
 * The thread count is the environment's.  Per round: the kernel matrix
 * alone, the evidence alone (its outer sweeps counted), the posterior from
 * the converged sites alone (gpc_nep_set_sites: one sweep's factorisations
 * and solves without the inner EP), and the evidence with the gradient;
 * each the best of `repeats` rounds, interleaved with the reference
 * Cholesky.  A sweep is the evidence less the kernel matrix, over the
 * sweeps (each sweep forms one posterior; the start and the evidence's
 * last pass add one posterior and one pass of inner EP, counted as one
 * more sweep).  Prints one "key value" line per figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>

#include "base/err.h"
#include "base/parallel.h"
#include "kernels/kernel.h"
#include "linalg/blas.h"
#include "methods/nested-ep.h"

#include "bench-data.h"

typedef struct {
    double chol, kernel, evidence, posterior, total, log_evidence;
    int sweeps;
    unsigned long inner;
} timings;

static int fail(const char *what)
{
    fprintf(stderr, "bench-nested-ep: %s: %s\n", what, gpc_errmsg());
    return 1;
}

static int one_round(gpc_kernel *k, const gsl_matrix *X, const size_t *cls, size_t C,
                     const gsl_matrix *A, gsl_matrix *L, timings *t)
{
    size_t n = X->size1, p = gpc_kernel_nparams(k);
    double lz, *grad = calloc(p, sizeof *grad);
    t->chol = fmin(t->chol, time_cholesky(A, L));
    gpc_nep *w = gpc_nep_alloc(n, C, p, 0);
    double t0 = now();
    gpc_kernel_matrix(k, X, w->K[0]);
    t->kernel = fmin(t->kernel, now() - t0);
    gpc_nep_free(w);

    w = gpc_nep_alloc(n, C, p, 0);
    t0 = now();
    if (gpc_nep_evidence(w, &k, X, cls, &lz, NULL) != GPC_OK)
        return fail("evidence");
    t->evidence = fmin(t->evidence, now() - t0);
    t->sweeps = w->sweeps;
    t->inner = w->inner_sweeps;
    t0 = now();
    if (gpc_nep_set_sites(w, cls, w->alpha, w->beta) != GPC_OK)
        return fail("posterior");
    t->posterior = fmin(t->posterior, now() - t0);
    gpc_nep_free(w);

    w = gpc_nep_alloc(n, C, p, 0);
    t0 = now();
    if (gpc_nep_evidence(w, &k, X, cls, &t->log_evidence, grad) != GPC_OK)
        return fail("gradient");
    t->total = fmin(t->total, now() - t0);
    gpc_nep_free(w);
    free(grad);
    return 0;
}

static void report(size_t n, size_t d, size_t C, const timings *t)
{
    double sweep = (t->evidence - t->kernel) / (t->sweeps + 1);
    double grad = t->total - t->evidence;
    printf("n %zu\nd %zu\nC %zu\nthreads %d\n", n, d, C, gpc_parallel_threads());
    printf("log_evidence %.10g\nsweeps %d\ninner_sweeps_per_case_and_sweep %.2f\n",
           t->log_evidence, t->sweeps, (double)t->inner / ((double)n * t->sweeps));
    printf("seconds_cholesky %.4g\nseconds_kernel_matrix %.4g\n", t->chol, t->kernel);
    printf("seconds_per_sweep %.4g\nsweep_ratio_to_cholesky %.2f\n", sweep, sweep / t->chol);
    printf("seconds_posterior %.4g\nposterior_ratio_to_cholesky %.2f\n", t->posterior,
           t->posterior / t->chol);
    printf("seconds_gradient %.4g\ngradient_ratio_to_cholesky %.2f\n", grad, grad / t->chol);
    printf("seconds_evidence_and_gradient %.4g\nratio_to_cholesky %.2f\n", t->total,
           t->total / t->chol);
}

int main(int argc, char **argv)
{
    gpc_blas_init();
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
    size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    size_t C = argc > 3 ? strtoul(argv[3], NULL, 10) : 4;
    int repeats = argc > 4 ? atoi(argv[4]) : 2;
    gpc_gsl_quiet();
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    size_t *cls = malloc(n * sizeof *cls);
    make_data(n, d, C, X, cls);
    double *theta;
    gpc_kernel *k = bench_kernel(d, &theta);
    gsl_matrix *A = bench_reference_matrix(k, X), *L = gsl_matrix_alloc(n, n);
    timings t = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL, 0.0, 0, 0};
    for (int r = 0; r < repeats; r++)
        if (one_round(k, X, cls, C, A, L, &t) != 0)
            return 1;
    report(n, d, C, &t);
    gpc_kernel_free(k);
    gsl_matrix_free(A);
    gsl_matrix_free(L);
    gsl_matrix_free(X);
    free(cls);
    free(theta);
    return 0;
}
