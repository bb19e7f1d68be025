/* Kernels: gradients against central differences, the one-pass gradient
 * contraction against explicit dK matrices, symmetry and positive
 * semi-definiteness, cross-covariances and diagonals, known values, names,
 * canonical specs and parse errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>

#include "err.h"
#include "kernel.h"
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

static gsl_matrix *random_matrix(gsl_rng *r, size_t n, size_t d)
{
    gsl_matrix *X = gsl_matrix_alloc(n, d);
    for (size_t i = 0; i < n * d; i++)
        X->data[i] = 2.0 * gsl_rng_uniform(r) - 1.0;
    return X;
}

/* dK/dtheta_j against central differences of K, for every j. */
static void check_grad_matrix(gpc_kernel *k, const gsl_matrix *X, const char *spec)
{
    size_t n = X->size1, p = gpc_kernel_nparams(k);
    gsl_matrix *dK = gsl_matrix_alloc(n, n), *Kp = gsl_matrix_alloc(n, n),
               *Km = gsl_matrix_alloc(n, n);
    double *th = malloc(p * sizeof *th);
    memcpy(th, gpc_kernel_params(k), p * sizeof *th);
    for (size_t j = 0; j < p; j++) {
        double h = 1e-5, t0 = th[j];
        gpc_kernel_grad_matrix(k, X, j, dK);
        th[j] = t0 + h;
        gpc_kernel_set_params(k, th);
        gpc_kernel_matrix(k, X, Kp);
        th[j] = t0 - h;
        gpc_kernel_set_params(k, th);
        gpc_kernel_matrix(k, X, Km);
        th[j] = t0;
        gpc_kernel_set_params(k, th);
        gsl_matrix_sub(Kp, Km);
        gsl_matrix_scale(Kp, 1.0 / (2 * h));
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

/* The contraction against sums over explicit dK_j; junk in R's strict upper
 * triangle must not matter. */
static void check_contract(gsl_rng *r, gpc_kernel *k, const gsl_matrix *X, const char *spec)
{
    size_t n = X->size1, p = gpc_kernel_nparams(k);
    gsl_matrix *R = gsl_matrix_alloc(n, n), *dK = gsl_matrix_alloc(n, n),
               *B = gsl_matrix_alloc(n, p);
    gsl_vector *u = gsl_vector_alloc(n), *v = gsl_vector_alloc(n), *dKv = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        gsl_vector_set(u, i, gsl_rng_uniform(r) - 0.5);
        gsl_vector_set(v, i, gsl_rng_uniform(r) - 0.5);
        for (size_t j = 0; j <= i; j++)
            gsl_matrix_set(R, i, j, gsl_rng_uniform(r) - 0.5);
        for (size_t j = i + 1; j < n; j++)
            gsl_matrix_set(R, i, j, 1e3 * gsl_rng_uniform(r)); /* never read */
    }
    double alpha = 0.7, beta = -1.3, *s = malloc(p * sizeof *s);
    gpc_kernel_grad_contract(k, X, u, alpha, R, beta, v, s, B);
    for (size_t j = 0; j < p; j++) {
        gpc_kernel_grad_matrix(k, X, j, dK);
        double want = 0.0;
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++) {
                double Rab = a >= b ? gsl_matrix_get(R, a, b) : gsl_matrix_get(R, b, a);
                want += gsl_matrix_get(dK, a, b) *
                        (alpha * gsl_vector_get(u, a) * gsl_vector_get(u, b) + beta * Rab);
            }
        TEST_CLOSE(s[j], want, 1e-11, 1e-13, "%s: contraction s for %s", spec,
                   gpc_kernel_param_name(k, j));
        gsl_blas_dgemv(CblasNoTrans, 1.0, dK, v, 0.0, dKv);
        gsl_vector_view col = gsl_matrix_column(B, j);
        gsl_vector_sub(dKv, &col.vector);
        TEST_CLOSE(fabs(gsl_vector_max(dKv)) + fabs(gsl_vector_min(dKv)), 0, 0, 1e-12,
                   "%s: contraction dK v for %s", spec, gpc_kernel_param_name(k, j));
    }
    free(s);
    gsl_matrix_free(R);
    gsl_matrix_free(dK);
    gsl_matrix_free(B);
    gsl_vector_free(u);
    gsl_vector_free(v);
    gsl_vector_free(dKv);
}

static void check_spec(gsl_rng *r, const char *spec, size_t n)
{
    gsl_matrix *X = random_matrix(r, n, 3);
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
    gpc_kernel_free(k2);
    gpc_kernel_free(c);
    gsl_matrix_free(K1);
    gsl_matrix_free(K2);
    free(th);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
}

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
    check_known_values();
    check_names_and_defaults();
    check_parse_errors();
    gsl_rng_free(r);
    return tap_done();
}
