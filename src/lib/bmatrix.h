/* bmatrix — B = I + S K S for a diagonal S (S = W^1/2 in the Laplace
 * approximation, the square roots of the site precisions in EP): its
 * Cholesky factor, log determinant and inverse.  Every eigenvalue of B is at
 * least 1, which is why both methods factor B rather than K.
 *
 * Only lower triangles are written or read (LAPACK's dpotrf and dpotri from
 * OpenBLAS; GSL's versions also fill the upper triangle, an extra pass over
 * n^2 numbers that nothing here needs). */
#ifndef GPC_BMATRIX_H
#define GPC_BMATRIX_H

#include <gsl/gsl_matrix.h>

/* L = lower Cholesky factor of I + diag(s) K diag(s) (s has K's size, stride
 * 1).  Returns nonzero if B is not positive definite. */
int gpc_bmatrix_factor(const gsl_matrix *K, const double *s, gsl_matrix *L);

/* log|B| / 2 = sum log L_ii. */
double gpc_bmatrix_half_log_det(const gsl_matrix *L);

/* Replace the factor L by the lower triangle of B^-1. */
void gpc_bmatrix_inverse(gsl_matrix *L);

/* A <- diag(s) A diag(s), lower triangle (e.g. R = S B^-1 S). */
void gpc_bmatrix_scale(gsl_matrix *A, const double *s);

#endif
