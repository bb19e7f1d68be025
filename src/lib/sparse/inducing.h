/* inducing — the inducing inputs of the sparse variational method, and
 * what its bound needs of them (gpc(7), SPARSE VARIATIONAL METHOD): a start
 * for Z by k-means++ over candidate rows, the Cholesky factor L of K_ZZ,
 * and a case's marginal through its whitened kernel column a = L^-1 k(Z, x):
 *     mu = a' m,   s2 = (k_xx - a'a) + a' S a. */
#ifndef GPC_INDUCING_H
#define GPC_INDUCING_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"

/* m rows of X chosen by k-means++ (Arthur & Vassilvitskii 2007): the
 * first uniformly, each next one with probability proportional to its
 * squared distance to the nearest chosen, by a generator seeded with seed,
 * so the same seed gives the same rows.  Z is m x (columns of X).
 * GPC_EUSAGE (message set) for m = 0, m above the rows of X, or m above
 * the number of distinct rows (a row chosen twice would make K_ZZ
 * singular). */
int gpc_inducing_kmeanspp(const gsl_matrix *X, size_t m, unsigned long seed, gsl_matrix *Z);

/* k-means from that start: up to iterations of Lloyd's algorithm (each row
 * of X to its nearest row of Z, each row of Z to the mean of its rows;
 * one with none stays), stopping early when no row changes its nearest.
 * The means represent the data better than the spread-out rows k-means++
 * picks, which favours outlying rows.  With m the rows of X, every row as
 * it is.  Errors as gpc_inducing_kmeanspp's. */
#define GPC_KMEANS_ITERATIONS 20
int gpc_inducing_kmeans(const gsl_matrix *X, size_t m, unsigned long seed, int iterations,
                        gsl_matrix *Z);

/* L, the lower Cholesky factor of K_ZZ = k(Z, Z) (m x m; the upper
 * triangle is zeroed).  Where K_ZZ is not numerically positive definite
 * (inducing inputs too close for the length scales) a jitter j is added to
 * its diagonal, from 1e-10 times its mean diagonal up by tens to 1e-2
 * times it, and *jitter is j (0 when none was needed): the caller reports
 * it.  GPC_ENUM (message set) if even that fails or K_ZZ is not finite. */
int gpc_inducing_factor(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *L, double *jitter);

/* Ainv = A^-1 for a symmetric positive definite A (full, both triangles)
 * by Cholesky factor and inverse, and *logdet = log|A| (logdet may be
 * NULL).  Nonzero (LAPACK's pivot) if A is not positive definite; Ainv is
 * then undefined. */
int gpc_inducing_spd_inverse(const gsl_matrix *A, gsl_matrix *Ainv, double *logdet);

/* One case's marginal under q(v) = N(mc, S) of one latent function, from
 * its kernel column k = k(Z, x) and variance kxx, whitened as a = L^-1 k:
 * *mu = a' mc, *s2 = (kxx - a'a) + a' S a, each part at least 0 (each is a
 * variance: the Nystrom residual and the variance q adds; below 0 only by
 * rounding). */
void gpc_inducing_marginal(const gsl_matrix *L, const gsl_vector *k, double kxx,
                           const gsl_vector *mc, const gsl_matrix *S, double *mu, double *s2);

#endif
