/* kernel — covariance functions named by spec strings, with hyperparameters in
 * log space and analytic gradients.
 *
 * A spec is an expression of terms joined by '+' (sum) and '*' (product,
 * binding tighter), with parentheses; each term is optionally restricted to
 * a subset of input columns with '@' (1-based, commas and ranges):
 *
 *   spec    = sum { ':' clause }
 *   sum     = product { '+' product }
 *   product = factor { '*' factor }
 *   factor  = term | '(' sum ')'
 *   term    = NAME [ '@' columns ]
 *
 * e.g. "ard+bias+jitter", "ard@1-3+se@4,5", "ard@1-3*periodic@4" or
 * "(matern32@1-3+linear@4)*periodic@5".  The terms, with q the scaled
 * squared distance, q = sum_l w_l d_l (ARD forms, one w_l per column) or
 * q = w sum_l d_l (isotropic forms, one w), d_l = (x_l - x'_l)^2, and
 * r = sqrt(q):
 *
 *   ard            v0 exp(-q/2), ARD                       log_v0, log_w<l>...
 *   se             v0 exp(-q/2), isotropic                 log_v0, log_w
 *   matern12       v0 exp(-r)                              log_v0, log_w
 *   matern32       v0 (1 + sqrt3 r) exp(-sqrt3 r)          log_v0, log_w
 *   matern52       v0 (1 + sqrt5 r + 5 r^2/3) exp(-sqrt5 r) log_v0, log_w
 *   matern12ard, matern32ard, matern52ard: the same, ARD   log_v0, log_w<l>...
 *   rq             v0 (1 + q / (2 alpha))^-alpha           log_v0, log_w, log_alpha
 *   rqard          the same, ARD                           log_v0, log_w<l>..., log_alpha
 *   periodic       v0 exp(-2 w sum_l sin^2(pi (x_l - x'_l) / p))
 *                                                          log_v0, log_w, log_p
 *   periodicard    v0 exp(-2 sum_l w_l sin^2(pi (x_l - x'_l) / p_l))
 *                                                          log_v0, log_w<l>..., log_p<l>...
 *   poly<P>        v (c + x.x')^P, P = 1..GPC_KERNEL_MAX_DEGREE fixed in the
 *                  name ("poly2")                          log_v, log_c
 *   linear         v x.x'                                  log_v
 *   nn             v0 (2/pi) asin(2 u(x,x') /
 *                    sqrt((1 + 2 u(x,x)) (1 + 2 u(x',x'))))
 *                  with u(x,x') = s0 + s x.x'              log_v0, log_s0, log_s
 *                  (the infinite-network kernel of Williams 1998)
 *   bias           b (a constant)                          log_bias
 *   jitter         j delta(x, x') (same training case)     log_jitter
 *   gram           v G(x, x'), a precomputed Gram matrix   log_v
 *                  read from the inputs themselves
 *
 * w = 1 / lengthscale^2 throughout (w_l per column).  The periodic terms are
 * MacKay's (1998) per column, a product of one-dimensional periodic kernels
 * and so positive semi-definite in any dimension (the form with the
 * Euclidean distance inside the sine is not, beyond one dimension).
 *
 * Exact at the edges: the Matern terms' derivatives go through
 * dk/dq, which is finite at r = 0 for nu = 3/2 and 5/2; for nu = 1/2 it is
 * not, but each w_l d_l <= q, so dk/dlog w_l = dk/dq w_l d_l tends to 0 and
 * is 0 at r = 0.  The periodic terms use sin^2, never 1 - cos, so that at
 * periods far beyond the data the kernel and its derivatives keep their
 * relative accuracy.  rq's derivative in log alpha, k alpha (z/(1+z) -
 * log1p(z)) with z = q/(2 alpha), is summed as a series where z is small
 * (the two parts cancel).
 *
 * Names: each term's hyperparameters as listed; terms are numbered 1, 2, ...
 * left to right in the spec whatever the nesting, and every name of a term
 * gets the prefix "t<k>." (k its number) where two terms would share a name
 * ("ard@1-3*periodic@4": t1.log_v0, t1.log_w1.., t2.log_v0, t2.log_w,
 * t2.log_p).  theta holds the log hyperparameters, so every one of them is
 * unconstrained.  In a product only the product of the terms' amplitudes
 * matters; fix all but one (--fix) where that flat direction is unwanted.
 *
 * Evaluation: a sum of terms (every spec without '*') is evaluated term by
 * term as it always was.  A spec with a product is a tree of sums and
 * products over its terms (nested sums and nested products flattened): each
 * term's values are formed as alone, then combined; its gradient for a
 * hyperparameter of term t is dk_t/dtheta times the product of the other
 * factors on t's path (the product rule, by prefix and suffix products, so
 * a zero factor gives no 0/0).
 *
 * The terms may be followed by one clause ":discrete=COLS" (same column-list
 * syntax) marking input columns as discrete, after Kim & Ghahramani (2008,
 * eq. 11-12): in the ard and se terms the distance in a discrete column is
 * 0 if the two values are equal and 1 if not, instead of (x_l - x'_l)^2, so
 * "ard+bias+jitter:discrete=3,5" is their
 *     v0 exp(-1/2 sum_l w_l d_l(x_l, x'_l)) + b + j delta(x, x').
 * The same d_l enters every term built on q (ard, se, matern*, rq*).  linear,
 * poly, nn read the raw values; a periodic term may not read a discrete
 * column.  Every discrete column must be read by some term built on q.  The canonical spec keeps the clause, with the columns
 * in increasing order (runs of three or more as ranges).
 *
 * A clause ":per-class=C" gives each of C classes its own copy of the
 * hyperparameters (multiclass methods, one latent function per class):
 * theta holds the C copies class by class, named with the class number
 * appended ("log_v0.c2").  The evaluation functions below use the first
 * copy; a multiclass method evaluates class c with a base kernel
 * (gpc_kernel_base) given the c-th copy.  Clauses may come in any order;
 * the canonical spec puts discrete first and per-class last.
 *
 * A clause ":simplex" weights the terms on the simplex, the composite
 * covariance of Girolami & Zhong (2007) for integrating feature sets:
 *     K = sum_t beta_t^2 C_t + jitter,   sum_t beta_t^2 = 1,
 * where C_t is term t with its amplitude taken out; each term but jitter has
 * a weight, whose log takes the place of the amplitude's ("log_weight").
 * Setting the hyperparameters normalises the weights (adds a constant to
 * their logs), so the stored values are the logs of beta_t^2.  Their prior
 * (gpc_log_prior) is Dirichlet with parameters alpha_t, each with a
 * Gamma(SHAPE, RATE) hyperprior: ":simplex=SHAPE,RATE" (default 1,1).
 * The simplex weighs a sum of single terms: a spec with a product cannot
 * carry it.
 *
 * A gram term reads a precomputed similarity from the inputs: its columns
 * (1 + n of them, for n training cases) hold a case's similarity to itself
 * and then to each training case in order.  Training inputs so carry the
 * n x n training Gram matrix (with its diagonal repeated in front, and it
 * must be symmetric: gpc_kernel_check_train) and test inputs the test x
 * training matrix; other terms may read other columns, as
 * "gram@1-201+se@202-210:simplex" does. */
