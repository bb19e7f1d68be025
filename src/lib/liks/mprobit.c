#include "liks/mprobit.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_erf.h>

#include "base/alloc.h"
#include "base/err.h"
#include "linalg/vmath.h"

/* Gauss-Hermite nodes (weight exp(-t^2)) for the training cases, whose
 * factors all have slope 1: the integrand divided by the Gaussian fitted at
 * its mode is then smooth on the scale of that Gaussian.  Against adaptive
 * quadrature for C = 3 to 20 (tests/unit/test_mprobit.c) the conditional
 * means err by up to 4e-8 with 16 nodes, 6e-11 with 24 and 5e-13 with 32.
 * Predictions have unequal variances, so a factor Phi(s_j u + d_j) with a
 * large slope s_j is a near step inside the bulk, which no fixed rule
 * follows (64 nodes err by 1e-5 at slope ratios of 8); they are integrated
 * adaptively (Gauss-Kronrod 21) over the mode +- 12, outside which the
 * integrand, whose log has curvature at least 1 everywhere, holds less than
 * exp(-72) of its mass. */
#define NODES 32
#define MODE_ITERATIONS 100
#define HALF_RANGE 12.0
#define QAG_LIMIT 200

struct gpc_mprobit_rule {
    size_t C;
    double t[NODES], logw[NODES]; /* nodes, and log weight + t^2 */
    double *sj, *dj;              /* length C: slopes and offsets of the a_j */
    size_t *idx;                  /* length C: the class of each a_j */
    double *a;                    /* NODES x nJ: a_j = s_j u + d_j at each node */
    double *lp;                   /* NODES x nJ: log Phi(a_j) */
    double *ml;                   /* NODES x nJ: Mills' ratio phi(a_j) / Phi(a_j) */
    double *tmp;                  /* NODES x C scratch */
    double u[NODES], W[NODES];    /* the last integral's nodes and normalised weights */
    size_t nJ;                    /* factors of the integral under way (adaptive) */
    double h0;                    /* its log integrand at the mode */
    gsl_integration_workspace *qag;
};

gpc_mprobit_rule *gpc_mprobit_rule_alloc(size_t C)
{
    gpc_mprobit_rule *r = gpc_calloc(1, sizeof *r);
    r->C = C;
    r->sj = gpc_mallocarray(C, sizeof *r->sj);
    r->dj = gpc_mallocarray(C, sizeof *r->dj);
    r->idx = gpc_mallocarray(C, sizeof *r->idx);
    r->a = gpc_mallocarray(4 * NODES * C, sizeof *r->a);
    r->lp = r->a + NODES * C;
    r->ml = r->lp + NODES * C;
    r->tmp = r->ml + NODES * C;
    gsl_integration_fixed_workspace *gh =
        gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, NODES, 0.0, 1.0, 0.0, 0.0);
    if (!gh)
        gpc_die(GPC_EINPUT, "out of memory (Gauss-Hermite rule)");
    const double *x = gsl_integration_fixed_nodes(gh), *w = gsl_integration_fixed_weights(gh);
    for (size_t q = 0; q < NODES; q++) {
        r->t[q] = x[q];
        r->logw[q] = log(w[q]) + x[q] * x[q];
    }
    gsl_integration_fixed_free(gh);
    r->qag = gsl_integration_workspace_alloc(QAG_LIMIT);
    if (!r->qag)
        gpc_die(GPC_EINPUT, "out of memory (quadrature workspace)");
    return r;
}

void gpc_mprobit_rule_free(gpc_mprobit_rule *r)
{
    if (!r)
        return;
    free(r->sj);
    free(r->dj);
    free(r->idx);
    free(r->a);
    gsl_integration_workspace_free(r->qag);
    free(r);
}

/* log Phi(x) to rounding: from libm's erfc where Phi is not tiny (on the
 * right as log1p of the small upper tail), from GSL's log erfc further left,
 * and beyond -1e8, where that fails, from the asymptotic series.  lik.c has
 * the same function on GSL's erfc for the binary likelihoods; this one is
 * its own because the integrals call it tens of millions of times a fit,
 * and libm's erfc halved a sweep's time (bench-vb, n = 1000, C = 10: 16
 * against 36 ms).  The fixed rule's nodes take the array form below, four
 * or eight at a time by the vector library, which cut a sweep's integrals
 * again by a factor of three to four, to 11 ms (n = 2000, C = 10); the
 * adaptive rule and the far left take this one. */
