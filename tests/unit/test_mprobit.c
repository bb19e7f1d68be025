/* The multinomial probit integrals (mprobit.h) against answers found other
 * ways: two classes in closed form (Phi of a scaled difference, far into
 * the tails in logs), three classes as a two-dimensional integral over
 * another pair of variables (an orthant probability of the bivariate
 * normal), any C against adaptive quadrature of the same one-dimensional
 * integral (GSL's QAGI), the class probabilities summing to one, and the
 * conditional means against central differences of log P (they are its
 * gradient). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_erf.h>

#include "base/err.h"
#include "liks/mprobit.h"
#include "tap.h"

static double log_Phi(double x) { return gsl_sf_log_erfc(-x / M_SQRT2) - M_LN2; }

/* ---- references -------------------------------------------------------- */

typedef struct {
    size_t C, win, power; /* power: the class whose phi replaces its Phi, or C */
    const double *mu, *nu2;
} ref_ctx;

/* phi(u) prod_{j != win} Phi(a_j(u)) with a_j = (nu_win u + mu_win - mu_j) /
 * nu_j, one factor phi(a_k) / nu_k... in place of Phi(a_k) when power = k. */
static double ref_integrand(double u, void *p)
{
    const ref_ctx *c = p;
    double nw = sqrt(c->nu2[c->win]), h = -0.5 * u * u - 0.5 * log(2.0 * M_PI);
    for (size_t j = 0; j < c->C; j++) {
        if (j == c->win)
            continue;
        double a = (nw * u + c->mu[c->win] - c->mu[j]) / sqrt(c->nu2[j]);
        h += j == c->power ? -0.5 * a * a - 0.5 * log(2.0 * M_PI) : log_Phi(a);
    }
    return exp(h);
}

static double qagi(ref_ctx *c)
{
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(2000);
    gsl_function F = {ref_integrand, c};
    double r, err;
    gsl_integration_qagi(&F, 0.0, 1e-13, 2000, ws, &r, &err);
    gsl_integration_workspace_free(ws);
    return r;
}

/* P(y_0 > y_1, y_0 > y_2) for three independent normals, integrating over
 * y_1 outside and y_0 inside: int N(t; mu_1, nu_1) int_t^inf N(s; mu_0,
 * nu_0) Phi((s - mu_2) / nu_2) ds dt. */
typedef struct {
    const double *mu, *nu2;
    double t;
    gsl_integration_workspace *inner;
} orthant_ctx;

static double inner_integrand(double s, void *p)
{
    const orthant_ctx *o = p;
    return gsl_ran_gaussian_pdf(s - o->mu[0], sqrt(o->nu2[0])) *
           gsl_cdf_ugaussian_P((s - o->mu[2]) / sqrt(o->nu2[2]));
}

static double outer_integrand(double t, void *p)
{
    orthant_ctx *o = p;
    o->t = t;
    gsl_function F = {inner_integrand, o};
    double r, err;
    gsl_integration_qagiu(&F, t, 1e-15, 1e-13, 2000, o->inner, &r, &err);
    return gsl_ran_gaussian_pdf(t - o->mu[1], sqrt(o->nu2[1])) * r;
}

static double orthant3(const double *mu, const double *nu2)
{
    orthant_ctx o = {mu, nu2, 0.0, gsl_integration_workspace_alloc(2000)};
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(2000);
    gsl_function F = {outer_integrand, &o};
    double r, err;
    gsl_integration_qagi(&F, 1e-15, 1e-12, 2000, ws, &r, &err);
    gsl_integration_workspace_free(ws);
    gsl_integration_workspace_free(o.inner);
    return r;
}

/* ---- tests -------------------------------------------------------------- */

