/* evidence — the approximate log marginal likelihood of a training set as a
 * function of the kernel's log hyperparameters, in the shape the optimiser
 * and samplers take (gpc_objective).  Workspaces are allocated once, and each
 * mode search is warm-started from the previous one. */
#ifndef GPC_EVIDENCE_H
#define GPC_EVIDENCE_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "hyper/optimize.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "methods/method.h"

typedef struct {
    gpc_kernel *kernel;     /* owned: its parameters follow each evaluation */
    int move_inducing;      /* gpc_evidence_optimize moves the inducing inputs too */
    const gsl_matrix *X;
    const gsl_vector *y;
    gpc_method method;
    gpc_lik lik;
    const gpc_method_ops *ops; /* the method, reached only through its table */
    void *ws;                  /* and its workspace */
} gpc_evidence;

/* Labels must be -1/+1 for a binary method, class indices 0..C-1 for a
 * multiclass one (C is 2 for a binary method), and y must have X's row
 * count (the caller checks). */
gpc_evidence *gpc_evidence_alloc(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                                 size_t C, gpc_lik lik, gpc_method method);
void gpc_evidence_free(gpc_evidence *e);

/* Label-flip probability eps in [0, 1/2) (EP and naive mean field; usage
 * error otherwise unless eps is 0). */
int gpc_evidence_set_label_noise(gpc_evidence *e, double eps);

/* EP's convergence tolerance (see gpc_ep's tol): in (0, 1); GPC_EUSAGE
 * (message set) for another method or value. */
int gpc_evidence_set_tol(gpc_evidence *e, double tol);

/* Damping in (0, 1] of the methods that iterate (EP, naive mean field);
 * GPC_EUSAGE (message set) for another value, or for another method unless
 * it is 1. */
int gpc_evidence_set_damping(gpc_evidence *e, double damping);

/* What the evidence is for a method that offers a choice (-M vb): "laplace"
 * (the default) or "bound" (the variational lower bound).  GPC_EUSAGE for
 * another name or a method without the choice. */
int gpc_evidence_set_objective(gpc_evidence *e, const char *name);

/* The method's workspace if e uses method ops, else NULL: for algorithms
 * built on one method (learning EP's label noise). */
/* An inducing method's number of inducing inputs (at most the cases: more
 * are cut to their number; 0 keeps the method's default) and the seed of
 * their choice; for another method nothing, or GPC_EUSAGE (message set)
 * if m is not 0. */
int gpc_evidence_set_inducing(gpc_evidence *e, size_t m, unsigned long seed);
/* An inducing method's inputs given (Z, m x dim) in place of its own
 * choice; GPC_EUSAGE for another method, GPC_EINPUT for other columns. */
int gpc_evidence_set_inducing_inputs(gpc_evidence *e, const gsl_matrix *Z);
/* An inducing method's inputs after a fit (m x dim), else NULL. */
const gsl_matrix *gpc_evidence_inducing_inputs(const gpc_evidence *e);
/* Whether gpc_evidence_optimize moves an inducing method's inputs with the
 * hyperparameters (the default: not); GPC_EUSAGE (message set) for a
 * method without inducing inputs that move. */
int gpc_evidence_set_move_inducing(gpc_evidence *e, int move);

void *gpc_evidence_workspace(const gpc_evidence *e, const gpc_method_ops *ops);

/* The fitted state after an evaluation, n x ops->state_width, and a line on
 * standard error about the fit. */
void gpc_evidence_state(const gpc_evidence *e, gsl_matrix *state);
void gpc_evidence_report(const gpc_evidence *e, double log_evidence);

/* gpc_objective: log evidence at theta and, if grad is not NULL, its gradient.
 * Naive mean field is solved at theta but has no evidence: the value is NaN,
 * and asking for a gradient is a usage error. */
int gpc_evidence_eval(void *ctx, const double *theta, double *value, double *grad);

/* gpc_objective over x = (theta, then the m x dim inducing inputs by rows)
 * of an inducing method that moves them: the log evidence there and its
 * gradient in all of x.  The inputs stay at x's for the next evaluation. */
int gpc_evidence_eval_inducing(void *ctx, const double *x, double *value, double *grad);

/* Maximise the log evidence (plus o's prior) over the hyperparameters from
 * theta (in/out), and over the inducing inputs too when e moves them (they
 * end at the best point's, with the method fitted there): gpc_optimize on
 * gpc_evidence_eval or gpc_evidence_eval_inducing. */
int gpc_evidence_optimize(gpc_evidence *e, double *theta, const gpc_optimize_opts *o,
                          gpc_optimize_result *r);

/* Forget the previous mode, so the next evaluation starts from f = 0. */
void gpc_evidence_forget(gpc_evidence *e);

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
