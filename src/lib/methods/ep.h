/* ep — expectation propagation for binary GP classification with the probit
 * likelihood (Minka 2001; Rasmussen & Williams 2006, Algorithms 3.5 and 3.6;
 * Opper & Winther's adaptive TAP has the same fixed point).
 *
 * Each likelihood term is replaced by a Gaussian site N(f_i | nu_i / tau_i,
 * 1 / tau_i) chosen so that the site's cavity times the true term and times
 * the site have the same mean and variance.  Sites are updated one after the
 * other with rank-one updates of the posterior covariance Sigma (its lower
 * triangle, in blocks of symmetric rank-k updates); every eighth sweep, and
 * before convergence is declared, Sigma and mu are recomputed from scratch
 * through the Cholesky factor of B = I + S^1/2 K S^1/2 (S = diag(tau)), so
 * rounding cannot accumulate, and convergence is confirmed there: every
 * site must already be what its update from that posterior would make it.
 * Other sweeps factor only B, for the evidence, and only once the sites'
 * changes are within 1e4 tol.  Per sweep: n^3 flops of updates (about 3
 * Cholesky times) and at most one factor, plus the recomputation's 6.
 * A likelihood that is not log-concave (label noise) can have sites of
 * negative precision at its fixed point; they are kept as they are (clamping
 * them at zero would leave EP off its fixed point and the evidence gradient
 * wrong), and B is then replaced by the indefinite E + D K D of bmatrix.h.
 * The sweeps stop when no site moves the posterior marginal at its case by
 * more than a relative tol (default 1e-9: dt Sigma_ii for the precision, and
 * dnu Sigma_ii over sqrt(Sigma_ii) + |mu_i| for the mean, which does not
 * depend on the kernel's scale), the log evidence moves by less than tol / 10
 * relative, and no site of the sweep was skipped (an improper cavity or a
 * tilted variance lost to rounding). */
#ifndef GPC_EP_H
#define GPC_EP_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"
#include "liks/lik.h"
#include "linalg/bmatrix.h"

/* Moments of a site's tilted distribution p(y | f) N(f | m, v): log of its
 * mass, its mean and its variance.  ctx carries the likelihood's parameters. */
typedef void (*gpc_ep_moments)(const void *ctx, double y, double m, double v, double *logZ,
                               double *mean, double *var);

/* Label noise (Opper & Winther 2000; Kim & Ghahramani 2008):
 * p(y | f) = eps + (1 - 2 eps) Phi(y f / sigma), the probit likelihood for
 * sigma = 1 and the step function H(y f) for sigma = 0.  Moments of the
 * tilted distribution in closed form; ctx is a gpc_ep_label_noise. */
typedef struct {
    double eps;   /* probability that a label is flipped, in [0, 1/2) */
    double sigma; /* 1: probit, 0: step */
} gpc_ep_label_noise;

/* Default convergence tolerance: relative change of every site parameter
 * in a sweep (the log evidence's relative change must be ten times smaller). */
#define GPC_EP_TOL 1e-9

typedef struct {
    size_t n;
    gpc_ep_moments moments;    /* the likelihood: gpc_ep_probit by default */
    const void *moments_ctx;
    gpc_ep_label_noise noise;  /* the likelihood set by gpc_ep_set_likelihood */
    gsl_matrix *K, *Sigma, *L; /* L: Cholesky factor of B, then scratch */
    gsl_vector *tau, *nu;      /* site precisions and precision-times-means */
    gsl_vector *sign;          /* sign of each tau: a site may have negative precision */
    int indefinite;            /* some tau < 0: L holds a Bunch-Kaufman factor (bmatrix.h) */
    gpc_bmatrix_pivots *piv;   /* its pivots, allocated when first needed */
    size_t improper;           /* negative eigenvalues of K^-1 + S at the last factorisation */
    gsl_vector *mu;            /* posterior mean */
    gsl_vector *t1, *t2;       /* scratch; after gpc_ep_prepare_predict t1 = S^1/2 */
    gsl_vector *b;             /* nu - R K nu: predictive means are k*' b */
    gsl_matrix *Bg;            /* n x nparams scratch for the gradient contraction */
    gsl_matrix *U, *W;         /* rank-one updates held back within a sweep */
    gsl_vector *c;
    double damping;            /* 1: plain updates; smaller values damp them */
    int auto_damping;          /* halve the damping and start again if a run does not settle */
    int max_sweeps;
    double tol;                /* site tolerance (default GPC_EP_TOL); evidence tol / 10 */
    int sweeps;                /* sweeps of the last run */
    unsigned long lost;        /* site updates skipped because the tilted variance was lost */
    double log_evidence;
} gpc_ep;

