#include "methods/laplace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/hash.h"
#include "base/parallel.h"
#include "kernels/kernel-pdense.h"
#include "linalg/bmatrix.h"

#define MAX_NEWTON 200
#define MAX_HALVINGS 40
/* A full Newton step that raises Psi by less than this (relative) ends the
 * search: convergence is quadratic, so the mode is then good to about the
 * square root of it in f and to rounding in the evidence. */
#define PSI_RTOL 1e-12
#define F_RTOL 1e-8
/* Chord steps (chord_steps) start after a full Newton step shorter than
 * CHORD_START, go on while each is shorter than CHORD_RATE times the one
 * before, and end the search once the next would be below CHORD_DONE (all
 * relative to the size of f, as F_RTOL). */
#define CHORD_START 1e-1
#define CHORD_RATE 0.25
#define CHORD_DONE 1e-16
#define MAX_CHORD 12
/* Far from the decision boundary W underflows; below this floor it changes
 * log|B| by less than W_FLOOR max K_ii, nothing for any kernel that does not
 * overflow. */
#define W_FLOOR 1e-300

/* Kept beside gpc_laplace_alloc, whose allocations it counts. */
size_t gpc_laplace_workspace(size_t n, size_t nparams)
{
    size_t p = nparams > 0 ? nparams : 1;
    const gpc_pgrid *g = gpc_pgrid_default();
    /* K and L; eleven vectors; Bg, slope, scratch and slope_prev; two of p */
    size_t bytes = gpc_size_mul(2, g ? gpc_pdense_bytes(g, n) : gpc_doubles_bytes(n, n));
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(n, gpc_size_add(11, gpc_size_mul(4, p))));
    return gpc_size_add(bytes, gpc_doubles_bytes(2, p));
}

gpc_laplace *gpc_laplace_alloc(size_t n, size_t nparams, gpc_lik lik)
{
    return gpc_laplace_alloc_on(n, nparams, lik, gpc_pgrid_default());
}

gpc_laplace *gpc_laplace_alloc_on(size_t n, size_t nparams, gpc_lik lik, const gpc_pgrid *grid)
{
    gpc_laplace *w = gpc_calloc(1, sizeof *w);
    w->n = n;
    w->lik = lik;
    w->grid = grid;
    if (w->grid) {
        w->PK = gpc_pdense_alloc(w->grid, n);
        w->PL = gpc_pdense_alloc(w->grid, n);
    } else {
        w->K = gpc_matrix_alloc(n, n);
        w->L = gpc_matrix_alloc(n, n);
    }
    w->f = gpc_vector_calloc(n);
    w->a = gpc_vector_calloc(n);
    w->d1 = gpc_vector_alloc(n);
    w->W = gpc_vector_alloc(n);
    w->d3 = gpc_vector_alloc(n);
    w->sW = gpc_vector_alloc(n);
    w->sW_factor = gpc_vector_alloc(n);
    w->t1 = gpc_vector_alloc(n);
    w->t2 = gpc_vector_alloc(n);
    w->t3 = gpc_vector_alloc(n);
    w->t4 = gpc_vector_alloc(n);
    w->Bg = gpc_matrix_alloc(n, nparams > 0 ? nparams : 1);
    w->slope = gpc_matrix_alloc(n, nparams > 0 ? nparams : 1);
    w->scratch = gpc_matrix_alloc(n, nparams > 0 ? nparams : 1);
    w->theta_mode = gpc_calloc(nparams > 0 ? nparams : 1, sizeof *w->theta_mode);
    w->slope_prev = gpc_matrix_alloc(n, nparams > 0 ? nparams : 1);
    w->theta_prev = gpc_calloc(nparams > 0 ? nparams : 1, sizeof *w->theta_prev);
    return w;
}

