/* nested-ep-site — one case's site of nested EP for the multinomial probit
 * likelihood (Riihimaki, Jylanki & Vehtari 2013, JMLR 14, section 3): the
 * inner EP that approximates the tilted distribution.
 *
 * A case of class y has C latent values f and, in the model, C auxiliary
 * values f_c + e_c (e ~ N(0, I)) of which the y-th is the largest.  With
 * u = e_y integrated last,
 *     p(y | f) = integral N(u | 0, 1) prod_{j != y} Phi(u + f_y - f_j) du.
 * Given the cavity N(f | mu, Sigma), the tilted distribution over
 * w = (f, u) (C + 1 values) is the Gaussian N(f | mu, Sigma) N(u | 0, 1)
 * times C - 1 probit factors Phi(b_j' w), b_j = e_u + e_y - e_j.  Inner EP
 * replaces each factor by a Gaussian in its own projection,
 * exp(-alpha_j x^2 / 2 + beta_j x) with x = b_j' w, by the one-dimensional
 * probit moment matching of binary EP, sweeping over j until no site moves.
 * Its Gaussian's marginal in f approximates the tilted moments, and its
 * normaliser the tilted mass Z = E[p(y | f)].
 *
 * The site this leaves on f (the inner sites and N(u | 0, 1), u integrated
 * out) is a Gaussian with precision and precision-times-mean
 *     Pi = diag(pi) - pi pi' / s,   nu = (sum_j beta_j / s) pi - beta,
 * pi = e_y + alpha (alpha_y = 0), s = 1 + sum_j alpha_j, beta_y = 0, which
 * is how the outer EP holds it: two numbers per rival class.  Pi 1 = 0 (the
 * likelihood sees differences of f only), so Pi has rank C - 1.
 *
 * Cost O(C^3) per inner sweep (rank-one updates of the (C + 1) x (C + 1)
 * covariance); warm-started from the previous sites one or two sweeps
 * suffice. */
#ifndef GPC_NESTED_EP_SITE_H
#define GPC_NESTED_EP_SITE_H

#include <stddef.h>

typedef struct gpc_nep_site gpc_nep_site;

/* Scratch for cases of C >= 2 classes. */
gpc_nep_site *gpc_nep_site_alloc(size_t C);
void gpc_nep_site_free(gpc_nep_site *s);

/* Inner EP for a case of class y whose cavity has precision Lambda (C x C,
 * row-major, positive definite) and precision-times-mean h.  alpha and beta
 * (length C, entries y ignored and left 0) hold the sites to start from and
 * receive the converged ones; the sweeps stop when no alpha_j or beta_j
 * moves by more than tol relative to its size (plus tol absolute), at most
 * max_sweeps of them.  logZ receives the log of the approximate tilted mass,
 * and mean (C) and cov (C x C, row-major), where not NULL, the approximate
 * tilted moments of f.  GPC_ENUM (message set) if Lambda is not positive
 * definite or a site update meets a vanishing cavity. */
int gpc_nep_site_update(gpc_nep_site *s, size_t y, const double *Lambda, const double *h,
                        double *alpha, double *beta, double tol, int max_sweeps, double *logZ,
                        double *mean, double *cov);

/* The sweeps of the last update. */
int gpc_nep_site_sweeps(const gpc_nep_site *s);

/* The site on f of a case of class y from its inner sites: pi (length C)
 * and s = sum(pi) as above, and nu (length C). */
void gpc_nep_site_outer(size_t C, size_t y, const double *alpha, const double *beta, double *pi,
                        double *s, double *nu);

#endif
