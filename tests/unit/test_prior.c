/* The hyperpriors (prior.h): the weights' prior density integrates to one,
 * its derivative matches central differences, it is the density of the
 * hierarchical draws (checked against draws made here, independently of
 * gpc_prior_draw_weights), the library's draws are normalised and have the
 * Dirichlet mean, and gpc_log_prior puts the pieces together. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>

#include "base/err.h"
#include "hyper/evidence.h"
#include "hyper/prior.h"
#include "kernels/kernel.h"
#include "tap.h"

static const double hyper[][2] = {{1.0, 1.0}, {2.0, 0.5}, {0.5, 2.0}};
#define NHYPER (sizeof hyper / sizeof hyper[0])

/* int p(u) du = 1 by the midpoint rule, over u = -e^t on the left, where
 * a small alpha makes the tail long (u = log a, a ~ alpha^-1 U^(1/alpha)). */
static void test_normalised(void)
{
    for (size_t h = 0; h < NHYPER; h++) {
        double s = hyper[h][0], r = hyper[h][1], step = 0.002, sum = 0.0;
        for (double u = -1.0 + 0.5 * step; u < 8.0; u += step)
            sum += exp(gpc_prior_weight(u, s, r, NULL)) * step;
        double dt = 0.001; /* u = -e^t from -1 to -e^30, du = e^t dt */
        for (double t = 0.5 * dt; t < 30.0; t += dt)
            sum += exp(gpc_prior_weight(-exp(t), s, r, NULL) + t) * dt;
        TEST_CLOSE(sum, 1.0, 1e-5, 0, "Gamma(%g, %g): the density of u "
                   "integrates to one (%.8f)", s, r, sum);
    }
}

static void test_derivative(void)
{
    double us[] = {-12.0, -3.0, -0.5, 0.0, 1.2, 3.0};
    for (size_t h = 0; h < NHYPER; h++) {
        double s = hyper[h][0], r = hyper[h][1], worst = 0.0;
        for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
            double d, e = 1e-5;
            gpc_prior_weight(us[i], s, r, &d);
            double fd = (gpc_prior_weight(us[i] + e, s, r, NULL) -
                         gpc_prior_weight(us[i] - e, s, r, NULL)) / (2 * e);
            worst = fmax(worst, fabs(d - fd) / (1.0 + fabs(fd)));
        }
        TEST_CLOSE(worst, 0, 0, 1e-7, "Gamma(%g, %g): d log p / du against central differences "
                   "(%.1e)", s, r, worst);
    }
}

/* The cumulative distribution of u = log a, a ~ Gamma(alpha, 1), alpha ~
 * Gamma(s, 1/r), from 200 000 draws, against the integral of the density,
 * at five points. */
static void test_against_draws(gsl_rng *rng)
{
    size_t N = 200000;
    double *u = malloc(N * sizeof *u);
    for (size_t h = 0; h < NHYPER; h++) {
        double s = hyper[h][0], r = hyper[h][1];
        for (size_t i = 0; i < N; i++) {
            double alpha = gsl_ran_gamma(rng, s, 1.0 / r);
            double a = gsl_ran_gamma(rng, alpha + 1.0, 1.0) *
                       pow(gsl_rng_uniform_pos(rng), 1.0 / alpha);
            u[i] = log(a);
        }
        gsl_sort(u, 1, N);
        /* the probability between the 10 % quantile and four others */
        double worst = 0.0, step = 0.002, mass = 0.0, u0 = u[N / 10];
        size_t q[] = {N / 4, N / 2, 3 * N / 4, 9 * N / 10};
        for (size_t j = 0; j < 4; j++) {
            double target = u[q[j]];
            for (; u0 + step <= target; u0 += step) /* midpoint rule */
                mass += exp(gpc_prior_weight(u0 + 0.5 * step, s, r, NULL)) * step;
            double part = exp(gpc_prior_weight(0.5 * (u0 + target), s, r, NULL)) * (target - u0);
            worst = fmax(worst, fabs(mass + part - (double)(q[j] - N / 10) / (double)N));
        }
        /* the sd of an empirical probability is at most 0.5 / sqrt(N) = 0.0011 */
        TEST_CLOSE(worst, 0, 0, 0.005, "Gamma(%g, %g): the density is that of the hierarchical "
                   "draws (largest difference in probability %.4f)", s, r, worst);
    }
    free(u);
}

/* The library's draws: weights summing to one, each with mean 1/J
 * (symmetric prior). */
static void test_draws(gsl_rng *rng)
{
    size_t J = 3, S = 40000;
    double u[3], mean[3] = {0}, sumerr = 0.0;
    for (size_t i = 0; i < S; i++) {
        gpc_prior_draw_weights(rng, J, 2.0, 0.5, u);
        double t = 0.0;
        for (size_t j = 0; j < J; j++) {
            t += exp(u[j]);
            mean[j] += exp(u[j]) / (double)S;
        }
        sumerr = fmax(sumerr, fabs(t - 1.0));
    }
    TEST_CLOSE(sumerr, 0, 0, 1e-14, "drawn weights sum to one");
    for (size_t j = 0; j < J; j++)
        TEST_CLOSE(mean[j], 1.0 / 3.0, 0, 0.006, "drawn weight %zu has mean 1/3 (%.4f)", j + 1,
                   mean[j]);
}

/* gpc_log_prior: normals without the simplex; with it, the weights' density
 * at the weights and normals elsewhere; its gradient. */
static void test_log_prior(void)
{
    gpc_kernel *plain, *k;
    gpc_kernel_parse("se@1+se@2+jitter", 2, &plain);
    gpc_kernel_parse("se@1+se@2+jitter:simplex=2,0.5", 2, &k);
    double th[] = {-0.4, 0.3, -1.1, -0.7, -5.0}, g[5] = {0}, g2[5] = {0};
    double a = gpc_log_prior(plain, 5, th, -3, 3, g);
    double b = gpc_log_prior_normal(5, th, -3, 3, g2);
    TEST_OK(a == b && memcmp(g, g2, sizeof g) == 0, "no simplex: the normal prior exactly");
    double want = gpc_prior_weight(th[0], 2, 0.5, NULL) + gpc_prior_weight(th[2], 2, 0.5, NULL) +
                  gpc_log_prior_normal(1, th + 1, -3, 3, NULL) +
                  gpc_log_prior_normal(1, th + 3, -3, 3, NULL) +
                  gpc_log_prior_normal(1, th + 4, -3, 3, NULL);
    memset(g, 0, sizeof g);
    double got = gpc_log_prior(k, 5, th, -3, 3, g);
    TEST_CLOSE(got, want, 1e-14, 0, "simplex: the weights' prior at the weights, normals elsewhere");
    double worst = 0.0;
    for (size_t j = 0; j < 5; j++) {
        double t = th[j], e = 1e-5;
        th[j] = t + e;
        double lp = gpc_log_prior(k, 5, th, -3, 3, NULL);
        th[j] = t - e;
        double lm = gpc_log_prior(k, 5, th, -3, 3, NULL);
        th[j] = t;
        worst = fmax(worst, fabs(g[j] - (lp - lm) / (2 * e)));
    }
    TEST_CLOSE(worst, 0, 0, 1e-7, "simplex: gpc_log_prior's gradient (%.1e)", worst);
    gpc_kernel_free(plain);
    gpc_kernel_free(k);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    test_normalised();
    test_derivative();
    test_against_draws(r);
    test_draws(r);
    test_log_prior();
    gsl_rng_free(r);
    return tap_done();
}
