/* lse — E[log sum_c exp f_c] under independent Gaussians, by a fixed rule
 * (the method is in lse.h).
 *
 * The constants.  GPC_LSE_STEP = 0.3 is the trapezoid step in x: the error
 * is about exp(-pi^2 / h), and the worst seen at C = 2 was 4e-13 at 0.3,
 * 4e-15 at 0.25, 4e-11 at 0.35 and 1e-9 at 0.4.  The integrand is below
 * 1e-17 left of max_c (mu_c - GPC_LSE_LEFT - GPC_LSE_SDS s_c) (there F_c
 * < exp(-e^4) + Phi(-9) for the class with the largest bound) and right of
 * max_c (mu_c + GPC_LSE_RIGHT + GPC_LSE_SDS s_c) (1 - F_c < e^-38 + Phi(-9)
 * for every class), and a class's H is 1 to rounding at the nodes beyond
 * its own right bound, so they are not computed.  In the convolution the
 * Gaussian is cut at GPC_LSE_SDS standard deviations, and the grid step
 * h_u = h / r is at most s / GPC_LSE_SRES, so its trapezoid error
 * exp(-2 pi^2 s^2 / h_u^2) is below 1e-16.  Below s = GPC_LSE_S_GH the grid
 * would need too many points per node, and GPC_LSE_NZ-point Gauss-Hermite
 * takes over: its error is of order s^(2 NZ), below rounding there (the
 * tests pass with 4 points as well as 8).  Each of these, made coarser
 * (step 0.5, 5 standard deviations, right end 20, left end 2, SRES 0.6),
 * makes test_lse fail.
 *
 * Accuracy seen (test_lse): at C = 2 against adaptive quadrature of the
 * one-dimensional form over mean differences 0 to 50 and s2 0 to 100 each,
 * 4e-13 in E, 1e-13 in dE/dmu, 1.2e-12 in dE/ds2; with one class random
 * among up to 50 fixed ones (an exact one-dimensional form again) 5e-14 and
 * 1.1e-12; at C = 3 against nested adaptive quadrature 5e-14; at s2 = 0
 * 4e-13 from LSE(mu), softmax and softmax (1 - softmax) / 2.
 *
 * GPC_LSE_TAIL = 12: at nodes where every point of a class's rule has
 * u >= 12 its sums are taken from the cubic series of L, L', L'' in
 * T = e^-u (the next term is below e^-48), which gives the same numbers as
 * the rule in O(1) a node; the tail starting at 6 makes test_lse fail.
 *
 * Cost measured (CPU time on one core of the development machine, -O2,
 * s2 between 0.1 and 0.9, |mu| <= 2): about 15, 19, 28, 60 and 280 us per
 * case at C = 2, 3, 5, 10 and 50, some 6 us a class; with s2 between 1e-4
 * and 1e-3 (Gauss-Hermite) 6.5, 10, 16, 30 and 160 us; between 1e-2 and
 * 0.1, 9, 14, 21, 42 and 195 us; between 1 and 9, 67, 79, 101, 209 and
 * 985 us; between 10 and 90, 0.45, 0.5, 0.54, 1.25 and 5.9 ms (the
 * convolutions' length grows with s).  The time goes to the convolutions
 * (2 * 9 s / h_u + 1 taps at each of the nodes left of the tail, three sums
 * each) and the two exps per grid point. */
#include "liks/lse.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>

#include "base/alloc.h"
#include "linalg/vmath.h"

#define EULER_GAMMA 0.57721566490153286061

struct gpc_lse_work {
    size_t C;
    double t[GPC_LSE_NZ], w[GPC_LSE_NZ]; /* Gauss-Hermite for N(t | 0, 1) */
    double *s, *suf;                     /* C standard deviations, C + 1 suffix products */
    size_t nodes, conv;                  /* capacities of the arrays below */
    double *H, *Hw, *Hww;                /* nodes x C, column c for class c */
    double *L0, *L1, *L2, *T, *E, *g;    /* a class's convolution: L on its grid, g on 2K + 1 */
};

gpc_lse_work *gpc_lse_work_alloc(size_t C)
{
    gpc_lse_work *w = gpc_calloc(1, sizeof *w);
    w->C = C;
    gsl_integration_fixed_workspace *gh =
        gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, GPC_LSE_NZ, 0.0, 1.0, 0.0, 0.0);
    if (!gh)
        gpc_out_of_memory(sizeof *gh);
    const double *x = gsl_integration_fixed_nodes(gh), *wx = gsl_integration_fixed_weights(gh);
    for (int i = 0; i < GPC_LSE_NZ; i++) { /* weight exp(-x^2) to N(0, 1): t = sqrt 2 x */
        w->t[i] = M_SQRT2 * x[i];
        w->w[i] = wx[i] / M_SQRTPI;
    }
    gsl_integration_fixed_free(gh);
    w->s = gpc_mallocarray(2 * C + 1, sizeof *w->s);
    w->suf = w->s + C;
    return w;
}

