/* laplace — the Laplace approximation for binary GP classification
 * (Rasmussen & Williams 2006, Algorithms 3.1, 3.2 and 5.1).
 *
 * The mode of p(f | X, y) is found by Newton's method in the numerically
 * stable form built on the Cholesky factor L of B = I + W^1/2 K W^1/2, where
 * W = -grad grad log p(y | f) is diagonal.  Each step is guarded by step
 * halving on the objective Psi(f) = log p(y | f) - 1/2 f' K^-1 f, and the
 * iteration stops when a full Newton step raises Psi by less than a relative
 * 1e-12 and moves f by less than a relative 1e-8 (far from the boundary Psi
 * is flat while the evidence still depends on f).  Once a full Newton step
 * has moved f by less than 0.1 relative, chord steps (Newton steps with
 * the last factorisation's Hessian, two products with K and two triangular
 * solves each) take over; they converge at the rate at which W still
 * changes and stop where the next would be below 1e-16 relative, so the
 * mode is found to rounding with one factorisation less, or hand back to
 * Newton if they contract slowly.  The Newton step is formed
 * as sW B^-1 (sW f + d1 / sW), free of the cancellation that makes R&W's
 * b - sW B^-1 sW K b rounding noise at huge signal variances.  A search that
 * stalls short of the mode fails (GPC_ENUM) rather than returning it.  The
 * state is carried as a = K^-1 f, which also serves as the warm start of the
 * next search.
 *
 * After a gradient the search also knows how the mode moves with the
 * hyperparameters, da / dtheta = -W (I + K W)^-1 dK_j a, from what the
 * gradient has formed (dK_j a and W^1/2 B^-1 W^1/2), at 4 n^2 nparams flops;
 * the next search at nearby hyperparameters (a sampler's or an optimiser's
 * next step) then starts from a + da / dtheta (theta - theta_mode), which
 * saves Newton iterations.  When the step continues the one before in
 * nearly the same direction, the change of the slope over that step adds
 * the second-order term, which halves the chord steps of an HMC run.
 *
 * Cost per call of gpc_laplace_evidence, in Cholesky equivalents (n^3 / 3
 * flops): one factorisation per Newton iteration plus one at the mode (two in
 * all for a search from a predicted start), and B^-1 (2 n^3 / 3 flops, two
 * equivalents) when the gradient is wanted.  Two n x n matrices are alive: K and
 * L (which becomes R = W^1/2 B^-1 W^1/2 during the gradient).
 *
 * On a process grid (linalg/pdense; gpc(7), DISTRIBUTED FITS) the same
 * iteration runs on every rank with K and L spread block-cyclically over
 * the ranks: the products with K and R, the solves with L, the factor, the
 * inverse and the log determinant are the grid's, each giving every rank
 * the same bits, and the gradient contracts the kernel's derivatives over
 * each rank's own blocks (kernels/kernel-pdense).  The vectors are whole on
 * every rank.  The mode's slope is not formed there. */
#ifndef GPC_LAPLACE_H
#define GPC_LAPLACE_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"
#include "linalg/pdense.h"
#include "liks/lik.h"

