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
            kl += dense_q(K, lam + c * n, nu + c * n, cm, cs);
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

/* A problem of NC classes with the softmax likelihood, w its work. */
static sparse_problem problem(gpc_lse_work *w)
{
    return (sparse_problem){.C = NC, .lik = gpc_shard_softmax_lik, .ctx = w};
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
static int iterate_q(sparse_problem *pr, double rho, double tol, double *elbo, double *grad)
{
    sparse_grads g = sparse_grads_alloc(pr);
    int steps = -1;
    for (int it = 0; it < 2000; it++) {
        *elbo = sparse_problem_bound(pr, g.M, g.S, NULL, NULL);
        *grad = sparse_q_gradient(pr, &g);
        if (*grad < tol) {
            steps = it;
            break;
        }
        for (size_t c = 0; c < NC; c++) {
            gsl_vector_view mc = gsl_matrix_row(pr->M, c), dmc = gsl_matrix_row(g.M, c);
            for (double r = rho; r > 1e-6; r /= 2)
                if (gpc_natgrad_step(&mc.vector, pr->S[c], NULL, &dmc.vector, g.S[c], r) == GPC_OK)
                    break;
        }
    }
    sparse_grads_free(pr, &g);
    return steps;
}

static void check_dense(gsl_rng *r, const char *spec, size_t n)
{
    gpc_lse_work *w = gpc_lse_work_alloc(NC);
    sparse_problem pr = problem(w);
    pr.X = random_matrix(r, n, 2);
    pr.y = labels(r, pr.X);
    gpc_kernel_parse(spec, 2, &pr.k);
    double th[3] = {1.0, 1.5, 0.0}; /* as in test_sparse_dense: K well conditioned */
    gpc_kernel_set_params(pr.k, th);
    gsl_matrix *K = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(pr.k, pr.X, K);
    double *mu = malloc(n * NC * sizeof *mu), *s2 = malloc(n * NC * sizeof *s2);
    double dense = dense_fit(w, K, pr.y, mu, s2);

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
    sparse_problem_free(&pr);
    gpc_lse_work_free(w);
}

/* ---- gradients against differences ------------------------------------- */

static void check_gradients(gsl_rng *r, const char *spec)
{
    size_t m = 5, n = 9;
    gpc_lse_work *w = gpc_lse_work_alloc(NC);
    sparse_problem pr = problem(w);
    sparse_problem_draw(&pr, r, spec, -0.4, m, n);
    pr.y = labels(r, pr.X);
    pr.M = random_matrix(r, NC, m);
    for (size_t c = 0; c < NC; c++)
        pr.S[c] = random_spd(r, m);
    sparse_grad_errors e = sparse_gradient_errors(&pr);
    TEST_OK(isfinite(e.bound), "%s, m = %zu < n = %zu: the bound is %.6g", spec, m, n, e.bound);
    TEST_CLOSE(e.M, 0, 0, 1e-7, "%s: d bound / d m_c against differences (worst %.2g)", spec,
               e.M);
    TEST_CLOSE(e.S, 0, 0, 1e-7, "%s: d bound / d S_c against differences (worst %.2g)", spec,
               e.S);
    TEST_CLOSE(e.theta, 0, 0, 1e-7, "%s: the hyperparameter gradient against differences "
               "(worst %.2g)", spec, e.theta);
    TEST_CLOSE(e.Z, 0, 0, 1e-7, "%s: the gradient in Z against differences (worst %.2g)", spec,
               e.Z);
    sparse_problem_free(&pr);
    gpc_lse_work_free(w);
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
