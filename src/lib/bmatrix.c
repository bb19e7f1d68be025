#include "bmatrix.h"

#include <math.h>

#include "parallel.h"

/* LAPACK through OpenBLAS.  Row-major lower is column-major upper, hence "U". */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);

int gpc_bmatrix_factor(const gsl_matrix *K, const double *s, gsl_matrix *L)
{
    size_t n = K->size1;
#pragma omp parallel for schedule(static) if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < n; i++) {
        const double *Ki = K->data + i * K->tda;
        double *Li = L->data + i * L->tda;
        for (size_t j = 0; j <= i; j++)
            Li[j] = s[i] * Ki[j] * s[j];
        Li[i] += 1.0;
    }
    int nn = (int)n, lda = (int)L->tda, info;
    dpotrf_("U", &nn, L->data, &lda, &info, 1);
    return info;
}

double gpc_bmatrix_half_log_det(const gsl_matrix *L)
{
    double h = 0.0;
    for (size_t i = 0; i < L->size1; i++)
        h += log(gsl_matrix_get(L, i, i));
    return h;
}

void gpc_bmatrix_inverse(gsl_matrix *L)
{
    int nn = (int)L->size1, lda = (int)L->tda, info;
    dpotri_("U", &nn, L->data, &lda, &info, 1);
}

void gpc_bmatrix_scale(gsl_matrix *L, const double *s)
{
    size_t n = L->size1;
#pragma omp parallel for schedule(static) if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < n; i++) {
        double *Li = L->data + i * L->tda;
        for (size_t j = 0; j <= i; j++)
            Li[j] *= s[i] * s[j];
    }
}
