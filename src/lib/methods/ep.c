#include "methods/ep.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_erf.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "linalg/bmatrix.h"

/* Rank-one updates held back and applied to Sigma together, as one matrix
 * product: each site update needs only its own column of Sigma, which is the
 * stored column corrected by the updates still held back. */
#define UPDATE_BLOCK 128
/* sweeps between recomputations of Sigma from scratch (see run_damped) */
#define RECOMPUTE_EVERY 8
/* site changes below this many tol: the evidence is followed sweep by sweep */
#define EVIDENCE_FROM 1e4

/* Kept beside gpc_ep_alloc, whose allocations it counts. */
size_t gpc_ep_workspace(size_t n, size_t nparams)
{
    /* K, Sigma and L; seven vectors, U and W, c and Bg */
    size_t cols = 7 + 2 * UPDATE_BLOCK + (nparams > 0 ? nparams : 1);
    size_t bytes = gpc_size_mul(3, gpc_doubles_bytes(n, n));
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(n, cols));
    return gpc_size_add(bytes, gpc_doubles_bytes(UPDATE_BLOCK > n ? UPDATE_BLOCK : n, 1));
}

gpc_ep *gpc_ep_alloc(size_t n, size_t nparams)
{
    gpc_ep *e = gpc_calloc(1, sizeof *e);
    e->n = n;
    gpc_ep_set_likelihood(e, GPC_LIK_PROBIT, 0.0);
    e->K = gpc_matrix_alloc(n, n);
    e->Sigma = gpc_matrix_alloc(n, n);
    e->L = gpc_matrix_alloc(n, n);
    e->tau = gpc_vector_calloc(n);
    e->nu = gpc_vector_calloc(n);
    e->sign = gpc_vector_alloc(n);
    e->mu = gpc_vector_calloc(n);
    e->t1 = gpc_vector_alloc(n);
    e->t2 = gpc_vector_alloc(n);
    e->b = gpc_vector_alloc(n);
    e->U = gpc_matrix_alloc(n, UPDATE_BLOCK);
    e->W = gpc_matrix_alloc(n, UPDATE_BLOCK);
    e->c = gpc_vector_alloc(UPDATE_BLOCK > n ? UPDATE_BLOCK : n);
    e->Bg = gpc_matrix_alloc(n, nparams > 0 ? nparams : 1);
    e->damping = 1.0;
    e->auto_damping = 1;
    e->max_sweeps = 200;
    e->tol = GPC_EP_TOL;
    return e;
}

void gpc_ep_free(gpc_ep *e)
{
    if (!e)
        return;
    gsl_matrix_free(e->K);
    gsl_matrix_free(e->Sigma);
    gsl_matrix_free(e->L);
    gsl_vector_free(e->tau);
    gsl_vector_free(e->nu);
    gsl_vector_free(e->sign);
    gpc_bmatrix_pivots_free(e->piv);
    gsl_vector_free(e->mu);
    gsl_vector_free(e->t1);
    gsl_vector_free(e->t2);
    gsl_vector_free(e->b);
    gsl_matrix_free(e->U);
    gsl_matrix_free(e->W);
    gsl_vector_free(e->c);
    gsl_matrix_free(e->Bg);
    free(e);
}

/* log Phi(z), accurate far into the lower tail. */
static double log_Phi(double z) { return gsl_sf_log_erfc(-z / M_SQRT2) - M_LN2; }

void gpc_ep_probit_moments(double y, double m, double v, double *logZ, double *mean,
                           double *var)
{
    double s = sqrt(1.0 + v), z = y * m / s, lp = log_Phi(z);
    /* N(z) / Phi(z), formed in log space so it stays finite for z << 0 */
    double r = exp(-0.5 * z * z - 0.5 * log(2.0 * M_PI) - lp);
    *logZ = lp;
    *mean = m + y * v * r / s;
    *var = v - v * v * r * (z + r) / (1.0 + v);
}

void gpc_ep_probit(const void *ctx, double y, double m, double v, double *logZ, double *mean,
                   double *var)
{
    (void)ctx;
    gpc_ep_probit_moments(y, m, v, logZ, mean, var);
}

/* With Z(m) = eps + (1 - 2 eps) Phi(z), z = y m / s, s = sqrt(sigma^2 + v):
 * mean = m + v dlogZ/dm, var = v + v^2 d2logZ/dm2 (the derivatives of the
 * log mass with respect to the cavity mean give the tilted moments). */
