/* The method table: lookup by name, the likelihoods each method takes, its
 * settings, and its fitted state, which must predict exactly as the fit did
 * once handed back to a fresh workspace (that is all a model file keeps). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "err.h"
#include "method.h"
#include "tap.h"

/* n inputs uniform on [-1, 1]^2, labelled by the sign of their sum. */
static void linear_problem(gsl_rng *r, size_t n, gsl_matrix **X, gsl_vector **y)
{
    *X = gsl_matrix_alloc(n, 2);
    *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double a = 2 * gsl_rng_uniform(r) - 1, b = 2 * gsl_rng_uniform(r) - 1;
        gsl_matrix_set(*X, i, 0, a);
        gsl_matrix_set(*X, i, 1, b);
        gsl_vector_set(*y, i, a + b > 0 ? 1 : -1);
    }
}

static void test_lookup(void)
{
    TEST_OK(gpc_method_find("laplace") == &gpc_method_laplace_ops &&
                gpc_method_find("ep") == &gpc_method_ep_ops &&
                gpc_method_find("naive") == &gpc_method_naive_ops,
            "each method is found by its model-file name");
    TEST_OK(gpc_method_find("tap") == NULL && gpc_method_lookup("tap") == &gpc_method_ep_ops,
            "tap is an option synonym of ep, not a model-file name");
    TEST_OK(gpc_method_find("vb") == NULL && gpc_method_lookup("vb") == NULL,
            "an unknown name is not found");
    for (int m = GPC_METHOD_LAPLACE; m <= GPC_METHOD_NAIVE; m++) {
        const gpc_method_ops *ops = gpc_method_get((gpc_method)m);
        gpc_method parsed;
        TEST_OK(strcmp(gpc_method_name((gpc_method)m), ops->name) == 0 &&
                    gpc_method_parse(ops->name, GPC_LIK_PROBIT, &parsed) == GPC_OK &&
                    parsed == (gpc_method)m,
                "%s: name, table entry and parse agree", ops->name);
    }
    gpc_method parsed;
    TEST_OK(gpc_method_parse("laplace", GPC_LIK_STEP, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("ep", GPC_LIK_LOGISTIC, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("naive", GPC_LIK_LOGISTIC, &parsed) == GPC_EUSAGE,
            "a likelihood the method does not take is a usage error");
}

static void test_settings(void)
{
    void *ws = gpc_method_laplace_ops.alloc(3, 0, GPC_LIK_LOGISTIC);
    TEST_OK(gpc_method_laplace_ops.set(ws, GPC_SET_DAMPING, 0.5) == GPC_METHOD_NO_SETTING &&
                gpc_method_laplace_ops.set(ws, GPC_SET_LABEL_NOISE, 0.1) ==
                    GPC_METHOD_NO_SETTING,
            "laplace has no damping and no label noise");
    gpc_method_laplace_ops.free(ws);
    ws = gpc_method_ep_ops.alloc(3, 0, GPC_LIK_STEP);
    TEST_OK(gpc_method_ep_ops.set(ws, GPC_SET_DAMPING, 0.5) == GPC_OK &&
                gpc_method_ep_ops.set(ws, GPC_SET_TOL, 1e-6) == GPC_OK &&
                gpc_method_ep_ops.set(ws, GPC_SET_LABEL_NOISE, 0.1) == GPC_OK &&
                gpc_method_ep_ops.set(ws, GPC_SET_LABEL_NOISE, 0.5) == GPC_EUSAGE,
            "ep takes damping, tolerance and label noise in [0, 1/2)");
    gpc_method_ep_ops.free(ws);
    ws = gpc_method_naive_ops.alloc(3, 0, GPC_LIK_PROBIT);
    TEST_OK(gpc_method_naive_ops.set(ws, GPC_SET_TOL, 1e-6) == GPC_METHOD_NO_SETTING &&
                gpc_method_naive_ops.set(ws, GPC_SET_LABEL_NOISE, -0.1) == GPC_EUSAGE,
            "naive has no tolerance and checks its label noise");
    gpc_method_naive_ops.free(ws);
}

/* Fit, take the state, restore it into a fresh workspace: the predictions
 * and leave-one-out moments must be the same to the last bit. */
static void test_state_round_trip(const gpc_method_ops *ops, gpc_lik lik, gsl_rng *r)
{
    size_t n = 30, ms = 7;
    gsl_matrix *X, *Xs;
    gsl_vector *y, *ys;
    linear_problem(r, n, &X, &y);
    linear_problem(r, ms, &Xs, &ys);
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    double th[2] = {log(2.0), log(0.8)};
    gpc_kernel_set_params(k, th);
    void *fit = ops->alloc(n, gpc_kernel_nparams(k), lik), *back = ops->alloc(n, 0, lik);
    double z;
    int st = ops->evidence(fit, k, X, y, &z, NULL);
    TEST_OK(st == GPC_OK && isfinite(z) == ops->has_evidence && ops->latent == 1,
            "%s: one latent function, fits, %s evidence", ops->name,
            ops->has_evidence ? "with an" : "without");
    gsl_matrix *state = gsl_matrix_alloc(n, ops->state_width);
    ops->state_get(fit, state);
    st = ops->state_set(back, k, X, y, state);
    gsl_matrix *again = gsl_matrix_alloc(n, ops->state_width);
    ops->state_get(back, again);
    TEST_OK(st == GPC_OK && gsl_matrix_equal(state, again), "%s: the state is taken back exactly",
            ops->name);
    gsl_matrix_free(again);

    gsl_matrix *Ks = gsl_matrix_alloc(n, ms), *Ks2 = gsl_matrix_alloc(n, ms);
    gsl_vector *kss = gsl_vector_alloc(ms);
    gsl_matrix *m1 = gsl_matrix_alloc(ms, 1), *v1 = gsl_matrix_alloc(ms, 1);
    gsl_matrix *m2 = gsl_matrix_alloc(ms, 1), *v2 = gsl_matrix_alloc(ms, 1);
    gpc_kernel_cross(k, X, Xs, Ks);
    gsl_matrix_memcpy(Ks2, Ks);
    gpc_kernel_diag(k, Xs, kss);
    ops->state_set(fit, k, X, y, state); /* the fit's own, ready to predict */
    ops->predict(fit, Ks, kss, m1, v1);
    ops->predict(back, Ks2, kss, m2, v2);
    TEST_OK(gsl_matrix_equal(m1, m2) && gsl_matrix_equal(v1, v2),
            "%s: the restored state predicts exactly as the fit", ops->name);
    double p;
    ops->prob(lik, 0.0, gsl_matrix_ptr(m2, 0, 0), gsl_matrix_ptr(v2, 0, 0), &p);
    TEST_OK(p > 0.0 && p < 1.0, "%s: a probability in (0, 1)", ops->name);

    gsl_matrix *lm = gsl_matrix_alloc(n, 1), *lv = gsl_matrix_alloc(n, 1);
    st = ops->loo(back, y, lm, lv);
    int finite = st == GPC_OK;
    for (size_t i = 0; i < n; i++)
        finite &= isfinite(gsl_matrix_get(lm, i, 0)) && gsl_matrix_get(lv, i, 0) > 0.0;
    TEST_OK(finite, "%s: leave-one-out moments are finite with positive variances", ops->name);

    gsl_matrix_free(lm);
    gsl_matrix_free(lv);
    gsl_matrix_free(m1);
    gsl_matrix_free(v1);
    gsl_matrix_free(m2);
    gsl_matrix_free(v2);
    gsl_vector_free(kss);
    gsl_matrix_free(Ks);
    gsl_matrix_free(Ks2);
    gsl_matrix_free(state);
    ops->free(fit);
    ops->free(back);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_matrix_free(Xs);
    gsl_vector_free(y);
    gsl_vector_free(ys);
}

int main(void)
{
    gpc_gsl_quiet();
    gpc_verbosity = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    test_lookup();
    test_settings();
    test_state_round_trip(&gpc_method_laplace_ops, GPC_LIK_LOGISTIC, r);
    test_state_round_trip(&gpc_method_ep_ops, GPC_LIK_PROBIT, r);
    test_state_round_trip(&gpc_method_naive_ops, GPC_LIK_STEP, r);
    gsl_rng_free(r);
    return tap_done();
}
