/* The sparse bound with the softmax likelihood (sparse/softmax-lik):
 * - it is the dense variational method when nothing is sparse: with the
 *   inducing inputs at the training inputs, three classes sharing one
 *   kernel and q(v) iterated to its optimum by natural steps, the bound and
 *   the latent marginals are those of an independent dense fit, maximising
 *   sum_i E_q[log softmax_(y_i)(f_i)] - sum_c KL(N(m_c, S_c) || N(0, K))
 *   over q(F) = prod_c N(m_c, S_c) by the fixed point of Opper & Archambeau
 *   (2009) in each class, S_c = (K^-1 + diag(lambda_c))^-1, m_c = K nu_c,
 *   lambda_ic = -2 h_ic, nu_ic = g_ic (the expectations by the same rule,
 *   the algebra the test's own);
 * - the bound's gradient in m_c, S_c, the hyperparameters and Z against
 *   fourth-order differences, with fewer inducing inputs than cases;
 * - two shards add up to one; a label that is no class is reported with
 *   its row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "liks/lse.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/natgrad.h"
#include "sparse/shard.h"
#include "sparse/softmax-lik.h"
#include "random_matrix.h"
#include "sparse_bound.h"
#include "tap.h"

#define NC 3 /* classes */

/* ---- the dense fit ------------------------------------------------------ */

/* One class's q(f_c) = N(K nu, (K^-1 + diag(lam))^-1): its marginals mu,
 * s2 and KL(q || N(0, K)), in the stable form of Rasmussen & Williams
 * (3.26-3.29): with R = diag(sqrt(lam)) and B = I + R K R, S = K - K R B^-1
 * R K and KL = 1/2 (nu' K nu - tr(R B^-1 R K) + log|B|), so K is never
 * inverted. */
static double dense_class(const gsl_matrix *K, const double *lam, const double *nu, double *mu,
                          double *s2)
{
    size_t n = K->size1;
    gsl_matrix *B = gsl_matrix_alloc(n, n), *RK = gsl_matrix_alloc(n, n),
               *BRK = gsl_matrix_alloc(n, n);
    gsl_vector_const_view nv = gsl_vector_const_view_array(nu, n);
    gsl_vector_view mv = gsl_vector_view_array(mu, n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double rk = sqrt(lam[i]) * gsl_matrix_get(K, i, j);
            gsl_matrix_set(RK, i, j, rk);
            gsl_matrix_set(B, i, j, (i == j) + rk * sqrt(lam[j]));
        }
    gsl_linalg_cholesky_decomp1(B);
    gsl_matrix_memcpy(BRK, RK);
    for (size_t j = 0; j < n; j++) {
        gsl_vector_view col = gsl_matrix_column(BRK, j);
        gsl_linalg_cholesky_svx(B, &col.vector);
    }
    gsl_blas_dgemv(CblasNoTrans, 1.0, K, &nv.vector, 0.0, &mv.vector);
    double ldB = 0.0, trace = 0.0, quad;
    for (size_t i = 0; i < n; i++) {
        double v = gsl_matrix_get(K, i, i);
        for (size_t l = 0; l < n; l++) /* (K R B^-1 R K)_ii */
            v -= gsl_matrix_get(RK, l, i) * gsl_matrix_get(BRK, l, i);
        s2[i] = v;
        ldB += 2 * log(gsl_matrix_get(B, i, i));
        trace += sqrt(lam[i]) * gsl_matrix_get(BRK, i, i);
    }
    gsl_blas_ddot(&nv.vector, &mv.vector, &quad);
    gsl_matrix_free(B);
    gsl_matrix_free(RK);
    gsl_matrix_free(BRK);
    return 0.5 * (quad - trace + ldB);
}

#define DAMP 0.3

/* The dense fit's bound (NaN if the fixed point did not settle); mu and s2
 * (n x NC, row-major) its marginals. */
