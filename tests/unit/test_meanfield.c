/* Naive mean field (Opper & Winther 1998): a Gaussian likelihood against the
 * exact regression solution, the one-point problem against quadrature, the
 * fixed-point equations after convergence, independence of the damping and
 * of the order of the cases, predictions, a saved solution, and the failures
 * (no convergence, bad settings, non-finite moments). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "gaussian_lik.h"
#include "kernels/kernel.h"
#include "methods/meanfield.h"
#include "problems.h"
#include "tap.h"

static double max_abs_diff(const gsl_vector *a, const gsl_vector *b)
{
    double w = 0;
    for (size_t i = 0; i < a->size; i++)
        w = fmax(w, fabs(gsl_vector_get(a, i) - gsl_vector_get(b, i)));
    return w;
}

/* A probit problem: n points uniform in [-1, 1]^d, labels from the sign of
 * the coordinate sum with a little noise, K from "ard+bias" (no jitter). */
static void probit_problem(gsl_rng *r, size_t n, size_t d, double log_v0, gsl_matrix *K,
                           gsl_vector *y)
{
    gsl_matrix *X;
    gsl_vector *labels;
    linear_problem(r, n, d, &X, &labels);
    gsl_vector_memcpy(y, labels);
    gpc_kernel *k;
    gpc_kernel_parse("ard+bias", d, &k);
    double th[4] = {log_v0, 0.3, -0.2, -1.0};
    gpc_kernel_set_params(k, th);
    gpc_kernel_matrix(k, X, K);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(labels);
}

/* The largest |x_i - g_i(m_i)| over the cases, with the cavity recomputed
 * here as m_i = sum_{j != i} K_ij x_j, lambda_i = K_ii. */
static double fixed_point_residual(const gpc_meanfield *m, const gsl_vector *y)
{
    double worst = 0;
    for (size_t i = 0; i < m->n; i++) {
        double mi = 0, kii = gsl_matrix_get(m->K, i, i), lz, mh, vh;
        for (size_t j = 0; j < m->n; j++)
            if (j != i)
                mi += gsl_matrix_get(m->K, i, j) * gsl_vector_get(m->x, j);
        m->moments(m->moments_ctx, gsl_vector_get(y, i), mi, kii, &lz, &mh, &vh);
        worst = fmax(worst, fabs(gsl_vector_get(m->x, i) - (mh - mi) / kii));
    }
    return worst;
}

/* With a Gaussian likelihood g_i(m) = (y_i - m) / (K_ii + s2), so the fixed
 * point solves (K + s2 I) x = y exactly: h is the regression mean, and each
 * cavity mean is y_i - (K_ii + s2) x_i = sum_{j != i} K_ij x_j. */