void gpc_ep_label_noise_moments(const void *ctx, double y, double m, double v, double *logZ,
                                double *mean, double *var)
{
    const gpc_ep_label_noise *l = ctx;
    double s = sqrt(l->sigma * l->sigma + v), z = y * m / s, lp = log_Phi(z);
    double a = log1p(-2.0 * l->eps) + lp; /* log of the noise-free part */
    double lz = l->eps > 0.0 ? fmax(a, log(l->eps)) + log1p(exp(-fabs(a - log(l->eps)))) : a;
    /* (1 - 2 eps) N(z) / Z, formed in log space */
    double r = exp(log1p(-2.0 * l->eps) - 0.5 * z * z - 0.5 * log(2.0 * M_PI) - lz);
    double g1 = y * r / s, g2 = -z * r / (s * s) - g1 * g1;
    *logZ = lz;
    *mean = m + v * g1;
    *var = v + v * v * g2;
}

int gpc_ep_set_likelihood(gpc_ep *e, gpc_lik lik, double eps)
{
    if (lik != GPC_LIK_PROBIT && lik != GPC_LIK_STEP)
        return gpc_fail(GPC_EUSAGE, "EP takes the probit or the step likelihood, not %s",
                        gpc_lik_name(lik));
    if (!(eps >= 0.0 && eps < 0.5))
        return gpc_fail(GPC_EUSAGE, "label noise %g is not in [0, 1/2)", eps);
    e->noise.eps = eps;
    e->noise.sigma = lik == GPC_LIK_STEP ? 0.0 : 1.0;
    /* the plain probit keeps its own, slightly shorter, closed form */
    e->moments = lik == GPC_LIK_PROBIT && eps == 0.0 ? gpc_ep_probit : gpc_ep_label_noise_moments;
    e->moments_ctx = &e->noise;
    return GPC_OK;
}

double gpc_ep_label_noise_predict(const gpc_ep_label_noise *l, double mu, double var)
{
    double s = sqrt(l->sigma * l->sigma + var);
    double p = s > 0.0 ? exp(log_Phi(mu / s)) : (mu > 0.0 ? 1.0 : mu < 0.0 ? 0.0 : 0.5);
    return l->eps + (1.0 - 2.0 * l->eps) * p;
}

/* L = chol(I + D K D) with D = diag(sqrt(tau)) in t1 when every tau >= 0,
 * else the Bunch-Kaufman factor of E + D K D, D = diag(sqrt|tau|) and
 * E = diag(sign tau); returns log|det| / 2 of either. */
static int factor_B(gpc_ep *e, double *half_logdet)
{
    double *d = e->t1->data, *sg = e->sign->data;
    e->indefinite = 0;
    e->improper = 0;
    for (size_t i = 0; i < e->n; i++) {
        double t = gsl_vector_get(e->tau, i);
        d[i] = sqrt(fabs(t));
        sg[i] = t < 0.0 ? -1.0 : 1.0;
        e->indefinite |= t < 0.0;
    }
    if (!e->indefinite) {
        if (gpc_bmatrix_factor(e->K, d, e->L) != 0)
            return gpc_fail(GPC_ENUM, "EP: B = I + S^1/2 K S^1/2 is not positive definite; "
                            "add a jitter term to the kernel");
        *half_logdet = gpc_bmatrix_half_log_det(e->L);
        return GPC_OK;
    }
    if (!e->piv)
        e->piv = gpc_bmatrix_pivots_alloc(e->n);
    if (gpc_bmatrix_factor_signed(e->K, d, sg, e->L, e->piv) != 0)
        return gpc_fail(GPC_ENUM, "EP: the sites' matrix E + D K D is singular (negative site "
                        "precisions); try a smaller damping or a jitter term");
    *half_logdet = gpc_bmatrix_half_log_det_signed(e->L, e->piv);
    size_t neg_sites = 0;
    for (size_t i = 0; i < e->n; i++)
        neg_sites += sg[i] < 0.0;
    size_t neg_A = gpc_bmatrix_negative_eigenvalues_signed(e->L, e->piv);
    e->improper = neg_sites > neg_A ? neg_sites - neg_A : 0;
    return GPC_OK;
}

