#include "methods/softmax.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_qrng.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "liks/lik.h"
#include "linalg/bmatrix.h"

#define MAX_NEWTON 200
#define MAX_HALVINGS 40
/* A full Newton step that raises Psi by less than this (relative) or moves f
 * by less than STEP_TOL ends the search; convergence is quadratic, so the
 * mode is then good to about the square root of it in f and to rounding in
 * the evidence. */
#define PSI_RTOL 1e-12
#define STEP_TOL 1e-10
/* The Newton direction solves S u = r by conjugate gradients to a residual
 * below eta |r|.  r vanishes at the mode with the step, so eta is a
 * relative accuracy of the step itself.  Far from the mode a rough step
 * does as well as an exact one; near it the error must shrink as fast as
 * Newton's own (quadratically), so eta is the mean square of the gradient
 * g = y - pi - K^-1 f in a (whose entries are O(1) far from the mode),
 * between CG_RTOL and CG_RTOL_MAX.  The floor only matters once a step is
 * below about CG_RTOL, where its error is at rounding level: on the bench
 * problem (n = 2000) the mode's residual max |y - pi - K^-1 f| is 1e-15
 * with a floor of 1e-6, 1e-8 or 1e-10 alike (1e-13 with exact steps that
 * solved for the new a rather than for the correction).  A step whose
 * iterations exceed cg_max (a badly conditioned S at extreme
 * hyperparameters) factors S instead. */
#define CG_RTOL 1e-8
#define CG_RTOL_MAX 1e-2
#define CG_MAX 100
/* Tile size for transposing copies (64 x 64 doubles stay in L1/L2). */
#define TILE 64

/* LAPACK through OpenBLAS.  Row-major lower is column-major upper, hence "U". */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len, size_t diag_len);

static gsl_vector_view block(gsl_vector *v, size_t n, size_t c)
{
    return gsl_vector_subvector(v, c * n, n);
}

static _gsl_vector_const_view cblock(const gsl_vector *v, size_t n, size_t c)
{
    return gsl_vector_const_subvector(v, c * n, n);
}

static gsl_matrix *kern(const gpc_softmax *w, size_t c)
{
    return w->K[w->per_class ? c : 0];
}

/* Kept beside gpc_softmax_alloc and ensure_scratch, whose allocations it
 * counts, so that a change to one is seen in the other. */
size_t gpc_softmax_workspace(size_t n, size_t C, size_t nparams, int per_class, int gradient)
{
    size_t Cn = gpc_size_mul(C, n);
    /* the kernels, the C factors (then inverses) of B_c and M; the
     * gradient's M^-1, N and C matrices T_c */
    size_t squares = gpc_size_add(gpc_size_add(per_class ? C : 1, C), 1);
    if (gradient)
        squares = gpc_size_add(squares, gpc_size_add(C, 2));
    size_t bytes = gpc_size_mul(squares, gpc_doubles_bytes(n, n));
    /* f, a, nine scratch vectors and each class's own two, of length Cn;
     * u3, zero and six for the conjugate gradients, of length n; Bg */
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(Cn, 13));
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(n, 8));
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(Cn, nparams > 0 ? nparams : 1));
    if (gradient) /* ref and cols */
        bytes = gpc_size_add(bytes, gpc_size_mul(gpc_size_add(n, Cn), sizeof(size_t)));
    return bytes;
}

gpc_softmax *gpc_softmax_alloc(size_t n, size_t C, size_t nparams, int per_class)
{
    gpc_softmax *w = gpc_calloc(1, sizeof *w);
    size_t Cn = C * n;
    w->n = n;
    w->C = C;
    w->nparams = nparams;
    w->per_class = per_class != 0;
    w->nK = w->per_class ? C : 1;
    w->K = gpc_calloc(w->nK, sizeof *w->K);
    for (size_t k = 0; k < w->nK; k++)
        w->K[k] = gpc_matrix_alloc(n, n);
    w->Binv = gpc_calloc(C, sizeof *w->Binv);
    for (size_t c = 0; c < C; c++)
        w->Binv[c] = gpc_matrix_alloc(n, n);
    w->M = gpc_matrix_alloc(n, n);
    w->f = gpc_vector_calloc(Cn);
    w->a = gpc_vector_calloc(Cn);
    gsl_vector **v[] = {&w->pi, &w->sD, &w->binv_diag, &w->t1, &w->t2,
                        &w->t3, &w->t4, &w->t5, &w->ypi};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        *v[i] = gpc_vector_calloc(Cn);
    w->u3 = gpc_vector_alloc(n);
    w->class_scratch = gpc_vector_alloc(Cn);
    w->class_out = gpc_vector_alloc(Cn);
    w->class_parallel = gpc_parallel_classes(n, C);
    w->zero = gpc_vector_calloc(n);
    gsl_vector **cg[] = {&w->cg_b, &w->cg_x, &w->cg_r, &w->cg_z, &w->cg_p, &w->cg_q};
    for (size_t i = 0; i < sizeof cg / sizeof cg[0]; i++)
        *cg[i] = gpc_vector_calloc(n);
    w->Bg = gpc_matrix_alloc(n, C * (nparams > 0 ? nparams : 1));
    w->cg_max = CG_MAX;
    return w;
}

void gpc_softmax_free(gpc_softmax *w)
{
    if (!w)
        return;
    for (size_t k = 0; k < w->nK; k++)
        gsl_matrix_free(w->K[k]);
    for (size_t c = 0; c < w->C; c++)
        gsl_matrix_free(w->Binv[c]);
    free(w->K);
    free(w->Binv);
    gsl_matrix *m[] = {w->M, w->Minv, w->N, w->Bg};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (m[i])
            gsl_matrix_free(m[i]);
    for (size_t c = 0; w->T && c < w->C; c++)
        gsl_matrix_free(w->T[c]);
    free(w->T);
    free(w->ref);
    free(w->cols);
    gsl_vector *v[] = {w->f,  w->a,  w->pi, w->sD, w->binv_diag, w->t1, w->t2, w->t3,
                       w->t4, w->t5, w->ypi, w->u3, w->zero,
                       w->class_scratch, w->class_out,
                       w->cg_b, w->cg_x, w->cg_r, w->cg_z, w->cg_p, w->cg_q};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        gsl_vector_free(v[i]);
    free(w);
}

static double dot(const gsl_vector *x, const gsl_vector *y)
{
    double r;
    gsl_blas_ddot(x, y, &r);
    return r;
}

/* y'f - sum_i log sum_c exp f_i^c, by log-sum-exp.  With derivs, also the
 * softmax pi, sD = sqrt(pi) and ypi = y - pi at f. */
