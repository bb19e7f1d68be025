/* exp over arrays (vexp.h): against libm's exp, within 4 ulp (libmvec's
 * worst seen here is 3), over the range the kernels use (exp of minus
 * something, down to -745, where it underflows), at every array length up
 * to 19 (so that every tail is met), and at the special values. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "linalg/vexp.h"
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
    return tap_done();
}