/* Lower triangle of R = (K + S^-1)^-1 = D B^-1 D in L, from the factor. */
static void form_R(gpc_ep *e)
{
    if (e->indefinite)
        gpc_bmatrix_inverse_signed(e->L, e->piv);
    else
        gpc_bmatrix_inverse(e->L);
    gpc_bmatrix_scale(e->L, e->t1->data);
}

/* Sigma = K - K R K for sites of either sign: the rows of P = K D are the
 * columns of D K, solved in place to those of A^-1 D K and scaled to K R. */
static void sigma_signed(gpc_ep *e)
{
    size_t n = e->n;
    const double *d = e->t1->data;
    gsl_matrix *P = e->Sigma;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            gsl_matrix_set(P, i, j, gsl_matrix_get(e->K, i, j) * d[j]);
    gpc_bmatrix_solve_signed(e->L, e->piv, P->data, n, P->tda);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            *gsl_matrix_ptr(P, i, j) *= d[j];
    gsl_matrix_memcpy(e->L, e->K);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, -1.0, P, e->K, 1.0, e->L);
    /* the new Sigma is in L; P's storage becomes the scratch matrix */
    e->Sigma = e->L;
    e->L = P;
}

/* Sigma = K - V'V with V = L^-1 D K (every tau >= 0). */
static void sigma_positive(gpc_ep *e)
{
    size_t n = e->n;
    gsl_matrix *V = e->Sigma;
    gsl_matrix_memcpy(V, e->K);
    for (size_t i = 0; i < n; i++) {
        gsl_vector_view r = gsl_matrix_row(V, i);
        gsl_vector_scale(&r.vector, gsl_vector_get(e->t1, i));
    }
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, e->L, V);
    gsl_matrix_memcpy(e->L, e->K);
    gsl_blas_dsyrk(CblasLower, CblasTrans, -1.0, V, 1.0, e->L);
    e->Sigma = e->L;
    e->L = V;
}

/* Sigma and mu = Sigma nu from scratch. */
static int recompute(gpc_ep *e, double *half_logdet)
{
    if (gsl_vector_isnull(e->tau) && gsl_vector_isnull(e->nu)) {
        /* no sites yet (every run's start): the prior, B = I */
        gsl_matrix_memcpy(e->Sigma, e->K);
        gsl_vector_set_zero(e->mu);
        gsl_vector_set_zero(e->t1);
        gsl_vector_set_all(e->sign, 1.0);
        e->indefinite = 0;
        e->improper = 0;
        *half_logdet = 0.0;
        return GPC_OK;
    }
    int st = factor_B(e, half_logdet);
    if (st != GPC_OK)
        return st;
    if (e->indefinite)
        sigma_signed(e);
    else
        sigma_positive(e);
    /* one triangle, mirrored, so Sigma is exactly symmetric */
    for (size_t i = 0; i < e->n; i++)
        for (size_t j = 0; j < i; j++)
            gsl_matrix_set(e->Sigma, j, i, gsl_matrix_get(e->Sigma, i, j));
    gsl_blas_dsymv(CblasLower, 1.0, e->Sigma, e->nu, 0.0, e->mu);
    return GPC_OK;
}

/* Cavity of site i from the current Sigma and mu: precision and precision
 * times mean.  Returns 0 if the cavity is improper. */
static int cavity(const gpc_ep *e, size_t i, double *tau_c, double *nu_c)
{
    double s = gsl_matrix_get(e->Sigma, i, i);
    *tau_c = 1.0 / s - gsl_vector_get(e->tau, i);
    *nu_c = gsl_vector_get(e->mu, i) / s - gsl_vector_get(e->nu, i);
    return *tau_c > 0.0;
}


/* Sigma <- Sigma - U diag(c) U' for the first k columns of U, in the lower
 * triangle only (half the flops of a full product): the columns with c > 0
 * and those with c < 0, scaled by sqrt|c|, as two symmetric rank updates
 * (W holds the first group from its left, the second from its right). */
