/* pdense's grid, factor, solve and inverse on one process: a 1 x 1 grid,
 * whose local part is the whole matrix (column-major), by LAPACK.  The MPI
 * build replaces this file with src/mpi/pdense-factor.c (ScaLAPACK). */
#include "linalg/pdense.h"

#include "base/err.h"

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             double *b, const int *ldb, int *info, size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);

/* One process: the grid is 1 x 1 (gpc_pgrid_request allows no other). */
void gpc_pgrid_open(gpc_pgrid *g)
{
    g->prow = g->pcol = 0;
    g->context = 0;
}

int gpc_pdense_factor(gpc_pdense *A)
{
    int n = (int)A->n, ld = (int)A->ld, info = 0;
    dpotrf_("L", &n, A->a, &ld, &info, 1);
    return info == 0 ? GPC_OK : GPC_ENUM;
}

int gpc_pdense_solve(const gpc_pdense *L, double *B, size_t nrhs)
{
    int n = (int)L->n, ld = (int)L->ld, nr = (int)nrhs, ldb = n > 0 ? n : 1, info = 0;
    dpotrs_("L", &n, &nr, L->a, &ld, B, &ldb, &info, 1);
    return info == 0 ? GPC_OK : gpc_fail(GPC_ENUM, "dpotrs failed (%d)", info);
}

int gpc_pdense_inverse(gpc_pdense *L)
{
    int n = (int)L->n, ld = (int)L->ld, info = 0;
    dpotri_("L", &n, L->a, &ld, &info, 1);
    return info == 0 ? GPC_OK : gpc_fail(GPC_ENUM, "the inverse of B failed: a zero on its "
                                         "factor's diagonal (%d)", info);
}
