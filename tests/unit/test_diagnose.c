/* MCMC diagnostics against known answers: iid draws, an AR(1) chain with a
 * known integrated autocorrelation time, chains that agree and disagree. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sampling/diagnose.h"
#include "tap.h"

int main(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 21);
    size_t n = 50000;
    double *x = malloc(4 * n * sizeof *x), mean, sd;

    const double v[4] = {1, 2, 3, 6};
    gpc_diag_mean_sd(v, 4, &mean, &sd);
    TEST_CLOSE(mean, 3.0, 1e-15, 0, "mean of 1 2 3 6");
    TEST_CLOSE(sd, sqrt(14.0 / 3.0), 1e-15, 0, "sample sd of 1 2 3 6");

    for (size_t i = 0; i < n; i++)
        x[i] = gsl_ran_gaussian(r, 1.0);
    TEST_CLOSE(gpc_diag_ess(x, n), (double)n, 0.1, 0, "ESS of iid draws is about n");

    /* AR(1): integrated autocorrelation time (1 + phi) / (1 - phi) */
    double phi = 0.9;
    x[0] = gsl_ran_gaussian(r, 1.0);
    for (size_t i = 1; i < n; i++)
        x[i] = phi * x[i - 1] + sqrt(1 - phi * phi) * gsl_ran_gaussian(r, 1.0);
    double want = n * (1 - phi) / (1 + phi);
    TEST_CLOSE(gpc_diag_ess(x, n), want, 0.15, 0, "ESS of AR(1), phi 0.9: %.0f, theory %.0f",
               gpc_diag_ess(x, n), want);

    for (size_t i = 0; i < 4 * n; i++)
        x[i] = gsl_ran_gaussian(r, 1.0);
    TEST_CLOSE(gpc_diag_ess_chains(x, 4, n), 4.0 * n, 0.1, 0, "ESS of 4 iid chains is about 4n");
    TEST_OK(gpc_diag_split_rhat(x, 4, n) < 1.01, "split R-hat of agreeing chains: %.4f",
            gpc_diag_split_rhat(x, 4, n));
    for (size_t i = 3 * n; i < 4 * n; i++)
        x[i] += 3.0;
    TEST_OK(gpc_diag_split_rhat(x, 4, n) > 1.5, "split R-hat with one chain elsewhere: %.3f",
            gpc_diag_split_rhat(x, 4, n));
    for (size_t i = 0; i < n; i++)
        x[i] = gsl_ran_gaussian(r, 1.0) + (i < n / 2 ? 0.0 : 2.0);
    TEST_OK(gpc_diag_split_rhat(x, 1, n) > 1.1, "split R-hat sees a chain that moved: %.3f",
            gpc_diag_split_rhat(x, 1, n));

    const double flat[6] = {1, 1, 1, 1, 1, 1};
    TEST_OK(isnan(gpc_diag_ess(flat, 6)) && isnan(gpc_diag_split_rhat(flat, 1, 6)),
            "a constant chain: ESS and R-hat undefined (NAN)");
    TEST_OK(isnan(gpc_diag_ess(v, 3)) && isnan(gpc_diag_split_rhat(v, 1, 3)),
            "fewer than 4 draws: undefined (NAN)");
    /* Short chains: the autocorrelation estimates are noise and must not
     * give a negative ESS or more effective draws than draws. */
    const double alternating[4] = {1, -1, 1, -1};
    double e = gpc_diag_ess(alternating, 4);
    TEST_OK(e > 0 && e <= 4, "ESS of 1 -1 1 -1 is in (0, 4]: %g", e);
    int short_ok = 1;
    for (size_t rep = 0; rep < 2000; rep++) {
        size_t m = 1 + rep % 3, len = 4 + rep % 3;
        for (size_t i = 0; i < m * len; i++)
            x[i] = gsl_ran_gaussian(r, 1.0);
        e = gpc_diag_ess_chains(x, m, len);
        if (!(e > 0 && e <= (double)(m * len))) {
            printf("#   %zu chains of %zu draws: ESS %g\n", m, len, e);
            short_ok = 0;
            break;
        }
    }
    TEST_OK(short_ok, "ESS of 2000 random chains of 4 to 6 draws is in (0, m n]");
    free(x);
    gsl_rng_free(r);
    return tap_done();
}