typedef struct {
    size_t n;
    gpc_lik lik;
    gsl_matrix *K;      /* kernel matrix of the training inputs */
    gsl_matrix *L;      /* lower Cholesky factor of B at the mode (see chol_valid) */
    /* On a process grid (gpc_pgrid_default at alloc), K and L are spread
     * over it as PK and PL, K and L are NULL, and the mode's slope is not
     * formed (its n x nparams products would be the gradient's cost again). */
    const gpc_pgrid *grid;
    gpc_pdense *PK, *PL;
    gsl_vector *f, *a;  /* mode and a = K^-1 f */
    gsl_vector *d1, *W, *d3, *sW; /* derivatives of log p(y|f) at f; W = -d2, sW = sqrt(W) */
    gsl_vector *sW_factor; /* sW where L was factored, for chord steps */
    double step;        /* length of the last Newton step, relative to f */
    int full_step;      /* it was not halved */
    unsigned long chord_steps; /* so far, for benchmarks */
    gsl_vector *t1, *t2, *t3, *t4; /* scratch */
    gsl_matrix *Bg;     /* n x nparams: dK_j grad log p, for the gradient */
    /* The mode's first-order response to the hyperparameters, da / dtheta
     * (n x nparams), at theta_mode: formed with each gradient, it moves the
     * next warm start to where the mode will be to first order (has_slope). */
    gsl_matrix *slope, *scratch;
    double *theta_mode;
    int has_slope;
    /* The slope at the mode before, at theta_prev (has_slope_prev): along a
     * path of nearly equal steps (a leapfrog trajectory, a line search) the
     * change of slope between the two gives the start's second-order term. */
    gsl_matrix *slope_prev;
    double *theta_prev;
    int has_slope_prev;
    double psi;         /* log p(y|f) - 1/2 a'f at the mode */
    double log_evidence;
    int chol_valid;     /* L holds the factor of B at f (not yet used for the gradient) */
    int has_mode;       /* a holds a previous mode: used as a warm start */
    int iterations;     /* Newton iterations of the last mode search */
    unsigned long n_chol, n_inverse; /* O(n^3) operations so far, for benchmarks */
} gpc_laplace;

/* On the process grid of gpc_pgrid_default when there is one. */
gpc_laplace *gpc_laplace_alloc(size_t n, size_t nparams, gpc_lik lik);
/* On grid, or on plain matrices for NULL. */
gpc_laplace *gpc_laplace_alloc_on(size_t n, size_t nparams, gpc_lik lik, const gpc_pgrid *grid);
/* The bytes that workspace takes: two n x n matrices (on a grid, their
 * local parts), four n x nparams and vectors.  Saturates at SIZE_MAX. */
size_t gpc_laplace_workspace(size_t n, size_t nparams);
void gpc_laplace_free(gpc_laplace *w);

/* Find the mode for kernel matrix w->K (filled by the caller) and labels y in
 * {-1,+1}.  Starts from a = w->a when w->has_mode (warm start; falls back to
 * f = 0 if that is worse), else from f = 0.  Sets f, a, psi, log_evidence and
 * L.  Returns GPC_ENUM with a hint when B is not positive definite or Newton
 * does not converge. */
int gpc_laplace_mode(gpc_laplace *w, const gsl_vector *y);

/* Move the warm start a to the mode predicted at k's hyperparameters from
 * the slope at the last mode (has_slope), to second order when the step
 * continues the one before in nearly its direction (has_slope_prev).
 * gpc_laplace_evidence calls it before its search. */
void gpc_laplace_predict_start(gpc_laplace *w, const gpc_kernel *k);

/* Log evidence log q(y | X, theta) and, if grad is not NULL, its exact
 * gradient with respect to the kernel's log hyperparameters, including the
 * implicit dependence of the mode.  Computes K from the kernel's current
 * parameters.  After a gradient, L is no longer valid (chol_valid = 0). */
int gpc_laplace_evidence(gpc_laplace *w, const gpc_kernel *k, const gsl_matrix *X,
                         const gsl_vector *y, double *log_evidence, double *grad);

/* K from the kernel's current parameters at the training inputs X (for
 * labels y).  On a grid, GPC_EUSAGE (message set, on every rank) for a
 * kernel that cannot be spread over it (gpc_kernel_pdense_check) or when a
 * rank's inputs, labels or hyperparameters are not rank 0's. */
int gpc_laplace_kernel(gpc_laplace *w, const gpc_kernel *k, const gsl_matrix *X,
                       const gsl_vector *y);

/* Set the state from a stored mode f (e.g. a model file): recompute the
 * likelihood derivatives and L at f.  K must be filled. */
int gpc_laplace_set_mode(gpc_laplace *w, const gsl_vector *y, const gsl_vector *f);

/* Latent mean and variance at test inputs from the cross-covariances Ks
 * (n x m) and prior variances kss (m); needs chol_valid.  Ks is overwritten. */
void gpc_laplace_predict(const gpc_laplace *w, gsl_matrix *Ks, const gsl_vector *kss,
                         gsl_vector *mean, gsl_vector *var);

#endif
