#include "methods/meanfield.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "linalg/bmatrix.h"

#define X_RTOL 1e-10
/* Armijo's sufficient decrease of the merit |F|^2 / 2 along a Newton step */
#define ARMIJO 1e-4
/* a line search that has halved the step to below this gives up on it */
#define MIN_STEP 1e-10
/* sweeps taken when a Newton step is unusable, before Newton resumes */
#define FALLBACK_SWEEPS 20
/* e_i = v_i / lambda_i is kept above this: a tilted variance that rounds
 * to zero would make the site precision w_i infinite */
#define E_MIN 1e-14
/* the solvers' own status for "out of sweeps or steps", never returned */
#define NOT_CONVERGED (-1)

/* Newton's workspace: the factor of B (or of the signed A) and vectors. */
struct gpc_mf_newton {
    gsl_matrix *B;
    gpc_bmatrix_pivots *piv; /* allocated when some w_i < 0 */
    gsl_vector *F, *w, *e, *d, *sg, *dx, *u, *xt, *ht, *Ft;
};

static struct gpc_mf_newton *newton_alloc(size_t n)
{
    struct gpc_mf_newton *nw = gpc_calloc(1, sizeof *nw);
    nw->B = gpc_matrix_alloc(n, n);
    gsl_vector **v[] = {&nw->F, &nw->w, &nw->e, &nw->d, &nw->sg, &nw->dx, &nw->u, &nw->xt,
                        &nw->ht, &nw->Ft};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        *v[k] = gpc_vector_calloc(n);
    return nw;
}

static void newton_free(struct gpc_mf_newton *nw)
{
    if (!nw)
        return;
    gsl_matrix_free(nw->B);
    gpc_bmatrix_pivots_free(nw->piv);
    gsl_vector *v[] = {nw->F, nw->w, nw->e, nw->d, nw->sg, nw->dx, nw->u, nw->xt, nw->ht,
                       nw->Ft};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        gsl_vector_free(v[k]);
    free(nw);
}

/* Kept beside newton_alloc and gpc_meanfield_alloc, whose allocations it
 * counts. */
size_t gpc_meanfield_workspace(size_t n)
{
    /* K and Newton's B; x, h, the cavities' two and Newton's ten vectors */
    return gpc_size_add(gpc_size_mul(2, gpc_doubles_bytes(n, n)), gpc_doubles_bytes(n, 14));
}

gpc_meanfield *gpc_meanfield_alloc(size_t n)
{
    gpc_meanfield *m = gpc_calloc(1, sizeof *m);
    m->n = n;
    m->moments = gpc_ep_probit;
    m->K = gpc_matrix_alloc(n, n);
    m->x = gpc_vector_calloc(n);
    m->h = gpc_vector_calloc(n);
    m->cav_mean = gpc_vector_calloc(n);
    m->cav_var = gpc_vector_calloc(n);
    m->solver = GPC_MF_NEWTON;
    m->damping = 1.0;
    m->max_sweeps = 20000;
    m->max_newton = 100;
    return m;
}

void gpc_meanfield_free(gpc_meanfield *m)
{
    if (!m)
        return;
    gsl_matrix_free(m->K);
    gsl_vector_free(m->x);
    gsl_vector_free(m->h);
    gsl_vector_free(m->cav_mean);
    gsl_vector_free(m->cav_var);
    newton_free(m->newton);
    free(m);
}

/* Every prior variance must be positive: it is the cavity variance. */
static int check_diag(const gpc_meanfield *m)
{
    for (size_t i = 0; i < m->n; i++) {
        double kii = gsl_matrix_get(m->K, i, i);
        if (!(kii > 0.0) || !isfinite(kii))
            return gpc_fail(GPC_ENUM, "naive mean field: the prior variance K[%zu,%zu] = %g "
                            "is not positive; check the kernel or add a jitter term",
                            i + 1, i + 1, kii);
    }
    return GPC_OK;
}

/* h = K x from scratch. */
static void recompute_h(gpc_meanfield *m)
{
    gsl_blas_dsymv(CblasLower, 1.0, m->K, m->x, 0.0, m->h);
}