static double log_lik(gpc_softmax *w, const size_t *cls, const gsl_vector *f, int derivs)
{
    size_t n = w->n, C = w->C;
    const double *fd = f->data;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double mx = fd[i], s = 0.0;
        for (size_t c = 1; c < C; c++)
            mx = fmax(mx, fd[c * n + i]);
        for (size_t c = 0; c < C; c++)
            s += exp(fd[c * n + i] - mx);
        double lse = mx + log(s);
        sum += fd[cls[i] * n + i] - lse;
        if (!derivs)
            continue;
        for (size_t c = 0; c < C; c++) {
            double p = exp(fd[c * n + i] - lse);
            w->pi->data[c * n + i] = p;
            w->sD->data[c * n + i] = sqrt(p);
            w->ypi->data[c * n + i] = (cls[i] == c) - p;
        }
    }
    return sum;
}

/* Factor B_c = I + D_c^1/2 K_c D_c^1/2 for every class into Binv[c] and
 * add sum_c log|L_c| to *hl: C Cholesky equivalents, all a Newton step
 * needs. */
static int factor_B(gpc_softmax *w, double *hl)
{
    size_t C = w->C;
    int info[C];
    w->factor_valid = 0;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel)
    for (size_t c = 0; c < C; c++)
        info[c] = gpc_bmatrix_factor(kern(w, c), w->sD->data + c * w->n, w->Binv[c]);
    w->chol_equiv += C;
    for (size_t c = 0; c < C; c++) {
        if (info[c] != 0)
            return gpc_fail(GPC_ENUM, "B = I + D^1/2 K D^1/2 is not positive definite: the "
                            "kernel matrix is far from positive semi-definite; add a jitter "
                            "term to the kernel (e.g. 'ard+jitter') or try other "
                            "hyperparameters");
        *hl += gpc_bmatrix_half_log_det(w->Binv[c]);
    }
    return GPC_OK;
}

/* The full factorisation at the mode: B_c^-1 for every class, and S =
 * sum_c E_c factored into M, for log|S|, predictions and the gradient.
 * Also 1/2 log|I + K W| = sum_c log|L_c| + log|M|.  3C + 1 Cholesky
 * equivalents: C factors, C inverses from them (2 each) and M. */
static int factor(gpc_softmax *w)
{
    size_t n = w->n;
    double hl = 0.0;
    w->m_valid = 0;
    int status = factor_B(w, &hl);
    if (status != GPC_OK)
        return status;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel)
    for (size_t c = 0; c < w->C; c++)
        gpc_bmatrix_inverse(w->Binv[c]);
    w->chol_equiv += 2 * w->C;
    for (size_t c = 0; c < w->C; c++) {
        const double *sd = w->sD->data + c * n;
        const gsl_matrix *Bi = w->Binv[c];
        for (size_t i = 0; i < n; i++) {
            double *Mi = w->M->data + i * w->M->tda;
            const double *Bri = Bi->data + i * Bi->tda;
            w->binv_diag->data[c * n + i] = Bri[i];
            for (size_t j = 0; j <= i; j++)
                Mi[j] = (c ? Mi[j] : 0.0) + sd[i] * Bri[j] * sd[j];
        }
    }
    int nn = (int)n, lda = (int)w->M->tda, info;
    dpotrf_("U", &nn, w->M->data, &lda, &info, 1);
    w->chol_equiv += 1;
    if (info != 0)
        return gpc_fail(GPC_ENUM, "the matrix sum_c E_c of the softmax Laplace approximation "
                        "is not positive definite; try smaller signal variances");
    w->half_log_det = hl + gpc_bmatrix_half_log_det(w->M);
    w->factor_valid = w->m_valid = 1;
    return GPC_OK;
}

/* y = E_c x for vectors of length n (E_c = D_c^1/2 B_c^-1 D_c^1/2), from
 * B_c^-1 when factor_valid, else by two triangular solves with the factor
 * of B_c; class c's own scratch, so that the classes can run side by side. */
static void apply_E(const gpc_softmax *w, size_t c, const double *x, double *y)
{
    size_t n = w->n;
    const double *sd = w->sD->data + c * n;
    double *u = w->class_scratch->data + c * n;
    for (size_t i = 0; i < n; i++)
        u[i] = x[i] * sd[i];
    gsl_vector_view uv = gsl_vector_view_array(u, n), yv = gsl_vector_view_array(y, n);
    if (w->factor_valid) {
        gsl_blas_dsymv(CblasLower, 1.0, w->Binv[c], &uv.vector, 0.0, &yv.vector);
    } else {
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, w->Binv[c], &uv.vector);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->Binv[c], &uv.vector);
        gsl_vector_memcpy(&yv.vector, &uv.vector);
    }
    for (size_t i = 0; i < n; i++)
        y[i] *= sd[i];
}

/* Block c of y (length Cn) = E_c times block c of x (blocks) or times x
 * itself (length n, !blocks), the classes side by side. */
static void apply_E_classes(const gpc_softmax *w, const double *x, int blocks, double *y)
{
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel)
    for (size_t c = 0; c < w->C; c++)
        apply_E(w, c, x + (blocks ? c * w->n : 0), y + c * w->n);
}

/* y = sum_c of the blocks of v (length Cn), in class order. */
static void sum_classes(const gpc_softmax *w, const gsl_vector *v, gsl_vector *y)
{
    gsl_vector_const_view v0 = cblock(v, w->n, 0);
    gsl_vector_memcpy(y, &v0.vector);
    for (size_t c = 1; c < w->C; c++) {
        gsl_vector_const_view vc = cblock(v, w->n, c);
        gsl_vector_add(y, &vc.vector);
    }
}

/* y = S x = sum_c E_c x (length n). */
static void apply_S(const gpc_softmax *w, const gsl_vector *x, gsl_vector *y)
{
    apply_E_classes(w, x->data, 0, w->class_out->data);
    sum_classes(w, w->class_out, y);
}

/* z = P x with P = I + K / C (per-class kernels: I + sum_c K_c / C^2),
 * which stands in for S^-1 as the preconditioner.  S = sum_c
 * (K_c + D_c^-1)^-1 is close to I along the eigenvectors of K with small
 * eigenvalues and to C K^-1 along those with large ones (the smooth
 * directions, where every class with pi_c >> 1 / lambda counts), so the
 * preconditioned spectrum stays within about [1/C, 1] however large K is; at
 * f = 0 with a shared kernel P is S^-1 exactly.  A P that follows the pi
 * case by case (I + sum_c D_c K D_c) mixes the smooth directions and needs
 * twice the iterations.  After a previous mode, S^-1 there (from its factor
 * M) is closer still: a search that starts near the old mode needs half
 * the iterations of I + K / C (10 against 23 per step in HMC on forensic
 * glass). */
