/* Softmax (multiclass) Laplace approximation: two classes reduce to the
 * binary logistic Laplace approximation, the evidence and its gradient match
 * a dense reference on the full Cn x Cn system and central differences, the
 * mode satisfies its fixed-point equations, predictive probabilities match
 * long Monte Carlo, Newton steps by conjugate gradients agree with steps
 * that factor S, the cost counters follow the algorithm, and warm starts
 * and extreme hyperparameters behave. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "methods/laplace.h"
#include "methods/softmax.h"
#include "problems.h"
#include "tap.h"

static void make_problem(gsl_rng *r, size_t n, size_t d, size_t C, gsl_matrix **X,
                         size_t **cls)
{
    multiclass_problem(r, n, d, C, 0.4, X, cls);
}

/* ---- the dense reference: Newton on the full Cn system ---- */

/* Block-diagonal Cn x Cn prior covariance from nK kernels. */
static gsl_matrix *dense_prior(gpc_kernel *const *ks, size_t nK, const gsl_matrix *X, size_t C)
{
    size_t n = X->size1;
    gsl_matrix *Kb = gsl_matrix_calloc(C * n, C * n), *K = gsl_matrix_alloc(n, n);
    for (size_t c = 0; c < C; c++) {
        gpc_kernel_matrix(ks[nK == 1 ? 0 : c], X, K);
        gsl_matrix_view b = gsl_matrix_submatrix(Kb, c * n, c * n, n, n);
        gsl_matrix_memcpy(&b.matrix, K);
    }
    gsl_matrix_free(K);
    return Kb;
}

/* softmax pi (class-major) at f; returns y'f - sum_i log sum_c exp f_i^c */
static double dense_lik(const gsl_vector *f, const size_t *cls, size_t n, size_t C,
                        gsl_vector *pi)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double z = 0.0;
        for (size_t c = 0; c < C; c++)
            z += exp(gsl_vector_get(f, c * n + i));
        s += gsl_vector_get(f, cls[i] * n + i) - log(z);
        for (size_t c = 0; c < C; c++)
            gsl_vector_set(pi, c * n + i, exp(gsl_vector_get(f, c * n + i)) / z);
    }
    return s;
}

/* W = diag(pi) - Pi Pi', formed explicitly. */
static void dense_W(const gsl_vector *pi, size_t n, size_t C, gsl_matrix *W)
{
    gsl_matrix_set_zero(W);
    for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a < C; a++) {
            double pa = gsl_vector_get(pi, a * n + i);
            for (size_t b = 0; b < C; b++)
                gsl_matrix_set(W, a * n + i, b * n + i,
                               (a == b ? pa : 0.0) - pa * gsl_vector_get(pi, b * n + i));
        }
}

/* Newton a <- (I + W K)^-1 (W f + y - pi), f = K a, by LU, to a fixed point;
 * log Z = -1/2 a'f + y'f - sum log sum exp - 1/2 log|I + K W| by LU. */
static double dense_evidence(gpc_kernel *const *ks, size_t nK, const gsl_matrix *X,
                             const size_t *cls, size_t C, gsl_vector *fout)
{
    size_t n = X->size1, N = C * n;
    gsl_matrix *Kb = dense_prior(ks, nK, X, C), *W = gsl_matrix_alloc(N, N),
               *A = gsl_matrix_alloc(N, N);
    gsl_vector *f = gsl_vector_calloc(N), *a = gsl_vector_calloc(N), *pi = gsl_vector_alloc(N),
               *b = gsl_vector_alloc(N), *fn = gsl_vector_alloc(N);
    gsl_permutation *p = gsl_permutation_alloc(N);
    int sign;
    double lik = 0.0;
    for (int it = 0; it < 100; it++) {
        lik = dense_lik(f, cls, n, C, pi);
        dense_W(pi, n, C, W);
        gsl_blas_dgemv(CblasNoTrans, 1.0, W, f, 0.0, b);
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < C; c++)
                b->data[c * n + i] += (cls[i] == c) - pi->data[c * n + i];
        gsl_matrix_set_identity(A);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, W, Kb, 1.0, A);
        gsl_linalg_LU_decomp(A, p, &sign);
        gsl_linalg_LU_solve(A, p, b, a);
        gsl_blas_dgemv(CblasNoTrans, 1.0, Kb, a, 0.0, fn);
        gsl_vector_sub(f, fn);
        double step = fabs(gsl_vector_get(f, gsl_blas_idamax(f)));
        gsl_vector_memcpy(f, fn);
        if (step < 1e-14 && it > 3)
            break;
    }
    lik = dense_lik(f, cls, n, C, pi);
    dense_W(pi, n, C, W);
    gsl_matrix_set_identity(A);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, Kb, W, 1.0, A);
    gsl_linalg_LU_decomp(A, p, &sign);
    double af;
    gsl_blas_ddot(a, f, &af);
    double logz = -0.5 * af + lik - 0.5 * gsl_linalg_LU_lndet(A);
    if (fout)
        gsl_vector_memcpy(fout, f);
    gsl_matrix_free(Kb);
    gsl_matrix_free(W);
    gsl_matrix_free(A);
    gsl_vector_free(f);
    gsl_vector_free(a);
    gsl_vector_free(pi);
    gsl_vector_free(b);
    gsl_vector_free(fn);
    gsl_permutation_free(p);
    return logz;
}

/* Shift parameter j of kernel k (of nK) by h, evaluate, restore. */
typedef double (*evidence_fn)(gpc_kernel *const *ks, size_t nK, const gsl_matrix *X,
                              const size_t *cls, size_t C, void *ctx);

static double shifted(evidence_fn fn, gpc_kernel **ks, size_t nK, size_t k, size_t j,
                      double h, const gsl_matrix *X, const size_t *cls, size_t C, void *ctx)
{
    size_t p = gpc_kernel_nparams(ks[k]);
    double th[32];
    memcpy(th, gpc_kernel_params(ks[k]), p * sizeof *th);
    th[j] += h;
    gpc_kernel_set_params(ks[k], th);
    double v = fn(ks, nK, X, cls, C, ctx);
    th[j] -= h;
    gpc_kernel_set_params(ks[k], th);
    return v;
}

