/* Variational Bayes multinomial probit (vb.h): with two classes the means
 * are the binary probit Laplace mode (derived in test_two_classes), the
 * bound rises sweep by sweep, its gradient matches central differences, the
 * fixed point satisfies its equations, predictions are probabilities that
 * sum to one and match the two-class closed form, and a fit restored from
 * its state predicts what the fit did. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "base/parallel.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "methods/laplace.h"
#include "methods/vb.h"
#include "problems.h"
#include "tap.h"

static void make_problem(gsl_rng *r, size_t n, size_t d, size_t C, gsl_matrix **X,
                         size_t **cls)
{
    multiclass_problem(r, n, d, C, 0.6, X, cls);
}

/* Two classes: y_1 - y_2 = (f_1 - f_2) + N(0, 2), so with h = (f_1 - f_2)
 * / sqrt 2 ~ GP(0, K) the label likelihood is Phi(h), binary probit.  The
 * VB means maximise sum_i log Phi((m_1i - m_2i) / sqrt 2) - 1/2 sum_c
 * m_c'K^-1 m_c, whose maximiser has m_2 = -m_1 (the prior is symmetric and
 * the likelihood sees only the difference), so h = sqrt 2 m_1 maximises
 * sum log Phi(h) - 1/2 h'K^-1 h: the probit Laplace mode.  The bound is then
 * Psi(mode) - log|I + K| (two classes, each 1/2 log|I + K|). */
static void test_two_classes(gsl_rng *r)
{
    size_t n = 30, d = 2;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, 2, &X, &cls);
    double th[] = {1.0, 0.0, 0.5, -5.0};
    gpc_kernel *k = kernel_at("ard+jitter", d, th);
    gpc_vb *w = gpc_vb_alloc(n, 2, 4, 0);
    double L, g[4];
    int st = gpc_vb_evidence(w, &k, X, cls, &L, g);
    TEST_OK(st == GPC_OK, "C = 2: VB converged (%d sweeps)", w->sweeps);
    gpc_laplace *lp = gpc_laplace_alloc(n, 4, GPC_LIK_PROBIT);
    gsl_vector *y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(y, i, cls[i] == 0 ? 1.0 : -1.0);
    double le, gl[4];
    st = gpc_laplace_evidence(lp, k, X, y, &le, gl);
    TEST_OK(st == GPC_OK, "C = 2: Laplace probit computed");
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double m1 = gsl_vector_get(w->m, i), m2 = gsl_vector_get(w->m, n + i);
        worst = fmax(worst, fabs((m1 - m2) / M_SQRT2 - gsl_vector_get(lp->f, i)));
        worst = fmax(worst, fabs(m1 + m2));
    }
    TEST_CLOSE(worst, 0.0, 0.0, 1e-8, "C = 2: (m_1 - m_2) / sqrt 2 is the probit Laplace mode "
               "and m_2 = -m_1 (largest difference %.1e)", worst);
    /* log|I + K| by its own factorisation */
    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(k, X, A);
    for (size_t i = 0; i < n; i++)
        *gsl_matrix_ptr(A, i, i) += 1.0;
    gsl_linalg_cholesky_decomp1(A);
    double logdet = 0.0;
    for (size_t i = 0; i < n; i++)
        logdet += 2.0 * log(gsl_matrix_get(A, i, i));
    gsl_matrix_free(A);
    TEST_CLOSE(L, lp->psi - logdet, 1e-10, 0.0, "C = 2: bound = Psi(mode) - log|I + K|");
    gsl_vector_free(y);
    gpc_laplace_free(lp);
    gpc_vb_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

/* The bound at each sweep's starting point never falls (plain sweeps from
 * m = 0), for a shared and a per-class kernel. */
