#include "sparse/shard.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>

#include "base/alloc.h"
#include "base/err.h"
#include "kernels/class-kernels.h"
#include "liks/expect.h"
#include "liks/lik.h"

size_t gpc_shard_kernel_count(const gpc_kernel *k) { return gpc_kernel_copies(k); }

gpc_shard_span gpc_shard_classes(size_t nK, size_t C, size_t g)
{
    gpc_shard_span s = {nK == 1 ? 0 : g, nK == 1 ? C : 1};
    return s;
}

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
    st->kernel_grads = 1;
    st->input_grads = 1;
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

size_t gpc_shard_stats_packed(const gpc_shard_stats *st)
{
    return 2 + st->C * st->m + st->C * st->m * st->m + st->nparams + st->m * st->dim;
}

/* A matrix's entries to *at and on (dir > 0), or back from *at (dir < 0). */
static void move_matrix(gsl_matrix *A, double **at, int dir)
{
    for (size_t i = 0; i < A->size1; i++, *at += A->size2) {
        double *row = gsl_matrix_ptr(A, i, 0);
        for (size_t j = 0; j < A->size2; j++)
            if (dir > 0)
                (*at)[j] = row[j];
            else
                row[j] = (*at)[j];
    }
}

/* st into buf (dir > 0) or buf into st (dir < 0), field by field. */
static void move_stats(gpc_shard_stats *st, double *buf, int dir)
{
    double *at = buf + 2;
    if (dir > 0) {
        buf[0] = (double)st->rows; /* exact: counts stay far below 2^53 */
        buf[1] = st->lambda;
    } else {
        st->rows = (size_t)buf[0];
        st->lambda = buf[1];
    }
    move_matrix(st->G, &at, dir);
    for (size_t c = 0; c < st->C; c++)
        move_matrix(st->H[c], &at, dir);
    gsl_matrix_view dt = gsl_matrix_view_array(st->dtheta, 1, st->nparams ? st->nparams : 1);
    if (st->nparams)
        move_matrix(&dt.matrix, &at, dir);
    move_matrix(st->dZ, &at, dir);
}

void gpc_shard_stats_pack(const gpc_shard_stats *st, double *buf)
{
    move_stats((gpc_shard_stats *)st, buf, 1); /* read only when packing */
}

void gpc_shard_stats_unpack(gpc_shard_stats *st, const double *buf)
{
    move_stats(st, (double *)buf, -1); /* read only when unpacking */
}

int gpc_shard_stats_sum(gpc_comm *comm, gpc_shard_stats *st, int rc)
{
    rc = gpc_comm_status(comm, rc);
    if (rc != GPC_OK || gpc_comm_size(comm) == 1)
        return rc;
    size_t len = gpc_shard_stats_packed(st);
    double *buf = gpc_mallocarray(len, sizeof *buf);
    gpc_shard_stats_pack(st, buf);
    rc = gpc_comm_sum(comm, buf, len);
    if (rc == GPC_OK)
        gpc_shard_stats_unpack(st, buf);
    free(buf);
    return rc;
}

/* The marginals of the b rows, MU and S2 (b x C), from their whitened
 * kernel columns A = L^-1 Kzx (m x b), kxx, M and SA[c] = S_c A:
 *     mu_ic = a_i' m_c,   s2_ic = (kxx_i - a_i'a_i) + a_i' S_c a_i,
 * the Nystrom residual first: both parts are variances, so each is at
 * least 0 but for rounding, and neither is lost against the other. */
static void marginals(const gsl_matrix *A, const double *kxx, const gsl_matrix *M,
                      gsl_matrix *const *SA, gsl_matrix *MU, gsl_matrix *S2)
{
    size_t m = A->size1, b = A->size2, C = M->size1;
    gsl_blas_dgemm(CblasTrans, CblasTrans, 1.0, A, M, 0.0, MU);
    for (size_t i = 0; i < b; i++) {
        double aa = 0.0;
        for (size_t j = 0; j < m; j++)
            aa += gsl_matrix_get(A, j, i) * gsl_matrix_get(A, j, i);
        double resid = fmax(kxx[i] - aa, 0.0);
        for (size_t c = 0; c < C; c++) {
            double q = 0.0;
            for (size_t j = 0; j < m; j++)
                q += gsl_matrix_get(A, j, i) * gsl_matrix_get(SA[c], j, i);
            gsl_matrix_set(S2, i, c, resid + fmax(q, 0.0));
        }
    }
}

