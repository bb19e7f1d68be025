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

/* The first local row at or below global row g (rows when none). */
static size_t first_row_from(const gpc_pdense *A, size_t g)
{
    size_t lo = 0, hi = A->rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (A->row_index[mid] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The local blocks on and below the diagonal, by column blocks: for the
 * block of local columns from j0 (nc of them) the local rows from r0 on.
 * Each is handed to fn with the inputs of its columns and rows and its
 * view of the local part (row-major columns x rows).  The blocks above
 * the diagonal are neither computed nor read: every operation on these
 * matrices takes their lower triangle alone. */
typedef void lower_block_fn(const gsl_matrix *Xc, const gsl_matrix *Xr, gsl_matrix *part,
                            void *ctx);
static void for_lower_blocks(gpc_pdense *A, const gsl_matrix *X, lower_block_fn *fn, void *ctx)
{
    if (A->rows == 0 || A->cols == 0)
        return;
    gsl_matrix *Xr = rows_of(X, A->row_index, A->rows), *Xc = rows_of(X, A->col_index, A->cols);
    gsl_matrix_view all = local_view(A);
    size_t nb = (size_t)A->grid->nb, d = X->size2;
    for (size_t j0 = 0; j0 < A->cols; j0 += nb) {
        size_t nc = A->cols - j0 < nb ? A->cols - j0 : nb;
        size_t r0 = first_row_from(A, A->col_index[j0]);
        if (r0 == A->rows)
            continue;
        gsl_matrix_const_view xc = gsl_matrix_const_submatrix(Xc, j0, 0, nc, d);
        gsl_matrix_const_view xr = gsl_matrix_const_submatrix(Xr, r0, 0, A->rows - r0, d);
        gsl_matrix_view part = gsl_matrix_submatrix(&all.matrix, j0, r0, nc, A->rows - r0);
        fn(&xc.matrix, &xr.matrix, &part.matrix, ctx);
    }
    gsl_matrix_free(Xr);
    gsl_matrix_free(Xc);
}

static void fill_block(const gsl_matrix *Xc, const gsl_matrix *Xr, gsl_matrix *part, void *k)
{
    gpc_kernel_cross(k, Xc, Xr, part);
}

void gpc_kernel_pdense_matrix(const gpc_kernel *k, const gsl_matrix *X, gpc_pdense *K)
{
    for_lower_blocks(K, X, fill_block, (void *)k);
    /* a case against itself: the jitter too */
    for (size_t j = 0, i; j < K->cols; j++)
        if (gpc_pdense_local_row(K, K->col_index[j], &i)) {
            const double *x = gsl_matrix_const_ptr(X, K->col_index[j], 0);
            K->a[i + j * K->ld] = gpc_kernel_pair(k, x, x, GRAM_SELF, 1);
        }
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

typedef struct {
    const gpc_kernel *k;
    double *s, *part;
} contraction;

static void contract_block(const gsl_matrix *Xc, const gsl_matrix *Xr, gsl_matrix *W, void *ctx)
{
    contraction *c = ctx;
    gpc_kernel_cross_contract(c->k, Xc, Xr, NULL, W, c->part);
    for (size_t l = 0; l < gpc_kernel_nparams(c->k); l++)
        c->s[l] += c->part[l];
}

int gpc_kernel_pdense_contract(const gpc_kernel *k, const gsl_matrix *X, gpc_pdense *A,
                               double *s)
{
    size_t p = gpc_kernel_nparams(k);
    memset(s, 0, p * sizeof *s);
    double *g1 = gpc_malloc(p * sizeof *g1), *g0 = gpc_malloc(p * sizeof *g0);
    fold_lower(A);
    contraction c = {k, s, g1};
    for_lower_blocks(A, X, contract_block, &c);
    /* the cross-covariance knows no jitter: add what a case against itself
     * has more */
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
    return gpc_comm_sum(A->grid->comm, s, p);
}
