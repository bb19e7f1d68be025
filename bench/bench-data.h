/* bench-data.h — what the multiclass benchmarks share: a clock, the
 * synthetic data set (n inputs, C overlapping classes) and its writer, and
 * the reference Cholesky factorisation they are timed against. */
#ifndef GPC_BENCH_DATA_H
#define GPC_BENCH_DATA_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kernels/kernel.h"

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Inputs N(0, 1); the class is the argmax over C random smooth scores
 * sum_l a_cl sin(b_cl x_l + phi_cl) plus noise, each score centred over the
 * cases so that no class is rare, and the classes overlap. */
static inline void make_data(size_t n, size_t d, size_t C, gsl_matrix *X, size_t *cls)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    double *a = malloc((3 * C * d + n * C + C) * sizeof *a), *b = a + C * d, *phi = b + C * d,
           *score = phi + C * d, *mean = score + n * C;
    for (size_t k = 0; k < C * d; k++) {
        a[k] = gsl_ran_gaussian(r, 1.0);
        b[k] = 0.5 + gsl_rng_uniform(r);
        phi[k] = 2.0 * M_PI * gsl_rng_uniform(r);
    }
    for (size_t c = 0; c < C; c++)
        mean[c] = 0.0;
    for (size_t i = 0; i < n; i++) {
        for (size_t l = 0; l < d; l++)
            gsl_matrix_set(X, i, l, gsl_ran_gaussian(r, 1.0));
        for (size_t c = 0; c < C; c++) {
            double s = gsl_ran_gaussian(r, 0.3);
            for (size_t l = 0; l < d; l++)
                s += a[c * d + l] * sin(b[c * d + l] * gsl_matrix_get(X, i, l) + phi[c * d + l]);
            score[i * C + c] = s;
            mean[c] += s / (double)n;
        }
    }
    for (size_t i = 0; i < n; i++) {
        cls[i] = 0;
        for (size_t c = 1; c < C; c++)
            if (score[i * C + c] - mean[c] > score[i * C + cls[i]] - mean[cls[i]])
                cls[i] = c;
    }
    free(a);
    gsl_rng_free(r);
}

static inline int write_data(const char *prefix, const gsl_matrix *X, const size_t *cls)
{
    char path[4096];
    snprintf(path, sizeof path, "%s-X.txt", prefix);
    FILE *fx = fopen(path, "w");
    snprintf(path, sizeof path, "%s-y.txt", prefix);
    FILE *fy = fopen(path, "w");
    if (!fx || !fy) {
        fprintf(stderr, "cannot write %s\n", path);
        return 3;
    }
    for (size_t i = 0; i < X->size1; i++) {
        for (size_t l = 0; l < X->size2; l++)
            fprintf(fx, "%s%.17g", l ? " " : "", gsl_matrix_get(X, i, l));
        fprintf(fx, "\n");
        fprintf(fy, "%zu\n", cls[i]);
    }
    int bad = fclose(fx) != 0;
    bad |= fclose(fy) != 0;
    return bad ? 3 : 0;
}

/* The best of three reference Cholesky factorisations of K + I. */
static inline double time_cholesky(const gsl_matrix *A, gsl_matrix *L)
{
    double best = HUGE_VAL;
    for (int r = 0; r < 3; r++) {
        gsl_matrix_memcpy(L, A);
        double t0 = now();
        gsl_linalg_cholesky_decomp1(L);
        best = fmin(best, now() - t0);
    }
    return best;
}

/* The benchmarks' kernel: ARD squared exponential on d inputs with v0 = e
 * and every w_l = 1/e; theta (allocated here) holds its log hyperparameters. */
static inline gpc_kernel *bench_kernel(size_t d, double **theta)
{
    gpc_kernel *k;
    gpc_kernel_parse("ard", d, &k);
    size_t p = gpc_kernel_nparams(k);
    *theta = calloc(p, sizeof **theta);
    (*theta)[0] = 1.0;
    for (size_t l = 1; l < p; l++)
        (*theta)[l] = -1.0;
    gpc_kernel_set_params(k, *theta);
    return k;
}

/* K + I for k on X: a positive definite matrix of the problem's size for
 * the reference Cholesky factorisation. */
static inline gsl_matrix *bench_reference_matrix(const gpc_kernel *k, const gsl_matrix *X)
{
    size_t n = X->size1;
    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(k, X, A);
    for (size_t i = 0; i < n; i++)
        *gsl_matrix_ptr(A, i, i) += 1.0;
    return A;
}

#endif
