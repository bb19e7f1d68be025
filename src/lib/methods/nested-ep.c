#include "methods/nested-ep.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "liks/mprobit.h"
#include "linalg/anderson.h"
#include "linalg/bmatrix.h"

/* LAPACK through OpenBLAS.  Row-major lower is column-major upper, hence "U". */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);

/* Sweeps remembered by Anderson acceleration. */
#define ANDERSON 5

/* Test cases predicted at a time: bounds the scratch to a few n x 256. */
#define PREDICT_BLOCK 256

/* The rounding floor of the site changes is looked for from FLOOR_FROM
 * times tol (see settled). */
#define FLOOR_FROM 1e4

static const gsl_matrix *kern(const gpc_nep *w, size_t c) { return w->K[w->per_class ? c : 0]; }

static size_t matrices(size_t n, size_t C, size_t nK)
{
    size_t threads = gpc_parallel_classes(n, C) ? (size_t)gpc_parallel_max_threads() : 1;
    /* K (nK), A_c then Y_c (C), M, S (the gradient's sum, or each class's
     * block with per-class kernels), and X and L per thread */
    return nK + C + 2 + 2 * threads;
}

size_t gpc_nep_workspace(size_t n, size_t C, size_t nparams, int per_class)
{
    size_t nK = per_class ? C : 1;
    size_t mat = gpc_size_mul(matrices(n, C, nK), gpc_size_mul(gpc_size_mul(n, n),
                                                                       sizeof(double)));
    /* vectors: 14 C n doubles (the sites, the map's value and change, the
     * posterior's vectors), 2 n C^2 (the marginal and cavity covariances),
     * 3 n, the n x nparams scratch, and Anderson's history of the 2 C n
     * site parameters */
    size_t vec = gpc_size_mul(gpc_size_mul(n, 14 * C + 2 * C * C + 3 + nparams),
                              sizeof(double));
    vec = gpc_size_add(vec, gpc_anderson_bytes(gpc_size_mul(2 * C, n), ANDERSON));
    return gpc_size_add(mat, vec);
}

gpc_nep *gpc_nep_alloc(size_t n, size_t C, size_t nparams, int per_class)
{
    gpc_nep *w = gpc_calloc(1, sizeof *w);
    w->n = n;
    w->C = C;
    w->nparams = nparams;
    w->per_class = per_class;
    w->nK = per_class ? C : 1;
    w->K = gpc_calloc(w->nK, sizeof *w->K);
    for (size_t k = 0; k < w->nK; k++)
        w->K[k] = gpc_matrix_alloc(n, n);
    w->Y = gpc_calloc(C, sizeof *w->Y);
    for (size_t c = 0; c < C; c++)
        w->Y[c] = gpc_matrix_alloc(n, n);
    w->M = gpc_matrix_alloc(n, n);
    w->S = gpc_matrix_alloc(n, n);
    w->class_parallel = gpc_parallel_classes(n, C);
    w->nscratch = w->class_parallel ? gpc_parallel_max_threads() : 1;
    w->Xs = gpc_calloc((size_t)w->nscratch, sizeof *w->Xs);
    w->Ls = gpc_calloc((size_t)w->nscratch, sizeof *w->Ls);
    for (int t = 0; t < w->nscratch; t++) {
        w->Xs[t] = gpc_matrix_alloc(n, n);
        w->Ls[t] = gpc_matrix_alloc(n, n);
    }
    w->X = w->Xs[0];
    w->L = w->Ls[0];
    w->sds = gpc_calloc((size_t)w->nscratch * (n ? n : 1), sizeof(double));
    w->Bg = gpc_matrix_alloc(n, nparams ? nparams : 1);
    size_t Cn = C * n > 0 ? C * n : 1, nC2 = n * C * C > 0 ? n * C * C : 1;
    /* the sites as one vector x = (alpha, beta), and Anderson's history */
    w->alpha = gpc_calloc(2 * Cn, sizeof(double));
    w->beta = w->alpha + Cn;
    w->g = gpc_calloc(2 * Cn, sizeof(double));
    w->r = gpc_calloc(2 * Cn, sizeof(double));
    w->anderson = gpc_anderson_alloc(2 * C * n, ANDERSON);
    w->pi = gpc_calloc(Cn, sizeof(double));
    w->nu = gpc_calloc(Cn, sizeof(double));
    w->s = gpc_calloc(n ? n : 1, sizeof(double));
    w->mu = gpc_calloc(Cn, sizeof(double));
    w->adiag = gpc_calloc(Cn, sizeof(double));
    w->ediag = gpc_calloc(Cn, sizeof(double));
    w->Sig = gpc_calloc(nC2, sizeof(double));
    w->cav_mean = gpc_calloc(Cn, sizeof(double));
    w->cav_cov = gpc_calloc(nC2, sizeof(double));
    w->b = gpc_calloc(Cn, sizeof(double));
    w->logZ = gpc_calloc(n ? n : 1, sizeof(double));
    w->tmp = gpc_calloc(Cn + n, sizeof(double));
    w->site = gpc_nep_site_alloc(C);
    w->damping = GPC_NEP_DAMPING;
    w->tol = GPC_NEP_TOL;
    w->floor_from = FLOOR_FROM * GPC_NEP_TOL;
    w->inner_tol = 1e-12;
    w->max_sweeps = 500;
    w->inner_max_sweeps = 100;
    return w;
}

