/* test_surface — the numbers of a decision surface: gpc-scale's statistics
 * as applied (a constant column only centred), the grid's inputs in the
 * model's units against hand-computed ones, the held values and the
 * training means in the user's units, the extent, and the most probable
 * class with its probability. */
#include <math.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"
#include "report/surface.h"
#include "tap.h"

/* stats rows: means, sds; column 3 constant (sd rounding noise). */
static gsl_matrix *stats_of(const double *mean, const double *sd, size_t dim)
{
    gsl_matrix *S = gpc_matrix_alloc(2, dim);
    for (size_t j = 0; j < dim; j++) {
        gsl_matrix_set(S, 0, j, mean[j]);
        gsl_matrix_set(S, 1, j, sd[j]);
    }
    return S;
}

static void test_scaling(void)
{
    const double mean[4] = {10, -3, 5e6, 0}, sd[4] = {2, 0.5, 1e-9, 0};
    double m[4], s[4];
    gsl_matrix *S = stats_of(mean, sd, 4);
    TEST_OK(gpc_surface_scaling(S, 4, "s.txt", m, s) == GPC_OK, "scaling: 2 x 4 accepted");
    TEST_OK(m[0] == 10 && s[0] == 2 && m[1] == -3 && s[1] == 0.5,
            "scaling: means and sds as saved");
    TEST_OK(s[2] == 1.0 && s[3] == 1.0 && m[2] == 5e6,
            "scaling: a constant column (sd <= 1e-12 |mean|, or 0) is only centred");
    TEST_OK(gpc_surface_scaling(S, 3, "s.txt", m, s) == GPC_EINPUT,
            "scaling: a file of 4 columns for a model of 3 is an input error");
    gsl_matrix_set(S, 1, 1, -1.0);
    TEST_OK(gpc_surface_scaling(S, 4, "s.txt", m, s) == GPC_EINPUT,
            "scaling: a negative sd is an input error");
    gsl_matrix_free(S);
    gsl_matrix *T = gpc_matrix_alloc(3, 4);
    gsl_matrix_set_zero(T);
    TEST_OK(gpc_surface_scaling(T, 4, "s.txt", m, s) == GPC_EINPUT,
            "scaling: three rows are an input error");
    gsl_matrix_free(T);
}

/* A 3-input model on standardised inputs, the plane across inputs 3 and 1
 * (in that order), input 2 held at 7 (user units). */
static void test_inputs(void)
{
    const double mean[3] = {1, 2, 3}, sd[3] = {0.5, 4, 10}, at[3] = {99, 7, 99};
    gpc_surface s = {.dim = 3, .axis = {2, 0}, .at = at, .mean = mean, .sd = sd,
                     .lo = {-10, 0}, .hi = {10, 2}, .grid = 3};
    gsl_matrix *G = gpc_surface_inputs(&s);
    TEST_OK(G->size1 == 9 && G->size2 == 3, "inputs: grid^2 rows of dim columns");
    int exact = 1;
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 3; k++) {
            double x3 = -10 + 10.0 * (double)i, x1 = 0 + 1.0 * (double)k;
            const double *row = gsl_matrix_const_ptr(G, i * 3 + k, 0);
            /* as gpc-scale -r computes them, bit for bit */
            exact &= row[2] == (x3 - 3) / 10 && row[0] == (x1 - 1) / 0.5 &&
                     row[1] == (7.0 - 2) / 4;
        }
    TEST_OK(exact, "inputs: axes at the grid's coordinates, the other held, standardised "
            "as gpc-scale does");
    TEST_OK(gpc_surface_coord(&s, 0, 2) == 10 && gpc_surface_coord(&s, 1, 1) == 1,
            "inputs: coordinates run from lo to hi");
    gsl_matrix_free(G);
    /* without statistics the units are the model's */
    s.mean = s.sd = NULL;
    G = gpc_surface_inputs(&s);
    TEST_OK(gsl_matrix_get(G, 5, 2) == 0 && gsl_matrix_get(G, 5, 0) == 2 &&
            gsl_matrix_get(G, 5, 1) == 7, "inputs: unscaled, the user's values as they are");
    gsl_matrix_free(G);
}

/* Training inputs in model units; their means and extent in user units. */
static void test_means_extent(void)
{
    const double mean[2] = {100, -5}, sd[2] = {10, 2};
    gsl_matrix *X = gpc_matrix_alloc(4, 2);
    const double z[4][2] = {{-1, 0}, {1, 2}, {0.5, -1}, {-0.5, 3}};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 2; j++)
            gsl_matrix_set(X, i, j, z[i][j]);
    double at[2];
    gpc_surface s = {.dim = 2, .axis = {0, 1}, .mean = mean, .sd = sd, .grid = 5};
    gpc_surface_means(&s, X, at);
    /* z means 0 and 1: user 100 and -5 + 2 */
    TEST_CLOSE(at[0], 100, 1e-15, 0, "means: of user-unit values (column 1)");
    TEST_CLOSE(at[1], -3, 1e-15, 0, "means: of user-unit values (column 2)");
    gpc_surface_extent(&s, X, 0.25);
    /* column 1 user range 90..110, widened by 5; column 2 -7..1 by 2 */
    TEST_CLOSE(s.lo[0], 85, 1e-15, 0, "extent: lo along x");
    TEST_CLOSE(s.hi[0], 115, 1e-15, 0, "extent: hi along x");
    TEST_CLOSE(s.lo[1], -9, 1e-15, 0, "extent: lo along y");
    TEST_CLOSE(s.hi[1], 3, 1e-15, 0, "extent: hi along y");
    gsl_matrix *P = gpc_surface_points(&s, X);
    TEST_OK(gsl_matrix_get(P, 1, 0) == 110 && gsl_matrix_get(P, 3, 1) == 1,
            "points: the training inputs in user units");
    gsl_matrix_free(P);
    /* an axis whose values are all equal gets a margin of its own */
    for (size_t i = 0; i < 4; i++)
        gsl_matrix_set(X, i, 1, 0.0);
    gpc_surface_extent(&s, X, 0.0);
    TEST_OK(s.lo[1] == -6 && s.hi[1] == -4, "extent: a constant axis spans +-1 (%g..%g)",
            s.lo[1], s.hi[1]);
    gsl_matrix_free(X);
}

static void test_top(void)
{
    gsl_matrix *P = gpc_matrix_alloc(3, 3);
    const double p[3][3] = {{0.2, 0.5, 0.3}, {0.4, 0.2, 0.4}, {0.1, 0.1, 0.8}};
    for (size_t i = 0; i < 3; i++)
        for (size_t c = 0; c < 3; c++)
            gsl_matrix_set(P, i, c, p[i][c]);
    size_t cls[3];
    double q[3];
    gpc_surface_top(P, cls, q);
    TEST_OK(cls[0] == 1 && q[0] == 0.5, "top: the most probable class and its probability");
    TEST_OK(cls[1] == 0 && q[1] == 0.4, "top: the first of two equal classes");
    TEST_OK(cls[2] == 2 && q[2] == 0.8, "top: the last class");
    gsl_matrix_free(P);
}

int main(void)
{
    test_scaling();
    test_inputs();
    test_means_extent();
    test_top();
    return tap_done();
}
