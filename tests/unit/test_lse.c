/* test_lse — the expected log-sum-exp of independent Gaussians.
 *
 * References independent of the rule:
 *  - C = 2: E[LSE(f0, f1)] = mu0 + E[softplus(d)], d ~ N(mu1 - mu0, s2_0 +
 *    s2_1), and its derivatives E[sigma(d)] and E[sigma'(d)] / 2, each by
 *    adaptive quadrature (QAGP, with the bend of softplus as breakpoints);
 *  - one class random, the others fixed: E = log B + E[softplus(f - log
 *    B)], B = sum of the fixed exp(mu), again one-dimensional (any C);
 *  - C = 3: nested adaptive quadrature over f0 and f1 of the exact
 *    conditional expectation over f2 (a logistic-Gaussian integral);
 *  - s2 = 0: LSE(mu), softmax(mu) and softmax (1 - softmax) / 2 exactly.
 * And of the rule itself: its derivatives against fourth-order central
 * differences, E(mu + a) = E(mu) + a, symmetry under permuting the classes,
 * the probabilities dE/dmu summing to one, separate workspaces on threads
 * giving the serial bits, NaN for bad input.  The cost per case is printed
 * as a comment, not tested. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "liks/expect.h"
#include "liks/lik.h"
#include "liks/lse.h"
#include "tap.h"

/* What the tests hold the rule to (it does about 4e-13: lse.h). */
#define ACC 1e-11

/* ---- one-dimensional references ---------------------------------------- */