static void precondition(const gpc_softmax *w, const gsl_vector *x, gsl_vector *z)
{
    if (w->has_mode && w->m_valid) {
        gsl_vector_memcpy(z, x);
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, w->M, z);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->M, z);
        return;
    }
    double s = 1.0 / (double)(w->C * (w->per_class ? w->C : 1));
    gsl_vector_memcpy(z, x);
    for (size_t k = 0; k < w->nK; k++)
        gsl_blas_dsymv(CblasLower, s, w->K[k], x, 1.0, z);
}

/* x = S^-1 r by preconditioned conjugate gradients from x = 0, to a
 * residual below eta |r|.  Returns nonzero after w->cg_max iterations or if
 * S stops looking positive definite (or a number is not finite).  When the recurrence says it has
 * converged, the residual is recomputed from x (one more product with S)
 * and the iteration restarts from it if drift had made it look better than
 * it is. */
static int solve_S(gpc_softmax *w, const gsl_vector *r, double eta, gsl_vector *x)
{
    gsl_vector *res = w->cg_r, *z = w->cg_z, *p = w->cg_p, *q = w->cg_q;
    double tol = eta * gsl_blas_dnrm2(r);
    int it = 0;
    gsl_vector_set_zero(x);
    gsl_vector_memcpy(res, r);
    while (!(gsl_blas_dnrm2(res) <= tol)) { /* so that NaN goes on to fail */
        precondition(w, res, z);
        double rz = dot(res, z);
        gsl_vector_memcpy(p, z);
        do {
            if (it++ >= w->cg_max)
                return 1;
            apply_S(w, p, q);
            double pq = dot(p, q);
            if (!(pq > 0.0))
                return 1;
            gsl_blas_daxpy(rz / pq, p, x);
            gsl_blas_daxpy(-rz / pq, q, res);
            precondition(w, res, z);
            double rz_next = dot(res, z);
            gsl_vector_scale(p, rz_next / rz);
            gsl_vector_add(p, z);
            rz = rz_next;
            w->cg_iterations++;
        } while (!(gsl_blas_dnrm2(res) <= tol));
        apply_S(w, x, res);
        gsl_vector_sub(res, r);
        gsl_vector_scale(res, -1.0);
    }
    return 0;
}

/* y = (K + W^-1)^-1 x = E x - E R S^-1 R' E x (length Cn), with S^-1 from
 * M when factor_valid, else by conjugate gradients to relative accuracy eta
 * (nonzero if they did not converge). */
static int apply_R(gpc_softmax *w, const gsl_vector *x, double eta, gsl_vector *y)
{
    gsl_vector *r = w->cg_b, *s = w->cg_x;
    apply_E_classes(w, x->data, 1, y->data);
    sum_classes(w, y, r);
    if (w->factor_valid) {
        gsl_vector_memcpy(s, r);
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, w->M, s);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->M, s);
    } else if (solve_S(w, r, eta, s) != 0) {
        return 1;
    }
    apply_E_classes(w, s->data, 0, w->class_out->data);
    gsl_vector_sub(y, w->class_out);
    return 0;
}

/* y = K x, class by class (length Cn). */
static void apply_K(const gpc_softmax *w, const gsl_vector *x, gsl_vector *y)
{
    for (size_t c = 0; c < w->C; c++) {
        gsl_vector_const_view xc = cblock(x, w->n, c);
        gsl_vector_view yc = block(y, w->n, c);
        gsl_blas_dsymv(CblasLower, 1.0, kern(w, c), &xc.vector, 0.0, &yc.vector);
    }
}

/* Newton direction (Algorithm 3.3) as a correction: with g = y - pi - a,
 * the gradient of Psi in a, the step is da = (I + W K)^-1 g
 * = g - (K + W^-1)^-1 K g, which vanishes at the mode (so the solver's
 * relative tolerance is one on the step).  Leaves da in t3 and K da in t4.
 * Nonzero if the conjugate gradients did not converge. */
static int newton_direction(gpc_softmax *w)
{
    gsl_vector_memcpy(w->t1, w->ypi);
    gsl_vector_sub(w->t1, w->a);
    double eta = dot(w->t1, w->t1) / (double)w->t1->size;
    eta = fmin(CG_RTOL_MAX, fmax(CG_RTOL, eta));
    apply_K(w, w->t1, w->t2);
    if (apply_R(w, w->t2, eta, w->t3) != 0)
        return 1;
    gsl_vector_sub(w->t3, w->t1);
    gsl_vector_scale(w->t3, -1.0);
    apply_K(w, w->t3, w->t4);
    return 0;
}

/* Move along (da, K da) with step halving until Psi does not fall.  Returns
 * 1 when the search has converged: a full step gained less than the
 * tolerance or hardly moved f, or no step length gains anything. */
static int line_search(gpc_softmax *w, const size_t *cls)
{
    gsl_vector *ft = w->t1, *at = w->t2;
    double tol = PSI_RTOL * fmax(1.0, fabs(w->psi));
    double step = fabs(w->t4->data[gsl_blas_idamax(w->t4)]);
    for (int h = 0; h < MAX_HALVINGS; h++) {
        double t = ldexp(1.0, -h);
        gsl_vector_memcpy(ft, w->f);
        gsl_blas_daxpy(t, w->t4, ft);
        gsl_vector_memcpy(at, w->a);
        gsl_blas_daxpy(t, w->t3, at);
        double psi_t = log_lik(w, cls, ft, 0) - 0.5 * dot(at, ft);
        if (psi_t >= w->psi - tol) {
            double gain = psi_t - w->psi;
            gsl_vector_memcpy(w->f, ft);
            gsl_vector_memcpy(w->a, at);
            w->psi = log_lik(w, cls, w->f, 1) - 0.5 * dot(w->a, w->f);
            return h == 0 && (gain < tol || step < STEP_TOL);
        }
    }
    return 1;
}

/* One Newton step from the previous mode f (still in w->f) under the new
 * kernel, written in full rather than as a correction since K^-1 f is not
 * known: a = (I + W K)^-1 b with b = W f + y - pi, then f = K a.  The solve
 * may be rough: the pair (f, a) is consistent whatever its accuracy, and
 * the corrections that follow refine it.  Leaves the candidate's a in t1
 * and f in t2 and returns its Psi (-inf if the step failed). */
static double step_from_previous_mode(gpc_softmax *w, const size_t *cls)
{
    size_t n = w->n, C = w->C;
    double hl = 0.0;
    log_lik(w, cls, w->f, 1);
    if (factor_B(w, &hl) != GPC_OK)
        return -INFINITY;
    const double *p = w->pi->data, *f = w->f->data, *ypi = w->ypi->data;
    double *b = w->t3->data;
    for (size_t i = 0; i < n; i++) {
        double pf = 0.0; /* (W f)_i = pi_i o (f_i - pi_i' f_i) */
        for (size_t c = 0; c < C; c++)
            pf += p[c * n + i] * f[c * n + i];
        for (size_t c = 0; c < C; c++)
            b[c * n + i] = p[c * n + i] * (f[c * n + i] - pf) + ypi[c * n + i];
    }
    apply_K(w, w->t3, w->t4);
    if (apply_R(w, w->t4, CG_RTOL_MAX, w->t5) != 0)
        return -INFINITY;
    gsl_vector_memcpy(w->t1, w->t3);
    gsl_vector_sub(w->t1, w->t5);
    apply_K(w, w->t1, w->t2);
    return log_lik(w, cls, w->t2, 0) - 0.5 * dot(w->t1, w->t2);
}