/* Central difference, Richardson-extrapolated from steps h and h/2 (error
 * O(h^4)), for every parameter of every kernel. */
static void fd_gradient(evidence_fn fn, gpc_kernel **ks, size_t nK, const gsl_matrix *X,
                        const size_t *cls, size_t C, void *ctx, double h, int richardson,
                        double *g)
{
    size_t p = gpc_kernel_nparams(ks[0]);
    for (size_t k = 0; k < nK; k++)
        for (size_t j = 0; j < p; j++) {
            double d1 = (shifted(fn, ks, nK, k, j, h, X, cls, C, ctx) -
                         shifted(fn, ks, nK, k, j, -h, X, cls, C, ctx)) / (2 * h);
            if (!richardson) {
                g[k * p + j] = d1;
                continue;
            }
            double d2 = (shifted(fn, ks, nK, k, j, h / 2, X, cls, C, ctx) -
                         shifted(fn, ks, nK, k, j, -h / 2, X, cls, C, ctx)) / h;
            g[k * p + j] = (4 * d2 - d1) / 3;
        }
}

static double dense_fn(gpc_kernel *const *ks, size_t nK, const gsl_matrix *X,
                       const size_t *cls, size_t C, void *ctx)
{
    (void)ctx;
    return dense_evidence(ks, nK, X, cls, C, NULL);
}

static double softmax_fn(gpc_kernel *const *ks, size_t nK, const gsl_matrix *X,
                         const size_t *cls, size_t C, void *ctx)
{
    (void)nK;
    gpc_softmax *w = gpc_softmax_alloc(X->size1, C, gpc_kernel_nparams(ks[0]), ctx != NULL);
    double lz = NAN;
    if (gpc_softmax_evidence(w, ks, X, cls, &lz, NULL) != GPC_OK)
        lz = NAN;
    gpc_softmax_free(w);
    return lz;
}

static double grad_scale(const double *g, size_t m)
{
    double s = 0.0;
    for (size_t j = 0; j < m; j++)
        s = fmax(s, fabs(g[j]));
    return s;
}

/* ---- tests ---- */

/* f1, f2 ~ GP(0, K) independent: g = f1 - f2 ~ GP(0, 2K) carries the whole
 * likelihood (softmax_0 = sigma(g)), h = f1 + f2 ~ GP(0, 2K) is independent
 * of g and untouched by the data.  The Laplace approximation is invariant
 * under the linear change of variables (f1, f2) -> (g, h): the Jacobian of
 * the map cancels between the prior density and the Hessian determinant, and
 * the h part is an exact Gaussian integrating to 1.  So the softmax Laplace
 * evidence with K equals the logistic Laplace evidence with 2K exactly, and
 * with "ard+bias+jitter" the kernel 2K is log_v0, log_bias and log_jitter
 * shifted by log 2 (the log_w do not scale), which leaves the gradient
 * component by component unchanged. */
static void test_two_classes(gsl_rng *r)
{
    size_t n = 30, d = 2, m = 5;
    gsl_matrix *X, *Xs = gsl_matrix_alloc(m, d);
    size_t *cls;
    make_problem(r, n, d, 2, &X, &cls);
    for (size_t i = 0; i < m * d; i++)
        Xs->data[i] = 3.0 * gsl_rng_uniform(r) - 1.5;
    double th[] = {1.2, 0.3, -0.4, -2.0, -5.0}, th2[5];
    memcpy(th2, th, sizeof th);
    th2[0] += M_LN2;
    th2[3] += M_LN2;
    th2[4] += M_LN2;
    gpc_kernel *k = kernel_at("ard+bias+jitter", d, th), *k2 = kernel_at("ard+bias+jitter", d, th2);
    size_t p = gpc_kernel_nparams(k);
    gsl_vector *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(y, i, cls[i] == 0 ? 1.0 : -1.0);

    gpc_laplace *lw = gpc_laplace_alloc(n, p, GPC_LIK_LOGISTIC);
    double lz_bin, g_bin[8], lz_sm, g_sm[8];
    int st1 = gpc_laplace_evidence(lw, k2, X, y, &lz_bin, g_bin);
    gpc_softmax *sw = gpc_softmax_alloc(n, 2, p, 0);
    int st2 = gpc_softmax_evidence(sw, &k, X, cls, &lz_sm, g_sm);
    TEST_OK(st1 == GPC_OK && st2 == GPC_OK, "C = 2: both evidences computed");
    TEST_CLOSE(lz_sm, lz_bin, 1e-10, 0.0, "C = 2: softmax evidence with K = logistic with 2K");
    double gs = grad_scale(g_bin, p), gerr = 0.0;
    for (size_t j = 0; j < p; j++)
        gerr = fmax(gerr, fabs(g_sm[j] - g_bin[j]) / gs);
    printf("# C = 2: evidence relative difference %.1e, gradient %.1e (relative to its "
           "largest component)\n", fabs(lz_sm - lz_bin) / fabs(lz_bin), gerr);
    for (size_t j = 0; j < p; j++)
        TEST_CLOSE(g_sm[j], g_bin[j], 1e-10, 1e-10 * gs, "C = 2: gradient %s",
                   gpc_kernel_param_name(k, j));
    double fdiff = 0.0;
    for (size_t i = 0; i < n; i++)
        fdiff = fmax(fdiff, fabs(gsl_vector_get(sw->f, i) - gsl_vector_get(sw->f, n + i) -
                                 gsl_vector_get(lw->f, i)));
    TEST_CLOSE(fdiff, 0.0, 0.0, 1e-8, "C = 2: f_0 - f_1 is the binary mode");

    /* predictions: the difference of the latent classes is the binary latent */
    gsl_matrix *Ks = gsl_matrix_alloc(n, m), *Ks2 = gsl_matrix_alloc(n, m);
    gsl_vector *kss = gsl_vector_alloc(m), *kss2 = gsl_vector_alloc(m);
    gpc_kernel_cross(k, X, Xs, Ks);
    gpc_kernel_diag(k, Xs, kss);
    gpc_kernel_cross(k2, X, Xs, Ks2);
    gpc_kernel_diag(k2, Xs, kss2);
    gsl_vector *bm = gsl_vector_alloc(m), *bv = gsl_vector_alloc(m);
    gpc_laplace_mode(lw, y); /* the gradient used up the factor */
    gpc_laplace_predict(lw, Ks2, kss2, bm, bv);
    gsl_matrix *mean = gsl_matrix_alloc(m, 2), *cov = gsl_matrix_alloc(m, 4),
               *prob = gsl_matrix_alloc(m, 2);
    const gsl_matrix *Kp[] = {Ks};
    const gsl_vector *kp[] = {kss};
    int st3 = gpc_softmax_predict(sw, Kp, kp, mean, cov, prob, NULL);
    TEST_OK(st3 == GPC_OK, "C = 2: predictions computed");
    for (size_t j = 0; j < m; j++) {
        double mu = gsl_matrix_get(mean, j, 0) - gsl_matrix_get(mean, j, 1);
        double var = gsl_matrix_get(cov, j, 0) + gsl_matrix_get(cov, j, 3) -
                     2.0 * gsl_matrix_get(cov, j, 1);
        double bmu = gsl_vector_get(bm, j), bvar = gsl_vector_get(bv, j);
        TEST_CLOSE(mu, bmu, 1e-8, 1e-10, "C = 2: latent mean of f_0 - f_1, case %zu", j);
        TEST_CLOSE(var, bvar, 1e-8, 1e-10, "C = 2: latent variance of f_0 - f_1, case %zu", j);
        TEST_CLOSE(gsl_matrix_get(prob, j, 0), gpc_lik_predict(GPC_LIK_LOGISTIC, bmu, bvar),
                   0.0, 1e-9, "C = 2: class probability, case %zu", j);
    }
    gsl_matrix_free(Ks);
    gsl_matrix_free(Ks2);
    gsl_matrix_free(mean);
    gsl_matrix_free(cov);
    gsl_matrix_free(prob);
    gsl_vector_free(kss);
    gsl_vector_free(kss2);
    gsl_vector_free(bm);
    gsl_vector_free(bv);
    gsl_vector_free(y);
    gpc_laplace_free(lw);
    gpc_softmax_free(sw);
    gpc_kernel_free(k);
    gpc_kernel_free(k2);
    gsl_matrix_free(X);
    gsl_matrix_free(Xs);
    free(cls);
}

