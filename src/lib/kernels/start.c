/* Start values for the length scales from the inputs (kernel.h,
 * gpc_kernel_start_scales). */
#include <stdlib.h>

#include "base/alloc.h"
#include "kernels/kernel-impl.h"

/* Rows of X compared, at most: the median of 500 * 499 / 2 pairs is well
 * determined, and the pass stays O(rows^2 columns). */
#define START_ROWS 500

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median over pairs of the first rows of X of the term's summed
 * squared distances (mismatches in discrete columns). */
static double median_distance(const term *t, const gsl_matrix *X, size_t rows)
{
    size_t pairs = rows * (rows - 1) / 2, p = 0;
    double *d = gpc_mallocarray(pairs, sizeof *d);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < i; j++) {
            const double *a = X->data + i * X->tda, *b = X->data + j * X->tda;
            double s = 0.0;
            for (size_t l = 0; l < t->ncols; l++)
                s += col_dist(t, l, 1.0, a, b);
            d[p++] = s;
        }
    qsort(d, pairs, sizeof *d, compare_doubles);
    double med = d[pairs / 2];
    free(d);
    return med;
}

/* The term's inverse squared length scales: its parameters 1 .. count. */
static size_t scale_count(const term *t)
{
    switch (t->type) {
    case T_ARD:
    case T_SE:
    case T_MATERN: return t->nparams - 1;
    case T_RQ: return t->nparams - 2; /* the last is log_alpha */
    default: return 0;
    }
}

size_t gpc_kernel_start_scales(gpc_kernel *k, const gsl_matrix *X)
{
    size_t rows = X->size1 < START_ROWS ? X->size1 : START_ROWS, set = 0;
    if (rows < 2)
        return 0;
    double *theta = gpc_mallocarray(k->total, sizeof *theta);
    for (size_t j = 0; j < k->total; j++)
        theta[j] = k->theta[j];
    for (size_t i = 0; i < k->nterms; i++) {
        const term *t = &k->terms[i];
        size_t count = scale_count(t);
        double med = count ? median_distance(t, X, rows) : 0.0;
        if (!(med > 0.0) || !isfinite(med))
            continue;
        for (size_t c = 0; c < k->copies; c++)
            for (size_t p = 1; p <= count; p++, set++)
                theta[c * k->nparams + t->offset + p] = -log(med);
    }
    gpc_kernel_set_params(k, theta);
    free(theta);
    return set;
}
