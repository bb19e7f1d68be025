/* The multinomial probit of Girolami & Rogers as a shard likelihood
 * (sparse/mprobit-lik.h):
 * - a case's lambda is log P(class) - 1/2 sum s2, with log P against the
 *   adaptive rule of the predictions, g against differences of lambda in mu
 *   and h against differences in s2; a label that is no class index makes
 *   the shard fail, naming the row;
 * - the bound's gradients (q, hyperparameters, Z) with this likelihood
 *   against differences of the whole bound;
 * - one natural step of size 1 from any q is the closed-form update of
 *   q(F) given q(Y): S^-1 = I + L^-1 Kzx Kxz L'^-1 and S^-1 m = L^-1 Kzx
 *   ybar, ybar = E[y] at q's marginals; a second step keeps S and moves m
 *   only through the new ybar;
 * - it is the dense method when nothing is sparse: with Z = X, a shared
 *   kernel and all rows, q iterated to its optimum by natural steps of 1
 *   gives -M vb's bound, hyperparameter gradient, latent moments and class
 *   probabilities, for C = 2, 3 and 5. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "liks/mprobit.h"
#include "methods/method.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/mprobit-lik.h"
#include "sparse/natgrad.h"
#include "sparse/shard.h"
#include "problems.h"
#include "random_matrix.h"
#include "sparse_bound.h"
#include "tap.h"

#define CMAX 5

/* A problem of C classes with the multinomial probit, its context mp
 * given a rule for C classes. */
static sparse_problem problem(gpc_shard_mprobit *mp, size_t C)
{
    mp->rule = gpc_mprobit_rule_alloc(C);
    return (sparse_problem){.C = C, .lik = gpc_shard_mprobit_lik, .ctx = mp};
}

/* The rule of pr's likelihood. */
static gpc_mprobit_rule *rule(const sparse_problem *pr)
{
    return ((const gpc_shard_mprobit *)pr->ctx)->rule;
}

static void problem_free(sparse_problem *pr)
{
    gpc_mprobit_rule_free(rule(pr));
    sparse_problem_free(pr);
}

/* ---- one case ----------------------------------------------------------- */

/* Fourth-order central difference of lambda in x[j]. */
static double lambda_diff(const gpc_shard_mprobit *mp, size_t C, double y, double *mu,
                          double *s2, double *x)
{
    static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
    double x0 = *x, h = 1e-3, d = 0.0, g[CMAX], hh[CMAX];
    for (int i = 0; i < 4; i++) {
        *x = x0 + step[i] * h;
        d += coef[i] * gpc_shard_mprobit_lik(mp, C, y, mu, s2, g, hh) / (12 * h);
    }
    *x = x0;
    return d;
}

static void check_case(gsl_rng *r, size_t C)
{
    gpc_shard_mprobit mp = {gpc_mprobit_rule_alloc(C)};
    double mu[CMAX], s2[CMAX], g[CMAX], h[CMAX], nu2[CMAX], p[CMAX];
    double wv = 0.0, wg = 0.0, wh = 0.0, sum_g = 0.0;
    for (int trial = 0; trial < 4; trial++) {
        double ssum = 0.0;
        for (size_t c = 0; c < C; c++) {
            mu[c] = 4.0 * gsl_rng_uniform(r) - 2.0;
            s2[c] = 2.0 * gsl_rng_uniform(r);
            nu2[c] = 1.0;
            ssum += s2[c];
        }
        gpc_mprobit_probs(mp.rule, mu, nu2, p);
        for (size_t t = 0; t < C; t++) {
            double l = gpc_shard_mprobit_lik(&mp, C, (double)t, mu, s2, g, h);
            wv = fmax(wv, fabs(l - (log(p[t]) - 0.5 * ssum)) / fabs(l));
            double sg = 0.0;
            for (size_t c = 0; c < C; c++) {
                double dm = lambda_diff(&mp, C, (double)t, mu, s2, mu + c),
                       ds = lambda_diff(&mp, C, (double)t, mu, s2, s2 + c);
                wg = fmax(wg, fabs(dm - g[c]));
                wh = fmax(wh, fabs(ds - h[c]));
                sg += g[c];
            }
            sum_g = fmax(sum_g, fabs(sg));
        }
    }
    TEST_CLOSE(wv, 0, 0, 1e-9, "C = %zu: lambda = log P(class) - 1/2 sum s2, log P against the "
               "predictions' adaptive rule (largest relative difference %.1e)", C, wv);
    TEST_CLOSE(wg, 0, 0, 1e-8, "C = %zu: g = E[y | cone] - mu against differences of lambda in "
               "mu (largest difference %.1e)", C, wg);
    TEST_CLOSE(wh, 0, 0, 1e-9, "C = %zu: h = -1/2 against differences of lambda in s2", C);
    TEST_CLOSE(sum_g, 0, 0, 1e-9, "C = %zu: g sums to 0 over the classes (P depends on "
               "differences only)", C);
    gpc_mprobit_rule_free(mp.rule);
}