void gpc_laplace_free(gpc_laplace *w)
{
    if (!w)
        return;
    gsl_matrix_free(w->K);
    gsl_matrix_free(w->L);
    gpc_pdense_free(w->PK);
    gpc_pdense_free(w->PL);
    gsl_vector *v[] = {w->f,  w->a,  w->d1, w->W,  w->d3,       w->sW,
                       w->t1, w->t2, w->t3, w->t4, w->sW_factor};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        gsl_vector_free(v[i]);
    gsl_matrix_free(w->Bg);
    gsl_matrix_free(w->slope);
    gsl_matrix_free(w->scratch);
    free(w->theta_mode);
    gsl_matrix_free(w->slope_prev);
    free(w->theta_prev);
    free(w);
}

/* sum_i log p(y_i | f_i); with derivs, also d1, W, d3 and sW at f. */
static double log_lik(gpc_laplace *w, const gsl_vector *y, const gsl_vector *f, int derivs)
{
    double sum = 0.0;
    for (size_t i = 0; i < w->n; i++) {
        double d1, d2, d3;
        double yi = gsl_vector_get(y, i), fi = gsl_vector_get(f, i);
        if (!derivs) {
            sum += gpc_lik_logp(w->lik, yi, fi, NULL, NULL, NULL);
            continue;
        }
        sum += gpc_lik_logp(w->lik, yi, fi, &d1, &d2, &d3);
        /* both likelihoods are log-concave; the floor keeps d1 / sW finite */
        double Wi = d2 < -W_FLOOR ? -d2 : W_FLOOR;
        gsl_vector_set(w->d1, i, d1);
        gsl_vector_set(w->W, i, Wi);
        gsl_vector_set(w->d3, i, d3);
        gsl_vector_set(w->sW, i, sqrt(Wi));
    }
    return sum;
}

static double dot(const gsl_vector *x, const gsl_vector *y)
{
    double r;
    gsl_blas_ddot(x, y, &r);
    return r;
}

/* y = K x (x and y distinct). */
static void K_times(const gpc_laplace *w, const gsl_vector *x, gsl_vector *y)
{
    if (w->grid)
        gpc_pdense_symv(w->PK, x->data, y->data);
    else
        gsl_blas_dsymv(CblasLower, 1.0, w->K, x, 0.0, y);
}

/* c <- B^-1 c from the factor L. */
static void B_solve(const gpc_laplace *w, gsl_vector *c)
{
    if (w->grid) {
        gpc_pdense_solve(w->PL, c->data, 1);
        return;
    }
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, w->L, c);
    gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->L, c);
}

/* log|B| / 2 = sum log L_ii, summed in the same order on a grid.  Uses t4. */
static double half_log_det(gpc_laplace *w)
{
    if (!w->grid)
        return gpc_bmatrix_half_log_det(w->L);
    gpc_pdense_diag(w->PL, w->t4->data);
    double sum = 0.0;
    for (size_t i = 0; i < w->n; i++)
        sum += log(gsl_vector_get(w->t4, i));
    return sum;
}

static int factor_lower(gpc_laplace *w)
{
    if (!w->grid)
        return gpc_bmatrix_factor(w->K, w->sW->data, w->L);
    gpc_pdense_copy(w->PL, w->PK);
    gpc_pdense_scale(w->PL, w->sW->data, 1.0);
    return gpc_pdense_factor(w->PL);
}

/* L = chol(I + sW K sW), lower triangle.  The one O(n^3) step of a Newton
 * iteration. */
static int factor_B(gpc_laplace *w)
{
    w->n_chol++;
    gsl_vector_memcpy(w->sW_factor, w->sW);
    if (factor_lower(w) != 0)
        return gpc_fail(GPC_ENUM,
                        "B = I + W^1/2 K W^1/2 is not positive definite: the kernel matrix "
                        "is far from positive semi-definite; add a jitter term to the "
                        "kernel (e.g. 'ard+jitter') or try other hyperparameters");
    return GPC_OK;
}

