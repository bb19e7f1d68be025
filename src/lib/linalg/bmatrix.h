/* bmatrix — B = I + S K S for a diagonal S (S = W^1/2 in the Laplace
 * approximation, the square roots of the site precisions in EP): its
 * Cholesky factor, log determinant and inverse.  Every eigenvalue of B is at
 * least 1, which is why both methods factor B rather than K.
 *
 * Only lower triangles are read, and the factor and the inverse are left in
 * the lower triangle; the upper one is scratch.  Below 400 rows both are
 * formed by gpc's own panel routines, in vectors of eight, in 0.6 (factor)
 * and 0.4 (factor and inverse) of the time of LAPACK's dpotrf and dpotri
 * from OpenBLAS at 200 rows; above, by LAPACK on several threads. */
#ifndef GPC_BMATRIX_H
#define GPC_BMATRIX_H

#include <gsl/gsl_matrix.h>

/* L = lower Cholesky factor of I + diag(s) K diag(s) (s has K's size, stride
 * 1; K symmetric with both triangles filled, as gpc_kernel_matrix gives it).
 * Returns nonzero if B is not positive definite. */
int gpc_bmatrix_factor(const gsl_matrix *K, const double *s, gsl_matrix *L);

/* log|B| / 2 = sum log L_ii. */
double gpc_bmatrix_half_log_det(const gsl_matrix *L);

/* Replace the factor L by the lower triangle of B^-1. */
void gpc_bmatrix_inverse(gsl_matrix *L);

/* A <- diag(s) A diag(s), lower triangle (e.g. R = S B^-1 S). */
void gpc_bmatrix_scale(gsl_matrix *A, const double *s);

/* Sites of either sign (EP with a likelihood that is not log-concave has
 * negative site precisions tau_i): with d_i = sqrt|tau_i| and
 * e_i = sign(tau_i), A = E + D K D takes B's place, since
 * (K + S^-1)^-1 = D A^-1 D and det(I + K S) = |det A|.  A is symmetric but
 * indefinite, so it is factored by Bunch-Kaufman pivoting (LAPACK dsytrf);
 * the pivots live in a gpc_bmatrix_pivots allocated once per size. */
typedef struct {
    size_t n;
    int *ipiv;
    double *work;
    int lwork;
} gpc_bmatrix_pivots;

gpc_bmatrix_pivots *gpc_bmatrix_pivots_alloc(size_t n);
void gpc_bmatrix_pivots_free(gpc_bmatrix_pivots *p);

/* A = factor of diag(e) + diag(d) K diag(d).  Returns nonzero if A is
 * singular. */
int gpc_bmatrix_factor_signed(const gsl_matrix *K, const double *d, const double *e,
                              gsl_matrix *A, gpc_bmatrix_pivots *p);

/* log|det A| / 2 from the factor. */
double gpc_bmatrix_half_log_det_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p);

/* The number of negative eigenvalues of A, from the factor.  With K
 * positive definite and A nonsingular, K^-1 + S has (number of tau_i < 0)
 * - (this number) negative eigenvalues: the block matrix [K^-1, D; D, -E] has the Schur
 * complements -A (of K^-1) and K^-1 + D E D = K^-1 + S (of -E), so by
 * Sylvester's law of inertia n + n_-(A) = n_-(S) + n_+(K^-1 + S) (a 1 x 1
 * check: K = k, tau = -t gives A = t k - 1 and K^-1 + S = 1/k - t).  The
 * Gaussian (K^-1 + S)^-1 is proper iff n_-(A) equals the number of negative
 * site precisions. */
size_t gpc_bmatrix_negative_eigenvalues_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p);

/* B <- A^-1 B for nrhs vectors of length n stored one after the other,
 * ld apart (a row-major nrhs x n matrix with row stride ld). */
void gpc_bmatrix_solve_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p, double *B,
                              size_t nrhs, size_t ld);

/* Replace the factor by the lower triangle of A^-1. */
void gpc_bmatrix_inverse_signed(gsl_matrix *A, const gpc_bmatrix_pivots *p);

#endif
