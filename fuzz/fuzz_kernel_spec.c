/* Fuzz the kernel-spec parser.  The first byte gives the input dimension
 * (1 to 32, or a power of two from 2^12 to 2^26, or SIZE_MAX), the rest is
 * the spec, whose column names (bare or quoted) are first resolved against
 * a few fixed ones.  A parsed kernel must give back a spec that parses
 * again to the same spec and number of hyperparameters, must evaluate on a
 * small matrix with its gradient contraction (when its gram terms fit
 * three cases, as the tools check),
 * and named after the columns must find every hyperparameter
 * by either of its names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "io/colnames.h"
#include "kernels/kernel.h"

/* Names a spec may use: bare, with a blank, a quote, the spec's own signs,
 * one that is a number, and two that give one word. */
static char *const NAMES[] = {"age", "worst radius", "a\"b", "x+y:z,w-v", "3", "a b", "a_b",
                              NULL};

/* Kernels over more columns are parsed and cloned, not evaluated: naming and
 * evaluating 2^20 columns under the sanitizers took most of the harness's
 * 10 s limit (test_kernel evaluates the widest ARD term). */
#define WIDEST_EVALUATED 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* mostly small, sometimes huge: a dimension read from a damaged file */
    size_t dim = data[0] == 0xff ? SIZE_MAX
                 : data[0] >= 0xf0 ? (size_t)1 << (data[0] - 0xf0 + 12)
                 : (size_t)(1 + data[0] % 32);
    char *given = malloc(size), *spec = NULL;
    memcpy(given, data + 1, size - 1);
    given[size - 1] = '\0';
    gpc_kernel *k;
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    if (gpc_colnames_resolve(given, NAMES, "x.csv", &spec) != GPC_OK) {
        if (spec || gpc_errmsg()[0] == '\0')
            abort(); /* a refusal leaves no spec and says why */
        free(given);
        return 0;
    }
    free(given);
    if (gpc_kernel_parse(spec, dim, &k) == GPC_OK) {
        gpc_kernel *c = gpc_kernel_clone(k);
        if (!c || strcmp(gpc_kernel_spec(c), gpc_kernel_spec(k)) != 0 ||
            gpc_kernel_nparams(c) != gpc_kernel_nparams(k))
            abort(); /* the canonical spec does not give the same kernel back */
        /* (by the library's own linear lookup, so only for a few names) */
        for (size_t j = 0; j < gpc_kernel_nparams(k) && gpc_kernel_nparams(k) <= 2048; j++)
            if (gpc_kernel_param_index(k, gpc_kernel_param_name(k, j)) != (long)j)
                abort(); /* two hyperparameters share a name */
        if (dim <= WIDEST_EVALUATED)
            gpc_kernel_name_columns(k, NAMES);
        for (size_t j = 0; j < gpc_kernel_nparams(k) && gpc_kernel_nparams(k) <= 2048; j++)
            if (gpc_kernel_param_index(k, gpc_kernel_param_label(k, j)) != (long)j)
                abort(); /* a name after a column names two hyperparameters */
        /* evaluated as the tools do, after the width check of gram terms
         * (a gram term reads a column per training case) */
        if (gpc_kernel_check_test(k, 3) == GPC_OK && dim <= WIDEST_EVALUATED) {
            gsl_matrix *X = gsl_matrix_alloc(3, dim), *K = gsl_matrix_alloc(3, 3);
            for (size_t i = 0; i < X->size1 * X->size2; i++)
                X->data[i] = (double)(i % 3);
            gpc_kernel_matrix(k, X, K);
            /* and the gradient contraction, through the same paths as the
             * evidence gradients (every term, sums, products) */
            size_t p = gpc_kernel_nparams(k);
            if (p <= 4096 && gpc_kernel_copies(k) == 1) {
                gsl_vector *u = gsl_vector_alloc(3);
                gsl_matrix *B = gsl_matrix_alloc(3, p), *R = gsl_matrix_alloc(3, 3);
                double *s = malloc(p * sizeof *s);
                gsl_vector_set_all(u, 1.0);
                gsl_matrix_set_identity(R);
                gpc_kernel_grad_contract(k, X, K, u, 0.5, R, -0.5, u, s, B);
                free(s);
                gsl_matrix_free(B);
                gsl_matrix_free(R);
                gsl_vector_free(u);
            }
            gsl_matrix_free(X);
            gsl_matrix_free(K);
        }
        gpc_kernel_free(c);
        gpc_kernel_free(k);
    } else if (gpc_errmsg()[0] == '\0') {
        abort();
    }
    free(spec);
    return 0;
}
