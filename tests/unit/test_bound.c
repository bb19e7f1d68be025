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

typedef struct {
    gpc_kernel *k;
    gsl_matrix *Z, *X, *M, *S[2];
    double *y, scale;
    size_t C;
} problem;

/* The bound of pr, with its gradients where the pointers are not NULL. */
static double bound(problem *pr, gsl_matrix *dM, gsl_matrix **dS, double *dtheta, gsl_matrix *dZ)
{
    return sparse_bound(pr->k, pr->Z, pr->M, pr->S, pr->X, pr->y, lik, NULL, pr->scale, dM, dS,
                        dtheta, dZ);
}

/* Random inducing inputs (m), rows and targets (n) of two inputs, and
 * means of q for pr's classes. */
static void random_rows(gsl_rng *r, problem *pr, size_t m, size_t n)
{
    pr->Z = random_matrix(r, m, 2);
    pr->X = random_matrix(r, n, 2);
    pr->M = random_matrix(r, pr->C, m);
    pr->y = malloc(n * sizeof *pr->y);
    for (size_t i = 0; i < n; i++)
        pr->y[i] = gsl_rng_uniform(r) - 0.5;
}

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

static void check_gradients(gsl_rng *r, const char *spec, double scale)
{
    size_t m = 4, n = 7, C = 2;
    problem pr = {.C = C, .scale = scale};
    gpc_kernel_parse(spec, 2, &pr.k);
    size_t np = gpc_kernel_nparams(pr.k);
    theta = malloc(np * sizeof *theta);
    for (size_t j = 0; j < np; j++)
        theta[j] = 0.8 * gsl_rng_uniform(r) - 0.6;
    gpc_kernel_set_params(pr.k, theta);
    random_rows(r, &pr, m, n);
    gsl_matrix *dS[2];
    for (size_t c = 0; c < C; c++) {
        gsl_matrix *R = random_matrix(r, m, m);
        pr.S[c] = gsl_matrix_alloc(m, m);
        dS[c] = gsl_matrix_alloc(m, m);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 0.3, R, R, 0.0, pr.S[c]);
        for (size_t i = 0; i < m; i++)
            gsl_matrix_set(pr.S[c], i, i, gsl_matrix_get(pr.S[c], i, i) + 0.2);
        gsl_matrix_free(R);
    }
    gsl_matrix *dM = gsl_matrix_alloc(C, m), *dZ = gsl_matrix_alloc(m, 2);
    double *dth = malloc(np * sizeof *dth);
    double e = bound(&pr, dM, dS, dth, dZ);
    TEST_OK(isfinite(e), "%s (scale %g): the bound is %.6g", spec, scale, e);
    double wM = 0, wS = 0, wt = 0, wZ = 0;
    for (size_t c = 0; c < C; c++)
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
    TEST_CLOSE(wM, 0, 0, 1e-7, "%s (scale %g): d bound / d m_c against differences", spec, scale);
    TEST_CLOSE(wS, 0, 0, 1e-7, "%s (scale %g): d bound / d S_c against differences", spec, scale);
    TEST_CLOSE(wt, 0, 0, 1e-7, "%s (scale %g): the hyperparameter gradient against differences",
               spec, scale);
    TEST_CLOSE(wZ, 0, 0, 1e-7, "%s (scale %g): the gradient in Z against differences", spec,
               scale);
    for (size_t c = 0; c < C; c++) {
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
}

/* Z = X and q at its optimum for the Gaussian likelihood: the bound is the
 * exact log marginal likelihood. */
static void check_exact(gsl_rng *r, const char *spec)
{
    size_t n = 8;
    problem pr = {.C = 1, .scale = 1.0};
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
    double e = bound(&pr, dM, dS, NULL, NULL);
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
    gsl_matrix_free(A);
    gsl_matrix_free(K);
    gsl_matrix_free(pr.X);
    gsl_matrix_free(pr.Z);
    gsl_matrix_free(pr.M);
    gsl_matrix_free(dM);
    gsl_matrix_free(dS[0]);
    gsl_vector_free(Ly);
    gsl_vector_free(a);
    free(pr.y);
    gpc_kernel_free(pr.k);
}