static void test_gaussian(gsl_rng *r)
{
    size_t n = 20;
    gsl_matrix *X;
    gsl_vector *y;
    regression_data(r, n, &X, &y);
    gpc_kernel *k;
    gpc_kernel_parse("se", 1, &k);
    double th[2] = {0.0, 0.5}, s2 = 0.1;
    gpc_kernel_set_params(k, th);
    gpc_meanfield *m = gpc_meanfield_alloc(n);
    gpc_kernel_matrix(k, X, m->K);
    m->moments = gaussian_moments;
    m->moments_ctx = &s2;
    m->max_sweeps = 100000;
    int st = gpc_meanfield_run(m, y);
    /* the equations are linear: one Newton step solves them */
    TEST_OK(st == GPC_OK && m->newton_steps == 1, "Gaussian likelihood: converges (%d Newton "
            "steps)%s%s", m->newton_steps, st ? ": " : "", st ? gpc_errmsg() : "");

    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gsl_matrix_memcpy(A, m->K);
    for (size_t i = 0; i < n; i++)
        *gsl_matrix_ptr(A, i, i) += s2;
    gsl_linalg_cholesky_decomp1(A);
    gsl_vector *alpha = gsl_vector_alloc(n), *mean = gsl_vector_alloc(n);
    gsl_linalg_cholesky_solve(A, y, alpha);
    gsl_blas_dgemv(CblasNoTrans, 1.0, m->K, alpha, 0.0, mean);
    /* Newton's step is exact up to rounding (|x| is O(10) here) */
    TEST_CLOSE(max_abs_diff(m->x, alpha), 0, 0, 1e-11, "Gaussian likelihood: x = (K + s2 I)^-1 y");
    TEST_CLOSE(max_abs_diff(m->h, mean), 0, 0, 1e-11,
               "Gaussian likelihood: h is the regression mean K (K + s2 I)^-1 y");
    /* the sweeps stop when no step exceeds a relative 1e-10; Gauss-Seidel
     * converges linearly at a rate rho near 1 (about 0.95 here), so the
     * distance to the fixed point is up to step / (1 - rho) */
    gpc_meanfield *ms = gpc_meanfield_alloc(n);
    gsl_matrix_memcpy(ms->K, m->K);
    ms->moments = gaussian_moments;
    ms->moments_ctx = &s2;
    ms->solver = GPC_MF_SWEEPS;
    ms->max_sweeps = 100000;
    st = gpc_meanfield_run(ms, y);
    TEST_OK(st == GPC_OK, "Gaussian likelihood, sweeps: converge (%d sweeps)", ms->sweeps);
    TEST_CLOSE(max_abs_diff(ms->x, alpha), 0, 0, 1e-8,
               "Gaussian likelihood, sweeps: x = (K + s2 I)^-1 y");
    gpc_meanfield_free(ms);
    double w1 = 0, w2 = 0, w3 = 0;
    for (size_t i = 0; i < n; i++) {
        double kii = gsl_matrix_get(m->K, i, i), a = gsl_vector_get(alpha, i), s = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i)
                s += gsl_matrix_get(m->K, i, j) * gsl_vector_get(alpha, j);
        w1 = fmax(w1, fabs(gsl_vector_get(m->cav_mean, i) - s));
        w2 = fmax(w2, fabs(gsl_vector_get(m->cav_mean, i) - (gsl_vector_get(y, i) - (kii + s2) * a)));
        w3 = fmax(w3, fabs(gsl_vector_get(m->cav_var, i) - kii));
    }
    TEST_CLOSE(w1, 0, 0, 1e-8, "Gaussian likelihood: cavity means sum_{j != i} K_ij x_j");
    TEST_CLOSE(w2, 0, 0, 1e-8, "Gaussian likelihood: cavity means y_i - (K_ii + s2) x_i");
    TEST_CLOSE(w3, 0, 0, 0, "Gaussian likelihood: cavity variances are the prior variances");

    /* the naive leave-one-out mean is not the exact one (only TAP/EP is):
     * make sure this test could tell them apart */
    gsl_matrix *Ainv = gsl_matrix_alloc(n, n);
    gsl_matrix_memcpy(Ainv, A);
    gsl_linalg_cholesky_invert(Ainv);
    double gap = 0;
    for (size_t i = 0; i < n; i++) {
        double loo = gsl_vector_get(y, i) - gsl_vector_get(alpha, i) / gsl_matrix_get(Ainv, i, i);
        gap = fmax(gap, fabs(loo - gsl_vector_get(m->cav_mean, i)));
    }
    TEST_OK(gap > 1e-3, "Gaussian likelihood: naive cavity means differ from exact LOO (%.3g)",
            gap);
    /* ... but linear response is exact for a linear problem: the refit
     * without case i is GP regression on the others */
    gsl_vector *lm = gsl_vector_alloc(n), *lv = gsl_vector_alloc(n);
    st = gpc_meanfield_loo(m, y, lm, lv);
    double wl = 0, wv = 0;
    for (size_t i = 0; i < n; i++) {
        double loo = gsl_vector_get(y, i) - gsl_vector_get(alpha, i) / gsl_matrix_get(Ainv, i, i);
        wl = fmax(wl, fabs(loo - gsl_vector_get(lm, i)));
        wv = fmax(wv, fabs(gsl_vector_get(lv, i) - gsl_matrix_get(m->K, i, i)));
    }
    TEST_OK(st == GPC_OK, "Gaussian likelihood: linear-response leave-one-out succeeds");
    TEST_CLOSE(wl, 0, 0, 1e-10, "Gaussian likelihood: linear-response leave-one-out means "
               "y_i - x_i / [(K + s2 I)^-1]_ii exactly (gap of the cavity %.3g)", gap);
    TEST_CLOSE(wv, 0, 0, 0, "Gaussian likelihood: leave-one-out variances K_ii");
    gsl_vector_free(lm);
    gsl_vector_free(lv);
    gsl_matrix_free(A);
    gsl_matrix_free(Ainv);
    gsl_vector_free(alpha);
    gsl_vector_free(mean);
    gpc_meanfield_free(m);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* One point: the cavity is the prior, and the solution is exact. */
