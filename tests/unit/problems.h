/* problems.h — small classification problems and data helpers shared by the
 * unit tests of the inference methods. */
#ifndef GPC_TEST_PROBLEMS_H
#define GPC_TEST_PROBLEMS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "base/err.h"
#include "io/labels.h"
#include "kernels/kernel.h"

/* n inputs uniform on [-1, 1]^d, labelled by the sign of their coordinate sum
 * plus U(-0.15, 0.15) noise. */
static inline void linear_problem(gsl_rng *r, size_t n, size_t d, gsl_matrix **X, gsl_vector **y)
{
    *X = gsl_matrix_alloc(n, d);
    *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t l = 0; l < d; l++) {
            double x = 2 * gsl_rng_uniform(r) - 1;
            gsl_matrix_set(*X, i, l, x);
            s += x;
        }
        gsl_vector_set(*y, i, s + 0.3 * (gsl_rng_uniform(r) - 0.5) > 0 ? 1 : -1);
    }
}

/* n inputs uniform on [-1, 1]^2, +1 outside the circle of radius sqrt(1/2)
 * (Kim & Ghahramani's synthetic rule), with the labels of the two cases
 * farthest inside the circle flipped: outliers whose EP sites have negative
 * precision under the step likelihood with label noise. */
static inline void circle_problem(gsl_rng *r, size_t n, gsl_matrix **X, gsl_vector **y)
{
    *X = gsl_matrix_alloc(n, 2);
    *y = gsl_vector_alloc(n);
    size_t deep[2] = {0, 0};
    double r2[2] = {1e9, 1e9};
    for (size_t i = 0; i < n; i++) {
        double a = 2 * gsl_rng_uniform(r) - 1, b = 2 * gsl_rng_uniform(r) - 1, s = a * a + b * b;
        gsl_matrix_set(*X, i, 0, a);
        gsl_matrix_set(*X, i, 1, b);
        gsl_vector_set(*y, i, s > 0.5 ? 1 : -1);
        if (s < r2[1]) {
            int k = s < r2[0] ? 0 : 1;
            if (k == 0) {
                deep[1] = deep[0];
                r2[1] = r2[0];
            }
            deep[k] = i;
            r2[k] = s;
        }
    }
    for (int k = 0; k < 2; k++)
        gsl_vector_set(*y, deep[k], -gsl_vector_get(*y, deep[k]));
}

/* Columns of X to zero mean and unit sample sd with the statistics of `by`
 * (X itself, or the training set for a test set). */
static inline void standardise(gsl_matrix *X, const gsl_matrix *by)
{
    for (size_t l = 0; l < X->size2; l++) {
        double m = 0, ss = 0;
        for (size_t i = 0; i < by->size1; i++)
            m += gsl_matrix_get(by, i, l) / by->size1;
        for (size_t i = 0; i < by->size1; i++)
            ss += pow(gsl_matrix_get(by, i, l) - m, 2);
        double sd = sqrt(ss / (by->size1 - 1));
        for (size_t i = 0; i < X->size1; i++)
            gsl_matrix_set(X, i, l, (gsl_matrix_get(X, i, l) - m) / sd);
    }
}

/* The central difference (z(theta_j + h) - z(theta_j - h)) / 2h of an
 * evidence in log hyperparameter j of k; eval computes it at k's current
 * parameters.  k's parameters are as they were on return. */
typedef double (*evidence_at_fn)(void *ctx, const gpc_kernel *k);
static inline double central_difference(gpc_kernel *k, size_t j, double h, evidence_at_fn eval,
                                        void *ctx)
{
    size_t p = gpc_kernel_nparams(k);
    double th[p], t0;
    memcpy(th, gpc_kernel_params(k), sizeof th);
    t0 = th[j];
    th[j] = t0 + h;
    gpc_kernel_set_params(k, th);
    double zp = eval(ctx, k);
    th[j] = t0 - h;
    gpc_kernel_set_params(k, th);
    double zm = eval(ctx, k);
    th[j] = t0;
    gpc_kernel_set_params(k, th);
    return (zp - zm) / (2 * h);
}

/* The -1/+1 labels of a two-class labels file (*y), as the tools read
 * them; GPC_EINPUT (message set) otherwise. */
static inline int read_binary_labels(const char *path, gsl_vector **y)
{
    gpc_labels *l;
    *y = NULL;
    int st = gpc_labels_read(path, &l);
    if (st != GPC_OK)
        return st;
    if (l->nclasses == 2)
        *y = gpc_labels_binary(l);
    else
        st = gpc_fail(GPC_EINPUT, "%s: %zu classes, not two", path, l->nclasses);
    gpc_labels_free(l);
    return st;
}

/* n inputs uniform on [-1, 1]^d in C classes: the class is the argmax over
 * c of a linear score with a different direction per class plus
 * U(0, noise). */
static inline void multiclass_problem(gsl_rng *r, size_t n, size_t d, size_t C, double noise,
                                      gsl_matrix **X, size_t **cls)
{
    *X = gsl_matrix_alloc(n, d);
    *cls = malloc(n * sizeof **cls);
    for (size_t i = 0; i < n; i++) {
        for (size_t l = 0; l < d; l++)
            gsl_matrix_set(*X, i, l, 2.0 * gsl_rng_uniform(r) - 1.0);
        double best = -1e300;
        for (size_t c = 0; c < C; c++) {
            double s = noise * gsl_rng_uniform(r);
            for (size_t l = 0; l < d; l++)
                s += cos(2.0 * M_PI * (double)(c + l) / (double)C) * gsl_matrix_get(*X, i, l);
            if (s > best) {
                best = s;
                (*cls)[i] = c;
            }
        }
    }
}

/* The kernel of spec on d inputs at hyperparameters theta (aborts on a bad
 * spec: the tests' own). */
static inline gpc_kernel *kernel_at(const char *spec, size_t d, const double *theta)
{
    gpc_kernel *k;
    if (gpc_kernel_parse(spec, d, &k) != GPC_OK)
        abort();
    gpc_kernel_set_params(k, theta);
    return k;
}

#endif