/* One natural step of size rho for each class of pr. */
static int natural_step(problem *pr, double rho)
{
    size_t m = pr->Z->size1;
    gsl_matrix *dM = gsl_matrix_alloc(pr->C, m), *dS[2];
    for (size_t c = 0; c < pr->C; c++)
        dS[c] = gsl_matrix_alloc(m, m);
    bound(pr, dM, dS, NULL, NULL);
    int rc = GPC_OK;
    for (size_t c = 0; c < pr->C && rc == GPC_OK; c++) {
        gsl_vector_view mc = gsl_matrix_row(pr->M, c), dmc = gsl_matrix_row(dM, c);
        rc = gpc_natgrad_step(&mc.vector, pr->S[c], NULL, &dmc.vector, dS[c], rho);
    }
    for (size_t c = 0; c < pr->C; c++)
        gsl_matrix_free(dS[c]);
    gsl_matrix_free(dM);
    return rc;
}

/* The largest |gradient| in q. */
static double q_gradient(problem *pr)
{
    size_t m = pr->Z->size1;
    gsl_matrix *dM = gsl_matrix_alloc(pr->C, m), *dS[2];
    for (size_t c = 0; c < pr->C; c++)
        dS[c] = gsl_matrix_alloc(m, m);
    bound(pr, dM, dS, NULL, NULL);
    double g = 0.0;
    for (size_t i = 0; i < pr->C * m; i++)
        g = fmax(g, fabs(dM->data[i]));
    for (size_t c = 0; c < pr->C; c++) {
        for (size_t i = 0; i < m * m; i++)
            g = fmax(g, fabs(dS[c]->data[i]));
        gsl_matrix_free(dS[c]);
    }
    gsl_matrix_free(dM);
    return g;
}

static void check_natgrad(gsl_rng *r, size_t m)
{
    size_t n = 9;
    problem pr = {.C = 2, .scale = 1.0};
    gpc_kernel_parse("matern52ard", 2, &pr.k);
    pr.X = random_matrix(r, n, 2);
    pr.Z = gsl_matrix_alloc(m, 2);
    gsl_matrix_view top = gsl_matrix_submatrix(pr.X, 0, 0, m, 2);
    gsl_matrix_memcpy(pr.Z, &top.matrix); /* Z = the first m training inputs */
    pr.M = random_matrix(r, 2, m);
    pr.y = malloc(n * sizeof *pr.y);
    for (size_t i = 0; i < n; i++)
        pr.y[i] = gsl_rng_uniform(r) - 0.5;
    for (size_t c = 0; c < 2; c++) {
        pr.S[c] = gsl_matrix_alloc(m, m);
        gsl_matrix_set_identity(pr.S[c]);
    }
    double before = bound(&pr, NULL, NULL, NULL, NULL);
    TEST_OK(natural_step(&pr, 0.1) == GPC_OK && bound(&pr, NULL, NULL, NULL, NULL) > before,
            "m = %zu: a natural step of 0.1 raises the bound", m);
    gsl_matrix *M0 = gsl_matrix_alloc(2, m), *S0 = gsl_matrix_alloc(m, m);
    gsl_matrix_memcpy(M0, pr.M);
    gsl_matrix_memcpy(S0, pr.S[0]);
    int rc = natural_step(&pr, -50.0);
    TEST_OK(rc == GPC_ENUM && gsl_matrix_equal(M0, pr.M) && gsl_matrix_equal(S0, pr.S[0]),
            "m = %zu: a step that leaves the precision indefinite is refused, q unchanged: %s", m,
            gpc_errmsg());
    TEST_OK(natural_step(&pr, 1.0) == GPC_OK, "m = %zu: a natural step of 1", m);
    TEST_CLOSE(q_gradient(&pr), 0, 0, 1e-9, "m = %zu: one natural step of 1 lands on q's "
               "optimum (Gaussian likelihood)", m);
    gsl_matrix_free(M0);
    gsl_matrix_free(S0);
    for (size_t c = 0; c < 2; c++)
        gsl_matrix_free(pr.S[c]);
    gsl_matrix_free(pr.X);
    gsl_matrix_free(pr.Z);
    gsl_matrix_free(pr.M);
    free(pr.y);
    gpc_kernel_free(pr.k);
}

