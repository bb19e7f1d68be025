/* Kernels: gradients against central differences, the one-pass gradient
 * contraction and its form as matrix products from K (one ard or se term)
 * against explicit dK matrices, symmetry and positive
 * semi-definiteness, cross-covariances and diagonals, known values, names,
 * canonical specs and parse errors; all of these also with discrete columns
 * (":discrete=COLS", Kim & Ghahramani's 0/1 mismatch distance). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "random_matrix.h"
#include "tap.h"

static double max_abs_diff(const gsl_matrix *a, const gsl_matrix *b)
{
    double m = 0.0;
    for (size_t i = 0; i < a->size1; i++)
        for (size_t j = 0; j < a->size2; j++)
            m = fmax(m, fabs(gsl_matrix_get(a, i, j) - gsl_matrix_get(b, i, j)));
    return m;
}

static double max_abs(const gsl_matrix *a)
{
    double m = 0.0;
    for (size_t i = 0; i < a->size1 * a->size2; i++)
        m = fmax(m, fabs(a->data[i]));
    return m;
}

/* Like random_matrix, but columns 2 and 3 take few values (0, 1, 2 and -1, 1),
 * as a discrete feature does, so that pairs both match and differ there. */
static gsl_matrix *random_mixed(gsl_rng *r, size_t n)
{
    gsl_matrix *X = random_matrix(r, n, 3);
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 1, (double)gsl_rng_uniform_int(r, 3));
        gsl_matrix_set(X, i, 2, gsl_rng_uniform(r) < 0.5 ? -1.0 : 1.0);
    }
    return X;
}

/* dK/dtheta_j against central differences of K, for every j: the
 * fourth-order formula (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h, whose
 * error h^4 f^(5) / 30 stays below the tolerance where a kernel oscillates
 * in its hyperparameter (a periodic term at short periods). */
static void check_grad_matrix(gpc_kernel *k, const gsl_matrix *X, const char *spec)
{
    size_t n = X->size1, p = gpc_kernel_nparams(k);
    gsl_matrix *dK = gsl_matrix_alloc(n, n), *Kp = gsl_matrix_alloc(n, n),
               *Km = gsl_matrix_alloc(n, n);
    double *th = malloc(p * sizeof *th);
    memcpy(th, gpc_kernel_params(k), p * sizeof *th);
    static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
    for (size_t j = 0; j < p; j++) {
        double h = 1e-4, t0 = th[j];
        gpc_kernel_grad_matrix(k, X, j, dK);
        gsl_matrix_set_zero(Kp);
        for (int i = 0; i < 4; i++) {
            th[j] = t0 + step[i] * h;
            gpc_kernel_set_params(k, th);
            gpc_kernel_matrix(k, X, Km);
            gsl_matrix_scale(Km, coef[i] / (12 * h));
            gsl_matrix_add(Kp, Km);
        }
        th[j] = t0;
        gpc_kernel_set_params(k, th);
        TEST_CLOSE(max_abs_diff(dK, Kp), 0.0, 0, 1e-8 * (1 + max_abs(dK)),
                   "%s: dK/d%s against central differences", spec,
                   gpc_kernel_param_name(k, j));
    }
    free(th);
    gsl_matrix_free(dK);
    gsl_matrix_free(Kp);
    gsl_matrix_free(Km);
}

/* K symmetric and positive semi-definite; cross(X, X) = K without jitter;
 * diag = diag K. */
static void check_matrix(gpc_kernel *k, const gsl_matrix *X, const char *spec)
{
    size_t n = X->size1;
    gsl_matrix *K = gsl_matrix_alloc(n, n), *C = gsl_matrix_alloc(n, n),
               *E = gsl_matrix_alloc(n, n);
    gsl_vector *d = gsl_vector_alloc(n), *ev = gsl_vector_alloc(n);
    gpc_kernel_matrix(k, X, K);
    int sym = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            sym &= gsl_matrix_get(K, i, j) == gsl_matrix_get(K, j, i);
    TEST_OK(sym, "%s: K is exactly symmetric", spec);
    gsl_matrix_memcpy(E, K);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(n);
    gsl_eigen_symm(E, ev, ws);
    gsl_eigen_symm_free(ws);
    TEST_OK(gsl_vector_min(ev) >= -1e-12 * max_abs(K), "%s: K is positive semi-definite "
            "(smallest eigenvalue %.3g)", spec, gsl_vector_min(ev));

    gpc_kernel_cross(k, X, X, C);
    long jit = gpc_kernel_param_index(k, "log_jitter");
    double jitter = jit >= 0 ? exp(gpc_kernel_params(k)[jit]) : 0.0;
    for (size_t i = 0; i < n; i++)
        gsl_matrix_set(C, i, i, gsl_matrix_get(C, i, i) + jitter);
    TEST_CLOSE(max_abs_diff(C, K), 0, 0, 1e-14 * max_abs(K),
               "%s: cross(X, X) plus jitter equals K", spec);
    gpc_kernel_diag(k, X, d);
    gsl_vector_view kd = gsl_matrix_diagonal(K);
    gsl_vector_sub(d, &kd.vector);
    TEST_CLOSE(fabs(gsl_vector_max(d)) + fabs(gsl_vector_min(d)), 0, 0, 1e-14 * max_abs(K),
               "%s: diag equals the diagonal of K", spec);
    gsl_matrix_free(K);
    gsl_matrix_free(C);
    gsl_matrix_free(E);
    gsl_vector_free(d);
    gsl_vector_free(ev);
}

/* The largest length-scale weight w = exp(log w) of k (0 if none). */
static double max_weight(const gpc_kernel *k)
{
    double w = 0.0;
    for (size_t j = 0; j < gpc_kernel_nparams(k); j++)
        if (strstr(gpc_kernel_param_name(k, j), "log_w"))
            w = fmax(w, exp(gpc_kernel_params(k)[j]));
    return w;
}

/* The contraction against sums over explicit dK_j, without and with the
 * kernel's matrix K (which one ard or se term, alone or plus jitter, turns
 * into matrix products); junk in R's strict upper triangle must not
 * matter. */
static void check_contract(gsl_rng *r, gpc_kernel *k, const gsl_matrix *X, const char *spec)
{
    size_t n = X->size1, p = gpc_kernel_nparams(k);
    gsl_matrix *R = gsl_matrix_alloc(n, n), *dK = gsl_matrix_alloc(n, n),
               *B = gsl_matrix_alloc(n, p), *K = gsl_matrix_alloc(n, n);
    gsl_vector *u = gsl_vector_alloc(n), *v = gsl_vector_alloc(n), *dKv = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        gsl_vector_set(u, i, gsl_rng_uniform(r) - 0.5);
        gsl_vector_set(v, i, gsl_rng_uniform(r) - 0.5);
        for (size_t j = 0; j <= i; j++)
            gsl_matrix_set(R, i, j, gsl_rng_uniform(r) - 0.5);
        for (size_t j = i + 1; j < n; j++)
            gsl_matrix_set(R, i, j, 1e3 * gsl_rng_uniform(r)); /* never read */
    }
    gpc_kernel_matrix(k, X, K);
    double alpha = 0.7, beta = -1.3, *s = malloc(p * sizeof *s);
    for (int withK = 0; withK < 2; withK++) {
        const char *how = withK ? "with K" : "without K";
        gpc_kernel_grad_contract(k, X, withK ? K : NULL, u, alpha, R, beta, v, s, B);
        for (size_t j = 0; j < p; j++) {
            gpc_kernel_grad_matrix(k, X, j, dK);
            double want = 0.0;
            for (size_t a = 0; a < n; a++)
                for (size_t b = 0; b < n; b++) {
                    double Rab = a >= b ? gsl_matrix_get(R, a, b) : gsl_matrix_get(R, b, a);
                    want += gsl_matrix_get(dK, a, b) *
                            (alpha * gsl_vector_get(u, a) * gsl_vector_get(u, b) + beta * Rab);
                }
            TEST_CLOSE(s[j], want, 1e-11, 1e-13, "%s: contraction s for %s, %s", spec,
                       gpc_kernel_param_name(k, j), how);
            gsl_blas_dgemv(CblasNoTrans, 1.0, dK, v, 0.0, dKv);
            gsl_vector_view col = gsl_matrix_column(B, j);
            /* with K, ard and se terms are contracted as matrix products,
             * which subtract terms as large as w x^2 (x centred, |x| <= 1
             * here): at w = e^12 that costs digits of the small results */
            double scale = 1.0 + fabs(gsl_vector_max(&col.vector)) +
                           fabs(gsl_vector_min(&col.vector));
            if (withK)
                scale += 1e-3 * max_weight(k) * (double)n;
            gsl_vector_sub(dKv, &col.vector);
            TEST_CLOSE(fabs(gsl_vector_max(dKv)) + fabs(gsl_vector_min(dKv)), 0, 0,
                       1e-12 * scale, "%s: contraction dK v for %s, %s", spec,
                       gpc_kernel_param_name(k, j), how);
        }
    }
    free(s);
    gsl_matrix_free(R);
    gsl_matrix_free(dK);
    gsl_matrix_free(B);
    gsl_matrix_free(K);
    gsl_vector_free(u);
    gsl_vector_free(v);
    gsl_vector_free(dKv);
}

/* The worst difference of s[j] and of column j of B from the reference
 * (s2, B2), or from the explicit sums over dK_j if B2 is NULL: each relative
 * to the sum of the absolute values of the explicit sum's terms (the
 * accuracy that a sum of them can have), or with per_entry 0 the
 * differences in B relative to the largest such sum in its column. */
