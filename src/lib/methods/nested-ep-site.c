#include "methods/nested-ep-site.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_sf_erf.h>

#include "base/alloc.h"
#include "base/err.h"

struct gpc_nep_site {
    size_t C, d;      /* classes, and d = C + 1 values of w = (f, u) */
    double *V, *m;    /* the inner approximation: covariance (d x d) and mean */
    double *Vb;       /* V b_j */
    double *Sigma0;   /* the cavity's covariance (C x C) */
    double *mu0;      /* and mean */
    int sweeps;
};

gpc_nep_site *gpc_nep_site_alloc(size_t C)
{
    gpc_nep_site *s = gpc_calloc(1, sizeof *s);
    s->C = C;
    s->d = C + 1;
    s->V = gpc_mallocarray(s->d * s->d, sizeof(double));
    s->m = gpc_mallocarray(s->d, sizeof(double));
    s->Vb = gpc_mallocarray(s->d, sizeof(double));
    s->Sigma0 = gpc_mallocarray(C * C, sizeof(double));
    s->mu0 = gpc_mallocarray(C, sizeof(double));
    return s;
}

void gpc_nep_site_free(gpc_nep_site *s)
{
    if (!s)
        return;
    free(s->V);
    free(s->m);
    free(s->Vb);
    free(s->Sigma0);
    free(s->mu0);
    free(s);
}

int gpc_nep_site_sweeps(const gpc_nep_site *s) { return s->sweeps; }

void gpc_nep_site_outer(size_t C, size_t y, const double *alpha, const double *beta, double *pi,
                        double *s, double *nu)
{
    double sa = 1.0, sb = 0.0;
    for (size_t j = 0; j < C; j++) {
        pi[j] = j == y ? 1.0 : alpha[j];
        if (j != y) {
            sa += alpha[j];
            sb += beta[j];
        }
    }
    *s = sa;
    for (size_t j = 0; j < C; j++)
        nu[j] = sb / sa * pi[j] - (j == y ? 0.0 : beta[j]);
}

/* log Phi(z), accurate far in both tails. */
static double log_Phi(double z) { return gsl_sf_log_erfc(-z / M_SQRT2) - M_LN2; }

/* One probit factor Phi(x) against its cavity N(x | mc, vc): the log mass
 * and the site (a, b) that matches the tilted mean and variance, in forms
 * free of cancellation: with z = mc / sqrt(1 + vc), r = N(z) / Phi(z) and
 * k = r (z + r) / (1 + vc) in (0, 1), the tilted variance is vc (1 - vc k),
 * so a = k / (1 - vc k) and b = (r / sqrt(1 + vc) + mc k) / (1 - vc k). */
static double probit_site(double mc, double vc, double *a, double *b)
{
    double sq = sqrt(1.0 + vc), z = mc / sq, lp = log_Phi(z);
    double r = exp(-0.5 * z * z - 0.5 * log(2.0 * M_PI) - lp);
    double k = r * (z + r) / (1.0 + vc), rest = 1.0 - vc * k;
    *a = k / rest;
    *b = (r / sq + mc * k) / rest;
    return lp;
}

/* V b_j and b_j' V b_j, b_j = e_u + e_y - e_j: three columns of V. */
static double project(gpc_nep_site *s, size_t y, size_t j)
{
    size_t d = s->d, u = s->C;
    for (size_t a = 0; a < d; a++)
        s->Vb[a] = s->V[a * d + u] + s->V[a * d + y] - s->V[a * d + j];
    return s->Vb[u] + s->Vb[y] - s->Vb[j];
}

static double project_mean(const gpc_nep_site *s, size_t y, size_t j)
{
    return s->m[s->C] + s->m[y] - s->m[j];
}

/* Add the site change (da, db) in direction b_j to (V, m), with V b_j in Vb
 * and q = b_j' V b_j, t = b_j' m; returns 1 + da q (the determinant's
 * factor), or a non-positive value without changing anything. */
static double add_site(gpc_nep_site *s, double q, double t, double da, double db)
{
    size_t d = s->d;
    double den = 1.0 + da * q;
    if (!(den > 0.0))
        return den;
    double g = da / den, h = (db - da * t) / den;
    for (size_t a = 0; a < d; a++) {
        s->m[a] += s->Vb[a] * h;
        for (size_t c = 0; c <= a; c++) {
            s->V[a * d + c] -= g * s->Vb[a] * s->Vb[c];
            s->V[c * d + a] = s->V[a * d + c];
        }
    }
    return den;
}

/* The cavity's moments from its natural parameters: GPC_ENUM unless Lambda
 * is positive definite.  Returns h' Sigma h in *q0. */
static int cavity(gpc_nep_site *s, const double *Lambda, const double *h, double *q0)
{
    size_t C = s->C;
    memcpy(s->Sigma0, Lambda, C * C * sizeof(double));
    gsl_matrix_view L = gsl_matrix_view_array(s->Sigma0, C, C);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int st = gsl_linalg_cholesky_decomp1(&L.matrix);
    if (st == GSL_SUCCESS)
        st = gsl_linalg_cholesky_invert(&L.matrix);
    gsl_set_error_handler(old);
    if (st != GSL_SUCCESS)
        return gpc_fail(GPC_ENUM, "nested EP: a cavity's precision is not positive definite");
    double q = 0.0;
    for (size_t a = 0; a < C; a++) {
        double v = 0.0;
        for (size_t c = 0; c < C; c++)
            v += s->Sigma0[a * C + c] * h[c];
        s->mu0[a] = v;
        q += v * h[a];
    }
    *q0 = q;
    return GPC_OK;
}

