/* lse — E[log sum_c exp f_c] under independent Gaussians, by a fixed rule.
 * The method, its accuracy and cost are stated in lse.h. */
#include "liks/lse.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>

#include "base/alloc.h"

#define EULER_GAMMA 0.57721566490153286061

struct gpc_lse_work {
    size_t C;
    double t[GPC_LSE_NZ], w[GPC_LSE_NZ]; /* Gauss-Hermite for N(t | 0, 1) */
    double *s, *suf;                     /* C standard deviations, C + 1 suffix products */
    size_t nodes, conv;                  /* capacities of the arrays below */
    double *H, *Hw, *Hww;                /* nodes x C, column c for class c */
    double *L0, *L1, *L2, *g;            /* a class's convolution: L on nodes + 2K, g on 2K + 1 */
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
    w->g = gpc_reallocarray(w->g, w->conv, sizeof *w->g);
}

/* The Gumbel distribution function L(u) = exp(-e^-u) and its first two
 * derivatives, L' = T L and L'' = T (T - 1) L with T = e^-u. */
static void gumbel(double u, double *L0, double *L1, double *L2)
{
    if (u < -6.0) { /* L < exp(-400): 0 */
        *L0 = *L1 = *L2 = 0.0;
        return;
    }
    double T = exp(-u), e = exp(-T);
    *L0 = e;
    *L1 = T * e;
    *L2 = T * (T - 1) * e;
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
    double vmax = GPC_LSE_RIGHT + GPC_LSE_SDS * s; /* beyond it H = 1 to rounding */
    if (s < GPC_LSE_S_GH) {
        for (size_t j = 0; j < n; j++) {
            double v = x0 + h * (double)j - mu, a = 0, b = 0, c = 0;
            if (v > vmax) {
                H[j] = 1.0;
                Hw[j] = Hww[j] = 0.0;
                continue;
            }
            for (int i = 0; i < GPC_LSE_NZ; i++) {
                double L0, L1, L2;
                gumbel(v - s * w->t[i], &L0, &L1, &L2);
                a += w->w[i] * L0;
                b += w->w[i] * L1;
                c += w->w[i] * L2;
            }
            H[j] = a;
            Hw[j] = b;
            Hww[j] = c;
        }
        return;
    }
    size_t r = (size_t)ceil(h * GPC_LSE_SRES / s);
    double hu = h / (double)r;
    size_t K = (size_t)ceil(GPC_LSE_SDS * s / hu), len = (n - 1) * r + 2 * K + 1;
    grow(w, len, 2 * K + 1);
    /* L at x0 - mu + (i - K) hu, and the Gaussian's weights at (k - K) hu */
    for (size_t i = 0; i < len; i++)
        gumbel(x0 - mu + hu * ((double)i - (double)K), &w->L0[i], &w->L1[i], &w->L2[i]);
    for (size_t k = 0; k <= 2 * K; k++) {
        double u = hu * ((double)k - (double)K) / s;
        w->g[k] = hu / s * exp(-0.5 * u * u) / sqrt(2 * M_PI);
    }
    for (size_t j = 0; j < n; j++) {
        double v = x0 + h * (double)j - mu, a = 0, b = 0, c = 0;
        if (v > vmax) {
            H[j] = 1.0;
            Hw[j] = Hww[j] = 0.0;
            continue;
        }
        /* sum over u_k = (k - K) hu of L(x_j - mu - u_k) g_k: L's index j r + 2K - k;
         * the Gaussian is symmetric, so g_k = g_(2K - k) */
        const double *l0 = w->L0 + j * r, *l1 = w->L1 + j * r, *l2 = w->L2 + j * r;
        for (size_t k = 0; k <= 2 * K; k++) {
            a += l0[k] * w->g[k];
            b += l1[k] * w->g[k];
            c += l2[k] * w->g[k];
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