void gpc_nep_free(gpc_nep *w)
{
    if (!w)
        return;
    for (size_t k = 0; k < w->nK; k++)
        gsl_matrix_free(w->K[k]);
    for (size_t c = 0; c < w->C; c++)
        gsl_matrix_free(w->Y[c]);
    free(w->K);
    free(w->Y);
    gsl_matrix_free(w->M);
    gsl_matrix_free(w->S);
    for (int t = 0; t < w->nscratch; t++) {
        gsl_matrix_free(w->Xs[t]);
        gsl_matrix_free(w->Ls[t]);
    }
    free(w->Xs);
    free(w->Ls);
    free(w->sds);
    gsl_matrix_free(w->Bg);
    free(w->alpha);
    free(w->g);
    free(w->r);
    gpc_anderson_free(w->anderson);
    free(w->pi);
    free(w->nu);
    free(w->s);
    free(w->mu);
    free(w->adiag);
    free(w->ediag);
    free(w->Sig);
    free(w->cav_mean);
    free(w->cav_cov);
    free(w->b);
    free(w->logZ);
    free(w->tmp);
    gpc_nep_site_free(w->site);
    free(w);
}

/* ---- the posterior from the sites ---- */

/* E_c = D_c^1/2 B_c^-1 D_c^1/2 (lower triangle) in place of B_c's factor
 * L, sd = D_c^1/2.  Not D_c - D_c A_c D_c: A_c = K_c - X'X carries rounding
 * of about eps K_ii, which that form leaves in E_c's smallest eigenvalues
 * (near 1 / (d K_ii n)), and S = sum_c E_c passes on to every marginal
 * covariance through S^-1: on 30 cases at log v0 = 12 they erred by 3e-5
 * relative, the site changes stalled near 3e-7 and the evidence's
 * gradient was off by hundreds of times its size.  From B_c^-1 the
 * marginals err by 3e-9 there, and the sweeps reach tol 1e-9 up to log v0
 * = 16 (test_nested_ep, test_large_signal). */
static void class_E_from_factor(gsl_matrix *L, const double *sd)
{
    gpc_bmatrix_inverse(L);
    gpc_bmatrix_scale(L, sd);
}

/* A_c = K_c - X'X with X = L^-1 D^1/2 K_c (L the factor of B_c), into
 * Y[c] (lower triangle), its diagonal into adiag, and E_c (see above) into
 * Y[c]'s upper triangle (transposed) and ediag, with thread t's scratch;
 * returns log|B_c| / 2, or NaN if B_c is not positive definite. */
static double class_covariance(gpc_nep *w, size_t c, int t)
{
    size_t n = w->n;
    const gsl_matrix *K = kern(w, c);
    gsl_matrix *X = w->Xs[t], *L = w->Ls[t];
    double *sd = w->sds + (size_t)t * n, *d = w->pi + c * n;
    for (size_t i = 0; i < n; i++)
        sd[i] = sqrt(d[i]);
    if (gpc_bmatrix_factor(K, sd, L) != 0)
        return NAN;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(X, i, j, sd[i] * gsl_matrix_get(K, i, j));
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, L, X);
    gsl_matrix_memcpy(w->Y[c], K);
    gsl_blas_dsyrk(CblasLower, CblasTrans, -1.0, X, 1.0, w->Y[c]);
    for (size_t i = 0; i < n; i++)
        w->adiag[c * n + i] = gsl_matrix_get(w->Y[c], i, i);
    double half_log_det = gpc_bmatrix_half_log_det(L);
    class_E_from_factor(L, sd);
    for (size_t i = 0; i < n; i++) {
        const double *Ei = gsl_matrix_const_ptr(L, i, 0);
        for (size_t j = 0; j < i; j++)
            gsl_matrix_set(w->Y[c], j, i, Ei[j]);
        w->ediag[c * n + i] = Ei[i];
    }
    return half_log_det;
}

/* The thread of a loop over classes (0 outside a parallel region). */
static int thread_of(const gpc_nep *w)
{
    int t = omp_get_thread_num();
    return t < w->nscratch ? t : 0;
}

/* mu = Sigma nu: mu_c = g_c + A_c D_c S^-1 sum_c' D_c' g_c', g_c = A_c nu_c
 * (A_c in the lower triangles of Y, M the factor of S). */
static void posterior_mean(gpc_nep *w)
{
    size_t n = w->n, C = w->C;
    gsl_vector_view r = gsl_vector_view_array(w->tmp, n);
    gsl_vector_set_zero(&r.vector);
    for (size_t c = 0; c < C; c++) {
        gsl_vector_view nu = gsl_vector_view_array(w->nu + c * n, n),
                        g = gsl_vector_view_array(w->mu + c * n, n);
        gsl_blas_dsymv(CblasLower, 1.0, w->Y[c], &nu.vector, 0.0, &g.vector);
        for (size_t i = 0; i < n; i++)
            w->tmp[i] += w->pi[c * n + i] * w->mu[c * n + i];
    }
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, w->M, &r.vector);
    gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->M, &r.vector);
    gsl_vector_view dz = gsl_vector_view_array(w->tmp + n, n);
    for (size_t c = 0; c < C; c++) {
        for (size_t i = 0; i < n; i++)
            w->tmp[n + i] = w->pi[c * n + i] * w->tmp[i];
        gsl_vector_view g = gsl_vector_view_array(w->mu + c * n, n);
        gsl_blas_dsymv(CblasLower, 1.0, w->Y[c], &dz.vector, 1.0, &g.vector);
    }
}

