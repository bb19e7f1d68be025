/* softmax — the Laplace approximation for multiclass GP classification with
 * the softmax likelihood (Williams & Barber 1998; Rasmussen & Williams 2006,
 * Algorithms 3.3, 3.4 and 5.2).
 *
 * There are C latent functions f_c over the n training cases, with
 * independent GP priors: either one kernel matrix K shared by all classes
 * (the default) or one K_c per class (per_class), each class with its own
 * hyperparameter vector (theta is then the concatenation, C * p entries).
 * Vectors of length Cn are stored class by class: f[c n + i] = f_i^c.
 * Labels are class indices 0..C-1.
 *
 * The Hessian of -log p(y|f) is W = D - Pi Pi' (D = diag(pi), Pi the Cn x n
 * stack of diag(pi_c)).  The Cn x Cn matrix is never formed: with
 * B_c = I + D_c^1/2 K_c D_c^1/2 and E_c = D_c^1/2 B_c^-1 D_c^1/2,
 *     (K + W^-1)^-1 = E - E R S^-1 R' E,   S = sum_c E_c = M M',
 *     |I + K W|     = prod_c |B_c| * |S|,
 * where R stacks C identities.  The Newton search on
 * Psi(f) = -1/2 a'f + y'f - sum_i log sum_c exp f_i^c (a = K^-1 f) halves
 * the step while Psi falls and stops when a full step gains less than a
 * relative 1e-12 or moves f by less than 1e-10.  A step needs S^-1 only on
 * one vector, so it never forms S: it solves S u = r by conjugate gradients
 * (each iteration two triangular solves with the factor of every B_c and
 * one product with K, O(C n^2)), preconditioned by I + K / C, which is S^-1
 * at f = 0 and close to it along the smooth directions that make S ill
 * conditioned, or after a previous mode by S^-1 there.  The step is written as a correction, which vanishes at the
 * mode, and solved to a relative accuracy that tightens as the square of
 * the gradient, between 1e-2 and 1e-8: early steps are rough, the last ones
 * as exact as a factorisation would make them.  S is formed and factored
 * once, at the mode, for log|S|, predictions and the gradient.
 *
 * Cost, in Cholesky equivalents (n^3 / 3 flops each; O(n^3) work is counted
 * in chol_equiv, conjugate-gradient iterations in cg_iterations):
 *   per Newton step   C: the factors of B_c; plus the iterations, each
 *                     (6C + 6) / n equivalents by flops with a shared
 *                     kernel and more by time (triangular solves with one
 *                     vector run at memory speed).  A step whose
 *                     iterations stall (cg_max) factors S as at the mode
 *                     instead, 3C + 1 more.
 *   at the mode       3C + 1: the C factors, C inverses B_c^-1 from them
 *                     (2 each) and the factor M of S.
 *   gradient          6C - 5 on top of the mode with a shared kernel, 6C - 2
 *                     with per-class kernels: M^-1 (1); T_c = M^-1 E_c by
 *                     triangular solves with (C - 1) n columns in all
 *                     (3 (C - 1)), since sum_c T_c = M' gives each case's
 *                     most probable class from the others; and the blocks
 *                     E_c - T_c'T_c of (K + W^-1)^-1 by rank-n updates (3
 *                     each), of which a shared kernel needs only the sum:
 *                     C - 1 updates after an orthogonal change of basis
 *                     across the classes.  Each block is a product of
 *                     three dense matrices, one solve and one update of n^3
 *                     flops each, which is why a class costs 6 and not 3.
 *                     The dK contractions are O(C n^2 p) (one pass over
 *                     the pairs for a shared kernel), no dK_j is formed.
 *   predictions       O(C n^2 m + C^2 n m) for m test cases, plus the
 *                     integral over the latent Gaussian per case (below).
 * Measured by bench/bench-softmax (n = 2000, C = 4, d = 8, shared ARD
 * kernel, cold start, 7 Newton steps with 8.4 iterations each on average;
 * best of two rounds) against gsl_linalg_cholesky_decomp1 of size n on the
 * same machine, one thread / two: a step costs 4 counted (plus 0.13 for the
 * iterations by flops) and 4.7 / 4.8 by time; the mode's factorisation 13,
 * 13.1 / 13.3; the gradient 19, 19.6 / 19.1; the evidence with gradient 60
 * counted and 66 / 66 by time.  When every step factored S and the gradient
 * took 6C + 1, the same run was 13 (13.0 / 13.2) per step, 25 (25.1 / 25.7)
 * for the gradient and 129 (129 / 132) in all.  (The second core was busy
 * with other work, so two threads gained nothing on either side.)
 * Threads: from GPC_PARALLEL_MIN_CLASS_ROWS up to GPC_PARALLEL_MIN_ROWS rows
 * (where OpenBLAS runs on one thread) the classes' work runs side by side
 * on OpenMP threads: the factors and inverses of the B_c, the products with
 * E_c in the conjugate gradients, the gradient's triangular solves, and its
 * rank-n updates in two fixed halves.  Every sum over classes is formed in
 * the same order whatever the number of threads, so that number changes no
 * bit of the results.
 * Storage: C matrices B_c^-1 (the factors of B_c during the search), one
 * (shared) or C kernel matrices, M, and C + 2 n x n scratch matrices
 * allocated by the first gradient.  The factors stay valid after a
 * gradient, so predictions may follow. */
