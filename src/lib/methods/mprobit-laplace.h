/* mprobit-laplace — the Laplace approximation to the evidence of the
 * multinomial probit model, the objective by which variational Bayes
 * (vb.h) chooses its hyperparameters by default.
 *
 * Model: latent functions f_c ~ GP(0, K_c), class c = 1..C, and case i's
 * class t_i with probability P_i(f_i) = P(argmax(f_i + e) = t_i), e ~ N(0, I)
 * (mprobit.h).  The posterior's mode m maximises
 *     Psi(f) = sum_i log P_i(f_i) - 1/2 f' K^-1 f,     K = blockdiag(K_c),
 * which is exactly the fixed point of the variational updates (the bound
 * with Q(Y) optimal is Psi - 1/2 sum_c log|I + K_c|), so the variational
 * fit is the warm start.  With W = -grad^2 sum_i log P_i = blockdiag(W_i),
 * W_i = I - Cov(y_i | t_i) (C x C, positive semi-definite, W_i 1 = 0),
 *     log Z = Psi(m) - 1/2 log|B|,     B = I + F K F,     F = W^1/2,
 * blockwise.  Against the variational bound this lacks the term
 * -1/2 [sum_c log|I + K_c| - log|B|], the Occam factor of a unit-noise
 * regression on every case however confidently it is classified, which
 * grows with the kernels' strength and makes the bound prefer weak kernels.
 *
 * The W_i are full C x C blocks that differ from case to case, so B has no
 * structure to reduce: it is formed and factored whole, a Cn x Cn matrix
 * (class-major: row c n + i is class c of case i).  Cost per Newton step:
 * one Cholesky factor of size Cn, (Cn)^3 / 3 flops; from the variational
 * mode one or two steps reach the mode to rounding.
 *
 * Gradient in the hyperparameters (a = K^-1 m = grad sum log P_i at m):
 *     dlog Z = 1/2 a' dK a - 1/2 tr(R dK) + b' dK a,
 *     R = F B^-1 F = W (I + K W)^-1,
 *     b = (I + W K)^-1 s = s - R K s,
 *     s_(i,a) = 1/2 sum_(b,c) Sigma_i[b, c] T_i[b, c, a],
 * the last two the implicit term (the mode moves with K, and W with the
 * mode): Sigma_i the C x C blocks of (K^-1 + W)^-1 = K - K R K and T_i =
 * d^3 log P_i (mprobit.h's third cumulants), since dW_i / dm_(i,a) =
 * -T_i[., ., a].  dK is block-diagonal, so each kernel's derivatives are
 * contracted with one n x n matrix: 1/2 sum over its classes of
 * a_c a_c' - R_cc + a_c b_c' + b_c a_c'.  Cost: B^-1 from the factor
 * (2 (Cn)^3 / 3 flops), R K (2 C^2 n^3) and the contraction. */
#ifndef GPC_MPROBIT_LAPLACE_H
#define GPC_MPROBIT_LAPLACE_H

#include <stddef.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"
#include "liks/mprobit.h"

typedef struct {
    size_t n, C, nK;  /* nK kernels: C (per class) or 1 (shared) */
    gsl_matrix *A;    /* Cn x Cn: F K F, B's factor, then R */
    gsl_matrix *G;    /* Cn x Cn: R K, and the contraction's n x n matrices (from the
                       * first gradient) */
    double *W, *F;    /* n blocks C x C: W_i and its square root */
    gsl_vector *m, *a, *g, *b, *dm, *da, *m0, *a0, *ones; /* length Cn */
    gsl_vector *log_p;    /* length n */
    gsl_vector *zero;     /* length n, zeros */
    double *scratch;      /* C^3 + 3 C^2 + C */
    gpc_mprobit_rule *rule;
    gsl_eigen_symmv_workspace *eig;
    double psi;           /* Psi at the mode */
    double half_log_det;  /* 1/2 log|B| */
    double log_evidence;
    int newton_steps;     /* factors of B in the last fit */
    int has_factor;       /* A holds B's factor at m */
} gpc_mpl;

gpc_mpl *gpc_mpl_alloc(size_t n, size_t C, int per_class);
/* The bytes the workspace takes with its first gradient's: two Cn x Cn
 * matrices and the vectors. */
size_t gpc_mpl_workspace(size_t n, size_t C);
void gpc_mpl_free(gpc_mpl *w);

/* The mode by Newton's method on Psi from m0 (length Cn, class-major) with
 * a0 = K^-1 m0 (both NULL: from 0), steps halved until Psi rises, until a
 * step would move no mean by more than 1e-11 (relative to the largest |m|
 * above 1); then log Z.  K: nK kernel matrices, both triangles.
 * GPC_ENUM if B cannot be factored or the steps stall far from the mode. */
int gpc_mpl_fit(gpc_mpl *w, gsl_matrix *const *K, const size_t *cls, const gsl_vector *m0,
                const gsl_vector *a0, double *log_evidence);

/* After gpc_mpl_fit: the gradient of log Z in the log hyperparameters of
 * the nK kernels (nparams each, laid out kernel by kernel), whose matrices
 * at X are K, for the labels of the fit; Bg is n x nparams scratch.  Uses
 * A and G, so it comes once after each fit. */
int gpc_mpl_gradient(gpc_mpl *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                     gsl_matrix *const *K, const size_t *cls, size_t nparams, double *grad,
                     gsl_matrix *Bg);

#endif