/* Y_c = M^-1 D_c A_c in place of A_c, and each case's C x C marginal
 * covariance delta_cc' A_c[i,i] + Y_c[:,i]'Y_c'[:,i].  With a shared
 * kernel the last class's row could come from Sigma_i 1 = K_ii 1 instead,
 * one solve fewer; but the blocks' rounding lies mostly along 1, where the
 * cavities do not see it, and that subtraction moves it into the class
 * differences (a thousandfold higher floor of the site changes;
 * bench/README). */
static void marginal_covariances(gpc_nep *w)
{
    size_t n = w->n, C = w->C;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel)
    for (size_t c = 0; c < C; c++) {
        gsl_matrix *Y = w->Y[c];
        const double *d = w->pi + c * n;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < i; j++)
                gsl_matrix_set(Y, j, i, gsl_matrix_get(Y, i, j));
        for (size_t i = 0; i < n; i++) {
            gsl_vector_view row = gsl_matrix_row(Y, i);
            gsl_vector_scale(&row.vector, d[i]);
        }
        gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->M, Y);
    }
    memset(w->Sig, 0, n * C * C * sizeof(double));
    for (size_t k = 0; k < n; k++)
        for (size_t c = 0; c < C; c++) {
            const double *yc = gsl_matrix_const_ptr(w->Y[c], k, 0);
            for (size_t e = 0; e <= c; e++) {
                const double *ye = gsl_matrix_const_ptr(w->Y[e], k, 0);
                for (size_t i = 0; i < n; i++)
                    w->Sig[(i * C + c) * C + e] += yc[i] * ye[i];
            }
        }
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < C; c++) {
            double *Si = w->Sig + i * C * C;
            Si[c * C + c] += w->adiag[c * n + i];
            for (size_t e = 0; e < c; e++)
                Si[e * C + c] = Si[c * C + e];
        }
}

/* b = nu - Pi mu (= K^-1 mu), case by case. */
static void form_b(gpc_nep *w)
{
    size_t n = w->n, C = w->C;
    for (size_t i = 0; i < n; i++) {
        double pm = 0.0;
        for (size_t c = 0; c < C; c++)
            pm += w->pi[c * n + i] * w->mu[c * n + i];
        for (size_t c = 0; c < C; c++) {
            size_t k = c * n + i;
            w->b[k] = w->nu[k] - w->pi[k] * (w->mu[k] - pm / w->s[i]);
        }
    }
}

/* Everything that follows from the sites pi, nu, s: the factors, 1/2 log
 * |I + K Pi|, the posterior mean and the cases' marginal covariances. */
static int posterior(gpc_nep *w)
{
    size_t n = w->n, C = w->C;
    double hl = 0.0, hc[C];
    w->has_fit = 0;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel)
    for (size_t c = 0; c < C; c++)
        hc[c] = class_covariance(w, c, thread_of(w));
    for (size_t c = 0; c < C; c++) {
        double h = hc[c];
        if (!isfinite(h))
            return gpc_fail(GPC_ENUM, "nested EP: B = I + D^1/2 K D^1/2 is not positive "
                            "definite: the kernel matrix is far from positive semi-definite; "
                            "add a jitter term to the kernel (e.g. 'ard+jitter')");
        hl += h;
        /* S += E_c, lower triangle, from Y[c]'s upper one */
        for (size_t i = 0; i < n; i++) {
            double *Mi = gsl_matrix_ptr(w->M, i, 0);
            for (size_t j = 0; j < i; j++)
                Mi[j] = (c ? Mi[j] : 0.0) + gsl_matrix_get(w->Y[c], j, i);
            Mi[i] = (c ? Mi[i] : 0.0) + w->ediag[c * n + i];
        }
    }
    gsl_matrix_memcpy(w->S, w->M);
    int nn = (int)n, lda = (int)w->M->tda, info = 0;
    if (n > 0)
        dpotrf_("U", &nn, w->M->data, &lda, &info, 1);
    if (info != 0)
        return gpc_fail(GPC_ENUM, "nested EP: the matrix sum_c E_c is not positive definite; "
                        "try smaller signal variances");
    hl += gpc_bmatrix_half_log_det(w->M);
    for (size_t i = 0; i < n; i++)
        hl -= 0.5 * log(w->s[i]);
    w->half_log_det = hl;
    posterior_mean(w);
    form_b(w);
    marginal_covariances(w);
    w->has_fit = 1;
    return GPC_OK;
}

/* Once the sweeps end: T_c = M^-1 E_c in place of Y_c, for the gradient
 * and the predictions, with E_c again from B_c's factor (per class a
 * factor, its inverse and a solve: 6 Cholesky equivalents).  T_c's other
 * form, M^-1 D_c - Y_c D_c, is E_c = D_c - D_c A_c D_c again, and had the
 * same rounding (class_E_from_factor). */
