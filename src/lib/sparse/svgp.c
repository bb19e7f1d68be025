#include "sparse/svgp.h"

#include <math.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "kernels/class-kernels.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/natgrad.h"

/* Rows per block of the sums over the data: the m x block cross-covariance
 * and its companions stay a few megabytes at m = 500. */
#define SVGP_BLOCK 512

static gsl_matrix **matrices(size_t C, size_t m)
{
    gsl_matrix **A = gpc_mallocarray(C, sizeof *A);
    for (size_t c = 0; c < C; c++)
        A[c] = gpc_matrix_alloc(m, m);
    return A;
}

static void matrices_free(gsl_matrix **A, size_t C)
{
    for (size_t c = 0; A && c < C; c++)
        gsl_matrix_free(A[c]);
    free(A);
}

gpc_svgp *gpc_svgp_alloc(size_t C, size_t m, size_t dim)
{
    gpc_svgp *s = gpc_calloc(1, sizeof *s);
    s->C = C;
    s->m = m;
    s->dim = dim;
    s->Z = gpc_matrix_alloc(m, dim);
    gsl_matrix_set_zero(s->Z);
    s->nK = 1;
    s->L = matrices(1, m);
    gsl_matrix_set_identity(s->L[0]);
    s->M = gpc_matrix_alloc(C, m);
    s->S = matrices(C, m);
    gpc_svgp_reset_q(s);
    return s;
}

void gpc_svgp_free(gpc_svgp *s)
{
    if (!s)
        return;
    gsl_matrix_free(s->Z);
    matrices_free(s->L, s->nK);
    gsl_matrix_free(s->M);
    matrices_free(s->S, s->C);
    free(s);
}

size_t gpc_svgp_bytes(size_t C, size_t m, size_t dim, size_t nparams)
{
    /* per class: S, the statistics' H, the fit's two saved S and dS, and
     * with a kernel per class its L and the sums for L's adjoint; the
     * block's m x SVGP_BLOCK matrices */
    size_t mm = gpc_doubles_bytes(m, m);
    size_t per_class = gpc_size_add(gpc_size_mul(mm, 8), gpc_doubles_bytes(4, m));
    size_t fixed = gpc_size_add(gpc_size_mul(mm, 4), gpc_doubles_bytes(m, dim + 8 * SVGP_BLOCK));
    return gpc_size_add(gpc_size_add(gpc_size_mul(per_class, C), fixed),
                        gpc_doubles_bytes(nparams + 1, 8));
}

void gpc_svgp_reset_q(gpc_svgp *s)
{
    gsl_matrix_set_zero(s->M);
    for (size_t c = 0; c < s->C; c++)
        gsl_matrix_set_identity(s->S[c]);
}

int gpc_svgp_factor(gpc_svgp *s, const gpc_kernel *k)
{
    size_t nK = gpc_shard_kernel_count(k);
    if (nK != s->nK) {
        matrices_free(s->L, s->nK);
        s->nK = nK;
        s->L = matrices(nK, s->m);
    }
    gpc_class_kernels *ck = nK > 1 ? gpc_class_kernels_alloc(k, s->C) : NULL;
    int rc = GPC_OK;
    s->jitter = 0.0;
    for (size_t g = 0; g < nK && rc == GPC_OK; g++) {
        double j;
        rc = gpc_inducing_factor(ck ? ck->k[g] : k, s->Z, s->L[g], &j);
        s->jitter = fmax(s->jitter, j);
    }
    gpc_class_kernels_free(ck);
    return rc;
}

int gpc_svgp_stats(const gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *X, const double *y,
                   gpc_svgp_lik lik, gpc_shard_stats *st)
{
    size_t n = X->size1;
    int rc = GPC_OK;
    gpc_shard_stats_zero(st);
    for (size_t first = 0; first < n && rc == GPC_OK; first += SVGP_BLOCK) {
        size_t b = n - first < SVGP_BLOCK ? n - first : SVGP_BLOCK;
        gsl_matrix_const_view Xb = gsl_matrix_const_submatrix(X, first, 0, b, X->size2);
        rc = gpc_shard_add_rows(k, s->Z, s->L, s->M, s->S, &Xb.matrix, y + first, first, lik.fn,
                                lik.ctx, st);
    }
    return rc;
}

/* ---- the full-batch fit of q ------------------------------------------ */

/* What a step can be taken back to: q, the bound's gradient in it and the
 * inverses of the S_c. */
typedef struct {
    gsl_matrix *M, **S, *dM, **dS, **Sinv;
    double bound;
} q_point;

static void q_point_alloc(q_point *a, size_t C, size_t m)
{
    a->M = gpc_matrix_alloc(C, m);
    a->dM = gpc_matrix_alloc(C, m);
    a->S = matrices(C, m);
    a->dS = matrices(C, m);
    a->Sinv = matrices(C, m);
}

static void q_point_free(q_point *a, size_t C)
{
    gsl_matrix_free(a->M);
    gsl_matrix_free(a->dM);
    matrices_free(a->S, C);
    matrices_free(a->dS, C);
    matrices_free(a->Sinv, C);
}

static void q_point_copy(q_point *to, const q_point *from, size_t C)
{
    gsl_matrix_memcpy(to->M, from->M);
    gsl_matrix_memcpy(to->dM, from->dM);
    for (size_t c = 0; c < C; c++) {
        gsl_matrix_memcpy(to->S[c], from->S[c]);
        gsl_matrix_memcpy(to->dS[c], from->dS[c]);
        gsl_matrix_memcpy(to->Sinv[c], from->Sinv[c]);
    }
    to->bound = from->bound;
}

/* The bound and its gradient in q at the q of s, into a (whose M and S are
 * set from s). */
