#include "sparse/bound.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>

#include "base/alloc.h"
#include "base/err.h"
#include "kernels/class-kernels.h"
#include "sparse/inducing.h"

/* KL(N(mc, S) || N(0, I)) = 1/2 (tr S + mc'mc - m - log|S|); Sinv gets
 * S^-1 (full).  GPC_ENUM if S is not positive definite. */
static int kl_term(const gsl_vector *mc, const gsl_matrix *S, gsl_matrix *Sinv, double *kl)
{
    size_t m = S->size1;
    double logdet, tr = 0.0, mm;
    int info = gpc_inducing_spd_inverse(S, Sinv, &logdet);
    if (info != 0)
        return gpc_fail(GPC_ENUM, "a variational covariance is not positive definite "
                        "(pivot %d)", info);
    for (size_t i = 0; i < m; i++)
        tr += gsl_matrix_get(S, i, i);
    gsl_blas_ddot(mc, mc, &mm);
    *kl = 0.5 * (tr + mm - (double)m - logdet);
    return GPC_OK;
}

/* X += m_c G_c' + 2 (S_c - I) H_c for one class (whitened statistics): then
 * L's adjoint is the lower part of -scale L'^-1 X. */
static void add_L_term(const gsl_vector *mc, const gsl_matrix *S, const gsl_vector *G,
                       const gsl_matrix *H, gsl_matrix *X)
{
    gsl_blas_dger(1.0, mc, G, X);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 2.0, S, H, 1.0, X);
    gsl_matrix *H2 = gsl_matrix_alloc(H->size1, H->size2);
    gsl_matrix_memcpy(H2, H);
    gsl_matrix_scale(H2, 2.0);
    gsl_matrix_sub(X, H2);
    gsl_matrix_free(H2);
}

/* Kbar = L'^-1 Sym(Phi(L' Lbar)) L^-1 from the lower part of Lbar. */
static void K_adjoint(const gsl_matrix *L, gsl_matrix *Lbar, gsl_matrix *Kbar)
{
    size_t m = L->size1;
    for (size_t i = 0; i < m; i++)
        for (size_t j = i + 1; j < m; j++)
            gsl_matrix_set(Lbar, i, j, 0.0);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, L, Lbar, 0.0, Kbar);
    for (size_t i = 0; i < m; i++) { /* Phi, then the symmetric part */
        gsl_matrix_set(Kbar, i, i, 0.5 * gsl_matrix_get(Kbar, i, i));
        for (size_t j = i + 1; j < m; j++)
            gsl_matrix_set(Kbar, i, j, 0.0);
    }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < i; j++) {
            double a = 0.5 * gsl_matrix_get(Kbar, i, j);
            gsl_matrix_set(Kbar, i, j, a);
            gsl_matrix_set(Kbar, j, i, a);
        }
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasTrans, CblasNonUnit, 1.0, L, Kbar);
    gsl_blas_dtrsm(CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, L, Kbar);
}

/* dtheta and dZ through K_ZZ from its adjoint Kbar; K_ZZ's values (off the
 * diagonal, which neither contraction reads) from the expanded square. */
static void through_Kzz(const gpc_kernel *k, const gsl_matrix *Z, const gsl_matrix *Kbar,
                        double *dtheta, gsl_matrix *dZ)
{
    size_t m = Z->size1, np = gpc_kernel_nparams(k);
    gsl_matrix *K = gsl_matrix_alloc(m, m);
    gpc_kernel_cross_expanded(k, Z, Z, K);
    if (dtheta) {
        gsl_vector *zero = gsl_vector_calloc(m);
        gsl_matrix *B = gsl_matrix_alloc(m, np ? np : 1);
        double *s = gpc_mallocarray(np ? np : 1, sizeof *s);
        gpc_kernel_grad_contract(k, Z, K, zero, 0.0, Kbar, 1.0, zero, s, B);
        for (size_t j = 0; j < np; j++)
            dtheta[j] += s[j];
        free(s);
        gsl_matrix_free(B);
        gsl_vector_free(zero);
    }
    if (dZ) { /* K_ZZ moves with Z in both arguments: twice the first's */
        gsl_matrix *A2 = gsl_matrix_alloc(m, m), *g = gsl_matrix_alloc(m, Z->size2);
        gsl_matrix_memcpy(A2, Kbar);
        gsl_matrix_scale(A2, 2.0);
        gpc_kernel_cross_input_contract(k, Z, Z, K, A2, g);
        gsl_matrix_add(dZ, g);
        gsl_matrix_free(A2);
        gsl_matrix_free(g);
    }
    gsl_matrix_free(K);
}

