/* The multinomial probit Laplace evidence (mprobit-laplace.h): against a
 * dense reference written here (Newton on the full Cn system with K
 * inverted, log|I + K W| by LU, and the gradient by implicit
 * differentiation of the mode through explicit dK matrices), against the
 * binary probit Laplace approximation with two classes, against central
 * differences, and from the variational fit's warm start. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "liks/mprobit.h"
#include "methods/laplace.h"
#include "methods/mprobit-laplace.h"
#include "methods/vb.h"
#include "problems.h"
#include "tap.h"

/* ---- the dense reference ------------------------------------------------ */

typedef struct {
    size_t n, C;
    gsl_matrix *K, *Kinv, *W; /* Cn x Cn: blockdiag(K_c), its inverse, blockdiag(W_i) */
    gsl_vector *m, *g;        /* the mode and grad log P there */
    double *T;                /* n blocks C^3: the third derivatives at the mode */
    double log_z;
} dense;

static void dense_kernel(dense *D, gpc_kernel *const *ks, size_t nK, const gsl_matrix *X)
{
    size_t n = D->n;
    gsl_matrix *Kc = gsl_matrix_alloc(n, n);
    gsl_matrix_set_zero(D->K);
    for (size_t c = 0; c < D->C; c++) {
        gpc_kernel_matrix(ks[nK > 1 ? c : 0], X, Kc);
        gsl_matrix_view b = gsl_matrix_submatrix(D->K, c * n, c * n, n, n);
        gsl_matrix_memcpy(&b.matrix, Kc);
    }
    gsl_matrix_free(Kc);
    size_t Cn = D->C * n;
    gsl_matrix *LU = gsl_matrix_alloc(Cn, Cn);
    gsl_permutation *p = gsl_permutation_alloc(Cn);
    int sgn;
    gsl_matrix_memcpy(LU, D->K);
    gsl_linalg_LU_decomp(LU, p, &sgn);
    gsl_linalg_LU_invert(LU, p, D->Kinv);
    gsl_permutation_free(p);
    gsl_matrix_free(LU);
}

/* log P, its gradient and W at D->m, and Psi. */
static double dense_psi(dense *D, const size_t *cls, gpc_mprobit_rule *r)
{
    size_t n = D->n, C = D->C, Cn = C * n;
    double mi[8], yi[8], Wi[64], sum = 0.0, q;
    gsl_matrix_set_zero(D->W);
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < C; c++)
            mi[c] = gsl_vector_get(D->m, c * n + i);
        sum += gpc_mprobit_case(r, cls[i], mi, yi);
        gpc_mprobit_curvature(r, cls[i], Wi);
        gpc_mprobit_third(r, cls[i], D->T + i * C * C * C);
        for (size_t c = 0; c < C; c++) {
            gsl_vector_set(D->g, c * n + i, yi[c] - mi[c]);
            for (size_t e = 0; e < C; e++)
                gsl_matrix_set(D->W, c * n + i, e * n + i, Wi[c * C + e]);
        }
    }
    gsl_vector *a = gsl_vector_alloc(Cn);
    gsl_blas_dgemv(CblasNoTrans, 1.0, D->Kinv, D->m, 0.0, a);
    gsl_blas_ddot(a, D->m, &q);
    gsl_vector_free(a);
    return sum - 0.5 * q;
}

/* The mode by Newton on the Cn system H d = grad Psi, H = K^-1 + W, by LU;
 * then log Z = Psi - 1/2 log|I + K W|. */
static void dense_fit(dense *D, const size_t *cls)
{
    size_t Cn = D->C * D->n;
    gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(D->C);
    gsl_matrix *H = gsl_matrix_alloc(Cn, Cn);
    gsl_vector *grad = gsl_vector_alloc(Cn), *d = gsl_vector_alloc(Cn), *m0 = gsl_vector_alloc(Cn);
    gsl_permutation *p = gsl_permutation_alloc(Cn);
    int sgn;
    gsl_vector_set_zero(D->m);
    double psi = dense_psi(D, cls, r);
    for (int it = 0; it < 100; it++) {
        gsl_vector_memcpy(grad, D->g);
        gsl_blas_dgemv(CblasNoTrans, -1.0, D->Kinv, D->m, 1.0, grad);
        gsl_matrix_memcpy(H, D->Kinv);
        gsl_matrix_add(H, D->W);
        gsl_linalg_LU_decomp(H, p, &sgn);
        gsl_linalg_LU_solve(H, p, grad, d);
        if (gsl_blas_dnrm2(d) < 1e-13)
            break;
        gsl_vector_memcpy(m0, D->m);
        for (double t = 1.0; t > 1e-6; t *= 0.5) {
            gsl_vector_memcpy(D->m, m0);
            gsl_blas_daxpy(t, d, D->m);
            double next = dense_psi(D, cls, r);
            if (next >= psi) {
                psi = next;
                break;
            }
        }
    }
    psi = dense_psi(D, cls, r);
    /* I + K W */
    gsl_matrix_set_identity(H);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, D->K, D->W, 1.0, H);
    gsl_linalg_LU_decomp(H, p, &sgn);
    D->log_z = psi - 0.5 * gsl_linalg_LU_lndet(H);
    gsl_permutation_free(p);
    gsl_vector_free(m0);
    gsl_vector_free(d);
    gsl_vector_free(grad);
    gsl_matrix_free(H);
    gpc_mprobit_rule_free(r);
}

