/* The method table: lookup by name, the likelihoods each method takes, its
 * settings, and its fitted state, which must predict exactly as the fit did
 * once handed back to a fresh workspace (that is all a model file keeps). */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "base/alloc.h"
#include "base/err.h"
#include "methods/method.h"
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
    TEST_OK(gpc_method_find("laplace", GPC_LIK_LOGISTIC) == &gpc_method_laplace_ops &&
                gpc_method_find("laplace", GPC_LIK_SOFTMAX) == &gpc_method_softmax_ops &&
                gpc_method_find("ep", GPC_LIK_PROBIT) == &gpc_method_ep_ops &&
                gpc_method_find("naive", GPC_LIK_STEP) == &gpc_method_naive_ops,
            "each method is found by its model-file name and likelihood");
    TEST_OK(gpc_method_find("tap", GPC_LIK_PROBIT) == NULL &&
                gpc_method_lookup("tap") == &gpc_method_ep_ops && !gpc_method_known("tap"),
            "tap is an option synonym of ep, not a model-file name");
    TEST_OK(gpc_method_find("gibbs", GPC_LIK_PROBIT) == NULL &&
                gpc_method_lookup("gibbs") == NULL && !gpc_method_known("gibbs") &&
                gpc_method_known("laplace"),
            "an unknown name is not found");
    TEST_OK(gpc_method_find("vb", GPC_LIK_MPROBIT) == &gpc_method_vb_ops &&
                gpc_method_lookup("vb") == &gpc_method_vb_ops && gpc_method_known("vb"),
            "vb is found by its name with the multinomial probit likelihood");
    gpc_method nested;
    TEST_OK(gpc_method_find("ep", GPC_LIK_MPROBIT) == &gpc_method_nested_ep_ops &&
                gpc_method_parse("ep", GPC_LIK_MPROBIT, &nested) == GPC_OK &&
                nested == GPC_METHOD_NESTED_EP &&
                gpc_method_parse("tap", GPC_LIK_MPROBIT, &nested) == GPC_OK &&
                nested == GPC_METHOD_NESTED_EP,
            "ep (and tap) with the multinomial probit likelihood is nested EP");
    static const gpc_lik takes[] = {GPC_LIK_PROBIT, GPC_LIK_PROBIT, GPC_LIK_PROBIT,
                                    GPC_LIK_SOFTMAX};
    for (int m = GPC_METHOD_LAPLACE; m <= GPC_METHOD_SOFTMAX; m++) {
        const gpc_method_ops *ops = gpc_method_get((gpc_method)m);
        gpc_method parsed;
        TEST_OK(strcmp(gpc_method_name((gpc_method)m), ops->name) == 0 &&
                    gpc_method_parse(ops->name, takes[m], &parsed) == GPC_OK &&
                    parsed == (gpc_method)m,
                "%s (%s): name, table entry and parse agree", ops->name,
                gpc_lik_name(takes[m]));
    }
    gpc_method parsed;
    TEST_OK(gpc_method_parse("laplace", GPC_LIK_STEP, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("ep", GPC_LIK_LOGISTIC, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("ep", GPC_LIK_SOFTMAX, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("naive", GPC_LIK_LOGISTIC, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("vb", GPC_LIK_SOFTMAX, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("laplace", GPC_LIK_MPROBIT, &parsed) == GPC_EUSAGE &&
                gpc_method_parse("naive", GPC_LIK_MPROBIT, &parsed) == GPC_EUSAGE,
            "a likelihood the method does not take is a usage error");
}

static void test_settings(void)
{
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    void *ws = gpc_method_laplace_ops.alloc(3, 2, k, 0, GPC_LIK_LOGISTIC);
    TEST_OK(gpc_method_laplace_ops.set(ws, GPC_SET_DAMPING, 0.5) == GPC_METHOD_NO_SETTING &&
                gpc_method_laplace_ops.set(ws, GPC_SET_LABEL_NOISE, 0.1) ==
                    GPC_METHOD_NO_SETTING,
            "laplace has no damping and no label noise");
    gpc_method_laplace_ops.free(ws);
    ws = gpc_method_ep_ops.alloc(3, 2, k, 0, GPC_LIK_STEP);
    TEST_OK(gpc_method_ep_ops.set(ws, GPC_SET_DAMPING, 0.5) == GPC_OK &&
                gpc_method_ep_ops.set(ws, GPC_SET_TOL, 1e-6) == GPC_OK &&
                gpc_method_ep_ops.set(ws, GPC_SET_LABEL_NOISE, 0.1) == GPC_OK &&
                gpc_method_ep_ops.set(ws, GPC_SET_LABEL_NOISE, 0.5) == GPC_EUSAGE,
            "ep takes damping, tolerance and label noise in [0, 1/2)");
    gpc_method_ep_ops.free(ws);
    ws = gpc_method_naive_ops.alloc(3, 2, k, 0, GPC_LIK_PROBIT);
    TEST_OK(gpc_method_naive_ops.set(ws, GPC_SET_TOL, 1e-6) == GPC_METHOD_NO_SETTING &&
                gpc_method_naive_ops.set(ws, GPC_SET_LABEL_NOISE, -0.1) == GPC_EUSAGE,
            "naive has no tolerance and checks its label noise");
    gpc_method_naive_ops.free(ws);
    gpc_kernel_free(k);
}

/* Labels as the method takes them: the linear problem's -1/+1 for a binary
 * method, else the class of a + b in C equal bands over [-2, 2]. */
static void class_labels(const gpc_method_ops *ops, const gsl_matrix *X, size_t C, gsl_vector *y)
{
    for (size_t i = 0; !ops->latent && i < X->size1; i++) {
        double s = gsl_matrix_get(X, i, 0) + gsl_matrix_get(X, i, 1);
        double c = floor((s + 2.0) / 4.0 * (double)C);
        gsl_vector_set(y, i, fmin(fmax(c, 0.0), (double)C - 1));
    }
}

/* Fit, take the state, restore it into a fresh workspace: the predictions
 * and leave-one-out moments must be the same to the last bit. */
static void test_state_round_trip(const gpc_method_ops *ops, gpc_lik lik, size_t C, gsl_rng *r)
{
    size_t n = 30, ms = 7, L = ops->latent ? 1 : C, P = ops->latent ? 1 : C;
    gsl_matrix *X, *Xs;
    gsl_vector *y, *ys;
    linear_problem(r, n, &X, &y);
    linear_problem(r, ms, &Xs, &ys);
    class_labels(ops, X, C, y);
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    double th[2] = {log(2.0), log(0.8)};
    gpc_kernel_set_params(k, th);
    void *fit = ops->alloc(n, C, k, 1, lik), *back = ops->alloc(n, C, k, 0, lik);
    double z;
    int st = ops->evidence(fit, k, X, y, &z, NULL);
    TEST_OK(st == GPC_OK && isfinite(z) == ops->has_evidence, "%s (%s): fits, %s evidence (%s)",
            ops->name, gpc_lik_name(lik), ops->has_evidence ? "with an" : "without",
            st == GPC_OK ? "ok" : gpc_errmsg());
    gsl_matrix *state = gsl_matrix_alloc(n, ops->state_width * L);
    ops->state_get(fit, state);
    st = ops->state_set(back, k, X, y, state);
    gsl_matrix *again = gsl_matrix_alloc(n, ops->state_width * L);
    ops->state_get(back, again);
    TEST_OK(st == GPC_OK && gsl_matrix_equal(state, again), "%s (%s): the state is taken back "
            "exactly", ops->name, gpc_lik_name(lik));
    gsl_matrix_free(again);

    gsl_matrix *m1 = gsl_matrix_alloc(ms, L), *v1 = gsl_matrix_alloc(ms, L * L);
    gsl_matrix *m2 = gsl_matrix_alloc(ms, L), *v2 = gsl_matrix_alloc(ms, L * L);
    ops->state_set(fit, k, X, y, state); /* the fit's own, ready to predict */
    st = ops->predict(fit, k, X, Xs, m1, v1);
    st |= ops->predict(back, k, X, Xs, m2, v2);
    TEST_OK(st == GPC_OK && gsl_matrix_equal(m1, m2) && gsl_matrix_equal(v1, v2),
            "%s (%s): the restored state predicts exactly as the fit", ops->name,
            gpc_lik_name(lik));
    gsl_matrix *p = gsl_matrix_alloc(ms, P), *pl = gsl_matrix_alloc(ms, P);
    st = ops->prob(back, lik, 0.0, m2, v2, 0, p);
    st |= ops->prob(back, lik, 0.0, m2, v2, 1, pl);
    int inside = st == GPC_OK;
    for (size_t i = 0; i < ms; i++) {
        double sum = 0.0;
        for (size_t c = 0; c < P; c++) {
            inside &= gsl_matrix_get(p, i, c) > 0.0 && gsl_matrix_get(p, i, c) < 1.0 &&
                      gsl_matrix_get(pl, i, c) >= 0.0 && gsl_matrix_get(pl, i, c) <= 1.0;
            sum += gsl_matrix_get(p, i, c);
        }
        inside &= P == 1 || fabs(sum - 1.0) < 1e-12;
    }
    TEST_OK(inside, "%s (%s): %s in (0, 1) (plug-in: [0, 1])%s", ops->name, gpc_lik_name(lik),
            P == 1 ? "a probability" : "class probabilities", P == 1 ? "" : ", summing to 1");

    if (ops->latent) {
        gsl_matrix *lm = gsl_matrix_alloc(n, 1), *lv = gsl_matrix_alloc(n, 1);
        st = ops->loo(back, y, lm, lv);
        int finite = st == GPC_OK;
        for (size_t i = 0; i < n; i++)
            finite &= isfinite(gsl_matrix_get(lm, i, 0)) && gsl_matrix_get(lv, i, 0) > 0.0;
        TEST_OK(finite, "%s: leave-one-out moments are finite with positive variances",
                ops->name);
        gsl_matrix_free(lm);
        gsl_matrix_free(lv);
    }
    gsl_matrix_free(p);
    gsl_matrix_free(pl);
    gsl_matrix_free(m1);
    gsl_matrix_free(v1);
    gsl_matrix_free(m2);
    gsl_matrix_free(v2);
    gsl_matrix_free(state);
    ops->free(fit);
    ops->free(back);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_matrix_free(Xs);
    gsl_vector_free(y);
    gsl_vector_free(ys);
}

/* A one-vs-rest entry states its binary method's properties as constants:
 * they must be the binary method's. */
static void test_ovr_properties(void)
{
    const gpc_method_ops *pairs[][2] = {{&gpc_method_laplace_ops, &gpc_method_laplace_ovr_ops},
                                        {&gpc_method_ep_ops, &gpc_method_ep_ovr_ops},
                                        {&gpc_method_naive_ops, &gpc_method_naive_ovr_ops}};
    for (size_t i = 0; i < 3; i++) {
        const gpc_method_ops *b = pairs[i][0], *o = pairs[i][1];
        gpc_method ovr;
        char name[64];
        snprintf(name, sizeof name, "%s-ovr", b->name);
        TEST_OK(!strcmp(o->name, name) && !strcmp(o->state_columns, b->state_columns) &&
                    o->state_width == b->state_width && o->has_evidence == b->has_evidence &&
                    o->label_noise == b->label_noise && !strcmp(o->default_lik, b->default_lik) &&
                    o->latent == 0 && gpc_method_ovr((gpc_method)i, &ovr) == GPC_OK &&
                    gpc_method_get(ovr) == o,
                "%s: the one-vs-rest entry has the binary method's properties", o->name);
    }
    gpc_method ovr;
    TEST_OK(gpc_method_ovr(GPC_METHOD_SOFTMAX, &ovr) == GPC_EUSAGE,
            "one-vs-rest over a multiclass method is a usage error");
}

/* Bytes the heap holds now (glibc's count; 0 where another allocator, such
 * as AddressSanitizer's, keeps its own). */
static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* A method's stated workspace against what its alloc and a fit with a
 * gradient take from the heap: never less but for the 64 kB of small
 * objects it leaves out (structures, kernels, quadrature rules, the
 * allocator's headers), since it is what is checked against the memory
 * before anything is allocated; and not much more (what its fits may add
 * later, such as Newton's factor for variational Bayes). */
static void test_workspace_measured(const gpc_method_ops *ops, gpc_lik lik, const char *spec,
                                    size_t C, gsl_rng *r)
{
    size_t n = 300;
    gsl_matrix *X;
    gsl_vector *y;
    linear_problem(r, n, &X, &y);
    class_labels(ops, X, C, y);
    gpc_kernel *k;
    gpc_kernel_parse(spec, 2, &k);
    double *g = calloc(gpc_kernel_nparams(k), sizeof *g), z;
    int grad = ops->has_evidence;
    size_t before = heap_in_use();
    void *ws = ops->alloc(n, C, k, grad, lik);
    int st = ops->evidence(ws, k, X, y, &z, grad ? g : NULL);
    size_t used = heap_in_use() - before, stated = ops->workspace(n, C, k, grad);
    ops->free(ws);
    if (before == 0)
        TEST_OK(1, "# skip: %s: the heap's use is not known here", ops->title);
    else
        TEST_OK(st == GPC_OK && stated + 65536 >= used && stated <= used + used / 2,
                "%s (%s, %zu classes): states %zu bytes, takes %zu", ops->title, spec, C, stated,
                used);
    free(g);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
}

/* The sizes themselves: exact for a small softmax problem, saturated where
 * n * n * C does not fit in size_t, and refused before allocating. */
static void test_workspace_sizes(void)
{
    gpc_kernel *k, *pc;
    gpc_kernel_parse("se", 2, &k);
    gpc_kernel_parse("se:per-class=3", 2, &pc);
    /* (1 + 3 + 1) 10 x 10 matrices, 13 vectors of 30, 8 of 10, Bg 10 x 3 x 2,
     * the labels' 10 indices; the gradient: (3 + 2) matrices, 40 indices */
    TEST_OK(gpc_method_softmax_ops.workspace(10, 3, k, 0) == 8320,
            "multiclass Laplace, 10 cases of 3 classes: 8320 bytes (%zu)",
            gpc_method_softmax_ops.workspace(10, 3, k, 0));
    TEST_OK(gpc_method_softmax_ops.workspace(10, 3, k, 1) == 8320 + 4000 + 320,
            "and 12640 with the gradient's (%zu)", gpc_method_softmax_ops.workspace(10, 3, k, 1));
    TEST_OK(gpc_method_softmax_ops.workspace(10, 3, pc, 0) == 8320 + 1600,
            "per-class kernels: two more matrices (%zu)",
            gpc_method_softmax_ops.workspace(10, 3, pc, 0));
    const gpc_method_ops *all[] = {&gpc_method_laplace_ops, &gpc_method_ep_ops,
                                   &gpc_method_naive_ops, &gpc_method_softmax_ops,
                                   &gpc_method_laplace_ovr_ops, &gpc_method_ep_ovr_ops,
                                   &gpc_method_naive_ovr_ops, &gpc_method_vb_ops};
    size_t n32 = SIZE_MAX >> 63 ? (size_t)1 << 32 : (size_t)1 << 16;
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        size_t C = all[i]->latent ? 2 : 3;
        TEST_OK(all[i]->workspace(n32, C, k, 1) == SIZE_MAX &&
                    all[i]->workspace(n32 / 2, 1000, pc, 1) == SIZE_MAX,
                "%s: a size past size_t saturates, never wraps", all[i]->title);
        TEST_OK(gpc_method_check_memory(all[i], 30, C, k, 1) == GPC_OK,
                "%s: 30 cases fit in memory", all[i]->title);
    }
    int st = gpc_method_check_memory(&gpc_method_softmax_ops, 1000000, 3, k, 1);
    const char *head = "the workspace of multiclass Laplace for 1000000 cases of 3 classes would "
                       "take 80 TB, more than ";
    const char *tail = "; use fewer cases (a random subset of them), fewer classes, or a machine "
                       "with more memory";
    const char *msg = gpc_errmsg();
    TEST_OK(st == GPC_EINPUT && !strncmp(msg, head, strlen(head)) && strlen(msg) > strlen(tail) &&
                !strcmp(msg + strlen(msg) - strlen(tail), tail),
            "a million cases of 3 classes are refused with the sizes (%s)", msg);
    st = gpc_method_check_memory(&gpc_method_ep_ops, 10000000, 2, k, 0);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "the workspace of EP for 10000000 cases "
                                       "would take 2400 TB") &&
                strstr(gpc_errmsg(), "; use fewer cases (a random subset of them) or a machine"),
            "a binary method's too (%s)", gpc_errmsg());
    gpc_kernel_free(k);
    gpc_kernel_free(pc);
}

int main(void)
{
    gpc_gsl_quiet();
    gpc_verbosity = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    test_lookup();
    test_settings();
    test_state_round_trip(&gpc_method_laplace_ops, GPC_LIK_LOGISTIC, 2, r);
    test_state_round_trip(&gpc_method_ep_ops, GPC_LIK_PROBIT, 2, r);
    test_state_round_trip(&gpc_method_naive_ops, GPC_LIK_STEP, 2, r);
    test_state_round_trip(&gpc_method_softmax_ops, GPC_LIK_SOFTMAX, 3, r);
    test_state_round_trip(&gpc_method_softmax_ops, GPC_LIK_SOFTMAX, 2, r);
    test_state_round_trip(&gpc_method_laplace_ovr_ops, GPC_LIK_LOGISTIC, 3, r);
    test_state_round_trip(&gpc_method_ep_ovr_ops, GPC_LIK_PROBIT, 3, r);
    test_ovr_properties();
    test_workspace_sizes();
    test_workspace_measured(&gpc_method_laplace_ops, GPC_LIK_LOGISTIC, "se", 2, r);
    test_workspace_measured(&gpc_method_ep_ops, GPC_LIK_PROBIT, "se", 2, r);
    test_workspace_measured(&gpc_method_naive_ops, GPC_LIK_STEP, "se", 2, r);
    test_workspace_measured(&gpc_method_softmax_ops, GPC_LIK_SOFTMAX, "se", 3, r);
    test_workspace_measured(&gpc_method_softmax_ops, GPC_LIK_SOFTMAX, "se:per-class=3", 3, r);
    test_workspace_measured(&gpc_method_vb_ops, GPC_LIK_MPROBIT, "se", 3, r);
    test_workspace_measured(&gpc_method_vb_ops, GPC_LIK_MPROBIT, "se:per-class=3", 3, r);
    test_workspace_measured(&gpc_method_nested_ep_ops, GPC_LIK_MPROBIT, "se", 3, r);
    test_workspace_measured(&gpc_method_nested_ep_ops, GPC_LIK_MPROBIT, "se:per-class=3", 3, r);
    test_workspace_measured(&gpc_method_laplace_ovr_ops, GPC_LIK_LOGISTIC, "se", 3, r);
    test_workspace_measured(&gpc_method_ep_ovr_ops, GPC_LIK_PROBIT, "se", 3, r);
    test_workspace_measured(&gpc_method_naive_ovr_ops, GPC_LIK_STEP, "se", 3, r);
    gsl_rng_free(r);
    return tap_done();
}
