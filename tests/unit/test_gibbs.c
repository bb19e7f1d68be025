/* The multinomial probit Gibbs sampler (gibbs.h): one case of two classes
 * against its closed-form posterior mean, and Geweke's joint-distribution
 * test (2004) on a tiny problem: forward draws of (theta, f, labels) from
 * the prior and the likelihood, against the successive-conditional chain
 * that alternates labels | f with a sweep of the sampler, must agree in the
 * means of the latent functions and a hyperparameter (and their squares). */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "io/matio.h"
#include "kernels/kernel.h"
#include "liks/mprobit.h"
#include "methods/vb.h"
#include "problems.h"
#include "sampling/gibbs.h"
#include "tap.h"

/* Mean and standard error of x[0..m) by batch means (batches of b). */
static void batch_mean(const double *x, size_t m, size_t b, double *mean, double *se)
{
    size_t nb = m / b;
    double s = 0.0, ss = 0.0;
    for (size_t k = 0; k < nb; k++) {
        double bm = 0.0;
        for (size_t i = k * b; i < (k + 1) * b; i++)
            bm += x[i];
        bm /= (double)b;
        s += bm;
        ss += bm * bm;
    }
    *mean = s / (double)nb;
    *se = sqrt(fmax(ss / (double)nb - *mean * *mean, 0.0) / (double)(nb - 1));
}

/* One case, two classes, fixed theta: f ~ N(0, v I), and the label is
 * class 0.  With z = f_0 - f_1 ~ N(0, 2v) and the label's probability
 * Phi(z / sqrt 2) = P(z + e > 0), e ~ N(0, 2): E[z | label] = 2v /
 * sqrt(2v + 2) * sqrt(2 / pi). */
static void test_one_case(gsl_rng *r)
{
    gsl_matrix *X = gsl_matrix_calloc(1, 1);
    double th[] = {log(3.0), 0.0};
    gpc_kernel *k = kernel_at("se", 1, th);
    gpc_gibbs *w = gpc_gibbs_alloc(X, 2, &k, 1);
    w->sample_theta = 0;
    size_t cls[1] = {0}, m = 200000;
    double *z = malloc(m * sizeof *z), mean, se;
    int st = gpc_gibbs_start(w, th, cls, r);
    for (size_t s = 0; s < m && st == GPC_OK; s++) {
        st = gpc_gibbs_sweep(w, cls, r);
        z[s] = gsl_vector_get(w->f, 0) - gsl_vector_get(w->f, 1);
    }
    TEST_OK(st == GPC_OK, "one case: %zu sweeps", m);
    batch_mean(z, m, 1000, &mean, &se);
    double v = 3.0, want = 2.0 * v / sqrt(2.0 * v + 2.0) * sqrt(2.0 / M_PI);
    TEST_OK(fabs(mean - want) < 4.0 * se, "one case: E[f_0 - f_1 | label 0] = %.4f +- %.4f, "
            "closed form %.4f", mean, se, want);
    free(z);
    gpc_gibbs_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
}

#define NSTAT 4

/* f_11, its square, log_v0 and its square. */
static void statistics(const gpc_gibbs *w, double *g)
{
    double f = gsl_vector_get(w->f, 0), t = w->theta[0];
    g[0] = f;
    g[1] = f * f;
    g[2] = t;
    g[3] = t * t;
}

