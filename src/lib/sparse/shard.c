#include "sparse/shard.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>

#include "base/alloc.h"
#include "base/err.h"
#include "liks/expect.h"
#include "liks/lik.h"

double gpc_shard_binary_lik(const void *ctx, size_t C, double y, const double *mu,
                            const double *s2, double *g, double *h)
{
    (void)C;
    return gpc_lik_expect(*(const gpc_lik *)ctx, y, mu[0], s2[0], g, h);
}

gpc_shard_stats *gpc_shard_stats_alloc(size_t m, size_t C, size_t dim, size_t nparams)
{
    gpc_shard_stats *st = gpc_calloc(1, sizeof *st);
    st->m = m;
    st->C = C;
    st->dim = dim;
    st->nparams = nparams;
    st->G = gpc_matrix_alloc(C, m);
    st->H = gpc_mallocarray(C, sizeof *st->H);
    for (size_t c = 0; c < C; c++)
        st->H[c] = gpc_matrix_alloc(m, m);
    st->dtheta = gpc_mallocarray(nparams ? nparams : 1, sizeof *st->dtheta);
    st->dZ = gpc_matrix_alloc(m, dim);
    gpc_shard_stats_zero(st);
    return st;
}

void gpc_shard_stats_free(gpc_shard_stats *st)
{
    if (!st)
        return;
    gsl_matrix_free(st->G);
    for (size_t c = 0; c < st->C; c++)
        gsl_matrix_free(st->H[c]);
    free(st->H);
    free(st->dtheta);
    gsl_matrix_free(st->dZ);
    free(st);
}

void gpc_shard_stats_zero(gpc_shard_stats *st)
{
    st->rows = 0;
    st->lambda = 0.0;
    gsl_matrix_set_zero(st->G);
    for (size_t c = 0; c < st->C; c++)
        gsl_matrix_set_zero(st->H[c]);
    for (size_t j = 0; j < st->nparams; j++)
        st->dtheta[j] = 0.0;
    gsl_matrix_set_zero(st->dZ);
}

void gpc_shard_stats_add(gpc_shard_stats *sum, const gpc_shard_stats *part)
{
    sum->rows += part->rows;
    sum->lambda += part->lambda;
    gsl_matrix_add(sum->G, part->G);
    for (size_t c = 0; c < sum->C; c++)
        gsl_matrix_add(sum->H[c], part->H[c]);
    for (size_t j = 0; j < sum->nparams; j++)
        sum->dtheta[j] += part->dtheta[j];
    gsl_matrix_add(sum->dZ, part->dZ);
}

/* The marginals of the b rows: MU and S2 (b x C) from the kernel columns
 * Kzx (m x b), kxx, p and QK[c] = Q_c Kzx. */
static void marginals(const gsl_matrix *Kzx, const double *kxx, const gsl_matrix *p,
                      gsl_matrix *const *QK, gsl_matrix *MU, gsl_matrix *S2)
{
    size_t m = Kzx->size1, b = Kzx->size2, C = p->size1;
    gsl_blas_dgemm(CblasTrans, CblasTrans, 1.0, Kzx, p, 0.0, MU);
    for (size_t c = 0; c < C; c++)
        for (size_t i = 0; i < b; i++) {
            double q = 0.0;
            for (size_t j = 0; j < m; j++)
                q += gsl_matrix_get(Kzx, j, i) * gsl_matrix_get(QK[c], j, i);
            /* a difference of variances below 0 only by rounding */
            gsl_matrix_set(S2, i, c, fmax(kxx[i] + q, 0.0));
        }
}