#ifndef GPC_KERNEL_H
#define GPC_KERNEL_H

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "io/matio.h"

#define GPC_KERNEL_MAX_TERMS 16
#define GPC_NAME_MAX 48
/* The most input columns a kernel takes (gpc_kernel_parse refuses more):
 * as many as a matrix may have. */
#define GPC_KERNEL_MAX_DIM GPC_MATRIX_MAX_COLS
/* The most classes a per-class kernel has. */
#define GPC_KERNEL_MAX_CLASSES 1000
/* The highest degree of a poly term. */
#define GPC_KERNEL_MAX_DEGREE 32

typedef struct gpc_kernel gpc_kernel;

/* Parse spec for inputs of dimension dim.  Errors (GPC_EUSAGE, message set):
 * unknown term, bad or out-of-range column list, empty or overlong spec,
 * unbalanced parentheses, an operator without a term, a bad polynomial
 * degree (each naming the character where it goes wrong), unknown clause
 * after ':', a discrete column listed twice, read by no ard, se, matern or rq
 * term or read by a periodic term, the simplex with a product; GPC_EINPUT for dim above GPC_KERNEL_MAX_DIM. */
int gpc_kernel_parse(const char *spec, size_t dim, gpc_kernel **out);
void gpc_kernel_free(gpc_kernel *k);
gpc_kernel *gpc_kernel_clone(const gpc_kernel *k);

