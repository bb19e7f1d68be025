/* Hybrid Monte Carlo: moments of known targets through the sampler's own
 * code path, energy error falling as the square of the step size, exact
 * reproducibility and extension, and a GPC posterior over two hyperparameters
 * against brute-force quadrature on a grid; chain files written row by row,
 * kept whole when a run fails or stops, and continued exactly. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "hyper/evidence.h"
#include "sampling/chain.h"
#include "sampling/hmc.h"
#include "tap.h"

/* U = sum_j theta_j^2 / (2 s_j^2) + c theta_0^4 / 4 (c = 0: Gaussian). */
typedef struct {
    double s[2], c;
} target;

static int target_eval(void *ctx, const double *th, double *U, double *g, double *aux)
{
    const target *t = ctx;
    *U = t->c * pow(th[0], 4) / 4;
    for (int j = 0; j < 2; j++) {
        *U += th[j] * th[j] / (2 * t->s[j] * t->s[j]);
        g[j] = th[j] / (t->s[j] * t->s[j]);
    }
    g[0] += t->c * pow(th[0], 3);
    *aux = -*U;
    return GPC_OK;
}

/* Mean of x[0..n) and its Monte Carlo standard error by 25 batch means. */
static void batch_mean(const double *x, size_t n, double *mean, double *se)
{
    size_t nb = 25, bl = n / nb;
    double m = 0, bm[25], v = 0;
    for (size_t b = 0; b < nb; b++) {
        bm[b] = 0;
        for (size_t i = b * bl; i < (b + 1) * bl; i++)
            bm[b] += x[i] / bl;
        m += bm[b] / nb;
    }
    for (size_t b = 0; b < nb; b++)
        v += (bm[b] - m) * (bm[b] - m) / (nb - 1);
    *mean = m;
    *se = sqrt(v / nb);
}

static void test_gaussian(double persistence)
{
    target t = {{1.0, 2.0}, 0.0};
    gpc_potential U = {target_eval, NULL, &t};
    gpc_hmc_opts o = {0.3, 7, persistence, 5, NULL};
    gpc_hmc *h = gpc_hmc_alloc(2);
    double th0[2] = {3.0, -3.0};
    gpc_hmc_set_state(h, th0, NULL, 0);
    size_t n = 20000;
    double *x = malloc(4 * n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        gpc_hmc_iterate(h, &U, &o);
        x[i] = h->theta[0];
        x[n + i] = h->theta[1];
        x[2 * n + i] = h->theta[0] * h->theta[0];
        x[3 * n + i] = h->theta[1] * h->theta[1];
    }
    const double want[4] = {0, 0, 1, 4};
    const char *what[4] = {"mean theta_0", "mean theta_1", "E theta_0^2", "E theta_1^2"};
    for (int k = 0; k < 4; k++) {
        double m, se;
        batch_mean(x + k * n, n, &m, &se);
        TEST_CLOSE(m, want[k], 0, 4 * se, "Gaussian target, persistence %g: %s = %.4f +- %.4f",
                   persistence, what[k], m, se);
    }
    TEST_OK(h->n_accepted > (long)n / 2, "Gaussian target: acceptance %.2f",
            (double)h->n_accepted / n);
    free(x);
    gpc_hmc_free(h);
}

/* U = theta' S^-1 theta / 2 with S = [[1, 1.6], [1.6, 4]] (correlation 0.8). */
static int correlated_eval(void *ctx, const double *th, double *U, double *g, double *aux)
{
    (void)ctx;
    const double det = 4.0 - 1.6 * 1.6, a = 4.0 / det, b = -1.6 / det, d = 1.0 / det;
    g[0] = a * th[0] + b * th[1];
    g[1] = b * th[0] + d * th[1];
    *U = 0.5 * (th[0] * g[0] + th[1] * g[1]);
    *aux = -*U;
    return GPC_OK;
}

/* With theta_1 fixed at 2, the chain samples the conditional of theta_0:
 * N(0.8 * (1 / 2) * 2, 1 - 0.8^2) = N(0.8, 0.36), and theta_1 never moves. */