/* Start from the warm state a if it is at least as good as f = 0. */
static void start_point(gpc_laplace *w, const gsl_vector *y)
{
    if (w->has_mode) {
        K_times(w, w->a, w->f);
        w->psi = log_lik(w, y, w->f, 1) - 0.5 * dot(w->a, w->f);
        gsl_vector_set_zero(w->t1);
        if (w->psi >= log_lik(w, y, w->t1, 0))
            return;
    }
    gsl_vector_set_zero(w->a);
    gsl_vector_set_zero(w->f);
    w->psi = log_lik(w, y, w->f, 1);
}

/* Newton direction from the factor L at f: a_new = (I + W K)^-1 b with
 * b = W f + d1 (Algorithm 3.1, lines 5-8).  R&W form it as
 * b - sW B^-1 sW K b, a difference of two nearly equal vectors once sW K sW
 * is large (huge signal variances), which leaves a_new, and so f = K a_new,
 * as rounding noise.  Since I + W K = sW B sW^-1, the same vector is
 * sW B^-1 (sW f + d1 / sW): one solve, no cancellation.  W is floored
 * (W_FLOOR) so the division stays finite.  Leaves da = a_new - a in t3 and
 * K da in t4. */
static void newton_direction(gpc_laplace *w)
{
    gsl_vector *c = w->t1, *da = w->t3, *Kda = w->t4;
    for (size_t i = 0; i < w->n; i++) {
        double s = gsl_vector_get(w->sW, i);
        gsl_vector_set(c, i, s * gsl_vector_get(w->f, i) + gsl_vector_get(w->d1, i) / s);
    }
    B_solve(w, c);
    gsl_vector_mul(c, w->sW);
    gsl_vector_memcpy(da, c);
    gsl_vector_sub(da, w->a);
    K_times(w, da, Kda);
}

/* Largest |K da_i| relative to the size of f: the length of the step in f. */
static double step_length(const gpc_laplace *w)
{
    double df = 0.0, fm = 0.0;
    for (size_t i = 0; i < w->n; i++) {
        df = fmax(df, fabs(gsl_vector_get(w->t4, i)));
        fm = fmax(fm, fabs(gsl_vector_get(w->f, i)));
    }
    return df / (1.0 + fm);
}

/* Move along (da, K da) with step halving until Psi does not fall.  Returns
 * 1 when the search has converged: a full step gained less than PSI_RTOL
 * relative and moved f by less than F_RTOL relative (Psi alone is not enough:
 * far from the boundary it is flat, W being tiny, while log|B| still depends
 * on f through W); 0 to go on; -1 when no step length gains anything though
 * the step is not small (Newton has stalled short of the mode). */
static int line_search(gpc_laplace *w, const gsl_vector *y)
{
    gsl_vector *ft = w->t1, *at = w->t2;
    double tol = PSI_RTOL * fmax(1.0, fabs(w->psi)), len = step_length(w);
    for (int h = 0; h < MAX_HALVINGS; h++) {
        double t = ldexp(1.0, -h);
        gsl_vector_memcpy(ft, w->f);
        gsl_blas_daxpy(t, w->t4, ft);
        gsl_vector_memcpy(at, w->a);
        gsl_blas_daxpy(t, w->t3, at);
        /* the derivatives at the trial point, which is usually accepted */
        double psi_t = log_lik(w, y, ft, 1) - 0.5 * dot(at, ft);
        if (psi_t >= w->psi - tol) {
            double gain = psi_t - w->psi;
            gsl_vector_memcpy(w->f, ft);
            gsl_vector_memcpy(w->a, at);
            w->psi = psi_t;
            w->full_step = h == 0;
            w->step = len;
            return h == 0 && gain < tol && len < F_RTOL;
        }
    }
    log_lik(w, y, w->f, 1); /* back to the derivatives at f */
    return len < F_RTOL ? 1 : -1;
}