static double contract_error(const gsl_matrix *dK, const gsl_matrix *M, const gsl_vector *v,
                             const double *s, const gsl_matrix *B, const double *s2,
                             const gsl_matrix *B2, size_t j, int per_entry)
{
    size_t n = dK->size1;
    double want = 0.0, scale = 0.0, worst, diff = 0.0, top = 0.0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            double t = gsl_matrix_get(dK, a, b) * gsl_matrix_get(M, a, b);
            want += t;
            scale += fabs(t);
        }
    worst = fabs(s[j] - (B2 ? s2[j] : want)) / scale;
    for (size_t a = 0; a < n; a++) {
        double wa = 0.0, sa = 0.0;
        for (size_t b = 0; b < n; b++) {
            double t = gsl_matrix_get(dK, a, b) * gsl_vector_get(v, b);
            wa += t;
            sa += fabs(t);
        }
        double da = fabs(gsl_matrix_get(B, a, j) - (B2 ? gsl_matrix_get(B2, a, j) : wa));
        if (per_entry)
            worst = fmax(worst, da / sa);
        diff = fmax(diff, da);
        top = fmax(top, sa);
    }
    return per_entry ? worst : fmax(worst, diff / top);
}

/* One ard or se term, alone or plus jitter, contracted by matrix products
 * from K: against the explicit dK_j and against the pass over the pairs
 * (K = NULL).  The inputs lie far from the origin (1000 + N(0, 1) and so
 * on: the products expand (x_a - x_b)^2, which must not cancel there), and
 * the length scales are ordinary or so short that a case's nearest
 * neighbours hardly count (there the diagonal, with no distance, would
 * dominate the rounding: left in, it shows as errors of 1e-11 to 1e-5).
 * With short length scales an entry of B that one close pair makes is only
 * as accurate as the expansion's eps x^2 / (x_a - x_b)^2, not eps, so B is
 * held to the largest sum in its column, and to 1e-11 (the products come
 * within about 5e-13). */
static void check_contract_products(gsl_rng *r, size_t n)
{
    const char *specs[] = {"ard", "ard+jitter", "jitter+ard", "se+jitter", "ard@2-4,6+jitter"};
    size_t d = 7;
    gsl_matrix *X = gsl_matrix_alloc(n, d), *R = gsl_matrix_alloc(n, n),
               *M = gsl_matrix_alloc(n, n), *dK = gsl_matrix_alloc(n, n),
               *K = gsl_matrix_alloc(n, n);
    gsl_vector *u = gsl_vector_alloc(n), *v = gsl_vector_alloc(n);
    double alpha = 0.5, beta = -0.5;
    for (size_t a = 0; a < n; a++) {
        for (size_t l = 0; l < d; l++)
            gsl_matrix_set(X, a, l, 1000.0 * (1.0 + (double)l) + gsl_ran_gaussian(r, 1.0));
        gsl_vector_set(u, a, gsl_ran_gaussian(r, 1.0));
        gsl_vector_set(v, a, gsl_ran_gaussian(r, 1.0));
        for (size_t b = 0; b < n; b++) /* the strict upper triangle is never read */
            gsl_matrix_set(R, a, b, b <= a ? gsl_rng_uniform(r) - 0.5 : 1e3);
    }
    for (size_t a = 0; a < n; a++) /* M = alpha u u' + beta R in full */
        for (size_t b = 0; b < n; b++)
            gsl_matrix_set(M, a, b, alpha * gsl_vector_get(u, a) * gsl_vector_get(u, b) +
                                        beta * gsl_matrix_get(R, a > b ? a : b, a > b ? b : a));
    for (size_t sp = 0; sp < sizeof specs / sizeof specs[0]; sp++)
        for (int short_scales = 0; short_scales < 2; short_scales++) {
            gpc_kernel *k;
            gpc_kernel_parse(specs[sp], d, &k);
            size_t p = gpc_kernel_nparams(k);
            double th[16], s1[16], s2[16]; /* p <= d + 2 */
            for (size_t j = 0; j < p; j++)
                th[j] = short_scales ? 3.0 + gsl_rng_uniform(r) : 2.0 * gsl_rng_uniform(r) - 2.0;
            th[gpc_kernel_param_index(k, "log_v0")] = 0.3;
            gpc_kernel_set_params(k, th);
            gsl_matrix *B1 = gsl_matrix_alloc(n, p), *B2 = gsl_matrix_alloc(n, p);
            gpc_kernel_matrix(k, X, K);
            gpc_kernel_grad_contract(k, X, K, u, alpha, R, beta, v, s1, B1);
            gpc_kernel_grad_contract(k, X, NULL, u, alpha, R, beta, v, s2, B2);
            const char *how = short_scales ? " (short length scales)" : "";
            for (size_t j = 0; j < p; j++) {
                const char *name = gpc_kernel_param_name(k, j);
                gpc_kernel_grad_matrix(k, X, j, dK);
                int per_entry = !short_scales;
                double tol = short_scales ? 1e-11 : 1e-12;
                TEST_CLOSE(contract_error(dK, M, v, s1, B1, NULL, NULL, j, per_entry), 0, 0,
                           tol, "%s%s: products from K against explicit dK for %s", specs[sp], how,
                           name);
                TEST_CLOSE(contract_error(dK, M, v, s2, B2, NULL, NULL, j, per_entry), 0, 0,
                           tol, "%s%s: the pass over the pairs against explicit dK for %s",
                           specs[sp], how, name);
                TEST_CLOSE(contract_error(dK, M, v, s1, B1, s2, B2, j, per_entry), 0, 0, tol,
                           "%s%s: products against the pass over the pairs for %s", specs[sp],
                           how, name);
            }
            gsl_matrix_free(B1);
            gsl_matrix_free(B2);
            gpc_kernel_free(k);
        }
    gsl_matrix *mats[] = {X, R, M, dK, K};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        gsl_matrix_free(mats[i]);
    gsl_vector_free(u);
    gsl_vector_free(v);
}

/* Every check of one spec on a random 3-column X (with columns 2 and 3
 * discrete-valued if mixed). */
static void check_spec_x(gsl_rng *r, const char *spec, size_t n, int mixed)
{
    gsl_matrix *X = mixed ? random_mixed(r, n) : random_matrix(r, n, 3);
    gpc_kernel *k;
    if (!TEST_OK(gpc_kernel_parse(spec, 3, &k) == GPC_OK, "%s parses", spec))
        return;
    size_t p = gpc_kernel_nparams(k);
    double *th = malloc(p * sizeof *th);
    for (size_t j = 0; j < p; j++)
        th[j] = 1.5 * gsl_rng_uniform(r) - 1.0;
    gpc_kernel_set_params(k, th);
    check_grad_matrix(k, X, spec);
    check_matrix(k, X, spec);
    check_contract(r, k, X, spec);

    /* canonical spec round trip, and a clone computes the same K */
    gpc_kernel *k2, *c = gpc_kernel_clone(k);
    TEST_OK(gpc_kernel_parse(gpc_kernel_spec(k), 3, &k2) == GPC_OK &&
                strcmp(gpc_kernel_spec(k2), gpc_kernel_spec(k)) == 0 &&
                gpc_kernel_nparams(k2) == p,
            "%s: canonical spec '%s' parses back to itself", spec, gpc_kernel_spec(k));
    gsl_matrix *K1 = gsl_matrix_alloc(n, n), *K2 = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(k, X, K1);
    gpc_kernel_matrix(c, X, K2);
    TEST_OK(gsl_matrix_equal(K1, K2), "%s: a clone computes the same K", spec);
    gpc_kernel_set_params(k2, th);
    gpc_kernel_matrix(k2, X, K2);
    TEST_OK(gsl_matrix_equal(K1, K2), "%s: the canonical spec computes the same K", spec);
    gpc_kernel_free(k2);
    gpc_kernel_free(c);
    gsl_matrix_free(K1);
    gsl_matrix_free(K2);
    free(th);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
}

static void check_spec(gsl_rng *r, const char *spec, size_t n) { check_spec_x(r, spec, n, 0); }

/* Values worked out by hand at two points a unit apart. */
static void check_known_values(void)
{
    gsl_matrix *X = gsl_matrix_calloc(2, 2);
    gsl_matrix_set(X, 1, 0, 1.0); /* x0 = (0,0), x1 = (1,0) */
    gsl_matrix_set(X, 0, 1, 0.5);
    gsl_matrix_set(X, 1, 1, 0.5); /* x0 = (0,.5), x1 = (1,.5) */
    gsl_matrix *K = gsl_matrix_alloc(2, 2);
    struct {
        const char *spec, *params;
        double k00, k01;
    } cases[] = {
        {"ard", "0,0,0", 1.0, exp(-0.5)},
        {"ard", "1,0.5,-1", M_E, M_E * exp(-0.5 * exp(0.5))},
        {"se", "0,0", 1.0, exp(-0.5)},
        {"linear", "0", 0.25, 0.25},
        {"bias", "-3", exp(-3), exp(-3)},
        {"jitter", "-6", exp(-6), 0.0},
        /* nn with v0 = s0 = s = 1: u00 = 1.25, u01 = 1.25, u11 = 2.25 */
        {"nn", "0,0,0", M_2_PI * asin(2.5 / 3.5), M_2_PI * asin(2.5 / sqrt(3.5 * 5.5))},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gpc_kernel *k;
        gpc_kernel_parse(cases[c].spec, 2, &k);
        double th[3];
        size_t p = gpc_kernel_nparams(k);
        char *copy = strdup(cases[c].params), *save = NULL, *t = strtok_r(copy, ",", &save);
        for (size_t j = 0; j < p && t; j++, t = strtok_r(NULL, ",", &save))
            th[j] = atof(t);
        free(copy);
        gpc_kernel_set_params(k, th);
        gpc_kernel_matrix(k, X, K);
        TEST_CLOSE(gsl_matrix_get(K, 0, 0), cases[c].k00, 1e-15, 0, "%s(%s): k(x0, x0)",
                   cases[c].spec, cases[c].params);
        TEST_CLOSE(gsl_matrix_get(K, 0, 1), cases[c].k01, 1e-15, 0, "%s(%s): k(x0, x1)",
                   cases[c].spec, cases[c].params);
        gpc_kernel_free(k);
    }
    gsl_matrix_free(X);
    gsl_matrix_free(K);
}

/* Kim & Ghahramani's covariance (eq. 11-12) on a hand-made data set with
 * discrete columns 2 and 3, against the formula written out:
 *   v0 exp(-1/2 (w1 (a1 - b1)^2 + w2 [a2 != b2] + w3 [a3 != b3])) + b + j delta,
 * and a linear term on a discrete column reading the raw values. */