static void test_fixed(void)
{
    gpc_potential U = {correlated_eval, NULL, NULL};
    const unsigned char fixed[2] = {0, 1};
    gpc_hmc_opts o = {0.3, 7, 0.0, 3, fixed};
    gpc_hmc *h = gpc_hmc_alloc(2);
    double th0[2] = {-2.0, 2.0};
    gpc_hmc_set_state(h, th0, NULL, 0);
    size_t n = 20000;
    double *x = malloc(2 * n * sizeof *x);
    int moved = 0;
    for (size_t i = 0; i < n; i++) {
        gpc_hmc_iterate(h, &U, &o);
        moved |= h->theta[1] != 2.0;
        x[i] = h->theta[0];
        x[n + i] = (h->theta[0] - 0.8) * (h->theta[0] - 0.8);
    }
    TEST_OK(!moved, "fixed coordinate: theta_1 stays at 2");
    double m, se;
    batch_mean(x, n, &m, &se);
    TEST_CLOSE(m, 0.8, 0, 4 * se, "fixed coordinate: conditional mean %.4f +- %.4f", m, se);
    batch_mean(x + n, n, &m, &se);
    TEST_CLOSE(m, 0.36, 0, 4 * se, "fixed coordinate: conditional variance %.4f +- %.4f", m, se);
    free(x);
    gpc_hmc_free(h);
}

/* The leapfrog energy error over a fixed trajectory length scales as eps^2. */
static void test_energy_error(void)
{
    target t = {{1.0, 0.7}, 0.5};
    gpc_potential U = {target_eval, NULL, &t};
    gpc_hmc *h = gpc_hmc_alloc(2);
    double th0[2] = {0.8, -0.4}, mom[2] = {1.1, 0.6}, dH[3];
    gpc_hmc_set_state(h, th0, NULL, 0);
    for (int k = 0; k < 3; k++) {
        gpc_hmc_opts o = {0.2 / (1 << k), 5 << k, 0.0, 1, NULL};
        gpc_hmc_energy_error(h, &U, &o, mom, &dH[k]);
    }
    TEST_CLOSE(dH[0] / dH[1], 4.0, 0.15, 0, "energy error ratio for eps 0.2 -> 0.1: %.3f",
               dH[0] / dH[1]);
    TEST_CLOSE(dH[1] / dH[2], 4.0, 0.05, 0, "energy error ratio for eps 0.1 -> 0.05: %.3f",
               dH[1] / dH[2]);
    gpc_hmc_free(h);
}

/* Same seed, same chain; a chain continued from its state after 30
 * iterations equals one run of 50. */
static void test_reproducible(double persistence)
{
    target t = {{1.0, 2.0}, 0.3};
    gpc_potential U = {target_eval, NULL, &t};
    gpc_hmc_opts o = {0.3, 5, persistence, 42, NULL};
    double th0[2] = {1.0, 1.0}, a[50][2], b[50][2];
    gpc_hmc *h = gpc_hmc_alloc(2);
    gpc_hmc_set_state(h, th0, NULL, 0);
    for (int i = 0; i < 50; i++) {
        gpc_hmc_iterate(h, &U, &o);
        memcpy(a[i], h->theta, sizeof a[i]);
    }
    gpc_hmc *g = gpc_hmc_alloc(2);
    gpc_hmc_set_state(g, th0, NULL, 0);
    for (int i = 0; i < 30; i++) {
        gpc_hmc_iterate(g, &U, &o);
        memcpy(b[i], g->theta, sizeof b[i]);
    }
    gpc_hmc *e = gpc_hmc_alloc(2);
    gpc_hmc_set_state(e, g->theta, g->mom, g->iteration);
    for (int i = 30; i < 50; i++) {
        gpc_hmc_iterate(e, &U, &o);
        memcpy(b[i], e->theta, sizeof b[i]);
    }
    TEST_OK(memcmp(a, b, sizeof a) == 0,
            "persistence %g: a chain extended after 30 iterations equals one run of 50",
            persistence);
    gpc_hmc_opts o2 = o;
    o2.seed = 43;
    gpc_hmc_set_state(g, th0, NULL, 0);
    for (int i = 0; i < 50; i++)
        gpc_hmc_iterate(g, &U, &o2);
    TEST_OK(memcmp(g->theta, a[49], sizeof a[49]) != 0, "another seed, another chain");
    gpc_hmc_free(h);
    gpc_hmc_free(g);
    gpc_hmc_free(e);
}

/* GPC with kernel 'se' (log_v0, log_w) on a small 1-D problem: posterior
 * means of both under HMC against quadrature of q(y|theta) p(theta) on a
 * fine grid. */