/* At the mode, K_c^-1 f_c = y_c - pi_c (by a Cholesky solve of K_c), and
 * with a shared kernel sum_c f_c = K sum_c (y_c - pi_c) = 0. */
static void check_fixed_point(const gpc_softmax *w, const char *what)
{
    size_t n = w->n, C = w->C;
    gsl_matrix *L = gsl_matrix_alloc(n, n);
    gsl_vector *x = gsl_vector_alloc(n), *sum = gsl_vector_calloc(n);
    double res = 0.0, fmaxabs = 0.0;
    for (size_t c = 0; c < C; c++) {
        gsl_matrix_memcpy(L, w->K[w->per_class ? c : 0]);
        gsl_linalg_cholesky_decomp1(L);
        gsl_vector_const_view fc = gsl_vector_const_subvector(w->f, c * n, n);
        gsl_linalg_cholesky_solve(L, &fc.vector, x);
        for (size_t i = 0; i < n; i++) {
            res = fmax(res, fabs(gsl_vector_get(x, i) - gsl_vector_get(w->ypi, c * n + i)));
            fmaxabs = fmax(fmaxabs, fabs(gsl_vector_get(&fc.vector, i)));
        }
        gsl_vector_add(sum, &fc.vector);
    }
    TEST_CLOSE(res, 0.0, 0.0, 1e-10, "%s: K_c^-1 f_c = y_c - pi_c at the mode", what);
    if (!w->per_class)
        TEST_CLOSE(fabs(gsl_vector_get(sum, gsl_blas_idamax(sum))), 0.0, 0.0,
                   1e-10 * fmax(1.0, fmaxabs), "%s: sum_c f_c = 0 at the mode", what);
    gsl_matrix_free(L);
    gsl_vector_free(x);
    gsl_vector_free(sum);
}

/* Evidence and gradient against the dense reference (n = 12, d = 2, C = 3
 * or 5: the shared-kernel gradient sums the classes through an orthogonal
 * transform that depends on C), and the gradient against central
 * differences of gpc_softmax_evidence. */
static void test_dense_and_fd(gsl_rng *r, size_t C, int per_class)
{
    size_t n = 12, d = 2;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th[5][4] = {{1.0, 0.2, -0.5, -4.0}, {0.5, -0.3, 0.4, -3.0}, {1.5, 0.6, 0.0, -5.0},
                       {0.0, 0.3, -0.2, -4.0}, {1.2, -0.6, 0.5, -3.5}};
    gpc_kernel *ks[5];
    size_t nK = per_class ? C : 1;
    for (size_t c = 0; c < nK; c++)
        ks[c] = kernel_at("ard+jitter", d, th[c]);
    size_t p = gpc_kernel_nparams(ks[0]), ng = p * nK;
    char what[32];
    snprintf(what, sizeof what, "%s, C = %zu", per_class ? "per-class" : "shared", C);

    gpc_softmax *w = gpc_softmax_alloc(n, C, p, per_class);
    double lz, g[32], gd[32], gf[32];
    int st = gpc_softmax_evidence(w, ks, X, cls, &lz, g);
    TEST_OK(st == GPC_OK, "%s: evidence computed", what);
    gsl_vector *fd = gsl_vector_alloc(C * n);
    double lz_dense = dense_evidence(ks, nK, X, cls, C, fd);
    TEST_CLOSE(lz, lz_dense, 1e-9, 0.0, "%s: evidence equals the dense Cn x Cn reference", what);
    gsl_vector_sub(fd, w->f);
    TEST_CLOSE(fabs(gsl_vector_get(fd, gsl_blas_idamax(fd))), 0.0, 0.0, 1e-9,
               "%s: mode equals the dense reference's", what);

    fd_gradient(dense_fn, ks, nK, X, cls, C, NULL, 1e-3, 1, gd);
    fd_gradient(softmax_fn, ks, nK, X, cls, C, per_class ? (void *)1 : NULL, 1e-5, 0, gf);
    double gs = grad_scale(g, ng), ed = 0.0, ef = 0.0;
    for (size_t j = 0; j < ng; j++) {
        ed = fmax(ed, fabs(g[j] - gd[j]) / gs);
        ef = fmax(ef, fabs(g[j] - gf[j]) / gs);
    }
    printf("# %s: evidence relative difference to dense %.1e; gradient differences "
           "(relative to its largest component) to dense %.3e, to central differences %.3e\n",
           what, fabs(lz - lz_dense) / fabs(lz_dense), ed, ef);
    for (size_t j = 0; j < ng; j++)
        TEST_CLOSE(g[j], gd[j], 1e-9, 1e-9 * gs,
                   "%s: gradient[%zu] equals the dense reference (Richardson differences)",
                   what, j);
    for (size_t j = 0; j < ng; j++)
        TEST_CLOSE(g[j], gf[j], 1e-6, 1e-7 * gs,
                   "%s: gradient[%zu] equals central differences of the evidence", what, j);

    check_fixed_point(w, what);
    gsl_vector_free(fd);
    gpc_softmax_free(w);
    for (size_t c = 0; c < nK; c++)
        gpc_kernel_free(ks[c]);
    gsl_matrix_free(X);
    free(cls);
}