static void test_two_classes(void)
{
    gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(2);
    double worst = 0.0, worst_nu = 0.0, worst_y = 0.0;
    for (double d = -60.0; d <= 20.0; d += 0.37) {
        double mu[2] = {0.3 + d, 0.3}, ybar[2], p[2], nu2[2] = {0.7, 2.2};
        double lp = gpc_mprobit_case(r, 0, mu, ybar), want = log_Phi(d / M_SQRT2);
        worst = fmax(worst, fabs(lp - want) / (1e-3 + fabs(want)));
        /* E[y_1 | y_0 > y_1] = mu_1 - E[phi(a)] / P: for two classes,
         * mu_1 - phi(d / sqrt 2) / (sqrt 2 Phi(d / sqrt 2)) */
        double lam = exp(-0.25 * d * d - 0.5 * log(2.0 * M_PI) - want) / M_SQRT2;
        worst_y = fmax(worst_y, fabs(ybar[1] - (mu[1] - lam)) / (1.0 + fabs(lam)));
        gpc_mprobit_probs(r, mu, nu2, p);
        double p0 = gsl_cdf_ugaussian_P(d / sqrt(nu2[0] + nu2[1]));
        worst_nu = fmax(worst_nu, fmax(fabs(p[0] - p0), fabs(p[1] - (1.0 - p0))));
    }
    TEST_CLOSE(worst, 0.0, 0.0, 1e-10, "C = 2: log P = log Phi(d / sqrt 2) for d in [-60, 20] "
               "(largest difference relative to 1e-3 + |log P|: %.1e)", worst);
    TEST_CLOSE(worst_y, 0.0, 0.0, 1e-10, "C = 2: E[y_1 | class 0] in closed form (%.1e)",
               worst_y);
    TEST_CLOSE(worst_nu, 0.0, 0.0, 1e-12, "C = 2: P(class) = Phi(d / sqrt(nu_0^2 + nu_1^2)) "
               "with unequal variances (%.1e)", worst_nu);
    gpc_mprobit_rule_free(r);
}

static void test_three_classes(gsl_rng *rng)
{
    gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(3);
    double worst = 0.0;
    for (int t = 0; t < 12; t++) {
        double mu[3], nu2[3], p[3];
        for (size_t c = 0; c < 3; c++) {
            mu[c] = 3.0 * gsl_ran_gaussian(rng, 1.0);
            nu2[c] = t < 4 ? 1.0 : 0.3 + 3.0 * gsl_rng_uniform(rng);
        }
        gpc_mprobit_probs(r, mu, nu2, p);
        worst = fmax(worst, fabs(p[0] - orthant3(mu, nu2)));
    }
    TEST_CLOSE(worst, 0.0, 0.0, 1e-10, "C = 3: P(class 0) equals the bivariate normal orthant "
               "probability by nested quadrature (largest difference %.1e)", worst);
    gpc_mprobit_rule_free(r);
}

/* Any C: probabilities and conditional means against QAGI on the same
 * integrals, probabilities summing to one, means against differences. */
