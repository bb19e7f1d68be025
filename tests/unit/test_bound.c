/* The sparse bound's global part, with a Gaussian likelihood:
 * - with the inducing inputs at the training inputs (Z = X) and q at its
 *   optimum, the bound is the exact log marginal likelihood of GP
 *   regression, log N(y | 0, K + V I), and its gradient in q is 0;
 * - every gradient (m_c, S_c, hyperparameters, Z) against fourth-order
 *   differences of the whole bound (factor, shard, bound), for
 *   two classes and several kernels, products among them, shared by the
 *   classes or one per class;
 * - a kernel per class whose copies are equal gives the shared kernel's
 *   bound, and its classes' gradients sum to the shared one's;
 * - a minibatch's scale multiplies the data terms only;
 * - a natural-gradient step of size 1 lands on q's optimum (Gaussian
 *   likelihood), for Z = X and for fewer inducing inputs; shorter steps
 *   climb; a step that leaves the precision indefinite changes nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/class-kernels.h"
#include "kernels/kernel.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/natgrad.h"
#include "sparse/shard.h"
#include "gaussian_lik.h"
#include "random_matrix.h"
#include "sparse_bound.h"
#include "tap.h"

static const double V = 0.2;

static double lik(const void *ctx, size_t C, double y, const double *mu, const double *s2,
                  double *g, double *h)
{
    (void)ctx;
    return gaussian_expect(&V, C, y, mu, s2, g, h);
}

/* pr with a Gaussian likelihood and its minibatch scale. */
static sparse_problem problem(size_t C, double scale)
{
    return (sparse_problem){.C = C, .scale = scale, .lik = lik};
}

static void check_gradients(gsl_rng *r, const char *spec, double scale)
{
    size_t m = 4, n = 7, C = 2;
    sparse_problem pr = problem(C, scale);
    sparse_problem_draw(&pr, r, spec, -0.6, m, n);
    pr.M = random_matrix(r, C, m);
    pr.y = uniform_targets(r, n);
    for (size_t c = 0; c < C; c++)
        pr.S[c] = random_spd(r, m);
    sparse_grad_errors w = sparse_gradient_errors(&pr);
    TEST_OK(isfinite(w.bound), "%s (scale %g): the bound is %.6g", spec, scale, w.bound);
    TEST_CLOSE(w.M, 0, 0, 1e-7, "%s (scale %g): d bound / d m_c against differences", spec,
               scale);
    TEST_CLOSE(w.S, 0, 0, 1e-7, "%s (scale %g): d bound / d S_c against differences", spec,
               scale);
    TEST_CLOSE(w.theta, 0, 0, 1e-7, "%s (scale %g): the hyperparameter gradient against "
               "differences", spec, scale);
    TEST_CLOSE(w.Z, 0, 0, 1e-7, "%s (scale %g): the gradient in Z against differences", spec,
               scale);
    sparse_problem_free(&pr);
}

/* Z = X and q at its optimum for the Gaussian likelihood: the bound is the
 * exact log marginal likelihood. */