/* E[softmax(f)], f ~ N(mu, Sigma), by plain Monte Carlo: ns samples from a
 * fixed seed, drawn in antithetic pairs mu +- L z. */
static void monte_carlo(size_t C, const double *mu, const double *Sigma, size_t ns, double *p)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4242);
    gsl_matrix *L = gsl_matrix_alloc(C, C);
    for (size_t i = 0; i < C * C; i++)
        L->data[i] = Sigma[i];
    for (size_t i = 0; i < C; i++) /* a whisker of jitter for singular Sigma */
        L->data[i * C + i] += 1e-12 * (1.0 + fabs(Sigma[i * C + i]));
    gsl_linalg_cholesky_decomp1(L);
    double z[16], f[16], q[16];
    for (size_t c = 0; c < C; c++)
        p[c] = 0.0;
    for (size_t s = 0; s < ns / 2; s++) {
        for (size_t c = 0; c < C; c++)
            z[c] = gsl_ran_gaussian_ziggurat(r, 1.0);
        for (int sign = -1; sign <= 1; sign += 2) {
            for (size_t i = 0; i < C; i++) {
                double v = 0.0;
                for (size_t j = 0; j <= i; j++)
                    v += gsl_matrix_get(L, i, j) * z[j];
                f[i] = mu[i] + sign * v;
            }
            gpc_softmax_plugin(C, f, q);
            for (size_t c = 0; c < C; c++)
                p[c] += q[c];
        }
    }
    for (size_t c = 0; c < C; c++)
        p[c] /= (double)(ns / 2 * 2);
    gsl_matrix_free(L);
    gsl_rng_free(r);
}

/* mu ~ N(0, m^2) per class, Sigma = s^2 (A A' / C + 0.1 I) with A standard
 * normal: correlated and of scale s. */
static void random_gaussian(gsl_rng *r, size_t C, double m, double s, double *mu,
                            double *Sigma)
{
    double A[16 * 16];
    for (size_t i = 0; i < C * C; i++)
        A[i] = gsl_ran_gaussian(r, 1.0);
    for (size_t i = 0; i < C; i++) {
        mu[i] = gsl_ran_gaussian(r, m);
        for (size_t j = 0; j < C; j++) {
            double v = i == j ? 0.1 : 0.0;
            for (size_t k = 0; k < C; k++)
                v += A[i * C + k] * A[j * C + k] / (double)C;
            Sigma[i * C + j] = s * s * v;
        }
    }
}

/* The deterministic rule against 10^6-sample Monte Carlo, from small to
 * large latent variance and up to ten classes. */
static void test_expect(gsl_rng *r)
{
    size_t Cs[] = {3, 3, 4, 6, 10, 10};
    double sd[] = {0.5, 6.0, 2.0, 4.0, 1.0, 8.0};
    double worst = 0.0;
    for (size_t t = 0; t < sizeof Cs / sizeof Cs[0]; t++) {
        size_t C = Cs[t];
        double mu[16], Sigma[256], p[16], q[16], p2[16];
        random_gaussian(r, C, 1.5, sd[t], mu, Sigma);
        gpc_softmax_rule *rule = gpc_softmax_rule_alloc(C);
        int st = gpc_softmax_expect(rule, mu, Sigma, p);
        gpc_softmax_expect(rule, mu, Sigma, p2);
        gpc_softmax_rule_free(rule);
        monte_carlo(C, mu, Sigma, 1000000, q);
        double diff = 0.0, sum = 0.0;
        int inside = 1;
        for (size_t c = 0; c < C; c++) {
            diff = fmax(diff, fabs(p[c] - q[c]));
            sum += p[c];
            inside &= p[c] >= 0.0 && p[c] <= 1.0;
        }
        worst = fmax(worst, diff);
        TEST_OK(st == GPC_OK && inside, "E[softmax], C = %zu, sd %g: status and range", C,
                sd[t]);
        TEST_CLOSE(sum, 1.0, 0.0, 1e-12, "E[softmax], C = %zu, sd %g: sums to one", C, sd[t]);
        TEST_CLOSE(diff, 0.0, 0.0, 1e-3, "E[softmax], C = %zu, sd %g: within 1e-3 of Monte "
                   "Carlo", C, sd[t]);
        TEST_OK(memcmp(p, p2, C * sizeof *p) == 0, "E[softmax], C = %zu: deterministic", C);
    }
    printf("# largest |rule - Monte Carlo| over all classes and cases: %.2e\n", worst);
}

/* Predictions of a fitted model: probabilities in [0, 1] summing to one,
 * equal to Monte Carlo over the latent Gaussian (test points near the data
 * and far from it, where the latent variance is the prior's), identical bits
 * from two calls, and the plug-in softmax(mean). */