/* The gradient through K_ZZ of every kernel g, from X[g] (add_L_term's
 * sums over its classes), added to dtheta (its block of each kernel's
 * hyperparameters) and dZ. */
static void through_factors(const gpc_kernel *k, size_t C, const gsl_matrix *Z,
                            gsl_matrix *const *L, gsl_matrix **X, double scale, double *dtheta,
                            gsl_matrix *dZ)
{
    size_t m = Z->size1, nK = gpc_shard_kernel_count(k);
    gpc_class_kernels *ck = nK > 1 ? gpc_class_kernels_alloc(k, C) : NULL;
    gsl_matrix *Kbar = gpc_matrix_alloc(m, m);
    for (size_t g = 0; g < nK; g++) {
        const gpc_kernel *kg = ck ? ck->k[g] : k;
        /* Lbar = -scale L'^-1 X, then back through the factor */
        gsl_blas_dtrsm(CblasLeft, CblasLower, CblasTrans, CblasNonUnit, -scale, L[g], X[g]);
        K_adjoint(L[g], X[g], Kbar);
        through_Kzz(kg, Z, Kbar, dtheta ? dtheta + g * gpc_kernel_nparams(kg) : NULL, dZ);
    }
    gsl_matrix_free(Kbar);
    gpc_class_kernels_free(ck);
}

int gpc_bound_eval(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *const *L,
                   const gsl_matrix *M, gsl_matrix *const *S, const gpc_shard_stats *st,
                   double scale, double *elbo, gsl_matrix *dM, gsl_matrix **dS,
                   gsl_matrix **Sinv_out, double *dtheta, gsl_matrix *dZ)
{
    size_t m = Z->size1, C = M->size1, np = gpc_kernel_nparams(k),
           nK = gpc_shard_kernel_count(k);
    gsl_matrix *Sinv = gsl_matrix_alloc(m, m), **X = gpc_mallocarray(nK, sizeof *X);
    for (size_t g = 0; g < nK; g++)
        X[g] = gsl_matrix_calloc(m, m);
    double total = scale * st->lambda;
    int rc = GPC_OK;
    for (size_t c = 0; c < C && rc == GPC_OK; c++) {
        gsl_vector_const_view mc = gsl_matrix_const_row(M, c);
        gsl_vector_const_view Gc = gsl_matrix_const_row(st->G, c);
        double kl = 0.0;
        if ((rc = kl_term(&mc.vector, S[c], Sinv, &kl)) != GPC_OK)
            break;
        if (Sinv_out)
            gsl_matrix_memcpy(Sinv_out[c], Sinv);
        total -= kl;
        if (dM) { /* scale G_c - m_c */
            gsl_vector_view d = gsl_matrix_row(dM, c);
            gsl_vector_memcpy(&d.vector, &Gc.vector);
            gsl_vector_scale(&d.vector, scale);
            gsl_vector_sub(&d.vector, &mc.vector);
        }
        if (dS) { /* scale H_c - 1/2 (I - S_c^-1) */
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < m; j++)
                    gsl_matrix_set(dS[c], i, j,
                                   scale * gsl_matrix_get(st->H[c], i, j) +
                                       0.5 * gsl_matrix_get(Sinv, i, j) - (i == j ? 0.5 : 0.0));
        }
        if (dtheta || dZ)
            add_L_term(&mc.vector, S[c], &Gc.vector, st->H[c], X[nK == 1 ? 0 : c]);
    }
    if (rc == GPC_OK) {
        *elbo = total;
        if (dtheta)
            for (size_t j = 0; j < np; j++)
                dtheta[j] = scale * st->dtheta[j];
        if (dZ) {
            gsl_matrix_memcpy(dZ, st->dZ);
            gsl_matrix_scale(dZ, scale);
        }
        if (dtheta || dZ)
            through_factors(k, C, Z, L, X, scale, dtheta, dZ);
    }
    gsl_matrix_free(Sinv);
    for (size_t g = 0; g < nK; g++)
        gsl_matrix_free(X[g]);
    free(X);
    return rc;
}