gpc_ep *gpc_ep_alloc(size_t n, size_t nparams);
/* The bytes that workspace takes: three n x n matrices, the blocks of the
 * updates and vectors (not the pivots of an improper posterior, allocated
 * when one arises).  Saturates at SIZE_MAX. */
size_t gpc_ep_workspace(size_t n, size_t nparams);
void gpc_ep_free(gpc_ep *e);

/* Moments of the tilted distribution Phi(y f) N(f | m, v): log of its mass,
 * its mean and variance (the one-site update, exact in closed form). */
void gpc_ep_probit_moments(double y, double m, double v, double *logZ, double *mean,
                           double *var);
/* The same as a gpc_ep_moments (ctx unused). */
void gpc_ep_probit(const void *ctx, double y, double m, double v, double *logZ, double *mean,
                   double *var);

/* Moments of the tilted distribution of a label-noise likelihood. */
void gpc_ep_label_noise_moments(const void *ctx, double y, double m, double v, double *logZ,
                                double *mean, double *var);
/* p(y = +1) averaged over a latent N(mu, var). */
double gpc_ep_label_noise_predict(const gpc_ep_label_noise *l, double mu, double var);

/* Use the probit (GPC_LIK_PROBIT) or step (GPC_LIK_STEP) likelihood with
 * label-flip probability eps in [0, 1/2); GPC_EUSAGE for another one. */
int gpc_ep_set_likelihood(gpc_ep *e, gpc_lik lik, double eps);

/* Run EP on w->K (filled by the caller) and labels y from zero sites, with
 * the damping set; if the sweeps do not settle within max_sweeps and
 * auto_damping is set, again with half the damping, down to 0.1.  GPC_ENUM
 * with the sweep reached and a damping hint if it still does not converge,
 * and GPC_ENUM if it converges to sites whose Gaussian is improper
 * (K^-1 + S not positive definite; see gpc_bmatrix_negative_eigenvalues_signed). */
int gpc_ep_run(gpc_ep *e, const gsl_vector *y);

/* EP log evidence and, if grad is not NULL, its gradient with respect to the
 * kernel's log hyperparameters, (1/2) tr((b b' - R) dK) with
 * R = S^1/2 B^-1 S^1/2 and b = nu - R K nu (R&W eq. 5.27). */
int gpc_ep_evidence(gpc_ep *e, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                    double *log_evidence, double *grad);

/* d log Z_EP / d eps for the label-noise likelihood after a converged run.
 * At EP's fixed point the evidence is stationary in the sites, so only the
 * tilted masses Z_i = eps + (1 - 2 eps) Phi(z_i) depend on eps, at fixed
 * cavities: the derivative is sum_i (1 - 2 Phi(z_i)) / Z_i. */
double gpc_ep_dlogz_deps(const gpc_ep *e, const gsl_vector *y);

/* Set the sites (e.g. from a model file) for predictions: factors B and
 * forms b from w->K, tau and nu.  GPC_ENUM for improper sites. */
int gpc_ep_set_sites(gpc_ep *e, const gsl_vector *tau, const gsl_vector *nu);

/* Latent mean k*' b and variance k** - k*' R k* at test inputs from
 * the cross-covariances Ks (n x m, overwritten) and prior variances kss;
 * needs gpc_ep_set_sites (or a run followed by it). */
void gpc_ep_predict(const gpc_ep *e, gsl_matrix *Ks, const gsl_vector *kss, gsl_vector *mean,
                    gsl_vector *var);

#endif
