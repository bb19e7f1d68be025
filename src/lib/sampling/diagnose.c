#include "sampling/diagnose.h"

#include "base/alloc.h"

#include <math.h>
#include <stdlib.h>

void gpc_diag_mean_sd(const double *x, size_t n, double *mean, double *sd)
{
    double m = 0.0, s = 0.0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        s += (x[i] - m) * (x[i] - m);
    *mean = m;
    *sd = n > 1 ? sqrt(s / (double)(n - 1)) : NAN;
}

/* Autocovariance of one chain at lag t (denominator n, as BDA3). */
static double autocov(const double *x, size_t n, double mean, size_t t)
{
    double s = 0.0;
    for (size_t i = 0; i + t < n; i++)
        s += (x[i] - mean) * (x[i + t] - mean);
    return s / (double)n;
}

/* Within-chain variance W and the pooled variance estimate var+ (BDA3 11.3). */
static void variances(const double *x, size_t m, size_t n, double *W, double *varplus)
{
    double grand = 0.0, B = 0.0, w = 0.0;
    double *means = gpc_malloc(m * sizeof *means);
    for (size_t c = 0; c < m; c++) {
        double sd;
        gpc_diag_mean_sd(x + c * n, n, &means[c], &sd);
        w += sd * sd / (double)m;
        grand += means[c] / (double)m;
    }
    for (size_t c = 0; m > 1 && c < m; c++)
        B += (means[c] - grand) * (means[c] - grand) * (double)n / (double)(m - 1);
    free(means);
    *W = w;
    *varplus = (double)(n - 1) / (double)n * w + B / (double)n;
}

double gpc_diag_ess_chains(const double *x, size_t m, size_t n)
{
    if (n < 4 || m == 0)
        return NAN;
    double W, varplus;
    variances(x, m, n, &W, &varplus);
    if (!(W > 0.0))
        return NAN;
    double *means = gpc_malloc(m * sizeof *means), sd;
    for (size_t c = 0; c < m; c++)
        gpc_diag_mean_sd(x + c * n, n, &means[c], &sd);
    /* rho_t = 1 - (W - mean_c acov_c(t)) / var+; sum over pairs
     * rho_{2k} + rho_{2k+1} while positive, and kept non-increasing (Geyer) */
    double sum = 0.0, prev_pair = HUGE_VAL;
    for (size_t t = 0; t + 1 < n; t += 2) {
        double pair = 0.0;
        for (size_t u = t; u <= t + 1; u++) {
            double acov = 0.0;
            for (size_t c = 0; c < m; c++)
                acov += autocov(x + c * n, n, means[c], u) / (double)m;
            pair += 1.0 - (W - acov) / varplus;
        }
        if (pair <= 0.0)
            break;
        if (pair > prev_pair)
            pair = prev_pair;
        prev_pair = pair;
        sum += pair;
    }
    free(means);
    /* sum = rho_0 + 2 sum_{t>=1} rho_t would need rho_0 once: tau = 2 sum - 1.
     * On a few draws the estimated autocorrelations are noise, and tau can
     * come out below 1 or negative (no positive pair at all); m n draws hold
     * at most m n independent ones, so tau is kept at 1 or more. */
    double tau = fmax(2.0 * sum - 1.0, 1.0);
    return (double)(m * n) / tau;
}

double gpc_diag_ess(const double *x, size_t n) { return gpc_diag_ess_chains(x, 1, n); }

double gpc_diag_split_rhat(const double *x, size_t m, size_t n)
{
    if (n < 4 || m == 0)
        return NAN;
    size_t h = n / 2;
    double *halves = gpc_malloc(2 * m * h * sizeof *halves);
    for (size_t c = 0; c < m; c++)
        for (size_t i = 0; i < h; i++) {
            halves[(2 * c) * h + i] = x[c * n + i];
            halves[(2 * c + 1) * h + i] = x[c * n + (n - h) + i];
        }
    double W, varplus;
    variances(halves, 2 * m, h, &W, &varplus);
    free(halves);
    if (!(W > 0.0))
        return NAN;
    return sqrt(varplus / W);
}