/* A kernel per class whose two copies hold the same hyperparameters is the
 * shared kernel: the same bound and gradients in q and Z, and its
 * classes' hyperparameter gradients sum to the shared one's. */
static void check_copies(gsl_rng *r, const char *spec)
{
    size_t m = 4, n = 7, C = 2;
    char per[256];
    snprintf(per, sizeof per, "%s:per-class=2", spec);
    problem sh = {.C = C, .scale = 2.0}, pc;
    gpc_kernel_parse(spec, 2, &sh.k);
    size_t np = gpc_kernel_nparams(sh.k);
    double *th = malloc(2 * np * sizeof *th), *g1 = malloc(np * sizeof *g1),
           *g2 = malloc(2 * np * sizeof *g2);
    for (size_t j = 0; j < np; j++)
        th[j] = th[np + j] = 0.8 * gsl_rng_uniform(r) - 0.6;
    gpc_kernel_set_params(sh.k, th);
    random_rows(r, &sh, m, n);
    gsl_matrix *dS1[2], *dS2[2], *dM1 = gsl_matrix_alloc(C, m), *dM2 = gsl_matrix_alloc(C, m),
               *dZ1 = gsl_matrix_alloc(m, 2), *dZ2 = gsl_matrix_alloc(m, 2);
    for (size_t c = 0; c < C; c++) {
        sh.S[c] = gsl_matrix_alloc(m, m);
        gsl_matrix_set_identity(sh.S[c]);
        gsl_matrix_scale(sh.S[c], 0.5 + 0.3 * c);
        dS1[c] = gsl_matrix_alloc(m, m);
        dS2[c] = gsl_matrix_alloc(m, m);
    }
    pc = sh;
    gpc_kernel_parse(per, 2, &pc.k);
    gpc_kernel_set_params(pc.k, th);
    double e1 = bound(&sh, dM1, dS1, g1, dZ1), e2 = bound(&pc, dM2, dS2, g2, dZ2);
    double wq = 0.0, wt = 0.0;
    for (size_t i = 0; i < C * m; i++)
        wq = fmax(wq, fabs(dM1->data[i] - dM2->data[i]));
    for (size_t c = 0; c < C; c++)
        for (size_t i = 0; i < m * m; i++)
            wq = fmax(wq, fabs(dS1[c]->data[i] - dS2[c]->data[i]));
    for (size_t i = 0; i < m * 2; i++)
        wq = fmax(wq, fabs(dZ1->data[i] - dZ2->data[i]));
    for (size_t j = 0; j < np; j++)
        wt = fmax(wt, fabs(g1[j] - (g2[j] + g2[np + j])) / (1 + fabs(g1[j])));
    TEST_CLOSE(e2, e1, 1e-13, 0, "%s with two equal copies: the shared kernel's bound %.10g",
               per, e1);
    TEST_CLOSE(wq, 0, 0, 1e-12, "%s with two equal copies: the shared gradients in q and Z", per);
    TEST_CLOSE(wt, 0, 0, 1e-12, "%s with two equal copies: the classes' hyperparameter "
               "gradients sum to the shared one's", per);
    for (size_t c = 0; c < C; c++) {
        gsl_matrix_free(sh.S[c]);
        gsl_matrix_free(dS1[c]);
        gsl_matrix_free(dS2[c]);
    }
    gsl_matrix_free(sh.Z);
    gsl_matrix_free(sh.X);
    gsl_matrix_free(sh.M);
    gsl_matrix_free(dM1);
    gsl_matrix_free(dM2);
    gsl_matrix_free(dZ1);
    gsl_matrix_free(dZ2);
    free(sh.y);
    free(th);
    free(g1);
    free(g2);
    gpc_kernel_free(sh.k);
    gpc_kernel_free(pc.k);
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