static void check_exact(gsl_rng *r, const char *spec)
{
    size_t n = 8;
    sparse_problem pr = problem(1, 1.0);
    gpc_kernel_parse(spec, 2, &pr.k);
    pr.X = random_matrix(r, n, 2);
    pr.Z = gsl_matrix_alloc(n, 2);
    gsl_matrix_memcpy(pr.Z, pr.X);
    pr.y = malloc(n * sizeof *pr.y);
    for (size_t i = 0; i < n; i++)
        pr.y[i] = sin(3 * gsl_matrix_get(pr.X, i, 0)) + 0.1 * gsl_rng_uniform(r);
    gsl_matrix *L = gsl_matrix_alloc(n, n), *A = gsl_matrix_alloc(n, n), *K = gsl_matrix_alloc(n, n);
    double jitter;
    gpc_inducing_factor(pr.k, pr.Z, L, &jitter);
    /* the optimum: S = (I + L'L / V)^-1, m = S L' y / V */
    gsl_matrix_set_identity(A);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0 / V, L, L, 1.0, A);
    gsl_linalg_cholesky_decomp1(A);
    gsl_linalg_cholesky_invert(A);
    pr.S[0] = A;
    pr.M = gsl_matrix_alloc(1, n);
    gsl_vector_view yv = gsl_vector_view_array(pr.y, n), mrow = gsl_matrix_row(pr.M, 0);
    gsl_vector *Ly = gsl_vector_alloc(n);
    gsl_blas_dgemv(CblasTrans, 1.0 / V, L, &yv.vector, 0.0, Ly);
    gsl_blas_dgemv(CblasNoTrans, 1.0, A, Ly, 0.0, &mrow.vector);
    gsl_matrix *dM = gsl_matrix_alloc(1, n), *dS[1] = {gsl_matrix_alloc(n, n)};
    double e = sparse_problem_bound(&pr, dM, dS, NULL, NULL);
    /* log N(y | 0, K + V I) */
    gpc_kernel_matrix(pr.k, pr.X, K);
    for (size_t i = 0; i < n; i++)
        gsl_matrix_set(K, i, i, gsl_matrix_get(K, i, i) + V);
    gsl_linalg_cholesky_decomp1(K);
    gsl_vector *a = gsl_vector_alloc(n);
    gsl_vector_memcpy(a, &yv.vector);
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, K, a);
    double quad, logdet = 0.0;
    gsl_blas_ddot(a, a, &quad);
    for (size_t i = 0; i < n; i++)
        logdet += 2 * log(gsl_matrix_get(K, i, i));
    double exact = -0.5 * (quad + logdet + n * log(2 * M_PI));
    TEST_CLOSE(e, exact, 1e-10, 0, "%s, Z = X, q at its optimum: the bound is the exact log "
               "marginal likelihood (%.10g)", spec, exact);
    double g = 0.0;
    for (size_t i = 0; i < n; i++) {
        g = fmax(g, fabs(gsl_matrix_get(dM, 0, i)));
        for (size_t j = 0; j < n; j++)
            g = fmax(g, fabs(gsl_matrix_get(dS[0], i, j)));
    }
    TEST_CLOSE(g, 0, 0, 1e-8, "%s, Z = X: the gradient in q vanishes at its optimum", spec);
    gsl_matrix_free(L);
    gsl_matrix_free(K);
    gsl_matrix_free(dM);
    gsl_matrix_free(dS[0]);
    gsl_vector_free(Ly);
    gsl_vector_free(a);
    sparse_problem_free(&pr); /* and A, its S[0] */
}

/* The largest |gradient| in q. */
static double q_gradient(sparse_problem *pr)
{
    sparse_grads g = sparse_grads_alloc(pr);
    sparse_problem_bound(pr, g.M, g.S, NULL, NULL);
    double w = sparse_q_gradient(pr, &g);
    sparse_grads_free(pr, &g);
    return w;
}

static void check_natgrad(gsl_rng *r, size_t m)
{
    size_t n = 9;
    sparse_problem pr = problem(2, 1.0);
    gpc_kernel_parse("matern52ard", 2, &pr.k);
    pr.X = random_matrix(r, n, 2);
    pr.Z = gsl_matrix_alloc(m, 2);
    gsl_matrix_view top = gsl_matrix_submatrix(pr.X, 0, 0, m, 2);
    gsl_matrix_memcpy(pr.Z, &top.matrix); /* Z = the first m training inputs */
    pr.M = random_matrix(r, 2, m);
    pr.y = uniform_targets(r, n);
    for (size_t c = 0; c < 2; c++) {
        pr.S[c] = gsl_matrix_alloc(m, m);
        gsl_matrix_set_identity(pr.S[c]);
    }
    double before = sparse_problem_bound(&pr, NULL, NULL, NULL, NULL);
    TEST_OK(sparse_natural_step(&pr, 0.1, NULL) == GPC_OK &&
                sparse_problem_bound(&pr, NULL, NULL, NULL, NULL) > before,
            "m = %zu: a natural step of 0.1 raises the bound", m);
    gsl_matrix *M0 = gsl_matrix_alloc(2, m), *S0 = gsl_matrix_alloc(m, m);
    gsl_matrix_memcpy(M0, pr.M);
    gsl_matrix_memcpy(S0, pr.S[0]);
    int rc = sparse_natural_step(&pr, -50.0, NULL);
    TEST_OK(rc == GPC_ENUM && gsl_matrix_equal(M0, pr.M) && gsl_matrix_equal(S0, pr.S[0]),
            "m = %zu: a step that leaves the precision indefinite is refused, q unchanged: %s", m,
            gpc_errmsg());
    TEST_OK(sparse_natural_step(&pr, 1.0, NULL) == GPC_OK, "m = %zu: a natural step of 1", m);
    TEST_CLOSE(q_gradient(&pr), 0, 0, 1e-9, "m = %zu: one natural step of 1 lands on q's "
               "optimum (Gaussian likelihood)", m);
    gsl_matrix_free(M0);
    gsl_matrix_free(S0);
    sparse_problem_free(&pr);
}