static int to_fitted_form(gpc_nep *w)
{
    size_t n = w->n, C = w->C;
    int failed = 0;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (w->class_parallel) reduction(| : failed)
    for (size_t c = 0; c < C; c++) {
        int t = thread_of(w);
        gsl_matrix *L = w->Ls[t], *T = w->Y[c];
        double *sd = w->sds + (size_t)t * n;
        for (size_t i = 0; i < n; i++)
            sd[i] = sqrt(w->pi[c * n + i]);
        if (gpc_bmatrix_factor(kern(w, c), sd, L) != 0) {
            failed = 1;
            continue;
        }
        class_E_from_factor(L, sd);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++) {
                double e = gsl_matrix_get(L, i, j);
                gsl_matrix_set(T, i, j, e);
                gsl_matrix_set(T, j, i, e);
            }
        gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->M, T);
    }
    if (failed)
        return gpc_fail(GPC_ENUM, "nested EP: B = I + D^1/2 K D^1/2 is not positive definite "
                        "at the fitted sites");
    return GPC_OK;
}

/* ---- the sites ---- */

/* The outer sites of case i from its inner ones. */
static void outer_site(gpc_nep *w, size_t i, size_t y)
{
    size_t n = w->n, C = w->C;
    double pi[C], nu[C];
    gpc_nep_site_outer(C, y, w->alpha + i * C, w->beta + i * C, pi, w->s + i, nu);
    for (size_t c = 0; c < C; c++) {
        w->pi[c * n + i] = pi[c];
        w->nu[c * n + i] = nu[c];
    }
}

/* Small symmetric positive definite matrices (C x C, row-major): the lower
 * factor in place and log |A|, or NaN. */
static double small_factor(size_t C, double *A)
{
    gsl_matrix_view L = gsl_matrix_view_array(A, C, C);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int st = gsl_linalg_cholesky_decomp1(&L.matrix);
    gsl_set_error_handler(old);
    if (st != GSL_SUCCESS)
        return NAN;
    double ld = 0.0;
    for (size_t c = 0; c < C; c++)
        ld += 2.0 * log(A[c * C + c]);
    return ld;
}

/* x' A^-1 x from the factor of A. */
static double small_quad(size_t C, const double *L, const double *x)
{
    double z[C], q = 0.0;
    for (size_t a = 0; a < C; a++) {
        double v = x[a];
        for (size_t c = 0; c < a; c++)
            v -= L[a * C + c] * z[c];
        z[a] = v / L[a * C + a];
        q += z[a] * z[a];
    }
    return q;
}

/* Case i's marginal mean, and its marginal precision P (its factor in F). */
static int case_marginal(const gpc_nep *w, size_t i, double *m, double *F, double *P,
                         double *logdet)
{
    size_t C = w->C;
    for (size_t c = 0; c < C; c++)
        m[c] = w->mu[c * w->n + i];
    memcpy(F, w->Sig + i * C * C, C * C * sizeof(double));
    *logdet = small_factor(C, F);
    if (!isfinite(*logdet))
        return GPC_ENUM;
    memcpy(P, F, C * C * sizeof(double));
    gsl_matrix_view Pv = gsl_matrix_view_array(P, C, C);
    gsl_linalg_cholesky_invert(&Pv.matrix);
    return GPC_OK;
}

/* The cavity of case i in natural parameters: Lambda = Sigma_i^-1 - Pi_i,
 * h = Sigma_i^-1 mu_i - nu_i. */
static void case_cavity(const gpc_nep *w, size_t i, const double *m, const double *P,
                        double *Lambda, double *h)
{
    size_t n = w->n, C = w->C;
    double s = w->s[i];
    for (size_t a = 0; a < C; a++) {
        double pa = w->pi[a * n + i], v = 0.0;
        for (size_t c = 0; c < C; c++) {
            double pc = w->pi[c * n + i];
            Lambda[a * C + c] = P[a * C + c] - ((a == c ? pa : 0.0) - pa * pc / s);
            v += P[a * C + c] * m[c];
        }
        h[a] = v - w->nu[a * n + i];
    }
}

/* The parallel EP map g = G(x): every case's inner EP from the current
 * posterior (its cavity) and its current sites, undamped, into g (the
 * alpha half, then the beta half, as x).  Cases with an improper cavity
 * keep their sites and are counted in skipped. */
static void parallel_update(gpc_nep *w, const size_t *cls, double *g)
{
    size_t n = w->n, C = w->C, Cn = C * n;
    double m[C], F[C * C], P[C * C], Lambda[C * C], h[C], ld;
    w->skipped = 0;
    memcpy(g, w->alpha, 2 * Cn * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        if (case_marginal(w, i, m, F, P, &ld) != GPC_OK) {
            w->skipped++;
            continue;
        }
        case_cavity(w, i, m, P, Lambda, h);
        if (gpc_nep_site_update(w->site, cls[i], Lambda, h, g + i * C, g + Cn + i * C,
                                w->inner_tol, w->inner_max_sweeps, NULL, NULL, NULL) != GPC_OK) {
            memcpy(g + i * C, w->alpha + i * C, C * sizeof(double));
            memcpy(g + Cn + i * C, w->beta + i * C, C * sizeof(double));
            w->skipped++;
            continue;
        }
        w->inner_sweeps += (unsigned long)gpc_nep_site_sweeps(w->site);
    }
}

/* Take the sites x (w->alpha, w->beta) and form their posterior. */
static int take_sites(gpc_nep *w, const size_t *cls)
{
    for (size_t i = 0; i < w->n; i++)
        outer_site(w, i, cls[i]);
    return posterior(w);
}