static double dense_fit(gpc_lse_work *w, const gsl_matrix *K, const double *y, double *mu,
                        double *s2)
{
    size_t n = K->size1;
    double *lam = calloc(NC * n, sizeof *lam), *nu = calloc(NC * n, sizeof *nu),
           *cm = malloc(n * sizeof *cm), *cs = malloc(n * sizeof *cs), kl = 0.0, sumE = 0.0;
    int converged = 0;
    for (int it = 0; it < 20000; it++) {
        kl = 0.0;
        for (size_t c = 0; c < NC; c++) {
            kl += dense_class(K, lam + c * n, nu + c * n, cm, cs);
            for (size_t i = 0; i < n; i++) {
                mu[i * NC + c] = cm[i];
                s2[i * NC + c] = cs[i];
            }
        }
        double move = 0.0;
        sumE = 0.0;
        for (size_t i = 0; i < n; i++) {
            double g[NC], h[NC];
            sumE += gpc_shard_softmax_lik(w, NC, y[i], mu + i * NC, s2 + i * NC, g, h);
            for (size_t c = 0; c < NC; c++) {
                /* damped: the plain fixed point can oscillate */
                double *l = lam + c * n + i, *v = nu + c * n + i;
                double l2 = (1 - DAMP) * *l - DAMP * 2 * h[c], v2 = (1 - DAMP) * *v + DAMP * g[c];
                move = fmax(move, fmax(fabs(l2 - *l), fabs(v2 - *v)));
                *l = l2;
                *v = v2;
            }
        }
        if (move < 1e-14) {
            converged = 1;
            break;
        }
    }
    free(lam);
    free(nu);
    free(cm);
    free(cs);
    return converged ? sumE - kl : NAN;
}

/* ---- the sparse bound --------------------------------------------------- */

typedef struct {
    gpc_kernel *k;
    gsl_matrix *Z, *X, *M, *S[NC];
    double *y;
    gpc_lse_work *w;
} problem;

/* The bound at pr, with its gradients where the pointers are not NULL. */
static double bound(problem *pr, gsl_matrix *dM, gsl_matrix **dS, double *dtheta, gsl_matrix *dZ)
{
    return sparse_bound(pr->k, pr->Z, pr->M, pr->S, pr->X, pr->y, gpc_shard_softmax_lik, pr->w,
                        1.0, dM, dS, dtheta, dZ);
}

/* Labels 0 .. NC - 1 from the inputs: the largest of three directions, with
 * some noise so that the classes overlap. */
static double *labels(gsl_rng *r, const gsl_matrix *X)
{
    size_t n = X->size1;
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        double a = gsl_matrix_get(X, i, 0), b = gsl_matrix_get(X, i, 1);
        double s[NC] = {a, b, -a - b}, best = -INFINITY;
        for (size_t c = 0; c < NC; c++) {
            s[c] += 0.5 * gsl_rng_uniform(r);
            if (s[c] > best) {
                best = s[c];
                y[i] = (double)c;
            }
        }
    }
    return y;
}

/* Natural steps of size rho on every class from the prior, rho halved while
 * a step would leave a precision indefinite, until the gradient in q is
 * below tol; the number of steps, or -1. */
static int iterate_q(problem *pr, double rho, double tol, double *elbo, double *grad)
{
    size_t m = pr->Z->size1;
    gsl_matrix *dM = gsl_matrix_alloc(NC, m), *dS[NC];
    for (size_t c = 0; c < NC; c++)
        dS[c] = gsl_matrix_alloc(m, m);
    int steps = -1;
    for (int it = 0; it < 2000; it++) {
        *elbo = bound(pr, dM, dS, NULL, NULL);
        double g = 0.0;
        for (size_t i = 0; i < NC * m; i++)
            g = fmax(g, fabs(dM->data[i]));
        for (size_t c = 0; c < NC; c++)
            for (size_t i = 0; i < m * m; i++)
                g = fmax(g, fabs(dS[c]->data[i]));
        *grad = g;
        if (g < tol) {
            steps = it;
            break;
        }
        for (size_t c = 0; c < NC; c++) {
            gsl_vector_view mc = gsl_matrix_row(pr->M, c), dmc = gsl_matrix_row(dM, c);
            for (double r = rho; r > 1e-6; r /= 2)
                if (gpc_natgrad_step(&mc.vector, pr->S[c], NULL, &dmc.vector, dS[c], r) == GPC_OK)
                    break;
        }
    }
    for (size_t c = 0; c < NC; c++)
        gsl_matrix_free(dS[c]);
    gsl_matrix_free(dM);
    return steps;
}