/* Cavities from the current h and x: m_i = h_i - K_ii x_i, lambda_i = K_ii. */
static void cavities(gpc_meanfield *m)
{
    for (size_t i = 0; i < m->n; i++) {
        double kii = gsl_matrix_get(m->K, i, i);
        gsl_vector_set(m->cav_var, i, kii);
        gsl_vector_set(m->cav_mean, i, gsl_vector_get(m->h, i) - kii * gsl_vector_get(m->x, i));
    }
}

/* One Gauss-Seidel sweep; h is kept current in O(n) per case.  Stores the
 * largest relative undamped step |g_i - x_i| / (1 + |g_i|) in *change. */
static int sweep(gpc_meanfield *m, const gsl_vector *y, double *change)
{
    double d = m->damping, worst = 0.0;
    for (size_t i = 0; i < m->n; i++) {
        double kii = gsl_matrix_get(m->K, i, i), xi = gsl_vector_get(m->x, i);
        double mi = gsl_vector_get(m->h, i) - kii * xi, lz, mh, vh;
        m->moments(m->moments_ctx, gsl_vector_get(y, i), mi, kii, &lz, &mh, &vh);
        double g = (mh - mi) / kii;
        if (!isfinite(lz) || !isfinite(mh) || !isfinite(g))
            return gpc_fail(GPC_ENUM, "naive mean field: the likelihood's moments are not "
                            "finite for case %zu (cavity mean %g, variance %g) in sweep %d; "
                            "check the labels and the kernel's scale",
                            i + 1, mi, kii, m->sweeps);
        double step = g - xi;
        worst = fmax(worst, fabs(step) / (1.0 + fabs(g)));
        double dx = d * step;
        if (dx != 0.0) {
            /* K is symmetric: row i is column i, and contiguous */
            gsl_vector_const_view ki = gsl_matrix_const_row(m->K, i);
            gsl_blas_daxpy(dx, &ki.vector, m->h);
            gsl_vector_set(m->x, i, xi + dx);
        }
    }
    *change = worst;
    return GPC_OK;
}

/* The sweeps from the current x and h, until converged or max_sweeps in all
 * (counted in m->sweeps). */
static int run_sweeps(gpc_meanfield *m, const gsl_vector *y, int max_sweeps, double *change)
{
    for (int k = 0; k < max_sweeps; k++) {
        m->sweeps++;
        int st = sweep(m, y, change);
        recompute_h(m);
        if (st != GPC_OK)
            return st;
        if (*change < X_RTOL)
            return GPC_OK;
    }
    return NOT_CONVERGED;
}

/* F = x - g(m) at x with h = K x, m_i = h_i - K_ii x_i; the merit |F|^2 / 2
 * and the largest relative step |F_i| / (1 + |g_i|) (the sweeps' test).
 * With w and e (else NULL): e_i = v_i / lambda_i and the site precisions
 * w_i = (1 / e_i - 1) / lambda_i, for the Jacobian J = E (I + W K).
 * Returns 0, or 1 + the first case whose moments are not finite. */
static size_t residual(const gpc_meanfield *m, const gsl_vector *y, const gsl_vector *x,
                       const gsl_vector *h, gsl_vector *F, double *merit, double *change,
                       gsl_vector *w, gsl_vector *e)
{
    double phi = 0.0, worst = 0.0;
    for (size_t i = 0; i < m->n; i++) {
        double kii = gsl_matrix_get(m->K, i, i), xi = gsl_vector_get(x, i);
        double mi = gsl_vector_get(h, i) - kii * xi, lz, mh, vh;
        m->moments(m->moments_ctx, gsl_vector_get(y, i), mi, kii, &lz, &mh, &vh);
        double g = (mh - mi) / kii;
        if (!isfinite(lz) || !isfinite(g) || (w && !isfinite(vh)))
            return i + 1;
        double f = xi - g;
        gsl_vector_set(F, i, f);
        phi += 0.5 * f * f;
        worst = fmax(worst, fabs(f) / (1.0 + fabs(g)));
        if (w) {
            double ei = fmax(vh / kii, E_MIN);
            gsl_vector_set(e, i, ei);
            gsl_vector_set(w, i, (1.0 / ei - 1.0) / kii);
        }
    }
    *merit = phi;
    *change = worst;
    return 0;
}

