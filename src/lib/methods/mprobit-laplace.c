#include "methods/mprobit-laplace.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "linalg/bmatrix.h"

#define MPL_TOL 1e-11
#define MPL_MAX_STEPS 100
#define MPL_HALVINGS 30
/* Below this a step that shrinks by less than half is rounding's */
#define MPL_FLOOR 1e-8

gpc_mpl *gpc_mpl_alloc(size_t n, size_t C, int per_class)
{
    gpc_mpl *w = gpc_calloc(1, sizeof *w);
    size_t Cn = C * n;
    w->n = n;
    w->C = C;
    w->nK = per_class ? C : 1;
    w->A = gpc_matrix_alloc(Cn, Cn);
    w->W = gpc_mallocarray(n, C * C * sizeof *w->W);
    w->F = gpc_mallocarray(n, C * C * sizeof *w->F);
    gsl_vector **v[] = {&w->m, &w->a, &w->g, &w->b, &w->dm, &w->da, &w->m0, &w->a0,
                        &w->ones};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        *v[i] = gpc_vector_calloc(Cn);
    gsl_vector_set_all(w->ones, 1.0);
    w->log_p = gpc_vector_calloc(n);
    w->zero = gpc_vector_calloc(n);
    w->scratch = gpc_mallocarray(C * C * C + 3 * C * C + C, sizeof *w->scratch);
    w->rule = gpc_mprobit_rule_alloc(C);
    w->eig = gsl_eigen_symmv_alloc(C);
    return w;
}

size_t gpc_mpl_workspace(size_t n, size_t C)
{
    size_t Cn = gpc_size_mul(C, n);
    size_t bytes = gpc_size_mul(2, gpc_doubles_bytes(Cn, Cn));
    bytes = gpc_size_add(bytes, gpc_size_mul(2, gpc_doubles_bytes(n, gpc_size_mul(C, C))));
    return gpc_size_add(bytes, gpc_doubles_bytes(Cn, 9));
}

void gpc_mpl_free(gpc_mpl *w)
{
    if (!w)
        return;
    gsl_matrix_free(w->A);
    if (w->G)
        gsl_matrix_free(w->G);
    free(w->W);
    free(w->F);
    gsl_vector *v[] = {w->m, w->a, w->g, w->b, w->dm, w->da, w->m0, w->a0, w->ones,
                       w->log_p, w->zero};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        gsl_vector_free(v[i]);
    free(w->scratch);
    gpc_mprobit_rule_free(w->rule);
    gsl_eigen_symmv_free(w->eig);
    free(w);
}

/* out_c = K_c x_c for every class (class-major vectors of length Cn). */
static void apply_K(const gpc_mpl *w, gsl_matrix *const *K, const gsl_vector *x,
                    gsl_vector *out)
{
    for (size_t c = 0; c < w->C; c++) {
        gsl_vector_const_view xc = gsl_vector_const_subvector(x, c * w->n, w->n);
        gsl_vector_view oc = gsl_vector_subvector(out, c * w->n, w->n);
        gsl_blas_dsymv(CblasLower, 1.0, K[w->nK > 1 ? c : 0], &xc.vector, 0.0, &oc.vector);
    }
}

/* out = F x (or W x), F block-diagonal over the cases. */
static void apply_blocks(const gpc_mpl *w, const double *blocks, const gsl_vector *x,
                         gsl_vector *out)
{
    gpc_mprobit_blocks_apply(w->n, w->C, blocks, x->data, out->data);
}