/* d log Z / d theta_j of kernel k: the mode moves by dm = H^-1 K^-1 dK a
 * (a = K^-1 m; the mode's equation g(m) = K^-1 m differentiated), W with it
 * by dW_i = -sum_a T_i[., ., a] dm_(i,a), and
 *     d log Z = 1/2 a' dK a - 1/2 tr((I + K W)^-1 (dK W + K dW)). */
static double dense_gradient(dense *D, gpc_kernel *const *ks, size_t nK, size_t k, size_t j,
                             const gsl_matrix *X)
{
    size_t n = D->n, C = D->C, Cn = C * n;
    gsl_matrix *dKc = gsl_matrix_alloc(n, n), *dK = gsl_matrix_calloc(Cn, Cn);
    gpc_kernel_grad_matrix(ks[k], X, j, dKc);
    for (size_t c = 0; c < C; c++)
        if (nK == 1 || c == k) {
            gsl_matrix_view b = gsl_matrix_submatrix(dK, c * n, c * n, n, n);
            gsl_matrix_memcpy(&b.matrix, dKc);
        }
    gsl_vector *a = gsl_vector_alloc(Cn), *u = gsl_vector_alloc(Cn), *v = gsl_vector_alloc(Cn),
               *dm = gsl_vector_alloc(Cn);
    gsl_blas_dgemv(CblasNoTrans, 1.0, D->Kinv, D->m, 0.0, a);
    gsl_blas_dgemv(CblasNoTrans, 1.0, dK, a, 0.0, u);
    double explicit_term;
    gsl_blas_ddot(a, u, &explicit_term);
    gsl_blas_dgemv(CblasNoTrans, 1.0, D->Kinv, u, 0.0, v);
    gsl_matrix *H = gsl_matrix_alloc(Cn, Cn), *M = gsl_matrix_alloc(Cn, Cn),
               *dW = gsl_matrix_calloc(Cn, Cn), *P = gsl_matrix_alloc(Cn, Cn),
               *Minv = gsl_matrix_alloc(Cn, Cn);
    gsl_permutation *p = gsl_permutation_alloc(Cn);
    int sgn;
    gsl_matrix_memcpy(H, D->Kinv);
    gsl_matrix_add(H, D->W);
    gsl_linalg_LU_decomp(H, p, &sgn);
    gsl_linalg_LU_solve(H, p, v, dm);
    for (size_t i = 0; i < n; i++) {
        const double *T = D->T + i * C * C * C;
        for (size_t b = 0; b < C; b++)
            for (size_t c = 0; c < C; c++) {
                double s = 0.0;
                for (size_t e = 0; e < C; e++)
                    s -= T[(b * C + c) * C + e] * gsl_vector_get(dm, e * n + i);
                gsl_matrix_set(dW, b * n + i, c * n + i, s);
            }
    }
    /* P = dK W + K dW, M = I + K W */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dK, D->W, 0.0, P);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, D->K, dW, 1.0, P);
    gsl_matrix_set_identity(M);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, D->K, D->W, 1.0, M);
    gsl_linalg_LU_decomp(M, p, &sgn);
    gsl_linalg_LU_invert(M, p, Minv);
    double tr = 0.0;
    for (size_t r = 0; r < Cn; r++)
        for (size_t c = 0; c < Cn; c++)
            tr += gsl_matrix_get(Minv, r, c) * gsl_matrix_get(P, c, r);
    gsl_permutation_free(p);
    gsl_matrix *fr[] = {dKc, dK, H, M, dW, P, Minv};
    for (size_t q = 0; q < 7; q++)
        gsl_matrix_free(fr[q]);
    gsl_vector *fv[] = {a, u, v, dm};
    for (size_t q = 0; q < 4; q++)
        gsl_vector_free(fv[q]);
    return 0.5 * explicit_term - 0.5 * tr;
}

