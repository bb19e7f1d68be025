/* Outlier-robust GPC: the M-step against its definition, EM recovering a
 * planted flip rate from labels drawn from the model itself, model selection
 * keeping the fit with the higher evidence, and the usage errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "hyper/evidence.h"
#include "hyper/robust.h"
#include "tap.h"

static gpc_ep *ep_of(const gpc_evidence *ev)
{
    return gpc_evidence_workspace(ev, &gpc_method_ep_ops);
}

/* n inputs uniform on [-2, 2]^2, a latent f drawn from the kernel's prior,
 * y = sign(f) with each label flipped with probability flip; returns the
 * number of flipped labels. */
static size_t draw_problem(gsl_rng *r, const gpc_kernel *k, size_t n, double flip,
                           gsl_matrix **Xo, gsl_vector **yo)
{
    gsl_matrix *X = gsl_matrix_alloc(n, 2), *K = gsl_matrix_alloc(n, n);
    gsl_vector *y = gsl_vector_alloc(n), *z = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        for (size_t l = 0; l < 2; l++)
            gsl_matrix_set(X, i, l, gsl_ran_flat(r, -2, 2));
    gpc_kernel_matrix(k, X, K);
    for (size_t i = 0; i < n; i++)
        *gsl_matrix_ptr(K, i, i) += 1e-8;
    gsl_linalg_cholesky_decomp1(K);
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(z, i, gsl_ran_ugaussian(r));
    gsl_blas_dtrmv(CblasLower, CblasNoTrans, CblasNonUnit, K, z);
    size_t flipped = 0;
    for (size_t i = 0; i < n; i++) {
        double s = gsl_vector_get(z, i) > 0 ? 1.0 : -1.0;
        if (gsl_rng_uniform(r) < flip) {
            s = -s;
            flipped++;
        }
        gsl_vector_set(y, i, s);
    }
    gsl_matrix_free(K);
    gsl_vector_free(z);
    *Xo = X;
    *yo = y;
    return flipped;
}

static gpc_kernel *make_kernel(const char *spec, const double *theta)
{
    gpc_kernel *k;
    gpc_kernel_parse(spec, 2, &k);
    gpc_kernel_set_params(k, theta);
    return k;
}