/* The largest change r asks for, relative to the size of the new value. */
static double largest_change(const double *g, const double *r, size_t N)
{
    double move = 0.0;
    for (size_t t = 0; t < N; t++)
        move = fmax(move, fabs(r[t]) / (1.0 + fabs(g[t])));
    return move;
}

/* Is x + step a proper set of sites (every alpha at least 0, all finite)? */
static int proper_step(const gpc_nep *w, const double *step)
{
    size_t Cn = w->C * w->n;
    for (size_t t = 0; t < 2 * Cn; t++) {
        double v = w->alpha[t] + step[t];
        if (!isfinite(v) || (t < Cn && v < 0.0))
            return 0;
    }
    return 1;
}

/* Case i's cavity moments from its natural parameters into cav_mean and
 * cav_cov, with log |Lambda| and h' Lambda^-1 h; GPC_ENUM if improper. */
static int store_cavity(gpc_nep *w, size_t i, const double *Lambda, const double *h,
                        double *ldl, double *q)
{
    size_t C = w->C;
    double *cm = w->cav_mean + i * C, *cv = w->cav_cov + i * C * C;
    memcpy(cv, Lambda, C * C * sizeof(double));
    *ldl = small_factor(C, cv);
    if (!isfinite(*ldl))
        return GPC_ENUM;
    *q = small_quad(C, cv, h);
    gsl_matrix_view Cv = gsl_matrix_view_array(cv, C, C);
    gsl_linalg_cholesky_invert(&Cv.matrix);
    for (size_t r = 0; r < C; r++) {
        double v = 0.0;
        for (size_t c = 0; c < C; c++)
            v += cv[r * C + c] * h[c];
        cm[r] = v;
    }
    return GPC_OK;
}

/* The log evidence at the current sites (module comment), with each case's
 * tilted mass from its inner EP at its cavity (sites unchanged), and the
 * cavities kept for leave-one-out. */
static int evidence_terms(gpc_nep *w, const size_t *cls)
{
    size_t n = w->n, C = w->C;
    double m[C], F[C * C], P[C * C], Lambda[C * C], h[C], a[C], b[C], ld;
    double total = -w->half_log_det;
    for (size_t k = 0; k < C * n; k++)
        total += 0.5 * w->nu[k] * w->mu[k];
    for (size_t i = 0; i < n; i++) {
        size_t y = cls[i];
        if (case_marginal(w, i, m, F, P, &ld) != GPC_OK)
            return gpc_fail(GPC_ENUM, "nested EP: the posterior covariance of training case "
                            "%zu is not positive definite", i + 1);
        case_cavity(w, i, m, P, Lambda, h);
        memcpy(a, w->alpha + i * C, C * sizeof(double));
        memcpy(b, w->beta + i * C, C * sizeof(double));
        int st = gpc_nep_site_update(w->site, y, Lambda, h, a, b, w->inner_tol,
                                     w->inner_max_sweeps, w->logZ + i, NULL, NULL);
        double ldl, q;
        if (st != GPC_OK || store_cavity(w, i, Lambda, h, &ldl, &q) != GPC_OK)
            return gpc_fail(GPC_ENUM, "nested EP: the cavity of training case %zu is "
                            "improper at convergence", i + 1);
        total += w->logZ[i] - 0.5 * ldl - 0.5 * ld - 0.5 * small_quad(C, F, m) + 0.5 * q;
    }
    w->log_evidence = total;
    w->has_cavities = 1;
    return GPC_OK;
}

static void zero_sites(gpc_nep *w, const size_t *cls)
{
    memset(w->alpha, 0, w->C * w->n * sizeof(double));
    memset(w->beta, 0, w->C * w->n * sizeof(double));
    for (size_t i = 0; i < w->n; i++)
        outer_site(w, i, cls[i]);
}

static int check_labels(const gpc_nep *w, const size_t *cls)
{
    for (size_t i = 0; i < w->n; i++)
        if (cls[i] >= w->C)
            return gpc_fail(GPC_EUSAGE, "nested EP: label %zu of case %zu is not a class "
                            "index below %zu", cls[i], i + 1, w->C);
    return GPC_OK;
}

/* Where the kernel is strong the sites are known to rounding only: the
 * largest change stops falling and wanders at a floor that grows with the
 * signal variance (on 30 cases about 1.5e-10 at e^7 and 2e-9 at e^14; 7e-9
 * on Wine at e^17, where ML-II drifts).  The sweeps are taken in blocks of
 * FLOOR_SWEEPS; a run whose block's largest change is within FLOOR_FROM
 * tol and not below half the block before's has reached that floor and
 * ends there, as close to the fixed point as rounding lets any run get
 * (test_nested_ep's test_floor: the evidence and gradient of a reachable
 * tolerance).  Converging runs shrink their changes by orders of magnitude
 * a block.  The floor is looked for from FLOOR_FROM times the default tol
 * (w->floor_from) even when a smaller tol is asked for, since rounding does
 * not shrink with it. */
#define FLOOR_SWEEPS 10

typedef struct {
    double block, last; /* the largest change of this block and of the one before */
    int sweeps;         /* sweeps of this block so far */
    int stalled;        /* the last full block did not halve the one before's */
} floor_watch;