static void test_one_point(void)
{
    double K11 = 3.0, yv = -1.0;
    gpc_meanfield *m = gpc_meanfield_alloc(1);
    gsl_matrix_set(m->K, 0, 0, K11);
    gsl_vector_view y = gsl_vector_view_array(&yv, 1);
    int st = gpc_meanfield_run(m, &y.vector);
    TEST_OK(st == GPC_OK && m->sweeps <= 2, "one point: converges (%d sweeps)", m->sweeps);
    /* posterior mean of Phi(y f) N(f | 0, K11) by the midpoint rule */
    double sd = sqrt(K11), lo = -14 * sd, step = 28 * sd / 200000, s0 = 0, s1 = 0;
    for (int i = 0; i < 200000; i++) {
        double f = lo + (i + 0.5) * step;
        double w = gsl_cdf_ugaussian_P(yv * f) * gsl_ran_gaussian_pdf(f, sd);
        s0 += w;
        s1 += w * f;
    }
    TEST_CLOSE(gsl_vector_get(m->h, 0), s1 / s0, 1e-8, 1e-10,
               "one point: h is the exact posterior mean by quadrature");
    TEST_CLOSE(gsl_vector_get(m->cav_mean, 0), 0, 0, 1e-15, "one point: cavity mean 0");
    TEST_CLOSE(gsl_vector_get(m->cav_var, 0), K11, 0, 0, "one point: cavity variance K11");

    /* the sweeps, damped by 0.5, move halfway each sweep: x_k = (1 - 2^-k) x */
    double x = gsl_vector_get(m->x, 0);
    m->solver = GPC_MF_SWEEPS;
    m->damping = 0.5;
    m->max_sweeps = 1;
    int st1 = gpc_meanfield_run(m, &y.vector);
    TEST_OK(st1 == GPC_ENUM, "one point, damping 0.5: one sweep is not enough");
    TEST_CLOSE(gsl_vector_get(m->x, 0), 0.5 * x, 1e-15, 0, "one point, damping 0.5: halfway");
    m->max_sweeps = 500;
    st1 = gpc_meanfield_run(m, &y.vector);
    TEST_OK(st1 == GPC_OK && m->sweeps > 30 && m->sweeps < 40,
            "one point, damping 0.5: converges in %d sweeps (about 34)", m->sweeps);
    TEST_CLOSE(gsl_vector_get(m->x, 0), x, 1e-9, 0, "one point, damping 0.5: the same x");
    gpc_meanfield_free(m);
}

/* Probit, 30 points: the fixed-point equations hold, h = K x, the damping
 * and the order of the cases do not change the solution, predictions. */
