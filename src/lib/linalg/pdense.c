/* pdense: the layout and the operations every build shares (the factor,
 * solve and inverse are in pdense-factor.c, or src/mpi/pdense-factor.c). */
#include "linalg/pdense.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cblas.h>

#include "base/alloc.h"
#include "base/err.h"

int gpc_pgrid_parse(const char *s, int *p, int *q)
{
    char *end;
    long a = strtol(s, &end, 10), b = 0;
    int ok = end != s && a >= 1 && a <= 1L << 20 && (*end == 'x' || *end == 'X');
    if (ok) {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
        ok = end != t && *end == '\0' && b >= 1 && b <= 1L << 20;
    }
    if (!ok)
        return gpc_fail(GPC_EUSAGE, "a process grid is written PxQ, two whole numbers, such as "
                        "2x2 (P rows times Q columns of ranks), not '%s'", s);
    *p = (int)a;
    *q = (int)b;
    return GPC_OK;
}

void gpc_pgrid_squarest(int R, int *p, int *q)
{
    int a = 1;
    for (int d = 1; (long)d * d <= R; d++)
        if (R % d == 0)
            a = d;
    *p = a;
    *q = R / a;
}

static int asked, asked_p, asked_q, asked_nb;
static gpc_pgrid grid;
static int grid_open;

int gpc_pgrid_request(int p, int q, int nb)
{
    int R = gpc_comm_size(gpc_comm_world());
    if (p > 0 && (long)p * q != R)
        return gpc_fail(GPC_EUSAGE, "a %dx%d process grid needs %ld ranks, and this run has "
                        "%d; start %ld ranks (mpirun -np %ld with the MPI build, bin/mpi/) or "
                        "give a grid of %d", p, q, (long)p * q, R, (long)p * q, (long)p * q, R);
    if (p > 0) { /* a block size alone asks for no grid */
        asked = 1;
        asked_p = p;
        asked_q = q;
    }
    if (nb > 0)
        asked_nb = nb;
    return GPC_OK;
}

const gpc_pgrid *gpc_pgrid_default(void)
{
    gpc_comm *c = gpc_comm_world();
    if (!grid_open && (asked || gpc_comm_size(c) > 1)) {
        grid = (gpc_pgrid){c, asked_p, asked_q, asked_nb > 0 ? asked_nb : GPC_PGRID_BLOCK,
                           0, 0, 0};
        if (grid.p == 0)
            gpc_pgrid_squarest(gpc_comm_size(c), &grid.p, &grid.q);
        gpc_pgrid_open(&grid);
        grid_open = 1;
    }
    return grid_open ? &grid : NULL;
}

size_t gpc_pgrid_local(size_t n, int nb, int at, int procs)
{
    size_t b = (size_t)nb, blocks = n / b, extra = n % b;
    size_t rows = blocks / (size_t)procs * b, rest = blocks % (size_t)procs;
    if ((size_t)at < rest)
        rows += b;
    else if ((size_t)at == rest)
        rows += extra;
    return rows;
}

size_t gpc_pdense_bytes(const gpc_pgrid *g, size_t n)
{
    size_t r = gpc_pgrid_local(n, g->nb, 0, g->p), c = gpc_pgrid_local(n, g->nb, 0, g->q);
    return gpc_doubles_bytes(r > 0 ? r : 1, c);
}

/* Global index of each of the local places of a process at `at` of procs. */
static size_t *global_index(size_t count, int nb, int at, int procs)
{
    size_t *idx = gpc_calloc(count > 0 ? count : 1, sizeof *idx), b = (size_t)nb;
    for (size_t l = 0; l < count; l++)
        idx[l] = ((l / b) * (size_t)procs + (size_t)at) * b + l % b;
    return idx;
}

