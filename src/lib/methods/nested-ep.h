/* nested-ep — expectation propagation for multiclass GP classification with
 * the multinomial probit likelihood (Riihimaki, Jylanki & Vehtari 2013,
 * JMLR 14, "Nested expectation propagation for Gaussian process
 * classification with a multinomial probit likelihood").
 *
 * C latent functions with independent GP priors (one shared kernel matrix,
 * or one per class), vectors of length Cn stored class by class
 * (f[c n + i] = f_i^c), labels 0..C-1.  Each case's likelihood term is
 * replaced by a Gaussian site on its C latent values whose parameters come
 * from the inner EP of nested-ep-site.h: precision
 * Pi_i = D_i - pi_i pi_i' / s_i (D_i = diag(pi_i), s_i = sum(pi_i)), so
 * that, with D = diag(pi) over all Cn values, R the Cn x n stack of C
 * identities and S_d = diag(s),
 *     Pi = D - D R S_d^-1 R' D,
 * the structure of softmax Laplace's W with pi no longer summing to one.
 * The same algebra as there gives, with B_c = I + D_c^1/2 K_c D_c^1/2,
 * A_c = (K_c^-1 + D_c)^-1 = K_c - X_c'X_c (X_c = L_c^-1 D_c^1/2 K_c,
 * L_c the factor of B_c), E_c = D_c - D_c A_c D_c = D_c^1/2 B_c^-1 D_c^1/2
 * and S = sum_c E_c = M M':
 *     Sigma = (K^-1 + Pi)^-1:  Sigma_cc' = delta_cc' A_c + A_c D_c S^-1 D_c' A_c',
 *     (K + Pi^-1)^-1 = E - E R S^-1 R' E,
 *     log |I + K Pi| = sum_c log |B_c| + log |S| - sum_i log s_i,
 * (S_d cancels: R' D A D R = S_d - S), so the Cn x Cn matrix is never
 * formed.  A case's C x C marginal covariance is
 * delta_cc' A_c[i,i] + Y_c[:,i]' Y_c'[:,i] with Y_c = M^-1 D_c A_c.  E_c
 * is formed from B_c^-1, never as D_c - D_c A_c D_c: where d K_ii is large
 * that difference loses E_c's small eigenvalues, which S^-1 magnifies in
 * every marginal (nested-ep.c, class_E_from_factor).
 *
 * Parallel EP: every site is updated from the same posterior (its cavity
 * divides the site out of the case's marginal; the inner EP warm-starts
 * from the case's previous inner sites), the inner sites' change damped by
 * a factor (default 0.8), then the posterior is recomputed.  The sweeps stop
 * when no inner site parameter moves by more than a relative tol (default
 * 1e-9, and 1e-12 for the inner sweeps).
 *
 * Log evidence at the fixed point (sites fixed, t~_i the sites'
 * normalisers chosen so that cavity times site has the tilted mass Z_i):
 *     log Z = 1/2 nu' mu - 1/2 log |I + K Pi|
 *           + sum_i [log Z_i + 1/2 log |Sigma_-i| - 1/2 log |Sigma_i|
 *                    - 1/2 mu_i' Sigma_i^-1 mu_i + 1/2 mu_-i' Sigma_-i^-1 mu_-i],
 * and, EP being stationary in its sites there, its gradient is the explicit
 * one, (1/2) sum_c [b_c' dK_c b_c - tr(R_cc dK_c)] with b = nu - Pi mu
 * (= K^-1 mu) and R_cc = E_c - T_c'T_c, T_c = M^-1 E_c.  Once the sweeps
 * end, T_c takes Y_c's place; predictions need it too (V_c = T_c k*_c).
 *
 * Cost per sweep, in Cholesky equivalents (n^3 / 3 flops): C factors,
 * C triangular solves for X_c (3 each), C rank-n updates for A_c (3 each),
 * C inverses B_c^-1 (2 each), C solves for Y_c (3 each), one factor of S:
 * 12C + 1; once the sweeps end, T_c costs 6 per class (a factor, an
 * inverse and a solve).  From
 * GPC_PARALLEL_MIN_CLASS_ROWS to GPC_PARALLEL_MAX_CLASS_ROWS rows the
 * classes' factors and solves run side by side, on OpenMP threads of
 * one-thread BLAS (as softmax Laplace's do), with two n x n scratch
 * matrices per thread; sums over the classes are formed in class order
 * whatever the threads.  The gradient adds C rank-n updates (3 each),
 * and with per-class kernels the products M T_c (3 each).  Memory: C + nK
 * + 4 n x n matrices (A_c, which become Y_c with E_c in their upper
 * triangles until S is summed, then T_c; S, M, X, L), two more per further
 * thread when the classes run side by side. */
#ifndef GPC_NESTED_EP_H
#define GPC_NESTED_EP_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"
#include "linalg/anderson.h"
#include "methods/nested-ep-site.h"