static void apply_updates(gpc_ep *e, size_t k)
{
    size_t pos = 0, neg = 0;
    for (size_t j = 0; j < k; j++) {
        double c = gsl_vector_get(e->c, j);
        if (c == 0.0)
            continue;
        size_t to = c > 0.0 ? pos++ : k - ++neg;
        gsl_vector_view u = gsl_matrix_column(e->U, j), w = gsl_matrix_column(e->W, to);
        gsl_vector_memcpy(&w.vector, &u.vector);
        gsl_vector_scale(&w.vector, sqrt(fabs(c)));
    }
    if (pos > 0) {
        gsl_matrix_view A = gsl_matrix_submatrix(e->W, 0, 0, e->n, pos);
        gsl_blas_dsyrk(CblasLower, CblasNoTrans, -1.0, &A.matrix, 1.0, e->Sigma);
    }
    if (neg > 0) {
        gsl_matrix_view A = gsl_matrix_submatrix(e->W, 0, k - neg, e->n, neg);
        gsl_blas_dsyrk(CblasLower, CblasNoTrans, 1.0, &A.matrix, 1.0, e->Sigma);
    }
}

/* Column i of Sigma from its lower triangle: row i up to the diagonal,
 * column i below it. */
static void sigma_column(const gpc_ep *e, size_t i, gsl_vector *s)
{
    const gsl_matrix *S = e->Sigma;
    for (size_t j = 0; j <= i; j++)
        s->data[j] = S->data[i * S->tda + j];
    for (size_t j = i + 1; j < e->n; j++)
        s->data[j] = S->data[j * S->tda + i];
}

/* A site's move measured by what it does to the posterior marginal at i:
 * the relative change of its precision, dt s_ii, and the change of its mean,
 * dn s_ii, relative to the marginal's scale sqrt(s_ii) + |mu_i|.  Both are
 * dimensionless, so the test does not depend on the kernel's scale: a test
 * on the site parameters themselves, |dt| / (1 + |t|), passes at once when
 * the signal variance is huge (every site precision is then of order 1/v0)
 * and stops EP far from its fixed point. */
static double site_change(double dt, double dn, double sii, double mui)
{
    return fmax(fabs(dt) * sii, fabs(dn) * sii / (sqrt(sii) + fabs(mui)));
}

/* Site i's damped update (damping d) from its posterior marginal, variance
 * sii and mean mui: its new precision and precision times mean.  Returns 0
 * if it cannot be updated: an improper cavity, or a tilted variance lost to
 * rounding (then *lost = 1).  t_new may be negative (a likelihood that is
 * not log-concave); the posterior precision at i, d / vh + (1 - d) / sii,
 * stays positive. */
static int site_update(const gpc_ep *e, const gsl_vector *y, size_t i, double sii, double mui,
                       double d, double *t_new, double *n_new, int *lost)
{
    double t_old = gsl_vector_get(e->tau, i), n_old = gsl_vector_get(e->nu, i);
    double tc = 1.0 / sii - t_old, nc = mui / sii - n_old, lz, mh, vh;
    *lost = 0;
    if (!(tc > 0.0))
        return 0;
    e->moments(e->moments_ctx, gsl_vector_get(y, i), nc / tc, 1.0 / tc, &lz, &mh, &vh);
    if (!(vh > 0.0 && isfinite(mh))) {
        *lost = 1;
        return 0;
    }
    *t_new = d * (1.0 / vh - tc) + (1.0 - d) * t_old;
    *n_new = d * (mh / vh - nc) + (1.0 - d) * n_old;
    return 1;
}

/* One sweep of sequential site updates (R&W Alg. 3.5, lines 5-16); mu is
 * kept current in O(n) per site.  Returns the largest relative site change,
 * and in *skipped the number of sites left as they were because their
 * cavity was improper (possible once some sites have negative precision;
 * later sweeps may find it proper again).  Sigma and mu are left updated. */