/* A kernel per class whose two copies hold the same hyperparameters is the
 * shared kernel: the same bound and gradients in q and Z, and its
 * classes' hyperparameter gradients sum to the shared one's. */
static void check_copies(gsl_rng *r, const char *spec)
{
    size_t m = 4, n = 7, C = 2;
    char per[256];
    snprintf(per, sizeof per, "%s:per-class=2", spec);
    sparse_problem sh = problem(C, 2.0), pc;
    sparse_problem_draw(&sh, r, spec, -0.6, m, n);
    size_t np = gpc_kernel_nparams(sh.k);
    sh.M = random_matrix(r, C, m);
    sh.y = uniform_targets(r, n);
    for (size_t c = 0; c < C; c++) {
        sh.S[c] = gsl_matrix_alloc(m, m);
        gsl_matrix_set_identity(sh.S[c]);
        gsl_matrix_scale(sh.S[c], 0.5 + 0.3 * c);
    }
    pc = sh;
    gpc_kernel_parse(per, 2, &pc.k);
    pc.theta = malloc(2 * np * sizeof *pc.theta);
    for (size_t j = 0; j < np; j++)
        pc.theta[j] = pc.theta[np + j] = sh.theta[j];
    gpc_kernel_set_params(pc.k, pc.theta);
    sparse_grads g1 = sparse_grads_alloc(&sh), g2 = sparse_grads_alloc(&pc);
    double e1 = sparse_problem_bound(&sh, g1.M, g1.S, g1.theta, g1.Z),
           e2 = sparse_problem_bound(&pc, g2.M, g2.S, g2.theta, g2.Z);
    double wq = 0.0, wt = 0.0;
    for (size_t i = 0; i < C * m; i++)
        wq = fmax(wq, fabs(g1.M->data[i] - g2.M->data[i]));
    for (size_t c = 0; c < C; c++)
        for (size_t i = 0; i < m * m; i++)
            wq = fmax(wq, fabs(g1.S[c]->data[i] - g2.S[c]->data[i]));
    for (size_t i = 0; i < m * 2; i++)
        wq = fmax(wq, fabs(g1.Z->data[i] - g2.Z->data[i]));
    for (size_t j = 0; j < np; j++)
        wt = fmax(wt, fabs(g1.theta[j] - (g2.theta[j] + g2.theta[np + j])) /
                          (1 + fabs(g1.theta[j])));
    TEST_CLOSE(e2, e1, 1e-13, 0, "%s with two equal copies: the shared kernel's bound %.10g",
               per, e1);
    TEST_CLOSE(wq, 0, 0, 1e-12, "%s with two equal copies: the shared gradients in q and Z", per);
    TEST_CLOSE(wt, 0, 0, 1e-12, "%s with two equal copies: the classes' hyperparameter "
               "gradients sum to the shared one's", per);
    sparse_grads_free(&sh, &g1);
    sparse_grads_free(&pc, &g2);
    free(pc.theta);
    gpc_kernel_free(pc.k);
    sparse_problem_free(&sh);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    check_exact(r, "se");
    check_exact(r, "matern32ard*periodic@1+bias");
    const char *specs[] = {"ard+jitter", "matern52*periodic@1+linear", "(rq@1+bias)*matern32ard"};
    for (size_t s = 0; s < 3; s++)
        check_gradients(r, specs[s], 1.0);
    check_gradients(r, "ard", 12.5);
    check_gradients(r, "ard+jitter:per-class=2", 1.0);
    check_gradients(r, "(rq@1+bias)*matern32ard:per-class=2", 3.0);
    check_copies(r, "matern52*periodic@1+linear");
    check_natgrad(r, 9);
    check_natgrad(r, 4);
    gsl_rng_free(r);
    return tap_done();
}