static void test_any_C(gsl_rng *rng)
{
    size_t Cs[] = {3, 5, 10, 20};
    for (size_t t = 0; t < sizeof Cs / sizeof Cs[0]; t++) {
        size_t C = Cs[t];
        gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(C);
        double mu[20], nu2[20], ones[20], p[20], ybar[20], worst_p = 0.0, worst_sum = 0.0,
               worst_y = 0.0, worst_grad = 0.0;
        for (int rep = 0; rep < 12; rep++) {
            double spread = rep < 4 ? 1.0 : rep < 8 ? 4.0 : 10.0;
            for (size_t c = 0; c < C; c++) {
                mu[c] = spread * gsl_ran_gaussian(rng, 1.0);
                /* predictive variances: 1 plus a latent variance up to a
                 * large signal variance */
                nu2[c] = 1.0 + (rep % 2 ? 60.0 : 4.0) * gsl_rng_uniform(rng);
                ones[c] = 1.0;
            }
            gpc_mprobit_probs(r, mu, nu2, p);
            double s = 0.0;
            for (size_t k = 0; k < C; k++) {
                ref_ctx ctx = {C, k, C, mu, nu2};
                worst_p = fmax(worst_p, fabs(p[k] - qagi(&ctx)));
                s += p[k];
            }
            worst_sum = fmax(worst_sum, fabs(s - 1.0));
            size_t win = (size_t)rep % C;
            double lp = gpc_mprobit_case(r, win, mu, ybar), P = exp(lp);
            for (size_t k = 0; k < C; k++) {
                if (k != win && P > 1e-200) {
                    ref_ctx ctx = {C, win, k, mu, ones};
                    double want = mu[k] - qagi(&ctx) / P;
                    worst_y = fmax(worst_y, fabs(ybar[k] - want) / (1.0 + fabs(want)));
                }
                double h = 1e-5, m0 = mu[k];
                mu[k] = m0 + h;
                double lp1 = gpc_mprobit_case(r, win, mu, NULL);
                mu[k] = m0 - h;
                double lp2 = gpc_mprobit_case(r, win, mu, NULL);
                mu[k] = m0;
                double fd = (lp1 - lp2) / (2.0 * h), g = ybar[k] - mu[k];
                worst_grad = fmax(worst_grad, fabs(g - fd) / (1.0 + fabs(fd)));
            }
        }
        TEST_CLOSE(worst_p, 0.0, 0.0, 1e-10, "C = %zu: every P(class) equals adaptive "
                   "quadrature (largest difference %.1e)", C, worst_p);
        TEST_CLOSE(worst_sum, 0.0, 0.0, 1e-10, "C = %zu: the probabilities sum to one without "
                   "normalisation (largest |sum - 1| %.1e)", C, worst_sum);
        TEST_CLOSE(worst_y, 0.0, 0.0, 1e-10, "C = %zu: E[y_k | class] equals adaptive "
                   "quadrature (largest relative difference %.1e)", C, worst_y);
        TEST_CLOSE(worst_grad, 0.0, 0.0, 1e-7, "C = %zu: E[y | class] - mu is the gradient of "
                   "log P (central differences, %.1e)", C, worst_grad);
        gpc_mprobit_rule_free(r);
    }
}

/* A case far on the wrong side: log P stays finite and accurate where P
 * itself underflows (compared with two classes' closed form after merging:
 * with all other means equal and far above, P(0) is below Phi(d / sqrt 2)
 * for each rival and above their product). */
static void test_far_side(void)
{
    size_t C = 4;
    gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(C);
    double mu[4] = {-80.0, 0.0, 1.0, 2.0}, ybar[4];
    double lp = gpc_mprobit_case(r, 0, mu, ybar);
    double upper = log_Phi(-82.0 / M_SQRT2), lower = 0.0;
    for (size_t j = 1; j < C; j++)
        lower += log_Phi((mu[0] - mu[j]) / M_SQRT2);
    TEST_OK(isfinite(lp) && lp <= upper && lp >= lower, "far side: log P = %.6g finite and "
            "between %.6g and %.6g", lp, lower, upper);
    int finite = 1;
    double sum = 0.0;
    for (size_t k = 0; k < C; k++) {
        finite &= isfinite(ybar[k]);
        sum += ybar[k] - mu[k];
    }
    TEST_OK(finite && fabs(sum) < 1e-9 && ybar[0] > mu[0] && ybar[1] < mu[1],
            "far side: conditional means finite, the winner pulled up and the others down");
    gpc_mprobit_rule_free(r);

    /* beyond where GSL's log erfc fails: two classes 3e9 apart, against
     * the asymptotic series of log Phi(d / sqrt 2) */
    gpc_mprobit_rule *r2 = gpc_mprobit_rule_alloc(2);
    double mu2[2] = {-3e9, 0.0}, z = -3e9 / M_SQRT2;
    double want = -0.5 * z * z - log(-z) - 0.5 * log(2.0 * M_PI) - 1.0 / (z * z);
    double lp2 = gpc_mprobit_case(r2, 0, mu2, NULL);
    TEST_CLOSE(lp2, want, 1e-12, 0.0, "far side: log P at a difference of 3e9 (%.6g)", lp2);
    gpc_mprobit_rule_free(r2);
}

/* The curvature W = I - Cov(y | class) against central differences of
 * E[y | class] - mu (the gradient of log P): W = -d(ybar - mu)/dmu.  Also
 * W symmetric with W 1 = 0 and eigenvalues in [0, 1]. */
