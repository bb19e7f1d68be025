/* Leave-one-out predictions of fitted models: from the cavities against
 * explicit refits without each case.  Where theory says they coincide (a
 * case independent of all others, whose cavity is the prior whatever the
 * method) they must agree to rounding; elsewhere the cavity is an
 * approximation, and the difference is reported and bounded.  Cavities
 * are also checked against their definitions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "methods/ep.h"
#include "methods/model.h"
#include "tap.h"

/* n cases in 2-D, labels from a smooth rule with a few flipped, and one more
 * case (the last) so far away that the kernel ties it to no other. */
static gpc_model *make_model(gsl_rng *r, size_t n, const char *method, gpc_lik lik)
{
    gpc_model *m = calloc(1, sizeof *m);
    m->X = gsl_matrix_alloc(n + 1, 2);
    m->y = gsl_vector_alloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        double a = gsl_rng_uniform(r) * 4 - 2, b = gsl_rng_uniform(r) * 4 - 2;
        gsl_matrix_set(m->X, i, 0, a);
        gsl_matrix_set(m->X, i, 1, b);
        double s = sin(a) + 0.5 * b > 0 ? 1 : -1;
        gsl_vector_set(m->y, i, gsl_rng_uniform(r) < 0.1 ? -s : s);
    }
    gsl_matrix_set(m->X, n, 0, 1e3);
    gsl_matrix_set(m->X, n, 1, 1e3);
    gsl_vector_set(m->y, n, 1);
    gpc_kernel_parse("se", 2, &m->kernel);
    strcpy(m->method, method);
    strcpy(m->fit, "none");
    m->lik = lik;
    m->nclasses = 2;
    size_t N = n + 1;
    m->state = gsl_matrix_alloc(N, !strcmp(method, "ep") ? 2 : 1);
    double th[2] = {log(4.0), log(1.5)};
    if (gpc_model_refit(m, th) != GPC_OK)
        TEST_OK(0, "%s: fit failed: %s", method, gpc_errmsg());
    return m;
}

static void compare(const char *method, gpc_lik lik, double tol_p, gsl_rng *r)
{
    size_t n = 40, N = n + 1;
    gpc_model *m = make_model(r, n, method, lik);
    gpc_prediction *cav = gpc_prediction_alloc(m, N), *ex = gpc_prediction_alloc(m, N);
    int st = gpc_model_loo(m, cav);
    st |= gpc_model_loo_exact(m, ex);
    TEST_OK(st == GPC_OK, "%s (%s): both leave-one-out predictions succeed", method,
            gpc_lik_name(lik));
    /* the independent case: its cavity is the prior N(0, k(x, x)) */
    TEST_CLOSE(gsl_matrix_get(cav->mean, n, 0), 0.0, 0, 1e-12, "%s: independent case, cavity mean 0",
               method);
    TEST_CLOSE(gsl_matrix_get(cav->cov, n, 0), 4.0, 1e-10, 0, "%s: independent case, cavity variance "
               "the prior's", method);
    TEST_CLOSE(gsl_matrix_get(cav->prob, n, 0), gsl_matrix_get(ex->prob, n, 0), 1e-10, 1e-12,
               "%s: independent case, cavity and refit agree", method);
    double worst = 0;
    size_t disagree = 0, wrong_c = 0, wrong_e = 0;
    for (size_t i = 0; i < n; i++) {
        double a = gsl_matrix_get(cav->prob, i, 0), b = gsl_matrix_get(ex->prob, i, 0), y = gsl_vector_get(m->y, i);
        worst = fmax(worst, fabs(a - b));
        disagree += (a >= 0.5) != (b >= 0.5);
        wrong_c += (a >= 0.5) != (y > 0);
        wrong_e += (b >= 0.5) != (y > 0);
    }
    TEST_OK(worst <= tol_p, "%s (%s): cavity and refit p differ by at most %.3g (bound %g); "
            "%zu of %zu labels differ; leave-one-out errors %zu (cavity) vs %zu (refits)",
            method, gpc_lik_name(lik), worst, tol_p, disagree, n, wrong_c, wrong_e);
    /* the leave-one-out error, what the estimate is for: within 1 of 40 */
    TEST_OK(disagree <= 1 && (wrong_c > wrong_e ? wrong_c - wrong_e : wrong_e - wrong_c) <= 1,
            "%s (%s): cavity and refit labels differ for %zu, errors %zu vs %zu (at most 1)",
            method, gpc_lik_name(lik), disagree, wrong_c, wrong_e);
    int ok = 1;
    for (size_t i = 0; i < N; i++)
        ok &= gsl_matrix_get(cav->prob, i, 0) >= 0 && gsl_matrix_get(cav->prob, i, 0) <= 1 &&
              gsl_matrix_get(cav->cov, i, 0) > 0;
    TEST_OK(ok, "%s: cavity probabilities in [0, 1], variances positive", method);
    gpc_prediction_free(cav);
    gpc_prediction_free(ex);
    gpc_model_free(m);
}

/* rho_i = K_iR (K_RR + W_R^-1)^-1 K_Ri = K_iR S (I + S K_RR S)^-1 S K_Ri
 * (S = W_R^1/2, R every case but i) by its own Cholesky factor: the
 * response to removing case i of the other cases' fields seen by case i,
 * per x_i (see meanfield.h), here one case at a time in O(n^3) each. */