static double log_Phi(double x)
{
    if (x > 0.0) {
        double e = 0.5 * erfc(x / M_SQRT2); /* the upper tail, 1 - Phi(x) */
        return e < 1e-9 ? -e - 0.5 * e * e : log1p(-e);
    }
    if (x > -30.0)
        return log(0.5 * erfc(-x / M_SQRT2));
    if (x < -1e8)
        return -0.5 * x * x - log(-x) - 0.5 * log(2.0 * M_PI) - 1.0 / (x * x);
    return gsl_sf_log_erfc(-x / M_SQRT2) - M_LN2;
}

/* phi(x) / Phi(x) given log Phi(x): finite however far left x lies.  Beyond
 * -100 the exponent is the difference of two numbers above 5000, so there
 * it comes from the asymptotic series of Mills' ratio, 1 / x (1 - t + 3 t^2
 * - 15 t^3 + 105 t^4) with t = 1 / x^2 (the next term is below 1e-17). */
static double mills(double x, double lphi)
{
    if (x > 40.0)
        return 0.0;
    if (x < -100.0) {
        double t = 1.0 / (x * x);
        return -x / (1.0 - t * (1.0 - t * (3.0 - t * (15.0 - 105.0 * t))));
    }
    return exp(-0.5 * x * x - 0.5 * log(2.0 * M_PI) - lphi);
}

/* log_Phi and mills over the N values x at once (the integrals' nodes),
 * with the vector library's erfc, log and exp (vmath.h); the few beyond -30
 * take log_Phi's own path.  On the right log Phi is log(1 - e) of the
 * upper tail e, not log1p(-e): its absolute error, 1e-16, is what the
 * integrals' sums and Mills' ratio, exp(-x^2/2 - log Phi) / sqrt(2 pi),
 * see, and it saves a pass of the vector library over the nodes.  e is N
 * scratch. */
static void log_Phi_array(const double *x, double *lp, double *e, size_t N)
{
#pragma omp simd
    for (size_t k = 0; k < N; k++)
        e[k] = fabs(x[k]) * M_SQRT1_2;
    gpc_erfc_array(e, N);
#pragma omp simd
    for (size_t k = 0; k < N; k++) {
        e[k] *= 0.5; /* the tail beyond |x| */
        lp[k] = x[k] > 0.0 ? 1.0 - e[k] : e[k];
    }
    gpc_log_array(lp, N);
#pragma omp simd
    for (size_t k = 0; k < N; k++)
        lp[k] = x[k] > 0.0 && e[k] < 1e-9 ? -e[k] - 0.5 * e[k] * e[k] : lp[k];
    for (size_t k = 0; k < N; k++)
        if (x[k] <= -30.0)
            lp[k] = log_Phi(x[k]);
}

static void mills_array(const double *x, const double *lp, double *ml, size_t N)
{
#pragma omp simd
    for (size_t k = 0; k < N; k++)
        ml[k] = -0.5 * x[k] * x[k] - 0.5 * log(2.0 * M_PI) - lp[k];
    gpc_exp_array(ml, N);
    for (size_t k = 0; k < N; k++)
        if (x[k] > 40.0 || x[k] < -100.0)
            ml[k] = mills(x[k], lp[k]);
}

/* log of phi(u) prod_j Phi(s_j u + d_j), without phi's constant. */
static double log_integrand(const gpc_mprobit_rule *r, size_t nJ, double u)
{
    double h = -0.5 * u * u;
    for (size_t j = 0; j < nJ; j++)
        h += log_Phi(r->sj[j] * u + r->dj[j]);
    return h;
}

/* The standard normal cut above at a, e ~ N(0, 1) given e < a, by its
 * cumulants: mean -lambda with lambda = phi(a) / Phi(a) (l, from mills),
 * variance 1 - lambda eps and third cumulant -lambda (2 eps^2 - a eps - 1),
 * eps = a + lambda.  Far to the left eps, the variance and the third
 * cumulant (about 1 / |a|, 1 / a^2 and -2 / |a|^3) are differences of
 * numbers near 1 or |a|, so below TAIL_CF they come from Laplace's
 * continued fraction lambda = z + c_1, c_k = k / (z + c_{k+1}), z = -a, in
 * which eps = c_1, the variance is c_1 (c_2 - c_1) and the third cumulant's
 * bracket is 2 c_1^2 (1 + c_3^2 - c_3 c_4) / (z + c_3)^2, all without
 * cancellation; TAIL_DEPTH terms give all three to rounding from z = 5 on
 * (against 50-digit arithmetic; an asymptotic series of four terms erred
 * by 6e-6 in eps at a = -10, 7e-4 in the variance). */
#define TAIL_CF (-5.0)
#define TAIL_DEPTH 40

