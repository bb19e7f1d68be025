/* vb — variational Bayes for multinomial probit GP classification
 * (Girolami & Rogers 2006).
 *
 * Model: C latent functions f_c ~ GP(0, K_c) (one shared kernel or one
 * per class), auxiliary values y_ic ~ N(f_ic, 1), and the class of case i
 * the argmax of y_i.  The posterior is approximated by Q(F) Q(Y): each
 * Q(f_c) = N(m_c, Sigma_c) with Sigma_c = K_c (I + K_c)^-1, each Q(y_i) the
 * Gaussian N(m_i, I) cut to the cone where y_i's own class wins.  The
 * mean-field updates alternate
 *     ybar_i = E[y_i] under Q(y_i)          (one-dimensional integrals, mprobit.h)
 *     m_c = K_c (I + K_c)^-1 ybar_c = ybar_c - P_c ybar_c,   P_c = (I + K_c)^-1,
 * each raising the lower bound on log p(labels | hyperparameters)
 *     L = sum_i log P_i(m_i) - 1/2 sum_c (m_c' K_c^-1 m_c + log|I + K_c|),
 * where P_i(m_i) = P(argmax(m_i + e) = class of i), e ~ N(0, I).  (The
 * terms in Sigma_c cancel: with Q(Y) optimal for m, L is the expected
 * log joint under Q(F) plus the entropies, worked out in closed form.)
 * K_c^-1 m_c = P_c ybar_c is carried along, so K_c is never inverted.
 *
 * A fixed point of the updates maximises L over m, so the gradient of the
 * bound in the hyperparameters is its partial derivative at fixed m (the
 * variational parameters' own derivatives vanish):
 *     dL/dtheta = sum_c [ 1/2 v_c' dK_c v_c - 1/2 tr(P_c dK_c) ],  v_c = K_c^-1 m_c.
 *
 * Predictions: f*_c ~ N(k*_c' v_c, k**_c - k*_c' P_c k*_c), and class k's
 * probability is P(argmax(f* + e) = k) with the latent variances added to
 * the unit ones, again a one-dimensional integral.
 *
 * Cost: per kernel one Cholesky factor of I + K and the inverse P from it
 * (3 Cholesky equivalents), then per sweep n integrals of O(C) work at 32
 * nodes each and products of P with C vectors (one symmetric matrix
 * product with a shared kernel): a plain sweep needs one, whose result the
 * convergence test reuses, an extrapolated point one of its own.  The
 * gradient adds the O(n^2 p) contractions.  Measured by bench/bench-vb.
 *
 * Where the sweeps crawl, Newton's method on the means takes over (shared
 * kernel; see gpc_vb_fit in vb.c): per step, the cases' C x C curvatures
 * from the same quadrature, one Cholesky factor of I + S^1/2 K S^1/2 for the
 * preconditioner and one product with K per conjugate-gradient iteration. */
#ifndef GPC_VB_H
#define GPC_VB_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"
#include "liks/mprobit.h"

typedef struct {
    size_t n, C, nparams; /* nparams per kernel */
    int per_class;        /* C kernels, else one shared */
    size_t nK;            /* number of kernel matrices: C or 1 */
    gsl_matrix **K;       /* nK kernel matrices, filled by the caller or evidence */
    gsl_matrix **P;       /* nK matrices (I + K)^-1, both triangles */
    double half_log_det;  /* 1/2 sum_c log|I + K_c| (a shared kernel counted C times) */
    gsl_vector *m;        /* length Cn, class-major: the means of Q(f) */
    gsl_vector *v;        /* length Cn: K^-1 m = P ybar_from */
    gsl_vector *ybar_from;/* length Cn: the ybar that m was computed from (the state) */
    gsl_vector *ybar;     /* length Cn: E[y] under Q(Y) at m */
    gsl_vector *log_p;    /* length n: log P_i(m_i) */
    double bound;         /* L at m */
    int sweeps;           /* sweeps (passes over the cases) of the last fit */
    int has_fit;          /* ybar_from holds a previous fit: the warm start */
    double tol;           /* convergence: largest change of m below tol */
    int max_sweeps;
    gpc_mprobit_rule *rule;
    /* per OpenMP thread a rule (the first is rule) and 2C scratch values,
     * for the cases' integrals side by side */
    gpc_mprobit_rule **thread_rule;
    double *thread_scratch;
    int scratch_threads; /* the threads the scratch is made for (start-up count) */
    int nthreads;        /* the threads the cases use, at most scratch_threads */
    gsl_matrix *Bg;       /* n x nparams scratch for the gradient */
    gsl_matrix *R;        /* n x n, allocated by the first gradient */
    gsl_vector *u;        /* length n scratch */
    gsl_vector *z0, *z1, *r, *q; /* length Cn: the extrapolation's points */
    gsl_vector *pv;       /* length Cn: P ybar, the next update's v */
    /* Newton's method (shared kernel): allocated by the first fit */
    struct gpc_vb_newton *newton;
    int newton_active;    /* the integrals also give the curvatures Newton needs */
    int newton_after;     /* passes before Newton takes over (300) */
    int newton_steps;     /* Newton steps of the last fit */
    int cg_iterations;    /* conjugate-gradient iterations over them */
} gpc_vb;