static void test_gpc_posterior(void)
{
    size_t n = 24;
    gsl_matrix *X = gsl_matrix_alloc(n, 1);
    gsl_vector *y = gsl_vector_alloc(n);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    for (size_t i = 0; i < n; i++) {
        double x = 4.0 * gsl_rng_uniform(r) - 2.0;
        gsl_matrix_set(X, i, 0, x);
        gsl_vector_set(y, i, sin(2 * x) + 0.6 * (gsl_rng_uniform(r) - 0.5) > 0 ? 1 : -1);
    }
    gpc_kernel *k;
    gpc_kernel_parse("se", 1, &k);
    gpc_evidence *ev = gpc_evidence_alloc(k, X, y, 2, GPC_LIK_LOGISTIC, GPC_METHOD_LAPLACE);
    gpc_posterior post = {ev, 0.0, 1.5};
    gpc_potential U = {gpc_posterior_eval, gpc_posterior_restart, &post};

    /* quadrature: grid over [-6, 6]^2, step 0.1 (the posterior lies well inside) */
    double h = 0.1, lo = -6.0, zmax = -HUGE_VAL, s0 = 0, s1 = 0, s2 = 0;
    int m = 121;
    double *lz = malloc(m * m * sizeof *lz), g[2], aux;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double th[2] = {lo + i * h, lo + j * h}, u;
            gpc_posterior_eval(&post, th, &u, g, &aux);
            lz[i * m + j] = -u;
            zmax = fmax(zmax, -u);
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double wgt = exp(lz[i * m + j] - zmax);
            s0 += wgt;
            s1 += wgt * (lo + i * h);
            s2 += wgt * (lo + j * h);
        }
    double want[2] = {s1 / s0, s2 / s0};

    gpc_hmc *hm = gpc_hmc_alloc(2);
    double th0[2] = {0.0, 0.0};
    gpc_hmc_set_state(hm, th0, NULL, 0);
    gpc_hmc_opts o = {0.3, 10, 0.0, 3, NULL};
    size_t burn = 100, iters = 2500;
    double *x = malloc(2 * iters * sizeof *x);
    for (size_t i = 0; i < burn + iters; i++) {
        gpc_hmc_iterate(hm, &U, &o);
        if (i >= burn) {
            x[i - burn] = hm->theta[0];
            x[iters + i - burn] = hm->theta[1];
        }
    }
    const char *names[2] = {"log_v0", "log_w"};
    for (int j = 0; j < 2; j++) {
        double mean, se;
        batch_mean(x + j * iters, iters, &mean, &se);
        TEST_CLOSE(mean, want[j], 0, 4 * se + 0.01,
                   "GPC posterior mean of %s: HMC %.4f +- %.4f, quadrature %.4f", names[j],
                   mean, se, want[j]);
    }
    free(x);
    free(lz);
    gpc_hmc_free(hm);
    gpc_evidence_free(ev);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_rng_free(r);
}

/* ---- chain files through interruption ---------------------------------- */

/* The Gaussian target, failing at the start of iteration fail_at (counted by
 * the restart hook, which every iteration calls first; 0: never). */
typedef struct {
    target t;
    long restarts, fail_at;
} failing;

static void failing_restart(void *ctx) { ((failing *)ctx)->restarts++; }

static int failing_eval(void *ctx, const double *th, double *U, double *g, double *aux)
{
    failing *f = ctx;
    if (f->restarts == f->fail_at)
        return gpc_fail(GPC_ENUM, "cannot evaluate");
    return target_eval(&f->t, th, U, g, aux);
}

static char dir[] = "/tmp/gpc-test-chain-XXXXXX";

static char *in_dir(const char *name)
{
    static char buf[2][256];
    static int k;
    k = !k;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Files in the test directory, and rows (lines starting with a digit) of one. */
static int dir_entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static int file_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, at_start = 1, c;
    while ((c = getc(f)) != EOF) {
        n += at_start && c >= '0' && c <= '9';
        at_start = c == '\n';
    }
    fclose(f);
    return n;
}

static gpc_chain_settings chain_settings(void)
{
    gpc_chain_settings s = {.kernel = "se", .lik = GPC_LIK_LOGISTIC, .dim = 1, .ntrain = 1,
                            .prior_mean = -3, .prior_sd = 3, .hmc = {0.3, 5, 0.0, 7, NULL}};
    return s;
}

