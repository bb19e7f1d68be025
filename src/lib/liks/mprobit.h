/* mprobit — the multinomial probit likelihood's one-dimensional integrals.
 *
 * In Girolami & Rogers' multinomial probit model each case has C auxiliary
 * values y_c ~ N(mu_c, nu_c^2), independent, and its class is the argmax.
 * The probability of class i, and the moments of y given that i wins, are
 * integrals over the winner's own value: with y_i = mu_i + nu_i u,
 * u ~ N(0, 1),
 *     P(i) = E_u[ prod_{j != i} Phi(a_j(u)) ],  a_j = (nu_i u + mu_i - mu_j) / nu_j.
 * The integrand phi(u) prod_j Phi(a_j) is log-concave, so the quadrature
 * is centred on its mode and scaled to its curvature there (adaptive
 * Gauss-Hermite), and every product is summed in logs, so that no case
 * underflows however far it lies on the wrong side.  With unit variances
 * (the training cases), E[y | i wins] - mu is the gradient of log P(i) in
 * mu, which sums to zero over the classes:
 *     E[y_k | i] = mu_k - E_u[ phi(a_k) prod_{j != i,k} Phi(a_j) ] / P(i),  k != i,
 *     E[y_i | i] = mu_i - sum_{k != i} (E[y_k | i] - mu_k).
 * Accuracy: 1e-10 absolute in P and relative in log P (checked against
 * adaptive quadrature in the tests). */
#ifndef GPC_MPROBIT_H
#define GPC_MPROBIT_H

#include <stddef.h>

#include <gsl/gsl_eigen.h>

typedef struct gpc_mprobit_rule gpc_mprobit_rule;

/* A rule and its scratch for cases of C >= 2 classes. */
gpc_mprobit_rule *gpc_mprobit_rule_alloc(size_t C);
void gpc_mprobit_rule_free(gpc_mprobit_rule *r);

/* For y ~ N(mu, I) (length C): log P(argmax y = i), and with ybar not
 * NULL, ybar = E[y | argmax y = i]. */
double gpc_mprobit_case(gpc_mprobit_rule *r, size_t i, const double *mu, double *ybar);

/* After gpc_mprobit_case for class i (same rule): the curvature
 * W = -d^2 log P(i) / dmu^2 = I - Cov(y | argmax y = i), C x C row-major.
 * With the winner's value y_i = mu_i + u the rivals are independent given
 * u, each a normal cut above at y_i, so
 *     Cov(y | i) = E_u[diag Var(y_j | u)] + Cov_u(E[y | u]),
 * both by the quadrature of the last call (its nodes and weights).  W is
 * positive semi-definite with W 1 = 0 (P(i) depends on differences only),
 * up to the quadrature's accuracy. */
void gpc_mprobit_curvature(const gpc_mprobit_rule *r, size_t i, double *W);

/* F = W^1/2 for a curvature W (C x C, symmetric), by its eigenvectors, the
 * eigenvalues clipped to [0, 1] (where they lie up to the quadrature's
 * rounding); returns the sum of the clipped eigenvalues.  scratch holds
 * 2 C^2 + C doubles; eig is a GSL eigensolver for C x C. */
double gpc_mprobit_sqrt(size_t C, const double *W, double *F, double *scratch,
                        gsl_eigen_symmv_workspace *eig);

/* out = M x for M block-diagonal over n cases, case i's block the C x C
 * row-major blocks[i C^2 ...] (W, or its square root), x and out class-major
 * (entry c n + i); out may be x. */
void gpc_mprobit_blocks_apply(size_t n, size_t C, const double *blocks, const double *x,
                              double *out);

/* After gpc_mprobit_case for class i (same rule): the third derivatives
 * T = d^3 log P(i) / dmu^3, C x C x C row-major (T[(a C + b) C + c]).  They
 * are the third cumulants of y given that i wins (log P(i) + |mu|^2 / 2 is
 * that truncated normal's log normaliser), so dW / dmu_c = -T[., ., c]: by
 * the law of total cumulance over the winner's value, from the rivals'
 * conditional means, variances and third cumulants at the same nodes.
 * Symmetric, and every sum over one index is zero. */
void gpc_mprobit_third(const gpc_mprobit_rule *r, size_t i, double *T);

/* For y ~ N(mu, diag(nu2)): p[k] = P(argmax y = k) for every class k.
 * They sum to one to within the quadrature's accuracy, without
 * normalisation. */
void gpc_mprobit_probs(gpc_mprobit_rule *r, const double *mu, const double *nu2, double *p);

#endif