/* The starting point: f = 0 or, after a previous mode, the best of f = 0,
 * f = K a with the previous a, and one Newton step from the previous f.
 * When the kernel has changed a little (a step of HMC or of the optimiser),
 * the last is much the closest to the new mode: a change of scale moves
 * K a away from it by as much as the scale changes. */
static void start_point(gpc_softmax *w, const size_t *cls)
{
    double psi0 = -(double)w->n * log((double)w->C); /* Psi at f = 0 */
    if (w->has_mode) {
        double psi_step = step_from_previous_mode(w, cls);
        apply_K(w, w->a, w->f);
        w->psi = log_lik(w, cls, w->f, 0) - 0.5 * dot(w->a, w->f);
        if (psi_step > w->psi) {
            gsl_vector_memcpy(w->a, w->t1);
            gsl_vector_memcpy(w->f, w->t2);
            w->psi = psi_step;
        }
        if (w->psi >= psi0) {
            log_lik(w, cls, w->f, 1);
            return;
        }
    }
    gsl_vector_set_zero(w->a);
    gsl_vector_set_zero(w->f);
    w->psi = log_lik(w, cls, w->f, 1);
}

static int check_input(const gpc_softmax *w, const size_t *cls)
{
    for (size_t i = 0; i < w->n; i++)
        if (cls[i] >= w->C)
            return gpc_fail(GPC_EUSAGE, "class index %zu of case %zu is not below the number "
                            "of classes %zu", cls[i], i + 1, w->C);
    /* Kernel values that overflowed would turn every later number into NaN;
     * the diagonal bounds the rest (|K_ij|^2 <= K_ii K_jj). */
    for (size_t k = 0; k < w->nK; k++)
        for (size_t i = 0; i < w->n; i++)
            if (!isfinite(gsl_matrix_get(w->K[k], i, i)))
                return gpc_fail(GPC_ENUM, "the kernel matrix overflows: the hyperparameters "
                                "are too large (their logs should stay well below 700)");
    return GPC_OK;
}

int gpc_softmax_mode(gpc_softmax *w, const size_t *cls)
{
    int converged = 0, status;
    w->factor_valid = 0;
    gpc_parallel_blas(w->class_parallel ? 0 : w->n); /* side by side: one thread each */
    if ((status = check_input(w, cls)) != GPC_OK)
        return status;
    start_point(w, cls);
    for (w->iterations = 0; !converged; w->iterations++) {
        if (w->iterations == MAX_NEWTON)
            return gpc_fail(GPC_ENUM, "Newton's method for the softmax Laplace mode did not "
                            "converge in %d iterations; try other hyperparameters",
                            MAX_NEWTON);
        double hl = 0.0;
        if ((status = factor_B(w, &hl)) != GPC_OK)
            return status;
        if (newton_direction(w) != 0) {
            /* the conjugate gradients stalled: factor S and solve exactly */
            if ((status = factor(w)) != GPC_OK)
                return status;
            newton_direction(w);
        }
        converged = line_search(w, cls);
        w->n_newton++;
    }
    if ((status = factor(w)) != GPC_OK)
        return status;
    w->log_evidence = w->psi - w->half_log_det;
    w->has_mode = 1;
    return GPC_OK;
}

int gpc_softmax_set_mode(gpc_softmax *w, const size_t *cls, const gsl_vector *f)
{
    int status;
    gpc_parallel_blas(w->class_parallel ? 0 : w->n); /* side by side: one thread each */
    if ((status = check_input(w, cls)) != GPC_OK)
        return status;
    gsl_vector_memcpy(w->f, f);
    double ll = log_lik(w, cls, w->f, 1);
    gsl_vector_memcpy(w->a, w->ypi); /* at the mode, K^-1 f = y - pi */
    w->psi = ll - 0.5 * dot(w->a, w->f);
    if ((status = factor(w)) != GPC_OK)
        return status;
    w->log_evidence = w->psi - w->half_log_det;
    w->has_mode = 1;
    return GPC_OK;
}

/* ---- gradient (Algorithm 5.2) ----
 *
 * Everything comes from T_c = M^-1 E_c, one n x n matrix per class:
 *   the block (K + W^-1)^-1_cc = E_c - E_c S^-1 E_c = E_c - T_c' T_c, and
 *   the diagonals that s2 needs, through Z_c = M^-1 D_c^1/2 B_c^-1 (T_c =
 *   Z_c D_c^1/2) and V_c = M^-1 D_c^1/2 - Z_c (see class_columns).
 * Two identities save a class of each kind of O(n^3) work:
 *   sum_c T_c = M^-1 S = M', so for every case i one column of the C
 *   triangular solves follows from the others.  It is the class with the
 *   largest pi_c at case i, because recovering Z_c e_i divides T_c e_i by
 *   sqrt(pi_c), which is then at least 1/sqrt(C);
 *   with a shared kernel only sum_c T_c' T_c is needed, the Gram matrix of
 *   the stacked T (Cn x n); it is unchanged by an orthogonal transform U
 *   across the classes, and with U's first column 1/sqrt(C) that transform's
 *   first block is M'/sqrt(C), whose Gram matrix S/C is known. */

static void ensure_scratch(gpc_softmax *w)
{
    if (w->Minv)
        return;
    w->Minv = gpc_matrix_alloc(w->n, w->n);
    w->N = gpc_matrix_alloc(w->n, w->n);
    w->T = gpc_calloc(w->C, sizeof *w->T);
    for (size_t c = 0; c < w->C; c++)
        w->T[c] = gpc_matrix_alloc(w->n, w->n);
    w->ref = gpc_calloc(w->n, sizeof *w->ref);
    w->cols = gpc_calloc(w->C * w->n, sizeof *w->cols);
}

/* Minv = M^-1 (lower, zeros above) and N = M^-1 - M', whose column i is
 * M^-1 (I - S) e_i = M^-1 sum_b E_b K_b D_b e_i (since E K D = D - E);
 * eps[i] = |N e_i|^2. */
