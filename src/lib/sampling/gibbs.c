#include "sampling/gibbs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "hyper/evidence.h"
#include "hyper/prior.h"
#include "linalg/bmatrix.h"

/* LAPACK through OpenBLAS: eigenvalues and eigenvectors of a symmetric
 * matrix.  Row-major storage of a symmetric matrix is its own transpose;
 * the eigenvectors come back as the rows of the row-major array. */
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
             double *w, double *work, const int *lwork, int *iwork, const int *liwork,
             int *info, size_t jobz_len, size_t uplo_len);

static size_t kidx(const gpc_gibbs *w, size_t c) { return w->nK > 1 ? c : 0; }

/* Kept beside gpc_gibbs_alloc, whose allocations it counts, so that a
 * change to one is seen in the other. */
size_t gpc_gibbs_workspace(size_t n, size_t C, size_t nK)
{
    /* V, Lc and Lp per kernel, A, and dsyevd's 1 + 6 n + 2 n^2 doubles and
     * 3 + 5 n ints (its documented minimum, which it asks for) */
    size_t squares = gpc_size_add(gpc_size_mul(3, nK), 3);
    size_t bytes = gpc_size_mul(squares, gpc_doubles_bytes(n, n));
    /* lam per kernel; y, uc and f of length Cn; u, z and dsyevd's 6 n + 1 */
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(n, gpc_size_add(nK, 8)));
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(gpc_size_mul(C, n), 3));
    bytes = gpc_size_add(bytes, sizeof(double));
    return gpc_size_add(bytes, gpc_size_mul(gpc_size_add(gpc_size_mul(5, n), 3), sizeof(int)));
}

gpc_gibbs *gpc_gibbs_alloc(const gsl_matrix *X, size_t C, gpc_kernel **kernels, size_t nK)
{
    gpc_gibbs *w = gpc_calloc(1, sizeof *w);
    size_t n = X->size1;
    w->n = n;
    w->C = C;
    w->nK = nK;
    w->nparams = gpc_kernel_nparams(kernels[0]);
    w->kernels = kernels;
    w->X = X;
    w->theta = gpc_calloc(nK * w->nparams + 1, sizeof *w->theta);
    w->prior_mean = -3.0;
    w->prior_sd = 3.0;
    w->step = 0.1;
    w->sample_theta = 1;
    w->V = gpc_calloc(nK, sizeof *w->V);
    w->lam = gpc_calloc(nK, sizeof *w->lam);
    for (size_t k = 0; k < nK; k++) {
        w->V[k] = gpc_matrix_alloc(n, n);
        w->lam[k] = gpc_vector_alloc(n);
    }
    w->y = gpc_vector_calloc(C * n);
    w->uc = gpc_vector_calloc(C * n);
    w->f = gpc_vector_calloc(C * n);
    w->A = gpc_matrix_alloc(n, n);
    w->Lc = gpc_calloc(nK, sizeof *w->Lc);
    w->Lp = gpc_calloc(nK, sizeof *w->Lp);
    for (size_t k = 0; k < nK; k++) {
        w->Lc[k] = gpc_matrix_alloc(n, n);
        w->Lp[k] = gpc_matrix_alloc(n, n);
    }
    w->hlc = gpc_calloc(2 * nK, sizeof *w->hlc);
    w->hlp = w->hlc + nK;
    w->u = gpc_vector_alloc(n);
    w->z = gpc_vector_alloc(n);
    int nn = (int)n, query = -1, info, iq;
    double wq;
    dsyevd_("V", "U", &nn, w->A->data, &nn, w->u->data, &wq, &query, &iq, &query, &info, 1, 1);
    w->lwork = (int)wq + 1;
    w->liwork = iq + 1;
    w->work = gpc_mallocarray((size_t)w->lwork, sizeof *w->work);
    w->iwork = gpc_mallocarray((size_t)w->liwork, sizeof *w->iwork);
    return w;
}

