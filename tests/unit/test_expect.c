/* test_expect — Gaussian expectations of the binary log-likelihoods.
 *
 * The reference is independent of the library's fixed rule: adaptive
 * quadrature (QAGP) of g(mu + s t) phi(t) over t in [-38, 38], with the bend
 * at t0 = -mu/s and the points t0 +- k/s (k = 1, 10, 40) as breakpoints, for
 * the value and for E[g'] and E[g'']/2 separately.  Derivatives are also
 * checked against central differences of gpc_lik_expect itself (the rule
 * must be smooth), s2 = 0 against log p exactly, and the switch between the
 * library's two rules for continuity. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>

#include "liks/expect.h"
#include "liks/lik.h"
#include "tap.h"

static const gpc_lik LIKS[] = {GPC_LIK_LOGISTIC, GPC_LIK_PROBIT};
static const double LABELS[] = {1.0, -1.0};
static const double MUS[] = {0, 1e-3, -1e-3, 0.5, -0.5, 3, -3, 30, -30, 1e3, -1e3};
static const double S2S[] = {0, 1e-12, 1e-4, 0.3, 1, 10, 1e2, 1e4, 1e6};
#define NMU (sizeof MUS / sizeof *MUS)
#define NS2 (sizeof S2S / sizeof *S2S)

/* The stated accuracy: absolute 1e-10 up to size 1, relative beyond. */
#define ACC 1e-10

/* ---- worst-case tracking over a grid ----------------------------------- */

typedef struct {
    double worst; /* max |got - want| / tol; > 1 fails */
    double maxerr; /* max |got - want| / max(1, |want|) */
    char where[200];
} worst_t;

static void track(worst_t *w, double got, double want, double tol, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void track(worst_t *w, double got, double want, double tol, const char *fmt, ...)
{
    double diff = fabs(got - want);
    double e = !isfinite(got) ? INFINITY : diff / tol;
    double rel = diff / fmax(1.0, fabs(want));
    if (isfinite(got) && rel > w->maxerr)
        w->maxerr = rel;
    if (!(e <= w->worst) || w->where[0] == 0) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(w->where, sizeof w->where, fmt, ap);
        va_end(ap);
        snprintf(w->where + n, sizeof w->where - (size_t)n, " got %.17g want %.17g", got, want);
        w->worst = isnan(e) ? INFINITY : e;
    }
}

static void report(const worst_t *w, const char *name)
{
    TEST_OK(w->worst <= 1, "%s (worst %.2g of tolerance, scaled error %.2g, at %s)", name,
            w->worst, w->maxerr, w->where);
}

/* ---- reference by adaptive quadrature ---------------------------------- */

typedef struct {
    gpc_lik lik;
    double y, mu, s;
    int order; /* 0: g, 1: g', 2: g''/2 */
} ref_args;