static void test_probit(gsl_rng *r)
{
    size_t n = 30;
    gpc_meanfield *m = gpc_meanfield_alloc(n);
    gsl_vector *y = gsl_vector_alloc(n);
    probit_problem(r, n, 2, 1.0, m->K, y);
    int st = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_OK, "30 points: converges (%d sweeps)", m->sweeps);
    TEST_CLOSE(fixed_point_residual(m, y), 0, 0, 1e-9,
               "30 points: max |x_i - g_i(m_i)| after convergence");
    gsl_vector *Kx = gsl_vector_alloc(n);
    gsl_blas_dgemv(CblasNoTrans, 1.0, m->K, m->x, 0.0, Kx);
    TEST_CLOSE(max_abs_diff(m->h, Kx), 0, 0, 1e-12, "30 points: h = K x");
    double wc = 0;
    for (size_t i = 0; i < n; i++)
        wc = fmax(wc, fabs(gsl_vector_get(m->cav_mean, i) -
                           (gsl_vector_get(Kx, i) -
                            gsl_matrix_get(m->K, i, i) * gsl_vector_get(m->x, i))));
    TEST_CLOSE(wc, 0, 0, 1e-12, "30 points: cavity means h_i - K_ii x_i");
    int signs = 0;
    for (size_t i = 0; i < n; i++)
        signs += gsl_vector_get(m->x, i) * gsl_vector_get(y, i) > 0;
    TEST_OK(signs == (int)n, "probit: every x_i has the sign of y_i (%d of %zu)", signs, n);

    /* damping 0.5 reaches the same fixed point */
    gsl_vector *x1 = gsl_vector_alloc(n);
    gsl_vector_memcpy(x1, m->x);
    int sweeps1 = m->sweeps;
    m->damping = 0.5;
    st = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_OK, "damping 0.5: converges (%d sweeps, %d undamped)", m->sweeps, sweeps1);
    TEST_CLOSE(max_abs_diff(m->x, x1), 0, 0, 1e-9, "damping 0.5: the same fixed point");
    m->damping = 1.0;

    /* predictions at the training inputs give h and the prior variances */
    gsl_vector *kss = gsl_vector_alloc(n), *pm = gsl_vector_alloc(n), *pv = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(kss, i, gsl_matrix_get(m->K, i, i));
    gpc_meanfield_predict(m, m->K, kss, pm, pv);
    TEST_CLOSE(max_abs_diff(pm, m->h), 0, 0, 1e-12, "predictions at the training inputs: mean h");
    TEST_CLOSE(max_abs_diff(pv, kss), 0, 0, 0,
               "predictions at the training inputs: variance k(s, s)");

    /* a saved solution gives the same h, cavities and predictions */
    gpc_meanfield *m2 = gpc_meanfield_alloc(n);
    gsl_matrix_memcpy(m2->K, m->K);
    st = gpc_meanfield_set_x(m2, m->x);
    TEST_OK(st == GPC_OK, "set_x: accepted");
    TEST_CLOSE(max_abs_diff(m2->h, m->h) + max_abs_diff(m2->cav_mean, m->cav_mean) +
                   max_abs_diff(m2->cav_var, m->cav_var), 0, 0, 0,
               "set_x: the same h and cavities as the run");
    gsl_matrix *Ks = gsl_matrix_alloc(n, 3);
    gsl_vector *k3 = gsl_vector_alloc(3), *m3 = gsl_vector_alloc(3), *v3 = gsl_vector_alloc(3);
    for (size_t i = 0; i < n * 3; i++)
        Ks->data[i] = gsl_rng_uniform(r);
    for (size_t c = 0; c < 3; c++)
        gsl_vector_set(k3, c, 1.0 + c);
    gpc_meanfield_predict(m2, Ks, k3, m3, v3);
    double wp = 0;
    for (size_t c = 0; c < 3; c++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += gsl_matrix_get(Ks, i, c) * gsl_vector_get(m2->x, i);
        wp = fmax(wp, fabs(s - gsl_vector_get(m3, c)));
    }
    TEST_CLOSE(wp, 0, 0, 1e-12, "predictions at new inputs: mean k*' x");
    TEST_CLOSE(max_abs_diff(v3, k3), 0, 0, 0, "predictions at new inputs: variance k**");
    gpc_meanfield_free(m2);

    /* cases permuted together with K: the permuted solution */
    gsl_permutation *p = gsl_permutation_alloc(n);
    gsl_permutation_init(p);
    gsl_ran_shuffle(r, p->data, n, sizeof(size_t));
    gpc_meanfield *mp = gpc_meanfield_alloc(n);
    gsl_vector *yp = gsl_vector_alloc(n);
    for (size_t a = 0; a < n; a++) {
        size_t pa = gsl_permutation_get(p, a);
        gsl_vector_set(yp, a, gsl_vector_get(y, pa));
        for (size_t b = 0; b < n; b++)
            gsl_matrix_set(mp->K, a, b, gsl_matrix_get(m->K, pa, gsl_permutation_get(p, b)));
    }
    st = gpc_meanfield_run(mp, yp);
    double wperm = 0;
    for (size_t a = 0; a < n; a++)
        wperm = fmax(wperm, fabs(gsl_vector_get(mp->x, a) -
                                 gsl_vector_get(x1, gsl_permutation_get(p, a))));
    TEST_OK(st == GPC_OK, "permuted cases: converges (%d sweeps)", mp->sweeps);
    TEST_CLOSE(wperm, 0, 0, 1e-8, "permuted cases: the permuted solution");
    gpc_meanfield_free(mp);
    gsl_permutation_free(p);
    gsl_vector_free(yp);

    /* one sweep is not enough: a numerical failure that suggests damping,
     * with the last iterate left consistent */
    m->solver = GPC_MF_SWEEPS;
    m->max_sweeps = 1;
    st = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_ENUM && strstr(gpc_errmsg(), "damping") && strstr(gpc_errmsg(), "1 sweep"),
            "max_sweeps 1: GPC_ENUM with a damping hint (%s)", gpc_errmsg());
    gsl_blas_dgemv(CblasNoTrans, 1.0, m->K, m->x, 0.0, Kx);
    TEST_CLOSE(max_abs_diff(m->h, Kx), 0, 0, 1e-12, "max_sweeps 1: h = K x for the last iterate");
    m->max_sweeps = 500;
    /* and one Newton step is not enough either */
    m->solver = GPC_MF_NEWTON;
    m->max_newton = 1;
    st = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_ENUM && strstr(gpc_errmsg(), "1 Newton step") && m->newton_steps == 1,
            "max_newton 1: GPC_ENUM naming the step (%s)", gpc_errmsg());
    gsl_blas_dgemv(CblasNoTrans, 1.0, m->K, m->x, 0.0, Kx);
    TEST_CLOSE(max_abs_diff(m->h, Kx), 0, 0, 1e-12, "max_newton 1: h = K x for the last iterate");
    m->max_newton = 0;
    TEST_OK(gpc_meanfield_run(m, y) == GPC_EUSAGE, "max_newton 0: usage error (%s)",
            gpc_errmsg());
    m->max_newton = 100;

    /* settings outside their range */
    m->damping = 0.0;
    TEST_OK(gpc_meanfield_run(m, y) == GPC_EUSAGE, "damping 0: usage error (%s)", gpc_errmsg());
    m->damping = 1.5;
    TEST_OK(gpc_meanfield_run(m, y) == GPC_EUSAGE, "damping 1.5: usage error");
    m->damping = 1.0;
    double k00 = gsl_matrix_get(m->K, 0, 0);
    gsl_matrix_set(m->K, 0, 0, 0.0);
    TEST_OK(gpc_meanfield_run(m, y) == GPC_ENUM && strstr(gpc_errmsg(), "K[1,1]"),
            "zero prior variance: GPC_ENUM naming it (%s)", gpc_errmsg());
    TEST_OK(gpc_meanfield_set_x(m, x1) == GPC_ENUM, "zero prior variance: set_x refuses it");
    gsl_matrix_set(m->K, 0, 0, k00);

    gsl_vector_free(x1);
    gsl_vector_free(Kx);
    gsl_vector_free(kss);
    gsl_vector_free(pm);
    gsl_vector_free(pv);
    gsl_matrix_free(Ks);
    gsl_vector_free(k3);
    gsl_vector_free(m3);
    gsl_vector_free(v3);
    gsl_vector_free(y);
    gpc_meanfield_free(m);
}

