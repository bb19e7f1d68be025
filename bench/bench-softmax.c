/* Benchmark: multiclass (softmax) Laplace log evidence plus gradient from a
 * cold start for n cases in d dimensions and C classes (one shared ARD
 * squared-exponential kernel), against the time of one BLAS Cholesky of the
 * same size on the same machine.
 *
 *   bench-softmax [n [d [C [repeats]]]]  defaults 2000 8 4 2
 *   bench-softmax -w PREFIX [n [d [C]]]  write the data to PREFIX-X.txt and
 *                                        PREFIX-y.txt (labels 0..C-1), no timing
 *
 * The thread count is the environment's (OPENBLAS_NUM_THREADS,
 * OMP_NUM_THREADS).  Three cold fits share the work out: the mode alone, the
 * factorisation at that mode alone (gpc_softmax_set_mode), and the mode with
 * the gradient; a Newton step is the first less the second (and the kernel
 * matrix), per step, and the gradient the third less the first.  Each is the
 * best of `repeats` rounds, interleaved with the reference Cholesky, so that
 * a busy machine does not tip the differences.  Counts are O(n^3) work in
 * Cholesky equivalents (chol_equiv); the conjugate-gradient iterations of
 * the Newton steps are O(n^2) each and reported apart, also as Cholesky
 * equivalents by their flops.  Prints one "key value" line per figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "base/parallel.h"
#include "kernels/kernel.h"
#include "methods/softmax.h"

#include "bench-data.h"
#include "linalg/blas.h"


static int fail(const char *what)
{
    fprintf(stderr, "bench-softmax: %s: %s\n", what, gpc_errmsg());
    return 1;
}

/* Best times of one round of the three fits, and the counts (the same in
 * every round). */
typedef struct {
    double chol, kernel, mode, final, total;
    int steps;
    unsigned long ce_mode, ce_final, ce_total, cg;
    double log_evidence;
} timings;

static int round_of_fits(gpc_kernel *k, const gsl_matrix *X, const size_t *cls, size_t C,
                         const gsl_matrix *A, gsl_matrix *L, timings *t)
{
    size_t n = X->size1, p = gpc_kernel_nparams(k);
    double lz, *grad = calloc(p, sizeof *grad);
    t->chol = fmin(t->chol, time_cholesky(A, L));

    gpc_softmax *w = gpc_softmax_alloc(n, C, p, 0);
    double t0 = now();
    gpc_kernel_matrix(k, X, w->K[0]);
    t->kernel = fmin(t->kernel, now() - t0);
    gpc_softmax_free(w);

    w = gpc_softmax_alloc(n, C, p, 0); /* the mode alone */
    t0 = now();
    if (gpc_softmax_evidence(w, &k, X, cls, &lz, NULL) != GPC_OK)
        return fail("mode");
    t->mode = fmin(t->mode, now() - t0);
    t->steps = w->iterations;
    t->ce_mode = w->chol_equiv;
    t->cg = w->cg_iterations;

    gpc_softmax *w2 = gpc_softmax_alloc(n, C, p, 0); /* the factorisation at the mode */
    gpc_kernel_matrix(k, X, w2->K[0]);
    t0 = now();
    if (gpc_softmax_set_mode(w2, cls, w->f) != GPC_OK)
        return fail("factorisation at the mode");
    t->final = fmin(t->final, now() - t0);
    t->ce_final = w2->chol_equiv;
    gpc_softmax_free(w2);
    gpc_softmax_free(w);

    w = gpc_softmax_alloc(n, C, p, 0); /* the mode with the gradient */
    t0 = now();
    if (gpc_softmax_evidence(w, &k, X, cls, &t->log_evidence, grad) != GPC_OK)
        return fail("gradient");
    t->total = fmin(t->total, now() - t0);
    t->ce_total = w->chol_equiv;
    gpc_softmax_free(w);
    free(grad);
    return 0;
}

static void report(size_t n, size_t d, size_t C, const size_t *count, const timings *t)
{
    double t_step = (t->mode - t->kernel - t->final) / t->steps;
    double t_grad = t->total - t->mode;
    printf("n %zu\nd %zu\nC %zu\nthreads %d\n", n, d, C, gpc_parallel_threads());
    printf("class_counts");
    for (size_t c = 0; c < C && c < 64; c++)
        printf(" %zu", count[c]);
    printf("\nlog_evidence %.10g\n", t->log_evidence);
    printf("newton_steps %d\n", t->steps);
    printf("cholesky_equivalents_per_step %.2f\n",
           (double)(t->ce_mode - t->ce_final) / t->steps);
    /* an iteration: two triangular solves per class (n^2 flops each) and one
     * product with the shared K (2 n^2) */
    printf("cg_iterations_per_step %.1f\n", (double)t->cg / t->steps);
    printf("cg_cholesky_equivalents_per_step %.3f\n",
           (double)t->cg / t->steps * (6.0 * (double)C + 6.0) / (double)n);
    printf("cholesky_equivalents_at_mode %lu\n", t->ce_final);
    printf("cholesky_equivalents_gradient %lu\n", t->ce_total - t->ce_mode);
    printf("cholesky_equivalents_total %lu\n", t->ce_total);
    printf("seconds_cholesky %.4g\nseconds_kernel_matrix %.4g\n", t->chol, t->kernel);
    printf("seconds_per_step %.4g\nstep_ratio_to_cholesky %.2f\n", t_step, t_step / t->chol);
    printf("seconds_at_mode %.4g\nat_mode_ratio_to_cholesky %.2f\n", t->final,
           t->final / t->chol);
    printf("seconds_gradient %.4g\ngradient_ratio_to_cholesky %.2f\n", t_grad,
           t_grad / t->chol);
    printf("seconds_evidence_and_gradient %.4g\nratio_to_cholesky %.2f\n", t->total,
           t->total / t->chol);
}

int main(int argc, char **argv)
{
    gpc_blas_init(); /* the kernels the tools run on */
    const char *prefix = NULL;
    if (argc > 2 && !strcmp(argv[1], "-w")) {
        prefix = argv[2];
        argc -= 2;
        argv += 2;
    }
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    size_t C = argc > 3 ? strtoul(argv[3], NULL, 10) : 4;
    int repeats = argc > 4 ? atoi(argv[4]) : 2;
    gpc_gsl_quiet();
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    size_t *cls = malloc(n * sizeof *cls), count[64] = {0};
    make_data(n, d, C, X, cls);
    if (prefix)
        return write_data(prefix, X, cls);
    for (size_t i = 0; i < n; i++)
        count[cls[i] < 64 ? cls[i] : 63]++;

    double *theta;
    gpc_kernel *k = bench_kernel(d, &theta);

    gsl_matrix *A = bench_reference_matrix(k, X), *L = gsl_matrix_alloc(n, n);
    timings t = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL, 0, 0, 0, 0, 0, 0.0};
    for (int r = 0; r < repeats; r++)
        if (round_of_fits(k, X, cls, C, A, L, &t) != 0)
            return 1;
    t.chol = fmin(t.chol, time_cholesky(A, L));
    report(n, d, C, count, &t);
    gpc_kernel_free(k);
    gsl_matrix_free(A);
    gsl_matrix_free(L);
    gsl_matrix_free(X);
    free(cls);
    free(theta);
    return 0;
}