static void check_dense(gsl_rng *r, const char *spec, size_t n)
{
    problem pr = {0};
    pr.X = random_matrix(r, n, 2);
    pr.y = labels(r, pr.X);
    pr.w = gpc_lse_work_alloc(NC);
    gpc_kernel_parse(spec, 2, &pr.k);
    double th[3] = {1.0, 1.5, 0.0}; /* as in test_sparse_dense: K well conditioned */
    gpc_kernel_set_params(pr.k, th);
    gsl_matrix *K = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(pr.k, pr.X, K);
    double *mu = malloc(n * NC * sizeof *mu), *s2 = malloc(n * NC * sizeof *s2);
    double dense = dense_fit(pr.w, K, pr.y, mu, s2);

    pr.Z = gsl_matrix_alloc(n, 2);
    gsl_matrix_memcpy(pr.Z, pr.X);
    pr.M = gsl_matrix_calloc(NC, n);
    for (size_t c = 0; c < NC; c++) {
        pr.S[c] = gsl_matrix_alloc(n, n);
        gsl_matrix_set_identity(pr.S[c]);
    }
    double elbo, grad, jitter;
    int steps = iterate_q(&pr, 1.0, 1e-10, &elbo, &grad);
    TEST_OK(steps > 0, "%s, n = %zu, C = %d, Z = X: natural steps reach q's optimum (%d steps, "
            "gradient %.2g)", spec, n, NC, steps, grad);
    TEST_CLOSE(elbo, dense, 1e-8, 0, "%s, Z = X: the sparse bound at its optimum is the dense "
               "variational fit's (%.10g)", spec, dense);
    /* the marginals of f_c = L v_c */
    gpc_inducing_factor(pr.k, pr.Z, L, &jitter);
    TEST_OK(jitter == 0.0, "%s: K_ZZ factors without jitter", spec);
    gsl_matrix *LS = gsl_matrix_alloc(n, n), *V = gsl_matrix_alloc(n, n);
    gsl_vector *f = gsl_vector_alloc(n);
    double em = 0.0, ev = 0.0;
    for (size_t c = 0; c < NC; c++) {
        gsl_vector_view mc = gsl_matrix_row(pr.M, c);
        gsl_blas_dgemv(CblasNoTrans, 1.0, L, &mc.vector, 0.0, f);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, L, pr.S[c], 0.0, LS);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, LS, L, 0.0, V);
        for (size_t i = 0; i < n; i++) {
            em = fmax(em, fabs(gsl_vector_get(f, i) - mu[i * NC + c]));
            ev = fmax(ev, fabs(gsl_matrix_get(V, i, i) - s2[i * NC + c]) / s2[i * NC + c]);
        }
    }
    TEST_CLOSE(em, 0, 0, 1e-7, "%s, Z = X: the latent means are the dense fit's (worst %.2g)",
               spec, em);
    TEST_CLOSE(ev, 0, 0, 1e-7, "%s, Z = X: the latent variances are the dense fit's (worst "
               "%.2g)", spec, ev);
    gsl_matrix_free(LS);
    gsl_matrix_free(V);
    gsl_vector_free(f);
    gsl_matrix_free(K);
    gsl_matrix_free(L);
    free(mu);
    free(s2);
    for (size_t c = 0; c < NC; c++)
        gsl_matrix_free(pr.S[c]);
    gsl_matrix_free(pr.M);
    gsl_matrix_free(pr.X);
    gsl_matrix_free(pr.Z);
    free(pr.y);
    gpc_kernel_free(pr.k);
    gpc_lse_work_free(pr.w);
}

/* ---- gradients against differences ------------------------------------- */

static double *theta;

/* Fourth-order central difference of the bound in *x and, if x2 is not
 * NULL, *x2 moved with it (a symmetric pair of S). */
static double diff(problem *pr, double *x, double *x2, int is_theta)
{
    static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
    double x0 = *x, h = 1e-4, d = 0.0;
    for (int i = 0; i < 4; i++) {
        *x = x0 + step[i] * h;
        if (x2)
            *x2 = *x;
        if (is_theta)
            gpc_kernel_set_params(pr->k, theta);
        d += coef[i] * bound(pr, NULL, NULL, NULL, NULL) / (12 * h);
    }
    *x = x0;
    if (x2)
        *x2 = x0;
    if (is_theta)
        gpc_kernel_set_params(pr->k, theta);
    return d;
}