/* A likelihood whose moments turn NaN once the cavity mean leaves [-1, 1]. */
static void fragile_moments(const void *ctx, double y, double m, double v, double *logZ,
                            double *mean, double *var)
{
    gpc_ep_probit(ctx, y, m, v, logZ, mean, var);
    if (fabs(m) > 1.0)
        *mean = NAN;
}

static void test_nonfinite(gsl_rng *r)
{
    size_t n = 30;
    gpc_meanfield *m = gpc_meanfield_alloc(n);
    gsl_vector *y = gsl_vector_alloc(n);
    probit_problem(r, n, 2, 1.0, m->K, y);
    m->moments = fragile_moments;
    int st = gpc_meanfield_run(m, y);
    int finite = 1;
    for (size_t i = 0; i < n; i++)
        finite &= isfinite(gsl_vector_get(m->x, i)) && isfinite(gsl_vector_get(m->h, i));
    TEST_OK(st == GPC_ENUM && strstr(gpc_errmsg(), "not finite"),
            "non-finite moments: GPC_ENUM (%s)", gpc_errmsg());
    TEST_OK(finite, "non-finite moments: no NaN left in x or h");
    gpc_meanfield_free(m);
    gsl_vector_free(y);
}

/* 100 points: the plain sweeps need many hundreds here (the
 * names report how many), damping 0.5 needs fewer and finds the same fixed
 * point, and the paper's step likelihood with label noise goes through the
 * same interface. */
/* g(m) = (E[f] - m) / lambda = d log Z / dm under the cavity N(m, lambda):
 * the solver's Jacobian and the linear response use g'(m) = (v - lambda) /
 * lambda^2, v the tilted variance.  Central differences with step 1e-4
 * have truncation error about g''' 1e-8 / 6, well inside 1e-6. */
static double g_of(gpc_ep_moments mom, const void *ctx, double y, double m, double lam)
{
    double lz, mh, vh;
    mom(ctx, y, m, lam, &lz, &mh, &vh);
    return (mh - m) / lam;
}

static void test_derivatives(void)
{
    gpc_ep_label_noise step = {0.0, 0.0}, noisy = {0.1, 0.0}, noisy_probit = {0.05, 1.0};
    struct { const char *name; gpc_ep_moments mom; const void *ctx; } liks[] = {
        {"probit", gpc_ep_probit, NULL},
        {"step", gpc_ep_label_noise_moments, &step},
        {"step, 10% noise", gpc_ep_label_noise_moments, &noisy},
        {"probit, 5% noise", gpc_ep_label_noise_moments, &noisy_probit},
    };
    double ms[] = {-4.0, -1.0, 0.0, 0.7, 3.0}, lams[] = {0.3, 2.5}, dm = 1e-4;
    for (size_t l = 0; l < 4; l++) {
        double worst = 0, neg = 0;
        for (size_t a = 0; a < 5; a++)
            for (size_t b = 0; b < 2; b++)
                for (int y = -1; y <= 1; y += 2) {
                    double m = ms[a], lam = lams[b], lz, mh, vh;
                    liks[l].mom(liks[l].ctx, y, m, lam, &lz, &mh, &vh);
                    double an = (vh - lam) / (lam * lam);
                    double fd = (g_of(liks[l].mom, liks[l].ctx, y, m + dm, lam) -
                                 g_of(liks[l].mom, liks[l].ctx, y, m - dm, lam)) / (2 * dm);
                    worst = fmax(worst, fabs(an - fd) / (1e-3 + fabs(fd)));
                    neg += vh > lam;
                }
        TEST_CLOSE(worst, 0, 0, 1e-6, "%s: g'(m) = (v - lambda) / lambda^2 by central "
                   "differences (%g of 20 with v > lambda)", liks[l].name, neg);
    }
}

/* The sweeps, run to their tolerance with up to 200000 sweeps, and Newton
 * from the same start: the same solution.  The sweeps stop at a relative
 * step of 1e-10 while converging linearly at a rate rho near 1, so they are
 * off by up to 1e-10 / (1 - rho): 1e-7 allows rho up to 0.999. */
