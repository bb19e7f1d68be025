/* lik — logistic and probit likelihoods and their Gaussian averages.
 *
 * Everything is done in log space or with closed forms chosen so that no
 * quantity cancels catastrophically at large |f|: fitting pushes latent
 * values of well-separated points far into the tails, where naive formulas return
 * log(0) or 0/0.
 *
 * The logistic predictive integral has no closed form.  It is evaluated
 * with an exact series (see logistic_logq below) whose alternating tail is
 * summed by the Cohen–Rodriguez Villegas–Zagier acceleration; that keeps the
 * cost fixed (2 x SERIES_N special-function calls) and the error uniformly
 * small for every mean and variance, where Gauss–Hermite rules break down
 * once the latent spread is large compared with the width of the sigmoid. */
#include "liks/lik.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_erf.h>

#include "base/err.h"

/* Terms of the accelerated series.  The acceleration's relative error is at
 * most 4 / cosh(n acosh 3) ~ 8 (3 + sqrt 8)^-n: 4e-15 for n = 20. */
#define SERIES_N 20

/* Below this variance the latent is a point mass for our purposes: the
 * relative error of using sigma(mu) is at most var / 2. */
#define VAR_POINT 1e-20

/* Above this distance into the lower tail the probit derivatives come from
 * a continued fraction (60 levels: 2e-15 at x = 3, better beyond), as the
 * direct formulas lose accuracy to cancellation there. */
#define PROBIT_CF_X 3.0
#define PROBIT_CF_DEPTH 60

int gpc_lik_parse(const char *name, gpc_lik *lik)
{
    if (name && (!strcmp(name, "logistic") || !strcmp(name, "logit"))) {
        *lik = GPC_LIK_LOGISTIC;
        return GPC_OK;
    }
    if (name && !strcmp(name, "probit")) {
        *lik = GPC_LIK_PROBIT;
        return GPC_OK;
    }
    if (name && !strcmp(name, "step")) {
        *lik = GPC_LIK_STEP;
        return GPC_OK;
    }
    if (name && !strcmp(name, "softmax")) {
        *lik = GPC_LIK_SOFTMAX;
        return GPC_OK;
    }
    if (name && !strcmp(name, "mprobit")) {
        *lik = GPC_LIK_MPROBIT;
        return GPC_OK;
    }
    return gpc_fail(GPC_EUSAGE, "unknown likelihood '%s' (use logistic, probit, step, softmax "
                    "or mprobit)", name ? name : "");
}

const char *gpc_lik_name(gpc_lik lik)
{
    switch (lik) {
    case GPC_LIK_LOGISTIC: return "logistic";
    case GPC_LIK_PROBIT: return "probit";
    case GPC_LIK_STEP: return "step";
    case GPC_LIK_SOFTMAX: return "softmax";
    case GPC_LIK_MPROBIT: return "mprobit";
    }
    return "unknown";
}

/* ---- shared helpers ---------------------------------------------------- */

/* Labels are used only through their sign, so 0/1 coding mistakes upstream
 * cannot silently scale the derivatives. */
static double label_sign(double y) { return y > 0 ? 1.0 : -1.0; }

/* log sigma(z) without overflow of exp and without log(0). */
static double log_sigmoid(double z)
{
    return z > 0 ? -log1p(exp(-z)) : z - log1p(exp(z));
}

/* log Phi(z).  In the upper tail Phi is 1 - tiny, so go through log1p to keep
 * the tiny part; in the lower tail log erfc is accurate where Phi underflows.
 * Beyond |z| = 1e8 GSL's erfc overflows internally (NaN), while the
 * two-term asymptotic series is exact to double precision there. */
static double log_Phi(double z)
{
    if (z > 40)
        return 0.0; /* -Phi(-z) < 1e-349 rounds to zero */
    if (z > 0)
        return log1p(-0.5 * gsl_sf_erfc(z / M_SQRT2));
    if (z < -1e8)
        return -0.5 * z * z - log(-z) - 0.5 * log(2 * M_PI) - 1 / (z * z);
    return gsl_sf_log_erfc(-z / M_SQRT2) - M_LN2;
}

static double log_phi(double z) { return -0.5 * z * z - 0.5 * log(2 * M_PI); }

static double log_add_exp(double a, double b)
{
    double hi = a > b ? a : b, lo = a > b ? b : a;
    if (hi == -INFINITY)
        return hi;
    return hi + log1p(exp(lo - hi));
}

