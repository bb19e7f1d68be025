/* importance — posterior means of kernel hyperparameters by importance
 * sampling, Girolami & Rogers' (2006) treatment of the hyperparameters in
 * variational Bayes multinomial probit classification (vb.h).
 *
 * The kernel's parameters phi = exp(theta) (signal variances, inverse
 * squared length scales, ...) have independent exponential priors with
 * rates psi, and each rate a Gamma(a, b) hyperprior (shape a, rate b).
 * With the auxiliary values' means ybar from the variational fit, the
 * factor of the posterior on phi is
 *     Q(phi) ∝ prod_j Exp(phi_j | psi_j)  prod_c N(ybar_c | 0, I + K_phi),
 * the auxiliary values' Gaussian with f integrated out.  Its mean is
 * estimated from S draws phi_s of the prior, weighted by the second factor
 * in full: log weights -1/2 ybar_c' (I + K)^-1 ybar_c - 1/2 log|I + K| per
 * class, normalising constants included (the determinant decides between
 * kernels of different scale), summed in logs so that none underflows.
 * The rates follow as the mean of their Gamma posterior given phi,
 * psi_j = (a + 1) / (b + E[phi_j]).
 *
 * The weights of a kernel on the simplex (kernel.h) are drawn instead from
 * their own prior (prior.h: Dirichlet, with the Gamma hyperprior on its
 * parameters), and phi_j is then the weight itself: its posterior mean
 * E[beta_t^2], and the means again sum to one.
 *
 * Cost: one Cholesky factor of I + K per draw and kernel. */
#ifndef GPC_IMPORTANCE_H
#define GPC_IMPORTANCE_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "hyper/evidence.h"
#include "kernels/kernel.h"

/* E[phi] under Q(phi) for kernel k (its hyperparameters are changed), the
 * nc vectors ybar_c of length n (the classes using k, one after another in
 * ybar) and rates psi, from S draws of the prior taken from r: into
 * phi_mean (nparams values).  *ess (if not NULL) gets the effective sample
 * size (sum w)^2 / sum w^2.  GPC_ENUM if no draw gives a finite weight. */
int gpc_importance_mean(gpc_kernel *k, const gsl_matrix *X, const double *ybar, size_t nc,
                        const double *psi, size_t S, gsl_rng *r, double *phi_mean, double *ess);

/* The Gamma(a, b) posterior mean of each rate given phi: (a + 1) / (b + phi_j). */
void gpc_importance_rates(size_t p, const double *phi, double a, double b, double *psi);

typedef struct {
    size_t samples;        /* draws per update (1000) */
    double shape, rate;    /* the Gamma hyperprior on each rate (1e-6, 1e-6) */
    int max_iterations;    /* updates at most (50) */
    double tol;            /* stop when no log hyperparameter moves by more (0.01) */
    unsigned long seed;    /* the draws' generator */
} gpc_importance_opts;

void gpc_importance_opts_default(gpc_importance_opts *o);

typedef struct {
    double bound;          /* the variational bound at the final hyperparameters */
    int iterations;        /* updates done */
    int converged;         /* the last update moved no log hyperparameter by more than tol */
    double min_ess;        /* the smallest effective sample size of the last update */
} gpc_importance_result;

/* Girolami & Rogers' alternation for a variational Bayes model: fit at
 * theta (through ev, whose method keeps ybar as its state, n x C), then
 * theta = log E[phi] by importance sampling for each base kernel of k
 * (shared by all C classes, or one per class) from that kernel's classes'
 * ybar, and the rates updated; until converged or max_iterations.  theta
 * (all of k's hyperparameters, per-class copies included) is the start and
 * the result; a line per update goes to standard error. */
int gpc_importance_fit(gpc_evidence *ev, const gpc_kernel *k, const gsl_matrix *X,
                       size_t C, const gpc_importance_opts *o, double *theta,
                       gpc_importance_result *res);

#endif