/* (V, m) = the cavity's N(f) N(u | 0, 1) times the sites alpha, beta;
 * returns log |V| - log |V0|, or NaN if a site makes it improper. */
static double build(gpc_nep_site *s, size_t y, const double *alpha, const double *beta)
{
    size_t C = s->C, d = s->d;
    memset(s->V, 0, d * d * sizeof(double));
    for (size_t a = 0; a < C; a++) {
        memcpy(s->V + a * d, s->Sigma0 + a * C, C * sizeof(double));
        s->m[a] = s->mu0[a];
    }
    s->V[C * d + C] = 1.0;
    s->m[C] = 0.0;
    double logdet = 0.0;
    for (size_t j = 0; j < C; j++) {
        if (j == y || (alpha[j] == 0.0 && beta[j] == 0.0))
            continue;
        double q = project(s, y, j), t = project_mean(s, y, j);
        double den = add_site(s, q, t, alpha[j], beta[j]);
        if (!(den > 0.0))
            return NAN;
        logdet -= log(den);
    }
    return logdet;
}

/* One sweep over the rival classes; the largest relative move of a site. */
static double sweep(gpc_nep_site *s, size_t y, double *alpha, double *beta, int *lost)
{
    double move = 0.0;
    for (size_t j = 0; j < s->C; j++) {
        if (j == y)
            continue;
        double q = project(s, y, j), t = project_mean(s, y, j);
        double rest = 1.0 - alpha[j] * q; /* the cavity's variance is q / rest */
        if (!(rest > 0.0)) {
            *lost = 1;
            continue;
        }
        double vc = q / rest, mc = (t - beta[j] * q) / rest, a, b;
        probit_site(mc, vc, &a, &b);
        if (!isfinite(a) || !isfinite(b) || !(a >= 0.0)) {
            *lost = 1;
            continue;
        }
        double da = a - alpha[j], db = b - beta[j];
        if (!(add_site(s, q, t, da, db) > 0.0)) {
            *lost = 1;
            continue;
        }
        move = fmax(move, fabs(da) / (1.0 + fabs(a)));
        move = fmax(move, fabs(db) / (1.0 + fabs(b)));
        alpha[j] = a;
        beta[j] = b;
    }
    return move;
}

/* log of the inner approximation's mass: the Gaussian part
 *     1/2 log |V| / |V0| + 1/2 m' (V0^-1 m0 + sum_j beta_j b_j) - 1/2 m0' V0^-1 m0
 * and each site's normaliser, the log of its tilted mass less the log of
 * the integral of its Gaussian against its cavity. */
static double log_mass(gpc_nep_site *s, size_t y, const double *h, const double *alpha,
                       const double *beta, double logdet, double q0)
{
    size_t C = s->C;
    double quad = 0.0, sites = 0.0;
    for (size_t a = 0; a < C; a++)
        quad += s->m[a] * h[a];
    for (size_t j = 0; j < C; j++) {
        if (j == y)
            continue;
        double q = project(s, y, j), t = project_mean(s, y, j);
        quad += beta[j] * t;
        double rest = 1.0 - alpha[j] * q, vc = q / rest, mc = (t - beta[j] * q) / rest, a, b;
        double lz = probit_site(mc, vc, &a, &b);
        double al = alpha[j], be = beta[j];
        double gauss = -0.5 * log1p(al * vc) + 0.5 * (be * vc + mc) * (be * vc + mc) /
                       (vc * (1.0 + al * vc)) - 0.5 * mc * mc / vc;
        sites += lz - gauss;
    }
    return 0.5 * logdet + 0.5 * quad - 0.5 * q0 + sites;
}

int gpc_nep_site_update(gpc_nep_site *s, size_t y, const double *Lambda, const double *h,
                        double *alpha, double *beta, double tol, int max_sweeps, double *logZ,
                        double *mean, double *cov)
{
    size_t C = s->C, d = s->d;
    double q0 = 0.0;
    int st = cavity(s, Lambda, h, &q0);
    if (st != GPC_OK)
        return st;
    alpha[y] = beta[y] = 0.0;
    if (!isfinite(build(s, y, alpha, beta))) {
        /* the warm start does not fit this cavity: start afresh */
        for (size_t j = 0; j < C; j++)
            alpha[j] = beta[j] = 0.0;
        build(s, y, alpha, beta);
    }
    int lost = 0;
    s->sweeps = 0;
    while (s->sweeps < max_sweeps) {
        lost = 0;
        double move = sweep(s, y, alpha, beta, &lost);
        s->sweeps++;
        if (move <= tol && !lost)
            break;
    }
    if (lost)
        return gpc_fail(GPC_ENUM, "nested EP: a probit factor's cavity vanished in the inner "
                        "EP of a case of class %zu", y + 1);
    /* from scratch, so the moments carry no rounding of the updates */
    double logdet = build(s, y, alpha, beta);
    if (!isfinite(logdet))
        return gpc_fail(GPC_ENUM, "nested EP: the inner sites of a case of class %zu are "
                        "improper", y + 1);
    if (logZ)
        *logZ = log_mass(s, y, h, alpha, beta, logdet, q0);
    for (size_t a = 0; mean && a < C; a++)
        mean[a] = s->m[a];
    for (size_t a = 0; cov && a < C; a++)
        for (size_t c = 0; c < C; c++)
            cov[a * C + c] = s->V[a * d + c];
    return GPC_OK;
}