typedef struct {
    double lambda, eps, var, k3;
} tail_cumulants;

static tail_cumulants cut_normal(double a, double l)
{
    tail_cumulants t;
    if (a >= TAIL_CF) {
        t.lambda = l;
        t.eps = a + l;
        t.var = 1.0 - l * t.eps;
        t.k3 = -l * (t.eps * (2.0 * t.eps - a) - 1.0);
        return t;
    }
    double z = -a, c = 0.0, c2 = 0.0, c3 = 0.0, c4 = 0.0;
    for (int k = TAIL_DEPTH; k >= 1; k--) {
        c = k / (z + c);
        if (k == 4)
            c4 = c;
        else if (k == 3)
            c3 = c;
        else if (k == 2)
            c2 = c;
    }
    double zc3 = z + c3;
    t.eps = c;
    t.lambda = z + c;
    t.var = c * (c2 - c);
    t.k3 = -t.lambda * 2.0 * c * c * (1.0 + c3 * c3 - c3 * c4) / (zc3 * zc3);
    return t;
}

/* The log integrand h at u and its first two derivatives, in one pass
 * over the factors (h'' is at least 1 in size; rounding in a + l far to
 * the left could make it look smaller).  The factors' values go through
 * the rule's scratch. */
static double derivatives(gpc_mprobit_rule *r, size_t nJ, double u, double *g, double *H)
{
    double h = -0.5 * u * u, *a = r->tmp, *lp = a + nJ, *ml = lp + nJ;
    for (size_t j = 0; j < nJ; j++)
        a[j] = r->sj[j] * u + r->dj[j];
    log_Phi_array(a, lp, ml, nJ);
    mills_array(a, lp, ml, nJ);
    *g = -u;
    *H = -1.0;
    for (size_t j = 0; j < nJ; j++) {
        double s = r->sj[j];
        h += lp[j];
        *g += s * ml[j];
        *H -= s * s * ml[j] * cut_normal(a[j], ml[j]).eps;
    }
    if (*H > -1.0)
        *H = -1.0;
    return h;
}

/* The mode of the log-concave integrand by Newton's method (its second
 * derivative is at most -1, so the steps are bounded by the slope), with
 * step halving as a guard; returns the mode and the curvature there. */
static double mode(gpc_mprobit_rule *r, size_t nJ, double *curvature)
{
    double u = 0.0, g, H, h = derivatives(r, nJ, u, &g, &H);
    for (int it = 0; it < MODE_ITERATIONS; it++) {
        double step = -g / H, gt, Ht, ht = derivatives(r, nJ, u + step, &gt, &Ht);
        while (!(ht >= h) && fabs(step) > 1e-12 * (1.0 + fabs(u))) {
            step *= 0.5;
            ht = derivatives(r, nJ, u + step, &gt, &Ht);
        }
        if (!(ht >= h))
            break;
        u += step;
        h = ht;
        g = gt;
        H = Ht;
        if (fabs(step) <= 1e-13 * (1.0 + fabs(u)))
            break;
    }
    *curvature = H;
    return u;
}

/* log of int phi(u) prod_j Phi(s_j u + d_j) du by Gauss-Hermite quadrature
 * centred on the mode and scaled to the curvature; leaves the nodes in u,
 * their normalised weights in W, and at node q a_j, log Phi(a_j) and Mills'
 * ratio in a, lp and ml[q nJ + j]. */
static double integrate(gpc_mprobit_rule *r, size_t nJ)
{
    size_t N = NODES * nJ;
    double H, u0 = mode(r, nJ, &H), scale = M_SQRT2 / sqrt(-H), mx = -INFINITY;
    for (size_t q = 0; q < NODES; q++) {
        double u = u0 + scale * r->t[q], *a = r->a + q * nJ;
        r->u[q] = u;
        for (size_t j = 0; j < nJ; j++)
            a[j] = r->sj[j] * u + r->dj[j];
    }
    log_Phi_array(r->a, r->lp, r->ml, N);
    mills_array(r->a, r->lp, r->ml, N);
    for (size_t q = 0; q < NODES; q++) {
        double L = r->logw[q] - 0.5 * r->u[q] * r->u[q];
        for (size_t j = 0; j < nJ; j++)
            L += r->lp[q * nJ + j];
        r->W[q] = L;
        mx = fmax(mx, L);
    }
    double sum = 0.0;
    for (size_t q = 0; q < NODES; q++) {
        r->W[q] = exp(r->W[q] - mx);
        sum += r->W[q];
    }
    for (size_t q = 0; q < NODES; q++)
        r->W[q] /= sum;
    return mx + log(sum) + log(scale) - 0.5 * log(2.0 * M_PI);
}

