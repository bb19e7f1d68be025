/* Anderson acceleration (anderson.h) on linear maps G(x) = A x + b, where
 * it is GMRES in disguise: with a history as long as the dimension it
 * reaches the fixed point x* = (I - A)^-1 b in about that many steps, where
 * the plain iteration, contracting at A's spectral radius 0.99, needs
 * thousands; a short history still beats the plain steps; the damped step
 * and the history's bookkeeping (reset, the ring of changes) are checked
 * against a direct computation. */
#include <math.h>
#include <stdlib.h>

#include "linalg/anderson.h"
#include "tap.h"

#define N 8

/* A symmetric with eigenvalues spread over [0, 0.99] in a rotated basis
 * (a Householder reflection of a diagonal), and b. */
static void problem(double A[N][N], double b[N], double xstar[N])
{
    double v[N], vv = 0.0, D[N];
    for (int i = 0; i < N; i++) {
        v[i] = 1.0 + 0.3 * i;
        vv += v[i] * v[i];
        D[i] = 0.99 * (double)i / (N - 1);
        b[i] = sin(1.0 + i);
    }
    double H[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            H[i][j] = (i == j) - 2.0 * v[i] * v[j] / vv;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < N; k++)
                s += H[i][k] * D[k] * H[j][k];
            A[i][j] = s;
        }
    /* x* = H (I - D)^-1 H b */
    double Hb[N];
    for (int i = 0; i < N; i++) {
        Hb[i] = 0.0;
        for (int k = 0; k < N; k++)
            Hb[i] += H[i][k] * b[k];
        Hb[i] /= 1.0 - D[i];
    }
    for (int i = 0; i < N; i++) {
        xstar[i] = 0.0;
        for (int k = 0; k < N; k++)
            xstar[i] += H[i][k] * Hb[k];
    }
}

static void residual(double A[N][N], const double *b, const double *x, double *r)
{
    for (int i = 0; i < N; i++) {
        double g = b[i];
        for (int j = 0; j < N; j++)
            g += A[i][j] * x[j];
        r[i] = g - x[i];
    }
}

static double error(const double *x, const double *xstar)
{
    double e = 0.0;
    for (int i = 0; i < N; i++)
        e = fmax(e, fabs(x[i] - xstar[i]));
    return e;
}

/* Steps (at most max) until x is within tol of x*, accelerated with a
 * history of depth (0: plain steps x + r). */
static int steps_to(double A[N][N], const double *b, const double *xstar, size_t depth,
                    double tol, int max)
{
    double x[N] = {0}, r[N], step[N];
    gpc_anderson *a = gpc_anderson_alloc(N, depth ? depth : 1);
    int it = 0;
    while (it < max && error(x, xstar) > tol) {
        residual(A, b, x, r);
        gpc_anderson_push(a, x, r);
        if (depth == 0 || gpc_anderson_step(a, r, 1.0, step) != 0)
            for (int i = 0; i < N; i++)
                step[i] = r[i];
        for (int i = 0; i < N; i++)
            x[i] += step[i];
        it++;
    }
    gpc_anderson_free(a);
    return it;
}

int main(void)
{
    double A[N][N], b[N], xstar[N];
    problem(A, b, xstar);
    int plain = steps_to(A, b, xstar, 0, 1e-10, 100000);
    int full = steps_to(A, b, xstar, N, 1e-10, 1000);
    int short_history = steps_to(A, b, xstar, 3, 1e-10, 100000);
    TEST_OK(plain > 2000, "plain steps crawl at rate 0.99: %d steps to 1e-10", plain);
    TEST_OK(full <= N + 3, "a history of %d reaches 1e-10 in %d steps (at most %d + 3; GMRES takes %d + 1 "
            "in exact arithmetic)",
            N, full, N, N);
    TEST_OK(short_history < plain / 10, "a history of 3: %d steps, under a tenth of the plain "
            "steps' %d", short_history, plain);

    /* one step by hand: after x0 = 0 and x1 = x0 + r0, gamma minimises
     * |r1 - (r1 - r0) gamma| and the step is d r1 - (dx + d dr) gamma */
    double x0[N] = {0}, r0[N], x1[N], r1[N], step[N], d = 0.7;
    gpc_anderson *a = gpc_anderson_alloc(N, 4);
    TEST_OK(gpc_anderson_step(a, r1, d, step) == -1, "no history: no step");
    residual(A, b, x0, r0);
    gpc_anderson_push(a, x0, r0);
    TEST_OK(gpc_anderson_step(a, r0, d, step) == -1 && a->k == 0,
            "one iterate: no change yet, no step");
    for (int i = 0; i < N; i++)
        x1[i] = x0[i] + r0[i];
    residual(A, b, x1, r1);
    gpc_anderson_push(a, x1, r1);
    double num = 0.0, den = 0.0;
    for (int i = 0; i < N; i++) {
        double dr = r1[i] - r0[i];
        num += dr * r1[i];
        den += dr * dr;
    }
    double gamma = num / den, worst = 0.0;
    TEST_OK(gpc_anderson_step(a, r1, d, step) == 0, "two iterates: a step");
    for (int i = 0; i < N; i++) {
        double want = d * r1[i] - ((x1[i] - x0[i]) + d * (r1[i] - r0[i])) * gamma;
        worst = fmax(worst, fabs(step[i] - want) / (fabs(want) + 1e-300));
    }
    TEST_OK(worst < 1e-10, "the step equals the one-column formula (largest relative "
            "difference %.1e)", worst);
    gpc_anderson_reset(a);
    TEST_OK(a->k == 0 && gpc_anderson_step(a, r1, d, step) == -1, "reset forgets the history");
    /* the ring: six pushes into a depth of 4 keep four changes */
    for (int t = 0; t < 6; t++) {
        double xt[N], rt[N];
        for (int i = 0; i < N; i++)
            xt[i] = 0.1 * t * (i + 1) + 0.01 * t * t;
        residual(A, b, xt, rt);
        gpc_anderson_push(a, xt, rt);
    }
    TEST_OK(a->k == 4 && a->next == 1, "six iterates in a history of four: four changes, the "
            "oldest overwritten (k %zu, next %zu)", a->k, a->next);
    gpc_anderson_free(a);
    TEST_OK(gpc_anderson_bytes(1000, 5) == 12 * 1000 * sizeof(double),
            "the stated bytes: two histories of 5 vectors and the last iterate and residual");
    return tap_done();
}