/* Whether the run has settled: every site within tol, or at the floor. */
static int settled(gpc_nep *w, double move, floor_watch *f)
{
    f->block = fmax(f->block, move);
    int at_floor = 0;
    if (++f->sweeps == FLOOR_SWEEPS) {
        f->stalled = f->block >= 0.5 * f->last;
        at_floor = f->stalled && f->block <= fmax(FLOOR_FROM * w->tol, w->floor_from);
        f->last = f->block;
        f->block = 0.0;
        f->sweeps = 0;
    }
    if (w->skipped > 0)
        return 0;
    if (move <= w->tol)
        return 1;
    if (at_floor)
        gpc_info(3, "nested EP: the largest site change has stopped falling at %.3g (tol %g) "
                 "over the last %d sweeps: settled to rounding", f->last, w->tol,
                 2 * FLOOR_SWEEPS);
    return at_floor;
}

/* Sweeps of the parallel map, accelerated (anderson.h); a step that
 * leaves the sites improper, makes the posterior fail or grows the change
 * tenfold over the best so far falls back to the plain damped step and
 * forgets the history. */
static int run(gpc_nep *w, const size_t *cls)
{
    size_t N = 2 * w->C * w->n;
    int st = check_labels(w, cls);
    if (st != GPC_OK)
        return st;
    w->inner_sweeps = 0;
    w->has_cavities = 0;
    st = GPC_ENUM;
    if (w->warm) { /* the last run's sites, if they still make a posterior */
        for (size_t i = 0; i < w->n; i++)
            outer_site(w, i, cls[i]);
        st = posterior(w);
    }
    w->warm = 0;
    if (st != GPC_OK) {
        zero_sites(w, cls);
        if ((st = posterior(w)) != GPC_OK)
            return st;
    }
    gpc_anderson *aa = w->anderson;
    gpc_anderson_reset(aa);
    double best = INFINITY, *step = w->g; /* g is spent once r is formed */
    floor_watch fw = {0.0, INFINITY, 0, 0};
    double move = INFINITY;
    for (w->sweeps = 1; w->sweeps <= w->max_sweeps; w->sweeps++) {
        parallel_update(w, cls, w->g);
        for (size_t t = 0; t < N; t++)
            w->r[t] = w->g[t] - w->alpha[t];
        move = w->change = largest_change(w->g, w->r, N);
        /* cases with improper cavities keep their sites; if no other site
         * moves, every later sweep repeats this one */
        if (move == 0.0 && w->skipped > 0)
            return gpc_fail(GPC_ENUM, "nested EP: the cavities of %zu cases are improper at "
                            "these hyperparameters and no other site moves (sweep %d); try "
                            "smaller signal variances", w->skipped, w->sweeps);
        gpc_info(4, "nested EP sweep %d: largest site change %.3g, %zu cases skipped",
                 w->sweeps, move, w->skipped);
        if (settled(w, move, &fw)) {
            st = evidence_terms(w, cls);
            if (st == GPC_OK)
                st = to_fitted_form(w);
            w->warm = st == GPC_OK;
            gpc_info(3, "nested EP: %d sweeps, %lu inner sweeps", w->sweeps, w->inner_sweeps);
            return st;
        }
        if (move > 10.0 * best)
            gpc_anderson_reset(aa);
        best = fmin(best, move);
        gpc_anderson_push(aa, w->alpha, w->r);
        int accelerated = gpc_anderson_step(aa, w->r, w->damping, step) == 0 &&
                          proper_step(w, step);
        if (!accelerated) {
            for (size_t t = 0; t < N; t++)
                step[t] = w->damping * w->r[t];
            gpc_anderson_reset(aa);
            gpc_anderson_push(aa, w->alpha, w->r);
        }
        for (size_t t = 0; t < N; t++)
            w->alpha[t] += step[t];
        st = take_sites(w, cls);
        if (st != GPC_OK && accelerated) {
            /* back to the plain step from the same sites */
            for (size_t t = 0; t < N; t++)
                w->alpha[t] = aa->xold[t] + w->damping * aa->rold[t];
            gpc_anderson_reset(aa);
            st = take_sites(w, cls);
        }
        if (st != GPC_OK)
            break;
    }
    if (st != GPC_OK)
        return st;
    if (w->skipped > 0)
        return gpc_fail(GPC_ENUM, "nested EP did not settle in %d sweeps: the cavities of %zu "
                        "cases were improper in the last (their sites kept; largest change of "
                        "the others %.3g); try smaller signal variances or --damping=%g",
                        w->max_sweeps, w->skipped, move, w->damping / 2);
    /* stuck at a small change: rounding (the floor above, out of reach of
     * the rule); stuck at a large one: oscillation, which damping mends */
    if (fw.stalled && move <= 1e-3)
        return gpc_fail(GPC_ENUM, "nested EP did not settle in %d sweeps: the largest site "
                        "change stopped falling at %.3g (tol %g), the rounding of strong "
                        "kernels; try a larger --tol or smaller signal variances",
                        w->max_sweeps, move, w->tol);
    return gpc_fail(GPC_ENUM, "nested EP did not settle in %d sweeps (damping %g, largest site "
                    "change %.3g, tol %g); try --damping=%g", w->max_sweeps, w->damping, move,
                    w->tol, w->damping / 2);
}

/* ---- the gradient ---- */

/* E_c = M T_c (full) into E. */
static void form_E(const gpc_nep *w, size_t c, gsl_matrix *E)
{
    gsl_matrix_memcpy(E, w->Y[c]);
    gsl_blas_dtrmm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->M, E);
}

