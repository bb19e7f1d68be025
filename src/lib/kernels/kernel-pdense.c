#include "kernels/kernel-pdense.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "kernels/kernel-impl.h"

int gpc_kernel_pdense_check(const gpc_kernel *k)
{
    if (gpc_kernel_has_gram(k))
        return gpc_fail(GPC_EUSAGE, "a kernel with a gram term cannot be spread over a process "
                        "grid (its columns are numbered by training case); run it as one "
                        "process");
    return GPC_OK;
}

/* The input rows of the given global indices. */
static gsl_matrix *rows_of(const gsl_matrix *X, const size_t *index, size_t count)
{
    gsl_matrix *R = gpc_matrix_alloc(count, X->size2);
    for (size_t i = 0; i < count; i++) {
        gsl_vector_const_view r = gsl_matrix_const_row(X, index[i]);
        gsl_matrix_set_row(R, i, &r.vector);
    }
    return R;
}

/* The local part, column-major rows x cols, is row-major cols x rows: the
 * kernel between the columns' inputs and the rows' (k is symmetric). */
static gsl_matrix_view local_view(gpc_pdense *A)
{
    return gsl_matrix_view_array_with_tda(A->a, A->cols, A->rows, A->ld);
}

void gpc_kernel_pdense_matrix(const gpc_kernel *k, const gsl_matrix *X, gpc_pdense *K)
{
    if (K->rows == 0 || K->cols == 0)
        return;
    gsl_matrix *Xr = rows_of(X, K->row_index, K->rows), *Xc = rows_of(X, K->col_index, K->cols);
    gsl_matrix_view Kt = local_view(K);
    gpc_kernel_cross(k, Xc, Xr, &Kt.matrix);
    /* a case against itself: the jitter too */
    for (size_t j = 0, i; j < K->cols; j++)
        if (gpc_pdense_local_row(K, K->col_index[j], &i)) {
            const double *x = gsl_matrix_const_ptr(X, K->col_index[j], 0);
            K->a[i + j * K->ld] = gpc_kernel_pair(k, x, x, GRAM_SELF, 1);
        }
    gsl_matrix_free(Xr);
    gsl_matrix_free(Xc);
}

/* The whole symmetric A from its lower triangle: entries below the
 * diagonal count for themselves and their mirror, those above for none. */
static void fold_lower(gpc_pdense *A)
{
    for (size_t j = 0; j < A->cols; j++)
        for (size_t i = 0; i < A->rows; i++) {
            size_t gi = A->row_index[i], gj = A->col_index[j];
            A->a[i + j * A->ld] *= gi > gj ? 2.0 : gi == gj ? 1.0 : 0.0;
        }
}

int gpc_kernel_pdense_contract(const gpc_kernel *k, const gsl_matrix *X, gpc_pdense *A,
                               double *s)
{
    size_t p = gpc_kernel_nparams(k);
    memset(s, 0, p * sizeof *s);
    if (A->rows > 0 && A->cols > 0) {
        fold_lower(A);
        gsl_matrix *Xr = rows_of(X, A->row_index, A->rows);
        gsl_matrix *Xc = rows_of(X, A->col_index, A->cols);
        gsl_matrix_view W = local_view(A);
        gpc_kernel_cross_contract(k, Xc, Xr, NULL, &W.matrix, s);
        gsl_matrix_free(Xr);
        gsl_matrix_free(Xc);
        /* the cross-covariance knows no jitter: add what a case against
         * itself has more */
        double *g1 = gpc_malloc(p * sizeof *g1), *g0 = gpc_malloc(p * sizeof *g0);
        for (size_t j = 0, i; j < A->cols; j++)
            if (gpc_pdense_local_row(A, A->col_index[j], &i)) {
                const double *x = gsl_matrix_const_ptr(X, A->col_index[j], 0);
                double w = A->a[i + j * A->ld];
                gpc_kernel_pair_grad(k, x, x, GRAM_SELF, 1, g1);
                gpc_kernel_pair_grad(k, x, x, GRAM_SELF, 0, g0);
                for (size_t l = 0; l < p; l++)
                    s[l] += w * (g1[l] - g0[l]);
            }
        free(g1);
        free(g0);
    }
    return gpc_comm_sum(A->grid->comm, s, p);
}