/* At m (with a = K^-1 m): log P_i, g = grad log P, W and F; returns Psi. */
static double evaluate(gpc_mpl *w, const size_t *cls)
{
    size_t n = w->n, C = w->C;
    double *mi = w->scratch + C * C * C + 3 * C * C, *yi = w->scratch, sum = 0.0, quad;
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < C; c++)
            mi[c] = w->m->data[c * n + i];
        w->log_p->data[i] = gpc_mprobit_case(w->rule, cls[i], mi, yi);
        for (size_t c = 0; c < C; c++)
            w->g->data[c * n + i] = yi[c] - mi[c];
        gpc_mprobit_curvature(w->rule, cls[i], w->W + i * C * C);
        gpc_mprobit_sqrt(C, w->W + i * C * C, w->F + i * C * C, w->scratch, w->eig);
        sum += w->log_p->data[i];
    }
    gsl_blas_ddot(w->a, w->m, &quad);
    return sum - 0.5 * quad;
}

/* A <- F A F in place (A full), F block-diagonal over the cases: rows
 * first (each row's classes of case j mixed by F_j), then columns. */
static void scale_by_F(gpc_mpl *w, gsl_matrix *A)
{
    size_t n = w->n, C = w->C, Cn = C * n;
    double *tmp = w->scratch;
    for (size_t r = 0; r < Cn; r++) {
        double *Ar = A->data + r * A->tda;
        for (size_t j = 0; j < n; j++) {
            const double *Fj = w->F + j * C * C;
            for (size_t d = 0; d < C; d++) {
                double s = 0.0;
                for (size_t e = 0; e < C; e++)
                    s += Ar[e * n + j] * Fj[e * C + d];
                tmp[d] = s;
            }
            for (size_t d = 0; d < C; d++)
                Ar[d * n + j] = tmp[d];
        }
    }
    for (size_t i = 0; i < n; i++) {
        const double *Fi = w->F + i * C * C;
        for (size_t col = 0; col < Cn; col++) {
            for (size_t c = 0; c < C; c++) {
                double s = 0.0;
                for (size_t e = 0; e < C; e++)
                    s += Fi[c * C + e] * A->data[(e * n + i) * A->tda + col];
                tmp[c] = s;
            }
            for (size_t c = 0; c < C; c++)
                A->data[(c * n + i) * A->tda + col] = tmp[c];
        }
    }
}

/* B = I + F K F, formed whole in A (K block-diagonal over the classes)
 * and factored there. */
static int factor_B(gpc_mpl *w, gsl_matrix *const *K)
{
    size_t n = w->n, C = w->C;
    gsl_matrix_set_zero(w->A);
    for (size_t c = 0; c < C; c++) {
        gsl_matrix_view b = gsl_matrix_submatrix(w->A, c * n, c * n, n, n);
        gsl_matrix_memcpy(&b.matrix, K[w->nK > 1 ? c : 0]);
    }
    scale_by_F(w, w->A);
    w->newton_steps++;
    if (gpc_bmatrix_factor(w->A, w->ones->data, w->A) != 0)
        return gpc_fail(GPC_ENUM, "I + W^1/2 K W^1/2 is not positive definite: the kernel "
                        "matrix is far from positive semi-definite; add a jitter term to the "
                        "kernel (e.g. 'ard+jitter')");
    w->has_factor = 1;
    return GPC_OK;
}

/* x <- B^-1 x with B = L L' in A's lower triangle. */
static void solve_B(const gpc_mpl *w, gsl_vector *x)
{
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, w->A, x);
    gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->A, x);
}

/* Newton's step from m (W, F and B's factor at m): dm and da, the
 * differences to a_new = b - F B^-1 F K b, m_new = K a_new, b = W m + g.
 * Returns the largest |dm| relative to max(1, largest |m|). */
static double newton_step(gpc_mpl *w, gsl_matrix *const *K)
{
    size_t Cn = w->C * w->n;
    apply_blocks(w, w->W, w->m, w->b);
    gsl_vector_add(w->b, w->g);
    apply_K(w, K, w->b, w->dm);
    apply_blocks(w, w->F, w->dm, w->da);
    solve_B(w, w->da);
    apply_blocks(w, w->F, w->da, w->dm);
    gsl_vector_sub(w->b, w->dm);   /* a_new */
    apply_K(w, K, w->b, w->dm);    /* m_new */
    double worst = 0.0, size = 1.0;
    for (size_t j = 0; j < Cn; j++) {
        w->da->data[j] = w->b->data[j] - w->a->data[j];
        w->dm->data[j] -= w->m->data[j];
        worst = fmax(worst, fabs(w->dm->data[j]));
        size = fmax(size, fabs(w->m->data[j]));
    }
    return worst / size;
}