/* With one kernel per class (per_class) the hyperparameters are six. */
static void test_geweke(gsl_rng *r, int per_class)
{
    size_t n = 4, d = 1, C = 3, m = 40000, nK = per_class ? C : 1;
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    for (size_t i = 0; i < n; i++)
        gsl_matrix_set(X, i, 0, -1.0 + 0.7 * (double)i);
    double th[6] = {0.0};
    gpc_kernel *k[3];
    for (size_t c = 0; c < nK; c++)
        k[c] = kernel_at("se", d, th);
    gpc_gibbs *w = gpc_gibbs_alloc(X, C, k, nK);
    w->prior_mean = 0.0;
    w->prior_sd = 0.5;
    w->step = 0.4;
    size_t cls[4];
    double *fw[NSTAT], *sc[NSTAT], g[NSTAT];
    for (int j = 0; j < NSTAT; j++) {
        fw[j] = malloc(m * sizeof **fw);
        sc[j] = malloc(m * sizeof **sc);
    }
    int st = GPC_OK;
    /* forward: theta from the prior, f from the GP prior, labels from f */
    for (size_t s = 0; s < m && st == GPC_OK; s++) {
        for (size_t j = 0; j < 2 * nK; j++)
            th[j] = w->prior_mean + w->prior_sd * gsl_ran_gaussian(r, 1.0);
        st = gpc_gibbs_set(w, th, NULL);
        gpc_gibbs_prior_f(w, r);
        gpc_gibbs_forward_labels(w, cls, r);
        statistics(w, g);
        for (int j = 0; j < NSTAT; j++)
            fw[j][s] = g[j];
    }
    /* successive conditional: labels | f, then a sweep given the labels */
    for (size_t s = 0; s < m && st == GPC_OK; s++) {
        gpc_gibbs_forward_labels(w, cls, r);
        st = gpc_gibbs_sweep(w, cls, r);
        statistics(w, g);
        for (int j = 0; j < NSTAT; j++)
            sc[j][s] = g[j];
    }
    const char *kind = per_class ? "per-class" : "shared";
    TEST_OK(st == GPC_OK, "Geweke, %s: %zu forward draws and %zu successive-conditional "
            "sweeps (%lu of %lu proposals accepted)", kind, m, m, w->accepted, w->proposed);
    const char *names[NSTAT] = {"f_11", "f_11^2", "log_v0", "log_v0^2"};
    for (int j = 0; j < NSTAT; j++) {
        double m1, s1, m2, s2;
        batch_mean(fw[j], m, 1, &m1, &s1);
        batch_mean(sc[j], m, 400, &m2, &s2);
        double zs = (m1 - m2) / sqrt(s1 * s1 + s2 * s2);
        TEST_OK(fabs(zs) < 4.0, "Geweke, %s: E[%s] forward %.4f +- %.4f, successive "
                "conditional %.4f +- %.4f (z = %.2f)", kind, names[j], m1, s1, m2, s2, zs);
    }
    for (int j = 0; j < NSTAT; j++) {
        free(fw[j]);
        free(sc[j]);
    }
    gpc_gibbs_free(w);
    for (size_t c = 0; c < nK; c++)
        gpc_kernel_free(k[c]);
    gsl_matrix_free(X);
}

/* A run stored as (theta, y) after each iteration, each iteration seeded
 * by its number, resumes exactly: the second half rerun from the state
 * stored at its start gives the same bits. */
static void test_resume(gsl_rng *r)
{
    size_t n = 12, d = 2, C = 3, half = 15;
    gsl_matrix *X;
    size_t *cls;
    multiclass_problem(r, n, d, C, 0.5, &X, &cls);
    double th[] = {0.5, -0.5};
    gpc_kernel *k1 = kernel_at("se", d, th), *k2 = kernel_at("se", d, th);
    gpc_gibbs *a = gpc_gibbs_alloc(X, C, &k1, 1), *b = gpc_gibbs_alloc(X, C, &k2, 1);
    gsl_rng *it = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_vector *y_mid = gsl_vector_alloc(C * n);
    double th_mid[2];
    gsl_rng_set(it, 1000);
    int st = gpc_gibbs_start(a, th, cls, it);
    for (size_t s = 1; s <= 2 * half && st == GPC_OK; s++) {
        gsl_rng_set(it, s);
        st = gpc_gibbs_iterate(a, cls, it);
        if (s == half) {
            gsl_vector_memcpy(y_mid, a->y);
            th_mid[0] = a->theta[0];
            th_mid[1] = a->theta[1];
        }
    }
    if (st == GPC_OK)
        st = gpc_gibbs_resume(b, th_mid, y_mid);
    for (size_t s = half + 1; s <= 2 * half && st == GPC_OK; s++) {
        gsl_rng_set(it, s);
        st = gpc_gibbs_iterate(b, cls, it);
    }
    int same = st == GPC_OK && a->theta[0] == b->theta[0] && a->theta[1] == b->theta[1];
    for (size_t i = 0; i < C * n && same; i++)
        same = gsl_vector_get(a->y, i) == gsl_vector_get(b->y, i) &&
               gsl_vector_get(a->f, i) == gsl_vector_get(b->f, i);
    TEST_OK(same && a->accepted > b->accepted && b->accepted > 0, "resume: %zu iterations "
            "rerun from the stored (theta, y) give the same bits (%lu and %lu proposals "
            "accepted)", half, a->accepted, b->accepted);
    gsl_vector_free(y_mid);
    gsl_rng_free(it);
    gpc_gibbs_free(a);
    gpc_gibbs_free(b);
    gpc_kernel_free(k1);
    gpc_kernel_free(k2);
    gsl_matrix_free(X);
    free(cls);
}