#ifndef GPC_SOFTMAX_H
#define GPC_SOFTMAX_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"

typedef struct {
    size_t n, C, nparams; /* nparams per kernel */
    int per_class;        /* C kernel matrices, else one shared */
    size_t nK;            /* number of kernel matrices: C or 1 */
    gsl_matrix **K;       /* nK kernel matrices, filled by the caller or evidence */
    gsl_matrix **Binv;    /* C matrices (lower triangles): B_c^-1 at f when factor_valid,
                             the Cholesky factor of B_c during the Newton search */
    gsl_matrix *M;        /* lower Cholesky factor of S = sum_c E_c at f */
    gsl_matrix *Minv, *N; /* n x n, for the gradient: M^-1 and M^-1 - M' */
    gsl_matrix **T;       /* C matrices n x n, for the gradient: M^-1 E_c */
    size_t *ref, *cols;   /* length n, for the gradient */
    gsl_vector *f, *a, *pi, *sD; /* length Cn: mode, K^-1 f, softmax, sqrt(pi) */
    gsl_vector *binv_diag;       /* length Cn: diagonals of B_c^-1 */
    gsl_vector *t1, *t2, *t3, *t4, *t5; /* length Cn scratch */
    gsl_vector *ypi;             /* length Cn: y - pi at the mode */
    gsl_vector *u3, *zero; /* length n scratch, and zeros */
    gsl_vector *class_scratch, *class_out; /* length Cn: each class's own scratch */
    int class_parallel;   /* run the classes' work side by side (gpc_parallel_classes) */
    gsl_vector *cg_b, *cg_x, *cg_r, *cg_z, *cg_p, *cg_q; /* length n: conjugate gradients */
    gsl_matrix *Bg;       /* n x (C nparams) for the gradient */
    double psi;           /* Psi at the mode */
    double half_log_det;  /* 1/2 log|I + K W| at the mode */
    double log_evidence;
    int factor_valid;     /* Binv and M hold the factors at f */
    int m_valid;          /* M holds the factor of S at some earlier f: with has_mode,
                             the preconditioner of the conjugate gradients */
    int has_mode;         /* a holds a previous mode: used as a warm start */
    int iterations;       /* Newton steps of the last search */
    unsigned long n_newton;   /* Newton steps so far */
    unsigned long chol_equiv; /* O(n^3) work so far in Cholesky equivalents */
    unsigned long cg_iterations; /* conjugate-gradient iterations so far */
    int cg_max;           /* conjugate-gradient iterations allowed per Newton step
                             before the factorised S takes over (100 from
                             gpc_softmax_alloc; 0 always factors S) */
} gpc_softmax;

/* A workspace for n cases and C >= 2 classes; nparams hyperparameters per
 * kernel; per_class selects one kernel per class. */
gpc_softmax *gpc_softmax_alloc(size_t n, size_t C, size_t nparams, int per_class);
/* The bytes that workspace takes, with the scratch of the first gradient
 * when gradient is set: (nK + C + 1) n x n matrices, (C + 2) more for the
 * gradient, and vectors of length n and Cn.  Saturates at SIZE_MAX. */
size_t gpc_softmax_workspace(size_t n, size_t C, size_t nparams, int per_class, int gradient);
void gpc_softmax_free(gpc_softmax *w);