int gpc_mpl_fit(gpc_mpl *w, gsl_matrix *const *K, const size_t *cls, const gsl_vector *m0,
                const gsl_vector *a0, double *log_evidence)
{
    gpc_parallel_blas(w->C * w->n);
    w->newton_steps = 0;
    w->has_factor = 0;
    if (m0) {
        gsl_vector_memcpy(w->m, m0);
        gsl_vector_memcpy(w->a, a0);
    } else {
        gsl_vector_set_zero(w->m);
        gsl_vector_set_zero(w->a);
    }
    double psi = evaluate(w, cls), last = INFINITY;
    for (int it = 0;; it++) {
        if (!isfinite(psi))
            return gpc_fail(GPC_ENUM, "the multinomial probit posterior is not finite at "
                            "these hyperparameters; try values of moderate size");
        int st = factor_B(w, K);
        if (st != GPC_OK)
            return st;
        double change = newton_step(w, K);
        /* converged, or at the floor that rounding in the products with K
         * puts under the step (it stops shrinking) */
        if (change <= MPL_TOL || (change <= MPL_FLOOR && change > 0.5 * last))
            break;
        if (it >= MPL_MAX_STEPS)
            return gpc_fail(GPC_ENUM, "Newton's method for the multinomial probit mode did "
                            "not converge in %d steps", MPL_MAX_STEPS);
        last = change;
        gsl_vector_memcpy(w->m0, w->m);
        gsl_vector_memcpy(w->a0, w->a);
        /* Psi's rounding makes steps near the mode look like falls */
        double t = 1.0, next = -INFINITY, slack = 1e-12 * (1.0 + fabs(psi));
        int h;
        for (h = 0; h <= MPL_HALVINGS; h++, t *= 0.5) {
            gsl_vector_memcpy(w->m, w->m0);
            gsl_blas_daxpy(t, w->dm, w->m);
            gsl_vector_memcpy(w->a, w->a0);
            gsl_blas_daxpy(t, w->da, w->a);
            next = evaluate(w, cls);
            if (isfinite(next) && next >= psi - slack)
                break;
        }
        if (h > MPL_HALVINGS)
            return gpc_fail(GPC_ENUM, "Newton's method for the multinomial probit mode "
                            "stalled %.1e from it", change);
        psi = next;
    }
    w->psi = psi;
    w->half_log_det = gpc_bmatrix_half_log_det(w->A);
    w->log_evidence = psi - w->half_log_det;
    *log_evidence = w->log_evidence;
    return GPC_OK;
}

/* The implicit term's s: s_(i,a) = 1/2 sum_bc Sigma_i[b,c] T_i[b,c,a], with
 * Sigma_i[c,d] = d_cd K_c[i,i] - sum_j K_c[i,j] (R K)[(c,j),(d,i)] and RK
 * in G. */
static void implicit_source(gpc_mpl *w, gsl_matrix *const *K, const size_t *cls)
{
    size_t n = w->n, C = w->C;
    double *T = w->scratch, *S = T + C * C * C, *mi = S + C * C;
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < C; c++) {
            const gsl_matrix *Kc = K[w->nK > 1 ? c : 0];
            const double *Ki = Kc->data + i * Kc->tda;
            for (size_t d = 0; d < C; d++) {
                double s = 0.0;
                for (size_t j = 0; j < n; j++)
                    s += Ki[j] * w->G->data[(c * n + j) * w->G->tda + d * n + i];
                S[c * C + d] = (c == d ? Ki[i] : 0.0) - s;
            }
            mi[c] = w->m->data[c * n + i];
        }
        gpc_mprobit_case(w->rule, cls[i], mi, NULL);
        gpc_mprobit_third(w->rule, cls[i], T);
        for (size_t a = 0; a < C; a++) {
            double s = 0.0;
            for (size_t b = 0; b < C; b++)
                for (size_t c = 0; c < C; c++)
                    s += S[b * C + c] * T[(b * C + c) * C + a];
            w->b->data[a * n + i] = 0.5 * s;
        }
    }
}

