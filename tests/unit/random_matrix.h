/* random_matrix.h — an n x d matrix of independent U(-1, 1) entries from r,
 * for the tests of kernels and of the sparse method's parts. */
#ifndef GPC_TEST_RANDOM_MATRIX_H
#define GPC_TEST_RANDOM_MATRIX_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

static inline gsl_matrix *random_matrix(gsl_rng *r, size_t n, size_t d)
{
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    for (size_t i = 0; i < n * d; i++)
        X->data[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
    return X;
}

#endif
