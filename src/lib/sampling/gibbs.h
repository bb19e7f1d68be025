/* gibbs — a Gibbs sampler for multinomial probit GP classification, the
 * gold standard against which variational Bayes (vb.h) is checked.
 *
 * The model is vb.h's: f_c ~ GP(0, K_c), y_ic ~ N(f_ic, 1), the class of
 * case i the argmax of y_i, and a Gaussian prior N(mean, sd^2) on each log
 * hyperparameter.  One sweep updates three blocks in turn:
 *   y | f, labels   each case's y_i from N(f_i, I) cut to the cone where its
 *                   class wins, one coordinate at a time (the rivals below
 *                   the winner's value, then the winner above the largest
 *                   rival), each a one-sided truncated normal;
 *   theta | y       random-walk Metropolis-Hastings on the log
 *                   hyperparameters with f integrated out: the target is
 *                   the prior times prod_c N(y_c | 0, I + K_c), whose
 *                   factor I + K is always well conditioned (one Cholesky
 *                   factor per proposal);
 *   f | y, theta    exactly, from N(K (I + K)^-1 y_c, K (I + K)^-1), through
 *                   the eigendecomposition K = V' diag(lambda) V (computed
 *                   when theta changes): f_c = V' [s^2 o V y_c + s o z] with
 *                   s^2 = lambda / (1 + lambda), so a singular K needs no
 *                   jitter.
 * (theta, f) | y together is a block: theta from its marginal, then f from
 * its conditional, which leaves p(theta, f | y) invariant.  Sampling y from
 * p(y | f) without the labels and taking the argmax as the labels draws
 * from the joint instead (gpc_gibbs_forward_labels), which is what
 * Geweke's joint-distribution test needs.
 *
 * Cost per sweep: O(C n) for y, 4 C n^2 flops for f; per proposal of theta
 * one Cholesky factor per kernel (the current point's are kept) and C
 * triangular solves, and, if accepted, one eigendecomposition per kernel. */
#ifndef GPC_GIBBS_H
#define GPC_GIBBS_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"

typedef struct {
    size_t n, C, nparams, nK; /* nparams per kernel; nK kernels: C or 1 */
    gpc_kernel **kernels;     /* borrowed: nK base kernels, set to theta */
    const gsl_matrix *X;      /* borrowed training inputs */
    double *theta;            /* nK * nparams log hyperparameters */
    double prior_mean, prior_sd, step; /* prior on each; random-walk step sd */
    int sample_theta;         /* 0 keeps theta fixed */
    const unsigned char *fixed; /* borrowed; if not NULL, fixed[j] != 0 keeps theta[j]
                                   (gpc_gibbs_fix) */
    gsl_matrix **V;           /* nK: rows are the eigenvectors of K */
    gsl_vector **lam;         /* nK: the eigenvalues lambda of K, clipped at 0 */
    gsl_matrix **Lc, **Lp;    /* nK: factors of I + K at theta and at the proposal */
    double *hlc, *hlp;        /* nK: their 1/2 log determinants */
    gsl_vector *y, *f;        /* length Cn, class-major */
    unsigned long proposed, accepted;
    /* scratch */
    gsl_matrix *A;            /* n x n */
    gsl_vector *u, *z;        /* length n */
    gsl_vector *uc;           /* length Cn */
    double *work;
    int lwork, *iwork, liwork;
} gpc_gibbs;

/* A sampler for n cases of C classes with nK = 1 (shared) or C base
 * kernels on inputs X (both borrowed). */
gpc_gibbs *gpc_gibbs_alloc(const gsl_matrix *X, size_t C, gpc_kernel **kernels, size_t nK);
/* The bytes that sampler takes for n cases: (3 nK + 3) n x n matrices (with
 * the eigensolver's workspace) and vectors of length n and Cn.  Saturates
 * at SIZE_MAX. */
size_t gpc_gibbs_workspace(size_t n, size_t C, size_t nK);
void gpc_gibbs_free(gpc_gibbs *w);

/* Start at theta (nK * nparams values) with f = 0 and y drawn for labels
 * cls; GPC_ENUM if a kernel matrix cannot be decomposed. */
int gpc_gibbs_start(gpc_gibbs *w, const double *theta, const size_t *cls, gsl_rng *r);

/* Set f (length Cn) and theta directly, e.g. from a forward simulation. */
int gpc_gibbs_set(gpc_gibbs *w, const double *theta, const gsl_vector *f);

/* Keep the hyperparameters marked in fixed (nK * nparams flags, borrowed;
 * NULL fixes none): proposals move only the others, and with every one
 * fixed there are none (no Cholesky factor per iteration). */
void gpc_gibbs_fix(gpc_gibbs *w, const unsigned char *fixed);

/* One sweep: y | f, then theta | y (if sample_theta), then f | y, theta. */
int gpc_gibbs_sweep(gpc_gibbs *w, const size_t *cls, gsl_rng *r);

/* The same blocks in the order a stored chain wants: theta | y, f | y,
 * theta, then y | f.  What the next iteration needs is then (theta, y)
 * alone (f is drawn afresh from them), so a run stored as those and
 * seeded per iteration can be resumed exactly (gpc_gibbs_resume). */
int gpc_gibbs_iterate(gpc_gibbs *w, const size_t *cls, gsl_rng *r);

/* Resume from a stored state: theta (nK * nparams) and y (length Cn, each
 * case in its class's cone). */
int gpc_gibbs_resume(gpc_gibbs *w, const double *theta, const gsl_vector *y);

/* The log prior of theta (nK * nparams values): gpc_log_prior per kernel. */
double gpc_gibbs_log_prior(const gpc_gibbs *w, const double *theta);

/* log prod_c N(y_c | 0, I + K_c) at the current theta and y, with its
 * constants (a chain's log_p_y column). */
double gpc_gibbs_log_p_y(gpc_gibbs *w);

/* y from N(f, I) and cls[i] = argmax y_i: labels and auxiliary values from
 * their joint given f. */
void gpc_gibbs_forward_labels(gpc_gibbs *w, size_t *cls, gsl_rng *r);

/* f drawn from the prior N(0, K_c) at the current theta. */
void gpc_gibbs_prior_f(gpc_gibbs *w, gsl_rng *r);

#endif