static double sweep(gpc_ep *e, const gsl_vector *y, double d, size_t *skipped)
{
    double change = 0.0;
    size_t held = 0;
    gsl_vector *s = e->t2, *w = e->t1;
    *skipped = 0;
    for (size_t i = 0; i < e->n; i++) {
        /* s = column i of the current Sigma */
        sigma_column(e, i, s);
        if (held > 0) {
            gsl_matrix_view U = gsl_matrix_submatrix(e->U, 0, 0, e->n, held);
            gsl_vector_view ui = gsl_matrix_subrow(e->U, i, 0, held);
            gsl_vector_view wv = gsl_vector_subvector(w, 0, held);
            gsl_vector_view cv = gsl_vector_subvector(e->c, 0, held);
            gsl_vector_memcpy(&wv.vector, &ui.vector);
            gsl_vector_mul(&wv.vector, &cv.vector);
            gsl_blas_dgemv(CblasNoTrans, -1.0, &U.matrix, &wv.vector, 1.0, s);
        }
        double sii = gsl_vector_get(s, i), mui = gsl_vector_get(e->mu, i), t_new, n_new;
        double t_old = gsl_vector_get(e->tau, i), n_old = gsl_vector_get(e->nu, i);
        int lost = 0;
        if (!site_update(e, y, i, sii, mui, d, &t_new, &n_new, &lost)) {
            /* the site stays as it is, and the sweep cannot count as converged */
            ++*skipped;
            e->lost += lost;
            continue;
        }
        change = fmax(change, site_change(t_new - t_old, n_new - n_old, sii, mui));
        double dt = t_new - t_old, dn = n_new - n_old, c = dt / (1.0 + dt * sii);
        gsl_vector_set(e->tau, i, t_new);
        gsl_vector_set(e->nu, i, n_new);
        /* Sigma' = Sigma - c s s' and mu' = Sigma' nu' = mu + s (dn (1 - c s_ii) - c mu_i) */
        gsl_blas_daxpy(dn * (1.0 - c * sii) - c * mui, s, e->mu);
        gsl_vector_view uc = gsl_matrix_column(e->U, held);
        gsl_vector_memcpy(&uc.vector, s);
        gsl_vector_set(e->c, held, c);
        if (++held == UPDATE_BLOCK) {
            apply_updates(e, held);
            held = 0;
        }
    }
    if (held > 0)
        apply_updates(e, held);
    return change;
}

/* The largest change a sweep's first update of each site would make from
 * the current posterior, without making it (infinite if a site could not be
 * updated): the fixed-point test in O(n). */
static double site_check(const gpc_ep *e, const gsl_vector *y, double d)
{
    double worst = 0.0, t_new, n_new;
    int lost;
    for (size_t i = 0; i < e->n; i++) {
        double sii = gsl_matrix_get(e->Sigma, i, i), mui = gsl_vector_get(e->mu, i);
        if (!site_update(e, y, i, sii, mui, d, &t_new, &n_new, &lost))
            return HUGE_VAL;
        worst = fmax(worst, site_change(t_new - gsl_vector_get(e->tau, i),
                                        n_new - gsl_vector_get(e->nu, i), sii, mui));
    }
    return worst;
}

/* The EP log evidence from the recomputed posterior (see ep.h). */
static double log_evidence(const gpc_ep *e, const gsl_vector *y, double half_logdet)
{
    double sum = -half_logdet, q;
    for (size_t i = 0; i < e->n; i++) {
        double tc, nc;
        cavity(e, i, &tc, &nc);
        double mc = nc / tc, t = gsl_vector_get(e->tau, i), nv = gsl_vector_get(e->nu, i);
        double lz, mh, vh;
        e->moments(e->moments_ctx, gsl_vector_get(y, i), mc, 1.0 / tc, &lz, &mh, &vh);
        sum += lz;
        sum += 0.5 * log1p(t / tc);
        sum += 0.5 * mc * tc * (t * mc - 2.0 * nv) / (tc + t) - 0.5 * nv * nv / (tc + t);
    }
    gsl_blas_ddot(e->nu, e->mu, &q);
    return sum + 0.5 * q;
}

/* The sites' Gaussian (K^-1 + S)^-1 has negative variances: no posterior,
 * and no evidence, however converged the sweeps. */
static int improper(const gpc_ep *e)
{
    return gpc_fail(GPC_ENUM, "EP: the approximate posterior is improper: K^-1 + S has %zu "
                    "negative eigenvalue(s) with sites of negative precision; try another "
                    "label noise or other kernel hyperparameters",
                    e->improper);
}

double gpc_ep_dlogz_deps(const gpc_ep *e, const gsl_vector *y)
{
    double sum = 0.0, sg = e->noise.sigma;
    for (size_t i = 0; i < e->n; i++) {
        double tc, nc, lz, mh, vh;
        cavity(e, i, &tc, &nc);
        double mc = nc / tc, vc = 1.0 / tc, z = gsl_vector_get(y, i) * mc / sqrt(sg * sg + vc);
        gpc_ep_label_noise_moments(&e->noise, gsl_vector_get(y, i), mc, vc, &lz, &mh, &vh);
        sum += -erf(z / M_SQRT2) * exp(-lz); /* (1 - 2 Phi(z)) / Z_i */
    }
    return sum;
}