static void check_gradients(gsl_rng *r, const char *spec)
{
    size_t m = 5, n = 9;
    problem pr = {0};
    gpc_kernel_parse(spec, 2, &pr.k);
    size_t np = gpc_kernel_nparams(pr.k);
    theta = malloc(np * sizeof *theta);
    for (size_t j = 0; j < np; j++)
        theta[j] = 0.8 * gsl_rng_uniform(r) - 0.4;
    gpc_kernel_set_params(pr.k, theta);
    pr.w = gpc_lse_work_alloc(NC);
    pr.Z = random_matrix(r, m, 2);
    pr.X = random_matrix(r, n, 2);
    pr.y = labels(r, pr.X);
    pr.M = random_matrix(r, NC, m);
    gsl_matrix *dS[NC];
    for (size_t c = 0; c < NC; c++) {
        gsl_matrix *R = random_matrix(r, m, m);
        pr.S[c] = gsl_matrix_alloc(m, m);
        dS[c] = gsl_matrix_alloc(m, m);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 0.3, R, R, 0.0, pr.S[c]);
        for (size_t i = 0; i < m; i++)
            gsl_matrix_set(pr.S[c], i, i, gsl_matrix_get(pr.S[c], i, i) + 0.2);
        gsl_matrix_free(R);
    }
    gsl_matrix *dM = gsl_matrix_alloc(NC, m), *dZ = gsl_matrix_alloc(m, 2);
    double *dth = malloc(np * sizeof *dth);
    double e = bound(&pr, dM, dS, dth, dZ);
    TEST_OK(isfinite(e), "%s, m = %zu < n = %zu: the bound is %.6g", spec, m, n, e);
    double wM = 0, wS = 0, wt = 0, wZ = 0;
    for (size_t c = 0; c < NC; c++)
        for (size_t i = 0; i < m; i++) {
            double d = diff(&pr, pr.M->data + c * pr.M->tda + i, NULL, 0);
            wM = fmax(wM, fabs(d - gsl_matrix_get(dM, c, i)) / (1 + fabs(d)));
            for (size_t j = 0; j <= i; j++) {
                double *a = pr.S[c]->data + i * pr.S[c]->tda + j,
                       *b = pr.S[c]->data + j * pr.S[c]->tda + i;
                double ds = diff(&pr, a, i == j ? NULL : b, 0);
                double want = i == j ? gsl_matrix_get(dS[c], i, i)
                                     : gsl_matrix_get(dS[c], i, j) + gsl_matrix_get(dS[c], j, i);
                wS = fmax(wS, fabs(ds - want) / (1 + fabs(ds)));
            }
        }
    for (size_t j = 0; j < np; j++) {
        double d = diff(&pr, theta + j, NULL, 1);
        wt = fmax(wt, fabs(d - dth[j]) / (1 + fabs(d)));
    }
    for (size_t i = 0; i < m * 2; i++) {
        double d = diff(&pr, pr.Z->data + i, NULL, 0);
        wZ = fmax(wZ, fabs(d - dZ->data[i]) / (1 + fabs(d)));
    }
    TEST_CLOSE(wM, 0, 0, 1e-7, "%s: d bound / d m_c against differences (worst %.2g)", spec, wM);
    TEST_CLOSE(wS, 0, 0, 1e-7, "%s: d bound / d S_c against differences (worst %.2g)", spec, wS);
    TEST_CLOSE(wt, 0, 0, 1e-7, "%s: the hyperparameter gradient against differences (worst "
               "%.2g)", spec, wt);
    TEST_CLOSE(wZ, 0, 0, 1e-7, "%s: the gradient in Z against differences (worst %.2g)", spec,
               wZ);
    for (size_t c = 0; c < NC; c++) {
        gsl_matrix_free(pr.S[c]);
        gsl_matrix_free(dS[c]);
    }
    gsl_matrix_free(pr.Z);
    gsl_matrix_free(pr.X);
    gsl_matrix_free(pr.M);
    gsl_matrix_free(dM);
    gsl_matrix_free(dZ);
    free(pr.y);
    free(dth);
    free(theta);
    gpc_kernel_free(pr.k);
    gpc_lse_work_free(pr.w);
}

/* ---- shards add up; a bad label ----------------------------------------- */

