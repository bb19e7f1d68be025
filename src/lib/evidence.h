/* evidence — the approximate log marginal likelihood of a training set as a
 * function of the kernel's log hyperparameters, in the shape the optimiser
 * and samplers take (gpc_objective).  Workspaces are allocated once, and each
 * mode search is warm-started from the previous one. */
#ifndef GPC_EVIDENCE_H
#define GPC_EVIDENCE_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "ep.h"
#include "kernel.h"
#include "laplace.h"
#include "lik.h"
#include "meanfield.h"

/* The approximation to the posterior over the latent function. */
typedef enum {
    GPC_METHOD_LAPLACE = 0,
    GPC_METHOD_EP = 1,   /* expectation propagation (= adaptive TAP); probit or step */
    GPC_METHOD_NAIVE = 2 /* naive mean field (Opper & Winther); probit or step, no evidence */
} gpc_method;

/* "laplace", "ep" or its synonym "tap", or "naive"; GPC_EUSAGE (message set)
 * otherwise, or for a likelihood the method does not take. */
int gpc_method_parse(const char *name, gpc_lik lik, gpc_method *method);
const char *gpc_method_name(gpc_method method);

typedef struct {
    gpc_kernel *kernel;     /* owned: its parameters follow each evaluation */
    const gsl_matrix *X;
    const gsl_vector *y;
    gpc_method method;
    gpc_lik lik;
    gpc_laplace *laplace;   /* the workspace of the method in use; the others are NULL */
    gpc_ep *ep;
    gpc_meanfield *naive;
    gpc_ep_label_noise noise; /* naive mean field's likelihood */
} gpc_evidence;

/* Labels must be -1/+1 and y must have X's row count (the caller checks). */
gpc_evidence *gpc_evidence_alloc(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                                 gpc_lik lik, gpc_method method);
void gpc_evidence_free(gpc_evidence *e);

/* Label-flip probability eps in [0, 1/2) (EP only; usage error otherwise). */
int gpc_evidence_set_label_noise(gpc_evidence *e, double eps);

/* EP's convergence tolerance (see gpc_ep's tol): in (0, 1); GPC_EUSAGE
 * (message set) for another method or value. */
int gpc_evidence_set_tol(gpc_evidence *e, double tol);

/* gpc_objective: log evidence at theta and, if grad is not NULL, its gradient.
 * Naive mean field is solved at theta but has no evidence: the value is NaN,
 * and asking for a gradient is a usage error. */
int gpc_evidence_eval(void *ctx, const double *theta, double *value, double *grad);

/* Forget the previous mode, so the next evaluation starts from f = 0. */
void gpc_evidence_forget(gpc_evidence *e);

/* sum_j log N(theta_j | mean, sd^2); adds its gradient to grad if not NULL.
 * The hyperprior of Barber & Williams (1997) has mean -3, sd 3. */
double gpc_log_prior_normal(size_t p, const double *theta, double mean, double sd, double *grad);

/* The posterior over log hyperparameters as a potential energy for HMC:
 * U = -(log q(y | theta) + log prior), with the log evidence as the value
 * reported beside it.  ctx is a gpc_posterior. */
typedef struct {
    gpc_evidence *evidence;
    double prior_mean, prior_sd;
} gpc_posterior;
int gpc_posterior_eval(void *ctx, const double *theta, double *U, double *grad, double *aux);
void gpc_posterior_restart(void *ctx);

#endif