/* A label that is no class index: NaN from the likelihood, and the shard
 * refuses the rows, naming the row. */
static void check_bad_label(gsl_rng *r)
{
    size_t C = 3, m = 3, n = 4;
    gpc_shard_mprobit mp = {gpc_mprobit_rule_alloc(C)};
    double mu[3] = {0.1, -0.2, 0.3}, s2[3] = {0.5, 0.5, 0.5}, g[3], h[3];
    const double bad[] = {3.0, -1.0, 0.5, NAN};
    int all_nan = 1;
    for (size_t j = 0; j < 4; j++)
        all_nan &= isnan(gpc_shard_mprobit_lik(&mp, C, bad[j], mu, s2, g, h));
    TEST_OK(all_nan, "labels 3, -1, 0.5 and NaN for 3 classes give NaN");
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    gsl_matrix *Z = random_matrix(r, m, 2), *X = random_matrix(r, n, 2),
               *L = gsl_matrix_alloc(m, m), *M = gsl_matrix_calloc(C, m), *S[3];
    for (size_t c = 0; c < C; c++) {
        S[c] = gsl_matrix_alloc(m, m);
        gsl_matrix_set_identity(S[c]);
    }
    double y[4] = {0, 1, 3, 2}, jitter;
    gpc_inducing_factor(k, Z, L, &jitter);
    gpc_shard_stats *st = gpc_shard_stats_alloc(m, C, 2, gpc_kernel_nparams(k));
    int rc = gpc_shard_add_rows(k, Z, &L, M, S, X, y, 10, gpc_shard_mprobit_lik, &mp, st);
    TEST_OK(rc == GPC_ENUM && strstr(gpc_errmsg(), "row 13") && st->rows == 0,
            "a label out of range fails the shard, naming the row, adding nothing: %s",
            gpc_errmsg());
    gpc_shard_stats_free(st);
    for (size_t c = 0; c < C; c++)
        gsl_matrix_free(S[c]);
    gsl_matrix_free(Z);
    gsl_matrix_free(X);
    gsl_matrix_free(L);
    gsl_matrix_free(M);
    gpc_kernel_free(k);
    gpc_mprobit_rule_free(mp.rule);
}

/* ---- the bound's gradients ---------------------------------------------- */

