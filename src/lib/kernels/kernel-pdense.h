/* kernel-pdense — a kernel matrix spread over a process grid (linalg/pdense)
 * and the contraction of its derivatives, each rank computing its own
 * entries: its local part is the kernel between the inputs of its rows and
 * those of its columns, plus the jitter where the two are one case. */
#ifndef GPC_KERNEL_PDENSE_H
#define GPC_KERNEL_PDENSE_H

#include <gsl/gsl_matrix.h>

#include "kernels/kernel.h"
#include "linalg/pdense.h"

/* GPC_OK if k can be spread over a grid; GPC_EUSAGE (message set) for a
 * gram term, whose columns are numbered by training case and so cannot be
 * cut into the ranks' rows. */
int gpc_kernel_pdense_check(const gpc_kernel *k);

/* K <- K(X, X) (n x n, jitter on the diagonal) in the blocks on and below
 * the diagonal: every operation on K reads its lower triangle alone, so
 * the blocks above it are left as they were, which halves the work. */
void gpc_kernel_pdense_matrix(const gpc_kernel *k, const gsl_matrix *X, gpc_pdense *K);

/* s[j] = sum over all i, l of A_il dK(X, X)_il / dtheta_j for a symmetric A
 * of which the lower triangle (i >= l) is given, summed over the ranks
 * (every rank gets the same bits): each entry below the diagonal counts
 * twice, the blocks above it are not visited.  A's local part is
 * overwritten. */
int gpc_kernel_pdense_contract(const gpc_kernel *k, const gsl_matrix *X, gpc_pdense *A,
                               double *s);

#endif
