/* expect — Gaussian expectations of log p(y | f) by a fixed quadrature rule.
 *
 * Write z = y f, so that E = integral g(z) N(z | m, s^2) dz with g(z) =
 * log p(+1 | z) and m = y mu.  g is analytic in a strip about the real axis
 * (the logistic has poles at +-i pi; log Phi's nearest singularities, the
 * zeros of Phi, are as far), but it bends over a width of about 1 at z = 0:
 * nearly linear (logistic) or quadratic (probit) on the left, nearly 0 on
 * the right.  In t = (z - m) / s the bend has width 1 / s, so Gauss-Hermite
 * in t converges quickly only while s is small, or while the bend lies so
 * far in the Gaussian tail that it carries no weight.  Hence two rules:
 *
 *  - Gauss-Hermite with GH_N nodes when s <= S_SMALL or |m| / s >= T_FAR.
 *    g is analytic in a strip of half-width about 3 / s in t, so up to
 *    s = 1 the rule's error is at the rounding level (at s = 2 it would be
 *    1e-10 for the probit), and beyond 10 standard deviations the bend's
 *    weight is below 1e-22.
 *
 *  - Otherwise a composite Gauss-Legendre rule in z, split at the bend:
 *    on each side x = |z| runs over [0, 1], then K_GEO panels in geometric
 *    progression from 1 to s (the bend's scale up to the Gaussian's), then
 *    M_WIDE equal panels from s to X = max(0, +-m) + T_RANGE s, past which
 *    the Gaussian weight is below phi(T_RANGE) ~ 1e-22 of its peak (on the
 *    right, where g vanishes like exp(-z), X is at most 40 and the
 *    progression ends at min(s, X)).  Every panel is short compared with
 *    the distance to g's singularities and with the Gaussian's width, so
 *    GL_N nodes each give full accuracy.  The count of panels is fixed and
 *    their ends move smoothly with m and s, so the rule has no jumps other
 *    than at the switch from Gauss-Hermite, where both rules agree to about
 *    1e-14 relative.
 *
 * The derivatives are E[g'] and E[g'']/2 by the same rule.
 *
 * Accuracy seen, as |error| / max(1, |exact|), for value, dE/dmu and dE/ds2:
 * on the grid of the test (mu in 0, +-1e-3, +-0.5, +-3, +-30, +-1e3; s2 from
 * 0 to 1e6; both labels and likelihoods) at most 6.5e-15 against adaptive
 * quadrature, and within 1e-13 of six 40-digit values; over 20000 random
 * points (|mu| from 1e-4 to 1e3 and s2 from 1e-12 to 1e6, log-uniform, a
 * quarter of them at |mu| / s near 10) at most 1.3e-15 (Gauss-Hermite, small
 * s), 1.1e-15 (far bend) and 2.8e-15 (composite) for the logistic, and
 * 3.7e-15, 1.3e-15 and 3.4e-15 for the probit, apart from a few points where
 * the adaptive reference itself is off by up to 5e-13, as 30-digit
 * evaluations showed (the rule was within 2e-15 there).  The two rules meet
 * at their switches to 1e-14 relative.  The stated 1e-10 leaves a wide
 * margin, yet GL_N = 8, K_GEO = 2 or T_RANGE = 5 each make the test fail.
 *
 * Cost: 48 likelihood evaluations (Gauss-Hermite) or at most 360 (composite;
 * 12 x 15 a side, fewer on the right), about 1 and 4-10 us a call for the
 * logistic; the probit's evaluations cost 100-400 ns each (log erfc and
 * the continued fraction of its tail), so 5-9 and 20-70 us. */
#include "liks/expect.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>

#include "base/alloc.h"

#define GH_N 48
#define S_SMALL 1.0
#define T_FAR 10.0
#define GL_N 12
#define K_GEO 6
#define M_WIDE 8
#define T_RANGE 10.0

/* Nodes are computed once, at first use; the flag is published with
 * release order after the tables are written, so a thread that sees it
 * set also sees the tables. */
static double gh_t[GH_N], gh_w[GH_N]; /* for N(t | 0, 1) */
static double gl_x[GL_N], gl_w[GL_N]; /* for [-1, 1] */
static atomic_int nodes_ready;