static void check_discrete_values(void)
{
    /* column 2 differs by 1 and by 2, column 3 by 1, 2 and 5 */
    const double x[5][3] = {{0.5, 1, 2}, {1.5, 1, 3}, {0.5, 2, 2}, {-1, 3, 7}, {0.25, 1, 2}};
    const double th[6] = {0.3, -0.2, 0.4, -1.0, -2.0, -4.0};
    size_t n = 5;
    gsl_matrix *X = gsl_matrix_alloc(n, 3), *K = gsl_matrix_alloc(n, n),
               *W = gsl_matrix_alloc(n, n), *Ks = gsl_matrix_alloc(n, n);
    gsl_vector *d = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        for (size_t l = 0; l < 3; l++)
            gsl_matrix_set(X, i, l, x[i][l]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double q = exp(th[1]) * (x[i][0] - x[j][0]) * (x[i][0] - x[j][0]) +
                       exp(th[2]) * (x[i][1] != x[j][1]) + exp(th[3]) * (x[i][2] != x[j][2]);
            gsl_matrix_set(W, i, j,
                           exp(th[0]) * exp(-0.5 * q) + exp(th[4]) + (i == j ? exp(th[5]) : 0.0));
        }
    const char *spec = "ard+bias+jitter:discrete=2-3";
    gpc_kernel *k;
    if (TEST_OK(gpc_kernel_parse(spec, 3, &k) == GPC_OK, "%s parses", spec)) {
        gpc_kernel_set_params(k, th);
        gpc_kernel_matrix(k, X, K);
        TEST_CLOSE(max_abs_diff(K, W), 0, 0, 1e-15 * max_abs(W),
                   "%s: K equals Kim & Ghahramani's eq. 11-12 written out", spec);
        gpc_kernel_cross(k, X, X, Ks);
        gpc_kernel_diag(k, X, d);
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            gsl_matrix_set(Ks, i, i, gsl_matrix_get(Ks, i, i) + exp(th[5]));
            ok &= fabs(gsl_vector_get(d, i) - gsl_matrix_get(W, i, i)) <= 1e-15 * max_abs(W);
        }
        TEST_CLOSE(max_abs_diff(Ks, W), 0, 0, 1e-15 * max_abs(W),
                   "%s: cross(X, X) plus jitter equals the formula", spec);
        TEST_OK(ok, "%s: diag equals the formula", spec);
        gpc_kernel_free(k);
    }

    /* se on a discrete column: v0 exp(-1/2 w ((a1 - b1)^2 + [a3 != b3])), and
     * linear reads raw values even of a column marked discrete */
    spec = "se@1,3+linear:discrete=3";
    if (TEST_OK(gpc_kernel_parse(spec, 3, &k) == GPC_OK, "%s parses", spec)) {
        const double ts[3] = {0.2, -0.7, -1.5};
        gpc_kernel_set_params(k, ts);
        gpc_kernel_matrix(k, X, K);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                double q = (x[i][0] - x[j][0]) * (x[i][0] - x[j][0]) + (x[i][2] != x[j][2]);
                double dot = x[i][0] * x[j][0] + x[i][1] * x[j][1] + x[i][2] * x[j][2];
                gsl_matrix_set(W, i, j, exp(ts[0]) * exp(-0.5 * exp(ts[1]) * q) + exp(ts[2]) * dot);
            }
        TEST_CLOSE(max_abs_diff(K, W), 0, 0, 1e-15 * max_abs(W),
                   "%s: se uses the mismatch, linear the raw values", spec);
        gpc_kernel_free(k);
    }
    gsl_matrix_free(X);
    gsl_matrix_free(K);
    gsl_matrix_free(W);
    gsl_matrix_free(Ks);
    gsl_vector_free(d);
}

/* Cholesky of K with discrete columns: all 9 distinct rows of a 3 x 3 grid of
 * two discrete features give a positive definite K without jitter; repeated
 * rows need the jitter, and with it K is positive definite too. */
static void check_discrete_cholesky(void)
{
    gsl_matrix *X = gsl_matrix_alloc(12, 2), *K = gsl_matrix_alloc(12, 12);
    for (size_t i = 0; i < 12; i++) {
        gsl_matrix_set(X, i, 0, (double)(i % 3));
        gsl_matrix_set(X, i, 1, (double)(i / 3 % 3));
    }
    struct {
        const char *spec;
        size_t n;
    } cases[] = {{"ard:discrete=1,2", 9}, {"se:discrete=1-2", 9}, {"ard+bias+jitter:discrete=1-2", 12}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gpc_kernel *k;
        if (!TEST_OK(gpc_kernel_parse(cases[c].spec, 2, &k) == GPC_OK, "%s parses", cases[c].spec))
            continue;
        size_t n = cases[c].n;
        gsl_matrix_const_view Xv = gsl_matrix_const_submatrix(X, 0, 0, n, 2);
        gsl_matrix_view Kv = gsl_matrix_submatrix(K, 0, 0, n, n);
        gpc_kernel_matrix(k, &Xv.matrix, &Kv.matrix);
        int sym = 1;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                sym &= gsl_matrix_get(&Kv.matrix, i, j) == gsl_matrix_get(&Kv.matrix, j, i);
        TEST_OK(sym && gsl_linalg_cholesky_decomp1(&Kv.matrix) == GSL_SUCCESS,
                "%s on %zu rows: K is symmetric and its Cholesky factorisation succeeds",
                cases[c].spec, n);
        gpc_kernel_free(k);
    }
    gsl_matrix_free(X);
    gsl_matrix_free(K);
}

/* A spec refused with a message containing a given phrase. */
typedef struct {
    const char *spec, *says;
} refusal;

static void check_refusals(const refusal *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gpc_kernel *k = NULL;
        int st = gpc_kernel_parse(bad[i].spec, 3, &k);
        TEST_OK(st == GPC_EUSAGE && strstr(gpc_errmsg(), bad[i].says) != NULL,
                "'%s' is refused saying '%s': %s", bad[i].spec, bad[i].says, gpc_errmsg());
        if (st == GPC_OK)
            gpc_kernel_free(k);
    }
}

/* The canonical spec keeps the clause, drops blanks and lists the discrete
 * columns in increasing order; a clone keeps it too. */
static void check_discrete_specs(void)
{
    struct {
        const char *given, *canonical;
    } cases[] = {
        {"ard:discrete=2", "ard:discrete=2"},
        {" ard + bias : discrete = 4 , 2 ", "ard+bias:discrete=2,4"},
        {"ard+jitter:discrete=3,1,2", "ard+jitter:discrete=1-3"},
        {"ard:discrete=2,1", "ard:discrete=1,2"},
        {"ard@1-4+linear:discrete=2-3", "ard@1-4+linear:discrete=2,3"},
        {"se@4+ard@1-2:discrete=4,1-2", "se@4+ard@1-2:discrete=1,2,4"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gpc_kernel *k, *k2;
        if (!TEST_OK(gpc_kernel_parse(cases[c].given, 4, &k) == GPC_OK, "'%s' parses",
                     cases[c].given))
            continue;
        gpc_kernel *cl = gpc_kernel_clone(k);
        TEST_OK(strcmp(gpc_kernel_spec(k), cases[c].canonical) == 0 &&
                    gpc_kernel_parse(gpc_kernel_spec(k), 4, &k2) == GPC_OK &&
                    strcmp(gpc_kernel_spec(k2), cases[c].canonical) == 0 && cl &&
                    strcmp(gpc_kernel_spec(cl), cases[c].canonical) == 0,
                "'%s': canonical spec '%s' (want '%s') parses back to itself, and a clone "
                "keeps it", cases[c].given, gpc_kernel_spec(k), cases[c].canonical);
        gpc_kernel_free(k2);
        gpc_kernel_free(cl);
        gpc_kernel_free(k);
    }
    gpc_kernel *k;
    gpc_kernel_parse("ard+bias+jitter:discrete=3", 3, &k);
    const char *want[] = {"log_v0", "log_w1", "log_w2", "log_w3", "log_bias", "log_jitter"};
    int ok = gpc_kernel_nparams(k) == 6;
    for (size_t j = 0; ok && j < 6; j++)
        ok &= strcmp(gpc_kernel_param_name(k, j), want[j]) == 0;
    TEST_OK(ok, "ard+bias+jitter:discrete=3: the same hyperparameters as without the clause");
    gpc_kernel_free(k);
}

static void check_names_and_defaults(void)
{
    gpc_kernel *k;
    gpc_kernel_parse("ard+bias+jitter", 3, &k);
    const char *want[] = {"log_v0", "log_w1", "log_w2", "log_w3", "log_bias", "log_jitter"};
    int ok = gpc_kernel_nparams(k) == 6;
    for (size_t j = 0; ok && j < 6; j++)
        ok &= strcmp(gpc_kernel_param_name(k, j), want[j]) == 0 &&
              gpc_kernel_param_index(k, want[j]) == (long)j;
    TEST_OK(ok, "ard+bias+jitter: names log_v0 log_w1..3 log_bias log_jitter, found by name");
    TEST_OK(gpc_kernel_param_index(k, "log_w4") == -1, "unknown name gives -1");
    double th[6], want_th[6] = {0, -2, -2, -2, -3, -6};
    gpc_kernel_default_params(k, th);
    TEST_OK(memcmp(th, want_th, sizeof th) == 0, "default starting values as documented");
    gpc_kernel_free(k);

    gpc_kernel_parse("ard@2-3", 3, &k);
    TEST_OK(gpc_kernel_nparams(k) == 3 && gpc_kernel_param_index(k, "log_w2") == 1 &&
                gpc_kernel_param_index(k, "log_w3") == 2,
            "ard@2-3: its weights are named by input column");
    gpc_kernel_free(k);

    gpc_kernel_parse("se+se@1", 3, &k);
    TEST_OK(gpc_kernel_param_index(k, "t1.log_v0") == 0 &&
                gpc_kernel_param_index(k, "t2.log_w") == 3,
            "se+se@1: clashing names get term prefixes");
    gpc_kernel_free(k);

    gpc_kernel_parse("se+linear+se@1", 3, &k);
    TEST_OK(gpc_kernel_param_index(k, "t1.log_v0") == 0 &&
                gpc_kernel_param_index(k, "log_v") == 2 &&
                gpc_kernel_param_index(k, "t3.log_w") == 4,
            "se+linear+se@1: only the clashing terms get prefixes");
    gpc_kernel_free(k);

    gpc_kernel_parse("ard@1+linear+ard@2", 3, &k);
    TEST_OK(gpc_kernel_param_index(k, "t1.log_w1") == 1 &&
                gpc_kernel_param_index(k, "log_v") == 2 &&
                gpc_kernel_param_index(k, "t3.log_w2") == 4,
            "ard@1+linear+ard@2: one shared name (log_v0) prefixes every name of both");
    gpc_kernel_free(k);

    /* A dimension from a damaged file is refused before anything is sized by it. */
    size_t huge[] = {GPC_KERNEL_MAX_DIM + (size_t)1, (size_t)-1};
    for (size_t i = 0; i < 2; i++) {
        int st = gpc_kernel_parse("ard+bias", huge[i], &k);
        TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "more than gpc handles"),
                "ard+bias for %zu columns is refused (%d: %s)", huge[i], st, gpc_errmsg());
    }
}