static void test_curvature(gsl_rng *rng)
{
    for (size_t C = 2; C <= 10; C += 4) {
        gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(C);
        double mu[10], y0[10], y1[10], y2[10], W[100], worst = 0.0, worst_row = 0.0;
        double worst_eig = 0.0;
        for (int rep = 0; rep < 8; rep++) {
            double spread = rep < 4 ? 1.0 : 5.0;
            for (size_t c = 0; c < C; c++)
                mu[c] = spread * gsl_ran_gaussian(rng, 1.0);
            size_t win = (size_t)rep % C;
            gpc_mprobit_case(r, win, mu, y0);
            gpc_mprobit_curvature(r, win, W);
            for (size_t k = 0; k < C; k++) {
                double h = 1e-5, m0 = mu[k];
                mu[k] = m0 + h;
                gpc_mprobit_case(r, win, mu, y1);
                mu[k] = m0 - h;
                gpc_mprobit_case(r, win, mu, y2);
                mu[k] = m0;
                for (size_t l = 0; l < C; l++) {
                    double fd = -((y1[l] - y2[l]) / (2.0 * h) - (l == k ? 1.0 : 0.0));
                    worst = fmax(worst, fabs(W[l * C + k] - fd));
                }
            }
            for (size_t k = 0; k < C; k++) {
                double row = 0.0;
                for (size_t l = 0; l < C; l++)
                    row += W[k * C + l];
                worst_row = fmax(worst_row, fabs(row));
            }
            gsl_matrix_view Wv = gsl_matrix_view_array(W, C, C);
            gsl_vector *ev = gsl_vector_alloc(C);
            gsl_eigen_symm_workspace *ew = gsl_eigen_symm_alloc(C);
            gsl_eigen_symm(&Wv.matrix, ev, ew);
            for (size_t k = 0; k < C; k++) {
                double e = gsl_vector_get(ev, k);
                worst_eig = fmax(worst_eig, fmax(-e, e - 1.0));
            }
            gsl_eigen_symm_free(ew);
            gsl_vector_free(ev);
        }
        TEST_CLOSE(worst, 0.0, 0.0, 1e-7, "C = %zu: the curvature equals central differences "
                   "of E[y | class] (largest difference %.1e)", C, worst);
        TEST_CLOSE(worst_row, 0.0, 0.0, 1e-8, "C = %zu: the curvature's rows sum to zero "
                   "(%.1e)", C, worst_row);
        TEST_OK(worst_eig < 1e-8, "C = %zu: the curvature's eigenvalues lie in [0, 1] (by "
                "%.1e)", C, worst_eig);
        gpc_mprobit_rule_free(r);
    }
}

/* The third derivatives against central differences of the curvature
 * (dW / dmu_c = -T[., ., c]); also symmetric, and zero summed over one
 * index.  Spreads of 1, 5 and 25 put rivals far above the winner, where
 * the cut normals' cumulants come from the continued fraction. */
