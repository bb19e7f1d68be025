/* exp, log and erfc over arrays (vmath.h): against libm over the ranges
 * the kernels and the multinomial probit's integrals use (exp of minus
 * something, down to -745, where it underflows; log of a probability down
 * to 1e-300; erfc of [0, 26], down to 1e-296), at every array length up to
 * 19 (so that every tail is met), and at the special values.  exp within 4
 * ulp (libmvec's worst seen is 3); log and erfc within 8, since only
 * their AVX2 variants were measured (worst 1 and 3 ulp) and the AVX-512
 * ones may differ; the integrals need 1e-14, and a wrong function or lane
 * errs by far more. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "linalg/vmath.h"
#include "tap.h"

/* |a - b| in units of the last place of b */
static double ulps(double a, double b)
{
    if (a == b)
        return 0.0;
    if (b == 0.0 || !isfinite(b))
        return INFINITY;
    int e;
    frexp(b, &e);
    return fabs(a - b) / ldexp(DBL_EPSILON, e - 1);
}

/* The largest distance in ulp of f_array from f over m points u in [0, 1)
 * mapped to lo + (hi - lo) u, or to lo * (hi / lo)^u if geometric. */
static double worst_ulps(void (*f_array)(double *, size_t), double (*f)(double), double lo,
                         double hi, int geometric, double *at)
{
    size_t m = 100000;
    double *x = malloc(m * sizeof *x), *y = malloc(m * sizeof *y), worst = 0.0;
    unsigned long s = 7;
    for (size_t i = 0; i < m; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        double u = (double)(s >> 11) / 9007199254740992.0;
        x[i] = y[i] = geometric ? lo * pow(hi / lo, u) : lo + (hi - lo) * u;
    }
    f_array(y, m);
    *at = 0.0;
    for (size_t i = 0; i < m; i++) {
        double e = ulps(y[i], f(x[i]));
        if (e > worst) {
            worst = e;
            *at = x[i];
        }
    }
    free(x);
    free(y);
    return worst;
}

int main(void)
{
    size_t m = 200000;
    double *x = malloc(m * sizeof *x), *y = malloc(m * sizeof *y), worst = 0.0, at = 0.0;
    unsigned long s = 99;
    for (size_t i = 0; i < m; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        double u = (double)(s >> 11) / 9007199254740992.0;
        x[i] = i % 2 ? -50.0 * u : -745.0 + 745.0 * u; /* the kernels: exp of minus something */
        y[i] = x[i];
    }
    gpc_exp_array(y, m);
    for (size_t i = 0; i < m; i++) {
        double e = ulps(y[i], exp(x[i]));
        if (e > worst) {
            worst = e;
            at = x[i];
        }
    }
    TEST_OK(worst <= 4.0, "within 4 ulp of libm's exp over [-745, 0] (worst %.2g at %.17g)",
            worst, at);
    int lengths_ok = 1;
    for (size_t n = 0; n <= 19; n++) {
        double a[20], b[20];
        for (size_t i = 0; i < 20; i++)
            a[i] = b[i] = -0.37 * (double)i;
        gpc_exp_array(a, n);
        for (size_t i = 0; i < 20; i++)
            lengths_ok &= i < n ? ulps(a[i], exp(b[i])) <= 4.0 : a[i] == b[i];
    }
    TEST_OK(lengths_ok, "every length up to 19: the first n done, the rest untouched");
    double special[] = {0.0, -0.0, -800.0, 710.0, -INFINITY, NAN, 1.0, -1.0};
    double z[8];
    for (int i = 0; i < 8; i++)
        z[i] = special[i];
    gpc_exp_array(z, 8);
    TEST_OK(z[0] == 1.0 && z[1] == 1.0 && z[2] == 0.0 && isinf(z[3]) && z[4] == 0.0 &&
                isnan(z[5]) && ulps(z[6], exp(1.0)) <= 4.0 && ulps(z[7], exp(-1.0)) <= 4.0,
            "exp(0) = 1, underflow to 0, overflow to inf, exp(-inf) = 0, NaN stays NaN");
    free(x);
    free(y);

    double w;
    w = worst_ulps(gpc_log_array, log, 1e-300, 1.0, 1, &at);
    TEST_OK(w <= 8.0, "log within 8 ulp of libm's over [1e-300, 1] (worst %.2g at %.17g)", w, at);
    w = worst_ulps(gpc_erfc_array, erfc, 0.0, 26.0, 0, &at);
    TEST_OK(w <= 8.0, "erfc within 8 ulp of libm's over [0, 26] (worst %.2g at %.17g)", w, at);
    void (*fa[])(double *, size_t) = {gpc_log_array, gpc_erfc_array};
    double (*f[])(double) = {log, erfc};
    int tails_ok = 1;
    for (int k = 0; k < 2; k++)
        for (size_t n = 0; n <= 19; n++) {
            double a[20], b[20];
            for (size_t i = 0; i < 20; i++)
                a[i] = b[i] = 0.01 + 0.37 * (double)i;
            fa[k](a, n);
            for (size_t i = 0; i < 20; i++)
                tails_ok &= i < n ? ulps(a[i], f[k](b[i])) <= 8.0 : a[i] == b[i];
        }
    TEST_OK(tails_ok, "log and erfc at every length up to 19: the first n done, the rest "
            "untouched");
    double sp[] = {0.0, -1.0, INFINITY, NAN};
    double lg[4], ec[4];
    for (int i = 0; i < 4; i++)
        lg[i] = ec[i] = sp[i];
    gpc_log_array(lg, 4);
    gpc_erfc_array(ec, 4);
    TEST_OK(isinf(lg[0]) && lg[0] < 0 && isnan(lg[1]) && isinf(lg[2]) && isnan(lg[3]) &&
                ec[0] == 1.0 && ec[1] > 1.84 && ec[2] == 0.0 && isnan(ec[3]),
            "log(0) = -inf, log(-1) NaN, erfc(0) = 1, erfc(inf) = 0, NaN stays NaN");
    return tap_done();
}