static void compare_solvers(const char *name, gpc_meanfield *m, const gsl_vector *y,
                            int max_newton_steps)
{
    gpc_meanfield *ms = gpc_meanfield_alloc(m->n);
    gsl_matrix_memcpy(ms->K, m->K);
    ms->moments = m->moments;
    ms->moments_ctx = m->moments_ctx;
    ms->solver = GPC_MF_SWEEPS;
    ms->max_sweeps = 200000;
    int st = gpc_meanfield_run(ms, y), st2 = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_OK && st2 == GPC_OK, "%s: sweeps converge (%d sweeps), Newton converges "
            "(%d steps, %d fallbacks)", name, ms->sweeps, m->newton_steps, m->fallbacks);
    TEST_OK(m->newton_steps <= max_newton_steps && m->fallbacks == 0,
            "%s: %d Newton steps (bound %d)", name, m->newton_steps, max_newton_steps);
    double scale = 0;
    for (size_t i = 0; i < m->n; i++)
        scale = fmax(scale, fabs(gsl_vector_get(ms->x, i)));
    TEST_CLOSE(max_abs_diff(m->x, ms->x) / scale, 0, 0, 1e-7, "%s: Newton's x is the sweeps' "
               "(max |x| %.3g)", name, scale);
    /* Newton stops at the same relative 1e-10 as the sweeps */
    TEST_CLOSE(fixed_point_residual(m, y), 0, 0, 1e-10 * (1 + scale), "%s: Newton's fixed point",
               name);
    gpc_meanfield_free(ms);
}

/* A smooth kernel over 5-D inputs: K = exp(-w |s - s'|^2 / 2), nearly of
 * rank 1 + d when w is small, which is what slows the sweeps.  The labels
 * are linearly separable, as Sonar's are (104 cases, 60 inputs): with the
 * step likelihood and labels that nearly linear functions cannot fit,
 * the equations have no finite solution (x runs off along the near-null
 * space of K, under either solver). */
static void smooth_problem(gsl_rng *r, size_t n, double w, gsl_matrix *K, gsl_vector *y)
{
    gsl_matrix *X;
    gsl_vector *labels;
    linear_problem(r, n, 5, &X, &labels);
    gsl_vector_memcpy(y, labels);
    gpc_kernel *k;
    gpc_kernel_parse("se", 5, &k);
    double th[2] = {0.0, log(w)};
    gpc_kernel_set_params(k, th);
    gpc_kernel_matrix(k, X, K);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(labels);
}

static void test_newton(gsl_rng *r)
{
    size_t n = 60;
    gsl_vector *y = gsl_vector_alloc(n);
    gpc_meanfield *m = gpc_meanfield_alloc(n);
    probit_problem(r, n, 2, 1.0, m->K, y);
    compare_solvers("60 points, probit", m, y, 10);
    gpc_ep_label_noise step = {0.0, 0.0};
    m->moments = gpc_ep_label_noise_moments;
    m->moments_ctx = &step;
    compare_solvers("60 points, step", m, y, 15);

    /* the hard case: a smooth kernel (sigma^2 small in Opper & Winther's
     * Sonar runs) and the step likelihood, where the sweeps crawl: tens of
     * thousands at w = 0.01, and still moving after 20000 at w = 1e-4 */
    smooth_problem(r, n, 0.01, m->K, y);
    compare_solvers("smooth kernel w = 0.01, step", m, y, 15);
    smooth_problem(r, n, 1e-4, m->K, y);
    int st = gpc_meanfield_run(m, y);
    double scale = 0;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(gsl_vector_get(m->x, i)));
    TEST_OK(st == GPC_OK && m->newton_steps <= 20 && m->fallbacks == 0,
            "smooth kernel w = 1e-4, step: Newton converges in %d steps (bound 20)",
            m->newton_steps);
    TEST_CLOSE(fixed_point_residual(m, y), 0, 0, 1e-10 * (1 + scale),
               "smooth kernel w = 1e-4, step: Newton's fixed point (max |x| %.3g)", scale);
    gpc_meanfield *ms = gpc_meanfield_alloc(n);
    gsl_matrix_memcpy(ms->K, m->K);
    ms->moments = m->moments;
    ms->moments_ctx = m->moments_ctx;
    ms->solver = GPC_MF_SWEEPS;
    st = gpc_meanfield_run(ms, y);
    TEST_OK(st == GPC_ENUM && ms->sweeps == 20000, "smooth kernel w = 1e-4, step: the sweeps "
            "do not converge in 20000 (%.3g from Newton's x)",
            max_abs_diff(ms->x, m->x) / scale);
    gpc_meanfield_free(ms);

    /* label noise on outliers: some tilted variances exceed the cavity
     * variance (w_i < 0), and B is factored with pivoting */
    gsl_matrix *X;
    gsl_vector *yc;
    circle_problem(r, n, &X, &yc);
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    double th[2] = {log(4.0), log(4.0)};
    gpc_kernel_set_params(k, th);
    gpc_kernel_matrix(k, X, m->K);
    gpc_ep_label_noise noisy = {0.05, 0.0};
    m->moments_ctx = &noisy;
    compare_solvers("circle with outliers, step with 5% label noise", m, yc, 20);
    size_t neg = 0;
    for (size_t i = 0; i < n; i++) {
        double lz, mh, vh, kii = gsl_matrix_get(m->K, i, i);
        m->moments(m->moments_ctx, gsl_vector_get(yc, i), gsl_vector_get(m->cav_mean, i), kii,
                   &lz, &mh, &vh);
        neg += vh > kii;
    }
    TEST_OK(neg > 0, "circle with outliers: %zu tilted variances exceed the cavity's", neg);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(yc);
    gsl_vector_free(y);
    gpc_meanfield_free(m);
}