static void init_nodes(void)
{
    gsl_integration_fixed_workspace *gh =
        gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, GH_N, 0.0, 1.0, 0.0, 0.0);
    gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(GL_N);
    if (!gh || !gl) /* GSL's own small allocations */
        gpc_out_of_memory(sizeof *gh + sizeof *gl);
    const double *x = gsl_integration_fixed_nodes(gh), *w = gsl_integration_fixed_weights(gh);
    for (int i = 0; i < GH_N; i++) { /* weight exp(-x^2) to N(0, 1): t = sqrt 2 x */
        gh_t[i] = M_SQRT2 * x[i];
        gh_w[i] = w[i] / M_SQRTPI;
    }
    for (int i = 0; i < GL_N; i++)
        gsl_integration_glfixed_point(-1.0, 1.0, (size_t)i, &gl_x[i], &gl_w[i], gl);
    gsl_integration_fixed_free(gh);
    gsl_integration_glfixed_table_free(gl);
}

static void ensure_nodes(void)
{
    if (atomic_load_explicit(&nodes_ready, memory_order_acquire))
        return;
#pragma omp critical(gpc_expect_nodes)
    {
        if (!atomic_load_explicit(&nodes_ready, memory_order_relaxed)) {
            init_nodes();
            atomic_store_explicit(&nodes_ready, 1, memory_order_release);
        }
    }
}

/* Running sums of w g, w g', w g''. */
typedef struct {
    double e, d1, d2;
} sums;

static void add(sums *acc, gpc_lik lik, double z, double w)
{
    double g1, g2, g = gpc_lik_logp(lik, 1.0, z, &g1, &g2, NULL);
    acc->e += w * g;
    acc->d1 += w * g1;
    acc->d2 += w * g2;
}

static void hermite(sums *acc, gpc_lik lik, double m, double s)
{
    for (int i = 0; i < GH_N; i++)
        add(acc, lik, m + s * gh_t[i], gh_w[i]);
}

/* Gauss-Legendre over z = side x, x in [a, b], against N(z | m, s^2). */
static void panel(sums *acc, gpc_lik lik, double side, double a, double b, double m, double s)
{
    double c = 0.5 * (a + b), h = 0.5 * (b - a), norm = h / (s * sqrt(2 * M_PI));
    for (int i = 0; i < GL_N; i++) {
        double z = side * (c + h * gl_x[i]), u = (z - m) / s;
        add(acc, lik, z, gl_w[i] * norm * exp(-0.5 * u * u));
    }
}

/* On the right, g and its derivatives are below exp(-Z_RIGHT) ~ 4e-18 in
 * size beyond z = Z_RIGHT (logistic; the probit's fall faster), so the
 * panels stop there. */
#define Z_RIGHT 40.0

static void composite(sums *acc, gpc_lik lik, double m, double s)
{
    for (int side = -1; side <= 1; side += 2) {
        double far = fmax(0.0, side * m) + T_RANGE * s;
        if (side > 0)
            far = fmin(far, Z_RIGHT);
        double top = fmin(s, far), q = pow(top, 1.0 / K_GEO), a = 1.0; /* top > 1 */
        panel(acc, lik, side, 0.0, 1.0, m, s);
        for (int k = 1; k <= K_GEO; k++) {
            double b = k == K_GEO ? top : a * q;
            panel(acc, lik, side, a, b, m, s);
            a = b;
        }
        if (far > top) { /* empty when the right side stops below s */
            double h = (far - top) / M_WIDE;
            for (int k = 0; k < M_WIDE; k++)
                panel(acc, lik, side, top + k * h, k == M_WIDE - 1 ? far : top + (k + 1) * h, m,
                      s);
        }
    }
}

double gpc_lik_expect(gpc_lik lik, double y, double mu, double s2, double *dmu, double *ds2)
{
    if ((lik != GPC_LIK_LOGISTIC && lik != GPC_LIK_PROBIT) || !(s2 >= 0)) {
        if (dmu)
            *dmu = NAN;
        if (ds2)
            *ds2 = NAN;
        return NAN;
    }
    double sy = y > 0 ? 1.0 : -1.0, m = sy * mu, s = sqrt(s2);
    sums acc = {0, 0, 0};
    if (s2 == 0) {
        acc.e = gpc_lik_logp(lik, 1.0, m, &acc.d1, &acc.d2, NULL);
    } else {
        ensure_nodes();
        if (s <= S_SMALL || fabs(m) >= T_FAR * s)
            hermite(&acc, lik, m, s);
        else
            composite(&acc, lik, m, s);
    }
    if (dmu)
        *dmu = sy * acc.d1; /* dE/dmu = y dE/dm */
    if (ds2)
        *ds2 = 0.5 * acc.d2;
    return acc.e;
}