/* A new chain of up to n rows; returns gpc_chain_run's status. */
static int new_chain(const char *path, long n, long fail_at, long *done, int close)
{
    gpc_chain_settings s = chain_settings();
    failing f = {{{1.0, 2.0}, 0.0}, 0, fail_at};
    gpc_potential U = {failing_eval, failing_restart, &f};
    gpc_kernel *k;
    gpc_kernel_parse("se", 1, &k);
    gpc_hmc *h = gpc_hmc_alloc(2);
    double th0[2] = {1.0, -1.0};
    gpc_hmc_set_state(h, th0, NULL, 0);
    gpc_chain_out *o;
    int st = gpc_chain_out_create(path, &o);
    if (st == GPC_OK) {
        gpc_chain_write_header(gpc_chain_out_file(o), &s, k);
        st = gpc_chain_run(o, h, &U, &s, NULL, n, NULL, NULL, done);
        if (close && st == GPC_OK)
            st = gpc_chain_out_close(o);
        else
            gpc_chain_out_abort(o);
    }
    gpc_hmc_free(h);
    gpc_kernel_free(k);
    return st;
}

/* Continue the chain at path in place by n rows. */
static int extend_chain(const char *path, long n, long *done)
{
    gpc_chain *c;
    int st = gpc_chain_read(path, 1, &c);
    if (st != GPC_OK)
        return st;
    failing f = {{{1.0, 2.0}, 0.0}, 0, 0};
    gpc_potential U = {failing_eval, failing_restart, &f};
    gpc_hmc *h = gpc_hmc_alloc(c->p);
    gpc_hmc_set_state(h, c->theta + (c->rows - 1) * c->p, NULL, c->iteration[c->rows - 1]);
    gpc_chain_out *o;
    if ((st = gpc_chain_out_append(path, c, &o)) == GPC_OK) {
        st = gpc_chain_run(o, h, &U, &c->set, NULL, n, NULL, NULL, done);
        if (st == GPC_OK)
            st = gpc_chain_out_close(o);
        else
            gpc_chain_out_abort(o);
    }
    gpc_hmc_free(h);
    gpc_chain_free(c);
    return st;
}

static int files_equal(const char *a, const char *b)
{
    FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
    int same = f && g, c;
    while (same && (c = getc(f)) == getc(g))
        if (c == EOF)
            break;
    same = same && c == EOF;
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    return same;
}

static void test_chain_durable(void)
{
    if (!mkdtemp(dir)) {
        TEST_OK(0, "a temporary directory for chain files");
        return;
    }
    long done;
    int st = new_chain(in_dir("a.txt"), 10, 1, &done, 1);
    TEST_OK(st == GPC_ENUM && done == 0 && dir_entries() == 0,
            "a chain failing at its first iteration leaves no file (status %d, %ld rows, %d "
            "files)", st, done, dir_entries());
    st = new_chain(in_dir("a.txt"), 10, 4, &done, 1);
    TEST_OK(st == GPC_ENUM && done == 3 && file_rows(in_dir("a.txt")) == 3 &&
                dir_entries() == 1,
            "failing at iteration 4 keeps the 3 rows before it (%ld written, %d on disk)", done,
            file_rows(in_dir("a.txt")));
    st = extend_chain(in_dir("a.txt"), 4, &done);
    TEST_OK(st == GPC_OK && file_rows(in_dir("a.txt")) == 7, "and it continues in place");
    new_chain(in_dir("b.txt"), 7, 0, &done, 1);
    TEST_OK(files_equal(in_dir("a.txt"), in_dir("b.txt")),
            "into the chain one run of 7 iterations writes, byte for byte");

    /* killed while writing a row: the row is cut short, without its newline */
    FILE *f = fopen(in_dir("a.txt"), "r+b");
    fseek(f, -9, SEEK_END);
    long keep = ftell(f);
    fclose(f);
    if (truncate(in_dir("a.txt"), keep) != 0)
        TEST_OK(0, "truncate a.txt");
    gpc_chain *c;
    st = gpc_chain_read(in_dir("a.txt"), 1, &c);
    TEST_OK(st == GPC_OK && c->rows == 6 && c->text_len < c->file_len,
            "a last row cut short is left out when the chain is read");
    gpc_chain_free(c);
    st = extend_chain(in_dir("a.txt"), 1, &done);
    TEST_OK(st == GPC_OK && files_equal(in_dir("a.txt"), in_dir("b.txt")),
            "and continuing the chain replaces it with the whole row");

    unlink(in_dir("a.txt"));
    unlink(in_dir("b.txt"));
    TEST_OK(dir_entries() == 0, "no temporary file is left behind");
    rmdir(dir);
}

int main(void)
{
    gpc_gsl_quiet();
    test_gaussian(0.0);
    test_gaussian(0.8);
    test_fixed();
    test_energy_error();
    test_reproducible(0.0);
    test_reproducible(0.8);
    test_gpc_posterior();
    test_chain_durable();
    return tap_done();
}