/* The canonical spec string (as it would be parsed back). */
const char *gpc_kernel_spec(const gpc_kernel *k);
size_t gpc_kernel_dim(const gpc_kernel *k);
/* All hyperparameters, every per-class copy included. */
size_t gpc_kernel_nparams(const gpc_kernel *k);
/* The number of per-class copies: C, or 1 without the per-class clause. */
size_t gpc_kernel_copies(const gpc_kernel *k);
/* The kernel without the per-class clause, with the first copy's
 * hyperparameters (a copy of k when it has none). */
gpc_kernel *gpc_kernel_base(const gpc_kernel *k);
const char *gpc_kernel_param_name(const gpc_kernel *k, size_t j);
/* The input column (0-based) that hyperparameter j weighs alone (an ard
 * length scale), or -1. */
long gpc_kernel_param_column(const gpc_kernel *k, size_t j);
/* Name the hyperparameters after the input columns too (names: dim or
 * more names, NULL-terminated, copied; NULL forgets them).  An ARD length
 * scale of column l is then also "log_w.WORD", WORD the column's name with
 * every byte other than a letter, digit, '_' or '.' as '_' (prefix and
 * class suffix as in the numbered name: "t2.log_w.worst_radius.c3").  Where
 * two columns give one word, or a name gives none, the numbered name stays.
 * Clones and the base kernel keep the names. */
void gpc_kernel_name_columns(gpc_kernel *k, char *const *names);
/* The names given to gpc_kernel_name_columns, or NULL. */
char *const *gpc_kernel_colnames(const gpc_kernel *k);
/* Hyperparameter j's name after its column (as above), else its name. */
const char *gpc_kernel_param_label(const gpc_kernel *k, size_t j);
/* Index of a parameter by name, numbered or after its column, or -1. */
long gpc_kernel_param_index(const gpc_kernel *k, const char *name);

/* Current log hyperparameters (length nparams). */
const double *gpc_kernel_params(const gpc_kernel *k);
void gpc_kernel_set_params(gpc_kernel *k, const double *theta);

/* Start values for the length scales from inputs X (rows of the data, such
 * as the inducing inputs chosen among them): every inverse squared length
 * scale w of a term on distances (ard, se, the materns, rq; in every
 * per-class copy) set to 1 / the median over pairs of rows (of the first
 * 500) of the term's squared distance, so that the median pair lies one
 * length scale apart whatever the inputs' units.  The other
 * hyperparameters stay.  Returns how many were set (0 when the rows are
 * too few or all equal). */
size_t gpc_kernel_start_scales(gpc_kernel *k, const gsl_matrix *X);
/* The simplex clause: 1 if the terms are weighted on the simplex (and the
 * Gamma hyperprior of the weights' Dirichlet parameters), else 0. */
int gpc_kernel_simplex(const gpc_kernel *k, double *shape, double *rate);
/* Whether theta_j is the log of a weight on the simplex. */
int gpc_kernel_is_weight(const gpc_kernel *k, size_t j);
/* The weights beta_t^2 of one copy (per-class clause) into w and their
 * parameters' indices into index (either may be NULL); returns how many
 * (0 without the simplex clause). */
size_t gpc_kernel_weights(const gpc_kernel *k, size_t copy, double *w, size_t *index);
/* The t-th weighted term as the spec writes it ("se@1-76"), or NULL. */
const char *gpc_kernel_weight_term(const gpc_kernel *k, size_t t);

/* Gram terms need 1 + n columns for n training cases.  Training inputs X:
 * also the similarity to itself twice equal and the Gram matrix symmetric
 * (to 1e-10 of its largest diagonal value); test inputs: the model's number
 * of training cases.  GPC_EINPUT with a message if not; GPC_OK for a kernel
 * without gram terms. */
int gpc_kernel_check_train(const gpc_kernel *k, const gsl_matrix *X);
int gpc_kernel_check_test(const gpc_kernel *k, size_t ntrain);
/* Whether k has a gram term (its training cases cannot be subset). */
int gpc_kernel_has_gram(const gpc_kernel *k);

/* Starting values: log v0 = 0, log w = -2 (Barber & Williams' initial state),
 * log v = 0, log s0 = log s = 0, log bias = -3, log jitter = -6, log alpha
 * = 0, log p = 0, log c = 0; on the simplex equal weights. */
void gpc_kernel_default_params(const gpc_kernel *k, double *theta);

/* K(X, X) (n x n, jitter on the diagonal), K(X, Xs) (n x m, no jitter), and
 * the diagonal k(x, x) for each row of Xs (with jitter: the latent variance of
 * a new case). */