/* Iris (data/iris, standardised; odd rows for training, even for testing)
 * at fixed hyperparameters: the Gibbs sampler's predictive probabilities,
 * each sweep's y averaged through the predictive given y, against
 * variational Bayes's.  They must agree to within the spread of the
 * seed's Iris table (predictive likelihood sd 1.27 for VB, 1.40 for
 * Gibbs over its splits) and on nearly every predicted class. */
static void predict_given(gpc_vb *v, const size_t *cls, const gsl_vector *ybar_from,
                          const gsl_matrix *Ks, const gsl_vector *kss, gpc_mprobit_rule *rule,
                          gsl_matrix *P)
{
    size_t m = Ks->size2, C = v->C;
    gsl_matrix *mean = gsl_matrix_alloc(m, C), *cov = gsl_matrix_alloc(m, C * C);
    gpc_vb_set_state(v, cls, ybar_from);
    gpc_vb_predict(v, &Ks, &kss, mean, cov);
    for (size_t s = 0; s < m; s++) {
        double mu[3], nu2[3];
        for (size_t c = 0; c < C; c++) {
            mu[c] = gsl_matrix_get(mean, s, c);
            nu2[c] = 1.0 + gsl_matrix_get(cov, s, c * C + c);
        }
        gpc_mprobit_probs(rule, mu, nu2, P->data + s * P->tda);
    }
    gsl_matrix_free(mean);
    gsl_matrix_free(cov);
}

static void test_iris_against_vb(gsl_rng *r)
{
    gsl_matrix *A, *Y;
    if (!TEST_OK(gpc_matrix_read("data/iris/X.txt", &A, NULL) == GPC_OK &&
                     gpc_matrix_read("data/iris/y.txt", &Y, NULL) == GPC_OK,
                 "iris: data/iris read"))
        return;
    size_t N = A->size1, d = A->size2, n = (N + 1) / 2, m = N / 2, C = 3;
    for (size_t j = 0; j < d; j++) { /* standardise with the training rows' moments */
        double s = 0.0, ss = 0.0;
        for (size_t i = 0; i < N; i += 2)
            s += gsl_matrix_get(A, i, j);
        s /= (double)n;
        for (size_t i = 0; i < N; i += 2)
            ss += pow(gsl_matrix_get(A, i, j) - s, 2);
        double sd = sqrt(ss / (double)(n - 1));
        for (size_t i = 0; i < N; i++)
            gsl_matrix_set(A, i, j, (gsl_matrix_get(A, i, j) - s) / sd);
    }
    gsl_matrix *X = gsl_matrix_alloc(n, d), *Xs = gsl_matrix_alloc(m, d);
    size_t *cls = malloc(n * sizeof *cls), *tcls = malloc(m * sizeof *tcls);
    for (size_t i = 0; i < N; i++) {
        gsl_vector_view row = gsl_matrix_row(A, i);
        gsl_matrix_set_row(i % 2 ? Xs : X, i / 2, &row.vector);
        (i % 2 ? tcls : cls)[i / 2] = (size_t)gsl_matrix_get(Y, i, 0);
    }
    double th[] = {1.0, -1.0};
    gpc_kernel *k = kernel_at("se", d, th);
    gsl_matrix *Ks = gsl_matrix_alloc(n, m), *Pvb = gsl_matrix_alloc(m, C),
               *Pg = gsl_matrix_calloc(m, C), *Pone = gsl_matrix_alloc(m, C);
    gsl_vector *kss = gsl_vector_alloc(m);
    gpc_kernel_cross(k, X, Xs, Ks);
    gpc_kernel_diag(k, Xs, kss);
    gpc_mprobit_rule *rule = gpc_mprobit_rule_alloc(C);

    gpc_vb *v = gpc_vb_alloc(n, C, 2, 0);
    double L;
    int st = gpc_vb_evidence(v, &k, X, cls, &L, NULL);
    gsl_vector *yb = gsl_vector_alloc(C * n);
    gsl_vector_memcpy(yb, v->ybar_from);
    predict_given(v, cls, yb, Ks, kss, rule, Pvb);

    gpc_gibbs *w = gpc_gibbs_alloc(X, C, &k, 1);
    w->sample_theta = 0;
    st = st ? st : gpc_gibbs_start(w, th, cls, r);
    size_t burn = 100, keep = 1000;
    for (size_t s = 0; s < burn + keep && st == GPC_OK; s++) {
        st = gpc_gibbs_sweep(w, cls, r);
        if (s < burn)
            continue;
        predict_given(v, cls, w->y, Ks, kss, rule, Pone);
        gsl_matrix_scale(Pone, 1.0 / (double)keep);
        gsl_matrix_add(Pg, Pone);
    }
    TEST_OK(st == GPC_OK, "iris: VB fit and %zu Gibbs sweeps", burn + keep);
    double plv = 0.0, plg = 0.0, worst = 0.0;
    size_t differ = 0;
    for (size_t s = 0; s < m; s++) {
        plv += log(gsl_matrix_get(Pvb, s, tcls[s]));
        plg += log(gsl_matrix_get(Pg, s, tcls[s]));
        size_t av = 0, ag = 0;
        for (size_t c = 0; c < C; c++) {
            worst = fmax(worst, fabs(gsl_matrix_get(Pvb, s, c) - gsl_matrix_get(Pg, s, c)));
            av = gsl_matrix_get(Pvb, s, c) > gsl_matrix_get(Pvb, s, av) ? c : av;
            ag = gsl_matrix_get(Pg, s, c) > gsl_matrix_get(Pg, s, ag) ? c : ag;
        }
        differ += av != ag;
    }
    TEST_CLOSE(plg - plv, 0.0, 0.0, 1.27, "iris: predictive likelihood, Gibbs %.3f and VB %.3f, "
               "within the seed's spread (largest probability difference %.3f)", plg, plv, worst);
    TEST_OK(differ <= 1, "iris: Gibbs and VB predict the same class for all but %zu of %zu test "
            "cases", differ, m);
    gpc_vb_free(v);
    gpc_gibbs_free(w);
    gpc_mprobit_rule_free(rule);
    gpc_kernel_free(k);
    gsl_matrix *mats[] = {A, Y, X, Xs, Ks, Pvb, Pg, Pone};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        gsl_matrix_free(mats[i]);
    gsl_vector_free(kss);
    gsl_vector_free(yb);
    free(cls);
    free(tcls);
}