static double softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double sigmoid(double x)
{
    return x > 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

typedef struct {
    double m, s;
    int which; /* 0 softplus, 1 sigma, 2 sigma (1 - sigma) / 2 */
} sp_par;

static double sp_integrand(double t, void *p)
{
    const sp_par *q = p;
    double d = q->m + q->s * t, w = exp(-0.5 * t * t) / sqrt(2 * M_PI), sg = sigmoid(d);
    return w * (q->which == 0 ? softplus(d) : q->which == 1 ? sg : 0.5 * sg * (1 - sg));
}

/* E[softplus(d)], E[sigma(d)] or E[sigma'(d)] / 2 for d ~ N(m, v), by QAGP
 * over t in [-40, 40] with the bend t0 = -m / s and t0 +- 1/s, 10/s as
 * breakpoints where they fall inside. */
static double sp_expect(double m, double v, int which)
{
    if (v == 0.0) {
        double sg = sigmoid(m);
        return which == 0 ? softplus(m) : which == 1 ? sg : 0.5 * sg * (1 - sg);
    }
    sp_par par = {m, sqrt(v), which};
    gsl_function F = {sp_integrand, &par};
    double pts[8], t0 = -m / par.s, off[] = {-10, -1, 0, 1, 10};
    size_t np = 0;
    pts[np++] = -40;
    for (int k = 0; k < 5; k++) {
        double t = t0 + off[k] / par.s;
        if (t > pts[np - 1] + 1e-9 && t < 40)
            pts[np++] = t;
    }
    pts[np++] = 40;
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
    double r, err;
    gsl_integration_qagp(&F, pts, np, 1e-16, 1e-14, 2000, w, &r, &err);
    gsl_integration_workspace_free(w);
    return r;
}

/* ---- helpers ----------------------------------------------------------- */

static double lse(size_t C, const double *x)
{
    double a = x[0], s = 0;
    for (size_t c = 1; c < C; c++)
        a = fmax(a, x[c]);
    for (size_t c = 0; c < C; c++)
        s += exp(x[c] - a);
    return a + log(s);
}

static double expect(size_t C, const double *mu, const double *s2, double *dmu, double *ds2)
{
    gpc_lse_work *w = gpc_lse_work_alloc(C);
    double e = gpc_lse_expect(w, mu, s2, dmu, ds2);
    gpc_lse_work_free(w);
    return e;
}

/* ---- C = 2 against the one-dimensional form ---------------------------- */

static void check_two(void)
{
    static const double dmus[] = {0, 1e-3, 0.5, -3, 10, -30, 50, -50};
    static const double vs[] = {0, 1e-8, 0.0024, 0.0026, 0.01, 0.3, 1, 4, 10, 30, 100};
    size_t nv = sizeof vs / sizeof *vs;
    double worst[3] = {0, 0, 0};
    gpc_lse_work *w = gpc_lse_work_alloc(2);
    for (size_t i = 0; i < sizeof dmus / sizeof *dmus; i++)
        for (size_t a = 0; a < nv; a++)
            for (size_t b = 0; b < nv; b++) {
                double mu[2] = {0.7, 0.7 + dmus[i]}, s2[2] = {vs[a], vs[b]}, dm[2], ds[2];
                double e = gpc_lse_expect(w, mu, s2, dm, ds), v = s2[0] + s2[1];
                double want = mu[0] + sp_expect(dmus[i], v, 0), p1 = sp_expect(dmus[i], v, 1),
                       h = sp_expect(dmus[i], v, 2);
                double errs[3] = {fabs(e - want) / fmax(1, fabs(want)),
                                  fmax(fabs(dm[1] - p1), fabs(dm[0] - (1 - p1))),
                                  fmax(fabs(ds[0] - h), fabs(ds[1] - h))};
                for (int k = 0; k < 3; k++)
                    worst[k] = fmax(worst[k], isnan(errs[k]) ? INFINITY : errs[k]);
            }
    gpc_lse_work_free(w);
    TEST_CLOSE(worst[0], 0, 0, ACC, "C = 2: E against adaptive quadrature of mu0 + "
               "E[softplus(d)] over |mu1 - mu0| <= 50, s2 <= 100 (worst %.2g)", worst[0]);
    TEST_CLOSE(worst[1], 0, 0, ACC, "C = 2: dE/dmu against E[sigma(d)] (worst %.2g)",
               worst[1]);
    TEST_CLOSE(worst[2], 0, 0, ACC, "C = 2: dE/ds2 against E[sigma'(d)] / 2 (worst %.2g)",
               worst[2]);
}

/* ---- one random class among fixed ones, any C -------------------------- */

static void check_one_random(gsl_rng *r)
{
    static const size_t Cs[] = {3, 5, 10, 50};
    static const double vs[] = {1e-3, 0.5, 4, 100};
    double worst = 0, worst_d = 0;
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++) {
            size_t C = Cs[i], k = (size_t)gsl_rng_uniform_int(r, C);
            double mu[50], s2[50], dm[50], ds[50], fixed[50];
            size_t nf = 0;
            for (size_t c = 0; c < C; c++) {
                mu[c] = 50 * (2 * gsl_rng_uniform(r) - 1);
                s2[c] = 0.0;
                if (c != k)
                    fixed[nf++] = mu[c];
            }
            s2[k] = vs[j];
            double e = expect(C, mu, s2, dm, ds), lb = lse(nf, fixed);
            double want = lb + sp_expect(mu[k] - lb, s2[k], 0);
            worst = fmax(worst, fabs(e - want) / fmax(1, fabs(want)));
            /* the random class's own derivatives */
            worst_d = fmax(worst_d, fabs(dm[k] - sp_expect(mu[k] - lb, s2[k], 1)));
            worst_d = fmax(worst_d, fabs(ds[k] - sp_expect(mu[k] - lb, s2[k], 2)));
        }
    TEST_CLOSE(worst, 0, 0, ACC, "C = 3..50, one class random (s2 to 100), |mu| <= 50: E "
               "against log B + E[softplus(f - log B)] (worst %.2g)", worst);
    TEST_CLOSE(worst_d, 0, 0, ACC, "... and that class's dE/dmu, dE/ds2 (worst %.2g)", worst_d);
}

/* ---- C = 3 by nested adaptive quadrature ------------------------------- */

typedef struct {
    const double *mu, *s2;
    double f0; /* the outer variable's value, for the inner integral */
    gsl_integration_workspace *w1;
} c3_par;

/* E over f2 of LSE(f0, f1, f2) = b + E[softplus(f2 - b)], b = LSE(f0, f1):
 * the logistic-Gaussian expectation, -E[log sigma(-(f2 - b))]. */