void gpc_gibbs_free(gpc_gibbs *w)
{
    if (!w)
        return;
    for (size_t k = 0; k < w->nK; k++) {
        gsl_matrix_free(w->V[k]);
        gsl_vector_free(w->lam[k]);
    }
    free(w->V);
    free(w->lam);
    gsl_vector *v[] = {w->y, w->f, w->u, w->z, w->uc};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        gsl_vector_free(v[i]);
    gsl_matrix_free(w->A);
    for (size_t k = 0; k < w->nK; k++) {
        gsl_matrix_free(w->Lc[k]);
        gsl_matrix_free(w->Lp[k]);
    }
    free(w->Lc);
    free(w->Lp);
    free(w->hlc);
    free(w->theta);
    free(w->work);
    free(w->iwork);
    free(w);
}

static void set_kernels(gpc_gibbs *w, const double *theta)
{
    for (size_t k = 0; k < w->nK; k++)
        gpc_kernel_set_params(w->kernels[k], theta + k * w->nparams);
}

/* V[k] and lam[k] (the eigenvalues, clipped at 0) for the kernels at their
 * current hyperparameters. */
static int decompose(gpc_gibbs *w)
{
    int nn = (int)w->n, info;
    for (size_t k = 0; k < w->nK; k++) {
        gsl_matrix *V = w->V[k];
        gpc_kernel_matrix(w->kernels[k], w->X, V);
        dsyevd_("V", "U", &nn, V->data, &nn, w->lam[k]->data, w->work, &w->lwork, w->iwork,
                &w->liwork, &info, 1, 1);
        if (info != 0)
            return gpc_fail(GPC_ENUM, "the kernel matrix has no eigendecomposition (LAPACK "
                            "dsyevd info %d); try other hyperparameters", info);
        for (size_t i = 0; i < w->n; i++)
            gsl_vector_set(w->lam[k], i, fmax(gsl_vector_get(w->lam[k], i), 0.0));
    }
    return GPC_OK;
}

double gpc_gibbs_log_prior(const gpc_gibbs *w, const double *theta)
{
    double lp = 0.0;
    for (size_t k = 0; k < w->nK; k++)
        lp += gpc_log_prior(w->kernels[k], w->nparams, theta + k * w->nparams, w->prior_mean,
                            w->prior_sd, NULL);
    return lp;
}

/* The Cholesky factors of I + K_k into L[k] and 1/2 log|I + K_k| into
 * hl[k], with the kernels at their current hyperparameters; nonzero if one
 * is not positive definite. */
static int factor_all(gpc_gibbs *w, gsl_matrix **L, double *hl)
{
    gsl_vector_set_all(w->u, 1.0);
    for (size_t k = 0; k < w->nK; k++) {
        gpc_kernel_matrix(w->kernels[k], w->X, w->A);
        if (gpc_bmatrix_factor(w->A, w->u->data, L[k]) != 0)
            return 1;
        hl[k] = gpc_bmatrix_half_log_det(L[k]);
    }
    return 0;
}

/* sum_c log N(y_c | 0, I + K_c) without its 2 pi terms, from the factors L
 * and half log determinants hl. */
static double log_p_y(gpc_gibbs *w, gsl_matrix *const *L, const double *hl)
{
    double t = 0.0;
    for (size_t c = 0; c < w->C; c++) {
        size_t k = kidx(w, c);
        gsl_vector_const_view yc = gsl_vector_const_subvector(w->y, c * w->n, w->n);
        gsl_vector_memcpy(w->z, &yc.vector);
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, L[k], w->z);
        double q;
        gsl_blas_ddot(w->z, w->z, &q);
        t -= 0.5 * q + hl[k];
    }
    return t;
}

/* The Metropolis-Hastings target of theta given y, up to a constant. */
static double log_target(gpc_gibbs *w, const double *theta, gsl_matrix *const *L,
                         const double *hl)
{
    return gpc_gibbs_log_prior(w, theta) + log_p_y(w, L, hl);
}