static void check_gradients(gsl_rng *r, const char *spec, size_t C)
{
    size_t m = 4, n = 7;
    gpc_shard_mprobit mp;
    sparse_problem pr = problem(&mp, C);
    sparse_problem_draw(&pr, r, spec, -0.6, m, n);
    pr.M = random_matrix(r, C, m);
    pr.y = uniform_labels(r, n, C);
    for (size_t c = 0; c < C; c++)
        pr.S[c] = random_spd(r, m);
    sparse_grad_errors e = sparse_gradient_errors(&pr);
    TEST_OK(isfinite(e.bound), "%s, C = %zu: the bound is %.6g", spec, C, e.bound);
    TEST_CLOSE(e.M, 0, 0, 1e-7, "%s, C = %zu: d bound / d m_c against differences (%.1e)", spec,
               C, e.M);
    TEST_CLOSE(e.S, 0, 0, 1e-7, "%s, C = %zu: d bound / d S_c against differences (%.1e)", spec,
               C, e.S);
    TEST_CLOSE(e.theta, 0, 0, 1e-7, "%s, C = %zu: the hyperparameter gradient against "
               "differences (%.1e)", spec, C, e.theta);
    TEST_CLOSE(e.Z, 0, 0, 1e-7, "%s, C = %zu: the gradient in Z against differences (%.1e)",
               spec, C, e.Z);
    problem_free(&pr);
}

/* ---- the natural step is the closed-form update ------------------------- */

/* The closed-form update of q(v_c) given q(Y) at pr's current q, worked out
 * apart from the shard and the bound: with B = L^-1 Kzx (m x n), the
 * precision is I + B B' for every class and S^-1 m_c = B ybar_c, ybar the
 * cases' E[y | cone] at their marginals under q. */
static void closed_form(sparse_problem *pr, gsl_matrix *Mnew, gsl_matrix *Snew)
{
    size_t m = pr->Z->size1, n = pr->X->size1, C = pr->C;
    gsl_matrix *L = gsl_matrix_alloc(m, m), *B = gsl_matrix_alloc(m, n),
               *Ybar = gsl_matrix_alloc(C, n), *A = gsl_matrix_alloc(m, m);
    gsl_vector *kxx = gsl_vector_alloc(n);
    double jitter;
    gpc_inducing_factor(pr->k, pr->Z, L, &jitter);
    gpc_kernel_cross(pr->k, pr->Z, pr->X, B);
    gpc_kernel_diag(pr->k, pr->X, kxx);
    for (size_t i = 0; i < n; i++) {
        double mu[CMAX], s2, yb[CMAX];
        gsl_vector_view ki = gsl_matrix_column(B, i);
        for (size_t c = 0; c < C; c++) {
            gsl_vector_const_view mc = gsl_matrix_const_row(pr->M, c);
            gpc_inducing_marginal(L, &ki.vector, gsl_vector_get(kxx, i), &mc.vector, pr->S[c],
                                  mu + c, &s2);
        }
        gpc_mprobit_case(rule(pr), (size_t)pr->y[i], mu, yb);
        for (size_t c = 0; c < C; c++)
            gsl_matrix_set(Ybar, c, i, yb[c]);
    }
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, L, B);
    gsl_matrix_set_identity(A);
    gsl_blas_dsyrk(CblasLower, CblasNoTrans, 1.0, B, 1.0, A);
    gsl_linalg_cholesky_decomp1(A);
    for (size_t c = 0; c < C; c++) {
        gsl_vector_view yc = gsl_matrix_row(Ybar, c), mc = gsl_matrix_row(Mnew, c);
        gsl_blas_dgemv(CblasNoTrans, 1.0, B, &yc.vector, 0.0, &mc.vector);
        gsl_linalg_cholesky_svx(A, &mc.vector);
    }
    gsl_linalg_cholesky_invert(A);
    gsl_matrix_memcpy(Snew, A);
    gsl_matrix_free(L);
    gsl_matrix_free(B);
    gsl_matrix_free(Ybar);
    gsl_matrix_free(A);
    gsl_vector_free(kxx);
}

/* The largest difference of pr's q from (M, S) (S the same for every
 * class), relative to 1 + the entry's size. */
static double q_distance(const sparse_problem *pr, const gsl_matrix *M, const gsl_matrix *S)
{
    size_t m = M->size2;
    double w = 0.0;
    for (size_t c = 0; c < pr->C; c++)
        for (size_t i = 0; i < m; i++) {
            double a = gsl_matrix_get(M, c, i);
            w = fmax(w, fabs(gsl_matrix_get(pr->M, c, i) - a) / (1 + fabs(a)));
            for (size_t j = 0; j < m; j++) {
                double s = gsl_matrix_get(S, i, j);
                w = fmax(w, fabs(gsl_matrix_get(pr->S[c], i, j) - s) / (1 + fabs(s)));
            }
        }
    return w;
}

