/* diagnose — convergence diagnostics for MCMC chains: means and standard
 * deviations, effective sample sizes and split R-hat (Gelman et al. 2013,
 * Bayesian Data Analysis, 3rd ed., sec. 11.4-11.5). */
#ifndef GPC_DIAGNOSE_H
#define GPC_DIAGNOSE_H

#include <stddef.h>

/* Mean and sample standard deviation (n - 1) of x[0..n-1]. */
void gpc_diag_mean_sd(const double *x, size_t n, double *mean, double *sd);

/* Effective sample size of one chain: n / (1 + 2 sum of autocorrelations),
 * the sum truncated by Geyer's initial monotone sequence.  NAN for n < 4 or
 * a constant chain. */
double gpc_diag_ess(const double *x, size_t n);

/* Effective sample size of m chains of n draws each (x is m x n, row i is
 * chain i), with BDA3's combined autocorrelation estimate
 * rho_t = 1 - (W - mean of the chains' autocovariances at lag t) / var+.
 * The result is in (0, m n], or NAN as gpc_diag_ess. */
double gpc_diag_ess_chains(const double *x, size_t m, size_t n);

/* Split R-hat: every chain halved (the middle draw dropped when n is odd),
 * then the potential scale reduction over the 2m halves.  NAN when n < 4 or
 * the within-chain variance is zero. */
double gpc_diag_split_rhat(const double *x, size_t m, size_t n);

#endif
