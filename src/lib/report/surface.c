#include "report/surface.h"

#include <math.h>

#include "base/alloc.h"
#include "base/err.h"

int gpc_surface_scaling(const gsl_matrix *stats, size_t dim, const char *what, double *mean,
                        double *sd)
{
    if (stats->size1 != 2 || stats->size2 != dim)
        return gpc_fail(GPC_EINPUT, "%s: expected 2 rows of %zu statistics (means, standard "
                        "deviations, as gpc-scale --save writes them for the model's training "
                        "inputs), found %zu x %zu", what, dim, stats->size1, stats->size2);
    for (size_t j = 0; j < dim; j++) {
        double m = gsl_matrix_get(stats, 0, j), s = gsl_matrix_get(stats, 1, j);
        if (!isfinite(m) || !isfinite(s) || s < 0.0)
            return gpc_fail(GPC_EINPUT, "%s: column %zu: mean %g and standard deviation %g "
                            "are not statistics gpc-scale --save writes", what, j + 1, m, s);
        mean[j] = m;
        /* gpc-scale only centres a constant column: its sd is rounding noise */
        sd[j] = s > 1e-12 * fabs(m) ? s : 1.0;
    }
    return GPC_OK;
}

/* The same expressions as gpc-scale's, so that a grid point standardised
 * here is the very double `gpc-scale -r` makes of it. */
double gpc_surface_to_model(const gpc_surface *s, size_t j, double x)
{
    return s->mean ? (x - s->mean[j]) / s->sd[j] : x;
}

double gpc_surface_to_user(const gpc_surface *s, size_t j, double z)
{
    return s->mean ? s->mean[j] + z * s->sd[j] : z;
}

void gpc_surface_means(const gpc_surface *s, const gsl_matrix *X, double *at)
{
    size_t n = X->size1;
    for (size_t j = 0; j < s->dim; j++) {
        double sum = 0.0;
        for (size_t i = 0; i < n; i++)
            sum += gpc_surface_to_user(s, j, gsl_matrix_get(X, i, j));
        at[j] = sum / (double)n;
    }
}

void gpc_surface_extent(gpc_surface *s, const gsl_matrix *X, double margin)
{
    for (size_t a = 0; a < 2; a++) {
        size_t j = s->axis[a];
        double lo = gpc_surface_to_user(s, j, gsl_matrix_get(X, 0, j)), hi = lo;
        for (size_t i = 1; i < X->size1; i++) {
            double x = gpc_surface_to_user(s, j, gsl_matrix_get(X, i, j));
            lo = fmin(lo, x);
            hi = fmax(hi, x);
        }
        double pad = hi > lo ? margin * (hi - lo) : (margin > 0 ? margin : 1.0);
        s->lo[a] = lo - pad;
        s->hi[a] = hi + pad;
    }
}

double gpc_surface_coord(const gpc_surface *s, size_t a, size_t i)
{
    return s->lo[a] + (double)i * ((s->hi[a] - s->lo[a]) / (double)(s->grid - 1));
}

gsl_matrix *gpc_surface_inputs(const gpc_surface *s)
{
    size_t N = s->grid;
    gsl_matrix *G = gpc_matrix_alloc(N * N, s->dim);
    for (size_t j = 0; j < s->dim; j++) {
        double z = gpc_surface_to_model(s, j, s->at[j]);
        for (size_t r = 0; r < N * N; r++)
            gsl_matrix_set(G, r, j, z);
    }
    for (size_t i = 0; i < N; i++) {
        double z0 = gpc_surface_to_model(s, s->axis[0], gpc_surface_coord(s, 0, i));
        for (size_t k = 0; k < N; k++) {
            double z1 = gpc_surface_to_model(s, s->axis[1], gpc_surface_coord(s, 1, k));
            gsl_matrix_set(G, i * N + k, s->axis[0], z0);
            gsl_matrix_set(G, i * N + k, s->axis[1], z1);
        }
    }
    return G;
}

gsl_matrix *gpc_surface_points(const gpc_surface *s, const gsl_matrix *X)
{
    gsl_matrix *P = gpc_matrix_alloc(X->size1, 2);
    for (size_t i = 0; i < X->size1; i++)
        for (size_t a = 0; a < 2; a++)
            gsl_matrix_set(P, i, a,
                           gpc_surface_to_user(s, s->axis[a], gsl_matrix_get(X, i, s->axis[a])));
    return P;
}

void gpc_surface_top(const gsl_matrix *P, size_t *cls, double *p)
{
    for (size_t i = 0; i < P->size1; i++) {
        size_t best = 0;
        for (size_t c = 1; c < P->size2; c++)
            if (gsl_matrix_get(P, i, c) > gsl_matrix_get(P, i, best))
                best = c;
        cls[i] = best;
        p[i] = gsl_matrix_get(P, i, best);
    }
}