static void inverse_terms(gpc_softmax *w, double *eps)
{
    size_t n = w->n;
    gsl_matrix *Mi = w->Minv, *N = w->N;
    gsl_matrix_memcpy(Mi, w->M);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            gsl_matrix_set(Mi, i, j, 0.0);
    int nn = (int)n, lda = (int)Mi->tda, info;
    dtrtri_("U", "N", &nn, Mi->data, &lda, &info, 1, 1);
    w->chol_equiv += 1;
    gsl_matrix_memcpy(N, Mi);
    for (size_t i0 = 0; i0 < n; i0 += TILE) /* N -= M', in tiles */
        for (size_t j0 = 0; j0 <= i0; j0 += TILE)
            for (size_t i = i0; i < n && i < i0 + TILE; i++) {
                const double *Mri = w->M->data + i * w->M->tda;
                for (size_t j = j0; j <= i && j < j0 + TILE; j++)
                    N->data[j * N->tda + i] -= Mri[j];
            }
    for (size_t i = 0; i < n; i++)
        eps[i] = 0.0;
    for (size_t k = 0; k < n; k++) {
        const double *Nk = N->data + k * N->tda;
        for (size_t i = 0; i < n; i++)
            eps[i] += Nk[i] * Nk[i];
    }
}

/* ref[i] = the class with the largest pi at case i. */
static void reference_classes(gpc_softmax *w)
{
    size_t n = w->n;
    const double *p = w->pi->data;
    for (size_t i = 0; i < n; i++) {
        w->ref[i] = 0;
        for (size_t c = 1; c < w->C; c++)
            if (p[c * n + i] > p[w->ref[i] * n + i])
                w->ref[i] = c;
    }
}

/* One term (row k) of the sums over k that give, with
 * V_c = M^-1 D_c^1/2 - Z_c = M^-1 D_c^1/2 (I - B_c^-1),
 *   gam[i] = |V_c e_i|^2 and del[i] = (V_c e_i)'(N e_i),
 * pi_i^c times the (i,i) entry of the low-rank part of Sigma =
 * (K^-1 + W)^-1 in block (c,c) and of block row c times pi (del is scaled
 * by sqrt(pi_i^c) once complete): mik = (M^-1)_ki, sd = sqrt(pi_i^c),
 * z = (Z_c)_ki, nki = N_ki. */
static inline void add_diag(double mik, double sd, double z, double nki, double *gam,
                            double *del)
{
    double v = mik * sd - z;
    *gam += v * v;
    *del += v * nki;
}

/* T_c = M^-1 E_c in T[c], except in the columns of the cases whose
 * reference class is c (left for reference_columns), and those columns' gam
 * and del: a triangular solve with the (n - m) other columns only. */
static void class_columns(gpc_softmax *w, size_t c, double *gam, double *del)
{
    size_t n = w->n, m = 0, *cols = w->cols + c * n;
    const double *sd = w->sD->data + c * n;
    const gsl_matrix *Bi = w->Binv[c];
    gsl_matrix *T = w->T[c];
    for (size_t i = 0; i < n; i++)
        if (w->ref[i] != c)
            cols[m++] = i;
    if (m == 0)
        return;
    /* D_c^1/2 B_c^-1, both triangles from the lower one in tiles (so that
     * the transposed writes stay in cache), then those columns gathered to
     * the left of each row (cols[j] >= j, so in place) */
    for (size_t i0 = 0; i0 < n; i0 += TILE)
        for (size_t j0 = 0; j0 <= i0; j0 += TILE)
            for (size_t i = i0; i < n && i < i0 + TILE; i++) {
                const double *Bri = Bi->data + i * Bi->tda;
                for (size_t j = j0; j <= i && j < j0 + TILE; j++) {
                    T->data[i * T->tda + j] = sd[i] * Bri[j];
                    T->data[j * T->tda + i] = sd[j] * Bri[j];
                }
            }
    for (size_t k = 0; k < n; k++) {
        double *Tk = T->data + k * T->tda;
        for (size_t j = 0; j < m; j++)
            Tk[j] = Tk[cols[j]];
    }
    gsl_matrix_view Z = gsl_matrix_submatrix(T, 0, 0, n, m);
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->M, &Z.matrix);
    /* back to natural order, row by row, as T = Z D^1/2 */
    double *row = w->class_scratch->data + c * n;
    for (size_t k = 0; k < n; k++) {
        double *Tk = T->data + k * T->tda;
        const double *Mk = w->Minv->data + k * w->Minv->tda, *Nk = w->N->data + k * w->N->tda;
        for (size_t j = 0; j < m; j++)
            row[j] = Tk[j];
        for (size_t i = 0; i < n; i++)
            Tk[i] = 0.0;
        for (size_t j = 0; j < m; j++) {
            size_t i = cols[j];
            add_diag(Mk[i], sd[i], row[j], Nk[i], gam + i, del + i);
            Tk[i] = row[j] * sd[i];
        }
    }
}

/* The columns left out by class_columns: for a case i with reference class
 * a, T_a e_i = M' e_i - sum_{c != a} T_c e_i and Z_a e_i = T_a e_i /
 * sqrt(pi_a) (pi_a >= 1/C), with M' e_i = (M^-1 - N) e_i read by rows. */
static void reference_columns(gpc_softmax *w, double *gam, double *del)
{
    size_t n = w->n, C = w->C;
    for (size_t k = 0; k < n; k++) {
        const double *Mk = w->Minv->data + k * w->Minv->tda, *Nk = w->N->data + k * w->N->tda;
        for (size_t i = 0; i < n; i++) {
            size_t a = w->ref[i];
            double t = Mk[i] - Nk[i];
            for (size_t c = 0; c < C; c++)
                if (c != a)
                    t -= w->T[c]->data[k * w->T[c]->tda + i];
            w->T[a]->data[k * w->T[a]->tda + i] = t;
            double sd = w->sD->data[a * n + i];
            add_diag(Mk[i], sd, t / sd, Nk[i], gam + a * n + i, del + a * n + i);
        }
    }
}

/* gam, del (length Cn) and eps (length n) for mode_derivative, and T_c =
 * M^-1 E_c for every class: M^-1 (1 Cholesky equivalent) and triangular
 * solves with (C - 1) n columns in all (3 (C - 1)). */
static void gradient_terms(gpc_softmax *w, double *gam, double *del, double *eps)
{
    size_t n = w->n, C = w->C;
    inverse_terms(w, eps);
    reference_classes(w);
    for (size_t i = 0; i < C * n; i++)
        gam[i] = del[i] = 0.0;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel)
    for (size_t c = 0; c < C; c++)
        class_columns(w, c, gam + c * n, del + c * n);
    w->chol_equiv += 3 * (C - 1);
    reference_columns(w, gam, del);
    for (size_t i = 0; i < C * n; i++)
        del[i] *= w->sD->data[i];
}