/* Chord steps: Newton steps with the Hessian of the last factorisation,
 * where W was W_factor.  The step of Psi from a is
 *     da = (I + W_f K)^-1 g = g - sW_f B_f^-1 sW_f K g,  g = d1 - a,
 * two products with K and two triangular solves, against a factorisation
 * for a Newton step.  Once a full Newton step has been short, W has hardly
 * changed since the factor, and the chord steps converge at the rate of that
 * change: a few of them take the mode to rounding, where Newton would have
 * taken one more step and a factorisation.  Returns 1 when the last step
 * was at rounding level (the mode is found), 0 when the steps stopped
 * contracting fast or would lower Psi (Newton goes on from the last accepted
 * point). */
static int chord_steps(gpc_laplace *w, const gsl_vector *y)
{
    gsl_vector *g = w->t1, *Kg = w->t2, *da = w->t3, *df = w->t4;
    double prev = w->step, tol = PSI_RTOL * fmax(1.0, fabs(w->psi));
    for (int c = 0; c < MAX_CHORD; c++) {
        gsl_vector_memcpy(g, w->d1);
        gsl_vector_sub(g, w->a);
        K_times(w, g, Kg);
        gsl_vector_mul(Kg, w->sW_factor);
        B_solve(w, Kg);
        gsl_vector_mul(Kg, w->sW_factor);
        gsl_vector_memcpy(da, g);
        gsl_vector_sub(da, Kg);
        K_times(w, da, df);
        double len = step_length(w);
        if (len > CHORD_RATE * prev)
            return 0;
        gsl_vector_add(df, w->f); /* the new point, in place */
        gsl_vector_add(da, w->a);
        double psi_t = log_lik(w, y, df, 1) - 0.5 * dot(da, df);
        if (psi_t < w->psi - tol) {
            log_lik(w, y, w->f, 1); /* back to the derivatives at f */
            return 0;
        }
        gsl_vector_memcpy(w->f, df);
        gsl_vector_memcpy(w->a, da);
        w->psi = psi_t;
        w->chord_steps++;
        /* the next step would be about len^2 / prev: below rounding */
        if (len < CHORD_DONE || len * len < CHORD_DONE * prev)
            return 1;
        prev = len;
    }
    return 0;
}

/* Kernel values that overflowed (huge hyperparameters) would turn every
 * later number into NaN; the diagonal bounds the rest (|K_ij|^2 <= K_ii K_jj). */
static int check_kernel(gpc_laplace *w)
{
    if (w->grid)
        gpc_pdense_diag(w->PK, w->t1->data);
    for (size_t i = 0; i < w->n; i++)
        if (!isfinite(w->grid ? gsl_vector_get(w->t1, i) : gsl_matrix_get(w->K, i, i)))
            return gpc_fail(GPC_ENUM, "the kernel matrix overflows: the hyperparameters are "
                            "too large (their logs should stay well below 700)");
    return GPC_OK;
}

int gpc_laplace_mode(gpc_laplace *w, const gsl_vector *y)
{
    int converged = 0, status;
    w->chol_valid = 0;
    gpc_parallel_blas(w->n);
    if ((status = check_kernel(w)) != GPC_OK)
        return status;
    start_point(w, y);
    for (w->iterations = 0;; w->iterations++) {
        if ((status = factor_B(w)) != GPC_OK)
            return status;
        if (converged)
            break;
        if (w->iterations == MAX_NEWTON)
            return gpc_fail(GPC_ENUM,
                            "Newton's method for the Laplace mode did not converge in %d "
                            "iterations (largest |f| %.3g: a huge signal variance moves the "
                            "mode out slowly); try other hyperparameters, e.g. a smaller "
                            "signal variance",
                            MAX_NEWTON, gsl_vector_max(w->f) > -gsl_vector_min(w->f)
                                            ? gsl_vector_max(w->f) : -gsl_vector_min(w->f));
        newton_direction(w);
        if ((converged = line_search(w, y)) < 0)
            return gpc_fail(GPC_ENUM,
                            "Newton's method for the Laplace mode stalled at iteration %d: no "
                            "step along the Newton direction raises the objective, though the "
                            "step is not small (rounding at these hyperparameters); try a "
                            "smaller signal variance or add a jitter term",
                            w->iterations + 1);
        if (!converged && w->full_step && w->step < CHORD_START)
            converged = chord_steps(w, y);
    }
    w->log_evidence = w->psi - half_log_det(w);
    w->chol_valid = 1;
    w->has_mode = 1;
    return GPC_OK;
}