static void check_parse_errors(void)
{
    const char *bad[] = {"", "foo", "ard@0", "ard@4", "ard@2-1", "ard+", "ard@1,,2", "ard++bias",
                         "ard@", "ard@1,", "+ard", "ard@1,1", "se@2-3,3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpc_kernel *k = NULL;
        int st = gpc_kernel_parse(bad[i], 3, &k);
        TEST_OK(st == GPC_EUSAGE && strlen(gpc_errmsg()) > 0, "'%s' is refused: %s", bad[i],
                gpc_errmsg());
        if (st == GPC_OK)
            gpc_kernel_free(k);
    }
    /* the discrete clause, with a word the message must contain */
    const refusal dbad[] = {
        {"ard:foo=1", "unknown clause 'foo'"},
        {"ard:Discrete=1", "unknown clause"},
        {"ard:", "empty clause"},
        {"ard:discrete=1:", "empty clause"},
        {"ard:discrete", "needs its columns"},
        {"ard:discrete=", "expected a list"},
        {"ard:discrete=1,", "expected a list"},
        {"ard:discrete=a", "expected a list"},
        {"ard:discrete=0", "columns run from 1 to 3"},
        {"ard:discrete=4", "columns run from 1 to 3"},
        {"ard:discrete=3-2", "runs downward (write 2-3)"},
        {"ard:discrete=1,1", "column 1 appears twice"},
        {"ard:discrete=1-3,2", "column 2 appears twice"},
        {"ard:discrete=1:discrete=2", "twice"},
        {"linear:discrete=1", "no effect"},
        {"nn+bias+jitter:discrete=2", "no effect"},
        {"ard@1+linear@2,3:discrete=2", "discrete column 2 is read by no ard, se, matern or rq term"},
        {"ard@1-2+se@1:discrete=1,3", "discrete column 3"},
        {":discrete=1", "no terms"},
        {"ard+:discrete=1", "empty term"},
        {"ard:discrete=1+bias", "after all the terms"},
        {"ard@1:discrete=1@2", "expected a list"},
    };
    check_refusals(dbad, sizeof dbad / sizeof dbad[0]);
}

/* The simplex clause: the checks of every spec; the weights normalised on
 * setting; the kernel equal to the plain sum with the weights as the terms'
 * amplitudes; the names; the clause's errors. */
static void check_simplex(gsl_rng *r)
{
    const char *specs[] = {"se@1+se@2-3:simplex", "ard@1-2+linear@3+bias+jitter:simplex",
                           "se@1+nn@2-3:simplex=2,0.5"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        check_spec(r, specs[s], 9);
    gpc_kernel *k, *plain;
    gpc_kernel_parse("se@1+se@2-3:simplex", 3, &k);
    gpc_kernel_parse("se@1+se@2-3", 3, &plain);
    double th[] = {0.4, -0.3, 1.7, 0.2};
    gpc_kernel_set_params(k, th);
    const double *st = gpc_kernel_params(k);
    TEST_CLOSE(exp(st[0]) + exp(st[2]), 1.0, 1e-15, 0, "simplex: the stored weights sum to one");
    TEST_CLOSE(st[2] - st[0], 1.3, 1e-14, 0, "simplex: their ratio is the given one");
    TEST_OK(st[1] == -0.3 && st[3] == 0.2, "simplex: the other hyperparameters are as given");
    double w[2];
    size_t idx[2];
    TEST_OK(gpc_kernel_weights(k, 0, w, idx) == 2 && idx[0] == 0 && idx[1] == 2 &&
                w[0] == exp(st[0]) && w[1] == exp(st[2]),
            "simplex: gpc_kernel_weights gives the weights and their indices");
    TEST_OK(strcmp(gpc_kernel_weight_term(k, 1), "se@2-3") == 0 &&
                gpc_kernel_weight_term(k, 2) == NULL,
            "simplex: the weighted terms as written");
    TEST_OK(strcmp(gpc_kernel_param_name(k, 0), "t1.log_weight") == 0 &&
                strcmp(gpc_kernel_param_name(k, 3), "t2.log_w") == 0,
            "simplex: names t1.log_weight ... t2.log_w (got %s, %s)",
            gpc_kernel_param_name(k, 0), gpc_kernel_param_name(k, 3));
    TEST_OK(gpc_kernel_is_weight(k, 2) && !gpc_kernel_is_weight(k, 1) &&
                !gpc_kernel_is_weight(k, 4) && !gpc_kernel_is_weight(plain, 0),
            "simplex: gpc_kernel_is_weight marks the weights only");
    double thp[] = {st[0], -0.3, st[2], 0.2};
    gpc_kernel_set_params(plain, thp);
    gsl_matrix *X = random_matrix(r, 7, 3), *K1 = gsl_matrix_alloc(7, 7),
               *K2 = gsl_matrix_alloc(7, 7);
    gpc_kernel_matrix(k, X, K1);
    gpc_kernel_matrix(plain, X, K2);
    TEST_CLOSE(max_abs_diff(K1, K2), 0, 0, 1e-15, "simplex: K = sum_t beta_t^2 C_t");
    gpc_kernel_free(k);
    gpc_kernel_free(plain);
    gsl_matrix_free(X);
    gsl_matrix_free(K1);
    gsl_matrix_free(K2);

    const refusal bad[] = {
        {"se:simplex", "two or more terms"},
        {"se+jitter:simplex", "two or more terms"},
        {"se@1+se@2:simplex=0,1", "both positive"},
        {"se@1+se@2:simplex=1,-1", "both positive"},
        {"se@1+se@2:simplex=1", "both positive"},
        {"se@1+se@2:simplex=1,2,3", "both positive"},
        {"se@1+se@2:simplex=a,b", "both positive"},
        {"se@1+se@2:simplex:simplex", "twice"},
        {"se+se:simplx", "unknown clause 'simplx'"},
        {"se+se:simplex", "terms 1 and 2 both read column 1"},
        {"se@1-2+ard@2-3:simplex", "terms 1 and 2 both read column 2"},
        {"se@1+linear@3+nn@2,3:simplex", "terms 2 and 3 both read column 3"},
    };
    check_refusals(bad, sizeof bad / sizeof bad[0]);
    gpc_kernel *kd;
    TEST_OK(gpc_kernel_parse("se@1+se@2:simplex=1,1:per-class=3", 3, &kd) == GPC_OK &&
                strcmp(gpc_kernel_spec(kd), "se@1+se@2:simplex:per-class=3") == 0,
            "simplex: the default hyperprior is left out of the canonical spec");
    gpc_kernel_free(kd);
}

/* Rows [k(x, x) | k(x, x_1..x_n) | x] for the rows of Xr against X. */
static gsl_matrix *gram_rows(const gpc_kernel *se, const gsl_matrix *Xr, const gsl_matrix *X)
{
    size_t m = Xr->size1, n = X->size1, d = X->size2;
    gsl_matrix *G = gsl_matrix_alloc(m, 1 + n + d), *Kt = gsl_matrix_alloc(n, m);
    gsl_vector *dg = gsl_vector_alloc(m);
    gpc_kernel_cross(se, X, Xr, Kt);
    gpc_kernel_diag(se, Xr, dg);
    for (size_t i = 0; i < m; i++) {
        gsl_matrix_set(G, i, 0, gsl_vector_get(dg, i));
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(G, i, 1 + j, gsl_matrix_get(Kt, j, i));
        for (size_t l = 0; l < d; l++)
            gsl_matrix_set(G, i, 1 + n + l, gsl_matrix_get(Xr, i, l));
    }
    gsl_matrix_free(Kt);
    gsl_vector_free(dg);
    return G;
}

/* A gram term over a Gram matrix made by another kernel gives that kernel
 * back: K, cross and diag, with its amplitude and beside another term; the
 * generic checks pass; the training checks catch bad Gram columns. */
static void check_gram(gsl_rng *r)
{
    size_t n = 8, m = 5;
    gsl_matrix *X = random_matrix(r, n, 2), *Xs = random_matrix(r, m, 2);
    gpc_kernel *se, *other, *g;
    gpc_kernel_parse("se", 2, &se);
    gpc_kernel_parse("ard", 2, &other);
    double the[] = {0.3, -0.5}, tho[] = {-0.2, 0.1, -1.0};
    gpc_kernel_set_params(se, the);
    gpc_kernel_set_params(other, tho);
    gsl_matrix *G = gram_rows(se, X, X), *Gs = gram_rows(se, Xs, X);
    char spec[64];
    snprintf(spec, sizeof spec, "gram@1-%zu+ard@%zu-%zu", n + 1, n + 2, n + 3);
    if (!TEST_OK(gpc_kernel_parse(spec, n + 3, &g) == GPC_OK, "%s parses", spec))
        return;
    double thg[] = {0.7, -0.2, 0.1, -1.0};
    gpc_kernel_set_params(g, thg);
    check_grad_matrix(g, G, spec);
    check_matrix(g, G, spec);
    check_contract(r, g, G, spec);
    TEST_OK(gpc_kernel_check_train(g, G) == GPC_OK && gpc_kernel_check_test(g, n) == GPC_OK,
            "%s: the Gram columns pass the checks", spec);

    gsl_matrix *K = gsl_matrix_alloc(n, n), *W = gsl_matrix_alloc(n, n),
               *Ks = gsl_matrix_alloc(n, m), *Ws = gsl_matrix_alloc(n, m);
    gsl_vector *d = gsl_vector_alloc(m), *wd = gsl_vector_alloc(m), *od = gsl_vector_alloc(m);
    gpc_kernel_matrix(g, G, K);
    gpc_kernel_matrix(se, X, W);
    gsl_matrix_scale(W, exp(0.7));
    gsl_matrix *O = gsl_matrix_alloc(n, n);
    gpc_kernel_matrix(other, X, O);
    gsl_matrix_add(W, O);
    TEST_CLOSE(max_abs_diff(K, W), 0, 0, 1e-15, "gram: K = v G + the other term");
    gpc_kernel_cross(g, G, Gs, Ks);
    gpc_kernel_cross(se, X, Xs, Ws);
    gsl_matrix_scale(Ws, exp(0.7));
    gsl_matrix *Os = gsl_matrix_alloc(n, m);
    gpc_kernel_cross(other, X, Xs, Os);
    gsl_matrix_add(Ws, Os);
    TEST_CLOSE(max_abs_diff(Ks, Ws), 0, 0, 1e-15, "gram: cross = v G(X, Xs) + the other term");
    gpc_kernel_diag(g, Gs, d);
    gpc_kernel_diag(se, Xs, wd);
    gpc_kernel_diag(other, Xs, od);
    double worst = 0.0;
    for (size_t i = 0; i < m; i++)
        worst = fmax(worst, fabs(gsl_vector_get(d, i) - exp(0.7) * gsl_vector_get(wd, i) -
                                 gsl_vector_get(od, i)));
    TEST_CLOSE(worst, 0, 0, 1e-15, "gram: diag = v k(x, x) + the other term");

    TEST_OK(gpc_kernel_check_test(g, n - 1) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "needs 8 training cases, not 7") != NULL,
            "gram: a model with another number of training cases is refused: %s",
            gpc_errmsg());
    gsl_matrix_const_view first = gsl_matrix_const_submatrix(G, 0, 0, n - 1, n + 3);
    TEST_OK(gpc_kernel_check_train(g, &first.matrix) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "not 7") != NULL,
            "gram: training rows that do not match its columns are refused: %s", gpc_errmsg());
    gsl_matrix_set(G, 5, 3, gsl_matrix_get(G, 5, 3) * (1 + 1e-8));
    TEST_OK(gpc_kernel_check_train(g, G) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "not symmetric: case 6 to 3") != NULL,
            "gram: an asymmetric Gram matrix is refused: %s", gpc_errmsg());
    gsl_matrix_set(G, 5, 3, gsl_matrix_get(G, 2, 6));
    gsl_matrix_set(G, 4, 0, 0.5);
    TEST_OK(gpc_kernel_check_train(g, G) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "case 5's similarity to itself") != NULL,
            "gram: a first column that is not the diagonal is refused: %s", gpc_errmsg());
    gpc_kernel_free(se);
    gpc_kernel_free(other);
    gpc_kernel_free(g);
    gsl_matrix *mats[] = {X, Xs, G, Gs, K, W, Ks, Ws, O, Os};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        gsl_matrix_free(mats[i]);
    gsl_vector_free(d);
    gsl_vector_free(wd);
    gsl_vector_free(od);
}

