/* The minibatch trainer (sparse/train): every row once per epoch, the
 * epoch's last batch shorter; with the whole data as the batch and the
 * hyperparameters and Z fixed, q reaches the full-batch fit's optimum, and
 * with minibatches of a fifth of the rows the bound over all rows ends
 * within 1e-3 (relative) of it;
 * with Adam on the hyperparameters the bound ends within 1e-4 of its
 * optimum over them; a run stopped and continued from a copy of its state ends in
 * the same bits as one that was not; a step that cannot be taken leaves
 * the state as it was. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "hyper/evidence.h"
#include "hyper/optimize.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "sparse/inducing.h"
#include "sparse/shard.h"
#include "sparse/svgp.h"
#include "sparse/train.h"
#include "random_matrix.h"
#include "tap.h"

typedef struct {
    size_t n;
    double *X, *y;
    gsl_matrix *Xm;
    gpc_rows *rows, *labels;
    gpc_train_data d;
} data;

static data make_data(gsl_rng *r, size_t n, size_t dim)
{
    data D = {.n = n};
    D.Xm = random_matrix(r, n, dim);
    D.X = D.Xm->data;
    D.y = malloc(n * sizeof *D.y);
    for (size_t i = 0; i < n; i++)
        D.y[i] = sin(3 * D.X[i * dim]) + 0.4 * (gsl_rng_uniform(r) - 0.5) > 0 ? 1.0 : -1.0;
    D.rows = gpc_rows_memory(D.X, n, dim, "X");
    D.labels = gpc_rows_memory(D.y, n, 1, "y");
    D.d = (gpc_train_data){D.rows, D.labels};
    return D;
}

static void free_data(data *D)
{
    gsl_matrix_free(D->Xm);
    gpc_rows_close(D->rows);
    gpc_rows_close(D->labels);
    free(D->y);
}

/* A trainer on D with m inducing inputs by k-means++ and theta. */
static gpc_train *start(const data *D, gpc_kernel *k, size_t m, const double *theta)
{
    gpc_train *t = gpc_train_alloc(1, m, D->Xm->size2, gpc_kernel_nparams(k));
    gpc_inducing_kmeanspp(D->Xm, m, 3, t->s->Z);
    memcpy(t->theta, theta, t->nparams * sizeof *theta);
    return t;
}

/* ---- every row once per epoch ---------------------------------------- */

static size_t *seen;
static double count_lik(const void *ctx, size_t C, double y, const double *mu, const double *s2,
                        double *g, double *h)
{
    (void)ctx;
    (void)mu;
    (void)s2;
    for (size_t c = 0; c < C; c++)
        g[c] = 0.0, h[c] = 0.0;
    seen[(size_t)y]++;
    return 0.0;
}

static void check_epochs(gsl_rng *r)
{
    size_t n = 60;
    data D = make_data(r, n, 2);
    for (size_t i = 0; i < n; i++)
        D.y[i] = (double)i; /* the row's number, for count_lik */
    seen = calloc(n, sizeof *seen);
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    double th[2] = {0.0, 0.0}, b;
    gpc_train *t = start(&D, k, 5, th);
    gpc_train_opts o;
    gpc_train_defaults(&o);
    o.batch = 25;
    gpc_svgp_lik lik = {count_lik, NULL};
    size_t batches[4], rows[3];
    for (int s = 0; s < 3; s++) {
        size_t before = 0;
        for (size_t i = 0; i < n; i++)
            before += seen[i];
        batches[s] = t->batch;
        gpc_train_step(t, k, &D.d, lik, &o, &b);
        rows[s] = 0;
        for (size_t i = 0; i < n; i++)
            rows[s] += seen[i];
        rows[s] -= before;
    }
    batches[3] = t->batch;
    TEST_OK(batches[0] == 0 && batches[1] == 1 && batches[2] == 2 && batches[3] == 0 &&
                t->epoch == 1 && t->step == 3,
            "60 rows in batches of at most 25: three batches, then the next epoch");
    TEST_OK(rows[0] == 20 && rows[1] == 20 && rows[2] == 20,
            "of 20 rows each, not 25, 25 and 10 (%zu, %zu, %zu)", rows[0], rows[1], rows[2]);
    int once = 1;
    for (size_t i = 0; i < n; i++)
        once &= seen[i] == 1;
    TEST_OK(once, "an epoch visits every row once");
    for (int s = 0; s < 3; s++)
        gpc_train_step(t, k, &D.d, lik, &o, &b);
    int twice = 1;
    for (size_t i = 0; i < n; i++)
        twice &= seen[i] == 2;
    TEST_OK(twice && t->epoch == 2, "and the next epoch every row once more");
    free(seen);
    gpc_train_free(t);
    gpc_kernel_free(k);
    free_data(&D);
}