/* R += scale * E_c (lower triangle). */
static void add_E(const gpc_softmax *w, size_t c, double scale, gsl_matrix *R)
{
    size_t n = w->n;
    const double *sd = w->sD->data + c * n;
    const gsl_matrix *Bi = w->Binv[c];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++)
            R->data[i * R->tda + j] += scale * sd[i] * Bi->data[i * Bi->tda + j] * sd[j];
}

/* With a shared kernel: -1/2 sum_c (K + W^-1)^-1_cc = -1/2 (S - sum_c T_c'
 * T_c) = -1/2 (1 - 1/C) S + 1/2 sum_{k >= 2} Tk' Tk with Tk = sum_c U_ck T_c
 * and U = I - 2 v v' / v'v, v = e_1 - 1/sqrt(C), the reflection whose first
 * column is 1/sqrt(C) (so T1 = M' / sqrt(C)): C - 1 rank-n updates
 * (3 (C - 1) Cholesky equivalents).  The result goes to T[0], which the
 * transform frees, with N (no longer needed) as scratch. */
static gsl_matrix *shared_R(gpc_softmax *w)
{
    size_t n = w->n, C = w->C;
    double r = 1.0 / sqrt((double)C), vv = 2.0 - 2.0 * r, v0 = 1.0 - r;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel)
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < n; i++) {
            double t[C], vt = 0.0;
            for (size_t c = 0; c < C; c++) {
                t[c] = w->T[c]->data[k * w->T[c]->tda + i];
                vt += (c ? -r : v0) * t[c];
            }
            for (size_t c = 1; c < C; c++) /* U_kc = delta_kc - 2 v_k v_c / v'v */
                w->T[c]->data[k * w->T[c]->tda + i] = t[c] + 2.0 * r * vt / vv;
        }
    /* two halves, summed apart (side by side when the classes run in
     * parallel) and then together, the same sums however many threads */
    gsl_matrix *R = w->T[0], *R2 = w->N;
    size_t half = 1 + (C - 1) / 2;
#pragma omp parallel sections num_threads(gpc_parallel_threads()) if (w->class_parallel)
    {
#pragma omp section
        {
            gsl_matrix_set_zero(R);
            for (size_t c = 0; c < C; c++)
                add_E(w, c, -0.5 * (1.0 - 1.0 / (double)C), R);
            for (size_t c = 1; c < half; c++)
                gsl_blas_dsyrk(CblasLower, CblasTrans, 0.5, w->T[c], 1.0, R);
        }
#pragma omp section
        {
            gsl_matrix_set_zero(R2);
            for (size_t c = half; c < C; c++)
                gsl_blas_dsyrk(CblasLower, CblasTrans, 0.5, w->T[c], 1.0, R2);
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++)
            R->data[i * R->tda + j] += R2->data[i * R2->tda + j];
    w->chol_equiv += 3 * (C - 1);
    return R;
}

/* With per-class kernels: R = (K + W^-1)^-1_cc = E_c - T_c' T_c (a rank-n
 * update, 3), in Minv (no longer needed). */
static gsl_matrix *class_R(gpc_softmax *w, size_t c)
{
    gsl_matrix *R = w->Minv;
    gsl_matrix_set_zero(R);
    add_E(w, c, 1.0, R);
    gsl_blas_dsyrk(CblasLower, CblasTrans, -1.0, w->T[c], 1.0, R);
    w->chol_equiv += 3;
    return R;
}

/* s2 = d(-1/2 log|I + K W|)/df at the mode, from the per-case C x C blocks
 * Sigma_i of Sigma = (K^-1 + W)^-1: with W_i = diag(pi) - pi pi',
 * d log|I + KW| / d f^c = tr(Sigma_i dW_i/df^c)
 *   = pi^c Sigma_cc - pi^c sum_a pi^a Sigma_aa - 2 pi^c (Sigma pi)_c
 *     + 2 pi^c pi' Sigma pi.
 * Sigma = (K^-1 + D)^-1 + low rank; the first part enters only as
 * pi^c (K_c^-1 + D_c)^-1_ii = 1 - (B_c^-1)_ii, so nothing divides by pi.
 * gam, del come from gradient_terms; eps[i] = |N e_i|^2 = pi' Sigma_low pi. */
static void mode_derivative(gpc_softmax *w, const double *gam, const double *del,
                            const double *eps, double *s2)
{
    size_t n = w->n, C = w->C;
    const double *p = w->pi->data, *bd = w->binv_diag->data;
    for (size_t i = 0; i < n; i++) {
        double sum_diag = 0.0, quad = eps[i];
        for (size_t a = 0; a < C; a++) {
            double beta = 1.0 - bd[a * n + i];
            sum_diag += beta + gam[a * n + i];
            quad += p[a * n + i] * beta;
        }
        for (size_t c = 0; c < C; c++) {
            size_t ic = c * n + i;
            double beta = 1.0 - bd[ic];
            double g = beta + gam[ic] - p[ic] * sum_diag - 2.0 * (p[ic] * beta + del[ic]) +
                       2.0 * p[ic] * quad;
            s2[ic] = -0.5 * g;
        }
    }
}

/* Algorithm 5.2: grad_j = 1/2 a' dK_j a - 1/2 sum_c tr(R_cc dK_j,c)
 * + z' dK_j (y - pi), with z = (I + W K)^-1 s2 = s2 - (K + W^-1)^-1 K s2 the
 * implicit part through the mode.  Per-class kernels contract block c with
 * kernel c; a shared kernel contracts the sum over classes once, every term
 * folded into one symmetric matrix.  6C - 5 Cholesky equivalents with a
 * shared kernel, 6C - 2 with per-class kernels. */
