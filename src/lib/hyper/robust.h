/* robust — outlier-robust GP classification (Kim & Ghahramani 2008): the
 * step likelihood with label noise, eps + (1 - 2 eps) H(y f), whose flip
 * probability eps is learnt by an approximate EM algorithm, and the choice
 * by evidence between that model and the one without label noise.
 *
 * E-step: EP at the current eps and kernel hyperparameters gives a Gaussian
 * q(f).  M-step: eps maximises the bound sum_i E_q[log p(y_i | f_i)], which
 * for the step likelihood is
 *     sum_i (1 - w_i) log eps + w_i log(1 - eps),  w_i = Phi(y_i m_i / sqrt(v_i))
 * (m_i, v_i the marginal moments of q), so eps = mean of 1 - w_i (K&G eq.
 * 19-20).  Between M-steps a few gradient steps move the kernel's free
 * hyperparameters uphill on the EP evidence at the current eps.
 *
 * EM's fixed point is not a maximum of the EP evidence (the M-step uses
 * q's marginals, not the evidence), so EM only brings eps near it: the fit
 * ends with BFGS on the kernel's free hyperparameters and logit(2 eps)
 * together, with d log Z_EP / d eps from gpc_ep_dlogz_deps.  It ends where
 * that derivative vanishes, or with eps -> 0 and the derivative negative
 * (the evidence then prefers no label noise).  EM's back-off from label
 * noise at which EP does not converge is reported only at verbosity 2. */
#ifndef GPC_ROBUST_H
#define GPC_ROBUST_H

#include "hyper/evidence.h"
#include "hyper/optimize.h"
#include "methods/ep.h"

typedef enum {
    GPC_ROBUST_FIXED = 0, /* eps as given */
    GPC_ROBUST_EM = 1,    /* eps learnt by EM (robust GPC) */
    GPC_ROBUST_SELECT = 2 /* eps = 0 or EM, whichever has the higher evidence (MS-robust) */
} gpc_robust_mode;

typedef struct {
    gpc_robust_mode mode;
    double eps;             /* FIXED: the value; EM: the start (default 0.01) */
    int optimize;           /* move the kernel hyperparameters too */
    gpc_optimize_opts opt;  /* how; with EM, opt.max_iter BFGS steps per M-step */
    int steps_per_em;       /* EM: BFGS iterations between M-steps (default 5) */
    int max_em;             /* EM iterations (default 500) */
    double tol;             /* EM stops when eps moves by less (default 1e-5) ... */
    double evidence_rtol;   /* ... and the log evidence by less, relative (1e-5) */
} gpc_robust_opts;

void gpc_robust_defaults(gpc_robust_opts *o);

typedef struct {
    double eps;                  /* the chosen flip probability */
    double log_evidence;         /* EP log evidence of the chosen model */
    double plain_evidence;       /* SELECT: the model with eps = 0 */
    double robust_evidence;      /* SELECT: the EM model */
    int em_iterations;
    int converged;               /* the final gradient steps met their test */
    gpc_stop stop;               /* why they ended (GPC_STOP_ITERATIONS: also EM's
                                  * iterations used up) */
    double deps;                 /* EM, SELECT: d log Z_EP / d eps at the chosen eps */
} gpc_robust_result;

/* The M-step: mean over the training cases of 1 - Phi(y_i mu_i / sqrt(Sigma_ii))
 * for EP's current posterior (after gpc_ep_run). */
double gpc_robust_flip_rate(const gpc_ep *e, const gsl_vector *y);

/* Fit ev (EP with the step likelihood; GPC_EUSAGE otherwise for EM and
 * SELECT) from theta as o says; theta and the label noise of ev end at the
 * chosen model, whose EP state is current in ev's workspace. */
int gpc_robust_fit(gpc_evidence *ev, double *theta, const gpc_robust_opts *o,
                   gpc_robust_result *res);

#endif