static void test_hundred(gsl_rng *r)
{
    size_t n = 100;
    gpc_meanfield *m = gpc_meanfield_alloc(n);
    gsl_vector *y = gsl_vector_alloc(n), *x1 = gsl_vector_alloc(n);
    probit_problem(r, n, 2, 1.0, m->K, y);
    m->max_sweeps = 20000;
    int st = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_OK, "100 points, probit: converges (%d Newton steps)", m->newton_steps);
    TEST_CLOSE(fixed_point_residual(m, y), 0, 0, 1e-9, "100 points, probit: fixed point");
    gsl_vector_memcpy(x1, m->x);
    m->damping = 0.5;
    st = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_OK, "100 points, probit, damping 0.5: converges (%d Newton steps)",
            m->newton_steps);
    TEST_CLOSE(max_abs_diff(m->x, x1), 0, 0, 1e-8,
               "100 points, probit, damping 0.5: the same fixed point");
    m->damping = 1.0;
    gpc_ep_label_noise noisy = {0.1, 0.0};
    m->moments = gpc_ep_label_noise_moments;
    m->moments_ctx = &noisy;
    st = gpc_meanfield_run(m, y);
    TEST_OK(st == GPC_OK, "100 points, step with 10%% label noise: converges (%d Newton steps)",
            m->newton_steps);
    TEST_CLOSE(fixed_point_residual(m, y), 0, 0, 1e-9,
               "100 points, step with 10%% label noise: fixed point");
    gpc_meanfield_free(m);
    gsl_vector_free(y);
    gsl_vector_free(x1);
}

/* The leave-one-out means of case i: by linear response (the library), by
 * the linearised refit solved here directly, and by the refit itself. */
static double refit_mean(const gpc_meanfield *m, const gsl_vector *y, size_t i)
{
    size_t n = m->n;
    gpc_meanfield *r = gpc_meanfield_alloc(n - 1);
    gsl_vector *yr = gsl_vector_alloc(n - 1);
    r->moments = m->moments;
    r->moments_ctx = m->moments_ctx;
    for (size_t a = 0, ra = 0; a < n; a++) {
        if (a == i)
            continue;
        gsl_vector_set(yr, ra, gsl_vector_get(y, a));
        for (size_t b = 0, rb = 0; b < n; b++)
            if (b != i)
                gsl_matrix_set(r->K, ra, rb++, gsl_matrix_get(m->K, a, b));
        ra++;
    }
    double mean = GSL_NAN;
    if (gpc_meanfield_run(r, yr) == GPC_OK) {
        mean = 0;
        for (size_t a = 0, ra = 0; a < n; a++)
            if (a != i)
                mean += gsl_matrix_get(m->K, i, a) * gsl_vector_get(r->x, ra++);
    }
    gpc_meanfield_free(r);
    gsl_vector_free(yr);
    return mean;
}

/* Removing case i moves x_i to 0; to first order the others move by dx_R
 * solving their linearised equations dx_j = g_j'(m_j) (sum_{k != j, i} K_jk
 * dx_k - K_ji x_i), with g_j' here by central differences (step 1e-5):
 * (I + A (K - D))_RR dx_R = A_R K_Ri x_i, A = diag(-g'), by LU. */