int gpc_laplace_set_mode(gpc_laplace *w, const gsl_vector *y, const gsl_vector *f)
{
    int status;
    gpc_parallel_blas(w->n);
    gsl_vector_memcpy(w->f, f);
    w->has_slope = 0; /* the slope belongs to another mode */
    double ll = log_lik(w, y, w->f, 1);
    gsl_vector_memcpy(w->a, w->d1); /* at the mode, K^-1 f = grad log p(y|f) */
    w->psi = ll - 0.5 * dot(w->a, w->f);
    w->chol_valid = 0;
    if ((status = factor_B(w)) != GPC_OK)
        return status;
    w->log_evidence = w->psi - half_log_det(w);
    if (!isfinite(w->log_evidence)) /* a stored mode no likelihood can have */
        return gpc_fail(GPC_ENUM, "the stored latent mode gives a log evidence that is not "
                        "finite; refit the model");
    w->chol_valid = 1;
    w->has_mode = 1;
    return GPC_OK;
}

/* Turn L into R = sW B^-1 sW (lower triangle) and return in s2 the
 * derivative of the log evidence with respect to the mode.  Only -1/2 log|B|
 * depends on f at the mode, through W_ii, and d log|I + K W| / d W_ii =
 * Sigma_ii with Sigma = (K^-1 + W)^-1, while d W_ii / d f_i = -d3_i; so
 * s2 = +1/2 diag(Sigma) d3.  Uses sW Sigma sW = I - B^-1, which is exact and
 * needs no further O(n^3) work; where W underflows, Sigma_ii -> K_ii. */
static void posterior_terms_grid(gpc_laplace *w, gsl_vector *s2)
{
    gsl_vector *binv = w->t2, *Kd = w->t3;
    gpc_pdense_inverse(w->PL);
    w->n_inverse++;
    w->chol_valid = 0;
    gpc_pdense_diag(w->PL, binv->data);
    gpc_pdense_diag(w->PK, Kd->data);
    for (size_t i = 0; i < w->n; i++) {
        double Wi = gsl_vector_get(w->W, i), b = gsl_vector_get(binv, i);
        double sigma = Wi > 1e-300 ? (1.0 - b) / Wi : gsl_vector_get(Kd, i);
        gsl_vector_set(s2, i, 0.5 * sigma * gsl_vector_get(w->d3, i));
    }
    gpc_pdense_scale(w->PL, w->sW->data, 0.0);
}

static void posterior_terms(gpc_laplace *w, gsl_vector *s2)
{
    size_t n = w->n;
    if (w->grid) {
        posterior_terms_grid(w, s2);
        return;
    }
    gpc_bmatrix_inverse(w->L);
    w->n_inverse++;
    w->chol_valid = 0;
    for (size_t i = 0; i < n; i++) {
        double Wi = gsl_vector_get(w->W, i);
        double binv = gsl_matrix_get(w->L, i, i);
        double sigma = Wi > 1e-300 ? (1.0 - binv) / Wi : gsl_matrix_get(w->K, i, i);
        gsl_vector_set(s2, i, 0.5 * sigma * gsl_vector_get(w->d3, i));
    }
    gpc_bmatrix_scale(w->L, w->sW->data);
}