/* Length scales named after their columns: prefix and class suffix as the
 * numbered names, both names found, shared or missing words left numbered,
 * and the names kept by clones and the base kernel. */
static void check_column_labels(void)
{
    char *const cols[] = {"worst radius", "a b", "a_b", "x", "", NULL};
    gpc_kernel *k;
    TEST_OK(gpc_kernel_parse("ard+ard@1,4:per-class=2", 5, &k) == GPC_OK, "parsed");
    gpc_kernel_name_columns(k, cols);
    static const char *const want[] = {
        "t1.log_v0.c1", "t1.log_w.worst_radius.c1", "t1.log_w2.c1", "t1.log_w3.c1",
        "t1.log_w.x.c1", "t1.log_w5.c1", "t2.log_v0.c1", "t2.log_w.worst_radius.c1",
        "t2.log_w.x.c1"};
    size_t p = gpc_kernel_nparams(k);
    TEST_OK(p == 18, "18 hyperparameters (%zu)", p);
    for (size_t j = 0; j < 9; j++) {
        TEST_OK(!strcmp(gpc_kernel_param_label(k, j), want[j]), "label %zu is %s (got %s)", j,
                want[j], gpc_kernel_param_label(k, j));
        TEST_OK(gpc_kernel_param_index(k, want[j]) == (long)j &&
                    gpc_kernel_param_index(k, gpc_kernel_param_name(k, j)) == (long)j,
                "%s and %s both find %zu", want[j], gpc_kernel_param_name(k, j), j);
    }
    TEST_OK(!strcmp(gpc_kernel_param_label(k, 10), "t1.log_w.worst_radius.c2") &&
                !strcmp(gpc_kernel_param_name(k, 10), "t1.log_w1.c2"),
            "the second class's copy: %s / %s", gpc_kernel_param_label(k, 10),
            gpc_kernel_param_name(k, 10));
    TEST_OK(gpc_kernel_param_index(k, "log_w.worst_radius") == -1 &&
                gpc_kernel_param_index(k, "t1.log_w.a_b.c1") == -1,
            "no label without its prefix, none for the shared word a_b");
    gpc_kernel *c = gpc_kernel_clone(k), *b = gpc_kernel_base(k);
    TEST_OK(!strcmp(gpc_kernel_param_label(c, 1), "t1.log_w.worst_radius.c1") &&
                !strcmp(gpc_kernel_param_label(b, 1), "t1.log_w.worst_radius"),
            "clone and base keep the names (%s, %s)", gpc_kernel_param_label(c, 1),
            gpc_kernel_param_label(b, 1));
    gpc_kernel_name_columns(k, NULL);
    TEST_OK(!strcmp(gpc_kernel_param_label(k, 1), "t1.log_w1.c1") &&
                gpc_kernel_param_index(k, "t1.log_w.worst_radius.c1") == -1,
            "forgotten names leave the numbered ones");
    gpc_kernel_free(c);
    gpc_kernel_free(b);
    gpc_kernel_free(k);
    /* a name too long for a hyperparameter's keeps the numbered one */
    char *const longer[] = {"a name of fifty characters, more than forty-seven", NULL};
    TEST_OK(gpc_kernel_parse("ard", 1, &k) == GPC_OK, "parsed");
    gpc_kernel_name_columns(k, longer);
    TEST_OK(!strcmp(gpc_kernel_param_label(k, 1), "log_w1"), "too long: %s",
            gpc_kernel_param_label(k, 1));
    gpc_kernel_free(k);
}

/* An ARD term over the most columns a kernel may weigh: a case's columns
 * once lived on the stack (8 MB of them at 2^20), which overflowed it.  Two
 * cases one apart in the last column only: k = v exp(-w / 2). */
static void check_widest_ard(void)
{
    size_t d = GPC_KERNEL_MAX_DIM;
    gpc_kernel *k;
    TEST_OK(gpc_kernel_parse("ard", d, &k) == GPC_OK, "ard over %zu columns parses", d);
    gsl_matrix *X = gsl_matrix_calloc(2, d), *K = gsl_matrix_alloc(2, 2), *Ks = gsl_matrix_alloc(2, 2);
    gsl_matrix_set(X, 1, d - 1, 1.0);
    gpc_kernel_matrix(k, X, K);
    gpc_kernel_cross(k, X, X, Ks);
    double v = exp(gpc_kernel_params(k)[0]), w = exp(gpc_kernel_params(k)[d]);
    TEST_OK(fabs(gsl_matrix_get(K, 1, 0) - v * exp(-0.5 * w)) <= 1e-15 * v &&
                fabs(gsl_matrix_get(K, 0, 0) - v) <= 1e-15 * v,
            "its matrix: %.17g and %.17g", gsl_matrix_get(K, 0, 0), gsl_matrix_get(K, 1, 0));
    TEST_OK(fabs(gsl_matrix_get(Ks, 0, 1) - gsl_matrix_get(K, 1, 0)) <= 1e-15 * v,
            "its cross-covariance agrees (%.17g)", gsl_matrix_get(Ks, 0, 1));
    gsl_matrix_free(X);
    gsl_matrix_free(K);
    gsl_matrix_free(Ks);
    gpc_kernel_free(k);
}

/* ---- the Matern, rq, periodic and polynomial terms, and products -------- */

/* The specs of the terms added to ard and se, and of products, on three
 * columns. */
static const char *const new_specs[] = {
    "matern12", "matern32", "matern52", "matern12ard", "matern32ard", "matern52ard@1,3",
    "rq", "rqard", "periodic", "periodicard", "periodicard@2-3", "poly1", "poly2@1-2", "poly3",
    "ard@1-2*periodic@3", "matern32*rq", "(matern32@1-2+linear@3)*periodic@3",
    "bias*(se+linear)", "se@1*se@2*se@3+jitter", "poly2*matern52ard+bias",
    "(ard@1+nn@2)*(periodic@3+bias)", "((se))",
};

/* X with rows repeated (zero distances, where matern12's derivative in w
 * has its limit 0) and rows equal in one column only. */