int gpc_shard_add_rows(const gpc_kernel *k, const gsl_matrix *Z, const gsl_matrix *p,
                       gsl_matrix *const *Q, const gsl_matrix *Xb, const double *yb,
                       size_t first, gpc_shard_lik lik, const void *ctx, gpc_shard_stats *st)
{
    size_t m = Z->size1, b = Xb->size1, C = p->size1, np = st->nparams;
    gsl_matrix *Kzx = gpc_matrix_alloc(m, b), *MU = gpc_matrix_alloc(b, C),
               *S2 = gpc_matrix_alloc(b, C), *Gm = gpc_matrix_alloc(b, C),
               *Hm = gpc_matrix_alloc(b, C), *A = gpc_matrix_alloc(m, b),
               *KH = gpc_matrix_alloc(m, b), *dZ = gpc_matrix_alloc(m, Z->size2);
    gsl_matrix **QK = gpc_mallocarray(C, sizeof *QK);
    gsl_vector *kxx = gsl_vector_alloc(b);
    double *a = gpc_calloc(b, sizeof *a), *ds = gpc_mallocarray(np ? np : 1, sizeof *ds);
    int rc = GPC_OK;
    gpc_kernel_cross(k, Z, Xb, Kzx);
    gpc_kernel_diag(k, Xb, kxx);
    for (size_t c = 0; c < C; c++) {
        QK[c] = gpc_matrix_alloc(m, b);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, Q[c], Kzx, 0.0, QK[c]);
    }
    marginals(Kzx, kxx->data, p, QK, MU, S2);
    double lambda = 0.0;
    for (size_t i = 0; i < b && rc == GPC_OK; i++) {
        double *g = Gm->data + i * Gm->tda, *h = Hm->data + i * Hm->tda;
        double li = lik(ctx, C, yb[i], MU->data + i * MU->tda, S2->data + i * S2->tda, g, h);
        int finite = isfinite(li);
        for (size_t c = 0; c < C; c++)
            finite &= isfinite(g[c]) && isfinite(h[c]);
        if (!finite)
            rc = gpc_fail(GPC_ENUM, "row %zu: its expected log likelihood or a derivative is "
                          "not finite (mean %.3g, variance %.3g)", first + i + 1,
                          gsl_matrix_get(MU, i, 0), gsl_matrix_get(S2, i, 0));
        lambda += li;
    }
    if (rc == GPC_OK) {
        st->rows += b;
        st->lambda += lambda;
        /* G_c += Kzx g_c; H_c += Kzx diag(h_c) Kzx'; A = sum_c p_c g_c' + 2 QK_c diag(h_c) */
        gsl_blas_dgemm(CblasTrans, CblasTrans, 1.0, Gm, Kzx, 1.0, st->G);
        gsl_blas_dgemm(CblasTrans, CblasTrans, 1.0, p, Gm, 0.0, A);
        for (size_t c = 0; c < C; c++) {
            for (size_t j = 0; j < m; j++)
                for (size_t i = 0; i < b; i++) {
                    double hc = gsl_matrix_get(Hm, i, c);
                    gsl_matrix_set(KH, j, i, gsl_matrix_get(Kzx, j, i) * hc);
                    A->data[j * A->tda + i] += 2.0 * hc * gsl_matrix_get(QK[c], j, i);
                }
            gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, KH, Kzx, 1.0, st->H[c]);
        }
        for (size_t i = 0; i < b; i++)
            for (size_t c = 0; c < C; c++)
                a[i] += gsl_matrix_get(Hm, i, c);
        gpc_kernel_cross_contract(k, Z, Xb, A, ds);
        for (size_t j = 0; j < np; j++)
            st->dtheta[j] += ds[j];
        gpc_kernel_diag_contract(k, Xb, a, ds);
        for (size_t j = 0; j < np; j++)
            st->dtheta[j] += ds[j];
        gpc_kernel_cross_input_contract(k, Z, Xb, A, dZ);
        gsl_matrix_add(st->dZ, dZ);
    }
    for (size_t c = 0; c < C; c++)
        gsl_matrix_free(QK[c]);
    free(QK);
    gsl_matrix_free(Kzx);
    gsl_matrix_free(MU);
    gsl_matrix_free(S2);
    gsl_matrix_free(Gm);
    gsl_matrix_free(Hm);
    gsl_matrix_free(A);
    gsl_matrix_free(KH);
    gsl_matrix_free(dZ);
    gsl_vector_free(kxx);
    free(a);
    free(ds);
    return rc;
}
