/* Dual averaging of the HMC step (adapt.h): its first updates against hand
 * computation, the warm-up's end freezing the step, and convergence on a
 * Gaussian target whose acceptance rate as a function of the step is
 * computed independently, from the leapfrog's closed form. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "sampling/adapt.h"
#include "sampling/chain.h"
#include "sampling/hmc.h"
#include "tap.h"

/* Hbar_1 = (delta - alpha) / 11 and log eps_1 = log(10 eps0) - 20 Hbar_1;
 * then Hbar_2 = 11/12 Hbar_1 + (delta - alpha_2) / 12 and log eps_2 =
 * log(10 eps0) - sqrt(2) 20 Hbar_2, log ebar_2 = 2^-0.75 log eps_2 +
 * (1 - 2^-0.75) log eps_1. */
static void test_updates(void)
{
    gpc_step_adapt a;
    gpc_step_adapt_init(&a, 0.1, 0.65);
    double e1 = gpc_step_adapt_update(&a, 1.0);
    TEST_CLOSE(log(e1), 20 * 0.35 / 11, 1e-14, 1e-14,
               "an accepted first trajectory raises the step to exp(7/11) (%.17g)", e1);
    TEST_CLOSE(gpc_step_adapt_final(&a), e1, 1e-14, 0, "the average of one step is that step");
    double e2 = gpc_step_adapt_update(&a, 0.0);
    double h2 = 11.0 / 12 * (-0.35 / 11) + 0.65 / 12;
    TEST_CLOSE(log(e2), -sqrt(2.0) * 20 * h2, 1e-13, 1e-13,
               "a rejected second one lowers it to %.6g", e2);
    double w = pow(2.0, -0.75);
    TEST_CLOSE(log(gpc_step_adapt_final(&a)), w * log(e2) + (1 - w) * log(e1), 1e-13, 1e-13,
               "the averaged step weighs the second by 2^-0.75");
}

/* gpc_chain_next_step: adapts during the warm-up, freezes at its end at
 * the averaged step, and keeps a fixed step without adaptation. */
static void test_freeze(void)
{
    gpc_chain_settings s = {.hmc = {0.1, 5, 0.0, 1, NULL}, .adapt = 3, .target = 0.65};
    gpc_step_adapt a, b;
    gpc_step_adapt_init(&a, 0.1, 0.65);
    gpc_step_adapt_init(&b, 0.1, 0.65);
    double step = 0.1, alpha[5] = {1, 0.2, 0.9, 0.0, 1.0}, want = 0.1;
    int ok = 1;
    for (long it = 1; it <= 5; it++) {
        step = gpc_chain_next_step(&s, &a, it, alpha[it - 1], step);
        if (it < 3)
            want = gpc_step_adapt_update(&b, alpha[it - 1]);
        else if (it == 3) {
            gpc_step_adapt_update(&b, alpha[it - 1]);
            want = gpc_step_adapt_final(&b);
        }
        ok &= step == want;
    }
    TEST_OK(ok && a.m == 3, "the step follows the updates over a warm-up of 3, then stays at "
            "the averaged step (%.6g after %ld updates)", step, a.m);
    s.adapt = 0;
    TEST_OK(gpc_chain_next_step(&s, &a, 1, 0.0, 0.1) == 0.1 && a.m == 3,
            "without adaptation the step is kept and nothing is updated");
}

/* ---- convergence on a Gaussian --------------------------------------------- */

/* One leapfrog step per trajectory: then the acceptance rate falls
 * smoothly with the step (longer trajectories on a Gaussian resonate, and
 * their acceptance is not monotone in the step). */
#define D 10
#define LEAP 1

typedef struct {
    double s[D];
} gauss;

static int gauss_eval(void *ctx, const double *th, double *U, double *g, double *aux)
{
    const gauss *t = ctx;
    *U = 0;
    for (int j = 0; j < D; j++) {
        g[j] = th[j] / (t->s[j] * t->s[j]);
        *U += 0.5 * th[j] * g[j];
    }
    *aux = -*U;
    return GPC_OK;
}