static int evaluate(gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *X, const double *y,
                    gpc_svgp_lik lik, gpc_shard_stats *st, q_point *a)
{
    int rc = gpc_svgp_stats(s, k, X, y, lik, st);
    if (rc == GPC_OK)
        rc = gpc_bound_eval(k, s->Z, s->L, s->M, s->S, st, 1.0, &a->bound, a->dM,
                            a->dS, a->Sinv, NULL, NULL);
    if (rc == GPC_OK) {
        gsl_matrix_memcpy(a->M, s->M);
        for (size_t c = 0; c < s->C; c++)
            gsl_matrix_memcpy(a->S[c], s->S[c]);
    }
    return rc;
}

/* q of s moved by a natural step of size rho from the point a. */
static int step(gpc_svgp *s, const q_point *a, double rho)
{
    int rc = GPC_OK;
    for (size_t c = 0; c < s->C && rc == GPC_OK; c++) {
        gsl_vector_view mc = gsl_matrix_row(s->M, c);
        gsl_vector_const_view dm = gsl_matrix_const_row(a->dM, c);
        rc = gpc_natgrad_step(&mc.vector, s->S[c], a->Sinv[c], &dm.vector, a->dS[c], rho);
    }
    return rc;
}

/* s's q set to the point a. */
static void restore(gpc_svgp *s, const q_point *a)
{
    gsl_matrix_memcpy(s->M, a->M);
    for (size_t c = 0; c < s->C; c++)
        gsl_matrix_memcpy(s->S[c], a->S[c]);
}

/* Steps shorter than this are not worth taking: the bound has stopped
 * rising by more than rounding. */
#define RHO_MIN 1e-6

int gpc_svgp_fit_q(gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *X, const double *y,
                   gpc_svgp_lik lik, const gpc_svgp_fit_opts *o, gpc_svgp_fit_result *r)
{
    size_t C = s->C;
    gpc_parallel_blas(s->m); /* the m x m work: one thread below the parallel threshold */
    gpc_shard_stats *st = gpc_shard_stats_alloc(s->m, C, s->dim, 0);
    st->kernel_grads = 0;
    q_point cur, next;
    q_point_alloc(&cur, C, s->m);
    q_point_alloc(&next, C, s->m);
    r->steps = 0;
    r->converged = 0;
    int rc = evaluate(s, k, X, y, lik, st, &cur);
    double rho = 1.0;
    while (rc == GPC_OK && !r->converged && r->steps < o->max_steps && rho >= RHO_MIN) {
        r->steps++;
        int ok = step(s, &cur, rho) == GPC_OK && evaluate(s, k, X, y, lik, st, &next) == GPC_OK;
        /* a rise lost in rounding counts as none, not as a failed step */
        double slack = 1e-14 * (1.0 + fabs(cur.bound));
        if (!ok || !(next.bound >= cur.bound - slack)) {
            restore(s, &cur);
            rho *= 0.5;
            continue;
        }
        r->converged = next.bound - cur.bound <= o->tol * (1.0 + fabs(next.bound));
        q_point_copy(&cur, &next, C);
        rho = fmin(1.0, 2.0 * rho);
    }
    /* a step size that fell to RHO_MIN means no step raises the bound any
     * more: the optimum as far as rounding can tell */
    if (rc == GPC_OK && rho < RHO_MIN)
        r->converged = 1;
    if (rc == GPC_OK) {
        restore(s, &cur);
        r->bound = cur.bound;
    }
    q_point_free(&cur, C);
    q_point_free(&next, C);
    gpc_shard_stats_free(st);
    return rc;
}

int gpc_svgp_gradient(const gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *X,
                      const double *y, gpc_svgp_lik lik, double *bound, double *dtheta,
                      gsl_matrix *dZ)
{
    gpc_parallel_blas(s->m);
    gpc_shard_stats *st = gpc_shard_stats_alloc(s->m, s->C, s->dim, gpc_kernel_nparams(k));
    st->kernel_grads = dtheta || dZ;
    int rc = gpc_svgp_stats(s, k, X, y, lik, st);
    if (rc == GPC_OK)
        rc = gpc_bound_eval(k, s->Z, s->L, s->M, s->S, st, 1.0, bound, NULL, NULL, NULL,
                            dtheta, dZ);
    gpc_shard_stats_free(st);
    return rc;
}

void gpc_svgp_state_get(const gpc_svgp *s, gsl_matrix *state)
{
    for (size_t c = 0; c < s->C; c++)
        for (size_t j = 0; j < s->m; j++) {
            size_t col = c * (s->m + 1);
            gsl_matrix_set(state, j, col, gsl_matrix_get(s->M, c, j));
            for (size_t l = 0; l < s->m; l++)
                gsl_matrix_set(state, j, col + 1 + l, gsl_matrix_get(s->S[c], j, l));
        }
}

void gpc_svgp_state_set(gpc_svgp *s, const gsl_matrix *state)
{
    for (size_t c = 0; c < s->C; c++)
        for (size_t j = 0; j < s->m; j++) {
            size_t col = c * (s->m + 1);
            gsl_matrix_set(s->M, c, j, gsl_matrix_get(state, j, col));
            for (size_t l = 0; l < s->m; l++)
                gsl_matrix_set(s->S[c], j, l, gsl_matrix_get(state, j, col + 1 + l));
        }
}

void gpc_svgp_predict(const gpc_svgp *s, const gpc_kernel *k, const gsl_matrix *Xs,
                      gsl_matrix *mean, gsl_matrix *var)
{
    gpc_parallel_blas(s->m);
    gpc_shard_marginals(k, s->Z, s->L, s->M, s->S, Xs, mean, var);
}