/* EP from zero sites with damping d.  Returns GPC_OK, GPC_ENUM for a
 * factorisation failure, or -1 if the sweeps do not settle (the reason is
 * left in *change: negative when the last sweep skipped a site). */
static int run_damped(gpc_ep *e, const gsl_vector *y, double d, double *change)
{
    double hld = 0.0, prev = -HUGE_VAL;
    size_t skipped = 0;
    int st;
    gsl_vector_set_zero(e->tau);
    gsl_vector_set_zero(e->nu);
    if ((st = recompute(e, &hld)) != GPC_OK)
        return st;
    for (e->sweeps = 1; e->sweeps <= e->max_sweeps; e->sweeps++) {
        *change = sweep(e, y, d, &skipped);
        if (!isfinite(*change))
            return -1;
        /* the updated Sigma is kept for RECOMPUTE_EVERY - 1 sweeps, with only
         * B factored for the evidence once the sites' changes are within
         * EVIDENCE_FROM tol (two sweeps' evidence are compared); from scratch
         * every RECOMPUTE_EVERY sweeps, and where the sites have settled:
         * convergence is confirmed on the recomputed posterior, where every
         * site must already be what its update would make it (the updated
         * Sigma loses accuracy where site precisions are huge) */
        int settled = skipped == 0 && *change < e->tol;
        int fresh = settled || e->sweeps % RECOMPUTE_EVERY == 0;
        if (!fresh && *change >= EVIDENCE_FROM * e->tol) {
            prev = -HUGE_VAL; /* far from converged: the evidence is not needed yet */
            continue;
        }
        if ((st = fresh ? recompute(e, &hld) : factor_B(e, &hld)) != GPC_OK)
            return st;
        double z = log_evidence(e, y, hld);
        int done = settled && fabs(z - prev) < 0.1 * e->tol * (1.0 + fabs(z)) &&
                   site_check(e, y, d) < e->tol;
        prev = z;
        if (done && isfinite(z)) {
            e->log_evidence = z;
            return e->improper ? improper(e) : GPC_OK;
        }
    }
    e->sweeps = e->max_sweeps;
    if (skipped > 0)
        *change = -1.0;
    return -1;
}

/* Sequential EP can oscillate where the likelihood is not log-concave (label
 * noise) or the kernel is extreme; damped updates have the same fixed points,
 * so a run that does not settle is started again with half the damping, down
 * to MIN_DAMPING. */
#define MIN_DAMPING 0.1

int gpc_ep_run(gpc_ep *e, const gsl_vector *y)
{
    double d = e->damping, change = HUGE_VAL;
    gpc_parallel_blas(e->n);
    for (;;) {
        int st = run_damped(e, y, d, &change);
        if (st != -1)
            return st;
        if (!e->auto_damping || d / 2 < MIN_DAMPING)
            break;
        gpc_info(2, "EP: no convergence with damping %g after %d sweeps; starting again "
                 "with damping %g", d, e->sweeps, d / 2);
        d /= 2;
    }
    return gpc_fail(GPC_ENUM, "EP did not converge: %s at sweep %d with damping %g (largest "
                    "site change %.3g); try a smaller damping, e.g. --damping=%g",
                    change < 0.0 ? "a site could not be updated (its cavity variance "
                                   "negative or its tilted variance lost to rounding)"
                                 : "still moving",
                    e->sweeps, d, change, d / 4);
}

/* b = K^-1 mu = nu - R K nu, formed without that difference: with
 * A = E + D K D (E = I when every tau >= 0, A = B), I - R K = D A^-1 E D^-1,
 * so b = D A^-1 (E nu / D).  The difference cancels to rounding noise once
 * K is huge (b is then of order 1 / v0).  Sites with tau = 0 have nu = 0
 * and contribute nothing.  Needs the factor of A in L and D in t1. */