/* Algorithm 5.1: explicit part 1/2 a' dK a - 1/2 tr(R dK), and implicit
 * part s2' (I + K W)^-1 dK d1 for every hyperparameter.  The implicit part
 * is folded into one vector z = s2 - R K s2, since
 * s2' (b - K R b) = (s2 - R K s2)' b for b = dK d1. */
static void evidence_gradient(gpc_laplace *w, const gpc_kernel *k, const gsl_matrix *X,
                              double *grad)
{
    gsl_vector *s2 = w->t1, *Ks2 = w->t2, *z = w->t3;
    posterior_terms(w, s2);
    gpc_kernel_grad_contract(k, X, w->K, w->a, 0.5, w->L, -0.5, w->d1, grad, w->Bg);
    gsl_blas_dsymv(CblasLower, 1.0, w->K, s2, 0.0, Ks2);
    gsl_vector_memcpy(z, s2);
    gsl_blas_dsymv(CblasLower, -1.0, w->L, Ks2, 1.0, z);
    gsl_vector_view g = gsl_vector_view_array(grad, gpc_kernel_nparams(k));
    gsl_blas_dgemv(CblasTrans, 1.0, w->Bg, z, 1.0, &g.vector);
}

/* The same on a grid: R's lower triangle becomes the symmetric weights
 * 1/2 (a a' - R + z d1' + d1 z') of every dK_j's entries, which each rank
 * contracts over its own. */
static void evidence_gradient_grid(gpc_laplace *w, const gpc_kernel *k, const gsl_matrix *X,
                                   double *grad)
{
    gsl_vector *s2 = w->t1, *Ks2 = w->t2, *z = w->t3;
    posterior_terms(w, s2);
    K_times(w, s2, Ks2);
    gpc_pdense_symv(w->PL, Ks2->data, z->data);
    gsl_vector_scale(z, -1.0);
    gsl_vector_add(z, s2);
    gpc_pdense *A = w->PL;
    const double *a = w->a->data, *d1 = w->d1->data, *zz = z->data;
    for (size_t j = 0; j < A->cols; j++) {
        size_t gj = A->col_index[j];
        for (size_t i = 0; i < A->rows; i++) {
            size_t gi = A->row_index[i];
            double *e = A->a + i + j * A->ld;
            *e = 0.5 * (a[gi] * a[gj] - *e + zz[gi] * d1[gj] + d1[gi] * zz[gj]);
        }
    }
    gpc_kernel_pdense_contract(k, X, A, grad);
}

/* da / dtheta = -W (I + K W)^-1 Bg = -W (Bg - K R Bg), with R in L (after
 * the gradient) and Bg = dK_j a: differentiating f = K grad log p(y | f)
 * gives (I + K W) df = dK a, and da = -W df at the mode.  When this search
 * started from the slope before (predicted), that slope is kept as the
 * previous one. */
static void mode_slope(gpc_laplace *w, const gpc_kernel *k, int predicted)
{
    size_t p = gpc_kernel_nparams(k);
    w->has_slope_prev = predicted;
    if (predicted) {
        gsl_matrix *t = w->slope_prev;
        w->slope_prev = w->slope;
        w->slope = t;
        memcpy(w->theta_prev, w->theta_mode, p * sizeof *w->theta_prev);
    }
    gsl_matrix_view bg = gsl_matrix_submatrix(w->Bg, 0, 0, w->n, p);
    gsl_matrix_view sl = gsl_matrix_submatrix(w->slope, 0, 0, w->n, p);
    gsl_matrix_view sc = gsl_matrix_submatrix(w->scratch, 0, 0, w->n, p);
    gsl_blas_dsymm(CblasLeft, CblasLower, 1.0, w->L, &bg.matrix, 0.0, &sc.matrix);
    gsl_matrix_memcpy(&sl.matrix, &bg.matrix);
    /* K is full (both triangles): dgemm packs less than dsymm */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, -1.0, w->K, &sc.matrix, 1.0, &sl.matrix);
    for (size_t i = 0; i < w->n; i++) {
        gsl_vector_view r = gsl_matrix_row(&sl.matrix, i);
        gsl_vector_scale(&r.vector, -gsl_vector_get(w->W, i));
    }
    memcpy(w->theta_mode, gpc_kernel_params(k), p * sizeof *w->theta_mode);
    w->has_slope = 1;
}

