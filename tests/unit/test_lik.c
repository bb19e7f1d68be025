/* test_lik — likelihood values, derivatives and predictive probabilities.
 *
 * Derivatives are checked against finite differences of the next lower one;
 * tail values against asymptotic series and constants computed with mpmath
 * at 50 digits; predictive probabilities against adaptive quadrature of the
 * defining integral done in log space (an independent method: the library
 * uses an accelerated series). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_erf.h>

#include "base/err.h"
#include "liks/lik.h"
#include "tap.h"

static const gpc_lik LIKS[] = {GPC_LIK_LOGISTIC, GPC_LIK_PROBIT};
static const double LABELS[] = {1.0, -1.0};

/* ---- worst-case tracking over a grid ----------------------------------- */

/* Grids give hundreds of points; one TAP line per grid keeps the output
 * readable and still names the worst point and its error. */
typedef struct {
    double worst; /* max |got - want| / (atol + rtol |want|); >1 fails */
    double maxabs;
    char where[160];
} worst_t;

static void track(worst_t *w, double got, double want, double rtol, double atol,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void track(worst_t *w, double got, double want, double rtol, double atol,
                  const char *fmt, ...)
{
    double diff = fabs(got - want);
    double e = !isfinite(got) ? INFINITY : diff == 0 ? 0 : diff / (atol + rtol * fabs(want));
    if (isfinite(got) && diff > w->maxabs)
        w->maxabs = diff;
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
    TEST_OK(w->worst <= 1, "%s (worst %.2g of tolerance at %s)", name, w->worst, w->where);
}

/* ---- independent reference for the predictive integral ----------------- */

/* log sigma(f) written differently from the library's two-branch form. */
static double ref_log_sigmoid(double f) { return fmin(f, 0.0) - log1p(exp(-fabs(f))); }
/* Naive log of the CDF: fine for the moderate cases it is used on. */
static double ref_log_Phi(double f) { return log(gsl_cdf_ugaussian_P(f)); }

typedef struct {
    double (*loglik)(double);
    double mu, var, shift;
} ref_ctx;

static double ref_log_integrand(double f, const ref_ctx *c)
{
    double d = f - c->mu;
    return c->loglik(f) - 0.5 * d * d / c->var - 0.5 * log(2 * M_PI * c->var);
}

static double ref_integrand(double f, void *p)
{
    const ref_ctx *c = p;
    return exp(ref_log_integrand(f, c) - c->shift);
}

/* The integrand is log-concave, so golden-section search finds its mode;
 * the mode lies in [mu, mu + var (|mu| + 1)] for both likelihoods. */
static double ref_mode(const ref_ctx *c)
{
    const double g = (sqrt(5.0) - 1) / 2;
    double a = c->mu - 1, b = c->mu + c->var * (fabs(c->mu) + 1) + 1;
    for (int it = 0; it < 300; it++) {
        double x1 = b - g * (b - a), x2 = a + g * (b - a);
        if (ref_log_integrand(x1, c) < ref_log_integrand(x2, c))
            a = x1;
        else
            b = x2;
    }
    return 0.5 * (a + b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Breakpoints: the mode at several multiples of the latent sd (the integrand
 * decays at least as fast as N(mode, var), so +-40 sd is the whole mass) and
 * the places where the likelihood bends, so the adaptive rule sees both
 * scales however different they are. */
static size_t ref_points(double m, double s, double *pts)
{
    static const double ks[] = {-40, -8, -2, -0.5, 0, 0.5, 2, 8, 40};
    static const double fixed[] = {-30, -5, -1, 0, 1, 5, 30};
    size_t n = 0;
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
        pts[n++] = m + ks[i] * s;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (fixed[i] > m - 40 * s && fixed[i] < m + 40 * s)
            pts[n++] = fixed[i];
    qsort(pts, n, sizeof *pts, cmp_double);
    size_t u = 1;
    for (size_t i = 1; i < n; i++)
        if (pts[i] > pts[u - 1])
            pts[u++] = pts[i];
    return u;
}

/* log of int p(+1|f) N(f | mu, var) df by adaptive Gauss–Kronrod (QAG, 61
 * points, no extrapolation) on each piece between breakpoints, scaled by the
 * integrand's peak so tiny probabilities do not underflow. */
static double ref_log_predict(double (*loglik)(double), double mu, double var)
{
    if (var == 0)
        return loglik(mu);
    ref_ctx c = {loglik, mu, var, 0};
    double m = ref_mode(&c), s = sqrt(var), pts[32], total = 0, errsum = 0;
    c.shift = ref_log_integrand(m, &c);
    size_t n = ref_points(m, s, pts);
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(2000);
    gsl_function F = {ref_integrand, &c};
    int bad = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        double res, err;
        /* the peak is 1, so 1e-17 min(s, 1) is far below 1e-13 of the total */
        bad |= gsl_integration_qag(&F, pts[i], pts[i + 1], 1e-17 * fmin(s, 1), 1e-13, 2000,
                                   GSL_INTEG_GAUSS61, ws, &res, &err);
        total += res;
        errsum += err;
    }
    gsl_integration_workspace_free(ws);
    if (bad || errsum > 1e-12 * total)
        printf("# reference inaccurate at mu=%g var=%g (error %g)\n", mu, var, errsum / total);
    return c.shift + log(total);
}

/* ---- parsing ----------------------------------------------------------- */

static void test_parse(void)
{
    gpc_lik lik = GPC_LIK_PROBIT;
    TEST_OK(gpc_lik_parse("logistic", &lik) == GPC_OK && lik == GPC_LIK_LOGISTIC, "parse logistic");
    lik = GPC_LIK_PROBIT;
    TEST_OK(gpc_lik_parse("logit", &lik) == GPC_OK && lik == GPC_LIK_LOGISTIC, "parse logit");
    TEST_OK(gpc_lik_parse("probit", &lik) == GPC_OK && lik == GPC_LIK_PROBIT, "parse probit");
    TEST_OK(gpc_lik_parse("foo", &lik) == GPC_EUSAGE, "parse foo fails with GPC_EUSAGE");
    TEST_OK(!strcmp(gpc_errmsg(), "unknown likelihood 'foo' (use logistic, probit, step, softmax or mprobit)"),
            "parse error message: %s", gpc_errmsg());
    TEST_OK(gpc_lik_parse("", &lik) == GPC_EUSAGE, "parse empty name fails");
    TEST_OK(gpc_lik_parse("Probit", &lik) == GPC_EUSAGE, "parse is case-sensitive");
    TEST_OK(!strcmp(gpc_lik_name(GPC_LIK_LOGISTIC), "logistic"), "name logistic");
    TEST_OK(!strcmp(gpc_lik_name(GPC_LIK_PROBIT), "probit"), "name probit");
}

/* ---- log likelihood at moderate f -------------------------------------- */

/* Textbook formulas, fine where nothing is tiny: {log p, d1, d2, d3}. */
static void direct(gpc_lik lik, double y, double f, double d[4])
{
    double z = y * f;
    if (lik == GPC_LIK_LOGISTIC) {
        double pi = 1 / (1 + exp(-f)), t = (y + 1) / 2;
        d[0] = log(1 / (1 + exp(-z)));
        d[1] = t - pi;
        d[2] = -pi * (1 - pi);
        d[3] = -pi * (1 - pi) * (1 - 2 * pi);
        return;
    }
    /* log1p of the upper tail keeps log Phi accurate when Phi ~ 1 */
    double logP = z > 0 ? log1p(-gsl_cdf_ugaussian_Q(z)) : log(gsl_cdf_ugaussian_P(z));
    double r = exp(-0.5 * z * z) / sqrt(2 * M_PI) / gsl_cdf_ugaussian_P(z);
    d[0] = logP;
    d[1] = y * r;
    d[2] = -r * (z + r);
    d[3] = y * r * ((z + r) * (z + 2 * r) - 1);
}

static void test_logp_moderate(void)
{
    for (int l = 0; l < 2; l++) {
        worst_t wv = {0}, wd = {0}, ws = {0};
        for (int i = 0; i < 2; i++)
            for (double f = -4; f <= 4; f += 0.25) {
                double y = LABELS[i], want[4], d1, d2, d3;
                double lp = gpc_lik_logp(LIKS[l], y, f, &d1, &d2, &d3);
                direct(LIKS[l], y, f, want);
                track(&wv, lp, want[0], 1e-12, 0, "y=%g f=%g", y, f);
                track(&wd, d1, want[1], 1e-10, 1e-14, "d1 y=%g f=%g", y, f);
                track(&wd, d2, want[2], 1e-10, 1e-14, "d2 y=%g f=%g", y, f);
                track(&wd, d3, want[3], 1e-9, 1e-12, "d3 y=%g f=%g", y, f);
                /* the label only flips the sign of f */
                track(&ws, lp, gpc_lik_logp(LIKS[l], -y, -f, NULL, NULL, NULL), 0, 0,
                      "y=%g f=%g", y, f);
            }
        char name[96];
        snprintf(name, sizeof name, "%s logp = direct formula, f in [-4,4]", gpc_lik_name(LIKS[l]));
        report(&wv, name);
        snprintf(name, sizeof name, "%s d1..d3 = direct formulas", gpc_lik_name(LIKS[l]));
        report(&wd, name);
        snprintf(name, sizeof name, "%s logp(y, f) = logp(-y, -f)", gpc_lik_name(LIKS[l]));
        report(&ws, name);
    }
}

/* ---- log likelihood in the tails --------------------------------------- */

/* log Phi(-x) for large x from the asymptotic series of the Mills ratio,
 * x Phi(-x) / phi(x) ~ sum_k (-1)^k (2k-1)!! / x^(2k); nine terms give full
 * double precision for x >= 25. */
static double series_log_Phi_lower(double x)
{
    double u = 1 / (x * x), term = 1, sum = 1;
    for (int k = 1; k <= 9; k++) {
        term *= -(2 * k - 1) * u;
        sum += term;
    }
    return -0.5 * x * x - log(x) - 0.5 * log(2 * M_PI) + log(sum);
}

static void test_logistic_tails(void)
{
    const gpc_lik L = GPC_LIK_LOGISTIC;
    double d1, d2, d3, e40 = exp(-40);
    TEST_CLOSE(gpc_lik_logp(L, 1, -1000, &d1, &d2, &d3), -1000, 1e-15, 0, "logistic log sigma(-1000)");
    TEST_OK(d1 == 1 && d2 <= 0 && d2 > -1e-300 && fabs(d3) < 1e-300,
            "logistic derivatives at f=-1000, y=+1 (%g %g %g)", d1, d2, d3);
    TEST_CLOSE(gpc_lik_logp(L, -1, 1000, &d1, NULL, NULL), -1000, 1e-15, 0, "logistic y=-1 f=1000");
    TEST_OK(d1 == -1, "logistic d1 = -1 at y=-1 f=1000");
    TEST_CLOSE(gpc_lik_logp(L, 1, 1000, &d1, NULL, NULL), 0, 0, 1e-300, "logistic log sigma(1000)");
    TEST_OK(d1 >= 0 && d1 < 1e-300, "logistic d1 ~ 0 at y=+1 f=1000");
    TEST_CLOSE(gpc_lik_logp(L, 1, -40, NULL, NULL, NULL), -40 - e40, 1e-15, 0, "logistic log sigma(-40)");
    /* log sigma(40) = -log1p(e^-40): the answer is tiny, so check it relatively */
    TEST_CLOSE(gpc_lik_logp(L, 1, 40, &d1, &d2, &d3), -e40 * (1 - e40 / 2), 1e-14, 0,
               "logistic log sigma(40), relative");
    TEST_CLOSE(d1, e40 / (1 + e40), 1e-14, 0, "logistic d1 at f=40");
    TEST_CLOSE(d2, -e40 / ((1 + e40) * (1 + e40)), 1e-14, 0, "logistic d2 at f=40");
    TEST_CLOSE(d3, e40 * (1 - e40) / pow(1 + e40, 3), 1e-14, 0, "logistic d3 at f=40");
    gpc_lik_logp(L, -1, -40, &d1, &d2, &d3);
    TEST_CLOSE(d3, -e40 * (1 - e40) / pow(1 + e40, 3), 1e-14, 0, "logistic d3 at f=-40");
}

/* mpmath, 50 digits: log Phi(z), r = phi/Phi, and g'', g''' of log Phi. */
static const struct {
    double z, logPhi, r, g2, g3;
} PROBIT_TAIL[] = {
    {-1000, -500007.82669481218431, 1000.00099999800001, -0.99999900000599995,
     1.9999760002999958561e-9},
    {-200, -20006.217280898190402, 200.00499975003124422, -0.99997500374921895228,
     2.4992502342940935122e-7},
    {-40, -804.60844201375378817, 40.024968847207263723, -0.99937733162140861123,
     0.000031017440396486248322},
    {-10, -53.231285150512470578, 10.098093233962511963, -0.99055462217434373884,
     0.0017864003921165068922},
    {8, -6.2209605742717860585e-16, 5.0522710835368954309e-15, -4.0418168668295188973e-14,
     3.1829307826282502476e-13},
};

static void test_probit_tails(void)
{
    const gpc_lik P = GPC_LIK_PROBIT;
    for (size_t i = 0; i < sizeof PROBIT_TAIL / sizeof *PROBIT_TAIL; i++) {
        double z = PROBIT_TAIL[i].z, d1, d2, d3;
        for (int j = 0; j < 2; j++) {
            double y = LABELS[j], lp = gpc_lik_logp(P, y, y * z, &d1, &d2, &d3);
            TEST_CLOSE(lp, PROBIT_TAIL[i].logPhi, 1e-13, 0, "probit log Phi(%g), y=%g", z, y);
            TEST_CLOSE(d1, y * PROBIT_TAIL[i].r, 1e-13, 0, "probit d1 at z=%g, y=%g", z, y);
            TEST_CLOSE(d2, PROBIT_TAIL[i].g2, 1e-13, 0, "probit d2 at z=%g, y=%g", z, y);
            TEST_CLOSE(d3, y * PROBIT_TAIL[i].g3, 1e-12, 0, "probit d3 at z=%g, y=%g", z, y);
        }
    }
    TEST_CLOSE(gpc_lik_logp(P, 1, -40, NULL, NULL, NULL), series_log_Phi_lower(40), 1e-14, 0,
               "probit log Phi(-40) = asymptotic series");
    TEST_CLOSE(gpc_lik_logp(P, 1, -1e3, NULL, NULL, NULL), series_log_Phi_lower(1e3), 1e-14, 0,
               "probit log Phi(-1000) = asymptotic series");
}

static void test_extreme_finite(void)
{
    static const double fs[] = {-1e20, -1e5, -1e3, -40, 40, 1e3, 1e5, 1e20};
    for (int l = 0; l < 2; l++) {
        int ok = 1;
        for (int i = 0; i < 2; i++)
            for (size_t k = 0; k < sizeof fs / sizeof *fs; k++) {
                double d1, d2, d3, lp = gpc_lik_logp(LIKS[l], LABELS[i], fs[k], &d1, &d2, &d3);
                ok &= isfinite(lp) && lp <= 0 && isfinite(d1) && isfinite(d2) && isfinite(d3)
                      && d2 <= 0;
            }
        TEST_OK(ok, "%s logp and derivatives finite at f = +-40, +-1e3, +-1e5, +-1e20",
                gpc_lik_name(LIKS[l]));
    }
}

/* Absurd inputs must still give probabilities, not NaN. */
static void test_predict_extreme_finite(void)
{
    static const double mus[] = {-1e300, -1e10, -1e3, 1e3, 1e10, 1e300};
    static const double vars[] = {0, 1e-300, 1e-19, 1, 1e10, 1e100, 1e300};
    for (int l = 0; l < 2; l++) {
        int ok = 1;
        for (size_t i = 0; i < sizeof mus / sizeof *mus; i++)
            for (size_t j = 0; j < sizeof vars / sizeof *vars; j++) {
                double p = gpc_lik_predict(LIKS[l], mus[i], vars[j]);
                double lp = gpc_lik_predict_log(LIKS[l], mus[i], vars[j]);
                ok &= p >= 0 && p <= 1 && !isnan(lp) && lp <= 0;
            }
        TEST_OK(ok, "%s predict in [0,1], predict_log <= 0 for |mu| up to 1e300, var up to 1e300",
                gpc_lik_name(LIKS[l]));
    }
}

/* ---- derivatives against finite differences ---------------------------- */

static double deriv(gpc_lik lik, double y, double f, int k)
{
    double d[3];
    double lp = gpc_lik_logp(lik, y, f, &d[0], &d[1], &d[2]);
    return k == 0 ? lp : d[k - 1];
}

static void test_finite_differences(void)
{
    const double h = 1e-5;
    for (int l = 0; l < 2; l++)
        for (int k = 1; k <= 3; k++) {
            worst_t w = {0};
            for (int i = 0; i < 2; i++)
                for (double f = -10; f <= 10; f += 0.125) {
                    double y = LABELS[i];
                    double fd = (deriv(LIKS[l], y, f + h, k - 1) - deriv(LIKS[l], y, f - h, k - 1))
                                / (2 * h);
                    track(&w, deriv(LIKS[l], y, f, k), fd, 1e-6, 1e-9, "y=%g f=%g", y, f);
                }
            char name[96];
            snprintf(name, sizeof name, "%s d%d = finite difference of d%d, f in [-10,10]",
                     gpc_lik_name(LIKS[l]), k, k - 1);
            report(&w, name);
        }
}

static void test_log_concave(void)
{
    for (int l = 0; l < 2; l++) {
        int ok = 1;
        double bad = NAN;
        for (int i = 0; i < 2; i++)
            for (double f = -30; f <= 30; f += 0.1) {
                double d2;
                gpc_lik_logp(LIKS[l], LABELS[i], f, NULL, &d2, NULL);
                if (!(d2 < 0)) {
                    ok = 0;
                    bad = f;
                }
            }
        if (!TEST_OK(ok, "%s d2 < 0 for f in [-30,30]", gpc_lik_name(LIKS[l])))
            printf("#   d2 >= 0 at f=%g\n", bad);
    }
}

/* ---- predictive probabilities ------------------------------------------ */

static const double MUS[] = {-50, -30, -10, -3, -1, -0.5, -1e-3, 0, 1e-3, 0.5, 1, 3, 10, 30, 50};
static const double VARS[] = {0, 1e-6, 1e-2, 0.3, 1, 3, 10, 100, 1e3, 1e4};
#define N_MUS (sizeof MUS / sizeof *MUS)
#define N_VARS (sizeof VARS / sizeof *VARS)

static void test_probit_predict(void)
{
    const gpc_lik P = GPC_LIK_PROBIT;
    worst_t wc = {0}, wi = {0};
    for (size_t i = 0; i < N_MUS; i++)
        for (size_t j = 0; j < N_VARS; j++) {
            double mu = MUS[i], var = VARS[j], p = gpc_lik_predict(P, mu, var);
            track(&wc, p, gsl_cdf_ugaussian_P(mu / sqrt(1 + var)), 1e-15, 0, "mu=%g var=%g", mu, var);
            if (fabs(mu) <= 3 && var > 0 && var <= 100)
                track(&wi, p, exp(ref_log_predict(ref_log_Phi, mu, var)), 0, 1e-10, "mu=%g var=%g",
                      mu, var);
        }
    report(&wc, "probit predict = Phi(mu / sqrt(1 + var))");
    report(&wi, "probit predict = numerical integral, |mu| <= 3, var <= 100");
    TEST_CLOSE(gpc_lik_predict_log(P, -60, 1), series_log_Phi_lower(60 / sqrt(2.0)), 1e-14, 0,
               "probit predict_log(-60, 1) = log Phi(-60/sqrt 2), p ~ 1e-393");
}

static void test_logistic_predict_grid(void)
{
    double maxerr = 0;
    for (size_t j = 0; j < N_VARS; j++) {
        worst_t w = {0};
        for (size_t i = 0; i < N_MUS; i++) {
            double mu = MUS[i], var = VARS[j];
            double ref = exp(ref_log_predict(ref_log_sigmoid, mu, var));
            track(&w, gpc_lik_predict(GPC_LIK_LOGISTIC, mu, var), ref, 0, 1e-9, "mu=%g", mu);
        }
        if (w.maxabs > maxerr)
            maxerr = w.maxabs;
        char name[96];
        snprintf(name, sizeof name, "logistic predict = quadrature to 1e-9, var=%g, |mu|<=50", VARS[j]);
        report(&w, name);
    }
    printf("# logistic predict: max |p - reference| over the grid = %.3g\n", maxerr);
}

/* Values from mpmath quad at 50 digits. */
static void test_logistic_predict_known(void)
{
    static const double cases[][3] = {
        {1, 1, 0.6967346701436832881981002},
        {-2, 10, 0.2902868266715464905150342},
        {0.3, 1e4, 0.5011966282446982397048869},
        {-3, 0.01, 0.0476305642604266781539115},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        TEST_CLOSE(gpc_lik_predict(GPC_LIK_LOGISTIC, cases[i][0], cases[i][1]), cases[i][2], 1e-13,
                   0, "logistic predict(%g, %g) = mpmath value", cases[i][0], cases[i][1]);
    TEST_CLOSE(gpc_lik_predict(GPC_LIK_LOGISTIC, 0, 1e4), 0.5, 0, 1e-16, "logistic predict(0, var) = 1/2");
    TEST_CLOSE(gpc_lik_predict(GPC_LIK_LOGISTIC, 2, 0), 1 / (1 + exp(-2.0)), 1e-15, 0,
               "logistic predict(mu, 0) = sigma(mu)");
}

/* Range, symmetry and monotonicity on a dense grid reaching past the
 * documented range of var. */
static void test_predict_properties(void)
{
    for (int l = 0; l < 2; l++) {
        int range = 1, mono = 1;
        worst_t ws = {0};
        for (double lv = -8; lv <= 6; lv += 0.5) {
            double var = pow(10, lv), prev = -1;
            for (double mu = -60; mu <= 60; mu += 0.7) {
                double p = gpc_lik_predict(LIKS[l], mu, var), q = gpc_lik_predict(LIKS[l], -mu, var);
                range &= p >= 0 && p <= 1;
                mono &= p >= prev;
                prev = p;
                track(&ws, p + q, 1, 0, 2.3e-16, "mu=%g var=%g", mu, var);
            }
        }
        TEST_OK(range, "%s predict in [0, 1]", gpc_lik_name(LIKS[l]));
        TEST_OK(mono, "%s predict nondecreasing in mu", gpc_lik_name(LIKS[l]));
        char name[96];
        snprintf(name, sizeof name, "%s predict(mu) + predict(-mu) = 1", gpc_lik_name(LIKS[l]));
        report(&ws, name);
    }
}

static void test_predict_log_consistent(void)
{
    for (int l = 0; l < 2; l++) {
        worst_t w = {0};
        for (size_t i = 0; i < N_MUS; i++)
            for (size_t j = 0; j < N_VARS; j++) {
                double p = gpc_lik_predict(LIKS[l], MUS[i], VARS[j]);
                if (p > 1e-6)
                    track(&w, gpc_lik_predict_log(LIKS[l], MUS[i], VARS[j]), log(p), 1e-12, 1e-15,
                          "mu=%g var=%g", MUS[i], VARS[j]);
            }
        char name[96];
        snprintf(name, sizeof name, "%s predict_log = log(predict) where p > 1e-6",
                 gpc_lik_name(LIKS[l]));
        report(&w, name);
    }
}

/* Tiny p: an absolute error in log p is a relative error in p. */
static void test_predict_log_tiny(void)
{
    const gpc_lik L = GPC_LIK_LOGISTIC;
    static const double mus[] = {-30, -40, -50, -100, -300};
    static const double vars[] = {1e-6, 1e-2, 1, 10, 25};
    worst_t w = {0};
    for (size_t i = 0; i < sizeof mus / sizeof *mus; i++)
        for (size_t j = 0; j < sizeof vars / sizeof *vars; j++)
            track(&w, gpc_lik_predict_log(L, mus[i], vars[j]),
                  ref_log_predict(ref_log_sigmoid, mus[i], vars[j]), 0, 1e-9, "mu=%g var=%g",
                  mus[i], vars[j]);
    report(&w, "logistic predict_log = log-space quadrature for tiny p, to 1e-9 relative");
    /* Deep in the tail p = e^{mu + var/2} (1 - e^{mu + 3 var/2} + ...). */
    TEST_CLOSE(gpc_lik_predict_log(L, -40, 1), -39.5, 1e-15, 0, "logistic predict_log(-40, 1) = -39.5");
    TEST_CLOSE(gpc_lik_predict_log(L, -1000, 4), -998, 1e-15, 0,
               "logistic predict_log(-1000, 4) = -998 (p itself underflows)");
    TEST_CLOSE(gpc_lik_predict_log(L, 1000, 4), 0, 0, 1e-300, "logistic predict_log(1000, 4) = 0");
    TEST_CLOSE(gpc_lik_predict_log(L, -800, 0), -800, 1e-15, 0, "logistic predict_log(-800, 0)");
}

/* ---- speed ------------------------------------------------------------- */

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double time_calls(double (*fn)(gpc_lik, double, double), double *checksum)
{
    const int n = 100000;
    double t0 = seconds();
    for (int i = 0; i < n; i++) {
        double mu = -50 + 100.0 * (i % 997) / 996, var = pow(10, -6 + 10.0 * (i % 101) / 100);
        *checksum += fn(GPC_LIK_LOGISTIC, mu, var);
    }
    return (seconds() - t0) / n * 1e6;
}

/* Called once per test point, so the cost matters; the bound is loose so
 * that slow or instrumented builds still pass, and the figure is printed. */
static void test_speed(void)
{
    double sum = 0, us = time_calls(gpc_lik_predict, &sum);
    double us_log = time_calls(gpc_lik_predict_log, &sum);
    printf("# logistic predict %.2f us/call, predict_log %.2f us/call (checksum %g)\n", us, us_log,
           sum);
    TEST_OK(us < 200 && us_log < 200, "logistic predict fast (%.2f and %.2f us/call)", us, us_log);
}

/* ---- the step likelihood and label noise ------------------------------ */

/* p(y = +1) for the step, eps + (1 - 2 eps) H(f), averaged over N(mu, var)
 * by the midpoint rule on the positive half line only. */
static double step_quad(double eps, double mu, double var)
{
    double sd = sqrt(var), hi = fmax(mu + 12 * sd, 0.0), h = hi / 400000, s = 0.0;
    for (int i = 0; i < 400000; i++) {
        double f = (i + 0.5) * h;
        s += exp(-0.5 * (f - mu) * (f - mu) / var) / sqrt(2 * M_PI * var) * h;
    }
    return eps + (1 - 2 * eps) * s;
}

static void test_step(void)
{
    gpc_lik lik = GPC_LIK_PROBIT;
    TEST_OK(gpc_lik_parse("step", &lik) == GPC_OK && lik == GPC_LIK_STEP, "parse step");
    TEST_OK(!strcmp(gpc_lik_name(GPC_LIK_STEP), "step"), "name step");
    double d1 = 1, d2 = 1, d3 = 1;
    TEST_OK(gpc_lik_logp(GPC_LIK_STEP, 1, 0.3, &d1, &d2, &d3) == 0.0 && d1 == 0 && d2 == 0 &&
                d3 == 0, "step: log H(y f) = 0 where y f > 0, derivatives 0");
    TEST_OK(gpc_lik_logp(GPC_LIK_STEP, -1, 0.3, NULL, NULL, NULL) == -INFINITY,
            "step: log H(y f) = -inf where y f < 0");
    static const double cases[][3] = {{0.0, 0.2, 0.0}, {0.7, 1.3, 0.1}, {-1.1, 0.4, 0.05},
                                      {2.0, 0.01, 0.3}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double mu = cases[c][0], var = cases[c][1], eps = cases[c][2];
        double got = gpc_lik_noisy(eps, gpc_lik_predict(GPC_LIK_STEP, mu, var));
        TEST_CLOSE(got, step_quad(eps, mu, var), 1e-9, 1e-12,
                   "step predict with label noise %g at mu %g, var %g vs quadrature", eps, mu,
                   var);
        TEST_CLOSE(gpc_lik_predict_log(GPC_LIK_STEP, mu, var),
                   log(gpc_lik_predict(GPC_LIK_STEP, mu, var)), 1e-14, 1e-15,
                   "step predict_log = log predict at mu %g", mu);
    }
    TEST_CLOSE(gpc_lik_predict_log(GPC_LIK_STEP, -40, 1), log(gsl_cdf_ugaussian_P(-40)), 1e-12,
               0, "step predict_log far in the tail stays finite and exact");
    TEST_OK(gpc_lik_predict(GPC_LIK_STEP, 0.5, 0) == 1 && gpc_lik_predict(GPC_LIK_STEP, -0.5, 0)
            == 0 && gpc_lik_predict(GPC_LIK_STEP, 0, 0) == 0.5,
            "step predict with no variance: H(mu), a half at 0");
}

int main(void)
{
    gpc_gsl_quiet(); /* a reference integral that stalls must not abort */
    test_parse();
    test_step();
    test_logp_moderate();
    test_logistic_tails();
    test_probit_tails();
    test_extreme_finite();
    test_finite_differences();
    test_log_concave();
    test_probit_predict();
    test_logistic_predict_grid();
    test_logistic_predict_known();
    test_predict_properties();
    test_predict_extreme_finite();
    test_predict_log_consistent();
    test_predict_log_tiny();
    test_speed();
    return tap_done();
}