static gsl_matrix *repeated_rows(gsl_rng *r, size_t n)
{
    gsl_matrix *X = random_matrix(r, n, 3);
    for (size_t j = 0; j < 3; j++) {
        gsl_matrix_set(X, 3, j, gsl_matrix_get(X, 0, j));
        gsl_matrix_set(X, n - 1, j, gsl_matrix_get(X, 1, j));
    }
    gsl_matrix_set(X, 4, 1, gsl_matrix_get(X, 2, 1));
    return X;
}

/* Every hyperparameter set by its name: length scales (log_w) to w, alpha
 * to pa, periods to pa if it is positive, else to -1 (a period of e^-6 would
 * make K oscillate in log p faster than differences can follow), amplitudes
 * and the rest to 0.3. */
static void set_by_kind(gpc_kernel *k, double w, double pa)
{
    size_t p = gpc_kernel_nparams(k);
    double *th = malloc(p * sizeof *th);
    for (size_t j = 0; j < p; j++) {
        const char *name = gpc_kernel_param_name(k, j);
        th[j] = strstr(name, "log_w") ? w
                : strstr(name, "log_p") ? fmax(pa, -1.0) : strstr(name, "log_alpha") ? pa : 0.3;
    }
    gpc_kernel_set_params(k, th);
    free(th);
}

/* Each spec at length scales e^-6 and e^6 (log w = 12 and -12), with
 * alpha e^-6 and e^6 and periods e^-1 and e^6, on rows with repeats: gradients against
 * differences, K positive semi-definite, the contraction. */
static void check_extremes(gsl_rng *r)
{
    for (size_t s = 0; s < sizeof new_specs / sizeof new_specs[0]; s++) {
        for (int side = -1; side <= 1; side += 2) {
            gsl_matrix *X = repeated_rows(r, 9);
            gpc_kernel *k;
            gpc_kernel_parse(new_specs[s], 3, &k);
            set_by_kind(k, 12.0 * side, 6.0 * side);
            char what[96];
            snprintf(what, sizeof what, "%s at log w %+d", new_specs[s], 12 * side);
            check_grad_matrix(k, X, what);
            check_matrix(k, X, what);
            check_contract(r, k, X, what);
            gpc_kernel_free(k);
            gsl_matrix_free(X);
        }
    }
}

/* K(X, X) of spec at theta (comma-separated values) for the two rows of X. */
static void kernel_at(const char *spec, const double *th, const gsl_matrix *X, gsl_matrix *K)
{
    gpc_kernel *k;
    if (gpc_kernel_parse(spec, X->size2, &k) != GPC_OK) {
        gsl_matrix_set_all(K, NAN);
        return;
    }
    gpc_kernel_set_params(k, th);
    gpc_kernel_matrix(k, X, K);
    gpc_kernel_free(k);
}

/* The new terms' values worked out by hand at two points (0, 0.5) and
 * (1, 0.5), a unit apart in column 1. */
static void check_new_known_values(void)
{
    gsl_matrix *X = gsl_matrix_calloc(2, 2), *K = gsl_matrix_alloc(2, 2);
    gsl_matrix_set(X, 1, 0, 1.0);
    gsl_matrix_set(X, 0, 1, 0.5);
    gsl_matrix_set(X, 1, 1, 0.5);
    double s3 = sqrt(3.0), s5 = sqrt(5.0), r2 = exp(0.5); /* w1 = e, r = e^(1/2) */
    struct {
        const char *spec;
        double th[5], k00, k01;
    } cases[] = {
        {"matern12", {0, 0}, 1.0, exp(-1.0)},
        {"matern32", {0, 0}, 1.0, (1 + s3) * exp(-s3)},
        {"matern52", {0, 0}, 1.0, (1 + s5 + 5.0 / 3.0) * exp(-s5)},
        {"matern32ard", {log(2.0), 1.0, -7.0}, 2.0, 2.0 * (1 + s3 * r2) * exp(-s3 * r2)},
        /* rq: (1 + 1 / (2 alpha))^-alpha, alpha = 2 */
        {"rq", {0, 0, log(2.0)}, 1.0, pow(1.25, -2.0)},
        /* periodic with p = 4: sin^2(pi/4) = 1/2, so exp(-2 w / 2) */
        {"periodic", {0, 0, log(4.0)}, 1.0, exp(-1.0)},
        {"periodicard", {0, 0, 3, log(4.0), 1}, 1.0, exp(-1.0)},
        /* poly2 with c = 1: (1 + 0.25)^2 at x0.x1, (1 + 0.25)^2 at x0.x0 */
        {"poly2", {0, 0}, 1.5625, 1.5625},
        {"poly3", {log(0.5), log(2.0)}, 0.5 * pow(2.25, 3), 0.5 * pow(2.25, 3)},
        /* ard on column 1 times periodic on column 2 (same in both rows) */
        {"ard@1*periodic@2", {log(3.0), 0, 0, 0, 0}, 3.0, 3.0 * exp(-0.5)},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kernel_at(cases[c].spec, cases[c].th, X, K);
        TEST_CLOSE(gsl_matrix_get(K, 0, 0), cases[c].k00, 1e-15, 0, "%s: k(x0, x0) by hand",
                   cases[c].spec);
        TEST_CLOSE(gsl_matrix_get(K, 0, 1), cases[c].k01, 2e-15, 0, "%s: k(x0, x1) by hand",
                   cases[c].spec);
    }
    gsl_matrix_free(X);
    gsl_matrix_free(K);
}

/* Identities between specs: a product of SE terms on split columns is ard
 * with the amplitudes multiplied; bias times a kernel scales it; rq at huge
 * alpha is se; matern12 equals its ARD form with equal weights. */
static void check_identities(gsl_rng *r)
{
    gsl_matrix *X = repeated_rows(r, 12), *A = gsl_matrix_alloc(12, 12),
               *B = gsl_matrix_alloc(12, 12);
    double prod[] = {0.4, -0.3, 0.2, -0.5, 0.7}, ard[] = {0.4 - 0.5, -0.3, 0.2, 0.7};
    kernel_at("ard@1-2*ard@3", prod, X, A);
    kernel_at("ard", ard, X, B);
    TEST_CLOSE(max_abs_diff(A, B), 0, 0, 1e-14, "ard@1-2*ard@3 is ard with v0 multiplied");
    double scaled[] = {log(2.5), 0.1, -0.4}, plain[] = {0.1 + log(2.5), -0.4};
    kernel_at("bias*matern52", scaled, X, A);
    kernel_at("matern52", plain, X, B);
    TEST_CLOSE(max_abs_diff(A, B), 0, 0, 1e-14, "bias*matern52 scales matern52 by the bias");
    double rq[] = {0.2, -0.7, 40.0}, se[] = {0.2, -0.7};
    kernel_at("rq", rq, X, A);
    kernel_at("se", se, X, B);
    TEST_CLOSE(max_abs_diff(A, B), 0, 0, 1e-14, "rq at alpha = e^40 is se");
    double iso[] = {0.3, -1.1}, ardw[] = {0.3, -1.1, -1.1, -1.1};
    kernel_at("matern12", iso, X, A);
    kernel_at("matern12ard", ardw, X, B);
    TEST_CLOSE(max_abs_diff(A, B), 0, 0, 1e-15, "matern12 is matern12ard with equal weights");
    gsl_matrix_free(X);
    gsl_matrix_free(A);
    gsl_matrix_free(B);
}

/* At a period far beyond the data (e^30) the periodic term is v0 exp(-2 w
 * theta^2) to rounding, theta = pi d / p, and its derivative in log p is
 * 4 w theta^2 k, which a form with 1 - cos would lose entirely.  matern12's
 * derivatives at zero distance are 0. */
static void check_edges(void)
{
    gsl_matrix *X = gsl_matrix_calloc(2, 1), *dK = gsl_matrix_alloc(2, 2);
    gsl_matrix_set(X, 1, 0, 0.7);
    gpc_kernel *k;
    gpc_kernel_parse("periodic", 1, &k);
    double th[] = {0.2, 1.5, 30.0};
    gpc_kernel_set_params(k, th);
    double theta = M_PI * 0.7 / exp(30.0), w = exp(1.5), kv = exp(0.2 - 2 * w * theta * theta);
    gpc_kernel_grad_matrix(k, X, 2, dK);
    TEST_CLOSE(gsl_matrix_get(dK, 0, 1), 4 * w * theta * theta * kv, 1e-14, 0,
               "periodic at p = e^30: dk/dlog p = 4 w theta^2 k (%.3g)", gsl_matrix_get(dK, 0, 1));
    gpc_kernel_grad_matrix(k, X, 1, dK);
    TEST_CLOSE(gsl_matrix_get(dK, 0, 1), -2 * w * theta * theta * kv, 1e-14, 0,
               "periodic at p = e^30: dk/dlog w = -2 w theta^2 k");
    gpc_kernel_free(k);
    gsl_matrix_set(X, 1, 0, 0.0); /* the two rows equal */
    const char *zero[] = {"matern12", "matern12ard", "matern32", "matern52ard"};
    for (size_t s = 0; s < 4; s++) {
        gpc_kernel_parse(zero[s], 1, &k);
        gpc_kernel_grad_matrix(k, X, 1, dK);
        TEST_OK(gsl_matrix_get(dK, 0, 1) == 0.0 && gsl_matrix_get(dK, 0, 0) == 0.0,
                "%s: dk/dlog w at zero distance is exactly 0", zero[s]);
        gpc_kernel_free(k);
    }
    gsl_matrix_free(X);
    gsl_matrix_free(dK);
}

/* Names in products and of the new terms; names after columns for ARD
 * periods. */
