/* bound — the global part of the sparse variational bound (gpc(7), SPARSE
 * VARIATIONAL METHOD, Global part): from the summed shard statistics
 * (whitened: sparse/shard), the bound
 *     ELBO = scale sum_i lambda_i - sum_c KL(N(m_c, S_c) || N(0, I)),
 * (scale = n / rows for a minibatch, 1 for all rows) and its gradient in
 * every m_c (scale G_c - m_c) and S_c (scale H_c - 1/2 (I - S_c^-1)), in
 * the hyperparameters and in the inducing inputs Z, the latter two through
 * the rows' kernel values (the shard's part) and through K_ZZ's factor L:
 * the whitened a_i = L^-1 k_i give L's adjoint
 *     Lbar = -scale L'^-1 sum_c (m_c G_c' + 2 (S_c - I) H_c)   (lower part),
 * the Cholesky factorisation's backward step gives K_ZZ's,
 *     Kbar = L'^-1 Sym(Phi(L' Lbar)) L^-1,   Phi: lower part, half diagonal,
 * and the kernel's contractions take it to the hyperparameters and Z.
 * With a kernel per class (sparse/shard) each has its L, and its Lbar sums
 * over its class alone. */
#ifndef GPC_BOUND_H
#define GPC_BOUND_H

#include <gsl/gsl_matrix.h>

#include "kernels/kernel.h"
#include "sparse/shard.h"

/* The bound and its gradient.  M is C x m (row c is m_c), S[c] the
 * covariances, L[g] the factor of each kernel's K_ZZ (sparse/inducing) at
 * k's hyperparameters and Z, st the statistics summed over the rows at them.
 * Outputs: *elbo, dM (C x m), dS[c] (m x m, symmetric: the change of the
 * bound is sum_c tr(dS_c' dS_c) to first order for a change dS_c of S_c),
 * Sinv[c] (S_c^-1, which the KL terms compute and a natural step needs),
 * dtheta (k's nparams), dZ (m x dim);
 * any output pointer but elbo may be NULL.  GPC_ENUM (message set) if an
 * S_c is not positive definite. */
int gpc_bound_eval(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *const *L,
                   const gsl_matrix *M, gsl_matrix *const *S, const gpc_shard_stats *st,
                   double scale, double *elbo, gsl_matrix *dM, gsl_matrix **dS,
                   gsl_matrix **Sinv, double *dtheta, gsl_matrix *dZ);

#endif