static void test_predict(gsl_rng *r)
{
    size_t n = 12, d = 2, C = 3, m = 4;
    gsl_matrix *X, *Xs = gsl_matrix_alloc(m, d);
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double xs[] = {0.1, -0.2, 0.8, 0.7, 4.0, -3.0, -6.0, 5.0}; /* two far away */
    memcpy(Xs->data, xs, sizeof xs);
    double th[] = {3.0, 0.5, 0.5, -4.0}; /* v0 = e^3: latent sd up to 4.5 */
    gpc_kernel *k = kernel_at("ard+jitter", d, th);
    gpc_softmax *w = gpc_softmax_alloc(n, C, 4, 0);
    double lz;
    TEST_OK(gpc_softmax_evidence(w, &k, X, cls, &lz, NULL) == GPC_OK, "predict: fitted");
    gsl_matrix *Ks = gsl_matrix_alloc(n, m);
    gsl_vector *kss = gsl_vector_alloc(m);
    gpc_kernel_cross(k, X, Xs, Ks);
    gpc_kernel_diag(k, Xs, kss);
    const gsl_matrix *Kp[] = {Ks};
    const gsl_vector *kp[] = {kss};
    gsl_matrix *mean = gsl_matrix_alloc(m, C), *cov = gsl_matrix_alloc(m, C * C),
               *prob = gsl_matrix_alloc(m, C), *prob2 = gsl_matrix_alloc(m, C),
               *plug = gsl_matrix_alloc(m, C);
    int st = gpc_softmax_predict(w, Kp, kp, mean, cov, prob, plug);
    int st2 = gpc_softmax_predict(w, Kp, kp, mean, cov, prob2, NULL);
    TEST_OK(st == GPC_OK && st2 == GPC_OK, "predict: status");
    TEST_OK(memcmp(prob->data, prob2->data, m * C * sizeof(double)) == 0,
            "predict: two calls give identical bits");
    double worst = 0.0;
    for (size_t j = 0; j < m; j++) {
        double mu[3], q[3], pl[3], sum = 0.0;
        int inside = 1;
        for (size_t c = 0; c < C; c++) {
            mu[c] = gsl_matrix_get(mean, j, c);
            sum += gsl_matrix_get(prob, j, c);
            inside &= gsl_matrix_get(prob, j, c) >= 0.0 && gsl_matrix_get(prob, j, c) <= 1.0;
        }
        gsl_vector_view cj = gsl_matrix_row(cov, j);
        monte_carlo(C, mu, cj.vector.data, 1000000, q);
        gpc_softmax_plugin(C, mu, pl);
        double diff = 0.0, pdiff = 0.0;
        for (size_t c = 0; c < C; c++) {
            diff = fmax(diff, fabs(gsl_matrix_get(prob, j, c) - q[c]));
            pdiff = fmax(pdiff, fabs(gsl_matrix_get(plug, j, c) - pl[c]));
        }
        worst = fmax(worst, diff);
        TEST_OK(inside, "predict: case %zu probabilities in [0, 1]", j);
        TEST_CLOSE(sum, 1.0, 0.0, 1e-12, "predict: case %zu probabilities sum to one", j);
        TEST_CLOSE(diff, 0.0, 0.0, 1e-3, "predict: case %zu within 1e-3 of Monte Carlo "
                   "(latent variance %.3g)", j, gsl_matrix_get(cov, j, 0));
        TEST_CLOSE(pdiff, 0.0, 0.0, 1e-15, "predict: case %zu plug-in is softmax(mean)", j);
    }
    printf("# predict: largest |probability - Monte Carlo| = %.2e\n", worst);
    /* a model file stores f: set_mode in a fresh workspace restores it all */
    gpc_softmax *w2 = gpc_softmax_alloc(n, C, 4, 0);
    gpc_kernel_matrix(k, X, w2->K[0]);
    int st3 = gpc_softmax_set_mode(w2, cls, w->f);
    TEST_OK(st3 == GPC_OK, "set_mode: status");
    TEST_CLOSE(w2->log_evidence, lz, 1e-12, 0.0, "set_mode: same evidence");
    gpc_softmax_predict(w2, Kp, kp, mean, cov, prob2, NULL);
    double pd = 0.0;
    for (size_t i = 0; i < m * C; i++)
        pd = fmax(pd, fabs(prob->data[i] - prob2->data[i]));
    TEST_CLOSE(pd, 0.0, 0.0, 1e-9, "set_mode: same predictions");
    cls[0] = C;
    TEST_OK(gpc_softmax_set_mode(w2, cls, w->f) == GPC_EUSAGE, "a class index >= C is a "
            "usage error: %s", gpc_errmsg());
    cls[0] = 0;
    gpc_softmax_free(w2);
    /* far away the latent mean is 0 and the covariance is the prior's */
    TEST_CLOSE(gsl_matrix_get(cov, 3, 0), gsl_vector_get(kss, 3), 1e-6, 0.0,
               "predict: far case has the prior variance");
    TEST_CLOSE(gsl_matrix_get(prob, 3, 0), 1.0 / 3.0, 0.0, 1e-4,
               "predict: far case has probability 1/C (to the rule's accuracy)");
    gsl_matrix *mats[] = {Ks, mean, cov, prob, prob2, plug, X, Xs};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        gsl_matrix_free(mats[i]);
    gsl_vector_free(kss);
    gpc_softmax_free(w);
    gpc_kernel_free(k);
    free(cls);
}

/* Latent predictive mean and covariance with per-class kernels against the
 * dense formulas mean = Q*'(y - pi) and cov = Kss - Q*' W (I + K W)^-1 Q*
 * (Q* the Cn x C block-diagonal cross-covariance; W is singular, so
 * (K + W^-1)^-1 is written W (I + K W)^-1). */