double gpc_mprobit_case(gpc_mprobit_rule *r, size_t i, const double *mu, double *ybar)
{
    size_t nJ = 0;
    for (size_t j = 0; j < r->C; j++)
        if (j != i) {
            r->sj[nJ] = 1.0;
            r->dj[nJ] = mu[i] - mu[j];
            r->idx[nJ++] = j;
        }
    double log_p = integrate(r, nJ);
    if (ybar) {
        double total = 0.0;
        for (size_t j = 0; j < nJ; j++) {
            double e = 0.0;
            for (size_t q = 0; q < NODES; q++)
                e += r->W[q] * r->ml[q * nJ + j];
            ybar[r->idx[j]] = mu[r->idx[j]] - e;
            total += e;
        }
        ybar[i] = mu[i] + total;
    }
    return log_p;
}

/* Given the winner's value y_i = mu_i + u the rivals are independent, each
 * a normal cut above at y_i: g(u) = E[y | u] - mu is u for the winner and
 * -lambda(a_j) for rival j, a_j = u + d_j.  gbar = E_u[g] by the last
 * call's quadrature. */
static void mean_offsets(const gpc_mprobit_rule *r, size_t i, double *gbar)
{
    size_t C = r->C;
    for (size_t k = 0; k < C; k++)
        gbar[k] = 0.0;
    for (size_t q = 0; q < NODES; q++) {
        gbar[i] += r->W[q] * r->u[q];
        for (size_t j = 0; j + 1 < C; j++)
            gbar[r->idx[j]] -= r->W[q] * r->ml[q * (C - 1) + j];
    }
}

/* At node q: g - gbar, and the conditional variances and third cumulants
 * of y given u (zero for the winner, whose value u fixes). */
static void node_terms(const gpc_mprobit_rule *r, size_t i, size_t q, const double *gbar,
                       double *g, double *var, double *k3)
{
    size_t C = r->C;
    g[i] = r->u[q] - gbar[i];
    var[i] = k3[i] = 0.0;
    for (size_t j = 0; j + 1 < C; j++) {
        tail_cumulants t = cut_normal(r->a[q * (C - 1) + j], r->ml[q * (C - 1) + j]);
        size_t k = r->idx[j];
        g[k] = -t.lambda - gbar[k];
        var[k] = t.var;
        k3[k] = t.k3;
    }
}

void gpc_mprobit_curvature(const gpc_mprobit_rule *r, size_t i, double *W)
{
    size_t C = r->C; /* the last call's offsets d_j = mu_i - mu_j */
    double gbar[C], g[C], var[C], k3[C];
    /* Cov(y | i) = E_u[diag Var(y_j | u)] + Cov_u(E[y | u]) */
    for (size_t k = 0; k < C * C; k++)
        W[k] = 0.0;
    mean_offsets(r, i, gbar);
    for (size_t q = 0; q < NODES; q++) {
        double wq = r->W[q];
        node_terms(r, i, q, gbar, g, var, k3);
        for (size_t k = 0; k < C; k++) {
            W[k * C + k] += wq * var[k];
            for (size_t l = 0; l <= k; l++)
                W[k * C + l] += wq * g[k] * g[l];
        }
    }
    for (size_t k = 0; k < C; k++) {
        for (size_t l = 0; l < k; l++)
            W[l * C + k] = W[k * C + l] = -W[k * C + l];
        W[k * C + k] = 1.0 - W[k * C + k];
    }
}

double gpc_mprobit_sqrt(size_t C, const double *W, double *F, double *scratch,
                        gsl_eigen_symmv_workspace *eig)
{
    double *Wc = scratch, *E = Wc + C * C, *ev = E + C * C, trace = 0.0;
    for (size_t k = 0; k < C * C; k++)
        Wc[k] = W[k];
    gsl_matrix_view Wv = gsl_matrix_view_array(Wc, C, C), Ev = gsl_matrix_view_array(E, C, C);
    gsl_vector_view evv = gsl_vector_view_array(ev, C);
    gsl_eigen_symmv(&Wv.matrix, &evv.vector, &Ev.matrix, eig);
    for (size_t k = 0; k < C; k++) {
        ev[k] = fmin(fmax(ev[k], 0.0), 1.0);
        trace += ev[k];
        ev[k] = sqrt(ev[k]);
    }
    for (size_t k = 0; k < C; k++)
        for (size_t l = 0; l <= k; l++) {
            double f = 0.0;
            for (size_t e = 0; e < C; e++)
                f += E[k * C + e] * ev[e] * E[l * C + e];
            F[k * C + l] = F[l * C + k] = f;
        }
    return trace;
}