/* From the T_c = M^-1 E_c that the fit leaves in Y (to_fitted_form). */
static void gradient(gpc_nep *w, gpc_kernel *const *kernels, const gsl_matrix *X, double *grad)
{
    size_t n = w->n, C = w->C, p = w->nparams;
    gsl_vector *zero = gsl_vector_calloc(n ? n : 1);
    if (!w->per_class) {
        /* sum_c R_cc = S - sum_c T_c'T_c, then G = b b' summed - that, contracted with 1/2 */
        gsl_matrix *G = w->S;
        for (size_t c = 0; c < C; c++)
            gsl_blas_dsyrk(CblasLower, CblasTrans, -1.0, w->Y[c], 1.0, G);
        gsl_matrix_scale(G, -1.0);
        gsl_matrix_view Bm = gsl_matrix_view_array(w->b, C, n);
        gsl_blas_dsyrk(CblasLower, CblasTrans, 1.0, &Bm.matrix, 1.0, G);
        gpc_kernel_grad_contract(kernels[0], X, w->K[0], zero, 0.0, G, 0.5, zero, grad, w->Bg);
    } else {
        gsl_matrix *E = w->S; /* each class's block in turn */
        for (size_t c = 0; c < C; c++) {
            form_E(w, c, E);
            gsl_blas_dsyrk(CblasLower, CblasTrans, -1.0, w->Y[c], 1.0, E);
            gsl_vector_view bc = gsl_vector_view_array(w->b + c * n, n);
            gpc_kernel_grad_contract(kernels[c], X, w->K[c], &bc.vector, 0.5, E, -0.5, zero,
                                     grad + c * p, w->Bg);
        }
    }
    gsl_vector_free(zero);
}

int gpc_nep_evidence(gpc_nep *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                     const size_t *cls, double *log_evidence, double *grad)
{
    for (size_t k = 0; k < w->nK; k++) {
        if (gpc_kernel_nparams(kernels[k]) != w->nparams)
            return gpc_fail(GPC_EUSAGE, "kernel %zu has %zu hyperparameters, the nested EP "
                            "workspace expects %zu", k + 1, gpc_kernel_nparams(kernels[k]),
                            w->nparams);
        gpc_kernel_matrix(kernels[k], X, w->K[k]);
    }
    gpc_parallel_blas(w->n);
    int st = run(w, cls);
    if (st != GPC_OK)
        return st;
    *log_evidence = w->log_evidence;
    /* the gradient spends S and the scratch; the factors, Y and b stand */
    if (grad && w->nparams > 0)
        gradient(w, kernels, X, grad);
    int finite = isfinite(*log_evidence);
    for (size_t j = 0; grad && j < w->nparams * w->nK; j++)
        finite &= isfinite(grad[j]);
    if (!finite)
        return gpc_fail(GPC_ENUM, "the nested EP log evidence or its gradient is not finite at "
                        "these hyperparameters; try values of moderate size");
    return GPC_OK;
}

int gpc_nep_set_sites(gpc_nep *w, const size_t *cls, const double *alpha, const double *beta)
{
    int st = check_labels(w, cls);
    if (st != GPC_OK)
        return st;
    w->has_cavities = 0;
    gpc_parallel_blas(w->n);
    memcpy(w->alpha, alpha, w->C * w->n * sizeof(double));
    memcpy(w->beta, beta, w->C * w->n * sizeof(double));
    for (size_t i = 0; i < w->n; i++) {
        for (size_t c = 0; c < w->C; c++)
            if (!(w->alpha[i * w->C + c] >= 0.0) || !isfinite(w->beta[i * w->C + c]))
                return gpc_fail(GPC_EINPUT, "nested EP: the sites of training case %zu are "
                                "not a proper Gaussian (alpha below 0 or not finite)", i + 1);
        w->alpha[i * w->C + cls[i]] = w->beta[i * w->C + cls[i]] = 0.0;
        outer_site(w, i, cls[i]);
    }
    if ((st = posterior(w)) != GPC_OK || (st = to_fitted_form(w)) != GPC_OK)
        return st;
    /* the cavities, for leave-one-out */
    size_t C = w->C;
    double m[C], F[C * C], P[C * C], Lambda[C * C], h[C], ld, ldl, q;
    for (size_t i = 0; i < w->n; i++) {
        if (case_marginal(w, i, m, F, P, &ld) != GPC_OK)
            return gpc_fail(GPC_ENUM, "nested EP: the posterior covariance of training case "
                            "%zu is not positive definite", i + 1);
        case_cavity(w, i, m, P, Lambda, h);
        if (store_cavity(w, i, Lambda, h, &ldl, &q) != GPC_OK)
            return gpc_fail(GPC_ENUM, "nested EP: the cavity of training case %zu is "
                            "improper (its site is stronger than its posterior)", i + 1);
    }
    w->has_cavities = 1;
    return GPC_OK;
}

/* ---- predictions ---- */

/* m test cases (columns of Ks): with V_c = T_c k*_c (T_c = M^-1 E_c in Y
 * after a fit), E_c k*_c = M V_c, so
 *     cov_cc' = delta_cc' (k**_c - (M'k*_c)' V_c) + V_c' V_c',
 * and the mean is k*_c' b_c. */