static void test_predict_dense(gsl_rng *r)
{
    size_t n = 12, d = 2, C = 3, m = 3, N = C * n;
    gsl_matrix *X, *Xs = gsl_matrix_alloc(m, d);
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    for (size_t i = 0; i < m * d; i++)
        Xs->data[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
    double th[3][4] = {{1.0, 0.2, -0.5, -4.0}, {0.5, -0.3, 0.4, -3.0}, {1.5, 0.6, 0.0, -5.0}};
    gpc_kernel *ks[3];
    gsl_matrix *Ks[3];
    gsl_vector *kss[3];
    for (size_t c = 0; c < C; c++) {
        ks[c] = kernel_at("ard+jitter", d, th[c]);
        Ks[c] = gsl_matrix_alloc(n, m);
        kss[c] = gsl_vector_alloc(m);
        gpc_kernel_cross(ks[c], X, Xs, Ks[c]);
        gpc_kernel_diag(ks[c], Xs, kss[c]);
    }
    gpc_softmax *w = gpc_softmax_alloc(n, C, 4, 1);
    double lz;
    gpc_softmax_evidence(w, ks, X, cls, &lz, NULL);
    gsl_matrix *mean = gsl_matrix_alloc(m, C), *cov = gsl_matrix_alloc(m, C * C);
    int st = gpc_softmax_predict(w, (const gsl_matrix *const *)Ks,
                                 (const gsl_vector *const *)kss, mean, cov, NULL, NULL);
    TEST_OK(st == GPC_OK, "per-class predict: status");

    gsl_matrix *Kb = dense_prior(ks, C, X, C), *W = gsl_matrix_alloc(N, N),
               *A = gsl_matrix_alloc(N, N), *Q = gsl_matrix_calloc(N, C * m),
               *Y = gsl_matrix_alloc(N, C * m), *Z = gsl_matrix_alloc(N, C * m),
               *V = gsl_matrix_alloc(C * m, C * m);
    gsl_vector *pi = gsl_vector_alloc(N);
    dense_lik(w->f, cls, n, C, pi);
    dense_W(pi, n, C, W);
    for (size_t c = 0; c < C; c++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                gsl_matrix_set(Q, c * n + i, j * C + c, gsl_matrix_get(Ks[c], i, j));
    gsl_matrix_set_identity(A);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, Kb, W, 1.0, A);
    gsl_permutation *perm = gsl_permutation_alloc(N);
    int sign;
    gsl_linalg_LU_decomp(A, perm, &sign);
    gsl_matrix_memcpy(Y, Q);
    for (size_t j = 0; j < C * m; j++) {
        gsl_vector_view col = gsl_matrix_column(Y, j);
        gsl_linalg_LU_svx(A, perm, &col.vector);
    }
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, W, Y, 0.0, Z);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, Q, Z, 0.0, V);
    double em = 0.0, ec = 0.0;
    for (size_t j = 0; j < m; j++)
        for (size_t a = 0; a < C; a++) {
            double mu = 0.0;
            for (size_t i = 0; i < n; i++)
                mu += gsl_matrix_get(Ks[a], i, j) *
                      ((cls[i] == a) - gsl_vector_get(pi, a * n + i));
            em = fmax(em, fabs(mu - gsl_matrix_get(mean, j, a)));
            for (size_t b = 0; b < C; b++) {
                double want = (a == b ? gsl_vector_get(kss[a], j) : 0.0) -
                              gsl_matrix_get(V, j * C + a, j * C + b);
                ec = fmax(ec, fabs(want - gsl_matrix_get(cov, j, a * C + b)));
            }
        }
    TEST_CLOSE(em, 0.0, 0.0, 1e-10, "per-class predict: latent means equal the dense formula");
    TEST_CLOSE(ec, 0.0, 0.0, 1e-10, "per-class predict: latent covariances equal the dense "
               "formula");
    gsl_matrix *mats[] = {Kb, W, A, Q, Y, Z, V, mean, cov, X, Xs};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        gsl_matrix_free(mats[i]);
    for (size_t c = 0; c < C; c++) {
        gsl_matrix_free(Ks[c]);
        gsl_vector_free(kss[c]);
        gpc_kernel_free(ks[c]);
    }
    gsl_vector_free(pi);
    gsl_permutation_free(perm);
    gpc_softmax_free(w);
    free(cls);
}

/* A large signal variance (v0 = e^12) and short length scales make the mode
 * confident: pi_c of the wrong classes falls to about 1e-8.  E_c and the
 * columns of the triangular solves then span many orders of magnitude, and
 * the gradient recovers one class per case from the others' solves
 * (dividing by sqrt(pi) of the most probable class); the dense reference
 * checks all of it. */
