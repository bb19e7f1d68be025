#include "meanfield.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>

#include "alloc.h"
#include "err.h"
#include "parallel.h"

#define X_RTOL 1e-10

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
    m->damping = 1.0;
    m->max_sweeps = 20000;
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

int gpc_meanfield_run(gpc_meanfield *m, const gsl_vector *y)
{
    if (!(m->damping > 0.0 && m->damping <= 1.0))
        return gpc_fail(GPC_EUSAGE, "naive mean field: the damping must be in (0, 1], not %g",
                        m->damping);
    if (m->max_sweeps < 1)
        return gpc_fail(GPC_EUSAGE, "naive mean field: the number of sweeps must be at least "
                        "1, not %d", m->max_sweeps);
    int st = check_diag(m);
    if (st != GPC_OK)
        return st;
    gpc_parallel_blas(m->n);
    gsl_vector_set_zero(m->x);
    gsl_vector_set_zero(m->h);
    double change = HUGE_VAL;
    for (m->sweeps = 1; m->sweeps <= m->max_sweeps; m->sweeps++) {
        if ((st = sweep(m, y, &change)) != GPC_OK) {
            recompute_h(m);
            cavities(m);
            return st;
        }
        recompute_h(m);
        if (change < X_RTOL) {
            cavities(m);
            return GPC_OK;
        }
    }
    m->sweeps = m->max_sweeps;
    cavities(m);
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

void gpc_meanfield_predict(const gpc_meanfield *m, const gsl_matrix *Ks, const gsl_vector *kss,
                           gsl_vector *mean, gsl_vector *var)
{
    gsl_blas_dgemv(CblasTrans, 1.0, Ks, m->x, 0.0, mean);
    gsl_vector_memcpy(var, kss);
}