static double c3_inner(double t1, void *p)
{
    const c3_par *q = p;
    double f1 = q->mu[1] + sqrt(q->s2[1]) * t1, x[2] = {q->f0, f1}, b = lse(2, x);
    double e = b - gpc_lik_expect(GPC_LIK_LOGISTIC, -1.0, q->mu[2] - b, q->s2[2], NULL, NULL);
    return e * exp(-0.5 * t1 * t1) / sqrt(2 * M_PI);
}

static double c3_outer(double t0, void *p)
{
    c3_par *q = p;
    q->f0 = q->mu[0] + sqrt(q->s2[0]) * t0;
    gsl_function F = {c3_inner, q};
    double r, err;
    gsl_integration_qag(&F, -12, 12, 1e-15, 1e-13, 1000, GSL_INTEG_GAUSS41, q->w1, &r, &err);
    return r * exp(-0.5 * t0 * t0) / sqrt(2 * M_PI);
}

static double c3_reference(const double *mu, const double *s2)
{
    c3_par q = {mu, s2, 0, gsl_integration_workspace_alloc(1000)};
    gsl_integration_workspace *w0 = gsl_integration_workspace_alloc(1000);
    gsl_function F = {c3_outer, &q};
    double r, err;
    gsl_integration_qag(&F, -12, 12, 1e-15, 1e-13, 1000, GSL_INTEG_GAUSS41, w0, &r, &err);
    gsl_integration_workspace_free(w0);
    gsl_integration_workspace_free(q.w1);
    return r;
}

static void check_three(void)
{
    static const double pts[][6] = {
        /* mu0, mu1, mu2, s2_0, s2_1, s2_2 */
        {0, 0, 0, 1, 1, 1},       {1, -2, 0.5, 0.3, 4, 10}, {0.2, 0, -1, 25, 25, 2},
        {3, -1, 0, 0.05, 0.5, 2}, {-5, 2, 1, 2, 0.01, 1},
    };
    for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
        double e = expect(3, pts[i], pts[i] + 3, NULL, NULL), want = c3_reference(pts[i], pts[i] + 3);
        TEST_CLOSE(e, want, ACC, ACC, "C = 3, mu (%g, %g, %g), s2 (%g, %g, %g): E against nested "
                   "adaptive quadrature (diff %.2g)", pts[i][0], pts[i][1], pts[i][2],
                   pts[i][3], pts[i][4], pts[i][5], e - want);
    }
}

/* ---- s2 = 0, invariance, symmetry, sums -------------------------------- */

static void random_point(gsl_rng *r, size_t C, double spread, double vmax, double *mu,
                         double *s2)
{
    for (size_t c = 0; c < C; c++) {
        mu[c] = spread * (2 * gsl_rng_uniform(r) - 1);
        /* variances log-uniform over [1e-4, vmax], a few exactly 0 */
        s2[c] = gsl_rng_uniform(r) < 0.1 ? 0.0 : 1e-4 * pow(vmax / 1e-4, gsl_rng_uniform(r));
    }
}

static void check_deterministic_limit(gsl_rng *r)
{
    static const size_t Cs[] = {2, 3, 10, 50};
    static const double spreads[] = {0.1, 3, 50};
    double worst[3] = {0, 0, 0};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++) {
            size_t C = Cs[i];
            double mu[50], s2[50] = {0}, dm[50], ds[50], v;
            random_point(r, C, spreads[j], 1, mu, s2);
            memset(s2, 0, sizeof s2);
            double e = expect(C, mu, s2, dm, ds), want = lse(C, mu);
            worst[0] = fmax(worst[0], fabs(e - want) / fmax(1, fabs(want)));
            for (size_t c = 0; c < C; c++) {
                double p = exp(mu[c] - want);
                worst[1] = fmax(worst[1], fabs(dm[c] - p));
                v = fabs(ds[c] - 0.5 * p * (1 - p));
                worst[2] = fmax(worst[2], v);
            }
        }
    TEST_CLOSE(worst[0], 0, 0, ACC, "s2 = 0: E = LSE(mu), C = 2..50, |mu| <= 50 (worst %.2g)",
               worst[0]);
    TEST_CLOSE(worst[1], 0, 0, ACC, "s2 = 0: dE/dmu = softmax(mu) (worst %.2g)", worst[1]);
    TEST_CLOSE(worst[2], 0, 0, ACC, "s2 = 0: dE/ds2 = softmax (1 - softmax) / 2 (worst %.2g)",
               worst[2]);
}

