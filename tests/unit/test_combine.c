/* The sum and product rules (combine.h) against their definitions worked
 * out here, binary files' implied complement, products far below the
 * smallest double, and the case the product rule cannot combine. */
#include <math.h>
#include <stdio.h>

#include <gsl/gsl_matrix.h>

#include "base/err.h"
#include "report/combine.h"
#include "tap.h"

static void test_rules(void)
{
    double a[] = {0.7, 0.2, 0.1, 0.1, 0.1, 0.8}, b[] = {0.5, 0.4, 0.1, 0.3, 0.3, 0.4};
    gsl_matrix_view A = gsl_matrix_view_array(a, 2, 3), B = gsl_matrix_view_array(b, 2, 3);
    gsl_matrix *p[2] = {&A.matrix, &B.matrix}, *out = gsl_matrix_alloc(2, 3);
    gpc_combine_rule r;
    TEST_OK(gpc_combine_parse("sum", &r) == GPC_OK && r == GPC_COMBINE_SUM, "parse sum");
    gpc_combine(GPC_COMBINE_SUM, p, 2, out);
    double worst = 0.0;
    for (size_t i = 0; i < 6; i++)
        worst = fmax(worst, fabs(out->data[i] - (a[i] + b[i]) / 2));
    TEST_CLOSE(worst, 0.0, 0.0, 1e-16, "sum: the mean of the probabilities");
    gpc_combine(GPC_COMBINE_PRODUCT, p, 2, out);
    worst = 0.0;
    for (size_t i = 0; i < 2; i++) {
        double z = 0.0;
        for (size_t k = 0; k < 3; k++)
            z += a[3 * i + k] * b[3 * i + k];
        for (size_t k = 0; k < 3; k++)
            worst = fmax(worst, fabs(out->data[3 * i + k] - a[3 * i + k] * b[3 * i + k] / z));
    }
    TEST_CLOSE(worst, 0.0, 0.0, 1e-15, "product: the normalised product");
    TEST_OK(gpc_combine_parse("max", &r) == GPC_EUSAGE, "parse: an unknown rule is a usage "
            "error");
    gsl_matrix_free(out);
}

static void test_binary_and_tiny(void)
{
    /* one column: p(y = +1); the product is p1 p2 / (p1 p2 + (1 - p1)(1 - p2)) */
    double a[] = {0.9, 0.2}, b[] = {0.6, 0.3};
    gsl_matrix_view A = gsl_matrix_view_array(a, 2, 1), B = gsl_matrix_view_array(b, 2, 1);
    gsl_matrix *p[2] = {&A.matrix, &B.matrix}, *out = gsl_matrix_alloc(2, 1);
    gpc_combine(GPC_COMBINE_PRODUCT, p, 2, out);
    double want = 0.9 * 0.6 / (0.9 * 0.6 + 0.1 * 0.4);
    TEST_CLOSE(gsl_matrix_get(out, 0, 0), want, 1e-15, 0.0, "binary: the complement is the "
               "other class");
    gpc_combine(GPC_COMBINE_SUM, p, 2, out);
    TEST_CLOSE(gsl_matrix_get(out, 1, 0), 0.25, 1e-15, 0.0, "binary: the sum rule's mean");
    gsl_matrix_free(out);

    /* 40 classifiers each giving 1e-10, 2e-10 and 4e-10 (scores a caller
     * may not have normalised): every product is below 1e-380, yet their
     * ratios 2^40 and 4^40 decide the answer */
    gsl_matrix *q = gsl_matrix_alloc(1, 3), *ps[40], *o = gsl_matrix_alloc(1, 3);
    gsl_matrix_set(q, 0, 0, 1e-10);
    gsl_matrix_set(q, 0, 1, 2e-10);
    gsl_matrix_set(q, 0, 2, 4e-10);
    for (int j = 0; j < 40; j++)
        ps[j] = q;
    int st = gpc_combine(GPC_COMBINE_PRODUCT, ps, 40, o);
    double zs = 1.0 + pow(2.0, 40) + pow(4.0, 40);
    double worst = fmax(fabs(gsl_matrix_get(o, 0, 0) * zs - 1.0),
                        fmax(fabs(gsl_matrix_get(o, 0, 1) * zs / pow(2.0, 40) - 1.0),
                             fabs(gsl_matrix_get(o, 0, 2) * zs / pow(4.0, 40) - 1.0)));
    /* sums of 40 logs near -900 round at about 1e-13 */
    TEST_OK(st == GPC_OK && worst < 1e-11, "product: computed in logs where every product "
            "underflows (%.6g, %.6g, %.6g; largest relative error %.1e)",
            gsl_matrix_get(o, 0, 0), gsl_matrix_get(o, 0, 1), gsl_matrix_get(o, 0, 2), worst);
    gsl_matrix_set(q, 0, 0, 0.0);
    gsl_matrix *z = gsl_matrix_calloc(1, 3), *pz[2] = {q, z};
    gsl_matrix_set(z, 0, 0, 1.0);
    TEST_OK(gpc_combine(GPC_COMBINE_PRODUCT, pz, 2, o) == GPC_ENUM,
            "product: a case every class of which some classifier rules out is an error");
    gsl_matrix_free(q);
    gsl_matrix_free(z);
    gsl_matrix_free(o);
}

int main(void)
{
    gpc_gsl_quiet();
    test_rules();
    test_binary_and_tiny();
    return tap_done();
}