static void test_confident(gsl_rng *r)
{
    size_t n = 12, d = 2, C = 4;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th[] = {12.0, 2.0, 2.0, -4.0};
    gpc_kernel *k = kernel_at("ard+jitter", d, th);
    gpc_softmax *w = gpc_softmax_alloc(n, C, 4, 0);
    double lz, g[4], gd[4];
    int st = gpc_softmax_evidence(w, &k, X, cls, &lz, g);
    TEST_OK(st == GPC_OK, "confident: evidence computed");
    double pmin = 1.0;
    for (size_t i = 0; i < C * n; i++)
        pmin = fmin(pmin, gsl_vector_get(w->pi, i));
    printf("# confident: smallest pi at the mode %.1e\n", pmin);
    TEST_OK(pmin < 1e-6, "confident: some pi below 1e-6 (%.1e)", pmin);
    TEST_CLOSE(lz, dense_evidence(&k, 1, X, cls, C, NULL), 1e-9, 0.0,
               "confident: evidence equals the dense reference");
    /* the dense reference's differences carry its rounding, amplified here:
     * changing K by a few ulp (libm's exp against libmvec's) moves them by
     * 5e-8 relative and the gradient by 3e-11.  The jitter's component is
     * about 1e-6 of the others, and at a step of 1e-3 the rounding moved
     * its difference by 3e-8 on AVX2 kernels (by 5e-9 at 4e-3, where the
     * other components' truncation error is still below 1e-8 relative) */
    fd_gradient(dense_fn, &k, 1, X, cls, C, NULL, 4e-3, 1, gd);
    double gs = grad_scale(g, 4);
    for (size_t j = 0; j < 4; j++)
        TEST_CLOSE(g[j], gd[j], 1e-7, 1e-8 * gs, "confident: gradient[%zu] equals the dense "
                   "reference", j);
    gpc_softmax_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

/* The Newton direction by conjugate gradients against the factorised S
 * (cg_max = 0) on a problem big enough for the iteration to matter (n = 150,
 * C = 4, large signal variances and long length scales, so S is far from
 * the identity): the same mode, evidence and gradient, shared and
 * per-class.  The preconditioner
 * I + K / C is S^-1 itself at f = 0 with a shared kernel, so the first
 * Newton step from a cold start needs a single iteration, and it keeps the
 * iterations per step well below the 20 to 30 that plain conjugate
 * gradients take here. */
static void test_cg(gsl_rng *r)
{
    size_t n = 150, d = 3, C = 4;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th[4][5] = {{3.5, -1.5, -1.0, -2.0, -6.0}, {1.0, -1.0, -2.0, -1.0, -6.0},
                       {3.0, -2.0, -1.5, -1.5, -6.0}, {2.0, -0.5, -1.0, -2.5, -6.0}};
    for (int per = 0; per <= 1; per++) {
        const char *what = per ? "per-class" : "shared";
        size_t nK = per ? C : 1;
        gpc_kernel *ks[4];
        for (size_t c = 0; c < nK; c++)
            ks[c] = kernel_at("ard+jitter", d, th[c]);
        gpc_softmax *w = gpc_softmax_alloc(n, C, 5, per), *wd = gpc_softmax_alloc(n, C, 5, per);
        wd->cg_max = 0;
        double lz, lzd, g[20], gd[20];
        int st = gpc_softmax_evidence(w, ks, X, cls, &lz, g);
        int std = gpc_softmax_evidence(wd, ks, X, cls, &lzd, gd);
        TEST_OK(st == GPC_OK && std == GPC_OK, "CG, %s: both computed", what);
        TEST_OK(wd->cg_iterations == 0 && wd->chol_equiv == w->chol_equiv +
                wd->n_newton * (3 * C + 1), "CG, %s: cg_max = 0 factors S at every step "
                "(%lu Cholesky equivalents, %lu steps)", what, wd->chol_equiv, wd->n_newton);
        TEST_CLOSE(lz, lzd, 1e-12, 0.0, "CG, %s: evidence equals the factorised S's", what);
        double gs = grad_scale(gd, 5 * nK), ge = 0.0, fe = 0.0;
        for (size_t j = 0; j < 5 * nK; j++)
            ge = fmax(ge, fabs(g[j] - gd[j]) / gs);
        for (size_t i = 0; i < C * n; i++)
            fe = fmax(fe, fabs(gsl_vector_get(w->f, i) - gsl_vector_get(wd->f, i)));
        TEST_CLOSE(ge, 0.0, 0.0, 1e-10, "CG, %s: gradient equals the factorised S's", what);
        TEST_CLOSE(fe, 0.0, 0.0, 1e-10, "CG, %s: mode equals the factorised S's", what);
        check_fixed_point(w, per ? "CG, per-class" : "CG, shared");
        double per_step = (double)w->cg_iterations / (double)w->n_newton;
        printf("# CG, %s: %lu Newton steps, %.1f iterations per step\n", what, w->n_newton,
               per_step);
        TEST_OK(per_step < 16.0, "CG, %s: %.1f iterations per Newton step, below 16 (20 to 30 "
                "without the preconditioner)", what, per_step);
        if (!per) {
            /* one iteration allowed: the first step succeeds, every later one
             * falls back to the factorised S */
            gpc_softmax *w1 = gpc_softmax_alloc(n, C, 5, 0);
            w1->cg_max = 1;
            double lz1;
            gpc_softmax_evidence(w1, ks, X, cls, &lz1, NULL);
            unsigned long fallbacks = (w1->chol_equiv - w1->n_newton * C - (3 * C + 1)) /
                                      (3 * C + 1);
            TEST_OK(w1->cg_iterations == w1->n_newton && fallbacks == w1->n_newton - 1,
                    "CG, shared: the first step from f = 0 converges in one iteration (%lu "
                    "of %lu steps factored S)", fallbacks, w1->n_newton);
            TEST_CLOSE(lz1, lzd, 1e-12, 0.0, "CG, shared: the same evidence either way");
            gpc_softmax_free(w1);
        }
        gpc_softmax_free(w);
        gpc_softmax_free(wd);
        for (size_t c = 0; c < nK; c++)
            gpc_kernel_free(ks[c]);
    }
    gsl_matrix_free(X);
    free(cls);
}

/* Along a path of nearby hyperparameters (as HMC's leapfrog or a line
 * search walks), one Newton step from the previous f lands much closer to
 * the new mode than f = K a with the previous a, which a change of the
 * signal variance scales away from it: the warm searches need fewer steps
 * than cold ones (the previous f's step included), and find the same mode.
 * The previous factor of S as the preconditioner needs fewer conjugate
 * gradient iterations than I + K / C. */
static void test_warm_path(gsl_rng *r)
{
    size_t n = 60, d = 2, C = 4, path = 8;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th[] = {2.0, 0.5, 0.5, -6.0};
    gpc_kernel *k = kernel_at("ard+jitter", d, th);
    gpc_softmax *warm = gpc_softmax_alloc(n, C, 4, 0), *cold = gpc_softmax_alloc(n, C, 4, 0);
    double lw, lc, gw[4], gc[4], worst = 0.0;
    gpc_softmax_evidence(warm, &k, X, cls, &lw, gw);
    unsigned long wsteps = warm->n_newton, wcg = warm->cg_iterations;
    int ok = 1;
    for (size_t t = 0; t < path; t++) {
        th[0] += 0.1;
        th[1] -= 0.05;
        gpc_kernel_set_params(k, th);
        cold->has_mode = 0;
        ok &= gpc_softmax_evidence(warm, &k, X, cls, &lw, gw) == GPC_OK;
        ok &= gpc_softmax_evidence(cold, &k, X, cls, &lc, gc) == GPC_OK;
        gsl_vector_sub(cold->f, warm->f);
        worst = fmax(worst, fabs(gsl_vector_get(cold->f, gsl_blas_idamax(cold->f))));
        worst = fmax(worst, fabs(lw - lc) / fabs(lc));
    }
    TEST_OK(ok, "warm path: status");
    TEST_CLOSE(worst, 0.0, 0.0, 1e-8, "warm path: same modes and evidences as cold starts");
    double ws = (double)(warm->n_newton - wsteps + path) / (double)path,
           cs = (double)cold->n_newton / (double)path,
           wi = (double)(warm->cg_iterations - wcg) / (double)(warm->n_newton - wsteps + path),
           ci = (double)cold->cg_iterations / (double)cold->n_newton;
    TEST_OK(ws <= 0.5 * cs, "warm path: %.2f Newton steps per search (the first step from "
            "the previous f included), at most half the %.2f of cold starts", ws, cs);
    TEST_OK(wi < ci, "warm path: %.1f conjugate-gradient iterations per step, fewer than the "
            "%.1f of cold starts", wi, ci);
    gpc_softmax_free(warm);
    gpc_softmax_free(cold);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

/* A warm start from the mode at other hyperparameters lands on the cold
 * start's mode; extreme hyperparameters give a finite answer or an error,
 * never NaN with GPC_OK; the cost counters follow the documented counts. */
static void test_warm_extreme_cost(gsl_rng *r)
{
    size_t n = 25, d = 2, C = 4;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th1[] = {0.5, 0.0, 0.0, -4.0}, th2[] = {1.5, -0.5, 0.3, -4.0};
    gpc_kernel *k = kernel_at("ard+jitter", d, th1);
    gpc_softmax *warm = gpc_softmax_alloc(n, C, 4, 0), *cold = gpc_softmax_alloc(n, C, 4, 0);
    double lw, lc, gw[4], gc[4];
    gpc_softmax_evidence(warm, &k, X, cls, &lw, NULL);
    gpc_kernel_set_params(k, th2);
    int s1 = gpc_softmax_evidence(warm, &k, X, cls, &lw, gw);
    int s2 = gpc_softmax_evidence(cold, &k, X, cls, &lc, gc);
    TEST_OK(s1 == GPC_OK && s2 == GPC_OK, "warm start: status");
    gsl_vector_sub(warm->f, cold->f);
    TEST_CLOSE(fabs(gsl_vector_get(warm->f, gsl_blas_idamax(warm->f))), 0.0, 0.0, 1e-8,
               "warm start: same mode as a cold start");
    TEST_CLOSE(lw, lc, 1e-12, 0.0, "warm start: same evidence");
    TEST_CLOSE(gw[0], gc[0], 1e-8, 1e-10, "warm start: same gradient");

    /* cost: a Newton step factors the C matrices B_c (C; S only by
     * conjugate gradients), the mode adds the full factorisation (C factors,
     * C inverses at 2 each, the factor M of S: 3C + 1), and the gradient
     * M^-1 (1), triangular solves with (C - 1) n columns (3 (C - 1)) and C - 1
     * rank-n updates with a shared kernel or C with per-class kernels
     * (3 each): 6C - 5 or 6C - 2 */
    for (int per = 0; per <= 1; per++) {
        gpc_kernel *kc[4] = {k, k, k, k};
        gpc_softmax *w = gpc_softmax_alloc(n, C, 4, per);
        double g[16];
        gpc_softmax_evidence(w, kc, X, cls, &lc, NULL);
        unsigned long steps = w->n_newton, cost = w->chol_equiv;
        TEST_OK(cost == steps * C + 3 * C + 1, "cost, %s: %lu Cholesky equivalents for %lu "
                "Newton steps = steps C + 3C + 1", per ? "per-class" : "shared", cost, steps);
        w->has_mode = 0;
        gpc_softmax_evidence(w, kc, X, cls, &lc, g);
        steps = w->n_newton - steps;
        cost = w->chol_equiv - cost - (steps * C + 3 * C + 1);
        TEST_OK(cost == (per ? 6 * C - 2 : 6 * C - 5), "cost, %s: the gradient adds %lu "
                "Cholesky equivalents = 6C - %d", per ? "per-class" : "shared", cost,
                per ? 2 : 5);
        gpc_softmax_free(w);
    }

    double big[][4] = {{10.0, 0.0, 0.0, -4.0}, {10.0, 3.0, 3.0, -6.0}, {-8.0, 0.0, 0.0, -9.0},
                       {2.0, 12.0, 12.0, -6.0}};
    for (int per = 0; per <= 1; per++)
        for (size_t t = 0; t < sizeof big / sizeof big[0]; t++) {
            gpc_kernel *ks[4];
            size_t nK = per ? C : 1;
            for (size_t c = 0; c < nK; c++)
                ks[c] = kernel_at("ard+jitter", d, big[t]);
            gpc_softmax *w = gpc_softmax_alloc(n, C, 4, per);
            double lz = NAN, gg[16];
            int st = gpc_softmax_evidence(w, ks, X, cls, &lz, gg);
            int finite = isfinite(lz);
            for (size_t j = 0; j < 4 * nK; j++)
                finite &= isfinite(gg[j]);
            TEST_OK(st != GPC_OK || finite, "extreme %s log_v0 = %g, log_w = %g: %s (%g)",
                    per ? "per-class" : "shared", big[t][0], big[t][1],
                    st == GPC_OK ? "finite" : gpc_errmsg(), lz);
            /* log q = Psi(f) - 1/2 log|I + K W| <= 0: Psi(f) <= log p(y|f) <= 0
             * and every eigenvalue of I + K W is at least 1 */
            TEST_OK(st != GPC_OK || lz < 0.0, "extreme %s case %zu: log evidence below 0",
                    per ? "per-class" : "shared", t);
            gpc_softmax_free(w);
            for (size_t c = 0; c < nK; c++)
                gpc_kernel_free(ks[c]);
        }
    gpc_softmax_free(warm);
    gpc_softmax_free(cold);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    test_two_classes(r);
    test_dense_and_fd(r, 3, 0);
    test_dense_and_fd(r, 3, 1);
    test_expect(r);
    test_predict(r);
    test_predict_dense(r);
    test_warm_extreme_cost(r);
    test_dense_and_fd(r, 5, 0);
    test_dense_and_fd(r, 5, 1);
    test_confident(r);
    test_cg(r);
    test_warm_path(r);
    gsl_rng_free(r);
    return tap_done();
}