static void test_monotone(gsl_rng *r)
{
    size_t n = 40, d = 2, C = 3;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    for (int per = 0; per <= 1; per++) {
        gpc_vb *w = gpc_vb_alloc(n, C, 4, per);
        for (size_t c = 0; c < w->nK; c++) {
            double th[] = {2.0 + 0.3 * (double)c, 0.5, -0.5, -6.0};
            gpc_kernel *k = kernel_at("ard+jitter", d, th);
            gpc_kernel_matrix(k, X, w->K[c]);
            gpc_kernel_free(k);
        }
        gpc_vb_start(w, cls);
        double prev = -INFINITY, worst_drop = 0.0, first = 0.0, last = 0.0;
        for (int s = 0; s < 200; s++) {
            double L = gpc_vb_sweep(w, cls);
            if (s == 0)
                first = L;
            worst_drop = fmax(worst_drop, prev - L);
            prev = last = L;
        }
        TEST_OK(worst_drop <= 1e-12 * fabs(last) && last > first, "%s: the bound never falls "
                "over 200 sweeps (%.6g to %.6g, largest drop %.1e)",
                per ? "per-class" : "shared", first, last, worst_drop);
        /* the extrapolated fit lands on the plain sweeps' fixed point */
        for (int s = 0; s < 5000; s++)
            gpc_vb_sweep(w, cls);
        gpc_vb *x = gpc_vb_alloc(n, C, 4, per);
        for (size_t c = 0; c < w->nK; c++)
            gsl_matrix_memcpy(x->K[c], w->K[c]);
        x->tol = 1e-12;
        int st = gpc_vb_fit(x, cls);
        gsl_vector_sub(x->m, w->m);
        double dm = fmax(gsl_vector_max(x->m), -gsl_vector_min(x->m));
        TEST_OK(st == GPC_OK && dm < 1e-9, "%s: the extrapolated fit (%d sweeps) reaches the "
                "fixed point of 5200 plain sweeps (largest difference in m %.1e)",
                per ? "per-class" : "shared", x->sweeps, dm);
        gpc_vb_free(x);
        gpc_vb_free(w);
    }
    gsl_matrix_free(X);
    free(cls);
}

/* Newton's method (shared kernel): from the start it lands on the plain
 * sweeps' fixed point; at a signal variance where the sweeps crawl (v0 =
 * e^8 on nearly separable classes) it converges where they take thousands
 * of passes, to a point no further sweeps improve. */
static void test_newton(gsl_rng *r)
{
    size_t n = 40, d = 2, C = 3;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th[] = {2.0, 0.5, -0.5, -6.0};
    gpc_kernel *k = kernel_at("ard+jitter", d, th);
    gpc_vb *w = gpc_vb_alloc(n, C, 4, 0), *x = gpc_vb_alloc(n, C, 4, 0);
    gpc_kernel_matrix(k, X, w->K[0]);
    gsl_matrix_memcpy(x->K[0], w->K[0]);
    gpc_vb_start(w, cls);
    for (int s = 0; s < 6000; s++)
        gpc_vb_sweep(w, cls);
    x->tol = 1e-10;
    x->newton_after = 0;
    int st = gpc_vb_fit(x, cls);
    gsl_vector_sub(x->m, w->m);
    double dm = fmax(gsl_vector_max(x->m), -gsl_vector_min(x->m));
    TEST_OK(st == GPC_OK && x->newton_steps > 0 && dm < 1e-9, "Newton (%d steps, %d passes) "
            "reaches the fixed point of 6000 plain sweeps (largest difference in m %.1e)",
            x->newton_steps, x->sweeps, dm);
    gpc_kernel_free(k);

    double big[] = {8.0, 1.0, 1.0, -6.0};
    k = kernel_at("ard+jitter", d, big);
    gpc_vb *y = gpc_vb_alloc(n, C, 4, 0);
    gpc_kernel_matrix(k, X, y->K[0]);
    st = gpc_vb_fit(y, cls);
    double L = y->bound, Lmore = L;
    for (int s = 0; s < 200; s++)
        Lmore = gpc_vb_sweep(y, cls);
    TEST_OK(st == GPC_OK && y->newton_steps > 0 && Lmore - L <= 1e-9 * fabs(L),
            "v0 = e^8: Newton takes over (%d steps, %d passes) and 200 more sweeps raise the "
            "bound %.6f by %.1e", y->newton_steps, y->sweeps, L, Lmore - L);
    gpc_kernel_free(k);
    gpc_vb_free(w);
    gpc_vb_free(x);
    gpc_vb_free(y);
    gsl_matrix_free(X);
    free(cls);
}