static void evidence_gradient(gpc_softmax *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                              double *grad)
{
    size_t n = w->n, C = w->C, p = w->nparams;
    double *gam = w->t1->data, *del = w->t2->data, *eps = w->u3->data;
    ensure_scratch(w);
    gradient_terms(w, gam, del, eps);
    mode_derivative(w, gam, del, eps, w->t5->data);
    gsl_matrix *R = NULL;
    if (!w->per_class)
        R = shared_R(w);
    for (size_t c = 0; c < C && w->per_class; c++) {
        R = class_R(w, c);
        gsl_vector_view ac = block(w->a, n, c), vc = block(w->ypi, n, c);
        gsl_matrix_view Bc = gsl_matrix_submatrix(w->Bg, 0, c * p, n, p);
        gpc_kernel_grad_contract(kernels[c], X, kern(w, c), &ac.vector, 0.5, R, -0.5,
                                 &vc.vector, grad + c * p, &Bc.matrix);
    }
    apply_K(w, w->t5, w->t1);
    apply_R(w, w->t1, 0.0, w->t2);
    gsl_vector_memcpy(w->t4, w->t5);
    gsl_vector_sub(w->t4, w->t2); /* z */
    for (size_t c = 0; c < C && w->per_class; c++) {
        gsl_vector_view zc = block(w->t4, n, c);
        gsl_matrix_view Bc = gsl_matrix_submatrix(w->Bg, 0, c * p, n, p);
        gsl_vector_view g = gsl_vector_view_array(grad + c * p, p);
        gsl_blas_dgemv(CblasTrans, 1.0, &Bc.matrix, &zc.vector, 1.0, &g.vector);
    }
    if (!w->per_class) {
        /* R += 1/2 sum_c (a_c a_c' + z_c v_c' + v_c z_c'), the classes as the
         * rows of C x n matrices: one pass over R instead of 2C */
        gsl_matrix_view A = gsl_matrix_view_vector(w->a, C, n),
                        Z = gsl_matrix_view_vector(w->t4, C, n),
                        V = gsl_matrix_view_vector(w->ypi, C, n);
        gsl_blas_dsyrk(CblasLower, CblasTrans, 0.5, &A.matrix, 1.0, R);
        gsl_blas_dsyr2k(CblasLower, CblasTrans, 0.5, &Z.matrix, &V.matrix, 1.0, R);
        gsl_matrix_view B0 = gsl_matrix_submatrix(w->Bg, 0, 0, n, p);
        gpc_kernel_grad_contract(kernels[0], X, kern(w, 0), w->zero, 0.0, R, 1.0, w->zero,
                                 grad, &B0.matrix);
    }
}

int gpc_softmax_evidence(gpc_softmax *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                         const size_t *cls, double *log_evidence, double *grad)
{
    int status;
    for (size_t k = 0; k < w->nK; k++) {
        if (gpc_kernel_nparams(kernels[k]) != w->nparams)
            return gpc_fail(GPC_EUSAGE, "kernel %zu has %zu hyperparameters, the softmax "
                            "workspace expects %zu", k + 1, gpc_kernel_nparams(kernels[k]),
                            w->nparams);
        gpc_kernel_matrix(kernels[k], X, w->K[k]);
    }
    if ((status = gpc_softmax_mode(w, cls)) != GPC_OK)
        return status;
    *log_evidence = w->log_evidence;
    size_t ng = w->nparams * w->nK;
    if (grad && w->nparams > 0)
        evidence_gradient(w, kernels, X, grad);
    int finite = isfinite(*log_evidence);
    for (size_t j = 0; grad && j < ng; j++)
        finite &= isfinite(grad[j]);
    if (!finite)
        return gpc_fail(GPC_ENUM, "the log evidence or its gradient is not finite at these "
                        "hyperparameters; try values of moderate size");
    return GPC_OK;
}

/* ---- predictions (Algorithm 3.4) ---- */

void gpc_softmax_plugin(size_t C, const double *mu, double *p)
{
    double mx = mu[0], s = 0.0;
    for (size_t c = 1; c < C; c++)
        mx = fmax(mx, mu[c]);
    for (size_t c = 0; c < C; c++)
        s += (p[c] = exp(mu[c] - mx));
    for (size_t c = 0; c < C; c++)
        p[c] /= s;
}

gpc_softmax_rule *gpc_softmax_rule_alloc(size_t C)
{
    gpc_softmax_rule *r = gpc_malloc(sizeof *r);
    r->C = C;
    r->N = C == 2 ? 0 : GPC_SOFTMAX_QMC_MAX;
    r->z = gpc_mallocarray(r->N * C + 1, sizeof *r->z);
    if (r->N == 0)
        return r;
    /* GSL's Sobol sequence (up to 40 dimensions) starts at (1/2, ..., 1/2)
     * and never returns 0 or 1, so every point maps to a finite deviate. */
    gsl_qrng *q = gsl_qrng_alloc(C <= 40 ? gsl_qrng_sobol : gsl_qrng_halton, (unsigned)C);
    if (!q)
        gpc_out_of_memory(C * sizeof(double));
    for (size_t k = 0; k < r->N; k++) {
        double *zk = r->z + k * C;
        gsl_qrng_get(q, zk);
        for (size_t c = 0; c < C; c++)
            zk[c] = gsl_cdf_ugaussian_Pinv(zk[c]);
    }
    gsl_qrng_free(q);
    return r;
}

void gpc_softmax_rule_free(gpc_softmax_rule *r)
{
    if (!r)
        return;
    free(r->z);
    free(r);
}

/* A with A A' = Sigma along the principal axes, largest variance first (in
 * row-major C x C).  GPC_ENUM for a clearly negative eigenvalue. */
static int principal_root(size_t C, const double *Sigma, double *A)
{
    gsl_matrix *S = gpc_matrix_alloc(C, C), *V = gpc_matrix_alloc(C, C);
    gsl_vector *lam = gpc_vector_alloc(C);
    double scale = 0.0;
    for (size_t i = 0; i < C * C; i++)
        S->data[(i / C) * S->tda + i % C] = Sigma[i];
    for (size_t c = 0; c < C; c++)
        scale = fmax(scale, fabs(Sigma[c * C + c]));
    gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc(C);
    if (!ws)
        gpc_out_of_memory(C * sizeof(double));
    gsl_eigen_symmv(S, lam, V, ws);
    gsl_eigen_symmv_free(ws);
    gsl_eigen_symmv_sort(lam, V, GSL_EIGEN_SORT_VAL_DESC);
    int status = GPC_OK;
    for (size_t c = 0; c < C; c++) {
        double l = gsl_vector_get(lam, c);
        if (l < -1e-8 * scale - 1e-300 || !isfinite(l))
            status = gpc_fail(GPC_ENUM, "a latent predictive covariance is not positive "
                              "semi-definite (eigenvalue %g)", l);
        double s = l > 0.0 ? sqrt(l) : 0.0;
        for (size_t i = 0; i < C; i++)
            A[i * C + c] = gsl_matrix_get(V, i, c) * s;
    }
    gsl_matrix_free(S);
    gsl_matrix_free(V);
    gsl_vector_free(lam);
    return status;
}