/* ---- the library's evidence --------------------------------------------- */

static int library_evidence(gpc_kernel *const *ks, size_t nK, const gsl_matrix *X,
                            const size_t *cls, size_t C, double *log_z, double *grad,
                            int *steps)
{
    size_t n = X->size1, p = gpc_kernel_nparams(ks[0]);
    gsl_matrix *K[8];
    for (size_t k = 0; k < nK; k++) {
        K[k] = gsl_matrix_alloc(n, n);
        gpc_kernel_matrix(ks[k], X, K[k]);
    }
    gpc_mpl *w = gpc_mpl_alloc(n, C, nK > 1);
    gsl_matrix *Bg = gsl_matrix_alloc(n, p);
    int st = gpc_mpl_fit(w, K, cls, NULL, NULL, log_z);
    if (st == GPC_OK && grad)
        st = gpc_mpl_gradient(w, ks, X, K, cls, p, grad, Bg);
    if (steps)
        *steps = w->newton_steps;
    gsl_matrix_free(Bg);
    gpc_mpl_free(w);
    for (size_t k = 0; k < nK; k++)
        gsl_matrix_free(K[k]);
    return st;
}

static gpc_kernel *class_kernel(size_t c, size_t d)
{
    double th[] = {1.2 - 0.3 * (double)c, 0.2, -0.3 + 0.2 * (double)c, -4.0};
    return kernel_at("ard+jitter", d, th);
}

/* Shared and per-class kernels, C = 3 and 4: evidence and gradient
 * against the dense reference (1e-9) and the gradient against central
 * differences of the library's own evidence (1e-6). */
static void test_against_dense(gsl_rng *r)
{
    size_t n = 14, d = 2;
    for (size_t C = 3; C <= 4; C++)
        for (int per = 0; per <= 1; per++) {
            gsl_matrix *X;
            size_t *cls, nK = per ? C : 1, p = 4;
            multiclass_problem(r, n, d, C, 0.6, &X, &cls);
            gpc_kernel *ks[4];
            for (size_t k = 0; k < nK; k++)
                ks[k] = class_kernel(k, d);
            double lz, g[16];
            int steps;
            int st = library_evidence(ks, nK, X, cls, C, &lz, g, &steps);
            TEST_OK(st == GPC_OK, "C = %zu %s: fitted from 0 in %d Newton steps", C,
                    per ? "per-class" : "shared", steps);
            dense D = {n, C, gsl_matrix_alloc(C * n, C * n), gsl_matrix_alloc(C * n, C * n),
                       gsl_matrix_alloc(C * n, C * n), gsl_vector_alloc(C * n),
                       gsl_vector_alloc(C * n), malloc(n * C * C * C * sizeof(double)), 0.0};
            dense_kernel(&D, ks, nK, X);
            dense_fit(&D, cls);
            TEST_CLOSE(lz, D.log_z, 1e-9, 0.0, "C = %zu %s: log Z = the dense reference's "
                       "(%.12g, %.12g)", C, per ? "per-class" : "shared", lz, D.log_z);
            double worst_ref = 0.0, worst_fd = 0.0, scale = 0.0;
            for (size_t j = 0; j < nK * p; j++)
                scale = fmax(scale, fabs(g[j]));
            for (size_t k = 0; k < nK; k++)
                for (size_t j = 0; j < p; j++) {
                    double ref = dense_gradient(&D, ks, nK, k, j, X);
                    worst_ref = fmax(worst_ref, fabs(ref - g[k * p + j]));
                    double th[4], h = 1e-4, lp, lm;
                    for (size_t l = 0; l < p; l++)
                        th[l] = gpc_kernel_params(ks[k])[l];
                    th[j] += h;
                    gpc_kernel_set_params(ks[k], th);
                    library_evidence(ks, nK, X, cls, C, &lp, NULL, NULL);
                    th[j] -= 2 * h;
                    gpc_kernel_set_params(ks[k], th);
                    library_evidence(ks, nK, X, cls, C, &lm, NULL, NULL);
                    th[j] += h;
                    gpc_kernel_set_params(ks[k], th);
                    worst_fd = fmax(worst_fd, fabs((lp - lm) / (2 * h) - g[k * p + j]));
                }
            TEST_CLOSE(worst_ref / scale, 0.0, 0.0, 1e-9, "C = %zu %s: gradient = the dense "
                       "reference's (largest difference relative to the largest component "
                       "%.1e)", C, per ? "per-class" : "shared", worst_ref / scale);
            TEST_CLOSE(worst_fd / scale, 0.0, 0.0, 1e-6, "C = %zu %s: gradient = central "
                       "differences (%.1e)", C, per ? "per-class" : "shared", worst_fd / scale);
            gsl_matrix_free(D.K);
            gsl_matrix_free(D.Kinv);
            gsl_matrix_free(D.W);
            gsl_vector_free(D.m);
            gsl_vector_free(D.g);
            free(D.T);
            for (size_t k = 0; k < nK; k++)
                gpc_kernel_free(ks[k]);
            gsl_matrix_free(X);
            free(cls);
        }
}