/* K = k(Z, Xb) and A = L^-1 K (m x b), SA[c] = S_c A for the C classes of S
 * and kxx = k(x, x) for the rows. */
static void whiten(const gpc_kernel *k, const gsl_matrix *Z, const gsl_matrix *L, size_t C,
                   gsl_matrix *const *S, const gsl_matrix *Xb, gsl_matrix *K, gsl_matrix *A,
                   gsl_matrix **SA, gsl_vector *kxx)
{
    gpc_kernel_cross_expanded(k, Z, Xb, K);
    gsl_matrix_memcpy(A, K);
    gpc_kernel_diag(k, Xb, kxx);
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, L, A);
    for (size_t c = 0; c < C; c++)
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, S[c], A, 0.0, SA[c]);
}

/* The rows' kernel columns K[g] and whitened columns A[g] for every kernel
 * g (m x b), kxx[g], and SA[c] = S_c A[g] for each class c of g. */
typedef struct {
    size_t nK, C;
    gpc_class_kernels *ck; /* the per-class copies, or NULL: k is shared */
    const gpc_kernel *k;
    gsl_matrix **K, **A, **SA;
    gsl_vector **kxx;
} whitened;

static const gpc_kernel *group_kernel(const whitened *w, size_t g)
{
    return w->ck ? w->ck->k[g] : w->k;
}

static void whitened_alloc(whitened *w, const gpc_kernel *k, size_t C, size_t m, size_t b)
{
    w->nK = gpc_shard_kernel_count(k);
    w->C = C;
    w->k = k;
    w->ck = w->nK > 1 ? gpc_class_kernels_alloc(k, C) : NULL;
    w->K = gpc_mallocarray(w->nK, sizeof *w->K);
    w->A = gpc_mallocarray(w->nK, sizeof *w->A);
    w->kxx = gpc_mallocarray(w->nK, sizeof *w->kxx);
    w->SA = gpc_mallocarray(C, sizeof *w->SA);
    for (size_t g = 0; g < w->nK; g++) {
        w->K[g] = gpc_matrix_alloc(m, b);
        w->A[g] = gpc_matrix_alloc(m, b);
        w->kxx[g] = gsl_vector_alloc(b);
    }
    for (size_t c = 0; c < C; c++)
        w->SA[c] = gpc_matrix_alloc(m, b);
}

static void whitened_free(whitened *w)
{
    for (size_t g = 0; g < w->nK; g++) {
        gsl_matrix_free(w->K[g]);
        gsl_matrix_free(w->A[g]);
        gsl_vector_free(w->kxx[g]);
    }
    for (size_t c = 0; c < w->C; c++)
        gsl_matrix_free(w->SA[c]);
    free(w->K);
    free(w->A);
    free(w->kxx);
    free(w->SA);
    gpc_class_kernels_free(w->ck);
}

/* The rows' whitened columns (into w) and their marginals MU and S2 (b x C). */
static void whiten_all(whitened *w, const gsl_matrix *Z, gsl_matrix *const *L,
                       const gsl_matrix *M, gsl_matrix *const *S, const gsl_matrix *Xb,
                       gsl_matrix *MU, gsl_matrix *S2)
{
    size_t m = Z->size1, b = Xb->size1;
    for (size_t g = 0; g < w->nK; g++) {
        gpc_shard_span sp = gpc_shard_classes(w->nK, w->C, g);
        gsl_matrix_const_view Mg = gsl_matrix_const_submatrix(M, sp.first, 0, sp.count, m);
        gsl_matrix_view MUg = gsl_matrix_submatrix(MU, 0, sp.first, b, sp.count),
                        S2g = gsl_matrix_submatrix(S2, 0, sp.first, b, sp.count);
        whiten(group_kernel(w, g), Z, L[g], sp.count, S + sp.first, Xb, w->K[g], w->A[g],
               w->SA + sp.first, w->kxx[g]);
        marginals(w->A[g], w->kxx[g]->data, &Mg.matrix, w->SA + sp.first, &MUg.matrix,
                  &S2g.matrix);
    }
}