static void check_invariances(gsl_rng *r)
{
    static const size_t Cs[] = {2, 3, 5, 10, 50};
    static const double shifts[] = {3.7, -20, 45};
    double wshift = 0, wshift_d = 0, wperm = 0, wsum = 0;
    for (size_t i = 0; i < 5; i++)
        for (int rep = 0; rep < 3; rep++) {
            size_t C = Cs[i], perm[50];
            double mu[50], s2[50], dm[50], ds[50], mu2[50], s22[50], dm2[50], ds2[50];
            random_point(r, C, rep == 2 ? 50 : 3, rep == 1 ? 100 : 2, mu, s2);
            double e = expect(C, mu, s2, dm, ds), sum = 0;
            for (size_t c = 0; c < C; c++)
                sum += dm[c];
            wsum = fmax(wsum, fabs(sum - 1));
            for (int k = 0; k < 3; k++) {
                for (size_t c = 0; c < C; c++)
                    mu2[c] = mu[c] + shifts[k];
                double e2 = expect(C, mu2, s2, dm2, ds2);
                wshift = fmax(wshift, fabs(e2 - e - shifts[k]) / fmax(1, fabs(e2)));
                for (size_t c = 0; c < C; c++)
                    wshift_d = fmax(wshift_d, fmax(fabs(dm2[c] - dm[c]), fabs(ds2[c] - ds[c])));
            }
            /* a random permutation */
            for (size_t c = 0; c < C; c++)
                perm[c] = c;
            gsl_ran_shuffle(r, perm, C, sizeof *perm);
            for (size_t c = 0; c < C; c++) {
                mu2[c] = mu[perm[c]];
                s22[c] = s2[perm[c]];
            }
            double e3 = expect(C, mu2, s22, dm2, ds2);
            wperm = fmax(wperm, fabs(e3 - e) / fmax(1, fabs(e)));
            for (size_t c = 0; c < C; c++)
                wperm = fmax(wperm, fmax(fabs(dm2[c] - dm[perm[c]]), fabs(ds2[c] - ds[perm[c]])));
        }
    TEST_CLOSE(wshift, 0, 0, 1e-13, "E(mu + a) = E(mu) + a, C = 2..50 (worst %.2g)", wshift);
    TEST_CLOSE(wshift_d, 0, 0, 1e-13, "the derivatives do not move with a (worst %.2g)",
               wshift_d);
    TEST_CLOSE(wperm, 0, 0, 1e-13, "permuting the classes permutes the derivatives and keeps E "
               "(worst %.2g)", wperm);
    TEST_CLOSE(wsum, 0, 0, ACC, "sum_c dE/dmu_c = 1 (worst %.2g)", wsum);
}

/* ---- derivatives against differences of the rule ------------------------ */

static void check_differences(gsl_rng *r)
{
    static const size_t Cs[] = {2, 3, 5, 10, 50};
    static const double vmaxs[] = {0.01, 2, 100};
    static const double spreads[] = {1, 50};
    for (size_t i = 0; i < 5; i++) {
        size_t C = Cs[i];
        gpc_lse_work *w = gpc_lse_work_alloc(C);
        double worst_m = 0, worst_v = 0;
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 2; b++) {
                double mu[50], s2[50], dm[50], ds[50];
                random_point(r, C, spreads[b], vmaxs[a], mu, s2);
                gpc_lse_expect(w, mu, s2, dm, ds);
                for (size_t c = 0; c < C; c++) {
                    double fd[2];
                    for (int wh = 0; wh < 2; wh++) {
                        double *x = wh ? s2 : mu, x0 = x[c];
                        /* steps that keep s2 >= 0 */
                        double h = wh ? fmin(1e-3 * fmax(x0, 1e-2), 0.4 * x0) : 1e-3, f[4];
                        if (h == 0.0) {
                            fd[wh] = ds[c];
                            continue;
                        }
                        for (int k = 0; k < 4; k++) {
                            static const double off[] = {-2, -1, 1, 2};
                            x[c] = x0 + off[k] * h;
                            f[k] = gpc_lse_expect(w, mu, s2, NULL, NULL);
                        }
                        x[c] = x0;
                        fd[wh] = (f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * h);
                    }
                    worst_m = fmax(worst_m, fabs(fd[0] - dm[c]));
                    worst_v = fmax(worst_v, fabs(fd[1] - ds[c]) / fmax(1, fabs(ds[c])));
                }
            }
        gpc_lse_work_free(w);
        TEST_CLOSE(worst_m, 0, 0, 1e-8, "C = %zu: dE/dmu against fourth-order differences "
                   "(worst %.2g)", C, worst_m);
        TEST_CLOSE(worst_v, 0, 0, 1e-8, "C = %zu: dE/ds2 against fourth-order differences "
                   "(worst %.2g)", C, worst_v);
    }
}