/* Move the warm start a by da / dtheta (theta - theta_mode), and by the
 * second-order term when this step (s = theta - theta_mode) continues the
 * one before (b = theta_mode - theta_prev) in nearly its direction: the
 * slopes at its two ends differ by about D2a[b, .], so with s = c b,
 * 1/2 D2a[s, s] is about c/2 (slope - slope_prev) s.  Across a turn (a new
 * trajectory, a rejected proposal) the term would be a guess and is left
 * out. */
#define SECOND_ORDER_COS 0.9
void gpc_laplace_predict_start(gpc_laplace *w, const gpc_kernel *k)
{
    size_t p = gpc_kernel_nparams(k);
    const double *theta = gpc_kernel_params(k);
    double bb = 0.0, bs = 0.0, ss = 0.0;
    for (size_t j = 0; j < p; j++) {
        double sj = theta[j] - w->theta_mode[j], bj = w->theta_mode[j] - w->theta_prev[j];
        gsl_vector_view c = gsl_matrix_subcolumn(w->slope, j, 0, w->n);
        gsl_blas_daxpy(sj, &c.vector, w->a);
        bb += bj * bj;
        bs += bj * sj;
        ss += sj * sj;
    }
    if (!w->has_slope_prev || !(bs > SECOND_ORDER_COS * sqrt(bb * ss)))
        return;
    double half_c = 0.5 * bs / bb;
    for (size_t j = 0; j < p; j++) {
        double sj = half_c * (theta[j] - w->theta_mode[j]);
        gsl_vector_view c = gsl_matrix_subcolumn(w->slope, j, 0, w->n);
        gsl_vector_view c0 = gsl_matrix_subcolumn(w->slope_prev, j, 0, w->n);
        gsl_blas_daxpy(sj, &c.vector, w->a);
        gsl_blas_daxpy(-sj, &c0.vector, w->a);
    }
}

/* On a grid every rank computes from its own copy of the inputs, labels
 * and hyperparameters: a rank given others would add blocks of another
 * matrix (or of another size, and wait in a collective the others never
 * enter).  So each fit first compares a hash of them with rank 0's. */
static int ranks_agree(const gpc_laplace *w, const gpc_kernel *k, const gsl_matrix *X,
                       const gsl_vector *y)
{
    gpc_comm *c = w->grid->comm;
    double shape[2] = {(double)X->size1, (double)X->size2};
    unsigned long long h = gpc_hash_doubles(GPC_HASH_START, shape, 2), h0;
    for (size_t i = 0; i < X->size1; i++)
        h = gpc_hash_doubles(h, gsl_matrix_const_ptr(X, i, 0), X->size2);
    for (size_t i = 0; i < y->size; i++)
        h = gpc_hash_doubles(h, gsl_vector_const_ptr(y, i), 1);
    h = gpc_hash_doubles(h, gpc_kernel_params(k), gpc_kernel_nparams(k));
    h0 = h;
    int st = gpc_comm_broadcast_bytes(c, &h0, sizeof h0);
    if (st == GPC_OK && h0 != h)
        st = gpc_fail(GPC_EUSAGE, "other inputs, labels or hyperparameters than rank 0's "
                      "(%zu cases of %zu columns here); give every rank the same",
                      X->size1, X->size2);
    return gpc_comm_status(c, st);
}

int gpc_laplace_kernel(gpc_laplace *w, const gpc_kernel *k, const gsl_matrix *X,
                       const gsl_vector *y)
{
    if (!w->grid) {
        gpc_kernel_matrix(k, X, w->K);
        return GPC_OK;
    }
    int status = gpc_kernel_pdense_check(k);
    if (status == GPC_OK)
        status = ranks_agree(w, k, X, y);
    if (status == GPC_OK)
        gpc_kernel_pdense_matrix(k, X, w->PK);
    return status;
}

