/* Benchmark: the cost of each kind of kernel term, where a fit spends it.
 *
 *   bench-kernels [n [d [repeats [evidence_n...]]]]   defaults 2000 8 5 200 1000
 *
 * For each spec of a fixed list, on n synthetic cases of d inputs (fixed
 * seed) at the default hyperparameters (gpc_kernel_default_params): the time
 * of the kernel matrix (gpc_kernel_matrix) and of the gradient's contraction
 * over all hyperparameters (gpc_kernel_grad_contract, as the Laplace
 * evidence calls it: K the kernel's own full matrix, alpha 1/2 with a
 * vector u, beta -1/2 with a symmetric R, and dK v), each the best of
 * `repeats` rounds.  The specs take turns within each round, so that a
 * change in the machine's load touches them all.  One row per spec: both
 * times, their sum, the sum over ard's, and the nanoseconds per pair of
 * cases (n (n + 1) / 2 pairs).  A spec this build does not parse is reported
 * as not available, and the rest go on.  The loops run on the threads
 * gpc_parallel_threads gives (fewer on a busy machine): the fewest and the
 * most seen at the rounds' starts are reported.
 *
 * Then, for each evidence_n (0 skips it), the binary Laplace log evidence
 * with its gradient (gpc_laplace_evidence, logistic, from a cold start) for
 * "ard@1-4*ard@5-8" against "ard" at hyperparameters where the two are the
 * same function (a product of ARD squared exponentials on disjoint columns
 * is one over all of them): the best of at least `repeats` runs each, in
 * turn, repeated until the ard runs add up to 1 s (at most 50), with their
 * ratio, in "key value" lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "base/parallel.h"
#include "kernels/kernel.h"
#include "linalg/blas.h"
#include "methods/laplace.h"

#include "bench-data.h"

/* The specs timed, ard first: the others' sums are divided by its.  The
 * products need d >= 8. */
static const char *const specs[] = {
    "ard",         "se",          "matern12ard", "matern32ard",
    "matern52ard", "rqard",       "periodicard", "poly2",
    "linear",      "ard@1-4*ard@5-8", "matern52ard@1-4*periodic@5-8",
};
#define NSPECS (sizeof specs / sizeof specs[0])

/* The targets: matern52ard's matrix and contraction together, and the
 * product's evidence with gradient, at most this many times ard's. */
#define ALLOWED_OVER_ARD 1.5

/* One spec's kernel (NULL if it does not parse, with why) and best times. */
typedef struct {
    gpc_kernel *k;
    char why[256];
    double matrix, contraction;
} timed_spec;

/* The contraction's operands: u and v N(0, 1), R symmetric with entries
 * N(0, 1/n) and a positive diagonal, of the size of sW B^-1 sW's. */
typedef struct {
    gsl_vector *u, *v;
    gsl_matrix *R, *B;
    double *s;
} operands;

static operands make_operands(size_t n, size_t pmax)
{
    operands o = {gsl_vector_alloc(n), gsl_vector_alloc(n), gsl_matrix_alloc(n, n),
                  gsl_matrix_alloc(n, pmax), calloc(pmax, sizeof(double))};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    double sd = 1.0 / sqrt((double)n);
    for (size_t i = 0; i < n; i++) {
        gsl_vector_set(o.u, i, gsl_ran_gaussian(r, 1.0));
        gsl_vector_set(o.v, i, gsl_ran_gaussian(r, 1.0));
        for (size_t j = 0; j < i; j++) {
            double x = gsl_ran_gaussian(r, sd);
            gsl_matrix_set(o.R, i, j, x);
            gsl_matrix_set(o.R, j, i, x);
        }
        gsl_matrix_set(o.R, i, i, 0.1 + gsl_rng_uniform(r));
    }
    gsl_rng_free(r);
    return o;
}

static void free_operands(operands *o)
{
    gsl_vector_free(o->u);
    gsl_vector_free(o->v);
    gsl_matrix_free(o->R);
    gsl_matrix_free(o->B);
    free(o->s);
}

/* Parse every spec at its default hyperparameters; returns the largest
 * number of hyperparameters among those that parse. */