/* ---- threads, bad input, cost ------------------------------------------ */

static void check_threads(gsl_rng *r)
{
    enum { NCASE = 64, C = 5 };
    double mu[NCASE][C], s2[NCASE][C], e1[NCASE], e2[NCASE];
    for (int i = 0; i < NCASE; i++)
        random_point(r, C, 5, 10, mu[i], s2[i]);
    gpc_lse_work *w = gpc_lse_work_alloc(C);
    for (int i = 0; i < NCASE; i++)
        e1[i] = gpc_lse_expect(w, mu[i], s2[i], NULL, NULL);
    gpc_lse_work_free(w);
#pragma omp parallel num_threads(2)
    {
        gpc_lse_work *tw = gpc_lse_work_alloc(C);
#pragma omp for
        for (int i = 0; i < NCASE; i++)
            e2[i] = gpc_lse_expect(tw, mu[i], s2[i], NULL, NULL);
        gpc_lse_work_free(tw);
    }
    TEST_OK(memcmp(e1, e2, sizeof e1) == 0, "a workspace per thread gives the serial bits");
}

static void check_bad_input(void)
{
    double mu[3] = {0, 1, 2}, s2[3] = {1, -1e-3, 1}, dm[3], ds[3];
    double e = expect(3, mu, s2, dm, ds);
    TEST_OK(isnan(e) && isnan(dm[0]) && isnan(ds[2]), "a negative variance gives NaN");
    s2[1] = 1;
    mu[2] = -INFINITY; /* a class that is never chosen: still refused */
    TEST_OK(isnan(expect(3, mu, s2, dm, ds)), "an infinite mean gives NaN");
    mu[2] = 2;
    s2[0] = NAN;
    TEST_OK(isnan(expect(3, mu, s2, dm, ds)), "a NaN variance gives NaN");
    s2[0] = INFINITY;
    TEST_OK(isnan(expect(3, mu, s2, dm, ds)) && isnan(ds[1]), "an infinite variance gives NaN");
}

static void report_cost(void)
{
    static const size_t Cs[] = {2, 3, 5, 10, 50};
    for (size_t i = 0; i < 5; i++) {
        size_t C = Cs[i];
        gpc_lse_work *w = gpc_lse_work_alloc(C);
        double mu[50], s2[50], g[50], h[50], acc = 0;
        for (size_t c = 0; c < C; c++) {
            mu[c] = 2 * sin(1.3 * (double)c);
            s2[c] = 0.5 + 0.4 * cos((double)c);
        }
        int reps = (int)(4000 / C);
        clock_t t0 = clock();
        for (int k = 0; k < reps; k++) {
            mu[0] += 1e-9;
            acc += gpc_lse_expect(w, mu, s2, g, h);
        }
        double us = (double)(clock() - t0) / CLOCKS_PER_SEC / reps * 1e6;
        printf("# C = %zu, s2 in [0.1, 0.9], |mu| <= 2: %.1f us per case (%.6f)\n", C, us,
               acc / reps);
        gpc_lse_work_free(w);
    }
}

int main(void)
{
    gsl_set_error_handler_off(); /* the references' last digits may not be certified */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    check_two();
    check_one_random(r);
    check_three();
    check_deterministic_limit(r);
    check_invariances(r);
    check_differences(r);
    check_threads(r);
    check_bad_input();
    report_cost();
    gsl_rng_free(r);
    return tap_done();
}