/* ---- log likelihoods --------------------------------------------------- */

static double logistic_logp(double y, double f, double *d1, double *d2, double *d3)
{
    double s = label_sign(y), z = s * f;
    /* One exponential, at a non-positive argument (no overflow), gives
     * pi = p(+1|f) and 1 - pi, both formed directly (never as 1 - x), and
     * log sigma(s f) as log_sigmoid forms it: one call where three would do
     * the same (the Laplace mode search evaluates this at every step). */
    double e = exp(-fabs(f)), big = 1.0 / (1.0 + e), small = e / (1.0 + e);
    double pi = f >= 0 ? big : small, pic = f >= 0 ? small : big, v = pi * pic;
    if (d1)
        *d1 = s > 0 ? pic : -pi; /* t - pi */
    if (d2)
        *d2 = -v;
    if (d3)
        *d3 = v * tanh(0.5 * f); /* -pi (1 - pi)(1 - 2 pi); 1 - 2 pi = -tanh(f/2) */
    return z > 0 ? -log1p(e) : z - log1p(e);
}

/* Lower tail of the probit, x = -z >= PROBIT_CF_X.  With r = phi(z)/Phi(z),
 * Laplace's continued fraction gives w = r - x = 1/D1, D_k = x + (k+1)/D_{k+1},
 * without the cancellation of forming r + z from r ~ x.  The derivatives of
 * g = log Phi are g'' = -r w and g''' = r (w (r + w) - 1); by the recurrence
 * w (r + w) - 1 = 2 w^2 (3/D3 - 2/D2) / D2, again free of cancellation. */
static void probit_tail(double x, double *r, double *g2, double *g3)
{
    double d = x, d2 = x, d3 = x;
    for (int k = PROBIT_CF_DEPTH; k >= 1; k--) {
        d3 = d2;
        d2 = d;
        d = x + (k + 1) / d;
    }
    double w = 1.0 / d;
    *r = x + w;
    *g2 = -*r * w;
    *g3 = 2.0 * *r * w * w * (3.0 / d3 - 2.0 / d2) / d2;
}

/* r, g'' and g''' at z for g = log Phi. */
static void probit_derivs(double z, double lp, double *r, double *g2, double *g3)
{
    if (-z >= PROBIT_CF_X) {
        probit_tail(-z, r, g2, g3);
        return;
    }
    if (z > 40) { /* r < phi(40) underflows; avoid 0 * inf at huge z */
        *r = *g2 = *g3 = 0.0;
        return;
    }
    double q = exp(log_phi(z) - lp); /* phi/Phi, no 0/0 when Phi is tiny */
    double zr = z + q;
    *r = q;
    *g2 = -q * zr;                    /* r' = -r (z + r) */
    *g3 = q * (zr * (z + 2 * q) - 1); /* -r - r' (z + 2 r) */
}

static double probit_logp(double y, double f, double *d1, double *d2, double *d3)
{
    double s = label_sign(y), z = s * f, lp = log_Phi(z);
    if (d1 || d2 || d3) {
        double r, g2, g3;
        probit_derivs(z, lp, &r, &g2, &g3);
        /* d^k/df^k g(s f) = s^k g^(k)(s f), s = +-1 */
        if (d1)
            *d1 = s * r;
        if (d2)
            *d2 = g2;
        if (d3)
            *d3 = s * g3;
    }
    return lp;
}

/* log H(y f): 0 or -inf; the derivatives are 0 wherever they exist. */
static double step_logp(double y, double f, double *d1, double *d2, double *d3)
{
    if (d1)
        *d1 = 0.0;
    if (d2)
        *d2 = 0.0;
    if (d3)
        *d3 = 0.0;
    return label_sign(y) * f > 0 ? 0.0 : -INFINITY;
}

double gpc_lik_logp(gpc_lik lik, double y, double f, double *d1, double *d2, double *d3)
{
    if (lik == GPC_LIK_STEP)
        return step_logp(y, f, d1, d2, d3);
    if (lik == GPC_LIK_PROBIT)
        return probit_logp(y, f, d1, d2, d3);
    return logistic_logp(y, f, d1, d2, d3);
}

/* ---- logistic predictive ----------------------------------------------- */

/* Sum_{j>=0} (-1)^j a[j] for a Hausdorff moment sequence a[j] = int r^j dmu(r)
 * on [0, 1] (Cohen, Rodriguez Villegas & Zagier 2000, algorithm 1).  The
 * error is at most 2 a[0] / cosh(n acosh 3), uniformly in the measure. */