/* Find the mode for the kernel matrices w->K (filled by the caller) and
 * labels cls[i] in 0..C-1.  When w->has_mode (warm start) it starts from the
 * best of f = K a with the previous a, one Newton step from the previous f,
 * and f = 0.  Sets f, a, pi, psi,
 * half_log_det, log_evidence and the factors.  GPC_ENUM with a hint when a
 * factorisation fails or Newton does not converge; GPC_EUSAGE for a label
 * out of range. */
int gpc_softmax_mode(gpc_softmax *w, const size_t *cls);

/* Log evidence log q(y | X, theta) and, if grad is not NULL, its exact
 * gradient with respect to every log hyperparameter (length nparams, or C
 * nparams for per-class kernels, class by class), including the implicit
 * dependence of the mode.  kernels holds nK kernels (their current
 * parameters are used).  Never returns GPC_OK with a non-finite result. */
int gpc_softmax_evidence(gpc_softmax *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                         const size_t *cls, double *log_evidence, double *grad);

/* Set the state from a stored mode f (length Cn, e.g. from a model file):
 * a = y - pi (which is K^-1 f at the mode), the factors and the evidence.
 * w->K must be filled. */
int gpc_softmax_set_mode(gpc_softmax *w, const size_t *cls, const gsl_vector *f);

/* Predictions at m test inputs (Algorithm 3.4); needs factor_valid.
 * Ks[k] is the n x m cross-covariance and kss[k] the m prior variances of
 * kernel k (nK of each).  Writes the latent mean (m x C), optionally the
 * latent covariance (m x C^2, row-major C x C per case), the class
 * probabilities E[softmax(f*)] (m x C) and the plug-in softmax(mean) (m x C);
 * any of the last three may be NULL.  GPC_ENUM if a latent covariance is not
 * positive semi-definite. */
int gpc_softmax_predict(const gpc_softmax *w, const gsl_matrix *const *Ks,
                        const gsl_vector *const *kss, gsl_matrix *mean, gsl_matrix *cov,
                        gsl_matrix *prob, gsl_matrix *plugin);

/* E[softmax(f)] for f ~ N(mu, Sigma) in C dimensions is computed by a fixed
 * rule: for C = 2 the one-dimensional logistic-Gaussian integral of the
 * difference f_0 - f_1 (accurate to 1e-9); otherwise quasi-Monte Carlo on
 * the Sobol sequence (Halton beyond 40 classes), mapped to normal deviates z
 * used in antithetic pairs +-z, along the principal axes of Sigma with the
 * largest variance on the best-distributed coordinate.  The number of points
 * doubles from 2^12 - 1 until the estimate changes by less than
 * GPC_SOFTMAX_QMC_TOL (an estimate of the error of the shorter prefix) or
 * reaches 2^17 - 1: small latent variances stop early, large ones (where
 * softmax is nearly a step) take more.  The rule is deterministic (the same
 * inputs give the same bits).  Measured against Monte Carlo with 4 10^7
 * samples (itself good to about 1e-4), its largest error over the classes
 * was at most 2.5e-4 at C = 10 with latent standard deviations near 8 and
 * 1.4e-4 at C = 5 with 4; the tests hold it within 1e-3 of 10^6-sample
 * Monte Carlo.  One expectation takes about 1.5 ms at C = 3 and small
 * variance (8191 point pairs), up to about 50 ms at C = 10 and large
 * variance (the full 2^17 - 1).  A rule is built once per C (tens of ms)
 * and reused for every test case. */
#define GPC_SOFTMAX_QMC_MIN 4095
#define GPC_SOFTMAX_QMC_MAX 131071
#define GPC_SOFTMAX_QMC_TOL 1e-4
typedef struct {
    size_t C, N;
    double *z; /* N x C normal deviates (N = GPC_SOFTMAX_QMC_MAX) */
} gpc_softmax_rule;

gpc_softmax_rule *gpc_softmax_rule_alloc(size_t C);
void gpc_softmax_rule_free(gpc_softmax_rule *r);

/* p = E[softmax(f)], f ~ N(mu, Sigma) (Sigma row-major C x C).  GPC_ENUM if
 * Sigma has a clearly negative eigenvalue. */
int gpc_softmax_expect(const gpc_softmax_rule *r, const double *mu, const double *Sigma,
                       double *p);

/* softmax(mu), computed with the log-sum-exp shift. */
void gpc_softmax_plugin(size_t C, const double *mu, double *p);

#endif
