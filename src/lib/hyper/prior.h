/* prior — the hyperpriors of the log hyperparameters: independent normals
 * (Barber & Williams 1997: mean -3, sd 3), and for the weights of a kernel
 * on the simplex (kernel.h, ":simplex") the Dirichlet prior of Girolami &
 * Zhong (2007) with a Gamma hyperprior on its parameters.
 *
 * The weights beta^2 = a / sum_t a_t are normalised independent Gamma
 * variables, a_t ~ Gamma(alpha_t, 1), which makes beta^2 Dirichlet(alpha)
 * given alpha; each alpha_t ~ Gamma(shape, rate).  A weight's log
 * hyperparameter is u_t = log a_t, whose prior (alpha_t integrated out) is
 *     p(u) = exp(-e^u) r^s / Gamma(s) int_0^inf exp(alpha u - lgamma(alpha)
 *            + (s - 1) log alpha - r alpha) d alpha,
 * a one-dimensional integral done by adaptive quadrature.  The kernel sees
 * only the ratios of the a_t, so their sum keeps its prior and the weights
 * have exactly the hierarchical Dirichlet prior. */
#ifndef GPC_PRIOR_H
#define GPC_PRIOR_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "kernels/kernel.h"

/* log p(u) above; if dlp is not NULL, *dlp = d log p / du = E[alpha | u] - e^u. */
double gpc_prior_weight(double u, double shape, double rate, double *dlp);

/* One draw of J log weights u_t from the prior, normalised so that the
 * weights exp(u_t) sum to one. */
void gpc_prior_draw_weights(gsl_rng *r, size_t J, double shape, double rate, double *u);

/* sum_j log N(theta_j | mean, sd^2); adds its gradient to grad if not NULL.
 * The hyperprior of Barber & Williams (1997) has mean -3, sd 3. */
double gpc_log_prior_normal(size_t p, const double *theta, double mean, double sd, double *grad);

/* The log prior of the first p of k's log hyperparameters theta (p may
 * exceed k's count: the rest are other parameters, e.g. a label-noise
 * level): the weights' as above, N(mean, sd^2) for every other; adds the
 * gradient to grad if not NULL.  k may be NULL (normals for all). */
double gpc_log_prior(const gpc_kernel *k, size_t p, const double *theta, double mean, double sd,
                     double *grad);

#endif