/* The M-step is the mean of 1 - Phi(y_i mu_i / sqrt(Sigma_ii)). */
static void test_flip_rate(gsl_rng *r)
{
    double th[3] = {log(2.0), log(1.0), log(0.05)};
    gpc_kernel *k = make_kernel("se+jitter", th);
    gsl_matrix *X;
    gsl_vector *y;
    draw_problem(r, k, 40, 0.1, &X, &y);
    gpc_evidence *ev = gpc_evidence_alloc(k, X, y, 2, GPC_LIK_STEP, GPC_METHOD_EP);
    double z, want = 0;
    gpc_evidence_set_label_noise(ev, 0.05);
    gpc_evidence_eval(ev, th, &z, NULL);
    for (size_t i = 0; i < 40; i++) {
        double m = gsl_vector_get(ep_of(ev)->mu, i), v = gsl_matrix_get(ep_of(ev)->Sigma, i, i);
        want += 1 - gsl_cdf_ugaussian_P(gsl_vector_get(y, i) * m / sqrt(v));
    }
    TEST_CLOSE(gpc_robust_flip_rate(ep_of(ev), y), want / 40, 1e-12, 0,
               "M-step: mean of 1 - Phi(y mu / sqrt(Sigma_ii))");
    gpc_evidence_free(ev);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* Labels drawn from the model with a planted flip rate: EM at the true
 * kernel recovers it.  The M-step counts each case's posterior probability
 * of being on the wrong side, so cases near the boundary add to it; with a
 * clear latent function (v0 = 9, latent noise 0.1) that part is small. */
static void test_planted_rate(gsl_rng *r)
{
    double th[3] = {log(9.0), log(0.5), log(0.1)};
    gpc_kernel *k = make_kernel("se+jitter", th);
    for (int c = 0; c < 2; c++) {
        double planted = c ? 0.15 : 0.05;
        gsl_matrix *X;
        gsl_vector *y;
        size_t n = 300, flipped = draw_problem(r, k, n, planted, &X, &y);
        gpc_evidence *ev = gpc_evidence_alloc(k, X, y, 2, GPC_LIK_STEP, GPC_METHOD_EP);
        gpc_robust_opts o;
        gpc_robust_defaults(&o);
        o.mode = GPC_ROBUST_EM;
        o.optimize = 0;
        gpc_robust_result res;
        double t[3] = {th[0], th[1], th[2]};
        int st = gpc_robust_fit(ev, t, &o, &res);
        double realised = (double)flipped / (double)n;
        TEST_OK(st == GPC_OK && res.converged, "planted %g: EM converges (%d iterations) %s",
                planted, res.em_iterations, st ? gpc_errmsg() : "");
        TEST_CLOSE(res.eps, realised, 0, 0.03,
                   "planted %g: EM's flip probability %.4f near the realised rate %.4f",
                   planted, res.eps, realised);
        /* EM's fixed point is not the evidence maximum; the gradient steps
         * after it must end where d log Z / d eps vanishes */
        TEST_OK(fabs(res.deps) * res.eps * (1 - 2 * res.eps) < 1e-5,
                "planted %g: the fit ends at a maximum in eps (d log Z / d eps = %.2g)",
                planted, res.deps);
        double zl, zr;
        gpc_evidence_set_label_noise(ev, res.eps * 0.9);
        gpc_evidence_eval(ev, t, &zl, NULL);
        gpc_evidence_set_label_noise(ev, res.eps * 1.1);
        gpc_evidence_eval(ev, t, &zr, NULL);
        TEST_OK(zl < res.log_evidence && zr < res.log_evidence,
                "planted %g: the evidence falls on both sides of eps (%.8g, %.8g < %.8g)",
                planted, zl, zr, res.log_evidence);
        double z;
        gpc_evidence_set_label_noise(ev, res.eps);
        gpc_evidence_eval(ev, t, &z, NULL);
        TEST_CLOSE(res.log_evidence, z, 1e-12, 0,
                   "planted %g: the reported evidence is EP's at the final eps", planted);
        gpc_evidence_free(ev);
        gsl_matrix_free(X);
        gsl_vector_free(y);
    }
    gpc_kernel_free(k);
}

/* Model selection keeps whichever of eps = 0 and EM has the higher
 * evidence, and reports both; the fits it compares are the ones FIXED and
 * EM give on their own. */
static void test_select(gsl_rng *r)
{
    double th[3] = {log(4.0), log(1.0), log(0.1)};
    gpc_kernel *k = make_kernel("se+jitter", th);
    for (int c = 0; c < 2; c++) {
        gsl_matrix *X;
        gsl_vector *y;
        draw_problem(r, k, 50, c ? 0.2 : 0.0, &X, &y);
        gpc_evidence *ev = gpc_evidence_alloc(k, X, y, 2, GPC_LIK_STEP, GPC_METHOD_EP);
        gpc_robust_opts o;
        gpc_robust_defaults(&o);
        gpc_robust_result plain, em, sel;
        double t0[3], t1[3], t2[3];
        memcpy(t0, th, sizeof th);
        memcpy(t1, th, sizeof th);
        memcpy(t2, th, sizeof th);
        int st = gpc_robust_fit(ev, t0, &o, &plain);
        o.mode = GPC_ROBUST_EM;
        st |= gpc_robust_fit(ev, t1, &o, &em);
        o.mode = GPC_ROBUST_SELECT;
        st |= gpc_robust_fit(ev, t2, &o, &sel);
        TEST_OK(st == GPC_OK, "select (%s labels): all three fits succeed (EM: %d iterations)",
                c ? "noisy" : "clean", em.em_iterations);
        TEST_CLOSE(sel.plain_evidence, plain.log_evidence, 1e-9, 0,
                   "select: evidence without label noise as the plain fit's");
        TEST_CLOSE(sel.robust_evidence, em.log_evidence, 1e-9, 0,
                   "select: evidence with label noise as the EM fit's");
        int robust = em.log_evidence > plain.log_evidence;
        TEST_CLOSE(sel.log_evidence, robust ? em.log_evidence : plain.log_evidence, 1e-9, 0,
                   "select (%s labels): keeps the %s model (evidence %.4f vs %.4f)",
                   c ? "noisy" : "clean", robust ? "robust" : "plain", em.log_evidence,
                   plain.log_evidence);
        TEST_OK(sel.eps == (robust ? em.eps : 0.0) &&
                    fabs(t2[2] - (robust ? t1[2] : t0[2])) < 1e-9,
                "select: the chosen model's eps and hyperparameters are returned");
        TEST_CLOSE(sel.deps, gpc_ep_dlogz_deps(ep_of(ev), y), 1e-12, 0,
                   "select: d log Z / d eps reported at the chosen eps (%.3g)", sel.deps);
        gpc_evidence_free(ev);
        gsl_matrix_free(X);
        gsl_vector_free(y);
    }
    gpc_kernel_free(k);
}

static void test_errors(gsl_rng *r)
{
    double th[2] = {0.0, 0.0};
    gpc_kernel *k = make_kernel("se", th);
    gsl_matrix *X;
    gsl_vector *y;
    draw_problem(r, k, 10, 0.0, &X, &y);
    gpc_robust_opts o;
    gpc_robust_defaults(&o);
    o.mode = GPC_ROBUST_EM;
    gpc_robust_result res;
    gpc_evidence *ev = gpc_evidence_alloc(k, X, y, 2, GPC_LIK_PROBIT, GPC_METHOD_EP);
    TEST_OK(gpc_robust_fit(ev, th, &o, &res) == GPC_EUSAGE && strstr(gpc_errmsg(), "-l step"),
            "EM with the probit likelihood is a usage error: %s", gpc_errmsg());
    gpc_evidence_free(ev);
    ev = gpc_evidence_alloc(k, X, y, 2, GPC_LIK_LOGISTIC, GPC_METHOD_LAPLACE);
    TEST_OK(gpc_robust_fit(ev, th, &o, &res) == GPC_EUSAGE, "EM with Laplace is a usage error");
    TEST_OK(gpc_evidence_set_label_noise(ev, 0.1) == GPC_EUSAGE,
            "label noise with Laplace is a usage error: %s", gpc_errmsg());
    gpc_evidence_free(ev);
    ev = gpc_evidence_alloc(k, X, y, 2, GPC_LIK_STEP, GPC_METHOD_EP);
    TEST_OK(gpc_evidence_set_label_noise(ev, 0.5) == GPC_EUSAGE &&
                gpc_evidence_set_label_noise(ev, -0.1) == GPC_EUSAGE,
            "label noise outside [0, 1/2) is a usage error: %s", gpc_errmsg());
    gpc_evidence_free(ev);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* d log Z_EP / d eps from the tilted masses against central differences,
 * for the step and the probit likelihood with label noise. */
static void test_eps_derivative(gsl_rng *r)
{
    double th[3] = {log(4.0), log(1.0), log(0.1)};
    gpc_kernel *k = make_kernel("se+jitter", th);
    gsl_matrix *X;
    gsl_vector *y;
    draw_problem(r, k, 40, 0.15, &X, &y);
    const gpc_lik liks[2] = {GPC_LIK_STEP, GPC_LIK_PROBIT};
    const double rates[3] = {0.02, 0.1, 0.3};
    for (int l = 0; l < 2; l++) {
        gpc_evidence *ev = gpc_evidence_alloc(k, X, y, 2, liks[l], GPC_METHOD_EP);
        for (int c = 0; c < 3; c++) {
            double eps = rates[c], h = 1e-6, z, zp, zm;
            gpc_evidence_set_label_noise(ev, eps);
            int st = gpc_evidence_eval(ev, th, &z, NULL);
            double d = gpc_ep_dlogz_deps(ep_of(ev), y);
            gpc_evidence_set_label_noise(ev, eps + h);
            st |= gpc_evidence_eval(ev, th, &zp, NULL);
            gpc_evidence_set_label_noise(ev, eps - h);
            st |= gpc_evidence_eval(ev, th, &zm, NULL);
            TEST_OK(st == GPC_OK, "%s, eps %g: EP converges", gpc_lik_name(liks[l]), eps);
            TEST_CLOSE(d, (zp - zm) / (2 * h), 1e-6, 1e-6,
                       "%s, eps %g: d log Z / d eps against central differences",
                       gpc_lik_name(liks[l]), eps);
        }
        gpc_evidence_free(ev);
    }
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

int main(void)
{
    gpc_gsl_quiet();
    gpc_verbosity = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    test_flip_rate(r);
    test_planted_rate(r);
    test_select(r);
    test_errors(r);
    test_eps_derivative(r); /* last: the earlier tests keep their random draws */
    gsl_rng_free(r);
    return tap_done();
}
