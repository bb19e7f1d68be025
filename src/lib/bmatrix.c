#include "bmatrix.h"

#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "parallel.h"

/* LAPACK through OpenBLAS.  Row-major lower is column-major upper, hence "U". */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dsytrf_(const char *uplo, const int *n, double *a, const int *lda, int *ipiv,
             double *work, const int *lwork, int *info, size_t uplo_len);
void dsytrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, size_t uplo_len);
void dsytri_(const char *uplo, const int *n, double *a, const int *lda, const int *ipiv,
             double *work, int *info, size_t uplo_len);

/* Lower triangle of diag(e) + diag(s) K diag(s) in L (e NULL: the identity). */
static void assemble(const gsl_matrix *K, const double *s, const double *e, gsl_matrix *L)
{
    size_t n = K->size1;
#pragma omp parallel for schedule(static) if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < n; i++) {
        const double *Ki = K->data + i * K->tda;
        double *Li = L->data + i * L->tda;
        for (size_t j = 0; j <= i; j++)
            Li[j] = s[i] * Ki[j] * s[j];
        Li[i] += e ? e[i] : 1.0;
    }
}

int gpc_bmatrix_factor(const gsl_matrix *K, const double *s, gsl_matrix *L)
{
    assemble(K, s, NULL, L);
    int nn = (int)K->size1, lda = (int)L->tda, info;
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

gpc_bmatrix_pivots *gpc_bmatrix_pivots_alloc(size_t n)
{
    gpc_bmatrix_pivots *p = gpc_malloc(sizeof *p);
    int nn = (int)n, lda = nn > 1 ? nn : 1, query = -1, info, ipiv = 0;
    double best = 0.0, dummy = 0.0;
    dsytrf_("U", &nn, &dummy, &lda, &ipiv, &best, &query, &info, 1);
    p->n = n;
    p->lwork = best > (double)n ? (int)best : (int)n + 1;
    p->ipiv = gpc_malloc((n + 1) * sizeof *p->ipiv);
    p->work = gpc_malloc((size_t)p->lwork * sizeof *p->work);
    return p;
}

void gpc_bmatrix_pivots_free(gpc_bmatrix_pivots *p)
{
    if (!p)
        return;
    free(p->ipiv);
    free(p->work);
    free(p);
}

int gpc_bmatrix_factor_signed(const gsl_matrix *K, const double *d, const double *e,
                              gsl_matrix *A, gpc_bmatrix_pivots *p)
{
    assemble(K, d, e, A);
    int nn = (int)K->size1, lda = (int)A->tda, info;
    dsytrf_("U", &nn, A->data, &lda, p->ipiv, p->work, &p->lwork, &info, 1);
    return info;
}

/* A pivot k < 0 in an upper (column-major) factor starts a 2 x 2 block of D
 * in rows k, k+1, whose off-diagonal element is row-major (k+1, k). */
double gpc_bmatrix_half_log_det_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p)
{
    double h = 0.0;
    for (size_t k = 0; k < A->size1; k++) {
        double a = gsl_matrix_get(A, k, k);
        if (p->ipiv[k] > 0) {
            h += log(fabs(a));
        } else {
            double b = gsl_matrix_get(A, k + 1, k), c = gsl_matrix_get(A, k + 1, k + 1);
            h += log(fabs(a * c - b * b));
            k++;
        }
    }
    return 0.5 * h;
}

/* Sylvester's law of inertia: A = U D U' has the inertia of the block
 * diagonal D; a 2 x 2 block has one eigenvalue of each sign when its
 * determinant is negative, else two of its diagonal's sign. */
size_t gpc_bmatrix_negative_eigenvalues_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p)
{
    size_t neg = 0;
    for (size_t k = 0; k < A->size1; k++) {
        double a = gsl_matrix_get(A, k, k);
        if (p->ipiv[k] > 0) {
            neg += a < 0.0;
        } else {
            double b = gsl_matrix_get(A, k + 1, k), c = gsl_matrix_get(A, k + 1, k + 1);
            neg += a * c - b * b < 0.0 ? 1 : (a < 0.0 ? 2 : 0);
            k++;
        }
    }
    return neg;
}

void gpc_bmatrix_solve_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p, double *B,
                              size_t nrhs, size_t ld)
{
    int nn = (int)A->size1, lda = (int)A->tda, nr = (int)nrhs, ldb = (int)ld, info;
    dsytrs_("U", &nn, &nr, A->data, &lda, p->ipiv, B, &ldb, &info, 1);
}

void gpc_bmatrix_inverse_signed(gsl_matrix *A, const gpc_bmatrix_pivots *p)
{
    int nn = (int)A->size1, lda = (int)A->tda, info;
    dsytri_("U", &nn, A->data, &lda, p->ipiv, p->work, &info, 1);
}
