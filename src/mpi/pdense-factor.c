/* pdense's grid, factor, solve and inverse over MPI ranks: a BLACS grid of
 * all ranks, row by row, and ScaLAPACK; for the build `make MPI=1`, in
 * place of the one-process src/lib/linalg/pdense-factor.c. */
#include "linalg/pdense.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"

void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int p, int q);
void Cblacs_gridinfo(int context, int *p, int *q, int *prow, int *pcol);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info);
void pdpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, double *b, const int *ib, const int *jb,
              const int *descb, int *info);
void pdpotri_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info);

void gpc_pgrid_open(gpc_pgrid *g)
{
    int p, q;
    Cblacs_get(-1, 0, &g->context);
    Cblacs_gridinit(&g->context, "Row", g->p, g->q);
    Cblacs_gridinfo(g->context, &p, &q, &g->prow, &g->pcol);
}

/* ScaLAPACK's info is global, but the verdict is taken from every rank so
 * that no rank can go on alone. */
int gpc_pdense_factor(gpc_pdense *A)
{
    int n = (int)A->n, one = 1, info = 0;
    pdpotrf_("L", &n, A->a, &one, &one, A->desc, &info);
    return gpc_comm_any(A->grid->comm, info != 0) ? GPC_ENUM : GPC_OK;
}

int gpc_pdense_solve(const gpc_pdense *L, double *B, size_t nrhs)
{
    const gpc_pgrid *g = L->grid;
    size_t n = L->n, rows = L->rows;
    size_t cols = gpc_pgrid_local(nrhs, g->nb, g->pcol, g->q), ld = rows > 0 ? rows : 1;
    size_t nb = (size_t)g->nb;
    double *b = gpc_calloc(ld * (cols > 0 ? cols : 1), sizeof *b);
    /* local column c is global column ((c / nb) q + pcol) nb + c % nb */
    for (size_t c = 0; c < cols; c++) {
        size_t gc = ((c / nb) * (size_t)g->q + (size_t)g->pcol) * nb + c % nb;
        for (size_t r = 0; r < rows; r++)
            b[r + c * ld] = B[L->row_index[r] + gc * n];
    }
    int N = (int)n, nr = (int)nrhs, one = 1, info = 0;
    int desc[9] = {1, g->context, N, nr, g->nb, g->nb, 0, 0, (int)ld};
    pdpotrs_("L", &N, &nr, L->a, &one, &one, L->desc, b, &one, &one, desc, &info);
    memset(B, 0, n * nrhs * sizeof *B);
    for (size_t c = 0; c < cols; c++) {
        size_t gc = ((c / nb) * (size_t)g->q + (size_t)g->pcol) * nb + c % nb;
        for (size_t r = 0; r < rows; r++)
            B[L->row_index[r] + gc * n] = b[r + c * ld];
    }
    free(b);
    int st = gpc_comm_sum(g->comm, B, n * nrhs);
    if (st == GPC_OK && gpc_comm_any(g->comm, info != 0))
        st = gpc_fail(GPC_ENUM, "pdpotrs failed (%d)", info);
    return st;
}

int gpc_pdense_inverse(gpc_pdense *L)
{
    int n = (int)L->n, one = 1, info = 0;
    pdpotri_("L", &n, L->a, &one, &one, L->desc, &info);
    return gpc_comm_any(L->grid->comm, info != 0)
               ? gpc_fail(GPC_ENUM, "the inverse of B failed: a zero on its factor's diagonal")
               : GPC_OK;
}
