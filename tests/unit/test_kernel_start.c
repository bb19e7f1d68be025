/* The length scales' start from the inputs (gpc_kernel_start_scales): every
 * w of a distance term at 1 / the median pair's squared distance in the
 * term's columns, in every per-class copy; the other hyperparameters, and
 * terms without length scales, untouched; nothing set from rows that are
 * too few or all equal. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_matrix.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "tap.h"

/* Three rows: squared distances 1, 4 and 5 over both columns, 0, 4 and 4 in
 * the second alone. */
static gsl_matrix *three_rows(void)
{
    static const double x[] = {0, 0, 1, 0, 0, 2};
    gsl_matrix *X = gsl_matrix_alloc(3, 2);
    memcpy(X->data, x, sizeof x);
    return X;
}

static gpc_kernel *kernel(const char *spec)
{
    gpc_kernel *k;
    if (gpc_kernel_parse(spec, 2, &k) != GPC_OK)
        return NULL;
    size_t np = gpc_kernel_nparams(k);
    double theta[64];
    for (size_t j = 0; j < np; j++)
        theta[j] = 0.25 + 0.01 * (double)j;
    gpc_kernel_set_params(k, theta);
    return k;
}

/* Each hyperparameter of spec after the start: want[j], or NAN for "as
 * before". */
static void check(const char *spec, const double *want, size_t count_set)
{
    gsl_matrix *X = three_rows();
    gpc_kernel *k = kernel(spec);
    size_t np = gpc_kernel_nparams(k), set = gpc_kernel_start_scales(k, X);
    TEST_OK(set == count_set, "%s: %zu hyperparameters set (%zu expected)", spec, set, count_set);
    double worst = 0.0;
    for (size_t j = 0; j < np; j++) {
        double w = isnan(want[j]) ? 0.25 + 0.01 * (double)j : want[j];
        worst = fmax(worst, fabs(gpc_kernel_params(k)[j] - w));
    }
    TEST_CLOSE(worst, 0, 0, 1e-15, "%s: each at its start", spec);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
}

int main(void)
{
    gpc_gsl_quiet();
    double l4 = -log(4.0);
    check("ard", (const double[]){NAN, l4, l4}, 2);
    check("se", (const double[]){NAN, l4}, 1);
    /* the second column alone: pairs 0, 4, 4 */
    check("matern32@2", (const double[]){NAN, l4}, 1);
    /* rq's shape stays; a linear term has no length scale */
    check("rqard+linear", (const double[]){NAN, l4, l4, NAN, NAN}, 2);
    check("se:per-class=3", (const double[]){NAN, l4, NAN, l4, NAN, l4}, 3);
    check("linear+bias", (const double[]){NAN, NAN}, 0);
    /* rows all equal: nothing to scale by */
    gsl_matrix *X = gsl_matrix_calloc(4, 2);
    gpc_kernel *k = kernel("ard");
    TEST_OK(gpc_kernel_start_scales(k, X) == 0 && gpc_kernel_params(k)[1] == 0.25 + 0.01,
            "equal rows set nothing");
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    return tap_done();
}