/* Factor B = I + D K D, D = diag(sqrt w), when every w_i >= 0 (returns 0 in
 * *signed_), else A = sign(W) + D K D, D = diag(sqrt |w|), with pivots
 * (*signed_ = 1); d and sg receive D and sign(W).  Nonzero if singular. */
static int factor(const gsl_matrix *K, const gsl_vector *w, gsl_matrix *B,
                  gpc_bmatrix_pivots **piv, gsl_vector *d, gsl_vector *sg, int *signed_)
{
    size_t n = K->size1;
    int neg = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = gsl_vector_get(w, i);
        gsl_vector_set(d, i, sqrt(fabs(wi)));
        gsl_vector_set(sg, i, wi < 0.0 ? -1.0 : 1.0);
        neg |= wi < 0.0;
    }
    *signed_ = neg;
    if (!neg)
        return gpc_bmatrix_factor(K, d->data, B);
    if (!*piv)
        *piv = gpc_bmatrix_pivots_alloc(n);
    return gpc_bmatrix_factor_signed(K, d->data, sg->data, B, *piv);
}

/* u <- A^-1 u from the factor (B = L L' when !signed_). */
static void factor_solve(const gsl_matrix *B, const gpc_bmatrix_pivots *piv, int signed_,
                         gsl_vector *u)
{
    if (signed_) {
        gpc_bmatrix_solve_signed(B, piv, u->data, 1, u->size);
        return;
    }
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, B, u);
    gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, B, u);
}

/* The Newton step dx solving J dx = -F, J = E (I + W K): with r = -E^-1 F,
 * dx = (I + W K)^-1 r = r - D A^-1 D K r (A = B, or sign(W) + D K D; check:
 * (I + D S D K)(I - D A^-1 D K) = I + D S D K - D (I + S D K D) A^-1 D K and
 * I + S D K D = S A).  Nonzero if the factor fails. */
static int newton_direction(gpc_meanfield *m)
{
    struct gpc_mf_newton *nw = m->newton;
    int signed_;
    if (factor(m->K, nw->w, nw->B, &nw->piv, nw->d, nw->sg, &signed_) != 0)
        return 1;
    for (size_t i = 0; i < m->n; i++)
        gsl_vector_set(nw->dx, i, -gsl_vector_get(nw->F, i) / gsl_vector_get(nw->e, i));
    gsl_blas_dsymv(CblasLower, 1.0, m->K, nw->dx, 0.0, nw->u);
    gsl_vector_mul(nw->u, nw->d);
    factor_solve(nw->B, nw->piv, signed_, nw->u);
    gsl_vector_mul(nw->u, nw->d);
    gsl_vector_sub(nw->dx, nw->u);
    return 0;
}

/* Backtracking from the step m->damping until the merit falls by Armijo's
 * fraction: x, h, F move to the accepted point.  Returns 0 if a step was
 * taken; else 1 (+ the case in *bad if the last trial's moments were not
 * finite, 0 otherwise). */
static int line_search(gpc_meanfield *m, const gsl_vector *y, double *merit, double *change,
                       size_t *bad)
{
    struct gpc_mf_newton *nw = m->newton;
    for (double t = m->damping; t >= MIN_STEP; t *= 0.5) {
        gsl_vector_memcpy(nw->xt, m->x);
        gsl_blas_daxpy(t, nw->dx, nw->xt);
        gsl_blas_dsymv(CblasLower, 1.0, m->K, nw->xt, 0.0, nw->ht);
        double phi, ch;
        *bad = residual(m, y, nw->xt, nw->ht, nw->Ft, &phi, &ch, NULL, NULL);
        if (!*bad && phi <= (1.0 - 2.0 * ARMIJO * t) * *merit) {
            gsl_vector_memcpy(m->x, nw->xt);
            gsl_vector_memcpy(m->h, nw->ht);
            *merit = phi;
            *change = ch;
            return 0;
        }
    }
    return 1;
}