/* Newton's curvatures are computed case by case on OpenMP threads from
 * VB_PARALLEL_MIN_WORK = n C up, each case's on one thread with that
 * thread's scratch: one thread and two give the same fit, bit for bit. */
static void test_newton_threads(gsl_rng *r)
{
    size_t C = 3, n = VB_PARALLEL_MIN_WORK / C + 10, d = 2;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th[] = {2.0, 0.5, -0.5, -6.0};
    gpc_kernel *k = kernel_at("ard+jitter", d, th);
    gpc_vb *w[2];
    int threads[2];
    for (int t = 0; t < 2; t++) {
        w[t] = gpc_vb_alloc(n, C, 4, 0); /* gpc_parallel_threads() threads */
        if (t == 0)
            w[t]->nthreads = 1; /* fewer than its scratch was made for */
        threads[t] = w[t]->nthreads;
        w[t]->newton_after = 0;
        gpc_kernel_matrix(k, X, w[t]->K[0]);
        gpc_vb_fit(w[t], cls);
    }
    int same = gsl_vector_equal(w[0]->m, w[1]->m) && w[0]->bound == w[1]->bound;
    TEST_OK(threads[0] == 1 && threads[1] == 2 && n * C >= VB_PARALLEL_MIN_WORK &&
                w[1]->newton_steps > 0 && same,
            "Newton at n C = %zu on 1 and 2 threads (%d steps): the same fit, bit for bit",
            n * C, w[1]->newton_steps);
    for (int t = 0; t < 2; t++)
        gpc_vb_free(w[t]);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

static double bound_at(gsl_matrix *X, size_t *cls, size_t C, int per, gpc_kernel **ks)
{
    gpc_vb *w = gpc_vb_alloc(X->size1, C, gpc_kernel_nparams(ks[0]), per);
    w->tol = 1e-12;
    double L;
    if (gpc_vb_evidence(w, ks, X, cls, &L, NULL) != GPC_OK)
        L = NAN;
    gpc_vb_free(w);
    return L;
}

/* The gradient of the bound against central differences of converged
 * bounds; the fixed point's equations. */
static void test_gradient(gsl_rng *r)
{
    size_t n = 30, d = 2, C = 3;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    for (int per = 0; per <= 1; per++) {
        size_t nK = per ? C : 1, p = 4;
        gpc_kernel *ks[3];
        for (size_t c = 0; c < nK; c++) {
            double th[] = {1.5 - 0.4 * (double)c, 0.3, -0.2 + 0.2 * (double)c, -4.0};
            ks[c] = kernel_at("ard+jitter", d, th);
        }
        gpc_vb *w = gpc_vb_alloc(n, C, p, per);
        w->tol = 1e-12;
        double L, g[12], worst = 0.0, scale = 0.0;
        int st = gpc_vb_evidence(w, ks, X, cls, &L, g);
        TEST_OK(st == GPC_OK, "%s: converged in %d sweeps", per ? "per-class" : "shared",
                w->sweeps);
        for (size_t j = 0; j < nK * p; j++)
            scale = fmax(scale, fabs(g[j]));
        for (size_t k = 0; k < nK; k++)
            for (size_t j = 0; j < p; j++) {
                double th[4], h = 1e-4;
                for (size_t l = 0; l < p; l++)
                    th[l] = gpc_kernel_params(ks[k])[l];
                th[j] += h;
                gpc_kernel_set_params(ks[k], th);
                double Lp = bound_at(X, cls, C, per, ks);
                th[j] -= 2 * h;
                gpc_kernel_set_params(ks[k], th);
                double Lm = bound_at(X, cls, C, per, ks);
                th[j] += h;
                gpc_kernel_set_params(ks[k], th);
                double fd = (Lp - Lm) / (2 * h);
                worst = fmax(worst, fabs(fd - g[k * p + j]));
            }
        TEST_CLOSE(worst / scale, 0.0, 0.0, 1e-6, "%s: gradient = central differences "
                   "(largest difference relative to the largest component %.1e)",
                   per ? "per-class" : "shared", worst / scale);
        /* at the fixed point: K^-1 m = ybar - m, and ybar - m sums to zero over the classes */
        double fix = 0.0, sum0 = 0.0;
        for (size_t i = 0; i < n; i++) {
            double s = 0.0;
            for (size_t c = 0; c < C; c++) {
                double e = gsl_vector_get(w->ybar, c * n + i) - gsl_vector_get(w->m, c * n + i);
                fix = fmax(fix, fabs(gsl_vector_get(w->v, c * n + i) - e));
                s += e;
            }
            sum0 = fmax(sum0, fabs(s));
        }
        TEST_CLOSE(fix, 0.0, 0.0, 1e-10, "%s: K^-1 m = E[y] - m at the fixed point (%.1e)",
                   per ? "per-class" : "shared", fix);
        TEST_CLOSE(sum0, 0.0, 0.0, 1e-12, "%s: E[y] - m sums to zero over the classes (%.1e)",
                   per ? "per-class" : "shared", sum0);
        gpc_vb_free(w);
        for (size_t c = 0; c < nK; c++)
            gpc_kernel_free(ks[c]);
    }
    gsl_matrix_free(X);
    free(cls);
}

/* Predictions: probabilities summing to one; two classes in closed form;
 * a fit restored from its state predicts the same. */
static void test_predict(gsl_rng *r)
{
    size_t n = 30, d = 2, m = 15;
    for (size_t C = 2; C <= 4; C++) {
        gsl_matrix *X, *Xs;
        size_t *cls, *cls_s;
        make_problem(r, n, d, C, &X, &cls);
        make_problem(r, m, d, C, &Xs, &cls_s);
        double th[] = {1.0, 0.0, 0.0, -5.0};
        gpc_kernel *k = kernel_at("ard+jitter", d, th);
        gpc_vb *w = gpc_vb_alloc(n, C, 4, 0), *w2 = gpc_vb_alloc(n, C, 4, 0);
        double L;
        gpc_vb_evidence(w, &k, X, cls, &L, NULL);
        gsl_matrix *Ks = gsl_matrix_alloc(n, m), *mean = gsl_matrix_alloc(m, C),
                   *cov = gsl_matrix_alloc(m, C * C), *mean2 = gsl_matrix_alloc(m, C),
                   *cov2 = gsl_matrix_alloc(m, C * C);
        gsl_vector *kss = gsl_vector_alloc(m);
        gpc_kernel_cross(k, X, Xs, Ks);
        gpc_kernel_diag(k, Xs, kss);
        const gsl_matrix *Kp = Ks;
        const gsl_vector *kp = kss;
        gpc_vb_predict(w, &Kp, &kp, mean, cov);
        gpc_kernel_matrix(k, X, w2->K[0]);
        gpc_vb_set_state(w2, cls, w->ybar_from);
        gpc_vb_predict(w2, &Kp, &kp, mean2, cov2);
        TEST_CLOSE(w2->bound, L, 1e-14, 0.0, "C = %zu: the restored fit has the same bound", C);
        gsl_matrix_sub(mean2, mean);
        gsl_matrix_sub(cov2, cov);
        TEST_OK(gsl_matrix_max(mean2) == 0.0 && gsl_matrix_min(mean2) == 0.0 &&
                    gsl_matrix_max(cov2) == 0.0 && gsl_matrix_min(cov2) == 0.0,
                "C = %zu: the restored fit predicts the same latent moments", C);
        gpc_mprobit_rule *rule = gpc_mprobit_rule_alloc(C);
        double worst_sum = 0.0, worst_cf = 0.0, p[4], nu2[4];
        for (size_t s = 0; s < m; s++) {
            for (size_t c = 0; c < C; c++)
                nu2[c] = 1.0 + gsl_matrix_get(cov, s, c * C + c);
            gpc_mprobit_probs(rule, gsl_matrix_ptr(mean, s, 0), nu2, p);
            double sum = 0.0;
            for (size_t c = 0; c < C; c++)
                sum += p[c];
            worst_sum = fmax(worst_sum, fabs(sum - 1.0));
            if (C == 2) {
                double dm = gsl_matrix_get(mean, s, 0) - gsl_matrix_get(mean, s, 1);
                worst_cf = fmax(worst_cf, fabs(p[0] - gsl_cdf_ugaussian_P(dm /
                                                                          sqrt(nu2[0] + nu2[1]))));
            }
        }
        TEST_CLOSE(worst_sum, 0.0, 0.0, 1e-10, "C = %zu: predictive probabilities sum to one "
                   "(%.1e)", C, worst_sum);
        if (C == 2)
            TEST_CLOSE(worst_cf, 0.0, 0.0, 1e-10, "C = 2: P(class 1) = Phi of the scaled "
                       "difference (%.1e)", worst_cf);
        gpc_mprobit_rule_free(rule);
        gsl_matrix *mats[] = {X, Xs, Ks, mean, cov, mean2, cov2};
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
            gsl_matrix_free(mats[i]);
        gsl_vector_free(kss);
        gpc_vb_free(w);
        gpc_vb_free(w2);
        gpc_kernel_free(k);
        free(cls);
        free(cls_s);
    }
}

/* A composite kernel on the simplex: the bound's gradient, the weights'
 * through their normalisation included, against central differences in
 * the unnormalised log weights. */
static void test_gradient_simplex(gsl_rng *r)
{
    size_t n = 30, d = 2, C = 3, p = 5;
    gsl_matrix *X;
    size_t *cls;
    make_problem(r, n, d, C, &X, &cls);
    double th0[] = {0.4, -0.5, -0.3, 0.2, -4.0};
    gpc_kernel *k = kernel_at("se@1+se@2+jitter:simplex", d, th0);
    gpc_vb *w = gpc_vb_alloc(n, C, p, 0);
    w->tol = 1e-12;
    double L, g[5], worst = 0.0, scale = 0.0;
    int st = gpc_vb_evidence(w, &k, X, cls, &L, g);
    TEST_OK(st == GPC_OK, "simplex: converged in %d sweeps", w->sweeps);
    for (size_t j = 0; j < p; j++)
        scale = fmax(scale, fabs(g[j]));
    for (size_t j = 0; j < p; j++) {
        double th[5], h = 1e-4;
        memcpy(th, th0, sizeof th);
        th[j] += h;
        gpc_kernel_set_params(k, th);
        double Lp = bound_at(X, cls, C, 0, &k);
        th[j] -= 2 * h;
        gpc_kernel_set_params(k, th);
        double Lm = bound_at(X, cls, C, 0, &k);
        worst = fmax(worst, fabs((Lp - Lm) / (2 * h) - g[j]));
    }
    TEST_CLOSE(worst / scale, 0.0, 0.0, 1e-6, "simplex: gradient = central differences "
               "(largest difference relative to the largest component %.1e)", worst / scale);
    TEST_CLOSE(g[0] + g[2], 0.0, 0.0, 1e-12 * scale, "simplex: the bound is flat along the "
               "weights' common scale");
    gpc_vb_free(w);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    free(cls);
}

int main(void)
{
    /* the thread test needs its two threads whatever the load: under the
     * adaptive policy a busy machine leaves one, and 1 and 1 prove nothing */
    setenv("GPC_THREAD_POLICY", "fixed", 1);
    gpc_parallel_init();
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    test_two_classes(r);
    test_monotone(r);
    test_gradient(r);
    test_predict(r);
    test_gradient_simplex(r);
    test_newton(r);
    test_newton_threads(r);
    gsl_rng_free(r);
    return tap_done();
}
