/* pdense — symmetric n x n matrices spread block-cyclically over a p x q
 * grid of ranks, as ScaLAPACK keeps them (gpc(7), DISTRIBUTED FITS), and the
 * few operations the dense Laplace approximation needs of them.
 *
 * The grid's ranks are numbered row by row: rank r sits at process row
 * r / q and column r % q.  Global row i lies in block i / nb, on process row
 * (i / nb) mod p, at local row (i / (nb p)) nb + i mod nb; columns the same
 * over q.  A rank's local part is a dense rows x cols matrix, column-major
 * with leading dimension ld (ScaLAPACK's local array); it is the matrix's
 * entries at the rank's rows (row_index) and columns (col_index), so a
 * kernel matrix's local part is the kernel between two sets of inputs.
 *
 * Vectors of length n are whole on every rank.  An operation that makes one
 * (a product, a solve, a diagonal) adds the ranks' parts with gpc_comm_sum,
 * in rank order, so every rank holds the same bits.  Every function here is
 * collective: each rank of the grid calls it at the same point.
 *
 * Two builds: pdense-factor.c factors on one process with LAPACK (a 1 x 1
 * grid, whose local part is the whole matrix); under `make MPI=1`
 * src/mpi/pdense-factor.c replaces it with BLACS and ScaLAPACK. */
#ifndef GPC_PDENSE_H
#define GPC_PDENSE_H

#include <stddef.h>

#include "base/comm.h"

/* Rows and columns of a block unless given (--block). */
#define GPC_PGRID_BLOCK 64

typedef struct {
    gpc_comm *comm;
    int p, q, nb;     /* grid rows and columns, block size */
    int prow, pcol;   /* this rank's place */
    int context;      /* BLACS context (0 on one process) */
} gpc_pgrid;

typedef struct {
    const gpc_pgrid *grid;
    size_t n;
    size_t rows, cols, ld;   /* local part: rows x cols, column-major, ld >= 1 */
    size_t *row_index, *col_index; /* global index of each local row and column */
    double *a;
    int desc[9];             /* ScaLAPACK's array descriptor */
} gpc_pdense;

/* The grid every dense Laplace fit of this process uses, opened at the
 * first call (collective): the one of gpc_pgrid_request or, on more than
 * one rank, the squarest grid of all ranks (p <= q) with blocks of
 * GPC_PGRID_BLOCK.  NULL when the fit runs as one process on plain
 * matrices (one rank, no grid asked for). */
const gpc_pgrid *gpc_pgrid_default(void);

/* Ask for a p x q grid (0 x 0: the default shape, and no grid on one
 * process) with blocks of nb (0: the default size) before the first
 * gpc_pgrid_default.  GPC_EUSAGE (message set) if p q is not the number of
 * ranks. */
int gpc_pgrid_request(int p, int q, int nb);

/* Open grid g (comm, p, q and nb set, p q the number of ranks): its place
 * and BLACS context.  Each build has its own (pdense-factor.c). */
void gpc_pgrid_open(gpc_pgrid *g);

/* Parse "PxQ" (two whole numbers from 1 up); GPC_EUSAGE otherwise. */
int gpc_pgrid_parse(const char *s, int *p, int *q);

/* The squarest p x q = R with p <= q. */
void gpc_pgrid_squarest(int R, int *p, int *q);

/* The number of rows or columns of n that a process at place `at` of
 * `procs` holds in blocks of nb (ScaLAPACK's numroc). */
size_t gpc_pgrid_local(size_t n, int nb, int at, int procs);

/* The bytes of one n x n matrix's local part on the rank with the most. */
size_t gpc_pdense_bytes(const gpc_pgrid *g, size_t n);

gpc_pdense *gpc_pdense_alloc(const gpc_pgrid *g, size_t n);
void gpc_pdense_free(gpc_pdense *A);
void gpc_pdense_copy(gpc_pdense *dst, const gpc_pdense *src);

/* Whether global row g is one of this rank's rows, and which (*local). */
int gpc_pdense_local_row(const gpc_pdense *A, size_t g, size_t *local);

/* d (n) = the diagonal of A, whole on every rank. */
int gpc_pdense_diag(const gpc_pdense *A, double *d);

/* y = A x for a symmetric A of which only the lower triangle (global
 * i >= j) is read; x and y whole (n), distinct. */
int gpc_pdense_symv(const gpc_pdense *A, const double *x, double *y);

/* A <- diag(s) A diag(s) + shift I (local parts; s whole). */
void gpc_pdense_scale(gpc_pdense *A, const double *s, double shift);

/* Lower Cholesky factor in place (pdpotrf): GPC_OK, or GPC_ENUM (no
 * message) if A is not positive definite, on every rank. */
int gpc_pdense_factor(gpc_pdense *A);

/* B <- A^-1 B from the factor (pdpotrs), for nrhs vectors of length n
 * whole on every rank, one after the other (column j at B + j n). */
int gpc_pdense_solve(const gpc_pdense *L, double *B, size_t nrhs);

/* The factor replaced by the lower triangle of A^-1 (pdpotri). */
int gpc_pdense_inverse(gpc_pdense *L);

#endif