static int not_finite(const gpc_meanfield *m, const gsl_vector *y, size_t case1)
{
    size_t i = case1 - 1;
    double kii = gsl_matrix_get(m->K, i, i);
    double mi = gsl_vector_get(m->h, i) - kii * gsl_vector_get(m->x, i);
    (void)y;
    return gpc_fail(GPC_ENUM, "naive mean field: the likelihood's moments are not finite for "
                    "case %zu (cavity mean %g, variance %g) after %d Newton step%s; check the "
                    "labels and the kernel's scale", case1, mi, kii, m->newton_steps,
                    m->newton_steps == 1 ? "" : "s");
}

/* Newton's method from the current x (h = K x).  A step the line search
 * cannot use, or a factor that fails, gives way to FALLBACK_SWEEPS sweeps
 * (which may themselves converge), and then Newton resumes from there. */
static int run_newton(gpc_meanfield *m, const gsl_vector *y, double *change)
{
    if (!m->newton)
        m->newton = newton_alloc(m->n);
    struct gpc_mf_newton *nw = m->newton;
    double merit;
    while (m->newton_steps + m->fallbacks < m->max_newton) {
        size_t bad = residual(m, y, m->x, m->h, nw->F, &merit, change, nw->w, nw->e);
        if (bad)
            return not_finite(m, y, bad);
        if (*change < X_RTOL)
            return GPC_OK;
        if (newton_direction(m) == 0 && line_search(m, y, &merit, change, &bad) == 0) {
            m->newton_steps++;
            continue;
        }
        m->fallbacks++;
        int st = run_sweeps(m, y, FALLBACK_SWEEPS, change);
        if (st != NOT_CONVERGED)
            return st;
    }
    return NOT_CONVERGED;
}

int gpc_meanfield_run(gpc_meanfield *m, const gsl_vector *y)
{
    if (!(m->damping > 0.0 && m->damping <= 1.0))
        return gpc_fail(GPC_EUSAGE, "naive mean field: the damping must be in (0, 1], not %g",
                        m->damping);
    if (m->max_sweeps < 1)
        return gpc_fail(GPC_EUSAGE, "naive mean field: the number of sweeps must be at least "
                        "1, not %d", m->max_sweeps);
    if (m->max_newton < 1)
        return gpc_fail(GPC_EUSAGE, "naive mean field: the number of Newton steps must be at "
                        "least 1, not %d", m->max_newton);
    int st = check_diag(m);
    if (st != GPC_OK)
        return st;
    gpc_parallel_blas(m->n);
    gsl_vector_set_zero(m->x);
    gsl_vector_set_zero(m->h);
    m->sweeps = m->newton_steps = m->fallbacks = 0;
    double change = HUGE_VAL;
    st = m->solver == GPC_MF_SWEEPS ? run_sweeps(m, y, m->max_sweeps, &change)
                                    : run_newton(m, y, &change);
    recompute_h(m);
    cavities(m);
    if (st != NOT_CONVERGED)
        return st;
    if (m->solver == GPC_MF_NEWTON)
        return gpc_fail(GPC_ENUM, "naive mean field did not converge: still moving after %d "
                        "Newton step%s and %d sweep%s (largest change %.3g); try a jitter "
                        "term in the kernel", m->newton_steps, m->newton_steps == 1 ? "" : "s",
                        m->sweeps, m->sweeps == 1 ? "" : "s", change);
    double hint = m->damping > 0.5 ? 0.5 : m->damping / 2;
    return gpc_fail(GPC_ENUM, "naive mean field did not converge: still moving after %d sweep%s "
                    "(largest change %.3g); try a damping of %g, more sweeps, or a jitter "
                    "term in the kernel", m->sweeps, m->sweeps == 1 ? "" : "s", change, hint);
}

int gpc_meanfield_set_x(gpc_meanfield *m, const gsl_vector *x)
{
    int st = check_diag(m);
    if (st != GPC_OK)
        return st;
    gpc_parallel_blas(m->n);
    gsl_vector_memcpy(m->x, x);
    recompute_h(m);
    cavities(m);
    return GPC_OK;
}