/* ---- full batch: the full-batch fit's optimum -------------------------- */

static void check_full_batch(gsl_rng *r, gpc_lik gl)
{
    size_t n = 50, m = 8;
    data D = make_data(r, n, 2);
    gpc_kernel *k;
    gpc_kernel_parse("ard", 2, &k);
    double th[3] = {0.5, 0.3, -0.2}, b = NAN;
    unsigned char fixed[3] = {1, 1, 1};
    gpc_train *t = start(&D, k, m, th);
    gpc_train_opts o;
    gpc_train_defaults(&o);
    o.batch = n;
    o.rho = 1.0;
    o.fixed = fixed;
    o.fix_inducing = 1;
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &gl};
    for (int s = 0; s < 400; s++)
        gpc_train_step(t, k, &D.d, lik, &o, &b);

    gpc_svgp *ref = gpc_svgp_alloc(1, m, 2);
    gsl_matrix_memcpy(ref->Z, t->s->Z);
    gpc_kernel_set_params(k, th);
    gpc_svgp_factor(ref, k);
    gpc_svgp_fit_opts fo = {1e-15, 5000};
    gpc_svgp_fit_result res;
    gpc_svgp_fit_q(ref, k, D.Xm, D.y, lik, &fo, &res);
    TEST_CLOSE(b, res.bound, 1e-10, 0, "%s: full batches with the hyperparameters and Z "
               "fixed reach the full-batch fit's bound (%.10g)", gpc_lik_name(gl), res.bound);
    double e = 0.0;
    for (size_t j = 0; j < m; j++)
        e = fmax(e, fabs(gsl_matrix_get(t->s->M, 0, j) - gsl_matrix_get(ref->M, 0, j)));
    TEST_CLOSE(e, 0, 0, 1e-6, "%s: and its q's mean", gpc_lik_name(gl));
    gpc_svgp_free(ref);
    gpc_train_free(t);
    gpc_kernel_free(k);
    free_data(&D);
}

/* ---- Adam on the hyperparameters: a stationary point ------------------- */

/* Minibatches of 12 of 60 rows, q alone moving by the decreasing natural
 * steps: the bound over all rows at the end is within 1e-3 of the
 * full-batch optimum (relative), and closer than after the first epoch. */
static void check_minibatches(gsl_rng *r)
{
    size_t n = 60, m = 8;
    data D = make_data(r, n, 2);
    gpc_kernel *k;
    gpc_kernel_parse("ard", 2, &k);
    double th[3] = {0.5, 0.3, -0.2}, b = NAN, first = NAN, last = NAN;
    unsigned char fixed[3] = {1, 1, 1};
    gpc_lik gl = GPC_LIK_LOGISTIC;
    gpc_train *t = start(&D, k, m, th);
    gpc_train_opts o;
    gpc_train_defaults(&o);
    o.batch = 12;
    o.fixed = fixed;
    o.fix_inducing = 1;
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &gl};
    for (int s = 0; s < 1500; s++) {
        gpc_train_step(t, k, &D.d, lik, &o, &b);
        if (s == 4 || s == 1499) /* after the first epoch, and the last */
            gpc_svgp_gradient(t->s, k, D.Xm, D.y, lik, s == 4 ? &first : &last, NULL, NULL);
    }
    gpc_svgp *ref = gpc_svgp_alloc(1, m, 2);
    gsl_matrix_memcpy(ref->Z, t->s->Z);
    gpc_svgp_factor(ref, k);
    gpc_svgp_fit_opts fo = {1e-15, 5000};
    gpc_svgp_fit_result res;
    gpc_svgp_fit_q(ref, k, D.Xm, D.y, lik, &fo, &res);
    TEST_CLOSE(last, res.bound, 1e-3, 0, "minibatches of 12 of 60 rows: the bound over all rows "
               "(%.8g) ends within 1e-3 of the full-batch optimum (%.8g)", last, res.bound);
    TEST_OK(res.bound - last < res.bound - first && last <= res.bound + 1e-9,
            "and below it, closer than after the first epoch (%.8g)", first);
    gpc_svgp_free(ref);
    gpc_train_free(t);
    gpc_kernel_free(k);
    free_data(&D);
}