int gpc_mpl_gradient(gpc_mpl *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                     gsl_matrix *const *K, const size_t *cls, size_t nparams, double *grad,
                     gsl_matrix *Bg)
{
    size_t n = w->n, C = w->C, Cn = C * n;
    if (!w->has_factor)
        return gpc_fail(GPC_EUSAGE, "the Laplace gradient needs a fit first");
    w->has_factor = 0;
    gpc_parallel_blas(Cn);
    if (!w->G) /* the gradient's second Cn x Cn matrix, from its first use */
        w->G = gpc_matrix_alloc(Cn, Cn);
    /* R = F B^-1 F, full, in A */
    gpc_bmatrix_inverse(w->A);
    for (size_t r = 0; r < Cn; r++)
        for (size_t c = r + 1; c < Cn; c++)
            w->A->data[r * w->A->tda + c] = w->A->data[c * w->A->tda + r];
    scale_by_F(w, w->A);
    /* G = R K, column block by column block */
    for (size_t d = 0; d < C; d++) {
        gsl_matrix_view Rd = gsl_matrix_submatrix(w->A, 0, d * n, Cn, n);
        gsl_matrix_view Gd = gsl_matrix_submatrix(w->G, 0, d * n, Cn, n);
        gsl_blas_dsymm(CblasRight, CblasLower, 1.0, K[w->nK > 1 ? d : 0], &Rd.matrix, 0.0,
                       &Gd.matrix);
    }
    /* b = s - R K s, s from the blocks of K - K R K */
    implicit_source(w, K, cls);
    apply_K(w, K, w->b, w->dm);
    gsl_blas_dsymv(CblasLower, -1.0, w->A, w->dm, 1.0, w->b);
    /* per kernel, Q = 1/2 sum over its classes of a a' - R_cc + a b' + b a'
     * (lower triangle, in G's corner) contracted with its derivatives */
    gsl_matrix_view Q = gsl_matrix_submatrix(w->G, 0, 0, n, n);
    for (size_t k = 0; k < w->nK; k++) {
        gsl_matrix_set_zero(&Q.matrix);
        for (size_t c = (w->nK > 1 ? k : 0); c < (w->nK > 1 ? k + 1 : C); c++) {
            gsl_matrix_const_view Rcc = gsl_matrix_const_submatrix(w->A, c * n, c * n, n, n);
            gsl_vector_const_view ac = gsl_vector_const_subvector(w->a, c * n, n);
            gsl_vector_const_view bc = gsl_vector_const_subvector(w->b, c * n, n);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j <= i; j++)
                    Q.matrix.data[i * Q.matrix.tda + j] -=
                        0.5 * Rcc.matrix.data[i * Rcc.matrix.tda + j];
            gsl_blas_dsyr(CblasLower, 0.5, &ac.vector, &Q.matrix);
            gsl_blas_dsyr2(CblasLower, 0.5, &ac.vector, &bc.vector, &Q.matrix);
        }
        gpc_kernel_grad_contract(kernels[k], X, K[k], w->zero, 0.0, &Q.matrix, 1.0, w->zero,
                                 grad + k * nparams, Bg);
    }
    for (size_t j = 0; j < nparams * w->nK; j++)
        if (!isfinite(grad[j]))
            return gpc_fail(GPC_ENUM, "the gradient of the Laplace evidence is not finite at "
                            "these hyperparameters; try values of moderate size");
    return GPC_OK;
}