static double linearised_refit_mean(const gpc_meanfield *m, const gsl_vector *y, size_t i)
{
    size_t n = m->n, k = 0;
    gsl_matrix *M = gsl_matrix_alloc(n - 1, n - 1);
    gsl_vector *b = gsl_vector_alloc(n - 1), *dx = gsl_vector_alloc(n - 1);
    size_t idx[n];
    for (size_t a = 0; a < n; a++)
        if (a != i)
            idx[k++] = a;
    for (size_t p = 0; p < n - 1; p++) {
        size_t j = idx[p];
        double mj = 0, lam = gsl_matrix_get(m->K, j, j), yj = gsl_vector_get(y, j), dm = 1e-5;
        for (size_t c = 0; c < n; c++)
            if (c != j)
                mj += gsl_matrix_get(m->K, j, c) * gsl_vector_get(m->x, c);
        double a = -(g_of(m->moments, m->moments_ctx, yj, mj + dm, lam) -
                     g_of(m->moments, m->moments_ctx, yj, mj - dm, lam)) / (2 * dm);
        for (size_t q = 0; q < n - 1; q++)
            gsl_matrix_set(M, p, q, (p == q) + (p == q ? 0 : a * gsl_matrix_get(m->K, j, idx[q])));
        gsl_vector_set(b, p, a * gsl_matrix_get(m->K, j, i) * gsl_vector_get(m->x, i));
    }
    gsl_permutation *perm = gsl_permutation_alloc(n - 1);
    int sgn;
    gsl_linalg_LU_decomp(M, perm, &sgn);
    gsl_linalg_LU_solve(M, perm, b, dx);
    double mean = 0;
    for (size_t p = 0; p < n - 1; p++)
        mean += gsl_matrix_get(m->K, i, idx[p]) * (gsl_vector_get(m->x, idx[p]) +
                                                   gsl_vector_get(dx, p));
    gsl_permutation_free(perm);
    gsl_matrix_free(M);
    gsl_vector_free(b);
    gsl_vector_free(dx);
    return mean;
}

static void loo_against_refits(const char *name, gpc_meanfield *m, const gsl_vector *y,
                               double tol_refit)
{
    size_t n = m->n;
    gsl_vector *lm = gsl_vector_alloc(n), *lv = gsl_vector_alloc(n);
    int st = gpc_meanfield_run(m, y);
    st |= gpc_meanfield_loo(m, y, lm, lv);
    TEST_OK(st == GPC_OK, "%s: solved, leave-one-out by linear response", name);
    double w_lin = 0, w_ref = 0, w_cav = 0, scale = 0, w_var = 0;
    size_t sign_lr = 0, sign_cav = 0;
    for (size_t i = 0; i < n; i++) {
        double lr = gsl_vector_get(lm, i), lin = linearised_refit_mean(m, y, i);
        double ref = refit_mean(m, y, i), cav = gsl_vector_get(m->cav_mean, i);
        w_lin = fmax(w_lin, fabs(lr - lin));
        w_ref = fmax(w_ref, fabs(lr - ref));
        w_cav = fmax(w_cav, fabs(cav - ref));
        scale = fmax(scale, fabs(ref));
        w_var = fmax(w_var, fabs(gsl_vector_get(lv, i) - gsl_matrix_get(m->K, i, i)));
        sign_lr += (lr > 0) != (ref > 0);
        sign_cav += (cav > 0) != (ref > 0);
    }
    TEST_CLOSE(w_lin / scale, 0, 0, 1e-6, "%s: linear response = the linearised refits solved "
               "directly (g' by central differences)", name);
    TEST_CLOSE(w_var, 0, 0, 0, "%s: leave-one-out variances K_ii", name);
    TEST_OK(w_ref <= tol_refit * scale && w_ref <= 0.25 * w_cav && sign_lr <= 1,
            "%s: linear response within %.3g of the refits' means (max |mean| %.3g, bound %g of "
            "it and 1/4 of the cavity's %.3g); signs differ for %zu (cavity: %zu) of %zu",
            name, w_ref, scale, tol_refit, w_cav, sign_lr, sign_cav, n);
    gsl_vector_free(lm);
    gsl_vector_free(lv);
}

/* Linear response is exact for a Gaussian likelihood (test_gaussian) and
 * equals the linearised refits to the central differences' accuracy; what
 * is left against the refits is second order in the removed case's pull
 * K_ji x_i on the others' cavities, through g_j''.  Measured here: 1 to 6%
 * of the largest |refit mean| (the step likelihood's g is the most curved),
 * against 70% to 900% for the solution's own cavities.  Bound: 10%, a
 * quarter of the cavities' error, and at most one sign off. */
static void test_loo(gsl_rng *r)
{
    size_t n = 30;
    gsl_vector *y = gsl_vector_alloc(n);
    gpc_meanfield *m = gpc_meanfield_alloc(n);
    probit_problem(r, n, 2, 1.0, m->K, y);
    loo_against_refits("30 points, probit", m, y, 0.1);
    gpc_ep_label_noise step = {0.0, 0.0}, noisy = {0.05, 0.0};
    m->moments = gpc_ep_label_noise_moments;
    m->moments_ctx = &step;
    smooth_problem(r, n, 0.1, m->K, y);
    loo_against_refits("30 points, step, smooth kernel", m, y, 0.1);
    m->moments_ctx = &noisy;
    loo_against_refits("30 points, step with 5% label noise, smooth kernel", m, y, 0.1);
    gsl_vector_free(y);
    gpc_meanfield_free(m);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    test_gaussian(r);
    test_one_point();
    test_probit(r);
    test_nonfinite(r);
    test_hundred(r);
    test_derivatives();
    test_newton(r);
    test_loo(r);
    gsl_rng_free(r);
    return tap_done();
}