/* The sampler's stated size against what its alloc takes from the heap
 * (glibc's count): never less but for 64 kB of small objects, since it is
 * checked against the memory before the sampler is allocated; saturated
 * where n * n * C does not fit in size_t. */
static void test_workspace(void)
{
    size_t n = 300;
    gsl_matrix *X = gsl_matrix_calloc(n, 1);
    double th[] = {0.0, 0.0};
    gpc_kernel *k[3];
    for (size_t c = 0; c < 3; c++)
        k[c] = kernel_at("se", 1, th);
    for (size_t nK = 1; nK <= 3; nK += 2) {
        size_t before = mallinfo2().uordblks + mallinfo2().hblkhd;
        gpc_gibbs *w = gpc_gibbs_alloc(X, 3, k, nK);
        size_t used = mallinfo2().uordblks + mallinfo2().hblkhd - before;
        size_t stated = gpc_gibbs_workspace(n, 3, nK);
        gpc_gibbs_free(w);
        if (before == 0)
            TEST_OK(1, "# skip: the heap's use is not known here");
        else
            TEST_OK(stated + 65536 >= used && stated <= used + used / 10,
                    "%zu kernels: states %zu bytes, takes %zu", nK, stated, used);
    }
    size_t big = SIZE_MAX >> 63 ? (size_t)1 << 32 : (size_t)1 << 16;
    TEST_OK(gpc_gibbs_workspace(big, 3, 3) == SIZE_MAX, "a size past size_t saturates");
    for (size_t c = 0; c < 3; c++)
        gpc_kernel_free(k[c]);
    gsl_matrix_free(X);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    test_workspace();
    test_one_case(r);
    test_geweke(r, 0);
    test_geweke(r, 1);
    test_resume(r);
    test_iris_against_vb(r);
    gsl_rng_free(r);
    return tap_done();
}