void gpc_kernel_matrix(const gpc_kernel *k, const gsl_matrix *X, gsl_matrix *K);
void gpc_kernel_cross(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                      gsl_matrix *Ks);
void gpc_kernel_diag(const gpc_kernel *k, const gsl_matrix *Xs, gsl_vector *d);

/* dK(X, X) / d theta_j as an explicit n x n matrix (for tests and gpc-kernel). */
void gpc_kernel_grad_matrix(const gpc_kernel *k, const gsl_matrix *X, size_t j,
                            gsl_matrix *dK);

/* Gradient contractions for all hyperparameters in one pass over the pairs,
 * without forming any dK_j: for every j,
 *     s[j]       = sum_{i,k} dK_j[i,k] (alpha u_i u_k + beta R[i,k])
 *     col j of B = dK_j v                           (B is n x nparams)
 * R is symmetric and only its lower triangle is read.  This is what the
 * evidence gradients need (1/2 u'dK u - 1/2 tr(R dK) and dK v), at
 * O(n^2 nparams) time and no extra n x n storage.
 *
 * K is optional (NULL): the kernel's own matrix K(X, X), full (both
 * triangles), as gpc_kernel_matrix gives it for k and X.  Where k is one ard
 * or se term without discrete columns, or a product of such terms, alone or
 * plus jitter (no per-class or simplex clause), and X has at most GPC_KERNEL_CONTRACT_PRODUCT_ROWS rows,
 * the contraction then reuses K's values instead of computing them again and
 * runs as two matrix products, about 7 times as fast at 200 rows and twice as
 * fast at 1000, with two n x n scratch matrices; the results agree with the
 * pass over the pairs to rounding.  Otherwise K is not read. */
/* The contraction of the cross-covariance's derivatives with an n x m
 * matrix A (rows of X against rows of Xs, as gpc_kernel_cross): for every
 * j, s[j] = sum_{a,b} A[a,b] dK(X, Xs)[a,b] / dtheta_j, in one pass over
 * the pairs without forming any derivative matrix.  The sparse variational
 * bound's gradient through the inducing inputs' kernel columns is this.
 * K is K(X, Xs) when the caller has it (a plain ard or se term then reuses
 * it), or NULL. */
void gpc_kernel_cross_contract(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                               const gsl_matrix *K, const gsl_matrix *A, double *s);

/* s[j] = sum_i a[i] dk(x_i, x_i) / dtheta_j over the rows of Xs (the
 * derivatives of gpc_kernel_diag, jitter included). */
void gpc_kernel_diag_contract(const gpc_kernel *k, const gsl_matrix *Xs, const double *a,
                              double *s);

/* The same contraction's derivatives in the rows of X: dX[a,l] = sum_b
 * A[a,b] dK(X, Xs)[a,b] / dX[a,l] (n x dim), as the bound's gradient in the
 * inducing inputs needs.  Discrete columns, bias, jitter and gram terms
 * contribute nothing (they are not differentiable in the inputs, or
 * constant); matern12's cusp at zero distance contributes 0.  Not for a
 * kernel with a gram term (its columns are no inputs to move).  K as for
 * gpc_kernel_cross_contract. */
void gpc_kernel_cross_input_contract(const gpc_kernel *k, const gsl_matrix *X,
                                     const gsl_matrix *Xs, const gsl_matrix *K,
                                     const gsl_matrix *A, gsl_matrix *dX);

/* K(X, Xs) as gpc_kernel_cross, but for a kernel of one plain ard or se
 * term (every column, none discrete) by the expanded square
 * |x|^2 + |xs|^2 - 2 x'xs of the inputs centred at Xs's column means and
 * scaled by the length scales, the inner products in one matrix product:
 * many times as fast with many columns.  Its exponent is exact to rounding
 * relative to the inputs' squared spread in length scales (w |x - mean|^2
 * summed over the columns), not to the pair's distance, so K's relative
 * error is about 1e-16 times that spread: negligible where the kernel is
 * not, but not the last digit for inputs spread over many length scales.
 * For the sparse method's cross-covariances; other kernels as
 * gpc_kernel_cross. */
void gpc_kernel_cross_expanded(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                               gsl_matrix *K);

#define GPC_KERNEL_CONTRACT_PRODUCT_ROWS 1400
void gpc_kernel_grad_contract(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *K,
                              const gsl_vector *u, double alpha, const gsl_matrix *R,
                              double beta, const gsl_vector *v, double *s, gsl_matrix *B);

#endif
