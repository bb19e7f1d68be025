/* lse — the expected log-sum-exp of independent Gaussians,
 *
 *   E(mu, s2) = E[log sum_c exp f_c],   f_c ~ N(mu_c, s2_c) independent,
 *
 * with dE/dmu_c and dE/ds2_c: the term the softmax likelihood adds to a
 * variational bound whose q factorises over the classes
 * (E[log softmax_y(f)] = mu_y - E).
 *
 * How.  With G_c independent standard Gumbel variables, max_c (f_c + G_c) is
 * distributed as LSE(f) + G (the Gumbel-max property; equivalently Frullani's
 * integral log S = int_0^inf (e^-t - e^-tS) / t dt), so
 *
 *   E = E[max_c X_c] - gamma,   X_c = f_c + G_c,   gamma Euler's constant,
 *
 * and the X_c are independent with distribution functions
 * F_c(x) = H_c(x - mu_c), H_c(v) = E[L(v - s_c Z)], L(u) = exp(-e^-u).  The
 * maximum has F = prod_c F_c and density f = sum_c F_c' prod_(d != c) F_d,
 * so E[max] = int x f(x) dx, and differentiating under the integral,
 *
 *   dE/dmu_c  = int F_c' prod_(d != c) F_d dx   (= E[softmax_c(f)]),
 *   dE/ds2_c  = -1/2 int F_c'' prod_(d != c) F_d dx
 *
 * (H_c obeys the heat equation: dH/d(s2) = H'' / 2).  All three are one
 * integral in x over a smooth integrand that decays on both sides, taken by
 * the trapezoid rule with step about GPC_LSE_STEP from max_c (mu_c - 4 -
 * 9 s_c) to max_c (mu_c + 38 + 9 s_c) (past either end the integrand is
 * below 1e-17); the trapezoid rule converges geometrically here (L is
 * analytic in the strip |Im u| < pi / 2, error about exp(-pi^2 / h)).  Each
 * class's H_c, H_c' and H_c'' at the nodes is one discrete convolution of
 * L, L', L'' on the nodes' grid (refined when s_c is small) with the
 * Gaussian's weights, or, for s_c below 0.05, Gauss-Hermite (lse.c says
 * why either is exact to rounding); far right of the class's mean, where
 * L is 1 - e^-u + ..., the same sums by a series in O(1) a node.  The derivatives are the same rule
 * applied to their own integrals, so they equal the derivatives of the
 * computed E to within the rule's accuracy.  The rule is fixed: its nodes
 * move smoothly with mu and s2, except that their count and the
 * convolutions' lengths change in steps, where E moves by less than its
 * error; central differences of E (steps of 1e-5 and more) agree with the
 * returned derivatives to 1e-8 or better.  E is computed about max_c mu_c,
 * so E(mu + a) = E(mu) + a to rounding.
 *
 * Accuracy.  Against adaptive quadrature of the exact one-dimensional form
 * at C = 2 (mean differences 0 to 50, s2 from 0 to 100 each) at most 4e-13
 * in E and 1.2e-12 in its derivatives; against nested adaptive quadrature
 * at C = 3 within 5e-14; the tests hold it to 1e-11.  At s2 = 0 it gives
 * LSE(mu), dE/dmu = p = softmax(mu) and dE/ds2_c = p_c (1 - p_c) / 2 to the
 * same accuracy.
 *
 * Cost.  About 150 + 60 max_c s_c nodes, and per class one convolution of
 * 2 * 9 s_c / h_u + 1 taps over those left of its tail (at the others a
 * series): some 6 us per class and case for s2 up to about 1, 60 us at
 * C = 10 (lse.c states the measurements), growing as s_c^2 beyond (1.2 ms
 * at C = 10 with s2 between 10 and 90).  Meant for s2 up to about 1e2. */
#ifndef GPC_LSE_H
#define GPC_LSE_H

#include <stddef.h>

/* The rule's constants (lse.c explains each). */
#define GPC_LSE_STEP 0.3
#define GPC_LSE_LEFT 4.0
#define GPC_LSE_RIGHT 38.0
#define GPC_LSE_SDS 9.0
#define GPC_LSE_S_GH 0.05
#define GPC_LSE_NZ 8
#define GPC_LSE_SRES 1.4
#define GPC_LSE_TAIL 12.0

/* Scratch for one number of classes C, grown as needed by the calls and
 * reused; one per thread (calls on separate workspaces may run at once). */
typedef struct gpc_lse_work gpc_lse_work;

gpc_lse_work *gpc_lse_work_alloc(size_t C);
void gpc_lse_work_free(gpc_lse_work *w);
size_t gpc_lse_work_classes(const gpc_lse_work *w);

/* E(mu, s2) over the workspace's C classes; dmu and ds2 (C each, either may
 * be NULL) receive dE/dmu_c and dE/ds2_c.  NaN (and NaN derivatives) if a
 * mu_c is not finite or an s2_c is negative or not finite. */
double gpc_lse_expect(gpc_lse_work *w, const double *mu, const double *s2, double *dmu,
                      double *ds2);

#endif