void gpc_shard_marginals(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *const *L,
                         const gsl_matrix *M, gsl_matrix *const *S, const gsl_matrix *Xs,
                         gsl_matrix *mean, gsl_matrix *var)
{
    whitened w;
    whitened_alloc(&w, k, M->size1, Z->size1, Xs->size1);
    whiten_all(&w, Z, L, M, S, Xs, mean, var);
    whitened_free(&w);
}

/* The rows' likelihood terms into Gm and Hm (b x C); GPC_ENUM naming the
 * first row whose term is not finite. */
static int row_terms(const double *yb, size_t first, gpc_shard_lik lik, const void *ctx,
                     const gsl_matrix *MU, const gsl_matrix *S2, gsl_matrix *Gm, gsl_matrix *Hm,
                     double *lambda)
{
    size_t b = MU->size1, C = MU->size2;
    *lambda = 0.0;
    for (size_t i = 0; i < b; i++) {
        double *g = Gm->data + i * Gm->tda, *h = Hm->data + i * Hm->tda;
        double li = lik(ctx, C, yb[i], MU->data + i * MU->tda, S2->data + i * S2->tda, g, h);
        int finite = isfinite(li);
        for (size_t c = 0; c < C; c++)
            finite &= isfinite(g[c]) && isfinite(h[c]);
        if (!finite)
            return gpc_fail(GPC_ENUM, "row %zu: its expected log likelihood or a derivative "
                            "is not finite (mean %.3g, variance %.3g)", first + i + 1,
                            gsl_matrix_get(MU, i, 0), gsl_matrix_get(S2, i, 0));
        *lambda += li;
    }
    return GPC_OK;
}

/* The gradient through the rows' values of kernel k, whose classes are
 * those of M, SA, Gm and Hm (their rows or columns): with
 *     abar_i = sum_c (g_ic m_c + 2 h_ic (S_c - I) a_i)   (dlambda_i / da_i),
 * Kzx's adjoint is L'^-1 Abar and kxx's is sum_c h_ic.  Adds to k's
 * hyperparameters' block dtheta and to st->dZ. */
static void add_kernel_grads(const gpc_kernel *k, const gsl_matrix *Z, const gsl_matrix *L,
                             const gsl_matrix *M, const gsl_matrix *K, const gsl_matrix *A,
                             gsl_matrix *const *SA,
                             const gsl_matrix *Xb, const gsl_matrix *Gm, const gsl_matrix *Hm,
                             double *dtheta, gpc_shard_stats *st)
{
    size_t m = A->size1, b = A->size2, C = M->size1, np = gpc_kernel_nparams(k);
    gsl_matrix *Abar = gpc_matrix_alloc(m, b), *dZ = gpc_matrix_alloc(m, Z->size2);
    double *a = gpc_calloc(b, sizeof *a), *ds = gpc_mallocarray(np ? np : 1, sizeof *ds);
    gsl_blas_dgemm(CblasTrans, CblasTrans, 1.0, M, Gm, 0.0, Abar);
    for (size_t c = 0; c < C; c++)
        for (size_t j = 0; j < m; j++)
            for (size_t i = 0; i < b; i++) {
                double hc = gsl_matrix_get(Hm, i, c);
                Abar->data[j * Abar->tda + i] +=
                    2.0 * hc * (gsl_matrix_get(SA[c], j, i) - gsl_matrix_get(A, j, i));
            }
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasTrans, CblasNonUnit, 1.0, L, Abar);
    for (size_t i = 0; i < b; i++)
        for (size_t c = 0; c < C; c++)
            a[i] += gsl_matrix_get(Hm, i, c);
    gpc_kernel_cross_contract(k, Z, Xb, K, Abar, ds);
    for (size_t j = 0; j < np; j++)
        dtheta[j] += ds[j];
    gpc_kernel_diag_contract(k, Xb, a, ds);
    for (size_t j = 0; j < np; j++)
        dtheta[j] += ds[j];
    if (st->input_grads) {
        gpc_kernel_cross_input_contract(k, Z, Xb, K, Abar, dZ);
        gsl_matrix_add(st->dZ, dZ);
    }
    gsl_matrix_free(Abar);
    gsl_matrix_free(dZ);
    free(a);
    free(ds);
}

