/* meanfield — Opper & Winther's (1998) naive mean-field method for binary GP
 * classification ("Mean field methods for classification with Gaussian
 * processes", section 3).
 *
 * The posterior mean of the fields is h = K x.  Case i sees the other cases
 * through its cavity N(f_i | m_i, lambda_i), m_i = h_i - lambda_i x_i, and
 * x_i = d log Z_i / d m at (m_i, lambda_i), where Z_i = int p(y_i | f)
 * N(f | m_i, lambda_i) df is the likelihood averaged over the cavity; from the
 * tilted mean, x_i = (mean_i - m_i) / lambda_i.  Naive mean field fixes the
 * cavity variance at the prior variance, lambda_i = K_ii, so that
 * m_i = sum_{j != i} K_ij x_j.  (TAP, which sets lambda_i self-consistently,
 * coincides with EP: see ep.h.)
 *
 * The fixed point x_i = g_i(m_i) is found by sequential (Gauss-Seidel) sweeps
 * with optional damping, O(n^2) per sweep; h is recomputed as K x from
 * scratch after every sweep so rounding cannot drift.  A sweep converges when
 * no x_i is more than a relative 1e-10 away from its update g_i(m_i) (the
 * undamped step, so the test does not loosen with damping).
 *
 * For a Gaussian likelihood N(y | f, s2) the fixed point solves
 * (K + s2 I) x = y: h is then exactly the GP regression mean.  Predictions
 * follow the same approximation: a new input s has the cavity
 * N(k_s' x, k(s, s)), and case i left out of the training set is predicted
 * from its own cavity N(m_i, lambda_i), the leave-one-out estimate that the
 * solution gives for free.  With the moments function, p(y = +1) under a
 * cavity N(m, v) is exp(log Z) for label +1. */
#ifndef GPC_MEANFIELD_H
#define GPC_MEANFIELD_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "ep.h"

typedef struct {
    size_t n;
    gpc_ep_moments moments; /* the likelihood: gpc_ep_probit by default */
    const void *moments_ctx;
    gsl_matrix *K;          /* prior covariance, full and symmetric, filled by the caller */
    gsl_vector *x;          /* the mean-field solution: h = K x */
    gsl_vector *h;          /* posterior mean of the latent fields */
    gsl_vector *cav_mean;   /* m_i = h_i - K_ii x_i: leave-one-out latent means */
    gsl_vector *cav_var;    /* lambda_i = K_ii: leave-one-out latent variances */
    double damping;         /* in (0, 1]: 1 plain updates, smaller values damp them */
    int max_sweeps;         /* 20000 by default: plain sweeps converge slowly */
    int sweeps;             /* sweeps of the last run */
} gpc_meanfield;

gpc_meanfield *gpc_meanfield_alloc(size_t n);
void gpc_meanfield_free(gpc_meanfield *m);

/* Solve the naive mean-field equations on m->K and labels y (-1/+1) from
 * x = 0; fills x, h, cav_mean and cav_var (on failure they hold the last
 * iterate).  GPC_EUSAGE for a damping outside (0, 1] or max_sweeps < 1;
 * GPC_ENUM if a prior variance K_ii is not positive, if the likelihood's
 * moments are not finite, or if the sweeps do not converge within max_sweeps
 * (the message names the sweep, the largest change and a damping to try). */
int gpc_meanfield_run(gpc_meanfield *m, const gsl_vector *y);

/* Set the solution x (e.g. from a model file) for predictions: forms h = K x
 * and the cavities from m->K.  GPC_ENUM if a K_ii is not positive. */
int gpc_meanfield_set_x(gpc_meanfield *m, const gsl_vector *x);

/* Latent mean k_s' x and variance k(s, s) at m test inputs from the n x m
 * cross-covariances Ks and the prior variances kss (length m). */
void gpc_meanfield_predict(const gpc_meanfield *m, const gsl_matrix *Ks, const gsl_vector *kss,
                           gsl_vector *mean, gsl_vector *var);

#endif