static void check_closed_form(gsl_rng *r, size_t m, size_t C)
{
    size_t n = 15;
    gpc_shard_mprobit mp;
    sparse_problem pr = problem(&mp, C);
    gpc_kernel_parse("matern52ard", 2, &pr.k);
    double th[3] = {0.3, 0.5, -0.2};
    gpc_kernel_set_params(pr.k, th);
    pr.X = random_matrix(r, n, 2);
    pr.Z = gsl_matrix_alloc(m, 2);
    gsl_matrix_view top = gsl_matrix_submatrix(pr.X, 0, 0, m, 2);
    gsl_matrix_memcpy(pr.Z, &top.matrix); /* Z = the first m training inputs */
    pr.M = random_matrix(r, C, m);
    pr.y = uniform_labels(r, n, C);
    for (size_t c = 0; c < C; c++)
        pr.S[c] = random_spd(r, m);
    gsl_matrix *M1 = gsl_matrix_alloc(C, m), *S1 = gsl_matrix_alloc(m, m),
               *M2 = gsl_matrix_alloc(C, m), *S2 = gsl_matrix_alloc(m, m);
    closed_form(&pr, M1, S1);
    int rc = sparse_natural_step(&pr, 1.0, NULL);
    double d1 = q_distance(&pr, M1, S1);
    TEST_OK(rc == GPC_OK, "m = %zu, C = %zu: a natural step of 1 from a random q", m, C);
    TEST_CLOSE(d1, 0, 0, 1e-10, "m = %zu, C = %zu: it is the closed-form update of q(F) given "
               "q(Y) (largest difference %.1e)", m, C, d1);
    closed_form(&pr, M2, S2);
    rc = sparse_natural_step(&pr, 1.0, NULL);
    double dS = 0.0, d2 = q_distance(&pr, M2, S2);
    for (size_t c = 0; c < C; c++)
        for (size_t i = 0; i < m * m; i++)
            dS = fmax(dS, fabs(pr.S[c]->data[i] - S1->data[i]));
    TEST_CLOSE(dS, 0, 0, 1e-12, "m = %zu, C = %zu: a second step keeps S (%.1e)", m, C, dS);
    TEST_CLOSE(d2, 0, 0, 1e-10, "m = %zu, C = %zu: and moves m to the update from the new "
               "E[y] (largest difference %.1e)", m, C, d2);
    gsl_matrix_free(M1);
    gsl_matrix_free(S1);
    gsl_matrix_free(M2);
    gsl_matrix_free(S2);
    problem_free(&pr);
}

/* ---- nothing sparse: the dense -M vb ------------------------------------ */

#define DENSE_N 20
#define TEST_M 6
/* The steps are -M vb's plain sweeps, which contract by a constant factor
 * (about 0.87 a step for C = 5 here) down to a floor of rounding near 2e-12
 * in m (the step inverts S and the new precision afresh). */
#define MOVE_TOL 1e-11
#define STEPS_MAX 2000

/* The sparse model's class probabilities at the rows of Xs (TEST_M x C)
 * and its latent means and variances there: with a = L^-1 k, mu = a'm_c and
 * s2 = (kxx - a'a) + a'S_c a per class, the probability with the latent variance added to the auxiliary
 * values' unit one. */