static double ref_integrand(double t, void *p)
{
    const ref_args *a = p;
    double d1, d2, g = gpc_lik_logp(a->lik, a->y, a->mu + a->s * t, &d1, &d2, NULL);
    double v = a->order == 0 ? g : a->order == 1 ? d1 : 0.5 * d2;
    return v * exp(-0.5 * t * t) / sqrt(2 * M_PI);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double reference(gpc_lik lik, double y, double mu, double s2, int order)
{
    double s = sqrt(s2);
    if (s2 == 0) {
        double d1, d2, g = gpc_lik_logp(lik, y, mu, &d1, &d2, NULL);
        return order == 0 ? g : order == 1 ? d1 : 0.5 * d2;
    }
    const double L = 38.0;
    double pts[32];
    size_t n = 0;
    pts[n++] = -L;
    pts[n++] = L;
    double t0 = -mu / s, offs[] = {0, 1, -1, 10, -10, 40, -40};
    for (size_t k = 0; k < sizeof offs / sizeof *offs; k++) {
        double t = t0 + offs[k] / s;
        if (t > -L && t < L)
            pts[n++] = t;
    }
    qsort(pts, n, sizeof *pts, cmp_double);
    size_t u = 1; /* drop coincident points */
    for (size_t k = 1; k < n; k++)
        if (pts[k] > pts[u - 1])
            pts[u++] = pts[k];
    ref_args a = {lik, y, mu, s, order};
    gsl_function F = {ref_integrand, &a};
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(4000);
    double r, err;
    gsl_integration_qagp(&F, pts, u, 1e-300, 1e-13, 4000, ws, &r, &err);
    gsl_integration_workspace_free(ws);
    return r;
}

/* ---- checks ------------------------------------------------------------ */

static void check_reference(void)
{
    for (size_t l = 0; l < 2; l++) {
        worst_t wv = {0}, wd = {0}, ws = {0};
        for (size_t b = 0; b < 2; b++)
            for (size_t i = 0; i < NMU; i++)
                for (size_t j = 0; j < NS2; j++) {
                    double y = LABELS[b], mu = MUS[i], s2 = S2S[j], dmu, ds2;
                    double e = gpc_lik_expect(LIKS[l], y, mu, s2, &dmu, &ds2);
                    double re = reference(LIKS[l], y, mu, s2, 0);
                    double rd = reference(LIKS[l], y, mu, s2, 1);
                    double rs = reference(LIKS[l], y, mu, s2, 2);
                    track(&wv, e, re, ACC * fmax(1, fabs(re)), "y=%g mu=%g s2=%g", y, mu, s2);
                    track(&wd, dmu, rd, ACC * fmax(1, fabs(rd)), "y=%g mu=%g s2=%g", y, mu, s2);
                    track(&ws, ds2, rs, ACC * fmax(1, fabs(rs)), "y=%g mu=%g s2=%g", y, mu, s2);
                }
        char name[80];
        snprintf(name, sizeof name, "%s value vs quadrature", gpc_lik_name(LIKS[l]));
        report(&wv, name);
        snprintf(name, sizeof name, "%s dE/dmu vs quadrature", gpc_lik_name(LIKS[l]));
        report(&wd, name);
        snprintf(name, sizeof name, "%s dE/ds2 vs quadrature", gpc_lik_name(LIKS[l]));
        report(&ws, name);
    }
}

/* Constants from a 40-digit evaluation of the same integrals (mpmath's
 * tanh-sinh quadrature with the same breakpoints), free of double rounding
 * in the reference; checked at 1e-13, a hundredth of the stated accuracy.
 * The logistic's E[g'] at mu = 0 is exactly 1/2 by symmetry. */
static void check_constants(void)
{
    static const struct {
        gpc_lik lik;
        double mu, s2, e, dmu, ds2;
    } C[] = {
    {GPC_LIK_LOGISTIC, 0, 1e6, -398.94293663442479586, 0.5, -0.00019947081208497589817},
    {GPC_LIK_LOGISTIC, -3, 100, -5.7297086037332999791, 0.61608943116372380921, -0.018792465569214303621},
    {GPC_LIK_LOGISTIC, 30, 1e4, -26.682397132649819245, 0.38210739224221567147, -0.0019066537186018427577},
    {GPC_LIK_PROBIT, 0.5, 100, -24.382020375015512987, 3.8738201199981957727, -0.24234378753378450063},
    {GPC_LIK_PROBIT, -1000, 1e6, -962336.664207681828, 1083.3178844313224123, -0.42067158650502281906},
    {GPC_LIK_PROBIT, 3, 10, -0.73111434772406617116, 0.43771662547878304171, -0.11019165395090755429},
    };
    for (size_t k = 0; k < sizeof C / sizeof *C; k++) {
        double dmu, ds2, e = gpc_lik_expect(C[k].lik, 1, C[k].mu, C[k].s2, &dmu, &ds2);
        const char *n = gpc_lik_name(C[k].lik);
        TEST_CLOSE(e, C[k].e, 1e-13, 1e-13, "%s E at mu=%g s2=%g (40 digits)", n, C[k].mu, C[k].s2);
        TEST_CLOSE(dmu, C[k].dmu, 1e-13, 1e-13, "%s dE/dmu at mu=%g s2=%g (40 digits)", n,
                   C[k].mu, C[k].s2);
        TEST_CLOSE(ds2, C[k].ds2, 1e-13, 1e-13, "%s dE/ds2 at mu=%g s2=%g (40 digits)", n,
                   C[k].mu, C[k].s2);
    }
}

/* Central differences of the value itself.  The tolerance is 1e-7 of the
 * derivative's size plus the rounding of the value, 4 eps |E| / h. */
static void check_differences(void)
{
    for (size_t l = 0; l < 2; l++) {
        worst_t wd = {0}, ws = {0};
        for (size_t b = 0; b < 2; b++)
            for (size_t i = 0; i < NMU; i++)
                for (size_t j = 0; j < NS2; j++) {
                    gpc_lik lik = LIKS[l];
                    double y = LABELS[b], mu = MUS[i], s2 = S2S[j], dmu, ds2;
                    double e = gpc_lik_expect(lik, y, mu, s2, &dmu, &ds2);
                    double round = 4 * DBL_EPSILON * fmax(1, fabs(e));
                    double h = 1e-4 * fmax(1, sqrt(s2));
                    double fd = (gpc_lik_expect(lik, y, mu + h, s2, NULL, NULL) -
                                 gpc_lik_expect(lik, y, mu - h, s2, NULL, NULL)) / (2 * h);
                    track(&wd, fd, dmu, 1e-7 * fmax(1, fabs(dmu)) + round / h,
                          "y=%g mu=%g s2=%g", y, mu, s2);
                    if (s2 < 1e-4)
                        continue; /* a step below s2 is lost to rounding */
                    double k = 1e-4 * s2;
                    fd = (gpc_lik_expect(lik, y, mu, s2 + k, NULL, NULL) -
                          gpc_lik_expect(lik, y, mu, s2 - k, NULL, NULL)) / (2 * k);
                    track(&ws, fd, ds2, 1e-7 * fmax(1, fabs(ds2)) + round / k,
                          "y=%g mu=%g s2=%g", y, mu, s2);
                }
        char name[80];
        snprintf(name, sizeof name, "%s dE/dmu vs central differences", gpc_lik_name(LIKS[l]));
        report(&wd, name);
        snprintf(name, sizeof name, "%s dE/ds2 vs central differences", gpc_lik_name(LIKS[l]));
        report(&ws, name);
    }
}

/* s2 = 0 is the likelihood at mu, bit for bit. */
static void check_point_mass(void)
{
    int ok = 1;
    for (size_t l = 0; l < 2; l++)
        for (size_t b = 0; b < 2; b++)
            for (size_t i = 0; i < NMU; i++) {
                double d1, d2, g = gpc_lik_logp(LIKS[l], LABELS[b], MUS[i], &d1, &d2, NULL);
                double dmu, ds2, e = gpc_lik_expect(LIKS[l], LABELS[b], MUS[i], 0, &dmu, &ds2);
                ok &= e == g && dmu == d1 && ds2 == 0.5 * d2;
            }
    TEST_OK(ok, "s2 = 0 gives log p(y|mu) and its derivatives exactly");
}

/* The library switches rules at s = 1 and at |mu| / s = 10; just either
 * side of each switch the values, less the change the derivative explains,
 * must agree to far below the accuracy, or central differences across the
 * switch would see a jump. */
static void check_switches(void)
{
    worst_t w = {0};
    const double eps = 1e-9;
    for (size_t l = 0; l < 2; l++)
        for (size_t b = 0; b < 2; b++) {
            gpc_lik lik = LIKS[l];
            double y = LABELS[b], dmu, ds2;
            for (double mu = -20; mu <= 20; mu += 0.25) {
                double s2lo = 1 - eps, s2hi = 1 + eps;
                double mid = gpc_lik_expect(lik, y, mu, 1, &dmu, &ds2);
                double jump = gpc_lik_expect(lik, y, mu, s2hi, NULL, NULL) -
                              gpc_lik_expect(lik, y, mu, s2lo, NULL, NULL) - ds2 * (s2hi - s2lo);
                track(&w, jump, 0, 1e-13 * fmax(1, fabs(mid)), "%s y=%g mu=%g s=1",
                      gpc_lik_name(lik), y, mu);
            }
            for (double s = 1.5; s <= 100; s *= 1.5)
                for (int sign = -1; sign <= 1; sign += 2) {
                    double s2 = s * s, m = sign * 10 * s, lo = m * (1 - eps), hi = m * (1 + eps);
                    double mid = gpc_lik_expect(lik, y, m, s2, &dmu, &ds2);
                    double jump = gpc_lik_expect(lik, y, hi, s2, NULL, NULL) -
                                  gpc_lik_expect(lik, y, lo, s2, NULL, NULL) - dmu * (hi - lo);
                    track(&w, jump, 0, 1e-13 * fmax(1, fabs(mid)), "%s y=%g mu=%g s=%g",
                          gpc_lik_name(lik), y, m, s);
                }
        }
    report(&w, "no jump where the rule switches");
}

/* The first calls come from several threads at once (the nodes are made at
 * first use) and must give what one thread gives. */
static void check_threads(void)
{
    enum { N = 2 * 2 * NMU * NS2 };
    static double par[N];
#pragma omp parallel for num_threads(4) schedule(static, 1)
    for (int k = 0; k < N; k++)
        par[k] = gpc_lik_expect(LIKS[k % 2], LABELS[k / 2 % 2], MUS[k / 4 % NMU],
                                S2S[k / 4 / NMU], NULL, NULL);
    int same = 1;
    for (int k = 0; k < N; k++)
        same &= par[k] == gpc_lik_expect(LIKS[k % 2], LABELS[k / 2 % 2], MUS[k / 4 % NMU],
                                         S2S[k / 4 / NMU], NULL, NULL);
    TEST_OK(same, "first calls from four threads give what one thread gives");
}

static void check_bad_input(void)
{
    double dmu = 0, ds2 = 0;
    TEST_OK(isnan(gpc_lik_expect(GPC_LIK_LOGISTIC, 1, 0, -1, &dmu, &ds2)) && isnan(dmu) &&
                isnan(ds2),
            "negative s2 gives NaN");
    TEST_OK(isnan(gpc_lik_expect(GPC_LIK_STEP, 1, 0, 1, NULL, NULL)),
            "a likelihood other than logistic or probit gives NaN");
}

/* Cost per call over the grid (printed, not checked). */
static void time_calls(void)
{
    for (size_t l = 0; l < 2; l++) {
        struct timespec t0, t1;
        double sink = 0;
        int calls = 0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int rep = 0; rep < 20; rep++)
            for (size_t i = 0; i < NMU; i++)
                for (size_t j = 1; j < NS2; j++) {
                    double dmu, ds2;
                    sink += gpc_lik_expect(LIKS[l], 1, MUS[i], S2S[j], &dmu, &ds2) + dmu + ds2;
                    calls++;
                }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / calls;
        printf("# %s: %.0f ns per call with both derivatives, s2 > 0 (checksum %g)\n",
               gpc_lik_name(LIKS[l]), ns, sink);
    }
}

int main(void)
{
    gsl_set_error_handler_off();
    check_threads();
    check_point_mass();
    check_reference();
    check_constants();
    check_differences();
    check_switches();
    check_bad_input();
    time_calls();
    return tap_done();
}