/* Kernel g's part of the sums: G_c += A g_c and H_c += A diag(h_c) A' for
 * its classes c, and its gradients. */
static void add_group(const whitened *w, size_t g, const gsl_matrix *Z, const gsl_matrix *L,
                      const gsl_matrix *M, const gsl_matrix *Xb, const gsl_matrix *Gm,
                      const gsl_matrix *Hm, gsl_matrix *AH, gpc_shard_stats *st)
{
    size_t m = Z->size1, b = Xb->size1;
    gpc_shard_span sp = gpc_shard_classes(w->nK, w->C, g);
    const gsl_matrix *A = w->A[g];
    gsl_matrix_const_view Gg = gsl_matrix_const_submatrix(Gm, 0, sp.first, b, sp.count),
                          Hg = gsl_matrix_const_submatrix(Hm, 0, sp.first, b, sp.count),
                          Mg = gsl_matrix_const_submatrix(M, sp.first, 0, sp.count, m);
    gsl_matrix_view G = gsl_matrix_submatrix(st->G, sp.first, 0, sp.count, m);
    gsl_blas_dgemm(CblasTrans, CblasTrans, 1.0, &Gg.matrix, A, 1.0, &G.matrix);
    for (size_t c = sp.first; c < sp.first + sp.count; c++) {
        for (size_t j = 0; j < m; j++)
            for (size_t i = 0; i < b; i++)
                gsl_matrix_set(AH, j, i, gsl_matrix_get(A, j, i) * gsl_matrix_get(Hm, i, c));
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, AH, A, 1.0, st->H[c]);
    }
    if (st->kernel_grads) {
        const gpc_kernel *kg = group_kernel(w, g);
        add_kernel_grads(kg, Z, L, &Mg.matrix, w->K[g], A, w->SA + sp.first, Xb, &Gg.matrix,
                         &Hg.matrix, st->dtheta + g * gpc_kernel_nparams(kg), st);
    }
}

int gpc_shard_add_rows(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *const *L,
                       const gsl_matrix *M, gsl_matrix *const *S, const gsl_matrix *Xb,
                       const double *yb, size_t first, gpc_shard_lik lik, const void *ctx,
                       gpc_shard_stats *st)
{
    size_t m = Z->size1, b = Xb->size1, C = M->size1;
    gsl_matrix *MU = gpc_matrix_alloc(b, C), *S2 = gpc_matrix_alloc(b, C),
               *Gm = gpc_matrix_alloc(b, C), *Hm = gpc_matrix_alloc(b, C),
               *AH = gpc_matrix_alloc(m, b);
    whitened w;
    whitened_alloc(&w, k, C, m, b);
    whiten_all(&w, Z, L, M, S, Xb, MU, S2);
    double lambda;
    int rc = row_terms(yb, first, lik, ctx, MU, S2, Gm, Hm, &lambda);
    if (rc == GPC_OK) {
        st->rows += b;
        st->lambda += lambda;
        for (size_t g = 0; g < w.nK; g++)
            add_group(&w, g, Z, L[g], M, Xb, Gm, Hm, AH, st);
    }
    whitened_free(&w);
    gsl_matrix_free(MU);
    gsl_matrix_free(S2);
    gsl_matrix_free(Gm);
    gsl_matrix_free(Hm);
    gsl_matrix_free(AH);
    return rc;
}