static double rho_direct(const gsl_matrix *K, const gsl_vector *w, size_t i)
{
    size_t n = K->size1, k = 0, idx[n];
    for (size_t a = 0; a < n; a++)
        if (a != i)
            idx[k++] = a;
    gsl_matrix *B = gsl_matrix_alloc(n - 1, n - 1);
    gsl_vector *b = gsl_vector_alloc(n - 1), *z = gsl_vector_alloc(n - 1);
    for (size_t p = 0; p < n - 1; p++) {
        double sp = sqrt(gsl_vector_get(w, idx[p]));
        for (size_t q = 0; q < n - 1; q++)
            gsl_matrix_set(B, p, q, (p == q) + sp * gsl_matrix_get(K, idx[p], idx[q]) *
                                                   sqrt(gsl_vector_get(w, idx[q])));
        gsl_vector_set(b, p, sp * gsl_matrix_get(K, idx[p], i));
    }
    gsl_linalg_cholesky_decomp1(B);
    gsl_linalg_cholesky_solve(B, b, z);
    double rho;
    gsl_blas_ddot(b, z, &rho);
    gsl_matrix_free(B);
    gsl_vector_free(b);
    gsl_vector_free(z);
    return rho;
}

/* Naive mean field's leave-one-out mean is the solution's cavity mean
 * m_i = sum_{j != i} K_ij x_j plus the linear response rho_i x_i, with the
 * sites' precisions w_j = 1 / v_j - 1 / K_jj at the tilted moments, and its
 * variance the prior's; EP's is the marginal with the site divided out. */
static void test_definitions(gsl_rng *r)
{
    gpc_model *m = make_model(r, 20, "naive", GPC_LIK_STEP);
    size_t N = 21;
    gsl_matrix *K = gsl_matrix_alloc(N, N);
    gsl_vector *w = gsl_vector_alloc(N), *cm = gsl_vector_alloc(N);
    gpc_kernel_matrix(m->kernel, m->X, K);
    gpc_prediction *cav = gpc_prediction_alloc(m, N);
    gpc_model_loo(m, cav);
    gpc_ep_label_noise step = {0.0, 0.0};
    for (size_t i = 0; i < N; i++) {
        double s = 0, lz, mh, vh, kii = gsl_matrix_get(K, i, i);
        for (size_t j = 0; j < N; j++)
            if (j != i)
                s += gsl_matrix_get(K, i, j) * gsl_matrix_get(m->state, j, 0);
        gpc_ep_label_noise_moments(&step, gsl_vector_get(m->y, i), s, kii, &lz, &mh, &vh);
        gsl_vector_set(cm, i, s);
        gsl_vector_set(w, i, 1 / vh - 1 / kii);
    }
    double worst = 0, moved = 0;
    for (size_t i = 0; i < N; i++) {
        double xi = gsl_matrix_get(m->state, i, 0);
        double want = gsl_vector_get(cm, i) + rho_direct(K, w, i) * xi;
        worst = fmax(worst, fabs(want - gsl_matrix_get(cav->mean, i, 0)));
        worst = fmax(worst, fabs(gsl_matrix_get(cav->cov, i, 0) - gsl_matrix_get(K, i, i)));
        moved = fmax(moved, fabs(want - gsl_vector_get(cm, i)));
    }
    TEST_CLOSE(worst, 0, 0, 1e-10, "naive: leave-one-out mean m_i + rho_i x_i, variance K_ii "
               "(the response moves the means by up to %.3g)", moved);
    gsl_matrix_free(K);
    gsl_vector_free(w);
    gsl_vector_free(cm);
    gpc_model_free(m);
    K = gsl_matrix_alloc(N, N);

    m = make_model(r, 20, "ep", GPC_LIK_PROBIT);
    gpc_prediction *post = gpc_prediction_alloc(m, N);
    gpc_model_loo(m, cav);
    gpc_model_predict(m, m->X, post); /* no jitter in this kernel: the marginals */
    worst = 0;
    for (size_t i = 0; i < N; i++) {
        /* the marginal is the cavity times the site: precisions and means add */
        double t = gsl_matrix_get(m->state, i, 0), nu = gsl_matrix_get(m->state, i, 1);
        double prec = 1 / gsl_matrix_get(cav->cov, i, 0) + t;
        double pm = gsl_matrix_get(cav->mean, i, 0) / gsl_matrix_get(cav->cov, i, 0) + nu;
        worst = fmax(worst, fabs(1 / prec - gsl_matrix_get(post->cov, i, 0)));
        worst = fmax(worst, fabs(pm / prec - gsl_matrix_get(post->mean, i, 0)));
    }
    TEST_CLOSE(worst, 0, 0, 1e-10, "ep: cavity times site gives the posterior marginal");
    gpc_prediction_free(post);
    gpc_prediction_free(cav);
    gsl_matrix_free(K);
    gpc_model_free(m);
}

int main(void)
{
    gpc_gsl_quiet();
    gpc_verbosity = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    /* EP's and Laplace's cavities are close to the refits (the other sites
     * barely move; the step likelihood's sites move most); naive mean
     * field's takes the other cases' response to losing one to first order
     * (the solution's own cavity, which ignores it, was off by up to 0.33
     * in p here, 17 errors against 8 by refits).  With the step likelihood
     * a mislabelled case has a large x_i, removing it is no small change,
     * and the first-order response falls short for the three such cases
     * here (refit means 3.6, 1.3, -2.6 against 0.56, 0.95, -0.82 by linear
     * response): their p differ by up to 0.36, but every label agrees */
    compare("ep", GPC_LIK_PROBIT, 0.05, r);
    compare("ep", GPC_LIK_STEP, 0.15, r);
    compare("laplace", GPC_LIK_LOGISTIC, 0.02, r);
    compare("naive", GPC_LIK_PROBIT, 0.06, r);
    compare("naive", GPC_LIK_STEP, 0.4, r);
    test_definitions(r);
    gsl_rng_free(r);
    return tap_done();
}