/* The acceptance rate at stationarity of HMC with step eps on the target:
 * E min(1, exp(-dH)) over q ~ N(0, diag s^2), p ~ N(0, I), by Monte Carlo
 * on the leapfrog's linear map per coordinate (not the sampler's code). */
static double acceptance(const gauss *t, double eps, gsl_rng *r)
{
    double sum = 0;
    const int n = 40000;
    for (int k = 0; k < n; k++) {
        double dH = 0;
        for (int j = 0; j < D; j++) {
            double w = 1 / (t->s[j] * t->s[j]), q = t->s[j] * gsl_ran_gaussian(r, 1.0),
                   p = gsl_ran_gaussian(r, 1.0), q0 = q, p0 = p;
            for (int l = 0; l < LEAP; l++) {
                p -= 0.5 * eps * w * q;
                q += eps * p;
                p -= 0.5 * eps * w * q;
            }
            dH += 0.5 * (w * q * q + p * p - w * q0 * q0 - p0 * p0);
        }
        sum += dH <= 0 ? 1 : exp(-dH);
    }
    return sum / n;
}

static void test_gaussian_target(double target)
{
    gauss t;
    for (int j = 0; j < D; j++)
        t.s[j] = 0.5 + 0.15 * j; /* scales 0.5 .. 1.85 */
    gpc_potential U = {gauss_eval, NULL, &t};
    gpc_chain_settings s = {.hmc = {0.01, LEAP, 0.0, 11, NULL}, .adapt = 2000,
                            .target = target};
    gpc_step_adapt a;
    gpc_step_adapt_init(&a, s.hmc.step, target);
    gpc_hmc *h = gpc_hmc_alloc(D);
    double th0[D] = {0};
    gpc_hmc_set_state(h, th0, NULL, 0);
    double late = 0;
    long n = 6000, kept = 0, accepted = 0;
    for (long it = 1; it <= n; it++) {
        gpc_hmc_iterate(h, &U, &s.hmc);
        if (it > s.adapt / 2 && it <= s.adapt)
            late += h->accept_prob;
        if (it > s.adapt) {
            kept++;
            accepted += h->accepted;
        }
        s.hmc.step = gpc_chain_next_step(&s, &a, it, h->accept_prob, s.hmc.step);
    }
    TEST_CLOSE(late / (s.adapt / 2), target, 0, 0.03,
               "target %.2f: the second half of the warm-up accepts at %.3f on average",
               target, late / (s.adapt / 2));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    double rate = (double)accepted / (double)kept, want = acceptance(&t, s.hmc.step, r);
    TEST_CLOSE(want, target, 0, 0.06,
               "target %.2f: the frozen step %.4f accepts at %.3f at stationarity", target,
               s.hmc.step, want);
    TEST_CLOSE(rate, want, 0, 0.03,
               "target %.2f: the chain after the warm-up accepts %.3f of its trajectories",
               target, rate);
    /* the step is where the acceptance curve crosses the target: a step a
     * fifth smaller accepts more, one a fifth larger less */
    /* the step that gives the target, by bisection on the (here smooth and
     * falling) acceptance curve; averaging log steps over the warm-up puts
     * the frozen one a little below it */
    double lo = 0.01, hi = 1.99;
    for (int k = 0; k < 25; k++) {
        double mid = sqrt(lo * hi);
        gsl_rng_set(r, 5); /* common random numbers: a smooth curve in eps */
        *(acceptance(&t, mid, r) > target ? &lo : &hi) = mid;
    }
    TEST_CLOSE(log(s.hmc.step), log(lo), 0, 0.15,
               "target %.2f: the frozen step %.4f is near the step %.4f that accepts at the "
               "target", target, s.hmc.step, lo);
    gsl_rng_free(r);
    gpc_hmc_free(h);
}

int main(void)
{
    gpc_gsl_quiet();
    test_updates();
    test_freeze();
    test_gaussian_target(0.65);
    test_gaussian_target(0.8);
    return tap_done();
}