static void form_b(gpc_ep *e, gsl_vector *b)
{
    const double *d = e->t1->data, *sg = e->sign->data;
    for (size_t i = 0; i < e->n; i++) {
        double nv = gsl_vector_get(e->nu, i);
        gsl_vector_set(b, i, d[i] > 0.0 ? sg[i] * nv / d[i] : 0.0);
    }
    if (e->indefinite) {
        gpc_bmatrix_solve_signed(e->L, e->piv, b->data, 1, e->n);
    } else {
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, e->L, b);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, e->L, b);
    }
    gsl_vector_mul(b, e->t1);
}

int gpc_ep_set_sites(gpc_ep *e, const gsl_vector *tau, const gsl_vector *nu)
{
    double hld;
    gpc_parallel_blas(e->n);
    gsl_vector_memcpy(e->tau, tau);
    gsl_vector_memcpy(e->nu, nu);
    int st = factor_B(e, &hld);
    if (st != GPC_OK)
        return st;
    if (e->improper)
        return improper(e);
    form_b(e, e->b);
    return GPC_OK;
}

/* k*' R k* for every column of Ks (left as it is) with sites of either
 * sign: the columns of D Ks solved by the Bunch-Kaufman factor. */
static void quad_signed(const gpc_ep *e, const gsl_matrix *Ks, gsl_vector *q)
{
    size_t n = e->n, m = Ks->size2;
    const double *d = e->t1->data;
    double *T = gpc_malloc(m * n * sizeof *T);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            T[j * n + i] = d[i] * gsl_matrix_get(Ks, i, j);
    gpc_bmatrix_solve_signed(e->L, e->piv, T, m, n);
    for (size_t j = 0; j < m; j++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += d[i] * gsl_matrix_get(Ks, i, j) * T[j * n + i];
        gsl_vector_set(q, j, s);
    }
    free(T);
}

/* The same with every tau >= 0: |L^-1 D k*|^2, overwriting Ks. */
static void quad_positive(const gpc_ep *e, gsl_matrix *Ks, gsl_vector *q)
{
    for (size_t i = 0; i < e->n; i++) {
        gsl_vector_view r = gsl_matrix_row(Ks, i);
        gsl_vector_scale(&r.vector, gsl_vector_get(e->t1, i));
    }
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, e->L, Ks);
    for (size_t j = 0; j < Ks->size2; j++) {
        gsl_vector_view c = gsl_matrix_column(Ks, j);
        double s;
        gsl_blas_ddot(&c.vector, &c.vector, &s);
        gsl_vector_set(q, j, s);
    }
}

void gpc_ep_predict(const gpc_ep *e, gsl_matrix *Ks, const gsl_vector *kss, gsl_vector *mean,
                    gsl_vector *var)
{
    gsl_blas_dgemv(CblasTrans, 1.0, Ks, e->b, 0.0, mean);
    if (e->indefinite)
        quad_signed(e, Ks, var);
    else
        quad_positive(e, Ks, var);
    for (size_t j = 0; j < Ks->size2; j++) {
        double v = gsl_vector_get(kss, j) - gsl_vector_get(var, j);
        gsl_vector_set(var, j, v > 0.0 ? v : 0.0);
    }
}

int gpc_ep_evidence(gpc_ep *e, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                    double *log_evidence, double *grad)
{
    gpc_kernel_matrix(k, X, e->K);
    int st = gpc_ep_run(e, y);
    if (st != GPC_OK)
        return st;
    *log_evidence = e->log_evidence;
    if (!isfinite(*log_evidence)) /* never a number that is not one with status 0 */
        return gpc_fail(GPC_ENUM, "EP: the log evidence is not finite at these "
                        "hyperparameters; try values of moderate size");
    if (!grad)
        return GPC_OK;
    /* b = K^-1 mu in e->b, then R = D B^-1 D in L (lower) */
    double hld;
    if ((st = factor_B(e, &hld)) != GPC_OK)
        return st;
    gsl_vector *b = e->b;
    form_b(e, b);
    form_R(e);
    gpc_kernel_grad_contract(k, X, e->K, b, 0.5, e->L, -0.5, b, grad, e->Bg);
    for (size_t j = 0; j < gpc_kernel_nparams(k); j++)
        if (!isfinite(grad[j]))
            return gpc_fail(GPC_ENUM, "EP: the evidence gradient is not finite here");
    return GPC_OK;
}