/* The response coefficients rho_i = K_ii - lambda~_i of the leave-one-out
 * means m_i^loo = m_i + rho_i x_i, from the lower triangle of A^-1 in Ainv.
 * With P = (I + W K)^-1 = I - D A^-1 D K (chi = P E^-1, E cancels):
 * rho_i = -sum_{j != i} K_ij P_ji / P_ii, where P_ji = -d_j Z_ji for j != i
 * with Z = A^-1 D K, and P_ii = s_i [A^-1]_ii (D K D = A - S gives
 * P = D A^-1 S D^-1).  Only off-diagonal terms are summed: forming rho_i as
 * K_ii - lambda~_i, or m_i^loo as h_i - lambda~_i x_i, would leave only
 * rounding when K is nearly diagonal and the true values are tiny. */
static void loo_response(const gsl_matrix *K, const gsl_vector *d, const gsl_vector *sg,
                         const gsl_matrix *Ainv, gsl_vector *rho)
{
    size_t n = K->size1;
    gsl_matrix *DK = gpc_matrix_alloc(n, n), *Z = gpc_matrix_alloc(n, n);
    gsl_matrix_memcpy(DK, K);
    for (size_t i = 0; i < n; i++) {
        gsl_vector_view r = gsl_matrix_row(DK, i);
        gsl_vector_scale(&r.vector, gsl_vector_get(d, i));
    }
    gsl_blas_dsymm(CblasLeft, CblasLower, 1.0, Ainv, DK, 0.0, Z);
    for (size_t i = 0; i < n; i++) {
        double off = 0.0; /* sum_{j != i} K_ij d_j Z_ji */
        for (size_t j = 0; j < n; j++)
            if (j != i)
                off += gsl_matrix_get(DK, j, i) * gsl_matrix_get(Z, j, i);
        gsl_vector_set(rho, i, off / (gsl_vector_get(sg, i) * gsl_matrix_get(Ainv, i, i)));
    }
    gsl_matrix_free(DK);
    gsl_matrix_free(Z);
}

int gpc_meanfield_loo(const gpc_meanfield *m, const gsl_vector *y, gsl_vector *mean,
                      gsl_vector *var)
{
    size_t n = m->n;
    struct gpc_mf_newton *nw = newton_alloc(n);
    double merit, change;
    int st = GPC_OK, signed_ = 0;
    gpc_parallel_blas(n);
    size_t bad = residual(m, y, m->x, m->h, nw->F, &merit, &change, nw->w, nw->e);
    if (bad)
        st = gpc_fail(GPC_ENUM, "naive mean field: the likelihood's moments are not finite "
                      "for case %zu at the solution; check the labels and the kernel", bad);
    else if (factor(m->K, nw->w, nw->B, &nw->piv, nw->d, nw->sg, &signed_) != 0)
        st = gpc_fail(GPC_ENUM, "naive mean field: the linear response's matrix is singular; "
                      "try a jitter term in the kernel");
    if (st == GPC_OK) {
        if (signed_)
            gpc_bmatrix_inverse_signed(nw->B, nw->piv);
        else
            gpc_bmatrix_inverse(nw->B);
        loo_response(m->K, nw->d, nw->sg, nw->B, nw->u);
        for (size_t i = 0; i < n; i++) {
            double mi = 0.0; /* sum_{j != i} K_ij x_j, not h_i - K_ii x_i: see above */
            for (size_t j = 0; j < n; j++)
                if (j != i)
                    mi += gsl_matrix_get(m->K, i, j) * gsl_vector_get(m->x, j);
            gsl_vector_set(mean, i, mi + gsl_vector_get(nw->u, i) * gsl_vector_get(m->x, i));
            gsl_vector_set(var, i, gsl_matrix_get(m->K, i, i));
        }
    }
    newton_free(nw);
    return st;
}

void gpc_meanfield_predict(const gpc_meanfield *m, const gsl_matrix *Ks, const gsl_vector *kss,
                           gsl_vector *mean, gsl_vector *var)
{
    gsl_blas_dgemv(CblasTrans, 1.0, Ks, m->x, 0.0, mean);
    gsl_vector_memcpy(var, kss);
}