static void check_new_names(void)
{
    struct {
        const char *spec, *names;
    } cases[] = {
        {"ard@1-2*periodic@3", "t1.log_v0 t1.log_w1 t1.log_w2 t2.log_v0 t2.log_w t2.log_p"},
        {"matern32*rq", "t1.log_v0 t1.log_w t2.log_v0 t2.log_w t2.log_alpha"},
        {"periodicard@2-3", "log_v0 log_w2 log_w3 log_p2 log_p3"},
        {"rqard@1,3", "log_v0 log_w1 log_w3 log_alpha"},
        {"poly2+linear", "t1.log_v t1.log_c t2.log_v"},
        {"(matern52ard@1+linear@2)*bias", "log_v0 log_w1 log_v log_bias"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gpc_kernel *k;
        char got[256] = "";
        if (gpc_kernel_parse(cases[c].spec, 3, &k) != GPC_OK) {
            TEST_OK(0, "%s parses: %s", cases[c].spec, gpc_errmsg());
            continue;
        }
        for (size_t j = 0; j < gpc_kernel_nparams(k); j++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", j ? " " : "",
                     gpc_kernel_param_name(k, j));
        TEST_OK(strcmp(got, cases[c].names) == 0, "%s: names '%s'", cases[c].spec, got);
        gpc_kernel_free(k);
    }
    gpc_kernel *k;
    gpc_kernel_parse("periodicard@2-3", 3, &k);
    char *cols[] = {"a", "b c", "d", NULL};
    gpc_kernel_name_columns(k, cols);
    TEST_OK(strcmp(gpc_kernel_param_label(k, 4), "log_p.d") == 0 &&
                strcmp(gpc_kernel_param_label(k, 1), "log_w.b_c") == 0 &&
                gpc_kernel_param_index(k, "log_p.b_c") == 3,
            "periodicard: periods and length scales named after their columns (%s)",
            gpc_kernel_param_label(k, 4));
    gpc_kernel_free(k);
}

/* sum A o K(X, Xs) at theta. */
static double cross_sum(gpc_kernel *k, const double *th, const gsl_matrix *X,
                        const gsl_matrix *Xs, const gsl_matrix *A)
{
    gsl_matrix *C = gsl_matrix_alloc(X->size1, Xs->size1);
    gpc_kernel_set_params(k, th);
    gpc_kernel_cross(k, X, Xs, C);
    double sum = 0.0;
    for (size_t i = 0; i < C->size1 * C->size2; i++)
        sum += A->data[i] * C->data[i];
    gsl_matrix_free(C);
    return sum;
}

/* The cross contraction against fourth-order differences of sum A o
 * K(X, Xs), for every spec, on rows of which some repeat training rows,
 * and with enough rows for its parallel blocks. */
static void check_cross_contract(gsl_rng *r, size_t n)
{
    for (size_t sp = 0; sp < sizeof new_specs / sizeof new_specs[0] + 2; sp++) {
        const char *spec = sp == 0 ? "ard+bias+jitter" : sp == 1 ? "nn+linear@2" : new_specs[sp - 2];
        gsl_matrix *X = random_matrix(r, n, 3), *Xs = random_matrix(r, 5, 3),
                   *A = random_matrix(r, n, 5);
        gsl_vector_const_view x0 = gsl_matrix_const_row(X, 0);
        gsl_matrix_set_row(Xs, 2, &x0.vector); /* a test row equal to a training row */
        gpc_kernel *k;
        gpc_kernel_parse(spec, 3, &k);
        size_t p = gpc_kernel_nparams(k);
        double *th = malloc(p * sizeof *th), *s = malloc(p * sizeof *s), worst = 0.0;
        for (size_t j = 0; j < p; j++)
            th[j] = 1.5 * gsl_rng_uniform(r) - 1.0;
        gpc_kernel_set_params(k, th);
        gpc_kernel_cross_contract(k, X, Xs, NULL, A, s);
        for (size_t j = 0; j < p; j++) {
            double h = 1e-4, t0 = th[j], fd = 0.0;
            static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
            for (int i = 0; i < 4; i++) {
                th[j] = t0 + step[i] * h;
                fd += coef[i] * cross_sum(k, th, X, Xs, A) / (12 * h);
            }
            th[j] = t0;
            worst = fmax(worst, fabs(fd - s[j]) / (1.0 + fabs(s[j])));
        }
        TEST_CLOSE(worst, 0, 0, 1e-8, "%s: the cross contraction against differences (%zu rows)",
                   spec, n);
        free(th);
        free(s);
        gpc_kernel_free(k);
        gsl_matrix_free(X);
        gsl_matrix_free(Xs);
        gsl_matrix_free(A);
    }
}

/* The input derivatives of the cross contraction against fourth-order
 * differences in each coordinate of X (rows apart from Xs's, so that no
 * distance is zero, where matern12 has a cusp). */
static void check_cross_input_contract(gsl_rng *r)
{
    for (size_t sp = 0; sp < sizeof new_specs / sizeof new_specs[0] + 2; sp++) {
        const char *spec = sp == 0 ? "ard+bias+jitter" : sp == 1 ? "nn+linear@2" : new_specs[sp - 2];
        size_t n = 4;
        gsl_matrix *X = random_matrix(r, n, 3), *Xs = random_matrix(r, 6, 3),
                   *A = random_matrix(r, n, 6), *dX = gsl_matrix_alloc(n, 3);
        gpc_kernel *k;
        gpc_kernel_parse(spec, 3, &k);
        size_t p = gpc_kernel_nparams(k);
        double *th = malloc(p * sizeof *th), worst = 0.0;
        for (size_t j = 0; j < p; j++)
            th[j] = 1.5 * gsl_rng_uniform(r) - 1.0;
        gpc_kernel_set_params(k, th);
        gpc_kernel_cross_input_contract(k, X, Xs, NULL, A, dX);
        for (size_t a = 0; a < n; a++)
            for (size_t l = 0; l < 3; l++) {
                double h = 1e-4, x0 = gsl_matrix_get(X, a, l), fd = 0.0;
                static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
                for (int i = 0; i < 4; i++) {
                    gsl_matrix_set(X, a, l, x0 + step[i] * h);
                    fd += coef[i] * cross_sum(k, th, X, Xs, A) / (12 * h);
                }
                gsl_matrix_set(X, a, l, x0);
                double got = gsl_matrix_get(dX, a, l);
                worst = fmax(worst, fabs(fd - got) / (1.0 + fabs(got)));
            }
        TEST_CLOSE(worst, 0, 0, 1e-8, "%s: the cross contraction's input derivatives against "
                   "differences", spec);
        free(th);
        gpc_kernel_free(k);
        gsl_matrix_free(X);
        gsl_matrix_free(Xs);
        gsl_matrix_free(A);
        gsl_matrix_free(dX);
    }
}

/* gpc_kernel_cross_expanded: for a plain ard or se term the expanded
 * square equals the pass over the pairs to rounding relative to the
 * inputs' squared spread in length scales, near the origin and 1e4 from it
 * (the centring), and for any other kernel it is gpc_kernel_cross; the
 * contractions given K(X, Xs) give the same bits as computing it. */
static void check_cross_expanded(gsl_rng *r)
{
    const char *specs[] = {"ard", "se", "ard+bias"};
    for (size_t sp = 0; sp < 3; sp++)
        for (int far = 0; far < 2; far++) {
            size_t n = 7, m = 11, d = 5;
            gsl_matrix *X = random_matrix(r, n, d), *Xs = random_matrix(r, m, d),
                       *K1 = gsl_matrix_alloc(n, m), *K2 = gsl_matrix_alloc(n, m),
                       *A = random_matrix(r, n, m), *d1 = gsl_matrix_alloc(n, d),
                       *d2 = gsl_matrix_alloc(n, d);
            gpc_kernel *k;
            gpc_kernel_parse(specs[sp], d, &k);
            double th[8] = {0.4, -0.3, 0.6, -0.2, 0.1, 0.3, 0.5, 0.2}, s1[8], s2[8];
            gpc_kernel_set_params(k, th);
            if (far) {
                gsl_matrix_add_constant(X, 1e4);
                gsl_matrix_add_constant(Xs, 1e4);
            }
            gpc_kernel_cross(k, X, Xs, K1);
            gpc_kernel_cross_expanded(k, X, Xs, K2);
            double e = 0.0;
            for (size_t i = 0; i < n * m; i++)
                e = fmax(e, fabs(K1->data[i] - K2->data[i]) / K1->data[i]);
            /* the inputs' spread here is a few length scales */
            TEST_CLOSE(e, 0, 0, sp == 2 ? 0 : 1e-14, "%s%s: the expanded cross-covariance "
                       "equals the pass over the pairs", specs[sp], far ? ", 1e4 from the origin" : "");
            gpc_kernel_cross_contract(k, X, Xs, NULL, A, s1);
            gpc_kernel_cross_contract(k, X, Xs, K1, A, s2);
            gpc_kernel_cross_input_contract(k, X, Xs, NULL, A, d1);
            gpc_kernel_cross_input_contract(k, X, Xs, K1, A, d2);
            TEST_OK(!memcmp(s1, s2, gpc_kernel_nparams(k) * sizeof *s1) &&
                        !memcmp(d1->data, d2->data, n * d * sizeof *d1->data),
                    "%s%s: the contractions given K are those that compute it", specs[sp],
                    far ? ", 1e4 from the origin" : "");
            gpc_kernel_free(k);
            gsl_matrix_free(X);
            gsl_matrix_free(Xs);
            gsl_matrix_free(K1);
            gsl_matrix_free(K2);
            gsl_matrix_free(A);
            gsl_matrix_free(d1);
            gsl_matrix_free(d2);
        }
}

/* A plain ard or se term's input derivatives go through one matrix
 * product: they equal the pass over the pairs that the same term plus a
 * bias (whose input derivative is 0) takes, and differences of the cross
 * sum. */
static void check_cross_input_sq_exp(gsl_rng *r)
{
    const char *plain[] = {"ard", "se"}, *summed[] = {"ard+bias", "se+bias"};
    for (size_t sp = 0; sp < 2; sp++) {
        size_t n = 5, m = 9, d = 4;
        gsl_matrix *X = random_matrix(r, n, d), *Xs = random_matrix(r, m, d),
                   *A = random_matrix(r, n, m), *d1 = gsl_matrix_alloc(n, d),
                   *d2 = gsl_matrix_alloc(n, d);
        gpc_kernel *k1, *k2;
        gpc_kernel_parse(plain[sp], d, &k1);
        gpc_kernel_parse(summed[sp], d, &k2);
        size_t p = gpc_kernel_nparams(k1);
        double th[8] = {0.3, -0.4, 0.2, -1.1, 0.5, 0.0, 0.0, 0.0};
        gpc_kernel_set_params(k1, th);
        th[p] = 0.7; /* the bias */
        gpc_kernel_set_params(k2, th);
        gpc_kernel_cross_input_contract(k1, X, Xs, NULL, A, d1);
        gpc_kernel_cross_input_contract(k2, X, Xs, NULL, A, d2);
        double e = 0.0, worst = 0.0;
        for (size_t i = 0; i < n * d; i++)
            e = fmax(e, fabs(d1->data[i] - d2->data[i]) / (1.0 + fabs(d2->data[i])));
        TEST_CLOSE(e, 0, 0, 1e-14, "%s: the input derivatives by a matrix product equal the "
                   "pass over the pairs", plain[sp]);
        for (size_t a = 0; a < n; a++)
            for (size_t l = 0; l < d; l++) {
                double h = 1e-4, x0 = gsl_matrix_get(X, a, l), fd = 0.0;
                static const double step[4] = {-2, -1, 1, 2}, coef[4] = {1, -8, 8, -1};
                for (int i = 0; i < 4; i++) {
                    gsl_matrix_set(X, a, l, x0 + step[i] * h);
                    fd += coef[i] * cross_sum(k1, th, X, Xs, A) / (12 * h);
                }
                gsl_matrix_set(X, a, l, x0);
                worst = fmax(worst, fabs(fd - gsl_matrix_get(d1, a, l)) /
                                        (1.0 + fabs(gsl_matrix_get(d1, a, l))));
            }
        TEST_CLOSE(worst, 0, 0, 1e-8, "%s: and differences of the cross sum", plain[sp]);
        /* the hyperparameter contraction likewise, the bias's entry aside;
         * the inputs far from the origin, where the expanded squares would
         * cancel but for the centring */
        double s1[8], s2[8], off = 1e4;
        gsl_matrix_add_constant(X, off);
        gsl_matrix_add_constant(Xs, off);
        gpc_kernel_set_params(k1, th);
        gpc_kernel_cross_contract(k1, X, Xs, NULL, A, s1);
        gpc_kernel_cross_contract(k2, X, Xs, NULL, A, s2);
        e = 0.0;
        for (size_t j = 0; j < p; j++)
            e = fmax(e, fabs(s1[j] - s2[j]) / (1.0 + fabs(s2[j])));
        TEST_CLOSE(e, 0, 0, 1e-10, "%s: the hyperparameter contraction by matrix products "
                   "equals the pass over the pairs, inputs 1e4 from the origin", plain[sp]);
        gpc_kernel_free(k1);
        gpc_kernel_free(k2);
        gsl_matrix_free(X);
        gsl_matrix_free(Xs);
        gsl_matrix_free(A);
        gsl_matrix_free(d1);
        gsl_matrix_free(d2);
    }
}

/* Above GPC_PARALLEL_MIN_ROWS rows the input derivatives run on threads:
 * each row must equal the same row computed alone (one row, no threads). */
static void check_cross_input_parallel(gsl_rng *r)
{
    size_t n = 450;
    gsl_matrix *X = random_matrix(r, n, 3), *Xs = random_matrix(r, 7, 3),
               *A = random_matrix(r, n, 7), *dX = gsl_matrix_alloc(n, 3), *d1 = gsl_matrix_alloc(1, 3);
    gpc_kernel *k;
    gpc_kernel_parse("(matern32@1-2+linear@3)*periodic@3", 3, &k);
    gpc_kernel_cross_input_contract(k, X, Xs, NULL, A, dX);
    int same = 1;
    for (size_t a = 0; a < n; a++) {
        gsl_matrix_view xa = gsl_matrix_submatrix(X, a, 0, 1, 3), Aa = gsl_matrix_submatrix(A, a, 0, 1, 7);
        gpc_kernel_cross_input_contract(k, &xa.matrix, Xs, NULL, &Aa.matrix, d1);
        for (size_t l = 0; l < 3; l++)
            same &= gsl_matrix_get(d1, 0, l) == gsl_matrix_get(dX, a, l);
    }
    TEST_OK(same, "%zu rows: the input derivatives on threads equal each row's alone", n);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_matrix_free(Xs);
    gsl_matrix_free(A);
    gsl_matrix_free(dX);
    gsl_matrix_free(d1);
}

/* Specs that differ only in blanks and redundant parentheses have one
 * canonical form; the terms keep their order and their text. */
static void check_canonical_parentheses(void)
{
    struct {
        const char *given, *canonical;
    } cases[] = {
        {"((se))", "se"},
        {"(se@1)*bias", "se@1*bias"},
        {"(ard@1 + se@2) + (bias)", "ard@1+se@2+bias"},
        {"ard@1*(se@2*bias)", "ard@1*se@2*bias"},
        {"(ard@1+se@2)*bias", "(ard@1+se@2)*bias"},
        {"((ard@1*se@2)+bias)*(jitter)", "(ard@1*se@2+bias)*jitter"},
        {"(ard@1+se@2)*bias:per-class=3", "(ard@1+se@2)*bias:per-class=3"},
        {"ard+bias+jitter", "ard+bias+jitter"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gpc_kernel *k;
        int ok = gpc_kernel_parse(cases[c].given, 3, &k) == GPC_OK;
        TEST_OK(ok && strcmp(gpc_kernel_spec(k), cases[c].canonical) == 0,
                "'%s' is canonically '%s' (%s)", cases[c].given, cases[c].canonical,
                ok ? gpc_kernel_spec(k) : gpc_errmsg());
        if (ok)
            gpc_kernel_free(k);
    }
}

/* Bad specs: status GPC_EUSAGE and the place of the fault in the message. */
static void check_spec_positions(void)
{
    struct {
        const char *spec, *where;
    } cases[] = {
        {"ard*", "after '*', at its end"},
        {"ard * ", "after '*', at its end"},
        {"(ard+se", "not closed, at character 1"},
        {"ard)", "closes no '(', at character 4"},
        {"se+()", "empty parentheses, at character 4"},
        {"foo*ard", "unknown kernel term 'foo'"},
        {"ard*foo", "at character 5"},
        {"poly0", "degree"},
        {"poly", "degree"},
        {"poly33", "degree"},
        {"poly2.5", "not '.', at character 6"},
        {"matern32@9", "columns run from 1 to 3, at character 10"},
        {"ard(se)", "not '(', at character 4"},
        {"ard+*se", "empty term before '*', at character 5"},
        {"periodic@1+ard:discrete=1", "periodic in column 1, which is discrete"},
        {"se@1*se@2:simplex", "simplex weighs a sum of single terms"},
        {"matern32 @ 9", "at character 12"},
        {"se+:discrete=1", "after '+', at character 4"},
        {"se:discrete=1*se", "the discrete clause comes after all the terms"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gpc_kernel *k = NULL;
        int st = gpc_kernel_parse(cases[c].spec, 3, &k);
        TEST_OK(st == GPC_EUSAGE && strstr(gpc_errmsg(), cases[c].where),
                "'%s' is refused saying where: %s", cases[c].spec, gpc_errmsg());
        if (st == GPC_OK)
            gpc_kernel_free(k);
    }
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    const char *specs[] = {"ard", "se", "linear", "nn", "bias", "jitter", "ard+bias+jitter",
                           "ard@1-2+se@3", "nn+linear@2,3", "se+se"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        check_spec(r, specs[s], 9);
    /* enough rows for the contraction to run in parallel blocks */
    check_spec(r, "ard+bias+jitter", 450);
    /* with K, above the rows where it is contracted by matrix products */
    check_spec(r, "ard+jitter", GPC_KERNEL_CONTRACT_PRODUCT_ROWS + 1);
    check_widest_ard();
    check_contract_products(r, 60);
    check_contract_products(r, 450); /* its copies on OpenMP threads */
    /* discrete columns 2 and 3 take few values, so pairs match and differ */
    const char *dspecs[] = {"ard", "ard:discrete=2", "ard+bias+jitter:discrete=2-3", "se:discrete=3",
                            "ard@1-2+se@3+linear:discrete=2,3", "nn+ard@3,2:discrete=2",
                            "se+se@2:discrete=2"};
    for (size_t s = 0; s < sizeof dspecs / sizeof dspecs[0]; s++)
        check_spec_x(r, dspecs[s], 9, 1);
    check_spec_x(r, "ard+bias+jitter:discrete=2-3", 450, 1);
    for (size_t s = 0; s < sizeof new_specs / sizeof new_specs[0]; s++)
        check_spec(r, new_specs[s], 9);
    /* the parallel blocks of the contraction, with a tree and fused rows */
    check_spec(r, "(matern32@1-2+linear@3)*periodic@3", 450);
    check_spec(r, "matern52ard+rq+jitter", 450);
    /* products of ard and se terms are contracted as matrix products from K */
    check_spec(r, "ard@1-2*se@3", 60);
    check_spec(r, "se@2*ard@1,3+jitter", 450);
    const char *new_dspecs[] = {"matern32ard:discrete=2", "rq+matern12:discrete=2-3",
                                "matern52ard@1-2*periodic@1+bias:discrete=2"};
    for (size_t s = 0; s < sizeof new_dspecs / sizeof new_dspecs[0]; s++)
        check_spec_x(r, new_dspecs[s], 9, 1);
    check_extremes(r);
    check_new_known_values();
    check_identities(r);
    check_edges();
    check_new_names();
    check_spec_positions();
    check_canonical_parentheses();
    check_cross_contract(r, 9);
    check_cross_contract(r, 450); /* above GPC_PARALLEL_MIN_ROWS: blocks on threads */
    check_cross_input_contract(r);
    check_cross_expanded(r);
    check_cross_input_sq_exp(r);
    check_cross_input_parallel(r);
    check_known_values();
    check_discrete_values();
    check_discrete_cholesky();
    check_discrete_specs();
    check_names_and_defaults();
    check_column_labels();
    check_parse_errors();
    check_simplex(r);
    check_gram(r);
    gsl_rng_free(r);
    return tap_done();
}
