/* expect — the Gaussian expectation of a binary log-likelihood,
 *
 *   E(y, mu, s2) = integral log p(y | f) N(f | mu, s2) df,
 *
 * and its derivatives dE/dmu = E[d log p / df] and dE/ds2 = E[d^2 log p / df^2] / 2
 * (Bonnet's and Price's theorems), the per-case term of a variational lower
 * bound with Gaussian marginals (Opper & Archambeau 2009).
 *
 * The rule is fixed: the same nodes for the same inputs, and the nodes move
 * smoothly with mu and s2, so E is smooth and its central differences agree
 * with the returned derivatives.  For logistic and probit, y in {-1, +1}
 * (by sign), |mu| <= 1e3 and 0 <= s2 <= 1e6, the value and both derivatives
 * are accurate to 1e-10 (absolute where the quantity is at most 1 in size,
 * relative beyond); the worst errors seen against adaptive quadrature are
 * stated in expect.c.  s2 = 0 gives log p(y | mu) and its derivatives
 * exactly. */
#ifndef GPC_EXPECT_H
#define GPC_EXPECT_H

#include "liks/lik.h"

/* E(y, mu, s2) for GPC_LIK_LOGISTIC or GPC_LIK_PROBIT; dmu and ds2 (either
 * may be NULL) receive dE/dmu and dE/ds2.  NaN for another likelihood or a
 * negative or NaN s2. */
double gpc_lik_expect(gpc_lik lik, double y, double mu, double s2, double *dmu, double *ds2);

#endif