/* The bound's optimum over the hyperparameters from th, Z and the data D's
 * (full batch, by the evidence's optimiser): its value and point. */
static double optimum(const data *D, const gpc_kernel *k, const gsl_matrix *Z, double *th)
{
    gsl_vector_const_view y = gsl_vector_const_view_array(D->y, D->n);
    gpc_evidence *e = gpc_evidence_alloc(k, D->Xm, &y.vector, 2, GPC_LIK_LOGISTIC,
                                         GPC_METHOD_SVGP);
    gpc_optimize_opts o;
    gpc_optimize_result r;
    gpc_optimize_defaults(&o);
    o.gtol = 1e-7;
    gpc_evidence_set_tol(e, 1e-15);
    int st = gpc_evidence_set_inducing_inputs(e, Z), saved = gpc_verbosity;
    gpc_verbosity = 0; /* no progress lines in the test's output */
    if (st == GPC_OK)
        st = gpc_evidence_optimize(e, th, &o, &r);
    gpc_verbosity = saved;
    gpc_evidence_free(e);
    return st == GPC_OK && r.converged ? r.evidence : NAN;
}

/* Full batches, Z fixed: Adam's decreasing steps end near the optimum over
 * the hyperparameters that the full-batch optimiser finds, in the bound
 * (relative: the point is not compared, for the optimum lies along a
 * nearly flat direction that the optimiser follows far out). */
static void check_adam(gsl_rng *r)
{
    size_t n = 50, m = 8;
    data D = make_data(r, n, 2);
    gpc_kernel *k;
    gpc_kernel_parse("ard", 2, &k);
    double th[3] = {0.0, -1.0, -1.0}, b, best[3];
    gpc_lik gl = GPC_LIK_LOGISTIC;
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &gl};
    gpc_train *t = start(&D, k, m, th);
    gpc_train_opts o;
    gpc_train_defaults(&o);
    o.batch = n;
    o.rho = 1.0;
    o.fix_inducing = 1;
    o.lr = 0.5;
    memcpy(best, th, sizeof th);
    double b_opt = optimum(&D, k, t->s->Z, best);
    for (int s = 0; s < 3000; s++)
        gpc_train_step(t, k, &D.d, lik, &o, &b);
    /* the bound at the end, q refitted there */
    gpc_svgp *ref = gpc_svgp_alloc(1, m, 2);
    gpc_svgp_fit_opts fo = {1e-15, 5000};
    gpc_svgp_fit_result res;
    gsl_matrix_memcpy(ref->Z, t->s->Z);
    gpc_kernel_set_params(k, t->theta);
    gpc_svgp_factor(ref, k);
    gpc_svgp_fit_q(ref, k, D.Xm, D.y, lik, &fo, &res);
    TEST_OK(res.bound <= b_opt + 1e-9 * fabs(b_opt) && b_opt - res.bound < 1e-4 * fabs(b_opt),
            "Adam ends within 1e-4 (relative) of the bound's optimum over the hyperparameters "
            "(%.10g against %.10g)", res.bound, b_opt);
    gpc_svgp_free(ref);
    gpc_train_free(t);
    gpc_kernel_free(k);
    free_data(&D);
}

/* ---- stopped and continued ------------------------------------------- */

static gpc_train *copy(const gpc_train *a)
{
    const gpc_svgp *s = a->s;
    gpc_train *b = gpc_train_alloc(s->C, s->m, s->dim, a->nparams);
    size_t nadam = a->nparams + s->m * s->dim;
    gsl_matrix_memcpy(b->s->Z, s->Z);
    gsl_matrix_memcpy(b->s->M, s->M);
    for (size_t c = 0; c < s->C; c++)
        gsl_matrix_memcpy(b->s->S[c], s->S[c]);
    memcpy(b->theta, a->theta, a->nparams * sizeof *a->theta);
    memcpy(b->adam_m, a->adam_m, nadam * sizeof *a->adam_m);
    memcpy(b->adam_v, a->adam_v, nadam * sizeof *a->adam_v);
    b->step = a->step;
    b->epoch = a->epoch;
    b->batch = a->batch;
    return b;
}