static size_t parse_specs(size_t d, timed_spec *ts)
{
    size_t pmax = 1;
    for (size_t i = 0; i < NSPECS; i++) {
        ts[i] = (timed_spec){NULL, "", HUGE_VAL, HUGE_VAL};
        if (gpc_kernel_parse(specs[i], d, &ts[i].k) != GPC_OK) {
            snprintf(ts[i].why, sizeof ts[i].why, "%s", gpc_errmsg());
            ts[i].k = NULL;
            continue;
        }
        size_t p = gpc_kernel_nparams(ts[i].k);
        double *theta = malloc(p * sizeof *theta);
        gpc_kernel_default_params(ts[i].k, theta);
        gpc_kernel_set_params(ts[i].k, theta);
        free(theta);
        pmax = p > pmax ? p : pmax;
    }
    return pmax;
}

/* One round: each spec's matrix, then its contraction with that matrix. */
static void time_round(timed_spec *ts, const gsl_matrix *X, gsl_matrix *K, operands *o)
{
    gpc_parallel_blas(X->size1); /* the products' BLAS threads, as the methods set them */
    for (size_t i = 0; i < NSPECS; i++) {
        if (!ts[i].k)
            continue;
        size_t p = gpc_kernel_nparams(ts[i].k);
        gsl_matrix_view B = gsl_matrix_submatrix(o->B, 0, 0, X->size1, p);
        double t0 = now();
        gpc_kernel_matrix(ts[i].k, X, K);
        double t1 = now();
        gpc_kernel_grad_contract(ts[i].k, X, K, o->u, 0.5, o->R, -0.5, o->v, o->s, &B.matrix);
        double t2 = now();
        ts[i].matrix = fmin(ts[i].matrix, t1 - t0);
        ts[i].contraction = fmin(ts[i].contraction, t2 - t1);
    }
}

static void print_rows(const timed_spec *ts, size_t n)
{
    double pairs = 0.5 * (double)n * (double)(n + 1);
    double ard = ts[0].k ? ts[0].matrix + ts[0].contraction : NAN;
    for (size_t i = 0; i < NSPECS; i++) {
        if (!ts[i].k) {
            printf("spec %s not available (%s)\n", specs[i], ts[i].why);
            continue;
        }
        double sum = ts[i].matrix + ts[i].contraction;
        printf("spec %s params %zu seconds_matrix %.4g seconds_contraction %.4g "
               "seconds_sum %.4g sum_over_ard %.2f ns_per_pair_matrix %.1f "
               "ns_per_pair_contraction %.1f\n",
               specs[i], gpc_kernel_nparams(ts[i].k), ts[i].matrix, ts[i].contraction, sum,
               sum / ard, 1e9 * ts[i].matrix / pairs, 1e9 * ts[i].contraction / pairs);
    }
    printf("allowed_matern52ard_sum_over_ard %.1f\n", ALLOWED_OVER_ARD);
}

static int kernels_part(size_t n, size_t d, int reps)
{
    gsl_matrix *X = gsl_matrix_alloc(n, d), *K = gsl_matrix_alloc(n, n);
    size_t *cls = malloc(n * sizeof *cls);
    make_data(n, d, 2, X, cls);
    free(cls);
    timed_spec ts[NSPECS];
    operands o = make_operands(n, parse_specs(d, ts));
    time_round(ts, X, K, &o); /* untimed: the first calls fault pages in and start threads */
    for (size_t i = 0; i < NSPECS; i++)
        ts[i].matrix = ts[i].contraction = HUGE_VAL;
    int tmin = gpc_parallel_threads(), tmax = tmin;
    for (int r = 0; r < reps; r++) {
        int th = gpc_parallel_threads(); /* fewer while other processes are busy */
        tmin = th < tmin ? th : tmin;
        tmax = th > tmax ? th : tmax;
        time_round(ts, X, K, &o);
    }
    printf("n %zu\nd %zu\nrepeats %d\nthreads_min %d\nthreads_max %d\n", n, d, reps, tmin,
           tmax);
    print_rows(ts, n);
    for (size_t i = 0; i < NSPECS; i++)
        gpc_kernel_free(ts[i].k);
    free_operands(&o);
    gsl_matrix_free(X);
    gsl_matrix_free(K);
    return 0;
}

/* The same function two ways: "ard" with v0 = e and every w_l = 1/e, and
 * the product with v0 = e in its first factor and 1 in its second. */