int gpc_softmax_expect(const gpc_softmax_rule *r, const double *mu, const double *Sigma,
                       double *p)
{
    size_t C = r->C;
    if (C == 2) {
        double var = Sigma[0] + Sigma[3] - Sigma[1] - Sigma[2];
        if (!(var >= -1e-8 * (fabs(Sigma[0]) + fabs(Sigma[3])) - 1e-300))
            return gpc_fail(GPC_ENUM, "a latent predictive covariance is not positive "
                            "semi-definite");
        p[0] = gpc_lik_predict(GPC_LIK_LOGISTIC, mu[0] - mu[1], fmax(var, 0.0));
        p[1] = 1.0 - p[0];
        return GPC_OK;
    }
    double *A = gpc_mallocarray(C * C + 5 * C, sizeof *A);
    double *f = A + C * C, *q = f + C, *dev = q + C, *sum = dev + C, *prev = sum + C;
    int status = principal_root(C, Sigma, A);
    for (size_t c = 0; c < C; c++)
        sum[c] = prev[c] = 0.0;
    size_t level = GPC_SOFTMAX_QMC_MIN + 1;
    for (size_t k = 0; status == GPC_OK && k < r->N; k++) {
        const double *z = r->z + k * C;
        for (size_t i = 0; i < C; i++) {
            double s = 0.0;
            for (size_t j = 0; j < C; j++)
                s += A[i * C + j] * z[j];
            dev[i] = s;
        }
        for (int sign = -1; sign <= 1; sign += 2) {
            for (size_t i = 0; i < C; i++)
                f[i] = mu[i] + sign * dev[i];
            gpc_softmax_plugin(C, f, q);
            for (size_t c = 0; c < C; c++)
                sum[c] += q[c];
        }
        if (k + 2 != level) /* prefixes of 2^j - 1 points */
            continue;
        /* The change since the previous (half as long) prefix bounds the
         * error of that prefix; stop once it is small. */
        double change = 0.0;
        for (size_t c = 0; c < C; c++) {
            double est = sum[c] / (2.0 * (double)(k + 1));
            change = fmax(change, fabs(est - prev[c]));
            prev[c] = est;
        }
        if (level > GPC_SOFTMAX_QMC_MIN + 1 && change < GPC_SOFTMAX_QMC_TOL)
            break;
        level *= 2;
    }
    for (size_t c = 0; c < C; c++)
        p[c] = prev[c];
    free(A);
    return status;
}

/* Latent mean and covariance of one block of test cases [j0, j0 + m):
 * mean_c = k_c*' (y_c - pi_c), cov_ab = delta_ab (k_a** - k_a*' E_a k_a*)
 * + (M^-1 E_a k_a*)'(M^-1 E_b k_b*). */
static void predict_block(const gpc_softmax *w, const gsl_matrix *const *Ks,
                          const gsl_vector *const *kss, size_t j0, size_t m,
                          gsl_matrix **Q, gsl_matrix *P, gsl_matrix *mean, double *cov)
{
    size_t n = w->n, C = w->C;
    for (size_t c = 0; c < C; c++) {
        size_t k = w->per_class ? c : 0;
        gsl_matrix_const_view Kc = gsl_matrix_const_submatrix(Ks[k], 0, j0, n, m);
        gsl_vector_const_view v = cblock(w->ypi, n, c);
        gsl_vector_view mc = gsl_matrix_subcolumn(mean, c, j0, m);
        gsl_blas_dgemv(CblasTrans, 1.0, &Kc.matrix, &v.vector, 0.0, &mc.vector);
        const double *sd = w->sD->data + c * n;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                P->data[i * P->tda + j] = sd[i] * gsl_matrix_get(&Kc.matrix, i, j);
        gsl_blas_dsymm(CblasLeft, CblasLower, 1.0, w->Binv[c], P, 0.0, Q[c]);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                Q[c]->data[i * Q[c]->tda + j] *= sd[i];
        for (size_t j = 0; j < m; j++) {
            double s = 0.0;
            for (size_t i = 0; i < n; i++)
                s += gsl_matrix_get(&Kc.matrix, i, j) * Q[c]->data[i * Q[c]->tda + j];
            cov[j * C * C + c * C + c] = gsl_vector_get(kss[k], j0 + j) - s;
        }
        gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->M, Q[c]);
    }
    for (size_t j = 0; j < m; j++)
        for (size_t a = 0; a < C; a++)
            for (size_t b = 0; b <= a; b++) {
                double s = 0.0;
                for (size_t i = 0; i < n; i++)
                    s += Q[a]->data[i * Q[a]->tda + j] * Q[b]->data[i * Q[b]->tda + j];
                double *cj = cov + j * C * C;
                cj[a * C + b] = (a == b ? cj[a * C + a] : 0.0) + s;
                cj[b * C + a] = cj[a * C + b];
            }
}

#define PREDICT_BLOCK 64

int gpc_softmax_predict(const gpc_softmax *w, const gsl_matrix *const *Ks,
                        const gsl_vector *const *kss, gsl_matrix *mean, gsl_matrix *cov,
                        gsl_matrix *prob, gsl_matrix *plugin)
{
    size_t n = w->n, C = w->C, mt = mean->size1;
    int status = GPC_OK;
    if (!w->factor_valid)
        return gpc_fail(GPC_EUSAGE, "softmax predictions need a mode: fit the model first");
    size_t bs = mt < PREDICT_BLOCK ? (mt ? mt : 1) : PREDICT_BLOCK;
    gsl_matrix **Q = gpc_calloc(C, sizeof *Q), **Qm = gpc_calloc(C, sizeof *Qm);
    for (size_t c = 0; c < C; c++)
        Q[c] = gpc_matrix_alloc(n, bs);
    gsl_matrix *P = gpc_matrix_alloc(n, bs);
    double *cv = gpc_mallocarray(bs * C * C + 2 * C, sizeof *cv), *mu = cv + bs * C * C,
           *pr = mu + C;
    gpc_softmax_rule *rule = prob ? gpc_softmax_rule_alloc(C) : NULL;
    for (size_t j0 = 0; j0 < mt && status == GPC_OK; j0 += bs) {
        size_t m = mt - j0 < bs ? mt - j0 : bs;
        gsl_matrix_view Pm = gsl_matrix_submatrix(P, 0, 0, n, m);
        gsl_matrix_view Qv[C];
        for (size_t c = 0; c < C; c++) {
            Qv[c] = gsl_matrix_submatrix(Q[c], 0, 0, n, m);
            Qm[c] = &Qv[c].matrix;
        }
        predict_block(w, Ks, kss, j0, m, Qm, &Pm.matrix, mean, cv);
        for (size_t j = 0; j < m && status == GPC_OK; j++) {
            const double *cj = cv + j * C * C;
            for (size_t c = 0; c < C; c++)
                mu[c] = gsl_matrix_get(mean, j0 + j, c);
            for (size_t e = 0; cov && e < C * C; e++)
                gsl_matrix_set(cov, j0 + j, e, cj[e]);
            if (prob) {
                status = gpc_softmax_expect(rule, mu, cj, pr);
                for (size_t c = 0; c < C; c++)
                    gsl_matrix_set(prob, j0 + j, c, pr[c]);
            }
            if (plugin) {
                gpc_softmax_plugin(C, mu, pr);
                for (size_t c = 0; c < C; c++)
                    gsl_matrix_set(plugin, j0 + j, c, pr[c]);
            }
        }
    }
    gpc_softmax_rule_free(rule);
    for (size_t c = 0; c < C; c++)
        gsl_matrix_free(Q[c]);
    free(Q);
    free(Qm);
    gsl_matrix_free(P);
    free(cv);
    return status;
}