static void test_third(gsl_rng *rng)
{
    for (size_t C = 2; C <= 8; C += 3) {
        gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(C);
        double mu[8], W1[64], W2[64], T[512], worst = 0.0, worst_sym = 0.0, worst_sum = 0.0;
        for (int rep = 0; rep < 9; rep++) {
            double spread = rep < 3 ? 1.0 : rep < 6 ? 5.0 : 25.0;
            for (size_t c = 0; c < C; c++)
                mu[c] = spread * gsl_ran_gaussian(rng, 1.0);
            size_t win = (size_t)rep % C;
            gpc_mprobit_case(r, win, mu, NULL);
            gpc_mprobit_third(r, win, T);
            double scale = 0.0;
            for (size_t k = 0; k < C * C * C; k++)
                scale = fmax(scale, fabs(T[k]));
            for (size_t c = 0; c < C; c++) {
                double h = 1e-4, m0 = mu[c];
                mu[c] = m0 + h;
                gpc_mprobit_case(r, win, mu, NULL);
                gpc_mprobit_curvature(r, win, W1);
                mu[c] = m0 - h;
                gpc_mprobit_case(r, win, mu, NULL);
                gpc_mprobit_curvature(r, win, W2);
                mu[c] = m0;
                for (size_t k = 0; k < C * C; k++) {
                    double fd = -(W1[k] - W2[k]) / (2.0 * h);
                    worst = fmax(worst, fabs(T[k * C + c] - fd) / fmax(scale, 1e-3));
                }
            }
            for (size_t a = 0; a < C; a++)
                for (size_t b = 0; b < C; b++) {
                    double sum = 0.0;
                    for (size_t c = 0; c < C; c++) {
                        sum += T[(a * C + b) * C + c];
                        worst_sym = fmax(worst_sym, fabs(T[(a * C + b) * C + c] -
                                                         T[(c * C + a) * C + b]));
                    }
                    worst_sum = fmax(worst_sum, fabs(sum));
                }
        }
        TEST_CLOSE(worst, 0.0, 0.0, 1e-6, "C = %zu: the third derivatives equal central "
                   "differences of the curvature (largest difference %.1e of the largest)",
                   C, worst);
        TEST_CLOSE(worst_sym, 0.0, 0.0, 1e-15, "C = %zu: the third derivatives are symmetric "
                   "(%.1e)", C, worst_sym);
        TEST_CLOSE(worst_sum, 0.0, 0.0, 1e-8, "C = %zu: they sum to zero over one index (%.1e)",
                   C, worst_sum);
        gpc_mprobit_rule_free(r);
    }
}

/* The cut normal's cumulants far to the left, where the continued fraction
 * gives them: a rival far above the winner's mean (C = 2, d = mu_0 - mu_1)
 * has log P = log Phi(d / sqrt 2), whose derivatives in d are known in
 * closed form through lambda(x) = phi(x) / Phi(x) at x = d / sqrt 2:
 * d log P / dd = lambda / sqrt 2, d^2 = -lambda (x + lambda) / 2 and
 * d^3 = lambda [(x + lambda)(x + 2 lambda) - 1] / 2^(3/2). */
static void test_third_far(void)
{
    gpc_mprobit_rule *r = gpc_mprobit_rule_alloc(2);
    double worst_w = 0.0, worst_t = 0.0, W[4], T[8];
    for (double d = -40.0; d <= 2.0; d += 3.0) {
        double mu[2] = {d, 0.0}, x = d / M_SQRT2;
        long double lx = (long double)x, Phi = 0.5L * erfcl(-lx / sqrtl(2.0L));
        long double lam = expl(-0.5L * lx * lx) / sqrtl(2.0L * (long double)M_PI) / Phi;
        long double e = lx + lam;
        double w = (double)(lam * e / 2.0L);
        double t = (double)(lam * (e * (lx + 2.0L * lam) - 1.0L) / (2.0L * sqrtl(2.0L)));
        gpc_mprobit_case(r, 0, mu, NULL);
        gpc_mprobit_curvature(r, 0, W);
        gpc_mprobit_third(r, 0, T);
        worst_w = fmax(worst_w, fabs(W[0] - w) / w);
        worst_t = fmax(worst_t, fabs(T[0] - t) / fabs(t));
    }
    /* long double's 64-bit mantissa leaves eps = x + lambda about 1e-19 x^2
     * relative at x = -28, where the third derivative's bracket cancels to
     * 2 / x^4: 1e-9 relative there */
    TEST_CLOSE(worst_w, 0.0, 0.0, 1e-10, "C = 2 down to d = -40: the curvature equals the "
               "closed form (largest relative difference %.1e)", worst_w);
    TEST_CLOSE(worst_t, 0.0, 0.0, 1e-7, "C = 2 down to d = -40: the third derivative equals "
               "the closed form (largest relative difference %.1e)", worst_t);
    gpc_mprobit_rule_free(r);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 23);
    test_two_classes();
    test_three_classes(rng);
    test_any_C(rng);
    test_far_side();
    test_curvature(rng);
    test_third(rng);
    test_third_far();
    gsl_rng_free(rng);
    return tap_done();
}