gpc_pdense *gpc_pdense_alloc(const gpc_pgrid *g, size_t n)
{
    gpc_pdense *A = gpc_calloc(1, sizeof *A);
    A->grid = g;
    A->n = n;
    A->rows = gpc_pgrid_local(n, g->nb, g->prow, g->p);
    A->cols = gpc_pgrid_local(n, g->nb, g->pcol, g->q);
    A->ld = A->rows > 0 ? A->rows : 1;
    A->row_index = global_index(A->rows, g->nb, g->prow, g->p);
    A->col_index = global_index(A->cols, g->nb, g->pcol, g->q);
    A->a = gpc_calloc(A->ld * (A->cols > 0 ? A->cols : 1), sizeof *A->a);
    /* dtype, context, global rows and columns, blocks, first process, ld */
    int desc[9] = {1, g->context, (int)n, (int)n, g->nb, g->nb, 0, 0, (int)A->ld};
    memcpy(A->desc, desc, sizeof desc);
    return A;
}

void gpc_pdense_free(gpc_pdense *A)
{
    if (!A)
        return;
    free(A->row_index);
    free(A->col_index);
    free(A->a);
    free(A);
}

void gpc_pdense_copy(gpc_pdense *dst, const gpc_pdense *src)
{
    memcpy(dst->a, src->a, src->ld * src->cols * sizeof *src->a);
}

int gpc_pdense_local_row(const gpc_pdense *A, size_t g, size_t *li)
{
    size_t nb = (size_t)A->grid->nb, p = (size_t)A->grid->p, block = g / nb;
    if (block % p != (size_t)A->grid->prow)
        return 0;
    *li = (block / p) * nb + g % nb;
    return 1;
}

int gpc_pdense_diag(const gpc_pdense *A, double *d)
{
    memset(d, 0, A->n * sizeof *d);
    for (size_t j = 0; j < A->cols; j++) {
        size_t i;
        if (gpc_pdense_local_row(A, A->col_index[j], &i))
            d[A->col_index[j]] = A->a[i + j * A->ld];
    }
    return gpc_comm_sum(A->grid->comm, d, A->n);
}

/* The local blocks by global block row I and column J: I > J adds A_IJ x_J
 * to y_I and A_IJ' x_I to y_J; I = J its lower triangle as a symmetric
 * block; I < J is the upper triangle, not read. */
int gpc_pdense_symv(const gpc_pdense *A, const double *x, double *y)
{
    size_t nb = (size_t)A->grid->nb;
    memset(y, 0, A->n * sizeof *y);
    for (size_t j0 = 0; j0 < A->cols; j0 += nb) {
        size_t J = A->col_index[j0], nc = A->cols - j0 < nb ? A->cols - j0 : nb;
        for (size_t i0 = 0; i0 < A->rows; i0 += nb) {
            size_t I = A->row_index[i0], nr = A->rows - i0 < nb ? A->rows - i0 : nb;
            const double *blk = A->a + i0 + j0 * A->ld;
            if (I > J) {
                cblas_dgemv(CblasColMajor, CblasNoTrans, (int)nr, (int)nc, 1.0, blk,
                            (int)A->ld, x + J, 1, 1.0, y + I, 1);
                cblas_dgemv(CblasColMajor, CblasTrans, (int)nr, (int)nc, 1.0, blk, (int)A->ld,
                            x + I, 1, 1.0, y + J, 1);
            } else if (I == J) {
                cblas_dsymv(CblasColMajor, CblasLower, (int)nr, 1.0, blk, (int)A->ld, x + I, 1,
                            1.0, y + I, 1);
            }
        }
    }
    return gpc_comm_sum(A->grid->comm, y, A->n);
}

void gpc_pdense_scale(gpc_pdense *A, const double *s, double shift)
{
    for (size_t j = 0; j < A->cols; j++) {
        double *col = A->a + j * A->ld, sj = s[A->col_index[j]];
        for (size_t i = 0; i < A->rows; i++)
            col[i] *= s[A->row_index[i]] * sj;
        size_t i;
        if (gpc_pdense_local_row(A, A->col_index[j], &i))
            col[i] += shift;
    }
}