static void sparse_predict(sparse_problem *pr, const gsl_matrix *Xs, gsl_matrix *mean,
                           gsl_matrix *var, gsl_matrix *prob)
{
    size_t m = pr->Z->size1, C = pr->C, ns = Xs->size1;
    gsl_matrix *L = gsl_matrix_alloc(m, m), *Kzs = gsl_matrix_alloc(m, ns);
    gsl_vector *kss = gsl_vector_alloc(ns);
    double jitter;
    gpc_inducing_factor(pr->k, pr->Z, L, &jitter);
    gpc_kernel_cross(pr->k, pr->Z, Xs, Kzs);
    gpc_kernel_diag(pr->k, Xs, kss);
    for (size_t c = 0; c < C; c++) {
        gsl_vector_const_view mc = gsl_matrix_const_row(pr->M, c);
        for (size_t s = 0; s < ns; s++) {
            gsl_vector_view ks = gsl_matrix_column(Kzs, s);
            double mu, s2;
            gpc_inducing_marginal(L, &ks.vector, gsl_vector_get(kss, s), &mc.vector, pr->S[c],
                                  &mu, &s2);
            gsl_matrix_set(mean, s, c, mu);
            gsl_matrix_set(var, s, c, s2);
        }
    }
    for (size_t s = 0; s < ns; s++) {
        double nu2[CMAX];
        for (size_t c = 0; c < C; c++)
            nu2[c] = 1.0 + gsl_matrix_get(var, s, c);
        gpc_mprobit_probs(rule(pr), gsl_matrix_ptr(mean, s, 0), nu2,
                          gsl_matrix_ptr(prob, s, 0));
    }
    gsl_matrix_free(L);
    gsl_matrix_free(Kzs);
    gsl_vector_free(kss);
}

