/* svgp — the sparse variational model's state and what is done with it
 * over data held in memory (gpc(7), SPARSE VARIATIONAL METHOD): the
 * inducing inputs Z and K_ZZ's factor L, q(v_c) = N(m_c, S_c) for each of
 * the C latent functions; the bound and its gradients summed over all rows in blocks;
 * q moved to its optimum at fixed hyperparameters and Z by natural steps
 * (the full-batch fit); predictions.
 *
 * The full-batch fit: from the current q (the prior N(0, I) at first),
 * natural steps of size rho, which starts at 1, halves when a step would
 * lower the bound or leave a precision indefinite (the step is then taken
 * back) and doubles back towards 1 after a step that raised it.  It stops
 * when a step raises the bound by at most tol (1 + |bound|).  With a
 * Gaussian likelihood a step of 1 lands on the optimum; for logistic and
 * probit each step is a fixed-point update of Opper & Archambeau's kind and
 * the bound converges linearly.  At the optimum in q the bound's gradient
 * in the hyperparameters is its partial derivative at fixed q (the
 * envelope theorem), which is what gpc_svgp_gradient returns. */
#ifndef GPC_SVGP_H
#define GPC_SVGP_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>

#include "kernels/kernel.h"
#include "sparse/shard.h"

typedef struct {
    size_t C, m, dim;   /* latent functions, inducing inputs, input columns */
    gsl_matrix *Z;      /* m x dim */
    size_t nK;          /* kernels: 1 shared, or one per class (sparse/shard) */
    gsl_matrix **L;     /* nK matrices m x m, each kernel's K_ZZ = L L' (with
                         * jitter, when it was needed) */
    double jitter;      /* the most added to a K_ZZ's diagonal by the last
                         * factor, or 0 */
    gsl_matrix *M;      /* C x m, row c is m_c */
    gsl_matrix **S;     /* C matrices m x m */
} gpc_svgp;

/* A model of C latent functions on m inducing inputs of dim columns, with
 * Z zero and q the prior (M = 0, S_c = I). */
gpc_svgp *gpc_svgp_alloc(size_t C, size_t m, size_t dim);
void gpc_svgp_free(gpc_svgp *s);
/* The bytes gpc_svgp_alloc and a full-batch fit take (saturating). */
size_t gpc_svgp_bytes(size_t C, size_t m, size_t dim, size_t nparams);

/* q back to the prior. */
void gpc_svgp_reset_q(gpc_svgp *s);

/* L from k at Z, one factor per kernel of k.  GPC_ENUM (message set) if K_ZZ cannot be
 * factored even with jitter. */
int gpc_svgp_factor(gpc_svgp *s, const gpc_kernel *k);

/* The likelihood of the cases: the shard function and its context. */
typedef struct {
    gpc_shard_lik fn;
    const void *ctx;
} gpc_svgp_lik;

/* The statistics of all rows of X (labels y, coded as lik takes them),
 * summed block by block in row order into st (zeroed first), so that the
 * sums do not depend on timing. */
int gpc_svgp_stats(const gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *X, const double *y,
                   gpc_svgp_lik lik, gpc_shard_stats *st);

typedef struct {
    double tol;      /* stop when a step raises the bound by at most tol (1 + |bound|) */
    int max_steps;   /* and after this many steps in any case */
} gpc_svgp_fit_opts;

typedef struct {
    double bound;    /* the bound at the final q */
    int steps;       /* natural steps taken (those taken back included) */
    int converged;   /* the tol test was met */
} gpc_svgp_fit_result;

/* Move q to the bound's optimum over all rows of X at k's hyperparameters
 * and Z fixed (full batch, scale 1), from the q s holds.  L must be
 * current (gpc_svgp_factor).  GPC_ENUM (message set) if the bound cannot
 * be evaluated even at the start. */
int gpc_svgp_fit_q(gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *X, const double *y,
                   gpc_svgp_lik lik, const gpc_svgp_fit_opts *o, gpc_svgp_fit_result *r);

/* The bound over all rows of X at the current q and its gradient in k's
 * hyperparameters (dtheta, nparams; NULL for none) and in Z (dZ, m x dim;
 * NULL for none), at fixed q; with both NULL the bound alone, at the cost
 * of one pass of the shard statistics without the kernel's derivatives. */
int gpc_svgp_gradient(const gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *X,
                      const double *y, gpc_svgp_lik lik, double *bound, double *dtheta,
                      gsl_matrix *dZ);

/* q as a model file keeps it: state is m x C (1 + m), row j holding for
 * each latent function c m_c[j] then row j of S_c. */
void gpc_svgp_state_get(const gpc_svgp *s, gsl_matrix *state);
void gpc_svgp_state_set(gpc_svgp *s, const gsl_matrix *state);

/* The latent marginals at the rows of Xs: mean and var are rows x C
 * (the latent functions are independent under q). */
void gpc_svgp_predict(const gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *Xs,
                      gsl_matrix *mean, gsl_matrix *var);

#endif