static int same_bits(const gpc_train *a, const gpc_train *b)
{
    const gpc_svgp *s = a->s;
    size_t m = s->m, nadam = a->nparams + m * s->dim;
    int same = memcmp(a->theta, b->theta, a->nparams * sizeof(double)) == 0 &&
               memcmp(a->adam_m, b->adam_m, nadam * sizeof(double)) == 0 &&
               memcmp(a->adam_v, b->adam_v, nadam * sizeof(double)) == 0 &&
               memcmp(s->Z->data, b->s->Z->data, m * s->dim * sizeof(double)) == 0 &&
               memcmp(s->M->data, b->s->M->data, s->C * m * sizeof(double)) == 0 &&
               a->step == b->step && a->epoch == b->epoch && a->batch == b->batch;
    for (size_t c = 0; c < s->C; c++)
        same &= memcmp(s->S[c]->data, b->s->S[c]->data, m * m * sizeof(double)) == 0;
    return same;
}

static void check_resume(gsl_rng *r)
{
    size_t n = 90, m = 7;
    data D = make_data(r, n, 3);
    gpc_kernel *k;
    gpc_kernel_parse("matern52ard+bias", 3, &k);
    double th[5] = {0.2, -1.0, -0.5, -1.5, -2.0}, b;
    gpc_lik gl = GPC_LIK_PROBIT;
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &gl};
    gpc_train_opts o;
    gpc_train_defaults(&o);
    o.batch = 16;
    o.seed = 77;
    gpc_train *a = start(&D, k, m, th), *c;
    for (int s = 0; s < 50; s++)
        gpc_train_step(a, k, &D.d, lik, &o, &b);
    gpc_train *half = start(&D, k, m, th);
    for (int s = 0; s < 23; s++) /* stopped inside an epoch */
        gpc_train_step(half, k, &D.d, lik, &o, &b);
    c = copy(half);
    gpc_train_free(half);
    for (int s = 23; s < 50; s++)
        gpc_train_step(c, k, &D.d, lik, &o, &b);
    TEST_OK(same_bits(a, c), "50 steps straight and 23 + 27 from a copy of the state end in "
            "the same bits (epoch %llu, batch %llu)", (unsigned long long)a->epoch,
            (unsigned long long)a->batch);
    gpc_train_free(a);
    gpc_train_free(c);
    gpc_kernel_free(k);
    free_data(&D);
}

/* A likelihood that is not finite: the step fails and changes nothing. */
static double nan_lik(const void *ctx, size_t C, double y, const double *mu, const double *s2,
                      double *g, double *h)
{
    (void)ctx;
    (void)y;
    (void)mu;
    (void)s2;
    for (size_t c = 0; c < C; c++)
        g[c] = 0.0, h[c] = 0.0;
    return NAN;
}

static void check_failure(gsl_rng *r)
{
    size_t n = 30, m = 4;
    data D = make_data(r, n, 2);
    gpc_kernel *k;
    gpc_kernel_parse("se", 2, &k);
    double th[2] = {0.0, 0.0}, b;
    gpc_train *t = start(&D, k, m, th), *before = copy(t);
    gpc_train_opts o;
    gpc_train_defaults(&o);
    gpc_svgp_lik lik = {nan_lik, NULL};
    int rc = gpc_train_step(t, k, &D.d, lik, &o, &b);
    TEST_OK(rc == GPC_ENUM && same_bits(t, before), "a step on a non-finite likelihood fails "
            "and leaves the state as it was: %s", gpc_errmsg());
    gpc_train_free(t);
    gpc_train_free(before);
    gpc_kernel_free(k);
    free_data(&D);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 41);
    check_epochs(r);
    check_full_batch(r, GPC_LIK_LOGISTIC);
    check_full_batch(r, GPC_LIK_PROBIT);
    check_adam(r);
    check_resume(r);
    check_failure(r);
    check_minibatches(r);
    gsl_rng_free(r);
    return tap_done();
}
