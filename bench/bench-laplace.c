/* Benchmark: Laplace log evidence plus gradient for n cases in d dimensions
 * (ARD squared exponential, logistic likelihood), against the time of one
 * BLAS Cholesky factorisation of the same size on the same machine.
 *
 *   bench-laplace [n [d [repeats]]]     defaults 4000 8 3
 *
 * With repeats 0 it runs one fit with gradient and reports only the peak
 * resident memory, so that nothing else is allocated at the time.
 *
 * Prints one "key value" line per figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "linalg/blas.h"
#include "methods/laplace.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double peak_rss_mib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0;
}

/* Inputs N(0, 1); labels from the sign of a smooth function plus noise, so
 * the problem is neither trivial nor separable. */
static void make_data(size_t n, size_t d, gsl_matrix *X, gsl_vector *y)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (size_t l = 0; l < d; l++) {
            double x = gsl_ran_gaussian(r, 1.0);
            gsl_matrix_set(X, i, l, x);
            s += sin(x * (l + 1) / 2.0);
        }
        s += gsl_ran_gaussian(r, 0.5);
        gsl_vector_set(y, i, s > 0 ? 1.0 : -1.0);
    }
    gsl_rng_free(r);
}

int main(int argc, char **argv)
{
    gpc_blas_init(); /* the kernels the tools run on */
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000;
    size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    gpc_gsl_quiet();
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    gsl_vector *y = gsl_vector_alloc(n);
    make_data(n, d, X, y);
    gpc_kernel *k;
    gpc_kernel_parse("ard", d, &k);
    double *theta = calloc(d + 1, sizeof *theta), *grad = calloc(d + 1, sizeof *grad);
    theta[0] = 1.0;
    for (size_t l = 1; l <= d; l++)
        theta[l] = -1.0;
    gpc_kernel_set_params(k, theta);

    if (reps == 0) {
        gpc_laplace *w = gpc_laplace_alloc(n, d + 1, GPC_LIK_LOGISTIC);
        double logz;
        gpc_laplace_evidence(w, k, X, y, &logz, grad);
        double rss = peak_rss_mib(), matrix_mib = n * n * 8.0 / (1024.0 * 1024.0);
        printf("peak_rss_mib %.0f\nnxn_matrix_mib %.0f\npeak_in_nxn_matrices %.2f\n", rss,
               matrix_mib, rss / matrix_mib);
        return 0;
    }
    /* A positive definite matrix of the same size for the reference Cholesky. */
    gsl_matrix *A = gsl_matrix_alloc(n, n), *C = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(k, X, A);
    for (size_t i = 0; i < n; i++)
        gsl_matrix_set(A, i, i, gsl_matrix_get(A, i, i) + 1.0);

    /* Alternate the reference Cholesky and the evidence with gradient (from
     * a cold start) so both see the same machine state; keep the best of
     * each. */
    double best = HUGE_VAL, t_chol = HUGE_VAL, t_kernel = HUGE_VAL, logz = 0;
    int iters = 0;
    unsigned long chols = 0, invs = 0;
    gpc_laplace *w = gpc_laplace_alloc(n, d + 1, GPC_LIK_LOGISTIC);
    for (int r = 0; r < reps; r++) {
        gsl_matrix_memcpy(C, A);
        double t0 = now();
        gsl_linalg_cholesky_decomp1(C);
        t_chol = fmin(t_chol, now() - t0);

        t0 = now();
        gpc_kernel_matrix(k, X, w->K);
        t_kernel = fmin(t_kernel, now() - t0);

        w->has_mode = 0;
        w->n_chol = w->n_inverse = 0;
        t0 = now();
        if (gpc_laplace_evidence(w, k, X, y, &logz, grad) != GPC_OK) {
            fprintf(stderr, "bench-laplace: %s\n", gpc_errmsg());
            return 1;
        }
        double t = now() - t0;
        if (t < best) {
            best = t;
            iters = w->iterations;
            chols = w->n_chol;
            invs = w->n_inverse;
        }
    }
    /* a leapfrog-like step: hyperparameters moved by about 0.1 * 0.1 (step
     * size times a unit momentum), the mode search warm-started */
    double t_warm = HUGE_VAL;
    int warm_iters = 0;
    unsigned long warm_chols = 0;
    for (int r = 0; r < reps; r++) {
        for (size_t j = 0; j <= d; j++)
            theta[j] += (j % 2 ? 0.01 : -0.01);
        gpc_kernel_set_params(k, theta);
        w->n_chol = 0;
        double t0 = now();
        gpc_laplace_evidence(w, k, X, y, &logz, grad);
        double t = now() - t0;
        if (t < t_warm) {
            t_warm = t;
            warm_iters = w->iterations;
            warm_chols = w->n_chol;
        }
    }
    gpc_laplace_free(w);
    gsl_matrix_free(A);
    gsl_matrix_free(C);
    printf("n %zu\nd %zu\nlog_evidence %.10g\n", n, d, logz);
    printf("newton_iterations %d\ncholesky_factorisations %lu\ninversions %lu\n", iters, chols,
           invs);
    printf("seconds_cholesky %.4f\nseconds_kernel_matrix %.4f\n", t_chol, t_kernel);
    printf("seconds_evidence_and_gradient %.4g\n", best);
    printf("ratio_to_cholesky %.2f\nallowed_ratio %d\n", best / t_chol, iters + 4);
    printf("warm_step_newton_iterations %d\nwarm_step_cholesky_factorisations %lu\n",
           warm_iters, warm_chols);
    printf("seconds_warm_step %.5f\nwarm_step_ratio_to_cholesky %.2f\n", t_warm,
           t_warm / t_chol);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gpc_kernel_free(k);
    free(theta);
    free(grad);
    return 0;
}