static void predict_block(const gpc_nep *w, const gsl_matrix *const *Ks,
                          const gsl_vector *const *kss, size_t off, size_t m, gsl_matrix *mean,
                          gsl_matrix *cov)
{
    size_t n = w->n, C = w->C;
    gsl_matrix **V = gpc_calloc(C, sizeof *V);
    gsl_matrix *MK = gpc_matrix_alloc(n, m);
    for (size_t c = 0; c < C; c++) {
        const gsl_matrix *K = Ks[w->per_class ? c : 0];
        gsl_matrix_const_view Kb = gsl_matrix_const_submatrix(K, 0, off, n, m);
        V[c] = gpc_matrix_alloc(n, m);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, w->Y[c], &Kb.matrix, 0.0, V[c]);
        gsl_vector_const_view bc = gsl_vector_const_view_array(w->b + c * n, n);
        for (size_t j = 0; j < m; j++) {
            gsl_vector_const_view kc = gsl_matrix_const_column(&Kb.matrix, j);
            double mu;
            gsl_blas_ddot(&kc.vector, &bc.vector, &mu);
            gsl_matrix_set(mean, off + j, c, mu);
        }
        /* the diagonal term: k** - (M'k*)'V */
        gsl_matrix_memcpy(MK, &Kb.matrix);
        gsl_blas_dtrmm(CblasLeft, CblasLower, CblasTrans, CblasNonUnit, 1.0, w->M, MK);
        const gsl_vector *kd = kss[w->per_class ? c : 0];
        for (size_t j = 0; j < m; j++) {
            double q = 0.0;
            for (size_t i = 0; i < n; i++)
                q += gsl_matrix_get(MK, i, j) * gsl_matrix_get(V[c], i, j);
            gsl_matrix_set(cov, off + j, c * C + c, gsl_vector_get(kd, off + j) - q);
        }
    }
    for (size_t c = 0; c < C; c++)
        for (size_t e = 0; e <= c; e++)
            for (size_t j = 0; j < m; j++) {
                double q = 0.0;
                for (size_t i = 0; i < n; i++)
                    q += gsl_matrix_get(V[c], i, j) * gsl_matrix_get(V[e], i, j);
                double *x = gsl_matrix_ptr(cov, off + j, c * C + e);
                *x = (c == e ? *x : 0.0) + q;
                gsl_matrix_set(cov, off + j, e * C + c, *x);
            }
    for (size_t c = 0; c < C; c++)
        gsl_matrix_free(V[c]);
    free(V);
    gsl_matrix_free(MK);
}

void gpc_nep_predict(const gpc_nep *w, const gsl_matrix *const *Ks,
                     const gsl_vector *const *kss, gsl_matrix *mean, gsl_matrix *cov)
{
    size_t m = mean->size1;
    gpc_parallel_blas(w->n);
    for (size_t off = 0; off < m; off += PREDICT_BLOCK)
        predict_block(w, Ks, kss, off, m - off < PREDICT_BLOCK ? m - off : PREDICT_BLOCK, mean,
                      cov);
}

/* The tilted masses E[p(k | f)] of every class k under N(mu, Sigma), by the
 * inner EP from zero sites, normalised (their sum is one to EP's accuracy). */
static int averaged_probs(gpc_nep *w, const double *mu, const double *Sigma, double *p)
{
    size_t C = w->C;
    double F[C * C], Lambda[C * C], h[C], a[C], b[C], lz[C], top = -INFINITY, sum = 0.0;
    memcpy(F, Sigma, C * C * sizeof(double));
    if (!isfinite(small_factor(C, F)))
        return gpc_fail(GPC_ENUM, "nested EP: a predictive covariance is not positive "
                        "definite");
    memcpy(Lambda, F, C * C * sizeof(double));
    gsl_matrix_view Lv = gsl_matrix_view_array(Lambda, C, C);
    gsl_linalg_cholesky_invert(&Lv.matrix);
    for (size_t r = 0; r < C; r++) {
        h[r] = 0.0;
        for (size_t c = 0; c < C; c++)
            h[r] += Lambda[r * C + c] * mu[c];
    }
    for (size_t k = 0; k < C; k++) {
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        int st = gpc_nep_site_update(w->site, k, Lambda, h, a, b, w->inner_tol,
                                     w->inner_max_sweeps, lz + k, NULL, NULL);
        if (st != GPC_OK)
            return st;
        top = fmax(top, lz[k]);
    }
    for (size_t k = 0; k < C; k++)
        sum += p[k] = exp(lz[k] - top);
    for (size_t k = 0; k < C; k++)
        p[k] /= sum;
    return GPC_OK;
}

int gpc_nep_probs(gpc_nep *w, const gsl_matrix *mean, const gsl_matrix *cov, int plugin,
                  gsl_matrix *p)
{
    size_t C = w->C, m = mean->size1;
    if (plugin) {
        gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(C);
        double nu2[C];
        for (size_t c = 0; c < C; c++)
            nu2[c] = 1.0;
        for (size_t i = 0; i < m; i++)
            gpc_mprobit_probs(r, gsl_matrix_const_ptr(mean, i, 0), nu2, gsl_matrix_ptr(p, i, 0));
        gpc_mprobit_rule_free(r);
        return GPC_OK;
    }
    for (size_t i = 0; i < m; i++) {
        int st = averaged_probs(w, gsl_matrix_const_ptr(mean, i, 0),
                                gsl_matrix_const_ptr(cov, i, 0), gsl_matrix_ptr(p, i, 0));
        if (st != GPC_OK)
            return st;
    }
    return GPC_OK;
}