void gpc_lse_work_free(gpc_lse_work *w)
{
    if (!w)
        return;
    free(w->s);
    free(w->H);
    free(w->Hw);
    free(w->Hww);
    free(w->L0);
    free(w->L1);
    free(w->L2);
    free(w->T);
    free(w->E);
    free(w->g);
    free(w);
}

size_t gpc_lse_work_classes(const gpc_lse_work *w)
{
    return w->C;
}

/* Room for a convolution over len grid points with a kernel of klen. */
static void grow(gpc_lse_work *w, size_t len, size_t klen)
{
    if (len + klen <= w->conv)
        return;
    w->conv = 2 * (len + klen);
    w->L0 = gpc_reallocarray(w->L0, w->conv, sizeof *w->L0);
    w->L1 = gpc_reallocarray(w->L1, w->conv, sizeof *w->L1);
    w->L2 = gpc_reallocarray(w->L2, w->conv, sizeof *w->L2);
    w->T = gpc_reallocarray(w->T, w->conv, sizeof *w->T);
    w->E = gpc_reallocarray(w->E, w->conv, sizeof *w->E);
    w->g = gpc_reallocarray(w->g, w->conv, sizeof *w->g);
}


/* One class's H(x_j - mu), dH/dv and d2H/dv2 at the n nodes x_j = x0 + j h,
 * where H(v) = E[L(v - s Z)], Z ~ N(0, 1).
 *
 * For s below GPC_LSE_S_GH by Gauss-Hermite in Z with GPC_LSE_NZ nodes: L is
 * analytic with scale 1, so the rule's error is of order s^(2 NZ) and below
 * rounding there.  Otherwise by the trapezoid rule in u = s Z on a grid of
 * step h / r that contains the nodes (r = 1 unless s is small), which makes
 * H at every node one discrete convolution of L's values on the grid with
 * the Gaussian's weights.  The trapezoid rule's error is below exp(-pi^2 /
 * h_u) for L (analytic in |Im u| < pi / 2) and exp(-2 pi^2 s^2 / h_u^2) for
 * the Gaussian: h_u <= GPC_LSE_STEP and h_u <= s / GPC_LSE_SRES keep both
 * below 1e-14. */
static void class_values(gpc_lse_work *w, double x0, double h, size_t n, double mu, double s,
                         double *H, double *Hw, double *Hww)
{
    int gh = s < GPC_LSE_S_GH;
    size_t r = 1, K = 0, taps = GPC_LSE_NZ;
    double hu = h, umax = s * w->t[GPC_LSE_NZ - 1]; /* the rule's points u and weights */
    if (!gh) {
        r = (size_t)ceil(h * GPC_LSE_SRES / s);
        hu = h / (double)r;
        K = (size_t)ceil(GPC_LSE_SDS * s / hu);
        taps = 2 * K + 1;
        umax = hu * (double)K;
        grow(w, 0, taps);
        for (size_t k = 0; k < taps; k++) {
            double z = hu * ((double)k - (double)K) / s;
            w->g[k] = hu / s * exp(-0.5 * z * z) / sqrt(2 * M_PI);
        }
    }
    /* From node jt on, every point of the rule has u >= GPC_LSE_TAIL, where
     * L, L', L'' are their cubic series in T = e^-u to 1e-20: the rule's sums
     * are then sums of powers of e^-v times the moments S_m = sum weight *
     * e^(m u) of its points, the same numbers in O(1) a node. */
    double S[4] = {0, 0, 0, 0}, jtd = ceil((GPC_LSE_TAIL + umax + mu - x0) / h);
    size_t jt = 3 * umax > 600 ? n : jtd <= 0 ? 0 : jtd >= (double)n ? n : (size_t)jtd;
    for (size_t k = 0; k < taps && jt < n; k++) {
        double u = gh ? s * w->t[k] : hu * ((double)k - (double)K), wt = gh ? w->w[k] : w->g[k];
        for (int m = 0; m < 4; m++)
            S[m] += wt * exp(m * u);
    }
    for (size_t j = jt; j < n; j++) {
        double E1 = exp(-(x0 + h * (double)j - mu)), E2 = E1 * E1, E3 = E2 * E1;
        H[j] = S[0] - E1 * S[1] + 0.5 * E2 * S[2] - E3 * S[3] / 6;
        Hw[j] = E1 * S[1] - E2 * S[2] + 0.5 * E3 * S[3];
        Hww[j] = -E1 * S[1] + 2 * E2 * S[2] - 1.5 * E3 * S[3];
    }
    if (jt == 0)
        return;
    if (gh) {
        /* T = exp(-u) at every node's NZ points, then L = exp(-T), by vector
         * exps; L' = T L and L'' = T (T - 1) L */
        size_t len = jt * GPC_LSE_NZ;
        grow(w, len, 0);
        double *T = w->T, *e = w->E;
        for (size_t j = 0; j < jt; j++)
            for (int i = 0; i < GPC_LSE_NZ; i++)
                T[j * GPC_LSE_NZ + i] = -fmax(x0 + h * (double)j - mu - s * w->t[i], -50.0);
        gpc_exp_array(T, len);
        for (size_t i = 0; i < len; i++)
            e[i] = -T[i];
        gpc_exp_array(e, len);
        for (size_t j = 0; j < jt; j++) {
            double a = 0, b = 0, c = 0;
            const double *tj = T + j * GPC_LSE_NZ, *ej = e + j * GPC_LSE_NZ;
            for (int i = 0; i < GPC_LSE_NZ; i++) {
                double we = w->w[i] * ej[i];
                a += we;
                b += tj[i] * we;
                c += tj[i] * (tj[i] - 1) * we;
            }
            H[j] = a;
            Hw[j] = b;
            Hww[j] = c;
        }
        return;
    }
    size_t len = (jt - 1) * r + taps;
    grow(w, len, taps);
    /* L, L' = T L, L'' = T (T - 1) L (T = e^-u) at u_i = x0 - mu + (i - K) hu
     * by two vector exps over the grid.  L(x_j - mu - (k - K) hu) is grid
     * point j r + 2K - k, and by the Gaussian's symmetry the weight of k is
     * the weight of 2K - k, so H(x_j) = sum_k g_k L[j r + k].  u is held
     * above -50, where L, L' and L'' are 0 in doubles, so that T stays
     * finite and T e = 0. */
    double *T = w->T, *e = w->E;
    for (size_t i = 0; i < len; i++)
        T[i] = -fmax(x0 - mu + hu * ((double)i - (double)K), -50.0);
    gpc_exp_array(T, len);
    for (size_t i = 0; i < len; i++)
        e[i] = -T[i];
    gpc_exp_array(e, len);
    for (size_t i = 0; i < len; i++) {
        w->L0[i] = e[i];
        w->L1[i] = T[i] * e[i];
        w->L2[i] = T[i] * (T[i] - 1) * e[i];
    }
    for (size_t j = 0; j < jt; j++) {
        double a = 0, b = 0, c = 0;
        const double *l0 = w->L0 + j * r, *l1 = w->L1 + j * r, *l2 = w->L2 + j * r;
        for (size_t k = 0; k < taps; k++) {
            a += w->g[k] * l0[k];
            b += w->g[k] * l1[k];
            c += w->g[k] * l2[k];
        }
        H[j] = a;
        Hw[j] = b;
        Hww[j] = c;
    }
}