int gpc_laplace_evidence(gpc_laplace *w, const gpc_kernel *k, const gsl_matrix *X,
                         const gsl_vector *y, double *log_evidence, double *grad)
{
    int status;
    if ((status = gpc_laplace_kernel(w, k, X, y)) != GPC_OK)
        return status;
    int predicted = w->has_mode && w->has_slope;
    if (predicted)
        gpc_laplace_predict_start(w, k);
    w->has_slope = 0;
    if ((status = gpc_laplace_mode(w, y)) != GPC_OK)
        return status;
    *log_evidence = w->log_evidence;
    if (grad && w->grid) {
        evidence_gradient_grid(w, k, X, grad);
    } else if (grad) {
        evidence_gradient(w, k, X, grad);
        mode_slope(w, k, predicted);
    }
    int finite = isfinite(*log_evidence);
    for (size_t j = 0; grad && j < gpc_kernel_nparams(k); j++)
        finite &= isfinite(grad[j]);
    if (!finite)
        return gpc_fail(GPC_ENUM, "the log evidence or its gradient is not finite at these "
                        "hyperparameters; try values of moderate size");
    return GPC_OK;
}

/* The latent variances on a grid: kss - diag(Ks' sW B^-1 sW Ks), the
 * solves PREDICT_COLUMNS test cases at a time. */
#define PREDICT_COLUMNS 256
static void predict_grid(const gpc_laplace *w, const gsl_matrix *Ks, const gsl_vector *kss,
                         gsl_vector *var)
{
    size_t n = w->n, m = Ks->size2, chunk = m < PREDICT_COLUMNS ? m : PREDICT_COLUMNS;
    double *V = gpc_malloc(gpc_doubles_bytes(n, chunk));
    double *S = gpc_malloc(gpc_doubles_bytes(n, chunk));
    for (size_t j0 = 0; j0 < m; j0 += chunk) {
        size_t nc = m - j0 < chunk ? m - j0 : chunk;
        for (size_t c = 0; c < nc; c++)
            for (size_t i = 0; i < n; i++)
                V[i + c * n] = gsl_vector_get(w->sW, i) * gsl_matrix_get(Ks, i, j0 + c);
        memcpy(S, V, nc * n * sizeof *S);
        gpc_pdense_solve(w->PL, S, nc);
        for (size_t c = 0; c < nc; c++) {
            double v = gsl_vector_get(kss, j0 + c);
            for (size_t i = 0; i < n; i++)
                v -= V[i + c * n] * S[i + c * n];
            gsl_vector_set(var, j0 + c, v > 0.0 ? v : 0.0);
        }
    }
    free(V);
    free(S);
}

void gpc_laplace_predict(const gpc_laplace *w, gsl_matrix *Ks, const gsl_vector *kss,
                         gsl_vector *mean, gsl_vector *var)
{
    gsl_blas_dgemv(CblasTrans, 1.0, Ks, w->d1, 0.0, mean);
    if (w->grid) {
        predict_grid(w, Ks, kss, var);
        return;
    }
    for (size_t i = 0; i < w->n; i++) {
        gsl_vector_view r = gsl_matrix_row(Ks, i);
        gsl_vector_scale(&r.vector, gsl_vector_get(w->sW, i));
    }
    /* V = L^-1 sW Ks; var = kss - column sums of V^2 */
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->L, Ks);
    for (size_t j = 0; j < Ks->size2; j++) {
        gsl_vector_view c = gsl_matrix_column(Ks, j);
        double v = gsl_vector_get(kss, j) - dot(&c.vector, &c.vector);
        gsl_vector_set(var, j, v > 0.0 ? v : 0.0);
    }
}
