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
 * The fixed point solves F(x) = x - g(m) = 0 with m = (K - D) x, D = diag K.
 * Its Jacobian is J = I + A (K - D), A = diag(a), a_i = -g_i'(m_i)
 * = (lambda_i - v_i) / lambda_i^2, v_i the tilted variance (for any
 * likelihood d^2 log Z / dm^2 = (v - lambda) / lambda^2).  With
 * e_i = 1 - a_i K_ii = v_i / lambda_i > 0 and w_i = a_i / e_i
 * = 1 / v_i - 1 / lambda_i (EP's site precision at the tilted moments),
 * J = E (I + W K), and (I + W K)^-1 = I - S^1/2 B^-1 S^1/2 K with
 * B = I + S^1/2 K S^1/2 (every eigenvalue at least 1) when every w_i >= 0,
 * as for a log-concave likelihood; with label noise some w_i can be
 * negative, and B becomes sign(W) + |W|^1/2 K |W|^1/2, factored with
 * pivoting (see bmatrix.h).  Newton's method (the default solver) steps
 * J dx = -F by that factor, O(n^3) per step, with a backtracking line search
 * on the merit |F|^2 / 2 (the Newton step is always a descent direction for
 * it, since J is nonsingular); a step the line search cannot use falls back
 * to a few damped sweeps before Newton resumes.  The damping caps the step
 * length.  The older solver, sequential (Gauss-Seidel) sweeps with optional
 * damping, O(n^2) per sweep, is kept: it needs hundreds to many thousands of
 * sweeps when K is smooth.  Both stop when no x_i is more than a relative
 * 1e-10 away from its update g_i(m_i).
 *
 * For a Gaussian likelihood N(y | f, s2) the fixed point solves
 * (K + s2 I) x = y: h is then exactly the GP regression mean.  Predictions
 * follow the same approximation: a new input s has the cavity
 * N(k_s' x, k(s, s)).  With the moments function, p(y = +1) under a
 * cavity N(m, v) is exp(log Z) for label +1.
 *
 * Leave-one-out by linear response (gpc_meanfield_loo).  Refitting without
 * case i means solving the same equations for the other cases with x_i held
 * at 0; the refit predicts case i with mean sum_{j != i} K_ij x_j^(-i) and
 * the prior variance K_ii.  The cavity m_i above uses the full solution's
 * x_j, as if the others did not respond to losing case i.  Linear response
 * keeps their response to first order: what is held fixed is the kernel,
 * every cavity variance lambda_j = K_jj (naive mean field's do not depend on
 * the data, so this is exact) and the linearisation of each g_j at the full
 * solution.  Clamping x_i to 0 is an external source t on equation i alone,
 * J dx = t e_i, so dx = chi e_i t with chi = J^-1 and t = -x_i / chi_ii; the
 * other rows of J dx = t e_i are exactly the linearised equations of the
 * refit.  Then m_i^loo = m_i + sum_{j != i} K_ij dx_j
 * = h_i - x_i (K chi)_ii / chi_ii.  E cancels in the ratio, and
 * (K chi)_ii / chi_ii = Sigma_ii / [(I + W K)^-1]_ii
 * = 1 / (1 / Sigma_ii - w_i) =: lambda~_i, with Sigma = (K^-1 + W)^-1:
 * m_i^loo = h_i - lambda~_i x_i, the naive cavity mean h_i - K_ii x_i with
 * the prior variance replaced by the variance of f_i given every other case
 * through its linearised site (TAP's cavity form, at the naive solution).
 * The matrix inverted is B (its diagonal gives [(I + W K)^-1]_ii); for a
 * Gaussian likelihood w_i = 1 / s2 and the estimate is the exact
 * leave-one-out mean y_i - x_i / [(K + s2 I)^-1]_ii. */
#ifndef GPC_MEANFIELD_H
#define GPC_MEANFIELD_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "methods/ep.h"

typedef enum { GPC_MF_NEWTON, GPC_MF_SWEEPS } gpc_meanfield_solver;

typedef struct {
    size_t n;
    gpc_ep_moments moments; /* the likelihood: gpc_ep_probit by default */
    const void *moments_ctx;
    gsl_matrix *K;          /* prior covariance, full and symmetric, filled by the caller */
    gsl_vector *x;          /* the mean-field solution: h = K x */
    gsl_vector *h;          /* posterior mean of the latent fields */
    gsl_vector *cav_mean;   /* m_i = h_i - K_ii x_i: the solution's own cavity means */
    gsl_vector *cav_var;    /* lambda_i = K_ii: its cavity variances */
    gpc_meanfield_solver solver; /* GPC_MF_NEWTON by default */
    double damping;         /* in (0, 1]: 1 plain updates, smaller values damp them
                             * (for Newton: the longest step tried) */
    int max_sweeps;         /* 20000 by default: plain sweeps converge slowly */
    int max_newton;         /* 100 by default */
    int sweeps;             /* sweeps of the last run (Newton's fallback sweeps) */
    int newton_steps;       /* Newton steps of the last run */
    int fallbacks;          /* times the last Newton run fell back to sweeps */
    struct gpc_mf_newton *newton; /* Newton's workspace, allocated on first use */
} gpc_meanfield;

gpc_meanfield *gpc_meanfield_alloc(size_t n);
/* The bytes that workspace takes with Newton's, allocated by the first
 * fit: two n x n matrices and vectors (not the leave-one-out's scratch).
 * Saturates at SIZE_MAX. */
size_t gpc_meanfield_workspace(size_t n);
void gpc_meanfield_free(gpc_meanfield *m);

/* Solve the naive mean-field equations on m->K and labels y (-1/+1) from
 * x = 0 by m->solver; fills x, h, cav_mean and cav_var (on failure they hold
 * the last iterate).  GPC_EUSAGE for a damping outside (0, 1], max_sweeps < 1
 * or max_newton < 1; GPC_ENUM if a prior variance K_ii is not positive, if
 * the likelihood's moments are not finite, or if the solver does not
 * converge within max_sweeps sweeps or max_newton Newton steps (the message
 * names the sweep or step, the largest change and what to try). */
int gpc_meanfield_run(gpc_meanfield *m, const gsl_vector *y);

/* Set the solution x (e.g. from a model file) for predictions: forms h = K x
 * and the cavities from m->K.  GPC_ENUM if a K_ii is not positive. */
int gpc_meanfield_set_x(gpc_meanfield *m, const gsl_vector *x);

/* Leave-one-out latent means h_i - lambda~_i x_i by linear response (see
 * above) and variances K_ii at the solution m->x (after a run or set_x),
 * for the labels y it was solved for.  GPC_ENUM if the likelihood's moments
 * are not finite or B cannot be factored. */
int gpc_meanfield_loo(const gpc_meanfield *m, const gsl_vector *y, gsl_vector *mean,
                      gsl_vector *var);

/* Latent mean k_s' x and variance k(s, s) at m test inputs from the n x m
 * cross-covariances Ks and the prior variances kss (length m). */
void gpc_meanfield_predict(const gpc_meanfield *m, const gsl_matrix *Ks, const gsl_vector *kss,
                           gsl_vector *mean, gsl_vector *var);

#endif
