#include "report/combine.h"

#include <math.h>
#include <string.h>

#include "base/err.h"

int gpc_combine_parse(const char *name, gpc_combine_rule *rule)
{
    if (name && !strcmp(name, "sum"))
        *rule = GPC_COMBINE_SUM;
    else if (name && !strcmp(name, "product"))
        *rule = GPC_COMBINE_PRODUCT;
    else
        return gpc_fail(GPC_EUSAGE, "unknown rule '%s' (use sum or product)", name ? name : "");
    return GPC_OK;
}

/* Probability of class k of case i in p: a binary matrix's second class is
 * the complement of its one column. */
static double prob(const gsl_matrix *p, size_t i, size_t k, int binary)
{
    return binary ? (k ? gsl_matrix_get(p, i, 0) : 1.0 - gsl_matrix_get(p, i, 0))
                  : gsl_matrix_get(p, i, k);
}

int gpc_combine(gpc_combine_rule rule, gsl_matrix *const *p, size_t J, gsl_matrix *out)
{
    size_t m = out->size1, C = out->size2, binary = C == 1, K = binary ? 2 : C;
    double lq[K > 1 ? K : 2];
    for (size_t i = 0; i < m; i++) {
        double mx = -INFINITY, z = 0.0;
        for (size_t k = 0; k < K; k++) {
            double s = 0.0;
            for (size_t j = 0; j < J; j++)
                s += rule == GPC_COMBINE_SUM ? prob(p[j], i, k, binary) / (double)J
                                              : log(prob(p[j], i, k, binary));
            lq[k] = s;
            if (rule == GPC_COMBINE_PRODUCT)
                mx = fmax(mx, s);
        }
        if (rule == GPC_COMBINE_PRODUCT) {
            if (!isfinite(mx))
                return gpc_fail(GPC_ENUM, "case %zu: under the product rule every class has "
                                "probability 0 from some classifier", i + 1);
            for (size_t k = 0; k < K; k++)
                z += exp(lq[k] - mx);
            for (size_t k = 0; k < K; k++)
                lq[k] = exp(lq[k] - mx) / z;
        }
        for (size_t c = 0; c < C; c++)
            gsl_matrix_set(out, i, c, lq[binary ? 1 : c]);
    }
    return GPC_OK;
}