/* z ~ N(0, 1) given z > a: by rejection from N(0, 1) for a <= 0 (accepted
 * at least half the time), else from GSL's Gaussian tail sampler. */
static double normal_above(gsl_rng *r, double a)
{
    if (a > 0.0)
        return gsl_ran_gaussian_tail(r, a, 1.0);
    double z;
    do
        z = gsl_ran_gaussian_ziggurat(r, 1.0);
    while (!(z > a));
    return z;
}

/* y_i | f_i in the cone of class t: the rivals below the winner's value,
 * then the winner above the largest rival. */
static void sample_y(gpc_gibbs *w, const size_t *cls, gsl_rng *r)
{
    size_t n = w->n, C = w->C;
    double *y = w->y->data;
    const double *f = w->f->data;
    for (size_t i = 0; i < n; i++) {
        size_t t = cls[i];
        double top = y[t * n + i], rival = -INFINITY;
        for (size_t k = 0; k < C; k++) {
            if (k == t)
                continue;
            double fk = f[k * n + i];
            y[k * n + i] = fk - normal_above(r, fk - top);
            rival = fmax(rival, y[k * n + i]);
        }
        y[t * n + i] = f[t * n + i] + normal_above(r, rival - f[t * n + i]);
    }
}

/* f_c = V' (s2 o V y_c + sqrt(s2) o z), z ~ N(0, I), s2 = lambda / (1 +
 * lambda).  With a shared kernel the classes go through V together (the
 * rows of C x n matrices: U = Y V', F = U V), which reads V twice a sweep
 * instead of twice a class. */
static void sample_f(gpc_gibbs *w, gsl_rng *r)
{
    size_t n = w->n, C = w->C;
    for (size_t k = 0; k < w->nK; k++) {
        size_t c0 = w->nK > 1 ? k : 0, nc = w->nK > 1 ? 1 : C;
        gsl_matrix_view Y = gsl_matrix_view_array(w->y->data + c0 * n, nc, n),
                        F = gsl_matrix_view_array(w->f->data + c0 * n, nc, n),
                        U = gsl_matrix_view_array(w->uc->data, nc, n);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &Y.matrix, w->V[k], 0.0, &U.matrix);
        for (size_t c = 0; c < nc; c++) {
            double *u = w->uc->data + c * n;
            for (size_t i = 0; i < n; i++) {
                double lam = w->lam[k]->data[i], s2 = lam / (1.0 + lam);
                u[i] = s2 * u[i] + sqrt(s2) * gsl_ran_gaussian_ziggurat(r, 1.0);
            }
        }
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &U.matrix, w->V[k], 0.0, &F.matrix);
    }
}

/* Random-walk Metropolis-Hastings on theta with f integrated out; the
 * current point's factors are kept, so a proposal costs one factor per
 * kernel (and, if accepted, an eigendecomposition). */
static int sample_theta(gpc_gibbs *w, gsl_rng *r)
{
    size_t p = w->nK * w->nparams;
    double *prop = gpc_mallocarray(p, sizeof *prop);
    for (size_t j = 0; j < p; j++)
        prop[j] = w->fixed && w->fixed[j] ? w->theta[j]
                                          : w->theta[j] + w->step * gsl_ran_gaussian_ziggurat(r, 1.0);
    double now = log_target(w, w->theta, w->Lc, w->hlc);
    set_kernels(w, prop);
    double t = factor_all(w, w->Lp, w->hlp) ? -INFINITY : log_target(w, prop, w->Lp, w->hlp);
    double u = gsl_rng_uniform_pos(r);
    w->proposed++;
    int st = GPC_OK;
    if (isfinite(t) && log(u) < t - now) {
        memcpy(w->theta, prop, p * sizeof *prop);
        w->accepted++;
        gsl_matrix **L = w->Lc; /* the proposal's factors become the current ones */
        w->Lc = w->Lp;
        w->Lp = L;
        memcpy(w->hlc, w->hlp, w->nK * sizeof *w->hlc);
        st = decompose(w);
    } else {
        set_kernels(w, w->theta);
    }
    free(prop);
    return st;
}