static double stats_diff(const gpc_shard_stats *a, const gpc_shard_stats *b)
{
    double d = fabs(a->lambda - b->lambda) / (1 + fabs(b->lambda));
    for (size_t i = 0; i < a->G->size1 * a->G->size2; i++)
        d = fmax(d, fabs(a->G->data[i] - b->G->data[i]) / (1 + fabs(b->G->data[i])));
    for (size_t c = 0; c < a->C; c++)
        for (size_t i = 0; i < a->m * a->m; i++)
            d = fmax(d, fabs(a->H[c]->data[i] - b->H[c]->data[i]) / (1 + fabs(b->H[c]->data[i])));
    for (size_t j = 0; j < a->nparams; j++)
        d = fmax(d, fabs(a->dtheta[j] - b->dtheta[j]) / (1 + fabs(b->dtheta[j])));
    for (size_t i = 0; i < a->m * a->dim; i++)
        d = fmax(d, fabs(a->dZ->data[i] - b->dZ->data[i]) / (1 + fabs(b->dZ->data[i])));
    return d;
}

static void check_shards(gsl_rng *r)
{
    size_t m = 4, n = 11, cut = 5;
    gpc_kernel *k;
    gpc_kernel_parse("matern52ard", 2, &k);
    size_t np = gpc_kernel_nparams(k);
    gpc_lse_work *w = gpc_lse_work_alloc(NC);
    gsl_matrix *Z = random_matrix(r, m, 2), *X = random_matrix(r, n, 2),
               *M = random_matrix(r, NC, m), *L = gsl_matrix_alloc(m, m), *S[NC];
    double *y = labels(r, X), jitter;
    gpc_inducing_factor(k, Z, L, &jitter);
    for (size_t c = 0; c < NC; c++) { /* S_c = 0.1 R R' + 0.2 I */
        gsl_matrix *R = random_matrix(r, m, m);
        S[c] = gsl_matrix_alloc(m, m);
        gsl_matrix_set_identity(S[c]);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 0.1, R, R, 0.2, S[c]);
        gsl_matrix_free(R);
    }
    gpc_shard_stats *all = gpc_shard_stats_alloc(m, NC, 2, np),
                    *a = gpc_shard_stats_alloc(m, NC, 2, np), *b = gpc_shard_stats_alloc(m, NC, 2, np);
    gsl_matrix_view top = gsl_matrix_submatrix(X, 0, 0, cut, 2),
                    rest = gsl_matrix_submatrix(X, cut, 0, n - cut, 2);
    int rc = gpc_shard_add_rows(k, Z, &L, M, S, X, y, 0, gpc_shard_softmax_lik, w, all);
    rc |= gpc_shard_add_rows(k, Z, &L, M, S, &top.matrix, y, 0, gpc_shard_softmax_lik, w, a);
    rc |= gpc_shard_add_rows(k, Z, &L, M, S, &rest.matrix, y + cut, cut, gpc_shard_softmax_lik, w, b);
    gpc_shard_stats_add(a, b);
    TEST_OK(rc == GPC_OK && a->rows == n, "two shards of %zu and %zu rows", cut, n - cut);
    TEST_CLOSE(stats_diff(a, all), 0, 0, 1e-13, "softmax: two shards add up to the statistics of "
               "all rows");
    /* a label that is no class */
    y[7] = 3.0;
    gpc_shard_stats_zero(all);
    rc = gpc_shard_add_rows(k, Z, &L, M, S, X, y, 0, gpc_shard_softmax_lik, w, all);
    TEST_OK(rc == GPC_ENUM && strstr(gpc_errmsg(), "row 8") && all->rows == 0,
            "a label that is no class is refused, naming its row: %s", gpc_errmsg());
    y[7] = 0.5;
    rc = gpc_shard_add_rows(k, Z, &L, M, S, X, y, 0, gpc_shard_softmax_lik, w, all);
    TEST_OK(rc == GPC_ENUM && all->rows == 0, "so is a label between classes");
    gpc_shard_stats_free(all);
    gpc_shard_stats_free(a);
    gpc_shard_stats_free(b);
    for (size_t c = 0; c < NC; c++)
        gsl_matrix_free(S[c]);
    gsl_matrix_free(Z);
    gsl_matrix_free(X);
    gsl_matrix_free(M);
    gsl_matrix_free(L);
    free(y);
    gpc_kernel_free(k);
    gpc_lse_work_free(w);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 29);
    check_dense(r, "se", 15);
    check_dense(r, "matern52ard", 12);
    check_gradients(r, "ard+jitter");
    check_gradients(r, "matern52*periodic@1+linear");
    check_shards(r);
    gsl_rng_free(r);
    return tap_done();
}