/* Two classes: with h = (f_1 - f_2) / sqrt 2 ~ GP(0, K) and s = (f_1 +
 * f_2) / sqrt 2 independent of it, P(class 1) = Phi(h) and the posterior
 * leaves s at its prior, so the mode has s = 0, W acts on h alone, and
 * log Z (Psi and log|I + K W| alike) is the binary probit Laplace
 * approximation's with kernel K, gradient included. */
static void test_two_classes(gsl_rng *r)
{
    size_t n = 25, d = 2, p = 4;
    gsl_matrix *X;
    size_t *cls;
    multiclass_problem(r, n, d, 2, 0.6, &X, &cls);
    gpc_kernel *k = class_kernel(0, d);
    double lz, g[4], lb, gb[4];
    int st = library_evidence(&k, 1, X, cls, 2, &lz, g, NULL);
    gpc_laplace *lp = gpc_laplace_alloc(n, p, GPC_LIK_PROBIT);
    gsl_vector *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(y, i, cls[i] == 0 ? 1.0 : -1.0);
    st = st == GPC_OK ? gpc_laplace_evidence(lp, k, X, y, &lb, gb) : st;
    TEST_OK(st == GPC_OK, "C = 2: both fitted");
    TEST_CLOSE(lz, lb, 1e-10, 0.0, "C = 2: log Z = binary probit Laplace's (%.12g, %.12g)", lz,
               lb);
    double worst = 0.0;
    for (size_t j = 0; j < p; j++)
        worst = fmax(worst, fabs(g[j] - gb[j]) / fmax(1.0, fabs(gb[j])));
    TEST_CLOSE(worst, 0.0, 0.0, 1e-9, "C = 2: gradient = binary probit Laplace's (%.1e)", worst);
    gsl_vector_free(y);
    gpc_laplace_free(lp);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

/* From the variational fit's mode (its m and K^-1 m) the mode needs one
 * factor to confirm and at most one step, and gives the same log Z as from
 * zero; the bound is below log Z by 1/2 [C log|I + K| - log|B|] > 0. */
static void test_warm_start(gsl_rng *r)
{
    size_t n = 40, d = 2, C = 4, p = 4;
    gsl_matrix *X;
    size_t *cls;
    multiclass_problem(r, n, d, C, 0.6, &X, &cls);
    double th[] = {2.5, 0.3, -0.2, -4.0};
    gpc_kernel *k = kernel_at("ard+jitter", d, th);
    gpc_vb *vb = gpc_vb_alloc(n, C, p, 0);
    double bound, lz_warm, lz_cold;
    int st = gpc_vb_evidence(vb, &k, X, cls, &bound, NULL);
    gpc_mpl *w = gpc_mpl_alloc(n, C, 0);
    st = st == GPC_OK ? gpc_mpl_fit(w, vb->K, cls, vb->m, vb->v, &lz_warm) : st;
    int warm_steps = w->newton_steps;
    st = st == GPC_OK ? gpc_mpl_fit(w, vb->K, cls, NULL, NULL, &lz_cold) : st;
    TEST_OK(st == GPC_OK, "warm start: fitted (%d factors warm, %d cold)", warm_steps,
            w->newton_steps);
    TEST_OK(warm_steps <= 2, "warm start: at most two factors from the variational mode (%d)",
            warm_steps);
    TEST_CLOSE(lz_warm, lz_cold, 1e-10, 0.0, "warm start: the same log Z as from zero");
    TEST_OK(bound < lz_warm, "the variational bound %.6g is below the Laplace evidence %.6g",
            bound, lz_warm);
    gpc_mpl_free(w);
    gpc_vb_free(vb);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    test_against_dense(r);
    test_two_classes(r);
    test_warm_start(r);
    gsl_rng_free(r);
    return tap_done();
}