void gpc_mprobit_blocks_apply(size_t n, size_t C, const double *blocks, const double *x,
                              double *out)
{
    for (size_t i = 0; i < n; i++) {
        const double *Mi = blocks + i * C * C;
        double xi[C];
        for (size_t c = 0; c < C; c++)
            xi[c] = x[c * n + i];
        for (size_t c = 0; c < C; c++) {
            double s = 0.0;
            for (size_t e = 0; e < C; e++)
                s += Mi[c * C + e] * xi[e];
            out[c * n + i] = s;
        }
    }
}

void gpc_mprobit_third(const gpc_mprobit_rule *r, size_t i, double *T)
{
    size_t C = r->C, C2 = C * C;
    double gbar[C], g[C], var[C], k3[C], ek[C], gv[C2];
    /* the law of total cumulance with u as the condition:
     *   T_abc = d_abc E[k3_a] + E[g_a g_b g_c] + d_bc E[g_a var_b]
     *           + d_ac E[g_b var_a] + d_ab E[g_c var_a]
     * (g centred, d_ the Kronecker deltas), the third moment of g
     * accumulated for a >= b >= c and copied to the other orders */
    for (size_t k = 0; k < C2 * C; k++)
        T[k] = 0.0;
    for (size_t k = 0; k < C; k++)
        ek[k] = 0.0;
    for (size_t k = 0; k < C2; k++)
        gv[k] = 0.0;
    mean_offsets(r, i, gbar);
    for (size_t q = 0; q < NODES; q++) {
        double wq = r->W[q];
        node_terms(r, i, q, gbar, g, var, k3);
        for (size_t a = 0; a < C; a++) {
            ek[a] += wq * k3[a];
            for (size_t b = 0; b < C; b++)
                gv[a * C + b] += wq * g[a] * var[b];
            for (size_t b = 0; b <= a; b++)
                for (size_t c = 0; c <= b; c++)
                    T[(a * C + b) * C + c] += wq * g[a] * g[b] * g[c];
        }
    }
    for (size_t a = 0; a < C; a++)
        for (size_t b = 0; b <= a; b++)
            for (size_t c = 0; c <= b; c++) {
                double t = T[(a * C + b) * C + c];
                size_t p[6][3] = {{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}};
                for (int k = 0; k < 6; k++)
                    T[(p[k][0] * C + p[k][1]) * C + p[k][2]] = t;
            }
    for (size_t a = 0; a < C; a++) {
        T[(a * C + a) * C + a] += ek[a];
        for (size_t b = 0; b < C; b++) {
            T[(a * C + b) * C + b] += gv[a * C + b]; /* b = c */
            T[(b * C + a) * C + b] += gv[a * C + b]; /* a = c: E[g_b var_a] at (b, a, b) */
            T[(b * C + b) * C + a] += gv[a * C + b]; /* a = b */
        }
    }
}

/* The integrand scaled by its value at the mode, for the adaptive rule. */
static double scaled_integrand(double u, void *params)
{
    const gpc_mprobit_rule *r = params;
    return exp(log_integrand(r, r->nJ, u) - r->h0);
}

/* log of the same integral as integrate's, adaptively (see HALF_RANGE). */
static double integrate_adaptive(gpc_mprobit_rule *r, size_t nJ)
{
    double H, u0 = mode(r, nJ, &H), result, err;
    r->nJ = nJ;
    r->h0 = log_integrand(r, nJ, u0);
    gsl_function F = {scaled_integrand, r};
    /* a tolerance that rounding will not let it reach is reported (to the
     * tools' quiet handler) with the best estimate, which is what we want */
    gsl_integration_qag(&F, u0 - HALF_RANGE, u0 + HALF_RANGE, 0.0, 1e-13, QAG_LIMIT,
                        GSL_INTEG_GAUSS21, r->qag, &result, &err);
    return r->h0 + log(result) - 0.5 * log(2.0 * M_PI);
}

void gpc_mprobit_probs(gpc_mprobit_rule *r, const double *mu, const double *nu2, double *p)
{
    for (size_t k = 0; k < r->C; k++) {
        size_t nJ = 0;
        for (size_t j = 0; j < r->C; j++)
            if (j != k) {
                double nj = sqrt(nu2[j]);
                r->sj[nJ] = sqrt(nu2[k]) / nj;
                r->dj[nJ++] = (mu[k] - mu[j]) / nj;
            }
        p[k] = exp(integrate_adaptive(r, nJ));
    }
}