void gpc_gibbs_fix(gpc_gibbs *w, const unsigned char *fixed)
{
    w->fixed = fixed;
    w->sample_theta = 0;
    for (size_t j = 0; j < w->nK * w->nparams; j++)
        w->sample_theta |= !fixed || !fixed[j];
}

int gpc_gibbs_set(gpc_gibbs *w, const double *theta, const gsl_vector *f)
{
    memcpy(w->theta, theta, w->nK * w->nparams * sizeof *theta);
    set_kernels(w, theta);
    if (f)
        gsl_vector_memcpy(w->f, f);
    if (factor_all(w, w->Lc, w->hlc))
        return gpc_fail(GPC_ENUM, "I + K is not positive definite at these hyperparameters; "
                        "add a jitter term to the kernel or try others");
    return decompose(w);
}

int gpc_gibbs_start(gpc_gibbs *w, const double *theta, const size_t *cls, gsl_rng *r)
{
    gpc_parallel_blas(w->n);
    int st = gpc_gibbs_set(w, theta, NULL);
    if (st != GPC_OK)
        return st;
    gsl_vector_set_zero(w->f);
    /* a first point in every cone: the winner at 0, the rivals below it */
    for (size_t i = 0; i < w->n; i++)
        for (size_t k = 0; k < w->C; k++)
            gsl_vector_set(w->y, k * w->n + i, k == cls[i] ? 0.0 : -1.0);
    sample_y(w, cls, r);
    return GPC_OK;
}

int gpc_gibbs_sweep(gpc_gibbs *w, const size_t *cls, gsl_rng *r)
{
    sample_y(w, cls, r);
    if (w->sample_theta) {
        int st = sample_theta(w, r);
        if (st != GPC_OK)
            return st;
    }
    sample_f(w, r);
    return GPC_OK;
}

int gpc_gibbs_iterate(gpc_gibbs *w, const size_t *cls, gsl_rng *r)
{
    if (w->sample_theta) {
        int st = sample_theta(w, r);
        if (st != GPC_OK)
            return st;
    }
    sample_f(w, r);
    sample_y(w, cls, r);
    return GPC_OK;
}

int gpc_gibbs_resume(gpc_gibbs *w, const double *theta, const gsl_vector *y)
{
    gpc_parallel_blas(w->n);
    gsl_vector_memcpy(w->y, y);
    return gpc_gibbs_set(w, theta, NULL);
}

double gpc_gibbs_log_p_y(gpc_gibbs *w)
{
    return log_p_y(w, w->Lc, w->hlc) - 0.5 * (double)(w->C * w->n) * log(2.0 * M_PI);
}

void gpc_gibbs_forward_labels(gpc_gibbs *w, size_t *cls, gsl_rng *r)
{
    size_t n = w->n;
    for (size_t i = 0; i < n; i++) {
        size_t best = 0;
        for (size_t k = 0; k < w->C; k++) {
            double v = w->f->data[k * n + i] + gsl_ran_gaussian_ziggurat(r, 1.0);
            w->y->data[k * n + i] = v;
            if (v > w->y->data[best * n + i])
                best = k;
        }
        cls[i] = best;
    }
}

void gpc_gibbs_prior_f(gpc_gibbs *w, gsl_rng *r)
{
    for (size_t c = 0; c < w->C; c++) {
        size_t k = kidx(w, c);
        gsl_vector_view fc = gsl_vector_subvector(w->f, c * w->n, w->n);
        for (size_t i = 0; i < w->n; i++) {
            w->u->data[i] = sqrt(w->lam[k]->data[i]) * gsl_ran_gaussian_ziggurat(r, 1.0);
        }
        gsl_blas_dgemv(CblasTrans, 1.0, w->V[k], w->u, 0.0, &fc.vector);
    }
}