static void check_dense(gsl_rng *r, size_t C, size_t n, double v0, double w)
{
    size_t np;
    gsl_matrix *X;
    size_t *cls;
    multiclass_problem(r, n, 2, C, 0.6, &X, &cls);
    gpc_shard_mprobit mp;
    sparse_problem pr = problem(&mp, C);
    pr.X = X;
    gpc_kernel_parse("se", 2, &pr.k);
    np = gpc_kernel_nparams(pr.k);
    double th[2] = {log(v0), log(w)};
    gpc_kernel_set_params(pr.k, th);
    pr.Z = gsl_matrix_alloc(n, 2);
    gsl_matrix_memcpy(pr.Z, X);
    pr.M = gsl_matrix_calloc(C, n);
    pr.y = malloc(n * sizeof *pr.y);
    gsl_vector *yv = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(yv, i, pr.y[i] = (double)cls[i]);
    for (size_t c = 0; c < C; c++) {
        pr.S[c] = gsl_matrix_alloc(n, n);
        gsl_matrix_set_identity(pr.S[c]);
    }

    /* the dense fit's bound through the method table, converged well past
     * its default tolerance so that the comparison measures the sparse side */
    const gpc_method_ops *vb = &gpc_method_vb_ops;
    void *ws = vb->alloc(n, C, pr.k, 1, GPC_LIK_MPROBIT);
    vb->set(ws, GPC_SET_TOL, 1e-13);
    vb->set(ws, GPC_SET_EVIDENCE, GPC_EVIDENCE_BOUND);
    double dense, dgrad[2];
    int rc = vb->evidence(ws, pr.k, X, yv, &dense, dgrad);
    TEST_OK(rc == GPC_OK, "C = %zu: -M vb fits (%s)", C, rc == GPC_OK ? "ok" : gpc_errmsg());

    /* the sparse one, Z = X: natural steps of 1 from the prior until m
     * moves by less than MOVE_TOL */
    gsl_matrix *prev = gsl_matrix_alloc(C, n);
    double elbo = NAN, move = INFINITY;
    int steps = 0;
    while (move > MOVE_TOL && steps < STEPS_MAX) {
        gsl_matrix_memcpy(prev, pr.M);
        if (sparse_natural_step(&pr, 1.0, &elbo) != GPC_OK)
            break;
        steps++;
        move = 0.0;
        for (size_t i = 0; i < C * n; i++)
            move = fmax(move, fabs(pr.M->data[i] - prev->data[i]));
    }
    TEST_OK(move <= MOVE_TOL, "C = %zu: m moves by %.1e after %d natural steps of 1", C, move,
            steps);
    double sgrad[2];
    elbo = sparse_problem_bound(&pr, NULL, NULL, sgrad, NULL);
    TEST_CLOSE(elbo, dense, 1e-8, 0, "C = %zu, Z = X: the sparse bound at its optimum is -M vb's "
               "(%.12g against %.12g, relative %.1e)", C, elbo, dense, fabs(elbo / dense - 1));
    double wg = 0.0;
    for (size_t j = 0; j < np; j++)
        wg = fmax(wg, fabs(sgrad[j] - dgrad[j]) / (1 + fabs(dgrad[j])));
    TEST_CLOSE(wg, 0, 0, 1e-7, "C = %zu, Z = X: its hyperparameter gradient is -M vb's "
               "(largest difference %.1e)", C, wg);

    /* predictions at test inputs in and beyond the training range */
    gsl_matrix *Xs = random_matrix(r, TEST_M, 2);
    gsl_matrix_scale(Xs, 1.5);
    gsl_matrix *dmean = gsl_matrix_alloc(TEST_M, C), *dcov = gsl_matrix_alloc(TEST_M, C * C),
               *dprob = gsl_matrix_alloc(TEST_M, C), *smean = gsl_matrix_alloc(TEST_M, C),
               *svar = gsl_matrix_alloc(TEST_M, C), *sprob = gsl_matrix_alloc(TEST_M, C);
    vb->predict(ws, pr.k, X, Xs, dmean, dcov);
    vb->prob(ws, GPC_LIK_MPROBIT, 0.0, dmean, dcov, 0, dprob);
    sparse_predict(&pr, Xs, smean, svar, sprob);
    double wm = 0.0, wv = 0.0, wp = 0.0;
    for (size_t s = 0; s < TEST_M; s++)
        for (size_t c = 0; c < C; c++) {
            wm = fmax(wm, fabs(gsl_matrix_get(smean, s, c) - gsl_matrix_get(dmean, s, c)));
            wv = fmax(wv, fabs(gsl_matrix_get(svar, s, c) - gsl_matrix_get(dcov, s, c * C + c)));
            wp = fmax(wp, fabs(gsl_matrix_get(sprob, s, c) - gsl_matrix_get(dprob, s, c)));
        }
    TEST_CLOSE(wm, 0, 0, 1e-7, "C = %zu, Z = X: the latent means at test inputs are -M vb's "
               "(largest difference %.1e)", C, wm);
    TEST_CLOSE(wv, 0, 0, 1e-7, "C = %zu, Z = X: the latent variances are -M vb's (%.1e)", C, wv);
    TEST_CLOSE(wp, 0, 0, 1e-6, "C = %zu, Z = X: the class probabilities are -M vb's "
               "(largest difference %.1e)", C, wp);

    vb->free(ws);
    gsl_matrix_free(prev);
    gsl_matrix_free(Xs);
    gsl_matrix_free(dmean);
    gsl_matrix_free(dcov);
    gsl_matrix_free(dprob);
    gsl_matrix_free(smean);
    gsl_matrix_free(svar);
    gsl_matrix_free(sprob);
    gsl_vector_free(yv);
    free(cls);
    problem_free(&pr);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 29);
    check_case(r, 2);
    check_case(r, 3);
    check_case(r, 5);
    check_bad_label(r);
    check_gradients(r, "ard", 3);
    check_gradients(r, "matern52*periodic@1+linear", 2);
    check_closed_form(r, 15, 3);
    check_closed_form(r, 5, 4);
    check_dense(r, 2, DENSE_N, 2.0, 1.0);
    check_dense(r, 3, DENSE_N, 2.0, 1.0);
    check_dense(r, 5, DENSE_N, 2.0, 1.0);
    /* K's condition number near 5e12: the rows whitened one by one keep the
     * marginal variances exact (summing k k' with Q = L'^-1 (S - I) L^-1
     * and whitening afterwards was 1e-5 off here) */
    check_dense(r, 3, 30, 10.0, 0.3);
    gsl_rng_free(r);
    return tap_done();
}