static double alternating_sum(const double *a, int n)
{
    double d = pow(3.0 + sqrt(8.0), n);
    d = 0.5 * (d + 1.0 / d);
    double b = -1.0, c = -d, sum = 0.0;
    for (int k = 0; k < n; k++) {
        c = b - c;
        sum += c * a[k];
        b = (double)(k + n) * (k - n) * b / ((k + 0.5) * (k + 1));
    }
    return sum / d;
}

/* log T_k(c) with T_k(c) = E[exp(-k u); u > 0] for u ~ N(c, s^2)
 *                        = exp(k^2 s^2 / 2 - k c) Phi(c/s - k s)
 *                        = phi(c/s) M(k s - c/s),  M = Mills ratio.
 * The first form has huge cancelling exponents when k s - c/s > 0, the
 * second when it is < 0, so each is used on its own side. */
static double log_term(int k, double c, double s)
{
    double x = k * s - c / s;
    if (x >= 0)
        return log_phi(c / s) - log(gsl_sf_hazard(x)); /* hazard = 1/M */
    return k * (0.5 * k * s * s - c) + log_Phi(-x);
}

/* log of q = int sigma(f) N(f | mu, s^2) df for mu <= 0 (q <= 1/2).
 *
 * Split the integral at f = 0 and use sigma(f) = 1 - sigma(-f) on f > 0:
 *   q = Phi(mu/s) - K(mu) + K(-mu),  K(c) = E[sigma(-u); u > 0], u ~ N(c, s^2).
 * Expanding sigma(-u) = sum_k (-1)^(k+1) exp(-k u) (u > 0) gives
 *   q = Phi(mu/s) + sum_{k>=1} (-1)^(k+1) b_k,  b_k = T_k(-mu) - T_k(mu).
 * With M(x) = int_0^inf exp(-x t - t^2/2) dt, b_k is the integral of
 * exp(-k s t) against the positive measure 2 phi(mu/s) e^{-t^2/2}
 * sinh(|mu| t / s) dt, i.e. a moment sequence in exp(-s t), so the
 * alternating series is summed to full accuracy by alternating_sum.  Both
 * parts are positive, and the b_k are scaled by b_1's magnitude, so log q is
 * accurate in relative terms however small q is. */
static double logistic_logq(double mu, double var)
{
    if (var < VAR_POINT || mu == -INFINITY)
        return log_sigmoid(mu);
    double s = sqrt(var), b[SERIES_N];
    double top = log_term(1, -mu, s); /* T_k(mu) <= T_k(-mu) <= T_1(-mu) */
    for (int k = 1; k <= SERIES_N; k++)
        b[k - 1] = exp(log_term(k, -mu, s) - top) - exp(log_term(k, mu, s) - top);
    double sum = alternating_sum(b, SERIES_N), lphi = log_Phi(mu / s);
    if (!(sum > 0)) /* mu = 0 exactly, or rounding at mu ~ 0 where Phi dominates */
        return lphi;
    return log_add_exp(lphi, top + log(sum));
}

/* log Phi(mu / sqrt(var)), the step likelihood's average; a point mass at
 * mu = 0 counts half to each side. */
static double step_logq(double mu, double var)
{
    if (var > 0.0)
        return log_Phi(mu / sqrt(var));
    return mu > 0.0 ? 0.0 : mu < 0.0 ? -INFINITY : -M_LN2;
}

double gpc_lik_noisy(double eps, double p) { return eps + (1.0 - 2.0 * eps) * p; }

double gpc_lik_predict(gpc_lik lik, double mu, double var)
{
    if (lik == GPC_LIK_STEP)
        return exp(step_logq(mu, var));
    if (lik == GPC_LIK_PROBIT)
        return gsl_cdf_ugaussian_P(mu / sqrt(1.0 + var));
    /* Evaluate the half with q <= 1/2 and reflect: p(mu) = 1 - p(-mu). */
    if (mu <= 0)
        return exp(logistic_logq(mu, var));
    return 1.0 - exp(logistic_logq(-mu, var));
}

double gpc_lik_predict_log(gpc_lik lik, double mu, double var)
{
    if (lik == GPC_LIK_STEP)
        return step_logq(mu, var);
    if (lik == GPC_LIK_PROBIT)
        return log_Phi(mu / sqrt(1.0 + var));
    if (mu <= 0)
        return logistic_logq(mu, var);
    return log1p(-exp(logistic_logq(-mu, var)));
}