static gpc_kernel *evidence_kernel(const char *spec, size_t d)
{
    gpc_kernel *k;
    if (gpc_kernel_parse(spec, d, &k) != GPC_OK)
        return NULL;
    size_t p = gpc_kernel_nparams(k);
    double *theta = malloc(p * sizeof *theta);
    for (size_t j = 0; j < p; j++)
        theta[j] = -1.0;
    theta[0] = 1.0;
    long second = gpc_kernel_param_index(k, "t2.log_v0");
    if (second >= 0)
        theta[second] = 0.0;
    gpc_kernel_set_params(k, theta);
    free(theta);
    return k;
}

/* Best time of one cold evidence with gradient, with its iterations and log
 * evidence. */
typedef struct {
    gpc_kernel *k;
    gpc_laplace *w;
    double *grad, best, total, logz;
    int iterations;
} evidence_run;

static int run_evidence(evidence_run *e, const gsl_matrix *X, const gsl_vector *y)
{
    e->w->has_mode = 0;
    double t0 = now();
    if (gpc_laplace_evidence(e->w, e->k, X, y, &e->logz, e->grad) != GPC_OK)
        return 1;
    double t = now() - t0;
    e->total += t;
    if (t < e->best) {
        e->best = t;
        e->iterations = e->w->iterations;
    }
    return 0;
}

static int evidence_part(size_t n, size_t d, int reps)
{
    const char *product = "ard@1-4*ard@5-8";
    printf("evidence_n %zu\n", n);
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    gsl_vector *y = gsl_vector_alloc(n);
    size_t *cls = malloc(n * sizeof *cls);
    make_data(n, d, 2, X, cls);
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(y, i, cls[i] ? 1.0 : -1.0);
    free(cls);
    evidence_run e[2] = {{evidence_kernel("ard", d), 0, 0, HUGE_VAL, 0, 0, 0},
                         {evidence_kernel(product, d), 0, 0, HUGE_VAL, 0, 0, 0}};
    int rc = 0;
    if (!e[1].k)
        printf("product %s not available (%s)\n", product, gpc_errmsg());
    else {
        for (int i = 0; i < 2; i++) {
            size_t p = gpc_kernel_nparams(e[i].k);
            e[i].w = gpc_laplace_alloc(n, p, GPC_LIK_LOGISTIC);
            e[i].grad = calloc(p, sizeof *e[i].grad);
        }
        for (int r = 0; !rc && (r < reps || (r < 50 && e[0].total < 1.0)); r++)
            rc = run_evidence(&e[0], X, y) || run_evidence(&e[1], X, y);
        if (rc)
            fprintf(stderr, "bench-kernels: evidence: %s\n", gpc_errmsg());
        else
            printf("seconds_ard %.4g\nseconds_product %.4g\nproduct_over_ard %.2f\n"
                   "allowed_product_over_ard %.1f\nnewton_iterations_ard %d\n"
                   "newton_iterations_product %d\nlog_evidence_ard %.10g\n"
                   "log_evidence_product %.10g\n",
                   e[0].best, e[1].best, e[1].best / e[0].best, ALLOWED_OVER_ARD,
                   e[0].iterations, e[1].iterations, e[0].logz, e[1].logz);
    }
    for (int i = 0; i < 2; i++) {
        gpc_kernel_free(e[i].k);
        if (e[i].w)
            gpc_laplace_free(e[i].w);
        free(e[i].grad);
    }
    gsl_matrix_free(X);
    gsl_vector_free(y);
    return rc;
}

int main(int argc, char **argv)
{
    gpc_blas_init(); /* the kernels the tools run on */
    gpc_gsl_quiet();
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (n < 1 || d < 1 || reps < 1) {
        fprintf(stderr, "usage: bench-kernels [n [d [repeats [evidence_n...]]]]\n");
        return 1;
    }
    int rc = kernels_part(n, d, reps);
    size_t deflt[] = {200, 1000}, count = argc > 4 ? (size_t)argc - 4 : 2;
    for (size_t i = 0; !rc && i < count; i++) {
        size_t ne = argc > 4 ? strtoul(argv[4 + i], NULL, 10) : deflt[i];
        if (ne > 0)
            rc = evidence_part(ne, d, reps);
    }
    return rc;
}