double gpc_lse_expect(gpc_lse_work *w, const double *mu, const double *s2, double *dmu, double *ds2)
{
    size_t C = w->C;
    for (size_t c = 0; c < C; c++)
        if (!isfinite(mu[c]) || !isfinite(s2[c]) || s2[c] < 0.0) {
            for (size_t d = 0; d < C; d++) {
                if (dmu)
                    dmu[d] = NAN;
                if (ds2)
                    ds2[d] = NAN;
            }
            return NAN;
        }
    double a = mu[0];
    for (size_t c = 1; c < C; c++)
        a = fmax(a, mu[c]);
    /* F_M is below 1e-17 left of xl, 1 - F_M right of xr */
    double xl = -INFINITY, xr = -INFINITY;
    for (size_t c = 0; c < C; c++) {
        w->s[c] = sqrt(s2[c]);
        xl = fmax(xl, mu[c] - a - GPC_LSE_LEFT - GPC_LSE_SDS * w->s[c]);
        xr = fmax(xr, mu[c] - a + GPC_LSE_RIGHT + GPC_LSE_SDS * w->s[c]);
    }
    size_t N = (size_t)ceil((xr - xl) / GPC_LSE_STEP) + 1;
    double h = (xr - xl) / (double)(N - 1);
    if (N * C > w->nodes) {
        w->nodes = N * C;
        w->H = gpc_reallocarray(w->H, w->nodes, sizeof *w->H);
        w->Hw = gpc_reallocarray(w->Hw, w->nodes, sizeof *w->Hw);
        w->Hww = gpc_reallocarray(w->Hww, w->nodes, sizeof *w->Hww);
    }
    for (size_t c = 0; c < C; c++)
        class_values(w, xl, h, N, mu[c] - a, w->s[c], w->H + c * N, w->Hw + c * N,
                     w->Hww + c * N);
    for (size_t c = 0; c < C; c++) {
        if (dmu)
            dmu[c] = 0.0;
        if (ds2)
            ds2[c] = 0.0;
    }
    double mean = 0.0;
    for (size_t j = 0; j < N; j++) {
        /* the product of the others' H by prefix and suffix (an H may be 0) */
        double pre = 1.0, dens = 0.0;
        w->suf[C] = 1.0;
        for (size_t c = C; c-- > 0;)
            w->suf[c] = w->suf[c + 1] * w->H[c * N + j];
        for (size_t c = 0; c < C; c++) {
            double others = pre * w->suf[c + 1];
            dens += w->Hw[c * N + j] * others;
            if (dmu)
                dmu[c] += w->Hw[c * N + j] * others;
            if (ds2)
                ds2[c] += w->Hww[c * N + j] * others;
            pre *= w->H[c * N + j];
        }
        mean += (xl + h * (double)j) * dens;
    }
    for (size_t c = 0; c < C; c++) {
        if (dmu)
            dmu[c] *= h;
        if (ds2)
            ds2[c] *= -0.5 * h;
    }
    return a + h * mean - EULER_GAMMA;
}