#define GPC_NEP_TOL 1e-9
#define GPC_NEP_DAMPING 0.8

typedef struct {
    size_t n, C, nparams; /* nparams per kernel */
    int per_class;
    size_t nK;            /* kernel matrices: C or 1 */
    gsl_matrix **K;       /* nK kernel matrices (filled by evidence or the caller) */
    gsl_matrix **Y;       /* C matrices: A_c (E_c above the diagonal), then
                             Y_c = M^-1 D_c A_c, then after a fit T_c = M^-1 E_c */
    gsl_matrix *M;        /* S, then its lower factor */
    gsl_matrix *S;        /* a copy of S, spent by the gradient */
    gsl_matrix *X, *L;    /* n x n scratch (Xs[0], Ls[0]) */
    gsl_matrix **Xs, **Ls; /* the same per thread when the classes run side by side */
    double *sds;          /* n per thread: square roots of a class's pi */
    int class_parallel;   /* the classes' work side by side (gpc_parallel_classes) */
    int nscratch;         /* threads with scratch */
    gsl_matrix *Bg;       /* n x nparams scratch for the contraction */
    double *alpha, *beta; /* inner sites, n x C case by case (entry y_i unused, 0);
                             beta follows alpha in one vector x of 2Cn */
    double *g, *r;        /* 2Cn: the parallel map's G(x), and r = G(x) - x */
    gpc_anderson *anderson; /* 2Cn x 5: the last changes of x and r */
    double *pi, *nu;      /* the outer sites, Cn class by class, and s (n) */
    double *s;
    double *mu;           /* posterior mean, Cn */
    double *adiag;        /* diagonals of A_c, Cn */
    double *ediag;        /* diagonals of E_c, Cn */
    double *Sig;          /* marginal covariances, n x C x C */
    double *cav_mean, *cav_cov; /* cavities at the last evidence (LOO), n x C, n x C x C */
    double *b;            /* nu - Pi mu = K^-1 mu, Cn */
    double *logZ;         /* log tilted masses, n */
    double *tmp;          /* Cn scratch */
    gpc_nep_site *site;   /* the inner EP's scratch */
    double damping, tol, inner_tol;
    double floor_from;    /* a run whose site changes stop falling at or below this (or
                             1e4 tol) has reached the rounding floor and settled
                             (nested-ep.c); default 1e4 GPC_NEP_TOL */
    int max_sweeps, inner_max_sweeps;
    int sweeps;           /* outer sweeps of the last run */
    double change;        /* its last sweep's largest site change (relative) */
    unsigned long inner_sweeps; /* inner sweeps of the last run, all cases */
    size_t skipped;       /* cases whose cavity was improper in the last sweep */
    double half_log_det;  /* 1/2 log |I + K Pi| */
    double log_evidence;
    int has_fit;          /* the posterior and factors hold the last sites */
    int has_cavities;     /* cav_mean, cav_cov hold the last fit's cavities */
    int warm;             /* alpha, beta hold the last run's converged sites */
} gpc_nep;

gpc_nep *gpc_nep_alloc(size_t n, size_t C, size_t nparams, int per_class);
size_t gpc_nep_workspace(size_t n, size_t C, size_t nparams, int per_class);
void gpc_nep_free(gpc_nep *w);

/* Fill the kernel matrices, run EP on labels cls from the last run's sites
 * (w->warm: set by a converged run, cleared by the method's forget) or else
 * from zero sites, and give
 * the log evidence and, if grad is not NULL, its gradient in the log
 * hyperparameters (nK x nparams, kernel by kernel).  GPC_ENUM (message set)
 * if the sweeps do not settle or a matrix is not positive definite. */
int gpc_nep_evidence(gpc_nep *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                     const size_t *cls, double *log_evidence, double *grad);

/* The posterior from given inner sites (alpha, beta, n x C) and w->K filled
 * by the caller, for predictions from a model file. */
int gpc_nep_set_sites(gpc_nep *w, const size_t *cls, const double *alpha, const double *beta);

/* Latent means (m x C) and covariances (m x C*C, row-major per case) at m
 * test cases from the cross-covariances Ks[c] (n x m) and prior variances
 * kss[c] of each kernel (nK of each).  After a fit or gpc_nep_set_sites. */
void gpc_nep_predict(const gpc_nep *w, const gsl_matrix *const *Ks,
                     const gsl_vector *const *kss, gsl_matrix *mean, gsl_matrix *cov);

/* Class probabilities (m x C) from latent means and covariances shaped as
 * gpc_nep_predict's: P(k) = E[p(k | f)] by the inner EP's tilted mass (the
 * masses of the C classes normalised to sum to one), or p(k | f) at the
 * mean by one-dimensional quadrature when plugin is set. */
int gpc_nep_probs(gpc_nep *w, const gsl_matrix *mean, const gsl_matrix *cov, int plugin,
                  gsl_matrix *p);

#endif