/* From this many cases times classes the cases' integrals (the sweeps'
 * and the predictions') run on OpenMP threads, with the same results. */
#define VB_PARALLEL_MIN_WORK 1500

/* A workspace for n cases and C >= 2 classes, nparams hyperparameters per
 * kernel, one kernel per class if per_class. */
gpc_vb *gpc_vb_alloc(size_t n, size_t C, size_t nparams, int per_class);
/* The bytes that workspace takes with what the fits add (Newton's, with a
 * shared kernel) and, when gradient is set, the gradient's: 2 nK n x n
 * matrices, one more for Newton and one for the gradient, and vectors of
 * length n and Cn.  Saturates at SIZE_MAX. */
size_t gpc_vb_workspace(size_t n, size_t C, size_t nparams, int per_class, int gradient);
void gpc_vb_free(gpc_vb *w);

/* Fit at the kernel matrices w->K for labels cls[i] in 0..C-1: the updates,
 * two at a time extrapolated along their path (the bound never falls),
 * until the largest change of m a sweep would make, relative to the
 * largest |m| if that is above 1, is below w->tol (1e-9), or
 * w->max_sweeps (10000) passes.  With a shared kernel, Newton's method
 * takes over after w->newton_after passes (300): the sweeps crawl where K
 * is large (a large signal variance), Newton's steps do not, but each
 * costs tens to hundreds of products with K, so for C = 10 and n = 2000
 * the sweeps are cheaper where they converge.  Starts from the previous fit's ybar when has_fit, else from
 * m = 0.  GPC_ENUM with a hint if I + K is not positive definite or the
 * sweeps run out; GPC_EUSAGE for a label out of range. */
int gpc_vb_fit(gpc_vb *w, const size_t *cls);

/* One sweep from the current m: ybar and log P at m, the bound there, then
 * m from ybar.  For the tests (the bound rises sweep by sweep); returns the
 * bound at the m it started from.  Needs a fit or gpc_vb_start first. */
double gpc_vb_sweep(gpc_vb *w, const size_t *cls);

/* Factor I + K and set m = 0 (or the warm start): what gpc_vb_fit does
 * before its sweeps. */
/* The threads the cases' integrals run on now: nthreads, or fewer while the
 * machine is busy (gpc_parallel_threads). */
int gpc_vb_threads(const gpc_vb *w);

int gpc_vb_start(gpc_vb *w, const size_t *cls);

/* The bound and, if grad is not NULL, its gradient in the log
 * hyperparameters (kernels: nK of them, nparams each, gradient laid out
 * kernel by kernel) at the kernels' current parameters. */
int gpc_vb_evidence(gpc_vb *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                    const size_t *cls, double *bound, double *grad);

/* Restore a fit from its state ybar_from (length Cn) at the kernel
 * matrices w->K: P, v, m, ybar and the bound. */
int gpc_vb_set_state(gpc_vb *w, const size_t *cls, const gsl_vector *ybar_from);

/* Latent means (m x C) and covariances (m x C^2, diagonal) at m test cases
 * from the cross-covariances Ks[k] (n x m) and prior variances kss[k]. */
void gpc_vb_predict(const gpc_vb *w, const gsl_matrix *const *Ks, const gsl_vector *const *kss,
                    gsl_matrix *mean, gsl_matrix *cov);

#endif
